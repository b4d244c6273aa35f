//! Where an end-of-run report goes: a writer, a file replaced atomically, or a file
//! appended to.
//!
//! [`Output::file`] creates a temporary file beside the target at once (so a bad path
//! is reported before the run, not after it) and renames it over the target only when
//! the report is complete: a partial file never looks like a report. If the process
//! dies first, the temporary file (`.report.json.XXXXXX.tmp`) is all that is left.
//!
//! # Example
//!
//! ```
//! use assay_report::Output;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("junit.xml");
//! let output = Output::file(&path)?;
//! assert!(!path.exists(), "nothing at the target until the report is complete");
//! # drop(output);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fmt;
use std::fs::{File, OpenOptions};
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
    Append { path: PathBuf, file: File },
}

impl Output {
    /// Any writer: a `Vec<u8>` behind a lock, stdout, a socket.
    pub fn writer(writer: impl Write + Send + 'static) -> Output {
        Output {
            target: Target::Writer(Box::new(writer)),
        }
    }

    /// The file at `path`, replaced when the report is complete. Creates the temporary
    /// file now, in the same directory (a rename does not cross file systems).
    pub fn file(path: impl AsRef<Path>) -> io::Result<Output> {
        let path = path.as_ref().to_path_buf();
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a file name", path.display()),
                )
            })?
            .to_string_lossy()
            .into_owned();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // A report is an ordinary file: readable as the umask allows, not only by us.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder
            .tempfile_in(&dir)
            .map_err(|e| annotate(e, "cannot create a temporary file in", &dir))?;
        Ok(Output {
            target: Target::Replace { path, temp },
        })
    }

    /// The file at `path`, created if missing, the report added at its end in one
    /// write. This is how `$GITHUB_STEP_SUMMARY` is meant to be written.
    pub fn append(path: impl AsRef<Path>) -> io::Result<Output> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| annotate(e, "cannot open", &path))?;
        Ok(Output {
            target: Target::Append { path, file },
        })
    }

    /// Writes the complete report.
    pub(crate) fn commit(self, bytes: &[u8]) -> io::Result<()> {
        match self.target {
            Target::Writer(mut w) => {
                w.write_all(bytes)?;
                w.flush()
            }
            Target::Replace { path, mut temp } => {
                let written = temp
                    .write_all(bytes)
                    .and_then(|()| temp.flush())
                    .and_then(|()| temp.as_file().sync_all());
                written.map_err(|e| annotate(e, "cannot write", temp.path()))?;
                temp.persist(&path)
                    .map_err(|e| annotate(e.error, "cannot write", &path))?;
                Ok(())
            }
            Target::Append { path, mut file } => file
                .write_all(bytes)
                .and_then(|()| file.flush())
                .map_err(|e| annotate(e, "cannot write", &path)),
        }
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Writer(_) => f.write_str("Output::writer"),
            Target::Replace { path, .. } => write!(f, "Output::file({})", path.display()),
            Target::Append { path, .. } => write!(f, "Output::append({})", path.display()),
        }
    }
}

/// `cannot write /x/report.json: permission denied`, keeping the error's kind.
pub(crate) fn annotate(error: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{what} {}: {error}", path.display()))
}
