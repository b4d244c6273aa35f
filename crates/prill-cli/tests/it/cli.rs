//! Runs the real `prill` binary on temporary files and checks its output and exit codes.

use std::path::Path;

use crate::support::{code, command, prill, stderr, stdout, write};

const GOOD_SPEC: &str = "\
name: capital
model: gpt-4o
inputs:
  query: What is the capital of France?
assertions:
  - must_contain: Paris
  - max_latency_ms: 5000
";

/// `assertions` misspelt as `assertion` on line 5.
const TYPO_SPEC: &str = "\
name: capital
model: gpt-4o
inputs:
  query: What is the capital of France?
assertion:
  - must_contain: Paris
";

const SUITE: &str = "\
name: geography
defaults:
  model: gpt-4o
  assertions:
    - must_contain: Paris
tests:
  - name: capital
    inputs:
      query: What is the capital of France?
  - name: capital of italy
    inputs:
      query: What is the capital of Italy?
";

const DATA_DRIVEN: &str = r#"{
  "agent": "music_nerd_pro",
  "connections": ["http"],
  "interactions": [
    {"text": "Who sang Yellow Submarine?", "response": {"text": {"keywords": ["Beatles"]}}}
  ]
}
"#;

#[test]
fn validate_accepts_a_valid_spec() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.yaml", GOOD_SPEC);
    let out = prill(dir.path(), &["validate", "good.yaml"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "1 file, 1 valid, 0 invalid\n");
    assert_eq!(stderr(&out), "");
}

#[test]
fn validate_reports_a_typo_with_location_path_and_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "typo.yaml", TYPO_SPEC);
    let out = prill(dir.path(), &["validate", "--format", "human", "typo.yaml"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "1 file, 0 valid, 1 invalid\n");
    let err = stderr(&out);
    assert!(err.contains("typo.yaml:5:1"), "{err}");
    assert!(err.contains("assertion: unknown key `assertion`"), "{err}");
    assert!(err.contains("did you mean `assertions`?"), "{err}");
}

#[test]
fn diagnostics_are_one_line_each_when_piped_or_asked() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "typo.yaml", TYPO_SPEC);
    write(dir.path(), "good.yaml", GOOD_SPEC);
    let expected = "\
typo.yaml:1:1: error[missing-field]: assertions: missing required field `assertions`
typo.yaml:5:1: error[unknown-key]: assertion: unknown key `assertion` (did you mean `assertions`?)
";
    // stderr is a pipe here: the short form is the default, and `--format short` asks for it.
    for args in [
        &["validate", "typo.yaml", "good.yaml"][..],
        &["validate", "--format", "short", "typo.yaml", "good.yaml"],
    ] {
        let out = prill(dir.path(), args);
        assert_eq!(code(&out), 2);
        assert_eq!(stderr(&out), expected, "{args:?}");
        assert_eq!(stdout(&out), "2 files, 1 valid, 1 invalid\n");
    }
    // Every command that prints spec diagnostics does the same.
    let out = prill(dir.path(), &["list", "typo.yaml"]);
    assert_eq!(stderr(&out), expected);
    // The lines are the first lines of the full form, each with its hint.
    let human = prill(dir.path(), &["validate", "--format", "human", "typo.yaml"]);
    assert!(stderr(&human).contains("help: did you mean `assertions`?"));
}

#[test]
fn a_file_of_another_extension_is_refused_with_the_ones_prill_reads() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spec.txt", GOOD_SPEC);
    write(dir.path(), "spec", GOOD_SPEC);
    let out = prill(dir.path(), &["validate", "spec.txt", "spec"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "spec.txt: error[unsupported-extension]: `.txt` is not an extension Prill reads: test files end in .hocon, .conf, .yaml, .yml or .json, and the configuration in .toml\n\
         spec: error[unsupported-extension]: the file has no extension: test files end in .hocon, .conf, .yaml, .yml or .json, and the configuration in .toml\n"
    );
    assert_eq!(stdout(&out), "2 files, 0 valid, 2 invalid\n");
    let out = prill(dir.path(), &["convert", "spec.txt", "--to", "json"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("`.txt` is not an extension Prill reads"));
}

#[test]
fn validate_reports_every_file_of_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "specs/good.yaml", GOOD_SPEC);
    write(dir.path(), "specs/typo.yaml", TYPO_SPEC);
    let out = prill(dir.path(), &["validate", "specs"]);
    assert_eq!(code(&out), 2);
    assert!(
        stdout(&out).starts_with("2 files, 1 valid, 1 invalid"),
        "{}",
        stdout(&out)
    );
    let err = stderr(&out);
    assert!(err.contains("typo.yaml:5:1"), "{err}");
    assert!(!err.contains("good.yaml"), "{err}");
}

