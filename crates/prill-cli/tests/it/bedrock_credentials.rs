//! Bedrock's AWS credentials through the `prill` binary, for what the AWS SDK reads from
//! the process environment rather than from the snapshot Prill passes it: container
//! credentials (`AWS_CONTAINER_CREDENTIALS_FULL_URI` and its authorization token, served
//! by a fake ECS endpoint on 127.0.0.1), and the profile named in `prill.toml`, all the
//! way from the settings layer. The child's environment is cleared first: no profile,
//! key or instance metadata of the machine is read, and nothing leaves 127.0.0.1.

use std::path::Path;
use std::process::Output;

use prill_testkit::providers::Reply;
use prill_testkit::providers::bedrock::container::FakeContainerCredentials;
use prill_testkit::providers::bedrock::{FakeBedrock, parse_sigv4};

use crate::support::{command, runtime};

const CONTAINER_KEY: &str = "ASIACONTAINER0000001";
const CONTAINER_SECRET: &str = "container/secret+key/0123456789abcdefgh";
const CONTAINER_TOKEN: &str = "container-session-token";
const PROFILE_KEY: &str = "AKIAPROFILETEAM00003";
const PROFILE_SECRET: &str = "profile/team/secret+key/0123456789abcde";

/// Runs one spec that expects "Paris" in `dir`, with only `env` (and `PATH`) in the
/// child's environment.
fn run_with_only(dir: &Path, env: &[(&str, String)]) -> Output {
    std::fs::write(
        dir.join("suite.yaml"),
        "name: t\nmodel: meta.llama3-1-8b-instruct-v1:0\nprovider: bedrock\ninputs: {query: \"Capital of France?\"}\nassertions: [{must_contain: Paris}]\n",
    )
    .unwrap();
    let mut cmd = command(dir, &["run", "suite.yaml"]);
    cmd.env_clear()
        .env("NO_COLOR", "1")
        .env("HOME", dir)
        .env("AWS_EC2_METADATA_DISABLED", "true");
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn container_credentials_sign_the_request() {
    let rt = runtime();
    let container = rt.block_on(FakeContainerCredentials::start(
        CONTAINER_KEY,
        CONTAINER_SECRET,
        CONTAINER_TOKEN,
        "2999-01-01T00:00:00Z",
        Some("container-auth-token"),
    ));
    let fake = rt.block_on(FakeBedrock::start());
    fake.expect_sigv4(CONTAINER_KEY, CONTAINER_SECRET, "eu-central-1");
    fake.default_reply(Reply::text("Paris."));
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_only(
        dir.path(),
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.base_url()),
            ("AWS_REGION", "eu-central-1".to_owned()),
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", container.full_uri()),
            (
                "AWS_CONTAINER_AUTHORIZATION_TOKEN",
                "container-auth-token".to_owned(),
            ),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "{stderr}");
    assert_eq!(
        requests[0].header("x-amz-security-token"),
        Some(CONTAINER_TOKEN)
    );
    let parsed = parse_sigv4(requests[0].header("authorization").unwrap()).unwrap();
    assert_eq!(parsed.access_key_id, CONTAINER_KEY);
    assert_eq!(container.requests().len(), 1, "asked once");
    for shown in [
        stderr.as_ref(),
        String::from_utf8_lossy(&out.stdout).as_ref(),
    ] {
        assert!(!shown.contains(CONTAINER_SECRET), "{shown}");
    }
}

#[test]
fn the_profile_named_in_prill_toml_is_used() {
    let rt = runtime();
    let fake = rt.block_on(FakeBedrock::start());
    fake.expect_sigv4(PROFILE_KEY, PROFILE_SECRET, "sa-east-1");
    fake.default_reply(Reply::text("Paris."));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".aws")).unwrap();
    std::fs::write(
        dir.path().join(".aws/credentials"),
        format!(
            "[default]\naws_access_key_id = AKIAWRONG\naws_secret_access_key = wrong\n\
             [team]\naws_access_key_id = {PROFILE_KEY}\naws_secret_access_key = {PROFILE_SECRET}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".aws/config"),
        "[profile team]\nregion = sa-east-1\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        "[providers.bedrock]\nprofile = \"team\"\n",
    )
    .unwrap();
    let out = run_with_only(
        dir.path(),
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.base_url()),
            ("AWS_PROFILE", "default".to_owned()),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let parsed = parse_sigv4(fake.requests()[0].header("authorization").unwrap()).unwrap();
    assert_eq!(parsed.access_key_id, PROFILE_KEY);
    assert_eq!(parsed.region, "sa-east-1", "the profile's region");
}
