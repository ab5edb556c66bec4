//! Unified diffs of what a call changed, with line numbers.
//!
//! The engine knows which byte ranges its edits replaced, so only the lines
//! around those ranges are diffed (with `similar`); the long equal stretches
//! between them are never compared. A 10 MB file with 100 scattered edits
//! costs 100 small diffs, not one diff of 250,000 lines.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;

use serde::Serialize;
use similar::{Algorithm, DiffOp, capture_diff_slices, group_diff_ops};

use super::pieces::Change;
use super::text::LineIndex;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// What a line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Context,
    Removed,
    Added,
}

/// One line of a hunk, with its numbers in the old and new text (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffLine {
    pub kind: LineKind,
    pub old_line: Option<usize>,
    pub new_line: Option<usize>,
    pub text: String,
    /// The line is the last of its text and has no '\n'.
    pub no_newline: bool,
}

/// A run of changed lines with their context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<DiffLine>,
}

/// The diff of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diff {
    pub hunks: Vec<Hunk>,
}

/// A line with whether a '\n' ends it: "x" at the end of a file and "x\n"
/// are different lines.
type Line<'a> = (&'a str, bool);

impl Diff {
    /// The diff between two texts. A lone CR ends a line, as the engine
    /// reads files: where either text has one, lines are split there too
    /// (the CR shown at the line's end, as a CRLF line's is), so the diff
    /// has the lines the file has.
    pub fn between(old: &str, new: &str) -> Diff {
        if has_lone_cr(old) || has_lone_cr(new) {
            let (o, n) = (lone_cr_as_crlf(old), lone_cr_as_crlf(new));
            // Where only a CR became a CRLF or the other way round, the
            // split texts are equal: the unsplit ones show the change.
            if o != n {
                return Diff::between_lf_lines(&o, &n);
            }
        }
        Diff::between_lf_lines(old, new)
    }

    /// The diff between two texts whose lines end at '\n'.
    fn between_lf_lines(old: &str, new: &str) -> Diff {
        let prefix = old
            .bytes()
            .zip(new.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let max_suffix = old.len().min(new.len()) - prefix;
        let suffix = old
            .bytes()
            .rev()
            .zip(new.bytes().rev())
            .take(max_suffix)
            .take_while(|(a, b)| a == b)
            .count();
        if prefix == old.len() && prefix == new.len() {
            return Diff::default();
        }
        let change = Change {
            old: prefix..old.len() - suffix,
            new: prefix..new.len() - suffix,
        };
        Diff::from_changes(old, |r| Cow::Borrowed(&new[r]), &[change])
    }

    /// The diff between two texts that differ only in `changes` (ascending
    /// byte ranges; the text between them is equal). Only windows around
    /// the changes are split into lines; the rest is only counted, and the
    /// new text is only read there (`new` gives a range of it, cut at line
    /// or change boundaries), so it need not exist as one string.
    pub(crate) fn from_changes<'n>(
        old: &str,
        new: impl Fn(Range<usize>) -> Cow<'n, str>,
        changes: &[Change],
    ) -> Diff {
        let mut hunks = Vec::new();
        // Line numbers: newlines are counted in the old text only, up to
        // each window; the new text's numbers follow from what the changes
        // before it added or removed.
        let (mut counted_to, mut old_line) = (0, 0);
        for w in windows(old, &new, changes) {
            let shift = |at: usize, by: isize| (at as isize + by) as usize;
            let new_span = shift(w.old.start, w.delta_before)..shift(w.old.end, w.delta_after);
            old_line += count_newlines(&old.as_bytes()[counted_to..w.old.start]);
            counted_to = w.old.start;
            let new_line = shift(old_line, w.lines_before);
            let (o, n) = (&old[w.old.clone()], new(new_span));
            let n: &str = &n;
            let (oi, ni) = (LineIndex::new(o), LineIndex::new(n));
            let ops = capture_diff_slices(Algorithm::Myers, &lines_of(o, &oi), &lines_of(n, &ni));
            let base = (old_line, new_line);
            for group in group_diff_ops(ops, CONTEXT) {
                hunks.push(hunk(&group, (o, &oi), (n, &ni), base));
            }
        }
        Diff { hunks }
    }

    pub fn is_empty(&self) -> bool {
        self.hunks.is_empty()
    }

    /// Lines added and removed.
    pub fn stats(&self) -> (usize, usize) {
        let lines = self.hunks.iter().flat_map(|h| &h.lines);
        lines.fold((0, 0), |(a, r), l| match l.kind {
            LineKind::Added => (a + 1, r),
            LineKind::Removed => (a, r + 1),
            LineKind::Context => (a, r),
        })
    }

