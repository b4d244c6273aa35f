//! Two pass rates compared: an exact test of a 2×2 table (Fisher's, with Lancaster's
//! mid-p), the smallest drop a comparison could have detected with the samples it had,
//! and corrections for testing many cases at once (Holm's step-down,
//! Benjamini–Hochberg).
//!
//! ```
//! use prill_stats::two_sample::{fisher_mid_p, detectable_drop};
//!
//! // 9 of 10 passed, then 6 of 10: mid-p 0.168, far from 5%...
//! assert!((fisher_mid_p(9, 1, 6, 4) - 0.168).abs() < 0.001);
//! // ...and with 10 samples a side, only a drop of more than 45 points could be seen
//! // 80% of the time.
//! assert!(detectable_drop(10, 10, 0.9, 0.05, 0.8).unwrap() > 0.45);
//! ```

use crate::binomial::ln_choose;

/// The probabilities of each first-row pass count of a 2×2 table with its margins
/// fixed (the hypergeometric distribution), from `low` to `high`.
fn hypergeometric(row1: u32, row2: u32, col1: u32) -> (u32, Vec<f64>) {
    let n = row1 + row2;
    let low = col1.saturating_sub(row2);
    let high = col1.min(row1);
    let total = ln_choose(n, col1);
    let probabilities = (low..=high)
        .map(|x| (ln_choose(row1, x) + ln_choose(row2, col1 - x) - total).exp())
        .collect();
    (low, probabilities)
}

/// The two-sided mid-p value of Fisher's exact test for `[[a, b], [c, d]]` (`a` of
/// `a + b` passed in one run, `c` of `c + d` in the other): the probability of every
/// table less likely than the one seen, plus half of those as likely (Lancaster, 1961).
/// Less conservative than Fisher's own p, with about the stated error rate in practice
/// (Agresti, *Categorical Data Analysis*, 3rd ed., §3.5.4). A table with an empty row or
/// column has p = 1.
pub fn fisher_mid_p(a: u32, b: u32, c: u32, d: u32) -> f64 {
    let (row1, row2, col1) = (a + b, c + d, a + c);
    if row1 == 0 || row2 == 0 || col1 == 0 || col1 == row1 + row2 {
        return 1.0;
    }
    let (low, probabilities) = hypergeometric(row1, row2, col1);
    let observed = probabilities[(a - low) as usize];
    // Tables as likely as the observed one, up to rounding, count as equally likely.
    let tolerance = observed * 1e-7;
    let (mut less, mut equal) = (0.0, 0.0);
    for p in &probabilities {
        if *p < observed - tolerance {
            less += p;
        } else if *p <= observed + tolerance {
            equal += p;
        }
    }
    (less + equal / 2.0).min(1.0)
}

/// Which tables `[[x, n1 - x], [y, n2 - y]]` the test rejects at `alpha` as a drop
/// (`y / n2 < x / n1`): `rejects[x][y]`.
fn drop_region(n1: u32, n2: u32, alpha: f64) -> Vec<Vec<bool>> {
    (0..=n1)
        .map(|x| {
            (0..=n2)
                .map(|y| {
                    u64::from(y) * u64::from(n1) < u64::from(x) * u64::from(n2)
                        && below(fisher_mid_p(x, n1 - x, y, n2 - y), alpha)
                })
                .collect()
        })
        .collect()
}

fn binomial_pmf(n: u32, p: f64) -> Vec<f64> {
    (0..=n)
        .map(|k| {
            if p <= 0.0 {
                f64::from(u8::from(k == 0))
            } else if p >= 1.0 {
                f64::from(u8::from(k == n))
            } else {
                (ln_choose(n, k) + f64::from(k) * p.ln() + f64::from(n - k) * (1.0 - p).ln()).exp()
            }
        })
        .collect()
}

