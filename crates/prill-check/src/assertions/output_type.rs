//! `output_type`: what kind of output a response is. Each kind has a precise rule, so a
//! verdict can always be explained:
//!
//! - **json**: the output, trimmed, is a JSON object or array. One enclosing Markdown
//!   code fence (```` ``` ```` or ```` ```json ````) around the whole output is allowed.
//!   A bare scalar (`42`, `"hi"`) is not JSON output.
//! - **structured**: `json`; or the output holds a fenced block tagged `json`, `yaml` or
//!   `yml` whose content parses to an object or a list; or it holds a Markdown table
//!   (a `| a | b |` row followed by a `|---|---|` separator row).
//! - **markdown**: outside fenced code, at least one Markdown construct: a heading
//!   (`# `..`###### `), a list item (`- `, `* `, `+ `, `1. `), a blockquote (`> `), a
//!   table, a link `[text](target)`, bold (`**x**` or `__x__`), or inline code
//!   (`` `x` ``); or a fenced code block.
//! - **code**: the output holds a fenced code block with content; or, unfenced, at
//!   least 60% of its non-empty lines look like code (they end with `;`, `{`, `}`, `)`,
//!   `:` or `=>`, or start with a keyword such as `def`, `fn`, `function`, `class`,
//!   `import`, `return`, `let`, `const`, `#include`).
//! - **text**: not empty, not `json`, and no fenced code block: prose, with or without
//!   light Markdown.

use std::sync::LazyLock;

use prill_spec::model::sentinel::OutputType;
use regex::Regex;

use crate::evaluation::Evaluation;

/// What the assertion looks at.
pub(super) const TARGET: &str = "output";

/// Whether `text` is of kind `kind`, with the reason either way.
pub(super) fn evaluate(kind: OutputType, text: Option<&str>) -> (Evaluation, String) {
    let (passed, why) = classify(kind, text.unwrap_or(""));
    let kind_name = kind.name();
    let message = if passed {
        format!("output is {kind_name}: {why}")
    } else {
        format!("expected {kind_name} output: {why}")
    };
    (Evaluation::pass_fail(passed).with("reason", why), message)
}

/// Whether `output` is of kind `kind`, and a short reason either way.
pub fn classify(kind: OutputType, output: &str) -> (bool, String) {
    match kind {
        OutputType::Json => match json_document(output) {
            Ok(()) => (true, "the output is a JSON document".to_owned()),
            Err(why) => (false, why),
        },
        OutputType::Structured => {
            if json_document(output).is_ok() {
                return (true, "the output is a JSON document".to_owned());
            }
            if let Some(tag) = structured_block(output) {
                return (true, format!("the output holds a ```{tag} block that parses"));
            }
            if has_table(output) {
                return (true, "the output holds a Markdown table".to_owned());
            }
            (false, "the output is not JSON and holds no ```json/```yaml block that parses and no Markdown table".to_owned())
        }
        OutputType::Markdown => match markdown_construct(output) {
            Some(what) => (true, format!("the output has {what}")),
            None => (false, "the output has no Markdown construct (heading, list, quote, table, link, bold, code)".to_owned()),
        },
        OutputType::Code => {
            if fenced_blocks(output).iter().any(|b| !b.body.trim().is_empty()) {
                return (true, "the output holds a fenced code block".to_owned());
            }
            let (code, total) = code_lines(output);
            if total > 0 && code * 10 >= total * 6 {
                (true, format!("{code} of {total} lines look like code"))
            } else {
                (false, format!("no fenced code block, and only {code} of {total} lines look like code (60% needed)"))
            }
        }
        OutputType::Text => {
            if output.trim().is_empty() {
                (false, "the output is empty".to_owned())
            } else if json_document(output).is_ok() {
                (false, "the output is a JSON document, not text".to_owned())
            } else if !fenced_blocks(output).is_empty() {
                (false, "the output holds a fenced code block, not just text".to_owned())
            } else {
                (true, "the output is text".to_owned())
            }
        }
    }
}

