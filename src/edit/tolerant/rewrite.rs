//! New written where a tolerant level matched old, through the readings
//! of `indent.rs` (an exact match writes new as sent and never comes here).
//!
//! - a line old and new agree on keeps the file's bytes;
//! - a line indented as one of old's lines is indented as the file's line
//!   there (every reading agrees);
//! - where old's indentation is the file's, the rest stand as sent, unless
//!   the file keeps strictly to its unit and a line does not (a tab in a
//!   4-space file, 2 spaces in it, 4-space steps where the model's text
//!   shows 4 a level and the file 2): the file's conventions win, through
//!   the readings;
//! - otherwise the readings place the line. Those that would open a block
//!   two levels deep at once (not a continuation) give way to those that
//!   do not; the readings left must all write the same bytes, or the edit
//!   is refused: never a guess;
//! - a line that aligns with the line before it (a continuation under its
//!   open parenthesis, a comment's ` * ` line, a line inside a string, a
//!   column no reading writes in whole units) moves by the difference that
//!   line moved by, its alignment spaces kept as sent.

use std::borrow::Cow;
use std::collections::HashMap;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::doubt::Doubt;
use super::indent::{Readings, settle};
use super::units::{Indentation, LineKind, Unit, continuations, indent_of};
use super::{Match, Probe};
use crate::edit::text::{LineIndex, split_lines};

/// What each line is (`LineKind`), by its index among all lines; None
/// for a blank line.
fn kinds_by_line(lines: &[&str]) -> Vec<Option<LineKind>> {
    let mut kinds = continuations(lines.iter().copied()).into_iter();
    lines
        .iter()
        .map(|l| (!l.trim().is_empty()).then(|| kinds.next()).flatten())
        .collect()
}

/// A line whose indentation aligns it with the line before rather than
/// placing it at a depth: a line inside a string or block comment, a
/// comment's ` * ` line, one no reading writes in whole units (a table
/// column), or a continuation aligned under an open bracket of the line
/// before or stepping from it by other than whole units of the model's
/// (a hanging indent of one level is a depth, and the readings place it).
fn aligns(kind: Option<LineKind>, line: &str, before: &str, readings: &Readings) -> bool {
    let indent = indent_of(line);
    if kind == Some(LineKind::Text)
        || line.trim_start().starts_with('*')
        || !readings.writes_whole(indent)
    {
        return true;
    }
    if kind != Some(LineKind::Continuation) {
        return false;
    }
    let hanging = indent_of(before).len() < indent.len()
        && indent.strip_prefix(indent_of(before)).is_some_and(|step| {
            let unit = readings.shown().unwrap_or(Unit::Spaces(2));
            matches!(unit.measure(step), Some((levels, 0)) if levels > 0)
        });
    under_bracket(line, before) || !hanging
}

/// A continuation whose indentation ends under an open bracket of the
/// line before it, outside a string there (`"{{` opens no bracket).
fn under_bracket(line: &str, before: &str) -> bool {
    let Some(at) = indent_of(line).len().checked_sub(1) else {
        return false;
    };
    let bytes = before.as_bytes();
    bytes.get(at).is_some_and(|b| b"([{".contains(b))
        && bytes[..at].iter().filter(|&&b| b == b'"').count() % 2 == 0
}

/// A line whose own text says it aligns rather than nests: a comment's
/// ` * ` line, or one under an open bracket of the line before. Any other
/// aligned line (in a string, a column no reading writes whole) could be a
/// depth to a reading that maps units, so the readings are asked too.
fn pinned(line: &str, before: &str) -> bool {
    line.trim_start().starts_with('*') || under_bracket(line, before)
}

/// A line's indentation moved by the difference the line before it was
/// moved by: `sent_before` became `file_before`. None when the two cannot
/// be compared (tabs and spaces mixed differently).
fn moved_like(indent: &str, sent_before: &str, file_before: &str) -> Option<String> {
    if let Some(rest) = indent.strip_prefix(sent_before) {
        return Some(format!("{file_before}{rest}"));
    }
    let spaces = |s: &str| s.bytes().all(|b| b == b' ');
    if let Some(rest) = sent_before.strip_prefix(indent) {
        // Shallower than the line before: take the difference off the end
        // of the file's indentation, when it ends so.
        if let Some(kept) = file_before.strip_suffix(rest) {
            return Some(kept.to_string());
        }
        if spaces(rest) && spaces(file_before) && spaces(sent_before) {
            let width = file_before.len().checked_sub(rest.len())?;
            return Some(" ".repeat(width));
        }
    }
    None
}

