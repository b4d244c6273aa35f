//! `prill run` with a `reliability` gate, end to end against the demo's `flaky` agent
//! (whose draws repeat from its seed and the sample's index): a verdict decided by the
//! sequential test, an inconclusive one in every report and its exit code under
//! `--inconclusive`, and plans refused before anything runs.

use crate::support::{json, prill, text};

/// A case of the demo's `flaky` agent failing `fail` of the time, drawing from `seed`.
fn flaky(dir: &std::path::Path, name: &str, seed: u32, fail: f64, gate: &str) {
    std::fs::write(
        dir.join(name),
        format!(
            r#"{{ agent = flaky, connections = [direct], {gate}
                 interactions = [{{ text = "Roll", sly_data {{ seed = {seed}, modes {{ x = {fail} }} }}, response.text.value = ok }}] }}"#
        ),
    )
    .unwrap();
}

#[test]
fn an_inconclusive_case_fails_the_run_unless_told_otherwise_and_says_so_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    // At 12% failures (between 0.80 and 0.95) seed 23 stays undecided for 81 samples.
    flaky(
        dir.path(),
        "between.hocon",
        23,
        0.12,
        "reliability { max_samples = 81 }",
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--demo",
            "between.hocon",
            "--json",
            "run.json",
            "--junit",
            "junit.xml",
        ];
        args.extend_from_slice(extra);
        prill(dir.path(), &args)
    };
    let out = run(&[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("INCONCLUSIVE [")
            && stderr.contains(
                "72 passed, 9 failed (reliability good 0.95 bad 0.8 (5%/5%, at most 81))"
            ),
        "{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("0 passed, 0 failed, 0 errored, 1 inconclusive, 0 skipped in ")),
        "{stderr}"
    );
    let json = json(&dir.path().join("run.json"));
    let unit = &json["units"][0];
    assert_eq!(unit["verdict"], "inconclusive");
    assert_eq!(unit["reliability"]["max_samples"], 81);
    assert!(unit.get("success_ratio").is_none(), "{unit}");
    assert_eq!(json["summary"]["inconclusive"], 1);
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains(r#"type="inconclusive""#), "{junit}");
    assert!(junit.contains(r#"<property name="reliability""#), "{junit}");

    // `--inconclusive pass` lets the run pass on it, and still reports it.
    let out = run(&["--inconclusive", "pass"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("1 inconclusive"));
    // A failure still fails the run.
    flaky(dir.path(), "bad.hocon", 3, 0.5, "reliability {}");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "between.hocon",
            "bad.hocon",
            "--inconclusive",
            "pass",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn reliability_on_the_command_line_holds_every_case_to_it() {
    let dir = tempfile::tempdir().unwrap();
    // A case that passes 1 of 1 at once, held to the default plan instead: 18 passes.
    flaky(
        dir.path(),
        "good.hocon",
        1,
        0.01,
        r#"success_ratio = "1/1""#,
    );
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "good.hocon",
            "--reliability",
            "--json",
            "run.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = json(&dir.path().join("run.json"));
    assert_eq!(json["units"][0]["tally"]["passed"], 18, "{json}");
    assert_eq!(json["units"][0]["reliability"]["good"], 0.95);

    // A plan that cannot keep its promise is refused before anything runs.
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "good.hocon",
            "--reliability",
            "max_samples=10",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("reliability.max_samples: with max_samples = 10"),
        "{stderr}"
    );
    assert!(
        stderr.contains("max_samples = 81 would meet it"),
        "{stderr}"
    );
    let out = prill(
        dir.path(),
        &["run", "--demo", "good.hocon", "--reliability", "godo=0.9"],
    );
    assert!(
        text(&out.stderr).contains("did you mean `good`"),
        "{}",
        text(&out.stderr)
    );
    // It replaces every case's gate: `--samples` has nothing left to scale.
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "good.hocon",
            "--reliability",
            "--samples",
            "5",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn prill_toml_gives_the_gate_of_cases_that_state_none() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        "reliability = { good = 0.9, bad = 0.6, false_pass = 0.1, false_fail = 0.1, max_samples = 40 }\n",
    )
    .unwrap();
    flaky(dir.path(), "none.hocon", 1, 0.01, "");
    flaky(dir.path(), "own.hocon", 1, 0.01, r#"success_ratio = "2/2""#);
    let out = prill(dir.path(), &["run", "--demo", ".", "--json", "run.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = json(&dir.path().join("run.json"));
    let units = json["units"].as_array().unwrap();
    let of = |name: &str| {
        units
            .iter()
            .find(|u| u["unit"]["file"].as_str().unwrap().ends_with(name))
            .unwrap()
    };
    assert_eq!(of("none.hocon")["reliability"]["good"], 0.9, "{json}");
    assert_eq!(of("own.hocon")["success_ratio"], "2/2", "{json}");
}
