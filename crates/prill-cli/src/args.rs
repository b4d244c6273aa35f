//! The command line, as clap derive structs. No behaviour lives here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use prill_app::{CassetteFlags, Overrides};
use prill_run::Selection;
use prill_run::select::{NoTests, Partition, SelectError};
use prill_spec::model::data_driven::Connection;

/// Test AI agents from data-driven test files.
#[derive(Debug, Parser)]
#[command(name = "prill", version, propagate_version = true)]
pub struct Cli {
    /// When to colour diagnostics; `auto` colours only a terminal and honours `NO_COLOR`.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    pub color: Color,
    /// Log what Prill does (retries and their waits, cache and cassette decisions, programs started and ended) to stderr at this level and above [default: `PRILL_LOG`, else `RUST_LOG`, else warn]
    #[arg(long, value_enum, value_name = "LEVEL", global = true)]
    pub log_level: Option<LogLevel>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check test files and report every problem in them
    Validate(ValidateArgs),
    /// List the cases that test files hold
    List(ListArgs),
    /// Say what each case's gate means: how often it passes an agent at each success rate, the samples it takes, its error rates
    Explain(ExplainArgs),
    /// Print the JSON Schema of a test file dialect
    Schema(SchemaArgs),
    /// Rewrite a test file in another syntax (comments are kept in YAML and HOCON; JSON has none)
    Convert(ConvertArgs),
    /// List the agents a neuro-san server hosts
    Agents(AgentsArgs),
    /// Serve agents over neuro-san's protocol (for now only the built-in demo agents)
    Serve(ServeArgs),
    /// Run test files against agents and report how every case did
    Run(Box<RunArgs>),
    /// Take many samples of each case: pass rates, whether each ratio is sound, how it fails
    Assess(Box<AssessArgs>),
    /// Work with the gist judge
    Judge(JudgeArgs),
    /// Work with cassettes: which recordings still answer the cases as they are now
    Cassettes(CassettesArgs),
    /// Start a project: a commented prill.toml, example tests and a CI workflow
    Init(InitArgs),
    /// Run the tests, then rerun the files that change (all of them when prill.toml does)
    Watch(Box<WatchArgs>),
    /// Print a shell completion script to stdout
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout
    Man(ManArgs),
    /// Print the transcripts of a saved JSON report (`prill run --json`)
    Show(ShowArgs),
    /// List the runs kept in the history (.prill/runs), or one case's verdicts across them
    Runs(RunsArgs),
    /// Write reports from a stored run (`--from`), or merge the shards of a suite into one run (`merge`)
    Report(ReportArgs),
    /// Compare two runs: regressions, fixes, new and removed cases, pass rates, latency, tokens, cost, judge reasons
    Compare(CompareArgs),
    /// Browse the kept runs: each run's report, a case across runs, any two runs compared (a read-only server on 127.0.0.1)
    View(ViewArgs),
}

/// `prill view`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The port to serve on (0 picks a free one)
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Print the address only; do not open a browser
    #[arg(long)]
    pub no_open: bool,
    /// The project configuration, whose folder holds the history [default: ./prill.toml when it exists, else the working directory]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `prill report`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReportArgs {
    /// Merge shards instead
    #[command(subcommand)]
    pub command: Option<ReportCommand>,
    /// The stored run: a run kept in .prill/runs, a file of `prill run --jsonl`, or a JSON report; a run that did not finish is reported as cancelled
    #[arg(long, value_name = "FILE", required = true)]
    pub from: Option<PathBuf>,
    /// The reports to write
    #[command(flatten)]
    pub outputs: ReportOutputs,
}

/// What `prill report` does besides `--from`.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge the JSON Lines files of the shards of one suite (`prill run --shard i/n --jsonl FILE`) into one run, checking that they are of one suite and cover it
    Merge(MergeArgs),
}

/// `prill report merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' JSON Lines files (`--jsonl`, or runs kept in .prill/runs), each part once
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// Keep the merged run in the history (.prill/runs, or `[history] dir`), where `prill runs` and `prill compare` find it
    #[arg(long)]
    pub keep: bool,
    /// The configuration file whose history `--keep` adds to [default: the nearest prill.toml]
    #[arg(long, value_name = "FILE", requires = "keep")]
    pub config: Option<PathBuf>,
    /// The reports to write
    #[command(flatten)]
    pub outputs: ReportOutputs,
}

