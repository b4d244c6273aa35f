//! Reading the files a command names: [`load_paths`] expands folders, reads every test
//! file within the [`Limits`], and keeps one [`Entry`] per file (loaded, validly or
//! not, or unreadable), so one bad file never stops the others.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Report};
use crate::limits::Limits;
use crate::load::{
    ForCases, Loaded, Unrecognized, discover, load_file, load_file_for_cases, load_file_with,
    unsupported_extension,
};
use crate::plan::{Case, Dialect, Plan, Target};
use crate::redact::Redactor;
use crate::source::Source;
use crate::syntax::Env;

/// What became of one file (or one path that could not be read).
#[derive(Debug)]
pub enum Entry {
    /// The file was read and loaded, validly or not.
    Loaded(Box<Loaded>),
    /// A valid test file whose cases were taken for a run ([`Inputs::take_cases`]):
    /// what is kept of it is what its diagnostics and counts need, not its tree or its
    /// document, so a run does not hold a large suite twice.
    Planned(Box<Planned>),
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

pub use crate::load::Planned;

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
            Entry::Planned(planned) => &planned.source,
            Entry::Unreadable { source, .. } => source,
        }
    }

    /// Whether the file is valid (it may still have warnings).
    pub fn is_valid(&self) -> bool {
        match self {
            Entry::Loaded(loaded) => loaded.is_valid(),
            Entry::Planned(_) => true,
            Entry::Unreadable { .. } => false,
        }
    }

    /// The file's dialect, when it was loaded and could be told.
    pub fn dialect(&self) -> Option<Dialect> {
        match self {
            Entry::Loaded(loaded) => loaded.dialect,
            Entry::Planned(planned) => planned.dialect,
            Entry::Unreadable { .. } => None,
        }
    }

    /// Every error and warning in file order, each paired with the source for rendering.
    pub fn reports(&self) -> Vec<Report> {
        match self {
            Entry::Loaded(loaded) => loaded.reports(),
            Entry::Planned(planned) => planned
                .warnings
                .iter()
                .map(|d| Report::new(d.clone(), &planned.source))
                .collect(),
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
            Entry::Planned(planned) => planned.warnings.len(),
            Entry::Unreadable { .. } => 0,
        }
    }

    /// The plan cases, when the file is valid (none once they were taken).
    pub fn cases(&self) -> Vec<Case> {
        match self {
            Entry::Loaded(loaded) => loaded.cases(),
            Entry::Planned(_) | Entry::Unreadable { .. } => Vec::new(),
        }
    }

    /// How many cases the file has, or had before they were taken.
    pub fn case_count(&self) -> usize {
        match self {
            Entry::Loaded(loaded) => loaded.cases().len(),
            Entry::Planned(planned) => planned.cases,
            Entry::Unreadable { .. } => 0,
        }
    }

    /// Takes the cases of a valid test file, leaving what its diagnostics need.
    fn take_cases(&mut self) -> Vec<Case> {
        if !matches!(self, Entry::Loaded(_)) {
            return Vec::new();
        }
        let placeholder = Entry::Unreadable {
            source: Source::new(Path::new(""), ""),
            code: "",
            message: String::new(),
        };
        let Entry::Loaded(loaded) = std::mem::replace(self, placeholder) else {
            return Vec::new();
        };
        let (entry, cases) = Entry::taken((*loaded).take_cases());
        *self = entry;
        cases
    }

    /// The entry of a file loaded for its cases, and its cases.
    fn taken(taken: ForCases) -> (Entry, Vec<Case>) {
        match taken {
            Ok((cases, planned)) => (Entry::Planned(Box::new(planned)), cases),
            Err(loaded) => (Entry::Loaded(loaded), Vec::new()),
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
    /// How many of the files are test files (not `prill.toml`), valid or not.
    pub fn test_files(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.dialect() != Some(Dialect::Config))
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

    /// The cases of every valid test file (a `prill.toml` among the files has none).
    pub fn cases(&self) -> Vec<Case> {
        self.entries
            .iter()
            .filter(|e| e.dialect() != Some(Dialect::Config))
            .flat_map(Entry::cases)
            .collect()
    }

    /// The cases of every valid test file, taken: each file then keeps only what its
    /// diagnostics and counts need ([`Entry::Planned`]), so that a run holds its plan
    /// and not the files' trees and documents as well. Every file's tree is dropped
    /// before the next file's cases are made.
    pub fn take_cases(&mut self) -> Vec<Case> {
        let mut cases = Vec::new();
        for entry in &mut self.entries {
            let taken = entry.take_cases();
            // The first file's cases are kept as they are, not copied into a new vector
            // (a suite of 10,000 tests is 3 MB of cases).
            if cases.is_empty() {
                cases = taken;
            } else {
                cases.extend(taken);
            }
        }
        cases
    }
}

impl Inputs {
    /// How many files are valid, invalid, and how many warnings they have.
    pub fn counts(&self) -> Counts {
        let valid = self.entries.iter().filter(|e| e.is_valid()).count();
        Counts {
            valid,
            invalid: self.entries.len() - valid,
            warnings: self.entries.iter().map(Entry::warnings).sum(),
        }
    }

    /// `N files, N valid, N invalid`, then `, N warnings` and `, N skipped` when nonzero
    /// (`1 file`, `1 warning`).
    pub fn summary(&self) -> String {
        let counts = self.counts();
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut line = format!(
            "{}, {} valid, {} invalid",
            plural(self.entries.len(), "file", "files"),
            counts.valid,
            counts.invalid
        );
        if counts.warnings > 0 {
            line.push_str(&format!(
                ", {}",
                plural(counts.warnings, "warning", "warnings")
            ));
        }
        if self.skipped > 0 {
            line.push_str(&format!(", {} skipped", self.skipped));
        }
        line
    }

    /// The whole validation as one JSON document: every file with its diagnostics, and
    /// the counts (`prill validate --format json`).
    pub fn to_json(&self) -> serde_json::Value {
        let counts = self.counts();
        let files: Vec<serde_json::Value> = self
            .entries
            .iter()
            .map(|entry| {
                let source = entry.source();
                let (syntax, dialect) = match entry {
                    Entry::Loaded(loaded) => {
                        (Some(loaded.syntax.name()), loaded.dialect.map(|d| d.name()))
                    }
                    Entry::Planned(planned) => (
                        Some(planned.syntax.name()),
                        planned.dialect.map(|d| d.name()),
                    ),
                    Entry::Unreadable { .. } => (None, None),
                };
                let diagnostics: Vec<serde_json::Value> = entry
                    .reports()
                    .iter()
                    .map(|r| r.diagnostic.to_json(source))
                    .collect();
                serde_json::json!({
                    "file": source.name(),
                    "syntax": syntax,
                    "dialect": dialect,
                    "valid": entry.is_valid(),
                    "cases": entry.case_count(),
                    "diagnostics": diagnostics,
                })
            })
            .collect();
        serde_json::json!({
            "files": files,
            "summary": {
                "files": self.entries.len(),
                "valid": counts.valid,
                "invalid": counts.invalid,
                "warnings": counts.warnings,
                "skipped": self.skipped,
            },
        })
    }

    /// What shows values read from the environment (`${OPENAI_API_KEY}`) by name, for
    /// every file.
    pub fn redactor(&self) -> Redactor {
        let mut redactor = Redactor::default();
        for entry in &self.entries {
            match entry {
                Entry::Loaded(loaded) => redactor.extend(&loaded.redactor),
                Entry::Planned(planned) => redactor.extend(&planned.redactor),
                Entry::Unreadable { .. } => {}
            }
        }
        redactor
    }

    /// The cases, one line each (`id<TAB>dialect<TAB>name<TAB>file`; a data-driven
    /// case's name also names its agent), values from the environment by name
    /// (`prill list`).
    pub fn listing(&self) -> String {
        self.listing_of(&Plan::new(self.cases()))
    }

    /// [`Inputs::listing`] of `plan`, the plan of these inputs made already.
    pub fn listing_of(&self, plan: &Plan) -> String {
        listing(plan, &self.redactor())
    }

    /// The cases as JSON, values from the environment by name (`prill list --format
    /// json`).
    pub fn listing_json(&self) -> serde_json::Value {
        self.listing_json_of(&Plan::new(self.cases()))
    }

    /// [`Inputs::listing_json`] of `plan`, the plan of these inputs made already.
    pub fn listing_json_of(&self, plan: &Plan) -> serde_json::Value {
        listing_json(plan, &self.redactor())
    }
}

/// [`Inputs::listing`] of `plan`, its values from the environment shown by name as
/// `redactor` ([`Inputs::redactor`]) shows them: for a caller that has let go of the
/// files (their texts) before listing.
pub fn listing(plan: &Plan, redactor: &Redactor) -> String {
    let mut text = String::new();
    for case in &plan.cases {
        list_line(case, &mut text);
    }
    if redactor.is_empty() {
        return text;
    }
    redactor.text(&text)
}

/// [`Inputs::listing_json`] of `plan`, shown as `redactor` shows it (see [`listing`]).
pub fn listing_json(plan: &Plan, redactor: &Redactor) -> serde_json::Value {
    let mut json = serde_json::to_value(plan).unwrap_or_default();
    redactor.json(&mut json);
    json
}

/// How many files are valid and invalid, and how many warnings they have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Valid files.
    pub valid: usize,
    /// Invalid files (and paths that could not be read).
    pub invalid: usize,
    /// Warnings, across files.
    pub warnings: usize,
}

