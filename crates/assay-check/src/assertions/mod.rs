//! The Sentinel assertions, over a [`Response`].
//!
//! `must_contain` and `must_not_contain` match as Sentinel does: both the output and
//! the text are lowercased (full Unicode lowercasing, as Python's `str.lower`), then
//! the text is looked for as a substring; no other normalization, no whitespace
//! folding. `{text: ..., case_sensitive: true}` asks for the exact letter case. A list
//! of texts means every one must appear (`must_contain`) or none may
//! (`must_not_contain`). promptfoo's `contains` is case-sensitive and offers
//! `icontains`; deepeval has no such check.
//!
//! `regex_match` patterns are compiled as Sentinel compiles them, multi-line with `.`
//! matching newlines (see [`assay_spec::model::sentinel::Pattern`]).

use assay_spec::model::sentinel::{Assertion, TextMatch};
use serde_json::json;

use crate::evaluation::Evaluation;
use crate::output_type::classify;
use crate::response::Response;
use crate::text::preview;
use crate::tokens::output_tokens;

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
    let q: Vec<String> = texts.iter().map(|t| preview(&json!(t))).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => q.join(""),
    }
}

/// `must_contain` (`want` true) or `must_not_contain` (`want` false).
fn contains(m: &TextMatch, text: Option<&str>, want: bool) -> (Evaluation, String) {
    // The texts that break the assertion: missing ones, or present ones.
    let wrong = occurring(m, text, !want);
    let all: Vec<&str> = m.texts.iter().map(String::as_str).collect();
    let case = if m.case_sensitive {
        " (case-sensitive)"
    } else {
        ""
    };
    let not = if want { "" } else { "not " };
    let shown = preview(&json!(text.unwrap_or("")));
    let message = if wrong.is_empty() {
        let does = if want { "contains" } else { "does not contain" };
        format!("output {does} {}{case}", quoted(&all))
    } else if all.len() == 1 {
        format!(
            "expected the output {not}to contain {}{case}, found {shown}",
            quoted(&all)
        )
    } else {
        let which = if want { "missing" } else { "found" };
        format!(
            "expected the output {not}to contain {}{case}; {which} {}, in {shown}",
            quoted(&all),
            quoted(&wrong)
        )
    };
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

/// An assertion's evaluation and message, or why it could not be evaluated.
pub fn evaluate(
    assertion: &Assertion,
    response: &Response,
) -> Result<(Evaluation, String), String> {
    let name = assertion.name();
    let text = response.text.as_deref();
    let shown = || preview(&json!(text.unwrap_or("")));
    let result = match assertion {
        Assertion::MustContain(m) => contains(m, text, true),
        Assertion::MustNotContain(m) => contains(m, text, false),
        Assertion::RegexMatch(pattern) => {
            let found = text.and_then(|t| pattern.regex().find(t));
            let message = match found {
                Some(m) => format!(
                    "output matches /{}/ at {}",
                    pattern.as_str(),
                    preview(&json!(m.as_str()))
                ),
                None => format!(
                    "expected the output to match /{}/, found {}",
                    pattern.as_str(),
                    shown()
                ),
            };
            (
                Evaluation::pass_fail(found.is_some()).with("pattern", pattern.as_str()),
                message,
            )
        }
        Assertion::MustCallTool(tools) => {
            let called: Vec<&str> = response
                .tool_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            let missing: Vec<&str> = tools
                .iter()
                .map(String::as_str)
                .filter(|t| !called.contains(t))
                .collect();
            let message = if missing.is_empty() {
                format!("called {}", tools.join(", "))
            } else {
                let called_text = if called.is_empty() {
                    "no tool".to_owned()
                } else {
                    called.join(", ")
                };
                format!(
                    "expected calls to {}, found calls to {called_text}",
                    missing.join(", ")
                )
            };
            (
                Evaluation::pass_fail(missing.is_empty())
                    .with("called", json!(called))
                    .with("missing", json!(missing)),
                message,
            )
        }
        Assertion::OutputType(kind) => {
            let (passed, why) = classify(*kind, text.unwrap_or(""));
            let kind_name = serde_json::to_value(kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned));
            let kind_name = kind_name.unwrap_or_default();
            let message = if passed {
                format!("output is {kind_name}: {why}")
            } else {
                format!("expected {kind_name} output: {why}")
            };
            (Evaluation::pass_fail(passed).with("reason", why), message)
        }
        Assertion::MaxLatencyMs(max) => {
            let Some(latency) = response.latency else {
                return Err("max_latency_ms: the response's latency was not recorded".to_owned());
            };
            // Compare durations, not floats: `as_secs_f64() * 1000.0` rounds 1132 ms to
            // 1132.0000000000002, which failed a response that took exactly the limit.
            let passed = latency <= std::time::Duration::from_millis(*max);
            let ms = latency.as_nanos() as f64 / 1e6;
            let message = if passed {
                format!("took {ms:.0} ms, within {max} ms")
            } else {
                format!("expected at most {max} ms, took {ms:.0} ms")
            };
            (
                Evaluation::pass_fail(passed).with("latency_ms", ms),
                message,
            )
        }
        Assertion::MinTokens(min) | Assertion::MaxTokens(min) => {
            let (count, source) = output_tokens(response);
            let is_min = matches!(assertion, Assertion::MinTokens(_));
            let passed = if is_min { count >= *min } else { count <= *min };
            let bound = if is_min { "at least" } else { "at most" };
            let message = if passed {
                format!("{count} output tokens, {bound} {min} ({})", source.name())
            } else {
                format!(
                    "expected {bound} {min} output tokens, found {count} ({})",
                    source.name()
                )
            };
            (
                Evaluation::pass_fail(passed)
                    .with("tokens", count)
                    .with("token_count_source", source.name()),
                message,
            )
        }
    };
    Ok((result.0, format!("{name}: {}", result.1)))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use assay_spec::model::sentinel::{OutputType, Pattern};

    use super::*;
    use crate::status::Status;

    fn status(a: &Assertion, r: &Response) -> Status {
        evaluate(a, r).unwrap().0.status()
    }

    fn contain(text: &str) -> Assertion {
        Assertion::MustContain(TextMatch::new(text))
    }

    fn not_contain(text: &str) -> Assertion {
        Assertion::MustNotContain(TextMatch::new(text))
    }

    #[test]
    fn contains_lowercases_both_sides_as_sentinel_does() {
        let r = Response::text("The capital of France is Paris.");
        assert_eq!(status(&contain("Paris"), &r), Status::Passed);
        assert_eq!(status(&contain("paris"), &r), Status::Passed);
        assert_eq!(status(&contain("PARIS"), &r), Status::Passed);
        assert_eq!(status(&not_contain("London"), &r), Status::Passed);
        assert_eq!(status(&not_contain("france"), &r), Status::Failed);
        // Sentinel's quickstart: `must_contain: "hello"` on "Hello from JSON".
        assert_eq!(
            status(&contain("hello"), &Response::text("Hello from JSON")),
            Status::Passed
        );
        // Full Unicode lowercasing, as Python's `str.lower`, not ASCII only.
        let r = Response::text("ÉCOLE NORMALE");
        assert_eq!(status(&contain("école"), &r), Status::Passed);
        assert_eq!(status(&contain("École Normale"), &r), Status::Passed);
        // No other folding: whitespace and accents count.
        assert_eq!(status(&contain("ecole"), &r), Status::Failed);
        assert_eq!(
            status(&contain("paris  "), &Response::text("Paris")),
            Status::Failed
        );
        assert_eq!(status(&contain("x"), &Response::default()), Status::Failed);
        assert_eq!(
            status(&not_contain("x"), &Response::default()),
            Status::Passed
        );
    }

    #[test]
    fn case_sensitive_contains_wants_the_exact_text() {
        let r = Response::text("The capital of France is Paris.");
        let exact = |t: &str| Assertion::MustContain(TextMatch::new(t).case_sensitive(true));
        assert_eq!(status(&exact("Paris"), &r), Status::Passed);
        let (e, m) = evaluate(&exact("paris"), &r).unwrap();
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(e.metadata["case_sensitive"], true);
        assert_eq!(
            m,
            "must_contain: expected the output to contain \"paris\" (case-sensitive), found \"The capital of France is Paris.\""
        );
        let not = Assertion::MustNotContain(TextMatch::new("paris").case_sensitive(true));
        assert_eq!(status(&not, &r), Status::Passed);
    }

    #[test]
    fn lists_need_every_text_or_none() {
        let r = Response::text("Price: $20, free shipping");
        let all = |t: &[&str]| Assertion::MustContain(TextMatch::all(t.iter().copied()));
        let none = |t: &[&str]| Assertion::MustNotContain(TextMatch::all(t.iter().copied()));
        assert_eq!(status(&all(&["price", "shipping"]), &r), Status::Passed);
        let (e, m) = evaluate(&all(&["price", "tax", "returns"]), &r).unwrap();
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(e.metadata["missing"], json!(["tax", "returns"]));
        assert_eq!(
            m,
            "must_contain: expected the output to contain \"price\", \"tax\" and \"returns\"; missing \"tax\" and \"returns\", in \"Price: $20, free shipping\""
        );
        assert_eq!(status(&none(&["error", "sorry"]), &r), Status::Passed);
        let (e, _) = evaluate(&none(&["error", "FREE"]), &r).unwrap();
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(e.metadata["found"], json!(["FREE"]));
    }

    #[test]
    fn regex_is_multi_line_and_dot_matches_newlines() {
        let re = |p: &str| Assertion::RegexMatch(Pattern::new(p).unwrap());
        let json_answer = Response::text("Here:\n{\n  \"a\": 1\n}\n");
        // The DSL reference's own example, on a multi-line JSON answer.
        assert_eq!(status(&re(r"\{.*\}"), &json_answer), Status::Passed);
        let code = Response::text("Sure.\ndef add(a, b):\n    return a + b\n");
        assert_eq!(status(&re(r"^def \w+"), &code), Status::Passed);
        assert_eq!(status(&re(r"b\):$"), &code), Status::Passed);
        assert_eq!(status(&re(r"\Adef"), &code), Status::Failed);
    }

    #[test]
    fn regex_and_tools() {
        let r = Response::text("due 2026-11-22").with_tool_call("web_search", json!({"q": "x"}));
        let re = |p: &str| Assertion::RegexMatch(Pattern::new(p).unwrap());
        assert_eq!(status(&re(r"\d{4}-\d{2}-\d{2}"), &r), Status::Passed);
        assert_eq!(status(&re(r"^\d"), &r), Status::Failed);
        let tools = |names: &[&str]| {
            Assertion::MustCallTool(names.iter().map(|s| (*s).to_owned()).collect())
        };
        assert_eq!(status(&tools(&["web_search"]), &r), Status::Passed);
        let (eval, message) = evaluate(&tools(&["web_search", "calculator"]), &r).unwrap();
        assert_eq!(eval.status(), Status::Failed);
        assert_eq!(
            message,
            "must_call_tool: expected calls to calculator, found calls to web_search"
        );
    }

    #[test]
    fn latency_needs_a_recording() {
        let a = Assertion::MaxLatencyMs(100);
        assert_eq!(
            status(
                &a,
                &Response::text("x").with_latency(Duration::from_millis(100))
            ),
            Status::Passed
        );
        assert_eq!(
            status(
                &a,
                &Response::text("x").with_latency(Duration::from_millis(101))
            ),
            Status::Failed
        );
        assert!(evaluate(&a, &Response::text("x")).is_err());
    }

    #[test]
    fn token_bounds_say_which_count_was_used() {
        let r = Response::text("one two three four").with_usage(None, Some(10));
        let (e, m) = evaluate(&Assertion::MinTokens(10), &r).unwrap();
        assert_eq!(e.status(), Status::Passed);
        assert_eq!(e.metadata["token_count_source"], "provider");
        assert!(m.contains("(provider)"));
        let (e, _) = evaluate(
            &Assertion::MaxTokens(3),
            &Response::text("one two three four"),
        )
        .unwrap();
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(e.metadata["token_count_source"], "tiktoken-o200k");
        assert_eq!(e.metadata["tokens"], 4);
    }

    #[test]
    fn output_type_explains_itself() {
        let (e, m) = evaluate(
            &Assertion::OutputType(OutputType::Json),
            &Response::text("nope"),
        )
        .unwrap();
        assert_eq!(e.status(), Status::Failed);
        assert!(
            m.starts_with("output_type: expected json output: the output is not JSON"),
            "{m}"
        );
    }
}
