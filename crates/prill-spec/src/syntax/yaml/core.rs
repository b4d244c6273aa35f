//! The YAML 1.2 core schema: what a plain scalar means, and which tags are understood.

use saphyr_parser::Tag;

use super::{CORE_HANDLE, error};
use crate::diag::Diagnostic;
use crate::node::Span;
use crate::syntax::json::number_from_literal;

/// What a plain (unquoted, untagged) scalar means under the YAML 1.2 core schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plain {
    /// `null`, `Null`, `NULL`, `~` or nothing.
    Null,
    /// `true` or `false` in one of three spellings.
    Bool(bool),
    /// A number that JSON can hold.
    Number(serde_json::Number),
    /// A float literal too large to hold, such as `1e400`.
    OutOfRange,
    /// `.inf`, `-.inf` or `.nan` in one of their spellings.
    NonFinite,
    /// Anything else: the text itself.
    String,
}

/// The core-schema meaning of the plain scalar `text`.
pub(crate) fn resolve_plain(text: &str) -> Plain {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Plain::Null,
        "true" | "True" | "TRUE" => return Plain::Bool(true),
        "false" | "False" | "FALSE" => return Plain::Bool(false),
        _ => {}
    }
    if is_non_finite(text) {
        return Plain::NonFinite;
    }
    if let Some(n) = core_int(text) {
        return Plain::Number(n);
    }
    if is_core_float(text) {
        return match number_from_literal(text) {
            Some(n) => Plain::Number(n),
            None => Plain::OutOfRange,
        };
    }
    Plain::String
}

/// `.inf`, `+.inf`, `-.inf` and `.nan` in their lower, title and upper case spellings.
pub(super) fn is_non_finite(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN")
}

/// A core-schema integer: `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+`. Values too
/// large for 64 bits become floats.
pub(super) fn core_int(text: &str) -> Option<serde_json::Number> {
    for (prefix, radix) in [("0o", 8), ("0x", 16)] {
        if let Some(digits) = text.strip_prefix(prefix) {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            let big = |acc: f64, d: u32| acc * f64::from(radix) + f64::from(d);
            return match u64::from_str_radix(digits, radix) {
                Ok(u) => Some(u.into()),
                Err(_) => serde_json::Number::from_f64(
                    digits
                        .chars()
                        .filter_map(|c| c.to_digit(radix))
                        .fold(0.0, big),
                ),
            };
        }
    }
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number_from_literal(text)
}

/// A core-schema float: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
pub(super) fn is_core_float(text: &str) -> bool {
    let b = text.strip_prefix(['+', '-']).unwrap_or(text).as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = digits(0);
    let int_digits = i;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        frac_digits = digits(i + 1);
        i += 1 + frac_digits;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp = digits(i);
        if exp == 0 {
            return false;
        }
        i += exp;
    }
    i == b.len()
}

/// What a tag asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum TagKind {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Map,
    Seq,
    /// The non-specific tag `!`: a string for a scalar, nothing for a collection.
    NonSpecific,
    Unsupported,
}

pub(super) fn tag_kind(tag: &Tag) -> TagKind {
    let suffix = match (tag.handle.as_str(), tag.suffix.as_str()) {
        ("", "!") => return TagKind::NonSpecific,
        (CORE_HANDLE, suffix) => suffix,
        // A verbatim tag, `!<tag:yaml.org,2002:str>`.
        ("", full) => full.strip_prefix(CORE_HANDLE).unwrap_or_default(),
        _ => "",
    };
    match suffix {
        "str" => TagKind::Str,
        "int" => TagKind::Int,
        "float" => TagKind::Float,
        "bool" => TagKind::Bool,
        "null" => TagKind::Null,
        "map" => TagKind::Map,
        "seq" => TagKind::Seq,
        _ => TagKind::Unsupported,
    }
}

/// The tag as it is usually written: `!!int`, `!name`, or in full.
pub(super) fn tag_text(tag: &Tag) -> String {
    if tag.handle == CORE_HANDLE {
        format!("!!{}", tag.suffix)
    } else if tag.handle == "!" {
        format!("!{}", tag.suffix)
    } else if tag.handle.is_empty() {
        format!("!<{}>", tag.suffix)
    } else {
        format!("{}{}", tag.handle, tag.suffix)
    }
}

/// The `yaml-tag` diagnostic for a tag this parser does not support.
pub(super) fn unsupported_tag(tag: &Tag, span: Span) -> Diagnostic {
    let help = if tag.handle == "!" && !tag.suffix.is_empty() {
        format!("write it as a key: `- {}: ...`", tag.suffix)
    } else {
        "the supported tags are `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map` and `!!seq`"
            .to_owned()
    };
    error(
        "yaml-tag",
        format!("unsupported tag `{}`", tag_text(tag)),
        span,
    )
    .help(help)
}
