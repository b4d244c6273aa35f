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
//! - HOCON has a braced root, double-quoted keys and strings with JSON escapes
//!   (which HOCON does not scan for `${}`), one `key: value` per line.

use std::fmt::Write as _;

use super::yaml::{Plain, resolve_plain};
use crate::node::{Key, Node, Value};
use crate::source::Syntax;

/// `node` written in `syntax`, ending in a newline.
///
/// HOCON cannot hold a lone scalar at the root; such a node is written as its JSON
/// text, which a HOCON parser rejects.
pub fn emit(node: &Node, syntax: Syntax) -> String {
    let mut out = String::new();
    match syntax {
        Syntax::Json => {
            // `{:#}` is serde_json's infallible pretty printer (2-space indent).
            let _ = write!(out, "{:#}", node.to_json());
            out.push('\n');
        }
        Syntax::Yaml => Yaml { out: &mut out }.root(node),
        Syntax::Hocon => {
            hocon_value(&mut out, node, 0);
            out.push('\n');
        }
    }
    out
}

/// The longest key written as an implicit `key: value`; YAML allows 1024 characters
/// for an implicit key, including its quotes.
const MAX_IMPLICIT_KEY: usize = 1000;

struct Yaml<'o> {
    out: &'o mut String,
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

    /// A non-empty list whose `- ` marks stand at column `indent`; the cursor is
    /// already there on the first line.
    fn seq(&mut self, items: &[Node], indent: usize) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.indent(indent);
            }
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
                    self.scalar(item, indent + 2);
                    self.out.push('\n');
                }
            }
        }
    }

    /// A non-empty object whose keys stand at column `indent`; the cursor is already
    /// there on the first line.
    fn map(&mut self, entries: &[(Key, Node)], indent: usize) {
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 {
                self.indent(indent);
            }
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
                    self.out.push('\n');
                    self.indent(indent + 2);
                    self.seq(items, indent + 2);
                }
                Value::Object(inner) if !inner.is_empty() => {
                    self.out.push('\n');
                    self.indent(indent + 2);
                    self.map(inner, indent + 2);
                }
                _ => {
                    self.out.push(' ');
                    self.scalar(value, indent + 2);
                    self.out.push('\n');
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

/// Words that YAML 1.1 readers take as booleans or null; quoted so that every
/// reader agrees the value is a string.
const YAML11_WORDS: [&str; 22] = [
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
    "=", "<<", "nan", "NaN", "inf", "Inf",
];

/// Whether `s` can be written as a plain scalar (as a value or as a key, in block
/// context) and read back as that same string.
pub(crate) fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if resolve_plain(s) != Plain::String || YAML11_WORDS.contains(&s) {
        return false;
    }
    // Leading indicators, spaces and anything that may look like a number or date.
    if "-?:,[]{}#&*!|>'\"%@`.+~=<".contains(first) || first.is_ascii_digit() || first.is_whitespace() {
        return false;
    }
    let last = s.chars().next_back().unwrap_or(first);
    if last.is_whitespace() || last == ':' {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.contains(":\t") || s.contains("\t#") {
        return false;
    }
    s.chars().all(|c| is_printable(c) && !matches!(c, '\t' | '\n' | '\r'))
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
            && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'))
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

/// A HOCON value; nested lines are indented from `indent`.
fn hocon_value(out: &mut String, node: &Node, indent: usize) {
    match &node.value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => json_string(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(entries) if entries.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            for item in items {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent + 2));
                hocon_value(out, item, indent + 2);
            }
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent));
            out.push(']');
        }
        Value::Object(entries) => {
            out.push('{');
            for (key, value) in entries {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent + 2));
                json_string(out, &key.name);
                out.push_str(": ");
                hocon_value(out, value, indent + 2);
            }
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent));
            out.push('}');
        }
    }
}
