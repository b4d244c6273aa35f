//! Loading: find test files, parse each in its syntax, detect its dialect by content,
//! validate it, and normalize it to plan cases.
//!
//! One bad file never stops the others: every file gets its own [`Loaded`] outcome.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Report, Severity, did_you_mean};
use crate::limits::{Limits, read_regular};
use crate::model::config::Config;
use crate::model::data_driven::DataDrivenCase;
use crate::model::provider::ProviderKind;
use crate::model::sentinel::{TestSpec, TestSuite};
use crate::node::{Node, Span, Value};
use crate::plan::{Case, Dialect, Location, Shared};
use crate::redact::Redactor;
use crate::source::{Source, Syntax};
use crate::syntax::{self, Env};
use crate::validate::cx::{Cx, Style};

mod stream;

/// A validated file.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// A data-driven test case.
    DataDriven(DataDrivenCase),
    /// A Sentinel TestSpec.
    SentinelSpec(TestSpec),
    /// A Sentinel TestSuite.
    SentinelSuite(TestSuite),
    /// The project configuration.
    Config(Config),
}

impl Document {
    /// The document's dialect.
    pub fn dialect(&self) -> Dialect {
        match self {
            Document::DataDriven(_) => Dialect::DataDriven,
            Document::SentinelSpec(_) => Dialect::SentinelSpec,
            Document::SentinelSuite(_) => Dialect::SentinelSuite,
            Document::Config(_) => Dialect::Config,
        }
    }

    /// The plan cases the document holds (none for the config).
    pub fn cases(&self, file: &Path) -> Vec<Case> {
        self.clone().into_cases(file)
    }

    /// [`Document::cases`], moving the document's values into the cases.
    pub fn into_cases(self, file: &Path) -> Vec<Case> {
        match self {
            Document::DataDriven(case) => vec![case.to_case(file)],
            Document::SentinelSpec(spec) => {
                vec![spec.into_case(&mut Shared::new(file), &[], Dialect::SentinelSpec)]
            }
            Document::SentinelSuite(suite) => suite.into_cases(file),
            Document::Config(_) => Vec::new(),
        }
    }
}

/// What loading one file gave.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file.
    pub source: Source,
    /// The syntax it was read as.
    pub syntax: Syntax,
    /// The located tree, when the syntax was valid.
    pub tree: Option<Node>,
    /// The dialect, when it could be told.
    pub dialect: Option<Dialect>,
    /// The document, or every error found.
    pub outcome: Result<Document, Vec<Diagnostic>>,
    /// Warnings: things in a valid file that do nothing.
    pub warnings: Vec<Diagnostic>,
    /// The values the file read from the environment (`${VAR}`), which every message
    /// and listing shows as `${VAR}`. The diagnostics above are already redacted;
    /// the plan cases keep the values, since they are what is sent.
    pub redactor: Redactor,
}

impl Loaded {
    /// Every error and warning in file order, each paired with the source for rendering.
    pub fn reports(&self) -> Vec<Report> {
        let mut all: Vec<&Diagnostic> = self.warnings.iter().collect();
        if let Err(errors) = &self.outcome {
            all.extend(errors);
        }
        all.sort_by_key(|d| d.span.map(|s| s.start).unwrap_or(usize::MAX));
        all.into_iter()
            .map(|d| Report::new(d.clone(), &self.source))
            .collect()
    }

    /// Whether the file is valid (it may still have warnings).
    pub fn is_valid(&self) -> bool {
        self.outcome.is_ok()
    }

    /// Makes every warning an error (`--strict`, or `strict = true` in prill.toml): a
    /// file with a warning is then invalid, and nothing of it runs.
    pub fn strict(mut self) -> Loaded {
        if self.warnings.is_empty() {
            return self;
        }
        let promoted = std::mem::take(&mut self.warnings).into_iter().map(|mut d| {
            d.severity = Severity::Error;
            d
        });
        let mut errors = match std::mem::replace(&mut self.outcome, Err(Vec::new())) {
            Ok(_) => Vec::new(),
            Err(errors) => errors,
        };
        errors.extend(promoted);
        errors.sort_by_key(|d| d.span.map(|s| s.start).unwrap_or(usize::MAX));
        self.outcome = Err(errors);
        self
    }

