//! The Sentinel test DSL (`../shared/specs/sentinel-test-dsl.md`): TestSpec and TestSuite.
//!
//! [`TestSpec`] is a test with every field resolved (a suite's defaults already applied).
//! [`SuiteTest`] and [`Defaults`] exist to describe a suite file's shape in its schema.

use crate::model::provider::ProviderName;
use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};

use super::data_driven::JsonMap;
use super::framework::MockCalls;
use super::framework_schema::{FrameworkConfigSchema, framework_rules};
use super::state::ExpectState;
pub use super::trajectory::{
    ArgMatcher, ArgSchema, ArgsMode, ExpectedCall, SequenceMode, ToolArgs, ToolSequence,
};

/// One Sentinel test.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "TestSpec",
    extend("patternProperties" = {"^x-": {"description": "Ignored in YAML files: a key that only holds an anchor for aliases to use. An error in JSON and HOCON."}}),
    extend("if" = {"required": ["framework"], "properties": {"framework": {"type": "string"}}}),
    extend("then" = {"required": ["tools"], "properties": {"tools": {"type": "array", "minItems": 1}}}),
    transform = framework_rules
)]
pub struct TestSpec {
    /// The test's name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// The model to run, e.g. `gpt-4o` or `claude-3-5-sonnet-20241022`.
    #[schemars(length(min = 1))]
    pub model: String,
    /// What to send.
    pub inputs: InputSpec,
    /// What the output must satisfy.
    #[schemars(length(min = 1))]
    pub assertions: Vec<Assertion>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A category, as Sentinel's templates carry (`qa`, `tool-use`, `safety`, ...);
    /// the plan also makes it a tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The provider: a kind, or a name from `[providers]` of `prill.toml`; inferred
    /// from the model name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderName>,
    /// Tools offered to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// The agentic framework; requires `tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<Framework>,
    /// Framework-specific settings: their keys depend on `framework`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<FrameworkConfigSchema>")]
    pub framework_config: Option<JsonMap>,
    /// Sampling parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_config: Option<ModelConfig>,
    /// A random seed, passed where the provider supports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// A limit on the test, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// A gate with stated error rates (Prill's extension): the test is sampled until it
    /// can tell a `good` success rate from a `bad` one, instead of running once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<super::gate::ReliabilitySchema>")]
    pub reliability: Option<super::gate::Reliability>,
    /// Labels for selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// A simulated user that carries the conversation on after `inputs` (a Prill
    /// extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<super::user::SimulatedUser>,
}

/// A collection of tests with shared defaults.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "TestSuite",
    extend("patternProperties" = {"^x-": {"description": "Ignored in YAML files: a key that only holds an anchor for aliases to use. An error in JSON and HOCON."}})
)]
pub struct TestSuite {
    /// The suite's name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// The tests, each with the suite's defaults applied.
    #[schemars(with = "Vec<SuiteTest>", length(min = 1))]
    pub tests: Vec<TestSpec>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The suite's version, e.g. `1.0.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The suite's category; a test that has none of its own, from itself or from
    /// `defaults`, takes this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Fields every test inherits unless it sets them itself (no deep merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<Defaults>,
    /// Labels applied to every test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
}

/// A test inside a suite: like [`TestSpec`], but any field except `name` may come
/// from the suite's defaults instead. `model`, `inputs` and `assertions` may be left
/// out, not set to null; null on another field clears the default.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = framework_rules)]
pub struct SuiteTest {
    /// The test's name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// See [`TestSpec::model`].
    #[schemars(length(min = 1), extend("type" = "string"))]
    pub model: Option<String>,
    /// See [`TestSpec::inputs`].
    #[schemars(extend("anyOf" = [{"$ref": "#/$defs/InputSpec"}]))]
    pub inputs: Option<InputSpec>,
    /// See [`TestSpec::assertions`].
    #[schemars(length(min = 1), extend("type" = "array"))]
    pub assertions: Option<Vec<Assertion>>,
    /// See [`TestSpec::description`].
    pub description: Option<String>,
    /// See [`TestSpec::category`].
    pub category: Option<String>,
    /// See [`TestSpec::provider`].
    pub provider: Option<ProviderName>,
    /// See [`TestSpec::tools`].
    pub tools: Option<Vec<Tool>>,
    /// See [`TestSpec::framework`].
    pub framework: Option<Framework>,
    /// See [`TestSpec::framework_config`].
    #[schemars(with = "Option<FrameworkConfigSchema>")]
    pub framework_config: Option<JsonMap>,
    /// See [`TestSpec::model_config`].
    pub model_config: Option<ModelConfig>,
    /// See [`TestSpec::seed`].
    pub seed: Option<i64>,
    /// See [`TestSpec::timeout_ms`].
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// See [`TestSpec::reliability`].
    #[schemars(with = "Option<super::gate::ReliabilitySchema>")]
    pub reliability: Option<super::gate::Reliability>,
    /// See [`TestSpec::tags`].
    pub tags: Option<Vec<String>>,
    /// See [`TestSpec::user`].
    pub user: Option<super::user::SimulatedUser>,
}

