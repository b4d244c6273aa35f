//! Checks that run on HOCON text before the `hocon` crate resolves it, so that a
//! small hostile file is refused fast instead of exhausting the stack or memory.
//!
//! - **Depth.** The crate refuses brackets nested deeper than 128, but a dotted key
//!   (`x.a.a.a... = 1`) builds the same depth without a bracket: 2,000 parts aborted
//!   the process. [`too_deep`] counts every part of a dotted key as a level.
//! - **Includes.** Every file an `include` would read is looked at first: it must be
//!   a regular file (a FIFO would block, `/dev/zero` never ends), the file and all
//!   it includes must fit in [`Limits::max_input_bytes`], and with
//!   [`IncludeScope::Within`] it must lie inside the project's folder. Included text
//!   gets the same depth check.
//! - **Values.** An included file's values count with the including file's against
//!   [`HOCON_MAX_VALUES`], counted before it is tokenized (`syntax::values`).
//! - **Expansion.** `${...}` copies values, and copies of copies multiply: ten
//!   levels of ten substitutions is 10^10 values from a 692-byte file. [`expansion`]
//!   works out, from the text alone, an upper bound of what resolving would build,
//!   and refuses the file when it passes [`HOCON_MAX_EXPANDED_VALUES`] values or
//!   [`HOCON_MAX_EXPANDED_BYTES`] bytes, or when substitutions chain more than
//!   [`HOCON_MAX_SUBSTITUTION_DEPTH`] deep.
//!
//! Each check errs on the side of refusing: its bound may count a value twice, but
//! never counts one as free.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use hocon::{Token, TokenKind};

use super::Env;
use super::layout::{Def, Include, Layout, Step};
use super::position::token_spans;
use crate::diag::Diagnostic;
use crate::limits::{
    HOCON_MAX_DEPTH, HOCON_MAX_EXPANDED_BYTES, HOCON_MAX_EXPANDED_VALUES,
    HOCON_MAX_SUBSTITUTION_DEPTH, HOCON_MAX_VALUES, IncludeScope, Limits, human_bytes,
    read_regular,
};
use crate::node::Span;
use crate::source::Source;

/// The index of the first token at which nesting passes `max` levels, counting
/// each part of a dotted key as a level and starting from `base` levels.
///
/// It reads any token stream, valid or not, in one pass with no recursion. Where it
/// cannot tell whether text is a key, it counts it as one.
pub(super) fn too_deep(tokens: &[Token], base: usize, max: usize) -> Option<usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum Phase {
        /// Reading a key; `parts` so far.
        Key,
        /// After `=`, `:` or `+=`, or after a value: a value sits at `at`.
        Value { at: usize, seen: bool },
        /// Inside a list: items sit one level deeper than it.
        Items,
    }
    // Every open bracket: its depth and whether it is a list.
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let mut phase = Phase::Key;
    let mut parts = 0usize;
    // Inside an `include` directive, whose words are no key.
    let mut include = false;
    for (i, token) in tokens.iter().enumerate() {
        let current = stack.last().map_or(base, |&(d, _)| d);
        if include {
            if matches!(
                token.kind,
                TokenKind::Newline | TokenKind::Comma | TokenKind::RBrace
            ) {
                include = false;
            } else {
                continue;
            }
        }
        match token.kind {
            TokenKind::Unquoted | TokenKind::QuotedString | TokenKind::TripleQuotedString => {
                match phase {
                    Phase::Key
                        if parts == 0
                            && token.kind == TokenKind::Unquoted
                            && token.value == "include" =>
                    {
                        include = true
                    }
                    Phase::Key => {
                        parts += if token.kind == TokenKind::Unquoted {
                            1 + token.value.matches('.').count()
                        } else {
                            1
                        };
                        if current + parts > max {
                            return Some(i);
                        }
                    }
                    Phase::Value { at, .. } => phase = Phase::Value { at, seen: true },
                    Phase::Items => {}
                }
            }
            TokenKind::Substitution => {
                if let Phase::Value { at, .. } = phase {
                    phase = Phase::Value { at, seen: true };
                }
            }
            TokenKind::Equals | TokenKind::Colon | TokenKind::PlusEquals => {
                if phase == Phase::Key {
                    phase = Phase::Value {
                        at: current + parts.max(1),
                        seen: false,
                    };
                    parts = 0;
                }
            }
            TokenKind::LBrace | TokenKind::LBracket => {
                let depth = match phase {
                    Phase::Key if stack.is_empty() && parts == 0 => base,
                    Phase::Key => current + parts.max(1),
                    Phase::Value { at, .. } => at,
                    Phase::Items => current + 1,
                };
                if depth > max {
                    return Some(i);
                }
                let list = token.kind == TokenKind::LBracket;
                stack.push((depth, list));
                phase = if list { Phase::Items } else { Phase::Key };
                parts = 0;
            }
            TokenKind::RBrace | TokenKind::RBracket => {
                let closed = stack.pop().map_or(base, |(d, _)| d);
                phase = match stack.last() {
                    Some(&(_, true)) => Phase::Items,
                    _ => Phase::Value {
                        at: closed,
                        seen: true,
                    },
                };
                parts = 0;
            }
            TokenKind::Newline | TokenKind::Comma => match phase {
                Phase::Value { seen: true, .. } => phase = Phase::Key,
                Phase::Key if token.kind == TokenKind::Comma => parts = 0,
                _ => {}
            },
            TokenKind::Eof => {}
        }
    }
    None
}

