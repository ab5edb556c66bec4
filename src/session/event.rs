//! The events of the log, as types: one [`Event`] enum, tagged by `ev`,
//! written by [`EventLog::emit`](super::EventLog::emit) and read back by
//! every consumer (the terminal client, `nib exec --json` and its progress
//! lines, swebench, scenarios, `nib stats`), so a field is spelled once and
//! a consumer's `match` is checked by the compiler.
//!
//! The line format is the one documented in the module above (`v`, `t`,
//! `ev`, then the event's fields in declaration order). Every field has a
//! default, so logs written before a field existed still read. Events a
//! strategy emits with a kind of its own are [`Event::Custom`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One event of a session's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev")]
pub enum Event {
    #[serde(rename = "session.start")]
    SessionStart(SessionStart),
    #[serde(rename = "llm.req")]
    LlmReq(LlmReq),
    #[serde(rename = "llm.resp")]
    LlmResp(LlmResp),
    #[serde(rename = "tool.call")]
    ToolCall(ToolCall),
    #[serde(rename = "guard")]
    Guard(GuardDecision),
    #[serde(rename = "confirm")]
    Confirm(Confirm),
    #[serde(rename = "confirm.answer")]
    ConfirmAnswer(ConfirmAnswer),
    #[serde(rename = "tool.result")]
    ToolResult(ToolResult),
    #[serde(rename = "write")]
    Write(Write),
    #[serde(rename = "ask")]
    Ask(Ask),
    #[serde(rename = "warning")]
    Warning(Warning),
    #[serde(rename = "strategy")]
    Strategy(Strategy),
    #[serde(rename = "turn.end")]
    TurnEnd(TurnEnd),
    #[serde(rename = "error")]
    Error(ErrorEvent),
    #[serde(rename = "notice")]
    Notice(Notice),
    #[serde(rename = "interrupted")]
    Interrupted(Interrupted),
    #[serde(rename = "result")]
    Result(RunResult),
    /// An event of a strategy's own kind (`(emit "my.kind" fields)`).
    #[serde(untagged)]
    Custom(Custom),
}

/// A session (or one task of an interactive session) starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionStart {
    pub id: String,
    pub root: String,
    pub model: String,
    pub provider: String,
    pub strategy: String,
    pub nib_version: String,
    pub task: String,
}

/// A request to the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmReq {
    pub step: u64,
    pub model: String,
    /// How many messages the request carried.
    pub messages: u64,
    /// How many tools it offered.
    pub tools: u64,
}

/// Token counts of one reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub prompt: u64,
    pub cached: u64,
    pub completion: u64,
    /// The server sent counts; `false` for servers that send none.
    pub reported: bool,
    /// Some count is nib's estimate from the text, not the server's.
    pub estimated: bool,
}

/// A model reply (whole, or the part that arrived before a cut).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmResp {
    pub step: u64,
    pub model: String,
    pub duration_ms: u64,
    pub usage: Usage,
    /// How many tool calls the reply made.
    pub tool_calls: u64,
    pub finish: String,
    /// Whether the reply came streamed.
    pub streamed: bool,
    /// Set when this call found that the server cannot stream tool calls
    /// (what it did); nib asks unstreamed from then on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_fallback: Option<String>,
    /// When the tool calls were read from the reply's text: the text as
    /// the model wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_text: Option<String>,
    /// The reply's text when it also made tool calls (the model's
    /// narration, for a resumed transcript; a final answer is `turn.end`'s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// How long the server took to read the prompt, when it says (Ollama's
    /// `prompt_eval_duration`, llama.cpp's `timings.prompt_ms`): what
    /// `nib compare` reports as prompt-evaluation time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_ms: Option<f64>,
}

/// A tool call, as the model (or a strategy) made it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolCall {
    pub step: u64,
    /// The 0-based index of the call within its reply.
    pub call: u64,
    pub id: String,
    pub name: String,
    /// `(fs-edit "a.rs" ...)`; empty when the arguments did not parse.
    pub positional: String,
    /// The arguments by name; `null` when they did not parse.
    pub args: Value,
    /// What the call got away with (`list-as-string`).
    pub quirks: Vec<String>,
    /// Who made the call when not the model: `strategy`, `text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// When the arguments did not parse: the text exactly as received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
}

/// One reason behind a guard decision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reason {
    pub rule: String,
    /// The parameter the finding is in (`edits[2].new`).
    pub param: String,
    pub message: String,
    /// The 1-based line of the parameter's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// What the guard decided for a call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GuardDecision {
    pub step: u64,
    pub call: u64,
    /// `allow`, `write`, `security` or `deny`.
    pub decision: String,
    pub reasons: Vec<Reason>,
}

/// A confirm the engine asked, and its answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Confirm {
    pub step: u64,
    pub call: u64,
    /// `write` or `security`.
    pub kind: String,
    /// `yes` or `no`.
    pub answer: String,
    /// `user` or `policy`.
    pub by: String,
}

