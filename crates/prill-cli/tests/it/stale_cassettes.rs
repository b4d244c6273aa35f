//! What a recording was made under, end to end: `prill cassettes check` says which
//! cases' recordings still answer them and what changed since the others were
//! recorded, and a replay of a stale recording warns by the case's name. The cases are
//! the simulated customers of `simulated_users.rs`, on the retail tool program, whose
//! database file is named on its command line.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::simulated_users::setup;
use crate::support::{output_text, prill_isolated, run_args, stderr, stdout};

const JUDGED: [&str; 3] = ["--judge", "openai:gpt-4o-mini", "--no-cache"];

const CANCELLED: &str = "a customer who gets the order cancelled";
const PHONE: &str = "a customer who invents a phone number";
const CHATTY: &str = "a customer who never says goodbye";

/// `prill cassettes check tapes customers.yaml --format json`: its exit code and JSON.
fn check(dir: &Path) -> (i32, Value, Output) {
    let out = prill_isolated(
        dir,
        &[
            "cassettes",
            "check",
            "tapes",
            "customers.yaml",
            "--format",
            "json",
        ],
        &[],
    );
    let json = serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, out)
}

/// Each case's name and status, in plan order.
fn statuses(json: &Value) -> Vec<(String, String)> {
    json["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn named(cases: &[(&str, &str)]) -> Vec<(String, String)> {
    cases
        .iter()
        .map(|(n, s)| ((*n).to_owned(), (*s).to_owned()))
        .collect()
}

/// The parts a case's recordings differ in, as `part kind`.
fn changes(json: &Value, name: &str) -> Vec<String> {
    let case = json["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == name)
        .cloned()
        .unwrap_or(Value::Null);
    case["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{} {}",
                c["part"].as_str().unwrap_or(""),
                c["kind"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} holds {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn cassettes_check_names_what_changed_since_each_recording_and_a_stale_replay_warns_by_name() {
    let (_rt, _fake, dir, env) = setup();
    let dir = dir.path();
    let mut record = JUDGED.to_vec();
    record.extend(["--record", "tapes"]);
    let (out, _) = run_args(dir, "customers.yaml", &record, &env);
    assert!(out.status.code().is_some(), "{}", output_text(&out));
    let tapes = std::fs::read_dir(dir.join("tapes"))
        .unwrap()
        .flatten()
        .map(|f| std::fs::read_to_string(f.path()).unwrap())
        .collect::<String>();
    for line in tapes.lines() {
        let exchange: Value = serde_json::from_str(line).unwrap();
        for part in [
            "inputs",
            "checks",
            "user",
            "tools",
            "program",
            "file:db.json",
            "file:tools.py",
        ] {
            assert!(exchange["under"][part].is_string(), "{part} in {line}");
        }
    }

    // As recorded: every case fresh, and the check passes.
    let (code, json, out) = check(dir);
    assert_eq!(code, 0, "{}", output_text(&out));
    assert_eq!(
        statuses(&json),
        named(&[(CANCELLED, "fresh"), (PHONE, "fresh"), (CHATTY, "fresh")])
    );

    // The tool program's database changes: every recording is stale, and a replay of
    // them warns by name, its verdicts still those recorded.
    edit(dir, "db.json", "\"#W2611340\"", "\"#W2611341\"");
    let (code, json, out) = check(dir);
    assert_eq!(code, 1, "{}", output_text(&out));
    assert_eq!(
        statuses(&json),
        named(&[(CANCELLED, "stale"), (PHONE, "stale"), (CHATTY, "stale")])
    );
    assert_eq!(changes(&json, CANCELLED), ["file:db.json changed"]);
    let human = prill_isolated(dir, &["cassettes", "check", "tapes", "customers.yaml"], &[]);
    let shown = stdout(&human);
    assert!(
        shown.contains(&format!(
            "stale     {CANCELLED}: db.json (a file of the tool program) changed"
        )),
        "{shown}"
    );
    assert!(shown.contains("against 3 case(s): 3 stale"), "{shown}");
    let mut replay = JUDGED.to_vec();
    replay.extend(["--replay", "tapes", "--replay-latency", "zero"]);
    let (out, _) = run_args(dir, "customers.yaml", &replay, &env);
    let warned = stderr(&out);
    assert!(
        warned.contains("warning: 3 case(s) replayed cassettes recorded before they changed"),
        "{warned}"
    );
    assert!(
        warned.contains(&format!(
            "  {PHONE}: db.json (a file of the tool program) changed"
        )),
        "{warned}"
    );
    edit(dir, "db.json", "\"#W2611341\"", "\"#W2611340\"");

    // A check changes: the recording still answers the case, judged by the new check.
    edit(
        dir,
        "customers.yaml",
        "assertions: [{must_contain: cancel}]",
        "assertions: [{must_contain: order}]",
    );
    let (code, json, out) = check(dir);
    assert_eq!(code, 0, "{}", output_text(&out));
    assert_eq!(
        statuses(&json),
        named(&[
            (CANCELLED, "fresh"),
            (PHONE, "rechecked"),
            (CHATTY, "fresh")
        ])
    );
    assert_eq!(changes(&json, PHONE), ["checks changed"]);
    let (out, _) = run_args(dir, "customers.yaml", &replay, &env);
    assert!(!stderr(&out).contains("warning"), "{}", output_text(&out));

    // A case renamed keeps its id, and its recordings still answer it.
    edit(
        dir,
        "customers.yaml",
        "name: a customer who gets the order cancelled",
        "name: a customer who gets an order cancelled",
    );
    let (code, json, out) = check(dir);
    assert_eq!(code, 0, "{}", output_text(&out));
    assert_eq!(json["cases"][0]["status"], "fresh", "{json}");
    let (out, report) = run_args(dir, "customers.yaml", &replay, &env);
    let renamed = report["units"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|u| u["unit"]["name"] == "a customer who gets an order cancelled")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(renamed["source"], "replayed", "{}", output_text(&out));
    edit(
        dir,
        "customers.yaml",
        "name: a customer who gets an order cancelled",
        "name: a customer who gets the order cancelled",
    );

    // An input changes: the case has a new id, and its old recording is found by name.
    // A case whose name and input both changed is a new case, with no recording, and
    // the old one's recording is an orphan.
    edit(
        dir,
        "customers.yaml",
        "[phone] I want to cancel",
        "[address] I want to cancel",
    );
    edit(
        dir,
        "customers.yaml",
        "[chatty] I want to cancel",
        "[chatty] I want to drop",
    );
    edit(
        dir,
        "customers.yaml",
        "name: a customer who invents a phone number",
        "name: a customer who invents an address",
    );
    let (code, json, out) = check(dir);
    assert_eq!(code, 1, "{}", output_text(&out));
    assert_eq!(
        statuses(&json),
        named(&[
            (CANCELLED, "fresh"),
            ("a customer who invents an address", "missing"),
            (CHATTY, "stale"),
        ])
    );
    assert_eq!(changes(&json, CHATTY), ["inputs changed"]);
    let chatty = &json["cases"][2];
    assert!(chatty["recorded_as"].is_string(), "{chatty}");
    assert_ne!(chatty["recorded_as"], chatty["case_id"]);
    let orphans = json["orphans"].as_array().unwrap();
    assert_eq!(orphans.len(), 1, "{json}");
    assert!(
        orphans[0]["file"]
            .as_str()
            .unwrap()
            .contains("a-customer-who-invents-a-phone-number-"),
        "{json}"
    );
}
