//! Hostile input (issue 16): each test is the smallest input that broke the loader,
//! and asserts that it is now refused fast, with a message that names the limit.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use prill_spec::limits::{IncludeScope, Limits};
use prill_spec::load::{load_file_with, load_str_with};
use prill_spec::{Env, Loaded, Unrecognized};

fn load(name: &str, text: &str) -> Loaded {
    load_str_with(
        Path::new(name),
        text,
        &Env::default(),
        Unrecognized::Error,
        &Limits::default(),
    )
    .expect("loaded")
}

fn plain(loaded: &Loaded) -> String {
    loaded
        .reports()
        .iter()
        .map(|r| r.plain())
        .collect::<Vec<_>>()
        .join("\n")
}

fn codes(loaded: &Loaded) -> Vec<&'static str> {
    match &loaded.outcome {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(|d| d.code).collect(),
    }
}

/// A valid data-driven body to put hostile keys beside.
const CASE: &str = "agent = a\ninteractions = [{text = hi, response.text.keywords = hi}]\n";

#[test]
fn dotted_keys_count_against_the_nesting_limit() {
    // 2,000 parts (4 KB) aborted the process with a stack overflow; 700 took 54 s.
    let text = format!("x{} = 1\n{CASE}", ".a".repeat(2000));
    let started = Instant::now();
    let loaded = load("deep.hocon", &text);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(codes(&loaded), ["too-deep"], "{}", plain(&loaded));
    let out = plain(&loaded);
    assert!(out.contains("more than 128 levels deep"), "{out}");
    assert!(out.starts_with("deep.hocon:1:"), "{out}");

    // Past the limit by a little: 129 parts.
    let text = format!("x{} = 1\n{CASE}", ".a".repeat(128));
    assert_eq!(codes(&load("deep.hocon", &text)), ["too-deep"]);
    // Dotted keys inside brackets add up with them.
    let text = format!("{}{CASE}", "a.a.a.a {".repeat(40) + &"}".repeat(40) + "\n");
    assert_eq!(codes(&load("deep.hocon", &text)), ["too-deep"]);
    // Include directives are no keys: two hundred of them in a row are not deep.
    let text = format!("{}{CASE}", "include \"absent.conf\"\n".repeat(200));
    assert!(load("includes.hocon", &text).is_valid());
    // At the limit it loads (as an unknown key, which is a validation error).
    let text = format!("x{} = 1\n{CASE}", ".a".repeat(120));
    assert_eq!(codes(&load("deep.hocon", &text)), ["unknown-key"]);
}

#[test]
fn substitution_doublings_are_refused() {
    // Thirty doublings of one string passed 6 GB.
    let text = format!("{CASE}s = x\n{}", "s = ${s}${s}\n".repeat(30));
    let started = Instant::now();
    let loaded = load("bomb.hocon", &text);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        codes(&loaded),
        ["substitution-expansion"],
        "{}",
        plain(&loaded)
    );
    assert!(
        plain(&loaded).contains("substitutions expand to more than 1000000 values or 64 MiB"),
        "{}",
        plain(&loaded)
    );
}

#[test]
fn nested_substitutions_are_refused() {
    // Ten levels of ten substitutions: 692 bytes, 6 GB in 20 s.
    let mut text = format!("{CASE}l0 = \"xxxxxxxxxx\"\n");
    for level in 1..10 {
        let refs = format!("${{l{}}}", level - 1).repeat(10);
        text.push_str(&format!("l{level} = {refs}\n"));
    }
    let loaded = load("bomb.hocon", &text);
    assert_eq!(
        codes(&loaded),
        ["substitution-expansion"],
        "{}",
        plain(&loaded)
    );
    // Lists of objects multiply the same way.
    let mut text = format!("{CASE}l0 = [{{a = 1}}, {{b = 2}}]\n");
    for level in 1..12 {
        let refs = format!("${{l{}}}", level - 1);
        text.push_str(&format!("l{level} = [{refs}, {refs}, {refs}, {refs}]\n"));
    }
    let loaded = load("bomb.hocon", &text);
    assert_eq!(
        codes(&loaded),
        ["substitution-expansion"],
        "{}",
        plain(&loaded)
    );
}