/// new's lines as they are written at a place: `file_lines` are the
/// file's lines old's lines stand on.
pub(crate) fn rewrite<'a>(
    file_lines: &[&'a str],
    old_lines: &[&str],
    new_lines: &[&'a str],
    readings: &Readings,
) -> Result<Vec<Cow<'a, str>>, Doubt> {
    // Old's indentations and the lines (by index) that carry each, apart
    // for lines inside a string or block comment (whose indentation is
    // text): a line of new takes the file's indentation only from an old
    // line of its own kind.
    let old_kinds = kinds_by_line(old_lines);
    let new_kinds = kinds_by_line(new_lines);
    let is_text = |kinds: &[Option<LineKind>], i: usize| kinds[i] == Some(LineKind::Text);
    let mut by_indent: HashMap<(&str, bool), Vec<usize>> = HashMap::new();
    for (i, l) in old_lines.iter().enumerate() {
        if !l.trim().is_empty() {
            by_indent
                .entry((indent_of(l), is_text(&old_kinds, i)))
                .or_default()
                .push(i);
        }
    }
    let mut out: Vec<Option<Cow<str>>> = Vec::with_capacity(new_lines.len());
    // New lines (index in new) that no old line pins to a depth: those
    // placed by the readings, and those aligned with the line before.
    let mut open: Vec<usize> = Vec::new();
    let mut aligned: Vec<usize> = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, old_lines, new_lines) {
        match op {
            DiffOp::Equal { old_index, len, .. } => out.extend(
                file_lines[old_index..old_index + len]
                    .iter()
                    .map(|l| Some(Cow::Borrowed(*l))),
            ),
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            }
            | DiffOp::Replace {
                old_index,
                new_index,
                new_len,
                ..
            } => {
                for k in 0..new_len {
                    let at = new_index + k;
                    let line = new_lines[at];
                    let indent = indent_of(line);
                    let written = if line.trim().is_empty() {
                        Some(Cow::Borrowed(if readings.literal() { line } else { "" }))
                    } else {
                        by_indent
                            .get(&(indent, is_text(&new_kinds, at)))
                            .map(|pin| {
                                let near = nearest(pin, old_index + k);
                                let file_indent = indent_of(file_lines[near]);
                                Cow::Owned(format!("{file_indent}{}", &line[indent.len()..]))
                            })
                    };
                    let before = (0..at).rev().find(|&j| !new_lines[j].trim().is_empty());
                    if written.is_none() {
                        if let Some(b) = before
                            && aligns(new_kinds[at], line, new_lines[b], readings)
                        {
                            aligned.push(at);
                        } else {
                            open.push(at);
                        }
                    }
                    out.push(written);
                }
            }
        }
    }
    // Statements first, through the readings; then the aligned lines, in
    // order, each moved as the line before it was.
    let mut settled = settle(&out, &open, new_lines, readings)?.into_iter();
    for &k in &open {
        let (_, indent) = settled.next().unwrap_or_default();
        out[k] = Some(with_indent(&indent, new_lines[k]));
    }
    for &k in &aligned {
        let line = new_lines[k];
        let before = (0..k).rev().find(|&j| !new_lines[j].trim().is_empty());
        let moved = before.and_then(|j| {
            // Where old's indentation is the file's, nothing moved.
            if readings.literal() {
                return Some(indent_of(line).to_string());
            }
            // A line inside a string moves only with a line of the string,
            // and code only with code (a string's indentation is text).
            if is_text(&new_kinds, k) != is_text(&new_kinds, j) {
                return None;
            }
            let written = out[j].as_deref()?;
            moved_like(indent_of(line), indent_of(new_lines[j]), indent_of(written))
        });
        match moved {
            Some(indent) => {
                if let Some(j) = before {
                    agree_on_alignment(k, line, new_lines[j], &out[j], &indent, readings)?;
                }
                out[k] = Some(with_indent(&indent, line));
            }
            None if is_text(&new_kinds, k) => {
                return Err(Doubt::InText {
                    line: k + 1,
                    text: line.trim().to_string(),
                });
            }
            None => {
                let mut one = settle(&out, &[k], new_lines, readings)?;
                let (_, indent) = one.pop().unwrap_or_default();
                out[k] = Some(with_indent(&indent, line));
                open.push(k);
            }
        }
    }
    for &k in &open {
        depth_past_an_aligned_line(k, new_lines, &out, readings)?;
    }
    Ok(out.into_iter().flatten().collect())
}

