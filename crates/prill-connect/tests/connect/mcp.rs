//! The MCP connector against the scripted server: the handshake, the headers that
//! follow it, the result mapping and the errors.

use prill_connect::{AgentRequest, Connector, ErrorKind, HttpOptions, NeuroSanMcp};
use serde_json::{Value, json};

use crate::server::{Reply, Request, Server};

fn reply(body: Value) -> Reply {
    Reply::Status(
        200,
        vec![("Content-Type", "application/json".into())],
        body.to_string().into_bytes(),
    )
}

/// A well-behaved MCP server whose `tools/call` answer is `call(request)`.
async fn mcp_server(call: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Server {
    Server::start(move |_, request| {
        let body = request.json();
        match body["method"].as_str() {
            Some("initialize") => Reply::Status(
                200,
                vec![
                    ("Content-Type", "application/json".into()),
                    ("Mcp-Session-Id", "session-7".into()),
                ],
                json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"}}})
                .to_string()
                .into_bytes(),
            ),
            Some("notifications/initialized") => Reply::Status(202, vec![], vec![]),
            Some("tools/call") => call(request),
            _ => Reply::Status(400, vec![], b"unexpected".to_vec()),
        }
    })
    .await
}

/// The error of a first request to `server`'s `math_guy`.
async fn first_error(server: &Server, options: &HttpOptions) -> prill_connect::ConnectError {
    let connector = NeuroSanMcp::new(server.base.clone(), options).unwrap();
    let mut conversation = connector.open("math_guy").await.unwrap();
    let request = AgentRequest::new("x");
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        conversation.send(&request),
    )
    .await
    .expect("the exchange waited too long")
    .unwrap_err()
}

#[tokio::test]
async fn handshake_once_then_tool_calls() {
    let server = mcp_server(|request| {
        let body = request.json();
        let text = body["params"]["arguments"]["user_message"]["text"].clone();
        reply(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
            "content": [{"type": "text", "text": format!("you said {}", text.as_str().unwrap())}],
            "structuredContent": {"structure": {"n": 1}, "chat_context": {"chat_histories": []},
                                  "sly_data": {"equals": 42}},
            "isError": false}}))
    })
    .await;
    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("math_guy").await.unwrap();
    let first = conversation
        .send(&AgentRequest::new("hi").with_metadata("user_id", "alice"))
        .await
        .unwrap();
    assert_eq!(first.text.as_deref(), Some("you said hi"));
    assert_eq!(first.structure, Some(json!({"n": 1})));
    assert_eq!(first.chat_context, Some(json!({"chat_histories": []})));
    assert_eq!(first.sly_data, Some(json!({"equals": 42})));
    assert_eq!(first.messages.len(), 1);
    assert_eq!(first.messages[0]["type"], json!("AGENT_FRAMEWORK"));

    let next = AgentRequest::new("again").with_chat_context(first.chat_context.clone());
    conversation.send(&next).await.unwrap();

    let requests = server.requests();
    let methods: Vec<Value> = requests
        .iter()
        .map(|r| r.json()["method"].clone())
        .collect();
    assert_eq!(
        methods,
        vec![
            json!("initialize"),
            json!("notifications/initialized"),
            json!("tools/call"),
            json!("tools/call")
        ]
    );
    assert!(requests.iter().all(|r| r.path == "/mcp"));
    assert_eq!(
        requests[0].json()["params"]["protocolVersion"],
        json!("2025-06-18")
    );
    assert_eq!(requests[0].header("mcp-protocol-version"), None);
    for later in &requests[1..] {
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-06-18"));
        assert_eq!(later.header("mcp-session-id"), Some("session-7"));
    }
    // Metadata travels as headers, the handshake included.
    for first_turn in &requests[..3] {
        assert_eq!(first_turn.header("user_id"), Some("alice"));
    }
    assert_eq!(requests[3].header("user_id"), None);
    assert!(
        requests[1].json().get("id").is_none(),
        "a notification has no id"
    );
    let call = requests[2].json();
    assert_eq!(call["params"]["name"], json!("math_guy"));
    assert_eq!(
        call["params"]["arguments"],
        json!({"user_message": {"type": "HUMAN", "text": "hi"}, "chat_filter": {"chat_filter_type": "MINIMAL"}})
    );
    assert_eq!(
        requests[3].json()["params"]["arguments"]["chat_context"],
        json!({"chat_histories": []})
    );
}

