//! The MCP endpoint.

use http::{Method, StatusCode};
use prill_demo::FAULT_HEADER;
use serde_json::{Value, json};

use crate::common::{Client, Reply, start};

const VERSION: (&str, &str) = ("mcp-protocol-version", "2025-06-18");

async fn rpc(client: &mut Client, message: &Value, headers: &[(&str, &str)]) -> Reply {
    client
        .fetch(Method::POST, "/mcp", &message.to_string(), headers)
        .await
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn initialize_then_call_a_tool() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});
    let reply = rpc(&mut client, &init, &[]).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let body = reply.json();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], "1", "neuro-san echoes ids as strings");
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
    assert!(body["result"]["capabilities"]["tools"].is_object());
    assert_eq!(body["result"]["serverInfo"]["name"], "prill-demo");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = rpc(&mut client, &initialized, &[VERSION]).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    assert!(reply.body.is_empty());

    let list = rpc(
        &mut client,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        &[VERSION],
    )
    .await;
    let tools = list.json()["result"]["tools"]
        .as_array()
        .expect("tools")
        .clone();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        ["echo", "flaky", "math_guy", "music_nerd_pro", "slow"]
    );
    for tool in &tools {
        assert_eq!(tool["inputSchema"]["required"], json!(["user_message"]));
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
    }

    let arguments = json!({"user_message": {"type": "HUMAN", "text": "multiply"}, "sly_data": {"x": 847, "y": 23}});
    let reply = rpc(&mut client, &call(3, "math_guy", arguments), &[VERSION]).await;
    assert_eq!(reply.status, StatusCode::OK);
    let result = &reply.json()["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "Check sly_data['equals'] for the result"}])
    );
    assert_eq!(
        result["structuredContent"]["sly_data"]["equals"].as_f64(),
        Some(19481.0)
    );
    assert!(result["structuredContent"]["chat_context"]["chat_histories"].is_array());
    server.shutdown().await;
}

#[tokio::test]
async fn a_conversation_carries_its_chat_context_over_mcp() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let first = json!({"user_message": {"type": "HUMAN", "text": "Who did Yellow Submarine?"}});
    let reply = rpc(&mut client, &call(1, "music_nerd_pro", first), &[VERSION]).await;
    let result = reply.json()["result"].clone();
    assert_eq!(
        result["structuredContent"]["structure"]["running_cost"].as_f64(),
        Some(3.0)
    );
    let chat_context = result["structuredContent"]["chat_context"].clone();
    let second = json!({"user_message": {"type": "HUMAN", "text": "Where were they from?"}, "chat_context": chat_context});
    let reply = rpc(&mut client, &call(2, "music_nerd_pro", second), &[VERSION]).await;
    let result = &reply.json()["result"];
    assert!(
        result["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Liverpool"))
    );
    assert_eq!(
        result["structuredContent"]["structure"]["running_cost"].as_f64(),
        Some(6.0)
    );

    // Older clients send {"input": text}.
    let reply = rpc(
        &mut client,
        &call(3, "echo", json!({"input": "hi"})),
        &[VERSION],
    )
    .await;
    assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
    server.shutdown().await;
}

#[tokio::test]
async fn mcp_errors() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let reply = rpc(
        &mut client,
        &call(1, "nobody", json!({"user_message": {"text": "x"}})),
        &[VERSION],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json()["error"]["code"], -32602);
    assert_eq!(reply.json()["id"], "1");

    let reply = rpc(
        &mut client,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        &[("mcp-protocol-version", "1999-01-01")],
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"]["code"], -32600);

    let reply = client.fetch(Method::POST, "/mcp", "{nope", &[]).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"]["code"], -32700);

    let reply = rpc(
        &mut client,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read"}),
        &[VERSION],
    )
    .await;
    assert_eq!(reply.json()["error"]["code"], -32601);

    let reply = rpc(
        &mut client,
        &call(4, "echo", json!({"user_message": {}})),
        &[VERSION],
    )
    .await;
    assert_eq!(reply.json()["result"]["isError"], true);

    let reply = rpc(
        &mut client,
        &call(5, "echo", json!({"user_message": {"text": "x"}})),
        &[VERSION, (FAULT_HEADER, "500")],
    )
    .await;
    assert_eq!(reply.status, StatusCode::INTERNAL_SERVER_ERROR);

    // Faults leave the handshake alone.
    let init = json!({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {}});
    let reply = rpc(&mut client, &init, &[(FAULT_HEADER, "500")]).await;
    assert_eq!(reply.status, StatusCode::OK);

    let reply = rpc(
        &mut client,
        &call(7, "echo", json!({"user_message": {"text": "x"}})),
        &[VERSION, (FAULT_HEADER, "malformed")],
    )
    .await;
    assert!(serde_json::from_slice::<Value>(&reply.body).is_err());
    let reply = rpc(
        &mut client,
        &call(8, "echo", json!({"user_message": {"text": "x"}})),
        &[VERSION, (FAULT_HEADER, "huge:1")],
    )
    .await;
    assert!(
        reply.json()["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.len() >= 1024 * 1024)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_waiting_tool_call_stops_when_its_client_leaves() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let message = call(
        1,
        "slow",
        json!({"user_message": {"text": "wait"}, "sly_data": {"delay_ms": 3_600_000}}),
    );
    let pending = tokio::spawn(async move {
        let _ = client
            .fetch(Method::POST, "/mcp", &message.to_string(), &[VERSION])
            .await;
    });
    crate::common::eventually("the call waits", || server.active_streams() == 1).await;
    pending.abort();
    let _ = pending.await;
    crate::common::eventually("the call is cancelled", || server.active_streams() == 0).await;

    let mut client = Client::plain(server.addr()).await;
    let quick = call(
        2,
        "slow",
        json!({"user_message": {"text": "wait"}, "sly_data": {"delay_ms": 10}}),
    );
    let reply = rpc(&mut client, &quick, &[VERSION]).await;
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "I waited 10 ms."
    );
    server.shutdown().await;
}
