//! The state of a call between its edits: the piece table, every
//! pattern's matches in the original, and the matches later edits gain
//! where an edit changed the text.
//!
//! After each splice the automaton reads only windows around what that
//! splice changed; matches it records there are shifted or dropped by later
//! splices, and matches in the original are checked against the piece table
//! with a binary search.

use std::cell::OnceCell;
use std::ops::Range;
use std::rc::Rc;

use super::loose::{LooseIndex, Seams, moved};
use crate::edit::pieces::{Pieces, Replacement};
use crate::edit::search::{Automaton, find_overlapping, overlaps, overlaps_any, windows};
use crate::edit::text::{LineIndex, Source};
use crate::edit::tolerant::LazyUnit;

/// Old texts longer than this are not looked for by the automaton around
/// each edit's changes (its window would grow with them); they are looked
/// for around every change when their own edit runs.
pub(super) const LONG: usize = 4096;

/// The state of a call between its edits.
pub(super) struct Call<'s> {
    pub(super) pieces: Pieces<'s>,
    pub(super) orig: &'s str,
    /// The file as read: each line's own ending.
    pub(super) source: &'s Source<'s>,
    /// Starts of each pattern in the original text.
    pub(super) orig_hits: Vec<Vec<usize>>,
    /// All patterns, when there are several; reads the text around each
    /// edit's changes.
    pub(super) automaton: Option<Automaton>,
    pub(super) pat_len: Vec<usize>,
    /// The last edit (0-based) that looks for each pattern.
    pub(super) last_use: Vec<usize>,
    /// The longest pattern the automaton looks for around changes.
    pub(super) reach: usize,
    /// Matches (pattern, current start) that touch text an edit changed.
    pub(super) pending: Vec<(usize, usize)>,
    /// Original ranges each edit (1-based) took out or cut into.
    pub(super) cuts: Vec<(usize, Range<usize>)>,
    /// The same ranges, sorted by (start, end): looked up by every edit
    /// that may be stale, so kept in order as they come.
    pub(super) cuts_sorted: Vec<Range<usize>>,
    pub(super) notes: Vec<String>,
    /// Where the previous hinted edit ended.
    pub(super) cursor: usize,
    /// The original's lines, once an edit needs to look at lines.
    pub(super) orig_lines: OnceCell<Rc<LineIndex>>,
    /// The file's indent unit as read, once a tolerant level needs it.
    pub(super) file_unit: LazyUnit<'s>,
    /// Per edit (0-based): whether a later edit may repeat it, so where it
    /// wrote is kept in `written`.
    pub(super) tracked: Vec<bool>,
    /// Matches (pattern, the edit that changed them, where that edit's text
    /// now stands) that a later edit's old had in text an earlier edit
    /// wrote, until this edit changed them: that later edit is stale.
    pub(super) lost: Vec<(usize, usize, Range<usize>)>,
    /// Where tracked edits (1-based) wrote their new text, in the current
    /// text; later splices move them, and one that changes such text
    /// widens its range to cover what it wrote there.
    pub(super) written: Vec<(usize, Range<usize>)>,
    /// The original's lines by loose key, once a tolerant edit needs them.
    pub(super) loose_index: OnceCell<LooseIndex>,
    /// The lines edits changed, with their loose keys, from the first
    /// tolerant edit on.
    pub(super) seams: Option<Seams>,
    /// Whether tolerant edits may be looked for in a window of the text.
    pub(super) windows: bool,
    /// Tolerant edits that asked for a window so far.
    pub(super) loose_lookups: usize,
}

impl<'s> Call<'s> {
    /// Every start of old (pattern `pid`) in the current text, ascending.
    pub(super) fn exact_hits(&self, pid: Option<usize>, old: &str) -> Vec<usize> {
        let Some(pid) = pid else {
            return self.anywhere(old);
        };
        let len = old.len();
        let mut hits: Vec<usize> = self.orig_hits[pid]
            .iter()
            .filter_map(|&h| self.pieces.orig_now(h, len))
            .collect();
        if !self.pieces.untouched() {
            if self.automaton.is_some() && len <= LONG {
                hits.extend(
                    self.pending
                        .iter()
                        .filter(|&&(p, _)| p == pid)
                        .map(|&(_, s)| s),
                );
            } else {
                hits.extend(self.pieces.find_near(old, &self.pieces.changed_regions()));
            }
            hits.sort_unstable();
            hits.dedup();
        }
        hits
    }

    /// Every start of a text that is not one of the call's patterns.
    pub(super) fn anywhere(&self, text: &str) -> Vec<usize> {
        let cur = self.pieces.materialize();
        find_overlapping(cur.as_bytes(), text.as_bytes())
    }

