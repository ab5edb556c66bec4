//! One edit in its place in the call: the region a hint allows, an
//! insertion, the exact matches, then (unless an earlier edit of the call
//! changed old's place, or this edit repeats one) the tolerant levels, and
//! line numbers copied into old stripped. An exact match writes new as
//! sent, byte for byte (the literal contract): no re-indentation, no
//! refusal on indentation.

use std::borrow::Cow;
use std::ops::Range;
use std::rc::Rc;

use super::call::Call;
use super::typography::{Undecided, in_file_typography};
use super::{Near, Outcome, Twin};
use crate::edit::error::{EditError, ErrorKind};
use crate::edit::hints::{self, NewReading};
use crate::edit::pieces::Pieces;
use crate::edit::text::{Eol, LineIndex};
use crate::edit::tolerant::{self, Doubt, Level, Probe};

/// The current text with its lines, made when an edit first needs them.
pub(super) struct View<'s> {
    pub(super) cur: Cow<'s, str>,
    pub(super) lines: Rc<LineIndex>,
    /// Where new's first line stands loosely, found in the same pass over
    /// the lines as old's (the failure path asks whether new is there).
    pub(super) new_first: Option<Vec<usize>>,
}

pub(super) fn see<'s>(call: &Call<'s>) -> View<'s> {
    let cur = call.pieces.materialize();
    let lines = call.line_index();
    View {
        cur,
        lines,
        new_first: None,
    }
}

/// One edit of the call, in its place in the order.
pub(super) struct Step<'a> {
    /// 1-based place in the call.
    pub(super) n: usize,
    pub(super) total: usize,
    pub(super) old: &'a str,
    pub(super) new: &'a str,
    pub(super) pid: Option<usize>,
    pub(super) replace_all: bool,
    /// The one kind of line break old was sent with (None: none, or mixed).
    pub(super) sent_eol: Option<Eol>,
    /// The previous call applied exactly this edit.
    pub(super) was_applied: bool,
    pub(super) near: &'a Near,
    /// Earlier edits of the call this one may repeat (see `repeat`).
    pub(super) twins: Vec<Twin<'a>>,
}

/// Where a hinted edit may match: starting at or after `from`, and ending
/// at the end of the text when `eof`.
pub(super) struct Region {
    pub(super) from: usize,
    pub(super) eof: bool,
}

impl Region {
    pub(super) fn allows(&self, start: usize, end: usize, len: usize) -> bool {
        start >= self.from && (!self.eof || end == len)
    }
}

