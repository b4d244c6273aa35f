//! `prill-demo`'s replaying server (`prill serve --replay`, reached through
//! `prill-testkit`) answering the neuro-san client from cassette files written here with
//! the cassette API: recorded pace, a recorded break, recorded list and function
//! answers, and the sample rule.

use std::path::Path;
use std::time::{Duration, Instant};

use prill_connect::cassette::{Cassette, Latency, Normalizer};
use prill_connect::{AgentRequest, Connector, ErrorKind, HttpOptions, NeuroSanHttp, Url};
use prill_testkit::prill_demo::{DemoServer, Recordings};
use serde_json::json;

/// The line of a streamed message.
fn line(message: serde_json::Value) -> Vec<u8> {
    (json!({ "response": message }).to_string() + "\n").into_bytes()
}

/// Writes the cassette of a case to `dir`: `hello` answered in two lines 300 ms apart
/// (sample 2), `cut` broken off after one line, and the list and `function` answers.
fn write_cassette(dir: &Path) {
    let normalizer = Normalizer::default();
    let chat = |text: &str, sample| {
        let body = prill_connect::wire::chat_request(&AgentRequest::new(text));
        normalizer.request(
            "https",
            "POST",
            "https://recorded.example/api/v1/echo/streaming_chat",
            &body,
            Some(sample),
        )
    };
    let json_lines = vec![(
        "content-type".to_owned(),
        "application/json-lines".to_owned(),
    )];
    let mut cassette = Cassette::default();
    let final_line = line(json!({"type": "AGENT_FRAMEWORK", "text": "hello there",
                                 "chat_context": {"turns": 1}}));
    cassette.push_exchange(
        chat("hello", 2),
        200,
        json_lines.clone(),
        vec![
            (0, line(json!({"type": "AI", "text": "thinking"}))),
            (300, final_line),
        ],
    );
    cassette.push_exchange(
        chat("cut", 2),
        200,
        json_lines,
        vec![(0, line(json!({"type": "AI", "text": "half"})))],
    );
    let list =
        json!({"agents": [{"agent_name": "echo", "description": "recorded", "tags": ["t"]}]});
    let get = |path: &str| normalizer.request("http", "GET", path, &serde_json::Value::Null, None);
    cassette.push_exchange(
        get("http://h/api/v1/list"),
        200,
        vec![],
        vec![(0, list.to_string().into_bytes())],
    );
    let function = json!({"function": {"description": "says it back"}});
    cassette.push_exchange(
        get("http://h/api/v1/echo/function"),
        200,
        vec![],
        vec![(0, function.to_string().into_bytes())],
    );
    let file = dir.join("echo-abc.jsonl");
    for (i, exchange) in cassette.exchanges().iter().enumerate() {
        let mut text = serde_json::to_value(exchange).unwrap();
        if i == 1 {
            text["response"]["broke_off"] = json!("connection reset");
        }
        let exchange = serde_json::from_value(text).unwrap();
        Cassette::append(&file, &exchange).unwrap();
    }
}

#[tokio::test]
async fn recorded_answers_come_back_at_their_pace_and_break_where_they_broke() {
    let dir = tempfile::tempdir().unwrap();
    write_cassette(dir.path());
    let recordings = Recordings::read(dir.path(), Latency::Recorded).unwrap();
    assert_eq!(recordings.agents(), ["echo"]);
    let server = DemoServer::builder()
        .replay(recordings)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let client = NeuroSanHttp::new(
        Url::parse(&server.base_url()).unwrap(),
        &HttpOptions::default(),
    )
    .unwrap();

    // No x-prill-sample header: any sample's recording answers.
    let mut conversation = client.open("echo").await.unwrap();
    let started = Instant::now();
    let answer = conversation
        .send(&AgentRequest::new("hello"))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("hello there"));
    assert!(started.elapsed() >= Duration::from_millis(300));

    let mut conversation = client.open("echo").await.unwrap();
    let cut = conversation
        .send(&AgentRequest::new("cut"))
        .await
        .unwrap_err();
    assert_eq!(cut.kind(), ErrorKind::Protocol, "{cut}");

    // The recorded list and function, not made-up ones.
    let agents = client.list_agents().await.unwrap();
    assert_eq!(agents[0].description, "recorded");
    let function = client.describe("echo").await.unwrap();
    assert_eq!(function.description.as_deref(), Some("says it back"));
    server.shutdown().await;
}
