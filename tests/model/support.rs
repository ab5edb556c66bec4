//! Shared helpers: a client config with short timeouts, the rich reply the
//! stream tests use, and checks on event order.

use std::time::Duration;

use nib::model::scripted::{Script, ScriptedCall, ScriptedReply, ScriptedServer};
use nib::model::{
    Client, FinishReason, ModelConfig, ModelError, Provider, Reply, Request, StreamEvent, ToolCall,
    Usage,
};
use serde_json::json;

pub const MODEL: &str = "test-model";

/// Timeouts short enough to keep the suite fast, long enough for a loaded
/// machine; retries with a 5 ms backoff.
pub fn config(server: &ScriptedServer, provider: Provider) -> ModelConfig {
    ModelConfig {
        model: MODEL.into(),
        num_ctx: Some(8192),
        max_tokens: 1000,
        connect_timeout: Duration::from_secs(2),
        first_byte_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        retries: 2,
        backoff: Duration::from_millis(5),
        ..server.config(provider)
    }
}

pub fn client(server: &ScriptedServer, provider: Provider) -> Client {
    Client::new(config(server, provider)).expect("client")
}

pub fn server(replies: Vec<ScriptedReply>) -> ScriptedServer {
    ScriptedServer::start(Script { replies }).expect("server")
}

pub fn request() -> Request {
    Request {
        max_tokens: None,
        system: "You are a test.".into(),
        messages: vec![nib::model::Message::User("Go.".into())],
        tools: vec![],
    }
}

/// Calls the model, collecting events; checks their order on the way.
pub fn call(client: &Client, req: &Request) -> (Result<Reply, ModelError>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let result = client.reply(req, &mut |ev| events.push(ev.clone()));
    check_order(&events);
    (result, events)
}

/// Text with multi-byte characters, reasoning, two tool calls whose
/// arguments need escaping, usage with cache reads and writes, fragments of
/// 5 characters.
pub fn rich_reply() -> ScriptedReply {
    ScriptedReply {
        text: "I'll read it — then édit ✓ the file.".into(),
        reasoning: "The bug is in parse(); callers pass \"\".".into(),
        tool_calls: vec![
            ScriptedCall {
                id: Some("call_a1".into()),
                name: "fs-read".into(),
                arguments: json!({"path": "src/lib.rs", "start": 10}),
            },
            ScriptedCall {
                id: Some("call_b2".into()),
                name: "fs-edit".into(),
                arguments: json!({"path": "src/ä.rs", "edits": [
                    {"old": "let x = \"a\";\n", "new": "let x =\t'b';\n", "replace_all": false}
                ]}),
            },
        ],
        usage: Some(Usage {
            prompt_tokens: 1200,
            cached_tokens: 1000,
            cache_write_tokens: 150,
            completion_tokens: 57,
            ..Usage::default()
        }),
        model: Some(MODEL.into()),
        fragment: Some(5),
        ..ScriptedReply::default()
    }
}

/// What the client must make of [`rich_reply`] in each protocol.
pub fn rich_expected(provider: Provider) -> Reply {
    let r = rich_reply();
    let usage = match provider {
        // Ollama reports no cache counts; OpenAI no cache writes.
        Provider::Ollama => Usage {
            prompt_tokens: 1200,
            completion_tokens: 57,
            reported: true,
            ..Usage::default()
        },
        Provider::OpenAi => Usage {
            prompt_tokens: 1200,
            cached_tokens: 1000,
            cache_write_tokens: 0,
            completion_tokens: 57,
            reported: true,
            estimated: false,
        },
        Provider::Anthropic => Usage {
            prompt_tokens: 1200,
            cached_tokens: 1000,
            cache_write_tokens: 150,
            completion_tokens: 57,
            reported: true,
            estimated: false,
        },
    };
    Reply {
        text: r.text.clone(),
        reasoning: r.reasoning.clone(),
        tool_calls: r
            .tool_calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone().unwrap_or_default(),
                name: c.name.clone(),
                arguments: c.arguments.to_string(),
            })
            .collect(),
        usage,
        finish: FinishReason::ToolCalls,
        model: MODEL.into(),
        duration: Duration::ZERO,
        attempts: 1,
        timings: Default::default(),
        extra: Default::default(),
        streamed: true,
        stream_fallback: None,
        raw_text: None,
    }
}

/// The parts of a reply that do not depend on timing or the reply's place
/// in the script.
pub fn essence(r: &Reply) -> Reply {
    Reply {
        duration: Duration::ZERO,
        timings: Default::default(),
        extra: Default::default(),
        ..r.clone()
    }
}

/// Tool-call events come Start, Args…, Done per call, indices from 0 in
/// order; nothing follows Finish but Raw and Usage.
pub fn check_order(events: &[StreamEvent]) {
    let mut started = 0;
    let mut done = vec![];
    let mut finished = false;
    for ev in events {
        match ev {
            StreamEvent::ToolCallStart { index, .. } => {
                assert!(!finished, "a call started after Finish: {events:?}");
                assert_eq!(*index, started, "calls start in order: {events:?}");
                started += 1;
                done.push(false);
            }
            StreamEvent::ToolCallArgs { index, .. } => {
                assert!(
                    *index < started && !done[*index],
                    "args outside a call: {events:?}"
                );
            }
            StreamEvent::ToolCallDone { index } => {
                assert!(*index < started && !done[*index], "done twice: {events:?}");
                done[*index] = true;
            }
            StreamEvent::Finish(_) => {
                assert!(!finished, "two Finish events");
                assert!(done.iter().all(|d| *d), "Finish before every call is done");
                finished = true;
            }
            StreamEvent::TextDelta(_) | StreamEvent::ReasoningDelta(_) => {
                assert!(!finished, "text after Finish: {events:?}");
            }
            StreamEvent::TextToolCalls { .. } => {
                assert!(!finished, "text calls after Finish: {events:?}");
            }
            StreamEvent::StreamFallback { .. } => {
                assert!(
                    started == 0 && !finished,
                    "a fallback after the reply began: {events:?}"
                );
            }
            StreamEvent::Usage(_) | StreamEvent::Raw(_) | StreamEvent::Retry { .. } => {}
        }
    }
}

/// The events folded back into a reply's content: text, reasoning, calls.
pub fn replay(events: &[StreamEvent]) -> (String, String, Vec<ToolCall>) {
    let (mut text, mut reasoning, mut calls) =
        (String::new(), String::new(), Vec::<ToolCall>::new());
    for ev in events {
        match ev {
            StreamEvent::TextDelta(t) => text.push_str(t),
            StreamEvent::ReasoningDelta(t) => reasoning.push_str(t),
            StreamEvent::ToolCallStart { id, name, .. } => calls.push(ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: String::new(),
            }),
            StreamEvent::ToolCallArgs { index, fragment } => {
                calls[*index].arguments.push_str(fragment)
            }
            _ => {}
        }
    }
    (text, reasoning, calls)
}
