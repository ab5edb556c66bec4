//! Tolerant edits found without a look at the whole text. The original's
//! lines are indexed by the hash of their loosest key once per call (the
//! first tolerant edit builds it); the lines edits changed are kept with
//! their keys as later splices move them (`Seams`). Every place old could
//! match at any tolerant level starts at a line loosely equal to old's
//! first line, so the two give all of them: the levels then run on a window
//! of the current text that holds those places, not on a copy of the whole
//! text per edit (1,000 dedented edits would otherwise copy a file 1,000
//! times).

use std::ops::Range;

use crate::edit::pieces::Pieces;
use crate::edit::text::LineIndex;
use crate::edit::tolerant::{loose_hash, loosely_equal};

/// A window bigger than this is not worth it: the whole text is looked at.
pub(super) const MAX_WINDOW: usize = 1 << 20;

/// Lines read to check places one by one, at most (candidates times old's
/// lines).
pub(super) const CHECK_BUDGET: usize = 1 << 16;

/// The original's lines by the hash of their loosest key: (hash, line)
/// pairs, sorted, so a key's lines are a binary search away.
#[derive(Debug, Default)]
pub(super) struct LooseIndex {
    by_key: Vec<(u64, u32)>,
}

impl LooseIndex {
    pub(super) fn new(text: &str, lines: &LineIndex) -> LooseIndex {
        let mut by_key: Vec<(u64, u32)> = (0..lines.count())
            .map(|j| (loose_hash(lines.line(text, j)), j as u32))
            .collect();
        by_key.sort_unstable();
        LooseIndex { by_key }
    }

    /// The original's lines loosely equal to `key`, ascending.
    pub(super) fn lines(&self, text: &str, lines: &LineIndex, key: &str) -> Vec<usize> {
        let hash = loose_hash(key);
        let from = self.by_key.partition_point(|&(h, _)| h < hash);
        self.by_key[from..]
            .iter()
            .take_while(|&&(h, _)| h == hash)
            .map(|&(_, j)| j as usize)
            .filter(|&j| loosely_equal(lines.line(text, j), key, false))
            .collect()
    }
}

/// The lines of the current text that edits changed or that hold a seam
/// between pieces (every line the original's index cannot answer for):
/// start, end past the '\n', and the hash of the loosest key. Ascending.
#[derive(Debug, Default)]
pub(super) struct Seams {
    lines: Vec<(usize, usize, u64)>,
}

impl Seams {
    /// The seam lines of `pieces` as they are.
    pub(super) fn of(pieces: &Pieces) -> Seams {
        let ranges = pieces
            .piece_starts()
            .map(|(r, new)| if new { r } else { r.start..r.start })
            .collect();
        let mut seams = Seams::default();
        seams.add(pieces, ranges);
        seams
    }

    /// After a splice: lines it touched are read again where they now
    /// stand, with the text it brought in; the others move.
    pub(super) fn update(
        &mut self,
        pieces: &Pieces,
        replaced: &[(Range<usize>, isize)],
        regions: &[Range<usize>],
    ) {
        // In place, a replaced range at a time: the lines before the first
        // stay, the lines it touches are read again, the ones after move
        // by what it grew. A splice costs a move of the lines after it,
        // not a pass of closures over all of them.
        let mut again: Vec<Range<usize>> = regions.to_vec();
        let mut at = 0;
        let mut delta: isize = 0;
        let lines = &mut self.lines;
        for (r, grew) in replaced {
            let before = at + lines[at..].partition_point(|l| l.1 < r.start);
            shift(&mut lines[at..before], delta);
            let touched = before + lines[before..].partition_point(|l| l.0 <= r.end);
            for l in lines.drain(before..touched) {
                // Positions before this splice: moved across all of it.
                again.push(moved(&(l.0..l.1), replaced));
            }
            at = before;
            delta += grew;
        }
        shift(&mut lines[at..], delta);
        self.add(pieces, again);
    }

    /// The whole lines holding each of `ranges` (and the line holding each
    /// range's end: a piece starts there).
    fn add(&mut self, pieces: &Pieces, mut ranges: Vec<Range<usize>>) {
        let len = pieces.len();
        ranges.sort_by_key(|r| r.start);
        let mut spans: Vec<Range<usize>> = Vec::new();
        for r in ranges {
            let start = pieces.line_start_at(r.start);
            let end = if r.end >= len {
                len
            } else {
                pieces.line_end_at(r.end)
            };
            match spans.last_mut() {
                Some(last) if start <= last.end => last.end = last.end.max(end),
                _ => spans.push(start..end),
            }
        }
        let mut added = Vec::new();
        for span in spans {
            let text = pieces.text(span.clone());
            let mut at = span.start;
            for line in text.split_inclusive('\n') {
                let body = line.strip_suffix('\n').unwrap_or(line);
                added.push((at, at + line.len(), loose_hash(body)));
                at += line.len();
            }
        }
        let (Some(first), Some(last)) = (added.first(), added.last()) else {
            return;
        };
        // Both ascending: merged in one pass over the lines they fall
        // among, a line read again replacing its old entry.
        let lo = self.lines.partition_point(|l| l.0 < first.0);
        let hi = self.lines.partition_point(|l| l.0 <= last.0);
        let old = &self.lines[lo..hi];
        let mut merged = Vec::with_capacity(old.len() + added.len());
        let (mut a, mut b) = (old.iter().copied().peekable(), added.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.0 < y.0 => a.next(),
                (Some(x), Some(y)) if x.0 == y.0 => {
                    a.next();
                    b.next()
                }
                (_, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => break,
            };
            if let Some(line) = next
                && merged
                    .last()
                    .is_none_or(|l: &(usize, usize, u64)| l.0 < line.0)
            {
                merged.push(line);
            }
        }
        self.lines.splice(lo..hi, merged);
    }

    pub(super) fn starts_with_hash(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        self.lines.iter().filter(move |l| l.2 == hash).map(|l| l.0)
    }
}

/// Moves each line by `delta` bytes.
fn shift(lines: &mut [(usize, usize, u64)], delta: isize) {
    if delta != 0 {
        for l in lines {
            l.0 = l.0.wrapping_add_signed(delta);
            l.1 = l.1.wrapping_add_signed(delta);
        }
    }
}

/// `range` of the text before `replaced` (ascending ranges, each with how
/// much it grew) were spliced in, in the text after: text inserted at its
/// start goes before it, a replacement overlapping it widens it to cover
/// the new text.
pub(super) fn moved(range: &Range<usize>, replaced: &[(Range<usize>, isize)]) -> Range<usize> {
    let (mut start, mut end) = (range.start as isize, range.end as isize);
    let mut shift: isize = 0;
    for (r, grew) in replaced {
        let (rs, re) = (r.start as isize, r.end as isize);
        if re <= range.start as isize {
            start += grew;
            end += grew;
        } else if rs < range.end as isize {
            // Overlaps (or is an insertion strictly inside).
            start = start.min(rs + shift);
            end = end.max(re + shift) + grew;
        } else {
            break;
        }
        shift += grew;
    }
    start.max(0) as usize..end.max(start).max(0) as usize
}
