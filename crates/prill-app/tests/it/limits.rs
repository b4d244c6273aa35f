//! One rate limiter per provider, whoever calls it: with `requests_per_minute = 60`,
//! the model cases and the judge together reach the provider once a second, through the
//! library's [`Session`], through the `cargo test` harness and through
//! `run_test_suite` with the session's provider and judge (the CLI's own test is in
//! `prill-cli/tests/it/limits.rs`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use prill_app::harness::{Agents, Harness};
use prill_app::{Overrides, Session, Settings, prepare};
use prill_check::{BoxFuture, Evaluation, Evaluator, EvaluatorError};
use prill_run::{Selection, SuiteOptions, TestCase, async_fn, run_test_suite};
use prill_spec::{Env, ProviderKind};
use prill_target::model::{ChatMessage, ModelRequest, Role};
use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::json;

/// Two Sentinel model cases and one data-driven case with a gist check, all on the
/// fake's provider, with the judge on the same provider.
fn project(dir: &Path) {
    std::fs::write(
        dir.join("prill.toml"),
        "[providers.openai]\nrequests_per_minute = 60\n\n[judge]\nmodel = \"openai:gpt-4o-mini\"\ncache = false\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("suite.yaml"),
        "name: paced\ndefaults:\n  model: gpt-4o-mini\n  provider: openai\ntests:\n  - name: one\n    inputs: {query: one}\n    assertions: [{must_contain: a}]\n  - name: two\n    inputs: {query: two}\n    assertions: [{must_contain: a}]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("gist.hocon"),
        "{ agent = echo, connections = [direct], interactions = [ { text = hello, response { text { gist = \"says hello\" } } } ] }\n",
    )
    .unwrap();
}

fn env(fake: &FakeOpenAi) -> Env {
    Env::from_pairs([
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
    ])
}

fn settings(dir: &Path, fake: &FakeOpenAi) -> Settings {
    let overrides = Overrides {
        demo: true,
        ..Overrides::default()
    };
    Settings::load_from(dir, None, env(fake), overrides).unwrap()
}

/// Every request the fake saw started at least (almost) a second after the one before.
fn assert_paced(fake: &FakeOpenAi, at_least: usize) {
    let mut times: Vec<_> = fake.requests().iter().map(|r| r.received).collect();
    times.sort();
    assert!(
        times.len() >= at_least,
        "expected {at_least} requests, the provider saw {}",
        times.len()
    );
    for pair in times.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(900),
            "two requests {gap:?} apart under a limit of one a second"
        );
    }
}

fn fake(rt: &tokio::runtime::Runtime) -> FakeOpenAi {
    let fake = rt.block_on(FakeOpenAi::start());
    fake.default_reply(Reply::structured(
        json!({"verdict": "pass", "reason": "it says hello"}),
    ));
    fake
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Every test file of `dir`, prepared, and a check that its three cases loaded.
fn prepare_three(settings: &Settings, dir: &std::path::Path) -> prill_app::Prepared {
    let prepared = prepare(settings, &[dir.to_path_buf()], &Selection::all(), None);
    assert_eq!(
        prepared.plan.cases.len(),
        3,
        "{:?}",
        prepared.inputs.reports()
    );
    prepared
}

#[test]
fn model_cases_and_the_judge_share_one_limiter_in_a_session() {
    let rt = runtime();
    let fake = fake(&rt);
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let settings = settings(dir.path(), &fake);
    assert_eq!(
        settings.config_path(),
        Some(dir.path().join("prill.toml").as_path())
    );
    let prepared = prepare_three(&settings, dir.path());
    rt.block_on(async {
        let session = Session::new(&settings, &prepared.plan).await.unwrap();
        assert!(session.judge.is_some(), "the gist case gets the judge");
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let summary = session.run(&prepared.plan, tx).await;
        assert_eq!(summary.errored, 0, "{summary:?}");
        session.shutdown().await;
    });
    // Two model calls and one judge call.
    assert_paced(&fake, 3);
}

#[test]
fn the_harness_reads_the_same_settings_and_shares_the_limiter() {
    let rt = runtime();
    let fake = fake(&rt);
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    // The harness reads the process environment as `cargo test` gives it; the test
    // gives it the fake's variables instead.
    let trials = Harness::new(dir.path())
        .config(dir.path().join("prill.toml"))
        .agents(Agents::Demo)
        .env(env(&fake))
        .trials()
        .unwrap();
    assert_eq!(trials.len(), 3);
    let args = libtest_mimic::Arguments {
        test_threads: Some(3),
        quiet: true,
        ..libtest_mimic::Arguments::default()
    };
    let conclusion = libtest_mimic::run(&args, trials);
    assert_eq!(conclusion.num_passed + conclusion.num_failed, 3);
    assert_paced(&fake, 3);
}

/// A case of the Rust suite: a question for the model.
struct Question(&'static str);

impl TestCase for Question {
    fn hash(&self) -> String {
        self.0.to_owned()
    }
}

/// An evaluator that asks the session's judge.
struct Judged(Arc<dyn prill_check::Judge>);

impl Evaluator<Question, String> for Judged {
    fn id(&self) -> &str {
        "judged"
    }

    fn evaluate<'a>(
        &'a self,
        _case: &'a Question,
        output: &'a String,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            let verdict = self
                .0
                .judge("says hello", output)
                .await
                .map_err(|e| EvaluatorError::new(e.to_string()))?;
            Ok(Some(Evaluation::pass_fail(verdict.pass)))
        })
    }
}

