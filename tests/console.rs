//! The browser console (`nib console`): the live demo session answered
//! over the console's own HTTP (approve, reject with a reason, standing
//! approvals, the first answer winning, questions), the page's security
//! (token, Host, Origin, loopback only, masked secrets, no standing
//! approval for a Security confirm), past sessions and a swebench
//! directory; and, gated on chromium and chromedriver, the demo answered
//! from a real headless browser (`the_demo_is_answered_from_a_browser`).
//! `console/beside.rs`: the console beside the terminal client and `nib
//! exec`, where the first answer wins.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nib::console::{Console, LiveOptions, Sources, start_live};
use nib::files::Workspace;
use nib::guard::approvals::Approval;
use nib::model::scripted::{Script, ScriptedServer};
use nib::settings::UserConfig;
use nib::tui::demo;
use serde_json::{Value, json};
use tempfile::TempDir;

const WAIT: Duration = Duration::from_secs(60);

#[path = "console/beside.rs"]
mod beside;

/// The demo, live in a console: calc.py protected (so its two-edit fix is
/// a Security confirm), the scripted model, the demo's task started.
struct Demo {
    console: Console,
    server: ScriptedServer,
    dir: TempDir,
    key: demo::FakeKey,
}

fn demo_console(approvals: Vec<Approval>) -> Demo {
    nib::engine::init_process();
    let dir = tempfile::tempdir().unwrap();
    let key = demo::FakeKey::generate(0x5eed_c0de ^ u64::from(std::process::id()));
    demo::prepare(dir.path(), &key).unwrap();
    std::fs::create_dir_all(dir.path().join(".nib")).unwrap();
    std::fs::write(
        dir.path().join(".nib/config.toml"),
        "[guard]\nprotected = [\"calc.py\"]\n",
    )
    .unwrap();
    let server = ScriptedServer::start(demo::script(&key)).unwrap();
    let console = live_console(
        dir.path(),
        demo::agent_config(&server),
        approvals,
        Some(demo::TASK),
    );
    Demo {
        console,
        server,
        dir,
        key,
    }
}

fn live_console(
    root: &Path,
    cfg: nib::agent::AgentConfig,
    approvals: Vec<Approval>,
    task: Option<&str>,
) -> Console {
    let ws = Workspace::open(root).unwrap();
    let opts = LiveOptions {
        user: UserConfig::default(),
        approvals,
        config_path: Some(root.join(".user-config.toml")),
    };
    start_live(ws, cfg, opts, None, task).unwrap()
}

/// A console's address and token: one this test started, or one a nib
/// process printed.
trait Served {
    fn addr(&self) -> SocketAddr;
    fn token(&self) -> &str;
}

impl Served for Console {
    fn addr(&self) -> SocketAddr {
        Console::addr(self)
    }
    fn token(&self) -> &str {
        Console::token(self)
    }
}

/// A console another process started: the address and token of its URL.
struct Remote {
    addr: SocketAddr,
    token: String,
}

impl Served for Remote {
    fn addr(&self) -> SocketAddr {
        self.addr
    }
    fn token(&self) -> &str {
        &self.token
    }
}

