//! What changed between two runs: the units matched by case id and connection, their
//! verdicts, sampled pass rates, metrics and judge reasons compared.

use std::collections::BTreeMap;

use prill_report::format::{CheckOutcome, PassRates, RunInfo, Status, Summary, Unit};
use prill_report::stored::StoredRun;
use serde::Serialize;

use prill_stats::two_sample::{benjamini_hochberg, detectable_drop, fisher_mid_p, holm};

/// Latency changes smaller than this many seconds are noise, whatever their percentage.
pub const LATENCY_FLOOR_SECONDS: f64 = 0.01;

/// How large a change must be to be reported, and how unlikely a pass-rate change
/// must be to be a regression (`[compare]` in `prill.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// Latency and time to first token: an increase beyond this percentage.
    pub latency_percent: f64,
    /// Tokens: an increase beyond this percentage.
    pub tokens_percent: f64,
    /// Cost: an increase beyond this percentage.
    pub cost_percent: f64,
    /// The comparison's error rate: a sampled case regressed (or was fixed) when its
    /// change passes Holm's step-down at this level over every sampled case compared
    /// (Fisher's exact test, mid-p); a Benjamini–Hochberg discovery at this level is
    /// "probably changed".
    pub alpha: f64,
}

impl Default for Thresholds {
    /// Latency +20%, tokens +15%, cost +15%, alpha 0.05.
    fn default() -> Thresholds {
        Thresholds {
            latency_percent: 20.0,
            tokens_percent: 15.0,
            cost_percent: 15.0,
            alpha: 0.05,
        }
    }
}

/// One side of a comparison: a run read from the history or from a report file.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// How the run is named: its id, or the file it was read from.
    pub label: String,
    /// The run's `run` line, when the file has one.
    pub info: Option<RunInfo>,
    /// Its finished units.
    pub units: Vec<Unit>,
    /// Whether the run finished.
    pub finished: bool,
    /// Its totals, when it finished.
    pub summary: Option<Summary>,
    /// How many looks each sampled case's test is spread over: 1, or, for a run
    /// `prill compare --top-up` added samples to, the looks its plan allows (the
    /// run's own samples, then each wave). Every p-value of a comparison is multiplied
    /// by the larger side's looks.
    pub looks: u32,
    /// The ids of the `top-up` runs whose samples were added ([`Side::add`]).
    pub topped_up_by: Vec<String>,
}

impl Side {
    /// The run `stored`, named `label`.
    pub fn new(label: impl Into<String>, stored: StoredRun) -> Side {
        let finished = stored.finished();
        Side {
            label: label.into(),
            info: stored.info,
            units: stored.units,
            finished,
            summary: stored.summary,
            looks: 1,
            topped_up_by: Vec::new(),
        }
    }

    /// Adds the samples of `extra`, a `top-up` run of this one, to its units (matched by
    /// case id, connection and target): their tallies and samples are added, the
    /// verdicts kept. The looks become the top-up's when it has more. A unit of
    /// `extra` this run does not have is left out.
    pub fn add(&mut self, extra: Side) {
        if let Some(of) = extra.info.as_ref().and_then(|i| i.settings.top_up.as_ref()) {
            self.looks = self.looks.max(of.looks);
        }
        if let Some(info) = &extra.info {
            self.topped_up_by.push(info.id.clone());
        }
        for more in extra.units {
            let Some(unit) = self.units.iter_mut().find(|u| {
                u.unit.case_id == more.unit.case_id
                    && u.unit.connection == more.unit.connection
                    && u.unit.target == more.unit.target
            }) else {
                continue;
            };
            unit.tally.passed += more.tally.passed;
            unit.tally.failed += more.tally.failed;
            unit.tally.errored += more.tally.errored;
            unit.rates = PassRates::of(&unit.tally);
            unit.samples.extend(more.samples);
        }
    }
}

