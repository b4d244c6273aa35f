//! Runs a folder through the settings layer, as `prill run --demo` would, and prints a
//! JUnit report to stdout.
//!
//! `cargo run -p prill-examples --example junit -- [DIR]` (default: the quickstart
//! folder). `prill.toml` is read from the working directory or a folder above it, and
//! the environment as the CLI reads it; the agents are the built-in demo agents.

use std::path::PathBuf;
use std::process::ExitCode;

use prill_app::{Overrides, Session, Settings, prepare};
use prill_report::{Junit, Output, Reporters};
use prill_run::Selection;

#[tokio::main]
async fn main() -> ExitCode {
    let dir = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("fixtures/quickstart"), PathBuf::from);
    let overrides = Overrides {
        demo: true,
        ..Overrides::default()
    };
    let settings = match Settings::load(None, overrides) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!("{}", settings.found);
    let prepared = prepare(&settings, &[dir], &Selection::all(), None);
    for report in prepared.inputs.reports() {
        eprintln!("{}", report.plain());
    }
    let session = match Session::new(&settings, &prepared.plan).await {
        Ok(session) => session,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let path = std::env::temp_dir().join(format!("prill-example-{}.xml", std::process::id()));
    let mut reporters = Reporters::new();
    reporters.push(
        "junit",
        Junit::new(Output::file(&path).expect("a temporary file")),
    );
    let ran = session.run_reported(&prepared.plan, reporters).await;
    session.shutdown().await;
    let xml = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    print!("{xml}");
    eprintln!(
        "{} passed, {} failed, {} errored",
        ran.summary.passed, ran.summary.failed, ran.summary.errored
    );
    if ran.unwritten.is_empty() && ran.summary.failed == 0 && ran.summary.errored == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
