//! `assay serve --demo`: the built-in neuro-san-compatible demo server, until Ctrl-C.

use std::path::{Path, PathBuf};

use anyhow::Context;
use assay_demo::{DemoAgent, DemoServer, TlsIdentity};

use crate::args::ServeArgs;
use crate::exit::ExitCode;

/// Where the self-signed certificate is written, under the current directory.
const CERT_PATH: &str = ".assay/demo-cert.pem";

/// Serves until interrupted. The first line on stderr is `listening on <url>`.
pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    if !args.demo {
        eprintln!(
            "error: only the built-in demo server exists for now; run `assay serve --demo [--port P] [--host H]`"
        );
        return Ok(ExitCode::INVALID);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let identity = TlsIdentity::self_signed().context("cannot make a certificate")?;
    let cert_pem = identity.cert_pem().to_owned();
    let server = DemoServer::builder()
        .tls(Some(identity))
        .bind((args.host.as_str(), args.port))
        .await
        .with_context(|| format!("cannot serve on {}:{}", args.host, args.port))?;
    let base = server.base_url();
    eprintln!("listening on {base}");
    if let Some(https) = server.https_base_url() {
        eprintln!("https on the same port: {https}");
    }
    match write_cert(&cert_pem) {
        Ok(path) => eprintln!(
            "self-signed certificate (trust it for https): {}",
            path.display()
        ),
        Err(error) => eprintln!("warning: cannot write the certificate: {error:#}"),
    }
    eprintln!("mcp: {base}/mcp");
    let names: Vec<&str> = DemoAgent::ALL.iter().map(|agent| agent.name()).collect();
    eprintln!("agents: {}", names.join(", "));
    let stop = crate::signals::listen();
    eprintln!("press ctrl-c to stop");
    stop.await;
    eprintln!("shutting down");
    server.shutdown().await;
    Ok(ExitCode::OK)
}

/// Writes the certificate to `.assay/demo-cert.pem`, or to the temp dir when the current
/// directory is not writable, and returns where.
fn write_cert(cert_pem: &str) -> anyhow::Result<PathBuf> {
    let local = Path::new(CERT_PATH);
    let written = local
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(local, cert_pem));
    let path = match written {
        Ok(()) => local.to_path_buf(),
        Err(_) => {
            let temp =
                std::env::temp_dir().join(format!("assay-demo-cert-{}.pem", std::process::id()));
            std::fs::write(&temp, cert_pem)
                .with_context(|| format!("cannot write {}", temp.display()))?;
            temp
        }
    };
    Ok(std::path::absolute(&path).unwrap_or(path))
}
