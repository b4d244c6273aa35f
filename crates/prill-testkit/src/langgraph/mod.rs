//! [`FakeLanggraph`]: a LangGraph server (the Agent Server's HTTP API) on 127.0.0.1,
//! running a [`GraphScript`].
//!
//! | request | answer |
//! |---|---|
//! | `GET /ok` | `{"ok": true}` |
//! | no `x-api-key`, or another key than [`FakeLanggraph::expect_key`]'s | 401 `{"detail": ...}` |
//! | `POST /assistants/search` | the assistants (`assistant_id`, `graph_id`, `name`, `config`, `metadata`, ...) |
//! | `POST /threads` | a new thread (`thread_id`, `status: idle`, ...) |
//! | `POST /threads/{thread_id}/runs/stream` | the script's run as server-sent events |
//! | `GET /threads/{thread_id}/runs/{run_id}` | the run (`run_id`, `thread_id`, `status`: `success`, `error` or `running`) |
//! | a thread it did not create | 404 `Thread ... not found` |
//! | an `assistant_id` that is no assistant's id nor graph's name | 404 `Assistant ... not found` |
//! | a body that is not an object, a field the API does not define, a field of the wrong type, no `assistant_id` | 422 `{"detail": ...}` |
//! | another path or method | 404 `Not Found` |
//!
//! A run streams `metadata` (`run_id`), a `values` event with the state's messages
//! after the input and after each step (the agent's message; the tools' messages), and
//! then closes, as the real server does (`langgraph dev` 0.16 sends no `end` event), or
//! ends as the script's ending says ([`Ending`]). When the run asks for the
//! `updates` stream mode, each step is first an `updates` event keyed by its node
//! (`agent`, `tools`). The run's
//! `config.recursion_limit` (25 when not given, as LangGraph's default) bounds the steps;
//! past it the run raises `GraphRecursionError`.

mod script;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Map, Value, json};

pub use script::{Call, Ending, GraphScript};

use crate::providers::RecordedRequest;
use crate::providers::scripted::{Answer, Body, Served, json_answer, serve, streamed_answer};

// The field lists and the stream modes are those of the Agent Server's OpenAPI
// document: langchain-ai/langgraph, `docs/docs/cloud/reference/api/openapi.json` at
// commit 23961cff61a42b52525f3b20b4094d8d2fba1744 (the last before the docs moved out),
// schemas `RunCreateStateful`, `ThreadCreate` and `AssistantSearchRequest`.

/// The fields of `POST /threads/{thread_id}/runs/stream`'s body (`RunCreateStateful`).
const RUN_FIELDS: [&str; 20] = [
    "assistant_id",
    "checkpoint",
    "input",
    "command",
    "metadata",
    "config",
    "context",
    "webhook",
    "interrupt_before",
    "interrupt_after",
    "stream_mode",
    "stream_subgraphs",
    "stream_resumable",
    "on_disconnect",
    "feedback_keys",
    "multitask_strategy",
    "if_not_exists",
    "after_seconds",
    "checkpoint_during",
    "durability",
];

/// The fields of `POST /threads`' body (`ThreadCreate`).
const THREAD_FIELDS: [&str; 5] = ["thread_id", "metadata", "if_exists", "ttl", "supersteps"];

/// The fields of `POST /assistants/search`' body (`AssistantSearchRequest`).
const SEARCH_FIELDS: [&str; 8] = [
    "metadata",
    "graph_id",
    "name",
    "limit",
    "offset",
    "sort_by",
    "sort_order",
    "select",
];

/// The stream modes a run takes.
const STREAM_MODES: [&str; 9] = [
    "values",
    "messages",
    "messages-tuple",
    "tasks",
    "checkpoints",
    "updates",
    "events",
    "debug",
    "custom",
];

/// LangGraph's recursion limit when a run sets none.
const DEFAULT_RECURSION_LIMIT: u64 = 25;

