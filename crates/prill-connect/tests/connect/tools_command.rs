//! Tool programs (`framework_config.tool_command`) over stdin and stdout, with small
//! Python and sh programs written by each test, and the two of `docs/tools.md`.

use std::path::Path;
use std::time::Duration;

use prill_connect::tools::{CommandSession, CommandTools, DEFAULT_MAX_LINE_BYTES};
use prill_connect::{ConnectError, ErrorKind};
use prill_target::tools::{ToolAnswer, ToolCallRequest, ToolLauncher, ToolProgram, ToolSession};
use serde_json::{Value, json};

use crate::stdio::{read_pid, running, until_gone};

/// A Python program in `dir`, run there.
fn python(dir: &Path, name: &str, text: &str) -> ToolProgram {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    ToolProgram::new(
        vec!["python3".to_owned(), name.to_owned()],
        Some(dir),
        format!("python3 {name}"),
    )
}

/// A command line run by `sh -c`.
fn sh(line: &str, label: &str) -> ToolProgram {
    ToolProgram::new(
        vec!["sh".to_owned(), "-c".to_owned(), line.to_owned()],
        None,
        label,
    )
}

/// Call `turn` of `name` with `arguments`.
pub(crate) fn call(name: &str, arguments: Value, turn: u32) -> ToolCallRequest {
    ToolCallRequest {
        name: name.to_owned(),
        arguments,
        call_id: Some(format!("call_{turn}")),
        turn,
    }
}

fn start(program: &ToolProgram) -> CommandSession {
    CommandTools::default().start_session(program).unwrap()
}

async fn ask(session: &mut CommandSession, name: &str, arguments: Value) -> ToolAnswer {
    session
        .call(&call(name, arguments, 1), None)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A program that counts its calls: the count shows one process per session.
const COUNTER: &str = r#"
import json, os, sys
calls = 0
for line in sys.stdin:
    calls += 1
    message = json.loads(line)
    print(f"call {calls}: {message['tool']}", file=sys.stderr, flush=True)
    if message["tool"] == "fail":
        print(json.dumps({"error": f"failed on call {calls}"}), flush=True)
        continue
    print("", flush=True)  # a blank line is skipped
    print(json.dumps({"result": {"calls": calls, "message": message,
        "cwd": os.path.basename(os.getcwd()), "has_path": bool(os.environ.get("PATH"))}}), flush=True)
"#;

#[tokio::test]
async fn one_program_answers_every_call_of_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let program = python(dir.path(), "counter.py", COUNTER);
    let launcher: &dyn ToolLauncher = &CommandTools::default();
    let mut session = launcher.start(&program).unwrap();

    let first = session
        .call(&call("search", json!({"query": "laptop"}), 1), None)
        .await
        .unwrap();
    let folder = dir.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(
        first,
        ToolAnswer::ok(json!({
            "calls": 1,
            "message": {"type": "call", "tool": "search", "arguments": {"query": "laptop"}, "id": "call_1", "turn": 1},
            "cwd": folder,
            "has_path": true,
        }))
    );
    let failed = session.call(&call("fail", json!({}), 2), None).await;
    assert_eq!(failed.unwrap(), ToolAnswer::error("failed on call 2"));
    let third = session
        .call(
            &ToolCallRequest {
                call_id: None,
                ..call("fetch", json!({"url": "u"}), 2)
            },
            None,
        )
        .await
        .unwrap();
    let ToolAnswer { output, is_error } = third;
    assert!(!is_error);
    let prill_target::model::ToolOutput::Json(value) = output else {
        panic!("a JSON result: {output:?}")
    };
    assert_eq!(value["calls"], json!(3), "state is kept between calls");
    assert_eq!(value["message"]["id"], Value::Null);
    assert_eq!(value["message"]["turn"], json!(2));

    // A new session is a new process: the count starts again.
    let mut again = launcher.start(&program).unwrap();
    let first = again
        .call(&call("search", json!({}), 1), None)
        .await
        .unwrap();
    let prill_target::model::ToolOutput::Json(value) = first.output else {
        panic!()
    };
    assert_eq!(value["calls"], json!(1));
}

/// Checks a protocol error names the program and the tool, and that the session
/// refuses to go on.
async fn assert_broken(mut session: CommandSession, label: &str, says: &str) {
    let e = session
        .call(&call("search", json!({"q": 1}), 3), None)
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{shown}");
    assert!(
        shown.contains(&format!("tool program `{label}`")),
        "{shown}"
    );
    assert!(shown.contains("the call of `search` (turn 3)"), "{shown}");
    assert!(shown.contains(says), "{shown}");
    let next = session
        .call(&call("other", json!({}), 4), None)
        .await
        .unwrap_err();
    assert_eq!(next.kind(), ErrorKind::Protocol);
    assert!(
        next.to_string().contains("the session cannot go on"),
        "{next}"
    );
}

