//! How the terminal client looks: the dark and light palettes, markdown-lite
//! (headings, lists, code blocks, inline code) for model text, the diff
//! lines of a confirm (line numbers, gutter, unified or split), secret
//! masking, and hard wrapping of lines for the scrollback.

use std::sync::LazyLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use regex::Regex;
use unicode_width::UnicodeWidthChar;

/// The palette. Diff colours are backgrounds tinted for the terminal's
/// background, so syntax-less text stays readable on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub light: bool,
    /// No colours at all (`NO_COLOR`): diffs read by their `+`/`-` gutter,
    /// a Security confirm by its double border and bold title.
    pub plain: bool,
}

impl Theme {
    pub const DARK: Theme = Theme {
        light: false,
        plain: false,
    };
    pub const LIGHT: Theme = Theme {
        light: true,
        plain: false,
    };
    pub const PLAIN: Theme = Theme {
        light: false,
        plain: true,
    };

    /// `NO_COLOR` (set and not empty): plain; else `NIB_THEME=light|dark`,
    /// else `COLORFGBG` (a light background ends in 7 or 15), else dark.
    pub fn detect() -> Theme {
        if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return Theme::PLAIN;
        }
        if let Ok(t) = std::env::var("NIB_THEME") {
            return Theme {
                light: t.eq_ignore_ascii_case("light"),
                plain: false,
            };
        }
        let light = std::env::var("COLORFGBG")
            .ok()
            .and_then(|v| v.rsplit(';').next().map(str::to_string))
            .is_some_and(|bg| bg == "7" || bg == "15");
        Theme {
            light,
            plain: false,
        }
    }

    fn rgb(&self, dark: (u8, u8, u8), light: (u8, u8, u8)) -> Color {
        if self.plain {
            return Color::Reset;
        }
        let (r, g, b) = if self.light { light } else { dark };
        Color::Rgb(r, g, b)
    }

    pub fn text(&self) -> Style {
        Style::default()
    }
    pub fn dim(&self) -> Style {
        Style::default().fg(self.rgb((130, 130, 140), (110, 110, 120)))
    }
    pub fn accent(&self) -> Style {
        Style::default().fg(self.rgb((110, 170, 255), (20, 90, 200)))
    }
    pub fn ok(&self) -> Style {
        Style::default().fg(self.rgb((120, 200, 120), (20, 120, 40)))
    }
    pub fn error(&self) -> Style {
        Style::default().fg(self.rgb((240, 110, 100), (180, 30, 30)))
    }
    pub fn warn(&self) -> Style {
        Style::default().fg(self.rgb((240, 190, 80), (150, 90, 0)))
    }
    pub fn code(&self) -> Style {
        Style::default().fg(self.rgb((220, 180, 120), (140, 70, 10)))
    }
    pub fn heading(&self) -> Style {
        self.accent().add_modifier(Modifier::BOLD)
    }
    pub fn added(&self) -> Style {
        if self.plain {
            return Style::default();
        }
        Style::default()
            .bg(self.rgb((33, 58, 43), (218, 251, 225)))
            .fg(self.rgb((200, 235, 200), (20, 70, 30)))
    }
    pub fn removed(&self) -> Style {
        if self.plain {
            return Style::default().add_modifier(Modifier::DIM);
        }
        Style::default()
            .bg(self.rgb((74, 34, 29), (255, 235, 233)))
            .fg(self.rgb((240, 200, 195), (110, 20, 20)))
    }
    pub fn gutter(&self) -> Style {
        self.dim()
    }
    pub fn hunk(&self) -> Style {
        Style::default().fg(self.rgb((120, 160, 200), (60, 90, 150)))
    }
    /// The border and title of a Security confirm.
    pub fn security(&self) -> Style {
        Style::default()
            .fg(self.rgb((255, 120, 110), (170, 0, 0)))
            .add_modifier(Modifier::BOLD)
    }
    pub fn key(&self) -> Style {
        self.accent().add_modifier(Modifier::BOLD)
    }
}

