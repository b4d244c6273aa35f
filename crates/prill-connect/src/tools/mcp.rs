//! An MCP server as a tool loop's tools (`framework_config.tool_mcp`): the Model
//! Context Protocol over stdio, as its specification (2025-06-18) has it. Each message
//! is one line of JSON-RPC 2.0. Prill opens the session with `initialize` and the
//! `notifications/initialized` notification before the first call, then sends a
//! `tools/call` request per call and waits for the response of the same `id`. On the
//! way it skips the server's notifications (logs, progress), answers its `ping` with
//! an empty result and any other request with the error "method not found".
//!
//! A call's result becomes the answer a `tool_command` program would give, so the loop,
//! the reports and the cassettes see no difference: `isError: true` is a tool that
//! failed (`{"error": <its text>}`, and the model is told); otherwise the answer is the
//! text of its `content` (its text items joined by newlines), as clients give it to a
//! model, else its `structuredContent`, else the `content` itself. A JSON-RPC error, a response that
//! is neither, and everything a program may do wrong (see [`super`]) error the sample.
//! An MCP server gives no end state: the state request is refused.

use serde_json::{Map, Value, json};

use super::{Ask, CommandSession};
use crate::decode::values_of_line;
use crate::error::{ConnectError, cut};

/// The protocol version Prill asks for (a server may answer with another it supports).
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";

/// Where an MCP session is.
#[derive(Debug, Default)]
pub(crate) struct McpState {
    /// Whether `initialize` was answered and `notifications/initialized` sent.
    ready: bool,
    /// The id of the last request sent.
    last_id: u64,
}

impl CommandSession {
    /// `ask` as MCP: the session opened first when it is not yet, then a `tools/call`;
    /// the answer's object as a `tool_command` program would give it.
    pub(super) async fn mcp_exchange(
        &mut self,
        ask: Ask<'_>,
    ) -> Result<Map<String, Value>, ConnectError> {
        let Ask::Call(call) = ask else {
            let message = "an MCP tool server gives no end state: `expect_state` needs a `tool_command` program that answers the state request (docs/tools.md)".to_owned();
            return Err(self.protocol(message, false).await);
        };
        if !self.mcp.as_ref().is_some_and(|m| m.ready) {
            let params = json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "prill", "version": env!("CARGO_PKG_VERSION")},
            });
            self.request("initialize", params, "the MCP `initialize` request")
                .await?;
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            self.send_line(&line_of(&note), "the `initialized` notification")
                .await?;
            if let Some(mcp) = &mut self.mcp {
                mcp.ready = true;
            }
        }
        let params = json!({"name": call.name, "arguments": call.arguments});
        let result = self.request("tools/call", params, &ask.about()).await?;
        match answer_of(result) {
            Ok(answer) => Ok(answer),
            Err(message) => Err(self
                .protocol(format!("{message} ({})", ask.about()), false)
                .await),
        }
    }

    /// Sends request `method` with `params` and waits for its response's `result`.
    async fn request(
        &mut self,
        method: &str,
        params: Value,
        about: &str,
    ) -> Result<Value, ConnectError> {
        let id = match &mut self.mcp {
            Some(mcp) => {
                mcp.last_id += 1;
                mcp.last_id
            }
            None => 1,
        };
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&line_of(&request), about).await?;
        loop {
            let (line, ended) = self.next_line(about).await?;
            let message = match message_of(&line) {
                Ok(message) => message,
                Err(why) => {
                    return Err(self
                        .protocol(format!("its answer to {about} {why}"), ended)
                        .await);
                }
            };
            match (message.get("id"), message.get("method")) {
                // The server's own request: `ping` is answered, anything else refused.
                (Some(their_id), Some(their_method)) => {
                    let answer = if their_method == "ping" {
                        json!({"jsonrpc": "2.0", "id": their_id, "result": {}})
                    } else {
                        json!({"jsonrpc": "2.0", "id": their_id, "error": {"code": -32601, "message": "method not found"}})
                    };
                    self.send_line(&line_of(&answer), about).await?;
                }
                // A notification: a log line, progress.
                (None, Some(_)) => {}
                (Some(their_id), None) if their_id.as_u64() == Some(id) => {
                    return match (message.get("result"), message.get("error")) {
                        (Some(result), None) => Ok(result.clone()),
                        (None, Some(error)) => {
                            let text = format!(
                                "it answered {about} with an error: {}",
                                cut(&error.to_string(), 300)
                            );
                            Err(self.protocol(text, ended).await)
                        }
                        _ => {
                            let text = format!(
                                "its response to {about} has neither `result` nor `error` (or both): {}",
                                cut(&Value::Object(message.clone()).to_string(), 200)
                            );
                            Err(self.protocol(text, ended).await)
                        }
                    };
                }
                _ => {
                    let text = format!(
                        "it sent a response to a request Prill did not make while {about} waited (id {id}): {}",
                        cut(&Value::Object(message.clone()).to_string(), 200)
                    );
                    return Err(self.protocol(text, ended).await);
                }
            }
        }
    }
}