/// The refusal for text nested too deeply, at `span`.
pub(super) fn too_deep_error(span: Span, file: Option<&Path>) -> Diagnostic {
    let message = match file {
        None => format!("keys, objects and lists nest more than {HOCON_MAX_DEPTH} levels deep"),
        Some(file) => format!(
            "included file `{}` nests keys, objects and lists more than {HOCON_MAX_DEPTH} levels deep",
            file.display()
        ),
    };
    Diagnostic::new("too-deep", "", message)
        .at(span)
        .expected(format!(
            "at most {HOCON_MAX_DEPTH} levels, each part of a dotted key (`a.b.c`) counting as one"
        ))
}

/// A file an include read, as the later checks need it.
struct Included {
    tokens: Vec<Token>,
    layout: Layout,
    /// The object the include sits in, in the including document.
    prefix: Vec<Step>,
    /// The directive in the file being loaded that led to it.
    at: Span,
}

/// What the include walk found: the files included, or the refusal.
struct Walk<'a> {
    limits: &'a Limits,
    /// Bytes read so far, the including file's own first.
    total: u64,
    /// Values counted so far (an upper bound), the including file's own first.
    values: u64,
    /// The canonical paths of the files being read, outermost first, to stop cycles
    /// (the `hocon` crate reports those).
    stack: Vec<PathBuf>,
    files: Vec<Included>,
    /// The project folder, canonical, when includes are confined to it.
    root: Option<PathBuf>,
}