/// Credential-shaped strings, masked wherever the client shows text.
// A constant pattern, compiled by every snapshot test.
#[allow(clippy::expect_used)]
static SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(AKIA|ASIA)[0-9A-Z]{16}",
        r"|gh[pousr]_[A-Za-z0-9]{30,}",
        r"|glpat-[A-Za-z0-9_\-]{20,}",
        r"|xox[abposr]-[A-Za-z0-9\-]{10,}",
        r"|sk-(ant-)?[A-Za-z0-9_\-]{20,}",
        r"|sk_(live|test)_[A-Za-z0-9]{16,}",
        r"|npm_[A-Za-z0-9]{30,}",
        r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        r#"|(?i:secret|token|password|passwd|api_?key)[A-Za-z_]*\s*[=:]\s*["']?[A-Za-z0-9/+_\-]{16,}"#,
    ))
    .expect("the secret pattern is valid")
});

/// `text` with credential-shaped values masked: the first four characters
/// stay (so the user can tell which key it is), the rest become `•`.
pub fn mask_secrets(text: &str) -> String {
    SECRET
        .replace_all(text, |c: &regex::Captures| {
            let m = &c[0];
            // For `NAME=value` keep the name and mask the value.
            let (head, value) = match m.find(['=', ':']) {
                Some(i) if !m.starts_with("AKIA") && !m.starts_with("ASIA") => {
                    let v = m[i + 1..].trim_start_matches([' ', '"', '\'']);
                    (&m[..m.len() - v.len()], v)
                }
                _ => ("", m),
            };
            let keep: String = value.chars().take(4).collect();
            let hidden = value.chars().count().saturating_sub(4);
            format!("{head}{keep}{}", "•".repeat(hidden))
        })
        .into_owned()
}

/// Whether `text` holds a credential-shaped string.
pub fn has_secret(text: &str) -> bool {
    SECRET.is_match(text)
}

/// Markdown-lite for model text, one source line at a time so a stream can
/// be rendered line by line: `in_code` carries the code-block state.
pub fn markdown_line(line: &str, in_code: &mut bool, theme: Theme) -> Option<Line<'static>> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("```") {
        *in_code = !*in_code;
        let lang = trimmed.trim_start_matches('`').trim();
        return if *in_code && !lang.is_empty() {
            Some(Line::from(Span::styled(format!("  ┌ {lang}"), theme.dim())))
        } else {
            None
        };
    }
    let line = mask_secrets(line);
    if *in_code {
        return Some(Line::from(vec![
            Span::styled("  │ ", theme.dim()),
            Span::styled(line, theme.code()),
        ]));
    }
    if let Some(rest) = trimmed.strip_prefix('#') {
        let text = rest.trim_start_matches('#').trim().to_string();
        return Some(Line::from(Span::styled(text, theme.heading())));
    }
    let indent = line.len() - trimmed.len();
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = trimmed.strip_prefix(bullet) {
            let mut spans = vec![Span::raw(format!("{}• ", " ".repeat(indent)))];
            spans.extend(inline_code(rest, theme));
            return Some(Line::from(spans));
        }
    }
    Some(Line::from(inline_code(&line, theme)))
}

/// `code` spans coloured, the backticks dropped.
fn inline_code(text: &str, theme: Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for (i, part) in text.split('`').enumerate() {
        if part.is_empty() {
            continue;
        }
        // Odd pieces sit between backticks (an unmatched one stays plain).
        if i % 2 == 1 && text.matches('`').count() > i {
            spans.push(Span::styled(part.to_string(), theme.code()));
        } else {
            spans.push(Span::raw(part.to_string()));
        }
    }
    spans
}

/// One line of a unified diff, with its line numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    /// `--- a` / `+++ b` / `@@ … @@`.
    Header(String),
    Context {
        old: usize,
        new: usize,
        text: String,
    },
    Removed {
        old: usize,
        text: String,
    },
    Added {
        new: usize,
        text: String,
    },
}

