//! `prill agents`: the agents a neuro-san server hosts, one per line, and the command
//! agents of `prill.toml` (`[agents.X] command = [...]`), marked `(command: ...)`.
//!
//! The server is `--server`, else the `PRILL_SERVER` environment variable, else the
//! `server` of the `prill.toml` found by walking up, else `http://localhost:8080`.
//! The command agents are listed even when the server cannot be reached (the exit code
//! still says it could not).

use prill_app::Settings;
use prill_connect::{AgentInfo, ConnectError, ErrorKind};

use crate::args::{AgentsArgs, Format};
use crate::exit::ExitCode;
use crate::output;

/// Lists the agents; a server that cannot be reached exits [`ExitCode::ERROR`], a bad
/// `--server`, `--ca-cert` or `prill.toml` exits [`ExitCode::INVALID`].
pub(crate) fn run(args: &AgentsArgs, color: bool) -> anyhow::Result<ExitCode> {
    let settings = match Settings::load(None, args.remote.overrides()) {
        Ok(settings) => settings,
        Err(e) => return Ok(super::run::settings_error(&e, color)),
    };
    output::stderr(&output::render(&settings.reports, color));
    let (server, base) = match settings
        .server_client()
        .and_then(|client| Ok((client, settings.server()?)))
    {
        Ok(resolved) => resolved,
        Err(error) => return Ok(report(&error)),
    };
    if args.remote.insecure {
        output::stderr(
            "warning: --insecure: the server's certificate is not verified; anyone between you and it can read and change the traffic\n",
        );
    }
    let runtime = prill_app::runtime()?;
    let commands = settings.command_agents();
    let listed = runtime.block_on(server.list_agents());
    let (agents, code) = match listed {
        Ok(agents) => (agents, ExitCode::OK),
        // The command agents are still worth listing; the error says why the server's
        // are not there.
        Err(error) if !commands.is_empty() => (Vec::new(), report(&error)),
        Err(error) => return Ok(report(&error)),
    };
    let text = match args.format {
        Format::Human => agents
            .iter()
            .map(line)
            .chain(
                commands
                    .iter()
                    .map(|(name, command)| command_line(name, command)),
            )
            .collect::<String>(),
        Format::Json => {
            let listed: Vec<_> = agents
                .iter()
                .map(|a| {
                    serde_json::json!({"name": a.name, "description": a.description, "tags": a.tags})
                })
                .chain(commands.iter().map(|(name, command)| {
                    serde_json::json!({"name": name, "command": command})
                }))
                .collect();
            let document = serde_json::json!({
                "server": prill_connect::label(&base),
                "config": settings.config_path(),
                "agents": listed,
            });
            let mut text = serde_json::to_string_pretty(&document)?;
            text.push('\n');
            text
        }
    };
    output::stdout(&text)?;
    Ok(code)
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

/// `name<TAB>(command: program args)`, for an agent `prill.toml` runs as a command.
fn command_line(name: &str, command: &[String]) -> String {
    format!(
        "{}\t(command: {})\n",
        one_field(name),
        one_field(&command.join(" "))
    )
}

/// Text with no tab or line break, so that it stays one field of one line.
fn one_field(text: &str) -> String {
    text.replace(['\t', '\n', '\r'], " ")
}
