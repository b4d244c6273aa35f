//! Record and replay through the http seam: each connector and provider records a real
//! exchange with its testkit server, then replays it with its url pointing at a
//! loopback port where nothing listens, and answers the same (timings aside). Also the
//! sample scopes, the no-match error, `--replay-or-record`, the refusal of `--record`
//! into a full folder, the pacing of a replay, broken streams, binary bodies, and
//! secrets kept out of the cassette files.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use prill_connect::cassette::{CassetteError, CassetteOptions, Cassettes, Latency, Mode};
use prill_connect::langgraph::{ApiKey, LanggraphServer};
use prill_connect::provider::anthropic::Anthropic;
use prill_connect::provider::bedrock::Bedrock;
use prill_connect::provider::huggingface::HuggingFace;
use prill_connect::provider::ollama::Ollama;
use prill_connect::provider::openai::OpenAi;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, ModelResponse, Provider, ProviderKind, ProviderSettings,
};
use prill_connect::{
    AgentRequest, AgentResponse, ConnectError, Connector, ErrorKind, HttpOptions, NeuroSanHttp,
    NeuroSanMcp, RetryPolicy, Timings, TlsOptions, Url,
};
use prill_spec::model::data_driven::ChatFilter;
use prill_target::graph::{GraphRequest, GraphRun, GraphServer};
use prill_target::scope::{SampleScope, in_sample};
use prill_testkit::langgraph::{Call, FakeLanggraph, GraphScript};
use prill_testkit::providers::Reply as Said;
use prill_testkit::providers::anthropic::FakeAnthropic;
use prill_testkit::providers::bedrock::FakeBedrock;
use prill_testkit::providers::ollama::FakeOllama;
use prill_testkit::providers::openai::FakeOpenAi;
use prill_testkit::providers::tgi::FakeTgi;
use prill_testkit::start_demo;
use serde_json::{Value, json};

use crate::server::{Reply, Server};

/// A key no cassette may hold.
const KEY: &str = "sk-cassette-key-7f3e9a1b2c";
/// A metadata value marked secret, which no cassette may hold either.
const SECRET_METADATA: &str = "ns-secret-metadata-5d8c2e";

/// The cassettes of `dir` in `mode`, replayed at once.
fn cassettes(dir: &Path, mode: Mode) -> Cassettes {
    paced(dir, mode, Latency::Zero)
}

fn paced(dir: &Path, mode: Mode, latency: Latency) -> Cassettes {
    let mut options = CassetteOptions::new(dir, mode);
    options.latency = latency;
    options.secrets.secret("${KEY}", KEY);
    options
        .secrets
        .secret("${SECRET_METADATA}", SECRET_METADATA);
    Cassettes::open(options).unwrap()
}

/// Quick retries, through `cassettes`.
fn options(cassettes: &Cassettes) -> HttpOptions {
    HttpOptions {
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
        },
        cassettes: Some(cassettes.clone()),
        ..HttpOptions::default()
    }
}

/// A loopback url where nothing listens.
async fn dead(scheme: &str) -> Url {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    Url::parse(&format!("{scheme}://127.0.0.1:{port}")).unwrap()
}

/// `base` moved to a loopback port where nothing listens, its path kept.
async fn moved(base: &str) -> String {
    let mut url = Url::parse(base).unwrap();
    url.set_port(dead("http").await.port()).unwrap();
    url.to_string()
}

/// Every cassette file of `dir`, together.
fn files(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    all
}

/// Asserts the cassettes of `dir` hold something and none of the secrets.
fn no_secrets(dir: &Path) {
    let all = files(dir);
    assert!(!all.is_empty(), "nothing was recorded");
    for secret in [KEY, SECRET_METADATA] {
        assert!(!all.contains(secret), "{secret} in the cassettes: {all}");
    }
}

fn agent(mut response: AgentResponse) -> AgentResponse {
    response.timings = Timings::default();
    response
}

fn model(mut response: ModelResponse) -> ModelResponse {
    response.timings = Timings::default();
    response
}

fn multiply() -> AgentRequest {
    let mut request = AgentRequest::new("multiply").with_metadata("authorization", SECRET_METADATA);
    request.sly_data = json!({"x": 847, "y": 23}).as_object().cloned();
    request
}