    /// The diff in unified format, as `git apply` and `patch` read it.
    pub fn unified(&self, path: &str) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut out = format!("--- a/{path}\n+++ b/{path}\n");
        for h in &self.hunks {
            let start = |s: usize, len: usize| if len == 0 { s.saturating_sub(1) } else { s };
            let _ = writeln!(
                out,
                "@@ -{},{} +{},{} @@",
                start(h.old_start, h.old_len),
                h.old_len,
                start(h.new_start, h.new_len),
                h.new_len
            );
            for l in &h.lines {
                let mark = match l.kind {
                    LineKind::Context => ' ',
                    LineKind::Removed => '-',
                    LineKind::Added => '+',
                };
                let _ = writeln!(out, "{mark}{}", l.text);
                if l.no_newline {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
        out
    }
}

/// Whether a text has a CR not followed by a LF.
fn has_lone_cr(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\r', bytes).any(|at| bytes.get(at + 1) != Some(&b'\n'))
}

/// The text with each lone CR followed by a LF: the lines a reader that
/// ends lines at a lone CR sees, each with its CR.
fn lone_cr_as_crlf(text: &str) -> Cow<'_, str> {
    if !has_lone_cr(text) {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut last = 0;
    for at in memchr::memchr_iter(b'\r', bytes) {
        if bytes.get(at + 1) != Some(&b'\n') {
            out.push_str(&text[last..=at]);
            out.push('\n');
            last = at + 1;
        }
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

fn lines_of<'t>(text: &'t str, idx: &LineIndex) -> Vec<Line<'t>> {
    (0..idx.count())
        .map(|i| (idx.line(text, i), idx.has_newline(i)))
        .collect()
}

/// A stretch of the old text holding one or more changes with their
/// context lines, and how far the new text is shifted before and after it.
struct Window {
    old: Range<usize>,
    delta_before: isize,
    delta_after: isize,
    /// Lines the changes before this window added (or removed, if < 0).
    lines_before: isize,
}

/// Changes widened to whole lines plus context, merged where they touch.
fn windows<'n>(
    old: &str,
    new: &impl Fn(Range<usize>) -> Cow<'n, str>,
    changes: &[Change],
) -> Vec<Window> {
    let bytes = old.as_bytes();
    let mut out: Vec<Window> = Vec::new();
    let (mut delta, mut lines) = (0isize, 0isize);
    for c in changes {
        let mut start = line_start(bytes, c.old.start);
        for _ in 0..CONTEXT {
            if start == 0 {
                break;
            }
            start = line_start(bytes, start - 1);
        }
        let mut end = if c.old.end > c.old.start && bytes[c.old.end - 1] == b'\n' {
            c.old.end
        } else {
            line_end(bytes, c.old.end)
        };
        for _ in 0..CONTEXT {
            end = line_end(bytes, end);
        }
        let (before, lines_before) = (delta, lines);
        delta += c.new.len() as isize - c.old.len() as isize;
        lines += count_newlines(new(c.new.clone()).as_bytes()) as isize
            - count_newlines(&bytes[c.old.clone()]) as isize;
        match out.last_mut() {
            Some(w) if start <= w.old.end => {
                w.old.end = w.old.end.max(end);
                w.delta_after = delta;
            }
            _ => out.push(Window {
                old: start..end,
                delta_before: before,
                delta_after: delta,
                lines_before,
            }),
        }
    }
    out
}

/// The start of the line holding byte `pos`.
fn line_start(bytes: &[u8], pos: usize) -> usize {
    memchr::memrchr(b'\n', &bytes[..pos]).map_or(0, |i| i + 1)
}

/// The end of the line holding byte `pos`, past its '\n'.
fn line_end(bytes: &[u8], pos: usize) -> usize {
    memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i + 1)
}

/// Counting in plain code lets the compiler use vector instructions; it is
/// many times faster than finding each newline in turn.
fn count_newlines(bytes: &[u8]) -> usize {
    let mut chunks = bytes.chunks_exact(128);
    let mut total = 0;
    for chunk in &mut chunks {
        // A u8 sum of at most 128 ones cannot overflow.
        total += chunk.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>() as usize;
    }
    total + chunks.remainder().iter().filter(|&&b| b == b'\n').count()
}