#[tokio::test]
async fn answers_that_break_the_protocol_are_errors() {
    let cases = [
        (
            "echo 'debug: starting' ; echo '{\"result\": 1}'",
            "is not JSON",
        ),
        (
            "echo '[1, 2]'",
            "is not a JSON object with `result` or `error`",
        ),
        ("echo '{\"answer\": 1}'", "has neither `result` nor `error`"),
        (
            "echo '{\"result\": 1, \"error\": \"x\"}'",
            "has both `result` and `error`",
        ),
        (
            "echo '{\"error\": 42}'",
            "has an `error` that is not a string",
        ),
        (
            "echo '{\"result\": 1} {\"result\": 2}'",
            "holds 2 JSON values on one line",
        ),
    ];
    for (answer, says) in cases {
        let line = format!("read line; echo 'what went wrong' >&2; {answer}; sleep 30");
        let session = start(&sh(&line, "garbage"));
        assert_broken(session, "garbage", says).await;
    }
}

/// Two answers to one call: the second is never taken for the next call's answer.
#[tokio::test]
async fn a_line_that_answers_nothing_is_an_error() {
    let mut session = start(&sh(
        "read line; printf '{\"result\": 1}\\n{\"result\": 2}\\n'; read line; echo '{\"result\": 3}'; sleep 30",
        "twice",
    ));
    assert_eq!(
        ask(&mut session, "search", json!({})).await,
        ToolAnswer::ok(json!(1))
    );
    let e = session
        .call(&call("search", json!({}), 2), None)
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{shown}");
    assert!(
        shown.contains(
            "it wrote to stdout before the call of `search` (turn 2) was sent, a line that answers nothing: {\"result\": 2}"
        ),
        "{shown}"
    );
}

#[tokio::test]
async fn debug_output_on_stdout_is_quoted_with_the_advice() {
    let mut session = start(&sh(
        "read line; echo 'DEBUG got a call'; sleep 30",
        "chatty",
    ));
    let e = session
        .call(&call("search", json!({}), 1), None)
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert!(shown.contains("DEBUG got a call"), "{shown}");
    assert!(
        shown.contains("print only answers to stdout, and anything else to stderr"),
        "{shown}"
    );
}

#[tokio::test]
async fn a_program_that_exits_mid_session_shows_its_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let program = python(
        dir.path(),
        "crash.py",
        r#"
import json, sys
sys.stdin.readline()
print(json.dumps({"result": "first"}), flush=True)
sys.stdin.readline()
print("Traceback: the index is corrupt", file=sys.stderr, flush=True)
sys.exit(3)
"#,
    );
    let mut session = start(&program);
    assert_eq!(
        ask(&mut session, "search", json!({})).await,
        ToolAnswer::ok(json!("first"))
    );
    let e = session
        .call(&call("search", json!({}), 3), None)
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{shown}");
    assert!(shown.contains("tool program `python3 crash.py`"), "{shown}");
    assert!(
        shown.contains("it closed its output instead of answering the call of `search` (turn 3)"),
        "{shown}"
    );
    assert!(shown.contains("exit status: 3"), "{shown}");
    assert!(shown.contains("Traceback: the index is corrupt"), "{shown}");
}

#[tokio::test]
async fn a_program_that_is_gone_before_a_call_is_an_error() {
    let mut session = start(&sh("exit 0", "quitter"));
    // However the write or the read notices, the call is a protocol error.
    let e = session
        .call(&call("search", json!({}), 1), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("exit status: 0"), "{e}");
}