/// A two-turn music_nerd_pro conversation under `MAXIMAL` (usage, trajectory), then a
/// multiplication, each answer with its timings blanked.
async fn neuro_san_session(connector: &dyn Connector) -> Vec<AgentResponse> {
    let mut answers = Vec::new();
    let mut conversation = connector.open("music_nerd_pro").await.unwrap();
    let mut first = AgentRequest::new("Who did Yellow Submarine?")
        .with_metadata("authorization", SECRET_METADATA);
    first.chat_filter = ChatFilter::Maximal;
    let first = conversation.send(&first).await.unwrap();
    let mut second =
        AgentRequest::new("Where are they from?").with_chat_context(first.chat_context.clone());
    second.chat_filter = ChatFilter::Maximal;
    answers.push(agent(first));
    answers.push(agent(conversation.send(&second).await.unwrap()));
    let mut math = connector.open("math_guy").await.unwrap();
    answers.push(agent(math.send(&multiply()).await.unwrap()));
    answers
}

#[tokio::test]
async fn neuro_san_http_and_mcp_replay_with_nothing_listening() {
    let demo = start_demo().await;
    let base = Url::parse(&demo.http_url()).unwrap();
    let nowhere = dead("http").await;
    type Make = fn(Url, &HttpOptions) -> Result<Box<dyn Connector>, ConnectError>;
    let kinds: [(&str, Make); 2] = [
        ("http", |u, o| {
            Ok(Box::new(NeuroSanHttp::new(u, o)?) as Box<dyn Connector>)
        }),
        ("mcp", |u, o| {
            Ok(Box::new(NeuroSanMcp::new(u, o)?) as Box<dyn Connector>)
        }),
    ];
    for (kind, make) in kinds {
        let dir = tempfile::tempdir().unwrap();
        let recording = cassettes(dir.path(), Mode::Record);
        let live = make(base.clone(), &options(&recording)).unwrap();
        let recorded = neuro_san_session(live.as_ref()).await;
        assert_eq!(recorded[2].sly_data, Some(json!({"equals": 19481.0})));
        assert!(files(dir.path()).contains(&format!("\"connector\":\"{kind}\"")));
        let replaying = cassettes(dir.path(), Mode::Replay);
        let offline = make(nowhere.clone(), &options(&replaying)).unwrap();
        let replayed = neuro_san_session(offline.as_ref()).await;
        assert_eq!(replayed, recorded, "{kind}");
        no_secrets(dir.path());
        assert_eq!(recording.failure(), None);
    }
}

#[tokio::test]
async fn https_replays_without_a_handshake() {
    let demo = start_demo().await;
    let dir = tempfile::tempdir().unwrap();
    let recording = cassettes(dir.path(), Mode::Record);
    let trusted = HttpOptions {
        tls: TlsOptions::default().with_ca_pem(demo.cert_pem()),
        ..options(&recording)
    };
    let base = Url::parse(&demo.http_url()).unwrap();
    let live = NeuroSanHttp::https(&base, &trusted).unwrap();
    assert_eq!(live.base().scheme(), "https");
    let recorded = neuro_san_session(&live).await;
    assert!(files(dir.path()).contains("\"connector\":\"https\""));
    // No CA this time: a handshake would fail, and nothing listens anyway.
    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = NeuroSanHttp::new(dead("https").await, &options(&replaying)).unwrap();
    assert_eq!(neuro_san_session(&offline).await, recorded);
    no_secrets(dir.path());
}

