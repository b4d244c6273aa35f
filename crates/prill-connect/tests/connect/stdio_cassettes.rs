//! Command agents and the neuro-san direct bridge on cassettes: recorded from real
//! processes (small Python agents, the stand-in neuro-san package), then replayed with
//! commands that do not exist, so a replay that started anything would fail.

use std::path::Path;
use std::time::{Duration, Instant};

use prill_connect::cassette::{CassetteOptions, Cassettes, Latency, Mode};
use prill_connect::{
    AgentRequest, AgentResponse, Connector, DirectConnector, ErrorKind, NeuroSanDirect,
    StdioCommand, StdioConnector,
};
use prill_target::scope::{SampleScope, in_sample};
use serde_json::json;

/// Remembers its turns in the chat_context, answers with the sample it was sent, writes
/// its metadata to stderr, and ends its output without a final message on "crash".
const AGENT: &str = r#"
import json, sys, time

for line in sys.stdin:
    request = json.loads(line)
    text = request["user_message"]["text"]
    metadata = request.get("metadata", {})
    print("metadata " + json.dumps(metadata), file=sys.stderr, flush=True)
    turns = (request.get("chat_context") or {"turns": []})["turns"] + [text]
    print(json.dumps({"response": {"type": "AI", "text": "thinking about " + text}}), flush=True)
    if text == "crash":
        sys.exit(3)
    if text == "slow":
        time.sleep(0.3)
    answer = " / ".join(turns) + " (sample " + metadata.get("x-prill-sample", "-") + ")"
    print(json.dumps({"response": {"type": "AGENT_FRAMEWORK", "text": answer,
        "chat_context": {"turns": turns}, "sly_data": {"token": metadata.get("token")}}}), flush=True)
"#;

const SECRET: &str = "sk-distinctive-stdio-4242";

fn agent(dir: &Path) -> StdioCommand {
    let path = dir.join("agent.py");
    std::fs::write(&path, AGENT).unwrap();
    StdioCommand::new(["python3".to_owned(), path.display().to_string()])
}

/// A command that cannot be started: a replay that tried would get a spawn error.
fn nowhere() -> StdioCommand {
    StdioCommand::new(["/nonexistent/prill-test/agent"])
}

fn cassettes(dir: &Path, mode: Mode, latency: Latency) -> Cassettes {
    let mut options = CassetteOptions::new(dir, mode);
    options.latency = latency;
    options.secrets.secret("${SECRET}", SECRET);
    Cassettes::open(options).unwrap()
}

fn request(text: &str, sample: u32) -> AgentRequest {
    AgentRequest::new(text)
        .with_metadata("x-prill-sample", sample.to_string())
        .with_metadata("token", SECRET)
}

/// What a conversation of three turns answered (timings aside): two turns carrying
/// the chat_context, then a crash.
async fn conversation(
    connector: &StdioConnector,
    sample: u32,
) -> Vec<Result<AgentResponse, (ErrorKind, String)>> {
    let mut conversation = connector.open("echo").await.unwrap();
    let mut answers = Vec::new();
    let mut context = None;
    for text in ["hello", "again", "crash"] {
        let request = request(text, sample).with_chat_context(context.clone());
        let answer = conversation.send(&request).await;
        if let Ok(a) = &answer {
            context = a.chat_context.clone();
        }
        // The peer (the command) aside: the replaying one is another.
        let detail = |e: &prill_connect::ConnectError| {
            let text = e.to_string();
            text.split_once(": ")
                .map_or(text.clone(), |(_, d)| d.to_owned())
        };
        answers.push(answer.map_err(|e| (e.kind(), detail(&e))));
    }
    answers
}

/// `answers` with their timings aside, and the token their sly_data echoed, which
/// must be `token` (the secret live, blanked in a replay).
fn without_timings(
    answers: Vec<Result<AgentResponse, (ErrorKind, String)>>,
    token: &str,
) -> Vec<Result<AgentResponse, (ErrorKind, String)>> {
    answers
        .into_iter()
        .map(|a| {
            a.map(|mut r| {
                assert_eq!(r.sly_data, Some(json!({"token": token})));
                r.timings = Default::default();
                r.sly_data = None;
                let messages = serde_json::to_string(&r.messages).unwrap();
                r.messages = serde_json::from_str(&messages.replace(token, "TOKEN")).unwrap();
                r
            })
        })
        .collect()
}

