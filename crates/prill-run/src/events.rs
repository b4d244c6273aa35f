//! What the engine reports as it runs. Reporters consume these events, in the order the
//! engine sends them; several reporters can consume one stream.
//!
//! These types are the engine's, free to change with it; they are deliberately not
//! `Serialize`. What reports write is `prill_report::format`, a stable, versioned format
//! that the reporters build from these events.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use prill_check::CheckResult;
use prill_spec::model::gate::Gate;
use prill_spec::model::quarantine::Entry;
use prill_spec::plan::Dialect;
use prill_spec::redact::Redactor;
pub use prill_target::ErrorKind;
use serde_json::Value;

use crate::ratio::{Status, Tally};

/// A unit of work: one case over one connection (or one model call for Sentinel cases).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnitId {
    /// The case's id.
    pub case_id: String,
    /// The case's name.
    pub name: String,
    /// The file the case came from.
    pub file: PathBuf,
    /// The dialect.
    pub dialect: Dialect,
    /// The connection (`direct`, `http`, ...), or the provider for a model case.
    pub connection: String,
    /// The agent or model under test.
    pub target: String,
    /// The case's tags: its own, its suite's and a Sentinel spec's `category`, as
    /// `--tag` selects by them.
    pub tags: Vec<String>,
}

impl UnitId {
    /// `name [connection]`, as reports show a unit.
    pub fn label(&self) -> String {
        format!("{} [{}]", self.name, self.connection)
    }

    pub(crate) fn redact(&mut self, secrets: &Redactor) {
        secrets.in_place(&mut self.name);
        secrets.in_place(&mut self.target);
    }
}

/// Why an interaction could not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The kind, serialized as a stable id: `unreachable`, `timeout`, `protocol`,
    /// `status`, ...
    pub kind: ErrorKind,
    /// What happened.
    pub message: String,
}

/// What the model or agent said about one call itself, beyond its answer: tokens,
/// time to the first token, why it stopped, and what the provider changed about the
/// request. Empty where the agent reports none of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallInfo {
    /// Token usage, as reported (hidden reasoning tokens apart, where reported).
    pub usage: Option<prill_check::TokenUsage>,
    /// From the request to the first byte (the first token of a stream).
    pub time_to_first_byte: Option<Duration>,
    /// Why the model stopped, in the provider's words.
    pub stop_reason: Option<String>,
    /// Whether the answer is the model's refusal.
    pub refusal: bool,
    /// What the provider changed about the request so the model would take it.
    pub notes: Vec<String>,
    /// Each model call of a tool loop (a framework's run), in order; empty for a single
    /// call. The fields above are then the loop's totals (usage summed, the last call's
    /// stop reason, the first call's time to first token).
    pub turns: Vec<TurnInfo>,
    /// Every tool call, in order, with its result and the turn that asked for it: from
    /// a tool loop, a LangGraph run, or a neuro-san agent's intermediate messages.
    pub trajectory: Vec<TrajectoryStep>,
    /// Every message of the loop or run, raw, when the test asked for them
    /// (`framework_config.intermediate_steps: true`); empty otherwise.
    pub steps: Vec<Value>,
    /// What the call cost, in US dollars, from `usage` and the model's price; the
    /// engine knows no prices, so it leaves this `None` and whoever does fills it in
    /// (`prill_app`' session, from `prill.toml`'s `[prices]`). An answer from the
    /// cache costs nothing.
    pub cost: Option<f64>,
    /// Whether the answer came from the model response cache (`[cache] models`), not
    /// from the provider.
    pub cached: bool,
}

/// One model call of a tool loop.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnInfo {
    /// Which call (from 1).
    pub turn: u32,
    /// Its token usage, as reported.
    pub usage: Option<prill_check::TokenUsage>,
    /// From its request to its end.
    pub latency: Duration,
    /// From its request to its first byte.
    pub time_to_first_byte: Option<Duration>,
    /// Why the model stopped, in the provider's words.
    pub stop_reason: Option<String>,
    /// How many tools it called.
    pub tool_calls: usize,
}

/// One tool call of a trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryStep {
    /// Which model call (from 1) asked for it; for a neuro-san agent, the position of
    /// the intermediate message that showed it.
    pub turn: u32,
    /// The tool (or, for neuro-san, the agent or tool invoked).
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// What it returned, where known.
    pub result: Option<Value>,
    /// Whether it failed.
    pub is_error: bool,
}

