//! Agent commands over stdio, with small Python agents written by each test.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use prill_connect::{AgentRequest, Connector, ErrorKind, StdioCommand, StdioConnector};
use prill_spec::model::config::{AgentConfig, Config};
use serde_json::json;

/// The agent of `docs/direct-agents.md`: it remembers the turns in its chat_context.
const ECHO: &str = r#"
import json, os, sys

for line in sys.stdin:
    request = json.loads(line)
    text = request["user_message"]["text"]
    context = request.get("chat_context") or {"turns": []}
    turns = context["turns"] + [text]
    metadata = request.get("metadata", {})
    print(json.dumps({"response": {"type": "AGENT_PROGRESS", "text": ""}}), flush=True)
    print(json.dumps({"response": {"type": "AI", "text": "thinking",
        "origin": [{"tool": "echo", "instantiation_index": 1}, {"tool": "helper", "instantiation_index": 1}]}}), flush=True)
    print(json.dumps({"response": {"type": "AGENT_FRAMEWORK", "text": " / ".join(turns),
        "chat_context": {"turns": turns},
        "sly_data": {"user": metadata.get("user_id"), "greeting": os.environ.get("GREETING"),
                     "filter": request["chat_filter"]["chat_filter_type"]}}}), flush=True)
"#;

fn script(dir: &Path, name: &str, text: &str) -> StdioCommand {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    StdioCommand::new(["python3".to_owned(), path.display().to_string()])
}

#[tokio::test]
async fn two_turns_carry_the_chat_context() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = script(dir.path(), "echo.py", ECHO);
    command.env.insert("GREETING".into(), "hi there".into());
    let connector = StdioConnector::new().with("echo", command);
    let mut conversation = connector.open("echo").await.unwrap();

    let first = conversation
        .send(&AgentRequest::new("hello").with_metadata("user_id", "alice"))
        .await
        .unwrap();
    assert_eq!(first.text.as_deref(), Some("hello"));
    assert_eq!(
        first.sly_data,
        Some(json!({"user": "alice", "greeting": "hi there", "filter": "MINIMAL"}))
    );
    assert_eq!(first.messages.len(), 2, "the heartbeat is dropped");
    assert!(first.timings.first_byte.is_some());

    let next = AgentRequest::new("again").with_chat_context(first.chat_context);
    let second = conversation.send(&next).await.unwrap();
    assert_eq!(second.text.as_deref(), Some("hello / again"));
    assert_eq!(
        second.chat_context,
        Some(json!({"turns": ["hello", "again"]}))
    );
}

#[tokio::test]
async fn a_crash_before_the_final_line_shows_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let command = script(
        dir.path(),
        "crash.py",
        r#"
import json, sys
sys.stdin.readline()
print(json.dumps({"response": {"type": "AI", "text": "working on it"}}), flush=True)
print("Traceback: something broke", file=sys.stderr, flush=True)
sys.exit(3)
"#,
    );
    let shown = command.display();
    let mut conversation = StdioConnector::new()
        .with("crash", command)
        .open("crash")
        .await
        .unwrap();
    let e = conversation
        .send(&AgentRequest::new("x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("command {shown} broke the protocol: ")),
        "{text}"
    );
    assert!(
        text.contains("closed its output before the final AGENT_FRAMEWORK message"),
        "{text}"
    );
    assert!(text.contains("exit status: 3"), "{text}");
    assert!(text.contains("Traceback: something broke"), "{text}");
}

#[tokio::test]
async fn garbage_output_is_a_protocol_error_and_ends_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let command = script(
        dir.path(),
        "garbage.py",
        r#"
import sys
for line in sys.stdin:
    print("hello, I am not JSON", flush=True)
"#,
    );
    let mut conversation = StdioConnector::new()
        .with("garbage", command)
        .open("garbage")
        .await
        .unwrap();
    let e = conversation
        .send(&AgentRequest::new("x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    assert!(
        e.to_string().contains("line 1 of its answer is not JSON"),
        "{e}"
    );
    assert!(e.to_string().contains("hello, I am not JSON"), "{e}");
    let e = conversation
        .send(&AgentRequest::new("x"))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("the conversation cannot go on"),
        "{e}"
    );
}