#[test]
fn run_test_suite_shares_the_limiter_through_the_session() {
    let rt = runtime();
    let fake = fake(&rt);
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let settings = settings(dir.path(), &fake);
    rt.block_on(async {
        let providers = settings.providers().unwrap();
        let judge = settings.judge(&providers).await.unwrap().unwrap().judge;
        let openai = Arc::clone(providers.get(ProviderKind::Openai).unwrap());
        let ask = async_fn(move |q: &Question| {
            let openai = Arc::clone(&openai);
            let text = q.0.to_owned();
            async move {
                let request = ModelRequest {
                    model: "gpt-4o-mini".into(),
                    messages: vec![ChatMessage::text(Role::User, text)],
                    ..ModelRequest::default()
                };
                let answer = openai.complete(&request).await?;
                Ok(answer.text)
            }
        });
        let report = run_test_suite(
            "paced",
            vec![Question("one"), Question("two")],
            vec![Arc::new(Judged(judge)) as Arc<dyn Evaluator<Question, String>>],
            ask,
            SuiteOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(report.runs[0].cases.len(), 2);
    });
    // Two model calls and two judge calls.
    assert_paced(&fake, 4);
}

/// The harness as a new user meets it: no `prill.toml`, only `OPENAI_BASE_URL` and
/// `OPENAI_API_KEY`. The Sentinel cases reach the model and the gist check gets the
/// judge the environment offers, and every trial passes.
#[test]
fn the_harness_runs_sentinel_specs_and_gist_with_only_openai_variables() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.respond_with(|body| {
        Some(if body.get("response_format").is_some() {
            Reply::structured(json!({"verdict": "pass", "reason": "it says hello"}))
        } else {
            Reply::text("a fine answer")
        })
    });
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    std::fs::remove_file(dir.path().join("prill.toml")).unwrap();
    // No cache: it would be written under the crate's folder, the harness's project.
    let trials = Harness::new(dir.path())
        .agents(Agents::Demo)
        .env(env(&fake))
        .no_cache()
        .trials()
        .unwrap();
    let args = libtest_mimic::Arguments {
        test_threads: Some(1),
        quiet: true,
        ..libtest_mimic::Arguments::default()
    };
    let conclusion = libtest_mimic::run(&args, trials);
    assert_eq!(
        (conclusion.num_passed, conclusion.num_failed),
        (3, 0),
        "two Sentinel cases and one gist case pass"
    );
    // Two model calls and one judge call, the judge's with a structured verdict.
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests
            .iter()
            .filter(|r| r.json().get("response_format").is_some())
            .count(),
        1
    );
}

/// Named providers: two OpenAI-compatible servers beside OpenAI itself in one run, each
/// reached at its own endpoint with its own key variable (and never OpenAI's key), each
/// selected by a spec's `provider`, and the judge on one of them by `name:model`.
#[test]
fn named_providers_reach_their_own_endpoints_with_their_own_keys() {
    let rt = runtime();
    let openai = fake(&rt);
    let vllm = fake(&rt);
    let studio = fake(&rt);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        format!(
            "[providers.vllm]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"VLLM_KEY\"\nmax_concurrency = 4\n\n[providers.studio]\nkind = \"openai\"\nbase_url = \"{}\"\n\n[judge]\nmodel = \"vllm:mistral-7b\"\ncache = false\n",
            vllm.base_url(),
            studio.base_url()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("suite.yaml"),
        "name: named\ndefaults:\n  inputs: {query: hi}\n  assertions: [{must_contain: a}]\ntests:\n  - {name: on-vllm, model: mistral-7b, provider: vllm}\n  - {name: on-studio, model: qwen2.5:7b, provider: studio}\n  - {name: on-openai, model: gpt-4o-mini, provider: openai}\n",
    )
    .unwrap();
    let env = Env::from_pairs([
        ("OPENAI_BASE_URL", openai.base_url()),
        ("OPENAI_API_KEY", "sk-openai".to_owned()),
        ("VLLM_KEY", "vk-vllm".to_owned()),
    ]);
    let settings = Settings::load_from(dir.path(), None, env, Overrides::default()).unwrap();
    let prepared = prepare_three(&settings, dir.path());
    rt.block_on(async {
        let providers = settings.providers().unwrap();
        assert_eq!(
            format!("{providers:?}"),
            r#"["openai", "anthropic", "ollama", "huggingface", "bedrock", "studio", "vllm"]"#
        );
        let chosen = settings.judge(&providers).await.unwrap().unwrap();
        assert_eq!(
            chosen.announcement,
            "judge: vllm:mistral-7b (from prill.toml, no cache)"
        );
        chosen.judge.judge("says hello", "hello").await.unwrap();
        let session = Session::new(&settings, &prepared.plan).await.unwrap();
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let summary = session.run(&prepared.plan, tx).await;
        assert_eq!(summary.errored, 0, "{summary:?}");
        session.shutdown().await;
    });
    let seen = |fake: &FakeOpenAi| -> Vec<(String, Option<String>)> {
        fake.requests()
            .iter()
            .map(|r| {
                (
                    r.json()["model"].as_str().unwrap().to_owned(),
                    r.header("authorization").map(str::to_owned),
                )
            })
            .collect()
    };
    let bearer = |key: &str| Some(format!("Bearer {key}"));
    assert_eq!(
        seen(&vllm),
        [
            ("mistral-7b".to_owned(), bearer("vk-vllm")),
            ("mistral-7b".to_owned(), bearer("vk-vllm"))
        ],
        "the judge's call, then the case's"
    );
    assert_eq!(seen(&studio), [("qwen2.5:7b".to_owned(), None)]);
    assert_eq!(
        seen(&openai),
        [("gpt-4o-mini".to_owned(), bearer("sk-openai"))]
    );
}
