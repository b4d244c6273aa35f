//! The process side of every program Prill talks to over stdin and stdout: direct
//! agents ([`crate::StdioConnector`]) and the programs that answer tool calls
//! ([`crate::tools::CommandTools`]).
//!
//! A [`Process`] is started in a process group of its own, with its three streams
//! piped; its stderr is read to the end in the background, keeping the last
//! [`STDERR_KEPT`] bytes for error messages ([`Process::with_stderr`]), with the values
//! of the variables that hold keys blanked out. Ending it ([`Process::end`], also on
//! drop) sends `SIGTERM` to the whole group and `SIGKILL` [`GROUP_GRACE`] later to what
//! is left; [`end_pending_groups`] kills at once every group still within its grace, so
//! that nothing outlives Prill. Lines are read with a byte budget ([`read_line`]), so a
//! line never grows past its cap.
//!
//! On Linux, what leaves the group (`setsid cmd &`, a daemonising server, a double
//! fork) is ended too: the first program started makes this process a child subreaper,
//! so such orphans become its children, and `orphans` ends those that descend from a
//! program Prill started (never the embedding program's own), once their program's
//! group is ended, and at exit. Elsewhere the guarantee is the process group only.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use prill_spec::redact::{KEY_VARIABLES, Redactor};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

use crate::error::ConnectError;

#[cfg(target_os = "linux")]
mod orphans;

/// How much of a command's stderr is kept for error messages.
pub const STDERR_KEPT: usize = 8 * 1024;

/// How long to wait, after a command closed its stdout, for it to exit and for the rest
/// of its stderr, before reporting without them.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(5);

/// How long an ended command's process group has between `SIGTERM` and `SIGKILL`.
pub const GROUP_GRACE: Duration = Duration::from_secs(2);

/// The process groups sent `SIGTERM` whose `SIGKILL` is still to come.
#[cfg(unix)]
fn pending_groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    static PENDING: Mutex<Vec<i32>> = Mutex::new(Vec::new());
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sends `SIGKILL` now to every process group that was sent `SIGTERM` and is still
/// within its [`GROUP_GRACE`]: a program calls this before it exits, so that an agent
/// or tool program that ignores `SIGTERM` does not outlive it (the delayed kill dies
/// with the program).
///
/// On Linux it also kills every orphan this process adopted from the programs it
/// started: the first program started makes this process a child subreaper
/// (`PR_SET_CHILD_SUBREAPER`, a process-wide setting an embedding program inherits), so
/// that a helper which left its program's process group (`setsid`, a double fork) is
/// re-parented here rather than to init. Prill ends only orphans that descend from its
/// own programs (they carry the `PRILL_STARTED_BY` variable it sets, or are in one of
/// their process groups): each program's, right after its group's grace, and here
/// those of every ended program at once; an embedding program's own children and their
/// orphans are never signalled or reaped. Elsewhere than Linux only the process groups
/// are ended.
pub fn end_pending_groups() {
    #[cfg(unix)]
    {
        let groups = std::mem::take(&mut *pending_groups());
        for &raw in &groups {
            if let Some(pid) = rustix::process::Pid::from_raw(raw) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
        }
        #[cfg(target_os = "linux")]
        orphans::end_all_now(&groups);
    }
}

/// Ends at once every program this process started and everything they started, for
/// a program that must exit now, in the middle of its conversations (a second stop
/// signal): unlike [`end_pending_groups`], which leaves running conversations alone,
/// it kills each running program's process group, its descendants (those that left
/// the group included, on Linux) and every group within its grace, and waits at most
/// half a second for them to end. Call it only just before the process exits: every
/// conversation still going on breaks.
pub fn end_all_programs() {
    #[cfg(unix)]
    {
        let groups = std::mem::take(&mut *pending_groups());
        // On Linux the running programs' descendants are read before any is signalled.
        #[cfg(not(target_os = "linux"))]
        let groups = [groups, std::mem::take(&mut *running_groups())].concat();
        for &raw in &groups {
            if let Some(pid) = rustix::process::Pid::from_raw(raw) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
        }
        #[cfg(target_os = "linux")]
        orphans::end_everything_now(&groups);
    }
}

/// The process groups of the programs whose conversation goes on (elsewhere than
/// Linux, where `orphans` keeps them with their marks).
#[cfg(all(unix, not(target_os = "linux")))]
fn running_groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

/// What messages must not show of a program's stderr: the values of [`KEY_VARIABLES`]
/// and of `secret_variables`, as the program sees them (from `env`, else Prill's own
/// environment, which it inherits).
pub(crate) fn secrets_of(env: &BTreeMap<String, String>, secret_variables: &[String]) -> Redactor {
    let mut secrets = Redactor::default();
    let names = KEY_VARIABLES
        .iter()
        .copied()
        .chain(secret_variables.iter().map(String::as_str));
    secrets.secret_variables(names, |name| {
        env.get(name).cloned().or_else(|| std::env::var(name).ok())
    });
    secrets
}

