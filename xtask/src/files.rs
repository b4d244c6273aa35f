//! Generated files: write them, or check that they are up to date.

use std::path::Path;

/// What [`ensure_file_contents`] does with a file that differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Write the new contents.
    Write,
    /// Change nothing; a difference is an error.
    Check,
}

/// Makes sure `path` holds `contents`, ignoring `\r\n` versus `\n`.
///
/// Returns whether the file was written. In [`Mode::Check`], a missing or different
/// file is an error that names the file and the command that fixes it.
pub(crate) fn ensure_file_contents(
    path: &Path,
    contents: &str,
    mode: Mode,
) -> Result<bool, String> {
    let current = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if current.as_deref().map(normalize) == Some(normalize(contents)) {
        return Ok(false);
    }
    match mode {
        Mode::Check => Err(format!(
            "{} is {}: run `cargo xtask schemas` to update",
            path.display(),
            if current.is_some() {
                "out of date"
            } else {
                "missing"
            }
        )),
        Mode::Write => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            std::fs::write(path, normalize(contents))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok(true)
        }
    }
}

fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_reports_drift_and_write_fixes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new").join("a.json");

        let missing = ensure_file_contents(&path, "{}\n", Mode::Check).unwrap_err();
        assert!(
            missing.contains("missing: run `cargo xtask schemas` to update"),
            "{missing}"
        );
        assert_eq!(ensure_file_contents(&path, "{}\n", Mode::Write), Ok(true));
        assert_eq!(ensure_file_contents(&path, "{}\n", Mode::Check), Ok(false));
        assert_eq!(
            ensure_file_contents(&path, "{}\r\n", Mode::Check),
            Ok(false)
        );

        std::fs::write(&path, "{ }\n").unwrap();
        let stale = ensure_file_contents(&path, "{}\n", Mode::Check).unwrap_err();
        assert!(
            stale.contains("a.json is out of date: run `cargo xtask schemas` to update"),
            "{stale}"
        );
    }
}