/// A message as the line it is sent on.
fn line_of(message: &Value) -> Vec<u8> {
    let mut bytes = message.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// The JSON-RPC message of a line, or what is wrong with it.
fn message_of(line: &[u8]) -> Result<Map<String, Value>, String> {
    let quoted = || cut(String::from_utf8_lossy(line).trim(), 200);
    let mut values = values_of_line(line).map_err(|e| {
        format!(
            "is not JSON ({e}): {}; an MCP server over stdio writes only its messages to stdout",
            quoted()
        )
    })?;
    match (values.len(), values.pop()) {
        (1, Some(Value::Object(message))) => Ok(message),
        _ => Err(format!("is not one JSON-RPC message: {}", quoted())),
    }
}

/// A `tools/call` result as the answer a `tool_command` program would give.
fn answer_of(result: Value) -> Result<Map<String, Value>, String> {
    let Value::Object(mut result) = result else {
        return Err(format!(
            "the result of `tools/call` is not an object: {}",
            cut(&result.to_string(), 200)
        ));
    };
    let content = result.remove("content").unwrap_or(Value::Null);
    let text = text_of(&content);
    let mut answer = Map::new();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = text.unwrap_or_else(|| content.to_string());
        answer.insert("error".to_owned(), Value::String(message));
        return Ok(answer);
    }
    // As clients give a model a tool's answer (the OpenAI Agents SDK's and Claude's
    // by default): its text; the structured content, which the specification has a
    // server repeat as text, only when there is no text.
    let value = match (text, result.remove("structuredContent")) {
        (Some(text), _) => Value::String(text),
        (None, Some(structured)) => structured,
        (None, None) => content,
    };
    answer.insert("result".to_owned(), value);
    Ok(answer)
}

/// The text items of a result's `content`, joined by newlines, when every item is text.
fn text_of(content: &Value) -> Option<String> {
    let items = content.as_array()?;
    let texts: Option<Vec<&str>> = items
        .iter()
        .map(|item| {
            (item.get("type").and_then(Value::as_str) == Some("text"))
                .then(|| item.get("text").and_then(Value::as_str))
                .flatten()
        })
        .collect();
    texts.filter(|t| !t.is_empty()).map(|t| t.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_become_a_programs_answers() {
        let text = json!({"content": [{"type": "text", "text": "3 hits"}, {"type": "text", "text": "more"}]});
        assert_eq!(
            Value::Object(answer_of(text).unwrap()),
            json!({"result": "3 hits\nmore"})
        );
        let failed =
            json!({"content": [{"type": "text", "text": "no such order"}], "isError": true});
        assert_eq!(
            Value::Object(answer_of(failed).unwrap()),
            json!({"error": "no such order"})
        );
        let structured = json!({"content": [{"type": "text", "text": "{\"n\":3}"}], "structuredContent": {"n": 3}});
        assert_eq!(
            Value::Object(answer_of(structured).unwrap()),
            json!({"result": "{\"n\":3}"})
        );
        let only_structured = json!({"content": [], "structuredContent": {"n": 3}});
        assert_eq!(
            Value::Object(answer_of(only_structured).unwrap()),
            json!({"result": {"n": 3}})
        );
        let image =
            json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]});
        assert_eq!(
            Value::Object(answer_of(image).unwrap()),
            json!({"result": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]})
        );
        assert!(answer_of(json!("x")).is_err());
    }
}
