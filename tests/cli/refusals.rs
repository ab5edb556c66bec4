//! Files nib will not edit, each refused with its own message and left
//! alone; and permissions kept on the files it does edit.

use std::fs;

use crate::support::{Ws, call};

/// Applies one call that must fail, and returns its message.
fn refused(ws: &Ws, input: &str) -> String {
    let run = ws.apply_json(input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    let reports = run.reports();
    assert_eq!(reports.len(), 1, "{run:?}");
    assert_eq!(reports[0]["status"], "failed");
    reports[0]["message"].as_str().unwrap().to_string()
}

#[test]
fn read_only_file_is_refused_by_its_mode_bits() {
    let ws = Ws::new();
    ws.write("ro.txt", "keep\n");
    ws.chmod("ro.txt", 0o444);
    // As root, the file system would allow the write; nib must refuse by
    // the mode bits alone.
    let before = ws.snapshot("ro.txt");
    let msg = refused(&ws, &call("ro.txt", "keep", "changed"));
    assert!(msg.contains("ro.txt is read-only"), "{msg}");
    assert!(msg.contains("chmod u+w"), "{msg}");
    assert_eq!(ws.snapshot("ro.txt"), before);
    assert_eq!(ws.mode("ro.txt"), 0o444);
    // Nothing left for undo to "restore".
    let undo = ws.undo(&[]);
    assert_eq!(undo.code, 1, "{undo:?}");
    assert!(undo.stderr.contains("nothing to undo"), "{undo:?}");
    assert_eq!(ws.read_str("ro.txt"), "keep\n");
    // No stray temp files beside it.
    let names: Vec<String> = fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".nib")
        .collect();
    assert_eq!(names, ["ro.txt"]);
}

#[test]
fn binary_file_is_refused() {
    let ws = Ws::new();
    let bytes: &[u8] = b"\x89PNG\r\n\x1a\n\0\0abc";
    ws.write("img.png", bytes);
    let msg = refused(&ws, &call("img.png", "abc", "xyz"));
    assert!(msg.contains("img.png looks binary"), "{msg}");
    assert!(msg.contains("text files only"), "{msg}");
    assert_eq!(ws.read("img.png"), bytes);
}

#[test]
fn missing_file_says_how_to_create_it() {
    let ws = Ws::new();
    let msg = refused(&ws, &call("src/new.rs", "a", "b"));
    assert!(msg.contains("no such file: src/new.rs"), "{msg}");
    // Said to a person: no tool a model calls.
    assert!(msg.contains("--format whole-file"), "{msg}");
    assert!(!msg.contains("fs-write"), "{msg}");
    assert!(!ws.path("src/new.rs").exists());
    assert!(!ws.path("src").exists());
}

#[test]
fn directory_is_refused() {
    let ws = Ws::new();
    fs::create_dir(ws.path("src")).unwrap();
    let msg = refused(&ws, &call("src", "a", "b"));
    assert!(msg.contains("src is a directory"), "{msg}");
}

#[test]
fn empty_old_says_how_to_write_a_whole_file() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let msg = refused(&ws, &call("a.txt", "", "b"));
    assert!(msg.contains("old is empty"), "{msg}");
    assert!(msg.contains("--format whole-file"), "{msg}");
    assert!(!msg.contains("fs-write"), "{msg}");
    assert_eq!(ws.read_str("a.txt"), "a\n");
}

#[test]
fn executable_script_keeps_its_mode() {
    let ws = Ws::new();
    ws.write("run.sh", "#!/bin/sh\necho old\n");
    ws.chmod("run.sh", 0o755);
    let run = ws.apply(&call("run.sh", "echo old", "echo new"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("run.sh"), "#!/bin/sh\necho new\n");
    assert_eq!(ws.mode("run.sh"), 0o755);
}

#[test]
fn private_file_keeps_its_mode() {
    let ws = Ws::new();
    ws.write("secret.txt", "a\n");
    ws.chmod("secret.txt", 0o600);
    let run = ws.apply(&call("secret.txt", "a", "b"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("secret.txt"), "b\n");
    assert_eq!(ws.mode("secret.txt"), 0o600);
}