/// A run as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    /// Its id, or the file it was read from.
    pub label: String,
    /// Its id, when the file has a `run` line.
    pub id: Option<String>,
    /// When it started, when known.
    pub started_at: Option<String>,
    /// Its git commit, when known.
    pub commit: Option<String>,
    /// Whether the work tree was dirty.
    pub dirty: bool,
    /// Whether it finished (a killed run keeps only its finished units).
    pub finished: bool,
    /// Units that passed.
    pub passed: usize,
    /// Units that failed.
    pub failed: usize,
    /// Units that errored.
    pub errored: usize,
}

/// A unit as the comparison names it: a case over a connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaseRef {
    /// The case's id (the hash of its inputs).
    pub case_id: String,
    /// The case's name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// The connection or provider.
    pub connection: String,
    /// The agent or model.
    pub target: String,
}

/// How a unit came out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Outcome {
    /// Its verdict.
    pub verdict: Status,
    /// Samples that passed.
    pub passed: u32,
    /// Samples that ran.
    pub samples: u32,
}

/// A unit whose outcome changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The unit.
    pub case: CaseRef,
    /// In the base run.
    pub base: Outcome,
    /// In the head run.
    pub head: Outcome,
    /// For a sampled case, the two-sided mid-p value of Fisher's exact test of the
    /// change in its pass rate, times the comparison's looks (at most 1), before any
    /// correction for the other cases.
    pub p_value: Option<f64>,
    /// For a sampled case, the smallest drop from its base pass rate that a test at
    /// `alpha` (divided by the looks) would have seen 80% of the time with these
    /// samples (`None`: not even a drop to 0).
    pub detectable_drop: Option<f64>,
    /// For a sampled case, its pass rate in the base run with its intervals, pass@k and
    /// pass^k (when it ran more than one sample there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rates: Option<PassRates>,
    /// The same in the head run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_rates: Option<PassRates>,
}

/// The power a comparison's detectable drop is stated at.
pub const POWER: f64 = 0.8;

/// A case whose inputs were edited between the runs: a unit of the base run and one of
/// the head run of the same file, name and connection, under another id (a case's id
/// hashes its inputs). Compared as one case, it is neither a regression nor a fix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edited {
    /// The unit in the head run.
    pub case: CaseRef,
    /// Its id in the base run.
    pub base_case_id: String,
    /// In the base run.
    pub base: Outcome,
    /// In the head run.
    pub head: Outcome,
}

/// A unit of only one of the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Only {
    /// The unit.
    pub case: CaseRef,
    /// How it came out in the run that has it.
    pub outcome: Outcome,
}

/// What a metric measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Mean seconds of an interaction (of a sample, when it has none).
    Latency,
    /// Mean seconds to the first token.
    TimeToFirstToken,
    /// Mean tokens (input and output) of a sample.
    Tokens,
    /// Mean US dollars of a sample.
    Cost,
}

impl Metric {
    /// Its name in a sentence.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Latency => "latency",
            Metric::TimeToFirstToken => "time to first token",
            Metric::Tokens => "tokens",
            Metric::Cost => "cost",
        }
    }

    /// `value` with its unit.
    pub fn show(self, value: f64) -> String {
        match self {
            Metric::Latency | Metric::TimeToFirstToken => format!("{value:.2} s"),
            Metric::Tokens => format!("{value:.0} tokens"),
            Metric::Cost => format!("${value:.4}"),
        }
    }
}

/// A metric that moved beyond its threshold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricChange {
    /// The unit.
    pub case: CaseRef,
    /// Which metric.
    pub metric: Metric,
    /// Its value in the base run.
    pub base: f64,
    /// Its value in the head run.
    pub head: f64,
    /// The change, in percent of the base value.
    pub percent: f64,
    /// Whether it got worse (larger).
    pub worse: bool,
}

