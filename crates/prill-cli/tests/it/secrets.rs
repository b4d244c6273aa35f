//! Secrets never appear in anything `prill run` or `prill assess` writes: each test
//! sets distinctive secrets in the environment, runs with every report flag, and greps
//! stdout, stderr and every report file for them.
//!
//! - values a HOCON file reads with `${VAR}` (sent as text, sly_data and metadata, and
//!   expected by a failing `value` check) show as `${VAR}`;
//! - a direct agent that prints its environment to stderr and dies shows no key;
//! - a key a provider refused and quoted in part (`sk-***…Qz4w`) shows no part of it.

#![cfg(unix)]

use std::path::Path;

use prill_testkit::providers::openai::FakeOpenAi;

use crate::support::{isolated, stderr, stdout};

/// The report flags of `prill run`, each with its file.
const REPORTS: [(&str, &str); 5] = [
    ("--json", "report.json"),
    ("--jsonl", "report.jsonl"),
    ("--junit", "junit.xml"),
    ("--markdown", "summary.md"),
    ("--html", "report.html"),
];

/// `prill run <spec> -v` with every report; returns the run and every output by name.
fn run_reported(dir: &Path, spec: &str, extra: &[&str], env: &[(&str, &str)]) -> Outputs {
    let mut args = vec!["run", spec, "-v"];
    args.extend_from_slice(extra);
    for (flag, file) in REPORTS {
        args.extend([flag, file]);
    }
    let out = isolated(dir, &args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let mut outputs = vec![
        ("stdout".to_owned(), stdout(&out)),
        ("stderr".to_owned(), stderr(&out)),
    ];
    for (_, file) in REPORTS {
        let text = std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|e| panic!("{file} was not written ({e}): {outputs:?}"));
        outputs.push((file.to_owned(), text));
    }
    Outputs {
        code: out.status.code(),
        outputs,
    }
}

struct Outputs {
    code: Option<i32>,
    outputs: Vec<(String, String)>,
}

impl Outputs {
    fn get(&self, name: &str) -> &str {
        &self.outputs.iter().find(|(n, _)| n == name).unwrap().1
    }

    /// Fails when any output holds any of `leaks`.
    fn assert_none_holds(&self, leaks: &[&str]) {
        for (name, text) in &self.outputs {
            for leak in leaks {
                assert!(
                    !text.contains(leak),
                    "{name} shows {leak:?}:\n{text}\n(stderr: {})",
                    self.get("stderr")
                );
            }
        }
    }

    /// Fails unless every report file and stderr hold `shown`.
    fn assert_every_report_holds(&self, shown: &str) {
        for (name, text) in self.outputs.iter().filter(|(n, _)| n != "stdout") {
            assert!(text.contains(shown), "{name} lacks {shown:?}:\n{text}");
        }
    }
}

const SECRET: &str = "s3cr3t-Vx81-Kp27-Qm55";
const TOKEN: &str = "tok-Bn40-Lw93-Hc16";

/// A case that sends `${PRILL_TEST_SECRET}` as text, sly_data and metadata to `echo`,
/// and expects it in checks that fail.
const ECHO_SECRET: &str = r#"
{
  agent = echo
  connections = [direct, http]
  metadata { authorization = "Bearer "${PRILL_TEST_TOKEN} }
  interactions = [
    {
      text = "the secret is "${PRILL_TEST_SECRET}
      sly_data { token = ${PRILL_TEST_SECRET} }
      response {
        text { value = ${PRILL_TEST_SECRET} }
        sly_data { token { value = "something else" } }
      }
    }
  ]
}
"#;

#[test]
fn values_from_the_environment_show_by_name_in_every_output_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.hocon"), ECHO_SECRET).unwrap();
    let env = [("PRILL_TEST_SECRET", SECRET), ("PRILL_TEST_TOKEN", TOKEN)];
    // With every log on (`trace`: the HTTP and TLS libraries' too), on stderr.
    let extra = ["--demo", "--log-level", "trace"];
    let run = run_reported(dir.path(), "secret.hocon", &extra, &env);
    assert_eq!(run.code, Some(1), "the checks fail: {}", run.get("stderr"));
    assert!(
        run.get("stderr").contains(" TRACE "),
        "no log: {}",
        run.get("stderr")
    );
    run.assert_none_holds(&[SECRET, TOKEN, "s3cr3t-Vx", "Qm55"]);
    run.assert_every_report_holds("${PRILL_TEST_SECRET}");
    // The failure says what it expected and found, by name.
    let report: serde_json::Value = serde_json::from_str(run.get("report.json")).unwrap();
    let checks = &report["units"][0]["samples"][0]["interactions"][0]["checks"];
    assert_eq!(checks[0]["expected"], "${PRILL_TEST_SECRET}", "{checks}");
    assert_eq!(
        checks[0]["found"], "the secret is ${PRILL_TEST_SECRET}",
        "{checks}"
    );
    assert_eq!(checks[1]["found"], "${PRILL_TEST_SECRET}", "{checks}");
    // The sly_data sent is recorded, by name too.
    assert_eq!(
        report["units"][0]["samples"][0]["interactions"][0]["sent_sly_data"],
        serde_json::json!({"token": "${PRILL_TEST_SECRET}"})
    );
}

