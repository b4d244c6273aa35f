//! The history's index against run files as `prill run` writes them: listing, a case's
//! units across runs with their metrics, unfinished runs, files that grow, change or
//! go, pruning by count and by age, and an index that a killed process left
//! unreadable, rebuilt from the files.

use std::path::Path;

use prill_history::{History, render};

/// A `run` line for the run `id`, started at `at` on `commit`.
pub(crate) fn run_line(id: &str, at: &str, commit: Option<&str>) -> String {
    let git = match commit {
        Some(c) => format!(r#"{{"commit":"{c}","dirty":false,"branch":"main"}}"#),
        None => "null".to_owned(),
    };
    format!(
        r#"{{"schema_version":1,"event":"run","id":"{id}","started_at":"{at}","command":"run","git":{git},"settings":{{"paths":["."],"filters":[],"tags":[],"partition":null,"connections":[],"samples":null,"models":[],"judge":null,"fail_fast":false,"rerun_failed":false}}}}"#
    )
}

/// A `unit_finished` line for the case `case` over `direct` with `verdict`.
pub(crate) fn unit_line(case: &str, verdict: &str) -> String {
    let (passed, failed) = if verdict == "passed" { (1, 0) } else { (0, 1) };
    format!(
        r#"{{"schema_version":1,"event":"unit_finished","unit":{{"case_id":"{case}","name":"{case} name","file":"tests/{case}.yaml","dialect":"data-driven","connection":"direct","target":"echo"}},"verdict":"{verdict}","success_ratio":"1/1","tally":{{"passed":{passed},"failed":{failed},"errored":0}},"samples":[],"duration":0.5}}"#
    )
}

pub(crate) fn finished_line(passed: u64, failed: u64) -> String {
    format!(
        r#"{{"schema_version":1,"event":"run_finished","passed":{passed},"failed":{failed},"errored":0,"skipped":0,"cancelled":false,"duration":1.25}}"#
    )
}

pub(crate) fn write_run(dir: &Path, id: &str, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(dir.join(format!("{id}.jsonl")), text).unwrap();
}

/// Three runs of two cases: `a` passes, fails, passes; `b` always passes.
fn three_runs(dir: &Path) {
    for (i, a) in ["passed", "failed", "passed"].iter().enumerate() {
        let id = format!("20261125T00000{i}.000Z-00000{i}");
        let failed = u64::from(*a == "failed");
        write_run(
            dir,
            &id,
            &[
                run_line(
                    &id,
                    &format!("2026-11-25T00:00:0{i}Z"),
                    Some(&format!("{i}abcdef0123456789")),
                ),
                unit_line("a1b2c3d4e5f6", a),
                unit_line("ffff00001111", "passed"),
                finished_line(2 - failed, failed),
            ],
        );
    }
}

pub(crate) fn open(dir: &Path) -> History {
    History::open(&dir.join("runs"), &dir.join("history.sqlite")).unwrap()
}

pub(crate) fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    dir
}

#[test]
fn runs_are_listed_newest_first_and_a_case_shows_its_pattern() {
    let dir = scratch();
    three_runs(&dir.path().join("runs"));
    let history = open(dir.path());
    let runs = history.runs().unwrap();
    let ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "20261125T000002.000Z-000002",
            "20261125T000001.000Z-000001",
            "20261125T000000.000Z-000000"
        ]
    );
    assert_eq!((runs[1].passed, runs[1].failed), (1, 1));
    assert!(runs.iter().all(|r| r.finished));
    assert_eq!(runs[0].commit.as_deref(), Some("2abcdef0123456789"));
    assert!(runs.iter().all(|r| r.command == "run"));
    // By the start of its id, or by its name.
    for query in ["a1b2c3", "a1b2c3d4e5f6 name"] {
        let units = history.case_history(query).unwrap();
        assert_eq!(units.len(), 3, "{query}");
        assert!(
            render::case(&units).ends_with("oldest to newest: PFP\n"),
            "{}",
            render::case(&units)
        );
    }
    assert!(history.case_history("nothing").unwrap().is_empty());
    let table = render::runs(&runs);
    assert_eq!(table.lines().count(), 4, "a header and three runs: {table}");
    assert!(
        table.starts_with("run (started, UTC)  ") && table.contains("  commit  "),
        "{table}"
    );
    let second = table.lines().nth(2).unwrap();
    assert!(
        second.contains("1 passed, 1 failed, 0 errored, 0 skipped  1.25s"),
        "{table}"
    );
    // The start is in the id: it is not printed again.
    assert!(!table.contains(&runs[1].started_at), "{table}");
}

