//! `prill compare --top-up`: more samples of the head for the sampled cases the
//! comparison could not decide, wave after wave, until each decides or its cap is
//! reached: a group-sequential two-sample test, not a re-run of everything.
//!
//! A case is undecided when it is neither a regression nor a fix and the smallest drop
//! its samples could show ([`crate::compare::Change::detectable_drop`]) is above the
//! plan's `drop`. Each wave draws at most `wave` more samples of every undecided case;
//! after it the whole comparison is made again, and a case stops once it is a
//! regression or a fix, once a drop of `drop` would be seen, or at `max` extra samples.
//!
//! Looking again after each wave would inflate the error rate if each look were tested
//! at `alpha`. The test is spread over the plan's looks instead (the head's own
//! samples, then each wave): every p-value is multiplied by the number of looks
//! (Bonferroni), from the first look on. Under no change, the chance that any look's
//! p-value falls below `alpha / looks` is at most `alpha`, whenever the test stops;
//! Holm's step-down over the cases then holds the whole comparison to `alpha`.
//!
//! [`TopUp`] is the procedure without the running: the caller draws each
//! [`TopUp::next_wave`] (the app runs the samples and keeps them as a `top-up` run)
//! and hands the samples back with [`TopUp::add`].
//!
//! ```
//! use prill_history::compare::TopUpPlan;
//!
//! let plan = TopUpPlan { max: 40, wave: 20, drop: 0.2 };
//! // The head's own samples, then two waves: each p-value is multiplied by 3.
//! assert_eq!(plan.looks(), 3);
//! assert_eq!(plan, TopUpPlan::default());
//! assert!(plan.check().is_ok());
//! ```

use std::collections::BTreeMap;

use prill_report::format::Unit;
use serde::Serialize;

use super::model::{
    CaseRef, Comparison, Outcome, POWER, Side, Thresholds, case_ref, compare, outcome,
    sampled_drop, sampled_pairs,
};

/// The power below which drawing more samples of a case is futile: even with every
/// sample the cap allows, the test would see the drop seen so far (or the plan's
/// `drop`, if larger) less than this often.
pub const FUTILE_POWER: f64 = 0.2;

/// How far `--top-up` may go.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TopUpPlan {
    /// The most samples added to any one case.
    pub max: u32,
    /// The most samples added to a case in one wave.
    pub wave: u32,
    /// A case whose samples would show a drop this large (80% of the time) is decided:
    /// a pass-rate fraction in (0, 1).
    pub drop: f64,
}

impl Default for TopUpPlan {
    /// At most 40 more samples a case, 20 a wave, until a 20-point drop would be seen.
    fn default() -> TopUpPlan {
        TopUpPlan {
            max: 40,
            wave: 20,
            drop: 0.2,
        }
    }
}

/// A [`TopUpPlan`] that cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TopUpPlanError {
    /// No sample could be added.
    #[error("--top-up adds at most {max} sample(s) a case, {wave} a wave: both must be at least 1")]
    Empty {
        /// The cap given.
        max: u32,
        /// The wave given.
        wave: u32,
    },
    /// The drop is not a fraction.
    #[error(
        "--top-up-drop must be above 0 and below 1 (a drop in pass rate, 0.2 = 20 points), not {0}"
    )]
    Drop(f64),
}

impl TopUpPlan {
    /// How many waves it may draw: `max / wave`, rounded up.
    pub fn waves(&self) -> u32 {
        self.max.div_ceil(self.wave.max(1))
    }

    /// How many looks each case's test is spread over: the head's own samples and each
    /// wave.
    pub fn looks(&self) -> u32 {
        1 + self.waves()
    }

    /// Whether the plan can run.
    pub fn check(&self) -> Result<(), TopUpPlanError> {
        if self.max == 0 || self.wave == 0 {
            return Err(TopUpPlanError::Empty {
                max: self.max,
                wave: self.wave,
            });
        }
        if !(self.drop > 0.0 && self.drop < 1.0) {
            return Err(TopUpPlanError::Drop(self.drop));
        }
        Ok(())
    }
}

/// Why a topped-up case stopped drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// It became a regression or a fix.
    Decided,
    /// Its samples would now show a drop of the plan's `drop`: no regression that
    /// large, at the stated power.
    Detectable,
    /// It reached the plan's `max` extra samples undecided.
    Cap,
    /// More samples of the head could hardly decide it: even with every sample the cap
    /// allows, the test would see the drop seen so far (or the plan's `drop`, if
    /// larger) less than [`FUTILE_POWER`] of the time, because the base has too few
    /// samples. Take more samples of the base.
    Futile,
    /// Its samples could not be drawn: its case is not among the files loaded now (a
    /// file moved, or its inputs edited since the head ran).
    Unavailable,
    /// The top-up was stopped (interrupted, or a wave could not run) before it ended.
    Stopped,
}

