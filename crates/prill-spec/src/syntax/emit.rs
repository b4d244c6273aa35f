//! Writes a [`Node`] tree as JSON, YAML or HOCON text.
//!
//! Each emitter writes text that its parser reads back to the same tree (spans
//! aside): strings stay strings, integers stay integers and floats keep a `.0` or
//! an exponent so that they stay floats.
//!
//! - JSON is pretty-printed with a 2-space indent.
//! - YAML is block style with a 2-space indent. A string is written plain only
//!   when a YAML reader (1.2 core schema, and 1.1 for words like `yes` and `on`)
//!   would read it back as that same string; otherwise it is double-quoted with
//!   escapes. A multi-line string is written as a `|` block when that is exact.
//! - HOCON is written as people write it: no braces around the root object, one
//!   `key = value` or `key { ... }` per line and no commas at line ends. A key is
//!   unquoted when it is a simple name (a letter or `_`, then letters, digits, `_` and
//!   `-`; not `include`, `true`, `false` or `null`), else quoted, so a dot in a key
//!   never becomes a path. Strings are always double-quoted with JSON escapes (which
//!   HOCON does not scan for `${}`). A list of scalars that fits on one line is written
//!   `[a, b]`, and a table of scalars (and such lists) `{ a = 1, b = [2] }`; any other
//!   list has one item per line, and any other table one entry per line.
//!
//! [`emit`] writes the values only; [`emit_with_comments`] also writes the comments of
//! the source the tree came from (`super::comments`) into YAML and HOCON.

use std::fmt::Write as _;

use super::comments::{Comment, Pending, comments};
use super::yaml::{Plain, resolve_plain};
use crate::node::{Key, Node, Value};
use crate::source::{Source, Syntax};

/// `node` written in `syntax`, ending in a newline.
///
/// HOCON cannot hold a lone scalar at the root; such a node is written as its JSON
/// text, which a HOCON parser rejects.
pub fn emit(node: &Node, syntax: Syntax) -> String {
    emit_pending(node, syntax, &mut Pending::default())
}

/// [`emit`], keeping the comments of `source` (the YAML or HOCON text `node` was
/// parsed from) in YAML and HOCON output: each before the entry or item that follows
/// it in the source, or at the end of the line of the entry it trails. JSON holds no
/// comments.
pub fn emit_with_comments(node: &Node, syntax: Syntax, source: &Source) -> String {
    let mut pending = Pending::new(comments(source, node), Some(source));
    emit_pending(node, syntax, &mut pending)
}

fn emit_pending(node: &Node, syntax: Syntax, c: &mut Pending) -> String {
    let mut out = String::new();
    match syntax {
        Syntax::Json => {
            // `{:#}` is serde_json's infallible pretty printer (2-space indent).
            let _ = write!(out, "{:#}", node.to_json());
            out.push('\n');
            return out;
        }
        Syntax::Yaml => Yaml { out: &mut out, c }.root(node),
        Syntax::Hocon => match &node.value {
            // The root object is written without its braces.
            Value::Object(entries) if !entries.is_empty() => {
                hocon_entries(&mut out, entries, 0, c);
            }
            _ => {
                hocon_value(&mut out, node, 0, c, None);
                out.push('\n');
            }
        },
    }
    comment_lines(&mut out, c.rest(), 0);
    out
}

/// `comments`, one per line at `indent`, as `#` comments (which YAML and HOCON share).
fn comment_lines(out: &mut String, comments: &[Comment], indent: usize) {
    for comment in comments {
        out.extend(std::iter::repeat_n(' ', indent));
        out.push('#');
        out.push_str(&comment.text);
        out.push('\n');
    }
}

/// The comment that trails code on `line`, if it is the next one, as ` #text`.
fn trailing(out: &mut String, c: &mut Pending, line: Option<usize>) {
    if let Some(comment) = line.and_then(|line| c.trailing_on(line)) {
        out.push_str(" #");
        out.push_str(&comment.text);
    }
}

