//! `assay run`: load test files, build the plan, reach the agents, run, report.
//!
//! Exit codes: 0 all passed; 1 some failed; 2 invalid input or usage (nothing runs when
//! any file is invalid, or when no case is selected); 3 errors (unreachable agents,
//! timeouts) and no failures; 130 cancelled with Ctrl-C (the reports are still written).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use assay_connect::provider::{self, Limits, ProviderKind, ProviderSettings};
use assay_connect::{
    BoxFuture, ConnectError, Connector, Conversation, NeuroSanHttp, NeuroSanMcp, SERVER_ENV,
    StdioConnector, Url, parse_server, resolve_server,
};
use assay_report::{
    Human, HumanOptions, JsonLines, JsonReport, Junit, Markdown, Output, Reporters, Verbosity,
};
use assay_run::{Connectors, RunOptions, Selection, Shard, Summary, run_plan};
use assay_spec::load::Document;
use assay_spec::model::config::{Config, ProviderName};
use assay_spec::model::data_driven::Connection;
use assay_spec::{Env, Plan};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Entry, input_limits, load_one, load_paths};
use crate::args::{ConnectionArg, RunArgs, TargetArgs};
use crate::exit::ExitCode;
use crate::output;

/// The cases to run and the project configuration, after loading and selection.
pub(crate) struct Prepared {
    /// The selected cases.
    pub(crate) plan: Plan,
    /// `assay.toml`, when there is one.
    pub(crate) config: Option<Config>,
}

/// Loads every file (printing diagnostics), the configuration, and applies the
/// selection. `Err` holds the exit code when nothing may run.
pub(crate) fn prepare(target: &TargetArgs, color: bool) -> Result<Prepared, ExitCode> {
    let env = Env::from_process();
    let inputs = load_paths(&target.paths, &env, &input_limits(target.config.as_deref()));
    let reports: Vec<_> = inputs.entries.iter().flat_map(Entry::reports).collect();
    output::stderr(&output::render(&reports, color));
    let invalid = inputs.entries.iter().filter(|e| !e.is_valid()).count();
    if invalid > 0 {
        output::stderr(&format!(
            "error: {invalid} invalid file(s); nothing was run\n"
        ));
        return Err(ExitCode::INVALID);
    }
    let config = load_config(target.config.as_deref(), color)?;
    let selection = selection(target).map_err(|message| {
        output::stderr(&format!("error: {message}\n"));
        ExitCode::INVALID
    })?;
    let cases = inputs
        .entries
        .iter()
        .filter(|e| !matches!(e, Entry::Loaded(l) if matches!(l.outcome, Ok(Document::Config(_)))))
        .flat_map(Entry::cases)
        .collect();
    let mut plan = Plan::new(cases);
    plan.cases.retain(|c| selection.matches(c));
    if plan.cases.is_empty() {
        output::stderr(
            "error: no test case to run: no file holds one, or the selection left none\n",
        );
        return Err(ExitCode::INVALID);
    }
    Ok(Prepared { plan, config })
}

