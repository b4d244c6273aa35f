//! `slow`: waits sly_data `delay_ms` (1000 by default), then answers.

use std::time::Duration;

use serde_json::json;

use super::{Reply, Turn, count, object};

/// The wait when sly_data gives none.
const DEFAULT_DELAY_MS: u64 = 1000;
/// The longest wait, one hour.
const MAX_DELAY_MS: u64 = 3_600_000;

pub(super) fn reply(turn: &Turn<'_>) -> Reply {
    let delay_ms = count(turn.sly("delay_ms"))
        .unwrap_or(DEFAULT_DELAY_MS)
        .min(MAX_DELAY_MS);
    Reply {
        text: format!("I waited {delay_ms} ms."),
        structure: Some(object("delay_ms", delay_ms.into())),
        tool_args: json!({"delay_ms": delay_ms}),
        tool_result: json!({"waited_ms": delay_ms}),
        delay: Some(Duration::from_millis(delay_ms)),
        ..Reply::default()
    }
}
