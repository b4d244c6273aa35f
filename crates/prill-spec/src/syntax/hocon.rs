//! HOCON text to a located [`Node`] tree.
//!
//! The `hocon` crate (package `hocon-parser`) gives the resolved value: it knows
//! HOCON's semantics (includes, substitutions, object merging, `+=`, value
//! concatenation). It keeps no positions, so a second pass of our own walks the
//! crate's token stream and records, for every key path written in this file, the
//! span of its key and of its value. The resolved value is then converted into a
//! [`Node`] by looking each path up in that map. A path that is not written
//! literally in this file (it came from an include or a substitution) takes the
//! span of the include directive or of the nearest written ancestor.
//!
//! `position` turns the crate's token positions into byte spans, and `layout`
//! is the pass that maps key paths to spans.

mod guard;
mod layout;
mod position;

use std::path::Path;

use hocon::{HoconError, HoconValue, ParseOptions, ScalarType, Token, TokenKind};

use self::layout::{Layout, Step};
use self::position::{offset_of, token_spans};
use super::{Env, Parsed};
use crate::diag::Diagnostic;
use crate::limits::{HOCON_MAX_DEPTH, Limits};
use crate::node::{Key, Node, Span, Value};
use crate::source::Source;

/// The environment variables that `source`'s substitutions would read from `env`:
/// every `${X}` or `${?X}` whose name is set in `env`, in order, without repeats.
///
/// `prill convert` uses this so that it never writes a secret from the environment
/// into converted text without being told to.
pub fn environment_references(source: &Source, env: &Env) -> Vec<String> {
    if super::values::hocon(&source.text).is_err() {
        return Vec::new();
    }
    let Ok(tokens) = hocon::tokenize(&source.text) else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for token in tokens.iter().filter(|t| t.kind == TokenKind::Substitution) {
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
    names
}

/// The top-level keys that `source`'s substitutions refer to: the first segment of
/// every `${a.b}` or `${?a}`, in order, without repeats. A substitution's path always
/// starts at the document root, so `common = {...}` followed by `${common}` names
/// `common` here. Environment variables appear too, as nothing tells them apart.
pub fn substitution_roots(source: &Source) -> Vec<String> {
    if super::values::hocon(&source.text).is_err() {
        return Vec::new();
    }
    let Ok(tokens) = hocon::tokenize(&source.text) else {
        return Vec::new();
    };
    let mut roots: Vec<String> = Vec::new();
    for token in tokens.iter().filter(|t| t.kind == TokenKind::Substitution) {
        let Some(first) = token.subst.as_ref().and_then(|s| s.segments.first()) else {
            continue;
        };
        if !roots.contains(&first.text) {
            roots.push(first.text.clone());
        }
    }
    roots
}

/// Parses `source` as HOCON, resolving includes relative to its path and
/// substitutions from the file and from `env` (never from the process environment),
/// within the default [`Limits`].
///
/// A syntax error gives one diagnostic with code `syntax`; a required substitution
/// that is set neither in the file nor in `env` gives `unresolved-substitution`; a
/// missing `include required(...)` gives `missing-include`.
pub fn parse(source: &Source, env: &Env) -> Result<Node, Vec<Diagnostic>> {
    parse_with(source, env, &Limits::default()).tree
}

/// [`parse`] within `limits`. Before the text reaches the `hocon` crate, it is
/// refused when keys (each part of a dotted key counting as a level), objects and
/// lists nest more than [`HOCON_MAX_DEPTH`] deep, when an include names something
/// other than a regular file or leaves the allowed folder, when the file and its
/// includes pass `limits.max_input_bytes`, or when its substitutions would expand
/// past the caps in [`crate::limits`].
pub fn parse_with(source: &Source, env: &Env, limits: &Limits) -> Parsed {
    let mut environment = Vec::new();
    let tree = parse_guarded(source, env, limits, &mut environment);
    Parsed { tree, environment }
}

fn parse_guarded(
    source: &Source,
    env: &Env,
    limits: &Limits,
    environment: &mut Vec<String>,
) -> Result<Node, Vec<Diagnostic>> {
    let text: &str = &source.text;
    let values = super::values::hocon(text).map_err(|d| vec![*d])?;
    let tokens = hocon::tokenize(text)
        .map_err(|e| vec![syntax_error(source, &[], &[], &e.message, e.line, e.col)])?;
    let spans = token_spans(source, &tokens);
    if let Some(i) = guard::too_deep(&tokens, 0, HOCON_MAX_DEPTH) {
        let span = spans.get(i).copied().unwrap_or_default();
        return Err(vec![guard::too_deep_error(span, None)]);
    }
    let layout = Layout::build(&tokens, &spans);
    *environment =
        guard::check(source, &tokens, &layout, env, limits, values).map_err(|d| vec![*d])?;

    let mut options = ParseOptions::defaults()
        .with_env(env.vars().clone())
        .with_origin_description(source.name());
    if let Some(dir) = source.path.parent().filter(|d| !d.as_os_str().is_empty()) {
        options = options.with_base_dir(dir.to_path_buf());
    }

    on_big_stack(|| resolve(source, &tokens, &spans, &layout, options))
}

/// The stack the `hocon` crate resolves on. Its structure builder recurses a few
/// frames per level of nesting; a debug build needs about 20 KiB a level, so a
/// library caller's 2 MiB thread could not hold the 128 levels [`HOCON_MAX_DEPTH`]
/// allows. Only the pages touched are ever committed.
const RESOLVE_STACK: usize = 64 * 1024 * 1024;

/// Runs `f` on a thread of its own with a [`RESOLVE_STACK`] stack (or here, when no
/// thread can be started). A panic inside the crate becomes a diagnostic, not a crash.
fn on_big_stack(
    f: impl FnOnce() -> Result<Node, Vec<Diagnostic>> + Send,
) -> Result<Node, Vec<Diagnostic>> {
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("hocon".to_owned())
            .stack_size(RESOLVE_STACK)
            .spawn_scoped(scope, f);
        match spawned {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(vec![Diagnostic::new(
                    "internal",
                    "",
                    "the HOCON parser failed on this file (a bug in the `hocon` crate)",
                )])
            }),
            Err(_) => Err(vec![Diagnostic::new(
                "internal",
                "",
                "cannot start a thread to parse HOCON",
            )]),
        }
    })
}

