//! A scripted reply written as each protocol's streaming body: Ollama
//! NDJSON lines, OpenAI chat-completion chunks, Anthropic Messages events.
//! Deterministic (fixed ids, timestamps and durations), so the same reply
//! always renders to the same bytes.

use serde_json::{Value, json};

use super::{Fault, ScriptedReply};
use crate::model::{FinishReason, Provider, Usage};

/// Characters per delta when the reply does not say.
const DEFAULT_FRAGMENT: usize = 12;
const CREATED: u64 = 1_767_225_600;
const CREATED_AT: &str = "2026-01-01T00:00:00Z";

/// The whole body the server sends for `reply` as the `index`-th reply of
/// its script, for a client that asks for usage (as nib's does).
pub fn render(provider: Provider, reply: &ScriptedReply, index: usize) -> Vec<u8> {
    pieces(provider, reply, index, true).concat()
}

/// The body as the server writes it by default: one piece per NDJSON line
/// or SSE event.
pub(crate) fn pieces(
    provider: Provider,
    reply: &ScriptedReply,
    index: usize,
    include_usage: bool,
) -> Vec<Vec<u8>> {
    if let Some(raw) = &reply.raw {
        return raw
            .split_inclusive('\n')
            .map(|l| l.as_bytes().to_vec())
            .collect();
    }
    let r = Rendering {
        reply,
        index,
        model: reply.model.as_deref().unwrap_or("scripted"),
        usage: reply.usage.unwrap_or_default(),
        fragment: reply.fragment.unwrap_or(DEFAULT_FRAGMENT).max(1),
        error: reply.faults.iter().find_map(|f| match f {
            Fault::StreamError(m) => Some(m.as_str()),
            _ => None,
        }),
    };
    match provider {
        Provider::Ollama => r.ollama(include_usage),
        Provider::OpenAi => r.openai(include_usage),
        Provider::Anthropic => r.anthropic(include_usage),
    }
}

/// The whole body of a reply that is not streamed (`"stream": false`): a
/// `chat.completion`, Ollama's one object, or a Messages `message`.
/// `include_usage: false` leaves the counts out, as some servers do.
pub fn render_whole(
    provider: Provider,
    reply: &ScriptedReply,
    index: usize,
    include_usage: bool,
) -> Vec<u8> {
    if let Some(raw) = &reply.raw {
        return raw.as_bytes().to_vec();
    }
    let model = reply.model.as_deref().unwrap_or("scripted");
    let u = reply.usage.unwrap_or_default();
    let id = |i: usize, prefix: &str| match &reply.tool_calls[i].id {
        Some(id) => id.clone(),
        None => format!("{prefix}_{index}_{i}"),
    };
    let v = match provider {
        Provider::OpenAi => {
            let mut message = json!({"role": "assistant", "content": reply.text});
            if !reply.reasoning.is_empty() {
                let field = reply
                    .reasoning_field
                    .as_deref()
                    .unwrap_or("reasoning_content");
                message[field] = json!(reply.reasoning);
            }
            if !reply.tool_calls.is_empty() {
                message["tool_calls"] = reply
                    .tool_calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        json!({"id": id(i, "call"), "type": "function",
                               "function": {"name": c.name, "arguments": c.arguments_text()}})
                    })
                    .collect();
            }
            let mut v = json!({
                "id": format!("chatcmpl-scripted-{index}"),
                "object": "chat.completion",
                "created": CREATED,
                "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": null,
                             "finish_reason": reply.finish_reason().as_str()}],
            });
            if include_usage {
                v["usage"] = json!({
                    "prompt_tokens": u.prompt_tokens,
                    "completion_tokens": u.completion_tokens,
                    "total_tokens": u.prompt_tokens + u.completion_tokens,
                    "prompt_tokens_details": {"cached_tokens": u.cached_tokens},
                });
            }
            v
        }
        Provider::Ollama => {
            let mut message = json!({"role": "assistant", "content": reply.text});
            if !reply.reasoning.is_empty() {
                message["thinking"] = json!(reply.reasoning);
            }
            if !reply.tool_calls.is_empty() {
                message["tool_calls"] = reply
                    .tool_calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        json!({"id": id(i, "call"),
                               "function": {"index": i, "name": c.name, "arguments": ollama_args(c)}})
                    })
                    .collect();
            }
            let mut v = json!({
                "model": model,
                "created_at": CREATED_AT,
                "message": message,
                "done": true,
                "done_reason": ollama_reason(reply),
                "total_duration": 1_500_000_000u64,
            });
            if include_usage {
                v["prompt_eval_count"] = json!(u.prompt_tokens);
                v["eval_count"] = json!(u.completion_tokens);
            }
            v
        }
        Provider::Anthropic => {
            let mut content = Vec::new();
            if !reply.reasoning.is_empty() {
                content.push(json!({"type": "thinking", "thinking": reply.reasoning,
                                    "signature": "scripted"}));
            }
            if !reply.text.is_empty() {
                content.push(json!({"type": "text", "text": reply.text}));
            }
            for (i, c) in reply.tool_calls.iter().enumerate() {
                content.push(
                    json!({"type": "tool_use", "id": id(i, "toolu"), "name": c.name,
                                    "input": ollama_args(c)}),
                );
            }
            let mut v = json!({
                "id": format!("msg_scripted_{index}"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": anthropic_reason(reply),
                "stop_sequence": null,
            });
            if include_usage {
                v["usage"] = anthropic_usage(u, u.completion_tokens);
            }
            v
        }
    };
    v.to_string().into_bytes()
}