/// The reports `prill report` writes, as `prill run` writes them.
#[derive(Debug, Args)]
pub struct ReportOutputs {
    /// The report files
    #[command(flatten)]
    pub files: ReportFiles,
    /// Print only failures, errors and the summary on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

/// The report files of a run, the same flags on `prill run` and `prill report`.
#[derive(Debug, Clone, Default, Args)]
pub struct ReportFiles {
    /// Write a JSON report of the whole run to this file
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the run as JSON Lines to this file, its `run` line first, then one event per line as it happens
    #[arg(long, value_name = "PATH")]
    pub jsonl: Option<PathBuf>,
    /// Write a JUnit XML report to this file
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Append a Markdown summary to this file (e.g. $GITHUB_STEP_SUMMARY)
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report of the run to this file (open it in a browser)
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
}

impl ReportFiles {
    /// Every file asked for.
    pub fn paths(&self) -> Vec<&PathBuf> {
        [
            &self.json,
            &self.jsonl,
            &self.junit,
            &self.markdown,
            &self.html,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// `prill compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base run: a kept run's id (or the start of one) or a report file (history file, `--jsonl` stream, `--json` report) [default: the newest kept run other than HEAD]; with --base-branch, the only run given is HEAD
    pub base: Option<String>,
    /// The head run, likewise [default: the newest kept run]
    pub head: Option<String>,
    /// Compare against the newest kept run of this branch's tip commit, else of its merge base with HEAD
    #[arg(long, value_name = "BRANCH", conflicts_with = "head")]
    pub base_branch: Option<String>,
    /// Exit 1 when a case regressed
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Also write the comparison as the head run's HTML report, its changes first
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// How to print the comparison
    #[arg(long, value_enum, default_value_t = CompareFormat::Human)]
    pub format: CompareFormat,
    /// The project configuration, whose folder holds the history and whose `[compare]` sets the thresholds [default: ./prill.toml when it exists, else the working directory]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Draw more samples of the head for the sampled cases the comparison could not decide, in waves, until each is a regression or a fix, a drop of --top-up-drop would be seen, or N more samples were taken; every p-value is then spread over the looks (docs/statistics.md). Each wave is kept in the history as a `top-up` run of the head [default N: 40]
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "40", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub top_up: Option<u32>,
    /// The most samples of a case one top-up wave draws
    #[arg(long, value_name = "N", default_value_t = 20, requires = "top_up", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub top_up_wave: u32,
    /// A case stops drawing once its samples would show a drop of this much in pass rate (80% of the time): 0.2 is 20 points
    #[arg(long, value_name = "DROP", default_value_t = 0.2, requires = "top_up")]
    pub top_up_drop: f64,
    /// Draw the top-up's samples from the built-in demo agents
    #[arg(long, requires = "top_up")]
    pub demo: bool,
    /// Where the neuro-san server of the top-up's http, https and mcp cases is, and how to trust it
    #[command(flatten)]
    pub remote: ServerArgs,
    /// The most top-up samples in flight at once [default: `[concurrency] jobs` in prill.toml, else 32]
    #[arg(short = 'j', long, value_name = "N", requires = "top_up", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
}

/// How `prill compare` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// Text for people
    Human,
    /// Markdown for a pull request's comment: a headline, the regressions, the rest folded
    Markdown,
    /// One JSON document on stdout
    Json,
}

/// `prill runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Show this case's units across the kept runs: its id, the start of its id, or its name
    #[arg(long, value_name = "ID", conflicts_with = "flaky")]
    pub case: Option<String>,
    /// List the flaky cases: over each case's newest kept runs, the 95% interval of its pass rate excludes both 0 and 1
    #[arg(long)]
    pub flaky: bool,
    /// How many of each case's newest kept runs --flaky looks at
    #[arg(long, value_name = "N", default_value_t = prill_history::RECENT_RUNS as u32, requires = "flaky", value_parser = clap::value_parser!(u32).range(1..))]
    pub recent: u32,
    /// How to print them
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// The project configuration, whose folder holds the history [default: ./prill.toml when it exists, else the working directory]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `prill show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The JSON report written by `prill run --json`
    pub report: PathBuf,
    /// The case to show: its id, its name, or a part of either [default: every case that failed or errored]
    pub case: Option<String>,
}

/// `prill cassettes`.
#[derive(Debug, Args)]
pub struct CassettesArgs {
    /// What to do
    #[command(subcommand)]
    pub command: CassettesCommand,
}

/// The subcommands of `prill cassettes`.
#[derive(Debug, Subcommand)]
pub enum CassettesCommand {
    /// List the cases whose recordings are stale or missing, and what changed since they were recorded; exit 1 when any is
    Check(CassettesCheckArgs),
}

/// `prill cassettes check`.
#[derive(Debug, Args)]
pub struct CassettesCheckArgs {
    /// The cassette folder (as given to `prill run --record`)
    pub dir: PathBuf,
    /// The test files and directories whose cases the cassettes are for
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How to print the result
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// `prill judge`.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: JudgeCommand,
}

/// The subcommands of `prill judge`.
#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Run the judge over a labeled set: agreement, false-pass and false-fail rates
    Check(JudgeCheckArgs),
}

