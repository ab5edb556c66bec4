//! The blocking model client: one HTTP request per attempt, retries with
//! backoff before the reply starts, the three timeouts, and the stream fed
//! line by line through the provider's decoder into events and a reply.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::time::timeout;

use super::anthropic::{self, AnthropicDecoder};
use super::ollama::{self, OllamaDecoder};
use super::openai::{self, OpenAiDecoder};
use super::stream::{Accum, DecodeError, Decoder, LineSplitter, error_message};
use super::{ModelConfig, ModelError, Provider, Reply, Request, StreamEvent};

/// The longest wait between attempts, and the most of a `Retry-After` honoured.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// How much of an HTTP error body is read.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// How long to wait for the rest of a body after the reply is complete.
const DRAIN: Duration = Duration::from_millis(50);
/// How often a waiting reply checks its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Talks to one model server. Cheap to share: `reply` takes `&self` and may
/// run on several threads at once.
pub struct Client {
    cfg: ModelConfig,
    url: String,
    http: reqwest::Client,
    /// `None` only while dropping.
    rt: Option<tokio::runtime::Runtime>,
    /// When set, a reply in progress stops (see [`Client::set_cancel`]).
    cancel: Option<Arc<AtomicBool>>,
}

/// How an attempt failed: worth another attempt (with the server's
/// `Retry-After`, if any) or not.
enum Failure {
    Retry(ModelError, Option<Duration>),
    Fatal(ModelError),
}

