//! What a failed edit says: old matched too many places, old is nowhere
//! (with the nearest lines, and whether new is already there), or an
//! earlier edit of the call changed old's text (naming it, with the lines
//! as it left them).

use std::ops::Range;

use super::call::Call;
use super::step::{Step, View};
use crate::edit::error::{EditError, ErrorKind};
use crate::edit::hints;
use crate::edit::search::{find_overlapping, overlaps};
use crate::edit::text::LineIndex;
use crate::edit::tolerant::{self, Probe};

impl Step<'_> {
    /// The line where new already stands, exactly or at a tolerant level (a
    /// tolerant edit writes new re-indented, so a resend finds it so).
    pub(super) fn new_at(&self, view: &View, probe: &Probe) -> Option<usize> {
        if self.new.trim().is_empty() {
            return None;
        }
        let (cur, lines) = (&view.cur, &view.lines);
        if let Some(at) = memchr::memmem::find(cur.as_bytes(), self.new.as_bytes()) {
            return Some(lines.line_of(at));
        }
        let found = match &view.new_first {
            Some(first) => tolerant::find_from(cur, lines, probe, first),
            None => tolerant::find(cur, lines, probe),
        }?;
        found.matches.first().map(|m| m.first_line)
    }

    /// old was in the file as read, but an earlier edit of this call changed
    /// it: say which, and show the text as that edit left it.
    pub(super) fn stale(&self, call: &Call) -> Option<EditError> {
        if call.cuts.is_empty() {
            return None;
        }
        let len = self.old.len();
        let mut places: Vec<Range<usize>> = match self.pid {
            Some(pid) => call.orig_hits[pid].iter().map(|&h| h..h + len).collect(),
            None => find_overlapping(call.orig.as_bytes(), self.old.as_bytes())
                .into_iter()
                .map(|h| h..h + len)
                .collect(),
        };
        if places.is_empty() {
            let lines = LineIndex::new(call.orig);
            if let Some(found) = tolerant::find(call.orig, &lines, &Probe::new(self.old, self.new))
            {
                places = found.matches.into_iter().map(|m| m.range).collect();
            }
        }
        let (place, by) = places.iter().find_map(|p| {
            call.cuts
                .iter()
                .find(|(_, cut)| overlaps(p.start, p.end, cut))
                .map(|(m, _)| (p.clone(), *m))
        })?;
        let orig_lines = LineIndex::new(call.orig);
        let first = orig_lines.line_of(place.start);
        let last = orig_lines.line_of(place.end.saturating_sub(1).max(place.start));
        let cur = call.pieces.materialize();
        let lines = LineIndex::new(&cur);
        let (from, to) = (
            call.pieces.orig_to_current(place.start),
            call.pieces.orig_to_current(place.end),
        );
        let now_first = lines.line_of(from.min(cur.len().saturating_sub(1)));
        let now_last = lines.line_of(
            to.saturating_sub(1)
                .max(from)
                .min(cur.len().saturating_sub(1)),
        );
        let count = now_last - now_first + 1;
        // Lines numbered as fs-read shows them, unless old came with copied
        // numbers: numbered lines would invite the same mistake again.
        let (now, shown) = if lines.count() == 0 {
            ("(the file is now empty)".to_string(), "")
        } else if hints::carries_numbers(self.old) {
            (
                hints::plain(&cur, &lines, now_first, count),
                " (as they are, without numbers)",
            )
        } else {
            (
                hints::numbered(&cur, &lines, now_first, count),
                " (number, tab, line; the numbers are not part of the file)",
            )
        };
        Some(
            EditError::new(
                ErrorKind::NotFound,
                format!(
                    "edit {}'s old text was changed by edit {by}: it was at {} of the file as \
                     read, and edit {by} changed it before edit {} ran",
                    self.n,
                    hints::span(first, last - first + 1),
                    self.n
                ),
            )
            .at(self.n, self.total)
            .with_hint(Some(format!(
                "edits apply in order, each to the text the one before left; merge edits {by} \
                 and {} into one edit, or give edit {}'s old as the text is after edit {by}. \
                 That text is now at {}{shown}:\n{now}",
                self.n,
                self.n,
                hints::span(now_first, count),
            ))),
        )
    }

    pub(super) fn ambiguous(&self, reason: String) -> EditError {
        EditError::new(ErrorKind::Ambiguous, reason)
            .at(self.n, self.total)
            .with_hint(Some(
                "add surrounding lines to old so it matches one place, or set replace_all \
                 to change every one"
                    .into(),
            ))
    }

    pub(super) fn not_found(&self, view: &View) -> EditError {
        let hint = Some(hints::not_found(&view.cur, &view.lines, self.old));
        if let Some(line) = self.new_at(view, &Probe::new(self.new, self.new)) {
            // Both readings, and still the nearest lines: new may be a line
            // as common as "}", so "done" is only one possibility.
            return EditError::new(
                ErrorKind::NewAlreadyPresent,
                format!(
                    "could not find old in the file, but new already appears at line {}: if an \
                     earlier call made this change it is done; if old and new are swapped, \
                     send them the other way round",
                    line + 1
                ),
            )
            .at(self.n, self.total)
            .with_hint(hint);
        }
        EditError::new(ErrorKind::NotFound, "could not find old in the file".into())
            .at(self.n, self.total)
            .with_hint(hint)
    }
}
