//! Bringing the index up to date with the files, and adding the run a recorder wrote.
//!
//! Several processes may do this at once (runs that end together in one project, a
//! `prill runs` beside them), so every change is made in one transaction that takes
//! the write lock at its start (`BEGIN IMMEDIATE`) and decides from what the index
//! holds inside it, never from what was read before: files are read before the lock
//! (so that it is held briefly), and inside it a file's text is used only when the
//! file is still as it was read and the index does not hold that already.
//!
//! A run is indexed from one file. When several files hold the same run id (a copy
//! beside the original, a restored backup, a link to it), [`kept_file`] picks one the
//! same way every time: `<id>.jsonl` when it is one of them, else the first name; the
//! others are known (so not read again) but add nothing. Whenever the files of a run
//! change, its row and units are removed and put back from the file kept, so a run and
//! its units are in the index once.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::{History, Parsed, SyncError};
use crate::HistoryError;
use crate::files::{self, Listed, Look, Skipped, Stamp};

/// A file read for this update: its stamp when read, and the run it holds.
struct Fresh {
    stamp: Stamp,
    run: Option<Parsed>,
}

/// What a look at the folder found, before the lock is taken.
#[derive(Default)]
struct Found {
    /// The regular files listed, read or not.
    listed: HashSet<String>,
    /// The files read because the index did not know them as they are.
    fresh: HashMap<String, Fresh>,
    /// The entries not read: not regular files, over the limit, unreadable.
    skipped: HashSet<String>,
}

impl History {
    /// Reads every new or changed file and brings the index up to date with the folder,
    /// in one transaction; what it did not read is kept in `self.skipped`.
    pub(super) fn sync(&mut self) -> Result<(), SyncError> {
        let listed = files::list(&self.runs_dir)
            .map_err(|e| SyncError::Io(HistoryError::io(&self.runs_dir, e)))?;
        let known = known_files(&self.db)?;
        let mut found = Found::default();
        let mut skipped = Vec::new();
        for (name, listed) in listed {
            let path = self.runs_dir.join(&name);
            let stamp = match listed {
                Listed::Regular(stamp) => stamp,
                Listed::Skipped(why) => {
                    skipped.push(Skipped { path, why });
                    found.skipped.insert(name);
                    continue;
                }
            };
            found.listed.insert(name.clone());
            if known.get(&name).is_some_and(|(s, _)| *s == stamp) {
                continue;
            }
            match files::read(&path, crate::MAX_RUN_FILE_BYTES) {
                Ok((stamp, text)) => {
                    let run = Parsed::read(&text);
                    found.fresh.insert(name, Fresh { stamp, run });
                }
                Err(Look::Gone) => {}
                Err(Look::Not(why)) => {
                    skipped.push(Skipped { path, why });
                    found.listed.remove(&name);
                    found.skipped.insert(name);
                }
            }
        }
        self.skipped = skipped;
        // Nothing new, changed or gone: nothing to write, and no lock taken (a history
        // on a read-only disk, or one many processes list at once, is only read).
        if found.fresh.is_empty() && known.keys().all(|name| found.listed.contains(name)) {
            return Ok(());
        }
        let tx = self
            .db
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        apply(&tx, &self.runs_dir, &found)?;
        tx.commit()?;
        Ok(())
    }

    /// Adds the run of `file` (in `runs_dir`), as `parsed` says, to the index at
    /// `db_path` without reading any file of the folder: what the reporter that wrote
    /// the file knows already. The file's stamp is taken now, so that the next
    /// [`History::open`] finds the file indexed and does not read it again. An index
    /// that cannot be opened is left alone: the next `open` rebuilds it from the files.
    pub(crate) fn index_written(
        runs_dir: &Path,
        db_path: &Path,
        file: &str,
        parsed: &Parsed,
    ) -> rusqlite::Result<()> {
        let mut history = History::try_open(runs_dir, db_path)?;
        let tx = history
            .db
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Taken under the lock: a process that reads the file after this sees the
        // same stamp and leaves the run as it is here.
        let Ok(stamp) = files::look(&runs_dir.join(file)) else {
            return Ok(());
        };
        let before: Option<Option<String>> = tx
            .query_row("SELECT run_id FROM files WHERE name = ?1", [file], |r| {
                r.get(0)
            })
            .optional()?;
        record(&tx, file, stamp, Some(&parsed.run.id))?;
        let mut runs: BTreeSet<String> = before.flatten().into_iter().collect();
        runs.insert(parsed.run.id.clone());
        let read = HashMap::from([(file, parsed)]);
        for id in &runs {
            reindex(&tx, runs_dir, id, &read)?;
        }
        tx.commit()
    }
}

/// Every file the index knows: its stamp and the run it holds.
fn known_files(
    db: &rusqlite::Connection,
) -> rusqlite::Result<HashMap<String, (Stamp, Option<String>)>> {
    let mut statement = db.prepare("SELECT name, size, modified, run_id FROM files")?;
    statement
        .query_map([], |r| {
            let size = u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0);
            Ok((r.get(0)?, (Stamp(size, r.get(2)?), r.get(3)?)))
        })?
        .collect()
}

