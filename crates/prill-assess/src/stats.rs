//! The statistics of pass rates: Wilson score intervals, binomial tails, and whether a
//! success ratio `k/n` is a sound CI gate for an observed rate.

/// The z value of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The probability a gate is held to: a ratio is *sound* when a case with the observed
/// pass rate meets it at least this often.
pub const SOUND: f64 = 0.9;

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

fn ln_choose(n: u32, k: u32) -> f64 {
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
}

fn ln_factorial(n: u32) -> f64 {
    (2..=n).map(|i| f64::from(i).ln()).sum()
}

/// Advice on a ratio `need/of` for a case that passes with rate `p`.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioAdvice {
    /// The chance the case meets its ratio.
    pub p_meets: f64,
    /// A ratio that would be sound, when the current one is not.
    pub suggestion: Option<String>,
}

/// Whether `need/of` is sound for rate `p`, and if not, what would be: the strictest
/// ratio with the same number of samples that meets [`SOUND`], e.g.
/// `meets 3/5 with p = 0.41; 2/5 gives p = 0.93`.
pub fn advise(need: u32, of: u32, p: f64) -> RatioAdvice {
    let p_meets = binomial_tail(of, need, p);
    if p_meets >= SOUND {
        return RatioAdvice {
            p_meets,
            suggestion: None,
        };
    }
    let better = (1..need).rev().find(|&k| binomial_tail(of, k, p) >= SOUND);
    let suggestion = match better {
        Some(k) => format!(
            "meets {need}/{of} with p = {p_meets:.2}; {k}/{of} gives p = {:.2}",
            binomial_tail(of, k, p)
        ),
        None => format!(
            "meets {need}/{of} with p = {p_meets:.2}; no k/{of} with k >= 1 reaches p = {SOUND:.2}: the case passes too rarely for this gate (fix the agent or the test)"
        ),
    };
    RatioAdvice {
        p_meets,
        suggestion: Some(suggestion),
    }
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
    fn advice_suggests_the_strictest_sound_ratio() {
        let a = advise(3, 5, 0.45);
        assert!(a.p_meets < SOUND);
        let s = a.suggestion.unwrap();
        assert!(s.starts_with("meets 3/5 with p = 0.41;"), "{s}");
        assert!(s.contains("1/5 gives p = 0.95"), "{s}");
        assert!(advise(1, 1, 0.99).suggestion.is_none());
        let hopeless = advise(2, 2, 0.01).suggestion.unwrap();
        assert!(hopeless.contains("passes too rarely"), "{hopeless}");
    }
}
