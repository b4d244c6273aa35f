//! One sample of a model case: which provider serves it, then one call and its checks,
//! or the run of its framework (the tool loop, a LangGraph graph).

use std::time::Instant;

use prill_check::run_checks;
use prill_spec::model::framework::{FrameworkConfig, Problem, ProblemKind};
use prill_spec::model::sentinel::Framework;
use prill_spec::plan::{Case, Target};
use prill_spec::{ProviderKind, ProviderName, infer_provider};

use super::units::SampleCtx;
use super::{config_error, error_info, note_truncation};
use crate::events::{CallInfo, ErrorInfo, InteractionReport};

/// The provider a model case calls: the one it names (a kind, or a named provider of
/// `[providers]`); else its framework's (`openai-sdk`: OpenAI, `claude-sdk`: Anthropic,
/// `strands`: Bedrock, as Strands does); else the one its model name implies. A
/// `langgraph` case calls a LangGraph server, not a provider.
pub(crate) fn provider_of(case: &Case) -> Option<ProviderName> {
    let Target::Model {
        model,
        provider,
        framework,
        ..
    } = &case.target
    else {
        return None;
    };
    match (framework, provider) {
        (Some(Framework::Langgraph), _) => None,
        (_, Some(p)) => Some(p.clone()),
        (Some(f), None) => f.default_provider().map(ProviderName::Kind),
        (None, None) => infer_provider(model).map(ProviderName::Kind),
    }
}

/// The provider of a case's simulated user: the one its `user` names, else the one its
/// model's name implies.
pub(crate) fn user_provider_of(case: &Case) -> Option<ProviderName> {
    let user = case.user.as_deref()?;
    user.provider
        .clone()
        .or_else(|| infer_provider(&user.model).map(ProviderName::Kind))
}

/// Why a model case has no provider to call: none can be told from the model, or the
/// one named is not configured. `named` are the configured names beyond the kinds.
fn no_provider(model: &str, wanted: Option<&ProviderName>, named: &[String]) -> String {
    let kinds = format!(
        "{} or {}",
        ProviderKind::NAMES[..4].join(", "),
        ProviderKind::NAMES[4]
    );
    let choices = if named.is_empty() {
        format!("{kinds}, or a provider of your own in `[providers]` of prill.toml")
    } else {
        format!(
            "{kinds}, or one of prill.toml's `[providers]`: {}",
            named.join(", ")
        )
    };
    match wanted {
        None => format!("cannot tell which provider serves `{model}`: set `provider` ({choices})"),
        Some(ProviderName::Named(name)) => format!(
            "no provider named `{name}` is configured: add `[providers.{name}]` with its `kind` to prill.toml, or set `provider` to one that is ({choices})"
        ),
        Some(ProviderName::Kind(kind)) => format!("no {kind} provider is configured"),
    }
}

/// A model case: one call, then the assertions; or, with a `framework`, its tool loop
/// or its LangGraph run.
pub(super) async fn model_call(
    ctx: &SampleCtx,
    out: &mut Vec<InteractionReport>,
) -> Result<(), ErrorInfo> {
    let case = &ctx.case;
    let Target::Model {
        model,
        framework,
        framework_config,
        ..
    } = &case.target
    else {
        return Ok(());
    };
    let framework = match framework {
        Some(f) => Some(
            FrameworkConfig::parse(*f, framework_config.as_deref())
                .map_err(|problems| config_error(framework_problems(*f, &problems)))?,
        ),
        None => None,
    };
    if let Some(FrameworkConfig::Langgraph(config)) = &framework {
        return Box::pin(crate::frameworks::langgraph::call(ctx, config, out)).await;
    }
    let Some(provider) = &ctx.provider else {
        let wanted = provider_of(case);
        return Err(config_error(no_provider(
            model,
            wanted.as_ref(),
            &ctx.named_providers,
        )));
    };
    if let Some(FrameworkConfig::Loop(config)) = &framework {
        // Validated files were checked already; a plan built in Rust was not.
        prill_spec::model::family::tool_support(provider.kind(), model)
            .map_err(|e| config_error(e.to_string()))?;
        return Box::pin(crate::frameworks::tool_loop::call(
            ctx, provider, config, out,
        ))
        .await;
    }
    if case.user.is_some() {
        // A conversation with a simulated user: the loop of a test with no framework
        // answers without tools, one model call per turn.
        let config = prill_spec::model::framework::LoopConfig::default();
        return Box::pin(crate::frameworks::tool_loop::call(
            ctx, provider, &config, out,
        ))
        .await;
    }
    let request = crate::model::model_request(case).map_err(|e| config_error(e.to_string()))?;
    let step = &case.interactions[0];
    let started = Instant::now();
    let response = match provider.complete(&request).await {
        Ok(response) => response,
        Err(e) => {
            out.push(InteractionReport {
                duration: started.elapsed(),
                error: Some(error_info(&e)),
                ..InteractionReport::sent(0, step.input.text.clone())
            });
            return Ok(());
        }
    };
    let notes = response.notes.clone();
    let cached = response.cached;
    let response = crate::model::answer_of(response);
    let mut checks = run_checks(&step.checks, &response, ctx.judge.as_deref()).await;
    let call = CallInfo {
        cached,
        ..CallInfo::of(&response, notes)
    };
    note_truncation(&mut checks, &call);
    out.push(InteractionReport {
        answer: response.text,
        duration: started.elapsed(),
        checks,
        call,
        ..InteractionReport::sent(0, step.input.text.clone())
    });
    Ok(())
}

/// `framework_config` problems in one sentence (a validated file has none; a plan built
/// by hand may).
fn framework_problems(framework: Framework, problems: &[Problem]) -> String {
    let each: Vec<String> = problems
        .iter()
        .map(|p| {
            let at = format!("framework_config.{}", p.path.join("."));
            match &p.kind {
                ProblemKind::UnknownKey { allowed, .. } => format!(
                    "`{at}` is not a setting of `{}` (it takes {})",
                    framework.name(),
                    allowed.join(", ")
                ),
                ProblemKind::Expected { expected, found } => {
                    format!("`{at}` must be {expected}, not {found}")
                }
            }
        })
        .collect();
    each.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of a case with no provider names every value `provider` may take,
    /// the named providers of `[providers]` included.
    #[test]
    fn no_provider_lists_the_named_providers() {
        let named = ["lmstudio".to_owned(), "vllm".to_owned()];
        assert_eq!(
            no_provider("llama3.1", None, &named),
            "cannot tell which provider serves `llama3.1`: set `provider` (openai, anthropic, ollama, huggingface or bedrock, or one of prill.toml's `[providers]`: lmstudio, vllm)"
        );
        let message = no_provider("m", Some(&ProviderName::new("gpu")), &named);
        assert!(
            message.starts_with(
                "no provider named `gpu` is configured: add `[providers.gpu]` with its `kind` to prill.toml"
            ),
            "{message}"
        );
        assert_eq!(
            no_provider("m", Some(&ProviderName::new("ollama")), &[]),
            "no ollama provider is configured"
        );
        assert!(
            no_provider("m", None, &[])
                .ends_with("or a provider of your own in `[providers]` of prill.toml)")
        );
    }
}
