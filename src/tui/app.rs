//! The terminal client's state machine: it takes the worker's events and
//! the user's keys, keeps the transcript (finished lines, handed once to
//! the terminal's scrollback) and the live area (stream tail, the confirm,
//! the composer, the status line), and answers confirms.
//!
//! Time comes in as an argument (`now`), so tests drive the key-ignore
//! window without sleeping. The only effect left to the caller is running
//! `$EDITOR`, which needs the terminal: `handle_key` returns
//! [`Action::Edit`] and the caller reports back with [`App::edit_done`].

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::PoisonError;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph, Widget};

use super::style::{
    DiffLine, Theme, cut_to_width, diff_stats, has_secret, markdown_line, mask_secrets, parse_diff,
    split_rows, unified_rows, wrap_line,
};
use super::worker::{PendingConfirm, Session, UiEvent};
use crate::agent::Status;
use crate::files::Versions;
use crate::guard::ConfirmKind;
use crate::model::StreamEvent;
use crate::prim::ConfirmAnswer;
use crate::session::event::{self, Event};
use crate::settings::UserConfig;

/// How long keys are ignored after a confirm appears, by default, so a
/// keystroke meant for something else cannot answer it.
pub const ARM_DELAY: Duration = Duration::from_millis(400);
/// Two Ctrl-C within this window quit.
const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// Rows of a confirm's diff shown before `f`.
const DIFF_ROWS_INLINE: usize = 14;

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

/// What a confirm is waiting for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmMode {
    /// y / n / a / e / f / t.
    Keys,
    /// Typing the reason the model is told.
    Reason(String),
    /// Showing the standing approval `a` would save.
    Scope,
}

/// An open confirm.
pub struct ConfirmView {
    pub pending: Box<PendingConfirm>,
    pub shown_at: Instant,
    pub mode: ConfirmMode,
    pub full: bool,
    pub split: bool,
    pub scroll: usize,
    lines: Vec<DiffLine>,
    /// Guard reasons pinned to diff lines (index into `lines`).
    notes: Vec<(usize, String)>,
    /// Reasons not pinned to a line.
    loose: Vec<String>,
    edit_file: Option<PathBuf>,
    /// The diff's rows for (width, split, theme): built once, not per frame.
    rows: RefCell<Option<(RowsKey, Rc<Vec<Line<'static>>>)>>,
}

type RowsKey = (u16, bool, Theme);

impl ConfirmView {
    fn new(pending: Box<PendingConfirm>, now: Instant) -> ConfirmView {
        let lines = pending.diff.as_deref().map(parse_diff).unwrap_or_default();
        let (notes, loose) = pin_reasons(&pending, &lines);
        ConfirmView {
            pending,
            shown_at: now,
            mode: ConfirmMode::Keys,
            full: false,
            split: false,
            scroll: 0,
            lines,
            notes,
            loose,
            edit_file: None,
            rows: RefCell::new(None),
        }
    }

    /// The diff's rows at `width`, cached.
    fn rows(&self, width: u16, theme: Theme) -> Rc<Vec<Line<'static>>> {
        let key = (width, self.split, theme);
        let mut cache = self.rows.borrow_mut();
        if let Some((k, rows)) = cache.as_ref()
            && *k == key
        {
            return Rc::clone(rows);
        }
        let rows = Rc::new(if self.lines.is_empty() {
            Vec::new()
        } else if self.split {
            split_rows(&self.lines, width, theme)
        } else {
            unified_rows(&self.lines, width, theme, &self.notes)
        });
        *cache = Some((key, Rc::clone(&rows)));
        rows
    }

    fn title(&self) -> String {
        let (added, removed) = diff_stats(&self.lines);
        let what = match &self.pending.path {
            Some(p) => format!("{} {p} (+{added} -{removed})", self.pending.tool),
            None => self.pending.tool.clone(),
        };
        match self.pending.kind {
            ConfirmKind::Write => format!(" {what} "),
            ConfirmKind::Security => format!(" SECURITY CONFIRM · {what} "),
        }
    }
}

