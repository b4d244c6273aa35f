//! Stored runs rebuilt into the engine's events, so that every reporter can write its
//! report from a file as if the run were happening: one run ([`StoredRun::events`],
//! `prill report --from`) or the shards of one suite made one run again ([`merge`],
//! `prill report merge`).
//!
//! A run that did not finish (killed, its file ending without `run_finished`) gets the
//! `run_finished` it never wrote: the units that finished, the planned units that did
//! not counted as skipped, *cancelled*, and as its duration the longest unit's (a
//! lower bound: the file does not say when the run was killed).
//!
//! Shards belong together when their `run` lines name the same suite
//! ([`Suite`]'s fingerprint: a hash of the units selected before
//! the partition); together they must cover every part `1/n` to `n/n` of one kind of
//! partition, each once. The merged run has every shard's units in the order of its
//! parts, summed totals, and the longest shard's duration as its wall time (the shards
//! ran side by side).
//!
//! ```
//! use prill_report::stored::StoredRun;
//! use prill_run::Event;
//!
//! // A run killed after it started: the rebuilt stream says it was cancelled.
//! let run = StoredRun::parse("{\"schema_version\":1,\"event\":\"run_started\",\"units\":2}\n")?;
//! let events = run.events()?;
//! let Some(Event::RunFinished(summary)) = events.last() else { unreachable!() };
//! assert!(summary.cancelled);
//! assert_eq!(summary.skipped, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use prill_run::select::{Partition, PartitionKind};
use prill_run::{Event, UnitReport};

use crate::format::{Line, Record, RevertError, RunInfo, SCHEMA_VERSION, Suite, Unit};
use crate::stored::StoredRun;

impl StoredRun {
    /// The run's events, in the order they happened, ending with `run_finished`: the
    /// file's own, or, for a run that did not finish, one that says it was cancelled.
    /// A JSON report becomes `run_started`, a `unit_finished` per unit and its summary.
    pub fn events(&self) -> Result<Vec<Event>, RevertError> {
        let mut events = Vec::with_capacity(self.lines.len() + 2);
        if self.lines.is_empty() {
            for unit in &self.units {
                events.push(Event::UnitFinished(UnitReport::try_from(unit)?));
            }
        } else {
            for line in &self.lines {
                match line.to_event()? {
                    Some(Event::RunStarted { .. } | Event::RunFinished(_)) | None => {}
                    Some(event) => events.push(event),
                }
            }
        }
        let planned = self.planned.unwrap_or(self.units.len() as u64);
        events.insert(
            0,
            Event::RunStarted {
                units: usize::try_from(planned).unwrap_or(usize::MAX),
            },
        );
        events.push(Event::RunFinished(self.run_summary()?));
        Ok(events)
    }

    /// The run's totals: its `run_finished`, or, when it has none, the units that
    /// finished, the rest of the planned ones skipped, cancelled.
    pub fn run_summary(&self) -> Result<prill_run::Summary, RevertError> {
        if let Some(summary) = &self.summary {
            return prill_run::Summary::try_from(summary);
        }
        let mut summary = prill_run::Summary {
            cancelled: true,
            ..prill_run::Summary::default()
        };
        let mut longest = 0.0f64;
        for unit in &self.units {
            summary.add(unit.verdict.into());
            longest = longest.max(unit.duration);
        }
        let planned = self.planned.unwrap_or(self.units.len() as u64);
        let left = usize::try_from(planned)
            .unwrap_or(usize::MAX)
            .saturating_sub(self.units.len());
        summary.skipped += left;
        summary.duration =
            Duration::try_from_secs_f64(longest).map_err(|_| RevertError::Duration(longest))?;
        Ok(summary)
    }

    /// How many of the units it planned finished, of how many; `None` when it finished.
    pub fn unfinished(&self) -> Option<(usize, u64)> {
        (!self.finished()).then(|| {
            let planned = self.planned.unwrap_or(self.units.len() as u64);
            (self.units.len(), planned)
        })
    }
}

/// One shard to merge: a file and the run it holds.
#[derive(Debug, Clone)]
pub struct Shard {
    /// Where it was read from, to name it in errors.
    pub path: PathBuf,
    /// The run.
    pub run: StoredRun,
}

/// The shards of one suite as one run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Merged {
    /// The merged run's `run` line: a new id, `command` `merge`, the earliest shard's
    /// start, the first part's commit and settings without the partition.
    pub info: RunInfo,
    /// Its events, from `run_started` to `run_finished`.
    pub events: Vec<Event>,
    /// Its totals (also the last event's).
    pub summary: prill_run::Summary,
    /// What the user should know but does not stop the merge: shards that did not
    /// finish, shards of different commits.
    pub warnings: Vec<String>,
}

