//! A Rust function as the agent under test: a data-driven spec runs against it over
//! `direct`, through the same engine as a neuro-san server. No server, no network.
//!
//! `cargo run -p prill-examples --example in_process`

use std::path::Path;
use std::sync::Arc;

use prill_run::{Connectors, Event, RunOptions, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized, load_str};
use prill_target::{AgentRequest, AgentResponse, Registry, from_fn};
use serde_json::json;

const SPEC: &str = r#"
agent = adder
success_ratio = "3/3"
interactions = [
  {
    text = "add"
    sly_data { x = 2, y = 40 }
    response {
      text { keywords = ["42"] }
      sly_data { sum { value = 42 } }
    }
  }
]
"#;

#[tokio::main]
async fn main() {
    // The agent: reads x and y from sly_data, answers their sum in text and sly_data.
    let adder = from_fn(|request: AgentRequest| async move {
        let arg = |k: &str| {
            request
                .sly_data
                .as_ref()
                .and_then(|s| s[k].as_i64())
                .unwrap_or(0)
        };
        let sum = arg("x") + arg("y");
        Ok(AgentResponse {
            text: Some(format!("the sum is {sum}")),
            sly_data: Some(json!({"sum": sum})),
            ..AgentResponse::default()
        })
    });
    let agents = Registry::new().with("adder", Arc::new(adder));
    let connectors = Connectors::new().with(Connection::Direct, Arc::new(agents));

    let loaded = load_str(
        Path::new("adder.hocon"),
        SPEC,
        &Env::default(),
        Unrecognized::Error,
    )
    .expect("a data-driven file");
    assert!(loaded.is_valid(), "{:?}", loaded.reports());
    let plan = Plan::new(loaded.cases());

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let summary = run_plan(&plan, &connectors, &RunOptions::default(), tx).await;
    while let Ok(event) = rx.try_recv() {
        if let Event::UnitFinished(unit) = event {
            println!(
                "{}: {} ({} of {} samples passed)",
                unit.unit.label(),
                unit.verdict,
                unit.tally.passed,
                unit.tally.total()
            );
        }
    }
    println!(
        "{} passed, {} failed, {} errored",
        summary.passed, summary.failed, summary.errored
    );
}