/// Runs the cases under `args.target.paths` and returns the exit code the results call for.
pub(crate) fn run(args: &RunArgs, color: bool) -> anyhow::Result<ExitCode> {
    let Prepared { plan, config } = match prepare(&args.target, color) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let mut reporters = match reporters(args, color) {
        Ok(reporters) => reporters,
        Err(e) => {
            output::stderr(&format!("error: {e:#}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    if args.target.remote.insecure {
        output::stderr(
            "warning: --insecure: https certificates are not verified; anyone between you and the server can read and change the traffic\n",
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let summary = runtime.block_on(async {
        let (connectors, demo) = if args.target.demo {
            let demo = assay_run::demo::start(0)
                .await
                .context("cannot start the demo agents")?;
            output::stderr(&format!("demo agents on {}\n", demo.server.base_url()));
            let connectors =
                match with_providers(demo.connectors.clone(), &args.target, config.as_ref()) {
                    Ok(connectors) => connectors,
                    Err(e) => {
                        output::stderr(&format!("error: {e}\n"));
                        return Ok(None);
                    }
                };
            (connectors, Some(demo.server))
        } else {
            match connectors(&args.target, config.as_ref()) {
                Ok(connectors) => (connectors, None),
                Err(e) => {
                    output::stderr(&format!("error: {e}\n"));
                    return Ok::<Option<Summary>, anyhow::Error>(None);
                }
            }
        };
        let judge = match super::judge::for_plan(&plan, &args.target, config.as_ref()).await {
            Ok(judge) => judge,
            Err(e) => {
                output::stderr(&format!("error: {e}\n"));
                return Ok(None);
            }
        };
        let cancel = CancellationToken::new();
        let options = RunOptions {
            jobs: args.target.jobs as usize,
            max_cases: config
                .as_ref()
                .and_then(|c| c.concurrency.as_ref())
                .and_then(|c| c.max_test_case_concurrency)
                .map(|n| n as usize),
            samples: args.target.samples,
            connections: (!args.target.connection.is_empty()).then(|| {
                args.target
                    .connection
                    .iter()
                    .map(|c| connection(*c))
                    .collect()
            }),
            judge,
            cancel: cancel.clone(),
            exhaustive: false,
        };
        let ctrl_c = {
            let cancel = cancel.clone();
            let stop = crate::signals::listen();
            tokio::spawn(async move {
                stop.await;
                output::stderr("\ncancelling: no new cases start; writing the reports\n");
                cancel.cancel();
            })
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let report = tokio::task::spawn_blocking(move || {
            let mut failures = Vec::new();
            while let Some(event) = rx.blocking_recv() {
                failures.extend(reporters.event(&event));
            }
            failures.extend(reporters.finish());
            failures
        });
        let summary = run_plan(&plan, &connectors, &options, tx).await;
        ctrl_c.abort();
        for failure in report.await.unwrap_or_default() {
            output::stderr(&format!("error: {failure}\n"));
        }
        if let Some(server) = demo {
            server.shutdown().await;
        }
        Ok(Some(summary))
    })?;
    let Some(summary) = summary else {
        return Ok(ExitCode::INVALID);
    };
    Ok(exit_code(&summary))
}

/// The exit code for a run's summary.
fn exit_code(summary: &Summary) -> ExitCode {
    if summary.cancelled {
        ExitCode::CANCELLED
    } else if summary.failed > 0 {
        ExitCode::FAILURES
    } else if summary.errored > 0 {
        ExitCode::ERROR
    } else {
        ExitCode::OK
    }
}

pub(crate) fn connection(arg: ConnectionArg) -> Connection {
    match arg {
        ConnectionArg::Direct => Connection::Direct,
        ConnectionArg::Http => Connection::Http,
        ConnectionArg::Https => Connection::Https,
        ConnectionArg::Mcp => Connection::Mcp,
    }
}

fn selection(args: &TargetArgs) -> Result<Selection, String> {
    let mut selection = Selection::all();
    for f in &args.filter {
        selection = selection.filter(f)?;
    }
    for t in &args.tag {
        selection = selection.tag(t);
    }
    if let Some(shard) = &args.shard {
        selection = selection.shard(Shard::parse(shard).map_err(|e| format!("--shard: {e}"))?);
    }
    Ok(selection)
}

/// `assay.toml`: the one given, else `./assay.toml` when it exists.
pub(crate) fn load_config(path: Option<&Path>, color: bool) -> Result<Option<Config>, ExitCode> {
    let path: PathBuf = match path {
        Some(p) => p.to_path_buf(),
        None if Path::new("assay.toml").exists() => PathBuf::from("assay.toml"),
        None => return Ok(None),
    };
    let entry = load_one(&path, &Env::from_process());
    output::stderr(&output::render(&entry.reports(), color));
    match &entry {
        Entry::Loaded(loaded) => match &loaded.outcome {
            Ok(Document::Config(config)) => Ok(Some(config.clone())),
            _ => Err(ExitCode::INVALID),
        },
        Entry::Unreadable { .. } => Err(ExitCode::INVALID),
    }
}

fn reporters(args: &RunArgs, color: bool) -> anyhow::Result<Reporters> {
    let mut reporters = Reporters::new();
    let verbosity = if args.quiet {
        Verbosity::Quiet
    } else if args.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    reporters.push(
        "human",
        Human::stderr(HumanOptions {
            verbosity,
            color,
            terminal,
        }),
    );
    if let Some(path) = &args.jsonl {
        let r =
            JsonLines::create(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("jsonl", r);
    }
    if let Some(path) = &args.json {
        let out = Output::file(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("json", JsonReport::new(out));
    }
    if let Some(path) = &args.junit {
        let out = Output::file(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("junit", Junit::new(out));
    }
    if let Some(path) = &args.markdown {
        let out =
            Output::append(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("markdown", Markdown::new(out));
    }
    Ok(reporters)
}

/// Connectors from the command line and assay.toml: http, https and mcp to the server
/// (agents with their own `url` in assay.toml go to theirs), direct to the commands of
/// assay.toml.
/// Builds the connector of one server.
type MakeConnector<'a> = &'a dyn Fn(&Url) -> Result<Arc<dyn Connector>, ConnectError>;

pub(crate) fn connectors(
    args: &TargetArgs,
    config: Option<&Config>,
) -> Result<Connectors, ConnectError> {
    let options = super::http_options(args.remote.ca_cert.as_deref(), args.remote.insecure)?;
    let env_server = std::env::var(SERVER_ENV).ok();
    let base = resolve_server(
        args.remote.server.as_deref(),
        env_server.as_deref(),
        config.and_then(|c| c.server.as_deref()),
    )?;
    let mut own: HashMap<String, Url> = HashMap::new();
    for (name, agent) in config.map(|c| &c.agents).into_iter().flatten() {
        if let Some(url) = &agent.url {
            own.insert(
                name.clone(),
                parse_server(url).map_err(ConnectError::config)?,
            );
        }
    }
    let routed = |make: MakeConnector<'_>| -> Result<Arc<dyn Connector>, ConnectError> {
        let default = make(&base)?;
        let mut by_agent = HashMap::new();
        for (name, url) in &own {
            by_agent.insert(name.clone(), make(url)?);
        }
        Ok(Arc::new(Routed { default, by_agent }))
    };
    let http =
        routed(&|u| Ok(Arc::new(NeuroSanHttp::new(u.clone(), &options)?) as Arc<dyn Connector>))?;
    let https = routed(&|u| Ok(Arc::new(NeuroSanHttp::https(u, &options)?) as Arc<dyn Connector>))?;
    let mcp =
        routed(&|u| Ok(Arc::new(NeuroSanMcp::new(u.clone(), &options)?) as Arc<dyn Connector>))?;
    let dir = std::env::current_dir().ok();
    let direct = match config {
        Some(c) => StdioConnector::from_config(c, dir.as_deref()),
        None => StdioConnector::new(),
    };
    let connectors = Connectors::new()
        .with(Connection::Direct, Arc::new(direct))
        .with(Connection::Http, http)
        .with(Connection::Https, https)
        .with(Connection::Mcp, mcp);
    with_providers(connectors, args, config)
}

/// Adds the five model providers, each from its ecosystem's environment variables and
/// its `[providers.<name>]` table in assay.toml (endpoint, key variable, limits).
pub(crate) fn with_providers(
    mut connectors: Connectors,
    args: &TargetArgs,
    config: Option<&Config>,
) -> Result<Connectors, ConnectError> {
    let options = super::http_options(args.remote.ca_cert.as_deref(), args.remote.insecure)?;
    let env: HashMap<String, String> = std::env::vars().collect();
    for kind in ProviderKind::ALL {
        let table = config.and_then(|c| {
            ProviderName::from_name(kind.name()).and_then(|name| c.providers.get(&name))
        });
        let settings = ProviderSettings::resolve(kind, &env, table)?;
        let limits = Limits::new(
            table.and_then(|t| t.max_concurrency),
            table.and_then(|t| t.requests_per_minute),
        );
        connectors =
            connectors.with_provider(kind, provider::build(kind, settings, &options, limits)?);
    }
    Ok(connectors)
}

/// Sends each agent to its own server when assay.toml names one, else to the default.
struct Routed {
    default: Arc<dyn Connector>,
    by_agent: HashMap<String, Arc<dyn Connector>>,
}

impl Connector for Routed {
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>> {
        self.by_agent
            .get(agent)
            .unwrap_or(&self.default)
            .open(agent)
    }
}