#[test]
fn long_substitution_chains_are_refused() {
    // Written in either order, a chain longer than 64 is refused.
    let mut forward = format!("{CASE}a0 = x\n");
    let mut backward = format!("{CASE}a0 = x\n");
    for i in 1..=100 {
        forward.push_str(&format!("a{i} = ${{a{}}}\n", i - 1));
        backward.push_str(&format!("b{} = ${{b{i}}}\n", i - 1));
    }
    backward.push_str("b100 = x\n");
    for text in [forward, backward] {
        let loaded = load("chain.hocon", &text);
        assert_eq!(
            codes(&loaded),
            ["substitution-too-deep"],
            "{}",
            plain(&loaded)
        );
        assert!(plain(&loaded).contains("more than 64 levels"));
    }
}

#[test]
fn ordinary_substitutions_still_resolve() {
    let text = format!(
        "{CASE}base = \"http://h\"\nurl = ${{base}}\"/v1\"\nobj {{ a = 1 }}\ncopy = ${{obj}}\n\
         list = [1, 2]\nlist = ${{list}} [3]\nall = ${{list}}\nx = 1\nx = ${{x}}\n"
    );
    let loaded = load("ok.hocon", &text);
    let tree = loaded.tree.as_ref().expect("parsed");
    assert_eq!(tree.get("url").unwrap().as_str(), Some("http://h/v1"));
    // `list` only feeds substitutions, so the case leaves it out; `all` holds it.
    assert_eq!(tree.get("all").unwrap().as_array().unwrap().len(), 3);
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load_path(path: &Path, limits: &Limits) -> Result<Option<Loaded>, std::io::Error> {
    load_file_with(path, &Env::default(), Unrecognized::Error, limits)
}

#[test]
fn a_file_over_the_size_limit_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "big.hocon",
        &format!("{CASE}# {}\n", "x".repeat(5000)),
    );
    let limits = Limits {
        max_input_bytes: 4096,
        ..Limits::default()
    };
    let e = load_path(&path, &limits).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
    assert!(e.to_string().contains("limit of 4 KiB"), "{e}");
    assert!(e.to_string().contains("max_input_bytes"), "{e}");
}

#[test]
fn includes_count_against_the_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.conf", &format!("# {}\n", "x".repeat(3000)));
    let main = write(
        dir.path(),
        "main.hocon",
        &format!("include \"big.conf\"\n{CASE}"),
    );
    let limits = Limits {
        max_input_bytes: 2048,
        ..Limits::default()
    };
    let loaded = load_path(&main, &limits).unwrap().unwrap();
    assert_eq!(codes(&loaded), ["too-large"], "{}", plain(&loaded));
    assert!(
        plain(&loaded).contains("more than 2 KiB"),
        "{}",
        plain(&loaded)
    );
    assert!(plain(&loaded).starts_with(&format!("{}:1:1", main.display())));
    // Within the default it loads.
    assert!(
        load_path(&main, &Limits::default())
            .unwrap()
            .unwrap()
            .is_valid()
    );
}

#[cfg(unix)]
#[test]
fn an_included_device_or_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.conf")).unwrap();
    let main = write(
        dir.path(),
        "main.hocon",
        &format!("include \"zero.conf\"\n{CASE}"),
    );
    let started = Instant::now();
    let loaded = load_path(&main, &Limits::default()).unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(codes(&loaded), ["unreadable-include"], "{}", plain(&loaded));
    assert!(
        plain(&loaded).contains("character device"),
        "{}",
        plain(&loaded)
    );

    let fifo = dir.path().join("pipe.conf");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let main = write(
            dir.path(),
            "fifo.hocon",
            &format!("include \"pipe.conf\"\n{CASE}"),
        );
        let loaded = load_path(&main, &Limits::default()).unwrap().unwrap();
        assert!(plain(&loaded).contains("named pipe"), "{}", plain(&loaded));
        // The test file itself as a FIFO.
        let e = load_path(&fifo, &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("named pipe"), "{e}");
    }
}

#[test]
fn dotted_keys_in_an_included_file_count_too() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "deep.conf",
        &format!("x{} = 1\n", ".a".repeat(2000)),
    );
    let main = write(
        dir.path(),
        "main.hocon",
        &format!("include \"deep.conf\"\n{CASE}"),
    );
    let loaded = load_path(&main, &Limits::default()).unwrap().unwrap();
    assert_eq!(codes(&loaded), ["too-deep"], "{}", plain(&loaded));
    assert!(plain(&loaded).contains("deep.conf"), "{}", plain(&loaded));
}

