//! MCP servers as a tool loop's tools (`framework_config.tool_mcp`): the session over
//! stdio against a small MCP server written in Python's standard library from the
//! specification (2025-06-18): the handshake before the first call, the server's
//! notifications skipped and its `ping` answered, a tool's own failure told to the model,
//! and a JSON-RPC error erroring the sample. The official Python SDK's server is tested
//! in `crates/prill-cli/tests/neuro_san_real` (its venv has it).

use std::path::Path;

use prill_connect::ErrorKind;
use prill_connect::tools::CommandTools;
use prill_target::tools::{ToolAnswer, ToolProgram, ToolSession};
use serde_json::json;

use crate::tools_command::call;

/// The server: `search` logs, pings Prill and waits for the pong, then answers its
/// query's length; `fail` is a tool that fails; `crash` a JSON-RPC error. It refuses a
/// call before the handshake, and a second `initialize`.
const SERVER: &str = r#"
import json, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

initialized = False
for line in sys.stdin:
    message = json.loads(line)
    method, id_ = message.get("method"), message.get("id")
    if method == "initialize":
        assert not initialized, "initialize twice"
        assert message["params"]["protocolVersion"] == "2025-06-18", message
        send({"jsonrpc": "2.0", "id": id_, "result": {"protocolVersion": "2025-03-26",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "shop", "version": "1"}}})
    elif method == "notifications/initialized":
        initialized = True
    elif method == "tools/call":
        if not initialized:
            send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32002, "message": "not initialized"}})
            continue
        name, args = message["params"]["name"], message["params"]["arguments"]
        if name == "search":
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "searching"}})
            send({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
            pong = json.loads(sys.stdin.readline())
            assert pong == {"jsonrpc": "2.0", "id": "ping-1", "result": {}}, pong
            send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": str(len(args["q"])) + " hits"}]}})
        elif name == "fail":
            send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": "no such order"}], "isError": True}})
        else:
            send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32602, "message": "unknown tool " + name}})
"#;

fn server(dir: &Path) -> ToolProgram {
    std::fs::write(dir.join("server.py"), SERVER).unwrap();
    ToolProgram::new(
        vec!["python3".to_owned(), "server.py".to_owned()],
        Some(dir),
        "python3 server.py",
    )
    .mcp()
}

#[tokio::test]
async fn an_mcp_servers_tools_answer_calls_after_the_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = CommandTools::default()
        .start_session(&server(dir.path()))
        .unwrap();
    let answer = session
        .call(&call("search", json!({"q": "boots"}), 1), None)
        .await
        .unwrap();
    assert_eq!(answer, ToolAnswer::ok(json!("5 hits")));
    let answer = session
        .call(&call("fail", json!({}), 2), None)
        .await
        .unwrap();
    assert_eq!(answer, ToolAnswer::error("no such order"));
    // The same session: no second handshake.
    let answer = session
        .call(&call("search", json!({"q": "hat"}), 3), None)
        .await
        .unwrap();
    assert_eq!(answer, ToolAnswer::ok(json!("3 hits")));
    let e = session
        .call(&call("crash", json!({}), 4), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("MCP tool server `python3 server.py`"),
        "{text}"
    );
    assert!(text.contains("unknown tool crash"), "{text}");
    // An MCP server keeps no state to give.
    let dir = tempfile::tempdir().unwrap();
    let mut fresh = CommandTools::default()
        .start_session(&server(dir.path()))
        .unwrap();
    let e = fresh.state(None).await.unwrap_err();
    assert!(e.to_string().contains("gives no end state"), "{e}");
}