impl Step<'_> {
    pub(super) fn run<'s>(&self, call: &mut Call<'s>) -> Result<Outcome, EditError> {
        let region = self.region(call)?;
        if self.old.is_empty() {
            return Ok(self.insert(call, &region));
        }
        let mut view = None;
        if let Some(outcome) =
            self.try_match(call, &region, self.old, self.new, self.pid, &mut view)?
        {
            return Ok(outcome);
        }
        // old copied from a tool's output with its line numbers.
        if let Some((old, reading)) = hints::strip_numbers(self.old, self.new) {
            let new = match reading {
                NewReading::AsSent => {
                    Some((Cow::Borrowed(self.new), "new had none and is as sent"))
                }
                NewReading::Stripped(new) => Some((Cow::Owned(new), "new's were taken off too")),
                // Refused only where old without numbers would apply.
                NewReading::Unclear(line) if self.matches_somewhere(call, &old, &mut view) => {
                    return Err(self.unclear_numbers(&line));
                }
                NewReading::Unclear(_) => None,
            };
            if let Some((new, how)) = new {
                if old == new.as_ref() && self.matches_somewhere(call, &old, &mut view) {
                    return Err(EditError::new(
                        ErrorKind::NoChange,
                        format!(
                            "edit {} changes nothing once the line numbers copied into old and \
                             new are taken off: they are not part of the file",
                            self.n
                        ),
                    )
                    .at(self.n, self.total)
                    .with_hint(Some(
                        "send old and new without line numbers, exactly as the lines are in \
                         the file, with new holding the change"
                            .into(),
                    )));
                }
                if let Some(outcome) = self.try_match(call, &region, &old, &new, None, &mut view)? {
                    call.notes.push(format!(
                        "edit {}: the lines of old started with line numbers copied from a \
                         tool's output; matched them without the numbers (they are not part of \
                         the file), and {how}; check the diff",
                        self.n
                    ));
                    return Ok(outcome);
                }
            }
        }
        let view = view.get_or_insert_with(|| see(call));
        Err(self.not_found(view))
    }

    /// Whether `old` matches the current text, exactly or at a level.
    fn matches_somewhere<'s>(
        &self,
        call: &Call<'s>,
        old: &str,
        view: &mut Option<View<'s>>,
    ) -> bool {
        let view = view.get_or_insert_with(|| see(call));
        memchr::memmem::find(view.cur.as_bytes(), old.as_bytes()).is_some()
            || tolerant::find(
                &view.cur,
                &view.lines,
                &Probe::new(old, old).file_unit(call.lazy_unit()),
            )
            .is_some()
    }

    /// old was numbered and stripping the numbers matches, but a line of
    /// new may carry a copied number or may be text.
    fn unclear_numbers(&self, line: &str) -> EditError {
        EditError::new(
            ErrorKind::Ambiguous,
            format!(
                "the lines of old start with line numbers copied from a tool's output, and \
                 new's line `{line}` starts with what may be such a number or may be the \
                 line's own text"
            ),
        )
        .at(self.n, self.total)
        .with_hint(Some(
            "send old and new without line numbers, exactly as the lines are in the file".into(),
        ))
    }

    /// Exact, then the tolerant levels. None when old matches nowhere in
    /// the region.
    pub(super) fn try_match<'s>(
        &self,
        call: &mut Call<'s>,
        region: &Region,
        old: &str,
        new: &str,
        pid: Option<usize>,
        view: &mut Option<View<'s>>,
    ) -> Result<Option<Outcome>, EditError> {
        let (mut old, mut new) = (old, new);
        let len = call.pieces.len();
        let mut hits = if pid.is_some() && old == self.old {
            call.exact_hits(pid, old)
        } else {
            call.anywhere(old)
        };
        hits.retain(|&h| region.allows(h, h + old.len(), len));
        if hits.is_empty()
            && let Some(at) = at_eof_without_newline(&call.pieces, old)
            && at >= region.from
        {
            // old ends in a newline the file's last line lacks: match the
            // line, and keep the final newline missing.
            hits.push(at);
            old = &old[..old.len() - 1];
            new = new.strip_suffix('\n').unwrap_or(new);
        }
        if hits.len() > 1 && !self.replace_all {
            let at = call.lines_of(&hits);
            hits = self
                .nearest(hits.into_iter().zip(at).collect(), |&(_, l)| l)
                .into_iter()
                .map(|(h, _)| h)
                .collect();
        }
        if hits.len() > 1 && !self.replace_all {
            hits = self.same_endings(call, hits, old);
        }
        if !hits.is_empty() {
            let places: Vec<Range<usize>> = hits.iter().map(|&h| h..h + old.len()).collect();
            if let Some(repeat) = self.repeats(call, old, new, &places) {
                return repeat.map(Some);
            }
            return self.replace_exact(call, &hits, old, new).map(Some);
        }
        let primary = old == self.old;
        // Where the places old could have stand within a window of the
        // text, the levels look there only (the whole text is copied and
        // scanned below only when that cannot tell, or to explain a
        // refusal with the whole text's line numbers).
        if primary
            && call.windows
            && !self.was_applied
            && matches!(self.near, Near::None)
            && region.from == 0
            && !region.eof
            && !self.replace_all
            && let Some(w) = call.loose_window(old)
            && let Ok(Some(outcome)) = self.tolerant_in(
                call,
                region,
                (old, new),
                pid,
                (&w.view, &w.first),
                (w.at, w.line),
            )
        {
            return Ok(Some(outcome));
        }
        let view = view.get_or_insert_with(|| see(call));
        let new_probe = Probe::new(self.new, self.new).file_unit(call.lazy_unit());
        // Before any tolerant level: a resent edit whose old still matches
        // loosely (an insertion leaves old's lines in place) is done.
        if primary
            && self.was_applied
            && (self.new.trim().is_empty() || self.new_at(view, &new_probe).is_some())
        {
            return Ok(Some(Outcome::AlreadyApplied));
        }
        let (cur, lines): (&str, &LineIndex) = (&view.cur, &view.lines);
        let probe = self.probe(call, region, old, new);
        // One pass over the lines finds where old and (for the failure
        // path's "new is already there") new could stand.
        let first = if primary && view.new_first.is_none() {
            let mut firsts = tolerant::first_lines(cur, lines, &[&probe, &new_probe]);
            view.new_first = firsts.pop();
            firsts.pop().unwrap_or_default()
        } else {
            tolerant::first_lines(cur, lines, &[&probe])
                .pop()
                .unwrap_or_default()
        };
        self.tolerant_in(call, region, (old, new), pid, (view, &first), (0, 0))
    }

    /// What the tolerant levels look for: old (and new) in `region`, near
    /// the line the call named, with the file's indent unit.
    fn probe<'p>(&self, call: &Call<'p>, region: &Region, old: &'p str, new: &'p str) -> Probe<'p> {
        let near_line = match self.near {
            Near::Line(n) => Some(n.saturating_sub(1)),
            _ => None,
        };
        Probe::new(old, new)
            .within(region.from, region.eof)
            .near(near_line)
            .all(self.replace_all)
            .file_unit(call.lazy_unit())
    }

    /// The tolerant levels on `view` (the whole current text, or a window
    /// of it starting at offset and line `at`), given the lines where old's
    /// first line stands loosely.
    fn tolerant_in(
        &self,
        call: &mut Call,
        region: &Region,
        (old, new): (&str, &str),
        pid: Option<usize>,
        (view, first): (&View, &[usize]),
        (at, line): (usize, usize),
    ) -> Result<Option<Outcome>, EditError> {
        let (cur, lines): (&str, &LineIndex) = (&view.cur, &view.lines);
        let probe = self.probe(call, region, old, new);
        let found = tolerant::find_from(cur, lines, &probe, first);
        // An earlier edit of the call changed the place old had in the file
        // as read: decided before any tolerant match is taken, which would
        // be a loose twin somewhere else.
        if let Some((place, by)) =
            self.stale_place(call, old, new, pid, found.as_ref().map(|f| f.level))
        {
            if let Some(repeat) = self.repeat_of_twin(by, old, new) {
                return repeat.map(Some);
            }
            return Err(self.stale(call, place, by));
        }
        let Some(tolerant::Found {
            level,
            matches: mut found,
            unsure,
        }) = found
        else {
            return Ok(None);
        };
        if found.len() > 1 && !self.replace_all {
            found = self.nearest(found, |m| m.first_line);
        }
        if unsure && (found.len() <= 1 || self.replace_all) {
            return Err(self.ambiguous(format!(
                "old is not in the file as sent; {} it may match more places than can be \
                 checked (thousands of candidate places); send old exactly as the file has it",
                level.ignoring()
            )));
        }
        if found.len() > 1 && !self.replace_all {
            let mut at: Vec<usize> = found.iter().map(|m| m.first_line).collect();
            at.dedup();
            let more = if unsure { "at least " } else { "" };
            return Err(self.ambiguous(format!(
                "old is not in the file as sent; {} it matches {more}{} places (lines {})",
                level.ignoring(),
                found.len(),
                hints::line_list(&at)
            )));
        }
        found.retain(|m| tolerant::verified(cur, lines, &probe, level, m));
        if found.is_empty() {
            return Ok(None);
        }
        let places: Vec<Range<usize>> = found
            .iter()
            .map(|m| m.range.start + at..m.range.end + at)
            .collect();
        if let Some(repeat) = self.repeats(call, old, new, &places) {
            return repeat.map(Some);
        }
        let mut end = 0;
        let mut replacements = Vec::new();
        let mut spans = Vec::new();
        let mut retyped = false;
        for m in found.iter().filter(|m| {
            let keep = m.range.start >= end;
            end = end.max(m.range.end);
            keep
        }) {
            let span = hints::span(m.first_line + line, m.line_count);
            // Typography read loosely in old is the same mistake in new.
            let typed = if level >= Level::Typography {
                in_file_typography(&cur[m.range.clone()], old, new, m.partial())
                    .map_err(|u| self.undecided_typography(&span, u))?
            } else {
                Cow::Borrowed(new)
            };
            retyped |= typed != new;
            if !spans.contains(&span) {
                spans.push(span);
            }
            let text = tolerant::replacement(cur, lines, m, &probe, &typed).map_err(|doubt| {
                self.indent_doubt(doubt, cur, lines, m.first_line, m.line_count)
            })?;
            replacements.push((m.range.start + at..m.range.end + at, text));
        }
        let retyped = if retyped {
            "; new's typographic characters were written as the file writes them there"
        } else {
            ""
        };
        call.notes.push(format!(
            "edit {}: old matched {} {}{retyped}; check the diff",
            self.n,
            spans.join(", "),
            level.ignoring()
        ));
        let count = replacements.len();
        call.splice(self.n, replacements);
        Ok(Some(Outcome::Applied { level, count }))
    }

    /// Of several exact matches (line endings aside), the one whose line
    /// endings are also old's as sent, when only one is: the others are
    /// copies with other endings (a CRLF copy of an LF block), which old
    /// as sent does not match byte for byte. All of them otherwise.
    fn same_endings(&self, call: &mut Call, hits: Vec<usize>, old: &str) -> Vec<usize> {
        let Some(sent) = self.sent_eol.filter(|_| old == self.old) else {
            return hits;
        };
        let len = old.len();
        let agree: Vec<usize> = hits
            .iter()
            .copied()
            .filter(|&h| {
                call.pieces
                    .orig_of(h, len)
                    .and_then(|o| call.source.eol_in(o..o + len))
                    == Some(sent)
            })
            .collect();
        if agree.len() != 1 {
            return hits;
        }
        let lines = call.lines_of(&[agree[0]]);
        let others = hits.len() - 1;
        call.notes.push(format!(
            "edit {}: old matched line {} with its line endings as sent; {others} other \
             place{} match{} only with other line endings and {} left alone",
            self.n,
            lines.first().map_or(0, |l| l + 1),
            if others == 1 { "" } else { "s" },
            if others == 1 { "es" } else { "" },
            if others == 1 { "was" } else { "were" },
        ));
        agree
    }

    /// new brings in a character whose form in the file cannot be told.
    fn undecided_typography(&self, span: &str, u: Undecided) -> EditError {
        let shown: Vec<String> = u.file.iter().map(|c| format!("`{c}`")).collect();
        EditError::new(
            ErrorKind::Ambiguous,
            format!(
                "old matched {span} only by reading its typographic characters (quotes, \
                 dashes, spaces) as the file's, and new brings in `{}` (U+{:04X}), where old \
                 had that character or its plain form for the file's {}: which one new means \
                 cannot be told",
                u.model,
                u.model as u32,
                shown.join(" and ")
            ),
        )
        .at(self.n, self.total)
        .with_hint(Some(
            "send old and new with the file's own characters, as fs-read shows them".into(),
        ))
    }

    /// Among several matches, the one nearest the hinted line; all the
    /// nearest when they tie (still ambiguous), and all of them without a
    /// line hint.
    pub(super) fn nearest<T>(&self, matches: Vec<T>, line_of: impl Fn(&T) -> usize) -> Vec<T> {
        let Near::Line(n) = self.near else {
            return matches;
        };
        let target = n.saturating_sub(1);
        let best = matches
            .iter()
            .map(|m| line_of(m).abs_diff(target))
            .min()
            .unwrap_or(0);
        matches
            .into_iter()
            .filter(|m| line_of(m).abs_diff(target) == best)
            .collect()
    }

    /// Where this edit may match, from its hint and the cursor.
    pub(super) fn region(&self, call: &Call) -> Result<Region, EditError> {
        let anchor = match self.near {
            Near::None | Near::Line(_) => {
                return Ok(Region {
                    from: 0,
                    eof: false,
                });
            }
            Near::Eof => return Ok(Region { from: 0, eof: true }),
            Near::After(anchor) => anchor.trim(),
        };
        let cursor = call.cursor;
        if anchor.is_empty() {
            return Ok(Region {
                from: cursor,
                eof: false,
            });
        }
        if let Some(next) = call.pieces.line_after(cursor, |l| l.trim() == anchor) {
            return Ok(Region {
                from: next,
                eof: false,
            });
        }
        let cur = call.pieces.materialize();
        let lines = LineIndex::new(&cur);
        let after = if cursor > 0 {
            format!(
                " after line {}",
                lines.line_of(cursor.min(cur.len().saturating_sub(1))) + 1
            )
        } else {
            String::new()
        };
        Err(EditError::new(
            ErrorKind::NotFound,
            format!("could not find the anchor line `{anchor}`{after}"),
        )
        .at(self.n, self.total)
        .with_hint(Some(hints::not_found(&cur, &lines, anchor))))
    }

    /// An insertion (empty old) at the place the hint names. A missing final
    /// newline stays missing when the text is appended to.
    pub(super) fn insert(&self, call: &mut Call, region: &Region) -> Outcome {
        let len = call.pieces.len();
        let at = match self.near {
            Near::Line(n) => call.pieces.line_start(n.saturating_sub(1)).unwrap_or(len),
            Near::After(_) => region.from,
            Near::Eof | Near::None => len,
        };
        let ends_nl = len == 0 || *call.pieces.bytes(len - 1..len) == *b"\n";
        let text = if at == len && !ends_nl {
            format!("\n{}", self.new.strip_suffix('\n').unwrap_or(self.new))
        } else {
            self.new.to_string()
        };
        call.splice(self.n, vec![(at..at, text)]);
        Outcome::Applied {
            level: Level::Exact,
            count: 1,
        }
    }

    pub(super) fn replace_exact(
        &self,
        call: &mut Call,
        hits: &[usize],
        old: &str,
        new: &str,
    ) -> Result<Outcome, EditError> {
        if self.was_applied && self.new.contains(self.old) && self.all_inside_new(call, hits) {
            return Ok(Outcome::AlreadyApplied);
        }
        if hits.len() > 1 && !self.replace_all {
            let at = call.lines_of(hits);
            return Err(self.ambiguous(format!(
                "old matches {} places (lines {})",
                hits.len(),
                hints::line_list(&at)
            )));
        }
        let mut end = 0;
        let mut ranges = Vec::new();
        for &h in hits {
            if h < end {
                continue;
            }
            ranges.push((h..h + old.len(), new.to_string()));
            end = h + old.len();
        }
        let count = ranges.len();
        call.splice(self.n, ranges);
        Ok(Outcome::Applied {
            level: Level::Exact,
            count,
        })
    }

    /// new cannot be written where old matched without guessing its
    /// indentation.
    fn indent_doubt(
        &self,
        doubt: Doubt,
        text: &str,
        lines: &LineIndex,
        first: usize,
        count: usize,
    ) -> EditError {
        // Shown without numbers when old carried copied ones: numbered
        // lines would invite the same mistake again.
        let place = if hints::carries_numbers(self.old) {
            format!(
                "the file's lines where old matched:\n{}",
                hints::plain(text, lines, first, count)
            )
        } else {
            format!(
                "the file's lines where old matched (number, tab, line; the numbers are not \
                 part of the file):\n{}",
                hints::numbered(text, lines, first, count)
            )
        };
        EditError::new(ErrorKind::Ambiguous, doubt.to_string())
            .at(self.n, self.total)
            .with_hint(Some(place))
    }

    /// Whether every match of old sits inside a copy of new: the edit was
    /// made and its new text contains its old.
    pub(super) fn all_inside_new(&self, call: &Call, hits: &[usize]) -> bool {
        let news = call.anywhere(self.new);
        hits.iter().all(|&h| {
            news.iter()
                .any(|&n| n <= h && h + self.old.len() <= n + self.new.len())
        })
    }
}

/// Where old minus its final '\n' ends a text that has no final newline.
pub(super) fn at_eof_without_newline(pieces: &Pieces, old: &str) -> Option<usize> {
    let body = old
        .strip_suffix('\n')
        .filter(|b| !b.is_empty() && !b.ends_with('\n'))?;
    let len = pieces.len();
    let start = len.checked_sub(body.len())?;
    (pieces.slice_bytes(start..len) == body.as_bytes()).then_some(start)
}
