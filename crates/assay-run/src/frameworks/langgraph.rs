//! `framework: langgraph`: a LangGraph server's assistant runs the test.

use assay_spec::model::framework::LanggraphConfig;

use crate::engine::{SampleCtx, config_error};
use crate::events::{ErrorInfo, InteractionReport};

/// Runs the case's assistant on the LangGraph server and checks its answer.
pub(crate) async fn call(
    ctx: &SampleCtx,
    config: &LanggraphConfig,
    out: &mut Vec<InteractionReport>,
) -> Result<(), ErrorInfo> {
    let _ = (ctx, config, out);
    Err(config_error(
        "framework `langgraph` is not wired to a LangGraph server yet".to_owned(),
    ))
}
