//! Where an end-of-run report goes: a writer, a file replaced atomically, a stream
//! (a FIFO, a device, `/dev/stdout`) written through, or a file appended to.
//!
//! What [`Output::file`] does depends on what is at the path, following symlinks:
//!
//! - **A regular file, or nothing.** The report is written to a temporary file beside
//!   the real file (`.report.json.XXXXXX.tmp`) and renamed over it only when complete,
//!   so a partial file never looks like a report. A symlink stays a symlink: the file it
//!   points to is what gets replaced (keeping that file's permissions). Missing parent
//!   directories are created. An earlier report at the path is **removed at once**, when
//!   the output is made: a run that is killed before it finishes leaves no report from
//!   an earlier run that looks current.
//! - **Anything else** (a FIFO, a character device, `/dev/stdout` and other
//!   `/proc/self/fd` links): opened when the report is complete and written through,
//!   appending, never replaced, so `--json /dev/stdout` and `--json >(jq .)` work.
//!
//! Every failure to write is returned, with the path: the caller must make the run fail.
//! After a normal exit no temporary file remains (a dropped output removes its own).
//!
//! # Example
//!
//! ```
//! use prill_report::Output;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("reports/junit.xml");
//! std::fs::create_dir(dir.path().join("reports"))?;
//! std::fs::write(&path, "an earlier run's report")?;
//! let output = Output::file(&path)?;
//! assert!(!path.exists(), "the earlier report is gone until this one is complete");
//! output.commit(b"<testsuites/>")?;
//! assert_eq!(std::fs::read_to_string(&path)?, "<testsuites/>");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fmt;
use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// Where a report is written when it is complete.
pub struct Output {
    target: Target,
}

enum Target {
    Writer(Box<dyn Write + Send>),
    Replace { path: PathBuf, temp: NamedTempFile },
    Stream { path: PathBuf },
    Append { path: PathBuf, file: File },
}

/// What a path leads to, after its symlinks.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A regular file, or nothing yet, at this real path (its directory exists).
    File(PathBuf),
    /// Something to write through: a FIFO, a device, a `/proc` link.
    Stream,
}

/// Symlinks followed at most, as the kernel does.
const MAX_LINKS: usize = 40;

/// Follows `path`'s symlinks one by one to what it leads to, creating missing
/// directories on the way.
pub(crate) fn resolve(path: &Path) -> io::Result<Resolved> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let name = current.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a file name", current.display()),
            )
        })?;
        let parent = match current.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = match std::fs::canonicalize(&parent) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&parent)
                    .map_err(|e| annotate(e, "cannot create the directory", &parent))?;
                std::fs::canonicalize(&parent).map_err(|e| annotate(e, "cannot reach", &parent))?
            }
            Err(e) => return Err(annotate(e, "cannot reach", &parent)),
        };
        // `/dev/stdout` -> `/proc/self/fd/1` -> a pipe, a terminal, or a file the shell
        // opened: the stream it names, never a file to replace.
        if dir.starts_with("/proc") {
            return Ok(Resolved::Stream);
        }
        let full = dir.join(name);
        match std::fs::symlink_metadata(&full) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Resolved::File(full)),
            Err(e) => return Err(annotate(e, "cannot reach", &full)),
            Ok(meta) if meta.file_type().is_symlink() => {
                let target =
                    std::fs::read_link(&full).map_err(|e| annotate(e, "cannot read", &full))?;
                current = dir.join(target);
            }
            Ok(meta) if meta.is_file() => return Ok(Resolved::File(full)),
            Ok(meta) if meta.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("cannot write {}: it is a directory", path.display()),
                ));
            }
            Ok(_) => return Ok(Resolved::Stream),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "cannot write {}: too many levels of symbolic links",
            path.display()
        ),
    ))
}

/// Opens `path` to write a stream to it as it goes, after [`resolve`]: a regular file
/// (through its symlinks) is created or emptied; anything else is written through,
/// appending.
pub(crate) fn open_stream(path: &Path) -> io::Result<File> {
    let opened = match resolve(path)? {
        Resolved::File(real) => File::create(&real),
        Resolved::Stream => OpenOptions::new().append(true).open(path),
    };
    opened.map_err(|e| annotate(e, "cannot open", path))
}

impl Output {
    /// Any writer: a `Vec<u8>` behind a lock, stdout, a socket.
    pub fn writer(writer: impl Write + Send + 'static) -> Output {
        Output {
            target: Target::Writer(Box::new(writer)),
        }
    }

