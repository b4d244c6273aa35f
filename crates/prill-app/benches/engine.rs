//! The engine's throughput benchmark: 10,000 single-interaction cases, each a file on
//! disk, against the demo server's `slow` agent with 20 ms latency, at 200 samples in
//! flight. The ideal is 10,000 × 20 ms / 200 = 1.0 s.
//!
//! Run with `cargo bench -p prill-app --bench engine` (a release build). It prints the
//! wall time and its ratio to the ideal, the CPU seconds and the peak RSS of the whole
//! process — which holds the demo server too, so the numbers are an upper bound for
//! Prill's own share — and exits non-zero when a target is missed:
//! ratio ≤ 1.3, CPU ≤ 2 s, peak RSS ≤ 80 MB.
//!
//! Everything runs on 127.0.0.1.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use prill_run::run_plan;
use prill_spec::{Env, Plan, Unrecognized};

mod common;
use common::{cpu_seconds, over_http, peak_rss_kb};

const CASES: usize = 10_000;
const LATENCY_MS: u64 = 20;
const JOBS: usize = 200;

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = write_cases(dir.path()) {
        eprintln!("error: cannot write the cases: {e}");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let load_cpu = cpu_seconds();
    let load_started = Instant::now();
    let plan = load(dir.path());
    assert_eq!(plan.cases.len(), CASES);
    let load_wall = load_started.elapsed();
    let load_cpu = cpu_seconds() - load_cpu;
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let summary = runtime.block_on(async {
        let demo = prill_app::demo::start(0)
            .await
            .expect("the demo server starts");
        let options = over_http(JOBS);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // A consumer, as the CLI has one; it only counts.
        let drain = tokio::spawn(async move {
            let mut n = 0usize;
            while rx.recv().await.is_some() {
                n += 1;
            }
            n
        });
        let summary = run_plan(&plan, &demo.connectors, &options, tx).await;
        let events = drain.await.unwrap_or(0);
        demo.server.shutdown().await;
        (summary, events)
    });
    let wall = started.elapsed();
    let cpu = cpu_seconds() - cpu_before;
    let rss_mb = peak_rss_kb() as f64 / 1024.0;
    let (summary, events) = summary;
    let ideal = Duration::from_millis(CASES as u64 * LATENCY_MS / JOBS as u64);
    let ratio = wall.as_secs_f64() / ideal.as_secs_f64();
    println!("cases:     {CASES} (each a file: loaded, validated, run over http)");
    println!(
        "loading:   {:.3} s wall, {load_cpu:.3} s cpu (before the run; not in the targets below)",
        load_wall.as_secs_f64()
    );
    println!("passed:    {} (events: {events})", summary.passed);
    println!(
        "wall:      {:.3} s (ideal {:.1} s, ratio {ratio:.2}, target <= 1.3)",
        wall.as_secs_f64(),
        ideal.as_secs_f64()
    );
    println!("cpu:       {cpu:.3} s (user + system, client and demo server; target <= 2)");
    println!("peak rss:  {rss_mb:.1} MB (target <= 80)");
    let met = summary.passed == CASES && ratio <= 1.3 && cpu <= 2.0 && rss_mb <= 80.0;
    if met {
        println!("all targets met");
        ExitCode::SUCCESS
    } else {
        println!("a target was missed");
        ExitCode::FAILURE
    }
}

fn write_cases(dir: &Path) -> std::io::Result<()> {
    for i in 0..CASES {
        let text = format!(
            "agent: slow\nconnections: http\ninteractions:\n  - text: \"case {i}\"\n    sly_data: {{delay_ms: {LATENCY_MS}, case: {i}}}\n    response:\n      text: {{keywords: waited}}\n"
        );
        std::fs::write(dir.join(format!("case_{i:05}.yaml")), text)?;
    }
    Ok(())
}

fn load(dir: &Path) -> Plan {
    let env = Env::default();
    let mut cases = Vec::with_capacity(CASES);
    for found in prill_spec::load::discover(&[dir.to_path_buf()]) {
        let path = found.expect("the generated files exist");
        let loaded = prill_spec::load_file(&path, &env, Unrecognized::Error)
            .expect("readable")
            .expect("a test file");
        cases.extend(loaded.cases());
    }
    Plan::new(cases)
}