/// An aligned line (new's `k`, after `before`, written `before_written`)
/// moved to `moved` by the difference its line before moved: refused
/// unless every reading that writes the line before so writes this line
/// there too. A step of 2 spaces sent in a 2-space unit to a 4-space file
/// is 2 spaces of alignment moved by the difference, or one level (4) to
/// the reading: the two disagree, and a guess would be a wrong write.
fn agree_on_alignment(
    k: usize,
    line: &str,
    before: &str,
    before_written: &Option<Cow<str>>,
    moved: &str,
    readings: &Readings,
) -> Result<(), Doubt> {
    if readings.literal() || pinned(line, before) {
        return Ok(());
    }
    let Some(written) = before_written.as_deref() else {
        return Ok(());
    };
    let indent = indent_of(line);
    let (sent_before, file_before) = (indent_of(before), indent_of(written));
    let mut options = readings.aligned_options(indent, sent_before, file_before);
    options.extend(readings.steps_in_unknown_unit(indent, sent_before, file_before));
    options.push(moved.to_string());
    one_depth(options, k, line, indent)
}

/// A line the readings placed (new's `k`) deeper than the line before
/// it, where no reading writes that line where it was written (a string's
/// line, a column of alignment): its depth is relative to a line whose
/// place is not in levels, so levels from the margin, the difference the
/// line before moved by, and levels past it are each a reading of the
/// model's spaces. 14 spaces sent in 2 a level after a string line sent at
/// 12 and written at 22 could be 28, 24 or 26: refused unless they agree.
fn depth_past_an_aligned_line(
    k: usize,
    new_lines: &[&str],
    out: &[Option<Cow<str>>],
    readings: &Readings,
) -> Result<(), Doubt> {
    if readings.literal() {
        return Ok(());
    }
    let Some(j) = (0..k).rev().find(|&j| !new_lines[j].trim().is_empty()) else {
        return Ok(());
    };
    let (Some(written), Some(before_written)) = (out[k].as_deref(), out[j].as_deref()) else {
        return Ok(());
    };
    let (line, sent_before) = (new_lines[k], indent_of(new_lines[j]));
    let indent = indent_of(line);
    if indent.len() <= sent_before.len() || !indent.starts_with(sent_before) {
        return Ok(());
    }
    let file_before = indent_of(before_written);
    if !readings
        .aligned_options(indent, sent_before, file_before)
        .is_empty()
    {
        return Ok(());
    }
    let mut options = vec![indent_of(written).to_string()];
    options.extend(moved_like(indent, sent_before, file_before));
    options.extend(readings.levels_past(indent, sent_before, file_before));
    options.extend(readings.steps_in_unknown_unit(indent, sent_before, file_before));
    one_depth(options, k, line, indent)
}

/// `line` with its indentation replaced by `indent`.
fn with_indent<'a>(indent: &str, line: &str) -> Cow<'a, str> {
    Cow::Owned(format!("{indent}{}", &line[indent_of(line).len()..]))
}

/// The text that takes the place of a tolerant match: new, with the file's
/// bytes on lines old and new agree on and the file's indentation on the
/// rest.
pub(crate) fn replacement(
    text: &str,
    lines: &LineIndex,
    m: &Match,
    probe: &Probe,
    new: &str,
) -> Result<String, Doubt> {
    if m.partial {
        return Ok(new.to_string());
    }
    let (new_lines, new_nl) = split_lines(new);
    let file_lines: Vec<&str> = (m.first_line..m.first_line + m.line_count)
        .map(|i| lines.line(text, i))
        .collect();
    let file = match &probe.file_unit {
        Some(unit) => unit.get().0,
        None => Indentation::of_file((0..lines.count()).map(|i| lines.line(text, i))),
    };
    let readings = Readings::at(&probe.old_lines, &file_lines, file, probe.shown);
    let out = rewrite(&file_lines, &probe.old_lines, &new_lines, &readings)?;
    let mut joined = out.join("\n");
    // A match that ends the file without a final newline keeps it missing.
    let at_eof_without_nl = m.range.end == text.len() && !text.ends_with('\n');
    if new_nl && !(at_eof_without_nl && probe.old_nl) {
        joined.push('\n');
    }
    Ok(joined)
}

