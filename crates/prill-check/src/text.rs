//! Showing values in messages: compact JSON, cut with a visible marker.

use serde_json::Value;

/// How many characters of a value a message shows.
pub const PREVIEW_CHARS: usize = 80;

/// A value (a [`Value`], a `str`, anything serializable) as compact JSON text, cut to
/// [`PREVIEW_CHARS`] with `…` when longer. Only the start of the text is made: a long
/// answer is not copied whole to show its first characters.
pub fn preview<T: serde::Serialize + ?Sized>(value: &T) -> String {
    // A character takes at most 4 bytes: a text cut here still has more characters than
    // are shown, so it is cut (and marked) exactly as the whole text would be.
    let mut start = Start {
        bytes: Vec::new(),
        max: PREVIEW_CHARS * 4 + 4,
    };
    let _ = serde_json::to_writer(&mut start, value);
    cut(&String::from_utf8_lossy(&start.bytes), PREVIEW_CHARS)
}

/// The first `max` bytes written to it; a write past them fails, which ends the
/// serialization.
struct Start {
    bytes: Vec<u8>,
    max: usize,
}

impl std::io::Write for Start {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.max - self.bytes.len();
        if room == 0 {
            return Err(std::io::Error::other("the preview is full"));
        }
        let n = buf.len().min(room);
        self.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `text` cut to `max` characters, ending in `…` when it was cut.
pub fn cut(text: &str, max: usize) -> String {
    prill_spec::node::cut(text, max)
}

/// The text a judge or a text assertion sees of a value: a string as it is, anything
/// else as its JSON text.
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// How many characters of a found value a check result keeps.
pub const FOUND_CHARS: usize = 500;

/// A found text as a check result keeps it: cut to [`FOUND_CHARS`] characters when
/// longer, without copying the whole of it first.
pub fn short_text(text: &str) -> Value {
    if text.chars().nth(FOUND_CHARS).is_some() {
        Value::String(cut(text, FOUND_CHARS))
    } else {
        Value::String(text.to_owned())
    }
}

/// A found value as a check result keeps it: long strings cut to [`FOUND_CHARS`]
/// characters, other values as they are when their JSON text is short, else their cut
/// JSON text.
pub fn short(value: &Value) -> Value {
    match value {
        Value::String(s) => short_text(s),
        Value::Number(_) | Value::Bool(_) | Value::Null => value.clone(),
        other => {
            let text = other.to_string();
            if text.chars().count() > FOUND_CHARS {
                Value::String(cut(&text, FOUND_CHARS))
            } else {
                other.clone()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_values_are_cut_with_a_marker() {
        let long = json!("a".repeat(500));
        let p = preview(&long);
        assert_eq!(p.chars().count(), PREVIEW_CHARS);
        assert!(p.ends_with('…'));
        assert_eq!(preview(&json!(3.0)), "3.0");
        assert_eq!(as_text(&json!({"a": 1})), "{\"a\":1}");
        assert_eq!(as_text(&json!("x")), "x");
    }

    #[test]
    fn a_preview_is_the_whole_text_cut_without_making_the_whole_text() {
        let mut values = vec![json!({"a": ["x".repeat(1000)]}), json!(["😀".repeat(400)])];
        for n in [0, 1, 77, 78, 79, 80, 81, 200, 320, 330, 10_000] {
            values.extend([
                json!("a".repeat(n)),
                json!("é".repeat(n)),
                json!("😀".repeat(n)),
                json!("\u{1}".repeat(n)),
            ]);
        }
        for value in &values {
            let whole = cut(&value.to_string(), PREVIEW_CHARS);
            assert_eq!(preview(value), whole, "{value}");
        }
        assert_eq!(preview("a\"b"), r#""a\"b""#);
        assert_eq!(
            preview(&"z".repeat(5_000_000)).chars().count(),
            PREVIEW_CHARS
        );
    }

    #[test]
    fn found_values_are_kept_short() {
        assert_eq!(short(&json!(3)), json!(3));
        assert_eq!(short(&json!({"a": [1, 2]})), json!({"a": [1, 2]}));
        let long = short(&json!("b".repeat(900)));
        assert_eq!(long.as_str().unwrap().chars().count(), FOUND_CHARS);
        let big = short(&json!(vec!["word"; 200]));
        let text = big.as_str().expect("a long list becomes its cut JSON text");
        assert!(text.starts_with("[\"word\",") && text.ends_with('…'));
    }
}