/// `prill judge check`.
#[derive(Debug, Args)]
pub struct JudgeCheckArgs {
    /// The labeled set: a YAML list of {sample, criteria, expected: pass|fail, kind} [default: the built-in set of 45 items]
    pub file: Option<PathBuf>,
    /// The rates the judge must meet, else exit 1
    #[command(flatten)]
    pub gates: JudgeGateArgs,
    /// The judge: `provider:model` or `neuro-san:<agent>` [default: `[judge] model` in prill.toml, else picked from the environment]
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// Neither read nor write the judge's verdict cache (.prill/cache/judge)
    #[arg(long)]
    pub no_cache: bool,
    /// How to print the result
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Keep the result as this judge's calibration on record (prill-judge-calibration.json beside prill.toml, to commit), which `[judge] min_kappa` holds runs to
    #[arg(long)]
    pub record: bool,
    /// The project configuration [default: ./prill.toml when it exists]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where the neuro-san server of a `neuro-san:<agent>` judge is, and how to trust it
    #[command(flatten)]
    pub remote: ServerArgs,
}

/// Where a neuro-san server is, and how far to trust its https certificate.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The neuro-san server [default: $PRILL_SERVER, else `server` in prill.toml, else http://localhost:8080]
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// A PEM file of certificate authorities to trust for https, besides the system's (a
    /// self-signed server certificate given here is trusted as the server's own too)
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Do not verify https certificates (prints a warning)
    #[arg(long)]
    pub insecure: bool,
}

