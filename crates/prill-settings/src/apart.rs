//! [`prepare_apart`]: [`prepare`] on a thread of its own, which then frees the cases the
//! run hands back to it ([`RunOptions::finished_cases`](prill_run::RunOptions)).
//!
//! Why a thread, and why it stays: the allocator (mimalloc) gives a freed block back to
//! the heap of the thread that allocated it, and returns a heap's empty pages to the
//! system only when that thread next uses the allocator. A suite's cases are made by
//! the thread that loads it and freed, as their units end, by the run's workers. Loaded
//! on a thread that then ended, their pages had no owner to return them: a run of
//! 100,000 tests held 17 MB more at its peak than with the allocator told to reclaim
//! such pages on free (`docs/performance.md`, eighth round). Kept alive, the loading
//! thread frees the cases itself, a batch every few milliseconds, and their pages go
//! back to the system as the run goes. Loading apart also leaves what loading frees
//! (each file's tree, its document) out of the main thread's heap.

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use prill_run::select::NoTests;
use prill_run::{CaseSink, Selection};
use prill_spec::plan::Case;

use crate::drive::{Prepared, prepare};
use crate::settings::Settings;

/// How often the loading thread frees the cases handed back to it.
const EVERY: Duration = Duration::from_millis(10);

/// The fewest cases for which the loading thread stays to free them. It keeps what
/// loading freed in its heap too (the file's text, the parser's and validator's
/// leftovers), which a thread that ends gives back at once: 10,000 tests at -j 200
/// peaked 5–9 MB higher with the thread kept (about 40 MB in all), 100,000 at -j 500
/// 5–20 MB lower (134–136 MB against 138–157), builds without LTO, alternating.
const HAND_BACK_FROM: usize = 50_000;

/// The loading thread's stack: the main thread's, for the deepest files the limits allow.
const STACK: usize = 8 << 20;

/// [`prepare`], on a thread of its own, and the sink that hands a run's finished cases
/// back to that thread to be freed (for [`RunOptions::finished_cases`](prill_run::RunOptions)).
/// The thread ends once every clone of the sink is dropped. A plan of fewer than
/// 50,000 cases gets no sink (the thread ends at once: below that, what it would keep
/// of loading outweighs what it gives back), nor does one loaded here because no
/// thread could be had.
///
/// # Panics
///
/// When loading panics, the panic is resumed here.
#[must_use]
pub fn prepare_apart(
    settings: &Settings,
    paths: &[PathBuf],
    selection: &Selection,
    no_tests: Option<NoTests>,
) -> (Prepared, Option<CaseSink>) {
    apart_from(settings, paths, selection, no_tests, HAND_BACK_FROM)
}

/// [`prepare_apart`], handing cases back from `hand_back_from` cases on.
fn apart_from(
    settings: &Settings,
    paths: &[PathBuf],
    selection: &Selection,
    no_tests: Option<NoTests>,
    hand_back_from: usize,
) -> (Prepared, Option<CaseSink>) {
    let (give, prepared) = mpsc::sync_channel::<Prepared>(1);
    let (alive, ended) = mpsc::channel::<()>();
    let handed: Arc<Mutex<Vec<Case>>> = Arc::default();
    let work = {
        let (settings, paths, selection) = (settings.clone(), paths.to_vec(), selection.clone());
        let handed = Arc::clone(&handed);
        move || {
            let _ = give.send(prepare(&settings, &paths, &selection, no_tests));
            drop((settings, paths, selection));
            free_until_ended(&handed, &ended);
        }
    };
    let thread = std::thread::Builder::new()
        .name("load".into())
        .stack_size(STACK)
        .spawn(work);
    let Ok(thread) = thread else {
        return (prepare(settings, paths, selection, no_tests), None);
    };
    match prepared.recv() {
        // A small plan: the thread ends now, and with it what loading left in its heap,
        // before the run starts.
        Ok(prepared) if prepared.plan.cases.len() < hand_back_from => {
            drop(alive);
            let _ = thread.join();
            (prepared, None)
        }
        Ok(prepared) => {
            let back = HandBack {
                handed,
                _alive: alive,
            };
            let sink: CaseSink = Arc::new(move |case| back.push(case));
            (prepared, Some(sink))
        }
        // The thread ended without a result: it panicked.
        Err(_) => match thread.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => (prepare(settings, paths, selection, no_tests), None),
        },
    }
}

