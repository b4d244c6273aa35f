//! An MCP server of the official Python SDK (`mcp`, which neuro-san's venv holds) as a
//! tool loop's tools (`framework_config.tool_mcp`), through `prill run`: a `FastMCP`
//! server over stdio answers one tool and fails another, the fake model reads both
//! answers, the case passes; recorded, it replays with the server gone.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

use crate::server::{run, tail};

/// The server, as the SDK's documentation writes one.
const SERVER: &str = r##"
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("shop")

@mcp.tool()
def order_status(order_id: str) -> str:
    """The status of an order."""
    return {"#W1": "shipped"}.get(order_id, "unknown")

@mcp.tool()
def cancel_order(order_id: str) -> str:
    """Cancel an order that has not shipped."""
    raise ValueError(f"order {order_id} has shipped and cannot be cancelled")

if __name__ == "__main__":
    mcp.run()
"##;

/// The test: the tools' definitions, the server, and checks on what the model says.
fn spec(python: &Path) -> String {
    format!(
        r##"name: shop over mcp
model: gpt-4o-mini
provider: openai
framework: openai-sdk
inputs: {{query: "Where is order #W1? Cancel it if you can."}}
tools:
  - name: order_status
    description: The status of an order.
    parameters: {{type: object, properties: {{order_id: {{type: string}}}}, required: [order_id]}}
  - name: cancel_order
    description: Cancel an order that has not shipped.
    parameters: {{type: object, properties: {{order_id: {{type: string}}}}, required: [order_id]}}
framework_config:
  tool_mcp: [{python:?}, server.py]
assertions:
  - must_contain: "status: shipped"
  - must_contain: "cannot be cancelled"
  - tool_sequence: [order_status, cancel_order]
"##,
        python = python.display().to_string()
    )
}

/// The model: asks the status, then to cancel, then says what the tools answered.
fn model(body: &Value) -> Option<Reply> {
    let tools: Vec<String> = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            // A tool's answer goes to the model as JSON: a text is a JSON string.
            let content = m["content"].as_str().unwrap_or_default();
            serde_json::from_str::<String>(content).unwrap_or_else(|_| content.to_owned())
        })
        .collect();
    Some(match tools.as_slice() {
        [] => Reply::tool_call("order_status", json!({"order_id": "#W1"})),
        [_] => Reply::tool_call("cancel_order", json!({"order_id": "#W1"})),
        [status, cancel, ..] => Reply::text(format!("status: {status}; cancel: {cancel}")),
    })
}

fn prill(dir: &Path, prill: &Path, url: &str, extra: &[&str]) -> Result<Value, String> {
    let mut command = Command::new(prill);
    command
        .current_dir(dir)
        .args(["run", "shop.yaml", "--no-cache", "--json", "report.json"])
        .args(extra)
        .env("OPENAI_BASE_URL", url)
        .env("OPENAI_API_KEY", "sk-fake");
    let out = run(command, Duration::from_secs(120))?;
    let text = std::fs::read_to_string(dir.join("report.json")).map_err(|e| {
        format!(
            "no report ({e}); stderr: {}",
            tail(&String::from_utf8_lossy(&out.stderr), 3000)
        )
    })?;
    let report: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let verdict = &report["units"][0]["verdict"];
    if verdict != "passed" {
        return Err(format!(
            "the case is {verdict}: {}\n{}",
            report["units"][0],
            tail(&String::from_utf8_lossy(&out.stderr), 3000)
        ));
    }
    Ok(report)
}

/// The trial.
pub(crate) fn official_sdk_server_answers_a_tool_loop(
    python: &Path,
    prill_binary: &Path,
) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let fake = runtime.block_on(FakeOpenAi::start());
    fake.respond_with(model);
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = dir.path();
    std::fs::write(dir.join("server.py"), SERVER).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("shop.yaml"), spec(python)).map_err(|e| e.to_string())?;
    let url = fake.base_url();
    prill(dir, prill_binary, &url, &["--record", "tapes"])?;
    // Replayed with no server to start and no model to call.
    drop(fake);
    drop(runtime);
    std::fs::remove_file(dir.join("server.py")).map_err(|e| e.to_string())?;
    let report = prill(dir, prill_binary, &url, &["--replay", "tapes"])?;
    match report["units"][0]["source"].as_str() {
        Some("replayed") => Ok(()),
        other => Err(format!("the replayed unit's source is {other:?}")),
    }
}
