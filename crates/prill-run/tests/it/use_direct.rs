//! A case's `use_direct` travels with every request of its conversations, so that a
//! `direct` connection to a neuro-san network (Prill's bridge) can hand it to neuro-san.

use std::path::Path;
use std::sync::Arc;

use prill_run::{Connectors, RunOptions, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use prill_target::{AgentRequest, AgentResponse, Registry, from_fn};
use serde_json::json;
use tokio::sync::mpsc;

async fn passes(use_direct: bool) -> bool {
    let text = format!(
        r#"{{"agent": "probe", "use_direct": {use_direct}, "interactions": [
            {{"text": "one", "response": {{"sly_data": {{"use_direct": {{"value": true}}}}}}}},
            {{"text": "two", "response": {{"sly_data": {{"use_direct": {{"value": true}}}}}}}}
        ]}}"#
    );
    let loaded = prill_spec::load_str(
        Path::new("probe.json"),
        &text,
        &Env::default(),
        Unrecognized::Error,
    )
    .unwrap();
    let plan = Plan::new(loaded.cases());
    let probe = from_fn(|request: AgentRequest| async move {
        Ok(AgentResponse {
            text: Some("ok".into()),
            sly_data: Some(json!({"use_direct": request.use_direct})),
            chat_context: Some(json!({})),
            ..AgentResponse::default()
        })
    });
    let registry = Registry::new().with("probe", Arc::new(probe));
    let connectors = Connectors::new().with(Connection::Direct, Arc::new(registry));
    let (tx, _rx) = mpsc::unbounded_channel();
    let summary = run_plan(&plan, &connectors, &RunOptions::default(), tx).await;
    summary.passed == 1
}

#[tokio::test]
async fn use_direct_reaches_every_request() {
    assert!(passes(true).await);
    assert!(
        !passes(false).await,
        "the probe sees false when the case says so"
    );
}
