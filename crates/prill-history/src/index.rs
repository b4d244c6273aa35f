//! The SQLite index of the kept runs: one row per run and one per unit, filled from the
//! JSON Lines files and brought up to date each time the history is opened
//! ([`sync`](self::sync) says how it stays right when several processes update it at
//! once, and when several files hold the same run).

mod sync;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use prill_report::format::{Interaction, Line, Record, Status, Unit};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::HistoryError;
use crate::files::Skipped;

/// The index's layout; a file with another is rebuilt.
const LAYOUT: i64 = 6;

/// `files` holds every `*.jsonl` file of the folder the index has read, with its stamp
/// and the run it holds (none for a file that holds no run), so that a file is read
/// again only when it changes. `runs` holds one row per run id, read from one file
/// ([`sync::kept_file`] picks it when several hold the same run); `units` one row per
/// unit of a run, numbered (`seq`) and unique by run and number, so that a run's units
/// are never indexed twice.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS files (
    name TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    run_id TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    file TEXT NOT NULL UNIQUE,
    started_at TEXT NOT NULL,
    command TEXT NOT NULL,
    git_commit TEXT,
    git_dirty INTEGER,
    git_branch TEXT,
    passed INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    errored INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    duration REAL,
    finished INTEGER NOT NULL,
    cost REAL,
    cassettes TEXT
);
CREATE TABLE IF NOT EXISTS units (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    name TEXT NOT NULL,
    file TEXT NOT NULL,
    connection TEXT NOT NULL,
    target TEXT NOT NULL,
    verdict TEXT NOT NULL,
    duration REAL NOT NULL,
    passed INTEGER NOT NULL,
    samples INTEGER NOT NULL,
    latency REAL,
    time_to_first_token REAL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost REAL,
    good REAL,
    bad REAL,
    UNIQUE (run_id, seq)
);
CREATE INDEX IF NOT EXISTS files_by_run ON files (run_id);
CREATE INDEX IF NOT EXISTS units_by_case ON units (case_id);
CREATE INDEX IF NOT EXISTS units_by_name ON units (name);
CREATE INDEX IF NOT EXISTS runs_by_time ON runs (started_at);
";

/// One kept run, as `prill runs` lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRow {
    /// The run's id (`20261125T001530.042Z-3f9a2c`).
    pub id: String,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// The command that made it: `run` or `assess`.
    pub command: String,
    /// The git commit it ran on, when known.
    pub commit: Option<String>,
    /// Whether the work tree was dirty.
    pub dirty: bool,
    /// The branch, when one was checked out.
    pub branch: Option<String>,
    /// Units that passed, failed, errored and were skipped.
    pub passed: u64,
    /// Units that failed.
    pub failed: u64,
    /// Units that errored.
    pub errored: u64,
    /// Units that did not run.
    pub skipped: u64,
    /// How long it took, in seconds, when it finished.
    pub duration: Option<f64>,
    /// Whether the run finished (its file ends with `run_finished`); a run that was
    /// killed keeps only its finished units.
    pub finished: bool,
    /// What its model calls cost, in US dollars, where a price was known; `None` when
    /// no call's cost was.
    pub cost: Option<f64>,
    /// The cassettes it recorded into or replayed from, as `<mode> <folder>`
    /// (`replay tests/cassettes`), when it did (`docs/cassettes.md`).
    pub cassettes: Option<String>,
}

/// One unit of a case in one kept run, as `prill runs --case` lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CaseRow {
    /// The run.
    pub run_id: String,
    /// When the run started.
    pub started_at: String,
    /// The run's commit, when known.
    pub commit: Option<String>,
    /// The case's id.
    pub case_id: String,
    /// The case's name.
    pub name: String,
    /// The file the case came from, as reports show it.
    pub file: String,
    /// The connection or provider.
    pub connection: String,
    /// `passed`, `failed`, `errored` or `skipped`.
    pub verdict: String,
    /// Samples that passed, of how many ran.
    pub passed: u32,
    /// Samples that ran.
    pub samples: u32,
    /// The unit's seconds.
    pub duration: f64,
    /// The mean seconds of its interactions, when any ran.
    pub latency: Option<f64>,
    /// The mean seconds to the first token of its interactions that report one.
    pub time_to_first_token: Option<f64>,
    /// Input tokens of all its samples, where reported.
    pub input_tokens: Option<u64>,
    /// Output tokens of all its samples, where reported.
    pub output_tokens: Option<u64>,
    /// What all its samples cost, in US dollars, where a price was known
    /// (`[prices]` of `prill.toml`).
    pub cost: Option<f64>,
}

