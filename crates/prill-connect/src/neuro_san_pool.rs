//! Warm workers for neuro-san's `direct` connection: bridge processes that load
//! neuro-san once and serve one conversation after another, so that each conversation
//! no longer pays for Python importing neuro-san (seconds of CPU).
//!
//! A conversation leases a worker when its first request goes live (a replayed one
//! needs none), says which agent it talks to (`{"prill_worker": "open", "agent": ...}`,
//! answered `{"prill_worker": "opened"}` once neuro-san is loaded), and gives it back
//! when it ends. The bridge makes a fresh neuro-san session for each conversation.
//!
//! - **Isolation.** A worker goes back to the pool only from a conversation that ended
//!   cleanly: one that timed out, broke the protocol, was abandoned mid-answer or whose
//!   process died ends its worker (its whole process group, as any program), and the
//!   next conversation gets a new one; it never sees a half-finished one. What a coded
//!   tool leaves in the process (module globals) stays: that is the limit of warm
//!   workers, and `fresh_process = true` in `[neuro_san]` is the way around it.
//! - **Size.** At most [`WorkerPool::size`] workers live at once, idle or in use; a
//!   conversation that finds none free waits for one, outside its request's time limit.
//!   Workers start lazily; [`WorkerPool::warm`] starts some early (as soon as the plan
//!   says the run needs them), so their start-up is paid before any clock runs, and
//!   says when they are ready ([`Warming`]): a worker writes `{"prill_worker": "ready"}`
//!   once neuro-san is loaded. A conversation that wants a worker still warming waits
//!   for it rather than starting another.
//! - **Start-up.** A new worker that is not ready within [`WORKER_START_LIMIT`] is ended
//!   and the conversation errs, with the end of its stderr; an idle worker that cannot
//!   open a conversation (it died while it waited) is ended and replaced by a new one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::task::JoinHandle;

use crate::error::ConnectError;
use crate::process::{Process, Read};
use crate::stdio::StdioCommand;

/// The longest a worker may take to load neuro-san and open a conversation.
pub const WORKER_START_LIMIT: Duration = Duration::from_secs(120);

/// The key of the bridge's control lines.
const WORKER: &str = "prill_worker";

/// How a failure to start begins when the worker closed its output (it is ending).
const CLOSED: &str = "it closed its output";

/// The largest control line read while waiting for `opened`.
const CONTROL_LINE_BYTES: u64 = 64 * 1024;

/// Warm bridge workers, shared by every conversation of a run.
#[derive(Debug)]
pub struct WorkerPool {
    /// How to start a worker (the bridge with `--worker`).
    command: StdioCommand,
    /// Workers not in use, ready for the next conversation.
    idle: Mutex<Vec<Process>>,
    /// Workers [`WorkerPool::warm`] started, each to come (`None` if it could not
    /// start): a conversation that finds no idle worker takes the next of them.
    starting: Mutex<VecDeque<oneshot::Receiver<Option<Process>>>>,
    /// One permit per worker in use or starting early; idle ones hold none.
    slots: Arc<Semaphore>,
    size: usize,
}

/// A worker leased by a conversation: its process, and its place in the pool until the
/// conversation ends ([`Lease::give_back`]).
#[derive(Debug)]
pub(crate) struct Lease {
    pool: Arc<WorkerPool>,
    _permit: OwnedSemaphorePermit,
}

impl WorkerPool {
    /// A pool of at most `size` workers (at least one) started as `command`.
    pub fn new(command: StdioCommand, size: usize) -> WorkerPool {
        let size = size.max(1);
        WorkerPool {
            command,
            idle: Mutex::new(Vec::new()),
            starting: Mutex::new(VecDeque::new()),
            slots: Arc::new(Semaphore::new(size)),
            size,
        }
    }

    /// The most workers alive at once.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How many workers wait, ready, for a conversation.
    pub fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Starts up to `count` workers now, so that neuro-san loads while the caller does
    /// other things: only on a pool that has none yet, and no more than it holds. The
    /// next conversations take them, waiting for one still starting rather than
    /// starting another. Must be called inside a tokio runtime. `None` when none
    /// started.
    pub fn warm(self: &Arc<WorkerPool>, count: usize) -> Option<Warming> {
        let started = Instant::now();
        let mut tasks = Vec::new();
        let mut starting = self.starting.lock().unwrap_or_else(|e| e.into_inner());
        // Only a pool with no worker yet: idle ones, and early ones whose start-up is
        // over, hold no permit but are alive.
        if self.idle() > 0 || !starting.is_empty() {
            return None;
        }
        for _ in 0..count {
            let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() else {
                break;
            };
            let (tx, rx) = oneshot::channel();
            starting.push_back(rx);
            let command = self.command.clone();
            tasks.push(tokio::spawn(async move {
                let Ok(mut process) = command.spawn() else {
                    let _ = tx.send(None);
                    return false;
                };
                let ready = matches!(
                    tokio::time::timeout(WORKER_START_LIMIT, control(&mut process, "ready")).await,
                    Ok(Ok(()))
                );
                if !ready {
                    // The conversation that takes it starts another, and says why that
                    // one cannot start.
                    process.end();
                    let _ = tx.send(None);
                } else if let Err(Some(mut unwanted)) = tx.send(Some(process)) {
                    // The pool is gone.
                    unwanted.end();
                }
                drop(permit);
                ready
            }));
        }
        (!tasks.is_empty()).then_some(Warming { tasks, started })
    }

