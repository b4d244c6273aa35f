//! Error answers of every provider, each from its fake in the provider's own error
//! shape: a 403 leads with the provider's error type and message and gives the hint to
//! check the key only when the provider says the credentials were refused; a 401
//! always gives it; no key is ever shown.

use std::collections::HashMap;
use std::sync::Arc;

use prill_connect::provider::{
    self, ChatMessage, Limits, ModelRequest, Provider, ProviderKind, ProviderSettings, Role,
};
use prill_connect::{ConnectError, HttpOptions};
use prill_testkit::providers::Reply;
use prill_testkit::providers::anthropic::FakeAnthropic;
use prill_testkit::providers::bedrock::FakeBedrock;
use prill_testkit::providers::openai::FakeOpenAi;

const SECRET: &str = "secret-key-987654321";

fn built(kind: ProviderKind, vars: &[(&str, String)]) -> Arc<dyn Provider> {
    let env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    let settings = ProviderSettings::resolve(kind, &env, None).unwrap();
    provider::build(kind, settings, &HttpOptions::default(), Limits::none()).unwrap()
}

fn ask(model: &str) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        messages: vec![ChatMessage::text(Role::User, "hi")],
        ..ModelRequest::default()
    }
}

/// The error's text, after checking it is a `status` that shows no key.
async fn refused(provider: &dyn Provider, model: &str, status: u16) -> String {
    let e = provider.complete(&ask(model)).await.unwrap_err();
    assert!(
        matches!(&e, ConnectError::Status { status: s, .. } if *s == status),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(!text.contains("987654321") && !format!("{e:?}").contains("987654321"));
    text
}

#[tokio::test]
async fn anthropic_403_leads_with_its_error_type_and_gives_no_key_hint() {
    let fake = FakeAnthropic::start().await;
    fake.script(Reply::error(
        403,
        "Your API key does not have permission to use the specified model.",
    ));
    let anthropic = built(
        ProviderKind::Anthropic,
        &[
            ("ANTHROPIC_BASE_URL", fake.base_url()),
            ("ANTHROPIC_API_KEY", SECRET.to_owned()),
        ],
    );
    let text = refused(anthropic.as_ref(), "claude-opus-4-7", 403).await;
    assert!(
        text.ends_with(
            "answered 403 forbidden: permission_error: Your API key does not have permission to use the specified model."
        ),
        "{text}"
    );
    assert!(!text.contains("key was refused"), "{text}");
    assert!(!text.contains("ANTHROPIC_API_KEY"), "{text}");
}

#[tokio::test]
async fn a_401_gives_the_key_hint_after_the_provider_s_words() {
    let fake = FakeAnthropic::start().await;
    fake.expect_key("the-right-key");
    let anthropic = built(
        ProviderKind::Anthropic,
        &[
            ("ANTHROPIC_BASE_URL", fake.base_url()),
            ("ANTHROPIC_API_KEY", SECRET.to_owned()),
        ],
    );
    let text = refused(anthropic.as_ref(), "claude-haiku-4-5", 401).await;
    assert!(
        text.ends_with(
            "authentication_error: invalid x-api-key; the key was refused: check ANTHROPIC_API_KEY"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn openai_403_leads_with_its_error_code() {
    let fake = FakeOpenAi::start().await;
    // The body OpenAI sends when the project may not use a model.
    fake.script(Reply::raw(
        403,
        r#"{"error": {"message": "Project `proj_abc` does not have access to model `gpt-5`", "type": "invalid_request_error", "param": null, "code": "model_not_found"}}"#,
    ));
    let openai = built(
        ProviderKind::Openai,
        &[
            ("OPENAI_BASE_URL", fake.base_url()),
            ("OPENAI_API_KEY", SECRET.to_owned()),
        ],
    );
    let text = refused(openai.as_ref(), "gpt-4o-mini", 403).await;
    assert!(
        text.ends_with(
            "403 forbidden: model_not_found: Project `proj_abc` does not have access to model `gpt-5`"
        ),
        "{text}"
    );
    assert!(!text.contains("OPENAI_API_KEY"), "{text}");
}

#[tokio::test]
async fn bedrock_403_leads_with_the_error_type_header() {
    let fake = FakeBedrock::start().await;
    fake.script(Reply::error(
        403,
        "You don't have access to the model with the specified model ID.",
    ));
    let bedrock = built(
        ProviderKind::Bedrock,
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.base_url()),
            ("AWS_BEARER_TOKEN_BEDROCK", SECRET.to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
        ],
    );
    let text = refused(bedrock.as_ref(), "meta.llama3-8b-instruct-v1:0", 403).await;
    assert!(
        text.contains(
            "answered 403 forbidden: AccessDeniedException: You don't have access to the model with the specified model ID.; "
        ),
        "{text}"
    );
    assert!(
        text.ends_with("the credentials were accepted but lack access: check that this account or role may invoke this model in this region (model access in the Bedrock console, IAM bedrock:InvokeModel)"),
        "{text}"
    );
    assert!(!text.contains("AWS_BEARER_TOKEN_BEDROCK"), "{text}");
}

#[tokio::test]
async fn bedrock_refused_credentials_on_403_still_name_the_variable() {
    let fake = FakeBedrock::start().await;
    fake.expect_bearer("the-right-token");
    let bedrock = built(
        ProviderKind::Bedrock,
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.base_url()),
            ("AWS_BEARER_TOKEN_BEDROCK", SECRET.to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
        ],
    );
    let text = refused(bedrock.as_ref(), "meta.llama3-8b-instruct-v1:0", 403).await;
    assert!(
        text.contains("the key was refused: check AWS_BEARER_TOKEN_BEDROCK"),
        "{text}"
    );
}

#[tokio::test]
async fn huggingface_403_leads_with_its_error_string() {
    let fake = FakeOpenAi::start().await;
    // Hugging Face's own error shape: `error` is a string.
    fake.script(Reply::raw(
        403,
        r#"{"error": "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted and you are not in the authorized list."}"#,
    ));
    let hf = built(
        ProviderKind::Huggingface,
        &[
            ("HF_BASE_URL", fake.base_url()),
            ("HF_TOKEN", SECRET.to_owned()),
        ],
    );
    let text = refused(hf.as_ref(), "meta-llama/Llama-3.1-8B-Instruct", 403).await;
    assert!(
        text.ends_with(
            "403 forbidden: Access to model meta-llama/Llama-3.1-8B-Instruct is restricted and you are not in the authorized list."
        ),
        "{text}"
    );
    assert!(!text.contains("HF_TOKEN"), "{text}");
}
