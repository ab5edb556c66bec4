//! The model client: one stream of events over three wire protocols, and a
//! scripted model that serves those protocols for tests and the demo.
//!
//! # Use
//!
//! ```no_run
//! use nib::model::{Client, Message, ModelConfig, Provider, Request, StreamEvent};
//!
//! let client = Client::new(ModelConfig::new(Provider::Ollama, "qwen3-coder:30b"))?;
//! let req = Request {
//!     system: "You are a coding agent.".into(),
//!     max_tokens: None, // or Some(n): this call's own output limit
//!     messages: vec![Message::User("List the files.".into())],
//!     tools: vec![], // each {"name", "description", "parameters"} from prim::schema::tool_schema
//! };
//! let reply = client.reply(&req, &mut |ev| {
//!     if let StreamEvent::TextDelta(t) = ev {
//!         print!("{t}");
//!     }
//! })?;
//! println!("\n{:?} {} tool calls", reply.finish, reply.tool_calls.len());
//! # Ok::<(), nib::model::ModelError>(())
//! ```
//!
//! [`Client::reply`] blocks (it owns a small tokio runtime) so the Scheme
//! engine's plain thread can call it; it may also be called from inside a
//! tokio runtime, and from several threads at once.
//!
//! # Protocols
//!
//! | provider | endpoint (from `base_url`) | stream |
//! | --- | --- | --- |
//! | `ollama` | `/api/chat` | NDJSON; tool calls arrive whole; `options.num_ctx` sent from config |
//! | `openai` | `/v1/chat/completions` (or `/chat/completions` when `base_url` ends in `/v1`) | SSE; tool-call fragments by index; `stream_options.include_usage` |
//! | `anthropic` | `/v1/messages` (or `/messages` after `/v1`) | SSE; `tool_use` blocks, `input_json_delta`; `cache_control` on tools, system and the last message |
//!
//! `openai` serves every OpenAI-compatible server: llama.cpp, vLLM, LM
//! Studio, Ollama's `/v1`, OpenRouter, OpenAI. Reasoning text is read from
//! `reasoning_content` or `reasoning`, whichever the server uses.
//!
//! # Events and the reply
//!
//! For every line the server sends, [`StreamEvent::Raw`] comes first, then
//! what the line meant. Tool calls are numbered 0, 1, … in the order they
//! start (whatever indices the server uses); a call is `Start`, then `Args`
//! fragments, then `Done`. Arguments are kept as the raw JSON text the model
//! sent: parsing and validating them is the caller's job, once the call is
//! done (empty arguments become `{}`). [`Usage`] events carry the whole
//! usage known so far, so the last one is the total.
//!
//! A reply cut by the token limit is `Ok` with [`FinishReason::Length`]; its
//! last tool call may be incomplete. A `Stop` reply that has tool calls is
//! reported as [`FinishReason::ToolCalls`] (Ollama always says `stop`).
//!
//! # Failures
//!
//! See [`ModelError`]; each message says what to do. Timeouts apply to
//! connecting, to the first byte of the reply, and *between* chunks; the
//! whole call (retries and the reply's stream included) is bounded by
//! `total_timeout` and by the run's deadline ([`Client::set_deadline`]).
//! HTTP 429 and 5xx answers, and connection failures before the first byte
//! of the reply, are retried `retries` times with exponential backoff
//! starting at `backoff`, or after the server's `Retry-After`: a wait of
//! more than a minute, or one that would end past the deadline, is not
//! waited, the call fails at once saying so. Waits stop for the cancel
//! flag ([`Client::set_cancel`]). Nothing is retried once the reply has
//! started: a stream that breaks off is [`ModelError::StreamCut`] with the
//! partial reply, never a hang.
//!
//! # Local servers
//!
//! - A server that answers a streaming request carrying tools with nothing
//!   (HTTP 200, then the connection closes; llama-cpp-python) or with an
//!   error naming streaming is asked again unstreamed, at once; the client
//!   remembers it for its life ([`Client::streams_tool_calls`]), sends
//!   [`StreamEvent::StreamFallback`] and sets [`Reply::stream_fallback`].
//!   [`StreamMode::Off`] never streams. An unstreamed reply is decoded as
//!   the stream that would have carried it, so it gives the same events
//!   (all at the end; one `Raw` with the whole body) and the same `Reply`.
//! - Usage the server did not report is estimated ([`estimate`]);
//!   [`Usage::reported`] and [`Usage::estimated`] say which.
//! - Tool calls written in the text are read into `tool_calls` when the
//!   reply has none ([`text_calls`], [`ModelConfig::text_tool_calls`]);
//!   [`Reply::raw_text`] keeps the text as written.
//! - [`ToolCall::arguments`] is always the raw text the model sent, valid
//!   JSON or not, for the log to keep beside any error.
//!
//! # Concurrency
//!
//! [`set_endpoint_concurrency`] caps the requests in flight to each
//! endpoint URL across the whole process (off by default): callers beyond
//! the cap wait their turn, first come first served (`limit.rs`). Runs with
//! several workers on one server (`nib swebench --workers`) set it.
//!
//! # Scripted model
//!
//! [`scripted::ScriptedServer`] serves scripted replies in all three
//! protocols over real HTTP on 127.0.0.1, so tests, the demo and scenarios
//! run the real client code. The script format is documented there.

