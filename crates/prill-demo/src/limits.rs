//! The limits on clients: how long each phase of a request may take and how many
//! connections the server holds at once, so that clients that send nothing, stall
//! halfway or read nothing cannot hold the server's descriptors or memory for long.

use std::time::Duration;

/// The connection cap where the open-file limit cannot be read.
const FALLBACK_MAX_CONNECTIONS: usize = 512;
/// The connection cap is never set below this, whatever the open-file limit.
const MIN_MAX_CONNECTIONS: usize = 16;

/// How long a client may take over each phase of a request, and how many connections
/// the server holds at once ([`DemoServerBuilder::limits`](crate::DemoServerBuilder::limits)).
///
/// Every phase has a limit; past it the connection is closed (a request body that takes
/// too long is answered `408` first). Build one from [`ClientLimits::default`] and change
/// the fields that matter:
///
/// ```
/// use std::time::Duration;
///
/// let mut limits = prill_demo::ClientLimits::default();
/// limits.first_byte = Duration::from_millis(200);
/// limits.max_connections = Some(4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientLimits {
    /// From the accepted connection to its first byte (the byte that tells TLS from
    /// plain http): 10 s.
    pub first_byte: Duration,
    /// From the first byte to the end of the TLS handshake, for https: 10 s.
    pub tls_handshake: Duration,
    /// The request head (request line and headers): 30 s. It counts from the first byte
    /// for a connection's first request, and from the end of the previous response for
    /// later ones, so it is also the most a keep-alive connection may stay idle between
    /// requests (hyper's `header_read_timeout`).
    pub head: Duration,
    /// The whole request body, from the end of its head: 60 s. A body that takes longer
    /// is answered `408` and its connection closed, and what was read of it is freed.
    pub body: Duration,
    /// The longest wait for more of a request body: 10 s; past it, as for
    /// [`ClientLimits::body`].
    pub body_idle: Duration,
    /// The longest a response may wait on a client that reads none of it (the socket's
    /// send buffer full): 30 s, then the connection is closed. Time the server itself
    /// takes (a `slow` agent, a `hang` fault) does not count.
    pub write_stall: Duration,
    /// The most connections held at once. `None` (the default) is half the process's
    /// soft open-file limit when the server binds (512 under the common `ulimit -n` of
    /// 1024; at least 16; 512 where there is no such limit to read), so connections
    /// alone never use up the descriptors. Past the cap, new connections wait in the
    /// kernel's accept queue (1024 deep) until one ends, and are served then.
    pub max_connections: Option<usize>,
}

impl Default for ClientLimits {
    fn default() -> ClientLimits {
        ClientLimits {
            first_byte: Duration::from_secs(10),
            tls_handshake: Duration::from_secs(10),
            head: Duration::from_secs(30),
            body: Duration::from_secs(60),
            body_idle: Duration::from_secs(10),
            write_stall: Duration::from_secs(30),
            max_connections: None,
        }
    }
}

impl ClientLimits {
    /// The connection cap: [`ClientLimits::max_connections`], else half the soft
    /// open-file limit; always at least 1 and at most what a semaphore holds.
    pub(crate) fn connection_cap(&self) -> usize {
        let cap = self.max_connections.unwrap_or_else(|| {
            open_file_limit()
                .map_or(FALLBACK_MAX_CONNECTIONS, |soft| {
                    usize::try_from(soft / 2).unwrap_or(usize::MAX)
                })
                .max(MIN_MAX_CONNECTIONS)
        });
        cap.clamp(1, tokio::sync::Semaphore::MAX_PERMITS)
    }
}

/// This process's soft open-file limit; `None` when there is none or it cannot be read.
#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit};
    getrlimit(Resource::Nofile).current
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_the_one_set_else_half_the_open_file_limit() {
        let set = |max_connections| ClientLimits {
            max_connections,
            ..ClientLimits::default()
        };
        assert_eq!(set(Some(7)).connection_cap(), 7);
        assert_eq!(set(Some(0)).connection_cap(), 1);
        let expected = open_file_limit().map_or(FALLBACK_MAX_CONNECTIONS, |soft| {
            usize::try_from(soft / 2).unwrap_or(usize::MAX)
        });
        assert_eq!(
            set(None).connection_cap(),
            expected.clamp(MIN_MAX_CONNECTIONS, tokio::sync::Semaphore::MAX_PERMITS)
        );
    }
}