/// One request over a fresh connection: (status, body).
fn raw(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

fn get(c: &impl Served, path: &str) -> (u16, String) {
    let sep = if path.contains('?') { '&' } else { '?' };
    raw(
        c.addr(),
        &format!(
            "GET {path}{sep}token={} HTTP/1.1\r\nHost: {}\r\n\r\n",
            c.token(),
            c.addr()
        ),
    )
}

fn post(c: &impl Served, path: &str, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let (status, text) = raw(
        c.addr(),
        &format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\nContent-Type: application/json\r\nX-Nib-Token: {}\r\nContent-Length: {}\r\n\r\n{body}",
            c.token(),
            body.len(),
            addr = c.addr(),
        ),
    );
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A page's event stream, read on a thread into one growing text.
struct Stream {
    text: Arc<Mutex<String>>,
    seen: usize,
}

impl Stream {
    fn open(c: &impl Served) -> Stream {
        let mut s = TcpStream::connect(c.addr()).unwrap();
        write!(
            s,
            "GET /api/live/stream?token={} HTTP/1.1\r\nHost: {}\r\n\r\n",
            c.token(),
            c.addr()
        )
        .unwrap();
        let text = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&text);
        std::thread::spawn(move || {
            let mut r = BufReader::new(s);
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 0) {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Stream { text, seen: 0 }
    }

    /// Every message so far.
    fn messages(&self) -> Vec<Value> {
        self.text
            .lock()
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    /// The next message (after those already taken) that `want` accepts.
    fn next(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let all = self.messages();
            if let Some(i) = all.iter().skip(self.seen).position(&want) {
                self.seen += i + 1;
                return all[self.seen - 1].clone();
            }
            assert!(
                start.elapsed() < WAIT,
                "no {what} came; the stream so far:\n{}",
                self.text.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn confirm(&mut self) -> Value {
        self.next("confirm", |m| m["k"] == "confirm")
    }

    fn done(&mut self) -> Value {
        self.next("end of the task", |m| m["k"] == "done")
    }
}

/// Answer the demo's confirms: approve the protected two-edit fix and the
/// test command, reject the credential leak with `reason`.
fn run_demo_answering(d: &Demo, stream: &mut Stream, reason: &str) -> Vec<Value> {
    let mut confirms = Vec::new();
    let fix = stream.confirm();
    assert_eq!(fix["kind"], "security", "{fix}");
    assert_eq!(fix["path"], "calc.py");
    let (status, body) = post(
        &d.console,
        &format!("/api/confirm/{}", fix["id"]),
        &json!({"answer": "yes"}),
    );
    assert_eq!(status, 200, "{body}");
    confirms.push(fix);
    let tests = stream.confirm();
    assert_eq!(tests["tool"], "shell", "{tests}");
    assert_eq!(
        post(
            &d.console,
            &format!("/api/confirm/{}", tests["id"]),
            &json!({"answer": "yes"})
        )
        .0,
        200
    );
    confirms.push(tests);
    let leak = stream.confirm();
    assert_eq!(leak["kind"], "security", "{leak}");
    assert_eq!(leak["path"], "notes.txt");
    let (status, body) = post(
        &d.console,
        &format!("/api/confirm/{}", leak["id"]),
        &json!({"answer": "no", "reason": reason}),
    );
    assert_eq!(status, 200, "{body}");
    confirms.push(leak);
    let done = stream.done();
    assert_eq!(done["status"], "done", "{done}");
    confirms
}

/// The text of every request the scripted model got, as one string.
fn requests_text(server: &ScriptedServer) -> Vec<String> {
    server.requests().iter().map(Value::to_string).collect()
}

#[test]
fn the_demo_is_answered_over_the_console() {
    let d = demo_console(Vec::new());
    let mut stream = Stream::open(&d.console);
    let reason = "never copy credentials into notes";
    let confirms = run_demo_answering(&d, &mut stream, reason);
    // The card's diff: both edits, as numbered hunks.
    let rows: Vec<Value> = confirms[0]["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["r"].as_array().unwrap().clone())
        .collect();
    assert!(
        rows.contains(&json!(["-", 5, null, "    return a - b"])),
        "{rows:?}"
    );
    assert!(
        rows.contains(&json!(["+", null, 5, "    return a + b"])),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r[0] == "+" && r[3] == "    return sum(values) / len(values)")
    );
    assert_eq!(
        confirms[0]["suggestion"],
        Value::Null,
        "no standing approval for Security"
    );
    assert!(
        confirms[0]["loose"].to_string().contains("protected"),
        "{}",
        confirms[0]
    );
    // The file, and the refused write.
    let calc = std::fs::read_to_string(d.dir.path().join("calc.py")).unwrap();
    assert!(
        calc.contains("return a + b") && !calc.contains("len(values) + 1"),
        "{calc}"
    );
    assert!(!d.dir.path().join("notes.txt").exists());
    // The reason reached the model in its next request.
    let requests = requests_text(&d.server);
    let last = requests.last().unwrap();
    assert!(last.contains(reason), "{last}");
    // Every card was there: a call per tool, with its result.
    let messages = stream.messages();
    let calls: Vec<&Value> = messages
        .iter()
        .filter(|m| m["k"] == "event" && m["e"]["ev"] == "tool.call")
        .collect();
    assert_eq!(calls.len(), 5, "{calls:?}");
    assert!(
        calls[1]["e"]["positional"]
            .as_str()
            .unwrap()
            .starts_with("(fs-edit \"calc.py\"")
    );
    // Each confirm is closed for every page, with who answered.
    let closed: Vec<&Value> = messages.iter().filter(|m| m["k"] == "answered").collect();
    assert_eq!(closed.len(), 3);
    assert_eq!(closed[2]["answer"], "no");
    assert_eq!(closed[2]["reason"], reason);
}

#[test]
fn secrets_reach_the_page_masked() {
    let d = demo_console(Vec::new());
    let mut stream = Stream::open(&d.console);
    let confirms = run_demo_answering(&d, &mut stream, "no");
    let everything = stream.text.lock().unwrap().clone();
    for secret in [&d.key.id, &d.key.secret] {
        assert!(
            !everything.contains(secret.as_str()),
            "the stream shows {secret}"
        );
    }
    // The leak's confirm shows the key masked, pinned to its row, and its
    // text cannot be edited (that would show it).
    let leak = confirms[2].to_string();
    assert!(leak.contains(&format!("{}••••", &d.key.id[..4])), "{leak}");
    assert!(
        leak.contains("⚠")
            || confirms[2]["hunks"][0]["r"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r.get(4).is_some()),
        "{leak}"
    );
    assert_eq!(confirms[2]["editable"], false);
    assert_eq!(
        post(&d.console, "/api/confirm/999", &json!({"answer": "yes"})).0,
        404
    );
    // Past sessions: the same log, masked too.
    let (status, list) = get(&d.console, "/api/sessions");
    assert_eq!(status, 200);
    let list: Value = serde_json::from_str(&list).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let (status, events) = get(&d.console, &format!("/api/sessions/{id}"));
    assert_eq!(status, 200);
    assert!(!events.contains(&d.key.id) && !events.contains(&d.key.secret));
    let events: Value = serde_json::from_str(&events).unwrap();
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["ev"] == "tool.result")
    );
    for bad in ["..", "..%2f..%2fetc", ".nib"] {
        assert_eq!(
            get(&d.console, &format!("/api/sessions/{bad}")).0,
            404,
            "{bad}"
        );
    }
}

#[test]
fn a_security_confirm_takes_no_standing_approval() {
    // An approval that covers calc.py: it must not answer the Security
    // confirm, and "always" must be refused for it.
    let approval = Approval {
        tools: vec!["fs-edit".into(), "fs-write".into()],
        paths: Some("**".into()),
        command: None,
    };
    let d = demo_console(vec![approval]);
    let mut stream = Stream::open(&d.console);
    let fix = stream.confirm();
    assert_eq!(fix["kind"], "security");
    let url = format!("/api/confirm/{}", fix["id"]);
    let (status, body) = post(&d.console, &url, &json!({"answer": "always"}));
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("security"),
        "{body}"
    );
    assert!(!d.dir.path().join(".user-config.toml").exists());
    // Still open: the first real answer wins, a second is told who.
    assert_eq!(post(&d.console, &url, &json!({"answer": "yes"})).0, 200);
    let (status, body) = post(&d.console, &url, &json!({"answer": "no", "reason": "late"}));
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("already answered in the browser: yes"),
        "{body}"
    );
    // The test command: a Write confirm, but a compound command, so no
    // standing approval fits it.
    let tests = stream.confirm();
    assert_eq!(tests["kind"], "write");
    assert_eq!(tests["suggestion"], Value::Null);
    let url = format!("/api/confirm/{}", tests["id"]);
    let (status, body) = post(&d.console, &url, &json!({"answer": "always"}));
    assert_eq!(status, 400, "{body}");
    assert_eq!(post(&d.console, &url, &json!({"answer": "yes"})).0, 200);
    // The leak: Security again, despite the approval covering every path.
    let leak = stream.confirm();
    assert_eq!(leak["kind"], "security");
    assert_eq!(
        post(
            &d.console,
            &format!("/api/confirm/{}", leak["id"]),
            &json!({"answer": "no"})
        )
        .0,
        200
    );
    stream.done();
}

#[test]
fn a_standing_approval_saved_from_the_page_answers_the_next_write() {
    nib::engine::init_process();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let script = Script::from_json(
        &json!([
            {"tool_calls": [{"name": "fs-write", "arguments": {"path": "src/a.txt", "content": "a\n"}}]},
            {"tool_calls": [{"name": "fs-write", "arguments": {"path": "src/b.txt", "content": "b\n"}}]},
            "done"
        ])
        .to_string(),
    )
    .unwrap();
    let server = ScriptedServer::start(script).unwrap();
    let console = live_console(
        dir.path(),
        demo::agent_config(&server),
        Vec::new(),
        Some("write two files"),
    );
    let mut stream = Stream::open(&console);
    let first = stream.confirm();
    assert_eq!(first["kind"], "write");
    assert_eq!(first["suggestion"], "fs-edit and fs-write under src/**");
    assert_eq!(first["editable"], true);
    let (status, body) = post(
        &console,
        &format!("/api/confirm/{}", first["id"]),
        &json!({"answer": "always"}),
    );
    assert_eq!(status, 200, "{body}");
    let saved = std::fs::read_to_string(dir.path().join(".user-config.toml")).unwrap();
    assert!(
        saved.contains("[[approvals]]") && saved.contains("src/**"),
        "{saved}"
    );
    let answered = stream.next("the answer", |m| m["k"] == "answered");
    assert!(
        answered["saved"].as_str().unwrap().contains("under src/**"),
        "{answered}"
    );
    // The second write is answered by the approval: the page is told.
    let auto = stream.next("the standing approval's answer", |m| {
        m["k"] == "auto" || m["k"] == "confirm"
    });
    assert_eq!(auto["k"], "auto", "{auto}");
    assert_eq!(auto["scope"], "fs-edit and fs-write under src/**");
    stream.done();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/b.txt")).unwrap(),
        "b\n"
    );
}

