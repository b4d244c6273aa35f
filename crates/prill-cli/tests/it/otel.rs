//! `prill run --otlp URL` (and `[otel]` in `prill.toml`): the run exported as
//! OpenTelemetry spans to an OTLP/HTTP receiver on 127.0.0.1 that decodes them with the
//! official OTLP messages, and, with `PRILL_PHOENIX` set (CI sets it), to a real Arize
//! Phoenix, read back through its REST API.

use std::path::Path;

use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prill_testkit::otlp::FakeOtlp;

use crate::support::{prill_isolated, runtime, text};

/// One case against the demo's `music_nerd_pro`: a check that passes and one that fails.
const CASE: &str = r#"{
  agent = music_nerd_pro
  connections = [direct]
  interactions = [
    {
      text = "Who did Yellow Submarine?"
      response { text { keywords = ["Beatles"], not_keywords = ["Beatles"] } }
    }
  ]
}
"#;

fn write_case(dir: &Path) {
    std::fs::write(dir.join("band.hocon"), CASE).unwrap();
}

fn attr<'a>(
    span_attrs: &'a [opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<&'a Any> {
    span_attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

#[test]
fn a_run_is_exported_as_spans_with_an_evaluation_event_per_check() {
    let rt = runtime();
    let fake = rt.block_on(FakeOtlp::start());
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path());
    std::fs::write(
        dir.path().join("prill.toml"),
        "[otel]\nservice_name = \"ci-suite\"\n[otel.headers]\nx-project-name = \"prill-e2e\"\n",
    )
    .unwrap();
    let out = prill_isolated(
        dir.path(),
        &[
            "run",
            "--demo",
            "band.hocon",
            "--otlp",
            &fake.url(),
            "--otlp-content",
        ],
        &[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20sk-otlp-123".to_owned(),
        )],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "one check fails: {stderr}");
    assert!(stderr.contains("spans: trace "), "{stderr}");
    assert!(!stderr.contains("sk-otlp-123"), "{stderr}");
    let requests = fake.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer sk-otlp-123"))
    );
    assert!(
        requests
            .iter()
            .all(|r| r.header("x-project-name") == Some("prill-e2e"))
    );
    let batches = fake.batches();
    let resource = batches[0].resource_spans[0].resource.as_ref().unwrap();
    assert_eq!(
        attr(&resource.attributes, "service.name"),
        Some(&Any::StringValue("ci-suite".into()))
    );
    let spans: Vec<Span> = batches
        .iter()
        .flat_map(|b| &b.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| s.spans.clone())
        .collect();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(spans.len(), 4, "{names:?}");
    let trace_hex: String = spans[0]
        .trace_id
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        stderr.contains(&format!(
            "spans: trace {trace_hex} to {}/v1/traces",
            fake.url()
        )),
        "{stderr}"
    );
    let run = spans.iter().find(|s| s.name == "prill run").unwrap();
    let case = spans
        .iter()
        .find(|s| s.parent_span_id == run.span_id)
        .unwrap();
    let sample = spans
        .iter()
        .find(|s| s.parent_span_id == case.span_id)
        .unwrap();
    let interaction = spans
        .iter()
        .find(|s| s.parent_span_id == sample.span_id)
        .unwrap();
    assert_eq!(interaction.name, "invoke_agent music_nerd_pro");
    // `--otlp-content`: what was sent goes with the span.
    let Some(Any::StringValue(sent)) = attr(&interaction.attributes, "gen_ai.input.messages")
    else {
        panic!("no input messages: {interaction:?}")
    };
    assert!(sent.contains("Who did Yellow Submarine?"), "{sent}");
    let labels: Vec<&Any> = interaction
        .events
        .iter()
        .filter(|e| e.name == "gen_ai.evaluation.result")
        .filter_map(|e| attr(&e.attributes, "gen_ai.evaluation.score.label"))
        .collect();
    assert_eq!(
        labels,
        [
            &Any::StringValue("passed".into()),
            &Any::StringValue("failed".into())
        ]
    );
}

#[test]
fn a_receiver_that_cannot_take_the_spans_fails_the_run() {
    let rt = runtime();
    let fake = rt.block_on(FakeOtlp::start());
    fake.answer_with(&[500, 500, 500]);
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path());
    let out = prill_isolated(
        dir.path(),
        &["run", "--demo", "band.hocon", "--otlp", &fake.url()],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("otlp"), "{stderr}");
    assert!(stderr.contains("500"), "{stderr}");
}

#[test]
fn a_bad_endpoint_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path());
    let out = prill_isolated(
        dir.path(),
        &["run", "--demo", "band.hocon", "--otlp", "ftp://x"],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not http or https"), "{stderr}");
}

/// A real Arize Phoenix (`PRILL_PHOENIX`, the path of its `phoenix` command), started
/// offline on free loopback ports and stopped when dropped.
struct Phoenix {
    child: std::process::Child,
    port: u16,
    _data: tempfile::TempDir,
}

