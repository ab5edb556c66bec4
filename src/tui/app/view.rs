//! The terminal client's view: how the live area is drawn from the
//! [`App`]'s state (the status line, the idle composer with the stream's
//! unfinished line, and a confirm's box, diff and key hints), and how many
//! rows it wants. Drawing reads the state and never changes it, but for
//! filling each confirm's cache of diff rows (kept in the confirm, see
//! `confirm::DiffRows`), so a frame does not re-lay the diff out.

use std::rc::Rc;
use std::sync::PoisonError;
use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph, Widget};

use super::App;
use super::confirm::{ConfirmMode, ConfirmView};
use crate::guard::ConfirmKind;
use crate::tui::style::{
    Theme, cut_to_width, diff_stats, mask_secrets, split_rows, unified_rows, wrap_line,
};

/// Rows of a confirm's diff shown before `f`.
const DIFF_ROWS_INLINE: usize = 14;

impl ConfirmView {
    /// The diff's rows at `width`, cached.
    fn rows(&self, width: u16, theme: Theme) -> Rc<Vec<Line<'static>>> {
        self.rows.get_or((width, self.split, theme), || {
            if self.lines.is_empty() {
                Vec::new()
            } else if self.split {
                split_rows(&self.lines, width, theme)
            } else {
                unified_rows(&self.lines, width, theme, &self.notes)
            }
        })
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

impl App {
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
                let again = c.pending.again.as_ref().map_or(0, |a| {
                    (a.chars().count() + 2) / (cols.max(8) as usize - 2) + 1
                });
                (diff.min(DIFF_ROWS_INLINE) + more + c.loose.len() + placeholder + again + form + 5)
                    as u16
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
        let s = &self.status;
        // Counts the server did not report are estimates: `~1.2k`.
        let mark = if s.estimated { "~" } else { "" };
        let k = |n: u64| {
            if n >= 1000 {
                format!("{mark}{:.1}k", n as f64 / 1000.0)
            } else {
                format!("{mark}{n}")
            }
        };
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
        if let Some(cost) = s.cost {
            spans.push(Span::styled(
                format!(" · {}", crate::settings::prices::show_cost(cost)),
                t.dim(),
            ));
        }
        if self.running() {
            spans.push(Span::styled(" · esc to interrupt", t.dim()));
        }
        Paragraph::new(Line::from(spans)).render(area, buf);
    }

    fn render_idle(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        let t = self.opts.theme;
        let mut lines = Vec::new();
        let asked = self.ask.as_ref().map(|a| {
            let first = a.question.text().lines().next().unwrap_or_default();
            let keys = match &a.question {
                crate::prim::Question::YesNo(_) => "  y yes · n no".to_string(),
                crate::prim::Question::Choice(_, choices) => {
                    let listed: Vec<String> = choices
                        .iter()
                        .take(9)
                        .enumerate()
                        .map(|(i, c)| format!("{} {c}", i + 1))
                        .collect();
                    format!("  {} · esc skip", listed.join(" · "))
                }
                crate::prim::Question::Text(_) => "  type the answer, enter · esc skip".to_string(),
            };
            Line::from(vec![
                Span::styled("? ", t.accent()),
                Span::raw(mask_secrets(first)),
                Span::styled(keys, t.key()),
            ])
        });
        let activity = match (&self.notice, self.running) {
            _ if asked.is_some() => asked.unwrap_or_default(),
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
        if let Some(again) = &c.pending.again {
            let line = Line::from(Span::styled(format!("↻ {again}"), t.warn()));
            lines.extend(wrap_line(&line, inner.width));
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
                // Split and unified are views of a diff; a command has none.
                if !c.lines.is_empty() {
                    first.extend(hint("t", if c.split { "unified" } else { "split" }));
                }
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
