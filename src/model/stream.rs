//! Stream plumbing the three protocols share: cutting bytes into lines,
//! assembling SSE events from lines, and [`Accum`], which turns what a
//! decoder understood into [`StreamEvent`]s and the [`Reply`] at once.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use super::estimate::reply_tokens;
use super::{FinishReason, Reply, StreamEvent, Timings, ToolCall, Usage, text_calls};

/// Why a decoder could not go on.
#[derive(Debug)]
pub(crate) enum DecodeError {
    /// The server reported an error in the stream.
    Remote(String),
    /// The bytes are not the protocol.
    Protocol(String),
}

/// A wire protocol's stream decoder: fed one line at a time (without its
/// line ending), it tells `acc` what the line meant.
pub(crate) trait Decoder: Send {
    fn line(&mut self, line: &str, acc: &mut Accum) -> Result<(), DecodeError>;
    /// The stream ended: finish anything pending.
    fn eof(&mut self, acc: &mut Accum) -> Result<(), DecodeError>;
    /// Whether the protocol's end-of-reply marker has been seen.
    fn complete(&self) -> bool;
}

/// The longest line accepted: a server that never ends its line must not
/// fill the memory.
const MAX_LINE: usize = 32 << 20;

/// Splits a byte stream into lines at `\n` (a `\r` before it is dropped).
/// A line is only decoded as UTF-8 once it is whole, so a character split
/// across chunks is fine.
#[derive(Default)]
pub(crate) struct LineSplitter {
    buf: Vec<u8>,
}

impl LineSplitter {
    /// Appends `bytes` and calls `f` on each line they complete; stops at
    /// the first error of `f`.
    pub(crate) fn push<E>(
        &mut self,
        bytes: &[u8],
        mut f: impl FnMut(&str) -> Result<(), E>,
        not_utf8: impl Fn() -> E,
        too_long: impl Fn() -> E,
    ) -> Result<(), E> {
        let mut start = 0;
        while let Some(pos) = memchr::memchr(b'\n', &bytes[start..]) {
            let end = start + pos;
            let line: &[u8] = if self.buf.is_empty() {
                &bytes[start..end]
            } else {
                self.buf.extend_from_slice(&bytes[start..end]);
                &self.buf
            };
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let text = std::str::from_utf8(line).map_err(|_| not_utf8())?;
            let result = f(text);
            self.buf.clear();
            result?;
            start = end + 1;
        }
        self.buf.extend_from_slice(&bytes[start..]);
        if self.buf.len() > MAX_LINE {
            return Err(too_long());
        }
        Ok(())
    }

    /// What is left after the last line ending, if anything.
    pub(crate) fn take_rest(&mut self) -> Option<Vec<u8>> {
        if self.buf.is_empty() {
            None
        } else {
            Some(std::mem::take(&mut self.buf))
        }
    }
}

/// Server-sent events assembled from lines: `event:` and `data:` fields up
/// to a blank line; comments (`:`), `id:` and `retry:` ignored.
#[derive(Default)]
pub(crate) struct Sse {
    event: String,
    data: String,
    has_data: bool,
}

impl Sse {
    /// Feeds one line; returns `(event name, data)` when it ends an event.
    pub(crate) fn line(&mut self, line: &str) -> Option<(String, String)> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }

    /// The event still pending when the stream ends, if any.
    pub(crate) fn dispatch(&mut self) -> Option<(String, String)> {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some((event, std::mem::take(&mut self.data)))
    }
}

/// Parses one JSON event, naming the protocol when it is not JSON.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
) -> Result<T, DecodeError> {
    serde_json::from_str(text).map_err(|e| {
        let shown: String = text.chars().take(200).collect();
        DecodeError::Protocol(format!("a {what} that does not parse ({e}): {shown}"))
    })
}

/// The message of an `error` value: a string, `{"message": …}`, or
/// `{"error": {"type", "message"}}`.
pub(crate) fn error_message(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            let msg = o.get("message").and_then(Value::as_str);
            let kind = o.get("type").and_then(Value::as_str);
            match (kind, msg) {
                (Some(k), Some(m)) => format!("{k}: {m}"),
                (None, Some(m)) => m.to_string(),
                _ => match o.get("error") {
                    Some(inner) => error_message(inner),
                    None => v.to_string(),
                },
            }
        }
        other => other.to_string(),
    }
}

static CALL_IDS: AtomicU64 = AtomicU64::new(1);

/// The reply as it builds up, and the events not yet delivered.
pub(crate) struct Accum {
    reply: Reply,
    events: Vec<StreamEvent>,
    done_calls: HashSet<usize>,
    finished: bool,
    /// The offered tools' names when tool calls written as text are read.
    text_call_tools: Vec<String>,
    /// The request's estimated prompt tokens, for a server that reports none.
    prompt_estimate: u64,
    /// Whether anything of the reply arrived (a partial reply with nothing
    /// in it used no tokens worth estimating).
    started: bool,
}