impl CallInfo {
    /// What `response` says about its call, with the provider's `notes`.
    pub fn of(response: &prill_check::Response, notes: Vec<String>) -> CallInfo {
        CallInfo {
            usage: response.usage,
            time_to_first_byte: response.time_to_first_byte,
            stop_reason: response.stop_reason.clone(),
            refusal: response.refusal,
            notes,
            ..CallInfo::default()
        }
    }

    /// Whether the answer was cut short by a token limit.
    pub fn truncated(&self) -> bool {
        matches!(
            self.stop_reason.as_deref(),
            Some("length" | "max_tokens" | "model_context_window_exceeded")
        )
    }
}

/// One interaction of a sample: what came back and how the checks came out.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionReport {
    /// Its position in the case.
    pub index: usize,
    /// The text sent.
    pub sent: Option<String>,
    /// The sly_data sent with it, as it went on the wire (its own, or the one carried
    /// from the interaction before); `None` when none was sent (an empty one is not).
    pub sent_sly_data: Option<Value>,
    /// The answer text; in a [`UnitReport`] whose answers were quoted
    /// ([`UnitReport::quote_answers`]), only the head and tail of a long one.
    pub answer: Option<String>,
    /// The whole answer's length in bytes, when `answer` holds only its head and tail.
    pub answer_bytes: Option<u64>,
    /// The structure returned.
    pub structure: Option<Value>,
    /// The sly_data returned.
    pub sly_data: Option<Value>,
    /// How long it took.
    pub duration: Duration,
    /// Every check's result, in order.
    pub checks: Vec<CheckResult>,
    /// Why the interaction could not complete, when it could not.
    pub error: Option<ErrorInfo>,
    /// Usage, time to first token, stop reason and notes of the call.
    pub call: CallInfo,
    /// In a conversation with a simulated user: who wrote the message sent, and, on
    /// the last interaction, how the user ended the conversation.
    pub user: Option<UserTurn>,
}

/// One turn of a conversation with a simulated user, as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct UserTurn {
    /// Whether the simulator wrote the message (else the test's script did).
    pub simulated: bool,
    /// How the user ended the conversation, on the interaction after which it did.
    pub stop: Option<UserStop>,
}

/// How a simulated user ended its conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct UserStop {
    /// The reason it gave (`end_conversation`'s).
    pub reason: prill_spec::model::user::StopReason,
    /// What it said as it ended, which was not sent.
    pub said: Option<String>,
}

/// One sample of a unit.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleReport {
    /// Which sample (from 0).
    pub index: u32,
    /// How it came out.
    pub status: Status,
    /// How long it took.
    pub duration: Duration,
    /// Its interactions, up to the one that errored if one did.
    pub interactions: Vec<InteractionReport>,
    /// An error outside any interaction (the sample timed out, or could not start).
    pub error: Option<ErrorInfo>,
    /// How many of its exchanges the run's cassettes answered, and how many they
    /// recorded (both 0 without cassettes).
    pub taped: Taped,
}

/// How a sample's exchanges met the run's cassettes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Taped {
    /// Exchanges answered from a recording: nothing was sent.
    pub replayed: u32,
    /// Exchanges sent live and recorded.
    pub recorded: u32,
}

impl Taped {
    /// Whether the verdict was reached on recordings alone (`replayed`), partly
    /// (`mixed`), or live.
    pub fn source(samples: &[SampleReport]) -> Source {
        let replayed = samples.iter().any(|s| s.taped.replayed > 0);
        let live = samples
            .iter()
            .any(|s| s.taped.replayed == 0 || s.taped.recorded > 0);
        match (replayed, live) {
            (false, _) => Source::Live,
            (true, false) => Source::Replayed,
            (true, true) => Source::Mixed,
        }
    }
}

/// Where a unit's verdict came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// Every exchange went live (with or without recording).
    #[default]
    Live,
    /// Every sample was answered from recordings: nothing was sent.
    Replayed,
    /// Some exchanges were replayed and some went live (`--replay-or-record`).
    Mixed,
}

impl Source {
    /// Whether it is [`Source::Live`].
    pub fn is_live(&self) -> bool {
        *self == Source::Live
    }
}

impl ErrorInfo {
    fn redact(&mut self, secrets: &Redactor) {
        secrets.in_place(&mut self.message);
    }
}

