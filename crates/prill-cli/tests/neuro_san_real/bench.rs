//! The benchmark of neuro-san's `direct` connection (`cargo xtask bench
//! --neuro-san-direct`, which sets `PRILL_NEURO_SAN_BENCH=1`): Prill on warm workers,
//! Prill with a bridge process per conversation (`fresh_process = true`), and
//! neuro-san's own driver, one after another, over the same files against the same
//! fake model, with nothing else running:
//!
//! - **a dozen**: neuro-san's own `hello_world`, `math_guy` and `music_nerd` files
//!   (`fixtures/conformance/neuro-san/fixtures-2026-02`, their networks from the
//!   installed neuro-san) and nine single-turn files of `fixtures/neuro-san-real/cases`;
//! - **20/20**: neuro-san's three with `success_ratio = "20/20"`.
//!
//! The gist of `hello_world` is judged by neuro-san's `gist` network in the driver (its
//! only judge) and by Prill's judge (`openai:gpt-4o-mini`) in Prill: each as its users
//! run it, against the same fake model.
//!
//! Wall time, and CPU time of every process each side starts (a cgroup's `cpuacct`, so
//! that processes a side leaves behind are counted too). Each side's verdicts must agree
//! with the driver's, but for the lines of `deviations.tsv`. It fails when a target of
//! `docs/performance.md` is missed: Prill's wall time at most 0.6 of the driver's on
//! both sets; its CPU at most 1.3 times the driver's on the dozen and 1.1 times on
//! 20/20.
//!
//! A benchmark, never part of a test run: without the variable it is ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::Value;

use crate::server::{NeuroSanEnv, run, tail};
use crate::verdicts::{Verdict, read_table};
use crate::{STEP_LIMIT, brain, fixtures, name, prill_binary, prill_toml, python_prints, repo};

/// The variable that runs the benchmark.
pub(crate) const BENCH_ENV: &str = "PRILL_NEURO_SAN_BENCH";

/// neuro-san's own files in the dozen, under `fixtures/conformance/neuro-san/fixtures-2026-02`;
/// their networks, in the installed neuro-san's `registries`.
const NEURO_SAN_OWN: [(&str, &str); 3] = [
    ("hello_world/hello_world.hocon", "hello_world"),
    ("math_guy/basic_sly_data.hocon", "math_guy"),
    ("music_nerd/beatles_with_history.hocon", "music_nerd"),
];

/// The rest of the dozen: single-turn files of `fixtures/neuro-san-real/cases` whose
/// answers the fake model knows, with no judge.
const SINGLE_TURN: [&str; 9] = [
    "pass-text.hocon",
    "pass-structure.hocon",
    "pass-sly-data.hocon",
    "pass-less-greater.hocon",
    "pass-trajectory.hocon",
    "fail-text-value.hocon",
    "fail-text-keywords.hocon",
    "fail-structure.hocon",
    "fail-sly-data.hocon",
];

/// The networks of `fixtures/neuro-san-real/registries`.
const OUR_NETWORKS: [&str; 4] = ["trivia", "calculator", "relay", "judge"];

/// One side's run of one set.
#[derive(Debug, Clone)]
struct Measured {
    wall: Duration,
    cpu: Duration,
    verdicts: BTreeMap<String, Verdict>,
}

