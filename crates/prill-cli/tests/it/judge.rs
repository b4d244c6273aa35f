//! The gist judge through the command line, against a fake OpenAI server on 127.0.0.1:
//! `prill run --demo --judge openai:gpt-4o-mini` passes or fails a gist check by the
//! scripted verdict and shows the judge's reason; without a judge the check errors and
//! says how to configure one; `prill judge check` prints the rates.

use std::path::Path;

use prill_testkit::providers::openai::FakeOpenAi;

use crate::support::{json, judge_verdict, prill_isolated, runtime, text};

const KEY: &str = "sk-cli-judge-test";

fn write_gist_case(dir: &Path) {
    std::fs::write(
        dir.join("trivia.hocon"),
        r#"{
  agent = music_nerd_pro
  connections = [direct]
  interactions = [
    {
      text = "Who did Yellow Submarine?"
      response { text { gist = "Names the band that recorded Yellow Submarine" } }
    }
  ]
}
"#,
    )
    .unwrap();
}

fn openai_env(fake: &FakeOpenAi) -> Vec<(&'static str, String)> {
    vec![
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", KEY.to_owned()),
    ]
}

#[test]
fn a_gist_check_follows_the_judge_s_verdict() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key(KEY);
    let dir = tempfile::tempdir().unwrap();
    write_gist_case(dir.path());
    let args = [
        "run",
        "--demo",
        "trivia.hocon",
        "--judge",
        "openai:gpt-4o-mini",
        "--no-cache",
    ];

    fake.script(judge_verdict(true, "it names the Beatles"));
    let out = prill_isolated(dir.path(), &args, &openai_env(&fake));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("judge: openai:gpt-4o-mini (from --judge, no cache)"),
        "{stderr}"
    );
    assert_eq!(fake.requests().len(), 1);
    assert!(
        fake.last_body()
            .to_string()
            .contains("Names the band that recorded Yellow Submarine")
    );

    fake.script(judge_verdict(false, "the sample never names a band"));
    let out = prill_isolated(dir.path(), &args, &openai_env(&fake));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("judge: the sample never names a band"),
        "{stderr}"
    );
    assert!(!stderr.contains(KEY), "{stderr}");
    assert!(
        !dir.path().join(".prill/cache").exists(),
        "--no-cache writes no cache (the run writes only .prill/last-run.json)"
    );
}

#[test]
fn the_judge_is_picked_from_the_environment_and_cached() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.default_reply(judge_verdict(true, "it names the Beatles"));
    let dir = tempfile::tempdir().unwrap();
    write_gist_case(dir.path());
    let args = ["run", "--demo", "trivia.hocon"];

    let out = prill_isolated(dir.path(), &args, &openai_env(&fake));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("judge: openai:gpt-4o-mini (picked because OPENAI_API_KEY is set)"),
        "{stderr}"
    );
    assert_eq!(fake.requests().len(), 1);
    assert!(dir.path().join(".prill/cache/judge").is_dir());

    // The same sample again: answered from the cache, no request.
    let out = prill_isolated(dir.path(), &args, &openai_env(&fake));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn without_a_judge_a_gist_check_errors_and_says_how_to_configure_one() {
    let dir = tempfile::tempdir().unwrap();
    write_gist_case(dir.path());
    let out = prill_isolated(dir.path(), &["run", "--demo", "trivia.hocon"], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("--judge provider:model"), "{stderr}");
    assert!(!stderr.contains("judge: openai"), "{stderr}");
}

#[test]
fn no_judge_line_without_gist_checks() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plain.hocon"),
        r#"{ agent = music_nerd_pro, connections = [direct], interactions = [ { text = "Who did Yellow Submarine?", response { text { keywords = "Beatles" } } } ] }"#,
    )
    .unwrap();
    let out = prill_isolated(
        dir.path(),
        &["run", "--demo", "plain.hocon"],
        &openai_env(&fake),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("judge:"), "{stderr}");
    assert!(fake.requests().is_empty());
}

#[test]
fn a_bad_judge_name_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    write_gist_case(dir.path());
    let out = prill_isolated(
        dir.path(),
        &["run", "--demo", "trivia.hocon", "--judge", "gpt-4o-mini"],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--judge: `gpt-4o-mini` is not a judge"),
        "{stderr}"
    );
}

