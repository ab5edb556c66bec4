//! Text formats survive an edit: CRLF, BOM, a missing final newline, mixed
//! line endings.

use crate::support::{Ws, call};

fn apply_ok(ws: &Ws, input: &str) {
    let run = ws.apply(input, &[]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn crlf_file_stays_crlf() {
    let ws = Ws::new();
    ws.write("w.txt", "one\r\ntwo\r\nthree\r\nfour\r\n");
    // The call uses LF; inserted lines take the file's CRLF.
    apply_ok(&ws, &call("w.txt", "two\nthree", "2\n3\n3.5"));
    assert_eq!(ws.read("w.txt"), b"one\r\n2\r\n3\r\n3.5\r\nfour\r\n");
}

#[test]
fn crlf_in_the_call_matches_an_lf_file_and_stays_lf() {
    let ws = Ws::new();
    ws.write("u.txt", "one\ntwo\nthree\n");
    apply_ok(&ws, &call("u.txt", "one\r\ntwo", "ONE\r\nTWO"));
    assert_eq!(ws.read("u.txt"), b"ONE\nTWO\nthree\n");
}

#[test]
fn bom_is_kept() {
    let ws = Ws::new();
    ws.write("b.txt", "\u{feff}first\nsecond\n");
    // The edit touches the line the BOM sits on.
    apply_ok(&ws, &call("b.txt", "first", "FIRST"));
    assert_eq!(ws.read("b.txt"), "\u{feff}FIRST\nsecond\n".as_bytes());
}

#[test]
fn missing_final_newline_stays_missing() {
    let ws = Ws::new();
    ws.write("n.txt", "a\nb\nlast");
    apply_ok(&ws, &call("n.txt", "last", "LAST"));
    assert_eq!(ws.read("n.txt"), b"a\nb\nLAST");
    // old sent with a newline the file's last line lacks.
    apply_ok(&ws, &call("n.txt", "b\nLAST\n", "b\nfinal\n"));
    assert_eq!(ws.read("n.txt"), b"a\nb\nfinal");
    // Lines added at the end: still no final newline.
    apply_ok(&ws, &call("n.txt", "final", "final\nmore"));
    assert_eq!(ws.read("n.txt"), b"a\nb\nfinal\nmore");
}

#[test]
fn present_final_newline_stays_present() {
    let ws = Ws::new();
    ws.write("n.txt", "a\nlast\n");
    apply_ok(&ws, &call("n.txt", "last", "LAST"));
    assert_eq!(ws.read("n.txt"), b"a\nLAST\n");
}

#[test]
fn bom_crlf_and_no_final_newline_together() {
    let ws = Ws::new();
    ws.write("all.txt", "\u{feff}x\r\ny\r\nz");
    apply_ok(&ws, &call("all.txt", "y\nz", "Y\nZ\nW"));
    assert_eq!(ws.read("all.txt"), "\u{feff}x\r\nY\r\nZ\r\nW".as_bytes());
}

#[test]
fn mixed_endings_keep_each_untouched_line() {
    let ws = Ws::new();
    ws.write("m.txt", "a\r\nb\nc\r\nd\ne\r\n");
    // A change inside one line keeps that line's ending too.
    apply_ok(&ws, &call("m.txt", "b", "B"));
    assert_eq!(ws.read("m.txt"), b"a\r\nB\nc\r\nd\ne\r\n");
    apply_ok(&ws, &call("m.txt", "d", "D"));
    assert_eq!(ws.read("m.txt"), b"a\r\nB\nc\r\nD\ne\r\n");
    // Replacing whole lines: the untouched ones around them keep theirs.
    apply_ok(&ws, &call("m.txt", "B\nc", "bee\nsee\nextra"));
    let bytes = ws.read("m.txt");
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.starts_with("a\r\n"), "{text:?}");
    assert!(text.ends_with("\nD\ne\r\n"), "{text:?}");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    assert_eq!(lines.len(), 6, "{text:?}");
    assert_eq!(lines[0], "a\r\n");
    assert_eq!(lines[1].trim_end(), "bee");
    assert_eq!(lines[2].trim_end(), "see");
    assert_eq!(lines[3].trim_end(), "extra");
    assert_eq!(lines[4], "D\n");
    assert_eq!(lines[5], "e\r\n");
}

#[test]
fn diff_of_a_crlf_file_is_shown_without_carriage_returns() {
    let ws = Ws::new();
    ws.write("w.txt", "one\r\ntwo\r\n");
    let run = ws.apply_json(&call("w.txt", "two", "2"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.reports()[0]["diff"],
        "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    );
}

/// `nib apply` streams a file with CRs from its own buffer, turned LF-only
/// for matching and back for writing: every shape of line endings is
/// written as the engine's one-string result has it (`edit::apply`), the
/// version kept for undo is the file as it was, and undo gives it back.
#[test]
fn crlf_mixed_and_lone_cr_files_are_written_as_the_engine_computes() {
    use nib::edit::{Edit, apply};
    let cases: &[(&str, &[(&str, &str)])] = &[
        // BOM and CRLF; lines inserted, one taken out, the last unended.
        (
            "\u{feff}one\r\ntwo\r\nthree\r\nfour",
            &[("two\n", "2\n2.5\n"), ("three\nfour", "four")],
        ),
        // CRLF usual, a few LF lines: each keeps its own.
        (
            "a\r\nb\nc\r\nd\r\ne\nf\r\n",
            &[("c\n", "C\nC2\n"), ("e", "E")],
        ),
        // Lone CR usual, LF and CRLF among them, empty lines next to them.
        ("x\ry\r\rz\n\r\nw\r", &[("y\n", "Y\n\n"), ("w", "W\nV")]),
        // An empty line ending in LF right after one ending in a lone CR.
        ("a\rb\n\nc\r", &[("b", "B"), ("c\n", "c\nd\n")]),
        // A tolerant edit (indentation) in a CRLF file.
        (
            "fn f() {\r\n    let a = 1;\r\n    let b = 2;\r\n}\r\n",
            &[("  let b = 2;\n", "  let b = 3;\n  let c = 4;\n")],
        ),
    ];
    for (text, edits) in cases {
        let ws = Ws::new();
        ws.write("f.txt", text);
        let list: Vec<(&str, &str, bool)> = edits.iter().map(|&(o, n)| (o, n, false)).collect();
        let run = ws.apply(&crate::support::call_edits("f.txt", &list), &[]);
        assert_eq!(run.code, 0, "{text:?}: {run:?}");
        let edits: Vec<Edit> = edits.iter().map(|&(o, n)| Edit::new(o, n)).collect();
        let want = apply(text, &edits, &[]).unwrap().text;
        assert_eq!(ws.read("f.txt"), want.as_bytes(), "{text:?}");
        assert_eq!(ws.saved_versions(), [text.as_bytes().to_vec()], "{text:?}");
        let undone = ws.undo(&[]);
        assert_eq!(undone.code, 0, "{undone:?}");
        assert_eq!(ws.read("f.txt"), text.as_bytes(), "{text:?}");
    }
}
