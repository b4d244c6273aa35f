//! The judges end to end on 127.0.0.1: a [`ModelJudge`] against `prill-testkit`'s fake
//! OpenAI and Anthropic servers (scripted verdicts, malformed replies, timeouts, votes,
//! the cache), and a [`NeuroSanJudge`] against a tiny scripted neuro-san server.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prill_check::Judge;
use prill_connect::provider::{self, Limits, Provider, ProviderKind, ProviderSettings};
use prill_connect::{HttpOptions, NeuroSanHttp, Url};
use prill_judge::calibrate::{calibrate, parse_labeled};
use prill_judge::sampling::REASONING_MAX_TOKENS;
use prill_judge::{
    Cache, JudgeSampling, ModeInput, ModelJudge, ModelNamer, NeuroSanJudge, PROMPT_VERSION, Votes,
};
use prill_testkit::providers::Reply;
use prill_testkit::providers::anthropic::FakeAnthropic;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const CRITERIA: &str = "Names the band that recorded Yellow Submarine.";
const SAMPLE: &str = "The Beatles recorded Yellow Submarine in 1966.";

fn provider(kind: ProviderKind, vars: &[(&str, String)]) -> Arc<dyn Provider> {
    let env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    let settings = ProviderSettings::resolve(kind, &env, None).unwrap();
    provider::build(kind, settings, &HttpOptions::default(), Limits::none()).unwrap()
}

fn openai(fake: &FakeOpenAi) -> Arc<dyn Provider> {
    provider(
        ProviderKind::Openai,
        &[
            ("OPENAI_BASE_URL", fake.base_url()),
            ("OPENAI_API_KEY", "sk-judge-test-key".to_owned()),
        ],
    )
}

fn verdict(pass: bool, reason: &str) -> Reply {
    Reply::structured(json!({"verdict": if pass { "pass" } else { "fail" }, "reason": reason}))
}

#[tokio::test]
async fn scripted_verdicts_pass_and_fail() {
    let fake = FakeOpenAi::start().await;
    fake.script(verdict(true, "names the Beatles"))
        .script(verdict(false, "names no band"));
    let judge = ModelJudge::new(openai(&fake), "gpt-4o-mini");
    assert_eq!(judge.id(), "openai:gpt-4o-mini");

    let first = judge.judge(CRITERIA, SAMPLE).await.unwrap();
    assert!(first.pass);
    assert_eq!(first.reason, "names the Beatles");
    assert_eq!(first.metadata["judge"], "openai:gpt-4o-mini");
    assert_eq!(first.metadata["prompt_version"], PROMPT_VERSION);
    assert_eq!(first.metadata["cached"], false);
    assert_eq!(
        first.metadata["votes"],
        json!([{"verdict": "pass", "reason": "names the Beatles"}])
    );
    let second = judge.judge(CRITERIA, "I am not sure.").await.unwrap();
    assert!(!second.pass);
    assert_eq!(second.reason, "names no band");

    // The request: our prompt, temperature 0, the verdict schema as a JSON schema format.
    let body = fake.requests()[0].json();
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(body["temperature"], 0.0);
    let text = body.to_string();
    assert!(text.contains("Yellow Submarine"), "{text}");
    let format = &body["response_format"];
    assert_eq!(format["type"], "json_schema", "{format}");
    let schema = &format["json_schema"]["schema"];
    assert_eq!(
        schema["properties"]["verdict"]["enum"],
        json!(["pass", "fail"])
    );
    assert_eq!(schema["required"], json!(["verdict", "reason"]));
    assert_eq!(schema["additionalProperties"], false);
}

#[tokio::test]
async fn a_fenced_text_verdict_is_read() {
    let fake = FakeOpenAi::start().await;
    fake.script(Reply::text(
        "```json\n{\"verdict\": \"fail\", \"reason\": \"wrong band\"}\n```",
    ));
    let judge = ModelJudge::new(openai(&fake), "gpt-4o-mini");
    let v = judge.judge(CRITERIA, "The Rolling Stones").await.unwrap();
    assert!(!v.pass);
    assert_eq!(v.reason, "wrong band");
}