/// Each guard reason pinned to the diff line it is about: a reason's line
/// in fs-write's `content` is the new file's line, as is a "line N" in its
/// message; otherwise a reason about a
/// payload goes to the first added line holding a credential-shaped value.
fn pin_reasons(p: &PendingConfirm, lines: &[DiffLine]) -> (Vec<(usize, String)>, Vec<String>) {
    let mut notes = Vec::new();
    let mut loose = Vec::new();
    if p.kind != ConfirmKind::Security {
        return (notes, loose);
    }
    for r in &p.reasons {
        let text = format!("{}: {}", r.rule, mask_secrets(&r.message));
        let named = r.line.filter(|_| r.param == "content").or_else(|| {
            r.message
                .split("line ")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse::<usize>().ok())
        });
        let at = match named {
            Some(n) => lines
                .iter()
                .position(|l| matches!(l, DiffLine::Added { new, .. } if *new == n)),
            None => lines
                .iter()
                .position(|l| matches!(l, DiffLine::Added { text, .. } if has_secret(text))),
        };
        match at {
            Some(i) if r.rule != "protected-path" || named.is_some() => notes.push((i, text)),
            _ => loose.push(text),
        }
    }
    (notes, loose)
}

/// The status line's numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusLine {
    pub model: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub tokens_cached: u64,
    /// The last request's prompt tokens: how much context is in use.
    pub context: u64,
    pub step: u64,
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
            input: String::new(),
            status: StatusLine {
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

    /// Start a task as if the user typed it.
    pub fn submit(&mut self, task: &str, now: Instant) {
        self.history.push(Line::from(vec![
            Span::styled("› ", self.opts.theme.accent()),
            Span::styled(task.to_string(), self.opts.theme.text()),
        ]));
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
                self.flush_partial();
                self.confirm = Some(ConfirmView::new(p, now));
                self.bell = true;
            }
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
                // A confirm still open belongs to a finished task.
                self.confirm = None;
                let t = self.opts.theme;
                let line = match result {
                    Ok(o) if o.text.contains("interrupted by the user") => {
                        Line::from(Span::styled("■ interrupted; the session goes on", t.warn()))
                    }
                    Ok(o) => match o.status {
                        Status::Done => Line::from(Span::styled(
                            format!("■ done after {} steps", o.steps),
                            t.dim(),
                        )),
                        Status::Error => {
                            Line::from(Span::styled(format!("■ error: {}", o.text), t.error()))
                        }
                        s => Line::from(Span::styled(
                            format!("■ stopped: {} ({})", s.as_str(), o.text),
                            t.warn(),
                        )),
                    },
                    Err(e) => Line::from(Span::styled(format!("■ error: {e}"), t.error())),
                };
                self.history.push(line);
            }
        }
    }

    fn on_log(&mut self, event: &Event) {
        let t = self.opts.theme;
        match event {
            Event::LlmReq(e) => self.status.step = e.step,
            Event::LlmResp(e) => {
                self.flush_partial();
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
                    self.history
                        .push(Line::from(Span::styled(format!("error: {msg}"), t.error())));
                }
            }
            Event::Warning(e) => {
                self.history.push(Line::from(Span::styled(
                    format!("warning: {}", mask_secrets(&e.message)),
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
                let _ = c.pending.reply.send(false.into());
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

    fn confirm_key(&mut self, key: KeyEvent) -> Action {
        let Some(c) = self.confirm.as_mut() else {
            return Action::None;
        };
        match (&mut c.mode, key.code) {
            (ConfirmMode::Reason(text), KeyCode::Enter) => {
                let reason = std::mem::take(text);
                self.reject(reason);
            }
            (ConfirmMode::Reason(_), KeyCode::Esc) => c.mode = ConfirmMode::Keys,
            (ConfirmMode::Reason(text), KeyCode::Backspace) => {
                text.pop();
            }
            (ConfirmMode::Reason(text), KeyCode::Char(ch)) => text.push(ch),
            (ConfirmMode::Reason(_), _) => {}
            (ConfirmMode::Scope, KeyCode::Char('y') | KeyCode::Enter) => self.save_approval(),
            (ConfirmMode::Scope, KeyCode::Char('n') | KeyCode::Esc) => c.mode = ConfirmMode::Keys,
            (ConfirmMode::Scope, _) => {}
            (ConfirmMode::Keys, KeyCode::Char('y')) => self.approve(None, None),
            (ConfirmMode::Keys, KeyCode::Char('n')) => c.mode = ConfirmMode::Reason(String::new()),
            (ConfirmMode::Keys, KeyCode::Esc) => {
                self.reject("the user interrupted the run".into());
                self.session.interrupt();
            }
            (ConfirmMode::Keys, KeyCode::Char('a')) => {
                if c.pending.kind == ConfirmKind::Security {
                    self.notice =
                        Some("standing approvals cannot answer a security confirm".into());
                } else if c.pending.suggestion.is_none() {
                    self.notice = Some("no standing approval fits this call".into());
                } else {
                    c.mode = ConfirmMode::Scope;
                }
            }
            (ConfirmMode::Keys, KeyCode::Char('f')) => {
                c.full = !c.full;
                c.scroll = 0;
            }
            (ConfirmMode::Keys, KeyCode::Char('t')) => c.split = !c.split,
            (ConfirmMode::Keys, KeyCode::Down | KeyCode::Char('j')) => c.scroll += 1,
            (ConfirmMode::Keys, KeyCode::Up | KeyCode::Char('k')) => {
                c.scroll = c.scroll.saturating_sub(1)
            }
            (ConfirmMode::Keys, KeyCode::PageDown | KeyCode::Char(' ')) => c.scroll += 10,
            (ConfirmMode::Keys, KeyCode::PageUp) => c.scroll = c.scroll.saturating_sub(10),
            (ConfirmMode::Keys, KeyCode::Char('e')) => return self.start_edit(),
            _ => {}
        }
        Action::None
    }

    /// Record who answered a confirm and how (the engine's own `confirm`
    /// event cannot tell a person from a policy).
    fn log_answer(&self, c: &ConfirmView, answer: &str, reason: Option<&str>, saved: Option<&str>) {
        let kind = match c.pending.kind {
            ConfirmKind::Write => "write",
            ConfirmKind::Security => "security",
        };
        let _ = self
            .session
            .log
            .emit(&Event::ConfirmAnswer(event::ConfirmAnswer {
                tool: c.pending.tool.clone(),
                path: c.pending.path.clone(),
                kind: kind.to_string(),
                answer: answer.to_string(),
                by: "user".to_string(),
                reason: reason.map(str::to_string),
                saved_approval: saved.map(str::to_string),
                scope: None,
            }));
    }

    fn approve(&mut self, edited: Option<String>, saved: Option<String>) {
        let Some(c) = self.confirm.take() else {
            return;
        };
        let answer = if edited.is_some() { "edited" } else { "yes" };
        self.log_answer(&c, answer, None, saved.as_deref());
        let t = self.opts.theme;
        let what = c
            .pending
            .path
            .clone()
            .unwrap_or_else(|| c.pending.form.clone());
        let mut text = format!("approved {} {}", c.pending.tool, mask_secrets(&what));
        if edited.is_some() {
            text.push_str(" (with your edits)");
        }
        if let Some(s) = saved {
            text.push_str(&format!("; saved standing approval: {s}"));
        }
        self.history.push(Line::from(vec![
            Span::styled("  ✓ ", t.ok()),
            Span::styled(cut_to_width(&text, 200), t.dim()),
        ]));
        let _ = c.pending.reply.send(ConfirmAnswer {
            approved: true,
            reason: None,
            edited,
        });
    }

    fn reject(&mut self, reason: String) {
        let Some(c) = self.confirm.take() else {
            return;
        };
        self.log_answer(
            &c,
            "no",
            Some(reason.trim()).filter(|r| !r.is_empty()),
            None,
        );
        let t = self.opts.theme;
        let what = c
            .pending
            .path
            .clone()
            .unwrap_or_else(|| c.pending.form.clone());
        let mut text = format!("rejected {} {}", c.pending.tool, mask_secrets(&what));
        if !reason.trim().is_empty() {
            text.push_str(&format!(": {}", reason.trim()));
        }
        self.history.push(Line::from(vec![
            Span::styled("  ✗ ", t.error()),
            Span::styled(cut_to_width(&text, 200), t.dim()),
        ]));
        let reason = Some(reason).filter(|r| !r.trim().is_empty());
        let _ = c.pending.reply.send(ConfirmAnswer {
            approved: false,
            reason,
            edited: None,
        });
    }

    fn save_approval(&mut self) {
        let Some(a) = self
            .confirm
            .as_ref()
            .and_then(|c| c.pending.suggestion.clone())
        else {
            return;
        };
        let saved = match self.config_path() {
            Some(path) => UserConfig::add_approval_at(&path, &a).map(|_| path),
            None => {
                Err("neither XDG_CONFIG_HOME nor HOME is set: no user config to save to".into())
            }
        };
        match saved {
            Ok(path) => {
                self.session
                    .approvals
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(a.clone());
                let saved = format!("{} (in {})", a.scope(), path.display());
                self.approve(None, Some(saved));
            }
            Err(e) => {
                if let Some(c) = self.confirm.as_mut() {
                    c.mode = ConfirmMode::Keys;
                }
                self.notice = Some(format!("could not save the approval: {e}"));
            }
        }
    }

    fn start_edit(&mut self) -> Action {
        let Some(c) = self.confirm.as_mut() else {
            return Action::None;
        };
        let Some(text) = c.pending.proposed.clone() else {
            self.notice = Some("only a file write can be edited".into());
            return Action::None;
        };
        let name = c
            .pending
            .path
            .as_deref()
            .and_then(|p| p.rsplit('/').next())
            .unwrap_or("proposed.txt")
            .to_string();
        let dir = std::env::temp_dir().join(format!(
            "nib-edit-{}-{}",
            std::process::id(),
            c.shown_at.elapsed().as_nanos()
        ));
        let path = dir.join(name);
        let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, text));
        if let Err(e) = written {
            self.notice = Some(format!("cannot write {}: {e}", path.display()));
            return Action::None;
        }
        c.edit_file = Some(path.clone());
        Action::Edit(path)
    }

    /// The editor has exited: approve with the edited text, or (when the
    /// editor failed) keep the confirm open and say why.
    pub fn edit_done(&mut self, result: Result<(), String>) {
        let Some(path) = self.confirm.as_mut().and_then(|c| c.edit_file.take()) else {
            return;
        };
        let text = result.and_then(|_| {
            std::fs::read_to_string(&path).map_err(|e| format!("cannot read the edit back: {e}"))
        });
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
        match text {
            Ok(text) => self.approve(Some(text), None),
            Err(e) => self.notice = Some(format!("the edit was not used: {e}")),
        }
    }

    fn slash(&mut self, cmd: &str) -> Action {
        let (name, arg) = cmd.split_once(' ').unwrap_or((cmd, ""));
        let arg = arg.trim();
        match name {
            "help" => {
                for l in HELP.lines() {
                    self.note(l);
                }
            }
            "undo" => {
                let ws = self.session.host.workspace();
                match Versions::new(ws).undo(ws, None, false) {
                    Ok(u) if u.restored => self.note(format!(
                        "undo: restored {} as it was before write {}",
                        u.path, u.id
                    )),
                    Ok(u) => self.note(format!(
                        "undo: deleted {} (write {} created it)",
                        u.path, u.id
                    )),
                    Err(e) => self.note_error(&format!("undo: {e}")),
                }
            }
            "model" => {
                let mut cfg = self
                    .session
                    .cfg
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if arg.is_empty() {
                    let m = cfg.model.model.clone();
                    drop(cfg);
                    self.note(format!(
                        "model: {m} (/model NAME switches from the next task)"
                    ));
                } else {
                    cfg.model.model = arg.to_string();
                    drop(cfg);
                    self.status.model = arg.to_string();
                    self.note(format!("model: {arg} from the next task"));
                }
            }
            "strategy" => {
                let mut cfg = self
                    .session
                    .cfg
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if arg.is_empty() {
                    let s = cfg
                        .strategy
                        .as_ref()
                        .map_or("default (shipped)".into(), |p| p.display().to_string());
                    drop(cfg);
                    self.note(format!("strategy: {s}"));
                } else {
                    cfg.strategy = Some(PathBuf::from(arg));
                    drop(cfg);
                    self.note(format!("strategy: {arg} from the next task"));
                }
            }
            "approvals" => {
                let list: Vec<String> = self
                    .session
                    .approvals
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .map(|a| a.scope())
                    .collect();
                let place = self
                    .config_path()
                    .map_or("(no user config path)".into(), |p| p.display().to_string());
                if list.is_empty() {
                    self.note(format!("no standing approvals (they are saved in {place})"));
                } else {
                    self.note(format!("standing approvals, in {place}:"));
                    for a in list {
                        self.note(format!("  • {a}"));
                    }
                }
            }
            "clear" => {
                // The scrollback belongs to the terminal; this clears the
                // live area's leftovers and starts the transcript afresh.
                self.committed = self.history.len();
                self.notice = Some("cleared".into());
            }
            "quit" | "exit" => {
                self.quit = true;
                return Action::Quit;
            }
            other => self.note_error(&format!("unknown command /{other}; /help lists them")),
        }
        Action::None
    }

    /// Pasted text goes to the composer (never to a confirm).
    pub fn paste(&mut self, text: &str) {
        if self.confirm.is_none() {
            self.input.push_str(&text.replace('\r', ""));
        }
    }

    /// Rows the live area wants on a terminal `cols` wide and `rows` high.
    pub fn desired_height(&self, cols: u16, rows: u16) -> u16 {
        let want = match &self.confirm {
            Some(c) if c.full => rows,
            Some(c) => {
                // The box's inner width is the terminal's less its borders,
                // as render computes it, so the cached rows are reused.
                let diff = c.rows(cols.saturating_sub(2), self.opts.theme).len();
                let form = match diff {
                    0 => c.pending.form.chars().count() / (cols.max(8) as usize - 4) + 1,
                    _ => 1,
                };
                let more = usize::from(diff > DIFF_ROWS_INLINE);
                let placeholder = usize::from(
                    c.pending.kind == ConfirmKind::Security
                        && c.loose.is_empty()
                        && c.notes.is_empty(),
                );
                // Borders 2, key hints 2, status 1.
                (diff.min(DIFF_ROWS_INLINE) + more + c.loose.len() + placeholder + form + 5) as u16
            }
            None => 4,
        };
        want.min(rows).max(3)
    }

    /// Whether the open confirm wants the whole screen (`f`).
    pub fn wants_full_screen(&self) -> bool {
        self.confirm.as_ref().is_some_and(|c| c.full)
    }

    /// Draw the live area into `area` of `buf`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let status = Rect {
            y: area.bottom() - 1,
            height: 1,
            ..area
        };
        self.render_status(status, buf);
        let rest = Rect {
            height: area.height - 1,
            ..area
        };
        match &self.confirm {
            Some(c) => self.render_confirm(c, rest, buf, now),
            None => self.render_idle(rest, buf, now),
        }
    }

    fn render_status(&self, area: Rect, buf: &mut Buffer) {
        let t = self.opts.theme;
        let k = |n: u64| {
            if n >= 1000 {
                format!("{:.1}k", n as f64 / 1000.0)
            } else {
                n.to_string()
            }
        };
        let s = &self.status;
        let window = self
            .session
            .cfg
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .model
            .num_ctx
            .map(u64::from);
        let context = match window {
            Some(w) if w > 0 => format!("{}/{} ({}%)", k(s.context), k(w), s.context * 100 / w),
            _ => k(s.context),
        };
        let mut spans = vec![
            Span::styled(s.model.clone(), t.accent()),
            Span::styled(
                format!(
                    " · in {} out {} cached {} · context {context} · step {}",
                    k(s.tokens_in),
                    k(s.tokens_out),
                    k(s.tokens_cached),
                    s.step
                ),
                t.dim(),
            ),
        ];
        if self.running() {
            spans.push(Span::styled(" · esc to interrupt", t.dim()));
        }
        Paragraph::new(Line::from(spans)).render(area, buf);
    }

    fn render_idle(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        let t = self.opts.theme;
        let mut lines = Vec::new();
        let activity = match (&self.notice, self.running) {
            (Some(n), _) => Line::from(Span::styled(n.clone(), t.warn())),
            (None, Some(start)) => {
                let secs = now.duration_since(start).as_secs();
                let tail = if self.partial.is_empty() {
                    if self.reasoning > 0 {
                        "thinking…"
                    } else {
                        "working…"
                    }
                    .to_string()
                } else {
                    mask_secrets(&self.partial)
                };
                Line::from(vec![
                    Span::styled(format!("◆ {secs}s "), t.accent()),
                    Span::raw(tail),
                ])
            }
            (None, None) => Line::from(Span::styled("/help for keys and commands", t.dim())),
        };
        lines.push(activity);
        let shown = self.input.replace('\n', "⏎");
        lines.push(Line::from(vec![
            Span::styled("› ", t.accent()),
            Span::raw(cut_to_width(&shown, area.width.saturating_sub(3) as usize)),
            Span::styled("▏", t.dim()),
        ]));
        Paragraph::new(lines).render(area, buf);
    }

    fn render_confirm(&self, c: &ConfirmView, area: Rect, buf: &mut Buffer, now: Instant) {
        let t = self.opts.theme;
        let security = c.pending.kind == ConfirmKind::Security;
        let (border, border_type) = if security {
            (t.security(), BorderType::Double)
        } else {
            (t.accent(), BorderType::Rounded)
        };
        let keys_h = 2u16.min(area.height);
        let box_area = Rect {
            height: area.height - keys_h,
            ..area
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(border_type)
            .border_style(border)
            .title(Span::styled(c.title(), border));
        let inner = block.inner(box_area);
        block.render(box_area, buf);
        let mut lines: Vec<Line<'static>> = Vec::new();
        let form = mask_secrets(&c.pending.form.replace('\n', "\\n"));
        if c.lines.is_empty() {
            // No diff (a command): the whole call, wrapped, is what is judged.
            let line = Line::from(Span::styled(form, t.text()));
            lines.extend(wrap_line(&line, inner.width));
        } else {
            lines.push(Line::from(Span::styled(
                cut_to_width(&form, inner.width as usize),
                t.dim(),
            )));
        }
        if security {
            for r in &c.loose {
                lines.push(Line::from(Span::styled(format!("⚠ {r}"), t.security())));
            }
            if c.loose.is_empty() && c.notes.is_empty() {
                lines.push(Line::from(Span::styled(
                    "⚠ the guard asks for a security confirm",
                    t.security(),
                )));
            }
        }
        let rows = c.rows(inner.width, t);
        let room = (inner.height as usize).saturating_sub(lines.len());
        let scroll = c.scroll.min(rows.len().saturating_sub(room.max(1)));
        let fits = rows.len() <= room;
        let take = if fits { room } else { room.saturating_sub(1) };
        lines.extend(rows.iter().skip(scroll).take(take).cloned());
        if !fits {
            let below = rows.len().saturating_sub(scroll + take);
            lines.push(Line::from(Span::styled(
                format!("… {below} more lines (j/k scroll, f full screen)"),
                t.dim(),
            )));
        }
        Paragraph::new(lines).render(inner, buf);

        let keys_area = Rect {
            y: box_area.bottom(),
            height: keys_h,
            ..area
        };
        let armed = now.duration_since(c.shown_at) >= self.opts.arm_delay;
        let key = if armed { t.key() } else { t.dim() };
        let hint = |k: &str, what: &str| {
            vec![
                Span::styled(k.to_string(), key),
                Span::styled(format!(" {what}  "), t.dim()),
            ]
        };
        let mut first: Vec<Span<'static>> = Vec::new();
        let prompt = match &c.mode {
            ConfirmMode::Reason(text) => {
                first.push(Span::styled("reason for the model: ", t.warn()));
                first.push(Span::raw(text.clone()));
                first.push(Span::styled("▏", t.dim()));
                Line::from(Span::styled(
                    "Enter rejects and tells the model (empty: no reason) · Esc back",
                    t.dim(),
                ))
            }
            ConfirmMode::Scope => {
                let scope = c
                    .pending
                    .suggestion
                    .as_ref()
                    .map_or(String::new(), |a| a.scope());
                let place = self
                    .config_path()
                    .map_or("the user config".into(), |p| tilde(&p));
                first.push(Span::styled("always allow ", t.warn()));
                first.push(Span::styled(scope, t.key()));
                Line::from(vec![
                    Span::styled("y", t.key()),
                    Span::styled(format!(" save to {place} and approve  "), t.dim()),
                    Span::styled("n", t.key()),
                    Span::styled(" back", t.dim()),
                ])
            }
            ConfirmMode::Keys => {
                first.extend(hint("y", "approve"));
                first.extend(hint("n", "reject"));
                if !security {
                    first.extend(hint("a", "always"));
                }
                if c.pending.proposed.is_some() {
                    first.extend(hint("e", "edit"));
                }
                first.extend(hint("f", if c.full { "inline" } else { "full" }));
                first.extend(hint("t", if c.split { "unified" } else { "split" }));
                first.extend(hint("esc", "stop"));
                let note = match (&self.notice, armed) {
                    (Some(n), _) => Span::styled(n.clone(), t.warn()),
                    (None, false) => Span::styled("(keys armed in a moment)", t.dim()),
                    (None, true) if security => Span::styled(
                        "only you can answer this; standing approvals cannot",
                        t.security(),
                    ),
                    (None, true) => Span::styled("nib is waiting for you", t.dim()),
                };
                Line::from(note)
            }
        };
        Paragraph::new(vec![Line::from(first), prompt]).render(keys_area, buf);
    }
}

/// `path` with the home directory shown as `~`.
fn tilde(path: &std::path::Path) -> String {
    let shown = path.display().to_string();
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && shown.starts_with(&format!("{home}/")) => {
            format!("~{}", &shown[home.len()..])
        }
        _ => shown,
    }
}

const HELP: &str = "keys: Enter send · Ctrl-J newline · Esc interrupt · Ctrl-C twice quit
confirm: y approve · n reject (with a reason) · a approve and always allow (scope shown first) · e edit in $EDITOR · f full screen · t split/unified · j/k scroll · Esc reject and stop
commands: /undo · /model [NAME] · /strategy [FILE] · /approvals · /clear · /help · /quit";
