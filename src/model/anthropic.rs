//! Anthropic Messages, `POST /v1/messages` with `stream: true`: the request
//! body (with `cache_control` on the last tool, the system prompt and the
//! last message) and the SSE decoder: `tool_use` blocks whose input arrives
//! as `input_json_delta` fragments, `thinking` blocks, usage split between
//! `message_start` (input and cache counts) and `message_delta` (output).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::ollama::args_object;
use super::stream::{Accum, DecodeError, Decoder, Sse, error_message, parse_json};
use super::{FinishReason, Message, ModelConfig, Request, Usage};

pub(crate) const VERSION: &str = "2023-06-01";

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

pub(crate) fn body(cfg: &ModelConfig, req: &Request, stream: bool) -> Value {
    // Consecutive turns of one role become one message (several tool
    // results go back in one user message).
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in &req.messages {
        let (role, blocks) = match m {
            Message::User(text) if text.is_empty() => continue,
            Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": c.id,
                        "name": c.name,
                        "input": args_object(&c.arguments),
                    }));
                }
                ("assistant", blocks)
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                });
                if *is_error {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    if let Some(last) = messages.last_mut().and_then(|(_, b)| b.last_mut()) {
        last["cache_control"] = ephemeral();
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();

    let mut body = json!({
        "model": cfg.model,
        "max_tokens": req.max_tokens.unwrap_or(cfg.max_tokens),
        "stream": stream,
    });
    if !req.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": req.system,
            "cache_control": ephemeral(),
        }]);
    }
    body["messages"] = Value::Array(messages);
    if !req.tools.is_empty() {
        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.get("name").cloned().unwrap_or(Value::Null),
                    "description": t.get("description").cloned().unwrap_or(json!("")),
                    "input_schema": t.get("parameters").cloned()
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = Value::Array(tools);
    }
    if let Some(t) = cfg.temperature {
        body["temperature"] = json!(t);
    }
    body
}

/// A whole (non-streamed) Message as the events that would have carried
/// it: `message_start`, each block started (with its content) and stopped,
/// `message_delta` with the stop reason, `message_stop`.
pub(crate) fn whole_lines(mut v: Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut event = |name: &str, data: Value| {
        out.push(format!("event: {name}"));
        out.push(format!("data: {data}"));
        out.push(String::new());
    };
    let (content, stop_reason) = match v.as_object_mut() {
        Some(o) => (o.remove("content"), o.remove("stop_reason")),
        None => (None, None),
    };
    event(
        "message_start",
        json!({"type": "message_start", "message": v}),
    );
    let blocks = match content {
        Some(Value::Array(blocks)) => blocks,
        _ => Vec::new(),
    };
    for (index, block) in blocks.into_iter().enumerate() {
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": block}),
        );
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
    }
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<StartMessage>,
    index: Option<usize>,
    content_block: Option<Block>,
    delta: Option<Delta>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct StartMessage {
    model: Option<String>,
    usage: Option<WireUsage>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
    text: Option<String>,
    thinking: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    text: Option<String>,
    partial_json: Option<String>,
    thinking: Option<String>,
    stop_reason: Option<String>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    fn merge(&mut self, new: &WireUsage) {
        self.input_tokens = new.input_tokens.or(self.input_tokens);
        self.output_tokens = new.output_tokens.or(self.output_tokens);
        self.cache_creation_input_tokens = new
            .cache_creation_input_tokens
            .or(self.cache_creation_input_tokens);
        self.cache_read_input_tokens = new.cache_read_input_tokens.or(self.cache_read_input_tokens);
    }

    fn usage(&self) -> Usage {
        let read = self.cache_read_input_tokens.unwrap_or(0);
        let write = self.cache_creation_input_tokens.unwrap_or(0);
        Usage {
            prompt_tokens: self.input_tokens.unwrap_or(0) + read + write,
            cached_tokens: read,
            cache_write_tokens: write,
            completion_tokens: self.output_tokens.unwrap_or(0),
            ..Usage::default()
        }
    }
}

/// What a content block index holds.
enum Slot {
    Text,
    Thinking,
    /// A tool call: its index in the reply, and the `input` the block
    /// started with (used when no `input_json_delta` follows).
    Tool(usize, Option<Value>),
    Other,
}

