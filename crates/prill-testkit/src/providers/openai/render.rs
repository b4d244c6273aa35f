//! The OpenAI fake's answers written straight into bytes: a `chat.completion`, or the
//! `chat.completion.chunk` events of a stream in one buffer with where each ends.
//!
//! Nothing is built as a JSON value first: the fixed parts are literal text and every
//! string from the script or the request is escaped as `serde_json` escapes it, so the
//! bytes are those of the JSON objects the fake used to build (the same fields, in the
//! same order), at a fraction of the cost.

use std::ops::Range;

use bytes::Bytes;

use crate::providers::ScriptedToolCall;
use crate::providers::scripted::pieces;

/// Everything of an answer but how it is sent.
pub(super) struct Completion<'a> {
    /// The model, as the request names it.
    pub(super) model: &'a str,
    /// The text (may be empty).
    pub(super) text: &'a str,
    /// The tool calls, in order.
    pub(super) tool_calls: &'a [ScriptedToolCall],
    /// Input and output tokens.
    pub(super) usage: (u64, u64),
    /// The finish reason.
    pub(super) finish: &'a str,
}

/// `value` as a JSON string, escaped as `serde_json` does.
fn push_json_str(out: &mut Vec<u8>, value: &str) {
    // Writing to a Vec cannot fail, and a str always serializes.
    serde_json::to_writer(&mut *out, value).expect("a string serializes into a Vec");
}

fn push_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(n.to_string().as_bytes());
}

fn push_usage(out: &mut Vec<u8>, (input, output): (u64, u64)) {
    out.extend_from_slice(b"{\"prompt_tokens\":");
    push_u64(out, input);
    out.extend_from_slice(b",\"completion_tokens\":");
    push_u64(out, output);
    out.extend_from_slice(b",\"total_tokens\":");
    push_u64(out, input + output);
    out.push(b'}');
}

/// The whole `chat.completion` answer.
pub(super) fn completion(c: &Completion<'_>) -> Bytes {
    let mut out = Vec::with_capacity(320 + c.text.len() + 64 * c.tool_calls.len());
    out.extend_from_slice(
        b"{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":",
    );
    push_json_str(&mut out, c.model);
    out.extend_from_slice(
        b",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":",
    );
    if c.text.is_empty() && !c.tool_calls.is_empty() {
        out.extend_from_slice(b"null");
    } else {
        push_json_str(&mut out, c.text);
    }
    out.extend_from_slice(b",\"refusal\":null");
    if !c.tool_calls.is_empty() {
        out.extend_from_slice(b",\"tool_calls\":[");
        for (i, call) in c.tool_calls.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"id\":\"call_");
            push_u64(&mut out, i as u64);
            out.extend_from_slice(b"\",\"type\":\"function\",\"function\":{\"name\":");
            push_json_str(&mut out, &call.name);
            out.extend_from_slice(b",\"arguments\":");
            push_json_str(&mut out, &call.arguments);
            out.extend_from_slice(b"}}");
        }
        out.push(b']');
    }
    out.extend_from_slice(b"},\"logprobs\":null,\"finish_reason\":");
    push_json_str(&mut out, c.finish);
    out.extend_from_slice(b"}],\"usage\":");
    push_usage(&mut out, c.usage);
    out.extend_from_slice(b",\"system_fingerprint\":\"fp_fake\"}");
    Bytes::from(out)
}

/// The events of a stream, written one after another into one buffer.
struct Events {
    out: Vec<u8>,
    /// Every chunk's fields before its choices, written once.
    head: Vec<u8>,
    include_usage: bool,
    /// Where each event written so far ends.
    ends: Vec<usize>,
}

impl Events {
    /// Starts a chunk: its fixed fields, then `choices` opened.
    fn open(&mut self) {
        self.out.extend_from_slice(&self.head);
    }