/// Runs every check on a file whose tokens are `tokens` and whose layout is
/// `layout`, and returns the names of the environment variables its substitutions
/// (and those of the files it includes) read from `env`.
pub(super) fn check(
    source: &Source,
    tokens: &[Token],
    layout: &Layout,
    env: &Env,
    limits: &Limits,
    values: u64,
) -> Result<Vec<String>, Box<Diagnostic>> {
    let root = match &limits.includes {
        IncludeScope::Anywhere => None,
        IncludeScope::Within(dir) => Some(dir.canonicalize().unwrap_or_else(|_| dir.clone())),
    };
    let mut walk = Walk {
        limits,
        total: source.text.len() as u64,
        values,
        stack: Vec::new(),
        files: Vec::new(),
        root,
    };
    if let Ok(canonical) = source.path.canonicalize() {
        walk.stack.push(canonical);
    }
    let base_dir = source.path.parent().filter(|d| !d.as_os_str().is_empty());
    for include in &layout.include_list {
        walk.include(include, base_dir, include.span, &include.path)?;
    }

    let mut written: Vec<Written> = layout
        .defs
        .iter()
        .map(|def| Written {
            def: def.clone(),
            prefix: Vec::new(),
            at: None,
        })
        .collect();
    for file in &walk.files {
        for def in &file.layout.defs {
            let mut path = file.prefix.clone();
            path.extend(def.path.iter().cloned());
            written.push(Written {
                def: Def {
                    path,
                    ..def.clone()
                },
                prefix: keys(&file.prefix),
                at: Some(file.at),
            });
        }
    }
    expansion(written, env)?;

    let mut names: Vec<String> = Vec::new();
    let all = tokens
        .iter()
        .chain(walk.files.iter().flat_map(|f| &f.tokens));
    for token in all.filter(|t| t.kind == TokenKind::Substitution) {
        let Some(subst) = &token.subst else { continue };
        let name: String = subst
            .segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(".");
        if env.get(&name).is_some() && !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

impl Walk<'_> {
    /// Looks at what `include` would read, relative to `base_dir`; `at` is the
    /// directive in the file being loaded that led here, and `prefix` the object
    /// the included keys land in.
    fn include(
        &mut self,
        include: &Include,
        base_dir: Option<&Path>,
        at: Span,
        prefix: &[Step],
    ) -> Result<(), Box<Diagnostic>> {
        if include.target.is_empty() {
            return Ok(());
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        let base = match base_dir {
            Some(dir) if !include.is_file => dir.to_path_buf(),
            _ => cwd,
        };
        let path = base.join(&include.target);
        let candidates: Vec<PathBuf> = if path.extension().is_some() {
            vec![path]
        } else {
            ["properties", "json", "conf"]
                .iter()
                .map(|ext| path.with_extension(ext))
                .collect()
        };
        for candidate in candidates {
            // What does not exist is left to the crate: optional includes may be absent.
            let Ok(meta) = std::fs::metadata(&candidate) else {
                continue;
            };
            let canonical = candidate
                .canonicalize()
                .unwrap_or_else(|_| candidate.clone());
            if let Some(root) = &self.root
                && !canonical.starts_with(root)
            {
                return Err(Diagnostic::new(
                    "include-outside-project",
                    "",
                    format!(
                        "include `{}` reads `{}`, outside the project folder `{}`",
                        include.target,
                        canonical.display(),
                        root.display()
                    ),
                )
                .at(at)
                .help("`includes = \"project\"` in prill.toml allows only files inside the folder that holds it").into());
            }
            if self.stack.contains(&canonical) {
                continue;
            }
            let remaining = self.limits.max_input_bytes.saturating_sub(self.total);
            if meta.is_file() && meta.len() > remaining {
                return Err(self.too_large(include, at).into());
            }
            let bytes = match read_regular(&candidate, remaining) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                    return Err(self.too_large(include, at).into());
                }
                Err(e) => {
                    return Err(Diagnostic::new(
                        "unreadable-include",
                        "",
                        format!("include `{}` cannot be read: {e}", candidate.display()),
                    )
                    .at(at)
                    .into());
                }
            };
            self.total += bytes.len() as u64;
            // Text that is not UTF-8 or not HOCON is left to the crate to report.
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let depth_base = prefix.len();
            if candidate.extension().is_some_and(|e| e == "properties") {
                let deepest = text
                    .lines()
                    .map(|l| {
                        l.split(['=', ':'])
                            .next()
                            .unwrap_or("")
                            .matches('.')
                            .count()
                            + 1
                    })
                    .max()
                    .unwrap_or(0);
                if depth_base + deepest > HOCON_MAX_DEPTH {
                    return Err(too_deep_error(at, Some(&candidate)).into());
                }
                continue;
            }
            // Counted before it is tokenized: tokens cost memory by the value.
            let budget = HOCON_MAX_VALUES.saturating_sub(self.values);
            match super::super::values::hocon_within(&text, budget) {
                Ok(values) => self.values += values,
                Err(_) => return Err(super::super::values::hocon_too_many(at).into()),
            }
            let Ok(tokens) = hocon::tokenize(&text) else {
                continue;
            };
            if too_deep(&tokens, depth_base, HOCON_MAX_DEPTH).is_some() {
                return Err(too_deep_error(at, Some(&candidate)).into());
            }
            let source = Source::new(&candidate, text);
            let spans = token_spans(&source, &tokens);
            let layout = Layout::build(&tokens, &spans);
            let nested: Vec<Include> = layout.include_list.clone();
            self.stack.push(canonical);
            for inner in &nested {
                let mut inner_prefix = prefix.to_vec();
                inner_prefix.extend(inner.path.iter().cloned());
                self.include(inner, candidate.parent(), at, &inner_prefix)?;
            }
            self.stack.pop();
            self.files.push(Included {
                tokens,
                layout,
                prefix: prefix.to_vec(),
                at,
            });
        }
        Ok(())
    }

    fn too_large(&self, include: &Include, at: Span) -> Diagnostic {
        Diagnostic::new(
            "too-large",
            "",
            format!(
                "with include `{}`, the file and its includes hold more than {}",
                include.target,
                human_bytes(self.limits.max_input_bytes)
            ),
        )
        .at(at)
        .help("raise `max_input_bytes` in prill.toml")
    }
}

