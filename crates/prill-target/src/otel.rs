//! What an agent's own OpenTelemetry spans give a test: its trajectory, when a case
//! says `trajectory: otel`.
//!
//! The engine sends each interaction a W3C trace context ([`TraceParent`], as the
//! `traceparent` request metadata), the agent exports its spans over OTLP to the run's
//! receiver (`prill-demo`'s, which files them in a [`SpanInbox`]), and the engine asks
//! a [`SpanSource`] for the spans under that context once the answer is in. The inbox
//! holds only the run's trace, and hands each interaction's spans out once.
//!
//! When the spans are all there: an agent's spans end bottom-up, and OTel's SDKs export
//! them in the order they end, so the agent's root span (the one whose parent is the
//! context Prill sent) comes last. Its arrival completes the interaction's spans; what
//! has arrived under it by then is what the interaction did.
//!
//! ```
//! use std::time::Duration;
//! use prill_target::otel::{AgentSpan, SpanInbox, TraceParent};
//!
//! let parent = TraceParent { trace: [1; 16], span: [2; 8] };
//! assert_eq!(parent.header(), "00-01010101010101010101010101010101-0202020202020202-01");
//! let inbox = SpanInbox::new(parent.trace);
//! let root = AgentSpan { span_id: [3; 8], parent_span_id: Some([2; 8]), ..AgentSpan::default() };
//! let tool = AgentSpan { span_id: [4; 8], parent_span_id: Some([3; 8]), ..AgentSpan::default() };
//! assert_eq!(inbox.file(parent.trace, vec![tool, root]), 0);
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
//! let spans = runtime.block_on(inbox.take(parent, Duration::from_secs(1))).unwrap();
//! assert_eq!(spans.len(), 2);
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::{BoxFuture, ConnectError};

/// The request metadata key (and http header) that carries the trace context.
pub const TRACEPARENT: &str = "traceparent";

/// The most spans an inbox holds at once; past it, spans are refused (and counted as
/// rejected in the receiver's answer) until interactions take theirs.
pub const MAX_HELD_SPANS: usize = 100_000;

/// A W3C trace context: the trace, and the span the agent's spans hang under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace id.
    pub trace: [u8; 16],
    /// The parent span id: the interaction's span.
    pub span: [u8; 8],
}

impl TraceParent {
    /// The `traceparent` header: version 00, sampled.
    pub fn header(&self) -> String {
        format!("00-{}-{}-01", hex(&self.trace), hex(&self.span))
    }
}

/// `bytes` in lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One span an agent exported, as much of it as a test reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentSpan {
    /// Its span id.
    #[serde(with = "hex8")]
    pub span_id: [u8; 8],
    /// Its parent's span id; `None` for a root.
    #[serde(default, with = "opt_hex8", skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<[u8; 8]>,
    /// Its name.
    pub name: String,
    /// When it started and ended, in nanoseconds since the Unix epoch.
    pub start_unix_nano: u64,
    /// When it ended.
    pub end_unix_nano: u64,
    /// Its attributes, as JSON: strings, numbers, booleans, arrays, objects.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub attributes: Map<String, Value>,
    /// Its status message when its status is `ERROR` (empty when it gave none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl AgentSpan {
    /// The string attribute `key`.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }
}

/// Where the engine gets an interaction's spans: the run's receiver, or a cassette.
pub trait SpanSource: Send + Sync {
    /// The spans under `parent`, which interaction `interaction` of a conversation with
    /// `agent` was sent, waiting at most `limit` for them. An error when they did not
    /// come: a trajectory that never arrived is never an empty one.
    fn spans<'a>(
        &'a self,
        agent: &'a str,
        interaction: usize,
        parent: TraceParent,
        limit: Duration,
    ) -> BoxFuture<'a, Result<Vec<AgentSpan>, ConnectError>>;
}

/// The spans the run's receiver took in, held until their interaction takes them.
#[derive(Debug)]
pub struct SpanInbox {
    trace: [u8; 16],
    held: Mutex<Vec<AgentSpan>>,
    arrived: Notify,
    /// Where agents send spans, for the error when none came.
    address: Mutex<Option<String>>,
}

