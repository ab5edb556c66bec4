//! One attempt's response: the request sent, the status judged (retry,
//! give up, or read on), then the body read under the first-byte, idle
//! and total limits, streamed through the provider's decoder or taken
//! whole and decoded as the stream that would have carried it.

use std::cell::Cell;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::time::timeout;

use super::{Call, Client, Failure, chain};
use crate::model::anthropic::{self, AnthropicDecoder};
use crate::model::error::show_duration;
use crate::model::ollama::{self, OllamaDecoder};
use crate::model::openai::{self, OpenAiDecoder};
use crate::model::stream::{Accum, DecodeError, Decoder, LineSplitter, error_message};
use crate::model::{ModelError, Provider, Reply, StreamEvent};

/// How much of an HTTP error body is read.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// How long to wait for the rest of a body after the reply is complete.
const DRAIN: Duration = Duration::from_millis(50);

impl Client {
    pub(super) async fn attempt(
        &self,
        call: &Call<'_>,
        body: &[u8],
        stream: bool,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<Reply, Failure> {
        let t0 = Instant::now();
        // An unstreamed reply arrives only once it is whole, so its first
        // byte may take as long as the whole call may.
        let first_byte = if stream {
            self.cfg.first_byte_timeout
        } else {
            self.cfg.first_byte_timeout.max(self.cfg.total_timeout)
        };
        let idle = self.cfg.idle_timeout;
        let with_tools = !call.req.tools.is_empty();
        let mut rb = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        match (self.cfg.provider, &self.cfg.api_key) {
            (Provider::Anthropic, key) => {
                rb = rb.header("anthropic-version", anthropic::VERSION);
                if let Some(key) = key {
                    rb = rb.header("x-api-key", key);
                }
            }
            (_, Some(key)) => rb = rb.bearer_auth(key),
            (_, None) => {}
        }
        let (limit, phase, after) = self.cap(call, first_byte, "first byte", first_byte);
        let Some(sent) = self.or_cancel(timeout(limit, rb.send())).await else {
            return Err(Failure::Fatal(self.interrupted(call, &self.accum(call))));
        };
        let mut resp = match sent {
            Err(_) => return Err(Failure::Fatal(ModelError::Timeout { phase, after })),
            Ok(Err(e)) => return Err(self.send_failure(&e)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            let wait = retry_after(&resp);
            let text = error_text(&read_error_body(resp, idle).await);
            if stream && with_tools && status != 429 && text.to_ascii_lowercase().contains("stream")
            {
                return Err(Failure::NoStream(format!(
                    "the server answered a streaming request with tools with HTTP {status}: {text}"
                )));
            }
            let err = ModelError::Http {
                status,
                body: text,
                attempts: 1,
                retry_after: wait,
                note: None,
            };
            return Err(if status == 429 || status >= 500 {
                Failure::Retry(err, wait)
            } else {
                Failure::Fatal(err)
            });
        }

        let mut decoder: Box<dyn Decoder> = match self.cfg.provider {
            Provider::Ollama => Box::new(OllamaDecoder::default()),
            Provider::OpenAi => Box::new(OpenAiDecoder::default()),
            Provider::Anthropic => Box::new(AnthropicDecoder::default()),
        };
        let mut acc = self.accum(call);
        if !stream {
            acc.not_streamed();
            return self
                .whole(call, resp, t0, decoder.as_mut(), acc, on_event)
                .await;
        }
        let dropped = || {
            Failure::NoStream(
                "the server answered a streaming request with tools with HTTP 200, then closed \
                 the connection without sending anything"
                    .into(),
            )
        };
        let mut lines = LineSplitter::default();
        let mut started = false;
        // Bounds a server that never stops: bytes in all, time without
        // progress, and the call's end, checked after every chunk (a
        // stream whose chunks are always ready never lets a wait time out).
        let progressed = Cell::new(false);
        let mut watched = |ev: &StreamEvent| {
            if is_progress(ev) {
                progressed.set(true);
            }
            on_event(ev);
        };
        let on_event: &mut dyn FnMut(&StreamEvent) = &mut watched;
        let mut bound = Bound::new(self.cfg.max_reply_bytes, self.cfg.stall_timeout);
        loop {
            let (limit, phase, after) = if started {
                let (limit, phase, after) = self.cap(call, idle, "between chunks", idle);
                (limit.min(bound.stall_left()), phase, after)
            } else {
                self.cap(
                    call,
                    first_byte.saturating_sub(t0.elapsed()),
                    "first byte",
                    first_byte,
                )
            };
            let Some(next) = self.or_cancel(timeout(limit, resp.chunk())).await else {
                return Err(Failure::Fatal(self.interrupted(call, &acc)));
            };
            let chunk = match next {
                Err(_) if started && bound.stalled() => {
                    return Err(Failure::Fatal(bound.stall_error(&acc)));
                }
                // The run's end came in the middle of the reply: that is
                // the cause, and no retry can help.
                Err(_) if started && phase == "deadline" => {
                    return Err(Failure::Fatal(ModelError::Timeout { phase, after }));
                }
                // The call's own end came in the middle of the reply.
                Err(_) if started && phase != "between chunks" => {
                    return Err(Failure::Fatal(cut(
                        &acc,
                        ModelError::Timeout { phase, after }.to_string(),
                    )));
                }
                Err(_) => return Err(Failure::Fatal(ModelError::Timeout { phase, after })),
                Ok(Err(_)) if !started && with_tools => return Err(dropped()),
                Ok(Err(e)) if !started => {
                    return Err(Failure::Retry(
                        self.connect_error(format!(
                            "the connection broke before the reply started ({})",
                            chain(&e)
                        )),
                        None,
                    ));
                }
                Ok(Err(e)) => {
                    if decoder.complete() || acc.finished() {
                        break;
                    }
                    return Err(Failure::Fatal(cut(
                        &acc,
                        format!("the connection broke in the middle ({})", chain(&e)),
                    )));
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(bytes))) => bytes,
            };
            if let Some(err) = bound.over(chunk.len(), &acc) {
                return Err(Failure::Fatal(err));
            }
            if chunk.is_empty() {
                continue;
            }
            started = true;
            lines
                .push(
                    &chunk,
                    |line| {
                        acc.raw(line);
                        let result = decoder.line(line, &mut acc);
                        deliver(&mut acc, on_event);
                        result
                    },
                    || DecodeError::Protocol("a line that is not UTF-8".into()),
                    || DecodeError::Protocol("a line longer than 32 MiB".into()),
                )
                .map_err(|e| decode_failure(e, &acc))?;
            if progressed.replace(false) {
                bound.progress();
            }
            if decoder.complete() {
                // Read the end of the body, briefly, so the connection can be reused.
                let drain = async { while let Ok(Some(_)) = resp.chunk().await {} };
                let _ = timeout(DRAIN, drain).await;
                return Ok(end(acc, on_event));
            }
            if Instant::now() >= call.end {
                return Err(Failure::Fatal(self.past_end(call, &acc)));
            }
            if bound.stalled() {
                return Err(Failure::Fatal(bound.stall_error(&acc)));
            }
        }

        // The body ended (or broke after the reply was complete).
        if !started {
            if with_tools {
                return Err(dropped());
            }
            return Err(Failure::Retry(
                self.connect_error(
                    "the server closed the connection without sending a reply".into(),
                ),
                None,
            ));
        }
        // A last line without its line ending, or an SSE event without its
        // blank line, counts if it is whole; one that does not parse is
        // where the stream was cut.
        let mut result = Ok(());
        if let Some(rest) = lines.take_rest() {
            result = match std::str::from_utf8(&rest) {
                Ok(line) => {
                    acc.raw(line);
                    decoder.line(line, &mut acc)
                }
                Err(_) => Err(DecodeError::Protocol("a line that is not UTF-8".into())),
            };
        }
        if result.is_ok() {
            result = decoder.eof(&mut acc);
        }
        deliver(&mut acc, on_event);
        let whole = decoder.complete() || acc.finished();
        match result {
            Err(e @ DecodeError::Remote(_)) => Err(decode_failure(e, &acc)),
            _ if whole => Ok(end(acc, on_event)),
            Err(DecodeError::Protocol(_)) => Err(Failure::Fatal(cut(
                &acc,
                "the stream ended in the middle of an event".into(),
            ))),
            Ok(()) => Err(Failure::Fatal(cut(
                &acc,
                "the connection closed before the reply ended".into(),
            ))),
        }
    }

    /// A reply that is not streamed: the whole body, read with the same
    /// limits, then decoded as the stream that would have carried it.
    async fn whole(
        &self,
        call: &Call<'_>,
        mut resp: reqwest::Response,
        t0: Instant,
        decoder: &mut dyn Decoder,
        mut acc: Accum,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<Reply, Failure> {
        let first_byte = self.cfg.first_byte_timeout.max(self.cfg.total_timeout);
        let idle = self.cfg.idle_timeout;
        let mut body = Vec::new();
        loop {
            let (limit, phase, after) = if body.is_empty() {
                self.cap(
                    call,
                    first_byte.saturating_sub(t0.elapsed()),
                    "first byte",
                    first_byte,
                )
            } else {
                self.cap(call, idle, "between chunks", idle)
            };
            let Some(next) = self.or_cancel(timeout(limit, resp.chunk())).await else {
                return Err(Failure::Fatal(self.interrupted(call, &acc)));
            };
            match next {
                Err(_) => return Err(Failure::Fatal(ModelError::Timeout { phase, after })),
                Ok(Err(e)) if body.is_empty() => {
                    return Err(Failure::Retry(
                        self.connect_error(format!(
                            "the connection broke before the reply started ({})",
                            chain(&e)
                        )),
                        None,
                    ));
                }
                Ok(Err(e)) => {
                    return Err(Failure::Fatal(cut(
                        &acc,
                        format!("the connection broke in the middle ({})", chain(&e)),
                    )));
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(bytes))) => body.extend_from_slice(&bytes),
            }
            if body.len() as u64 > self.cfg.max_reply_bytes {
                return Err(Failure::Fatal(too_long(self.cfg.max_reply_bytes, &acc)));
            }
            if Instant::now() >= call.end {
                return Err(Failure::Fatal(self.past_end(call, &acc)));
            }
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(Failure::Retry(
                self.connect_error(
                    "the server closed the connection without sending a reply".into(),
                ),
                None,
            ));
        }
        let Ok(text) = std::str::from_utf8(&body) else {
            return Err(Failure::Fatal(ModelError::Protocol(
                "a reply that is not UTF-8".into(),
            )));
        };
        let (lines, raw_lines): (Vec<String>, bool) = match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => {
                acc.raw(text.trim());
                let lines = match self.cfg.provider {
                    Provider::Ollama => ollama::whole_lines(v),
                    Provider::OpenAi => openai::whole_lines(v),
                    Provider::Anthropic => anthropic::whole_lines(v),
                };
                (lines, false)
            }
            // A server that streamed anyway: its lines as they are.
            _ => (text.lines().map(String::from).collect(), true),
        };
        for line in &lines {
            if raw_lines {
                acc.raw(line);
            }
            let result = decoder.line(line, &mut acc);
            deliver(&mut acc, on_event);
            result.map_err(|e| decode_failure(e, &acc))?;
        }
        decoder.eof(&mut acc).map_err(|e| decode_failure(e, &acc))?;
        if !(decoder.complete() || acc.finished()) {
            return Err(Failure::Fatal(ModelError::Protocol(format!(
                "a whole reply without the protocol's end: {}",
                text.chars().take(200).collect::<String>()
            ))));
        }
        Ok(end(acc, on_event))
    }
}

