//! The fs-edit rules of the third round: an exact old writes new as sent
//! (aligned continuation lines, comment stars, a line sent without its
//! indentation); a tolerant match moves lines by the difference and keeps
//! alignment spaces; folded characters keep the file's bytes on a changed
//! line; rarer invisible characters fold; a CRLF copy is not a second exact
//! match; old-style tab+space Python; `{:>5}  ` line-number gutters.

use nib::edit::{Edit, ErrorKind, Level, Outcome};

use crate::{err, ok};

fn level(out: &nib::edit::Applied) -> Level {
    match out.outcomes[0] {
        Outcome::Applied { level, .. } => level,
        ref other => panic!("not applied: {other:?}"),
    }
}

#[test]
fn an_exact_continuation_under_its_parenthesis_is_written_as_sent() {
    // PEP 8 style: the argument aligned under the open parenthesis, 19
    // spaces in a 4-space file.
    let text = "int f(void) {\n    err = deflate(&c_stream,\n                  Z_NO_FLUSH);\n    return err;\n}\n";
    let old = "    err = deflate(&c_stream,\n                  Z_NO_FLUSH);\n";
    let new = "    err = deflate(&c_stream,\n                  Z_FINISH);\n    CHECK_ERR(err, \"deflate\");\n";
    let out = ok(text, &[Edit::new(old, new)]);
    assert_eq!(out.text, text.replacen(old, new, 1));
    assert_eq!(level(&out), Level::Exact);
    // old starting inside the indentation of the aligned line, too.
    let out = ok(text, &[Edit::new("Z_NO_FLUSH);", "Z_FINISH);")]);
    assert_eq!(out.text, text.replacen("Z_NO_FLUSH", "Z_FINISH", 1));
}

#[test]
fn an_exact_comment_star_line_is_written_as_sent() {
    let text = "/**\n * Compress.\n * Returns 0.\n */\nint z;\n";
    let old = " * Returns 0.\n";
    let new = " * Returns 0 on success,\n *         -1 on error.\n";
    let out = ok(text, &[Edit::new(old, new)]);
    assert_eq!(out.text, text.replacen(old, new, 1));
    assert!(out.notes.is_empty(), "{:?}", out.notes);
}

#[test]
fn an_exact_old_without_its_indentation_writes_new_as_sent() {
    // The literal contract: old occurs once, byte for byte, so new is
    // written as sent, without re-indentation and without a refusal.
    let text = "def f():\n    if x:\n        y()\n";
    let out = ok(text, &[Edit::new("if x:\n", "if x:\n    z()\n")]);
    assert_eq!(out.text, "def f():\n    if x:\n    z()\n        y()\n");
    assert_eq!(level(&out), Level::Exact);
    // A tab in a file of spaces, exact: as sent too.
    let text = "a:\n    b\n";
    let out = ok(text, &[Edit::new("a:\n", "a:\n\tc\n")]);
    assert_eq!(out.text, "a:\n\tc\n    b\n");
}

#[test]
fn a_tolerant_match_moves_continuations_by_the_difference() {
    // The model dedented the whole block by 4; the continuation keeps its
    // 14 spaces of alignment under the parenthesis: 4 + 14 in the file.
    let text = "class A:\n    def f(self):\n        return g(a,\n                 b)\n";
    let old = "def f(self):\n    return g(a,\n             b)\n";
    let new = "def f(self):\n    return g(a,\n             b,\n             c)\n";
    let out = ok(text, &[Edit::new(old, new)]);
    assert_eq!(
        out.text,
        "class A:\n    def f(self):\n        return g(a,\n                 b,\n                 c)\n"
    );
    assert_eq!(level(&out), Level::Indentation);
}

#[test]
fn a_tab_line_with_alignment_spaces_keeps_them() {
    // A Go-like file: a tab, then spaces aligning under the call. The model
    // wrote the tab as 4 spaces; the added continuation keeps its spaces.
    let text = "func f() {\n\tx := call(a,\n\t          b)\n}\n";
    let old = "    x := call(a,\n              b)\n";
    let new = "    x := call(a,\n              b,\n              c)\n";
    let out = ok(text, &[Edit::new(old, new)]);
    assert_eq!(
        out.text,
        "func f() {\n\tx := call(a,\n\t          b,\n\t          c)\n}\n"
    );
}