impl Ended {
    /// In words.
    pub fn describe(self) -> &'static str {
        match self {
            Ended::Decided => "decided",
            Ended::Detectable => "a drop of the tolerance would now be seen",
            Ended::Cap => "still undecided at the cap",
            Ended::Futile => {
                "the base has too few samples: no more samples of the head could decide it"
            }
            Ended::Unavailable => "not among the cases loaded now",
            Ended::Stopped => "stopped before it ended",
        }
    }
}

/// A case `--top-up` drew more samples of.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToppedUp {
    /// The unit.
    pub case: CaseRef,
    /// Samples added to the head.
    pub samples: u32,
    /// Of them, how many passed.
    pub passed: u32,
    /// The waves that drew them.
    pub waves: u32,
    /// Why it stopped.
    pub ended: Ended,
}

/// What `--top-up` did, in the comparison ([`Comparison::top_up`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopUpReport {
    /// The plan.
    pub plan: TopUpPlan,
    /// The looks each case's test was spread over ([`TopUpPlan::looks`]).
    pub looks: u32,
    /// The waves drawn.
    pub waves: u32,
    /// The `top-up` runs kept in the history, one a wave.
    pub runs: Vec<String>,
    /// The cases topped up, in the comparison's order (file, name, connection).
    pub cases: Vec<ToppedUp>,
}

/// Samples to draw of one unit in a wave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draw {
    /// The unit.
    pub case: CaseRef,
    /// How many samples.
    pub samples: u32,
    /// The index of the first: after every sample the head and earlier waves took, so
    /// that caches, cassettes and agents that draw by the index see new samples.
    pub first_sample: u32,
}

/// The state of one topped-up case.
#[derive(Debug, Clone)]
struct State {
    topped: ToppedUp,
    /// The next sample's index.
    next: u32,
    /// Whether it still draws.
    open: bool,
}

/// `prill compare --top-up` under way: the two runs, and the samples added so far.
#[derive(Debug, Clone)]
pub struct TopUp {
    base: Side,
    head: Side,
    thresholds: Thresholds,
    plan: TopUpPlan,
    waves: u32,
    runs: Vec<String>,
    cases: BTreeMap<Key, State>,
}

/// A side's pass rate (0 with no samples).
fn rate(o: Outcome) -> f64 {
    if o.samples == 0 {
        0.0
    } else {
        f64::from(o.passed) / f64::from(o.samples)
    }
}

/// A unit's case id, connection and target.
type Key = (String, String, String);

fn key(case: &CaseRef) -> Key {
    (
        case.case_id.clone(),
        case.connection.clone(),
        case.target.clone(),
    )
}

/// The first sample index that no sample of `unit` can have had: past every sample it
/// kept and every one its gate could have started.
fn first_free(unit: &Unit) -> u32 {
    let kept = unit.samples.iter().map(|s| s.index.saturating_add(1)).max();
    let ratio = unit
        .success_ratio
        .as_deref()
        .and_then(|r| r.split_once('/'))
        .and_then(|(_, of)| of.trim().parse::<u32>().ok());
    let reliability = unit.reliability.as_ref().map(|r| {
        let errors = (r.max_samples.div_ceil(10)).max(3);
        r.max_samples.saturating_add(errors)
    });
    let tally = unit.tally.passed + unit.tally.failed + unit.tally.errored;
    [kept, ratio, reliability, Some(tally)]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0)
}

impl TopUp {
    /// Starts topping up `head` against `base`: every p-value is spread over the plan's
    /// looks from now on (with those of any earlier top-up of the head: its looks grow
    /// by the plan's waves).
    pub fn new(base: Side, mut head: Side, thresholds: Thresholds, plan: TopUpPlan) -> TopUp {
        // Looks taken by earlier top-ups of the head are counted too.
        head.looks = head.looks.max(1) + plan.waves();
        TopUp {
            base,
            head,
            thresholds,
            plan,
            waves: 0,
            runs: Vec::new(),
            cases: BTreeMap::new(),
        }
    }

    /// The head, with the samples added so far.
    pub fn head(&self) -> &Side {
        &self.head
    }

    /// The comparison as it stands.
    pub fn comparison(&self) -> Comparison {
        compare(&self.base, &self.head, &self.thresholds)
    }