    /// The plan cases, when the file is valid, each check with its place in the file
    /// ([`crate::plan::Check::location`]).
    pub fn cases(&self) -> Vec<Case> {
        let mut cases = match &self.outcome {
            Ok(doc) => doc.cases(&self.source.path),
            Err(_) => return Vec::new(),
        };
        if let Some(tree) = &self.tree {
            locate_checks(&mut cases, 0, tree, &self.source);
        }
        cases
    }

    /// [`Loaded::cases`], moving the document into them, with what is left of the
    /// file: what its diagnostics need, the tree and the document gone (each freed
    /// once the cases no longer need it). `Err` gives back a file that is not valid.
    pub fn into_cases(self) -> Result<(Vec<Case>, Planned), Box<Loaded>> {
        let Loaded {
            source,
            syntax,
            tree,
            dialect,
            outcome,
            warnings,
            redactor,
        } = self;
        let doc = match outcome {
            Ok(doc) => doc,
            Err(errors) => {
                return Err(Box::new(Loaded {
                    source,
                    syntax,
                    tree,
                    dialect,
                    outcome: Err(errors),
                    warnings,
                    redactor,
                }));
            }
        };
        let mut tree = tree;
        let cases = match (doc, &mut tree) {
            // A suite's tree and its plan are never whole at once: each test's part of
            // the tree is freed once its case is made and its checks are placed.
            (Document::SentinelSuite(suite), Some(tree)) => {
                let mut cases = Vec::with_capacity(suite.tests.len());
                suite.into_cases_each(&source.path, |i, mut case| {
                    locate_checks(std::slice::from_mut(&mut case), i, tree, &source);
                    release_test(tree, i);
                    cases.push(case);
                });
                cases
            }
            (doc, tree) => {
                let mut cases = doc.into_cases(&source.path);
                if let Some(tree) = tree {
                    locate_checks(&mut cases, 0, tree, &source);
                }
                cases
            }
        };
        drop(tree);
        let planned = Planned {
            source,
            syntax,
            dialect,
            warnings,
            redactor,
            cases: cases.len(),
        };
        Ok((cases, planned))
    }
}

/// A file loaded for its cases ([`load_file_for_cases`]): the cases of a valid test
/// file with what is kept of it, or the whole file when it has no cases to give (it is
/// not valid, or it is the project's configuration).
pub type ForCases = Result<(Vec<Case>, Planned), Box<Loaded>>;

impl Loaded {
    /// The file's cases and what is kept of it ([`Loaded::into_cases`]), when it is a
    /// valid test file; else the file as it is.
    pub fn take_cases(self) -> ForCases {
        if !self.is_valid() || self.dialect == Some(Dialect::Config) {
            return Err(Box::new(self));
        }
        self.into_cases()
    }
}

/// What is kept of a valid file once its cases are taken ([`Loaded::into_cases`]).
#[derive(Debug)]
pub struct Planned {
    /// The file.
    pub source: Source,
    /// The syntax it was read as.
    pub syntax: Syntax,
    /// Its dialect.
    pub dialect: Option<Dialect>,
    /// Its warnings.
    pub warnings: Vec<Diagnostic>,
    /// The values it read from the environment.
    pub redactor: Redactor,
    /// How many cases it had.
    pub cases: usize,
}

/// Gives every check of `cases` its place in `source`, found in `tree`. The cases of a
/// suite are its tests from `tests[first]` on, and their checks' paths are written
/// within their test ([`crate::plan::Check::path`]).
fn locate_checks(cases: &mut [Case], first: usize, tree: &Node, source: &Source) {
    for (i, case) in cases.iter_mut().enumerate() {
        let test = match case.dialect {
            Dialect::SentinelSuite => suite_test(tree, first + i),
            _ => None,
        };
        for check in case.interactions.iter_mut().flat_map(|s| &mut s.checks) {
            let span = match test {
                Some(item) => place_in_test(item, tree, &check.path),
                None => tree.locate(&check.path),
            };
            check.location = span.map(|span| location(source, span));
        }
    }
}

