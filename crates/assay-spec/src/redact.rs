//! Keeping values that came from the environment out of every message.
//!
//! A HOCON test file may read a key from the environment (`${OPENAI_API_KEY}`, as
//! neuro-san's own `with_user_api_key.hocon` does). The value has to reach the agent,
//! so it stays in the plan, but no diagnostic and no listing may show it: they show
//! where it came from, `${OPENAI_API_KEY}`, instead. A [`Redactor`] holds the values
//! one file read and rewrites text and JSON that might quote them.

use std::fmt;

use crate::diag::Diagnostic;
use crate::syntax::Env;

/// Values shorter than this are replaced only where they are the whole text: a
/// one-character value replaced everywhere would garble every message, and is no
/// secret.
const MIN_LEN: usize = 4;

/// The values some environment variables hold, each with the `${NAME}` shown instead.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// `(${NAME}, value)`, longest value first so that a value that contains
    /// another is replaced whole.
    pairs: Vec<(String, String)>,
}

impl fmt::Debug for Redactor {
    /// Names only: the values are what this type exists to hide.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.pairs.iter().map(|(name, _)| name))
            .finish()
    }
}

impl Redactor {
    /// A redactor for the variables `names`, with their values from `env`. A variable
    /// that is unset or empty has nothing to hide.
    pub fn new(names: &[String], env: &Env) -> Self {
        let mut r = Redactor::default();
        for name in names {
            if let Some(value) = env.get(name) {
                r.add(name, value);
            }
        }
        r
    }

    fn add(&mut self, name: &str, value: &str) {
        if value.is_empty() {
            return;
        }
        let shown = format!("${{{name}}}");
        let mut forms = vec![value.to_owned()];
        // As a JSON preview quotes it, with its escapes.
        let escaped = serde_json::to_string(value).unwrap_or_default();
        let escaped = escaped[1..escaped.len().saturating_sub(1).max(1)].to_owned();
        if escaped != value {
            forms.push(escaped);
        }
        for form in forms {
            if !self.pairs.iter().any(|(_, v)| *v == form) {
                self.pairs.push((shown.clone(), form));
            }
        }
        self.pairs.sort_by_key(|p| std::cmp::Reverse(p.1.len()));
    }

    /// Adds every value `other` hides.
    pub fn extend(&mut self, other: &Redactor) {
        for (shown, value) in &other.pairs {
            if !self.pairs.iter().any(|(_, v)| v == value) {
                self.pairs.push((shown.clone(), value.clone()));
            }
        }
        self.pairs.sort_by_key(|p| std::cmp::Reverse(p.1.len()));
    }

    /// Whether there is nothing to hide.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// `text` with every value replaced by its `${NAME}`, including a value cut short
    /// at the end of a preview (`"sk-abc…`).
    pub fn text(&self, text: &str) -> String {
        if self.pairs.is_empty() {
            return text.to_owned();
        }
        let mut out = text.to_owned();
        for (shown, value) in &self.pairs {
            let whole = out == *value
                || out.strip_prefix('"').and_then(|s| s.strip_suffix('"')) == Some(value);
            if whole || value.chars().count() >= MIN_LEN {
                out = out.replace(value.as_str(), shown);
            }
        }
        if out.contains('…') {
            // A preview cut in the middle of a value: each piece before a `…` may end
            // with the start of one.
            let pieces: Vec<&str> = out.split('…').collect();
            let last = pieces.len() - 1;
            let mut joined = String::with_capacity(out.len());
            for (i, piece) in pieces.iter().enumerate() {
                let hidden = (i < last)
                    .then(|| {
                        self.pairs.iter().find_map(|(shown, value)| {
                            cut_tail(piece, value).map(|cut| format!("{}{shown}", &piece[..cut]))
                        })
                    })
                    .flatten();
                joined.push_str(hidden.as_deref().unwrap_or(piece));
                if i < last {
                    joined.push('…');
                }
            }
            out = joined;
        }
        out
    }

    /// Replaces every value in the strings of `json`.
    pub fn json(&self, json: &mut serde_json::Value) {
        if self.pairs.is_empty() {
            return;
        }
        match json {
            serde_json::Value::String(s) => *s = self.text(s),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.json(v)),
            _ => {}
        }
    }

    /// Replaces every value in a diagnostic's text.
    pub fn diagnostic(&self, d: &mut Diagnostic) {
        if self.pairs.is_empty() {
            return;
        }
        d.path = self.text(&d.path);
        d.message = self.text(&d.message);
        for text in [&mut d.expected, &mut d.found, &mut d.help, &mut d.detail]
            .into_iter()
            .flatten()
        {
            *text = self.text(text);
        }
    }
}

/// Where the start of `value` begins when `body` ends with at least [`MIN_LEN`]
/// characters of it, but not all of it.
fn cut_tail(body: &str, value: &str) -> Option<usize> {
    let ends: Vec<usize> = value
        .char_indices()
        .map(|(i, _)| i)
        .chain([value.len()])
        .skip(MIN_LEN)
        .collect();
    ends.into_iter()
        .rev()
        .find(|&k| body.ends_with(&value[..k]))
        .map(|k| body.len() - k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        let env = Env::from_pairs([("OPENAI_API_KEY", "sk-live-1234567890"), ("N", "1")]);
        Redactor::new(&["OPENAI_API_KEY".to_owned(), "N".to_owned()], &env)
    }

    #[test]
    fn values_become_their_variable() {
        let r = redactor();
        assert_eq!(
            r.text("found a string \"sk-live-1234567890\""),
            "found a string \"${OPENAI_API_KEY}\""
        );
        // A short value is replaced only where it is the whole text.
        assert_eq!(r.text("expected 1, 3, 5"), "expected 1, 3, 5");
        assert_eq!(r.text("\"1\""), "\"${N}\"");
        assert!(!format!("{r:?}").contains("sk-live"));
    }

    #[test]
    fn a_value_cut_short_by_a_preview_is_still_hidden() {
        let r = redactor();
        assert_eq!(
            r.text("{\"api_keys\":{\"openai\":\"sk-live-123…"),
            "{\"api_keys\":{\"openai\":\"${OPENAI_API_KEY}…"
        );
    }

    #[test]
    fn a_value_cut_short_inside_a_longer_text_is_hidden() {
        let r = redactor();
        assert_eq!(
            r.text("input_value={'k': 'sk-live-123…, input_type=dict]"),
            "input_value={'k': '${OPENAI_API_KEY}…, input_type=dict]"
        );
    }

    #[test]
    fn json_strings_are_rewritten() {
        let r = redactor();
        let mut json = serde_json::json!({"a": ["Bearer sk-live-1234567890"], "n": 1});
        r.json(&mut json);
        assert_eq!(
            json,
            serde_json::json!({"a": ["Bearer ${OPENAI_API_KEY}"], "n": 1})
        );
    }
}
