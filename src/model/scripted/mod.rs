//! The scripted model: replies written in advance, served over real HTTP in
//! all three wire protocols by [`ScriptedServer`], so tests, `nib demo` and
//! the scenarios run the real client code against it.
//!
//! `--provider scripted` is a server plus an ordinary client; any of the
//! three protocols will do:
//!
//! ```no_run
//! use nib::model::scripted::{Script, ScriptedServer};
//! use nib::model::{Client, Provider};
//!
//! let server = ScriptedServer::start(Script::load("scripted:hello")?)?;
//! let client = Client::new(server.config(Provider::OpenAi))?;
//! // … client.reply(…) as with a real model; server.requests() has the bodies.
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Script files
//!
//! A script is JSON: a list of replies, or `{"replies": [...]}`. Each
//! request the server gets is answered with the next reply, in the protocol
//! of the endpoint it was sent to. A reply is a string (just text) or an
//! object; every key is optional:
//!
//! ```json
//! [
//!   "Plain text reply.",
//!   {
//!     "text": "I will edit the file.",
//!     "reasoning": "The test fails because ...",
//!     "tool_calls": [
//!       {"name": "fs-read", "arguments": {"path": "src/a.rs"}},
//!       {"id": "call_7", "name": "fs-edit", "arguments": "{\"path\": \"a\", \"old\": "}
//!     ],
//!     "finish": "tool_calls",
//!     "usage": {"prompt_tokens": 1200, "cached_tokens": 1000,
//!               "cache_write_tokens": 0, "completion_tokens": 40},
//!     "model": "scripted-large",
//!     "fragment": 12,
//!     "chunk_size": 1,
//!     "faults": [{"status": 429}, {"cut_after": 300}]
//!   }
//! ]
//! ```
//!
//! - `tool_calls[].arguments`: a JSON object (sent as the model would), or
//!   a string sent as-is, valid JSON or not (to test what a caller does with
//!   broken arguments). `id` defaults to `call_R_C` (`toolu_R_C` for
//!   Anthropic), R and C the reply's and the call's index.
//! - `finish`: `stop`, `tool_calls`, `length`, `content_filter` or any other
//!   word; default `tool_calls` when there are calls, else `stop`.
//! - `usage`: default estimated from the request's and the reply's sizes.
//! - `model`: default the model the request asked for.
//! - `fragment`: characters per text, reasoning or argument delta (default
//!   12). Ollama sends each tool call whole, as Ollama does.
//! - `chunk_size`: write the HTTP body in pieces of this many bytes;
//!   `split_at`: a list of byte offsets to split it at instead. Default: one
//!   piece per NDJSON line or SSE event.
//! - `reasoning_field`: OpenAI only, `reasoning_content` (default) or
//!   `reasoning`: the delta field reasoning goes in.
//! - `raw`: send this body verbatim instead of rendering the reply (for
//!   server quirks); the other content keys are then ignored.
//! - `faults` (or one `fault`), each one of:
//!   - `{"status": 503, "times": 2}`: answer this HTTP status (`times`
//!     requests, default 1) before serving the reply; `"retry_after": 3600`
//!     adds a `Retry-After` header (seconds);
//!   - `{"hangup": true, "times": 1}`: close the connection without answering;
//!   - `{"delay_first_byte_ms": 500}`: wait before answering;
//!   - `{"delay_between_chunks_ms": 50}`: wait between body pieces;
//!   - `{"stall_after": 200, "ms": 1000}`: after that many body bytes, pause;
//!   - `{"cut_after": 300}`: send that many body bytes, then drop the
//!     connection (no end of stream);
//!   - `{"stream_error": "overloaded"}`: end the stream with the protocol's
//!     mid-stream error event instead of finishing.
//!
//!   Status and hangup faults apply in the order given, then the reply is
//!   served (and used up) with its other faults.
//! - `server`: how the server answering this reply behaves, like real
//!   local servers do (default: the server's [`ScriptedServer::set_quirks`],
//!   else a well-behaved one):
//!   - `"stream_tools": false`: a streaming request that carries tools is
//!     answered HTTP 200 and then the connection closes with no body (as
//!     llama-cpp-python does); the reply is not used up, so the client's
//!     unstreamed retry gets it;
//!   - `"stream_tools_status": 400`: with `stream_tools: false`, answer such
//!     a request with this HTTP status and an error saying streaming with
//!     tools is not supported, instead (as some other servers do);
//!   - `"stream_usage": false`: streamed bodies carry no token counts, even
//!     when asked (`stream_options.include_usage`).
//!
//! A request with `"stream": false` (Ollama: only when it says so) gets the
//! whole reply as one JSON body ([`render_whole`]); its faults
//! `delay_first_byte_ms` and `cut_after` apply.
//!
//! To emulate a model that writes its tool calls as text, put them in the
//! text: `"text": "<tool_call>{\"name\": \"fs-read\", …}</tool_call>"`.
//!
//! When the script has no reply left the server answers HTTP 410 saying so.
//! Built-in scripts ([`Script::BUILTINS`]) are loaded by name.

