//! The normalized plan every dialect becomes: cases → interactions → checks.
//!
//! Later crates consume only this. A case's [`Case::id`] is a hash of its inputs, so
//! editing an expectation keeps the id and editing an input changes it.

use crate::model::provider::ProviderName;
use crate::redact::Redactor;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::model::data_driven::{
    ChatFilter, Connection, DataDrivenCase, FieldChecks, JsonMap, StockCheck, StockTest,
    TrajectoryChecks, TrajectorySource,
};
pub use crate::model::gate::Gate;
use crate::model::sentinel::{
    Assertion, Framework, Message, ModelConfig, TestSpec, TestSuite, Tool,
};

mod id;
pub mod repeated;
pub mod under;

pub use repeated::{Claims, repeated_ids};

/// The longest id a case may have, as the Autoblocks SDK requires of hashes.
pub const MAX_ID_LEN: usize = 100;

/// Which dialect a file is written in, or [`Dialect::RustSuite`] for cases that come
/// from no file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// A neuro-san data-driven test case.
    DataDriven,
    /// A Sentinel TestSpec.
    SentinelSpec,
    /// A Sentinel TestSuite.
    SentinelSuite,
    /// The project configuration, `prill.toml`.
    Config,
    /// No file: test cases run by Rust code through `prill_run::run_test_suite`, which
    /// reports them as units of this dialect. No file is detected as one, and it has no
    /// schema.
    RustSuite,
}

impl Dialect {
    /// The dialect's name, as `prill schema` and `prill list` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::DataDriven => "data-driven",
            Dialect::SentinelSpec => "sentinel-spec",
            Dialect::SentinelSuite => "sentinel-suite",
            Dialect::Config => "config",
            Dialect::RustSuite => "rust-suite",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every case of a set of files.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Plan {
    /// The cases, in file order.
    pub cases: Vec<Case>,
    /// The values the cases' files read from the environment (`${VAR}`), which the
    /// cases send but nothing may show: a run hides them in every event it reports
    /// (`prill_app::Session`). Empty unless the loader fills it
    /// ([`crate::inputs::Inputs::redactor`]).
    #[serde(skip)]
    pub secrets: Redactor,
}

/// One test case, ready to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Case {
    /// A stable hash of the case's inputs: 12 hex digits, with `-2`, `-3`, ... added
    /// when cases in one plan have the same inputs.
    pub id: Box<str>,
    /// A readable name: the test's name, or for a data-driven file its folder and stem.
    pub name: Box<str>,
    /// The dialect the case was written in.
    pub dialect: Dialect,
    /// The file it came from, shared by the cases of one file.
    pub file: Arc<Path>,
    /// Labels for selection. A Sentinel test's `category` is one of them.
    pub tags: Box<[String]>,
    /// The category a Sentinel test names (`qa`, `tool-use`, ...), as metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<Box<str>>,
    /// What is tested.
    pub target: Target,
    /// What decides the verdict from the samples: `k/n`, or a `reliability` test.
    pub gate: Gate,
    /// Whether the case's file stated its gate. A case that states none is held to
    /// `1/1` until a project default replaces it ([`Plan::default_gate`]).
    #[serde(skip)]
    pub gate_stated: bool,
    /// A limit on each sample.
    #[serde(with = "opt_secs")]
    pub timeout: Option<Duration>,
    /// The conversation, in order.
    pub interactions: Vec<Step>,
    /// Texts that must not appear in any answer (kept from neuro-san load-test files).
    pub failure_patterns: Box<[String]>,
    /// The simulated user that carries the conversation on after `interactions`, when
    /// the case has one (boxed: most cases have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<Box<crate::model::user::SimulatedUser>>,
    /// The entry of `prill-quarantine.toml` that lists the case, when one does: it runs
    /// and is reported, but does not gate. Set by the application, never by a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantine: Option<Arc<crate::model::quarantine::Entry>>,
    /// The index of the case's first sample: 0, except when more samples of a case are
    /// drawn after those a run took (`prill compare --top-up`), which are numbered on
    /// from them, so that caches, cassettes and agents that draw by the sample's index
    /// see new samples rather than the same ones again. Set by the application.
    #[serde(skip)]
    pub first_sample: u32,
}

/// What a case tests.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// An agent, over one or more connections.
    Agent {
        /// The agent's name.
        agent: String,
        /// Each connection runs the conversation afresh.
        connections: Vec<Connection>,
        /// Whether external agents are reached in-process.
        use_direct: bool,
        /// Request metadata (boxed: most cases have none, and a map is 72 bytes inline).
        metadata: Option<Box<JsonMap>>,
        /// Where the trajectory checks read the tool calls from.
        #[serde(skip_serializing_if = "TrajectorySource::is_stream")]
        trajectory: TrajectorySource,
        /// Where `expect_state` reads the state of the agent's environment when the
        /// conversation is over: a path on its server, or an http(s) URL.
        #[serde(skip_serializing_if = "Option::is_none")]
        state_endpoint: Option<Box<str>>,
    },
    /// A model through a provider.
    Model {
        /// The model's name, shared by the cases of a file that name the same model.
        model: Arc<str>,
        /// The provider, when given: a kind, or a name from `[providers]`.
        provider: Option<ProviderName>,
        /// Tools offered.
        tools: Box<[Tool]>,
        /// The framework, when given.
        framework: Option<Framework>,
        /// Framework settings (boxed, as the other rarely given parts: a plan holds
        /// every case at once, and a `None` costs its full size inline).
        framework_config: Option<Box<JsonMap>>,
        /// Sampling parameters.
        model_config: Option<Box<ModelConfig>>,
        /// The seed.
        seed: Option<i64>,
    },
}