impl InteractionReport {
    /// The report of interaction `index`, which sent `sent`, before anything came back:
    /// no answer, no checks, no error, no time yet. The engine fills in the rest:
    /// `InteractionReport { answer, checks, ..InteractionReport::sent(index, text) }`.
    pub fn sent(index: usize, sent: Option<String>) -> InteractionReport {
        InteractionReport {
            index,
            sent,
            sent_sly_data: None,
            answer: None,
            answer_bytes: None,
            structure: None,
            sly_data: None,
            duration: Duration::ZERO,
            checks: Vec::new(),
            error: None,
            call: CallInfo::default(),
            user: None,
        }
    }

    /// Hides every value `secrets` holds in what was sent, what came back, the tools'
    /// arguments and results, the kept steps, the checks' results and the error.
    pub fn redact(&mut self, secrets: &Redactor) {
        for text in [&mut self.sent, &mut self.answer].into_iter().flatten() {
            secrets.in_place(text);
        }
        if let Some(said) = self
            .user
            .as_mut()
            .and_then(|u| u.stop.as_mut())
            .and_then(|s| s.said.as_mut())
        {
            secrets.in_place(said);
        }
        for value in [
            &mut self.sent_sly_data,
            &mut self.structure,
            &mut self.sly_data,
        ]
        .into_iter()
        .flatten()
        {
            secrets.json(value);
        }
        self.checks.iter_mut().for_each(|c| c.redact(secrets));
        if let Some(error) = &mut self.error {
            error.redact(secrets);
        }
        for note in &mut self.call.notes {
            secrets.in_place(note);
        }
        // What the tools were given and gave back can hold what the agent was sent.
        for step in &mut self.call.trajectory {
            secrets.json(&mut step.arguments);
            if let Some(result) = &mut step.result {
                secrets.json(result);
            }
        }
        self.call.steps.iter_mut().for_each(|s| secrets.json(s));
    }
}

impl SampleReport {
    /// Hides every value `secrets` holds in everything the sample reports.
    pub fn redact(&mut self, secrets: &Redactor) {
        if secrets.is_empty() {
            return;
        }
        self.interactions.iter_mut().for_each(|i| i.redact(secrets));
        if let Some(error) = &mut self.error {
            error.redact(secrets);
        }
    }

    /// The checks that failed, across interactions.
    pub fn failures(&self) -> impl Iterator<Item = &CheckResult> {
        self.interactions
            .iter()
            .flat_map(|i| &i.checks)
            .filter(|c| c.status() == prill_check::Status::Failed)
    }

    /// Every error: interactions', checks' and the sample's own, as messages.
    pub fn errors(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for i in &self.interactions {
            if let Some(e) = &i.error {
                out.push(format!("interaction {}: {}", i.index, e.message));
            }
            for c in &i.checks {
                if c.status() == prill_check::Status::Errored {
                    out.push(c.message().to_owned());
                }
            }
        }
        if let Some(e) = &self.error {
            out.push(e.message.clone());
        }
        out
    }
}

/// A unit's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitReport {
    /// The unit.
    pub unit: UnitId,
    /// Its verdict.
    pub verdict: Status,
    /// The gate it was held to: `k/n`, or a `reliability` test.
    pub gate: Gate,
    /// The `prill-quarantine.toml` entry that lists its case: reported, not gating.
    pub quarantine: Option<Arc<Entry>>,
    /// Counts of the samples that ran.
    pub tally: Tally,
    /// The samples that ran, in the order they finished.
    pub samples: Vec<SampleReport>,
    /// From its first sample's start to its verdict.
    pub duration: Duration,
}

/// How much of a long answer a unit's report keeps ([`UnitReport::quote_answers`]): its
/// first and last 32 KiB.
pub const ANSWER_QUOTED: usize = 64 * 1024;

impl UnitReport {
    /// Keeps only the head and the tail of every answer longer than [`ANSWER_QUOTED`]
    /// bytes, with its whole length in [`InteractionReport::answer_bytes`]. Each sample's
    /// [`Event::SampleFinished`] carries its whole answers, once; a unit's report
    /// repeats its samples, and reports that hold every unit to the end of the run (the
    /// JSON and HTML reports) then hold a bounded quote of each answer, not a copy.
    ///
    /// Quote after [`UnitReport::redact`]: a cut through a secret would leave a part of
    /// it that no longer matches.
    pub fn quote_answers(&mut self) {
        for interaction in self.samples.iter_mut().flat_map(|s| &mut s.interactions) {
            if let Some(answer) = &mut interaction.answer
                && answer.len() > ANSWER_QUOTED
            {
                interaction.answer_bytes = Some(answer.len() as u64);
                *answer = quote(answer, ANSWER_QUOTED / 2);
            }
        }
    }

