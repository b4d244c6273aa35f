//! Per-provider limits from `prill.toml`: the most requests in flight at once, and the
//! most requests started per minute (starts are spaced evenly, 60 s / rpm apart).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// A provider's limits, shared by every call to it.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    in_flight: Option<Arc<Semaphore>>,
    spacing: Option<(Duration, Arc<Mutex<Option<Instant>>>)>,
}

impl Limits {
    /// No limit.
    pub fn none() -> Limits {
        Limits::default()
    }

    /// At most `max_concurrency` calls at once and `requests_per_minute` starts a minute.
    pub fn new(max_concurrency: Option<u32>, requests_per_minute: Option<u32>) -> Limits {
        Limits {
            in_flight: max_concurrency.map(|n| Arc::new(Semaphore::new(n.max(1) as usize))),
            spacing: requests_per_minute.map(|rpm| {
                (
                    Duration::from_secs_f64(60.0 / f64::from(rpm.max(1))),
                    Arc::new(Mutex::new(None)),
                )
            }),
        }
    }

    /// Waits until a call may start (a place among the calls in flight, then a rate
    /// slot); hold the returned guard for the call's duration.
    pub async fn acquire(&self) -> Option<OwnedSemaphorePermit> {
        let permit = self.in_flight().await;
        self.pace().await;
        permit
    }

    /// Waits for a place among the calls in flight; hold the guard for the call.
    pub async fn in_flight(&self) -> Option<OwnedSemaphorePermit> {
        match &self.in_flight {
            Some(semaphore) => Arc::clone(semaphore).acquire_owned().await.ok(),
            None => None,
        }
    }

    /// Waits for the next rate slot: every request sent takes one, each attempt of a
    /// retried call included, so the provider never sees more than the configured rate.
    pub async fn pace(&self) {
        if let Some((gap, last)) = &self.spacing {
            let mut last = last.lock().await;
            let now = Instant::now();
            let start = match *last {
                Some(previous) if previous + *gap > now => previous + *gap,
                _ => now,
            };
            *last = Some(start);
            drop(last);
            tokio::time::sleep_until(start).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn starts_are_spaced_by_the_rate() {
        let limits = Limits::new(None, Some(600));
        let begin = Instant::now();
        for _ in 0..4 {
            let _ = limits.acquire().await;
        }
        // 600 a minute is one per 100 ms: the 4th starts 300 ms after the 1st.
        assert_eq!(Instant::now() - begin, Duration::from_millis(300));
    }

    #[tokio::test]
    async fn concurrency_is_bounded() {
        let limits = Limits::new(Some(2), None);
        let a = limits.acquire().await;
        let b = limits.acquire().await;
        assert!(a.is_some() && b.is_some());
        let third = tokio::time::timeout(Duration::from_millis(50), limits.acquire()).await;
        assert!(third.is_err(), "a third call waits while two are in flight");
        drop(a);
        assert!(
            tokio::time::timeout(Duration::from_secs(5), limits.acquire())
                .await
                .is_ok()
        );
    }
}