/// A gist check whose judge gave another reason (or verdict).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeChange {
    /// The unit.
    pub case: CaseRef,
    /// Where the check is written (`interactions[0].response.text.gist`).
    pub check: String,
    /// How it came out in the base run.
    pub base_status: Status,
    /// How it came out in the head run.
    pub head_status: Status,
    /// The judge's reason in the base run.
    pub base_reason: String,
    /// The judge's reason in the head run.
    pub head_reason: String,
}

/// Everything that changed from the base run to the head run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The run compared against.
    pub base: RunRef,
    /// The run compared.
    pub head: RunRef,
    /// What counted as a change.
    pub thresholds: Thresholds,
    /// How many looks each sampled case's test is spread over (1 unless the head was
    /// topped up): its p-value is multiplied by them (Bonferroni).
    pub looks: u32,
    /// What `prill compare --top-up` added to the head, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_up: Option<crate::compare::TopUpReport>,
    /// Passed before, failed or errored now; for a sampled case, a drop in its pass
    /// rate that Holm's step-down over all sampled cases rejects at `alpha`.
    pub regressions: Vec<Change>,
    /// Failed or errored before, passed now; for a sampled case, a rise rejected the
    /// same way.
    pub fixes: Vec<Change>,
    /// Sampled cases whose change is a Benjamini–Hochberg discovery at `alpha` but not
    /// enough for Holm's correction: probably changed, not a regression.
    pub probably_changed: Vec<Change>,
    /// Sampled cases whose pass rate changed, but not detectably with these samples
    /// (each says the smallest drop it could have seen).
    pub within_chance: Vec<Change>,
    /// Units only the head run has.
    pub new: Vec<Only>,
    /// Units only the base run has.
    pub removed: Vec<Only>,
    /// Cases whose inputs were edited: a removed and a new unit of the same file, name
    /// and connection, compared as one.
    pub inputs_changed: Vec<Edited>,
    /// Latency, time to first token, tokens and cost beyond their thresholds.
    pub metrics: Vec<MetricChange>,
    /// Gist checks whose judge's reason changed.
    pub judge: Vec<JudgeChange>,
    /// Units in both runs that did not change verdict.
    pub unchanged: usize,
    /// Units skipped in either run, not compared.
    pub skipped: usize,
}

impl Comparison {
    /// Whether anything regressed (what `--fail-on-regression` fails on).
    pub fn has_regression(&self) -> bool {
        !self.regressions.is_empty()
    }
}

/// Compares `head` with `base`.
pub fn compare(base: &Side, head: &Side, thresholds: &Thresholds) -> Comparison {
    let looks = base.looks.max(head.looks).max(1);
    let mut out = Comparison {
        base: run_ref(base),
        head: run_ref(head),
        thresholds: *thresholds,
        looks,
        top_up: None,
        regressions: Vec::new(),
        fixes: Vec::new(),
        probably_changed: Vec::new(),
        within_chance: Vec::new(),
        new: Vec::new(),
        removed: Vec::new(),
        inputs_changed: Vec::new(),
        metrics: Vec::new(),
        judge: Vec::new(),
        unchanged: 0,
        skipped: 0,
    };
    let (pairs, mut removed, mut new) = pair(&base.units, &head.units);
    for (b, h) in edited(&mut removed, &mut new) {
        if b.verdict == Status::Skipped || h.verdict == Status::Skipped {
            out.skipped += 1;
            continue;
        }
        out.inputs_changed.push(Edited {
            case: case_ref(h),
            base_case_id: b.unit.case_id.clone(),
            base: outcome(b),
            head: outcome(h),
        });
    }
    let mut tested = Vec::new();
    let mut tested_unchanged = 0;
    for (b, h) in pairs {
        if b.verdict == Status::Skipped || h.verdict == Status::Skipped {
            out.skipped += 1;
            continue;
        }
        match verdicts(b, h, thresholds.alpha, looks, &mut out) {
            Some(change) => tested.push(change),
            None if outcome(b).samples > 1 || outcome(h).samples > 1 => tested_unchanged += 1,
            None => {}
        }
        metrics(b, h, thresholds, &mut out.metrics);
        judge(b, h, &mut out.judge);
    }
    sampled(tested, tested_unchanged, thresholds.alpha, &mut out);
    for (units, into) in [(removed, &mut out.removed), (new, &mut out.new)] {
        for u in units {
            if u.verdict == Status::Skipped {
                out.skipped += 1;
            } else {
                into.push(Only {
                    case: case_ref(u),
                    outcome: outcome(u),
                });
            }
        }
    }
    out
}

