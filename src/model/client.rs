//! The blocking model client: one HTTP request per attempt, retries with
//! backoff before the reply starts, the three timeouts, and the stream fed
//! line by line through the provider's decoder into events and a reply.
//! Reading one attempt's response is `client/read.rs`.

mod read;

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::time::timeout;

use super::anthropic;
use super::error::show_duration;
use super::estimate;
use super::ollama;
use super::openai;
use super::stream::Accum;
use super::{ModelConfig, ModelError, Provider, Reply, Request, StreamEvent, StreamMode};
use read::cut;

/// The longest wait between attempts, and the most of a `Retry-After` honoured.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
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
    /// The run's end (see [`Client::set_deadline`]).
    deadline: Option<Instant>,
    /// Set once the server has shown it cannot stream a request that
    /// carries tools: such requests go unstreamed from then on.
    no_stream_tools: AtomicBool,
}

/// How an attempt failed: worth another attempt (with the server's
/// `Retry-After`, if any), not, or worth asking again without streaming.
enum Failure {
    Retry(ModelError, Option<Duration>),
    Fatal(ModelError),
    /// The server cannot stream this request (it carries tools); says what
    /// the server did.
    NoStream(String),
}

/// One call to [`Client::reply`]: its request and its time.
struct Call<'a> {
    req: &'a Request,
    start: Instant,
    /// The earlier of the call's total limit and the run's deadline.
    end: Instant,
    /// `"total"` or `"deadline"`: which of the two `end` is.
    end_phase: &'static str,
    prompt_estimate: u64,
    /// The offered tools' names, when tool calls written as text are read.
    text_call_tools: Vec<String>,
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
            deadline: None,
            no_stream_tools: AtomicBool::new(false),
        })
    }

    /// A flag that interrupts replies: once set, a reply stops within 50 ms
    /// (before the first byte, between chunks, or while waiting to retry)
    /// with `StreamCut` holding what had arrived, and is not retried.
    pub fn set_cancel(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    /// The run's end: no call waits past it. A wait the server asks for
    /// (`Retry-After`) that would end later is not waited: the call fails
    /// at once saying so; timeouts shrink to what is left (phase
    /// `"deadline"`). `None`: only the config's limits.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// Whether requests that carry tools are still streamed: `false` once
    /// the server has shown it cannot (then they go unstreamed for the
    /// rest of this client's life), or with [`StreamMode::Off`].
    pub fn streams_tool_calls(&self) -> bool {
        self.cfg.stream == StreamMode::Auto && !self.no_stream_tools.load(Ordering::Relaxed)
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

    /// Whether a request for `req` is streamed now.
    fn streams(&self, req: &Request) -> bool {
        match self.cfg.stream {
            StreamMode::Off => false,
            StreamMode::Auto => req.tools.is_empty() || self.streams_tool_calls(),
        }
    }

    /// The exact JSON body `reply` sends for `req` now (for the event log):
    /// streamed or not, as [`Client::streams_tool_calls`] says.
    pub fn request_body(&self, req: &Request) -> Value {
        self.body(req, self.streams(req))
    }

    fn body(&self, req: &Request, stream: bool) -> Value {
        match self.cfg.provider {
            Provider::Ollama => ollama::body(&self.cfg, req, stream),
            Provider::OpenAi => openai::body(&self.cfg, req, stream),
            Provider::Anthropic => anthropic::body(&self.cfg, req, stream),
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
        let Some(rt) = &self.rt else {
            return Err(ModelError::Config("the client has been shut down".into()));
        };
        // Held to the end of the call: the endpoint's share of the cap.
        let _permit = super::limit::acquire(&self.url);
        if tokio::runtime::Handle::try_current().is_err() {
            return rt.block_on(self.run(req, on_event));
        }
        // Inside a runtime `block_on` would panic: run the call on a helper
        // thread and hand its events over to this one.
        enum Msg {
            Event(StreamEvent),
            Done(Box<Result<Reply, ModelError>>),
        }
        let (tx, rx) = mpsc::channel::<Msg>();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let mut forward = |ev: &StreamEvent| {
                    let _ = tx.send(Msg::Event(ev.clone()));
                };
                let result = rt.block_on(self.run(req, &mut forward));
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
        req: &Request,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<Reply, ModelError> {
        let start = Instant::now();
        // After the run's deadline no request goes out: the deadline is the
        // cause, and a strategy reads kind `deadline` and does not retry.
        if self.deadline.is_some_and(|d| start >= d) {
            return Err(ModelError::Timeout {
                phase: "deadline",
                after: Duration::ZERO,
            });
        }
        let total_end = start
            .checked_add(self.cfg.total_timeout)
            .unwrap_or(start + Duration::from_secs(365 * 86400));
        let (end, end_phase) = match self.deadline {
            Some(d) if d < total_end => (d, "deadline"),
            _ => (total_end, "total"),
        };
        let text_call_tools = if self.cfg.text_tool_calls {
            req.tools
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .map(String::from)
                .collect()
        } else {
            Vec::new()
        };
        let mut call = Call {
            req,
            start,
            end,
            end_phase,
            prompt_estimate: 0,
            text_call_tools,
        };
        let mut attempt: u32 = 0;
        let mut retried: u32 = 0;
        let mut fallback = None;
        loop {
            attempt += 1;
            let stream = self.streams(req);
            let sent = self.body(req, stream);
            // Estimated from what this body carries, not from the request.
            call.prompt_estimate = estimate::carried_tokens(req, &sent);
            let body = serde_json::to_vec(&sent)
                .map_err(|e| ModelError::Config(format!("could not encode the request: {e}")))?;
            let failure = match self.attempt(&call, &body, stream, on_event).await {
                Ok(mut reply) => {
                    reply.duration = start.elapsed();
                    reply.attempts = attempt;
                    reply.stream_fallback = fallback;
                    return Ok(reply);
                }
                Err(f) => f,
            };
            let (err, asked) = match failure {
                Failure::NoStream(reason) if stream => {
                    self.no_stream_tools.store(true, Ordering::Relaxed);
                    on_event(&StreamEvent::StreamFallback {
                        reason: reason.clone(),
                    });
                    fallback = Some(reason);
                    continue;
                }
                Failure::NoStream(reason) => {
                    return Err(ModelError::Protocol(reason));
                }
                Failure::Fatal(err) => return Err(settle(err, start, attempt, None)),
                Failure::Retry(err, asked) => (err, asked),
            };
            if self.cancelled() || retried >= self.cfg.retries {
                return Err(settle(err, start, attempt, None));
            }
            let backoff = self
                .cfg
                .backoff
                .saturating_mul(1u32 << retried.min(16))
                .min(MAX_BACKOFF);
            if let Some(asked) = asked
                && asked > MAX_RETRY_AFTER
            {
                let note = format!(
                    "the server asks to wait {} before the next request (Retry-After), longer \
                     than nib waits ({}): try again later",
                    show_duration(asked),
                    show_duration(MAX_RETRY_AFTER)
                );
                return Err(settle(err, start, attempt, Some(note)));
            }
            let wait = asked.unwrap_or(backoff);
            if Instant::now() + wait > call.end {
                let limit = match call.end_phase {
                    "deadline" => "the run's time limit",
                    _ => "the call's total_timeout",
                };
                let note = format!(
                    "retrying needs a wait of {}{}, which would end past {limit}: try again \
                     later, or give the run more time",
                    show_duration(wait),
                    if asked.is_some() {
                        " (the server's Retry-After)"
                    } else {
                        ""
                    },
                );
                return Err(settle(err, start, attempt, Some(note)));
            }
            retried += 1;
            on_event(&StreamEvent::Retry {
                retry: retried,
                retries: self.cfg.retries,
                wait,
                error: err.to_string(),
            });
            if self.or_cancel(tokio::time::sleep(wait)).await.is_none() {
                let acc = self.accum(&call);
                return Err(settle(self.interrupted(&call, &acc), start, attempt, None));
            }
        }
    }

    fn accum(&self, call: &Call<'_>) -> Accum {
        let mut acc = Accum::new(&self.cfg.model);
        acc.prompt_estimate(call.prompt_estimate);
        acc.read_text_calls(call.text_call_tools.clone());
        acc
    }

    /// `limit` for a wait of `phase`, shrunk to what is left of the call;
    /// with the phase and the length an error would report.
    fn cap(
        &self,
        call: &Call<'_>,
        limit: Duration,
        phase: &'static str,
        after: Duration,
    ) -> (Duration, &'static str, Duration) {
        let left = call.end.saturating_duration_since(Instant::now());
        if left < limit {
            (left, call.end_phase, call.end - call.start)
        } else {
            (limit, phase, after)
        }
    }

    fn connect_error(&self, detail: String) -> ModelError {
        ModelError::Connect {
            url: self.url.clone(),
            detail,
            provider: self.cfg.provider,
            attempts: 1,
        }
    }

    /// A reply the cancel flag stopped, with what had arrived.
    fn interrupted(&self, call: &Call<'_>, acc: &Accum) -> ModelError {
        let at_deadline = self
            .deadline
            .is_some_and(|d| Instant::now() + CANCEL_POLL * 2 >= d);
        if at_deadline {
            // The deadline is the cause: said as such, so it is not retried.
            return ModelError::Timeout {
                phase: "deadline",
                after: call.start.elapsed().max(Duration::from_millis(1)),
            };
        }
        cut(acc, "interrupted by the user".into())
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

/// The error as the caller sees it: how many requests it took, how long,
/// and why retrying stopped when that is not the obvious reason.
fn settle(mut err: ModelError, start: Instant, attempts: u32, why: Option<String>) -> ModelError {
    match &mut err {
        ModelError::StreamCut { partial, .. } | ModelError::Remote { partial, .. } => {
            // A partial reply took time too; say how long.
            partial.duration = start.elapsed();
            partial.attempts = attempts;
        }
        ModelError::Connect { attempts: a, .. } => *a = attempts,
        ModelError::Http {
            attempts: a, note, ..
        } => {
            *a = attempts;
            if why.is_some() {
                *note = why;
            }
        }
        _ => {}
    }
    err
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
