//! `echo`: answers with the text it was sent and hands its sly_data back.

use serde_json::{Value, json};

use super::{Reply, Turn};

pub(super) fn reply(turn: &Turn<'_>) -> Reply {
    let sly_data = turn.sly_data.filter(|sly| !sly.is_empty()).cloned();
    let mut tool_args = json!({"text": turn.text});
    if let (Some(sly), Value::Object(args)) = (&sly_data, &mut tool_args) {
        args.insert("sly_data".to_owned(), Value::Object(sly.clone()));
    }
    Reply {
        text: turn.text.to_owned(),
        structure: sly_data.clone(),
        sly_data,
        tool_args,
        tool_result: json!({"text": turn.text}),
        delay: None,
    }
}
