//! What every reporter says the same way: the summary phrase, a unit's outcome, its
//! failures and errors deduplicated across samples, and the units collected for the
//! reporters that write at the end.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use prill_run::events::SampleReport;
use prill_run::{Event, Status, Summary, UnitReport};
use prill_spec::plan::{Gate, Location};

/// `3 passed, 1 failed, 0 errored, 2 skipped`: the totals, always in this order and
/// wording (CI tooling reads it); `, 1 inconclusive` comes before `skipped` when a
/// `reliability` gate ran out of samples.
pub fn summary_phrase(summary: &Summary) -> String {
    let inconclusive = match summary.inconclusive {
        0 => String::new(),
        n => format!(", {n} inconclusive"),
    };
    format!(
        "{} passed, {} failed, {} errored{inconclusive}, {} skipped",
        summary.passed, summary.failed, summary.errored, summary.skipped
    )
}

/// The closing line: `3 passed, 1 failed, 0 errored, 2 skipped in 1.23s`, then
/// ` (cancelled)` when the run was cancelled, or ` (stopped after the first failure)`
/// when `--fail-fast` left units unstarted.
pub fn summary_line(summary: &Summary) -> String {
    let mut line = format!(
        "{} in {}",
        summary_phrase(summary),
        seconds(summary.duration)
    );
    line.push_str(stop_note(summary));
    line.push_str(&waived_note(summary));
    line
}

/// `; 2 quarantined (not gating)`, when quarantined units did not pass.
pub(crate) fn waived_note(summary: &Summary) -> String {
    match summary.waived.total() {
        0 => String::new(),
        n => format!("; {n} quarantined (not gating)"),
    }
}

/// `quarantined until 2026-12-31 (owner ana): the backend times out`: why a unit does
/// not gate.
pub(crate) fn quarantine_note(entry: &prill_spec::model::quarantine::Entry) -> String {
    format!(
        "quarantined until {} (owner {}): {}",
        entry.expires, entry.owner, entry.reason
    )
}

/// ` (cancelled)`, ` (stopped after the first failure)` or nothing: why a run did not
/// run every unit.
pub(crate) fn stop_note(summary: &Summary) -> &'static str {
    if summary.cancelled {
        " (cancelled)"
    } else if summary.stopped {
        " (stopped after the first failure)"
    } else {
        ""
    }
}

/// A file's path as reports show it: without a leading `./` (the files of
/// `prill run .`), so that `file:line:col` reads as editors and CI tools expect.
pub(crate) fn shown_path(file: &str) -> &str {
    let mut file = file;
    while let Some(rest) = file.strip_prefix("./") {
        file = rest;
    }
    file
}

/// How a unit's line names it: `file::case [connection]`, as nextest names a test, or
/// `file [connection]` when the case's name only restates the file's (a data-driven
/// file holds one case, named after its path: `tests/music.hocon` holds `music`). A
/// leading `./` (the files of `prill run .`) is left out.
pub(crate) fn unit_label(file: &str, name: &str, connection: &str) -> String {
    let file = shown_path(file);
    let stem = std::path::Path::new(file).with_extension("");
    let stem = stem.to_string_lossy();
    let restated = stem == name
        || stem
            .strip_suffix(name)
            .is_some_and(|rest| rest.ends_with(['/', '\\']));
    let label = if restated {
        format!("{file} [{connection}]")
    } else {
        format!("{file}::{name} [{connection}]")
    };
    clean(&label).into_owned()
}

/// `1.23s`; under 10 ms, whole milliseconds (`7ms`), where two decimals of a second
/// would show `0.00s`.
pub(crate) fn seconds(d: Duration) -> String {
    if d.is_zero() {
        "0ms".to_owned()
    } else if d < Duration::from_millis(1) {
        "<1ms".to_owned()
    } else if d < Duration::from_millis(10) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.2}s", d.as_secs_f64())
    }
}