/// Test `i` of a suite's `tree`.
fn suite_test(tree: &Node, i: usize) -> Option<&Node> {
    tree.get("tests")?.as_array()?.get(i)
}

/// The line and column where `span` starts.
fn location(source: &Source, span: Span) -> Location {
    let (line, column) = source.line_col(span.start);
    Location {
        line: u32::try_from(line)
            .ok()
            .and_then(std::num::NonZeroU32::new)
            .unwrap_or(std::num::NonZeroU32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

/// Frees test `i` of a suite's `tree` (its `tests[i]`), once its case is made.
fn release_test(tree: &mut Node, i: usize) {
    if let Value::Object(entries) = &mut tree.value
        && let Some((_, tests)) = entries.iter_mut().find(|(k, _)| k.name == "tests")
        && let Value::Array(items) = &mut tests.value
        && let Some(item) = items.get_mut(i)
    {
        item.value = Value::Null;
    }
}

/// Where a suite test's check at `rest` (its path within the test,
/// `assertions[0].regex_match`) is written: in the test (`item`), else, for a field the
/// test does not write, in the `defaults` of `suite` (the suite as written, whole or
/// up to its tests: [`stream`]). So `assertions[0]` of a test without `assertions` is
/// written at `defaults.assertions[0]`.
fn place_in_test(item: &Node, suite: &Node, rest: &str) -> Option<Span> {
    // One walk tells both where the path is and whether the test writes its field
    // (the path's first segment).
    let (own, matched) = item.locate_counted(rest);
    let own = own.or(Some(item.span));
    if matched >= 1 {
        return own;
    }
    suite.locate(&format!("defaults.{rest}")).or(own)
}

/// Whether `path`'s name marks it as a file Prill reads when walking a directory.
pub fn is_candidate(path: &Path) -> bool {
    if path.file_name().is_some_and(|n| n == "prill.toml") {
        return true;
    }
    Syntax::from_path(path).is_some()
}

/// Why Prill does not read `path`, when its extension is not one Prill reads: a
/// sentence naming the extensions it does read. Test files end in `.hocon`, `.conf`,
/// `.yaml`, `.yml` or `.json`; a configuration in `.toml`. Nothing is guessed from
/// the content of a file with another extension, or none.
pub fn unsupported_extension(path: &Path) -> Option<String> {
    let toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if toml || is_candidate(path) {
        return None;
    }
    let what = match path.extension() {
        Some(ext) => format!(
            "`.{}` is not an extension Prill reads",
            ext.to_string_lossy()
        ),
        None => "the file has no extension".to_owned(),
    };
    Some(format!(
        "{what}: test files end in .hocon, .conf, .yaml, .yml or .json, and the configuration in .toml"
    ))
}

/// Expands `paths`: files are kept as given; directories are walked recursively for
/// candidate files, in sorted order, skipping hidden folders, `target` and
/// `node_modules`.
///
/// Symbolic links are followed, to files and to folders alike. A link that leads
/// back into a folder being walked (a loop), a broken link, and any entry that
/// cannot be read come back as errors, never silently dropped, so that a command
/// never reports success over files it did not read. A candidate that is not a
/// regular file (a FIFO named `x.conf`) is kept, for [`load_file`] to refuse.
pub fn discover(paths: &[PathBuf]) -> Vec<Result<PathBuf, (PathBuf, String)>> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let walker = walkdir::WalkDir::new(path)
                .follow_links(true)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    let name = e.file_name().to_string_lossy();
                    e.depth() == 0
                        || !(name.starts_with('.') || name == "target" || name == "node_modules")
                });
            for entry in walker {
                match entry {
                    Ok(e) if !e.file_type().is_dir() && is_candidate(e.path()) => {
                        out.push(Ok(e.into_path()))
                    }
                    Ok(_) => {}
                    Err(e) => out.push(Err(walk_error(path, &e))),
                }
            }
        } else if path.exists() {
            out.push(Ok(path.clone()));
        } else {
            out.push(Err((path.clone(), "no such file or directory".to_owned())));
        }
    }
    out
}

