//! `prill cassettes check DIR [PATHS]`: which recordings of a cassette folder still
//! answer the cases as they are now, and what changed since the others were recorded
//! (`docs/cassettes.md`).
//!
//! Every exchange a case records keeps what the case was made of then (its
//! [`Under`]: a hash of its inputs, tools, simulated user, tool program and each of the
//! program's files, and checks). The check pairs each case of the plan with its
//! recordings, by its id and failing that by its name (a case whose inputs changed has
//! a new id), and compares.
//!
//! ```
//! use prill_app::cassette_check::{Status, check_cassettes};
//! use prill_spec::plan::Plan;
//!
//! let dir = tempfile::tempdir()?;
//! let check = check_cassettes(dir.path(), &Plan::new(Vec::new()))?;
//! assert!(check.cases.is_empty() && check.orphans.is_empty());
//! assert!(check.passes());
//! # let _ = Status::Fresh;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use prill_connect::cassette::{Cassette, CassetteError, slug};
use prill_spec::plan::under::{Change, Under};
use prill_spec::plan::{Case, Plan};
use serde::Serialize;

/// The version of [`CassetteCheck`]'s JSON (`prill cassettes check --format json`).
pub const CHECK_VERSION: u32 = 1;

/// What `prill cassettes check` found.
#[derive(Debug, Clone, Serialize)]
pub struct CassetteCheck {
    /// The version of this JSON: [`CHECK_VERSION`].
    pub version: u32,
    /// The cassette folder.
    pub dir: PathBuf,
    /// Each case of the plan, in plan order.
    pub cases: Vec<CaseRecording>,
    /// Recordings of cases the plan no longer has (neither their id nor their name).
    pub orphans: Vec<Orphan>,
}

impl CassetteCheck {
    /// Whether every case has recordings that still answer it: none stale or missing.
    pub fn passes(&self) -> bool {
        self.cases
            .iter()
            .all(|c| !matches!(c.status, Status::Stale | Status::Missing))
    }

    /// How many cases have each status.
    pub fn counts(&self) -> BTreeMap<Status, usize> {
        let mut counts = BTreeMap::new();
        for case in &self.cases {
            *counts.entry(case.status).or_insert(0) += 1;
        }
        counts
    }
}

/// One case and its recordings.
#[derive(Debug, Clone, Serialize)]
pub struct CaseRecording {
    /// The case's name.
    pub name: String,
    /// Its id now.
    pub case_id: String,
    /// What its recordings are worth.
    pub status: Status,
    /// The files that hold its recordings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PathBuf>,
    /// The id the recordings were made for, when they were found by the case's name
    /// (its inputs changed, and with them its id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_as: Option<String>,
    /// What changed since they were recorded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
}

/// What a case's recordings are worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Recorded under the case as it is.
    Fresh,
    /// Only the checks changed: the recorded answers are judged by the new ones.
    Rechecked,
    /// Recorded by a Prill that did not keep what a recording was made under: it cannot
    /// be told.
    Unknown,
    /// Recorded under other inputs, tools, simulated user or tool program: a replay may
    /// not answer it, or answers what the agent said to something else.
    Stale,
    /// No recording: a replay of the case errors.
    Missing,
}

impl Status {
    /// Its name, as in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Status::Fresh => "fresh",
            Status::Rechecked => "rechecked",
            Status::Stale => "stale",
            Status::Unknown => "unknown",
            Status::Missing => "missing",
        }
    }
}

/// Recordings of a case the plan does not have.
#[derive(Debug, Clone, Serialize)]
pub struct Orphan {
    /// The file.
    pub file: PathBuf,
    /// The id of the case that recorded them.
    pub case_id: String,
}

/// The recordings of one case id in one folder.
#[derive(Default)]
struct Recorded {
    files: BTreeSet<PathBuf>,
    /// Each distinct set of parts its exchanges were recorded under; `None` for an
    /// exchange that kept none.
    unders: Vec<Option<Under>>,
    /// The slug of the case's name, from its file's name.
    slug: String,
}

