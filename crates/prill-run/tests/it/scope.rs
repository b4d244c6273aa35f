//! Every sample runs in its `SampleScope`: an agent reached from a sample sees the
//! case's stable id (the report's `UnitId.case_id`), its name and the sample's index,
//! which is what cassettes record and replay by (`docs/cassettes.md`).

use std::path::Path;
use std::sync::Arc;

use prill_run::events::{Event, UnitReport};
use prill_run::{Connectors, RunOptions, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use prill_target::scope::current;
use prill_target::{AgentRequest, AgentResponse, Registry, from_fn};
use tokio::sync::mpsc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_sees_the_case_id_of_the_report_and_its_sample_index() {
    let text = r#"agent = a, connections = [direct], success_ratio = "3/3"
        interactions = [{ text = hi, response.text.keywords = "/" }, { text = again, response.text.keywords = "/" }]"#;
    let loaded = prill_spec::load_str(
        Path::new("scoped.hocon"),
        text,
        &Env::default(),
        Unrecognized::Error,
    )
    .unwrap();
    assert!(loaded.is_valid(), "{:?}", loaded.outcome);
    let plan = Plan::new(loaded.cases());
    let agent = from_fn(|_request: AgentRequest| async move {
        let scope = current().expect("the sample's scope");
        Ok(AgentResponse {
            text: Some(format!("{}/{}/{}", scope.case, scope.name, scope.sample)),
            ..AgentResponse::default()
        })
    });
    let connectors = Connectors::new().with(
        Connection::Direct,
        Arc::new(Registry::new().with("a", Arc::new(agent))),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    run_plan(&plan, &connectors, &RunOptions::default(), tx).await;
    let mut units: Vec<UnitReport> = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::UnitFinished(unit) = event {
            units.push(unit);
        }
    }
    let unit = &units[0];
    assert_eq!(unit.samples.len(), 3, "{unit:#?}");
    for sample in &unit.samples {
        for interaction in &sample.interactions {
            assert_eq!(
                interaction.answer.as_deref(),
                Some(format!("{}/{}/{}", unit.unit.case_id, unit.unit.name, sample.index).as_str())
            );
        }
    }
    // Outside a sample there is no scope.
    assert!(current().is_none());
}