#[test]
fn validate_defaults_to_the_current_directory_and_skips_other_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.yaml", GOOD_SPEC);
    write(dir.path(), "docker-compose.yaml", "services: {}\n");
    write(dir.path(), "notes.txt", "not a test\n");
    let out = prill(dir.path(), &["validate"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "1 file, 1 valid, 0 invalid, 1 skipped\n");
}

#[test]
fn validate_rejects_an_unrecognized_file_named_explicitly() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "docker-compose.yaml", "services: {}\n");
    let out = prill(dir.path(), &["validate", "docker-compose.yaml"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "1 file, 0 valid, 1 invalid\n");
    assert!(
        stderr(&out).contains("cannot tell which kind of test file this is"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn validate_goes_on_past_missing_and_unreadable_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.yaml", GOOD_SPEC);
    std::fs::write(dir.path().join("binary.yaml"), [0xff, 0xfe, 0x00]).unwrap();
    let out = prill(
        dir.path(),
        &["validate", "nope.yaml", "binary.yaml", "good.yaml"],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "3 files, 1 valid, 2 invalid\n");
    let err = stderr(&out);
    assert!(
        err.contains("nope.yaml: error[not-found]: no such file or directory"),
        "{err}"
    );
    // Not UTF-8: the first bad byte's line and column (issue 16).
    assert!(
        err.contains("binary.yaml:1:1: error[not-utf8]: the file is not valid UTF-8"),
        "{err}"
    );
}

#[test]
fn validate_fails_when_no_path_exists() {
    let dir = tempfile::tempdir().unwrap();
    let out = prill(dir.path(), &["validate", "missing"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no such file or directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn validate_json_is_one_document_with_every_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.yaml", GOOD_SPEC);
    write(dir.path(), "typo.yaml", TYPO_SPEC);
    let out = prill(
        dir.path(),
        &["validate", "--format", "json", "good.yaml", "typo.yaml"],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(stderr(&out), "");
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("stdout is JSON");
    assert_eq!(json["summary"]["files"], 2);
    assert_eq!(json["summary"]["valid"], 1);
    assert_eq!(json["summary"]["invalid"], 1);

    let good = &json["files"][0];
    assert_eq!(good["file"], "good.yaml");
    assert_eq!(good["dialect"], "sentinel-spec");
    assert_eq!(good["valid"], true);
    assert_eq!(good["cases"], 1);
    assert_eq!(good["diagnostics"], serde_json::json!([]));

    let typo = &json["files"][1];
    assert_eq!(typo["file"], "typo.yaml");
    assert_eq!(typo["valid"], false);
    let unknown = typo["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "unknown-key")
        .expect("an unknown-key diagnostic");
    assert_eq!(unknown["file"], "typo.yaml");
    assert_eq!(unknown["line"], 5);
    assert_eq!(unknown["column"], 1);
    // The range ends just past the key, for editors.
    assert_eq!(unknown["end_line"], 5);
    assert_eq!(unknown["end_column"], 10);
    assert_eq!(unknown["path"], "assertion");
    assert_eq!(unknown["help"], "did you mean `assertions`?");
}

#[test]
fn schema_prints_the_dialect_schema() {
    let dir = tempfile::tempdir().unwrap();
    let out = prill(dir.path(), &["schema", "sentinel-spec"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.contains(r#""title": "TestSpec""#), "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    assert_eq!(json["title"], "TestSpec");
}

#[test]
fn schema_names_the_choices_on_a_wrong_dialect() {
    let dir = tempfile::tempdir().unwrap();
    let out = prill(dir.path(), &["schema", "sentinel"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    for name in ["data-driven", "sentinel-spec", "sentinel-suite", "config"] {
        assert!(err.contains(name), "{err}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(code(&prill(dir.path(), &[])), 2);
    assert_eq!(code(&prill(dir.path(), &["frobnicate"])), 2);
    assert_eq!(
        code(&prill(dir.path(), &["validate", "--format", "xml"])),
        2
    );
    assert_eq!(code(&prill(dir.path(), &["convert", "x.yaml"])), 2);
    let help = prill(dir.path(), &["--help"]);
    assert_eq!(code(&help), 0);
    assert!(stdout(&help).contains("validate"));
}

/// The plan cases of `file` as JSON, without the fields that name the file or places
/// in it (each check's `location`).
fn cases_without_file(dir: &Path, file: &str) -> serde_json::Value {
    let out = prill(dir, &["list", "--format", "json", file]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for case in json["cases"].as_array_mut().unwrap() {
        case.as_object_mut().unwrap().remove("file");
        for step in case["interactions"].as_array_mut().unwrap() {
            for check in step["checks"].as_array_mut().unwrap() {
                let located = check.as_object_mut().unwrap().remove("location");
                assert!(located.is_some(), "a check without its place: {check}");
            }
        }
    }
    json
}

#[test]
fn convert_writes_a_file_that_loads_to_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "suite.yaml", SUITE);
    let original = cases_without_file(dir.path(), "suite.yaml");
    for (syntax, name) in [
        ("json", "suite.json"),
        ("yaml", "suite.out.yaml"),
        ("hocon", "suite.hocon"),
    ] {
        let out = prill(dir.path(), &["convert", "suite.yaml", "--to", syntax]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        write(dir.path(), name, &stdout(&out));
        if syntax == "json" {
            let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON output");
            assert_eq!(json["tests"][1]["name"], "capital of italy");
        }
        let check = prill(dir.path(), &["validate", name]);
        assert_eq!(code(&check), 0, "{syntax}: {}", stderr(&check));
        assert_eq!(stdout(&check), "1 file, 1 valid, 0 invalid\n");
        assert_eq!(cases_without_file(dir.path(), name), original, "{syntax}");
    }
}

#[test]
fn convert_refuses_an_invalid_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "typo.yaml", TYPO_SPEC);
    let out = prill(dir.path(), &["convert", "typo.yaml", "--to", "json"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("typo.yaml:5:1: error[unknown-key]: assertion: unknown key"),
        "{}",
        stderr(&out)
    );
}

fn is_case_id(id: &str) -> bool {
    let (hash, suffix) = id.split_once('-').unwrap_or((id, "2"));
    hash.len() == 12 && hash.chars().all(|c| c.is_ascii_hexdigit()) && suffix.parse::<u32>().is_ok()
}

#[test]
fn list_prints_one_line_per_case() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tests/geo/suite.yaml", SUITE);
    write(
        dir.path(),
        "tests/music_nerd_pro/combination_responses_with_history_http.json",
        DATA_DRIVEN,
    );
    let out = prill(dir.path(), &["list", "tests"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 3, "{text}");
    for fields in &lines {
        assert_eq!(fields.len(), 4, "{text}");
        assert!(is_case_id(fields[0]), "{text}");
    }
    assert_eq!(lines[0][1], "sentinel-suite");
    assert_eq!(lines[0][2], "capital");
    assert_eq!(lines[1][2], "capital of italy");
    assert_eq!(lines[2][1], "data-driven");
    assert_eq!(
        lines[2][2],
        "music_nerd_pro/combination_responses_with_history_http (agent music_nerd_pro)"
    );
    assert!(
        lines[2][3].ends_with("combination_responses_with_history_http.json"),
        "{text}"
    );
}

#[test]
fn list_gives_duplicate_cases_distinct_ids() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yaml", GOOD_SPEC);
    write(dir.path(), "b.yaml", GOOD_SPEC);
    let out = prill(dir.path(), &["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let ids: Vec<&str> = text.lines().filter_map(|l| l.split('\t').next()).collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[1], format!("{}-2", ids[0]));
}

#[test]
fn list_lists_the_valid_files_and_fails_on_invalid_ones() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.yaml", GOOD_SPEC);
    write(dir.path(), "typo.yaml", TYPO_SPEC);
    let out = prill(dir.path(), &["list"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("good.yaml"));
    assert!(stderr(&out).contains("typo.yaml:5:1"), "{}", stderr(&out));
}

#[test]
fn list_json_is_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "suite.yaml", SUITE);
    let out = prill(dir.path(), &["list", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("stdout is JSON");
    let cases = json["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    assert!(is_case_id(cases[0]["id"].as_str().unwrap()));
    assert_eq!(cases[0]["dialect"], "sentinel-suite");
    assert_eq!(cases[1]["name"], "capital of italy");
}

#[test]
fn warnings_are_shown_but_keep_the_file_valid() {
    let dir = tempfile::tempdir().unwrap();
    let ignored = DATA_DRIVEN.replace(r#""response": {"text""#, r#""response": {"txt""#);
    write(dir.path(), "music_nerd_pro/ignored.json", &ignored);
    let out = prill(dir.path(), &["validate", "music_nerd_pro/ignored.json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The ignored part, and the case it leaves with no check at all.
    assert_eq!(stdout(&out), "1 file, 1 valid, 0 invalid, 2 warnings\n");
    assert!(
        stderr(&out).contains("ignored.json:5:57"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "typo.yaml", TYPO_SPEC);
    // Not a terminal: no colour, with or without NO_COLOR.
    let plain = command(dir.path(), &["validate", "typo.yaml"])
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(!stderr(&plain).contains('\u{1b}'), "{}", stderr(&plain));
    let forced = prill(dir.path(), &["validate", "--color", "always", "typo.yaml"]);
    assert!(stderr(&forced).contains('\u{1b}'), "{}", stderr(&forced));
    // Data on stdout never has colour.
    assert_eq!(stdout(&forced), "1 file, 0 valid, 1 invalid\n");
}

#[test]
fn convert_refuses_to_write_environment_values_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "keyed.hocon",
        "agent = echo\ninteractions = [{ text = hi, sly_data { key = ${PRILL_TEST_SECRET} } }]\n",
    );
    let run = |allow: bool| {
        let mut cmd = command(dir.path(), &["convert", "keyed.hocon", "--to", "json"]);
        cmd.env("PRILL_TEST_SECRET", "s3cr3t-value");
        if allow {
            cmd.arg("--allow-env");
        }
        cmd.output().unwrap()
    };
    let refused = run(false);
    assert_eq!(code(&refused), 2);
    assert!(!stdout(&refused).contains("s3cr3t-value"));
    assert!(!stderr(&refused).contains("s3cr3t-value"));
    assert!(
        stderr(&refused).contains("`PRILL_TEST_SECRET`"),
        "{}",
        stderr(&refused)
    );
    let allowed = run(true);
    assert_eq!(code(&allowed), 0, "{}", stderr(&allowed));
    assert!(stdout(&allowed).contains("s3cr3t-value"));
}

#[test]
fn convert_to_hocon_is_idiomatic_and_keeps_comments() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "case.yaml",
        "# The echo agent.\nagent: echo\ninteractions:\n  - text: hi # what is sent\n    response:\n      text:\n        keywords: hi\n",
    );
    let out = prill(dir.path(), &["convert", "case.yaml", "--to", "hocon"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let hocon = stdout(&out);
    assert_eq!(
        hocon,
        "# The echo agent.\nagent = \"echo\"\ninteractions = [\n  {\n    text = \"hi\" # what is sent\n    response {\n      text { keywords = \"hi\" }\n    }\n  }\n]\n"
    );
    write(dir.path(), "case.hocon", &hocon);
    assert_eq!(
        cases_without_file(dir.path(), "case.hocon"),
        cases_without_file(dir.path(), "case.yaml")
    );
    let help = prill(dir.path(), &["convert", "--help"]);
    assert!(
        stdout(&help).contains("comments are kept in YAML and HOCON"),
        "{}",
        stdout(&help)
    );
}
