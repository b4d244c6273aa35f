//! Which case and sample the running code works for: a task-local the engine sets
//! around each sample ([`in_sample`]) and the connectors read ([`current`]), so that a
//! request deep in a connector can be recorded and replayed by case and sample index
//! (`prill run --record` / `--replay`, `docs/cassettes.md`) without every signature
//! carrying it.
//!
//! A task-local does not cross `tokio::spawn`: read it in the task that sends the
//! request.
//!
//! ```
//! use prill_target::scope::{SampleScope, current, in_sample};
//!
//! let runtime = tokio::runtime::Builder::new_current_thread().build()?;
//! runtime.block_on(async {
//!     assert!(current().is_none());
//!     let scope = SampleScope::new("3f2a9c", "capital of France", 2);
//!     let seen = in_sample(scope.clone(), async { current() }).await;
//!     assert_eq!(seen, Some(scope));
//! });
//! # Ok::<(), std::io::Error>(())
//! ```

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use prill_spec::plan::under::Under;

/// A case and one of its samples, and how many of its exchanges the cassettes answered
/// or recorded (shared by its clones).
#[derive(Debug, Clone)]
pub struct SampleScope {
    /// The case's stable id (the report format's `UnitId.case_id`).
    pub case: Arc<str>,
    /// The case's name, for the names of the files that keep what it sent.
    pub name: Arc<str>,
    /// The sample's index, from 0.
    pub sample: u32,
    /// What the case is made of now ([`Under::of`]), written on every exchange it records
    /// and compared with what a replayed one was recorded under; none when the engine
    /// does not say.
    pub under: Option<Arc<Under>>,
    taped: Arc<[AtomicU32; 2]>,
}

impl SampleScope {
    /// The scope of sample `sample` of the case with id `case` and name `name`.
    pub fn new(case: impl Into<Arc<str>>, name: impl Into<Arc<str>>, sample: u32) -> SampleScope {
        SampleScope {
            case: case.into(),
            name: name.into(),
            sample,
            under: None,
            taped: Arc::default(),
        }
    }

    /// The scope, its case made of `under`.
    pub fn under(mut self, under: Arc<Under>) -> SampleScope {
        self.under = Some(under);
        self
    }

    /// Counts an exchange of the sample that a cassette answered.
    pub fn note_replayed(&self) {
        self.taped[0].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts an exchange of the sample that went live and was recorded.
    pub fn note_recorded(&self) {
        self.taped[1].fetch_add(1, Ordering::Relaxed);
    }

    /// How many of the sample's exchanges were replayed, and how many recorded, so far.
    pub fn taped(&self) -> (u32, u32) {
        (
            self.taped[0].load(Ordering::Relaxed),
            self.taped[1].load(Ordering::Relaxed),
        )
    }
}

/// A scope is its case and sample; what its exchanges were is not its identity.
impl PartialEq for SampleScope {
    fn eq(&self, other: &Self) -> bool {
        self.case == other.case && self.name == other.name && self.sample == other.sample
    }
}

impl Eq for SampleScope {}

impl std::hash::Hash for SampleScope {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.case.hash(state);
        self.name.hash(state);
        self.sample.hash(state);
    }
}

tokio::task_local! {
    static SCOPE: SampleScope;
}

/// Runs `future` as sample `scope`. Not an `async fn`: that would hold `future` twice
/// (its argument and the scoped future), doubling what every sample task holds.
pub fn in_sample<F: Future>(scope: SampleScope, future: F) -> impl Future<Output = F::Output> {
    SCOPE.scope(scope, future)
}

/// The sample the current task works for, if any.
pub fn current() -> Option<SampleScope> {
    SCOPE.try_with(Clone::clone).ok()
}
