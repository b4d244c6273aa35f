//! The list of variables the CLI tests clear, `prill_testkit::env::VARIABLES`, holds
//! every environment variable the providers, the judge and the settings read: a name
//! added to their sources without being added to the list fails here, so a developer's
//! own keys cannot slip into a test through it.

use std::path::Path;

/// Names in those sources that are not variables Prill reads: a build-time name, and
/// one Prill sets for the `git` it runs (the history's commit), never reads.
const NOT_READ: [&str; 2] = ["CARGO_MANIFEST_DIR", "GIT_OPTIONAL_LOCKS"];

fn sources(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            // Only the code that runs, not its tests.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            out.push(code.to_owned());
        }
    }
}

/// `"NAME_LIKE_THIS"` string literals: upper case, digits and underscores, with an
/// underscore inside (a prefix ending in `_` is not a name).
fn variable_names(code: &str) -> Vec<String> {
    code.split('"')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            s.len() > 2
                && s.contains('_')
                && !s.ends_with('_')
                && s.starts_with(|c: char| c.is_ascii_uppercase())
                && s.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_variable_the_providers_read_is_cleared_by_the_tests() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut code = Vec::new();
    for dir in [
        "prill-connect/src/provider",
        "prill-connect/src/langgraph",
        "prill-app/src",
        "prill-judge/src",
    ] {
        sources(&crates.join(dir), &mut code);
    }
    let mut missing: Vec<String> = code
        .iter()
        .flat_map(|c| variable_names(c))
        .filter(|name| !prill_testkit::env::VARIABLES.contains(&name.as_str()))
        .filter(|name| !NOT_READ.contains(&name.as_str()))
        .collect();
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "add these to prill_testkit::env::VARIABLES (crates/prill-testkit/src/env.rs): {missing:?}"
    );
    assert!(variable_names(r#"get("OPENAI_API_KEY") "AZURE_" "x""#) == ["OPENAI_API_KEY"]);
}
