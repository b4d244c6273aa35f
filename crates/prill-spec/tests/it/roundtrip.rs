//! `prill convert`'s promise: a spec written out in another syntax and parsed again is
//! the same model. Checked over every valid fixture and over generated specs.

use std::path::{Path, PathBuf};

use prill_spec::load::{self, Document, Unrecognized};
use prill_spec::node::{Node, Span};
use prill_spec::plan::Dialect;
use prill_spec::syntax::Env;
use prill_spec::syntax::emit::{emit, emit_with_comments};
use prill_spec::{Source, Syntax};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support;
use support::{env, fixture_files};

const SYNTAXES: [Syntax; 3] = [Syntax::Json, Syntax::Yaml, Syntax::Hocon];

/// Emits `tree` as `syntax`, loads the text back, and returns the document.
fn reparse(tree: &Node, syntax: Syntax) -> Result<Document, String> {
    load_text(emit(tree, syntax), syntax)
}

/// Loads `text` as a file of `syntax` and returns the document.
fn load_text(text: String, syntax: Syntax) -> Result<Document, String> {
    let path = PathBuf::from(format!("converted.{}", syntax.extension()));
    let loaded = load::load_str(&path, &text, &Env::default(), Unrecognized::Error)
        .ok_or_else(|| "skipped as not a test file".to_owned())?;
    loaded.outcome.map_err(|diags| {
        let source = Source::new(&path, text.clone());
        let msgs: Vec<String> = diags
            .into_iter()
            .map(|d| prill_spec::Report::new(d, &source).plain())
            .collect();
        format!("{}\n--- text\n{text}", msgs.join("\n"))
    })
}

#[test]
fn every_valid_fixture_converts_to_every_syntax_and_back() {
    let mut files = Vec::new();
    fixture_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures"),
        &mut files,
    );
    let mut converted = 0;
    for path in files {
        let Some(loaded) = load::load_file(&path, &env(), Unrecognized::Skip).unwrap() else {
            continue;
        };
        let original = loaded
            .outcome
            .as_ref()
            .unwrap_or_else(|_| panic!("{} is invalid", path.display()));
        let tree = loaded.tree.as_ref().unwrap();
        for syntax in SYNTAXES {
            let back = reparse(tree, syntax)
                .unwrap_or_else(|e| panic!("{} as {syntax:?}: {e}", path.display()));
            assert_eq!(&back, original, "{} as {syntax:?}", path.display());
            // The same with the source's comments written back.
            let text = emit_with_comments(tree, syntax, &loaded.source);
            let back = load_text(text, syntax)
                .unwrap_or_else(|e| panic!("{} as {syntax:?} with comments: {e}", path.display()));
            assert_eq!(&back, original, "{} as {syntax:?}", path.display());
            converted += 1;
        }
    }
    assert!(converted >= 3 * 45, "only {converted} conversions");
}

/// The quickstart's `echo.yaml` as HOCON, compared with the insta snapshot
/// `snapshots/it__roundtrip__convert-echo.hocon.snap`.
#[test]
fn a_converted_file_reads_as_hand_written_hocon() {
    let fixture = support::fixtures().join("quickstart/echo.yaml");
    let loaded = load::load_file(&fixture, &env(), Unrecognized::Error)
        .unwrap()
        .unwrap();
    let text = emit_with_comments(loaded.tree.as_ref().unwrap(), Syntax::Hocon, &loaded.source);
    insta::assert_snapshot!("convert-echo.hocon", text);
    // insta compares without trailing whitespace: the file ends in one newline.
    assert!(text.ends_with("]\n"), "{text:?}");
    assert!(!text.lines().any(|l| l.trim_end().ends_with(',')), "{text}");
    assert!(text.starts_with("# YAML works too."), "{text}");
    assert!(text.contains("\nagent = \"echo\"\n"), "{text}");
}

