//! The host procedures a strategy calls (`model-reply`, `run-calls`,
//! `apply-text`, `emit`, `ask`, `system-prompt`) and the state they share
//! for one run.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use super::INTERRUPTED;
use super::messages::{error_kind, reply_json, to_messages};
use crate::engine::Engine;
use crate::model::{Client, Reply, Request, StreamEvent};
use crate::prim::table::lookup;
use crate::prim::{Call, Effect, Host, TextFormat, ToolResult, parse};
use crate::session::EventLog;
use crate::session::event::{self, Event};

/// Where the model's stream events go as they arrive (a client's view).
pub(super) type StreamSink = Box<dyn FnMut(&StreamEvent) + Send>;

/// What the host procedures of one run share.
pub(super) struct Shared {
    pub(super) client: Client,
    pub(super) host: Arc<Host>,
    pub(super) log: Arc<EventLog>,
    pub(super) system: String,
    pub(super) tools: Vec<Value>,
    pub(super) max_tokens: u64,
    pub(super) tokens: AtomicU64,
    pub(super) refused_confirms: AtomicUsize,
    pub(super) on_stream: Mutex<StreamSink>,
    /// The last error logged, so the run's end does not log it again.
    pub(super) last_error: Mutex<String>,
    /// Set by a client (Esc in the terminal client): see
    /// [`run_task_with`](super::run_task_with).
    pub(super) cancel: Arc<AtomicBool>,
    /// Set (before `cancel`) when the run's own deadline stopped it.
    pub(super) timed_out: Arc<AtomicBool>,
}

/// One call of a reply before it runs: its id and name, and the parsed
/// call or the error the model gets instead.
type Parsed = (String, String, Result<Call, ToolResult>);

pub(super) fn register(engine: &mut Engine, shared: &Arc<Shared>) {
    let s = Arc::clone(shared);
    engine.register("model-reply", move |args| {
        let messages = args.first().cloned().unwrap_or(Value::Null);
        let step = args.get(1).and_then(Value::as_u64).unwrap_or(0);
        Ok(s.model_reply(&messages, step))
    });
    let s = Arc::clone(shared);
    engine.register("run-calls", move |args| {
        let calls = args
            .first()
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let step = args.get(1).and_then(Value::as_u64).unwrap_or(0);
        Ok(s.run_calls(&calls, step))
    });
    let s = Arc::clone(shared);
    engine.register("apply-text", move |args| {
        let format = args.first().and_then(Value::as_str).unwrap_or_default();
        let text = args.get(1).and_then(Value::as_str).unwrap_or_default();
        let step = args.get(2).and_then(Value::as_u64).unwrap_or(0);
        s.apply_text(format, text, step)
    });
    let s = Arc::clone(shared);
    engine.register("emit", move |args| {
        let ev = args.first().and_then(Value::as_str).unwrap_or("strategy");
        let fields = args
            .get(1)
            .cloned()
            .filter(Value::is_object)
            .unwrap_or(json!({}));
        s.log.emit_json(ev, fields).map_err(|e| e.to_string())?;
        Ok(Value::Bool(true))
    });
    let s = Arc::clone(shared);
    engine.register("ask", move |args| {
        let question = args.first().and_then(Value::as_str).unwrap_or_default();
        let _ = s.log.emit(&Event::Ask(event::Ask {
            question: question.to_string(),
            answer: Value::Null,
        }));
        // Unattended: nobody is there to answer, and nib never waits.
        Ok(Value::Bool(false))
    });
    let s = Arc::clone(shared);
    engine.register("system-prompt", move |_| {
        Ok(Value::String(s.system.clone()))
    });
}

impl Shared {
    /// Why the run is stopping: its deadline, or the user.
    fn stop_reason(&self) -> String {
        if self.timed_out.load(Ordering::Relaxed) {
            "the run's time limit (--timeout) ran out".to_string()
        } else {
            INTERRUPTED.to_string()
        }
    }

    fn model_reply(&self, messages: &Value, step: u64) -> Value {
        if self.cancel.load(Ordering::Relaxed) {
            return json!({"error": self.stop_reason(), "kind": "interrupted"});
        }
        let used = self.tokens.load(Ordering::Relaxed);
        if self.max_tokens > 0 && used >= self.max_tokens {
            return json!({"error": format!("the token budget ({}) is used up", self.max_tokens), "kind": "token_limit"});
        }
        let messages = match to_messages(messages) {
            Ok(m) => m,
            Err(e) => return json!({"error": e, "kind": "invalid"}),
        };
        let request = Request {
            system: self.system.clone(),
            messages,
            tools: self.tools.clone(),
        };
        let model = self.client.config().model.clone();
        let _ = self.log.emit(&Event::LlmReq(event::LlmReq {
            step,
            model,
            messages: request.messages.len() as u64,
            tools: request.tools.len() as u64,
        }));
        let mut on_stream = self
            .on_stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let reply = self.client.reply(&request, &mut |ev| on_stream(ev));
        drop(on_stream);
        match reply {
            Ok(reply) => {
                self.record(step, &reply);
                reply_json(&reply)
            }
            Err(e) => {
                if let Some(partial) = e.partial() {
                    self.record(step, partial);
                }
                let _ = self.log.emit(&Event::Error(event::ErrorEvent {
                    step: Some(step),
                    message: e.to_string(),
                }));
                *self
                    .last_error
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = e.to_string();
                if self.cancel.load(Ordering::Relaxed) {
                    return json!({"error": self.stop_reason(), "kind": "interrupted"});
                }
                json!({"error": e.to_string(), "kind": error_kind(&e)})
            }
        }
    }