/// The chance the test sees a drop at `alpha` when the rate goes from `before` to
/// `after`, with `n1` samples before and `n2` after, given its rejection region.
fn power(region: &[Vec<bool>], n1: u32, n2: u32, before: f64, after: f64) -> f64 {
    let (p1, p2) = (binomial_pmf(n1, before), binomial_pmf(n2, after));
    let mut total = 0.0;
    for (x, row) in region.iter().enumerate() {
        for (y, rejected) in row.iter().enumerate() {
            if *rejected {
                total += p1[x] * p2[y];
            }
        }
    }
    total
}

/// Above this many tables (`(n1 + 1)(n2 + 1)`), [`detectable_drop`] uses the normal
/// approximation instead of summing every outcome.
pub const EXACT_TABLES: u64 = 40_401;

/// The smallest drop from `before` (a pass rate) that a comparison of `n1` samples
/// with `n2` samples would detect at `alpha` with probability `power` (0.8 is usual):
/// exactly, over every outcome of both, up to [`EXACT_TABLES`] tables (200 samples a
/// side); beyond, by the normal approximation of two proportions, which is close
/// there. `None` when not even a drop to 0 would be (too few samples).
pub fn detectable_drop(
    n1: u32,
    n2: u32,
    before: f64,
    alpha: f64,
    power_wanted: f64,
) -> Option<f64> {
    if n1 == 0 || n2 == 0 {
        return None;
    }
    if u64::from(n1 + 1) * u64::from(n2 + 1) > EXACT_TABLES {
        return normal_drop(n1, n2, before, alpha, power_wanted);
    }
    let region = drop_region(n1, n2, alpha);
    let seen = |drop: f64| power(&region, n1, n2, before, (before - drop).max(0.0));
    if seen(before) < power_wanted {
        return None;
    }
    // Power grows with the drop: bisect for where it reaches what is wanted.
    let (mut low, mut high) = (0.0_f64, before);
    for _ in 0..40 {
        let mid = (low + high) / 2.0;
        if seen(mid) >= power_wanted {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high)
}

/// [`detectable_drop`] by the normal approximation: the smallest `d` with
/// `d >= (z(1 - alpha/2) + z(power)) * sqrt(p1 q1 / n1 + p2 q2 / n2)`, `p2 = before - d`.
fn normal_drop(n1: u32, n2: u32, before: f64, alpha: f64, power_wanted: f64) -> Option<f64> {
    let z = normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power_wanted);
    let needed = |drop: f64| {
        let after = (before - drop).max(0.0);
        z * (before * (1.0 - before) / f64::from(n1) + after * (1.0 - after) / f64::from(n2)).sqrt()
    };
    if needed(before) > before {
        return None;
    }
    let (mut low, mut high) = (0.0_f64, before);
    for _ in 0..60 {
        let mid = (low + high) / 2.0;
        if mid >= needed(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high)
}

/// The standard normal quantile, by bisection on the complementary error function
/// (accurate to about 1e-7, which is plenty for a sample-size figure).
fn normal_quantile(q: f64) -> f64 {
    let cdf = |x: f64| 0.5 * erfc(-x / std::f64::consts::SQRT_2);
    crate::binomial::solve_rising_in(cdf, q, (-10.0, 10.0))
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative
/// error below 1.2e-7 everywhere).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Whether `p` is below `threshold` by more than rounding: a p-value that is the
/// threshold in exact arithmetic is not below it.
fn below(p: f64, threshold: f64) -> bool {
    p < threshold * (1.0 - 1e-9)
}

/// Holm's step-down (Holm, 1979): which of `p_values` are rejected with the chance of
/// any false rejection at most `alpha`, in their order. A p-value must be below its
/// threshold, not equal to it (a discrete test's p often lands on one).
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..p_values.len()).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let m = p_values.len();
    let mut rejected = vec![false; m];
    for (rank, &i) in order.iter().enumerate() {
        if below(p_values[i], alpha / (m - rank) as f64) {
            rejected[i] = true;
        } else {
            break;
        }
    }
    rejected
}

