//! `assay agents`: the agents a neuro-san server hosts, one per line.
//!
//! The server is `--server`, else the `ASSAY_SERVER` environment variable, else the
//! `server` of `assay.toml` in the current directory, else `http://localhost:8080`.

use std::path::Path;

use anyhow::Context;
use assay_connect::{
    AgentInfo, ConnectError, ErrorKind, HttpOptions, NeuroSanHttp, SERVER_ENV, resolve_server,
};
use assay_spec::Env;
use assay_spec::load::Document;

use super::{Entry, load_one};
use crate::args::{AgentsArgs, Format};
use crate::exit::ExitCode;
use crate::output;

/// Lists the agents; a server that cannot be reached exits [`ExitCode::ERROR`], a bad
/// `--server`, `--ca-cert` or `assay.toml` exits [`ExitCode::INVALID`].
pub(crate) fn run(args: &AgentsArgs, color: bool) -> anyhow::Result<ExitCode> {
    let config_server = match config_server(Path::new("assay.toml"), color) {
        Ok(server) => server,
        Err(code) => return Ok(code),
    };
    let env_server = std::env::var(SERVER_ENV).ok();
    let options = match options(args) {
        Ok(options) => options,
        Err(error) => return Ok(report(&error)),
    };
    let base = match resolve_server(
        args.remote.server.as_deref(),
        env_server.as_deref(),
        config_server.as_deref(),
    ) {
        Ok(base) => base,
        Err(error) => return Ok(report(&error)),
    };
    if args.remote.insecure {
        output::stderr(
            "warning: --insecure: the server's certificate is not verified; anyone between you and it can read and change the traffic\n",
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let listed = runtime.block_on(async {
        let server = NeuroSanHttp::new(base.clone(), &options)?;
        server.list_agents().await
    });
    let agents = match listed {
        Ok(agents) => agents,
        Err(error) => return Ok(report(&error)),
    };
    let text = match args.format {
        Format::Human => agents.iter().map(line).collect::<String>(),
        Format::Json => {
            let listed: Vec<_> = agents
                .iter()
                .map(|a| {
                    serde_json::json!({"name": a.name, "description": a.description, "tags": a.tags})
                })
                .collect();
            let document = serde_json::json!({
                "server": assay_connect::label(&base),
                "agents": listed,
            });
            let mut text = serde_json::to_string_pretty(&document)?;
            text.push('\n');
            text
        }
    };
    output::stdout(&text)?;
    Ok(ExitCode::OK)
}

/// The TLS and retry settings the flags ask for.
fn options(args: &AgentsArgs) -> Result<HttpOptions, ConnectError> {
    super::http_options(args.remote.ca_cert.as_deref(), args.remote.insecure, None)
}

/// The `server` of `path` when it exists; its diagnostics and [`ExitCode::INVALID`] when
/// it is not a valid `assay.toml`.
fn config_server(path: &Path, color: bool) -> Result<Option<String>, ExitCode> {
    if !path.exists() {
        return Ok(None);
    }
    let entry = load_one(path, &Env::from_process());
    if let Entry::Loaded(loaded) = &entry
        && let Ok(Document::Config(config)) = &loaded.outcome
    {
        output::stderr(&output::render(&entry.reports(), color));
        return Ok(config.server.clone());
    }
    output::stderr(&output::render(&entry.reports(), color));
    Err(ExitCode::INVALID)
}

/// Prints `error` and picks the exit code: bad settings are invalid input, anything
/// else means the server could not be asked.
fn report(error: &ConnectError) -> ExitCode {
    output::stderr(&format!("error: {error}\n"));
    if error.kind() == ErrorKind::Config {
        ExitCode::INVALID
    } else {
        ExitCode::ERROR
    }
}

/// `name<TAB>description`.
fn line(agent: &AgentInfo) -> String {
    format!(
        "{}\t{}\n",
        one_field(&agent.name),
        one_field(&agent.description)
    )
}

/// Text with no tab or line break, so that it stays one field of one line.
fn one_field(text: &str) -> String {
    text.replace(['\t', '\n', '\r'], " ")
}