#[tokio::test]
async fn silent_agents_time_out_and_the_conversation_ends() {
    let dir = tempfile::tempdir().unwrap();
    let command = script(
        dir.path(),
        "silent.py",
        "import sys, time\nsys.stdin.readline()\ntime.sleep(3600)\n",
    );
    let mut conversation = StdioConnector::new()
        .with("silent", command)
        .open("silent")
        .await
        .unwrap();
    let request = AgentRequest::new("x").with_timeout(Duration::from_millis(500));
    let e = conversation.send(&request).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let e = conversation.send(&request).await.unwrap_err();
    assert!(
        e.to_string().contains("the conversation cannot go on"),
        "{e}"
    );
}

#[tokio::test]
async fn nothing_waits_forever_on_a_silent_command() {
    let dir = tempfile::tempdir().unwrap();
    let silent = "import sys, time\nsys.stdin.readline()\ntime.sleep(3600)\n";
    let command = script(dir.path(), "silent.py", silent);
    let request = AgentRequest::new("x");
    let within = |future| tokio::time::timeout(Duration::from_secs(20), future);

    // The connector's default, when neither the request nor the command sets one.
    let connector = StdioConnector::new()
        .with("silent", command.clone())
        .with_timeouts(Some(Duration::from_millis(400)), None);
    let mut conversation = connector.open("silent").await.unwrap();
    let e = within(conversation.send(&request))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().ends_with("within 400ms"), "{e}");

    // The idle limit: no line for that long.
    let connector = StdioConnector::new()
        .with("silent", command.clone())
        .with_timeouts(None, Some(Duration::from_millis(300)));
    let mut conversation = connector.open("silent").await.unwrap();
    let e = within(conversation.send(&request))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().ends_with("sent nothing for 300ms"), "{e}");

    // The agent's own `timeout_in_seconds` in prill.toml wins over the default.
    let mut config = Config::default();
    config.agents.insert(
        "silent".into(),
        AgentConfig {
            url: None,
            command: Some(vec!["python3".into(), "silent.py".into()]),
            env: BTreeMap::new(),
            timeout_in_seconds: Some(0.5),
        },
    );
    let connector = StdioConnector::from_config(&config, Some(dir.path()))
        .with_timeouts(Some(Duration::from_secs(3600)), None);
    let mut conversation = connector.open("silent").await.unwrap();
    let e = within(conversation.send(&request))
        .await
        .unwrap()
        .unwrap_err();
    assert!(e.to_string().ends_with("within 500ms"), "{e}");
}

#[tokio::test]
async fn exiting_without_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let command = script(dir.path(), "mute.py", "import sys\nsys.exit(0)\n");
    let mut conversation = StdioConnector::new()
        .with("mute", command)
        .open("mute")
        .await
        .unwrap();
    let e = conversation
        .send(&AgentRequest::new("x"))
        .await
        .unwrap_err();
    // Either the request could not be written or the answer never came.
    assert!(
        matches!(e.kind(), ErrorKind::Protocol | ErrorKind::Io),
        "{e}"
    );
    assert!(e.to_string().contains("wrote nothing to stderr"), "{e}");
}

#[tokio::test]
async fn commands_that_cannot_start_and_unknown_names() {
    let connector = StdioConnector::new().with(
        "ghost",
        StdioCommand::new(["/nonexistent/prill-agent", "--flag"]),
    );
    let e = connector.open("ghost").await.err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Spawn);
    assert!(
        e.to_string()
            .starts_with("cannot start `/nonexistent/prill-agent --flag`: "),
        "{e}"
    );
    let e = connector.open("nobody").await.err().unwrap();
    assert_eq!(e.kind(), ErrorKind::UnknownAgent);
}

#[tokio::test]
async fn commands_from_prill_toml_run_in_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("echo.py"), ECHO).unwrap();
    let mut config = Config::default();
    config.agents.insert(
        "echo".into(),
        AgentConfig {
            url: None,
            command: Some(vec!["python3".into(), "echo.py".into()]),
            env: BTreeMap::from([("GREETING".to_owned(), "from the config".to_owned())]),
            timeout_in_seconds: None,
        },
    );
    config.agents.insert(
        "remote".into(),
        AgentConfig {
            url: Some("http://127.0.0.1:1".into()),
            command: None,
            env: BTreeMap::new(),
            timeout_in_seconds: None,
        },
    );
    let connector = StdioConnector::from_config(&config, Some(dir.path()));
    assert!(connector.get("remote").is_none());
    let mut conversation = connector.open("echo").await.unwrap();
    let response = conversation.send(&AgentRequest::new("hi")).await.unwrap();
    assert_eq!(
        response.sly_data.unwrap()["greeting"],
        json!("from the config")
    );
    assert!(!format!("{:?}", connector.get("echo").unwrap()).contains("from the config"));
}

