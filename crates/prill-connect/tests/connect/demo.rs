//! End to end against the real demo server of `prill-testkit`: every connection type
//! and every fault mode it offers (`x-prill-fault`, sent as request metadata).

use std::time::Duration;

use prill_connect::{
    AgentRequest, AgentResponse, ConnectError, Connector, ErrorKind, HttpOptions, NeuroSanHttp,
    NeuroSanMcp, RetryPolicy, TlsOptions, Url,
};
use prill_spec::model::data_driven::ChatFilter;
use prill_testkit::{Demo, start_demo};
use serde_json::json;

/// Quick retries, so that `Retry-After: 1` is capped and tests stay short.
fn options() -> HttpOptions {
    HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
        },
        ..HttpOptions::default()
    }
}

fn http(demo: &Demo) -> NeuroSanHttp {
    NeuroSanHttp::new(Url::parse(&demo.http_url()).unwrap(), &options()).unwrap()
}

fn trusted(demo: &Demo) -> HttpOptions {
    HttpOptions {
        tls: TlsOptions::default().with_ca_pem(demo.cert_pem()),
        ..options()
    }
}

fn multiply() -> AgentRequest {
    let mut request = AgentRequest::new("multiply");
    request.sly_data = json!({"x": 847, "y": 23}).as_object().cloned();
    request
}

fn faulty(fault: &str) -> AgentRequest {
    multiply().with_metadata("x-prill-fault", fault)
}

async fn one(
    connector: &dyn Connector,
    agent: &str,
    request: &AgentRequest,
) -> Result<AgentResponse, ConnectError> {
    connector.open(agent).await?.send(request).await
}

fn assert_math(response: &AgentResponse) {
    assert_eq!(
        response.text.as_deref(),
        Some("Check sly_data['equals'] for the result")
    );
    assert_eq!(response.sly_data, Some(json!({"equals": 19481.0})));
}

/// A two-turn music_nerd_pro conversation: the running cost shows the context carried.
async fn music_conversation(connector: &dyn Connector, filter: ChatFilter) -> Vec<AgentResponse> {
    let mut conversation = connector.open("music_nerd_pro").await.unwrap();
    let mut first = AgentRequest::new("Who did Yellow Submarine?");
    first.chat_filter = filter;
    let first = conversation.send(&first).await.unwrap();
    let mut second =
        AgentRequest::new("Where are they from?").with_chat_context(first.chat_context.clone());
    second.chat_filter = filter;
    let second = conversation.send(&second).await.unwrap();
    assert_eq!(
        first.text.as_deref(),
        Some("Yellow Submarine was recorded by The Beatles.")
    );
    assert_eq!(
        first.structure.as_ref().unwrap()["running_cost"],
        json!(3.0)
    );
    assert_eq!(
        second.text.as_deref(),
        Some("The Beatles are from Liverpool, England.")
    );
    assert_eq!(
        second.structure.as_ref().unwrap()["running_cost"],
        json!(6.0)
    );
    vec![first, second]
}

#[tokio::test]
async fn http_minimal_and_maximal() {
    let demo = start_demo().await;
    let connector = http(&demo);
    let response = one(&connector, "math_guy", &multiply()).await.unwrap();
    assert_math(&response);
    assert_eq!(response.messages.len(), 1);
    assert_eq!(response.usage, None);

    let minimal = music_conversation(&connector, ChatFilter::Minimal).await;
    assert_eq!(minimal[1].messages.len(), 1);
    let maximal = music_conversation(&connector, ChatFilter::Maximal).await;
    // Seven lines, less the heartbeat.
    assert_eq!(maximal[0].messages.len(), 6);
    let usage = maximal[0].usage.expect("token accounting under MAXIMAL");
    assert!(usage.input.is_some() && usage.output.is_some());
    demo.shutdown().await;
}

#[tokio::test]
async fn list_and_describe_the_demo_agents() {
    let demo = start_demo().await;
    let connector = http(&demo);
    let agents = connector.list_agents().await.unwrap();
    let names: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
    assert!(
        names.contains(&"math_guy") && names.contains(&"music_nerd_pro"),
        "{names:?}"
    );
    assert!(agents.iter().all(|a| !a.description.is_empty()));
    let function = connector.describe("math_guy").await.unwrap();
    assert!(function.description.is_some());
    let e = connector.describe("nobody").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownAgent);
    demo.shutdown().await;
}

#[tokio::test]
async fn https_with_and_without_the_certificate() {
    let demo = start_demo().await;
    let base = Url::parse(&demo.http_url()).unwrap();

    let trusted = NeuroSanHttp::https(&base, &trusted(&demo)).unwrap();
    assert_eq!(trusted.base().scheme(), "https");
    music_conversation(&trusted, ChatFilter::Minimal).await;

    let untrusted = NeuroSanHttp::https(&base, &options()).unwrap();
    let e = one(&untrusted, "math_guy", &multiply()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("tls with {} failed: ", demo.https_url())),
        "{text}"
    );
    assert!(
        text.contains("--ca-cert") && text.contains("--insecure"),
        "{text}"
    );

    let insecure = HttpOptions {
        tls: TlsOptions::default().insecure(true),
        ..options()
    };
    let insecure = NeuroSanHttp::https(&base, &insecure).unwrap();
    assert_math(&one(&insecure, "math_guy", &multiply()).await.unwrap());
    demo.shutdown().await;
}