/// `Ok` when the output (trimmed, one enclosing fence allowed) is a JSON object or array.
fn json_document(output: &str) -> Result<(), String> {
    let trimmed = output.trim();
    let body = match unfence(trimmed) {
        Some(("" | "json", body)) => body,
        _ => trimmed,
    };
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(v) if v.is_object() || v.is_array() => Ok(()),
        Ok(_) => Err("the output is a bare JSON scalar, not an object or array".to_owned()),
        Err(e) => Err(format!("the output is not JSON: {e}")),
    }
}

/// The tag and body when the whole of `trimmed` is one fenced block.
fn unfence(trimmed: &str) -> Option<(&str, &str)> {
    let inner = trimmed.strip_prefix("```")?.strip_suffix("```")?;
    let (tag, body) = inner.split_once('\n')?;
    (!body.contains("```")).then_some((tag.trim(), body))
}

struct Fence {
    tag: String,
    body: String,
}

fn fenced_blocks(output: &str) -> Vec<Fence> {
    let mut blocks = Vec::new();
    let mut lines = output.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let tag = rest.trim().to_ascii_lowercase();
        let mut body = Vec::new();
        let mut closed = false;
        for inner in lines.by_ref() {
            if inner.trim_start().starts_with("```") {
                closed = true;
                break;
            }
            body.push(inner);
        }
        if closed {
            blocks.push(Fence {
                tag,
                body: body.join("\n"),
            });
        }
    }
    blocks
}

fn structured_block(output: &str) -> Option<String> {
    fenced_blocks(output).into_iter().find_map(|b| {
        let parses = match b.tag.as_str() {
            "json" => serde_json::from_str::<serde_json::Value>(&b.body)
                .is_ok_and(|v| v.is_object() || v.is_array()),
            "yaml" | "yml" => {
                let source = prill_spec::Source::new("block.yaml", b.body.clone());
                prill_spec::syntax::yaml::parse(&source)
                    .is_ok_and(|n| n.as_object().is_some() || n.as_array().is_some())
            }
            _ => false,
        };
        parses.then_some(b.tag)
    })
}

static TABLE_SEPARATOR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$").expect("valid regex")
});

fn has_table(output: &str) -> bool {
    let lines: Vec<&str> = output.lines().collect();
    lines.windows(2).any(|w| {
        w[0].trim().starts_with('|')
            && w[0].matches('|').count() >= 2
            && TABLE_SEPARATOR.is_match(w[1])
    })
}

static MARKDOWN: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        ("a heading", r"(?m)^#{1,6} \S"),
        ("a list", r"(?m)^\s*(?:[-*+]|\d+[.)]) \S"),
        ("a blockquote", r"(?m)^> "),
        ("a link", r"\[[^\]\n]+\]\([^)\s]+\)"),
        ("bold text", r"\*\*[^*\n]+\*\*|__[^_\n]+__"),
        ("inline code", r"`[^`\n]+`"),
    ]
    .into_iter()
    .map(|(what, re)| (what, Regex::new(re).expect("valid regex")))
    .collect()
});

fn markdown_construct(output: &str) -> Option<&'static str> {
    if !fenced_blocks(output).is_empty() {
        return Some("a fenced code block");
    }
    if has_table(output) {
        return Some("a table");
    }
    MARKDOWN
        .iter()
        .find(|(_, re)| re.is_match(output))
        .map(|(what, _)| *what)
}

const CODE_STARTS: [&str; 22] = [
    "def ",
    "class ",
    "fn ",
    "pub ",
    "function ",
    "import ",
    "from ",
    "return ",
    "let ",
    "const ",
    "var ",
    "if (",
    "for (",
    "while (",
    "#include",
    "package ",
    "using ",
    "public ",
    "private ",
    "async ",
    "impl ",
    "struct ",
];

fn code_lines(output: &str) -> (usize, usize) {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let code = lines
        .iter()
        .filter(|l| {
            [";", "{", "}", ")", ":", "=>"]
                .iter()
                .any(|end| l.ends_with(end))
                && !l.ends_with(". :")
                || CODE_STARTS.iter().any(|start| l.starts_with(start))
        })
        .filter(|l| !looks_like_sentence(l))
        .count();
    (code, lines.len())
}