/// Comments before entries, before list items, after values and inside tables come
/// back in YAML and HOCON, next to what they were next to; those inside strings are
/// no comments.
#[test]
fn comments_are_kept_where_they_were() {
    let yaml = "# top\nagent: echo # the agent\n# before the list\ninteractions:\n  # first item\n  - text: \"a # not a comment\"\n    response: # checks\n      text:\n        keywords: [a, b] # two\n  - text: |\n      # inside a block\n      b\n# the end\n";
    let hocon = "// top\nagent = echo # the agent\n# before the list\ninteractions = [\n  # first item\n  {\n    text = \"a # not // a comment\"\n    response { # checks\n      text.keywords = [a, b] // two\n    }\n  }\n  { text = \"\"\"b\n# inside\"\"\" }\n]\n# the end\n";
    for (name, text) in [("c.yaml", yaml), ("c.hocon", hocon)] {
        let loaded =
            load::load_str(Path::new(name), text, &Env::default(), Unrecognized::Error).unwrap();
        let original = loaded.outcome.as_ref().expect("valid");
        let tree = loaded.tree.as_ref().unwrap();
        for syntax in [Syntax::Yaml, Syntax::Hocon] {
            let out = emit_with_comments(tree, syntax, &loaded.source);
            for comment in [
                "# top\n",
                "# the agent\n",
                "# before the list\n",
                "# first item\n",
                "# checks\n",
                "# two\n",
                "# the end\n",
            ] {
                assert_eq!(
                    out.matches(comment).count(),
                    1,
                    "{name} as {syntax:?}: {comment:?} in\n{out}"
                );
            }
            assert_eq!(
                out.matches("inside").count(),
                1,
                "a string's text is no comment:\n{out}"
            );
            assert!(
                out.contains("echo\" # the agent\n") || out.contains("echo # the agent\n"),
                "{name} as {syntax:?}:\n{out}"
            );
            let back = load_text(out.clone(), syntax)
                .unwrap_or_else(|e| panic!("{name} as {syntax:?}: {e}"));
            assert_eq!(&back, original, "{name} as {syntax:?}:\n{out}");
        }
    }
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ]{1,20}",
        // Characters that need quoting or escaping in one syntax or another.
        "[ -~]{1,30}",
        Just("yes".to_owned()),
        Just("null".to_owned()),
        Just("3.0".to_owned()),
        Just("${NOT_A_SUBSTITUTION}".to_owned()),
        Just("line one\nline two\n".to_owned()),
        Just("  padded  ".to_owned()),
        Just("# not a comment".to_owned()),
        Just("quote \" and ''' and \"\"\"".to_owned()),
        Just("ünïcødé — “quotes” ©".to_owned()),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(Value::String),
        any::<i64>().prop_map(|n| json!(n)),
        (-1.0e6..1.0e6f64).prop_map(|f| json!(f)),
        Just(json!(3.0)),
        any::<bool>().prop_map(Value::Bool),
    ]
}

fn sly_data() -> impl Strategy<Value = Value> {
    let leaf = scalar();
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn stock_name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "value",
        "not_value",
        "keywords",
        "not_keywords",
        "Gist",
        "less",
        "not_greater",
    ])
}

fn check_value(name: &'static str) -> BoxedStrategy<Value> {
    match name.to_ascii_lowercase().as_str() {
        "gist" => "[a-z]{3,10}( [a-z]{2,8}){0,4}"
            .prop_map(Value::String)
            .boxed(),
        "less" | "not_greater" => prop_oneof![
            (-1000i64..1000).prop_map(|n| json!(n)),
            "[a-z]{1,5}".prop_map(Value::String)
        ]
        .boxed(),
        _ => prop_oneof![
            scalar(),
            prop::collection::vec(scalar(), 1..3).prop_map(Value::Array)
        ]
        .boxed(),
    }
}

