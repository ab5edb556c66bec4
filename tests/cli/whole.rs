//! `nib apply --format whole-file`: whole files, refused when they leave
//! content out.

use crate::support::{Ws, nib};

fn apply(ws: &Ws, reply: &str) -> crate::support::Run {
    nib(
        &["apply", "--format", "whole-file", "--json", "-"],
        ws.root(),
        Some(reply),
    )
}

fn long_file() -> String {
    (0..40).map(|i| format!("line {i}\r\n")).collect()
}

#[test]
fn a_whole_file_replaces_and_keeps_crlf() {
    let ws = Ws::new();
    ws.write("notes.txt", long_file());
    let mut new: String = (0..40).map(|i| format!("line {i}\n")).collect();
    new = new.replace("line 7\n", "line seven\n");
    let run = apply(&ws, &format!("notes.txt\n```\n{new}```\n"));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.statuses(), ["applied"]);
    assert_eq!(
        ws.read_str("notes.txt"),
        long_file().replace("line 7\r\n", "line seven\r\n")
    );
}

#[test]
fn an_elided_reply_writes_nothing() {
    let ws = Ws::new();
    ws.write("notes.txt", long_file());
    let reply = "notes.txt\n```\nline 0\n// ... rest of the file unchanged ...\n```\n";
    let run = apply(&ws, reply);
    assert_eq!(run.code, 1, "{run:?}");
    let report = &run.reports()[0];
    assert!(
        report["message"]
            .as_str()
            .unwrap_or("")
            .contains("left out"),
        "{report}"
    );
    assert_eq!(ws.read_str("notes.txt"), long_file());
    let short = "notes.txt\n```\nline 0\nline 1\n```\n";
    let run = apply(&ws, short);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(ws.read_str("notes.txt"), long_file());
}

#[test]
fn a_new_file_is_created_and_a_cut_reply_refused() {
    let ws = Ws::new();
    let run = apply(&ws, "src/new.py\n```python\nprint('hi')\n```\n");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("src/new.py"), "print('hi')\n");
    let run = apply(&ws, "src/other.py\n```python\nprint('cut\n");
    assert_eq!(run.code, 1, "{run:?}");
    assert!(!ws.path("src/other.py").exists());
}
