//! A case's id is a hash of its inputs, and the history keeps ids from run to run: how
//! an id is computed may change, the ids may not. These are pinned from the Sentinel
//! fixtures (every field of a test's inputs is set in one of them: messages, tools,
//! each framework and its settings, model settings, a seed, a provider), as Prill
//! computed them when it still gathered the inputs into one JSON object first.

use prill_spec::load::{self, Unrecognized};

use crate::support;
use support::{env, fixtures};

const PINNED: &[(&str, &str, &str)] = &[
    (
        "sentinel/complete.yaml",
        "Complete Agent Test",
        "e6cd0656d8ce",
    ),
    (
        "sentinel/frameworks.yaml",
        "the OpenAI loop, results from the spec",
        "0e1143056c3a",
    ),
    (
        "sentinel/frameworks.yaml",
        "the Claude loop, a program answers",
        "8b3e682df89c",
    ),
    (
        "sentinel/frameworks.yaml",
        "Strands on Bedrock",
        "36cf8d699309",
    ),
    (
        "sentinel/frameworks.yaml",
        "Strands on Ollama",
        "05f8bdd044dd",
    ),
    (
        "sentinel/frameworks.yaml",
        "a LangGraph assistant",
        "9b6db2fcdf66",
    ),
    ("sentinel/minimal.yaml", "Minimal Test", "adc81a2f738a"),
    ("sentinel/suite.yaml", "Product Search", "6f1e4bc21ae4"),
    ("sentinel/suite.yaml", "Price Comparison", "f02e8a7962f6"),
    (
        "sentinel/trajectory.yaml",
        "laptop research agent",
        "9b484ae0dc52",
    ),
    (
        "sentinel/conversation.json",
        "Order support conversation",
        "5e3fe744b631",
    ),
    ("sentinel/suite.json", "Multiply", "efc7fadf7ecd"),
    ("sentinel/suite.json", "Divide", "45efd38a36d4"),
    (
        "sentinel/ollama_check.hocon",
        "Local model says hello",
        "5bf76e0ef28c",
    ),
];

#[test]
fn sentinel_case_ids_stay_as_they_were() {
    for (file, name, id) in PINNED {
        let path = fixtures().join(file);
        let loaded = load::load_file(&path, &env(), Unrecognized::Error)
            .unwrap()
            .unwrap_or_else(|| panic!("{file} was skipped"));
        assert!(loaded.is_valid(), "{file} is invalid");
        let cases = loaded.cases();
        let case = cases
            .iter()
            .find(|c| &*c.name == *name)
            .unwrap_or_else(|| panic!("{file} has no test {name:?}"));
        assert_eq!(&*case.id, *id, "{file}: {name}");
    }
}