impl Client {
    /// The call's end (the run's deadline, or `total_timeout`) passed while
    /// chunks kept coming.
    fn past_end(&self, call: &Call<'_>, acc: &Accum) -> ModelError {
        let phase = call.end_phase;
        let after = call.end - call.start;
        if phase == "deadline" {
            return ModelError::Timeout { phase, after };
        }
        cut(acc, ModelError::Timeout { phase, after }.to_string())
    }
}

/// The limits on one streamed reply that a steady stream of bytes does
/// not reset: its size, and the time since it last made progress.
struct Bound {
    max_bytes: u64,
    bytes: u64,
    stall: Duration,
    last_progress: Instant,
}

impl Bound {
    fn new(max_bytes: u64, stall: Duration) -> Bound {
        Bound {
            max_bytes,
            bytes: 0,
            stall,
            last_progress: Instant::now(),
        }
    }

    /// Counts a chunk; the error when the reply passed its size.
    fn over(&mut self, len: usize, acc: &Accum) -> Option<ModelError> {
        self.bytes = self.bytes.saturating_add(len as u64);
        (self.bytes > self.max_bytes).then(|| too_long(self.max_bytes, acc))
    }

    fn progress(&mut self) {
        self.last_progress = Instant::now();
    }

    fn stall_left(&self) -> Duration {
        self.stall.saturating_sub(self.last_progress.elapsed())
    }