/// What the sink holds: the cases waiting to be freed, and the loading thread's
/// reason to go on (it ends once this is dropped).
struct HandBack {
    handed: Arc<Mutex<Vec<Case>>>,
    _alive: mpsc::Sender<()>,
}

impl HandBack {
    fn push(&self, case: Case) {
        self.handed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(case);
    }
}

/// Frees what is handed back every [`EVERY`] until `ended`'s sender is dropped.
fn free_until_ended(handed: &Mutex<Vec<Case>>, ended: &mpsc::Receiver<()>) {
    loop {
        let over = matches!(
            ended.recv_timeout(EVERY),
            Err(RecvTimeoutError::Disconnected)
        );
        let batch = std::mem::take(&mut *handed.lock().unwrap_or_else(PoisonError::into_inner));
        drop(batch);
        if over {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Overrides;

    /// A project of two Sentinel tests, and its settings.
    fn project() -> (tempfile::TempDir, Settings) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("suite.yaml"),
            "name: s\ndefaults: {model: m, provider: openai}\ntests:\n  - name: one\n    inputs: {query: one}\n    assertions: [{must_contain: a}]\n  - name: two\n    inputs: {query: two}\n    assertions: [{must_contain: a}]\n",
        )
        .unwrap();
        let settings = Settings::load_from(
            dir.path(),
            None,
            prill_spec::Env::default(),
            Overrides::default(),
        )
        .unwrap();
        (dir, settings)
    }

    #[test]
    fn a_small_plan_is_the_plan_prepare_makes_and_gets_no_sink() {
        let (dir, settings) = project();
        let paths = [dir.path().to_path_buf()];
        let (apart, sink) = prepare_apart(&settings, &paths, &Selection::all(), None);
        let here = prepare(&settings, &paths, &Selection::all(), None);
        assert_eq!(apart.plan.cases.len(), 2, "{:?}", apart.inputs.reports());
        assert_eq!(apart.plan, here.plan);
        assert!(
            sink.is_none(),
            "2 cases are under the hand-back's threshold"
        );
    }

    #[test]
    fn a_large_plan_gets_a_sink_that_takes_its_cases() {
        let (dir, settings) = project();
        let paths = [dir.path().to_path_buf()];
        let (mut prepared, sink) = apart_from(&settings, &paths, &Selection::all(), None, 2);
        assert_eq!(prepared.plan.cases.len(), 2);
        let sink = sink.expect("a plan at the threshold gets a sink");
        for case in std::mem::take(&mut prepared.plan.cases) {
            sink(case);
        }
        // The loading thread ends with the last clone of the sink; nothing waits for it.
        drop(sink);
    }

    #[test]
    fn the_thread_frees_what_it_is_handed_and_ends_with_the_sink() {
        let handed = Arc::new(Mutex::new(Vec::new()));
        let (alive, ended) = mpsc::channel::<()>();
        let thread = {
            let handed = Arc::clone(&handed);
            std::thread::spawn(move || free_until_ended(&handed, &ended))
        };
        let loaded = prill_spec::load_str(
            std::path::Path::new("a.hocon"),
            "agent = a, connections = [direct], interactions = [{ text = hi }]",
            &prill_spec::Env::default(),
            prill_spec::Unrecognized::Error,
        )
        .unwrap();
        {
            let mut waiting = handed.lock().unwrap();
            waiting.extend(loaded.cases());
            assert_eq!(waiting.len(), 1, "one case handed back");
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !handed.lock().unwrap().is_empty() {
            assert!(
                std::time::Instant::now() < deadline,
                "the case was never freed"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(alive);
        thread.join().unwrap();
    }
}