/// The path and the reason for an entry a walk could not read.
fn walk_error(root: &Path, e: &walkdir::Error) -> (PathBuf, String) {
    let at = e.path().unwrap_or(root).to_path_buf();
    let message = if let Some(ancestor) = e.loop_ancestor() {
        format!(
            "not read: a symbolic link loop (it leads back to `{}`)",
            ancestor.display()
        )
    } else if e
        .io_error()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
    {
        "not read: a symbolic link to nothing (its target does not exist)".to_owned()
    } else {
        match e.io_error() {
            Some(io) => format!("not read: {io}"),
            None => format!("not read: {e}"),
        }
    };
    (at, message)
}

/// How a file that does not look like any dialect is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unrecognized {
    /// It is an error (the file was named explicitly).
    Error,
    /// It is skipped (found by walking a directory), unless its keys look like a typo of a dialect's.
    Skip,
}

/// Reads and loads one file within the default [`Limits`]. `None` means the file was
/// skipped as not a test file.
pub fn load_file(
    path: &Path,
    env: &Env,
    unrecognized: Unrecognized,
) -> Result<Option<Loaded>, std::io::Error> {
    load_file_with(path, env, unrecognized, &Limits::default())
}

/// Reads and loads one file within `limits`. `None` means the file was skipped as not
/// a test file.
///
/// Only a regular file is read (a FIFO or a device is an error, never a hang), and
/// one larger than `limits.max_input_bytes` is an error that names the limit. Text
/// that is not UTF-8 loads as an invalid file whose diagnostic points at the first
/// bad byte's line and column.
pub fn load_file_with(
    path: &Path,
    env: &Env,
    unrecognized: Unrecognized,
    limits: &Limits,
) -> Result<Option<Loaded>, std::io::Error> {
    let bytes = read_regular(path, limits.max_input_bytes)?;
    match String::from_utf8(bytes) {
        // The text moves into the source: a large file is not held twice while it loads.
        Ok(text) => Ok(load_source(
            Source::new(path, text),
            env,
            unrecognized,
            limits,
        )),
        Err(e) => Ok(Some(not_utf8(path, &e))),
    }
}

/// Reads and loads one file within `limits` for its cases only, as `prill run` and
/// `prill list` do: what [`load_file_with`] and then [`Loaded::take_cases`] give
/// (with every warning an error when `strict`, as [`Loaded::strict`]), reaching it
/// with less memory. A valid Sentinel suite in YAML is read test by test, and each
/// test's case is made as soon as it is read, so neither the whole tree nor the whole
/// suite is ever held. `None` means the file was skipped as not a test file.
pub fn load_file_for_cases(
    path: &Path,
    env: &Env,
    unrecognized: Unrecognized,
    limits: &Limits,
    strict: bool,
) -> Result<Option<ForCases>, std::io::Error> {
    let bytes = read_regular(path, limits.max_input_bytes)?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => return Ok(Some(Err(Box::new(not_utf8(path, &e))))),
    };
    let mut source = Source::new(path, text);
    if !is_config(path)
        && Syntax::from_path(path).unwrap_or_else(|| sniff(&source.text)) == Syntax::Yaml
    {
        match stream::suite_cases(source, &limits.providers, strict) {
            Ok(taken) => return Ok(Some(Ok(taken))),
            Err(back) => source = back,
        }
    }
    let Some(loaded) = load_source(source, env, unrecognized, limits) else {
        return Ok(None);
    };
    let loaded = if strict { loaded.strict() } else { loaded };
    Ok(Some(loaded.take_cases()))
}

/// A file whose bytes are not UTF-8: invalid, with the first bad byte's position.
fn not_utf8(path: &Path, e: &std::string::FromUtf8Error) -> Loaded {
    let bytes = e.as_bytes();
    let valid = e.utf8_error().valid_up_to();
    let bad = e.utf8_error().error_len().unwrap_or(bytes.len() - valid);
    let text = String::from_utf8_lossy(bytes).into_owned();
    // The lossy text has the same bytes up to the first bad one, then U+FFFD.
    let span = Span::new(valid, valid + '\u{fffd}'.len_utf8());
    let shown: Vec<String> = bytes[valid..valid + bad]
        .iter()
        .map(|b| format!("0x{b:02x}"))
        .collect();
    let d = Diagnostic::new("not-utf8", "", "the file is not valid UTF-8")
        .at(span)
        .expected("UTF-8 text")
        .found(format!(
            "the byte{} {}",
            if bad == 1 { "" } else { "s" },
            shown.join(" ")
        ));
    let syntax = Syntax::from_path(path).unwrap_or(Syntax::Hocon);
    Loaded {
        source: Source::new(path, text),
        syntax,
        tree: None,
        dialect: None,
        outcome: Err(vec![d]),
        warnings: Vec::new(),
        redactor: Redactor::default(),
    }
}

