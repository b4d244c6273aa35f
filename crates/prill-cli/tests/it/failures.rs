//! Failures a reader can act on, end to end against the demo agents: where a failing
//! check is (`file:line:col`, the interaction, the samples), one line per finished case
//! in a CI log, transcripts during a run (`--show-transcript`, `-v`) and from a saved
//! report (`prill show`), and the sly_data sent, in the JSON report.

use crate::support::{fixtures, prill, text};

/// A scratch folder holding the two-turn case whose second turn fails, and the line
/// and column of its failing check (`keywords = Manchester`).
fn second_turn() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let source = fixtures("examples/second_turn/home_town.hocon");
    let spec = std::fs::read_to_string(source).unwrap();
    std::fs::write(dir.path().join("home_town.hocon"), &spec).unwrap();
    let (line, text) = spec
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("Manchester"))
        .unwrap();
    let column = text.find("keywords").unwrap() + 1;
    (dir, format!("home_town.hocon:{}:{column}", line + 1))
}

#[test]
fn a_failure_on_the_second_turn_says_where() {
    let (dir, place) = second_turn();
    let out = prill(dir.path(), &["run", "--demo", "home_town.hocon"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "FAIL [" // the duration varies
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("] home_town.hocon [direct] 0 passed, 1 failed (need 1/1)\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "    text: expected to contain \"Manchester\", found \"The Beatles are from Liverpool, England.\"\n      at {place}, interaction 1, sample 0\n"
        )),
        "{stderr}"
    );
    // No transcript unless asked for.
    assert!(!stderr.contains("transcript:"), "{stderr}");
}

#[test]
fn show_transcript_prints_the_conversation_turn_by_turn() {
    let (dir, place) = second_turn();
    for flag in ["--show-transcript", "-v"] {
        let out = prill(dir.path(), &["run", "--demo", "home_town.hocon", flag]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        let transcript = &stderr[stderr.find("    transcript:\n").expect(&stderr)..];
        for wanted in [
            "      sample 0 (failed, ",
            "      interaction 0 (",
            "        sent: Who did Yellow Submarine?\n",
            "        answer: Yellow Submarine was recorded by The Beatles.\n",
            "        passed keywords at home_town.hocon:",
            "      interaction 1 (",
            "        sent: Where are they from?\n",
            "        answer: The Beatles are from Liverpool, England.\n",
            &format!(
                "        FAILED keywords at {place}: text: expected to contain \"Manchester\""
            ),
        ] {
            assert!(
                transcript.contains(wanted),
                "{flag}: `{wanted}` in {stderr}"
            );
        }
    }
}

#[test]
fn show_prints_transcripts_from_a_saved_report() {
    let (dir, place) = second_turn();
    let out = prill(
        dir.path(),
        &["run", "--demo", "home_town.hocon", "--json", "report.json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    let out = prill(dir.path(), &["show", "report.json"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        stdout.starts_with("FAIL ["),
        "the unit's line comes first: {stdout}"
    );
    for wanted in [
        "] home_town.hocon [direct] 0 passed, 1 failed (need 1/1)\nsample 0 (failed, ",
        "\ninteraction 1 (",
        "\n  sent: Where are they from?\n",
        "\n  answer: The Beatles are from Liverpool, England.\n",
        &format!("\n  FAILED keywords at {place}: text: expected to contain \"Manchester\""),
    ] {
        assert!(stdout.contains(wanted), "`{wanted}` in {stdout}");
    }
    // A case by a part of its name; the same transcript.
    let by_name = prill(dir.path(), &["show", "report.json", "home"]);
    assert_eq!(by_name.status.code(), Some(0));
    assert_eq!(text(&by_name.stdout), stdout);

    let typo = prill(dir.path(), &["show", "report.json", "hom_twn"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(
        text(&typo.stderr).contains("no case matches `hom_twn`; did you mean `home_town`?"),
        "{}",
        text(&typo.stderr)
    );
    let missing = prill(dir.path(), &["show", "nope.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("cannot read nope.json"));
    assert!(text(&missing.stdout).is_empty());
}

#[test]
fn the_json_report_records_the_sly_data_sent() {
    let dir = tempfile::tempdir().unwrap();
    let math = fixtures("quickstart/math.hocon");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            math.to_str().unwrap(),
            "--connection",
            "direct,http,mcp",
            "--json",
            "report.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let units = report["units"].as_array().unwrap();
    assert_eq!(units.len(), 3, "{report}");
    for unit in units {
        let interactions = &unit["samples"][0]["interactions"];
        let connection = &unit["unit"]["connection"];
        assert_eq!(
            interactions[0]["sent_sly_data"],
            serde_json::json!({"x": 847, "y": 23}),
            "{connection}"
        );
        assert_eq!(
            interactions[1]["sent_sly_data"],
            serde_json::json!({"x": 19481, "y": 23}),
            "{connection}"
        );
        assert_eq!(
            interactions[0]["sly_data"]["equals"], 19481.0,
            "{connection}"
        );
    }
}

#[test]
fn the_sly_data_carried_from_the_turn_before_is_the_sly_data_sent() {
    let dir = tempfile::tempdir().unwrap();
    // `echo` returns the sly_data it was sent; the second turn sends none of its own,
    // so it sends what the first carried on (merged with what came back).
    std::fs::write(
        dir.path().join("carry.yaml"),
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: one\n    sly_data: {k: 1}\n    response: {text: {keywords: one}}\n  - text: two\n    response: {text: {keywords: three}}\n",
    )
    .unwrap();
    let out = prill(
        dir.path(),
        &["run", "--demo", "carry.yaml", "--json", "report.json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let interactions = &report["units"][0]["samples"][0]["interactions"];
    assert_eq!(
        interactions[0]["sent_sly_data"],
        serde_json::json!({"k": 1})
    );
    assert_eq!(
        interactions[1]["sent_sly_data"],
        serde_json::json!({"k": 1})
    );
    // And the transcript of `prill show` says so.
    let show = prill(dir.path(), &["show", "report.json"]);
    let stdout = text(&show.stdout);
    assert!(
        stdout.contains("interaction 1 (")
            && stdout.contains("  sent: two\n  sent sly_data: {\"k\":1}\n"),
        "{stdout}"
    );
}

#[test]
fn in_a_ci_log_each_finished_case_prints_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = fixtures("quickstart");
    let out = prill(dir.path(), &["run", "--demo", quickstart.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let passes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("PASS [")).collect();
    assert_eq!(passes.len(), 6, "{stderr}");
    for line in &passes {
        // `PASS [0.42s] <file> [<connection>]`, as nextest writes a test (a
        // data-driven case is named after its file, so the file alone names it).
        let (_, rest) = line.split_once("] ").unwrap();
        let (file, connection) = rest.rsplit_once(' ').unwrap();
        assert!(file.contains("quickstart/"), "{line}");
        assert!(
            file.ends_with(".hocon") || file.ends_with(".yaml"),
            "{line}"
        );
        assert!(["[direct]", "[http]"].contains(&connection), "{line}");
    }
    let quiet = prill(
        dir.path(),
        &["run", "--demo", quickstart.to_str().unwrap(), "-q"],
    );
    assert_eq!(quiet.status.code(), Some(0));
    assert!(
        !text(&quiet.stderr).contains("PASS"),
        "{}",
        text(&quiet.stderr)
    );
}
