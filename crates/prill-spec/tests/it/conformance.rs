//! neuro-san's own test cases (`fixtures/conformance/neuro-san/`): every one validates,
//! and normalizes to exactly the interactions and checks it spells out.
//!
//! "Spells out" is checked two ways: against an independent re-implementation of
//! upstream's response walk (breadth-first over dotted keys, a list meaning one check per
//! element), and by hand for a few files whose checks are written down here.

use std::path::{Path, PathBuf};

use prill_spec::load::{self, Unrecognized};
use prill_spec::model::data_driven::{Connection, StockTest};
use prill_spec::plan::{Case, CheckKind, Target};
use prill_spec::syntax::Env;
use serde_json::{Value, json};

const DUMMY_KEY: &str = "sk-dummy-for-prill-tests";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/neuro-san")
}

fn env() -> Env {
    Env::from_pairs([("OPENAI_API_KEY", DUMMY_KEY)])
}

fn all_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir(&dir());
    out.retain(|p| p.extension().is_some_and(|e| e == "hocon"));
    out.sort();
    out
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn load_case(path: &Path) -> (Case, Value) {
    let loaded = load::load_file(path, &env(), Unrecognized::Error)
        .unwrap()
        .expect("named files are not skipped");
    let reports: Vec<String> = loaded.reports().iter().map(|r| r.plain()).collect();
    assert!(
        loaded.is_valid(),
        "{} is invalid:\n{}",
        path.display(),
        reports.join("\n")
    );
    let cases = loaded.cases();
    assert_eq!(cases.len(), 1);
    (
        cases.into_iter().next().unwrap(),
        loaded.tree.unwrap().to_json(),
    )
}

/// Upstream's walk (`test_response_keys`), re-implemented over raw JSON: a dict goes one
/// level deeper, anything else is a test named by its last key; a list is one check per
/// element. Unlike upstream, a `{}` leaf is a presence check, and unknown parts (which
/// upstream ignores and we warn about) are skipped here as upstream skips them.
fn upstream_checks(response: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    let mut keys: Vec<(String, &Value)> = ["text", "structure", "sly_data"]
        .iter()
        .filter_map(|k| response.get(*k).map(|v| ((*k).to_owned(), v)))
        .collect();
    while !keys.is_empty() {
        let mut deeper = Vec::new();
        for (key, value) in keys {
            match value {
                Value::Null => {}
                Value::Object(map) if map.is_empty() => {
                    out.push((key, "present".to_owned(), Value::Null))
                }
                Value::Object(map) => {
                    for (k, v) in map {
                        deeper.push((format!("{key}.{k}"), v));
                    }
                }
                _ => {
                    let (verify, test) = key.rsplit_once('.').unwrap();
                    let values = match value {
                        Value::Array(items) => items.clone(),
                        other => vec![other.clone()],
                    };
                    for v in values {
                        out.push((verify.to_owned(), test.to_ascii_lowercase(), v));
                    }
                }
            }
        }
        keys = deeper;
    }
    out.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    out
}

fn plan_checks(case: &Case, interaction: usize) -> Vec<(String, String, Value)> {
    let mut out: Vec<(String, String, Value)> = case.interactions[interaction]
        .checks
        .iter()
        .map(|c| match &c.kind {
            CheckKind::Stock {
                part,
                field,
                test,
                negated,
                expected,
            } => {
                let mut path = vec![part.name().to_owned()];
                path.extend(field.iter().cloned());
                (path.join("."), test.spelled(*negated), (**expected).clone())
            }
            CheckKind::Present { part, field } => {
                let mut path = vec![part.name().to_owned()];
                path.extend(field.iter().cloned());
                (path.join("."), "present".to_owned(), Value::Null)
            }
            CheckKind::Assertion(a) => panic!("data-driven case with an assertion {a:?}"),
        })
        .collect();
    out.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    out
}

#[test]
fn every_upstream_case_validates_and_normalizes_to_what_it_spells_out() {
    let files = all_files();
    assert_eq!(files.len(), 36, "the conformance corpus changed size");
    let mut total_checks = 0;
    for path in files {
        let (case, raw) = load_case(&path);
        let Target::Agent {
            agent, connections, ..
        } = &case.target
        else {
            panic!("{}: not an agent case", path.display());
        };
        assert_eq!(
            Some(agent.as_str()),
            raw["agent"].as_str(),
            "{}",
            path.display()
        );
        let expected_connections: Vec<String> = match &raw["connections"] {
            Value::Null => vec!["direct".to_owned()],
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect(),
            other => panic!("odd connections {other}"),
        };
        let got: Vec<&str> = connections.iter().map(|c| c.name()).collect();
        assert_eq!(got, expected_connections, "{}", path.display());

        let raw_interactions = raw["interactions"].as_array().unwrap();
        assert_eq!(
            case.interactions.len(),
            raw_interactions.len(),
            "{}",
            path.display()
        );
        for (i, raw_it) in raw_interactions.iter().enumerate() {
            let step = &case.interactions[i];
            assert_eq!(
                step.input.text.as_deref(),
                raw_it["text"].as_str(),
                "{} [{i}]",
                path.display()
            );
            assert_eq!(
                step.input.sly_data.as_deref().cloned().map(Value::Object),
                raw_it.get("sly_data").cloned(),
                "{} [{i}]",
                path.display()
            );
            assert_eq!(
                step.continue_conversation,
                raw_it["continue_conversation"].as_bool().unwrap_or(true)
            );
            let want = upstream_checks(raw_it.get("response").unwrap_or(&json!({})));
            let got = plan_checks(&case, i);
            assert_eq!(got, want, "{} interaction {i}", path.display());
            total_checks += got.len();
        }
    }
    assert!(
        total_checks > 60,
        "only {total_checks} checks across the corpus"
    );
}

