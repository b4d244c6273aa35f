//! `cargo xtask bench --neuro-san-direct`: neuro-san's `direct` connection on Prill's
//! warm workers, on a bridge process per conversation, and on neuro-san's own driver,
//! against the real neuro-san of the pinned venv (`.ci/neuro-san-venv` makes it) and a
//! fake model. The measuring is the real-neuro-san test binary's benchmark mode
//! (`crates/prill-cli/tests/neuro_san_real/bench.rs`), run here with Prill's release
//! build; it prints the table of `docs/performance.md` and fails when a target is missed.

use std::path::Path;
use std::process::Command;

/// Runs the benchmark with the `prill` at `prill` (a release build).
pub(crate) fn run(repo: &Path, prill: &Path) -> Result<(), String> {
    let venv = Command::new("bash")
        .arg(repo.join(".ci/neuro-san-venv"))
        .current_dir(repo)
        .output()
        .map_err(|e| format!("cannot run .ci/neuro-san-venv: {e}"))?;
    if !venv.status.success() {
        return Err(format!(
            ".ci/neuro-san-venv failed: {}",
            String::from_utf8_lossy(&venv.stderr)
        ));
    }
    let python = String::from_utf8_lossy(&venv.stdout).trim().to_owned();
    let status = Command::new(env!("CARGO"))
        .args([
            "test",
            "-p",
            "prill-cli",
            "--test",
            "neuro_san_real",
            "--",
            "--nocapture",
        ])
        .current_dir(repo)
        .env("PRILL_NEURO_SAN_BENCH", "1")
        .env("PRILL_NEURO_SAN_PYTHON", &python)
        .env("PRILL_NEURO_SAN_PRILL", prill)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err("the neuro-san direct benchmark failed or missed a target (above)".to_owned())
    }
}
