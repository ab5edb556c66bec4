//! A confirm's state and its answers: what the open confirm shows (the
//! parsed diff, the guard's reasons pinned to the lines they are about),
//! which mode it is in (keys, typing a reason, showing the scope `a` would
//! save), and what each key does: approve, reject with a reason, save a
//! standing approval, or hand the proposed text to `$EDITOR` first. Every
//! answer is logged with who gave it and sent back to the waiting worker,
//! unless the browser console beside the client answered first: then the
//! confirm closes and the transcript says how it was answered there.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::PoisonError;
use std::time::Instant;

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};

use super::{Action, App};
use crate::agent::beside::{Said, TERMINAL};
use crate::guard::ConfirmKind;
use crate::prim::ConfirmAnswer;
use crate::session::event::{self, Event};
use crate::settings::UserConfig;
use crate::tui::style::{DiffLine, Theme, cut_to_width, has_secret, mask_secrets, parse_diff};
use crate::tui::worker::PendingConfirm;

/// How long an answer waits for the browser's answer in flight (the page
/// holds the confirm while it saves an approval) before saying it lost.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

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

/// A confirm's diff laid out as rows for one (width, split, theme): built
/// once by the view, not per frame.
#[derive(Default)]
pub(super) struct DiffRows(RefCell<Option<(RowsKey, Rc<Vec<Line<'static>>>)>>);

type RowsKey = (u16, bool, Theme);

impl DiffRows {
    /// The rows for `key`, built by `build` when the cache holds another.
    pub(super) fn get_or(
        &self,
        key: RowsKey,
        build: impl FnOnce() -> Vec<Line<'static>>,
    ) -> Rc<Vec<Line<'static>>> {
        let mut cache = self.0.borrow_mut();
        if let Some((k, rows)) = cache.as_ref()
            && *k == key
        {
            return Rc::clone(rows);
        }
        let rows = Rc::new(build());
        *cache = Some((key, Rc::clone(&rows)));
        rows
    }
}

/// An open confirm.
pub struct ConfirmView {
    pub pending: Box<PendingConfirm>,
    pub shown_at: Instant,
    pub mode: ConfirmMode,
    pub full: bool,
    pub split: bool,
    pub scroll: usize,
    pub(super) lines: Vec<DiffLine>,
    /// Guard reasons pinned to diff lines (index into `lines`).
    pub(super) notes: Vec<(usize, String)>,
    /// Reasons not pinned to a line.
    pub(super) loose: Vec<String>,
    /// The file `e` handed to `$EDITOR`, until the editor exits.
    edit_file: Option<PathBuf>,
    pub(super) rows: DiffRows,
}

impl ConfirmView {
    pub(super) fn new(pending: Box<PendingConfirm>, now: Instant) -> ConfirmView {
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
            rows: DiffRows::default(),
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
impl App {
    pub(super) fn confirm_key(&mut self, key: KeyEvent) -> Action {
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
        let claim = match c.pending.reply.claim(TERMINAL) {
            Ok(claim) => claim,
            Err(said) => {
                let said = c.pending.reply.settled(SETTLE).unwrap_or(said);
                return self.closed_elsewhere(&c, &said);
            }
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
        if let Some(s) = &saved {
            text.push_str(&format!("; saved standing approval: {s}"));
        }
        self.history.push(Line::from(vec![
            Span::styled("  ✓ ", t.ok()),
            Span::styled(cut_to_width(&text, 200), t.dim()),
        ]));
        let mut said = Said::new(TERMINAL, answer);
        said.saved = saved;
        claim.give(
            said,
            ConfirmAnswer {
                approved: true,
                reason: None,
                edited,
            },
        );
    }

    /// The open confirm was answered elsewhere (the browser console beside
    /// the client, or nib stopping the run): close it and say how.
    pub(super) fn closed_elsewhere(&mut self, c: &ConfirmView, said: &Said) {
        let t = self.opts.theme;
        let what = c
            .pending
            .path
            .clone()
            .unwrap_or_else(|| c.pending.form.clone());
        let (mark, style) = if said.answer == "no" {
            ("  ✗ ", t.error())
        } else {
            ("  ✓ ", t.ok())
        };
        let text = format!(
            "{} {}: {}",
            c.pending.tool,
            mask_secrets(&what),
            mask_secrets(&said.describe())
        );
        self.history.push(Line::from(vec![
            Span::styled(mark, style),
            Span::styled(cut_to_width(&text, 200), t.dim()),
        ]));
    }

    pub(super) fn reject(&mut self, reason: String) {
        let Some(c) = self.confirm.take() else {
            return;
        };
        let claim = match c.pending.reply.claim(TERMINAL) {
            Ok(claim) => claim,
            Err(said) => {
                let said = c.pending.reply.settled(SETTLE).unwrap_or(said);
                return self.closed_elsewhere(&c, &said);
            }
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
        let mut said = Said::new(TERMINAL, "no");
        said.reason = reason.clone();
        claim.give(
            said,
            ConfirmAnswer {
                approved: false,
                reason,
                edited: None,
            },
        );
    }

    fn save_approval(&mut self) {
        let Some(a) = self
            .confirm
            .as_ref()
            .and_then(|c| c.pending.suggestion.clone())
        else {
            return;
        };
        // Answered in the browser meanwhile: nothing is saved.
        if let Some(said) = self
            .confirm
            .as_ref()
            .and_then(|c| c.pending.reply.answered())
        {
            if let Some(c) = self.confirm.take() {
                self.closed_elsewhere(&c, &said);
            }
            return;
        }
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
}
