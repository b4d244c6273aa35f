//! The fixture corpus: every valid fixture validates and its schema accepts it; every
//! invalid fixture gives exactly the diagnostics in its insta snapshot (`<file>.snap`
//! beside it), and its schema rejects it unless the rule is one JSON Schema cannot
//! express. `yamlls` checks the YAML ones in the real yaml-language-server, as editors
//! show them (ignored unless run by name: see `fixtures/yamlls.rs`).
//!
//! After a deliberate change to the diagnostics, `cargo insta review` accepts the
//! `.snap.new` files the failing run left (or `INSTA_UPDATE=always cargo test -p
//! prill-spec --test it fixtures::` rewrites the snapshots); read the diff.

use std::path::{Path, PathBuf};

// The same fixtures in the real yaml-language-server, as editors see them.
mod yamlls;

use prill_spec::load::{self, Loaded, Unrecognized};
use prill_spec::schema::schema_for;
use prill_spec::syntax::Env;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The environment every fixture is loaded with: fixed, never the process's.
fn env() -> Env {
    Env::from_pairs([("OPENAI_API_KEY", "sk-dummy-for-prill-tests")])
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walk(dir)
        .into_iter()
        .filter(|p| load::is_candidate(p))
        .collect();
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn relative(path: &Path) -> PathBuf {
    let root = root().canonicalize().unwrap();
    path.canonicalize()
        .unwrap()
        .strip_prefix(&root)
        .unwrap()
        .to_path_buf()
}

fn load(path: &Path, unrecognized: Unrecognized) -> Option<Loaded> {
    let text = std::fs::read_to_string(path).unwrap();
    // Includes are resolved relative to the path, so load through the real path but
    // show the path relative to the repository in messages.
    let rel = relative(path);
    let loaded = load::load_str(&root().join(&rel), &text, &env(), unrecognized)?;
    Some(Loaded {
        source: prill_spec::Source::new(&rel, text),
        ..loaded
    })
}

fn schema_errors(loaded: &Loaded) -> Option<Vec<String>> {
    let tree = loaded.tree.as_ref()?;
    let dialect = loaded.dialect?;
    let schema = serde_json::to_value(schema_for(dialect)).unwrap();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("generated schema compiles");
    let instance = tree.to_json();
    Some(
        validator
            .iter_errors(&instance)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect(),
    )
}

#[test]
fn valid_fixtures_validate_and_match_their_schema() {
    let fixtures = root().join("fixtures");
    let mut checked = 0;
    let mut warned = Vec::new();
    for path in files_under(&fixtures) {
        let rel = relative(&path);
        let rel_text = rel.to_string_lossy();
        // The real-server cases named `invalid-` are invalid on purpose: the test that
        // runs them compares that with neuro-san's driver.
        if rel_text.starts_with("fixtures/invalid") || rel_text.contains("/cases/invalid-") {
            continue;
        }
        let Some(loaded) = load(&path, Unrecognized::Skip) else {
            // Only files that hold no test are skipped: shared includes, the
            // real-server test's agent networks and model settings, the trajectory
            // conformance corpus (prill-check's trajectory_conformance test), the
            // graphs `langgraph dev` serves (prill-cli's langgraph_real test), and the
            // retail domain's database (prill-cli's end_state test).
            assert!(
                rel_text.contains("/shared/")
                    || rel_text.starts_with("fixtures/conformance/trajectory/")
                    || rel_text.starts_with("fixtures/langgraph-real/")
                    || rel_text == "fixtures/retail/db.json"
                    || (rel_text.starts_with("fixtures/neuro-san-real/")
                        && !rel_text.contains("/cases/")),
                "{rel_text} was skipped as not a test file"
            );
            continue;
        };
        let reports: Vec<String> = loaded.reports().iter().map(|r| r.plain()).collect();
        assert!(
            loaded.is_valid(),
            "{rel_text} should be valid:\n{}",
            reports.join("\n")
        );
        // Our own fixtures are clean; only upstream files may carry warnings.
        if !loaded.warnings.is_empty() {
            assert!(
                rel_text.starts_with("fixtures/conformance/"),
                "{rel_text} has warnings:\n{}",
                reports.join("\n")
            );
            warned.push(rel_text.to_string());
        }
        let errors = schema_errors(&loaded).unwrap();
        assert!(
            errors.is_empty(),
            "the schema rejects valid {rel_text}:\n{}",
            errors.join("\n")
        );
        checked += 1;
    }
    assert!(checked >= 45, "only {checked} valid fixtures were checked");
    // The first upstream file drops `structure` on purpose, leaving checks upstream
    // ignores: they load, with a warning that they never run. The second is a load-test
    // prompt with no check at all: a warning that it passes whatever the agent says.
    assert_eq!(
        warned,
        [
            "fixtures/conformance/neuro-san/fixtures-2026-02/music_nerd_pro_llm_ollama/combination_responses_with_history_http.hocon",
            "fixtures/conformance/neuro-san/fixtures-latest/load_tests/hello_world/lt_meaning_of_hello_world.hocon"
        ]
    );
}

/// Invalid fixtures whose rule JSON Schema cannot express, with the reason. The test
/// checks that the schema really does accept each of them, so the list stays honest.
/// (Files that are not well-formed, or of no dialect, have no schema to ask.)
const BEYOND_SCHEMA: [(&str, &str); 10] = [
    (
        "dd-reliability-too-few.yaml",
        "whether a plan meets its error rates within max_samples is an exact sum over its samples",
    ),
    (
        "dd-success-ratio-over.hocon",
        "k <= n compares two numbers inside one string",
    ),
    (
        "s-expect-state-source.yaml",
        "whether a test has a tool program and which tools it names are other fields; JSONPath's grammar is RFC 9535's",
    ),
    (
        "s-framework-no-tool-calls.yaml",
        "which models call tools is a table of each provider's models",
    ),
    (
        "s-regex-python.yaml",
        "the schema's `regex` format is ECMA-262's, which has look-behind and back-references",
    ),
    (
        "s-x-keys.json",
        "one schema serves every syntax, and `x-` keys are allowed in YAML",
    ),
    (
        "s-token-bounds.yaml",
        "min_tokens <= max_tokens compares two list items",
    ),
    (
        "s-trajectory-bounds.yaml",
        "min_tool_calls <= max_tool_calls compares two list items",
    ),
    (
        "suite-framework-config.yaml",
        "a test's framework_config depends on the framework in the suite's defaults, another object",
    ),
    (
        "suite-missing-model.yaml",
        "whether defaults supply a field depends on another object",
    ),
];

#[test]
fn invalid_fixtures_give_their_snapshot_and_the_schema_rejects_them() {
    let dir = root().join("fixtures/invalid");
    let mut failures = Vec::new();
    let mut snapshots = Vec::new();
    let files = files_under(&dir);
    assert!(files.len() >= 45, "only {} invalid fixtures", files.len());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let loaded = load(path, Unrecognized::Error).expect("named files are never skipped");
        let reports = loaded.reports();
        // `warn-*` files are valid but have warnings; every other file has errors.
        let warn_only = name.starts_with("warn-");
        let has_only_warnings = loaded.is_valid() && !loaded.warnings.is_empty();
        if warn_only && !has_only_warnings {
            failures.push(format!("{name}: expected a valid file with warnings"));
            continue;
        }
        if !warn_only && loaded.is_valid() {
            failures.push(format!("{name}: expected errors, found none"));
            continue;
        }
        let mut actual = String::new();
        for r in &reports {
            actual.push_str(&r.plain());
            actual.push_str("\n\n");
            actual.push_str(&r.render(false));
            actual.push('\n');
        }
        let exception = BEYOND_SCHEMA.iter().find(|(n, _)| *n == name);
        match (schema_errors(&loaded), exception) {
            (Some(errors), None) if errors.is_empty() && !warn_only => {
                failures.push(format!("{name}: the schema accepts an invalid file"));
            }
            (Some(errors), Some((_, why))) if !errors.is_empty() => failures.push(format!(
                "{name}: listed as beyond the schema ({why}), but the schema rejects it: {}",
                errors.join("; ")
            )),
            (None, Some(_)) => failures.push(format!(
                "{name}: listed as beyond the schema, but has no tree"
            )),
            _ => {}
        }
        if actual.contains("sk-not-a-real-key") {
            failures.push(format!(
                "{name}: a secret written in the file is shown back"
            ));
        }
        snapshots.push((path, actual));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    for (path, actual) in &snapshots {
        insta::with_settings!({
            snapshot_path => path.parent().unwrap().canonicalize().unwrap(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(path.file_name().unwrap().to_str().unwrap(), actual);
        });
    }
    // No snapshot outlives its fixture (renamed or deleted).
    let orphans: Vec<PathBuf> = walk(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .filter(|p| !files.contains(&p.with_extension("")))
        .map(|p| relative(&p))
        .collect();
    assert!(
        orphans.is_empty(),
        "snapshots without a fixture: {orphans:?}"
    );
}
