//! What `prill watch` waits for: a change to a test file or to `prill.toml` under the
//! watched paths, debounced (the events of one save come as one batch), and what it
//! means for the next run ([`Rerun`]).
//!
//! A change counts when the file is one Prill reads when walking a folder
//! ([`prill_spec::load::is_candidate`]), outside hidden folders, `target` and
//! `node_modules` (as [`prill_spec::load::discover`] walks), and is not one of the
//! files the run itself writes (its reports). A change to `prill.toml` (the one read,
//! or any under the watched folders) reruns everything; otherwise only the test files
//! that changed and still exist rerun.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use notify::event::EventKind;
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// How long after the last event of a change the change counts: the events of one save
/// (truncate, write, close, rename) come as one batch.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// The longest the events of one change are gathered, however many keep coming.
pub const MAX_GATHER: Duration = Duration::from_secs(2);

/// What to run after a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rerun {
    /// Every watched path: `prill.toml` changed.
    All,
    /// These test files, which changed.
    Files(Vec<PathBuf>),
}

/// Why watching could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// A path could not be watched.
    #[error("cannot watch {}: {source}", .path.display())]
    Watch {
        /// The path.
        path: PathBuf,
        /// What the file watcher said.
        source: notify::Error,
    },
    /// The file watcher failed while watching.
    #[error("the file watcher failed: {0}")]
    Failed(String),
    /// The file watcher stopped.
    #[error("the file watcher stopped")]
    Stopped,
}

/// Watches test files and `prill.toml`; [`Watch::changed`] waits for the next change.
pub struct Watch {
    /// Kept for as long as the watch: dropping it stops the events.
    _watcher: RecommendedWatcher,
    events: UnboundedReceiver<notify::Result<Event>>,
    filter: Filter,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

/// Which changed paths count, and how.
#[derive(Debug, Clone)]
struct Filter {
    /// The watched paths, absolute.
    roots: Vec<PathBuf>,
    /// The `prill.toml` read, absolute.
    config: Option<PathBuf>,
    /// Files the run writes, absolute.
    ignored: Vec<PathBuf>,
}

impl Watch {
    /// Starts watching `paths` (folders recursively, files through their folder) and `config`;
    /// changes to `ignored` (the run's report files) never count. Relative paths are
    /// taken from the working directory.
    pub fn new(
        paths: &[PathBuf],
        config: Option<&Path>,
        ignored: &[PathBuf],
    ) -> Result<Watch, WatchError> {
        let (send, events) = unbounded_channel();
        let mut watcher = notify::recommended_watcher(move |event| {
            // The receiver is gone only once the watch is dropped.
            let _ = send.send(event);
        })
        .map_err(|source| WatchError::Watch {
            path: PathBuf::from("."),
            source,
        })?;
        let filter = Filter {
            roots: paths.iter().map(absolute).collect(),
            config: config.map(absolute),
            ignored: ignored.iter().map(absolute).collect(),
        };
        for root in &filter.roots {
            // A file is watched through its folder, so that an editor that saves by
            // replacing the file is still seen.
            let (path, mode) = match root.parent() {
                Some(folder) if !root.is_dir() => (folder, RecursiveMode::NonRecursive),
                _ => (root.as_path(), RecursiveMode::Recursive),
            };
            watcher
                .watch(path, mode)
                .map_err(|source| WatchError::Watch {
                    path: path.to_path_buf(),
                    source,
                })?;
        }
        // The folder of prill.toml, so that an editor that replaces the file is seen.
        if let Some(folder) = filter.config.as_deref().and_then(Path::parent)
            && !filter
                .roots
                .iter()
                .any(|r| folder.starts_with(r) && r.is_dir())
        {
            watcher
                .watch(folder, RecursiveMode::NonRecursive)
                .map_err(|source| WatchError::Watch {
                    path: folder.to_path_buf(),
                    source,
                })?;
        }
        Ok(Watch {
            _watcher: watcher,
            events,
            filter,
        })
    }

    /// Waits for the next change that counts and says what to rerun: the paths of the
    /// events that change a file, gathered until none came for [`DEBOUNCE`].
    pub async fn changed(&mut self) -> Result<Rerun, WatchError> {
        loop {
            let mut paths = Vec::new();
            self.gather(&mut paths).await?;
            // A folder that never stops changing (a build's output) is looked at every
            // few seconds rather than never.
            let end = tokio::time::Instant::now() + MAX_GATHER;
            while let Ok(more) = tokio::time::timeout(DEBOUNCE, self.gather(&mut paths)).await {
                more?;
                if tokio::time::Instant::now() >= end {
                    break;
                }
            }
            if let Some(rerun) = self.filter.rerun(&paths) {
                return Ok(rerun);
            }
        }
    }

