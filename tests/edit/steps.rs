//! How a call steps through its edits and matches each one: an edit an
//! earlier one made stale is refused before any tolerant level could find a
//! loose twin elsewhere; an edit that repeats an earlier one sent a little
//! differently is applied once; the file's byte order mark is the file's;
//! new follows the file's typography where old matched only by folding it;
//! line numbers copied into old are taken off only where that is certain.
//! Each case is a probe's reproducer, with the exact bytes or refusal.

use nib::edit::{Edit, ErrorKind, Outcome};

use crate::{err, ok};

// ---------------------------------------------------------------- stale

#[test]
fn a_stale_edit_is_not_applied_to_a_twin_at_another_indentation() {
    let text = "def f():\n    x = 1\n\nx = 1\n";
    let e = err(
        text,
        &[
            Edit::new("    x = 1\n", "    x = 2\n"),
            Edit::new("    x = 1\n", "    x = 3\n"),
        ],
    );
    assert_eq!((e.kind, e.edit), (ErrorKind::NotFound, Some((2, 2))));
    let msg = e.to_string();
    assert!(
        msg.contains(
            "edit 2's old text was changed by edit 1: it was at line 2 of the file as read"
        ),
        "{msg}"
    );
    assert!(msg.contains("     2\t    x = 2"), "{msg}");
}

#[test]
fn a_stale_edit_is_not_applied_to_a_trailing_whitespace_twin() {
    let text = "a = 1\nb = 2\n\na = 1  \n";
    let first = Edit::new("a = 1\nb = 2\n", "a = 9\nb = 2\n");
    for second in [
        Edit::new("a = 1\n", "a = 5\n"),
        Edit::new("a = 1\nb", "a = 5\nb"),
    ] {
        let e = err(text, &[first.clone(), second]);
        assert!(
            e.to_string()
                .contains("edit 2's old text was changed by edit 1"),
            "{e}"
        );
    }
}

#[test]
fn a_stale_tolerant_edit_is_not_applied_to_the_place_left() {
    // old matched both functions' lines ignoring indentation in the file as
    // read; edit 1 changed one of them, which leaves one place now, but
    // which one old meant was never clear.
    let text = "def f():\n    x = 1\n    y = 2\n\ndef g():\n        x = 1\n        y = 2\n";
    let e = err(
        text,
        &[
            Edit::new("def f():\n    x = 1\n", "def f():\n    x = 5\n"),
            Edit::new("x = 1\ny = 2\n", "x = 1\ny = 3\n"),
        ],
    );
    assert!(
        e.to_string()
            .contains("edit 2's old text was changed by edit 1"),
        "{e}"
    );
}

#[test]
fn old_text_an_earlier_edit_wrote_and_a_later_one_changed_is_stale() {
    // Edit 1 writes p() q(); edit 2 changes p(); edit 3's old is what edit
    // 1 wrote. Its loose twin in the if block must not be edited.
    let text = "start\n\nif x:\n    p()\n    q()\n";
    let e = err(
        text,
        &[
            Edit::new("start\n", "start\np()\nq()\n"),
            Edit::new("start\np()\n", "start\nP()\n"),
            Edit::new("p()\nq()\n", "p()\nq()\nr()\n"),
        ],
    );
    let msg = e.to_string();
    assert!(
        msg.contains(
            "edit 3's old text was changed by edit 2: it was in text an earlier edit wrote"
        ),
        "{msg}"
    );
    assert!(msg.contains("\tP()"), "{msg}");
}

#[test]
fn a_later_edit_still_applies_where_old_is_now() {
    // The documented order: each edit on the text the previous left.
    let text = "a\nb\nc\n";
    let out = ok(
        text,
        &[
            Edit::new("a\n", "a\nx\n"),
            Edit::new("x\nb\n", "x\nB\n"),
            Edit::new("c\n", "C\n"),
        ],
    );
    assert_eq!(out.text, "a\nx\nB\nC\n");
}

// ---------------------------------------------------------------- repeats

fn all(old: &str, new: &str) -> Edit {
    Edit {
        old: old.into(),
        new: new.into(),
        replace_all: true,
    }
}

#[test]
fn an_insertion_sent_again_without_its_final_newline_is_applied_once() {
    let out = ok(
        "a\nb\nc\n",
        &[Edit::new("b\n", "b\nX\n"), Edit::new("b", "b\nX")],
    );
    assert_eq!(out.text, "a\nb\nX\nc\n");
    assert_eq!(out.outcomes[1], Outcome::Duplicate { of: 1 });
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("edit 2 makes the same change as edit 1")
                && n.contains("skipped the copy")),
        "{:?}",
        out.notes
    );
}