    fn stalled(&self) -> bool {
        self.last_progress.elapsed() >= self.stall
    }

    fn stall_error(&self, acc: &Accum) -> ModelError {
        ModelError::Runaway {
            detail: format!(
                "it went on for {} without any text, reasoning or tool call (only keep-alives \
                 or empty chunks); raise stall_timeout (seconds) in the config if the model is \
                 just slow to start",
                show_duration(self.stall)
            ),
            partial: Box::new(acc.partial()),
        }
    }
}

fn too_long(max: u64, acc: &Accum) -> ModelError {
    ModelError::Runaway {
        detail: format!(
            "it passed {} MiB, the most nib reads of one reply (a server streaming without \
             end?); raise max_reply_mib in the config if replies are meant to be this long",
            max >> 20
        ),
        partial: Box::new(acc.partial()),
    }
}

/// An event that shows a reply moving on (not a raw line or a usage count).
fn is_progress(ev: &StreamEvent) -> bool {
    match ev {
        StreamEvent::TextDelta(s) | StreamEvent::ReasoningDelta(s) => !s.is_empty(),
        StreamEvent::ToolCallArgs { fragment, .. } => !fragment.is_empty(),
        StreamEvent::ToolCallStart { .. }
        | StreamEvent::ToolCallDone { .. }
        | StreamEvent::Finish(_)
        | StreamEvent::TextToolCalls { .. } => true,
        StreamEvent::Usage(_)
        | StreamEvent::StreamFallback { .. }
        | StreamEvent::Retry { .. }
        | StreamEvent::Raw(_) => false,
    }
}

