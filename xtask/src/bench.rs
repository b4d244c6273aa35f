//! `cargo xtask bench`: Prill side by side with promptfoo on the same generated suites,
//! against the same fake OpenAI-compatible server (issue 21; `docs/performance.md`).
//!
//! It builds `prill` and `fake-openai` in release, writes a Sentinel suite and a
//! promptfoo config of N tests each (every test one model call and three checks),
//! starts `fake-openai --latency-ms 20` (in a network namespace of its own where the
//! machine allows: [`server::Sandbox`]), and measures each tool as a whole process
//! ([`mod@measure`]): `prill run SUITE -j C` `--runs` times per workload, `prill list SUITE`
//! per size, and with `--with-promptfoo` the pinned promptfoo ([`promptfoo`]). Every
//! run must exit 0 and pass all N tests, or the benchmark fails. It prints a Markdown
//! report ([`mod@report`]), with `--write-docs` puts it in `docs/performance.md`, and exits
//! non-zero when Prill misses one of its [`targets::TARGETS`]. `--neuro-san-direct` and
//! `--conversations` ([`conversations`]: record and replay of 100 simulated-user
//! conversations) measure one thing of their own instead.

mod conversations;
pub(crate) mod long;
mod measure;
mod neuro_san;
mod promptfoo;
mod report;
mod server;
mod stats;
mod suites;
mod targets;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use self::measure::{Invocation, Sample, measure};
use self::report::{Results, Row, Tool};
use self::server::{FakeServer, Sandbox};
use self::stats::Summary;
use self::targets::{Subject, TARGETS, thousands};

/// What `cargo xtask bench` is asked.
#[derive(Debug, clap::Args)]
pub(crate) struct Options {
    /// Numbers of tests (100000 runs at -j 500 only)
    #[arg(long, value_delimiter = ',', default_values_t = [1000, 10000])]
    sizes: Vec<usize>,
    /// Concurrency levels of every size below 100,000
    #[arg(long, value_delimiter = ',', default_values_t = [50, 200])]
    concurrency: Vec<usize>,
    /// Also 100,000 tests at -j 500
    #[arg(long)]
    large: bool,
    /// Also 20 tests whose answers are 20 MiB each, at -j 1 and -j 20, with the
    /// history, --json and --html: peak memory against the answers' size
    #[arg(long)]
    long_answers: bool,
    /// Only neuro-san's `direct` connection: Prill's warm workers against a process per
    /// conversation and neuro-san's own driver, on the real neuro-san of the pinned venv
    #[arg(long)]
    neuro_san_direct: bool,
    /// Only the 100 recorded conversations: a suite with simulated customers, the retail
    /// tool program and end-state checks, recorded live against `fake-openai --shop`,
    /// then replayed with no server and no tool program (a replay must take under 10%)
    #[arg(long)]
    conversations: bool,
    /// Runs of each Prill workload (the median is reported)
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..))]
    runs: u16,
    /// Run the pinned promptfoo on the same workloads (installed with npm on first use)
    #[arg(long)]
    with_promptfoo: bool,
    /// Runs of each promptfoo workload [default: --runs]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    promptfoo_runs: Option<u16>,
    /// Where promptfoo is installed [default: $HOME/.cache/prill-bench/promptfoo]
    #[arg(long)]
    promptfoo_dir: Option<PathBuf>,
    /// Put the report between the bench markers of docs/performance.md
    #[arg(long)]
    write_docs: bool,
    /// Do not build: use the `prill` and `fake-openai` already in the target folder
    #[arg(long)]
    no_build: bool,
}

/// How long the fake server takes to answer, in milliseconds.
const LATENCY_MS: u64 = 20;

/// The large workload: 100,000 tests, at this concurrency only.
const LARGE: (usize, usize) = (100_000, 500);

/// The page the report goes in with `--write-docs`.
const PERFORMANCE_DOC: &str = "docs/performance.md";