    fn record(&self, step: u64, reply: &Reply) {
        let u = &reply.usage;
        self.tokens
            .fetch_add(u.prompt_tokens + u.completion_tokens, Ordering::Relaxed);
        let _ = self.log.emit(&Event::LlmResp(event::LlmResp {
            step,
            model: reply.model.clone(),
            duration_ms: reply.duration.as_millis() as u64,
            usage: event::Usage {
                prompt: u.prompt_tokens,
                cached: u.cached_tokens,
                completion: u.completion_tokens,
            },
            tool_calls: reply.tool_calls.len() as u64,
            finish: reply.finish.as_str().to_string(),
        }));
    }

    /// A reply's tool calls, in order; read-only ones run together.
    fn run_calls(&self, calls: &[Value], step: u64) -> Value {
        let parsed: Vec<Parsed> = calls.iter().map(|c| self.parse_call(c)).collect();
        for (index, (id, name, call)) in parsed.iter().enumerate() {
            self.log_call(step, index, id, name, call.as_ref().ok(), None);
        }
        let runnable: Vec<Call> = parsed
            .iter()
            .filter_map(|(_, _, c)| c.as_ref().ok().cloned())
            .collect();
        let ran = if runnable.iter().all(|c| c.decl.effect == Effect::ReadOnly) {
            self.host.run_calls(&runnable)
        } else {
            // In order, so an interrupt between two calls skips the rest.
            runnable
                .iter()
                .map(|c| match self.cancel.load(Ordering::Relaxed) {
                    true => ToolResult::failed(
                        "interrupted",
                        format!("not run: {}", self.stop_reason()),
                    ),
                    false => self.host.run(c),
                })
                .collect()
        };
        let mut ran = ran.into_iter();
        let mut out = Vec::with_capacity(parsed.len());
        for (index, (id, name, call)) in parsed.into_iter().enumerate() {
            let result = match &call {
                Ok(_) => ran.next().unwrap_or_else(|| {
                    ToolResult::failed("invalid", "the call was lost (a bug in nib)".into())
                }),
                Err(r) => r.clone(),
            };
            self.log_result(step, index, &name, call.as_ref().ok(), &result);
            out.push(with_id(result.to_json(), id, name));
        }
        Value::Array(out)
    }

    /// One tool call of a reply, parsed by its declaration.
    fn parse_call(&self, c: &Value) -> Parsed {
        let text = |k: &str| {
            c.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (id, name) = (text("id"), text("name"));
        let arguments = match c.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let call = match lookup(&name) {
            Some(decl) => parse::parse_text(decl, &arguments)
                .map_err(|e| ToolResult::failed("invalid", e.to_string())),
            None => Err(self.host.run_json(&name, &arguments).1),
        };
        (id, name, call)
    }

    /// A primitive the strategy called itself, outside any reply.
    pub(super) fn run_direct(&self, call: &Call) -> Value {
        let result = self.host.run(call);
        self.log_call(0, 0, "", call.decl.name, Some(call), Some("strategy"));
        self.log_result(0, 0, call.decl.name, Some(call), &result);
        result.to_json()
    }

    /// A reply's text edits, each file logged as a call named `apply-text`.
    fn apply_text(&self, format: &str, text: &str, step: u64) -> Result<Value, String> {
        let names = TextFormat::ALL.map(TextFormat::name).join(", ");
        let parsed = TextFormat::from_name(format)
            .ok_or_else(|| format!("apply-text: unknown format {format:?}; give one of {names}"))?;
        let files = self.host.apply_text_files(parsed, text);
        let mut out = Vec::with_capacity(files.len());
        for (index, file) in files.into_iter().enumerate() {
            let path = Some(file.path.clone()).filter(|p| !p.is_empty());
            let _ = self.log.emit(&Event::ToolCall(event::ToolCall {
                step,
                call: index as u64,
                id: String::new(),
                name: "apply-text".into(),
                positional: String::new(),
                args: json!({"format": format, "path": path}),
                quirks: Vec::new(),
                by: Some("text".into()),
            }));
            self.log_outcome(step, index, "apply-text", path, None, &file.result);
            let mut obj = with_id(file.result.to_json(), String::new(), "apply-text".into());
            if let Value::Object(map) = &mut obj {
                map.insert("path".into(), Value::String(file.path));
            }
            out.push(obj);
        }
        Ok(Value::Array(out))
    }
}

/// A result as the strategy gets it: with the call's id and name.
fn with_id(mut obj: Value, id: String, name: String) -> Value {
    if let Value::Object(map) = &mut obj {
        map.insert("id".into(), Value::String(id));
        map.insert("name".into(), Value::String(name));
    }
    obj
}