/// A case's file as reports show it: without a leading `./`.
pub(crate) fn shown(file: &str) -> String {
    prill_run::last_run::shown_file(Path::new(file))
        .display()
        .to_string()
}

/// The history: the runs folder and its index, up to date when opened.
pub struct History {
    runs_dir: PathBuf,
    db_path: PathBuf,
    pub(crate) db: Connection,
    skipped: Vec<Skipped>,
}

impl History {
    /// Opens the index at `db_path` (created when missing) and brings it up to date with
    /// the `*.jsonl` files in `runs_dir`. An index that cannot be read is removed and
    /// rebuilt from the files; one that another process holds busy for longer than the
    /// wait (10 s) is an error, never removed. Only regular files are read, within
    /// [`MAX_RUN_FILE_BYTES`](crate::MAX_RUN_FILE_BYTES); the entries that were not
    /// read are [`History::skipped`].
    pub fn open(runs_dir: &Path, db_path: &Path) -> Result<History, HistoryError> {
        let index = |source| HistoryError::Index {
            path: db_path.to_owned(),
            source,
        };
        let mut history = match History::try_open(runs_dir, db_path) {
            Ok(history) => history,
            Err(e) if busy(&e) => return Err(index(e)),
            Err(_) => {
                remove_index(db_path)?;
                History::try_open(runs_dir, db_path).map_err(index)?
            }
        };
        match history.sync() {
            Ok(()) => Ok(history),
            Err(SyncError::Io(e)) => Err(e),
            Err(SyncError::Db(e)) if busy(&e) => Err(index(e)),
            Err(SyncError::Db(_)) => {
                drop(history);
                remove_index(db_path)?;
                let mut history = History::try_open(runs_dir, db_path).map_err(index)?;
                history.sync().map_err(|e| match e {
                    SyncError::Io(e) => e,
                    SyncError::Db(source) => index(source),
                })?;
                Ok(history)
            }
        }
    }

    fn try_open(runs_dir: &Path, db_path: &Path) -> rusqlite::Result<History> {
        if let Some(parent) = db_path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let db = Connection::open(db_path)?;
        db.busy_timeout(std::time::Duration::from_secs(10))?;
        // Not a database, or one of another layout: rebuilt. A file damaged further in
        // fails the first query that reads the damage (`sync`'s, which rebuilds it, or a
        // later one, which says so); no check reads the whole file at every open, which
        // would cost each run time in proportion to all the runs kept.
        let layout: i64 = db.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        match layout {
            LAYOUT => {}
            // New: the tables and the layout, in one transaction that holds the write
            // lock from its start, so that processes creating it at once take turns.
            0 => db.execute_batch(&format!(
                "BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {LAYOUT}; COMMIT;"
            ))?,
            _ => return Err(rusqlite::Error::InvalidQuery),
        }
        Ok(History {
            runs_dir: runs_dir.to_owned(),
            db_path: db_path.to_owned(),
            db,
            skipped: Vec::new(),
        })
    }

    /// The entries of the runs folder named `*.jsonl` that this opening did not read:
    /// what is not a regular file (a FIFO, a device, a link to one), a file over
    /// [`MAX_RUN_FILE_BYTES`](crate::MAX_RUN_FILE_BYTES), a file that could not be read.
    /// Each is a warning to show; none is in the index.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// Every kept run, newest first.
    pub fn runs(&self) -> Result<Vec<RunRow>, HistoryError> {
        let mut statement = self
            .db
            .prepare(
                "SELECT id, started_at, git_commit, git_dirty, git_branch, passed, failed, \
                 errored, skipped, duration, finished, cost, command, cassettes \
                 FROM runs ORDER BY started_at DESC, id DESC",
            )
            .map_err(|e| self.index_error(e))?;
        let rows = statement
            .query_map([], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    commit: r.get(2)?,
                    dirty: r.get::<_, Option<bool>>(3)?.unwrap_or(false),
                    branch: r.get(4)?,
                    passed: count(r, 5)?,
                    failed: count(r, 6)?,
                    errored: count(r, 7)?,
                    skipped: count(r, 8)?,
                    duration: r.get(9)?,
                    finished: r.get(10)?,
                    cost: r.get(11)?,
                    command: r.get(12)?,
                    cassettes: r.get(13)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.index_error(e))?;
        Ok(rows)
    }

