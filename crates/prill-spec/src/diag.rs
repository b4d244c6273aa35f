//! Spec diagnostics: one per broken rule, with file, line:column, field path,
//! what was expected and what was found.
//!
//! A [`Diagnostic`] is plain data. [`Report`] pairs it with its [`Source`] so that
//! miette can render a snippet with a caret, and [`Diagnostic::to_json`] gives the
//! machine-readable form that `prill validate --format json` prints.

use std::fmt;
use std::sync::Arc;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

use crate::escape;
use crate::node::{Span, cut};
use crate::source::Source;

/// The code of a diagnostic about a secret written in a file; its snippet is never shown.
pub const SECRET_CODE: &str = "secret-in-file";

/// How many characters of a found value a message shows before cutting it.
pub const PREVIEW_CHARS: usize = 80;

/// How many characters of a field path, a message, an expectation or a hint a
/// report shows before cutting it: a 1 MB key must not make a 1 MB message.
pub const TEXT_CHARS: usize = 400;

/// How many characters of the extra detail lines a report shows.
const DETAIL_CHARS: usize = 4000;

/// A snippet is shown as it is written when its lines hold at most this many
/// characters each; longer lines are cut to a window around the position.
const LINE_CHARS: usize = 200;

/// How many characters a cut line keeps before the position.
const WINDOW_BEFORE: usize = 60;

