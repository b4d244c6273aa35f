//! The soak benchmark (issue 16): many cases against the demo server over http, 5% of
//! them with a fault of the server (a stream dropped mid-answer, a malformed line, a
//! 500), at 256 samples in flight. It checks that every case is accounted for (passed
//! or errored, each as it should be) and reports, every half second, the cases done, the
//! resident memory and the open file descriptors, so that a leak shows as a slope.
//!
//! Run with `cargo bench -p prill-app --bench soak` (a release build);
//! `PRILL_SOAK_CASES` sets the number of cases (default 100,000). Not in CI: it takes a
//! minute or more. It exits non-zero when a case is unaccounted for or wrongly judged,
//! or when memory or descriptors in the last quarter of the run are well above the
//! first quarter's (more than 1.5 × the resident memory, more than 64 descriptors).
//!
//! Everything runs on 127.0.0.1.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use prill_run::{Event, run_plan};
use prill_spec::{Env, Plan, Unrecognized, load_str};

mod common;
use common::{cpu_seconds, over_http, peak_rss_kb, rss_kb};

const JOBS: usize = 256;
const LATENCY_MS: u64 = 5;
/// One case in this many has a fault.
const FAULT_EVERY: usize = 20;
const FAULTS: [&str; 3] = ["drop", "malformed", "500"];

/// One reading of the process.
struct Reading {
    at: Duration,
    done: usize,
    rss_kb: u64,
    fds: usize,
}

fn main() -> ExitCode {
    let cases: usize = std::env::var("PRILL_SOAK_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let plan = plan(cases);
    let faulty = plan.cases.len().div_ceil(FAULT_EVERY);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let done = Arc::new(AtomicUsize::new(0));
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let (summary, readings) = runtime.block_on(async {
        let demo = prill_app::demo::start(0)
            .await
            .expect("the demo server starts");
        let options = over_http(JOBS);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let counted = Arc::clone(&done);
        let drain = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if matches!(event, Event::UnitFinished(_)) {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        let sampled = Arc::clone(&done);
        let sampler = tokio::spawn(async move {
            let mut readings = Vec::new();
            loop {
                readings.push(Reading {
                    at: started.elapsed(),
                    done: sampled.load(Ordering::Relaxed),
                    rss_kb: rss_kb(),
                    fds: open_fds(),
                });
                if readings.last().is_some_and(|r| r.done >= cases) {
                    break readings;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        let summary = run_plan(&plan, &demo.connectors, &options, tx).await;
        let _ = drain.await;
        let readings = sampler.await.unwrap_or_default();
        demo.server.shutdown().await;
        (summary, readings)
    });
    let wall = started.elapsed();
    println!(
        "cases:     {cases} over http, {faulty} with a fault ({FAULTS:?} in turn), --jobs {JOBS}"
    );
    println!(
        "wall:      {:.1} s, {:.1} s cpu (client and demo server)",
        wall.as_secs_f64(),
        cpu_seconds() - cpu_before
    );
    println!(
        "outcomes:  {} passed, {} failed, {} errored, {} skipped",
        summary.passed, summary.failed, summary.errored, summary.skipped
    );
    println!("peak rss:  {:.1} MB", peak_rss_kb() as f64 / 1024.0);
    println!("\n   time   done   rss MB   fds");
    for r in &readings {
        println!(
            "{:6.1}s {:6} {:8.1} {:5}",
            r.at.as_secs_f64(),
            r.done,
            r.rss_kb as f64 / 1024.0,
            r.fds
        );
    }
    let accounted = summary.passed + summary.failed + summary.errored == cases;
    let judged = summary.errored == faulty && summary.passed == cases - faulty;
    let flat = flat(&readings);
    println!(
        "\naccounted for: {accounted}; each as it should be: {judged}; memory and descriptors flat: {flat}"
    );
    if accounted && judged && flat {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Whether the last quarter of the readings stays near the first quarter's.
fn flat(readings: &[Reading]) -> bool {
    let quarter = readings.len() / 4;
    if quarter == 0 {
        return true;
    }
    let early = &readings[..quarter];
    let late = &readings[readings.len() - quarter..];
    let max = |rs: &[Reading], f: fn(&Reading) -> u64| rs.iter().map(f).max().unwrap_or(0);
    let rss_ok = max(late, |r| r.rss_kb) * 2 <= max(early, |r| r.rss_kb) * 3;
    let fds_ok = max(late, |r| r.fds as u64) <= max(early, |r| r.fds as u64) + 64;
    rss_ok && fds_ok
}

/// `cases` cases for the demo's `slow` agent; every [`FAULT_EVERY`]th asks the server
/// for a fault through its metadata (sent as a header).
fn plan(cases: usize) -> Plan {
    let env = Env::default();
    let mut all = Vec::with_capacity(cases);
    for i in 0..cases {
        let fault = if i % FAULT_EVERY == 0 {
            format!(
                "metadata: {{x-prill-fault: \"{}\"}}\n",
                FAULTS[(i / FAULT_EVERY) % FAULTS.len()]
            )
        } else {
            String::new()
        };
        let text = format!(
            "agent: slow\nconnections: http\n{fault}interactions:\n  - text: \"case {i}\"\n    sly_data: {{delay_ms: {LATENCY_MS}, case: {i}}}\n    response:\n      text: {{keywords: waited}}\n"
        );
        let path = format!("soak/case_{i:06}.yaml");
        let loaded =
            load_str(Path::new(&path), &text, &env, Unrecognized::Error).expect("a test file");
        assert!(loaded.is_valid(), "{:?}", loaded.reports());
        all.extend(loaded.cases());
    }
    Plan::new(all)
}

/// The open file descriptors now.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}