/// The (tests, concurrency) pairs to run: every size at every concurrency, except
/// 100,000 tests at -j 500 only; `large` adds that one.
pub(crate) fn workloads(
    sizes: &[usize],
    concurrency: &[usize],
    large: bool,
) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for &tests in sizes {
        if tests >= LARGE.0 {
            pairs.push((tests, LARGE.1));
        } else {
            pairs.extend(concurrency.iter().map(|&jobs| (tests, jobs)));
        }
    }
    if large {
        pairs.push(LARGE);
    }
    let mut seen = std::collections::HashSet::new();
    pairs.retain(|pair| seen.insert(*pair));
    pairs
}

/// Runs the benchmark: builds, measures, reports; an error when a run failed or a
/// target was missed (after the report is printed).
pub(crate) fn run(options: &Options, repo: &Path) -> Result<(), String> {
    let pairs = workloads(&options.sizes, &options.concurrency, options.large);
    if pairs.is_empty() || pairs.iter().any(|&(tests, jobs)| tests == 0 || jobs == 0) {
        return Err("nothing to run: --sizes and --concurrency need positive numbers".to_owned());
    }
    let scratch = Scratch::new()?;
    // Copies, so that another build into the same target folder cannot swap them mid-run.
    let binaries = build(repo, !options.no_build)?.copy_to(&scratch.path.join("bin"))?;
    if options.neuro_san_direct {
        return neuro_san::run(repo, &binaries.prill);
    }
    if options.conversations {
        return conversations::run(
            repo,
            &binaries.prill,
            &binaries.fake_openai,
            &scratch.path,
            usize::from(options.runs),
        );
    }
    let promptfoo = if options.with_promptfoo {
        let dir = options.promptfoo_dir.clone();
        Some(promptfoo::install(
            &dir.unwrap_or_else(promptfoo::default_dir),
        )?)
    } else {
        None
    };
    let sandbox = Sandbox::detect();
    let server = FakeServer::start(&binaries.fake_openai, LATENCY_MS, None, sandbox)?;
    eprintln!("fake server at {} ({sandbox:?})", server.url);
    let long_server = if options.long_answers {
        let bytes = Some(long::ANSWER_BYTES);
        Some(FakeServer::start(
            &binaries.fake_openai,
            LATENCY_MS,
            bytes,
            sandbox,
        )?)
    } else {
        None
    };
    let bench = Bench {
        prill: binaries.prill,
        promptfoo,
        server: &server,
        dir: scratch.path.clone(),
        sandbox,
        runs: usize::from(options.runs),
        promptfoo_runs: usize::from(options.promptfoo_runs.unwrap_or(options.runs)),
    };
    let mut results = bench.measure_all(&pairs)?;
    if let Some(long_server) = &long_server {
        let long_bench = Bench {
            prill: bench.prill.clone(),
            promptfoo: None,
            server: long_server,
            dir: bench.dir.clone(),
            sandbox,
            runs: bench.runs,
            promptfoo_runs: 0,
        };
        let suite = long_bench.write("prill-long.yaml", &long::suite())?;
        let direct = long_bench.direct_project()?;
        for source in [long::Source::Provider, long::Source::Direct] {
            for jobs in long::JOBS {
                let what = format!("Prill, long answers ({source}), -j {jobs}");
                let samples = long_bench.repeat(bench.runs, &what, || match source {
                    long::Source::Provider => long_bench.prill_run_long(&suite, None, jobs),
                    long::Source::Direct => long_bench.prill_run_long(&direct, Some(&direct), jobs),
                })?;
                results.long.push((source, jobs, summarize(&samples)?));
            }
        }
    }
    report(&bench, &results, repo, options.write_docs)
}