#[derive(Debug, Default)]
struct Inner {
    key: Option<String>,
    graphs: Vec<String>,
    script: GraphScript,
    scripts: std::collections::BTreeMap<String, GraphScript>,
    threads: Vec<String>,
    runs: u64,
    /// Each run's thread and status, by run id.
    statuses: std::collections::BTreeMap<String, (String, &'static str)>,
    requests: Vec<RecordedRequest>,
}

/// A fake LangGraph server on 127.0.0.1; stops when dropped.
#[derive(Debug)]
pub struct FakeLanggraph {
    served: Served,
    state: Arc<Mutex<Inner>>,
}

impl FakeLanggraph {
    /// Starts the fake on a free port with one graph, `agent`, that answers `ok`, and
    /// takes requests with or without a key until [`FakeLanggraph::expect_key`].
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start() -> FakeLanggraph {
        let state = Arc::new(Mutex::new(Inner {
            graphs: vec!["agent".to_owned()],
            script: GraphScript::answering("ok"),
            ..Inner::default()
        }));
        let shared = Arc::clone(&state);
        let served = serve(move |request| handle(Arc::clone(&shared), request)).await;
        FakeLanggraph { served, state }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.served.addr)
    }

    /// Takes only `key` in `x-api-key` from now on.
    pub fn expect_key(&self, key: &str) -> &FakeLanggraph {
        self.lock().key = Some(key.to_owned());
        self
    }

    /// The graphs it serves, each with its default assistant (whose id is
    /// [`assistant_id`] of the graph).
    pub fn graphs(&self, graphs: &[&str]) -> &FakeLanggraph {
        self.lock().graphs = graphs.iter().map(|g| (*g).to_owned()).collect();
        self
    }

    /// The graph every run runs (but those of a graph given its own by
    /// [`FakeLanggraph::graph`]).
    pub fn script(&self, script: GraphScript) -> &FakeLanggraph {
        self.lock().script = script;
        self
    }

