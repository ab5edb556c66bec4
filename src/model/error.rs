//! What can go wrong talking to a model, each said with what to do about it.

use std::fmt;
use std::time::Duration;

use super::{Provider, Reply};

/// A model call that did not produce a whole reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelError {
    /// The configuration cannot work (a base URL that is not http(s), an API
    /// key that cannot be sent, an unknown provider).
    Config(String),
    /// No connection could be made, or it broke before the reply started,
    /// on every attempt (`attempts` requests were tried).
    Connect {
        url: String,
        detail: String,
        provider: Provider,
        attempts: u32,
    },
    /// The server answered with an HTTP error (after retries for 429/5xx).
    /// `body` is the server's error message when it sent a JSON error, else
    /// the start of the body. `attempts`: requests sent in all;
    /// `retry_after`: the wait the server asked for; `note`: why nib did
    /// not wait and ask again, when it stopped before its retries ran out.
    Http {
        status: u16,
        body: String,
        attempts: u32,
        retry_after: Option<Duration>,
        note: Option<String>,
    },
    /// Nothing arrived in time. `phase` is `"connect"`, `"first byte"`,
    /// `"between chunks"`, `"total"` (the call's `total_timeout`) or
    /// `"deadline"` (the run's end, [`Client::set_deadline`](super::Client::set_deadline)).
    Timeout {
        phase: &'static str,
        after: Duration,
    },
    /// The stream ended or broke before the reply was complete. `partial`
    /// holds what had arrived (its `finish` is `Other("incomplete")`).
    StreamCut { partial: Box<Reply>, detail: String },
    /// The server reported an error in the middle of the stream (e.g.
    /// Anthropic's `overloaded_error`). `partial` holds what had arrived.
    Remote {
        message: String,
        partial: Box<Reply>,
    },
    /// The server sent something that is not the protocol's stream.
    Protocol(String),
    /// The reply would not end: it passed `max_reply_bytes`, or went on for
    /// `stall_timeout` without progress. Not retried: the same server
    /// would do it again. `partial` holds what had arrived.
    Runaway { detail: String, partial: Box<Reply> },
}

impl ModelError {
    /// The partial reply of a stream that broke off, if this is one.
    pub fn partial(&self) -> Option<&Reply> {
        match self {
            ModelError::StreamCut { partial, .. }
            | ModelError::Remote { partial, .. }
            | ModelError::Runaway { partial, .. } => Some(partial),
            _ => None,
        }
    }

    /// Whether asking again later may work (rate limits, overloaded or
    /// unreachable servers, cut streams), as opposed to a request or
    /// configuration that must change first.
    pub fn is_transient(&self) -> bool {
        match self {
            ModelError::Connect { .. }
            | ModelError::Timeout { .. }
            | ModelError::StreamCut { .. }
            | ModelError::Remote { .. } => true,
            ModelError::Http { status, .. } => *status == 408 || *status == 429 || *status >= 500,
            ModelError::Config(_) | ModelError::Protocol(_) | ModelError::Runaway { .. } => false,
        }
    }
}

/// "200 ms", "1.5 s", "2 min".
pub(crate) fn show_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 120_000 {
        let s = d.as_secs_f64();
        if ms.is_multiple_of(1000) {
            format!("{} s", ms / 1000)
        } else {
            format!("{s:.1} s")
        }
    } else {
        format!("{} min", d.as_secs() / 60)
    }
}

fn http_hint(status: u16, attempts: u32) -> String {
    let retried = attempts > 1;
    let after = if retried {
        format!(" even after {attempts} requests")
    } else {
        String::new()
    };
    match status {
        429 => {
            return format!(
                "rate limited{after}: wait, run fewer workers at once{}",
                if retried { ", or raise retries" } else { "" }
            );
        }
        529 => return format!("the server is overloaded{after}: try again later"),
        500..=599 if status != 504 => {
            return format!("the server failed{after}: check its logs, or try again later");
        }
        _ => {}
    }
    match status {
        400 | 422 => {
            "the server rejected the request: check --model, and whether the conversation \
             exceeds the model's context (compact it, or raise num_ctx / the server's context size)"
        }
        401 | 403 => {
            "check the API key: nib sends NIB_API_KEY, else OPENAI_API_KEY (--provider openai), \
             ANTHROPIC_API_KEY (anthropic) or OLLAMA_API_KEY (ollama); and that it may use this model"
        }
        410 => "the server has nothing more to give for this conversation",
        404 => {
            "check --model and --base-url (for Ollama, pull the model first: `ollama pull NAME`)"
        }
        408 | 504 => "the server timed out: try again, or use a shorter conversation",
        413 => "the request is too large: compact the conversation",
        _ => "check the server's documentation for this status",
    }
    .to_string()
}

