//! `cargo xtask bench --conversations`: a suite of 100 conversations, each with a
//! simulated customer, the retail tool program of `fixtures/retail/` and its end state
//! checked, recorded live against `fake-openai --shop` (the customer, the agent and the
//! judge, each reply after the benchmark's latency), then replayed from its cassettes
//! with the server stopped and the tool program removed (`docs/performance.md`,
//! `docs/cassettes.md`).
//!
//! Each live run records into a fresh folder; each replay must give every case the
//! verdict and error kind the recording gave it, or the benchmark fails. It prints the
//! median wall time of each, and fails when a replay takes 10% of a live run or more.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::measure::{Invocation, Sample, measure, tail};
use super::server::{FakeServer, Sandbox};
use super::stats::Summary;
use super::{LATENCY_MS, summarize};

/// Conversations in the suite.
const CONVERSATIONS: usize = 100;

/// The most a replay may take, as a share of a live run.
const MAX_SHARE: f64 = 0.10;

/// Runs the benchmark with the binaries `prill` and `fake_openai` in `dir`.
pub(crate) fn run(
    repo: &Path,
    prill: &Path,
    fake_openai: &Path,
    dir: &Path,
    runs: usize,
) -> Result<(), String> {
    let dir = dir.join("conversations");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let retail = repo.join("fixtures/retail");
    let fixture = read(&retail.join("retail.yaml"))?;
    let defaults = fixture
        .split_once("\ntests:")
        .map_or(fixture.as_str(), |(d, _)| d);
    let suite = std::process::Command::new(fake_openai)
        .args(["--shop-suite", &CONVERSATIONS.to_string()])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", fake_openai.display()))?;
    let tests = String::from_utf8_lossy(&suite.stdout);
    write(&dir.join("suite.yaml"), &format!("{defaults}{tests}"))?;
    let sandbox = Sandbox::detect();
    let server = FakeServer::start_with(fake_openai, LATENCY_MS, &["--shop".to_owned()], sandbox)?;
    let run = Runner {
        prill,
        dir: &dir,
        url: server.url.clone(),
    };
    let mut live = Vec::new();
    let mut recorded = Vec::new();
    for i in 1..=runs {
        copy_program(&retail, &dir)?;
        let tapes = dir.join(format!("tapes-{i}"));
        let (sample, outcomes) = run.once(&server.prefix(), &["--record".into(), tapes.into()])?;
        eprintln!("live, run {i}/{runs}: {:.2} s wall", sample.wall);
        live.push(sample);
        recorded = outcomes;
    }
    drop(server);
    // No model server and no tool program: a replay that needed either would error.
    let _ = std::fs::remove_file(dir.join("tools.py"));
    let mut replayed = Vec::new();
    let tapes = dir.join(format!("tapes-{runs}"));
    for i in 1..=runs {
        let (sample, outcomes) = run.once(
            &[],
            &[
                "--replay".into(),
                tapes.clone().into(),
                "--replay-latency".into(),
                "zero".into(),
            ],
        )?;
        if outcomes != recorded {
            return Err(format!(
                "replay {i} gave other verdicts than the recording:\n{outcomes:?}\nrecorded:\n{recorded:?}"
            ));
        }
        eprintln!("replayed, run {i}/{runs}: {:.2} s wall", sample.wall);
        replayed.push(sample);
    }
    report(&summarize(&live)?, &summarize(&replayed)?)
}

/// Prints the table, and fails when the replay is too slow.
fn report(live: &Summary, replayed: &Summary) -> Result<(), String> {
    let share = replayed.wall_median / live.wall_median;
    println!(
        "| {CONVERSATIONS} conversations | wall (median) | CPU | peak memory |\n|---|---|---|---|\n| live, recorded | {:.2} s | {:.2} s | {:.0} MB |\n| replayed | {:.2} s | {:.2} s | {:.0} MB |\n\nA replay takes {:.1}% of a live run (the target: under {:.0}%).",
        live.wall_median,
        live.cpu_median,
        live.rss_median_mb,
        replayed.wall_median,
        replayed.cpu_median,
        replayed.rss_median_mb,
        share * 100.0,
        MAX_SHARE * 100.0
    );
    if share < MAX_SHARE {
        Ok(())
    } else {
        Err(format!(
            "a replay took {:.1}% of a live run, not under {:.0}%",
            share * 100.0,
            MAX_SHARE * 100.0
        ))
    }
}

/// A case's name, verdict and error kind.
type Outcome = (String, String, String);

/// What each measured `prill run` shares.
struct Runner<'a> {
    prill: &'a Path,
    dir: &'a Path,
    url: String,
}

impl Runner<'_> {
    /// One `prill run suite.yaml` with `extra`, behind `prefix`: its sample and each
    /// case's name, verdict and error kind, sorted.
    fn once(
        &self,
        prefix: &[OsString],
        extra: &[OsString],
    ) -> Result<(Sample, Vec<Outcome>), String> {
        let report = self.dir.join("report.json");
        let _ = std::fs::remove_file(&report);
        let mut args: Vec<OsString> = [
            "run",
            "suite.yaml",
            "--judge",
            "openai:gpt-4o-mini",
            "--no-cache",
            "-j",
            "8",
            "--quiet",
            "--color",
            "never",
            "--json",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        args.push(report.clone().into());
        args.extend(extra.iter().cloned());
        let invocation = Invocation {
            prefix: prefix.to_vec(),
            program: self.prill.to_owned(),
            args,
            env: vec![
                (
                    "PATH".to_owned(),
                    std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
                ),
                ("HOME".to_owned(), self.dir.join("home").into()),
                ("LANG".to_owned(), "C.UTF-8".into()),
                ("OPENAI_BASE_URL".to_owned(), self.url.clone().into()),
                ("OPENAI_API_KEY".to_owned(), "sk-bench".into()),
            ],
            cwd: self.dir.to_owned(),
            capture_stdout: false,
        };
        let finished = measure(&invocation, &self.dir.join("time.txt"))?;
        let text = read(&report).map_err(|e| format!("{e}\n{}", tail(&finished.stderr, 2000)))?;
        let report: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("the JSON report: {e}"))?;
        let mut outcomes: Vec<Outcome> = report["units"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|u| {
                let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
                (
                    s(&u["unit"]["name"]),
                    s(&u["verdict"]),
                    s(&u["samples"][0]["error"]["kind"]),
                )
            })
            .collect();
        outcomes.sort();
        if outcomes.len() != CONVERSATIONS {
            return Err(format!(
                "prill run reported {} cases, not {CONVERSATIONS}\n{}",
                outcomes.len(),
                tail(&finished.stderr, 2000)
            ));
        }
        Ok((finished.sample, outcomes))
    }
}

/// Puts the retail tool program and its database in `dir`.
fn copy_program(retail: &Path, dir: &Path) -> Result<(), String> {
    for name in ["tools.py", "db.json"] {
        let from: PathBuf = retail.join(name);
        std::fs::copy(&from, dir.join(name))
            .map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
