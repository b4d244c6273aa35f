//! Calibration: run a judge over a labeled set and count how often it agrees with the
//! labels, how often it passes what should fail (a false pass) and fails what should
//! pass (a false fail).
//!
//! The set is a YAML (or JSON) list of items: `sample`, `criteria`, `expected` (`pass`
//! or `fail`) and an optional `kind` that groups the counts.
//!
//! ```
//! use prill_check::{BoxFuture, Judge, JudgeError, JudgeVerdict};
//! use prill_judge::calibrate::{calibrate, parse_labeled};
//!
//! struct Always;
//! impl Judge for Always {
//!     fn judge<'a>(&'a self, _: &'a str, _: &'a str)
//!         -> BoxFuture<'a, Result<JudgeVerdict, JudgeError>> {
//!         Box::pin(async { Ok(JudgeVerdict::new(true, "looks fine")) })
//!     }
//! }
//!
//! let items = parse_labeled(
//!     "set.yaml",
//!     "- {sample: a, criteria: b, expected: pass}\n- {sample: c, criteria: d, expected: fail}\n",
//! )
//! .unwrap();
//! let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let result = runtime.block_on(calibrate(&Always, &items));
//! assert_eq!((result.agreed, result.false_pass, result.false_fail), (1, 1, 0));
//! assert_eq!(result.false_pass_rate(), Some(1.0));
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use futures_util::StreamExt;
use prill_check::{Judge, JudgeError};
use prill_spec::Source;
use prill_stats::agreement::Confusion;
use serde_json::{Value, json};

/// The labeled set built into Prill (`crates/prill-judge/data/labeled.yaml`): what
/// `prill judge check` judges when it is given no file.
pub const BUILT_IN_SET: &str = include_str!("../data/labeled.yaml");

/// The name [`built_in`] gives the built-in set in messages.
pub const BUILT_IN_NAME: &str = "the built-in labeled set";

/// The items of [`BUILT_IN_SET`].
pub fn built_in() -> Result<Vec<LabeledItem>, LabeledError> {
    parse_labeled(BUILT_IN_NAME, BUILT_IN_SET)
}

/// How many items are judged at once.
const IN_FLIGHT: usize = 8;

/// One labeled item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabeledItem {
    /// What an agent produced.
    pub sample: String,
    /// What it is held to.
    pub criteria: String,
    /// Whether a careful reader passes it.
    pub expected: bool,
    /// What makes it hard (`negation`, `numbers`, ...), if said.
    pub kind: Option<String>,
}

/// Why a labeled set could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct LabeledError {
    /// The file.
    pub file: String,
    /// What is wrong.
    pub message: String,
}

/// Reads a labeled set from a file.
pub fn load_labeled(path: &Path) -> Result<Vec<LabeledItem>, LabeledError> {
    let text = std::fs::read_to_string(path).map_err(|e| LabeledError {
        file: path.display().to_string(),
        message: format!("cannot read the file: {e}"),
    })?;
    parse_labeled(&path.display().to_string(), &text)
}

/// Reads a labeled set from YAML (JSON is YAML too).
pub fn parse_labeled(file: &str, text: &str) -> Result<Vec<LabeledItem>, LabeledError> {
    let error = |message: String| LabeledError {
        file: file.to_owned(),
        message,
    };
    let source = Source::new(file, text);
    let node = prill_spec::syntax::yaml::parse(&source).map_err(|diagnostics| {
        let first = diagnostics
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_else(|| "unknown error".to_owned());
        error(format!("not valid YAML: {first}"))
    })?;
    let Value::Array(items) = node.to_json() else {
        return Err(error("the set must be a list of items".to_owned()));
    };
    if items.is_empty() {
        return Err(error("the set has no items".to_owned()));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| item_from(item).map_err(|m| error(format!("item {}: {m}", i + 1))))
        .collect()
}

fn item_from(item: &Value) -> Result<LabeledItem, String> {
    let Some(object) = item.as_object() else {
        return Err("not a mapping".to_owned());
    };
    for key in object.keys() {
        if !["sample", "criteria", "expected", "kind"].contains(&key.as_str()) {
            return Err(format!(
                "unknown key `{key}`; expected sample, criteria, expected, kind"
            ));
        }
    }
    let text = |key: &str| -> Result<String, String> {
        match object.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::String(_)) => Err(format!("`{key}` is empty")),
            Some(other) if key == "sample" => Ok(other.to_string()),
            Some(_) => Err(format!("`{key}` must be text")),
            None => Err(format!("`{key}` is missing")),
        }
    };
    let sample = text("sample")?;
    let criteria = text("criteria")?;
    let expected = match object.get("expected").and_then(Value::as_str) {
        Some("pass") => true,
        Some("fail") => false,
        Some(other) => return Err(format!("`expected` is `{other}`; expected pass or fail")),
        None => return Err("`expected` is missing; expected pass or fail".to_owned()),
    };
    let kind = match object.get("kind") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("`kind` must be text".to_owned()),
    };
    Ok(LabeledItem {
        sample,
        criteria,
        expected,
        kind,
    })
}