mod render;
mod server;

pub use render::{render, render_whole};
pub use server::{Framing, RecordedRequest, ScriptedServer};

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{FinishReason, Usage};

/// The replies a scripted model gives, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    pub replies: Vec<ScriptedReply>,
}

/// One scripted reply; see the module docs for the JSON form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScriptedReply {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ScriptedCall>,
    /// `None`: `ToolCalls` when there are calls, else `Stop`.
    pub finish: Option<FinishReason>,
    /// `None`: estimated from the sizes of the request and the reply.
    pub usage: Option<Usage>,
    /// `None`: the model the request named.
    pub model: Option<String>,
    /// Characters per delta; `None`: 12.
    pub fragment: Option<usize>,
    /// How the HTTP body is cut into writes; `None`: the server's chunk
    /// size if set, else one write per line or event.
    pub chunking: Option<Chunking>,
    pub faults: Vec<Fault>,
    /// OpenAI only: the delta field for reasoning (`reasoning_content` by
    /// default, or `reasoning`).
    pub reasoning_field: Option<String>,
    /// Sent verbatim as the body instead of rendering the fields above.
    pub raw: Option<String>,
    /// How the server behaves for this reply; `None`: the server's default.
    pub quirks: Option<Quirks>,
}

/// Ways real servers fall short, on demand; see the module docs (`server`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quirks {
    /// Streaming requests that carry tools work (`false`: 200, then the
    /// connection closes with no body).
    pub stream_tools: bool,
    /// With `stream_tools` off: answer such requests with this status and
    /// an error naming streaming, instead of 200 and nothing.
    pub stream_tools_status: Option<u16>,
    /// Streamed bodies carry token counts when asked.
    pub stream_usage: bool,
}

impl Default for Quirks {
    fn default() -> Quirks {
        Quirks {
            stream_tools: true,
            stream_tools_status: None,
            stream_usage: true,
        }
    }
}

/// A tool call in a scripted reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedCall {
    pub id: Option<String>,
    pub name: String,
    /// An object is sent as JSON; a string is sent as-is.
    pub arguments: Value,
}

/// How the server writes a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunking {
    /// Pieces of this many bytes (at least 1).
    Size(usize),
    /// Split at these byte offsets.
    SplitAt(Vec<usize>),
}

/// Something going wrong on purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer this status `times` times before serving the reply.
    Status {
        code: u16,
        times: u32,
        /// Sent as `Retry-After`, in seconds.
        retry_after: Option<u64>,
    },
    /// Close the connection without answering, `times` times.
    Hangup {
        times: u32,
    },
    DelayFirstByte(Duration),
    DelayBetweenChunks(Duration),
    /// Pause once after `bytes` bytes of the body.
    StallAfter {
        bytes: usize,
        duration: Duration,
    },
    /// Send this many bytes of the body, then drop the connection.
    CutAfter(usize),
    /// End with the protocol's mid-stream error event carrying this message.
    StreamError(String),
}

impl ScriptedReply {
    /// A reply that is just text.
    pub fn text(text: impl Into<String>) -> ScriptedReply {
        ScriptedReply {
            text: text.into(),
            ..ScriptedReply::default()
        }
    }