#[test]
fn a_repeat_with_other_whitespace_or_replace_all_is_applied_once() {
    let out = ok(
        "a\nb\nc\n",
        &[Edit::new("b\n", "b\nX\n"), Edit::new("b \n", "b \nX\n")],
    );
    assert_eq!(out.text, "a\nb\nX\nc\n");
    // Sent without its indentation, the copy is exact inside the line and
    // would write `x = 0` at column 0 (the literal contract): not certainly
    // the same change, so refused rather than made twice.
    let e = err(
        "def f():\n    a = 1\n    b = 2\n",
        &[
            Edit::new("    a = 1\n", "    a = 1\n    x = 0\n"),
            Edit::new("a = 1\n", "a = 1\nx = 0\n"),
        ],
    );
    assert_eq!((e.kind, e.edit), (ErrorKind::Ambiguous, Some((2, 2))));
    let out = ok(
        "x = foo\ny = 1\n",
        &[Edit::new("foo", "foo_bar"), all("foo", "foo_bar")],
    );
    assert_eq!(out.text, "x = foo_bar\ny = 1\n");
    assert_eq!(out.outcomes[1], Outcome::Duplicate { of: 1 });
    // A replacement whose old is gone: the copy's old stood where the
    // first one changed.
    let out = ok(
        "foo()\nend\n",
        &[Edit::new("foo()\n", "bar()\n"), Edit::new("foo()", "bar()")],
    );
    assert_eq!(out.text, "bar()\nend\n");
    assert_eq!(out.outcomes[1], Outcome::Duplicate { of: 1 });
}

#[test]
fn a_repeat_that_is_not_certainly_the_same_change_refuses() {
    // The copy puts z at another depth: applying it would insert z twice.
    let e = err(
        "if x:\n    y\n",
        &[
            Edit::new("if x:\n    y\n", "if x:\n    y\n    z\n"),
            Edit::new("if x:\n  y\n", "if x:\n  y\nz\n"),
        ],
    );
    assert_eq!((e.kind, e.edit), (ErrorKind::Ambiguous, Some((2, 2))));
    assert!(
        e.to_string().contains("not certainly the same change"),
        "{e}"
    );
}

#[test]
fn an_alike_edit_somewhere_else_is_a_further_change() {
    let out = ok(
        "b\nq\nb \n",
        &[Edit::new("b\n", "b\nX\n"), Edit::new("b \n", "b \nX\n")],
    );
    assert_eq!(out.text, "b\nX\nq\nb \nX\n");
}

// ---------------------------------------------------------------- BOM

#[test]
fn a_byte_order_mark_in_old_or_new_is_the_files_own() {
    let text = "\u{feff}first\nsecond\n";
    for (old, new) in [
        ("\u{feff}first\n", "\u{feff}FIRST\n"),
        ("first\n", "\u{feff}FIRST\n"),
        ("\u{feff}first\n", "FIRST\n"),
    ] {
        let out = ok(text, &[Edit::new(old, new)]);
        assert_eq!(out.text, "\u{feff}FIRST\nsecond\n", "{old:?} -> {new:?}");
    }
    // A file without one: old's mark matches nothing, new's mirrors it.
    let out = ok(
        "first\n",
        &[Edit::new("\u{feff}first\n", "\u{feff}FIRST\n")],
    );
    assert_eq!(out.text, "FIRST\n");
    let e = err(text, &[Edit::new("\u{feff}first", "first")]);
    assert_eq!(e.kind, ErrorKind::NoChange);
    assert!(e.to_string().contains("byte order mark"), "{e}");
}

// ---------------------------------------------------------------- typography

#[test]
fn new_takes_the_files_quotes_where_old_matched_by_folding_them() {
    let out = ok(
        "say(\"hi\")\nx = 1\n",
        &[Edit::new(
            "say(\u{201c}hi\u{201d})\n",
            "say(\u{201c}bye\u{201d})\n",
        )],
    );
    assert_eq!(out.text, "say(\"bye\")\nx = 1\n");
    assert!(
        out.notes[0].contains("typographic characters were written as the file writes them"),
        "{:?}",
        out.notes
    );
    // The reverse: the file's curly quotes, the model's straight ones.
    let out = ok(
        "msg = \u{201c}hello\u{201d}\n",
        &[Edit::new("msg = \"hello\"\n", "msg = \"goodbye\"\n")],
    );
    assert_eq!(out.text, "msg = \u{201c}goodbye\u{201d}\n");
    // An en dash for a minus, inside a line.
    let out = ok("y = a - b\n", &[Edit::new("a \u{2013} b", "a \u{2013} c")]);
    assert_eq!(out.text, "y = a - c\n");
}

