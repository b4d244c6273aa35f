//! The validation context: walks a [`Node`] tree, collects every diagnostic, and
//! phrases each one in the dialect's own style.
//!
//! Data-driven and config files get plain messages (`expected a string, found 3`).
//! Sentinel files also get a block in the style of the Sentinel spec's examples, for
//! the rules the DSL itself has:
//!
//! ```text
//! 1 validation error for TestSpec
//! model_config.temperature
//!   Input should be less than or equal to 2.0 [type=less_than_equal, input_value=3.5]
//! ```
//!
//! As pydantic raises one error for a whole file, the count heads the first block of
//! the file (`2 validation errors for TestSpec`) and the later ones carry only their
//! own entry. Rules that are Prill's own (unknown keys, duplicate tools, ...) get no
//! block, and say that they are Prill's ([`Cx::own`]).

use crate::diag::{Diagnostic, did_you_mean};
use crate::node::{Key, Node, Value, cut};

/// The most diagnostics a file gets: past them, one more says how many others there
/// are. A file of a million wrong values is refused as fast as one of ten, and its
/// report stays readable.
pub(crate) const MAX_DIAGNOSTICS: usize = 200;

/// The diagnostic that stands for `dropped` diagnostics not shown, `errors` of them
/// errors.
fn too_many(dropped: usize, errors: usize) -> Diagnostic {
    let s = if dropped == 1 { "" } else { "s" };
    let d = Diagnostic::new(
        "too-many-problems",
        "",
        format!(
            "{dropped} more problem{s} in this file {} not shown: the first {MAX_DIAGNOSTICS} are; fix them and validate again",
            if dropped == 1 { "is" } else { "are" }
        ),
    );
    if errors == 0 { d.warning() } else { d }
}

/// How diagnostics are phrased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Plain messages only.
    Plain,
    /// Plain messages plus the Sentinel validation block.
    Sentinel,
}

/// Where a value sits: its full field path, and (for the Sentinel block) the root
/// model, the innermost model it belongs to, and its location from the root.
///
/// The path is a chain of segments shared with the parent, made into text only when a
/// diagnostic needs it: a valid file of 10,000 tests walks hundreds of thousands of
/// places and names none of them.
#[derive(Debug, Clone)]
pub(crate) struct At {
    segments: Option<std::rc::Rc<Segment>>,
    pub(crate) root: &'static str,
    pub(crate) model: &'static str,
}

/// One step of a path, below its parent's.
#[derive(Debug)]
struct Segment {
    parent: Option<std::rc::Rc<Segment>>,
    part: Part,
}

/// A field name or a list index.
#[derive(Debug)]
enum Part {
    Key(Box<str>),
    Index(usize),
}

impl At {
    pub(crate) fn root(model: &'static str) -> Self {
        At {
            segments: None,
            root: model,
            model,
        }
    }

    fn below(&self, part: Part) -> At {
        At {
            segments: Some(std::rc::Rc::new(Segment {
                parent: self.segments.clone(),
                part,
            })),
            root: self.root,
            model: self.model,
        }
    }

    /// The location of field `name` below this one.
    pub(crate) fn key(&self, name: &str) -> At {
        self.below(Part::Key(name.into()))
    }

    /// The location of item `i` below this one.
    pub(crate) fn index(&self, i: usize) -> At {
        self.below(Part::Index(i))
    }

    /// Whether this is the root of the document (its path is empty).
    pub(crate) fn is_root(&self) -> bool {
        self.segments.is_none()
    }

    /// The parts from the root down.
    fn parts(&self) -> Vec<&Part> {
        let mut parts = Vec::new();
        let mut at = self.segments.as_deref();
        while let Some(segment) = at {
            parts.push(&segment.part);
            at = segment.parent.as_deref();
        }
        parts.reverse();
        parts
    }