/// The longest key written as an implicit `key: value`; YAML allows 1024 characters
/// for an implicit key, including its quotes.
const MAX_IMPLICIT_KEY: usize = 1000;

struct Yaml<'o> {
    out: &'o mut String,
    c: &'o mut Pending,
}

impl Yaml<'_> {
    fn root(&mut self, node: &Node) {
        match &node.value {
            Value::Array(items) if !items.is_empty() => self.seq(items, 0),
            Value::Object(entries) if !entries.is_empty() => self.map(entries, 0),
            _ => {
                self.scalar(node, 2);
                self.out.push('\n');
            }
        }
    }

    fn indent(&mut self, indent: usize) {
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    /// The comments before `offset`, each on its own line at `indent`, then the cursor
    /// at column `indent`; `at_cursor` says the cursor already stands where the first
    /// one goes.
    fn comments_before(&mut self, offset: usize, indent: usize, at_cursor: bool) {
        let comments = self.c.before(offset).to_vec();
        let mut at_cursor = at_cursor;
        for comment in &comments {
            if !at_cursor {
                self.indent(indent);
            }
            self.out.push('#');
            self.out.push_str(&comment.text);
            self.out.push('\n');
            at_cursor = false;
        }
        if !at_cursor {
            self.indent(indent);
        }
    }

    /// A scalar and the comment trailing its line, then the line break.
    fn scalar_line(&mut self, node: &Node, indent: usize, line: usize) {
        self.scalar(node, indent);
        let literal =
            matches!(&node.value, Value::String(s) if !is_plain_safe(s) && is_literal_safe(s));
        if !literal {
            trailing(self.out, self.c, Some(line));
        }
        self.out.push('\n');
    }

    /// A non-empty list whose `- ` marks stand at column `indent`; the cursor is
    /// already there on the first line.
    fn seq(&mut self, items: &[Node], indent: usize) {
        for (i, item) in items.iter().enumerate() {
            self.comments_before(item.span.start, indent, i == 0);
            let line = self.c.line_of(item.span.start);
            self.out.push('-');
            match &item.value {
                Value::Array(inner) if !inner.is_empty() => {
                    self.out.push(' ');
                    self.seq(inner, indent + 2);
                }
                Value::Object(entries) if !entries.is_empty() => {
                    self.out.push(' ');
                    self.map(entries, indent + 2);
                }
                _ => {
                    self.out.push(' ');
                    self.scalar_line(item, indent + 2, line);
                }
            }
        }
    }

    /// A non-empty object whose keys stand at column `indent`; the cursor is already
    /// there on the first line.
    fn map(&mut self, entries: &[(Key, Node)], indent: usize) {
        for (i, (key, value)) in entries.iter().enumerate() {
            self.comments_before(key.span.start, indent, i == 0);
            let line = self.c.line_of(key.span.start);
            let key_text = yaml_key(&key.name);
            if key_text.chars().count() > MAX_IMPLICIT_KEY {
                self.out.push_str("? ");
                self.out.push_str(&key_text);
                self.out.push('\n');
                self.indent(indent);
            } else {
                self.out.push_str(&key_text);
            }
            self.out.push(':');
            match &value.value {
                Value::Array(items) if !items.is_empty() => {
                    trailing(self.out, self.c, Some(line));
                    self.out.push('\n');
                    self.indent(indent + 2);
                    self.seq(items, indent + 2);
                }
                Value::Object(inner) if !inner.is_empty() => {
                    trailing(self.out, self.c, Some(line));
                    self.out.push('\n');
                    self.indent(indent + 2);
                    self.map(inner, indent + 2);
                }
                _ => {
                    self.out.push(' ');
                    self.scalar_line(value, indent + 2, line);
                }
            }
        }
    }

    /// A scalar or an empty collection, without the final newline. A `|` block's
    /// lines are indented to `indent`.
    fn scalar(&mut self, node: &Node, indent: usize) {
        match &node.value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => self.out.push_str(&n.to_string()),
            Value::Array(_) => self.out.push_str("[]"),
            Value::Object(_) => self.out.push_str("{}"),
            Value::String(s) => {
                if is_plain_safe(s) {
                    self.out.push_str(s);
                } else if is_literal_safe(s) {
                    self.literal(s, indent);
                } else {
                    double_quoted(self.out, s);
                }
            }
        }
    }

    /// A `|` block with the chomping indicator that keeps exactly `s`'s trailing
    /// line breaks.
    fn literal(&mut self, s: &str, indent: usize) {
        let body = s.trim_end_matches('\n');
        let trailing = s.len() - body.len();
        self.out.push_str(match trailing {
            0 => "|-",
            1 => "|",
            _ => "|+",
        });
        for line in body.split('\n') {
            self.out.push('\n');
            if !line.is_empty() {
                self.indent(indent);
                self.out.push_str(line);
            }
        }
        // The clip and keep indicators take the first break from the line after the body.
        for _ in 1..trailing {
            self.out.push('\n');
        }
    }
}