/// `1 passed, 2 failed (need 2/3)`: what the samples did, and the gate held to.
/// Counts of zero are left out except `passed`; samples an early stop (or a
/// cancelled run) left out of a `k/n` gate show as `not run`, so `3 passed, 1 failed,
/// 6 not run (need 14/20)` says the unit was decided after four of its twenty samples.
/// A `reliability` gate decides its own count: `18 passed (reliability good 0.95 bad
/// 0.8 (5%/5%, at most 100))`.
pub(crate) fn outcome(unit: &UnitReport) -> String {
    if unit.verdict == Status::Skipped && unit.tally.total() == 0 {
        return "not run".to_owned();
    }
    let t = &unit.tally;
    let gate = match unit.gate {
        Gate::Ratio(r) => GateText::Ratio {
            of: r.of,
            text: r.to_string(),
        },
        Gate::Reliability(_) => GateText::Reliability(unit.gate.to_string()),
    };
    tally_text([t.passed, t.failed, t.errored], &gate)
}

/// A gate as reports write it beside a tally.
pub(crate) enum GateText {
    /// `k/n`, with its `n`.
    Ratio {
        /// `n`.
        of: u32,
        /// `k/n`.
        text: String,
    },
    /// A `reliability` gate, as [`Gate`]'s `Display` writes it.
    Reliability(String),
}

/// [`outcome`] from the counts (passed, failed, errored) and the gate.
pub(crate) fn tally_text([passed, failed, errored]: [u32; 3], gate: &GateText) -> String {
    let ran = passed + failed + errored;
    let not_run = match gate {
        GateText::Ratio { of, .. } => of.saturating_sub(ran),
        GateText::Reliability(_) => 0,
    };
    let mut parts = vec![format!("{passed} passed")];
    for (count, what) in [
        (failed, "failed"),
        (errored, "errored"),
        (not_run, "not run"),
    ] {
        if count > 0 {
            parts.push(format!("{count} {what}"));
        }
    }
    match gate {
        GateText::Ratio { text, .. } => format!("{} (need {text})", parts.join(", ")),
        GateText::Reliability(text) => format!("{} ({text})", parts.join(", ")),
    }
}

/// Whether a problem is a failed check or an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A check failed.
    Failure,
    /// An interaction, a check or the sample itself errored.
    Error,
}

/// One distinct failure or error message of a unit, and where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// A failure or an error.
    pub(crate) kind: Kind,
    /// The message.
    pub(crate) message: String,
    /// How many samples had it.
    pub(crate) samples: usize,
    /// Which samples had it (their indices, from 0, ascending).
    pub(crate) sample_indices: Vec<u32>,
    /// The kind of the first error that gave it (`unreachable`, `timeout`, ...), or
    /// `check` for a check that errored; `None` for failures.
    pub(crate) error_kind: Option<String>,
    /// The interaction (turn) it happened in, from 0; `None` for a sample's own error.
    pub(crate) interaction: Option<usize>,
    /// The check's path in the spec (`interactions[1].response.text.keywords`), for a
    /// check's failure or error.
    pub(crate) check_path: Option<String>,
    /// The check's place in the unit's file, when known.
    pub(crate) location: Option<Location>,
}

impl Problem {
    /// The message as reports show it: errors start with `error: `, and a message
    /// that several samples had ends with `(N samples)`.
    pub(crate) fn shown(&self) -> String {
        let mut text = match self.kind {
            Kind::Failure => self.message.clone(),
            Kind::Error => format!("error: {}", self.message),
        };
        if self.samples > 1 {
            text.push_str(&format!(" ({} samples)", self.samples));
        }
        text
    }

    /// `file:line:col` of the check in `file`, when the check's place is known.
    pub(crate) fn place(&self, file: &std::path::Path) -> Option<String> {
        let file = file.to_string_lossy();
        self.location
            .map(|at| format!("{}:{}:{}", shown_path(&file), at.line, at.column))
    }

    /// Where it happened, for a line under the message: `at file:line:col,
    /// interaction 1, sample 0` (`samples 0, 2, 5` when several had it). Indices count
    /// from 0, as the spec's paths (`interactions[1]`) do. A check whose place in the
    /// file is not known is named by its path instead (`at
    /// interactions[1].response.text.keywords`); a problem with no sample indices (one
    /// shown under its sample) leaves the samples out.
    pub(crate) fn whereabouts(&self, file: &std::path::Path) -> String {
        let mut parts = Vec::new();
        if let Some(place) = self.place(file) {
            parts.push(format!("at {place}"));
        } else if let Some(path) = &self.check_path {
            parts.push(format!("at {path}"));
        }
        if let Some(i) = self.interaction {
            parts.push(format!("interaction {i}"));
        }
        let indices: Vec<String> = self.sample_indices.iter().map(u32::to_string).collect();
        match indices.len() {
            0 => {}
            1 => parts.push(format!("sample {}", indices[0])),
            _ => parts.push(format!("samples {}", indices.join(", "))),
        }
        parts.join(", ")
    }
}