impl Client {
    /// Checks the config and sets up HTTP; connects to nothing yet.
    pub fn new(cfg: ModelConfig) -> Result<Client, ModelError> {
        let url = cfg.provider.endpoint(&cfg.base_url);
        let parsed = reqwest::Url::parse(&url).map_err(|e| {
            ModelError::Config(format!(
                "the base URL {:?} is not a URL ({e}); give one like {}",
                cfg.base_url,
                cfg.provider.default_base_url()
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ModelError::Config(format!(
                "the base URL {:?} must start with http:// or https://",
                cfg.base_url
            )));
        }
        if let Some(key) = &cfg.api_key
            && reqwest::header::HeaderValue::from_str(key).is_err()
        {
            return Err(ModelError::Config(
                "the API key has characters an HTTP header cannot carry (a line break?); \
                 check how it was set"
                    .into(),
            ));
        }
        let host = parsed.host_str().unwrap_or("");
        let loopback = host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        // The TLS crypto provider for the process; a second install (another
        // client) finds it there already, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(cfg.connect_timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            .user_agent(concat!("nib/", env!("CARGO_PKG_VERSION")));
        if loopback {
            // A proxy from the environment must not capture a local server.
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| {
            ModelError::Config(format!("could not set up the HTTP client: {}", chain(&e)))
        })?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ModelError::Config(format!("could not start the I/O runtime: {e}")))?;
        Ok(Client {
            cfg,
            url,
            http,
            rt: Some(rt),
            cancel: None,
        })
    }

    /// A flag that interrupts replies: once set, a reply stops within 50 ms
    /// (before the first byte or between chunks) with `StreamCut` holding
    /// what had arrived, and is not retried.
    pub fn set_cancel(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// `fut`, or `None` once the cancel flag is set (checked every 50 ms).
    async fn or_cancel<F: std::future::Future>(&self, fut: F) -> Option<F::Output> {
        if self.cancel.is_none() {
            return Some(fut.await);
        }
        let mut fut = std::pin::pin!(fut);
        loop {
            if self.cancelled() {
                return None;
            }
            if let Ok(out) = timeout(CANCEL_POLL, fut.as_mut()).await {
                return Some(out);
            }
        }
    }

    pub fn config(&self) -> &ModelConfig {
        &self.cfg
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.url
    }

    /// The exact JSON body `reply` sends for `req` (for the event log).
    pub fn request_body(&self, req: &Request) -> Value {
        match self.cfg.provider {
            Provider::Ollama => ollama::body(&self.cfg, req),
            Provider::OpenAi => openai::body(&self.cfg, req),
            Provider::Anthropic => anthropic::body(&self.cfg, req),
        }
    }

    /// Sends `req` and streams the reply: `on_event` sees every event as it
    /// arrives, on the calling thread; the whole reply is returned at the
    /// end. Blocks; works from a plain thread or from inside a tokio runtime.
    pub fn reply(
        &self,
        req: &Request,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<Reply, ModelError> {
        let body = serde_json::to_vec(&self.request_body(req))
            .map_err(|e| ModelError::Config(format!("could not encode the request: {e}")))?;
        let Some(rt) = &self.rt else {
            return Err(ModelError::Config("the client has been shut down".into()));
        };
        // Held to the end of the call: the endpoint's share of the cap.
        let _permit = super::limit::acquire(&self.url);
        if tokio::runtime::Handle::try_current().is_err() {
            return rt.block_on(self.run(&body, on_event));
        }
        // Inside a runtime `block_on` would panic: run the call on a helper
        // thread and hand its events over to this one.
        enum Msg {
            Event(StreamEvent),
            Done(Box<Result<Reply, ModelError>>),
        }
        let (tx, rx) = mpsc::channel::<Msg>();
        std::thread::scope(|scope| {
            let body = &body;
            scope.spawn(move || {
                let mut forward = |ev: &StreamEvent| {
                    let _ = tx.send(Msg::Event(ev.clone()));
                };
                let result = rt.block_on(self.run(body, &mut forward));
                let _ = tx.send(Msg::Done(Box::new(result)));
            });
            let mut result = None;
            for msg in rx {
                match msg {
                    Msg::Event(ev) => on_event(&ev),
                    Msg::Done(r) => result = Some(*r),
                }
            }
            result.unwrap_or_else(|| {
                Err(ModelError::Protocol(
                    "the model call's helper thread ended without an answer".into(),
                ))
            })
        })
    }

    async fn run(
        &self,
        body: &[u8],
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<Reply, ModelError> {
        let start = Instant::now();
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            match self.attempt(body, on_event).await {
                Ok(mut reply) => {
                    reply.duration = start.elapsed();
                    reply.attempts = attempt;
                    return Ok(reply);
                }
                Err(Failure::Retry(_, wait))
                    if attempt <= self.cfg.retries && !self.cancelled() =>
                {
                    let backoff = self
                        .cfg
                        .backoff
                        .saturating_mul(1u32 << (attempt - 1).min(16))
                        .min(MAX_BACKOFF);
                    tokio::time::sleep(wait.unwrap_or(backoff)).await;
                }
                Err(Failure::Retry(mut err, _) | Failure::Fatal(mut err)) => {
                    // A partial reply took time too; say how long.
                    if let ModelError::StreamCut { partial, .. }
                    | ModelError::Remote { partial, .. } = &mut err
                    {
                        partial.duration = start.elapsed();
                        partial.attempts = attempt;
                    }
                    return Err(err);
                }
            }
        }
    }

    async fn attempt(
        &self,
        body: &[u8],
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<Reply, Failure> {
        let t0 = Instant::now();
        let first_byte = self.cfg.first_byte_timeout;
        let idle = self.cfg.idle_timeout;
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
        let Some(sent) = self.or_cancel(timeout(first_byte, rb.send())).await else {
            return Err(Failure::Fatal(interrupted(&Accum::new(&self.cfg.model))));
        };
        let mut resp = match sent {
            Err(_) => {
                return Err(Failure::Fatal(ModelError::Timeout {
                    phase: "first byte",
                    after: first_byte,
                }));
            }
            Ok(Err(e)) => return Err(self.send_failure(&e)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            let wait = retry_after(&resp);
            let text = read_error_body(resp, idle).await;
            let err = ModelError::Http {
                status,
                body: error_text(&text),
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
        let mut acc = Accum::new(&self.cfg.model);
        let mut lines = LineSplitter::default();
        let mut started = false;
        loop {
            let (limit, phase, after) = if started {
                (idle, "between chunks", idle)
            } else {
                (
                    first_byte.saturating_sub(t0.elapsed()),
                    "first byte",
                    first_byte,
                )
            };
            let Some(next) = self.or_cancel(timeout(limit, resp.chunk())).await else {
                return Err(Failure::Fatal(interrupted(&acc)));
            };
            let chunk = match next {
                Err(_) => return Err(Failure::Fatal(ModelError::Timeout { phase, after })),
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
            if decoder.complete() {
                // Read the end of the body, briefly, so the connection can be reused.
                let drain = async { while let Ok(Some(_)) = resp.chunk().await {} };
                let _ = timeout(DRAIN, drain).await;
                return Ok(acc.into_reply());
            }
        }

        // The body ended (or broke after the reply was complete).
        if !started {
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
            _ if whole => Ok(acc.into_reply()),
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

    fn connect_error(&self, detail: String) -> ModelError {
        ModelError::Connect {
            url: self.url.clone(),
            detail,
        }
    }

    fn send_failure(&self, e: &reqwest::Error) -> Failure {
        if e.is_builder() {
            Failure::Fatal(ModelError::Config(format!(
                "could not build the request: {}",
                chain(e)
            )))
        } else if e.is_timeout() {
            Failure::Retry(
                ModelError::Timeout {
                    phase: "connect",
                    after: self.cfg.connect_timeout,
                },
                None,
            )
        } else {
            Failure::Retry(self.connect_error(chain(e)), None)
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // Never blocks, so dropping inside another runtime is fine too.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

fn deliver(acc: &mut Accum, on_event: &mut dyn FnMut(&StreamEvent)) {
    for ev in acc.take_events() {
        on_event(&ev);
    }
}

fn cut(acc: &Accum, detail: String) -> ModelError {
    ModelError::StreamCut {
        partial: Box::new(acc.partial()),
        detail,
    }
}

/// A reply the cancel flag stopped, with what had arrived.
fn interrupted(acc: &Accum) -> ModelError {
    cut(acc, "interrupted by the user".into())
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

/// An error with its causes: reqwest's own message says little.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let msg = s.to_string();
        if !out.contains(&msg) {
            out.push_str(": ");
            out.push_str(&msg);
        }
        source = s.source();
    }
    out
}

fn retry_after(resp: &reqwest::Response) -> Option<Duration> {
    let value = resp.headers().get(reqwest::header::RETRY_AFTER)?;
    let secs: f64 = value.to_str().ok()?.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs).min(MAX_RETRY_AFTER))
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