impl Phoenix {
    fn start() -> Phoenix {
        let command = std::env::var("PRILL_PHOENIX")
            .expect("PRILL_PHOENIX names Phoenix's `phoenix` command (.ci/phoenix/venv prints it)");
        let free = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        };
        let (port, grpc) = (free(), free());
        let data = tempfile::tempdir().unwrap();
        let child = std::process::Command::new(command)
            .args(["serve", "--host", "127.0.0.1", "--no-internet"])
            .args([
                "--port",
                &port.to_string(),
                "--grpc-port",
                &grpc.to_string(),
            ])
            .env("PHOENIX_WORKING_DIR", data.path())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .env("PHOENIX_DISABLE_AGENT_ASSISTANT", "true")
            .env("PHOENIX_ENABLE_MCP_SERVER", "false")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("Phoenix starts");
        let phoenix = Phoenix {
            child,
            port,
            _data: data,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while phoenix.get("/readyz").0 != 200 {
            assert!(
                std::time::Instant::now() < deadline,
                "Phoenix was not ready within 120 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        phoenix
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `GET path`: the status (0 when nothing answers) and the body.
    fn get(&self, path: &str) -> (u16, String) {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return (0, String::new());
        };
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        if stream.write_all(request.as_bytes()).is_err() {
            return (0, String::new());
        }
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        let status = answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = answer
            .split_once("\r\n\r\n")
            .map(|(_, b)| b)
            .unwrap_or_default();
        (status, dechunk(body))
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A chunked body's content (uvicorn chunks its answers); any other body as it is.
fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            return body.to_owned();
        };
        if n == 0 {
            return out;
        }
        out.push_str(&after[..n.min(after.len())]);
        rest = after.get(n + 2..).unwrap_or_default();
    }
    if out.is_empty() { body.to_owned() } else { out }
}

/// The run exported to a real Phoenix and read back through its REST API: the four
/// spans with their parents, and an evaluation event per check with its attributes.
#[test]
#[cfg_attr(
    not(prill_phoenix),
    ignore = "needs Arize Phoenix: set PRILL_PHOENIX to its `phoenix` command (.ci/phoenix/venv makes it; .ci/run does)"
)]
fn a_run_is_read_back_from_a_real_phoenix() {
    let phoenix = Phoenix::start();
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path());
    std::fs::write(
        dir.path().join("prill.toml"),
        "[otel.headers]\nx-project-name = \"prill-e2e\"\n",
    )
    .unwrap();
    let out = prill_isolated(
        dir.path(),
        &["run", "--demo", "band.hocon", "--otlp", &phoenix.url()],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "one check fails: {stderr}");
    let trace = stderr
        .split("spans: trace ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the trace id is printed")
        .to_owned();
    // Phoenix stores what it takes in the background: give it a few seconds.
    let path = format!("/v1/projects/prill-e2e/spans?trace_id={trace}&limit=100");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let spans = loop {
        let (status, body) = phoenix.get(&path);
        let spans: Vec<serde_json::Value> = (status == 200)
            .then(|| serde_json::from_str::<serde_json::Value>(&body).ok())
            .flatten()
            .and_then(|v| v["data"].as_array().cloned())
            .unwrap_or_default();
        if spans.len() >= 4 || std::time::Instant::now() > deadline {
            break spans;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    };
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let named = |name: &str| {
        spans
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no span {name}: {spans:#?}"))
    };
    let run = named("prill run");
    let case = spans
        .iter()
        .find(|s| s["parent_id"] == run["context"]["span_id"])
        .expect("the case's span, under the run's");
    assert_eq!(case["name"], "band [direct]", "{case:#}");
    let sample = spans
        .iter()
        .find(|s| s["parent_id"] == case["context"]["span_id"])
        .expect("the sample's span");
    let interaction = named("invoke_agent music_nerd_pro");
    assert_eq!(interaction["parent_id"], sample["context"]["span_id"]);
    assert_eq!(
        interaction["attributes"]["gen_ai.operation.name"],
        "invoke_agent"
    );
    let events = interaction["events"].as_array().expect("events");
    let labels: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["name"] == "gen_ai.evaluation.result")
        .map(|e| &e["attributes"]["gen_ai.evaluation.score.label"])
        .collect();
    assert_eq!(labels, ["passed", "failed"], "{events:#?}");
    let failed = &events[1]["attributes"];
    assert_eq!(failed["gen_ai.evaluation.name"], "not_keywords");
    assert_eq!(failed["gen_ai.evaluation.score.value"], 0.0);
    assert!(
        failed["gen_ai.evaluation.explanation"]
            .as_str()
            .is_some_and(|m| m.contains("Beatles")),
        "{failed:#}"
    );
}
