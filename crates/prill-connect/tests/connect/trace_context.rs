//! The W3C trace context an interaction is sent (`traceparent` in its metadata) goes
//! over MCP as the `traceparent` header and in `params._meta`, where MCP's semantic
//! conventions carry it; without one, neither is sent.

use prill_connect::{AgentRequest, Connector, HttpOptions, NeuroSanMcp};
use prill_target::otel::TRACEPARENT;
use serde_json::{Value, json};

use crate::server::{Reply, Server};

fn reply(body: Value) -> Reply {
    Reply::Status(
        200,
        vec![("Content-Type", "application/json".into())],
        body.to_string().into_bytes(),
    )
}

const CONTEXT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

#[tokio::test]
async fn an_mcp_tool_call_carries_the_context_in_its_meta_and_headers() {
    let server = Server::start(|_, request| {
        let body = request.json();
        match body["method"].as_str() {
            Some("initialize") => reply(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}}})),
            Some("notifications/initialized") => Reply::Status(202, vec![], vec![]),
            Some("tools/call") => reply(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                "content": [{"type": "text", "text": "ok"}], "isError": false}})),
            _ => Reply::Status(400, vec![], b"unexpected".to_vec()),
        }
    })
    .await;
    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("calculator").await.unwrap();
    let mut request = AgentRequest::new("add");
    request
        .metadata
        .insert(TRACEPARENT.to_owned(), CONTEXT.to_owned());
    conversation.send(&request).await.unwrap();
    let plain = AgentRequest::new("add again");
    conversation.send(&plain).await.unwrap();

    let calls: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.json()["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].json()["params"]["_meta"][TRACEPARENT], CONTEXT);
    assert_eq!(calls[0].header(TRACEPARENT), Some(CONTEXT));
    assert!(calls[1].json()["params"].get("_meta").is_none());
    assert_eq!(calls[1].header(TRACEPARENT), None);
}