#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    sse: Sse,
    done: bool,
    blocks: HashMap<usize, Slot>,
    usage: WireUsage,
}

impl AnthropicDecoder {
    fn event(&mut self, name: &str, data: &str, acc: &mut Accum) -> Result<(), DecodeError> {
        if data.trim().is_empty() {
            return Ok(());
        }
        let ev: Event = parse_json(data, "Messages stream event")?;
        let kind = ev.kind.as_deref().unwrap_or(name);
        let index = ev.index.unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(msg) = ev.message {
                    if let Some(model) = &msg.model {
                        acc.model(model);
                    }
                    if let Some(u) = &msg.usage {
                        self.usage.merge(u);
                        acc.usage(self.usage.usage());
                    }
                    acc.extra(msg.extra);
                }
            }
            "content_block_start" => {
                let block = ev.content_block;
                let slot = match block.as_ref().and_then(|b| b.kind.as_deref()) {
                    Some("text") => {
                        acc.text(block.as_ref().and_then(|b| b.text.as_deref()).unwrap_or(""));
                        Slot::Text
                    }
                    Some("thinking") => {
                        let thinking = block.as_ref().and_then(|b| b.thinking.as_deref());
                        acc.reasoning(thinking.unwrap_or(""));
                        Slot::Thinking
                    }
                    Some("tool_use") => {
                        let b = block.as_ref();
                        let id = b.and_then(|b| b.id.as_deref());
                        let name = b.and_then(|b| b.name.as_deref()).unwrap_or("");
                        let input = b.and_then(|b| b.input.clone());
                        Slot::Tool(acc.start_call(id, name), input)
                    }
                    _ => Slot::Other,
                };
                self.blocks.insert(index, slot);
            }
            "content_block_delta" => {
                let Some(delta) = ev.delta else {
                    return Ok(());
                };
                match self.blocks.get(&index) {
                    Some(Slot::Tool(i, _)) => {
                        acc.args(*i, delta.partial_json.as_deref().unwrap_or(""))
                    }
                    Some(Slot::Thinking) => acc.reasoning(delta.thinking.as_deref().unwrap_or("")),
                    Some(Slot::Text) | None => acc.text(delta.text.as_deref().unwrap_or("")),
                    Some(Slot::Other) => {}
                }
            }
            "content_block_stop" => {
                if let Some(Slot::Tool(i, input)) = self.blocks.remove(&index) {
                    if !acc.call_has_args(i)
                        && let Some(v @ Value::Object(o)) = &input
                        && !o.is_empty()
                    {
                        acc.args(i, &v.to_string());
                    }
                    acc.done_call(i);
                }
            }
            "message_delta" => {
                if let Some(u) = &ev.usage {
                    self.usage.merge(u);
                    acc.usage(self.usage.usage());
                }
                if let Some(reason) = ev.delta.and_then(|d| d.stop_reason) {
                    acc.finish(match reason.as_str() {
                        "end_turn" | "stop_sequence" => FinishReason::Stop,
                        "tool_use" => FinishReason::ToolCalls,
                        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
                        "refusal" => FinishReason::ContentFilter,
                        other => FinishReason::Other(other.to_string()),
                    });
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let err = ev.error.unwrap_or(Value::Null);
                return Err(DecodeError::Remote(error_message(&err)));
            }
            _ => {} // ping, and events this client does not know yet
        }
        Ok(())
    }
}

impl Decoder for AnthropicDecoder {
    fn line(&mut self, line: &str, acc: &mut Accum) -> Result<(), DecodeError> {
        if self.done {
            return Ok(());
        }
        match self.sse.line(line) {
            Some((name, data)) => self.event(&name, &data, acc),
            None => Ok(()),
        }
    }

    fn eof(&mut self, acc: &mut Accum) -> Result<(), DecodeError> {
        match self.sse.dispatch() {
            Some((name, data)) if !self.done => self.event(&name, &data, acc),
            _ => Ok(()),
        }
    }

    fn complete(&self) -> bool {
        self.done
    }
}
