//! What the CLI tests share: running `prill` in a folder with plain output ([`prill`]),
//! the repository's fixtures, a runtime for the fake servers, running `prill` in a
//! scratch directory cleared of the caller's provider variables, and reading the JSON
//! report it wrote.
//!
//! `main.rs` declares it once; each module takes it with `use crate::support;`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A folder under the repository's `fixtures/`.
pub(crate) fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(dir)
}

/// `prill args...` in `dir`, without colour, `PRILL_SERVER` or `GITHUB_ACTIONS` (which
/// would add annotations to stdout).
pub(crate) fn prill(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prill"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("PRILL_SERVER")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("the prill binary runs")
}

/// Bytes of a child's output as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `prill args...` in `dir` with `env`, cleared of every provider variable
/// (`prill_testkit::env::isolate`), and with `OLLAMA_HOST` pointing where nothing
/// listens, so that no pick of a provider or judge finds a developer's own Ollama.
pub(crate) fn prill_isolated(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_prill"));
    cmd.args(args).current_dir(dir).env("NO_COLOR", "1");
    prill_testkit::env::isolate(&mut cmd, dir);
    cmd.env("OLLAMA_HOST", "127.0.0.1:1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the prill binary runs")
}

/// A two-thread runtime for the fake servers.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// `prill run <file> --json report.json` in `dir`, with only `env` of the provider
/// variables ([`prill_testkit::env::isolate`]); its output and the report (`null` when
/// none was written).
pub(crate) fn run_file(dir: &Path, file: &str, env: &[(&str, String)]) -> (Output, Value) {
    run_args(dir, file, &[], env)
}

/// [`run_file`] with `extra` arguments after the others (`--tag qa`).
pub(crate) fn run_args(
    dir: &Path,
    file: &str,
    extra: &[&str],
    env: &[(&str, String)],
) -> (Output, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_prill"));
    cmd.args(["run", file, "--json", "report.json"])
        .args(extra)
        .current_dir(dir)
        .env("NO_COLOR", "1");
    prill_testkit::env::isolate(&mut cmd, dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let report = std::fs::read_to_string(dir.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (out, report)
}

/// [`run_file`] of `suite.yaml`.
pub(crate) fn run(dir: &Path, env: &[(&str, String)]) -> (Output, Value) {
    run_file(dir, "suite.yaml", env)
}

/// Each unit's name and verdict, sorted by name.
pub(crate) fn verdicts(report: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = report["units"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            (
                u["unit"]["name"].as_str().unwrap_or_default().to_owned(),
                u["verdict"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The pairs as owned strings, sorted, to compare with [`verdicts`].
pub(crate) fn expected(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = pairs
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    v.sort();
    v
}

/// The unit called `name`.
///
/// # Panics
///
/// When the report has none.
pub(crate) fn unit<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["units"]
        .as_array()
        .and_then(|units| units.iter().find(|u| u["unit"]["name"] == name))
        .unwrap_or_else(|| panic!("no unit {name} in {report}"))
}

/// The first interaction of the first sample of the unit called `name`.
pub(crate) fn interaction<'a>(report: &'a Value, name: &str) -> &'a Value {
    &unit(report, name)["samples"][0]["interactions"][0]
}

/// stdout and stderr, as one text for messages.
pub(crate) fn output_text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `git args...` in `dir`, which must succeed; its stdout.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Prill Tests",
            "-c",
            "user.email=tests@prill.invalid",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_owned()
}
