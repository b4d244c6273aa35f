//! `prill serve --demo` runs a real demo server on loopback until it is stopped;
//! `prill serve --replay DIR` serves recorded neuro-san agents the same way.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStderr, Stdio};
use std::time::Duration;

use crate::support::{command, runtime};

/// Kills the server when a test ends, however it ends.
pub(crate) struct Server(pub(crate) Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `prill serve --demo --port 0` in `dir` (with `dir/cache` as the cache folder)
/// and returns it with its stderr lines.
fn serve(dir: &std::path::Path) -> (Server, BufReader<ChildStderr>) {
    let mut child = command(dir, &["serve", "--demo", "--port", "0"])
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the prill binary runs");
    let stderr = child.stderr.take().expect("stderr is piped");
    (Server(child), BufReader::new(stderr))
}

/// The next stderr line (empty at the end).
pub(crate) fn next_line(stderr: &mut BufReader<ChildStderr>) -> String {
    let mut line = String::new();
    stderr.read_line(&mut line).expect("stderr is readable");
    line
}

/// A whole `Connection: close` GET over a std socket.
pub(crate) fn get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connects to the printed address");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .expect("writes");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("reads the response");
    response
}

#[test]
fn serve_demo_prints_its_url_first_and_answers_there() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, mut stderr) = serve(dir.path());
    let first = next_line(&mut stderr);
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the first line gives the url: {first:?}"));
    let addr = url
        .strip_prefix("http://127.0.0.1:")
        .map(|port| format!("127.0.0.1:{port}"));
    let addr = addr.unwrap_or_else(|| panic!("a loopback http url: {url}"));

    let mut rest = Vec::new();
    loop {
        let line = next_line(&mut stderr);
        assert!(!line.is_empty(), "the server stopped early: {rest:?}");
        let done = line.starts_with("press ctrl-c");
        rest.push(line);
        if done {
            break;
        }
    }
    let rest = rest.concat();
    assert!(
        rest.contains("agents: echo, flaky, math_guy, music_nerd_pro, slow"),
        "{rest}"
    );
    assert!(
        rest.contains(&format!("https on the same port: https://{addr}")),
        "{rest}"
    );
    // The certificate is in the cache folder, named by its port, and the line says where.
    let port = addr.rsplit(':').next().unwrap();
    let expected = dir.path().join(format!("cache/prill/demo-cert-{port}.pem"));
    let line = rest
        .lines()
        .find(|l| l.starts_with("self-signed certificate"))
        .unwrap_or_else(|| panic!("no certificate line in {rest}"));
    let printed = line.rsplit(": ").next().unwrap();
    assert_eq!(
        std::fs::canonicalize(printed).unwrap(),
        std::fs::canonicalize(&expected).unwrap(),
        "{line}"
    );
    assert!(line.contains(&format!("--ca-cert {printed}")), "{line}");
    let cert = std::fs::read_to_string(printed).expect("the certificate is written");
    assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(
        !dir.path().join(".prill").exists(),
        "nothing is written into the working directory"
    );

    let response = get(&addr, "/api/v1/list");
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    assert!(
        response.contains(r#""agent_name": "math_guy""#),
        "{response}"
    );
}

#[cfg(unix)]
#[test]
fn serve_demo_stops_gracefully_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, mut stderr) = serve(dir.path());
    while !next_line(&mut stderr).starts_with("press ctrl-c") {}
    let status = std::process::Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exit = server.0.wait().expect("the server exits");
    assert_eq!(exit.code(), Some(0));
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).expect("reads stderr");
    assert!(rest.contains("shutting down"), "{rest}");
}

#[test]
fn serve_without_demo_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = command(dir.path(), &["serve"])
        .output()
        .expect("the prill binary runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("say what to serve"), "{stderr}");
    assert!(stderr.contains("--demo"), "{stderr}");
    assert!(stderr.contains("--replay DIR"), "{stderr}");
}

#[test]
fn serve_on_a_busy_port_says_so_once_and_how_to_pick_another() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = command(dir.path(), &["serve", "--demo", "--port", &port])
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .stdin(Stdio::null())
        .output()
        .expect("the prill binary runs");
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one sentence: {stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: cannot serve on 127.0.0.1:{port}: the port is in use ("
        )),
        "{stderr}"
    );
    assert!(stderr.contains("`--port 0`"), "{stderr}");
    assert!(stderr.contains("`--port N`"), "{stderr}");
    // The OS's own words, once.
    assert_eq!(stderr.matches("os error").count(), 1, "{stderr}");
    assert!(!dir.path().join(".prill").exists());
    drop(busy);
}

