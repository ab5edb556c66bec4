//! Files not in UTF-8 through `Host`, as a model's calls run: fs-read
//! says the encoding it assumed and shows the characters; fs-edit,
//! fs-write and `apply-text` write back in that encoding, every other byte
//! kept; a character the encoding cannot hold is refused before the
//! confirm, the file untouched.

use std::fs;

use nib::prim::{Host, TextFormat};
use serde_json::json;

use crate::workspace;

const LATIN1: &[u8] = b"# caf\xe9\nplain line\nna\xefve \xa9\n";

fn host_with(rel: &str, bytes: &[u8]) -> (tempfile::TempDir, Host, std::path::PathBuf) {
    let (dir, ws) = workspace();
    let path = ws.root().join(rel);
    fs::write(&path, bytes).expect("write");
    (dir, Host::unattended(ws, true), path)
}

fn run(host: &Host, name: &str, args: serde_json::Value) -> nib::prim::ToolResult {
    host.run_json(name, &args.to_string()).1
}

#[test]
fn fs_read_says_the_encoding_and_shows_the_characters() {
    let (_d, host, _) = host_with("l.txt", LATIN1);
    let r = run(&host, "fs-read", json!({"path": "l.txt"}));
    assert!(r.ok, "{r:?}");
    assert_eq!(
        r.text,
        "(l.txt: not UTF-8: read as Latin-1 (ISO-8859-1), and written back in it, every other \
         byte kept)\n     1\t# café\n     2\tplain line\n     3\tnaïve ©\n"
    );
    let (_d, host, _) = host_with("w.txt", b"\x93hi\x94\n");
    let r = run(&host, "fs-read", json!({"path": "w.txt"}));
    assert!(r.text.contains("read as Windows-1252"), "{}", r.text);
    assert!(r.text.contains("\u{201c}hi\u{201d}"), "{}", r.text);
    let mut stray = "é\n".as_bytes().to_vec();
    stray.extend_from_slice(b"x\xffy\n");
    let (_d, host, _) = host_with("s.txt", &stray);
    let r = run(&host, "fs-read", json!({"path": "s.txt"}));
    assert!(
        r.text.starts_with(
            "(s.txt: read as UTF-8, with 1 stray byte that UTF-8 cannot read (the first on line 2)"
        ),
        "{}",
        r.text
    );
    let (_d, host, _) = host_with("b.bin", b"ab\0cd");
    let r = run(&host, "fs-read", json!({"path": "b.bin"}));
    assert!(
        !r.ok && r.text.contains("b.bin looks binary (NUL byte at offset 2)"),
        "{}",
        r.text
    );
}

#[test]
fn fs_edit_writes_back_in_the_file_encoding() {
    let (_d, host, path) = host_with("l.txt", LATIN1);
    let r = run(
        &host,
        "fs-edit",
        json!({"path": "l.txt", "old": "# café", "new": "# café au lait"}),
    );
    assert!(r.ok, "{r:?}");
    assert!(r.text.contains("read and written as Latin-1"), "{}", r.text);
    assert!(r.diff.contains("+# café au lait"), "{}", r.diff);
    assert_eq!(
        fs::read(&path).expect("read"),
        b"# caf\xe9 au lait\nplain line\nna\xefve \xa9\n"
    );
    // Not representable: refused, nothing written, nobody asked.
    let r = run(
        &host,
        "fs-edit",
        json!({"path": "l.txt", "old": "plain line", "new": "plain \u{2713}"}),
    );
    assert!(!r.ok, "{r:?}");
    assert!(
        r.text.contains("U+2713") && r.text.contains("convert the file to UTF-8"),
        "{}",
        r.text
    );
    assert_eq!(
        fs::read(&path).expect("read"),
        b"# caf\xe9 au lait\nplain line\nna\xefve \xa9\n"
    );
}