    /// The full field path: `tests[2].assertions[0].regex_match`.
    pub(crate) fn path(&self) -> String {
        let mut path = String::new();
        for part in self.parts() {
            match part {
                Part::Key(name) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                }
                Part::Index(i) => {
                    use std::fmt::Write;
                    let _ = write!(path, "[{i}]");
                }
            }
        }
        path
    }

    /// The location from the root, one item a part: `tests.2.assertions.0`.
    pub(crate) fn loc(&self) -> Vec<String> {
        self.parts()
            .into_iter()
            .map(|part| match part {
                Part::Key(name) => name.to_string(),
                Part::Index(i) => i.to_string(),
            })
            .collect()
    }

    /// The same place, holding a value of another model (named in type errors).
    pub(crate) fn model(&self, model: &'static str) -> At {
        At {
            model,
            ..self.clone()
        }
    }
}

/// A Sentinel-style error kind: its `type=` tag and its sentence.
pub(crate) struct Pyd {
    pub(crate) kind: &'static str,
    pub(crate) sentence: String,
}

impl Pyd {
    pub(crate) fn new(kind: &'static str, sentence: impl Into<String>) -> Self {
        Pyd {
            kind,
            sentence: sentence.into(),
        }
    }
}

/// One entry of the Sentinel block: the root model and the lines of this error.
struct Entry {
    root: &'static str,
    lines: String,
}

/// Collects diagnostics for one file.
pub(crate) struct Cx {
    pub(crate) style: Style,
    /// At most [`MAX_DIAGNOSTICS`]; those past it are counted in `dropped`.
    pub(crate) diags: Vec<Diagnostic>,
    /// The diagnostics past [`MAX_DIAGNOSTICS`], not kept: how many, and how many of
    /// them errors.
    dropped: (usize, usize),
    /// Regular expressions already compiled in this file, or why each failed.
    pub(crate) regexes:
        std::collections::HashMap<String, Result<crate::model::sentinel::Pattern, String>>,
    /// The Sentinel block entry of each diagnostic that has one, by index into `diags`.
    entries: std::collections::HashMap<usize, Entry>,
    /// The providers of `prill.toml`'s `[providers]`, by name, that a test may name.
    pub(crate) providers: std::collections::BTreeMap<String, crate::model::provider::ProviderKind>,
}

impl Cx {
    pub(crate) fn new(style: Style) -> Self {
        Cx {
            style,
            diags: Vec::new(),
            dropped: (0, 0),
            regexes: std::collections::HashMap::new(),
            entries: std::collections::HashMap::new(),
            providers: std::collections::BTreeMap::new(),
        }
    }

    /// Keeps `d`, unless [`MAX_DIAGNOSTICS`] are kept already: then it is only counted.
    pub(crate) fn push(&mut self, d: Diagnostic) {
        if !self.full(d.severity) {
            self.diags.push(d);
        }
    }

    /// Whether the diagnostics are full: then one of `severity` is counted, not kept.
    fn full(&mut self, severity: crate::diag::Severity) -> bool {
        if self.diags.len() < MAX_DIAGNOSTICS {
            return false;
        }
        self.dropped.0 += 1;
        self.dropped.1 += usize::from(severity == crate::diag::Severity::Error);
        true
    }

    /// Every diagnostic in file order, each Sentinel block written out: the first one
    /// headed by the count of the whole file, as pydantic prints one error for it. Past
    /// [`MAX_DIAGNOSTICS`], the first ones in the file are kept and one more says how
    /// many are not shown.
    pub(crate) fn finish(self) -> Vec<Diagnostic> {
        let mut entries = self.entries;
        let (mut dropped, mut dropped_errors) = self.dropped;
        let mut all: Vec<(Diagnostic, Option<Entry>)> = self
            .diags
            .into_iter()
            .enumerate()
            .map(|(i, d)| (d, entries.remove(&i)))
            .collect();
        all.sort_by_key(|(d, _)| d.span.map(|s| s.start).unwrap_or(usize::MAX));
        if all.len() > MAX_DIAGNOSTICS {
            for (d, _) in all.drain(MAX_DIAGNOSTICS..) {
                dropped += 1;
                dropped_errors += usize::from(d.severity == crate::diag::Severity::Error);
            }
        }
        let more = (dropped > 0).then(|| too_many(dropped, dropped_errors));
        let count = all.iter().filter(|(_, e)| e.is_some()).count();
        let mut first = true;
        all.into_iter()
            .map(|(d, entry)| match entry {
                None => d,
                Some(entry) => {
                    let block = if std::mem::take(&mut first) {
                        let s = if count == 1 { "" } else { "s" };
                        format!(
                            "{count} validation error{s} for {}\n{}",
                            entry.root, entry.lines
                        )
                    } else {
                        entry.lines
                    };
                    let detail = match &d.detail {
                        Some(own) => format!("{block}\n{own}"),
                        None => block,
                    };
                    d.detail(detail)
                }
            })
            .chain(more)
            .collect()
    }

