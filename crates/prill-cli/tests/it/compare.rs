//! `prill compare` end to end, on runs the demo agents made and the history kept:
//! regressions, fixes, new and removed cases matched by case id (an edited expectation
//! keeps its case), sampled pass rates, the three formats, `--fail-on-regression`,
//! runs named by id, by the start of one or by file, `--base-branch`, and a gist
//! check's judge (a fake OpenAI server on 127.0.0.1) giving another reason.

use std::path::Path;
use std::process::Output;

use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

use crate::support::{git, judge_verdict, prill, prill_isolated, runtime, text};

/// A case against the demo `echo` agent that sends `sent` and expects `expected` back
/// (so it passes when they are the same). Cases with different `sent` have different
/// ids; editing `expected` keeps the id.
fn case(sent: &str, expected: &str) -> String {
    format!(
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: {sent}\n    response: {{text: {{value: {expected}}}}}\n"
    )
}

/// The ids of the kept runs, oldest first.
fn run_ids(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir.join(".prill/runs"))
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.trim_end_matches(".jsonl").to_owned()
        })
        .collect();
    ids.sort();
    ids
}

/// `prill run --demo . args...` in `dir`, which must exit with `code`.
fn run_demo(dir: &Path, args: &[&str], code: i32) {
    let mut all = vec!["run", "--demo", "."];
    all.extend(args);
    let out = prill(dir, &all);
    assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
}

fn ok(out: &Output, code: i32) -> String {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Two kept runs: `stays` passes in both, `breaks` passes then fails (its
/// expectation edited), `mends` fails then passes, `leaves` only in the first and
/// `arrives` only in the second.
fn two_runs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("stays.yaml"), case("stays", "stays")).unwrap();
    std::fs::write(p.join("breaks.yaml"), case("breaks", "breaks")).unwrap();
    std::fs::write(p.join("mends.yaml"), case("mends", "wrong")).unwrap();
    std::fs::write(p.join("leaves.yaml"), case("leaves", "leaves")).unwrap();
    run_demo(p, &[], 1);
    std::fs::write(p.join("breaks.yaml"), case("breaks", "wrong")).unwrap();
    std::fs::write(p.join("mends.yaml"), case("mends", "mends")).unwrap();
    std::fs::remove_file(p.join("leaves.yaml")).unwrap();
    std::fs::write(p.join("arrives.yaml"), case("arrives", "arrives")).unwrap();
    run_demo(p, &[], 1);
    dir
}

#[test]
fn the_two_newest_runs_are_compared_in_every_format() {
    let dir = two_runs();
    let p = dir.path();
    let ids = run_ids(p);
    assert_eq!(ids.len(), 2);

    let out = ok(&prill(p, &["compare"]), 0);
    assert!(out.starts_with(&format!("base  {}", ids[0])), "{out}");
    assert!(out.contains(&format!("\nhead  {}", ids[1])), "{out}");
    // Timing changes (none asserted on) would come between the cases and `unchanged`.
    assert!(
        out.contains("\n1 regression, 1 fix, 1 new case, 1 removed case"),
        "{out}"
    );
    assert!(out.contains("; 1 unchanged\n"), "{out}");
    assert!(
        out.contains("Regressions\n  breaks [direct]  passed 1/1 → failed 0/1\n"),
        "{out}"
    );
    assert!(
        out.contains("Fixes\n  mends [direct]  failed 0/1 → passed 1/1\n"),
        "{out}"
    );
    assert!(
        out.contains("New\n  arrives [direct]  passed 1/1\n"),
        "{out}"
    );
    assert!(
        out.contains("Removed\n  leaves [direct]  passed 1/1\n"),
        "{out}"
    );

    // A regression fails the command only when asked.
    ok(&prill(p, &["compare", "--fail-on-regression"]), 1);

    let json: Value =
        serde_json::from_str(&ok(&prill(p, &["compare", "--format", "json"]), 0)).unwrap();
    assert_eq!(json["base"]["id"], ids[0].as_str());
    assert_eq!(json["head"]["id"], ids[1].as_str());
    assert_eq!(json["regressions"][0]["case"]["name"], "breaks");
    assert_eq!(json["fixes"][0]["case"]["name"], "mends");
    assert_eq!(json["new"][0]["case"]["name"], "arrives");
    assert_eq!(json["removed"][0]["case"]["name"], "leaves");
    assert_eq!(json["unchanged"], 1);

    let md = ok(&prill(p, &["compare", "--format", "markdown"]), 0);
    assert!(md.starts_with("### Prill compare: 1 regression\n"), "{md}");
    let table = md
        .find("| breaks | direct | passed 1/1 | failed 0/1 |")
        .unwrap();
    let details = md
        .find("<details><summary>Everything else</summary>")
        .unwrap();
    assert!(table < details, "regressions first: {md}");
    assert!(md.contains("| arrives | direct | passed 1/1 |"), "{md}");

    // Reversed, the regression is a fix and the new case removed.
    let out = ok(&prill(p, &["compare", &ids[1], &ids[0]]), 0);
    assert!(out.contains("Fixes\n  breaks [direct]"), "{out}");
    assert!(out.contains("Removed\n  arrives [direct]"), "{out}");
}

