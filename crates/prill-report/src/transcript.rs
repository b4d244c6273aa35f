//! The conversation of one sample, interaction by interaction, as plain text: what was
//! sent (the text and the sly_data), what came back (the answer, its structure and
//! sly_data, the tools it called), and how each check came out with its place in the
//! spec. The human report prints it for the first failing sample (`--show-transcript`,
//! or `-v` on a failure), JUnit puts it in `<system-out>`, and `prill show` prints it
//! from a saved report.
//!
//! There is one renderer, over the saved report's types
//! ([`format`](mod@crate::format)): a live sample is converted to them first
//! ([`render`]), so a transcript printed during a run and one printed later from its
//! JSON report read the same.
//!
//! ```text
//! sample 0 (failed, 0.10s)
//! interaction 0 (0.09s):
//!   sent: multiply
//!   sent sly_data: {"x":847,"y":23}
//!   answer: Check sly_data['equals'] for the result
//!   sly_data: {"equals":19480.0}
//!   FAILED value at math.yaml:9:17: sly_data.equals: expected value 19481, found 19480.0
//! interaction 1 (0.08s):
//!   sent: now divide
//!   error (timeout): no answer within 30s
//! ```
//!
//! ```
//! use std::time::Duration;
//!
//! use prill_report::transcript;
//! use prill_run::events::{InteractionReport, SampleReport};
//! use prill_run::Status;
//!
//! let sample = SampleReport {
//!     index: 0,
//!     status: Status::Failed,
//!     duration: Duration::from_millis(40),
//!     interactions: vec![InteractionReport {
//!         index: 0,
//!         sent: Some("Who did Yellow Submarine?".into()),
//!         sent_sly_data: Some(serde_json::json!({"user": "ringo"})),
//!         answer: Some("ABBA".into()),
//!         answer_bytes: None,
//!         structure: None,
//!         sly_data: None,
//!         duration: Duration::from_millis(40),
//!         checks: vec![],
//!         error: None,
//!         call: Default::default(),
//!         user: None,
//!     }],
//!     error: None,
//!     taped: Default::default(),
//! };
//! let text = transcript::render(&sample, std::path::Path::new("music.hocon"));
//! assert!(text.contains("  sent: Who did Yellow Submarine?\n"));
//! assert!(text.contains("  sent sly_data: {\"user\":\"ringo\"}\n"));
//! assert!(text.contains("  answer: ABBA\n"));
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use prill_run::events::SampleReport;
use prill_run::{Status, UnitReport};
use serde_json::Value;

use crate::digest::{clean, seconds, shown_path};
use crate::format::{self, CheckOutcome};

/// The sample a transcript shows for `unit`: its first sample (by index) that did not
/// pass, or `None` when every sample passed.
pub fn first_failing(unit: &UnitReport) -> Option<&SampleReport> {
    unit.samples
        .iter()
        .filter(|s| s.status != Status::Passed)
        .min_by_key(|s| s.index)
}

/// [`first_failing`] of a unit read from a saved report.
pub fn first_failing_saved(unit: &format::Unit) -> Option<&format::Sample> {
    unit.samples
        .iter()
        .filter(|s| s.status != format::Status::Passed)
        .min_by_key(|s| s.index)
}

/// `sample`'s conversation, interaction by interaction; `file` is the unit's file, for
/// the checks' `file:line:col`. Plain text (no colour), control characters escaped,
/// ending in a newline.
pub fn render(sample: &SampleReport, file: &Path) -> String {
    render_saved(&format::Sample::from(sample), file)
}

/// [`render`] of a sample read from a saved report.
pub fn render_saved(sample: &format::Sample, file: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "sample {} ({}, {})",
        sample.index,
        status_name(sample.status),
        secs(sample.duration)
    );
    for i in &sample.interactions {
        interaction(&mut out, i, file);
    }
    if let Some(e) = &sample.error {
        let _ = writeln!(out, "error ({}): {}", e.kind, clean(&e.message));
    }
    out
}

