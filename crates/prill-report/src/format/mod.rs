//! The stable, versioned formats of the machine-readable reports: the JSON report
//! ([`Report`], written by [`JsonReport`](crate::JsonReport)) and one record of the JSON
//! Lines stream ([`Line`], written by [`JsonLines`](crate::JsonLines)).
//!
//! These types belong to the reports, not to the engine: the reporters convert the
//! engine's [`Event`](prill_run::Event)s into them (the `From` impls in this module), so
//! renaming a field inside the engine cannot change what CI reads. The conversion also
//! runs backwards ([`Line::to_event`], [`Record::to_event`], `TryFrom<&Unit>` for
//! [`UnitReport`](prill_run::UnitReport)) so that a stored run can be fed to the
//! reporters again ([`crate::rebuild`]). Every document
//! carries `schema_version` ([`SCHEMA_VERSION`], now 1); a change that could break a
//! reader (a field renamed, removed or retyped) raises it, while new fields and new enum
//! values may appear within a version, which is why the types are `#[non_exhaustive]`.
//! Durations are seconds, as numbers (`1.234`).
//!
//! Their JSON Schemas (draft 2020-12) are [`report_schema`] and [`line_schema`],
//! checked in as `schemas/report.schema.json` and `schemas/report-line.schema.json` by
//! `cargo xtask schemas`.
//!
//! # Example
//!
//! ```
//! use prill_report::format::{Line, Record, SCHEMA_VERSION};
//! use prill_run::Event;
//!
//! let line = Line::from(&Event::RunStarted { units: 2 });
//! assert_eq!(line.schema_version, SCHEMA_VERSION);
//! assert!(matches!(line.record, Record::RunStarted { units: 2 }));
//! assert_eq!(
//!     serde_json::to_string(&line)?,
//!     r#"{"schema_version":1,"event":"run_started","units":2}"#
//! );
//! # Ok::<(), serde_json::Error>(())
//! ```

mod convert;
mod revert;
mod taped;

pub(crate) use convert::gates_of;

pub use revert::RevertError;
pub use taped::{SampleCassettes, Source, UserStop, UserTurn};

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The version of the formats in this module, the `schema_version` of every document.
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON report: the summary and every unit, in the order they finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "PrillReport")]
#[non_exhaustive]
pub struct Report {
    /// The version of this format: 1.
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// The run's totals.
    pub summary: Summary,
    /// Every unit that finished, in the order it finished.
    pub units: Vec<Unit>,
    /// What the run's gates mean (`prill explain`'s figures, `docs/statistics.md`), one
    /// entry per distinct `success_ratio`; absent from reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gates: Option<Gates>,
}

/// What the run's gates mean: each distinct `success_ratio`'s chance of passing at
/// the usual rates and its error rates at `good` and `bad`, and how many good units a
/// run like this fails on average.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Gates {
    /// The rate a good agent is taken to pass at.
    pub good: f64,
    /// The rate a bad agent is taken to pass at.
    pub bad: f64,
    /// The units a run like this fails on average if every one passed at `good`: the
    /// sum of their false-fail rates.
    pub expected_false_failures: f64,
    /// Each distinct gate, strictest first.
    pub ratios: Vec<RatioGate>,
}

/// One `success_ratio` and what it means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RatioGate {
    /// The gate, `k/n`.
    #[schemars(extend("pattern" = "^[0-9]+/[0-9]+$"))]
    pub success_ratio: String,
    /// How many units of the run it gates.
    pub units: u64,
    /// Its chance of passing an agent at each rate, and the samples it takes there.
    pub rates: Vec<GateAtRate>,
    /// How often an agent at `good` does not pass.
    pub false_fail: f64,
    /// How often an agent at `bad` passes.
    pub false_pass: f64,
}

/// A gate at one rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct GateAtRate {
    /// The rate each sample passes at.
    pub p: f64,
    /// The chance the gate passes.
    pub pass: f64,
    /// The samples it takes on average (with early stop).
    pub expected_samples: f64,
}

/// One record of the JSON Lines stream: one event, with the format's version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "PrillReportLine")]
#[non_exhaustive]
pub struct Line {
    /// The version of this format: 1.
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// The event, tagged by `event`.
    #[serde(flatten)]
    pub record: Record,
}

