//! Splices that change as little as they can: a replacement compared with
//! the text it replaces line by line (common lines at the end first, then
//! at the start, Myers in between), so the lines it keeps stay pieces of the
//! text they came from and keep their own line ending. The lines between
//! are new and take the file's usual ending, but for one: when old stopped
//! short of its last line's break, that break, which the edit did not take
//! out, still ends new's last line.

use std::ops::Range;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::{Pieces, Replacement};

/// Above this many line pairs a replacement's changed middle is not diffed
/// line by line; it is replaced whole.
const REFINE_LIMIT: usize = 1 << 22;

impl Pieces<'_> {
    /// `reps` (ascending, not overlapping) made finer: each replacement is
    /// compared with the text it replaces line by line (a line here runs
    /// through its '\n'), and the lines it keeps as they are are left out of
    /// it, so they stay where they came from and keep their own line ending.
    ///
    /// A replacement that takes out or brings in a '\n' is first widened to
    /// the whole lines it touches (with the other replacements on those
    /// lines), so lines compare whole: old "b" and new "b\nX" on the line
    /// "b\n" keep that line and add "X\n", where compared as sent the line's
    /// own '\n' would end X. One that stays inside a line is left as it is.
    pub fn refine(&self, reps: Vec<Replacement>) -> Vec<Replacement> {
        // Spans of the current text, each with the replacements inside it
        // and whether it was widened to whole lines.
        let mut groups: Vec<(Range<usize>, Range<usize>, bool)> = Vec::with_capacity(reps.len());
        for (i, (range, text)) in reps.iter().enumerate() {
            let widen = text.contains('\n') || self.has_newline(range.clone());
            let mut span = match groups.last() {
                // Inside lines already whole (replace_all on one long line):
                // no need to look for their ends again.
                Some((prev, _, true)) if range.end < prev.end => range.clone(),
                _ if widen => self.whole_lines(range.clone(), text),
                _ => range.clone(),
            };
            let (mut first, mut lines) = (i, widen);
            while let Some((prev, members, whole)) = groups.last()
                && span.start < prev.end
            {
                span = prev.start.min(span.start)..prev.end.max(span.end);
                first = members.start;
                lines |= *whole;
                groups.pop();
            }
            groups.push((span, first..i + 1, lines));
        }
        let mut out = Vec::with_capacity(reps.len());
        for (span, members, _) in groups {
            let members = &reps[members];
            let cur = self.bytes(span.clone());
            let Ok(cur) = std::str::from_utf8(&cur) else {
                out.extend(members.iter().cloned());
                continue;
            };
            let mut text = String::with_capacity(cur.len());
            let mut at = span.start;
            for (range, new) in members {
                text.push_str(&cur[at - span.start..range.start - span.start]);
                text.push_str(new);
                at = range.end;
            }
            text.push_str(&cur[at - span.start..]);
            // Widened past the last replacement: the line's end was not in it.
            let last = if at < span.end {
                LastEnding::Outside
            } else {
                LastEnding::Replaced
            };
            refine_one(cur, span.start, &text, last, &mut out);
        }
        out
    }

    /// Whether the current text has a '\n' in `range`.
    fn has_newline(&self, range: Range<usize>) -> bool {
        let mut i = self.index_at(range.start);
        while let Some(p) = self.list.get(i)
            && p.at < range.end
        {
            let text = self.text_of(p).as_bytes();
            let (lo, hi) = (
                range.start.max(p.at) - p.at,
                range.end.min(p.at + p.len()) - p.at,
            );
            if memchr::memchr(b'\n', &text[lo..hi]).is_some() {
                return true;
            }
            i += 1;
        }
        false
    }

    /// `range`, to be replaced by `text`, widened to whole lines: from the
    /// start of the line it starts in to the end of the line it ends in,
    /// through its '\n'. An end at a line's start stays, unless what is
    /// left before it no longer ends a line: then the next line is joined
    /// to it, and is part of the change too.
    fn whole_lines(&self, range: Range<usize>, text: &str) -> Range<usize> {
        let start = self.line_start_before(range.start);
        let line_start_at = |pos: usize| pos == 0 || *self.bytes(pos - 1..pos) == *b"\n";
        let ends_line = text.ends_with('\n') || (text.is_empty() && range.start == start);
        let end = if line_start_at(range.end) && ends_line {
            range.end
        } else {
            self.line_end_after(range.end)
        };
        start..end.max(range.end)
    }

    /// The start of the line holding current offset `pos`.
    fn line_start_before(&self, pos: usize) -> usize {
        let last = self.index_at(pos).min(self.list.len().saturating_sub(1));
        for p in self.list[..self.list.len().min(last + 1)].iter().rev() {
            let upto = pos.saturating_sub(p.at).min(p.len());
            let text = &self.text_of(p).as_bytes()[..upto];
            if let Some(nl) = memchr::memrchr(b'\n', text) {
                return p.at + nl + 1;
            }
        }
        0
    }

    /// Past the first '\n' at or after current offset `pos`; the end of the
    /// text when there is none.
    fn line_end_after(&self, pos: usize) -> usize {
        for p in &self.list[self.index_at(pos)..] {
            let from = pos.saturating_sub(p.at);
            let text = &self.text_of(p).as_bytes()[from..];
            if let Some(nl) = memchr::memchr(b'\n', text) {
                return p.at + from + nl + 1;
            }
        }
        self.len
    }
}

