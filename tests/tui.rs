//! The terminal client: snapshots of every confirm state (TestBackend +
//! insta, two sizes, dark and light), key-driven tests of the real state
//! machine against the real engine and the scripted model over HTTP, the
//! slash command table, and a tmux end-to-end run of `nib demo` (ignored
//! unless asked for: `cargo test --test tui -- --ignored` needs tmux).

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use nib::files::Workspace;
use nib::guard::approvals::Approval;
use nib::guard::{ConfirmKind, Reason};
use nib::model::scripted::{Script, ScriptedServer};
use nib::prim::ConfirmAnswer;
use nib::tui::app::commands::{COMMANDS, find};
use nib::tui::app::{Action, App, AppOptions, ConfirmMode};
use nib::tui::demo;
use nib::tui::style::Theme;
use nib::tui::worker::{PendingConfirm, Session, UiEvent};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// A workspace with files, a scripted server and the client on them.
struct Fixture {
    dir: tempfile::TempDir,
    config: tempfile::TempDir,
    server: ScriptedServer,
    app: App,
}

impl Fixture {
    /// calc.py with its bug, the task "fix add" submitted, and the model's
    /// one fs-edit waiting at its confirm; `answer` is the model's reply
    /// after the edit's result.
    fn at_fix_add_confirm(answer: &str, arm: Duration) -> Fixture {
        let mut f = Fixture::new(
            json!([edit_reply("calc.py", "a - b", "a + b"), answer]),
            &[("calc.py", CALC)],
            arm,
        );
        f.app.submit("fix add", Instant::now());
        f.until_confirm();
        f
    }