/// Loads `text` as if read from `path`, within the default [`Limits`]. `None` means
/// it was skipped as not a test file.
pub fn load_str(path: &Path, text: &str, env: &Env, unrecognized: Unrecognized) -> Option<Loaded> {
    load_str_with(path, text, env, unrecognized, &Limits::default())
}

/// Loads `text` as if read from `path`, within `limits`. `None` means it was skipped
/// as not a test file.
pub fn load_str_with(
    path: &Path,
    text: &str,
    env: &Env,
    unrecognized: Unrecognized,
    limits: &Limits,
) -> Option<Loaded> {
    load_source(Source::new(path, text), env, unrecognized, limits)
}

/// Loads `source` within `limits`, every diagnostic redacted. `None` means it was
/// skipped as not a test file.
fn load_source(
    source: Source,
    env: &Env,
    unrecognized: Unrecognized,
    limits: &Limits,
) -> Option<Loaded> {
    let mut loaded = load_unredacted(source, env, unrecognized, limits)?;
    let redactor = &loaded.redactor;
    if !redactor.is_empty() {
        if let Err(errors) = &mut loaded.outcome {
            errors.iter_mut().for_each(|d| redactor.diagnostic(d));
        }
        loaded
            .warnings
            .iter_mut()
            .for_each(|d| redactor.diagnostic(d));
    }
    Some(loaded)
}

/// Whether `path` names the project's configuration: `prill.toml`, or any `.toml`.
fn is_config(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "prill.toml")
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

fn load_unredacted(
    source: Source,
    env: &Env,
    unrecognized: Unrecognized,
    limits: &Limits,
) -> Option<Loaded> {
    let path = source.path.as_path();
    let is_config = is_config(path);
    let syntax = Syntax::from_path(path).unwrap_or_else(|| sniff(&source.text));
    let (parsed, redactor) = if is_config {
        (syntax::toml::parse(&source), Redactor::default())
    } else {
        let parsed = syntax::parse_with(&source, syntax, env, limits);
        let redactor = Redactor::new(&parsed.environment, env);
        (parsed.tree, redactor)
    };
    let mut tree = match parsed {
        Ok(tree) => tree,
        Err(diags) => {
            return Some(Loaded {
                source,
                syntax,
                tree: None,
                dialect: None,
                outcome: Err(diags),
                warnings: Vec::new(),
                redactor,
            });
        }
    };
    let dialect = if is_config {
        Some(Dialect::Config)
    } else {
        detect(&tree)
    };
    let Some(dialect) = dialect else {
        let near = near_miss(&tree);
        if unrecognized == Unrecognized::Skip && near.is_none() {
            return None;
        }
        let d = Diagnostic::new(
            "unknown-dialect",
            "",
            "cannot tell which kind of test file this is",
        )
        .at(first_byte(&tree))
        .expected(
            "`agent` and `interactions` (data-driven), `tests` (Sentinel suite), or `model`, `inputs` and `assertions` (Sentinel spec)",
        )
        .maybe_help(near);
        return Some(Loaded {
            source,
            syntax,
            tree: Some(tree),
            dialect: None,
            outcome: Err(vec![d]),
            warnings: Vec::new(),
            redactor,
        });
    };
    if dialect == Dialect::DataDriven && syntax == Syntax::Hocon {
        let roots = syntax::hocon::substitution_roots(&source);
        crate::validate::data_driven::drop_substitution_sources(&mut tree, &roots);
    }
    if syntax == Syntax::Yaml && matches!(dialect, Dialect::SentinelSpec | Dialect::SentinelSuite) {
        // Anchor holders (`x-common: &common {...}`) have done their work once the
        // aliases are expanded; the tree, and `prill convert`'s output, go without them.
        crate::validate::sentinel::drop_anchor_holders(&mut tree);
    }
    let (outcome, warnings) = validate_with(&tree, dialect, &limits.providers);
    Some(Loaded {
        source,
        syntax,
        tree: Some(tree),
        dialect: Some(dialect),
        outcome,
        warnings,
        redactor,
    })
}