/// What happened, tagged by `event`: `run` (a stored run's first line: what ran, where
/// and how), `run_started`, `unit_started`, `sample_finished`, `unit_finished`,
/// `workers_ready`, `run_finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Record {
    /// Which run this is: the first line of a run kept in the history
    /// (`.prill/runs/<id>.jsonl`) and of `prill run --jsonl`'s stream (the same line
    /// in both); a stream written by an older Prill, or by a reporter fed events alone,
    /// does not have it.
    Run(RunInfo),
    /// The run starts.
    RunStarted {
        /// How many units will run.
        units: u64,
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
        sample: Sample,
    },
    /// A unit has its verdict; its fields are those of a [`Unit`].
    UnitFinished(Unit),
    /// Warm workers started before the run (neuro-san's `direct` workers) are ready:
    /// at most once, after `run_started`.
    WorkersReady {
        /// What runs in them: `neuro-san`.
        what: String,
        /// How many are ready.
        ready: u64,
        /// How many could not start (the units that needed one say why).
        failed: u64,
        /// Seconds from their start to the last one's end of start-up.
        took: f64,
    },
    /// The run is over; its fields are those of a [`Summary`].
    RunFinished(Summary),
}

/// A run as the history keeps it: its id, when it started, the commit it ran on, and
/// the settings that shaped it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RunInfo {
    /// The run's id: its start time (UTC, to the millisecond) and a random suffix,
    /// `20261125T001530.042Z-3f9a2c`, so that ids sort by time.
    pub id: String,
    /// When it started: RFC 3339, UTC.
    pub started_at: String,
    /// The command: `run`, `assess`, or `merge` for the shards of a suite made one
    /// run by `prill report merge`.
    pub command: String,
    /// The git commit of the project folder, when it is in a git work tree.
    pub git: Option<GitState>,
    /// The settings that chose and shaped the units.
    pub settings: RunSettings,
}

/// The state of the git work tree a run ran in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GitState {
    /// The commit checked out (`HEAD`), 40 hex digits.
    pub commit: String,
    /// Whether tracked files differed from it.
    pub dirty: bool,
    /// The branch checked out, when it is one (not a detached `HEAD`).
    pub branch: Option<String>,
}

/// What chose and shaped a run's units, as given on the command line and resolved
/// from `prill.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunSettings {
    /// The files and folders given.
    pub paths: Vec<String>,
    /// `--filter` patterns.
    pub filters: Vec<String>,
    /// `--tag`s.
    pub tags: Vec<String>,
    /// `--partition` / `--shard`, as `kind:i/n`.
    pub partition: Option<String>,
    /// The suite the units were selected from, before the partition: the same for every
    /// part of one suite split with `--shard`, so `prill report merge` can tell that
    /// shards belong together and which part is missing. Absent in runs written by an
    /// older Prill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<Suite>,
    /// `--connection` overrides.
    pub connections: Vec<String>,
    /// `--samples`.
    pub samples: Option<u32>,
    /// `--model` overrides.
    pub models: Vec<String>,
    /// The judge asked for (`--judge` or `[judge] model`), when one was.
    pub judge: Option<String>,
    /// `--fail-fast`.
    pub fail_fast: bool,
    /// `--rerun-failed`.
    pub rerun_failed: bool,
    /// The cassettes the run recorded into or replayed from (`--record DIR`,
    /// `--replay DIR`, ...), when it did: a replayed run shows as one. Absent
    /// otherwise, and in runs written by an older Prill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassettes: Option<RunCassettes>,
    /// For a run of `prill compare --top-up` (command `top-up`): the run whose samples it
    /// adds to. Absent otherwise, and in runs written by an older Prill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_up: Option<TopUpOf>,
}

/// The run a `top-up` run adds samples to, and the test its samples feed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TopUpOf {
    /// The id of the run topped up (the comparison's head).
    pub head: String,
    /// How many looks the comparison's test of each topped-up case is spread over (the
    /// head's own samples, then each wave of more): every p-value of a comparison of
    /// the head is multiplied by it (Bonferroni), so that looking again is paid for.
    pub looks: u32,
}

/// The cassettes of a run (`docs/cassettes.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunCassettes {
    /// `record`, `replay`, `replay-or-record` or `re-record`: the flag given.
    pub mode: String,
    /// Their folder, as given.
    pub dir: String,
}