/// What to check when a provider's server cannot be reached.
fn connect_hint(provider: Provider, url: &str) -> &'static str {
    match provider {
        Provider::Ollama => {
            "check that Ollama is running (`ollama serve`) and that --base-url points at it \
             (default http://localhost:11434)"
        }
        Provider::OpenAi if url.contains("api.openai.com") => {
            "check the network connection (and any proxy in HTTPS_PROXY)"
        }
        Provider::OpenAi => {
            "check that the server is running and that --base-url points at it, port \
             included (llama-server: http://localhost:8080/v1, vLLM: http://localhost:8000/v1, \
             LM Studio: http://localhost:1234/v1, Ollama: http://localhost:11434/v1)"
        }
        Provider::Anthropic => {
            "check the network connection (and any proxy in HTTPS_PROXY), and --base-url if set"
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Config(msg) => write!(f, "model configuration: {msg}"),
            ModelError::Connect {
                url,
                detail,
                provider,
                attempts,
            } => {
                write!(f, "could not reach the model server at {url}: {detail}")?;
                if *attempts > 1 {
                    write!(f, " ({attempts} attempts)")?;
                }
                write!(f, "; {}", connect_hint(*provider, url))
            }
            ModelError::Http {
                status,
                body,
                attempts,
                note,
                retry_after,
            } => {
                write!(f, "the model server answered HTTP {status}")?;
                if !body.is_empty() {
                    write!(f, ": {body}")?;
                }
                if body.contains("does not support tools") {
                    return write!(
                        f,
                        "; this model cannot take tools on this server (Ollama: its template \
                         declares none): pick a model that supports tools, or give --strategy \
                         the text-edits strategy (scheme/strategies/text-edits.scm in nib's \
                         source), whose model writes its edits as text"
                    );
                }
                match (note, retry_after) {
                    (Some(note), _) => write!(f, "; {note}"),
                    (None, Some(wait)) => write!(
                        f,
                        "; {} (the server asks to wait {} first)",
                        http_hint(*status, *attempts),
                        show_duration(*wait)
                    ),
                    (None, None) => write!(f, "; {}", http_hint(*status, *attempts)),
                }
            }
            ModelError::Timeout { phase, after } => {
                let after = show_duration(*after);
                match *phase {
                    "connect" => write!(
                        f,
                        "could not connect to the model server within {after}: check \
                         --base-url, or raise the connect timeout"
                    ),
                    "first byte" => write!(
                        f,
                        "the model server sent nothing for {after} after the request (the \
                         first-byte limit): the model may still be loading or the prompt be \
                         very long; if the server is working, raise first_byte_timeout (seconds) \
                         in the config, else check or restart the server"
                    ),
                    "total" => write!(
                        f,
                        "the model call took longer than {after}, the most one call may take \
                         (retries and the reply included); raise total_timeout (seconds) in the \
                         config if the model is just slow"
                    ),
                    "deadline" if after.is_empty() || after == "0 ms" => write!(
                        f,
                        "the run's time limit had passed before this model call, so no \
                         request was sent; give the run more time (--timeout)"
                    ),
                    "deadline" => write!(
                        f,
                        "the run's time limit came during the model call (after waiting \
                         {after}); give the run more time (--timeout)"
                    ),
                    _ => write!(
                        f,
                        "the model server went silent for {after} in the middle of a reply \
                         ({phase}); raise the idle timeout if the model is just slow, or check \
                         the server"
                    ),
                }
            }
            ModelError::StreamCut { partial, detail }
                if partial.text.is_empty()
                    && partial.reasoning.is_empty()
                    && partial.tool_calls.is_empty() =>
            {
                write!(
                    f,
                    "the model call ended before any text or tool call arrived: {detail}"
                )
            }
            ModelError::StreamCut { partial, detail } => write!(
                f,
                "the reply was cut off: {detail} (after {} characters of text and {} tool \
                 calls); ask again: the partial reply is incomplete",
                partial.text.chars().count(),
                partial.tool_calls.len()
            ),
            ModelError::Remote { message, .. } => write!(
                f,
                "the model server reported an error in the middle of the reply: {message}; \
                 try again (the partial reply is incomplete)"
            ),
            ModelError::Runaway { detail, .. } => write!(
                f,
                "the model server's reply would not end, so nib stopped reading it: {detail}"
            ),
            ModelError::Protocol(msg) => write!(
                f,
                "the model server's reply is not what the protocol allows: {msg}; check that \
                 --provider matches the server (ollama, openai or anthropic)"
            ),
        }
    }
}

impl std::error::Error for ModelError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, body: &str, attempts: u32) -> String {
        ModelError::Http {
            status,
            body: body.into(),
            attempts,
            retry_after: None,
            note: None,
        }
        .to_string()
    }

    #[test]
    fn http_messages_fit_what_happened() {
        let once = http(429, "slow down", 1);
        assert!(
            once.contains("rate limited:") && !once.contains("even after"),
            "{once}"
        );
        assert!(http(502, "", 3).contains("failed even after 3 requests"));
        let no_tools = http(
            400,
            "registry.ollama.ai/library/gemma:2b does not support tools",
            1,
        );
        assert!(no_tools.contains("--strategy"), "{no_tools}");
        assert!(!no_tools.contains("context"), "{no_tools}");
    }
}
