//! The run exported as OpenTelemetry spans (`--otlp URL`, `[otel]` in `prill.toml`):
//! `prill-report`'s [`OtelSpans`] builds them from the run's events, and each batch is
//! sent with `prill-connect`'s [`OtlpExporter`] as soon as it is built (a case's spans
//! when it has its verdict). The reporters run on a thread of their own, so the export
//! waits there, never in the engine. A receiver that cannot take the spans fails the
//! run as a report file that cannot be written does: what was asked for is missing.

use std::io;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prill_connect::otlp::OtlpExporter;
use prill_report::otel::OtelSpans;

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
        let exporter = OtlpExporter::new(&endpoint, &headers, &self.http_options()?)?;
        let service = config
            .and_then(|c| c.service_name.clone())
            .unwrap_or_else(|| "prill".to_owned());
        let mut trace = [0u8; 16];
        trace.iter_mut().for_each(|b| *b = fastrand::u8(..));
        let trace_id = trace.iter().map(|b| format!("{b:02x}")).collect();
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
