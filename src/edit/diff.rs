//! Unified diffs of what a call changed, with line numbers.
//!
//! The engine knows which byte ranges its edits replaced, so only the lines
//! around those ranges are diffed (with `similar`); the long equal stretches
//! between them are never compared. A 10 MB file with 100 scattered edits
//! costs 100 small diffs, not one diff of 250,000 lines.

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
    /// The diff between two texts.
    pub fn between(old: &str, new: &str) -> Diff {
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
        Diff::from_changes(old, new, &[change])
    }

    /// The diff between two texts that differ only in `changes` (ascending
    /// byte ranges; the text between them is equal).
    pub(crate) fn from_changes(old: &str, new: &str, changes: &[Change]) -> Diff {
        if changes.is_empty() {
            return Diff::default();
        }
        let (oi, ni) = (LineIndex::new(old), LineIndex::new(new));
        let old_lines = |r: Range<usize>| -> Vec<Line> {
            r.map(|i| (oi.line(old, i), oi.has_newline(i))).collect()
        };
        let new_lines = |r: Range<usize>| -> Vec<Line> {
            r.map(|i| (ni.line(new, i), ni.has_newline(i))).collect()
        };
        let mut ops = Vec::new();
        let (mut done_old, mut done_new) = (0, 0);
        for (o, n) in line_regions(&oi, &ni, changes) {
            push_equal(&mut ops, done_old..o.start, done_new..n.start);
            let region = capture_diff_slices(
                Algorithm::Myers,
                &old_lines(o.clone()),
                &new_lines(n.clone()),
            );
            ops.extend(region.into_iter().map(|op| shift(op, o.start, n.start)));
            (done_old, done_new) = (o.end, n.end);
        }
        push_equal(&mut ops, done_old..oi.count(), done_new..ni.count());
        let hunks = group_diff_ops(ops, CONTEXT)
            .into_iter()
            .map(|group| hunk(&group, old, &oi, new, &ni))
            .collect();
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

/// Changes widened to whole lines and merged where they touch, as line
/// ranges of the old and new text.
fn line_regions(
    oi: &LineIndex,
    ni: &LineIndex,
    changes: &[Change],
) -> Vec<(Range<usize>, Range<usize>)> {
    let widen = |idx: &LineIndex, r: &Range<usize>| {
        if idx.count() == 0 {
            return 0..0;
        }
        (idx.line_of(r.start))..(idx.line_of(r.end) + 1).min(idx.count())
    };
    let mut regions: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    for c in changes {
        let (o, n) = (widen(oi, &c.old), widen(ni, &c.new));
        match regions.last_mut() {
            Some((po, pn)) if o.start <= po.end || n.start <= pn.end => {
                po.end = po.end.max(o.end);
                pn.end = pn.end.max(n.end);
            }
            _ => regions.push((o, n)),
        }
    }
    regions
}

fn push_equal(ops: &mut Vec<DiffOp>, old: Range<usize>, new: Range<usize>) {
    // The text between changes is equal, so both sides have as many lines.
    let len = old.len().min(new.len());
    if len > 0 {
        ops.push(DiffOp::Equal {
            old_index: old.start,
            new_index: new.start,
            len,
        });
    }
}

fn shift(op: DiffOp, by_old: usize, by_new: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + by_old,
            new_index: new_index + by_new,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + by_old,
            old_len,
            new_index: new_index + by_new,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + by_old,
            new_index: new_index + by_new,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + by_old,
            old_len,
            new_index: new_index + by_new,
            new_len,
        },
    }
}

fn hunk(group: &[DiffOp], old: &str, oi: &LineIndex, new: &str, ni: &LineIndex) -> Hunk {
    let mut lines = Vec::new();
    let line = |kind, text: &str, o: Option<usize>, n: Option<usize>, last: bool| DiffLine {
        kind,
        old_line: o.map(|i| i + 1),
        new_line: n.map(|i| i + 1),
        text: text.to_string(),
        no_newline: last,
    };
    for op in group {
        let (o, n) = (op.old_range(), op.new_range());
        match op {
            DiffOp::Equal { .. } => {
                for (i, j) in o.zip(n) {
                    lines.push(line(
                        LineKind::Context,
                        oi.line(old, i),
                        Some(i),
                        Some(j),
                        !oi.has_newline(i),
                    ));
                }
            }
            _ => {
                for i in o {
                    lines.push(line(
                        LineKind::Removed,
                        oi.line(old, i),
                        Some(i),
                        None,
                        !oi.has_newline(i),
                    ));
                }
                for j in n {
                    lines.push(line(
                        LineKind::Added,
                        ni.line(new, j),
                        None,
                        Some(j),
                        !ni.has_newline(j),
                    ));
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
        old_start: first.0 + 1,
        old_len: count(LineKind::Removed),
        new_start: first.1 + 1,
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
        let d = Diff::from_changes(&old, &new, &changes);
        assert_eq!(d.hunks.len(), 2);
        assert_eq!(d, whole(&old, &new));
    }

    /// The diff `similar` computes over the whole text, for comparison.
    fn whole(old: &str, new: &str) -> Diff {
        let (oi, ni) = (LineIndex::new(old), LineIndex::new(new));
        let o: Vec<Line> = (0..oi.count())
            .map(|i| (oi.line(old, i), oi.has_newline(i)))
            .collect();
        let n: Vec<Line> = (0..ni.count())
            .map(|i| (ni.line(new, i), ni.has_newline(i)))
            .collect();
        let ops = capture_diff_slices(Algorithm::Myers, &o, &n);
        let hunks = group_diff_ops(ops, CONTEXT)
            .iter()
            .map(|g| hunk(g, old, &oi, new, &ni))
            .collect();
        Diff { hunks }
    }
}