    /// What to draw next: for each undecided case, at most `wave` samples (fewer when
    /// its cap is near). Empty when every case has decided or reached its cap, or the
    /// plan's waves are drawn: the top-up is over.
    pub fn next_wave(&mut self) -> Vec<Draw> {
        let now = self.comparison();
        let decided: Vec<Key> = now
            .regressions
            .iter()
            .chain(&now.fixes)
            .map(|c| key(&c.case))
            .collect();
        let mut draws = Vec::new();
        for (b, h) in sampled_pairs(&self.base, &self.head) {
            let case = case_ref(h);
            let k = key(&case);
            let added = match self.cases.get(&k) {
                Some(state) if !state.open => continue,
                Some(state) => state.topped.samples,
                None => 0,
            };
            let (bo, ho) = (outcome(b), outcome(h));
            let alpha = self.thresholds.alpha;
            let looks = self.head.looks;
            let drop = sampled_drop(bo, ho, alpha, looks, POWER);
            // With every sample the cap still allows, would the test see the drop seen
            // so far (or one of the plan's) even 1 time in 5? If not, drawing is futile
            // (and stopping early for futility never adds a false regression).
            let at_cap = Outcome {
                samples: ho.samples + (self.plan.max - added.min(self.plan.max)),
                ..ho
            };
            let seen = rate(bo) - rate(ho);
            let reachable = sampled_drop(bo, at_cap, alpha, looks, FUTILE_POWER)
                .is_some_and(|d| d <= self.plan.drop.max(seen));
            let ended = if decided.contains(&k) {
                Some(Ended::Decided)
            } else if drop.is_some_and(|d| d <= self.plan.drop) {
                Some(Ended::Detectable)
            } else if added >= self.plan.max || self.waves >= self.plan.waves() {
                Some(Ended::Cap)
            } else if !reachable {
                Some(Ended::Futile)
            } else {
                None
            };
            match (self.cases.get_mut(&k), ended) {
                (Some(state), Some(ended)) => {
                    state.open = false;
                    state.topped.ended = ended;
                }
                // Decided before any sample was added: not topped up, except to say
                // that more of the head could not help.
                (None, Some(Ended::Futile)) => {
                    self.cases.insert(
                        k,
                        State {
                            topped: ToppedUp {
                                case,
                                samples: 0,
                                passed: 0,
                                waves: 0,
                                ended: Ended::Futile,
                            },
                            next: 0,
                            open: false,
                        },
                    );
                }
                (None, Some(_)) => {}
                (state, None) => {
                    let next = first_free(h);
                    let state = match state {
                        Some(state) => state,
                        None => self.cases.entry(k).or_insert(State {
                            topped: ToppedUp {
                                case: case.clone(),
                                samples: 0,
                                passed: 0,
                                waves: 0,
                                ended: Ended::Stopped,
                            },
                            next,
                            open: true,
                        }),
                    };
                    draws.push(Draw {
                        case,
                        samples: self.plan.wave.min(self.plan.max - added),
                        first_sample: state.next,
                    });
                }
            }
        }
        draws
    }

    /// Adds a wave's samples (a `top-up` run of the head, or the units it ran): each
    /// unit's tally and samples go to the head's unit of the same case, connection and
    /// target. A case that was drawn and came back with no unit could not be drawn:
    /// it is [`Ended::Unavailable`].
    pub fn add(&mut self, drawn: &[Draw], wave: Side) {
        self.waves += 1;
        if let Some(info) = &wave.info {
            self.runs.push(info.id.clone());
        }
        for draw in drawn {
            let k = key(&draw.case);
            let unit = wave.units.iter().find(|u| key(&case_ref(u)) == k);
            let Some(state) = self.cases.get_mut(&k) else {
                continue;
            };
            match unit {
                Some(unit) => {
                    let o = outcome(unit);
                    state.topped.samples += o.samples;
                    state.topped.passed += o.passed;
                    state.topped.waves += 1;
                    state.next = state.next.saturating_add(draw.samples);
                }
                None => {
                    state.open = false;
                    state.topped.ended = Ended::Unavailable;
                }
            }
        }
        self.head.add(wave);
        // `Side::add` counts the wave's run among the head's top-ups; the head's looks
        // are the plan's already.
    }

    /// The comparison of the head with every sample added, and what the top-up did,
    /// with the head as topped up. A case that was still drawing (the top-up was
    /// stopped before it ended) says so.
    pub fn finish(mut self) -> (Comparison, Side) {
        if self.cases.values().any(|s| s.open) {
            // The last look: what the last wave decided, or brought to its cap.
            let _ = self.next_wave();
        }
        for state in self.cases.values_mut().filter(|s| s.open) {
            state.open = false;
            state.topped.ended = Ended::Stopped;
        }
        let mut comparison = self.comparison();
        let mut cases: Vec<ToppedUp> = self.cases.into_values().map(|s| s.topped).collect();
        cases.sort_by(|a, b| {
            (&a.case.file, &a.case.name, &a.case.connection).cmp(&(
                &b.case.file,
                &b.case.name,
                &b.case.connection,
            ))
        });
        comparison.top_up = Some(TopUpReport {
            plan: self.plan,
            looks: self.head.looks,
            waves: self.waves,
            runs: self.runs,
            cases,
        });
        (comparison, self.head)
    }
}
