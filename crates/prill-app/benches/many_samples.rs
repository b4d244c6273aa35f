//! Memory of a case with many samples: `success_ratio = "1/100000"` (the most a case
//! may take) against the demo server's `echo` agent over http, at the default 32
//! samples in flight. The first pass decides the unit, so the engine must start
//! samples only as permits free up: memory is O(jobs), never O(n).
//!
//! Run with `cargo bench -p prill-app --bench many_samples` (a release build). It
//! prints the samples that ran, the wall time and the peak RSS of the whole process
//! (demo server included), and exits non-zero when the peak RSS passes 30 MB or more
//! samples started than were in flight at once.
//!
//! Everything runs on 127.0.0.1.

use std::process::ExitCode;
use std::time::Instant;

use prill_run::{Status, run_plan};
use prill_spec::model::data_driven::MAX_SAMPLES;
use prill_spec::{Env, Plan, Unrecognized};

mod common;
use common::{cpu_seconds, over_http, peak_rss_kb};

const JOBS: usize = 32;
const RSS_TARGET_MB: f64 = 30.0;

fn main() -> ExitCode {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let path = dir.path().join("many.hocon");
    let text = format!(
        "{{ agent: echo, connections: [http], success_ratio: \"1/{MAX_SAMPLES}\",\n  interactions: [{{ text: hi, response: {{ text: {{ keywords: hi }} }} }}] }}\n"
    );
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("error: cannot write the case: {e}");
        return ExitCode::FAILURE;
    }
    let loaded = prill_spec::load_file(&path, &Env::default(), Unrecognized::Error)
        .expect("readable")
        .expect("a test file");
    let plan = Plan::new(loaded.cases());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let summary = runtime.block_on(async {
        let demo = prill_app::demo::start(0)
            .await
            .expect("the demo server starts");
        let options = over_http(JOBS);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let drain = tokio::spawn(async move {
            let mut ran = 0;
            let mut verdict = None;
            while let Some(event) = rx.recv().await {
                if let prill_run::Event::UnitFinished(report) = event {
                    ran = report.tally.total();
                    verdict = Some(report.verdict);
                }
            }
            (ran, verdict)
        });
        let summary = run_plan(&plan, &demo.connectors, &options, tx).await;
        let ran = drain.await.unwrap_or((0, None));
        demo.server.shutdown().await;
        (summary, ran)
    });
    let wall = started.elapsed();
    let cpu = cpu_seconds() - cpu_before;
    let rss_mb = peak_rss_kb() as f64 / 1024.0;
    let (summary, (ran, verdict)) = summary;
    println!("case:      success_ratio 1/{MAX_SAMPLES}, {JOBS} samples in flight");
    println!(
        "verdict:   {verdict:?} after {ran} samples (passed units: {})",
        summary.passed
    );
    println!("wall:      {:.3} s, cpu {cpu:.3} s", wall.as_secs_f64());
    println!("peak rss:  {rss_mb:.1} MB (target <= {RSS_TARGET_MB})");
    let met = verdict == Some(Status::Passed) && ran as usize <= JOBS && rss_mb <= RSS_TARGET_MB;
    if met {
        println!("all targets met");
        ExitCode::SUCCESS
    } else {
        println!("a target was missed");
        ExitCode::FAILURE
    }
}