/// One interaction: what is sent, and the checks on what comes back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// What is sent.
    pub input: Input,
    /// A limit on this interaction.
    #[serde(with = "opt_secs")]
    pub timeout: Option<Duration>,
    /// How much the server sends back.
    pub chat_filter: ChatFilter,
    /// Whether the next step continues this conversation.
    pub continue_conversation: bool,
    /// The checks, in file order.
    pub checks: Vec<Check>,
}

/// What one interaction sends.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Input {
    /// The user message.
    pub text: Option<String>,
    /// Private data (data-driven; boxed, as [`Input::context`]).
    pub sly_data: Option<Box<JsonMap>>,
    /// Prior messages (Sentinel).
    pub messages: Vec<Message>,
    /// System instructions (Sentinel; boxed text, so that a step is 128 bytes, a size
    /// class of its own, rather than 136 in a class of 160).
    pub system_prompt: Option<Box<str>>,
    /// Free-form context (Sentinel; boxed: a map is 72 bytes inline, and most
    /// interactions have none).
    pub context: Option<Box<JsonMap>>,
}

/// One check on a response.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Where it is written in its case's own definition:
    /// `interactions[0].response.structure.answer.keywords[1]` in a data-driven file,
    /// `assertions[1].must_not_contain` in a Sentinel test. A suite's test is a case of
    /// its own, so its checks' paths do not name the test (`tests[i]`): they stay the
    /// same when tests are added before it, and [`Check::location`] gives the line.
    /// Shared (an `Arc`): a suite's tests mostly have the same checks, and a plan holds
    /// every case at once, so each path is written once ([`Shared`]).
    pub path: Arc<str>,
    /// What it checks.
    pub kind: CheckKind,
    /// Its place in the file, when the case was loaded from one
    /// ([`crate::load::Loaded::cases`] fills it; cases built in code have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

impl Check {
    /// A check at `path`, with no place in a file.
    pub fn new(path: impl Into<Arc<str>>, kind: CheckKind) -> Check {
        Check {
            path: path.into(),
            kind,
            location: None,
        }
    }
}

/// A place in a test file: 1-based line and column (in characters), as editors and
/// `file:line:col` links count them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
pub struct Location {
    /// The line, from 1. Never 0, so that an absent place costs nothing: a check with
    /// its `Option<Location>` is 80 bytes, and a case's three checks fit in 256.
    pub line: std::num::NonZeroU32,
    /// The column, from 1, in characters.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The part of a response a stock test looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The answer text.
    Text,
    /// The returned sly_data.
    SlyData,
    /// The returned structure.
    Structure,
}

impl Part {
    /// The part's name.
    pub fn name(self) -> &'static str {
        match self {
            Part::Text => "text",
            Part::SlyData => "sly_data",
            Part::Structure => "structure",
        }
    }
}

/// What a check checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CheckKind {
    /// A stock test against one given value.
    Stock {
        /// The part of the response.
        part: Part,
        /// The field path inside sly_data or structure; empty for text.
        field: Vec<String>,
        /// The test.
        test: StockTest,
        /// Whether it is the `not_` form.
        negated: bool,
        /// The given value (boxed: a JSON value is 72 bytes inline, and every check of
        /// a plan, of any kind, is as large as this variant).
        expected: Box<serde_json::Value>,
    },
    /// The field must be present (`{}` in a file).
    Present {
        /// The part of the response.
        part: Part,
        /// The field path.
        field: Vec<String>,
    },
    /// A Sentinel assertion.
    Assertion(Assertion),
}

impl CheckKind {
    /// Whether a judge decides it: `gist`, `trajectory_gist` and their `not_` forms.
    pub fn needs_judge(&self) -> bool {
        matches!(
            self,
            CheckKind::Stock {
                test: StockTest::Gist,
                ..
            } | CheckKind::Assertion(
                Assertion::TrajectoryGist(_) | Assertion::NotTrajectoryGist(_)
            )
        )
    }
}

mod opt_secs {
    use std::time::Duration;

    use serde::Serializer;

    pub(super) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
}

fn seconds(s: Option<f64>) -> Option<Duration> {
    s.and_then(|s| Duration::try_from_secs_f64(s).ok())
}

/// The first 12 hex digits of the SHA-256 of `inputs`' canonical JSON.
pub fn hash_inputs(inputs: &serde_json::Value) -> String {
    // The canonical text goes straight into the hash, never into a string of its own.
    let mut hasher = HashWriter(Sha256::new());
    write_canonical(inputs, &mut hasher);
    short_id(hasher)
}

