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
    assay_spec::node::cut(text, max)
}

/// The text a judge or a text assertion sees of a value: a string as it is, anything
/// else as its JSON text.
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
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
}
