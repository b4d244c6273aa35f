//! The fake OpenAI-compatible server (`prill-testkit`'s `fake-openai`) and the network
//! sandbox both tools run in.
//!
//! Where the machine allows it (root, `unshare` and `nsenter` from util-linux, `ip`),
//! the server starts in a fresh network namespace whose only interface is `lo`, and
//! every measured command enters that namespace (`nsenter --net=/proc/PID/ns/net`): it
//! can reach the fake server and nothing else. Elsewhere the server runs on the host's
//! loopback and promptfoo is pointed at a proxy that does not exist
//! ([`Sandbox::Proxy`]), which stops what honours the proxy variables, not the rest.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// How the measured commands are kept off the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sandbox {
    /// A network namespace with only `lo`, shared with the fake server.
    Namespace,
    /// The host's network, with `HTTP_PROXY`/`HTTPS_PROXY` at a closed port for all but
    /// loopback.
    Proxy,
}

impl Sandbox {
    /// A network namespace when one can be made here, else the proxy variables.
    pub(crate) fn detect() -> Sandbox {
        let works = Command::new("unshare")
            .args(["--net", "--", "ip", "link", "set", "lo", "up"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
            && Command::new("nsenter")
                .arg("--version")
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if works {
            Sandbox::Namespace
        } else {
            Sandbox::Proxy
        }
    }

    /// A sentence for the report.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Sandbox::Namespace => {
                "both tools and the fake server ran in a network namespace of their own with only `lo`"
            }
            Sandbox::Proxy => {
                "no network namespace could be made: promptfoo ran with HTTP(S)_PROXY at a closed port (all but loopback)"
            }
        }
    }
}

/// The running fake server; dropping it kills it.
#[derive(Debug)]
pub(crate) struct FakeServer {
    child: Child,
    /// Its base URL, `http://127.0.0.1:PORT/v1`.
    pub(crate) url: String,
    sandbox: Sandbox,
}

impl FakeServer {
    /// Starts `binary` answering after `latency_ms` (with an answer of `reply_bytes`
    /// when given), inside a new network namespace for [`Sandbox::Namespace`], and
    /// reads its URL from its first line.
    pub(crate) fn start(
        binary: &Path,
        latency_ms: u64,
        reply_bytes: Option<usize>,
        sandbox: Sandbox,
    ) -> Result<Self, String> {
        let extra = reply_bytes.map(|bytes| vec!["--reply-bytes".to_owned(), bytes.to_string()]);
        Self::start_with(binary, latency_ms, &extra.unwrap_or_default(), sandbox)
    }

    /// [`FakeServer::start`] with `extra` arguments (`--shop`).
    pub(crate) fn start_with(
        binary: &Path,
        latency_ms: u64,
        extra: &[String],
        sandbox: Sandbox,
    ) -> Result<Self, String> {
        let latency = latency_ms.to_string();
        let mut command = match sandbox {
            Sandbox::Namespace => {
                // `unshare` and `sh` exec, so the child's pid is the server's own.
                let mut command = Command::new("unshare");
                command.args([
                    "--net",
                    "--",
                    "sh",
                    "-c",
                    "ip link set lo up && exec \"$0\" \"$@\"",
                ]);
                command.arg(binary);
                command
            }
            Sandbox::Proxy => Command::new(binary),
        };
        command.args(["--latency-ms", &latency]);
        command.args(extra);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        // The guard owns the child from here on: an error below kills it.
        let mut server = FakeServer {
            child,
            url: String::new(),
            sandbox,
        };
        let mut line = String::new();
        if let Some(out) = server.child.stdout.take() {
            BufReader::new(out)
                .read_line(&mut line)
                .map_err(|e| format!("cannot read the fake server's output: {e}"))?;
        }
        server.url = server_url(&line)
            .ok_or_else(|| format!("the fake server said {line:?}, not `listening on URL`"))?
            .to_owned();
        Ok(server)
    }

    /// The words that put a command in the server's network namespace, if any.
    pub(crate) fn prefix(&self) -> Vec<OsString> {
        match self.sandbox {
            Sandbox::Namespace => vec![
                OsString::from("nsenter"),
                OsString::from(format!("--net=/proc/{}/ns/net", self.child.id())),
                OsString::from("--"),
            ],
            Sandbox::Proxy => Vec::new(),
        }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The URL in the server's first line, `listening on URL`.
pub(crate) fn server_url(line: &str) -> Option<&str> {
    let url = line.trim().strip_prefix("listening on ")?;
    url.starts_with("http://").then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_read_from_the_first_line() {
        assert_eq!(
            server_url("listening on http://127.0.0.1:4000/v1\n"),
            Some("http://127.0.0.1:4000/v1")
        );
        assert_eq!(server_url("error: cannot bind"), None);
    }
}