#[test]
fn fs_write_over_a_latin1_file_keeps_its_encoding() {
    let (_d, host, path) = host_with("l.txt", LATIN1);
    run(&host, "fs-read", json!({"path": "l.txt"}));
    let r = run(
        &host,
        "fs-write",
        json!({"path": "l.txt", "content": "d\u{e9}j\u{e0}\n"}),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(fs::read(&path).expect("read"), b"d\xe9j\xe0\n");
    // What the session wrote counts as read: a second write needs no read.
    let r = run(
        &host,
        "fs-write",
        json!({"path": "l.txt", "content": "\u{2603}\n"}),
    );
    assert!(!r.ok && r.text.contains("U+2603"), "{}", r.text);
    let r = run(
        &host,
        "fs-write",
        json!({"path": "l.txt", "content": "ok\n"}),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(fs::read(&path).expect("read"), b"ok\n");
}

#[test]
fn apply_text_writes_a_windows_1252_file_back_in_it() {
    let before: &[u8] = b"a = \x93x\x94\nb = 1\n";
    let (_d, host, path) = host_with("w.py", before);
    let text =
        "w.py\n```\n<<<<<<< SEARCH\nb = 1\n=======\nb = \u{2018}2\u{2019}\n>>>>>>> REPLACE\n```\n";
    let results = host.apply_text(TextFormat::SearchReplace, text);
    assert!(results[0].ok, "{results:?}");
    assert_eq!(
        fs::read(&path).expect("read"),
        b"a = \x93x\x94\nb = \x912\x92\n"
    );
    let text = "w.py\n```\n<<<<<<< SEARCH\nb = \u{2018}2\u{2019}\n=======\nb = \u{3b1}\n>>>>>>> REPLACE\n```\n";
    let results = host.apply_text(TextFormat::SearchReplace, text);
    assert!(!results[0].ok, "{results:?}");
    assert_eq!(results[0].kind, Some("unrepresentable"), "{results:?}");
    assert_eq!(
        fs::read(&path).expect("read"),
        b"a = \x93x\x94\nb = \x912\x92\n"
    );
}

#[test]
fn a_latin1_change_made_during_the_confirm_is_kept() {
    // The stale-write check compares bytes: a Latin-1 line someone
    // appends while the confirm is open is kept, and the edit planned
    // again on the file as it is now.
    let (_d, ws) = workspace();
    let path = ws.root().join("l.txt");
    fs::write(&path, LATIN1).expect("write");
    let outside = path.clone();
    let asked = std::sync::Arc::new(std::sync::Mutex::new(0));
    let count = std::sync::Arc::clone(&asked);
    let host = Host::new(ws, move |_req| {
        let mut n = count.lock().expect("lock");
        if *n == 0 {
            use std::io::Write;
            let mut f = fs::OpenOptions::new()
                .append(true)
                .open(&outside)
                .expect("open");
            f.write_all(b"theirs \xe0 \xe9\n").expect("append");
        }
        *n += 1;
        true
    });
    let r = run(
        &host,
        "fs-edit",
        json!({"path": "l.txt", "old": "plain line", "new": "ours \u{e8}"}),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(*asked.lock().expect("lock"), 2, "confirmed again");
    assert_eq!(
        fs::read(&path).expect("read"),
        b"# caf\xe9\nours \xe8\nna\xefve \xa9\ntheirs \xe0 \xe9\n"
    );
}

#[test]
fn an_old_with_a_replacement_character_is_told_how_stray_bytes_show() {
    let mut bytes = "é\n".as_bytes().to_vec();
    bytes.extend_from_slice(b"x = \"\xff\"\n");
    let (_d, host, path) = host_with("s.py", &bytes);
    let r = run(
        &host,
        "fs-edit",
        json!({"path": "s.py", "old": "x = \"\u{fffd}\"", "new": "x = 1"}),
    );
    assert!(!r.ok, "{r:?}");
    assert!(r.text.contains("never as U+FFFD"), "{}", r.text);
    assert_eq!(fs::read(&path).expect("read"), bytes);
    // Copied as fs-read shows it, the line is edited.
    let r = run(
        &host,
        "fs-edit",
        json!({"path": "s.py", "old": "x = \"\u{10ffff}\"", "new": "x = \"\u{10ffff}\u{10ffff}\""}),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(
        fs::read(&path).expect("read"),
        "é\nx = \""
            .bytes()
            .chain(*b"\xff\xff\"\n")
            .collect::<Vec<u8>>()
    );
}
