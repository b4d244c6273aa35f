//! neuro-san's own test cases: for every check of every interaction of every
//! conformance file, responses built from the check itself that must pass it and
//! responses that must fail it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prill_check::{Response, Status};
use prill_spec::Env;
use prill_spec::load::{self, Unrecognized};
use prill_spec::model::data_driven::StockTest;
use prill_spec::plan::{Case, Check, CheckKind, Part};
use serde_json::{Value, json};

use crate::support::{MarkerJudge, run};

/// What the test judge looks for: a sample passes a gist iff it carries this.
const MARKER: &str = "[meets-the-criteria]";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/neuro-san")
}

fn hocon_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            hocon_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "hocon") {
            out.push(path);
        }
    }
}

fn load_cases() -> Vec<Case> {
    let env = Env::from_pairs([("OPENAI_API_KEY", "sk-dummy")]);
    let mut files = Vec::new();
    hocon_files(&corpus(), &mut files);
    files.sort();
    assert!(!files.is_empty(), "no conformance files found");
    files
        .iter()
        .flat_map(|path| {
            let loaded = load::load_file(path, &env, Unrecognized::Error)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .unwrap_or_else(|| panic!("{} was skipped", path.display()));
            assert!(
                loaded.is_valid(),
                "{} is invalid: {:?}",
                path.display(),
                loaded.reports()
            );
            loaded.cases()
        })
        .collect()
}

/// A value that is not `v` (as JSON equality has it), of the same type.
fn different(v: &Value) -> Value {
    match v {
        Value::Null => json!("not null"),
        Value::Bool(b) => json!(!b),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => json!(i.wrapping_add(1)),
            (None, Some(f)) => json!(f + 1.0),
            (None, None) => json!(0),
        },
        Value::String(s) if s.is_empty() => json!("a non-empty string"),
        Value::String(s) => json!(format!("{s} (changed)")),
        Value::Array(items) => {
            let mut items = items.clone();
            items.push(json!("extra"));
            Value::Array(items)
        }
        Value::Object(map) => {
            let mut map = map.clone();
            map.insert("__extra".to_owned(), json!(true));
            Value::Object(map)
        }
    }
}

/// A number `delta` away from `n`.
fn shifted(n: &serde_json::Number, delta: i64) -> Value {
    match n.as_i64() {
        Some(i) => json!(i + delta),
        None => json!(n.as_f64().expect("a finite number") + delta as f64),
    }
}

/// A text that does not contain `needle`.
fn without(needle: &str) -> String {
    let text = "The agent answered something else entirely.".to_owned();
    assert!(!text.contains(needle), "pick another filler for {needle:?}");
    text
}

