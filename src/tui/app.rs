//! The terminal client's state machine: it takes the worker's events and
//! the user's keys, keeps the transcript (finished lines, handed once to
//! the terminal's scrollback) and the live area's state (stream tail, the
//! confirm, the composer, the status line's numbers), and answers
//! confirms. Events and keys in, transcript lines out.
//!
//! The parts: this module (the [`App`], events, the composer's keys),
//! `confirm` (an open confirm and its answers), `ask` (a strategy's
//! question and its answer), [`commands`] (the slash
//! command table that `/help` and the dispatch both read) and `view`
//! (drawing the live area from the state).
//!
//! Time comes in as an argument (`now`), so tests drive the key-ignore
//! window without sleeping. The only effect left to the caller is running
//! `$EDITOR`, which needs the terminal: `handle_key` returns
//! [`Action::Edit`] and the caller reports back with [`App::edit_done`].

mod ask;
pub mod commands;
mod confirm;
mod view;

use std::path::PathBuf;
use std::sync::PoisonError;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::text::{Line, Span};

pub use confirm::{ConfirmMode, ConfirmView};

use super::style::{Theme, cut_to_width, markdown_line, mask_secrets, wrap_line};
use super::worker::{PendingAsk, Session, UiEvent};
use crate::agent::Status;
use crate::agent::beside::{Said, TERMINAL};
use crate::model::StreamEvent;
use crate::session::event::Event;
use crate::settings::UserConfig;
use crate::settings::prices::cost_of;

/// `1 step`, `2 steps`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// How long keys are ignored after a confirm appears, by default, so a
/// keystroke meant for something else cannot answer it.
pub const ARM_DELAY: Duration = Duration::from_millis(400);
/// Two Ctrl-C within this window quit.
const QUIT_WINDOW: Duration = Duration::from_secs(2);

/// How the client is set up.
#[derive(Debug, Clone)]
pub struct AppOptions {
    pub theme: Theme,
    /// Keys are ignored this long after a confirm appears.
    pub arm_delay: Duration,
    /// Where standing approvals are saved; `None`: the user's config file
    /// (`$XDG_CONFIG_HOME/nib/config.toml`, else `~/.config/nib/config.toml`).
    pub config_path: Option<PathBuf>,
}

impl Default for AppOptions {
    fn default() -> AppOptions {
        AppOptions {
            theme: Theme::DARK,
            arm_delay: ARM_DELAY,
            config_path: None,
        }
    }
}

/// What the caller must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    None,
    Quit,
    /// Open this file in `$EDITOR` (the terminal restored meanwhile), then
    /// call [`App::edit_done`].
    Edit(PathBuf),
}

/// The status line's numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusLine {
    pub model: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub tokens_cached: u64,
    /// The last request's prompt tokens: how much context is in use.
    pub context: u64,
    /// Some count is an estimate (the server reported none): shown `~1.2k`.
    pub estimated: bool,
    pub step: u64,
    /// USD so far; `None` when a model's price is unknown.
    pub cost: Option<f64>,
}

/// The terminal client.
pub struct App {
    session: Session,
    events: Receiver<UiEvent>,
    opts: AppOptions,
    /// Every finished transcript line; `committed` of them are already in
    /// the terminal's scrollback.
    history: Vec<Line<'static>>,
    committed: usize,
    /// The model text of the current reply not yet ended by a newline.
    partial: String,
    in_code: bool,
    reasoning: usize,
    running: Option<Instant>,
    pub confirm: Option<ConfirmView>,
    /// A strategy's question waiting for y or n.
    pub ask: Option<PendingAsk>,
    input: String,
    pub status: StatusLine,
    ctrl_c_at: Option<Instant>,
    notice: Option<String>,
    bell: bool,
    quit: bool,
}

