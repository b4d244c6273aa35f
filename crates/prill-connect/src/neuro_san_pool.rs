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
//!   Workers start lazily; [`WorkerPool::warm`] starts the first one early (while the
//!   files load), so its start-up is paid before any clock runs.
//! - **Start-up.** A new worker that is not ready within [`WORKER_START_LIMIT`] is ended
//!   and the conversation errs, with the end of its stderr; an idle worker that cannot
//!   open a conversation (it died while it waited) is ended and replaced by a new one.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ConnectError;
use crate::process::{Process, Read};
use crate::stdio::StdioCommand;

/// The longest a worker may take to load neuro-san and open a conversation.
pub const WORKER_START_LIMIT: Duration = Duration::from_secs(120);

/// The key of the bridge's control lines.
const WORKER: &str = "prill_worker";

/// The largest control line read while waiting for `opened`.
const CONTROL_LINE_BYTES: u64 = 64 * 1024;

/// Warm bridge workers, shared by every conversation of a run.
#[derive(Debug)]
pub struct WorkerPool {
    /// How to start a worker (the bridge with `--worker`).
    command: StdioCommand,
    /// Workers not in use, ready for the next conversation.
    idle: Mutex<Vec<Process>>,
    /// One permit per worker in use; idle ones hold none.
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

    /// Starts one worker now, when none is alive yet, so that neuro-san loads while the
    /// caller does other things. Must be called inside a tokio runtime.
    pub fn warm(&self) -> Result<(), ConnectError> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.is_empty() && self.slots.available_permits() == self.size {
            idle.push(self.command.spawn()?);
        }
        Ok(())
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
        let ended = !matches!(process.try_wait(), Ok(None));
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
                    "it closed its output after {:.1} s",
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
        if value
            .as_ref()
            .and_then(|v| v.get(WORKER))
            .and_then(Value::as_str)
            == Some("opened")
        {
            return Ok(());
        }
        return Err(format!(
            "it answered `{}` instead of opening",
            crate::error::cut(text.trim(), 200)
        ));
    }
}