/// Checks the recordings in `dir` against the cases of `plan`.
pub fn check_cassettes(dir: &Path, plan: &Plan) -> Result<CassetteCheck, CassetteError> {
    let mut recorded = read(dir)?;
    let ids: BTreeSet<&str> = plan.cases.iter().map(|c| &*c.id).collect();
    let mut claimed: BTreeSet<String> = BTreeSet::new();
    let mut cases = Vec::with_capacity(plan.cases.len());
    for case in &plan.cases {
        let now = Under::of(case);
        let found = match recorded.get(&*case.id) {
            Some(r) => Some((None, r)),
            None => by_name(&recorded, case, &ids).map(|(id, r)| (Some(id.to_owned()), r)),
        };
        let Some((recorded_as, r)) = found else {
            cases.push(entry(case, Status::Missing, Vec::new(), None, Vec::new()));
            continue;
        };
        claimed.insert(recorded_as.clone().unwrap_or_else(|| case.id.to_string()));
        let (status, changes) = judge(&r.unders, &now, recorded_as.is_some());
        let files = r.files.iter().cloned().collect();
        cases.push(entry(case, status, changes, recorded_as, files));
    }
    recorded.retain(|id, _| !claimed.contains(id));
    let orphans = recorded
        .into_iter()
        .flat_map(|(id, r)| {
            r.files.into_iter().map(move |file| Orphan {
                file,
                case_id: id.clone(),
            })
        })
        .collect();
    Ok(CassetteCheck {
        version: CHECK_VERSION,
        dir: dir.to_owned(),
        cases,
        orphans,
    })
}

fn entry(
    case: &Case,
    status: Status,
    changes: Vec<Change>,
    recorded_as: Option<String>,
    files: Vec<PathBuf>,
) -> CaseRecording {
    CaseRecording {
        name: case.name.to_string(),
        case_id: case.id.to_string(),
        status,
        files,
        recorded_as,
        changes,
    }
}

/// The recordings of `dir` by the id of the case that made them (those made outside
/// any case left out).
fn read(dir: &Path) -> Result<BTreeMap<String, Recorded>, CassetteError> {
    let mut by_id: BTreeMap<String, Recorded> = BTreeMap::new();
    for (file, cassette) in Cassette::read_files(dir)? {
        for exchange in cassette.exchanges() {
            let Some(id) = &exchange.request.case else {
                continue;
            };
            let r = by_id.entry(id.clone()).or_default();
            if r.files.insert(file.clone()) && r.slug.is_empty() {
                r.slug = file_slug(&file);
            }
            if !r.unders.contains(&exchange.under) {
                r.unders.push(exchange.under.clone());
            }
        }
    }
    Ok(by_id)
}

/// The slug in a case file's name: `capital-of-france` of
/// `capital-of-france-3f2a9c0d1e2f.jsonl`.
fn file_slug(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    match stem.rsplit_once('-') {
        Some((slug, _)) => slug.to_owned(),
        None => String::new(),
    }
}

/// The recordings made for `case`'s name under an id no case of the plan has now.
fn by_name<'r>(
    recorded: &'r BTreeMap<String, Recorded>,
    case: &Case,
    ids: &BTreeSet<&str>,
) -> Option<(&'r str, &'r Recorded)> {
    let slug = slug(&case.name);
    recorded
        .iter()
        .find(|(id, r)| r.slug == slug && !ids.contains(id.as_str()))
        .map(|(id, r)| (id.as_str(), r))
}

/// The status of recordings made under `unders`, against the case made of `now`:
/// the worst of them, with every change they show. Found by name only, they are stale
/// even when no part they kept differs (they were made by an older Prill).
fn judge(unders: &[Option<Under>], now: &Under, by_name: bool) -> (Status, Vec<Change>) {
    let mut status = Status::Fresh;
    let mut changes: Vec<Change> = Vec::new();
    for under in unders {
        let Some(under) = under else {
            status = status.max(Status::Unknown);
            continue;
        };
        for change in under.changes(now) {
            status = status.max(if change.stales() {
                Status::Stale
            } else {
                Status::Rechecked
            });
            if !changes.contains(&change) {
                changes.push(change);
            }
        }
    }
    if by_name {
        status = Status::Stale;
    }
    (status, changes)
}