#[tokio::test]
async fn mcp_over_http_and_https() {
    let demo = start_demo().await;
    let base = Url::parse(&demo.http_url()).unwrap();
    let mcp = NeuroSanMcp::new(base.clone(), &options()).unwrap();
    let turns = music_conversation(&mcp, ChatFilter::Minimal).await;
    assert!(turns[0].chat_context.is_some());
    assert_math(&one(&mcp, "math_guy", &multiply()).await.unwrap());

    let secure =
        NeuroSanMcp::new(prill_connect::with_scheme(&base, "https"), &trusted(&demo)).unwrap();
    assert_math(&one(&secure, "math_guy", &multiply()).await.unwrap());

    let e = one(&mcp, "nobody", &multiply()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownAgent);
    // The demo answers a request without text with `isError`.
    let e = one(&mcp, "echo", &AgentRequest::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    demo.shutdown().await;
}

#[tokio::test]
async fn unknown_agent_names_agent_and_server() {
    let demo = start_demo().await;
    let e = one(&http(&demo), "nobody", &multiply()).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("unknown agent `nobody` on {}", demo.http_url())
    );
    demo.shutdown().await;
}

#[tokio::test]
async fn stream_faults() {
    let demo = start_demo().await;
    let connector = http(&demo);
    let mcp = NeuroSanMcp::new(Url::parse(&demo.http_url()).unwrap(), &options()).unwrap();
    for connector in [&connector as &dyn Connector, &mcp] {
        let e = one(connector, "math_guy", &faulty("drop"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "drop: {e}");
        let e = one(connector, "math_guy", &faulty("malformed"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "malformed: {e}");
        assert!(e.to_string().contains("not JSON"), "{e}");
    }
    demo.shutdown().await;
}

#[tokio::test]
async fn status_faults_and_retries() {
    let demo = start_demo().await;
    let connector = http(&demo);
    let mcp = NeuroSanMcp::new(Url::parse(&demo.http_url()).unwrap(), &options()).unwrap();
    for (name, connector) in [("http", &connector as &dyn Connector), ("mcp", &mcp)] {
        let e = one(connector, "math_guy", &faulty("500"))
            .await
            .unwrap_err();
        assert!(
            matches!(e, ConnectError::Status { status: 500, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("Internal server error"), "{e}");

        let e = one(connector, "math_guy", &faulty("503"))
            .await
            .unwrap_err();
        assert!(
            matches!(e, ConnectError::Status { status: 503, .. }),
            "{e:?}"
        );

        let e = one(connector, "math_guy", &faulty("429"))
            .await
            .unwrap_err();
        assert!(
            matches!(e, ConnectError::Status { status: 429, .. }),
            "{e:?}"
        );

        let once = faulty(&format!("503-once:{name}-retry"));
        assert_math(&one(connector, "math_guy", &once).await.unwrap());
    }
    demo.shutdown().await;
}

#[tokio::test]
async fn hang_times_out_and_the_server_sees_the_client_leave() {
    let demo = start_demo().await;
    let connector = http(&demo);
    let mcp = NeuroSanMcp::new(Url::parse(&demo.http_url()).unwrap(), &options()).unwrap();
    for connector in [&connector as &dyn Connector, &mcp] {
        let request = faulty("hang").with_timeout(Duration::from_secs(1));
        let e = one(connector, "math_guy", &request).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
        let mut waited = Duration::ZERO;
        while demo.server().active_streams() > 0 && waited < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(20)).await;
            waited += Duration::from_millis(20);
        }
        assert_eq!(
            demo.server().active_streams(),
            0,
            "the stream is still served"
        );
    }
    demo.shutdown().await;
}

#[tokio::test]
async fn huge_bodies_hit_the_cap() {
    let demo = start_demo().await;
    let capped = HttpOptions {
        max_body_bytes: 1024 * 1024,
        ..options()
    };
    let base = Url::parse(&demo.http_url()).unwrap();
    let connector = NeuroSanHttp::new(base.clone(), &capped).unwrap();
    let mcp = NeuroSanMcp::new(base, &capped).unwrap();
    for connector in [&connector as &dyn Connector, &mcp] {
        let e = one(connector, "math_guy", &faulty("huge:4"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
        assert!(
            e.to_string().ends_with("larger than the 1 MiB limit"),
            "{e}"
        );
    }
    // Under the cap, the huge stream is decoded and the answer still found.
    let roomy = NeuroSanHttp::new(Url::parse(&demo.http_url()).unwrap(), &options()).unwrap();
    let response = one(&roomy, "math_guy", &faulty("huge:2")).await.unwrap();
    assert_math(&response);
    assert!(response.messages.len() > 30);
    demo.shutdown().await;
}