#[test]
fn a_substitution_bomb_in_an_included_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bomb.conf",
        &format!("s = x\n{}", "s = ${s}${s}\n".repeat(30)),
    );
    let main = write(
        dir.path(),
        "main.hocon",
        &format!("{CASE}include \"bomb.conf\"\n"),
    );
    let loaded = load_path(&main, &Limits::default()).unwrap().unwrap();
    assert_eq!(
        codes(&loaded),
        ["substitution-expansion"],
        "{}",
        plain(&loaded)
    );
    assert!(plain(&loaded).starts_with(&format!("{}:3:1", main.display())));
}

#[test]
fn includes_can_be_confined_to_the_project() {
    let outside = tempfile::tempdir().unwrap();
    let secret = write(outside.path(), "secret.conf", "stolen = \"private\"\n");
    let project = tempfile::tempdir().unwrap();
    write(project.path(), "shared.conf", "common = 1\n");
    let text = format!(
        "{CASE}include \"shared.conf\"\ninclude \"{}\"\n",
        secret.display()
    );
    let main = write(project.path(), "main.hocon", &text);

    // HOCON's meaning by default: any path.
    let loaded = load_path(&main, &Limits::default()).unwrap().unwrap();
    assert!(loaded.tree.as_ref().unwrap().get("stolen").is_some());

    let confined = Limits {
        includes: IncludeScope::Within(project.path().to_path_buf()),
        ..Limits::default()
    };
    let loaded = load_path(&main, &confined).unwrap().unwrap();
    assert_eq!(
        codes(&loaded),
        ["include-outside-project"],
        "{}",
        plain(&loaded)
    );
    let out = plain(&loaded);
    assert!(out.contains("outside the project folder"), "{out}");
    assert!(out.contains("includes = \"project\""), "{out}");
    assert!(out.starts_with(&format!("{}:4:1", main.display())), "{out}");

    // A symbolic link inside the project that points out of it is outside too.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&secret, project.path().join("link.conf")).unwrap();
        let main = write(
            project.path(),
            "link.hocon",
            &format!("{CASE}include \"link.conf\"\n"),
        );
        let loaded = load_path(&main, &confined).unwrap().unwrap();
        assert_eq!(
            codes(&loaded),
            ["include-outside-project"],
            "{}",
            plain(&loaded)
        );
    }
    // Inside the project, includes still work.
    let main = write(
        project.path(),
        "inside.hocon",
        &format!("{CASE}include \"shared.conf\"\n"),
    );
    let loaded = load_path(&main, &confined).unwrap().unwrap();
    assert!(
        loaded.is_valid() || codes(&loaded) == ["unknown-key"],
        "{}",
        plain(&loaded)
    );
    assert!(loaded.tree.as_ref().unwrap().get("common").is_some());
}

#[test]
fn invalid_utf8_has_a_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.hocon");
    std::fs::write(&path, b"agent = a\nx = \"ok \xff\"\n").unwrap();
    let loaded = load_path(&path, &Limits::default()).unwrap().unwrap();
    assert_eq!(codes(&loaded), ["not-utf8"]);
    let out = plain(&loaded);
    assert!(
        out.starts_with(&format!("{}:2:9:", path.display())),
        "{out}"
    );
    assert!(out.contains("0xff"), "{out}");
}

#[test]
fn values_from_the_environment_stay_out_of_diagnostics() {
    let secret = "sk-proj-SECRETVALUE-0123456789abcdefghijklmnopqrstuvwxyz-0123456789abcdef";
    let env = Env::from_pairs([("OPENAI_API_KEY", secret)]);
    // The pattern of neuro-san's with_user_api_key.hocon, with a value in the wrong place.
    let text = "agent = a\nconnections = ${OPENAI_API_KEY}\ninteractions = [{\n  text = hi\n  \
                sly_data { api_keys { openai_api_key = ${OPENAI_API_KEY} } }\n  \
                response.text.keywords = hi\n  timeout_in_seconds = ${OPENAI_API_KEY}\n}]\n\
                metadata = { a = { b = ${OPENAI_API_KEY} } }\nsuccess_ratio = ${OPENAI_API_KEY}\n";
    let loaded = load_str_with(
        Path::new("k.hocon"),
        text,
        &env,
        Unrecognized::Error,
        &Limits::default(),
    )
    .unwrap();
    assert!(!loaded.is_valid());
    let mut everything = String::new();
    for report in loaded.reports() {
        everything.push_str(&report.plain());
        everything.push_str(&report.render(false));
        everything.push_str(&report.diagnostic.to_json(&report.source).to_string());
    }
    assert!(everything.contains("${OPENAI_API_KEY}"), "{everything}");
    // Not the value, nor a piece of it long enough to matter.
    assert!(!everything.contains(&secret[..12]), "{everything}");

    // A Sentinel spec in HOCON: its messages quote the input in Python's style, cut.
    let text = "name = t\nmodel = m\ninputs { query = hi, context { key = ${OPENAI_API_KEY} } }\n\
                assertions = [{ must_contain = x }]\nmodel_config { temperature = ${OPENAI_API_KEY} }\n\
                seed = ${OPENAI_API_KEY}\n";
    let loaded = load_str_with(
        Path::new("s.hocon"),
        text,
        &env,
        Unrecognized::Error,
        &Limits::default(),
    )
    .unwrap();
    assert!(!loaded.is_valid());
    let out: String = loaded
        .reports()
        .iter()
        .map(|r| r.plain() + &r.render(false))
        .collect();
    assert!(out.contains("${OPENAI_API_KEY}"), "{out}");
    assert!(!out.contains(&secret[..8]), "{out}");
}