/// One problem as found in one sample, before samples are merged.
struct Found {
    kind: Kind,
    message: String,
    error_kind: Option<String>,
    interaction: Option<usize>,
    check_path: Option<String>,
    location: Option<Location>,
}

/// Every failed or errored check, interaction error and sample error of `sample`.
fn found_in(sample: &SampleReport) -> Vec<Found> {
    let mut failures = Vec::new();
    let mut errors = Vec::new();
    for i in &sample.interactions {
        if let Some(e) = &i.error {
            errors.push(Found {
                kind: Kind::Error,
                message: format!("interaction {}: {}", i.index, e.message),
                error_kind: Some(e.kind.name().to_owned()),
                interaction: Some(i.index),
                check_path: None,
                location: None,
            });
        }
        for c in &i.checks {
            let (kind, list, error_kind) = match c.status() {
                prill_check::Status::Failed => (Kind::Failure, &mut failures, None),
                prill_check::Status::Errored => {
                    (Kind::Error, &mut errors, Some("check".to_owned()))
                }
                _ => continue,
            };
            list.push(Found {
                kind,
                message: c.message().to_owned(),
                error_kind,
                interaction: Some(i.index),
                check_path: Some(c.path.to_string()),
                location: c.location,
            });
        }
    }
    if let Some(e) = &sample.error {
        errors.push(Found {
            kind: Kind::Error,
            message: e.message.clone(),
            error_kind: Some(e.kind.name().to_owned()),
            interaction: None,
            check_path: None,
            location: None,
        });
    }
    failures.extend(errors);
    failures
}

/// The failing checks' messages of one sample, then its error messages, each once,
/// with no sample indices (they are shown under the sample).
pub(crate) fn sample_problems(sample: &SampleReport) -> Vec<Problem> {
    let mut out: Vec<Problem> = Vec::new();
    for found in found_in(sample) {
        if out
            .iter()
            .any(|p| p.kind == found.kind && p.message == found.message)
        {
            continue;
        }
        out.push(Problem {
            kind: found.kind,
            message: found.message,
            samples: 1,
            sample_indices: Vec::new(),
            error_kind: found.error_kind,
            interaction: found.interaction,
            check_path: found.check_path,
            location: found.location,
        });
    }
    out
}

/// The unit's samples in index order (the report keeps them in completion order).
pub(crate) fn by_index(unit: &UnitReport) -> Vec<&SampleReport> {
    let mut samples: Vec<&SampleReport> = unit.samples.iter().collect();
    samples.sort_by_key(|s| s.index);
    samples
}

/// The unit's failing checks' messages, then its error messages, each once with the
/// samples that had it, in the order first seen (samples taken in index order).
pub(crate) fn problems(unit: &UnitReport) -> Vec<Problem> {
    let mut failures: Vec<Problem> = Vec::new();
    let mut errors: Vec<Problem> = Vec::new();
    for sample in by_index(unit) {
        let mut seen: Vec<(Kind, String)> = Vec::new();
        for found in found_in(sample) {
            if seen
                .iter()
                .any(|(k, m)| *k == found.kind && *m == found.message)
            {
                continue;
            }
            seen.push((found.kind, found.message.clone()));
            let list = match found.kind {
                Kind::Failure => &mut failures,
                Kind::Error => &mut errors,
            };
            match list.iter_mut().find(|p| p.message == found.message) {
                Some(p) => {
                    p.samples += 1;
                    p.sample_indices.push(sample.index);
                }
                None => list.push(Problem {
                    kind: found.kind,
                    message: found.message,
                    samples: 1,
                    sample_indices: vec![sample.index],
                    error_kind: found.error_kind,
                    interaction: found.interaction,
                    check_path: found.check_path,
                    location: found.location,
                }),
            }
        }
    }
    failures.extend(errors);
    for p in &mut failures {
        p.sample_indices.sort_unstable();
    }
    failures
}