#[test]
fn math_guy_spells_out_one_float_value_check() {
    let (case, _) = load_case(&dir().join("fixtures-2026-02/math_guy/basic_sly_data.hocon"));
    assert_eq!(&*case.name, "math_guy/basic_sly_data");
    let step = &case.interactions[0];
    assert_eq!(
        step.input.sly_data.as_deref().cloned().map(Value::Object),
        Some(json!({"x": 847, "y": 23}))
    );
    assert_eq!(step.checks.len(), 1);
    let CheckKind::Stock {
        field,
        test,
        negated,
        expected,
        ..
    } = &step.checks[0].kind
    else {
        panic!("not a stock check");
    };
    assert_eq!(field, &["equals"]);
    assert_eq!((*test, *negated), (StockTest::Value, false));
    assert_eq!(expected.to_string(), "19481.0", "the float stays a float");
    assert_eq!(
        &*step.checks[0].path,
        "interactions[0].response.sly_data.equals.value[0]"
    );
}

#[test]
fn music_nerd_pro_http_spells_out_two_turns_of_structure_checks() {
    let (case, _) = load_case(
        &dir()
            .join("fixtures-2026-02/music_nerd_pro/combination_responses_with_history_http.hocon"),
    );
    let Target::Agent { connections, .. } = &case.target else {
        panic!("not an agent case")
    };
    assert_eq!(connections, &[Connection::Http]);
    let turns: Vec<Vec<(String, String, Value)>> = (0..2).map(|i| plan_checks(&case, i)).collect();
    assert_eq!(
        turns[0],
        [
            (
                "structure.answer".to_owned(),
                "keywords".to_owned(),
                json!("Beatles")
            ),
            (
                "structure.running_cost".to_owned(),
                "value".to_owned(),
                json!(3.0)
            ),
        ]
    );
    assert_eq!(
        turns[1],
        [
            (
                "structure.answer".to_owned(),
                "keywords".to_owned(),
                json!("Liverpool")
            ),
            (
                "structure.running_cost".to_owned(),
                "value".to_owned(),
                json!(6.0)
            ),
        ]
    );
}

#[test]
fn esp_four_quote_close_keeps_the_quote_in_the_criteria() {
    let (case, _) = load_case(
        &dir().join("fixtures-2026-02/esp_decision_assistant/fallbacks_and_commondef_values.hocon"),
    );
    let gist = case.interactions[0]
        .checks
        .iter()
        .find_map(|c| match &c.kind {
            CheckKind::Stock {
                test: StockTest::Gist,
                expected,
                ..
            } => expected.as_str().map(str::to_owned),
            _ => None,
        })
        .expect("a gist check");
    assert!(
        gist.ends_with('"'),
        "criteria should end with the fourth quote: {gist:?}"
    );
    assert!(gist.trim_end_matches('"').ends_with(' '), "{gist:?}");
}

#[test]
fn substitution_from_the_environment_reaches_sly_data() {
    let (case, _) = load_case(
        &dir().join("fixtures-latest/music_nerd_pro_sly_api_key/with_user_api_key.hocon"),
    );
    let sly = case.interactions[0].input.sly_data.clone().unwrap();
    assert_eq!(sly["api_keys"]["openai_api_key"], json!(DUMMY_KEY));
}

#[test]
fn without_the_variable_the_file_names_it() {
    let path = dir().join("fixtures-latest/music_nerd_pro_sly_api_key/with_user_api_key.hocon");
    let loaded = load::load_file(&path, &Env::default(), Unrecognized::Error)
        .unwrap()
        .unwrap();
    let reports = loaded.reports();
    assert_eq!(reports.len(), 1);
    let text = reports[0].plain();
    assert!(text.contains("OPENAI_API_KEY"), "{text}");
    assert!(
        text.contains(":44:"),
        "points at the line of the substitution: {text}"
    );
}

#[test]
fn load_test_presence_checks_and_failure_patterns_are_kept() {
    let (case, _) = load_case(
        &dir().join("fixtures-latest/load_tests/agent_network_designer/catering_company.hocon"),
    );
    assert_eq!(
        *case.failure_patterns,
        [
            "No fully-specified LLM found",
            "API key to be set as an environment variable"
        ]
    );
    let checks = plan_checks(&case, 0);
    assert_eq!(
        checks,
        [
            (
                "sly_data.agent_network_name".to_owned(),
                "not_value".to_owned(),
                json!("")
            ),
            (
                "sly_data.agent_reservations".to_owned(),
                "not_value".to_owned(),
                json!("")
            ),
        ]
    );
}
