//! The console's server: a listener on 127.0.0.1 only (a free port), a
//! thread per connection, the gate (`http::Gate`) before anything, and the
//! routes: the page and its two assets, the live session's event stream
//! (server-sent events) and its answers (JSON POSTs), past sessions, and a
//! swebench output directory.
//!
//! Why SSE for the push channel: the page only needs to be told things;
//! what it says back is a handful of answers, which are ordinary POSTs
//! carrying the token in a header and checked for their Origin. SSE is
//! plain HTTP (nothing to upgrade, no framing to write), the browser
//! reconnects by itself and says where it stopped (`Last-Event-ID`), and
//! the hub keeps every message, so a reconnect loses nothing.

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::beside::Mirror;
use super::history;
use super::http::{Gate, Request, Response, read_request, write_response, write_stream_head};
use super::hub::Hub;
use super::live::{Live, PageAnswer};
use super::view::mask_json;

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// The most connections served at once (a page holds one stream).
const MAX_CONNECTIONS: usize = 64;
/// How often an idle stream gets a comment, so a dead peer is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What the console shows.
#[derive(Default)]
pub struct Sources {
    /// The live session, if one runs here.
    pub live: Option<Live>,
    /// The session another client runs, shown beside it.
    pub beside: Option<Arc<Mirror>>,
    /// The workspace whose past sessions are listed.
    pub root: Option<PathBuf>,
    /// A `nib swebench` output directory.
    pub swebench: Option<PathBuf>,
}

struct Shared {
    gate: Gate,
    sources: Sources,
    hub: Arc<Hub>,
    connections: AtomicUsize,
}

/// A running console.
pub struct Console {
    addr: SocketAddr,
    token: String,
    hub: Arc<Hub>,
}

impl Console {
    /// Bind 127.0.0.1 on a free port and serve `sources` on a thread.
    pub fn start(sources: Sources) -> Result<Console, String> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the console's address: {e}"))?;
        let token = super::http::new_token()?;
        let hub = match (&sources.live, &sources.beside) {
            (Some(l), _) => Arc::clone(&l.hub),
            (None, Some(m)) => Arc::clone(&m.hub),
            (None, None) => Arc::new(Hub::default()),
        };
        let shared = Arc::new(Shared {
            gate: Gate {
                port: addr.port(),
                token: token.clone(),
            },
            sources,
            hub: Arc::clone(&hub),
            connections: AtomicUsize::new(0),
        });
        std::thread::Builder::new()
            .name("nib-console".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let shared = Arc::clone(&shared);
                    if shared.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                        shared.connections.fetch_sub(1, Ordering::SeqCst);
                        let mut stream = stream;
                        let _ = write_response(
                            &mut stream,
                            &Response::error(503, "too many connections"),
                        );
                        continue;
                    }
                    let spawned = std::thread::Builder::new()
                        .name("nib-console-conn".into())
                        .spawn(move || {
                            serve(&shared, stream);
                            shared.connections.fetch_sub(1, Ordering::SeqCst);
                        });
                    if spawned.is_err() {
                        continue;
                    }
                }
            })
            .map_err(|e| format!("cannot start the console's thread: {e}"))?;
        Ok(Console { addr, token, hub })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// The URL to open: it carries the token.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token)
    }

    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }
}

fn serve(shared: &Shared, stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
    let Ok(reader) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reader);
    let mut out = stream;
    let req = match read_request(&mut reader) {
        Ok(Some(req)) => req,
        Ok(None) => return,
        Err(r) => {
            let _ = write_response(&mut out, &Response::error(r.status, r.message));
            return;
        }
    };
    if let Err(r) = shared.gate.admit(&req) {
        let _ = write_response(&mut out, &Response::error(r.status, r.message));
        return;
    }
    if req.method == "GET" && req.path == "/api/live/stream" {
        stream_events(shared, &req, &mut out);
        return;
    }
    let resp = route(shared, &req);
    let _ = write_response(&mut out, &resp);
}

