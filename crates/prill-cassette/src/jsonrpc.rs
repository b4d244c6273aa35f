//! A recorded JSON-RPC answer made to answer the request sent now: the `id` of a
//! request is volatile (a counter, left out of the key), so a replayed response carries
//! the id of the request that was recorded, and is given the id of the one sent.

use serde_json::Value;

use crate::format::{Chunk, RecordedResponse};

/// The id of `body` when it is a JSON-RPC request (`"jsonrpc"` and an `id`): the id the
/// replayed answer must carry.
pub fn request_id(body: &Value) -> Option<&Value> {
    body.get("jsonrpc")?;
    body.get("id").filter(|id| !id.is_null())
}

/// `recorded` with each JSON-RPC response in it (a JSON body, a batch, or the `data:` of
/// server-sent events) answering `id`, in the form the recording used (neuro-san sends
/// ids back as strings). The body becomes one chunk at the time of the last one, so it
/// comes no sooner than recorded; a body that is not UTF-8, or holds no response, is
/// left as it was.
pub fn answering(recorded: &RecordedResponse, id: &Value) -> RecordedResponse {
    let mut bytes = Vec::new();
    for chunk in &recorded.chunks {
        match chunk.bytes() {
            Some(b) => bytes.extend_from_slice(&b),
            None => return recorded.clone(),
        }
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return recorded.clone();
    };
    let is_sse = recorded.headers.iter().any(|(name, value)| {
        name == "content-type" && value.trim_start().starts_with("text/event-stream")
    });
    let rewritten = if is_sse {
        rewrite_events(&text, id)
    } else {
        rewrite_json(&text, id)
    };
    let Some(text) = rewritten else {
        return recorded.clone();
    };
    let at_ms = recorded.chunks.last().map_or(0, |c| c.at_ms);
    RecordedResponse {
        chunks: vec![Chunk::new(at_ms, text.into_bytes())],
        ..recorded.clone()
    }
}

/// A JSON body (one response or a batch) with its responses answering `id`.
fn rewrite_json(text: &str, id: &Value) -> Option<String> {
    let mut value: Value = serde_json::from_str(text).ok()?;
    set_id(&mut value, id).then(|| value.to_string())
}

/// An event stream with the responses among its events' data answering `id`; the other
/// lines kept as they were.
fn rewrite_events(text: &str, id: &Value) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut event: Vec<&str> = Vec::new();
    for line in text.split_inclusive('\n') {
        event.push(line);
        if line.trim_end_matches(['\r', '\n']).is_empty() {
            changed |= flush_event(&mut event, id, &mut out);
        }
    }
    changed |= flush_event(&mut event, id, &mut out);
    changed.then_some(out)
}

/// Writes the lines of one event to `out`, its data replaced when it is a response;
/// whether it was.
fn flush_event(event: &mut Vec<&str>, id: &Value, out: &mut String) -> bool {
    let data: Vec<&str> = event
        .iter()
        .filter_map(|line| line.trim_end_matches(['\r', '\n']).strip_prefix("data:"))
        .map(|rest| rest.strip_prefix(' ').unwrap_or(rest))
        .collect();
    let mut value: Option<Value> = serde_json::from_str(&data.join("\n")).ok();
    let changed = value.as_mut().is_some_and(|v| set_id(v, id));
    let mut wrote_data = false;
    for line in event.drain(..) {
        match (&value, line.starts_with("data:")) {
            (Some(value), true) if changed => {
                if !wrote_data {
                    out.push_str(&format!("data: {value}\n"));
                    wrote_data = true;
                }
            }
            _ => out.push_str(line),
        }
    }
    changed
}

/// Gives the responses in `value` the id `id` (as a string when theirs was one); whether
/// there was any.
fn set_id(value: &mut Value, id: &Value) -> bool {
    match value {
        Value::Array(batch) => {
            // Every response of the batch, not only up to the first.
            let mut any = false;
            for message in batch {
                any |= set_id(message, id);
            }
            any
        }
        Value::Object(message) => {
            let is_response = message.get("method").is_none()
                && (message.contains_key("result") || message.contains_key("error"));
            let Some(recorded) = message.get_mut("id").filter(|_| is_response) else {
                return false;
            };
            if recorded.is_null() {
                return false;
            }
            *recorded = match (&*recorded, id) {
                (Value::String(_), Value::Number(n)) => Value::String(n.to_string()),
                _ => id.clone(),
            };
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(content_type: &str, chunks: &[&str]) -> RecordedResponse {
        RecordedResponse {
            status: 200,
            headers: vec![("content-type".into(), content_type.into())],
            chunks: chunks
                .iter()
                .enumerate()
                .map(|(i, c)| Chunk::new(i as u64 * 10, c.as_bytes().to_vec()))
                .collect(),
            broke_off: None,
        }
    }

    fn body(r: &RecordedResponse) -> String {
        r.chunks.iter().filter_map(|c| c.text.clone()).collect()
    }

    #[test]
    fn a_json_answer_takes_the_sent_id_in_the_recorded_form() {
        let recorded = response(
            "application/json",
            &[r#"{"jsonrpc":"2.0","id":"3","#, r#""result":{}}"#],
        );
        let replayed = answering(&recorded, &json!(1));
        assert_eq!(replayed.chunks.len(), 1);
        assert_eq!(replayed.chunks[0].at_ms, 10);
        let value: Value = serde_json::from_str(&body(&replayed)).unwrap();
        assert_eq!(value["id"], json!("1"));
        let numeric = response("application/json", &[r#"{"id":3,"error":{}}"#]);
        let value: Value = serde_json::from_str(&body(&answering(&numeric, &json!(7)))).unwrap();
        assert_eq!(value["id"], json!(7));
    }

    #[test]
    fn event_streams_keep_their_other_lines_and_requests_of_the_server() {
        let text = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"note\",\"id\":9}\n\n\
                    event: message\r\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":4,\"result\":{\"a\":1}}\r\n\r\n";
        let replayed = answering(&response("text/event-stream", &[text]), &json!(2));
        let out = body(&replayed);
        assert!(out.starts_with("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"note\",\"id\":9}\n\nevent: message\r\n"), "{out}");
        let data = out.lines().nth(4).unwrap().strip_prefix("data: ").unwrap();
        let value: Value = serde_json::from_str(data).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"a": 1}})
        );
        let untouched = response("text/plain", &["not json"]);
        assert_eq!(answering(&untouched, &json!(1)), untouched);
        assert_eq!(
            request_id(&json!({"jsonrpc": "2.0", "id": 5})),
            Some(&json!(5))
        );
        assert_eq!(request_id(&json!({"jsonrpc": "2.0", "method": "n"})), None);
        assert_eq!(request_id(&json!({"id": 5})), None);
    }
}