/// Validates a tree as `dialect`: the document or its errors, and the warnings.
pub fn validate(
    tree: &Node,
    dialect: Dialect,
) -> (Result<Document, Vec<Diagnostic>>, Vec<Diagnostic>) {
    validate_with(tree, dialect, &BTreeMap::new())
}

/// [`validate`], where a test's `provider` may also name one of `providers` (the
/// names of `prill.toml`'s `[providers]`, with their kinds).
pub fn validate_with(
    tree: &Node,
    dialect: Dialect,
    providers: &BTreeMap<String, ProviderKind>,
) -> (Result<Document, Vec<Diagnostic>>, Vec<Diagnostic>) {
    let style = match dialect {
        Dialect::SentinelSpec | Dialect::SentinelSuite => Style::Sentinel,
        Dialect::DataDriven | Dialect::Config | Dialect::RustSuite => Style::Plain,
    };
    let mut cx = Cx::new(style);
    cx.providers = providers.clone();
    let doc = match dialect {
        Dialect::DataDriven => {
            crate::validate::data_driven::validate(tree, &mut cx).map(Document::DataDriven)
        }
        Dialect::SentinelSpec => {
            crate::validate::sentinel::validate_spec(tree, &mut cx).map(Document::SentinelSpec)
        }
        Dialect::SentinelSuite => {
            crate::validate::sentinel::validate_suite(tree, &mut cx).map(Document::SentinelSuite)
        }
        Dialect::Config => crate::validate::config::validate(tree, &mut cx).map(Document::Config),
        // No file is a Rust suite (detection never names it): nothing validates as one.
        Dialect::RustSuite => None,
    };
    let (mut errors, mut warnings): (Vec<Diagnostic>, Vec<Diagnostic>) = cx
        .finish()
        .into_iter()
        .partition(|d| d.severity == Severity::Error);
    if let (Some(doc), true) = (&doc, errors.is_empty()) {
        warnings.extend(crate::validate::checkless::warnings(doc, tree));
    }
    let outcome = match doc {
        Some(doc) if errors.is_empty() => Ok(doc),
        _ => {
            if errors.is_empty() {
                errors.push(Diagnostic::new("invalid", "", "the file is not valid"));
            }
            errors.sort_by_key(|d| d.span.map(|s| s.start).unwrap_or(usize::MAX));
            Err(errors)
        }
    };
    (outcome, warnings)
}

/// The dialect a tree's top-level keys show, if any.
pub fn detect(tree: &Node) -> Option<Dialect> {
    let has = |k: &str| tree.get(k).is_some();
    if has("agent") || has("interactions") {
        Some(Dialect::DataDriven)
    } else if has("tests") {
        Some(Dialect::SentinelSuite)
    } else if has("assertions") || has("inputs") || has("model") {
        Some(Dialect::SentinelSpec)
    } else {
        None
    }
}

/// A suggestion when a top-level key looks like a misspelt dialect key.
fn near_miss(tree: &Node) -> Option<String> {
    const SIGNATURE: [&str; 6] = [
        "agent",
        "interactions",
        "tests",
        "assertions",
        "inputs",
        "model",
    ];
    tree.as_object()?.iter().find_map(|(k, _)| {
        did_you_mean(&k.name, SIGNATURE).map(|hint| format!("`{}`: {hint}", k.name))
    })
}

fn first_byte(tree: &Node) -> Span {
    Span::new(tree.span.start, tree.span.start + 1.min(tree.span.len()))
}

/// A syntax guess for a file with no known extension.
fn sniff(text: &str) -> Syntax {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<serde_json::Value>(text).is_ok()
    {
        Syntax::Json
    } else if trimmed.starts_with('{') || trimmed.contains(" = ") || trimmed.starts_with('#') {
        Syntax::Hocon
    } else {
        Syntax::Yaml
    }
}