/// A call's arguments as the JSON object Ollama and Anthropic send (the
/// text, as a string, when it is not an object).
fn ollama_args(c: &super::ScriptedCall) -> Value {
    let text = c.arguments_text();
    match serde_json::from_str::<Value>(&text) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::String(text),
    }
}

fn ollama_reason(reply: &ScriptedReply) -> String {
    match reply.finish_reason() {
        FinishReason::Stop | FinishReason::ToolCalls | FinishReason::ContentFilter => {
            "stop".to_string()
        }
        FinishReason::Length => "length".to_string(),
        FinishReason::Other(s) => s,
    }
}

fn anthropic_reason(reply: &ScriptedReply) -> String {
    match reply.finish_reason() {
        FinishReason::Stop => "end_turn".to_string(),
        FinishReason::ToolCalls => "tool_use".to_string(),
        FinishReason::Length => "max_tokens".to_string(),
        FinishReason::ContentFilter => "refusal".to_string(),
        FinishReason::Other(s) => s,
    }
}

fn anthropic_usage(u: Usage, output: u64) -> Value {
    let input = u
        .prompt_tokens
        .saturating_sub(u.cached_tokens)
        .saturating_sub(u.cache_write_tokens);
    json!({
        "input_tokens": input,
        "cache_creation_input_tokens": u.cache_write_tokens,
        "cache_read_input_tokens": u.cached_tokens,
        "output_tokens": output,
    })
}