/// Parses a unified diff into numbered lines.
pub fn parse_diff(diff: &str) -> Vec<DiffLine> {
    let (mut old, mut new) = (0usize, 0usize);
    let mut out = Vec::new();
    for line in diff.lines() {
        if line.starts_with("@@") {
            let num = |sign: char| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(sign))
                    .and_then(|w| w.split(',').next())
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(1)
            };
            old = num('-');
            new = num('+');
            out.push(DiffLine::Header(line.to_string()));
        } else if line.starts_with("---") || line.starts_with("+++") {
            out.push(DiffLine::Header(line.to_string()));
        } else if let Some(t) = line.strip_prefix('+') {
            out.push(DiffLine::Added {
                new,
                text: t.to_string(),
            });
            new += 1;
        } else if let Some(t) = line.strip_prefix('-') {
            out.push(DiffLine::Removed {
                old,
                text: t.to_string(),
            });
            old += 1;
        } else if line.starts_with('\\') {
            out.push(DiffLine::Header(line.to_string()));
        } else {
            let t = line.strip_prefix(' ').unwrap_or(line);
            out.push(DiffLine::Context {
                old,
                new,
                text: t.to_string(),
            });
            old += 1;
            new += 1;
        }
    }
    out
}

/// Counts of added and removed lines.
pub fn diff_stats(lines: &[DiffLine]) -> (usize, usize) {
    lines.iter().fold((0, 0), |(a, r), l| match l {
        DiffLine::Added { .. } => (a + 1, r),
        DiffLine::Removed { .. } => (a, r + 1),
        _ => (a, r),
    })
}

/// The rows of a unified view: `old new ±text`, masked; `notes` maps a
/// row index to the marks pinned to it (shown after the row).
pub fn unified_rows(
    lines: &[DiffLine],
    width: u16,
    theme: Theme,
    notes: &[(usize, String)],
) -> Vec<Line<'static>> {
    let num = |n: Option<usize>| n.map_or("    ".to_string(), |n| format!("{n:>4}"));
    let mut rows = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let (o, n, sign, text, style) = match l {
            DiffLine::Header(h) if h.starts_with("---") || h.starts_with("+++") => continue,
            DiffLine::Header(h) => {
                rows.push(Line::from(Span::styled(h.clone(), theme.hunk())));
                continue;
            }
            DiffLine::Context { old, new, text } => {
                (Some(*old), Some(*new), ' ', text, theme.text())
            }
            DiffLine::Removed { old, text } => (Some(*old), None, '-', text, theme.removed()),
            DiffLine::Added { new, text } => (None, Some(*new), '+', text, theme.added()),
        };
        let body = format!("{sign}{}", mask_secrets(&text.replace('\t', "    ")));
        let used = 10usize;
        let pad = (width as usize).saturating_sub(used + display_width(&body));
        let body = if style == theme.text() {
            body
        } else {
            format!("{body}{}", " ".repeat(pad))
        };
        rows.push(Line::from(vec![
            Span::styled(format!("{} {} ", num(o), num(n)), theme.gutter()),
            Span::styled(body, style),
        ]));
        for (_, note) in notes.iter().filter(|(at, _)| *at == i) {
            rows.push(Line::from(Span::styled(
                format!("          ⚠ {note}"),
                theme.security(),
            )));
        }
    }
    rows
}

/// The rows of a split view: old on the left, new on the right; runs of
/// removed and added lines are paired.
pub fn split_rows(lines: &[DiffLine], width: u16, theme: Theme) -> Vec<Line<'static>> {
    let half = (width as usize).saturating_sub(1) / 2;
    let cell = |n: Option<usize>, t: Option<&str>, style: Style| -> Vec<Span<'static>> {
        let num = n.map_or("    ".to_string(), |n| format!("{n:>4}"));
        let text = mask_secrets(&t.unwrap_or("").replace('\t', "    "));
        let room = half.saturating_sub(5);
        let text = cut_to_width(&text, room);
        let pad = room.saturating_sub(display_width(&text));
        vec![
            Span::styled(format!("{num} "), theme.gutter()),
            Span::styled(format!("{text}{}", " ".repeat(pad)), style),
        ]
    };
    let mut rows = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match &lines[i] {
            DiffLine::Header(h) if h.starts_with("---") || h.starts_with("+++") => i += 1,
            DiffLine::Header(h) => {
                rows.push(Line::from(Span::styled(h.clone(), theme.hunk())));
                i += 1;
            }
            DiffLine::Context { old, new, text } => {
                let mut spans = cell(Some(*old), Some(text), theme.text());
                spans.push(Span::styled("│", theme.dim()));
                spans.extend(cell(Some(*new), Some(text), theme.text()));
                rows.push(Line::from(spans));
                i += 1;
            }
            _ => {
                let mut removed = Vec::new();
                let mut added = Vec::new();
                while let Some(l) = lines.get(i) {
                    match l {
                        DiffLine::Removed { old, text } => removed.push((*old, text.clone())),
                        DiffLine::Added { new, text } => added.push((*new, text.clone())),
                        _ => break,
                    }
                    i += 1;
                }
                for k in 0..removed.len().max(added.len()) {
                    let left = removed.get(k);
                    let right = added.get(k);
                    let mut spans = cell(
                        left.map(|l| l.0),
                        left.map(|l| l.1.as_str()),
                        if left.is_some() {
                            theme.removed()
                        } else {
                            theme.text()
                        },
                    );
                    spans.push(Span::styled("│", theme.dim()));
                    spans.extend(cell(
                        right.map(|r| r.0),
                        right.map(|r| r.1.as_str()),
                        if right.is_some() {
                            theme.added()
                        } else {
                            theme.text()
                        },
                    ));
                    rows.push(Line::from(spans));
                }
            }
        }
    }
    rows
}