/// A count of values and bytes, saturating, and the longest chain of
/// substitutions behind them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Weight {
    values: u64,
    bytes: u64,
    chain: usize,
}

impl Weight {
    fn add(self, other: Weight) -> Weight {
        Weight {
            values: self.values.saturating_add(other.values),
            bytes: self.bytes.saturating_add(other.bytes),
            chain: self.chain.max(other.chain),
        }
    }

    fn over(self) -> bool {
        self.values > HOCON_MAX_EXPANDED_VALUES || self.bytes > HOCON_MAX_EXPANDED_BYTES
    }
}

/// A value written in the file or in a file it includes.
struct Written {
    def: Def,
    /// For an included file: the keys of the object it is included in, which its
    /// substitutions are looked up under first.
    prefix: Vec<String>,
    /// For an included file: the directive in the file being loaded that led to it.
    at: Option<Span>,
}

/// Why the estimate stopped, and where.
enum Refusal {
    Chain(Span),
    Over(Span),
}

/// The expansion estimate over every value written.
///
/// The weight of a path is what every value written at it or below it holds, plus,
/// for each substitution in them, the weight of the path it names. Values are
/// visited in the order they were written, and a substitution that names a path
/// being weighed (`a = ${a}${a}`, HOCON's self-reference) gets what that path held
/// so far, which is what HOCON gives it.
fn expansion(written: Vec<Written>, env: &Env) -> Result<(), Box<Diagnostic>> {
    let mut est = Estimate::new(written, env);
    let mut total = Weight::default();
    for i in 0..est.written.len() {
        let result = est.def(i, 0).and_then(|weight| {
            total = total.add(weight);
            if total.over() {
                Err(Refusal::Over(est.span_of(i, None)))
            } else {
                Ok(())
            }
        });
        if let Err(refusal) = result {
            return Err(refusal_error(refusal).into());
        }
    }
    Ok(())
}

fn refusal_error(refusal: Refusal) -> Diagnostic {
    match refusal {
        Refusal::Chain(span) => Diagnostic::new(
            "substitution-too-deep",
            "",
            format!(
                "substitutions refer through more than {HOCON_MAX_SUBSTITUTION_DEPTH} levels"
            ),
        )
        .at(span)
        .expected(format!(
            "a chain of at most {HOCON_MAX_SUBSTITUTION_DEPTH} substitutions (`a = ${{b}}`, `b = ${{c}}`, ...)"
        )),
        Refusal::Over(span) => Diagnostic::new(
            "substitution-expansion",
            "",
            format!(
                "substitutions expand to more than {HOCON_MAX_EXPANDED_VALUES} values or {}",
                human_bytes(HOCON_MAX_EXPANDED_BYTES)
            ),
        )
        .at(span)
        .help("each `${...}` copies what it names, and copies of copies multiply"),
    }
}

struct Estimate<'a> {
    written: Vec<Written>,
    /// Every value's path with its index, sorted, so that a subtree is one run.
    sorted: Vec<(Vec<String>, usize)>,
    env: &'a Env,
    memo_def: Vec<Option<Weight>>,
    memo_path: HashMap<Vec<String>, Weight>,
    /// Paths being weighed, with what they held so far.
    partial: HashMap<Vec<String>, Weight>,
}

/// A path as substitutions name it: keys only. A list index becomes text that no
/// substitution path can spell.
fn keys(path: &[Step]) -> Vec<String> {
    path.iter()
        .map(|s| match s {
            Step::Key(k) => k.clone(),
            Step::Index(i) => format!("\0[{i}]"),
        })
        .collect()
}