/// `s` in pieces of at most `n` characters.
fn fragments(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (i, _) in s.char_indices() {
        if count == n {
            out.push(&s[start..i]);
            start = i;
            count = 0;
        }
        count += 1;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

struct Rendering<'a> {
    reply: &'a ScriptedReply,
    index: usize,
    model: &'a str,
    usage: Usage,
    fragment: usize,
    error: Option<&'a str>,
}

impl Rendering<'_> {
    fn call_id(&self, i: usize, prefix: &str) -> String {
        match &self.reply.tool_calls[i].id {
            Some(id) => id.clone(),
            None => format!("{prefix}_{}_{i}", self.index),
        }
    }

    fn ollama(&self, include_usage: bool) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let line = |message: Value, out: &mut Vec<Vec<u8>>| {
            let v = json!({
                "model": self.model,
                "created_at": CREATED_AT,
                "message": message,
                "done": false,
            });
            out.push(format!("{v}\n").into_bytes());
        };
        for piece in fragments(&self.reply.reasoning, self.fragment) {
            line(
                json!({"role": "assistant", "content": "", "thinking": piece}),
                &mut out,
            );
        }
        for piece in fragments(&self.reply.text, self.fragment) {
            line(json!({"role": "assistant", "content": piece}), &mut out);
        }
        if !self.reply.tool_calls.is_empty() {
            let calls: Vec<Value> = self
                .reply
                .tool_calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({
                        "id": self.call_id(i, "call"),
                        "function": {"index": i, "name": c.name, "arguments": ollama_args(c)},
                    })
                })
                .collect();
            line(
                json!({"role": "assistant", "content": "", "tool_calls": calls}),
                &mut out,
            );
        }
        if let Some(message) = self.error {
            out.push(format!("{}\n", json!({"error": message})).into_bytes());
            return out;
        }
        let reason = ollama_reason(self.reply);
        let mut v = json!({
            "model": self.model,
            "created_at": CREATED_AT,
            "message": {"role": "assistant", "content": ""},
            "done": true,
            "done_reason": reason,
            "total_duration": 1_500_000_000u64,
            "load_duration": 100_000_000u64,
            "prompt_eval_count": self.usage.prompt_tokens,
            "prompt_eval_duration": 400_000_000u64,
            "eval_count": self.usage.completion_tokens,
            "eval_duration": 1_000_000_000u64,
        });
        if !include_usage && let Some(o) = v.as_object_mut() {
            o.remove("prompt_eval_count");
            o.remove("eval_count");
        }
        out.push(format!("{v}\n").into_bytes());
        out
    }

    fn openai_chunk(&self, delta: Value, finish: Option<&str>) -> Vec<u8> {
        let v = json!({
            "id": format!("chatcmpl-scripted-{}", self.index),
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "system_fingerprint": "fp_scripted",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        format!("data: {v}\n\n").into_bytes()
    }

    fn openai(&self, include_usage: bool) -> Vec<Vec<u8>> {
        let mut out = vec![self.openai_chunk(json!({"role": "assistant", "content": ""}), None)];
        let field = self
            .reply
            .reasoning_field
            .as_deref()
            .unwrap_or("reasoning_content");
        for piece in fragments(&self.reply.reasoning, self.fragment) {
            out.push(self.openai_chunk(json!({ field: piece }), None));
        }
        for piece in fragments(&self.reply.text, self.fragment) {
            out.push(self.openai_chunk(json!({"content": piece}), None));
        }
        for (i, c) in self.reply.tool_calls.iter().enumerate() {
            let first = json!({"tool_calls": [{
                "index": i,
                "id": self.call_id(i, "call"),
                "type": "function",
                "function": {"name": c.name, "arguments": ""},
            }]});
            out.push(self.openai_chunk(first, None));
            for piece in fragments(&c.arguments_text(), self.fragment) {
                let delta = json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]});
                out.push(self.openai_chunk(delta, None));
            }
        }
        if let Some(message) = self.error {
            let v = json!({"error": {"message": message, "type": "server_error"}});
            out.push(format!("data: {v}\n\n").into_bytes());
            return out;
        }
        let reason = self.reply.finish_reason();
        out.push(self.openai_chunk(json!({}), Some(reason.as_str())));
        if include_usage {
            let u = self.usage;
            let v = json!({
                "id": format!("chatcmpl-scripted-{}", self.index),
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": self.model,
                "choices": [],
                "usage": {
                    "prompt_tokens": u.prompt_tokens,
                    "completion_tokens": u.completion_tokens,
                    "total_tokens": u.prompt_tokens + u.completion_tokens,
                    "prompt_tokens_details": {"cached_tokens": u.cached_tokens},
                },
            });
            out.push(format!("data: {v}\n\n").into_bytes());
        }
        out.push(b"data: [DONE]\n\n".to_vec());
        out
    }

    fn anthropic(&self, include_usage: bool) -> Vec<Vec<u8>> {
        fn event(name: &str, data: Value) -> Vec<u8> {
            format!("event: {name}\ndata: {data}\n\n").into_bytes()
        }
        let u = self.usage;
        let mut start_message = json!({
            "id": format!("msg_scripted_{}", self.index),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
        });
        if include_usage {
            start_message["usage"] = anthropic_usage(u, 1);
        }
        let mut out = vec![
            event(
                "message_start",
                json!({"type": "message_start", "message": start_message}),
            ),
            event("ping", json!({"type": "ping"})),
        ];
        let mut block = 0;
        let delta = |index: usize, delta: Value| {
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        let stop = |index: usize| {
            event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            )
        };
        let start = |index: usize, content: Value| {
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": content}),
            )
        };
        if !self.reply.reasoning.is_empty() {
            out.push(start(
                block,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
            ));
            for piece in fragments(&self.reply.reasoning, self.fragment) {
                out.push(delta(
                    block,
                    json!({"type": "thinking_delta", "thinking": piece}),
                ));
            }
            out.push(delta(
                block,
                json!({"type": "signature_delta", "signature": "scripted"}),
            ));
            out.push(stop(block));
            block += 1;
        }
        if !self.reply.text.is_empty() {
            out.push(start(block, json!({"type": "text", "text": ""})));
            for piece in fragments(&self.reply.text, self.fragment) {
                out.push(delta(block, json!({"type": "text_delta", "text": piece})));
            }
            out.push(stop(block));
            block += 1;
        }
        for (i, c) in self.reply.tool_calls.iter().enumerate() {
            out.push(start(
                block,
                json!({"type": "tool_use", "id": self.call_id(i, "toolu"), "name": c.name, "input": {}}),
            ));
            out.push(delta(
                block,
                json!({"type": "input_json_delta", "partial_json": ""}),
            ));
            for piece in fragments(&c.arguments_text(), self.fragment) {
                out.push(delta(
                    block,
                    json!({"type": "input_json_delta", "partial_json": piece}),
                ));
            }
            out.push(stop(block));
            block += 1;
        }
        if let Some(message) = self.error {
            out.push(event(
                "error",
                json!({"type": "error", "error": {"type": "overloaded_error", "message": message}}),
            ));
            return out;
        }
        let reason = anthropic_reason(self.reply);
        let mut message_delta = json!({"type": "message_delta",
                                       "delta": {"stop_reason": reason, "stop_sequence": null}});
        if include_usage {
            message_delta["usage"] = json!({"output_tokens": u.completion_tokens});
        }
        out.push(event("message_delta", message_delta));
        out.push(event("message_stop", json!({"type": "message_stop"})));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::fragments;

    #[test]
    fn fragments_keep_characters_whole() {
        assert_eq!(fragments("héllo wörld", 4), vec!["héll", "o wö", "rld"]);
        assert_eq!(fragments("", 4), Vec::<&str>::new());
        assert_eq!(fragments("abcd", 4), vec!["abcd"]);
    }
}
