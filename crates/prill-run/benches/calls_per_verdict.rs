//! Model calls per decided verdict (issue 44, `docs/performance.md`): agents at
//! p = 0.70, 0.80, 0.90 and 0.95, each held to the `reliability` gate good 0.95 / bad
//! 0.80 / 5% / 5% and to the fixed `success_ratio = "45/50"` with the same error rates,
//! both as Prill runs them (the fixed plan with its early stop), through the real
//! engine with an in-process agent that counts its calls.
//!
//! `cargo bench -p prill-run --bench calls_per_verdict` prints a Markdown table and
//! exits non-zero when the gate misses its targets: over the four rates, its mean calls
//! at most 60% of 50 and at most 80% of the early-stopped fixed plan's mean.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prill_run::{RunOptions, run_plan};
use tokio::sync::mpsc;

#[path = "../tests/it/known_rate.rs"]
mod known_rate;

/// Units per gate and rate: the mean calls are within about ±0.3 of their exact value.
const UNITS: usize = 4000;
const RATES: [f64; 4] = [0.70, 0.80, 0.90, 0.95];
/// The in-flight limit, as a CI run would set it.
const JOBS: usize = 32;

/// The mean calls per unit, and the share of units that passed.
async fn measure(gate: &str, p: f64) -> (f64, f64) {
    let calls = Arc::new(AtomicU64::new(0));
    let connectors = known_rate::connectors(Arc::clone(&calls));
    let options = RunOptions {
        jobs: JOBS,
        ..RunOptions::default()
    };
    let (tx, rx) = mpsc::unbounded_channel();
    drop(rx);
    let summary = run_plan(known_rate::plan(gate, p, UNITS), &connectors, &options, tx).await;
    let units = UNITS as f64;
    (
        calls.load(Ordering::Relaxed) as f64 / units,
        summary.passed as f64 / units,
    )
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let gates = [
        (
            "reliability (0.95 / 0.80, 5% / 5%, at most 100)",
            "reliability {}",
        ),
        (
            "success_ratio 45/50, early stop",
            r#"success_ratio = "45/50""#,
        ),
    ];
    let mut means = Vec::new();
    println!(
        "| calls per verdict ({UNITS} units, -j {JOBS}) | {} | mean |",
        RATES.map(|p| format!("p = {p}")).join(" | ")
    );
    println!("|---|---|---|---|---|---|");
    for (name, gate) in gates {
        let cells: Vec<(f64, f64)> = RATES
            .iter()
            .map(|p| runtime.block_on(measure(gate, *p)))
            .collect();
        let mean = cells.iter().map(|(c, _)| c).sum::<f64>() / RATES.len() as f64;
        let shown: Vec<String> = cells
            .iter()
            .map(|(c, passed)| format!("{c:.1} (passes {:.0}%)", 100.0 * passed))
            .collect();
        println!("| {name} | {} | {mean:.1} |", shown.join(" | "));
        means.push(mean);
    }
    let (gate, fixed) = (means[0], means[1]);
    let ok = gate <= 0.6 * 50.0 && gate <= 0.8 * fixed;
    println!(
        "\nthe gate's mean is {gate:.1} calls: {:.0}% of 50 (target at most 60%) and {:.0}% of the early-stopped 45/50's {fixed:.1} (target at most 80%)",
        100.0 * gate / 50.0,
        100.0 * gate / fixed
    );
    if !ok {
        eprintln!("the reliability gate missed its calls-per-verdict target");
        std::process::exit(1);
    }
}