/// What the judge said about one item.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemResult {
    /// The item's place in the set, from 0.
    pub index: usize,
    /// The label.
    pub expected: bool,
    /// The judge's verdict, or its error.
    pub verdict: Result<bool, JudgeError>,
    /// The judge's reason (empty on error).
    pub reason: String,
}

impl ItemResult {
    /// Whether the judge agreed with the label.
    pub fn agreed(&self) -> bool {
        self.verdict.as_ref().is_ok_and(|v| *v == self.expected)
    }
}

/// Counts for one group of items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Items.
    pub total: usize,
    /// Items the judge agreed on.
    pub agreed: usize,
    /// Items labeled fail that the judge passed.
    pub false_pass: usize,
    /// Items labeled pass that the judge failed.
    pub false_fail: usize,
    /// Items the judge could not judge.
    pub errors: usize,
    /// Items labeled pass.
    pub expected_pass: usize,
    /// Items labeled fail.
    pub expected_fail: usize,
}

impl Tally {
    fn add(&mut self, result: &ItemResult) {
        self.total += 1;
        if result.expected {
            self.expected_pass += 1;
        } else {
            self.expected_fail += 1;
        }
        match result.verdict {
            Err(_) => self.errors += 1,
            Ok(v) if v == result.expected => self.agreed += 1,
            Ok(true) => self.false_pass += 1,
            Ok(false) => self.false_fail += 1,
        }
    }
}

/// The outcome of a calibration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Calibration {
    /// Items.
    pub total: usize,
    /// Items the judge agreed on.
    pub agreed: usize,
    /// Items labeled fail that the judge passed.
    pub false_pass: usize,
    /// Items labeled pass that the judge failed.
    pub false_fail: usize,
    /// Items the judge could not judge.
    pub errors: usize,
    /// Items labeled pass.
    pub expected_pass: usize,
    /// Items labeled fail.
    pub expected_fail: usize,
    /// The same counts for each `kind`.
    pub per_kind: BTreeMap<String, Tally>,
    /// Every item's result, in the set's order.
    pub items: Vec<ItemResult>,
}

fn rate(n: usize, of: usize) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

impl Calibration {
    /// Agreed items over all items (an error counts as a disagreement).
    pub fn agreement_rate(&self) -> Option<f64> {
        rate(self.agreed, self.total)
    }

    /// False passes over the items labeled fail.
    pub fn false_pass_rate(&self) -> Option<f64> {
        rate(self.false_pass, self.expected_fail)
    }

    /// False fails over the items labeled pass.
    pub fn false_fail_rate(&self) -> Option<f64> {
        rate(self.false_fail, self.expected_pass)
    }

    /// The labels against the judge's verdicts, over the items it judged (errors
    /// left out).
    pub fn confusion(&self) -> Confusion {
        let mut c = Confusion::default();
        for item in &self.items {
            match (item.expected, item.verdict.as_ref()) {
                (true, Ok(true)) => c.pass_pass += 1,
                (true, Ok(false)) => c.pass_fail += 1,
                (false, Ok(true)) => c.fail_pass += 1,
                (false, Ok(false)) => c.fail_fail += 1,
                (_, Err(_)) => {}
            }
        }
        c
    }

    /// Cohen's κ of the judge against the labels: agreement beyond chance, over the
    /// items it judged. A judge that always says `pass` on a set that mostly passes
    /// agrees often and has κ = 0.
    pub fn kappa(&self) -> Option<f64> {
        self.confusion().kappa()
    }

    /// The items the judge disagreed on or could not judge.
    pub fn disagreements(&self) -> impl Iterator<Item = &ItemResult> {
        self.items.iter().filter(|r| !r.agreed())
    }

    /// Everything as JSON, with the items that went wrong.
    pub fn to_json(&self, items: &[LabeledItem]) -> Value {
        let kinds: serde_json::Map<String, Value> = self
            .per_kind
            .iter()
            .map(|(k, t)| {
                (
                    k.clone(),
                    json!({"total": t.total, "agreed": t.agreed, "false_pass": t.false_pass,
                           "false_fail": t.false_fail, "errors": t.errors}),
                )
            })
            .collect();
        let wrong: Vec<Value> = self
            .disagreements()
            .map(|r| {
                let item = items.get(r.index);
                json!({
                    "index": r.index,
                    "sample": item.map(|i| i.sample.as_str()),
                    "criteria": item.map(|i| i.criteria.as_str()),
                    "kind": item.and_then(|i| i.kind.as_deref()),
                    "expected": word(r.expected),
                    "verdict": r.verdict.as_ref().map(|v| word(*v)).ok(),
                    "error": r.verdict.as_ref().err().map(ToString::to_string),
                    "reason": r.reason,
                })
            })
            .collect();
        json!({
            "total": self.total,
            "agreed": self.agreed,
            "false_pass": self.false_pass,
            "false_fail": self.false_fail,
            "errors": self.errors,
            "agreement_rate": self.agreement_rate(),
            "false_pass_rate": self.false_pass_rate(),
            "false_fail_rate": self.false_fail_rate(),
            "kappa": self.kappa(),
            "sensitivity": self.confusion().sensitivity(),
            "specificity": self.confusion().specificity(),
            "per_kind": kinds,
            "disagreements": wrong,
        })
    }
}

