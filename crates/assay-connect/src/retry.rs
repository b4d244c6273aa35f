//! [`RetryPolicy`]: when and how long to wait before trying a request again.
//!
//! A request is tried again only when it is safe and likely to help:
//! - the connection could not be made (refused, no such host): no byte of the request
//!   reached an agent, and no byte of a response arrived;
//! - the server answered `429 Too Many Requests` or `503 Service Unavailable`, which ask
//!   the client to come back later; a `Retry-After` in seconds is honoured (capped at
//!   [`RetryPolicy::max_delay`]).
//!
//! Never after any byte of a successful response arrived, never on a timeout, never on
//! any other status.

use std::time::Duration;

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

impl RetryPolicy {
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

    /// The exponential backoff after attempt number `attempt` (counting from 1):
    /// `base_delay * 2^(attempt - 1)`, at most `max_delay`.
    pub fn backoff(&self, attempt: u32) -> Duration {
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

    /// The wait before another attempt after a busy answer with `headers`: its
    /// `Retry-After` when it has a readable one (capped), else the backoff.
    pub fn delay_after(&self, attempt: u32, headers: &reqwest::header::HeaderMap) -> Duration {
        let retry_after = headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        self.delay(attempt, retry_after)
    }
}

/// A `Retry-After` header value in its seconds form (`"120"`). The HTTP-date form and
/// anything else unreadable give `None`, and the backoff applies instead.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_form_only() {
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
    fn backoff_doubles_and_caps() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.backoff(1), Duration::from_millis(200));
        assert_eq!(policy.backoff(2), Duration::from_millis(400));
        assert_eq!(policy.backoff(3), Duration::from_millis(800));
        assert_eq!(policy.backoff(100), Duration::from_secs(10));
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
}
