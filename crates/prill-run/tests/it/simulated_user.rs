//! A simulated user's contract, run by the engine against in-process models and an
//! in-process judge (as an embedder would plug in its own): the conversation goes on
//! until the simulator calls `end_conversation`, the transcript says who wrote each
//! message and how it ended, and every fault of the simulator's (a turn outside its
//! brief, no end within `max_turns`, a reply it may not give) errors the sample as a
//! `simulator` error, never as the agent's failure.

use std::path::Path;
use std::sync::{Arc, Mutex};

use prill_check::{BoxFuture as JudgeFuture, Judge, JudgeError, JudgeVerdict};
use prill_run::events::{Event, SampleReport};
use prill_run::{Connectors, RunOptions, Summary, run_plan};
use prill_spec::model::user::StopReason;
use prill_spec::{Env, Plan, ProviderKind, Unrecognized};
use prill_target::model::{ChatMessage, ModelRequest, ModelResponse, ModelToolCall, Provider};
use prill_target::{BoxFuture, ConnectError, ErrorKind};
use serde_json::json;
use tokio::sync::mpsc;

/// A model that answers each request with `script(request)`, and keeps every request.
struct Model<F> {
    kind: ProviderKind,
    seen: Mutex<Vec<ModelRequest>>,
    script: F,
}

impl<F> Provider for Model<F>
where
    F: Fn(&ModelRequest) -> ModelResponse + Send + Sync,
{
    fn kind(&self) -> ProviderKind {
        self.kind
    }

    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>> {
        self.seen.lock().unwrap().push(request.clone());
        let answer = (self.script)(request);
        Box::pin(async move { Ok(answer) })
    }
}

fn model<F>(kind: ProviderKind, script: F) -> Arc<Model<F>>
where
    F: Fn(&ModelRequest) -> ModelResponse + Send + Sync,
{
    Arc::new(Model {
        kind,
        seen: Mutex::new(Vec::new()),
        script,
    })
}

fn says(text: &str) -> ModelResponse {
    ModelResponse {
        text: text.to_owned(),
        stop_reason: Some("stop".into()),
        ..ModelResponse::default()
    }
}

fn ends(reason: &str, text: &str) -> ModelResponse {
    ModelResponse {
        text: text.to_owned(),
        tool_calls: vec![ModelToolCall {
            id: Some("call-end".into()),
            name: "end_conversation".into(),
            arguments: json!({"reason": reason}),
        }],
        ..ModelResponse::default()
    }
}

/// The messages of a request, as text.
fn texts(request: &ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .map(|m| match m {
            ChatMessage::User(t) => format!("user: {t}"),
            ChatMessage::Assistant { text, .. } => format!("assistant: {text}"),
            ChatMessage::ToolResult(_) => "tool".to_owned(),
        })
        .collect()
}

/// A judge that fails a turn holding `forbidden`.
struct Strict {
    forbidden: &'static str,
}

impl Judge for Strict {
    fn judge<'a>(
        &'a self,
        _criteria: &'a str,
        sample: &'a str,
    ) -> JudgeFuture<'a, Result<JudgeVerdict, JudgeError>> {
        let latest = sample
            .rsplit("The user's latest message:")
            .next()
            .unwrap_or_default();
        let pass = !latest.contains(self.forbidden);
        Box::pin(async move {
            Ok(JudgeVerdict::new(
                pass,
                if pass {
                    "within the brief"
                } else {
                    "it states a fact it was not given"
                },
            ))
        })
    }
}

/// The agent: answers the user's last message, echoing it.
fn agent(request: &ModelRequest) -> ModelResponse {
    let last = texts(request).pop().unwrap_or_default();
    says(&format!("agent heard <{last}>"))
}

const BRIEF: &str = "user:\n  goal: cancel order W1\n  facts: {order: W1}\n  model: sim-model\n  provider: openai\n";