/// Where the last line of a replacement's text ended in the file: inside
/// what the edit took out, or after it (old stopped short of the line's
/// '\n', which then still follows new).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LastEnding {
    Replaced,
    Outside,
}

/// Append to `out` the replacements that turn `cur` (at `base` in the
/// current text) into `text`, leaving out the lines they share.
pub(super) fn refine_one(
    cur: &str,
    base: usize,
    text: &str,
    last: LastEnding,
    out: &mut Vec<Replacement>,
) {
    let a: Vec<&str> = cur.split_inclusive('\n').collect();
    let b: Vec<&str> = text.split_inclusive('\n').collect();
    // Common lines at the end first: a line removed from a run of equal
    // lines is then the first of them, as a patch that removes it says.
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let prefix = a[..a.len() - suffix]
        .iter()
        .zip(&b[..b.len() - suffix])
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    if am.is_empty() && bm.is_empty() {
        return;
    }
    let offsets = |lines: &[&str], from: usize| -> Vec<usize> {
        std::iter::once(from)
            .chain(lines.iter().scan(from, |s, l| {
                *s += l.len();
                Some(*s)
            }))
            .collect()
    };
    let prefix_len = |lines: &[&str]| -> usize { lines[..prefix].iter().map(|l| l.len()).sum() };
    // Offsets of each line of the middles: in the current text, in `text`.
    let a_at = offsets(am, base + prefix_len(&a));
    let b_at = offsets(bm, prefix_len(&b));
    // The line runs that differ: old lines for new lines.
    let one_run = am.is_empty() || bm.is_empty();
    let runs: Vec<(Range<usize>, Range<usize>)> =
        if one_run || am.len().saturating_mul(bm.len()) > REFINE_LIMIT {
            vec![(0..am.len(), 0..bm.len())]
        } else {
            capture_diff_slices(Algorithm::Myers, am, bm)
                .into_iter()
                .filter(|op| !matches!(op, DiffOp::Equal { .. }))
                .map(|op| (op.old_range(), op.new_range()))
                .collect()
        };
    for (o, n) in runs {
        let (old, new) = (
            &cur[a_at[o.start] - base..a_at[o.end] - base],
            &text[b_at[n.start]..b_at[n.end]],
        );
        // What the run's first lines start with alike stays. It stops short
        // of their line break (lines alike through it are not in a run; the
        // check is cheap insurance that no break changes lines).
        let mut head = if o.is_empty() || n.is_empty() {
            0
        } else {
            common_prefix(old, new)
        };
        if let Some(nl) = memchr::memchr(b'\n', &old.as_bytes()[..head]) {
            head = nl;
        }
        // The line break old stopped short of still ends new's last line,
        // with what the last lines end with alike before it (and nothing
        // before the last lines).
        let at_end = suffix == 0 && o.end == am.len() && n.end == bm.len();
        let mut tail = if last == LastEnding::Outside && at_end && !o.is_empty() && !n.is_empty() {
            common_suffix(&old[head..], &new[head..])
        } else {
            0
        };
        let kept = &old.as_bytes()[old.len() - tail..];
        if let Some(nl) = memchr::memchr(b'\n', &kept[..kept.len().saturating_sub(1)]) {
            tail = kept.len() - nl - 1;
        }
        push(
            a_at[o.start] + head..a_at[o.end] - tail,
            &new[head..new.len() - tail],
            out,
        );
    }
}