/// What `run` and `assess` share: which files, which cases, and where the agents are.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Files and directories to run; directories are searched for test files
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Start the built-in demo agents and run against them (direct, http, https, mcp)
    #[arg(long)]
    pub demo: bool,
    /// Where the neuro-san server for http, https and mcp is, and how to trust it
    #[command(flatten)]
    pub remote: ServerArgs,
    /// The project configuration [default: ./prill.toml when it exists]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Run every case over these connections instead of its own (comma-separated)
    #[arg(long, value_enum, value_delimiter = ',', value_name = "CONNECTION")]
    pub connection: Vec<Connection>,
    /// Take this many samples of every case, keeping its pass rate: 7/10 becomes 14/20 [at most 100000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=prill_spec::model::data_driven::MAX_SAMPLES as i64))]
    pub samples: Option<u32>,
    /// Hold every case to a gate with stated error rates instead of its own: `good=0.95,bad=0.8,false_pass=0.05,false_fail=0.05,max_samples=100` (any of them, the rest at these defaults; alone, all defaults). Samples are drawn until the test decides; undecided after max_samples, a case is inconclusive (docs/statistics.md)
    #[arg(long, value_name = "PLAN", num_args = 0..=1, default_missing_value = "", value_parser = prill_spec::model::gate::parse_reliability, conflicts_with = "samples")]
    pub reliability: Option<prill_spec::model::gate::Reliability>,
    /// The most samples in flight at once [default: `[concurrency] jobs` in prill.toml, else 32]
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Run only cases whose name, id, file or tag contains this text or matches this glob (repeatable)
    #[arg(long, value_name = "PATTERN")]
    pub filter: Vec<String>,
    /// Run only cases with this tag (repeatable)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
    /// Run one bucket of the selected cases: `hash:i/n` (by a stable hash of the case id) or `count:i/n` (round-robin over the sorted ids, never empty while there are at least n cases)
    #[arg(long, value_name = "KIND:I/N", value_parser = Partition::parse)]
    pub partition: Option<Partition>,
    /// The same as `--partition hash:i/n`
    #[arg(long, value_name = "I/N", value_parser = Partition::shard, conflicts_with = "partition")]
    pub shard: Option<Partition>,
    /// What an empty run comes to [default: fail, except a partition left empty while other buckets have cases: pass with a note]
    #[arg(long, value_enum, value_name = "WHAT")]
    pub no_tests: Option<NoTestsArg>,
    /// Make every warning in the test files and prill.toml an error: nothing runs [default: `strict` in prill.toml, else off]
    #[arg(long)]
    pub strict: bool,
    /// The judge of gist checks: `provider:model` (e.g. openai:gpt-4o-mini) or `neuro-san:<agent>` [default: `[judge] model` in prill.toml, else picked from the environment]
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// Neither read nor write the caches: the judge's verdicts (.prill/cache/judge) and the model providers' answers at temperature 0 (.prill/cache/models)
    #[arg(long)]
    pub no_cache: bool,
    /// Run every Sentinel spec on this model instead of its own: `model` or `provider:model`; several (comma-separated) run each spec on each model, side by side
    #[arg(long, value_delimiter = ',', value_name = "MODEL")]
    pub model: Vec<String>,
}

/// `prill run`'s habits from other test runners: stop at the first failure, rerun what
/// failed last time.
#[derive(Debug, Args)]
pub struct HabitArgs {
    /// Start no new case after the first that fails or errors; cases in flight finish, the rest are reported skipped
    #[arg(short = 'x', long)]
    pub fail_fast: bool,
    /// Run only the cases (and connections, and models) that failed or errored in the last run (.prill/last-run.json)
    #[arg(long)]
    pub rerun_failed: bool,
}

/// `prill run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Files, cases and agents
    #[command(flatten)]
    pub target: TargetArgs,
    /// The report files
    #[command(flatten)]
    pub files: ReportFiles,
    /// What to print on stdout besides the human report on stderr: `github` prints an annotation per failing check, error and invalid file [default: github when GITHUB_ACTIONS=true, else human]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<RunFormat>,
    /// Print only failures, errors and the summary
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print passing cases, every sample with its messages, and the transcripts of failures
    #[arg(short, long)]
    pub verbose: bool,
    /// Fail fast, rerun failed
    #[command(flatten)]
    pub habits: HabitArgs,
    /// What an inconclusive case (a reliability gate that ran out of samples undecided) does to the exit code: `fail` exits 1 as a failure does; `pass` lets the run pass on it (it is still reported inconclusive) [default: fail]
    #[arg(long, value_enum, value_name = "AS", default_value_t = InconclusiveAs::Fail)]
    pub inconclusive: InconclusiveAs,
    /// Print what was sent and what came back, turn by turn, for the first failing sample of each case that failed or errored
    #[arg(long)]
    pub show_transcript: bool,
    /// Record or replay the exchanges with agents and models (docs/cassettes.md)
    #[command(flatten)]
    pub cassettes: CassetteArgs,
    /// Export the run as OpenTelemetry spans to this OTLP/HTTP endpoint (a base URL, to which v1/traces is added): run, case, sample and interaction spans with a gen_ai.evaluation.result event per check (docs/otel.md) [default: `[otel] endpoint` of prill.toml]
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// With the spans, export what each interaction sent and got back and each tool call's arguments and result, secrets blanked out (as `[otel] content = true`)
    #[arg(long)]
    pub otlp_content: bool,
    /// List the units, run nothing; run only listed units
    #[command(flatten)]
    pub units: UnitArgs,
}

