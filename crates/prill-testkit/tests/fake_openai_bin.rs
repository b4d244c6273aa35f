//! The `fake-openai` binary: it starts, prints its url first, and answers chat
//! completions, whole and streamed, with the configured text and usage.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

/// A running `fake-openai`; killed when dropped.
struct Fake {
    child: Child,
    addr: String,
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Fake {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-openai"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("fake-openai starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("a stdout"))
        .read_line(&mut line)
        .expect("a first line");
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|a| a.strip_suffix("/v1"))
        .unwrap_or_else(|| panic!("listening on http://ADDR/v1, got {line:?}"))
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    Fake { child, addr }
}

/// The whole answer (head and body) to one chat completion with `body`.
fn post(addr: &str, body: &str) -> String {
    let mut socket = TcpStream::connect(addr).expect("a connection");
    write!(
        socket,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("a request sent");
    let mut answer = String::new();
    socket.read_to_string(&mut answer).expect("an answer");
    answer
}

#[test]
fn answers_whole_and_streamed_with_the_configured_text_and_usage() {
    let fake = start(&["--latency-ms", "1", "--reply", "Lyon has 500000 people"]);
    let whole = post(
        &fake.addr,
        r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"How many?"}]}"#,
    );
    assert!(whole.starts_with("HTTP/1.1 200"), "{whole}");
    let body: serde_json::Value =
        serde_json::from_str(whole.split("\r\n\r\n").nth(1).expect("a body")).expect("JSON");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "Lyon has 500000 people"
    );
    assert_eq!(body["usage"]["completion_tokens"], 4);
    assert_eq!(body["usage"]["prompt_tokens"], 2);

    let streamed = post(
        &fake.addr,
        r#"{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"How many?"}]}"#,
    );
    assert!(streamed.starts_with("HTTP/1.1 200"), "{streamed}");
    assert!(streamed.contains("text/event-stream"), "{streamed}");
    let mut text = String::new();
    let mut usage = None;
    for event in streamed.lines().filter_map(|l| l.strip_prefix("data: ")) {
        if event == "[DONE]" {
            continue;
        }
        let chunk: serde_json::Value = serde_json::from_str(event).expect("a JSON chunk");
        if let Some(piece) = chunk["choices"][0]["delta"]["content"].as_str() {
            text.push_str(piece);
        }
        if !chunk["usage"].is_null() {
            usage = Some(chunk["usage"].clone());
        }
    }
    assert_eq!(text, "Lyon has 500000 people");
    assert_eq!(usage.expect("a usage chunk")["total_tokens"], 6);
    assert!(streamed.contains("data: [DONE]"));
}

#[test]
fn the_default_reply_passes_the_benchmark_checks() {
    let fake = start(&[]);
    let whole = post(
        &fake.addr,
        r#"{"model":"m","messages":[{"role":"user","content":"q"}]}"#,
    );
    let body: serde_json::Value =
        serde_json::from_str(whole.split("\r\n\r\n").nth(1).expect("a body")).expect("JSON");
    let text = body["choices"][0]["message"]["content"]
        .as_str()
        .expect("a text");
    assert!(text.contains("Paris") && !text.contains("London"));
    assert!(text.chars().any(|c| c.is_ascii_digit()));
}

#[test]
fn a_bad_argument_is_refused() {
    let status = Command::new(env!("CARGO_BIN_EXE_fake-openai"))
        .arg("--nope")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("fake-openai runs");
    assert_eq!(status.code(), Some(2));
}
