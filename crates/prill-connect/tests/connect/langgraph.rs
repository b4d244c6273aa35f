//! `LanggraphServer` against the fake LangGraph server: a run's streamed states read
//! into typed messages, the request as the API takes it, and every way a run errors.

use std::time::Duration;

use prill_connect::langgraph::{ApiKey, LanggraphServer, key_from_env};
use prill_connect::{ConnectError, HttpOptions, Url};
use prill_target::graph::{GraphMessage, GraphRequest, GraphServer};
use prill_target::model::ChatMessage;
use prill_testkit::langgraph::{Call, FakeLanggraph, GraphScript, assistant_id};
use serde_json::json;

fn client(fake: &FakeLanggraph, key: Option<&str>) -> LanggraphServer {
    let url = Url::parse(&fake.url()).unwrap();
    let key = key.map(|k| ApiKey::new("LANGGRAPH_API_KEY", k));
    LanggraphServer::new(url, key, "LANGGRAPH_API_KEY", &HttpOptions::default()).unwrap()
}

fn request(assistant: &str) -> GraphRequest {
    GraphRequest {
        assistant_id: assistant.into(),
        system: Some("Be brief.".into()),
        messages: vec![ChatMessage::user("Find me a laptop")],
        configurable: json!({"model": "gpt-4o"}).as_object().cloned(),
        recursion_limit: Some(7),
        timeout: Some(Duration::from_secs(20)),
    }
}

fn react() -> GraphScript {
    GraphScript::default()
        .call(vec![Call::new(
            "search",
            json!({"query": "laptop"}),
            json!({"hits": 3}),
        )])
        .call(vec![
            Call::new("price", json!({"id": 1}), json!(999)),
            Call::failing("stock", json!({"id": 1}), "warehouse offline"),
        ])
        .answer("The X1 costs 999.")
}

#[tokio::test]
async fn a_run_streams_its_states_and_the_last_is_read_into_messages() {
    let fake = FakeLanggraph::start().await;
    fake.expect_key("lg-key-123456").script(react());
    let run = client(&fake, Some("lg-key-123456"))
        .run(&request("agent"))
        .await
        .unwrap();
    assert!(run.failure.is_none());
    assert!(run.run_id.is_some());
    let kinds: Vec<&str> = run
        .messages
        .iter()
        .map(|m| match m {
            GraphMessage::Human { .. } => "human",
            GraphMessage::System { .. } => "system",
            GraphMessage::Ai(_) => "ai",
            GraphMessage::Tool(_) => "tool",
            GraphMessage::Other { .. } => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["system", "human", "ai", "tool", "ai", "tool", "tool", "ai"]
    );
    let GraphMessage::Ai(second) = &run.messages[4] else {
        panic!()
    };
    assert_eq!(second.tool_calls.len(), 2, "parallel calls in one turn");
    assert_eq!(second.tool_calls[1].name, "stock");
    let GraphMessage::Tool(stock) = &run.messages[6] else {
        panic!()
    };
    assert_eq!(
        Some(stock.call_id.as_str()),
        second.tool_calls[1].id.as_deref()
    );
    assert!(stock.is_error);
    let GraphMessage::Ai(last) = &run.messages[7] else {
        panic!()
    };
    assert_eq!(last.text, "The X1 costs 999.");
    assert!(last.usage.unwrap().input.is_some());
    assert_eq!(run.raw_messages.len(), 8);
    assert!(run.events >= 6);
    // The nodes as they ran, from the `updates` stream: two tool turns, then the answer.
    assert_eq!(run.steps, ["agent", "tools", "agent", "tools", "agent"]);

    let requests = fake.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths[0], "/threads");
    assert_eq!(paths[1], format!("/threads/{}/runs/stream", run.thread_id));
    assert_eq!(requests[1].header("x-api-key"), Some("lg-key-123456"));
    let body = &fake.runs()[0];
    assert_eq!(body["assistant_id"], "agent");
    assert_eq!(body["stream_mode"], json!(["values", "updates"]));
    assert_eq!(body["config"]["recursion_limit"], 7);
    assert_eq!(body["config"]["configurable"], json!({"model": "gpt-4o"}));
    assert_eq!(
        body["input"]["messages"][0],
        json!({"type": "system", "content": "Be brief."})
    );
}

#[tokio::test]
async fn an_assistant_is_found_by_its_id_too() {
    let fake = FakeLanggraph::start().await;
    let run = client(&fake, None)
        .run(&request(&assistant_id("agent")))
        .await
        .unwrap();
    let Some(GraphMessage::Ai(last)) = run.messages.last() else {
        panic!()
    };
    assert_eq!(last.text, "ok");
}

#[tokio::test]
async fn a_missing_assistant_lists_the_servers_with_a_did_you_mean() {
    let fake = FakeLanggraph::start().await;
    fake.graphs(&["agent", "researcher"]);
    let err = client(&fake, None)
        .run(&request("reseacher"))
        .await
        .unwrap_err();
    assert!(matches!(err, ConnectError::Config { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("has no assistant or graph `reseacher`"),
        "{message}"
    );
    assert!(message.contains("graph `agent`"), "{message}");
    assert!(message.contains("did you mean `researcher`?"), "{message}");
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.path == "/assistants/search")
    );
}