impl<'a> Estimate<'a> {
    fn new(written: Vec<Written>, env: &'a Env) -> Self {
        let mut sorted: Vec<(Vec<String>, usize)> = written
            .iter()
            .enumerate()
            .map(|(i, w)| (keys(&w.def.path), i))
            .collect();
        sorted.sort();
        Estimate {
            memo_def: vec![None; written.len()],
            written,
            sorted,
            env,
            memo_path: HashMap::new(),
            partial: HashMap::new(),
        }
    }

    /// Where to point for value `i`: the substitution's own span in this file, or
    /// the include directive that brought the value in.
    fn span_of(&self, i: usize, subst: Option<Span>) -> Span {
        let w = &self.written[i];
        match (w.at, subst) {
            (Some(at), _) => at,
            (None, Some(span)) => span,
            (None, None) => w.def.refs.first().map_or(Span::new(0, 0), |r| r.1),
        }
    }

    /// The indices of the values written at `path` or below it, in file order.
    fn subtree(&self, path: &[String]) -> Vec<usize> {
        let start = self.sorted.partition_point(|(p, _)| p.as_slice() < path);
        let mut found: Vec<usize> = self.sorted[start..]
            .iter()
            .take_while(|(p, _)| p.starts_with(path))
            .map(|(_, i)| *i)
            .collect();
        found.sort_unstable();
        found
    }

    fn written_at(&self, path: &[String]) -> bool {
        self.sorted
            .binary_search_by(|(p, _)| p.as_slice().cmp(path))
            .is_ok()
    }

    /// What value `i` holds once its substitutions are expanded.
    fn def(&mut self, i: usize, depth: usize) -> Result<Weight, Refusal> {
        if let Some(w) = self.memo_def[i] {
            return Ok(w);
        }
        let def = &self.written[i].def;
        let mut weight = Weight {
            values: def.values,
            bytes: def.bytes,
            chain: 0,
        };
        let refs = def.refs.clone();
        let prefix = self.written[i].prefix.clone();
        for (target, span) in refs {
            if depth >= HOCON_MAX_SUBSTITUTION_DEPTH {
                return Err(Refusal::Chain(self.span_of(i, Some(span))));
            }
            let mut named = prefix.clone();
            named.extend(target.iter().cloned());
            let target = if !prefix.is_empty() && !self.subtree(&named).is_empty() {
                named
            } else {
                target
            };
            let copied = self.path(&target, depth + 1)?;
            weight = weight.add(copied);
            weight.chain = weight.chain.max(copied.chain + 1);
            if weight.chain > HOCON_MAX_SUBSTITUTION_DEPTH {
                return Err(Refusal::Chain(self.span_of(i, Some(span))));
            }
            if weight.over() {
                return Err(Refusal::Over(self.span_of(i, Some(span))));
            }
        }
        self.memo_def[i] = Some(weight);
        Ok(weight)
    }

    /// What the path `target` holds once expanded.
    fn path(&mut self, target: &[String], depth: usize) -> Result<Weight, Refusal> {
        if let Some(w) = self.partial.get(target) {
            return Ok(*w);
        }
        if let Some(w) = self.memo_path.get(target) {
            return Ok(*w);
        }
        let below = self.subtree(target);
        if below.is_empty() {
            // Not written here: below a value that a substitution gave (it holds no
            // more than that value), or from the environment.
            if let Some(n) = (1..target.len())
                .rev()
                .find(|&n| self.written_at(&target[..n]))
            {
                let owner = target[..n].to_vec();
                return self.path(&owner, depth);
            }
            let name = target.join(".");
            return Ok(self.env.get(&name).map_or(Weight::default(), |v| Weight {
                values: 1,
                bytes: v.len() as u64,
                chain: 0,
            }));
        }
        self.partial.insert(target.to_vec(), Weight::default());
        for i in below {
            let w = self.def(i, depth)?;
            let sum = self.partial.get(target).copied().unwrap_or_default().add(w);
            if sum.over() {
                return Err(Refusal::Over(self.span_of(i, None)));
            }
            self.partial.insert(target.to_vec(), sum);
        }
        let total = self.partial.remove(target).unwrap_or_default();
        self.memo_path.insert(target.to_vec(), total);
        Ok(total)
    }
}
