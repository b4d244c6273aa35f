//! `prill watch [run flags]`: runs the tests as `prill run` does, then waits for a
//! change (`prill_app::watch`) and runs again: only the test files that changed,
//! or everything when `prill.toml` changed. The screen is cleared before each run when
//! stderr is a terminal. Ctrl-C during a run cancels it and stops watching; Ctrl-C while
//! waiting stops watching.
//!
//! Each wait is announced on stderr with `watch: waiting for changes ...`, and each
//! rerun with `watch: rerunning <files>` (or `watch: prill.toml changed; rerunning
//! everything`).
//!
//! Exit codes: 130 once stopped with Ctrl-C; 2 when the paths cannot be watched or a
//! run's flags are invalid; 3 when the file watcher fails.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use prill_app::watch::{Rerun, Watch};
use prill_app::{CONFIG_FILE, Found, Settings};

use crate::args::WatchArgs;
use crate::exit::ExitCode;
use crate::output;

/// Clears the screen and puts the cursor at the top left.
const CLEAR: &str = "\x1b[2J\x1b[H";

/// `prill watch`.
pub(crate) fn run(mut args: WatchArgs, color: bool) -> anyhow::Result<ExitCode> {
    let roots = args.run.target.paths.clone();
    // Which prill.toml the runs read (a broken one is reported by the first run); with
    // none, the one that would be read first once written, in the working directory.
    let config = Settings::load(
        args.run.target.config.as_deref(),
        args.run.target.overrides(),
    )
    .ok()
    .and_then(|s| match s.found {
        Found::File(path) => Some(path),
        Found::None { .. } => None,
    })
    .unwrap_or_else(|| PathBuf::from(CONFIG_FILE));
    let ignored: Vec<PathBuf> = args.run.files.paths().into_iter().cloned().collect();
    let mut watch = match Watch::new(&roots, Some(&config), &ignored) {
        Ok(watch) => watch,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let runtime = prill_app::runtime()?;
    let terminal = std::io::stderr().is_terminal();
    let watched = list(&roots);
    loop {
        let code = super::run::run(&args.run, color)?;
        if code == ExitCode::CANCELLED {
            return Ok(code);
        }
        output::stderr(&format!(
            "watch: waiting for changes to {watched} (Ctrl-C stops)\n"
        ));
        let next = runtime.block_on(async {
            let stop = crate::signals::listen();
            tokio::select! {
                changed = watch.changed() => Some(changed),
                () = stop => None,
            }
        });
        let rerun = match next {
            None => return Ok(ExitCode::CANCELLED),
            Some(Ok(rerun)) => rerun,
            Some(Err(e)) => {
                output::stderr(&format!("error: {e}\n"));
                return Ok(ExitCode::ERROR);
            }
        };
        if terminal {
            output::stderr(CLEAR);
        }
        args.run.target.paths = match rerun {
            Rerun::All => {
                output::stderr("watch: prill.toml changed; rerunning everything\n");
                roots.clone()
            }
            Rerun::Files(files) => {
                let files: Vec<PathBuf> = files.iter().map(|f| relative(f)).collect();
                output::stderr(&format!("watch: rerunning {}\n", list(&files)));
                files
            }
        };
    }
}

/// Paths for a message, comma-separated.
fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `path` relative to the working directory when it is under it, as a user wrote it.
fn relative(path: &Path) -> PathBuf {
    std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
}
