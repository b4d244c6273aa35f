//! Hostile input through the real `prill` binary (issue 16): files that are not
//! regular files, symbolic links, secrets from the environment, confined includes,
//! size limits, and huge keys. Each test is the smallest input that showed a bug.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{code, prill_bounded, stderr, stdout, write};

const CASE: &str = "agent = a\ninteractions = [{text = hi, response.text.keywords = hi}]\n";

const SPEC: &str = "name: t\nmodel: m\ninputs:\n  query: hi\nassertions:\n  - must_contain: x\n";

#[cfg(unix)]
#[test]
fn a_fifo_named_like_a_test_file_is_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.path().join("x.conf"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let out = prill_bounded(dir.path(), &["validate", "x.conf"], &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("named pipe"), "{}", stderr(&out));
    // Found by walking the folder, it is reported too, not skipped in silence.
    let out = prill_bounded(dir.path(), &["validate", "."], &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("named pipe"), "{}", stderr(&out));
}

#[cfg(unix)]
#[test]
fn a_test_file_linked_to_dev_zero_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.hocon")).unwrap();
    let started = Instant::now();
    let out = prill_bounded(dir.path(), &["validate", "zero.hocon"], &[]);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("character device"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_over_max_input_bytes_says_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "prill.toml", "max_input_bytes = 1024\n");
    write(
        dir.path(),
        "big.yaml",
        &format!("{SPEC}# {}\n", "x".repeat(2000)),
    );
    let out = prill_bounded(dir.path(), &["validate", "big.yaml"], &[]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("over the limit of 1 KiB"), "{err}");
    assert!(err.contains("max_input_bytes"), "{err}");
    // Without the setting the default (32 MiB) holds it.
    std::fs::remove_file(dir.path().join("prill.toml")).unwrap();
    assert_eq!(
        code(&prill_bounded(dir.path(), &["validate", "big.yaml"], &[])),
        0
    );
}

#[cfg(unix)]
#[test]
fn a_folder_of_symlinks_is_followed_and_loops_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "real/a.yaml", SPEC);
    write(dir.path(), "real/sub/b.yaml", SPEC);
    std::fs::create_dir(dir.path().join("links")).unwrap();
    let link = |target: &str, name: &str| {
        std::os::unix::fs::symlink(target, dir.path().join("links").join(name)).unwrap();
    };
    link("../real/a.yaml", "a.yaml");
    link("../real/sub", "sub");
    // A folder of links validated as `0 files` with exit 0.
    let out = prill_bounded(dir.path(), &["validate", "links"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("2 files, 2 valid"),
        "{}",
        stdout(&out)
    );

    // A loop and a broken link are listed as not read, and the run is not a success.
    link("..", "up");
    link("../nowhere.yaml", "gone.yaml");
    let out = prill_bounded(dir.path(), &["validate", "links"], &[]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("symbolic link loop"), "{err}");
    assert!(err.contains("symbolic link to nothing"), "{err}");
}

#[test]
fn values_from_the_environment_are_shown_by_name() {
    let secret = "sk-proj-SECRET-k3y-0123456789abcdefghijklmnopqrstuvwxyz";
    let dir = tempfile::tempdir().unwrap();
    // The pattern of neuro-san's own with_user_api_key.hocon.
    let good = r#"{
    "agent": "music_nerd_pro_sly_api_key",
    "connections": ["direct"],
    "interactions": [{
        "text": "Who did Yellow Submarine?",
        "sly_data": { "api_keys": { "openai_api_key": ${OPENAI_API_KEY} } },
        "response": { "structure": { "answer": { "keywords": "Beatles" } } }
    }]
}
"#;
    write(dir.path(), "good/with_user_api_key.hocon", good);
    // The same key where a list and a number belong.
    let bad = good.replace(r#"["direct"]"#, "${OPENAI_API_KEY}").replace(
        r#""text": "Who"#,
        r#""timeout_in_seconds": ${OPENAI_API_KEY}, "text": "Who"#,
    );
    write(dir.path(), "bad/key.hocon", &bad);
    let env = [("OPENAI_API_KEY", secret)];

    let list = prill_bounded(dir.path(), &["list", "--format", "json", "good"], &env);
    assert_eq!(code(&list), 0, "{}", stderr(&list));
    let listed = stdout(&list);
    assert!(
        listed.contains("\"openai_api_key\": \"${OPENAI_API_KEY}\""),
        "{listed}"
    );

    let mut everything = listed;
    for args in [
        &["validate", "bad"][..],
        &["validate", "--format", "json", "bad"],
        &["list", "bad"],
        &["run", "bad"],
    ] {
        let out = prill_bounded(dir.path(), args, &env);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        everything.push_str(&stdout(&out));
        everything.push_str(&stderr(&out));
    }
    assert!(everything.contains("${OPENAI_API_KEY}"), "{everything}");
    assert!(!everything.contains(&secret[..10]), "{everything}");
}

#[test]
fn includes_can_be_confined_to_the_project_folder() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "private.conf", "stolen = \"private\"\n");
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{CASE}include \"{}\"\n",
        outside.path().join("private.conf").display()
    );
    write(dir.path(), "t.hocon", &text);
    // HOCON's meaning by default: the include is read (and its key is unknown).
    let out = prill_bounded(dir.path(), &["validate", "t.hocon"], &[]);
    assert!(stderr(&out).contains("stolen"), "{}", stderr(&out));

    write(dir.path(), "prill.toml", "includes = \"project\"\n");
    let out = prill_bounded(dir.path(), &["validate", "t.hocon"], &[]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("include-outside-project"), "{err}");
    assert!(!err.contains("stolen"), "{err}");

    write(dir.path(), "prill.toml", "includes = \"anywhere\"\n");
    let out = prill_bounded(
        dir.path(),
        &["validate", "--format", "human", "prill.toml"],
        &[],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("one of `any` or `project`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_huge_key_gives_a_short_message() {
    // A 1 MB key produced 6.6 MB of stderr.
    let dir = tempfile::tempdir().unwrap();
    let key = "k".repeat(1_000_000);
    write(
        dir.path(),
        "big.json",
        &format!(
            "{{\"name\": \"t\", \"model\": \"m\", \"inputs\": {{\"query\": \"q\"}}, \"assertions\": [], \"{key}\": 1}}"
        ),
    );
    let out = prill_bounded(dir.path(), &["validate", "big.json"], &[]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown key"),
        "{}",
        &stderr(&out)[..2000]
    );
    assert!(
        out.stderr.len() < 20_000,
        "{} bytes of stderr",
        out.stderr.len()
    );
    let out = prill_bounded(
        dir.path(),
        &["validate", "--format", "json", "big.json"],
        &[],
    );
    assert!(
        out.stdout.len() < 20_000,
        "{} bytes of stdout",
        out.stdout.len()
    );
}

#[test]
fn a_shard_too_large_says_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.yaml", SPEC);
    let out = prill_bounded(
        dir.path(),
        &["run", "--shard", "1/18446744073709551615", "t.yaml"],
        &[],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("too large: the limit is 4294967295"),
        "{}",
        stderr(&out)
    );
}