#[test]
fn judge_check_prints_the_rates() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.on_message("The Beatles", judge_verdict(true, "names the band"))
        .on_message("Rolling Stones", judge_verdict(true, "names a band"))
        .on_message("Lyon", judge_verdict(false, "says Lyon"))
        .on_message("19481", judge_verdict(false, "missed it"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("set.yaml"),
        r#"- {sample: "The Beatles recorded it.", criteria: "Names the band.", expected: pass, kind: plain}
- {sample: "The Rolling Stones recorded it.", criteria: "Names the band that recorded it.", expected: fail, kind: wrong fact}
- {sample: "It is Lyon.", criteria: "Says Paris.", expected: fail, kind: plain}
- {sample: "847 times 23 is 19481.", criteria: "Gives the product.", expected: pass, kind: numbers}
"#,
    )
    .unwrap();
    let out = prill_isolated(
        dir.path(),
        &[
            "judge",
            "check",
            "set.yaml",
            "--judge",
            "openai:gpt-4o-mini",
            "--no-cache",
        ],
        &openai_env(&fake),
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        stdout.contains("4 items: agreement 50.0% (2 of 4)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("false-pass rate 50.0% (1 of 2 labeled fail)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("false-fail rate 50.0% (1 of 2 labeled pass)"),
        "{stdout}"
    );
    // Half right on a half-and-half set is what a coin does.
    assert!(
        stdout.contains("Cohen's kappa 0.00 (agreement beyond chance; 1 is perfect, 0 is a coin), sensitivity 50.0%, specificity 50.0%"),
        "{stdout}"
    );
    assert!(
        stdout.contains("#2 [wrong fact] expected fail, judged pass: names a band"),
        "{stdout}"
    );
    assert!(
        stdout.contains("#4 [numbers] expected pass, judged fail: missed it"),
        "{stdout}"
    );

    let out = prill_isolated(
        dir.path(),
        &[
            "judge",
            "check",
            "set.yaml",
            "--format",
            "json",
            "--no-cache",
        ],
        &openai_env(&fake),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["agreed"], 2);
    assert_eq!(report["false_pass_rate"], 0.5);
    assert_eq!(report["disagreements"].as_array().unwrap().len(), 2);
}

#[test]
fn judge_check_without_a_judge_explains_how_to_configure_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("set.yaml"),
        "- {sample: a, criteria: b, expected: pass}\n",
    )
    .unwrap();
    let out = prill_isolated(dir.path(), &["judge", "check", "set.yaml"], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no judge is configured"), "{stderr}");
    assert!(stderr.contains("--judge provider:model"), "{stderr}");
}

#[test]
fn judge_check_warns_once_about_a_temperature_the_judge_does_not_take() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.default_reply(judge_verdict(true, "names the band"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        "[judge]\nmodel = \"openai:o3-mini\"\ntemperature = 0.2\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("set.yaml"),
        r#"- {sample: "The Beatles recorded it.", criteria: "Names the band.", expected: pass, kind: plain}
- {sample: "The Beatles again.", criteria: "Names the band.", expected: pass, kind: plain}
"#,
    )
    .unwrap();
    let out = prill_isolated(
        dir.path(),
        &["judge", "check", "set.yaml", "--no-cache"],
        &openai_env(&fake),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let warning =
        "warning: [judge] temperature 0.2 is not sent: openai:o3-mini is a reasoning model";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    for request in fake.requests() {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        assert!(body.get("temperature").is_none(), "{body}");
    }
    assert_eq!(fake.requests().len(), 2);
}

/// `[judge] min_kappa`: with no calibration on record, or one below the minimum, every
/// gist check errors and no verdict is asked for; `prill judge check --record` keeps
/// the calibration the run reads.
#[test]
fn min_kappa_holds_the_run_s_judge_to_its_calibration_on_record() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.default_reply(judge_verdict(true, "it names the Beatles"));
    let dir = tempfile::tempdir().unwrap();
    write_gist_case(dir.path());
    std::fs::write(
        dir.path().join("prill.toml"),
        "[judge]\nmodel = \"openai:gpt-4o-mini\"\nmin_kappa = 0.6\ncache = false\n",
    )
    .unwrap();
    let run = || {
        prill_isolated(
            dir.path(),
            &["run", "--demo", "trivia.hocon"],
            &openai_env(&fake),
        )
    };

    let out = run();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("the judge openai:gpt-4o-mini (1 vote) has no calibration on record, and [judge] min_kappa = 0.6 asks for one: run `prill judge check --record`"),
        "{stderr}"
    );
    assert!(fake.requests().is_empty(), "no verdict is asked for");

    // A judge that says `pass` to everything agrees with half of a balanced set, and
    // has κ = 0: on record, it is below the minimum.
    std::fs::write(
        dir.path().join("set.yaml"),
        "- {sample: a, criteria: b, expected: pass}\n- {sample: c, criteria: d, expected: fail}\n- {sample: e, criteria: f, expected: pass}\n- {sample: g, criteria: h, expected: fail}\n",
    )
    .unwrap();
    let out = prill_isolated(
        dir.path(),
        &["judge", "check", "set.yaml", "--record"],
        &openai_env(&fake),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("prill-judge-calibration.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        record["judges"]["openai:gpt-4o-mini"]["kappa"], 0.0,
        "{record}"
    );
    assert_eq!(record["judges"]["openai:gpt-4o-mini"]["set"], "set.yaml");
    let asked = fake.requests().len();
    let out = run();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("has κ = 0.00 on record (2 of 4 agreed on set.yaml,"),
        "{stderr}"
    );
    assert_eq!(fake.requests().len(), asked);

    // A judge on record above the minimum judges.
    let mut record = record;
    record["judges"]["openai:gpt-4o-mini"]["kappa"] = serde_json::json!(0.8);
    std::fs::write(
        dir.path().join("prill-judge-calibration.json"),
        record.to_string(),
    )
    .unwrap();
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(fake.requests().len(), asked + 1);
}