impl App {
    pub fn new(session: Session, events: Receiver<UiEvent>, opts: AppOptions) -> App {
        let model = session
            .cfg
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .model
            .model
            .clone();
        let cost = cost_of(&session.prices, &model, &Default::default());
        App {
            session,
            events,
            opts,
            history: Vec::new(),
            committed: 0,
            partial: String::new(),
            in_code: false,
            reasoning: 0,
            running: None,
            confirm: None,
            ask: None,
            input: String::new(),
            status: StatusLine {
                cost,
                model,
                ..StatusLine::default()
            },
            ctrl_c_at: None,
            notice: None,
            bell: false,
            quit: false,
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Where standing approvals go.
    pub fn config_path(&self) -> Option<PathBuf> {
        self.opts.config_path.clone().or_else(UserConfig::path)
    }

    pub fn theme(&self) -> Theme {
        self.opts.theme
    }

    pub fn set_theme(&mut self, theme: Theme) {
        self.opts.theme = theme;
    }

    /// Whether a task is running.
    pub fn running(&self) -> bool {
        self.running.is_some()
    }

    pub fn quitting(&self) -> bool {
        self.quit
    }

    /// The whole transcript so far, as plain text (for tests and /copy).
    pub fn transcript_text(&self) -> String {
        let mut out: Vec<String> = self.history.iter().map(|l| l.to_string()).collect();
        if !self.partial.is_empty() {
            out.push(self.partial.clone());
        }
        out.join("\n")
    }

    /// The transcript's lines (for the pager and the benchmark).
    pub fn history(&self) -> &[Line<'static>] {
        &self.history
    }

    /// Lines finished since the last call, wrapped to `width`, for the
    /// terminal's scrollback. Each line is handed out once.
    pub fn take_new_history(&mut self, width: u16) -> Vec<Line<'static>> {
        let new = &self.history[self.committed..];
        self.committed = self.history.len();
        new.iter().flat_map(|l| wrap_line(l, width)).collect()
    }

    /// Whether the terminal bell should ring (once per confirm).
    pub fn take_bell(&mut self) -> bool {
        std::mem::take(&mut self.bell)
    }

    /// Add a line to the transcript (the user's prompt, notes).
    pub fn push_line(&mut self, line: Line<'static>) {
        self.history.push(line);
    }

    /// A task as the transcript shows it: `› task`.
    pub fn push_prompt(&mut self, task: &str) {
        self.history.push(Line::from(vec![
            Span::styled("› ", self.opts.theme.accent()),
            Span::styled(mask_secrets(task), self.opts.theme.text()),
        ]));
    }

    /// Model text, rendered as the stream renders it (a resumed answer).
    pub fn push_markdown_text(&mut self, text: &str) {
        self.flush_partial();
        for line in text.lines() {
            self.push_markdown(&mask_secrets(line));
        }
        self.in_code = false;
    }

    /// Start a task as if the user typed it.
    pub fn submit(&mut self, task: &str, now: Instant) {
        self.push_prompt(task);
        if self.session.submit(task.to_string()) {
            self.running = Some(now);
            self.status.step = 0;
        } else {
            self.note_error("the agent thread has stopped; restart nib");
        }
    }

    /// Apply the worker's events: wait up to `wait` for the first, then
    /// take whatever else is queued. Returns whether anything arrived.
    pub fn pump(&mut self, wait: Duration, now: Instant) -> bool {
        let first = if wait.is_zero() {
            self.events.try_recv().ok()
        } else {
            self.events.recv_timeout(wait).ok()
        };
        let Some(first) = first else {
            return false;
        };
        self.on_event(first, now);
        while let Ok(ev) = self.events.try_recv() {
            self.on_event(ev, now);
        }
        true
    }

    pub fn on_event(&mut self, ev: UiEvent, now: Instant) {
        match ev {
            UiEvent::Log(entry) => self.on_log(&entry.event),
            UiEvent::Stream(s) => self.on_stream(s),
            UiEvent::Confirm(p) => {
                // One answered beside the client is closed before the next.
                self.answered_elsewhere();
                self.flush_partial();
                self.confirm = Some(ConfirmView::new(p, now));
                self.bell = true;
            }
            UiEvent::Ask(a) => {
                self.answered_elsewhere();
                self.flush_partial();
                self.ask = Some(*a);
                self.bell = true;
            }
            UiEvent::AnsweredElsewhere(_) => self.answered_elsewhere(),
            UiEvent::AutoApproved { what, scope } => {
                let t = self.opts.theme;
                self.history.push(Line::from(vec![
                    Span::styled("  ✓ ", t.ok()),
                    Span::styled(
                        format!("approved by standing approval ({scope}): "),
                        t.dim(),
                    ),
                    Span::raw(cut_to_width(&mask_secrets(&what), 100)),
                ]));
            }
            UiEvent::TaskDone(result) => {
                self.flush_partial();
                self.running = None;
                // "interrupting…" and the like belong to the task that ended.
                self.notice = None;
                // A confirm still open belongs to a finished task.
                self.confirm = None;
                let line = self.end_line(result);
                self.history.push(line);
            }
        }
    }

    /// The open confirm or question was answered beside the client (the
    /// browser console) or by nib: close it, saying how.
    /// The event may be about an earlier confirm: what is open now is
    /// closed only when its own ballot was answered, and says how.
    fn answered_elsewhere(&mut self) {
        let elsewhere = |s: Option<Said>| s.filter(|s| s.by != TERMINAL);
        let confirm_said = self
            .confirm
            .as_ref()
            .and_then(|c| elsewhere(c.pending.reply.answered()));
        if let Some(said) = confirm_said
            && let Some(c) = self.confirm.take()
        {
            self.closed_elsewhere(&c, &said);
        }
        self.close_ask_answered_elsewhere();
    }

    /// The line that closes a task: how it ended, in words.
    fn end_line(&self, result: Result<crate::agent::Outcome, String>) -> Line<'static> {
        let t = self.opts.theme;
        match result {
            Ok(o) if o.text.contains("interrupted by the user") => {
                Line::from(Span::styled("■ interrupted; the session goes on", t.warn()))
            }
            Ok(o) => match o.status {
                Status::Done => Line::from(Span::styled(
                    format!("■ done after {}", plural(o.steps, "step", "steps")),
                    t.dim(),
                )),
                // The error itself was shown once, with the run's error event.
                Status::Error => Line::from(Span::styled(
                    "■ stopped by the error above; the session goes on",
                    t.error(),
                )),
                Status::StepLimit => Line::from(Span::styled(
                    format!(
                        "■ stopped at the step limit ({}; max_steps in the config raises it)",
                        plural(o.steps, "step", "steps")
                    ),
                    t.warn(),
                )),
                Status::TokenLimit => Line::from(Span::styled(
                    "■ stopped: the token budget is used up",
                    t.warn(),
                )),
            },
            Err(e) => Line::from(Span::styled(format!("■ error: {e}"), t.error())),
        }
    }

