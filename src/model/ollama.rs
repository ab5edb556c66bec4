//! Ollama's native chat API, `POST /api/chat`: the request body and the
//! NDJSON stream decoder. Tool calls arrive whole, arguments as a JSON
//! object; the last line has `done: true`, `done_reason`, token counts and
//! durations in nanoseconds.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::stream::{Accum, DecodeError, Decoder, error_message, parse_json};
use super::{FinishReason, Message, ModelConfig, Request, Usage};

pub(crate) fn body(cfg: &ModelConfig, req: &Request, stream: bool) -> Value {
    let mut messages = Vec::new();
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        messages.push(match m {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } => {
                let mut msg = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "function": {"name": c.name, "arguments": args_object(&c.arguments)},
                            })
                        })
                        .collect();
                }
                msg
            }
            Message::ToolResult {
                call_id,
                name,
                content,
                ..
            } => json!({
                "role": "tool",
                "tool_name": name,
                "tool_call_id": call_id,
                "content": content,
            }),
        });
    }
    let mut options = Map::new();
    if let Some(n) = cfg.num_ctx {
        options.insert("num_ctx".into(), json!(n));
    }
    options.insert(
        "num_predict".into(),
        json!(req.max_tokens.unwrap_or(cfg.max_tokens)),
    );
    if let Some(t) = cfg.temperature {
        options.insert("temperature".into(), json!(t));
    }
    let mut body = json!({
        "model": cfg.model,
        "messages": messages,
        "stream": stream,
        "options": options,
    });
    if !req.tools.is_empty() {
        body["tools"] = function_tools(&req.tools);
    }
    body
}

/// A whole (non-streamed) reply as the stream that would have carried it:
/// it already is one last line.
pub(crate) fn whole_lines(v: Value) -> Vec<String> {
    vec![v.to_string()]
}

/// Tools in the OpenAI shape Ollama also uses:
/// `{"type": "function", "function": {name, description, parameters}}`.
pub(crate) fn function_tools(tools: &[Value]) -> Value {
    tools
        .iter()
        .map(|t| json!({"type": "function", "function": t}))
        .collect()
}

/// Arguments as the object Ollama and Anthropic want; `{}` for text that is
/// not a JSON object.
pub(crate) fn args_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

#[derive(Deserialize)]
struct Line {
    model: Option<String>,
    message: Option<WireMessage>,
    done: Option<bool>,
    done_reason: Option<String>,
    prompt_eval_count: Option<u64>,
    eval_count: Option<u64>,
    total_duration: Option<u64>,
    load_duration: Option<u64>,
    prompt_eval_duration: Option<u64>,
    eval_duration: Option<u64>,
    error: Option<Value>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct WireMessage {
    content: Option<String>,
    thinking: Option<String>,
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Deserialize)]
struct WireCall {
    id: Option<String>,
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<Value>,
}

#[derive(Default)]
pub(crate) struct OllamaDecoder {
    done: bool,
}

impl Decoder for OllamaDecoder {
    fn line(&mut self, line: &str, acc: &mut Accum) -> Result<(), DecodeError> {
        if line.trim().is_empty() || self.done {
            return Ok(());
        }
        let line: Line = parse_json(line, "Ollama NDJSON line")?;
        if let Some(err) = &line.error {
            return Err(DecodeError::Remote(error_message(err)));
        }
        if let Some(model) = &line.model {
            acc.model(model);
        }
        acc.extra(line.extra);
        if let Some(msg) = &line.message {
            acc.reasoning(msg.thinking.as_deref().unwrap_or(""));
            acc.text(msg.content.as_deref().unwrap_or(""));
            for call in msg.tool_calls.iter().flatten() {
                let (name, args) = match &call.function {
                    Some(f) => (f.name.as_deref().unwrap_or(""), f.arguments.as_ref()),
                    None => ("", None),
                };
                let index = acc.start_call(call.id.as_deref(), name);
                match args {
                    Some(Value::String(s)) => acc.args(index, s),
                    Some(Value::Null) | None => {}
                    Some(v) => acc.args(index, &v.to_string()),
                }
                acc.done_call(index);
            }
        }
        if line.done == Some(true) {
            self.done = true;
            if line.prompt_eval_count.is_some() || line.eval_count.is_some() {
                acc.usage(Usage {
                    prompt_tokens: line.prompt_eval_count.unwrap_or(0),
                    completion_tokens: line.eval_count.unwrap_or(0),
                    ..Usage::default()
                });
            }
            let t = acc.timings();
            t.total = line.total_duration.map(Duration::from_nanos);
            t.load = line.load_duration.map(Duration::from_nanos);
            t.prompt = line.prompt_eval_duration.map(Duration::from_nanos);
            t.generation = line.eval_duration.map(Duration::from_nanos);
            acc.finish(match line.done_reason.as_deref() {
                None | Some("stop") => FinishReason::Stop,
                Some("length") => FinishReason::Length,
                Some(other) => FinishReason::Other(other.to_string()),
            });
        }
        Ok(())
    }

    fn eof(&mut self, _acc: &mut Accum) -> Result<(), DecodeError> {
        Ok(())
    }

    fn complete(&self) -> bool {
        self.done
    }
}