#[tokio::test]
async fn a_program_that_never_answers_times_out() {
    let mut session = start(&sh(
        "echo 'connecting to the database' >&2; sleep 300",
        "silent",
    ));
    let e = session
        .call(
            &call("search", json!({}), 2),
            Some(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{shown}");
    assert!(shown.contains("tool program `silent`"), "{shown}");
    assert!(
        shown.contains(
            "the call of `search` (turn 2; the last line of its stderr: connecting to the database) within 300ms"
        ),
        "{shown}"
    );
    let next = session
        .call(&call("search", json!({}), 3), None)
        .await
        .unwrap_err();
    assert!(next.to_string().contains("cannot go on"), "{next}");

    // A call the loop gives no limit gets the launcher's.
    let tools = CommandTools::new(
        Vec::new(),
        DEFAULT_MAX_LINE_BYTES,
        Some(Duration::from_millis(200)),
    );
    let mut session = tools.start_session(&sh("sleep 300", "silent")).unwrap();
    let e = session
        .call(&call("search", json!({}), 1), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().contains("it wrote nothing to stderr"), "{e}");
}

#[tokio::test]
async fn a_huge_line_is_refused_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    // 64 MiB with no newline, then more: Prill stops at the cap, 1 KiB here.
    let program = python(
        dir.path(),
        "huge.py",
        r#"
import sys
sys.stdin.readline()
chunk = "x" * (1024 * 1024)
for _ in range(64):
    sys.stdout.write(chunk)
sys.stdout.flush()
"#,
    );
    let tools = CommandTools::new(Vec::new(), 1024, Some(Duration::from_secs(60)));
    let mut session = tools.start_session(&program).unwrap();
    let e = session
        .call(&call("fetch", json!({}), 1), None)
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{shown}");
    assert!(
        shown.contains(
            "its answer to the call of `fetch` (turn 1) is longer than the limit of 1 KiB"
        ),
        "{shown}"
    );
    assert!(
        shown.len() < 2000,
        "the line is not quoted: {}",
        shown.len()
    );
}

#[tokio::test]
async fn programs_that_cannot_start() {
    let e = CommandTools::default()
        .start_session(&ToolProgram::new(
            vec!["/nonexistent/tools".to_owned()],
            None,
            "/nonexistent/tools",
        ))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Spawn, "{e}");
    assert!(e.to_string().contains("`/nonexistent/tools`"), "{e}");
    let e = CommandTools::default()
        .start_session(&ToolProgram::new(Vec::new(), None, "nothing"))
        .unwrap_err();
    assert!(matches!(e, ConnectError::Spawn { .. }), "{e}");
}

/// A program that prints its whole environment to stderr, and a key cut short as a log
/// line might, then exits without answering.
const LEAKY: &str = r#"
import os, sys
sys.stdin.readline()
for name, value in sorted(os.environ.items()):
    print(f"{name}={value}", file=sys.stderr)
for name in sys.argv[1:]:
    print(f"{name}={os.environ[name]}", file=sys.stderr)
print("using key " + os.environ["OPENAI_API_KEY"][:8] + "...", file=sys.stderr, flush=True)
sys.exit(1)
"#;

#[tokio::test]
async fn the_stderr_tail_never_shows_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut program = python(dir.path(), "leaky.py", LEAKY);
    let keys = [
        ("OPENAI_API_KEY", "sk-openai-Zq81nQ4kVw0pLm"),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-Yx72bR5tUe"),
        ("AWS_SECRET_ACCESS_KEY", "aws/secret+Pk27vB9nM"),
        ("MY_GATEWAY_KEY", "gw-Lq60tY3uIo9pZ"),
    ];
    let mut tools = CommandTools::new(
        vec!["MY_GATEWAY_KEY".to_owned()],
        DEFAULT_MAX_LINE_BYTES,
        None,
    );
    for (name, value) in keys {
        tools.env.insert(name.into(), value.into());
    }
    tools
        .env
        .insert("PLAIN_SETTING".into(), "visible-value".into());
    program
        .argv
        .extend(keys.iter().map(|(name, _)| (*name).to_owned()));
    let debug = format!("{tools:?}");
    assert!(!debug.contains("sk-openai"), "{debug}");
    let mut session = tools.start_session(&program).unwrap();
    let e = session
        .call(&call("search", json!({}), 1), None)
        .await
        .unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{shown}");
    assert!(shown.contains("PLAIN_SETTING=visible-value"), "{shown}");
    for (name, value) in keys {
        assert!(!shown.contains(value), "{name}'s value leaked: {shown}");
        assert!(shown.contains(&format!("{name}=${{{name}}}")), "{shown}");
    }
    assert!(shown.contains("using key ${OPENAI_API_KEY}..."), "{shown}");
}