/// The suite a run's units were selected from (by files, filters and tags), before
/// `--partition` / `--shard` kept its part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Suite {
    /// 16 hex digits: a hash of the selected units' ids (case id and connection).
    pub fingerprint: String,
    /// How many units the whole suite has.
    pub units: u64,
}

impl Suite {
    /// The suite with this `fingerprint` and `units`.
    pub fn new(fingerprint: impl Into<String>, units: u64) -> Suite {
        Suite {
            fingerprint: fingerprint.into(),
            units,
        }
    }
}

impl RunInfo {
    /// A run starting now, with `id` and `started_at` filled in.
    pub fn starting(command: &str, git: Option<GitState>, settings: RunSettings) -> RunInfo {
        let now = time::OffsetDateTime::now_utc();
        let stamp = time::macros::format_description!(
            "[year][month][day]T[hour][minute][second].[subsecond digits:3]Z"
        );
        let rfc3339 = now
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let suffix = {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(now.unix_timestamp_nanos().unsigned_abs());
            h.write_u32(std::process::id());
            h.finish() & 0xff_ffff
        };
        RunInfo {
            id: format!("{}-{suffix:06x}", now.format(&stamp).unwrap_or_default()),
            started_at: rfc3339,
            command: command.to_owned(),
            git,
            settings,
        }
    }
}

/// Totals of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Summary {
    /// Units that passed.
    pub passed: u64,
    /// Units that failed.
    pub failed: u64,
    /// Units that errored.
    pub errored: u64,
    /// Units whose `reliability` gate reached `max_samples` undecided. Written only
    /// when there are some.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inconclusive: u64,
    /// Units that did not run.
    pub skipped: u64,
    /// Of the failed, errored and inconclusive units, those quarantined
    /// (`prill-quarantine.toml`): counted above, but not gating the run. Written only
    /// when there are some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waived: Option<Waived>,
    /// Whether the run was cancelled (Ctrl-C), or its event stream ended early.
    pub cancelled: bool,
    /// Whether `--fail-fast` stopped the run after its first failure, leaving units
    /// that never started (counted in `skipped`). Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
    /// How long the run took, in seconds.
    pub duration: f64,
}

/// Units that did not pass, by verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Waived {
    /// Failed.
    pub failed: u64,
    /// Errored.
    pub errored: u64,
    /// Inconclusive.
    pub inconclusive: u64,
}

/// The `prill-quarantine.toml` entry of a quarantined unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Quarantine {
    /// The case's file, from the project folder.
    pub file: String,
    /// The case's name.
    pub case: String,
    /// Why it is quarantined.
    pub reason: String,
    /// Who answers for it.
    pub owner: String,
    /// The last day the entry holds, `YYYY-MM-DD`.
    pub expires: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How something came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Every threshold held; enough samples passed.
    Passed,
    /// The answer was wrong.
    Failed,
    /// The answer could not be judged (unreachable, timeout, protocol, a check error).
    Errored,
    /// A `reliability` gate reached `max_samples` undecided (units only): never a pass.
    Inconclusive,
    /// A score with no threshold: neither passed nor failed (checks only).
    Unscored,
    /// It did not run (units only).
    Skipped,
}

/// Which dialect a unit's case was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Dialect {
    /// A neuro-san data-driven test case.
    DataDriven,
    /// A Sentinel TestSpec.
    SentinelSpec,
    /// A Sentinel TestSuite.
    SentinelSuite,
    /// The project configuration (never a unit's).
    Config,
    /// No file: a suite run from Rust code (`prill_run::run_test_suite`).
    RustSuite,
}

