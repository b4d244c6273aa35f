//! The run exported as OpenTelemetry spans (`--otlp URL`, `[otel]` in `prill.toml`):
//! `prill-report`'s [`OtelSpans`] builds them from the run's events, and each batch is
//! sent with `prill-connect`'s [`OtlpExporter`] as soon as it is built (a case's spans
//! when it has its verdict). The reporters run on a thread of their own, so the export
//! waits there, never in the engine. A receiver that cannot take the spans fails the
//! run as a report file that cannot be written does: what was asked for is missing.
//!
//! The other way, a run with a `trajectory: otel` case starts an OTLP/HTTP receiver
//! ([`Receiver`], `prill-demo`'s server with its limits) whose spans
//! [`Settings::tracing`] hands the engine, through the run's cassettes.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prill_connect::cassette::RecordedSpans;
use prill_connect::otlp::OtlpExporter;
use prill_report::otel::OtelSpans;
use prill_run::trace::Tracing;
use prill_spec::model::data_driven::TrajectorySource;
use prill_spec::plan::{Plan, Target};
use prill_target::otel::{SpanInbox, SpanSource};

use crate::error::SettingsError;
use crate::settings::Settings;

/// The variable whose `name=value,...` headers go with every export, as OpenTelemetry's
/// SDKs read it: where a receiver's key belongs.
pub const HEADERS_ENV: &str = "OTEL_EXPORTER_OTLP_HEADERS";

/// Where the reporter's batches go: the exporter, waited for on the reporters' thread.
pub type Sink = Box<dyn FnMut(ExportTraceServiceRequest) -> io::Result<()> + Send>;

/// The spans' reporter, and what to tell the user about it.
pub struct OtelExport {
    /// The reporter to add to the run's reporters.
    pub reporter: OtelSpans<Sink>,
    /// The run's trace id, in hex: where to look for it in the receiver.
    pub trace_id: String,
    /// Where the spans go.
    pub endpoint: String,
}

impl Settings {
    /// The export `--otlp` or `[otel]` asks for, if any: `--otlp` comes before
    /// `[otel] endpoint`. The headers are `[otel] headers` and those of
    /// [`HEADERS_ENV`]; their values are never shown. Content goes with the spans
    /// when `--otlp-content` or `[otel] content` asks for it.
    pub fn otel_export(&self) -> Result<Option<OtelExport>, SettingsError> {
        let config = self.config.as_ref().and_then(|c| c.otel.as_ref());
        let Some(exporter) = self.otlp_exporter()? else {
            return Ok(None);
        };
        let service = config
            .and_then(|c| c.service_name.clone())
            .unwrap_or_else(|| "prill".to_owned());
        let trace = self.trace_id;
        let trace_id = prill_target::otel::hex(&trace);
        let url = exporter.url().to_string();
        let sink = move |batch: ExportTraceServiceRequest| -> io::Result<()> {
            // On the reporters' own thread (`spawn_blocking`), which may wait.
            tokio::runtime::Handle::current()
                .block_on(exporter.export(&batch))
                .map_err(io::Error::other)
        };
        let content =
            self.overrides.otlp_content || config.and_then(|c| c.content).unwrap_or(false);
        Ok(Some(OtelExport {
            reporter: OtelSpans::new(trace, service, Box::new(sink) as Sink).with_content(content),
            trace_id,
            endpoint: url,
        }))
    }
}

impl Settings {
    /// The exporter `--otlp` or `[otel] endpoint` asks for, if any (`--otlp` first),
    /// with `[otel] headers` and those of [`HEADERS_ENV`]. Its exchanges are never
    /// recorded in cassettes: they are the run's report, not what it tests.
    fn otlp_exporter(&self) -> Result<Option<OtlpExporter>, SettingsError> {
        let config = self.config.as_ref().and_then(|c| c.otel.as_ref());
        let Some(endpoint) = self
            .overrides
            .otlp
            .clone()
            .or_else(|| config.and_then(|c| c.endpoint.clone()))
        else {
            return Ok(None);
        };
        let mut headers: Vec<(String, String)> = config
            .map(|c| c.headers.clone().into_iter().collect())
            .unwrap_or_default();
        headers.extend(env_headers(self.env.get(HEADERS_ENV).unwrap_or_default()));
        let mut options = self.http_options()?;
        options.cassettes = None;
        Ok(Some(OtlpExporter::new(&endpoint, &headers, &options)?))
    }
}

