//! What the CLI tests share: the one way to run the built `prill` ([`command`], and
//! [`prill`], [`prill_env`], [`prill_bounded`], [`isolated`], [`prill_isolated`] on top
//! of it), reading what it printed ([`text`], [`stdout`], [`stderr`], [`code`]), the
//! repository's fixtures, writing and reading files ([`write`], [`json`]), a runtime
//! for the fake servers, and the JSON report of a run.
//!
//! Every child `prill` is shielded from the caller's environment the same way: no
//! colour, and none of the variables that change what it prints or which server it
//! talks to (`PRILL_SERVER`, and `GITHUB_ACTIONS`, `PRILL_LOG`, `RUST_LOG` from
//! [`prill_testkit::env::OUTPUT_VARIABLES`]), so that a test run inside GitHub Actions or
//! with logs on sees what it sees elsewhere. [`isolated`] also clears every provider
//! variable, for the tests that reach a provider or a judge.
//!
//! `main.rs` declares it once; each module takes what it needs with
//! `use crate::support::{...};`.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prill_testkit::providers::Reply;
use serde_json::{Value, json};

/// A folder (or file) under the repository's `fixtures/`.
pub(crate) fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(dir)
}

/// Makes `cmd`'s output plain and the same wherever the tests run: `NO_COLOR=1`, and
/// `PRILL_SERVER` and [`prill_testkit::env::OUTPUT_VARIABLES`] removed. For a command
/// that runs `prill` through another program (`sh -c`, `setpriv`); [`command`] does it
/// for `prill` itself.
pub(crate) fn plain(cmd: &mut Command) -> &mut Command {
    cmd.env("NO_COLOR", "1").env_remove("PRILL_SERVER");
    for var in prill_testkit::env::OUTPUT_VARIABLES {
        cmd.env_remove(var);
    }
    cmd
}

/// `prill args...` in `dir`, not started yet, made [`plain`]. Provider variables are
/// left as they are (see [`isolated`]). Every other way of running `prill` here starts
/// from this one.
pub(crate) fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_prill"));
    cmd.args(args).current_dir(dir);
    plain(&mut cmd);
    cmd
}

/// Runs `prill args...` in `dir` ([`command`]) to its end.
pub(crate) fn prill(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("the prill binary runs")
}

/// [`prill`] with `env` set on top (`PRILL_SERVER`, `GITHUB_ACTIONS=true`, a key...).
pub(crate) fn prill_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(dir, args)
        .envs(env.iter().copied())
        .output()
        .expect("the prill binary runs")
}

/// How long [`prill_bounded`] lets `prill` run.
pub(crate) const HANG_LIMIT: Duration = Duration::from_secs(20);

/// [`prill_env`], with stdin closed, killed if it has not ended within [`HANG_LIMIT`]:
/// a hang is a failure of the test, not a stuck test run.
///
/// # Panics
///
/// When `prill` hangs.
pub(crate) fn prill_bounded(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let child = spawn(command(dir, args).envs(env.iter().copied()));
    output_within(child, HANG_LIMIT)
        .unwrap_or_else(|| panic!("prill {args:?} hung for {HANG_LIMIT:?}"))
}

/// Starts `cmd` with stdin closed and stdout and stderr piped, for [`output_within`].
pub(crate) fn spawn(cmd: &mut Command) -> Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the prill binary runs")
}

/// What `child` (started with [`spawn`]) printed and how it ended, if it ends within
/// `limit`; otherwise it is killed and the answer is `None`. Its stdout and stderr are
/// read while it runs, so that a full pipe cannot pass for a hang.
pub(crate) fn output_within(mut child: Child, limit: Duration) -> Option<Output> {
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits for prill") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(Output {
        status,
        stdout: stdout.join().expect("stdout is read"),
        stderr: stderr.join().expect("stderr is read"),
    })
}

/// Everything `pipe` gives until it ends, read on a thread (nothing when there is none).
fn read_all(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// [`command`], cleared of every provider variable as well
/// ([`prill_testkit::env::isolate`], with `dir` as the scratch folder): only what the
/// test sets reaches `prill`.
pub(crate) fn isolated(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = command(dir, args);
    prill_testkit::env::isolate(&mut cmd, dir);
    cmd
}

/// Runs `prill args...` in `dir` [`isolated`], with `OLLAMA_HOST` pointing where nothing
/// listens (so that no pick of a provider or judge finds a developer's own Ollama), and
/// `env` on top.
pub(crate) fn prill_isolated(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = isolated(dir, args);
    cmd.env("OLLAMA_HOST", "127.0.0.1:1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the prill binary runs")
}

/// Bytes of a child's output as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A child's stdout as text.
pub(crate) fn stdout(out: &Output) -> String {
    text(&out.stdout)
}

/// A child's stderr as text.
pub(crate) fn stderr(out: &Output) -> String {
    text(&out.stderr)
}

/// The exit code of `prill`.
///
/// # Panics
///
/// When it was ended by a signal.
pub(crate) fn code(out: &Output) -> i32 {
    out.status.code().expect("prill exits with a code")
}

/// Writes `text` to `dir/name`, making the folders on the way.
pub(crate) fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// The JSON document in the file at `path`.
///
/// # Panics
///
/// When it cannot be read or is not JSON.
pub(crate) fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The JSON value on each line of `text` (JSON Lines).
///
/// # Panics
///
/// When a line is not JSON.
pub(crate) fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The lines of the JSON Lines file at `path` ([`json_lines`]).
pub(crate) fn jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    json_lines(&text)
}

/// The JSON document in the file at `path`, or `null` when there is none (a report
/// that was not written).
pub(crate) fn json_or_null(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

/// What a judge model answers: its verdict (`pass` or `fail`) and `reason`.
pub(crate) fn judge_verdict(pass: bool, reason: &str) -> Reply {
    Reply::structured(json!({"verdict": if pass { "pass" } else { "fail" }, "reason": reason}))
}

/// A two-thread runtime for the fake servers.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// `prill run <file> --json report.json` in `dir` [`isolated`], with only `env` of the
/// provider variables; its output and the report (`null` when none was written).
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
    let mut cmd = isolated(dir, &["run", file, "--json", "report.json"]);
    cmd.args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the prill binary runs");
    (out, json_or_null(&dir.join("report.json")))
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
    format!("{}\n{}", stdout(out), stderr(out))
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

/// The model each provider of `PRILL_LIVE_PROVIDERS` is tested with.
pub(crate) fn live_model(provider: &str) -> &'static str {
    match provider {
        "openai" => "gpt-4o-mini",
        "anthropic" => "claude-haiku-4-5",
        "ollama" => "llama3.1:8b",
        "huggingface" => "meta-llama/Llama-3.1-8B-Instruct",
        "bedrock" => "anthropic.claude-3-haiku-20240307-v1:0",
        other => panic!("unknown provider {other}"),
    }
}

/// The variables a run against real providers passes on: their keys and addresses.
pub(crate) const LIVE_KEYS: [&str; 10] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "OLLAMA_HOST",
    "HF_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_PROFILE",
];
