//! Stop signals (Ctrl-C, and SIGTERM on unix), listened for from the moment
//! [`listen`] returns, so that a signal sent right after a "press ctrl-c" line is never
//! lost to the default handler.
//!
//! A run listens with [`cancel_on_ctrl_c`]: the first signal cancels it (no new case
//! starts, the reports are written). A signal that has been listened for never goes
//! back to its default action (tokio keeps its handler for the life of the process),
//! so from then on a thread of its own keeps listening until the process ends, and a
//! second signal, or any signal once the run is over (while the history is indexed and
//! pruned), ends the process at once: 130 for Ctrl-C, 143 for SIGTERM (a CI step's
//! time limit). Nothing it says on stderr can hold it up: a stderr nobody reads does
//! not stop the process from ending.

use std::future::Future;
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::exit::ExitCode;

/// Starts listening now; the future resolves on the first stop signal.
pub(crate) fn listen() -> impl Future<Output = ()> + Send + 'static {
    let stops = Stops::new();
    async move {
        let mut stops = stops;
        stops.next().await;
    }
}

/// A stop signal.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// SIGINT, Ctrl-C.
    Interrupt,
    /// SIGTERM.
    #[cfg_attr(not(unix), allow(dead_code))]
    Terminate,
}

impl Stop {
    /// The code a process ended by this signal exits with.
    fn code(self) -> ExitCode {
        match self {
            Stop::Interrupt => ExitCode::CANCELLED,
            Stop::Terminate => ExitCode::TERMINATED,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "Ctrl-C",
            Stop::Terminate => "SIGTERM",
        }
    }
}

/// The stop signals, listened for from when this is made (inside a tokio runtime).
struct Stops {
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
}

impl Stops {
    fn new() -> Stops {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Stops {
                interrupt: signal(SignalKind::interrupt()).ok(),
                terminate: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Stops {}
        }
    }

    /// The next stop signal.
    async fn next(&mut self) -> Stop {
        #[cfg(unix)]
        {
            async fn wait(s: Option<&mut tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                () = wait(self.interrupt.as_mut()) => Stop::Interrupt,
                () = wait(self.terminate.as_mut()) => Stop::Terminate,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Stop::Interrupt
        }
    }
}

/// Where the process is, as the stop signals see it.
enum Phase {
    /// No run is going (before one, or after it: indexing and pruning the history).
    Idle,
    /// A run is going; the first signal cancels it.
    Running(CancellationToken),
    /// A run was cancelled and is writing its reports.
    Cancelling,
}

fn phase() -> MutexGuard<'static, Phase> {
    static PHASE: Mutex<Phase> = Mutex::new(Phase::Idle);
    PHASE.lock().unwrap_or_else(|p| p.into_inner())
}

/// While a run is going: dropped when it is over, after which any stop signal ends the
/// process at once.
#[must_use = "the run counts as over once this is dropped"]
pub(crate) struct RunGoing(());

impl Drop for RunGoing {
    fn drop(&mut self) {
        *phase() = Phase::Idle;
    }
}

/// Cancels `token` on the first stop signal, saying so on stderr; drop the returned
/// guard once the run is over. A second signal, or any once the run is over, ends the
/// process at once.
pub(crate) fn cancel_on_ctrl_c(token: CancellationToken) -> RunGoing {
    *phase() = Phase::Running(token);
    start_watching();
    RunGoing(())
}

/// Starts the thread that listens for stop signals for the rest of the process, once;
/// returns when it listens. When it cannot start, the signals keep their default
/// action (they end the process).
fn start_watching() {
    static STARTED: OnceLock<bool> = OnceLock::new();
    STARTED.get_or_init(|| {
        let (ready, listening) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("prill-signals".to_owned())
            .spawn(move || watch(&ready));
        spawned.is_ok() && listening.recv().unwrap_or(false)
    });
}

/// The thread that listens: a runtime of its own, so that it outlives the run's.
fn watch(ready: &mpsc::Sender<bool>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        let _ = ready.send(false);
        return;
    };
    runtime.block_on(async {
        let mut stops = Stops::new();
        let _ = ready.send(true);
        loop {
            let stop = stops.next().await;
            stopped(stop);
        }
    });
}

/// What a stop signal does in the phase the process is in.
fn stopped(stop: Stop) {
    let mut phase = phase();
    match std::mem::replace(&mut *phase, Phase::Cancelling) {
        Phase::Running(token) => {
            drop(phase);
            // Said on a thread of its own: a stderr nobody reads must not keep this
            // one from hearing the next signal.
            let _ = say("\ncancelling: no new cases start; writing the reports (a second signal stops at once)\n".to_owned());
            token.cancel();
        }
        Phase::Cancelling => end(stop, "a second signal: the reports may be incomplete"),
        Phase::Idle => end(
            stop,
            "the run was over; the next command brings the history up to date",
        ),
    }
}

/// Ends the process now, as `stop` calls for, after saying why (for at most half a
/// second) and ending every program it started, running or not, and what they started.
fn end(stop: Stop, why: &str) -> ! {
    if let Some(said) = say(format!("\nstopped by {}: {why}\n", stop.name())) {
        let _ = said.recv_timeout(Duration::from_millis(500));
    }
    prill_connect::end_all_programs();
    std::process::exit(i32::from(stop.code().code()))
}

/// Writes `text` to stderr on a thread of its own; the receiver hears when it is done.
fn say(text: String) -> Option<mpsc::Receiver<()>> {
    let (done, said) = mpsc::channel();
    std::thread::Builder::new()
        .name("prill-signals-say".to_owned())
        .spawn(move || {
            crate::output::stderr(&text);
            let _ = done.send(());
        })
        .ok()
        .map(|_| said)
}
