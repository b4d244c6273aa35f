//! Nothing waits forever, and waiting out a retry is never latency: `prill run` against
//! a server that accepts connections and never answers ends with a timeout error, on
//! `prill.toml`'s default limit or on the case's own; and a Sentinel spec whose model
//! answered quickly after a 429 passes its `max_latency_ms`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;

use crate::support::{command, json, output_within, spawn, text};

/// A server on 127.0.0.1 that accepts every connection, reads what it is sent, and
/// never answers. Its thread ends with the test process.
fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || drain(stream));
        }
    });
    url
}

/// A neuro-san server on 127.0.0.1 whose every answer is the final line `{"text":
/// "42"}`, sent `delay` after the request arrived.
fn slow_server(delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer_late(stream, delay));
        }
    });
    url
}

fn answer_late(mut stream: TcpStream, delay: Duration) {
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    // The head, then as much body as it announces.
    let body_start = loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
        if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&request[..body_start]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while request.len() < body_start + length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    std::thread::sleep(delay);
    let line =
        "{\"response\": {\"type\": \"AGENT_FRAMEWORK\", \"text\": \"42\", \"chat_context\": {}}}\n";
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json-lines\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{line}",
        line.len()
    );
    let _ = stream.write_all(response.as_bytes());
}

fn drain(mut stream: TcpStream) {
    let mut sink = [0u8; 1024];
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
}

/// Runs `prill args...` in `dir` for at most `limit`; kills it and fails the test when
/// it is still running then. Returns the exit code and stderr.
fn run_within(dir: &Path, args: &[&str], limit: Duration) -> (Option<i32>, String) {
    let child = spawn(&mut command(dir, args));
    let out = output_within(child, limit)
        .unwrap_or_else(|| panic!("prill run still waiting after {limit:?}"));
    (out.status.code(), text(&out.stderr))
}

#[test]
fn a_server_that_accepts_and_goes_silent_ends_the_run_with_a_timeout_error() {
    let server = silent_server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        format!("server = \"{server}\"\ntimeout_in_seconds = 1\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("silent.yaml"),
        "agent: math_guy\nconnections: [http, mcp]\ninteractions:\n  - text: multiply\n    response: {text: {keywords: 42}}\n",
    )
    .unwrap();
    let (code, stderr) = run_within(
        dir.path(),
        &["run", "silent.yaml", "--json", "report.json"],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(3), "an error, not a failure: {stderr}");
    let report = json(&dir.path().join("report.json"));
    let units = report["units"].as_array().unwrap();
    assert_eq!(units.len(), 2);
    for unit in units {
        assert_eq!(unit["verdict"], "errored", "{unit}");
        let error = &unit["samples"][0]["interactions"][0]["error"];
        assert_eq!(error["kind"], "timeout", "{unit}");
        assert!(
            error["message"].as_str().unwrap().ends_with("within 1s"),
            "{error}"
        );
    }
}

/// Runs `case` (yaml) with `config` as prill.toml; returns the first interaction's error.
fn error_of_run(config: &str, case: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prill.toml"), config).unwrap();
    std::fs::write(dir.path().join("case.yaml"), case).unwrap();
    let (code, stderr) = run_within(
        dir.path(),
        &["run", "case.yaml", "--json", "report.json"],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(3), "{stderr}");
    json(&dir.path().join("report.json"))["units"][0]["samples"][0]["interactions"][0]["error"]
        .clone()
}

#[test]
fn an_agents_own_limit_and_the_idle_limit_come_from_prill_toml() {
    let server = silent_server();
    let case = "agent: math_guy\nconnections: http\ninteractions:\n  - text: multiply\n    response: {text: {keywords: 42}}\n";
    // The agent's own `timeout_in_seconds` wins over the default.
    let error = error_of_run(
        &format!(
            "timeout_in_seconds = 3600\n\n[agents.math_guy]\nurl = \"{server}\"\ntimeout_in_seconds = 1\n"
        ),
        case,
    );
    assert_eq!(error["kind"], "timeout", "{error}");
    assert!(
        error["message"].as_str().unwrap().ends_with("within 1s"),
        "{error}"
    );
    // The idle limit ends an interaction during which nothing arrived.
    let error = error_of_run(
        &format!(
            "server = \"{server}\"\ntimeout_in_seconds = 3600\nidle_timeout_in_seconds = 0.5\n"
        ),
        case,
    );
    assert_eq!(error["kind"], "timeout", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .ends_with("sent nothing for 500ms"),
        "{error}"
    );
    // A case's own limit wins over both.
    let error = error_of_run(
        &format!("server = \"{server}\"\ntimeout_in_seconds = 3600\n"),
        &format!("{case}    timeout_in_seconds: 0.5\n"),
    );
    assert_eq!(error["kind"], "timeout", "{error}");
    assert!(
        error["message"].as_str().unwrap().ends_with("within 500ms"),
        "{error}"
    );
}

#[test]
fn a_cases_own_limit_is_never_cut_short_by_the_default() {
    // The default is half a second; the agent takes one; the case allows ten.
    let server = slow_server(Duration::from_secs(1));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        format!("server = \"{server}\"\ntimeout_in_seconds = 0.5\n"),
    )
    .unwrap();
    let interactions = "interactions:\n  - text: multiply\n    response: {text: {keywords: 42}}\n";
    std::fs::write(
        dir.path().join("patient.yaml"),
        format!("agent: math_guy\nconnections: http\ntimeout_in_seconds: 10\n{interactions}"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("hasty.yaml"),
        format!("agent: math_guy\nconnections: http\n{interactions}"),
    )
    .unwrap();
    let (code, stderr) = run_within(
        dir.path(),
        &["run", "patient.yaml", "hasty.yaml", "--json", "report.json"],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(3), "{stderr}");
    let report = json(&dir.path().join("report.json"));
    let verdict = |file: &str| {
        report["units"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["unit"]["name"].as_str().unwrap().contains(file))
            .map(|u| u["verdict"].clone())
            .unwrap()
    };
    assert_eq!(verdict("patient"), "passed", "{report}");
    assert_eq!(verdict("hasty"), "errored", "{report}");
}

#[test]
fn a_quick_answer_after_a_429_is_quick() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.script(Reply::rate_limited(1));
    fake.script(Reply::text("Paris"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: capital\nmodel: gpt-4o-mini\nprovider: openai\ninputs: {query: Capital of France?}\nassertions:\n  - must_contain: Paris\n  - max_latency_ms: 500\n",
    )
    .unwrap();
    let out = command(dir.path(), &["run", "spec.yaml", "--json", "report.json"])
        .env("OPENAI_BASE_URL", fake.base_url())
        .env("OPENAI_API_KEY", "sk-fake")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(fake.requests().len(), 2, "the 429 was retried: {stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        json(&dir.path().join("report.json"))["units"][0]["verdict"],
        "passed"
    );
}