#[test]
fn a_run_still_going_is_unfinished_and_is_read_again_as_it_grows() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    let id = "20261125T000000.000Z-aaaaaa";
    // What a killed run leaves: its finished units and half a line.
    let mut text = [
        run_line(id, "2026-11-25T00:00:00Z", None),
        unit_line("a1b2c3d4e5f6", "failed"),
    ]
    .join("\n");
    text.push_str("\n{\"schema_version\":1,\"event\":\"unit_fin");
    std::fs::write(runs.join(format!("{id}.jsonl")), &text).unwrap();
    let listed = open(dir.path()).runs().unwrap();
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].finished);
    assert_eq!((listed[0].failed, listed[0].duration), (1, None));
    assert_eq!(listed[0].commit, None);
    assert!(render::runs(&listed).contains("(unfinished)"));

    write_run(
        &runs,
        id,
        &[
            run_line(id, "2026-11-25T00:00:00Z", None),
            unit_line("a1b2c3d4e5f6", "failed"),
            finished_line(0, 1),
        ],
    );
    let listed = open(dir.path()).runs().unwrap();
    assert!(listed[0].finished);
    assert_eq!(listed[0].duration, Some(1.25));
}

#[test]
fn an_unreadable_index_is_rebuilt_from_the_files() {
    let dir = scratch();
    three_runs(&dir.path().join("runs"));
    assert_eq!(open(dir.path()).runs().unwrap().len(), 3);
    // A process killed while writing, or anything else: not SQLite any more.
    std::fs::write(
        dir.path().join("history.sqlite"),
        b"\0garbage that is not a database\0".repeat(200),
    )
    .unwrap();
    let history = open(dir.path());
    assert_eq!(history.runs().unwrap().len(), 3);
    assert_eq!(history.case_history("a1b2c3d4e5f6").unwrap().len(), 3);
}

#[test]
fn an_index_damaged_past_its_header_is_rebuilt_from_the_files() {
    let dir = scratch();
    three_runs(&dir.path().join("runs"));
    assert_eq!(open(dir.path()).runs().unwrap().len(), 3);
    // Still SQLite by its first page (the header and the layout), every page after it
    // overwritten: what the index's first query reads says it is damaged.
    let path = dir.path().join("history.sqlite");
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 2 * 4096, "{} bytes", bytes.len());
    bytes[4096..].fill(0xA5);
    std::fs::write(&path, bytes).unwrap();
    let history = open(dir.path());
    assert_eq!(history.runs().unwrap().len(), 3);
    assert_eq!(history.case_history("a1b2c3d4e5f6").unwrap().len(), 3);
}

#[test]
fn removed_files_leave_the_index_and_pruning_keeps_the_newest() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    three_runs(&runs);
    assert_eq!(open(dir.path()).runs().unwrap().len(), 3);
    std::fs::remove_file(runs.join("20261125T000001.000Z-000001.jsonl")).unwrap();
    assert_eq!(open(dir.path()).runs().unwrap().len(), 2);

    three_runs(&runs);
    let mut history = open(dir.path());
    let removed = history.prune(1).unwrap();
    assert_eq!(
        removed,
        ["20261125T000001.000Z-000001", "20261125T000000.000Z-000000"]
    );
    assert_eq!(history.runs().unwrap().len(), 1);
    assert!(runs.join("20261125T000002.000Z-000002.jsonl").exists());
    assert!(!runs.join("20261125T000000.000Z-000000.jsonl").exists());
    assert_eq!(history.case_history("a1b2c3d4e5f6").unwrap().len(), 1);
}

#[test]
fn a_file_that_is_not_a_run_is_ignored() {
    let dir = scratch();
    std::fs::write(dir.path().join("runs/notes.jsonl"), "{\"hello\": 1}\n").unwrap();
    assert!(open(dir.path()).runs().unwrap().is_empty());
    // No runs folder at all is an empty history.
    let empty = tempfile::tempdir().unwrap();
    assert!(open(empty.path()).runs().unwrap().is_empty());
}

