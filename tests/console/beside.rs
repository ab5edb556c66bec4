//! The console beside the terminal client (`nib --console`) and `nib exec
//! --console`: the real terminal client's state machine (drawn on a
//! TestBackend) and the console's real HTTP on one session; whichever
//! answers a confirm or a question first wins, the other shows it.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nib::agent::beside::Beside;
use nib::console::{Console, Mirror, start_beside};
use nib::files::Workspace;
use nib::guard::approvals::Approval;
use nib::model::scripted::{Script, ScriptedServer};
use nib::tui::app::{App, AppOptions};
use nib::tui::demo;
use nib::tui::style::Theme;
use nib::tui::worker::Session;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::{Stream, WAIT, post};

const CALC: &str = "def add(a, b):\n    return a - b\n";

fn edit_reply(old: &str, new: &str) -> Value {
    json!({"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": old, "new": new}}]})
}

/// The terminal client and the console beside it, on one session.
struct Both {
    dir: TempDir,
    server: ScriptedServer,
    console: Console,
    _mirror: Arc<Mirror>,
    app: App,
}

impl Both {
    /// `protect`: calc.py is a protected path (its edits are Security
    /// confirms).
    fn new(replies: Value, program: Option<&str>, approvals: Vec<Approval>, protect: bool) -> Both {
        nib::engine::init_process();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("calc.py"), CALC).unwrap();
        if protect {
            std::fs::create_dir_all(dir.path().join(".nib")).unwrap();
            std::fs::write(
                dir.path().join(".nib/config.toml"),
                "[guard]\nprotected = [\"calc.py\"]\n",
            )
            .unwrap();
        }
        let server =
            ScriptedServer::start(Script::from_json(&replies.to_string()).unwrap()).unwrap();
        let mut cfg = demo::agent_config(&server);
        if let Some(text) = program {
            let path = dir.path().join("program.scm");
            std::fs::write(&path, text).unwrap();
            cfg.program = Some(path);
        }
        let config = dir.path().join(".user-config.toml");
        let (mirror, console) = start_beside(
            "the terminal",
            dir.path().to_path_buf(),
            Some(config.clone()),
        )
        .unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let beside: Arc<dyn Beside> = mirror.clone();
        let session = Session::start_with(ws, cfg, approvals, tx, None, Some(beside)).unwrap();
        let app = App::new(
            session,
            rx,
            AppOptions {
                theme: Theme::DARK,
                arm_delay: Duration::ZERO,
                config_path: Some(config),
            },
        );
        Both {
            dir,
            server,
            console,
            _mirror: mirror,
            app,
        }
    }

    fn until(&mut self, what: &str, done: impl Fn(&App) -> bool) {
        let start = Instant::now();
        while !done(&self.app) {
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}; transcript:\n{}",
                self.app.transcript_text()
            );
            self.app.pump(Duration::from_millis(20), Instant::now());
        }
    }

    fn key(&mut self, code: KeyCode) {
        self.app
            .handle_key(KeyEvent::new(code, KeyModifiers::NONE), Instant::now());
    }

    fn screen(&self) -> String {
        let mut term = Terminal::new(TestBackend::new(100, 30)).unwrap();
        term.draw(|f| {
            self.app
                .render(f.area(), f.buffer_mut(), Instant::now() + WAIT)
        })
        .unwrap();
        format!("{}", term.backend())
    }

    fn calc(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("calc.py")).unwrap()
    }

    /// The session's `confirm.answer` events.
    fn answers_logged(&self) -> Vec<Value> {
        let sessions = self.dir.path().join(".nib/sessions");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(sessions).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path().join("events.jsonl")).unwrap();
            out.extend(
                text.lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap())
                    .filter(|e| e["ev"] == "confirm.answer"),
            );
        }
        out
    }
}

#[test]
fn a_confirm_answered_in_the_page_closes_the_terminal_dialog() {
    let mut b = Both::new(
        json!([edit_reply("a - b", "a + b"), "Fixed."]),
        None,
        Vec::new(),
        false,
    );
    let mut stream = Stream::open(&b.console);
    b.app.submit("fix add", Instant::now());
    b.until("the confirm", |a| a.confirm.is_some());
    assert!(
        b.screen().contains("fs-edit calc.py (+1 -1)"),
        "{}",
        b.screen()
    );
    let card = stream.confirm();
    assert_eq!(card["path"], "calc.py");
    let (status, body) = post(
        &b.console,
        &format!("/api/confirm/{}", card["id"]),
        &json!({"answer": "yes"}),
    );
    assert_eq!(status, 200, "{body}");
    // The terminal's dialog closes and says where the answer came from.
    b.until("the dialog to close", |a| a.confirm.is_none());
    assert!(!b.screen().contains("(+1 -1)"), "{}", b.screen());
    let t = b.app.transcript_text();
    assert!(
        t.contains("fs-edit calc.py: answered in the browser: yes"),
        "{t}"
    );
    b.until("the task to end", |a| !a.running());
    assert_eq!(b.calc(), "def add(a, b):\n    return a + b\n");
    // A late key in the terminal answers nothing.
    b.key(KeyCode::Char('n'));
    let logged = b.answers_logged();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["answer"], "yes");
}

