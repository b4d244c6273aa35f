//! `POST /api/v1/{agent}/streaming_chat`: a JSON-lines stream, one `json.dumps` object per
//! line, each line sent as its own chunk as soon as it is ready.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, stream};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Request, Response, StatusCode};
use serde_json::Value;

use crate::body::{Body, BodyError, Chunks, streamed};
use crate::conversation::{Exchange, Filter, HEARTBEAT_LINE};
use crate::faults::{Fault, HUGE_LINE_BYTES, huge_line_count, padded_line};
use crate::routes::{error_response, read_body};
use crate::server::Shared;
use crate::timed::RequestBody;
use crate::{DemoAgent, pyjson};

/// The line of the `malformed` fault mode.
const MALFORMED_LINE: &[u8] =
    b"{\"response\": {\"type\": \"AGENT_FRAMEWORK\", \"text\": \"this line is cut short\n";

/// Answers one `streaming_chat` request.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    agent: DemoAgent,
    request: Request<RequestBody>,
) -> Response<Body> {
    let fault = match Fault::from_headers(request.headers()) {
        Ok(fault) => fault,
        Err(response) => return *response,
    };
    let sample = crate::conversation::sample_header(request.headers());
    let body = match read_body(request.into_body()).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let mut request: Value = match serde_json::from_slice(&body) {
        Ok(value @ Value::Object(_)) => value,
        _ => return error_response(StatusCode::BAD_REQUEST, "Invalid JSON format"),
    };
    if agent == DemoAgent::Flaky {
        crate::conversation::apply_sample(&mut request, sample);
    }
    if let Some(response) = fault
        .as_ref()
        .and_then(|fault| fault.status_response(&shared))
    {
        return response;
    }
    let answer = || -> Chunks {
        match Exchange::run(agent, &request) {
            Some(exchange) => answer_chunks(&exchange, Filter::of(&request), &request),
            None => Box::pin(stream::iter([Ok(Bytes::from_static(b"{}\n"))])),
        }
    };
    let (chunks, stop_on_shutdown): (Chunks, bool) = match fault {
        None
        | Some(Fault::Internal | Fault::Unavailable | Fault::UnavailableOnce(_) | Fault::TooMany) => {
            (answer(), false)
        }
        Some(Fault::Drop) => (dropped_chunks(), false),
        Some(Fault::Malformed) => (
            Box::pin(stream::iter([Ok(Bytes::from_static(MALFORMED_LINE))]).chain(answer())),
            false,
        ),
        Some(Fault::Hang) => (Box::pin(stream::pending()), true),
        Some(Fault::Huge(bytes)) => (Box::pin(huge_chunks(agent, bytes).chain(answer())), true),
    };
    json_lines(streamed(&shared, chunks, stop_on_shutdown))
}

/// A 200 `application/json-lines` response streaming `body`.
fn json_lines(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json-lines"),
    );
    response
}

/// `{"response": <message>}` or, with `echo`, `{"response": <message>, "request": <echo>}`,
/// and a newline.
fn line(message: &Value, echo: Option<&[u8]>) -> Bytes {
    let mut out = Vec::with_capacity(512 + echo.map_or(0, <[u8]>::len));
    out.extend_from_slice(b"{\"response\": ");
    pyjson::write(&mut out, message);
    if let Some(echo) = echo {
        out.extend_from_slice(b", \"request\": ");
        out.extend_from_slice(echo);
    }
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// The normal answer: under `MINIMAL` only the final line; under `MAXIMAL` every message,
/// each with the request echoed, and the heartbeat. The tool's wait (the `slow` agent) sits
/// between the two halves.
fn answer_chunks(exchange: &Exchange, filter: Filter, request: &Value) -> Chunks {
    let (before, after) = match filter {
        Filter::Minimal => (Vec::new(), vec![line(&exchange.final_message(), None)]),
        Filter::Maximal => {
            let echo = pyjson::to_vec(request);
            let mut before: Vec<Bytes> = exchange
                .messages_before_wait()
                .iter()
                .map(|message| line(message, Some(&echo)))
                .collect();
            before.push(Bytes::from_static(HEARTBEAT_LINE));
            let mut after: Vec<Bytes> = exchange
                .messages_after_wait()
                .iter()
                .map(|message| line(message, Some(&echo)))
                .collect();
            after.push(line(&exchange.final_message(), Some(&echo)));
            (before, after)
        }
    };
    let after = stream::iter(after.into_iter().map(Ok));
    match exchange.delay().filter(|delay| !delay.is_zero()) {
        None if before.is_empty() => Box::pin(after),
        None => Box::pin(stream::iter(before.into_iter().map(Ok)).chain(after)),
        Some(delay) => Box::pin(
            stream::iter(before.into_iter().map(Ok))
                .chain(wait(delay))
                .chain(after),
        ),
    }
}

/// A stream that yields nothing but takes `delay` to end; dropping it cancels the wait.
fn wait(delay: Duration) -> impl futures_util::Stream<Item = Result<Bytes, BodyError>> + Send {
    stream::once(tokio::time::sleep(delay)).filter_map(|()| std::future::ready(None))
}

/// The `drop` fault mode: a heartbeat line, then the connection is cut.
fn dropped_chunks() -> Chunks {
    let cut = stream::once(async {
        // Let hyper flush the line before the connection is cut.
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        Err(BodyError::Dropped)
    });
    Box::pin(stream::iter([Ok(Bytes::from_static(HEARTBEAT_LINE))]).chain(cut))
}

/// The `huge` fault mode's lines: 64 KiB `AGENT` messages from the tool, one shared buffer
/// sent again and again, so nothing but that one line is held in memory.
fn huge_chunks(
    agent: DemoAgent,
    bytes: u64,
) -> impl futures_util::Stream<Item = Result<Bytes, BodyError>> + Send {
    let prefix = format!(
        "{{\"response\": {{\"type\": \"AGENT\", \"origin\": [{{\"tool\": \"{}\", \"instantiation_index\": 1}}, \
         {{\"tool\": \"{}\", \"instantiation_index\": 1}}], \"text\": \"",
        agent.front_man(),
        agent.tool()
    );
    let line = Bytes::from(padded_line(&prefix, "\"}}", HUGE_LINE_BYTES));
    stream::iter(std::iter::repeat_n(line, huge_line_count(bytes)).map(Ok))
}