/// A key as YAML text: plain when safe, otherwise double-quoted.
fn yaml_key(name: &str) -> String {
    if is_plain_safe(name) {
        name.to_owned()
    } else {
        let mut out = String::new();
        double_quoted(&mut out, name);
        out
    }
}

/// Words that YAML 1.1 readers take as booleans, or that some readers give another
/// meaning; quoted so that every reader agrees the value is a string.
const YAML11_WORDS: [&str; 22] = [
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
    "OFF", "=", "<<", "nan", "NaN", "inf", "Inf",
];

/// Whether `s` can be written as a plain scalar (as a value or as a key, in block
/// context) and read back as that same string.
fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if resolve_plain(s) != Plain::String || YAML11_WORDS.contains(&s) {
        return false;
    }
    // Leading indicators, spaces and anything that may look like a number or date.
    if "-?:,[]{}#&*!|>'\"%@`.+~=<".contains(first)
        || first.is_ascii_digit()
        || first.is_whitespace()
    {
        return false;
    }
    let last = s.chars().next_back().unwrap_or(first);
    if last.is_whitespace() || last == ':' {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.contains(":\t") || s.contains("\t#") {
        return false;
    }
    s.chars()
        .all(|c| is_printable(c) && !matches!(c, '\t' | '\n' | '\r'))
}

/// Whether `s` can be written exactly as a `|` block: more than one line, every
/// character printable, no tabs or carriage returns, no trailing spaces on a line,
/// and a first line that is not empty and does not start with a space (which would
/// need an explicit indentation indicator).
fn is_literal_safe(s: &str) -> bool {
    let body = s.trim_end_matches('\n');
    if !body.contains('\n') && body.len() == s.len() {
        return false;
    }
    let Some(first) = body.split('\n').next() else {
        return false;
    };
    if first.is_empty() || first.starts_with(' ') {
        return false;
    }
    if body.split('\n').any(|line| line.ends_with(' ')) {
        return false;
    }
    s.chars()
        .all(|c| c == '\n' || (is_printable(c) && !matches!(c, '\t' | '\r')))
}

/// YAML's printable characters, less the byte order mark and the characters some
/// readers take as line breaks.
fn is_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~')
        || (c >= '\u{a0}'
            && !matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            ))
}

/// `s` as a one-line YAML double-quoted scalar.
fn double_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_printable(c) => out.push(c),
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
}

/// `s` as a JSON string literal, which is also a HOCON quoted string.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The longest line a list of scalars is written on, `[a, b]`, before it is written
/// one item per line.
const HOCON_INLINE_WIDTH: usize = 80;

/// Keys that mean something else unquoted at the start of a HOCON line, or that some
/// readers take as values.
const HOCON_RESERVED_KEYS: [&str; 4] = ["include", "true", "false", "null"];

/// Whether `key` can be written unquoted and read back as that one key (no path dots,
/// nothing HOCON gives a meaning).
fn is_simple_hocon_key(key: &str) -> bool {
    let mut chars = key.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !HOCON_RESERVED_KEYS.contains(&key)
}