    /// A reply that is just tool calls.
    pub fn calls(calls: Vec<ScriptedCall>) -> ScriptedReply {
        ScriptedReply {
            tool_calls: calls,
            ..ScriptedReply::default()
        }
    }

    /// The finish reason the reply is sent with.
    pub fn finish_reason(&self) -> FinishReason {
        match &self.finish {
            Some(f) => f.clone(),
            None if self.tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        }
    }
}

impl ScriptedCall {
    pub fn new(name: impl Into<String>, arguments: Value) -> ScriptedCall {
        ScriptedCall {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// The arguments as the text the model sends.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// A script that cannot be read, with where and what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// The file or built-in name.
    pub source: String,
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "script {}: {} (a script is a JSON array of replies: a string for a text reply, or an object with \"text\" and \"tool_calls\": [{{\"name\", \"arguments\"}}]; examples/demo/script.json is one)",
            self.source, self.message
        )
    }
}

impl std::error::Error for ScriptError {}

const HELLO: &str = r#"["Hello from nib's scripted model. There is nothing to do, so I am done."]"#;

const LIST_WORKSPACE: &str = r#"[
  {"text": "Let me look at the workspace first.",
   "tool_calls": [{"name": "fs-list", "arguments": {"path": "."}}]},
  "Those are the workspace's files. Nothing else was asked, so I am done."
]"#;

impl Script {
    /// The names [`Script::builtin`] knows.
    pub const BUILTINS: &'static [&'static str] = &["hello", "list-workspace"];

    /// A built-in script by name.
    pub fn builtin(name: &str) -> Option<Script> {
        let text = match name {
            "hello" => HELLO,
            "list-workspace" => LIST_WORKSPACE,
            _ => return None,
        };
        Script::from_json(text).ok()
    }

    /// `FILE`, a built-in name, or either after `scripted:`. An existing
    /// file wins over a built-in of the same name.
    pub fn load(spec: &str) -> Result<Script, ScriptError> {
        let spec = spec.strip_prefix("scripted:").unwrap_or(spec);
        let path = std::path::Path::new(spec);
        if path.is_file() {
            let text = std::fs::read_to_string(path).map_err(|e| ScriptError {
                source: spec.to_string(),
                message: format!("cannot be read: {e}"),
            })?;
            return Script::from_json(&text).map_err(|e| ScriptError {
                source: spec.to_string(),
                message: e.message,
            });
        }
        Script::builtin(spec).ok_or_else(|| ScriptError {
            source: spec.to_string(),
            message: format!(
                "is neither a file nor a built-in script (built-ins: {})",
                Script::BUILTINS.join(", ")
            ),
        })
    }

    /// Parses a script's JSON text.
    pub fn from_json(text: &str) -> Result<Script, ScriptError> {
        let value: Value = serde_json::from_str(text).map_err(|e| ScriptError {
            source: "(text)".into(),
            message: format!("is not JSON: {e}"),
        })?;
        Script::from_value(&value).map_err(|message| ScriptError {
            source: "(text)".into(),
            message,
        })
    }

    fn from_value(value: &Value) -> Result<Script, String> {
        let list = match value {
            Value::Array(list) => list,
            Value::Object(o) => match o.get("replies") {
                Some(Value::Array(list)) if o.len() == 1 => list,
                _ => {
                    return Err(
                        "an object script must be {\"replies\": [...]} and nothing else".into(),
                    );
                }
            },
            _ => return Err("must be a list of replies, or {\"replies\": [...]}".into()),
        };
        let replies = list
            .iter()
            .enumerate()
            .map(|(i, r)| parse_reply(r).map_err(|e| format!("reply {}: {e}", i + 1)))
            .collect::<Result<_, _>>()?;
        Ok(Script { replies })
    }
}

const REPLY_KEYS: &[&str] = &[
    "text",
    "reasoning",
    "tool_calls",
    "finish",
    "usage",
    "model",
    "fragment",
    "chunk_size",
    "split_at",
    "faults",
    "fault",
    "reasoning_field",
    "raw",
    "server",
];

