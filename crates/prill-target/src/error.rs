//! [`ConnectError`]: every way reaching an agent can go wrong.
//!
//! Each of these is an *error* of the run (the agent could not be reached, or it broke
//! the protocol), never a test failure. Messages are lowercase with no trailing period,
//! and never hold a header value or an environment value: those may be secrets.

use std::fmt;
use std::time::Duration;

/// How much of an error body a [`ConnectError::Status`] message shows.
pub const BODY_SHOWN: usize = 300;

/// Why an agent could not be reached or could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// No connection could be made (refused, no such host, connect timeout): no byte of
    /// a response ever arrived.
    #[error("cannot reach {server}: {reason}")]
    Unreachable {
        /// The server, without credentials.
        server: String,
        /// The cause, with how many attempts were made.
        reason: String,
    },
    /// The server does not host the agent (HTTP 404, or an MCP "unknown tool").
    #[error("unknown agent `{agent}` on {server}")]
    UnknownAgent {
        /// The agent asked for.
        agent: String,
        /// Where it was asked for.
        server: String,
    },
    /// The server answered with an error status other than 404 (after the attempts
    /// that `prill_connect::RetryPolicy` allows, when the status is one that is retried).
    #[error("{server} answered {}{}: {}", status_line(*status), after(*attempts), shown_body(body))]
    Status {
        /// The server, without credentials.
        server: String,
        /// The HTTP status code.
        status: u16,
        /// The start of the response body, lossily decoded.
        body: String,
        /// How many times the request was sent.
        attempts: u32,
    },
    /// The peer broke the protocol: a malformed line, bad JSON-RPC, a stream that
    /// broke off, an agent command that ended before its final message.
    #[error("{peer} broke the protocol: {message}")]
    Protocol {
        /// Who was talked to: a server, `command `...``, or an in-process agent.
        peer: String,
        /// What was wrong.
        message: String,
    },
    /// The exchange took longer than the request's timeout.
    #[error("no complete answer from {peer} within {}", seconds(*limit))]
    Timeout {
        /// Who was talked to.
        peer: String,
        /// The limit that ran out.
        limit: Duration,
    },
    /// Nothing arrived for longer than the idle limit, while waiting for an answer or
    /// in the middle of one.
    #[error("{peer} sent nothing for {}", seconds(*limit))]
    Idle {
        /// Who was talked to.
        peer: String,
        /// The idle limit that ran out.
        limit: Duration,
    },
    /// The response was larger than the body size cap.
    #[error("the response from {peer} is larger than the {} limit", bytes(*limit))]
    TooLarge {
        /// Who was talked to.
        peer: String,
        /// The cap, in bytes.
        limit: u64,
    },
    /// TLS failed: a certificate that could not be verified, or a server that does not
    /// speak TLS.
    #[error("tls with {server} failed: {reason}")]
    Tls {
        /// The server, without credentials.
        server: String,
        /// The cause and what to do about it.
        reason: String,
    },
    /// Reading from or writing to an agent command failed.
    #[error("i/o with {peer} failed: {reason}")]
    Io {
        /// The command.
        peer: String,
        /// The cause.
        reason: String,
    },
    /// An agent command could not be started.
    #[error("cannot start {command}: {reason}")]
    Spawn {
        /// The command as written.
        command: String,
        /// The cause.
        reason: String,
    },
    /// The connection was misconfigured: a bad server url, an unreadable CA file, a
    /// metadata key that is not a header name.
    #[error("{message}")]
    Config {
        /// What was wrong.
        message: String,
    },
    /// A replayed run (`--replay DIR`) sent a request no cassette recorded: the message
    /// names the closest recorded request and how it differs.
    #[error("{message}")]
    NoCassette {
        /// The request, the closest recording and their differences.
        message: String,
    },
}