/// The `hocon` crate's resolved value of `source` as a located tree.
fn resolve(
    source: &Source,
    tokens: &[Token],
    spans: &[Span],
    layout: &Layout,
    options: ParseOptions,
) -> Result<Node, Vec<Diagnostic>> {
    let text: &str = &source.text;
    match hocon::parse_string_with_options(text, options) {
        Ok(config) => {
            let fields = config
                .keys()
                .into_iter()
                .filter_map(|key| Some((key, config.get(&quote_key(key))?)));
            let entries = convert_fields(fields, &mut Vec::new(), layout);
            Ok(Node::new(Value::Object(entries), layout.root))
        }
        Err(HoconError::Parse(e)) => Err(vec![syntax_error(
            source, tokens, spans, &e.message, e.line, e.col,
        )]),
        Err(HoconError::Resolve(e)) => Err(vec![resolve_error(source, tokens, spans, layout, &e)]),
        Err(HoconError::Config(_)) => {
            let span = spans
                .iter()
                .zip(tokens)
                .find(|(_, t)| t.kind == TokenKind::LBracket)
                .map_or(Span::new(0, 0), |(s, _)| *s);
            Err(vec![
                Diagnostic::new(
                    "syntax",
                    "",
                    "the document root must be an object, not a list",
                )
                .at(span)
                .expected("an object")
                .found("a list"),
            ])
        }
        Err(other) => Err(vec![Diagnostic::new(
            "syntax",
            "",
            tidy_message(&other.to_string()),
        )]),
    }
}
// ---------------------------------------------------------------------------
// Conversion of the resolved value.
// ---------------------------------------------------------------------------

/// `key` quoted as one element of a `Config::get` path.
fn quote_key(key: &str) -> String {
    format!("\"{}\"", key.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The resolved `value` at `path` as a located node.
fn convert(value: &HoconValue, path: &mut Vec<Step>, layout: &Layout) -> Node {
    let span = layout.value_span(path);
    let value = match value {
        HoconValue::Object(map) => Value::Object(convert_fields(
            map.iter().map(|(k, v)| (k.as_str(), v)),
            path,
            layout,
        )),
        HoconValue::Array(items) => {
            let mut nodes = Vec::with_capacity(items.len());
            for (i, child) in items.iter().enumerate() {
                path.push(Step::Index(i));
                nodes.push(convert(child, path, layout));
                path.pop();
            }
            Value::Array(nodes)
        }
        HoconValue::Scalar(scalar) => match scalar.value_type {
            ScalarType::Null => Value::Null,
            ScalarType::Boolean => match scalar.raw.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                other => Value::String(other.to_owned()),
            },
            ScalarType::Number => match number(&scalar.raw) {
                Some(n) => Value::Number(n),
                None => Value::String(scalar.raw.clone()),
            },
            _ => Value::String(scalar.raw.clone()),
        },
        // A fully resolved parse holds no placeholders.
        _ => Value::Null,
    };
    Node::new(value, span)
}

/// The entries of an object at `path`, each key with its span.
fn convert_fields<'v>(
    fields: impl Iterator<Item = (&'v str, &'v HoconValue)>,
    path: &mut Vec<Step>,
    layout: &Layout,
) -> Vec<(Key, Node)> {
    fields
        .map(|(name, child)| {
            path.push(Step::Key(name.to_owned()));
            let key = Key {
                name: name.to_owned(),
                span: layout.key_span(path),
            };
            let node = convert(child, path, layout);
            path.pop();
            (key, node)
        })
        .collect()
}

