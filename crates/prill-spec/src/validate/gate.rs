//! The `reliability` block, the same in every dialect and in `prill.toml`: each field
//! in range, `bad` below `good`, and a plan that can meet its own error rates within
//! `max_samples` (checked exactly, [`prill_stats::Sequential::new`]), or an error that
//! says which `max_samples` would.

use prill_stats::{DesignError, MAX_SAMPLES_LIMIT, Reliability, Sequential};

use super::cx::{At, Cx};
use crate::diag::Diagnostic;
use crate::model::gate::RELIABILITY_KEYS;
use crate::node::Node;

/// Why the rule is Prill's, for Sentinel files (Sentinel has no such block).
const WHY: &str = "`reliability` is Prill's gate with stated error rates (docs/statistics.md)";

/// A `reliability` block: its fields over the defaults, or `None` with every problem
/// reported.
pub(crate) fn reliability(node: &Node, at: &At, cx: &mut Cx) -> Option<Reliability> {
    let entries = object(node, at, cx)?;
    cx.unknown_keys_because(entries, at, &RELIABILITY_KEYS, |_| None, WHY);
    let before = cx.errors();
    let mut plan = Reliability::default();
    for (field, slot) in [
        ("good", &mut plan.good),
        ("bad", &mut plan.bad),
        ("false_pass", &mut plan.false_pass),
        ("false_fail", &mut plan.false_fail),
    ] {
        if let Some(n) = node.get(field) {
            let at = at.key(field);
            if let Some(value) = cx.number(n, &at) {
                if value > 0.0 && value < 1.0 {
                    *slot = value;
                } else {
                    out_of_range(n, &at, "between 0 and 1, both excluded", cx);
                }
            }
        }
    }
    if let Some(n) = node.get("max_samples") {
        let at = at.key("max_samples");
        if let Some(value) = cx.integer(n, &at) {
            match u32::try_from(value) {
                Ok(v) if (1..=MAX_SAMPLES_LIMIT).contains(&v) => plan.max_samples = v,
                _ => out_of_range(n, &at, &format!("from 1 to {MAX_SAMPLES_LIMIT}"), cx),
            }
        }
    }
    if cx.errors() > before {
        return None;
    }
    match Sequential::new(plan) {
        Ok(_) => Some(plan),
        Err(why) => {
            design_error(node, at, &why, cx);
            None
        }
    }
}

/// The block's entries, or a type error.
fn object<'n>(node: &'n Node, at: &At, cx: &mut Cx) -> Option<&'n [(crate::node::Key, Node)]> {
    match &node.value {
        crate::node::Value::Object(entries) => Some(entries),
        _ => {
            cx.own_type_error(
                node,
                at,
                "an object such as { good = 0.95, bad = 0.80 }",
                WHY,
            );
            None
        }
    }
}

fn out_of_range(node: &Node, at: &At, rule: &str, cx: &mut Cx) {
    let d = Diagnostic::new("out-of-range", at.path(), format!("must be {rule}"))
        .at(node.span)
        .expected(rule.to_owned());
    cx.own(d, at, WHY, Some(node));
}

/// A plan that is well formed field by field but cannot be used.
fn design_error(node: &Node, at: &At, why: &DesignError, cx: &mut Cx) {
    let (field, help) = match why {
        DesignError::Order { .. } => (
            "bad",
            "`bad` is the rate that must not pass: set it below `good`".to_owned(),
        ),
        DesignError::TooFewSamples {
            needed: Some(_), ..
        } => (
            "max_samples",
            "or widen the gap between good and bad, or allow larger error rates, to need fewer"
                .to_owned(),
        ),
        DesignError::TooFewSamples { needed: None, .. } => (
            "max_samples",
            "widen the gap between good and bad, or allow larger error rates".to_owned(),
        ),
        DesignError::Range { field, .. } => (*field, "each rate lies between 0 and 1".to_owned()),
        DesignError::Samples(_) => ("max_samples", format!("from 1 to {MAX_SAMPLES_LIMIT}")),
    };
    let (span, field_at) = match node.get(field) {
        Some(n) => (n.span, at.key(field)),
        None => (node.span, at.clone()),
    };
    let d = Diagnostic::new("reliability-plan", field_at.path(), why.to_string())
        .at(span)
        .expected("a plan that meets its own error rates within max_samples")
        .help(help);
    cx.own(d, &field_at, WHY, node.get(field));
}

#[cfg(test)]
mod tests {
    use crate::model::gate::Reliability;
    use crate::validate::load_config;

    fn plan(block: &str) -> Result<Reliability, Vec<String>> {
        load_config(&format!("reliability = {block}\n"))
            .map(|c| c.reliability.expect("a plan"))
            .map_err(|errors| {
                errors
                    .iter()
                    .map(|d| {
                        format!(
                            "{}: {} | {}",
                            d.path,
                            d.message,
                            d.help.clone().unwrap_or_default()
                        )
                    })
                    .collect()
            })
    }

    #[test]
    fn fields_fall_back_to_the_defaults() {
        assert_eq!(plan("{}").unwrap(), Reliability::default());
        let p = plan("{ good = 0.9, bad = 0.6 }").unwrap();
        assert_eq!((p.good, p.bad, p.max_samples), (0.9, 0.6, 100));
    }

    #[test]
    fn a_plan_too_short_for_its_rates_says_what_max_samples_would_do() {
        let errors = plan("{ max_samples = 20 }").unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].starts_with("reliability.max_samples: "),
            "{errors:?}"
        );
        // The fewest samples that meet 5% at good 0.95 against 0.80.
        let needed = prill_stats::Sequential::unchecked(Reliability::default())
            .unwrap()
            .samples_needed()
            .unwrap();
        assert!(
            errors[0].contains(&format!("max_samples = {needed} would meet it")),
            "{errors:?}"
        );
        assert!(plan(&format!("{{ max_samples = {needed} }}")).is_ok());
        assert!(plan(&format!("{{ max_samples = {} }}", needed - 1)).is_err());
    }

    #[test]
    fn rates_out_of_range_and_in_the_wrong_order_are_refused_at_the_field() {
        let errors = plan("{ good = 1.0, false_pass = 0 }").unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with("reliability.good: must be between 0 and 1"));
        assert!(errors[1].starts_with("reliability.false_pass: "));
        let errors = plan("{ good = 0.8, bad = 0.9 }").unwrap_err();
        assert!(
            errors[0].starts_with("reliability.bad: `bad` (0.9) must be below `good` (0.8)"),
            "{errors:?}"
        );
        let errors = plan("{ max_samples = 0 }").unwrap_err();
        assert!(errors[0].starts_with("reliability.max_samples: must be from 1 to 10000"));
        let errors = plan("{ god = 0.9 }").unwrap_err();
        assert!(errors[0].contains("god"), "{errors:?}");
        assert!(plan("0.95").unwrap_err()[0].contains("expected an object"));
    }

    #[test]
    fn a_plan_that_no_cap_can_save_says_so() {
        let errors =
            plan("{ good = 0.51, bad = 0.5, false_pass = 0.001, false_fail = 0.001 }").unwrap_err();
        assert!(errors[0].contains("widen the gap"), "{errors:?}");
    }
}