#[test]
fn values_from_the_environment_show_by_name_in_an_assessment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.hocon"), ECHO_SECRET).unwrap();
    let env = [("PRILL_TEST_SECRET", SECRET), ("PRILL_TEST_TOKEN", TOKEN)];
    let out = isolated(
        dir.path(),
        &[
            "assess",
            "secret.hocon",
            "--demo",
            "--samples",
            "2",
            "--json",
            "assess.json",
            "--markdown",
            "assess.md",
            "--html",
            "assess.html",
        ],
    )
    .envs(env)
    .output()
    .unwrap();
    let mut outputs = vec![("stdout", stdout(&out)), ("stderr", stderr(&out))];
    for file in ["assess.json", "assess.md", "assess.html"] {
        let text = std::fs::read_to_string(dir.path().join(file))
            .unwrap_or_else(|e| panic!("{file} was not written ({e}): {outputs:?}"));
        outputs.push((file, text));
    }
    for (name, text) in &outputs {
        for leak in [SECRET, TOKEN, "s3cr3t-Vx", "Qm55"] {
            assert!(!text.contains(leak), "{name} shows {leak:?}:\n{text}");
        }
    }
    let json = &outputs[2].1;
    assert!(json.contains("${PRILL_TEST_SECRET}"), "{json}");
}

/// A direct agent that prints its environment to stderr and dies without answering.
const LEAKY_AGENT: &str = r#"
import os, sys
sys.stdin.readline()
for name, value in sorted(os.environ.items()):
    print(f"{name}={value}", file=sys.stderr)
for name in ["OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "MY_GATEWAY_KEY"]:
    print(f"{name}={os.environ[name]}", file=sys.stderr)
print("key starts " + os.environ["OPENAI_API_KEY"][:9], file=sys.stderr, flush=True)
sys.exit(2)
"#;

#[test]
fn a_direct_agent_that_prints_its_environment_shows_no_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("leaky.py"), LEAKY_AGENT).unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        r#"
[agents.leaky]
command = ["python3", "leaky.py"]

[providers.openai]
api_key_env = "MY_GATEWAY_KEY"
"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("leaky.yaml"),
        "agent: leaky\nconnections: [direct]\ninteractions:\n  - text: hi\n    response:\n      text: {keywords: hi}\n",
    )
    .unwrap();
    let keys = [
        ("OPENAI_API_KEY", "sk-proj-Ty62-Gh08-Ws41"),
        ("HF_TOKEN", "hf_Pa73Ld29Kz05Nx"),
        ("AWS_SECRET_ACCESS_KEY", "aws/Ue38+Rb60/Yi14"),
        ("MY_GATEWAY_KEY", "gw-Jc57-Mv82-Do30"),
    ];
    let run = run_reported(dir.path(), "leaky.yaml", &[], &keys);
    assert_eq!(
        run.code,
        Some(3),
        "the sample errors: {}",
        run.get("stderr")
    );
    let stderr = run.get("stderr");
    assert!(stderr.contains("its stderr ends with"), "{stderr}");
    let mut leaks: Vec<&str> = keys.iter().map(|(_, v)| *v).collect();
    leaks.extend(["sk-proj-T", "Ws41", "Do30"]);
    run.assert_none_holds(&leaks);
    // The tail is worth reading still: each key shows by name. (The Markdown summary
    // quotes only the start of a long message, which the whole environment fills.)
    for (name, _) in keys {
        let shown = format!("{name}=${{{name}}}");
        for output in ["stderr", "report.json", "report.jsonl", "junit.xml"] {
            let text = run.get(output);
            assert!(text.contains(&shown), "{output} lacks {shown:?}:\n{text}");
        }
    }
}

#[test]
fn a_refused_key_quoted_in_part_by_the_provider_shows_no_part_of_it() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-the-right-key-0000");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: refused\nmodel: gpt-4o-mini\nprovider: openai\ninputs: {query: hi}\nassertions:\n  - must_contain: hello\n",
    )
    .unwrap();
    let wrong = "sk-wrong-Fe19-Ar66-Zt4q";
    let base = fake.base_url();
    let env = [
        ("OPENAI_API_KEY", wrong),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let run = run_reported(dir.path(), "spec.yaml", &["--log-level", "trace"], &env);
    assert_eq!(
        run.code,
        Some(3),
        "the sample errors: {}",
        run.get("stderr")
    );
    // The fake answers as OpenAI does: `Incorrect API key provided: sk-***…Zt4q`.
    run.assert_every_report_holds("Incorrect API key provided");
    run.assert_none_holds(&[wrong, "Zt4q", "Ar66"]);
    drop(fake);
}
