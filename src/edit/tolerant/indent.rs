//! Indentation at a tolerant match: the file's and the model's indent units,
//! how old's indentation maps to the file's at a candidate place (a shift),
//! and the replacement written with the file's bytes on lines old and new
//! agree on and the file's indentation on the lines new brings in.

use std::borrow::Cow;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::{Level, Match};
use crate::edit::text::{LineIndex, split_lines};

/// One indent level of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Tab,
    Spaces(usize),
}

impl Unit {
    /// The unit a text indents with: tabs when most indented lines start
    /// with one, else the most common step between neighbouring lines.
    pub fn detect<'a>(lines: impl Iterator<Item = &'a str>) -> Option<Unit> {
        let (mut tabs, mut spaced) = (0usize, 0usize);
        let mut steps = [0usize; 9];
        // Steps between lines, not a first line's depth: a snippet that
        // starts 8 spaces deep says nothing about its unit.
        let mut prev: Option<usize> = None;
        for line in lines {
            if line.trim().is_empty() {
                continue;
            }
            match line.as_bytes()[0] {
                b'\t' => tabs += 1,
                b' ' => spaced += 1,
                _ => {}
            }
            let width = line.len() - line.trim_start_matches(' ').len();
            // Steps of other sizes are alignment (a continuation line under
            // an open parenthesis), not indentation.
            if let Some(p) = prev
                && width > p
                && matches!(width - p, 2 | 3 | 4 | 8)
            {
                steps[width - p] += 1;
            }
            prev = Some(width);
        }
        if tabs > spaced {
            return Some(Unit::Tab);
        }
        let (step, count) = steps.iter().enumerate().max_by_key(|&(s, c)| (*c, s))?;
        (*count > 0).then_some(Unit::Spaces(step))
    }

    fn render(self, levels: usize) -> String {
        match self {
            Unit::Tab => "\t".repeat(levels),
            Unit::Spaces(n) => " ".repeat(levels * n),
        }
    }

    /// An indentation as (levels, extra spaces) in this unit.
    fn measure(self, indent: &str) -> (usize, usize) {
        let tabs = indent.chars().filter(|&c| c == '\t').count();
        let spaces = indent.chars().filter(|&c| c != '\t').count();
        let per = match self {
            Unit::Tab => 4,
            Unit::Spaces(n) => n,
        };
        (tabs + spaces / per, spaces % per)
    }
}

/// How new's indentation maps to the file's at a match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shift {
    Same,
    /// The file's lines carry this extra prefix.
    Add(String),
    /// The file's lines lack this prefix that old's lines carry.
    Remove(String),
    /// Levels in the model's unit become levels in the file's unit.
    Levels {
        delta: isize,
        old: Unit,
        file: Unit,
    },
}

pub(super) fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// How the file's indentation relates to old's at a candidate, or None
/// when it is not one uniform shift.
pub(super) fn shift_for(
    level: Level,
    old_lines: &[&str],
    file_lines: &[&str],
    old_unit: Option<Unit>,
    file_unit: Option<Unit>,
) -> Option<Shift> {
    if level == Level::TrailingWhitespace {
        return Some(Shift::Same);
    }
    let pairs: Vec<(&str, &str)> = old_lines
        .iter()
        .zip(file_lines)
        .filter(|(o, _)| !o.trim().is_empty())
        .map(|(o, f)| (indent_of(o), indent_of(f)))
        .collect();
    if let Some(shift) = prefix_shift(&pairs) {
        return Some(shift);
    }
    if level == Level::Indentation {
        return None;
    }
    // The file's unit here: tabs when its lines here indent with them.
    let file = if pairs.iter().any(|(_, f)| f.contains('\t')) {
        Unit::Tab
    } else {
        file_unit
            .filter(|u| *u != Unit::Tab)
            .or_else(|| Unit::detect(file_lines.iter().copied()))
            .unwrap_or(Unit::Spaces(4))
    };
    // The model's unit is the one that makes every line here match: learnt
    // from old against these lines, not from the file alone.
    let old_tabs = pairs.iter().any(|(o, _)| o.contains('\t'));
    let old_spaces = pairs.iter().any(|(o, _)| o.contains(' '));
    let fits: Vec<(Unit, isize)> = MODEL_UNITS
        .iter()
        .filter(|u| match u {
            Unit::Tab => old_tabs,
            Unit::Spaces(_) => old_spaces || !old_tabs,
        })
        .filter_map(|&u| levels_delta(&pairs, u, file).map(|d| (u, d)))
        .collect();
    let chosen = old_unit
        .and_then(|u| fits.iter().find(|(f, _)| *f == u))
        .or_else(|| {
            // All lines at one depth fit several units; the model most
            // likely kept the depth.
            let same_depth: Vec<&(Unit, isize)> = fits.iter().filter(|(_, d)| *d == 0).collect();
            (same_depth.len() == 1).then(|| same_depth[0])
        })
        .or_else(|| (fits.len() == 1).then(|| &fits[0]))?;
    Some(Shift::Levels {
        delta: chosen.1,
        old: chosen.0,
        file,
    })
}