/// Of old's lines `at` (ascending), the one nearest `index`.
fn nearest(at: &[usize], index: usize) -> usize {
    let i = at.partition_point(|&x| x < index);
    match (i.checked_sub(1).map(|p| at[p]), at.get(i)) {
        (Some(before), Some(&after)) if after - index < index - before => after,
        (Some(before), _) => before,
        (None, Some(&after)) => after,
        (None, None) => index,
    }
}

/// Fine when the readings leave one depth for line `k`; else the doubt
/// that lists them, shortest first.
fn one_depth(mut options: Vec<String>, k: usize, line: &str, indent: &str) -> Result<(), Doubt> {
    options.sort_by_key(|o| (o.len(), o.clone()));
    options.dedup();
    match options.len() {
        1 => Ok(()),
        _ => Err(Doubt::Depths {
            line: k + 1,
            text: line.trim().to_string(),
            indent: indent.to_string(),
            options,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::tolerant::indent::shown_unit;

    fn file(unit: Unit, strict: bool) -> Indentation {
        Indentation {
            unit: Some(unit),
            keeps_character: strict,
            keeps_unit: strict,
            sure: true,
        }
    }

    fn write(
        file_lines: &[&str],
        old: &[&str],
        new: &[&str],
        indentation: Indentation,
    ) -> Result<Vec<String>, Doubt> {
        let shown = shown_unit(&old.join("\n"), &new.join("\n"));
        let readings = Readings::at(old, file_lines, indentation, shown);
        rewrite(file_lines, old, new, &readings)
            .map(|lines| lines.into_iter().map(Cow::into_owned).collect())
    }

    #[test]
    fn a_line_at_one_of_olds_depths_takes_the_files_indentation() {
        let out = write(
            &["        a", "        b"],
            &["    a", "    b"],
            &["    a", "    c", "    b"],
            file(Unit::Spaces(4), true),
        );
        assert_eq!(out.unwrap(), ["        a", "        c", "        b"]);
    }

    #[test]
    fn the_models_shown_unit_maps_level_to_level() {
        // D5: a prefix of 2 would write 6 spaces in a 4-space file.
        let out = write(
            &["    x()", "    y()"],
            &["  x()", "  y()"],
            &["  x()", "  if q:", "    y()"],
            file(Unit::Spaces(4), true),
        );
        assert_eq!(out.unwrap(), ["    x()", "    if q:", "        y()"]);
    }

    #[test]
    fn readings_that_disagree_refuse() {
        // One depth in old, no step in new: 12 spaces for a line the file
        // indents with one tab at 8 could be 2 tabs (4 a level), 3 (2 a
        // level) or 5 (1 a level).
        let out = write(
            &["\tb"],
            &["        b"],
            &["            c"],
            file(Unit::Tab, true),
        );
        assert!(matches!(out, Err(Doubt::Depths { line: 1, .. })), "{out:?}");
    }

    #[test]
    fn a_reading_that_writes_half_a_unit_is_not_the_models() {
        // D7: only 4 spaces a level writes "sibling" in whole tabs.
        let out = write(
            &["\tinner:"],
            &["        inner:"],
            &["        inner:", "    sibling"],
            file(Unit::Tab, true),
        );
        assert_eq!(out.unwrap(), ["\tinner:", "sibling"]);
    }

    #[test]
    fn as_sent_unless_the_file_keeps_strictly_to_another_unit() {
        let old = ["a:"];
        let new = ["a:", "\tb"];
        let lax = write(&old, &old, &new, file(Unit::Spaces(4), false));
        assert_eq!(lax.unwrap(), ["a:", "\tb"]);
        let strict = write(&old, &old, &new, file(Unit::Spaces(4), true));
        assert_eq!(strict.unwrap(), ["a:", "    b"]);
    }
}
