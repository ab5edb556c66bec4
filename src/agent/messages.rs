//! The strategy's JSON messages and replies, to and from the model
//! client's types.

use serde_json::{Value, json};

use crate::model::{Message, ModelError, Reply, ToolCall};

/// The kind a strategy reads for a failed model call.
pub(super) fn error_kind(e: &ModelError) -> &'static str {
    match e {
        ModelError::StreamCut { .. } => "stream_cut",
        // The run's own end: asking again cannot help.
        ModelError::Timeout {
            phase: "deadline", ..
        } => "deadline",
        ModelError::Timeout { .. } => "timeout",
        ModelError::Http { .. } => "http",
        // The client already tried every attempt it may: asking again
        // would only repeat the same wait and the same error.
        ModelError::Connect { .. } => "unreachable",
        _ if e.is_transient() => "transient",
        _ => "model",
    }
}

pub(super) fn reply_json(r: &Reply) -> Value {
    json!({
        "text": r.text,
        "reasoning": r.reasoning,
        "tool_calls": r.tool_calls.iter().map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments})).collect::<Vec<_>>(),
        "finish": r.finish.as_str(),
        "usage": r.usage.log_json(),
        "model": r.model,
    })
}

/// The strategy's messages as the model client takes them.
pub(super) fn to_messages(value: &Value) -> Result<Vec<Message>, String> {
    let Some(items) = value.as_array() else {
        return Err("model-reply takes a list of messages".into());
    };
    let text = |m: &Value, k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    items
        .iter()
        .enumerate()
        .map(|(i, m)| match m.get("role").and_then(Value::as_str) {
            Some("user") => Ok(Message::User(text(m, "content"))),
            Some("assistant") => {
                let calls = m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let tool_calls = calls
                    .iter()
                    .map(|c| ToolCall {
                        id: text(c, "id"),
                        name: text(c, "name"),
                        arguments: text(c, "arguments"),
                    })
                    .collect();
                Ok(Message::Assistant {
                    text: text(m, "content"),
                    tool_calls,
                })
            }
            Some("tool") => Ok(Message::ToolResult {
                call_id: text(m, "call_id"),
                name: text(m, "name"),
                content: text(m, "content"),
                is_error: m.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            }),
            _ => Err(format!(
                "message {} has no role user, assistant or tool",
                i + 1
            )),
        })
        .collect()
}