    /// Every unit of the case `case` (its id, the start of its id, or its name) in the
    /// kept runs, newest first. A case named by its id is followed through edits of its
    /// inputs (which change its id): the units of the same file and name under other
    /// ids are its units too.
    pub fn case_history(&self, case: &str) -> Result<Vec<CaseRow>, HistoryError> {
        let by_id = |id: &str| id >= case && id < after_prefix(case).as_str();
        // The files and names the id stands for, then every unit of those names.
        let mut named: HashSet<(String, String)> = HashSet::new();
        {
            let mut statement = self
                .db
                .prepare(
                    "SELECT DISTINCT name, file FROM units WHERE case_id >= ?1 AND case_id < ?2",
                )
                .map_err(|e| self.index_error(e))?;
            let rows = statement
                .query_map([case, &after_prefix(case)], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map_err(|e| self.index_error(e))?;
            named.extend(rows.into_iter().map(|(name, file)| (name, shown(&file))));
        }
        let names: Vec<&str> = named.iter().map(|(name, _)| name.as_str()).collect();
        let mut statement = self
            .db
            .prepare(
                "SELECT u.run_id, r.started_at, r.git_commit, u.case_id, u.name, u.file, \
                 u.connection, u.verdict, u.passed, u.samples, u.duration, u.latency, \
                 u.time_to_first_token, u.input_tokens, u.output_tokens, u.cost \
                 FROM units u JOIN runs r ON r.id = u.run_id \
                 WHERE (u.case_id >= ?1 AND u.case_id < ?2) OR u.name = ?1 \
                 OR u.name IN (SELECT value FROM json_each(?3)) \
                 ORDER BY r.started_at DESC, r.id DESC, u.connection",
            )
            .map_err(|e| self.index_error(e))?;
        let names = serde_json::to_string(&names).unwrap_or_else(|_| "[]".to_owned());
        let rows: Vec<CaseRow> = statement
            .query_map([case, &after_prefix(case), &names], |r| {
                Ok(CaseRow {
                    run_id: r.get(0)?,
                    started_at: r.get(1)?,
                    commit: r.get(2)?,
                    case_id: r.get(3)?,
                    name: r.get(4)?,
                    file: shown(&r.get::<_, String>(5)?),
                    connection: r.get(6)?,
                    verdict: r.get(7)?,
                    passed: r.get(8)?,
                    samples: r.get(9)?,
                    duration: r.get(10)?,
                    latency: r.get(11)?,
                    time_to_first_token: r.get(12)?,
                    input_tokens: r
                        .get::<_, Option<i64>>(13)?
                        .map(|n| u64::try_from(n).unwrap_or(0)),
                    output_tokens: r
                        .get::<_, Option<i64>>(14)?
                        .map(|n| u64::try_from(n).unwrap_or(0)),
                    cost: r.get(15)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.index_error(e))?;
        Ok(rows
            .into_iter()
            .filter(|r| {
                by_id(&r.case_id)
                    || r.name == case
                    || named.contains(&(r.name.clone(), r.file.clone()))
            })
            .collect())
    }

    /// The file each of `ids` came from in the newest kept run that has it (as reports
    /// show files), for the ids of cases with the same inputs
    /// ([`prill_spec::plan::Plan::claimed`]); an id no kept run has is left out.
    pub fn claims(&self, ids: &[String]) -> Result<HashMap<String, PathBuf>, HistoryError> {
        let mut statement = self
            .db
            .prepare(
                "SELECT u.file FROM units u JOIN runs r ON r.id = u.run_id \
                 WHERE u.case_id = ?1 ORDER BY r.started_at DESC, r.id DESC LIMIT 1",
            )
            .map_err(|e| self.index_error(e))?;
        let mut claims = HashMap::new();
        for id in ids {
            let file: Option<String> = statement
                .query_row([id], |r| r.get(0))
                .optional()
                .map_err(|e| self.index_error(e))?;
            if let Some(file) = file {
                claims.insert(id.clone(), PathBuf::from(file));
            }
        }
        Ok(claims)
    }

    /// Keeps the newest `keep` runs: the older ones' files are removed, and their rows.
    /// Returns the ids removed.
    pub fn prune(&mut self, keep: usize) -> Result<Vec<String>, HistoryError> {
        let old: Vec<String> = {
            let mut statement = self
                .db
                .prepare("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT -1 OFFSET ?1")
                .map_err(|e| self.index_error(e))?;
            statement
                .query_map([keep as i64], |r| r.get(0))
                .and_then(Iterator::collect)
                .map_err(|e| self.index_error(e))?
        };
        self.remove(&old)?;
        Ok(old)
    }

    /// Removes the runs that started longer than `age` ago: their files and their rows.
    /// Returns the ids removed.
    pub fn prune_older_than(
        &mut self,
        age: std::time::Duration,
    ) -> Result<Vec<String>, HistoryError> {
        let days = age.as_secs_f64() / 86_400.0;
        let old: Vec<String> = {
            let mut statement = self
                .db
                .prepare(
                    "SELECT id FROM runs WHERE julianday(started_at) < julianday('now') - ?1 \
                     ORDER BY started_at, id",
                )
                .map_err(|e| self.index_error(e))?;
            statement
                .query_map([days], |r| r.get(0))
                .and_then(Iterator::collect)
                .map_err(|e| self.index_error(e))?
        };
        self.remove(&old)?;
        Ok(old)
    }

    /// Removes these runs: every file that holds one (a copy too, which would bring
    /// the run back), then their rows, in one transaction.
    fn remove(&mut self, ids: &[String]) -> Result<(), HistoryError> {
        if ids.is_empty() {
            return Ok(());
        }
        for id in ids {
            let names = sync::files_of(&self.db, id).map_err(|e| self.index_error(e))?;
            for name in names {
                let path = self.runs_dir.join(name);
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(HistoryError::io(&path, e)),
                }
            }
        }
        let forget = |db: &mut Connection| -> rusqlite::Result<()> {
            let tx = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
            for id in ids {
                sync::forget(&tx, id)?;
                tx.execute("DELETE FROM files WHERE run_id = ?1", [id])?;
            }
            tx.commit()
        };
        forget(&mut self.db).map_err(|e| self.index_error(e))
    }

    pub(crate) fn index_error(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Index {
            path: self.db_path.clone(),
            source,
        }
    }
}

/// Column `i` of `row`, a count or a size (stored as SQLite's signed integer).
fn count(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(row.get::<_, i64>(i)?).unwrap_or(0))
}

/// Whether `e` says that another process holds the index: waited for, then given up
/// on, never a reason to throw the index away.
fn busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Why bringing the index up to date failed: a file, or the index itself.
enum SyncError {
    Io(HistoryError),
    Db(rusqlite::Error),
}

impl From<rusqlite::Error> for SyncError {
    fn from(e: rusqlite::Error) -> SyncError {
        SyncError::Db(e)
    }
}

/// Removes the index and SQLite's files beside it.
fn remove_index(db_path: &Path) -> Result<(), HistoryError> {
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let mut path = db_path.as_os_str().to_owned();
        path.push(suffix);
        let path = PathBuf::from(path);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(HistoryError::io(&path, e)),
        }
    }
    Ok(())
}

