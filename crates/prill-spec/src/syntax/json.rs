//! JSON text to a located [`Node`] tree.
//!
//! The text is read with `jsonc-parser` with every extension turned off, so only
//! strict JSON is accepted: no comments, no trailing commas, no unquoted keys, no
//! single quotes, no hexadecimal or non-finite numbers. Every value and key keeps
//! the byte range it was written at. Integers stay integers and a literal with a
//! fraction or an exponent (`19481.0`, `1e3`) stays a float. Duplicate keys and raw
//! control characters in strings are reported as errors, as many as are found.

use std::collections::HashMap;

use jsonc_parser::ast::{self, ObjectPropName};
use jsonc_parser::common::Ranged;
use jsonc_parser::errors::{ParseError, ParseErrorKind};
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};

use crate::diag::Diagnostic;
use crate::node::{Key, Node, Span, Value};
use crate::source::Source;

/// Parses `source` as strict JSON.
///
/// Returns the located tree, or every problem found: one syntax error (parsing stops
/// there), or any number of duplicate keys, raw control characters in strings and
/// numbers too large to hold.
pub fn parse(source: &Source) -> Result<Node, Vec<Diagnostic>> {
    let full: &str = &source.text;
    // A byte order mark is not JSON, but editors write one; skip it and shift the spans.
    let base = if full.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let text = &full[base..];
    super::values::json(text).map_err(|d| vec![shift(*d, base)])?;
    let parsed = match parse_to_ast(text, &CollectOptions::default(), &strict_options()) {
        Ok(parsed) => parsed,
        Err(error) => return Err(vec![syntax_error(&error, base)]),
    };
    let Some(value) = parsed.value else {
        return Err(vec![
            Diagnostic::new("syntax", "", "the file is empty").at(Span::new(0, 0)),
        ]);
    };
    let mut builder = Builder {
        source,
        base,
        errors: Vec::new(),
    };
    let node = builder.value(&value);
    if builder.errors.is_empty() {
        Ok(node)
    } else {
        Err(builder.errors)
    }
}

/// `d`, whose span counts from `base` bytes into the file.
fn shift(mut d: Diagnostic, base: usize) -> Diagnostic {
    d.span = d.span.map(|s| Span::new(s.start + base, s.end + base));
    d
}

/// The `jsonc-parser` options that accept exactly JSON and nothing more.
fn strict_options() -> ParseOptions {
    ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// A parser error as a `syntax` diagnostic at the error's position.
fn syntax_error(error: &ParseError, base: usize) -> Diagnostic {
    let range = error.range();
    let span = Span::new(base + range.start, base + range.end);
    let (message, help) = describe(error.kind());
    Diagnostic::new("syntax", "", message)
        .at(span)
        .maybe_help(help.map(str::to_owned))
}

/// A lowercase message, and sometimes a hint, for a `jsonc-parser` error kind.
fn describe(kind: &ParseErrorKind) -> (String, Option<&'static str>) {
    let (message, help) = match kind {
        ParseErrorKind::CommentsNotAllowed => ("comments are not allowed in json", None),
        ParseErrorKind::TrailingCommasNotAllowed => (
            "trailing commas are not allowed in json",
            Some("remove the comma after the last item"),
        ),
        ParseErrorKind::ExpectedStringObjectProperty => {
            ("an object key must be a string in double quotes", None)
        }
        ParseErrorKind::SingleQuotedStringsNotAllowed => {
            ("strings must be in double quotes in json", None)
        }
        ParseErrorKind::MultipleRootJsonValues => (
            "unexpected text after the json value",
            Some("a json file holds exactly one value; wrap several in a list"),
        ),
        ParseErrorKind::ExpectedComma => ("expected a comma", None),
        ParseErrorKind::ExpectedColonAfterObjectKey => ("expected `:` after the key", None),
        ParseErrorKind::NonFiniteNumbersNotAllowed => ("non-finite numbers are not allowed", None),
        ParseErrorKind::HexadecimalNumbersNotAllowed => {
            ("hexadecimal numbers are not allowed in json", None)
        }
        ParseErrorKind::UnaryPlusNumbersNotAllowed => {
            ("a number cannot start with `+` in json", None)
        }
        ParseErrorKind::BareDecimalPointNumbersNotAllowed => {
            ("a decimal point needs digits on both sides in json", None)
        }
        ParseErrorKind::NestingDepthExceeded => ("the values are nested too deeply", None),
        other => return (tidy_message(&other.to_string()), None),
    };
    (message.to_owned(), help)
}

/// `text` with a lowercase first letter and no trailing period.
pub(crate) fn tidy_message(text: &str) -> String {
    let text = text.trim().trim_end_matches('.');
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::from("invalid syntax"),
    }
}