#[test]
fn numbers_too_large_to_hold_say_what_the_limit_is() {
    // `4294967296/4294967296` was "not a whole number".
    let text = format!("{CASE}success_ratio = \"4294967296/4294967296\"\n");
    let out = plain(&load("ratio.hocon", &text));
    assert!(
        out.contains("`4294967296` is more than 100000, the most samples a case can take"),
        "{out}"
    );
    assert!(!out.contains("not a whole number"), "{out}");

    // `timeout_ms: 18446744073709551615` was "expected an integer, found an integer".
    let text = "name: t\nmodel: m\ninputs:\n  query: hi\nassertions:\n  - must_contain: x\n\
                timeout_ms: 18446744073709551615\n";
    let loaded = load("spec.yaml", text);
    assert_eq!(codes(&loaded), ["out-of-range"], "{}", plain(&loaded));
    let out = plain(&loaded);
    assert!(out.contains("at most 9223372036854775807"), "{out}");
}

/// One 50 KB anchored string, a list of 1,000 aliases to it and a list of 500 aliases
/// to that list: a 51 KB file whose 501,500 values pass the values' limit, and which
/// expanded to 25 GB of text (issue 41).
fn alias_bytes_bomb() -> String {
    let mut text = format!("s: &s \"{}\"\n", "x".repeat(50_000));
    text.push_str(&format!("a: &a [{}*s]\n", "*s, ".repeat(999)));
    text.push_str(&format!("b: [{}*a]\n", "*a, ".repeat(499)));
    text
}

#[test]
fn yaml_aliases_are_bounded_in_bytes_not_only_in_values() {
    let text = alias_bytes_bomb();
    assert!(text.len() < 60_000, "far under the input limit");
    let loaded = load("bomb.yaml", &text);
    assert_eq!(codes(&loaded), ["alias-expansion"], "{}", plain(&loaded));
    let out = plain(&loaded);
    assert!(
        out.contains("aliases expand to more than 64 MiB of text"),
        "{out}"
    );
    // At the first alias of `b`: the list `a` (50 MB) was copied once, never `b`'s
    // 500 copies of it. The error comes before the expansion it refuses.
    assert!(
        out.starts_with("bomb.yaml:3:5: error[alias-expansion]"),
        "{out}"
    );
    assert!(out.contains("expected: aliases that copy at most 64 MiB of text in all"));
    assert!(loaded.tree.is_none());
    // The same shape around a 10-byte string (5 MB once expanded) is an ordinary file.
    let small = text.replace(&"x".repeat(50_000), &"x".repeat(10));
    let loaded = load("small.yaml", &small);
    assert!(loaded.tree.is_some(), "{}", plain(&loaded));
}

#[test]
fn nested_anchors_are_bounded_in_bytes() {
    // No alias at all: each anchored list keeps a copy of what it holds, so 200 of
    // them nested around a 500 KB string (a 500 KB file) kept 100 MB.
    let text = format!(
        "{}\"{}\"{}\n",
        "&a [".repeat(200),
        "x".repeat(500_000),
        "]".repeat(200)
    );
    let loaded = load("nested.yaml", &text);
    assert_eq!(codes(&loaded), ["alias-expansion"], "{}", plain(&loaded));
    let out = plain(&loaded);
    assert!(
        out.contains("anchors keep copies of more than 64 MiB of text"),
        "{out}"
    );
}