    /// A worker for a conversation with `agent`, opened for it: an idle one, else a new
    /// one once fewer than [`WorkerPool::size`] are alive (waiting until one is).
    pub(crate) async fn lease(
        self: &Arc<WorkerPool>,
        agent: &str,
    ) -> Result<(Process, Lease), ConnectError> {
        let permit = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .map_err(|_| ConnectError::protocol(self.peer(), "the worker pool is closed"))?;
        // An idle worker that died while it waited (killed, out of memory) is ended and
        // replaced by a new one, once.
        let reused = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let reused = match reused {
            Some(process) => Some(process),
            // Rather than start another, wait for one that started early.
            None => {
                let early = self
                    .starting
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .pop_front();
                match early {
                    Some(coming) => coming.await.ok().flatten(),
                    None => None,
                }
            }
        };
        if let Some(mut process) = reused {
            process.clear_stderr_tail();
            if let Ok(Ok(())) =
                tokio::time::timeout(WORKER_START_LIMIT, open(&mut process, agent)).await
            {
                let lease = Lease {
                    pool: Arc::clone(self),
                    _permit: permit,
                };
                return Ok((process, lease));
            }
            process.end();
        }
        let mut process = self.command.spawn()?;
        let opened = tokio::time::timeout(WORKER_START_LIMIT, open(&mut process, agent)).await;
        let failure = match opened {
            Ok(Ok(())) => {
                let lease = Lease {
                    pool: Arc::clone(self),
                    _permit: permit,
                };
                return Ok((process, lease));
            }
            Ok(Err(message)) => message,
            Err(_) => format!("it was not ready within {} s", WORKER_START_LIMIT.as_secs()),
        };
        // A worker that closed its output is ending: its stderr says why.
        let ended = failure.starts_with(CLOSED) || !matches!(process.try_wait(), Ok(None));
        let message = process
            .with_stderr(
                format!(
                    "a neuro-san worker could not open a conversation with `{agent}`: {failure}"
                ),
                ended,
            )
            .await;
        Err(ConnectError::protocol(self.peer(), message))
    }

    fn peer(&self) -> String {
        format!("command {}", self.command.display())
    }
}

impl Lease {
    /// Ends the lease: `process` goes back to the pool when `reusable` (its
    /// conversation ended cleanly) and it still runs; otherwise it is ended.
    pub(crate) fn give_back(self, process: Option<Process>, reusable: bool) {
        let Some(mut process) = process else { return };
        if reusable && matches!(process.try_wait(), Ok(None)) {
            let mut idle = self.pool.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push(process);
            return;
        }
        process.end();
    }
}

/// Opens a conversation with `agent` on a worker: the open line, then its `opened`
/// answer; the error says what came instead.
async fn open(process: &mut Process, agent: &str) -> Result<(), String> {
    let mut line = json!({WORKER: "open", "agent": agent})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    process
        .write(&line)
        .await
        .map_err(|e| format!("cannot write to it: {e}"))?;
    control(process, "opened").await
}

/// Reads the worker's control lines until `{"prill_worker": <word>}` (a new worker's
/// `ready` comes before its first `opened`, and is passed over); the error says what
/// came instead.
async fn control(process: &mut Process, word: &str) -> Result<(), String> {
    let started = Instant::now();
    let mut buf = Vec::new();
    let mut budget = CONTROL_LINE_BYTES;
    loop {
        buf.clear();
        let read = process
            .read_line(&mut buf, &mut budget)
            .await
            .map_err(|e| format!("cannot read from it: {e}"))?;
        match read {
            Read::TooLarge => return Err("it wrote a line too long for a control line".to_owned()),
            Read::End if buf.is_empty() => {
                return Err(format!(
                    "{CLOSED} after {:.1} s",
                    started.elapsed().as_secs_f64()
                ));
            }
            _ => {}
        }
        let text = String::from_utf8_lossy(&buf);
        if text.trim().is_empty() {
            continue;
        }
        let value: Option<Value> = serde_json::from_str(text.trim()).ok();
        match value
            .as_ref()
            .and_then(|v| v.get(WORKER))
            .and_then(Value::as_str)
        {
            Some(got) if got == word => return Ok(()),
            Some("ready") => continue,
            _ => {
                return Err(format!(
                    "it answered `{}` instead of `{word}`",
                    crate::error::cut(text.trim(), 200)
                ));
            }
        }
    }
}

/// Workers starting early ([`WorkerPool::warm`]): [`Warming::wait`] says when they are
/// ready. Dropping it leaves them starting.
#[derive(Debug)]
pub struct Warming {
    tasks: Vec<JoinHandle<bool>>,
    started: Instant,
}

/// How the early workers started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Warmed {
    /// How many are ready.
    pub ready: usize,
    /// How many could not start (the first conversation that needs one says why).
    pub failed: usize,
    /// From [`WorkerPool::warm`] to the last one's end of start-up.
    pub took: Duration,
}

impl Warming {
    /// Waits until every worker is ready or has failed to start.
    pub async fn wait(self) -> Warmed {
        let (mut ready, mut failed) = (0, 0);
        for task in self.tasks {
            if matches!(task.await, Ok(true)) {
                ready += 1;
            } else {
                failed += 1;
            }
        }
        Warmed {
            ready,
            failed,
            took: self.started.elapsed(),
        }
    }
}