    /// Hides every value `secrets` holds in everything the unit reports.
    pub fn redact(&mut self, secrets: &Redactor) {
        if secrets.is_empty() {
            return;
        }
        self.unit.redact(secrets);
        self.samples.iter_mut().for_each(|s| s.redact(secrets));
    }
}

/// Counts of units that did not pass, by verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Waived {
    /// Failed.
    pub failed: usize,
    /// Errored.
    pub errored: usize,
    /// Inconclusive.
    pub inconclusive: usize,
}

impl Waived {
    /// How many in all.
    pub fn total(&self) -> usize {
        self.failed + self.errored + self.inconclusive
    }
}

/// Totals of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Units that passed.
    pub passed: usize,
    /// Units that failed.
    pub failed: usize,
    /// Units that errored.
    pub errored: usize,
    /// Units whose `reliability` gate ran out of samples undecided.
    pub inconclusive: usize,
    /// Of the failed, errored and inconclusive units, those quarantined
    /// (`prill-quarantine.toml`): counted above, but they do not gate the run.
    pub waived: Waived,
    /// Units that did not run.
    pub skipped: usize,
    /// Whether the run was cancelled (Ctrl-C).
    pub cancelled: bool,
    /// Whether the run stopped after its first failure ([`crate::RunOptions::fail_fast`])
    /// with units left that never started (they are counted as skipped).
    pub stopped: bool,
    /// How long the run took.
    pub duration: Duration,
}

impl Summary {
    /// Counts one unit's verdict.
    pub fn add(&mut self, verdict: Status) {
        match verdict {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Errored => self.errored += 1,
            Status::Inconclusive => self.inconclusive += 1,
            // A unit is never unscored; a verdict is one of the other five.
            Status::Skipped | Status::Unscored => self.skipped += 1,
        }
    }

    /// Counts one more quarantined unit's verdict as not gating (after [`Summary::add`]).
    pub fn waive(&mut self, verdict: Status) {
        match verdict {
            Status::Failed => self.waived.failed += 1,
            Status::Errored => self.waived.errored += 1,
            Status::Inconclusive => self.waived.inconclusive += 1,
            Status::Passed | Status::Unscored | Status::Skipped => {}
        }
    }

    /// The failed, errored and inconclusive units that gate the run: all of them but the
    /// quarantined ones.
    pub fn gating(&self) -> Waived {
        Waived {
            failed: self.failed.saturating_sub(self.waived.failed),
            errored: self.errored.saturating_sub(self.waived.errored),
            inconclusive: self.inconclusive.saturating_sub(self.waived.inconclusive),
        }
    }

    /// Every unit counted.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.errored + self.inconclusive + self.skipped
    }
}

/// One thing that happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The run starts.
    RunStarted {
        /// How many units will run.
        units: usize,
    },
    /// A unit's first sample starts.
    UnitStarted {
        /// The unit.
        unit: UnitId,
    },
    /// A sample finished.
    SampleFinished {
        /// The unit.
        unit: UnitId,
        /// The sample.
        sample: SampleReport,
    },
    /// A unit has its verdict.
    UnitFinished(UnitReport),
    /// Warm workers started before the run are ready (or could not start): sent at
    /// most once, after `RunStarted`, by whoever started them (a session, for
    /// neuro-san's `direct` workers), never by the engine. Nothing about a unit.
    WorkersReady(WorkersReady),
    /// The run is over.
    RunFinished(Summary),
}

/// Warm workers that started before the run: what they are and how their start went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkersReady {
    /// What runs in them: `neuro-san`.
    pub what: String,
    /// How many are ready.
    pub ready: usize,
    /// How many could not start (the first conversation that needs one says why).
    pub failed: usize,
    /// From their start to the last one's end of start-up.
    pub took: Duration,
}

