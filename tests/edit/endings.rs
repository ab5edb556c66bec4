//! Line endings an edit writes (the third round's probe, D8 and D9): every
//! line an edit keeps keeps its bytes, its ending included; a changed or
//! added line takes the file's usual ending, but the line break old stopped
//! short of still ends new's last line; a lone CR is a line ending in the
//! file and in old and new alike; and the written text reads back as
//! exactly the lines the diff shows. The text formats (unified diff, V4A,
//! SEARCH/REPLACE, whole file) follow the same rules.

use nib::edit::formats::apply::{ChangeKind, from_blocks, from_udiff, from_v4a};
use nib::edit::formats::search_replace::{self, Item, ParseOptions};
use nib::edit::formats::{udiff, v4a, whole};
use nib::edit::{Applied, Edit, Hinted, LineKind, apply_hinted};

use crate::ok;

/// The lines of a written text as a reader that ends lines at LF, CRLF
/// and a lone CR sees them (the BOM left out).
fn lines_read(written: &str) -> Vec<String> {
    let body = written.strip_prefix('\u{feff}').unwrap_or(written);
    let lf = body.replace("\r\n", "\n").replace('\r', "\n");
    lf.lines().map(str::to_string).collect()
}

/// The lines the diff says the new text has around its hunks: each hunk's
/// context and added lines, in order, are the written text's lines at the
/// numbers it gives; the line count follows from what it adds and removes.
fn assert_diff_reads_back(before: &str, a: &Applied) {
    let read = lines_read(&a.text);
    let (added, removed) = a.diff.stats();
    assert_eq!(
        read.len() + removed,
        lines_read(before).len() + added,
        "line count of {:?} against the diff\n{}",
        a.text,
        a.diff.unified("f")
    );
    for h in &a.diff.hunks {
        for l in &h.lines {
            if let (LineKind::Context | LineKind::Added, Some(n)) = (l.kind, l.new_line) {
                assert_eq!(read.get(n - 1), Some(&l.text), "line {n} of {:?}", a.text);
            }
        }
    }
}

#[test]
fn old_without_its_newline_and_a_line_appended_keeps_the_line_ending() {
    // D8: b keeps its own ending (CR) and X, added, takes the usual (LF).
    let text = "a\r\nb\rc\nd\ne\n";
    let out = ok(text, &[Edit::new("b", "b\nX")]);
    assert_eq!(out.text, "a\r\nb\rX\nc\nd\ne\n");
    assert_diff_reads_back(text, &out);
    let out = ok(text, &[Edit::new("a\nb", "a\nb\nX")]);
    assert_eq!(out.text, "a\r\nb\rX\nc\nd\ne\n");
    // With its newline, the same bytes.
    let out = ok(text, &[Edit::new("b\n", "b\nX\n")]);
    assert_eq!(out.text, "a\r\nb\rX\nc\nd\ne\n");
    // A line put before it, old without its newline: the line keeps it.
    let out = ok(text, &[Edit::new("b", "X\nb")]);
    assert_eq!(out.text, "a\r\nX\nb\rc\nd\ne\n");
}

#[test]
fn a_changed_line_keeps_the_line_break_old_stopped_short_of() {
    // old without the line's break: the break, not taken out, stays.
    let text = "a\nb\r\nc\n";
    for old in ["b", "a\nb"] {
        let new = old.replace('b', "B");
        assert_eq!(
            ok(text, &[Edit::new(old, &new)]).text,
            "a\nB\r\nc\n",
            "{old:?}"
        );
    }
    // old through it: the changed line is new, with the usual ending.
    for old in ["b\n", "a\nb\n", "b\nc\n"] {
        let new = old.replace('b', "B");
        assert_eq!(
            ok(text, &[Edit::new(old, &new)]).text,
            "a\nB\nc\n",
            "{old:?}"
        );
    }
    // A line added before the changed one, old stopping short: the break
    // still follows new's last line.
    let text = "a\nb\nc\r\nd\r\n";
    let out = ok(text, &[Edit::new("c", "X\nC")]);
    assert_eq!(out.text, "a\nb\nX\nC\r\nd\r\n");
}