/// A unit of work: one case over one connection (or one model call, or one case of a
/// Rust suite under one grid combination).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct UnitId {
    /// The case's id (a Rust suite's case: its hash).
    pub case_id: String,
    /// The case's name.
    pub name: String,
    /// The file the case came from (a Rust suite: the suite's id).
    pub file: String,
    /// The dialect.
    pub dialect: Dialect,
    /// The connection (`direct`, `http`, ...), the provider for a model case, `fn` for
    /// a Rust suite.
    pub connection: String,
    /// The agent or model under test (a Rust suite: the suite's id).
    pub target: String,
    /// The case's tags (its own, its suite's, a Sentinel spec's `category`); absent
    /// when it has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A unit's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Unit {
    /// The unit.
    pub unit: UnitId,
    /// Its verdict: passed, failed, errored or skipped.
    pub verdict: Status,
    /// The ratio it was held to, `k/n`: at least `k` of `n` samples must pass. Absent
    /// when the unit was held to a `reliability` gate instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^[0-9]+/[0-9]+$"))]
    pub success_ratio: Option<String>,
    /// The `reliability` gate it was held to instead of a `success_ratio`: a
    /// sequential test between `good` and `bad` (`docs/statistics.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliability: Option<ReliabilityPlan>,
    /// The `prill-quarantine.toml` entry that lists its case: it ran and is reported,
    /// but its verdict does not gate the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantine: Option<Quarantine>,
    /// Counts of the samples that ran.
    pub tally: Tally,
    /// For a unit of more than one sample: its pass rate with its intervals, and pass@k
    /// and pass^k as curves (`docs/statistics.md`). Absent in runs written by an older
    /// Prill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<PassRates>,
    /// The samples that ran, in the order they finished.
    pub samples: Vec<Sample>,
    /// From its first sample's start to its verdict, in seconds.
    pub duration: f64,
    /// Where its verdict came from: `replayed` when every sample was answered from
    /// cassettes (nothing was sent), `mixed` when some exchanges were replayed and some
    /// went live; absent when everything went live.
    #[serde(default, skip_serializing_if = "Source::is_live")]
    pub source: Source,
}

/// What a unit's samples say of its pass rate, counting an errored sample as not
/// passing. A unit stops sampling once its verdict is known, so these describe the
/// samples taken, not a fixed design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct PassRates {
    /// Passed samples over the samples that ran.
    pub rate: f64,
    /// The Wilson score 95% interval.
    pub wilson: Interval,
    /// The Clopper–Pearson (exact) 95% interval.
    pub clopper_pearson: Interval,
    /// pass@k (at least one of `k` samples passes) and pass^k (all `k` pass), unbiased
    /// from these samples, for `k` from 1 to 20, then 25, 50, 100, ... and the samples.
    pub pass_k: Vec<PassK>,
}

/// An interval of a rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Interval {
    /// Its low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

/// pass@k and pass^k at one `k`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct PassK {
    /// `k`.
    pub k: u32,
    /// The chance at least one of `k` samples passes: `1 - C(n-c, k) / C(n, k)`.
    pub pass_at_k: f64,
    /// The chance all `k` pass: `C(c, k) / C(n, k)`.
    pub pass_hat_k: f64,
}

impl PassRates {
    /// The rates of `tally`, when it has more than one sample.
    pub fn of(tally: &Tally) -> Option<PassRates> {
        let (c, n) = (tally.passed, tally.passed + tally.failed + tally.errored);
        if n < 2 {
            return None;
        }
        let round = |x: f64| (x * 1e6).round() / 1e6;
        let interval = |(low, high): (f64, f64)| Interval {
            low: round(low),
            high: round(high),
        };
        Some(PassRates {
            rate: round(f64::from(c) / f64::from(n)),
            wilson: interval(prill_stats::wilson(
                u64::from(c),
                u64::from(n),
                prill_stats::Z95,
            )),
            clopper_pearson: interval(prill_stats::clopper_pearson(c, n, 0.05)),
            pass_k: prill_stats::curve(n, c)
                .into_iter()
                .map(|(k, at, hat)| PassK {
                    k,
                    pass_at_k: round(at),
                    pass_hat_k: round(hat),
                })
                .collect(),
        })
    }
}

/// A `reliability` gate's plan: it passes an agent whose success rate is at least
/// `good` with probability at least `1 - false_fail`, and one at most `bad` with
/// probability at most `false_pass`; undecided after `max_samples` passed or failed
/// samples (errored ones are not counted), the verdict is `inconclusive`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ReliabilityPlan {
    /// A success rate at least this high should pass.
    pub good: f64,
    /// A success rate at most this high should not.
    pub bad: f64,
    /// The most often an agent at `bad` may pass.
    pub false_pass: f64,
    /// The most often an agent at `good` may fail or be inconclusive.
    pub false_fail: f64,
    /// The counted samples after which an undecided gate is inconclusive.
    pub max_samples: u32,
}

/// Counts of the samples that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Tally {
    /// Samples that passed.
    pub passed: u32,
    /// Samples that failed.
    pub failed: u32,
    /// Samples that errored.
    pub errored: u32,
}

