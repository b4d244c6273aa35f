//! A Sentinel test's id, made fast for a file of many tests.
//!
//! The id is the SHA-256 of the test's canonical JSON (`TestSpec::id`): its fields, each
//! written with its object keys sorted. Written generically, each field goes through a
//! `serde_json::Value` first, which for a suite of 10,000 tests was most of the cost of
//! its ids. Here the fields around `inputs` (framework, model, provider, ...), which a
//! suite's tests mostly share, are written once and kept while the next test has them
//! too ([`IdParts`]), and `inputs` is written straight from its fields
//! ([`write_inputs`]). The bytes hashed are the same as the generic way's, which the
//! tests check field by field.

use sha2::{Digest, Sha256};

use super::{HashWriter, canonical_field, short_id, write_canonical_map};
use crate::model::data_driven::JsonMap;
use crate::model::provider::ProviderName;
use crate::model::sentinel::{Framework, InputSpec, ModelConfig, TestSpec, Tool};

/// The canonical JSON of the fields a test's id covers besides its `inputs`, as the
/// test before had them: written again only when a test's differ.
#[derive(Debug, Clone, Default)]
pub(super) struct IdParts {
    /// `framework` and `framework_config`, which come before `inputs`.
    before: Option<(Before, Vec<u8>)>,
    /// `model`, `model_config`, `provider`, `seed` and `tools`, which come after.
    after: Option<(After, Vec<u8>)>,
}

#[derive(Debug, Clone)]
struct Before {
    framework: Option<Framework>,
    framework_config: Option<JsonMap>,
}

#[derive(Debug, Clone)]
struct After {
    model: String,
    model_config: Option<ModelConfig>,
    provider: Option<ProviderName>,
    seed: Option<i64>,
    tools: Option<Vec<Tool>>,
}

impl IdParts {
    /// `,"framework":..,"framework_config":..` of `test`.
    fn before(&mut self, test: &TestSpec) -> &[u8] {
        let kept = self.before.as_ref().is_some_and(|(b, _)| {
            b.framework == test.framework && b.framework_config == test.framework_config
        });
        if !kept {
            let mut bytes = Vec::new();
            canonical_field(&mut bytes, "framework", &test.framework);
            canonical_field(&mut bytes, "framework_config", &test.framework_config);
            let fields = Before {
                framework: test.framework,
                framework_config: test.framework_config.clone(),
            };
            self.before = Some((fields, bytes));
        }
        self.before.as_ref().map_or(&[], |(_, bytes)| bytes)
    }

    /// `,"model":..,"model_config":..,"provider":..,"seed":..,"tools":..` of `test`.
    fn after(&mut self, test: &TestSpec) -> &[u8] {
        let kept = self.after.as_ref().is_some_and(|(a, _)| {
            a.model == test.model
                && a.model_config == test.model_config
                && a.provider == test.provider
                && a.seed == test.seed
                && a.tools == test.tools
        });
        if !kept {
            let mut bytes = Vec::new();
            canonical_field(&mut bytes, "model", &test.model);
            canonical_field(&mut bytes, "model_config", &test.model_config);
            canonical_field(&mut bytes, "provider", &test.provider);
            canonical_field(&mut bytes, "seed", &test.seed);
            canonical_field(&mut bytes, "tools", &test.tools);
            let fields = After {
                model: test.model.clone(),
                model_config: test.model_config.clone(),
                provider: test.provider.clone(),
                seed: test.seed,
                tools: test.tools.clone(),
            };
            self.after = Some((fields, bytes));
        }
        self.after.as_ref().map_or(&[], |(_, bytes)| bytes)
    }
}