/// A key as HOCON text: bare when simple, otherwise a quoted string.
fn hocon_key(out: &mut String, key: &str) {
    if is_simple_hocon_key(key) {
        out.push_str(key);
    } else {
        json_string(out, key);
    }
}

/// The entries of a non-empty object, one per line at `indent`, each ending in a newline:
/// `key = value`, or `key { ... }` for a non-empty object; the comments before each.
fn hocon_entries(out: &mut String, entries: &[(Key, Node)], indent: usize, c: &mut Pending) {
    for (key, value) in entries {
        comment_lines(out, c.before(key.span.start), indent);
        let line = Some(c.line_of(key.span.start));
        out.extend(std::iter::repeat_n(' ', indent));
        hocon_key(out, &key.name);
        match &value.value {
            Value::Object(inner) if !inner.is_empty() => {
                let inline = (!c.any_within(value.span))
                    .then(|| hocon_inline_object(inner, indent + key.name.len() + 1))
                    .flatten();
                if let Some(text) = inline {
                    out.push(' ');
                    out.push_str(&text);
                    trailing(out, c, line);
                    out.push('\n');
                    continue;
                }
                out.push_str(" {");
                trailing(out, c, line);
                out.push('\n');
                hocon_entries(out, inner, indent + 2, c);
                comment_lines(out, c.before(value.span.end), indent + 2);
                out.extend(std::iter::repeat_n(' ', indent));
                out.push('}');
            }
            _ => {
                out.push_str(" = ");
                hocon_value(out, value, indent, c, line);
            }
        }
        out.push('\n');
    }
}

/// A list of scalars (no list or object in it) on one line, when it fits in
/// [`HOCON_INLINE_WIDTH`] from `indent`.
fn hocon_inline_list(items: &[Node], indent: usize) -> Option<String> {
    let mut line = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if matches!(item.value, Value::Array(_) | Value::Object(_)) {
            return None;
        }
        if i > 0 {
            line.push_str(", ");
        }
        hocon_value(&mut line, item, indent, &mut Pending::default(), None);
        if indent + line.len() > HOCON_INLINE_WIDTH {
            return None;
        }
    }
    line.push(']');
    Some(line)
}

/// An object of scalars and short lists of scalars on one line, `{ a = 1, b = ["x"] }`,
/// when it fits in
/// [`HOCON_INLINE_WIDTH`] from `indent`.
fn hocon_inline_object(entries: &[(Key, Node)], indent: usize) -> Option<String> {
    let mut line = String::from("{ ");
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            line.push_str(", ");
        }
        hocon_key(&mut line, &key.name);
        line.push_str(" = ");
        match &value.value {
            Value::Array(items) if !items.is_empty() => {
                line.push_str(&hocon_inline_list(items, indent)?);
            }
            Value::Object(inner) if !inner.is_empty() => return None,
            _ => hocon_value(&mut line, value, indent, &mut Pending::default(), None),
        }
        if indent + line.len() + 2 > HOCON_INLINE_WIDTH {
            return None;
        }
    }
    line.push_str(" }");
    Some(line)
}