/// Applies what a look at the folder `found` to the index, inside `tx`: the files gone
/// or no longer readable are forgotten, the files read are recorded when they are still
/// as they were read and the index does not hold them so already, and every run whose
/// files changed is indexed again from the file kept for it.
fn apply(tx: &Transaction<'_>, runs_dir: &Path, found: &Found) -> rusqlite::Result<()> {
    let known = known_files(tx)?;
    let mut runs: BTreeSet<String> = BTreeSet::new();
    for (name, (_, run)) in &known {
        let gone = if found.skipped.contains(name) {
            true
        } else if found.listed.contains(name) {
            false
        } else {
            // Not listed: removed, or written after the listing (by a run that ended
            // meanwhile), which is left for the next update.
            std::fs::symlink_metadata(runs_dir.join(name)).is_err()
        };
        if gone {
            tx.execute("DELETE FROM files WHERE name = ?1", [name])?;
            runs.extend(run.iter().cloned());
        }
    }
    let mut read: HashMap<&str, &Parsed> = HashMap::new();
    for (name, fresh) in &found.fresh {
        let now = files::look(&runs_dir.join(name)).ok();
        if now != Some(fresh.stamp) {
            // Changed again since it was read, or gone: the next update reads it.
            continue;
        }
        let before = known.get(name);
        if before.is_some_and(|(stamp, _)| *stamp == fresh.stamp) {
            // Another process indexed it as it is meanwhile.
            continue;
        }
        let id = fresh.run.as_ref().map(|r| r.run.id.as_str());
        record(tx, name, fresh.stamp, id)?;
        runs.extend(before.and_then(|(_, run)| run.clone()));
        if let Some(run) = &fresh.run {
            runs.insert(run.run.id.clone());
            read.insert(name.as_str(), run);
        }
    }
    for id in &runs {
        reindex(tx, runs_dir, id, &read)?;
    }
    Ok(())
}

/// Records that the file `name` was seen with `stamp`, holding the run `id` (or none).
fn record(
    tx: &Transaction<'_>,
    name: &str,
    stamp: Stamp,
    id: Option<&str>,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO files (name, size, modified, run_id) VALUES (?1, ?2, ?3, ?4)",
        params![
            name,
            i64::try_from(stamp.0).unwrap_or(i64::MAX),
            stamp.1,
            id
        ],
    )?;
    Ok(())
}

/// Indexes the run `id` again from the file kept for it, taking its text from `read`
/// when this update read it, else reading it now; with no file left, the run goes.
fn reindex(
    tx: &Transaction<'_>,
    runs_dir: &Path,
    id: &str,
    read: &HashMap<&str, &Parsed>,
) -> rusqlite::Result<()> {
    forget(tx, id)?;
    let names = files_of(tx, id)?;
    let Some(kept) = kept_file(id, &names) else {
        return Ok(());
    };
    if let Some(parsed) = read.get(kept) {
        return parsed.replace(tx, kept);
    }
    // Kept now only (the file kept before is gone): read here, under the lock; rare.
    let again = files::read(&runs_dir.join(kept), crate::MAX_RUN_FILE_BYTES)
        .ok()
        .and_then(|(stamp, text)| Some((stamp, Parsed::read(&text)?)))
        .filter(|(_, parsed)| parsed.run.id == id);
    match again {
        Some((stamp, parsed)) => {
            record(tx, kept, stamp, Some(id))?;
            parsed.replace(tx, kept)
        }
        // Changed or unreadable: forgotten, so that the next update reads it.
        None => {
            tx.execute("DELETE FROM files WHERE name = ?1", [kept])?;
            Ok(())
        }
    }
}

/// The file a run is indexed from, of the `names` that hold it: `<id>.jsonl` (the
/// name a run is written under) when it is one of them, else the first name.
pub(super) fn kept_file<'a>(id: &str, names: &'a [String]) -> Option<&'a str> {
    let own = format!("{id}.jsonl");
    names
        .iter()
        .find(|n| **n == own)
        .or_else(|| names.iter().min())
        .map(String::as_str)
}

/// The files the index knows to hold the run `id`.
pub(super) fn files_of(db: &rusqlite::Connection, id: &str) -> rusqlite::Result<Vec<String>> {
    let mut statement = db.prepare_cached("SELECT name FROM files WHERE run_id = ?1")?;
    statement.query_map([id], |r| r.get(0))?.collect()
}

/// Removes the run `id`'s row and units.
pub(super) fn forget(db: &rusqlite::Connection, id: &str) -> rusqlite::Result<()> {
    db.execute("DELETE FROM units WHERE run_id = ?1", [id])?;
    db.execute("DELETE FROM runs WHERE id = ?1", [id])?;
    Ok(())
}
