//! Bedrock's AWS credential chain end to end against the fake Converse API, whose SigV4
//! verifier recomputes every signature: a profile's static keys and region (in
//! `$HOME/.aws`), a profile named by `AWS_PROFILE` and by `profile` in
//! `[providers.bedrock]` (which wins), `credential_process` (run on the first call
//! only, kept, and run again when its credentials are about to expire), a failing
//! `credential_process` (the error names the profile), and nothing configured (the error
//! lists what was tried). Every environment snapshot turns the instance metadata
//! service off and has no container variables: nothing leaves 127.0.0.1.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use prill_connect::ErrorKind;
use prill_connect::HttpOptions;
use prill_connect::provider::bedrock::Bedrock;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{Limits, Provider, ProviderKind, ProviderSettings};
use prill_spec::model::config::ProviderConfig;
use prill_testkit::providers::Reply;
use prill_testkit::providers::bedrock::{FakeBedrock, parse_sigv4};
use tempfile::TempDir;

use super::{LLAMA, ask};

const PROFILE_KEY: &str = "AKIAPROFILEDEFAULT01";
const PROFILE_SECRET: &str = "profile/default/secret+key/0123456789ab";
const DEV_KEY: &str = "AKIAPROFILEDEV000002";
const DEV_SECRET: &str = "profile/dev/secret+key/0123456789abcdef";
const TEAM_KEY: &str = "AKIAPROFILETEAM00003";
const TEAM_SECRET: &str = "profile/team/secret+key/0123456789abcde";
const PROCESS_KEY: &str = "AKIAPROCESS000000004";
const PROCESS_SECRET: &str = "process/secret+key/0123456789abcdefghij";

fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, contents).unwrap();
    path
}

/// The provider for the fake with `vars` (plus the fake's endpoint and
/// `AWS_EC2_METADATA_DISABLED=true`) and, when given, `profile` in `[providers.bedrock]`.
fn bedrock(fake: &FakeBedrock, vars: &[(&str, &str)], profile: Option<&str>) -> Bedrock {
    let mut env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    env.insert(
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME".to_owned(),
        fake.base_url(),
    );
    env.insert("AWS_EC2_METADATA_DISABLED".to_owned(), "true".to_owned());
    let config = profile.map(|p| ProviderConfig {
        profile: Some(p.to_owned()),
        ..ProviderConfig::default()
    });
    let settings = ProviderSettings::resolve(ProviderKind::Bedrock, &env, config.as_ref()).unwrap();
    let transport = Transport::new(
        ProviderKind::Bedrock,
        &HttpOptions::default(),
        Limits::none(),
    )
    .unwrap();
    Bedrock::new(settings, transport)
}

fn signed_by(fake: &FakeBedrock, at: usize) -> String {
    let request = &fake.requests()[at];
    parse_sigv4(request.header("authorization").expect("authorization"))
        .expect("a well-formed SigV4 header")
        .access_key_id
}

#[tokio::test]
async fn a_profile_s_keys_and_region_in_home_sign_the_request() {
    let home = TempDir::new().unwrap();
    write(
        home.path(),
        ".aws/credentials",
        &format!(
            "[default]\naws_access_key_id = {PROFILE_KEY}\naws_secret_access_key = {PROFILE_SECRET}\n"
        ),
    );
    write(
        home.path(),
        ".aws/config",
        "[default]\nregion = eu-west-3\n",
    );
    let fake = FakeBedrock::start().await;
    // The fake takes only this key, for the profile's region, and checks the signature.
    fake.expect_sigv4(PROFILE_KEY, PROFILE_SECRET, "eu-west-3");
    fake.script(Reply::text("from the profile"));
    let home_var = home.path().to_str().unwrap();
    let provider = bedrock(&fake, &[("HOME", home_var)], None);
    assert!(provider.signs());
    let response = provider.complete(&ask(LLAMA, "hi")).await.unwrap();
    assert_eq!(response.text, "from the profile");
    assert_eq!(signed_by(&fake, 0), PROFILE_KEY);
    assert_eq!(fake.requests()[0].header("x-amz-security-token"), None);
    for shown in [format!("{provider:?}"), format!("{response:?}")] {
        assert!(!shown.contains(PROFILE_SECRET), "{shown}");
    }
}

