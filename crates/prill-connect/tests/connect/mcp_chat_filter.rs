//! neuro-san's MCP endpoint takes only the upper-case filter names (its http endpoint
//! upper-cases whatever it gets). A file may write `chat_filter: maximal`; Prill sends
//! `MAXIMAL`. The scripted endpoint here refuses anything else, as neuro-san's does (the
//! real one is in `crates/prill-cli/tests/neuro_san_real`, file
//! `pass-maximal-lowercase.hocon`).

use std::path::Path;

use prill_connect::{AgentRequest, Connector, HttpOptions, NeuroSanMcp};
use prill_spec::{Env, Unrecognized};
use serde_json::{Value, json};

use crate::server::{Reply, Server};

fn reply(body: Value) -> Reply {
    Reply::Status(
        200,
        vec![("Content-Type", "application/json".into())],
        body.to_string().into_bytes(),
    )
}

#[tokio::test]
async fn a_lowercase_chat_filter_in_a_file_goes_out_upper_cased() {
    let server = Server::start(|_, request| {
        let body = request.json();
        match body["method"].as_str() {
            Some("initialize") => reply(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}}})),
            Some("notifications/initialized") => Reply::Status(202, vec![], vec![]),
            Some("tools/call") => {
                let filter = &body["params"]["arguments"]["chat_filter"]["chat_filter_type"];
                if filter == "MINIMAL" || filter == "MAXIMAL" {
                    reply(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                        "content": [{"type": "text", "text": "ok"}], "isError": false}}))
                } else {
                    reply(json!({"jsonrpc": "2.0", "id": body["id"],
                        "error": {"code": -32602, "message": format!("invalid chat_filter_type {filter}")}}))
                }
            }
            _ => Reply::Status(400, vec![], b"unexpected".to_vec()),
        }
    })
    .await;
    let loaded = prill_spec::load_str(
        Path::new("lower.hocon"),
        r#"{"agent": "calculator", "interactions": [{"text": "add", "chat_filter": "maximal"}]}"#,
        &Env::default(),
        Unrecognized::Error,
    )
    .unwrap();
    let case = loaded.cases().remove(0);
    let mut request = AgentRequest::new("add");
    request.chat_filter = case.interactions[0].chat_filter;

    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("calculator").await.unwrap();
    let answer = conversation.send(&request).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("ok"));
    let call = server.requests().pop().unwrap().json();
    assert_eq!(
        call["params"]["arguments"]["chat_filter"],
        json!({"chat_filter_type": "MAXIMAL"})
    );
}