/// One sample of a unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Sample {
    /// Which sample (from 0).
    pub index: u32,
    /// How it came out: passed, failed or errored.
    pub status: Status,
    /// How long it took, in seconds.
    pub duration: f64,
    /// Its interactions, up to the one that errored if one did.
    pub interactions: Vec<Interaction>,
    /// An error outside any interaction (the sample timed out, or could not start).
    pub error: Option<Error>,
    /// How many of its exchanges the run's cassettes answered (`replayed`) and recorded
    /// (`recorded`); absent without cassettes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassettes: Option<SampleCassettes>,
}

/// One interaction of a sample: what was sent, what came back, how the checks came out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Interaction {
    /// Its position in the case (from 0).
    pub index: u64,
    /// The text sent.
    pub sent: Option<String>,
    /// The sly_data sent with the text (the interaction's own, or the one carried from
    /// the interaction before), as it went to the agent; absent when none was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_sly_data: Option<Value>,
    /// The answer's text. In a `unit_finished` record and in the JSON report, an answer
    /// over 64 KiB is quoted: its first and last 32 KiB, with `answer_bytes` set; the
    /// whole answer is in the sample's `sample_finished` record of the JSON Lines stream
    /// and the history.
    pub answer: Option<String>,
    /// The whole answer's length in bytes, when `answer` holds only its head and tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_bytes: Option<u64>,
    /// The structure returned.
    pub structure: Option<Value>,
    /// The sly_data returned.
    pub sly_data: Option<Value>,
    /// How long it took, in seconds.
    pub duration: f64,
    /// Every check's result, in order.
    pub checks: Vec<Check>,
    /// Why the interaction could not complete, when it could not.
    pub error: Option<Error>,
    /// Token usage of the call, as the provider or agent reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Seconds from the request to the first byte (the first token of a stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_token: Option<f64>,
    /// What the call cost, in US dollars, from `usage` and the model's price in
    /// `prill.toml` (`[prices]`); absent when either is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Why the model stopped, in the provider's words: `stop`, `end_turn`, `length`,
    /// `max_tokens`, `content_filter`, `refusal`, `guardrail_intervened`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Whether the answer was cut short by a token limit (`length`, `max_tokens`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Whether `answer` is the model's refusal rather than an answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refusal: bool,
    /// Whether the answer came from the model response cache (`[cache] models` of
    /// `prill.toml`) rather than from the provider; its `cost` is then 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// What the provider changed about the request so that the model would take it
    /// (a sampling parameter the model refuses, not sent; turns merged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Each model call of a tool loop or LangGraph run, in order (absent for a single
    /// call); `usage`, `time_to_first_token` and `stop_reason` above are then the
    /// run's totals, its first call's and its last call's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<Turn>,
    /// Every tool call, in order, with its result and the turn that asked for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trajectory: Vec<TrajectoryCall>,
    /// Every message of the run, raw, when the test asked for them
    /// (`framework_config.intermediate_steps: true`) or the run ended at
    /// `max_iterations`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Value>,
    /// In a conversation with a simulated user: who wrote `sent`, and on the last
    /// interaction how the user ended the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserTurn>,
}

/// One model call of a tool loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Turn {
    /// Which call (from 1).
    pub turn: u32,
    /// Its token usage, as reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// From its request to its end, in seconds.
    pub duration: f64,
    /// Seconds from its request to its first byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_token: Option<f64>,
    /// Why the model stopped, in the provider's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// How many tools it called.
    pub tool_calls: u64,
}

/// One tool call of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct TrajectoryCall {
    /// Which model call (from 1) asked for it; for a neuro-san agent, the position of
    /// the message that showed it.
    pub turn: u32,
    /// The tool (for neuro-san: the agent or tool invoked).
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// What it returned, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Whether it failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// Token counts of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Tokens generated, hidden reasoning included where the provider counts it there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Of `output`, the hidden reasoning tokens, where the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    /// The visible answer's tokens: `output` less `reasoning` (what `max_tokens` and
    /// `min_tokens` checks count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<u64>,
}

