//! `assay run`: load test files, build the plan, reach the agents, run, report.
//!
//! Exit codes: 0 all passed (or nothing to run, when `--no-tests` allows it); 1 some
//! failed; 2 invalid input or usage (nothing runs when any file is invalid, or when
//! nothing is selected and `--no-tests` does not allow it); 3 errors (unreachable
//! agents, timeouts) and no failures, or a report that could not be written; 130
//! cancelled with Ctrl-C (the reports are still written).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use assay_connect::neuro_san_direct::MANIFEST_ENV;
use assay_connect::provider::{self, Limits, ProviderKind, ProviderSettings};
use assay_connect::{
    BoxFuture, ConnectError, Connector, Conversation, DirectConnector, HttpOptions, NeuroSanDirect,
    NeuroSanHttp, NeuroSanMcp, SERVER_ENV, StdioConnector, Url, parse_server, resolve_server,
};
use assay_report::{
    Human, HumanOptions, JsonLines, JsonReport, Junit, Markdown, Output, Reporters, Verbosity,
};
use assay_run::select::SelectError;
use assay_run::{Connectors, RunOptions, Selection, Summary, run_plan};
use assay_spec::load::Document;
use assay_spec::model::config::Config;
use assay_spec::model::data_driven::Connection;
use assay_spec::{Env, Plan};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Entry, input_limits, load_one, load_paths, report_empty};
use crate::args::{RunArgs, TargetArgs};
use crate::exit::ExitCode;
use crate::output;

/// The cases to run and the project configuration, after loading and selection.
pub(crate) struct Prepared {
    /// The selected cases; none when the run is empty.
    pub(crate) plan: Plan,
    /// `assay.toml`, when there is one.
    pub(crate) config: Option<Config>,
    /// The run is empty and `--no-tests` makes that fail: the (empty) reports are still
    /// written, then the run exits [`ExitCode::INVALID`].
    pub(crate) empty_fails: bool,
}

/// Loads the configuration and every file (printing diagnostics), and applies the
/// selection. `Err` holds the exit code when the files cannot run (an invalid file, a
/// bad filter).
pub(crate) fn prepare(target: &TargetArgs, color: bool) -> Result<Prepared, ExitCode> {
    let config = load_config(target.config.as_deref(), target.strict, color)?;
    let strict = target.strict || config.as_ref().and_then(|c| c.strict) == Some(true);
    let env = Env::from_process();
    let limits = input_limits(target.config.as_deref());
    let inputs = load_paths(&target.paths, &env, strict, &limits);
    let reports: Vec<_> = inputs.entries.iter().flat_map(Entry::reports).collect();
    output::stderr(&output::render(&reports, color));
    let invalid = inputs.entries.iter().filter(|e| !e.is_valid()).count();
    if invalid > 0 {
        let why = if strict {
            " (strict: every warning is an error)"
        } else {
            ""
        };
        output::stderr(&format!(
            "error: {invalid} invalid file(s); nothing was run{why}\n"
        ));
        return Err(ExitCode::INVALID);
    }
    let selection = selection(target).map_err(|e| {
        output::stderr(&format!("error: {e}\n"));
        ExitCode::INVALID
    })?;
    let cases = inputs
        .entries
        .iter()
        .filter(|e| !matches!(e, Entry::Loaded(l) if matches!(l.outcome, Ok(Document::Config(_)))))
        .flat_map(Entry::cases)
        .collect();
    let selected = selection.select(Plan::new(cases).cases);
    let empty_fails = selected
        .empty_run(target.no_tests.map(Into::into))
        .is_some_and(|empty| report_empty(&empty));
    Ok(Prepared {
        plan: Plan {
            cases: selected.cases,
        },
        config,
        empty_fails,
    })
}

