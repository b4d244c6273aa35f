//! The judge as the settings build it: `[judge] temperature` and `max_tokens` reach the
//! model's request where the model takes them, a temperature it does not take is
//! warned about once, and the default judges come from prill-judge's one table.

use std::path::Path;

use prill_app::{Overrides, Settings};
use prill_spec::Env;
use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

fn settings(dir: &Path, toml: &str, env: Env) -> Settings {
    std::fs::write(dir.join("prill.toml"), toml).unwrap();
    Settings::load_from(dir, None, env, Overrides::default()).unwrap()
}

fn openai_env(fake: &FakeOpenAi) -> Env {
    Env::from_pairs([
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
    ])
}

#[tokio::test]
async fn judge_sampling_reaches_the_request_and_a_refused_temperature_is_warned_about() {
    let fake = FakeOpenAi::start().await;
    fake.default_reply(Reply::structured(
        json!({"verdict": "pass", "reason": "ok"}),
    ));
    let dir = tempfile::tempdir().unwrap();
    let toml =
        "[judge]\nmodel = \"openai:o3-mini\"\ntemperature = 0.2\nmax_tokens = 900\ncache = false\n";
    let settings = settings(dir.path(), toml, openai_env(&fake));
    let providers = settings.providers().unwrap();
    let chosen = settings.judge(&providers).await.unwrap().unwrap();
    assert_eq!(
        chosen.announcement,
        "judge: openai:o3-mini (from prill.toml, no cache)"
    );
    assert_eq!(chosen.warnings.len(), 1, "{:?}", chosen.warnings);
    assert!(
        chosen.warnings[0].starts_with("[judge] temperature 0.2 is not sent: openai:o3-mini"),
        "{:?}",
        chosen.warnings
    );
    assert!(chosen.judge.judge("says hi", "hi").await.unwrap().pass);
    let body = fake.last_body();
    assert!(body.get("temperature").is_none(), "{body}");
    let budget = body
        .get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .and_then(Value::as_u64);
    assert_eq!(budget, Some(900), "{body}");

    // A model that takes a temperature gets `[judge] temperature`, and no warning.
    let toml = "[judge]\nmodel = \"openai:gpt-4o-mini\"\ntemperature = 0.2\ncache = false\n";
    let settings = self::settings(dir.path(), toml, openai_env(&fake));
    let chosen = settings.judge(&providers).await.unwrap().unwrap();
    assert!(chosen.warnings.is_empty(), "{:?}", chosen.warnings);
    chosen.judge.judge("says hi", "hi").await.unwrap();
    let body = fake.last_body();
    assert_eq!(body["temperature"], 0.2);
    let budget = body
        .get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .and_then(Value::as_u64);
    assert_eq!(budget, Some(400), "{body}");
}

#[tokio::test]
async fn an_anthropic_key_picks_the_current_default_judge() {
    let dir = tempfile::tempdir().unwrap();
    let env = Env::from_pairs([("ANTHROPIC_API_KEY", "sk-ant-test".to_owned())]);
    let settings = settings(dir.path(), "", env);
    let providers = settings.providers().unwrap();
    let (spec, because) = settings.judge_spec(&providers).await.unwrap().unwrap();
    assert_eq!(spec.to_string(), "anthropic:claude-haiku-4-5");
    assert_eq!(because, "picked because ANTHROPIC_API_KEY is set");
}
