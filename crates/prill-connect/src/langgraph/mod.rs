//! [`LanggraphServer`]: a LangGraph server (LangGraph Platform's Agent Server, or
//! `langgraph dev`) reached through its HTTP API, as a [`GraphServer`].
//!
//! A run is three requests at most:
//!
//! 1. `POST /threads` (`{"metadata": {"created_by": "prill"}}`): a fresh thread, so no
//!    test sees another's state; its `thread_id` is kept.
//! 2. `POST /threads/{thread_id}/runs/stream` with `assistant_id`, `input`
//!    (`{"messages": [...]}` in LangChain's serialization), `stream_mode: ["values",
//!    "updates"]`, `config` (`recursion_limit`, `configurable`) when given, and
//!    `on_disconnect: "cancel"`, so that a run Prill stops waiting for (a timeout) is
//!    cancelled on the server. `values` streams the whole state after each step: the last
//!    one holds every message of the run, tool messages included. `updates` streams what
//!    each node wrote, keyed by the node's name: the nodes in the order they ran
//!    ([`GraphRun::steps`], which `graph_steps` checks). Token deltas (`messages`) would
//!    add nothing.
//! 3. Only when the run is refused with `404` or `422`: `POST /assistants/search`, to
//!    say which assistants the server has (with a "did you mean").
//!
//! The stream's events: `metadata` (the `run_id`), `values` (the state), `updates`
//! (`{node: what it wrote}`; a key beginning `__`, such as `__interrupt__`, is no node),
//! `error` (the graph raised: `{"error": name, "message": ...}`), `end`; any other event
//! is skipped.
//! A run that ends with `end` after a `values` state is complete; an `error` event is a
//! [`GraphRun::failure`] with the messages of the last state. `langgraph dev` and the
//! Agent Server send no `end`: they close the stream. A stream that closes with neither
//! `end` nor `error` is settled as LangGraph's own SDK settles it, by asking the run
//! (`GET /threads/{thread_id}/runs/{run_id}`, the `run_id` of the `metadata` event):
//! `success` completes it, `error` fails it, any other status (and a stream with no
//! `run_id`) breaks the protocol, as does an end with no state at all.
//!
//! The key goes in `x-api-key`, from the variable `prill.toml` names or else the first
//! of [`KEY_VARIABLES`] that is set, as LangGraph's SDK reads them. A `401` or `403`
//! names the variable that was read, never the key.
//!
//! The http rules are the model providers' ([`Transport`]): retries after a connection
//! that could not be made and after `408`, `409`, `429` and `5xx` (before any byte of a
//! stream arrived), a limit on the whole run (the request's own, else the server's
//! default), the idle limit, the body cap.

mod messages;

use std::fmt;
use std::time::{Duration, Instant};

use prill_target::graph::{GraphMessage, GraphRequest, GraphRun, GraphServer, RunFailure};
use prill_target::model::RawEvents;
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};

use crate::error::{ConnectError, cut};
use crate::http::HttpOptions;
use crate::provider::transport::{Flow, Reading, SseEvent, Transport};
use crate::provider::{Limits, ProviderKind};
use crate::server::{endpoint, label};
use crate::{BoxFuture, Timings, with_timeout};

/// The variables LangGraph's SDK reads the key from, in its order.
pub const KEY_VARIABLES: [&str; 3] = [
    "LANGGRAPH_API_KEY",
    "LANGSMITH_API_KEY",
    "LANGCHAIN_API_KEY",
];

/// A key and the variable it came from. `Debug` shows the variable only.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    variable: String,
    value: String,
}

impl ApiKey {
    /// The key `value`, read from `variable`.
    pub fn new(variable: impl Into<String>, value: impl Into<String>) -> ApiKey {
        ApiKey {
            variable: variable.into(),
            value: value.into(),
        }
    }

    /// The variable it came from.
    pub fn variable(&self) -> &str {
        &self.variable
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey(${})", self.variable)
    }
}

/// The key to send: `api_key_env`'s variable when given, else the first of
/// [`KEY_VARIABLES`] that `get` finds set (and not blank). The second value names what
/// was read, for the error of a refused key.
pub fn key_from_env(
    api_key_env: Option<&str>,
    get: impl Fn(&str) -> Option<String>,
) -> (Option<ApiKey>, String) {
    let found = |name: &str| {
        get(name)
            .filter(|v| !v.trim().is_empty())
            .map(|v| ApiKey::new(name, v))
    };
    match api_key_env {
        Some(name) => {
            let key = found(name);
            let read = if key.is_some() {
                name.to_owned()
            } else {
                format!("{name} (not set)")
            };
            (key, read)
        }
        None => match KEY_VARIABLES.iter().find_map(|n| found(n)) {
            Some(key) => {
                let read = key.variable.clone();
                (Some(key), read)
            }
            None => (
                None,
                format!(
                    "{}, {} or {} (none is set)",
                    KEY_VARIABLES[0], KEY_VARIABLES[1], KEY_VARIABLES[2]
                ),
            ),
        },
    }
}

