//! Prill against a real neuro-san server, and against neuro-san's own test driver.
//!
//! This test needs a Python with neuro-san installed at the version pinned in
//! `.ci/neuro-san/requirements.txt`, named by `PRILL_NEURO_SAN_PYTHON`; `.ci/run` makes
//! that venv (`.ci/neuro-san-venv`) and sets the variable. Without it the trials show as
//! ignored, with the reason; under `CI=true` they fail instead, so CI never passes
//! without having run them.
//!
//! What runs, all on 127.0.0.1:
//! - the project's fake OpenAI server (`prill-testkit`), answering by the rules of
//!   `brain.rs`, as the model of every agent network;
//! - neuro-san's own server (`server_main_loop`) with the networks of
//!   `fixtures/neuro-san-real/registries` (a single agent, a coded tool with sly_data, a
//!   pass-through to another network, a judge), and an https proxy in front of it (the
//!   server speaks only http, as it does when deployed behind one);
//! - for each connection (direct, http, https, mcp): `prill run --connection <c>` over
//!   every file of `fixtures/neuro-san-real/cases`, with gist checks judged by the
//!   judge network, `direct` going through Prill's bridge into neuro-san's library; and
//!   neuro-san's `DataDrivenAgentTestDriver` over the same files on the same connection
//!   (`fixtures/neuro-san-real/run_driver.py`);
//! - `prill agents --server` against the server.
//!
//! Each file's name says Prill's verdict; the driver must agree except for the lines of
//! `fixtures/neuro-san-real/deviations.tsv`, and every one of those lines must still
//! happen (see `verdicts.rs`).
//!
//! `PRILL_NEURO_SAN_BENCH=1` runs the benchmark of `direct` instead (`bench.rs`; `cargo
//! xtask bench --neuro-san-direct`), and nothing else.
//!
//! `PRILL_NEURO_SAN_PRILL` names another `prill` binary to run instead of the one cargo
//! built, and `PRILL_NEURO_SAN_CONNECTIONS` (comma-separated) runs only some of the
//! connections, the others' trials showing as ignored: `.ci/wheel` runs the `direct`
//! trial through the binary `pip install prill` put in the neuro-san venv (its bridge is
//! compiled in; the other connections do not depend on how the binary was installed).

mod bench;
mod brain;
mod mcp_tools;
mod server;
mod verdicts;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use prill_testkit::TlsProxy;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::Value;

use crate::server::{NeuroSanEnv, NeuroSanServer, run, tail};
use crate::verdicts::{CONNECTIONS, Line, Seen, Verdict, compare, read_table};

/// The variable that names the Python with neuro-san.
const PYTHON_ENV: &str = "PRILL_NEURO_SAN_PYTHON";

/// The variable that names another `prill` binary to test (the wheel's).
const PRILL_ENV: &str = "PRILL_NEURO_SAN_PRILL";

/// The `prill` binary the trials run: `PRILL_NEURO_SAN_PRILL`, else cargo's.
fn prill_binary() -> PathBuf {
    std::env::var_os(PRILL_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_prill")))
}

/// The variable that narrows the connections run.
const CONNECTIONS_ENV: &str = "PRILL_NEURO_SAN_CONNECTIONS";

/// The connections to run: `PRILL_NEURO_SAN_CONNECTIONS` of [`CONNECTIONS`], else all.
fn chosen_connections() -> Vec<&'static str> {
    match std::env::var(CONNECTIONS_ENV) {
        Ok(list) if !list.trim().is_empty() => CONNECTIONS
            .into_iter()
            .filter(|c| list.split(',').any(|given| given.trim() == *c))
            .collect(),
        _ => CONNECTIONS.to_vec(),
    }
}

/// A limit on each `prill run` and driver run.
const STEP_LIMIT: Duration = Duration::from_secs(1200);