#[test]
fn an_edit_and_its_inverse_give_back_every_ending() {
    // A line break put into a line: the line is kept (LF) and the line
    // after it added (usual CRLF); taken out again, the added line goes.
    let text = "a\r\nxxb\t\nzz";
    let there = ok(text, &[Edit::new("b", "b\t\n")]);
    assert_eq!(there.text, "a\r\nxxb\t\n\t\r\nzz");
    let back = ok(&there.text, &[Edit::new("b\t\n", "b")]);
    assert_eq!(back.text, text);
    assert_diff_reads_back(&there.text, &back);
}

#[test]
fn an_exact_old_inside_the_indentation_keeps_the_kept_lines_ending() {
    // D8b under the literal contract: a one-line old sent without its
    // indentation is written as sent; a line new keeps keeps its LF, lines
    // it brings in take the usual CRLF.
    let text = "    one\r\n    two\n    three\r\n";
    let out = ok(text, &[Edit::new("two\r\n", "two\r\nadded()\r\n")]);
    assert_eq!(out.text, "    one\r\n    two\nadded()\r\n    three\r\n");
    // A line put before it splits the line: both halves are new.
    let text = "    a\r\n    b\n    c\r\n";
    let out = ok(text, &[Edit::new("b\n", "X\nb\n")]);
    assert_eq!(out.text, "    a\r\n    X\r\nb\r\n    c\r\n");
}

#[test]
fn an_empty_line_after_a_lone_cr_ends_in_cr() {
    // D9: "a\r" then "\n" would read as one CRLF line, and the blank line
    // the diff shows would not be in the file.
    let text = "a\rb\nc\nd\n";
    let out = ok(text, &[Edit::new("a\nb\n", "a\n\nb\n")]);
    assert_eq!(out.text, "a\r\rb\nc\nd\n");
    assert_diff_reads_back(text, &out);
    assert_eq!(out.diff.stats(), (1, 0));
    // A line deleted so that the CR line meets an empty LF line.
    let text = "a\rX\n\nb\n";
    let out = ok(text, &[Edit::new("X\n", "")]);
    assert_eq!(out.text, "a\r\rb\n");
    assert_diff_reads_back(text, &out);
    // A line emptied after a CR line.
    let text = "a\rb\nc\nd\n";
    let out = ok(text, &[Edit::new("b", "")]);
    assert_eq!(out.text, "a\r\rc\nd\n");
    assert_diff_reads_back(text, &out);
    // Several empty lines in a row: each ends in CR.
    let out = ok(text, &[Edit::new("a\nb\n", "a\n\n\nb\n")]);
    assert_eq!(out.text, "a\r\r\rb\nc\nd\n");
    assert_diff_reads_back(text, &out);
    // With CRLF usual the added line's CRLF cannot join: it stays.
    let text = "a\rb\r\nc\r\n";
    let out = ok(text, &[Edit::new("a\nb\n", "a\n\nb\n")]);
    assert_eq!(out.text, "a\r\r\nb\r\nc\r\n");
}

#[test]
fn a_lone_cr_in_old_or_new_is_a_line_ending() {
    // In a file without one too: written as sent it would be a line
    // ending when the file is next read, and the diff would be wrong.
    let text = "a\nb\n";
    let out = ok(text, &[Edit::new("b\n", "b\rX\r")]);
    assert_eq!(out.text, "a\nb\nX\n");
    assert_diff_reads_back(text, &out);
    let text = "a\r\nb\r\n";
    let out = ok(text, &[Edit::new("a\rb\r", "a\rB\r")]);
    assert_eq!(out.text, "a\r\nB\r\n");
    // An old Mac file edited with CRLF or LF.
    let out = ok("a\rb\rc\r", &[Edit::new("b\r\nc\r\n", "b\r\nB\r\nc\r\n")]);
    assert_eq!(out.text, "a\rb\rB\rc\r");
    let out = ok("a\rb\rc", &[Edit::new("c\n", "C\n")]);
    assert_eq!(out.text, "a\rb\rC");
    let out = ok("a\rb\rc", &[Edit::new("c", "c\nd")]);
    assert_eq!(out.text, "a\rb\rc\rd");
}