/// Runs the benchmark with `python` (neuro-san's venv) and prints its table.
pub(crate) fn bench(python: &Path) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let model = runtime.block_on(FakeOpenAi::start());
    model.respond_with(brain::responder());
    let fixtures = fixtures().canonicalize().map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let world = dir.path().join("world");
    bench_world(python, &fixtures, &world)?;
    let env = NeuroSanEnv {
        fixtures: world.clone(),
        model_url: model.base_url(),
    };
    let warm = dir.path().join("warm");
    let fresh = dir.path().join("fresh");
    for (folder, extra) in [(&warm, ""), (&fresh, "fresh_process = true\n")] {
        std::fs::create_dir_all(folder).map_err(|e| e.to_string())?;
        let toml = prill_toml(python, &world) + extra;
        std::fs::write(folder.join("prill.toml"), toml).map_err(|e| e.to_string())?;
    }
    let own_dir = repo().join("fixtures/conformance/neuro-san/fixtures-2026-02");
    let own: Vec<PathBuf> = NEURO_SAN_OWN.iter().map(|(f, _)| own_dir.join(f)).collect();
    let cases = fixtures.join("cases");
    let dozen: Vec<PathBuf> = own
        .iter()
        .cloned()
        .chain(SINGLE_TURN.iter().map(|f| cases.join(f)))
        .collect();
    let twenty_dir = dir.path().join("twenty");
    std::fs::create_dir_all(&twenty_dir).map_err(|e| e.to_string())?;
    let mut twenty = Vec::new();
    for file in &own {
        let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
        let path = twenty_dir.join(name(file));
        std::fs::write(&path, twenty_of(&text, &name(file))?).map_err(|e| e.to_string())?;
        twenty.push(path);
    }
    let deviations = read_table(&fixtures.join("deviations.tsv"))?;
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for (set, files) in [("a dozen files", &dozen), ("3 files at 20/20", &twenty)] {
        let driver = measure(driver(python, &env, files), dir.path(), "driver", |out| {
            driver_verdicts(out, files.len())
        })?;
        let mut sides = Vec::new();
        for (side, folder) in [
            ("Prill, warm workers", &warm),
            ("Prill, a process per conversation", &fresh),
        ] {
            let report = folder.join("report.json");
            let measured = measure(
                prill(folder, &env, &report, files),
                dir.path(),
                side,
                |out| {
                    prill_verdicts(&report).map_err(|e| {
                        format!("{e}\n{}", tail(&String::from_utf8_lossy(&out.stderr), 4000))
                    })
                },
            )?;
            for (file, verdict) in &measured.verdicts {
                let expected = driver.verdicts.get(file);
                let allowed = ["direct", "*"]
                    .iter()
                    .any(|c| deviations.contains_key(&(file.clone(), (*c).to_owned())));
                if expected != Some(verdict) && !allowed {
                    problems.push(format!(
                        "{set}, {side}: {file} is {verdict}, the driver says {}: {}",
                        expected.map_or("nothing".to_owned(), ToString::to_string),
                        unit_detail(&folder.join("report.json"), file)
                    ));
                }
            }
            sides.push((side, measured));
        }
        let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
        let (cpu_target, name) = if files.len() == dozen.len() {
            (1.3, "dozen")
        } else {
            (1.1, "20/20")
        };
        let warm_run = &sides[0].1;
        if ratio(warm_run.wall, driver.wall) > 0.6 {
            problems.push(format!(
                "{name}: warm wall time {:.1} s is {:.2} of the driver's {:.1} s (target 0.6)",
                warm_run.wall.as_secs_f64(),
                ratio(warm_run.wall, driver.wall),
                driver.wall.as_secs_f64()
            ));
        }
        if ratio(warm_run.cpu, driver.cpu) > cpu_target {
            problems.push(format!(
                "{name}: warm CPU {:.1} s is {:.2} times the driver's {:.1} s (target {cpu_target})",
                warm_run.cpu.as_secs_f64(),
                ratio(warm_run.cpu, driver.cpu),
                driver.cpu.as_secs_f64()
            ));
        }
        rows.push(format!(
            "| {set}, `direct`, 2 cores | {:.1} s / {:.1} s | {:.1} s / {:.1} s ({:.2} / {:.2} of the driver's) | {:.1} s / {:.1} s |",
            driver.wall.as_secs_f64(),
            driver.cpu.as_secs_f64(),
            warm_run.wall.as_secs_f64(),
            warm_run.cpu.as_secs_f64(),
            ratio(warm_run.wall, driver.wall),
            ratio(warm_run.cpu, driver.cpu),
            sides[1].1.wall.as_secs_f64(),
            sides[1].1.cpu.as_secs_f64(),
        ));
    }
    println!(
        "| set | neuro-san's driver (wall / CPU) | Prill, warm workers (wall / CPU) | Prill, a process per conversation (wall / CPU) |\n|---|---|---|---|"
    );
    for row in &rows {
        println!("{row}");
    }
    drop(model);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// `text` (a test file) with `success_ratio = "20/20"`: its own `success_ratio` line
