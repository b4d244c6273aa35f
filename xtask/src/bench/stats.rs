//! What the runs of one workload come to: medians, the range of wall times, and the
//! ideal wall time a workload could take.

use super::measure::Sample;

/// The runs of one workload by one tool, summed up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub(crate) runs: usize,
    pub(crate) wall_median: f64,
    pub(crate) wall_min: f64,
    pub(crate) wall_max: f64,
    pub(crate) cpu_median: f64,
    pub(crate) rss_median_mb: f64,
}

impl Summary {
    /// The summary of `samples`; `None` when there are none.
    pub(crate) fn of(samples: &[Sample]) -> Option<Summary> {
        let walls: Vec<f64> = samples.iter().map(|s| s.wall).collect();
        let cpus: Vec<f64> = samples.iter().map(|s| s.cpu).collect();
        let rss: Vec<f64> = samples.iter().map(Sample::rss_mb).collect();
        Some(Summary {
            runs: samples.len(),
            wall_median: median(&walls)?,
            wall_min: walls.iter().copied().fold(f64::INFINITY, f64::min),
            wall_max: walls.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            cpu_median: median(&cpus)?,
            rss_median_mb: median(&rss)?,
        })
    }
}

/// The median of `values`: the middle one, or the mean of the two middle ones.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The least wall time `tests` model calls of `latency_ms` each can take with at most
/// `jobs` in flight: `ceil(tests / jobs) × latency`, in seconds.
pub(crate) fn ideal(tests: usize, jobs: usize, latency_ms: u64) -> f64 {
    let rounds = tests.div_ceil(jobs.max(1));
    rounds as f64 * latency_ms as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn the_ideal_rounds_up_to_whole_waves() {
        assert_eq!(ideal(10_000, 200, 20), 1.0);
        assert_eq!(ideal(10_000, 50, 20), 4.0);
        assert_eq!(ideal(100_000, 500, 20), 4.0);
        assert_eq!(ideal(1_000, 300, 20), 0.08);
    }

    #[test]
    fn summaries_take_medians_and_the_range() {
        let sample = |wall, cpu, rss_kib| Sample { wall, cpu, rss_kib };
        let runs = [
            sample(1.5, 1.0, 2048),
            sample(1.25, 0.5, 1024),
            sample(2.0, 0.75, 4096),
        ];
        let summary = Summary::of(&runs).unwrap();
        assert_eq!(summary.runs, 3);
        assert_eq!(
            (summary.wall_median, summary.wall_min, summary.wall_max),
            (1.5, 1.25, 2.0)
        );
        assert_eq!((summary.cpu_median, summary.rss_median_mb), (0.75, 2.0));
        assert_eq!(Summary::of(&[]), None);
    }
}