    /// Records a diagnostic for a rule that is Prill's own, stricter than Sentinel's
    /// loader: no Sentinel block, and in Sentinel files a line saying whose rule it is.
    pub(crate) fn own(&mut self, d: Diagnostic, at: &At, why: &str, found: Option<&Node>) {
        let d = if self.style == Style::Sentinel {
            d.detail(format!("Prill's rule: {why}"))
        } else {
            d
        };
        self.report(d, at, None, found);
    }

    /// How many errors (not warnings) have been recorded, those not kept included.
    pub(crate) fn errors(&self) -> usize {
        self.dropped.1
            + self
                .diags
                .iter()
                .filter(|d| d.severity == crate::diag::Severity::Error)
                .count()
    }

    /// Records a diagnostic. `pyd` gives the Sentinel block; `found` the offending value.
    pub(crate) fn report(
        &mut self,
        mut d: Diagnostic,
        at: &At,
        pyd: Option<Pyd>,
        found: Option<&Node>,
    ) {
        if self.full(d.severity) {
            return;
        }
        if let Some(node) = found
            && d.found.is_none()
        {
            d = d.found(node.preview(crate::diag::PREVIEW_CHARS));
        }
        if let (Style::Sentinel, Some(p)) = (self.style, pyd) {
            let input = match found {
                Some(node) => format!(", input_value={}", python_repr(node, 60)),
                None => String::new(),
            };
            let entry = format!("{}  {} [type={}{input}]", loc_line(at), p.sentence, p.kind);
            self.entry(at, entry);
        }
        self.diags.push(d);
    }

    /// Keeps the Sentinel block entry of the diagnostic about to be pushed.
    fn entry(&mut self, at: &At, lines: String) {
        self.entries.insert(
            self.diags.len(),
            Entry {
                root: at.root,
                lines,
            },
        );
    }

    /// A value of the wrong type, under a rule of the DSL's.
    pub(crate) fn type_error(&mut self, node: &Node, at: &At, expected: &str, pyd: Pyd) {
        self.report(wrong_type(node, at, expected), at, Some(pyd), Some(node));
    }

    /// A value of the wrong type, under a rule of Prill's own (see [`Cx::own`]).
    pub(crate) fn own_type_error(&mut self, node: &Node, at: &At, expected: &str, why: &str) {
        self.own(wrong_type(node, at, expected), at, why, Some(node));
    }

    /// A required field that is absent from `object` (the object's node).
    pub(crate) fn missing(&mut self, object: &Node, at: &At, name: &str, what: &str) {
        if self.full(crate::diag::Severity::Error) {
            return;
        }
        let field = at.key(name);
        let d = Diagnostic::new(
            "missing-field",
            field.path(),
            format!("missing required field `{name}`"),
        )
        .at(object_start(object))
        .expected(what.to_owned());
        if self.style == Style::Sentinel {
            let entry = format!(
                "{}  Field required [type=missing, input_value={}, input_type=dict]",
                loc_line(&field),
                python_repr(object, 60)
            );
            self.entry(&field, entry);
        }
        self.diags.push(d);
    }