#[test]
fn a_confirm_answered_in_the_terminal_shows_in_the_page() {
    let mut b = Both::new(
        json!([edit_reply("a - b", "a + b"), "As you wish."]),
        None,
        Vec::new(),
        false,
    );
    let mut stream = Stream::open(&b.console);
    b.app.submit("fix add", Instant::now());
    b.until("the confirm", |a| a.confirm.is_some());
    let card = stream.confirm();
    b.key(KeyCode::Char('n'));
    for c in "keep it".chars() {
        b.key(KeyCode::Char(c));
    }
    b.key(KeyCode::Enter);
    // The page's event stream closes the card: answered in the terminal.
    let closed = stream.next("the card closed", |m| {
        m["k"] == "answered" && m["id"] == card["id"]
    });
    assert_eq!(closed["by"], "the terminal", "{closed}");
    assert_eq!(closed["answer"], "no");
    assert_eq!(closed["reason"], "keep it");
    // A page answering now is told who did.
    let (status, body) = post(
        &b.console,
        &format!("/api/confirm/{}", card["id"]),
        &json!({"answer": "yes"}),
    );
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body["error"], "already answered in the terminal: no (keep it)",
        "{body}"
    );
    b.until("the task to end", |a| !a.running());
    assert_eq!(b.calc(), CALC);
    let asked = b.server.requests();
    assert!(
        asked.last().unwrap().to_string().contains("keep it"),
        "the model is told the reason"
    );
}

#[test]
fn when_both_answer_at_once_exactly_one_answer_is_applied() {
    // Three confirms, each answered from both places at the same moment:
    // the page says yes, the terminal says no.
    let mut b = Both::new(
        json!([
            edit_reply("a - b", "a + b"),
            edit_reply("def add", "def plus"),
            edit_reply("(a, b)", "(x, y)"),
            "Done."
        ]),
        None,
        Vec::new(),
        false,
    );
    let mut stream = Stream::open(&b.console);
    b.app.submit("three edits", Instant::now());
    let addr = b.console.addr();
    let token = b.console.token().to_string();
    for round in 0..3 {
        b.until("the confirm", |a| a.confirm.is_some());
        let card = stream.confirm();
        let page = super::Remote {
            addr,
            token: token.clone(),
        };
        let url = format!("/api/confirm/{}", card["id"]);
        let racer = std::thread::spawn(move || post(&page, &url, &json!({"answer": "yes"})));
        b.key(KeyCode::Char('n'));
        b.key(KeyCode::Enter);
        let (status, body) = racer.join().unwrap();
        let closed = stream.next("the card closed", |m| {
            m["k"] == "answered" && m["id"] == card["id"]
        });
        let t = b.app.transcript_text();
        match closed["by"].as_str() {
            Some("the browser") => {
                assert_eq!(status, 200, "round {round}: {body}");
                assert!(t.contains("answered in the browser: yes"), "{t}");
            }
            Some("the terminal") => {
                assert_eq!(status, 409, "round {round}: {body}");
                assert!(t.contains("rejected fs-edit calc.py"), "{t}");
            }
            other => panic!("answered by {other:?}"),
        }
        b.until("the next step", |a| a.confirm.is_none());
    }
    b.until("the task to end", |a| !a.running());
    // One answer per confirm reached the log and the model.
    let logged = b.answers_logged();
    assert_eq!(logged.len(), 3, "{logged:?}");
    let closes = stream
        .messages()
        .into_iter()
        .filter(|m| m["k"] == "answered")
        .count();
    assert_eq!(closes, 3);
    let applied_yes = logged.iter().filter(|e| e["answer"] == "yes").count();
    let calc = b.calc();
    assert_eq!(
        applied_yes,
        [
            calc.contains("a + b"),
            calc.contains("def plus"),
            calc.contains("(x, y)")
        ]
        .iter()
        .filter(|x| **x)
        .count(),
        "{calc}"
    );
}