    /// Splice edit `n`'s replacements (ascending, current offsets) in, and
    /// move the cursor past them.
    pub(super) fn splice(&mut self, n: usize, reps: Vec<Replacement>) {
        self.cursor = end_after(&reps);
        let wrote = if self.tracked.get(n - 1) == Some(&true) {
            written_ranges(&reps)
        } else {
            Vec::new()
        };
        let reps = self.pieces.refine(reps);
        let replaced: Vec<(Range<usize>, isize)> = reps
            .iter()
            .map(|(r, t)| (r.clone(), t.len() as isize - r.len() as isize))
            .collect();
        for (_, range) in &mut self.written {
            *range = moved(range, &replaced);
        }
        // Only edits still to run can be stale.
        let last_use = &self.last_use;
        self.lost.retain(|(pid, ..)| last_use[*pid] >= n);
        for (_, _, range) in &mut self.lost {
            *range = moved(range, &replaced);
        }
        self.written.extend(wrote.into_iter().map(|r| (n, r)));
        if reps.is_empty() {
            return;
        }
        let done = self.pieces.splice(reps);
        if let Some(seams) = &mut self.seams {
            seams.update(&self.pieces, &replaced, &done.regions);
        }
        for r in &done.cut {
            let at = self
                .cuts_sorted
                .partition_point(|c| (c.start, c.end) < (r.start, r.end));
            self.cuts_sorted.insert(at, r.clone());
        }
        self.cuts.extend(done.cut.into_iter().map(|r| (n, r)));
        let pat_len = &self.pat_len;
        let lost = &mut self.lost;
        self.pending.retain_mut(|(pid, start)| {
            let end = *start + pat_len[*pid];
            if replaced.iter().any(|(r, _)| overlaps(*start, end, r)) {
                lost.push((*pid, n, moved(&(*start..end), &replaced)));
                return false;
            }
            let before = replaced.partition_point(|(r, _)| r.end <= *start);
            let delta: isize = replaced[..before].iter().map(|(_, d)| d).sum();
            *start = (*start as isize + delta) as usize;
            true
        });
        let Some(Automaton { ac, ids }) = &self.automaton else {
            return;
        };
        let edit = n - 1;
        for w in windows(&done.regions, self.reach, self.pieces.len()) {
            let text = self.pieces.bytes(w.clone());
            for m in ac.find_overlapping_iter(text.as_ref()) {
                let pid = ids[m.pattern().as_usize()];
                if self.last_use[pid] <= edit {
                    continue;
                }
                let start = w.start + m.start();
                if overlaps_any(start, start + m.len(), &done.regions) {
                    self.pending.push((pid, start));
                }
            }
        }
    }

    /// The original's line index, made once.
    pub(super) fn orig_line_index(&self) -> &LineIndex {
        self.orig_lines
            .get_or_init(|| Rc::new(LineIndex::new(self.orig)))
    }

    /// The current text's line index, from the original's: the original's
    /// itself, shared, while no edit has changed the text (a copy was 8
    /// bytes a line more at the peak of a large file's first edit).
    pub(super) fn line_index(&self) -> Rc<LineIndex> {
        let orig = self.orig_line_index();
        if self.pieces.untouched()
            && let Some(shared) = self.orig_lines.get()
        {
            return Rc::clone(shared);
        }
        Rc::new(self.pieces.line_index(orig))
    }

    /// The file's indent unit as read, learnt only if a probe's level
    /// comes to need it.
    pub(super) fn lazy_unit(&self) -> LazyUnit<'s> {
        self.file_unit.clone()
    }

    /// Line numbers (0-based) of current offsets.
    pub(super) fn lines_of(&self, at: &[usize]) -> Vec<usize> {
        let lines = self.line_index();
        at.iter().map(|&h| lines.line_of(h)).collect()
    }
}

/// Where each of `replacements` (ascending) stands once they are spliced
/// in: its whole new text, even where splicing keeps some of it as it was.
fn written_ranges(replacements: &[Replacement]) -> Vec<Range<usize>> {
    let mut delta: isize = 0;
    replacements
        .iter()
        .map(|(range, text)| {
            let start = (range.start as isize + delta) as usize;
            delta += text.len() as isize - range.len() as isize;
            start..start + text.len()
        })
        .collect()
}

/// Where the cursor goes after `replacements` (ascending) are spliced in:
/// the end of the last one's new text.
pub(super) fn end_after(replacements: &[Replacement]) -> usize {
    let mut delta: isize = 0;
    let mut end = 0;
    for (range, text) in replacements {
        end = (range.start as isize + delta) as usize + text.len();
        delta += text.len() as isize - range.len() as isize;
    }
    end
}
