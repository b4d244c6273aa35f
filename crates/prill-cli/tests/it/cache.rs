//! The model response cache through `prill run`, against the fake OpenAI server on
//! 127.0.0.1: a Sentinel suite at `temperature: 0` run twice asks the provider once,
//! the second run's answers come from `.prill/cache/models` (the report marks them
//! `cached`, at no cost), `--no-cache` and `[cache] models = false` go to the provider,
//! and a request at another temperature is never cached.

use std::path::Path;

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::Value;

use crate::support::{run_args, runtime, verdicts};

const QUESTION: &str = "What is the capital of France?";

fn suite(temperature: &str) -> String {
    format!(
        r#"name: cached suite
defaults:
  model: gpt-4o-mini
  provider: openai
  model_config: {{temperature: {temperature}, max_tokens: 20}}
tests:
  - name: capital
    inputs: {{query: "{QUESTION}"}}
    assertions:
      - must_contain: Paris
"#
    )
}

fn project(temperature: &str, config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.yaml"), suite(temperature)).unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        format!("[prices.\"openai:gpt-4o-mini\"]\ninput = 1.0\noutput = 2.0\n\n{config}"),
    )
    .unwrap();
    dir
}

/// The report of `prill run suite.yaml` against `fake`, which must pass.
fn run_suite(dir: &Path, fake: &FakeOpenAi, extra: &[&str]) -> Value {
    run_said(dir, fake, extra).0
}

/// [`run_suite`], with what it said on stderr.
fn run_said(dir: &Path, fake: &FakeOpenAi, extra: &[&str]) -> (Value, String) {
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    let (out, report) = run_args(dir, "suite.yaml", extra, &env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        verdicts(&report),
        vec![("capital".to_owned(), "passed".to_owned())],
        "{stderr}"
    );
    (report, stderr.into_owned())
}

/// The interaction of the suite's one case.
fn first_interaction(report: &Value) -> &Value {
    &report["units"][0]["samples"][0]["interactions"][0]
}

fn fake() -> (tokio::runtime::Runtime, FakeOpenAi) {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.on_message(QUESTION, Reply::text("Paris").usage(10, 1));
    (rt, fake)
}

#[test]
fn a_second_run_at_temperature_zero_is_answered_from_the_cache_at_no_cost() {
    let (_rt, fake) = fake();
    let dir = project("0", "");
    let first = run_suite(dir.path(), &fake, &[]);
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(first_interaction(&first).get("cached"), None, "{first}");
    assert!(first_interaction(&first)["cost"].as_f64().unwrap() > 0.0);
    let entries: Vec<String> = std::fs::read_dir(dir.path().join(".prill/cache/models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(entries.contains(&".gitignore".to_owned()), "{entries:?}");
    // Cached answers are never meant to be committed.
    let ignore = std::fs::read_to_string(dir.path().join(".prill/cache/models/.gitignore"));
    assert_eq!(ignore.unwrap(), "*\n");

    let (second, said) = run_said(dir.path(), &fake, &[]);
    assert_eq!(fake.requests().len(), 1, "the provider was asked again");
    assert!(
        said.contains("1 answer from the model response cache"),
        "{said}"
    );
    assert_eq!(first_interaction(&second)["cached"], true, "{second}");
    assert_eq!(first_interaction(&second)["answer"], "Paris");
    assert_eq!(first_interaction(&second)["cost"], 0.0);

    // --no-cache asks the provider, and the report marks nothing.
    let live = run_suite(dir.path(), &fake, &["--no-cache"]);
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(first_interaction(&live).get("cached"), None, "{live}");
}

#[test]
fn the_cache_answers_with_the_provider_gone() {
    let (rt, fake) = fake();
    let dir = project("0.0", "");
    run_suite(dir.path(), &fake, &[]);
    let base_url = fake.base_url();
    drop(fake);
    drop(rt);
    let env = [
        ("OPENAI_BASE_URL", base_url),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    let (out, report) = run_args(dir.path(), "suite.yaml", &[], &env);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(first_interaction(&report)["cached"], true, "{report}");
}

#[test]
fn another_temperature_and_a_cache_turned_off_go_to_the_provider_every_time() {
    let (_rt, fake) = fake();
    let warm = project("0.7", "");
    run_suite(warm.path(), &fake, &[]);
    let again = run_suite(warm.path(), &fake, &[]);
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(first_interaction(&again).get("cached"), None, "{again}");
    assert!(!warm.path().join(".prill/cache/models").exists());

    let off = project("0", "[cache]\nmodels = false\n");
    run_suite(off.path(), &fake, &[]);
    run_suite(off.path(), &fake, &[]);
    assert_eq!(fake.requests().len(), 4);
    assert!(!off.path().join(".prill/cache/models").exists());
}