#[tokio::test]
async fn tool_errors_and_rpc_errors() {
    let server = mcp_server(|request| {
        let body = request.json();
        let agent = body["params"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        match agent.as_str() {
            "failing" => reply(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                "content": [{"type": "text", "text": "the agent fell over"}], "isError": true}})),
            "rpc" => reply(json!({"jsonrpc": "2.0", "id": body["id"],
                "error": {"code": -32603, "message": "internal trouble"}})),
            _ => reply(json!({"jsonrpc": "2.0", "id": body["id"],
                "error": {"code": -32602, "message": format!("Unknown tool: {agent}")}})),
        }
    })
    .await;
    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let send = |agent: &'static str| {
        let connector = connector.clone();
        async move {
            let mut conversation = connector.open(agent).await.unwrap();
            conversation
                .send(&AgentRequest::new("x"))
                .await
                .unwrap_err()
        }
    };
    let e = send("failing").await;
    assert_eq!(e.kind(), ErrorKind::Protocol);
    assert!(
        e.to_string()
            .ends_with("the tool call of `failing` failed: the agent fell over"),
        "{e}"
    );
    let e = send("rpc").await;
    assert!(
        e.to_string()
            .ends_with("tools/call failed with json-rpc error -32603: internal trouble"),
        "{e}"
    );
    let e = send("nobody").await;
    assert_eq!(e.kind(), ErrorKind::UnknownAgent);
    assert!(
        e.to_string()
            .starts_with("unknown agent `nobody` on http://127.0.0.1:"),
        "{e}"
    );
}

#[tokio::test]
async fn event_stream_answers_and_no_content() {
    let server = mcp_server(|request| {
        let body = request.json();
        let answer = json!({"jsonrpc": "2.0", "id": body["id"], "result": {"content": []}});
        Reply::Status(
            200,
            vec![("Content-Type", "text/event-stream".into())],
            format!("event: message\ndata: {answer}\n\n").into_bytes(),
        )
    })
    .await;
    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("quiet").await.unwrap();
    let response = conversation.send(&AgentRequest::new("x")).await.unwrap();
    assert_eq!(response.text, None);
    assert!(response.messages.is_empty());
}

#[tokio::test]
async fn a_cut_event_stream_is_a_protocol_error() {
    // The answer's event has no blank line after it: the stream ended mid-event, which
    // discards that event (the spec's rule), so the answer was cut short. A stream that
    // ends before the answer came is no answer either.
    for whole in [false, true] {
        let server = mcp_server(move |request| {
            let body = request.json();
            let answer = json!({"jsonrpc": "2.0", "id": body["id"], "result": {"content": [
                {"type": "text", "text": "cut"}]}});
            let note = json!({"jsonrpc": "2.0", "method": "notifications/message"});
            let stream = if whole {
                format!("event: message\ndata: {note}\n\n")
            } else {
                format!("event: message\ndata: {answer}\n")
            };
            Reply::Status(
                200,
                vec![("Content-Type", "text/event-stream".into())],
                stream.into_bytes(),
            )
        })
        .await;
        let e = first_error(&server, &HttpOptions::default()).await;
        assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
        let said = if whole {
            "the event stream holds no answer to the tools/call request"
        } else {
            "the event stream ended mid-event"
        };
        assert!(e.to_string().contains(said), "{e}");
    }
}

#[tokio::test]
async fn wrong_protocol_version_is_a_protocol_error() {
    let server = Server::start(|_, request| {
        let body = request.json();
        reply(json!({"jsonrpc": "2.0", "id": body["id"], "result": {"protocolVersion": "1999-01-01"}}))
    })
    .await;
    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("x").await.unwrap();
    let e = conversation
        .send(&AgentRequest::new("x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    assert!(e.to_string().contains("`1999-01-01`"), "{e}");
}

#[tokio::test]
async fn a_reply_with_another_id_is_a_protocol_error() {
    // A reply to some other request (a proxy mixing up connections, a server bug) is
    // never taken for this one's answer, in a JSON body or in an event stream.
    let answer = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": "someone else's answer"}],
            "structuredContent": {"chat_context": {}}}})
    };
    let server = mcp_server(move |request| {
        let id = request.json()["id"].as_u64().unwrap();
        reply(answer(json!(id + 40)))
    })
    .await;
    let e = first_error(&server, &HttpOptions::default()).await;
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(
        e.to_string().ends_with(
            "the answer to tools/call request 2 has `id` 42: it answers another request"
        ),
        "{e}"
    );

    let server = mcp_server(move |_| {
        let data = answer(json!("7"));
        Reply::Status(
            200,
            vec![("Content-Type", "text/event-stream".into())],
            format!("event: message\ndata: {data}\n\n").into_bytes(),
        )
    })
    .await;
    let e = first_error(&server, &HttpOptions::default()).await;
    assert!(e.to_string().contains("has `id` \"7\""), "{e}");

    // A reply without an id is no answer either; an error about a request the server
    // could not read (`"id": null`) is reported as that error.
    let server = mcp_server(|_| {
        reply(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}))
    })
    .await;
    let e = first_error(&server, &HttpOptions::default()).await;
    assert!(
        e.to_string()
            .ends_with("json-rpc error -32700: Parse error"),
        "{e}"
    );
}