impl SpanInbox {
    /// An inbox for trace `trace`: spans of other traces are not kept.
    pub fn new(trace: [u8; 16]) -> SpanInbox {
        SpanInbox {
            trace,
            held: Mutex::new(Vec::new()),
            arrived: Notify::new(),
            address: Mutex::new(None),
        }
    }

    /// The trace it keeps.
    pub fn trace(&self) -> [u8; 16] {
        self.trace
    }

    /// Names where agents send their spans (the receiver's url), for errors.
    pub fn set_address(&self, address: impl Into<String>) {
        *self.address.lock().unwrap_or_else(|e| e.into_inner()) = Some(address.into());
    }

    /// Files `spans` of trace `trace`. Spans of another trace are dropped (they are not
    /// the run's: an agent's own traffic); past [`MAX_HELD_SPANS`] the rest are refused.
    /// Returns how many were refused.
    pub fn file(&self, trace: [u8; 16], spans: Vec<AgentSpan>) -> usize {
        if trace != self.trace || spans.is_empty() {
            return 0;
        }
        let refused = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            let room = MAX_HELD_SPANS.saturating_sub(held.len());
            let refused = spans.len().saturating_sub(room);
            held.extend(spans.into_iter().take(room));
            refused
        };
        self.arrived.notify_waiters();
        refused
    }

    /// Takes the spans under `parent` once a span whose parent is `parent` itself (the
    /// agent's root) has arrived, waiting at most `limit` for it.
    pub async fn take(
        &self,
        parent: TraceParent,
        limit: Duration,
    ) -> Result<Vec<AgentSpan>, ConnectError> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let arrived = self.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            if let Some(spans) = self.take_now(parent) {
                return Ok(spans);
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return self
                    .take_now(parent)
                    .ok_or_else(|| self.none_came(parent, limit));
            }
        }
    }

    /// The spans under `parent`, taken out, if its root has arrived.
    fn take_now(&self, parent: TraceParent) -> Option<Vec<AgentSpan>> {
        if parent.trace != self.trace {
            return None;
        }
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if !held.iter().any(|s| s.parent_span_id == Some(parent.span)) {
            return None;
        }
        let children = children_of(&held);
        let mut under = HashSet::new();
        let mut stack = vec![parent.span];
        while let Some(id) = stack.pop() {
            for &child in children.get(&id).into_iter().flatten() {
                if under.insert(child) {
                    stack.push(child);
                }
            }
        }
        let (taken, kept) = std::mem::take(&mut *held)
            .into_iter()
            .partition(|s| under.contains(&s.span_id));
        *held = kept;
        Some(taken)
    }

    fn none_came(&self, parent: TraceParent, limit: Duration) -> ConnectError {
        let address = self
            .address
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "the run's OTLP receiver".to_owned());
        ConnectError::Protocol {
            peer: "the agent's OpenTelemetry spans".to_owned(),
            message: format!(
                "no span under this interaction's trace context ({TRACEPARENT} {}) reached {address} within {} s: the agent must export its spans there and start them under the {TRACEPARENT} it is sent",
                parent.header(),
                limit.as_secs_f64()
            ),
        }
    }
}

/// Each span id's children, by id.
fn children_of(spans: &[AgentSpan]) -> HashMap<[u8; 8], Vec<[u8; 8]>> {
    let mut children: HashMap<[u8; 8], Vec<[u8; 8]>> = HashMap::new();
    for span in spans {
        if let Some(parent) = span.parent_span_id {
            children.entry(parent).or_default().push(span.span_id);
        }
    }
    children
}

impl SpanSource for SpanInbox {
    fn spans<'a>(
        &'a self,
        _agent: &'a str,
        _interaction: usize,
        parent: TraceParent,
        limit: Duration,
    ) -> BoxFuture<'a, Result<Vec<AgentSpan>, ConnectError>> {
        Box::pin(self.take(parent, limit))
    }
}

