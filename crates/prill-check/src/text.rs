//! Showing values in messages: compact JSON, cut with a visible marker.

use serde_json::Value;

/// How many characters of a value a message shows.
pub const PREVIEW_CHARS: usize = 80;

/// A value as compact JSON text, cut to [`PREVIEW_CHARS`] with `…` when longer.
pub fn preview(value: &Value) -> String {
    cut(&value.to_string(), PREVIEW_CHARS)
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

/// A found value as a check result keeps it: long strings cut to [`FOUND_CHARS`]
/// characters, other values as they are when their JSON text is short, else their cut
/// JSON text.
pub fn short(value: &Value) -> Value {
    match value {
        Value::String(s) if s.chars().count() > FOUND_CHARS => Value::String(cut(s, FOUND_CHARS)),
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => value.clone(),
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