    fn new(replies: Value, files: &[(&str, &str)], arm: Duration) -> Fixture {
        nib::engine::init_process();
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            let path = dir.path().join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::write(path, text).expect("write");
        }
        let config = tempfile::tempdir().expect("config dir");
        let script = Script::from_json(&replies.to_string()).expect("script");
        let server = ScriptedServer::start(script).expect("server");
        let ws = Workspace::open(dir.path()).expect("workspace");
        let (tx, rx) = channel();
        let session =
            Session::start(ws, demo::agent_config(&server), Vec::new(), tx).expect("session");
        let app = App::new(
            session,
            rx,
            AppOptions {
                theme: Theme::DARK,
                arm_delay: arm,
                config_path: Some(config.path().join("nib").join("config.toml")),
            },
        );
        Fixture {
            dir,
            config,
            server,
            app,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// Pump the worker's events until `done` holds.
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

    fn until_confirm(&mut self) {
        self.until("a confirm", |a| a.confirm.is_some());
    }

    fn until_idle(&mut self) {
        self.until("the task to end", |a| !a.running());
    }

    fn key(&mut self, code: KeyCode) -> Action {
        self.app
            .handle_key(KeyEvent::new(code, KeyModifiers::NONE), Instant::now())
    }

    fn typed(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// The tool messages the model received, in order.
    fn tool_messages(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .flat_map(|r| {
                r.get("messages")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .filter_map(|m| m.get("content").and_then(Value::as_str).map(str::to_string))
            .collect()
    }

    fn screen(&self, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        term.draw(|f| self.app.render(f.area(), f.buffer_mut(), far_future()))
            .expect("draw");
        format!("{}", term.backend())
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

fn edit_reply(path: &str, old: &str, new: &str) -> Value {
    json!({"tool_calls": [{"name": "fs-edit", "arguments": {"path": path, "old": old, "new": new}}]})
}

// ---------------------------------------------------------------- snapshots

/// A client with no task, showing a confirm built from real guard-shaped
/// data, for the snapshots.
fn confirm_app(
    kind: ConfirmKind,
    theme: Theme,
) -> (App, Receiver<ConfirmAnswer>, tempfile::TempDir) {
    nib::engine::init_process();
    let dir = tempfile::tempdir().expect("temp dir");
    let server = ScriptedServer::start(Script::default()).expect("server");
    let ws = Workspace::open(dir.path()).expect("workspace");
    let (tx, rx) = channel();
    let session = Session::start(ws, demo::agent_config(&server), Vec::new(), tx).expect("session");
    let mut app = App::new(
        session,
        rx,
        AppOptions {
            theme,
            arm_delay: Duration::ZERO,
            config_path: Some(PathBuf::from("/home/user/.config/nib/config.toml")),
        },
    );
    app.status.model = "scripted-demo".into();
    app.status.tokens_in = 12_345;
    app.status.tokens_out = 678;
    app.status.tokens_cached = 9_000;
    app.status.context = 2_345;
    app.status.step = 3;
    let (reply, answers) = channel();
    let pending = match kind {
        ConfirmKind::Write => PendingConfirm {
            kind,
            tool: "fs-edit".into(),
            form: "(fs-edit \"calc.py\" \"\" \"\" #f '(((\"old\" . \"    return a - b\") (\"new\" . \"    return a + b\"))))".into(),
            path: Some("calc.py".into()),
            reasons: vec![Reason {
                rule: "effect",
                param: "fs-edit".into(),
                message: "fs-edit has effect write".into(),
                line: None,
            }],
            diff: Some(CALC_DIFF.into()),
            proposed: Some("def add(a, b):\n    return a + b\n".into()),
            suggestion: Some(Approval {
                tools: vec!["fs-edit".into(), "fs-write".into()],
                paths: Some("calc.py".into()),
                command: None,
            }),
            again: None,
            reply: reply.into(),
        },
        ConfirmKind::Security => PendingConfirm {
            kind,
            tool: "fs-write".into(),
            form: "(fs-write \"notes.txt\" \"deploy notes\\nAWS_ACCESS_KEY_ID=AKIAQWERTYUIOPASDFGH\\n\")".into(),
            path: Some("notes.txt".into()),
            reasons: vec![
                Reason {
                    rule: "secret-scan",
                    param: "content".into(),
                    message: "an AWS access key id (AKIAQWERTYUIOPASDFGH) at line 2".into(),
                    line: None,
                },
                Reason {
                    rule: "secret-ledger",
                    param: "content".into(),
                    message: "holds a value read from .env, a protected file".into(),
                    line: None,
                },
            ],
            diff: Some(
                "--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1,3 @@\n+deploy notes\n+AWS_ACCESS_KEY_ID=AKIAQWERTYUIOPASDFGH\n+region = eu-west-1\n"
                    .into(),
            ),
            proposed: Some("deploy notes\nAWS_ACCESS_KEY_ID=AKIAQWERTYUIOPASDFGH\nregion = eu-west-1\n".into()),
            suggestion: None,
            again: None,
            reply: reply.into(),
        },
    };
    app.on_event(UiEvent::Confirm(Box::new(pending)), Instant::now());
    (app, answers, dir)
}

const CALC_DIFF: &str = "--- a/calc.py\n+++ b/calc.py\n@@ -2,8 +2,8 @@\n \n \n def add(a, b):\n-    return a - b\n+    return a + b\n \n \n def mean(values):\n-    return sum(values) / len(values) + 1\n+    return sum(values) / len(values)\n";

fn render(app: &App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    term.draw(|f| app.render(f.area(), f.buffer_mut(), far_future()))
        .expect("draw");
    term
}

/// Every state, at two sizes, as text (the same in both themes), and with
/// styles in the dark and light themes at both sizes.
fn snapshot_states(name: &str, kind: ConfirmKind, keys: &[KeyCode]) {
    for theme in [Theme::DARK, Theme::LIGHT] {
        let (mut app, _answers, _dir) = confirm_app(kind, theme);
        for k in keys {
            app.handle_key(KeyEvent::new(*k, KeyModifiers::NONE), far_future());
        }
        let tone = if theme.light { "light" } else { "dark" };
        for (w, h) in [(80, 24), (120, 40)] {
            let term = render(&app, w, h);
            if !theme.light {
                insta::assert_snapshot!(format!("{name}_{w}x{h}"), term.backend());
            }
            insta::assert_snapshot!(
                format!("{name}_{w}x{h}_{tone}_styles"),
                format!("{:?}", term.backend().buffer())
            );
        }
    }
}

#[test]
fn snapshot_write_confirm() {
    snapshot_states("write_confirm", ConfirmKind::Write, &[]);
}

#[test]
fn snapshot_no_color() {
    for (name, kind) in [
        ("write", ConfirmKind::Write),
        ("security", ConfirmKind::Security),
    ] {
        let (app, _a, _d) = confirm_app(kind, Theme::PLAIN);
        let term = render(&app, 80, 24);
        let styles = format!("{:?}", term.backend().buffer());
        assert!(!styles.contains("Rgb"), "a colour under NO_COLOR: {styles}");
        insta::assert_snapshot!(format!("{name}_confirm_80x24_plain_styles"), styles);
    }
}

#[test]
fn snapshot_security_confirm() {
    snapshot_states("security_confirm", ConfirmKind::Security, &[]);
    let (app, _a, _d) = confirm_app(ConfirmKind::Security, Theme::DARK);
    let screen = format!("{}", render(&app, 120, 40).backend());
    assert!(screen.contains("SECURITY CONFIRM"), "{screen}");
    assert!(
        !screen.contains("QWERTYUIOPASDFGH"),
        "a secret shown: {screen}"
    );
    assert!(screen.contains("AKIA••••"), "{screen}");
    // The reason naming line 2 sits right under the added line 2.
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("2 +AWS_ACCESS_KEY_ID"))
        .expect("line 2 shown");
    assert!(lines[at + 1].contains("⚠ secret-scan"), "{screen}");
}

#[test]
fn snapshot_reject_with_reason_input() {
    let mut keys = vec![KeyCode::Char('n')];
    keys.extend("use a fixture instead".chars().map(KeyCode::Char));
    snapshot_states("reject_reason", ConfirmKind::Write, &keys);
}

#[test]
fn snapshot_standing_approval_scope() {
    snapshot_states("approval_scope", ConfirmKind::Write, &[KeyCode::Char('a')]);
}

#[test]
fn snapshot_full_screen_diff() {
    snapshot_states("full_screen", ConfirmKind::Write, &[KeyCode::Char('f')]);
}

#[test]
fn snapshot_split_view() {
    snapshot_states("split_view", ConfirmKind::Write, &[KeyCode::Char('t')]);
}

#[test]
fn snapshot_transcript_cards_and_idle_screen() {
    use nib::model::StreamEvent;
    let (mut app, _a, _d) = confirm_app(ConfirmKind::Write, Theme::DARK);
    app.handle_key(
        KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE),
        far_future(),
    );
    let now = Instant::now();
    let events = vec![
        UiEvent::Stream(StreamEvent::ReasoningDelta("thinking about it".into())),
        UiEvent::Stream(StreamEvent::TextDelta(
            "## Plan\n- read `calc.py`\n- fix it\n```python\nx = 1\n```\nKey: AKIAQWERTYUIOPASDFGH\n".into(),
        )),
        UiEvent::Log(entry(json!({"ev": "tool.call", "name": "fs-read", "positional": "(fs-read \"calc.py\")"}))),
        UiEvent::Log(entry(json!({"ev": "tool.result", "name": "fs-read", "ok": true, "path": "calc.py", "summary": "     1\tdef add"}))),
        UiEvent::Log(entry(json!({"ev": "tool.call", "name": "fs-edit", "positional": "(fs-edit \"calc.py\" \"a * b\" \"a + b\")"}))),
        UiEvent::Log(entry(json!({"ev": "tool.result", "name": "fs-edit", "ok": false, "summary": "edit 1 of 1 failed, so nothing was written: old was not found in calc.py", "hint": "the nearest lines:\n  2 |     return a - b"}))),
        UiEvent::Log(entry(json!({"ev": "tool.result", "name": "fs-edit", "ok": true, "summary": "edit 1 already applied; nothing written"}))),
        UiEvent::Log(entry(json!({"ev": "tool.result", "name": "shell", "ok": false, "refused": true, "summary": "shell was refused: the write was not approved"}))),
        UiEvent::Stream(StreamEvent::TextDelta("Almost done".into())),
    ];
    for ev in events {
        app.on_event(ev, now);
    }
    let lines = app.take_new_history(80);
    let mut term = Terminal::new(TestBackend::new(80, lines.len() as u16)).expect("terminal");
    term.draw(|f| {
        ratatui::widgets::Widget::render(
            ratatui::widgets::Paragraph::new(lines),
            f.area(),
            f.buffer_mut(),
        )
    })
    .expect("draw");
    insta::assert_snapshot!("transcript_cards_80", term.backend());
    insta::assert_snapshot!("idle_80x4", render(&app, 80, 4).backend());
}

#[test]
fn a_security_confirm_cannot_be_answered_by_a_standing_approval() {
    let (mut app, answers, _d) = confirm_app(ConfirmKind::Security, Theme::DARK);
    app.handle_key(
        KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE),
        far_future(),
    );
    let c = app.confirm.as_ref().expect("still open");
    assert_eq!(c.mode, ConfirmMode::Keys);
    assert!(answers.try_recv().is_err(), "answered by `a`");
    let screen = format!("{}", render(&app, 80, 24).backend());
    assert!(
        screen.contains("standing approvals cannot answer a security confirm"),
        "{screen}"
    );
}

// ---------------------------------------------------------- key-driven

const CALC: &str = "def add(a, b):\n    return a - b\n";

#[test]
fn approve_writes_the_file() {
    let mut f = Fixture::at_fix_add_confirm("fixed", Duration::ZERO);
    let screen = f.screen(80, 24);
    assert!(screen.contains("fs-edit calc.py (+1 -1)"), "{screen}");
    f.key(KeyCode::Char('y'));
    f.until_idle();
    assert_eq!(f.read("calc.py"), "def add(a, b):\n    return a + b\n");
    let t = f.app.transcript_text();
    assert!(t.contains("✓ approved fs-edit calc.py"), "{t}");
    assert!(t.contains("└ ok: applied 1 of 1 edits to calc.py"), "{t}");
    assert!(t.contains("■ done after 2 steps"), "{t}");
}

#[test]
fn reject_with_a_reason_tells_the_model() {
    let mut f = Fixture::at_fix_add_confirm("ok, I will not", Duration::ZERO);
    f.key(KeyCode::Char('n'));
    f.typed("keep the subtraction, fix the test");
    f.key(KeyCode::Enter);
    f.until_idle();
    assert_eq!(f.read("calc.py"), CALC, "written despite the rejection");
    let tools = f.tool_messages();
    assert!(
        tools.iter().any(|t| t.contains("was refused")
            && t.contains("The user said why: keep the subtraction, fix the test")),
        "{tools:?}"
    );
    assert!(
        f.app
            .transcript_text()
            .contains("✗ rejected fs-edit calc.py: keep the subtraction")
    );
}

#[test]
fn a_standing_approval_is_saved_with_its_scope_and_answers_the_next_write() {
    let mut f = Fixture::new(
        json!([
            edit_reply("src/calc.py", "a - b", "a + b"),
            edit_reply("src/calc.py", "def add", "def plus"),
            "done"
        ]),
        &[("src/calc.py", CALC)],
        Duration::ZERO,
    );
    f.app.submit("fix add", Instant::now());
    f.until_confirm();
    f.key(KeyCode::Char('a'));
    let screen = f.screen(100, 30);
    assert!(
        screen.contains("always allow fs-edit and fs-write under src/**"),
        "the scope is not shown before saving: {screen}"
    );
    assert!(screen.contains("config.toml"), "{screen}");
    let config = f.config.path().join("nib").join("config.toml");
    assert!(!config.exists(), "saved before the user said yes");
    f.key(KeyCode::Char('y'));
    f.until_idle();
    let saved = std::fs::read_to_string(&config).expect("config saved");
    let parsed = nib::settings::UserConfig::parse(&saved).expect("config parses");
    assert_eq!(parsed.approvals.len(), 1, "{saved}");
    assert_eq!(parsed.approvals[0].paths.as_deref(), Some("src/**"));
    assert_eq!(f.read("src/calc.py"), "def plus(a, b):\n    return a + b\n");
    let t = f.app.transcript_text();
    assert!(
        t.contains("approved by standing approval (fs-edit and fs-write under src/**)"),
        "{t}"
    );
    // The event log says who answered each confirm.
    let events = std::fs::read_to_string(f.app.session().log.path()).expect("events");
    let answers: Vec<Value> = events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["ev"] == "confirm.answer")
        .collect();
    assert_eq!(answers.len(), 2, "{events}");
    assert_eq!(answers[0]["by"], "user");
    assert_eq!(answers[1]["by"], "standing-approval");
    // Nothing in the workspace holds the approval.
    assert!(!f.path(".nib/config.toml").exists());
}

#[test]
fn edit_before_approve_writes_the_users_text_and_tells_the_model() {
    let mut f = Fixture::at_fix_add_confirm("thanks", Duration::ZERO);
    let Action::Edit(path) = f.key(KeyCode::Char('e')) else {
        panic!("e did not ask for the editor");
    };
    let result = nib::tui::run_editor_with("sed -i 's/a + b/b + a/'", &path);
    f.app.edit_done(result);
    f.until_idle();
    assert_eq!(f.read("calc.py"), "def add(a, b):\n    return b + a\n");
    let tools = f.tool_messages();
    let note = tools
        .iter()
        .find(|t| t.contains("The user changed your proposed text for calc.py"))
        .unwrap_or_else(|| panic!("the model was not told: {tools:?}"));
    assert!(
        note.contains("-    return a + b") && note.contains("+    return b + a"),
        "{note}"
    );
    assert!(f.app.transcript_text().contains("(with your edits)"));
}

#[test]
fn an_edit_is_not_written_over_a_file_changed_while_the_confirm_was_open() {
    let mut f = Fixture::at_fix_add_confirm("ok", Duration::ZERO);
    std::fs::write(f.path("calc.py"), "changed by hand\n").expect("write");
    let Action::Edit(path) = f.key(KeyCode::Char('e')) else {
        panic!("e did not ask for the editor");
    };
    let result = nib::tui::run_editor_with("sed -i 's/a + b/b + a/'", &path);
    f.app.edit_done(result);
    f.until_idle();
    assert_eq!(f.read("calc.py"), "changed by hand\n");
    let tools = f.tool_messages();
    assert!(
        tools
            .iter()
            .any(|t| t.contains("changed on disk while the confirm was open")),
        "{tools:?}"
    );
}

#[test]
fn a_file_changed_while_the_confirm_was_open_is_confirmed_again_saying_why() {
    let mut f = Fixture::at_fix_add_confirm("ok", Duration::ZERO);
    assert!(!f.screen(100, 30).contains("asked again"));
    // Someone else adds a line; the edit still applies, on their text.
    std::fs::write(f.path("calc.py"), format!("# theirs\n{CALC}")).expect("write");
    f.key(KeyCode::Char('y'));
    f.until_confirm();
    let screen = f.screen(100, 30);
    assert!(
        screen.contains("asked again") && screen.contains("changed on disk"),
        "{screen}"
    );
    assert!(
        screen.contains("# theirs"),
        "the new diff is on their text: {screen}"
    );
    f.key(KeyCode::Char('y'));
    f.until_idle();
    assert_eq!(
        f.read("calc.py"),
        "# theirs\ndef add(a, b):\n    return a + b\n"
    );
}

#[test]
fn esc_interrupts_a_streaming_reply_and_the_session_goes_on() {
    let long = "word ".repeat(400);
    let mut f = Fixture::new(
        json!([
            {"text": long, "fragment": 5, "faults": [{"delay_between_chunks_ms": 20}]},
            "second task done"
        ]),
        &[],
        Duration::ZERO,
    );
    f.app.submit("talk", Instant::now());
    f.until("the stream to start", |a| {
        a.transcript_text().contains("word")
    });
    f.key(KeyCode::Esc);
    f.until_idle();
    let t = f.app.transcript_text();
    assert!(t.contains("■ interrupted; the session goes on"), "{t}");
    f.app.submit("again", Instant::now());
    f.until_idle();
    let t = f.app.transcript_text();
    assert!(t.contains("second task done"), "{t}");
    // The second task continues the first's conversation.
    let last = f.server.requests().pop().expect("a request");
    let users: Vec<String> = last
        .get("messages")
        .and_then(Value::as_array)
        .map(|m| {
            m.iter()
                .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                .filter_map(|m| m.get("content").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(users, ["talk", "again"], "{users:?}");
}

#[test]
fn keys_are_ignored_right_after_a_confirm_appears() {
    let mut f = Fixture::at_fix_add_confirm("fixed", Duration::from_millis(300));
    let shown = f.app.confirm.as_ref().map(|c| c.shown_at).expect("shown");
    // A stray `y` inside the window does nothing.
    f.app.handle_key(
        KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE),
        shown + Duration::from_millis(100),
    );
    assert!(f.app.confirm.is_some(), "a stray key approved the confirm");
    assert!(!f.app.armed(shown + Duration::from_millis(100)));
    f.app.handle_key(
        KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE),
        shown + Duration::from_millis(301),
    );
    assert!(f.app.confirm.is_none());
    f.until_idle();
    assert_eq!(f.read("calc.py"), "def add(a, b):\n    return a + b\n");
}

#[test]
fn slash_undo_restores_the_last_write() {
    let mut f = Fixture::at_fix_add_confirm("fixed", Duration::ZERO);
    f.key(KeyCode::Char('y'));
    f.until_idle();
    assert_ne!(f.read("calc.py"), CALC);
    f.typed("/undo");
    f.key(KeyCode::Enter);
    assert_eq!(f.read("calc.py"), CALC);
    assert!(f.app.transcript_text().contains("undo: restored calc.py"));
}

#[test]
fn a_failed_edit_shows_its_hint_and_a_session_can_be_resumed() {
    let mut f = Fixture::new(
        json!([
            edit_reply("calc.py", "return a * b", "return a + b"),
            "I see"
        ]),
        &[("calc.py", CALC)],
        Duration::ZERO,
    );
    f.app.submit("fix add", Instant::now());
    f.until_idle();
    let t = f.app.transcript_text();
    assert!(t.contains("└ error:"), "{t}");
    // The hint quotes the nearest real line.
    assert!(t.contains("return a - b"), "{t}");
    let events = f.app.session().log.path().to_path_buf();
    let mut g = Fixture::new(json!([]), &[], Duration::ZERO);
    nib::tui::replay(&mut g.app, &events);
    let resumed = g.app.transcript_text();
    assert!(resumed.contains("── resumed"), "{resumed}");
    assert!(
        resumed.contains("● (fs-edit \"calc.py\" \"return a * b\""),
        "{resumed}"
    );
    assert!(resumed.contains("I see"), "{resumed}");
    // The person's prompt comes back too, as it was typed.
    assert!(resumed.contains("› fix add"), "{resumed}");
}

/// A resumed transcript has the prompts, the narration before tool
/// calls, and the answer rendered (markdown, not its raw marks).
#[test]
fn a_resumed_transcript_has_prompts_narration_and_rendered_answers() {
    let mut f = Fixture::new(
        json!([
            {"text": "Let me read it first.", "tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}]},
            "## Fixed\n- the `add` function"
        ]),
        &[("calc.py", CALC)],
        Duration::ZERO,
    );
    f.app.submit("look at calc", Instant::now());
    f.until_idle();
    let events = f.app.session().log.path().to_path_buf();
    let mut g = Fixture::new(json!([]), &[], Duration::ZERO);
    nib::tui::replay(&mut g.app, &events);
    let resumed = g.app.transcript_text();
    assert!(resumed.contains("› look at calc"), "{resumed}");
    assert!(resumed.contains("Let me read it first."), "{resumed}");
    assert!(resumed.contains("\nFixed\n• the add function"), "{resumed}");
    assert!(
        !resumed.contains("## Fixed") && !resumed.contains("`add`"),
        "{resumed}"
    );
    assert!(
        resumed.contains("■ done after") || resumed.contains("── end"),
        "{resumed}"
    );
}

/// A server that cannot stream tool calls: the person is told once, in
/// the transcript, and the task's end is said in words.
#[test]
fn a_stream_fallback_is_a_note_and_the_end_is_said_in_words() {
    let mut f = Fixture::new(
        json!([
            {"tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}],
             "server": {"stream_tools": false}},
            {"text": "done", "server": {"stream_tools": false}}
        ]),
        &[("calc.py", CALC)],
        Duration::ZERO,
    );
    f.app.submit("read", Instant::now());
    f.until_idle();
    let t = f.app.transcript_text();
    assert_eq!(
        t.matches("note: the server cannot stream replies").count(),
        1,
        "{t}"
    );
    assert!(t.contains("■ done after 2 steps"), "{t}");
    assert!(!t.contains("step(s)") && !t.contains("1 steps"), "{t}");
}

/// Esc's "interrupting…" goes when the task has ended.
#[test]
fn the_interrupting_notice_goes_with_the_task() {
    let long = "word ".repeat(400);
    let mut f = Fixture::new(
        json!([{"text": long, "fragment": 5, "faults": [{"delay_between_chunks_ms": 20}]}]),
        &[],
        Duration::ZERO,
    );
    f.app.submit("talk", Instant::now());
    f.until("the stream to start", |a| {
        a.transcript_text().contains("word")
    });
    f.key(KeyCode::Esc);
    assert!(f.screen(80, 6).contains("interrupting…"));
    f.until_idle();
    assert!(
        !f.screen(80, 6).contains("interrupting…"),
        "{}",
        f.screen(80, 6)
    );
}

/// A command's confirm has no diff, so no split/unified key.
#[test]
fn a_shell_confirm_offers_no_split_view() {
    let mut f = Fixture::new(
        json!([{"tool_calls": [{"name": "shell", "arguments": {"command": "echo hi"}}]}, "ok"]),
        &[],
        Duration::ZERO,
    );
    f.app.submit("say hi", Instant::now());
    f.until_confirm();
    let screen = f.screen(100, 12);
    assert!(screen.contains("y approve"), "{screen}");
    assert!(!screen.contains("split"), "{screen}");
    f.key(KeyCode::Char('n'));
    f.key(KeyCode::Enter);
    f.until_idle();
}

/// /cost says why a cost is unknown and how to give a price; /status
/// names the model, the session and how to resume it.
#[test]
fn cost_and_status_commands_say_what_they_know() {
    let mut f = Fixture::new(json!(["hi"]), &[], Duration::ZERO);
    f.app.submit("hello", Instant::now());
    f.until_idle();
    slash(&mut f, "cost");
    slash(&mut f, "status");
    let t = f.app.transcript_text();
    assert!(
        t.contains("cost: unknown, no price for scripted-demo"),
        "{t}"
    );
    assert!(t.contains("[prices]"), "{t}");
    assert!(
        t.contains("model: scripted-demo (openai, http://127.0.0.1:"),
        "{t}"
    );
    assert!(t.contains("nib --resume"), "{t}");
}

#[test]
fn ctrl_c_twice_quits() {
    let mut f = Fixture::new(json!(["hi"]), &[], Duration::ZERO);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let now = Instant::now();
    assert_eq!(f.app.handle_key(ctrl_c, now), Action::None);
    assert!(f.screen(80, 6).contains("Ctrl-C again to quit"));
    assert_eq!(
        f.app.handle_key(ctrl_c, now + Duration::from_millis(300)),
        Action::Quit
    );
}

// ------------------------------------------------------- slash commands

/// Type `/line` and Enter into the client.
fn slash(f: &mut Fixture, line: &str) -> Action {
    f.typed(&format!("/{line}"));
    f.key(KeyCode::Enter)
}

#[test]
fn help_lists_exactly_the_table_commands() {
    let mut f = Fixture::new(json!([]), &[], Duration::ZERO);
    slash(&mut f, "help");
    let text = f.app.transcript_text();
    let listed: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  /"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let table: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
    assert_eq!(listed, table, "{text}");
    for c in COMMANDS {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("  {} ", c.usage())))
            .unwrap_or_else(|| panic!("no line for {}: {text}", c.usage()));
        assert!(line.contains(c.doc), "{line}");
        for a in c.aliases {
            assert!(line.contains(&format!("/{a}")), "{line}");
        }
    }
    insta::assert_snapshot!("help", text);
}

#[test]
fn an_unknown_command_says_so_and_suggests_the_nearest() {
    let mut f = Fixture::new(json!([]), &[], Duration::ZERO);
    assert_eq!(slash(&mut f, "modle qwen3"), Action::None);
    assert_eq!(slash(&mut f, "frobnicate"), Action::None);
    assert_eq!(slash(&mut f, "clear all"), Action::None);
    let text = f.app.transcript_text();
    assert_eq!(
        text,
        "unknown command /modle; did you mean /model? /help lists them\n\
         unknown command /frobnicate; /help lists them\n\
         /clear takes no argument; type /clear alone"
    );
    // Nothing ran: the model is unchanged.
    assert_eq!(f.app.status.model, "scripted-demo");
}

#[test]
fn each_command_is_reachable_by_name_and_alias() {
    let mut reached = Vec::new();
    for c in COMMANDS {
        for name in std::iter::once(c.name).chain(c.aliases.iter().copied()) {
            assert_eq!(find(name).map(|c| c.name), Some(c.name), "/{name}");
            let mut f = Fixture::new(json!([]), &[], Duration::ZERO);
            let action = slash(&mut f, name);
            let text = f.app.transcript_text();
            assert!(!text.contains("unknown command"), "/{name}: {text}");
            // What each handler visibly does; a new command needs its line here.
            let did = match c.name {
                "undo" => text.starts_with("undo: "),
                "model" => text.starts_with("model: scripted-demo"),
                "strategy" => text == "strategy: default (shipped)",
                "approvals" => text.starts_with("no standing approvals"),
                "clear" => f.screen(80, 4).contains("cleared"),
                "help" => text.contains("commands:"),
                "cost" => text.starts_with("cost: unknown, no price for scripted-demo"),
                "status" => text.starts_with("model: scripted-demo"),
                "quit" => action == Action::Quit && f.app.quitting(),
                other => panic!("/{other}: no expected effect written in this test"),
            };
            assert!(did, "/{name} did not run {}: {text}", c.name);
            reached.push(c.name);
        }
    }
    reached.dedup();
    assert_eq!(reached.len(), COMMANDS.len());
}

#[test]
fn a_command_with_an_argument_passes_it_to_its_handler() {
    let mut f = Fixture::new(json!([]), &[], Duration::ZERO);
    slash(&mut f, "model   qwen3:8b ");
    slash(&mut f, "strategy strategies/mine.scm");
    assert_eq!(f.app.status.model, "qwen3:8b");
    let cfg = f.app.session().cfg.lock().expect("config");
    assert_eq!(cfg.model.model, "qwen3:8b");
    assert_eq!(
        cfg.strategy.as_deref(),
        Some(std::path::Path::new("strategies/mine.scm"))
    );
}

/// docs/tui.md's table of slash commands is the command table, word for
/// word (backticks aside).
#[test]
fn the_documented_slash_commands_are_the_table() {
    let doc = include_str!("../docs/tui.md");
    let section = doc
        .split("## Slash commands")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/tui.md has a Slash commands section");
    let documented: Vec<(String, String)> = section
        .lines()
        .filter(|l| l.starts_with("| `/"))
        .map(|l| {
            let cells: Vec<String> = l.split('|').map(|c| c.trim().replace('`', "")).collect();
            (cells[1].clone(), cells[2].clone())
        })
        .collect();
    let table: Vec<(String, String)> = COMMANDS
        .iter()
        .map(|c| (c.usage(), c.doc.to_string()))
        .collect();
    assert_eq!(documented, table);
}

// ----------------------------------------------------------------- demo

/// Runs the demo's script through the client, approving the edit and the
/// tests; returns the fixture at the credential step's confirm.
fn demo_until_leak() -> (Fixture, demo::FakeKey) {
    let key = demo::FakeKey::generate(42);
    let script = demo::script(&key);
    let replies: Vec<Value> = serde_json::from_str(
        &include_str!("../examples/demo/script.json")
            .replace("{{AK}}", &key.id)
            .replace("{{AS}}", &key.secret),
    )
    .expect("demo script");
    assert_eq!(replies.len(), script.replies.len());
    let mut f = Fixture::new(Value::Array(replies), &[], Duration::ZERO);
    demo::prepare(f.dir.path(), &key).expect("demo project");
    f.app.submit(demo::TASK, Instant::now());
    f.until_confirm();
    let first = f.app.confirm.as_ref().expect("edit confirm");
    assert_eq!(first.pending.tool, "fs-edit");
    let diff = first.pending.diff.clone().unwrap_or_default();
    assert_eq!(
        diff.lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .count(),
        2,
        "{diff}"
    );
    f.key(KeyCode::Char('y'));
    f.until_confirm();
    assert_eq!(
        f.app.confirm.as_ref().map(|c| c.pending.tool.as_str()),
        Some("shell")
    );
    f.key(KeyCode::Char('y'));
    f.until_confirm();
    (f, key)
}

#[test]
fn the_demo_fixes_the_code_and_the_leak_is_refused() {
    let (mut f, key) = demo_until_leak();
    let fixed = f.read("calc.py");
    assert!(
        fixed.contains("return a + b") && fixed.contains("/ len(values)\n"),
        "{fixed}"
    );
    let c = f.app.confirm.as_ref().expect("leak confirm");
    assert_eq!(c.pending.path.as_deref(), Some("notes.txt"));
    let screen = f.screen(120, 40);
    assert!(
        !screen.contains(&key.id[4..]),
        "the key is shown unmasked: {screen}"
    );
    f.key(KeyCode::Char('n'));
    f.key(KeyCode::Enter);
    f.until_idle();
    assert!(!f.path("notes.txt").exists());
    let t = f.app.transcript_text();
    assert!(
        !t.contains(&key.id[4..]) && !t.contains(&key.secret[4..]),
        "a secret in the transcript: {t}"
    );
}

#[test]
fn the_demo_leak_needs_a_security_confirm() {
    let (f, _key) = demo_until_leak();
    let c = f.app.confirm.as_ref().expect("leak confirm");
    assert_eq!(c.pending.kind, ConfirmKind::Security);
    assert!(f.screen(120, 40).contains("SECURITY CONFIRM"));
}

// ----------------------------------------------------------------- tmux

struct Tmux {
    socket: String,
}

impl Tmux {
    /// A tmux server of its own (`socket`) with a 100x30 session running
    /// `command`.
    fn start(socket: String, command: &str) -> Tmux {
        let tmux = Tmux { socket };
        tmux.session((100, 30), command);
        tmux
    }

    /// A detached session `t` of `(columns, rows)` running `command`, with
    /// a short escape time so Esc is a key of its own.
    fn session(&self, (columns, rows): (u16, u16), command: &str) {
        let (columns, rows) = (columns.to_string(), rows.to_string());
        self.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &columns,
            "-y",
            &rows,
            command,
        ]);
        self.run(&["set", "-g", "escape-time", "10"]);
    }