/// Checks the targets, prints the report, writes it into the docs when asked, and
/// fails naming every missed target.
fn report(
    bench: &Bench<'_>,
    results: &Results,
    repo: &Path,
    write_docs: bool,
) -> Result<(), String> {
    let outcomes = targets::check(&TARGETS, |subject| match subject {
        Subject::Run { tests, jobs } => results.find(tests, jobs, Tool::Prill),
        Subject::List { tests } => results.lists.iter().find(|l| l.0 == tests).map(|l| l.1),
        Subject::LongAnswers { source, jobs } => results
            .long
            .iter()
            .find(|l| (l.0, l.1) == (source, jobs))
            .map(|l| l.2),
    });
    let text = report::render(results, &outcomes, LATENCY_MS, &bench.preamble(repo));
    println!("{text}");
    if write_docs {
        let path = repo.join(PERFORMANCE_DOC);
        let doc = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc =
            report::replace_section(&doc, &text).map_err(|e| format!("{}: {e}", path.display()))?;
        std::fs::write(&path, doc).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("updated {}", path.display());
    }
    let missed: Vec<String> = outcomes
        .iter()
        .filter(|o| o.met() == Some(false))
        .map(|o| format!("  missed: {}", o.describe()))
        .collect();
    if missed.is_empty() {
        eprintln!("every target that ran was met");
        Ok(())
    } else {
        Err(format!(
            "Prill missed {} target(s):\n{}",
            missed.len(),
            missed.join("\n")
        ))
    }
}

/// The release binaries the benchmark runs.
struct Binaries {
    prill: PathBuf,
    fake_openai: PathBuf,
}

impl Binaries {
    /// The same binaries copied into `dir`.
    fn copy_to(&self, dir: &Path) -> Result<Binaries, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let copy = |from: &Path, name: &str| {
            let to = dir.join(name);
            std::fs::copy(from, &to)
                .map(|_| to)
                .map_err(|e| format!("cannot copy {}: {e}", from.display()))
        };
        Ok(Binaries {
            prill: copy(&self.prill, "prill")?,
            fake_openai: copy(&self.fake_openai, "fake-openai")?,
        })
    }
}

/// Builds `prill` and `fake-openai` with the `dist` profile into the caller's target folder (unless
/// not `wanted`) and finds them there.
fn build(repo: &Path, wanted: bool) -> Result<Binaries, String> {
    if wanted {
        cargo_build(repo)?;
    }
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => std::env::current_dir()
            .map_err(|e| format!("no working directory: {e}"))?
            .join(dir),
        _ => repo.join("target"),
    };
    let dist = target.join("dist");
    let binaries = Binaries {
        prill: dist.join("prill"),
        fake_openai: dist.join("fake-openai"),
    };
    for binary in [&binaries.prill, &binaries.fake_openai] {
        if !binary.is_file() {
            return Err(format!("{} is missing", binary.display()));
        }
    }
    Ok(binaries)
}

/// `cargo build --profile dist` of the two binaries: the profile of the shipped binaries.
fn cargo_build(repo: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("building prill and fake-openai (profile dist)");
    let status = Command::new(cargo)
        .arg("build")
        .args(["--profile", "dist"])
        .arg("--manifest-path")
        .arg(repo.join("Cargo.toml"))
        .args(["-p", "prill-cli", "-p", "prill-testkit"])
        .args(["--bin", "prill", "--bin", "fake-openai"])
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build --profile dist failed: {status}"));
    }
    Ok(())
}