/// What the index keeps of one run: its `run` line, a row per unit, its summary.
pub(crate) struct Parsed {
    pub(crate) run: prill_report::format::RunInfo,
    pub(crate) units: Vec<UnitRow>,
    pub(crate) summary: Option<prill_report::format::Summary>,
}

/// What the index keeps of one unit: who it is (what its columns hold), its verdict
/// and its metrics, without its samples. A recorder keeps one for every unit of a run
/// until it ends, so a row is kept small: the file, connection and target, which a
/// suite's units mostly share, are shared with the row before when they are the same.
pub(crate) struct UnitRow {
    case_id: Box<str>,
    name: Box<str>,
    file: Arc<str>,
    connection: Arc<str>,
    target: Arc<str>,
    verdict: Status,
    duration: f64,
    passed: u32,
    samples: u32,
    metrics: Metrics,
    /// A `reliability` gate's `good` and `bad`, when the unit had one.
    between: Option<(f64, f64)>,
}

/// `text`, as `previous` when that is the same text.
fn shared(text: &str, previous: Option<&Arc<str>>) -> Arc<str> {
    match previous {
        Some(p) if **p == *text => Arc::clone(p),
        _ => Arc::from(text),
    }
}

impl UnitRow {
    /// The row of `unit`, sharing what it can with `previous`, the row before it.
    pub(crate) fn of(unit: &Unit, previous: Option<&UnitRow>) -> UnitRow {
        let tally = &unit.tally;
        let id = &unit.unit;
        UnitRow {
            case_id: id.case_id.as_str().into(),
            name: id.name.as_str().into(),
            file: shared(&id.file, previous.map(|p| &p.file)),
            connection: shared(&id.connection, previous.map(|p| &p.connection)),
            target: shared(&id.target, previous.map(|p| &p.target)),
            verdict: unit.verdict,
            duration: unit.duration,
            passed: tally.passed,
            samples: tally.passed + tally.failed + tally.errored,
            metrics: Metrics::of(unit),
            between: unit.reliability.map(|r| (r.good, r.bad)),
        }
    }
}

