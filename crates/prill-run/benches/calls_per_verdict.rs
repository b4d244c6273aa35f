//! Model calls per decided verdict (issue 44, `docs/performance.md`): agents at
//! p = 0.70, 0.80, 0.90 and 0.95, each held to the `reliability` gate good 0.95 / bad
//! 0.80 / 5% / 5% and to the fixed `success_ratio = "45/50"` with the same error rates,
//! both as Prill runs them (the fixed plan with its early stop), through the real
//! engine with an in-process agent that counts its calls.
//!
//! `cargo bench -p prill-run --bench calls_per_verdict` prints a Markdown table and
//! exits non-zero when the gate misses its targets: over the four rates, its mean calls
//! at most 60% of 50 and at most 80% of the early-stopped fixed plan's mean.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prill_run::engine::SAMPLE_METADATA;
use prill_run::{Connectors, RunOptions, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use prill_target::{AgentRequest, AgentResponse, Registry, from_fn};
use tokio::sync::mpsc;

/// Units per gate and rate: the mean calls are within about ±0.3 of their exact value.
const UNITS: usize = 4000;
const RATES: [f64; 4] = [0.70, 0.80, 0.90, 0.95];
/// The in-flight limit, as a CI run would set it.
const JOBS: usize = 32;

/// A number in `[0, 1)` from `text` and `sample`, the same every time.
fn uniform(text: &str, sample: u32) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes().chain(sample.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

fn plan(gate: &str, p: f64) -> Plan {
    let text = format!(
        r#"agent = a, connections = [direct], {gate}
           interactions = [{{ text = "p={p} unit=0", response.text.keywords = pass }}]"#
    );
    let loaded = prill_spec::load_str(
        Path::new("gate.hocon"),
        &text,
        &Env::default(),
        Unrecognized::Error,
    )
    .expect("a test file");
    let case = loaded.cases().into_iter().next().expect("one case");
    let cases = (0..UNITS)
        .map(|i| {
            let mut case = case.clone();
            case.id = format!("{}-{i}", case.id).into();
            if let Some(step) = case.interactions.first_mut() {
                step.input.text = Some(format!("p={p} unit={i}"));
            }
            case
        })
        .collect();
    Plan::new(cases)
}

/// The mean calls per unit, and the share of units that passed.
async fn measure(gate: &str, p: f64) -> (f64, f64) {
    let calls = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&calls);
    let agent = from_fn(move |request: AgentRequest| {
        counted.fetch_add(1, Ordering::Relaxed);
        async move {
            let text = request.text.clone().unwrap_or_default();
            let sample: u32 = request.metadata[SAMPLE_METADATA].parse().unwrap_or(0);
            let word = if uniform(&text, sample) < p {
                "pass"
            } else {
                "nope"
            };
            Ok(AgentResponse {
                text: Some(word.to_owned()),
                ..AgentResponse::default()
            })
        }
    });
    let connectors = Connectors::new().with(
        Connection::Direct,
        Arc::new(Registry::new().with("a", Arc::new(agent))),
    );
    let options = RunOptions {
        jobs: JOBS,
        ..RunOptions::default()
    };
    let (tx, rx) = mpsc::unbounded_channel();
    drop(rx);
    let summary = run_plan(plan(gate, p), &connectors, &options, tx).await;
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
