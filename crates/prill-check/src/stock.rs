//! The data-driven stock tests: `value`, `less`, `greater`, `keywords` (and their `not_`
//! forms) and presence, as pure functions over JSON. `gist` is in [`crate::engine`],
//! since it needs a judge.
//!
//! The inequalities follow neuro-san's *documentation*: `less: 5` passes when the
//! response value is less than 5. neuro-san's code has the four of them backwards
//! (`docs/dialects.md` says more).

use std::borrow::Cow;
use std::cmp::Ordering;

use prill_spec::model::data_driven::StockTest;
use prill_spec::plan::Part;
use serde_json::Value;

use crate::response::Response;
use crate::text::preview;

/// A stock test's verdict and its message.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Whether it passed.
    pub passed: bool,
    /// What was checked, expected and found.
    pub message: String,
}

impl Verdict {
    fn new(passed: bool, message: String) -> Verdict {
        Verdict { passed, message }
    }
}

/// The display path of a field: `text`, `sly_data.equals`, `structure.a.b`.
pub fn field_path(part: Part, field: &[String]) -> String {
    let mut path = part.name().to_owned();
    for f in field {
        path.push('.');
        path.push_str(f);
    }
    path
}

/// Why the value a check looks at is missing: its message names the field and says why
/// (`structure.answer is missing: structure has no key `answer``).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Missing(String);

/// The value at `part`/`field` of `response`, or why it is missing.
pub fn lookup<'r>(
    response: &'r Response,
    part: Part,
    field: &[String],
) -> Result<Cow<'r, Value>, Missing> {
    let root: Cow<'r, Value> = match part {
        Part::Text => match &response.text {
            Some(text) => Cow::Owned(Value::String(text.clone())),
            None => {
                return Err(Missing(
                    "text is missing: the response has no answer text".to_owned(),
                ));
            }
        },
        Part::SlyData => match &response.sly_data {
            Some(v) => Cow::Borrowed(v),
            None => return Err(missing(part, field, "the response has no sly_data")),
        },
        Part::Structure => match &response.structure {
            Some(v) => Cow::Borrowed(v),
            None => return Err(missing(part, field, "the response has no structure")),
        },
    };
    let Cow::Borrowed(mut here) = root else {
        // Text has no fields; the validator never builds a field path below it.
        return Ok(root);
    };
    for (depth, name) in field.iter().enumerate() {
        match here {
            Value::Object(map) => match map.get(name) {
                Some(next) => here = next,
                None => {
                    let why = if depth == 0 {
                        format!("{} has no key `{name}`", part.name())
                    } else {
                        format!("{} has no key `{name}`", field_path(part, &field[..depth]))
                    };
                    return Err(missing(part, field, &why));
                }
            },
            other => {
                let why = format!(
                    "{} is {}, not an object",
                    field_path(part, &field[..depth]),
                    type_phrase(other)
                );
                return Err(missing(part, field, &why));
            }
        }
    }
    if here.is_null() {
        // As upstream, a null value is no value: every test on it fails, presence included.
        return Err(Missing(format!(
            "{} is missing: it is null",
            field_path(part, field)
        )));
    }
    Ok(Cow::Borrowed(here))
}

fn missing(part: Part, field: &[String], why: &str) -> Missing {
    Missing(format!("{} is missing: {why}", field_path(part, field)))
}

/// `a number`, `a string`, ... for messages.
pub fn type_phrase(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// JSON equality in which numbers compare by value: `19481 == 19481.0`.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_eq(x, y),
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(k, x)| ys.get(k).is_some_and(|y| json_eq(x, y)))
        }
        _ => a == b,
    }
}

fn number_eq(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
        (Some(a), Some(b), _, _) => a == b,
        (_, _, Some(a), Some(b)) => a == b,
        _ => match (x.as_f64(), y.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
    }
}

/// Numbers by value, strings by Unicode code point (as Python compares them); any
/// other pairing has no order.
pub fn compare(found: &Value, given: &Value) -> Option<Ordering> {
    match (found, given) {
        (Value::Number(a), Value::Number(b)) => {
            if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
                return Some(x.cmp(&y));
            }
            if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
                return Some(x.cmp(&y));
            }
            a.as_f64()?.partial_cmp(&b.as_f64()?)
        }
        (Value::String(a), Value::String(b)) => Some(a.chars().cmp(b.chars())),
        _ => None,
    }
}