impl Merged {
    /// The merged run as a stored run, as [`StoredRun::read`] would read it back from
    /// its `--jsonl`: for what reads stored runs (an HTML page, a comparison).
    pub fn stored(&self) -> StoredRun {
        let mut lines = vec![Line {
            schema_version: SCHEMA_VERSION,
            record: Record::Run(self.info.clone()),
        }];
        lines.extend(self.events.iter().map(Line::from));
        let planned = self.events.iter().find_map(|e| match e {
            Event::RunStarted { units } => Some(*units as u64),
            _ => None,
        });
        StoredRun {
            info: Some(self.info.clone()),
            planned,
            units: self
                .events
                .iter()
                .filter_map(|e| match e {
                    Event::UnitFinished(unit) => Some(Unit::from(unit)),
                    _ => None,
                })
                .collect(),
            summary: Some((&self.summary).into()),
            lines,
            torn: false,
        }
    }
}

/// Why shards could not be merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// Nothing to merge.
    #[error(
        "no shard was given; name the JSON Lines file of each part (`prill run --shard i/n --jsonl FILE`)"
    )]
    NoShards,
    /// A file without a `run` line, or whose `run` line names no suite.
    #[error(
        "{path}: the file does not say which suite it ran (no `run` line with a suite); merge the files `prill run --jsonl` writes, or the runs kept in .prill/runs"
    )]
    NoSuite {
        /// The file.
        path: PathBuf,
    },
    /// One run given twice.
    #[error("{path} is the same run as {first} (run {id}); give each shard once")]
    Twice {
        /// The second file.
        path: PathBuf,
        /// The first.
        first: PathBuf,
        /// The run's id.
        id: String,
    },
    /// A file of another suite.
    #[error(
        "{path} is a run of another suite (fingerprint {found}) than {first} (fingerprint {expected}): the files, filters or tags differ; merge only the shards of one run of the suite"
    )]
    OtherSuite {
        /// The odd file out.
        path: PathBuf,
        /// Its fingerprint.
        found: String,
        /// A file of the suite the others share.
        first: PathBuf,
        /// Their fingerprint.
        expected: String,
    },
    /// A partition that does not read, or not of the same kind and count as the others.
    #[error(
        "{path} is part {found} of its suite but {first} is part {expected}: the shards must split the suite the same way (`--shard i/n` with one n)"
    )]
    OtherSplit {
        /// The odd file out.
        path: PathBuf,
        /// Its partition (`whole` when it has none).
        found: String,
        /// The first file.
        first: PathBuf,
        /// The first file's partition.
        expected: String,
    },
    /// Two files of the same part.
    #[error("{path} and {first} are both part {part}; give each part once")]
    SamePart {
        /// The second file.
        path: PathBuf,
        /// The first.
        first: PathBuf,
        /// The part.
        part: String,
    },
    /// Parts missing.
    #[error(
        "the shards cover {given} of the {count} parts of the suite: {} missing; merge every part",
        missing.join(", ")
    )]
    Missing {
        /// The missing parts, `i/n` (`count:i/n` for a count partition).
        missing: Vec<String>,
        /// How many parts were given.
        given: usize,
        /// How many parts there are.
        count: u32,
    },
    /// A record that cannot become an event.
    #[error("{path}: {source}")]
    Revert {
        /// The file.
        path: PathBuf,
        /// Why.
        source: RevertError,
    },
}

/// A shard that passed the checks: its suite, its part, and the file.
struct Part<'a> {
    shard: &'a Shard,
    info: &'a RunInfo,
    suite: &'a Suite,
    partition: Option<Partition>,
}

/// The shards of one suite as one run; see the [module](self) for what is checked.
pub fn merge(shards: &[Shard]) -> Result<Merged, MergeError> {
    let parts = checked(shards)?;
    let mut events = Vec::new();
    let mut summary = prill_run::Summary::default();
    let mut warnings = Vec::new();
    for part in &parts {
        let revert = |source| MergeError::Revert {
            path: part.shard.path.clone(),
            source,
        };
        let shard = part.shard.run.events().map_err(revert)?;
        let totals = part.shard.run.run_summary().map_err(revert)?;
        if let Some((finished, planned)) = part.shard.run.unfinished() {
            warnings.push(format!(
                "{} did not finish ({finished} of {planned} units finished); the merged run is cancelled",
                part.shard.path.display()
            ));
        }
        events.extend(
            shard
                .into_iter()
                .filter(|e| !matches!(e, Event::RunStarted { .. } | Event::RunFinished(_))),
        );
        summary.passed += totals.passed;
        summary.failed += totals.failed;
        summary.errored += totals.errored;
        summary.inconclusive += totals.inconclusive;
        summary.skipped += totals.skipped;
        summary.cancelled |= totals.cancelled;
        summary.stopped |= totals.stopped;
        summary.duration = summary.duration.max(totals.duration);
    }
    let first = &parts[0];
    let commits: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.info.git.as_ref().map(|g| g.commit.as_str()))
        .collect();
    if commits.windows(2).any(|w| w[0] != w[1]) {
        warnings.push(
            "the shards ran on different commits; the merged run names the first part's".to_owned(),
        );
    }
    let planned: u64 = parts
        .iter()
        .map(|p| {
            p.shard
                .run
                .planned
                .unwrap_or(p.shard.run.units.len() as u64)
        })
        .sum();
    if planned != first.suite.units {
        warnings.push(format!(
            "the parts planned {planned} units but the suite has {}; a part may have run with other settings (--rerun-failed, --fail-fast)",
            first.suite.units
        ));
    }
    let units = usize::try_from(first.suite.units).unwrap_or(usize::MAX);
    events.insert(0, Event::RunStarted { units });
    events.push(Event::RunFinished(summary));
    let mut settings = first.info.settings.clone();
    settings.partition = None;
    let mut info = RunInfo::starting("merge", first.info.git.clone(), settings);
    if let Some(earliest) = parts.iter().map(|p| &p.info.started_at).min() {
        info.started_at = earliest.clone();
    }
    Ok(Merged {
        info,
        events,
        summary,
        warnings,
    })
}

