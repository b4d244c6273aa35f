//! `max_latency_ms`: the response took at most this many milliseconds. A response
//! whose latency was never recorded cannot be checked: that is an error, not a fail.

use std::time::Duration;

use crate::evaluation::Evaluation;

use super::AssertionError;

/// What the assertion looks at.
pub(super) const TARGET: &str = "latency";

/// Whether `latency` is at most `max` milliseconds.
pub(super) fn evaluate(
    max: u64,
    latency: Option<Duration>,
) -> Result<(Evaluation, String), AssertionError> {
    let latency = latency.ok_or(AssertionError::LatencyNotRecorded)?;
    // Compare durations, not floats: `as_secs_f64() * 1000.0` rounds 1132 ms to
    // 1132.0000000000002, which failed a response that took exactly the limit.
    let passed = latency <= Duration::from_millis(max);
    let ms = latency.as_nanos() as f64 / 1e6;
    let message = if passed {
        format!("took {ms:.0} ms, within {max} ms")
    } else {
        format!("expected at most {max} ms, took {ms:.0} ms")
    };
    Ok((
        Evaluation::pass_fail(passed).with("latency_ms", ms),
        message,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    #[test]
    fn the_limit_itself_passes_and_an_unrecorded_latency_errors() {
        let at = |ms| evaluate(100, Some(Duration::from_millis(ms))).unwrap();
        assert_eq!(at(100).0.status(), Status::Passed);
        assert_eq!(at(100).1, "took 100 ms, within 100 ms");
        assert_eq!(at(101).0.status(), Status::Failed);
        assert_eq!(at(101).1, "expected at most 100 ms, took 101 ms");
        // The float rounding that once failed a response of exactly the limit.
        assert_eq!(
            evaluate(1132, Some(Duration::from_millis(1132)))
                .unwrap()
                .0
                .status(),
            Status::Passed
        );
        assert_eq!(
            evaluate(100, None).unwrap_err(),
            AssertionError::LatencyNotRecorded
        );
    }
}
