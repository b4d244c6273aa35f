//! Spec diagnostics: one per broken rule, with file, line:column, field path,
//! what was expected and what was found.
//!
//! A [`Diagnostic`] is plain data. [`Report`] pairs it with its [`Source`] so that
//! miette can render a snippet with a caret, and [`Diagnostic::to_json`] gives the
//! machine-readable form that `assay validate --format json` prints.

use std::fmt;

use crate::node::{Span, cut};
use crate::source::Source;

/// The code of a diagnostic about a secret written in a file; its snippet is never shown.
pub const SECRET_CODE: &str = "secret-in-file";

/// How many characters of a found value a message shows before cutting it.
pub const PREVIEW_CHARS: usize = 80;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Severity {
    /// The file is invalid.
    #[default]
    Error,
    /// The file is valid, but something in it does nothing (e.g. checks upstream ignores).
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem found in a spec file.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// Whether it makes the file invalid.
    pub severity: Severity,
    /// A stable, greppable id of the rule broken, e.g. `unknown-key`.
    pub code: &'static str,
    /// The field path, e.g. `tests[2].model_config.temperature`; empty for the whole file.
    pub path: String,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
    /// Where, when known.
    pub span: Option<Span>,
    /// What the rule wants, when it can be said briefly.
    pub expected: Option<String>,
    /// The value found, as compact text cut to [`PREVIEW_CHARS`].
    pub found: Option<String>,
    /// A hint, such as `did you mean \`keywords\`?`.
    pub help: Option<String>,
    /// Extra lines shown under the message (the Sentinel validation block).
    pub detail: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with a code, path and message, and nothing else yet.
    pub fn new(code: &'static str, path: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            path: path.into(),
            message: message.into(),
            span: None,
            expected: None,
            found: None,
            help: None,
            detail: None,
        }
    }

    /// Makes it a warning: the file stays valid.
    pub fn warning(mut self) -> Self {
        self.severity = Severity::Warning;
        self
    }

    /// Sets where the problem is.
    pub fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    /// Sets what was expected.
    pub fn expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    /// Sets what was found, cut to [`PREVIEW_CHARS`].
    pub fn found(mut self, found: impl AsRef<str>) -> Self {
        self.found = Some(cut(found.as_ref(), PREVIEW_CHARS));
        self
    }

    /// Sets a hint.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets the hint only when there is one.
    pub fn maybe_help(mut self, help: Option<String>) -> Self {
        if help.is_some() {
            self.help = help;
        }
        self
    }

    /// Sets extra detail lines.
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The headline: the path (when there is one) and the message.
    pub fn headline(&self) -> String {
        if self.path.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }

    /// The machine-readable form, with the file, line and column from `source`.
    ///
    /// `line` and `column` are where the problem starts; `end_line` and `end_column`
    /// are just past its last character (an exclusive end, as editors take a range).
    /// Lines and columns count from 1, columns in characters; all four are null when
    /// the position is unknown.
    pub fn to_json(&self, source: &Source) -> serde_json::Value {
        let at = |offset: usize| {
            let (l, c) = source.line_col(offset);
            (serde_json::json!(l), serde_json::json!(c))
        };
        let null = || (serde_json::Value::Null, serde_json::Value::Null);
        let ((line, column), (end_line, end_column)) = match self.span {
            Some(span) => (at(span.start), at(span.end)),
            None => (null(), null()),
        };
        serde_json::json!({
            "severity": self.severity.name(),
            "file": source.name(),
            "line": line,
            "column": column,
            "end_line": end_line,
            "end_column": end_column,
            "path": self.path,
            "code": self.code,
            "message": self.message,
            "expected": self.expected,
            "found": self.found,
            "help": self.help,
            "detail": self.detail,
        })
    }
}

/// A diagnostic together with the source it points into, renderable by miette.
#[derive(Debug, Clone)]
pub struct Report {
    /// The problem.
    pub diagnostic: Diagnostic,
    /// The file it is in.
    pub source: Source,
    named: miette::NamedSource<String>,
}

impl Report {
    /// Pairs a diagnostic with its source.
    pub fn new(diagnostic: Diagnostic, source: &Source) -> Self {
        let named = miette::NamedSource::new(source.name(), source.text.to_string());
        Report {
            diagnostic,
            source: source.clone(),
            named,
        }
    }

    /// `file:line:col`, or just the file when the position is unknown.
    pub fn location(&self) -> String {
        match self.diagnostic.span {
            Some(span) => {
                let (l, c) = self.source.line_col(span.start);
                format!("{}:{l}:{c}", self.source.name())
            }
            None => self.source.name(),
        }
    }