#[tokio::test]
async fn the_profile_is_named_by_aws_profile_and_by_prill_toml_which_wins() {
    let dir = TempDir::new().unwrap();
    let credentials = write(
        dir.path(),
        "shared-credentials",
        &format!(
            "[default]\naws_access_key_id = {PROFILE_KEY}\naws_secret_access_key = {PROFILE_SECRET}\n\
             [dev]\naws_access_key_id = {DEV_KEY}\naws_secret_access_key = {DEV_SECRET}\n\
             [team]\naws_access_key_id = {TEAM_KEY}\naws_secret_access_key = {TEAM_SECRET}\n"
        ),
    );
    let config = write(
        dir.path(),
        "shared-config",
        "[profile dev]\nregion = us-west-2\n[profile team]\nregion = us-west-2\n",
    );
    let files = [
        ("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap()),
        ("AWS_CONFIG_FILE", config.to_str().unwrap()),
    ];
    let fake = FakeBedrock::start().await;

    fake.expect_sigv4(DEV_KEY, DEV_SECRET, "us-west-2");
    let by_env = [files[0], files[1], ("AWS_PROFILE", "dev")];
    bedrock(&fake, &by_env, None)
        .complete(&ask(LLAMA, "hi"))
        .await
        .unwrap();
    assert_eq!(signed_by(&fake, 0), DEV_KEY);

    fake.expect_sigv4(TEAM_KEY, TEAM_SECRET, "us-west-2");
    bedrock(&fake, &files, Some("team"))
        .complete(&ask(LLAMA, "hi"))
        .await
        .unwrap();
    assert_eq!(signed_by(&fake, 1), TEAM_KEY);
    // `profile` in prill.toml is explicit: it wins over AWS_PROFILE.
    bedrock(&fake, &by_env, Some("team"))
        .complete(&ask(LLAMA, "hi"))
        .await
        .unwrap();
    assert_eq!(signed_by(&fake, 2), TEAM_KEY);

    // The environment keys come before any profile.
    fake.expect_sigv4(PROCESS_KEY, PROCESS_SECRET, "us-west-2");
    let keys = [
        files[0],
        files[1],
        ("AWS_PROFILE", "dev"),
        ("AWS_ACCESS_KEY_ID", PROCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", PROCESS_SECRET),
        ("AWS_REGION", "us-west-2"),
    ];
    bedrock(&fake, &keys, None)
        .complete(&ask(LLAMA, "hi"))
        .await
        .unwrap();
    assert_eq!(signed_by(&fake, 3), PROCESS_KEY);
}

/// `yyyy-mm-ddThh:mm:ssZ` for `time` (a civil date from days since the epoch).
fn rfc3339(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[test]
fn rfc3339_dates_are_right() {
    let at = |s| rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
    assert_eq!(at(0), "1970-01-01T00:00:00Z");
    assert_eq!(at(1_440_938_160), "2015-08-30T12:36:00Z");
    assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
}

/// A `credential_process` script that counts its runs in `runs` and answers with
/// credentials that expire at `expiry`.
fn process_script(dir: &Path, runs: &Path, expiry: SystemTime) -> PathBuf {
    let json = format!(
        r#"{{"Version": 1, "AccessKeyId": "{PROCESS_KEY}", "SecretAccessKey": "{PROCESS_SECRET}", "SessionToken": "process-session-token", "Expiration": "{}"}}"#,
        rfc3339(expiry)
    );
    write(
        dir,
        "creds.sh",
        &format!("echo run >> '{}'\necho '{json}'\n", runs.display()),
    )
}

fn runs(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[tokio::test]
async fn credential_process_runs_on_the_first_call_and_its_credentials_are_kept() {
    let dir = TempDir::new().unwrap();
    let runs_file = dir.path().join("runs");
    let day = SystemTime::now() + Duration::from_secs(86_400);
    let script = process_script(dir.path(), &runs_file, day);
    let config = write(
        dir.path(),
        "config",
        &format!(
            "[profile proc]\ncredential_process = sh {}\nregion = ap-south-1\n",
            script.display()
        ),
    );
    let fake = FakeBedrock::start().await;
    fake.expect_sigv4(PROCESS_KEY, PROCESS_SECRET, "ap-south-1");
    let vars = [
        ("AWS_CONFIG_FILE", config.to_str().unwrap()),
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            "/nonexistent/prill/credentials",
        ),
    ];
    let provider = bedrock(&fake, &vars, Some("proc"));
    assert_eq!(runs(&runs_file), 0, "nothing runs before the first call");
    provider.complete(&ask(LLAMA, "one")).await.unwrap();
    provider.complete(&ask(LLAMA, "two")).await.unwrap();
    assert_eq!(runs(&runs_file), 1, "credentials good for a day are kept");
    for request in fake.requests() {
        assert_eq!(
            request.header("x-amz-security-token"),
            Some("process-session-token")
        );
    }
    assert_eq!(signed_by(&fake, 1), PROCESS_KEY);

    // Credentials that expire within five minutes are found again before each call.
    let soon = SystemTime::now() + Duration::from_secs(120);
    process_script(dir.path(), &runs_file, soon);
    let provider = bedrock(&fake, &vars, Some("proc"));
    provider.complete(&ask(LLAMA, "one")).await.unwrap();
    provider.complete(&ask(LLAMA, "two")).await.unwrap();
    assert_eq!(runs(&runs_file), 3);
}

#[tokio::test]
async fn a_failing_credential_process_is_an_error_naming_the_profile() {
    let dir = TempDir::new().unwrap();
    let script = write(
        dir.path(),
        "fail.sh",
        "echo 'the SSO session has expired; run aws sso login' >&2\nexit 3\n",
    );
    let config = write(
        dir.path(),
        "config",
        &format!(
            "[profile broken]\ncredential_process = sh {}\n",
            script.display()
        ),
    );
    let fake = FakeBedrock::start().await;
    let vars = [
        ("AWS_CONFIG_FILE", config.to_str().unwrap()),
        ("AWS_PROFILE", "broken"),
        ("AWS_REGION", "us-east-1"),
    ];
    let e = bedrock(&fake, &vars, None)
        .complete(&ask(LLAMA, "hi"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    let text = e.to_string();
    assert!(text.contains("profile `broken`"), "{text}");
    assert!(text.contains("from AWS_PROFILE"), "{text}");
    assert!(text.contains("the SSO session has expired"), "{text}");
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn nothing_configured_is_an_error_listing_what_was_tried() {
    let home = TempDir::new().unwrap();
    let home_var = home.path().to_str().unwrap();
    let fake = FakeBedrock::start().await;
    let e = bedrock(
        &fake,
        &[("HOME", home_var), ("AWS_REGION", "us-east-1")],
        None,
    )
    .complete(&ask(LLAMA, "hi"))
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    let text = e.to_string();
    let config = home.path().join(".aws/config");
    let credentials = home.path().join(".aws/credentials");
    for tried in [
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
        "the AWS profile `default`",
        config.to_str().unwrap(),
        credentials.to_str().unwrap(),
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_EC2_METADATA_DISABLED",
        "AWS_PROFILE",
    ] {
        assert!(text.contains(tried), "{tried} in {text}");
    }

    // A profile that the files do not have is named among what was tried.
    write(
        home.path(),
        ".aws/credentials",
        &format!(
            "[default]\naws_access_key_id = {PROFILE_KEY}\naws_secret_access_key = {PROFILE_SECRET}\n"
        ),
    );
    let e = bedrock(
        &fake,
        &[("HOME", home_var), ("AWS_REGION", "us-east-1")],
        Some("ghost"),
    )
    .complete(&ask(LLAMA, "hi"))
    .await
    .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("profile `ghost`"), "{text}");
    assert!(!text.contains(PROFILE_SECRET), "{text}");
    assert!(fake.requests().is_empty());
}
