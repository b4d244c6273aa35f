//! The built-in demo agents as a ready set of connectors: `prill run --demo` starts the
//! demo server on a free 127.0.0.1 port and reaches it over http, https and mcp, and
//! reaches the same agents in process over `direct`. No set-up, no API key. The same
//! server's demo model (`POST /v1/chat/completions`, answering `You said: <the last user
//! message>`) is the provider [`crate::DEMO_PROVIDER`], for Sentinel specs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use prill_connect::cassette::{
    Cassettes, Chunk, Exchange, Latency, RecordedRequest, RecordedResponse,
};
use serde_json::Value;

use prill_connect::provider::{self, Limits, ProviderSettings};
use prill_connect::{
    AgentRequest, AgentResponse, BoxFuture, ConnectError, HttpOptions, InProcessAgent,
    NeuroSanHttp, NeuroSanMcp, Registry, TlsOptions, Url,
};
use prill_demo::{DemoAgent, DemoServer, RunningServer, TlsIdentity};
use prill_spec::ProviderKind;
use prill_spec::model::config::ProviderConfig;
use prill_spec::model::data_driven::Connection;
use prill_target::model::Provider;

use prill_run::Connectors;

/// The connector of the demo agents' `direct` exchanges in a cassette: the endpoint is
/// the agent's name, the body the neuro-san chat request, and the response the agent's
/// messages, one JSON line each, as its server would stream them.
pub const DEMO_CONNECTOR: &str = "demo";

/// A demo agent answering in process, as the server would; recorded into the run's
/// cassettes and replayed from them like every other connection.
struct InProcessDemo {
    agent: DemoAgent,
    cassettes: Option<Cassettes>,
}

impl InProcessAgent for InProcessDemo {
    fn chat<'a>(
        &'a self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>> {
        Box::pin(async move {
            let started = Instant::now();
            let peer = format!("demo agent `{}`", self.agent.name());
            let mut body = prill_connect::wire::chat_request(request);
            let tape = self
                .cassettes
                .as_ref()
                .map(|c| (c, key(c, self.agent, &body)));
            let messages = match &tape {
                Some((cassettes, key)) => match cassettes.replay(key)? {
                    Some(exchange) => {
                        Some(replayed(&exchange, cassettes.latency(), started, &peer).await?)
                    }
                    None => None,
                },
                None => None,
            };
            let messages = match messages {
                Some(messages) => messages,
                None => {
                    if self.agent == DemoAgent::Flaky {
                        let sample = request
                            .metadata
                            .get(prill_run::engine::SAMPLE_METADATA)
                            .and_then(|s| s.parse().ok());
                        prill_demo::apply_sample(&mut body, sample);
                    }
                    let messages = prill_demo::respond(self.agent, &body).await;
                    if let Some((cassettes, key)) = tape {
                        record(cassettes, key, &messages, started, &peer)?;
                    }
                    messages
                }
            };
            let mut response = prill_connect::wire::response_from_messages(messages)
                .map_err(|e| ConnectError::protocol(&peer, e.0))?;
            response.timings.first_byte = Some(started.elapsed());
            response.timings.total = started.elapsed();
            Ok(response)
        })
    }
}

/// `body` (the chat request as sent to `agent`) as the cassettes key it: without the
/// sample's metadata, which the key has from the sample's scope.
fn key(cassettes: &Cassettes, agent: DemoAgent, body: &Value) -> RecordedRequest {
    let mut body = body.clone();
    if let Some(metadata) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove(prill_run::engine::SAMPLE_METADATA);
    }
    cassettes.request(DEMO_CONNECTOR, "", agent.name(), &body)
}

/// The messages of a recorded exchange, each at its recorded time from `started` (or
/// at once with [`Latency::Zero`]).
async fn replayed(
    exchange: &Exchange,
    latency: Latency,
    started: Instant,
    peer: &str,
) -> Result<Vec<Value>, ConnectError> {
    let mut messages = Vec::with_capacity(exchange.response.chunks.len());
    for chunk in &exchange.response.chunks {
        if latency == Latency::Recorded {
            tokio::time::sleep_until((started + Duration::from_millis(chunk.at_ms)).into()).await;
        }
        let message = chunk
            .bytes()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(|| ConnectError::protocol(peer, "a recorded message is not JSON"))?;
        messages.push(message);
    }
    Ok(messages)
}

