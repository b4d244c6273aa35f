//! Reading cassette files so that what a folder holds can never hang a run or fill its
//! memory: only regular files, and no more than [`MAX_CASSETTE_BYTES`].
//!
//! A cassette folder comes from a repository, and git keeps symbolic links: a
//! `zero.jsonl` that links to `/dev/zero` would be read until memory runs out, and a
//! named pipe `pipe.jsonl` would block the run forever before anything runs. So what a
//! path names is looked at (following links) before it is opened, anything but a
//! regular file is refused, and a file is never read past the limit.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use crate::matching::CassetteError;

/// The most bytes Prill reads as cassettes: a cassette file, and all the cassette files
/// of a folder together (256 MiB, eight times the 32 MiB a recorded response may
/// hold). A model cache entry is held to it too.
pub const MAX_CASSETTE_BYTES: u64 = 256 * 1024 * 1024;

/// What kind of thing a path names when it is not a regular file.
pub(crate) fn kind_name(file_type: std::fs::FileType) -> &'static str {
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

/// `bytes` as people read sizes: `256 MiB`, `3 KiB`, `1000 bytes`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    const KIB: u64 = 1024;
    if bytes >= MIB {
        let tenths = bytes * 10 / MIB;
        if tenths.is_multiple_of(10) {
            format!("{} MiB", tenths / 10)
        } else {
            format!("{}.{} MiB", tenths / 10, tenths % 10)
        }
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The size of the regular file at `path` (after following symbolic links), looked at
/// without opening it: anything else is refused, and so is a file over `max`.
pub fn regular_size(path: &Path, max: u64) -> Result<u64, CassetteError> {
    let meta = std::fs::metadata(path).map_err(|source| CassetteError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_file() {
        return Err(CassetteError::NotRegular {
            path: path.to_owned(),
            kind: kind_name(meta.file_type()),
        });
    }
    if meta.len() > max {
        return Err(CassetteError::TooLarge {
            path: path.to_owned(),
            size: Some(meta.len()),
            limit: max,
        });
    }
    Ok(meta.len())
}

/// Reads at most `max` bytes of the regular file at `path` (after following symbolic
/// links). A named pipe, a device or a folder is refused before it is opened, so that
/// reading never blocks and never runs forever; a file over `max` is refused without
/// reading more than `max + 1` bytes of it.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, CassetteError> {
    let io = |source| CassetteError::Io {
        path: path.to_owned(),
        source,
    };
    let size = regular_size(path, max)?;
    let file = File::open(path).map_err(io)?;
    // The file may have changed between the look and the open.
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(CassetteError::NotRegular {
            path: path.to_owned(),
            kind: kind_name(meta.file_type()),
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(max)).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(CassetteError::TooLarge {
            path: path.to_owned(),
            size: None,
            limit: max,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(MAX_CASSETTE_BYTES), "256 MiB");
        assert_eq!(human_bytes(300 * 1024 * 1024 + 512 * 1024), "300.5 MiB");
        assert_eq!(human_bytes(2048), "2 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
    }

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
