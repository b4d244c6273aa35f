//! [`RetryPolicy`] and [`Statuses`]: when and how long to wait before trying a request
//! again. This is the one place that decides it ([`RetryPolicy::next`]); the http
//! exchange only asks. `docs/architecture.md` states it as an invariant.
//!
//! A request is tried again only when the earlier attempt cannot have done anything:
//! - **the connection could not be made** (refused, no such host, reset during the
//!   handshake): no byte of the request reached the server. A connection that breaks
//!   *after* the request was written is never retried: the server may have run it.
//! - **the server answered a status that asks the client to come back later**, before
//!   any byte of the body is read. Which statuses, depends on who is asked
//!   ([`Statuses`]): an agent only 429 and 503, a model provider 408, 409, 429 and every
//!   5xx.
//!
//! The wait is the server's `Retry-After` (seconds or an HTTP date; `retry-after-ms` too,
//! which OpenAI-compatible servers send) when it gives one, else an exponential backoff
//! with full jitter (a random wait between zero and the exponential ceiling, so that
//! clients turned away together do not all come back together); either is capped at
//! [`RetryPolicy::max_delay`].
//!
//! Below this policy, the HTTP client's own pool (reqwest's, `hyper-util`'s) sends a
//! request once more on a new connection only when a pooled connection was found closed
//! before any byte of the request was written to it.
//!
//! Never after any byte of a successful response arrived, never on a timeout, never on
//! any other status. An error after retries says how many attempts were made.

use std::time::{Duration, SystemTime};

pub use prill_target::retry::Statuses;
use reqwest::header::HeaderMap;

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a request is tried in all, the first time included (at least 1).
    pub max_attempts: u32,
    /// The wait before the second attempt; it doubles before each later one.
    pub base_delay: Duration,
    /// The longest wait, also the cap on a server's `Retry-After`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(10),
        }
    }
}

/// What one attempt came to, as far as sending it again goes.
#[derive(Debug, Clone, Copy)]
pub enum Attempt<'a> {
    /// An answer with this status and these headers, its body not read.
    Answered {
        /// The answer's status.
        status: u16,
        /// The answer's headers (`Retry-After`).
        headers: &'a HeaderMap,
    },
    /// The connection could not be made: no byte of the request reached the server.
    NotConnected,
    /// Anything else (a connection that broke after the request was written, a time
    /// limit, a certificate refused): the server may have acted on the request.
    Failed,
}

impl RetryPolicy {
    /// The wait before sending a request again after attempt number `attempt`
    /// (counting from 1) came to `outcome`, or `None` when it must not be sent again.
    pub fn next(&self, statuses: Statuses, attempt: u32, outcome: Attempt<'_>) -> Option<Duration> {
        if !self.may_retry(attempt) {
            return None;
        }
        match outcome {
            Attempt::Answered { status, headers } => {
                let asks_again = !(200..300).contains(&status) && statuses.retried(status);
                asks_again.then(|| self.delay_after(attempt, headers))
            }
            Attempt::NotConnected => Some(self.backoff(attempt)),
            Attempt::Failed => None,
        }
    }

    /// A policy that tries once and never again.
    pub fn never() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// Whether another attempt may follow attempt number `attempt` (counting from 1).
    pub fn may_retry(&self, attempt: u32) -> bool {
        attempt < self.max_attempts.max(1)
    }

    /// The backoff after attempt number `attempt` (counting from 1), with full jitter:
    /// a random wait between zero and [`RetryPolicy::ceiling`].
    pub fn backoff(&self, attempt: u32) -> Duration {
        self.ceiling(attempt).mul_f64(fastrand::f64())
    }

    /// The most the backoff after attempt number `attempt` (counting from 1) may wait:
    /// `base_delay * 2^(attempt - 1)`, at most `max_delay`.
    pub fn ceiling(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(20);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }

    /// The wait after attempt `attempt`: the server's `Retry-After` when it gave one
    /// (capped at `max_delay`), the backoff otherwise.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait.min(self.max_delay),
            None => self.backoff(attempt),
        }
    }

    /// The wait before another attempt after an answer with `headers`: its
    /// `retry-after-ms` or `Retry-After` when it has a readable one (capped), else the
    /// backoff.
    pub fn delay_after(&self, attempt: u32, headers: &HeaderMap) -> Duration {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let retry_after = header("retry-after-ms")
            .and_then(parse_retry_after_ms)
            .or_else(|| {
                header("retry-after").and_then(|v| parse_retry_after_at(v, SystemTime::now()))
            });
        self.delay(attempt, retry_after)
    }
}

/// A `Retry-After` header value in its seconds form (`"120"`). Anything else gives
/// `None` ([`parse_retry_after_at`] also reads the HTTP-date form).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Absurdly long values saturate rather than fail; the policy caps them anyway.
    Some(Duration::from_secs(
        value.parse::<u64>().unwrap_or(u64::MAX),
    ))
}

/// A `Retry-After` header value, in seconds or as an HTTP date (`Wed, 21 Oct 2015
/// 07:28:00 GMT`, the wait until then from `now`; a date in the past is no wait).
pub fn parse_retry_after_at(value: &str, now: SystemTime) -> Option<Duration> {
    parse_retry_after(value).or_else(|| {
        let at = httpdate::parse_http_date(value.trim()).ok()?;
        Some(at.duration_since(now).unwrap_or(Duration::ZERO))
    })
}