/// Why something could not complete.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Error {
    /// A stable id in snake case: `unreachable`, `unknown_agent`, `status`, `protocol`,
    /// `timeout`, `too_large`, `tls`, `io`, `spawn`, `config`, `max_iterations`, `panic`,
    /// `function`; more may come.
    pub kind: String,
    /// What happened.
    pub message: String,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Check {
    /// Where the check is written in its case, e.g.
    /// `interactions[0].response.text.keywords`, or `assertions[1].must_contain` in a
    /// Sentinel test (a suite's test is a case of its own, so the path does not name
    /// `tests[i]`: `location` gives its line); for a Rust suite, `evaluators.<id>`.
    pub path: String,
    /// The check's name: `keywords`, `not_gist`, `must_contain`, an evaluator's id, ...
    pub name: String,
    /// What it looked at: `text`, `structure.answer`, `output`, `tool_calls`, ...
    pub target: String,
    /// The value it was given, if any.
    pub expected: Option<Value>,
    /// The value it looked at, when there was one (a short preview of long text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Value>,
    /// How it came out: passed, failed, unscored or errored.
    pub status: Status,
    /// Its evaluation, or why it could not be evaluated; tagged by `outcome`.
    #[serde(flatten)]
    pub outcome: CheckOutcome,
    /// Where the check is written in the unit's file, when it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

/// A place in a test file, as editors count: line and column from 1 (columns in
/// characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Location {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1.
    pub column: u32,
}

/// How a check came out, tagged by `outcome`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CheckOutcome {
    /// The check ran.
    Evaluated {
        /// The score and threshold.
        evaluation: Evaluation,
        /// What was checked, expected and found.
        message: String,
    },
    /// The check could not run.
    Errored {
        /// Why.
        message: String,
    },
}

/// A score from 0 to 1, the threshold it was held to, and context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Evaluation {
    /// A number from 0 to 1.
    pub score: f64,
    /// Which scores pass; without one the check is unscored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Threshold>,
    /// Context, typically why the evaluation failed.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

/// The range a score must fall in to pass; every bound that is set must hold.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Threshold {
    /// The score must be less than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lt: Option<f64>,
    /// The score must be at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lte: Option<f64>,
    /// The score must be greater than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gt: Option<f64>,
    /// The score must be at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gte: Option<f64>,
}

/// The JSON Schema (draft 2020-12) of the JSON report, [`Report`].
pub fn report_schema() -> Schema {
    generate::<Report>()
}

/// The JSON Schema (draft 2020-12) of one JSON Lines record, [`Line`].
pub fn line_schema() -> Schema {
    generate::<Line>()
}

/// Every schema of this module as the pretty JSON text written to `schemas/`, ending
/// in a newline, with its file name there.
pub fn schema_files() -> [(&'static str, String); 2] {
    [
        ("report.schema.json", text(&report_schema())),
        ("report-line.schema.json", text(&line_schema())),
    ]
}

fn text(schema: &Schema) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

fn generate<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schemas_pin_the_current_version() {
        for schema in [report_schema(), line_schema()] {
            let schema = serde_json::to_value(&schema).unwrap();
            assert_eq!(
                schema["properties"]["schema_version"]["const"], SCHEMA_VERSION,
                "the `const` of `schema_version` follows SCHEMA_VERSION"
            );
            let required = schema["required"].as_array().unwrap();
            assert!(required.contains(&"schema_version".into()));
        }
    }
    /// A unit's rates count an errored sample as not passing, use the unbiased pass^k
    /// (never the plug-in), and are left out for a single sample.
    #[test]
    fn rates_are_the_unbiased_estimates_of_the_samples_taken() {
        let tally = |passed, failed, errored| Tally {
            passed,
            failed,
            errored,
        };
        assert_eq!(PassRates::of(&tally(1, 0, 0)), None);
        let r = PassRates::of(&tally(4, 0, 1)).unwrap();
        assert_eq!(r.rate, 0.8);
        // pass^3 = C(4,3) / C(5,3) = 0.4, not 0.8^3 = 0.512; pass@3 = 1.
        let at3 = r.pass_k[2];
        assert_eq!((at3.k, at3.pass_hat_k, at3.pass_at_k), (3, 0.4, 1.0));
        assert_eq!(r.pass_k.len(), 5);
        assert!(r.wilson.low < 0.8 && 0.8 < r.wilson.high);
        // The exact interval is the wider one here.
        assert!(r.clopper_pearson.low < r.wilson.low);
    }
}