fn parse_reply(v: &Value) -> Result<ScriptedReply, String> {
    let o = match v {
        Value::String(s) => return Ok(ScriptedReply::text(s.clone())),
        Value::Object(o) => o,
        _ => return Err("must be a string or an object".into()),
    };
    check_keys(o, REPLY_KEYS)?;
    let mut reply = ScriptedReply {
        text: opt_string(o, "text")?.unwrap_or_default(),
        reasoning: opt_string(o, "reasoning")?.unwrap_or_default(),
        finish: opt_string(o, "finish")?.map(|s| FinishReason::parse(&s)),
        model: opt_string(o, "model")?,
        raw: opt_string(o, "raw")?,
        reasoning_field: opt_string(o, "reasoning_field")?,
        ..ScriptedReply::default()
    };
    if let Some(f) = &reply.reasoning_field
        && f != "reasoning_content"
        && f != "reasoning"
    {
        return Err("reasoning_field must be \"reasoning_content\" or \"reasoning\"".into());
    }
    if let Some(calls) = o.get("tool_calls") {
        let Value::Array(calls) = calls else {
            return Err("tool_calls must be a list".into());
        };
        for (i, c) in calls.iter().enumerate() {
            reply
                .tool_calls
                .push(parse_call(c).map_err(|e| format!("tool call {}: {e}", i + 1))?);
        }
    }
    if let Some(u) = o.get("usage") {
        let Value::Object(u) = u else {
            return Err("usage must be an object".into());
        };
        let keys = [
            "prompt_tokens",
            "cached_tokens",
            "cache_write_tokens",
            "completion_tokens",
        ];
        check_keys(u, &keys).map_err(|e| format!("usage: {e}"))?;
        let n = |k: &str| opt_u64(u, k).map(Option::unwrap_or_default);
        reply.usage = Some(Usage {
            prompt_tokens: n("prompt_tokens")?,
            cached_tokens: n("cached_tokens")?,
            cache_write_tokens: n("cache_write_tokens")?,
            completion_tokens: n("completion_tokens")?,
            ..Usage::default()
        });
    }
    if let Some(q) = o.get("server") {
        let Value::Object(q) = q else {
            return Err("server must be an object".into());
        };
        check_keys(q, &["stream_tools", "stream_tools_status", "stream_usage"])
            .map_err(|e| format!("server: {e}"))?;
        let flag = |k: &str| match q.get(k) {
            None => Ok(true),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("server: {k} must be true or false")),
        };
        let status = match opt_u64(q, "stream_tools_status")? {
            Some(code @ 400..=599) => Some(code as u16),
            Some(code) => return Err(format!("server: stream_tools_status {code} is not 4xx/5xx")),
            None => None,
        };
        reply.quirks = Some(Quirks {
            stream_tools: flag("stream_tools")?,
            stream_tools_status: status,
            stream_usage: flag("stream_usage")?,
        });
    }
    if let Some(n) = opt_u64(o, "fragment")? {
        if n == 0 {
            return Err("fragment must be at least 1".into());
        }
        reply.fragment = Some(n as usize);
    }
    match (opt_u64(o, "chunk_size")?, o.get("split_at")) {
        (Some(_), Some(_)) => return Err("give chunk_size or split_at, not both".into()),
        (Some(0), None) => return Err("chunk_size must be at least 1".into()),
        (Some(n), None) => reply.chunking = Some(Chunking::Size(n as usize)),
        (None, Some(Value::Array(points))) => {
            let points = points
                .iter()
                .map(|p| p.as_u64().map(|p| p as usize))
                .collect::<Option<Vec<_>>>()
                .ok_or("split_at must be a list of byte offsets")?;
            reply.chunking = Some(Chunking::SplitAt(points));
        }
        (None, Some(_)) => return Err("split_at must be a list of byte offsets".into()),
        (None, None) => {}
    }
    let faults: Vec<&Value> = match (o.get("faults"), o.get("fault")) {
        (Some(_), Some(_)) => return Err("give faults or fault, not both".into()),
        (Some(Value::Array(list)), None) => list.iter().collect(),
        (Some(_), None) => return Err("faults must be a list".into()),
        (None, Some(one)) => vec![one],
        (None, None) => vec![],
    };
    for (i, f) in faults.iter().enumerate() {
        reply
            .faults
            .push(parse_fault(f).map_err(|e| format!("fault {}: {e}", i + 1))?);
    }
    Ok(reply)
}