/// A temporary folder, removed when dropped.
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let path = std::env::temp_dir().join(format!("prill-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(path.join("home"))
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(Scratch { path })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// What every measured run shares.
struct Bench<'a> {
    prill: PathBuf,
    promptfoo: Option<PathBuf>,
    server: &'a FakeServer,
    /// The temporary folder: suites, `.prill/`, promptfoo's config folder, `HOME`.
    dir: PathBuf,
    sandbox: Sandbox,
    runs: usize,
    promptfoo_runs: usize,
}

/// The words of a measured `prill run SUITE -j JOBS`: quiet, without the model cache
/// or colour.
fn run_args(suite: &Path, jobs: usize) -> Vec<OsString> {
    vec![
        "run".into(),
        suite.into(),
        "-j".into(),
        jobs.to_string().into(),
        "--quiet".into(),
        "--no-cache".into(),
        "--color".into(),
        "never".into(),
    ]
}

impl Bench<'_> {
    /// Measures every workload of `pairs`, size by size, and `prill list` of each size:
    /// all of Prill's runs first, then promptfoo's, so that promptfoo's long CPU-bound
    /// runs never come just before a Prill measurement (on a shared virtual machine, a
    /// minute of full load slows what follows it).
    fn measure_all(&self, pairs: &[(usize, usize)]) -> Result<Results, String> {
        let mut results = Results::default();
        self.write("prill.toml", &suites::prill_config())?;
        let mut sizes: Vec<usize> = pairs.iter().map(|p| p.0).collect();
        let mut seen = std::collections::HashSet::new();
        sizes.retain(|tests| seen.insert(*tests));
        let row =
            |tests, jobs, tool, runs, label: &str, once: &dyn Fn() -> Result<Sample, String>| {
                let what = format!("{label}, {} tests, -j {jobs}", thousands(tests));
                let samples = self.repeat(runs, &what, once)?;
                Ok::<Row, String>(Row {
                    tests,
                    jobs,
                    tool,
                    summary: summarize(&samples)?,
                })
            };
        for &tests in &sizes {
            let suite = self.write(&format!("prill-{tests}.yaml"), &suites::prill_suite(tests))?;
            self.validate(&suite)?;
            let samples = self.repeat(
                self.runs,
                &format!("prill list, {} tests", thousands(tests)),
                || self.prill_list(&suite, tests),
            )?;
            results.lists.push((tests, summarize(&samples)?));
            for &(_, jobs) in pairs.iter().filter(|p| p.0 == tests) {
                results
                    .rows
                    .push(row(tests, jobs, Tool::Prill, self.runs, "Prill", &|| {
                        self.prill_run(&suite, tests, jobs)
                    })?);
            }
        }
        if let Some(promptfoo) = &self.promptfoo {
            // Not on the large workload: promptfoo would take minutes and gigabytes
            // there, and the side-by-side table is of 1,000 and 10,000 tests.
            for &(tests, jobs) in pairs.iter().filter(|p| p.0 < LARGE.0) {
                let config_text = suites::promptfoo_config(tests, &self.server.url);
                let config = self.write(&format!("promptfoo-{tests}.yaml"), &config_text)?;
                let promptfoo_row = row(
                    tests,
                    jobs,
                    Tool::Promptfoo,
                    self.promptfoo_runs,
                    "promptfoo",
                    &|| self.promptfoo_eval(promptfoo, &config, tests, jobs),
                )?;
                // Each promptfoo row goes right after Prill's on the same workload.
                let at = results
                    .rows
                    .iter()
                    .position(|r| (r.tests, r.jobs) == (tests, jobs))
                    .map_or(results.rows.len(), |i| i + 1);
                results.rows.insert(at, promptfoo_row);
            }
        }
        Ok(results)
    }

    /// Runs `once` `times` times, saying how each went on stderr.
    fn repeat(
        &self,
        times: usize,
        what: &str,
        once: impl Fn() -> Result<Sample, String>,
    ) -> Result<Vec<Sample>, String> {
        (1..=times)
            .map(|i| {
                let sample = once()?;
                eprintln!(
                    "{what}, run {i}/{times}: {:.2} s wall, {:.2} s CPU, {:.1} MB",
                    sample.wall,
                    sample.cpu,
                    sample.rss_mb()
                );
                Ok(sample)
            })
            .collect()
    }

    /// Writes `text` to `name` in the temporary folder.
    fn write(&self, name: &str, text: &str) -> Result<PathBuf, String> {
        let path = self.dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// The environment of every measured command: nothing of the caller's but `PATH`.
    fn env(&self) -> Vec<(String, OsString)> {
        let mut env = vec![
            (
                "PATH".to_owned(),
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            ),
            ("HOME".to_owned(), self.dir.join("home").into()),
            ("LANG".to_owned(), "C.UTF-8".into()),
            ("OPENAI_BASE_URL".to_owned(), self.server.url.clone().into()),
            ("OPENAI_API_KEY".to_owned(), "sk-bench".into()),
        ];
        if self.sandbox == Sandbox::Proxy {
            env.extend(promptfoo::proxy_env());
        }
        env
    }

    /// A command in the temporary folder, in the server's network namespace.
    fn invocation(&self, program: &Path, args: Vec<OsString>, capture_stdout: bool) -> Invocation {
        Invocation {
            prefix: self.server.prefix(),
            program: program.to_owned(),
            args,
            env: self.env(),
            cwd: self.dir.clone(),
            capture_stdout,
        }
    }

    fn time_file(&self) -> PathBuf {
        self.dir.join("time.txt")
    }

    /// `prill validate SUITE`, which must pass.
    fn validate(&self, suite: &Path) -> Result<(), String> {
        let args = vec![
            "validate".into(),
            "--color".into(),
            "never".into(),
            suite.into(),
        ];
        let finished = measure(&self.invocation(&self.prill, args, true), &self.time_file())?;
        finished.require_success(&format!("prill validate {}", suite.display()))
    }

    /// One `prill list SUITE`, which must list `tests` cases.
    fn prill_list(&self, suite: &Path, tests: usize) -> Result<Sample, String> {
        let args = vec![
            "list".into(),
            "--color".into(),
            "never".into(),
            suite.into(),
        ];
        let finished = measure(&self.invocation(&self.prill, args, true), &self.time_file())?;
        finished.require_success("prill list")?;
        let listed = finished
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count();
        if listed != tests {
            return Err(format!("prill list listed {listed} cases, not {tests}"));
        }
        Ok(finished.sample)
    }

    /// One `prill run SUITE -j JOBS`, which must pass all `tests` tests.
    fn prill_run(&self, suite: &Path, tests: usize, jobs: usize) -> Result<Sample, String> {
        let args = run_args(suite, jobs);
        let finished = measure(
            &self.invocation(&self.prill, args, false),
            &self.time_file(),
        )?;
        finished.require_success("prill run")?;
        match prill_summary(&finished.stderr) {
            Some(counts) if counts == [tests, 0, 0, 0] => Ok(finished.sample),
            counts => Err(format!(
                "prill run did not pass all {tests} tests: {counts:?} (passed, failed, errored, skipped)\n{}",
                measure::tail(&finished.stderr, 2000)
            )),
        }
    }

    /// One `promptfoo eval -c CONFIG -j JOBS`, which must pass all `tests` tests.
    fn promptfoo_eval(
        &self,
        binary: &Path,
        config: &Path,
        tests: usize,
        jobs: usize,
    ) -> Result<Sample, String> {
        let mut invocation = self.invocation(binary, promptfoo::args(config, jobs), true);
        invocation.env.extend(promptfoo::env(&self.dir));
        let finished = measure(&invocation, &self.time_file())?;
        finished.require_success("promptfoo eval")?;
        match promptfoo::summary(&finished.stdout) {
            Some((passed, 0, 0)) if passed == tests => Ok(finished.sample),
            counts => Err(format!(
                "promptfoo did not pass all {tests} tests: {counts:?} (passed, failed, errors)\n{}\n{}",
                measure::tail(&finished.stdout, 2000),
                measure::tail(&finished.stderr, 2000)
            )),
        }
    }
}

/// The machine, the date, the commit and the set-up, for the report.
impl Bench<'_> {
    fn preamble(&self, repo: &Path) -> String {
        let cpus = std::thread::available_parallelism().map_or(0, usize::from);
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let model = report::cpu_model(&cpuinfo).unwrap_or("unknown CPU");
        let memory =
            report::memory_gib(&meminfo).map_or("unknown".to_owned(), |g| format!("{g:.1} GiB"));
        let date = output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_default();
        let repo_arg = repo.to_string_lossy();
        let commit = output("git", &["-C", &repo_arg, "rev-parse", "--short", "HEAD"])
            .unwrap_or_else(|| "unknown".to_owned());
        let dirty = output(
            "git",
            &[
                "--no-optional-locks",
                "-C",
                &repo_arg,
                "status",
                "--porcelain",
                "--untracked-files=no",
            ],
        )
        .is_some_and(|s| !s.is_empty());
        let dirty = if dirty {
            " with uncommitted changes"
        } else {
            ""
        };
        let promptfoo = match &self.promptfoo {
            Some(_) => format!(
                "promptfoo {} on Node {} ran {} per workload, after all of Prill's runs",
                promptfoo::VERSION,
                output("node", &["--version"]).unwrap_or_else(|| "?".to_owned()),
                times(self.promptfoo_runs)
            ),
            None => "promptfoo did not run (no `--with-promptfoo`)".to_owned(),
        };
        format!(
            "Measured by `cargo xtask bench` on {date}, Prill at commit `{commit}`{dirty}: {cpus} CPUs ({model}), \
             {memory} of memory. The fake server answers every call after {LATENCY_MS} ms. Prill ran {} \
             per workload; {promptfoo}. Wall time is the median of the runs (min–max); CPU (user + system) \
             and peak RSS are medians, of the whole process with what it waited for. The sandbox: {}.\n",
            times(self.runs),
            self.sandbox.describe()
        )
    }
}