/// Runs the cases under `args.target.paths` and returns the exit code the results call for.
pub(crate) fn run(args: &RunArgs, color: bool) -> anyhow::Result<ExitCode> {
    // The report files first: a bad path fails before anything else, and an earlier
    // run's reports are gone from now on, whatever happens to this run.
    let mut reporters = match reporters(args, color) {
        Ok(reporters) => reporters,
        Err(e) => {
            output::stderr(&format!("error: {e:#}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let Prepared {
        plan,
        config,
        empty_fails,
    } = match prepare(&args.target, color) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
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
        let (connectors, demo) = if plan.cases.is_empty() {
            // Nothing to run: no agent to start or reach, but every report is written.
            (Connectors::new(), None)
        } else if args.target.demo {
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
                    return Ok::<Option<(Summary, usize)>, anyhow::Error>(None);
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
            connections: (!args.target.connection.is_empty())
                .then(|| args.target.connection.to_vec()),
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
        // A report that could not be written fails the run; the human one on stderr
        // (a closed pipe) does not.
        let mut unwritten = 0;
        for failure in report.await.unwrap_or_default() {
            output::stderr(&format!("error: {failure}\n"));
            unwritten += usize::from(failure.reporter != "human");
        }
        if let Some(server) = demo {
            server.shutdown().await;
        }
        Ok(Some((summary, unwritten)))
    })?;
    let Some((summary, unwritten)) = summary else {
        return Ok(ExitCode::INVALID);
    };
    if unwritten > 0 && !summary.cancelled {
        output::stderr(&format!(
            "error: {unwritten} report(s) could not be written; the run fails whatever the tests did\n"
        ));
        return Ok(ExitCode::ERROR);
    }
    if empty_fails {
        return Ok(ExitCode::INVALID);
    }
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

fn selection(args: &TargetArgs) -> Result<Selection, SelectError> {
    let mut selection = Selection::all();
    for f in &args.filter {
        selection = selection.filter(f)?;
    }
    for t in &args.tag {
        selection = selection.tag(t);
    }
    if let Some(partition) = args.partition.or(args.shard) {
        selection = selection.partition(partition);
    }
    Ok(selection)
}

/// `assay.toml`: the one given, else `./assay.toml` when it exists. `strict` makes its
/// warnings errors (as its own `strict = true` does).
pub(crate) fn load_config(
    path: Option<&Path>,
    strict: bool,
    color: bool,
) -> Result<Option<Config>, ExitCode> {
    let path: PathBuf = match path {
        Some(p) => p.to_path_buf(),
        None if Path::new("assay.toml").exists() => PathBuf::from("assay.toml"),
        None => return Ok(None),
    };
    let mut entry = load_one(&path, &Env::from_process());
    if let Entry::Loaded(loaded) = entry {
        let own = matches!(&loaded.outcome, Ok(Document::Config(c)) if c.strict == Some(true));
        entry = Entry::Loaded(Box::new(if strict || own {
            loaded.strict()
        } else {
            *loaded
        }));
    }
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
type MakeConnector<'a> = &'a dyn Fn(&Url, &HttpOptions) -> Result<Arc<dyn Connector>, ConnectError>;

pub(crate) fn connectors(
    args: &TargetArgs,
    config: Option<&Config>,
) -> Result<Connectors, ConnectError> {
    let options =
        super::http_options(args.remote.ca_cert.as_deref(), args.remote.insecure, config)?;
    let env_server = std::env::var(SERVER_ENV).ok();
    let base = resolve_server(
        args.remote.server.as_deref(),
        env_server.as_deref(),
        config.and_then(|c| c.server.as_deref()),
    )?;
    // An agent with its own server, and with its own time limit when it sets one.
    let mut own: HashMap<String, (Url, HttpOptions)> = HashMap::new();
    for (name, agent) in config.map(|c| &c.agents).into_iter().flatten() {
        if let Some(url) = &agent.url {
            let url = parse_server(url)?;
            let timeout = super::seconds(agent.timeout_in_seconds).or(options.timeout);
            own.insert(
                name.clone(),
                (
                    url,
                    HttpOptions {
                        timeout,
                        ..options.clone()
                    },
                ),
            );
        }
    }
    let routed = |make: MakeConnector<'_>| -> Result<Arc<dyn Connector>, ConnectError> {
        let default = make(&base, &options)?;
        let mut by_agent = HashMap::new();
        for (name, (url, options)) in &own {
            by_agent.insert(name.clone(), make(url, options)?);
        }
        Ok(Arc::new(Routed { default, by_agent }))
    };
    let http =
        routed(&|u, o| Ok(Arc::new(NeuroSanHttp::new(u.clone(), o)?) as Arc<dyn Connector>))?;
    let https = routed(&|u, o| Ok(Arc::new(NeuroSanHttp::https(u, o)?) as Arc<dyn Connector>))?;
    let mcp = routed(&|u, o| Ok(Arc::new(NeuroSanMcp::new(u.clone(), o)?) as Arc<dyn Connector>))?;
    let direct = direct_connector(config, args.config.as_deref(), &options);
    let connectors = Connectors::new()
        .with(Connection::Direct, Arc::new(direct))
        .with(Connection::Http, http)
        .with(Connection::Https, https)
        .with(Connection::Mcp, mcp);
    with_providers(connectors, args, config)
}

/// `direct`: assay.toml's agent commands, then neuro-san agent networks in-process
/// through the bridge when `[neuro_san]` (paths relative to assay.toml's folder) or
/// neuro-san's own `AGENT_MANIFEST_FILE` says where they are.
fn direct_connector(
    config: Option<&Config>,
    config_path: Option<&Path>,
    options: &HttpOptions,
) -> DirectConnector {
    let cwd = std::env::current_dir().ok();
    let commands = match config {
        Some(c) => StdioConnector::from_config(c, cwd.as_deref()),
        None => StdioConnector::new(),
    }
    .with_timeouts(options.timeout, options.idle_timeout);
    let dir = config_path
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
        .and_then(|d| std::path::absolute(d).ok())
        .or(cwd)
        .unwrap_or_default();
    let manifest = std::env::var(MANIFEST_ENV).ok();
    let neuro_san = NeuroSanDirect::from_config(
        config.and_then(|c| c.neuro_san.as_ref()),
        &dir,
        manifest.as_deref(),
    );
    DirectConnector::new(commands, neuro_san)
}

/// Adds the five model providers, each from its ecosystem's environment variables and
/// its `[providers.<name>]` table in assay.toml (endpoint, key variable, limits).
pub(crate) fn with_providers(
    mut connectors: Connectors,
    args: &TargetArgs,
    config: Option<&Config>,
) -> Result<Connectors, ConnectError> {
    let options =
        super::http_options(args.remote.ca_cert.as_deref(), args.remote.insecure, config)?;
    let env: HashMap<String, String> = std::env::vars().collect();
    for kind in ProviderKind::ALL {
        let table = config.and_then(|c| c.providers.get(&kind));
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