impl TestSpec {
    /// The case's id ([`TestSpec::id`]'s), with what `parts` kept from the test before.
    pub(super) fn id_with(&self, parts: &mut IdParts) -> String {
        let mut hasher = Sha256::new();
        hasher.update(br#"{"dialect":"sentinel""#);
        hasher.update(parts.before(self));
        let mut inputs = Vec::with_capacity(128);
        inputs.extend_from_slice(br#","inputs":"#);
        write_inputs(&self.inputs, &mut inputs);
        hasher.update(&inputs);
        hasher.update(parts.after(self));
        // The simulated user's brief is an input too: another goal is another test.
        // Only cases with one hash it, so every other id stays as it was.
        if let Some(user) = &self.user {
            hasher.update(br#","user":"#);
            hasher.update(serde_json::to_vec(user).unwrap_or_default());
        }
        hasher.update(b"}");
        short_id(HashWriter(hasher))
    }
}

/// `inputs` as canonical JSON: its fields that are set, in sorted order (`context`,
/// `messages`, `query`, `system_prompt`), as `serde_json` writes each.
pub(super) fn write_inputs(inputs: &InputSpec, out: &mut Vec<u8>) {
    // Every field is named here, so that a new one cannot be left out of the id.
    let InputSpec {
        query,
        messages,
        system_prompt,
        context,
    } = inputs;
    let mut first = true;
    let mut key = |out: &mut Vec<u8>, name: &[u8]| {
        out.extend_from_slice(if first { b"\"" } else { b",\"" });
        first = false;
        out.extend_from_slice(name);
        out.extend_from_slice(b"\":");
    };
    out.push(b'{');
    if let Some(context) = context {
        key(out, b"context");
        write_canonical_map(context, out);
    }
    if let Some(messages) = messages {
        key(out, b"messages");
        out.push(b'[');
        for (i, message) in messages.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"content":"#);
            let _ = serde_json::to_writer(&mut *out, &message.content);
            out.extend_from_slice(br#","role":"#);
            let _ = serde_json::to_writer(&mut *out, &message.role);
            out.push(b'}');
        }
        out.push(b']');
    }
    if let Some(query) = query {
        key(out, b"query");
        let _ = serde_json::to_writer(&mut *out, query);
    }
    if let Some(system_prompt) = system_prompt {
        key(out, b"system_prompt");
        let _ = serde_json::to_writer(&mut *out, system_prompt);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sentinel::{Message, Role};
    use crate::plan::write_canonical;

    /// `inputs`'s canonical JSON the generic way, through a `serde_json::Value`.
    fn generic(inputs: &InputSpec) -> Vec<u8> {
        let mut out = Vec::new();
        write_canonical(&serde_json::to_value(inputs).unwrap(), &mut out);
        out
    }

    fn written(inputs: &InputSpec) -> Vec<u8> {
        let mut out = Vec::new();
        write_inputs(inputs, &mut out);
        out
    }

    fn map(value: serde_json::Value) -> JsonMap {
        match value {
            serde_json::Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn inputs_are_written_as_the_generic_way_writes_them() {
        let every = InputSpec {
            query: Some("Quelle est la capitale ? \"Paris\"\n\t\u{1F600} \\ </script>".into()),
            messages: Some(vec![
                Message {
                    role: Role::System,
                    content: "be brief".into(),
                },
                Message {
                    role: Role::User,
                    content: "über \u{0007}".into(),
                },
                Message {
                    role: Role::Assistant,
                    content: String::new(),
                },
            ]),
            system_prompt: Some("You answer in French.".into()),
            context: Some(map(serde_json::json!({
                "z": [1, 2.5, -3e40, null, true, {"b": 1, "a": [{"y": 0, "x": "é"}]}],
                "a": {"nested": {"deeper": "yes", "also": false}},
                "": "empty key",
                "ü": 18446744073709551615u64,
            }))),
        };
        assert_eq!(written(&every), generic(&every));
        let alone = [
            InputSpec {
                query: Some("q".into()),
                ..InputSpec::default()
            },
            InputSpec {
                messages: Some(Vec::new()),
                ..InputSpec::default()
            },
            InputSpec {
                system_prompt: Some(String::new()),
                ..InputSpec::default()
            },
            InputSpec {
                context: Some(JsonMap::new()),
                ..InputSpec::default()
            },
            InputSpec::default(),
        ];
        for inputs in alone {
            assert_eq!(
                String::from_utf8(written(&inputs)).unwrap(),
                String::from_utf8(generic(&inputs)).unwrap()
            );
        }
    }

    fn spec(model: &str, inputs: InputSpec) -> TestSpec {
        TestSpec {
            name: "t".into(),
            model: model.into(),
            inputs,
            assertions: Vec::new(),
            description: None,
            category: None,
            provider: None,
            tools: None,
            framework: None,
            framework_config: None,
            model_config: None,
            seed: None,
            timeout_ms: None,
            reliability: None,
            tags: None,
            user: None,
        }
    }

    #[test]
    fn ids_are_the_generic_ones_whether_the_fields_around_the_inputs_are_kept_or_not() {
        let mut parts = IdParts::default();
        let query = |q: &str| InputSpec {
            query: Some(q.into()),
            ..InputSpec::default()
        };
        let mut tests = vec![
            spec("gpt-4o-mini", query("one")),
            spec("gpt-4o-mini", query("two")),
            spec("claude-3-5-haiku", query("two")),
        ];
        let mut with_everything = spec("gpt-4o-mini", query("three"));
        with_everything.framework = Some(Framework::Langgraph);
        with_everything.framework_config = Some(map(serde_json::json!({"b": 1, "a": 2})));
        with_everything.provider = Some(ProviderName::new("anthropic"));
        with_everything.seed = Some(7);
        with_everything.model_config = Some(ModelConfig {
            temperature: Some(0.5),
            ..ModelConfig::default()
        });
        tests.push(with_everything.clone());
        tests.push(with_everything.clone());
        with_everything.seed = Some(8);
        tests.push(with_everything);
        tests.push(spec("gpt-4o-mini", query("one")));
        for test in &tests {
            assert_eq!(test.id_with(&mut parts), test.id(), "{test:?}");
        }
        assert_ne!(tests[0].id(), tests[1].id());
        assert_eq!(tests[0].id_with(&mut parts), tests[6].id_with(&mut parts));
    }
}