/// Sends every batch agents sent the receiver on to the run's exporter, so that the
/// backend holds the agents' spans under the run's. Returns why some could not go (the
/// first reason, and how many batches), once the receiver is gone.
#[cfg(feature = "demo")]
async fn forward_spans(
    mut batches: tokio::sync::mpsc::Receiver<ExportTraceServiceRequest>,
    exporter: OtlpExporter,
) -> Option<String> {
    let mut failed = 0usize;
    let mut first = None;
    while let Some(batch) = batches.recv().await {
        if let Err(error) = exporter.export(&batch).await {
            tracing::debug!(%error, "agents' spans could not be forwarded");
            failed += 1;
            first.get_or_insert_with(|| error.to_string());
        }
    }
    first.map(|why| {
        format!("{failed} batch(es) of agents' spans could not be forwarded to the run's receiver: {why}")
    })
}

/// A random trace id (never all zeros, which OTLP refuses).
pub(crate) fn new_trace_id() -> [u8; 16] {
    let mut trace = [0u8; 16];
    trace.iter_mut().for_each(|b| *b = fastrand::u8(..));
    trace[15] |= 1;
    trace
}

/// The run's OTLP/HTTP receiver: where agents send the spans of `trajectory: otel`
/// cases, filed in its inbox until their interaction takes them.
#[derive(Debug)]
pub struct Receiver {
    #[cfg(feature = "demo")]
    server: prill_demo::RunningServer,
    /// Reads `[otel] span_files`.
    #[cfg(feature = "demo")]
    files: tokio::task::JoinHandle<()>,
    /// Sends what agents send on to the run's own exporter, when it has one; ends with
    /// why some could not go, if any could not.
    #[cfg(feature = "demo")]
    forward: Option<tokio::task::JoinHandle<Option<String>>>,
    inbox: Arc<SpanInbox>,
    url: String,
}

impl Receiver {
    /// Where agents send their spans: `http://ADDRESS/v1/traces`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops listening and reading the span files, then gives the spans still to be
    /// forwarded up to 10 s to go. Returns why agents' spans did not all reach the
    /// run's own receiver, when they did not.
    pub async fn shutdown(self) -> Option<String> {
        #[cfg(feature = "demo")]
        {
            self.files.abort();
            self.server.shutdown().await;
            let forward = self.forward?;
            // The server's end of the channel is gone: the task ends once it is empty.
            match tokio::time::timeout(Duration::from_secs(10), forward).await {
                Ok(Ok(failure)) => failure,
                Ok(Err(_)) => Some("forwarding agents' spans stopped".to_owned()),
                Err(_) => {
                    Some("agents' spans were still being forwarded 10 s after the run".to_owned())
                }
            }
        }
        #[cfg(not(feature = "demo"))]
        None
    }
}

