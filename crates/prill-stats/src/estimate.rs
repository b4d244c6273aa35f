//! Estimates from `c` passes in `n` samples: pass@k (at least one of `k` passes) and
//! pass^k (all `k` pass), unbiased, as Chen et al. (2021, HumanEval) and τ-bench (Yao
//! et al., 2024) define them: `pass@k = 1 - C(n - c, k) / C(n, k)` and
//! `pass^k = C(c, k) / C(n, k)`. Never the plug-in `(c / n)^k`, which overstates
//! pass^k (at p = 0.8, n = 5, k = 3 by 14%).
//!
//! ```
//! use prill_stats::{pass_at_k, pass_hat_k};
//!
//! // 4 passes in 5 samples: pass^3 = C(4,3) / C(5,3) = 0.4; pass@3 = 1.
//! assert!((pass_hat_k(5, 4, 3).unwrap() - 0.4).abs() < 1e-12);
//! assert_eq!(pass_at_k(5, 4, 3), Some(1.0));
//! ```

use crate::binomial::ln_choose;

/// `C(a, k) / C(n, k)`, for `a <= n`.
fn ratio(a: u32, n: u32, k: u32) -> f64 {
    if k > a {
        return 0.0;
    }
    (ln_choose(a, k) - ln_choose(n, k)).exp()
}

/// The unbiased chance that at least one of `k` samples passes, from `c` passes in
/// `n` (`k` from 1 to `n`; `None` outside that).
pub fn pass_at_k(n: u32, c: u32, k: u32) -> Option<f64> {
    (k >= 1 && k <= n && c <= n).then(|| 1.0 - ratio(n - c, n, k))
}

/// The unbiased chance that all of `k` samples pass, from `c` passes in `n`.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> Option<f64> {
    (k >= 1 && k <= n && c <= n).then(|| ratio(c, n, k))
}

/// The `k` a curve of `n` samples shows: every one up to 20, then 25, 50, 100, 200,
/// 500, 1000, ... below `n`, and `n`.
pub fn curve_points(n: u32) -> impl Iterator<Item = u32> {
    let steps = [25u32, 50]
        .into_iter()
        .chain((2..9).flat_map(|e| [1u32, 2, 5].map(|m| m * 10u32.pow(e))));
    (1..=n.min(20))
        .chain(steps.filter(move |k| *k < n && *k > 20))
        .chain((n > 20).then_some(n))
}

/// pass@k and pass^k at the [`curve_points`] of `n`: `(k, pass@k, pass^k)`.
pub fn curve(n: u32, c: u32) -> Vec<(u32, f64, f64)> {
    curve_points(n)
        .filter_map(|k| Some((k, pass_at_k(n, c, k)?, pass_hat_k(n, c, k)?)))
        .collect()
}

/// pass@k and pass^k for every `k` from 1 to `n`: `(k, pass@k, pass^k)`.
pub fn curves(n: u32, c: u32) -> Vec<(u32, f64, f64)> {
    (1..=n)
        .filter_map(|k| Some((k, pass_at_k(n, c, k)?, pass_hat_k(n, c, k)?)))
        .collect()
}

/// A suite's pass^k: the mean of its cases' pass^k, with a 95% interval from
/// resampling the cases (a percentile bootstrap over cases, `resamples` times, seeded:
/// the same input gives the same interval).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SuitePassHatK {
    /// `k`.
    pub k: u32,
    /// The mean of the cases' pass^k.
    pub value: f64,
    /// The interval's low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