impl Parsed {
    /// The run in `text`, when its first line is a `run` line. The half line a killed
    /// run may leave is dropped; a file that is not a run's is not indexed.
    pub(crate) fn read(text: &str) -> Option<Parsed> {
        let stored = prill_report::stored::StoredRun::parse(text).ok()?;
        let Some(Line {
            record: Record::Run(run),
            ..
        }) = stored.lines.first()
        else {
            return None;
        };
        Some(Parsed {
            run: run.clone(),
            units: stored.units.iter().fold(Vec::new(), |mut rows, unit| {
                let row = UnitRow::of(unit, rows.last());
                rows.push(row);
                rows
            }),
            summary: stored.summary,
        })
    }

    /// Puts this run, read from `file`, in the index in place of whatever it held of
    /// the run (and of the file): its row and its units are removed first, so that
    /// however often and by whichever process a run is indexed, its units are there
    /// once (the `UNIQUE (run_id, seq)` of `units` holds it to that).
    pub(crate) fn replace(
        &self,
        tx: &rusqlite::Transaction<'_>,
        file: &str,
    ) -> rusqlite::Result<()> {
        sync::forget(tx, &self.run.id)?;
        tx.execute(
            "DELETE FROM units WHERE run_id IN (SELECT id FROM runs WHERE file = ?1)",
            [file],
        )?;
        tx.execute("DELETE FROM runs WHERE file = ?1", [file])?;
        let count =
            |status: Status| self.units.iter().filter(|u| u.verdict == status).count() as u64;
        let (passed, failed, errored, skipped, duration) = match &self.summary {
            Some(s) => (s.passed, s.failed, s.errored, s.skipped, Some(s.duration)),
            None => (
                count(Status::Passed),
                count(Status::Failed),
                count(Status::Errored),
                count(Status::Skipped),
                None,
            ),
        };
        let git = self.run.git.as_ref();
        tx.execute(
            "INSERT INTO runs (id, file, started_at, command, git_commit, git_dirty, \
             git_branch, passed, failed, errored, skipped, duration, finished, cassettes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                self.run.id,
                file,
                self.run.started_at,
                self.run.command,
                git.map(|g| g.commit.clone()),
                git.map(|g| g.dirty),
                git.and_then(|g| g.branch.clone()),
                i64::try_from(passed).unwrap_or(i64::MAX),
                i64::try_from(failed).unwrap_or(i64::MAX),
                i64::try_from(errored).unwrap_or(i64::MAX),
                i64::try_from(skipped).unwrap_or(i64::MAX),
                duration,
                self.summary.is_some(),
                self.run
                    .settings
                    .cassettes
                    .as_ref()
                    .map(|c| format!("{} {}", c.mode, c.dir)),
            ],
        )?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO units (run_id, seq, case_id, name, file, connection, target, verdict, \
             duration, passed, samples, latency, time_to_first_token, input_tokens, \
             output_tokens, cost, good, bad) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18)",
        )?;
        for (seq, unit) in self.units.iter().enumerate() {
            let verdict = serde_json::to_value(unit.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let m = &unit.metrics;
            insert.execute(params![
                self.run.id,
                i64::try_from(seq).unwrap_or(i64::MAX),
                &*unit.case_id,
                &*unit.name,
                &*unit.file,
                &*unit.connection,
                &*unit.target,
                verdict,
                unit.duration,
                unit.passed,
                unit.samples,
                m.latency,
                m.time_to_first_token,
                m.input_tokens.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
                m.output_tokens
                    .map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
                m.cost,
                unit.between.map(|(good, _)| good),
                unit.between.map(|(_, bad)| bad),
            ])?;
        }
        // The run's cost, summed once here rather than each time runs are listed.
        tx.execute(
            "UPDATE runs SET cost = (SELECT SUM(cost) FROM units WHERE run_id = ?1) WHERE id = ?1",
            [&self.run.id],
        )?;
        Ok(())
    }
}

