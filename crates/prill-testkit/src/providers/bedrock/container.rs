//! [`FakeContainerCredentials`]: the container credentials endpoint ECS and EKS Pod
//! Identity serve to a task, on 127.0.0.1 (what `AWS_CONTAINER_CREDENTIALS_FULL_URI`
//! points to).
//!
//! `GET` of its path answers the documented JSON, `{"AccessKeyId", "SecretAccessKey",
//! "Token", "Expiration", "RoleArn"}`; with an authorization token set, a request
//! without it in `Authorization` is a `401`; any other path or method is a `404`.

use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::providers::scripted::{RecordedRequest, Served, json_answer, serve};

/// The path credentials are served at.
pub const PATH: &str = "/v2/credentials/prill-task";

/// A container credentials endpoint on 127.0.0.1; stops when dropped.
#[derive(Debug)]
pub struct FakeContainerCredentials {
    served: Served,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
}

impl FakeContainerCredentials {
    /// Starts the endpoint serving these credentials (which expire at `expiration`, an
    /// RFC 3339 time) to requests that carry `token` in `Authorization`, if given.
    pub async fn start(
        access_key_id: &str,
        secret_access_key: &str,
        session_token: &str,
        expiration: &str,
        token: Option<&str>,
    ) -> FakeContainerCredentials {
        let body = json!({
            "AccessKeyId": access_key_id,
            "SecretAccessKey": secret_access_key,
            "Token": session_token,
            "Expiration": expiration,
            "RoleArn": "arn:aws:iam::123456789012:role/prill-task",
        });
        let token = token.map(str::to_owned);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let served = serve(move |request: RecordedRequest| {
            let answer = if request.method != "GET" || request.path != PATH {
                json_answer(404, &[], &json!({"message": "not found"}))
            } else if token.is_some() && request.header("authorization") != token.as_deref() {
                json_answer(401, &[], &json!({"message": "missing or wrong token"}))
            } else {
                json_answer(200, &[], &body)
            };
            seen.lock().unwrap_or_else(|e| e.into_inner()).push(request);
            Box::pin(async move { answer })
        })
        .await;
        FakeContainerCredentials { served, requests }
    }

    /// What `AWS_CONTAINER_CREDENTIALS_FULL_URI` would say.
    pub fn full_uri(&self) -> String {
        format!("http://{}{PATH}", self.served.addr)
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
