//! `regex_match`: the output matches a pattern, compiled as Sentinel compiles it,
//! multi-line with `.` matching newlines (see [`prill_spec::model::sentinel::Pattern`]).

use prill_spec::model::sentinel::Pattern;

use crate::evaluation::Evaluation;
use crate::text::preview;

/// What the assertion looks at.
pub(super) const TARGET: &str = "output";

/// Whether `text` matches `pattern`, and where.
pub(super) fn evaluate(pattern: &Pattern, text: Option<&str>) -> (Evaluation, String) {
    let found = text.and_then(|t| pattern.regex().find(t));
    let message = match found {
        Some(m) => format!(
            "output matches /{}/ at {}",
            pattern.as_str(),
            preview(m.as_str())
        ),
        None => format!(
            "expected the output to match /{}/, found {}",
            pattern.as_str(),
            preview(text.unwrap_or(""))
        ),
    };
    (
        Evaluation::pass_fail(found.is_some()).with("pattern", pattern.as_str()),
        message,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    fn status(p: &str, text: &str) -> Status {
        evaluate(&Pattern::new(p).unwrap(), Some(text)).0.status()
    }

    #[test]
    fn regex_is_multi_line_and_dot_matches_newlines() {
        let json_answer = "Here:\n{\n  \"a\": 1\n}\n";
        // The DSL reference's own example, on a multi-line JSON answer.
        assert_eq!(status(r"\{.*\}", json_answer), Status::Passed);
        let code = "Sure.\ndef add(a, b):\n    return a + b\n";
        assert_eq!(status(r"^def \w+", code), Status::Passed);
        assert_eq!(status(r"b\):$", code), Status::Passed);
        assert_eq!(status(r"\Adef", code), Status::Failed);
    }

    #[test]
    fn messages_show_the_match_or_the_output() {
        let p = Pattern::new(r"\d{4}-\d{2}-\d{2}").unwrap();
        let (e, m) = evaluate(&p, Some("due 2026-11-22"));
        assert_eq!(e.status(), Status::Passed);
        assert_eq!(e.metadata["pattern"], r"\d{4}-\d{2}-\d{2}");
        assert_eq!(m, r#"output matches /\d{4}-\d{2}-\d{2}/ at "2026-11-22""#);
        let (e, m) = evaluate(&Pattern::new(r"^\d").unwrap(), None);
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(m, r#"expected the output to match /^\d/, found """#);
    }
}
