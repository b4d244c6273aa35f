//! Reading a neuro-san agent's trajectory from its `MAXIMAL` stream: against the demo
//! server (one coded tool per agent), and against a scripted server streaming the
//! messages neuro-san writes for a network with a sub-agent called twice, a nested coded
//! tool and the callers' `Invoking` announcements (shapes from neuro-san's source:
//! `AbstractClassActivation.attempt_invoke`, `JournalingToolsAgentOutputParser`,
//! `LangChainRunContext.parse_tool_output`).

use prill_connect::{AgentRequest, Connector, HttpOptions, Invocation, NeuroSanHttp, Url};
use prill_spec::model::data_driven::ChatFilter;
use prill_testkit::start_demo;
use serde_json::{Value, json};

use crate::server::{Reply, Server};

fn multiply(filter: ChatFilter) -> AgentRequest {
    let mut request = AgentRequest::new("multiply");
    request.sly_data = json!({"x": 847, "y": 23}).as_object().cloned();
    request.chat_filter = filter;
    request
}

async fn send(base: Url, request: &AgentRequest) -> prill_connect::AgentResponse {
    let connector = NeuroSanHttp::new(base, &HttpOptions::default()).unwrap();
    let mut conversation = connector.open("math_guy").await.unwrap();
    conversation.send(request).await.unwrap()
}

fn path(names: &[(&str, u64)]) -> Vec<(String, u64)> {
    names.iter().map(|(n, i)| ((*n).to_owned(), *i)).collect()
}

fn origin(names: &[(&str, u64)]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|(t, i)| json!({"tool": t, "instantiation_index": i}))
            .collect(),
    )
}

#[tokio::test]
async fn the_demo_s_coded_tool_is_the_trajectory_under_maximal_only() {
    let demo = start_demo().await;
    let base = Url::parse(&demo.http_url()).unwrap();
    let maximal = send(base.clone(), &multiply(ChatFilter::Maximal)).await;
    assert_eq!(
        maximal.trajectory,
        [Invocation {
            tool: "Calculator".into(),
            origin: path(&[("MathGuy", 1), ("Calculator", 1)]),
            arguments: json!({"operation": "multiply", "x": 847, "y": 23}),
            result: Some(json!({"equals": 19481.0})),
            position: 2,
        }]
    );
    let minimal = send(base, &multiply(ChatFilter::Minimal)).await;
    assert!(minimal.trajectory.is_empty(), "{:?}", minimal.trajectory);
    assert_eq!(minimal.sly_data, maximal.sly_data);
}

/// A front man that asks `Researcher` (an LLM agent) twice; the first time `Researcher`
/// runs the coded tool `search`.
fn network_stream() -> Vec<Vec<u8>> {
    let front = origin(&[("Front", 1)]);
    let r1 = origin(&[("Front", 1), ("Researcher", 1)]);
    let search = origin(&[("Front", 1), ("Researcher", 1), ("search", 1)]);
    let r2 = origin(&[("Front", 1), ("Researcher", 2)]);
    let invoking = |q: &str| {
        json!({"type": "AGENT", "origin": front,
            "text": format!("Invoking: `Researcher` with `{{'inquiry': '{q}'}}`"),
            "structure": {"invoking_start": true, "invoked_agent_name": "Researcher", "params": {"inquiry": q}}})
    };
    let messages = [
        invoking("laptops"),
        json!({"type": "SYSTEM", "origin": r1, "text": "You research."}),
        json!({"type": "HUMAN", "origin": r1, "text": "laptops"}),
        json!({"type": "AGENT", "origin": search, "text": "Received arguments:",
            "structure": {"tool_start": true, "tool_args": {"query": "laptops",
                "origin": search, "origin_str": "Front.Researcher.search"}}}),
        json!({"type": "AGENT_PROGRESS", "origin": search, "text": "", "structure": {"progress": 0.5}}),
        json!({"type": "AGENT_PROGRESS", "text": ""}),
        json!({"type": "AGENT", "origin": search, "text": "Got result:",
            "structure": {"tool_end": true, "tool_output": ["a", "b"]}}),
        json!({"type": "AGENT_TOOL_RESULT", "origin": r1, "tool_result_origin": search, "text": "['a', 'b']"}),
        json!({"type": "AI", "origin": r1, "text": "Two laptops."}),
        json!({"type": "AGENT_TOOL_RESULT", "origin": front, "tool_result_origin": r1, "text": "Two laptops."}),
        invoking("phones"),
        json!({"type": "AI", "origin": r2, "text": "No phones."}),
        json!({"type": "AGENT_TOOL_RESULT", "origin": front, "tool_result_origin": r2, "text": "No phones."}),
        json!({"type": "AI", "origin": front, "text": "Two laptops, no phones."}),
        json!({"type": "AGENT_FRAMEWORK", "text": "Two laptops, no phones.", "chat_context": {"chat_histories": []}}),
    ];
    messages
        .iter()
        .map(|m| format!("{}\n", json!({"response": m})).into_bytes())
        .collect()
}

#[tokio::test]
async fn a_network_s_invocations_in_order_with_arguments_and_results() {
    let server = Server::start(|_, _| Reply::Stream(network_stream())).await;
    let response = send(server.base.clone(), &multiply(ChatFilter::Maximal)).await;
    assert_eq!(response.text.as_deref(), Some("Two laptops, no phones."));
    let got: Vec<(&str, Value, Option<Value>, usize)> = response
        .trajectory
        .iter()
        .map(|i| {
            (
                i.tool.as_str(),
                i.arguments.clone(),
                i.result.clone(),
                i.position,
            )
        })
        .collect();
    // Positions count the messages kept: the empty heartbeat is not one of them.
    assert_eq!(
        got,
        [
            (
                "Researcher",
                json!({"inquiry": "laptops"}),
                Some(json!("Two laptops.")),
                2
            ),
            (
                "search",
                json!({"query": "laptops"}),
                Some(json!(["a", "b"])),
                4
            ),
            (
                "Researcher",
                json!({"inquiry": "phones"}),
                Some(json!("No phones.")),
                11
            ),
        ]
    );
    assert_eq!(
        response.trajectory[2].origin,
        path(&[("Front", 1), ("Researcher", 2)])
    );
}
