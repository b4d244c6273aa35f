//! `prill explain`: each case's gate in figures, the plan's expected false failures,
//! as text and as JSON; nonsense rates are refused.

use crate::support::prill;

/// A project with one `4/5` case and one `1/1` case.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("four.hocon"),
        r#"{ "agent": "a", "success_ratio": "4/5",
             "interactions": [{ "text": "hi", "response": { "text": { "keywords": ["hi"] } } }] }"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("one.hocon"),
        r#"{ "agent": "a",
             "interactions": [{ "text": "hi", "response": { "text": { "keywords": ["hi"] } } }] }"#,
    )
    .unwrap();
    dir
}

#[test]
fn explain_states_each_gate_s_operating_characteristic_and_error_rates() {
    let dir = project();
    let out = prill(dir.path(), &["explain", "four.hocon", "one.hocon"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("four.hocon  four  success_ratio 4/5"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  passes      0.19   0.53   0.74   0.92   0.98   1.00\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "at good = 0.95 it does not pass 2.3% of the time; at bad = 0.8 it passes 73.7%"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("reliability { good = 0.95, bad = 0.8"),
        "{stdout}"
    );
    // 4/5 fails a good agent 2.26% of the time, 1/1 5%.
    assert!(stdout.contains("2 cases: if every case passed at its good rate, a run would fail 0.07 of them on average"), "{stdout}");

    let out = prill(
        dir.path(),
        &["explain", "--format", "json", "--good", "0.9", "."],
    );
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["reference"]["good"], 0.9);
    let cases = json["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    let four = cases
        .iter()
        .find(|c| c["gate"] == "success_ratio 4/5")
        .unwrap();
    let false_fail = four["figures"]["false_fail"].as_f64().unwrap();
    assert!((false_fail - 0.0815).abs() < 0.001, "{four}");
    assert_eq!(four["figures"]["rates"].as_array().unwrap().len(), 6);
}

#[test]
fn rates_that_make_no_gate_are_refused() {
    let dir = project();
    let out = prill(
        dir.path(),
        &["explain", "--good", "0.8", "--bad", "0.9", "."],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`bad` (0.9) must be below `good` (0.8)"),
        "{stderr}"
    );
}
