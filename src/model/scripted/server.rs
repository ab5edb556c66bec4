//! The scripted model's HTTP/1.1 server, written by hand on `std::net`: a
//! thread accepts on 127.0.0.1, a thread per connection reads requests
//! (headers and a `Content-Length` body, keep-alive), records them, and
//! writes the next scripted reply in the protocol of the endpoint, as a
//! chunked or connection-close body, in pieces, with the reply's faults
//! (writing the reply is `server/respond.rs`).

use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

mod respond;

use super::{Fault, Quirks, Script, ScriptedReply};
use crate::model::{ModelConfig, Provider};
use respond::respond;

/// The most a request's headers may take.
const MAX_HEAD: usize = 64 * 1024;
/// How often a blocked connection thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// How response bodies are delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`, one HTTP chunk per piece; the
    /// connection is kept alive. The default.
    Chunked,
    /// `Connection: close`: the body ends when the connection does.
    Close,
}

/// A request as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (a JSON string holding the text when it is not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// The first header of that (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct State {
    replies: Vec<ScriptedReply>,
    /// The next reply to serve.
    next: usize,
    /// Requests already answered by the next reply's status/hangup faults.
    tries: u32,
    requests: Vec<RecordedRequest>,
    chunk_size: Option<usize>,
    framing: Framing,
    quirks: Quirks,
    /// Served once the script is used up ([`ScriptedServer::set_on_end`]).
    on_end: Option<ScriptedReply>,
}

struct Shared {
    stop: AtomicBool,
    state: Mutex<State>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A connection thread that panicked leaves the state usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Sleeps, waking early when the server stops.
    fn nap(&self, d: Duration) {
        let end = Instant::now() + d;
        while !self.stopped() {
            let now = Instant::now();
            if now >= end {
                break;
            }
            thread::sleep((end - now).min(POLL));
        }
    }
}

