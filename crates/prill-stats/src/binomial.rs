//! The binomial distribution: log binomial coefficients, tails, and the Wilson and
//! Clopper–Pearson intervals of a pass rate.

/// The z value of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// `ln C(n, k)`, exact to floating point for the sizes a test run has.
pub fn ln_choose(n: u32, k: u32) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
}

/// `ln n!`: summed below 256, Stirling's series above (accurate to about 1e-13 there),
/// so that it costs the same for any `n`.
fn ln_factorial(n: u32) -> f64 {
    static SMALL: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    if n < 256 {
        let table = SMALL.get_or_init(|| {
            let mut sum = 0.0;
            (0..256u32)
                .map(|i| {
                    if i > 1 {
                        sum += f64::from(i).ln();
                    }
                    sum
                })
                .collect()
        });
        return table[n as usize];
    }
    let x = f64::from(n);
    x * x.ln() - x + 0.5 * (std::f64::consts::TAU * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x.powi(3))
        + 1.0 / (1260.0 * x.powi(5))
}

/// `C(n, k)` as a float (`0` when `k > n`).
pub fn choose(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    // The product form is exact for small values and stays finite longer.
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

/// `P[X >= k]` for `X ~ Binomial(n, p)`: the chance that at least `k` of `n` samples
/// pass when each passes with probability `p`.
pub fn binomial_tail(n: u32, k: u32, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    let p = p.clamp(0.0, 1.0);
    if p == 0.0 {
        return 0.0;
    }
    if p == 1.0 {
        return 1.0;
    }
    // Sum the terms in log space, so large n neither overflows nor underflows early.
    let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
    let mut total = 0.0;
    for i in k..=n {
        let ln_term = ln_choose(n, i) + f64::from(i) * ln_p + f64::from(n - i) * ln_q;
        total += ln_term.exp();
    }
    total.clamp(0.0, 1.0)
}

/// The Wilson score interval of `successes` out of `trials` at `z`, as `(low, high)`.
/// With no trials it is `(0, 1)`: nothing is known.
pub fn wilson(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The Clopper–Pearson ("exact") interval of `successes` out of `trials` at confidence
/// `1 - alpha`, as `(low, high)`: the rates whose binomial tails put the observed count
/// at `alpha / 2` on either side (Clopper and Pearson, 1934). Never narrower than it
/// should be, often wider than Wilson's. With no trials it is `(0, 1)`.
pub fn clopper_pearson(successes: u32, trials: u32, alpha: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let c = successes.min(trials);
    let half = alpha / 2.0;
    // P[X >= c | p] rises with p: the low end is where it reaches alpha / 2.
    let low = if c == 0 {
        0.0
    } else {
        solve_rising(|p| binomial_tail(trials, c, p), half)
    };
    // P[X <= c | p] = 1 - P[X >= c + 1 | p] falls with p: the high end is where it
    // falls to alpha / 2.
    let high = if c == trials {
        1.0
    } else {
        solve_rising(|p| binomial_tail(trials, c + 1, p), 1.0 - half)
    };
    (low, high)
}

/// The `p` in `[0, 1]` where the rising function `f` reaches `target`, by bisection.
pub(crate) fn solve_rising(f: impl Fn(f64) -> f64, target: f64) -> f64 {
    solve_rising_in(f, target, (0.0, 1.0))
}

/// The `x` in `range` where the rising function `f` reaches `target`, by bisection (100
/// halvings: to the last bit of a float on any range used here).
pub(crate) fn solve_rising_in(f: impl Fn(f64) -> f64, target: f64, range: (f64, f64)) -> f64 {
    let (mut low, mut high) = range;
    for _ in 0..100 {
        let mid = (low + high) / 2.0;
        if f(mid) < target {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low + high) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-3
    }

    #[test]
    fn wilson_matches_known_values() {
        // 8 of 10 at 95%: (0.4902, 0.9433), a textbook value.
        let (lo, hi) = wilson(8, 10, Z95);
        assert!(close(lo, 0.4902) && close(hi, 0.9433), "{lo} {hi}");
        let (lo, hi) = wilson(0, 10, Z95);
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
        let (lo, hi) = wilson(10, 10, Z95);
        assert!(close(hi, 1.0) && close(lo, 0.7225), "{lo} {hi}");
    }

    #[test]
    fn clopper_pearson_matches_known_values() {
        // 8 of 10 at 95%: (0.4439, 0.9748); 0 of 10: (0, 0.3085); 10 of 10: (0.6915, 1).
        let (lo, hi) = clopper_pearson(8, 10, 0.05);
        assert!(close(lo, 0.4439) && close(hi, 0.9748), "{lo} {hi}");
        let (lo, hi) = clopper_pearson(0, 10, 0.05);
        assert!(lo == 0.0 && close(hi, 0.3085), "{lo} {hi}");
        let (lo, hi) = clopper_pearson(10, 10, 0.05);
        assert!(close(lo, 0.6915) && hi == 1.0, "{lo} {hi}");
        assert_eq!(clopper_pearson(0, 0, 0.05), (0.0, 1.0));
    }

    #[test]
    fn binomial_tail_matches_exact_sums() {
        // P[X >= 3], X ~ Bin(5, 0.5) = (10 + 5 + 1) / 32.
        assert!(close(binomial_tail(5, 3, 0.5), 16.0 / 32.0));
        assert!(close(binomial_tail(5, 5, 0.9), 0.9f64.powi(5)));
        assert_eq!(binomial_tail(5, 0, 0.1), 1.0);
        assert_eq!(binomial_tail(5, 6, 0.9), 0.0);
        assert_eq!(binomial_tail(5, 1, 0.0), 0.0);
        let big = binomial_tail(2000, 1000, 0.5);
        assert!(big > 0.5 && big < 0.52, "{big}");
    }

    #[test]
    fn choose_is_exact_for_small_values() {
        assert_eq!(choose(5, 2), 10.0);
        assert_eq!(choose(10, 0), 1.0);
        assert_eq!(choose(3, 4), 0.0);
        assert_eq!(choose(50, 45), 2_118_760.0);
        assert!((ln_choose(50, 45) - 2_118_760f64.ln()).abs() < 1e-9);
        // Stirling's series above 256 agrees with the sum.
        let summed: f64 = (2..=300u32).map(|i| f64::from(i).ln()).sum();
        assert!(
            (ln_factorial(300) - summed).abs() < 1e-9,
            "{}",
            ln_factorial(300) - summed
        );
    }
}
