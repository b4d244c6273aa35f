//! A Markdown summary, for `$GITHUB_STEP_SUMMARY`: a heading, the totals, a table of
//! units, and the failures and errors with their messages.
//!
//! ````markdown
//! ## Prill results
//!
//! **1 passed, 1 failed, 0 errored, 0 skipped** in 1.50s
//!
//! | result | unit | connection | samples passed | ratio |
//! |---|---|---|---|---|
//! | ✅ passed | greets | direct | 1/1 | 1/1 |
//! | ❌ failed | greets | http | 1/3 | 2/3 |
//!
//! ### Failures and errors
//!
//! #### ❌ greets \[http\]
//!
//! `cases/a.hocon`: 1 passed, 2 failed (need 2/3)
//!
//! ```text
//! text: expected keywords ["hello"], found "bye" (2 samples)
//! ```
//! ````
//!
//! Long messages are cut, and very large runs list only the first units, to stay well
//! under GitHub's 1 MiB limit. GitHub expects steps to *append* to
//! `$GITHUB_STEP_SUMMARY`: pass [`Output::append`] for it.
//!
//! # Example
//!
//! ```
//! use prill_report::{Markdown, Output, Reporter};
//! use prill_run::{Event, Summary};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("summary.md");
//! let mut markdown = Markdown::new(Output::append(&path)?);
//! markdown.event(&Event::RunFinished(Summary::default()))?;
//! markdown.finish()?;
//! assert!(std::fs::read_to_string(&path)?.contains("**0 passed, 0 failed, 0 errored, 0 skipped**"));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;

use prill_run::{Event, Status, UnitReport};

use crate::Reporter;
use crate::digest::{Collected, clean, cut, outcome, problems, seconds, stop_note, summary_phrase};
use crate::output::Output;

/// Units listed in the table at most.
const MAX_ROWS: usize = 500;
/// Failed or errored units detailed at most.
const MAX_DETAILED: usize = 50;
/// Messages shown per unit at most.
const MAX_MESSAGES: usize = 20;
/// Characters of a message shown at most.
const MAX_MESSAGE_CHARS: usize = 500;

/// The Markdown reporter. See the [module documentation](self).
#[derive(Debug)]
pub struct Markdown {
    output: Option<Output>,
    collected: Collected,
}

impl Markdown {
    /// A summary written to `output` at the end, headed `Prill results`.
    pub fn new(output: Output) -> Markdown {
        Markdown {
            output: Some(output),
            collected: Collected::default(),
        }
    }

    /// The Markdown for what has been seen so far.
    pub fn render(&self) -> String {
        let summary = self.collected.summary();
        let units = &self.collected.units;
        let mut md = "## Prill results\n\n".to_owned();
        md.push_str(&format!(
            "**{}** in {}",
            summary_phrase(&summary),
            seconds(summary.duration)
        ));
        md.push_str(stop_note(&summary));
        md.push_str("\n\n");
        if units.is_empty() {
            md.push_str("No units ran.\n");
            return md;
        }

        md.push_str("| result | unit | connection | samples passed | ratio |\n");
        md.push_str("|---|---|---|---|---|\n");
        for unit in units.iter().take(MAX_ROWS) {
            md.push_str(&format!(
                "| {}{} | {} | {} | {}/{} | {} |\n",
                status(unit.verdict),
                if unit.quarantine.is_some() {
                    " (quarantined)"
                } else {
                    ""
                },
                escape(&unit.unit.name),
                escape(&unit.unit.connection),
                unit.tally.passed,
                unit.tally.total(),
                unit.gate
            ));
        }
        if units.len() > MAX_ROWS {
            md.push_str(&format!(
                "\n…and {} more units; the JSON and JUnit reports list them all.\n",
                units.len() - MAX_ROWS
            ));
        }

        let bad: Vec<&UnitReport> = units
            .iter()
            .filter(|u| matches!(u.verdict, Status::Failed | Status::Errored))
            .collect();
        if bad.is_empty() {
            return md;
        }
        md.push_str("\n### Failures and errors\n");
        for unit in bad.iter().take(MAX_DETAILED) {
            md.push_str(&details(unit));
        }
        if bad.len() > MAX_DETAILED {
            md.push_str(&format!(
                "\n…and {} more failed or errored units.\n",
                bad.len() - MAX_DETAILED
            ));
        }
        md
    }
}

impl Reporter for Markdown {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.collected.event(event);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.output.take() {
            Some(output) => output.commit(self.render().as_bytes()),
            None => Ok(()),
        }
    }
}

fn status(verdict: Status) -> &'static str {
    match verdict {
        Status::Passed => "✅ passed",
        Status::Failed => "❌ failed",
        Status::Errored => "⚠️ errored",
        Status::Inconclusive => "❔ inconclusive",
        Status::Skipped | Status::Unscored => "⏭️ skipped",
    }
}

fn details(unit: &UnitReport) -> String {
    let emoji = match unit.verdict {
        Status::Failed => "❌",
        _ => "⚠️",
    };
    let mut md = format!(
        "\n#### {emoji} {}\n\n{}: {}\n",
        escape(&unit.unit.label()),
        code_span(&unit.unit.file.display().to_string()),
        outcome(unit)
    );
    let problems = problems(unit);
    if problems.is_empty() {
        return md;
    }
    let mut lines: Vec<String> = problems
        .iter()
        .take(MAX_MESSAGES)
        .map(|p| cut(&clean(&p.shown()), MAX_MESSAGE_CHARS).into_owned())
        .collect();
    if problems.len() > MAX_MESSAGES {
        lines.push(format!("…and {} more", problems.len() - MAX_MESSAGES));
    }
    let body = lines.join("\n");
    let fence = "`".repeat(longest_run(&body, '`').max(2) + 1);
    md.push_str(&format!("\n{fence}text\n{body}\n{fence}\n"));
    md
}

/// Text safe in a heading or a table cell: Markdown punctuation escaped, line breaks
/// turned into spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in clean(text).chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' | '!' | '&' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` in a code span, with a fence of backticks it does not contain.
fn code_span(text: &str) -> String {
    let ticks = "`".repeat(longest_run(text, '`') + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_table_breaking_text() {
        assert_eq!(escape("a|b\nc [d]"), "a\\|b c \\[d\\]");
    }

    /// HTML in a cell shows as text: every `<` and `>` is escaped, so GitHub renders no
    /// tag (the assessment's Markdown goes through the same function).
    #[test]
    fn html_in_a_cell_is_text() {
        for hostile in [
            "</td></tr></table><h1>x</h1>",
            "<img src=x onerror=alert(1)>",
        ] {
            let cell = escape(hostile);
            let raw_tag = cell
                .char_indices()
                .any(|(i, c)| c == '<' && !cell[..i].ends_with('\\'));
            assert!(!raw_tag, "{cell}");
        }
        assert_eq!(escape("<b>"), "\\<b\\>");
    }

    #[test]
    fn fences_are_longer_than_any_run_inside() {
        assert_eq!(code_span("a``b"), "```a``b```");
        assert_eq!(code_span("`a"), "`` `a ``");
        assert_eq!(longest_run("x````y`", '`'), 4);
    }
}
