//! Failure modes: how a case fails, grouped deterministically.
//!
//! A failed sample's *first* failing check names its mode. Failures are grouped by a
//! signature: the interaction, the check's path, the test, and the expectation
//! normalized. Within a signature, failures are split further by what was found,
//! normalized (whitespace folded, case folded, numbers and ids masked), whenever the
//! same found value recurs: planted modes that answer `failure A` and `failure B` to
//! one check become two modes, while free-form answers that never repeat stay one.
//! An errored sample's mode is its error kind.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// One failure seen in one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Which interaction.
    pub interaction: usize,
    /// The check's path, e.g. `interactions[0].response.text.keywords`.
    pub path: String,
    /// The test: `keywords`, `not_gist`, `must_contain`, ..., or `error:<kind>`.
    pub test: String,
    /// The expectation, as text.
    pub expected: String,
    /// What was found, as text, when there was something.
    pub found: Option<String>,
    /// The message.
    pub message: String,
}

/// A group of failures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mode {
    /// The deterministic signature: `interaction 0 · <path> · <test> · <expectation>`,
    /// plus ` · found <value>` when the mode was split by what was found.
    pub signature: String,
    /// A readable name: an LLM's when classified with one, else the mode in words
    /// (`interaction 0: text value expected "ok", found "failure a"`; `... found 3
    /// different answers`; `interaction 1: timed out`).
    pub label: String,
    /// How many samples failed this way.
    pub count: u64,
    /// `count` over every sample taken.
    pub share: f64,
    /// The Wilson 95% interval of the share.
    pub ci_low: f64,
    /// The upper end of that interval.
    pub ci_high: f64,
    /// One failure's message.
    pub example: String,
    /// The expectation that failed (the check's criteria), as written.
    pub criteria: String,
    /// What the agent answered in that example, when there was an answer.
    pub response: Option<String>,
}

static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"-?\d+(?:\.\d+)?").expect("valid"));
static ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{8,}\b|\b[a-z]+[-_][a-z0-9]*\d[a-z0-9]*\b")
        .expect("valid")
});
static SPACE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").expect("valid"));

/// A value normalized for grouping: ids then numbers masked, case and whitespace folded.
pub fn normalize(text: &str) -> String {
    let lower = text.to_lowercase();
    let ids = ID.replace_all(&lower, "<id>");
    let numbers = NUMBER.replace_all(&ids, "<n>");
    SPACE.replace_all(numbers.trim(), " ").into_owned()
}

/// Groups the first failure of each failed sample into modes. `samples` is every sample
/// taken (the denominator of each share).
pub fn classify(firsts: &[Failure], samples: u64) -> Vec<Mode> {
    // Signature → normalized found → failures.
    let mut groups: BTreeMap<String, BTreeMap<Option<String>, Vec<&Failure>>> = BTreeMap::new();
    for f in firsts {
        let signature = format!(
            "interaction {} · {} · {} · {}",
            f.interaction,
            f.path,
            f.test,
            normalize(&f.expected)
        );
        groups
            .entry(signature)
            .or_default()
            .entry(f.found.as_deref().map(normalize))
            .or_default()
            .push(f);
    }
    let mut modes = Vec::new();
    for (signature, by_found) in groups {
        let mut rest: Vec<&Failure> = Vec::new();
        for (found, failures) in by_found {
            match found {
                Some(found) if failures.len() >= 2 => {
                    let mut m = mode(format!("{signature} · found {found}"), &failures, samples);
                    m.label = words(failures[0], Found::One);
                    modes.push(m);
                }
                _ => rest.extend(failures),
            }
        }
        if !rest.is_empty() {
            let mut distinct: Vec<Option<String>> = rest
                .iter()
                .map(|f| f.found.as_deref().map(normalize))
                .collect();
            distinct.sort();
            distinct.dedup();
            let found = match distinct.as_slice() {
                [_] => Found::One,
                many => Found::Many(many.len()),
            };
            let mut m = mode(signature, &rest, samples);
            m.label = words(rest[0], found);
            modes.push(m);
        }
    }
    // Most common first; ties by signature, so the order never varies.
    modes.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.signature.cmp(&b.signature))
    });
    modes
}

/// How many different answers a mode's failures found.
#[derive(Debug, Clone, Copy)]
enum Found {
    /// One (or none at all).
    One,
    /// This many.
    Many(usize),
}