fn interaction(out: &mut String, i: &format::Interaction, file: &Path) {
    let _ = writeln!(out, "interaction {} ({}):", i.index, secs(i.duration));
    let at = "  ";
    if let Some(sent) = &i.sent {
        let label = match &i.user {
            Some(u) if u.simulated => "sent (simulated user)",
            Some(_) => "sent (scripted user)",
            None => "sent",
        };
        line(out, at, label, sent);
    }
    if let Some(value) = &i.sent_sly_data {
        line(out, at, "sent sly_data", &json(value));
    }
    if let Some(answer) = &i.answer {
        let label = match (i.refusal, i.cached) {
            (true, false) => "refusal",
            (true, true) => "refusal (cached)",
            (false, false) => "answer",
            (false, true) => "answer (cached)",
        };
        line(out, at, label, answer);
    }
    for (label, value) in [("structure", &i.structure), ("sly_data", &i.sly_data)] {
        if let Some(value) = value {
            line(out, at, label, &json(value));
        }
    }
    for call in &i.trajectory {
        let mut text = format!(
            "turn {}: {} {}",
            call.turn,
            call.tool,
            json(&call.arguments)
        );
        if let Some(result) = &call.result {
            text.push_str(&format!(" -> {}", json(result)));
        }
        if call.is_error {
            text.push_str(" (error)");
        }
        line(out, at, "tool call", &text);
    }
    if let Some(stop) = i.user.as_ref().and_then(|u| u.stop.as_ref()) {
        let text = match &stop.said {
            Some(said) => format!("{} (its last words, not sent: {said})", stop.reason.name()),
            None => stop.reason.name().to_owned(),
        };
        line(out, at, "the user ended the conversation", &text);
    }
    if i.truncated {
        let reason = i.stop_reason.as_deref().unwrap_or("none given");
        line(
            out,
            at,
            "cut short",
            &format!("by a token limit (stop reason `{reason}`)"),
        );
    }
    for c in &i.checks {
        let place = c
            .location
            .map(|at| {
                format!(
                    " at {}:{}:{}",
                    shown_path(&file.to_string_lossy()),
                    at.line,
                    at.column
                )
            })
            .unwrap_or_default();
        let message = match &c.outcome {
            CheckOutcome::Evaluated { message, .. } | CheckOutcome::Errored { message } => {
                message.as_str()
            }
        };
        let label = match c.status {
            format::Status::Failed => "FAILED",
            format::Status::Errored => "ERRORED",
            other => status_name(other),
        };
        let text = clean(&format!("{label} {}{place}: {message}", c.name)).into_owned();
        let mut lines = text.lines();
        let _ = writeln!(out, "{at}{}", lines.next().unwrap_or_default());
        for more in lines {
            let _ = writeln!(out, "{at}  {more}");
        }
    }
    if let Some(e) = &i.error {
        let _ = writeln!(out, "{at}error ({}): {}", e.kind, clean(&e.message));
    }
}

/// `  label: value`, the value's further lines indented under it.
fn line(out: &mut String, indent: &str, label: &str, value: &str) {
    let value = clean(value);
    let mut lines = value.lines();
    let first = lines.next().unwrap_or("");
    let head = format!("{indent}{label}: {first}");
    let _ = writeln!(out, "{}", head.trim_end());
    for more in lines {
        let _ = writeln!(out, "{indent}  {more}");
    }
}

fn json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn secs(seconds_f: f64) -> String {
    seconds(Duration::try_from_secs_f64(seconds_f).unwrap_or_default())
}

/// `passed`, `failed`, ... as the reports write them.
pub(crate) fn status_name(status: format::Status) -> &'static str {
    match status {
        format::Status::Passed => "passed",
        format::Status::Failed => "failed",
        format::Status::Errored => "errored",
        format::Status::Inconclusive => "inconclusive",
        format::Status::Unscored => "unscored",
        format::Status::Skipped => "skipped",
    }
}
