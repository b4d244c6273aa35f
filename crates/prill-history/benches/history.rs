//! The history over thousands of kept runs: building the SQLite index from the JSON
//! Lines files, opening an index that is up to date, listing the runs, one case's
//! history, and comparing two large runs.
//!
//! Run with `cargo bench -p prill-history --bench history`; `docs/performance.md` has
//! the figures.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use prill_history::History;
use prill_history::compare::{Side, Thresholds, compare};
use prill_report::stored::StoredRun;
use serde_json::json;

/// How many runs the history holds: ten times `[history] keep`'s default.
const RUNS: usize = 2_000;
/// How many units each run has.
const UNITS: usize = 50;

/// The text of one kept run: its `run` line, `units` finished units (every 7th
/// failing, shifted by `seed`), and its `run_finished` line.
fn run_file(id: &str, units: usize, seed: usize) -> String {
    let mut text = json!({
        "schema_version": 1, "event": "run", "id": id,
        "started_at": "2026-11-25T00:00:00Z", "command": "run",
        "git": {"commit": format!("{seed:040x}"), "dirty": false, "branch": "main"},
        "settings": {"paths": ["."], "filters": [], "tags": [], "partition": null,
                     "connections": [], "samples": null, "models": [], "judge": null,
                     "fail_fast": false, "rerun_failed": false},
    })
    .to_string();
    text.push('\n');
    let mut failed = 0;
    for u in 0..units {
        let passed = !(u + seed).is_multiple_of(7);
        failed += usize::from(!passed);
        let status = if passed { "passed" } else { "failed" };
        let line = json!({
            "schema_version": 1, "event": "unit_finished",
            "unit": {"case_id": format!("case-{u:05}"), "name": format!("case number {u}"),
                     "file": "tests/generated.yaml", "dialect": "sentinel-spec",
                     "connection": "openai", "target": "gpt-4o-mini"},
            "verdict": status, "success_ratio": "1/1",
            "tally": {"passed": u32::from(passed), "failed": u32::from(!passed), "errored": 0},
            "samples": [{"index": 0, "status": status, "duration": 0.4, "error": null,
                "interactions": [{"index": 0, "sent": "What is the capital of France?",
                    "answer": "Paris is the capital of France.", "structure": null,
                    "sly_data": null, "duration": 0.4 + (u % 5) as f64 * 0.01,
                    "checks": [], "error": null, "usage": {"input": 12, "output": 9},
                    "time_to_first_token": 0.1, "cost": 0.0000072}]}],
            "duration": 0.4,
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let finished = json!({
        "schema_version": 1, "event": "run_finished", "passed": units - failed,
        "failed": failed, "errored": 0, "skipped": 0, "cancelled": false, "duration": 3.5,
    });
    text.push_str(&finished.to_string());
    text.push('\n');
    text
}

/// A runs folder of [`RUNS`] runs.
fn kept_runs(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for r in 0..RUNS {
        let id = format!("20261125T{:06}.000Z-{r:06x}", r);
        std::fs::write(dir.join(format!("{id}.jsonl")), run_file(&id, UNITS, r)).unwrap();
    }
}

fn history(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let index = dir.path().join("history.sqlite");
    kept_runs(&runs);

    let mut group = c.benchmark_group("history");
    group.sample_size(10);
    group.bench_function("index 2000 runs of 50 units from their files", |b| {
        b.iter(|| {
            let _ = std::fs::remove_file(&index);
            black_box(History::open(&runs, &index).unwrap());
        });
    });
    let opened = History::open(&runs, &index).unwrap();
    drop(opened);
    group.bench_function("open an index that is up to date", |b| {
        b.iter(|| black_box(History::open(&runs, &index).unwrap()));
    });
    let history = History::open(&runs, &index).unwrap();
    group.bench_function("list 2000 runs", |b| {
        b.iter(|| black_box(history.runs().unwrap()));
    });
    group.bench_function("one case across 2000 runs", |b| {
        b.iter(|| black_box(history.case_history("case-00042").unwrap()));
    });
    group.finish();
}

fn comparison(c: &mut Criterion) {
    let base = StoredRun::parse(&run_file("base", 10_000, 0)).unwrap();
    let head = StoredRun::parse(&run_file("head", 10_000, 1)).unwrap();
    let (base, head) = (Side::new("base", base), Side::new("head", head));
    let mut group = c.benchmark_group("compare");
    group.sample_size(10);
    group.bench_function("two runs of 10000 units", |b| {
        b.iter(|| black_box(compare(&base, &head, &Thresholds::default())));
    });
    group.bench_function("read a kept run of 10000 units", |b| {
        let text = run_file("head", 10_000, 1);
        b.iter(|| black_box(StoredRun::parse(&text).unwrap()));
    });
    group.finish();
}

criterion_group!(benches, history, comparison);
criterion_main!(benches);