fn route(shared: &Shared, req: &Request) -> Response {
    let path = req.path.as_str();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let live = shared
        .sources
        .live
        .as_ref()
        .or_else(|| shared.sources.beside.as_ref().and_then(|m| m.live()));
    match (req.method.as_str(), segments.as_slice()) {
        ("GET", [""]) => Response {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: PAGE.replace("{{TOKEN}}", &shared.gate.token).into_bytes(),
        },
        ("GET", ["app.js"]) => Response {
            status: 200,
            content_type: "text/javascript; charset=utf-8",
            body: SCRIPT.as_bytes().to_vec(),
        },
        ("GET", ["app.css"]) => Response {
            status: 200,
            content_type: "text/css; charset=utf-8",
            body: STYLE.as_bytes().to_vec(),
        },
        ("GET", ["api", "info"]) => Response::json(
            200,
            &mask_json(json!({
                "live": live.is_some() || shared.sources.beside.is_some(),
                "tasks": live.is_some_and(Live::takes_tasks),
                "beside": shared.sources.beside.as_ref().map(|m| m.client()),
                "root": shared.sources.root.as_ref().map(|r| r.display().to_string()),
                "swebench": shared.sources.swebench.as_ref().map(|r| r.display().to_string()),
            })),
        ),
        ("POST", ["api", "confirm", id]) => with_live(live, |live| {
            let id = parse_id(id)?;
            let body = body_json(req)?;
            let answer = match body["answer"].as_str() {
                Some("yes") => PageAnswer::Yes,
                Some("no") => PageAnswer::No(body["reason"].as_str().unwrap_or("").to_string()),
                Some("edit") => match body["text"].as_str() {
                    Some(t) => PageAnswer::Edited(t.to_string()),
                    None => return Err((400, "an edit sends its whole text as \"text\"".into())),
                },
                Some("always") => PageAnswer::Always,
                _ => {
                    return Err((400, "send {\"answer\": \"yes\" | \"no\" | \"edit\" | \"always\"} (with \"reason\" or \"text\")".into()));
                }
            };
            live.answer(id, answer)
        }),
        ("POST", ["api", "ask", id]) => with_live(live, |live| {
            let id = parse_id(id)?;
            let body = body_json(req)?;
            live.answer_ask(id, &body["answer"])
        }),
        ("POST", ["api", "task"]) => with_live(live, |live| {
            let body = body_json(req)?;
            live.submit(body["task"].as_str().unwrap_or(""))
                .map_err(|e| (409, e))
        }),
        ("POST", ["api", "interrupt"]) => with_live(live, |live| {
            live.interrupt();
            Ok(())
        }),
        ("GET", ["api", "sessions"]) => match &shared.sources.root {
            Some(root) => Response::json(200, &mask_json(history::sessions(root))),
            None => Response::error(404, "this console shows no workspace"),
        },
        ("GET", ["api", "sessions", id]) => {
            match shared
                .sources
                .root
                .as_ref()
                .and_then(|r| history::session_events(r, id))
            {
                Some(events) => Response::json(200, &mask_json(events)),
                None => Response::error(404, format!("no session {id} in this workspace")),
            }
        }
        ("GET", ["api", "swebench"]) => match &shared.sources.swebench {
            Some(out) => Response::json(200, &mask_json(history::swebench(out))),
            None => Response::error(
                404,
                "this console shows no swebench run: start it with --swebench OUT",
            ),
        },
        ("GET", ["api", "swebench", id]) => {
            match shared
                .sources
                .swebench
                .as_ref()
                .and_then(|o| history::trajectory(o, id))
            {
                Some(t) => Response::json(200, &mask_json(t)),
                None => Response::error(404, format!("no trajectory for {id}")),
            }
        }
        ("GET" | "POST", _) => Response::error(404, format!("nothing at {path}")),
        (method, _) => Response::error(405, format!("{method} is not served here")),
    }
}

fn with_live(live: Option<&Live>, f: impl FnOnce(&Live) -> Result<(), (u16, String)>) -> Response {
    let Some(live) = live else {
        return Response::error(404, "this console runs no live session");
    };
    match f(live) {
        Ok(()) => Response::json(200, &json!({"ok": true})),
        Err((status, message)) => Response::error(
            status,
            mask_json(Value::String(message)).as_str().unwrap_or(""),
        ),
    }
}

fn parse_id(id: &str) -> Result<u64, (u16, String)> {
    id.parse()
        .map_err(|_| (404, format!("{id:?} is not a confirm or question number")))
}

fn body_json(req: &Request) -> Result<Value, (u16, String)> {
    serde_json::from_slice(&req.body).map_err(|e| (400, format!("the body is not JSON: {e}")))
}

/// The live session's messages as server-sent events, from the one after
/// `Last-Event-ID` (or `from`), until the page goes away.
fn stream_events(shared: &Shared, req: &Request, out: &mut TcpStream) {
    let mut seen: u64 = req
        .header("last-event-id")
        .or(req.query("from"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if write_stream_head(out).is_err() || out.write_all(b"retry: 1000\n\n").is_err() {
        return;
    }
    loop {
        let (last, messages) = shared.hub.since(seen, KEEP_ALIVE);
        let mut chunk = String::new();
        if messages.is_empty() {
            chunk.push_str(": keep-alive\n\n");
        }
        let first = last - messages.len() as u64;
        for (i, m) in messages.iter().enumerate() {
            chunk.push_str(&format!("id: {}\ndata: {m}\n\n", first + i as u64 + 1));
        }
        seen = last;
        if out
            .write_all(chunk.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return;
        }
    }
}