/// A suite's defaults: any [`TestSpec`] field but `name`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = framework_rules)]
pub struct Defaults {
    /// See [`TestSpec::model`].
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub model: Option<String>,
    /// See [`TestSpec::inputs`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<InputSpec>,
    /// See [`TestSpec::assertions`].
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub assertions: Option<Vec<Assertion>>,
    /// See [`TestSpec::description`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// See [`TestSpec::category`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// See [`TestSpec::provider`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderName>,
    /// See [`TestSpec::tools`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// See [`TestSpec::framework`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framework: Option<Framework>,
    /// See [`TestSpec::framework_config`].
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<FrameworkConfigSchema>")]
    pub framework_config: Option<JsonMap>,
    /// See [`TestSpec::model_config`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_config: Option<ModelConfig>,
    /// See [`TestSpec::seed`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// See [`TestSpec::timeout_ms`].
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// See [`TestSpec::reliability`].
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<super::gate::ReliabilitySchema>")]
    pub reliability: Option<super::gate::Reliability>,
    /// See [`TestSpec::tags`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// See [`TestSpec::user`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<super::user::SimulatedUser>,
}

/// What to send to the model. At least one field must say something: an empty
/// string, list or object counts as absent, as in Sentinel.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [
    {"required": ["query"], "properties": {"query": {"type": "string", "minLength": 1}}},
    {"required": ["messages"], "properties": {"messages": {"type": "array", "minItems": 1}}},
    {"required": ["system_prompt"], "properties": {"system_prompt": {"type": "string", "minLength": 1}}},
    {"required": ["context"], "properties": {"context": {"type": "object", "minProperties": 1}}}
]))]
pub struct InputSpec {
    /// A single user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// A conversation so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub messages: Option<Vec<Message>>,
    /// System instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Free-form context data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonMap>,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    #[schemars(length(min = 1))]
    pub content: String,
}

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
    /// The system.
    System,
}

impl Role {
    /// Every role's name.
    pub const NAMES: [&'static str; 3] = ["user", "assistant", "system"];
}

/// Sampling parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Sampling temperature, 0.0 to 2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// The most output tokens, > 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u64>,
    /// Nucleus sampling, 0.0 to 1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub top_p: Option<f64>,
    /// Top-K sampling, > 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub top_k: Option<u64>,
    /// Sequences that stop generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
}

/// An agentic framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Framework {
    /// LangGraph.
    Langgraph,
    /// The Claude Agent SDK.
    ClaudeSdk,
    /// The OpenAI Agents SDK.
    OpenaiSdk,
    /// Strands Agents.
    Strands,
}

impl Framework {
    /// Every framework's name.
    pub const NAMES: [&'static str; 4] = ["langgraph", "claude-sdk", "openai-sdk", "strands"];

    /// The framework's name as written.
    pub fn name(self) -> &'static str {
        match self {
            Framework::Langgraph => "langgraph",
            Framework::ClaudeSdk => "claude-sdk",
            Framework::OpenaiSdk => "openai-sdk",
            Framework::Strands => "strands",
        }
    }

    /// The kind of provider the framework runs on, whatever `provider` names:
    /// OpenAI's API for `openai-sdk`, Anthropic's for `claude-sdk`; `None` for
    /// `strands` (any provider) and `langgraph` (the server's own).
    pub fn required_provider(self) -> Option<crate::model::provider::ProviderKind> {
        use crate::model::provider::ProviderKind;
        match self {
            Framework::OpenaiSdk => Some(ProviderKind::Openai),
            Framework::ClaudeSdk => Some(ProviderKind::Anthropic),
            Framework::Strands | Framework::Langgraph => None,
        }
    }