/// The suite's pass^k at each of `ks` up to the fewest samples any case has, from each
/// case's `(n, c)`; empty without cases.
pub fn suite_pass_hat_k(
    cases: &[(u32, u32)],
    ks: &[u32],
    resamples: usize,
    seed: u64,
) -> Vec<SuitePassHatK> {
    let Some(k_max) = cases.iter().map(|(n, _)| *n).min() else {
        return Vec::new();
    };
    let mut rng = fastrand::Rng::with_seed(seed);
    // The same resampled suites for every k, so the curves stay consistent.
    let draws: Vec<Vec<usize>> = (0..resamples)
        .map(|_| (0..cases.len()).map(|_| rng.usize(..cases.len())).collect())
        .collect();
    ks.iter()
        .copied()
        .filter(|k| (1..=k_max).contains(k))
        .map(|k| {
            let per_case: Vec<f64> = cases
                .iter()
                .map(|(n, c)| pass_hat_k(*n, *c, k).unwrap_or(0.0))
                .collect();
            let mean = |picks: &mut dyn Iterator<Item = usize>| {
                let (sum, count) = picks.fold((0.0, 0usize), |(s, n), i| (s + per_case[i], n + 1));
                sum / count.max(1) as f64
            };
            let value = mean(&mut (0..cases.len()));
            let mut means: Vec<f64> = draws.iter().map(|d| mean(&mut d.iter().copied())).collect();
            means.sort_by(f64::total_cmp);
            let at = |q: f64| {
                if means.is_empty() {
                    value
                } else {
                    means[((q * (means.len() - 1) as f64).round() as usize).min(means.len() - 1)]
                }
            };
            SuitePassHatK {
                k,
                value,
                low: at(0.025),
                high: at(0.975),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_show_every_small_k_then_round_ones() {
        assert_eq!(curve_points(3).collect::<Vec<_>>(), [1, 2, 3]);
        let long: Vec<u32> = curve_points(1234).collect();
        assert_eq!(&long[18..], [19, 20, 25, 50, 100, 200, 500, 1000, 1234]);
        assert_eq!(curve_points(0).count(), 0);
        let c = curve(5, 4);
        assert_eq!(c.len(), 5);
        assert!((c[2].2 - 0.4).abs() < 1e-12 && c[2].1 == 1.0);
    }

    #[test]
    fn the_estimators_are_the_published_ones() {
        // n = 5, c = 4: pass^3 = C(4,3)/C(5,3) = 4/10; pass@1 = c/n.
        assert!((pass_hat_k(5, 4, 3).unwrap() - 0.4).abs() < 1e-12);
        assert!((pass_at_k(5, 4, 1).unwrap() - 0.8).abs() < 1e-12);
        assert!((pass_hat_k(5, 4, 1).unwrap() - 0.8).abs() < 1e-12);
        // n = 10, c = 3, k = 2: 1 - C(7,2)/C(10,2) = 1 - 21/45.
        assert!((pass_at_k(10, 3, 2).unwrap() - (1.0 - 21.0 / 45.0)).abs() < 1e-12);
        assert_eq!(pass_hat_k(5, 2, 3), Some(0.0));
        assert_eq!(pass_at_k(5, 4, 0), None);
        assert_eq!(pass_at_k(5, 4, 6), None);
    }

    #[test]
    fn pass_hat_k_is_unbiased_where_the_plug_in_is_not() {
        // E[C(c,3)/C(5,3)] over c ~ Binomial(5, 0.8) is exactly 0.8^3.
        let p: f64 = 0.8;
        let expected: f64 = (0..=5)
            .map(|c| {
                crate::binomial::choose(5, c)
                    * p.powi(c as i32)
                    * (1.0 - p).powi(5 - c as i32)
                    * pass_hat_k(5, c, 3).unwrap()
            })
            .sum();
        assert!((expected - p.powi(3)).abs() < 1e-12, "{expected}");
        let plug_in: f64 = (0..=5)
            .map(|c| {
                crate::binomial::choose(5, c)
                    * p.powi(c as i32)
                    * (1.0 - p).powi(5 - c as i32)
                    * (f64::from(c) / 5.0).powi(3)
            })
            .sum();
        assert!((plug_in / p.powi(3) - 1.14).abs() < 0.01, "{plug_in}");
    }

    #[test]
    fn curves_cover_every_k() {
        let c = curves(4, 2);
        assert_eq!(c.len(), 4);
        assert_eq!(c[3].2, 0.0);
        assert_eq!(c[3].1, 1.0);
    }

    #[test]
    fn a_suite_s_pass_hat_k_has_a_case_bootstrap_interval() {
        let cases = [(10, 10), (10, 8), (10, 5), (10, 9)];
        let ks: Vec<u32> = (1..=12).collect();
        let curve = suite_pass_hat_k(&cases, &ks, 2000, 7);
        assert_eq!(curve.len(), 10);
        let one = curve[0];
        assert!((one.value - 0.8).abs() < 1e-12, "{one:?}");
        assert!(one.low < one.value && one.value < one.high, "{one:?}");
        assert!(one.low >= 0.5 && one.high <= 1.0, "{one:?}");
        // Seeded: the same interval each time.
        assert_eq!(suite_pass_hat_k(&cases, &ks, 2000, 7), curve);
        // pass^k falls with k.
        assert!(curve.windows(2).all(|w| w[1].value <= w[0].value));
        assert!(suite_pass_hat_k(&[], &ks, 10, 1).is_empty());
    }
}
