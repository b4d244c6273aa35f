//! A HOCON top-level key that only feeds substitutions (`common = {...}` and then
//! `${common}`) is an idiom, not a typo: it is left out of the case. An unknown key that
//! no substitution names is still an error.

use std::path::Path;

use prill_spec::load::{self, Document, Unrecognized};
use prill_spec::syntax::Env;

fn load(text: &str) -> load::Loaded {
    load::load_str(
        Path::new("case.hocon"),
        text,
        &Env::default(),
        Unrecognized::Error,
    )
    .expect("a data-driven file is not skipped")
}

const SHARED: &str = r#"
common = {
    text: "Who recorded Yellow Submarine?"
    response { text { keywords: "Beatles" } }
}
agent: trivia
interactions: [ ${common}, ${common} { text: "Where were they from?" } ]
"#;

#[test]
fn a_key_used_as_a_substitution_source_is_accepted_and_left_out() {
    let loaded = load(SHARED);
    let reports: Vec<String> = loaded.reports().iter().map(|r| r.plain()).collect();
    let Ok(Document::DataDriven(case)) = &loaded.outcome else {
        panic!("valid: {reports:?}");
    };
    assert!(reports.is_empty(), "{reports:?}");
    assert_eq!(case.interactions.len(), 2);
    assert_eq!(
        case.interactions[1].text.as_deref(),
        Some("Where were they from?")
    );
    // Neither the case nor the tree (what `prill convert` writes) holds it.
    let tree = loaded.tree.as_ref().unwrap();
    assert!(tree.get("common").is_none());
    assert!(tree.get("agent").is_some());
}

#[test]
fn a_dotted_substitution_names_its_top_level_key() {
    let loaded = load(
        "defaults { q: \"hi\", more: 1 }\nagent: a\ninteractions: [ { text: ${defaults.q} } ]\n",
    );
    assert!(loaded.is_valid(), "{:?}", loaded.reports());
}

#[test]
fn an_unreferenced_unknown_key_is_still_an_error() {
    let loaded = load(&format!("{SHARED}\ncommn = {{ a: 1 }}\n"));
    let errors = loaded.outcome.expect_err("invalid");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, "unknown-key");
    assert_eq!(errors[0].message, "unknown key `commn`");
}

#[test]
fn known_keys_named_by_substitutions_are_kept() {
    // `agent` feeds a substitution and is itself a key of the case.
    let loaded = load("agent: trivia\ninteractions: [ { text: ${agent} } ]\n");
    let Ok(Document::DataDriven(case)) = &loaded.outcome else {
        panic!("{:?}", loaded.reports());
    };
    assert_eq!(case.agent, "trivia");
    assert_eq!(case.interactions[0].text.as_deref(), Some("trivia"));
}

#[test]
fn json_and_yaml_files_have_no_substitutions() {
    let loaded = load::load_str(
        Path::new("case.json"),
        r#"{"common": {}, "agent": "a", "interactions": [{"text": "x"}]}"#,
        &Env::default(),
        Unrecognized::Error,
    )
    .unwrap();
    assert!(!loaded.is_valid());
}
