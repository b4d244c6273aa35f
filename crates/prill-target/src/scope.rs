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

/// A case and one of its samples.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SampleScope {
    /// The case's stable id (the report format's `UnitId.case_id`).
    pub case: Arc<str>,
    /// The case's name, for the names of the files that keep what it sent.
    pub name: Arc<str>,
    /// The sample's index, from 0.
    pub sample: u32,
}

impl SampleScope {
    /// The scope of sample `sample` of the case with id `case` and name `name`.
    pub fn new(case: impl Into<Arc<str>>, name: impl Into<Arc<str>>, sample: u32) -> SampleScope {
        SampleScope {
            case: case.into(),
            name: name.into(),
            sample,
        }
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