/// A scripted model on `127.0.0.1`, serving `/api/chat` (Ollama),
/// `/v1/chat/completions` (OpenAI) and `/v1/messages` (Anthropic). Stops
/// when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl ScriptedServer {
    /// Listens on a free port of 127.0.0.1.
    pub fn start(script: Script) -> io::Result<ScriptedServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            state: Mutex::new(State {
                replies: script.replies,
                next: 0,
                tries: 0,
                requests: Vec::new(),
                chunk_size: None,
                framing: Framing::Chunked,
                quirks: Quirks::default(),
                on_end: None,
            }),
        });
        let accept_shared = shared.clone();
        let accept = thread::Builder::new()
            .name("nib-scripted-accept".into())
            .spawn(move || accept_loop(listener, accept_shared))?;
        Ok(ScriptedServer {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT`: a base URL for any of the three providers.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A client config for this server in `provider`'s protocol.
    pub fn config(&self, provider: Provider) -> ModelConfig {
        ModelConfig {
            base_url: self.base_url(),
            ..ModelConfig::new(provider, "scripted")
        }
    }

    /// The bodies of the requests received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared
            .state()
            .requests
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// The requests received so far, with method, path and headers.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        self.shared.state().requests.clone()
    }

    /// Writes bodies in pieces of `n` bytes (`None`: one per line or event),
    /// for replies that do not set their own chunking.
    pub fn set_chunk_size(&self, n: Option<usize>) {
        self.shared.state().chunk_size = n.map(|n| n.max(1));
    }

    pub fn set_framing(&self, framing: Framing) {
        self.shared.state().framing = framing;
    }

    /// How the server behaves for replies that do not say (`server` in a
    /// script); see [`Quirks`].
    pub fn set_quirks(&self, quirks: Quirks) {
        self.shared.state().quirks = quirks;
    }

    /// Adds a reply at the end of the script.
    pub fn push(&self, reply: ScriptedReply) {
        self.shared.state().replies.push(reply);
    }

    /// What the server answers once the script has no reply left: this
    /// reply, every time, instead of HTTP 410 (the demo ends its script
    /// with a message saying so, not an error).
    pub fn set_on_end(&self, reply: ScriptedReply) {
        self.shared.state().on_end = Some(reply);
    }

    /// How many replies have not been served yet.
    pub fn remaining(&self) -> usize {
        let state = self.shared.state();
        state.replies.len().saturating_sub(state.next)
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(handle) = self.accept.take() {
            let _ = handle.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stopped() {
            break;
        }
        let Ok(stream) = conn else {
            thread::sleep(POLL); // e.g. out of file descriptors
            continue;
        };
        let shared = shared.clone();
        let _ = thread::Builder::new()
            .name("nib-scripted-conn".into())
            .spawn(move || {
                let _ = serve_connection(stream, &shared);
            });
    }
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

struct Incoming {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    close: bool,
}

impl Conn {
    /// Reads more bytes; `false` at the end of the connection or on stop.
    fn read_more(&mut self, shared: &Shared) -> io::Result<bool> {
        let mut tmp = [0u8; 8192];
        loop {
            if shared.stopped() {
                return Ok(false);
            }
            match self.stream.read(&mut tmp) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buf.extend_from_slice(&tmp[..n]);
                    return Ok(true);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn read_request(&mut self, shared: &Shared) -> io::Result<Option<Incoming>> {
        let head_end = loop {
            if let Some(pos) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break pos;
            }
            if self.buf.len() > MAX_HEAD || !self.read_more(shared)? {
                return Ok(None);
            }
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or("").split_whitespace();
        let method = first.next().unwrap_or("").to_string();
        let path = first.next().unwrap_or("").to_string();
        let http10 = first.next() == Some("HTTP/1.0");
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let get = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        let length: usize = get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let close = http10 || get("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let start = head_end + 4;
        while self.buf.len() < start + length {
            if !self.read_more(shared)? {
                return Ok(None);
            }
        }
        let body = self.buf[start..start + length].to_vec();
        self.buf.drain(..start + length);
        Ok(Some(Incoming {
            method,
            path,
            headers,
            body,
            close,
        }))
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(POLL))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut conn = Conn {
        stream,
        buf: Vec::new(),
    };
    while let Some(req) = conn.read_request(shared)? {
        let keep_alive = respond(&mut conn.stream, req, shared)?;
        if !keep_alive {
            break;
        }
    }
    Ok(())
}

/// What to do with one request.
enum Action {
    NotFound,
    Exhausted(usize),
    Status(u16, Option<u64>),
    Hangup,
    /// 200, then close with no body: a server that cannot stream tool calls.
    DropStream,
    /// That status, with an error saying streaming with tools is not supported.
    RefuseStream(u16),
    Serve {
        reply: Box<ScriptedReply>,
        index: usize,
        chunk_size: Option<usize>,
        framing: Framing,
        quirks: Quirks,
    },
}

/// Whether the request asks for a streamed reply (Ollama streams unless
/// told not to; the others only when told to).
fn wants_stream(provider: Option<Provider>, body: &Value) -> bool {
    body.get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(provider == Some(Provider::Ollama))
}

fn protocol(path: &str) -> Option<Provider> {
    let path = path.split('?').next().unwrap_or(path);
    match path.trim_end_matches('/') {
        "/api/chat" => Some(Provider::Ollama),
        "/v1/chat/completions" | "/chat/completions" => Some(Provider::OpenAi),
        "/v1/messages" | "/messages" => Some(Provider::Anthropic),
        _ => None,
    }
}

fn decide(shared: &Shared, req: &Incoming, body: &Value) -> (Action, Option<Provider>) {
    let mut state = shared.state();
    state.requests.push(RecordedRequest {
        method: req.method.clone(),
        path: req.path.clone(),
        headers: req.headers.clone(),
        body: body.clone(),
    });
    let provider = protocol(&req.path);
    if req.method != "POST" || provider.is_none() {
        return (Action::NotFound, provider);
    }
    let next = state.next;
    if next >= state.replies.len()
        && let Some(end) = state.on_end.clone()
    {
        state.replies.push(end);
    }
    let Some(reply) = state.replies.get(next) else {
        return (Action::Exhausted(state.replies.len()), provider);
    };
    let quirks = reply.quirks.unwrap_or(state.quirks);
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if !quirks.stream_tools && has_tools && wants_stream(provider, body) {
        let action = match quirks.stream_tools_status {
            Some(code) => Action::RefuseStream(code),
            None => Action::DropStream,
        };
        return (action, provider);
    }
    let mut before = 0;
    let mut action = None;
    for fault in &reply.faults {
        let (times, a) = match fault {
            Fault::Status {
                code,
                times,
                retry_after,
            } => (*times, Action::Status(*code, *retry_after)),
            Fault::Hangup { times } => (*times, Action::Hangup),
            _ => continue,
        };
        before += times;
        if state.tries < before {
            action = Some(a);
            break;
        }
    }
    if let Some(action) = action {
        state.tries += 1;
        return (action, provider);
    }
    let reply = Box::new(reply.clone());
    state.next += 1;
    state.tries = 0;
    let action = Action::Serve {
        reply,
        index: next,
        chunk_size: state.chunk_size,
        framing: state.framing,
        quirks,
    };
    (action, provider)
}
