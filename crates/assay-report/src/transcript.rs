//! The conversation of one sample, turn by turn, as plain text: what was sent, what came
//! back, and how each check came out with its place in the spec. The human report
//! prints it for the first failing sample (`--show-transcript`, or `-v` on a failure),
//! JUnit puts it in `<system-out>`, and `assay show` prints it from a saved report.
//!
//! ```
//! use std::time::Duration;
//!
//! use assay_report::transcript;
//! use assay_run::events::{InteractionReport, SampleReport};
//! use assay_run::Status;
//!
//! let sample = SampleReport {
//!     index: 0,
//!     status: Status::Failed,
//!     duration: Duration::from_millis(40),
//!     interactions: vec![InteractionReport {
//!         index: 0,
//!         sent: Some("Who did Yellow Submarine?".into()),
//!         answer: Some("ABBA".into()),
//!         structure: None,
//!         sly_data: None,
//!         duration: Duration::from_millis(40),
//!         checks: vec![],
//!         error: None,
//!         call: Default::default(),
//!     }],
//!     error: None,
//! };
//! let text = transcript::render(&sample, std::path::Path::new("music.hocon"));
//! assert!(text.contains("Who did Yellow Submarine?"));
//! assert!(text.contains("ABBA"));
//! ```

use std::fmt::Write as _;
use std::path::Path;

use assay_run::events::SampleReport;
use assay_run::{Status, UnitReport};

use crate::digest::{clean, seconds};

/// The sample a transcript shows for `unit`: its first sample (by index) that did not
/// pass, or `None` when every sample passed.
pub fn first_failing(unit: &UnitReport) -> Option<&SampleReport> {
    unit.samples
        .iter()
        .filter(|s| s.status != Status::Passed)
        .min_by_key(|s| s.index)
}

/// `sample`'s conversation, turn by turn; `file` is the unit's file, for the checks'
/// `file:line:col`. Plain text (no colour), control characters escaped, ending in a
/// newline.
pub fn render(sample: &SampleReport, file: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "sample {} ({}, {})",
        sample.index,
        sample.status.name(),
        seconds(sample.duration)
    );
    for i in &sample.interactions {
        let _ = writeln!(out, "turn {}:", i.index);
        if let Some(sent) = &i.sent {
            let _ = writeln!(out, "  sent: {}", clean(sent));
        }
        if let Some(answer) = &i.answer {
            let _ = writeln!(out, "  answer: {}", clean(answer));
        }
        for (what, value) in [("structure", &i.structure), ("sly_data", &i.sly_data)] {
            if let Some(value) = value {
                let _ = writeln!(out, "  {what}: {}", clean(&value.to_string()));
            }
        }
        for c in &i.checks {
            let place = c
                .location
                .map(|at| format!(" at {}:{at}", file.display()))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} {}{place}: {}",
                c.status().name(),
                c.name,
                clean(c.message())
            );
        }
        if let Some(e) = &i.error {
            let _ = writeln!(out, "  error ({}): {}", e.kind.name(), clean(&e.message));
        }
    }
    if let Some(e) = &sample.error {
        let _ = writeln!(out, "error ({}): {}", e.kind.name(), clean(&e.message));
    }
    out
}