fn json_reply(headers: Vec<(&'static str, String)>, body: Value) -> Reply {
    let mut headers = headers;
    headers.push(("Content-Type", "application/json".into()));
    Reply::Status(200, headers, body.to_string().into_bytes())
}

#[tokio::test]
async fn mcp_replays_the_session_and_answers_the_id_sent() {
    // A server that gives a session, wants it back, answers ids as strings and tool
    // calls as event streams.
    let server = Server::start(|_, request| {
        let body = request.json();
        let id = Value::String(body["id"].to_string());
        match body["method"].as_str() {
            Some("initialize") => json_reply(
                vec![("Mcp-Session-Id", "session-7".into())],
                json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-06-18"}}),
            ),
            Some("notifications/initialized") => Reply::Status(202, vec![], vec![]),
            _ if request.header("mcp-session-id") != Some("session-7") => {
                Reply::Status(400, vec![], b"no session".to_vec())
            }
            _ => {
                let text = body["params"]["arguments"]["user_message"]["text"].clone();
                let message = json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": format!("you said {}", text.as_str().unwrap())}],
                    "structuredContent": {"chat_context": {"turn": text}}}});
                Reply::Status(
                    200,
                    vec![("Content-Type", "text/event-stream".into())],
                    format!("event: message\ndata: {message}\n\n").into_bytes(),
                )
            }
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let recording = cassettes(dir.path(), Mode::Record);
    let live = NeuroSanMcp::new(server.base.clone(), &options(&recording)).unwrap();
    let mut conversation = live.open("echo").await.unwrap();
    let first = conversation.send(&AgentRequest::new("one")).await.unwrap();
    let second_request = AgentRequest::new("two").with_chat_context(first.chat_context.clone());
    let second = conversation.send(&second_request).await.unwrap();
    assert_eq!(second.text.as_deref(), Some("you said two"));
    assert!(files(dir.path()).contains("session-7"));

    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = NeuroSanMcp::new(dead("http").await, &options(&replaying)).unwrap();
    // The second turn first, in a new session: its tools/call goes out as request 2,
    // recorded as request 3.
    let mut conversation = offline.open("echo").await.unwrap();
    let replayed = conversation.send(&second_request).await.unwrap();
    assert_eq!(agent(replayed), agent(second));
}

fn ask(model: &str, text: &str) -> ModelRequest {
    crate::request_at_zero(model, Some("Be brief."), text)
}

fn settings(kind: ProviderKind, vars: &[(&str, String)]) -> ProviderSettings {
    let mut env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    env.insert("AWS_EC2_METADATA_DISABLED".into(), "true".into());
    ProviderSettings::resolve(kind, &env, None).unwrap()
}

fn transport(kind: ProviderKind, cassettes: &Cassettes) -> Transport {
    Transport::new(kind, &options(cassettes), Limits::none()).unwrap()
}

/// The provider of `kind` at `base`, keyed with [`KEY`].
fn provider(kind: ProviderKind, base: &str, cassettes: &Cassettes) -> Box<dyn Provider> {
    let t = transport(kind, cassettes);
    let base = base.to_owned();
    match kind {
        ProviderKind::Openai => Box::new(OpenAi::new(
            settings(
                kind,
                &[("OPENAI_BASE_URL", base), ("OPENAI_API_KEY", KEY.into())],
            ),
            t,
        )),
        ProviderKind::Anthropic => Box::new(Anthropic::new(
            settings(
                kind,
                &[
                    ("ANTHROPIC_BASE_URL", base),
                    ("ANTHROPIC_API_KEY", KEY.into()),
                ],
            ),
            t,
        )),
        ProviderKind::Ollama => Box::new(Ollama::new(settings(kind, &[("OLLAMA_HOST", base)]), t)),
        ProviderKind::Huggingface => Box::new(HuggingFace::new(
            settings(kind, &[("HF_BASE_URL", base), ("HF_TOKEN", KEY.into())]),
            t,
        )),
        ProviderKind::Bedrock => Box::new(Bedrock::new(
            settings(
                kind,
                &[
                    ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", base),
                    ("AWS_ACCESS_KEY_ID", "AKIACASSETTE1234567".into()),
                    ("AWS_SECRET_ACCESS_KEY", KEY.into()),
                    ("AWS_REGION", "eu-west-3".into()),
                ],
            ),
            t,
        )),
    }
}

/// Records `requests` to the provider of `kind` at `base`, replays them with nothing
/// listening, and asserts the answers are the same and the cassettes hold no key.
async fn round_trip(kind: ProviderKind, base: &str, requests: &[ModelRequest]) {
    let nowhere = moved(base).await;
    let dir = tempfile::tempdir().unwrap();
    let recording = cassettes(dir.path(), Mode::Record);
    let live = provider(kind, base, &recording);
    let mut recorded = Vec::new();
    for request in requests {
        recorded.push(model(live.complete(request).await.unwrap()));
    }
    assert!(
        files(dir.path()).contains(&format!("\"connector\":\"{}\"", kind.name())),
        "{kind}"
    );
    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = provider(kind, &nowhere, &replaying);
    for (request, recorded) in requests.iter().zip(&recorded) {
        let replayed = model(offline.complete(request).await.unwrap());
        assert_eq!(&replayed, recorded, "{kind}");
    }
    no_secrets(dir.path());
}

#[tokio::test]
async fn every_provider_replays_with_nothing_listening() {
    let openai = FakeOpenAi::start().await;
    openai.expect_key(KEY);
    openai.script(Said::text("Paris is the capital.").usage(9, 5));
    openai.script(Said::text("Rome.").usage(7, 2).whole());
    let whole = ask("gpt-4o-mini", "And Italy?");
    let stream = ask("gpt-4o-mini", "Capital of France?");
    round_trip(ProviderKind::Openai, &openai.base_url(), &[stream, whole]).await;

    let anthropic = FakeAnthropic::start().await;
    anthropic.expect_key(KEY);
    anthropic.script(Said::text("Bonjour.").usage(4, 3));
    let hello = ask("claude-3-5-haiku-latest", "Say hello in French.");
    round_trip(ProviderKind::Anthropic, &anthropic.base_url(), &[hello]).await;

    let ollama = FakeOllama::start().await;
    ollama.models(&["llama3.1:8b"]);
    ollama.script(Said::text("Blue, mostly.").usage(6, 3));
    let sky = ask("llama3.1:8b", "Colour of the sky?");
    round_trip(ProviderKind::Ollama, &ollama.base_url(), &[sky]).await;

    let tgi = FakeTgi::start().await;
    tgi.expect_key(KEY);
    tgi.script(Said::text("sunny").usage(20, 2));
    let weather = ask("meta-llama/Llama-3.1-8B-Instruct", "weather?");
    round_trip(ProviderKind::Huggingface, &tgi.base_url(), &[weather]).await;

    let bedrock = FakeBedrock::start().await;
    bedrock.expect_sigv4("AKIACASSETTE1234567", KEY, "eu-west-3");
    bedrock.script(Said::text("Hola.").usage(5, 2));
    let hola = ask("meta.llama3-1-8b-instruct-v1:0", "Hello in Spanish?");
    round_trip(ProviderKind::Bedrock, &bedrock.base_url(), &[hola]).await;
}

#[tokio::test]
async fn ollama_s_probe_goes_through_the_cassettes() {
    let fake = FakeOllama::start().await;
    fake.models(&["llama3.1:8b"]);
    let dir = tempfile::tempdir().unwrap();
    let recording = cassettes(dir.path(), Mode::Record);
    let live = provider(ProviderKind::Ollama, &fake.base_url(), &recording);
    assert!(live.reachable(Duration::from_secs(10)).await);
    assert!(files(dir.path()).contains("GET /api/tags"));
    let replaying = cassettes(dir.path(), Mode::Replay);
    let nowhere = dead("http").await;
    let offline = provider(ProviderKind::Ollama, nowhere.as_str(), &replaying);
    assert!(offline.reachable(Duration::from_secs(10)).await);
    let live_nowhere = provider(
        ProviderKind::Ollama,
        nowhere.as_str(),
        &cassettes(tempfile::tempdir().unwrap().path(), Mode::Record),
    );
    assert!(!live_nowhere.reachable(Duration::from_secs(10)).await);
}

fn graph_request() -> GraphRequest {
    GraphRequest {
        assistant_id: "agent".into(),
        system: Some("Be brief.".into()),
        messages: vec![ChatMessage::user("Find me a laptop")],
        configurable: json!({"model": "gpt-4o"}).as_object().cloned(),
        recursion_limit: Some(7),
        timeout: Some(Duration::from_secs(20)),
    }
}

fn graph_run(mut run: GraphRun) -> GraphRun {
    run.timings = Timings::default();
    run
}

#[tokio::test]
async fn a_langgraph_run_replays_with_nothing_listening() {
    let fake = FakeLanggraph::start().await;
    fake.expect_key(KEY).script(
        GraphScript::default()
            .call(vec![Call::new(
                "search",
                json!({"query": "laptop"}),
                json!({"hits": 3}),
            )])
            .answer("The X1 costs 999."),
    );
    let dir = tempfile::tempdir().unwrap();
    let recording = cassettes(dir.path(), Mode::Record);
    let key = || Some(ApiKey::new("LANGGRAPH_API_KEY", KEY));
    let url = Url::parse(&fake.url()).unwrap();
    let live = LanggraphServer::new(url, key(), "LANGGRAPH_API_KEY", &options(&recording)).unwrap();
    let recorded = graph_run(live.run(&graph_request()).await.unwrap());
    assert!(recorded.failure.is_none());
    assert!(files(dir.path()).contains("\"connector\":\"langgraph\""));
    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = LanggraphServer::new(
        dead("http").await,
        key(),
        "LANGGRAPH_API_KEY",
        &options(&replaying),
    )
    .unwrap();
    let replayed = graph_run(offline.run(&graph_request()).await.unwrap());
    assert_eq!(replayed, recorded);
    no_secrets(dir.path());
}

/// An OpenAI fake that answers the n-th request (from 1) with `answer n`.
async fn counting_openai() -> FakeOpenAi {
    let fake = FakeOpenAi::start().await;
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    fake.respond_with(move |_| {
        let n = served.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        Some(Said::text(format!("answer {n}")))
    });
    fake
}

#[tokio::test]
async fn each_sample_replays_its_own_recording() {
    let fake = counting_openai().await;
    let dir = tempfile::tempdir().unwrap();
    let scope = |sample| SampleScope::new("c0ffee42", "capital of France", sample);
    let question = ask("gpt-4o-mini", "Capital of France?");
    let recording = cassettes(dir.path(), Mode::Record);
    let live = provider(ProviderKind::Openai, &fake.base_url(), &recording);
    for sample in 0..2 {
        let answer = in_sample(scope(sample), live.complete(&question)).await;
        assert_eq!(answer.unwrap().text, format!("answer {}", sample + 1));
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["capital-of-france-c0ffee42.jsonl"]);
    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = provider(
        ProviderKind::Openai,
        &moved(&fake.base_url()).await,
        &replaying,
    );
    for sample in [1, 0] {
        let answer = in_sample(scope(sample), offline.complete(&question)).await;
        assert_eq!(answer.unwrap().text, format!("answer {}", sample + 1));
    }
    // A third sample was never recorded.
    let e = in_sample(scope(2), offline.complete(&question))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoCassette, "{e}");
    assert!(e.to_string().contains("sample: recorded"), "{e}");
}