    fn run(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"])
    }

    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {text:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The tmux tests are `#[ignore]`d (a plain `cargo test` does not need
/// tmux, and must not pass them silently); run with `--ignored`, they
/// fail here when tmux is missing rather than pass.
fn require_tmux() {
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v tmux"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "tmux is not installed: this test runs nib demo in a tmux pane; install tmux \
         (apt-get install tmux) or run without --ignored"
    );
}

#[test]
#[ignore = "needs tmux"]
fn tmux_runs_nib_demo_end_to_end() {
    require_tmux();
    let scratch = tempfile::tempdir().expect("temp dir");
    let project = scratch.path().join("demo");
    let config = scratch.path().join("config");
    let bin = env!("CARGO_BIN_EXE_nib");
    let command = format!(
        "env TERM=xterm-256color XDG_CONFIG_HOME={} {bin} demo --dir {} --arm-ms 50; sleep 60",
        config.display(),
        project.display()
    );
    let tmux = Tmux::start(format!("nib-e2e-{}", std::process::id()), &command);
    tmux.wait_for("fs-edit calc.py (+2 -2)");
    std::thread::sleep(Duration::from_millis(100));
    // `f`: the diff full screen, on the alternate screen; `f` again: back.
    let alternate = || tmux.run(&["display", "-p", "-t", "t", "#{alternate_on}"]);
    assert_eq!(alternate().trim(), "0");
    tmux.run(&["send-keys", "-t", "t", "f"]);
    let start = Instant::now();
    while alternate().trim() != "1" {
        assert!(
            start.elapsed() < WAIT,
            "f did not open the full-screen diff"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.run(&["send-keys", "-t", "t", "f"]);
    while alternate().trim() != "0" {
        assert!(
            start.elapsed() < WAIT,
            "f did not close the full-screen diff"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.run(&["send-keys", "-t", "t", "y"]);
    tmux.wait_for("applied 2 of 2 edits to calc.py");
    let calc = std::fs::read_to_string(project.join("calc.py")).expect("calc.py");
    assert!(calc.contains("return a + b"), "{calc}");
    let screen = tmux.wait_for("╭ shell");
    // A command has no diff to split.
    assert!(!screen.contains("t split"), "{screen}");
    std::thread::sleep(Duration::from_millis(100));
    tmux.run(&["send-keys", "-t", "t", "y"]);
    tmux.wait_for("notes.txt (+3 -0)");
    std::thread::sleep(Duration::from_millis(100));
    tmux.run(&["send-keys", "-t", "t", "n"]);
    tmux.run(&["send-keys", "-t", "t", "-l", "no secrets in notes"]);
    tmux.run(&["send-keys", "-t", "t", "Enter"]);
    let screen = tmux.wait_for("■ done after");
    assert!(
        screen.contains("✗ rejected fs-write notes.txt: no secrets in notes"),
        "{screen}"
    );
    assert!(!project.join("notes.txt").exists());
    let env = std::fs::read_to_string(project.join(".env")).expect(".env");
    let id = env
        .lines()
        .find_map(|l| l.strip_prefix("AWS_ACCESS_KEY_ID="))
        .expect("a key id");
    assert!(
        !screen.contains(&id[4..]),
        "the key shown on screen: {screen}"
    );
    // History is in the scrollback once, not duplicated by redraws.
    assert_eq!(
        screen.matches("● (fs-read \"calc.py\")").count(),
        1,
        "{screen}"
    );
    // A resize neither duplicates nor loses it.
    tmux.run(&["resize-window", "-t", "t", "-x", "70", "-y", "24"]);
    std::thread::sleep(Duration::from_millis(300));
    tmux.run(&["resize-window", "-t", "t", "-x", "110", "-y", "30"]);
    std::thread::sleep(Duration::from_millis(300));
    let screen = tmux.screen();
    assert_eq!(
        screen.matches("● (fs-read \"calc.py\")").count(),
        1,
        "{screen}"
    );
    assert_eq!(
        screen.matches("✗ rejected fs-write notes.txt").count(),
        1,
        "{screen}"
    );
    tmux.run(&["send-keys", "-t", "t", "C-c"]);
    tmux.run(&["send-keys", "-t", "t", "C-c"]);
    tmux.wait_for("nib demo: the project is still in");
}

#[test]
#[ignore = "needs tmux"]
fn tmux_no_alt_screen_keeps_the_full_screen_diff_inline() {
    require_tmux();
    let scratch = tempfile::tempdir().expect("temp dir");
    let project = scratch.path().join("demo");
    let command = format!(
        "env TERM=xterm-256color XDG_CONFIG_HOME={} {} demo --no-alt-screen --dir {} --arm-ms 50; sleep 60",
        scratch.path().join("config").display(),
        env!("CARGO_BIN_EXE_nib"),
        project.display()
    );
    let tmux = Tmux {
        socket: format!("nib-e2e-noalt-{}", std::process::id()),
    };
    tmux.session((90, 20), &command);
    tmux.wait_for("fs-edit calc.py (+2 -2)");
    std::thread::sleep(Duration::from_millis(100));
    tmux.run(&["send-keys", "-t", "t", "f"]);
    let screen = tmux.wait_for("f inline");
    let alternate = tmux.run(&["display", "-p", "-t", "t", "#{alternate_on}"]);
    assert_eq!(alternate.trim(), "0", "the alternate screen was used");
    // The whole window is the confirm now.
    let visible = tmux.run(&["capture-pane", "-p", "-t", "t"]);
    assert!(
        visible.starts_with("╭ fs-edit calc.py"),
        "{visible}\n---\n{screen}"
    );
    tmux.run(&["send-keys", "-t", "t", "C-c"]);
    tmux.run(&["send-keys", "-t", "t", "C-c"]);
    tmux.wait_for("nib demo: the project is still in");
}

/// Without a terminal the client says so, and where to go, before it sets
/// anything up.
#[test]
fn without_a_terminal_the_client_points_to_exec() {
    for args in [&["demo"][..], &[][..]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_nib"))
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run nib");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("needs a terminal") && err.contains("nib exec"),
            "{err}"
        );
    }
}

/// A log entry from the fields of an event line.
fn entry(fields: serde_json::Value) -> Box<nib::session::Entry> {
    Box::new(nib::session::Entry::parse(&fields.to_string()).expect("an event line"))
}

/// Counts the server did not report are shown as estimates, and a
/// strategy's lines reach the transcript.
#[test]
fn estimated_usage_is_marked_and_strategy_lines_are_shown() {
    let (mut app, _a, _d) = confirm_app(ConfirmKind::Write, Theme::DARK);
    app.handle_key(
        KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE),
        far_future(),
    );
    let now = Instant::now();
    app.on_event(
        UiEvent::Log(entry(json!({"ev": "llm.resp", "model": "small", "usage": {"prompt": 1500, "completion": 20, "reported": false, "estimated": true}}))),
        now,
    );
    app.on_event(
        UiEvent::Log(entry(
            json!({"ev": "strategy", "action": "refuse", "text": "shell: no recursive deletes"}),
        )),
        now,
    );
    app.on_event(
        UiEvent::Log(entry(
            json!({"ev": "strategy", "action": "say", "text": "check: `make test` passed"}),
        )),
        now,
    );
    let mut term = Terminal::new(TestBackend::new(120, 30)).expect("terminal");
    term.draw(|f| app.render(f.area(), f.buffer_mut(), far_future()))
        .expect("draw");
    let screen = format!("{}", term.backend());
    assert!(screen.contains("in ~13.8k"), "{screen}");
    assert!(screen.contains("context ~1.5k"), "{screen}");
    let transcript = app.transcript_text();
    assert!(
        transcript.contains("◆ refuse: shell: no recursive deletes"),
        "{transcript}"
    );
    assert!(
        transcript.contains("◆ check: `make test` passed"),
        "{transcript}"
    );
}

/// The plan strategy in the terminal client: its question is a real
/// prompt; y carries the plan out, through the usual write confirm.
#[test]
fn a_strategys_question_is_asked_in_the_client() {
    let mut f = Fixture::new(
        json!([
            "1. make add add",
            edit_reply("calc.py", "a - b", "a + b"),
            "Changed add."
        ]),
        &[("calc.py", CALC)],
        Duration::ZERO,
    );
    f.typed("/strategy plan");
    f.key(KeyCode::Enter);
    f.app.submit("fix add", Instant::now());
    f.until("the plan's question", |a| a.ask.is_some());
    let screen = f.screen(100, 12);
    assert!(screen.contains("? Carry out this plan?"), "{screen}");
    assert!(screen.contains("y yes · n no"), "{screen}");
    assert_eq!(f.read("calc.py"), CALC, "nothing is written before the yes");
    f.key(KeyCode::Char('y'));
    f.until_confirm();
    f.key(KeyCode::Char('y'));
    f.until_idle();
    assert!(f.read("calc.py").contains("return a + b"));
    let transcript = f.app.transcript_text();
    assert!(
        transcript.contains("? Carry out this plan? yes"),
        "{transcript}"
    );
    assert!(transcript.contains("1. make add add"), "{transcript}");
}

/// The check and policy strategies in the terminal client: check's command
/// is confirmed like any command and its verdict shown; policy's refusal
/// reaches the transcript and nothing runs.
#[test]
fn check_and_policy_run_in_the_client() {
    let mut f = Fixture::new(
        json!([edit_reply("calc.py", "a - b", "a + b"), "Fixed add."]),
        &[("calc.py", CALC), ("Makefile", "test:\n\t@echo tested\n")],
        Duration::ZERO,
    );
    f.typed("/strategy check");
    f.key(KeyCode::Enter);
    f.app.submit("fix add", Instant::now());
    f.until_confirm();
    f.key(KeyCode::Char('y'));
    // The check's `make test` asks like any command.
    f.until_confirm();
    f.key(KeyCode::Char('y'));
    f.until_idle();
    let transcript = f.app.transcript_text();
    assert!(
        transcript.contains("◆ check: `make test` passed"),
        "{transcript}"
    );
    assert!(f.read("calc.py").contains("return a + b"));

    let mut f = Fixture::new(
        json!([
            {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf ."}}]},
            "Gave up."
        ]),
        &[("calc.py", CALC)],
        Duration::ZERO,
    );
    f.typed("/strategy policy");
    f.key(KeyCode::Enter);
    f.app.submit("clean up", Instant::now());
    f.until_idle();
    let transcript = f.app.transcript_text();
    assert!(
        transcript.contains("◆ refuse: shell: policy: recursive rm of ."),
        "{transcript}"
    );
    assert_eq!(f.read("calc.py"), CALC);
}

/// A strategy's error keeps its place and excerpt as separate lines.
#[test]
fn a_strategy_error_keeps_its_lines() {
    let (mut app, _a, _d) = confirm_app(ConfirmKind::Write, Theme::DARK);
    app.handle_key(
        KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE),
        far_future(),
    );
    let message = "bad.scm:2:4: TypeMismatch: car expected a list or pair, found: 5\n  ┌─ bad.scm:2:4\n2 │   (car 5)))";
    app.on_event(
        UiEvent::Log(entry(json!({"ev": "error", "message": message}))),
        Instant::now(),
    );
    let lines = app.take_new_history(120);
    let texts: Vec<String> = lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("error: bad.scm:2:4: TypeMismatch")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("┌─ bad.scm:2:4")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.contains("(car 5)))")), "{texts:?}");
}

/// The second task of a session continues the conversation: the model is
/// sent the first task's messages as they were, not a summary of them.
#[test]
fn a_second_task_continues_the_conversation() {
    let mut f = Fixture::new(
        json!([
            {"tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}]},
            "add subtracts.",
            "Yes: it returns a - b."
        ]),
        &[("calc.py", CALC)],
        Duration::ZERO,
    );
    f.app.submit("what does add do?", Instant::now());
    f.until_idle();
    f.app.submit("are you sure?", Instant::now());
    f.until_idle();
    let requests = f.server.requests();
    let last = requests.last().expect("a request");
    let messages: Vec<(String, String)> = last["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let users: Vec<&str> = messages
        .iter()
        .filter(|(r, _)| r == "user")
        .map(|(_, c)| c.as_str())
        .collect();
    assert_eq!(
        users,
        ["what does add do?", "are you sure?"],
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|(r, c)| r == "assistant" && c == "add subtracts."),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|(r, c)| r == "tool" && c.contains("return a - b")),
        "{messages:?}"
    );
}

/// compact in the terminal client: a long session's old results are cut,
/// and the transcript says so.
#[test]
fn compact_runs_in_the_client() {
    let big = "a line of a large file that the model reads again and again\n".repeat(500);
    let mut replies: Vec<Value> = (0..12)
        .map(|i| json!({"tool_calls": [{"name": "fs-read", "arguments": {"path": format!("big{}.txt", i % 3)}}]}))
        .collect();
    replies.push(json!("Read them."));
    let files = [
        ("big0.txt", big.as_str()),
        ("big1.txt", big.as_str()),
        ("big2.txt", big.as_str()),
    ];
    let mut f = Fixture::new(Value::Array(replies), &files, Duration::ZERO);
    f.typed("/strategy compact");
    f.key(KeyCode::Enter);
    f.app.submit("read the big files", Instant::now());
    f.until_idle();
    let transcript = f.app.transcript_text();
    assert!(transcript.contains("◆ compact: elided"), "{transcript}");
    assert!(transcript.contains("Read them."), "{transcript}");
}

/// A strategy can offer choices and ask for free text; the client takes a
/// digit, and typed text with Enter.
#[test]
fn a_strategy_can_ask_for_a_choice_and_for_text() {
    let mut f = Fixture::new(json!(["Done."]), &[], Duration::ZERO);
    let hook = f.path("ask.scm");
    std::fs::write(
        &hook,
        "(on \"before-finish\" (lambda (text)\n\
           (say (string-append \"picked \" (ask-choice \"Which one?\" (list \"alpha\" \"beta\"))\n\
                               \" because \" (ask-text \"Why?\")))\n\
           #f))\n",
    )
    .expect("hook");
    f.typed(&format!("/strategy {}", hook.display()));
    f.key(KeyCode::Enter);
    f.app.submit("go", Instant::now());
    f.until("the choice", |a| a.ask.is_some());
    let screen = f.screen(100, 12);
    assert!(
        screen.contains("? Which one?") && screen.contains("1 alpha · 2 beta"),
        "{screen}"
    );
    f.key(KeyCode::Char('2'));
    f.until("the text question", |a| a.ask.is_some());
    f.typed("it is shorter");
    f.key(KeyCode::Enter);
    f.until_idle();
    let transcript = f.app.transcript_text();
    assert!(transcript.contains("? Which one? beta"), "{transcript}");
    assert!(
        transcript.contains("◆ picked beta because it is shorter"),
        "{transcript}"
    );
}

/// text-edits in the terminal client: a reply's SEARCH/REPLACE block is
/// confirmed with its diff and applied.
#[test]
fn text_edits_run_in_the_client() {
    let block = "calc.py\n```\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n";
    let mut f = Fixture::new(
        json!([block, "Fixed add."]),
        &[("calc.py", CALC)],
        Duration::ZERO,
    );
    f.typed("/strategy text-edits");
    f.key(KeyCode::Enter);
    f.app.submit("fix add", Instant::now());
    f.until_confirm();
    f.key(KeyCode::Char('y'));
    f.until_idle();
    assert!(
        f.read("calc.py").contains("return a + b"),
        "{}",
        f.app.transcript_text()
    );
    assert!(f.app.transcript_text().contains("Fixed add."));
}

/// After the demo's script: a follow-up gets the demo's closing message
/// (no HTTP error), the status line shows the cost from the user's
/// [prices], /cost and /status answer, SIGTERM exits 143 with the log
/// saying so, and `nib --resume` brings the transcript back whole.
#[test]
#[ignore = "needs tmux"]
fn tmux_demo_end_cost_sigterm_and_resume() {
    require_tmux();
    let scratch = tempfile::tempdir().expect("temp dir");
    let project = scratch.path().join("demo");
    let config = scratch.path().join("config");
    std::fs::create_dir_all(config.join("nib")).expect("config dir");
    std::fs::write(
        config.join("nib/config.toml"),
        "[prices]\n\"scripted-demo\" = [1000, 2000]\n",
    )
    .expect("config");
    let bin = env!("CARGO_BIN_EXE_nib");
    let code = scratch.path().join("code");
    let command = format!(
        "env TERM=xterm-256color XDG_CONFIG_HOME={} {bin} demo --dir {} --arm-ms 50; echo \"exit=$?\" > {}; sleep 60",
        config.display(),
        project.display(),
        code.display()
    );
    let tmux = Tmux {
        socket: format!("nib-e2e-end-{}", std::process::id()),
    };
    tmux.session((110, 30), &command);
    for (shown, key) in [
        ("fs-edit calc.py (+2 -2)", "y"),
        ("╭ shell", "y"),
        ("notes.txt (+3 -0)", "n"),
    ] {
        tmux.wait_for(shown);
        std::thread::sleep(Duration::from_millis(150));
        tmux.run(&["send-keys", "-t", "t", key]);
    }
    tmux.run(&["send-keys", "-t", "t", "Enter"]);
    let screen = tmux.wait_for("■ done after");
    // The user's price for the demo's model: a cost in the status line.
    assert!(screen.contains(" · $"), "{screen}");
    tmux.run(&["send-keys", "-t", "t", "-l", "thanks, now the docs"]);
    tmux.run(&["send-keys", "-t", "t", "Enter"]);
    let screen = tmux.wait_for("The demo's script has ended");
    assert!(!screen.contains("HTTP 410"), "{screen}");
    tmux.run(&["send-keys", "-t", "t", "-l", "/cost"]);
    tmux.run(&["send-keys", "-t", "t", "Enter"]);
    tmux.wait_for("cost: $");
    tmux.run(&["send-keys", "-t", "t", "-l", "/status"]);
    tmux.run(&["send-keys", "-t", "t", "Enter"]);
    tmux.wait_for("session: ");
    let pid = tmux.run(&["display", "-p", "-t", "t", "#{pane_pid}"]);
    // The pane runs sh; nib is its child.
    let out = std::process::Command::new("pgrep")
        .args(["-P", pid.trim(), "-x", "nib"])
        .output()
        .expect("pgrep");
    let nib_pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!nib_pid.is_empty(), "nib is not running under the pane");
    std::process::Command::new("kill")
        .args(["-TERM", &nib_pid])
        .status()
        .expect("kill");
    tmux.wait_for("stopped by SIGTERM");
    let start = Instant::now();
    while !code.exists() {
        assert!(start.elapsed() < WAIT, "nib did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(100));
    let status = std::fs::read_to_string(&code).expect("exit code");
    assert_eq!(status.trim(), "exit=143");
    let log = std::fs::read_dir(project.join(".nib/sessions"))
        .expect("sessions")
        .flatten()
        .next()
        .expect("a session")
        .path()
        .join("events.jsonl");
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        text.contains("\"ev\":\"interrupted\",\"by\":\"SIGTERM\""),
        "{text}"
    );

    // Resume it: the transcript comes back with the prompts and answers.
    let resume = format!(
        "cd {} && env TERM=xterm-256color XDG_CONFIG_HOME={} {bin} --resume --provider scripted --model hello; sleep 60",
        project.display(),
        config.display()
    );
    tmux.run(&["kill-session", "-t", "t"]);
    tmux.session((110, 50), &resume);
    let screen = tmux.wait_for("── end of the resumed session ──");
    assert!(screen.contains("› thanks, now the docs"), "{screen}");
    assert!(screen.contains("Let me read calc.py first."), "{screen}");
    tmux.run(&["send-keys", "-t", "t", "C-c"]);
    tmux.run(&["send-keys", "-t", "t", "C-c"]);
}

/// SIGHUP to the terminal client (its tmux pane closed) while a command it
/// ran sleeps: the command is stopped with everything it started, the log
/// ends with `interrupted` by SIGHUP, nib exits 129 (what a shell reports
/// for a process SIGHUP ended), and `nib exec --resume` continues the log.
#[test]
#[ignore = "needs tmux"]
fn tmux_a_closed_terminal_stops_the_command_and_the_log_resumes() {
    require_tmux();
    let scratch = tempfile::tempdir().expect("temp dir");
    let ws = scratch.path().join("ws");
    std::fs::create_dir_all(&ws).expect("ws");
    std::fs::write(ws.join("calc.py"), CALC).expect("calc.py");
    let secs = 50_021 + std::process::id() % 1000 * 10;
    let needle = format!("sleep {secs}");
    let script = scratch.path().join("script.json");
    std::fs::write(
        &script,
        json!([
            {"tool_calls": [{"name": "shell", "arguments": {"command": needle, "timeout": 600}}]},
            "never reached"
        ])
        .to_string(),
    )
    .expect("script");
    let code = scratch.path().join("code");
    let bin = env!("CARGO_BIN_EXE_nib");
    // The pane's shell ignores SIGHUP so it can write nib's exit code
    // after the pane is gone (nib sets its own handler; ignoring is not
    // passed on to the commands nib runs, which it starts with a handler
    // in place, reset on exec).
    let command = format!(
        "trap '' HUP; cd {ws} && env TERM=xterm-256color XDG_CONFIG_HOME={cfg} {bin} --provider scripted --model {script} --arm-ms 50; echo \"exit=$?\" > {code}",
        ws = ws.display(),
        cfg = scratch.path().join("config").display(),
        script = script.display(),
        code = code.display(),
    );
    let tmux = Tmux::start(format!("nib-e2e-hup-{}", std::process::id()), &command);
    tmux.wait_for("nib in");
    tmux.run(&["send-keys", "-t", "t", "-l", "wait for it"]);
    tmux.run(&["send-keys", "-t", "t", "Enter"]);
    tmux.wait_for("╭ shell");
    std::thread::sleep(Duration::from_millis(150));
    tmux.run(&["send-keys", "-t", "t", "y"]);
    let start = Instant::now();
    while processes_with(&needle).is_empty() {
        assert!(start.elapsed() < WAIT, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The terminal goes away: tmux closes the pane's pty (SIGHUP).
    tmux.run(&["kill-server"]);
    let start = Instant::now();
    while !code.exists() {
        assert!(start.elapsed() < WAIT, "nib did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(100));
    let status = std::fs::read_to_string(&code).expect("exit code");
    let reaped = Instant::now();
    while !processes_with(&needle).is_empty() && reaped.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = processes_with(&needle);
    for p in &left {
        if let Some(pid) = p.split(':').next() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", pid])
                .status();
        }
    }
    assert_eq!(left, Vec::<String>::new(), "left running");
    assert_eq!(status.trim(), "exit=129");
    let sessions = ws.join(".nib/sessions");
    let log = std::fs::read_dir(&sessions)
        .expect("sessions")
        .flatten()
        .next()
        .expect("a session")
        .path()
        .join("events.jsonl");
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        text.contains("\"ev\":\"interrupted\",\"by\":\"SIGHUP\""),
        "{text}"
    );
    // The log resumes.
    let again = scratch.path().join("again.json");
    std::fs::write(&again, json!(["carried on"]).to_string()).expect("script");
    let out = std::process::Command::new(bin)
        .args([
            "exec",
            "--resume",
            "go on",
            "--provider",
            "scripted",
            "--model",
        ])
        .arg(&again)
        .arg("--root")
        .arg(&ws)
        .env("XDG_CONFIG_HOME", scratch.path().join("config"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("nib exec --resume");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "carried on\n");
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.contains("wait for it"), "one log, both tasks");
}

/// The processes whose command line contains `needle` (from /proc), as
/// `pid: command line`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if line.contains(needle) && !line.contains("tmux") && !line.contains("trap") {
            found.push(format!("{}: {line}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// Closing the client (Ctrl-C twice here; a quit, Ctrl-D and a signal end
/// in the same place) runs the strategy's session-end hooks, as `nib exec`
/// does after its task: the hook's line reaches the transcript and the
/// session's log, with the session's task count.
#[test]
fn closing_the_client_runs_the_session_end_hooks() {
    nib::engine::init_process();
    let dir = tempfile::tempdir().expect("temp dir");
    let hooks = tempfile::tempdir().expect("hook dir");
    let hook = hooks.path().join("end.scm");
    std::fs::write(
        &hook,
        "(on \"session-end\" (lambda (summary)\n\
           (say (string-append \"session over after \" (number->string (assoc-ref summary \"tasks\" 0)) \" tasks\"))\n\
           #f))\n",
    )
    .expect("write hook");
    let script = Script::from_json(&json!(["Hello.", "Hello again."]).to_string()).expect("script");
    let server = ScriptedServer::start(script).expect("server");
    let mut cfg = demo::agent_config(&server);
    cfg.hooks = vec![hook];
    let ws = Workspace::open(dir.path()).expect("workspace");
    let (tx, rx) = channel();
    let session = Session::start(ws, cfg, Vec::new(), tx).expect("session");
    let mut app = App::new(
        session,
        rx,
        AppOptions {
            theme: Theme::DARK,
            arm_delay: Duration::ZERO,
            config_path: Some(dir.path().join("config.toml")),
        },
    );
    let idle = |app: &mut App| {
        let start = Instant::now();
        while app.running() {
            assert!(start.elapsed() < WAIT, "{}", app.transcript_text());
            app.pump(Duration::from_millis(20), Instant::now());
        }
    };
    for task in ["say hello", "again"] {
        app.submit(task, Instant::now());
        idle(&mut app);
    }
    assert!(!app.transcript_text().contains("session over"));
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let now = Instant::now();
    assert_eq!(app.handle_key(ctrl_c, now), Action::None);
    assert_eq!(app.handle_key(ctrl_c, now), Action::Quit);
    // What the client does once its loop ends.
    assert!(
        app.session().end(WAIT),
        "the session-end hooks did not finish"
    );
    let log = std::fs::read_to_string(app.session().log.path()).expect("events");
    assert!(
        log.contains("session over after 2 tasks"),
        "the hook's line is not in the log:\n{log}"
    );
    let start = Instant::now();
    while !app.transcript_text().contains("session over after 2 tasks") {
        assert!(start.elapsed() < WAIT, "{}", app.transcript_text());
        app.pump(Duration::from_millis(20), Instant::now());
    }
}
