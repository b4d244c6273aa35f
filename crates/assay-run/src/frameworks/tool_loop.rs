//! The built-in tool loop of `openai-sdk`, `claude-sdk` and `strands`.

use std::sync::Arc;

use assay_spec::model::framework::LoopConfig;
use assay_target::model::Provider;

use crate::engine::{SampleCtx, config_error};
use crate::events::{ErrorInfo, InteractionReport};

/// Runs the case's tool loop and checks its final answer.
pub(crate) async fn call(
    ctx: &SampleCtx,
    provider: &Arc<dyn Provider>,
    config: &LoopConfig,
    out: &mut Vec<InteractionReport>,
) -> Result<(), ErrorInfo> {
    let _ = (ctx, provider, config, out);
    Err(config_error("the tool loop is not built yet".to_owned()))
}
