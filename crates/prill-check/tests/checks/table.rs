//! Table-driven: every stock test against every JSON type, negations, nested field
//! paths, presence, missing parts, lists of given values from a plan, and messages.

use std::collections::BTreeSet;
use std::path::Path;

use prill_check::{Evaluation, Outcome, Response, Status, run_checks};
use prill_spec::plan::{CheckKind, Part};
use prill_spec::{Env, Unrecognized, load_str};
use serde_json::{Value, json};

use crate::support::{present, run_plain, stock};

use Status::{Failed as F, Passed as P};

type Row = (&'static str, Value, Value, Status);

const NAMES: [&str; 8] = [
    "value",
    "not_value",
    "less",
    "not_less",
    "greater",
    "not_greater",
    "keywords",
    "not_keywords",
];

const TYPES: [&str; 7] = ["null", "bool", "int", "float", "string", "list", "object"];

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

fn value_rows() -> Vec<Row> {
    vec![
        ("value", json!(null), json!(null), F),
        ("value", json!(null), json!(0), F),
        ("value", json!(null), json!(""), F),
        ("value", json!(true), json!(true), P),
        ("value", json!(false), json!(true), F),
        ("value", json!(true), json!(1), F),
        ("value", json!(false), json!(0), F),
        ("value", json!(19481), json!(19481.0), P),
        ("value", json!(19481), json!(19481), P),
        ("value", json!(19481), json!(19482), F),
        ("value", json!(3), json!("3"), F),
        ("value", json!(-1), json!(u64::MAX), F),
        ("value", json!(u64::MAX), json!(u64::MAX), P),
        ("value", json!(i64::MIN), json!(i64::MIN), P),
        ("value", json!(3.0), json!(3), P),
        ("value", json!(3.5), json!(3.5), P),
        ("value", json!(0.1 + 0.2), json!(0.3), F),
        ("value", json!(2.5), json!(2), F),
        ("value", json!(-0.0), json!(0), P),
        ("value", json!("Liverpool"), json!("Liverpool"), P),
        ("value", json!("Liverpool"), json!("liverpool"), F),
        ("value", json!(""), json!(""), P),
        ("value", json!("3"), json!(3), F),
        ("value", json!("true"), json!(true), F),
        ("value", json!([1, 2]), json!([1.0, 2]), P),
        ("value", json!([1, 2]), json!([2, 1]), F),
        ("value", json!([]), json!([]), P),
        ("value", json!([1]), json!(1), F),
        (
            "value",
            json!([[1, {"a": 2.0}]]),
            json!([[1.0, {"a": 2}]]),
            P,
        ),
        (
            "value",
            json!({"a": 1, "b": 2}),
            json!({"b": 2.0, "a": 1}),
            P,
        ),
        ("value", json!({"a": 1}), json!({"a": 1, "b": 2}), F),
        ("value", json!({"a": 1, "b": 2}), json!({"a": 1}), F),
        ("value", json!({}), json!({}), P),
        ("value", json!({"a": null}), json!({}), F),
    ]
}

fn rows() -> Vec<Row> {
    let mut rows = value_rows();
    rows.extend([
        ("not_value", json!(null), json!(null), F),
        ("not_value", json!(null), json!(""), F),
        ("not_value", json!(true), json!(true), F),
        ("not_value", json!(true), json!(1), P),
        ("not_value", json!(19481), json!(19481.0), F),
        ("not_value", json!(19481), json!(19482), P),
        ("not_value", json!(3.0), json!(3), F),
        ("not_value", json!(2.5), json!(2), P),
        ("not_value", json!("x"), json!(""), P),
        ("not_value", json!(""), json!(""), F),
        ("not_value", json!([1, 2]), json!([1.0, 2]), F),
        ("not_value", json!([1, 2]), json!([2, 1]), P),
        ("not_value", json!({"a": 1}), json!({"a": 1.0}), F),
        ("not_value", json!({"a": 1}), json!({"a": 2}), P),
        // less: the response value is less than the given one.
        ("less", json!(4), json!(5), P),
        ("less", json!(5), json!(5), F),
        ("less", json!(6), json!(5), F),
        ("less", json!(4), json!(4.5), P),
        ("less", json!(-1), json!(u64::MAX), P),
        ("less", json!(u64::MAX), json!(-1), F),
        ("less", json!(i64::MIN), json!(i64::MAX), P),
        ("less", json!(4.5), json!(5), P),
        ("less", json!(5.0), json!(5), F),
        ("less", json!(5.5), json!(5), F),
        ("less", json!(-0.5), json!(0), P),
        ("less", json!("apple"), json!("banana"), P),
        ("less", json!("banana"), json!("apple"), F),
        ("less", json!("B"), json!("a"), P),
        ("less", json!(""), json!("a"), P),
        ("less", json!("a"), json!("a"), F),
        ("less", json!("ab"), json!("abc"), P),
        ("less", json!("é"), json!("z"), F),
        ("less", json!(null), json!(5), F),
        ("less", json!(true), json!(5), F),
        ("less", json!("7"), json!(5), F),
        ("less", json!(7), json!("8"), F),
        ("less", json!(1.5), json!("8"), F),
        ("less", json!([1]), json!(5), F),
        ("less", json!({"a": 1}), json!(5), F),
        ("less", json!(null), json!("a"), F),
        ("less", json!(false), json!("a"), F),
        ("less", json!(["a"]), json!("b"), F),
        ("less", json!({"a": 1}), json!("b"), F),
        ("not_less", json!(5), json!(5), P),
        ("not_less", json!(6), json!(5), P),
        ("not_less", json!(4), json!(5), F),
        ("not_less", json!(5.0), json!(5), P),
        ("not_less", json!(4.9), json!(5), F),
        ("not_less", json!("b"), json!("a"), P),
        ("not_less", json!("a"), json!("a"), P),
        ("not_less", json!("a"), json!("b"), F),
        ("not_less", json!(null), json!(5), F),
        ("not_less", json!(true), json!(5), F),
        ("not_less", json!("7"), json!(5), F),
        ("not_less", json!(7), json!("8"), F),
        ("not_less", json!(2.5), json!("8"), F),
        ("not_less", json!([1]), json!(5), F),
        ("not_less", json!({"a": 1}), json!(5), F),
        // greater: the response value is greater than the given one.
        ("greater", json!(6), json!(5.5), P),
        ("greater", json!(5), json!(5), F),
        ("greater", json!(4), json!(5), F),
        ("greater", json!(u64::MAX), json!(i64::MAX), P),
        ("greater", json!(5.5), json!(5), P),
        ("greater", json!(5.0), json!(5), F),
        ("greater", json!("b"), json!("a"), P),
        ("greater", json!("a"), json!("a"), F),
        ("greater", json!("abc"), json!("ab"), P),
        ("greater", json!(null), json!(5), F),
        ("greater", json!(true), json!(5), F),
        ("greater", json!("7"), json!(5), F),
        ("greater", json!(9.5), json!("8"), F),
        ("greater", json!([9]), json!(5), F),
        ("greater", json!({"a": 9}), json!(5), F),
        ("not_greater", json!(5), json!(5), P),
        ("not_greater", json!(4), json!(5), P),
        ("not_greater", json!(6), json!(5), F),
        ("not_greater", json!(5.0), json!(5), P),
        ("not_greater", json!(5.1), json!(5), F),
        ("not_greater", json!("a"), json!("b"), P),
        ("not_greater", json!("b"), json!("a"), F),
        ("not_greater", json!(null), json!(5), F),
        ("not_greater", json!(false), json!(5), F),
        ("not_greater", json!("1"), json!(5), F),
        ("not_greater", json!([1]), json!(5), F),
        ("not_greater", json!({"a": 1}), json!(5), F),
        // keywords: substring of a string, element of a list, key of an object.
        ("keywords", json!("The Beatles"), json!("Beatles"), P),
        ("keywords", json!("The Beatles"), json!("beatles"), F),
        ("keywords", json!("answer: 19482"), json!(19482), P),
        ("keywords", json!("answer: 19482"), json!(19481), F),
        ("keywords", json!("flag: true"), json!(true), P),
        ("keywords", json!("cost 3.0"), json!(3.0), P),
        ("keywords", json!("cost 3"), json!(3.0), F),
        ("keywords", json!("anything"), json!(""), P),
        ("keywords", json!(""), json!("x"), F),
        ("keywords", json!([1, 2.0, "x"]), json!(2), P),
        ("keywords", json!([1, 2.0, "x"]), json!(2.0), P),
        ("keywords", json!([1, 2]), json!(1.0), P),
        ("keywords", json!([1, 2.0, "x"]), json!("2"), F),
        ("keywords", json!([1, 2.0, "x"]), json!("x"), P),
        ("keywords", json!(["Beatles"]), json!("Beat"), F),
        ("keywords", json!([[1, 2]]), json!([1, 2.0]), P),
        ("keywords", json!([true]), json!(1), F),
        ("keywords", json!([]), json!("x"), F),
        ("keywords", json!({"id": 1}), json!("id"), P),
        ("keywords", json!({"id": 1}), json!(1), F),
        ("keywords", json!({"1": "x"}), json!(1), P),
        ("keywords", json!({"id": 1}), json!("i"), F),
        ("keywords", json!({}), json!("id"), F),
        ("keywords", json!({"true": 0}), json!(true), P),
        ("keywords", json!(3), json!(3), F),
        ("keywords", json!(3.5), json!("3"), F),
        ("keywords", json!(true), json!(true), F),
        ("keywords", json!(null), json!("x"), F),
        ("not_keywords", json!("The Beatles"), json!("Beatles"), F),
        ("not_keywords", json!("The Beatles"), json!("Stones"), P),
        ("not_keywords", json!("answer: 19482"), json!(19482), F),
        ("not_keywords", json!("x"), json!(""), F),
        ("not_keywords", json!([1, 2.0]), json!(2), F),
        ("not_keywords", json!(["Beatles"]), json!("Beat"), P),
        ("not_keywords", json!([]), json!("x"), P),
        ("not_keywords", json!({"id": 1}), json!("id"), F),
        ("not_keywords", json!({"id": 1}), json!(1), P),
        ("not_keywords", json!(3), json!(4), F),
        ("not_keywords", json!(2.5), json!(2.5), F),
        ("not_keywords", json!(true), json!(false), F),
        ("not_keywords", json!(null), json!("x"), F),
    ]);
    rows
}

/// Runs `name` on a response whose `part` holds `found` (at field `x` for the
/// dictionary parts).
fn outcome(part: Part, name: &str, found: &Value, given: &Value) -> prill_check::CheckResult {
    let (response, field): (Response, &[&str]) = match part {
        Part::Text => (
            Response::text(found.as_str().expect("text rows are strings")),
            &[],
        ),
        Part::SlyData => (
            Response::text("ignored").with_sly_data(json!({"x": found})),
            &["x"],
        ),
        Part::Structure => (
            Response::text("ignored").with_structure(json!({"x": found})),
            &["x"],
        ),
    };
    run_plain(&stock(part, field, name, given.clone()), &response)
}

#[test]
fn every_stock_test_against_every_json_type() {
    let mut failures = Vec::new();
    let mut runs = 0;
    for (name, found, given, want) in rows() {
        let mut parts = vec![Part::Structure, Part::SlyData];
        if found.is_string() {
            parts.push(Part::Text);
        }
        for part in parts {
            let result = outcome(part, name, &found, &given);
            runs += 1;
            if result.status() != want {
                failures.push(format!(
                    "{name} found={found} given={given} on {}: want {want:?}, got {:?}: {}",
                    part.name(),
                    result.status(),
                    result.message()
                ));
            }
            // A pass/fail check scores 1 or 0 with threshold `gte: 1`.
            let Outcome::Evaluated { evaluation, .. } = &result.outcome else {
                failures.push(format!("{name} found={found} errored"));
                continue;
            };
            let expected_eval = Evaluation::pass_fail(want == P);
            if evaluation.score != expected_eval.score
                || evaluation.threshold != expected_eval.threshold
            {
                failures.push(format!("{name} found={found}: evaluation {evaluation:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(runs > 300, "only {runs} runs");
}

#[test]
fn the_table_covers_every_test_against_every_type() {
    let covered: BTreeSet<(&str, &str)> = rows()
        .iter()
        .map(|(name, found, _, _)| (*name, type_of(found)))
        .collect();
    let mut missing = Vec::new();
    for name in NAMES {
        for ty in TYPES {
            if !covered.contains(&(name, ty)) {
                missing.push(format!("{name} × {ty}"));
            }
        }
        for status in [P, F] {
            assert!(
                rows().iter().any(|r| r.0 == name && r.3 == status),
                "{name} has no {status:?} row"
            );
        }
    }
    assert!(missing.is_empty(), "not covered: {}", missing.join(", "));
}

#[test]
fn not_value_is_the_opposite_of_value_on_every_value_row() {
    // A null found value is missing, so both forms fail on it (see
    // `null_found_values_fail_every_test`).
    for (_, found, given, want) in value_rows().into_iter().filter(|r| !r.1.is_null()) {
        let negated = outcome(Part::Structure, "not_value", &found, &given);
        let opposite = if want == P { F } else { P };
        assert_eq!(
            negated.status(),
            opposite,
            "not_value found={found} given={given}: {}",
            negated.message()
        );
    }
}

#[test]
fn inequalities_on_mismatched_types_fail_both_ways_and_name_the_found_type() {
    let found_values = [
        (json!(true), "a boolean"),
        (json!([1]), "a list"),
        (json!({"a": 1}), "an object"),
    ];
    for test in ["less", "greater"] {
        for negated in [false, true] {
            let name = if negated {
                format!("not_{test}")
            } else {
                test.to_owned()
            };
            let mut cases: Vec<(Value, Value, &str)> = found_values
                .iter()
                .flat_map(|(f, phrase)| {
                    [
                        (f.clone(), json!(5), *phrase),
                        (f.clone(), json!("m"), *phrase),
                    ]
                })
                .collect();
            cases.push((json!("7"), json!(5), "a string"));
            cases.push((json!(7), json!("8"), "a number"));
            cases.push((json!(7.5), json!("8"), "a number"));
            for (found, given, phrase) in cases {
                let result = outcome(Part::Structure, &name, &found, &given);
                assert_eq!(result.status(), F, "{name} {found} vs {given}");
                let wanted = if given.is_number() {
                    "a number"
                } else {
                    "a string"
                };
                assert_eq!(
                    result.message(),
                    format!(
                        "structure.x: `{name}` compares {wanted} with {given}, but found {phrase} {found}"
                    ),
                );
            }
        }
    }
}

#[test]
fn keywords_on_a_number_or_a_boolean_fail_both_ways_with_a_clear_message() {
    for (found, phrase) in [
        (json!(3), "a number"),
        (json!(2.5), "a number"),
        (json!(false), "a boolean"),
    ] {
        for name in ["keywords", "not_keywords"] {
            let result = outcome(Part::SlyData, name, &found, &json!("3"));
            assert_eq!(result.status(), F, "{name} on {found}");
            assert_eq!(
                result.message(),
                format!(
                    "sly_data.x: `{name}` looks in text, a list or an object, but found {phrase} {found}"
                )
            );
        }
    }
}

#[test]
fn representative_messages_are_exact() {
    let structure = Response::text("The Beatles").with_structure(json!({
        "running_cost": 3.0,
        "tags": [1, 2],
        "obj": {"a": 1},
        "n": 3,
        "x": 7,
    }));
    let sly = Response::text("call 867-5309").with_sly_data(json!({"name": "", "id": "x"}));
    let cases = [
        (
            stock(Part::Structure, &["running_cost"], "value", json!(6.0)),
            &structure,
            F,
            "structure.running_cost: expected value 6.0, found 3.0",
        ),
        (
            stock(Part::Structure, &["running_cost"], "value", json!(3)),
            &structure,
            P,
            "structure.running_cost: value 3 as expected",
        ),
        (
            stock(Part::SlyData, &["id"], "not_value", json!("")),
            &sly,
            P,
            "sly_data.id: \"x\" is not \"\" as expected",
        ),
        (
            stock(Part::SlyData, &["name"], "not_value", json!("")),
            &sly,
            F,
            "sly_data.name: expected a value other than \"\", found \"\"",
        ),
        (
            stock(Part::Structure, &["x"], "less", json!(5)),
            &structure,
            F,
            "structure.x: expected less than 5, found 7",
        ),
        (
            stock(Part::Structure, &["x"], "less", json!(7.5)),
            &structure,
            P,
            "structure.x: 7 is less than 7.5 as expected",
        ),
        (
            stock(Part::Structure, &["x"], "not_less", json!(7)),
            &structure,
            P,
            "structure.x: 7 is at least 7 as expected",
        ),
        (
            stock(Part::Structure, &["x"], "not_less", json!(8)),
            &structure,
            F,
            "structure.x: expected at least 8, found 7",
        ),
        (
            stock(Part::Structure, &["x"], "greater", json!(7)),
            &structure,
            F,
            "structure.x: expected greater than 7, found 7",
        ),
        (
            stock(Part::Structure, &["x"], "not_greater", json!(6)),
            &structure,
            F,
            "structure.x: expected at most 6, found 7",
        ),
        (
            stock(Part::Structure, &["x"], "not_greater", json!(7)),
            &structure,
            P,
            "structure.x: 7 is at most 7 as expected",
        ),
        (
            stock(Part::Text, &[], "keywords", json!("Liverpool")),
            &structure,
            F,
            "text: expected to contain \"Liverpool\", found \"The Beatles\"",
        ),
        (
            stock(Part::Text, &[], "keywords", json!("Beatles")),
            &structure,
            P,
            "text: found \"Beatles\" as expected",
        ),
        (
            stock(Part::Structure, &["tags"], "keywords", json!(3)),
            &structure,
            F,
            "structure.tags: expected to have the element 3, found [1,2]",
        ),
        (
            stock(Part::Structure, &["obj"], "keywords", json!("b")),
            &structure,
            F,
            "structure.obj: expected to have the key \"b\", found {\"a\":1}",
        ),
        (
            stock(Part::Structure, &["obj"], "not_keywords", json!("a")),
            &structure,
            F,
            "structure.obj: expected not to have the key \"a\", found {\"a\":1}",
        ),
        (
            stock(Part::Text, &[], "not_keywords", json!("867-5309")),
            &sly,
            F,
            "text: expected not to contain \"867-5309\", found \"call 867-5309\"",
        ),
        (
            stock(Part::Text, &[], "not_keywords", json!("555-0100")),
            &sly,
            P,
            "text: not found \"555-0100\" as expected",
        ),
        (
            stock(Part::Structure, &["n"], "keywords", json!(3)),
            &structure,
            F,
            "structure.n: `keywords` looks in text, a list or an object, but found a number 3",
        ),
        (
            present(Part::Structure, &["obj", "a"]),
            &structure,
            P,
            "structure.obj.a is present",
        ),
        (
            present(Part::Structure, &["n", "a"]),
            &structure,
            F,
            "structure.n.a is missing: structure.n is a number, not an object",
        ),
    ];
    for (check, response, want, message) in cases {
        let result = run_plain(&check, response);
        assert_eq!(result.status(), want, "{}", result.message());
        assert_eq!(result.message(), message);
    }
}

#[test]
fn a_result_names_its_check_target_and_expected_value() {
    let check = stock(Part::Structure, &["a", "b"], "not_value", json!(""));
    let result = run_plain(
        &check,
        &Response::default().with_structure(json!({"a": {"b": "x"}})),
    );
    assert_eq!(result.path, check.path);
    assert_eq!(result.name, "not_value");
    assert_eq!(result.target, "structure.a.b");
    assert_eq!(result.expected, Some(json!("")));
    assert_eq!(result.status(), P);

    let result = run_plain(
        &present(Part::SlyData, &["id"]),
        &Response::default().with_sly_data(json!({"id": null})),
    );
    assert_eq!(result.name, "present");
    assert_eq!(result.target, "sly_data.id");
    assert_eq!(result.expected, None);
}

#[test]
fn nested_paths_are_followed_and_explained() {
    let deep = json!({"a": {"b": {"c": {"d": 42, "list": [1, 2]}}}, "n": 5, "s": "str"});
    let response = Response::text("t")
        .with_structure(deep.clone())
        .with_sly_data(deep);
    for part in [Part::Structure, Part::SlyData] {
        let p = part.name();
        let r = run_plain(
            &stock(part, &["a", "b", "c", "d"], "value", json!(42.0)),
            &response,
        );
        assert_eq!(r.status(), P, "{}", r.message());
        assert_eq!(r.target, format!("{p}.a.b.c.d"));
        let r = run_plain(
            &stock(part, &["a", "b", "c", "d"], "less", json!(42)),
            &response,
        );
        assert_eq!(
            r.message(),
            format!("{p}.a.b.c.d: expected less than 42, found 42")
        );
        let r = run_plain(
            &stock(part, &["a", "b", "c"], "keywords", json!("list")),
            &response,
        );
        assert_eq!(r.status(), P, "{}", r.message());
        let r = run_plain(
            &stock(part, &["a", "b", "c", "list"], "keywords", json!(2.0)),
            &response,
        );
        assert_eq!(r.status(), P, "{}", r.message());

        let missing = [
            (
                vec!["a", "x", "c"],
                format!("{p}.a.x.c is missing: {p}.a has no key `x`"),
            ),
            (
                vec!["a", "b", "c", "e"],
                format!("{p}.a.b.c.e is missing: {p}.a.b.c has no key `e`"),
            ),
            (
                vec!["answer"],
                format!("{p}.answer is missing: {p} has no key `answer`"),
            ),
            (
                vec!["n", "b"],
                format!("{p}.n.b is missing: {p}.n is a number, not an object"),
            ),
            (
                vec!["s", "b", "c"],
                format!("{p}.s.b.c is missing: {p}.s is a string, not an object"),
            ),
            (
                vec!["a", "b", "c", "list", "0"],
                format!("{p}.a.b.c.list.0 is missing: {p}.a.b.c.list is a list, not an object"),
            ),
            (
                vec!["a", "b", "c", "d", "e"],
                format!("{p}.a.b.c.d.e is missing: {p}.a.b.c.d is a number, not an object"),
            ),
        ];
        for (path, message) in missing {
            // A missing field fails every test and its negation, and presence, alike.
            for name in NAMES.iter().chain(&["gist", "not_gist"]) {
                let r = run_plain(&stock(part, &path, name, json!("x")), &response);
                assert_eq!(r.status(), F, "{name} {path:?}");
                assert_eq!(r.message(), message, "{name}");
            }
            let r = run_plain(&present(part, &path), &response);
            assert_eq!(r.status(), F);
            assert_eq!(r.message(), message);
        }
    }
}

#[test]
fn a_part_that_is_not_an_object_or_is_absent_is_explained() {
    let response = Response::text("t").with_structure(json!("a string"));
    let r = run_plain(
        &stock(Part::Structure, &["a"], "value", json!(1)),
        &response,
    );
    assert_eq!(
        r.message(),
        "structure.a is missing: structure is a string, not an object"
    );
    let r = run_plain(
        &stock(Part::SlyData, &["equals"], "value", json!(1)),
        &response,
    );
    assert_eq!(r.status(), F);
    assert_eq!(
        r.message(),
        "sly_data.equals is missing: the response has no sly_data"
    );
    let r = run_plain(&present(Part::Structure, &[]), &Response::text("t"));
    assert_eq!(r.status(), F);
    assert_eq!(
        r.message(),
        "structure is missing: the response has no structure"
    );
    let r = run_plain(&present(Part::Structure, &[]), &response);
    assert_eq!(r.status(), P);
    assert_eq!(r.message(), "structure is present");
}

#[test]
fn null_found_values_fail_every_test() {
    // As upstream (`assertIsNotNone`), a null value is no value: every test fails on
    // it, the `not_` forms and presence included, and the message says so.
    let response = Response::default().with_sly_data(json!({"x": null}));
    for name in [
        "value",
        "not_value",
        "less",
        "not_less",
        "greater",
        "not_greater",
        "keywords",
        "not_keywords",
    ] {
        let r = run_plain(&stock(Part::SlyData, &["x"], name, json!(1)), &response);
        assert_eq!(r.status(), F, "{name}");
        assert_eq!(r.message(), "sly_data.x is missing: it is null", "{name}");
    }
    let r = run_plain(&present(Part::SlyData, &["x"]), &response);
    assert_eq!(r.status(), F);
}

#[test]
fn presence_passes_for_any_value_there_and_fails_when_absent() {
    for v in [
        json!(false),
        json!(0),
        json!(""),
        json!([]),
        json!({}),
        json!({"deep": 1}),
    ] {
        let response = Response::default().with_sly_data(json!({"reservation_id": v}));
        let r = run_plain(&present(Part::SlyData, &["reservation_id"]), &response);
        assert_eq!(r.status(), P, "{v}");
        assert_eq!(r.message(), "sly_data.reservation_id is present");
        assert!(matches!(r.outcome, Outcome::Evaluated { .. }));
    }
    let r = run_plain(
        &present(Part::SlyData, &["reservation_id"]),
        &Response::default().with_sly_data(json!({"other": 1})),
    );
    assert_eq!(r.status(), F);
    assert_eq!(
        r.message(),
        "sly_data.reservation_id is missing: sly_data has no key `reservation_id`"
    );
}

#[test]
fn missing_text_fails_every_text_test() {
    let response = Response::default().with_structure(json!({"answer": "Beatles"}));
    for name in NAMES.iter().chain(&["gist", "not_gist"]) {
        let r = run_plain(&stock(Part::Text, &[], name, json!("Beatles")), &response);
        assert_eq!(r.status(), F, "{name}");
        assert_eq!(
            r.message(),
            "text is missing: the response has no answer text"
        );
        assert_eq!(r.target, "text");
    }
    let r = run_plain(&present(Part::Text, &[]), &response);
    assert_eq!(r.status(), F);
    let r = run_plain(&present(Part::Text, &[]), &Response::text(""));
    assert_eq!(r.status(), P, "an empty answer is still an answer");
}

#[test]
fn long_values_are_cut_with_a_visible_marker() {
    let long = "a".repeat(500);
    let response = Response::text(long.clone()).with_structure(json!({"x": long}));
    let r = run_plain(
        &stock(Part::Structure, &["x"], "value", json!("b".repeat(300))),
        &response,
    );
    assert_eq!(r.status(), F);
    let message = r.message();
    assert!(
        message.starts_with("structure.x: expected value \"bbbb"),
        "{message}"
    );
    assert_eq!(message.matches('…').count(), 2, "{message}");
    assert!(message.chars().count() < 200, "{message}");
    assert!(!message.contains(&"a".repeat(100)), "{message}");

    let r = run_plain(
        &stock(Part::Structure, &["x"], "value", json!(vec!["x"; 100])),
        &response,
    );
    assert!(r.message().contains("[\"x\",\"x\""), "{}", r.message());
    assert!(r.message().contains('…'), "{}", r.message());

    // A long text is shown around the keyword it contains.
    let text = format!("{}call 867-5309 now{}", "x".repeat(200), "y".repeat(200));
    let r = run_plain(
        &stock(Part::Text, &[], "not_keywords", json!("867-5309")),
        &Response::text(text),
    );
    assert_eq!(r.status(), F);
    let message = r.message();
    assert!(message.contains("\"…x"), "leading marker: {message}");
    assert!(message.ends_with("y…\""), "trailing marker: {message}");
    assert!(message.contains("call 867-5309 now"), "{message}");
    assert!(message.chars().count() < 200, "{message}");

    // A keyword that is absent: the start of the text, cut.
    let r = run_plain(
        &stock(Part::Text, &[], "keywords", json!("Liverpool")),
        &Response::text(long),
    );
    assert_eq!(r.status(), F);
    assert!(r.message().ends_with('…'), "{}", r.message());
    assert!(r.message().chars().count() < 200, "{}", r.message());

    // Short values are never cut.
    let r = run_plain(
        &stock(Part::Text, &[], "keywords", json!("Liverpool")),
        &Response::text("short"),
    );
    assert!(!r.message().contains('…'), "{}", r.message());
}

#[test]
fn multibyte_text_is_cut_on_character_boundaries() {
    let text = format!("{}ünïcödé→{}", "é".repeat(150), "日本".repeat(100));
    for name in ["keywords", "not_keywords"] {
        for needle in ["ünïcödé", "absent"] {
            let r = run_plain(
                &stock(Part::Text, &[], name, json!(needle)),
                &Response::text(text.clone()),
            );
            assert!(r.message().chars().count() < 200, "{}", r.message());
        }
    }
}

const YAML_PLAN: &str = "\
agent: music_nerd
interactions:
  - text: Who sang Yesterday?
    response:
      text:
        keywords: [Beatles, Liverpool]
      structure:
        running_cost:
          value: 3.0
";

const HOCON_PLAN: &str = r#"
agent = music_nerd
interactions = [{
  text = "Who sang Yesterday?"
  response.structure.answer.keywords = [Beatles, Liverpool]
  response.sly_data.tags.not_keywords = [x, 2]
}]
"#;

#[test]
fn a_list_of_given_values_is_one_check_per_value_and_all_must_pass() {
    let env = Env::default();
    let loaded = load_str(Path::new("case.yaml"), YAML_PLAN, &env, Unrecognized::Error)
        .expect("a test file");
    assert!(loaded.is_valid(), "{:?}", loaded.reports());
    let cases = loaded.cases();
    let checks = &cases[0].interactions[0].checks;
    let keywords: Vec<_> = checks
        .iter()
        .filter(|c| {
            matches!(
                &c.kind,
                CheckKind::Stock {
                    part: Part::Text,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(keywords.len(), 2);
    assert_eq!(
        &*keywords[0].path,
        "interactions[0].response.text.keywords[0]"
    );
    assert_eq!(
        &*keywords[1].path,
        "interactions[0].response.text.keywords[1]"
    );

    let both = Response::text("The Beatles came from Liverpool")
        .with_structure(json!({"running_cost": 3}));
    let results = futures::executor::block_on(run_checks(checks, &both, None));
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r.status() == P), "{results:?}");

    let one = Response::text("The Beatles").with_structure(json!({"running_cost": 3}));
    let results = futures::executor::block_on(run_checks(checks, &one, None));
    let statuses: Vec<Status> = results.iter().map(|r| r.status()).collect();
    assert_eq!(statuses, [P, F, P]);
    assert_eq!(
        results[1].message(),
        "text: expected to contain \"Liverpool\", found \"The Beatles\""
    );
    assert_eq!(results[1].path, keywords[1].path);

    let loaded = load_str(
        Path::new("case.hocon"),
        HOCON_PLAN,
        &env,
        Unrecognized::Error,
    )
    .expect("a test file");
    assert!(loaded.is_valid(), "{:?}", loaded.reports());
    let checks = &loaded.cases()[0].interactions[0].checks;
    assert_eq!(checks.len(), 4);
    let response = Response::default()
        .with_structure(json!({"answer": "Beatles, from Liverpool"}))
        .with_sly_data(json!({"tags": ["y", 3]}));
    let results = futures::executor::block_on(run_checks(checks, &response, None));
    assert!(results.iter().all(|r| r.status() == P), "{results:?}");
    let response = Response::default()
        .with_structure(json!({"answer": "Beatles"}))
        .with_sly_data(json!({"tags": ["y", 2.0]}));
    let results = futures::executor::block_on(run_checks(checks, &response, None));
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| r.status() == F)
        .map(|r| &*r.path)
        .collect();
    assert_eq!(
        failed,
        [
            "interactions[0].response.sly_data.tags.not_keywords[1]",
            "interactions[0].response.structure.answer.keywords[1]",
        ]
    );
}
