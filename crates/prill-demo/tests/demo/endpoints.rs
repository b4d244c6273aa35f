//! The endpoints and the wire format of `streaming_chat`.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::{Client, eventually, only_line, start, within};

#[tokio::test]
async fn health_endpoints_answer_like_neuro_san() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let expected = format!(
        r#"{{"service": "neuro-san.Agent", "status": "ok", "versions": {{"prill-demo": "{}"}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    for path in ["/", "/healthz", "/readyz", "/livez"] {
        let reply = client.get(path).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(reply.text(), expected, "{path}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn list_names_every_agent() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let reply = client.get("/api/v1/list").await;
    assert_eq!(reply.status, StatusCode::OK);
    let agents = reply.json()["agents"].as_array().expect("agents").clone();
    let names: Vec<&str> = agents
        .iter()
        .map(|a| a["agent_name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        ["echo", "flaky", "math_guy", "music_nerd_pro", "slow"]
    );
    for agent in &agents {
        assert!(agent["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert!(agent["tags"].as_array().is_some_and(|t| !t.is_empty()));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn function_describes_an_agent_and_404s_an_unknown_one() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let reply = client.get("/api/v1/math_guy/function").await;
    assert_eq!(reply.status, StatusCode::OK);
    let function = &reply.json()["function"];
    assert!(
        function["description"]
            .as_str()
            .is_some_and(|d| d.contains("sly_data"))
    );
    assert_eq!(function["sly_data_schema"]["required"], json!(["x", "y"]));
    for agent in ["echo", "flaky", "music_nerd_pro", "slow"] {
        let reply = client.get(&format!("/api/v1/{agent}/function")).await;
        assert_eq!(reply.status, StatusCode::OK, "{agent}");
    }
    for path in [
        "/api/v1/nobody/function",
        "/api/v1/deep/math_guy/function",
        "/api/v1//function",
    ] {
        let reply = client.get(path).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
        assert!(reply.body.is_empty());
    }
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_agents_and_paths_are_404_with_an_empty_body() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let request = json!({"user_message": {"type": "HUMAN", "text": "hi"}});
    for agent in ["nobody", "deep/math_guy", "math_guy/extra"] {
        let reply = client.chat(agent, &request).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{agent}");
        assert!(reply.body.is_empty(), "{agent}");
    }
    assert_eq!(client.get("/nowhere").await.status, StatusCode::NOT_FOUND);
    let reply = client.get("/api/v1/echo/streaming_chat").await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    // A percent-encoded name is decoded.
    let reply = client.chat("ech%6F", &request).await;
    assert_eq!(reply.status, StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_json_is_a_400() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    for body in ["{not json", "[1, 2]", ""] {
        let reply = client
            .fetch(Method::POST, "/api/v1/echo/streaming_chat", body, &[])
            .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body:?}");
        assert_eq!(reply.text(), r#"{"error": "Invalid JSON format"}"#);
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_request_without_text_gets_one_empty_object() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    for request in [
        json!({}),
        json!({"user_message": {"type": "HUMAN", "text": null}}),
    ] {
        let reply = client.chat("echo", &request).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.text(), "{}\n");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn minimal_is_exactly_one_final_line() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let request = json!({
        "user_message": {"type": "HUMAN", "text": "multiply"},
        "sly_data": {"x": 847, "y": 23},
        "chat_filter": {"chat_filter_type": "MINIMAL"}
    });
    let reply = client.chat("math_guy", &request).await;
    assert_eq!(reply.header("content-type"), Some("application/json-lines"));
    assert_eq!(reply.header("transfer-encoding"), Some("chunked"));
    assert!(reply.text().ends_with("}\n"));
    // Python's json.dumps separators.
    assert!(
        reply.text().starts_with(r#"{"response": {"type": "AGENT_FRAMEWORK", "text": "Check sly_data['equals'] for the result", "chat_context": {"#),
        "{}",
        reply.text()
    );
    let line = only_line(&reply);
    let keys: Vec<&String> = line.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["response"]);
    let response = line["response"].as_object().expect("a message");
    let keys: Vec<&str> = response.keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "text", "chat_context", "sly_data"]);

    // An absent or unknown filter is MINIMAL too.
    for filter in [None, Some(json!({"chat_filter_type": "SOMETHING"}))] {
        let mut request = json!({"user_message": {"type": "HUMAN", "text": "hello"}});
        if let Some(filter) = filter {
            request["chat_filter"] = filter;
        }
        let line = only_line(&client.chat("echo", &request).await);
        assert_eq!(line["response"]["type"], "AGENT_FRAMEWORK");
        assert!(line.get("request").is_none());
    }
    server.shutdown().await;
}

#[tokio::test]
async fn maximal_streams_every_message_with_the_request_echoed() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let request = json!({
        "user_message": {"type": "HUMAN", "text": "multiply"},
        "sly_data": {"x": 847, "y": 23},
        "chat_filter": {"chat_filter_type": "MAXIMAL"}
    });
    let reply = client.chat("math_guy", &request).await;
    assert_eq!(reply.status, StatusCode::OK);
    let raw_lines: Vec<&str> = reply.text().lines().collect();
    assert!(raw_lines.contains(&r#"{"response": {"type": "AGENT_PROGRESS", "text": ""}}"#));
    let lines = reply.lines();
    assert_eq!(lines.len(), 7, "{}", reply.text());
    for line in &lines {
        if line["response"]["type"] != "AGENT_PROGRESS" {
            assert_eq!(
                line["request"], request,
                "every line but the heartbeat echoes the request"
            );
        }
    }
    let message = |i: usize| &lines[i]["response"];
    let front = json!([{"tool": "MathGuy", "instantiation_index": 1}]);
    let tool = json!([{"tool": "MathGuy", "instantiation_index": 1}, {"tool": "Calculator", "instantiation_index": 1}]);
    assert_eq!(message(0)["type"], "AI");
    assert_eq!(message(0)["origin"], front);
    assert_eq!(message(1)["type"], "AGENT");
    assert_eq!(message(1)["origin"], tool);
    assert_eq!(message(1)["text"], "Received arguments:");
    assert_eq!(
        message(1)["structure"],
        json!({"tool_start": true, "tool_args": {"operation": "multiply", "x": 847, "y": 23}})
    );
    assert_eq!(message(3)["text"], "Got result:");
    assert_eq!(
        message(3)["structure"],
        json!({"tool_end": true, "tool_output": {"equals": 19481.0}})
    );
    assert_eq!(message(4)["type"], "AI");
    assert_eq!(
        message(4)["text"],
        "Check sly_data['equals'] for the result"
    );
    let tokens = &message(5)["structure"];
    assert_eq!(message(5)["origin"], front);
    let total = tokens["total_tokens"].as_u64().expect("total_tokens");
    let prompt = tokens["prompt_tokens"].as_u64().expect("prompt_tokens");
    let completion = tokens["completion_tokens"]
        .as_u64()
        .expect("completion_tokens");
    assert_eq!(total, prompt + completion);
    let last = message(6);
    assert_eq!(last["type"], "AGENT_FRAMEWORK");
    assert!(last.get("origin").is_none());
    assert_eq!(last["sly_data"], json!({"equals": 19481.0}));
    server.shutdown().await;
}

#[tokio::test]
async fn lines_are_streamed_as_they_are_ready_and_a_disconnect_stops_the_work() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let request = json!({
        "user_message": {"type": "HUMAN", "text": "take your time"},
        "sly_data": {"delay_ms": 3_600_000},
        "chat_filter": {"chat_filter_type": "MAXIMAL"}
    });
    let response = client
        .send(
            Method::POST,
            "/api/v1/slow/streaming_chat",
            &request.to_string(),
            &[],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut received = Vec::new();
    // The three lines before the hour-long wait arrive while the stream is still open.
    while received.iter().filter(|b| **b == b'\n').count() < 3 {
        let frame = within(http_body_util::BodyExt::frame(&mut body))
            .await
            .expect("a frame")
            .expect("no error");
        received.extend_from_slice(&frame.into_data().expect("data"));
    }
    let text = String::from_utf8(received).expect("utf-8");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines[1]["response"]["text"], "Received arguments:");
    assert_eq!(lines[2]["response"]["type"], "AGENT_PROGRESS");
    assert_eq!(server.active_streams(), 1);
    drop(body);
    drop(client);
    eventually("the slow stream stops", || server.active_streams() == 0).await;
    server.shutdown().await;
}

#[tokio::test]
async fn keep_alive_serves_many_requests_on_one_connection() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    for i in 0..50 {
        let text = format!("message {i}");
        let line = only_line(
            &client
                .chat("echo", &json!({"user_message": {"text": text}}))
                .await,
        );
        assert_eq!(line["response"]["text"], text);
    }
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_the_port_and_dropping_a_server_stops_it() {
    let server = start().await;
    let addr = server.addr();
    let mut client = Client::plain(addr).await;
    assert_eq!(client.get("/healthz").await.status, StatusCode::OK);
    within(server.shutdown()).await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());

    let server = start().await;
    let addr = server.addr();
    drop(server);
    let mut refused = false;
    let start = std::time::Instant::now();
    while start.elapsed() < crate::common::PATIENCE {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(refused, "a dropped server stops listening");
}

#[tokio::test]
async fn the_demo_model_answers_as_an_openai_chat_completion() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let request = json!({
        "model": "demo-echo",
        "stream": true,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "Hello, Prill"},
        ],
    });
    let reply = client.post("/v1/chat/completions", &request).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let completion = reply.json();
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["model"], "demo-echo");
    assert_eq!(
        completion["choices"][0]["message"],
        json!({"role": "assistant", "content": "You said: Hello, Prill"})
    );
    assert_eq!(completion["choices"][0]["finish_reason"], "stop");
    assert_eq!(completion["usage"]["completion_tokens"], 4);

    let reply = client
        .fetch(Method::POST, "/v1/chat/completions", "not json", &[])
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"]["type"], "invalid_request_error");
    let reply = client.get("/v1/chat/completions").await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    server.shutdown().await;
}