fn deliver(acc: &mut Accum, on_event: &mut dyn FnMut(&StreamEvent)) {
    for ev in acc.take_events() {
        on_event(&ev);
    }
}

pub(super) fn cut(acc: &Accum, detail: String) -> ModelError {
    ModelError::StreamCut {
        partial: Box::new(acc.partial()),
        detail,
    }
}

/// The reply ended: estimates and text calls filled in, the last events
/// delivered.
fn end(mut acc: Accum, on_event: &mut dyn FnMut(&StreamEvent)) -> Reply {
    acc.end();
    deliver(&mut acc, on_event);
    acc.into_reply()
}

fn decode_failure(e: DecodeError, acc: &Accum) -> Failure {
    Failure::Fatal(match e {
        DecodeError::Remote(message) => ModelError::Remote {
            message,
            partial: Box::new(acc.partial()),
        },
        DecodeError::Protocol(m) => ModelError::Protocol(m),
    })
}

fn retry_after(resp: &reqwest::Response) -> Option<Duration> {
    let value = resp.headers().get(reqwest::header::RETRY_AFTER)?;
    let secs: f64 = value.to_str().ok()?.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
}

async fn read_error_body(mut resp: reqwest::Response, idle: Duration) -> Vec<u8> {
    let mut out = Vec::new();
    while out.len() < ERROR_BODY_LIMIT {
        match timeout(idle, resp.chunk()).await {
            Ok(Ok(Some(bytes))) => out.extend_from_slice(&bytes),
            _ => break,
        }
    }
    out
}

/// The message of a JSON error body, else the start of the body.
fn error_text(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_str::<Value>(&text)
        && let Some(err) = v.get("error")
    {
        return error_message(err);
    }
    let text = text.trim();
    let mut shown: String = text.chars().take(500).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}
