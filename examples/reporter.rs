//! A reporter of your own on the engine's event stream: it counts checks and prints
//! the slowest unit, next to the built-in JSON Lines reporter, both fed by one run.
//!
//! `cargo run -p prill-examples --example reporter`

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use prill_app::{Overrides, Session, Settings};
use prill_report::{Reporter, Reporters};
use prill_run::{Connectors, Event};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized, load_str};
use prill_target::{AgentRequest, AgentResponse, Registry, from_fn};

/// Counts checks by status and remembers the slowest unit.
#[derive(Default)]
struct Tally {
    checks: std::collections::BTreeMap<String, usize>,
    slowest: Option<(String, Duration)>,
}

impl Reporter for Tally {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        if let Event::UnitFinished(unit) = event {
            for check in unit
                .samples
                .iter()
                .flat_map(|s| &s.interactions)
                .flat_map(|i| &i.checks)
            {
                *self.checks.entry(check.status().to_string()).or_default() += 1;
            }
            if self
                .slowest
                .as_ref()
                .is_none_or(|(_, d)| unit.duration > *d)
            {
                self.slowest = Some((unit.unit.label(), unit.duration));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        println!("checks: {:?}", self.checks);
        if let Some((label, duration)) = &self.slowest {
            println!("slowest: {label} in {duration:?}");
        }
        Ok(())
    }
}

const SPEC: &str = r#"{ agent = echo, interactions = [ { text = "hello", response { text { keywords = ["hello"], not_keywords = ["bye"] } } } ] }"#;

#[tokio::main]
async fn main() {
    let echo = from_fn(|request: AgentRequest| async move {
        Ok(AgentResponse {
            text: request.text.clone(),
            ..AgentResponse::default()
        })
    });
    let loaded = load_str(
        Path::new("echo.hocon"),
        SPEC,
        &Env::default(),
        Unrecognized::Error,
    )
    .expect("a data-driven file");
    let plan = Plan::new(loaded.cases());
    // The settings layer gives the run options; the agent is ours.
    let settings = Settings::empty().with_overrides(Overrides::default());
    let mut session = Session::new(&settings, &Plan::default())
        .await
        .expect("settings");
    session.connectors = Connectors::new().with(
        Connection::Direct,
        Arc::new(Registry::new().with("echo", Arc::new(echo))),
    );
    let mut reporters = Reporters::new();
    reporters.push("tally", Tally::default());
    let ran = session.run_reported(&plan, reporters).await;
    println!("{} passed", ran.summary.passed);
}