#[tokio::test]
async fn structured_content_of_the_wrong_type_is_a_protocol_error() {
    let server = mcp_server(|request| {
        let body = request.json();
        reply(json!({"jsonrpc": "2.0", "id": body["id"], "result": {
            "content": [{"type": "text", "text": "42"}],
            "structuredContent": {"chat_context": ["not", "an", "object"]}}}))
    })
    .await;
    let e = first_error(&server, &HttpOptions::default()).await;
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("`chat_context`"), "{e}");
}

#[tokio::test]
async fn a_silent_server_times_out_by_default() {
    let server = Server::start(|_, _| Reply::Silent).await;
    let options = HttpOptions {
        timeout: Some(std::time::Duration::from_millis(500)),
        ..HttpOptions::default()
    };
    let e = first_error(&server, &options).await;
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().ends_with("within 500ms"), "{e}");
}

#[tokio::test]
async fn metadata_values_echoed_in_an_error_are_blanked() {
    const TOKEN: &str = "mcp-Rt52yU8iO1pA";
    // The handshake goes well; the call is refused with everything it was sent.
    let server = mcp_server(|request| {
        let mut text = String::from("refused:");
        for (name, value) in &request.headers {
            text.push_str(&format!(" {name}={value}"));
        }
        Reply::Status(500, vec![], text.into_bytes())
    })
    .await;
    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("math_guy").await.unwrap();
    let e = conversation
        .send(&AgentRequest::new("hi").with_metadata("authorization", format!("Bearer {TOKEN}")))
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Status, "{shown}");
    assert!(!shown.contains(TOKEN), "{shown}");
    assert!(
        shown.contains("authorization=Bearer <metadata authorization>"),
        "{shown}"
    );

    // A JSON-RPC error that quotes the token is blanked too.
    let server = mcp_server(|request| {
        let message = format!(
            "token refused: {}",
            request.header("authorization").unwrap()
        );
        reply(json!({"jsonrpc": "2.0", "id": request.json()["id"],
            "error": {"code": -32000, "message": message}}))
    })
    .await;
    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("math_guy").await.unwrap();
    let e = conversation
        .send(&AgentRequest::new("hi").with_metadata("authorization", format!("Bearer {TOKEN}")))
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert!(!shown.contains(TOKEN), "{shown}");
    assert!(
        shown.contains("token refused: Bearer <metadata authorization>"),
        "{shown}"
    );
}

/// The W3C trace context an interaction is sent (`traceparent` in its metadata) goes
/// as the `traceparent` header and in `params._meta`, where MCP's semantic conventions
/// carry it; without one, neither is sent.
#[tokio::test]
async fn a_tool_call_carries_the_trace_context_in_its_meta_and_headers() {
    use prill_target::otel::TRACEPARENT;
    const CONTEXT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let server = mcp_server(|request| {
        reply(
            json!({"jsonrpc": "2.0", "id": request.json()["id"], "result": {
            "content": [{"type": "text", "text": "ok"}], "isError": false}}),
        )
    })
    .await;
    let connector = NeuroSanMcp::new(server.base.clone(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("calculator").await.unwrap();
    let mut request = AgentRequest::new("add");
    request
        .metadata
        .insert(TRACEPARENT.to_owned(), CONTEXT.to_owned());
    conversation.send(&request).await.unwrap();
    conversation
        .send(&AgentRequest::new("add again"))
        .await
        .unwrap();
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