fn run_ref(side: &Side) -> RunRef {
    let count = |s: Status| side.units.iter().filter(|u| u.verdict == s).count();
    let info = side.info.as_ref();
    let git = info.and_then(|i| i.git.as_ref());
    RunRef {
        label: side.label.clone(),
        id: info.map(|i| i.id.clone()),
        started_at: info.map(|i| i.started_at.clone()),
        commit: git.map(|g| g.commit.clone()),
        dirty: git.is_some_and(|g| g.dirty),
        finished: side.finished,
        passed: count(Status::Passed),
        failed: count(Status::Failed),
        errored: count(Status::Errored),
    }
}

pub(super) fn case_ref(u: &Unit) -> CaseRef {
    CaseRef {
        case_id: u.unit.case_id.clone(),
        name: u.unit.name.clone(),
        file: u.unit.file.clone(),
        connection: u.unit.connection.clone(),
        target: u.unit.target.clone(),
    }
}

pub(super) fn outcome(u: &Unit) -> Outcome {
    Outcome {
        verdict: u.verdict,
        passed: u.tally.passed,
        samples: u.tally.passed + u.tally.failed + u.tally.errored,
    }
}

/// The pairs of units of both runs that are judged on their pass rates: neither
/// skipped, and more than one sample in either run.
pub(super) fn sampled_pairs<'a>(base: &'a Side, head: &'a Side) -> Vec<(&'a Unit, &'a Unit)> {
    let (pairs, _, _) = pair(&base.units, &head.units);
    pairs
        .into_iter()
        .filter(|(b, h)| {
            b.verdict != Status::Skipped
                && h.verdict != Status::Skipped
                && (outcome(b).samples > 1 || outcome(h).samples > 1)
        })
        .collect()
}

type Paired<'a> = (Vec<(&'a Unit, &'a Unit)>, Vec<&'a Unit>, Vec<&'a Unit>);

/// The units of both runs matched by case id and connection (the same target first,
/// when a case ran against several), then those of only the base and only the head,
/// each in name order.
fn pair<'a>(base: &'a [Unit], head: &'a [Unit]) -> Paired<'a> {
    type Groups<'a> = BTreeMap<(String, String, String), (Vec<&'a Unit>, Vec<&'a Unit>)>;
    let mut groups: Groups<'a> = BTreeMap::new();
    let key = |u: &Unit| {
        (
            u.unit.name.clone(),
            u.unit.case_id.clone(),
            u.unit.connection.clone(),
        )
    };
    for u in base {
        groups.entry(key(u)).or_default().0.push(u);
    }
    for u in head {
        groups.entry(key(u)).or_default().1.push(u);
    }
    let (mut pairs, mut removed, mut new) = (Vec::new(), Vec::new(), Vec::new());
    for (_, (mut b, mut h)) in groups {
        b.retain(
            |bu| match h.iter().position(|hu| hu.unit.target == bu.unit.target) {
                Some(i) => {
                    pairs.push((*bu, h.remove(i)));
                    false
                }
                None => true,
            },
        );
        while !b.is_empty() && !h.is_empty() {
            pairs.push((b.remove(0), h.remove(0)));
        }
        removed.extend(b);
        new.extend(h);
    }
    (pairs, removed, new)
}

