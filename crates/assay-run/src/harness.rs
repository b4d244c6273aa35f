//! A `cargo test` harness for spec files: one test per case, run by libtest-mimic, so
//! `cargo test` and `cargo nextest` run a directory of data-driven or Sentinel files
//! like any other tests (filters, `--list`, `--exact` and JUnit from nextest all work).
//!
//! In `Cargo.toml`:
//!
//! ```toml
//! [[test]]
//! name = "agents"
//! harness = false
//! ```
//!
//! and in `tests/agents.rs`:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     assay_run::harness::main("tests/agents", assay_run::harness::Agents::Demo)
//! }
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use assay_spec::{Env, Plan, Unrecognized};
use libtest_mimic::{Arguments, Failed, Trial};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

use crate::engine::{Connectors, RunOptions, run_plan};
use crate::events::{Event, UnitReport};
use crate::ratio::Status;

/// Where the harness reaches agents.
pub enum Agents {
    /// The built-in demo agents, started for the run.
    Demo,
    /// Connectors built by the caller.
    Given(Connectors),
}

/// Runs every case under `dir` as a test and returns the exit code libtest would.
pub fn main(dir: impl AsRef<Path>, agents: Agents) -> ExitCode {
    let args = Arguments::from_args();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => Arc::new(runtime),
        Err(e) => {
            eprintln!("error: cannot start a runtime: {e}");
            return ExitCode::from(101);
        }
    };
    let (connectors, _demo) = match agents {
        Agents::Given(connectors) => (connectors, None),
        Agents::Demo => match runtime.block_on(crate::demo::start(0)) {
            Ok(demo) => (demo.connectors.clone(), Some(demo.server)),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(101);
            }
        },
    };
    let trials = match trials(dir.as_ref(), &runtime, &Arc::new(connectors)) {
        Ok(trials) => trials,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(101);
        }
    };
    libtest_mimic::run(&args, trials).exit_code()
}

/// One trial per case of every spec file under `dir`; an invalid file is one failing trial.
pub fn trials(
    dir: &Path,
    runtime: &Arc<Runtime>,
    connectors: &Arc<Connectors>,
) -> Result<Vec<Trial>, String> {
    let env = Env::from_process();
    let mut trials = Vec::new();
    for found in assay_spec::load::discover(&[dir.to_path_buf()]) {
        let path: PathBuf = found.map_err(|(p, e)| format!("{}: {e}", p.display()))?;
        let loaded = match assay_spec::load_file(&path, &env, Unrecognized::Skip) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => continue,
            Err(e) => {
                let message = format!("{}: {e}", path.display());
                trials.push(Trial::test(path.display().to_string(), move || {
                    Err(message.into())
                }));
                continue;
            }
        };
        if !loaded.is_valid() {
            let message: Vec<String> = loaded.reports().iter().map(|r| r.plain()).collect();
            let message = message.join("\n");
            trials.push(Trial::test(path.display().to_string(), move || {
                Err(message.into())
            }));
            continue;
        }
        let kind = loaded.dialect.map(|d| d.name()).unwrap_or_default();
        for case in loaded.cases() {
            let file = case
                .file
                .strip_prefix(dir)
                .unwrap_or(&case.file)
                .display()
                .to_string();
            let name = match case.dialect {
                assay_spec::Dialect::DataDriven => case.name.clone(),
                _ => format!("{file}::{}", case.name),
            };
            let runtime = Arc::clone(runtime);
            let connectors = Arc::clone(connectors);
            trials.push(
                Trial::test(name, move || {
                    let plan = Plan::new(vec![case]);
                    let reports = runtime.block_on(run_one(&plan, &connectors));
                    verdict(&reports)
                })
                .with_kind(kind),
            );
        }
    }
    Ok(trials)
}

async fn run_one(plan: &Plan, connectors: &Connectors) -> Vec<UnitReport> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    run_plan(plan, connectors, &RunOptions::default(), tx).await;
    let mut reports = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::UnitFinished(report) = event {
            reports.push(report);
        }
    }
    reports
}

/// `Ok` when every unit passed; otherwise the failures and errors, one per line.
fn verdict(reports: &[UnitReport]) -> Result<(), Failed> {
    let mut lines = Vec::new();
    for r in reports.iter().filter(|r| r.verdict != Status::Passed) {
        lines.push(format!(
            "{}: {:?}, {} of {} samples passed (need {})",
            r.unit.label(),
            r.verdict,
            r.tally.passed,
            r.tally.total(),
            r.success_ratio.need
        ));
        for sample in &r.samples {
            lines.extend(sample.failures().map(|c| format!("  {}", c.message())));
            lines.extend(sample.errors().into_iter().map(|e| format!("  error: {e}")));
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(lines.join("\n").into())
    }
}