/// Turns the `jsonc-parser` tree into ours, collecting the errors it finds.
struct Builder<'s> {
    source: &'s Source,
    base: usize,
    errors: Vec<Diagnostic>,
}

impl Builder<'_> {
    fn span(&self, ranged: &impl Ranged) -> Span {
        let range = ranged.range();
        Span::new(self.base + range.start, self.base + range.end)
    }

    fn value(&mut self, value: &ast::Value<'_>) -> Node {
        let span = self.span(value);
        let value = match value {
            ast::Value::NullKeyword(_) => Value::Null,
            ast::Value::BooleanLit(b) => Value::Bool(b.value),
            ast::Value::NumberLit(n) => self.number(n.value, span),
            ast::Value::StringLit(s) => {
                self.check_raw_controls(span);
                Value::String(s.value.to_string())
            }
            ast::Value::Array(array) => {
                Value::Array(array.elements.iter().map(|v| self.value(v)).collect())
            }
            ast::Value::Object(object) => self.object(object),
        };
        Node::new(value, span)
    }

    fn object(&mut self, object: &ast::Object<'_>) -> Value {
        let mut seen: HashMap<String, Span> = HashMap::new();
        let mut entries = Vec::with_capacity(object.properties.len());
        for prop in &object.properties {
            let key_span = match &prop.name {
                ObjectPropName::String(s) => self.span(s),
                ObjectPropName::Word(w) => self.span(w),
            };
            self.check_raw_controls(key_span);
            let name = prop.name.as_str().to_owned();
            let value = self.value(&prop.value);
            if let Some(first) = seen.get(&name) {
                self.errors
                    .push(duplicate_key(self.source, &name, *first, key_span));
                continue;
            }
            seen.insert(name.clone(), key_span);
            entries.push((
                Key {
                    name,
                    span: key_span,
                },
                value,
            ));
        }
        Value::Object(entries)
    }

    /// A JSON number literal: an integer when it has no fraction and no exponent and
    /// fits 64 bits, otherwise a float.
    fn number(&mut self, literal: &str, span: Span) -> Value {
        match number_from_literal(literal) {
            Some(n) => Value::Number(n),
            None => {
                self.errors.push(
                    Diagnostic::new("syntax", "", format!("the number `{literal}` is too large"))
                        .at(span)
                        .help("a number must fit a 64-bit float"),
                );
                Value::Null
            }
        }
    }

    /// Reports raw control characters (U+0000 to U+001F) inside a string literal,
    /// which JSON forbids but `jsonc-parser` lets through.
    fn check_raw_controls(&mut self, span: Span) {
        let Some(raw) = self.source.text.get(span.start..span.end) else {
            return;
        };
        if let Some(i) = raw.bytes().position(|b| b < 0x20) {
            let at = span.start + i;
            self.errors.push(
                Diagnostic::new(
                    "syntax",
                    "",
                    "a control character in a string must be escaped in json",
                )
                .at(Span::new(at, at + 1))
                .help("write a line break as `\\n` and a tab as `\\t`"),
            );
        }
    }
}

