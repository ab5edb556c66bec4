//! The terminal client's frame cost and key latency.
//!
//! Run with `cargo bench --bench tui`. Measures, with ratatui's TestBackend
//! (so the terminal's own speed is left out):
//!
//! - one frame of the live area at 120x40 with a 10,000-line transcript
//!   (finished lines live in the terminal's scrollback, so this must not
//!   grow with the transcript): target under 2 ms;
//! - one frame of a diff confirm (a 2,000-line diff), inline and split;
//! - key-to-screen latency, from a key event handed to the app to the frame
//!   drawn after it, typing into the composer and scrolling a confirm:
//!   target p95 under 16 ms.

use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use nib::files::Workspace;
use nib::guard::ConfirmKind;
use nib::model::scripted::{Script, ScriptedServer};
use nib::tui::app::{App, AppOptions};
use nib::tui::demo;
use nib::tui::style::Theme;
use nib::tui::worker::{PendingConfirm, Session, UiEvent};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

const FRAMES: usize = 500;

fn main() {
    nib::engine::init_process();
    let dir = tempfile::tempdir().expect("temp dir");
    let server = ScriptedServer::start(Script::default()).expect("server");
    let (mut app, _keep) = new_app(&dir, &server);
    fill(&mut app, 10_000);
    println!(
        "transcript: {} lines; frames at 120x40 on TestBackend; {FRAMES} runs each\n",
        app.history().len()
    );
    println!("{:<48} {:>9} {:>9} {:>9}", "case", "p50", "p95", "max");

    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    let idle = measure(FRAMES, || {
        let now = Instant::now();
        term.draw(|f| app.render(f.area(), f.buffer_mut(), now))
            .expect("draw");
    });
    row("frame: idle live area, 10k-line transcript", &idle);

    // Hand the 10k lines to the scrollback once (what the first draw does).
    let mut fresh = app_with(&dir, &server, 10_000);
    let wrap = measure(1, || {
        let _ = fresh.take_new_history(120);
    });
    row("scrollback hand-off of 10k lines (once)", &wrap);

    let now = Instant::now();
    app.on_event(UiEvent::Confirm(Box::new(big_confirm(2_000))), now);
    let confirm = measure(FRAMES, || {
        let now = Instant::now();
        term.draw(|f| app.render(f.area(), f.buffer_mut(), now))
            .expect("draw");
    });
    row("frame: confirm with a 2,000-line diff", &confirm);
    let later = now + Duration::from_secs(10);
    app.handle_key(key(KeyCode::Char('t')), later);
    let split = measure(FRAMES, || {
        let now = Instant::now();
        term.draw(|f| app.render(f.area(), f.buffer_mut(), now))
            .expect("draw");
    });
    row("frame: the same confirm, split view", &split);

    // Key to screen: scroll the confirm.
    let scroll = measure(FRAMES, || {
        app.handle_key(key(KeyCode::Char('j')), later);
        term.draw(|f| app.render(f.area(), f.buffer_mut(), later))
            .expect("draw");
    });
    row("key → frame: j in a 2,000-line confirm", &scroll);

    // Key to screen: typing into the composer.
    let (mut typing, _keep2) = new_app(&dir, &server);
    fill(&mut typing, 10_000);
    let mut i = 0u32;
    let typed = measure(FRAMES, || {
        i += 1;
        let c = char::from(b'a' + (i % 26) as u8);
        let now = Instant::now();
        typing.handle_key(key(KeyCode::Char(c)), now);
        term.draw(|f| typing.render(f.area(), f.buffer_mut(), now))
            .expect("draw");
    });
    row("key → frame: typing, 10k-line transcript", &typed);

    let p95 = |v: &[Duration]| pct(v, 95);
    println!();
    println!(
        "targets: frame < 2 ms ({}), key → frame p95 < 16 ms ({})",
        if p95(&idle) < Duration::from_millis(2) {
            "met"
        } else {
            "MISSED"
        },
        if p95(&typed).max(p95(&scroll)) < Duration::from_millis(16) {
            "met"
        } else {
            "MISSED"
        }
    );
}

fn new_app(dir: &tempfile::TempDir, server: &ScriptedServer) -> (App, ()) {
    let ws = Workspace::open(dir.path()).expect("workspace");
    let (tx, rx) = channel();
    let session = Session::start(ws, demo::agent_config(server), Vec::new(), tx).expect("session");
    let app = App::new(
        session,
        rx,
        AppOptions {
            theme: Theme::DARK,
            arm_delay: Duration::ZERO,
            config_path: None,
        },
    );
    (app, ())
}

fn app_with(dir: &tempfile::TempDir, server: &ScriptedServer, lines: usize) -> App {
    let (mut a, ()) = new_app(dir, server);
    fill(&mut a, lines);
    a
}

/// A transcript of model text and tool cards, `lines` long.
fn fill(app: &mut App, lines: usize) {
    let now = Instant::now();
    let mut n = 0;
    while app.history().len() < lines {
        n += 1;
        app.on_event(
            UiEvent::Stream(nib::model::StreamEvent::TextDelta(format!(
                "Step {n}: looking at `src/module_{n}.rs`, which holds the parser for case {n}.\n- one\n- two\n"
            ))),
            now,
        );
        app.on_event(
            UiEvent::Log(entry(json!({"ev": "tool.call", "name": "fs-read", "positional": format!("(fs-read \"src/module_{n}.rs\")")}))),
            now,
        );
        app.on_event(
            UiEvent::Log(entry(json!({"ev": "tool.result", "name": "fs-read", "ok": true, "path": format!("src/module_{n}.rs"), "summary": ""}))),
            now,
        );
    }
}

fn big_confirm(lines: usize) -> PendingConfirm {
    let mut diff = format!("--- a/big.rs\n+++ b/big.rs\n@@ -1,{lines} +1,{lines} @@\n");
    for i in 0..lines {
        if i % 3 == 0 {
            diff.push_str(&format!("-    let value_{i} = compute({i});\n"));
            diff.push_str(&format!("+    let value_{i} = compute({i}) * 2;\n"));
        } else {
            diff.push_str(&format!("     total += value_{i};\n"));
        }
    }
    let (reply, _) = channel();
    PendingConfirm {
        kind: ConfirmKind::Write,
        tool: "fs-edit".into(),
        form: "(fs-edit \"big.rs\" ...)".into(),
        path: Some("big.rs".into()),
        reasons: Vec::new(),
        diff: Some(diff),
        proposed: None,
        suggestion: None,
        again: None,
        reply: reply.into(),
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn measure(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn pct(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn row(name: &str, t: &[Duration]) {
    let ms = |d: Duration| format!("{:.3} ms", d.as_secs_f64() * 1e3);
    println!(
        "{name:<48} {:>9} {:>9} {:>9}",
        ms(pct(t, 50)),
        ms(pct(t, 95)),
        ms(t[t.len() - 1])
    );
}

/// A log entry from the fields of an event line.
fn entry(fields: serde_json::Value) -> Box<nib::session::Entry> {
    Box::new(nib::session::Entry::parse(&fields.to_string()).expect("an event line"))
}