    /// The object's entries, or a type error.
    pub(crate) fn object<'n>(&mut self, node: &'n Node, at: &At) -> Option<&'n [(Key, Node)]> {
        match &node.value {
            Value::Object(entries) => Some(entries),
            _ => {
                let model = at.model;
                self.type_error(
                    node,
                    at,
                    "an object",
                    Pyd::new(
                        "model_type",
                        format!("Input should be a valid dictionary or instance of {model}"),
                    ),
                );
                None
            }
        }
    }

    /// Reports every key of `entries` not in `allowed`, with a suggestion for near misses.
    /// `hint` may give a better suggestion for a specific key.
    pub(crate) fn unknown_keys(
        &mut self,
        entries: &[(Key, Node)],
        at: &At,
        allowed: &[&str],
        hint: impl Fn(&str) -> Option<String>,
    ) {
        self.unknown_keys_because(
            entries,
            at,
            allowed,
            hint,
            "Sentinel's loader ignores unknown keys, so a typo would go unnoticed",
        );
    }

    /// [`Cx::unknown_keys`], saying `why` the keys are refused in Sentinel files.
    pub(crate) fn unknown_keys_because(
        &mut self,
        entries: &[(Key, Node)],
        at: &At,
        allowed: &[&str],
        hint: impl Fn(&str) -> Option<String>,
        why: &str,
    ) {
        for (key, value) in entries {
            if allowed.contains(&key.name.as_str()) {
                continue;
            }
            let field = at.key(&key.name);
            let help = hint(&key.name).or_else(|| did_you_mean(&key.name, allowed.iter().copied()));
            let d = Diagnostic::new(
                "unknown-key",
                field.path(),
                format!("unknown key `{}`", key.name),
            )
            .at(key.span)
            .expected(format!("one of {}", list_names(allowed)))
            .found(&key.name)
            .maybe_help(help);
            self.own(d, &field, why, Some(value));
        }
    }

    /// A string, or a type error.
    pub(crate) fn string(&mut self, node: &Node, at: &At) -> Option<String> {
        match &node.value {
            Value::String(s) => Some(s.clone()),
            _ => {
                self.type_error(
                    node,
                    at,
                    "a string",
                    Pyd::new("string_type", "Input should be a valid string"),
                );
                None
            }
        }
    }

    /// A JSON object (any content), or a type error.
    pub(crate) fn dict(
        &mut self,
        node: &Node,
        at: &At,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        match node.to_json() {
            serde_json::Value::Object(map) => Some(map),
            _ => {
                self.type_error(
                    node,
                    at,
                    "an object",
                    Pyd::new("dict_type", "Input should be a valid dictionary"),
                );
                None
            }
        }
    }

    /// A list of strings, or errors for the list and for each item that is not a string.
    pub(crate) fn string_list(&mut self, node: &Node, at: &At) -> Option<Vec<String>> {
        let items = self.list(node, at)?;
        let strings: Vec<Option<String>> = items
            .iter()
            .enumerate()
            .map(|(i, item)| self.string(item, &at.index(i)))
            .collect();
        strings.into_iter().collect()
    }

    /// A string of at least one character, or an error.
    pub(crate) fn nonempty_string(&mut self, node: &Node, at: &At) -> Option<String> {
        let s = self.string(node, at)?;
        if s.is_empty() {
            let d = Diagnostic::new("empty-string", at.path(), "must not be empty")
                .at(node.span)
                .expected("at least 1 character");
            self.report(
                d,
                at,
                Some(Pyd::new(
                    "string_too_short",
                    "String should have at least 1 character",
                )),
                Some(node),
            );
            return None;
        }
        Some(s)
    }

    /// A boolean, or a type error.
    pub(crate) fn boolean(&mut self, node: &Node, at: &At) -> Option<bool> {
        match &node.value {
            Value::Bool(b) => Some(*b),
            _ => {
                self.type_error(
                    node,
                    at,
                    "a boolean",
                    Pyd::new("bool_type", "Input should be a valid boolean"),
                );
                None
            }
        }
    }

    /// A number written in quotes, which pydantic's lax mode (Sentinel's loader) would
    /// read as a number: an error of Prill's own. Whether it was one.
    fn quoted_number(&mut self, node: &Node, at: &At, expected: &str) -> bool {
        let Value::String(s) = &node.value else {
            return false;
        };
        let number = s.trim().parse::<f64>().is_ok_and(f64::is_finite);
        if self.style != Style::Sentinel || !number {
            return false;
        }
        let d = wrong_type(node, at, expected)
            .help(format!("write the number without quotes: {}", s.trim()));
        self.own(
            d,
            at,
            "Sentinel's loader reads a quoted number as a number",
            Some(node),
        );
        true
    }

    /// An integer, or a type error. A float with a fractional part is refused.
    pub(crate) fn integer(&mut self, node: &Node, at: &At) -> Option<i64> {
        if self.quoted_number(node, at, "an integer") {
            return None;
        }
        if let Value::Number(n) = &node.value {
            if let Some(i) = n.as_i64() {
                return Some(i);
            }
            if n.is_u64() {
                // Past i64::MAX: an integer still, but too large to hold.
                self.range_error(
                    node,
                    at,
                    &format!("at most {}", i64::MAX),
                    Pyd::new(
                        "less_than_equal",
                        format!("Input should be less than or equal to {}", i64::MAX),
                    ),
                );
                return None;
            }
            if let Some(f) = n.as_f64() {
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    // `5.0` is a whole number: accepted as pydantic accepts it.
                    return Some(f as i64);
                }
                self.type_error(
                    node,
                    at,
                    "an integer",
                    Pyd::new(
                        "int_from_float",
                        "Input should be a valid integer, got a number with a fractional part",
                    ),
                );
                return None;
            }
        }
        self.type_error(
            node,
            at,
            "an integer",
            Pyd::new("int_type", "Input should be a valid integer"),
        );
        None
    }

    /// A number, or a type error.
    pub(crate) fn number(&mut self, node: &Node, at: &At) -> Option<f64> {
        if self.quoted_number(node, at, "a number") {
            return None;
        }
        match &node.value {
            Value::Number(n) => n.as_f64(),
            _ => {
                self.type_error(
                    node,
                    at,
                    "a number",
                    Pyd::new("float_type", "Input should be a valid number"),
                );
                None
            }
        }
    }

    /// A number greater than zero (a duration in seconds), or an error.
    pub(crate) fn positive_seconds(&mut self, node: &Node, at: &At) -> Option<f64> {
        let seconds = self.number(node, at)?;
        if seconds <= 0.0 {
            self.range_error(
                node,
                at,
                "greater than 0",
                Pyd::new("greater_than", "Input should be greater than 0"),
            );
            return None;
        }
        Some(seconds)
    }

    /// A whole number greater than zero, or an error.
    pub(crate) fn positive(&mut self, node: &Node, at: &At) -> Option<u64> {
        let n = self.integer(node, at)?;
        if n <= 0 {
            self.range_error(
                node,
                at,
                "greater than 0",
                Pyd::new("greater_than", "Input should be greater than 0"),
            );
            return None;
        }
        u64::try_from(n).ok()
    }

    /// A list, or a type error.
    pub(crate) fn list<'n>(&mut self, node: &'n Node, at: &At) -> Option<&'n [Node]> {
        match &node.value {
            Value::Array(items) => Some(items),
            _ => {
                self.type_error(
                    node,
                    at,
                    "a list",
                    Pyd::new("list_type", "Input should be a valid list"),
                );
                None
            }
        }
    }

    /// A list with at least one item, or an error.
    pub(crate) fn nonempty_list<'n>(&mut self, node: &'n Node, at: &At) -> Option<&'n [Node]> {
        let items = self.list(node, at)?;
        if items.is_empty() {
            let d = Diagnostic::new("empty-list", at.path(), "must have at least one item")
                .at(node.span)
                .expected("at least 1 item");
            self.report(
                d,
                at,
                Some(Pyd::new(
                    "too_short",
                    "List should have at least 1 item after validation, not 0",
                )),
                Some(node),
            );
            return None;
        }
        Some(items)
    }

    /// A value out of its allowed range.
    pub(crate) fn range_error(&mut self, node: &Node, at: &At, rule: &str, pyd: Pyd) {
        let d = Diagnostic::new("out-of-range", at.path(), format!("must be {rule}"))
            .at(node.span)
            .expected(rule.to_owned());
        self.report(d, at, Some(pyd), Some(node));
    }

    /// A string that is not one of `allowed`.
    pub(crate) fn choice(
        &mut self,
        node: &Node,
        at: &At,
        allowed: &[&str],
        pyd: bool,
    ) -> Option<String> {
        let s = self.string(node, at)?;
        if allowed.contains(&s.as_str()) {
            return Some(s);
        }
        let d = Diagnostic::new("invalid-value", at.path(), format!("unknown value `{s}`"))
            .at(node.span)
            .expected(format!("one of {}", list_names(allowed)))
            .maybe_help(did_you_mean(&s, allowed.iter().copied()));
        let p = pyd.then(|| {
            Pyd::new(
                "literal_error",
                format!("Input should be {}", python_choices(allowed)),
            )
        });
        self.report(d, at, p, Some(node));
        None
    }
}

