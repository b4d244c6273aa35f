//! No secret of the run in any file Prill keeps: a cassette written with `--record` and
//! the model response cache (`.prill/cache/models`, which CI caches carry from one
//! pipeline to the next) are blanked as reports are. A key a provider refuses and
//! quotes in part (`sk-proj-****...Zx9Q`), a key it echoes back, and a `${VAR}` value a
//! test put into a prompt are greped for in every file written, against the real
//! OpenAI fake on 127.0.0.1.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use prill_connect::cache::{CacheOptions, ModelCache};
use prill_connect::cassette::{CassetteOptions, Cassettes, Latency, Mode};
use prill_connect::provider::openai::OpenAi;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{Limits, ModelRequest, Provider, ProviderKind, ProviderSettings};
use prill_connect::{ConnectError, HttpOptions, RetryPolicy};
use prill_spec::Env;
use prill_spec::redact::Redactor;
use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;

/// The run's key (`OPENAI_API_KEY`): its first 8 and last 4 characters are what OpenAI
/// quotes of a key it refuses.
const KEY: &str = "sk-proj-Hq7Tw2Lm9Vc4Rb8Nf3Zx9Q";
/// A value a test file reads with `${MY_TOKEN}` and puts into a prompt.
const TOKEN: &str = "tok-distinctive-6a1f0e";
/// Another value of it: a request that differs only there is another request.
const OTHER_TOKEN: &str = "tok-distinctive-93bd2c";

/// The pieces of [`KEY`] and the values no file may hold.
fn fragments() -> Vec<&'static str> {
    vec![KEY, &KEY[..8], &KEY[KEY.len() - 4..], TOKEN, OTHER_TOKEN]
}

/// The run's secrets, as `prill-app` gives them: the key of the environment and the
/// `${VAR}` values of the test files.
fn run_secrets() -> Redactor {
    let env = Env::from_pairs([("MY_TOKEN", TOKEN), ("OTHER_TOKEN", OTHER_TOKEN)]);
    let mut secrets = Redactor::new(&["MY_TOKEN".to_owned(), "OTHER_TOKEN".to_owned()], &env);
    secrets.secret("${OPENAI_API_KEY}", KEY);
    secrets
}

/// Every file under `dir`, read whole, with its path.
fn every_file(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                found.push((path.display().to_string(), text));
            }
        }
    }
    found
}

/// Asserts something was written under `dir` and no file holds a fragment of a secret.
fn nothing_secret_under(dir: &Path) {
    let files = every_file(dir);
    assert!(
        files.iter().any(|(_, text)| text.len() > 20),
        "nothing was written under {}",
        dir.display()
    );
    for (path, text) in &files {
        for fragment in fragments() {
            assert!(
                !text.contains(fragment),
                "{path} holds {fragment:?}: {text}"
            );
        }
    }
}

fn options(cassettes: Option<Cassettes>) -> HttpOptions {
    HttpOptions {
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(10),
        },
        cassettes,
        ..HttpOptions::default()
    }
}

/// The OpenAI provider at `fake`, with `key`, through `options`, with `cache`.
fn openai(
    fake: &FakeOpenAi,
    key: &str,
    options: &HttpOptions,
    cache: Option<ModelCache>,
) -> OpenAi {
    let env: HashMap<String, String> = [
        ("OPENAI_BASE_URL".to_owned(), fake.base_url()),
        ("OPENAI_API_KEY".to_owned(), key.to_owned()),
    ]
    .into();
    let settings = ProviderSettings::resolve(ProviderKind::Openai, &env, None).unwrap();
    let transport = Transport::new(ProviderKind::Openai, options, Limits::none())
        .unwrap()
        .with_cache(cache);
    OpenAi::new(settings, transport)
}

fn ask(text: &str) -> ModelRequest {
    crate::request_at_zero("gpt-4o-mini", None, text)
}

/// What OpenAI answers a key it refuses: the key's first 8 and last 4 characters.
fn refusal() -> Reply {
    Reply::error(
        401,
        format!(
            "Incorrect API key provided: {}****...{}. You can find your API key at https://platform.openai.com/account/api-keys.",
            &KEY[..8],
            &KEY[KEY.len() - 4..]
        ),
    )
}

