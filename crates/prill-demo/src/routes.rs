//! Request routing and the small endpoints: health, the agent list and `function`.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{CONNECTION, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use serde_json::{Value, json};

use crate::body::{Body, empty, full};
use crate::server::Shared;
use crate::timed::{RequestBody, RequestBodyError};
use crate::{DemoAgent, chat, mcp, model, otlp, pages, pyjson, replay};

/// The largest request body read, 16 MiB.
const MAX_REQUEST_BODY: usize = 16 * 1024 * 1024;

/// Routes one request.
pub(crate) async fn handle(shared: Arc<Shared>, request: Request<RequestBody>) -> Response<Body> {
    if let Some(pages) = &shared.pages {
        return pages::handle(Arc::clone(&pages.0), request).await;
    }
    if let Some(inbox) = &shared.otlp {
        return otlp::handle(Arc::clone(inbox), shared.otlp_forward.clone(), request).await;
    }
    if let Some(recordings) = shared.replay.clone() {
        return replay::handle(shared, recordings, request).await;
    }
    let path = request.uri().path();
    let method = request.method();
    match path {
        "/" | "/healthz" | "/readyz" | "/livez" => match *method {
            Method::GET | Method::HEAD => health(),
            _ => status_only(StatusCode::METHOD_NOT_ALLOWED),
        },
        "/api/v1/list" => match *method {
            Method::GET | Method::POST => list(),
            _ => status_only(StatusCode::METHOD_NOT_ALLOWED),
        },
        "/mcp" => match *method {
            Method::POST => mcp::handle(shared, request).await,
            _ => status_only(StatusCode::METHOD_NOT_ALLOWED),
        },
        "/v1/chat/completions" => match *method {
            Method::POST => model::handle(request).await,
            _ => status_only(StatusCode::METHOD_NOT_ALLOWED),
        },
        _ => {
            let Some(rest) = path.strip_prefix("/api/v1/") else {
                return status_only(StatusCode::NOT_FOUND);
            };
            if let Some(name) = rest.strip_suffix("/streaming_chat") {
                let Some(agent) = find_agent(name) else {
                    return status_only(StatusCode::NOT_FOUND);
                };
                match *method {
                    Method::POST => chat::handle(shared, agent, request).await,
                    _ => status_only(StatusCode::METHOD_NOT_ALLOWED),
                }
            } else if let Some(name) = rest.strip_suffix("/function") {
                let Some(agent) = find_agent(name) else {
                    return status_only(StatusCode::NOT_FOUND);
                };
                match *method {
                    Method::GET | Method::POST => {
                        json_response(StatusCode::OK, &json!({"function": agent.function()}))
                    }
                    _ => status_only(StatusCode::METHOD_NOT_ALLOWED),
                }
            } else {
                status_only(StatusCode::NOT_FOUND)
            }
        }
    }
}

/// The agent a url names (percent-decoded; it may contain `/`).
fn find_agent(name: &str) -> Option<DemoAgent> {
    if name.is_empty() {
        return None;
    }
    DemoAgent::from_name(&percent_decode(name)?)
}

/// `%XX`-decodes `text`; `None` when the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(std::borrow::Cow::into_owned)
}

pub(crate) fn health() -> Response<Body> {
    json_response(
        StatusCode::OK,
        &json!({
            "service": "neuro-san.Agent",
            "status": "ok",
            "versions": {"prill-demo": env!("CARGO_PKG_VERSION")}
        }),
    )
}

fn list() -> Response<Body> {
    let agents: Vec<Value> = DemoAgent::ALL
        .iter()
        .map(|agent| {
            json!({
                "agent_name": agent.name(),
                "description": agent.description(),
                "tags": agent.tags(),
            })
        })
        .collect();
    json_response(StatusCode::OK, &json!({"agents": agents}))
}

/// Reads a whole request body (at most 16 MiB) within its time limits
/// ([`RequestBody`]); `Err` is the response to send instead. A body that runs out of
/// time is a 408 that closes the connection, and what was read of it is dropped here.
pub(crate) async fn read_body(body: RequestBody) -> Result<Bytes, Response<Body>> {
    let error = match Limited::new(body, MAX_REQUEST_BODY).collect().await {
        Ok(collected) => return Ok(collected.to_bytes()),
        Err(error) => error,
    };
    if error.is::<http_body_util::LengthLimitError>() {
        return Err(error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Request body too large",
        ));
    }
    match error.downcast_ref::<RequestBodyError>() {
        Some(timeout) if timeout.is_timeout() => {
            tracing::debug!(%timeout, "a request body ran out of time");
            let mut response = error_response(StatusCode::REQUEST_TIMEOUT, &timeout.to_string());
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            Err(response)
        }
        _ => Err(error_response(
            StatusCode::BAD_REQUEST,
            "Cannot read the request body",
        )),
    }
}

/// A response with a status and an empty body.
pub(crate) fn status_only(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(empty());
    *response.status_mut() = status;
    response
}

/// A response with a JSON body written as Python writes it.
pub(crate) fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(full(pyjson::to_vec(value)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// neuro-san's error shape, `{"error": message}`.
pub(crate) fn error_response(status: StatusCode, message: &str) -> Response<Body> {
    json_response(status, &json!({"error": message}))
}

/// An error with `Retry-After: 1`.
pub(crate) fn retry_after(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = error_response(status, message);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_percent_escapes() {
        assert_eq!(
            percent_decode("deep%2Fmath_guy").as_deref(),
            Some("deep/math_guy")
        );
        assert_eq!(percent_decode("a%zzb%").as_deref(), Some("a%zzb%"));
        assert_eq!(percent_decode("%ff"), None);
    }
}