    /// The one-line form, `file:line:col: error[code]: path: message`, for CI logs
    /// and editors' problem matchers: the first line of [`Report::plain`].
    pub fn short(&self) -> String {
        let d = &self.diagnostic;
        // A message never spans lines in this form.
        let headline = d.headline().replace(['\n', '\r'], " ");
        format!(
            "{}: {}[{}]: {headline}",
            self.location(),
            d.severity.name(),
            d.code,
        )
    }

    /// A plain one-paragraph rendering with no colour and no snippet:
    /// `file:line:col: error[code]: path: message`, then detail, expected, found and help.
    pub fn plain(&self) -> String {
        let d = &self.diagnostic;
        let mut out = self.short();
        if let Some(detail) = &d.detail {
            for line in detail.lines() {
                out.push_str("\n  ");
                out.push_str(line);
            }
        }
        if let Some(e) = &d.expected {
            out.push_str(&format!("\n  expected: {e}"));
        }
        if let Some(f) = &d.found {
            out.push_str(&format!("\n  found: {f}"));
        }
        if let Some(h) = &d.help {
            out.push_str(&format!("\n  help: {h}"));
        }
        out
    }

    /// The snippet rendering with miette's graphical handler, without colour,
    /// at a fixed width so that the output is stable.
    pub fn render(&self, color: bool) -> String {
        let theme = if color {
            miette::GraphicalTheme::unicode()
        } else {
            miette::GraphicalTheme::unicode_nocolor()
        };
        let handler = miette::GraphicalReportHandler::new_themed(theme).with_width(100);
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = handler.render_report(&mut out, self);
        out
    }
}

impl fmt::Display for Report {
    /// The headline, then the detail, expected and found lines, as miette shows them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.diagnostic;
        write!(f, "{}", d.headline())?;
        if let Some(detail) = &d.detail {
            write!(f, "\n{detail}")?;
        }
        if let Some(e) = &d.expected {
            write!(f, "\nexpected: {e}")?;
        }
        if let Some(found) = &d.found {
            write!(f, "\nfound: {found}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.diagnostic.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.diagnostic
            .help
            .as_ref()
            .map(|h| Box::new(h.as_str()) as Box<dyn fmt::Display + 'a>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        // A line that holds a secret is never shown back.
        (self.diagnostic.code != SECRET_CODE).then_some(&self.named as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let span = self.diagnostic.span?;
        let label = self.diagnostic.code.replace('-', " ");
        Some(Box::new(std::iter::once(
            miette::LabeledSpan::new_with_span(Some(label), span),
        )))
    }
}

/// The closest of `candidates` to `found`, when it is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    found: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let lower = found.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestion_for_near_miss_only() {
        let keys = ["keywords", "value", "gist"];
        assert_eq!(
            did_you_mean("keyword", keys).as_deref(),
            Some("did you mean `keywords`?")
        );
        assert_eq!(
            did_you_mean("Gist", keys).as_deref(),
            Some("did you mean `gist`?")
        );
        assert_eq!(did_you_mean("zebra", keys), None);
    }

    #[test]
    fn plain_rendering_names_file_line_and_column() {
        let src = Source::new("t.yaml", "a: 1\nbad: 2\n");
        let d = Diagnostic::new("unknown-key", "bad", "unknown key `bad`")
            .at(Span::new(5, 8))
            .expected("one of `a`")
            .found("bad");
        let r = Report::new(d, &src);
        assert_eq!(
            r.plain(),
            "t.yaml:2:1: error[unknown-key]: bad: unknown key `bad`\n  expected: one of `a`\n  found: bad"
        );
        let rendered = r.render(false);
        assert!(rendered.contains("t.yaml:2:1"), "{rendered}");
        assert_eq!(
            r.short(),
            "t.yaml:2:1: error[unknown-key]: bad: unknown key `bad`"
        );
    }

    #[test]
    fn json_gives_the_range_with_an_exclusive_end() {
        let src = Source::new("t.yaml", "a: 1\nbad: 2\nc: ©x\n");
        let d = Diagnostic::new("unknown-key", "bad", "unknown key `bad`").at(Span::new(5, 8));
        let json = d.to_json(&src);
        assert_eq!(
            (
                &json["line"],
                &json["column"],
                &json["end_line"],
                &json["end_column"]
            ),
            (
                &serde_json::json!(2),
                &serde_json::json!(1),
                &serde_json::json!(2),
                &serde_json::json!(4)
            )
        );
        // Columns count characters, not bytes.
        let x = src.text.find('x').unwrap();
        let d = Diagnostic::new("invalid-type", "c", "x").at(Span::new(x - 2, x + 1));
        let json = d.to_json(&src);
        assert_eq!(
            (&json["column"], &json["end_column"]),
            (&serde_json::json!(4), &serde_json::json!(6))
        );
        let json = Diagnostic::new("unreadable", "", "gone").to_json(&src);
        assert!(json["end_line"].is_null() && json["end_column"].is_null());
    }
}