/// Each exchange keeps what its case was made of, and a replay under other parts (its
/// checks aside) names the case as stale, with what changed.
#[tokio::test]
async fn a_replay_recorded_under_other_parts_names_its_case_as_stale() {
    use prill_spec::plan::under::{Under, describe};
    use std::sync::Arc;
    let fake = counting_openai().await;
    let dir = tempfile::tempdir().unwrap();
    let made_of =
        |parts: &[(&'static str, &'static str)]| Arc::new(Under::from_parts(parts.iter().copied()));
    let then = made_of(&[("inputs", "aaaaaaaaaaaa"), ("checks", "cccccccccccc")]);
    let scope = |under: &Arc<Under>| {
        SampleScope::new("c0ffee42", "capital of France", 0).under(Arc::clone(under))
    };
    let question = ask("gpt-4o-mini", "Capital of France?");
    let recording = cassettes(dir.path(), Mode::Record);
    let live = provider(ProviderKind::Openai, &fake.base_url(), &recording);
    in_sample(scope(&then), live.complete(&question))
        .await
        .unwrap();
    let file = dir.path().join("capital-of-france-c0ffee42.jsonl");
    let line: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&file).unwrap().trim()).unwrap();
    assert_eq!(line["under"]["inputs"], "aaaaaaaaaaaa", "{line}");

    let replay_under = |under: Arc<Under>| {
        let fake_url = fake.base_url();
        let dir = dir.path().to_owned();
        let question = question.clone();
        async move {
            let replaying = cassettes(&dir, Mode::Replay);
            let offline = provider(ProviderKind::Openai, &moved(&fake_url).await, &replaying);
            let scope = SampleScope::new("c0ffee42", "capital of France", 0).under(under);
            in_sample(scope, offline.complete(&question)).await.unwrap();
            replaying.stale()
        }
    };
    // As recorded, and with only its checks changed: not stale.
    assert!(replay_under(Arc::clone(&then)).await.is_empty());
    let rechecked = made_of(&[("inputs", "aaaaaaaaaaaa"), ("checks", "dddddddddddd")]);
    assert!(replay_under(rechecked).await.is_empty());
    // Its tool program is new since: stale, by name.
    let programmed = made_of(&[
        ("inputs", "aaaaaaaaaaaa"),
        ("checks", "cccccccccccc"),
        ("program", "pppppppppppp"),
    ]);
    let stale = replay_under(programmed).await;
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert_eq!(stale[0].0, "capital of France");
    assert_eq!(describe(&stale[0].1), "program added");
}