fn parse_call(v: &Value) -> Result<ScriptedCall, String> {
    let Value::Object(o) = v else {
        return Err("must be an object with name and arguments".into());
    };
    check_keys(o, &["id", "name", "arguments"])?;
    let name = opt_string(o, "name")?.ok_or("has no name")?;
    Ok(ScriptedCall {
        id: opt_string(o, "id")?,
        name,
        arguments: o
            .get("arguments")
            .cloned()
            .unwrap_or(Value::Object(Map::new())),
    })
}

const FAULT_KEYS: &[&str] = &[
    "status",
    "hangup",
    "delay_first_byte_ms",
    "delay_between_chunks_ms",
    "stall_after",
    "cut_after",
    "stream_error",
];

fn parse_fault(v: &Value) -> Result<Fault, String> {
    let Value::Object(o) = v else {
        return Err(format!(
            "must be an object with one of {}",
            FAULT_KEYS.join(", ")
        ));
    };
    let kinds: Vec<&str> = FAULT_KEYS
        .iter()
        .copied()
        .filter(|k| o.contains_key(*k))
        .collect();
    let [kind] = kinds[..] else {
        return Err(format!(
            "must have exactly one of {} (has {})",
            FAULT_KEYS.join(", "),
            if kinds.is_empty() {
                "none".to_string()
            } else {
                kinds.join(", ")
            }
        ));
    };
    let times = || -> Result<u32, String> {
        let t = opt_u64(o, "times")?.unwrap_or(1);
        u32::try_from(t).map_err(|_| "times is too large".to_string())
    };
    let ms = |k: &str| -> Result<Duration, String> {
        Ok(Duration::from_millis(opt_u64(o, k)?.unwrap_or(0)))
    };
    let bytes = |k: &str| -> Result<usize, String> { Ok(opt_u64(o, k)?.unwrap_or(0) as usize) };
    match kind {
        "status" => {
            check_keys(o, &["status", "times", "retry_after"])?;
            let code = opt_u64(o, "status")?.unwrap_or(0);
            if !(100..=599).contains(&code) {
                return Err(format!("status {code} is not an HTTP status"));
            }
            Ok(Fault::Status {
                code: code as u16,
                times: times()?,
                retry_after: opt_u64(o, "retry_after")?,
            })
        }
        "hangup" => {
            check_keys(o, &["hangup", "times"])?;
            Ok(Fault::Hangup { times: times()? })
        }
        "delay_first_byte_ms" => {
            check_keys(o, &[kind])?;
            Ok(Fault::DelayFirstByte(ms(kind)?))
        }
        "delay_between_chunks_ms" => {
            check_keys(o, &[kind])?;
            Ok(Fault::DelayBetweenChunks(ms(kind)?))
        }
        "stall_after" => {
            check_keys(o, &["stall_after", "ms"])?;
            Ok(Fault::StallAfter {
                bytes: bytes("stall_after")?,
                duration: ms("ms")?,
            })
        }
        "cut_after" => {
            check_keys(o, &[kind])?;
            Ok(Fault::CutAfter(bytes(kind)?))
        }
        _ => {
            check_keys(o, &[kind])?;
            Ok(Fault::StreamError(opt_string(o, kind)?.unwrap_or_default()))
        }
    }
}

fn check_keys(o: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    for k in o.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(format!(
                "unknown key {k:?}; the keys are {}",
                allowed.join(", ")
            ));
        }
    }
    Ok(())
}

fn opt_string(o: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

fn opt_u64(o: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{key} must be a whole number, 0 or more")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        for name in Script::BUILTINS {
            assert!(Script::builtin(name).is_some(), "{name}");
        }
    }

    #[test]
    fn errors_name_the_place() {
        let err =
            Script::from_json(r#"[{"text": "a"}, {"tool_calls": [{"nme": "x"}]}]"#).unwrap_err();
        assert!(
            err.message
                .contains("reply 2: tool call 1: unknown key \"nme\""),
            "{err}"
        );
        let err =
            Script::from_json(r#"[{"faults": [{"cut_after": 3, "status": 429}]}]"#).unwrap_err();
        assert!(err.message.contains("exactly one of"), "{err}");
    }
}