impl Accum {
    pub(crate) fn new(model: &str) -> Accum {
        Accum {
            reply: Reply {
                text: String::new(),
                reasoning: String::new(),
                tool_calls: Vec::new(),
                usage: Usage::default(),
                finish: FinishReason::Other("incomplete".into()),
                model: model.to_string(),
                duration: Default::default(),
                attempts: 0,
                timings: Timings::default(),
                extra: Map::new(),
                streamed: true,
                stream_fallback: None,
                raw_text: None,
            },
            events: Vec::new(),
            done_calls: HashSet::new(),
            finished: false,
            text_call_tools: Vec::new(),
            prompt_estimate: 0,
            started: false,
        }
    }

    /// Reads tool calls written as text, among these offered tools, when
    /// the reply has no native ones (an empty list: never).
    pub(crate) fn read_text_calls(&mut self, tools: Vec<String>) {
        self.text_call_tools = tools;
    }

    /// The prompt tokens to assume when the server reports none.
    pub(crate) fn prompt_estimate(&mut self, n: u64) {
        self.prompt_estimate = n;
    }

    pub(crate) fn not_streamed(&mut self) {
        self.reply.streamed = false;
    }

    pub(crate) fn raw(&mut self, line: &str) {
        if !line.is_empty() {
            self.started = true;
            self.events.push(StreamEvent::Raw(line.to_string()));
        }
    }

    pub(crate) fn text(&mut self, s: &str) {
        if !s.is_empty() {
            self.reply.text.push_str(s);
            self.events.push(StreamEvent::TextDelta(s.to_string()));
        }
    }

    pub(crate) fn reasoning(&mut self, s: &str) {
        if !s.is_empty() {
            self.reply.reasoning.push_str(s);
            self.events.push(StreamEvent::ReasoningDelta(s.to_string()));
        }
    }

    /// Starts a tool call and returns its index. A missing id is made up.
    pub(crate) fn start_call(&mut self, id: Option<&str>, name: &str) -> usize {
        let id = match id {
            Some(id) if !id.is_empty() => id.to_string(),
            _ => format!("call_{}", CALL_IDS.fetch_add(1, Ordering::Relaxed)),
        };
        let index = self.reply.tool_calls.len();
        self.reply.tool_calls.push(ToolCall {
            id: id.clone(),
            name: name.to_string(),
            arguments: String::new(),
        });
        self.events.push(StreamEvent::ToolCallStart {
            index,
            id,
            name: name.to_string(),
        });
        index
    }

    pub(crate) fn call_id(&self, index: usize) -> Option<&str> {
        self.reply.tool_calls.get(index).map(|c| c.id.as_str())
    }

    /// Fills in a name that arrived after the call's first fragment.
    pub(crate) fn late_name(&mut self, index: usize, name: &str) {
        if let Some(call) = self.reply.tool_calls.get_mut(index)
            && call.name.is_empty()
        {
            call.name = name.to_string();
        }
    }

    pub(crate) fn args(&mut self, index: usize, fragment: &str) {
        if fragment.is_empty() || self.done_calls.contains(&index) {
            return;
        }
        if let Some(call) = self.reply.tool_calls.get_mut(index) {
            call.arguments.push_str(fragment);
            self.events.push(StreamEvent::ToolCallArgs {
                index,
                fragment: fragment.to_string(),
            });
        }
    }

    pub(crate) fn call_has_args(&self, index: usize) -> bool {
        self.reply
            .tool_calls
            .get(index)
            .is_some_and(|c| !c.arguments.is_empty())
    }

    pub(crate) fn done_call(&mut self, index: usize) {
        if index >= self.reply.tool_calls.len() || !self.done_calls.insert(index) {
            return;
        }
        let call = &mut self.reply.tool_calls[index];
        if call.arguments.trim().is_empty() {
            call.arguments = "{}".to_string();
        }
        self.events.push(StreamEvent::ToolCallDone { index });
    }

    fn close_calls(&mut self) {
        for i in 0..self.reply.tool_calls.len() {
            self.done_call(i);
        }
    }

    /// Counts the server reported.
    pub(crate) fn usage(&mut self, usage: Usage) {
        let usage = Usage {
            reported: true,
            ..usage
        };
        self.reply.usage = usage;
        self.events.push(StreamEvent::Usage(usage));
    }