#[tokio::test]
async fn a_request_never_recorded_names_the_closest_and_the_field_that_differs() {
    let fake = counting_openai().await;
    let dir = tempfile::tempdir().unwrap();
    let recording = cassettes(dir.path(), Mode::Record);
    let live = provider(ProviderKind::Openai, &fake.base_url(), &recording);
    live.complete(&ask("gpt-4o-mini", "Capital of France?"))
        .await
        .unwrap();
    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = provider(
        ProviderKind::Openai,
        &moved(&fake.base_url()).await,
        &replaying,
    );
    let e = offline
        .complete(&ask("gpt-4o-mini", "Capital of Spain?"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoCassette, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("openai POST /chat/completions")
            || text.contains("openai POST /v1/chat/completions"),
        "{text}"
    );
    assert!(
        text.contains(
            r#"body.messages[1].content: recorded "Capital of France?", sent "Capital of Spain?""#
        ),
        "{text}"
    );
}

#[tokio::test]
async fn replay_or_record_sends_only_what_is_missing_and_appends_it() {
    let fake = counting_openai().await;
    let dir = tempfile::tempdir().unwrap();
    let france = ask("gpt-4o-mini", "Capital of France?");
    let spain = ask("gpt-4o-mini", "Capital of Spain?");
    let recording = cassettes(dir.path(), Mode::Record);
    let live = provider(ProviderKind::Openai, &fake.base_url(), &recording);
    assert_eq!(live.complete(&france).await.unwrap().text, "answer 1");
    let filling = cassettes(dir.path(), Mode::ReplayOrRecord);
    let both = provider(ProviderKind::Openai, &fake.base_url(), &filling);
    assert_eq!(both.complete(&france).await.unwrap().text, "answer 1");
    assert_eq!(both.complete(&spain).await.unwrap().text, "answer 2");
    assert_eq!(
        fake.requests().len(),
        2,
        "the recorded one was not sent again"
    );
    assert_eq!(files(dir.path()).lines().count(), 2);
    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = provider(
        ProviderKind::Openai,
        &moved(&fake.base_url()).await,
        &replaying,
    );
    assert_eq!(offline.complete(&spain).await.unwrap().text, "answer 2");
    assert_eq!(offline.complete(&france).await.unwrap().text, "answer 1");
    // --record refuses a folder that holds cassettes.
    let full = Cassettes::open(CassetteOptions::new(dir.path(), Mode::Record)).unwrap_err();
    assert!(matches!(full, CassetteError::NotEmpty { .. }), "{full}");
}

#[tokio::test]
async fn a_recorded_replay_is_no_faster_than_the_recording() {
    let fake = FakeOpenAi::start().await;
    fake.script(Said::text("Paris").delay(Duration::from_millis(300)));
    let dir = tempfile::tempdir().unwrap();
    let question = ask("gpt-4o-mini", "Capital of France?");
    let recording = cassettes(dir.path(), Mode::Record);
    provider(ProviderKind::Openai, &fake.base_url(), &recording)
        .complete(&question)
        .await
        .unwrap();
    let exchange: Value = serde_json::from_str(files(dir.path()).lines().next().unwrap()).unwrap();
    let first_at = exchange["response"]["chunks"][0]["at_ms"].as_u64().unwrap();
    assert!(first_at >= 300, "{exchange}");
    let replaying = paced(dir.path(), Mode::Replay, Latency::Recorded);
    let offline = provider(
        ProviderKind::Openai,
        &moved(&fake.base_url()).await,
        &replaying,
    );
    let replayed = offline.complete(&question).await.unwrap();
    let first_byte = replayed.timings.first_byte.unwrap();
    assert!(
        first_byte >= Duration::from_millis(first_at),
        "{first_byte:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_zero_latency_replay_waits_for_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let question = ask("gpt-4o-mini", "Capital of France?");
    let base = {
        // Recorded on the real clock, a second before the first byte.
        let fake = FakeOpenAi::start().await;
        fake.script(Said::text("Paris").delay(Duration::from_secs(1)));
        let recording = cassettes(dir.path(), Mode::Record);
        tokio::time::resume();
        provider(ProviderKind::Openai, &fake.base_url(), &recording)
            .complete(&question)
            .await
            .unwrap();
        tokio::time::pause();
        fake.base_url()
    };
    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = provider(ProviderKind::Openai, &moved(&base).await, &replaying);
    // The clock is paused and only moves when something waits on it: it does not move.
    let before = tokio::time::Instant::now();
    assert_eq!(offline.complete(&question).await.unwrap().text, "Paris");
    assert_eq!(tokio::time::Instant::now(), before);
}

#[tokio::test]
async fn a_stream_that_broke_off_replays_as_the_same_error() {
    let server = Server::start(|_, _| {
        Reply::Cut(vec![
            b"{\"response\": {\"type\": \"AI\", \"text\": \"half\"}}\n".to_vec(),
        ])
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let recording = cassettes(dir.path(), Mode::Record);
    let live = NeuroSanHttp::new(server.base.clone(), &options(&recording)).unwrap();
    let live_error = live.chat("cut", &multiply()).await.unwrap_err();
    assert_eq!(live_error.kind(), ErrorKind::Protocol, "{live_error}");
    assert!(
        files(dir.path()).contains("\"broke_off\""),
        "{}",
        files(dir.path())
    );
    let replaying = cassettes(dir.path(), Mode::Replay);
    let offline = NeuroSanHttp::new(dead("http").await, &options(&replaying)).unwrap();
    let replayed_error = offline.chat("cut", &multiply()).await.unwrap_err();
    assert_eq!(replayed_error.kind(), live_error.kind(), "{replayed_error}");
    assert!(
        replayed_error.to_string().contains("broke off"),
        "{replayed_error}"
    );
}

#[tokio::test]
async fn a_binary_body_round_trips_as_base64() {
    // Bedrock's event-stream framing: a prelude that is not UTF-8.
    let frame: Vec<u8> = vec![0, 0, 0, 0x2f, 0, 0, 0, 0x10, 0xc3, 0x28, 0xff, b'x'];
    let body = frame.clone();
    let server = Server::start(move |_, _| {
        Reply::Status(
            200,
            vec![("Content-Type", "application/vnd.amazon.eventstream".into())],
            body.clone(),
        )
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let recording = cassettes(dir.path(), Mode::Record);
    let hola = ask("meta.llama3-1-8b-instruct-v1:0", "Hello in Spanish?");
    let live = provider(ProviderKind::Bedrock, server.base.as_str(), &recording);
    let live_error = live.complete(&hola).await.unwrap_err();
    let all = files(dir.path());
    assert!(all.contains("\"base64\""), "{all}");
    let replaying = cassettes(dir.path(), Mode::Replay);
    let nowhere = dead("http").await;
    let offline = provider(ProviderKind::Bedrock, nowhere.as_str(), &replaying);
    let replayed_error = offline.complete(&hola).await.unwrap_err();
    // The same error, the server's address aside.
    let without = |e: &ConnectError, url: &Url| {
        e.to_string()
            .replace(&format!("{}", url.port().unwrap()), "PORT")
    };
    assert_eq!(replayed_error.kind(), live_error.kind());
    assert_eq!(
        without(&replayed_error, &nowhere),
        without(&live_error, &server.base)
    );
    no_secrets(dir.path());
}