/// A file of 100,000 wrong values, within the input limit: it gets the first 200
/// problems and one that counts the rest, rather than 100,000 (which took minutes and
/// hundreds of megabytes to find and print: a problem's place was looked up on the
/// same long line again and again). In every dialect.
#[test]
fn a_file_of_many_wrong_values_gets_the_first_problems_and_a_count() {
    let many = vec!["0"; 100_000].join(", ");
    for (name, text) in [
        ("s.yaml", format!("name: s\ntests: [{many}]\n")),
        (
            "d.json",
            format!("{{\"agent\": \"a\", \"interactions\": [{many}]}}"),
        ),
        ("d.hocon", format!("agent = a\ninteractions = [{many}]\n")),
    ] {
        let loaded = load(name, &text);
        let codes = codes(&loaded);
        assert_eq!(
            codes.len(),
            201,
            "{name}: {:?}",
            &codes[..5.min(codes.len())]
        );
        assert_eq!(codes[200], "too-many-problems", "{name}");
        let shown = plain(&loaded);
        assert!(
            shown.contains("99800 more problems in this file are not shown: the first 200 are"),
            "{name}: {}",
            &shown[shown.len().saturating_sub(300)..]
        );
    }
}

/// `[1,1,1,...]`: `n` values in `bytes` bytes or so.
fn tiny_values(n: usize) -> String {
    let mut text = String::with_capacity(2 * n + 2);
    text.push('[');
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push('1');
    }
    text.push(']');
    text
}

/// A file of tiny values within the byte limit costs memory by the value: past the
/// count it is refused before it is parsed, in every syntax, whatever the file's
/// dialect; an include's values count with the file's.
#[test]
fn a_file_of_too_many_values_is_refused_before_it_is_parsed() {
    let list = tiny_values(4_000_001);
    for (name, text) in [
        (
            "many.json",
            format!("{{\"name\": \"s\", \"tests\": {list}}}"),
        ),
        ("many.yaml", format!("name: s\ntests: {list}\n")),
        (
            "many.hocon",
            format!("{CASE}x = {}\n", tiny_values(250_001)),
        ),
    ] {
        let loaded = load(name, &text);
        assert_eq!(codes(&loaded), ["too-many-values"], "{name}");
        let out = plain(&loaded);
        assert!(out.contains("more than"), "{out}");
        assert!(out.contains("split it into several files"), "{out}");
    }
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "values.conf",
        &format!("x = {}\n", tiny_values(200_000)),
    );
    write(
        dir.path(),
        "more.conf",
        &format!("y = {}\n", tiny_values(60_000)),
    );
    let main = write(
        dir.path(),
        "main.hocon",
        &format!("include \"values.conf\"\ninclude \"more.conf\"\n{CASE}"),
    );
    let loaded = load_path(&main, &Limits::default()).unwrap().unwrap();
    assert_eq!(codes(&loaded), ["too-many-values"], "{}", plain(&loaded));
}

/// A generated suite of 100,000 tests (about 20 MB) loads under the default limits,
/// in YAML and in JSON.
#[test]
fn a_generated_suite_of_100000_tests_loads_with_the_default_limits() {
    let dir = tempfile::tempdir().unwrap();
    let mut yaml = String::from("name: generated\ntests:\n");
    let mut json = String::from("{\"name\": \"generated\", \"tests\": [");
    for i in 0..100_000 {
        let query = format!("What is the capital of country number {i}? Answer in one word.");
        yaml.push_str(&format!(
            "  - name: case {i:06}\n    model: gpt-4o-mini\n    provider: openai\n    inputs:\n      query: \"{query}\"\n    assertions:\n      - must_contain: Paris\n"
        ));
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            "{{\"name\": \"case {i:06}\", \"model\": \"gpt-4o-mini\", \"provider\": \"openai\", \"inputs\": {{\"query\": \"{query}\"}}, \"assertions\": [{{\"must_contain\": \"Paris\"}}]}}"
        ));
    }
    json.push_str("]}");
    assert!(yaml.len() > 16 * 1024 * 1024 && json.len() > 16 * 1024 * 1024);
    for (name, text) in [("suite.yaml", yaml), ("suite.json", json)] {
        let path = write(dir.path(), name, &text);
        let loaded = load_path(&path, &Limits::default())
            .expect("within the default limit")
            .expect("a test file");
        assert!(loaded.is_valid(), "{name}: {}", plain(&loaded));
    }
}