/// Writes what the agent answered live: its messages, one line each.
fn record(
    cassettes: &Cassettes,
    key: RecordedRequest,
    messages: &[Value],
    started: Instant,
    peer: &str,
) -> Result<(), ConnectError> {
    let at_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let chunks = messages
        .iter()
        .map(|m| Chunk::new(at_ms, serde_json::to_vec(m).unwrap_or_default()))
        .collect();
    let response = RecordedResponse {
        status: 0,
        headers: Vec::new(),
        chunks,
        broke_off: None,
    };
    cassettes
        .record(key, response)
        .map_err(|e| ConnectError::Config {
            message: format!(
                "cannot write the cassette of {peer}: {e}; check that the cassette folder is writable"
            ),
        })
}

/// Every demo agent, in process, under its name.
pub fn in_process_registry() -> Registry {
    taped_registry(None)
}

/// Every demo agent, in process, under its name, recording into `cassettes` or
/// replaying from them.
pub fn taped_registry(cassettes: Option<Cassettes>) -> Registry {
    DemoAgent::ALL
        .iter()
        .fold(Registry::new(), |registry, agent| {
            registry.with(
                agent.name(),
                Arc::new(InProcessDemo {
                    agent: *agent,
                    cassettes: cassettes.clone(),
                }) as Arc<dyn InProcessAgent>,
            )
        })
}

/// A running demo server and the connectors that reach it.
pub struct Demo {
    /// The server (http and https on one port).
    pub server: RunningServer,
    /// `direct` (in process), `http`, `https` (trusting the server's certificate) and `mcp`.
    pub connectors: Connectors,
    /// The demo model, an OpenAI-compatible provider on the same server, with no key.
    pub model: Arc<dyn Provider>,
}

/// Why the demo could not start.
#[derive(Debug, thiserror::Error)]
pub enum DemoStartError {
    /// The server could not start.
    #[error("the demo server could not start: {0}")]
    Server(String),
    /// A connector could not be built.
    #[error(transparent)]
    Connect(#[from] ConnectError),
}

/// Starts the demo server on 127.0.0.1 (port 0 picks a free one) and builds connectors.
pub async fn start(port: u16) -> Result<Demo, DemoStartError> {
    start_with(port, None).await
}

/// [`start`], every connector (`direct` in process too) and the demo model recording
/// into `cassettes` or replaying from them (`prill run --demo --record DIR`).
pub async fn start_with(
    port: u16,
    cassettes: Option<prill_connect::cassette::Cassettes>,
) -> Result<Demo, DemoStartError> {
    let tls = TlsIdentity::self_signed().map_err(|e| DemoStartError::Server(e.to_string()))?;
    let cert = tls.cert_pem().to_owned();
    let server = DemoServer::builder()
        .tls(Some(tls))
        .bind(("127.0.0.1", port))
        .await
        .map_err(|e| DemoStartError::Server(e.to_string()))?;
    let base = Url::parse(&server.base_url()).map_err(|e| DemoStartError::Server(e.to_string()))?;
    let options = HttpOptions {
        tls: TlsOptions::default().with_ca_pem(cert.into_bytes()),
        cassettes: cassettes.clone(),
        ..HttpOptions::default()
    };
    let connectors = Connectors::new()
        .with(Connection::Direct, Arc::new(taped_registry(cassettes)))
        .with(
            Connection::Http,
            Arc::new(NeuroSanHttp::new(base.clone(), &options)?),
        )
        .with(
            Connection::Https,
            Arc::new(NeuroSanHttp::https(&base, &options)?),
        )
        .with(Connection::Mcp, Arc::new(NeuroSanMcp::new(base, &options)?));
    let table = ProviderConfig {
        kind: Some(ProviderKind::Openai),
        base_url: Some(format!("{}/v1", server.base_url())),
        ..ProviderConfig::default()
    };
    let settings =
        ProviderSettings::resolve(ProviderKind::Openai, &Default::default(), Some(&table))?;
    let model = provider::build(
        ProviderKind::Openai,
        settings,
        &options,
        Limits::new(None, None),
    )?;
    Ok(Demo {
        server,
        connectors,
        model,
    })
}