/// The longest expectation or answer a mode's name quotes, in characters.
const NAME_QUOTE_CHARS: usize = 60;

/// A mode in words: where (the interaction), which check on which part of the answer,
/// what it expected and what was found (or how many different answers), or, for an
/// error, what went wrong.
fn words(f: &Failure, found: Found) -> String {
    let at = format!("interaction {}", f.interaction);
    if let Some(kind) = f.test.strip_prefix("error:") {
        return format!("{at}: {}", error_words(kind));
    }
    let check = check_words(&f.path, &f.test);
    let expected = quoted(&f.expected);
    match (found, &f.found) {
        (Found::Many(n), _) => {
            format!("{at}: {check} expected {expected}, found {n} different answers")
        }
        (Found::One, Some(answer)) => format!(
            "{at}: {check} expected {expected}, found {}",
            quoted(answer)
        ),
        (Found::One, None) => format!("{at}: {check} expected {expected}, found nothing"),
    }
}

/// The check and what it looks at: `text value`, `structure.answer keywords`, or the
/// check's name alone where the path says no more (`must_contain`).
fn check_words(path: &str, test: &str) -> String {
    let field = path
        .split_once(".response.")
        .map(|(_, rest)| rest)
        .and_then(|rest| rest.strip_suffix(test))
        .map(|rest| rest.trim_end_matches('.'))
        .filter(|field| !field.is_empty());
    match field {
        Some(field) => format!("{field} {test}"),
        None => test.to_owned(),
    }
}

/// An error kind in words.
fn error_words(kind: &str) -> String {
    let words = match kind {
        "timeout" => "timed out",
        "unreachable" => "the agent could not be reached",
        "unknown_agent" => "the server does not host the agent",
        "status" => "the server answered with an error status",
        "protocol" => "the agent broke the protocol",
        "too_large" => "the answer was too large",
        "tls" => "the TLS connection failed",
        "io" => "the connection failed",
        "spawn" => "the agent's program could not be started",
        "config" => "the settings are wrong",
        "max_iterations" => "the tool loop reached its max_iterations",
        "panic" => "the agent or Prill panicked",
        "function" => "the function under test failed",
        "no_cassette" => "no recording answers it",
        "simulator" => "the simulated user broke its contract (a simulator fault, not the agent's)",
        other => return format!("error ({other})"),
    };
    words.to_owned()
}

/// `text` in quotes, on one line, cut to [`NAME_QUOTE_CHARS`].
fn quoted(text: &str) -> String {
    let one_line = SPACE.replace_all(text.trim(), " ");
    let mut cut: String = one_line.chars().take(NAME_QUOTE_CHARS).collect();
    if one_line.chars().count() > NAME_QUOTE_CHARS {
        cut.push('…');
    }
    format!("\"{cut}\"")
}

fn mode(signature: String, failures: &[&Failure], samples: u64) -> Mode {
    let count = failures.len() as u64;
    let (ci_low, ci_high) = crate::stats::wilson(count, samples, crate::stats::Z95);
    let first = failures.first();
    let example = first.map(|f| f.message.clone()).unwrap_or_default();
    Mode {
        criteria: first.map(|f| f.expected.clone()).unwrap_or_default(),
        response: first.and_then(|f| f.found.clone()),
        label: example.clone(),
        signature,
        count,
        share: if samples == 0 {
            0.0
        } else {
            count as f64 / samples as f64
        },
        ci_low,
        ci_high,
        example,
    }
}

