//! Prill's targets (issue 21), checked against the medians of a run of the benchmark.

use std::fmt;

use super::stats::Summary;

/// What a target is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subject {
    /// `prill run` of `tests` tests at `-j jobs`.
    Run { tests: usize, jobs: usize },
    /// `prill list` of `tests` tests: loading and planning.
    List { tests: usize },
    /// `prill run` of the long-answer suite ([`super::long`]) at `-j jobs`.
    LongAnswers {
        source: super::long::Source,
        jobs: usize,
    },
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Run { tests, jobs } => {
                write!(f, "`prill run`, {} tests, -j {jobs}", thousands(*tests))
            }
            Subject::List { tests } => write!(f, "`prill list`, {} tests", thousands(*tests)),
            Subject::LongAnswers { source, jobs } => write!(
                f,
                "`prill run`, {} tests answered {} MiB each by {source}, -j {jobs}",
                super::long::TESTS,
                super::long::ANSWER_BYTES >> 20
            ),
        }
    }
}

/// Which measure of a [`Summary`] a target bounds (its median).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Measure {
    /// Wall seconds.
    Wall,
    /// CPU seconds, user + system.
    Cpu,
    /// Peak RSS in MB.
    Rss,
}

impl Measure {
    /// The name and unit, for the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Measure::Wall => "wall",
            Measure::Cpu => "CPU",
            Measure::Rss => "peak RSS",
        }
    }

    /// `value` with its unit.
    pub(crate) fn format(self, value: f64) -> String {
        match self {
            Measure::Wall | Measure::Cpu => format!("{value:.2} s"),
            Measure::Rss => format!("{value:.1} MB"),
        }
    }

    fn of(self, summary: &Summary) -> f64 {
        match self {
            Measure::Wall => summary.wall_median,
            Measure::Cpu => summary.cpu_median,
            Measure::Rss => summary.rss_median_mb,
        }
    }
}

/// An upper bound on the median of one measure of one workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Target {
    pub(crate) subject: Subject,
    pub(crate) measure: Measure,
    pub(crate) limit: f64,
}

const fn target(subject: Subject, measure: Measure, limit: f64) -> Target {
    Target {
        subject,
        measure,
        limit,
    }
}

const RUN_10K_200: Subject = Subject::Run {
    tests: 10_000,
    jobs: 200,
};
const RUN_10K_50: Subject = Subject::Run {
    tests: 10_000,
    jobs: 50,
};
const RUN_100K_500: Subject = Subject::Run {
    tests: 100_000,
    jobs: 500,
};
const LIST_10K: Subject = Subject::List { tests: 10_000 };
const fn long(source: super::long::Source, jobs: usize) -> Subject {
    Subject::LongAnswers { source, jobs }
}
const PROVIDER: super::long::Source = super::long::Source::Provider;
const DIRECT: super::long::Source = super::long::Source::Direct;

/// Prill's targets against the fake server at 20 ms (the 100,000-test one runs only
/// with `--large`, the long answers only with `--long-answers`). A long answer is
/// 21 MB: one at a time, a run stays within 12 of them; twenty at once (420 MB of
/// answers in flight), within 2.5 times what is in flight.
pub(crate) const TARGETS: [Target; 12] = [
    target(RUN_10K_200, Measure::Wall, 1.5),
    target(RUN_10K_200, Measure::Cpu, 1.6),
    target(RUN_10K_200, Measure::Rss, 48.0),
    target(RUN_10K_50, Measure::Wall, 4.6),
    target(RUN_100K_500, Measure::Wall, 10.0),
    target(RUN_100K_500, Measure::Rss, 170.0),
    target(LIST_10K, Measure::Wall, 0.12),
    target(LIST_10K, Measure::Rss, 25.0),
    target(long(PROVIDER, 1), Measure::Rss, 250.0),
    target(long(PROVIDER, 20), Measure::Rss, 1050.0),
    target(long(DIRECT, 1), Measure::Rss, 250.0),
    target(long(DIRECT, 20), Measure::Rss, 1050.0),
];

/// A target and the median it was checked against (`None`: that workload did not run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Outcome {
    pub(crate) target: Target,
    pub(crate) value: Option<f64>,
}

impl Outcome {
    /// Whether the target was met; `None` when it was not measured.
    pub(crate) fn met(&self) -> Option<bool> {
        self.value.map(|v| v <= self.target.limit)
    }

    /// `wall of `prill run`, 10,000 tests, -j 200: 1.45 s > 1.30 s`.
    pub(crate) fn describe(&self) -> String {
        let t = &self.target;
        let value = self
            .value
            .map_or("not measured".to_owned(), |v| t.measure.format(v));
        let relation = match self.met() {
            Some(true) => "≤",
            Some(false) => ">",
            None => "vs",
        };
        format!(
            "{} of {}: {value} {relation} {}",
            t.measure.name(),
            t.subject,
            t.measure.format(t.limit)
        )
    }
}

/// Checks every target of `targets` against the summary `find` gives for its subject.
pub(crate) fn check(targets: &[Target], find: impl Fn(Subject) -> Option<Summary>) -> Vec<Outcome> {
    targets
        .iter()
        .map(|&target| Outcome {
            target,
            value: find(target.subject).map(|s| target.measure.of(&s)),
        })
        .collect()
}

/// `12345` as `12,345`.
pub(crate) fn thousands(n: usize) -> String {
    prill_spec::files::thousands(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(wall: f64, cpu: f64, rss: f64) -> Summary {
        Summary {
            runs: 3,
            wall_median: wall,
            wall_min: wall,
            wall_max: wall,
            cpu_median: cpu,
            rss_median_mb: rss,
        }
    }

    #[test]
    fn targets_are_met_missed_or_not_measured() {
        let outcomes = check(&TARGETS, |subject| match subject {
            RUN_10K_200 => Some(summary(1.25, 1.7, 40.0)),
            RUN_10K_50 => Some(summary(4.7, 1.0, 30.0)),
            LIST_10K => Some(summary(0.05, 0.05, 12.0)),
            _ => None,
        });
        let met: Vec<Option<bool>> = outcomes.iter().map(Outcome::met).collect();
        assert_eq!(
            met,
            [
                Some(true),
                Some(false),
                Some(true),
                Some(false),
                None,
                None,
                Some(true),
                Some(true),
                None,
                None,
                None,
                None
            ]
        );
        assert_eq!(
            outcomes[1].describe(),
            "CPU of `prill run`, 10,000 tests, -j 200: 1.70 s > 1.60 s"
        );
        assert_eq!(
            outcomes[4].describe(),
            "wall of `prill run`, 100,000 tests, -j 500: not measured vs 10.00 s"
        );
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(7), "7");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