#[test]
fn questions_are_answered_in_either_place() {
    let mut b = Both::new(
        json!([]),
        Some(
            "(list (ask \"go on?\") (ask-choice \"which?\" (list \"red\" \"blue\")) (ask-text \"name?\"))\n",
        ),
        Vec::new(),
        false,
    );
    let mut stream = Stream::open(&b.console);
    b.app.submit("ask me", Instant::now());
    // A yes/no answered in the page: the terminal's question closes.
    b.until("the question", |a| a.ask.is_some());
    let q = stream.next("ask", |m| m["k"] == "ask");
    assert_eq!(
        post(
            &b.console,
            &format!("/api/ask/{}", q["id"]),
            &json!({"answer": true})
        )
        .0,
        200
    );
    // Closed, and said so (the next question may already be open: the
    // strategy goes on at once).
    b.until("the question to close", |a| {
        a.transcript_text()
            .contains("go on? answered in the browser: yes")
    });
    // A choice answered in the terminal: the page is told.
    let choice = stream.next("ask", |m| m["k"] == "ask");
    b.until("the choice", |a| a.ask.is_some());
    b.key(KeyCode::Char('2'));
    let closed = stream.next("the choice closed", |m| {
        m["k"] == "answered" && m["id"] == choice["id"]
    });
    assert_eq!(closed["by"], "the terminal");
    assert_eq!(closed["answer"], "blue");
    let (status, _) = post(
        &b.console,
        &format!("/api/ask/{}", choice["id"]),
        &json!({"answer": "red"}),
    );
    assert_eq!(status, 409);
    // Text from the page.
    let text = stream.next("ask", |m| m["k"] == "ask");
    assert_eq!(
        post(
            &b.console,
            &format!("/api/ask/{}", text["id"]),
            &json!({"answer": "nib"})
        )
        .0,
        200
    );
    b.until("the task to end", |a| !a.running());
    let done = stream.done();
    let said = done["text"].as_str().unwrap();
    assert!(said.contains("blue") && said.contains("nib"), "{done}");
}

#[test]
fn a_security_confirm_takes_no_standing_approval_in_either_place() {
    // calc.py is protected: its edit is a Security confirm, and an approval
    // covering every path answers it neither in the terminal nor the page.
    let everything = Approval {
        tools: vec!["fs-edit".into(), "fs-write".into()],
        paths: Some("**".into()),
        command: None,
    };
    let mut b = Both::new(
        json!([edit_reply("a - b", "a + b"), "Done."]),
        None,
        vec![everything],
        true,
    );
    let mut stream = Stream::open(&b.console);
    b.app.submit("fix add", Instant::now());
    b.until("the confirm", |a| a.confirm.is_some());
    assert!(b.screen().contains("SECURITY CONFIRM"), "{}", b.screen());
    let card = stream.confirm();
    assert_eq!(card["kind"], "security", "{card}");
    let url = format!("/api/confirm/{}", card["id"]);
    let (status, body) = post(&b.console, &url, &json!({"answer": "always"}));
    assert_eq!(status, 403, "{body}");
    b.key(KeyCode::Char('a'));
    assert!(b.app.confirm.is_some(), "`a` answered a security confirm");
    assert!(
        b.screen()
            .contains("standing approvals cannot answer a security confirm"),
        "{}",
        b.screen()
    );
    assert!(!b.dir.path().join(".user-config.toml").exists());
    b.key(KeyCode::Char('y'));
    let closed = stream.next("the card closed", |m| {
        m["k"] == "answered" && m["id"] == card["id"]
    });
    assert_eq!(closed["by"], "the terminal");
    b.until("the task to end", |a| !a.running());
    assert_eq!(b.calc(), "def add(a, b):\n    return a + b\n");
}

/// `nib exec --console`: the URL is printed on stderr, and a confirm no
/// policy answers (a Write confirm without --approve) waits for the page.
#[test]
fn nib_exec_with_a_console_waits_for_the_pages_answer() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("calc.py"), CALC).unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!([edit_reply("a - b", "a + b"), "Fixed add."]).to_string(),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_nib"))
        .args([
            "exec",
            "fix add",
            "--console",
            "--provider",
            "scripted",
            "--model",
        ])
        .arg(&script)
        .arg("--root")
        .arg(&ws)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let url = loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "no URL on stderr:\n{said}"
        );
        said.push_str(&line);
        if let Some(at) = line.find("http://127.0.0.1:") {
            break line[at..].split_whitespace().next().unwrap().to_string();
        }
    };
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, token) = rest.split_once("/?token=").unwrap();
    let page = super::Remote {
        addr: format!("127.0.0.1:{port}").parse::<SocketAddr>().unwrap(),
        token: token.to_string(),
    };
    let mut stream = Stream::open(&page);
    let card = stream.confirm();
    assert_eq!(card["path"], "calc.py", "{card}");
    let (status, body) = post(
        &page,
        &format!("/api/confirm/{}", card["id"]),
        &json!({"answer": "yes"}),
    );
    assert_eq!(status, 200, "{body}");
    // The rest of stderr, then the exit.
    let rest: Vec<String> = err.lines().map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    let rest = rest.join("\n");
    assert_eq!(out.status.code(), Some(0), "{said}{rest}");
    assert!(
        rest.contains("waits for an answer in the console: fs-edit calc.py"),
        "{rest}"
    );
    assert!(rest.contains("answered in the browser: yes"), "{rest}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Fixed add.\n");
    assert_eq!(
        std::fs::read_to_string(ws.join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );
}