/// replaced, else one added after the line that opens its object.
fn twenty_of(text: &str, file: &str) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let ratio = "    \"success_ratio\": \"20/20\",".to_owned();
    if let Some(line) = lines
        .iter_mut()
        .find(|l| l.trim_start().starts_with("\"success_ratio\""))
    {
        *line = ratio;
    } else {
        // The object's opening brace: the first line that is one (comments may hold
        // braces too).
        let at = lines
            .iter()
            .position(|l| l.trim() == "{")
            .ok_or_else(|| format!("{file}: no line that opens the object"))?;
        lines.insert(at + 1, ratio);
    }
    Ok(lines.join("\n") + "\n")
}

/// A folder laid out like `fixtures/neuro-san-real` whose manifest also serves neuro-san's
/// own `hello_world`, `math_guy` and `music_nerd` from the installed package (links,
/// nothing copied), and whose coded tools hold `math_guy`'s calculator.
fn bench_world(python: &Path, fixtures: &Path, world: &Path) -> Result<(), String> {
    let package = PathBuf::from(python_prints(
        python,
        "import neuro_san, os; print(os.path.dirname(neuro_san.__file__))",
    )?);
    let link = |from: &Path, to: &Path| {
        std::os::unix::fs::symlink(from, to)
            .map_err(|e| format!("{} -> {}: {e}", to.display(), from.display()))
    };
    let registries = world.join("registries");
    let tools = world.join("coded_tools");
    std::fs::create_dir_all(&registries).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&tools).map_err(|e| e.to_string())?;
    let mut manifest = String::from("{\n");
    for network in OUR_NETWORKS {
        let file = format!("{network}.hocon");
        link(
            &fixtures.join("registries").join(&file),
            &registries.join(&file),
        )?;
        manifest += &format!("    \"{file}\": true,\n");
    }
    for (_, network) in NEURO_SAN_OWN {
        let file = format!("{network}.hocon");
        link(
            &package.join("registries").join(&file),
            &registries.join(&file),
        )?;
        manifest += &format!("    \"{file}\": true,\n");
    }
    manifest += "}\n";
    std::fs::write(registries.join("manifest.hocon"), manifest).map_err(|e| e.to_string())?;
    link(
        &fixtures.join("coded_tools/calculator"),
        &tools.join("calculator"),
    )?;
    link(
        &package.join("coded_tools/math_guy"),
        &tools.join("math_guy"),
    )?;
    link(
        &fixtures.join("llm_info.hocon"),
        &world.join("llm_info.hocon"),
    )?;
    Ok(())
}

/// neuro-san's driver over `files` on `direct`.
fn driver(python: &Path, env: &NeuroSanEnv, files: &[PathBuf]) -> Command {
    let mut command = Command::new(python);
    command
        .arg(fixtures().join("run_driver.py"))
        .args(["--connection", "direct", "--port", "1"])
        .args(files)
        .envs(env.vars());
    command
}

/// `prill run` over `files` on `direct`, in `folder` (whose `prill.toml` sets up
/// neuro-san), its report to `report`.
fn prill(folder: &Path, env: &NeuroSanEnv, report: &Path, files: &[PathBuf]) -> Command {
    let mut command = Command::new(prill_binary());
    command
        .args([
            "run",
            "--connection",
            "direct",
            "--no-cache",
            "--quiet",
            "--judge",
            "openai:gpt-4o-mini",
            "--json",
        ])
        .arg(report)
        .args(files)
        .current_dir(folder)
        .envs(env.vars())
        .env("OPENAI_BASE_URL", &env.model_url)
        .env("NO_COLOR", "1")
        .env_remove("PRILL_SERVER");
    command
}

