//! The text as edits leave it, kept as pieces of the original and new text.
//!
//! Edits apply in order, each to the text the previous one left. Copying a
//! 10 MB file once per edit would make 100 edits cost 100 copies, so the
//! current text is an ordered list of pieces instead: ranges of the original
//! (whose matches were all found in one pass before the first edit) and
//! strings the edits brought in. Each piece knows where it starts in the
//! current text and where it stands in the original, so finding the piece
//! at a position, or whether an original match is still intact, is a binary
//! search. A splice rebuilds only the pieces it touches; the ones after it
//! move in memory and get their new start (a few microseconds even with
//! thousands of pieces).
//!
//! Splices also change as little as they can: a replacement is compared
//! with the text it replaces line by line, and lines it leaves as they were
//! stay pieces of the text they came from, so they keep their own line
//! ending in a file with mixed endings.

use std::borrow::Cow;
use std::ops::Range;
use std::rc::Rc;

use super::search::{find_overlapping, overlaps_any, windows};
use super::text::{LineIndex, Source};

mod refine;

/// Where a piece's bytes come from: 0 is the original, k is `news[k - 1]`.
type SrcId = u32;
const ORIG: SrcId = 0;

#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Start in the current text.
    at: usize,
    src: SrcId,
    start: usize,
    end: usize,
    /// For an original piece its start; for a new one the end of the last
    /// original piece before it. Never decreases along the list, so the
    /// piece holding an original offset is a binary search away.
    orig_at: usize,
    /// Line breaks in the piece (`UNKNOWN` for an original piece made
    /// before line numbers were asked for).
    nls: usize,
}

const UNKNOWN: usize = usize::MAX;

impl Piece {
    fn len(&self) -> usize {
        self.end - self.start
    }

    fn is_orig(&self) -> bool {
        self.src == ORIG
    }
}

/// One change between the original and the current text, in byte offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

/// A stretch of the current text: a range of the original, or text an
/// edit brought in.
pub(crate) enum Span<'a> {
    Orig(Range<usize>),
    New(&'a str),
}

/// A replacement in current-text offsets: the range and its new text.
pub(crate) type Replacement = (Range<usize>, String);

#[derive(Debug)]
pub(crate) struct Pieces<'s> {
    orig: &'s str,
    /// The original's lines, once line numbers are asked for.
    breaks: Option<Rc<LineIndex>>,
    news: Vec<String>,
    list: Vec<Piece>,
    len: usize,
}