/// Files whose samples must not run alongside others: the coin alternates on every call.
const SERIAL: &str = "-coin";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/neuro-san-real")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Everything the trials share, started once.
struct World {
    // Dropped first: the server, before the model it calls.
    server: NeuroSanServer,
    proxy: TlsProxy,
    _model: FakeOpenAi,
    _runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    python: PathBuf,
    env: NeuroSanEnv,
    cases: Vec<PathBuf>,
    /// The files Prill refuses, with what `prill validate` said.
    invalid: BTreeMap<String, String>,
    limits: BTreeMap<(String, String), Line>,
    deviations: BTreeMap<(String, String), Line>,
    /// Both sides' verdicts by connection and file, or why there are none.
    seen: BTreeMap<String, Result<BTreeMap<String, Seen>, String>>,
}

/// Verdicts by file, with what went wrong.
type Verdicts = BTreeMap<String, (Verdict, String)>;

static WORLD: OnceLock<Mutex<Option<Result<World, String>>>> = OnceLock::new();
/// One trial at a time: they share the server and the coin.
static TURN: Mutex<()> = Mutex::new(());

fn main() {
    let args = Arguments::from_args();
    if std::env::var_os(bench::BENCH_ENV).is_some() {
        // The benchmark alone, with nothing else running.
        let trial = match gate() {
            Gate::Run(python) => {
                Trial::test("bench_direct_against_neuro_san_s_driver", move || {
                    bench::bench(&python).map_err(Failed::from)
                })
            }
            Gate::Skip(reason) | Gate::Fail(reason) => {
                Trial::test("bench_direct_against_neuro_san_s_driver", move || {
                    Err(reason.into())
                })
            }
        };
        libtest_mimic::run(&args, vec![trial]).exit();
    }
    // These run everywhere: the test's own parts.
    let mut trials = vec![
        Trial::test("the_scripted_model_judges_both_prompts", || {
            brain::reads_both_judging_prompts().map_err(Failed::from)
        }),
        Trial::test("the_comparison_is_exact_both_ways", || {
            verdicts::comparison_is_exact_both_ways().map_err(Failed::from)
        }),
        Trial::test("the_tables_parse_and_name_case_files", || {
            tables_name_case_files().map_err(Failed::from)
        }),
    ];
    let gate = gate();
    let mcp = "an_mcp_server_of_the_official_sdk_answers_a_tool_loop";
    trials.push(match &gate {
        Gate::Run(python) => {
            let python = python.clone();
            Trial::test(mcp, move || {
                mcp_tools::official_sdk_server_answers_a_tool_loop(&python, &prill_binary())
                    .map_err(Failed::from)
            })
        }
        Gate::Skip(reason) => {
            let reason = reason.clone();
            Trial::ignorable_test(mcp, move || Ok(Completion::ignored_with(reason)))
        }
        Gate::Fail(reason) => {
            let reason = reason.clone();
            Trial::test(mcp, move || Err(reason.into()))
        }
    });
    let mut names: Vec<String> = vec!["prill_agents_lists_the_real_server_s_agents".into()];
    names.extend(
        CONNECTIONS
            .iter()
            .map(|c| format!("verdicts_agree_with_neuro_san_s_driver_over_{c}")),
    );
    let chosen = chosen_connections();
    for name in names {
        let left_out = name
            .strip_prefix("verdicts_agree_with_neuro_san_s_driver_over_")
            .is_some_and(|c| !chosen.contains(&c));
        if left_out {
            trials.push(Trial::ignorable_test(name, || {
                Ok(Completion::ignored_with(format!(
                    "not among {CONNECTIONS_ENV}"
                )))
            }));
            continue;
        }
        let trial = match &gate {
            Gate::Skip(reason) => {
                let reason = reason.clone();
                Trial::ignorable_test(name, move || Ok(Completion::ignored_with(reason)))
            }
            Gate::Fail(reason) => {
                let reason = reason.clone();
                Trial::test(name, move || Err(reason.into()))
            }
            Gate::Run(python) => {
                let python = python.clone();
                let which = name.clone();
                Trial::test(name, move || {
                    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
                    let slot = WORLD.get_or_init(|| Mutex::new(Some(World::start(&python))));
                    let guard = slot.lock().unwrap_or_else(|e| e.into_inner());
                    let world = match guard.as_ref() {
                        Some(Ok(world)) => world,
                        Some(Err(e)) => return Err(e.clone().into()),
                        None => return Err("the world is gone".into()),
                    };
                    match which.strip_prefix("verdicts_agree_with_neuro_san_s_driver_over_") {
                        Some(connection) => world.check_connection(connection),
                        None => world.check_agents(),
                    }
                })
            }
        };
        trials.push(trial);
    }
    let conclusion = libtest_mimic::run(&args, trials);
    // Stop the server and the fakes before exiting.
    if let Some(slot) = WORLD.get() {
        drop(slot.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
    conclusion.exit();
}

enum Gate {
    Run(PathBuf),
    Skip(String),
    Fail(String),
}

/// Whether the trials can run: the Python is named and exists.
fn gate() -> Gate {
    let why = match std::env::var_os(PYTHON_ENV) {
        Some(p) if Path::new(&p).is_file() => return Gate::Run(PathBuf::from(p)),
        Some(p) => format!("{PYTHON_ENV}={} is not a file", Path::new(&p).display()),
        None => format!(
            "{PYTHON_ENV} is not set: run `.ci/neuro-san-venv` and set it to the Python it prints"
        ),
    };
    if std::env::var("CI").as_deref() == Ok("true") {
        Gate::Fail(format!(
            "CI=true and the real neuro-san test cannot run: {why}"
        ))
    } else {
        Gate::Skip(format!("real neuro-san not available: {why}"))
    }
}

/// Both tables parse, and every line names a case file.
fn tables_name_case_files() -> Result<(), String> {
    for table in ["deviations.tsv", "limits.tsv"] {
        for ((file, _), line) in read_table(&fixtures().join(table))? {
            if !fixtures().join("cases").join(&file).is_file() {
                return Err(format!("{table}:{}: {file} is not a case file", line.line));
            }
        }
    }
    Ok(())
}

/// The bridge's settings, as a neuro-san team would write them: `[neuro_san]` with the
/// test's networks, coded tools and model settings under `fixtures`.
fn prill_toml(python: &Path, fixtures: &Path) -> String {
    format!(
        "[neuro_san]\npython = {python:?}\nmanifest = {manifest:?}\ntool_path = {tools:?}\nenv = {{ PYTHONPATH = {root:?}, AGENT_LLM_INFO_FILE = {info:?} }}\n",
        python = python.display().to_string(),
        manifest = fixtures
            .join("registries/manifest.hocon")
            .display()
            .to_string(),
        tools = fixtures.join("coded_tools").display().to_string(),
        root = fixtures.display().to_string(),
        info = fixtures.join("llm_info.hocon").display().to_string(),
    )
}

/// What `python -c code` prints, trimmed.
fn python_prints(python: &Path, code: &str) -> Result<String, String> {
    let mut command = Command::new(python);
    command.args(["-c", code]);
    let out = run(command, Duration::from_secs(60))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The neuro-san version `.ci/neuro-san/requirements.txt` pins.
fn pinned_version() -> Result<String, String> {
    let path = repo().join(".ci/neuro-san/requirements.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("neuro-san=="))
        .map(str::to_owned)
        .ok_or_else(|| format!("{} pins no neuro-san", path.display()))
}

impl World {
    fn start(python: &Path) -> Result<World, String> {
        let started = Instant::now();
        let pinned = pinned_version()?;
        let installed = python_prints(
            python,
            "import importlib.metadata as m; print(m.version('neuro-san'))",
        )?;
        if installed != pinned {
            return Err(format!(
                "{} has neuro-san {installed:?}, the pin is {pinned}: rerun .ci/neuro-san-venv",
                python.display()
            ));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let model = runtime.block_on(FakeOpenAi::start());
        model.respond_with(brain::responder());
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let fixtures = fixtures()
            .canonicalize()
            .map_err(|e| format!("fixtures/neuro-san-real: {e}"))?;
        let env = NeuroSanEnv {
            fixtures: fixtures.clone(),
            model_url: model.base_url(),
        };
        let server = NeuroSanServer::start(python, &env, dir.path())?;
        let proxy = runtime.block_on(TlsProxy::start(
            format!("127.0.0.1:{}", server.port())
                .parse()
                .map_err(|e| format!("{e}"))?,
        ));
        std::fs::write(dir.path().join("proxy.pem"), proxy.cert_pem())
            .map_err(|e| e.to_string())?;
        std::fs::write(dir.path().join("prill.toml"), prill_toml(python, &fixtures))
            .map_err(|e| e.to_string())?;
        let mut cases: Vec<PathBuf> = std::fs::read_dir(fixtures.join("cases"))
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "hocon"))
            .collect();
        cases.sort();
        let mut world = World {
            server,
            proxy,
            _model: model,
            _runtime: runtime,
            dir,
            python: python.to_owned(),
            env,
            cases,
            invalid: BTreeMap::new(),
            limits: read_table(&fixtures.join("limits.tsv"))?,
            deviations: read_table(&fixtures.join("deviations.tsv"))?,
            seen: BTreeMap::new(),
        };
        world.invalid = world.refused()?;
        eprintln!(
            "neuro-san {installed} serving at {} after {:.1}s; prill is {}",
            world.server.url(),
            started.elapsed().as_secs_f64(),
            prill_binary().display()
        );
        world.seen = world.run_everything();
        eprintln!(
            "every connection run after {:.1}s",
            started.elapsed().as_secs_f64()
        );
        Ok(world)
    }

    /// Runs Prill and neuro-san's driver on every connection, one connection at a time:
    /// first every file but the coin's, both sides at once; then the coin's, one side at
    /// a time, as its answers alternate call by call.
    fn run_everything(&self) -> BTreeMap<String, Result<BTreeMap<String, Seen>, String>> {
        let runnable: Vec<&PathBuf> = self
            .cases
            .iter()
            .filter(|c| !self.invalid.contains_key(&name(c)))
            .collect();
        let (serial, parallel): (Vec<&PathBuf>, Vec<&PathBuf>) =
            runnable.into_iter().partition(|c| name(c).contains(SERIAL));
        let (parallel_driver, serial_driver): (Vec<&PathBuf>, Vec<&PathBuf>) =
            self.cases.iter().partition(|c| !name(c).contains(SERIAL));
        let mut out = BTreeMap::new();
        for c in chosen_connections() {
            let step = Instant::now();
            let (mut prill, mut driver) = std::thread::scope(|scope| {
                let prill = scope.spawn(|| self.run_prill(c, &parallel, "all", None));
                let driver = self.run_driver(c, &parallel_driver);
                let prill = prill
                    .join()
                    .unwrap_or_else(|_| Err("the run panicked".to_owned()));
                (prill, driver)
            });
            let both = step.elapsed();
            merge(&mut prill, self.run_prill(c, &serial, "coin", Some(1)));
            merge(&mut driver, self.run_driver(c, &serial_driver));
            eprintln!(
                "{c}: {:.1}s ({:.1}s both sides at once, then the coin)",
                step.elapsed().as_secs_f64(),
                both.as_secs_f64()
            );
            out.insert(c.to_owned(), self.pair(prill, driver));
        }
        out
    }

    /// Both sides' verdicts on every file, the refused files counted as `invalid`.
    fn pair(
        &self,
        prill: Result<Verdicts, String>,
        driver: Result<Verdicts, String>,
    ) -> Result<BTreeMap<String, Seen>, String> {
        let mut prill = prill?;
        let driver = driver?;
        for (file, message) in &self.invalid {
            prill.insert(file.clone(), (Verdict::Invalid, tail(message, 600)));
        }
        let mut seen = BTreeMap::new();
        for case in &self.cases {
            let file = name(case);
            let (a, a_detail) = prill
                .get(&file)
                .cloned()
                .ok_or_else(|| format!("{file}: no verdict from Prill"))?;
            let (n, n_detail) = driver
                .get(&file)
                .cloned()
                .ok_or_else(|| format!("{file}: no verdict from neuro-san's driver"))?;
            seen.insert(
                file,
                Seen {
                    prill: a,
                    prill_detail: a_detail,
                    neuro_san: n,
                    neuro_san_detail: n_detail,
                },
            );
        }
        Ok(seen)
    }

    fn prill(&self) -> Command {
        let mut command = Command::new(prill_binary());
        command
            .current_dir(self.dir.path())
            .envs(self.env.vars())
            .env("NO_COLOR", "1")
            .env_remove("PRILL_SERVER");
        command
    }

    /// The files `prill validate` refuses, with its message.
    fn refused(&self) -> Result<BTreeMap<String, String>, String> {
        let mut out = BTreeMap::new();
        for case in &self.cases {
            let mut command = self.prill();
            command.arg("validate").arg(case);
            let output = run(command, Duration::from_secs(60))?;
            if !output.status.success() {
                out.insert(name(case), String::from_utf8_lossy(&output.stderr).into());
            }
        }
        Ok(out)
    }

    fn check_agents(&self) -> Result<(), Failed> {
        let mut command = self.prill();
        command.args(["agents", "--server", &self.server.url(), "--format", "json"]);
        let output = run(command, Duration::from_secs(60))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!(
                "prill agents failed: {}\n{}",
                String::from_utf8_lossy(&output.stderr),
                self.server.log_tail()
            )
            .into());
        }
        let listed: Value = serde_json::from_str(&stdout).map_err(|e| format!("{e}: {stdout}"))?;
        let mut names: Vec<String> = listed["agents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.get("name").and_then(Value::as_str).map(str::to_owned))
            .collect();
        names.sort();
        if names != ["calculator", "judge", "relay", "trivia"] {
            return Err(format!("prill agents listed {names:?}:\n{stdout}").into());
        }
        Ok(())
    }

    fn check_connection(&self, connection: &str) -> Result<(), Failed> {
        let seen = match self.seen.get(connection) {
            Some(Ok(seen)) => seen,
            Some(Err(e)) => {
                return Err(format!(
                    "{e}\n\nneuro-san's server log ends with:\n{}",
                    self.server.log_tail()
                )
                .into());
            }
            None => return Err(format!("{connection} was not run").into()),
        };
        let problems = compare(connection, seen, &self.limits, &self.deviations);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} disagreement(s) over {connection}:\n{}",
                problems.len(),
                problems.join("\n")
            )
            .into())
        }
    }

    /// `prill run` over `files` on `connection`: each file's verdict and what went wrong.
    fn run_prill(
        &self,
        connection: &str,
        files: &[&PathBuf],
        label: &str,
        jobs: Option<u32>,
    ) -> Result<Verdicts, String> {
        if files.is_empty() {
            return Ok(BTreeMap::new());
        }
        let report = self.dir.path().join(format!("{connection}-{label}.json"));
        let (server, ca) = if connection == "https" {
            (
                self.proxy.https_url(),
                Some(self.dir.path().join("proxy.pem")),
            )
        } else {
            (self.server.url(), None)
        };
        let mut command = self.prill();
        command
            .args(["run", "--connection", connection, "--server", &server])
            .args(["--judge", "neuro-san:judge", "--no-cache", "--quiet"])
            .arg("--json")
            .arg(&report);
        if let Some(ca) = ca {
            command.arg("--ca-cert").arg(ca);
        }
        // Each direct conversation is a Python process that loads neuro-san: a few at a
        // time, not dozens.
        let jobs = jobs.or((connection == "direct").then_some(4));
        if let Some(jobs) = jobs {
            command.args(["--jobs", &jobs.to_string()]);
        }
        command.args(files);
        let output = run(command, STEP_LIMIT)?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !matches!(output.status.code(), Some(0 | 1 | 3)) {
            return Err(format!(
                "prill run over {connection} exited with {}:\n{stderr}",
                output.status
            ));
        }
        let json: Value = serde_json::from_str(
            &std::fs::read_to_string(&report).map_err(|e| format!("{}: {e}", report.display()))?,
        )
        .map_err(|e| e.to_string())?;
        let mut out = BTreeMap::new();
        for unit in json["units"].as_array().into_iter().flatten() {
            let file = name(Path::new(unit["unit"]["file"].as_str().unwrap_or_default()));
            let word = unit["verdict"].as_str().unwrap_or_default();
            let verdict =
                Verdict::parse(word).ok_or_else(|| format!("{file}: Prill's verdict `{word}`"))?;
            out.insert(file, (verdict, detail(unit)));
        }
        Ok(out)
    }

    /// neuro-san's driver over every file on `connection`.
    fn run_driver(&self, connection: &str, files: &[&PathBuf]) -> Result<Verdicts, String> {
        let port = if connection == "https" {
            self.proxy.addr().port()
        } else {
            self.server.port()
        };
        let mut command = Command::new(&self.python);
        command
            .arg(fixtures().join("run_driver.py"))
            .args(["--connection", connection, "--port", &port.to_string()])
            .args(files)
            .current_dir(self.dir.path())
            .envs(self.env.vars())
            .env("REQUESTS_CA_BUNDLE", self.dir.path().join("proxy.pem"));
        let output = run(command, STEP_LIMIT)?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut out = BTreeMap::new();
        for line in stdout.lines().filter(|l| l.starts_with('{')) {
            let v: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
            let file = name(Path::new(v["file"].as_str().unwrap_or_default()));
            let word = v["verdict"].as_str().unwrap_or_default();
            let verdict =
                Verdict::parse(word).ok_or_else(|| format!("{file}: driver verdict `{word}`"))?;
            out.insert(
                file,
                (
                    verdict,
                    v["message"].as_str().unwrap_or_default().to_owned(),
                ),
            );
        }
        if out.len() != files.len() {
            return Err(format!(
                "neuro-san's driver gave {} verdicts for {} files over {connection} ({}):\n{}",
                out.len(),
                files.len(),
                output.status,
                tail(&String::from_utf8_lossy(&output.stderr), 4000)
            ));
        }
        Ok(out)
    }
}

/// Adds `more` to `into`, or keeps the first error.
fn merge(into: &mut Result<Verdicts, String>, more: Result<Verdicts, String>) {
    match (into.as_mut(), more) {
        (Ok(all), Ok(more)) => all.extend(more),
        (Ok(_), Err(e)) => *into = Err(e),
        (Err(_), _) => {}
    }
}

/// A case file's name.
fn name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What went wrong in a unit of Prill's report: errors and failed checks, briefly.
fn detail(unit: &Value) -> String {
    let mut found = BTreeSet::new();
    for sample in unit["samples"].as_array().into_iter().flatten() {
        if let Some(m) = sample["error"]["message"].as_str() {
            found.insert(format!("error: {}", tail(m, 300)));
        }
        for interaction in sample["interactions"].as_array().into_iter().flatten() {
            if let Some(m) = interaction["error"]["message"].as_str() {
                found.insert(format!("error: {}", tail(m, 300)));
            }
            for check in interaction["checks"].as_array().into_iter().flatten() {
                if check["evaluation"]["score"].as_f64() != Some(1.0)
                    && let Some(m) = check["message"].as_str()
                {
                    found.insert(tail(m, 300));
                }
            }
        }
    }
    found.into_iter().collect::<Vec<_>>().join("; ")
}