/// Runs one spec (`spec`'s lines after its model) with the agent on Ollama and the
/// simulator on OpenAI: the summary, the first sample, and both models' requests.
async fn run<S>(
    spec: &str,
    simulator: S,
    judge: Option<Arc<dyn Judge>>,
) -> (Summary, SampleReport, Vec<ModelRequest>, Vec<ModelRequest>)
where
    S: Fn(&ModelRequest) -> ModelResponse + Send + Sync + 'static,
{
    let text = format!("name: talk\nmodel: llama3.1\nprovider: ollama\n{spec}");
    let loaded = prill_spec::load_str(
        Path::new("talk.yaml"),
        &text,
        &Env::default(),
        Unrecognized::Error,
    )
    .unwrap();
    assert!(loaded.is_valid(), "{:?}", loaded.outcome);
    let plan = Plan::new(loaded.cases());
    let agent = model(ProviderKind::Ollama, agent);
    let sim = model(ProviderKind::Openai, simulator);
    let connectors = Connectors::new()
        .with_provider(ProviderKind::Ollama, agent.clone())
        .with_provider(ProviderKind::Openai, sim.clone());
    let options = RunOptions {
        judge,
        ..RunOptions::default()
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let summary = run_plan(&plan, &connectors, &options, tx).await;
    let mut sample = None;
    while let Ok(event) = rx.try_recv() {
        if let Event::UnitFinished(unit) = event {
            sample = unit.samples.first().cloned();
        }
    }
    let agent_seen = agent.seen.lock().unwrap().clone();
    let sim_seen = sim.seen.lock().unwrap().clone();
    (summary, sample.expect("one sample"), agent_seen, sim_seen)
}

fn judge() -> Option<Arc<dyn Judge>> {
    Some(Arc::new(Strict { forbidden: "SSN" }))
}

/// The simulator's `n`th reply (from 0), by how many of its own turns it has had.
fn turn(request: &ModelRequest) -> usize {
    request
        .messages
        .iter()
        .filter(|m| matches!(m, ChatMessage::Assistant { .. }))
        .count()
}

#[tokio::test]
async fn the_conversation_goes_on_until_the_user_ends_it() {
    let spec = format!(
        "inputs: {{query: I need help}}\n{BRIEF}  first_turns: [It is about an order]\nassertions: [{{must_contain: cancelled}}]\n"
    );
    let simulator = |r: &ModelRequest| match turn(r) {
        // Its own turns so far: the test's query and the scripted one are the user's.
        2 => says("Please cancel W1, it was cancelled"),
        _ => ends("done", "Thanks!"),
    };
    let (summary, sample, agent_seen, sim_seen) = run(&spec, simulator, judge()).await;
    assert_eq!(summary.passed, 1, "{sample:?}");
    let sent: Vec<(Option<&str>, Option<bool>)> = sample
        .interactions
        .iter()
        .map(|i| (i.sent.as_deref(), i.user.as_ref().map(|u| u.simulated)))
        .collect();
    assert_eq!(
        sent,
        [
            (Some("I need help"), Some(false)),
            (Some("It is about an order"), Some(false)),
            (Some("Please cancel W1, it was cancelled"), Some(true)),
        ]
    );
    let stop = sample.interactions[2]
        .user
        .as_ref()
        .unwrap()
        .stop
        .clone()
        .unwrap();
    assert_eq!(stop.reason, StopReason::Done);
    assert_eq!(
        stop.said.as_deref(),
        Some("Thanks!"),
        "the last words are kept"
    );
    assert_eq!(
        agent_seen.len(),
        3,
        "one agent answer per user turn, and no more"
    );
    assert!(
        !texts(agent_seen.last().unwrap())
            .iter()
            .any(|t| t.contains("Thanks!")),
        "words said while ending are not sent"
    );
    // The simulator sees the agent as the other party, and its brief, never the agent's.
    let first = &sim_seen[0];
    assert_eq!(
        texts(first),
        [
            "user: (The agent is waiting for your message.)",
            "assistant: I need help",
            "user: agent heard <user: I need help>",
            "assistant: It is about an order",
            "user: agent heard <user: It is about an order>"
        ]
    );
    assert!(first.system.as_deref().unwrap().contains("cancel order W1"));
    assert_eq!(first.tools[0].name, "end_conversation");
    assert_eq!(
        sample.interactions[2].checks.len(),
        1,
        "the checks run once, at the end"
    );
    assert!(sample.interactions[0].checks.is_empty());
}

#[tokio::test]
async fn the_simulator_opens_a_test_that_has_no_message_of_its_own() {
    let spec = format!(
        "inputs: {{system_prompt: You are a shop}}\n{BRIEF}assertions: [{{must_contain: agent}}]\n"
    );
    let simulator = |r: &ModelRequest| match turn(r) {
        0 => says("Hi, cancel W1"),
        _ => ends("done", ""),
    };
    let (summary, sample, agent_seen, sim_seen) = run(&spec, simulator, judge()).await;
    assert_eq!(summary.passed, 1, "{sample:?}");
    assert_eq!(sample.interactions.len(), 1);
    assert_eq!(
        sample.interactions[0].sent.as_deref(),
        Some("Hi, cancel W1")
    );
    assert_eq!(
        sample.interactions[0].user.as_ref().map(|u| u.simulated),
        Some(true)
    );
    assert_eq!(texts(&agent_seen[0]), ["user: Hi, cancel W1"]);
    assert_eq!(agent_seen[0].system.as_deref(), Some("You are a shop"));
    assert_eq!(
        texts(&sim_seen[0]),
        ["user: (The agent is waiting for your message.)"],
        "every provider wants the other party first"
    );
}

#[tokio::test]
async fn a_turn_outside_the_brief_is_the_simulators_fault_and_is_never_sent() {
    let spec = format!("inputs: {{query: Hello}}\n{BRIEF}assertions: [{{must_contain: x}}]\n");
    let simulator = |_: &ModelRequest| says("My SSN is 123-45-6789");
    let (summary, sample, agent_seen, _) = run(&spec, simulator, judge()).await;
    assert_eq!(summary.errored, 1, "{sample:?}");
    assert_eq!(summary.failed, 0, "never the agent's failure");
    let error = sample.error.expect("a sample error");
    assert_eq!(error.kind, ErrorKind::Simulator);
    assert!(
        error.message.starts_with("the simulated user broke its brief (a simulator fault, not the agent's): it states a fact it was not given; its message: My SSN"),
        "{}",
        error.message
    );
    assert_eq!(agent_seen.len(), 1, "the turn was not sent");
    assert_eq!(
        sample.interactions.len(),
        1,
        "the agent's one answer is kept"
    );
}

#[tokio::test]
async fn a_simulator_that_never_ends_errors_at_max_turns() {
    let spec = format!(
        "inputs: {{query: Hello}}\n{BRIEF}  max_turns: 3\nassertions: [{{must_contain: x}}]\n"
    );
    let simulator = |_: &ModelRequest| says("And another thing");
    let (summary, sample, agent_seen, sim_seen) = run(&spec, simulator, judge()).await;
    assert_eq!(summary.errored, 1);
    let error = sample.error.expect("a sample error");
    assert_eq!(error.kind, ErrorKind::Simulator);
    assert!(
        error
            .message
            .contains("did not call `end_conversation` within max_turns (3)"),
        "{}",
        error.message
    );
    assert_eq!(
        agent_seen.len(),
        3,
        "three user turns: the query and two simulated"
    );
    assert_eq!(sim_seen.len(), 2, "no model call past the cap");
}

#[tokio::test]
async fn replies_the_contract_does_not_allow_are_simulator_faults() {
    for (reply, says_what) in [
        (says(""), "no message and no `end_conversation` call"),
        (
            ends("bored", ""),
            "not a reason of done, gave_up, agent_failed",
        ),
        (
            ModelResponse {
                tool_calls: vec![ModelToolCall {
                    id: None,
                    name: "cancel_order".into(),
                    arguments: json!({}),
                }],
                ..ModelResponse::default()
            },
            "it has one tool, `end_conversation`",
        ),
    ] {
        let spec = format!("inputs: {{query: Hello}}\n{BRIEF}assertions: [{{must_contain: x}}]\n");
        let (summary, sample, _, _) = run(&spec, move |_| reply.clone(), judge()).await;
        assert_eq!(summary.errored, 1);
        let error = sample.error.expect("a sample error");
        assert_eq!(error.kind, ErrorKind::Simulator);
        assert!(error.message.contains(says_what), "{}", error.message);
    }
}

#[tokio::test]
async fn turns_are_checked_by_a_judge_unless_the_test_says_not_to() {
    let spec = format!("inputs: {{query: Hello}}\n{BRIEF}assertions: [{{must_contain: agent}}]\n");
    let simulator = |r: &ModelRequest| match turn(r) {
        1 => says("My SSN is 1"),
        _ => ends("gave_up", ""),
    };
    let (summary, sample, _, _) = run(&spec, simulator, None).await;
    assert_eq!(summary.errored, 1);
    let error = sample.error.expect("a sample error");
    assert_eq!(error.kind, ErrorKind::Config);
    assert!(
        error.message.contains("set `user.check_turns: false`"),
        "{}",
        error.message
    );

    let unchecked = format!(
        "inputs: {{query: Hello}}\n{BRIEF}  check_turns: false\nassertions: [{{must_contain: agent}}]\n"
    );
    let simulator = |r: &ModelRequest| match turn(r) {
        0 => says("My SSN is 1"),
        _ => ends("gave_up", ""),
    };
    let (summary, sample, _, _) = run(&unchecked, simulator, None).await;
    assert_eq!(summary.passed, 1, "{sample:?}");
    let stop = sample
        .interactions
        .last()
        .unwrap()
        .user
        .as_ref()
        .unwrap()
        .stop
        .clone();
    assert_eq!(stop.map(|s| s.reason), Some(StopReason::GaveUp));
}

/// A Rust suite drives its own agent with the simulator, and an evaluator reads the
/// conversation it returns.
#[tokio::test]
async fn a_rust_suite_talks_to_its_agent_through_the_simulator() {
    use prill_check::{Evaluation, Evaluator, EvaluatorError, Said};
    use prill_run::simulator::{Next, Simulator};
    use prill_run::{BoxError, SuiteOptions, TestCase, async_fn, run_test_suite};
    use prill_spec::model::user::SimulatedUser;

    struct Goal(&'static str);
    impl TestCase for Goal {
        fn hash(&self) -> String {
            self.0.to_owned()
        }
    }
    struct EndsDone;
    impl Evaluator<Goal, Vec<Said>> for EndsDone {
        fn id(&self) -> &str {
            "talked"
        }
        fn evaluate<'a>(
            &'a self,
            _: &'a Goal,
            said: &'a Vec<Said>,
        ) -> prill_check::BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
            let agent_spoke = said.iter().filter(|s| s.by == "agent").count() == 2;
            Box::pin(async move { Ok(Some(Evaluation::pass_fail(agent_spoke))) })
        }
    }

    let sim = model(ProviderKind::Openai, |r: &ModelRequest| match turn(r) {
        0 => says("Hi, cancel W1"),
        1 => says("Yes, W1"),
        _ => ends("done", ""),
    });
    let run = async_fn(move |goal: &Goal| {
        let sim: Arc<dyn Provider> = sim.clone();
        let mut brief = SimulatedUser::new(goal.0, "sim-model");
        brief.check_turns = false;
        async move {
            let mut user =
                Simulator::new(brief, sim, None, None, std::time::Duration::from_secs(5));
            let mut next = user.next().await.map_err(|e| e.message)?;
            while let Next::Say { text, .. } = next {
                user.heard(&format!("agent heard <{text}>"));
                next = user.next().await.map_err(|e| e.message)?;
            }
            Ok::<_, BoxError>(user.conversation())
        }
    });
    let evaluators: Vec<Arc<dyn Evaluator<Goal, Vec<Said>>>> = vec![Arc::new(EndsDone)];
    let report = run_test_suite(
        "simulated",
        vec![Goal("cancel order W1")],
        evaluators,
        run,
        SuiteOptions::default(),
    )
    .await
    .unwrap();
    assert!(report.all_passed(), "{report:?}");
}