#[tokio::test]
async fn a_refused_key_names_the_variable_read_and_never_the_key() {
    let fake = FakeLanggraph::start().await;
    fake.expect_key("right-key-000");
    let err = client(&fake, Some("wrong-key-999"))
        .run(&request("agent"))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, ConnectError::Status { status: 401, .. }),
        "{err:?}"
    );
    assert!(message.contains("check LANGGRAPH_API_KEY"), "{message}");
    assert!(!message.contains("wrong-key-999"), "{message}");
    let (key, read) = key_from_env(None, |_| None);
    let url = Url::parse(&fake.url()).unwrap();
    let none = LanggraphServer::new(url, key, read, &HttpOptions::default()).unwrap();
    let message = none.run(&request("agent")).await.unwrap_err().to_string();
    assert!(message.contains("Missing API key"), "{message}");
    assert!(message.contains("(none is set)"), "{message}");
}

#[tokio::test]
async fn an_error_event_is_a_failure_with_the_last_state() {
    let fake = FakeLanggraph::start().await;
    fake.script(
        GraphScript::default()
            .call(vec![Call::new("search", json!({}), json!("x"))])
            .raise("ValueError", "the tool node broke"),
    );
    let run = client(&fake, None).run(&request("agent")).await.unwrap();
    let failure = run.failure.unwrap();
    assert_eq!(failure.to_string(), "ValueError: the tool node broke");
    assert_eq!(run.messages.len(), 4, "system, human, ai, tool");
}

#[tokio::test]
async fn the_recursion_limit_is_a_graph_recursion_error() {
    let fake = FakeLanggraph::start().await;
    fake.script(react());
    let mut req = request("agent");
    req.recursion_limit = Some(2);
    let run = client(&fake, None).run(&req).await.unwrap();
    let failure = run.failure.unwrap();
    assert!(failure.is_recursion_limit(), "{failure}");
    assert!(
        failure.message.contains("Recursion limit of 2"),
        "{failure}"
    );
}

#[tokio::test]
async fn a_cut_stream_or_one_without_state_breaks_the_protocol() {
    let fake = FakeLanggraph::start().await;
    fake.script(react().cut());
    let err = client(&fake, None)
        .run(&request("agent"))
        .await
        .unwrap_err();
    assert!(matches!(err, ConnectError::Protocol { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("ended before the run did, and the run's status is `running`"),
        "{err}"
    );
    fake.script(react().without_values());
    let err = client(&fake, None)
        .run(&request("agent"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no `values` event"), "{err}");
}

#[tokio::test]
async fn a_run_that_never_ends_times_out() {
    let fake = FakeLanggraph::start().await;
    fake.script(react().hang());
    let mut req = request("agent");
    req.timeout = Some(Duration::from_millis(300));
    let err = client(&fake, None).run(&req).await.unwrap_err();
    assert!(matches!(err, ConnectError::Timeout { .. }), "{err:?}");
    assert!(
        fake.requests()[1].header("x-api-key").is_none(),
        "no key, no header"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_unreachable() {
    let fake = FakeLanggraph::start().await;
    let url = Url::parse(&fake.url()).unwrap();
    drop(fake);
    let options = HttpOptions {
        retry: prill_connect::RetryPolicy::never(),
        ..HttpOptions::default()
    };
    let server = LanggraphServer::new(url, None, "LANGGRAPH_API_KEY", &options).unwrap();
    let err = server.run(&request("agent")).await.unwrap_err();
    assert!(matches!(err, ConnectError::Unreachable { .. }), "{err:?}");
}

/// Posts `body` to the fake over a plain socket; the status and the body of the answer.
async fn post(fake: &FakeLanggraph, path: &str, body: &serde_json::Value) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = fake.url().trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let body = body.to_string();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer[9..12].parse().unwrap();
    (status, answer)
}

#[tokio::test]
async fn the_fake_refuses_fields_the_api_does_not_define() {
    let fake = FakeLanggraph::start().await;
    let (status, answer) = post(&fake, "/threads", &json!({})).await;
    assert_eq!(status, 200);
    let id = answer
        .split("\"thread_id\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let path = format!("/threads/{id}/runs/stream");
    let (status, answer) = post(
        &fake,
        &path,
        &json!({"assistant_id": "agent", "stream": true}),
    )
    .await;
    assert_eq!(status, 422);
    assert!(answer.contains("unknown field `stream`"), "{answer}");
    let (status, _) = post(
        &fake,
        &path,
        &json!({"assistant_id": "agent", "config": {"recursion_limit": "7"}}),
    )
    .await;
    assert_eq!(status, 422);
    let (status, _) = post(&fake, "/threads", &json!({"metadata": []})).await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn a_stream_that_closes_without_end_is_settled_by_the_runs_status() {
    let fake = FakeLanggraph::start().await;
    fake.script(react());
    let run = client(&fake, None).run(&request("agent")).await.unwrap();
    assert!(run.failure.is_none());
    let run_id = run.run_id.clone().unwrap();
    let asked: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET")
        .map(|r| r.path)
        .collect();
    assert_eq!(
        asked,
        [format!("/threads/{}/runs/{run_id}", run.thread_id)],
        "the run's status, once"
    );
    // A server that sends `end` is complete without asking.
    fake.script(react().with_end_event());
    let before = fake.requests().len();
    let run = client(&fake, None).run(&request("agent")).await.unwrap();
    assert!(run.failure.is_none());
    assert!(
        fake.requests()[before..].iter().all(|r| r.method == "POST"),
        "no status asked for"
    );
}
