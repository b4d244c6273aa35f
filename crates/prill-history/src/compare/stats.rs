//! Fisher's exact test on a 2×2 table: how likely a difference in pass rates at least
//! as extreme as the one seen is, when both runs had the same chance of passing.
//!
//! The table is `passed` and `not passed` samples of the base and of the head run. With
//! the margins fixed, the count of the base's passes follows the hypergeometric
//! distribution; the two-sided p-value is the total probability of every table no more
//! likely than the one observed (the convention R's `fisher.test` and SciPy follow).

/// The two-sided p-value of Fisher's exact test for the table
/// `[[a, b], [c, d]]`: `a` of `a + b` samples passed in one run, `c` of `c + d` in the
/// other. A table with an empty row or column has p = 1 (nothing to tell apart).
///
/// ```
/// use prill_history::compare::fisher_exact;
///
/// // 8 of 10 samples passed, then 7 of 10: well within chance.
/// assert!((fisher_exact(8, 2, 7, 3) - 1.0).abs() < 1e-12);
/// // 10 of 10, then 0 of 10: not chance.
/// assert!(fisher_exact(10, 0, 0, 10) < 1e-4);
/// ```
pub fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let row1 = a + b;
    let row2 = c + d;
    let col1 = a + c;
    let n = row1 + row2;
    if row1 == 0 || row2 == 0 || col1 == 0 || col1 == n {
        return 1.0;
    }
    let table = LogFactorials::up_to(n);
    // log P(X = x) for x passes in the first row, the margins fixed.
    let log_p =
        |x: u64| table.choose(row1, x) + table.choose(row2, col1 - x) - table.choose(n, col1);
    let observed = log_p(a);
    let low = col1.saturating_sub(row2);
    let high = col1.min(row1);
    // Tables as likely as the observed one, up to rounding, count as "no more likely".
    let tolerance = 1e-7;
    let mut p = 0.0;
    for x in low..=high {
        let lp = log_p(x);
        if lp <= observed + tolerance {
            p += lp.exp();
        }
    }
    p.min(1.0)
}

/// `ln k!` for every `k` up to a bound.
struct LogFactorials(Vec<f64>);

impl LogFactorials {
    fn up_to(n: u64) -> LogFactorials {
        let mut table = Vec::with_capacity(n as usize + 1);
        let mut sum = 0.0;
        table.push(0.0);
        for k in 1..=n {
            sum += (k as f64).ln();
            table.push(sum);
        }
        LogFactorials(table)
    }

    /// `ln C(n, k)`.
    fn choose(&self, n: u64, k: u64) -> f64 {
        self.0[n as usize] - self.0[k as usize] - self.0[(n - k) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::fisher_exact;

    fn close(found: f64, expected: f64) {
        assert!(
            (found - expected).abs() <= 1e-9_f64.max(expected * 1e-6),
            "found {found}, expected {expected}"
        );
    }

    #[test]
    fn matches_known_values() {
        // Fisher's lady tasting tea: 3 of 4 right each way; R: p = 0.4857.
        close(fisher_exact(3, 1, 1, 3), 34.0 / 70.0);
        // All against none: 2 / C(20, 10).
        close(fisher_exact(10, 0, 0, 10), 2.0 / 184_756.0);
        // R's fisher.test(matrix(c(1, 11, 9, 3), 2)): p = 0.002759 (checked against
        // exact rational arithmetic).
        close(fisher_exact(1, 9, 11, 3), 0.002_759_456_185_220_083_6);
        // An asymmetric table, checked against exact rational arithmetic.
        close(fisher_exact(2, 7, 8, 2), 0.023_014_137_565_221_155);
        close(fisher_exact(5, 0, 1, 4), 0.047_619_047_619_047_62);
    }

    #[test]
    fn small_changes_are_within_chance() {
        close(fisher_exact(8, 2, 7, 3), 1.0);
        assert!(fisher_exact(9, 1, 5, 5) > 0.05);
        assert!(fisher_exact(10, 0, 4, 6) < 0.05);
    }

    #[test]
    fn is_symmetric_and_handles_empty_margins() {
        close(fisher_exact(2, 7, 8, 2), fisher_exact(8, 2, 2, 7));
        close(fisher_exact(2, 7, 8, 2), fisher_exact(7, 2, 2, 8));
        close(fisher_exact(0, 0, 3, 4), 1.0);
        close(fisher_exact(3, 0, 4, 0), 1.0);
        close(fisher_exact(1, 0, 0, 1), 1.0);
    }
}