/// The Python agent of `docs/direct-agents.md`, as the page shows it.
fn documented_agent() -> String {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/direct-agents.md"),
    )
    .unwrap();
    let start = page
        .find("```python\n")
        .expect("the page has a Python agent")
        + 10;
    let end = start + page[start..].find("```").unwrap();
    page[start..end].to_owned()
}

#[tokio::test]
async fn the_documented_agent_works() {
    let dir = tempfile::tempdir().unwrap();
    let command = script(dir.path(), "agent.py", &documented_agent());
    let mut conversation = StdioConnector::new()
        .with("doc", command)
        .open("doc")
        .await
        .unwrap();
    let first = conversation
        .send(&AgentRequest::new("hi").with_metadata("user_id", "alice"))
        .await
        .unwrap();
    assert_eq!(
        first.text.as_deref(),
        Some("Hello! You said 'hi'; this is turn 1.")
    );
    assert_eq!(first.sly_data, Some(json!({"turns": 1, "user": "alice"})));
    assert_eq!(first.messages.len(), 2);
    let next = AgentRequest::new("bye").with_chat_context(first.chat_context);
    let second = conversation.send(&next).await.unwrap();
    assert_eq!(
        second.text.as_deref(),
        Some("Hello! You said 'bye'; this is turn 2.")
    );
    assert_eq!(second.sly_data, Some(json!({"turns": 2, "user": null})));
}

/// Whether process `pid` is still running (a zombie, or no process, is not).
#[cfg(target_os = "linux")]
pub(crate) fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // `pid (comm) S ...`: the state follows the last `)`.
            let after = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(after != 'Z' && after != 'X')
        })
        .unwrap_or(false)
}

/// The pid a test agent wrote to `path`.
#[cfg(target_os = "linux")]
pub(crate) fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Waits until process `pid` no longer runs, for at most `within`.
#[cfg(target_os = "linux")]
pub(crate) async fn until_gone(pid: u32, within: Duration) {
    let deadline = std::time::Instant::now() + within;
    while running(pid) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A command started through a wrapper (`sh -c`, as `npm run` or `uv run` start theirs)
/// that times out leaves nothing running: its whole process group is ended, the
/// grandchild that is the real agent included.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_timed_out_wrapper_leaves_no_grandchild_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("agent.pid");
    // The wrapper starts the "real agent" (a long sleep) in the background, records its
    // pid, and waits for it: it never answers.
    let command = StdioCommand::new([
        "sh".to_owned(),
        "-c".to_owned(),
        format!("sleep 300 & echo $! > {}; wait", pidfile.display()),
    ]);
    let connector = StdioConnector::new().with("wrapped", command);
    let mut conversation = connector.open("wrapped").await.unwrap();
    let request = AgentRequest::new("x").with_timeout(Duration::from_millis(500));
    let error = conversation.send(&request).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout);
    let pid = read_pid(&pidfile);
    // TERM went to the group at once; `sleep` dies of it.
    until_gone(pid, prill_connect::GROUP_GRACE + Duration::from_secs(3)).await;
    assert!(
        !running(pid),
        "the wrapper's child {pid} outlived the timeout"
    );
    drop(conversation);
}