/// Append a replacement, joined to the one before when they touch.
fn push(range: Range<usize>, new: &str, out: &mut Vec<Replacement>) {
    if range.is_empty() && new.is_empty() {
        return;
    }
    match out.last_mut() {
        Some((r, t)) if r.end == range.start => {
            r.end = range.end;
            t.push_str(new);
        }
        _ => out.push((range, new.to_string())),
    }
}

/// The length of the longest common start of two strings, at a character
/// boundary. Compared a block at a time: a line can be megabytes long.
fn common_prefix(a: &str, b: &str) -> usize {
    const BLOCK: usize = 64;
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let n = x.len().min(y.len());
    let mut k = 0;
    while k + BLOCK <= n && x[k..k + BLOCK] == y[k..k + BLOCK] {
        k += BLOCK;
    }
    while k < n && x[k] == y[k] {
        k += 1;
    }
    while !(a.is_char_boundary(k) && b.is_char_boundary(k)) {
        k -= 1;
    }
    k
}

/// The length of the longest common end of two strings, at a character
/// boundary.
fn common_suffix(a: &str, b: &str) -> usize {
    const BLOCK: usize = 64;
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let n = x.len().min(y.len());
    let end = |s: &[u8], k: usize| s.len() - k;
    let mut k = 0;
    while k + BLOCK <= n && x[end(x, k + BLOCK)..end(x, k)] == y[end(y, k + BLOCK)..end(y, k)] {
        k += BLOCK;
    }
    while k < n && x[end(x, k + 1)] == y[end(y, k + 1)] {
        k += 1;
    }
    while !(a.is_char_boundary(end(x, k)) && b.is_char_boundary(end(y, k))) {
        k -= 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refine_keeps_unchanged_lines() {
        let p = Pieces::new("a\nb\nc\nd\n");
        let reps = p.refine(vec![(0..8, "a\nB\nc\nd\nE\n".into())]);
        assert_eq!(reps, [(2..4, "B\n".into()), (8..8, "E\n".into())]);
        // A line removed from a run of equal lines is the first of them.
        let p = Pieces::new("same\nsame\n");
        assert_eq!(
            p.refine(vec![(0..10, "same\n".into())]),
            [(0..5, "".into())]
        );
        // Inside a line only what differs after the common start is replaced.
        let p = Pieces::new("x = 1; y = 2\n");
        assert_eq!(p.refine(vec![(4..5, "10".into())]), [(5..5, "0".into())]);
    }

    #[test]
    fn a_replacement_that_adds_or_removes_a_line_break_compares_whole_lines() {
        // old "b" and new "b\nX": the line "b\n" is kept, "X\n" added after
        // it; compared as sent, b's own '\n' would have ended X.
        let p = Pieces::new("a\nb\nc\n");
        assert_eq!(
            p.refine(vec![(2..3, "b\nX".into())]),
            [(4..4, "X\n".into())]
        );
        // Started inside the line: the line's start is compared too.
        let p = Pieces::new("    a\n    b\n    c\n");
        assert_eq!(
            p.refine(vec![(10..12, "X\n    b\n".into())]),
            [(6..6, "    X\n".into())]
        );
        // Two replacements on one line are compared as one.
        let p = Pieces::new("ab\ncd\n");
        assert_eq!(
            p.refine(vec![(0..1, "a".into()), (1..2, "b\nX".into())]),
            [(3..3, "X\n".into())]
        );
        // A changed line and an added one for a line whose '\n' old left
        // out: the '\n' stays after new's last line, as sent.
        let p = Pieces::new("a\nb\n");
        assert_eq!(
            p.refine(vec![(2..3, "X\nB".into())]),
            [(2..3, "X\nB".into())]
        );
        // The same with old through the '\n': both lines are new.
        assert_eq!(
            p.refine(vec![(2..4, "X\nB\n".into())]),
            [(2..4, "X\nB\n".into())]
        );
        // A line's '\n' taken out joins the next line to it: that line is
        // compared too, so the first line is kept and the next one removed.
        let p2 = Pieces::new("xb\nb\n");
        assert_eq!(p2.refine(vec![(1..3, "".into())]), [(3..5, "".into())]);
        // Only a line changed, old through its '\n' or not.
        assert_eq!(p.refine(vec![(0..3, "a\nB".into())]), [(2..3, "B".into())]);
        assert_eq!(
            p.refine(vec![(0..4, "a\nB\n".into())]),
            [(2..4, "B\n".into())]
        );
    }
}
