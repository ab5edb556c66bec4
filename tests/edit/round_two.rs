//! The fs-edit rules of the second round: what a call does with edits a
//! model repeats or makes stale, with lines it does not change in a file of
//! mixed endings, with old-Mac files, with line numbers copied from fs-read,
//! with invisible characters and with a different indent unit.

use nib::edit::{Edit, ErrorKind, Level, Outcome, apply};

use crate::{err, ok};

#[test]
fn context_lines_keep_their_own_ending() {
    // old's first and last lines are context: they keep LF in a CRLF file.
    let text = "a\r\nb\nc\r\nd\n";
    let out = ok(text, &[Edit::new("b\nc\nd\n", "b\nC\nd\n")]);
    assert_eq!(out.text, "a\r\nb\nC\r\nd\n");
    // A tolerant match too: only the changed line takes the usual ending.
    let text = "x\r\n  one\n  two\r\n  three\n";
    let out = ok(text, &[Edit::new("one\ntwo\nthree\n", "one\n2\nthree\n")]);
    assert_eq!(out.text, "x\r\n  one\n  2\r\n  three\n");
    assert!(matches!(
        out.outcomes[0],
        Outcome::Applied {
            level: Level::Indentation,
            ..
        }
    ));
}

#[test]
fn the_same_edit_twice_is_applied_once() {
    // An insertion whose new contains its old.
    let text = "fn f() {\n    run();\n}\n";
    let ins = Edit::new("    run();\n", "    run();\n    log();\n");
    let out = ok(text, &[ins.clone(), ins.clone()]);
    assert_eq!(out.text, "fn f() {\n    run();\n    log();\n}\n");
    assert_eq!(out.outcomes[1], Outcome::Duplicate { of: 1 });
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("edit 2 is the same as edit 1"))
    );
    // A replacement sent twice no longer loses the first.
    let rep = Edit::new("run();", "go();");
    let out = ok(
        text,
        &[rep.clone(), Edit::new("}\n", "}\n// end\n"), rep.clone()],
    );
    assert_eq!(out.text, "fn f() {\n    go();\n}\n// end\n");
    assert_eq!(out.outcomes[2], Outcome::Duplicate { of: 1 });
    // Only applied copies count toward the record.
    assert_eq!(
        out.made(&[rep.clone(), Edit::new("}\n", "}\n// end\n"), rep])
            .len(),
        2
    );
}

#[test]
fn a_stale_edit_names_the_edit_that_changed_it() {
    let text = "a = 1\nb = 2\nc = 3\nd = 4\n";
    let e = err(
        text,
        &[
            Edit::new("b = 2\nc = 3\n", "b = 20\nc = 30\n"),
            Edit::new("c = 3\nd = 4\n", "c = 3\nd = 40\n"),
        ],
    );
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert_eq!(e.edit, Some((2, 2)));
    let msg = e.to_string();
    assert!(
        msg.contains("edit 2's old text was changed by edit 1"),
        "{msg}"
    );
    assert!(msg.contains("lines 3-4 of the file as read"), "{msg}");
    assert!(msg.contains("     3\tc = 30"), "{msg}");
}

#[test]
fn old_mac_files_keep_their_cr() {
    let text = "one\rtwo\rthree\r";
    let out = ok(text, &[Edit::new("two\n", "2\nand more\n")]);
    assert_eq!(out.text, "one\r2\rand more\rthree\r");
    // old written with CR works the same.
    let out = ok(text, &[Edit::new("one\rtwo\r", "uno\rtwo\r")]);
    assert_eq!(out.text, "uno\rtwo\rthree\r");
    // In a file without lone CRs a CR is an ordinary character.
    let out = ok(
        "a\rb\n",
        &[Edit::new("x", "y")].map(|_| Edit::new("b", "c\rd")),
    );
    assert_eq!(out.text, "a\rc\rd\n");
}