/// How the terminal client answered a confirm (who, and with what).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConfirmAnswer {
    pub tool: String,
    pub path: Option<String>,
    pub kind: String,
    /// `yes`, `no` or `edited`.
    pub answer: String,
    /// `user` or `standing-approval`.
    pub by: String,
    pub reason: Option<String>,
    pub saved_approval: Option<String>,
    /// The standing approval that answered.
    pub scope: Option<String>,
}

/// The result of a call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolResult {
    pub step: u64,
    pub call: u64,
    pub name: String,
    pub ok: bool,
    /// The guard or a confirm stopped the call.
    pub refused: bool,
    /// `null` on success, else the failure kind (`not_found`, ...).
    pub kind: Option<String>,
    /// The first line of what the model got (for a command: how it ended).
    pub summary: String,
    /// A failure's lines after the first, else empty.
    pub hint: String,
    /// Lines of the diff written (0 when nothing was).
    pub diff_size: u64,
    /// The file fs-edit, fs-write or a text edit worked on.
    pub path: Option<String>,
    /// fs-edit: how many edits the call carried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edits: Option<u64>,
    /// fs-edit: `single`, `list` or `list-as-string`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edits_form: Option<String>,
}

/// A file was written; its previous content is version `version`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Write {
    pub path: Option<String>,
    /// The versions-store id of what the write replaced (`nib undo`).
    pub version: Option<String>,
}

/// A strategy asked the user something.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Ask {
    pub question: String,
    /// `null` when nobody could answer.
    pub answer: Value,
    /// `user` or `policy`.
    pub by: String,
}

/// Something the user should know that did not stop the session (a
/// workspace setting that was ignored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Warning {
    pub message: String,
}

/// What a strategy did that the user should see: said something (`say`),
/// refused a call (`refuse`), kept the task going (`continue`), compacted
/// the conversation (`compact`), or an action of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Strategy {
    pub action: String,
    pub text: String,
}

/// A task ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TurnEnd {
    pub step: u64,
    /// `done`, `step_limit`, `token_limit`, `error` or `refused`.
    pub reason: String,
    /// The model's last answer, or what went wrong.
    pub text: String,
}

/// Something failed (a model call, the strategy).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ErrorEvent {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    pub message: String,
}

/// Something a person should know that is neither an error nor a
/// warning about settings: the server cannot stream tool calls, a retry
/// and its wait, a slow server still thinking, usage estimated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Notice {
    /// `stream_fallback`, `retry`, `waiting`, `estimated`, or a client's own.
    pub kind: String,
    pub message: String,
}

/// A client was stopped from outside (a signal) or by the person (Esc):
/// its commands were stopped with everything they started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Interrupted {
    /// `SIGINT`, `SIGTERM`, `SIGHUP`, or `user` (Esc in the terminal client).
    pub by: String,
    pub message: String,
    /// The exit code the client ends with (absent when it goes on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

/// The last event of a `nib exec` run: how it ended and what it cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunResult {
    /// `done`, `refused`, `step_limit`, `token_limit`, `time_limit`,
    /// `interrupted` or `error`.
    pub status: String,
    pub exit_code: i32,
    pub steps: u64,
    /// The session's token totals (`estimated` when some count is nib's).
    pub usage: Usage,
    /// USD, from `[prices]` or the built-in table; absent when the model's
    /// price is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub duration_ms: u64,
    /// The model's last answer, or what went wrong.
    pub text: String,
    pub session: String,
}