/// Units a model may have written in, most likely first.
pub(super) const MODEL_UNITS: [Unit; 9] = [
    Unit::Tab,
    Unit::Spaces(4),
    Unit::Spaces(2),
    Unit::Spaces(8),
    Unit::Spaces(3),
    Unit::Spaces(1),
    Unit::Spaces(5),
    Unit::Spaces(6),
    Unit::Spaces(7),
];

/// The one level difference that maps old's indentation in `old` units to
/// the file's in `file` units on every line, if there is one.
pub(super) fn levels_delta(pairs: &[(&str, &str)], old: Unit, file: Unit) -> Option<isize> {
    let mut delta = None;
    for (o, f) in pairs {
        let (ol, orem) = old.measure(o);
        let (fl, frem) = file.measure(f);
        let d = fl as isize - ol as isize;
        if orem != frem || delta.is_some_and(|x| x != d) {
            return None;
        }
        delta = Some(d);
    }
    Some(delta.unwrap_or(0))
}

/// The same prefix added to, or taken from, every line's indentation.
pub(super) fn prefix_shift(pairs: &[(&str, &str)]) -> Option<Shift> {
    let &(o, f) = pairs.first()?;
    if let Some(extra) = f.strip_suffix(o)
        && pairs.iter().all(|(o, f)| f.strip_suffix(o) == Some(extra))
    {
        return Some(if extra.is_empty() {
            Shift::Same
        } else {
            Shift::Add(extra.to_string())
        });
    }
    let missing = o.strip_suffix(f)?;
    pairs
        .iter()
        .all(|(o, f)| o.strip_suffix(f) == Some(missing))
        .then(|| Shift::Remove(missing.to_string()))
}

/// The text that takes the place of a match: new, with the file's bytes on
/// lines old and new agree on and the file's indentation on the rest.
pub(crate) fn replacement(
    text: &str,
    lines: &LineIndex,
    m: &Match,
    old: &str,
    new: &str,
) -> String {
    if m.partial {
        return new.to_string();
    }
    let (old_lines, _) = split_lines(old);
    let (new_lines, new_nl) = split_lines(new);
    let file_lines: Vec<&str> = (m.first_line..m.first_line + m.line_count)
        .map(|i| lines.line(text, i))
        .collect();
    let mut out: Vec<Cow<str>> = Vec::with_capacity(new_lines.len());
    for op in capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                out.extend(
                    file_lines[old_index..old_index + len]
                        .iter()
                        .map(|l| Cow::Borrowed(*l)),
                );
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => {
                out.extend(
                    new_lines[new_index..new_index + new_len]
                        .iter()
                        .map(|l| reindent(l, &m.shift)),
                );
            }
        }
    }
    let mut joined = out.join("\n");
    // A match that ends the file without a final newline keeps it missing.
    let at_eof_without_nl = m.range.end == text.len() && !text.ends_with('\n');
    if new_nl && !(at_eof_without_nl && old.ends_with('\n')) {
        joined.push('\n');
    }
    joined
}

pub(super) fn reindent<'a>(line: &'a str, shift: &Shift) -> Cow<'a, str> {
    if line.trim().is_empty() {
        return Cow::Borrowed(if *shift == Shift::Same { line } else { "" });
    }
    match shift {
        Shift::Same => Cow::Borrowed(line),
        Shift::Add(extra) => Cow::Owned(format!("{extra}{line}")),
        Shift::Remove(missing) => Cow::Borrowed(
            line.strip_prefix(missing.as_str())
                .unwrap_or(line.trim_start()),
        ),
        Shift::Levels { delta, old, file } => {
            let indent = indent_of(line);
            let (levels, extra) = old.measure(indent);
            let levels = (levels as isize + delta).max(0) as usize;
            Cow::Owned(format!(
                "{}{}{}",
                file.render(levels),
                " ".repeat(extra),
                &line[indent.len()..]
            ))
        }
    }
}