#[test]
fn runs_are_named_by_id_start_of_id_or_file() {
    let dir = two_runs();
    let p = dir.path();
    let ids = run_ids(p);
    // A history file and a JSON report, compared with a kept run's unique prefix.
    let file = format!(".prill/runs/{}.jsonl", ids[0]);
    let unique = &ids[1][..ids[1].len() - 3];
    let out = ok(&prill(p, &["compare", &file, unique]), 0);
    assert!(out.starts_with(&format!("base  {file}")), "{out}");
    assert!(out.contains("Regressions\n  breaks [direct]"), "{out}");

    run_demo(p, &["--json", "report.json"], 1);
    // The newest run (the one that wrote report.json) against its own report: nothing
    // changed; a report has no id, start or commit.
    let out = ok(&prill(p, &["compare", "report.json"]), 0);
    assert!(
        out.starts_with("base  report.json  -  -  3 passed, 1 failed"),
        "{out}"
    );
    assert!(out.contains("no change (4 cases as before)"), "{out}");

    // The start of several ids, no such run, an unreadable file: exit 2, said clearly.
    let out = prill(p, &["compare", "2", &ids[0]]);
    ok(&out, 2);
    assert!(
        text(&out.stderr).contains("starts the ids of several kept runs"),
        "{}",
        text(&out.stderr)
    );
    let out = prill(p, &["compare", "nosuchrun"]);
    ok(&out, 2);
    assert!(
        text(&out.stderr).contains("no kept run has an id starting with `nosuchrun`"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(p.join("broken.jsonl"), "not json\n{}\n").unwrap();
    let out = prill(p, &["compare", "broken.jsonl", &ids[0]]);
    ok(&out, 2);
    assert!(
        text(&out.stderr).contains("broken.jsonl: line 1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn one_kept_run_is_too_few_to_compare() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("stays.yaml"), case("stays", "stays")).unwrap();
    let out = prill(dir.path(), &["compare"]);
    ok(&out, 2);
    assert!(
        text(&out.stderr).contains("keeps 0"),
        "{}",
        text(&out.stderr)
    );
    run_demo(dir.path(), &[], 0);
    let out = prill(dir.path(), &["compare"]);
    ok(&out, 2);
    assert!(
        text(&out.stderr).contains("comparing needs two runs, and the history in"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_sampled_case_regresses_when_its_drop_is_not_chance() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let sampled = |sent: &str, expected: &str, ratio: &str| {
        format!("success_ratio: \"{ratio}\"\n{}", case(sent, expected))
    };
    std::fs::write(p.join("few.yaml"), sampled("few", "few", "3/5")).unwrap();
    std::fs::write(p.join("many.yaml"), sampled("many", "many", "10/20")).unwrap();
    run_demo(p, &[], 0);
    std::fs::write(p.join("few.yaml"), sampled("few", "wrong", "3/5")).unwrap();
    std::fs::write(p.join("many.yaml"), sampled("many", "wrong", "10/20")).unwrap();
    run_demo(p, &[], 1);
    // A unit stops sampling once its verdict is known: 3/3 then 0/3 (mid-p = 0.05, not
    // below 0.05) could be chance; 10/10 then 0/11 (mid-p = 1/2 C(21, 10)) could not.
    let out = ok(&prill(p, &["compare", "--fail-on-regression"]), 1);
    assert!(
        out.contains("Regressions\n  many [direct]  passed 10/10 → failed 0/11  p < 0.0001\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "Within chance (not detectable with these samples)\n  few [direct]  passed 3/3 → failed 0/3  p = 0.0500; no drop could have been seen with these samples\n"
        ),
        "{out}"
    );
    let json: Value =
        serde_json::from_str(&ok(&prill(p, &["compare", "--format", "json"]), 0)).unwrap();
    let p_many = json["regressions"][0]["p_value"].as_f64().unwrap();
    assert!((p_many - 0.5 / 352_716.0).abs() < 1e-12, "{p_many}");
    // A looser level in prill.toml makes the small drop a regression too.
    std::fs::write(p.join("prill.toml"), "[compare]\nalpha = 0.2\n").unwrap();
    let out = ok(&prill(p, &["compare"]), 0);
    assert!(out.contains("\n2 regressions"), "{out}");
    assert!(!out.contains("Within chance"), "{out}");
    // A bad [compare] is refused, naming the key.
    std::fs::write(p.join("prill.toml"), "[compare]\nalpha = 2\n").unwrap();
    let out = prill(p, &["compare"]);
    ok(&out, 2);
    assert!(text(&out.stderr).contains("alpha"), "{}", text(&out.stderr));
}

#[test]
fn the_base_branch_is_the_newest_run_of_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(".gitignore"), ".prill/\n").unwrap();
    std::fs::write(p.join("breaks.yaml"), case("breaks", "breaks")).unwrap();
    git(p, &["init", "-q", "-b", "main"]);
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "main"]);
    run_demo(p, &[], 0);
    let on_main = run_ids(p).remove(0);

    git(p, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(p.join("breaks.yaml"), case("breaks", "wrong")).unwrap();
    git(p, &["commit", "-q", "-am", "feature"]);
    run_demo(p, &[], 1);
    // A run on the feature branch in between is not the base.
    run_demo(p, &[], 1);

    let out = ok(
        &prill(
            p,
            &["compare", "--base-branch", "main", "--fail-on-regression"],
        ),
        1,
    );
    assert!(out.starts_with(&format!("base  {on_main}")), "{out}");
    assert!(out.contains("Regressions\n  breaks [direct]"), "{out}");

    // main moves on with no run of its own: its merge base with HEAD has one.
    git(p, &["checkout", "-q", "main"]);
    std::fs::write(p.join("other.yaml"), case("other", "other")).unwrap();
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "main moves"]);
    git(p, &["checkout", "-q", "feature"]);
    let out = ok(&prill(p, &["compare", "--base-branch", "main"]), 0);
    assert!(out.starts_with(&format!("base  {on_main}")), "{out}");

    // A branch no kept run is of (its own history: no merge base), and one git does
    // not know.
    git(p, &["checkout", "-q", "--orphan", "lonely"]);
    git(p, &["commit", "-q", "-m", "lonely"]);
    let tip = git(p, &["rev-parse", "HEAD"]);
    git(p, &["checkout", "-q", "feature"]);
    let out = prill(p, &["compare", "--base-branch", "lonely"]);
    ok(&out, 2);
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "no kept run is of `lonely`'s tip {tip}; run the suite on `lonely` first"
        )),
        "{err}"
    );
    let out = prill(p, &["compare", "--base-branch", "nosuchbranch"]);
    ok(&out, 2);
    assert!(
        text(&out.stderr).contains("git knows no branch or commit `nosuchbranch`"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_gist_check_whose_judge_changed_its_mind_shows_both_reasons() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(
        p.join("trivia.hocon"),
        "{\n  agent = music_nerd_pro\n  connections = [direct]\n  interactions = [\n    {\n      text = \"Who did Yellow Submarine?\"\n      response { text { gist = \"Names the band\" } }\n    }\n  ]\n}\n",
    )
    .unwrap();
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-compare-test".to_owned()),
    ];
    let args = [
        "run",
        "--demo",
        "trivia.hocon",
        "--judge",
        "openai:gpt-4o-mini",
        "--no-cache",
    ];
    for (pass, reason, code) in [
        (true, "it names the Beatles", 0),
        (false, "it names <no> band | at all", 1),
    ] {
        fake.script(judge_verdict(pass, reason));
        let out = prill_isolated(p, &args, &env);
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
    }

    let out = ok(&prill(p, &["compare"]), 0);
    // (The demo agent's latency may differ between the runs: not asserted on.)
    assert!(out.contains("\n1 regression, "), "{out}");
    assert!(
        out.contains(", 1 changed judge reason; 0 unchanged\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "Judge reasons\n  trivia [direct]  interactions[0].response.text.gist: passed → failed\n    was: it names the Beatles\n    now: it names <no> band | at all\n"
        ),
        "{out}"
    );
    let json: Value =
        serde_json::from_str(&ok(&prill(p, &["compare", "--format", "json"]), 0)).unwrap();
    assert_eq!(json["judge"][0]["base_reason"], "it names the Beatles");
    assert_eq!(json["judge"][0]["head_status"], "failed");
    let md = ok(&prill(p, &["compare", "--format", "markdown"]), 0);
    assert!(
        md.contains(r"failed: it names \<no\> band \| at all"),
        "{md}"
    );
}

