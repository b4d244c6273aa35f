//! Keeping values that came from the environment out of every message.
//!
//! A HOCON test file may read a key from the environment (`${OPENAI_API_KEY}`, as
//! neuro-san's own `with_user_api_key.hocon` does). The value has to reach the agent,
//! so it stays in the plan, but no diagnostic and no listing may show it: they show
//! where it came from, `${OPENAI_API_KEY}`, instead. A [`Redactor`] holds the values
//! one file read and rewrites text and JSON that might quote them.
//!
//! A [`Redactor`] also holds keys ([`Redactor::secret`]): a provider's key, a bearer
//! token sent as metadata. Those are blanked whole and, for a key of at least
//! [`PARTIAL_MIN_LEN`] characters, in part too: a run of at least [`MIN_LEN`] characters
//! that starts a word with the key's start, or ends a word with its end, as a provider
//! quotes a key it refused (`Incorrect API key provided: sk-abcd****wxyz`).

use std::fmt;

use crate::diag::Diagnostic;
use crate::syntax::Env;

/// Values shorter than this are replaced only where they are the whole text: a
/// one-character value replaced everywhere would garble every message, and is no
/// secret.
pub const MIN_LEN: usize = 4;

/// The environment variables that hold keys in every ecosystem Prill speaks to (a
/// provider's `api_key_env` of `prill.toml`, and `[frameworks.langgraph]`'s, add their
/// own): their values are blanked
/// out of every message, stderr tail and report.
pub const KEY_VARIABLES: &[&str] = &[
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "LANGGRAPH_API_KEY",
    "LANGSMITH_API_KEY",
    "LANGCHAIN_API_KEY",
];

/// Keys at least this long are blanked in part too (their first or last [`MIN_LEN`] or
/// more characters); a shorter one would leave too little of itself to hide.
pub const PARTIAL_MIN_LEN: usize = 12;

/// The values some environment variables hold, each with the `${NAME}` shown instead.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// `(${NAME}, value)`, longest value first so that a value that contains
    /// another is replaced whole.
    pairs: Vec<(String, String)>,
    /// `(shown, key)` of the keys also blanked in part.
    keys: Vec<(String, String)>,
}

