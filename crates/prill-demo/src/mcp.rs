//! `POST /mcp`: MCP 2025-06-18 over plain JSON-RPC 2.0 (one JSON response per request,
//! no SSE, no sessions), with one tool per agent, as neuro-san serves it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, stream};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Request, Response, StatusCode};
use serde_json::{Map, Value, json};

use crate::body::{Active, Body, BodyError, Chunks, full, streamed};
use crate::conversation::Exchange;
use crate::faults::{Fault, HUGE_LINE_BYTES, huge_line_count};
use crate::routes::{json_response, read_body, status_only};
use crate::server::Shared;
use crate::timed::RequestBody;
use crate::{DemoAgent, pyjson};

/// The MCP protocol version the server speaks.
pub const MCP_PROTOCOL_VERSION: &str = "2025-06-18";

/// The versions accepted in the `MCP-Protocol-Version` header (a request without the header
/// is taken as 2025-03-26, as the MCP spec says).
const SUPPORTED_VERSIONS: [&str; 2] = [MCP_PROTOCOL_VERSION, "2025-03-26"];

/// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// Answers one MCP request.
pub(crate) async fn handle(shared: Arc<Shared>, request: Request<RequestBody>) -> Response<Body> {
    let fault = match Fault::from_headers(request.headers()) {
        Ok(fault) => fault,
        Err(response) => return *response,
    };
    let version = request
        .headers()
        .get("mcp-protocol-version")
        .map(|value| value.to_str().unwrap_or("").trim().to_owned());
    let body = match read_body(request.into_body()).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            PARSE_ERROR,
            "Invalid JSON format",
        );
    };
    // neuro-san echoes every request id as a string (`1` comes back as `"1"`).
    let id = match message.get("id") {
        Some(Value::Number(n)) => Value::String(n.to_string()),
        Some(other) => other.clone(),
        None => Value::Null,
    };
    let method = message.get("method").and_then(Value::as_str);
    let (Some(method), Some("2.0")) = (method, message.get("jsonrpc").and_then(Value::as_str))
    else {
        return error(
            StatusCode::BAD_REQUEST,
            &id,
            INVALID_REQUEST,
            "not a json-rpc 2.0 request",
        );
    };
    if method != "initialize"
        && let Some(version) =
            version.filter(|version| !SUPPORTED_VERSIONS.contains(&version.as_str()))
    {
        let text = format!("unsupported protocol version {version}");
        return error(StatusCode::BAD_REQUEST, &id, INVALID_REQUEST, &text);
    }
    if method.starts_with("notifications/") || message.get("id").is_none() {
        return status_only(StatusCode::ACCEPTED);
    }
    let params = message.get("params").cloned().unwrap_or_else(|| json!({}));
    match method {
        "initialize" => result(&id, initialize(&params)),
        "ping" => result(&id, json!({})),
        "tools/list" => result(&id, tools_list()),
        "tools/call" => tools_call(&shared, &id, &params, fault).await,
        _ => error(
            StatusCode::OK,
            &id,
            METHOD_NOT_FOUND,
            &format!("method not found: {method}"),
        ),
    }
}

/// The `initialize` result: the client's version when it is one we speak, else ours.
fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|asked| SUPPORTED_VERSIONS.contains(asked))
        .unwrap_or(MCP_PROTOCOL_VERSION);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "prill-demo", "title": "Prill demo server", "version": env!("CARGO_PKG_VERSION")},
        "instructions": ""
    })
}

/// The input schema of every tool: a neuro-san `ChatRequest`.
fn chat_request_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "user_message": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["HUMAN"]},
                    "text": {"type": "string", "description": "What to ask the agent."}
                },
                "required": ["text"]
            },
            "sly_data": {"type": "object", "description": "Data kept out of the chat stream."},
            "chat_context": {"type": "object", "description": "The chat_context of the previous answer, to continue a conversation."},
            "chat_filter": {
                "type": "object",
                "properties": {"chat_filter_type": {"type": "string", "enum": ["UNKNOWN", "MINIMAL", "MAXIMAL"]}}
            }
        },
        "required": ["user_message"],
        "additionalProperties": false
    })
}

