//! An in-process agent that passes with a known rate `p`, and plans of many copies of
//! a case held to one gate: what the gates' simulation (`gates.rs`) and the
//! calls-per-verdict benchmark (`benches/calls_per_verdict.rs`, which includes this
//! file) run. Whether sample `n` of a question passes is decided by a hash of the
//! question and `n`, so a run is the same whatever order samples finish in.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prill_run::Connectors;
use prill_run::engine::SAMPLE_METADATA;
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use prill_target::{AgentRequest, AgentResponse, Registry, from_fn};

/// A number in `[0, 1)` from `text` and `sample`, the same every time (SplitMix64 of
/// an FNV-1a hash).
pub(crate) fn uniform(text: &str, sample: u32) -> f64 {
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

/// `units` copies of a case held to `gate` (a HOCON field), each asking its own
/// question of agent `a`, which passes it at rate `p`.
pub(crate) fn plan(gate: &str, p: f64, units: usize) -> Plan {
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
    let cases = (0..units)
        .map(|i| {
            let mut case = case.clone();
            case.id = format!("{}-{i}", case.id).into();
            case.name = format!("unit {i}").into();
            if let Some(step) = case.interactions.first_mut() {
                step.input.text = Some(format!("p={p} unit={i}"));
            }
            case
        })
        .collect();
    Plan::new(cases)
}

/// The agent `a` over `direct`: it reads `p` from the question and passes sample `n`
/// when [`uniform`] of the question and `n` is below it, counting its calls in `calls`.
pub(crate) fn connectors(calls: Arc<AtomicU64>) -> Connectors {
    let agent = from_fn(move |request: AgentRequest| {
        calls.fetch_add(1, Ordering::Relaxed);
        async move {
            let text = request.text.clone().unwrap_or_default();
            let p: f64 = text
                .strip_prefix("p=")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|p| p.parse().ok())
                .unwrap_or(0.0);
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
    Connectors::new().with(
        Connection::Direct,
        Arc::new(Registry::new().with("a", Arc::new(agent))),
    )
}
