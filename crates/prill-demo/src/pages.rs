//! Read-only pages served in place of the demo agents (`prill view`): the server's
//! listener, limits and shutdown, with the pages made by a [`Pages`] the caller gives.
//!
//! Only `GET` and `HEAD` are answered (a `405` otherwise, with no body read). A request
//! whose `Host` is not a loopback name (`127.0.0.1`, `localhost`, `[::1]`) gets a `421`,
//! so a web page whose own name resolves to this machine (DNS rebinding) cannot read
//! the pages. Every page is sent with `Cache-Control: no-store` and a content security
//! policy that lets it load nothing from anywhere (its style and script are inline), so
//! nothing on it leaves the machine. [`Pages::page`] runs on the blocking pool: it may
//! read files.
//!
//! ```
//! use std::sync::Arc;
//! use prill_demo::{Page, Pages};
//!
//! struct Hello;
//! impl Pages for Hello {
//!     fn page(&self, path: &str, _query: Option<&str>) -> Page {
//!         match path {
//!             "/" => Page::html(200, "<!DOCTYPE html><title>hi</title>".to_owned()),
//!             _ => Page::html(404, "<!DOCTYPE html><title>not here</title>".to_owned()),
//!         }
//!     }
//! }
//! let builder = prill_demo::DemoServer::builder().pages(Arc::new(Hello));
//! # let _ = builder;
//! ```

use std::sync::Arc;

use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, HOST};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode};

use crate::body::{Body, empty, full};
use crate::routes::status_only;
use crate::timed::RequestBody;

/// What a page may load: nothing but its own inline style and script, and `data:`
/// images; forms submit only to this server.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
                      img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The pages of a read-only site (`prill view`), made on request.
pub trait Pages: Send + Sync + 'static {
    /// The page at `path` (percent-encoded, as requested) with its `query` (the part
    /// after `?`, if any). Called on the blocking pool.
    fn page(&self, path: &str, query: Option<&str>) -> Page;
}

/// One page: its status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The http status, e.g. `200` or `404`.
    pub status: u16,
    /// The content type, e.g. `text/html; charset=utf-8`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

impl Page {
    /// An HTML page.
    pub fn html(status: u16, body: String) -> Page {
        Page {
            status,
            content_type: "text/html; charset=utf-8",
            body,
        }
    }
}

/// Answers one request from `pages`.
pub(crate) async fn handle(pages: Arc<dyn Pages>, request: Request<RequestBody>) -> Response<Body> {
    let head = match *request.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => {
            let mut response = status_only(StatusCode::METHOD_NOT_ALLOWED);
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return response;
        }
    };
    if !loopback_host(request.headers().get(HOST)) {
        return status_only(StatusCode::MISDIRECTED_REQUEST);
    }
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    let made = tokio::task::spawn_blocking(move || pages.page(&path, query.as_deref())).await;
    let page = match made {
        Ok(page) => page,
        Err(error) => {
            tracing::debug!(%error, "a page could not be made");
            return status_only(StatusCode::INTERNAL_SERVER_ERROR);
        }
    };
    let status = StatusCode::from_u16(page.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = Response::new(if head { empty() } else { full(page.body) });
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(page.content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        HeaderName::from_static("content-security-policy"),
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        HeaderName::from_static("referrer-policy"),
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// Whether a `Host` header names this machine by a loopback name (any port).
fn loopback_host(host: Option<&HeaderValue>) -> bool {
    let Some(host) = host.and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    matches!(
        name.to_ascii_lowercase().as_str(),
        "127.0.0.1" | "localhost" | "::1"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_are_this_machine() {
        let host = |h: &'static str| loopback_host(Some(&HeaderValue::from_static(h)));
        for good in [
            "127.0.0.1:4000",
            "localhost:4000",
            "LOCALHOST",
            "[::1]:4000",
            "127.0.0.1",
        ] {
            assert!(host(good), "{good}");
        }
        for bad in [
            "evil.example:4000",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "[::2]:1",
            "",
        ] {
            assert!(!host(bad), "{bad}");
        }
        assert!(!loopback_host(None));
    }
}