/// Writes `,"key":` and `value` in canonical JSON: one member of an object whose keys
/// are written in sorted order. A value that cannot be JSON (none here can) is `null`.
fn canonical_field(out: &mut impl std::io::Write, key: &str, value: &impl Serialize) {
    let _ = out.write_all(b",");
    let _ = serde_json::to_writer(&mut *out, key);
    let _ = out.write_all(b":");
    match serde_json::to_value(value) {
        Ok(value) => write_canonical(&value, out),
        Err(_) => {
            let _ = out.write_all(b"null");
        }
    }
}

/// The first 12 hex digits of what `hasher` has taken.
fn short_id(hasher: HashWriter) -> String {
    let digest = hasher.0.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(12);
    for b in digest.iter().take(6) {
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    id
}

/// Feeds what is written to a SHA-256.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// JSON with object keys sorted, so that key order never changes a hash.
#[cfg(test)]
fn canonical(value: &serde_json::Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes an object as [`write_canonical`] does: its keys sorted.
fn write_canonical_map(
    map: &serde_json::Map<String, serde_json::Value>,
    out: &mut impl std::io::Write,
) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    let _ = out.write_all(b"{");
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            let _ = out.write_all(b",");
        }
        let _ = serde_json::to_writer(&mut *out, k);
        let _ = out.write_all(b":");
        write_canonical(&map[k], out);
    }
    let _ = out.write_all(b"}");
}