/// A program that ignores `SIGTERM`, and a child of it that does too, are killed after
/// the grace when a call times out; a session dropped after an answer leaves nothing
/// behind either.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn no_tool_program_outlives_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("tool.pid");
    let stubborn = sh(
        &format!(
            "trap '' TERM; sh -c \"trap '' TERM; sleep 300\" & echo $! > {}; wait",
            pidfile.display()
        ),
        "stubborn",
    );
    let mut session = start(&stubborn);
    let e = session
        .call(
            &call("search", json!({}), 1),
            Some(Duration::from_millis(500)),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    let pid = read_pid(&pidfile);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        running(pid),
        "TERM is ignored, so it runs until the grace is over"
    );
    until_gone(pid, prill_connect::GROUP_GRACE + Duration::from_secs(3)).await;
    assert!(!running(pid), "KILL after the grace ends it");

    // A session that answered and is dropped, as the loop drops it at a sample's end.
    let pidfile = dir.path().join("polite.pid");
    let polite = sh(
        &format!(
            "sleep 300 & echo $! > {}; read line; echo '{{\"result\": 1}}'; wait",
            pidfile.display()
        ),
        "polite",
    );
    let mut session = start(&polite);
    assert_eq!(
        ask(&mut session, "search", json!({})).await,
        ToolAnswer::ok(json!(1))
    );
    let pid = read_pid(&pidfile);
    assert!(running(pid));
    drop(session);
    until_gone(pid, prill_connect::GROUP_GRACE + Duration::from_secs(3)).await;
    assert!(!running(pid), "the group ends with the session");
}

/// The code block of `docs/tools.md` that starts with ```` ```lang ````.
fn documented(lang: &str) -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tools.md"))
            .unwrap();
    let fence = format!("```{lang}\n");
    let start = page.find(&fence).expect("the page has the example") + fence.len();
    let end = start + page[start..].find("```").unwrap();
    page[start..end].to_owned()
}

#[tokio::test]
async fn the_documented_python_program_works() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = start(&python(dir.path(), "shop.py", &documented("python")));
    assert_eq!(
        ask(&mut session, "checkout", json!({})).await,
        ToolAnswer::error("the cart is empty")
    );
    assert_eq!(
        ask(&mut session, "search", json!({"query": "laptop"})).await,
        ToolAnswer::ok(json!([{"sku": "LT-14", "name": "14-inch laptop", "price": 899}]))
    );
    assert_eq!(
        ask(&mut session, "add_to_cart", json!({"sku": "LT-14"})).await,
        ToolAnswer::ok(json!({"cart": ["LT-14"]}))
    );
    assert_eq!(
        ask(&mut session, "add_to_cart", json!({"sku": "nope"})).await,
        ToolAnswer::error("no product 'nope'")
    );
    assert_eq!(
        ask(&mut session, "checkout", json!({})).await,
        ToolAnswer::ok(json!({"order": "A-1001", "total": 899}))
    );
    assert_eq!(
        ask(&mut session, "refund", json!({})).await,
        ToolAnswer::error("no tool named 'refund'")
    );
    assert_eq!(
        session.state(None).await.unwrap(),
        json!({"cart": [], "orders": [{"order": "A-1001", "total": 899}]})
    );
}

#[tokio::test]
async fn the_documented_sh_program_works() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.sh");
    std::fs::write(&path, documented("sh")).unwrap();
    let program = ToolProgram::new(
        vec!["sh".to_owned(), path.display().to_string()],
        None,
        "sh tools.sh",
    );
    let mut session = start(&program);
    assert_eq!(
        ask(&mut session, "get_time", json!({})).await,
        ToolAnswer::ok(json!("2026-11-24T12:00:00Z"))
    );
    assert_eq!(
        ask(&mut session, "get_weather", json!({"city": "Paris"})).await,
        ToolAnswer::ok(json!({"forecast": "sunny", "celsius": 21}))
    );
    assert_eq!(
        ask(&mut session, "launch", json!({})).await,
        ToolAnswer::error("this program has no such tool")
    );
}

/// A program that keeps a counter and gives it as its state; `deny` refuses to.
const STATEFUL: &str = r#"
import json, sys
count = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "state":
        if count < 0:
            print(json.dumps({"error": "no state below zero"}), flush=True)
        else:
            print(json.dumps({"state": {"count": count}}), flush=True)
        continue
    count += 1 if message["tool"] == "add" else -10
    print(json.dumps({"result": count}), flush=True)
"#;

#[tokio::test]
async fn a_program_gives_its_state_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let program = python(dir.path(), "stateful.py", STATEFUL);
    let mut session = start(&program);
    ask(&mut session, "add", json!({})).await;
    ask(&mut session, "add", json!({})).await;
    assert_eq!(session.state(None).await.unwrap(), json!({"count": 2}));
    ask(&mut session, "add", json!({})).await;
    assert_eq!(
        session.state(None).await.unwrap(),
        json!({"count": 3}),
        "asked again, it gives the state as it is then"
    );
    ask(&mut session, "sub", json!({})).await;
    let refused = session.state(None).await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Protocol);
    let shown = refused.to_string();
    assert!(
        shown.contains("it answered the state request with an error: no state below zero"),
        "{shown}"
    );
    let next = session
        .call(&call("add", json!({}), 9), None)
        .await
        .unwrap_err();
    assert!(
        next.to_string()
            .contains("the session cannot go on, its answer to the state request failed"),
        "{next}"
    );
}