/// The units of `removed` and `new` of the same file, name and connection (a case
/// whose inputs were edited), taken out of both and paired, in order.
fn edited<'a>(removed: &mut Vec<&'a Unit>, new: &mut Vec<&'a Unit>) -> Vec<(&'a Unit, &'a Unit)> {
    let key = |u: &Unit| {
        (
            prill_run::last_run::shown_file(std::path::Path::new(&u.unit.file)).to_owned(),
            u.unit.name.clone(),
            u.unit.connection.clone(),
        )
    };
    let mut pairs = Vec::new();
    removed.retain(|b| {
        let wanted = key(b);
        match new.iter().position(|h| key(h) == wanted) {
            Some(i) => {
                pairs.push((*b, new.remove(i)));
                false
            }
            None => true,
        }
    });
    pairs
}

fn ok(s: Status) -> bool {
    s == Status::Passed
}

/// Sorts an unsampled pair into regressions, fixes or unchanged; a sampled pair whose
/// rate or verdict changed is returned with its p-value, for [`sampled`] to sort once
/// every case is tested.
fn verdicts(b: &Unit, h: &Unit, alpha: f64, looks: u32, out: &mut Comparison) -> Option<Change> {
    let (bo, ho) = (outcome(b), outcome(h));
    let change = |p_value: Option<f64>, detectable_drop| Change {
        case: case_ref(h),
        base: bo,
        head: ho,
        p_value,
        detectable_drop,
        base_rates: p_value.and_then(|_| PassRates::of(&b.tally)),
        head_rates: p_value.and_then(|_| PassRates::of(&h.tally)),
    };
    if bo.samples <= 1 && ho.samples <= 1 {
        match (ok(bo.verdict), ok(ho.verdict)) {
            (true, false) => out.regressions.push(change(None, None)),
            (false, true) => out.fixes.push(change(None, None)),
            _ => out.unchanged += 1,
        }
        return None;
    }
    // Rates compared without division: passed_b / n_b against passed_h / n_h.
    let before = u64::from(bo.passed) * u64::from(ho.samples);
    let after = u64::from(ho.passed) * u64::from(bo.samples);
    if before == after && bo.verdict == ho.verdict {
        out.unchanged += 1;
        return None;
    }
    let p = fisher_mid_p(
        bo.passed,
        bo.samples - bo.passed,
        ho.passed,
        ho.samples - ho.passed,
    );
    let drop = sampled_drop(bo, ho, alpha, looks, POWER);
    Some(change(Some((p * f64::from(looks)).min(1.0)), drop))
}

/// The smallest drop from the base's pass rate a test at `alpha / looks` would see
/// `power` of the time with the samples of `base` and `head`.
pub(super) fn sampled_drop(
    base: Outcome,
    head: Outcome,
    alpha: f64,
    looks: u32,
    power: f64,
) -> Option<f64> {
    let base_rate = if base.samples == 0 {
        0.0
    } else {
        f64::from(base.passed) / f64::from(base.samples)
    };
    detectable_drop(
        base.samples,
        head.samples,
        base_rate,
        alpha / f64::from(looks.max(1)),
        power,
    )
}

/// Sorts the sampled changes: Holm's step-down at `alpha` over every sampled case
/// compared (`unchanged` more had p = 1) makes regressions and fixes; the other
/// Benjamini–Hochberg discoveries are probably changed; the rest are within chance.
fn sampled(changes: Vec<Change>, unchanged: usize, alpha: f64, out: &mut Comparison) {
    let p_values: Vec<f64> = changes
        .iter()
        .map(|c| c.p_value.unwrap_or(1.0))
        .chain(std::iter::repeat_n(1.0, unchanged))
        .collect();
    let (strict, discovered) = (holm(&p_values, alpha), benjamini_hochberg(&p_values, alpha));
    for (i, change) in changes.into_iter().enumerate() {
        let before = u64::from(change.base.passed) * u64::from(change.head.samples);
        let after = u64::from(change.head.passed) * u64::from(change.base.samples);
        if strict[i] && after < before {
            out.regressions.push(change);
        } else if strict[i] && after > before {
            out.fixes.push(change);
        } else if discovered[i] && after != before {
            out.probably_changed.push(change);
        } else {
            out.within_chance.push(change);
        }
    }
}