/// `prill run`'s units for tools that drive it (the pytest plugin): list the units a run
/// would run, or run only some of them.
#[derive(Debug, Default, Args)]
pub struct UnitArgs {
    /// Print the units this run would run, one JSON object per line on stdout (the `unit` objects of `--jsonl`), and run nothing: no agent is reached, no report or history written
    #[arg(long)]
    pub list: bool,
    /// Run only the units of FILE: JSON Lines, each an object with a unit's `case_id` and `connection` (as `--list` prints them); the filters and tags apply on top
    #[arg(long, value_name = "FILE")]
    pub units: Option<PathBuf>,
}

/// `prill run`'s cassettes: record every exchange with agents and models, or answer
/// from recordings with no network (`docs/cassettes.md`). At most one mode.
#[derive(Debug, Default, Args)]
#[group(skip)]
pub struct CassetteArgs {
    /// Record every exchange with agents and models into cassettes in DIR (a folder that already holds cassettes is refused: see --re-record)
    #[arg(long, value_name = "DIR", group = "cassette-mode")]
    pub record: Option<PathBuf>,
    /// Answer every exchange from the cassettes in DIR, with no network; a request none recorded is an error
    #[arg(long, value_name = "DIR", groups = ["cassette-mode", "replaying"])]
    pub replay: Option<PathBuf>,
    /// Answer from the cassettes in DIR where they have the exchange, else go live and record it there
    #[arg(long, value_name = "DIR", groups = ["cassette-mode", "replaying"])]
    pub replay_or_record: Option<PathBuf>,
    /// Record every exchange into DIR, replacing the cassettes of the cases that run
    #[arg(long, value_name = "DIR", group = "cassette-mode")]
    pub re_record: Option<PathBuf>,
    /// How replayed answers are paced: each chunk at its recorded time, or all at once [default: recorded]
    #[arg(long, value_enum, value_name = "PACE", requires = "replaying")]
    pub replay_latency: Option<ReplayLatency>,
}

/// What an inconclusive verdict does to the exit code (`--inconclusive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InconclusiveAs {
    /// Exit 1, as for a failure
    Fail,
    /// Let the run pass on it; the report still says inconclusive
    Pass,
}

/// How replayed answers are paced (`--replay-latency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReplayLatency {
    /// Each chunk at its recorded time from the request: latency and time-to-first-token checks still mean something
    Recorded,
    /// Every chunk at once
    Zero,
}

impl CassetteArgs {
    /// `base` with the cassette mode these flags ask for.
    pub fn overrides(&self, base: Overrides) -> Overrides {
        use prill_connect::cassette::{Latency, Mode};
        let asked = [
            (Mode::Record, &self.record),
            (Mode::Replay, &self.replay),
            (Mode::ReplayOrRecord, &self.replay_or_record),
            (Mode::ReRecord, &self.re_record),
        ]
        .into_iter()
        .find_map(|(mode, dir)| Some((mode, dir.clone()?)));
        let latency = match self.replay_latency {
            Some(ReplayLatency::Zero) => Latency::Zero,
            Some(ReplayLatency::Recorded) | None => Latency::Recorded,
        };
        Overrides {
            cassettes: asked.map(|(mode, dir)| CassetteFlags { mode, dir, latency }),
            ..base
        }
    }
}

/// `prill assess`.
#[derive(Debug, Args)]
pub struct AssessArgs {
    /// Files, cases and agents; `--samples N` defaults to each case's ratio denominator
    #[command(flatten)]
    pub target: TargetArgs,
    /// Write the assessment as JSON to this file
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the assessment as Markdown to this file
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Write the assessment as a self-contained HTML page to this file
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// How to group failures: by deterministic signature, or also named and merged by an LLM (the judge's model)
    #[arg(long, value_enum, default_value_t = Classify::Signature)]
    pub classify: Classify,
}

/// How `assess` groups failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Classify {
    /// Deterministic signatures only
    Signature,
    /// Signatures, then named and merged by an LLM
    Llm,
}