/// The least string after every string that starts with `prefix`, so that a case id
/// `>= prefix AND < after_prefix(prefix)` starts with `prefix` and the index on case
/// ids answers the query (ids are hex digits; any text works).
fn after_prefix(prefix: &str) -> String {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = char::from_u32(u32::from(last) + 1)
            .or_else(|| (last == '\u{D7FF}').then_some('\u{E000}'));
        if let Some(next) = next {
            chars.push(next);
            return chars.into_iter().collect();
        }
    }
    // Every character was the last one there is (or the prefix was empty): no bound.
    char::MAX
        .to_string()
        .repeat(prefix.chars().count().max(1) + 1)
}

/// A unit's metrics across its samples, as the index keeps them.
#[derive(Debug, Default, PartialEq)]
struct Metrics {
    latency: Option<f64>,
    time_to_first_token: Option<f64>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cost: Option<f64>,
}

impl Metrics {
    /// The mean latency and time to first token of `unit`'s interactions, and the sums
    /// of their tokens and costs; each `None` when no interaction reports it.
    fn of(unit: &Unit) -> Metrics {
        let interactions: Vec<&Interaction> =
            unit.samples.iter().flat_map(|s| &s.interactions).collect();
        let mean = |values: Vec<f64>| {
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let sum_u64 = |values: Vec<u64>| (!values.is_empty()).then(|| values.iter().sum());
        let sum_f64 = |values: Vec<f64>| (!values.is_empty()).then(|| values.iter().sum());
        Metrics {
            latency: mean(interactions.iter().map(|i| i.duration).collect()),
            time_to_first_token: mean(
                interactions
                    .iter()
                    .filter_map(|i| i.time_to_first_token)
                    .collect(),
            ),
            input_tokens: sum_u64(interactions.iter().filter_map(|i| i.usage?.input).collect()),
            output_tokens: sum_u64(
                interactions
                    .iter()
                    .filter_map(|i| i.usage?.output)
                    .collect(),
            ),
            cost: sum_f64(interactions.iter().filter_map(|i| i.cost).collect()),
        }
    }
}

impl History {
    /// Whether the run `id` is in the index.
    pub fn has_run(&self, id: &str) -> Result<bool, HistoryError> {
        self.db
            .query_row("SELECT 1 FROM runs WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map(|found| found.is_some())
            .map_err(|e| self.index_error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::after_prefix;

    #[test]
    fn every_string_with_the_prefix_falls_below_its_bound() {
        for (prefix, inside, outside) in [
            ("3f9a", "3f9a2c", "3f9b"),
            ("ab", "abzzzz", "ac"),
            ("a\u{10FFFF}", "a\u{10FFFF}zz", "b"),
        ] {
            let bound = after_prefix(prefix);
            assert!(prefix <= inside && inside < bound.as_str(), "{prefix:?}");
            assert!(
                outside >= bound.as_str(),
                "{prefix:?}: {outside:?} < {bound:?}"
            );
        }
    }
}