impl Settings {
    /// Starts the run's receiver when a case of `plan` reads its trajectory from spans:
    /// on `[otel] receiver`, else a free port of 127.0.0.1, and the reading of `[otel]
    /// span_files` (relative to `prill.toml`'s folder) from where each ends now.
    pub async fn otel_receiver(&self, plan: &Plan) -> Result<Option<Receiver>, SettingsError> {
        let wanted = plan.cases.iter().any(|c| {
            matches!(
                c.target,
                Target::Agent {
                    trajectory: TrajectorySource::Otel,
                    ..
                }
            )
        });
        if !wanted {
            return Ok(None);
        }
        let address = self
            .config
            .as_ref()
            .and_then(|c| c.otel.as_ref())
            .and_then(|o| o.receiver.clone())
            .unwrap_or_else(|| "127.0.0.1:0".to_owned());
        let inbox = Arc::new(SpanInbox::new(self.trace_id));
        #[cfg(feature = "demo")]
        {
            let mut builder = prill_demo::DemoServer::builder().otlp(Arc::clone(&inbox));
            let mut forward = None;
            if let Some(exporter) = self.otlp_exporter()? {
                let (tx, rx) = tokio::sync::mpsc::channel(64);
                builder = builder.otlp_forward(tx);
                forward = Some(tokio::spawn(forward_spans(rx, exporter)));
            }
            let server = builder.bind(address.as_str()).await.map_err(|e| {
                SettingsError::Connect(prill_target::ConnectError::config(format!(
                    "cannot start the OTLP receiver on {address} (`[otel] receiver`): {e}"
                )))
            })?;
            let url = format!("{}{}", server.base_url(), prill_demo::otlp::TRACES_PATH);
            let files: Vec<std::path::PathBuf> = self
                .config
                .as_ref()
                .and_then(|c| c.otel.as_ref())
                .map(|o| {
                    o.span_files
                        .iter()
                        .map(|f| self.project_dir().join(f))
                        .collect()
                })
                .unwrap_or_default();
            let mut address = url.clone();
            for file in &files {
                address.push_str(&format!(" or {}", file.display()));
            }
            inbox.set_address(address);
            let files = crate::span_files::follow(files, Arc::clone(&inbox));
            Ok(Some(Receiver {
                server,
                files,
                forward,
                inbox,
                url,
            }))
        }
        #[cfg(not(feature = "demo"))]
        {
            let _ = (address, inbox);
            Err(SettingsError::Demo(
                "this build has no OTLP receiver for `trajectory: otel` (the `demo` feature of prill-app)".to_owned(),
            ))
        }
    }

    /// The run's trace, when it has one: when its spans are exported (`--otlp`,
    /// `[otel] endpoint`) or `receiver` takes agents' spans. Its spans come from the
    /// receiver through the run's cassettes; an interaction waits `[otel]
    /// wait_in_seconds` for them (10 s by default).
    pub fn tracing(&self, receiver: Option<&Receiver>) -> Option<Tracing> {
        let config = self.config.as_ref().and_then(|c| c.otel.as_ref());
        let exports = self.overrides.otlp.is_some() || config.is_some_and(|c| c.endpoint.is_some());
        if !exports && receiver.is_none() {
            return None;
        }
        let mut tracing = Tracing::new(self.trace_id);
        if let Some(wait) = config
            .and_then(|c| c.wait_in_seconds)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
        {
            tracing.wait = wait;
        }
        tracing.spans = receiver.map(|r| {
            Arc::new(RecordedSpans::new(
                Arc::clone(&r.inbox),
                self.cassettes.clone(),
            )) as Arc<dyn SpanSource>
        });
        Some(tracing)
    }

    /// With the receiver at `url`: command agents are told to send their spans there.
    pub(crate) fn with_receiver(mut self, url: Option<String>) -> Settings {
        self.receiver_url = url;
        self
    }
}

/// `name=value,name=value`, as `OTEL_EXPORTER_OTLP_HEADERS` is written (values
/// percent-decoded as the specification says); a piece with no `=` is skipped.
fn env_headers(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            let value = percent_encoding::percent_decode_str(value.trim())
                .decode_utf8_lossy()
                .into_owned();
            Some((name.trim().to_owned(), value))
        })
        .filter(|(name, _)| !name.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headers_variable_is_read_as_the_specification_writes_it() {
        assert_eq!(
            env_headers("api-key=sk%20one, x-project-name=prill,broken,=x"),
            [
                ("api-key".to_owned(), "sk one".to_owned()),
                ("x-project-name".to_owned(), "prill".to_owned())
            ]
        );
        assert!(env_headers("").is_empty());
    }
}
