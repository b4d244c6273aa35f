//! The fakes' pauses, kept to the time asked for.
//!
//! tokio's timer counts in whole milliseconds, rounds a deadline up to the next one and
//! fires on its driver's next turn: a 20 ms pause took 21.5–21.6 ms on loopback
//! (measured with curl against `fake-openai --latency-ms 20`), so a benchmark that
//! counts on the fake "answering in 20 ms" was 8% slower than its ideal before the
//! client did anything. Here one thread keeps every pending pause in a heap and sleeps
//! until the earliest ends (the kernel wakes it within its timer slack, about 50 µs),
//! then wakes each pause that is due. A pause whose waiter is gone (its connection
//! closed) is dropped when it falls due.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::OnceLock;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// Waits `pause` by the process's clock; none at all when it is zero.
pub(crate) async fn sleep(pause: Duration) {
    if pause.is_zero() {
        return;
    }
    let at = Instant::now() + pause;
    let (wake, woken) = oneshot::channel();
    match timer().send(Due { at, seq: 0, wake }) {
        Ok(()) => {
            let _ = woken.await;
        }
        // The timer thread could not start: tokio's timer, a little late, still waits.
        Err(_) => tokio::time::sleep_until(at.into()).await,
    }
}

/// One pending pause.
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
fn timer() -> &'static mpsc::Sender<Due> {
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
        while pending.peek().is_some_and(|due| due.at <= now) {
            if let Some(due) = pending.pop() {
                let _ = due.wake.send(());
            }
        }
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
}