/// `id<TAB>dialect<TAB>name<TAB>file`, added to `out`.
fn list_line(case: &Case, out: &mut String) {
    out.push_str(&case.id);
    out.push('\t');
    out.push_str(case.dialect.name());
    out.push('\t');
    match (&case.target, case.dialect) {
        (Target::Agent { agent, .. }, Dialect::DataDriven) => {
            one_field(&format!("{} (agent {agent})", case.name), out);
        }
        _ => one_field(&case.name, out),
    }
    out.push('\t');
    one_field(&case.file.to_string_lossy(), out);
    out.push('\n');
}

/// Adds `text` to `out` with no tab or line break, so that it stays one field of one
/// line, and its other control characters (ESC) escaped ([`crate::escape::controls`]).
fn one_field(text: &str, out: &mut String) {
    let spaced = text.replace(['\t', '\n', '\r'], " ");
    out.push_str(&crate::escape::controls(&spaced));
}

/// Expands and loads `paths` within `limits`. A file named explicitly must be a test
/// file; a file found by walking a directory is skipped when it does not look like
/// one. One bad file never stops the others. `strict` makes every warning an error.
pub fn load_paths(paths: &[PathBuf], env: &Env, strict: bool, limits: &Limits) -> Inputs {
    let mut inputs = Inputs::default();
    for_each_file(paths, &mut inputs, |file, unrecognized| {
        Ok(match load_file_with(file, env, unrecognized, limits)? {
            Some(loaded) if strict => Some(Entry::Loaded(Box::new(loaded.strict()))),
            Some(loaded) => Some(Entry::Loaded(Box::new(loaded))),
            None => None,
        })
    });
    inputs
}

