//! Properties over arbitrary JSON: a test and its negation never both pass, `value` and
//! `not_value` are complements, the inequalities partition comparable pairs, and
//! messages stay short and name their path.

use std::cmp::Ordering;

use prill_check::{CheckResult, Response, Status};
use prill_spec::plan::Part;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::{MarkerJudge, passed, run, run_plain, stock};

/// Numbers of every kind: small and large integers, unsigned beyond `i64`, floats,
/// and floats that equal integers.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i64..5).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (i64::MAX as u64..=u64::MAX).prop_map(Value::from),
        (-5i32..5).prop_map(|i| Value::from(f64::from(i))),
        (-5.0f64..5.0).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
    ]
}

/// Strings likely to collide and contain each other, some long, some not ASCII.
fn string() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[ab1]{0,3}".prop_map(Value::from),
        "[a-c é日]{0,12}".prop_map(Value::from),
        "[a-z é→]{60,200}".prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        string(),
    ]
}

/// Any JSON value, nested up to three levels.
fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[ab1]{0,2}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Any JSON value but a top-level null: a null found value counts as missing, and
/// `null_found_values_fail_every_test` covers it.
fn found_value() -> impl Strategy<Value = Value> {
    json_value().prop_filter("a null found value is missing", |v| !v.is_null())
}

/// Every integer turned into the float of the same value, all the way down.
fn floatify(v: &Value) -> Value {
    match v {
        Value::Number(n) if !n.is_f64() => n.as_f64().map_or(Value::Null, Value::from),
        Value::Array(items) => Value::Array(items.iter().map(floatify).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), floatify(v))).collect())
        }
        other => other.clone(),
    }
}

/// A found and a given value: unrelated, equal, equal up to int/float, or of one
/// comparable kind.
fn any_pair() -> impl Strategy<Value = (Value, Value)> {
    prop_oneof![
        (json_value(), json_value()),
        json_value().prop_map(|v| (v.clone(), v)),
        json_value().prop_map(|v| (v.clone(), floatify(&v))),
        json_value().prop_map(|v| (floatify(&v), v)),
        (number(), number()),
        (string(), string()),
    ]
}

/// [`any_pair`] without a null found value.
fn pair() -> impl Strategy<Value = (Value, Value)> {
    any_pair().prop_filter("a null found value is missing", |(found, _)| {
        !found.is_null()
    })
}

fn on_structure(name: &str, found: &Value, given: &Value) -> CheckResult {
    let response = Response::text("t").with_structure(json!({"x": found}));
    run_plain(
        &stock(Part::Structure, &["x"], name, given.clone()),
        &response,
    )
}

fn passes(name: &str, found: &Value, given: &Value) -> bool {
    passed(&on_structure(name, found, given))
}

/// Whether the pair has an order: two numbers or two strings.
fn comparable(a: &Value, b: &Value) -> bool {
    matches!(
        (a, b),
        (Value::Number(_), Value::Number(_)) | (Value::String(_), Value::String(_))
    )
}

