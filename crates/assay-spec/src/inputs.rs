//! Reading the files a command names: [`load_paths`] expands folders, reads every test
//! file within the [`Limits`], and keeps one [`Entry`] per file (loaded, validly or
//! not, or unreadable), so one bad file never stops the others.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Report};
use crate::limits::Limits;
use crate::load::{
    Loaded, Unrecognized, discover, load_file, load_file_with, unsupported_extension,
};
use crate::plan::{Case, Dialect};
use crate::source::Source;
use crate::syntax::Env;

/// What became of one file (or one path that could not be read).
#[derive(Debug)]
pub enum Entry {
    /// The file was read and loaded, validly or not.
    Loaded(Box<Loaded>),
    /// The path could not be read.
    Unreadable {
        /// The path, with no text, for its diagnostic.
        source: Source,
        /// The diagnostic's code.
        code: &'static str,
        /// Why.
        message: String,
    },
}

impl Entry {
    fn unreadable(path: &Path, code: &'static str, message: String) -> Entry {
        Entry::Unreadable {
            source: Source::new(path, ""),
            code,
            message,
        }
    }

    /// The file's source.
    pub fn source(&self) -> &Source {
        match self {
            Entry::Loaded(loaded) => &loaded.source,
            Entry::Unreadable { source, .. } => source,
        }
    }

    /// Whether the file is valid (it may still have warnings).
    pub fn is_valid(&self) -> bool {
        matches!(self, Entry::Loaded(loaded) if loaded.is_valid())
    }

    /// Every error and warning in file order, each paired with the source for rendering.
    pub fn reports(&self) -> Vec<Report> {
        match self {
            Entry::Loaded(loaded) => loaded.reports(),
            Entry::Unreadable {
                source,
                code,
                message,
            } => {
                vec![Report::new(
                    Diagnostic::new(code, "", message.clone()),
                    source,
                )]
            }
        }
    }

    /// How many warnings the file has.
    pub fn warnings(&self) -> usize {
        match self {
            Entry::Loaded(loaded) => loaded.warnings.len(),
            Entry::Unreadable { .. } => 0,
        }
    }

    /// The plan cases, when the file is valid.
    pub fn cases(&self) -> Vec<Case> {
        match self {
            Entry::Loaded(loaded) => loaded.cases(),
            Entry::Unreadable { .. } => Vec::new(),
        }
    }
}

/// Every file that `paths` name, loaded.
#[derive(Debug, Default)]
pub struct Inputs {
    /// The files, in the order found.
    pub entries: Vec<Entry>,
    /// How many files found by walking a directory were skipped as not test files.
    pub skipped: usize,
}

impl Inputs {
    /// How many of the files are test files (not `assay.toml`), valid or not.
    pub fn test_files(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| !matches!(e, Entry::Loaded(l) if l.dialect == Some(Dialect::Config)))
            .count()
    }

    /// How many files are not valid.
    pub fn invalid(&self) -> usize {
        self.entries.iter().filter(|e| !e.is_valid()).count()
    }

    /// Every error and warning of every file, in file order.
    pub fn reports(&self) -> Vec<Report> {
        self.entries.iter().flat_map(Entry::reports).collect()
    }

    /// The cases of every valid test file (an `assay.toml` among the files has none).
    pub fn cases(&self) -> Vec<Case> {
        self.entries
            .iter()
            .filter(|e| !matches!(e, Entry::Loaded(l) if l.dialect == Some(Dialect::Config)))
            .flat_map(Entry::cases)
            .collect()
    }
}

/// Expands and loads `paths` within `limits`. A file named explicitly must be a test
/// file; a file found by walking a directory is skipped when it does not look like
/// one. One bad file never stops the others. `strict` makes every warning an error.
pub fn load_paths(paths: &[PathBuf], env: &Env, strict: bool, limits: &Limits) -> Inputs {
    let mut inputs = Inputs::default();
    let mut seen = HashSet::new();
    for path in paths {
        let unrecognized = if path.is_dir() {
            Unrecognized::Skip
        } else {
            Unrecognized::Error
        };
        for found in discover(std::slice::from_ref(path)) {
            let entry = match found {
                Ok(file) => {
                    // The same file named twice (or named and found in a named folder) is read once.
                    if !seen.insert(std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone())) {
                        continue;
                    }
                    if let Some(why) = unsupported_extension(&file) {
                        inputs
                            .entries
                            .push(Entry::unreadable(&file, "unsupported-extension", why));
                        continue;
                    }
                    match load_file_with(&file, env, unrecognized, limits) {
                        Ok(Some(loaded)) if strict => Entry::Loaded(Box::new(loaded.strict())),
                        Ok(Some(loaded)) => Entry::Loaded(Box::new(loaded)),
                        Ok(None) => {
                            inputs.skipped += 1;
                            continue;
                        }
                        Err(e) => Entry::unreadable(&file, read_code(&e), read_message(&e)),
                    }
                }
                Err((at, message)) if !at.exists() => Entry::unreadable(&at, "not-found", message),
                Err((at, message)) => Entry::unreadable(&at, "unreadable", message),
            };
            inputs.entries.push(entry);
        }
    }
    inputs
}

/// Loads one explicitly named file; an unreadable file becomes its diagnostic.
pub fn load_one(path: &Path, env: &Env) -> Entry {
    if let Some(why) = unsupported_extension(path).filter(|_| path.is_file()) {
        return Entry::unreadable(path, "unsupported-extension", why);
    }
    match load_file(path, env, Unrecognized::Error) {
        Ok(Some(loaded)) => Entry::Loaded(Box::new(loaded)),
        // `Unrecognized::Error` never skips; treat it as unrecognized all the same.
        Ok(None) => Entry::unreadable(
            path,
            "unknown-dialect",
            "cannot tell which kind of test file this is".to_owned(),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Entry::unreadable(path, "not-found", "no such file or directory".to_owned())
        }
        Err(e) => Entry::unreadable(path, read_code(&e), read_message(&e)),
    }
}

/// The diagnostic code of a file that could not be read.
fn read_code(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::FileTooLarge => "too-large",
        std::io::ErrorKind::InvalidInput => "not-a-file",
        _ => "unreadable",
    }
}

/// Why a file could not be read.
fn read_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::FileTooLarge | std::io::ErrorKind::InvalidInput => {
            format!("not read: {e}")
        }
        _ => format!("cannot read the file: {e}"),
    }
}