impl<'s> Pieces<'s> {
    pub fn new(orig: &'s str) -> Pieces<'s> {
        let list = if orig.is_empty() {
            Vec::new()
        } else {
            vec![Piece {
                at: 0,
                src: ORIG,
                start: 0,
                end: orig.len(),
                orig_at: 0,
                nls: UNKNOWN,
            }]
        };
        Pieces {
            orig,
            breaks: None,
            news: Vec::new(),
            list,
            len: orig.len(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// No edit has changed anything yet.
    pub fn untouched(&self) -> bool {
        self.news.is_empty() && self.list.len() <= 1 && self.len == self.orig.len()
    }

    fn text_of(&self, p: &Piece) -> &str {
        match p.src {
            ORIG => &self.orig[p.start..p.end],
            k => &self.news[k as usize - 1][p.start..p.end],
        }
    }

    /// The index of the piece holding current offset `pos` (the number of
    /// pieces when `pos` is the end).
    fn index_at(&self, pos: usize) -> usize {
        self.list.partition_point(|p| p.at + p.len() <= pos)
    }

    /// Where original bytes `start..start + len` are now, if they are still
    /// there together: inside one original piece, nothing cut out of them
    /// and nothing put between them.
    pub fn orig_now(&self, start: usize, len: usize) -> Option<usize> {
        let i = self
            .list
            .partition_point(|p| p.orig_at <= start)
            .checked_sub(1)?;
        let p = &self.list[i];
        (p.is_orig() && p.start <= start && start + len <= p.end).then(|| p.at + start - p.start)
    }

    /// Where current bytes `pos..pos + len` were in the original, when
    /// they are original bytes together in one piece.
    pub fn orig_of(&self, pos: usize, len: usize) -> Option<usize> {
        let p = self.list.get(self.index_at(pos))?;
        (p.is_orig() && p.at <= pos && pos + len <= p.at + p.len()).then(|| p.start + pos - p.at)
    }

    /// The current offset the original offset `orig` maps to: where that
    /// byte is, or where the text that replaced it starts.
    pub fn orig_to_current(&self, orig: usize) -> usize {
        let Some(i) = self
            .list
            .partition_point(|p| p.orig_at <= orig)
            .checked_sub(1)
        else {
            return 0;
        };
        let p = &self.list[i];
        if p.is_orig() && orig < p.end {
            p.at + orig - p.start
        } else if p.is_orig() {
            p.at + p.len()
        } else {
            p.at
        }
    }

    /// The current text's bytes in `range`, borrowed when one piece holds
    /// them. The range may cut characters (windows around seams do).
    pub fn bytes(&self, range: Range<usize>) -> Cow<'_, [u8]> {
        let range = range.start.min(self.len)..range.end.min(self.len);
        if range.is_empty() {
            return Cow::Borrowed(&[]);
        }
        let first = self.index_at(range.start);
        let p = &self.list[first];
        if range.end <= p.at + p.len() {
            return Cow::Borrowed(
                &self.text_of(p).as_bytes()[range.start - p.at..range.end - p.at],
            );
        }
        let mut out = Vec::with_capacity(range.len());
        for p in &self.list[first..] {
            if p.at >= range.end {
                break;
            }
            let (lo, hi) = (range.start.max(p.at), range.end.min(p.at + p.len()));
            out.extend_from_slice(&self.text_of(p).as_bytes()[lo - p.at..hi - p.at]);
        }
        Cow::Owned(out)
    }

    pub fn slice_bytes(&self, range: Range<usize>) -> Vec<u8> {
        self.bytes(range).into_owned()
    }

    /// The current text, LF-normalized, as one string (borrowed while no
    /// edit has changed it).
    pub fn materialize(&self) -> Cow<'s, str> {
        if self.untouched() {
            return Cow::Borrowed(self.orig);
        }
        let mut out = String::with_capacity(self.len);
        for p in &self.list {
            out.push_str(self.text_of(p));
        }
        Cow::Owned(out)
    }

    /// The current text's line index, made from the original's (`orig`):
    /// original pieces take their slice of it, only new text is searched
    /// for line ends.
    pub fn line_index(&self, orig: &LineIndex) -> LineIndex {
        let os = orig.starts();
        let mut starts = Vec::with_capacity(os.len() + 16);
        starts.push(0);
        for p in &self.list {
            if p.is_orig() {
                // Original starts after a '\n' inside the piece.
                let a = os.partition_point(|&s| s <= p.start);
                let b = os.partition_point(|&s| s <= p.end);
                starts.extend(os[a..b].iter().map(|&s| s - p.start + p.at));
                if p.end == self.orig.len() && orig.ends_nl() && p.end > p.start {
                    // The original's last start (after its final '\n') is
                    // not in its index.
                    starts.push(p.at + p.len());
                }
            } else {
                let text = self.text_of(p).as_bytes();
                starts.extend(memchr::memchr_iter(b'\n', text).map(|nl| p.at + nl + 1));
            }
        }
        let ends_nl = self.len > 0 && *self.bytes(self.len - 1..self.len) == *b"\n";
        LineIndex::from_starts(starts, self.len, ends_nl)
    }

    /// The current text in order: ranges of the original (LF-normalized
    /// offsets) and the texts edits brought in.
    pub fn spans(&self) -> impl Iterator<Item = Span<'_>> {
        self.list.iter().map(|p| match p.src {
            ORIG => Span::Orig(p.start..p.end),
            _ => Span::New(self.text_of(p)),
        })
    }

    /// The current text's bytes in `range` as text. Callers cut at line
    /// boundaries or change boundaries, which are character boundaries.
    pub fn text(&self, range: Range<usize>) -> Cow<'_, str> {
        match self.bytes(range) {
            Cow::Borrowed(b) => String::from_utf8_lossy(b),
            Cow::Owned(b) => match String::from_utf8(b) {
                Ok(s) => Cow::Owned(s),
                Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
            },
        }
    }

    /// The current text as the file should hold it: BOM and line endings
    /// restored.
    pub fn render(&self, src: &Source) -> String {
        let mut out = String::with_capacity(self.len + self.len / 16 + 3);
        out.push_str(src.prefix());
        for p in &self.list {
            match p.src {
                ORIG => src.write_orig(p.start..p.end, &mut out),
                _ => src.write_new(self.text_of(p), &mut out),
            }
        }
        out
    }

