//! promptfoo, pinned: installed with npm into a folder outside the repository (reused
//! when it already holds the pinned version), run with its telemetry, update check,
//! sharing, cache, result database and table off, its configuration folder and `HOME`
//! in the benchmark's temporary folder, and checked to have passed every test.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The promptfoo release compared against.
pub(crate) const VERSION: &str = "0.121.20";

/// Where it is installed when `--promptfoo-dir` is not given:
/// `$HOME/.cache/prill-bench/promptfoo`.
pub(crate) fn default_dir() -> PathBuf {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    home.join(".cache/prill-bench/promptfoo")
}

/// The `promptfoo` command in `dir`, installing the pinned release there first unless
/// it is there already.
pub(crate) fn install(dir: &Path) -> Result<PathBuf, String> {
    let binary = dir.join("node_modules/.bin/promptfoo");
    let manifest = dir.join("node_modules/promptfoo/package.json");
    if installed_version(&manifest).as_deref() == Some(VERSION) && binary.exists() {
        return Ok(binary);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    eprintln!("installing promptfoo {VERSION} into {}", dir.display());
    let status = Command::new("npm")
        .arg("install")
        .arg("--prefix")
        .arg(dir)
        .arg(format!("promptfoo@{VERSION}"))
        .args(["--no-audit", "--no-fund", "--save-exact"])
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if !status.success() {
        return Err(format!("npm install promptfoo@{VERSION} failed: {status}"));
    }
    match installed_version(&manifest) {
        Some(v) if v == VERSION && binary.exists() => Ok(binary),
        other => Err(format!(
            "npm installed promptfoo {other:?}, not {VERSION}, in {}",
            dir.display()
        )),
    }
}

/// The `version` of the package manifest at `path`.
fn installed_version(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest.get("version")?.as_str().map(str::to_owned)
}

/// The arguments of one evaluation of `config` at concurrency `jobs`: no cache, no
/// table, no progress bar, nothing written to its database, nothing shared.
pub(crate) fn args(config: &Path, jobs: usize) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["eval".into(), "-c".into(), config.into()];
    for word in [
        "--no-cache",
        "-j",
        &jobs.to_string(),
        "--no-table",
        "--no-write",
        "--no-progress-bar",
        "--no-share",
    ] {
        args.push(word.into());
    }
    args
}

/// What promptfoo reads besides the common variables (`PATH`, `HOME`, the API key and
/// base URL): everything that would reach the network or write outside `scratch` off,
/// and its per-run log files.
pub(crate) fn env(scratch: &Path) -> Vec<(String, OsString)> {
    let mut env: Vec<(String, OsString)> = [
        "PROMPTFOO_DISABLE_TELEMETRY",
        "PROMPTFOO_DISABLE_UPDATE",
        "PROMPTFOO_DISABLE_SHARING",
        "PROMPTFOO_DISABLE_SHARE_EMAIL_REQUEST",
        "PROMPTFOO_DISABLE_REMOTE_GENERATION",
        "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION",
        // No per-run log files: with them, 0.121.20 sometimes crashes at exit with
        // winston's "write after end" (winstonjs/winston#2219) after passing every test.
        "PROMPTFOO_DISABLE_DEBUG_LOG",
        "PROMPTFOO_DISABLE_ERROR_LOG",
    ]
    .into_iter()
    .map(|name| (name.to_owned(), OsString::from("1")))
    .collect();
    env.push((
        "PROMPTFOO_CONFIG_DIR".to_owned(),
        scratch.join("promptfoo-config").into(),
    ));
    env.push((
        "PROMPTFOO_CACHE_PATH".to_owned(),
        scratch.join("promptfoo-cache").into(),
    ));
    env.push(("FORCE_COLOR".to_owned(), "0".into()));
    env.push(("NO_COLOR".to_owned(), "1".into()));
    env
}

/// The variables that stop what honours them from reaching anything but loopback,
/// when no network namespace could be made.
pub(crate) fn proxy_env() -> Vec<(String, OsString)> {
    let closed = "http://127.0.0.1:9";
    let mut env = Vec::new();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
        env.push((name.to_owned(), closed.into()));
    }
    for name in ["NO_PROXY", "no_proxy"] {
        env.push((name.to_owned(), "127.0.0.1,localhost".into()));
    }
    env
}

/// The counts of promptfoo's summary on stdout: `(passed, failed, errors)`, from lines
/// such as `✓ 10,000 passed (100%)`, `0 failed (0%)` and `0 errors (0%)`.
pub(crate) fn summary(stdout: &str) -> Option<(usize, usize, usize)> {
    let count = |word: &str| {
        stdout.lines().rev().find_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| *w == word)?;
            words
                .get(at.checked_sub(1)?)?
                .replace(',', "")
                .parse::<usize>()
                .ok()
        })
    };
    Some((count("passed")?, count("failed")?, count("errors")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_read() {
        let out = "Running 2 test cases (up to 50 at a time)...\n✓ Eval complete\n\nResults:\n  ✓ 1,000 passed (100%)\n  0 failed (0%)\n  0 errors (0%)\nDuration: 9s (concurrency: 50)\n";
        assert_eq!(summary(out), Some((1000, 0, 0)));
        let bad = "Results:\n  ✓ 990 passed (99%)\n  10 failed (1%)\n  0 errors (0%)\n";
        assert_eq!(summary(bad), Some((990, 10, 0)));
        assert_eq!(summary("Error: cannot load config"), None);
    }

    #[test]
    fn the_evaluation_keeps_nothing_and_shows_no_table() {
        let args: Vec<String> = args(Path::new("c.yaml"), 200)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args.join(" "),
            "eval -c c.yaml --no-cache -j 200 --no-table --no-write --no-progress-bar --no-share"
        );
    }
}