/// The text a keyword stands for when looked for in a string: a string as it is,
/// anything else as its JSON text (`19482`, `true`).
pub fn needle(given: &Value) -> Cow<'_, str> {
    match given {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// Runs a stock test other than `gist` on a found value.
pub fn evaluate(
    test: StockTest,
    negated: bool,
    path: &str,
    found: &Value,
    given: &Value,
) -> Verdict {
    match test {
        StockTest::Value => {
            let equal = json_eq(found, given);
            let passed = equal != negated;
            let message = match (negated, passed) {
                (false, true) => format!("{path}: value {} as expected", preview(given)),
                (false, false) => format!(
                    "{path}: expected value {}, found {}",
                    preview(given),
                    preview(found)
                ),
                (true, true) => format!(
                    "{path}: {} is not {} as expected",
                    preview(found),
                    preview(given)
                ),
                (true, false) => format!(
                    "{path}: expected a value other than {}, found {}",
                    preview(given),
                    preview(found)
                ),
            };
            Verdict::new(passed, message)
        }
        StockTest::Less | StockTest::Greater => inequality(test, negated, path, found, given),
        StockTest::Keywords => keywords(negated, path, found, given),
        StockTest::Gist => Verdict::new(false, format!("{path}: gist needs a judge")),
    }
}

fn inequality(test: StockTest, negated: bool, path: &str, found: &Value, given: &Value) -> Verdict {
    let name = test.spelled(negated);
    let relation = match (test, negated) {
        (StockTest::Less, false) => "less than",
        (StockTest::Less, true) => "at least",
        (_, false) => "greater than",
        (_, true) => "at most",
    };
    let Some(order) = compare(found, given) else {
        let wanted = type_phrase(given);
        return Verdict::new(
            false,
            format!(
                "{path}: `{name}` compares {wanted} with {}, but found {} {}",
                preview(given),
                type_phrase(found),
                preview(found)
            ),
        );
    };
    let passed = match (test, negated) {
        (StockTest::Less, false) => order == Ordering::Less,
        (StockTest::Less, true) => order != Ordering::Less,
        (_, false) => order == Ordering::Greater,
        (_, true) => order != Ordering::Greater,
    };
    let message = if passed {
        format!(
            "{path}: {} is {relation} {} as expected",
            preview(found),
            preview(given)
        )
    } else {
        format!(
            "{path}: expected {relation} {}, found {}",
            preview(given),
            preview(found)
        )
    };
    Verdict::new(passed, message)
}

fn keywords(negated: bool, path: &str, found: &Value, given: &Value) -> Verdict {
    let (contained, what) = match found {
        Value::String(text) => (text.contains(needle(given).as_ref()), "to contain"),
        Value::Array(items) => (
            items.iter().any(|item| json_eq(item, given)),
            "to have the element",
        ),
        Value::Object(map) => (map.contains_key(needle(given).as_ref()), "to have the key"),
        other => {
            return Verdict::new(
                false,
                format!(
                    "{path}: `{}` looks in text, a list or an object, but found {} {}",
                    StockTest::Keywords.spelled(negated),
                    type_phrase(other),
                    preview(other)
                ),
            );
        }
    };
    let shown = match found {
        Value::String(text) => excerpt(text, needle(given).as_ref()),
        other => preview(other),
    };
    let passed = contained != negated;
    let not = if negated { "not " } else { "" };
    let message = if passed {
        format!("{path}: {not}found {} as expected", preview(given))
    } else {
        format!(
            "{path}: expected {not}{what} {}, found {shown}",
            preview(given)
        )
    };
    Verdict::new(passed, message)
}

/// A string preview that, for a long string, shows the part around `needle` if it is there.
fn excerpt(text: &str, needle: &str) -> String {
    const MAX: usize = crate::text::PREVIEW_CHARS;
    if text.chars().count() <= MAX || needle.is_empty() {
        return preview(text);
    }
    let Some(at) = text.find(needle) else {
        return preview(text);
    };
    let before: String = text[..at]
        .chars()
        .rev()
        .take(MAX / 3)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let start = at - before.len();
    let window: String = text[start..].chars().take(MAX).collect();
    let lead = if start > 0 { "…" } else { "" };
    let tail = if text[start..].chars().count() > MAX {
        "…"
    } else {
        ""
    };
    format!("\"{lead}{}{tail}\"", window.escape_debug())
}

/// Whether the value at a path is present (a `{}` check).
pub fn presence(path: &str, found: Result<&Value, &Missing>) -> Verdict {
    match found {
        Ok(_) => Verdict::new(true, format!("{path} is present")),
        Err(why) => Verdict::new(false, why.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(19481), &json!(19481.0)));
        assert!(json_eq(&json!([1, {"a": 2.0}]), &json!([1.0, {"a": 2}])));
        assert!(
            !json_eq(&json!(1), &json!(true)),
            "JSON equality: a boolean is not a number"
        );
        assert!(!json_eq(&json!(u64::MAX), &json!(-1)));
        assert!(json_eq(&json!(u64::MAX), &json!(u64::MAX)));
    }

    #[test]
    fn value_messages_name_path_expected_and_found() {
        let v = evaluate(
            StockTest::Value,
            false,
            "structure.running_cost",
            &json!(3.0),
            &json!(6.0),
        );
        assert!(!v.passed);
        assert_eq!(
            v.message,
            "structure.running_cost: expected value 6.0, found 3.0"
        );
    }

    #[test]
    fn inequalities_follow_the_documentation() {
        let less = |found, given| evaluate(StockTest::Less, false, "x", &found, &given).passed;
        assert!(less(json!(4), json!(5)));
        assert!(!less(json!(6), json!(5)));
        assert!(!less(json!(5), json!(5)));
        assert!(less(json!("apple"), json!("banana")));
        let greater =
            |found, given| evaluate(StockTest::Greater, false, "x", &found, &given).passed;
        assert!(greater(json!(6), json!(5.5)));
        assert!(!greater(json!(5), json!(5)));
        let v = evaluate(StockTest::Less, false, "x", &json!(7), &json!(5));
        assert_eq!(v.message, "x: expected less than 5, found 7");
    }

    #[test]
    fn mismatched_types_fail_both_ways_with_a_message() {
        for negated in [false, true] {
            let v = evaluate(StockTest::Less, negated, "x", &json!("7"), &json!(5));
            assert!(!v.passed);
            assert!(v.message.contains("found a string \"7\""), "{}", v.message);
        }
    }

    #[test]
    fn keywords_by_kind_of_container() {
        let kw = |found, given| evaluate(StockTest::Keywords, false, "x", &found, &given).passed;
        assert!(kw(json!("The Beatles"), json!("Beatles")));
        assert!(
            !kw(json!("The Beatles"), json!("beatles")),
            "case-sensitive, as upstream"
        );
        assert!(kw(json!("answer: 19482"), json!(19482)));
        assert!(kw(json!([1, 2.0, "x"]), json!(2)));
        assert!(kw(json!({"id": 1}), json!("id")));
        assert!(!kw(json!({"id": 1}), json!(1)));
        assert!(!kw(json!(3), json!(3)));
    }

    #[test]
    fn long_strings_are_cut_around_the_match() {
        let text = format!("{}call 867-5309 now{}", "x".repeat(200), "y".repeat(200));
        let v = evaluate(
            StockTest::Keywords,
            true,
            "text",
            &json!(text),
            &json!("867-5309"),
        );
        assert!(!v.passed);
        assert!(v.message.contains("…"), "{}", v.message);
        assert!(v.message.contains("867-5309 now"), "{}", v.message);
        assert!(v.message.chars().count() < 200, "{}", v.message);
    }

    #[test]
    fn lookup_says_why_a_field_is_missing() {
        let r = Response::text("hi").with_structure(json!({"a": {"b": 3}, "n": 5}));
        let f = |names: &[&str]| names.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            lookup(&r, Part::Structure, &f(&["a", "b"]))
                .unwrap()
                .as_ref(),
            &json!(3)
        );
        assert_eq!(
            lookup(&r, Part::Structure, &f(&["answer"]))
                .unwrap_err()
                .to_string(),
            "structure.answer is missing: structure has no key `answer`"
        );
        assert_eq!(
            lookup(&r, Part::Structure, &f(&["n", "x"]))
                .unwrap_err()
                .to_string(),
            "structure.n.x is missing: structure.n is a number, not an object"
        );
        assert_eq!(
            lookup(&r, Part::SlyData, &f(&["equals"]))
                .unwrap_err()
                .to_string(),
            "sly_data.equals is missing: the response has no sly_data"
        );
        assert!(lookup(&Response::default(), Part::Text, &[]).is_err());
    }
}