/// The entry named `name`, unless it is absent or `null`.
pub(crate) fn present<'n>(node: &'n Node, name: &str) -> Option<&'n Node> {
    node.get(name).filter(|n| n.value != Value::Null)
}

/// An optional field: `Some(None)` when absent or null, `Some(Some(v))` when valid,
/// `None` on error (already reported).
pub(crate) fn optional<T>(
    node: &Node,
    name: &str,
    f: impl FnOnce(&Node) -> Option<T>,
) -> Option<Option<T>> {
    match present(node, name) {
        None => Some(None),
        Some(n) => f(n).map(Some),
    }
}

/// `expected X, found Y` at the value.
fn wrong_type(node: &Node, at: &At, expected: &str) -> Diagnostic {
    Diagnostic::new(
        "invalid-type",
        at.path(),
        format!("expected {expected}, found {}", a_type(node)),
    )
    .at(node.span)
    .expected(expected)
}

/// The location line of a block entry, with its line break; none for the root itself.
fn loc_line(at: &At) -> String {
    let loc = at.loc();
    if loc.is_empty() {
        String::new()
    } else {
        format!("{}\n", loc.join("."))
    }
}

/// Where to point for a problem with a whole object: its first byte.
fn object_start(node: &Node) -> crate::node::Span {
    crate::node::Span::new(node.span.start, node.span.start + 1.min(node.span.len()))
}

