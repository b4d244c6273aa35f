//! The CLI gets its providers, limits and judge from the same settings layer as the
//! library and the harness (`prill-app/tests/it/limits.rs`): with
//! `requests_per_minute = 60`, the model cases and the judge together reach the provider
//! once a second.

use std::time::Duration;

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::json;

use crate::support::command;

#[test]
fn prill_run_paces_model_cases_and_the_judge_together() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.default_reply(Reply::structured(
        json!({"verdict": "pass", "reason": "it says hello"}),
    ));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        "[providers.openai]\nrequests_per_minute = 60\n\n[judge]\nmodel = \"openai:gpt-4o-mini\"\ncache = false\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("suite.yaml"),
        "name: paced\ndefaults:\n  model: gpt-4o-mini\n  provider: openai\ntests:\n  - name: one\n    inputs: {query: one}\n    assertions: [{must_contain: a}]\n  - name: two\n    inputs: {query: two}\n    assertions: [{must_contain: a}]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("gist.hocon"),
        "{ agent = echo, connections = [direct], interactions = [ { text = hello, response { text { gist = \"says hello\" } } } ] }\n",
    )
    .unwrap();
    let out = command(dir.path(), &["run", "--demo", "."])
        .env("OPENAI_BASE_URL", fake.base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "config: {}",
            dir.path().join("prill.toml").display()
        )),
        "the run names the prill.toml it read: {stderr}"
    );
    assert!(
        stderr.contains("judge: openai:gpt-4o-mini (from prill.toml"),
        "{stderr}"
    );
    let mut times: Vec<_> = fake.requests().iter().map(|r| r.received).collect();
    times.sort();
    assert_eq!(
        times.len(),
        3,
        "two model calls and one judge call: {stderr}"
    );
    for pair in times.windows(2) {
        assert!(
            pair[1] - pair[0] >= Duration::from_millis(900),
            "two requests {:?} apart under a limit of one a second",
            pair[1] - pair[0]
        );
    }
}