/// What the unit's model calls said beyond their answers, each once in the order first
/// seen: that the model refused, that an answer was cut short, that it came from the
/// model response cache, and what the provider
/// changed about the request (its notes).
pub(crate) fn remarks(unit: &UnitReport) -> Vec<String> {
    let mut remarks: Vec<String> = Vec::new();
    let calls = unit
        .samples
        .iter()
        .flat_map(|s| &s.interactions)
        .map(|i| &i.call);
    for call in calls {
        let reason = call.stop_reason.as_deref().unwrap_or("none given");
        let mut found = Vec::new();
        if call.refusal {
            found.push(format!("the model refused (stop reason `{reason}`)"));
        }
        if call.truncated() {
            found.push(format!(
                "an answer was cut short by a token limit (stop reason `{reason}`)"
            ));
        }
        if call.cached {
            found.push(
                "answered from the model response cache (`[cache] models`): no tokens spent"
                    .to_owned(),
            );
        }
        found.extend(call.notes.iter().map(|n| format!("note: {n}")));
        for remark in found {
            if !remarks.contains(&remark) {
                remarks.push(remark);
            }
        }
    }
    remarks.extend(trajectory_remark(unit));
    remarks
}

/// For a unit that did not pass, the tool calls of its first sample that did not: each
/// turn's calls (a failed call marked), and the number of model calls, which is what
/// a reader needs to see why an agent went wrong.
fn trajectory_remark(unit: &UnitReport) -> Option<String> {
    let sample = crate::transcript::first_failing(unit)?;
    // Every interaction's: a conversation with a simulated user has one loop per turn.
    let calls: Vec<&prill_run::events::CallInfo> = sample
        .interactions
        .iter()
        .map(|i| &i.call)
        .filter(|c| !c.trajectory.is_empty() || !c.turns.is_empty())
        .collect();
    if calls.is_empty() {
        return None;
    }
    let model_calls: usize = calls.iter().map(|c| c.turns.len()).sum();
    let mut turns: Vec<(u32, Vec<String>)> = Vec::new();
    for step in calls.iter().flat_map(|c| &c.trajectory) {
        let name = if step.is_error {
            format!("{} (error)", step.tool)
        } else {
            step.tool.clone()
        };
        match turns.last_mut() {
            Some((turn, names)) if *turn == step.turn => names.push(name),
            _ => turns.push((step.turn, vec![name])),
        }
    }
    let shown: Vec<String> = turns
        .iter()
        .map(|(turn, names)| format!("turn {turn}: {}", names.join(", ")))
        .collect();
    let calls = if shown.is_empty() {
        "no tool calls".to_owned()
    } else {
        shown.join("; ")
    };
    let model_calls = match model_calls {
        0 => String::new(),
        1 => " (1 model call)".to_owned(),
        n => format!(" ({n} model calls)"),
    };
    Some(format!(
        "trajectory of sample {}: {calls}{model_calls}",
        sample.index
    ))
}

/// One model call of a tool loop, as the verbose report lists it: `turn 2: 1 tool
/// call, 20 in / 5 out tokens, 0.03s, stop \`tool_calls\``.
pub(crate) fn turn_line(turn: &prill_run::TurnInfo) -> String {
    let mut parts = vec![match turn.tool_calls {
        0 => "no tool call".to_owned(),
        1 => "1 tool call".to_owned(),
        n => format!("{n} tool calls"),
    }];
    if let Some(usage) = &turn.usage {
        let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
        parts.push(format!(
            "{} in / {} out tokens",
            count(usage.input),
            count(usage.output)
        ));
    }
    parts.push(seconds(turn.latency));
    if let Some(reason) = &turn.stop_reason {
        parts.push(format!("stop `{reason}`"));
    }
    format!("turn {}: {}", turn.turn, parts.join(", "))
}

/// Control characters (an agent's answer may carry terminal escapes) shown escaped;
/// newlines and tabs kept. A line that a CI runner would read as a command of its own
/// (GitHub Actions reads `::error ...::` and `##[...]` on stdout and stderr, after
/// leading spaces) gets a `\` before it, so that an answer cannot add annotations,
/// mask values or stop the log's commands.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) && !text.split('\n').any(is_command) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if is_command(line) {
            let indent = line.len() - line.trim_start().len();
            out.push_str(&line[..indent]);
            out.push('\\');
            push_escaped(&mut out, &line[indent..]);
        } else {
            push_escaped(&mut out, line);
        }
    }
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        if is_unsafe(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
}

/// Whether a CI runner would take `line` for a workflow command.
fn is_command(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("::") || line.starts_with("##[")
}

fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// At most `max` characters, ending with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