    /// The report at `path`: a regular file (or nothing yet) is replaced atomically when
    /// the report is complete, and an earlier report there is removed now; a FIFO or a
    /// device is written through. See the [module documentation](self).
    pub fn file(path: impl AsRef<Path>) -> io::Result<Output> {
        let given = path.as_ref();
        let real = match resolve(given)? {
            Resolved::Stream => {
                return Ok(Output {
                    target: Target::Stream {
                        path: given.to_path_buf(),
                    },
                });
            }
            Resolved::File(real) => real,
        };
        let dir = real
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let name = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // A report is an ordinary file: readable as the umask allows, not only by us.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(Permissions::from_mode(0o666));
        }
        let temp = builder
            .tempfile_in(&dir)
            .map_err(|e| annotate(e, "cannot create a temporary file in", &dir))?;
        let earlier: Option<Permissions> = std::fs::metadata(&real).ok().map(|m| m.permissions());
        if let Some(permissions) = earlier {
            temp.as_file()
                .set_permissions(permissions)
                .map_err(|e| annotate(e, "cannot write", temp.path()))?;
            std::fs::remove_file(&real)
                .map_err(|e| annotate(e, "cannot remove the earlier report", &real))?;
        }
        Ok(Output {
            target: Target::Replace { path: real, temp },
        })
    }

    /// The file at `path` (through its symlinks), created if missing with its parent
    /// directories, the report added at its end in one write. This is how
    /// `$GITHUB_STEP_SUMMARY` is meant to be written.
    pub fn append(path: impl AsRef<Path>) -> io::Result<Output> {
        let path = path.as_ref().to_path_buf();
        let mut options = OpenOptions::new();
        options.append(true);
        if matches!(resolve(&path)?, Resolved::File(_)) {
            options.create(true);
        }
        let file = options
            .open(&path)
            .map_err(|e| annotate(e, "cannot open", &path))?;
        Ok(Output {
            target: Target::Append { path, file },
        })
    }

    /// Writes the complete report. Every failure (a full disk, a closed pipe, a
    /// directory that became read-only) is returned with the path.
    pub fn commit(self, bytes: &[u8]) -> io::Result<()> {
        self.commit_with(|w| w.write_all(bytes))
    }

    /// [`Output::commit`] of what `write` writes, through a buffer: a large report
    /// need not be made whole in memory first. A file is still replaced only once
    /// all of it is written.
    pub fn commit_with(
        self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        fn through(
            out: impl Write,
            write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
        ) -> io::Result<()> {
            let mut buffered = io::BufWriter::new(out);
            write(&mut buffered)?;
            buffered.flush()
        }
        match self.target {
            Target::Writer(mut w) => through(&mut w, write),
            Target::Replace { path, mut temp } => {
                let written = through(&mut temp, write).and_then(|()| temp.as_file().sync_all());
                written.map_err(|e| annotate(e, "cannot write", &path))?;
                temp.persist(&path)
                    .map_err(|e| annotate(e.error, "cannot write", &path))?;
                Ok(())
            }
            Target::Stream { path } => {
                let file = OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .map_err(|e| annotate(e, "cannot open", &path))?;
                through(file, write).map_err(|e| annotate(e, "cannot write", &path))
            }
            Target::Append { path, mut file } => {
                through(&mut file, write).map_err(|e| annotate(e, "cannot write", &path))
            }
        }
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Writer(_) => f.write_str("Output::writer"),
            Target::Replace { path, .. } => write!(f, "Output::file({})", path.display()),
            Target::Stream { path } => write!(f, "Output::stream({})", path.display()),
            Target::Append { path, .. } => write!(f, "Output::append({})", path.display()),
        }
    }
}

/// `cannot write /x/report.json: permission denied`, keeping the error's kind.
pub(crate) fn annotate(error: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{what} {}: {error}", path.display()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_links_and_tells_streams_from_files() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("sub/target.json", dir.path().join("link.json")).unwrap();
        assert_eq!(
            resolve(&dir.path().join("link.json")).unwrap(),
            Resolved::File(real.join("sub/target.json")),
            "a dangling link leads to the file it names, its directory made"
        );
        assert!(real.join("sub").is_dir());
        assert_eq!(resolve(Path::new("/dev/null")).unwrap(), Resolved::Stream);
        assert_eq!(resolve(Path::new("/dev/stdout")).unwrap(), Resolved::Stream);
        let err = resolve(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        let err = resolve(&dir.path().join("loop")).unwrap_err();
        assert!(err.to_string().contains("symbolic links"), "{err}");
    }
}