fn checks() -> impl Strategy<Value = Value> {
    prop::collection::vec(
        stock_name().prop_flat_map(|n| check_value(n).prop_map(move |v| (n, v))),
        1..3,
    )
    .prop_map(|pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
}

fn data_driven() -> impl Strategy<Value = Value> {
    let interaction = (
        prop::option::of(text()),
        prop::option::of(sly_data().prop_filter("an object", Value::is_object)),
        any::<bool>(),
        checks(),
        prop::collection::btree_map("[a-z]{1,6}", checks(), 0..3),
    )
        .prop_map(|(text, sly, cont, text_checks, fields)| {
            let mut it = json!({"continue_conversation": cont, "response": {"text": text_checks}});
            if let Some(t) = text {
                it["text"] = json!(t);
            }
            if let Some(s) = sly {
                it["sly_data"] = s;
            }
            if !fields.is_empty() {
                it["response"]["structure"] = Value::Object(fields.into_iter().collect());
            }
            it
        });
    (
        "[a-z_]{1,12}(/[a-z_]{1,8})?",
        prop::sample::subsequence(vec!["direct", "http", "https", "mcp"], 1..4),
        (1u32..5, 0u32..5),
        prop::collection::vec(interaction, 1..4),
    )
        .prop_map(|(agent, connections, (n, k), interactions)| {
            json!({
                "agent": agent,
                "connections": connections,
                "success_ratio": format!("{}/{n}", k.min(n)),
                "interactions": interactions,
            })
        })
}

fn sentinel_spec() -> impl Strategy<Value = Value> {
    let assertion = prop_oneof![
        text().prop_map(|t| json!({"must_contain": t})),
        text().prop_map(|t| json!({"must_not_contain": t})),
        prop::collection::vec(text(), 1..3).prop_map(|t| json!({"must_contain": t})),
        (text(), any::<bool>())
            .prop_map(|(t, c)| json!({"must_not_contain": {"text": t, "case_sensitive": c}})),
        Just(json!({"regex_match": "\\d+"})),
        prop::collection::vec("[a-z]{1,8}", 1..3).prop_map(|t| json!({"must_call_tool": t})),
        prop::sample::select(vec!["json", "text", "markdown", "code", "structured"])
            .prop_map(|t| json!({"output_type": t})),
        (1u64..100_000).prop_map(|n| json!({"max_latency_ms": n})),
    ];
    (
        text(),
        "[a-z0-9.-]{1,20}",
        text(),
        prop::collection::vec(assertion, 1..5),
        prop::option::of(0.0..=2.0f64),
        prop::option::of(any::<i64>()),
        (
            prop::option::of(prop::collection::vec("[a-z-]{1,8}", 0..3)),
            prop::option::of(text()),
        ),
    )
        .prop_map(|(name, model, query, assertions, temperature, seed, (tags, category))| {
            let mut spec = json!({"name": name, "model": model, "inputs": {"query": query}, "assertions": assertions});
            if let Some(t) = temperature {
                spec["model_config"] = json!({"temperature": t});
            }
            if let Some(s) = seed {
                spec["seed"] = json!(s);
            }
            if let Some(t) = tags {
                spec["tags"] = json!(t);
            }
            if let Some(c) = category {
                spec["category"] = json!(c);
            }
            spec
        })
}

fn assert_round_trips(json: &Value, dialect: Dialect) -> Result<(), TestCaseError> {
    let tree = Node::from_json(json, Span::default());
    let (original, _) = load::validate(&tree, dialect);
    let original = original
        .map_err(|d| TestCaseError::fail(format!("generated spec is invalid: {d:?}\n{json}")))?;
    for syntax in SYNTAXES {
        let back = reparse(&tree, syntax).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&back, &original, "as {:?}", syntax);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn generated_data_driven_cases_round_trip(json in data_driven()) {
        assert_round_trips(&json, Dialect::DataDriven)?;
    }

    #[test]
    fn generated_sentinel_specs_round_trip(json in sentinel_spec()) {
        assert_round_trips(&json, Dialect::SentinelSpec)?;
    }
}

/// Comments in odd places (between `-` and an item's first key, after an opening
/// bracket, after a block string's indicator, at the end of a table) never make the
/// output unreadable, and none is lost or doubled.
#[test]
fn comments_in_odd_places_keep_the_output_valid() {
    let yaml = "agent: echo\ninteractions:\n- # c1\n  text: hi\n  response:\n    text:\n      keywords: [a] # c2\n  # c3\n- text: |  # c4\n    two\n    lines\n  # c5\n  response: {text: {keywords: two}} # c6\n# c7\n";
    let hocon = "agent = echo\ninteractions = [ # c1\n  { # c2\n    text = hi\n    response { text { keywords = [a, # c3\n b] } } # c4\n    # c5\n  } # c6\n  { text = two // c7\n    response.text.keywords = two }\n]\n";
    for (name, text, count) in [("c.yaml", yaml, 7), ("c.hocon", hocon, 7)] {
        let loaded =
            load::load_str(Path::new(name), text, &Env::default(), Unrecognized::Error).unwrap();
        let original = loaded
            .outcome
            .as_ref()
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let tree = loaded.tree.as_ref().unwrap();
        for syntax in [Syntax::Yaml, Syntax::Hocon] {
            let out = emit_with_comments(tree, syntax, &loaded.source);
            for n in 1..=count {
                assert_eq!(
                    out.matches(&format!("# c{n}\n")).count(),
                    1,
                    "{name} as {syntax:?}: c{n} in\n{out}"
                );
            }
            let back = load_text(out.clone(), syntax)
                .unwrap_or_else(|e| panic!("{name} as {syntax:?}: {e}\n{out}"));
            assert_eq!(&back, original, "{name} as {syntax:?}:\n{out}");
        }
    }
}
