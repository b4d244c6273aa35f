//! Reading cassette files so that what a folder holds can never hang a run or fill its
//! memory: only regular files, and no more than [`MAX_CASSETTE_BYTES`], read by
//! `prill_spec::files` (looked at before opening, opened without blocking).
//!
//! A cassette folder comes from a repository, and git keeps symbolic links: a
//! `zero.jsonl` that links to `/dev/zero` would be read until memory runs out, and a
//! named pipe `pipe.jsonl` would block the run forever before anything runs.

use std::path::Path;

use prill_spec::files::{Unread, look, read_within};
pub(crate) use prill_spec::files::{human_bytes, kind_name};

use crate::matching::CassetteError;

/// The most bytes Prill reads as cassettes: a cassette file, and all the cassette files
/// of a folder together (256 MiB, eight times the 32 MiB a recorded response may
/// hold). A model cache entry is held to it too.
pub const MAX_CASSETTE_BYTES: u64 = 256 * 1024 * 1024;

/// The size of the regular file at `path` (after following symbolic links), looked at
/// without opening it: anything else is refused, and so is a file over `max`.
pub fn regular_size(path: &Path, max: u64) -> Result<u64, CassetteError> {
    look(path, max)
        .map(|metadata| metadata.len())
        .map_err(|e| refused(path, e))
}

/// Reads at most `max` bytes of the regular file at `path` (after following symbolic
/// links). A named pipe, a device or a folder is refused before it is opened, so that
/// reading never blocks and never runs forever; a file over `max` is refused without
/// reading more than `max + 1` bytes of it.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, CassetteError> {
    read_within(path, max)
        .map(|(_, bytes)| bytes)
        .map_err(|e| refused(path, e))
}

/// The name of the file that keeps the exchanges of the case named `name` with id
/// `case_id`: `<slug>-<id>.jsonl`, the slug the name's letters and digits in lower case
/// with a `-` for every other run of characters (at most 60), the id its first 12 letters
/// and digits.
///
/// ```
/// assert_eq!(
///     prill_cassette::case_file_name("Capital of France?", "3f2a9c0d1e2f"),
///     "capital-of-france-3f2a9c0d1e2f.jsonl"
/// );
/// ```
pub fn case_file_name(name: &str, case_id: &str) -> String {
    format!("{}-{}.jsonl", slug(name), file_id(case_id))
}

/// The slug of a case's name in its file's name.
pub fn slug(name: &str) -> String {
    let lowered: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let parts: Vec<&str> = lowered.split('-').filter(|p| !p.is_empty()).collect();
    parts.join("-").chars().take(60).collect()
}

/// The part of a case's id in its file's name.
fn file_id(case_id: &str) -> String {
    case_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(12)
        .collect()
}

/// Why `path` was not read, as a cassette error that names it.
fn refused(path: &Path, e: Unread) -> CassetteError {
    let path = path.to_owned();
    match e {
        Unread::NotRegular { kind } => CassetteError::NotRegular { path, kind },
        Unread::TooLarge { size, max } => CassetteError::TooLarge {
            path,
            size,
            limit: max,
        },
        Unread::Io(source) => CassetteError::Io { path, source },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_limit_is_refused_naming_it_and_one_within_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        std::fs::write(&path, vec![b' '; 2049]).unwrap();
        let e = read_regular(&path, 2048).unwrap_err();
        assert!(matches!(e, CassetteError::TooLarge { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("big.jsonl"), "{text}");
        assert!(text.contains("limit of 2 KiB"), "{text}");
        assert_eq!(read_regular(&path, 4096).unwrap().len(), 2049);
    }
}
