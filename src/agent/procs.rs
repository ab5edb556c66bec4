//! The host procedures a strategy calls (`host-model-reply`,
//! `host-run-calls`, `apply-text`, `emit`, `ask`, `system-prompt`, `stop`,
//! the usage and session state); the state they share is `shared.rs`'s.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::INTERRUPTED;
use super::messages::{error_kind, reply_json, to_messages};
use super::record::Made;
use super::shared::{CallOptions, Shared};
use super::state;
use crate::engine::Engine;
use crate::model::{Reply, Request};
use crate::prim::table::{ALL, lookup};
use crate::prim::{Answer, Call, Effect, Question, TextFormat, ToolResult, parse};
use crate::session::event::{self, Event};

/// One call of a reply before it runs: its id and name, and the parsed
/// call or the error the model gets instead.
type Parsed = (String, String, Result<Call, ToolResult>);

/// Every procedure [`register`] binds (`nib strategy check` binds stand-ins
/// by these names, so a file compiles as it would in a session).
pub(super) const HOST_PROCS: &[&str] = &[
    "host-model-reply",
    "host-own-model-reply",
    "call-data",
    "tool-names",
    "tool-kind",
    "guard-check",
    "strategy-event",
    "say",
    "host-run-calls",
    "apply-text",
    "emit",
    "ask",
    "ask-choice",
    "ask-text",
    "setting",
    "detected-check-command",
    "system-prompt",
    "task-text",
    "task-usage",
    "session-usage",
    "session-get",
    "session-set!",
    "stop",
];

pub(super) fn register(engine: &mut Engine, shared: &Arc<Shared>) {
    // A model call of the loop, and one a hook makes itself (a summary, a
    // review): the second is no step of the loop, so it does not count
    // among the run's steps (its tokens do count).
    for (name, own) in [("host-model-reply", false), ("host-own-model-reply", true)] {
        let s = Arc::clone(shared);
        engine.register(name, move |args| {
            let messages = args.first().cloned().unwrap_or(Value::Null);
            let step = args.get(1).and_then(Value::as_u64).unwrap_or(0);
            let options = CallOptions::parse(args.get(2))?;
            Ok(s.model_reply(&messages, step, &options, own))
        });
    }
    engine.register("call-data", |args| Ok(call_data(args.first())));
    engine.register("tool-names", |_| {
        Ok(Value::Array(
            ALL.iter().map(|d| Value::String(d.name.into())).collect(),
        ))
    });
    engine.register("tool-kind", |args| {
        let name = args.first().and_then(Value::as_str).unwrap_or_default();
        lookup(name)
            .map(|d| Value::String(d.effect.as_str().into()))
            .ok_or_else(|| format!("there is no tool `{name}`"))
    });
    let s = Arc::clone(shared);
    engine.register("guard-check", move |args| s.guard_check(args.first()));
    let s = Arc::clone(shared);
    engine.register("strategy-event", move |args| {
        let action = args.first().and_then(Value::as_str).unwrap_or("note");
        let text = args.get(1).map(text_of).unwrap_or_default();
        s.strategy_event(action, &text);
        Ok(Value::Bool(true))
    });
    let s = Arc::clone(shared);
    engine.register("say", move |args| {
        let text = args.first().map(text_of).unwrap_or_default();
        s.strategy_event("say", &text);
        Ok(Value::Bool(true))
    });
    let s = Arc::clone(shared);
    engine.register("host-run-calls", move |args| {
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
        Ok(s.ask(Question::YesNo(question.to_string())))
    });
    let s = Arc::clone(shared);
    engine.register("ask-choice", move |args| {
        let question = args.first().and_then(Value::as_str).unwrap_or_default();
        let choices: Vec<String> = args
            .get(1)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        if choices.is_empty() {
            return Err("ask-choice takes a question and a list of choices (strings)".into());
        }
        Ok(s.ask(Question::Choice(question.to_string(), choices)))
    });
    let s = Arc::clone(shared);
    engine.register("ask-text", move |args| {
        let question = args.first().and_then(Value::as_str).unwrap_or_default();
        Ok(s.ask(Question::Text(question.to_string())))
    });
    let s = Arc::clone(shared);
    engine.register("setting", move |args| {
        let key = args.first().and_then(Value::as_str).unwrap_or_default();
        Ok(match s.setting(key) {
            Some(v) => Value::String(v.to_string()),
            None => args.get(1).cloned().unwrap_or(Value::Bool(false)),
        })
    });
    let s = Arc::clone(shared);
    engine.register("detected-check-command", move |_| {
        Ok(detect_check(s.host.workspace().root()).map_or(Value::Bool(false), Value::from))
    });
    let s = Arc::clone(shared);
    engine.register("system-prompt", move |_| {
        Ok(Value::String(s.system.clone()))
    });
    register_control(engine, shared);
}

