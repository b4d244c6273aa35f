//! The gate a case is held to: `success_ratio` (`k` of `n` samples must pass) or
//! `reliability` (a sequential test that tells a `good` success rate from a `bad` one
//! with stated error rates, `docs/statistics.md`). A case has one or the other.
//!
//! ```
//! use prill_spec::model::data_driven::SuccessRatio;
//! use prill_spec::model::gate::{Gate, Reliability};
//!
//! let ratio = Gate::Ratio(SuccessRatio { need: 4, of: 5 });
//! assert_eq!(ratio.to_string(), "4/5");
//! assert_eq!(ratio.max_samples(), 5);
//! let reliability = Gate::Reliability(Reliability::default());
//! assert_eq!(reliability.max_samples(), 100);
//! assert_eq!(reliability.scaled_to(10), reliability, "--samples leaves it alone");
//! ```

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};

use prill_stats::MAX_SAMPLES_LIMIT;
pub use prill_stats::Reliability;

use super::data_driven::SuccessRatio;

/// The fields of a `reliability` block, in the order docs and messages list them.
pub const RELIABILITY_KEYS: [&str; 5] = ["good", "bad", "false_pass", "false_fail", "max_samples"];

/// What decides a unit's verdict from its samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gate {
    /// At least `need` of `of` samples must pass.
    Ratio(SuccessRatio),
    /// A sequential test between `good` and `bad` ([`prill_stats::Sequential`]); its
    /// plan was checked when the file was read.
    Reliability(Reliability),
}

impl Default for Gate {
    /// `1/1`, the gate of a case that states none.
    fn default() -> Gate {
        Gate::Ratio(SuccessRatio::default())
    }
}

impl Gate {
    /// The most samples a unit held to it runs that count (errored samples of a
    /// `reliability` gate are not counted: see `prill_run`).
    pub fn max_samples(&self) -> u32 {
        match self {
            Gate::Ratio(r) => r.of,
            Gate::Reliability(r) => r.max_samples,
        }
    }

    /// The same gate over `samples` samples (`--samples`): a ratio keeps its pass rate
    /// ([`SuccessRatio::scaled_to`]); a `reliability` gate decides its own count and is
    /// left as it is.
    pub fn scaled_to(self, samples: u32) -> Gate {
        match self {
            Gate::Ratio(r) => Gate::Ratio(r.scaled_to(samples)),
            Gate::Reliability(_) => self,
        }
    }

    /// The ratio, for a `k/n` gate.
    pub fn ratio(&self) -> Option<SuccessRatio> {
        match self {
            Gate::Ratio(r) => Some(*r),
            Gate::Reliability(_) => None,
        }
    }

    /// The plan, for a `reliability` gate.
    pub fn reliability(&self) -> Option<Reliability> {
        match self {
            Gate::Ratio(_) => None,
            Gate::Reliability(r) => Some(*r),
        }
    }
}

impl fmt::Display for Gate {
    /// `4/5`, or `reliability good 0.95 bad 0.8 (5%/5%, at most 100)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Gate::Ratio(r) => r.fmt(f),
            Gate::Reliability(r) => write!(
                f,
                "reliability good {} bad {} ({}%/{}%, at most {})",
                r.good,
                r.bad,
                percent(r.false_pass),
                percent(r.false_fail),
                r.max_samples
            ),
        }
    }
}

/// `0.05` as `5`, `0.025` as `2.5`, without float noise.
fn percent(rate: f64) -> String {
    let p = (rate * 1e6).round() / 1e4;
    format!("{p}")
}

impl Serialize for Gate {
    /// A ratio as its `k/n` string; a `reliability` gate as its five fields.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Gate::Ratio(r) => r.serialize(s),
            Gate::Reliability(r) => r.serialize(s),
        }
    }
}

/// The JSON Schema of a `reliability` block, for the dialects' schemas: every field
/// optional, each with its default and range.
pub struct ReliabilitySchema;

impl JsonSchema for ReliabilitySchema {
    fn schema_name() -> Cow<'static, str> {
        "Reliability".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let d = Reliability::default();
        let rate = |what: &str, default: f64, example: f64| {
            json_schema!({
                "description": what,
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
                "default": default,
                "examples": [example]
            })
        };
        json_schema!({
            "description": "A gate with stated error rates (instead of `success_ratio`): it passes an agent whose success rate is at least `good` with probability at least 1 - `false_fail`, and one at most `bad` with probability at most `false_pass`, drawing samples one at a time until it can tell. Undecided after `max_samples` counted samples, the verdict is inconclusive. `prill explain` prints what a plan costs.",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "good": rate("A success rate at least this high should pass.", d.good, 0.99),
                "bad": rate("A success rate at most this high should not pass; below `good`.", d.bad, 0.7),
                "false_pass": rate("The most often an agent at `bad` may pass.", d.false_pass, 0.1),
                "false_fail": rate("The most often an agent at `good` may fail or be inconclusive.", d.false_fail, 0.1),
                "max_samples": {
                    "description": "The counted samples after which an undecided gate is inconclusive; enough to meet `false_fail` (the validator says how many).",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SAMPLES_LIMIT,
                    "default": d.max_samples,
                    "examples": [200]
                }
            }
        })
    }
}

/// A `reliability` plan written on a command line, `good=0.9,bad=0.7` (any of the
/// fields, the rest at their defaults; empty for every default), checked as a
/// `reliability` block in a file is: each field, and whether the plan can meet its
/// own error rates. The error is one line per problem, each with what would do.
pub fn parse_reliability(text: &str) -> Result<Reliability, String> {
    let fields = text.replace(',', ", ");
    let toml = format!("reliability = {{ {fields} }}\n");
    let loaded = crate::load::load_str(
        std::path::Path::new("prill.toml"),
        &toml,
        &crate::syntax::Env::default(),
        crate::load::Unrecognized::Error,
    );
    match loaded.map(|l| l.outcome) {
        Some(Ok(crate::load::Document::Config(config))) => {
            Ok(config.reliability.unwrap_or_default())
        }
        Some(Err(errors)) => Err(errors
            .iter()
            .map(|d| {
                let help = d
                    .help
                    .as_deref()
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                format!("{}: {}{help}", d.path, d.message)
            })
            .collect::<Vec<_>>()
            .join("; ")),
        _ => Err(format!(
            "expected `field=value` pairs separated by commas, e.g. good=0.9,bad=0.7, found `{text}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_plan_is_checked_as_a_file_block_is() {
        assert_eq!(parse_reliability(""), Ok(Reliability::default()));
        let p = parse_reliability("good=0.9,bad=0.7").unwrap();
        assert_eq!((p.good, p.bad), (0.9, 0.7));
        let why = parse_reliability("max_samples=10").unwrap_err();
        assert!(why.starts_with("reliability.max_samples: "), "{why}");
        assert!(why.contains(" would meet it"), "{why}");
        let why = parse_reliability("godo=0.9").unwrap_err();
        assert!(why.contains("did you mean `good`"), "{why}");
        assert!(parse_reliability("good").is_err());
    }
}