#[tokio::test]
async fn a_malformed_reply_is_asked_again() {
    let fake = FakeOpenAi::start().await;
    fake.script(Reply::text("I think it passes"))
        .script(verdict(true, "names the band"));
    let judge = ModelJudge::new(openai(&fake), "gpt-4o-mini");
    let v = judge.judge(CRITERIA, SAMPLE).await.unwrap();
    assert!(v.pass);
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn three_malformed_replies_are_a_judge_error() {
    let fake = FakeOpenAi::start().await;
    fake.script(Reply::text("pass"))
        .script(Reply::structured(
            json!({"verdict": "maybe", "reason": "?"}),
        ))
        .script(Reply::structured(json!({"verdict": "pass"})))
        .script(verdict(true, "never asked"));
    let judge = ModelJudge::new(openai(&fake), "gpt-4o-mini");
    let e = judge.judge(CRITERIA, SAMPLE).await.unwrap_err();
    assert_eq!(fake.requests().len(), 3);
    assert!(
        e.message
            .starts_with("openai:gpt-4o-mini gave no verdict that could be read after 3 attempts"),
        "{e}"
    );
    assert!(e.message.contains("no `reason`"), "{e}");
}

#[tokio::test]
async fn a_timeout_is_a_judge_error() {
    let fake = FakeOpenAi::start().await;
    fake.script(verdict(true, "too late").delay(Duration::from_secs(5)));
    let judge =
        ModelJudge::new(openai(&fake), "gpt-4o-mini").with_timeout(Duration::from_millis(200));
    let e = judge.judge(CRITERIA, SAMPLE).await.unwrap_err();
    assert!(e.message.starts_with("openai:gpt-4o-mini: "), "{e}");
    assert!(e.message.contains("within 200ms"), "{e}");
}

#[tokio::test]
async fn a_provider_error_is_a_judge_error_without_the_key() {
    let fake = FakeOpenAi::start().await;
    fake.script(Reply::error(400, "model `nope` does not exist"));
    let judge = ModelJudge::new(openai(&fake), "nope");
    let e = judge.judge(CRITERIA, SAMPLE).await.unwrap_err();
    assert!(e.message.contains("does not exist"), "{e}");
    assert!(!e.message.contains("sk-judge-test-key"), "{e}");
    assert!(!format!("{judge:?}").contains("sk-judge-test-key"));
}

#[tokio::test]
async fn votes_take_the_majority_and_keep_every_vote() {
    let fake = FakeOpenAi::start().await;
    fake.script(verdict(true, "first pass"))
        .script(verdict(false, "a fail"))
        .script(verdict(true, "second pass"));
    let judge = ModelJudge::new(openai(&fake), "gpt-4o-mini").with_votes(Votes::new(3).unwrap());
    let v = judge.judge(CRITERIA, SAMPLE).await.unwrap();
    assert!(v.pass);
    assert_eq!(v.reason, "first pass");
    assert_eq!(
        v.metadata["votes"],
        json!([
            {"verdict": "pass", "reason": "first pass"},
            {"verdict": "fail", "reason": "a fail"},
            {"verdict": "pass", "reason": "second pass"},
        ])
    );
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn one_pass_among_three_votes_is_a_fail() {
    let fake = FakeOpenAi::start().await;
    fake.script(verdict(true, "a pass"))
        .script(verdict(false, "first fail"))
        .script(verdict(false, "second fail"));
    let judge = ModelJudge::new(openai(&fake), "gpt-4o-mini").with_votes(Votes::new(3).unwrap());
    let v = judge.judge(CRITERIA, SAMPLE).await.unwrap();
    assert!(!v.pass, "the majority failed it: {v:?}");
    assert_eq!(v.reason, "first fail", "the reason is the majority's first");
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn the_cache_saves_calls_and_no_cache_bypasses_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path().join("judge"));
    let fake = FakeOpenAi::start().await;
    fake.default_reply(verdict(true, "names the band"));
    let cached = ModelJudge::new(openai(&fake), "gpt-4o-mini").with_cache(cache.clone());

    let first = cached.judge(CRITERIA, SAMPLE).await.unwrap();
    assert_eq!(first.metadata["cached"], false);
    assert_eq!(fake.requests().len(), 1);
    let second = cached.judge(CRITERIA, SAMPLE).await.unwrap();
    assert_eq!(fake.requests().len(), 1, "a hit makes no request");
    assert_eq!(second.metadata["cached"], true);
    assert_eq!(second.reason, "names the band");
    assert!(second.pass);

    // Other criteria, another sample, another model: each a miss.
    cached.judge("Names a year.", SAMPLE).await.unwrap();
    assert_eq!(fake.requests().len(), 2);
    cached.judge(CRITERIA, "The Beatles.").await.unwrap();
    assert_eq!(fake.requests().len(), 3);
    let other = ModelJudge::new(openai(&fake), "gpt-4o").with_cache(cache.clone());
    other.judge(CRITERIA, SAMPLE).await.unwrap();
    assert_eq!(fake.requests().len(), 4);

    // Without the cache (`--no-cache`): a call every time, and nothing written.
    let uncached = ModelJudge::new(openai(&fake), "gpt-4o-mini");
    let v = uncached.judge("Mentions 1966.", SAMPLE).await.unwrap();
    assert_eq!(v.metadata["cached"], false);
    assert_eq!(fake.requests().len(), 5);
    uncached.judge(CRITERIA, SAMPLE).await.unwrap();
    assert_eq!(fake.requests().len(), 6);
    let files = std::fs::read_dir(cache.dir()).unwrap().count();
    assert_eq!(files, 4, "one entry per miss of the cached judges");
}

#[tokio::test]
async fn anthropic_answers_through_a_forced_tool() {
    let fake = FakeAnthropic::start().await;
    fake.script(verdict(false, "wrong band"));
    let anthropic = provider(
        ProviderKind::Anthropic,
        &[
            ("ANTHROPIC_BASE_URL", fake.base_url()),
            ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
        ],
    );
    let judge = ModelJudge::new(anthropic, "claude-haiku-4-5");
    let v = judge.judge(CRITERIA, "The Rolling Stones.").await.unwrap();
    assert!(!v.pass);
    assert_eq!(v.reason, "wrong band");
    assert_eq!(v.metadata["judge"], "anthropic:claude-haiku-4-5");
    let body = fake.last_body();
    assert_eq!(
        (body["temperature"].as_f64(), body["max_tokens"].as_u64()),
        (Some(0.0), Some(400))
    );
}

#[tokio::test]
async fn a_claude_judge_that_refuses_temperature_is_sent_none() {
    // The fake answers 400 "`temperature` is deprecated for this model." if one is sent.
    let fake = FakeAnthropic::start().await;
    fake.script(verdict(true, "names the Beatles"));
    let anthropic = provider(
        ProviderKind::Anthropic,
        &[
            ("ANTHROPIC_BASE_URL", fake.base_url()),
            ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
        ],
    );
    let judge = ModelJudge::new(anthropic, "claude-opus-4-7").with_sampling(JudgeSampling {
        temperature: Some(0.3),
        max_tokens: None,
    });
    assert!(
        judge
            .warning()
            .unwrap()
            .contains("anthropic:claude-opus-4-7 does not take a temperature")
    );
    let v = judge.judge(CRITERIA, SAMPLE).await.unwrap();
    assert!(v.pass);
    assert!(fake.last_body().get("temperature").is_none());
}

#[tokio::test]
async fn a_reasoning_judge_gets_no_temperature_and_room_to_reason() {
    let fake = FakeOpenAi::start().await;
    fake.script(verdict(true, "names the Beatles"));
    let judge = ModelJudge::new(openai(&fake), "o3-mini");
    assert_eq!(
        judge.request(CRITERIA, SAMPLE).sampling.max_tokens,
        Some(REASONING_MAX_TOKENS)
    );
    assert!(judge.judge(CRITERIA, SAMPLE).await.unwrap().pass);
    let body = fake.last_body();
    assert!(body.get("temperature").is_none(), "{body}");
    let budget = body
        .get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"));
    assert_eq!(
        budget.and_then(Value::as_u64),
        Some(REASONING_MAX_TOKENS),
        "{body}"
    );
    // `[judge]` overrides the budget and sets a temperature where the model takes one.
    let set = JudgeSampling {
        temperature: Some(0.2),
        max_tokens: Some(800),
    };
    let judge = ModelJudge::new(openai(&fake), "gpt-4o-mini").with_sampling(set);
    let sampling = judge.request(CRITERIA, SAMPLE).sampling;
    assert_eq!(
        (sampling.temperature, sampling.max_tokens),
        (Some(0.2), Some(800))
    );
    assert_eq!(judge.warning(), None);
}

#[tokio::test]
async fn the_mode_namer_samples_as_the_judge_does() {
    let fake = FakeOpenAi::start().await;
    let modes = [ModeInput {
        signature: "contains:Paris".into(),
        example: "no Paris".into(),
        count: 2,
    }];
    let sampling = ModelNamer::new(openai(&fake), "gpt-5-mini")
        .request(&modes)
        .sampling;
    assert_eq!(
        (sampling.temperature, sampling.max_tokens),
        (None, Some(REASONING_MAX_TOKENS))
    );
    let sampling = ModelNamer::new(openai(&fake), "gpt-4o-mini")
        .request(&modes)
        .sampling;
    assert_eq!(
        (sampling.temperature, sampling.max_tokens),
        (Some(0.0), Some(600))
    );
    let set = JudgeSampling {
        temperature: Some(0.5),
        max_tokens: Some(1000),
    };
    let sampling = ModelNamer::new(openai(&fake), "gpt-4o-mini")
        .with_sampling(set)
        .request(&modes)
        .sampling;
    assert_eq!(
        (sampling.temperature, sampling.max_tokens),
        (Some(0.5), Some(1000))
    );
}

#[tokio::test]
async fn an_empty_answer_cut_at_the_token_limit_says_to_raise_max_tokens() {
    let fake = FakeOpenAi::start().await;
    fake.script(Reply::text("").finish_reason("length"));
    let judge = ModelJudge::new(openai(&fake), "o3-mini");
    let e = judge.judge(CRITERIA, SAMPLE).await.unwrap_err().to_string();
    assert!(
        e.contains("o3-mini stopped at its token limit (25000 tokens"),
        "{e}"
    );
    assert!(e.contains("raise `[judge] max_tokens`"), "{e}");
    assert_eq!(fake.requests().len(), 1, "not asked again");
}

#[tokio::test]
async fn calibration_counts_against_the_fake() {
    let fake = FakeOpenAi::start().await;
    fake.script(verdict(true, "a"))
        .script(verdict(true, "b"))
        .script(verdict(false, "c"))
        .script(Reply::error(400, "bad request"));
    let items = parse_labeled(
        "set.yaml",
        "- {sample: s1, criteria: c1, expected: pass, kind: plain}\n\
         - {sample: s2, criteria: c2, expected: fail, kind: negation}\n\
         - {sample: s3, criteria: c3, expected: pass, kind: plain}\n\
         - {sample: s4, criteria: c4, expected: fail, kind: plain}\n",
    )
    .unwrap();
    // One at a time, so the scripted replies meet the items in order.
    let judge = ModelJudge::new(openai(&fake), "gpt-4o-mini");
    let mut results = Vec::new();
    for item in &items {
        results.push(calibrate(&judge, std::slice::from_ref(item)).await);
    }
    let agreed: usize = results.iter().map(|r| r.agreed).sum();
    let false_pass: usize = results.iter().map(|r| r.false_pass).sum();
    let false_fail: usize = results.iter().map(|r| r.false_fail).sum();
    let errors: usize = results.iter().map(|r| r.errors).sum();
    assert_eq!((agreed, false_pass, false_fail, errors), (1, 1, 1, 1));
}

/// A neuro-san server on 127.0.0.1 that answers each streaming chat with the next
/// scripted text, as one JSON line, and records the request bodies.
struct FakeNeuroSan {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl FakeNeuroSan {
    async fn start(texts: &[&str]) -> FakeNeuroSan {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let queue: Arc<Mutex<VecDeque<String>>> =
            Arc::new(Mutex::new(texts.iter().map(|t| (*t).to_owned()).collect()));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&bodies);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let queue = Arc::clone(&queue);
                let recorded = Arc::clone(&recorded);
                tokio::spawn(async move {
                    let (path, body) = read_request(&mut socket).await;
                    let text = queue.lock().unwrap().pop_front().unwrap_or_default();
                    recorded
                        .lock()
                        .unwrap()
                        .push(json!({"path": path, "body": body}));
                    let line = json!({"response": {"type": "AGENT_FRAMEWORK", "text": text,
                                                   "chat_context": {"chat_histories": []}}});
                    let line = format!("{line}\n");
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json-lines\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        line.len()
                    );
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(line.as_bytes()).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        FakeNeuroSan { addr, bodies }
    }

    fn requests(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

/// The path and JSON body of one http/1.1 request.
async fn read_request(socket: &mut tokio::net::TcpStream) -> (String, Value) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let header_end = loop {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return (String::new(), Value::Null);
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..header_end]).into_owned();
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while data.len() < header_end + length {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
    }
    let path = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_default()
        .to_owned();
    let body = serde_json::from_slice(&data[header_end..]).unwrap_or(Value::Null);
    (path, body)
}

fn neuro_san_judge(fake: &FakeNeuroSan) -> NeuroSanJudge {
    let base = Url::parse(&format!("http://{}", fake.addr)).unwrap();
    NeuroSanJudge::new(
        NeuroSanHttp::new(base, &HttpOptions::default()).unwrap(),
        "gist",
    )
}

#[tokio::test]
async fn neuro_san_judge_reads_whole_words() {
    let fake = FakeNeuroSan::start(&[
        "pass",
        "bypass",
        "compass",
        "failure",
        "FAIL: it names no band",
    ])
    .await;
    let judge = neuro_san_judge(&fake);
    assert_eq!(judge.id(), "neuro-san:gist");

    let v = judge.judge(CRITERIA, SAMPLE).await.unwrap();
    assert!(v.pass);
    assert_eq!(v.reason, "pass");
    assert_eq!(v.metadata["judge"], "neuro-san:gist");

    // `bypass`, `compass` and `failure` hold no verdict: asked three times, then an error.
    let e = judge.judge(CRITERIA, "I'm not sure.").await.unwrap_err();
    assert!(
        e.message
            .starts_with("neuro-san:gist gave no verdict that could be read after 3 attempts"),
        "{e}"
    );

    let requests = fake.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0]["path"], "/api/v1/gist/streaming_chat");
    let sent = requests[0]["body"]["user_message"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(sent.contains(CRITERIA) && sent.contains(SAMPLE), "{sent}");

    let v = judge.judge(CRITERIA, "Nobody knows.").await.unwrap();
    assert!(!v.pass);
    assert_eq!(v.reason, "FAIL: it names no band");
}

#[tokio::test]
async fn neuro_san_judge_unreachable_is_an_error() {
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let base = Url::parse(&format!("http://{addr}")).unwrap();
    let options = HttpOptions {
        retry: prill_connect::RetryPolicy {
            max_attempts: 1,
            ..prill_connect::RetryPolicy::default()
        },
        ..HttpOptions::default()
    };
    let judge = NeuroSanJudge::new(NeuroSanHttp::new(base, &options).unwrap(), "gist");
    let e = judge.judge(CRITERIA, SAMPLE).await.unwrap_err();
    assert!(e.message.starts_with("neuro-san:gist: "), "{e}");
}
