//! [`OtlpExporter`]: spans sent to an OpenTelemetry receiver over OTLP/HTTP, one
//! `ExportTraceServiceRequest` (the official `opentelemetry-proto` message) a request,
//! protobuf-encoded (`Content-Type: application/x-protobuf`, which every OTLP/HTTP
//! receiver takes; some, such as Arize Phoenix, take nothing else).
//!
//! The endpoint is read as `OTEL_EXPORTER_OTLP_ENDPOINT` is: a base to which
//! `v1/traces` is added, unless it already ends with `/v1/traces`. Headers (a project
//! name, a key) go with every request; their values are never shown, as they may be
//! keys. The http rules are the agents' ([`HttpOptions`]): a connection that could not
//! be made and `429` or `503` are tried again, nothing else is (a receiver may already
//! have stored spans it answered `500` to).
//!
//! ```no_run
//! # async fn demo() -> Result<(), prill_connect::ConnectError> {
//! use prill_connect::HttpOptions;
//! use prill_connect::otlp::OtlpExporter;
//! use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
//!
//! let exporter = OtlpExporter::new("http://127.0.0.1:6006", &[], &HttpOptions::default())?;
//! assert_eq!(exporter.url().as_str(), "http://127.0.0.1:6006/v1/traces");
//! exporter.export(&ExportTraceServiceRequest::default()).await?;
//! # Ok(())
//! # }
//! ```

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use crate::error::ConnectError;
use crate::http::{HttpClient, HttpOptions};
use crate::retry::Statuses;
use crate::server::label;

/// The path OTLP/HTTP takes traces at, under the endpoint.
const TRACES_PATH: &str = "v1/traces";

/// What the exporter sends its spans as.
const PROTOBUF: &str = "application/x-protobuf";

/// An OTLP/HTTP trace exporter.
#[derive(Debug, Clone)]
pub struct OtlpExporter {
    client: HttpClient,
    url: Url,
    headers: HeaderMap,
    peer: String,
}

impl OtlpExporter {
    /// An exporter to `endpoint` (a base URL, or one ending `/v1/traces`) sending
    /// `headers` with each request.
    pub fn new(
        endpoint: &str,
        headers: &[(String, String)],
        options: &HttpOptions,
    ) -> Result<OtlpExporter, ConnectError> {
        let url = traces_url(endpoint)?;
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ConnectError::config(format!("OTLP header `{name}` is not a header name"))
            })?;
            // The value may be a key: never in the message.
            let value = HeaderValue::from_str(value).map_err(|_| {
                ConnectError::config(format!(
                    "OTLP header `{name}` has a value that cannot be sent"
                ))
            })?;
            map.insert(name, value);
        }
        let options = HttpOptions {
            cassettes: None,
            ..options.clone()
        };
        Ok(OtlpExporter {
            client: HttpClient::new(&options, "otlp")?,
            peer: format!("the OTLP receiver {}", label(&url)),
            url,
            headers: map,
        })
    }

    /// Where the spans go.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Sends one batch. A receiver that takes only part of it (OTLP's
    /// `partial_success`) is an error that says how many spans it rejected and why.
    pub async fn export(&self, request: &ExportTraceServiceRequest) -> Result<(), ConnectError> {
        let body = request.encode_to_vec();
        let answered = self
            .client
            .attempt(&self.peer, Statuses::Agent, || {
                self.client
                    .client
                    .post(self.url.clone())
                    .headers(self.headers.clone())
                    .header(CONTENT_TYPE, PROTOBUF)
                    .body(body.clone())
            })
            .await?;
        let (status, attempts) = (answered.response.status(), answered.attempts);
        let bytes = answered
            .response
            .bytes()
            .await
            .map_err(|e| self.client.broke_off(&e, &self.peer, 0))?;
        if !status.is_success() {
            return Err(ConnectError::Status {
                server: self.peer.clone(),
                status: status.as_u16(),
                body: crate::error::cut(&String::from_utf8_lossy(&bytes), 300),
                attempts,
            });
        }
        // A JSON or empty answer from a lenient receiver says nothing more.
        if let Ok(answer) = ExportTraceServiceResponse::decode(bytes.as_ref())
            && let Some(partial) = answer.partial_success
            && partial.rejected_spans > 0
        {
            return Err(ConnectError::protocol(
                &self.peer,
                format!(
                    "{} span(s) were rejected: {}",
                    partial.rejected_spans, partial.error_message
                ),
            ));
        }
        Ok(())
    }
}

/// The traces URL of an endpoint: `v1/traces` under it, unless it is already there.
fn traces_url(endpoint: &str) -> Result<Url, ConnectError> {
    let bad = |why: &str| ConnectError::config(format!("the OTLP endpoint `{endpoint}` {why}"));
    let mut url = Url::parse(endpoint).map_err(|e| bad(&format!("is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("is not http or https"));
    }
    if url.path().trim_end_matches('/').ends_with("/v1/traces") {
        return Ok(url);
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url.join(TRACES_PATH)
        .map_err(|e| bad(&format!("cannot take `{TRACES_PATH}` ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_a_base_unless_it_names_the_traces_path() {
        let url = |e: &str| traces_url(e).map(|u| u.to_string());
        assert_eq!(
            url("http://127.0.0.1:6006").unwrap(),
            "http://127.0.0.1:6006/v1/traces"
        );
        assert_eq!(url("http://h:4318/").unwrap(), "http://h:4318/v1/traces");
        assert_eq!(url("https://h/otlp").unwrap(), "https://h/otlp/v1/traces");
        assert_eq!(
            url("http://h:4318/v1/traces").unwrap(),
            "http://h:4318/v1/traces"
        );
        assert!(
            url("ftp://h")
                .unwrap_err()
                .to_string()
                .contains("is not http or https")
        );
        assert!(
            url("not a url")
                .unwrap_err()
                .to_string()
                .contains("is not a URL")
        );
    }

    #[test]
    fn a_bad_header_value_is_refused_without_showing_it() {
        let headers = [("authorization".to_owned(), "Bearer sk-secret\n".to_owned())];
        let e = OtlpExporter::new("http://127.0.0.1:1", &headers, &HttpOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`authorization`") && !e.contains("sk-secret"),
            "{e}"
        );
    }
}