/// A `retry-after-ms` header value: whole or fractional milliseconds.
fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let ms: f64 = value.trim().parse().ok()?;
    (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64((ms / 1000.0).min(1e9)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_form() {
        assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("99999999999999999999999"),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("1.5"), None);
        assert_eq!(parse_retry_after(""), None);
    }

    #[test]
    fn retry_after_date_form() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        assert_eq!(
            parse_retry_after_at("Wed, 21 Oct 2015 07:28:05 GMT", now),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            parse_retry_after_at("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after_at("7", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after_at("soon", now), None);
    }

    #[test]
    fn retry_after_headers_are_honoured_and_capped() {
        let policy = RetryPolicy::default();
        let mut headers = HeaderMap::new();
        assert!(policy.delay_after(2, &headers) <= policy.ceiling(2));
        headers.insert("retry-after", "3".parse().unwrap());
        assert_eq!(policy.delay_after(1, &headers), Duration::from_secs(3));
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(policy.delay_after(1, &headers), Duration::from_millis(250));
        headers.insert("retry-after-ms", "99999999".parse().unwrap());
        assert_eq!(policy.delay_after(1, &headers), policy.max_delay);
    }

    #[test]
    fn the_backoff_ceiling_doubles_and_caps() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.ceiling(1), Duration::from_millis(200));
        assert_eq!(policy.ceiling(2), Duration::from_millis(400));
        assert_eq!(policy.ceiling(3), Duration::from_millis(800));
        assert_eq!(policy.ceiling(100), Duration::from_secs(10));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(10)
        );
    }

    #[test]
    fn the_backoff_is_fully_jittered() {
        // Full jitter: anywhere from zero to the ceiling, and not the same each time,
        // so that clients turned away together spread out.
        let policy = RetryPolicy::default();
        let waits: Vec<Duration> = (0..200).map(|_| policy.backoff(3)).collect();
        assert!(waits.iter().all(|w| *w <= policy.ceiling(3)), "{waits:?}");
        let low = waits.iter().filter(|w| **w < policy.ceiling(3) / 4).count();
        let high = waits
            .iter()
            .filter(|w| **w > policy.ceiling(3) * 3 / 4)
            .count();
        assert!(
            low > 10 && high > 10,
            "not spread over the range: {waits:?}"
        );
    }

    #[test]
    fn next_decides_every_retry() {
        let policy = RetryPolicy::default();
        let none = HeaderMap::new();
        let mut later = HeaderMap::new();
        later.insert("retry-after", "2".parse().unwrap());
        let answered = |status, headers| Attempt::Answered { status, headers };
        // A connection that could not be made: the jittered backoff.
        let wait = policy
            .next(Statuses::Agent, 1, Attempt::NotConnected)
            .unwrap();
        assert!(wait <= policy.ceiling(1));
        // The request may have reached the server: never again, whoever answered.
        for statuses in [Statuses::Agent, Statuses::Provider] {
            assert_eq!(policy.next(statuses, 1, Attempt::Failed), None);
        }
        // A status that asks to come back: the server's wait, else the backoff.
        assert_eq!(
            policy.next(Statuses::Agent, 1, answered(503, &later)),
            Some(Duration::from_secs(2))
        );
        assert!(
            policy
                .next(Statuses::Provider, 2, answered(500, &none))
                .unwrap()
                <= policy.ceiling(2)
        );
        // A status that may follow a run, a success, or the last attempt: no.
        assert_eq!(policy.next(Statuses::Agent, 1, answered(500, &none)), None);
        assert_eq!(
            policy.next(Statuses::Provider, 1, answered(200, &later)),
            None
        );
        assert_eq!(policy.next(Statuses::Agent, 3, Attempt::NotConnected), None);
        assert_eq!(policy.next(Statuses::Agent, 3, answered(429, &later)), None);
        assert_eq!(
            RetryPolicy::never().next(Statuses::Provider, 1, Attempt::NotConnected),
            None
        );
    }

    #[test]
    fn attempts_count_the_first() {
        let policy = RetryPolicy::default();
        assert!(policy.may_retry(1));
        assert!(policy.may_retry(2));
        assert!(!policy.may_retry(3));
        assert!(!RetryPolicy::never().may_retry(1));
        let zero = RetryPolicy {
            max_attempts: 0,
            ..RetryPolicy::default()
        };
        assert!(!zero.may_retry(1));
    }

    #[test]
    fn which_statuses_are_retried() {
        for status in [429, 503] {
            assert!(Statuses::Agent.retried(status), "{status}");
        }
        for status in [400, 404, 408, 409, 500, 502, 504] {
            assert!(!Statuses::Agent.retried(status), "{status}");
        }
        for status in [408, 409, 429, 500, 501, 502, 503, 504, 529, 599] {
            assert!(Statuses::Provider.retried(status), "{status}");
        }
        for status in [400, 401, 403, 404, 422, 600] {
            assert!(!Statuses::Provider.retried(status), "{status}");
        }
    }
}