#[test]
fn an_edited_text_is_written_instead() {
    nib::engine::init_process();
    let dir = tempfile::tempdir().unwrap();
    let script = Script::from_json(
        &json!([
            {"tool_calls": [{"name": "fs-write", "arguments": {"path": "a.txt", "content": "proposed\n"}}]},
            "done"
        ])
        .to_string(),
    )
    .unwrap();
    let server = ScriptedServer::start(script).unwrap();
    let console = live_console(
        dir.path(),
        demo::agent_config(&server),
        Vec::new(),
        Some("write a file"),
    );
    let mut stream = Stream::open(&console);
    let confirm = stream.confirm();
    assert_eq!(confirm["proposed"], "proposed\n");
    let url = format!("/api/confirm/{}", confirm["id"]);
    assert_eq!(
        post(&console, &url, &json!({"answer": "edit"})).0,
        400,
        "an edit sends its text"
    );
    assert_eq!(
        post(&console, &url, &json!({"answer": "edit", "text": "mine\n"})).0,
        200
    );
    stream.done();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "mine\n"
    );
    let last = requests_text(&server).pop().unwrap();
    assert!(
        last.contains("mine"),
        "the model is told what the user changed: {last}"
    );
}

#[test]
fn the_page_interrupts_a_running_task() {
    let d = demo_console(Vec::new());
    let mut stream = Stream::open(&d.console);
    let fix = stream.confirm();
    // One task at a time: another is refused while this one runs.
    let (status, body) = post(&d.console, "/api/task", &json!({"task": "something else"}));
    assert_eq!(status, 409, "{body}");
    assert_eq!(post(&d.console, "/api/task", &json!({"task": "  "})).0, 409);
    assert_eq!(post(&d.console, "/api/interrupt", &json!({})).0, 200);
    let closed = stream.next("the confirm closed", |m| {
        m["k"] == "answered" && m["id"] == fix["id"]
    });
    assert_eq!(closed["answer"], "no", "{closed}");
    assert_eq!(closed["by"], "nib");
    stream.done();
    let calc = std::fs::read_to_string(d.dir.path().join("calc.py")).unwrap();
    assert!(calc.contains("return a - b"), "nothing was written: {calc}");
    // The session goes on: a new task is taken.
    assert_eq!(
        post(&d.console, "/api/task", &json!({"task": "and now?"})).0,
        200
    );
}

