//! The open-file limit against `--jobs`: every sample in flight holds a few file
//! descriptors (a connection, or a command's three pipes), so a `--jobs` above what the
//! soft limit allows turns cases into "too many open files" errors. [`fit_open_files`]
//! raises the soft limit to the hard one where the platform allows, and says up front
//! when `jobs` still cannot fit.

/// The file descriptors one sample in flight may hold at once: a command's stdin,
/// stdout and stderr and one more, or a connection with room to spare.
pub const FILES_PER_JOB: u64 = 4;

/// The file descriptors a run holds whatever its jobs: standard streams, reports, the
/// runtime, a demo server.
pub const FILES_BASE: u64 = 64;

/// What a run of `jobs` samples in flight needs of the open-file limit.
pub fn files_needed(jobs: usize) -> u64 {
    FILES_BASE + FILES_PER_JOB * jobs as u64
}

/// Raises this process's soft open-file limit to its hard limit (unix), and returns a
/// warning when `jobs` samples in flight may still need more than the limit allows.
/// Nothing to say: `None`.
pub fn fit_open_files(jobs: usize) -> Option<String> {
    let needed = files_needed(jobs);
    let soft = raise_soft_limit()?;
    (needed > soft).then(|| {
        let fits = soft.saturating_sub(FILES_BASE) / FILES_PER_JOB;
        format!(
            "warning: --jobs {jobs} may need {needed} open files, and this process may open {soft} (`ulimit -n`); some samples may error with \"too many open files\": raise the limit or use --jobs {}",
            fits.max(1)
        )
    })
}

/// The soft limit after raising it to the hard one; `None` where there is none or it
/// cannot be read.
#[cfg(unix)]
fn raise_soft_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let soft = limit.current?;
    if limit.maximum.is_none_or(|hard| hard > soft) {
        let raised = Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            return limit.maximum.or(Some(u64::MAX));
        }
    }
    Some(soft)
}

#[cfg(not(unix))]
fn raise_soft_limit() -> Option<u64> {
    None
}