    /// Ends a chunk whose choices were written, with `usage` when it is included.
    fn close(&mut self, usage: Option<(u64, u64)>) {
        if self.include_usage {
            self.out.extend_from_slice(b",\"usage\":");
            match usage {
                Some(usage) => push_usage(&mut self.out, usage),
                None => self.out.extend_from_slice(b"null"),
            }
        }
        self.out.extend_from_slice(b"}\n\n");
        self.ends.push(self.out.len());
    }

    /// A chunk whose one choice has the delta `write` writes and `finish`.
    fn delta(&mut self, finish: Option<&str>, write: impl FnOnce(&mut Vec<u8>)) {
        self.open();
        self.out.extend_from_slice(b"[{\"index\":0,\"delta\":");
        write(&mut self.out);
        self.out
            .extend_from_slice(b",\"logprobs\":null,\"finish_reason\":");
        match finish {
            Some(finish) => push_json_str(&mut self.out, finish),
            None => self.out.extend_from_slice(b"null"),
        }
        self.out.extend_from_slice(b"}]");
        self.close(None);
    }

    /// The chunks of the `i`th tool call: its name, then its arguments in pieces.
    fn tool_call(&mut self, i: usize, call: &ScriptedToolCall) {
        self.delta(None, |out| {
            out.extend_from_slice(b"{\"tool_calls\":[{\"index\":");
            push_u64(out, i as u64);
            out.extend_from_slice(b",\"id\":\"call_");
            push_u64(out, i as u64);
            out.extend_from_slice(b"\",\"type\":\"function\",\"function\":{\"name\":");
            push_json_str(out, &call.name);
            out.extend_from_slice(b",\"arguments\":\"\"}}]}");
        });
        for piece in pieces(&call.arguments, 5).iter().filter(|p| !p.is_empty()) {
            self.delta(None, |out| {
                out.extend_from_slice(b"{\"tool_calls\":[{\"index\":");
                push_u64(out, i as u64);
                out.extend_from_slice(b",\"function\":{\"arguments\":");
                push_json_str(out, piece);
                out.extend_from_slice(b"}}]}");
            });
        }
    }
}