/// How to start a program.
pub(crate) struct Launch<'a> {
    /// The program and its arguments.
    pub(crate) argv: &'a [String],
    /// Variables added to the inherited environment.
    pub(crate) env: &'a BTreeMap<String, String>,
    /// The working directory; the current one when `None`.
    pub(crate) cwd: Option<&'a PathBuf>,
    /// How messages name it.
    pub(crate) display: String,
    /// What its stderr tail must not show.
    pub(crate) secrets: Redactor,
}

/// A running program with piped streams, in a process group of its own.
///
/// Dropping it ends the program and everything it started.
#[derive(Debug)]
pub(crate) struct Process {
    /// The process group the program leads (its pid), while it may still run.
    group: Option<u32>,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    tail: Arc<Mutex<VecDeque<u8>>>,
    stderr_task: Option<JoinHandle<()>>,
    /// The keys the program may print (its environment's), blanked out of messages.
    secrets: Redactor,
    /// Its `PRILL_STARTED_BY` mark, which what it starts inherits.
    #[cfg(target_os = "linux")]
    mark: String,
    /// Its pid, never taken for an orphan while this is alive.
    #[cfg(target_os = "linux")]
    pid: Option<i32>,
}

impl Process {
    /// Starts `launch`; the error names the program.
    pub(crate) fn spawn(launch: Launch<'_>) -> Result<Process, ConnectError> {
        let spawn_error = |reason: String| ConnectError::Spawn {
            command: launch.display.clone(),
            reason,
        };
        let Some((program, args)) = launch.argv.split_first() else {
            return Err(spawn_error("the command is empty".to_owned()));
        };
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .envs(launch.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Elsewhere the program alone is killed when it is ended; on unix its whole
            // process group is (`Process::end`).
            .kill_on_drop(cfg!(not(unix)));
        // Its own process group, so that what it starts (a wrapper's real program:
        // `sh -c`, `npm run`, `uv run`) ends with it.
        #[cfg(unix)]
        command.process_group(0);
        if let Some(cwd) = launch.cwd {
            command.current_dir(cwd);
        }
        // What leaves the group is adopted by this process and known by its mark.
        #[cfg(target_os = "linux")]
        let mark = {
            orphans::adopt_orphans();
            let mark = orphans::next_mark();
            command.env(orphans::MARK, &mark);
            mark
        };
        let mut child = command
            .spawn()
            .map_err(|e| spawn_error(crate::http::root_cause(&e)))?;
        #[cfg(target_os = "linux")]
        let pid = child.id().and_then(|id| i32::try_from(id).ok());
        #[cfg(target_os = "linux")]
        if let Some(pid) = pid {
            orphans::started(pid, &mark);
        }
        #[cfg(all(unix, not(target_os = "linux")))]
        if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
            running_groups().push(pid);
        }
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(spawn_error(
                "its standard streams are not available".to_owned(),
            ));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_task = tokio::spawn(keep_tail(stderr, tail.clone()));
        tracing::debug!(command = %launch.display, pid = ?child.id(), "started a program");
        Ok(Process {
            group: child.id(),
            child,
            stdin,
            stdout: BufReader::new(stdout),
            tail,
            stderr_task: Some(stderr_task),
            secrets: launch.secrets,
            #[cfg(target_os = "linux")]
            mark,
            #[cfg(target_os = "linux")]
            pid,
        })
    }

    /// Ends the program and everything it started: `SIGTERM` to its process group,
    /// then `SIGKILL` after [`GROUP_GRACE`] to whatever is left of it (elsewhere than
    /// unix: the program alone is killed), then, on Linux, what left the group
    /// (`orphans`). Ending it again does nothing.
    pub(crate) fn end(&mut self) {
        #[cfg(not(unix))]
        let _ = self.child.start_kill();
        #[cfg(unix)]
        if let Some(pid) = self
            .group
            .take()
            .and_then(|id| rustix::process::Pid::from_raw(i32::try_from(id).ok()?))
        {
            use rustix::process::{Signal, kill_process_group};
            let raw = pid.as_raw_nonzero().get();
            #[cfg(not(target_os = "linux"))]
            running_groups().retain(|&g| g != raw);
            // Its descendants, read while they are still its descendants.
            #[cfg(target_os = "linux")]
            let lineage = orphans::Lineage::of(self.mark.clone(), raw);
            let then = move || {
                #[cfg(target_os = "linux")]
                orphans::end_lineage(lineage);
            };
            // An error means the group is gone already: only orphans may be left.
            if kill_process_group(pid, Signal::TERM).is_err() {
                tracing::debug!(pid = raw, "the program had ended");
                then();
                return;
            }
            tracing::debug!(pid = raw, grace = ?GROUP_GRACE, "ending the program's process group");
            pending_groups().push(raw);
            after_grace(move || {
                let mut pending = pending_groups();
                if let Some(at) = pending.iter().position(|p| *p == raw) {
                    pending.swap_remove(at);
                    let _ = kill_process_group(pid, Signal::KILL);
                }
                drop(pending);
                then();
            });
        }
    }

