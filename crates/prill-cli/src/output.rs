//! Where output goes: data to stdout, diagnostics to stderr, colour only when wanted.
//!
//! Names and values from outside (a file name with a newline in it, a key, an agent's
//! answer) are escaped where they enter the output, by `prill_spec::escape`: a
//! diagnostic's every field and its file name in [`prill_spec::Report`], the case lines of
//! `list` in `prill_spec::inputs`, the annotations in `prill_report::github`. And
//! [`stderr`], where only people and logs read, is guarded as a whole: no line written
//! there starts a CI runner's workflow command (`::error::`, `::add-mask::`,
//! `::stop-commands::`), as GitHub Actions reads stderr too. Stdout is left as its
//! writers make it, since Prill's own annotations go there.

use std::io::{IsTerminal, Write};

use anyhow::Context;
use prill_spec::Report;

use crate::args::Color;

/// Whether to colour diagnostics: `auto` colours only when stderr is a terminal and
/// `NO_COLOR` is unset or empty (<https://no-color.org>).
pub(crate) fn use_color(choice: Color) -> bool {
    match choice {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stderr().is_terminal()
        }
    }
}

/// Whether this process runs in GitHub Actions (`GITHUB_ACTIONS=true`), which makes
/// `run` and `validate` print annotations on stdout unless told otherwise.
pub(crate) fn in_github_actions() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

/// The directory the run's files are named relative to in CI reports (JUnit's `file`,
/// GitHub's annotations): the working directory, the repository's checkout in CI.
pub(crate) fn run_dir() -> Option<std::path::PathBuf> {
    std::env::current_dir().ok()
}

/// Writes data to stdout. A closed pipe (`prill list | head`) is not an error.
pub(crate) fn stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.context("cannot write to stdout"),
    }
}

/// Writes diagnostics to stderr, with a `\` before any line a CI runner would take for
/// a command ([`prill_spec::escape::commands`]); there is nowhere left to report a
/// failure to.
pub(crate) fn stderr(text: &str) {
    let text = prill_spec::escape::commands(text);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// How diagnostics are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    /// One line each, `file:line:col: error[code]: message`: for CI logs, grep and
    /// editors' problem matchers.
    Short,
    /// miette's snippets, with help, expected and found.
    Rich {
        /// Whether to colour them.
        color: bool,
    },
}

impl Look {
    /// The look when none is asked for: rich on a terminal or when colour is asked
    /// for, else one line each.
    pub(crate) fn auto(color: bool) -> Look {
        if color || std::io::stderr().is_terminal() {
            Look::Rich { color }
        } else {
            Look::Short
        }
    }
}

/// Every report in the look the terminal and `color` call for (see [`Look::auto`]).
pub(crate) fn render(reports: &[Report], color: bool) -> String {
    render_as(reports, Look::auto(color))
}

/// Every report, one line each or rendered by miette one after another. Each report
/// has made its names and values safe to print already ([`prill_spec::Report::new`]),
/// and [`stderr`] guards what is written once more.
///
/// In the rich look, a report without a position would show no snippet, and so no
/// file name: it is rendered plain instead, as `file: error[code]: message`.
pub(crate) fn render_as(reports: &[Report], look: Look) -> String {
    let color = match look {
        Look::Short => {
            return reports.iter().map(|r| format!("{}\n", r.short())).collect();
        }
        Look::Rich { color } => color,
    };
    let mut out = String::new();
    for report in reports {
        if report.diagnostic.span.is_none() {
            out.push_str(&report.plain());
        } else {
            out.push_str(&report.render(color));
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    out
}
