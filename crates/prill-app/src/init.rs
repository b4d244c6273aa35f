//! `prill init`: the files a new project starts from, each kept under
//! `crates/prill-app/templates/` and compiled in: a commented `prill.toml`, one
//! example test per dialect (a neuro-san data-driven HOCON case, a Sentinel TestSpec
//! and a Sentinel TestSuite) and a flaky case to assess (`prill assess`), all of which
//! pass under `prill run --demo`, and a GitHub Actions
//! workflow that runs them, uploads the JUnit report and writes the Markdown summary.
//!
//! [`init`] never overwrites a file unless asked: when any of them exists it writes
//! nothing and says which.

use std::path::{Path, PathBuf};

/// One file `prill init` writes: where, relative to the project folder, and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// The path under the project folder, `/`-separated.
    pub path: &'static str,
    /// The file's contents.
    pub contents: &'static str,
}

/// The GitHub Actions workflow `prill init` writes (README.md shows the same).
pub const WORKFLOW: &str = include_str!("../templates/.github/workflows/prill.yml");

/// Every file `prill init` writes, in the order it writes them.
pub const TEMPLATES: [Template; 6] = [
    Template {
        path: "prill.toml",
        contents: include_str!("../templates/prill.toml"),
    },
    Template {
        path: "tests/music_trivia.hocon",
        contents: include_str!("../templates/tests/music_trivia.hocon"),
    },
    Template {
        path: "tests/greeting.yaml",
        contents: include_str!("../templates/tests/greeting.yaml"),
    },
    Template {
        path: "tests/suite.yaml",
        contents: include_str!("../templates/tests/suite.yaml"),
    },
    Template {
        path: "tests/flaky.hocon",
        contents: include_str!("../templates/tests/flaky.hocon"),
    },
    Template {
        path: ".github/workflows/prill.yml",
        contents: WORKFLOW,
    },
];

/// Why `prill init` wrote nothing, or stopped part way.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// Some of the files exist already; nothing was written.
    #[error(
        "{} already {} in {}; nothing was written (--force overwrites {})",
        list(.paths),
        if .paths.len() == 1 { "exists" } else { "exist" },
        .dir.display(),
        if .paths.len() == 1 { "it" } else { "them" }
    )]
    Exists {
        /// The project folder.
        dir: PathBuf,
        /// The files that exist, relative to `dir`.
        paths: Vec<PathBuf>,
    },
    /// A folder or file could not be written.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The folder or file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| format!("`{}`", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes [`TEMPLATES`] under `dir` (created when missing) and returns the paths written.
/// Without `force`, a file that exists already stops it before anything is written
/// ([`InitError::Exists`] lists every such file).
pub fn init(dir: &Path, force: bool) -> Result<Vec<PathBuf>, InitError> {
    if !force {
        let existing: Vec<PathBuf> = TEMPLATES
            .iter()
            .map(|t| PathBuf::from(t.path))
            .filter(|p| dir.join(p).symlink_metadata().is_ok())
            .collect();
        if !existing.is_empty() {
            return Err(InitError::Exists {
                dir: dir.to_path_buf(),
                paths: existing,
            });
        }
    }
    let mut written = Vec::with_capacity(TEMPLATES.len());
    for template in TEMPLATES {
        let path = dir.join(template.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| InitError::Write {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&path, template.contents)
            .map_err(|source| InitError::Write { path, source })?;
        written.push(PathBuf::from(template.path));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_every_template_then_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let written = init(dir.path(), false).unwrap();
        assert_eq!(written.len(), TEMPLATES.len());
        for t in TEMPLATES {
            let on_disk = std::fs::read_to_string(dir.path().join(t.path)).unwrap();
            assert_eq!(on_disk, t.contents, "{}", t.path);
        }
        std::fs::write(dir.path().join("prill.toml"), "# mine\n").unwrap();
        let Err(InitError::Exists { paths, .. }) = init(dir.path(), false) else {
            panic!("a second init overwrote files");
        };
        assert_eq!(paths.len(), TEMPLATES.len());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("prill.toml")).unwrap(),
            "# mine\n"
        );
        init(dir.path(), true).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("prill.toml")).unwrap(),
            TEMPLATES[0].contents
        );
    }

    #[test]
    fn only_the_files_that_exist_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/suite.yaml"), "x").unwrap();
        let error = init(dir.path(), false).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("`tests/suite.yaml` already exists in"),
            "{message}"
        );
        assert!(message.ends_with("(--force overwrites it)"), "{message}");
        assert!(!message.contains("prill.toml"), "{message}");
        assert!(!dir.path().join("prill.toml").exists());
    }
}
