//! Matching the expected calls of `tool_sequence` to the calls made, each used at most
//! once: the most pairs there can be, never a greedy first fit. In order, that is the
//! longest common subsequence under the call matcher; in any order, a maximum bipartite
//! matching (Kuhn's augmenting paths). With a matcher that is not an equivalence (an
//! argument that must contain a text, or match a pattern), taking the first fitting call
//! can use up the only call a later expectation fits: the anchors' first versions did
//! (ragas PR #2582, deepeval PR #3029, ADK #5306).

/// The most `(expected, actual)` index pairs with `fits(expected, actual)`, each index
/// used at most once; `ordered`, both indices increase along the pairs. Pairs come in
/// increasing expected index.
pub(crate) fn best(
    expected: usize,
    actual: usize,
    ordered: bool,
    fits: impl Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    if ordered {
        in_order(expected, actual, &fits)
    } else {
        any_order(expected, actual, &fits)
    }
}

/// The longest common subsequence, by dynamic programming over both lists.
fn in_order(
    expected: usize,
    actual: usize,
    fits: &impl Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    // longest[i][j]: the most pairs among expected[i..] and actual[j..].
    let width = actual + 1;
    let mut longest = vec![0u32; (expected + 1) * width];
    for i in (0..expected).rev() {
        for j in (0..actual).rev() {
            let skip = longest[(i + 1) * width + j].max(longest[i * width + j + 1]);
            let take = if fits(i, j) {
                longest[(i + 1) * width + j + 1] + 1
            } else {
                0
            };
            longest[i * width + j] = skip.max(take);
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < expected && j < actual {
        if fits(i, j) && longest[i * width + j] == longest[(i + 1) * width + j + 1] + 1 {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if longest[(i + 1) * width + j] >= longest[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// A maximum bipartite matching: for each expected call in turn, an augmenting path
/// that frees an actual call it fits, by moving earlier expectations to other calls.
fn any_order(
    expected: usize,
    actual: usize,
    fits: &impl Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    let edges: Vec<Vec<usize>> = (0..expected)
        .map(|i| (0..actual).filter(|&j| fits(i, j)).collect())
        .collect();
    // owner[j]: the expected call matched to actual call j.
    let mut owner: Vec<Option<usize>> = vec![None; actual];
    for i in 0..expected {
        let mut seen = vec![false; actual];
        augment(i, &edges, &mut owner, &mut seen);
    }
    let mut pairs: Vec<(usize, usize)> = owner
        .iter()
        .enumerate()
        .filter_map(|(j, o)| o.map(|i| (i, j)))
        .collect();
    pairs.sort_unstable();
    pairs
}

/// Whether expected call `i` can be matched, moving others along an augmenting path.
/// Its depth is at most the number of expected calls (each is visited once a search).
fn augment(i: usize, edges: &[Vec<usize>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
    for &j in &edges[i] {
        if seen[j] {
            continue;
        }
        seen[j] = true;
        if owner[j].is_none_or(|k| augment(k, edges, owner, seen)) {
            owner[j] = Some(i);
            return true;
        }
    }
    false
}

/// Precision, recall and their harmonic mean for `matched` pairs of `expected` calls and
/// `actual` calls. Nothing expected and nothing called scores 1.
pub(crate) fn f1(matched: usize, expected: usize, actual: usize) -> (f64, f64, f64) {
    let ratio = |n: usize, of: usize| if of == 0 { 1.0 } else { n as f64 / of as f64 };
    let (precision, recall) = (ratio(matched, actual), ratio(matched, expected));
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    (precision, recall, f1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected `a` fits actual calls 0 and 1; expected `b` fits only call 0. Taking the
    /// first fit for `a` leaves `b` nothing: one pair, where two exist.
    #[test]
    fn a_first_fit_does_not_use_up_the_only_call_a_later_expectation_fits() {
        let fits = |i: usize, j: usize| matches!((i, j), (0, 0) | (0, 1) | (1, 0));
        assert_eq!(best(2, 2, false, fits), [(0, 1), (1, 0)]);
        // In order, `a` then `b` cannot both match (b fits only the earlier call).
        assert_eq!(best(2, 2, true, fits).len(), 1);
    }

    #[test]
    fn in_order_is_the_longest_common_subsequence() {
        let expected = ["search", "fetch", "summarize"];
        let actual = ["search", "log", "summarize", "fetch", "summarize"];
        let fits = |i: usize, j: usize| expected[i] == actual[j];
        assert_eq!(best(3, 5, true, fits), [(0, 0), (1, 3), (2, 4)]);
        assert_eq!(best(3, 5, false, fits).len(), 3);
        assert_eq!(best(0, 5, true, fits), []);
        assert_eq!(best(3, 0, false, fits), []);
    }

    /// Against every assignment, on small random relations: the matching is as large as
    /// the largest there is.
    #[test]
    fn the_matching_is_maximum_on_every_small_relation() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300 {
            let (e, a) = ((next() % 5) as usize, (next() % 5) as usize);
            let bits = next();
            let fits = |i: usize, j: usize| bits >> (i * 5 + j) & 1 == 1;
            let got = best(e, a, false, fits);
            assert!(got.iter().all(|&(i, j)| fits(i, j)));
            let mut used = std::collections::HashSet::new();
            assert!(got.iter().all(|&(_, j)| used.insert(j)));
            assert_eq!(got.len(), brute(0, e, a, &fits, &mut vec![false; a]));
        }
    }

    /// The largest matching of expected calls `i..e`, by trying every choice.
    fn brute(
        i: usize,
        e: usize,
        a: usize,
        fits: &impl Fn(usize, usize) -> bool,
        used: &mut Vec<bool>,
    ) -> usize {
        if i == e {
            return 0;
        }
        let mut most = brute(i + 1, e, a, fits, used);
        for j in 0..a {
            if !used[j] && fits(i, j) {
                used[j] = true;
                most = most.max(1 + brute(i + 1, e, a, fits, used));
                used[j] = false;
            }
        }
        most
    }

    #[test]
    fn f1_is_the_harmonic_mean_of_precision_and_recall() {
        assert_eq!(f1(0, 0, 0), (1.0, 1.0, 1.0));
        assert_eq!(f1(0, 2, 0).2, 0.0);
        let (p, r, f) = f1(2, 4, 2);
        assert_eq!((p, r), (1.0, 0.5));
        assert!((f - 2.0 / 3.0).abs() < 1e-12);
    }
}