fn hunk(
    group: &[DiffOp],
    (old, oi): (&str, &LineIndex),
    (new, ni): (&str, &LineIndex),
    (old_base, new_base): (usize, usize),
) -> Hunk {
    let mut lines = Vec::new();
    let line = |kind, text: &str, o: Option<usize>, n: Option<usize>, last: bool| DiffLine {
        kind,
        old_line: o.map(|i| old_base + i + 1),
        new_line: n.map(|i| new_base + i + 1),
        text: text.to_string(),
        no_newline: last,
    };
    for op in group {
        let (o, n) = (op.old_range(), op.new_range());
        match op {
            DiffOp::Equal { .. } => {
                for (i, j) in o.zip(n) {
                    let last = !oi.has_newline(i);
                    lines.push(line(
                        LineKind::Context,
                        oi.line(old, i),
                        Some(i),
                        Some(j),
                        last,
                    ));
                }
            }
            _ => {
                for i in o {
                    let last = !oi.has_newline(i);
                    lines.push(line(
                        LineKind::Removed,
                        oi.line(old, i),
                        Some(i),
                        None,
                        last,
                    ));
                }
                for j in n {
                    let last = !ni.has_newline(j);
                    lines.push(line(LineKind::Added, ni.line(new, j), None, Some(j), last));
                }
            }
        }
    }
    let first = group
        .first()
        .map_or((0, 0), |op| (op.old_range().start, op.new_range().start));
    let count = |kind| {
        lines
            .iter()
            .filter(|l| l.kind == kind || l.kind == LineKind::Context)
            .count()
    };
    Hunk {
        old_start: old_base + first.0 + 1,
        old_len: count(LineKind::Removed),
        new_start: new_base + first.1 + 1,
        new_len: count(LineKind::Added),
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_with_numbers() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\n";
        let d = Diff::between(old, new);
        assert_eq!(
            d.unified("x.txt"),
            "--- a/x.txt\n+++ b/x.txt\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"
        );
        let removed = &d.hunks[0].lines[3];
        assert_eq!((removed.old_line, removed.new_line), (Some(4), None));
        assert_eq!(d.stats(), (1, 1));
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let d = Diff::between("a\nb", "a\nc");
        assert_eq!(
            d.unified("f"),
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        let d = Diff::between("a\nb", "a\nb\n");
        assert_eq!(d.stats(), (1, 1));
    }

    #[test]
    fn a_lone_cr_ends_a_line() {
        let d = Diff::between("a\rb\rc\r", "a\rB\rc\r");
        assert_eq!(
            d.unified("f"),
            "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n"
        );
        let d = Diff::between("a\r\nb\rc\n", "a\r\nb\rX\nc\n");
        assert_eq!(d.stats(), (1, 0));
        assert_eq!(d.hunks[0].lines[2].text, "X");
        // Only an ending changed: still a change.
        assert!(!Diff::between("a\rb\n", "a\r\nb\n").is_empty());
    }

    #[test]
    fn creation_and_deletion() {
        assert_eq!(
            Diff::between("", "x\n").unified("f"),
            "--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n"
        );
        assert_eq!(
            Diff::between("x\n", "").unified("f"),
            "--- a/f\n+++ b/f\n@@ -1,1 +0,0 @@\n-x\n"
        );
        assert!(Diff::between("same", "same").is_empty());
    }

    #[test]
    fn separate_changes_make_separate_hunks() {
        let old: String = (0..40).map(|i| format!("{i}\n")).collect();
        let new = old
            .replace("\n5\n", "\nfive\n")
            .replace("\n30\n", "\nthirty\n");
        let changes = vec![
            Change {
                old: 10..11,
                new: 10..14,
            },
            Change {
                old: 80..82,
                new: 83..89,
            },
        ];
        assert_eq!(&old[10..11], "5");
        assert_eq!(&new[83..89], "thirty");
        let d = Diff::from_changes(&old, |r| Cow::Borrowed(&new[r]), &changes);
        assert_eq!(d.hunks.len(), 2);
        assert_eq!(d, whole(&old, &new));
    }

    /// The diff `similar` computes over the whole text, for comparison.
    fn whole(old: &str, new: &str) -> Diff {
        let t0 = std::time::Instant::now();
        let (oi, ni) = (LineIndex::new(old), LineIndex::new(new));
        eprintln!("    lineindex {:?}", t0.elapsed());
        let o: Vec<Line> = (0..oi.count())
            .map(|i| (oi.line(old, i), oi.has_newline(i)))
            .collect();
        let n: Vec<Line> = (0..ni.count())
            .map(|i| (ni.line(new, i), ni.has_newline(i)))
            .collect();
        let ops = capture_diff_slices(Algorithm::Myers, &o, &n);
        let hunks = group_diff_ops(ops, CONTEXT)
            .iter()
            .map(|g| hunk(g, (old, &oi), (new, &ni), (0, 0)))
            .collect();
        Diff { hunks }
    }
}