/// An event of a kind nib does not know: a strategy's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Custom {
    pub ev: String,
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl Event {
    /// The event's kind, as `ev` spells it.
    pub fn kind(&self) -> &str {
        match self {
            Event::SessionStart(_) => "session.start",
            Event::LlmReq(_) => "llm.req",
            Event::LlmResp(_) => "llm.resp",
            Event::ToolCall(_) => "tool.call",
            Event::Guard(_) => "guard",
            Event::Confirm(_) => "confirm",
            Event::ConfirmAnswer(_) => "confirm.answer",
            Event::ToolResult(_) => "tool.result",
            Event::Write(_) => "write",
            Event::Ask(_) => "ask",
            Event::Warning(_) => "warning",
            Event::Strategy(_) => "strategy",
            Event::TurnEnd(_) => "turn.end",
            Event::Error(_) => "error",
            Event::Notice(_) => "notice",
            Event::Interrupted(_) => "interrupted",
            Event::Result(_) => "result",
            Event::Custom(c) => &c.ev,
        }
    }

    /// The kinds nib itself writes: a strategy's `emit` may not use them
    /// (its fields would not be what readers of that kind expect).
    pub const KNOWN: [&'static str; 17] = [
        "session.start",
        "llm.req",
        "llm.resp",
        "tool.call",
        "guard",
        "confirm",
        "confirm.answer",
        "tool.result",
        "write",
        "ask",
        "warning",
        "strategy",
        "turn.end",
        "error",
        "notice",
        "interrupted",
        "result",
    ];

    /// The event's fields as a JSON object, `ev` first.
    pub fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            // Every variant is a struct of plain fields: this cannot fail,
            // but a log line must never be lost, so keep the kind at least.
            _ => Map::from_iter([("ev".to_string(), Value::String(self.kind().to_string()))]),
        }
    }

    /// An event from a log line's object (the log's own `v` and `t` are
    /// dropped). A line of a known kind whose fields do not fit its type
    /// is an error.
    pub fn from_map(mut map: Map<String, Value>) -> Result<Event, String> {
        map.remove("v");
        map.remove("t");
        let kind = match map.get("ev") {
            Some(Value::String(k)) if !k.is_empty() => k.clone(),
            _ => return Err("the line has no `ev` (its kind)".into()),
        };
        let known = Event::KNOWN.contains(&kind.as_str());
        match serde_json::from_value::<Event>(Value::Object(map)) {
            Ok(Event::Custom(_)) if known => {
                Err(format!("a `{kind}` event whose fields are not of its kind"))
            }
            Ok(ev) => Ok(ev),
            Err(e) => Err(format!("a `{kind}` event that does not read: {e}")),
        }
    }

    /// Parses one log line (`{"v":1,"t":…,"ev":…}`).
    pub fn parse_line(line: &str) -> Result<Event, String> {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => Event::from_map(map),
            Ok(_) => Err("the line is not a JSON object".into()),
            Err(e) => Err(format!("the line is not JSON: {e}")),
        }
    }

    /// One event of every kind with every optional field set: what the
    /// schema test checks the documentation against.
    pub fn examples() -> Vec<Event> {
        vec![
            Event::SessionStart(SessionStart::default()),
            Event::LlmReq(LlmReq::default()),
            Event::LlmResp(LlmResp {
                stream_fallback: Some(String::new()),
                raw_text: Some(String::new()),
                text: Some(String::new()),
                prompt_ms: Some(0.0),
                ..LlmResp::default()
            }),
            Event::ToolCall(ToolCall {
                by: Some("strategy".into()),
                raw_arguments: Some(String::new()),
                ..ToolCall::default()
            }),
            Event::Guard(GuardDecision {
                reasons: vec![Reason {
                    line: Some(1),
                    ..Reason::default()
                }],
                ..GuardDecision::default()
            }),
            Event::Confirm(Confirm::default()),
            Event::ConfirmAnswer(ConfirmAnswer {
                reason: Some(String::new()),
                saved_approval: Some(String::new()),
                scope: Some(String::new()),
                ..ConfirmAnswer::default()
            }),
            Event::ToolResult(ToolResult {
                edits: Some(1),
                edits_form: Some("single".into()),
                ..ToolResult::default()
            }),
            Event::Write(Write::default()),
            Event::Ask(Ask::default()),
            Event::Warning(Warning::default()),
            Event::Strategy(Strategy::default()),
            Event::TurnEnd(TurnEnd::default()),
            Event::Error(ErrorEvent {
                step: Some(0),
                ..ErrorEvent::default()
            }),
            Event::Notice(Notice::default()),
            Event::Interrupted(Interrupted {
                exit_code: Some(130),
                ..Interrupted::default()
            }),
            Event::Result(RunResult {
                cost_usd: Some(0.0),
                ..RunResult::default()
            }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_kinds_round_trip_and_keep_field_order() {
        for ev in Event::examples() {
            let map = ev.to_map();
            assert_eq!(map.get("ev"), Some(&json!(ev.kind())));
            assert_eq!(map.keys().next().map(String::as_str), Some("ev"));
            let back = Event::from_map(map).unwrap();
            assert_eq!(back, ev);
        }
        assert_eq!(Event::examples().len(), Event::KNOWN.len());
    }

    #[test]
    fn custom_kinds_keep_their_fields() {
        let line =
            r#"{"v":1,"t":"2026-12-01T00:00:00.000Z","ev":"strategy.note","n":3,"text":"hi"}"#;
        let ev = Event::parse_line(line).unwrap();
        let Event::Custom(c) = &ev else {
            panic!("{ev:?}")
        };
        assert_eq!(c.ev, "strategy.note");
        assert_eq!(c.fields.get("n"), Some(&json!(3)));
        assert!(!c.fields.contains_key("v") && !c.fields.contains_key("t"));
        assert_eq!(
            serde_json::to_value(&ev).unwrap(),
            json!({"ev": "strategy.note", "n": 3, "text": "hi"})
        );
    }

    #[test]
    fn old_lines_without_new_fields_still_read() {
        let ev =
            Event::parse_line(r#"{"v":1,"ev":"confirm","step":2,"kind":"write","answer":"yes"}"#)
                .unwrap();
        assert_eq!(
            ev,
            Event::Confirm(Confirm {
                step: 2,
                kind: "write".into(),
                answer: "yes".into(),
                ..Confirm::default()
            })
        );
    }

    #[test]
    fn a_known_kind_with_wrong_fields_is_an_error() {
        let e = Event::parse_line(r#"{"v":1,"ev":"llm.resp","step":"two"}"#).unwrap_err();
        assert!(e.contains("llm.resp"), "{e}");
        assert!(Event::parse_line("[1]").is_err());
        assert!(Event::parse_line(r#"{"v":1}"#).is_err());
    }
}