/// `[u8; 8]` as 16 hex digits.
mod hex8 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(id: &[u8; 8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::hex(id))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 8], D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).ok_or_else(|| serde::de::Error::custom("expected 16 hex digits"))
    }

    pub(super) fn parse(text: &str) -> Option<[u8; 8]> {
        if text.len() != 16 || !text.is_ascii() {
            return None;
        }
        let mut id = [0u8; 8];
        for (i, b) in id.iter_mut().enumerate() {
            *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(id)
    }
}

/// `Option<[u8; 8]>` as 16 hex digits or nothing.
mod opt_hex8 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(id: &Option<[u8; 8]>, s: S) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => super::hex8::serialize(id, s),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<[u8; 8]>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(text) => super::hex8::parse(&text)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom("expected 16 hex digits")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: u8, parent: Option<u8>) -> AgentSpan {
        AgentSpan {
            span_id: [id; 8],
            parent_span_id: parent.map(|p| [p; 8]),
            name: format!("s{id}"),
            ..AgentSpan::default()
        }
    }

    const PARENT: TraceParent = TraceParent {
        trace: [9; 16],
        span: [1; 8],
    };

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn an_interaction_takes_its_subtree_only_and_only_once() {
        let inbox = SpanInbox::new(PARENT.trace);
        // Another interaction's spans (under 7), and ours (under 1).
        inbox.file(PARENT.trace, vec![span(8, Some(7)), span(3, Some(2))]);
        inbox.file(PARENT.trace, vec![span(2, Some(1)), span(4, Some(2))]);
        let rt = runtime();
        let mut names: Vec<String> = rt
            .block_on(inbox.take(PARENT, Duration::from_millis(10)))
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        names.sort();
        assert_eq!(names, ["s2", "s3", "s4"]);
        assert!(
            rt.block_on(inbox.take(PARENT, Duration::from_millis(10)))
                .is_err()
        );
        assert_eq!(inbox.held.lock().unwrap().len(), 1);
    }

    #[test]
    fn spans_of_another_trace_are_not_kept() {
        let inbox = SpanInbox::new(PARENT.trace);
        assert_eq!(inbox.file([0; 16], vec![span(2, Some(1))]), 0);
        assert!(inbox.held.lock().unwrap().is_empty());
    }

    #[test]
    fn a_root_that_never_comes_is_an_error_naming_the_context_and_the_receiver() {
        let inbox = SpanInbox::new(PARENT.trace);
        inbox.set_address("http://127.0.0.1:4318/v1/traces");
        // A child without its root: not complete.
        inbox.file(PARENT.trace, vec![span(3, Some(2))]);
        let error = runtime()
            .block_on(inbox.take(PARENT, Duration::from_millis(20)))
            .unwrap_err()
            .to_string();
        assert!(error.contains(&PARENT.header()), "{error}");
        assert!(error.contains("http://127.0.0.1:4318/v1/traces"), "{error}");
    }

    #[test]
    fn a_wait_ends_when_the_root_arrives() {
        let inbox = std::sync::Arc::new(SpanInbox::new(PARENT.trace));
        let rt = runtime();
        let spans = rt.block_on(async {
            let filer = std::sync::Arc::clone(&inbox);
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                filer.file(PARENT.trace, vec![span(2, Some(1))]);
            });
            inbox.take(PARENT, Duration::from_secs(30)).await
        });
        assert_eq!(spans.unwrap().len(), 1);
    }

    #[test]
    fn past_the_cap_spans_are_refused_and_counted() {
        let inbox = SpanInbox::new(PARENT.trace);
        let many: Vec<AgentSpan> = (0..MAX_HELD_SPANS + 3).map(|_| span(5, Some(6))).collect();
        assert_eq!(inbox.file(PARENT.trace, many), 3);
    }

    #[test]
    fn a_span_reads_back_from_its_json() {
        let mut s = span(2, Some(1));
        s.attributes.insert("gen_ai.tool.name".into(), "add".into());
        s.error = Some("boom".into());
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains("\"0202020202020202\""), "{text}");
        assert_eq!(serde_json::from_str::<AgentSpan>(&text).unwrap(), s);
        assert!(
            serde_json::from_str::<AgentSpan>(
                r#"{"span_id":"zz","name":"x","start_unix_nano":0,"end_unix_nano":0}"#
            )
            .is_err()
        );
    }
}
