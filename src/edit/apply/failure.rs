//! What a failed edit says: old matched too many places, old is nowhere
//! (with the nearest lines, and whether new is already there), or an
//! earlier edit of the call changed old's text (naming it, with the lines
//! as it left them).

use std::ops::Range;

use super::call::Call;
use super::step::{Step, View};
use crate::edit::error::{EditError, ErrorKind};
use crate::edit::hints;
use crate::edit::search::{find_overlapping, overlaps, overlaps_any};
use crate::edit::text::{LineIndex, split_lines};
use crate::edit::tolerant::{self, Level, Probe};

/// Where a stale edit's old text was.
pub(super) enum Was {
    /// In the file as read (original offsets).
    AsRead(Range<usize>),
    /// In text an earlier edit wrote; now the text the changing edit left
    /// there (current offsets).
    Written(Range<usize>),
}

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

    /// Where `old` stood in the file as read at a place an earlier edit of
    /// this call changed, and which edit that was: such an edit is stale,
    /// and a match anywhere else would be a guess. Exactly, or else at the
    /// first tolerant level that finds it among the places an earlier edit
    /// changed; a tolerant place counts only at a level no looser than
    /// `now`, where old matches in the current text (None: nowhere), since
    /// a stricter match elsewhere is what old meant.
    pub(super) fn stale_place(
        &self,
        call: &Call,
        old: &str,
        new: &str,
        pid: Option<usize>,
        now: Option<Level>,
    ) -> Option<(Was, usize)> {
        if call.cuts.is_empty() {
            return None;
        }
        let cut_by = |p: &Range<usize>| {
            call.cuts
                .iter()
                .find(|(_, cut)| overlaps(p.start, p.end, cut))
                .map(|(by, _)| *by)
        };
        let exact = match pid {
            Some(pid) => call.orig_hits[pid].clone(),
            None => find_overlapping(call.orig.as_bytes(), old.as_bytes()),
        };
        if let Some(stale) = exact
            .iter()
            .map(|&h| h..h + old.len())
            .find_map(|p| cut_by(&p).map(|by| (Was::AsRead(p), by)))
        {
            return Some(stale);
        }
        // In text an earlier edit wrote, until a later one changed it.
        if let Some((_, by, range)) = pid.and_then(|pid| call.lost.iter().find(|l| l.0 == pid)) {
            return Some((Was::Written(range.clone()), *by));
        }
        if !exact.is_empty() {
            return None;
        }
        // Only places whose lines take in a cut can be stale: the loose
        // search for old's first line, then the levels, at those alone.
        let orig_lines = call.orig_line_index();
        let probe = Probe::new(old, new).file_unit(call.lazy_unit());
        let cuts = &call.cuts_sorted;
        let m = split_lines(old).0.len();
        let end_of = |j: usize| {
            if j + m < orig_lines.count() {
                orig_lines.start(j + m)
            } else {
                call.orig.len()
            }
        };
        // The original's lines loosely equal to old's first: from the
        // call's index once a second tolerant edit has built it (no pass
        // over the file per edit), else one pass.
        let loose = match call.loose_index.get() {
            Some(_) => {
                let old_first = split_lines(old).0.first().copied().unwrap_or_default();
                call.orig_loose_lines(&tolerant::loosest_key(old_first))
            }
            None => tolerant::first_lines(call.orig, orig_lines, &[&probe])
                .pop()
                .unwrap_or_default(),
        };
        let first: Vec<usize> = loose
            .into_iter()
            .filter(|&j| overlaps_any(orig_lines.start(j), end_of(j), cuts))
            .collect();
        let found = tolerant::find_from(call.orig, orig_lines, &probe, &first)?;
        if now.is_some_and(|level| found.level > level) {
            return None;
        }
        found
            .matches
            .into_iter()
            .find_map(|m| cut_by(&m.range).map(|by| (Was::AsRead(m.range), by)))
    }

    /// The error for a stale edit: which edit changed its old text, and the
    /// lines as that edit left them.
    pub(super) fn stale(&self, call: &Call, was: Was, by: usize) -> EditError {
        let (at, (from, to)) = match was {
            Was::AsRead(place) => {
                let orig_lines = call.orig_line_index();
                let first = orig_lines.line_of(place.start);
                let last = orig_lines.line_of(place.end.saturating_sub(1).max(place.start));
                (
                    format!(
                        "at {} of the file as read",
                        hints::span(first, last - first + 1)
                    ),
                    (
                        call.pieces.orig_to_current(place.start),
                        call.pieces.orig_to_current(place.end),
                    ),
                )
            }
            Was::Written(now) => (
                "in text an earlier edit wrote".to_string(),
                (now.start, now.end),
            ),
        };
        let cur = call.pieces.materialize();
        let lines = LineIndex::new(&cur);
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
        EditError::new(
            ErrorKind::NotFound,
            format!(
                "edit {}'s old text was changed by edit {by}: it was {at}, and edit {by} \
                 changed it before edit {} ran",
                self.n, self.n
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
        )))
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
