//! The limits that keep hostile input cheap: how much is read, how deep it nests, how
//! far substitutions expand, and where HOCON includes may come from.
//!
//! Test files come from pull requests, so a small file must never cost a lot of time
//! or memory. Every limit here is refused with a diagnostic that names the limit;
//! `docs/reliability.md` lists them all with their defaults and how to change them.
//!
//! Two of them are settings ([`Limits`], from `prill.toml`, which also carries the
//! provider names the configuration lets a test give): the size of a file
//! together with everything it includes (`max_input_bytes`), and whether includes
//! may leave the project's folder (`includes = "project"`). The others are fixed:
//! they are far above anything a real test file needs.

use std::io;
use std::path::{Path, PathBuf};

use crate::files::Unread;

/// The default of [`Limits::max_input_bytes`]: 32 MiB for a file and everything it
/// includes, so that a generated suite of 100,000 tests (about 20 MB) loads. What a
/// file costs grows with its values more than its bytes, so their number is bounded
/// too ([`MAX_VALUES`], [`HOCON_MAX_VALUES`]).
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 32 * 1024 * 1024;

/// How many values (keys included) a JSON or YAML file may hold: 4 million, about
/// twice what a suite of 100,000 generated tests holds. Counted before the file is
/// parsed into a tree (`syntax::values`), so a file of tiny values is refused before
/// it costs memory by the value.
pub const MAX_VALUES: u64 = 4_000_000;

/// How many values a HOCON file may hold: 250,000. The `hocon` crate takes about a
/// kilobyte a value, and HOCON files are data-driven cases of a few dozen values.
pub const HOCON_MAX_VALUES: u64 = 250_000;

/// How deeply HOCON objects and lists may nest, counting each part of a dotted key
/// (`a.b.c = 1` is three levels) as one level. The `hocon` crate refuses brackets
/// deeper than this itself; dotted keys are counted by Prill before the text reaches it.
pub const HOCON_MAX_DEPTH: usize = 128;

/// How many values HOCON substitutions may expand to in all (the same cap as YAML
/// aliases have).
pub const HOCON_MAX_EXPANDED_VALUES: u64 = 1_000_000;

/// How many bytes of text HOCON substitutions may expand to in all.
pub const HOCON_MAX_EXPANDED_BYTES: u64 = 64 * 1024 * 1024;

/// How many values YAML aliases may expand to in all, so that a small file of nested
/// aliases cannot grow into an enormous tree (the same cap as HOCON substitutions have).
pub const YAML_MAX_ALIAS_VALUES: usize = 1_000_000;

/// How many bytes of text (scalars and keys) YAML aliases may expand to in all: the
/// same cap as HOCON substitutions have, so that a few aliases of a long string cannot
/// grow a small file into gigabytes. Each alias is counted before it is copied.
///
/// Anchored lists and objects, each kept as a copy for its aliases, have the same two
/// caps for those copies: anchors nested in anchors copy their text again at each level.
pub const YAML_MAX_ALIAS_BYTES: u64 = HOCON_MAX_EXPANDED_BYTES;

/// How long a chain of HOCON substitutions may be (`a = ${b}`, `b = ${c}`, ...).
pub const HOCON_MAX_SUBSTITUTION_DEPTH: usize = 64;

/// The settings that bound what is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes a test file and everything it includes may hold together.
    pub max_input_bytes: u64,
    /// Where HOCON `include` may read from.
    pub includes: IncludeScope,
    /// The providers `prill.toml` names in `[providers]`, with their kinds: the names
    /// a test's `provider` may give besides the five kinds. Empty without a config.
    pub providers: std::collections::BTreeMap<String, crate::model::provider::ProviderKind>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
            includes: IncludeScope::Anywhere,
            providers: std::collections::BTreeMap::new(),
        }
    }
}

/// Where HOCON `include` may read from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum IncludeScope {
    /// Any path, as HOCON means it (the default).
    #[default]
    Anywhere,
    /// Only files inside this folder (after following symbolic links): `includes =
    /// "project"` in `prill.toml` confines includes to the folder that holds it.
    Within(PathBuf),
}

pub use crate::files::human_bytes;

/// Reads at most `max` bytes of the regular file at `path` (after following symbolic
/// links). A FIFO, a device or a directory is refused before it is opened, so that
/// reading never blocks and never runs forever; a file larger than `max` is refused
/// without reading more than `max + 1` bytes of it.
///
/// The errors are [`io::Error`]s whose messages say what the limit is:
/// [`io::ErrorKind::InvalidInput`] for what is not a regular file and
/// [`io::ErrorKind::FileTooLarge`] for a file over the limit.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    match crate::files::read_within(path, max) {
        Ok((_, bytes)) => Ok(bytes),
        Err(Unread::Io(e)) => Err(e),
        Err(Unread::NotRegular { kind }) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {kind}, not a regular file; only regular files are read"),
        )),
        Err(Unread::TooLarge { size, max }) => Err(too_large(size, max)),
    }
}

fn too_large(size: Option<u64>, max: u64) -> io::Error {
    let size = match size {
        Some(size) => format!("it holds {}", human_bytes(size)),
        None => "it holds more".to_owned(),
    };
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "{size}, over the limit of {} for a test file and everything it includes \
             (raise `max_input_bytes` in prill.toml)",
            human_bytes(max)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(4 * 1024 * 1024), "4 MiB");
        assert_eq!(human_bytes(2048), "2 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_with_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        std::fs::write(&path, vec![b' '; 2049]).unwrap();
        let e = read_regular(&path, 2048).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains("limit of 2 KiB"), "{e}");
        assert_eq!(read_regular(&path, 4096).unwrap().len(), 2049);
    }

    #[cfg(unix)]
    #[test]
    fn a_device_behind_a_symlink_is_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zero.conf");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let e = read_regular(&path, 1024).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("character device"), "{e}");
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_regular(dir.path(), 1024).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
    }
}