/// A LangGraph server.
#[derive(Debug, Clone)]
pub struct LanggraphServer {
    base: Url,
    peer: String,
    transport: Transport,
    key: Option<ApiKey>,
}

/// One assistant of a server, as `POST /assistants/search` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantInfo {
    /// Its id.
    pub assistant_id: String,
    /// The graph it runs.
    pub graph_id: String,
    /// Its name, when it has one.
    pub name: Option<String>,
}

impl LanggraphServer {
    /// A client of the server at `base`, sending `key` (from the variable `read` names,
    /// which a refused key's error repeats), with `options`' TLS, retries and limits.
    pub fn new(
        base: Url,
        key: Option<ApiKey>,
        read: impl Into<String>,
        options: &HttpOptions,
    ) -> Result<LanggraphServer, ConnectError> {
        let transport = Transport::new(ProviderKind::Openai, options, Limits::none())?
            .with_connector("langgraph")
            .with_key_env(Some(read.into()));
        Ok(LanggraphServer {
            peer: format!("the LangGraph server at {}", label(&base)),
            base,
            transport,
            key,
        })
    }

    /// The server's url.
    pub fn base(&self) -> &Url {
        &self.base
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("accept", HeaderValue::from_static("application/json"));
        if let Some(key) = &self.key
            && let Ok(mut value) = HeaderValue::from_str(&key.value)
        {
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        headers
    }

    /// Posts `body` to `path` and reads the JSON answer.
    async fn post_json(&self, path: &[&str], body: &Value) -> Result<Value, ConnectError> {
        let url = endpoint(&self.base, path);
        let posted = self
            .transport
            .post_json_held(url, self.headers(), body, None, &self.peer)
            .await
            .map_err(|e| self.refused(e))?;
        let (value, _) = self
            .transport
            .read_json(posted.response, posted.started, &self.peer)
            .await?;
        Ok(value)
    }

    /// A `401` or `403` says which variable the key was read from.
    fn refused(&self, error: ConnectError) -> ConnectError {
        match error {
            ConnectError::Status {
                server,
                status: status @ (401 | 403),
                body,
                attempts,
            } if !body.contains("the key was refused") => {
                let read = self.transport.key_env.as_deref().unwrap_or_default();
                ConnectError::Status {
                    server,
                    status,
                    body: format!("{body}; the key was refused: check {read}"),
                    attempts,
                }
            }
            other => other,
        }
    }

    /// Creates a thread and returns its id.
    pub async fn create_thread(&self) -> Result<String, ConnectError> {
        let thread = self
            .post_json(&["threads"], &json!({"metadata": {"created_by": "prill"}}))
            .await?;
        thread["thread_id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| {
                ConnectError::protocol(
                    &self.peer,
                    format!(
                        "the new thread has no `thread_id`: {}",
                        cut(&thread.to_string(), 120)
                    ),
                )
            })
    }

    /// The server's assistants (the first 100).
    pub async fn assistants(&self) -> Result<Vec<AssistantInfo>, ConnectError> {
        let list = self
            .post_json(
                &["assistants", "search"],
                &json!({"limit": 100, "offset": 0}),
            )
            .await?;
        let Some(items) = list.as_array() else {
            return Err(ConnectError::protocol(
                &self.peer,
                format!(
                    "the assistants are {}, not a list",
                    messages::kind_of(&list)
                ),
            ));
        };
        Ok(items
            .iter()
            .filter_map(|a| {
                Some(AssistantInfo {
                    assistant_id: a["assistant_id"].as_str()?.to_owned(),
                    graph_id: a["graph_id"].as_str().unwrap_or_default().to_owned(),
                    name: a["name"].as_str().map(str::to_owned),
                })
            })
            .collect())
    }

    /// Runs `request` on a new thread, within its limit.
    pub async fn run_graph(&self, request: &GraphRequest) -> Result<GraphRun, ConnectError> {
        let limit = self.transport.limit(request.timeout);
        with_timeout(&self.peer, limit, self.run_unbounded(request)).await
    }

