//! The fakes' pauses, kept to the time asked for.
//!
//! tokio's timer counts in whole milliseconds, rounds a deadline up to the next one and
//! fires on its driver's next turn: a 20 ms pause took 21.5–21.6 ms on loopback
//! (measured with curl against `fake-openai --latency-ms 20`), so a benchmark that
//! counts on the fake "answering in 20 ms" was 8% slower than its ideal before the
//! client did anything.
//!
//! Each server has a [`Clock`] of its own: a task on the server's runtime that keeps
//! the server's pending pauses in a heap and waits, on a Linux `timerfd` read by the
//! runtime's own reactor, until the earliest ends (the kernel's timer slack, about
//! 50 µs, late), then wakes each pause that is due. A connection's pauses find their
//! server's clock through a task-local ([`Clock::scope`]). Everything stays on the
//! runtime's threads: a pause costs no wake of another thread, and is re-armed only
//! when it ends before every pause already waiting, which with one fixed latency is
//! only when none is.
//!
//! Where there is no `timerfd` (not Linux), or a pause is taken outside a server, one
//! process-wide thread keeps the heap instead and wakes each pause over a channel: on
//! time too, for a wake of that thread per pause. A pause whose waiter is gone (its
//! connection closed) is dropped when it falls due.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::future::Future;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

tokio::task_local! {
    /// The clock of the server whose connection is running.
    static CLOCK: Arc<Clock>;
}

/// Waits `pause`, by the running server's clock or else the process's; none at all
/// when it is zero.
pub(crate) async fn sleep(pause: Duration) {
    if pause.is_zero() {
        return;
    }
    let at = Instant::now() + pause;
    match CLOCK.try_with(Arc::clone) {
        Ok(clock) => clock.until(at).await,
        Err(_) => process_sleep(at).await,
    }
}

/// One server's pauses, woken by a task on its runtime (see the module's docs).
#[derive(Debug)]
pub(crate) struct Clock {
    state: Mutex<State>,
    /// Tells the task that a pause ends before the one its timer is set for.
    rearm: Notify,
}

/// What a [`Clock`]'s task and its pauses share.
#[derive(Debug, Default)]
struct State {
    pending: BinaryHeap<Due>,
    seq: u64,
    /// When the timer is set to go off, if it is.
    armed: Option<Instant>,
}

impl Clock {
    /// A clock for a server on the current runtime, with the task that runs it (to be
    /// aborted with the server); `None` where this system or runtime has no `timerfd`
    /// to offer, and the process's clock serves instead.
    pub(crate) fn start() -> Option<(Arc<Clock>, JoinHandle<()>)> {
        let timer = timer::Timer::new().ok()?;
        let clock = Arc::new(Clock {
            state: Mutex::new(State::default()),
            rearm: Notify::new(),
        });
        let task = tokio::spawn(Arc::clone(&clock).run(timer));
        Some((clock, task))
    }

    /// `future` (a connection) with `clock`, if any, as the clock of its pauses.
    pub(crate) async fn scope<F: Future>(clock: Option<Arc<Clock>>, future: F) -> F::Output {
        match clock {
            Some(clock) => CLOCK.scope(clock, future).await,
            None => future.await,
        }
    }

    /// Waits until `at`.
    async fn until(&self, at: Instant) {
        let (wake, woken) = oneshot::channel();
        let first = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.seq += 1;
            let seq = state.seq;
            state.pending.push(Due { at, seq, wake });
            state.armed.is_none_or(|armed| at < armed)
        };
        if first {
            self.rearm.notify_one();
        }
        let _ = woken.await;
    }

    /// Wakes each pause when it is due, for as long as the server runs.
    async fn run(self: Arc<Self>, timer: timer::Timer) {
        loop {
            let next = {
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                wake_due(&mut state.pending, Instant::now());
                state.armed = state.pending.peek().map(|due| due.at);
                state.armed
            };
            let wait = next.map(|at| at.saturating_duration_since(Instant::now()));
            if wait.is_some_and(|wait| wait.is_zero()) {
                continue;
            }
            let expired = async {
                match (timer.set(wait), next) {
                    (Ok(()), _) => timer.expired().await,
                    // A timer that cannot be set (it never fails on Linux for a valid
                    // time) falls back to tokio's, a little late.
                    (Err(_), Some(at)) => tokio::time::sleep_until(at.into()).await,
                    (Err(_), None) => std::future::pending().await,
                }
            };
            tokio::select! {
                () = expired => {}
                () = self.rearm.notified() => {}
            }
        }
    }
}