/// The unit's metric, averaged over what reported it; `None` when nothing did.
pub(super) fn measure(u: &Unit, metric: Metric) -> Option<f64> {
    let interactions = || u.samples.iter().flat_map(|s| &s.interactions);
    let values: Vec<f64> = match metric {
        Metric::Latency => {
            let durations: Vec<f64> = interactions().map(|i| i.duration).collect();
            if durations.is_empty() {
                u.samples.iter().map(|s| s.duration).collect()
            } else {
                durations
            }
        }
        Metric::TimeToFirstToken => interactions()
            .filter_map(|i| i.time_to_first_token)
            .collect(),
        Metric::Tokens => u
            .samples
            .iter()
            .filter_map(|s| {
                let counts: Vec<u64> = s
                    .interactions
                    .iter()
                    .filter_map(|i| i.usage)
                    .map(|u| u.input.unwrap_or(0) + u.output.unwrap_or(0))
                    .collect();
                (!counts.is_empty()).then(|| counts.iter().sum::<u64>() as f64)
            })
            .collect(),
        Metric::Cost => u
            .samples
            .iter()
            .filter_map(|s| {
                let costs: Vec<f64> = s.interactions.iter().filter_map(|i| i.cost).collect();
                (!costs.is_empty()).then(|| costs.iter().sum::<f64>())
            })
            .collect(),
    };
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The metrics of a pair that moved beyond their thresholds, either way. An errored
/// unit's timings say how it failed, not how fast it is: they are not compared.
fn metrics(b: &Unit, h: &Unit, t: &Thresholds, out: &mut Vec<MetricChange>) {
    if b.verdict == Status::Errored || h.verdict == Status::Errored {
        return;
    }
    for (metric, limit) in [
        (Metric::Latency, t.latency_percent),
        (Metric::TimeToFirstToken, t.latency_percent),
        (Metric::Tokens, t.tokens_percent),
        (Metric::Cost, t.cost_percent),
    ] {
        let (Some(base), Some(head)) = (measure(b, metric), measure(h, metric)) else {
            continue;
        };
        if base <= 0.0 {
            continue;
        }
        let timing = matches!(metric, Metric::Latency | Metric::TimeToFirstToken);
        if timing && (head - base).abs() < LATENCY_FLOOR_SECONDS {
            continue;
        }
        let percent = (head - base) / base * 100.0;
        if percent.abs() > limit {
            out.push(MetricChange {
                case: case_ref(h),
                metric,
                base,
                head,
                percent,
                worse: head > base,
            });
        }
    }
}

/// The verdict and reason of every gist check of the unit's first sample that has
/// one, by where the check is written.
fn reasons(u: &Unit) -> BTreeMap<String, (Status, String)> {
    let mut out = BTreeMap::new();
    for sample in &u.samples {
        for check in sample.interactions.iter().flat_map(|i| &i.checks) {
            if !check.name.ends_with("gist") {
                continue;
            }
            let reason = match &check.outcome {
                CheckOutcome::Evaluated { evaluation, .. } => evaluation
                    .metadata
                    .get("reason")
                    .and_then(|r| r.as_str())
                    .map(str::to_owned),
                CheckOutcome::Errored { message } => Some(message.clone()),
                _ => None,
            };
            if let Some(reason) = reason {
                out.entry(check.path.clone())
                    .or_insert((check.status, reason));
            }
        }
    }
    out
}

fn judge(b: &Unit, h: &Unit, out: &mut Vec<JudgeChange>) {
    let before = reasons(b);
    for (check, (head_status, head_reason)) in reasons(h) {
        let Some((base_status, base_reason)) = before.get(&check) else {
            continue;
        };
        if *base_reason != head_reason || *base_status != head_status {
            out.push(JudgeChange {
                case: case_ref(h),
                check,
                base_status: *base_status,
                head_status,
                base_reason: base_reason.clone(),
                head_reason,
            });
        }
    }
}
