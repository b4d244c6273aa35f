//! [`FakeState`]: the state endpoint of an agent's environment, on 127.0.0.1, as a team
//! would put one beside its agent for `expect_state` (`state_endpoint`,
//! `docs/conversations.md`): `GET /state` answers the JSON the test set for the
//! sample the request names (its `x-prill-sample` header), else the one set for all,
//! and keeps every request it got. It can be told to answer a status of the test's
//! choosing, or a body that is not JSON.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::Value;

use crate::providers::RecordedRequest;
use crate::providers::scripted::{Answer, Body, Served, serve};

#[derive(Debug, Default)]
struct Inner {
    state: Value,
    by_sample: BTreeMap<String, Value>,
    requests: Vec<RecordedRequest>,
    status: Option<(u16, String)>,
}

/// A fake state endpoint; stops when dropped.
#[derive(Debug)]
pub struct FakeState {
    served: Served,
    state: Arc<Mutex<Inner>>,
}

impl FakeState {
    /// Starts it on a free loopback port, answering `null` until told otherwise.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start() -> FakeState {
        let state = Arc::new(Mutex::new(Inner::default()));
        let shared = Arc::clone(&state);
        let served = serve(move |request| handle(Arc::clone(&shared), request)).await;
        FakeState { served, state }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The endpoint's URL: `http://127.0.0.1:PORT/state`.
    pub fn url(&self) -> String {
        format!("http://{}/state", self.served.addr)
    }

    /// Answers `state` to every sample not given one of its own.
    pub fn set(&self, state: Value) -> &FakeState {
        self.lock().state = state;
        self
    }

    /// Answers `state` to sample `sample` (its `x-prill-sample` header).
    pub fn set_for(&self, sample: u32, state: Value) -> &FakeState {
        self.lock().by_sample.insert(sample.to_string(), state);
        self
    }

    /// Answers every request with `status` and `body` instead.
    pub fn fail_with(&self, status: u16, body: &str) -> &FakeState {
        self.lock().status = Some((status, body.to_owned()));
        self
    }

    /// Every request it got, as sent.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }
}

fn handle(state: Arc<Mutex<Inner>>, request: RecordedRequest) -> Answer {
    Box::pin(async move {
        let mut inner = state.lock().unwrap_or_else(|e| e.into_inner());
        inner.requests.push(request.clone());
        if request.method != "GET" || request.path != "/state" {
            return answer(404, "text/plain", Bytes::from_static(b"Not Found"));
        }
        if let Some((status, body)) = &inner.status {
            return answer(*status, "text/plain", Bytes::from(body.clone()));
        }
        let state = request
            .header("x-prill-sample")
            .and_then(|s| inner.by_sample.get(s))
            .unwrap_or(&inner.state);
        answer(200, "application/json", Bytes::from(state.to_string()))
    })
}

fn answer(status: u16, content_type: &str, body: Bytes) -> hyper::Response<Body> {
    hyper::Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(body).boxed())
        .expect("a valid response")
}
