//! The `direct` connection to neuro-san networks: which agents go to the bridge, and the
//! bridge's side of the protocol.
//!
//! The bridge runs against real neuro-san in `crates/prill-cli/tests/neuro_san_real`
//! (which needs a venv with neuro-san). Here, so that the protocol's corner cases run on
//! every machine with a `python3`, it runs against `fixtures/neuro-san-stand-in`, a
//! stand-in `neuro_san` package that offers the part of neuro-san's session API the
//! bridge uses (`AgentSessionFactory`, `create_session`, `reset`, `streaming_chat`,
//! `close`) and streams what the tests need: message types as Python enums, an
//! intermediate `AGENT_FRAMEWORK` message, output on stdout, a request without text.

use std::path::Path;

use prill_connect::neuro_san_direct::{MANIFEST_ENV, TOOL_PATH_ENV};
use prill_connect::{
    AgentRequest, Connector, DirectConnector, ErrorKind, NeuroSanDirect, StdioCommand,
    StdioConnector,
};
use prill_spec::model::config::NeuroSanConfig;
use serde_json::json;

/// `fixtures/neuro-san-stand-in`: the stand-in package's folder.
fn stand_in() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/neuro-san-stand-in")
}

fn direct(dir: &Path) -> NeuroSanDirect {
    NeuroSanDirect::new("python3")
        .with_env("PYTHONPATH", stand_in().display().to_string())
        .with_cwd(dir)
}

#[tokio::test]
async fn the_bridge_passes_the_conversation_to_the_session_and_the_final_message_back() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path());
    let mut conversation = connector.open("hello_world").await.unwrap();
    let mut request = AgentRequest::new("hi").with_metadata("user_id", "alice");
    request.use_direct = true;
    request.sly_data = json!({"x": 1}).as_object().cloned();
    request.chat_filter = prill_spec::model::data_driven::ChatFilter::Maximal;
    let first = conversation.send(&request).await.unwrap();
    assert_eq!(first.text.as_deref(), Some("hello_world says hi"));
    assert_eq!(first.chat_context, Some(json!({"turns": 1})));
    let sly = first.sly_data.unwrap();
    assert_eq!(sly["use_direct"], true);
    assert_eq!(sly["metadata"], json!({"user_id": "alice"}));
    assert_eq!(sly["resets"], 1, "reset before every interaction");
    assert_eq!(
        sly["request"],
        json!({"user_message": {"type": "HUMAN", "text": "hi"}, "sly_data": {"x": 1},
               "chat_filter": {"chat_filter_type": "MAXIMAL"}}),
        "metadata and use_direct are the session's, not the request's"
    );
    // The enum type became its name; the intermediate AGENT_FRAMEWORK message was held
    // back (it would have ended the answer early); the library's stdout went elsewhere.
    assert_eq!(first.messages.len(), 2, "{:?}", first.messages);
    assert_eq!(first.messages[0]["type"], "AI");
    assert_eq!(first.messages[0]["origin"][0]["tool"], "front");

    let next = AgentRequest::new("again").with_chat_context(first.chat_context);
    let second = conversation.send(&next).await.unwrap();
    assert_eq!(second.chat_context, Some(json!({"turns": 2})));
    assert_eq!(
        second.sly_data.unwrap()["resets"],
        2,
        "one session per conversation"
    );
}

#[tokio::test]
async fn a_request_without_text_gets_an_empty_answer_as_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path());
    let mut conversation = connector.open("hello_world").await.unwrap();
    let response = conversation.send(&AgentRequest::default()).await.unwrap();
    assert_eq!(response.text, None);
    assert_eq!(response.chat_context, None);
}

#[tokio::test]
async fn an_unknown_network_is_an_error_that_shows_neuro_san_s_message() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path());
    let mut conversation = connector.open("missing").await.unwrap();
    let error = conversation
        .send(&AgentRequest::new("hi"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Protocol, "{error}");
    let message = error.to_string();
    assert!(
        message.contains("<prill's neuro-san direct bridge> missing")
            && message.contains("not found in manifest file"),
        "{message}"
    );
    assert!(
        !message.contains("import enum"),
        "the bridge's source is not in messages: {message}"
    );
}

#[tokio::test]
async fn commands_of_prill_toml_come_first_then_neuro_san_networks() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("echo.py");
    std::fs::write(
        &agent,
        "import json, sys\nfor line in sys.stdin:\n    print(json.dumps({'response': {'type': 'AGENT_FRAMEWORK', 'text': 'a command', 'chat_context': {}}}), flush=True)\n",
    )
    .unwrap();
    let commands = StdioConnector::new().with(
        "echo",
        StdioCommand::new(["python3".to_owned(), agent.display().to_string()]),
    );
    let both = DirectConnector::new(commands.clone(), Some(direct(dir.path())));
    let mut echo = both.open("echo").await.unwrap();
    let answer = echo.send(&AgentRequest::new("hi")).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("a command"));
    let mut network = both.open("music_nerd").await.unwrap();
    let answer = network.send(&AgentRequest::new("hi")).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("music_nerd says hi"));

    let only_commands = DirectConnector::new(commands, None);
    let error = only_commands.open("music_nerd").await.err().unwrap();
    assert_eq!(error.kind(), ErrorKind::UnknownAgent);
    assert!(
        error.to_string().contains("[neuro_san]") && error.to_string().contains(MANIFEST_ENV),
        "{error}"
    );
}

#[test]
fn neuro_san_settings_come_from_prill_toml_else_from_agent_manifest_file() {
    let dir = Path::new("/project");
    assert_eq!(NeuroSanDirect::from_config(None, dir, None), None);
    assert_eq!(NeuroSanDirect::from_config(None, dir, Some("")), None);
    let from_env = NeuroSanDirect::from_config(None, dir, Some("registries/manifest.hocon"))
        .expect("AGENT_MANIFEST_FILE alone turns the bridge on");
    assert_eq!(from_env.python(), "python3");
    assert!(
        from_env.env().is_empty(),
        "neuro-san reads its own variables"
    );

    let config = NeuroSanConfig {
        python: Some("venv/bin/python".into()),
        manifest: Some("registries/manifest.hocon".into()),
        tool_path: Some("coded_tools".into()),
        env: [("PYTHONPATH".to_owned(), ".".to_owned())].into(),
        ..NeuroSanConfig::default()
    };
    let direct = NeuroSanDirect::from_config(Some(&config), dir, Some("elsewhere.hocon")).unwrap();
    assert_eq!(direct.python(), "/project/venv/bin/python");
    assert_eq!(
        direct.env().get(MANIFEST_ENV).map(String::as_str),
        Some("/project/registries/manifest.hocon")
    );
    assert_eq!(
        direct.env().get(TOOL_PATH_ENV).map(String::as_str),
        Some("/project/coded_tools")
    );
    assert_eq!(
        direct.env().get("PYTHONPATH").map(String::as_str),
        Some(".")
    );
    let command = direct.command("hello_world");
    assert_eq!(command.command[0], "/project/venv/bin/python");
    assert_eq!(command.command[1], "-c");
    assert_eq!(command.command.last().unwrap(), "hello_world");
    assert_eq!(command.cwd.as_deref(), Some(dir));

    let bare = NeuroSanConfig {
        python: Some("python3.12".into()),
        ..NeuroSanConfig::default()
    };
    let direct = NeuroSanDirect::from_config(Some(&bare), dir, None).unwrap();
    assert_eq!(
        direct.python(),
        "python3.12",
        "a bare name is looked up on PATH"
    );
    assert!(direct.env().get(MANIFEST_ENV).is_none());
}