#[test]
fn the_base_picked_for_a_run_is_a_run_of_the_same_command() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("stays.yaml"), case("stays", "stays")).unwrap();
    for _ in 0..3 {
        run_demo(p, &[], 0);
    }
    let ids = run_ids(p);
    // The middle run kept as another command's (as `prill assess` keeps its runs).
    let middle = p.join(format!(".prill/runs/{}.jsonl", ids[1]));
    let kept = std::fs::read_to_string(&middle).unwrap();
    let assessed = kept.replacen(r#""command":"run""#, r#""command":"assess""#, 1);
    assert_ne!(kept, assessed);
    std::fs::write(&middle, assessed).unwrap();

    let out = ok(&prill(p, &["compare"]), 0);
    assert!(out.starts_with(&format!("base  {}", ids[0])), "{out}");
    assert!(out.contains(&format!("\nhead  {}", ids[2])), "{out}");
    // Named, any two runs compare.
    let out = ok(&prill(p, &["compare", &ids[1], &ids[2]]), 0);
    assert!(out.starts_with(&format!("base  {}", ids[1])), "{out}");
    // With the first gone, no other `run` is left to compare with.
    std::fs::remove_file(p.join(format!(".prill/runs/{}.jsonl", ids[0]))).unwrap();
    let out = prill(p, &["compare"]);
    ok(&out, 2);
    assert!(
        text(&out.stderr).contains("keeps 1 of `prill run`"),
        "{}",
        text(&out.stderr)
    );
}

