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

use assay_spec::limits::Limits;
use assay_spec::load::{Document, Unrecognized, discover, load_file_with};
use assay_spec::{Case, Diagnostic, Env, Loaded, Report, Source, load_file};

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
/// one. One bad file never stops the others.
pub(crate) fn load_paths(paths: &[PathBuf], env: &Env, limits: &Limits) -> Inputs {
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
                    match load_file_with(&file, env, unrecognized, limits) {
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

/// The http options (TLS trust, retries) that `--ca-cert` and `--insecure` ask for.
pub(crate) fn http_options(
    ca_cert: Option<&Path>,
    insecure: bool,
) -> Result<assay_connect::HttpOptions, assay_connect::ConnectError> {
    let mut tls = assay_connect::TlsOptions::default().insecure(insecure);
    if let Some(path) = ca_cert {
        tls = tls.with_ca_file(path)?;
    }
    Ok(assay_connect::HttpOptions {
        tls,
        ..assay_connect::HttpOptions::default()
    })
}