/// Wakes every pause in `pending` that is due by `now`.
fn wake_due(pending: &mut BinaryHeap<Due>, now: Instant) {
    while pending.peek().is_some_and(|due| due.at <= now) {
        if let Some(due) = pending.pop() {
            let _ = due.wake.send(());
        }
    }
}

/// Waits until `at` by the process-wide clock thread.
async fn process_sleep(at: Instant) {
    let (wake, woken) = oneshot::channel();
    match process_timer().send(Due { at, seq: 0, wake }) {
        Ok(()) => {
            let _ = woken.await;
        }
        // The timer thread could not start: tokio's timer, a little late, still waits.
        Err(_) => tokio::time::sleep_until(at.into()).await,
    }
}

/// One pending pause.
#[derive(Debug)]
struct Due {
    at: Instant,
    /// The order pauses with the same end were asked in.
    seq: u64,
    wake: oneshot::Sender<()>,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    /// Reversed, so that the heap's top is the earliest end.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// The timer thread's inbox, started on first use.
fn process_timer() -> &'static mpsc::Sender<Due> {
    static TIMER: OnceLock<mpsc::Sender<Due>> = OnceLock::new();
    TIMER.get_or_init(|| {
        let (send, inbox) = mpsc::channel();
        // A thread that cannot start leaves the inbox dropped: every send fails, and
        // `sleep` falls back to tokio's timer.
        let _ = std::thread::Builder::new()
            .name("fake-clock".to_owned())
            .spawn(move || run(&inbox));
        send
    })
}