/// The events that the end-of-run reporters need: every unit's report, in the order
/// they finished, and the summary.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    /// Every finished unit, in order.
    pub(crate) units: Vec<UnitReport>,
    finished: Option<Summary>,
    counted: Summary,
    started: Option<Instant>,
}

impl Collected {
    /// Takes one event.
    pub(crate) fn event(&mut self, event: &Event) {
        match event {
            Event::RunStarted { .. } => self.started = Some(Instant::now()),
            Event::UnitFinished(unit) => {
                self.counted.add(unit.verdict);
                self.units.push(unit.clone());
            }
            Event::RunFinished(summary) => self.finished = Some(*summary),
            Event::UnitStarted { .. } | Event::SampleFinished { .. } | Event::WorkersReady(_) => {}
        }
    }

    /// The engine's summary; without one (the stream ended early), the units counted so
    /// far, marked cancelled since the run did not complete.
    pub(crate) fn summary(&self) -> Summary {
        self.finished.unwrap_or_else(|| Summary {
            cancelled: true,
            duration: self.started.map(|s| s.elapsed()).unwrap_or_default(),
            ..self.counted
        })
    }
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn lines_a_ci_runner_would_obey_are_escaped() {
        assert_eq!(clean("plain\nanswer"), "plain\nanswer");
        assert_eq!(
            clean("hi\n  ::error file=x::pwned\n##[warning]x"),
            "hi\n  \\::error file=x::pwned\n\\##[warning]x"
        );
        assert_eq!(clean("::add-mask::x"), "\\::add-mask::x");
        assert_eq!(clean("a :: b"), "a :: b");
        assert_eq!(clean("\u{1b}[31m::x"), "\\u{1b}[31m::x");
    }

    use super::*;

    #[test]
    fn the_summary_line_keeps_its_wording() {
        let mut summary = Summary {
            passed: 3,
            failed: 1,
            errored: 0,
            inconclusive: 0,
            waived: prill_run::Waived::default(),
            skipped: 2,
            cancelled: false,
            stopped: false,
            duration: Duration::from_millis(1234),
        };
        assert_eq!(
            summary_line(&summary),
            "3 passed, 1 failed, 0 errored, 2 skipped in 1.23s"
        );
        summary.cancelled = true;
        assert_eq!(
            summary_line(&summary),
            "3 passed, 1 failed, 0 errored, 2 skipped in 1.23s (cancelled)"
        );
        summary.cancelled = false;
        summary.stopped = true;
        assert_eq!(
            summary_line(&summary),
            "3 passed, 1 failed, 0 errored, 2 skipped in 1.23s (stopped after the first failure)"
        );
    }

    #[test]
    fn short_durations_show_in_milliseconds() {
        assert_eq!(seconds(Duration::from_micros(7_400)), "7ms");
        assert_eq!(seconds(Duration::ZERO), "0ms");
        assert_eq!(seconds(Duration::from_micros(300)), "<1ms");
        assert_eq!(seconds(Duration::from_millis(10)), "0.01s");
        assert_eq!(seconds(Duration::from_millis(420)), "0.42s");
        let summary = Summary {
            duration: Duration::from_millis(3),
            ..Summary::default()
        };
        assert_eq!(
            summary_line(&summary),
            "0 passed, 0 failed, 0 errored, 0 skipped in 3ms"
        );
    }

    #[test]
    fn a_unit_is_named_by_its_file_and_its_case_unless_the_case_restates_the_file() {
        assert_eq!(
            unit_label("tests/suite.yaml", "capital", "openai"),
            "tests/suite.yaml::capital [openai]"
        );
        assert_eq!(
            unit_label("fixtures/quickstart/math.hocon", "quickstart/math", "http"),
            "fixtures/quickstart/math.hocon [http]"
        );
        assert_eq!(
            unit_label("home_town.hocon", "home_town", "direct"),
            "home_town.hocon [direct]"
        );
        assert_eq!(
            unit_label("tests/xmath.hocon", "math", "http"),
            "tests/xmath.hocon::math [http]"
        );
        assert_eq!(
            unit_label("./tests/music.hocon", "tests/music", "direct"),
            "tests/music.hocon [direct]"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(clean("a\u{1b}[31mb\nc\td"), "a\\u{1b}[31mb\nc\td");
        assert!(matches!(clean("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("héllo", 5), "héllo");
    }
}