/// How many characters a cut line keeps from the position on.
const WINDOW_AFTER: usize = 100;

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
            path: cut(&path.into(), TEXT_CHARS),
            message: cut(&message.into(), TEXT_CHARS),
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
        self.expected = Some(cut(&expected.into(), TEXT_CHARS));
        self
    }

    /// Sets what was found, cut to [`PREVIEW_CHARS`].
    pub fn found(mut self, found: impl AsRef<str>) -> Self {
        self.found = Some(cut(found.as_ref(), PREVIEW_CHARS));
        self
    }

    /// Sets a hint.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(cut(&help.into(), TEXT_CHARS));
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
        self.detail = Some(cut(&detail.into(), DETAIL_CHARS));
        self
    }

    /// Whether the message itself says what was expected and what was found
    /// (`expected an integer, found a string "abc"`): then the lines under it in the
    /// text renderings do not say them again (the JSON keeps both fields).
    pub fn states_both(&self) -> bool {
        let (Some(expected), Some(found)) = (&self.expected, &self.found) else {
            return false;
        };
        let lead = format!("expected {expected}, found ");
        self.message
            .find(&lead)
            .is_some_and(|at| self.message[at + lead.len()..].contains(found.as_str()))
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
///
/// The report shares the file's text rather than copying it, and when the lines
/// around the position are long it keeps only a window of the one line that holds
/// the position: a report is small whatever the file.
#[derive(Debug, Clone)]
pub struct Report {
    /// The problem.
    pub diagnostic: Diagnostic,
    /// The file it is in.
    pub source: Source,
    snippet: Snippet,
}

/// The source text a report shows.
#[derive(Debug, Clone)]
enum Snippet {
    /// The whole file, shared; lines near the position are short.
    Whole(miette::NamedSource<Arc<str>>),
    /// A window of the line that holds the position.
    Cut {
        name: String,
        /// The window, with `…` where it was cut.
        text: String,
        /// The span in `text`.
        label: Span,
        /// The 0-based line of the window in the file.
        line: usize,
        /// What turns a byte column in `text` into the character column in the file.
        shift: isize,
    },
}

impl Report {
    /// Pairs a diagnostic with its source.
    ///
    /// This is where a diagnostic's text becomes output, so every field that may quote
    /// a name or value from the file is made safe to print here, for every renderer:
    /// the path, message, expected, found and help on one line, control characters
    /// escaped ([`escape::one_line`]); the detail lines likewise, their breaks kept
    /// ([`escape::lines`]). The file's name is escaped where it is shown
    /// ([`Source::shown_name`]).
    pub fn new(diagnostic: Diagnostic, source: &Source) -> Self {
        let mut diagnostic = diagnostic;
        diagnostic.path = cut(&escape::one_line(&diagnostic.path), TEXT_CHARS);
        diagnostic.message = cut(&escape::one_line(&diagnostic.message), TEXT_CHARS);
        for text in [&mut diagnostic.expected, &mut diagnostic.help]
            .into_iter()
            .flatten()
        {
            *text = cut(&escape::one_line(text), TEXT_CHARS);
        }
        if let Some(found) = &mut diagnostic.found {
            *found = cut(&escape::one_line(found), PREVIEW_CHARS);
        }
        if let Some(detail) = &mut diagnostic.detail {
            *detail = cut(&escape::lines(detail), DETAIL_CHARS);
        }
        let snippet = Snippet::of(source, diagnostic.span);
        Report {
            diagnostic,
            source: source.clone(),
            snippet,
        }
    }

    /// `file:line:col`, or just the file when the position is unknown; the file as
    /// [`Source::shown_name`] shows it.
    pub fn location(&self) -> String {
        match self.diagnostic.span {
            Some(span) => {
                let (l, c) = self.source.line_col(span.start);
                format!("{}:{l}:{c}", self.source.shown_name())
            }
            None => self.source.shown_name(),
        }
    }

    /// The one-line form, `file:line:col: error[code]: path: message (help)`, for CI
    /// logs and editors' problem matchers: the first line of [`Report::plain`], with
    /// its help (a "did you mean") at the end, as nothing else of it is shown.
    pub fn short(&self) -> String {
        let mut out = self.first_line();
        if let Some(help) = &self.diagnostic.help {
            out.push_str(&format!(" ({})", help.replace(['\n', '\r'], " ")));
        }
        out
    }

    /// `file:line:col: error[code]: path: message`, on one line.
    fn first_line(&self) -> String {
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
    /// `file:line:col: error[code]: path: message`, then detail, expected, found (unless
    /// the message says both: [`Diagnostic::states_both`]) and help.
    pub fn plain(&self) -> String {
        let d = &self.diagnostic;
        let mut out = self.first_line();
        if let Some(detail) = &d.detail {
            for line in detail.lines() {
                out.push_str("\n  ");
                out.push_str(line);
            }
        }
        if !d.states_both() {
            if let Some(e) = &d.expected {
                out.push_str(&format!("\n  expected: {e}"));
            }
            if let Some(f) = &d.found {
                out.push_str(&format!("\n  found: {f}"));
            }
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
        if d.states_both() {
            return Ok(());
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
        (self.diagnostic.code != SECRET_CODE).then_some(&self.snippet as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let span = match &self.snippet {
            Snippet::Whole(_) => self.diagnostic.span?,
            Snippet::Cut { label, .. } => *label,
        };
        let label = self.diagnostic.code.replace('-', " ");
        Some(Box::new(std::iter::once(
            miette::LabeledSpan::new_with_span(Some(label), span),
        )))
    }
}

impl Snippet {
    /// The whole file when the lines from the one before `span` to the one after it
    /// are short, else a window of the line `span` starts on.
    fn of(source: &Source, span: Option<Span>) -> Snippet {
        let text = &source.text;
        let whole = || Snippet::Whole(miette::NamedSource::new(source.shown_name(), text.clone()));
        let Some(span) = span else {
            return whole();
        };
        let start = floor_boundary(text, span.start.min(text.len()));
        let end = floor_boundary(text, span.end.min(text.len())).max(start);
        let (first, _) = source.line_col(start);
        let (last, _) = source.line_col(end);
        let lines = first.saturating_sub(1).max(1)..=last + 1;
        let long = lines
            .clone()
            .any(|n| line_text(source, n).chars().count() > LINE_CHARS);
        // A control character (ESC, a lone `\r`) is never shown as it is: it would
        // colour the terminal or, for a CI runner, start a line of its own.
        let unsafe_text = lines.clone().any(|n| {
            line_text(source, n)
                .chars()
                .any(|c| c != '\t' && escape::is_unsafe(c))
        });
        if !long && !unsafe_text && last - first < 20 {
            return whole();
        }
        let line_start = source.offset(first, 1);
        let line = line_text(source, first);
        // The window: up to WINDOW_BEFORE characters before the position and
        // WINDOW_AFTER from it, on its own line.
        // A position on the line's end (`\r\n`, or past it) is at the line's end.
        let at = (start - line_start).min(line.len());
        // Found from the position back, with nothing collected: the line may be
        // megabytes long.
        let from = line[..at]
            .char_indices()
            .rev()
            .nth(WINDOW_BEFORE.saturating_sub(1))
            .map_or(0, |(i, _)| i);
        let to = line[at..]
            .char_indices()
            .nth(WINDOW_AFTER)
            .map_or(line.len(), |(i, _)| at + i);
        let span_end = (end - line_start).min(to).max(at);
        // Each part escaped on its own, so that the label still covers the span.
        let mut window = String::new();
        if from > 0 {
            window.push('…');
        }
        window.push_str(&escape::controls(&line[from..at]));
        let label_start = window.len();
        let shift = line[..at].chars().count() as isize - label_start as isize;
        window.push_str(&escape::controls(&line[at..span_end]));
        let label_end = window.len();
        window.push_str(&escape::controls(&line[span_end..to]));
        if to < line.len() {
            window.push('…');
        }
        Snippet::Cut {
            name: source.shown_name(),
            text: window,
            label: Span::new(label_start, label_end),
            line: first - 1,
            shift,
        }
    }
}

impl SourceCode for Snippet {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        match self {
            Snippet::Whole(named) => {
                named.read_span(span, context_lines_before, context_lines_after)
            }
            Snippet::Cut {
                name,
                text,
                line,
                shift,
                ..
            } => {
                let inner =
                    text.as_str()
                        .read_span(span, context_lines_before, context_lines_after)?;
                let column = inner.column().saturating_add_signed(*shift);
                Ok(Box::new(MietteSpanContents::new_named(
                    name.clone(),
                    inner.data(),
                    *inner.span(),
                    inner.line() + line,
                    column,
                    inner.line_count(),
                )))
            }
        }
    }
}

/// The text of 1-based line `n`, without its line end; empty past the end.
fn line_text(source: &Source, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    let text = &source.text;
    let rest = &text[source.offset(n, 1).min(text.len())..];
    let line = rest.split('\n').next().unwrap_or("");
    line.strip_suffix('\r').unwrap_or(line)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
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

    /// A message that says what was expected and found is not followed by the same two
    /// lines, in either text rendering; the JSON keeps both fields.
    #[test]
    fn expected_and_found_are_said_once() {
        let src = Source::new("t.yaml", "seed: 'abc'\n");
        let d = Diagnostic::new(
            "invalid-type",
            "seed",
            "expected an integer, found a string \"abc\"",
        )
        .at(Span::new(6, 11))
        .expected("an integer")
        .found("\"abc\"")
        .detail("1 validation error for TestSpec\nseed\n  Input should be a valid integer");
        assert!(d.states_both());
        let json = d.to_json(&src);
        assert_eq!(json["expected"], "an integer");
        assert_eq!(json["found"], "\"abc\"");
        let r = Report::new(d, &src);
        for text in [r.plain(), r.to_string(), r.render(false)] {
            assert_eq!(text.matches("an integer").count(), 1, "{text}");
            assert!(!text.contains("found: "), "{text}");
            assert!(text.contains("Input should be a valid integer"), "{text}");
        }
        // A message that says neither keeps the lines.
        let other = Diagnostic::new("invalid-type", "seed", "expected an integer")
            .expected("an integer")
            .found("\"abc\"");
        assert!(!other.states_both());
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
        // A hint is all the one-line form may show beyond the line: it ends the line.
        let d = Diagnostic::new("unknown-key", "vlaue", "unknown key `vlaue`")
            .at(Span::new(5, 8))
            .help("did you mean `value`?");
        let r = Report::new(d, &src);
        assert_eq!(
            r.short(),
            "t.yaml:2:1: error[unknown-key]: vlaue: unknown key `vlaue` (did you mean `value`?)"
        );
        assert!(
            r.plain()
                .starts_with(&format!("{}\n", r.short().split(" (").next().unwrap()))
        );
        assert!(r.plain().ends_with("\n  help: did you mean `value`?"));
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

    #[test]
    fn a_position_on_the_end_of_a_long_crlf_line_is_shown() {
        // Found by the hocon fuzz target: the window was cut past the line's end.
        let text = format!("{}\r\nb\n", "a".repeat(300));
        let d = Diagnostic::new("syntax", "", "x").at(Span::new(301, 302));
        let rendered = Report::new(d, &Source::new("t.hocon", text)).render(false);
        assert!(rendered.contains("t.hocon:1:"), "{rendered}");
    }

    #[test]
    fn a_huge_key_makes_a_short_report() {
        // A 1 MB key printed whole six times made 6.6 MB of stderr.
        let key = "k".repeat(1_000_000);
        let text = format!("{{\"agent\": \"a\", \"{key}\": 1}}");
        let start = text.find(&key).unwrap();
        let d = Diagnostic::new("unknown-key", key.clone(), format!("unknown key `{key}`"))
            .at(Span::new(start - 1, start + key.len() + 1))
            .found(&key)
            .help(format!("did you mean `{key}`?"));
        let r = Report::new(d, &Source::new("big.json", text));
        let rendered = r.render(false);
        assert!(rendered.len() < 4000, "{} bytes", rendered.len());
        assert!(rendered.contains("big.json:1:16"), "{rendered}");
        assert!(r.plain().len() < 2000, "{} bytes", r.plain().len());
        let json = r.diagnostic.to_json(&r.source).to_string();
        assert!(json.len() < 2000, "{} bytes", json.len());
    }

    #[test]
    fn a_long_line_is_cut_to_a_window_around_the_position() {
        // A nesting error printed a whole 200 KB line.
        let line = format!("x = {}{}", "[".repeat(100_000), "]".repeat(100_000));
        let text = format!("a = 1\n{line}\nb = 2\n");
        let at = 6 + 4 + 50_000;
        let d = Diagnostic::new("syntax", "", "too deep").at(Span::new(at, at + 1));
        let r = Report::new(d, &Source::new("deep.hocon", text));
        let rendered = r.render(false);
        assert!(rendered.len() < 2000, "{rendered}");
        assert!(rendered.contains("deep.hocon:2:50005"), "{rendered}");
        assert!(rendered.contains('…'), "{rendered}");
        // A short file renders as before, with its neighbouring lines.
        let src = Source::new("t.yaml", "a: 1\nbad: 2\nc: 3\n");
        let d = Diagnostic::new("unknown-key", "bad", "unknown key").at(Span::new(5, 8));
        let rendered = Report::new(d, &src).render(false);
        assert!(
            rendered.contains("1 │ a: 1") && rendered.contains("3 │ c: 3"),
            "{rendered}"
        );
    }

    /// Every line of `text` that a CI runner would take for a workflow command.
    fn commands_in(text: &str) -> Vec<&str> {
        text.split(['\n', '\r'])
            .filter(|l| escape::is_command(l))
            .collect()
    }

    #[test]
    fn a_file_name_cannot_become_a_workflow_command() {
        // Git keeps a file name with a newline: printed raw, its second line was a
        // command to GitHub Actions, which reads stderr too.
        for name in [
            "a\n::error::pwned.yaml",
            "a\r::add-mask::x.yaml",
            "::stop-commands::t.yaml",
        ] {
            let src = Source::new(name, "a: 1\nbad: 2\n");
            let d = Diagnostic::new("unknown-key", "bad", "unknown key `bad`")
                .at(Span::new(5, 8))
                .found("bad");
            let r = Report::new(d, &src);
            let short = r.short();
            assert!(!short.contains(['\n', '\r']), "{short}");
            for out in [r.plain(), r.render(false), r.render(true), short] {
                assert!(commands_in(&out).is_empty(), "{name:?}:\n{out}");
            }
            // What is structured keeps the name as it is.
            assert_eq!(r.diagnostic.to_json(&r.source)["file"], name);
        }
        let src = Source::new("a\n::error::pwned.yaml", "a: 1\nbad: 2\n");
        let r = Report::new(Diagnostic::new("x", "", "m").at(Span::new(5, 8)), &src);
        assert_eq!(r.short(), "a\\n::error::pwned.yaml:2:1: error[x]: m");
        assert!(r.render(false).contains("[a\\n::error::pwned.yaml:2:1]"));
        let r = Report::new(Diagnostic::new("x", "", "m"), &Source::new("::x.yaml", ""));
        assert_eq!(r.location(), "\\::x.yaml");
    }

    #[test]
    fn values_from_a_file_are_shown_escaped_in_every_field() {
        let key = "k\n::error::pwned\u{1b}[2J";
        let text = format!("{{\"{key}\": 1}}");
        let d = Diagnostic::new("unknown-key", key, format!("unknown key `{key}`"))
            .at(Span::new(1, 2))
            .expected(format!("not `{key}`"))
            .found(key)
            .help(format!("did you mean `{key}`?"))
            .detail(format!("Sentinel says:\n{key}\n  ::warning::x"));
        let r = Report::new(d, &Source::new("t.json", text));
        for out in [r.plain(), r.render(false), r.render(true), r.short()] {
            assert!(commands_in(&out).is_empty(), "{out}");
            assert!(!out.contains("\u{1b}[2J"), "{out}");
        }
        let d = &r.diagnostic;
        assert_eq!(d.path, "k\\n::error::pwned\\u{1b}[2J");
        assert_eq!(d.found.as_deref(), Some("k\\n::error::pwned\\u{1b}[2J"));
        assert!(d.detail.as_deref().unwrap().ends_with("\n  \\::warning::x"));
    }

    #[test]
    fn control_characters_in_the_source_are_shown_escaped() {
        // A lone carriage return ends a line for a CI runner; ESC colours a terminal.
        let text = "a: 1\nb: x\r::error::pwned \u{1b}[31mred\nc: 3\n";
        let at = text.find("::error").unwrap();
        let d = Diagnostic::new("syntax", "", "bad").at(Span::new(at, at + 7));
        let r = Report::new(d, &Source::new("t.yaml", text));
        let rendered = r.render(false);
        assert!(commands_in(&rendered).is_empty(), "{rendered}");
        assert!(!rendered.contains('\u{1b}'), "{rendered}");
        assert!(
            rendered.contains("x\\r::error::pwned \\u{1b}[31mred"),
            "{rendered}"
        );
        // The label still points at the span, at its line and column.
        assert!(rendered.contains("t.yaml:2:6"), "{rendered}");
        assert!(rendered.contains("───┬───"), "{rendered}");
    }
}
