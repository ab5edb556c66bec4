//! The one exception to "an exact match writes new as sent": indentation.
//!
//! old can match exactly and still not be what the model saw:
//! - old's first line starts inside a line's indentation: the model left
//!   out all of it (`if x:` for `    if x:`) or part (`  x = 1` for
//!   `    x = 1`). new's lines keep their depth relative to old's first
//!   line: they go through the readings a tolerant match at that line would
//!   have (`tolerant::Readings`), so `    y()` under `if x:` lands one level
//!   under the file's `if x:`. Where old's first line was trimmed whole and
//!   old has more lines (which matched as sent), or the model's text shows a
//!   unit other than the file's, new may have been trimmed the same way
//!   (its first line only, the rest as sent): one more reading, and where
//!   the readings write different depths the edit is refused.
//! - old is whole lines, and new brings lines indented in a way the file
//!   never indents a statement (a tab in a file that keeps strictly to 4
//!   spaces, 2 spaces in it, or 4-space steps where the model's own text
//!   shows 4 a level and the file 2): the file's conventions win for those
//!   lines, written in its unit through the same readings, or refused when
//!   the readings disagree. A model's tab in a 4-space file is a habit of
//!   the model's text, not a choice about this file, and would leave the
//!   file with the only tab-indented line it has (in a Makefile, 4 spaces
//!   where a recipe needs its tab). A file that does not keep strictly to
//!   one unit (tabs and spaces both, odd alignment) is left as the model
//!   wrote it, and so is a file with no indented line at all: it has no
//!   convention to keep, and refusing there would refuse the first nested
//!   line of every flat file (a Markdown list's first sub-item, a script's
//!   first function).

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

use crate::edit::pieces::Pieces;
use crate::edit::text::split_lines;
use crate::edit::tolerant::{Doubt, FileUnit, Readings, Unit, indent_of, rewrite, shown_unit};

/// An exact match written otherwise than new as sent.
#[derive(Debug)]
pub(crate) struct Reindented {
    /// From the start of the match's first line to the end of the match.
    pub range: Range<usize>,
    pub text: String,
    pub why: Why,
}

#[derive(Debug)]
pub(crate) enum Why {
    /// old's first line starts after `left_out`, part or all of its
    /// line's indentation (`indent`, as old sent it).
    InsideIndentation { left_out: String, indent: String },
    /// new's lines were indented in a style foreign to the file.
    Foreign { file: Option<Unit> },
}

/// How far back an indentation may reach before old's first character.
const LONGEST_INDENT: usize = 256;

/// What an exact match of old at `at` writes, when it is not new as sent
/// (None), or why it is refused. `file` gives the file's indentation,
/// learnt once per call.
pub(crate) fn exact_indentation(
    pieces: &Pieces,
    at: usize,
    old: &str,
    new: &str,
    file: impl FnOnce() -> FileUnit,
) -> Result<Option<Reindented>, Doubt> {
    let end = at + old.len();
    // old must end where its last line does.
    if !old.ends_with('\n') {
        let after = pieces.slice_bytes(end..(end + 1).min(pieces.len()));
        if !(after.is_empty() || after == b"\n") {
            return Ok(None);
        }
    }
    let (old_lines, _) = split_lines(old);
    if old_lines.first().is_none_or(|l| l.trim().is_empty()) {
        return Ok(None);
    }
    let from = at.saturating_sub(LONGEST_INDENT);
    let before = pieces.slice_bytes(from..at);
    let line_start = match before.iter().rposition(|&b| b == b'\n') {
        Some(i) => from + i + 1,
        None if from == 0 => 0,
        None => return Ok(None),
    };
    let left_out = &before[line_start - from..];
    if !left_out.iter().all(|&b| b == b' ' || b == b'\t') {
        return Ok(None);
    }
    let (new_lines, new_nl) = split_lines(new);
    if !old.ends_with('\n') && new_lines.iter().all(|l| l.trim().is_empty()) {
        // Emptying part of a line (its end not deleted): the line stays,
        // its indentation with it.
        return Ok(None);
    }
    if left_out.is_empty() {
        // Whole lines: only lines of new at an indentation no line of old
        // has can be foreign to the file; a line at column 0 is in every
        // file's style.
        let old_indents: HashSet<&str> = old_lines.iter().map(|l| indent_of(l)).collect();
        let novel = new_lines.iter().any(|l| {
            let indent = indent_of(l);
            !l.trim().is_empty() && !indent.is_empty() && !old_indents.contains(&indent)
        });
        if !novel {
            return Ok(None);
        }
    }
    let Ok(file_text) = String::from_utf8(pieces.slice_bytes(line_start..end)) else {
        return Ok(None);
    };
    let (file_lines, _) = split_lines(&file_text);
    if file_lines.len() != old_lines.len() {
        return Ok(None);
    }
    let FileUnit(indentation) = file();
    let shown = shown_unit(old, new);
    let mut readings = Readings::at(&old_lines, &file_lines, indentation, shown);
    let left_out = String::from_utf8_lossy(left_out).into_owned();
    // new may be trimmed like old (its first line's indentation taken
    // away, the rest as sent): likely when old's other lines matched as
    // sent; and when the model's text shows a unit other than the file's
    // (its step from old's line is then as likely the file's depth as one
    // of its own levels). A trim takes all of a line's indentation.
    let other_unit = shown.is_some() && shown != readings.file_unit();
    let trimmed = indent_of(old_lines[0]).is_empty();
    let with_text = old_lines.iter().filter(|l| !l.trim().is_empty()).count();
    if !left_out.is_empty() && trimmed && (with_text > 1 || other_unit) {
        readings = readings.or_first_line_only(&left_out);
    }
    let mut lines = rewrite(&file_lines, &old_lines, &new_lines, &readings)?;
    // A blank line says nothing of depth: as sent (a last line of spaces
    // keeps a file without a final newline so).
    for (line, sent) in lines.iter_mut().zip(&new_lines) {
        if sent.trim().is_empty() {
            *line = Cow::Borrowed(sent);
        }
    }
    let mut text = lines.join("\n");
    if new_nl {
        text.push('\n');
    }
    // As sent: the indentation left out, then new.
    if text.strip_prefix(left_out.as_str()) == Some(new) {
        return Ok(None);
    }
    let why = if left_out.is_empty() {
        Why::Foreign {
            file: readings.file_unit(),
        }
    } else {
        Why::InsideIndentation {
            left_out,
            indent: indent_of(old_lines[0]).to_string(),
        }
    };
    Ok(Some(Reindented {
        range: line_start..end,
        text,
        why,
    }))
}

/// The text after an exact edit of old at `at` in plain LF `text`, when
/// the indentation rule above does not write new as sent; `Err` with the
/// reason when it refuses. None: new as sent. Tests use it to tell this
/// rule's cases from plain exact ones.
pub fn indent_left_out(
    text: &str,
    at: usize,
    old: &str,
    new: &str,
) -> Option<Result<String, String>> {
    let pieces = Pieces::new(text);
    match exact_indentation(&pieces, at, old, new, || FileUnit::of(text)) {
        Ok(None) => None,
        Ok(Some(r)) => {
            let mut out = text.to_string();
            out.replace_range(r.range, &r.text);
            Some(Ok(out))
        }
        Err(doubt) => Some(Err(doubt.to_string())),
    }
}