    /// Waits for the next event that changes a file, and adds its paths to `paths`.
    async fn gather(&mut self, paths: &mut Vec<PathBuf>) -> Result<(), WatchError> {
        loop {
            let event = match self.events.recv().await {
                Some(Ok(event)) => event,
                Some(Err(e)) => return Err(WatchError::Failed(e.to_string())),
                None => return Err(WatchError::Stopped),
            };
            if changes_a_file(&event.kind) {
                paths.extend(event.paths);
                return Ok(());
            }
        }
    }
}

/// Whether an event changes a file: made, written, renamed, touched or removed. Opening
/// and reading a file (what a run does) is not.
fn changes_a_file(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::Access(_) | EventKind::Other)
}

impl Filter {
    /// What `changed` calls for; `None` when nothing that counts changed.
    fn rerun(&self, changed: &[PathBuf]) -> Option<Rerun> {
        let mut files = Vec::new();
        for path in changed {
            let path = absolute(path);
            if self.config.as_deref() == Some(path.as_path()) {
                return Some(Rerun::All);
            }
            if self.ignored.contains(&path) || !self.watched(&path) {
                continue;
            }
            if path.file_name().is_some_and(|n| n == "prill.toml") {
                return Some(Rerun::All);
            }
            if prill_spec::load::is_candidate(&path) && path.is_file() && !files.contains(&path) {
                files.push(path);
            }
        }
        files.sort();
        (!files.is_empty()).then_some(Rerun::Files(files))
    }

    /// Whether `path` is under a root, and not in a folder the walk skips.
    fn watched(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| {
            let Ok(rest) = path.strip_prefix(root) else {
                return false;
            };
            let mut folders: Vec<Component> = rest.components().collect();
            folders.pop();
            !folders.iter().any(|c| {
                let name = c.as_os_str().to_string_lossy();
                name.starts_with('.') || name == "target" || name == "node_modules"
            })
        })
    }
}

/// `path` made absolute (from the working directory), symbolic links resolved where it
/// exists, so that paths from the watcher and from the command line compare.
fn absolute(path: impl AsRef<Path>) -> PathBuf {
    let path = path.as_ref();
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    // A path that no longer exists: its folder resolved, its name kept.
    if let (Some(parent), Some(name)) = (path.parent(), path.file_name())
        && let Ok(real) = if parent.as_os_str().is_empty() {
            Path::new(".").canonicalize()
        } else {
            parent.canonicalize()
        }
    {
        return real.join(name);
    }
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(root: &Path) -> Filter {
        Filter {
            roots: vec![absolute(root)],
            config: None,
            ignored: vec![absolute(root.join("report.json"))],
        }
    }

    #[test]
    fn test_files_rerun_alone_and_prill_toml_reruns_everything() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in [
            "a.yaml",
            "b.hocon",
            "notes.txt",
            "report.json",
            "prill.toml",
        ] {
            std::fs::write(root.join(name), "x").unwrap();
        }
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/x.json"), "x").unwrap();
        let f = filter(root);
        let a = absolute(root.join("a.yaml"));
        assert_eq!(
            f.rerun(&[root.join("a.yaml"), root.join("a.yaml")]),
            Some(Rerun::Files(vec![a.clone()]))
        );
        // Not test files, the run's own report, a hidden folder, a file now gone.
        let ignored = [
            root.join("notes.txt"),
            root.join("report.json"),
            root.join(".git/x.json"),
            root.join("gone.yaml"),
        ];
        assert_eq!(f.rerun(&ignored), None);
        assert_eq!(
            f.rerun(&[root.join("a.yaml"), root.join("prill.toml")]),
            Some(Rerun::All)
        );
        let elsewhere = tempfile::tempdir().unwrap();
        let config = elsewhere.path().join("prill.toml");
        std::fs::write(&config, "x").unwrap();
        let f = Filter {
            config: Some(absolute(&config)),
            ..filter(root)
        };
        assert_eq!(f.rerun(std::slice::from_ref(&config)), Some(Rerun::All));
    }
}
