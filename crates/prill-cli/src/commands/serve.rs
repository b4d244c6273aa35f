//! `prill serve --demo`: the built-in neuro-san-compatible demo server, until Ctrl-C;
//! `prill serve --replay DIR`: the neuro-san agents recorded in a cassette folder, served
//! the same way ([`prill_demo::replay`]).
//!
//! Its self-signed certificate is written to the user's cache folder
//! (`$XDG_CACHE_HOME/prill`, else `~/.cache/prill`, else the temp folder), one file per
//! port, never into the working directory; the path is printed for `--ca-cert`.

use std::path::PathBuf;

use anyhow::Context;
use prill_connect::cassette::Latency;
use prill_demo::{DemoAgent, DemoError, DemoServer, Recordings, TlsIdentity};

use crate::args::ServeArgs;
use crate::exit::ExitCode;

/// Serves until interrupted. The first line on stderr is `listening on <url>`.
pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let recordings = match &args.replay {
        None if !args.demo => {
            eprintln!(
                "error: say what to serve: `prill serve --demo` for the built-in demo agents, or `prill serve --replay DIR` for recorded ones"
            );
            return Ok(ExitCode::INVALID);
        }
        None => None,
        Some(dir) => match read_recordings(dir, &args.replay_latency) {
            Ok(recordings) => Some(recordings),
            Err(message) => {
                eprintln!("error: {message}");
                return Ok(ExitCode::INVALID);
            }
        },
    };
    let runtime = prill_app::runtime()?;
    runtime.block_on(serve(args, recordings))
}

/// The recordings of `dir`, or why there are none to serve.
fn read_recordings(dir: &std::path::Path, latency: &str) -> Result<Recordings, String> {
    let latency = match latency {
        "zero" => Latency::Zero,
        _ => Latency::Recorded,
    };
    if !dir.is_dir() {
        return Err(format!(
            "{} is not a folder of cassettes; record one with `prill run --record {}`",
            dir.display(),
            dir.display()
        ));
    }
    let recordings = Recordings::read(dir, latency).map_err(|e| e.to_string())?;
    if recordings.agents().is_empty() {
        return Err(format!(
            "{} holds no recorded neuro-san agent (no `POST /api/v1/{{agent}}/streaming_chat` exchange over http, https or mcp); \
             record one with `prill run --record {}` against a neuro-san server",
            dir.display(),
            dir.display()
        ));
    }
    Ok(recordings)
}

async fn serve(args: &ServeArgs, recordings: Option<Recordings>) -> anyhow::Result<ExitCode> {
    let identity = TlsIdentity::self_signed().context("cannot make a certificate")?;
    let cert_pem = identity.cert_pem().to_owned();
    let names: Vec<String> = match &recordings {
        Some(recordings) => recordings.agents(),
        None => DemoAgent::ALL
            .iter()
            .map(|agent| agent.name().to_owned())
            .collect(),
    };
    let mut builder = DemoServer::builder().tls(Some(identity));
    if let Some(recordings) = recordings {
        builder = builder.replay(recordings);
    }
    let bound = builder.bind((args.host.as_str(), args.port)).await;
    let server = match bound {
        Ok(server) => server,
        Err(error) => {
            eprintln!("error: {}", bind_error(args, &error));
            return Ok(ExitCode::ERROR);
        }
    };
    let base = server.base_url();
    eprintln!("listening on {base}");
    if let Some(https) = server.https_base_url() {
        eprintln!("https on the same port: {https}");
    }
    match write_cert(&cert_pem, server.addr().port()) {
        Ok(path) => eprintln!(
            "self-signed certificate (trust it for https with `--ca-cert {}`): {}",
            path.display(),
            path.display()
        ),
        Err(error) => eprintln!("warning: cannot write the certificate: {error:#}"),
    }
    if args.replay.is_none() {
        eprintln!("mcp: {base}/mcp");
    }
    eprintln!("agents: {}", names.join(", "));
    let stop = crate::signals::listen();
    eprintln!("press ctrl-c to stop");
    stop.await;
    eprintln!("shutting down");
    server.shutdown().await;
    Ok(ExitCode::OK)
}

/// Why the server could not listen, in one sentence that names the OS error once.
fn bind_error(args: &ServeArgs, error: &DemoError) -> String {
    let at = format!("{}:{}", args.host, args.port);
    match error {
        DemoError::Bind(io) if io.kind() == std::io::ErrorKind::AddrInUse => format!(
            "cannot serve on {at}: the port is in use ({io}); stop what holds it, pick another with `--port N`, or let the system pick a free one with `--port 0`"
        ),
        DemoError::Bind(io) => format!(
            "cannot serve on {at}: {io}; check `--host` and `--port` (`--port 0` picks a free port)"
        ),
        DemoError::Certificate(why) => format!("cannot serve on {at}: bad certificate: {why}"),
    }
}

/// The folder the certificate goes in: `$XDG_CACHE_HOME/prill`, else
/// `$HOME/.cache/prill`, else `prill` in the temp folder.
fn cert_dir() -> PathBuf {
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    set("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| set("HOME").map(|home| home.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("prill")
}

/// Writes the certificate to `demo-cert-<port>.pem` in [`cert_dir`], or in the temp
/// folder when that cannot be written, and returns where.
fn write_cert(cert_pem: &str, port: u16) -> anyhow::Result<PathBuf> {
    let name = format!("demo-cert-{port}.pem");
    let preferred = cert_dir();
    let written = std::fs::create_dir_all(&preferred)
        .and_then(|()| std::fs::write(preferred.join(&name), cert_pem));
    let path = match written {
        Ok(()) => preferred.join(&name),
        Err(_) => {
            let temp = std::env::temp_dir().join(format!("prill-{name}"));
            std::fs::write(&temp, cert_pem)
                .with_context(|| format!("cannot write {}", temp.display()))?;
            temp
        }
    };
    Ok(std::path::absolute(&path).unwrap_or(path))
}
