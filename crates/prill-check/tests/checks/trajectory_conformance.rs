//! `tool_sequence` against the real trajectory evaluators of agentevals and google-adk:
//! every trajectory of `fixtures/conformance/trajectory/cases.json`, under every mode
//! and argument mode of both, written as a Sentinel spec with their own names
//! (`unordered`, `ANY_ORDER`, ...), must get the verdict the evaluator gave it
//! (`verdicts.json`, written by `.ci/trajectory-conformance/evaluate.py`, which CI runs
//! to check it still holds), except on the lines of `deviations.tsv`, each of which
//! must still happen.

use std::path::{Path, PathBuf};

use prill_check::{Response, Status, run_checks};
use prill_spec::model::sentinel::ArgMatcher;
use prill_spec::{Env, Unrecognized, load_str};
use serde_json::{Value, json};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/trajectory")
}

fn read_json(name: &str) -> Value {
    let path = corpus().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every tool call of a side, in order: from OpenAI chat messages, or a list of calls.
fn calls(side: &Value) -> Vec<(String, Value)> {
    let items = side.as_array().expect("a side is a list");
    if items.first().is_some_and(|m| m.get("role").is_some()) {
        items
            .iter()
            .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
            .flatten()
            .map(|c| {
                let f = &c["function"];
                let args = f["arguments"].as_str().expect("arguments as JSON text");
                (
                    f["name"].as_str().expect("a name").to_owned(),
                    serde_json::from_str(args).expect("arguments are JSON"),
                )
            })
            .collect()
    } else {
        items
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().expect("a name").to_owned(),
                    c["args"].clone(),
                )
            })
            .collect()
    }
}

/// The expected calls as a user writes them in a spec: `{tool, args}`, a value that
/// would read as a matcher wrapped in `{equals: ...}`; or the case's own Prill form.
fn written(case: &Value) -> Value {
    if let Some(items) = case.get("prill_expected") {
        return items.clone();
    }
    let literal = |v: &Value| match v.as_object() {
        Some(o) if o.len() == 1 && o.keys().all(|k| ArgMatcher::KEYS.contains(&k.as_str())) => {
            json!({"equals": v})
        }
        _ => v.clone(),
    };
    let items: Vec<Value> = calls(&case["expected"])
        .into_iter()
        .map(|(tool, args)| {
            let args: serde_json::Map<String, Value> = args
                .as_object()
                .expect("arguments are an object")
                .iter()
                .map(|(k, v)| (k.clone(), literal(v)))
                .collect();
            json!({"tool": tool, "args": args})
        })
        .collect();
    Value::from(items)
}

/// A verdict key of `verdicts.json` as Prill's `mode` and `args_mode`, each written with
/// the evaluator's own name: `agentevals unordered subset`, `adk ANY_ORDER ignore_args`.
fn setting(key: &str) -> (&str, &str) {
    let words: Vec<&str> = key.split(' ').collect();
    match words.as_slice() {
        ["agentevals", mode, args] => (mode, args),
        ["adk", mode] => (mode, "exact"),
        ["adk", mode, "ignore_args"] => (mode, "ignore"),
        _ => panic!("unknown verdict key {key:?}"),
    }
}

/// Prill's verdict on a case under one setting: `pass`, `fail`, or `invalid` when the
/// spec does not validate (with the diagnostics' messages).
fn prill(case: &Value, key: &str) -> (&'static str, String) {
    let (mode, args_mode) = setting(key);
    let spec = json!({
        "name": case["id"],
        "model": "m",
        "inputs": {"query": "Go."},
        "assertions": [{"tool_sequence": {"tools": written(case), "mode": mode, "args_mode": args_mode}}]
    });
    let env = Env::default();
    let loaded = load_str(
        Path::new("case.json"),
        &spec.to_string(),
        &env,
        Unrecognized::Error,
    )
    .expect("a spec");
    if !loaded.is_valid() {
        let why: Vec<String> = loaded
            .reports()
            .iter()
            .map(|r| format!("{}: {}", r.diagnostic.path, r.diagnostic.message))
            .collect();
        return ("invalid", why.join("; "));
    }
    let response = calls(&case["actual"])
        .into_iter()
        .fold(Response::text("Done."), |r, (name, args)| {
            r.with_tool_call(&name, args)
        });
    let cases = loaded.cases();
    let results = futures::executor::block_on(run_checks(
        &cases[0].interactions[0].checks,
        &response,
        None,
    ));
    assert_eq!(results.len(), 1, "{key}: one check");
    let verdict = if results[0].status() == Status::Passed {
        "pass"
    } else {
        "fail"
    };
    (verdict, results[0].message().to_owned())
}

/// One line of `deviations.tsv`.
struct Deviation {
    line: usize,
    case: String,
    /// A verdict key; a `*` word matches any one word.
    setting: String,
    ours: String,
    theirs: String,
}

impl Deviation {
    /// Whether it speaks of this verdict.
    fn covers(&self, case: &str, key: &str) -> bool {
        let (pattern, words): (Vec<&str>, Vec<&str>) =
            (self.setting.split(' ').collect(), key.split(' ').collect());
        self.case == case
            && pattern.len() == words.len()
            && pattern.iter().zip(&words).all(|(p, w)| *p == "*" || p == w)
    }
}

/// `deviations.tsv`: case, setting, Prill's verdict, the evaluator's, why.
fn deviations() -> Vec<Deviation> {
    let path = corpus().join("deviations.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [case, setting, ours, theirs, why] = fields[..] else {
            panic!("deviations.tsv:{}: five tab-separated fields", n + 1);
        };
        assert!(!why.trim().is_empty(), "deviations.tsv:{}: say why", n + 1);
        out.push(Deviation {
            line: n + 1,
            case: case.to_owned(),
            setting: setting.to_owned(),
            ours: ours.to_owned(),
            theirs: theirs.to_owned(),
        });
    }
    out
}

#[test]
fn every_verdict_equals_the_real_evaluators_but_the_listed_deviations() {
    let cases = read_json("cases.json");
    let verdicts = read_json("verdicts.json");
    let listed = deviations();
    let mut used = vec![0usize; listed.len()];
    let mut wrong = Vec::new();
    let mut judged = 0;
    for case in cases["cases"].as_array().expect("cases") {
        let id = case["id"].as_str().expect("an id");
        let theirs = verdicts["verdicts"][id].as_object().unwrap_or_else(|| {
            panic!("{id}: no verdicts; run .ci/trajectory-conformance/evaluate.py")
        });
        for (key, verdict) in theirs {
            judged += 1;
            let theirs = if verdict.as_bool().expect("a boolean") {
                "pass"
            } else {
                "fail"
            };
            let (ours, said) = prill(case, key);
            // A line covering this verdict explains it when it states both verdicts.
            let explained = listed.iter().enumerate().find(|(_, d)| {
                d.covers(id, key) && (d.ours.as_str(), d.theirs.as_str()) == (ours, theirs)
            });
            match explained {
                Some((i, _)) => used[i] += 1,
                None if ours != theirs => {
                    wrong.push(format!("{id}\t{key}\t{ours}\t{theirs}\t(unlisted: {said})"));
                }
                None => {}
            }
        }
    }
    for (d, n) in listed.iter().zip(&used) {
        if *n == 0 {
            wrong.push(format!(
                "deviations.tsv:{}: {} {} no longer happens",
                d.line, d.case, d.setting
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {judged} verdicts differ from deviations.tsv:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(judged >= 700, "the corpus shrank to {judged} verdicts");
}
