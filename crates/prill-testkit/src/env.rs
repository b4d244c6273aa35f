//! A clean environment for a child `prill` process: every variable through which Prill
//! finds a provider, a key, a judge or a server is removed, and the places a key could
//! come from outside the environment (the token file of `hf auth login`, `~/.aws`
//! profiles, the EC2 instance metadata service) are pointed at nothing, so that a
//! developer's own keys and endpoints never reach a test, and no test reaches beyond
//! loopback.
//!
//! ```
//! let scratch = tempfile::tempdir().unwrap();
//! let mut cmd = std::process::Command::new("env");
//! prill_testkit::env::isolate(&mut cmd, scratch.path());
//! let out = cmd.output().unwrap();
//! let seen = String::from_utf8_lossy(&out.stdout);
//! assert!(!seen.contains("OPENAI_API_KEY="));
//! assert!(seen.contains("AWS_EC2_METADATA_DISABLED=true"));
//! ```

use std::path::Path;
use std::process::Command;

/// Every variable Prill reads to find a provider, its key, the judge or a server.
/// `crates/prill-cli/tests/it/env.rs` checks that every such name in the providers' and
/// the settings' sources is here.
pub const VARIABLES: [&str; 40] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_API_VERSION",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_HOST",
    "HF_TOKEN",
    "HF_BASE_URL",
    "HF_HOME",
    "HF_TOKEN_PATH",
    "HUGGING_FACE_HUB_TOKEN",
    "XDG_CACHE_HOME",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_EC2_METADATA_DISABLED",
    "LANGGRAPH_API_KEY",
    "LANGSMITH_API_KEY",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "LANGCHAIN_API_KEY",
    "PRILL_SERVER",
    "PRILL_JUDGE",
];

/// What else changes what a child `prill` prints or starts: `GITHUB_ACTIONS=true` adds
/// annotations on stdout, `PRILL_LOG` or `RUST_LOG` logs on stderr, and `BROWSER` names
/// the browser `prill view` opens, so that a test run inside GitHub Actions, by someone
/// chasing a bug with logs on, or on a desktop would see output (or windows) the same
/// test does not see elsewhere.
pub const OUTPUT_VARIABLES: [&str; 4] = ["GITHUB_ACTIONS", "PRILL_LOG", "RUST_LOG", "BROWSER"];

/// Removes every one of [`VARIABLES`] and [`OUTPUT_VARIABLES`] from `cmd`'s
/// environment, points the Hugging Face token file and the AWS profile files into
/// `scratch` (where there are none), and turns off the EC2 instance metadata service
/// and container credentials.
pub fn isolate<'c>(cmd: &'c mut Command, scratch: &Path) -> &'c mut Command {
    for var in VARIABLES.iter().chain(&OUTPUT_VARIABLES) {
        cmd.env_remove(var);
    }
    cmd.env("HF_HOME", scratch.join("no-hf-home"))
        .env("AWS_CONFIG_FILE", scratch.join("no-aws-config"))
        .env(
            "AWS_SHARED_CREDENTIALS_FILE",
            scratch.join("no-aws-credentials"),
        )
        .env("AWS_EC2_METADATA_DISABLED", "true")
}