/// The order of two comparable values, by an independent rule: integers exactly (in
/// `i128`), any pair with a float by `f64` value, strings by code point.
fn reference_order(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(x.chars().cmp(y.chars())),
        (Value::Number(x), Value::Number(y)) => {
            let exact = |n: &serde_json::Number| -> Option<i128> {
                n.as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
            };
            match (exact(x), exact(y)) {
                (Some(i), Some(j)) => Some(i.cmp(&j)),
                _ => x.as_f64()?.partial_cmp(&y.as_f64()?),
            }
        }
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_test_and_its_negation_never_both_pass((found, given) in pair()) {
        for test in ["value", "less", "greater", "keywords"] {
            let plain = on_structure(test, &found, &given);
            let negated = on_structure(&format!("not_{test}"), &found, &given);
            prop_assert!(
                !(passed(&plain) && passed(&negated)),
                "{test}: both passed: {} / {}", plain.message(), negated.message()
            );
            for r in [&plain, &negated] {
                prop_assert!(
                    matches!(r.status(), Status::Passed | Status::Failed),
                    "a stock test only passes or fails: {r:?}"
                );
            }
        }
    }

    #[test]
    fn value_passes_iff_not_value_fails((found, given) in pair()) {
        let plain = on_structure("value", &found, &given);
        let negated = on_structure("not_value", &found, &given);
        prop_assert_eq!(passed(&plain), !passed(&negated));
        prop_assert_eq!(negated.status() == Status::Failed, passed(&plain));
    }

    #[test]
    fn value_is_reflexive_symmetric_and_blind_to_int_or_float(v in found_value(), w in found_value()) {
        prop_assert!(passes("value", &v, &v), "{v} != itself");
        prop_assert!(passes("value", &v, &floatify(&v)), "{v} != {}", floatify(&v));
        prop_assert!(passes("value", &floatify(&v), &v));
        prop_assert_eq!(passes("value", &v, &w), passes("value", &w, &v));
    }

    #[test]
    fn less_and_not_less_partition_comparable_pairs((found, given) in pair()) {
        for test in ["less", "greater"] {
            let plain = passes(test, &found, &given);
            let negated = passes(&format!("not_{test}"), &found, &given);
            if comparable(&found, &given) {
                prop_assert!(plain != negated, "{test} {found} vs {given}: exactly one must pass");
            } else {
                prop_assert!(!plain && !negated, "{test} {found} vs {given}: both must fail");
            }
        }
    }

    #[test]
    fn comparable_pairs_obey_trichotomy_and_the_reference_order((found, given) in pair()) {
        let less = passes("less", &found, &given);
        let equal = passes("value", &found, &given);
        let greater = passes("greater", &found, &given);
        match reference_order(&found, &given) {
            Some(order) => {
                prop_assert_eq!(
                    [less, equal, greater].iter().filter(|b| **b).count(), 1,
                    "{} vs {}: less={} value={} greater={}", found, given, less, equal, greater
                );
                prop_assert_eq!(less, order == Ordering::Less, "less {} {}", found, given);
                prop_assert_eq!(greater, order == Ordering::Greater, "greater {} {}", found, given);
                prop_assert_eq!(passes("less", &given, &found), greater, "less is greater swapped");
            }
            None => prop_assert!(!less && !greater),
        }
    }

    #[test]
    fn keywords_find_what_is_in_there(
        prefix in "[a-z é]{0,100}",
        needle in "[a-z é日]{1,8}",
        suffix in "[a-z é]{0,100}",
        items in prop::collection::vec(json_value(), 0..5),
        item in json_value(),
        at in any::<prop::sample::Index>(),
        key in "[a-z]{1,4}",
    ) {
        let text = json!(format!("{prefix}{needle}{suffix}"));
        prop_assert!(passes("keywords", &text, &json!(needle)));
        prop_assert!(!passes("not_keywords", &text, &json!(needle)));

        let mut list = items.clone();
        list.insert(at.index(items.len() + 1), item.clone());
        prop_assert!(passes("keywords", &Value::Array(list.clone()), &item));
        prop_assert!(passes("keywords", &Value::Array(list), &floatify(&item)));

        let object = json!({ key.clone(): item });
        prop_assert!(passes("keywords", &object, &json!(key)));
        prop_assert!(!passes("not_keywords", &object, &json!(key)));
    }

    #[test]
    fn gist_and_not_gist_with_a_deterministic_judge_split((found, criteria) in pair(), marker in "[ab1é]") {
        let judge = MarkerJudge::new(&marker);
        let response = Response::text("t").with_structure(json!({"x": found}));
        let plain = run(&stock(Part::Structure, &["x"], "gist", criteria.clone()), &response, Some(&judge));
        let negated = run(&stock(Part::Structure, &["x"], "not_gist", criteria), &response, Some(&judge));
        prop_assert!(!(passed(&plain) && passed(&negated)));
        prop_assert!(passed(&plain) != passed(&negated), "{plain:?} / {negated:?}");
        let seen = judge.seen();
        prop_assert_eq!(seen.len(), 2);
        let sample = match &found {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        prop_assert_eq!(passed(&plain), sample.contains(&marker));
        prop_assert_eq!(&seen[0].1, &sample);
    }

    #[test]
    fn messages_name_the_path_and_stay_short((found, given) in pair()) {
        for name in [
            "value", "not_value", "less", "not_less", "greater", "not_greater", "keywords",
            "not_keywords",
        ] {
            let r = on_structure(name, &found, &given);
            prop_assert!(r.message().starts_with("structure.x"), "{}", r.message());
            prop_assert!(
                r.message().chars().count() <= 300,
                "{} chars: {}", r.message().chars().count(), r.message()
            );
        }
    }

    #[test]
    fn a_missing_field_fails_a_test_and_its_negation((found, given) in pair(), key in "[a-z]{1,3}") {
        let response = Response::text("t").with_structure(json!({"x": found}));
        for name in [
            "value", "not_value", "less", "not_less", "greater", "not_greater", "keywords",
            "not_keywords", "gist", "not_gist",
        ] {
            let missing = stock(Part::Structure, &["y", &key], name, given.clone());
            let r = run_plain(&missing, &response);
            prop_assert_eq!(r.status(), Status::Failed);
            prop_assert_eq!(
                r.message(),
                format!("structure.y.{key} is missing: structure has no key `y`")
            );
        }
    }

    #[test]
    fn a_value_deep_in_a_nested_object_is_found(
        path in prop::collection::vec("[a-z_]{1,6}", 1..6),
        v in found_value(),
    ) {
        let mut nested = v.clone();
        for name in path.iter().rev() {
            nested = json!({ name.clone(): nested });
        }
        let names: Vec<&str> = path.iter().map(String::as_str).collect();
        let response = Response::default().with_sly_data(nested);
        let r = run_plain(&stock(Part::SlyData, &names, "value", v), &response);
        prop_assert!(passed(&r), "{}", r.message());
        prop_assert_eq!(&r.target, &format!("sly_data.{}", path.join(".")));
    }
}
