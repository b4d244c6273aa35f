//! One module per subcommand, and the file loading that `validate` and `list` share.

pub(crate) mod agents;
pub(crate) mod assess;
pub(crate) mod convert;
pub(crate) mod judge;
pub(crate) mod list;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod validate;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use assay_run::select::{EmptyRun, Level};
use assay_spec::limits::Limits;
use assay_spec::load::{Document, Unrecognized, discover, load_file_with, unsupported_extension};
use assay_spec::{Case, Diagnostic, Dialect, Env, Loaded, Report, Source, load_file};

use crate::output;

/// What became of one file (or one path that could not be read).
#[derive(Debug)]
pub(crate) enum Entry {
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
    pub(crate) fn source(&self) -> &Source {
        match self {
            Entry::Loaded(loaded) => &loaded.source,
            Entry::Unreadable { source, .. } => source,
        }
    }

    /// Whether the file is valid (it may still have warnings).
    pub(crate) fn is_valid(&self) -> bool {
        matches!(self, Entry::Loaded(loaded) if loaded.is_valid())
    }

    /// Every error and warning in file order, each paired with the source for rendering.
    pub(crate) fn reports(&self) -> Vec<Report> {
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
    pub(crate) fn warnings(&self) -> usize {
        match self {
            Entry::Loaded(loaded) => loaded.warnings.len(),
            Entry::Unreadable { .. } => 0,
        }
    }

    /// The plan cases, when the file is valid.
    pub(crate) fn cases(&self) -> Vec<Case> {
        match self {
            Entry::Loaded(loaded) => loaded.cases(),
            Entry::Unreadable { .. } => Vec::new(),
        }
    }
}

/// Every file that `paths` name, loaded.
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    /// The files, in the order found.
    pub(crate) entries: Vec<Entry>,
    /// How many files found by walking a directory were skipped as not test files.
    pub(crate) skipped: usize,
}

impl Inputs {
    /// How many of the files are test files (not `assay.toml`), valid or not.
    pub(crate) fn test_files(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| !matches!(e, Entry::Loaded(l) if l.dialect == Some(Dialect::Config)))
            .count()
    }
}

/// Prints the line of an empty run (`--no-tests`) and says whether it fails.
pub(crate) fn report_empty(empty: &EmptyRun) -> bool {
    match empty.level {
        Level::Silent => {}
        Level::Note => output::stderr(&format!("note: {}\n", empty.message)),
        Level::Warning => output::stderr(&format!("warning: {}\n", empty.message)),
        Level::Error => output::stderr(&format!(
            "error: {} (--no-tests=pass or warn allows an empty run)\n",
            empty.message
        )),
    }
    empty.fails()
}

/// How test files are read (`max_input_bytes`, `includes`), as `assay.toml` says:
/// the one given, else `./assay.toml` when it exists. A configuration that cannot be
/// read gives the defaults here; the commands that need it report why.
pub(crate) fn input_limits(config: Option<&Path>) -> Limits {
    let path = match config {
        Some(path) => path.to_path_buf(),
        None if Path::new("assay.toml").is_file() => PathBuf::from("assay.toml"),
        None => return Limits::default(),
    };
    let Ok(Some(loaded)) = load_file(&path, &Env::default(), Unrecognized::Error) else {
        return Limits::default();
    };
    let Ok(Document::Config(config)) = &loaded.outcome else {
        return Limits::default();
    };
    let project = std::fs::canonicalize(&path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    config.limits(&project)
}

/// Expands and loads `paths` within `limits`. A file named explicitly must be a test
/// file; a file found by walking a directory is skipped when it does not look like
/// one. One bad file never stops the others. `strict` makes every warning an error.
pub(crate) fn load_paths(paths: &[PathBuf], env: &Env, strict: bool, limits: &Limits) -> Inputs {
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
pub(crate) fn load_one(path: &Path, env: &Env) -> Entry {
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

/// The connection options that the flags and `assay.toml` ask for, resolved in this one
/// place: TLS trust (`--ca-cert`, `--insecure`), the limit on an exchange whose test
/// sets none (`timeout_in_seconds`, else [`assay_connect::DEFAULT_TIMEOUT`]) and the
/// idle limit (`idle_timeout_in_seconds`, else none).
pub(crate) fn http_options(
    ca_cert: Option<&Path>,
    insecure: bool,
    config: Option<&assay_spec::model::config::Config>,
) -> Result<assay_connect::HttpOptions, assay_connect::ConnectError> {
    let mut tls = assay_connect::TlsOptions::default().insecure(insecure);
    if let Some(path) = ca_cert {
        tls = tls.with_ca_file(path)?;
    }
    Ok(assay_connect::HttpOptions {
        tls,
        timeout: seconds(config.and_then(|c| c.timeout_in_seconds))
            .or(Some(assay_connect::DEFAULT_TIMEOUT)),
        idle_timeout: seconds(config.and_then(|c| c.idle_timeout_in_seconds)),
        ..assay_connect::HttpOptions::default()
    })
}

/// Seconds from `assay.toml` (validated positive) as a duration; too many to hold is
/// as good as no limit.
pub(crate) fn seconds(seconds: Option<f64>) -> Option<std::time::Duration> {
    seconds.map(|s| std::time::Duration::try_from_secs_f64(s).unwrap_or(std::time::Duration::MAX))
}
