//! Validates spec files with `prill-spec` alone: no runtime, no network.
//!
//! `cargo run -p prill-examples --example validate -- FILE...` (default: the quickstart
//! folder). Prints every problem with its file, line and column; exits 1 when a file is
//! invalid.

use std::path::PathBuf;
use std::process::ExitCode;

use prill_spec::Env;
use prill_spec::inputs::load_paths;
use prill_spec::limits::Limits;

fn main() -> ExitCode {
    let mut paths: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        paths.push(PathBuf::from("fixtures/quickstart"));
    }
    let inputs = load_paths(&paths, &Env::from_process(), false, &Limits::default());
    for report in inputs.reports() {
        eprintln!("{}", report.plain());
    }
    let cases = inputs.cases();
    for case in &cases {
        println!("{}\t{}", case.file.display(), case.name);
    }
    println!(
        "{} file(s), {} invalid, {} case(s)",
        inputs.entries.len(),
        inputs.invalid(),
        cases.len()
    );
    if inputs.invalid() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
