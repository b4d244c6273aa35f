//! Whether a success ratio `k/n` is a sound CI gate for an observed rate; the
//! intervals and tails themselves are `prill_stats`'s.

pub use prill_stats::{Z95, binomial_tail, wilson};

/// The probability a gate is held to: a ratio is *sound* when a case with the observed
/// pass rate meets it at least this often.
pub const SOUND: f64 = 0.9;

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
