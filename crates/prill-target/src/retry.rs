//! [`Statuses`]: which error statuses are worth another attempt, by who answered.
//!
//! The one list of them. The http transport (`prill_connect::RetryPolicy::next`) asks
//! it before sending a request again; the tool loop asks it before honouring a spec's
//! `retry_policy` on a failed model call ([`Statuses::worth_retrying`]).
//!
//! ```
//! use prill_target::ConnectError;
//! use prill_target::retry::Statuses;
//!
//! assert!(Statuses::Provider.retried(529));
//! assert!(!Statuses::Agent.retried(500));
//! let refused = ConnectError::Unreachable { server: "s".into(), reason: "refused".into() };
//! assert!(Statuses::Agent.worth_retrying(&refused));
//! ```

use crate::error::{ConnectError, ErrorKind};

/// Which error statuses are worth another attempt, by who answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statuses {
    /// A neuro-san agent (http, https, mcp): **429 and 503 only**. A chat runs an agent
    /// network that may call tools with side effects, and a retried sample measures a
    /// different run; only the statuses by which a server says it did not take the
    /// request on are retried (429: a concurrency or rate limit turned it away; 503: the
    /// server is shutting down or not ready; neuro-san's own chat timeout also answers
    /// 503, for a run it abandoned, and asks for the same). A 500, 502 or 504 may come
    /// after the agent ran, so it is reported, not repeated.
    Agent,
    /// A model provider: **408, 409, 429 and every 5xx** (Anthropic's 529 "overloaded"
    /// included), the statuses the official OpenAI and Anthropic SDKs retry. A model
    /// call has no side effects beyond its cost.
    Provider,
}

impl Statuses {
    /// Whether `status` asks for another attempt.
    pub fn retried(self, status: u16) -> bool {
        match self {
            Statuses::Agent => matches!(status, 429 | 503),
            Statuses::Provider => matches!(status, 408 | 409 | 429 | 500..=599),
        }
    }

    /// Whether a call that failed with `error` may succeed if made again: the server
    /// could not be reached, or it answered a status that [`Statuses::retried`] lists.
    /// Anything else (a timeout, a broken or truncated answer, a bad request) is not.
    pub fn worth_retrying(self, error: &ConnectError) -> bool {
        match error {
            ConnectError::Status { status, .. } => self.retried(*status),
            other => other.kind() == ErrorKind::Unreachable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16) -> ConnectError {
        ConnectError::Status {
            server: "s".into(),
            status,
            body: String::new(),
            attempts: 3,
        }
    }

    #[test]
    fn agents_are_asked_again_only_when_they_did_not_take_the_request_on() {
        for code in [429, 503] {
            assert!(Statuses::Agent.retried(code), "{code}");
        }
        for code in [400, 404, 408, 409, 500, 502, 504, 529] {
            assert!(!Statuses::Agent.retried(code), "{code}");
        }
    }

    #[test]
    fn providers_are_asked_again_on_the_sdks_statuses() {
        for code in [408, 409, 429, 500, 502, 503, 504, 529, 599] {
            assert!(Statuses::Provider.retried(code), "{code}");
        }
        for code in [400, 401, 403, 404, 422, 600] {
            assert!(!Statuses::Provider.retried(code), "{code}");
        }
    }

    #[test]
    fn only_errors_that_may_pass_are_worth_retrying() {
        let provider = Statuses::Provider;
        assert!(provider.worth_retrying(&status(503)));
        assert!(provider.worth_retrying(&status(408)));
        assert!(!provider.worth_retrying(&status(400)));
        assert!(!Statuses::Agent.worth_retrying(&status(500)));
        assert!(!provider.worth_retrying(&ConnectError::config("bad")));
        let timeout = ConnectError::Timeout {
            peer: "s".into(),
            limit: std::time::Duration::from_secs(1),
        };
        assert!(!provider.worth_retrying(&timeout));
    }
}