/// `prill validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Files and directories to check; directories are searched for test files
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How to print the result [default: human when stderr is a terminal or `--color always`, else short; with annotations on stdout too when GITHUB_ACTIONS=true]
    #[arg(long, value_enum)]
    pub format: Option<ValidateFormat>,
    /// Make every warning an error [default: `strict` in prill.toml, else off]
    #[arg(long)]
    pub strict: bool,
    /// The project configuration, read for `strict` [default: ./prill.toml when it exists]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// What finding no test file comes to [default: fail]
    #[arg(long, value_enum, value_name = "WHAT")]
    pub no_tests: Option<NoTestsArg>,
}

/// How `prill validate` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ValidateFormat {
    /// Diagnostics with snippets, help and the values expected and found
    Human,
    /// One line per diagnostic: `file:line:col: error[code]: message`
    Short,
    /// One JSON document on stdout, with every diagnostic's range
    Json,
    /// GitHub Actions annotations on stdout (`::error file=...,line=...,col=...::message`), and the diagnostics on stderr as they show by default
    Github,
}

/// What `prill run` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    /// Nothing: the human report goes to stderr
    Human,
    /// GitHub Actions annotations (`::error file=...,line=...,col=...::message`)
    Github,
}

impl RunFormat {
    /// The format asked for, else `github` in GitHub Actions (`github_actions`, read
    /// from `GITHUB_ACTIONS=true` by the caller) and `human` elsewhere.
    pub fn resolve(asked: Option<RunFormat>, github_actions: bool) -> RunFormat {
        asked.unwrap_or(if github_actions {
            RunFormat::Github
        } else {
            RunFormat::Human
        })
    }
}

/// `prill list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Files and directories to read; directories are searched for test files
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How to print the cases
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// What finding no test case comes to [default: fail]
    #[arg(long, value_enum, value_name = "WHAT")]
    pub no_tests: Option<NoTestsArg>,
}

/// `prill explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Files and directories to read; directories are searched for test files
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How to print the figures
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// The success rate a good agent has: a success_ratio's error rates are stated at it
    #[arg(long, default_value_t = 0.95, value_name = "RATE")]
    pub good: f64,
    /// The success rate a bad agent has
    #[arg(long, default_value_t = 0.80, value_name = "RATE")]
    pub bad: f64,
    /// The error rates of the reliability gate set beside each success_ratio
    #[arg(long, default_value_t = 0.05, value_name = "RATE")]
    pub false_pass: f64,
    /// See --false-pass
    #[arg(long, default_value_t = 0.05, value_name = "RATE")]
    pub false_fail: f64,
}

/// What a run, a validation or a listing with nothing in it comes to (`--no-tests`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NoTestsArg {
    /// Exit 0, silently
    Pass,
    /// Exit 0 with a warning
    Warn,
    /// Exit 2 with an error
    Fail,
}

impl From<NoTestsArg> for NoTests {
    fn from(arg: NoTestsArg) -> NoTests {
        match arg {
            NoTestsArg::Pass => NoTests::Pass,
            NoTestsArg::Warn => NoTests::Warn,
            NoTestsArg::Fail => NoTests::Fail,
        }
    }
}

/// `prill schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The dialect whose schema to print
    #[arg(value_enum)]
    pub dialect: SchemaDialect,
}

/// `prill convert`: a test file in another syntax. Its comments are written back in
/// YAML and HOCON output (JSON holds none).
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The test file to convert
    pub file: PathBuf,
    /// The syntax to write
    #[arg(long, value_enum)]
    pub to: TargetSyntax,
    /// Write values that HOCON substitutions read from the environment (they may be secrets)
    #[arg(long)]
    pub allow_env: bool,
}

/// `prill serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve the built-in demo agents
    #[arg(long)]
    pub demo: bool,
    /// Serve the neuro-san agents recorded in the cassettes of this folder (`prill run --record DIR`)
    #[arg(long, value_name = "DIR", conflicts_with = "demo")]
    pub replay: Option<std::path::PathBuf>,
    /// With --replay: stream each recorded chunk at its recorded time, or all at once
    #[arg(long, value_name = "PACE", value_parser = ["recorded", "zero"], default_value = "recorded", requires = "replay")]
    pub replay_latency: String,
    /// The port for http, https and mcp, all on one port (0 picks a free one)
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The address to listen on
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
}