/// A line of prose that happens to end with `:` or `)` ("Here is the plan:").
fn looks_like_sentence(line: &str) -> bool {
    let words = line.split_whitespace().count();
    let letters = line
        .chars()
        .filter(|c| c.is_alphabetic() || c.is_whitespace())
        .count();
    words >= 4 && letters * 10 >= line.chars().count() * 9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is(kind: OutputType, output: &str) -> bool {
        classify(kind, output).0
    }

    #[test]
    fn json_boundaries() {
        assert!(is(OutputType::Json, r#" {"a": 1} "#));
        assert!(is(OutputType::Json, "[1, 2]"));
        assert!(is(OutputType::Json, "```json\n{\"a\": 1}\n```"));
        assert!(
            !is(OutputType::Json, "42"),
            "a bare scalar is not a document"
        );
        assert!(!is(OutputType::Json, "Here you go: {\"a\": 1}"));
        assert!(!is(OutputType::Json, "{\"a\": 1,}"));
        assert!(!is(OutputType::Json, "```json\n{\"a\": 1}\n```\nand more"));
    }

    #[test]
    fn structured_boundaries() {
        assert!(is(OutputType::Structured, "{\"a\": 1}"));
        assert!(is(
            OutputType::Structured,
            "Result:\n```yaml\na: 1\nb: [2]\n```\n"
        ));
        assert!(is(
            OutputType::Structured,
            "| name | price |\n|---|---:|\n| a | 1 |"
        ));
        assert!(!is(
            OutputType::Structured,
            "Result:\n```yaml\njust a sentence\n```"
        ));
        assert!(!is(OutputType::Structured, "The price is 3 dollars."));
        assert!(!is(OutputType::Structured, "| not a table |\nno separator"));
    }

    #[test]
    fn markdown_boundaries() {
        assert!(is(OutputType::Markdown, "# Title\ntext"));
        assert!(is(OutputType::Markdown, "Steps:\n- one\n- two"));
        assert!(is(OutputType::Markdown, "See [docs](https://example.com)."));
        assert!(is(OutputType::Markdown, "This is **important**."));
        assert!(!is(
            OutputType::Markdown,
            "Just a plain sentence, nothing more."
        ));
        assert!(!is(OutputType::Markdown, "#hashtag is not a heading"));
        assert!(!is(OutputType::Markdown, "5 * 3 = 15"));
    }

    #[test]
    fn code_boundaries() {
        assert!(is(
            OutputType::Code,
            "```python\ndef f():\n    return 1\n```"
        ));
        assert!(is(OutputType::Code, "def f(x):\n    return x * 2"));
        assert!(is(OutputType::Code, "int main() {\n  return 0;\n}"));
        assert!(
            !is(OutputType::Code, "```\n```"),
            "an empty fence holds no code"
        );
        assert!(!is(
            OutputType::Code,
            "Here is the plan:\nWe go to the store and buy milk."
        ));
        assert!(!is(OutputType::Code, "The function returns a value."));
    }

    #[test]
    fn verdicts_explain_themselves() {
        let (e, m) = evaluate(OutputType::Json, Some("nope"));
        assert_eq!(e.status(), crate::Status::Failed);
        assert!(
            m.starts_with("expected json output: the output is not JSON"),
            "{m}"
        );
        let (e, m) = evaluate(OutputType::Text, Some("Paris."));
        assert_eq!(e.status(), crate::Status::Passed);
        assert_eq!(m, "output is text: the output is text");
        assert_eq!(e.metadata["reason"], "the output is text");
        assert_eq!(
            evaluate(OutputType::Text, None).1,
            "expected text output: the output is empty"
        );
    }

    #[test]
    fn text_boundaries() {
        assert!(is(OutputType::Text, "Paris is the capital of France."));
        assert!(is(OutputType::Text, "A **bold** claim."));
        assert!(!is(OutputType::Text, "   "));
        assert!(!is(OutputType::Text, "{\"a\": 1}"));
        assert!(!is(OutputType::Text, "Try:\n```\nls\n```"));
    }
}