/// The number a JSON (or YAML) decimal literal denotes: `i64`, then `u64` when it
/// has no `.`, `e` or `E`, otherwise (or when too large for both) `f64`. `None` when
/// the value is not finite.
pub(crate) fn number_from_literal(literal: &str) -> Option<serde_json::Number> {
    if !literal.contains(['.', 'e', 'E']) {
        if let Ok(i) = literal.parse::<i64>() {
            return Some(i.into());
        }
        if let Ok(u) = literal.trim_start_matches('+').parse::<u64>() {
            return Some(u.into());
        }
    }
    literal
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
}

/// The `duplicate-key` diagnostic at the second `name`, naming the line of the first.
pub(crate) fn duplicate_key(source: &Source, name: &str, first: Span, second: Span) -> Diagnostic {
    let (line, _) = source.line_col(first.start);
    Diagnostic::new("duplicate-key", "", format!("duplicate key `{name}`"))
        .at(second)
        .help(format!(
            "`{name}` is already set on line {line}; keep only one"
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> Source {
        Source::new("t.json", text)
    }

    fn ok(text: &str) -> Node {
        match parse(&src(text)) {
            Ok(node) => node,
            Err(errors) => panic!("{text:?} failed: {errors:#?}"),
        }
    }

    fn errs(text: &str) -> Vec<Diagnostic> {
        match parse(&src(text)) {
            Ok(node) => panic!("{text:?} parsed as {node}"),
            Err(errors) => errors,
        }
    }

    fn at(source: &Source, span: Span) -> (usize, usize) {
        source.line_col(span.start)
    }

    #[test]
    fn spans_point_at_keys_and_values() {
        let text = "{\n  \"a\": 1,\n  \"b\": {\"c\": [true, null, \"é\"]},\n  \"ü\": \"x\"\n}\n";
        let source = src(text);
        let node = ok(text);
        assert_eq!(at(&source, node.span), (1, 1));
        let (ka, va) = node.entry("a").unwrap();
        assert_eq!(at(&source, ka.span), (2, 3));
        assert_eq!(&text[ka.span.start..ka.span.end], "\"a\"");
        assert_eq!(at(&source, va.span), (2, 8));
        let b = node.get("b").unwrap();
        assert_eq!(at(&source, b.span), (3, 8));
        let (kc, c) = b.entry("c").unwrap();
        assert_eq!(at(&source, kc.span), (3, 9));
        assert_eq!(&text[c.span.start..c.span.end], "[true, null, \"é\"]");
        let items = c.as_array().unwrap();
        assert_eq!(at(&source, items[1].span), (3, 21));
        assert_eq!(&text[items[2].span.start..items[2].span.end], "\"é\"");
        let (ku, vu) = node.entry("ü").unwrap();
        assert_eq!(at(&source, ku.span), (4, 3));
        assert_eq!(at(&source, vu.span), (4, 8));
        assert_eq!(vu.as_str(), Some("x"));
    }

    #[test]
    fn number_kinds_are_kept() {
        let node = ok(
            r#"[1, -2, 19481.0, 1e3, 2.5E-3, 18446744073709551615, 1e300, -0, 123456789012345678901234]"#,
        );
        let json = node.to_json();
        let items = json.as_array().unwrap();
        assert!(items[0].is_i64());
        assert!(items[1].is_i64());
        assert!(items[2].is_f64());
        assert_eq!(items[2].to_string(), "19481.0");
        assert!(items[3].is_f64());
        assert!(items[4].is_f64());
        assert!(items[5].is_u64());
        assert!(items[6].is_f64());
        assert!(items[7].is_i64());
        assert!(items[8].is_f64());
        assert_eq!(node.as_array().unwrap()[0].type_name(), "integer");
        assert_eq!(node.as_array().unwrap()[2].type_name(), "number");
    }

    #[test]
    fn strings_and_escapes() {
        let node = ok(r#"{"s": "a\"b\\c\n\u00e9\ud83d\ude00/\/"}"#);
        assert_eq!(node.get("s").unwrap().as_str(), Some("a\"b\\c\né😀//"));
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let text = "\u{feff}{\"a\": 1}";
        let source = src(text);
        let node = ok(text);
        let (k, _) = node.entry("a").unwrap();
        assert_eq!(&text[k.span.start..k.span.end], "\"a\"");
        assert_eq!(at(&source, node.span), (1, 2));
    }

    #[test]
    fn empty_file_is_an_error() {
        for text in ["", "  \n\t\n"] {
            let e = errs(text);
            assert_eq!(e.len(), 1);
            assert_eq!(e[0].code, "syntax");
            assert_eq!(e[0].message, "the file is empty");
        }
    }

    #[test]
    fn duplicate_keys_are_all_reported() {
        let text = "{\n  \"a\": 1,\n  \"b\": {\"x\": 1, \"x\": 2},\n  \"a\": 3\n}";
        let source = src(text);
        let e = errs(text);
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(e.iter().all(|d| d.code == "duplicate-key"));
        let x = e.iter().find(|d| d.message == "duplicate key `x`").unwrap();
        assert_eq!(at(&source, x.span.unwrap()), (3, 17));
        let a = e.iter().find(|d| d.message == "duplicate key `a`").unwrap();
        assert_eq!(at(&source, a.span.unwrap()), (4, 3));
        assert!(a.help.as_deref().unwrap().contains("line 2"), "{a:?}");
    }

    #[test]
    fn extensions_are_syntax_errors() {
        let cases = [
            ("{\"a\": 1} // c", (1, 10)),
            ("{\"a\": /* c */ 1}", (1, 7)),
            ("{\"a\": 1,}", (1, 8)),
            ("[1, 2,]", (1, 6)),
            ("{a: 1}", (1, 2)),
            ("{\"a\": 'x'}", (1, 7)),
            ("[0x10]", (1, 2)),
            ("[+1]", (1, 2)),
            ("[.5]", (1, 2)),
            ("[NaN]", (1, 2)),
            ("[Infinity]", (1, 2)),
            ("[1 2]", (1, 3)),
            ("{\"a\": 1\n \"b\": 2}", (1, 8)),
            ("{\"a\" 1}", (1, 6)),
            ("[\"\\x41\"]", (1, 3)),
            ("{\"a\": tru}", (1, 7)),
            ("{\"a\": 1", (1, 1)),
            ("[1] [2]", (1, 5)),
            ("\"abc", (1, 1)),
            ("[\"a\tb\"]", (1, 4)),
            ("[1e400]", (1, 2)),
        ];
        for (text, pos) in cases {
            let source = src(text);
            let e = errs(text);
            assert_eq!(e.len(), 1, "{text:?}: {e:#?}");
            let d = &e[0];
            assert_eq!(d.code, "syntax", "{text:?}");
            assert_eq!(at(&source, d.span.unwrap()), pos, "{text:?}: {d:?}");
            let first = d.message.chars().next().unwrap();
            assert!(!first.is_uppercase(), "{text:?}: {}", d.message);
            assert!(!d.message.ends_with('.'), "{text:?}: {}", d.message);
        }
    }

    #[test]
    fn a_large_document_parses() {
        let mut text = String::from("[");
        for i in 0..40_000 {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!("{{\"k{i}\": \"välue {i}\", \"n\": {i}.5}}"));
        }
        text.push(']');
        assert!(text.len() > 1_000_000);
        let node = ok(&text);
        assert_eq!(node.as_array().unwrap().len(), 40_000);
        let last = &node.as_array().unwrap()[39_999];
        let (k, _) = last.entry("k39999").unwrap();
        assert_eq!(&text[k.span.start..k.span.end], "\"k39999\"");
    }
}