/// A `unit_finished` line of the case `case` whose two samples each had one
/// interaction: 0.2 s and 0.4 s, 10 and 20 tokens in, 3 and 4 out, the first with a
/// time to first token and a cost.
fn measured_unit_line(case: &str) -> String {
    let interaction = |duration: f64, input: u64, output: u64, extra: &str| {
        format!(
            r#"{{"index":0,"sent":"hi","answer":"hi","structure":null,"sly_data":null,"duration":{duration},"checks":[],"error":null,"usage":{{"input":{input},"output":{output}}}{extra}}}"#
        )
    };
    let sample = |index: u32, interaction: String| {
        format!(
            r#"{{"index":{index},"status":"passed","duration":0.5,"interactions":[{interaction}],"error":null}}"#
        )
    };
    let samples = [
        sample(
            0,
            interaction(0.2, 10, 3, r#","time_to_first_token":0.05,"cost":0.000123"#),
        ),
        sample(1, interaction(0.4, 20, 4, "")),
    ]
    .join(",");
    format!(
        r#"{{"schema_version":1,"event":"unit_finished","unit":{{"case_id":"{case}","name":"{case} name","file":"tests/{case}.yaml","dialect":"sentinel-spec","connection":"openai","target":"gpt-4o-mini"}},"verdict":"passed","success_ratio":"2/2","tally":{{"passed":2,"failed":0,"errored":0}},"samples":[{samples}],"duration":0.9}}"#
    )
}

#[test]
fn a_case_s_history_has_its_latency_tokens_and_cost() {
    let dir = scratch();
    let id = "20261125T000000.000Z-bbbbbb";
    write_run(
        &dir.path().join("runs"),
        id,
        &[
            run_line(id, "2026-11-25T00:00:00Z", None),
            measured_unit_line("c0ffee"),
            finished_line(1, 0),
        ],
    );
    let units = open(dir.path()).case_history("c0ffee").unwrap();
    assert_eq!(units.len(), 1);
    let unit = &units[0];
    assert!((unit.latency.unwrap() - 0.3).abs() < 1e-9, "{unit:?}");
    assert_eq!(unit.time_to_first_token, Some(0.05));
    assert_eq!((unit.input_tokens, unit.output_tokens), (Some(30), Some(7)));
    assert_eq!(unit.cost, Some(0.000123));
    let shown = render::case(&units);
    assert!(
        shown.contains("latency 0.300s  ttft 0.050s  tokens 30 in 7 out  cost $0.000123"),
        "{shown}"
    );
    // A unit with no interactions has no metrics, and shows none.
    three_runs(&dir.path().join("runs"));
    let units = open(dir.path()).case_history("a1b2c3d4e5f6").unwrap();
    assert_eq!(
        (units[0].latency, units[0].input_tokens, units[0].cost),
        (None, None, None)
    );
    assert!(!render::case(&units).contains("latency"));
    // A run's cost is its units' costs; none when no call's cost is known.
    let runs = open(dir.path()).runs().unwrap();
    let priced = runs.iter().find(|r| r.id == id).unwrap();
    assert_eq!(priced.cost, Some(0.000123));
    assert!(render::runs(&runs).contains("0 skipped  1.25s  cost $0.000123"));
    assert!(runs.iter().filter(|r| r.id != id).all(|r| r.cost.is_none()));
}

#[test]
fn a_file_changed_in_place_is_read_again() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    three_runs(&runs);
    assert_eq!(open(dir.path()).runs().unwrap()[0].failed, 0);
    // The same size (`passed` and `failed` are as long), another time of change.
    let path = runs.join("20261125T000002.000Z-000002.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text
        .replace(r#""verdict":"passed""#, r#""verdict":"failed""#)
        .replace(r#""passed":2,"failed":0"#, r#""passed":0,"failed":2"#);
    assert_eq!(edited.len(), text.len());
    std::fs::write(&path, edited).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let listed = open(dir.path()).runs().unwrap();
    assert_eq!((listed[0].passed, listed[0].failed), (0, 2), "{listed:?}");
}

#[test]
fn pruning_by_age_removes_only_the_runs_older_than_it() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let ids = ["20200101T000000.000Z-000000", "20991231T000000.000Z-000001"];
    for (id, at) in ids.iter().zip(["2020-01-01T00:00:00.5Z", now.as_str()]) {
        write_run(
            &runs,
            id,
            &[
                run_line(id, at, None),
                unit_line("a1b2c3d4e5f6", "passed"),
                finished_line(1, 0),
            ],
        );
    }
    let mut history = open(dir.path());
    let removed = history
        .prune_older_than(std::time::Duration::from_secs(30 * 24 * 3600))
        .unwrap();
    assert_eq!(removed, [ids[0]]);
    assert!(!runs.join(format!("{}.jsonl", ids[0])).exists());
    assert!(runs.join(format!("{}.jsonl", ids[1])).exists());
    let left: Vec<String> = history.runs().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(left, [ids[1]]);
    // Nothing is younger than a day and older than now.
    assert!(
        history
            .prune_older_than(std::time::Duration::from_secs(24 * 3600))
            .unwrap()
            .is_empty()
    );
}

/// A `unit_finished` line of the case `id` named `name` in `file`, passed.
fn named_unit(id: &str, name: &str, file: &str) -> String {
    unit_line(id, "passed")
        .replace(
            &format!("\"name\":\"{id} name\""),
            &format!("\"name\":\"{name}\""),
        )
        .replace(
            &format!("\"file\":\"tests/{id}.yaml\""),
            &format!("\"file\":\"{file}\""),
        )
}

/// A case named by its id is followed through an edit of its inputs (a new id, the
/// same file and name), and the line where its inputs changed says so; a case of the
/// same name in another file is not followed.
#[test]
fn a_case_is_followed_through_an_edit_of_its_inputs() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    for (i, id) in ["aaaa00000000", "aaaa00000000", "bbbb00000000"]
        .iter()
        .enumerate()
    {
        let run = format!("20261125T00000{i}.000Z-00000{i}");
        write_run(
            &runs,
            &run,
            &[
                run_line(&run, &format!("2026-11-25T00:00:0{i}Z"), None),
                named_unit(
                    id,
                    "greets",
                    if i == 0 {
                        "./tests/g.yaml"
                    } else {
                        "tests/g.yaml"
                    },
                ),
                named_unit("cccc00000000", "greets", "tests/other.yaml"),
                finished_line(2, 0),
            ],
        );
    }
    let history = open(dir.path());
    let units = history.case_history("bbbb").unwrap();
    let ids: Vec<&str> = units.iter().map(|u| u.case_id.as_str()).collect();
    assert_eq!(ids, ["bbbb00000000", "aaaa00000000", "aaaa00000000"]);
    let text = render::case(&units);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].ends_with("inputs changed: id aaaa00000000 → bbbb00000000"),
        "{text}"
    );
    assert!(!lines[1].contains("inputs changed"), "{text}");
    assert_eq!(history.case_history("aaaa").unwrap().len(), 3, "either id");
    assert_eq!(
        history.case_history("greets").unwrap().len(),
        6,
        "a name is a name"
    );
}

