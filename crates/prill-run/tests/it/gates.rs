//! The simulation of `docs/statistics.md`'s gates through the real engine: in-process
//! agents that pass with a known rate `p` (decided by a hash of the case and the sample,
//! so the run is the same whatever order samples finish in), 10,000 units per gate and
//! rate. The share of units that pass must be the gate's exact operating
//! characteristic (`prill_stats::KOfN`) within Monte-Carlo error: early stop, lazy
//! sample starts and concurrency change how many samples run, never what a gate means.

use std::sync::Arc;

use prill_run::{Connectors, RunOptions, run_plan};
use prill_spec::Plan;
use prill_stats::{KOfN, Reliability, Sequential};
use tokio::sync::mpsc;

use crate::known_rate;

/// Units per gate and rate.
const UNITS: usize = 10_000;

/// `UNITS` copies of a case gated `need/of`.
fn plan(need: u32, of: u32, p: f64) -> Plan {
    known_rate::plan(&format!(r#"success_ratio = "{need}/{of}""#), p, UNITS)
}

fn plan_gated(gate: &str, p: f64) -> Plan {
    known_rate::plan(gate, p, UNITS)
}

fn connectors() -> Connectors {
    known_rate::connectors(Arc::default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_gate_passes_as_often_as_its_operating_characteristic_says() {
    let connectors = connectors();
    let options = RunOptions {
        jobs: 64,
        ..RunOptions::default()
    };
    let mut misses = Vec::new();
    for (need, of) in [(1, 1), (4, 5), (9, 10)] {
        for p in [0.5, 0.7, 0.8, 0.9, 0.95, 0.99] {
            // Only the summary is read: no event is kept.
            let (tx, rx) = mpsc::unbounded_channel();
            drop(rx);
            let summary = run_plan(plan(need, of, p), &connectors, &options, tx).await;
            assert_eq!(summary.total(), UNITS);
            let passed = summary.passed;
            let exact = KOfN { need, of }.pass_probability(p);
            let realized = passed as f64 / UNITS as f64;
            // Four standard errors: a false alarm about once in 16,000 checks.
            let allowed = 4.0 * (exact * (1.0 - exact) / UNITS as f64).sqrt() + 1e-9;
            if (realized - exact).abs() > allowed {
                misses.push(format!(
                    "{need}/{of} at p = {p}: {realized:.4} of units passed, the gate says {exact:.4} (± {allowed:.4})"
                ));
            }
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// Four standard errors of a share `exact` over [`UNITS`]: a false alarm about once in
/// 16,000 checks.
fn allowed(exact: f64) -> f64 {
    4.0 * (exact * (1.0 - exact) / UNITS as f64).sqrt() + 1e-9
}

/// The `reliability` plans of `docs/statistics.md`: each gate's realized pass and
/// inconclusive shares are its exact ones (`prill_stats::Sequential::outcomes`), and
/// its realized error rates are at most its stated ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reliability_plan_keeps_its_stated_error_rates() {
    let connectors = connectors();
    let options = RunOptions {
        jobs: 64,
        ..RunOptions::default()
    };
    let plans = [
        Reliability::default(),
        Reliability {
            good: 0.9,
            bad: 0.7,
            false_pass: 0.1,
            false_fail: 0.1,
            max_samples: 60,
        },
    ];
    let mut misses = Vec::new();
    for r in plans {
        let test = Sequential::new(r).expect("a usable plan");
        let gate = format!(
            "reliability {{ good = {}, bad = {}, false_pass = {}, false_fail = {}, max_samples = {} }}",
            r.good, r.bad, r.false_pass, r.false_fail, r.max_samples
        );
        for p in [0.5, 0.7, 0.8, 0.9, 0.95, 0.99] {
            let (tx, rx) = mpsc::unbounded_channel();
            drop(rx);
            let summary = run_plan(plan_gated(&gate, p), &connectors, &options, tx).await;
            assert_eq!(summary.total(), UNITS);
            assert_eq!(summary.errored + summary.skipped, 0);
            let exact = test.outcomes(p);
            let share = |n: usize| n as f64 / UNITS as f64;
            for (what, realized, exact) in [
                ("passed", share(summary.passed), exact.pass),
                (
                    "inconclusive",
                    share(summary.inconclusive),
                    exact.inconclusive,
                ),
            ] {
                if (realized - exact).abs() > allowed(exact) {
                    misses.push(format!(
                        "{gate} at p = {p}: {realized:.4} {what}, exactly {exact:.4} (± {:.4})",
                        allowed(exact)
                    ));
                }
            }
            if p <= r.bad && share(summary.passed) > r.false_pass + allowed(r.false_pass) {
                misses.push(format!(
                    "{gate} at p = {p}: passed {:.4}, more than false_pass",
                    share(summary.passed)
                ));
            }
            let missed = share(summary.failed + summary.inconclusive);
            if p >= r.good && missed > r.false_fail + allowed(r.false_fail) {
                misses.push(format!(
                    "{gate} at p = {p}: missed {missed:.4}, more than false_fail"
                ));
            }
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}