impl fmt::Debug for Redactor {
    /// Names only: the values are what this type exists to hide.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.pairs.iter().map(|(name, _)| name))
            .finish()?;
        if !self.keys.is_empty() {
            write!(f, " and {} key(s)", self.keys.len())?;
        }
        Ok(())
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
        self.add_shown(format!("${{{name}}}"), value);
    }

    /// Hides `key` (a provider's key, a bearer token) as `shown`: whole, as JSON quotes
    /// it, after a `Bearer ` scheme, and, when it has at least [`PARTIAL_MIN_LEN`]
    /// characters, a word that starts with at least [`MIN_LEN`] of its first characters
    /// or ends with at least [`MIN_LEN`] of its last ones. A key shorter than
    /// [`MIN_LEN`] is hidden only where it is the whole text.
    pub fn secret(&mut self, shown: impl Into<String>, key: &str) {
        let shown = shown.into();
        let key = key.trim();
        let key = key
            .strip_prefix("Bearer ")
            .or_else(|| key.strip_prefix("bearer "))
            .unwrap_or(key)
            .trim();
        if key.is_empty() {
            return;
        }
        self.add_shown(shown.clone(), key);
        if key.chars().count() >= PARTIAL_MIN_LEN && !self.keys.iter().any(|(_, k)| k == key) {
            self.keys.push((shown, key.to_owned()));
        }
    }

    /// Hides the value of each variable of `names` that `lookup` finds, as `${NAME}`,
    /// as a key ([`Redactor::secret`]).
    pub fn secret_variables<'a>(
        &mut self,
        names: impl IntoIterator<Item = &'a str>,
        lookup: impl Fn(&str) -> Option<String>,
    ) {
        for name in names {
            if let Some(value) = lookup(name) {
                self.secret(format!("${{{name}}}"), &value);
            }
        }
    }

    fn add_shown(&mut self, shown: String, value: &str) {
        if value.is_empty() {
            return;
        }
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
        for (shown, key) in &other.keys {
            if !self.keys.iter().any(|(_, k)| k == key) {
                self.keys.push((shown.clone(), key.clone()));
            }
        }
        self.pairs.sort_by_key(|p| std::cmp::Reverse(p.1.len()));
    }

    /// The same values and keys, hidden the same way (keys in part too), each shown as
    /// `shown` rather than as its `${NAME}`: for a file that must read the same
    /// whichever variable held a value (a cassette's `<redacted>`).
    pub fn shown_as(&self, shown: &str) -> Redactor {
        Redactor {
            pairs: self
                .pairs
                .iter()
                .map(|(_, value)| (shown.to_owned(), value.clone()))
                .collect(),
            keys: self
                .keys
                .iter()
                .map(|(_, key)| (shown.to_owned(), key.clone()))
                .collect(),
        }
    }

    /// Every value it hides, longest first: for a writer that blanks them its own way
    /// (a cassette, `docs/cassettes.md`). Never print them.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.pairs.iter().map(|(_, value)| value.as_str())
    }

    /// Whether there is nothing to hide.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// `text` with every value hidden, as [`Redactor::text`], or `text` itself when
    /// there is nothing to hide.
    pub fn string(&self, text: String) -> String {
        if self.is_empty() {
            text
        } else {
            self.text(&text)
        }
    }

    /// Whether [`Redactor::text`] could change `text`: a value is in it, or a preview
    /// cut (`…`) that may end with the start of one. Most texts hold neither, and are
    /// left as they are without a copy ([`Redactor::in_place`]).
    fn touches(&self, text: &str) -> bool {
        if self.pairs.is_empty() {
            return false;
        }
        text.contains('…')
            || self.pairs.iter().any(|(_, v)| text.contains(v.as_str()))
            || self.keys.iter().any(|(_, key)| {
                // A part of a key that `hide_parts` blanks starts with the key's first
                // MIN_LEN characters, or ends with its last MIN_LEN.
                let (head, tail) = ends(key, MIN_LEN);
                text.contains(head) || text.contains(tail)
            })
    }

    /// Hides every value in `text` where it is, as [`Redactor::text`] does; a text
    /// with nothing to hide is not copied.
    pub fn in_place(&self, text: &mut String) {
        if self.touches(text) {
            *text = self.text(text);
        }
    }

    /// `text` with every value replaced by its `${NAME}`, including a value cut short
    /// at the end of a preview (`"sk-abc…`).
    pub fn text(&self, text: &str) -> String {
        if !self.touches(text) {
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
        for (shown, key) in &self.keys {
            out = hide_parts(&out, key, shown);
        }
        out
    }

    /// Replaces every value in the strings of `json`.
    pub fn json(&self, json: &mut serde_json::Value) {
        if self.pairs.is_empty() {
            return;
        }
        match json {
            serde_json::Value::String(s) => self.in_place(s),
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

/// Whether `c` is part of a word as keys are written (`sk-proj_AbC1`).
fn in_word(c: char) -> bool {
    c.is_alphanumeric() || c == '-' || c == '_'
}

/// `text` with every word start that begins like `key` (at least [`MIN_LEN`]
/// characters of it) and every word end that ends like it replaced by `shown`.
/// The first and the last `n` characters of `text` (all of it when shorter).
fn ends(text: &str, n: usize) -> (&str, &str) {
    let head = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    let tail = text
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    (&text[..head], &text[tail..])
}

fn hide_parts(text: &str, key: &str, shown: &str) -> String {
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let starts_word = |i: usize| text[..i].chars().next_back().is_none_or(|c| !in_word(c));
    let ends_word = |j: usize| text[j..].chars().next().is_none_or(|c| !in_word(c));
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    for &i in &boundaries {
        if !starts_word(i) {
            continue;
        }
        let same = common_prefix(&text[i..], key);
        if same >= MIN_LEN {
            let end = i + text[i..]
                .char_indices()
                .nth(same)
                .map_or(text.len() - i, |(b, _)| b);
            cuts.push((i, end));
        }
    }
    for &j in &boundaries {
        if !ends_word(j) {
            continue;
        }
        let same = common_suffix(&text[..j], key);
        if same >= MIN_LEN {
            let start = text[..j]
                .char_indices()
                .rev()
                .nth(same - 1)
                .map_or(0, |(b, _)| b);
            cuts.push((start, j));
        }
    }
    if cuts.is_empty() {
        return text.to_owned();
    }
    cuts.sort();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in cuts {
        if end <= at {
            continue;
        }
        if start >= at {
            out.push_str(&text[at..start]);
            out.push_str(shown);
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// How many characters `a` and `b` start with alike.
fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// How many characters `a` and `b` end with alike.
fn common_suffix(a: &str, b: &str) -> usize {
    a.chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_changes_exactly_what_text_changes() {
        let mut r = Redactor::default();
        r.secret("${OPENAI_API_KEY}", "sk-proj-abcdefghijklmnopQz4w");
        r.secret("${TOKEN}", "tok-1234");
        for text in [
            "nothing secret here",
            "key sk-proj-abcdefghijklmnopQz4w refused",
            "masked as sk-***…Qz4w by the server",
            "ends with jklmnopQz4w",
            "starts sk-proj-abc and stops",
            "the token tok-1234",
            "a preview \"tok-12…",
            "sk-p",
            "",
        ] {
            let mut in_place = text.to_owned();
            r.in_place(&mut in_place);
            assert_eq!(in_place, r.text(text), "{text}");
        }
        let mut shown = "masked as sk-***…Qz4w by the server".to_owned();
        r.in_place(&mut shown);
        assert!(!shown.contains("Qz4w"), "{shown}");
    }

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

    #[test]
    fn a_key_quoted_in_part_is_hidden() {
        let mut r = Redactor::default();
        r.secret("<redacted>", "Bearer sk-abcdEFGH12345678wxyz");
        assert_eq!(
            r.text("Incorrect API key provided: sk-abcd****wxyz. You can find your key"),
            "Incorrect API key provided: <redacted>****<redacted>. You can find your key"
        );
        assert_eq!(r.text("key sk-abcdEFGH12345678wxyz!"), "key <redacted>!");
        // Three characters are not a part worth hiding, and the middle of a word is
        // not where a quoted key starts.
        assert_eq!(
            r.text("sk- and xyz and ask-abcd"),
            "sk- and xyz and ask-abcd"
        );
        assert!(!format!("{r:?}").contains("sk-abcd"));
    }

    #[test]
    fn a_short_key_is_hidden_only_whole() {
        let mut r = Redactor::default();
        r.secret("<redacted>", "abcdef");
        assert_eq!(r.text("abcdef and abcd"), "<redacted> and abcd");
    }

    #[test]
    fn shown_as_hides_the_same_values_and_keys_under_one_text() {
        let mut r = redactor();
        r.secret("${OPENAI_API_KEY}", "sk-proj-abcdefghijklmnopZx9Q");
        let blank = r.shown_as("<redacted>");
        assert_eq!(
            blank.text("Incorrect API key provided: sk-proj-****...Zx9Q, sk-live-1234567890"),
            "Incorrect API key provided: <redacted>****...<redacted>, <redacted>"
        );
        assert!(!format!("{blank:?}").contains("sk-"));
    }

    #[test]
    fn secret_variables_show_their_names() {
        let mut r = Redactor::default();
        r.secret_variables(["HF_TOKEN", "UNSET"], |name| {
            (name == "HF_TOKEN").then(|| "hf_0123456789abcdef".to_owned())
        });
        assert_eq!(
            r.text("token hf_0123456789abcdef, then hf_0123…"),
            "token ${HF_TOKEN}, then ${HF_TOKEN}…"
        );
    }
}