mod anthropic;
mod client;
mod error;
pub mod estimate;
mod limit;
mod ollama;
mod openai;
pub mod scripted;
mod stream;
pub mod text_calls;

pub use client::Client;
pub use error::ModelError;
pub use estimate::show_tokens;
pub use limit::{endpoint_concurrency, set_endpoint_concurrency};

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Which wire protocol to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// Ollama's native `/api/chat`.
    Ollama,
    /// OpenAI-compatible `/v1/chat/completions`.
    OpenAi,
    /// Anthropic Messages `/v1/messages`.
    Anthropic,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::Ollama, Provider::OpenAi, Provider::Anthropic];

    /// The name used on the command line and in config: `ollama`, `openai`,
    /// `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Ollama => "ollama",
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    /// Where the provider's server usually is.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::Ollama => "http://localhost:11434",
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The URL a chat request goes to. `base_url` may be the server's root
    /// (`http://localhost:8080`), end in a version (`…/v1`, `…/api` for
    /// Ollama), or already be the whole endpoint.
    pub fn endpoint(self, base_url: &str) -> String {
        let base = base_url.trim_end_matches('/');
        let last = base.rsplit('/').next().unwrap_or("");
        let versioned = last.len() > 1
            && last.starts_with('v')
            && last[1..].bytes().all(|b| b.is_ascii_digit());
        match self {
            Provider::Ollama if base.ends_with("/api/chat") => base.to_string(),
            Provider::Ollama if base.ends_with("/api") => format!("{base}/chat"),
            Provider::Ollama => format!("{base}/api/chat"),
            Provider::OpenAi if base.ends_with("/chat/completions") => base.to_string(),
            Provider::OpenAi if versioned => format!("{base}/chat/completions"),
            Provider::OpenAi => format!("{base}/v1/chat/completions"),
            Provider::Anthropic if base.ends_with("/messages") => base.to_string(),
            Provider::Anthropic if versioned => format!("{base}/messages"),
            Provider::Anthropic => format!("{base}/v1/messages"),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Provider, ModelError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ollama" => Ok(Provider::Ollama),
            "openai" => Ok(Provider::OpenAi),
            "anthropic" => Ok(Provider::Anthropic),
            _ => Err(ModelError::Config(format!(
                "unknown provider {s:?}: use ollama, openai (any OpenAI-compatible server: \
                 llama.cpp, vLLM, LM Studio, OpenRouter) or anthropic"
            ))),
        }
    }
}

/// [`ModelConfig::first_byte_timeout`] unless set: 3 min.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(180);
/// [`ModelConfig::total_timeout`] unless set: 30 min.
pub const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(1800);
/// [`ModelConfig::max_reply_bytes`] unless set: 32 MiB.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 32 << 20;
/// [`ModelConfig::stall_timeout`] unless set: 5 min.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(300);

/// How to reach a model and how patiently.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    pub provider: Provider,
    pub model: String,
    /// See [`Provider::endpoint`] for what may be given.
    pub base_url: String,
    /// Sent as `Authorization: Bearer` (Ollama, OpenAI) or `x-api-key`
    /// (Anthropic). Local servers need none.
    pub api_key: Option<String>,
    /// Ollama only: `options.num_ctx`. Ollama's default context is small and
    /// it silently drops what does not fit, so set this.
    pub num_ctx: Option<u32>,
    /// The most tokens the reply may have (`max_tokens`, `num_predict`).
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    pub connect_timeout: Duration,
    /// From sending the request to the first byte of the reply's body
    /// (prompt processing and model loading happen here). An unstreamed
    /// reply, which comes only once it is whole, gets `total_timeout`.
    pub first_byte_timeout: Duration,
    /// The longest silence allowed between two chunks of a reply.
    pub idle_timeout: Duration,
    /// How many times a failed attempt is retried (0: one attempt only).
    pub retries: u32,
    /// The first wait before retrying; each later wait doubles, up to 30 s.
    pub backoff: Duration,
    /// The most one call may take in all: waiting, retries, backoff and the
    /// reply's stream. A reply still streaming then is cut (`StreamCut`).
    pub total_timeout: Duration,
    /// Whether replies are streamed; see [`StreamMode`].
    pub stream: StreamMode,
    /// Read tool calls the model wrote as text (`<tool_call>{…}</tool_call>`,
    /// a fenced JSON object) when the reply has no native ones; see
    /// [`text_calls`]. Default on for `ollama` and `openai`, off for
    /// `anthropic` (whose models always call tools natively).
    pub text_tool_calls: bool,
    /// The most bytes one reply's body may have: a server that streams
    /// without end is stopped there, not when memory runs out.
    pub max_reply_bytes: u64,
    /// The longest a reply may go on arriving without progress (no text,
    /// reasoning, tool call or finish: only keep-alives or empty chunks).
    pub stall_timeout: Duration,
}

