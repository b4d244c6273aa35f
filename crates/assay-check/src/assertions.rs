//! The Sentinel assertions, over a [`Response`].
//!
//! `must_contain` and `must_not_contain` match exactly: case-sensitive, no Unicode
//! normalization, no whitespace folding, as Python's `in` does in the Sentinel
//! reference. (promptfoo's `contains` is also case-sensitive and offers `icontains`;
//! deepeval has no such check.) Write a `regex_match` with `(?i)` for a case-blind match.

use assay_spec::model::sentinel::Assertion;
use serde_json::json;

use crate::evaluation::Evaluation;
use crate::output_type::classify;
use crate::response::Response;
use crate::text::preview;
use crate::tokens::output_tokens;

/// An assertion's evaluation and message, or why it could not be evaluated.
pub fn evaluate(
    assertion: &Assertion,
    response: &Response,
) -> Result<(Evaluation, String), String> {
    let name = assertion.name();
    let text = response.text.as_deref();
    let shown = || preview(&json!(text.unwrap_or("")));
    let result = match assertion {
        Assertion::MustContain(needle) => {
            let passed = text.is_some_and(|t| t.contains(needle.as_str()));
            let message = if passed {
                format!("output contains {}", preview(&json!(needle)))
            } else {
                format!(
                    "expected the output to contain {}, found {}",
                    preview(&json!(needle)),
                    shown()
                )
            };
            (Evaluation::pass_fail(passed), message)
        }
        Assertion::MustNotContain(needle) => {
            let passed = !text.is_some_and(|t| t.contains(needle.as_str()));
            let message = if passed {
                format!("output does not contain {}", preview(&json!(needle)))
            } else {
                format!(
                    "expected the output not to contain {}, found {}",
                    preview(&json!(needle)),
                    shown()
                )
            };
            (Evaluation::pass_fail(passed), message)
        }
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
    use crate::evaluation::Status;

    fn status(a: &Assertion, r: &Response) -> Status {
        evaluate(a, r).unwrap().0.status()
    }

    #[test]
    fn contains_is_exact_and_case_sensitive() {
        let r = Response::text("The capital of France is Paris.");
        assert_eq!(
            status(&Assertion::MustContain("Paris".into()), &r),
            Status::Passed
        );
        assert_eq!(
            status(&Assertion::MustContain("paris".into()), &r),
            Status::Failed
        );
        assert_eq!(
            status(&Assertion::MustNotContain("London".into()), &r),
            Status::Passed
        );
        assert_eq!(
            status(&Assertion::MustNotContain("France".into()), &r),
            Status::Failed
        );
        assert_eq!(
            status(&Assertion::MustContain("x".into()), &Response::default()),
            Status::Failed
        );
        assert_eq!(
            status(&Assertion::MustNotContain("x".into()), &Response::default()),
            Status::Passed
        );
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