#[test]
fn a_case_that_passes_and_fails_across_recent_runs_is_flaky_with_its_evidence() {
    use prill_stats::stability::Stability;
    let dir = scratch();
    three_runs(&dir.path().join("runs"));
    let history = open(dir.path());
    let cases = history.stability(10).unwrap();
    let states: Vec<(&str, Stability, u64, u64, u32)> = cases
        .iter()
        .map(|c| (c.name.as_str(), c.state, c.passed, c.samples, c.runs))
        .collect();
    // Flaky ones first.
    assert_eq!(
        states,
        [
            ("a1b2c3d4e5f6 name", Stability::Flaky, 2, 3, 3),
            ("ffff00001111 name", Stability::Stable, 3, 3, 3)
        ]
    );
    assert!(cases[0].low > 0.0 && cases[0].high < 1.0);
    assert_eq!(cases[0].case_id, "a1b2c3d4e5f6");
    let text = render::flaky(&cases, 10);
    assert!(
        text.contains("flaky  a1b2c3d4e5f6 name [direct]  tests/a1b2c3d4e5f6.yaml  2 of 3 samples passed over 3 runs: 66.7% ("),
        "{text}"
    );
    assert!(text.contains("1 flaky, 1 stable, 0 broken"), "{text}");
    // Over its newest run alone, `a` passed: stable.
    let newest = history.stability(1).unwrap();
    assert!(
        newest
            .iter()
            .all(|c| c.state == Stability::Stable && c.runs == 1),
        "{newest:?}"
    );
}

/// A case held to a `reliability` gate is flaky between its own `bad` and `good`, not
/// merely when it neither always nor never passes.
#[test]
fn a_reliability_case_is_flaky_between_its_own_rates() {
    use prill_stats::stability::Stability;
    let dir = scratch();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    // 88 of 100 samples, then 99 of 100, each under 0.95 / 0.80.
    for (i, (id, passed)) in [("gate00000001", 88), ("gate00000002", 99)]
        .iter()
        .enumerate()
    {
        let run = format!("20261126T00000{i}.000Z-00000{i}");
        let unit = unit_line(id, "passed")
            .replace(
                r#""success_ratio":"1/1""#,
                r#""reliability":{"good":0.95,"bad":0.8,"false_pass":0.05,"false_fail":0.05,"max_samples":100}"#,
            )
            .replace(
                r#""tally":{"passed":1,"failed":0"#,
                &format!(r#""tally":{{"passed":{passed},"failed":{}"#, 100 - passed),
            );
        write_run(
            &runs,
            &run,
            &[
                run_line(&run, &format!("2026-11-26T00:00:0{i}Z"), None),
                unit,
                finished_line(1, 0),
            ],
        );
    }
    let history = open(dir.path());
    let states: Vec<(String, Stability)> = history
        .stability(10)
        .unwrap()
        .into_iter()
        .map(|c| (c.case_id, c.state))
        .collect();
    assert_eq!(
        states,
        [
            ("gate00000001".to_owned(), Stability::Flaky),
            ("gate00000002".to_owned(), Stability::Stable)
        ]
    );
}