/// Benjamini–Hochberg (1995): which of `p_values` are discoveries with the expected
/// share of false ones among them at most `q`, in their order (below the threshold,
/// as [`holm`]).
pub fn benjamini_hochberg(p_values: &[f64], q: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..p_values.len()).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let m = p_values.len();
    let largest = order
        .iter()
        .enumerate()
        .rev()
        .find(|(rank, i)| below(p_values[**i], q * (rank + 1) as f64 / m as f64))
        .map(|(rank, _)| rank);
    let mut found = vec![false; m];
    if let Some(largest) = largest {
        for &i in &order[..=largest] {
            found[i] = true;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mid_p_is_fisher_s_less_half_the_observed_table() {
        // 9/10 then 6/10: Fisher's two-sided p is 0.3034 (R's fisher.test); the observed
        // table and its mirror (6 then 9) have probability 0.1354 each, the two
        // extremes 0.0163 each, so mid-p = 0.0325 + 0.1354 = 0.1680.
        let p = fisher_mid_p(9, 1, 6, 4);
        assert!((p - 0.1680).abs() < 0.0005, "{p}");
        assert_eq!(fisher_mid_p(0, 0, 3, 4), 1.0);
        assert!(fisher_mid_p(10, 0, 0, 10) < 1e-4);
        // Symmetric in the runs.
        assert!((fisher_mid_p(3, 7, 8, 2) - fisher_mid_p(8, 2, 3, 7)).abs() < 1e-12);
    }

    #[test]
    fn ten_samples_a_side_rarely_see_a_drop_from_ninety_to_sixty() {
        let region = drop_region(10, 10, 0.05);
        let seen = power(&region, 10, 10, 0.9, 0.6);
        assert!(seen > 0.15 && seen < 0.40, "{seen}");
        // 100 a side see it nearly always.
        let region = drop_region(100, 100, 0.05);
        assert!(power(&region, 100, 100, 0.9, 0.6) > 0.99);
    }

    #[test]
    fn the_detectable_drop_shrinks_with_samples() {
        let ten = detectable_drop(10, 10, 0.9, 0.05, 0.8).unwrap();
        let fifty = detectable_drop(50, 50, 0.9, 0.05, 0.8).unwrap();
        assert!(fifty < ten, "{fifty} {ten}");
        assert!(fifty > 0.1 && fifty < 0.3, "{fifty}");
        // One sample a side can never show a drop at 5%.
        assert_eq!(detectable_drop(1, 1, 0.9, 0.05, 0.8), None);
        // Where the exact sum gives way to the approximation, the two agree.
        let exact = detectable_drop(200, 200, 0.9, 0.05, 0.8).unwrap();
        let approximate = normal_drop(200, 200, 0.9, 0.05, 0.8).unwrap();
        assert!((exact - approximate).abs() < 0.02, "{exact} {approximate}");
        let many = detectable_drop(1000, 1000, 0.9, 0.05, 0.8).unwrap();
        assert!(many < exact, "{many}");
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
    }

    #[test]
    fn holm_and_benjamini_hochberg_follow_their_definitions() {
        let p = [0.01, 0.04, 0.03, 0.005];
        // Holm at 0.05: 0.005 <= 0.0125, 0.01 <= 0.0167, 0.03 > 0.025: stop.
        assert_eq!(holm(&p, 0.05), [true, false, false, true]);
        // BH at 0.05: ranks 1..4 thresholds 0.0125, 0.025, 0.0375, 0.05; all pass.
        assert_eq!(benjamini_hochberg(&p, 0.05), [true, true, true, true]);
        assert_eq!(benjamini_hochberg(&[0.5, 0.04], 0.05), [false, false]);
        assert!(holm(&[], 0.05).is_empty());
        // 3/3 then 0/3 has mid-p 0.05 exactly, whatever the rounding: not below 0.05.
        assert_eq!(holm(&[fisher_mid_p(3, 0, 0, 3)], 0.05), [false]);
    }
}