#[tokio::test]
async fn a_program_that_knows_no_state_request_is_an_error_that_says_what_to_answer() {
    // A program that answers a message type it does not know with an error.
    let refusing = sh(
        r#"while read -r line; do echo '{"error": "unknown message type state"}'; done"#,
        "refusing",
    );
    let mut session = start(&refusing);
    let e = session.state(None).await.unwrap_err().to_string();
    assert!(
        e.contains("with an error: unknown message type state"),
        "{e}"
    );
    assert!(e.contains("`{\"state\": ...}`"), "{e}");

    let silent = sh(
        "while read -r line; do echo '{\"result\": 1}'; done",
        "silent",
    );
    let mut session = start(&silent);
    let e = session.state(None).await.unwrap_err().to_string();
    assert!(
        e.contains("its answer to the state request has no `state`"),
        "{e}"
    );

    let mute = sh("sleep 30", "mute");
    let mut session = start(&mute);
    let e = session
        .state(Some(Duration::from_millis(300)))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(
        e.to_string()
            .contains("tool program `mute` to the state request"),
        "{e}"
    );
}

/// Records a session of the stateful program, then replays it with a program that
/// cannot start: the calls, the state and a tool error come back as recorded; a call
/// no recording answers after replayed ones is a `no_cassette` error.
#[tokio::test]
async fn a_tool_program_session_replays_without_its_program() {
    use prill_connect::cassette::{CassetteOptions, Cassettes, Mode};
    use prill_target::scope::{SampleScope, in_sample};

    let dir = tempfile::tempdir().unwrap();
    let tapes = dir.path().join("tapes");
    let program = python(dir.path(), "stateful.py", STATEFUL);
    let open = |mode| Cassettes::open(CassetteOptions::new(&tapes, mode)).unwrap();
    let scope = || SampleScope::new("case-1", "tools", 0);

    let recording = CommandTools::default().with_cassettes(Some(open(Mode::Record)));
    let live = in_sample(scope(), async {
        let mut session = recording.start(&program).unwrap();
        let first = session
            .call(&call("add", json!({}), 1), None)
            .await
            .unwrap();
        let second = session
            .call(&call("add", json!({}), 2), None)
            .await
            .unwrap();
        let state = session.state(None).await.unwrap();
        (first, second, state)
    })
    .await;
    assert_eq!(live.2, json!({"count": 2}));

    let gone = ToolProgram::new(
        vec!["/nonexistent/prill-test/tools".to_owned()],
        None,
        "gone",
    );
    let replaying = CommandTools::default().with_cassettes(Some(open(Mode::Replay)));
    let replayed = in_sample(scope(), async {
        let mut session = replaying.start(&gone).unwrap();
        // Another provider id: the key leaves it out.
        let first = session
            .call(
                &ToolCallRequest {
                    call_id: Some("call_other".into()),
                    ..call("add", json!({}), 1)
                },
                None,
            )
            .await
            .unwrap();
        let second = session
            .call(&call("add", json!({}), 2), None)
            .await
            .unwrap();
        let state = session.state(None).await.unwrap();
        let unrecorded = session
            .call(&call("add", json!({"more": 1}), 3), None)
            .await
            .unwrap_err();
        (first, second, state, unrecorded)
    })
    .await;
    assert_eq!((replayed.0, replayed.1, replayed.2), live);
    assert_eq!(replayed.3.kind(), ErrorKind::NoCassette, "{}", replayed.3);

    let mixed = CommandTools::default().with_cassettes(Some(open(Mode::ReplayOrRecord)));
    let error = in_sample(scope(), async {
        let mut session = mixed.start(&gone).unwrap();
        session
            .call(&call("add", json!({}), 1), None)
            .await
            .unwrap();
        session
            .call(&call("sub", json!({}), 2), None)
            .await
            .unwrap_err()
    })
    .await;
    assert_eq!(error.kind(), ErrorKind::NoCassette);
    assert!(
        error.to_string().contains("the requests before it were replayed, so the program cannot be started in the middle of its session"),
        "{error}"
    );
}
