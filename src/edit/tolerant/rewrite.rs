//! New written where old matched, through the readings of `indent.rs`,
//! and what a refusal says.
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
//!   is refused: never a guess.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::indent::{Readings, settle};
use super::units::{Indentation, LineKind, Unit, continuations, indent_of};
use super::{Match, Probe};
use crate::edit::text::{LineIndex, split_lines};

/// Why new cannot be written at the place old matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Doubt {
    /// The readings that fit write a line of new at different depths.
    Depths {
        line: usize,
        text: String,
        indent: String,
        options: Vec<String>,
    },
    /// A line of new that no old line pins is inside a string or block
    /// comment over several lines: its indentation is text, which no
    /// reading of the code's depth can map.
    InText { line: usize, text: String },
    /// No reading writes a line of new in whole units of the file's.
    NoWholeUnits {
        line: usize,
        text: String,
        indent: String,
        file: Option<Unit>,
    },
}

/// An indentation as a message says it: "4 spaces", "2 tabs", "no
/// indentation".
pub(crate) fn describe(indent: &str) -> String {
    let tabs = indent.matches('\t').count();
    let spaces = indent.len() - tabs;
    let plural = |n: usize, one: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {one}s"),
    };
    match (tabs, spaces) {
        (0, 0) => "no indentation".to_string(),
        (0, s) => plural(s, "space"),
        (t, 0) => plural(t, "tab"),
        (t, s) => format!("{} and {}", plural(t, "tab"), plural(s, "space")),
    }
}

/// "is indented 4 spaces", "is not indented".
fn indented(indent: &str) -> String {
    match indent {
        "" => "is not indented".to_string(),
        _ => format!("is indented {}", describe(indent)),
    }
}

impl fmt::Display for Doubt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Doubt::Depths {
                line,
                text,
                indent,
                options,
            } => {
                let options: Vec<String> = options.iter().map(|o| describe(o)).collect();
                write!(
                    f,
                    "new's line {line} (`{text}`) {}, and old's lines do not show which depth \
                     of the file that is: it could be {}; resend new with each line indented \
                     exactly as the file indents it (or old with more lines around it at \
                     different depths)",
                    indented(indent),
                    options.join(" or ")
                )
            }
            Doubt::InText { line, text } => write!(
                f,
                "new's line {line} (`{text}`) is inside a string or comment that runs over \
                 several lines, where indentation is text, not depth, and old's indentation \
                 is not the file's: where it goes cannot be read from old; resend old and new \
                 with each line indented exactly as the file has it"
            ),
            Doubt::NoWholeUnits {
                line,
                text,
                indent,
                file,
            } => {
                let unit = file.map_or_else(
                    || "indentation".to_string(),
                    |u| format!("indent unit ({})", u.describe()),
                );
                write!(
                    f,
                    "new's line {line} (`{text}`) {}; mapped the way old's lines map onto the \
                     file where old matched, that is no whole number of the file's {unit} at \
                     or right of column 0; resend new with each line indented exactly as the \
                     file indents it",
                    indented(indent)
                )
            }
        }
    }
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
    let old_kinds = continuations(old_lines.iter().copied());
    let new_kinds = continuations(new_lines.iter().copied());
    let is_text = |kinds: &[LineKind], i: usize| kinds.get(i) == Some(&LineKind::Text);
    let mut by_indent: HashMap<(&str, bool), Vec<usize>> = HashMap::new();
    for (i, l) in old_lines.iter().enumerate() {
        if !l.trim().is_empty() {
            by_indent
                .entry((indent_of(l), is_text(&old_kinds, i)))
                .or_default()
                .push(i);
        }
    }
    // Read as trimmed, a later line of new indented like old's first line
    // stands as sent, not where that line stands: the readings decide it.
    let trimmed_first = readings
        .trims_first_line()
        .then(|| old_lines.first().map(|l| indent_of(l)))
        .flatten();
    let mut out: Vec<Option<Cow<str>>> = Vec::with_capacity(new_lines.len());
    // New lines (index in new) that no old line pins to a depth.
    let mut open: Vec<usize> = Vec::new();
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
                    let line = new_lines[new_index + k];
                    let indent = indent_of(line);
                    let written = if line.trim().is_empty() {
                        Some(Cow::Borrowed(if readings.literal() { line } else { "" }))
                    } else if new_index + k > 0 && trimmed_first == Some(indent) {
                        None
                    } else {
                        let text = is_text(&new_kinds, new_index + k);
                        by_indent.get(&(indent, text)).map(|at| {
                            let near = nearest(at, old_index + k);
                            let file_indent = indent_of(file_lines[near]);
                            Cow::Owned(format!("{file_indent}{}", &line[indent.len()..]))
                        })
                    };
                    if written.is_none() {
                        if is_text(&new_kinds, new_index + k) {
                            return Err(Doubt::InText {
                                line: new_index + k + 1,
                                text: line.trim().to_string(),
                            });
                        }
                        open.push(new_index + k);
                    }
                    out.push(written);
                }
            }
        }
    }
    if !open.is_empty() {
        let indents = settle(&out, &open, new_lines, readings)?;
        let mut indents = indents.into_iter();
        for slot in out.iter_mut().filter(|s| s.is_none()) {
            // One settled indentation per open line, in order.
            let (k, indent) = indents.next().unwrap_or_default();
            let line = new_lines[k];
            *slot = Some(Cow::Owned(format!(
                "{indent}{}",
                &line[indent_of(line).len()..]
            )));
        }
    }
    Ok(out.into_iter().flatten().collect())
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

    #[test]
    fn describe_says_what_the_indentation_is() {
        assert_eq!(describe(""), "no indentation");
        assert_eq!(describe("\t\t"), "2 tabs");
        assert_eq!(describe("\t  "), "1 tab and 2 spaces");
        assert_eq!(describe(" "), "1 space");
    }
}