    /// The provider a test of this framework calls when it names none: the one it
    /// requires, Bedrock for `strands` (as Strands does); `None` for `langgraph`,
    /// whose server calls its own.
    pub fn default_provider(self) -> Option<crate::model::provider::ProviderKind> {
        match self {
            Framework::Strands => Some(crate::model::provider::ProviderKind::Bedrock),
            other => other.required_provider(),
        }
    }

    /// The framework named `name`.
    pub fn from_name(name: &str) -> Option<Framework> {
        match name {
            "langgraph" => Some(Framework::Langgraph),
            "claude-sdk" => Some(Framework::ClaudeSdk),
            "openai-sdk" => Some(Framework::OpenaiSdk),
            "strands" => Some(Framework::Strands),
            _ => None,
        }
    }
}

/// A tool: a bare name, or a full specification.
#[derive(Debug, Clone, PartialEq)]
pub enum Tool {
    /// Just a name; providers get a minimal schema.
    Name(String),
    /// A name with a description and a JSON Schema for its parameters.
    Spec(ToolSpec),
}

impl Tool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        match self {
            Tool::Name(name) => name,
            Tool::Spec(spec) => &spec.name,
        }
    }
}

impl Serialize for Tool {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tool::Name(name) => name.serialize(s),
            Tool::Spec(spec) => spec.serialize(s),
        }
    }
}

impl JsonSchema for Tool {
    fn schema_name() -> Cow<'static, str> {
        "Tool".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let spec = generator.subschema_for::<ToolSpec>();
        json_schema!({
            "description": "A tool name, or a full tool specification.",
            "anyOf": [{"type": "string", "minLength": 1}, spec]
        })
    }
}

/// A full tool specification.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The tool's name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// What the tool does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema for the tool's arguments. The editor schema accepts any object
    /// here; `prill validate` checks that it is a valid JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "parameters_schema")]
    pub parameters: Option<JsonMap>,
}

/// Any object, not a `$ref` to the remote meta-schema: an editor that cannot fetch a
/// reference skips the whole file, so every schema stands alone. `prill validate` checks
/// that the object is a valid JSON Schema (`validate::sentinel::json_schema_problem`).
fn parameters_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object"})
}