/// A conversation of two turns with `echo` at `base`, over neuro-san's http protocol, as
/// sample 0: the answers (timings aside), and the requests sent.
async fn two_turns(base: &str) -> Vec<(prill_connect::AgentRequest, prill_connect::AgentResponse)> {
    use prill_connect::{AgentRequest, Connector, HttpOptions, NeuroSanHttp, Url};
    let connector = NeuroSanHttp::new(Url::parse(base).unwrap(), &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("echo").await.unwrap();
    let mut turns = Vec::new();
    let mut context = None;
    for text in ["hello", "and again"] {
        let request = AgentRequest::new(text)
            .with_metadata("x-prill-sample", "0")
            .with_chat_context(context.clone());
        let mut answer = conversation.send(&request).await.unwrap();
        context = answer.chat_context.clone();
        answer.timings = Default::default();
        turns.push((request, answer));
    }
    turns
}

#[test]
fn serve_replay_answers_a_neuro_san_client_with_the_recorded_answers() {
    use prill_connect::cassette::{Cassette, Normalizer};
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().join("cassettes");
    let runtime = runtime();

    // A real exchange with the demo's echo agent, written as the cassette of a case.
    let live = runtime.block_on(async {
        let server = prill_demo::DemoServer::builder()
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let turns = two_turns(&server.base_url()).await;
        server.shutdown().await;
        turns
    });
    assert_eq!(live[1].1.text.as_deref(), Some("and again"));
    let mut cassette = Cassette::default();
    for (at, (request, answer)) in live.iter().enumerate() {
        let recorded = Normalizer::default()
            .request(
                "http",
                "POST",
                "http://127.0.0.1:1/api/v1/echo/streaming_chat",
                &prill_connect::wire::chat_request(request),
                Some(0),
            )
            .in_case(Some("a1b2c3".to_owned()));
        let lines: Vec<(u64, Vec<u8>)> = answer
            .messages
            .iter()
            .map(|m| {
                let line = serde_json::json!({ "response": m }).to_string() + "\n";
                (10 * at as u64, line.into_bytes())
            })
            .collect();
        let headers = vec![(
            "content-type".to_owned(),
            "application/json-lines".to_owned(),
        )];
        cassette.push_exchange(recorded, 200, headers, lines);
    }
    for exchange in cassette.exchanges() {
        Cassette::append(&cassettes.join("echo-a1b2c3.jsonl"), exchange).unwrap();
    }

    let mut child = command(dir.path(), &["serve", "--replay"])
        .arg(&cassettes)
        .args(["--port", "0", "--replay-latency", "zero"])
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the prill binary runs");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let _server = Server(child);
    let first = next_line(&mut stderr);
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the first line gives the url: {first:?}"))
        .to_owned();
    let mut rest = String::new();
    while !rest.contains("press ctrl-c") {
        let line = next_line(&mut stderr);
        assert!(!line.is_empty(), "the server stopped early: {rest}");
        rest.push_str(&line);
    }
    assert!(rest.contains("agents: echo\n"), "{rest}");

    runtime.block_on(async {
        use prill_connect::{AgentRequest, Connector, ErrorKind, HttpOptions, NeuroSanHttp, Url};
        assert_eq!(two_turns(&url).await, live);
        let client = NeuroSanHttp::new(Url::parse(&url).unwrap(), &HttpOptions::default()).unwrap();
        let agents = client.list_agents().await.unwrap();
        let names: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["echo"]);
        // A request nobody recorded: the error names the closest recording and the diff.
        let mut conversation = client.open("echo").await.unwrap();
        let miss = conversation
            .send(&AgentRequest::new("bonjour"))
            .await
            .unwrap_err();
        assert_eq!(miss.kind(), ErrorKind::Status, "{miss}");
        let message = miss.to_string();
        assert!(message.contains("400"), "{message}");
        assert!(message.contains("bonjour"), "{message}");
        assert!(message.contains("recorded \\\"hello\\\""), "{message}");
        // The sample the header names is the one served: sample 1 was never recorded.
        let mut sampled = client.open("echo").await.unwrap();
        let request = AgentRequest::new("hello").with_metadata("x-prill-sample", "1");
        let miss = sampled.send(&request).await.unwrap_err().to_string();
        assert!(miss.contains("sample: recorded 0, sent 1"), "{miss}");
        let mut other = client.open("math_guy").await.unwrap();
        let unknown = other.send(&AgentRequest::new("1+1")).await.unwrap_err();
        assert_eq!(unknown.kind(), ErrorKind::UnknownAgent, "{unknown}");
    });
}

#[test]
fn serve_replay_of_a_folder_without_recordings_says_how_to_make_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = command(dir.path(), &["serve", "--port", "0", "--replay"])
        .arg(dir.path())
        .output()
        .expect("the prill binary runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("holds no recorded neuro-san agent"),
        "{stderr}"
    );
    assert!(stderr.contains("prill run --record"), "{stderr}");
}
