//! Helpers shared by the suites: building checks, running them, and test judges.

use std::sync::Mutex;

use prill_check::{
    BoxFuture, CheckResult, Judge, JudgeError, JudgeVerdict, Response, Status, run_check,
};
use prill_spec::model::data_driven::StockTest;
use prill_spec::plan::{Check, CheckKind, Part};
use serde_json::Value;

/// The field path as owned strings.
pub(crate) fn field(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

/// A stock check by the name a file gives it (`value`, `not_keywords`, ...).
pub(crate) fn stock(part: Part, names: &[&str], name: &str, expected: Value) -> Check {
    let (test, negated) =
        StockTest::from_name(name).unwrap_or_else(|| panic!("`{name}` is not a stock test"));
    Check {
        location: None,
        path: format!("test.{}.{name}", part.name()).into(),
        kind: CheckKind::Stock {
            part,
            field: field(names),
            test,
            negated,
            expected: Box::new(expected),
        },
    }
}

/// A presence (`{}`) check.
pub(crate) fn present(part: Part, names: &[&str]) -> Check {
    Check {
        location: None,
        path: format!("test.{}.present", part.name()).into(),
        kind: CheckKind::Present {
            part,
            field: field(names),
        },
    }
}

/// Runs one check to completion.
pub(crate) fn run(check: &Check, response: &Response, judge: Option<&dyn Judge>) -> CheckResult {
    futures::executor::block_on(run_check(check, response, judge))
}

/// Runs one check with no judge.
pub(crate) fn run_plain(check: &Check, response: &Response) -> CheckResult {
    run(check, response, None)
}

/// Whether a result passed.
pub(crate) fn passed(result: &CheckResult) -> bool {
    result.status() == Status::Passed
}

/// A judge that decides deterministically: a sample passes iff it contains `marker`.
/// It records every `(criteria, sample)` pair it was asked about.
pub(crate) struct MarkerJudge {
    marker: String,
    seen: Mutex<Vec<(String, String)>>,
}

impl MarkerJudge {
    /// A judge passing the samples that contain `marker`.
    pub(crate) fn new(marker: &str) -> MarkerJudge {
        MarkerJudge {
            marker: marker.to_owned(),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// Every `(criteria, sample)` pair judged so far, in order.
    pub(crate) fn seen(&self) -> Vec<(String, String)> {
        self.seen.lock().expect("not poisoned").clone()
    }
}

impl Judge for MarkerJudge {
    fn judge<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<JudgeVerdict, JudgeError>> {
        Box::pin(async move {
            self.seen
                .lock()
                .expect("not poisoned")
                .push((criteria.to_owned(), sample.to_owned()));
            let pass = sample.contains(&self.marker);
            let reason = if pass {
                format!("the sample carries {}", self.marker)
            } else {
                format!("the sample lacks {}", self.marker)
            };
            Ok(JudgeVerdict::new(pass, reason))
        })
    }
}