/// The server-sent events of a streamed answer whose text comes in `text_pieces`: the
/// role, the text, each tool call, the finish reason, the usage when `include_usage`,
/// then `data: [DONE]`; all in one buffer, with the range of each event in it.
pub(super) fn chunks<S: AsRef<str>>(
    c: &Completion<'_>,
    text_pieces: &[S],
    include_usage: bool,
) -> (Bytes, Vec<Range<usize>>) {
    let mut head = Vec::with_capacity(160 + c.model.len());
    head.extend_from_slice(
        b"data: {\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":",
    );
    push_json_str(&mut head, c.model);
    head.extend_from_slice(b",\"system_fingerprint\":\"fp_fake\",\"choices\":");
    let events = 4 + text_pieces.len() + 4 * c.tool_calls.len();
    let mut e = Events {
        out: Vec::with_capacity(events * (head.len() + 96) + c.text.len()),
        head,
        include_usage,
        ends: Vec::with_capacity(events),
    };
    e.delta(None, |out| {
        out.extend_from_slice(b"{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}");
    });
    for piece in text_pieces
        .iter()
        .map(AsRef::as_ref)
        .filter(|p| !p.is_empty())
    {
        e.delta(None, |out| {
            out.extend_from_slice(b"{\"content\":");
            push_json_str(out, piece);
            out.push(b'}');
        });
    }
    for (i, call) in c.tool_calls.iter().enumerate() {
        e.tool_call(i, call);
    }
    e.delta(Some(c.finish), |out| out.extend_from_slice(b"{}"));
    if include_usage {
        e.open();
        e.out.extend_from_slice(b"[]");
        e.close(Some(c.usage));
    }
    e.out.extend_from_slice(b"data: [DONE]\n\n");
    e.ends.push(e.out.len());
    let mut start = 0;
    let ranges = e
        .ends
        .iter()
        .map(|&end| {
            let range = start..end;
            start = end;
            range
        })
        .collect();
    (Bytes::from(e.out), ranges)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn call(name: &str, arguments: &str) -> ScriptedToolCall {
        ScriptedToolCall {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        }
    }

    /// A text with what JSON must escape, and more.
    const TEXT: &str = "He said \"hi\"\n\té € 😀 \u{1} \\ </script>";

    #[test]
    fn a_completion_is_the_json_object_of_the_api() {
        let calls = [call("lookup", r#"{"q":"x"}"#)];
        let c = Completion {
            model: "my\"model",
            text: TEXT,
            tool_calls: &calls,
            usage: (7, 2),
            finish: "tool_calls",
        };
        let parsed: Value = serde_json::from_slice(&completion(&c)).unwrap();
        let want = json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000,
            "model": "my\"model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT,
                "refusal": null, "tool_calls": [{"id": "call_0", "type": "function",
                "function": {"name": "lookup", "arguments": r#"{"q":"x"}"#}}]},
                "logprobs": null, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
            "system_fingerprint": "fp_fake",
        });
        assert_eq!(parsed, want);
        let only_calls = Completion { text: "", ..c };
        let parsed: Value = serde_json::from_slice(&completion(&only_calls)).unwrap();
        assert_eq!(parsed["choices"][0]["message"]["content"], Value::Null);
    }

    /// The JSON of each event at `ranges` of `bytes`, `None` for `[DONE]`.
    fn parsed(bytes: &Bytes, ranges: &[Range<usize>]) -> Vec<Option<Value>> {
        assert_eq!(ranges.last().map(|r| r.end), Some(bytes.len()));
        ranges
            .iter()
            .map(|r| {
                let event = std::str::from_utf8(&bytes[r.clone()]).unwrap();
                let data = event.strip_prefix("data: ").unwrap().strip_suffix("\n\n");
                match data.unwrap() {
                    "[DONE]" => None,
                    json => Some(serde_json::from_str(json).unwrap()),
                }
            })
            .collect()
    }

    #[test]
    fn a_stream_is_the_chunks_of_the_api_one_event_each() {
        let calls = [call("a", "0123456789ab")];
        let c = Completion {
            model: "m\u{e9}",
            text: TEXT,
            tool_calls: &calls,
            usage: (3, 4),
            finish: "stop",
        };
        let (bytes, ranges) = chunks(&c, &["He ", "", TEXT], true);
        let events = parsed(&bytes, &ranges);
        let chunk = |choices: Value, usage: Value| {
            json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                "created": 1_700_000_000, "model": "m\u{e9}", "system_fingerprint": "fp_fake",
                "choices": choices, "usage": usage})
        };
        let delta = |d: Value, finish: Value| {
            chunk(
                json!([{"index": 0, "delta": d, "logprobs": null, "finish_reason": finish}]),
                Value::Null,
            )
        };
        let args =
            |piece: &str| json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]});
        let want = vec![
            Some(delta(
                json!({"role": "assistant", "content": "", "refusal": null}),
                Value::Null,
            )),
            Some(delta(json!({"content": "He "}), Value::Null)),
            Some(delta(json!({"content": TEXT}), Value::Null)),
            Some(delta(
                json!({"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                    "function": {"name": "a", "arguments": ""}}]}),
                Value::Null,
            )),
            Some(delta(args("01234"), Value::Null)),
            Some(delta(args("56789"), Value::Null)),
            Some(delta(args("ab"), Value::Null)),
            Some(delta(json!({}), json!("stop"))),
            Some(chunk(
                json!([]),
                json!({"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}),
            )),
            None,
        ];
        assert_eq!(events, want);
        // Without usage, no chunk has the field, and there is no usage chunk.
        let (bytes, ranges) = chunks(&c, &[TEXT], false);
        let events = parsed(&bytes, &ranges);
        assert_eq!(events.len(), 8);
        assert!(events.iter().flatten().all(|e| e.get("usage").is_none()));
    }
}