#[test]
fn a_typographic_character_new_brings_in_that_cannot_be_placed_refuses() {
    // old's hyphen stood for the file's em dash; new's second hyphen may
    // mean either.
    let e = err(
        "break\u{2014}here\n",
        &[Edit::new("break-here\n", "break--here\n")],
    );
    assert_eq!(e.kind, ErrorKind::Ambiguous);
    assert!(e.to_string().contains("cannot be told"), "{e}");
}

// ---------------------------------------------------------------- line numbers

#[test]
fn numbered_old_with_new_that_only_looks_numbered() {
    // A dict's keys.
    let out = ok(
        "d = {\n    1: 'one',\n}\n",
        &[Edit::new(
            "1:d = {\n2:    1: 'one',\n3:}\n",
            "d = {\n    1: 'one',\n    2: 'two',\n}\n",
        )],
    );
    assert_eq!(out.text, "d = {\n    1: 'one',\n    2: 'two',\n}\n");
    assert!(
        out.notes[0].contains("line numbers copied"),
        "{:?}",
        out.notes
    );
    // A TSV's first column.
    let out = ok(
        "a\tb\n1\tx\n2\ty\n",
        &[Edit::new(
            "     2\t1\tx\n     3\t2\ty\n",
            "1\tx\n2\ty\n3\tz\n",
        )],
    );
    assert_eq!(out.text, "a\tb\n1\tx\n2\ty\n3\tz\n");
    // A time.
    let out = ok(
        "times:\n  - 10:30\n  - 11:00\n",
        &[Edit::new(
            "1:times:\n2:  - 10:30\n",
            "times:\n12:00\n  - 10:30\n",
        )],
    );
    assert_eq!(out.text, "times:\n12:00\n  - 10:30\n  - 11:00\n");
}

#[test]
fn every_copied_number_form_is_taken_off() {
    let text: String = (1..20).map(|k| format!("line {k}\n")).collect();
    let want = text.replace("line 6\n", "line 66\n");
    for (old, new) in [
        (
            "     5→line 5\n     6→line 6\n",
            "     5→line 5\n     6→line 66\n",
        ),
        ("5|line 5\n6|line 6\n", "5|line 5\n6|line 66\n"),
        ("  5 | line 5\n  6 | line 6\n", "line 5\nline 66\n"),
        ("5:line 5\n6:line 6\n", "5:line 5\n6:line 66\n"),
        (
            "line 5\n     6\tline 6\n     7\tline 7\n",
            "line 5\n     6\tline 66\n     7\tline 7\n",
        ),
    ] {
        let out = ok(&text, &[Edit::new(old, new)]);
        assert_eq!(out.text, want, "{old:?}");
    }
}

#[test]
fn numbered_old_that_matches_nowhere_is_shown_the_lines_without_numbers() {
    let text: String = (1..20).map(|k| format!("line {k}\n")).collect();
    for old in [
        "     5\tline 5\n     7\tline 7\n",
        "line 5\n     6\tline 6x\n     7\tline 7\n",
        "     5→line 5\n     6→line 6x\n",
        // A line in the middle lost its number: still shown without any.
        "     5\tline 5\nline 6x\n     7\tline 7\n",
    ] {
        let msg = err(&text, &[Edit::new(old, "x\n")]).to_string();
        let hint = msg.split_once('\n').map_or("", |(_, h)| h);
        assert!(
            hint.lines()
                .all(|l| !l.trim_start().starts_with(|c: char| c.is_ascii_digit())),
            "{msg}"
        );
        assert!(hint.contains("without numbers"), "{msg}");
    }
    let msg = err(
        &text,
        &[Edit::new("     5\tline 5\n     7\tline 7\n", "x\n")],
    )
    .to_string();
    assert!(msg.contains("skip from 5 to 7"), "{msg}");
}

#[test]
fn a_new_line_that_may_or_may_not_carry_a_number_refuses() {
    let e = err("a\nb\nc\n", &[Edit::new("5:a\n6:b\n", "a\n6:x\n")]);
    assert_eq!(e.kind, ErrorKind::Ambiguous);
    assert!(e.to_string().contains("`6:x`"), "{e}");
}
