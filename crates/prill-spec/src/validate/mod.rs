//! Validators: from a located tree to the typed model, collecting every problem.

pub(crate) mod cache;
pub(crate) mod cassettes;
pub(crate) mod checkless;
pub(crate) mod compare;
pub(crate) mod config;
pub(crate) mod cx;
pub(crate) mod data_driven;
pub(crate) mod gate;
pub(crate) mod history;
pub(crate) mod quarantine;
pub(crate) mod sentinel;
pub(crate) mod user;

/// [`load_config`] with each error as `path: message`.
#[cfg(test)]
pub(crate) fn config_messages(text: &str) -> Result<crate::model::config::Config, Vec<String>> {
    load_config(text).map_err(|errors| {
        errors
            .iter()
            .map(|d| format!("{}: {}", d.path, d.message))
            .collect()
    })
}

/// `prill.toml`'s `text` loaded: the config, or its errors (for the validators' tests).
#[cfg(test)]
pub(crate) fn load_config(
    text: &str,
) -> Result<crate::model::config::Config, Vec<crate::diag::Diagnostic>> {
    use crate::load::{Document, Unrecognized, load_str};
    let loaded = load_str(
        std::path::Path::new("prill.toml"),
        text,
        &crate::syntax::Env::default(),
        Unrecognized::Error,
    )
    .expect("a config");
    match loaded.outcome {
        Ok(Document::Config(config)) => Ok(config),
        Ok(_) => panic!("not a config"),
        Err(errors) => Err(errors),
    }
}