/// Writes `value` as JSON with object keys sorted and no spaces: `{"a":1,"b":[true]}`.
fn write_canonical(value: &serde_json::Value, out: &mut impl std::io::Write) {
    // Writing to a hash or a vector cannot fail, nor can serializing a key or a scalar.
    match value {
        serde_json::Value::Object(map) => write_canonical_map(map, out),
        serde_json::Value::Array(items) => {
            let _ = out.write_all(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    let _ = out.write_all(b",");
                }
                write_canonical(item, out);
            }
            let _ = out.write_all(b"]");
        }
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

/// The name of a data-driven case: its folder and file stem, as upstream names tests.
pub fn data_driven_name(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match file.parent().and_then(|p| p.file_name()) {
        Some(dir) => format!("{}/{stem}", dir.to_string_lossy()),
        None => stem,
    }
}

impl DataDrivenCase {
    /// This case as a plan case read from `file`.
    pub fn to_case(&self, file: &Path) -> Case {
        // The simulated user's turns are the last step: their settings, and the checks
        // on the last answer.
        let simulated = self
            .user
            .as_ref()
            .map(|u| ("user.response".to_owned(), &u.turns));
        let interactions: Vec<Step> = self
            .interactions
            .iter()
            .enumerate()
            .map(|(i, it)| (format!("interactions[{i}].response"), it))
            .chain(simulated)
            .map(|(base, it)| {
                let mut checks = Vec::new();
                if let Some(text) = &it.response.text {
                    push_tests(
                        &mut checks,
                        &format!("{base}.text"),
                        Part::Text,
                        &[],
                        &text.tests,
                    );
                }
                if let Some(sly) = &it.response.sly_data {
                    walk_fields(
                        &mut checks,
                        &format!("{base}.sly_data"),
                        Part::SlyData,
                        &mut Vec::new(),
                        sly,
                        false,
                    );
                }
                if let Some(structure) = &it.response.structure {
                    walk_fields(
                        &mut checks,
                        &format!("{base}.structure"),
                        Part::Structure,
                        &mut Vec::new(),
                        structure,
                        false,
                    );
                }
                if let Some(trajectory) = &it.response.trajectory {
                    push_trajectory(&mut checks, &format!("{base}.trajectory"), trajectory);
                }
                Step {
                    input: Input {
                        text: it.text.clone(),
                        sly_data: it.sly_data.clone().map(Box::new),
                        ..Input::default()
                    },
                    timeout: seconds(it.timeout_in_seconds),
                    chat_filter: it.chat_filter,
                    continue_conversation: it.continue_conversation,
                    checks,
                }
            })
            .collect();
        // The end state is checked once the conversation is over: with the last answer.
        let mut interactions = interactions;
        if let (Some(expect), Some(last)) = (&self.expect_state, interactions.last_mut()) {
            last.checks.push(Check::new(
                "expect_state",
                CheckKind::Assertion(Assertion::ExpectState(expect.clone())),
            ));
        }
        let inputs = serde_json::json!({
            "dialect": "data-driven",
            "agent": self.agent,
            "use_direct": self.use_direct,
            "metadata": self.metadata,
            "interactions": self.interactions.iter().map(|it| serde_json::json!({
                "text": it.text,
                "sly_data": it.sly_data,
                "chat_filter": it.chat_filter.name(),
                "continue_conversation": it.continue_conversation,
            })).collect::<Vec<_>>(),
        });
        // The simulated user's brief is an input: only cases with one hash it, so every
        // other id stays as it was.
        let inputs = match &self.user {
            None => inputs,
            Some(user) => {
                let mut inputs = inputs;
                inputs["user"] = serde_json::to_value(&user.brief).unwrap_or_default();
                inputs["user"]["chat_filter"] = serde_json::json!(user.turns.chat_filter.name());
                inputs
            }
        };
        Case {
            id: hash_inputs(&inputs).into(),
            name: data_driven_name(file).into(),
            dialect: Dialect::DataDriven,
            file: Arc::from(file),
            tags: Box::default(),
            category: None,
            target: Target::Agent {
                agent: self.agent.clone(),
                connections: self.connections.clone(),
                use_direct: self.use_direct,
                metadata: self.metadata.clone().map(Box::new),
                trajectory: self.trajectory,
                state_endpoint: self.state_endpoint.as_deref().map(Box::from),
            },
            gate: match (self.reliability, self.success_ratio) {
                (Some(r), _) => Gate::Reliability(r),
                (None, ratio) => Gate::Ratio(ratio.unwrap_or_default()),
            },
            gate_stated: self.reliability.is_some() || self.success_ratio.is_some(),
            timeout: seconds(self.timeout_in_seconds),
            interactions,
            failure_patterns: self.failure_patterns.clone().unwrap_or_default().into(),
            user: self.user.as_ref().map(|u| Box::new(u.brief.clone())),
            quarantine: None,
            first_sample: 0,
        }
    }
}

fn push_tests(
    out: &mut Vec<Check>,
    base: &str,
    part: Part,
    field: &[String],
    tests: &[StockCheck],
) {
    for t in tests {
        let name = t.test.spelled(t.negated);
        let values = t.expected.values();
        let listed = matches!(t.expected, crate::model::data_driven::Expected::All(_));
        for (i, v) in values.into_iter().enumerate() {
            let path = if listed {
                format!("{base}.{name}[{i}]")
            } else {
                format!("{base}.{name}")
            };
            out.push(Check {
                location: None,
                path: path.into(),
                kind: CheckKind::Stock {
                    part,
                    field: field.to_vec(),
                    test: t.test,
                    negated: t.negated,
                    expected: Box::new(v.clone()),
                },
            });
        }
    }
}

/// A `trajectory` part's checks, as the Sentinel assertions of the same names.
fn push_trajectory(out: &mut Vec<Check>, base: &str, checks: &TrajectoryChecks) {
    let mut push = |name: &str, assertion: Assertion| {
        out.push(Check {
            location: None,
            path: format!("{base}.{name}").into(),
            kind: CheckKind::Assertion(assertion),
        });
    };
    if let Some(sequence) = &checks.tool_sequence {
        push("tool_sequence", Assertion::ToolSequence(sequence.clone()));
    }
    if let Some(names) = &checks.must_call_tool {
        push("must_call_tool", Assertion::MustCallTool(names.clone()));
    }
    if let Some(names) = &checks.must_not_call_tool {
        push(
            "must_not_call_tool",
            Assertion::MustNotCallTool(names.clone()),
        );
    }
    let listed = checks.tool_args.len() > 1;
    for (i, args) in checks.tool_args.iter().enumerate() {
        let name = if listed {
            format!("tool_args[{i}]")
        } else {
            "tool_args".to_owned()
        };
        push(&name, Assertion::ToolArgs(Box::new(args.clone())));
    }
    if let Some(n) = checks.max_tool_calls {
        push("max_tool_calls", Assertion::MaxToolCalls(n));
    }
    if let Some(n) = checks.min_tool_calls {
        push("min_tool_calls", Assertion::MinToolCalls(n));
    }
    if let Some(criteria) = &checks.gist {
        push("gist", Assertion::TrajectoryGist(criteria.clone()));
    }
    if let Some(criteria) = &checks.not_gist {
        push("not_gist", Assertion::NotTrajectoryGist(criteria.clone()));
    }
}

fn walk_fields(
    out: &mut Vec<Check>,
    base: &str,
    part: Part,
    field: &mut Vec<String>,
    checks: &FieldChecks,
    nested: bool,
) {
    if nested && checks.tests.is_empty() && checks.fields.is_empty() {
        out.push(Check {
            location: None,
            path: base.into(),
            kind: CheckKind::Present {
                part,
                field: field.clone(),
            },
        });
        return;
    }
    push_tests(out, base, part, field, &checks.tests);
    for (name, child) in &checks.fields {
        field.push(name.clone());
        walk_fields(out, &format!("{base}.{name}"), part, field, child, true);
        field.pop();
    }
}

impl TestSpec {
    /// This test as a plan case read from `file`; `suite_tags` are added to its own.
    pub fn to_case(&self, file: &Path, suite_tags: &[String], dialect: Dialect) -> Case {
        self.clone()
            .into_case(&mut Shared::new(file), suite_tags, dialect)
    }

    /// The case's id: [`hash_inputs`] of `{"dialect": "sentinel", "model": ..,
    /// "provider": .., "inputs": .., "tools": .., "framework": .., "framework_config":
    /// .., "model_config": .., "seed": ..}`, its fields written into the hash one by
    /// one, in the canonical (sorted) order, rather than first gathered into one JSON
    /// object.
    #[cfg(test)]
    fn id(&self) -> String {
        use std::io::Write;
        let mut hasher = HashWriter(Sha256::new());
        let _ = hasher.write_all(br#"{"dialect":"sentinel""#);
        canonical_field(&mut hasher, "framework", &self.framework);
        canonical_field(&mut hasher, "framework_config", &self.framework_config);
        canonical_field(&mut hasher, "inputs", &self.inputs);
        canonical_field(&mut hasher, "model", &self.model);
        canonical_field(&mut hasher, "model_config", &self.model_config);
        canonical_field(&mut hasher, "provider", &self.provider);
        canonical_field(&mut hasher, "seed", &self.seed);
        canonical_field(&mut hasher, "tools", &self.tools);
        let _ = hasher.write_all(b"}");
        short_id(hasher)
    }

    /// [`TestSpec::to_case`], moving the test's fields into the case rather than
    /// copying them, and sharing with the file's other cases what `shared` keeps.
    pub fn into_case(self, shared: &mut Shared, suite_tags: &[String], dialect: Dialect) -> Case {
        let id = self.id_with(&mut shared.ids);
        let mut checks: Vec<Check> = self
            .assertions
            .into_iter()
            .enumerate()
            .map(|(i, a)| Check {
                location: None,
                path: shared.assertion_path(i, a.name()),
                kind: CheckKind::Assertion(a),
            })
            .collect();
        checks.extend(mock_checks(self.framework, self.framework_config.as_ref()));
        let mut tags = self.tags.unwrap_or_default();
        for t in self.category.iter().chain(suite_tags) {
            if !tags.contains(t) {
                tags.push(t.clone());
            }
        }
        // An empty input says nothing, and is not sent (as in Sentinel).
        let said = |s: Option<String>| s.filter(|s| !s.is_empty());
        let inputs_of = self.inputs;
        Case {
            id: id.into(),
            name: self.name.into(),
            dialect,
            file: Arc::clone(&shared.file),
            tags: tags.into(),
            category: self.category.map(String::into_boxed_str),
            target: Target::Model {
                model: shared.model(self.model),
                provider: self.provider,
                tools: self.tools.unwrap_or_default().into(),
                framework: self.framework,
                framework_config: self.framework_config.map(Box::new),
                model_config: self.model_config.map(Box::new),
                seed: self.seed,
            },
            gate: self
                .reliability
                .map_or_else(Gate::default, Gate::Reliability),
            gate_stated: self.reliability.is_some(),
            timeout: self.timeout_ms.map(Duration::from_millis),
            interactions: vec![Step {
                input: Input {
                    text: said(inputs_of.query),
                    sly_data: None,
                    messages: inputs_of.messages.unwrap_or_default(),
                    system_prompt: said(inputs_of.system_prompt).map(String::into_boxed_str),
                    context: inputs_of.context.filter(|c| !c.is_empty()).map(Box::new),
                },
                timeout: None,
                chat_filter: ChatFilter::Minimal,
                continue_conversation: true,
                checks,
            }],
            failure_patterns: Box::default(),
            user: self.user.map(Box::new),
            quarantine: None,
            first_sample: 0,
        }
    }
}

/// The checks a tool loop's mocks ask for (`framework_config.tool_results.<tool>.expect_calls`),
/// after the test's assertions, in tool name order.
fn mock_checks(framework: Option<Framework>, config: Option<&JsonMap>) -> Vec<Check> {
    use crate::model::framework::{FrameworkConfig, MockCalls};
    let Some(framework) = framework else {
        return Vec::new();
    };
    let Ok(FrameworkConfig::Loop(config)) = FrameworkConfig::parse(framework, config) else {
        return Vec::new();
    };
    config
        .tool_results
        .into_iter()
        .filter_map(|(tool, results)| {
            let expect = results.expect_calls?;
            Some(Check::new(
                format!("framework_config.tool_results.{tool}.expect_calls"),
                CheckKind::Assertion(Assertion::ExpectCalls(Box::new(MockCalls { tool, expect }))),
            ))
        })
        .collect()
}

/// What the cases of one file share rather than each keeping a copy: the file's path,
/// the model when a test names the one the test before it named (as a suite's tests
/// that take their suite's model do), and the paths of the first assertions, which a
/// suite's tests mostly have alike (a suite of 100,000 tests has three or so, not
/// 300,000). A plan holds every case at once.
#[derive(Debug, Clone)]
pub struct Shared {
    file: Arc<Path>,
    model: Option<Arc<str>>,
    paths: std::collections::HashMap<(usize, &'static str), Arc<str>>,
    /// What the last Sentinel test's id was made of, besides its inputs.
    ids: id::IdParts,
}

impl Shared {
    /// The assertions whose paths are kept: past these, each path is written anew, so
    /// what is kept stays small whatever a test holds.
    const KEPT: usize = 16;

    /// Nothing shared yet by the cases of `file`.
    pub fn new(file: &Path) -> Shared {
        Shared {
            file: Arc::from(file),
            model: None,
            paths: std::collections::HashMap::new(),
            ids: id::IdParts::default(),
        }
    }

    /// `model`, as the case before named it when it named the same.
    fn model(&mut self, model: String) -> Arc<str> {
        match &self.model {
            Some(last) if **last == *model => Arc::clone(last),
            _ => Arc::clone(self.model.insert(Arc::from(model))),
        }
    }

    /// The path of a Sentinel test's assertion `i`, named `name`:
    /// `assertions[{i}].{name}`.
    fn assertion_path(&mut self, i: usize, name: &'static str) -> Arc<str> {
        let write = || Arc::from(format!("assertions[{i}].{name}"));
        if i >= Self::KEPT {
            return write();
        }
        Arc::clone(self.paths.entry((i, name)).or_insert_with(write))
    }
}

impl TestSuite {
    /// Every test of the suite as plan cases read from `file`.
    pub fn to_cases(&self, file: &Path) -> Vec<Case> {
        self.clone().into_cases(file)
    }

    /// [`TestSuite::to_cases`], moving each test into its case: each test is freed as
    /// its case is made, so the suite and its plan are not held whole at once.
    pub fn into_cases(self, file: &Path) -> Vec<Case> {
        let mut cases = Vec::with_capacity(self.tests.len());
        self.into_cases_each(file, |_, case| cases.push(case));
        cases
    }

    /// [`TestSuite::into_cases`], handing each case to `each` with its test's index as
    /// soon as it is made: what the caller keeps of the test's source (the loader, its
    /// part of the tree) can be freed test by test.
    pub fn into_cases_each(self, file: &Path, mut each: impl FnMut(usize, Case)) {
        let suite_tags = self.tags.unwrap_or_default();
        let mut shared = Shared::new(file);
        for (i, t) in self.tests.into_iter().enumerate() {
            each(
                i,
                t.into_case(&mut shared, &suite_tags, Dialect::SentinelSuite),
            );
        }
    }
}

/// A plan lent to whoever runs it (`prill_run::run_plan`), which copies each case.
impl<'a> From<&'a Plan> for std::borrow::Cow<'a, Plan> {
    fn from(plan: &'a Plan) -> Self {
        std::borrow::Cow::Borrowed(plan)
    }
}

/// A plan given to whoever runs it, which moves each case out and frees it when done.
impl From<Plan> for std::borrow::Cow<'_, Plan> {
    fn from(plan: Plan) -> Self {
        std::borrow::Cow::Owned(plan)
    }
}

impl Plan {
    /// A plan of `cases`, giving cases with equal inputs distinct ids (`-2`, `-3`, ...),
    /// in the order they were found.
    pub fn new(cases: Vec<Case>) -> Plan {
        Plan::claimed(cases, &Claims::new())
    }

    /// [`Plan::new`], but an id `claims` gives to a file goes to that file's case: a
    /// file keeps its case's id when a copy of it is added in another file
    /// ([`repeated`]).
    pub fn claimed(mut cases: Vec<Case>, claims: &Claims) -> Plan {
        repeated::number(&mut cases, claims);
        Plan {
            cases,
            secrets: Redactor::default(),
        }
    }

    /// Holds every case whose file states no gate to `gate` (`prill.toml`'s
    /// `reliability`).
    pub fn default_gate(&mut self, gate: Gate) {
        for case in self.cases.iter_mut().filter(|c| !c.gate_stated) {
            case.gate = gate;
        }
    }

    /// Holds every case to `gate`, whatever its file states (`--reliability`).
    pub fn override_gate(&mut self, gate: Gate) {
        for case in &mut self.cases {
            case.gate = gate;
            case.gate_stated = true;
        }
    }

    /// Every check of every case, with its case.
    pub fn checks(&self) -> impl Iterator<Item = (&Case, &Check)> {
        self.cases.iter().flat_map(|c| {
            c.interactions
                .iter()
                .flat_map(move |s| s.checks.iter().map(move |k| (c, k)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_hash_is_the_sha256_of_the_canonical_text() {
        // Ids are kept in histories and last-run files: the canonical text (keys sorted,
        // no spaces, strings escaped as serde_json does) must never change.
        let inputs = serde_json::json!({"b": 1, "a": [1, {"y": "é\n\"", "x": null}], "c": 1.5});
        let text = r#"{"a":[1,{"x":null,"y":"é\n\""}],"b":1,"c":1.5}"#;
        assert_eq!(canonical(&inputs), text);
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        assert_eq!(hash_inputs(&inputs), hex);
    }

    #[test]
    fn canonical_json_ignores_key_order() {
        let a = serde_json::json!({"b": 1, "a": [1, {"y": 2, "x": 3}]});
        let b = serde_json::json!({"a": [1, {"x": 3, "y": 2}], "b": 1});
        assert_eq!(hash_inputs(&a), hash_inputs(&b));
        assert_ne!(hash_inputs(&a), hash_inputs(&serde_json::json!({"a": 1})));
        assert_eq!(hash_inputs(&a).len(), 12);
    }

    #[test]
    fn a_suite_tests_check_paths_are_written_within_it_and_shared() {
        let mut text = String::from("name: s\ntests:\n");
        for i in 0..20 {
            text.push_str(&format!(
                "  - name: t{i}\n    model: m\n    inputs: {{query: q}}\n"
            ));
            text.push_str("    assertions:\n");
            text.push_str(&"      - must_contain: x\n".repeat(18));
        }
        let loaded = crate::load::load_str(
            Path::new("s.yaml"),
            &text,
            &crate::Env::default(),
            crate::Unrecognized::Error,
        )
        .expect("a test file");
        assert!(loaded.is_valid(), "{:?}", loaded.outcome);
        let cases = loaded.cases();
        let paths = |case: &Case| -> Vec<Arc<str>> {
            case.interactions[0]
                .checks
                .iter()
                .map(|c| c.path.clone())
                .collect()
        };
        let (first, last) = (paths(&cases[0]), paths(&cases[19]));
        assert_eq!(&*first[0], "assertions[0].must_contain");
        assert_eq!(&*last[17], "assertions[17].must_contain");
        assert_eq!(first, last, "a test's paths do not name the test");
        // The first assertions' paths are one text for every test of the file; past
        // those, each test writes its own.
        assert!(Arc::ptr_eq(&first[0], &last[0]));
        assert!(Arc::ptr_eq(&first[15], &last[15]));
        assert!(!Arc::ptr_eq(&first[16], &last[16]));
        // The file and the model are shared too.
        assert!(Arc::ptr_eq(&cases[0].file, &cases[19].file));
        let model = |case: &Case| match &case.target {
            Target::Model { model, .. } => Arc::clone(model),
            other => panic!("{other:?}"),
        };
        assert!(Arc::ptr_eq(&model(&cases[0]), &model(&cases[19])));
    }

    #[test]
    fn a_data_driven_expect_state_is_checked_with_the_last_answer_and_its_endpoint_is_the_targets()
    {
        let text = "agent: shop\nconnections: [http]\nstate_endpoint: /shop/state\ninteractions:\n  - text: hi\n  - text: cancel W1\nexpect_state: {paths: {\"$.W1\": cancelled}}\n";
        let loaded = crate::load::load_str(
            Path::new("shop.yaml"),
            text,
            &crate::Env::default(),
            crate::Unrecognized::Error,
        )
        .expect("a test file");
        assert!(loaded.is_valid(), "{:?}", loaded.outcome);
        let case = loaded.cases().remove(0);
        let Target::Agent { state_endpoint, .. } = &case.target else {
            panic!("{:?}", case.target);
        };
        assert_eq!(state_endpoint.as_deref(), Some("/shop/state"));
        assert!(case.interactions[0].checks.is_empty());
        let last = &case.interactions[1].checks;
        assert_eq!(last.len(), 1);
        assert_eq!(&*last[0].path, "expect_state");
        assert!(matches!(
            last[0].kind,
            CheckKind::Assertion(Assertion::ExpectState(_))
        ));
    }

    /// A case of id `id` from `file`.
    fn case_in(id: &str, file: &str) -> Case {
        Case {
            id: id.into(),
            name: "".into(),
            dialect: Dialect::DataDriven,
            file: Arc::from(Path::new(file)),
            tags: Box::default(),
            category: None,
            target: Target::Agent {
                agent: "a".into(),
                connections: vec![],
                use_direct: false,
                metadata: None,
                trajectory: Default::default(),
                state_endpoint: None,
            },
            gate: Gate::default(),
            gate_stated: false,
            timeout: None,
            interactions: vec![],
            failure_patterns: Box::default(),
            user: None,
            quarantine: None,
            first_sample: 0,
        }
    }

    /// A copy of a case added in a file found first does not take the id of the file
    /// that had it; the claim of a file that no longer has such a case is no claim.
    #[test]
    fn a_claimed_id_stays_with_its_file() {
        let ids = |plan: &Plan| -> Vec<(String, String)> {
            plan.cases
                .iter()
                .map(|c| (c.id.to_string(), c.file.display().to_string()))
                .collect()
        };
        let cases = || {
            vec![
                case_in("x", "a_copy.yaml"),
                case_in("y", "b.yaml"),
                case_in("x", "tests/x.yaml"),
            ]
        };
        assert_eq!(repeated_ids(&cases()), ["x", "x-2"]);
        let unclaimed = Plan::new(cases());
        assert_eq!(unclaimed.cases[0].id.as_ref(), "x", "first found, bare");
        let claims: Claims = [("x".to_owned(), PathBuf::from("./tests/x.yaml"))].into();
        let plan = Plan::claimed(cases(), &claims);
        assert_eq!(
            ids(&plan),
            [
                ("x-2".to_owned(), "a_copy.yaml".to_owned()),
                ("y".to_owned(), "b.yaml".to_owned()),
                ("x".to_owned(), "tests/x.yaml".to_owned()),
            ]
        );
        let gone: Claims = [("x".to_owned(), PathBuf::from("elsewhere.yaml"))].into();
        assert_eq!(ids(&Plan::claimed(cases(), &gone)), ids(&unclaimed));
        // `x-2` claimed by the copy, `x` by nobody: the other case is bare.
        let second: Claims = [("x-2".to_owned(), PathBuf::from("a_copy.yaml"))].into();
        assert_eq!(ids(&Plan::claimed(cases(), &second)), ids(&plan));
    }

    #[test]
    fn duplicate_ids_get_suffixes() {
        let case = |id: &str| case_in(id, "");
        let plan = Plan::new(vec![case("x"), case("y"), case("x"), case("x")]);
        let ids: Vec<&str> = plan.cases.iter().map(|c| &*c.id).collect();
        assert_eq!(ids, ["x", "y", "x-2", "x-3"]);
        assert!(ids.iter().all(|id| id.len() <= MAX_ID_LEN));
    }

    fn sentinel_cases(yaml: &str) -> Vec<Case> {
        let loaded = crate::load::load_str(
            Path::new("t.yaml"),
            yaml,
            &crate::Env::default(),
            crate::Unrecognized::Error,
        )
        .expect("a test file");
        assert!(loaded.is_valid(), "{:?}", loaded.outcome);
        loaded.cases()
    }

    #[test]
    fn a_category_is_metadata_and_a_tag() {
        let by_suite = sentinel_cases(
            "name: s\ncategory: qa\ndefaults: {model: m}\ntests:\n  - {name: one, inputs: {query: q}, assertions: [{output_type: text}]}\n  - {name: two, category: safety, inputs: {query: q}, assertions: [{output_type: text}]}\n",
        );
        assert_eq!(by_suite[0].category.as_deref(), Some("qa"));
        assert_eq!(by_suite[1].category.as_deref(), Some("safety"));
        let cases = sentinel_cases(
            "name: s\ncategory: ignored\ndefaults: {model: m, category: qa, tags: [a]}\ntags: [suite]\ntests:\n  - {name: one, inputs: {query: q}, assertions: [{output_type: text}]}\n  - {name: two, category: safety, tags: [qa], inputs: {query: q}, assertions: [{output_type: text}]}\n  - {name: three, category: null, inputs: {query: q}, assertions: [{output_type: text}]}\n",
        );
        let got: Vec<(Option<&str>, &[String])> = cases
            .iter()
            .map(|c| (c.category.as_deref(), &*c.tags))
            .collect();
        let tags = |t: &[&str]| t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(got[0], (Some("qa"), tags(&["a", "qa", "suite"]).as_slice()));
        assert_eq!(
            got[1],
            (Some("safety"), tags(&["qa", "safety", "suite"]).as_slice())
        );
        // An explicit null clears the default.
        assert_eq!(got[2], (None, tags(&["a", "suite"]).as_slice()));
    }

    #[test]
    fn null_in_defaults_is_no_default() {
        let cases = sentinel_cases(
            "name: s\ndefaults: {model: null, inputs: null, assertions: null, category: null}\ntests:\n  - {name: t, model: m, inputs: {query: q}, assertions: [{output_type: text}]}\n",
        );
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].category, None);
    }

    #[test]
    fn an_empty_input_beside_others_is_not_sent() {
        let cases = sentinel_cases(
            "name: s\nmodel: m\ninputs: {query: \"\", system_prompt: Greet the user., context: {}}\nassertions: [{output_type: text}]\n",
        );
        let input = &cases[0].interactions[0].input;
        assert_eq!(input.text, None);
        assert_eq!(input.system_prompt.as_deref(), Some("Greet the user."));
        assert_eq!(input.context, None);
    }

    #[test]
    fn a_trajectory_part_becomes_the_sentinel_assertions() {
        let loaded = crate::load::load_str(
            Path::new("t.hocon"),
            r#"agent = a
               interactions = [{ text = q, chat_filter = MAXIMAL, response { trajectory {
                 tool_sequence = [A, B], must_not_call_tool = C, max_tool_calls = 2
                 tool_args = [{tool = A, args {x = 1}}, {tool = B, args {y = {contains = z}}}]
               } } }]"#,
            &crate::Env::default(),
            crate::Unrecognized::Error,
        )
        .expect("a test file");
        assert!(loaded.is_valid(), "{:?}", loaded.outcome);
        let cases = loaded.cases();
        let checks: Vec<(&str, &str)> = cases[0].interactions[0]
            .checks
            .iter()
            .map(|c| match &c.kind {
                CheckKind::Assertion(a) => (&*c.path, a.name()),
                other => panic!("{other:?}"),
            })
            .collect();
        let base = "interactions[0].response.trajectory";
        assert_eq!(
            checks,
            [
                (&*format!("{base}.tool_sequence"), "tool_sequence"),
                (&*format!("{base}.must_not_call_tool"), "must_not_call_tool"),
                (&*format!("{base}.tool_args[0]"), "tool_args"),
                (&*format!("{base}.tool_args[1]"), "tool_args"),
                (&*format!("{base}.max_tool_calls"), "max_tool_calls"),
            ]
        );
        let CheckKind::Assertion(Assertion::MustNotCallTool(names)) =
            &cases[0].interactions[0].checks[1].kind
        else {
            panic!("must_not_call_tool");
        };
        assert_eq!(names, &["C".to_owned()]);
    }

    #[test]
    fn data_driven_names_use_folder_and_stem() {
        assert_eq!(
            data_driven_name(Path::new("a/music_nerd/beatles.hocon")),
            "music_nerd/beatles"
        );
    }
}