impl Event {
    /// Hides every value `secrets` holds (`${VAR}` values of a test file, keys) in
    /// everything the event reports, so that no reporter can show one.
    pub fn redact(&mut self, secrets: &Redactor) {
        if secrets.is_empty() {
            return;
        }
        match self {
            Event::RunStarted { .. } | Event::WorkersReady(_) | Event::RunFinished(_) => {}
            Event::UnitStarted { unit } => unit.redact(secrets),
            Event::SampleFinished { unit, sample } => {
                unit.redact(secrets);
                sample.redact(secrets);
            }
            Event::UnitFinished(report) => report.redact(secrets),
        }
    }

    /// Readies the event for reporters: hides every value `secrets` holds
    /// ([`Event::redact`]), then quotes a finished unit's long answers
    /// ([`UnitReport::quote_answers`]); each whole answer stays in its sample's event.
    pub fn for_reports(&mut self, secrets: &Redactor) {
        self.redact(secrets);
        if let Event::UnitFinished(report) = self {
            report.quote_answers();
        }
    }
}

/// The first and the last `each` bytes of `text` (cut at character boundaries), and
/// between them how many bytes were left out.
fn quote(text: &str, each: usize) -> String {
    let mut head = each.min(text.len());
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len().saturating_sub(each).max(head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n… [{} bytes left out: the whole answer is in its sample's own record] …\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_arguments_results_and_kept_steps_are_redacted() {
        let env = prill_spec::Env::from_pairs([("API_TOKEN", "tok-secret-123456")]);
        let secrets = Redactor::new(&["API_TOKEN".to_owned()], &env);
        let mut report = InteractionReport::sent(0, None);
        report.call.trajectory.push(TrajectoryStep {
            turn: 1,
            tool: "fetch".into(),
            arguments: serde_json::json!({"auth": "tok-secret-123456"}),
            result: Some(serde_json::json!(["echo tok-secret-123456"])),
            is_error: false,
        });
        report
            .call
            .steps
            .push(serde_json::json!({"content": "tok-secret-123456"}));
        report.redact(&secrets);
        let shown = format!("{:?}", report.call);
        assert!(!shown.contains("tok-secret-123456"), "{shown}");
        assert!(shown.contains("API_TOKEN"), "{shown}");
    }

    #[test]
    fn a_quote_keeps_the_head_and_the_tail_at_character_boundaries() {
        assert_eq!(
            quote("abcdefgh", 3),
            "abc\n… [2 bytes left out: the whole answer is in its sample's own record] …\nfgh"
        );
        // `é` is two bytes: no cut falls inside it.
        let quoted = quote("éééé", 3);
        assert!(quoted.starts_with("é\n"), "{quoted}");
        assert!(quoted.ends_with("\né"), "{quoted}");
        assert!(quoted.contains("[4 bytes left out"), "{quoted}");
    }

    #[test]
    fn only_answers_over_the_limit_are_quoted() {
        let interaction = |answer: String| InteractionReport {
            answer: Some(answer),
            ..InteractionReport::sent(0, None)
        };
        let long = "x".repeat(ANSWER_QUOTED + 1);
        let short = "y".repeat(ANSWER_QUOTED);
        let mut unit = UnitReport {
            unit: UnitId {
                case_id: "c".into(),
                name: "c".into(),
                file: PathBuf::from("c.json"),
                dialect: Dialect::DataDriven,
                connection: "direct".into(),
                target: "a".into(),
                tags: Vec::new(),
            },
            verdict: Status::Passed,
            gate: Gate::default(),
            quarantine: None,
            tally: Tally::default(),
            samples: vec![SampleReport {
                index: 0,
                status: Status::Passed,
                duration: Duration::ZERO,
                interactions: vec![interaction(long.clone()), interaction(short.clone())],
                error: None,
                taped: Default::default(),
            }],
            duration: Duration::ZERO,
        };
        unit.quote_answers();
        let [quoted, kept] = &unit.samples[0].interactions[..] else {
            unreachable!()
        };
        assert_eq!(quoted.answer_bytes, Some(long.len() as u64));
        let text = quoted.answer.as_deref().unwrap();
        assert!(text.len() < ANSWER_QUOTED + 200, "{}", text.len());
        assert!(text.starts_with(&long[..ANSWER_QUOTED / 2]));
        assert_eq!(kept.answer.as_deref(), Some(short.as_str()));
        assert_eq!(kept.answer_bytes, None);
    }
}