#[test]
fn a_folded_accent_on_a_changed_line_keeps_the_files_bytes() {
    // The file writes the accent decomposed; the model composed it. The
    // changed line keeps the file's `e` + U+0301 where new keeps old's.
    let text = "name = \"cafe\u{301}\"  # shop\nx = 1\n";
    let old = "name = \"caf\u{e9}\"  # shop\n";
    let new = "name = \"caf\u{e9}\"  # the shop\n";
    let out = ok(text, &[Edit::new(old, new)]);
    assert_eq!(out.text, "name = \"cafe\u{301}\"  # the shop\nx = 1\n");
}

#[test]
fn a_dropped_invisible_character_on_a_changed_line_comes_back() {
    for (file_word, model_word) in [
        ("\u{2764}\u{fe0f}", "\u{2764}"),     // VS16
        ("mi\u{200c}xed", "mixed"),           // ZWNJ
        ("\u{2066}abc\u{2069}", "abc"),       // bidi isolates
        ("soft\u{ad}hyphen", "softhyphen"),   // soft hyphen
        ("word\u{2060}joined", "wordjoined"), // word joiner
        ("a\u{34f}b", "ab"),                  // CGJ
        ("x\u{61c}y", "xy"),                  // ALM
        ("\u{1820}\u{180b}", "\u{1820}"),     // Mongolian FVS1
        ("\u{845b}\u{e0100}", "\u{845b}"),    // IVS
        ("flag\u{e0067}\u{e007f}", "flag"),   // tag characters
        ("r\u{202e}lo\u{202c}", "rlo"),       // RLO, PDF
    ] {
        let text = format!("label = \"{file_word}\"  # one\nrest = 2\n");
        let old = format!("label = \"{model_word}\"  # one\n");
        let new = format!("label = \"{model_word}\"  # two\n");
        let out = ok(&text, &[Edit::new(old, new)]);
        assert_eq!(
            out.text,
            format!("label = \"{file_word}\"  # two\nrest = 2\n"),
            "{file_word:?}"
        );
    }
}

#[test]
fn the_hangul_filler_folds_as_invisible() {
    let text = "s = \"a\u{3164}b\"\n";
    let out = ok(text, &[Edit::new("s = \"ab\"\n", "s = \"ab\"  # k\n")]);
    assert_eq!(out.text, "s = \"a\u{3164}b\"  # k\n");
}

#[test]
fn a_crlf_copy_is_not_a_second_exact_match() {
    // The same two lines once with LF and once with CRLF: old sent with LF
    // matches the LF block byte for byte.
    let text = "a\nb\n--\r\na\r\nb\r\n";
    let out = ok(text, &[Edit::new("a\nb\n", "a\nB\n")]);
    // (The changed line takes the file's usual ending, CRLF here.)
    assert_eq!(out.text, "a\nB\r\n--\r\na\r\nb\r\n");
    assert!(
        out.notes.iter().any(|n| n.contains("line endings")),
        "{:?}",
        out.notes
    );
    // Sent with CRLF, it is the CRLF copy.
    let out = ok(text, &[Edit::new("a\r\nb\r\n", "a\r\nB\r\n")]);
    assert_eq!(out.text, "a\nb\n--\r\na\r\nB\r\n");
    // Two copies with the same endings stay ambiguous.
    let e = err("a\nb\na\nb\n", &[Edit::new("a\nb\n", "a\nB\n")]);
    assert_eq!(e.kind, ErrorKind::Ambiguous);
}

#[test]
fn old_style_tab_and_spaces_python_maps_back() {
    // A tab for each 8 columns, then spaces: 4 is 4 spaces, 8 a tab, 12 a
    // tab and 4 spaces. The model sends spaces.
    let text = "def f():\n    if a:\n\tif b:\n\t    go()\n\telse:\n\t    stop()\n";
    let old = "    if a:\n        if b:\n            go()\n";
    let new = "    if a:\n        if b:\n            go()\n            again()\n";
    let out = ok(text, &[Edit::new(old, new)]);
    assert_eq!(
        out.text,
        "def f():\n    if a:\n\tif b:\n\t    go()\n\t    again()\n\telse:\n\t    stop()\n"
    );
}

#[test]
fn a_two_space_gutter_of_line_numbers_is_taken_off() {
    let text = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
    let old = "    2      let x = 1;\n    3      println!(\"{x}\");\n";
    let new = "    let x = 2;\n    println!(\"{x}\");\n";
    let out = ok(text, &[Edit::new(old, new)]);
    assert_eq!(
        out.text,
        "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n"
    );
    assert!(out.notes.iter().any(|n| n.contains("line numbers")));
}