/// A case of the demo's `flaky` agent whose draws (the same for the same sample index)
/// pass while below `under`; editing `under` keeps the case's id.
fn roll(under: f64) -> String {
    format!(
        r#"{{ agent = flaky, connections = [direct], success_ratio = "8/10",
             interactions = [{{ text = "Roll", sly_data {{ seed = 11, modes {{ x = 0.0 }} }},
                               response {{ structure {{ draw {{ less = {under} }} }} }} }}] }}"#
    )
}

/// A git repository on `main` whose one commit holds `roll(0.95)`, the history ignored.
fn rolling_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(".gitignore"), ".prill/\n").unwrap();
    std::fs::write(p.join("roll.hocon"), roll(0.95)).unwrap();
    git(p, &["init", "-q", "-b", "main"]);
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "main"]);
    dir
}

/// `--top-up` draws more samples of the head for the undecided case, numbered after the
/// head's, keeps each wave as a `top-up` run of the head, and a later comparison of the
/// head reads them back and pays for the looks.
#[test]
fn a_top_up_draws_more_of_the_head_and_keeps_them() {
    let dir = rolling_repo();
    let p = dir.path();
    // One sample at a time: which samples run before the verdict is then the same
    // every time.
    run_demo(p, &["--samples", "60", "-j", "1"], 0);
    git(p, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(p.join("roll.hocon"), roll(0.75)).unwrap();
    git(p, &["commit", "-q", "-am", "feature"]);
    run_demo(p, &["--samples", "10", "-j", "1"], 0);
    let head = run_ids(p).pop().unwrap();

    // Alone, the head's samples cannot tell: 48/48, then 8/9.
    let before: Value =
        serde_json::from_str(&ok(&prill(p, &["compare", "--format", "json"]), 0)).unwrap();
    assert_eq!(
        before["regressions"].as_array().unwrap().len(),
        0,
        "{before}"
    );
    assert_eq!(before["within_chance"][0]["head"]["samples"], 9, "{before}");
    assert_eq!(before["looks"], 1);

    let args = [
        "compare",
        "--base-branch",
        "main",
        "--top-up",
        "--demo",
        "--format",
        "json",
        "--fail-on-regression",
    ];
    let out = prill(p, &args);
    let topped: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let report = &topped["top_up"];
    assert_eq!(report["looks"], 3, "{topped}");
    assert_eq!(report["plan"]["max"], 40);
    // One wave of 20 decides it: 24/29 against 48/48 is a regression, whatever the
    // third look would have said.
    let case = &report["cases"][0];
    assert_eq!(
        (&case["samples"], &case["ended"]),
        (&json!(20), &json!("decided")),
        "{topped}"
    );
    let added = 20;
    assert_eq!(topped["regressions"][0]["head"]["samples"], 29, "{topped}");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // Each wave is kept as a `top-up` run of the head, its samples numbered after
    // every one the head's gate could have started (8/10: 0 to 9).
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len() as u64, case["waves"].as_u64().unwrap());
    let wave = std::fs::read_to_string(
        p.join(".prill/runs")
            .join(format!("{}.jsonl", runs[0].as_str().unwrap())),
    )
    .unwrap();
    let first: Value = serde_json::from_str(wave.lines().next().unwrap()).unwrap();
    assert_eq!(first["command"], "top-up");
    assert_eq!(first["settings"]["top_up"]["head"], head.as_str());
    let unit: Value = serde_json::from_str(
        wave.lines()
            .find(|l| l.contains("\"unit_finished\""))
            .unwrap(),
    )
    .unwrap();
    let mut indices: Vec<u64> = unit["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    indices.sort_unstable();
    assert_eq!(indices, (10..30).collect::<Vec<u64>>(), "{unit}");

    // Compared again without --top-up: the head still has its added samples, and the
    // looks they took.
    let again: Value = serde_json::from_str(&ok(
        &prill(p, &["compare", "--base-branch", "main", "--format", "json"]),
        0,
    ))
    .unwrap();
    assert_eq!(again["regressions"], topped["regressions"]);
    assert_eq!(again["looks"], 3);
    assert_eq!(
        again["head"]["label"],
        head.as_str(),
        "a top-up run is never the head"
    );
    let changes = ["regressions", "within_chance", "probably_changed"];
    let head_samples = changes
        .iter()
        .flat_map(|k| again[k].as_array().unwrap())
        .map(|c| c["head"]["samples"].as_u64().unwrap())
        .next();
    let own = before["within_chance"][0]["head"]["samples"]
        .as_u64()
        .unwrap();
    assert_eq!(head_samples, Some(own + added), "{again}");
    let listed = text(&prill(p, &["runs"]).stdout);
    assert!(listed.contains(" top-up "), "{listed}");
}

/// A top-up is refused when its samples would not be the head's, or its plan cannot
/// run, before anything is drawn.
#[test]
fn a_top_up_that_would_not_sample_the_head_is_refused() {
    let dir = rolling_repo();
    let p = dir.path();
    run_demo(p, &["--samples", "20"], 0);
    run_demo(p, &["--samples", "20"], 0);
    let head_commit = git(p, &["rev-parse", "HEAD"]);
    std::fs::write(p.join("other.yaml"), case("other", "other")).unwrap();
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "two"]);
    let out = prill(p, &["compare", "--top-up", "--demo"]);
    ok(&out, 2);
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("ran at commit {head_commit}")) && err.contains("check out"),
        "{err}"
    );
    assert_eq!(run_ids(p).len(), 2, "nothing was drawn");
    let out = prill(p, &["compare", "--top-up", "--top-up-drop", "1.5"]);
    ok(&out, 2);
    assert!(text(&out.stderr).contains("--top-up-drop must be above 0 and below 1"));
    // The top-up's own flags need it.
    let out = prill(p, &["compare", "--top-up-wave", "5"]);
    ok(&out, 2);
    assert!(
        text(&out.stderr).contains("--top-up"),
        "{}",
        text(&out.stderr)
    );
}