    async fn run_unbounded(&self, request: &GraphRequest) -> Result<GraphRun, ConnectError> {
        let started = Instant::now();
        let thread_id = self.create_thread().await?;
        let body = run_body(request);
        let url = endpoint(&self.base, &["threads", &thread_id, "runs", "stream"]);
        let mut headers = self.headers();
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        let posted = match self
            .transport
            .post_json_held(url, headers, &body, None, &self.peer)
            .await
        {
            Ok(posted) => posted,
            Err(
                e @ ConnectError::Status {
                    status: 404 | 422, ..
                },
            ) => {
                return Err(match self.missing(&request.assistant_id).await {
                    Some(known) => self.no_assistant(&request.assistant_id, &known),
                    None => e,
                });
            }
            Err(e) => return Err(self.refused(e)),
        };
        if Reading::of(true, posted.response.headers()) != Reading::Events {
            return Err(self
                .transport
                .unexpected_body(posted.response, &self.peer, "text/event-stream")
                .await);
        }
        let mut stream = RunStream::default();
        let end = self
            .transport
            .read_sse(posted.response, posted.started, &self.peer, |event| {
                stream.take(event, &self.peer)
            })
            .await?;
        if !stream.ended
            && stream.failure.is_none()
            && let Some(run_id) = stream.run_id.clone()
        {
            stream.settle(self.run_status(&thread_id, &run_id).await?);
        }
        stream.finish(&self.peer, thread_id, end.first_byte, started.elapsed())
    }

    /// The status of run `run_id` of thread `thread_id` (`GET
    /// /threads/{thread_id}/runs/{run_id}`): `success`, `error`, `pending`, ...
    async fn run_status(&self, thread_id: &str, run_id: &str) -> Result<String, ConnectError> {
        let url = endpoint(&self.base, &["threads", thread_id, "runs", run_id]);
        let run = self
            .transport
            .get_json(url, self.headers(), &self.peer)
            .await
            .map_err(|e| self.refused(e))?;
        run["status"].as_str().map(str::to_owned).ok_or_else(|| {
            ConnectError::protocol(
                &self.peer,
                format!("the run has no `status`: {}", cut(&run.to_string(), 120)),
            )
        })
    }

    /// The server's assistants when none is `wanted` (by id, graph or name); `None` when
    /// it has it (or cannot say).
    async fn missing(&self, wanted: &str) -> Option<Vec<AssistantInfo>> {
        let all = self.assistants().await.ok()?;
        let found = all.iter().any(|a| {
            a.assistant_id == wanted || a.graph_id == wanted || a.name.as_deref() == Some(wanted)
        });
        (!found).then_some(all)
    }

    fn no_assistant(&self, wanted: &str, known: &[AssistantInfo]) -> ConnectError {
        let mut names: Vec<&str> = known.iter().map(|a| a.graph_id.as_str()).collect();
        names.extend(known.iter().map(|a| a.assistant_id.as_str()));
        names.retain(|n| !n.is_empty());
        names.dedup();
        let listed: Vec<String> = known
            .iter()
            .map(|a| match &a.name {
                Some(name) if name != &a.graph_id => {
                    format!("`{}` ({name}, graph `{}`)", a.assistant_id, a.graph_id)
                }
                _ => format!("`{}` (graph `{}`)", a.assistant_id, a.graph_id),
            })
            .collect();
        let hint = prill_spec::diag::did_you_mean(wanted, names.iter().copied())
            .map(|h| format!(" {h}"))
            .unwrap_or_default();
        let has = if listed.is_empty() {
            "it has none".to_owned()
        } else {
            format!("it has {}", listed.join(", "))
        };
        ConnectError::config(format!(
            "{} has no assistant or graph `{wanted}` ({has}):{hint} set `framework_config.assistant_id` to one of them",
            self.peer
        ))
    }
}

impl GraphServer for LanggraphServer {
    fn run<'a>(
        &'a self,
        request: &'a GraphRequest,
    ) -> BoxFuture<'a, Result<GraphRun, ConnectError>> {
        Box::pin(self.run_graph(request))
    }
}

/// The body of `POST /threads/{thread_id}/runs/stream`.
fn run_body(request: &GraphRequest) -> Value {
    let mut body = json!({
        "assistant_id": request.assistant_id,
        "input": messages::input(request),
        "stream_mode": ["values", "updates"],
        "on_disconnect": "cancel",
        "metadata": {"created_by": "prill"},
    });
    let mut config = serde_json::Map::new();
    if let Some(limit) = request.recursion_limit {
        config.insert("recursion_limit".into(), json!(limit));
    }
    if let Some(configurable) = &request.configurable {
        config.insert("configurable".into(), Value::Object(configurable.clone()));
    }
    if !config.is_empty() {
        body["config"] = Value::Object(config);
    }
    body
}

/// What a run's stream said so far.
#[derive(Default)]
struct RunStream {
    run_id: Option<String>,
    state: Option<Vec<Value>>,
    steps: Vec<String>,
    failure: Option<RunFailure>,
    ended: bool,
    /// The run's status when its stream closed early and the run was not done.
    unfinished: Option<String>,
    raw: RawEvents,
}

