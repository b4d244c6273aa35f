//! `flaky`: answers `ok`, or `failure <mode>` with each mode's probability, from a seeded
//! draw so that every run repeats exactly.
//!
//! The draw for sly_data `seed` and `sample` is
//! `(splitmix64(splitmix64(seed) ^ sample) >> 11) / 2^53`, uniform in `[0, 1)`. The modes
//! are taken in sorted name order and partition `[0, 1)` by cumulative probability: with
//! modes `{"b": 0.2, "a": 0.1}` a draw below 0.1 is `failure a`, one below 0.3 is
//! `failure b`, and any other is `ok`.

use serde_json::{Map, Value, json};

use super::{Reply, Turn, count};

/// The splitmix64 step: a fast, well-mixed 64-bit hash.
fn splitmix64(z: u64) -> u64 {
    let mut z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The uniform draw in `[0, 1)` that `flaky` makes for `seed` and sample index `sample`.
pub fn uniform_draw(seed: u64, sample: u64) -> f64 {
    let bits = splitmix64(splitmix64(seed) ^ sample) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// The seed from sly_data: an integer (a negative one is taken as its two's complement).
fn seed(value: Option<&Value>) -> u64 {
    let Some(value) = value else { return 0 };
    value
        .as_u64()
        .or_else(|| value.as_i64().map(|n| n as u64))
        .or_else(|| value.as_f64().map(|f| f as u64))
        .unwrap_or(0)
}

/// The failure mode that `draw` falls into, if any.
fn failure(modes: Option<&Map<String, Value>>, draw: f64) -> Option<String> {
    let mut modes: Vec<(&String, f64)> = modes?
        .iter()
        .map(|(name, p)| (name, p.as_f64().unwrap_or(0.0).max(0.0)))
        .collect();
    modes.sort_by(|a, b| a.0.cmp(b.0));
    let mut cumulative = 0.0;
    for (name, probability) in modes {
        cumulative += probability;
        if draw < cumulative {
            return Some(name.clone());
        }
    }
    None
}

pub(super) fn reply(turn: &Turn<'_>) -> Reply {
    let seed = seed(turn.sly("seed"));
    let sample = count(turn.sly("sample")).unwrap_or(0);
    let draw = uniform_draw(seed, sample);
    let failure = failure(turn.sly("modes").and_then(Value::as_object), draw);
    let mut structure = Map::new();
    match &failure {
        Some(mode) => {
            structure.insert("outcome".to_owned(), "failure".into());
            structure.insert("mode".to_owned(), mode.clone().into());
        }
        None => {
            structure.insert("outcome".to_owned(), "ok".into());
        }
    }
    structure.insert("draw".to_owned(), json!(draw));
    Reply {
        text: failure.map_or_else(|| "ok".to_owned(), |mode| format!("failure {mode}")),
        tool_args: json!({"seed": seed, "sample": sample}),
        tool_result: Value::Object(structure.clone()),
        structure: Some(structure),
        sly_data: None,
        delay: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_repeat_and_stay_in_range() {
        for sample in 0..1000 {
            let draw = uniform_draw(42, sample);
            assert!((0.0..1.0).contains(&draw));
            assert_eq!(draw.to_bits(), uniform_draw(42, sample).to_bits());
        }
        assert_ne!(uniform_draw(1, 0).to_bits(), uniform_draw(2, 0).to_bits());
    }

    #[test]
    fn modes_partition_in_name_order() {
        let modes = json!({"b": 0.2, "a": 0.1});
        let modes = modes.as_object();
        assert_eq!(failure(modes, 0.05).as_deref(), Some("a"));
        assert_eq!(failure(modes, 0.15).as_deref(), Some("b"));
        assert_eq!(failure(modes, 0.35), None);
    }
}
