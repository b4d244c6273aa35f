//! [`FakeOtlp`]: an OTLP/HTTP trace receiver on 127.0.0.1 that keeps what it is sent,
//! decoded with the official `opentelemetry-proto` messages. As the OTLP specification
//! says (and as Arize Phoenix does), `POST /v1/traces` takes a protobuf body
//! (`Content-Type: application/x-protobuf`) and answers an `ExportTraceServiceResponse`;
//! any other content type is `415`, a body that does not decode `400`. It can be told to
//! answer the next requests with a status of the test's choosing, or to reject spans
//! (`partial_success`).

use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;

use crate::providers::RecordedRequest;
use crate::providers::scripted::{Answer, Body, Served, serve};

#[derive(Debug, Default)]
struct Inner {
    batches: Vec<ExportTraceServiceRequest>,
    requests: Vec<RecordedRequest>,
    statuses: Vec<u16>,
    rejected: Option<(i64, String)>,
    /// Batches holding a span of this name are refused with this status.
    refused: Option<(String, u16)>,
}

/// A fake OTLP/HTTP receiver; stops when dropped.
#[derive(Debug)]
pub struct FakeOtlp {
    served: Served,
    state: Arc<Mutex<Inner>>,
}

impl FakeOtlp {
    /// Starts the receiver on a free loopback port.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start() -> FakeOtlp {
        let state = Arc::new(Mutex::new(Inner::default()));
        let shared = Arc::clone(&state);
        let served = serve(move |request| handle(Arc::clone(&shared), request)).await;
        FakeOtlp { served, state }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Its base URL (`http://127.0.0.1:PORT`), as an OTLP endpoint is given.
    pub fn url(&self) -> String {
        format!("http://{}", self.served.addr)
    }

    /// Every batch it took, decoded.
    pub fn batches(&self) -> Vec<ExportTraceServiceRequest> {
        self.lock().batches.clone()
    }

    /// Every request it got, as sent.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// Answers the next requests with these statuses, one each, before taking any.
    pub fn answer_with(&self, statuses: &[u16]) -> &FakeOtlp {
        self.lock().statuses.extend_from_slice(statuses);
        self
    }

    /// Refuses with `status` every batch that holds a span named `name`, whenever it
    /// comes, and takes the others.
    pub fn refuse_batches_with(&self, name: &str, status: u16) -> &FakeOtlp {
        self.lock().refused = Some((name.to_owned(), status));
        self
    }

    /// Takes every batch but says it rejected `n` spans, for `why`.
    pub fn reject(&self, n: i64, why: &str) -> &FakeOtlp {
        self.lock().rejected = Some((n, why.to_owned()));
        self
    }
}

fn handle(state: Arc<Mutex<Inner>>, request: RecordedRequest) -> Answer {
    Box::pin(async move {
        let mut inner = state.lock().unwrap_or_else(|e| e.into_inner());
        inner.requests.push(request.clone());
        if request.method != "POST" || request.path != "/v1/traces" {
            return answer(404, Bytes::from_static(b"Not Found"));
        }
        if !inner.statuses.is_empty() {
            let status = inner.statuses.remove(0);
            return answer(status, Bytes::from_static(b"try later"));
        }
        if request.header("content-type") != Some("application/x-protobuf") {
            return answer(415, Bytes::from_static(b"Unsupported content type"));
        }
        let Ok(batch) = ExportTraceServiceRequest::decode(request.body.as_slice()) else {
            return answer(
                400,
                Bytes::from_static(b"the body is not an ExportTraceServiceRequest"),
            );
        };
        if let Some((name, status)) = &inner.refused {
            let holds = batch
                .resource_spans
                .iter()
                .flat_map(|r| &r.scope_spans)
                .flat_map(|s| &s.spans)
                .any(|span| &span.name == name);
            if holds {
                return answer(*status, Bytes::from_static(b"refused"));
            }
        }
        inner.batches.push(batch);
        let response = ExportTraceServiceResponse {
            partial_success: inner
                .rejected
                .clone()
                .map(
                    |(rejected_spans, error_message)| ExportTracePartialSuccess {
                        rejected_spans,
                        error_message,
                    },
                ),
        };
        answer(200, Bytes::from(response.encode_to_vec()))
    })
}

fn answer(status: u16, body: Bytes) -> hyper::Response<Body> {
    hyper::Response::builder()
        .status(status)
        .header("content-type", "application/x-protobuf")
        .body(Full::new(body).boxed())
        .expect("a valid response")
}