/// Found values for which the non-negated `test` with `expected` passes and fails.
fn hits_and_misses(test: StockTest, part: Part, expected: &Value) -> (Vec<Value>, Vec<Value>) {
    let needle = match expected {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match (test, expected) {
        (StockTest::Value, v) => (vec![v.clone()], vec![different(v)]),
        (StockTest::Less, Value::Number(n)) => (vec![shifted(n, -1)], vec![v(n), shifted(n, 1)]),
        (StockTest::Greater, Value::Number(n)) => (vec![shifted(n, 1)], vec![v(n), shifted(n, -1)]),
        (StockTest::Less, Value::String(s)) if !s.is_empty() => {
            (vec![json!("")], vec![json!(s), json!(format!("{s}~"))])
        }
        (StockTest::Greater, Value::String(s)) => (vec![json!(format!("{s}~"))], vec![json!(s)]),
        (StockTest::Keywords, _) => {
            let mut hits = vec![json!(format!("Well: {needle}, as asked."))];
            let mut misses = vec![json!(without(&needle))];
            if part != Part::Text {
                hits.push(json!(["first", expected, "last"]));
                misses.push(json!(["first", different(expected)]));
                if expected.is_string() {
                    hits.push(json!({ needle.clone(): 1 }));
                    misses.push(json!({ format!("{needle}_other"): 1 }));
                }
            }
            (hits, misses)
        }
        (StockTest::Gist, _) => {
            let mut hits = vec![json!(format!("{MARKER} An answer that does that."))];
            let mut misses = vec![json!("An answer that misses the point.")];
            if part != Part::Text {
                // Objects reach the judge as their JSON text.
                hits.push(json!({"reservation": {"note": MARKER, "id": 7}}));
                misses.push(json!({"reservation": {"note": "none", "id": 7}}));
            }
            (hits, misses)
        }
        (test, expected) => panic!("no response built for {test:?} with {expected}"),
    }
}

fn v(n: &serde_json::Number) -> Value {
    Value::Number(n.clone())
}

/// `value` nested under `field`: `{"a": {"b": value}}`.
fn nest(field: &[String], value: Value) -> Value {
    field
        .iter()
        .rev()
        .fold(value, |inner, name| json!({ name.clone(): inner }))
}

/// A response whose `part`/`field` holds `found`.
fn response_with(part: Part, field: &[String], found: Value) -> Response {
    match part {
        Part::Text => {
            let Value::String(text) = found else {
                panic!("a text check needs a string, built {found}");
            };
            Response::text(text)
        }
        Part::SlyData => Response::text("unrelated answer").with_sly_data(nest(field, found)),
        Part::Structure => Response::text("unrelated answer").with_structure(nest(field, found)),
    }
}

/// A response in which `part`/`field` is absent, though its parent (if any) is there.
fn response_without(part: Part, field: &[String]) -> Response {
    match (part, field.split_last()) {
        (Part::Text, _) => Response::default().with_structure(json!({"text": "elsewhere"})),
        (_, None) => Response::text("no such part"),
        (_, Some((last, parent))) => {
            let sibling = json!({ format!("{last}_sibling"): "here" });
            response_with(part, parent, sibling)
        }
    }
}

/// Responses that must pass `check`, and responses that must fail it.
fn responses(check: &Check) -> (Vec<Response>, Vec<Response>) {
    match &check.kind {
        CheckKind::Stock {
            part,
            field,
            test,
            negated,
            expected,
        } => {
            let (hits, misses) = hits_and_misses(*test, *part, expected);
            let (pass, fail) = if *negated {
                (misses, hits)
            } else {
                (hits, misses)
            };
            let build = |found: Vec<Value>| -> Vec<Response> {
                found
                    .into_iter()
                    .map(|f| response_with(*part, field, f))
                    .collect()
            };
            let mut fail = build(fail);
            // A missing field fails every test, its negation too.
            fail.push(response_without(*part, field));
            (build(pass), fail)
        }
        CheckKind::Present { part, field } => (
            vec![
                response_with(*part, field, json!("here")),
                response_with(*part, field, json!({"nested": [1, 2]})),
            ],
            vec![response_without(*part, field)],
        ),
        CheckKind::Assertion(a) => panic!("a data-driven case with an assertion: {a:?}"),
    }
}

fn kind_name(check: &Check) -> String {
    match &check.kind {
        CheckKind::Stock { test, negated, .. } => test.spelled(*negated),
        CheckKind::Present { .. } => "present".to_owned(),
        CheckKind::Assertion(a) => a.name().to_owned(),
    }
}

#[test]
fn every_conformance_check_passes_and_fails_on_responses_built_for_it() {
    let cases = load_cases();
    let judge = MarkerJudge::new(MARKER);
    let mut exercised = 0;
    let mut runs = 0;
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    for case in &cases {
        for (i, step) in case.interactions.iter().enumerate() {
            for check in &step.checks {
                let (pass, fail) = responses(check);
                assert!(!pass.is_empty() && !fail.is_empty());
                for (want, responses) in [(Status::Passed, pass), (Status::Failed, fail)] {
                    for response in responses {
                        runs += 1;
                        let result = run(check, &response, Some(&judge));
                        if result.status() != want {
                            problems.push(format!(
                                "{} [{i}] {}: want {want:?}, got {:?}: {}\n  response: {}",
                                case.name,
                                check.path,
                                result.status(),
                                result.message(),
                                serde_json::to_string(&response).unwrap_or_default()
                            ));
                        }
                        if !result.message().starts_with(&result.target) {
                            problems.push(format!(
                                "{}: the message does not name {}: {}",
                                check.path,
                                result.target,
                                result.message()
                            ));
                        }
                        if result.path != check.path {
                            problems.push(format!("{}: result path {}", check.path, result.path));
                        }
                    }
                }
                exercised += 1;
                *by_kind.entry(kind_name(check)).or_default() += 1;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(exercised > 60, "only {exercised} checks exercised");
    assert!(runs >= 3 * exercised, "{runs} runs for {exercised} checks");
    for kind in [
        "value",
        "not_value",
        "keywords",
        "not_keywords",
        "gist",
        "present",
    ] {
        assert!(
            by_kind.get(kind).is_some_and(|n| *n > 0),
            "the corpus no longer has a `{kind}` check: {by_kind:?}"
        );
    }
    // Every gist criterion reached the judge verbatim; objects arrived as JSON text.
    let seen = judge.seen();
    assert!(!seen.is_empty());
    let criteria: Vec<String> = cases
        .iter()
        .flat_map(|c| &c.interactions)
        .flat_map(|s| &s.checks)
        .filter_map(|c| match &c.kind {
            CheckKind::Stock {
                test: StockTest::Gist,
                expected,
                ..
            } => expected.as_str().map(str::to_owned),
            _ => None,
        })
        .collect();
    assert!(seen.iter().all(|(c, _)| criteria.contains(c)));
    assert!(
        seen.iter()
            .any(|(_, sample)| sample
                == &format!(r#"{{"reservation":{{"note":"{MARKER}","id":7}}}}"#)),
        "an object sample reaches the judge as JSON text"
    );
}

#[test]
fn the_music_nerd_pro_turns_pass_together_on_a_good_conversation() {
    let cases = load_cases();
    let case = cases
        .iter()
        .find(|c| {
            &*c.name == "music_nerd_pro/combination_responses_with_history_direct"
                && c.file.to_string_lossy().contains("fixtures-2026-02")
        })
        .expect("the music_nerd_pro direct case");
    let turns = [
        Response::text("The Beatles")
            .with_structure(json!({"answer": "The Beatles sang it.", "running_cost": 3})),
        Response::text("Liverpool")
            .with_structure(json!({"answer": "They came from Liverpool.", "running_cost": 6.0})),
    ];
    assert_eq!(case.interactions.len(), turns.len());
    for (step, response) in case.interactions.iter().zip(&turns) {
        assert!(!step.checks.is_empty());
        for check in &step.checks {
            let r = run(check, response, None);
            assert_eq!(r.status(), Status::Passed, "{}", r.message());
        }
    }
    // Swapping the turns fails every check of both.
    for (step, response) in case.interactions.iter().zip(turns.iter().rev()) {
        for check in &step.checks {
            let r = run(check, response, None);
            assert_eq!(r.status(), Status::Failed, "{}", r.message());
        }
    }
    let second_cost = case.interactions[1]
        .checks
        .iter()
        .find(|c| c.path.contains("running_cost"))
        .expect("a running_cost check");
    let r = run(second_cost, &turns[0], None);
    assert_eq!(
        r.message(),
        "structure.running_cost: expected value 6.0, found 3"
    );
}