/// The kind of a [`ConnectError`], for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// See [`ConnectError::Unreachable`].
    Unreachable,
    /// See [`ConnectError::UnknownAgent`].
    UnknownAgent,
    /// See [`ConnectError::Status`].
    Status,
    /// See [`ConnectError::Protocol`].
    Protocol,
    /// See [`ConnectError::Timeout`] and [`ConnectError::Idle`].
    Timeout,
    /// See [`ConnectError::TooLarge`].
    TooLarge,
    /// See [`ConnectError::Tls`].
    Tls,
    /// See [`ConnectError::Io`].
    Io,
    /// See [`ConnectError::Spawn`].
    Spawn,
    /// See [`ConnectError::Config`].
    Config,
    /// A tool loop reached its `max_iterations` model calls and the model still asked
    /// for tools.
    MaxIterations,
    /// The task that ran a sample panicked: a bug in Prill or in an in-process agent.
    Panic,
    /// The function under test of a Rust suite (`run_test_suite`) returned an error or
    /// panicked.
    Function,
    /// See [`ConnectError::NoCassette`].
    NoCassette,
    /// The simulated user failed its contract, not the agent: it broke its brief (the
    /// judge found a fact it was not given, or a goal it was not set), never ended the
    /// conversation within `max_turns`, answered in a shape it may not, or its model
    /// could not be reached.
    Simulator,
}

impl ErrorKind {
    /// The kind's name in snake case, as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::UnknownAgent => "unknown_agent",
            ErrorKind::Status => "status",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Timeout => "timeout",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::Tls => "tls",
            ErrorKind::Io => "io",
            ErrorKind::Spawn => "spawn",
            ErrorKind::Config => "config",
            ErrorKind::MaxIterations => "max_iterations",
            ErrorKind::Panic => "panic",
            ErrorKind::Function => "function",
            ErrorKind::NoCassette => "no_cassette",
            ErrorKind::Simulator => "simulator",
        }
    }
}

impl serde::Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl ConnectError {
    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ConnectError::Unreachable { .. } => ErrorKind::Unreachable,
            ConnectError::UnknownAgent { .. } => ErrorKind::UnknownAgent,
            ConnectError::Status { .. } => ErrorKind::Status,
            ConnectError::Protocol { .. } => ErrorKind::Protocol,
            ConnectError::Timeout { .. } | ConnectError::Idle { .. } => ErrorKind::Timeout,
            ConnectError::TooLarge { .. } => ErrorKind::TooLarge,
            ConnectError::Tls { .. } => ErrorKind::Tls,
            ConnectError::Io { .. } => ErrorKind::Io,
            ConnectError::Spawn { .. } => ErrorKind::Spawn,
            ConnectError::Config { .. } => ErrorKind::Config,
            ConnectError::NoCassette { .. } => ErrorKind::NoCassette,
        }
    }

    /// The error with every value `secrets` holds hidden in its text (a key or a
    /// metadata value an error body, a message or a stderr tail quoted).
    pub fn redacted(self, secrets: &prill_spec::redact::Redactor) -> ConnectError {
        if secrets.is_empty() {
            return self;
        }
        let r = |s: String| secrets.string(s);
        match self {
            ConnectError::Unreachable { server, reason } => ConnectError::Unreachable {
                server: r(server),
                reason: r(reason),
            },
            ConnectError::UnknownAgent { agent, server } => ConnectError::UnknownAgent {
                agent: r(agent),
                server: r(server),
            },
            ConnectError::Status {
                server,
                status,
                body,
                attempts,
            } => ConnectError::Status {
                server: r(server),
                status,
                body: r(body),
                attempts,
            },
            ConnectError::Protocol { peer, message } => ConnectError::Protocol {
                peer: r(peer),
                message: r(message),
            },
            ConnectError::Timeout { peer, limit } => ConnectError::Timeout {
                peer: r(peer),
                limit,
            },
            ConnectError::Idle { peer, limit } => ConnectError::Idle {
                peer: r(peer),
                limit,
            },
            ConnectError::TooLarge { peer, limit } => ConnectError::TooLarge {
                peer: r(peer),
                limit,
            },
            ConnectError::Tls { server, reason } => ConnectError::Tls {
                server: r(server),
                reason: r(reason),
            },
            ConnectError::Io { peer, reason } => ConnectError::Io {
                peer: r(peer),
                reason: r(reason),
            },
            ConnectError::Spawn { command, reason } => ConnectError::Spawn {
                command: r(command),
                reason: r(reason),
            },
            ConnectError::Config { message } => ConnectError::Config {
                message: r(message),
            },
            ConnectError::NoCassette { message } => ConnectError::NoCassette {
                message: r(message),
            },
        }
    }

    /// A [`ConnectError::Config`] with a message.
    pub fn config(message: impl Into<String>) -> ConnectError {
        ConnectError::Config {
            message: message.into(),
        }
    }

    /// A [`ConnectError::Protocol`].
    pub fn protocol(peer: impl Into<String>, message: impl Into<String>) -> ConnectError {
        ConnectError::Protocol {
            peer: peer.into(),
            message: message.into(),
        }
    }
}

