//! Where a tolerant edit is looked for once a call's loose index exists:
//! a window of the current text holding every place old's first line
//! stands loosely, so the tolerant levels run on it and not on the whole
//! text (`loose.rs` keeps the index; `call.rs` the call's state).

use std::rc::Rc;

use super::call::Call;
use super::loose::{CHECK_BUDGET, LooseIndex, MAX_WINDOW, Seams};
use super::step::View;
use crate::edit::text::{LineIndex, split_lines};
use crate::edit::tolerant::{loose_hash, loosely_equal, loosest_key};

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
                lines: lines.into(),
                new_first: None,
            },
            at: span.start,
            line,
            first: first_lines,
        })
    }
}
