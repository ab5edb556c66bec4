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
use std::rc::Rc;

use super::call::{Call, moved};
use super::step::View;
use crate::edit::pieces::Pieces;
use crate::edit::text::{LineIndex, split_lines};
use crate::edit::tolerant::{loose_hash, loosely_equal, loosest_key};

/// A window bigger than this is not worth it: the whole text is looked at.
const MAX_WINDOW: usize = 1 << 20;

/// Lines read to check places one by one, at most (candidates times old's
/// lines).
const CHECK_BUDGET: usize = 1 << 16;

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
        let mut again: Vec<Range<usize>> = regions.to_vec();
        self.lines.retain_mut(|(start, end, _)| {
            if replaced
                .iter()
                .any(|(r, _)| r.start <= *end && *start <= r.end)
            {
                again.push(moved(&(*start..*end), replaced));
                return false;
            }
            let before = replaced.partition_point(|(r, _)| r.end < *start);
            let delta: isize = replaced[..before].iter().map(|(_, d)| d).sum();
            *start = (*start as isize + delta) as usize;
            *end = (*end as isize + delta) as usize;
            true
        });
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
        // Both ascending: merged in one pass, a line read again replacing
        // its old entry.
        let old = std::mem::take(&mut self.lines);
        let mut merged = Vec::with_capacity(old.len() + added.len());
        let (mut a, mut b) = (old.into_iter().peekable(), added.into_iter().peekable());
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
        self.lines = merged;
    }

    fn starts_with_hash(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        self.lines.iter().filter(move |l| l.2 == hash).map(|l| l.0)
    }
}

/// A window of the current text holding every place old can match at a
/// tolerant level: its text and lines, where it starts (offset and line),
/// and the window's lines where old's first line stands loosely.
pub(super) struct Window<'s> {
    pub view: View<'s>,
    pub at: usize,
    pub line: usize,
    pub first: Vec<usize>,
}

impl<'s> Call<'s> {
    /// The original's lines loosely equal to `key`, from the index.
    pub(super) fn orig_loose_lines(&self, key: &str) -> Vec<usize> {
        let lines = self.orig_line_index();
        self.loose_index
            .get_or_init(|| LooseIndex::new(self.orig, lines))
            .lines(self.orig, lines, key)
    }

    /// Where old's places stand, as a window, when it can be had without
    /// the whole text: None when old is one line without a line break
    /// (it may match inside a line), when no place matches loosely (the
    /// whole text says why), or when the places are far apart.
    pub(super) fn loose_window(&mut self, old: &str) -> Option<Window<'s>> {
        // The first tolerant edit of a call looks at the whole text: while
        // no edit has changed it that costs no copy, and a call with one
        // tolerant edit (or a refusal) need not build the index.
        self.loose_lookups += 1;
        if self.loose_lookups < 2 {
            return None;
        }
        let (old_lines, old_nl) = split_lines(old);
        let m = old_lines.len();
        if m == 0 || (m == 1 && !old_nl) || old_lines.iter().all(|l| l.trim().is_empty()) {
            return None;
        }
        let key = loosest_key(old_lines[0]);
        let hash = loose_hash(old_lines[0]);
        let mut starts: Vec<usize> = Vec::new();
        let orig_lines = self.orig_line_index();
        for j in self.orig_loose_lines(&key) {
            let (s, e) = (orig_lines.start(j), orig_lines.end(j));
            let e = e + usize::from(orig_lines.has_newline(j));
            if let Some(c) = self.pieces.orig_now(s, e - s)
                && (c == 0 || *self.pieces.bytes(c - 1..c) == *b"\n")
            {
                starts.push(c);
            }
        }
        if self.seams.is_none() {
            self.seams = Some(Seams::of(&self.pieces));
            let lines = Rc::new(self.orig_line_index().clone());
            self.pieces.track_lines(lines);
        }
        if let Some(seams) = &self.seams {
            starts.extend(seams.starts_with_hash(hash));
        }
        starts.sort_unstable();
        starts.dedup();
        // Each place read where it stands now: its first line loosely
        // old's, and (while that stays cheap) old's other lines after it
        // by their loose hash. Past the budget (an old of thousands of
        // equal lines) the levels' own search, linear in the lines, sorts
        // the places out within the window.
        let want: Vec<u64> = old_lines.iter().map(|l| loose_hash(l)).collect();
        let check = starts.len().saturating_mul(m) <= CHECK_BUDGET;
        let mut places: Vec<usize> = Vec::new();
        let mut end = 0;
        for c in starts {
            let mut at = c;
            let mut fits = true;
            for (i, w) in want.iter().enumerate() {
                if i > 0 && !check {
                    break;
                }
                let next = self.pieces.line_end_at(at);
                let line = self.pieces.text(at..next);
                let body = line.strip_suffix('\n').unwrap_or(&line);
                if next == at
                    || (i == 0 && !loosely_equal(body, &key, false))
                    || loose_hash(body) != *w
                {
                    fits = false;
                    break;
                }
                at = next;
            }
            if fits {
                places.push(c);
                end = at;
            }
        }
        let (&first, &last) = (places.first()?, places.last()?);
        if !check {
            end = last;
            for _ in 0..m {
                end = self.pieces.line_end_at(end);
            }
        }
        let span = first..end;
        if span.len() > MAX_WINDOW {
            return None;
        }
        let text = self.pieces.text(span.clone()).into_owned();
        let lines = LineIndex::new(&text);
        let first_lines = places
            .iter()
            .map(|&p| lines.line_of(p - span.start))
            .collect();
        let line = self.pieces.line_number(span.start, self.orig_line_index());
        Some(Window {
            view: View {
                cur: text.into(),
                lines,
                new_first: None,
            },
            at: span.start,
            line,
            first: first_lines,
        })
    }
}
