//! `prill-target` says what Prill tests, and nothing about how it is reached: the
//! traits that every agent connector and every model provider implements, the messages
//! they exchange and their errors. It has no HTTP client, no TLS stack and no server,
//! so a crate that only drives the engine or the Rust suite API
//! (`prill_run::run_test_suite`) builds none of them; the implementations over the
//! network are in `prill-connect`, which re-exports everything here.
//!
//! - Agents: a [`Connector`] opens a [`Conversation`] with a named agent; a
//!   conversation sends [`AgentRequest`]s and returns [`AgentResponse`]s. A
//!   [`Registry`] of [`InProcessAgent`]s (built with [`from_fn`]) is a connector of
//!   Rust functions.
//! - Models: a [`model::Provider`] completes a [`model::ModelRequest`] with a
//!   [`model::ModelResponse`].
//! - Graphs: a [`graph::GraphServer`] (a LangGraph server) runs an assistant on a
//!   [`graph::GraphRequest`] and returns the run's messages as a [`graph::GraphRun`].
//! - Errors: every [`ConnectError`] means the agent or model could not be reached or
//!   broke the protocol; none of them is a test failure. [`ConnectError::kind`] gives
//!   its [`ErrorKind`], which reports print by name.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//!
//! use prill_target::{AgentRequest, AgentResponse, Connector, Registry, from_fn};
//!
//! let shout = from_fn(|request: AgentRequest| async move {
//!     Ok(AgentResponse {
//!         text: request.text.map(|t| t.to_uppercase()),
//!         ..AgentResponse::default()
//!     })
//! });
//! let agents = Registry::new().with("shout", Arc::new(shout));
//! let runtime = tokio::runtime::Runtime::new().unwrap();
//! let answer = runtime.block_on(async {
//!     let mut conversation = agents.open("shout").await?;
//!     conversation
//!         .send(&AgentRequest {
//!             text: Some("hello".into()),
//!             ..AgentRequest::default()
//!         })
//!         .await
//! });
//! assert_eq!(answer.unwrap().text.as_deref(), Some("HELLO"));
//! ```

pub mod error;
pub mod graph;
pub mod inprocess;
pub mod model;
pub mod otel;
pub mod retry;
pub mod scope;
pub mod tools;
pub mod types;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use error::{ConnectError, ErrorKind};
pub use inprocess::{InProcessAgent, Registry, from_fn};
pub use types::{
    AgentFunction, AgentInfo, AgentRequest, AgentResponse, Invocation, JsonMap, Timings, TokenUsage,
};

/// The request metadata key that carries the sample index (`0`, `1`, ...), which the
/// engine sends with every request to an agent.
pub const SAMPLE_METADATA: &str = "x-prill-sample";

/// The limit on an exchange with an agent or a model whose request sets none: 300 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// A boxed future that can cross threads, as trait objects return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A way to reach agents by name.
pub trait Connector: Send + Sync {
    /// Opens a fresh conversation with `agent`. Whether this touches the network or
    /// starts a process depends on the connector; errors about the agent itself may
    /// only show on the first [`Conversation::send`].
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>>;
}

/// One conversation with one agent.
pub trait Conversation: Send {
    /// Sends one request and waits for the whole response, within `request.timeout`.
    fn send<'a>(
        &'a mut self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>>;

    /// The state of the agent's environment when the conversation is over, for
    /// `expect_state`: the JSON body of a `GET` of `endpoint` (a path on the agent's
    /// server, or an http(s) URL) sent with `metadata` as the conversation's requests
    /// are, within `limit`. A connection with no http to read it with says so: the
    /// default is an error.
    fn state<'a>(
        &'a mut self,
        endpoint: &'a str,
        metadata: &'a std::collections::BTreeMap<String, String>,
        limit: Option<Duration>,
    ) -> BoxFuture<'a, Result<serde_json::Value, ConnectError>> {
        let _ = (endpoint, metadata, limit);
        Box::pin(async {
            Err(ConnectError::config(
                "this connection cannot read a `state_endpoint`: the end state is read over `http` or `https`",
            ))
        })
    }
}

/// Runs `exchange` within `limit`, if there is one; running out drops the exchange
/// (closing its connection) and is a [`ConnectError::Timeout`] naming `peer`.
///
/// Not an `async fn`: that would hold `exchange` twice (its argument and the timed
/// future), doubling the memory of every request in flight.
pub fn with_timeout<T>(
    peer: &str,
    limit: Option<Duration>,
    exchange: impl Future<Output = Result<T, ConnectError>>,
) -> impl Future<Output = Result<T, ConnectError>> {
    use futures_util::future::{Either, FutureExt};
    match limit {
        None => Either::Left(exchange),
        Some(limit) => Either::Right(tokio::time::timeout(limit, exchange).map(move |timed| {
            timed.unwrap_or_else(|_| {
                Err(ConnectError::Timeout {
                    peer: peer.to_owned(),
                    limit,
                })
            })
        })),
    }
}