/// Wakes each pause when it is due, until no sender is left.
fn run(inbox: &mpsc::Receiver<Due>) {
    let mut pending: BinaryHeap<Due> = BinaryHeap::new();
    let mut seq = 0u64;
    loop {
        let now = Instant::now();
        wake_due(&mut pending, now);
        let next = match pending.peek() {
            Some(due) => inbox.recv_timeout(due.at - now),
            None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match next {
            Ok(mut due) => {
                seq += 1;
                due.seq = seq;
                pending.push(due);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// The clock's timer: a `timerfd` on the runtime's reactor.
#[cfg(target_os = "linux")]
mod timer {
    use std::io;
    use std::os::fd::OwnedFd;
    use std::time::Duration;

    use rustix::time::{
        Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
        timerfd_settime,
    };
    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    /// A one-shot timer whose expiry the runtime's reactor reports.
    #[derive(Debug)]
    pub(super) struct Timer(AsyncFd<OwnedFd>);

    impl Timer {
        /// A timer on the current runtime, not set.
        pub(super) fn new() -> io::Result<Timer> {
            let fd = timerfd_create(
                TimerfdClockId::Monotonic,
                TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
            )?;
            // Deprecated in favour of an `unsafe` registration whose contract (the
            // descriptor stays open and the same while registered) an `OwnedFd` moved
            // in keeps by itself; `unsafe_code` is forbidden here.
            #[allow(deprecated)]
            let fd = AsyncFd::with_interest(fd, Interest::READABLE)?;
            Ok(Timer(fd))
        }

        /// Sets the timer to go off once after `wait` (more than zero), or not at all
        /// when `None`; an expiry not yet read is forgotten.
        pub(super) fn set(&self, wait: Option<Duration>) -> io::Result<()> {
            let value = wait.map_or(Timespec::default(), |wait| Timespec {
                tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: wait.subsec_nanos().into(),
            });
            let spec = Itimerspec {
                it_interval: Timespec::default(),
                it_value: value,
            };
            timerfd_settime(self.0.get_ref(), TimerfdTimerFlags::empty(), &spec)?;
            Ok(())
        }

        /// Waits until the timer goes off (forever when the reactor is gone).
        pub(super) async fn expired(&self) {
            loop {
                let Ok(mut ready) = self.0.readable().await else {
                    return std::future::pending().await;
                };
                let mut count = [0u8; 8];
                match rustix::io::read(self.0.get_ref(), &mut count[..]) {
                    Err(rustix::io::Errno::AGAIN) => ready.clear_ready(),
                    _ => return,
                }
            }
        }
    }
}

/// No `timerfd` here: every clock falls back to the process's.
#[cfg(not(target_os = "linux"))]
mod timer {
    use std::io;
    use std::time::Duration;

    /// Never made.
    #[derive(Debug)]
    pub(super) struct Timer;

    impl Timer {
        pub(super) fn new() -> io::Result<Timer> {
            Err(io::ErrorKind::Unsupported.into())
        }

        pub(super) fn set(&self, _wait: Option<Duration>) -> io::Result<()> {
            Err(io::ErrorKind::Unsupported.into())
        }

        pub(super) async fn expired(&self) {
            std::future::pending().await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pauses_end_on_time_and_in_order() {
        let started = Instant::now();
        let (a, b, zero) = tokio::join!(
            async {
                sleep(Duration::from_millis(30)).await;
                started.elapsed()
            },
            async {
                sleep(Duration::from_millis(10)).await;
                started.elapsed()
            },
            async {
                sleep(Duration::ZERO).await;
                started.elapsed()
            },
        );
        assert!(zero < Duration::from_millis(10), "{zero:?}");
        assert!(b >= Duration::from_millis(10) && b < a, "{b:?} {a:?}");
        assert!(a >= Duration::from_millis(30), "{a:?}");
    }

    #[tokio::test]
    async fn a_pause_whose_waiter_is_gone_does_not_stop_the_others() {
        let dropped =
            tokio::time::timeout(Duration::from_millis(1), sleep(Duration::from_secs(60)));
        assert!(dropped.await.is_err());
        let started = Instant::now();
        sleep(Duration::from_millis(5)).await;
        assert!(started.elapsed() >= Duration::from_millis(5));
    }

    #[cfg(target_os = "linux")]
    /// The pauses of a server's connections, kept by its clock's task.
    async fn on_a_server_clock<F: Future>(future: F) -> F::Output {
        let (clock, task) = Clock::start().expect("a timerfd on Linux");
        let out = Clock::scope(Some(Arc::clone(&clock)), future).await;
        task.abort();
        out
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_servers_pauses_end_on_time_and_in_order_on_its_own_clock() {
        let started = Instant::now();
        let (long, short, zero, kept) = on_a_server_clock(async {
            tokio::join!(
                async {
                    sleep(Duration::from_millis(60)).await;
                    started.elapsed()
                },
                async {
                    // Asked for after the long pause, and ending before it: the
                    // clock's timer is set again for it.
                    tokio::task::yield_now().await;
                    sleep(Duration::from_millis(5)).await;
                    started.elapsed()
                },
                async {
                    sleep(Duration::ZERO).await;
                    started.elapsed()
                },
                async {
                    // Kept by the server's clock, not the process's thread.
                    CLOCK.with(|clock| clock.state.lock().map(|s| s.pending.len()).ok())
                },
            )
        })
        .await;
        assert!(zero < Duration::from_millis(5), "{zero:?}");
        assert!(short >= Duration::from_millis(5), "{short:?}");
        assert!(
            short < Duration::from_millis(45),
            "{short:?} waited for {long:?}"
        );
        assert!(long >= Duration::from_millis(60), "{long:?}");
        assert_eq!(kept, Some(1), "the long pause waits on the server's clock");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_servers_clock_drops_a_pause_whose_waiter_is_gone() {
        let waited = on_a_server_clock(async {
            let dropped =
                tokio::time::timeout(Duration::from_millis(1), sleep(Duration::from_secs(60)));
            assert!(dropped.await.is_err());
            let started = Instant::now();
            sleep(Duration::from_millis(5)).await;
            started.elapsed()
        })
        .await;
        assert!(waited >= Duration::from_millis(5), "{waited:?}");
        assert!(waited < Duration::from_secs(30), "{waited:?}");
    }
}