/// One check on a model's output, written as a single-key object.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Assertion {
    /// The output contains every text (in any letter case, unless asked otherwise).
    MustContain(TextMatch),
    /// The output contains none of the texts (in any letter case, unless asked otherwise).
    MustNotContain(TextMatch),
    /// The output matches this regular expression (Rust `regex` syntax, multi-line,
    /// `.` matching newlines, as Sentinel compiles it).
    RegexMatch(Pattern),
    /// Every named tool is among the tool calls.
    MustCallTool(#[schemars(schema_with = "tool_names_schema")] Vec<String>),
    /// The output is of this kind.
    OutputType(OutputType),
    /// The response took at most this many milliseconds.
    MaxLatencyMs(#[schemars(range(min = 1))] u64),
    /// The output has at least this many tokens.
    MinTokens(u64),
    /// The output has at most this many tokens.
    MaxTokens(#[schemars(range(min = 1))] u64),
    /// These tools were called in this order (a Prill extension).
    ToolSequence(ToolSequence),
    /// None of the named tools was called (a Prill extension).
    MustNotCallTool(#[schemars(schema_with = "tool_names_schema")] Vec<String>),
    /// Some call of a tool had arguments matching (a Prill extension).
    ToolArgs(Box<ToolArgs>),
    /// At most this many tool calls were made (a Prill extension).
    MaxToolCalls(u64),
    /// At least this many tool calls were made (a Prill extension).
    MinToolCalls(#[schemars(range(min = 1))] u64),
    /// The model was called at most this many times (a Prill extension; a single
    /// model call counts 1).
    MaxIterationsUsed(#[schemars(range(min = 1))] u64),
    /// The graph's nodes ran as the sequence says, names matched to steps in its mode
    /// (a LangGraph run; a Prill extension).
    GraphSteps(#[schemars(schema_with = "graph_steps_schema")] ToolSequence),
    /// The judge finds that the whole trajectory (every tool call with its arguments and
    /// result, then the final answer) meets these criteria (a Prill extension).
    TrajectoryGist(#[schemars(length(min = 1))] String),
    /// The judge finds that the whole trajectory does not meet these criteria (a Prill
    /// extension).
    NotTrajectoryGist(#[schemars(length(min = 1))] String),
    /// The end state of the test's tool program holds (a Prill extension).
    ExpectState(Box<ExpectState>),
    /// The calls a mocked tool received were as its `expect_calls` says: written in
    /// `framework_config.tool_results`, never in `assertions`, and checked beside them.
    #[schemars(skip)]
    ExpectCalls(Box<MockCalls>),
}

fn graph_steps_schema(_: &mut SchemaGenerator) -> Schema {
    let names = serde_json::json!({"type": "array", "items": {"type": "string", "minLength": 1}});
    let mut modes: Vec<&str> = SequenceMode::NAMES.to_vec();
    modes.extend(SequenceMode::ALIASES.iter().map(|(a, _)| *a));
    json_schema!({
        "description": "The nodes of a LangGraph run, by name, in the order they ran (others allowed between them); or `{tools: [...], mode}` with `tool_sequence`'s modes and `score: f1`. A Prill extension.",
        "anyOf": [
            {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
            {
                "type": "object",
                "properties": {
                    "tools": names,
                    "mode": {"enum": modes, "default": "in_order"},
                    "strict": {"type": "boolean", "default": false},
                    "score": {"const": "f1"},
                    "threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}
                },
                "required": ["tools"],
                "additionalProperties": false
            }
        ]
    })
}

fn tool_names_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "anyOf": [
            {"type": "string", "minLength": 1},
            {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
        ]
    })
}

impl Assertion {
    /// Every assertion's name.
    pub const NAMES: [&'static str; 18] = [
        "must_contain",
        "must_not_contain",
        "regex_match",
        "must_call_tool",
        "output_type",
        "max_latency_ms",
        "min_tokens",
        "max_tokens",
        "tool_sequence",
        "must_not_call_tool",
        "tool_args",
        "max_tool_calls",
        "min_tool_calls",
        "max_iterations_used",
        "graph_steps",
        "trajectory_gist",
        "not_trajectory_gist",
        "expect_state",
    ];

    /// The assertion's name as written.
    pub fn name(&self) -> &'static str {
        match self {
            Assertion::MustContain(_) => "must_contain",
            Assertion::MustNotContain(_) => "must_not_contain",
            Assertion::RegexMatch(_) => "regex_match",
            Assertion::MustCallTool(_) => "must_call_tool",
            Assertion::OutputType(_) => "output_type",
            Assertion::MaxLatencyMs(_) => "max_latency_ms",
            Assertion::MinTokens(_) => "min_tokens",
            Assertion::MaxTokens(_) => "max_tokens",
            Assertion::ToolSequence(_) => "tool_sequence",
            Assertion::MustNotCallTool(_) => "must_not_call_tool",
            Assertion::ToolArgs(_) => "tool_args",
            Assertion::MaxToolCalls(_) => "max_tool_calls",
            Assertion::MinToolCalls(_) => "min_tool_calls",
            Assertion::MaxIterationsUsed(_) => "max_iterations_used",
            Assertion::GraphSteps(_) => "graph_steps",
            Assertion::TrajectoryGist(_) => "trajectory_gist",
            Assertion::NotTrajectoryGist(_) => "not_trajectory_gist",
            Assertion::ExpectState(_) => "expect_state",
            Assertion::ExpectCalls(_) => "expect_calls",
        }
    }
}

/// The kinds of output `output_type` can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutputType {
    /// A JSON document.
    Json,
    /// Plain prose.
    Text,
    /// Markdown.
    Markdown,
    /// Source code.
    Code,
    /// Structured data (a JSON object or array, possibly fenced).
    Structured,
}

impl OutputType {
    /// Every kind's name.
    pub const NAMES: [&'static str; 5] = ["json", "text", "markdown", "code", "structured"];

    /// The kind's name as written.
    pub fn name(self) -> &'static str {
        match self {
            OutputType::Json => "json",
            OutputType::Text => "text",
            OutputType::Markdown => "markdown",
            OutputType::Code => "code",
            OutputType::Structured => "structured",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<OutputType> {
        match name {
            "json" => Some(OutputType::Json),
            "text" => Some(OutputType::Text),
            "markdown" => Some(OutputType::Markdown),
            "code" => Some(OutputType::Code),
            "structured" => Some(OutputType::Structured),
            _ => None,
        }
    }
}

/// What `must_contain` and `must_not_contain` look for: one text or several, written
/// as a string, a list, or `{text: ..., case_sensitive: true}`.
///
/// Sentinel lowercases both the output and the text before it looks, so by default
/// letter case does not count; `case_sensitive: true` asks for the exact text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMatch {
    /// The texts, in file order: each must appear (`must_contain`), none may
    /// (`must_not_contain`).
    pub texts: Vec<String>,
    /// Whether letter case counts.
    pub case_sensitive: bool,
}

impl TextMatch {
    /// One text, matched in any letter case.
    pub fn new(text: impl Into<String>) -> TextMatch {
        TextMatch {
            texts: vec![text.into()],
            case_sensitive: false,
        }
    }

    /// Several texts, matched in any letter case.
    pub fn all<S: Into<String>>(texts: impl IntoIterator<Item = S>) -> TextMatch {
        TextMatch {
            texts: texts.into_iter().map(Into::into).collect(),
            case_sensitive: false,
        }
    }

    /// The same texts, matched with or without regard to letter case.
    pub fn case_sensitive(mut self, yes: bool) -> TextMatch {
        self.case_sensitive = yes;
        self
    }
}

impl Serialize for TextMatch {
    /// As written: a string for one text, a list for several, and the object form
    /// when letter case counts.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let text = match self.texts.as_slice() {
            [one] => serde_json::Value::from(one.as_str()),
            many => serde_json::Value::from(many.to_vec()),
        };
        if !self.case_sensitive {
            return text.serialize(s);
        }
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("text", &text)?;
        map.serialize_entry("case_sensitive", &true)?;
        map.end()
    }
}

impl JsonSchema for TextMatch {
    fn schema_name() -> Cow<'static, str> {
        "TextMatch".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let texts = serde_json::json!({
            "anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
            ]
        });
        json_schema!({
            "description": "A text, or a list of texts, matched in any letter case as Sentinel does; `{text, case_sensitive: true}` matches the exact letter case.",
            "anyOf": [
                texts.clone(),
                {
                    "type": "object",
                    "properties": {
                        "text": texts,
                        "case_sensitive": {"type": "boolean", "default": false}
                    },
                    "required": ["text"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// A regular expression (Rust `regex` syntax), compiled once when the spec is validated.
///
/// Compiled as Sentinel compiles its patterns (Python's `re.MULTILINE | re.DOTALL`):
/// `^` and `$` match at every line's start and end, and `.` matches a newline too.
///
/// Clones share one compiled expression *and its search caches* (a cloned
/// `regex::Regex` would start a cache pool of its own and build its lazy DFA again), so
/// the thousands of tests of a suite that use one pattern (the loader hands them one
/// `Pattern` per distinct pattern) warm a single cache.
#[derive(Debug, Clone)]
pub struct Pattern(std::sync::Arc<regex::Regex>);

impl Pattern {
    /// Compiles `pattern` with multi-line anchors and `.` matching newlines.
    pub fn new(pattern: &str) -> Result<Pattern, regex::Error> {
        regex::RegexBuilder::new(pattern)
            .multi_line(true)
            .dot_matches_new_line(true)
            .build()
            .map(|r| Pattern(std::sync::Arc::new(r)))
    }

    /// Whether `self` and `other` are one compiled expression (clones of one
    /// `Pattern`), sharing their caches.
    pub fn shares(&self, other: &Pattern) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }

    /// The compiled expression.
    pub fn regex(&self) -> &regex::Regex {
        &self.0
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_str().serialize(s)
    }
}

impl JsonSchema for Pattern {
    fn schema_name() -> Cow<'static, str> {
        "Pattern".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A regular expression in Rust `regex` syntax, compiled multi-line with `.` matching newlines (Python's re.MULTILINE | re.DOTALL, as Sentinel compiles it).",
            "type": "string",
            "format": "regex"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_type_names_round_trip_and_match_serde() {
        for name in OutputType::NAMES {
            let kind = OutputType::from_name(name).expect("a listed name");
            assert_eq!(kind.name(), name);
            assert_eq!(serde_json::to_value(kind).unwrap(), name);
        }
        assert_eq!(OutputType::from_name("yaml"), None);
    }
}
