//! OpenAI-compatible chat completions, `POST /v1/chat/completions` with
//! `stream: true`: the request body and the SSE decoder. Serves llama.cpp,
//! vLLM, LM Studio, Ollama's `/v1`, OpenRouter and OpenAI. Tool calls arrive
//! as fragments keyed by `index`; usage comes in a last chunk with no
//! choices (asked for with `stream_options.include_usage`); reasoning comes
//! as `reasoning_content` or `reasoning`; the stream ends with `[DONE]`.

use std::collections::HashMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::ollama::function_tools;
use super::stream::{Accum, DecodeError, Decoder, Sse, error_message, parse_json};
use super::{FinishReason, Message, ModelConfig, Request, Usage};

pub(crate) fn body(cfg: &ModelConfig, req: &Request, stream: bool) -> Value {
    let mut messages = Vec::new();
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        messages.push(match m {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, tool_calls } => json!({
                "role": "assistant",
                // Some servers (llama-cpp-python) refuse a null content.
                "content": text,
                "tool_calls": tool_calls.iter().map(|c| json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })).collect::<Vec<_>>(),
            }),
            Message::ToolResult {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        });
    }
    let mut body = json!({
        "model": cfg.model,
        "messages": messages,
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    // OpenAI's own newer models refuse `max_tokens`; other servers may not
    // know `max_completion_tokens`.
    let max_key = if cfg.base_url.contains("api.openai.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[max_key] = json!(req.max_tokens.unwrap_or(cfg.max_tokens));
    if let Some(t) = cfg.temperature {
        body["temperature"] = json!(t);
    }
    if !req.tools.is_empty() {
        body["tools"] = function_tools(&req.tools);
        // OpenAI's default; some servers (llama-cpp-python) ignore the tools
        // unless it is said.
        body["tool_choice"] = json!("auto");
    }
    body
}

/// A whole (non-streamed) `chat.completion` as the stream that would have
/// carried it: one chunk whose delta is the message, then `[DONE]`.
pub(crate) fn whole_lines(mut v: Value) -> Vec<String> {
    if let Some(choices) = v.get_mut("choices").and_then(Value::as_array_mut) {
        for choice in choices {
            let Some(obj) = choice.as_object_mut() else {
                continue;
            };
            let mut message = obj.remove("message").unwrap_or_else(|| json!({}));
            if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
                for (i, call) in calls.iter_mut().enumerate() {
                    if let Some(c) = call.as_object_mut() {
                        c.entry("index").or_insert(json!(i));
                    }
                }
            }
            obj.insert("delta".into(), message);
        }
    }
    vec![format!("data: {v}"), String::new(), "data: [DONE]".into()]
}

#[derive(Deserialize)]
struct Chunk {
    model: Option<String>,
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
    timings: Option<WireTimings>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct Choice {
    index: Option<u64>,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<Value>,
    reasoning_content: Option<Value>,
    reasoning: Option<Value>,
    refusal: Option<Value>,
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Deserialize)]
struct CallDelta {
    index: Option<usize>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek's name for cached prompt tokens.
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
}

/// llama.cpp's extension.
#[derive(Deserialize)]
struct WireTimings {
    prompt_ms: Option<f64>,
    predicted_ms: Option<f64>,
}

fn text_of(v: &Option<Value>) -> &str {
    match v {
        Some(Value::String(s)) => s,
        _ => "",
    }
}

fn millis(ms: Option<f64>) -> Option<Duration> {
    ms.filter(|m| m.is_finite() && *m >= 0.0)
        .map(|m| Duration::from_secs_f64(m / 1000.0))
}

#[derive(Default)]
pub(crate) struct OpenAiDecoder {
    sse: Sse,
    done: bool,
    /// The server's tool-call index → the call's index in the reply.
    slots: HashMap<usize, usize>,
}

impl OpenAiDecoder {
    fn event(&mut self, data: &str, acc: &mut Accum) -> Result<(), DecodeError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = parse_json(data, "chat completion chunk")?;
        if let Some(err) = &chunk.error {
            return Err(DecodeError::Remote(error_message(err)));
        }
        if let Some(model) = &chunk.model {
            acc.model(model);
        }
        acc.extra(chunk.extra);
        let choice = chunk
            .choices
            .iter()
            .flatten()
            .find(|c| c.index.unwrap_or(0) == 0);
        if let Some(choice) = choice {
            if let Some(delta) = &choice.delta {
                let reasoning = match text_of(&delta.reasoning_content) {
                    "" => text_of(&delta.reasoning),
                    r => r,
                };
                acc.reasoning(reasoning);
                acc.text(text_of(&delta.content));
                acc.text(text_of(&delta.refusal));
                for (pos, call) in delta.tool_calls.iter().flatten().enumerate() {
                    self.call_fragment(pos, call, acc);
                }
            }
            if let Some(reason) = &choice.finish_reason {
                acc.finish(match reason.as_str() {
                    "stop" => FinishReason::Stop,
                    "tool_calls" | "function_call" => FinishReason::ToolCalls,
                    "length" => FinishReason::Length,
                    "content_filter" => FinishReason::ContentFilter,
                    other => FinishReason::Other(other.to_string()),
                });
            }
        }
        if let Some(u) = &chunk.usage {
            let details = u.prompt_tokens_details.as_ref();
            acc.usage(Usage {
                prompt_tokens: u.prompt_tokens.unwrap_or(0),
                cached_tokens: details
                    .and_then(|d| d.cached_tokens)
                    .or(u.prompt_cache_hit_tokens)
                    .unwrap_or(0),
                cache_write_tokens: details.and_then(|d| d.cache_write_tokens).unwrap_or(0),
                completion_tokens: u.completion_tokens.unwrap_or(0),
                ..Usage::default()
            });
        }
        if let Some(t) = &chunk.timings {
            let timings = acc.timings();
            timings.prompt = millis(t.prompt_ms);
            timings.generation = millis(t.predicted_ms);
        }
        Ok(())
    }

    fn call_fragment(&mut self, pos: usize, call: &CallDelta, acc: &mut Accum) {
        let slot = call.index.unwrap_or(pos);
        let id = call.id.as_deref().filter(|id| !id.is_empty());
        let (name, args) = match &call.function {
            Some(f) => (f.name.as_deref().unwrap_or(""), f.arguments.as_ref()),
            None => ("", None),
        };
        let index = match self.slots.get(&slot) {
            // Some proxies reuse index 0 for parallel calls: a new id is a new call.
            Some(&i) if id.is_none() || acc.call_id(i) == id => i,
            previous => {
                if let Some(&p) = previous {
                    acc.done_call(p);
                }
                let i = acc.start_call(id, name);
                self.slots.insert(slot, i);
                i
            }
        };
        if !name.is_empty() {
            acc.late_name(index, name);
        }
        match args {
            Some(Value::String(s)) => acc.args(index, s),
            Some(Value::Null) | None => {}
            // A server that sends the arguments as an object.
            Some(v) => acc.args(index, &v.to_string()),
        }
    }
}

impl Decoder for OpenAiDecoder {
    fn line(&mut self, line: &str, acc: &mut Accum) -> Result<(), DecodeError> {
        if self.done {
            return Ok(());
        }
        match self.sse.line(line) {
            Some((_, data)) => self.event(&data, acc),
            None => Ok(()),
        }
    }

    fn eof(&mut self, acc: &mut Accum) -> Result<(), DecodeError> {
        match self.sse.dispatch() {
            Some((_, data)) if !self.done => self.event(&data, acc),
            _ => Ok(()),
        }
    }

    fn complete(&self) -> bool {
        self.done
    }
}