    fn on_log(&mut self, event: &Event) {
        let t = self.opts.theme;
        match event {
            Event::LlmReq(e) => self.status.step = e.step,
            Event::LlmResp(e) => {
                self.flush_partial();
                if let Some(n) = crate::settings::notice::of_estimate(e, self.status.estimated) {
                    self.push_notice(&n.message);
                }
                let cost = cost_of(&self.session.prices, &e.model, &e.usage);
                self.status.cost = match (self.status.cost, cost) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
                self.status.estimated |= e.usage.estimated;
                self.status.tokens_in += e.usage.prompt;
                self.status.tokens_cached += e.usage.cached;
                self.status.tokens_out += e.usage.completion;
                self.status.context = e.usage.prompt;
                if !e.model.is_empty() {
                    self.status.model = e.model.clone();
                }
            }
            Event::ToolCall(e) => {
                self.flush_partial();
                let form = match e.positional.as_str() {
                    "" => e.name.clone(),
                    f => f.to_string(),
                };
                let form = mask_secrets(&form.replace('\n', "\\n"));
                self.history.push(Line::from(vec![
                    Span::styled("● ", t.accent()),
                    Span::raw(cut_to_width(&form, 160)),
                ]));
            }
            Event::ToolResult(e) => {
                let summary = match (e.name.as_str(), e.ok) {
                    // fs-read's first line is the file's first line.
                    ("fs-read", true) => format!("read {}", e.path.as_deref().unwrap_or_default()),
                    _ => mask_secrets(&e.summary),
                };
                let (mark, style) = if e.ok {
                    if summary.contains("already applied") {
                        ("already applied", t.dim())
                    } else {
                        ("ok", t.ok())
                    }
                } else if e.refused {
                    ("refused", t.warn())
                } else {
                    ("error", t.error())
                };
                self.history.push(Line::from(vec![
                    Span::styled(format!("  └ {mark}: "), style),
                    Span::styled(summary, t.dim()),
                ]));
                if !e.ok {
                    for hint in e.hint.lines().filter(|l| !l.trim().is_empty()) {
                        self.history.push(Line::from(Span::styled(
                            format!("    {}", mask_secrets(hint)),
                            t.dim(),
                        )));
                    }
                }
            }
            Event::Error(e) => {
                let msg = mask_secrets(&e.message);
                if !msg.contains("interrupted by the user") {
                    // A strategy error carries its place and a source
                    // excerpt over several lines: keep them as lines.
                    for (i, line) in msg.lines().enumerate() {
                        let shown = if i == 0 {
                            format!("error: {line}")
                        } else {
                            format!("  {line}")
                        };
                        self.history
                            .push(Line::from(Span::styled(shown, t.error())));
                    }
                }
            }
            Event::Strategy(e) => {
                let text = mask_secrets(&e.text);
                let head = match e.action.as_str() {
                    "say" | "display" => String::new(),
                    other => format!("{other}: "),
                };
                for (i, line) in text.lines().enumerate() {
                    let mark = if i == 0 { "◆ " } else { "  " };
                    let shown = if i == 0 {
                        format!("{head}{line}")
                    } else {
                        line.to_string()
                    };
                    self.history.push(Line::from(vec![
                        Span::styled(mark, t.accent()),
                        Span::styled(cut_to_width(&shown, 200), t.dim()),
                    ]));
                }
            }
            Event::Warning(e) => {
                self.history.push(Line::from(Span::styled(
                    format!("warning: {}", mask_secrets(&e.message)),
                    t.warn(),
                )));
            }
            Event::Notice(e) => self.push_notice(&e.message),
            Event::Interrupted(e) => {
                self.history.push(Line::from(Span::styled(
                    format!("■ {}", mask_secrets(&e.message)),
                    t.warn(),
                )));
            }
            _ => {}
        }
    }

