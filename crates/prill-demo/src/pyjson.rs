//! JSON written the way Python's `json.dumps` writes it with its defaults, as neuro-san does:
//! `", "` and `": "` separators and `ensure_ascii`, so every non-ASCII character is a
//! `\uXXXX` escape (a surrogate pair above U+FFFF).

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::Formatter;

/// A `serde_json` formatter with Python's default separators and `ensure_ascii=True`.
struct PyFormatter;

impl Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if c.is_ascii() {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[start..at])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            start = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// Appends `value` to `out` as Python's `json.dumps(value)` would write it.
pub(crate) fn write(out: &mut Vec<u8>, value: &Value) {
    let mut serializer = serde_json::Serializer::with_formatter(out, PyFormatter);
    // Writing a `Value` into a `Vec` cannot fail: its keys are strings and it holds no
    // non-finite floats.
    let _ = value.serialize(&mut serializer);
}

/// `value` as Python's `json.dumps(value)` would write it.
pub(crate) fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write(&mut out, value);
    out
}

/// `value` as Python's `json.dumps(value)` would write it.
pub(crate) fn to_string(value: &Value) -> String {
    String::from_utf8(to_vec(value)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn writes_like_python() {
        let value = json!({"a": [1, 2.0, "é😀"], "b": {"c": null, "d": "x\ny\"/"}});
        assert_eq!(
            to_string(&value),
            r#"{"a": [1, 2.0, "\u00e9\ud83d\ude00"], "b": {"c": null, "d": "x\ny\"/"}}"#
        );
    }

    #[test]
    fn floats_keep_their_point() {
        assert_eq!(to_string(&json!(19481.0)), "19481.0");
        assert_eq!(
            to_string(&json!({"running_cost": 3.0})),
            r#"{"running_cost": 3.0}"#
        );
    }
}