/// The procedures that reach past one call: the task, usage, session
/// state, and `stop`.
fn register_control(engine: &mut Engine, shared: &Arc<Shared>) {
    let s = Arc::clone(shared);
    engine.register("task-text", move |_| Ok(Value::String(s.task.clone())));
    let s = Arc::clone(shared);
    engine.register("task-usage", move |_| {
        Ok(super::shared::lock(&s.usage).to_json())
    });
    let s = Arc::clone(shared);
    engine.register("session-usage", move |_| {
        Ok(state::usage(s.session_id()).to_json())
    });
    let s = Arc::clone(shared);
    engine.register("session-get", move |args| {
        let key = args
            .first()
            .and_then(Value::as_str)
            .ok_or("session-get takes a key (a string) and a default")?;
        Ok(state::get(s.session_id(), key)
            .unwrap_or_else(|| args.get(1).cloned().unwrap_or(Value::Bool(false))))
    });
    let s = Arc::clone(shared);
    engine.register("session-set!", move |args| {
        let key = args
            .first()
            .and_then(Value::as_str)
            .ok_or("session-set! takes a key (a string) and a value")?;
        let value = args.get(1).cloned().unwrap_or(Value::Null);
        state::set(s.session_id(), key, value)?;
        Ok(Value::Bool(true))
    });
    let s = Arc::clone(shared);
    engine.register("stop", move |args| {
        const STATUSES: [&str; 4] = ["done", "error", "step_limit", "token_limit"];
        let status = args.first().and_then(Value::as_str).unwrap_or_default();
        if !STATUSES.contains(&status) {
            return Err(format!(
                "the status must be one of {} (got {})",
                STATUSES.join(", "),
                args.first().map(text_of).unwrap_or_default()
            ));
        }
        let message = args.get(1).map(text_of).unwrap_or_default();
        s.strategy_event("stop", &format!("{status}: {message}"));
        *super::shared::lock(&s.stop) = Some((status.to_string(), message.clone()));
        // An error unwinds the strategy to the host, which ends the run
        // with the status asked for.
        Err(format!(
            "the strategy stopped the run ({status}): {message}"
        ))
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

    fn model_reply(&self, messages: &Value, step: u64, options: &CallOptions, own: bool) -> Value {
        if self.cancel.load(Ordering::Relaxed) {
            return json!({"error": self.stop_reason(), "kind": "interrupted"});
        }
        if !own {
            self.note_step(step);
        }
        let used = self.tokens();
        if self.max_tokens > 0 && used >= self.max_tokens {
            return json!({"error": format!("the token budget ({}) is used up", self.max_tokens), "kind": "token_limit"});
        }
        let messages = match to_messages(messages) {
            Ok(m) => m,
            Err(e) => return json!({"error": e, "kind": "invalid"}),
        };
        let system = match (&options.system, &options.system_extra) {
            (Some(own), _) => own.clone(),
            (None, Some(extra)) => format!("{}\n\n{extra}", self.system),
            (None, None) => self.system.clone(),
        };
        let tools = match &options.tools {
            Some(names) => self
                .tools
                .iter()
                .filter(|t| {
                    t.get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| names.iter().any(|m| m == n))
                })
                .cloned()
                .collect(),
            None => self.tools.clone(),
        };
        let request = Request {
            system,
            messages,
            tools,
            max_tokens: options.max_tokens,
        };
        let model = options
            .model
            .clone()
            .unwrap_or_else(|| self.client.config().model.clone());
        let _ = self.log.emit(&Event::LlmReq(event::LlmReq {
            step,
            model,
            messages: request.messages.len() as u64,
            tools: request.tools.len() as u64,
        }));
        let mut on_stream = super::shared::lock(&self.on_stream);
        // A quiet call (a summary the strategy asks for itself) is not
        // streamed to the person watching.
        let (m, t) = (options.model.as_deref(), options.temperature);
        let reply = if options.quiet {
            self.reply_with(m, t, &request, &mut |_| {})
        } else {
            self.reply_with(m, t, &request, &mut |ev| on_stream(ev))
        };
        drop(on_stream);
        match reply {
            Ok(reply) => {
                self.record(step, &reply);
                self.remember_offer(&reply, &request.tools);
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
                *super::shared::lock(&self.last_error) = e.to_string();
                if self.cancel.load(Ordering::Relaxed) {
                    return json!({"error": self.stop_reason(), "kind": "interrupted"});
                }
                json!({"error": e.to_string(), "kind": error_kind(&e)})
            }
        }
    }

    fn record(&self, step: u64, reply: &Reply) {
        let u = &reply.usage;
        let cost = super::shared::cost_of(&reply.model, u);
        self.count_usage(u.prompt_tokens, u.cached_tokens, u.completion_tokens, cost);
        let _ = self.log.emit(&Event::LlmResp(event::LlmResp {
            step,
            model: reply.model.clone(),
            duration_ms: reply.duration.as_millis() as u64,
            usage: event::Usage {
                prompt: u.prompt_tokens,
                cached: u.cached_tokens,
                completion: u.completion_tokens,
                reported: u.reported,
                estimated: u.estimated,
            },
            tool_calls: reply.tool_calls.len() as u64,
            finish: reply.finish.as_str().to_string(),
            streamed: reply.streamed,
            stream_fallback: reply.stream_fallback.clone(),
            raw_text: reply.raw_text.clone(),
            text: (!reply.tool_calls.is_empty() && !reply.text.trim().is_empty())
                .then(|| reply.text.clone()),
            prompt_ms: reply.timings.prompt.map(|d| d.as_secs_f64() * 1000.0),
        }));
    }

    /// A reply's tool calls, in order; read-only ones run together.
    fn run_calls(&self, calls: &[Value], step: u64) -> Value {
        let parsed: Vec<Parsed> = calls
            .iter()
            .map(|c| {
                let (id, name, call) = self.parse_call(c);
                match self.not_offered(&id, &name) {
                    Some(why) => {
                        self.strategy_event("refuse", &why);
                        let mut refused = ToolResult::failed("refused", format!("refused: {why}"));
                        refused.refused = true;
                        (id, name, Err(refused))
                    }
                    None => (id, name, call),
                }
            })
            .collect();
        for (index, ((id, name, call), raw)) in parsed.iter().zip(calls).enumerate() {
            let made = Made {
                id,
                name,
                call: call.as_ref().ok(),
                raw_arguments: call.is_err().then(|| raw_arguments(raw)),
                by: None,
            };
            self.log_call(step, index, made);
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
            let mut obj = with_id(result.to_json(), id, name);
            if let (Ok(c), Value::Object(map)) = (&call, &mut obj)
                && c.decl.effect == Effect::Exec
            {
                map.extend(command_fields(&result.text));
            }
            out.push(obj);
        }
        Value::Array(out)
    }

    /// What the guard would decide for a call, without running it:
    /// `{"decision", "reasons"}`, or `{"decision": "invalid", "error"}`.
    fn guard_check(&self, call: Option<&Value>) -> Result<Value, String> {
        let call = call.ok_or("guard-check takes a call: {\"name\", \"args\"}")?;
        let (_, name, parsed) = self.parse_call(call);
        let parsed = match parsed {
            Ok(c) => c,
            Err(r) => return Ok(json!({"decision": "invalid", "name": name, "error": r.text})),
        };
        let decision = self.host.guard().judge(&parsed, self.host.workspace());
        let reasons: Vec<Value> = decision
            .reasons()
            .iter()
            .map(|r| json!({"rule": r.rule, "param": r.param, "message": r.message}))
            .collect();
        Ok(json!({"decision": decision.as_str(), "name": name, "reasons": reasons}))
    }

    /// A strategy event: what a strategy said, refused, injected or
    /// compacted, for the log and the clients.
    pub(super) fn strategy_event(&self, action: &str, text: &str) {
        let _ = self.log.emit(&Event::Strategy(event::Strategy {
            action: action.to_string(),
            text: text.to_string(),
        }));
    }

    /// One tool call of a reply, parsed by its declaration. A call a
    /// strategy rewrote carries its arguments as data (`args`).
    fn parse_call(&self, c: &Value) -> Parsed {
        let text = |k: &str| {
            c.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (id, name) = (text("id"), text("name"));
        let arguments = match (c.get("args"), c.get("arguments")) {
            (Some(args @ Value::Object(_)), _) => args.to_string(),
            (_, Some(Value::String(s))) => s.clone(),
            (_, Some(other)) => other.to_string(),
            (_, None) => String::new(),
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
        let made = Made {
            id: "",
            name: call.decl.name,
            call: Some(call),
            raw_arguments: None,
            by: Some("strategy"),
        };
        self.log_call(0, 0, made);
        let result = self.host.run(call);
        self.log_result(0, 0, call.decl.name, Some(call), &result);
        let mut obj = result.to_json();
        if let Value::Object(map) = &mut obj
            && call.decl.effect == Effect::Exec
        {
            map.extend(command_fields(&result.text));
        }
        obj
    }

    /// A question for the user: the person watching answers, else the
    /// policy, which never waits: `--set ask=yes` says yes (and takes the
    /// first choice), `--set ask_text=...` is the text answer; otherwise
    /// no (#f). Logged with who answered.
    fn ask(&self, question: Question) -> Value {
        let (answer, by) = match self.host.ask_user(&question) {
            Some(a) => (a, "user"),
            None => {
                let yes = self.setting("ask").is_some_and(|v| v == "yes");
                let a = match &question {
                    Question::YesNo(_) => Answer::Yes(yes),
                    Question::Choice(_, choices) if yes => Answer::Choice(choices[0].clone()),
                    Question::Choice(..) => Answer::Skipped,
                    Question::Text(_) => self
                        .setting("ask_text")
                        .map_or(Answer::Skipped, |t| Answer::Text(t.to_string())),
                };
                (a, "policy")
            }
        };
        let value = match answer {
            Answer::Yes(b) => Value::Bool(b),
            Answer::Choice(c) | Answer::Text(c) => Value::String(c),
            Answer::Skipped => Value::Bool(false),
        };
        let _ = self.log.emit(&Event::Ask(event::Ask {
            question: question.text().to_string(),
            answer: value.clone(),
            by: by.to_string(),
        }));
        value
    }

    /// A strategy setting (`--set key=value`), the last one given.
    fn setting(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
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
                raw_arguments: None,
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

/// A reply's tool call as data for hooks: `{"id", "name", "kind"
/// (read-only / write / exec), "args" (the arguments parsed; null when they
/// are not JSON), "arguments" (as the model sent them)}`.
fn call_data(call: Option<&Value>) -> Value {
    let get = |k: &str| {
        call.and_then(|c| c.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (id, name) = (get("id"), get("name"));
    let raw = match call.and_then(|c| c.get("arguments")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let args = if raw.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str::<Value>(&raw)
            .ok()
            .filter(Value::is_object)
            .unwrap_or(Value::Null)
    };
    let kind = lookup(&name).map_or("unknown", |d| d.effect.as_str());
    json!({"id": id, "name": name, "kind": kind, "args": args, "arguments": raw})
}

/// How a command ended, as fields: `exit_code` (null when it did not end
/// by itself), `timed_out`, `interrupted`, and `output_tail` (its last 40
/// lines; stdout and stderr come interleaved, as the model reads them).
fn command_fields(text: &str) -> serde_json::Map<String, Value> {
    let exit_code = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("exit code: "))
        .and_then(|n| n.trim().parse::<i64>().ok());
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(40)..].join("\n");
    let mut map = serde_json::Map::new();
    map.insert(
        "exit_code".into(),
        exit_code.map_or(Value::Null, Value::from),
    );
    map.insert(
        "timed_out".into(),
        Value::Bool(text.starts_with("the command timed out")),
    );
    map.insert(
        "interrupted".into(),
        Value::Bool(text.starts_with("the user interrupted the command")),
    );
    map.insert("output_tail".into(), Value::String(tail));
    map
}

/// The project's check command, from what its root holds: the first of
/// cargo, go, npm (with a test script), pytest and make (with a `test:`
/// target) that fits.
fn detect_check(root: &std::path::Path) -> Option<String> {
    let has = |name: &str| root.join(name).is_file();
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_default();
    if has("Cargo.toml") {
        return Some("cargo test".into());
    }
    if has("go.mod") {
        return Some("go test ./...".into());
    }
    if has("package.json") {
        let scripts = serde_json::from_str::<Value>(&read("package.json")).ok();
        if scripts
            .as_ref()
            .and_then(|p| p.pointer("/scripts/test"))
            .is_some()
        {
            return Some("npm test".into());
        }
    }
    let pytest_config = has("pytest.ini")
        || has("conftest.py")
        || read("pyproject.toml").contains("[tool.pytest")
        || read("setup.cfg").contains("[tool:pytest]")
        || read("tox.ini").contains("[pytest]");
    let test_files = std::fs::read_dir(root.join("tests")).is_ok_and(|mut d| {
        d.any(|e| {
            e.ok()
                .is_some_and(|e| e.file_name().to_string_lossy().starts_with("test_"))
        })
    });
    if pytest_config || test_files {
        return Some("python -m pytest -q".into());
    }
    if read("Makefile").lines().any(|l| l.starts_with("test:")) {
        return Some("make test".into());
    }
    None
}

/// A call's arguments exactly as the model sent them (a rewritten call's
/// as the strategy gave them).
fn raw_arguments(call: &Value) -> String {
    match (call.get("args"), call.get("arguments")) {
        (Some(args @ Value::Object(_)), _) => args.to_string(),
        (_, Some(Value::String(s))) => s.clone(),
        (_, Some(other)) => other.to_string(),
        (_, None) => String::new(),
    }
}

/// A value as text for a log line: strings as they are, anything else as JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
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