#[tokio::test]
async fn a_recorded_refusal_keeps_no_part_of_the_key_nor_a_var_value() {
    let fake = FakeOpenAi::start().await;
    fake.expect_key(KEY);
    let dir = tempfile::tempdir().unwrap();
    let mut cassette_options = CassetteOptions::new(dir.path(), Mode::Record);
    cassette_options.latency = Latency::Zero;
    cassette_options.secrets = run_secrets();
    let cassettes = Cassettes::open(cassette_options).unwrap();
    let provider = openai(&fake, KEY, &options(Some(cassettes)), None);
    fake.script(refusal());
    let e = provider
        .complete(&ask(&format!("my token is {TOKEN}")))
        .await
        .unwrap_err();
    assert!(
        matches!(e, ConnectError::Status { status: 401, .. }),
        "{e:?}"
    );
    // A key echoed whole in an answer, and quoted in part inside a longer text.
    fake.script(Reply::text(format!(
        "you sent {TOKEN} with {KEY}, that is {}...{}",
        &KEY[..8],
        &KEY[KEY.len() - 4..]
    )));
    provider.complete(&ask("echo it")).await.unwrap();
    nothing_secret_under(dir.path());
    let all: String = every_file(dir.path()).into_iter().map(|(_, t)| t).collect();
    assert!(
        all.contains("Incorrect API key provided: <redacted>"),
        "{all}"
    );
}

/// A key the run does not know as its own (a library caller's) is still blanked: the
/// request's own headers carried it.
#[tokio::test]
async fn a_key_only_the_request_carried_is_blanked_from_the_cassette_too() {
    let fake = FakeOpenAi::start().await;
    fake.expect_key(KEY);
    let dir = tempfile::tempdir().unwrap();
    let mut cassette_options = CassetteOptions::new(dir.path(), Mode::Record);
    cassette_options.latency = Latency::Zero;
    let cassettes = Cassettes::open(cassette_options).unwrap();
    let provider = openai(&fake, KEY, &options(Some(cassettes)), None);
    fake.script(refusal());
    provider.complete(&ask("hi")).await.unwrap_err();
    let all: String = every_file(dir.path()).into_iter().map(|(_, t)| t).collect();
    assert!(!all.is_empty());
    for fragment in [&KEY[..8], &KEY[KEY.len() - 4..]] {
        assert!(!all.contains(fragment), "{fragment:?} in {all}");
    }
}

#[tokio::test]
async fn the_model_cache_keeps_no_secret_and_still_answers_and_tells_secrets_apart() {
    let fake = FakeOpenAi::start().await;
    fake.expect_key(KEY);
    let dir = tempfile::tempdir().unwrap();
    let cache_dir = dir.path().join(".prill/cache/models");
    let cache = ModelCache::open(CacheOptions {
        secrets: run_secrets(),
        ..CacheOptions::new(&cache_dir)
    });
    let provider = openai(&fake, KEY, &options(None), Some(cache));
    let echo = |token: &str| {
        Reply::text(format!(
            "you sent {token} with {KEY}, that is {}****...{}",
            &KEY[..8],
            &KEY[KEY.len() - 4..]
        ))
    };
    fake.script(echo(TOKEN));
    let live = provider
        .complete(&ask(&format!("repeat {TOKEN}")))
        .await
        .unwrap();
    assert!(!live.cached);
    nothing_secret_under(&cache_dir);
    // The same request is answered from the cache, with nothing sent...
    let cached = provider
        .complete(&ask(&format!("repeat {TOKEN}")))
        .await
        .unwrap();
    assert!(cached.cached, "the entry no longer matches its request");
    assert_eq!(fake.requests().len(), 1);
    assert!(!cached.text.contains(TOKEN) && !cached.text.contains(KEY));
    assert!(cached.text.contains("<redacted>"), "{}", cached.text);
    // ...and one that differs only in a secret is another request, not that answer.
    fake.script(echo(OTHER_TOKEN));
    let other = provider
        .complete(&ask(&format!("repeat {OTHER_TOKEN}")))
        .await
        .unwrap();
    assert!(!other.cached);
    assert_eq!(fake.requests().len(), 2);
    nothing_secret_under(&cache_dir);
}