    /// Every start of `pat` in the current text that touches text an edit
    /// brought in or crosses a place where text was taken out: the matches
    /// the original's one pass cannot know. `near` are the changed regions
    /// to look around (current offsets, ascending).
    pub fn find_near(&self, pat: &str, near: &[Range<usize>]) -> Vec<usize> {
        let len = pat.len();
        let mut found = Vec::new();
        for window in windows(near, len, self.len) {
            let text = self.bytes(window.clone());
            for h in find_overlapping(&text, pat.as_bytes()) {
                let start = window.start + h;
                if overlaps_any(start, start + len, near) {
                    found.push(start);
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The start of the line after the first whole line starting at or
    /// after `from` that `pred` accepts (the end of the text when that is
    /// the last line). Reads only as far as that line.
    pub fn line_after(&self, from: usize, pred: impl Fn(&str) -> bool) -> Option<usize> {
        // A line that starts before `from` is not looked at.
        let mut skip = from > 0 && from < self.len && *self.bytes(from - 1..from) != *b"\n";
        let mut line = String::new();
        let mut line_start = from;
        for p in &self.list[self.index_at(from)..] {
            let text = self.text_of(p);
            let mut at = from.saturating_sub(p.at).min(text.len());
            while let Some(nl) = memchr::memchr(b'\n', &text.as_bytes()[at..]) {
                line.push_str(&text[at..at + nl]);
                let next = p.at + at + nl + 1;
                if !skip && pred(&line) {
                    return Some(next);
                }
                skip = false;
                line.clear();
                line_start = next;
                at += nl + 1;
            }
            line.push_str(&text[at..]);
        }
        (!skip && line_start < self.len && pred(&line)).then_some(self.len)
    }

    /// The start of the line holding current offset `pos`.
    pub fn line_start_at(&self, pos: usize) -> usize {
        let pos = pos.min(self.len);
        let mut i = self.index_at(pos);
        if i == self.list.len() {
            let Some(last) = i.checked_sub(1) else {
                return 0;
            };
            i = last;
        }
        let mut end = pos;
        loop {
            let p = &self.list[i];
            let upto = end.saturating_sub(p.at).min(p.len());
            if let Some(k) = memchr::memrchr(b'\n', &self.text_of(p).as_bytes()[..upto]) {
                return p.at + k + 1;
            }
            let Some(before) = i.checked_sub(1) else {
                return 0;
            };
            end = p.at;
            i = before;
        }
    }

    /// The end of the line holding current offset `pos`, past its '\n'
    /// (the end of the text for a last line without one).
    pub fn line_end_at(&self, pos: usize) -> usize {
        for p in &self.list[self.index_at(pos)..] {
            let from = pos.saturating_sub(p.at).min(p.len());
            if let Some(k) = memchr::memchr(b'\n', &self.text_of(p).as_bytes()[from..]) {
                return p.at + from + k + 1;
            }
        }
        self.len
    }

    /// From now on, each piece knows its line breaks (the original's
    /// from `orig`, its line index), so `line_number` only adds them up.
    pub fn track_lines(&mut self, orig: Rc<LineIndex>) {
        self.breaks = Some(orig);
        for i in 0..self.list.len() {
            let p = self.list[i];
            if p.nls == UNKNOWN {
                self.list[i].nls = self.orig_breaks(p.start, p.end);
            }
        }
    }

    /// Line breaks in the original's `start..end` (UNKNOWN without the
    /// original's line index).
    fn orig_breaks(&self, start: usize, end: usize) -> usize {
        let Some(orig) = &self.breaks else {
            return UNKNOWN;
        };
        let starts = orig.starts();
        // A start after each break, but for a final one (the index has no
        // empty last line).
        let upto = |at: usize| {
            starts.partition_point(|&s| s <= at)
                + usize::from(at == self.orig.len() && orig.ends_nl())
        };
        upto(end).saturating_sub(upto(start))
    }

    /// The 0-based line of current offset `pos`: the line breaks before
    /// it, counted per piece (the original's from its line index).
    pub fn line_number(&self, pos: usize, orig: &LineIndex) -> usize {
        let starts = orig.starts();
        let upto = |at: usize| {
            starts.partition_point(|&s| s <= at)
                + usize::from(at == self.orig.len() && orig.ends_nl())
        };
        let mut lines = 0;
        for p in &self.list {
            if p.at >= pos {
                break;
            }
            let end = pos.min(p.at + p.len()) - p.at;
            lines += match p.src {
                _ if end == p.len() && p.nls != UNKNOWN => p.nls,
                ORIG => upto(p.start + end).saturating_sub(upto(p.start)),
                _ => memchr::memchr_iter(b'\n', &self.text_of(p).as_bytes()[..end]).count(),
            };
        }
        lines
    }

    /// Where each piece starts, and whether it is text an edit brought in.
    pub fn piece_starts(&self) -> impl Iterator<Item = (Range<usize>, bool)> + '_ {
        self.list
            .iter()
            .map(|p| (p.at..p.at + p.len(), !p.is_orig()))
    }

    /// The start of 0-based line `n`, if the text has that many lines.
    pub fn line_start(&self, n: usize) -> Option<usize> {
        if n == 0 {
            return (self.len > 0).then_some(0);
        }
        let mut seen = 0;
        for p in &self.list {
            for nl in memchr::memchr_iter(b'\n', self.text_of(p).as_bytes()) {
                seen += 1;
                if seen == n {
                    let start = p.at + nl + 1;
                    return (start < self.len).then_some(start);
                }
            }
        }
        None
    }

    /// The regions edits changed, in current offsets: new pieces, and the
    /// empty places between two original pieces that are not adjacent.
    pub fn changed_regions(&self) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        let mut orig_end = 0;
        let mut prev_orig = true;
        let push = |r: Range<usize>, out: &mut Vec<Range<usize>>| match out.last_mut() {
            Some(last) if last.end >= r.start => last.end = last.end.max(r.end),
            _ => out.push(r),
        };
        for p in &self.list {
            if p.is_orig() {
                if prev_orig && p.start != orig_end {
                    push(p.at..p.at, &mut out);
                }
                orig_end = p.end;
                prev_orig = true;
            } else {
                push(p.at..p.at + p.len(), &mut out);
                prev_orig = false;
            }
        }
        if prev_orig && orig_end != self.orig.len() {
            push(self.len..self.len, &mut out);
        }
        out
    }

    /// Replace each range of the current text with its string. Ranges must
    /// be ascending and must not overlap. Returns the regions the new texts
    /// occupy afterwards (empty where text was only taken out), and the
    /// original ranges the replacements took out or cut into.
    pub fn splice(&mut self, reps: Vec<Replacement>) -> Spliced {
        let mut spliced = Spliced::default();
        let (Some(first), Some(last)) = (reps.first(), reps.last()) else {
            return spliced;
        };
        let (lo, hi) = (first.0.start, last.0.end);
        let i0 = self.index_at(lo);
        // Pieces that start at or after `hi` are untouched, except that an
        // insertion at `hi` goes before the piece starting there.
        let i1 = self.list.partition_point(|p| p.at < hi).max(i0);
        let section_at = self.list.get(i0).map_or(self.len, |p| p.at);
        let mut orig_end = i0.checked_sub(1).map_or(0, |i| self.orig_end_through(i));
        let mut middle: Vec<Piece> = Vec::with_capacity(i1 - i0 + 2 * reps.len());
        let mut pos = section_at;
        let mut delta: isize = 0;
        let section: Vec<Piece> = self.list[i0..i1].to_vec();
        let mut k = 0;
        let mut reps = reps.into_iter().peekable();
        loop {
            // Copy section bytes up to the next replacement's start.
            let until = reps.peek().map_or(usize::MAX, |(r, _)| r.start);
            while k < section.len() && pos < until {
                let p = section[k];
                let p_end = p.at + p.len();
                let cut = until.min(p_end);
                if cut > pos {
                    let piece = self.part(&p, pos - p.at..cut - p.at, &mut orig_end);
                    middle.push(piece);
                }
                pos = cut;
                if pos >= p_end {
                    k += 1;
                }
            }
            let Some((range, text)) = reps.next() else {
                break;
            };
            // Record what the replacement takes out of the original.
            let mut cut_orig = Vec::new();
            let mut j = k;
            while j < section.len() && section[j].at < range.end.max(range.start + 1) {
                let p = section[j];
                if p.is_orig() {
                    let (a, b) = (range.start.max(p.at), range.end.min(p.at + p.len()));
                    if a <= b && (a < b || (p.at < a && a < p.at + p.len())) {
                        cut_orig.push(p.start + a - p.at..p.start + b - p.at);
                    }
                }
                j += 1;
            }
            if cut_orig.is_empty() {
                cut_orig.push(orig_end..orig_end);
            }
            spliced.cut.extend(cut_orig);
            let new_at = (range.start as isize + delta) as usize;
            spliced.regions.push(new_at..new_at + text.len());
            delta += text.len() as isize - range.len() as isize;
            if !text.is_empty() {
                let len = text.len();
                let nls = memchr::memchr_iter(b'\n', text.as_bytes()).count();
                self.news.push(text);
                middle.push(Piece {
                    at: 0,
                    src: self.news.len() as SrcId,
                    start: 0,
                    end: len,
                    orig_at: orig_end,
                    nls,
                });
            }
            // Skip the replaced bytes.
            pos = range.end;
            while k < section.len() && section[k].at + section[k].len() <= pos {
                k += 1;
            }
        }
        // The rest of the section after the last replacement.
        while k < section.len() {
            let p = section[k];
            let p_end = p.at + p.len();
            if p_end > pos {
                let piece = self.part(&p, pos.max(p.at) - p.at..p.len(), &mut orig_end);
                middle.push(piece);
            }
            pos = p_end;
            k += 1;
        }
        self.list.splice(i0..i1, middle);
        self.renumber(i0);
        spliced
    }

    /// A part of a piece, as a new piece; keeps `orig_end` up to date.
    fn part(&self, p: &Piece, part: Range<usize>, orig_end: &mut usize) -> Piece {
        let start = p.start + part.start;
        let end = p.start + part.end;
        if p.is_orig() {
            *orig_end = end;
            Piece {
                at: 0,
                src: ORIG,
                start,
                end,
                orig_at: start,
                nls: self.orig_breaks(start, end),
            }
        } else {
            Piece {
                at: 0,
                src: p.src,
                start,
                end,
                orig_at: *orig_end,
                nls: memchr::memchr_iter(
                    b'\n',
                    &self.news[p.src as usize - 1].as_bytes()[start..end],
                )
                .count(),
            }
        }
    }

    /// The end of the last original piece at or before index `i`.
    fn orig_end_through(&self, i: usize) -> usize {
        let p = &self.list[i];
        if p.is_orig() { p.end } else { p.orig_at }
    }

    /// Recompute starts (and new pieces' original marks) from index `from`.
    fn renumber(&mut self, from: usize) {
        let (mut at, mut orig_end) = match from.checked_sub(1) {
            Some(i) => (
                self.list[i].at + self.list[i].len(),
                self.orig_end_through(i),
            ),
            None => (0, 0),
        };
        for p in &mut self.list[from..] {
            p.at = at;
            at += p.len();
            if p.is_orig() {
                orig_end = p.end;
            } else {
                p.orig_at = orig_end;
            }
        }
        self.len = at;
    }

    /// What changed between the original and the current text, ascending.
    pub fn changes(&self) -> Vec<Change> {
        let mut changes = Vec::new();
        let (mut old_at, mut new_at) = (0, 0);
        for p in self.list.iter().filter(|p| p.is_orig()) {
            if p.start > old_at || p.at > new_at {
                changes.push(Change {
                    old: old_at..p.start,
                    new: new_at..p.at,
                });
            }
            old_at = p.end;
            new_at = p.at + p.len();
        }
        if old_at < self.orig.len() || self.len > new_at {
            changes.push(Change {
                old: old_at..self.orig.len(),
                new: new_at..self.len,
            });
        }
        changes
    }
}

/// What a splice did, for the stale-edit explanation and the seam search.
#[derive(Debug, Default)]
pub(crate) struct Spliced {
    /// Where the new texts are now (current offsets, ascending).
    pub regions: Vec<Range<usize>>,
    /// Original ranges taken out (empty: text put in at that place).
    pub cut: Vec<Range<usize>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_from_pieces_matches_the_text() {
        let cases: [(&str, Vec<Replacement>); 7] = [
            ("a\nb\nc\n", vec![(2..4, "x\ny\n".into())]),
            ("a\nb\nc\n", vec![(6..6, "d\n".into())]),
            ("a\nb\nc\n", vec![(6..6, "d".into())]),
            ("a\nb\nc", vec![(5..5, "\n".into())]),
            ("a\nb\nc\n", vec![(0..6, String::new())]),
            ("\n\n\n", vec![(1..2, "q".into()), (2..3, "\n\n".into())]),
            (
                "one\ntwo\n",
                vec![(0..0, "zero\n".into()), (4..8, "2".into())],
            ),
        ];
        for (text, reps) in cases {
            let orig = LineIndex::new(text);
            let mut pieces = Pieces::new(text);
            pieces.splice(reps);
            let cur = pieces.materialize();
            let want = LineIndex::new(&cur);
            let got = pieces.line_index(&orig);
            assert_eq!(got.starts(), want.starts(), "{text:?} -> {cur:?}");
            assert_eq!(got.ends_nl(), want.ends_nl(), "{text:?} -> {cur:?}");
            assert_eq!(got.count(), want.count(), "{text:?} -> {cur:?}");
        }
    }

    fn hits(text: &str, pat: &str) -> Vec<usize> {
        find_overlapping(text.as_bytes(), pat.as_bytes())
    }

    fn naive(text: &str, pat: &str) -> Vec<usize> {
        (0..text.len())
            .filter(|&i| text.as_bytes()[i..].starts_with(pat.as_bytes()))
            .collect()
    }

    #[test]
    fn overlapping_hits() {
        assert_eq!(hits("aaaa", "aa"), [0, 1, 2]);
        assert_eq!(hits("foo\nfoo\nfoo\n", "foo\nfoo\n"), [0, 4]);
        for (t, p) in [
            ("abababab", "abab"),
            ("abaabaab", "aba"),
            ("xxyxxyxxyxx", "xxyxx"),
            ("abcabcab", "cab"),
            ("aaa", "aaaa"),
            ("x\nx\nx\nx\n", "x\nx\n"),
        ] {
            assert_eq!(hits(t, p), naive(t, p), "{t:?} {p:?}");
        }
        let many = "x\n".repeat(20_000);
        assert_eq!(hits(&many, &"x\n".repeat(10_000)).len(), 10_001);
    }

    #[test]
    fn splice_and_find_across_seams() {
        let orig = "hello world, hello moon";
        let mut p = Pieces::new(orig);
        let done = p.splice(vec![(6..11, "there".into())]);
        assert_eq!(p.materialize(), "hello there, hello moon");
        assert_eq!(done.regions, vec![6..11]);
        assert_eq!(done.cut, vec![6..11]);
        // "o there" crosses the seam between an original piece and a new one.
        assert_eq!(p.find_near("o there", &p.changed_regions()), [4]);
        assert_eq!(p.orig_now(13, 5), Some(13));
        assert_eq!(p.orig_now(6, 5), None);
        p.splice(vec![(0..5, "".into()), (13..18, "bye".into())]);
        assert_eq!(p.materialize(), " there, bye moon");
        assert_eq!(p.len(), 16);
        assert_eq!(p.orig_now(18, 5), Some(11));
        assert_eq!(p.orig_to_current(14), 8);
    }

    #[test]
    fn splice_at_edges() {
        let mut p = Pieces::new("abc");
        p.splice(vec![(0..0, "<".into()), (3..3, ">".into())]);
        assert_eq!(p.materialize(), "<abc>");
        assert_eq!(p.orig_now(0, 3), Some(1));
        p.splice(vec![(0..5, "x".into())]);
        assert_eq!(p.materialize(), "x");
        let mut p = Pieces::new("");
        p.splice(vec![(0..0, "new".into())]);
        assert_eq!(p.materialize(), "new");
        p.splice(vec![(1..1, "-".into())]);
        assert_eq!(p.materialize(), "n-ew");
        p.splice(vec![(4..4, "!".into())]);
        assert_eq!(p.materialize(), "n-ew!");
    }

    #[test]
    fn an_insertion_inside_an_original_match_breaks_it() {
        let mut p = Pieces::new("abcdef");
        p.splice(vec![(3..3, "X".into())]);
        assert_eq!(p.orig_now(1, 4), None);
        assert_eq!(p.orig_now(3, 3), Some(4));
        assert_eq!(p.orig_now(0, 3), Some(0));
        assert_eq!(p.changed_regions(), vec![3..4]);
        let mut p = Pieces::new("abcdef");
        p.splice(vec![(2..4, "".into())]);
        assert_eq!(p.changed_regions(), vec![2..2]);
        assert_eq!(p.find_near("bef", &p.changed_regions()), [1]);
    }

    #[test]
    fn changes_map_old_to_new() {
        let mut p = Pieces::new("one two three");
        p.splice(vec![(4..7, "2".into())]);
        assert_eq!(
            p.changes(),
            [Change {
                old: 4..7,
                new: 4..5
            }]
        );
        p.splice(vec![(0..3, "1".into())]);
        assert_eq!(
            p.changes(),
            [
                Change {
                    old: 0..3,
                    new: 0..1
                },
                Change {
                    old: 4..7,
                    new: 2..3
                }
            ]
        );
    }
}