/// The shards in the order of their parts, once each checked to be of one suite and to
/// cover it.
fn checked(shards: &[Shard]) -> Result<Vec<Part<'_>>, MergeError> {
    let mut parts = Vec::with_capacity(shards.len());
    let mut ids: BTreeMap<&str, &PathBuf> = BTreeMap::new();
    for shard in shards {
        let no_suite = || MergeError::NoSuite {
            path: shard.path.clone(),
        };
        let info = shard.run.info.as_ref().ok_or_else(no_suite)?;
        let suite = info.settings.suite.as_ref().ok_or_else(no_suite)?;
        if let Some(first) = ids.insert(&info.id, &shard.path) {
            return Err(MergeError::Twice {
                path: shard.path.clone(),
                first: first.clone(),
                id: info.id.clone(),
            });
        }
        let partition = info
            .settings
            .partition
            .as_deref()
            .and_then(|p| Partition::parse(p).ok());
        parts.push(Part {
            shard,
            info,
            suite,
            partition,
        });
    }
    let Some(expected) = common_fingerprint(&parts) else {
        return Err(MergeError::NoShards);
    };
    let reference = parts
        .iter()
        .find(|p| p.suite.fingerprint == expected)
        .map(|p| p.shard.path.clone())
        .unwrap_or_default();
    if let Some(odd) = parts.iter().find(|p| p.suite.fingerprint != expected) {
        return Err(MergeError::OtherSuite {
            path: odd.shard.path.clone(),
            found: odd.suite.fingerprint.clone(),
            first: reference,
            expected,
        });
    }
    covered(&parts)?;
    parts.sort_by_key(|p| p.partition.map_or(0, |p| p.index));
    Ok(parts)
}

/// The fingerprint most shards share (the first file's on a tie).
fn common_fingerprint(parts: &[Part<'_>]) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for part in parts {
        match counts
            .iter_mut()
            .find(|(f, _)| *f == part.suite.fingerprint)
        {
            Some((_, n)) => *n += 1,
            None => counts.push((&part.suite.fingerprint, 1)),
        }
    }
    let most = counts.iter().map(|(_, n)| *n).max()?;
    counts
        .into_iter()
        .find(|(_, n)| *n == most)
        .map(|(f, _)| f.to_owned())
}

/// `i/n`, or `count:i/n` for a count partition, or `whole` for none.
fn part_name(partition: Option<Partition>) -> String {
    match partition {
        None => "whole".to_owned(),
        Some(p) if p.kind == PartitionKind::Count => format!("count:{}/{}", p.index, p.count),
        Some(p) => format!("{}/{}", p.index, p.count),
    }
}

/// Checks that `parts` split the suite one way and cover each part once.
fn covered(parts: &[Part<'_>]) -> Result<(), MergeError> {
    let first = &parts[0];
    let split = |p: &Part<'_>| p.partition.map(|p| (p.kind, p.count));
    for part in &parts[1..] {
        if split(part) != split(first) {
            return Err(MergeError::OtherSplit {
                path: part.shard.path.clone(),
                found: part_name(part.partition),
                first: first.shard.path.clone(),
                expected: part_name(first.partition),
            });
        }
    }
    let mut seen: BTreeMap<u32, &PathBuf> = BTreeMap::new();
    for part in parts {
        let index = part.partition.map_or(1, |p| p.index);
        if let Some(other) = seen.insert(index, &part.shard.path) {
            return Err(MergeError::SamePart {
                path: part.shard.path.clone(),
                first: other.clone(),
                part: part_name(part.partition),
            });
        }
    }
    let Some(partition) = first.partition else {
        return Ok(());
    };
    let missing: Vec<String> = (1..=partition.count)
        .filter(|i| !seen.contains_key(i))
        .map(|index| part_name(Some(Partition { index, ..partition })))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(MergeError::Missing {
            missing,
            given: seen.len(),
            count: partition.count,
        })
    }
}