    /// The usage with estimates where the server said nothing: both counts
    /// when it reported none, the prompt when it reported output only.
    fn estimated_usage(&self) -> Option<Usage> {
        let u = self.reply.usage;
        if u.estimated {
            return None;
        }
        if !u.reported {
            let r = &self.reply;
            return Some(Usage {
                prompt_tokens: self.prompt_estimate,
                completion_tokens: reply_tokens(&r.text, &r.reasoning, &r.tool_calls),
                estimated: true,
                ..Usage::default()
            });
        }
        (u.prompt_tokens == 0 && self.prompt_estimate > 0).then_some(Usage {
            prompt_tokens: self.prompt_estimate,
            estimated: true,
            ..u
        })
    }

    /// Reads the text's tool calls into the reply, when that is asked for
    /// and the reply has no native ones.
    fn text_calls(&mut self) {
        if self.text_call_tools.is_empty() || !self.reply.tool_calls.is_empty() {
            return;
        }
        let names: Vec<&str> = self.text_call_tools.iter().map(String::as_str).collect();
        let Some(parsed) = text_calls::parse(&self.reply.text, &names) else {
            return;
        };
        let raw = std::mem::replace(&mut self.reply.text, parsed.text);
        self.reply.raw_text = Some(raw);
        self.events.push(StreamEvent::TextToolCalls {
            count: parsed.calls.len(),
        });
        for call in parsed.calls {
            let index = self.start_call(None, &call.name);
            self.args(index, &call.arguments);
            self.done_call(index);
        }
    }

    /// The reply's end; only the first one counts. Open tool calls are done.
    pub(crate) fn finish(&mut self, reason: FinishReason) {
        if self.finished {
            return;
        }
        self.text_calls();
        self.close_calls();
        let reason = if reason == FinishReason::Stop && !self.reply.tool_calls.is_empty() {
            FinishReason::ToolCalls
        } else {
            reason
        };
        self.finished = true;
        self.reply.finish = reason.clone();
        self.events.push(StreamEvent::Finish(reason));
    }

    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    pub(crate) fn model(&mut self, model: &str) {
        if !model.is_empty() && self.reply.model != model {
            self.reply.model = model.to_string();
        }
    }

    pub(crate) fn timings(&mut self) -> &mut Timings {
        &mut self.reply.timings
    }

    /// Keeps the fields nib does not read (last value wins).
    pub(crate) fn extra(&mut self, extra: Map<String, Value>) {
        for (k, v) in extra {
            self.reply.extra.insert(k, v);
        }
    }

    pub(crate) fn take_events(&mut self) -> std::vec::Drain<'_, StreamEvent> {
        self.events.drain(..)
    }

    /// The reply so far, as a cut stream leaves it (usage estimated if
    /// the server had not reported it yet and something had arrived).
    pub(crate) fn partial(&self) -> Reply {
        let mut reply = self.reply.clone();
        if self.started
            && let Some(u) = self.estimated_usage()
        {
            reply.usage = u;
        }
        reply
    }

    /// Ends the reply: a stream that ended properly without saying why it
    /// stopped is `Stop` (or `ToolCalls`); counts the server did not
    /// report are estimated (and sent as one more `Usage` event).
    pub(crate) fn end(&mut self) {
        if !self.finished {
            self.finish(FinishReason::Stop);
        }
        if let Some(u) = self.estimated_usage() {
            self.reply.usage = u;
            self.events.push(StreamEvent::Usage(u));
        }
    }

    /// The finished reply (see [`Accum::end`], which should come first so
    /// its events are delivered).
    pub(crate) fn into_reply(mut self) -> Reply {
        self.end();
        self.reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]]) -> Vec<String> {
        let mut splitter = LineSplitter::default();
        let mut out = Vec::new();
        for c in chunks {
            splitter
                .push(
                    c,
                    |l| {
                        out.push(l.to_string());
                        Ok::<(), ()>(())
                    },
                    || (),
                    || (),
                )
                .unwrap();
        }
        if let Some(rest) = splitter.take_rest() {
            out.push(format!("rest:{}", String::from_utf8_lossy(&rest)));
        }
        out
    }

    #[test]
    fn lines_across_chunks_and_crlf() {
        let e = "é".as_bytes();
        assert_eq!(
            lines(&[b"a\r", b"\nb", &e[..1], &e[1..], b"\n\nc"]),
            vec!["a", "bé", "", "rest:c"]
        );
    }

    #[test]
    fn sse_events() {
        let mut sse = Sse::default();
        let mut got = Vec::new();
        for l in [
            ": comment",
            "event: x",
            "data: one",
            "data:two",
            "id: 7",
            "",
            "",
            "data: z",
        ] {
            got.extend(sse.line(l));
        }
        got.extend(sse.dispatch());
        assert_eq!(
            got,
            vec![
                ("x".to_string(), "one\ntwo".to_string()),
                (String::new(), "z".to_string())
            ]
        );
    }
}