/// `500 internal server error`: the code and its reason, lowercase.
fn status_line(status: u16) -> String {
    match http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
    {
        Some(reason) => format!("{status} {}", reason.to_lowercase()),
        None => status.to_string(),
    }
}

/// ` after 3 attempts` when a request was sent more than once, else nothing.
pub fn after(attempts: u32) -> String {
    if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    }
}

/// The body as a message shows it: at most [`BODY_SHOWN`] characters, then a marker
/// saying how much was left out.
fn shown_body(body: &str) -> String {
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return "(empty body)".to_owned();
    }
    cut(trimmed, BODY_SHOWN)
}

/// `text` cut to at most `max` characters, with a visible marker when cut.
pub fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    let more = count - max;
    let unit = if more == 1 { "character" } else { "characters" };
    format!("{kept}… [cut: {more} more {unit}]")
}

/// `2.5s`, `30s`, `150ms`.
pub fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// `32 MiB`, `4 KiB`, `1000 bytes`.
pub fn bytes(n: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_well() {
        let e = ConnectError::UnknownAgent {
            agent: "x".into(),
            server: "http://127.0.0.1:1234".into(),
        };
        assert_eq!(e.to_string(), "unknown agent `x` on http://127.0.0.1:1234");
        assert_eq!(e.kind(), ErrorKind::UnknownAgent);

        let e = ConnectError::Status {
            server: "http://h".into(),
            status: 500,
            body: "x".repeat(400),
            attempts: 1,
        };
        let text = e.to_string();
        assert!(text.starts_with("http://h answered 500 internal server error: xxx"));
        assert!(text.ends_with("… [cut: 100 more characters]"), "{text}");

        let e = ConnectError::Status {
            server: "http://h".into(),
            status: 503,
            body: String::new(),
            attempts: 3,
        };
        assert_eq!(
            e.to_string(),
            "http://h answered 503 service unavailable after 3 attempts: (empty body)"
        );

        let e = ConnectError::Idle {
            peer: "http://h".into(),
            limit: Duration::from_secs(30),
        };
        assert_eq!(e.to_string(), "http://h sent nothing for 30s");
        assert_eq!(e.kind(), ErrorKind::Timeout);

        let e = ConnectError::TooLarge {
            peer: "http://h".into(),
            limit: 32 * 1024 * 1024,
        };
        assert_eq!(
            e.to_string(),
            "the response from http://h is larger than the 32 MiB limit"
        );

        let e = ConnectError::Timeout {
            peer: "http://h".into(),
            limit: Duration::from_millis(1500),
        };
        assert_eq!(
            e.to_string(),
            "no complete answer from http://h within 1.5s"
        );
    }

    #[test]
    fn units() {
        assert_eq!(seconds(Duration::from_millis(150)), "150ms");
        assert_eq!(seconds(Duration::from_secs(30)), "30s");
        assert_eq!(bytes(4096), "4 KiB");
        assert_eq!(bytes(1000), "1000 bytes");
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "abc… [cut: 1 more character]");
    }
}