/// [`load_paths`] and then [`Inputs::take_cases`], as `prill run` and `prill list`
/// need them, with less memory: each file is loaded for its cases only
/// ([`load_file_for_cases`]), so a large Sentinel suite is read test by test, and a
/// valid file with no warning keeps no text ([`Planned::source`] keeps its path).
pub fn load_paths_for_cases(
    paths: &[PathBuf],
    env: &Env,
    strict: bool,
    limits: &Limits,
) -> (Inputs, Vec<Case>) {
    let mut inputs = Inputs::default();
    let mut cases: Vec<Case> = Vec::new();
    for_each_file(paths, &mut inputs, |file, unrecognized| {
        let Some(taken) = load_file_for_cases(file, env, unrecognized, limits, strict)? else {
            return Ok(None);
        };
        let (mut entry, taken) = Entry::taken(taken);
        // A valid file with no warning to show needs its text no more: it is let go
        // before the next file is read (a suite of 100,000 tests is 20 MB of text).
        if let Entry::Planned(planned) = &mut entry
            && planned.warnings.is_empty()
        {
            planned.source = Source::new(planned.source.path.clone(), "");
        }
        // The first file's cases are kept as they are, not copied into a new vector.
        if cases.is_empty() {
            cases = taken;
        } else {
            cases.extend(taken);
        }
        Ok(Some(entry))
    });
    (inputs, cases)
}

/// Expands `paths` and gives `inputs` an entry for each file found, as `load` makes it
/// from the file and whether an unrecognized one is an error (`Ok(None)`: skipped).
fn for_each_file(
    paths: &[PathBuf],
    inputs: &mut Inputs,
    mut load: impl FnMut(&Path, Unrecognized) -> Result<Option<Entry>, std::io::Error>,
) {
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
                    match load(&file, unrecognized) {
                        Ok(Some(entry)) => entry,
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

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = "name: s\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions:\n    - must_contain: x\ntests:\n  - name: a\n    inputs: {query: one}\n  - name: b\n    inputs: {query: two}\n    assertions:\n      - regex_match: \"\\\\d+\"\n";

    fn inputs(dir: &Path) -> Inputs {
        std::fs::write(dir.join("suite.yaml"), SUITE).unwrap();
        std::fs::write(dir.join("bad.yaml"), "name: s\ntests: 3\n").unwrap();
        load_paths(
            &[dir.to_path_buf()],
            &Env::default(),
            false,
            &Limits::default(),
        )
    }

    #[test]
    fn taken_cases_are_the_cases_and_the_files_keep_their_counts() {
        let dir = tempfile::tempdir().unwrap();
        let mut taken = inputs(dir.path());
        let before = taken.cases();
        let reports = taken.reports().len();
        let json = taken.to_json();
        let cases = taken.take_cases();
        assert_eq!(cases, before);
        assert_eq!(cases.len(), 2);
        assert_eq!(
            cases[0].interactions[0].checks[0]
                .location
                .unwrap()
                .line
                .get(),
            6
        );
        // The valid file keeps only what its diagnostics and counts need; the invalid
        // one is as it was.
        assert!(matches!(&taken.entries[1], Entry::Planned(p) if p.cases == 2));
        assert!(matches!(&taken.entries[0], Entry::Loaded(l) if !l.is_valid()));
        assert!(taken.cases().is_empty());
        assert_eq!(taken.reports().len(), reports);
        assert_eq!(taken.invalid(), 1);
        assert_eq!(taken.to_json(), json);
        assert_eq!(
            taken.listing_of(&Plan::new(cases)),
            inputs(dir.path()).listing()
        );
    }

    #[test]
    fn the_summary_counts_in_words() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(inputs(dir.path()).summary(), "2 files, 1 valid, 1 invalid");
        std::fs::remove_file(dir.path().join("bad.yaml")).unwrap();
        let one = load_paths(
            &[dir.path().join("suite.yaml")],
            &Env::default(),
            false,
            &Limits::default(),
        );
        assert_eq!(one.summary(), "1 file, 1 valid, 0 invalid");
    }
}