/// `prill agents`.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// Where the server is, and how to trust it
    #[command(flatten)]
    pub remote: ServerArgs,
    /// How to print the agents
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text for people
    Human,
    /// One JSON document on stdout
    Json,
}

/// When to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// Colour when stderr is a terminal and `NO_COLOR` is not set
    Auto,
    /// Always colour
    Always,
    /// Never colour
    Never,
}

/// How much `--log-level` logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    /// Nothing
    Off,
    /// Errors only
    Error,
    /// Errors and warnings
    Warn,
    /// And what Prill decided along the way
    Info,
    /// And every retry, cache and cassette decision, program started and ended
    Debug,
    /// And everything the libraries underneath say
    Trace,
}

impl LogLevel {
    /// The filter directive for the level.
    pub fn directive(self) -> &'static str {
        match self {
            LogLevel::Off => "off",
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// A dialect that has a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaDialect {
    /// A neuro-san data-driven test case
    DataDriven,
    /// A Sentinel TestSpec
    SentinelSpec,
    /// A Sentinel TestSuite
    SentinelSuite,
    /// The project configuration, `prill.toml`
    Config,
}

/// A syntax to convert to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TargetSyntax {
    /// JSON
    Json,
    /// YAML
    Yaml,
    /// HOCON
    Hocon,
}

impl ServerArgs {
    /// The overrides these flags set.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            server: self.server.clone(),
            ca_cert: self.ca_cert.clone(),
            insecure: self.insecure,
            ..Overrides::default()
        }
    }
}

impl HabitArgs {
    /// `base` with these flags set.
    pub fn overrides(&self, base: Overrides) -> Overrides {
        Overrides {
            fail_fast: self.fail_fast,
            rerun_failed: self.rerun_failed,
            ..base
        }
    }
}

impl TargetArgs {
    /// The overrides these flags set over `prill.toml` and the environment.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            judge: self.judge.clone(),
            no_cache: self.no_cache,
            jobs: self.jobs.map(|n| n as usize),
            samples: self.samples,
            reliability: self.reliability,
            connections: self.connection.clone(),
            strict: self.strict,
            demo: self.demo,
            models: self.model.clone(),
            ..self.remote.overrides()
        }
    }

    /// The cases these flags select.
    pub fn selection(&self) -> Result<Selection, SelectError> {
        let mut selection = Selection::all();
        for f in &self.filter {
            selection = selection.filter(f)?;
        }
        for t in &self.tag {
            selection = selection.tag(t);
        }
        if let Some(partition) = self.partition.or(self.shard) {
            selection = selection.partition(partition);
        }
        Ok(selection)
    }
}

// The commands of `init`, `watch`, `completions`, `man`, and the gates of `judge check`.

/// The gates of `prill judge check`: each a rate from 0 to 1.
#[derive(Debug, Args)]
pub struct JudgeGateArgs {
    /// Exit 1 when the judge agrees with fewer of the labels than this (0.9 is 90%)
    #[arg(long, value_name = "RATE", value_parser = prill_judge::gates::parse_rate)]
    pub min_agreement: Option<f64>,
    /// Exit 1 when the judge passes more of the items labeled fail than this
    #[arg(long, value_name = "RATE", value_parser = prill_judge::gates::parse_rate)]
    pub max_false_pass: Option<f64>,
    /// Exit 1 when the judge fails more of the items labeled pass than this
    #[arg(long, value_name = "RATE", value_parser = prill_judge::gates::parse_rate)]
    pub max_false_fail: Option<f64>,
}

impl JudgeGateArgs {
    /// The gates these flags set.
    pub fn gates(&self) -> prill_judge::Gates {
        prill_judge::Gates {
            min_agreement: self.min_agreement,
            max_false_pass: self.max_false_pass,
            max_false_fail: self.max_false_fail,
        }
    }
}

/// `prill init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project folder (created when missing)
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Overwrite files that exist
    #[arg(long)]
    pub force: bool,
}

/// `prill watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The flags of `prill run`; the paths given are the ones watched
    #[command(flatten)]
    pub run: RunArgs,
}

/// `prill completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `prill man`.
#[derive(Debug, Args)]
pub struct ManArgs {}