    /// Writes `bytes` to the program's stdin and flushes them.
    pub(crate) async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stdin.write_all(bytes).await?;
        self.stdin.flush().await
    }

    /// Reads the next line of stdout into `buf`, spending at most `budget` bytes.
    pub(crate) async fn read_line(
        &mut self,
        buf: &mut Vec<u8>,
        budget: &mut u64,
    ) -> std::io::Result<Read> {
        read_line(&mut self.stdout, buf, budget).await
    }

    /// The first non-blank line of what the program wrote to stdout and nobody read
    /// yet, when some is there already (checked without waiting).
    pub(crate) fn unread_line(&mut self) -> Option<String> {
        let bytes = self.stdout.fill_buf().now_or_never()?.ok()?;
        let text = String::from_utf8_lossy(bytes);
        let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
        Some(line.to_owned())
    }

    /// `message`, then the program's exit status if it has ended (waiting a little for
    /// it when it has `ended` its output), then the end of its stderr, keys blanked.
    pub(crate) async fn with_stderr(&mut self, message: String, ended: bool) -> String {
        let status = if ended {
            tokio::time::timeout(EXIT_GRACE, self.child.wait())
                .await
                .ok()
                .and_then(Result::ok)
        } else {
            self.child.try_wait().ok().flatten()
        };
        let mut text = message;
        if let Some(status) = status {
            text.push_str(&format!(" (it exited with {status})"));
            // It has ended, so its stderr ends too: wait for the rest of it.
            if let Some(task) = self.stderr_task.take() {
                let _ = tokio::time::timeout(EXIT_GRACE, task).await;
            }
        }
        let tail = self.stderr_tail();
        if tail.is_empty() {
            text.push_str("; it wrote nothing to stderr");
        } else {
            text.push_str(&format!("; its stderr ends with:\n{tail}"));
        }
        text
    }

    /// Forgets what the program wrote to stderr so far: a worker starting another
    /// conversation shows only that conversation's.
    pub(crate) fn clear_stderr_tail(&self) {
        self.tail.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// The program's exit status when it has ended, `None` while it runs.
    pub(crate) fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        self.child.try_wait()
    }

    /// The end of what the program wrote to stderr so far, trimmed, keys blanked.
    pub(crate) fn stderr_tail(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(|p| p.into_inner());
        let bytes: Vec<u8> = tail.iter().copied().collect();
        self.secrets
            .string(String::from_utf8_lossy(&bytes).trim().to_owned())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.end();
        // No longer managed here: once it has ended, it may be reaped as an orphan.
        #[cfg(target_os = "linux")]
        if let Some(pid) = self.pid {
            orphans::forget(pid);
        }
    }
}

/// Runs `then` [`GROUP_GRACE`] from now, on the runtime when there is one, else on a
/// thread of its own.
#[cfg(unix)]
fn after_grace(then: impl FnOnce() + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                tokio::time::sleep(GROUP_GRACE).await;
                then();
            });
        }
        Err(_) => {
            std::thread::spawn(move || {
                std::thread::sleep(GROUP_GRACE);
                then();
            });
        }
    }
}

/// Reads a stream to its end, keeping the last [`STDERR_KEPT`] bytes.
async fn keep_tail(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut chunk = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let mut tail = tail.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        tail.extend(&chunk[..n]);
        let excess = tail.len().saturating_sub(STDERR_KEPT);
        tail.drain(..excess);
    }
}

/// How reading one line ended.
pub(crate) enum Read {
    /// A line ending in `\n`.
    Line,
    /// The end of the stream (the buffer may hold a last unterminated line).
    End,
    /// More than the budget.
    TooLarge,
}

/// Reads up to and including the next `\n` into `buf`, spending at most `budget` bytes.
async fn read_line(
    reader: &mut BufReader<ChildStdout>,
    buf: &mut Vec<u8>,
    budget: &mut u64,
) -> std::io::Result<Read> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(Read::End);
        }
        let (take, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        if take as u64 > *budget {
            return Ok(Read::TooLarge);
        }
        *budget -= take as u64;
        buf.extend_from_slice(&available[..take]);
        reader.consume(take);
        if ended {
            return Ok(Read::Line);
        }
    }
}