fn tools_list() -> Value {
    let tools: Vec<Value> = DemoAgent::ALL
        .iter()
        .map(|agent| {
            json!({
                "name": agent.name(),
                "description": agent.description(),
                "inputSchema": chat_request_schema(),
            })
        })
        .collect();
    json!({"tools": tools})
}

/// `tools/call`: runs the agent named `name` on the `ChatRequest` in `arguments` (or on
/// `{"input": text}`, as older neuro-san clients send).
async fn tools_call(
    shared: &Arc<Shared>,
    id: &Value,
    params: &Value,
    fault: Option<Fault>,
) -> Response<Body> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return error(
            StatusCode::OK,
            id,
            INVALID_PARAMS,
            "tools/call needs the name of a tool",
        );
    };
    let Some(agent) = DemoAgent::from_name(name) else {
        return error(
            StatusCode::OK,
            id,
            INVALID_PARAMS,
            &format!("unknown tool: {name}"),
        );
    };
    let arguments = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let chat_request = match arguments.get("input").and_then(Value::as_str) {
        Some(input) if arguments.get("user_message").is_none() => {
            json!({"user_message": {"type": "HUMAN", "text": input}})
        }
        _ => arguments,
    };
    if let Some(fault) = fault {
        if let Some(response) = fault.status_response(shared) {
            return response;
        }
        if let Some(response) = fault_response(shared, id, &fault) {
            return response;
        }
    }
    let Some(exchange) = Exchange::run(agent, &chat_request) else {
        return result(
            id,
            json!({"content": [{"type": "text", "text": "the request has no user_message text"}], "isError": true}),
        );
    };
    if let Some(delay) = exchange.delay() {
        // Counted while it waits, so tests can see a disconnect cancel the call.
        let _active = Active::new(shared);
        tokio::time::sleep(delay).await;
    }
    let mut structured = Map::new();
    if let Some(structure) = exchange.structure() {
        structured.insert("structure".to_owned(), Value::Object(structure.clone()));
    }
    structured.insert("chat_context".to_owned(), exchange.chat_context().clone());
    if let Some(sly_data) = exchange.sly_data() {
        structured.insert("sly_data".to_owned(), Value::Object(sly_data.clone()));
    }
    result(
        id,
        json!({
            "content": [{"type": "text", "text": exchange.text()}],
            "structuredContent": structured,
            "isError": false
        }),
    )
}

/// The response of a streaming fault mode for MCP (a 200 `application/json` body that is
/// cut, broken, endless or huge); `None` for the other modes.
fn fault_response(shared: &Arc<Shared>, id: &Value, fault: &Fault) -> Option<Response<Body>> {
    let head = format!(
        "{{\"jsonrpc\": \"2.0\", \"id\": {}, \"result\": ",
        pyjson::to_string(id)
    );
    let (body, status) = match fault {
        Fault::Drop => {
            let cut = stream::once(async {
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(10)).await;
                Err(BodyError::Dropped)
            });
            let chunks: Chunks = Box::pin(stream::iter([Ok(Bytes::from(head))]).chain(cut));
            (streamed(shared, chunks, false), StatusCode::OK)
        }
        Fault::Malformed => (
            full(format!("{head}{{\"content\": [this is not json")),
            StatusCode::OK,
        ),
        Fault::Hang => (
            streamed(shared, Box::pin(stream::pending()), true),
            StatusCode::OK,
        ),
        Fault::Huge(bytes) => {
            let open = format!("{head}{{\"content\": [{{\"type\": \"text\", \"text\": \"");
            let padding = Bytes::from(vec![b'x'; HUGE_LINE_BYTES]);
            let close = Bytes::from_static(b"\"}], \"isError\": false}}");
            let chunks: Chunks = Box::pin(
                stream::iter([Ok(Bytes::from(open))])
                    .chain(stream::iter(
                        std::iter::repeat_n(padding, huge_line_count(*bytes)).map(Ok),
                    ))
                    .chain(stream::iter([Ok(close)])),
            );
            (streamed(shared, chunks, true), StatusCode::OK)
        }
        _ => return None,
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Some(response)
}

/// A JSON-RPC result.
fn result(id: &Value, result: Value) -> Response<Body> {
    json_response(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

/// A JSON-RPC error with the given http status.
fn error(status: StatusCode, id: &Value, code: i64, message: &str) -> Response<Body> {
    json_response(
        status,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}
