//! `prill run` end to end: the quickstart against the demo agents, failures and errors
//! with their exit codes, the report files, selection, a separate server, and Ctrl-C.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{command, fixtures, prill, text};

#[test]
fn the_quickstart_passes_against_the_demo_agents_and_writes_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = fixtures("quickstart");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            quickstart.to_str().unwrap(),
            "--json",
            "run.json",
            "--jsonl",
            "run.jsonl",
            "--junit",
            "junit.xml",
            "--markdown",
            "summary.md",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("6 passed, 0 failed, 0 errored, 0 skipped in ")),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "NO_COLOR: no escape codes");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run.json")).unwrap())
            .unwrap();
    assert_eq!(json["summary"]["passed"], 6);
    assert_eq!(json["units"].as_array().unwrap().len(), 6);
    let jsonl = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
    let events: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The stream says which run it is first, as the history's file does.
    assert_eq!(events[0]["event"], "run");
    assert_eq!(events[0]["settings"]["suite"]["units"], 6);
    assert_eq!(events[1]["event"], "run_started");
    assert_eq!(events.last().unwrap()["event"], "run_finished");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), 6, "{junit}");
    assert!(!junit.contains("<failure") && !junit.contains("<error"));
    let markdown = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        markdown.contains("6 passed, 0 failed, 0 errored, 0 skipped"),
        "{markdown}"
    );
}

#[test]
fn failures_exit_1_and_errors_alone_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let failing = fixtures("examples/failing");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            failing.to_str().unwrap(),
            "--junit",
            "junit.xml",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("0 passed, 2 failed, 3 errored, 0 skipped"),
        "{stderr}"
    );
    assert!(
        stderr.contains("structure.running_cost: expected value 4.0, found 3.0"),
        "{stderr}"
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<failure").count(), 2, "{junit}");
    assert_eq!(junit.matches("<error").count(), 3, "{junit}");

    let only_errors = failing.join("unknown_agent.hocon");
    let out = prill(
        dir.path(),
        &["run", "--demo", only_errors.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

#[test]
fn invalid_files_and_empty_selections_exit_2_without_running() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "agent: echo\ninteractions:\n  - txt: hi\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "--demo", "bad.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    // stderr is a pipe: one line per diagnostic.
    assert!(
        stderr
            .contains("bad.yaml:3:5: error[unknown-key]: interactions[0].txt: unknown key `txt` (did you mean `text`?)\n"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was run"), "{stderr}");

    let quickstart = fixtures("quickstart");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            quickstart.to_str().unwrap(),
            "--filter",
            "no-such-case",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no test case to run"));
}

#[test]
fn selection_and_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = fixtures("quickstart");
    let q = quickstart.to_str().unwrap();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q,
            "--filter",
            "music",
            "--connection",
            "https,mcp",
            "--samples",
            "2",
            "--json",
            "r.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let connections: Vec<&str> = json["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["unit"]["connection"].as_str().unwrap())
        .collect();
    assert_eq!(connections.len(), 2);
    assert!(connections.contains(&"https") && connections.contains(&"mcp"));
    // Shards split the cases with no overlap and no gap; an empty one passes.
    let mut total = 0;
    for shard in ["1/2", "2/2"] {
        let out = prill(
            dir.path(),
            &["run", "--demo", q, "--shard", shard, "--json", "s.json"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("s.json")).unwrap())
                .unwrap();
        total += json["summary"]["passed"].as_u64().unwrap();
    }
    assert_eq!(total, 6);
}

#[test]
fn a_separate_server_is_reached_with_server() {
    let demo = prill_testkit::start_demo_background();
    let dir = tempfile::tempdir().unwrap();
    let quickstart = fixtures("quickstart");
    let url = demo.http_url();
    let out = prill(
        dir.path(),
        &[
            "run",
            quickstart.to_str().unwrap(),
            "--server",
            &url,
            "--connection",
            "http",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("3 passed, 0 failed"));
    // Without a server nothing answers: errors, exit 3, and the error names the server.
    let out = prill(
        dir.path(),
        &[
            "run",
            quickstart.to_str().unwrap(),
            "--server",
            "http://127.0.0.1:9",
            "--connection",
            "http",
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("127.0.0.1:9"));
}

#[test]
fn ctrl_c_cancels_writes_the_partial_reports_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("slow.yaml"),
        "agent: slow\nconnections: [direct, http]\ninteractions:\n  - text: wait\n    sly_data: {delay_ms: 60000}\n    response: {text: {not_keywords: error}}\n",
    )
    .unwrap();
    let mut child = command(
        dir.path(),
        &[
            "run",
            "--demo",
            "slow.yaml",
            "--json",
            "r.json",
            "--jsonl",
            "r.jsonl",
        ],
    )
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // The first lines say which prill.toml was read (none here), then where the demo is.
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.starts_with("config: no prill.toml in "), "{first}");
    let mut second = String::new();
    stderr.read_line(&mut second).unwrap();
    assert!(second.starts_with("demo agents on"), "{second}");
    // Let both samples start, then interrupt.
    let jsonl = dir.path().join("r.jsonl");
    for _ in 0..200 {
        let started = std::fs::read_to_string(&jsonl)
            .unwrap_or_default()
            .matches("unit_started")
            .count();
        if started == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(rest.contains("(cancelled)"), "{rest}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(json["summary"]["cancelled"], true);
    assert_eq!(json["units"].as_array().unwrap().len(), 2);
    assert!(
        std::fs::read_to_string(&jsonl)
            .unwrap()
            .contains("run_finished")
    );
}

#[test]
fn quiet_prints_neither_the_demo_url_nor_the_config_line() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = fixtures("quickstart");
    let out = prill(
        dir.path(),
        &["run", "-q", "--demo", quickstart.to_str().unwrap()],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("demo agents on"), "{stderr}");
    assert!(!stderr.contains("config:"), "{stderr}");
    assert!(
        stderr.starts_with("6 passed, 0 failed, 0 errored, 0 skipped in "),
        "only the summary: {stderr}"
    );
    // Without -q both are said.
    let out = prill(dir.path(), &["run", "--demo", quickstart.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("demo agents on http://"), "{stderr}");
    assert!(stderr.contains("config: no prill.toml in "), "{stderr}");
}

#[test]
fn an_unknown_agent_over_direct_names_the_config_read_and_the_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let case = "agent = nobody\nconnections = [direct]\ninteractions = [{ text = hi, response.text.keywords = hi }]\n";
    std::fs::write(dir.path().join("case.hocon"), case).unwrap();
    let fixes = |stderr: &str| {
        assert!(
            stderr.contains("unknown agent `nobody` on the direct connection"),
            "{stderr}"
        );
        assert!(stderr.contains("`--demo`"), "{stderr}");
        assert!(stderr.contains("`[agents.nobody] command = "), "{stderr}");
        assert!(stderr.contains("`--connection http`"), "{stderr}");
    };
    let out = prill(dir.path(), &["run", "case.hocon"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    fixes(&stderr);
    assert!(stderr.contains("no prill.toml was found in "), "{stderr}");

    std::fs::write(
        dir.path().join("prill.toml"),
        "[agents.other]\ncommand = [\"true\"]\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "case.hocon"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    fixes(&stderr);
    let toml = std::fs::canonicalize(dir.path().join("prill.toml")).unwrap();
    assert!(
        stderr.contains(&format!(
            "{} has no `[agents.nobody]` command",
            toml.display()
        )),
        "{stderr}"
    );
}
