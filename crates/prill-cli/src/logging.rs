//! The binary's logs: what the libraries say through `tracing` (each retry with its
//! reason and wait, each cache and cassette decision, each program started and ended),
//! written to stderr and never into a report.
//!
//! The filter is `--log-level` when given, else `PRILL_LOG`, else `RUST_LOG` (both in
//! `tracing-subscriber`'s directive syntax, e.g. `prill_connect=debug`), else `warn`.
//! A filter that cannot be read is said once, and `warn` stands.

use tracing_subscriber::EnvFilter;

use crate::args::LogLevel;

/// The variable read first, before `RUST_LOG`.
const PRILL_LOG: &str = "PRILL_LOG";

/// The level when nothing sets one.
const DEFAULT: &str = "warn";

/// Starts the log for the process; `color` as for diagnostics.
pub(crate) fn init(level: Option<LogLevel>, color: bool) {
    let (filter, problem) = filter(level, |name| std::env::var(name).ok());
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .with_target(true)
        .finish();
    // Set once, at start; a second call (tests calling `main` twice) keeps the first.
    let _ = tracing::subscriber::set_global_default(subscriber);
    if let Some(problem) = problem {
        crate::output::stderr(&format!("warning: {problem}; logging at `{DEFAULT}`\n"));
    }
}

/// The filter, from the flag, then the variables (`var` reads one), and what was wrong
/// with a variable that could not be read as one.
fn filter(
    level: Option<LogLevel>,
    var: impl Fn(&str) -> Option<String>,
) -> (EnvFilter, Option<String>) {
    if let Some(level) = level {
        return (EnvFilter::new(level.directive()), None);
    }
    for name in [PRILL_LOG, "RUST_LOG"] {
        let Some(value) = var(name).filter(|v| !v.trim().is_empty()) else {
            continue;
        };
        return match EnvFilter::try_new(&value) {
            Ok(filter) => (filter, None),
            Err(e) => (
                EnvFilter::new(DEFAULT),
                Some(format!("{name} is not a log filter ({e})")),
            ),
        };
    }
    (EnvFilter::new(DEFAULT), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(level: Option<LogLevel>, vars: &[(&str, &str)]) -> (String, Option<String>) {
        let (filter, problem) = filter(level, |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        });
        (filter.to_string(), problem)
    }

    #[test]
    fn the_flag_then_prill_log_then_rust_log_then_warn() {
        let both = [("PRILL_LOG", "prill_connect=debug"), ("RUST_LOG", "trace")];
        assert_eq!(shown(Some(LogLevel::Info), &both).0, "info");
        assert_eq!(shown(None, &both).0, "prill_connect=debug");
        assert_eq!(shown(None, &[("RUST_LOG", "trace")]).0, "trace");
        assert_eq!(shown(None, &[("PRILL_LOG", " ")]).0, "warn");
        assert_eq!(shown(None, &[]), ("warn".to_owned(), None));
    }

    #[test]
    fn a_filter_that_cannot_be_read_is_said_and_warn_stands() {
        let (filter, problem) = shown(None, &[("PRILL_LOG", "prill=loud")]);
        assert_eq!(filter, "warn");
        assert!(
            problem
                .unwrap()
                .starts_with("PRILL_LOG is not a log filter")
        );
    }
}