/// The driver's verdict of each file, from its output.
fn driver_verdicts(
    out: &std::process::Output,
    files: usize,
) -> Result<BTreeMap<String, Verdict>, String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut verdicts = BTreeMap::new();
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
        let file = name(Path::new(v["file"].as_str().unwrap_or_default()));
        let word = v["verdict"].as_str().unwrap_or_default();
        verdicts.insert(
            file,
            Verdict::parse(word).ok_or(format!("driver verdict `{word}`"))?,
        );
    }
    if verdicts.len() != files {
        return Err(format!(
            "the driver gave {} verdicts for {files} files:\n{}",
            verdicts.len(),
            tail(&String::from_utf8_lossy(&out.stderr), 4000)
        ));
    }
    Ok(verdicts)
}

/// Prill's verdict of each file, from its JSON report.
fn prill_verdicts(report: &Path) -> Result<BTreeMap<String, Verdict>, String> {
    let text = std::fs::read_to_string(report).map_err(|e| format!("{}: {e}", report.display()))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut verdicts = BTreeMap::new();
    for unit in json["units"].as_array().into_iter().flatten() {
        let file = name(Path::new(unit["unit"]["file"].as_str().unwrap_or_default()));
        let word = unit["verdict"].as_str().unwrap_or_default();
        verdicts.insert(
            file,
            Verdict::parse(word).ok_or(format!("Prill's verdict `{word}`"))?,
        );
    }
    Ok(verdicts)
}

/// What went wrong in `file`'s unit of the JSON report at `report`.
fn unit_detail(report: &Path, file: &str) -> String {
    let json: Value = std::fs::read_to_string(report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    json["units"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| name(Path::new(u["unit"]["file"].as_str().unwrap_or_default())) == file)
        .map(crate::detail)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Runs `command` in a cgroup of its own: its wall time, the CPU time of everything it
/// started (until the last of them has ended), and the verdicts `read` finds.
fn measure(
    command: Command,
    scratch: &Path,
    label: &str,
    read: impl FnOnce(&std::process::Output) -> Result<BTreeMap<String, Verdict>, String>,
) -> Result<Measured, String> {
    let group = Cgroup::new(scratch, label)?;
    let mut wrapped = Command::new("sh");
    wrapped
        .arg("-c")
        .arg(format!(
            "echo $$ > '{}' && exec \"$0\" \"$@\"",
            group.procs().display()
        ))
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    let started = Instant::now();
    let out = run(wrapped, STEP_LIMIT)?;
    let wall = started.elapsed();
    let cpu = group.finish()?;
    let verdicts = read(&out).map_err(|e| format!("{label}: {e}"))?;
    Ok(Measured {
        wall,
        cpu,
        verdicts,
    })
}

/// A cgroup (v1 `cpuacct`) that counts the CPU time of what runs in it.
struct Cgroup {
    path: PathBuf,
}

impl Cgroup {
    fn new(_scratch: &Path, label: &str) -> Result<Cgroup, String> {
        let slug: String = label.chars().filter(char::is_ascii_alphanumeric).collect();
        let path = PathBuf::from(format!(
            "/sys/fs/cgroup/cpuacct/prill-bench-{}-{slug}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).map_err(|e| {
            format!(
                "cannot make the cgroup {} ({e}): the benchmark counts CPU time with cgroup v1 cpuacct, as root",
                path.display()
            )
        })?;
        Ok(Cgroup { path })
    }

    fn procs(&self) -> PathBuf {
        self.path.join("cgroup.procs")
    }

    /// Waits until nothing runs in it (at most a minute), then its CPU time.
    fn finish(self) -> Result<Duration, String> {
        let until = Instant::now() + Duration::from_secs(60);
        while std::fs::read_to_string(self.procs()).is_ok_and(|p| !p.trim().is_empty())
            && Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        let usage =
            std::fs::read_to_string(self.path.join("cpuacct.usage")).map_err(|e| e.to_string())?;
        let nanos: u64 = usage.trim().parse().map_err(|e| format!("{e}: {usage}"))?;
        Ok(Duration::from_nanos(nanos))
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.path);
    }
}