/// A HOCON value; nested lines are indented from `indent`. The comment trailing `line`
/// goes at the end of the value's first line.
fn hocon_value(out: &mut String, node: &Node, indent: usize, c: &mut Pending, line: Option<usize>) {
    match &node.value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => json_string(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(entries) if entries.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            let inline = (!c.any_within(node.span))
                .then(|| hocon_inline_list(items, indent))
                .flatten();
            if let Some(text) = inline {
                out.push_str(&text);
                trailing(out, c, line);
                return;
            }
            out.push('[');
            trailing(out, c, line);
            for item in items {
                out.push('\n');
                comment_lines(out, c.before(item.span.start), indent + 2);
                out.extend(std::iter::repeat_n(' ', indent + 2));
                let item_line = Some(c.line_of(item.span.start));
                hocon_value(out, item, indent + 2, c, item_line);
            }
            out.push('\n');
            comment_lines(out, c.before(node.span.end), indent + 2);
            out.extend(std::iter::repeat_n(' ', indent));
            out.push(']');
        }
        Value::Object(entries) => {
            let inline = (!c.any_within(node.span))
                .then(|| hocon_inline_object(entries, indent))
                .flatten();
            if let Some(text) = inline {
                out.push_str(&text);
                trailing(out, c, line);
                return;
            }
            // The `{` stands for nothing written in a YAML source: a comment on the
            // first line goes with the first entry, which starts on it.
            out.push('{');
            out.push('\n');
            hocon_entries(out, entries, indent + 2, c);
            comment_lines(out, c.before(node.span.end), indent + 2);
            out.extend(std::iter::repeat_n(' ', indent));
            out.push('}');
        }
    }
    if matches!(
        node.value,
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)
    ) || matches!(&node.value, Value::Array(v) if v.is_empty())
        || matches!(&node.value, Value::Object(v) if v.is_empty())
    {
        trailing(out, c, line);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::node::Span;
    use crate::source::Source;
    use crate::syntax::{Env, hocon, json, yaml};

    fn node(value: serde_json::Value) -> Node {
        Node::from_json(&value, Span::default())
    }

    fn reparse(text: &str, syntax: Syntax) -> Result<Node, Vec<crate::diag::Diagnostic>> {
        let source = Source::new(format!("t.{}", syntax.extension()), text);
        match syntax {
            Syntax::Json => json::parse(&source),
            Syntax::Yaml => yaml::parse(&source),
            Syntax::Hocon => hocon::parse(&source, &Env::default()),
        }
    }

    /// Emits `value` and parses it back; the result must print the same, which
    /// checks key order and number kinds as well as values.
    fn round_trip(value: &serde_json::Value, syntax: Syntax) -> Result<(), String> {
        let text = emit(&node(value.clone()), syntax);
        let back = reparse(&text, syntax)
            .map_err(|e| format!("{syntax:?} text:\n{text}\nfailed: {e:#?}"))?;
        let back = back.to_json();
        let (got, want) = (back.to_string(), value.to_string());
        if got != want {
            return Err(format!(
                "{syntax:?} text:\n{text}\nread back as\n{back}\ninstead of\n{value}"
            ));
        }
        Ok(())
    }

    #[test]
    fn json_is_pretty_with_two_spaces() {
        let text = emit(
            &node(json!({"a": [1, 2.0, "x"], "b": {}, "c": []})),
            Syntax::Json,
        );
        assert_eq!(
            text,
            "{\n  \"a\": [\n    1,\n    2.0,\n    \"x\"\n  ],\n  \"b\": {},\n  \"c\": []\n}\n"
        );
    }

    #[test]
    fn yaml_layout() {
        let value = json!({
            "name": "plain text",
            "n": 3,
            "f": 3.0,
            "big": 1e300,
            "flags": [true, null],
            "nested": {"a": {"b": []}, "c": {}},
            "list": [{"x": 1, "y": [1, [2, 3]]}, [], "s"],
            "multi": "line one\nline two\n",
        });
        let text = emit(&node(value.clone()), Syntax::Yaml);
        assert_eq!(
            text,
            "name: plain text\n\"n\": 3\nf: 3.0\nbig: 1e+300\nflags:\n  - true\n  - null\nnested:\n  a:\n    b: []\n  c: {}\n\
             list:\n  - x: 1\n    \"y\":\n      - 1\n      - - 2\n        - 3\n  - []\n  - s\nmulti: |\n  line one\n  line two\n"
        );
        round_trip(&value, Syntax::Yaml).unwrap();
    }

    #[test]
    fn yaml_quotes_what_would_change_meaning() {
        let quoted = [
            "",
            "true",
            "False",
            "yes",
            "no",
            "NO",
            "on",
            "off",
            "y",
            "null",
            "~",
            "1",
            "1.0",
            "-1",
            "0x1",
            "0o7",
            "1e3",
            ".5",
            ".inf",
            ".nan",
            "2024-01-01",
            "12:30",
            " lead",
            "trail ",
            "a: b",
            "a #b",
            "ends:",
            "- x",
            "? x",
            ": x",
            "[x",
            "]x",
            "{x",
            "}x",
            "#x",
            "&x",
            "*x",
            "!x",
            "|x",
            ">x",
            "'x",
            "\"x",
            "%x",
            "@x",
            "`x",
            ",x",
            "<<",
            "---",
            "...",
            "a\tb",
            "\u{feff}x",
            "x\u{85}y",
            "a\u{2028}b",
            "\u{0}",
        ];
        for s in quoted {
            let text = emit(&node(json!({ s: s })), Syntax::Yaml);
            assert!(text.starts_with('"'), "{s:?} emitted as {text:?}");
            round_trip(&json!({ s: s }), Syntax::Yaml).unwrap();
        }
        for s in [
            "plain",
            "with space",
            "a:b",
            "a#b",
            "é ü 😀",
            "x-y",
            "C++",
            "a, b",
            "q?",
            "it's",
            "say \"hi\"",
        ] {
            let text = emit(&node(json!({ s: s })), Syntax::Yaml);
            assert_eq!(text, format!("{s}: {s}\n"));
            round_trip(&json!({ s: s }), Syntax::Yaml).unwrap();
        }
    }

    #[test]
    fn yaml_multi_line_strings_are_exact() {
        let cases = [
            "a\nb",
            "a\nb\n",
            "a\nb\n\n\n",
            "a\n\n  b\n",
            "a\n",
            "\n",
            "\na",
            " a\nb",
            "a \nb",
            "a\n \nb",
            "a\r\nb",
            "a\tb\nc",
            "a\n# not a comment\n- not a list\n",
        ];
        for s in cases {
            round_trip(&json!({ "k": s, "after": 1 }), Syntax::Yaml).unwrap();
            round_trip(&json!([s, s]), Syntax::Yaml).unwrap();
            round_trip(&json!(s), Syntax::Yaml).unwrap();
        }
        assert_eq!(
            emit(&node(json!({"k": "a\nb"})), Syntax::Yaml),
            "k: |-\n  a\n  b\n"
        );
        assert_eq!(
            emit(&node(json!({"k": "a\nb\n\n"})), Syntax::Yaml),
            "k: |+\n  a\n  b\n\n"
        );
        assert_eq!(
            emit(&node(json!({"k": " a\nb"})), Syntax::Yaml),
            "k: \" a\\nb\"\n"
        );
    }

    #[test]
    fn yaml_scalar_roots_and_long_keys() {
        for value in [
            json!(null),
            json!(""),
            json!("x"),
            json!(3.0),
            json!(-7),
            json!([]),
            json!({}),
            json!("a\nb"),
        ] {
            round_trip(&value, Syntax::Yaml).unwrap();
        }
        let long = "k".repeat(2000);
        let value = json!({ long.clone(): {"a": 1}, "short": 2 });
        let text = emit(&node(value.clone()), Syntax::Yaml);
        assert!(text.starts_with("? "), "{text}");
        round_trip(&value, Syntax::Yaml).unwrap();
    }

    #[test]
    fn hocon_layout() {
        let value =
            json!({"a": 1, "b.c": [true, null, "x ${y}"], "d": {"e": 2.0}, "f": {}, "g": []});
        let text = emit(&node(value.clone()), Syntax::Hocon);
        assert_eq!(
            text,
            "a = 1\n\"b.c\" = [true, null, \"x ${y}\"]\nd { e = 2.0 }\nf = {}\ng = []\n"
        );
        round_trip(&value, Syntax::Hocon).unwrap();
        let nested = json!({
            "interactions": [{"text": "hi", "response": {"text": {"keywords": ["a", "b"]}}}, [1, [2]]],
            "include": 1, "true": 2, "9lives": 3, "_ok-key": 4, "long": ["x".repeat(40), "y".repeat(40)],
        });
        let text = emit(&node(nested.clone()), Syntax::Hocon);
        assert_eq!(
            text,
            format!(
                "interactions = [\n  {{\n    text = \"hi\"\n    response {{\n      text {{ keywords = [\"a\", \"b\"] }}\n    }}\n  }}\n  [\n    1\n    [2]\n  ]\n]\n\
                 \"include\" = 1\n\"true\" = 2\n\"9lives\" = 3\n_ok-key = 4\nlong = [\n  \"{}\"\n  \"{}\"\n]\n",
                "x".repeat(40),
                "y".repeat(40)
            )
        );
        assert!(!text.lines().any(|l| l.ends_with(',')), "{text}");
        round_trip(&nested, Syntax::Hocon).unwrap();
    }

    #[test]
    fn hocon_round_trip_of_awkward_values() {
        let value = json!({
            "quote\"back\\slash": "line\nbreak\ttab \u{1} ${NOT_SUBSTITUTED} // not a comment # nor this",
            "dotted.key": {"": "empty key"},
            "numbers": [0, -1, 3.0, 1e300, 18446744073709551615u64, -9223372036854775808i64, 0.1],
            "unicode": "é 😀",
            "include": "include \"x\"",
        });
        round_trip(&value, Syntax::Hocon).unwrap();
    }

    fn nasty_char() -> impl Strategy<Value = char> {
        prop_oneof![
            6 => prop::sample::select(vec![
                'a', 'b', 'Z', '0', '1', '9', ' ', ' ', ':', '#', '-', '?', ',', '[', ']', '{', '}', '&', '*', '!',
                '|', '>', '\'', '"', '%', '@', '`', '.', '~', '=', '<', '+', '\\', '$', '\n', '\n', '\t', '\r',
                'é', '😀', '\u{0}', '\u{7f}', '\u{85}', '\u{a0}', '\u{2028}', '\u{feff}', '\u{fffe}',
            ]),
            1 => any::<char>(),
        ]
    }

    fn nasty_string() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop::collection::vec(nasty_char(), 0..12).prop_map(|cs| cs.into_iter().collect::<String>()),
            1 => prop::sample::select(vec![
                "", "true", "True", "yes", "no", "NO", "on", "null", "~", "1.0", "0x1", "0o7", "+1", ".5", "1e3",
                ".inf", "-.Inf", ".NaN", "2024-01-01", "12:30", " lead", "trail ", "a: b", "a #b", "---", "...",
                "<<", "-", "a\n", "a\n\n", "\n", "x\n y", "x\n\ny\n", "${x}", "include", "// c",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn number() -> impl Strategy<Value = serde_json::Value> {
        prop_oneof![
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            (-1000i64..1000).prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            prop::sample::select(vec![
                3.0, -0.0, 0.0, 1e300, -1e-300, 0.1, 1e16, 123456.0, 2.5e-7
            ])
            .prop_map(serde_json::Value::from),
        ]
    }

    fn tree() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            number(),
            nasty_string().prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec((nasty_string(), inner), 0..6)
                    .prop_map(|entries| serde_json::Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    fn object_tree() -> impl Strategy<Value = serde_json::Value> {
        prop::collection::vec((nasty_string(), tree()), 0..6)
            .prop_map(|entries| serde_json::Value::Object(entries.into_iter().collect()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn json_round_trips(value in tree()) {
            round_trip(&value, Syntax::Json).map_err(TestCaseError::fail)?;
        }

        #[test]
        fn yaml_round_trips(value in tree()) {
            round_trip(&value, Syntax::Yaml).map_err(TestCaseError::fail)?;
        }

        #[test]
        fn hocon_round_trips(value in object_tree()) {
            round_trip(&value, Syntax::Hocon).map_err(TestCaseError::fail)?;
        }
    }
}