/// `once`, `twice`, `3 times`.
fn times(n: usize) -> String {
    match n {
        1 => "once".to_owned(),
        2 => "twice".to_owned(),
        _ => format!("{n} times"),
    }
}

/// The trimmed stdout of `program args`, when it exits 0.
fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The summary of samples that `repeat` made (never empty: `--runs` is at least 1).
fn summarize(samples: &[Sample]) -> Result<Summary, String> {
    Summary::of(samples).ok_or_else(|| "no runs".to_owned())
}

/// The counts of `prill run`'s summary line on stderr, `N passed, N failed, N errored,
/// N skipped in 1.2s`: `[passed, failed, errored, skipped]`.
pub(crate) fn prill_summary(stderr: &str) -> Option<[usize; 4]> {
    let line = stderr.lines().rev().find(|l| l.contains(" passed, "))?;
    let mut counts = [0; 4];
    for (slot, word) in counts
        .iter_mut()
        .zip(["passed", "failed", "errored", "skipped"])
    {
        let words: Vec<&str> = line.split([' ', ',']).filter(|w| !w.is_empty()).collect();
        let at = words.iter().position(|w| *w == word)?;
        *slot = words.get(at.checked_sub(1)?)?.parse().ok()?;
    }
    Some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_pair_sizes_with_concurrency() {
        let default = workloads(&[1000, 10_000], &[50, 200], false);
        assert_eq!(
            default,
            [(1000, 50), (1000, 200), (10_000, 50), (10_000, 200)]
        );
        let large = workloads(&[1000, 10_000], &[50, 200], true);
        assert_eq!(large.last(), Some(&(100_000, 500)));
        assert_eq!(large.len(), 5);
        assert_eq!(workloads(&[100_000], &[50, 200], true), [(100_000, 500)]);
    }

    #[test]
    fn prill_summaries_are_read() {
        let stderr = "warning: x\n10000 passed, 0 failed, 0 errored, 0 skipped in 1.21s\n";
        assert_eq!(prill_summary(stderr), Some([10_000, 0, 0, 0]));
        let failed = "9998 passed, 1 failed, 1 errored, 0 skipped in 1.21s";
        assert_eq!(prill_summary(failed), Some([9998, 1, 1, 0]));
        assert_eq!(prill_summary("error: no test files"), None);
    }
}