/// Modes named by an LLM: each keeps its signature and takes its name as `label`;
/// modes with the same name are one failure, merged (counts added, signatures joined
/// with ` | `, the first example kept). `names` is one name per mode, in order; with a
/// different length the modes are returned unchanged.
pub fn merge_named(modes: Vec<Mode>, names: &[String], samples: u64) -> Vec<Mode> {
    if names.len() != modes.len() {
        return modes;
    }
    let mut merged: Vec<Mode> = Vec::new();
    for (mode, name) in modes.into_iter().zip(names) {
        match merged.iter_mut().find(|m| m.label == *name) {
            Some(existing) => {
                existing.count += mode.count;
                existing.signature = format!("{} | {}", existing.signature, mode.signature);
            }
            None => merged.push(Mode {
                label: name.clone(),
                ..mode
            }),
        }
    }
    for m in &mut merged {
        m.share = if samples == 0 {
            0.0
        } else {
            m.count as f64 / samples as f64
        };
        let (low, high) = crate::stats::wilson(m.count, samples, crate::stats::Z95);
        m.ci_low = low;
        m.ci_high = high;
    }
    merged.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.signature.cmp(&b.signature))
    });
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(found: &str) -> Failure {
        Failure {
            interaction: 0,
            path: "interactions[0].response.text.value".into(),
            test: "value".into(),
            expected: "ok".into(),
            found: Some(found.into()),
            message: format!("text: expected value \"ok\", found {found:?}"),
        }
    }

    #[test]
    fn normalization_masks_numbers_and_ids_and_folds_case_and_space() {
        assert_eq!(
            normalize("  Order  A-17 costs 12.50 "),
            "order <id> costs <n>"
        );
        assert_eq!(normalize("id 3f2a9c81d0e4 done"), "id <id> done");
        assert_eq!(normalize("FAILURE  A"), "failure a");
    }

    #[test]
    fn recurring_found_values_split_a_signature_and_one_offs_stay_together() {
        let mut firsts = Vec::new();
        firsts.extend((0..5).map(|_| failure("failure A")));
        firsts.extend((0..3).map(|_| failure("failure b")));
        firsts.push(failure("something else entirely"));
        firsts.push(failure("and another thing"));
        let modes = classify(&firsts, 100);
        let summary: Vec<(u64, &str)> = modes
            .iter()
            .map(|m| (m.count, m.signature.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    5,
                    "interaction 0 · interactions[0].response.text.value · value · ok · found failure a"
                ),
                (
                    3,
                    "interaction 0 · interactions[0].response.text.value · value · ok · found failure b"
                ),
                (
                    2,
                    "interaction 0 · interactions[0].response.text.value · value · ok"
                ),
            ]
        );
        assert!((modes[0].share - 0.05).abs() < 1e-12);
        assert!(modes[0].ci_low < 0.05 && modes[0].ci_high > 0.05);
        let names: Vec<&str> = modes.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(
            names,
            [
                "interaction 0: text value expected \"ok\", found \"failure A\"",
                "interaction 0: text value expected \"ok\", found \"failure b\"",
                "interaction 0: text value expected \"ok\", found 2 different answers",
            ]
        );
    }

    #[test]
    fn errors_and_checks_without_a_field_are_named_in_words() {
        let error = Failure {
            interaction: 1,
            path: "interactions[1]".into(),
            test: "error:timeout".into(),
            expected: String::new(),
            found: None,
            message: "no answer within 500ms".into(),
        };
        let sentinel = Failure {
            interaction: 0,
            path: "assertions[2]".into(),
            test: "must_contain".into(),
            expected: "refund".into(),
            found: Some("x".repeat(100)),
            message: String::new(),
        };
        let modes = classify(&[error.clone(), error, sentinel], 10);
        let names: Vec<&str> = modes.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(names[0], "interaction 1: timed out");
        assert_eq!(
            names[1],
            format!(
                "interaction 0: must_contain expected \"refund\", found \"{}…\"",
                "x".repeat(60)
            )
        );
    }

    #[test]
    fn modes_named_alike_are_merged_and_keep_their_signatures() {
        let firsts: Vec<Failure> = [("x", 3), ("y", 2), ("z", 4)]
            .iter()
            .flat_map(|(found, n)| (0..*n).map(move |_| failure(found)))
            .collect();
        let modes = classify(&firsts, 10);
        assert_eq!(modes.len(), 3);
        let names = vec![
            "wrong word".to_owned(),
            "wrong word".to_owned(),
            "other".to_owned(),
        ];
        let merged = merge_named(modes.clone(), &names, 10);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].label, "wrong word");
        assert_eq!(merged[0].count, modes[0].count + modes[1].count);
        assert!(merged[0].signature.contains(" | "));
        assert!((merged[0].share - 0.7).abs() < 1e-12);
        assert_eq!(
            merge_named(modes.clone(), &names[..1], 10),
            modes,
            "a bad answer changes nothing"
        );
    }

    #[test]
    fn numbers_do_not_split_modes() {
        let firsts = vec![
            failure("answer 41"),
            failure("answer 42"),
            failure("answer 43"),
        ];
        let modes = classify(&firsts, 3);
        assert_eq!(modes.len(), 1);
        assert!(modes[0].signature.ends_with("found answer <n>"));
    }
}
