//! [`Status`]: the one vocabulary for how anything came out, from one evaluation to a
//! whole unit, in every crate and every report (`"passed"`, `"failed"`, `"errored"`,
//! `"inconclusive"`, `"unscored"`, `"skipped"`).
//!
//! | what | can be |
//! |---|---|
//! | an [`Evaluation`](crate::Evaluation) | passed, failed, unscored |
//! | a check ([`CheckResult`](crate::CheckResult)) | passed, failed, unscored, errored |
//! | a sample, a suite case, an assessed sample | passed, failed, errored |
//! | a unit's verdict | passed, failed, errored, inconclusive, skipped |
//!
//! *Failed* means a wrong answer; *errored* means the answer could not be judged (the
//! agent could not be reached, timed out or broke the protocol, or a check could not be
//! evaluated). *Inconclusive* is a `reliability` gate that ran out of samples before it
//! could tell a good agent from a bad one: never a pass. Reports and exit codes keep them
//! apart.

use serde::{Deserialize, Serialize};

/// How something came out. See the module documentation for which values each level
/// can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It passed: every threshold held, enough samples passed.
    Passed,
    /// It failed: the answer was wrong.
    Failed,
    /// It could not be judged.
    Errored,
    /// A `reliability` gate reached its `max_samples` without deciding.
    Inconclusive,
    /// A score with no threshold: reported, neither passed nor failed.
    Unscored,
    /// It did not run (cancelled before it started).
    Skipped,
}

impl Status {
    /// The name reports use: `passed`, `failed`, `errored`, `inconclusive`,
    /// `unscored`, `skipped`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Errored => "errored",
            Status::Inconclusive => "inconclusive",
            Status::Unscored => "unscored",
            Status::Skipped => "skipped",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn names_are_the_serialized_form() {
        for s in [
            Status::Passed,
            Status::Failed,
            Status::Errored,
            Status::Unscored,
            Status::Skipped,
        ] {
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::json!(s.name())
            );
        }
    }
}
