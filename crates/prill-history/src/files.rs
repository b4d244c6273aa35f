//! The files of the history's folder as the index reads them. Only regular files are
//! read: an entry is looked at (`stat`, which never blocks) before it is opened, it is
//! opened without blocking (`O_NONBLOCK` on unix) and looked at again through the open
//! file, and no more than [`MAX_RUN_FILE_BYTES`] of it are read. A symbolic link is
//! followed to a regular file (it is read as that file; pruning removes the link, not
//! what it leads to). Whatever else is named `*.jsonl` there (a FIFO, a device, a
//! socket, a folder, a link to one of them or to nothing, a file over the limit) is
//! not read: it is [`Skipped`], with why, for the caller to show.

use std::fmt;
use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};

use prill_spec::files::{Unread, kind_name, read_within};

/// The most bytes of a run's file the index reads: 1 GiB. A run keeps each answer
/// (at most 32 MiB, the response cap) in its samples and its unit, so a run of a few
/// dozen answers at the cap fits; real runs hold far less. A run that a `prill run`
/// keeps is indexed by that run from what it saw, whatever its size; only a file the
/// index has to read (a history restored without its index, a run killed before it
/// ended) is refused over the limit.
pub const MAX_RUN_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// An entry of the history's folder that was not read, and why: the caller shows it
/// as a warning (`prill runs`, and every run when it prunes the history).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The entry.
    pub path: PathBuf,
    /// Why it was not read: `it is a named pipe (FIFO), not a regular file`.
    pub why: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the history skipped {}: {}",
            self.path.display(),
            self.why
        )
    }
}

/// A file's size and when it last changed (nanoseconds since the epoch; 0 when the
/// system does not say): what tells the index that a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp(pub(crate) u64, pub(crate) i64);

impl Stamp {
    pub(crate) fn of(metadata: &Metadata) -> Stamp {
        let modified = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Stamp(metadata.len(), modified)
    }
}

/// What an entry named `*.jsonl` is: a regular file with its stamp, or a reason not
/// to read it.
pub(crate) enum Listed {
    Regular(Stamp),
    Skipped(String),
}

/// The `*.jsonl` entries of `dir`, each looked at without being opened; none when `dir`
/// does not exist.
pub(crate) fn list(dir: &Path) -> io::Result<Vec<(String, Listed)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = match entry.file_name().into_string() {
            Ok(name) => name,
            Err(raw) => {
                if raw.to_string_lossy().ends_with(".jsonl") {
                    let why = "its name is not UTF-8".to_owned();
                    out.push((raw.to_string_lossy().into_owned(), Listed::Skipped(why)));
                }
                continue;
            }
        };
        if !name.ends_with(".jsonl") {
            continue;
        }
        let listed = match look(&entry.path()) {
            Ok(stamp) => Listed::Regular(stamp),
            // Removed since it was listed (pruned by another run): nothing to keep.
            Err(Look::Gone) => continue,
            Err(Look::Not(why)) => Listed::Skipped(why),
        };
        out.push((name, listed));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Why an entry is not read.
pub(crate) enum Look {
    /// It is gone.
    Gone,
    /// It is not a regular file, or cannot be read: why.
    Not(String),
}

/// The stamp of the regular file at `path` (following symbolic links), looked at
/// without opening it.
pub(crate) fn look(path: &Path) -> Result<Stamp, Look> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // A link that leads nowhere is still there; a removed file is not.
            return match std::fs::symlink_metadata(path) {
                Ok(_) => Err(Look::Not(
                    "it is a symbolic link that leads nowhere".to_owned(),
                )),
                Err(_) => Err(Look::Gone),
            };
        }
        Err(e) => return Err(Look::Not(format!("it cannot be looked at: {e}"))),
    };
    regular(&metadata)?;
    Ok(Stamp::of(&metadata))
}

/// `Ok` for a regular file, else why it is not read.
fn regular(metadata: &Metadata) -> Result<(), Look> {
    if metadata.is_file() {
        Ok(())
    } else {
        Err(not_read(Unread::NotRegular {
            kind: kind_name(metadata.file_type()),
        }))
    }
}

/// The text of the regular file at `path` and its stamp when it was opened, read
/// within `max` bytes (`prill_spec::files::read_within`: looked at first, opened
/// without blocking, looked at again through the open file). Bytes that are not UTF-8
/// (half a character that a killed run left at the end) become U+FFFD.
pub(crate) fn read(path: &Path, max: u64) -> Result<(Stamp, String), Look> {
    let (metadata, bytes) = match read_within(path, max) {
        Ok(read) => read,
        Err(Unread::Io(e)) if e.kind() == io::ErrorKind::NotFound => return Err(Look::Gone),
        Err(e) => return Err(not_read(e)),
    };
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok((Stamp::of(&metadata), text))
}

/// Why an entry is not read, in the words a warning shows.
fn not_read(e: Unread) -> Look {
    Look::Not(match e {
        Unread::NotRegular { .. } => format!("{e}; only regular files are read"),
        Unread::TooLarge { .. } => format!("{e} for a run's file"),
        Unread::Io(e) => format!("it cannot be read: {e}"),
    })
}
