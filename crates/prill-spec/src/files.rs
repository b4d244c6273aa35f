//! Reading a file from a folder Prill does not control (test files, cassettes, the run
//! history) so that what the folder holds can never hang a command or fill its memory:
//! only regular files, within a limit, never blocking.
//!
//! A path is looked at (following symbolic links) before it is opened; anything but a
//! regular file is refused. It is opened without blocking (`O_NONBLOCK` on unix, so a
//! FIFO put in its place after the look does not block the open), looked at again
//! through the open file, and never read past the limit. Each caller words the refusal
//! its own way ([`Unread`]).
//!
//! ```
//! use prill_spec::files::{Unread, read_within};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("run.jsonl");
//! std::fs::write(&path, "{}\n").unwrap();
//! assert_eq!(read_within(&path, 1024).unwrap().1, b"{}\n");
//! assert!(matches!(read_within(&path, 2), Err(Unread::TooLarge { .. })));
//! assert!(matches!(read_within(dir.path(), 1024), Err(Unread::NotRegular { .. })));
//! ```

use std::fs::{File, Metadata};
use std::io::{self, Read as _, Take};
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum Unread {
    /// It is not a regular file: a FIFO, a device, a socket, a directory.
    #[error("it is {kind}, not a regular file")]
    NotRegular {
        /// What it is, in words ([`kind_name`]).
        kind: &'static str,
    },
    /// It holds more than the limit.
    #[error("{}, over the limit of {}", held(*.size), human_bytes(*.max))]
    TooLarge {
        /// Its size when it was looked at; `None` when it grew past the limit while read.
        size: Option<u64>,
        /// The limit.
        max: u64,
    },
    /// It could not be looked at, opened or read.
    #[error(transparent)]
    Io(#[from] io::Error),
}

fn held(size: Option<u64>) -> String {
    match size {
        Some(size) => format!("it holds {}", human_bytes(size)),
        None => "it holds more".to_owned(),
    }
}

/// The metadata of the regular file at `path` (following symbolic links), looked at
/// without opening it: anything else is refused, and so is a file over `max` bytes.
pub fn look(path: &Path, max: u64) -> Result<Metadata, Unread> {
    let metadata = std::fs::metadata(path)?;
    regular(&metadata)?;
    if metadata.len() > max {
        return Err(Unread::TooLarge {
            size: Some(metadata.len()),
            max,
        });
    }
    Ok(metadata)
}

/// The bytes of the regular file at `path`, read within `max`, with its metadata as it
/// was when opened: looked at, opened without blocking, looked at again. A file over
/// `max` is refused without reading more than `max + 1` bytes of it.
pub fn read_within(path: &Path, max: u64) -> Result<(Metadata, Vec<u8>), Unread> {
    let (metadata, mut file) = open_within(path, max)?;
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len().min(max)).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(Unread::TooLarge { size: None, max });
    }
    Ok((metadata, bytes))
}

/// The regular file at `path`, opened as [`read_within`] opens it, for a caller that
/// reads only part of it (a first line): it yields at most `max + 1` bytes, so a
/// caller that needs to know the file fits checks for more than `max`.
pub fn open_within(path: &Path, max: u64) -> Result<(Metadata, Take<File>), Unread> {
    look(path, max)?;
    let file = open_nonblocking(path)?;
    // The file may have been replaced between the look and the open.
    let metadata = file.metadata()?;
    regular(&metadata)?;
    Ok((metadata, file.take(max.saturating_add(1))))
}

fn regular(metadata: &Metadata) -> Result<(), Unread> {
    if metadata.is_file() {
        Ok(())
    } else {
        Err(Unread::NotRegular {
            kind: kind_name(metadata.file_type()),
        })
    }
}

/// What kind of thing a path names when it is not a regular file, in words.
pub fn kind_name(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// `n` with its thousands marked: `4000000` as `4,000,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `bytes` as people read sizes: `8 MiB`, `3 KiB`, `1000 bytes`, `1 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const GIB: u64 = 1024 * 1024 * 1024;
    const MIB: u64 = 1024 * 1024;
    const KIB: u64 = 1024;
    for (unit, name) in [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name}", bytes / unit);
        }
    }
    format!("{bytes} bytes")
}

/// `path` opened for reading; on unix with `O_NONBLOCK`, so that a FIFO put in place
/// of the file after it was looked at does not block the open.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )?;
        Ok(File::from(fd))
    }
    #[cfg(not(unix))]
    {
        File::open(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(256 * 1024 * 1024), "256 MiB");
        assert_eq!(human_bytes(1024 * 1024 * 1024), "1 GiB");
        assert_eq!(human_bytes(2048), "2 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert_eq!(human_bytes(2049), "2049 bytes");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.jsonl");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let e = read_within(&fifo, 1024).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a named pipe (FIFO), not a regular file"
        );
    }

    #[test]
    fn a_file_over_the_limit_is_refused_and_one_within_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, vec![b' '; 2049]).unwrap();
        let e = read_within(&path, 2048).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it holds 2049 bytes, over the limit of 2 KiB"
        );
        assert_eq!(read_within(&path, 4096).unwrap().1.len(), 2049);
    }
}