#[test]
fn the_page_wants_its_token_its_host_and_its_origin() {
    let d = demo_console(Vec::new());
    let c = &d.console;
    let addr = c.addr();
    assert!(addr.ip().is_loopback(), "{addr}");
    let host = format!("Host: {addr}\r\n");
    let page =
        |target: &str, headers: &str| raw(addr, &format!("GET {target} HTTP/1.1\r\n{headers}\r\n"));
    // The token opens the page; nothing else does.
    let (status, body) = page(&format!("/?token={}", c.token()), &host);
    assert_eq!(status, 200);
    assert!(body.contains("nib console"));
    for target in [
        "/",
        "/?token=",
        "/?token=0123456789abcdef0123456789abcdef",
        "/app.js",
        "/api/sessions",
    ] {
        let (status, body) = page(target, &host);
        assert_eq!(status, 401, "{target}: {body}");
        assert!(body.contains("open the URL"), "{body}");
    }
    // DNS rebinding: a page served under another name reaching this port.
    let t = format!("/?token={}", c.token());
    assert_eq!(
        page(&t, &format!("Host: attacker.example:{}\r\n", addr.port())).0,
        421
    );
    assert_eq!(page(&t, "").0, 421, "no Host");
    // Cross-site requests, even with the token.
    assert_eq!(
        page(&t, &format!("{host}Origin: http://attacker.example\r\n")).0,
        403
    );
    assert_eq!(
        page(&t, &format!("{host}Sec-Fetch-Site: cross-site\r\n")).0,
        403
    );
    // A change: a form (no JSON, no token header) or a foreign Origin gets nothing.
    let body = r#"{"task": "rm -rf"}"#;
    let form = format!(
        "POST /api/task?token={} HTTP/1.1\r\n{host}Origin: http://{addr}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        c.token(),
        body.len()
    );
    assert_eq!(raw(addr, &form).0, 415);
    let no_header = format!(
        "POST /api/task?token={} HTTP/1.1\r\n{host}Origin: http://{addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        c.token(),
        body.len()
    );
    assert_eq!(raw(addr, &no_header).0, 401);
    let foreign = format!(
        "POST /api/task HTTP/1.1\r\n{host}Origin: http://attacker.example\r\nContent-Type: application/json\r\nX-Nib-Token: {}\r\nContent-Length: {}\r\n\r\n{body}",
        c.token(),
        body.len()
    );
    assert_eq!(raw(addr, &foreign).0, 403);
    let preflight =
        format!("OPTIONS /api/task HTTP/1.1\r\n{host}Origin: http://attacker.example\r\n\r\n");
    let (status, _) = raw(addr, &preflight);
    assert_eq!(status, 403);
    // No response grants another origin anything.
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET /?token={} HTTP/1.1\r\n{host}\r\n", c.token()).unwrap();
    let mut head = String::new();
    s.read_to_string(&mut head).unwrap();
    assert!(
        !head.to_ascii_lowercase().contains("access-control-allow"),
        "{head}"
    );
    assert!(
        head.contains("Content-Security-Policy: default-src 'none'"),
        "{head}"
    );
    // Nothing on the machine's other addresses.
    match other_address() {
        Some(ip) => assert!(
            TcpStream::connect_timeout(&SocketAddr::new(ip, addr.port()), Duration::from_secs(2))
                .is_err(),
            "the console answered on {ip}"
        ),
        None => {
            eprintln!("no non-loopback address on this machine: only the bound address was checked")
        }
    }
}

