//! Files not in UTF-8 (Latin-1, Windows-1252, UTF-8 with stray bytes)
//! through `nib apply`: every byte the edit does not change is kept, the
//! report says which encoding was assumed, a character the encoding cannot
//! hold is refused with what to do, and undo gives the bytes back.

use crate::support::{Ws, call};

const LATIN1: &[u8] = b"# caf\xe9 cr\xe8me\nplain line\nna\xefve \xa9 2024\n";

#[test]
fn a_latin1_file_keeps_every_other_byte() {
    let ws = Ws::new();
    ws.write("l.txt", LATIN1);
    let run = ws.apply_json(&call("l.txt", "plain line", "changed line"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        ws.read("l.txt"),
        b"# caf\xe9 cr\xe8me\nchanged line\nna\xefve \xa9 2024\n"
    );
    let report = &run.reports()[0];
    let notes = report["notes"].to_string();
    assert!(notes.contains("read as Latin-1 (ISO-8859-1)"), "{report}");
    // A line with accents, sent as the model reads it (UTF-8 in the
    // call), is written back in Latin-1.
    let run = ws.apply(&call("l.txt", "# café crème", "# cafés crème brûlée"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        ws.read("l.txt"),
        b"# caf\xe9s cr\xe8me br\xfbl\xe9e\nchanged line\nna\xefve \xa9 2024\n"
    );
}

#[test]
fn a_windows_1252_file_keeps_its_quotes_and_takes_a_dash() {
    let ws = Ws::new();
    let before: &[u8] = b"s = \x93quoted\x94 \x80 5\r\nx = 1\r\n\x85 end\r\n";
    ws.write("w.txt", before);
    let run = ws.apply_json(
        &call("w.txt", "x = 1", "x = 2 \u{2014} \u{2019}ok\u{2019}"),
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        ws.read("w.txt"),
        b"s = \x93quoted\x94 \x80 5\r\nx = 2 \x97 \x92ok\x92\r\n\x85 end\r\n"
    );
    assert!(run.stdout.contains("Windows-1252"), "{run:?}");
    // old with the file's curly quotes, as fs-read shows them.
    let run = ws.apply(&call("w.txt", "s = \u{201c}quoted\u{201d}", "s = 'q'"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        ws.read("w.txt"),
        b"s = 'q' \x80 5\r\nx = 2 \x97 \x92ok\x92\r\n\x85 end\r\n"
    );
}

#[test]
fn a_stray_byte_far_from_the_edit_is_kept() {
    let ws = Ws::new();
    let mut before = "// ünïcödé header\n".as_bytes().to_vec();
    before.extend_from_slice(b"let bad = \"\xff\";\n");
    for i in 0..200 {
        before.extend_from_slice(format!("line {i} — ok\n").as_bytes());
    }
    before.extend_from_slice(b"target();\n");
    ws.write("s.rs", &before);
    let run = ws.apply_json(&call("s.rs", "target();", "target(1);"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let mut expected = before.clone();
    let at = expected.len() - "target();\n".len();
    expected.splice(at.., b"target(1);\n".iter().copied());
    assert_eq!(ws.read("s.rs"), expected);
    let notes = run.reports()[0]["notes"].to_string();
    assert!(notes.contains("1 stray byte"), "{notes}");
    assert!(notes.contains("line 2"), "{notes}");
}

#[test]
fn a_character_latin1_cannot_hold_is_refused_with_what_to_do() {
    let ws = Ws::new();
    ws.write("l.txt", LATIN1);
    let run = ws.apply_json(&call("l.txt", "plain line", "plain \u{2192} line"), &[]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = &run.reports()[0];
    assert_eq!(report["status"], "failed");
    let msg = report["message"].as_str().unwrap();
    assert!(
        msg.contains("l.txt is read as Latin-1 (ISO-8859-1), not UTF-8"),
        "{msg}"
    );
    assert!(msg.contains("U+2192"), "{msg}");
    assert!(msg.contains("iconv -f ISO-8859-1 -t UTF-8"), "{msg}");
    assert!(msg.contains("nothing was written"), "{msg}");
    assert_eq!(ws.read("l.txt"), LATIN1);
    // A dry run says the same.
    let run = ws.apply(&call("l.txt", "plain line", "\u{20ac}"), &["--dry-run"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(ws.read("l.txt"), LATIN1);
}

#[test]
fn files_with_nul_bytes_stay_refused() {
    let ws = Ws::new();
    let utf16: &[u8] = b"\xff\xfeh\0i\0\n\0";
    ws.write("u16.txt", utf16);
    let run = ws.apply_json(&call("u16.txt", "hi", "ho"), &[]);
    assert_eq!(run.code, 1, "{run:?}");
    let msg = run.reports()[0]["message"].to_string();
    assert!(msg.contains("u16.txt is UTF-16"), "{msg}");
    assert!(msg.contains("iconv -f UTF-16 -t UTF-8"), "{msg}");
    assert_eq!(ws.read("u16.txt"), utf16);
    let nul: &[u8] = b"caf\xe9\0x\n";
    ws.write("n.txt", nul);
    let run = ws.apply_json(&call("n.txt", "x", "y"), &[]);
    assert_eq!(run.code, 1, "{run:?}");
    let msg = run.reports()[0]["message"].to_string();
    assert!(
        msg.contains("n.txt looks binary (NUL byte at offset 4)"),
        "{msg}"
    );
    assert_eq!(ws.read("n.txt"), nul);
}

#[test]
fn a_unified_diff_applies_to_a_latin1_file() {
    let ws = Ws::new();
    ws.write("l.txt", LATIN1);
    let diff = "--- a/l.txt\n+++ b/l.txt\n@@ -1,3 +1,3 @@\n # café crème\n-plain line\n+plain line, déjà vu\n naïve © 2024\n";
    let run = ws.apply_json(diff, &["--format", "udiff"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        ws.read("l.txt"),
        b"# caf\xe9 cr\xe8me\nplain line, d\xe9j\xe0 vu\nna\xefve \xa9 2024\n"
    );
    assert!(run.stdout.contains("Latin-1"), "{run:?}");
    // The same with a character Latin-1 cannot hold: refused, kept.
    let diff =
        "--- a/l.txt\n+++ b/l.txt\n@@ -2 +2 @@\n-plain line, déjà vu\n+plain line \u{2014}\n";
    let run = ws.apply_json(diff, &["--format", "udiff"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("U+2014"), "{run:?}");
    assert_eq!(
        ws.read("l.txt"),
        b"# caf\xe9 cr\xe8me\nplain line, d\xe9j\xe0 vu\nna\xefve \xa9 2024\n"
    );
}

#[test]
fn undo_gives_back_the_bytes_exactly() {
    let ws = Ws::new();
    ws.write("l.txt", LATIN1);
    let mut stray = b"a \xc3 b\n".to_vec();
    stray.extend_from_slice("é é\nkeep\n".as_bytes());
    ws.write("s.txt", &stray);
    let input = format!(
        "{}\n{}\n",
        call("l.txt", "plain line", "other"),
        call("s.txt", "keep", "kept")
    );
    assert_eq!(ws.apply(&input, &[]).code, 0);
    assert_ne!(ws.read("l.txt"), LATIN1);
    assert_ne!(ws.read("s.txt"), stray);
    assert_eq!(ws.undo(&[]).code, 0);
    assert_eq!(ws.undo(&[]).code, 0);
    assert_eq!(ws.read("l.txt"), LATIN1);
    assert_eq!(ws.read("s.txt"), stray);
}

#[test]
fn a_v4a_move_and_a_whole_file_keep_the_encoding() {
    let ws = Ws::new();
    ws.write("l.txt", LATIN1);
    ws.write("w.txt", b"\x93a\x94\n");
    // Moved with an edit, over an existing Windows-1252 file: the moved
    // text stays Latin-1; undo puts both files back byte for byte.
    ws.write("dest.txt", b"old \x80\n");
    let patch = "*** Begin Patch\n*** Update File: l.txt\n*** Move to: dest.txt\n@@\n-plain line\n+plain line, d\u{e9}j\u{e0}\n*** End Patch\n";
    let run = ws.apply_json(patch, &["--format", "v4a"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!ws.path("l.txt").exists());
    assert_eq!(
        ws.read("dest.txt"),
        b"# caf\xe9 cr\xe8me\nplain line, d\xe9j\xe0\nna\xefve \xa9 2024\n"
    );
    let run = ws.undo(&[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("l.txt"), LATIN1);
    assert_eq!(ws.read("dest.txt"), b"old \x80\n");
    // A whole file over a Windows-1252 file is written in it.
    let whole = "w.txt\n```\n\u{201c}b\u{201d} \u{2026}\n```\n";
    let run = ws.apply_json(whole, &["--format", "whole-file"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("w.txt"), b"\x93b\x94 \x85\n");
}