/// A number as JSON holds it: an integer when the text is one that fits `i64` or
/// `u64`, otherwise a float (`19481.0` stays a float).
fn number(raw: &str) -> Option<serde_json::Number> {
    if let Ok(i) = raw.parse::<i64>() {
        return Some(i.into());
    }
    if let Ok(u) = raw.parse::<u64>() {
        return Some(u.into());
    }
    raw.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
}
// ---------------------------------------------------------------------------
// Errors.
// ---------------------------------------------------------------------------

/// The span of the token that starts at the lexer's `line`:`col`, or of the one
/// character there.
fn span_at(source: &Source, tokens: &[Token], spans: &[Span], line: usize, col: usize) -> Span {
    if let Some(i) = tokens.iter().position(|t| t.line == line && t.col == col)
        && let Some(span) = spans.get(i)
        && !span.is_empty()
    {
        return *span;
    }
    let start = offset_of(source, line, col);
    let width = source.text[start..]
        .chars()
        .next()
        .map_or(0, char::len_utf8);
    Span::new(start, start + width)
}

fn syntax_error(
    source: &Source,
    tokens: &[Token],
    spans: &[Span],
    message: &str,
    line: usize,
    col: usize,
) -> Diagnostic {
    Diagnostic::new("syntax", "", syntax_message(message))
        .at(span_at(source, tokens, spans, line, col))
}

fn resolve_error(
    source: &Source,
    tokens: &[Token],
    spans: &[Span],
    layout: &Layout,
    e: &hocon::ResolveError,
) -> Diagnostic {
    let message = e.message.as_str();
    if message.starts_with("could not resolve substitution") {
        let name = e.path.strip_suffix("[]").unwrap_or(&e.path);
        let span = substitution_span(tokens, spans, name, e.line, e.col);
        let path = span.map(|s| layout.path_at(s)).unwrap_or_default();
        let bare = name.replace('"', "");
        let mut d = Diagnostic::new(
            "unresolved-substitution",
            path,
            format!("substitution `${{{}}}` is not set in the file or the environment", e.path),
        )
        .help(format!(
            "set the environment variable `{bare}`, or write `${{?{}}}` to leave the key out when it is unset",
            e.path
        ));
        if let Some(span) = span {
            d = d.at(span);
        }
        return d;
    }

    let directive = layout
        .include_list
        .iter()
        .find(|include| {
            let at = offset_of(source, e.line, e.col);
            include.span.start <= at && at < include.span.end
        })
        .or_else(|| {
            layout.include_list.iter().find(|include| {
                !include.target.is_empty() && Path::new(&e.path).ends_with(&include.target)
            })
        })
        .map(|include| include.span);

    if message.starts_with("required include file not found") {
        let mut d = Diagnostic::new(
            "missing-include",
            "",
            format!("required include `{}` does not exist", e.path),
        )
        .help("create the file, or write `include \"...\"` without `required(...)` to make it optional");
        if let Some(span) = directive {
            d = d.at(span);
        }
        return d;
    }

    if !e.path.is_empty() && Path::new(&e.path).is_file() {
        // An error inside an included file: its position is in that file.
        let mut d = Diagnostic::new(
            "syntax",
            "",
            format!(
                "in included file `{}` at {}:{}: {}",
                e.path,
                e.line,
                e.col,
                syntax_message(message)
            ),
        );
        if let Some(span) = directive {
            d = d.at(span);
        }
        return d;
    }

    let mut d = Diagnostic::new("syntax", "", syntax_message(message));
    if e.line > 0 {
        d = d.at(span_at(source, tokens, spans, e.line, e.col));
    }
    d
}

/// The span of the `${name}` token the resolver complained about: the one at its
/// position when that token names the same path, else the first that does.
fn substitution_span(
    tokens: &[Token],
    spans: &[Span],
    name: &str,
    line: usize,
    col: usize,
) -> Option<Span> {
    let wanted = name.replace('"', "");
    let names = |t: &Token| t.kind == TokenKind::Substitution && t.value.replace('"', "") == wanted;
    let index = tokens
        .iter()
        .position(|t| names(t) && t.line == line && t.col == col)
        .or_else(|| tokens.iter().position(names))?;
    spans.get(index).copied()
}