/// An address of this machine other than loopback, if it has one.
fn other_address() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn nib_console_prints_one_url_that_opens_the_page() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("demo");
    let mut child = Command::new(env!("CARGO_BIN_EXE_nib"))
        .args(["console", "--demo", "--dir"])
        .arg(&scratch)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    out.read_line(&mut url).unwrap();
    let url = url.trim().to_string();
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("{url}"));
    let (port, token) = rest.split_once("/?token=").unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    assert_eq!(token.len(), 32);
    let (status, page) = raw(
        addr,
        &format!("GET /?token={token} HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
    );
    assert_eq!(status, 200);
    assert!(page.contains(&format!("content=\"{token}\"")), "{page}");
    // The demo protects calc.py in its workspace config.
    let config = std::fs::read_to_string(scratch.join(".nib/config.toml")).unwrap();
    assert!(config.contains("calc.py"), "{config}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn questions_are_answered_from_the_page() {
    nib::engine::init_process();
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("asks.scm");
    std::fs::write(
        &program,
        "(list (ask \"go on?\") (ask-choice \"which?\" (list \"red\" \"blue\")) (ask-text \"name?\"))\n",
    )
    .unwrap();
    let server = ScriptedServer::start(Script::default()).unwrap();
    let mut cfg = demo::agent_config(&server);
    cfg.program = Some(program);
    let console = live_console(dir.path(), cfg, Vec::new(), Some("ask me"));
    let mut stream = Stream::open(&console);
    let yes_no = stream.next("ask", |m| m["k"] == "ask");
    assert_eq!(yes_no["type"], "yesno");
    assert_eq!(
        post(
            &console,
            &format!("/api/ask/{}", yes_no["id"]),
            &json!({"answer": true})
        )
        .0,
        200
    );
    let choice = stream.next("ask", |m| m["k"] == "ask");
    assert_eq!(choice["choices"], json!(["red", "blue"]));
    let (status, body) = post(
        &console,
        &format!("/api/ask/{}", choice["id"]),
        &json!({"answer": "green"}),
    );
    assert_eq!(status, 400, "{body}");
    // A wrong answer leaves the question open as it was.
    assert_eq!(
        post(
            &console,
            &format!("/api/ask/{}", choice["id"]),
            &json!({"answer": "blue"})
        )
        .0,
        200
    );
    let text = stream.next("ask", |m| m["k"] == "ask");
    assert_eq!(text["type"], "text");
    assert_eq!(
        post(
            &console,
            &format!("/api/ask/{}", text["id"]),
            &json!({"answer": "nib"})
        )
        .0,
        200
    );
    assert_eq!(
        post(
            &console,
            &format!("/api/ask/{}", text["id"]),
            &json!({"answer": "late"})
        )
        .0,
        409
    );
    let done = stream.done();
    let said = done["text"].as_str().unwrap();
    assert!(said.contains("blue") && said.contains("nib"), "{done}");
}

#[test]
fn a_swebench_directory_is_a_table_with_its_trajectories() {
    let out = tempfile::tempdir().unwrap();
    let inst = out.path().join("demo__calc-1");
    std::fs::create_dir_all(&inst).unwrap();
    let key = demo::FakeKey::generate(9);
    std::fs::write(
        inst.join("trajectory.json"),
        json!({
            "format": "nib-swebench-trajectory-1",
            "instance_id": "demo__calc-1",
            "status": "running",
            "model_stats": {"prompt_tokens": 100, "completion_tokens": 20, "cost": 0.002},
            "steps": [{"step": 1, "text": format!("found {}", key.id), "calls": [
                {"name": "fs-read", "positional": "(fs-read \"calc.py\")", "output": "def add(a, b):", "result": {"ok": true}}]}],
        })
        .to_string(),
    )
    .unwrap();
    let console = Console::start(Sources {
        live: None,
        beside: None,
        root: None,
        swebench: Some(out.path().to_path_buf()),
    })
    .unwrap();
    let (status, table) = get(&console, "/api/swebench");
    assert_eq!(status, 200);
    let table: Value = serde_json::from_str(&table).unwrap();
    assert_eq!(table["rows"][0]["status"], "running");
    assert_eq!(table["rows"][0]["tokens"], 120);
    assert_eq!(table["finished"], false);
    // The run goes on: the page's next look sees the instance finished.
    std::fs::write(
        inst.join("summary.json"),
        json!({"status": "submitted", "steps": 4, "tokens": 900, "cost": 0.01, "seconds": 3.5})
            .to_string(),
    )
    .unwrap();
    let table: Value = serde_json::from_str(&get(&console, "/api/swebench").1).unwrap();
    assert_eq!(table["rows"][0]["status"], "submitted");
    assert_eq!(table["rows"][0]["steps"], 4);
    let (status, t) = get(&console, "/api/swebench/demo__calc-1");
    assert_eq!(status, 200);
    assert!(t.contains("fs-read") && !t.contains(&key.id), "{t}");
    assert_eq!(get(&console, "/api/swebench/..").0, 404);
    assert_eq!(
        post(&console, "/api/task", &json!({"task": "x"})).0,
        404,
        "no live session here"
    );
}

// ---- in a real browser ---------------------------------------------------

mod browser {
    use super::*;
    use fantoccini::{Client, ClientBuilder, Locator};
    use std::process::{Child, Command, Stdio};

    struct Driver {
        child: Child,
        _profile: TempDir,
    }

    impl Drop for Driver {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    /// chromedriver on a free port, and a headless chromium session.
    async fn open() -> (Driver, Client) {
        let port = free_port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is not installed (apt-get install chromium chromium-driver)");
        let profile = tempfile::tempdir().unwrap();
        let driver = Driver {
            child,
            _profile: profile,
        };
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < WAIT, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let binary = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("chromium is not installed");
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1200,900",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([format!(
            "--user-data-dir={}",
            driver._profile.path().display()
        )])
        .collect::<Vec<_>>();
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({"binary": binary, "args": args}),
        );
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a chromium session");
        (driver, client)
    }

    async fn wait_for(client: &Client, css: &str) -> fantoccini::elements::Element {
        client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} appeared: {e}"))
    }

    async fn js(client: &Client, script: &str) -> Value {
        client.execute(script, vec![]).await.unwrap()
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    #[ignore = "needs chromium and chromedriver"]
    fn the_demo_is_answered_from_a_browser() {
        let d = demo_console(Vec::new());
        let reason = "credentials never go into notes";
        runtime().block_on(async {
            let (_driver, client) = open().await;
            client.goto(&d.console.url()).await.unwrap();
            // The protected two-edit fix: a Security confirm in its card.
            let confirm = wait_for(&client, ".card .confirm.security").await;
            let head = confirm.find(Locator::Css(".confirm-head")).await.unwrap().text().await.unwrap();
            assert!(head.contains("SECURITY CONFIRM") && head.contains("calc.py"), "{head}");
            let removed = js(&client, "return [...document.querySelectorAll('.confirm .row.del .code')].map(e => e.textContent)").await;
            let added = js(&client, "return [...document.querySelectorAll('.confirm .row.add .code')].map(e => e.textContent)").await;
            assert!(removed.to_string().contains("return a - b"), "{removed}");
            assert!(added.to_string().contains("return a + b"), "{added}");
            assert!(added.to_string().contains("return sum(values) / len(values)"), "{added}");
            assert!(
                confirm.find(Locator::Css("button.always")).await.is_err(),
                "a Security confirm offers no standing approval"
            );
            // The split view shows the same rows side by side.
            confirm.find(Locator::Css("button.toggle")).await.unwrap().click().await.unwrap();
            wait_for(&client, ".confirm .diff-rows.split .code.add").await;
            let card = wait_for(&client, ".card:has(> .confirm.security)").await;
            let png = card.screenshot().await.unwrap();
            let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-confirm.png");
            std::fs::write(&shot, &png).unwrap();
            eprintln!("screenshot of the confirm: {}", shot.display());
            confirm.find(Locator::Css("button.toggle")).await.unwrap().click().await.unwrap();
            confirm.find(Locator::Css("button.approve")).await.unwrap().click().await.unwrap();
            wait_for(&client, ".confirm.closed.said-yes").await;
            // The test command: a Write confirm, approved.
            let shell = wait_for(&client, ".confirm.write:not(.closed)").await;
            shell.find(Locator::Css("button.approve")).await.unwrap().click().await.unwrap();
            // The credential leak: rejected with a reason.
            let leak = wait_for(&client, ".confirm.security:not(.closed)").await;
            let text = leak.text().await.unwrap();
            assert!(text.contains("notes.txt"), "{text}");
            assert!(!text.contains(&d.key.id) && !text.contains(&d.key.secret), "unmasked: {text}");
            leak.find(Locator::Css("button.reject")).await.unwrap().click().await.unwrap();
            leak.find(Locator::Css("input.reason")).await.unwrap().send_keys(reason).await.unwrap();
            leak.find(Locator::Css("button.send-reject")).await.unwrap().click().await.unwrap();
            wait_for(&client, ".confirm.closed.said-no").await;
            wait_for(&client, ".line.answer").await;
            let page = js(&client, "return document.body.innerText").await.to_string();
            assert!(!page.contains(&d.key.id) && !page.contains(&d.key.secret), "the page shows the key");
            let delays = js(&client, "return window.nib.cardDelays").await;
            eprintln!("card delays after each call (ms): {delays}");
            // The same session, replayed read-only from its log.
            client.goto(&format!("{}#sessions", d.console.url())).await.unwrap();
            wait_for(&client, "#sessions table a").await.click().await.unwrap();
            wait_for(&client, "#replay .card").await;
            let replay = js(&client, "return document.querySelector('#replay').innerText").await;
            let replay = replay.as_str().unwrap();
            assert!(replay.contains("(fs-edit \"calc.py\""), "{replay}");
            assert!(replay.contains(reason), "the rejection's reason: {replay}");
            assert!(!replay.contains(&d.key.id) && !replay.contains(&d.key.secret), "the replay shows the key");
            assert_eq!(
                js(&client, "return document.querySelectorAll('#replay button').length").await,
                json!(0),
                "a replay answers nothing"
            );
            client.close().await.unwrap();
        });
        let calc = std::fs::read_to_string(d.dir.path().join("calc.py")).unwrap();
        assert!(
            calc.contains("return a + b") && calc.contains("return sum(values) / len(values)\n"),
            "{calc}"
        );
        assert!(!d.dir.path().join("notes.txt").exists());
        let last = requests_text(&d.server).pop().unwrap();
        assert!(last.contains(reason), "the model's next request: {last}");
    }

    #[test]
    #[ignore = "needs chromium and chromedriver"]
    fn a_swebench_run_is_a_table_that_updates() {
        let out = tempfile::tempdir().unwrap();
        let inst = out.path().join("demo__calc-1");
        std::fs::create_dir_all(&inst).unwrap();
        std::fs::write(
            inst.join("trajectory.json"),
            json!({
                "instance_id": "demo__calc-1",
                "status": "running",
                "model_stats": {"prompt_tokens": 100, "completion_tokens": 20},
                "steps": [{"step": 1, "text": "reading calc.py first", "calls": [
                    {"name": "fs-read", "positional": "(fs-read \"calc.py\")", "output": "def add(a, b):", "result": {"ok": true}}]}],
            })
            .to_string(),
        )
        .unwrap();
        let console = Console::start(Sources {
            live: None,
            beside: None,
            root: None,
            swebench: Some(out.path().to_path_buf()),
        })
        .unwrap();
        runtime().block_on(async {
            let (_driver, client) = open().await;
            client.goto(&format!("{}#swebench", console.url())).await.unwrap();
            wait_for(&client, "tr.status-running").await;
            // The instance ends while the page is open: the table follows.
            std::fs::write(
                inst.join("summary.json"),
                json!({"status": "submitted", "steps": 1, "tokens": 120, "cost": 0.0042, "seconds": 2.0}).to_string(),
            )
            .unwrap();
            let row = wait_for(&client, "tr.status-submitted").await;
            let text = row.text().await.unwrap();
            assert!(text.contains("demo__calc-1") && text.contains("$0.0042"), "{text}");
            row.find(Locator::Css("a")).await.unwrap().click().await.unwrap();
            let trajectory = wait_for(&client, "#trajectory .card").await;
            let text = trajectory.text().await.unwrap();
            assert!(text.contains("(fs-read \"calc.py\")"), "{text}");
            client.close().await.unwrap();
        });
    }

    #[test]
    #[ignore = "needs chromium and chromedriver"]
    fn a_ten_thousand_line_diff_renders_in_the_browser() {
        nib::engine::init_process();
        let dir = tempfile::tempdir().unwrap();
        let content: String = (0..10_000)
            .map(|i| format!("line {i}: some text to diff\n"))
            .collect();
        let script = Script::from_json(
            &json!([
                {"tool_calls": [{"name": "fs-write", "arguments": {"path": "big.txt", "content": content}}]},
                "written"
            ])
            .to_string(),
        )
        .unwrap();
        let server = ScriptedServer::start(script).unwrap();
        let console = live_console(dir.path(), demo::agent_config(&server), Vec::new(), None);
        runtime().block_on(async {
            let (_driver, client) = open().await;
            client.goto(&console.url()).await.unwrap();
            // The task is typed into the page, so its call happens while
            // the page watches.
            wait_for(&client, ".line.dim").await;
            let composer = wait_for(&client, "textarea.task").await;
            composer.send_keys("write big.txt").await.unwrap();
            wait_for(&client, "button.run").await.click().await.unwrap();
            let confirm = wait_for(&client, ".confirm.write").await;
            let start = Instant::now();
            while js(&client, "return window.nib.diffRenders.length").await == json!(0) {
                assert!(start.elapsed() < WAIT);
                std::thread::sleep(Duration::from_millis(20));
            }
            confirm
                .find(Locator::Css("button.toggle"))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
            while js(&client, "return window.nib.diffRenders.length").await == json!(1) {
                assert!(start.elapsed() < WAIT);
                std::thread::sleep(Duration::from_millis(20));
            }
            let renders = js(&client, "return window.nib.diffRenders").await;
            eprintln!(
                "10,000-line diff, ms to the first rows on screen and to all rows in: {renders}"
            );
            let long = js(&client, "return window.nib.longTasks").await;
            eprintln!("the page's thread busy over 50 ms at a time (ms): {long}");
            let delays = js(&client, "return window.nib.cardDelays").await;
            eprintln!("the card appeared after the call (ms): {delays}");
            assert_eq!(renders[0]["rows"], 10_000);
            assert_eq!(
                delays.as_array().map(Vec::len),
                Some(1),
                "one live card: {delays}"
            );
            // The page still answers: the confirm is approved by a click.
            confirm
                .find(Locator::Css("button.approve"))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
            wait_for(&client, ".confirm.closed.said-yes").await;
            client.close().await.unwrap();
        });
        assert_eq!(
            std::fs::read_to_string(dir.path().join("big.txt")).unwrap(),
            content
        );
    }
}