    fn on_stream(&mut self, ev: StreamEvent) {
        match ev {
            StreamEvent::TextDelta(text) => {
                self.flush_reasoning();
                self.partial.push_str(&text);
                while let Some(i) = self.partial.find('\n') {
                    let line: String = self.partial.drain(..=i).collect();
                    self.push_markdown(line.trim_end_matches(['\n', '\r']));
                }
            }
            StreamEvent::ReasoningDelta(text) => self.reasoning += text.chars().count(),
            StreamEvent::ToolCallStart { .. } | StreamEvent::Finish(_) => self.flush_partial(),
            _ => {}
        }
    }

    fn push_markdown(&mut self, line: &str) {
        if let Some(l) = markdown_line(line, &mut self.in_code, self.opts.theme) {
            self.history.push(l);
        }
    }

    fn flush_reasoning(&mut self) {
        if self.reasoning > 0 {
            let n = std::mem::take(&mut self.reasoning);
            self.history.push(Line::from(Span::styled(
                format!("  ⋯ reasoning ({n} chars, collapsed)"),
                self.opts.theme.dim(),
            )));
        }
    }

    /// The end of a reply: the unfinished line becomes a finished one.
    fn flush_partial(&mut self) {
        self.flush_reasoning();
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.push_markdown(&line);
        }
        self.in_code = false;
    }

    /// A notice: something the person should know that no card shows.
    pub fn push_notice(&mut self, msg: &str) {
        self.history.push(Line::from(Span::styled(
            format!("note: {}", mask_secrets(msg)),
            self.opts.theme.warn(),
        )));
    }

    fn note_error(&mut self, msg: &str) {
        self.history.push(Line::from(Span::styled(
            msg.to_string(),
            self.opts.theme.error(),
        )));
    }

    fn note(&mut self, msg: impl Into<String>) {
        self.history
            .push(Line::from(Span::styled(msg.into(), self.opts.theme.dim())));
    }

    /// Whether keys reach the open confirm yet.
    pub fn armed(&self, now: Instant) -> bool {
        self.confirm
            .as_ref()
            .is_none_or(|c| now.duration_since(c.shown_at) >= self.opts.arm_delay)
    }

    /// One key. Key releases and repeats of a confirm key are ignored.
    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c(now);
        }
        self.ctrl_c_at = None;
        if self.confirm.is_some() {
            if !self.armed(now) || key.kind == KeyEventKind::Repeat {
                return Action::None;
            }
            return self.confirm_key(key);
        }
        if self.ask.is_some() {
            return self.ask_key(key);
        }
        self.notice = None;
        match key.code {
            KeyCode::Esc if self.running() => {
                self.session.interrupt();
                self.notice = Some("interrupting…".into());
            }
            KeyCode::Enter => {
                let text = std::mem::take(&mut self.input).trim().to_string();
                if let Some(cmd) = text.strip_prefix('/') {
                    return self.slash(cmd);
                }
                if self.running() {
                    self.input = text;
                    self.notice = Some("a task is running: wait, or Esc to interrupt it".into());
                } else if !text.is_empty() {
                    self.submit(&text, now);
                }
            }
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Char('j') if ctrl => self.input.push('\n'),
            KeyCode::Char(c) if !ctrl => self.input.push(c),
            _ => {}
        }
        Action::None
    }

    fn ctrl_c(&mut self, now: Instant) -> Action {
        if self
            .ctrl_c_at
            .is_some_and(|at| now.duration_since(at) < QUIT_WINDOW)
        {
            self.quit = true;
            if let Some(c) = self.confirm.take() {
                let _ = c
                    .pending
                    .reply
                    .answer(Said::new(TERMINAL, "no"), false.into());
            }
            self.session.interrupt();
            return Action::Quit;
        }
        self.ctrl_c_at = Some(now);
        self.input.clear();
        if self.running() {
            self.reject("the user interrupted the run".into());
            self.session.interrupt();
        }
        self.notice = Some("Ctrl-C again to quit".into());
        Action::None
    }
    /// Pasted text goes to the composer (never to a confirm).
    pub fn paste(&mut self, text: &str) {
        if self.confirm.is_none() {
            self.input.push_str(&text.replace('\r', ""));
        }
    }
}
