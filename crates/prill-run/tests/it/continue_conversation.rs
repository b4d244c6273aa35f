//! `continue_conversation = false` ends the conversation *after* its interaction: that
//! interaction still gets the context before it, and the next one starts clean, with
//! only the ending interaction's own sly_data carried (`docs/running.md`).

use std::path::Path;
use std::sync::Arc;

use prill_run::{Connectors, RunOptions, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use prill_target::{AgentRequest, AgentResponse, Registry, from_fn};
use serde_json::json;
use tokio::sync::mpsc;

/// Runs three interactions, the second with `continue_conversation = second`, against
/// an agent that answers `<turns> <sly_data sent>`, where `turns` counts the
/// interactions of its conversation from the `chat_context` it is sent. Each interaction
/// expects the text in `expected`; returns whether the case passed.
async fn passes(second: bool, expected: [&str; 3]) -> bool {
    let [one, two, three] = expected.map(|e| serde_json::to_string(e).unwrap());
    let text = format!(
        r#"{{"agent": "counter", "interactions": [
            {{"text": "My name is Ada.", "response": {{"text": {{"value": {one}}}}}}},
            {{"text": "What is my name?", "continue_conversation": {second}, "sly_data": {{"x": 1}},
              "response": {{"text": {{"value": {two}}}}}}},
            {{"text": "What is my name?", "response": {{"text": {{"value": {three}}}}}}}
        ]}}"#
    );
    let loaded = prill_spec::load_str(
        Path::new("counter.json"),
        &text,
        &Env::default(),
        Unrecognized::Error,
    )
    .unwrap();
    assert!(loaded.is_valid(), "{:?}", loaded.reports());
    let plan = Plan::new(loaded.cases());
    let counter = from_fn(|request: AgentRequest| async move {
        let turns = request
            .chat_context
            .as_ref()
            .and_then(|c| c["turns"].as_u64())
            .unwrap_or(0)
            + 1;
        let sent = request
            .sly_data
            .map_or(json!(null), serde_json::Value::Object);
        Ok(AgentResponse {
            text: Some(format!("{turns} {sent}")),
            sly_data: Some(json!({"y": 2})),
            chat_context: Some(json!({"turns": turns})),
            ..AgentResponse::default()
        })
    });
    let registry = Registry::new().with("counter", Arc::new(counter));
    let connectors = Connectors::new().with(Connection::Direct, Arc::new(registry));
    let (tx, _rx) = mpsc::unbounded_channel();
    let summary = run_plan(&plan, &connectors, &RunOptions::default(), tx).await;
    summary.passed == 1
}

#[tokio::test]
async fn false_ends_the_conversation_after_its_interaction() {
    // The second interaction is still the first one's conversation; the third starts
    // clean, carrying only the second's own sly_data.
    assert!(passes(false, ["1 null", r#"2 {"x":1}"#, r#"1 {"x":1}"#]).await);
    // Not the reading where the second interaction itself starts clean.
    assert!(!passes(false, ["1 null", r#"1 {"x":1}"#, r#"2 {"x":1}"#]).await);
    // With true (the default) all three share one conversation, and the returned
    // sly_data merges into the carried one.
    assert!(passes(true, ["1 null", r#"2 {"x":1}"#, r#"3 {"x":1,"y":2}"#]).await);
}