pub fn display_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `s` cut to `width` columns, with `…` when cut.
pub fn cut_to_width(s: &str, width: usize) -> String {
    if display_width(s) <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `line` hard-wrapped to `width` columns, styles kept across the break.
pub fn wrap_line(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    let width = width.max(1) as usize;
    if line.width() <= width {
        return vec![line.clone()];
    }
    let mut rows = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for span in &line.spans {
        let mut piece = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width {
                if !piece.is_empty() {
                    row.push(Span::styled(std::mem::take(&mut piece), span.style));
                }
                rows.push(Line::from(std::mem::take(&mut row)).style(line.style));
                used = 0;
            }
            piece.push(c);
            used += w;
        }
        if !piece.is_empty() {
            row.push(Span::styled(piece, span.style));
        }
    }
    if !row.is_empty() {
        rows.push(Line::from(row).style(line.style));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_credentials_but_keeps_their_start() {
        assert_eq!(
            mask_secrets("key AKIAABCDEFGHIJKLMNOP here"),
            "key AKIA•••••••••••••••• here"
        );
        assert_eq!(
            mask_secrets("AWS_SECRET_ACCESS_KEY=abcdEFGHijklMNOPqrstUVWX"),
            "AWS_SECRET_ACCESS_KEY=abcd••••••••••••••••••••"
        );
        assert_eq!(mask_secrets("x = 1"), "x = 1");
    }

    #[test]
    fn diff_numbers() {
        let d = "--- a/x\n+++ b/x\n@@ -3,2 +3,2 @@\n a\n-b\n+c\n";
        let lines = parse_diff(d);
        assert_eq!(
            lines[3],
            DiffLine::Context {
                old: 3,
                new: 3,
                text: "a".into()
            }
        );
        assert_eq!(
            lines[4],
            DiffLine::Removed {
                old: 4,
                text: "b".into()
            }
        );
        assert_eq!(
            lines[5],
            DiffLine::Added {
                new: 4,
                text: "c".into()
            }
        );
        assert_eq!(diff_stats(&lines), (1, 1));
    }

    #[test]
    fn markdown_lite() {
        let mut code = false;
        let t = Theme::DARK;
        let h = markdown_line("## Plan", &mut code, t).unwrap();
        assert_eq!(h.to_string(), "Plan");
        let b = markdown_line("- fix `add`", &mut code, t).unwrap();
        assert_eq!(b.to_string(), "• fix add");
        assert!(markdown_line("```python", &mut code, t).is_some());
        assert!(code);
        let c = markdown_line("x = 1", &mut code, t).unwrap();
        assert_eq!(c.to_string(), "  │ x = 1");
        assert!(markdown_line("```", &mut code, t).is_none());
        assert!(!code);
    }

    #[test]
    fn wraps_by_width() {
        let l = Line::from("abcdefghij");
        let rows = wrap_line(&l, 4);
        let text: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        assert_eq!(text, ["abcd", "efgh", "ij"]);
    }
}