/// The crate's error message in our style: lowercase, no trailing period, token
/// kinds named as they are written.
fn syntax_message(raw: &str) -> String {
    let raw = raw.trim().trim_end_matches('.');
    match raw {
        "expected }" => return "expected `}`".to_owned(),
        "expected ]" => return "expected `]`".to_owned(),
        "expected value" => return "expected a value".to_owned(),
        _ => {}
    }
    // The crate's message prefix, and ours with `{}` standing for the token.
    const REWRITES: [(&str, &str); 5] = [
        ("unexpected token after key: ", "unexpected {} after a key"),
        ("expected key, got ", "expected a key, found {}"),
        (
            "unexpected token after closing brace: ",
            "unexpected {} after the closing `}`",
        ),
        (
            "unexpected token after root array: ",
            "unexpected {} after the root list",
        ),
        (
            "expected include path, got ",
            "expected an include path, found {}",
        ),
    ];
    for (prefix, ours) in REWRITES {
        if let Some(kind) = raw.strip_prefix(prefix)
            && let Some(named) = token_name(kind)
        {
            return ours.replace("{}", named);
        }
    }
    if let Some(kinds) =
        raw.strip_prefix("value concatenation requires same-kind operands per HOCON S10; got ")
        && let Some((left, right)) = kinds.split_once(" + ")
    {
        return format!(
            "cannot concatenate {} and {} in one value",
            type_name(left),
            type_name(right)
        );
    }
    if let Some(ch) = raw.strip_prefix("unexpected character: ") {
        let ch = ch
            .strip_prefix('\'')
            .and_then(|c| c.strip_suffix('\''))
            .unwrap_or(ch);
        return format!("unexpected character `{ch}`");
    }
    tidy_message(raw)
}

/// How a message names a token kind the crate prints with `{:?}`.
fn token_name(debug: &str) -> Option<&'static str> {
    Some(match debug {
        "LBrace" => "`{`",
        "RBrace" => "`}`",
        "LBracket" => "`[`",
        "RBracket" => "`]`",
        "Comma" => "`,`",
        "Colon" => "`:`",
        "Equals" => "`=`",
        "PlusEquals" => "`+=`",
        "Newline" => "end of line",
        "QuotedString" => "quoted string",
        "TripleQuotedString" => "triple-quoted string",
        "Unquoted" => "unquoted text",
        "Substitution" => "substitution",
        "Eof" => "end of file",
        _ => return None,
    })
}

/// How a message names a value type the crate names in a concatenation error.
fn type_name(crate_name: &str) -> String {
    match crate_name {
        "array" => "a list".to_owned(),
        "object" => "an object".to_owned(),
        other => format!("a {other}"),
    }
}