/// A command that ignores `SIGTERM` is killed after the grace period, and so is
/// everything it started.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_command_that_ignores_term_is_killed_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("agent.pid");
    let command = StdioCommand::new([
        "sh".to_owned(),
        "-c".to_owned(),
        format!(
            "trap '' TERM; sh -c \"trap '' TERM; sleep 300\" & echo $! > {}; wait",
            pidfile.display()
        ),
    ]);
    let connector = StdioConnector::new().with("stubborn", command);
    let mut conversation = connector.open("stubborn").await.unwrap();
    let request = AgentRequest::new("x").with_timeout(Duration::from_millis(500));
    assert!(conversation.send(&request).await.is_err());
    let pid = read_pid(&pidfile);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        running(pid),
        "TERM is ignored, so it runs until the grace is over"
    );
    until_gone(pid, prill_connect::GROUP_GRACE + Duration::from_secs(3)).await;
    assert!(!running(pid), "KILL after the grace ends it");

    // A program about to exit ends at once what is still within its grace
    // (`end_pending_groups`), so an agent that ignores SIGTERM never outlives `prill run`.
    // In this same test: it ends every pending group of the process.
    let mut conversation = connector.open("stubborn").await.unwrap();
    assert!(conversation.send(&request).await.is_err());
    let pid = read_pid(&pidfile);
    assert!(running(pid));
    prill_connect::end_pending_groups();
    until_gone(pid, Duration::from_secs(1)).await;
    assert!(!running(pid), "killed well within the grace");
}

/// An agent that prints its whole environment and the request it got to stderr, a
/// key cut short as a log line might, then exits without answering.
const LEAKY: &str = r#"
import os, sys
line = sys.stdin.readline()
for name, value in sorted(os.environ.items()):
    print(f"{name}={value}", file=sys.stderr)
# Again at the end, in case the whole environment is longer than the tail kept.
for name in sys.argv[1:]:
    print(f"{name}={os.environ[name]}", file=sys.stderr)
print("request: " + line.strip(), file=sys.stderr)
print("using key " + os.environ["OPENAI_API_KEY"][:8] + "...", file=sys.stderr, flush=True)
sys.exit(1)
"#;

#[tokio::test]
async fn a_stderr_tail_never_shows_keys_or_metadata_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = script(dir.path(), "leaky.py", LEAKY);
    let keys = [
        ("OPENAI_API_KEY", "sk-openai-Zq81nQ4kVw0pLm"),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-Yx72bR5tUe"),
        ("ANTHROPIC_AUTH_TOKEN", "anth-auth-Kj39sD0fGh"),
        ("HF_TOKEN", "hf_Wd84mN1cXz6qAs"),
        ("AWS_SECRET_ACCESS_KEY", "aws/secret+Pk27vB9nM"),
        ("AWS_SESSION_TOKEN", "FwoGZXIvYXdzSess10nT0k"),
        ("AWS_BEARER_TOKEN_BEDROCK", "bedrock-Bt55rE8wQ"),
        ("MY_GATEWAY_KEY", "gw-Lq60tY3uIo9pZ"),
    ];
    for (name, value) in keys {
        command.env.insert(name.into(), value.into());
    }
    command
        .env
        .insert("PLAIN_SETTING".into(), "visible-value".into());
    command.secret_variables = vec!["MY_GATEWAY_KEY".into()];
    command
        .command
        .extend(keys.iter().map(|(name, _)| (*name).to_owned()));
    command.command.push("PLAIN_SETTING".into());
    let connector = StdioConnector::new().with("leaky", command);
    let mut conversation = connector.open("leaky").await.unwrap();
    let request = AgentRequest::new("hello")
        .with_metadata("authorization", "Bearer meta-Tk93hG6jF2dS")
        .with_metadata("user_id", "alice-the-user");
    let e = conversation.send(&request).await.unwrap_err();
    let shown = e.to_string();

    assert_eq!(e.kind(), ErrorKind::Protocol, "{shown}");
    assert!(shown.contains("its stderr ends with"), "{shown}");
    // What is no secret is still there, so the tail is worth reading.
    assert!(shown.contains("PLAIN_SETTING=visible-value"), "{shown}");
    for (name, value) in keys {
        assert!(!shown.contains(value), "{name}'s value leaked: {shown}");
        assert!(shown.contains(&format!("{name}=${{{name}}}")), "{shown}");
    }
    assert!(!shown.contains("sk-opena"), "a cut key leaked: {shown}");
    assert!(shown.contains("using key ${OPENAI_API_KEY}..."), "{shown}");
    assert!(!shown.contains("meta-Tk93hG6jF2dS"), "{shown}");
    assert!(!shown.contains("alice-the-user"), "{shown}");
    assert!(shown.contains("<metadata authorization>"), "{shown}");
}