#[tokio::test]
async fn a_recorded_conversation_replays_without_its_command() {
    let scripts = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let live = StdioConnector::new()
        .with("echo", agent(scripts.path()))
        .with_cassettes(Some(cassettes(dir.path(), Mode::Record, Latency::Zero)));
    let shown = format!("{live:?}");
    assert!(!shown.contains(SECRET), "Debug shows no secret: {shown}");
    let scope = |sample| SampleScope::new("c1d2e3", "echo remembers", sample);
    let recorded = [
        in_sample(scope(0), conversation(&live, 0)).await,
        in_sample(scope(1), conversation(&live, 1)).await,
    ];
    let first = recorded[0][1].as_ref().unwrap();
    assert_eq!(first.text.as_deref(), Some("hello / again (sample 0)"));
    let (kind, message) = recorded[0][2].as_ref().unwrap_err();
    assert_eq!(*kind, ErrorKind::Protocol);
    assert!(message.contains("exited"), "{message}");

    let replaying = StdioConnector::new()
        .with("echo", nowhere())
        .with_cassettes(Some(cassettes(dir.path(), Mode::Replay, Latency::Zero)));
    // The samples replay by index, whatever order they come in.
    let second = in_sample(scope(1), conversation(&replaying, 1)).await;
    let first = in_sample(scope(0), conversation(&replaying, 0)).await;
    let [live_first, live_second] = recorded;
    let blank = "<redacted>";
    assert_eq!(
        without_timings(first, blank),
        without_timings(live_first, SECRET)
    );
    assert_eq!(
        without_timings(second, blank),
        without_timings(live_second, SECRET)
    );

    // The sample is the scope's: the request's x-prill-sample does not take part.
    let mut alone = replaying.open("echo").await.unwrap();
    let answer = in_sample(scope(1), alone.send(&request("hello", 9)))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("hello (sample 1)"));

    // A request nobody recorded is no_cassette, naming the closest one.
    let mut other = replaying.open("echo").await.unwrap();
    let miss = in_sample(scope(0), other.send(&request("bonjour", 0)))
        .await
        .unwrap_err();
    assert_eq!(miss.kind(), ErrorKind::NoCassette, "{miss}");
    assert!(miss.to_string().contains("bonjour"), "{miss}");

    // Secrets sent as metadata, echoed in answers and in stderr, are in no file.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(SECRET), "{text}");
        assert!(
            !text.contains(&scripts.path().display().to_string()),
            "{text}"
        );
    }
}

#[tokio::test]
async fn a_replay_keeps_the_recorded_pace_unless_told_otherwise() {
    let scripts = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let live = StdioConnector::new()
        .with("echo", agent(scripts.path()))
        .with_cassettes(Some(cassettes(dir.path(), Mode::Record, Latency::Zero)));
    let mut conversation = live.open("echo").await.unwrap();
    conversation.send(&request("slow", 0)).await.unwrap();

    let replaying = StdioConnector::new()
        .with("echo", nowhere())
        .with_cassettes(Some(cassettes(dir.path(), Mode::Replay, Latency::Recorded)));
    let mut conversation = replaying.open("echo").await.unwrap();
    let started = Instant::now();
    let answer = conversation.send(&request("slow", 0)).await.unwrap();
    // The final line was written 300 ms after the request, and replays no sooner.
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(answer.timings.first_byte.is_some());
    assert_eq!(answer.text.as_deref(), Some("slow (sample 0)"));
}

#[tokio::test]
async fn replay_or_record_fills_the_gaps_and_records_them() {
    let scripts = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let connector = |mode| {
        StdioConnector::new()
            .with("echo", agent(scripts.path()))
            .with_cassettes(Some(cassettes(dir.path(), mode, Latency::Zero)))
    };
    let mut first = connector(Mode::Record).open("echo").await.unwrap();
    first.send(&request("hello", 0)).await.unwrap();
    // One recorded, one not: the command starts for the second.
    let filling = connector(Mode::ReplayOrRecord);
    let mut conversation = filling.open("echo").await.unwrap();
    let answer = conversation.send(&request("bonjour", 0)).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("bonjour (sample 0)"));

    let replaying = StdioConnector::new()
        .with("echo", nowhere())
        .with_cassettes(Some(cassettes(dir.path(), Mode::Replay, Latency::Zero)));
    for text in ["hello", "bonjour"] {
        let mut conversation = replaying.open("echo").await.unwrap();
        let answer = conversation.send(&request(text, 0)).await.unwrap();
        assert_eq!(answer.text, Some(format!("{text} (sample 0)")));
    }
}

/// `fixtures/neuro-san-stand-in`: a stand-in `neuro_san` package for the bridge.
fn stand_in() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/neuro-san-stand-in")
}

#[tokio::test]
async fn the_neuro_san_bridge_records_and_replays_without_python() {
    // A process per conversation, and warm workers (which a replay never starts).
    for workers in [0, 2] {
        bridge_round_trip(workers).await;
    }
}

async fn bridge_round_trip(workers: usize) {
    let work = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let live = NeuroSanDirect::new("python3")
        .with_env("PYTHONPATH", stand_in().display().to_string())
        .with_cwd(work.path())
        .with_workers(workers);
    let live = DirectConnector::new(StdioConnector::new(), Some(live))
        .with_cassettes(Some(cassettes(dir.path(), Mode::Record, Latency::Zero)));
    let talk = |connector: DirectConnector| async move {
        let mut conversation = connector.open("hello_world").await.unwrap();
        let plain = |text: &str| AgentRequest::new(text).with_metadata("x-prill-sample", "0");
        let first = conversation.send(&plain("hi")).await.unwrap();
        let next = plain("more").with_chat_context(first.chat_context.clone());
        let second = conversation.send(&next).await.unwrap();
        [first, second].map(|mut r| {
            r.timings = Default::default();
            r
        })
    };
    let recorded = talk(live).await;
    assert_eq!(recorded[0].text.as_deref(), Some("hello_world says hi"));

    let replaying = NeuroSanDirect::new("/nonexistent/prill-test/python3").with_workers(workers);
    let replaying = DirectConnector::new(StdioConnector::new(), Some(replaying))
        .with_cassettes(Some(cassettes(dir.path(), Mode::Replay, Latency::Zero)));
    let neuro_san = replaying.neuro_san().unwrap();
    assert!(neuro_san.warm(2).is_none(), "a replay starts no worker");
    assert_eq!(talk(replaying).await, recorded, "workers: {workers}");
    let text = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
    assert!(
        text.contains("\"connector\":\"neuro-san-direct\""),
        "{text}"
    );
    assert!(text.contains("\"endpoint\":\"hello_world\""), "{text}");
    assert!(!text.contains(SECRET), "{text}");
}