    /// One more graph, `name`, with its default assistant, running `script`.
    pub fn graph(&self, name: &str, script: GraphScript) -> &FakeLanggraph {
        let mut inner = self.lock();
        if !inner.graphs.iter().any(|g| g == name) {
            inner.graphs.push(name.to_owned());
        }
        inner.scripts.insert(name.to_owned(), script);
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// The bodies of the runs requested so far.
    pub fn runs(&self) -> Vec<Value> {
        self.requests()
            .iter()
            .filter(|r| r.path.ends_with("/runs/stream"))
            .map(RecordedRequest::json)
            .collect()
    }
}

/// The id of a graph's default assistant.
pub fn assistant_id(graph: &str) -> String {
    let n = graph.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!(
        "{:08x}-{:04x}-5{:03x}-8{:03x}-{:012x}",
        n >> 32,
        (n >> 16) & 0xffff,
        n & 0xfff,
        (n >> 20) & 0xfff,
        n & 0xffff_ffff_ffff
    )
}

fn handle(state: Arc<Mutex<Inner>>, request: RecordedRequest) -> Answer {
    Box::pin(async move {
        let mut inner = state.lock().unwrap_or_else(|e| e.into_inner());
        inner.requests.push(request.clone());
        if request.method == "GET" && request.path == "/ok" {
            return json_answer(200, &[], &json!({"ok": true}));
        }
        if let Some(key) = &inner.key
            && request.header("x-api-key") != Some(key.as_str())
        {
            let detail = if request.header("x-api-key").is_none() {
                "Missing API key"
            } else {
                "Invalid API key"
            };
            return detail_answer(401, detail);
        }
        let segments: Vec<&str> = request.path.trim_matches('/').split('/').collect();
        if request.method == "GET" {
            return match segments.as_slice() {
                ["threads", thread, "runs", run] => run_status(&inner, thread, run),
                _ => detail_answer(404, "Not Found"),
            };
        }
        if request.method != "POST" {
            return detail_answer(404, "Not Found");
        }
        let body: Value = match serde_json::from_slice(&request.body) {
            Ok(Value::Object(o)) => Value::Object(o),
            _ => return detail_answer(422, "Request body must be a JSON object"),
        };
        match segments.as_slice() {
            ["assistants", "search"] => search(&inner, &body),
            ["threads"] => create_thread(&mut inner, &body),
            ["threads", thread, "runs", "stream"] => {
                let thread = (*thread).to_owned();
                match run(&mut inner, &thread, &body) {
                    Ok(events) => {
                        drop(inner);
                        stream(events)
                    }
                    Err(answer) => *answer,
                }
            }
            _ => detail_answer(404, "Not Found"),
        }
    })
}

/// `GET /threads/{thread}/runs/{run}`: the run, with its status.
fn run_status(inner: &Inner, thread: &str, run: &str) -> hyper::Response<Body> {
    match inner.statuses.get(run) {
        Some((of, status)) if of == thread => json_answer(
            200,
            &[],
            &json!({
                "run_id": run,
                "thread_id": thread,
                "status": status,
                "metadata": {},
                "multitask_strategy": "reject",
                "created_at": "2026-01-01T00:00:00+00:00",
                "updated_at": "2026-01-01T00:00:00+00:00"
            }),
        ),
        _ => detail_answer(404, "Run not found"),
    }
}

/// An error in the server's shape, `{"detail": ...}`.
fn detail_answer(status: u16, detail: &str) -> hyper::Response<Body> {
    json_answer(status, &[], &json!({"detail": detail}))
}

fn unknown_fields(body: &Value, allowed: &[&str]) -> Option<hyper::Response<Body>> {
    let unknown: Vec<&String> = body
        .as_object()?
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .collect();
    let first = unknown.first()?;
    Some(detail_answer(
        422,
        &format!("Invalid request body: unknown field `{first}`"),
    ))
}

fn search(inner: &Inner, body: &Value) -> hyper::Response<Body> {
    if let Some(refused) = unknown_fields(body, &SEARCH_FIELDS) {
        return refused;
    }
    let list: Vec<Value> = inner
        .graphs
        .iter()
        .map(|g| {
            json!({
                "assistant_id": assistant_id(g),
                "graph_id": g,
                "name": g,
                "description": null,
                "config": {},
                "context": {},
                "metadata": {"created_by": "system"},
                "version": 1,
                "created_at": "2026-01-01T00:00:00+00:00",
                "updated_at": "2026-01-01T00:00:00+00:00"
            })
        })
        .collect();
    json_answer(200, &[], &Value::Array(list))
}

fn create_thread(inner: &mut Inner, body: &Value) -> hyper::Response<Body> {
    if let Some(refused) = unknown_fields(body, &THREAD_FIELDS) {
        return refused;
    }
    if !body.get("metadata").is_none_or(Value::is_object) {
        return detail_answer(422, "Invalid request body: `metadata` must be an object");
    }
    let id = format!("00000000-0000-4000-8000-{:012x}", inner.threads.len() + 1);
    inner.threads.push(id.clone());
    json_answer(
        200,
        &[],
        &json!({
            "thread_id": id,
            "created_at": "2026-01-01T00:00:00+00:00",
            "updated_at": "2026-01-01T00:00:00+00:00",
            "metadata": body.get("metadata").cloned().unwrap_or_else(|| json!({})),
            "status": "idle",
            "config": {},
            "values": null,
            "interrupts": {}
        }),
    )
}

/// The events of a valid run, or the error answer to an invalid one.
fn run(
    inner: &mut Inner,
    thread: &str,
    body: &Value,
) -> Result<script::Events, Box<hyper::Response<Body>>> {
    if let Some(refused) = unknown_fields(body, &RUN_FIELDS) {
        return Err(Box::new(refused));
    }
    check_run(body).map_err(|detail| {
        Box::new(detail_answer(
            422,
            &format!("Invalid request body: {detail}"),
        ))
    })?;
    if !inner.threads.iter().any(|t| t == thread) {
        return Err(Box::new(detail_answer(
            404,
            &format!("Thread {thread} not found"),
        )));
    }
    let wanted = body["assistant_id"].as_str().unwrap_or_default();
    let Some(graph) = inner
        .graphs
        .iter()
        .find(|g| *g == wanted || assistant_id(g) == wanted)
        .cloned()
    else {
        return Err(Box::new(detail_answer(
            404,
            &format!("Assistant {wanted} not found"),
        )));
    };
    inner.runs += 1;
    let run_id = format!("1ef00000-0000-6000-8000-{:012x}", inner.runs);
    let input = body["input"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let limit = body["config"]["recursion_limit"]
        .as_u64()
        .unwrap_or(DEFAULT_RECURSION_LIMIT);
    let script = inner.scripts.get(&graph).unwrap_or(&inner.script);
    let updates = match &body["stream_mode"] {
        Value::String(mode) => mode == "updates",
        Value::Array(modes) => modes.iter().any(|m| m == "updates"),
        _ => false,
    };
    let events = script.events(&run_id, &input, limit, updates);
    let status = script.status(&events);
    inner.statuses.insert(run_id, (thread.to_owned(), status));
    Ok(events)
}

/// The types `RunCreateStateful` gives the fields Prill's client sends, and the
/// messages of `input.messages`.
fn check_run(body: &Value) -> Result<(), String> {
    if !body["assistant_id"].is_string() {
        return Err("`assistant_id` is required and must be a string".into());
    }
    let object = |key: &str| body.get(key).is_none_or(|v| v.is_object() || v.is_null());
    for key in ["metadata", "config", "context", "checkpoint"] {
        if !object(key) {
            return Err(format!("`{key}` must be an object"));
        }
    }
    match body.get("stream_mode") {
        None => {}
        Some(Value::String(m)) if STREAM_MODES.contains(&m.as_str()) => {}
        Some(Value::Array(modes))
            if modes
                .iter()
                .all(|m| m.as_str().is_some_and(|m| STREAM_MODES.contains(&m))) => {}
        Some(other) => return Err(format!("`stream_mode` {other} is not a stream mode")),
    }
    if let Some(v) = body.get("on_disconnect")
        && !matches!(v.as_str(), Some("cancel" | "continue"))
    {
        return Err("`on_disconnect` must be `cancel` or `continue`".into());
    }
    if let Some(config) = body.get("config").and_then(Value::as_object) {
        check_config(config)?;
    }
    if let Some(messages) = body.get("input").and_then(|i| i.get("messages")) {
        let Some(list) = messages.as_array() else {
            return Err("`input.messages` must be a list".into());
        };
        for (i, m) in list.iter().enumerate() {
            let kind = m
                .get("type")
                .or_else(|| m.get("role"))
                .and_then(Value::as_str);
            if !matches!(
                kind,
                Some("human" | "user" | "ai" | "assistant" | "system" | "tool")
            ) {
                return Err(format!("`input.messages[{i}]` has no message type"));
            }
            if !m
                .get("content")
                .is_some_and(|c| c.is_string() || c.is_array())
            {
                return Err(format!(
                    "`input.messages[{i}].content` must be a string or a list"
                ));
            }
        }
    }
    Ok(())
}

fn check_config(config: &Map<String, Value>) -> Result<(), String> {
    for key in config.keys() {
        if !["tags", "recursion_limit", "configurable", "thread_id"].contains(&key.as_str()) {
            return Err(format!("unknown field `config.{key}`"));
        }
    }
    if config
        .get("recursion_limit")
        .is_some_and(|v| v.as_u64().is_none_or(|n| n == 0))
    {
        return Err("`config.recursion_limit` must be a positive integer".into());
    }
    if config.get("configurable").is_some_and(|v| !v.is_object()) {
        return Err("`config.configurable` must be an object".into());
    }
    Ok(())
}

/// The events as server-sent events, one piece each.
fn stream(events: script::Events) -> hyper::Response<Body> {
    let pieces = events
        .into_iter()
        .map(|(name, data)| {
            if name == "hang" {
                return (Duration::from_secs(3600), Bytes::new());
            }
            let data = if data.is_null() && name == "end" {
                String::new()
            } else {
                data.to_string()
            };
            (
                Duration::ZERO,
                Bytes::from(format!("event: {name}\ndata: {data}\n\n")),
            )
        })
        .collect();
    streamed_answer("text/event-stream; charset=utf-8", &[], pieces)
}