impl RunStream {
    fn take(&mut self, event: SseEvent, peer: &str) -> Result<Flow, ConnectError> {
        let name = event.event.unwrap_or_else(|| "message".to_owned());
        let data: Value = if event.data.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&event.data).map_err(|e| {
                ConnectError::protocol(
                    peer,
                    format!(
                        "the data of a `{name}` event is not JSON ({e}): {}",
                        cut(&event.data, 120)
                    ),
                )
            })?
        };
        self.raw.push(json!({"event": name, "data": data}));
        match name.as_str() {
            "metadata" => {
                if let Some(id) = data["run_id"].as_str() {
                    self.run_id = Some(id.to_owned());
                }
            }
            "values" => {
                let messages = match data.get("messages") {
                    Some(Value::Array(m)) => m.clone(),
                    _ => {
                        return Err(ConnectError::protocol(
                            peer,
                            format!(
                                "the run's state has no `messages` list (is the assistant's graph a message graph?): {}",
                                cut(&data.to_string(), 120)
                            ),
                        ));
                    }
                };
                self.state = Some(messages);
            }
            "updates" => {
                if let Value::Object(nodes) = &data {
                    self.steps
                        .extend(nodes.keys().filter(|node| !node.starts_with("__")).cloned());
                }
            }
            "error" => {
                self.failure = Some(RunFailure {
                    error: data["error"].as_str().map(str::to_owned),
                    message: data["message"]
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| match &data {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        }),
                });
                return Ok(Flow::Stop);
            }
            "end" => {
                self.ended = true;
                return Ok(Flow::Stop);
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// Takes the run's `status` when its stream closed with neither `end` nor `error`,
    /// as `langgraph dev` and the Agent Server close it: `success` completes it, `error`
    /// fails it (the stream said no more), anything else leaves it incomplete.
    fn settle(&mut self, status: String) {
        match status.as_str() {
            "success" => self.ended = true,
            "error" => {
                self.failure = Some(RunFailure {
                    error: None,
                    message: "the run's status is `error`, and its stream said no more".to_owned(),
                });
            }
            _ => self.unfinished = Some(status),
        }
    }

    fn finish(
        self,
        peer: &str,
        thread_id: String,
        first_byte: Option<Duration>,
        total: Duration,
    ) -> Result<GraphRun, ConnectError> {
        if self.failure.is_none() && !self.ended {
            let status = match &self.unfinished {
                Some(status) => format!(", and the run's status is `{status}`"),
                None => String::new(),
            };
            return Err(ConnectError::protocol(
                peer,
                format!(
                    "the run's stream ended before the run did{status}: the answer is incomplete"
                ),
            ));
        }
        let raw_messages = match (self.state, &self.failure) {
            (Some(state), _) => state,
            (None, Some(_)) => Vec::new(),
            (None, None) => {
                return Err(ConnectError::protocol(
                    peer,
                    "the run ended without streaming its state (no `values` event)",
                ));
            }
        };
        let messages = raw_messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                messages::parse(m).map_err(|e| {
                    ConnectError::protocol(peer, format!("message {i} of the run's state: {e}"))
                })
            })
            .collect::<Result<Vec<GraphMessage>, _>>()?;
        let events = self.raw.count();
        Ok(GraphRun {
            run_id: self.run_id,
            thread_id,
            messages,
            raw_messages,
            failure: self.failure,
            steps: self.steps,
            timings: Timings { first_byte, total },
            raw: self.raw.into_vec(),
            events,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_comes_from_the_named_variable_or_the_sdks_in_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let (key, read) = key_from_env(
            None,
            env(&[("LANGCHAIN_API_KEY", "c"), ("LANGSMITH_API_KEY", "s")]),
        );
        assert_eq!(key.unwrap().variable(), "LANGSMITH_API_KEY");
        assert_eq!(read, "LANGSMITH_API_KEY");
        let (key, read) = key_from_env(Some("MINE"), env(&[("LANGGRAPH_API_KEY", "g")]));
        assert!(key.is_none());
        assert_eq!(read, "MINE (not set)");
        let (key, read) = key_from_env(None, env(&[("LANGGRAPH_API_KEY", " ")]));
        assert!(key.is_none());
        assert!(read.ends_with("(none is set)"), "{read}");
        let key = ApiKey::new("V", "secret-value");
        assert_eq!(format!("{key:?}"), "ApiKey($V)");
    }

    #[test]
    fn the_run_body_sends_only_what_is_set() {
        let mut request = GraphRequest {
            assistant_id: "agent".into(),
            messages: vec![prill_target::model::ChatMessage::user("hi")],
            ..GraphRequest::default()
        };
        let body = run_body(&request);
        assert!(body.get("config").is_none());
        assert_eq!(body["stream_mode"], json!(["values", "updates"]));
        request.recursion_limit = Some(7);
        let body = run_body(&request);
        assert_eq!(body["config"], json!({"recursion_limit": 7}));
    }
}