#[test]
fn replace_all_on_lines_of_mixed_endings() {
    // Each line holding a match is compared whole: "y = x" and the last
    // "x" are kept with their endings and "w" added; "x = 1" becomes two
    // lines, the one old's match ended keeps the line's ending.
    let text = "x = 1\r\ny = x\rx\nz\n";
    let all = Edit {
        replace_all: true,
        ..Edit::new("x", "x\nw")
    };
    let out = ok(text, &[all]);
    assert_eq!(out.text, "x\nw = 1\r\ny = x\rw\nx\nw\nz\n");
    assert_diff_reads_back(text, &out);
}

#[test]
fn tolerant_matches_keep_endings_the_same_way() {
    // Dedented two-line old without its newline, a line appended: found
    // ignoring indentation; b keeps its CR, the added line takes LF.
    let text = "    a\r\n    b\r    c\n    d\n    e\n";
    let out = ok(text, &[Edit::new("a\nb", "a\nb\nX")]);
    assert_eq!(out.text, "    a\r\n    b\r    X\n    c\n    d\n    e\n");
    assert_diff_reads_back(text, &out);
    // Trailing whitespace dropped, an empty line added after a CR line.
    let text = "a  \rb\nc\nd\n";
    let out = ok(text, &[Edit::new("a\nb\n", "a\n\nb\n")]);
    assert_eq!(out.text, "a  \r\rb\nc\nd\n");
    assert_diff_reads_back(text, &out);
}

/// The edits of one file's change from a text format.
fn edits_of(kind: &ChangeKind) -> &[Hinted] {
    match kind {
        ChangeKind::Edit(edits) => edits,
        other => panic!("not an edit: {other:?}"),
    }
}

#[test]
fn the_text_formats_keep_endings_as_an_edit_does() {
    let mixed = "a\r\nb\rc\nd\ne\n";
    let want = "a\r\nb\rX\nc\nd\ne\n";
    let diff = udiff::parse("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n a\n b\n+X\n c\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let changes = from_udiff(&diff).unwrap_or_else(|e| panic!("{e}"));
    let out = apply_hinted(mixed, edits_of(&changes[0].kind), &[]).unwrap();
    assert_eq!(out.text, want);

    let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n+\n b\n*** End Patch\n";
    let ops = v4a::parse(patch, v4a::Mode::Strict).unwrap_or_else(|e| panic!("{e}"));
    let changes = from_v4a(&ops);
    let text = "a\rb\nc\nd\n";
    let out = apply_hinted(text, edits_of(&changes[0].kind), &[]).unwrap();
    assert_eq!(out.text, "a\r\rb\nc\nd\n");
    assert_diff_reads_back(text, &out);

    let reply = "f.txt\n```\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n```\n";
    let items =
        search_replace::parse(reply, &ParseOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let blocks: Vec<_> = items
        .into_iter()
        .filter_map(|i| match i {
            Item::Block(b) => Some(b),
            Item::Shell(_) => None,
        })
        .collect();
    let changes = from_blocks(&blocks, &|_| true).unwrap_or_else(|e| panic!("{e}"));
    let out = apply_hinted("a\rb\rc\r", edits_of(&changes[0].kind), &[]).unwrap();
    assert_eq!(out.text, "a\rB\rc\r");

    // A whole file sent with LF: kept lines keep their endings.
    assert_eq!(whole::keep_conventions(mixed, "a\nb\nX\nc\nd\ne\n"), want);
    assert_eq!(
        whole::keep_conventions("a\rb\rc\r", "a\nB\nc\n"),
        "a\rB\rc\r"
    );
    // Its diff has the file's lines.
    let d = nib::edit::Diff::between("a\rb\rc\r", "a\rB\rc\r");
    assert_eq!(d.hunks[0].old_len, 3);
    assert_eq!(d.stats(), (1, 1));
}