/// Whether the client asks for a streamed reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamMode {
    /// Stream; when a server answers a streaming request that carries
    /// tools with nothing (llama-cpp-python's "200 then drop"), or with an
    /// error that names streaming, ask again without streaming, and keep
    /// doing so for the rest of the client's life (see
    /// [`Client::streams_tool_calls`]).
    #[default]
    Auto,
    /// Never stream: one whole JSON reply per request (`stream = false` in
    /// config, `--no-stream`). Events still arrive, all at the end.
    Off,
}

impl StreamMode {
    /// `auto` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamMode::Auto => "auto",
            StreamMode::Off => "off",
        }
    }
}

impl FromStr for StreamMode {
    type Err = ModelError;

    /// `auto`/`true`/`on` or `off`/`false`.
    fn from_str(s: &str) -> Result<StreamMode, ModelError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "true" | "on" | "yes" => Ok(StreamMode::Auto),
            "off" | "false" | "no" => Ok(StreamMode::Off),
            _ => Err(ModelError::Config(format!(
                "stream must be auto (stream, falling back when the server cannot) or off, \
                 not {s:?}"
            ))),
        }
    }
}

impl ModelConfig {
    /// A config with the provider's usual base URL and defaults meant for
    /// agent work: 32k context for Ollama, 8192 reply tokens, 10 s to
    /// connect, 3 min to the first byte, 2 min between chunks, 30 min for
    /// the whole call, 3 retries starting at 1 s, streaming on (with the
    /// fallback), tool calls read from text for Ollama and OpenAI-compatible
    /// servers.
    ///
    /// 3 min to the first byte covers loading a model and reading a long
    /// prompt on most machines; a server that answers nothing at all then
    /// costs a run minutes, not the 20 a 10-minute limit (twice, as the
    /// strategy retries a timeout once) did.
    pub fn new(provider: Provider, model: impl Into<String>) -> ModelConfig {
        ModelConfig {
            provider,
            model: model.into(),
            base_url: provider.default_base_url().to_string(),
            api_key: None,
            num_ctx: (provider == Provider::Ollama).then_some(32768),
            max_tokens: 8192,
            temperature: None,
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: DEFAULT_FIRST_BYTE_TIMEOUT,
            idle_timeout: Duration::from_secs(120),
            retries: 3,
            backoff: Duration::from_secs(1),
            total_timeout: DEFAULT_TOTAL_TIMEOUT,
            stream: StreamMode::Auto,
            text_tool_calls: provider != Provider::Anthropic,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
        }
    }
}

/// One model call: the system prompt, the conversation, the tools.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Request {
    pub system: String,
    pub messages: Vec<Message>,
    /// Each `{"name", "description", "parameters"}`, as
    /// `prim::schema::tool_schema` makes them; wrapped per protocol. Keep
    /// the list identical across a session's requests (prompt caches).
    pub tools: Vec<serde_json::Value>,
    /// This call's output token limit, instead of the config's
    /// `max_tokens` (a strategy's short summary call).
    pub max_tokens: Option<u32>,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    /// The outcome of one tool call. Only Anthropic has an error flag; for
    /// the others, say in `content` that the call failed.
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The server's id, or `call_N` made up when it gave none.
    pub id: String,
    pub name: String,
    /// The raw JSON text the model sent (Ollama's object, serialized).
    /// Sending it back to Ollama or Anthropic, which want an object, text
    /// that is not a JSON object goes as `{}`.
    pub arguments: String,
}

