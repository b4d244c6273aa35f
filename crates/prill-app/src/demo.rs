//! The built-in demo agents as a ready set of connectors: `prill run --demo` starts the
//! demo server on a free 127.0.0.1 port and reaches it over http, https and mcp, and
//! reaches the same agents in process over `direct`. No set-up, no API key. The same
//! server's demo model (`POST /v1/chat/completions`, answering `You said: <the last user
//! message>`) is the provider [`crate::DEMO_PROVIDER`], for Sentinel specs.

use std::sync::Arc;
use std::time::Instant;

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

/// A demo agent answering in process, as the server would.
struct InProcessDemo(DemoAgent);

impl InProcessAgent for InProcessDemo {
    fn chat<'a>(
        &'a self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>> {
        Box::pin(async move {
            let started = Instant::now();
            let mut body = prill_connect::wire::chat_request(request);
            if self.0 == DemoAgent::Flaky {
                let sample = request
                    .metadata
                    .get(prill_run::engine::SAMPLE_METADATA)
                    .and_then(|s| s.parse().ok());
                prill_demo::apply_sample(&mut body, sample);
            }
            let messages = prill_demo::respond(self.0, &body).await;
            let mut response =
                prill_connect::wire::response_from_messages(messages).map_err(|e| {
                    ConnectError::protocol(format!("demo agent `{}`", self.0.name()), e.0)
                })?;
            response.timings.first_byte = Some(started.elapsed());
            response.timings.total = started.elapsed();
            Ok(response)
        })
    }
}

/// Every demo agent, in process, under its name.
pub fn in_process_registry() -> Registry {
    DemoAgent::ALL
        .iter()
        .fold(Registry::new(), |registry, agent| {
            registry.with(
                agent.name(),
                Arc::new(InProcessDemo(*agent)) as Arc<dyn InProcessAgent>,
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

/// [`start`], the http, https and mcp connectors and the demo model recording into
/// `cassettes` or replaying from them (`prill run --demo --record DIR`); `direct`
/// answers in process and is not recorded.
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
        cassettes,
        ..HttpOptions::default()
    };
    let connectors = Connectors::new()
        .with(Connection::Direct, Arc::new(in_process_registry()))
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
