//! `expect_state` on an http agent end to end: the demo's `echo` agent over http, and
//! the state endpoint a team puts beside its agent (`prill_testkit::state::FakeState`),
//! named by the case's `state_endpoint`. The state is read once the conversation is
//! over, with the sample's headers; a state that differs fails the case, one that cannot
//! be read errors it, and the read is recorded and replayed with the conversation.

use std::path::Path;

use prill_testkit::state::FakeState;
use serde_json::json;

use crate::support::{expected, output_text, run_args, runtime, unit, verdicts, write};

/// A case of the echo agent over http whose end state must hold `orders.W1 = status`,
/// read from `endpoint`.
fn case(endpoint: &str, status: &str) -> String {
    format!(
        "agent: echo\nconnections: [http]\nstate_endpoint: \"{endpoint}\"\ninteractions:\n  - text: cancel order W1\n    response: {{text: {{keywords: cancel}}}}\nexpect_state:\n  paths: {{\"$.orders.W1\": {status}}}\n"
    )
}

fn run(dir: &Path, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let mut args = vec!["--demo", "--no-cache"];
    args.extend(extra);
    run_args(dir, "cases", &args, &[])
}

#[test]
fn an_http_agents_end_state_is_read_from_its_endpoint_checked_recorded_and_replayed() {
    let rt = runtime();
    let state = rt.block_on(FakeState::start());
    state.set(json!({"orders": {"W1": "cancelled", "W2": "pending"}}));
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("cases")).unwrap();
    write(
        dir,
        "cases/cancelled.yaml",
        &case(&state.url(), "cancelled"),
    );
    write(dir, "cases/pending.yaml", &case(&state.url(), "pending"));
    // A path is read on the agent's own server, which has no such page.
    write(
        dir,
        "cases/on_the_server.yaml",
        &case("/shop/state", "cancelled"),
    );
    let (out, report) = run(dir, &["--record", "tapes"]);
    let all = output_text(&out);
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("cases/cancelled", "passed"),
            ("cases/on_the_server", "errored"),
            ("cases/pending", "failed"),
        ]),
        "{all}"
    );
    let failed = unit(&report, "cases/pending").to_string();
    assert!(
        failed.contains("`$.orders.W1`: expected \\\"pending\\\", found \\\"cancelled\\\""),
        "{failed}"
    );
    let errored =
        unit(&report, "cases/on_the_server")["samples"][0]["interactions"][0]["error"].to_string();
    assert!(errored.contains("404"), "{errored}");
    // Read once per sample, after the conversation, with the sample's header.
    let reads = state.requests();
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert!(
        reads
            .iter()
            .all(|r| r.method == "GET" && r.header("x-prill-sample") == Some("0"))
    );

    // Replayed: the state server is gone, the verdicts stay.
    drop(state);
    drop(rt);
    std::fs::remove_file(dir.join("report.json")).unwrap();
    let (out, replayed) = run(dir, &["--replay", "tapes"]);
    assert_eq!(
        verdicts(&replayed),
        verdicts(&report),
        "{}",
        output_text(&out)
    );
    assert_eq!(unit(&replayed, "cases/cancelled")["source"], "replayed");
}

#[test]
fn an_end_state_that_cannot_be_read_errors_the_case_never_fails_it() {
    let rt = runtime();
    let state = rt.block_on(FakeState::start());
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("cases")).unwrap();
    write(dir, "cases/broken.yaml", &case(&state.url(), "cancelled"));
    for (status, body, says) in [
        (500, "the database is down", "500"),
        (200, "<html>not json</html>", "did not answer JSON"),
    ] {
        state.fail_with(status, body);
        let (out, report) = run(dir, &[]);
        assert_eq!(
            verdicts(&report),
            expected(&[("cases/broken", "errored")]),
            "{}",
            output_text(&out)
        );
        let message =
            unit(&report, "cases/broken")["samples"][0]["interactions"][0]["error"].to_string();
        assert!(message.contains(says), "{message}");
    }
}