/// `a string`, `an integer`, ... for a found value.
pub(crate) fn a_type(node: &Node) -> String {
    match &node.value {
        Value::Null => "null".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        Value::Array(_) => "a list".to_owned(),
        Value::Number(_) | Value::Bool(_) | Value::String(_) => {
            let t = node.type_name();
            let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {t} {}", node.preview(40))
        }
    }
}

/// `` `a`, `b` or `c` ``.
pub(crate) fn list_names(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n => format!("{} or {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

/// `'a', 'b' or 'c'`, as pydantic lists literal choices.
fn python_choices(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n => format!("{} or {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

/// A value in Python's repr style, as pydantic shows `input_value`, cut to `max` characters.
pub(crate) fn python_repr(node: &Node, max: usize) -> String {
    fn go(node: &Node, out: &mut String) {
        match &node.value {
            Value::Null => out.push_str("None"),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::Number(n) => out.push_str(&n.to_string()),
            Value::String(s) => {
                out.push('\'');
                for ch in s.chars() {
                    match ch {
                        '\'' => out.push_str("\\'"),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\t' => out.push_str("\\t"),
                        c => out.push(c),
                    }
                }
                out.push('\'');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    go(item, out);
                }
                out.push(']');
            }
            Value::Object(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&format!("'{}': ", k.name));
                    go(v, out);
                }
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    go(node, &mut out);
    if out.chars().count() > max {
        return cut(&out, max);
    }
    out
}