/// What a reply stream says, as it says it.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ReasoningDelta(String),
    /// `index` counts tool calls in this reply from 0.
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallArgs {
        index: usize,
        fragment: String,
    },
    /// The call's arguments are complete.
    ToolCallDone {
        index: usize,
    },
    /// The usage known so far (cumulative, not a delta). When the server
    /// reported none, one last `Usage` with `estimated` set comes after
    /// `Finish`.
    Usage(Usage),
    Finish(FinishReason),
    /// The server could not stream this request (it has tools), so it is
    /// asked again without streaming, now and for the rest of the client's
    /// life. `reason` says what the server did, for the log. Events of the
    /// reply follow, all at once.
    StreamFallback {
        reason: String,
    },
    /// The reply had no native tool calls but its text held `count` of
    /// them (see [`text_calls`]); their `ToolCallStart`/`Args`/`Done`
    /// events follow, before `Finish`. The text was already sent as
    /// `TextDelta`s; [`Reply::raw_text`] keeps it.
    TextToolCalls {
        count: usize,
    },
    /// An attempt failed before the reply began and the call is tried
    /// again after `wait`: `retry` of `retries`, `error` why.
    Retry {
        retry: u32,
        retries: u32,
        wait: Duration,
        error: String,
    },
    /// One line exactly as the server sent it (without its line ending);
    /// blank lines are left out.
    Raw(String),
}

/// Token counts of one reply.
///
/// `reported`: the server sent counts. When it sent none (llama.cpp's
/// OpenAI-compatible servers in streaming mode, proxies that drop
/// `stream_options`), the client fills `prompt_tokens` and
/// `completion_tokens` from [`estimate`] and sets `estimated`; so does a
/// server that reports output tokens but no prompt tokens (Ollama, when
/// the whole prompt was cached). Budgets should count estimates as tokens;
/// shown to people they read `~1.2k` ([`show_tokens`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Every prompt token, cached or not (for Anthropic: input plus cache
    /// reads plus cache writes).
    pub prompt_tokens: u64,
    /// Of `prompt_tokens`, those read from the server's prompt cache.
    pub cached_tokens: u64,
    /// Of `prompt_tokens`, those written to the prompt cache (Anthropic).
    pub cache_write_tokens: u64,
    pub completion_tokens: u64,
    /// The server sent these counts (some of them, at least).
    pub reported: bool,
    /// Some count is nib's estimate from the text, not the server's.
    pub estimated: bool,
}

impl Usage {
    /// Prompt plus completion tokens.
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// The counts as an event log records them: `{"prompt", "cached",
    /// "cache_write", "completion", "reported", "estimated"}`.
    pub fn log_json(&self) -> serde_json::Value {
        serde_json::json!({
            "prompt": self.prompt_tokens,
            "cached": self.cached_tokens,
            "cache_write": self.cache_write_tokens,
            "completion": self.completion_tokens,
            "reported": self.reported,
            "estimated": self.estimated,
        })
    }

    /// The total for a status line: `1.2k`, or `~1.2k` when estimated.
    pub fn show_total(&self) -> String {
        show_tokens(self.total(), self.estimated)
    }
}

/// Why the reply ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    /// The token limit (`max_tokens`, `num_predict` or the context) cut the
    /// reply: its text or last tool call may be incomplete.
    Length,
    ContentFilter,
    Other(String),
}

impl FinishReason {
    /// `stop`, `tool_calls`, `length`, `content_filter` or the other reason.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(s) => s,
        }
    }

    /// The inverse of [`FinishReason::as_str`].
    pub fn parse(s: &str) -> FinishReason {
        match s {
            "stop" => FinishReason::Stop,
            "tool_calls" => FinishReason::ToolCalls,
            "length" => FinishReason::Length,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }
}

/// Time the server says it spent (Ollama's durations, llama.cpp's
/// `timings`), when it says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    pub load: Option<Duration>,
    pub prompt: Option<Duration>,
    pub generation: Option<Duration>,
    pub total: Option<Duration>,
}

/// A whole reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish: FinishReason,
    /// The model the server says answered (the configured one if it did not say).
    pub model: String,
    /// Wall time of the call, retries included.
    pub duration: Duration,
    /// How many HTTP requests the call took (1 without retries).
    pub attempts: u32,
    pub timings: Timings,
    /// Top-level fields of the server's events that nib does not read
    /// (ids, fingerprints, timestamps, server extensions), last value kept.
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Whether the reply came as a stream (`false`: one whole JSON body,
    /// from [`StreamMode::Off`] or the fallback).
    pub streamed: bool,
    /// Set on the reply of the call that found the server cannot stream
    /// tool calls: what the server did (the `StreamFallback` event's
    /// reason), to log once.
    pub stream_fallback: Option<String>,
    /// When the tool calls were read from the text: the text exactly as
    /// the model wrote it. `text` is then that text without the calls.
    pub raw_text: Option<String>,
}