/// `pass` or `fail`.
pub fn word(pass: bool) -> &'static str {
    if pass { "pass" } else { "fail" }
}

/// Runs `judge` over every item (a few at a time) and counts.
pub async fn calibrate(judge: &dyn Judge, items: &[LabeledItem]) -> Calibration {
    let results: Vec<ItemResult> = futures_util::stream::iter(items.iter().enumerate())
        .map(|(index, item)| async move {
            let (verdict, reason) = match judge.judge(&item.criteria, &item.sample).await {
                Ok(v) => (Ok(v.pass), v.reason),
                Err(e) => (Err(e), String::new()),
            };
            ItemResult {
                index,
                expected: item.expected,
                verdict,
                reason,
            }
        })
        .buffered(IN_FLIGHT)
        .collect()
        .await;
    let mut all = Tally::default();
    let mut per_kind: BTreeMap<String, Tally> = BTreeMap::new();
    for (result, item) in results.iter().zip(items) {
        all.add(result);
        if let Some(kind) = &item.kind {
            per_kind.entry(kind.clone()).or_default().add(result);
        }
    }
    Calibration {
        total: all.total,
        agreed: all.agreed,
        false_pass: all.false_pass,
        false_fail: all.false_fail,
        errors: all.errors,
        expected_pass: all.expected_pass,
        expected_fail: all.expected_fail,
        per_kind,
        items: results,
    }
}

/// A rate as a percentage, or `n/a`.
fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "n/a".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

impl Calibration {
    /// The calibration as text: the rates, per kind, then every disagreement with its
    /// item.
    pub fn to_text(&self, items: &[LabeledItem]) -> String {
        let c = self;
        let mut out = format!(
            "{} items: agreement {} ({} of {})\nfalse-pass rate {} ({} of {} labeled fail)\nfalse-fail rate {} ({} of {} labeled pass)\nerrors {}\n",
            c.total,
            percent(c.agreement_rate()),
            c.agreed,
            c.total,
            percent(c.false_pass_rate()),
            c.false_pass,
            c.expected_fail,
            percent(c.false_fail_rate()),
            c.false_fail,
            c.expected_pass,
            c.errors,
        );
        let confusion = c.confusion();
        out.push_str(&format!(
            "Cohen's kappa {} (agreement beyond chance; 1 is perfect, 0 is a coin), sensitivity {}, specificity {} (errors left out)\n",
            c.kappa().map_or("-".to_owned(), |k| format!("{k:.2}")),
            percent(confusion.sensitivity()),
            percent(confusion.specificity()),
        ));
        if !c.per_kind.is_empty() {
            out.push_str("\nby kind:\n");
            for (kind, t) in &c.per_kind {
                out.push_str(&format!(
                    "  {kind}: {}/{} agreed, {} false pass, {} false fail, {} errors\n",
                    t.agreed, t.total, t.false_pass, t.false_fail, t.errors
                ));
            }
        }
        let wrong: Vec<_> = c.disagreements().collect();
        if !wrong.is_empty() {
            out.push_str("\ndisagreements:\n");
            for r in wrong {
                let Some(item) = items.get(r.index) else {
                    continue;
                };
                let kind = item
                    .kind
                    .as_deref()
                    .map(|k| format!(" [{k}]"))
                    .unwrap_or_default();
                let got = match &r.verdict {
                    Ok(v) => format!("judged {}: {}", word(*v), r.reason),
                    Err(e) => format!("error: {e}"),
                };
                out.push_str(&format!(
                    "  #{}{kind} expected {}, {got}\n    sample: {}\n    criteria: {}\n",
                    r.index + 1,
                    word(r.expected),
                    serde_json::Value::String(item.sample.clone()),
                    serde_json::Value::String(item.criteria.clone()),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_set_loads() {
        let items = built_in().unwrap();
        assert!(items.len() >= 40, "{}", items.len());
        assert!(items.iter().any(|i| i.expected) && items.iter().any(|i| !i.expected));
    }

    #[test]
    fn bad_sets_are_explained() {
        let e = parse_labeled("x.yaml", "a: 1").unwrap_err();
        assert_eq!(e.to_string(), "x.yaml: the set must be a list of items");
        let e = parse_labeled("x.yaml", "- {sample: a, criteria: b, expected: maybe}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.yaml: item 1: `expected` is `maybe`; expected pass or fail"
        );
        let e = parse_labeled("x.yaml", "- {sample: a, expected: pass}").unwrap_err();
        assert_eq!(e.to_string(), "x.yaml: item 1: `criteria` is missing");
        let e = parse_labeled("x.yaml", "- {sample: a, criteria: b, expected: pass, x: 1}")
            .unwrap_err();
        assert!(e.message.contains("unknown key `x`"), "{e}");
    }
}