/// With the judge's calibration on record, `prill assess` shows the gist pass rate both
/// as judged and corrected for the judge's errors (Rogan–Gladen), with its interval, in
/// its table, its JSON and its HTML page.
#[test]
fn assess_corrects_the_gist_pass_rate_with_the_calibration_on_record() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    let dir = tempfile::tempdir().unwrap();
    write_gist_case(dir.path());
    std::fs::write(
        dir.path().join("prill.toml"),
        "[judge]\nmodel = \"openai:gpt-4o-mini\"\ncache = false\n",
    )
    .unwrap();
    // Sensitivity 0.9 and specificity 0.8, from 100 items of each label.
    std::fs::write(
        dir.path().join("prill-judge-calibration.json"),
        r#"{"schema_version": 1, "judges": {"openai:gpt-4o-mini": {
            "votes": 1, "kappa": 0.7, "sensitivity": 0.9, "specificity": 0.8,
            "confusion": {"pass_pass": 90, "pass_fail": 10, "fail_pass": 20, "fail_fail": 80},
            "judged": 200, "agreed": 170, "set": "set.yaml", "checked_on": "2026-11-29"}}}"#,
    )
    .unwrap();
    // Six passes and four failures, one sample at a time.
    for pass in [
        true, true, false, true, false, true, true, false, true, false,
    ] {
        fake.script(judge_verdict(pass, "scripted"));
    }
    let out = prill_isolated(
        dir.path(),
        &[
            "assess",
            "--demo",
            "trivia.hocon",
            "--samples",
            "10",
            "-j",
            "1",
            "--json",
            "a.json",
            "--html",
            "a.html",
        ],
        &openai_env(&fake),
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // (0.6 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.571.
    assert!(
        stdout.contains(
            "gist: 6 of 10 verdicts passed (60.0%); corrected for the judge's errors: 57.1% (95%: "
        ),
        "{stdout}"
    );
    let page = std::fs::read_to_string(dir.path().join("a.html")).unwrap();
    assert!(
        page.contains(
            "<p class=\"gist\">gist: 6 of 10 verdicts passed (60.0%); corrected for the judge&#39;s errors: 57.1% (95%: "
        ),
        "{page}"
    );
    let json = json(&dir.path().join("a.json"));
    let corrected = &json["cases"][0]["gist"]["corrected"];
    assert!(
        corrected["low"].as_f64().unwrap() < 0.571 && 0.572 < corrected["high"].as_f64().unwrap(),
        "{json}"
    );
}

/// `trajectory { gist = ... }` on the demo's `math_guy`, whose `MAXIMAL` stream shows its
/// call of `Calculator`: the judge is sent the call, its arguments and result, and the
/// answer, and the check follows its verdict.
#[test]
fn a_trajectory_gist_shows_the_judge_the_calls_and_follows_its_verdict() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key(KEY);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("math.hocon"),
        r#"{
  agent = math_guy
  connections = [direct]
  interactions = [
    {
      text = multiply
      sly_data { x = 847, y = 23 }
      chat_filter = MAXIMAL
      response { trajectory { gist = "Uses the calculator once to multiply the two numbers" } }
    }
  ]
}
"#,
    )
    .unwrap();
    let args = [
        "run",
        "--demo",
        "math.hocon",
        "--judge",
        "openai:gpt-4o-mini",
        "--no-cache",
    ];
    fake.script(judge_verdict(true, "one multiplication by the calculator"));
    let out = prill_isolated(dir.path(), &args, &openai_env(&fake));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let sent = fake.last_body().to_string();
    for part in [
        "Uses the calculator once to multiply the two numbers",
        "Tool calls, in the order they were made:",
        "1. Calculator {",
        "multiply",
        r#"→ {\"equals\":19481"#,
        "Final answer:",
    ] {
        assert!(
            sent.contains(part),
            "{part:?} not sent to the judge: {sent}"
        );
    }

    fake.script(judge_verdict(false, "it never shows its working"));
    let out = prill_isolated(dir.path(), &args, &openai_env(&fake));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("trajectory_gist: the trajectory: expected to meet \"Uses the calculator once to multiply the two numbers\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("judge: it never shows its working"),
        "{stderr}"
    );
}