/// `raw` with a lowercase first letter (unless it starts an acronym), no trailing
/// period, and no trailing reference to a section of the HOCON spec.
fn tidy_message(raw: &str) -> String {
    let mut raw = raw.trim().trim_end_matches('.');
    if let Some((head, reference)) = raw.rsplit_once(" (")
        && reference.ends_with(')')
        && reference.contains("HOCON")
    {
        raw = head.trim_end();
    }
    let mut chars = raw.chars();
    match (chars.next(), chars.next()) {
        (Some(first), second)
            if first.is_uppercase() && !second.is_some_and(char::is_uppercase) =>
        {
            let mut out: String = first.to_lowercase().collect();
            out.push_str(&raw[first.len_utf8()..]);
            out
        }
        _ => raw.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFORMANCE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/conformance/neuro-san"
    );

    fn env() -> Env {
        Env::from_pairs([("OPENAI_API_KEY", "sk-test"), ("HOME_DIR", "/home/me")])
    }

    #[test]
    fn environment_references_name_only_variables_that_are_set() {
        let source = Source::new(
            "t.hocon",
            "a = ${OPENAI_API_KEY}\nb = ${?HOME_DIR}\nc = ${?UNSET_ONE}\nd = ${OPENAI_API_KEY}",
        );
        assert_eq!(
            environment_references(&source, &env()),
            ["OPENAI_API_KEY", "HOME_DIR"]
        );
    }

    fn parse_str(text: &str) -> Node {
        let source = Source::new("test.hocon", text);
        match parse(&source, &env()) {
            Ok(node) => node,
            Err(diags) => panic!("parse failed: {diags:#?}"),
        }
    }

    fn parse_err(text: &str) -> (Source, Diagnostic) {
        let source = Source::new("test.hocon", text);
        let mut diags = parse(&source, &env()).expect_err("parse should fail");
        assert_eq!(diags.len(), 1, "{diags:#?}");
        (source, diags.remove(0))
    }

    /// The node at a path such as `a.b[0].c`.
    fn at<'n>(node: &'n Node, path: &str) -> &'n Node {
        let mut node = node;
        for part in path.split('.') {
            let (name, indices) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if !name.is_empty() {
                node = node
                    .get(name)
                    .unwrap_or_else(|| panic!("no `{name}` in {node}"));
            }
            for index in indices.split(']').filter(|s| !s.is_empty()) {
                let i: usize = index.trim_start_matches('[').parse().unwrap();
                node = &node.as_array().unwrap()[i];
            }
        }
        node
    }

    fn text(source: &Source, span: Span) -> &str {
        &source.text[span.start..span.end]
    }

    fn keys(node: &Node) -> Vec<&str> {
        node.as_object()
            .unwrap()
            .iter()
            .map(|(k, _)| k.name.as_str())
            .collect()
    }

    #[test]
    fn comments_and_root_without_braces() {
        let node =
            parse_str("# hash comment\n// slash comment\na = 1 # trailing\nb = two // trailing\n");
        assert_eq!(node.to_json(), serde_json::json!({"a": 1, "b": "two"}));
    }

    #[test]
    fn root_with_braces() {
        let src = "# lead\n{\n  \"a\": 1,\n  \"b\": [true, null]\n}\n";
        let source = Source::new("t.hocon", src);
        let node = parse(&source, &env()).unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": 1, "b": [true, null]})
        );
        assert!(text(&source, node.span).starts_with('{'));
        assert!(text(&source, node.span).ends_with('}'));
    }

    #[test]
    fn empty_and_comment_only_documents_are_empty_objects() {
        assert_eq!(parse_str("").to_json(), serde_json::json!({}));
        assert_eq!(parse_str("# nothing\n").to_json(), serde_json::json!({}));
    }

    #[test]
    fn triple_quoted_strings() {
        let src = "a = \"\"\"line one\n  \"quoted\" line two\"\"\"\nb = \"\"\"ends with a quote\"\"\"\"\nc = 1\n";
        let source = Source::new("t.hocon", src);
        let node = parse(&source, &env()).unwrap();
        assert_eq!(
            at(&node, "a").as_str(),
            Some("line one\n  \"quoted\" line two")
        );
        assert_eq!(at(&node, "b").as_str(), Some("ends with a quote\""));
        // The span covers the whole token, quotes included.
        assert_eq!(
            text(&source, at(&node, "a").span),
            "\"\"\"line one\n  \"quoted\" line two\"\"\""
        );
        assert_eq!(
            text(&source, at(&node, "b").span),
            "\"\"\"ends with a quote\"\"\"\""
        );
        assert_eq!(source.line_col(at(&node, "c").span.start), (4, 5));
    }

    #[test]
    fn real_file_with_four_quote_close() {
        let path = format!(
            "{CONFORMANCE}/fixtures-2026-02/esp_decision_assistant/fallbacks_and_commondef_values.hocon"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let source = Source::new(&path, text);
        let node = parse(&source, &env()).unwrap();
        let gist = at(&node, "interactions[0].response.text.gist[0]");
        let s = gist.as_str().unwrap();
        assert!(s.starts_with("\nThe text sample"), "{s:?}");
        let tail = s.strip_suffix('"').expect("ends with a quote");
        let spaces = tail.trim_end_matches(' ');
        assert!(spaces.len() < tail.len(), "spaces before the quote: {s:?}");
        assert!(spaces.ends_with('\n'), "{s:?}");
        // The span is the whole token, from `"""` to `""""`.
        let written = self::text(&source, gist.span);
        assert!(written.starts_with("\"\"\"\nThe text"), "{written}");
        assert!(written.ends_with(" \"\"\"\""), "{written}");
    }

    #[test]
    fn separators_and_keys() {
        let node =
            parse_str("a = 1, b: 2\nc: 3\nd {\n  x = [1, 2, 3,]\n  y = {p: 1,}\n}\n\"q k\" = v\n");
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": 1, "b": 2, "c": 3, "d": {"x": [1, 2, 3], "y": {"p": 1}}, "q k": "v"})
        );
    }

    #[test]
    fn newline_separated_list_items() {
        let node = parse_str("l = [\n  1\n  \"two\"\n  {a = 3}\n]\n");
        assert_eq!(
            node.to_json(),
            serde_json::json!({"l": [1, "two", {"a": 3}]})
        );
    }

    #[test]
    fn dotted_keys_merging_and_quoted_dots() {
        let src = "a.b.c = 1\na.b.d = 2\na { e = 3 }\n\"x.y\" = 4\nm.\"n.o\".p = 5\n";
        let source = Source::new("t.hocon", src);
        let node = parse(&source, &env()).unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": {"b": {"c": 1, "d": 2}, "e": 3}, "x.y": 4, "m": {"n.o": {"p": 5}}})
        );
        let (key, value) = at(&node, "a.b").entry("d").unwrap();
        assert_eq!(text(&source, key.span), "d");
        assert_eq!(source.line_col(key.span.start), (2, 5));
        assert_eq!(text(&source, value.span), "2");
        let (key, _) = at(&node, "a").entry("e").unwrap();
        assert_eq!(source.line_col(key.span.start), (3, 5));
        let (key, _) = node.entry("x.y").unwrap();
        assert_eq!(text(&source, key.span), "\"x.y\"");
        let (key, _) = at(&node, "m").entry("n.o").unwrap();
        assert_eq!(text(&source, key.span), "\"n.o\"");
        let p = at(&node, "m").get("n.o").unwrap().get("p").unwrap();
        assert_eq!(text(&source, p.span), "5");
    }

    #[test]
    fn numbers_booleans_and_null() {
        let node = parse_str(
            "f = 19481.0\ni = 847\nneg = -3\nbig = 9223372036854775807\nhuge = 18446744073709551615\n\
             e = 1e3\ns = \"123\"\nt = true\nfa = false\nn = null\n",
        );
        let json = node.to_json();
        assert_eq!(json["f"].to_string(), "19481.0");
        assert!(json["f"].is_f64());
        assert_eq!(at(&node, "f").type_name(), "number");
        assert_eq!(json["i"].to_string(), "847");
        assert_eq!(at(&node, "i").type_name(), "integer");
        assert_eq!(json["neg"].as_i64(), Some(-3));
        assert_eq!(json["big"].as_i64(), Some(i64::MAX));
        assert_eq!(json["huge"].as_u64(), Some(u64::MAX));
        assert!(json["e"].is_f64());
        assert_eq!(json["s"], serde_json::json!("123"));
        assert_eq!(at(&node, "s").type_name(), "string");
        assert_eq!(json["t"], serde_json::json!(true));
        assert_eq!(json["fa"], serde_json::json!(false));
        assert!(json["n"].is_null());
    }

    #[test]
    fn object_key_order_is_kept() {
        let odd = parse_str("\"a\\\"b\\\\c\" = 1\n\"\" = 2\n\"x.y\" { \"p.q\" = 3 }\n");
        assert_eq!(keys(&odd), ["a\"b\\c", "", "x.y"]);
        assert_eq!(
            odd.to_json(),
            serde_json::json!({"a\"b\\c": 1, "": 2, "x.y": {"p.q": 3}})
        );
        let node =
            parse_str("zeta = 1\nalpha = 2\nmid { z = 1, a = 2, m = 3 }\nbeta = 3\nalpha = 4\n");
        assert_eq!(keys(&node), ["zeta", "alpha", "mid", "beta"]);
        assert_eq!(keys(at(&node, "mid")), ["z", "a", "m"]);
        assert_eq!(
            node.to_json().to_string(),
            r#"{"zeta":1,"alpha":4,"mid":{"z":1,"a":2,"m":3},"beta":3}"#
        );
    }

    #[test]
    fn duplicate_keys_are_legal() {
        let src = "a = 1\na = 2\no { x = 1 }\no { y = 2 }\no.x = 3\n";
        let source = Source::new("t.hocon", src);
        let node = parse(&source, &env()).unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": 2, "o": {"x": 3, "y": 2}})
        );
        // The later value wins, and so does its span.
        assert_eq!(source.line_col(at(&node, "a").span.start), (2, 5));
        assert_eq!(source.line_col(at(&node, "o.x").span.start), (5, 7));
        assert_eq!(source.line_col(at(&node, "o.y").span.start), (4, 9));
    }

    #[test]
    fn includes_resolve_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(
            sub.join("common.conf"),
            "shared = yes\nnested { from = include }\n",
        )
        .unwrap();
        let main = sub.join("main.hocon");
        let text = "include \"common.conf\"\nown = 1\nnested.mine = 2\ninclude \"absent.conf\"\n";
        std::fs::write(&main, text).unwrap();
        let source = Source::new(&main, text);
        let node = parse(&source, &env()).unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"shared": "yes", "nested": {"from": "include", "mine": 2}, "own": 1})
        );
        // Values from the included file point at an include directive.
        let shared = at(&node, "shared");
        assert!(
            text_of(&source, shared.span).starts_with("include \""),
            "{shared:?}"
        );
        let (key, _) = node.entry("own").unwrap();
        assert_eq!(source.line_col(key.span.start), (2, 1));
    }

    fn text_of(source: &Source, span: Span) -> String {
        source.text[span.start..span.end].to_owned()
    }

    #[test]
    fn missing_required_include_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main.hocon");
        let text = "a = 1\ninclude required(\"nowhere.conf\")\n";
        let source = Source::new(&main, text);
        let mut diags = parse(&source, &env()).unwrap_err();
        let d = diags.remove(0);
        assert_eq!(d.code, "missing-include");
        assert!(d.message.contains("nowhere.conf"), "{}", d.message);
        let span = d.span.unwrap();
        assert_eq!(source.line_col(span.start), (2, 1));
        assert_eq!(text_of(&source, span), "include required(\"nowhere.conf\")");
    }

    #[test]
    fn substitutions_from_file_and_env() {
        let src = "base = \"http://h\"\nurl = ${base}\"/v1\"\nkey = ${OPENAI_API_KEY}\n\
                   home = ${?HOME_DIR}\nk = default\nk = ${?UNSET_VAR}\ngone = ${?UNSET_VAR}\n\
                   obj { a = 1 }\ncopy = ${obj}\n";
        let source = Source::new("t.hocon", src);
        let node = parse(&source, &env()).unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({
                "base": "http://h", "url": "http://h/v1", "key": "sk-test", "home": "/home/me",
                "k": "default", "obj": {"a": 1}, "copy": {"a": 1}
            })
        );
        assert_eq!(text(&source, at(&node, "key").span), "${OPENAI_API_KEY}");
        // A value copied by a substitution points at the substitution.
        assert_eq!(text(&source, at(&node, "copy.a").span), "${obj}");
    }

    #[test]
    fn missing_substitution_is_a_diagnostic_at_the_token() {
        let (source, d) = parse_err("a {\n  b = [1, ${OPENAI_API_KEY_2}]\n}\n");
        assert_eq!(d.code, "unresolved-substitution");
        assert_eq!(
            d.message,
            "substitution `${OPENAI_API_KEY_2}` is not set in the file or the environment"
        );
        let span = d.span.unwrap();
        assert_eq!(text(&source, span), "${OPENAI_API_KEY_2}");
        assert_eq!(source.line_col(span.start), (2, 11));
        assert_eq!(d.path, "a.b[1]");
        let help = d.help.unwrap();
        assert!(
            help.contains("OPENAI_API_KEY_2") && help.contains("${?OPENAI_API_KEY_2}"),
            "{help}"
        );
    }

    #[test]
    fn the_process_environment_is_not_read() {
        // `PATH` is set in any process environment, but not in the `Env` given.
        let source = Source::new("t.hocon", "p = ${PATH}\n");
        let diags = parse(&source, &Env::default()).unwrap_err();
        assert_eq!(diags[0].code, "unresolved-substitution");
        let node = parse(&source, &Env::from_pairs([("PATH", "/bin")])).unwrap();
        assert_eq!(node.to_json(), serde_json::json!({"p": "/bin"}));
    }

    #[test]
    fn syntax_errors_have_positions() {
        let (source, d) = parse_err("a = 1\nb = [1, 2\nc = 3\n");
        assert_eq!(d.code, "syntax");
        assert_eq!(d.path, "");
        assert_eq!(d.message, "expected `]`");
        // The crate reports an unclosed list where it gave up: the end of the file.
        assert_eq!(
            d.span,
            Some(Span::new(source.text.len(), source.text.len()))
        );

        let (source2, d) = parse_err("a {\n  b = 1\n");
        assert_eq!(d.message, "expected `}`");
        assert_eq!(source2.line_col(d.span.unwrap().start).0, 3);

        let (source3, d) = parse_err("x = 1\ny = \"unterminated\n");
        assert_eq!(d.code, "syntax");
        assert_eq!(source3.line_col(d.span.unwrap().start), (2, 5));

        let (source4, d) = parse_err("ok = 1\nkey \"v\" @\n");
        assert_eq!(d.code, "syntax");
        assert_eq!(source4.line_col(d.span.unwrap().start), (2, 9));
        assert_eq!(d.message, "unexpected character `@`");
    }

    #[test]
    fn error_inside_an_included_file_points_at_the_directive() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("broken.conf"), "x = [1,\n").unwrap();
        let main = dir.path().join("main.hocon");
        let text = "a = 1\ninclude \"broken.conf\"\n";
        let source = Source::new(&main, text);
        let diags = parse(&source, &env()).unwrap_err();
        assert_eq!(diags[0].code, "syntax");
        assert!(
            diags[0].message.contains("broken.conf"),
            "{}",
            diags[0].message
        );
        assert!(
            diags[0].message.ends_with("expected `]`"),
            "{}",
            diags[0].message
        );
        assert_eq!(
            text_of(&source, diags[0].span.unwrap()),
            "include \"broken.conf\""
        );
    }

    #[test]
    fn unexpected_token_message_names_the_token() {
        let (source, d) = parse_err("a = 1\nb , 2\n");
        assert_eq!(d.message, "unexpected `,` after a key");
        assert_eq!(source.line_col(d.span.unwrap().start), (2, 3));
    }

    #[test]
    fn spans_for_objects_lists_and_keys() {
        let src = "outer {\n  list = [\n    {name = \"x\"}\n  ]\n}\n";
        let source = Source::new("t.hocon", src);
        let node = parse(&source, &env()).unwrap();
        let outer = at(&node, "outer");
        assert_eq!(text(&source, outer.span), &src[6..src.len() - 1]);
        let list = at(&node, "outer.list");
        assert_eq!(text(&source, list.span), "[\n    {name = \"x\"}\n  ]");
        assert_eq!(
            text(&source, at(&node, "outer.list[0]").span),
            "{name = \"x\"}"
        );
        let (key, value) = at(&node, "outer.list[0]").entry("name").unwrap();
        assert_eq!(text(&source, key.span), "name");
        assert_eq!(text(&source, value.span), "\"x\"");
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let src = "\u{feff}a = \"héllo wörld\", b = 2\nc = \"ü\", d = 3\n";
        let source = Source::new("t.hocon", src);
        let node = parse(&source, &env()).unwrap();
        assert_eq!(text(&source, at(&node, "a").span), "\"héllo wörld\"");
        let (key, value) = node.entry("b").unwrap();
        assert_eq!(text(&source, key.span), "b");
        assert_eq!(text(&source, value.span), "2");
        assert_eq!(text(&source, at(&node, "d").span), "3");
        assert_eq!(source.line_col(at(&node, "d").span.start), (2, 14));

        // Windows line ends.
        let source = Source::new("t.hocon", "a = 1\r\nb = \"x\"\r\n");
        let node = parse(&source, &env()).unwrap();
        assert_eq!(text(&source, at(&node, "b").span), "\"x\"");
        assert_eq!(source.line_col(at(&node, "b").span.start), (2, 5));

        // A resolve error after non-ASCII text points at the right character.
        let (source, d) = parse_err("x = \"ü\" { }\n");
        assert_eq!(source.line_col(d.span.unwrap().start), (1, 5));
        assert_eq!(text(&source, d.span.unwrap()), "\"ü\"");
    }

    #[test]
    fn concatenations_and_appends_do_not_lose_spans() {
        let src = "a = [1, 2] [3]\nb = [0]\nb += 9\nc = foo bar  baz\n";
        let source = Source::new("t.hocon", src);
        let node = parse(&source, &env()).unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": [1, 2, 3], "b": [0, 9], "c": "foo bar  baz"})
        );
        assert_eq!(text(&source, at(&node, "a[2]").span), "3");
        assert_eq!(text(&source, at(&node, "b[0]").span), "0");
        assert_eq!(text(&source, at(&node, "c").span), "foo bar  baz");
        // The appended item is not written at a known index: it falls back to the list.
        assert_eq!(text(&source, at(&node, "b[1]").span), "[0]");
    }

    #[test]
    fn math_guy_float_and_its_position() {
        let path = format!("{CONFORMANCE}/fixtures-2026-02/math_guy/basic_sly_data.hocon");
        let text = std::fs::read_to_string(&path).unwrap();
        let source = Source::new(&path, text.clone());
        let node = parse(&source, &env()).unwrap();
        let value = at(&node, "interactions[0].response.sly_data.equals.value[0]");
        assert_eq!(value.to_json().to_string(), "19481.0");
        assert!(value.to_json().is_f64());
        assert_eq!(
            at(&node, "interactions[0].sly_data.x")
                .to_json()
                .to_string(),
            "847"
        );
        assert_eq!(self::text(&source, value.span), "19481.0");
        let (line, col) = source.line_col(value.span.start);
        let written = text.lines().nth(line - 1).unwrap();
        assert_eq!(&written[col - 1..col - 1 + 7], "19481.0");
    }

    #[test]
    fn a_value_in_a_multi_line_file_maps_to_its_line_and_column() {
        let path = format!("{CONFORMANCE}/fixtures-2026-02/math_guy/basic_sly_data.hocon");
        let text = std::fs::read_to_string(&path).unwrap();
        let source = Source::new(&path, text.clone());
        let node = parse(&source, &env()).unwrap();
        let interaction = at(&node, "interactions[0]");
        let (key, value) = interaction.entry("text").unwrap();
        let (line, col) = source.line_col(value.span.start);
        let expected_line = text
            .lines()
            .position(|l| l.contains("\"text\": \"multiply\""))
            .unwrap()
            + 1;
        assert_eq!(line, expected_line);
        assert_eq!(
            col,
            text.lines()
                .nth(line - 1)
                .unwrap()
                .find("\"multiply\"")
                .unwrap()
                + 1
        );
        assert_eq!(source.line_col(key.span.start).0, expected_line);
        assert_eq!(self::text(&source, key.span), "\"text\"");
    }

    #[test]
    fn every_conformance_file_parses() {
        assert!(
            Path::new(CONFORMANCE).is_dir(),
            "conformance fixtures missing at {CONFORMANCE}"
        );
        let mut count = 0;
        for entry in walkdir::WalkDir::new(CONFORMANCE) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "hocon") {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let source = Source::new(entry.path(), text);
            let node = match parse(&source, &env()) {
                Ok(node) => node,
                Err(diags) => panic!("{}: {diags:#?}", entry.path().display()),
            };
            assert!(node.as_object().is_some());
            check_spans(&source, &node);
            count += 1;
        }
        assert!(count >= 30, "only {count} files found");
    }

    /// Every span lies inside the text, on character boundaries.
    fn check_spans(source: &Source, node: &Node) {
        let ok = |s: Span| {
            s.end <= source.text.len()
                && source.text.is_char_boundary(s.start)
                && source.text.is_char_boundary(s.end)
        };
        assert!(ok(node.span), "{:?}", node.span);
        match &node.value {
            Value::Object(entries) => {
                for (k, v) in entries {
                    assert!(ok(k.span));
                    check_spans(source, v);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| check_spans(source, v)),
            _ => {}
        }
    }

    #[test]
    fn messages_are_tidied() {
        assert_eq!(syntax_message("expected ]"), "expected `]`");
        assert_eq!(
            syntax_message("expected key, got Eof"),
            "expected a key, found end of file"
        );
        assert_eq!(
            tidy_message("Something went wrong."),
            "something went wrong"
        );
        assert_eq!(tidy_message("HOCON thing"), "HOCON thing");
        assert_eq!(
            tidy_message("path has a trailing period '.' (HOCON.md path rules)"),
            "path has a trailing period '.'"
        );
        let (_, d) = parse_err("a: [1 2 {x=1}]\n");
        assert_eq!(
            d.message,
            "cannot concatenate a string and an object in one value"
        );
    }
}
