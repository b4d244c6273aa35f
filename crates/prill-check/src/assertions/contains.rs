//! `must_contain` and `must_not_contain`.
//!
//! They match as Sentinel does: both the output and the text are lowercased (full
//! Unicode lowercasing, as Python's `str.lower`), then the text is looked for as a
//! substring; no other normalization, no whitespace folding. `{text: ..., case_sensitive:
//! true}` asks for the exact letter case. A list of texts means every one must appear
//! (`must_contain`) or none may (`must_not_contain`). promptfoo's `contains` is
//! case-sensitive and offers `icontains`; deepeval has no such check.

use prill_spec::model::sentinel::TextMatch;
use serde_json::json;

use crate::evaluation::Evaluation;
use crate::text::preview;

/// What the assertion looks at.
pub(super) const TARGET: &str = "output";

/// `must_contain` (`want` true) or `must_not_contain` (`want` false) on `text`.
pub(super) fn evaluate(m: &TextMatch, text: Option<&str>, want: bool) -> (Evaluation, String) {
    // The texts that break the assertion: missing ones, or present ones.
    let wrong = occurring(m, text, !want);
    let all: Vec<&str> = m.texts.iter().map(String::as_str).collect();
    let message = message(m, text, want, &all, &wrong);
    let mut evaluation = Evaluation::pass_fail(wrong.is_empty());
    if m.case_sensitive {
        evaluation = evaluation.with("case_sensitive", true);
    }
    if all.len() > 1 {
        let key = if want { "missing" } else { "found" };
        evaluation = evaluation.with(key, json!(wrong));
    }
    (evaluation, message)
}

/// What was expected and, when it broke, which texts broke it.
fn message(m: &TextMatch, text: Option<&str>, want: bool, all: &[&str], wrong: &[&str]) -> String {
    let case = if m.case_sensitive {
        " (case-sensitive)"
    } else {
        ""
    };
    let not = if want { "" } else { "not " };
    let shown = preview(text.unwrap_or(""));
    if wrong.is_empty() {
        let does = if want { "contains" } else { "does not contain" };
        format!("output {does} {}{case}", quoted(all))
    } else if all.len() == 1 {
        format!(
            "expected the output {not}to contain {}{case}, found {shown}",
            quoted(all)
        )
    } else {
        let which = if want { "missing" } else { "found" };
        format!(
            "expected the output {not}to contain {}{case}; {which} {}, in {shown}",
            quoted(all),
            quoted(wrong)
        )
    }
}

/// The texts of `m` that occur in `text` (or that do not, with `present` false).
fn occurring<'m>(m: &'m TextMatch, text: Option<&str>, present: bool) -> Vec<&'m str> {
    let Some(text) = text else {
        // An absent output contains nothing.
        return if present {
            Vec::new()
        } else {
            m.texts.iter().map(String::as_str).collect()
        };
    };
    let lowered;
    let haystack = if m.case_sensitive {
        text
    } else {
        lowered = text.to_lowercase();
        &lowered
    };
    m.texts
        .iter()
        .filter(|needle| {
            let found = if m.case_sensitive {
                haystack.contains(needle.as_str())
            } else {
                haystack.contains(needle.to_lowercase().as_str())
            };
            found == present
        })
        .map(String::as_str)
        .collect()
}

/// `"a"`, or `"a", "b" and "c"`.
fn quoted(texts: &[&str]) -> String {
    let q: Vec<String> = texts.iter().map(|t| preview(*t)).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => q.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    fn status(m: &TextMatch, text: &str, want: bool) -> Status {
        evaluate(m, Some(text), want).0.status()
    }

    #[test]
    fn contains_lowercases_both_sides_as_sentinel_does() {
        let r = "The capital of France is Paris.";
        let m = TextMatch::new;
        assert_eq!(status(&m("Paris"), r, true), Status::Passed);
        assert_eq!(status(&m("paris"), r, true), Status::Passed);
        assert_eq!(status(&m("PARIS"), r, true), Status::Passed);
        assert_eq!(status(&m("London"), r, false), Status::Passed);
        assert_eq!(status(&m("france"), r, false), Status::Failed);
        // Sentinel's quickstart: `must_contain: "hello"` on "Hello from JSON".
        assert_eq!(status(&m("hello"), "Hello from JSON", true), Status::Passed);
        // Full Unicode lowercasing, as Python's `str.lower`, not ASCII only.
        let r = "ÉCOLE NORMALE";
        assert_eq!(status(&m("école"), r, true), Status::Passed);
        assert_eq!(status(&m("École Normale"), r, true), Status::Passed);
        // No other folding: whitespace and accents count.
        assert_eq!(status(&m("ecole"), r, true), Status::Failed);
        assert_eq!(status(&m("paris  "), "Paris", true), Status::Failed);
        // An absent output contains nothing.
        assert_eq!(evaluate(&m("x"), None, true).0.status(), Status::Failed);
        assert_eq!(evaluate(&m("x"), None, false).0.status(), Status::Passed);
    }

    #[test]
    fn case_sensitive_contains_wants_the_exact_text() {
        let r = "The capital of France is Paris.";
        let exact = |t: &str| TextMatch::new(t).case_sensitive(true);
        assert_eq!(status(&exact("Paris"), r, true), Status::Passed);
        let (e, m) = evaluate(&exact("paris"), Some(r), true);
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(e.metadata["case_sensitive"], true);
        assert_eq!(
            m,
            "expected the output to contain \"paris\" (case-sensitive), found \"The capital of France is Paris.\""
        );
        assert_eq!(status(&exact("paris"), r, false), Status::Passed);
    }

    #[test]
    fn lists_need_every_text_or_none() {
        let r = "Price: $20, free shipping";
        let all = |t: &[&str]| TextMatch::all(t.iter().copied());
        assert_eq!(
            status(&all(&["price", "shipping"]), r, true),
            Status::Passed
        );
        let (e, m) = evaluate(&all(&["price", "tax", "returns"]), Some(r), true);
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(e.metadata["missing"], json!(["tax", "returns"]));
        assert_eq!(
            m,
            "expected the output to contain \"price\", \"tax\" and \"returns\"; missing \"tax\" and \"returns\", in \"Price: $20, free shipping\""
        );
        assert_eq!(status(&all(&["error", "sorry"]), r, false), Status::Passed);
        let (e, _) = evaluate(&all(&["error", "FREE"]), Some(r), false);
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(e.metadata["found"], json!(["FREE"]));
    }
}