#[test]
fn read_format_line_numbers_are_stripped_when_that_matches_once() {
    let text = "fn a() {\n    let x = 1;\n    x\n}\n";
    let old = "     2\t    let x = 1;\n     3\t    x\n";
    let new = "     2\t    let x = 2;\n     3\t    x\n";
    let out = ok(text, &[Edit::new(old, new)]);
    assert_eq!(out.text, "fn a() {\n    let x = 2;\n    x\n}\n");
    assert!(
        out.notes[0].contains("line numbers copied from a tool's output"),
        "{:?}",
        out.notes
    );
    // grep-style numbers, new without them.
    let out = ok(
        text,
        &[Edit::new(
            "1:fn a() {\n2:    let x = 1;\n",
            "fn b() {\n    let x = 1;\n",
        )],
    );
    assert_eq!(out.text, "fn b() {\n    let x = 1;\n    x\n}\n");
    // When stripping finds nothing the hint shows the lines without numbers.
    let e = err(text, &[Edit::new("     2\t    let y = 1;\n", "z\n")]);
    let msg = e.to_string();
    assert!(msg.contains("without numbers"), "{msg}");
    assert!(!msg.contains("\t    let x = 1;"), "{msg}");
}

#[test]
fn invisible_characters_match_and_are_named() {
    let text = "let name = \"a\u{200d}b\";\nlet n\u{00ad}ext = 2;\n";
    let out = ok(
        text,
        &[Edit::new(
            "let name = \"ab\";\nlet next = 2;\n",
            "let name = \"ab\";\nlet next = 3;\n",
        )],
    );
    // The changed line keeps the file's soft hyphen where new keeps old's
    // characters (round three).
    assert_eq!(
        out.text,
        "let name = \"a\u{200d}b\";\nlet n\u{00ad}ext = 3;\n"
    );
    assert!(
        out.notes[0].contains("invisible characters"),
        "{:?}",
        out.notes
    );
    let e = err(
        text,
        &[Edit::new("let name = \"ab\";\nlet next = 9;\n", "x\n")],
    );
    let msg = e.to_string();
    assert!(msg.contains("zero-width joiner (U+200D)"), "{msg}");
}

#[test]
fn two_spaces_per_tab_at_one_depth() {
    let text = "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n";
    let out = ok(
        text,
        &[Edit::new(
            "    y()\n    z()\n",
            "    y()\n    w()\n    z()\n",
        )],
    );
    assert_eq!(
        out.text,
        "func f() {\n\tif x {\n\t\ty()\n\t\tw()\n\t\tz()\n\t}\n}\n"
    );
}

/// Runs of equal lines: found in linear time, and refused as ambiguous or
/// applied where unique. (Speed is in `benches/apply.rs`.)
#[test]
fn runs_of_equal_lines() {
    let text = "x\n".repeat(20_000);
    let e = err(&text, &[Edit::new("x\n".repeat(10_000), "y\n")]);
    assert_eq!(e.kind, ErrorKind::Ambiguous);
    let text = format!("{}end\n", "x\n".repeat(20_000));
    let old = format!("{}end\n", "x\n".repeat(10_000));
    let out = ok(&text, &[Edit::new(old, "end\n")]);
    assert_eq!(out.text, format!("{}end\n", "x\n".repeat(10_000)));
    // A tolerant old of equal lines.
    let text = format!("{}end\n", "  x\n".repeat(20_000));
    let e = err(&text, &[Edit::new("x\n".repeat(10_000), "y\n")]);
    assert_eq!(e.kind, ErrorKind::Ambiguous);
}

/// A resent insertion applied at a tolerant level: its old still matches
/// loosely, but the record says it was made, so it is skipped.
#[test]
fn a_resent_tolerant_insertion_is_not_applied_twice() {
    let text = "fn f() {\n        a();\n        b();\n}\n";
    let e = Edit::new("a();\nb();\n", "a();\nprobe();\nb();\n");
    let first = ok(text, std::slice::from_ref(&e));
    assert_eq!(
        first.text,
        "fn f() {\n        a();\n        probe();\n        b();\n}\n"
    );
    let again = apply(
        &first.text,
        std::slice::from_ref(&e),
        &first.made(std::slice::from_ref(&e)),
    )
    .unwrap();
    assert_eq!(again.outcomes, [Outcome::AlreadyApplied]);
    assert_eq!(again.text, first.text);
}
