//! `nib undo`: walking back nib's writes, refusing to lose the user's.

use std::fs;
use std::os::unix::fs::symlink;

use crate::support::{Ws, call};

/// Two applied calls on a.txt, in two runs: "v0" → "v1" → "v2".
fn two_writes(ws: &Ws) {
    ws.write("a.txt", "line v0\n");
    assert_eq!(ws.apply(&call("a.txt", "v0", "v1"), &[]).code, 0);
    assert_eq!(ws.apply(&call("a.txt", "v1", "v2"), &[]).code, 0);
    assert_eq!(ws.read_str("a.txt"), "line v2\n");
}

#[test]
fn undo_walks_back_one_write_at_a_time() {
    let ws = Ws::new();
    two_writes(&ws);
    let run = ws.undo(&[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("restored a.txt"), "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "line v1\n");
    let run = ws.undo(&[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "line v0\n");
    let run = ws.undo(&[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("nothing to undo"), "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "line v0\n");
}

#[test]
fn two_calls_in_one_run_are_two_undos() {
    let ws = Ws::new();
    ws.write("a.txt", "line v0\n");
    let input = format!(
        "{}\n{}\n",
        call("a.txt", "v0", "v1"),
        call("a.txt", "v1", "v2")
    );
    assert_eq!(ws.apply(&input, &[]).code, 0);
    assert_eq!(ws.undo(&[]).code, 0);
    assert_eq!(ws.read_str("a.txt"), "line v1\n");
    assert_eq!(ws.undo(&[]).code, 0);
    assert_eq!(ws.read_str("a.txt"), "line v0\n");
}

#[test]
fn versions_live_under_dot_nib_and_are_git_ignored() {
    let ws = Ws::new();
    two_writes(&ws);
    assert!(ws.path(".nib/versions").is_dir());
    let ignore = fs::read_to_string(ws.path(".nib/.gitignore")).unwrap();
    assert_eq!(ignore.trim(), "*");
    // Each write kept what it replaced.
    assert_eq!(
        ws.saved_versions(),
        [b"line v0\n".to_vec(), b"line v1\n".to_vec()]
    );
}

#[test]
fn undo_refuses_after_the_user_changed_the_file_and_force_restores() {
    let ws = Ws::new();
    ws.write("a.txt", "line v0\n");
    assert_eq!(ws.apply(&call("a.txt", "v0", "v1"), &[]).code, 0);
    ws.write("a.txt", "the user's own edit\n");
    let run = ws.undo(&[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("a.txt changed since nib wrote it"),
        "{run:?}"
    );
    assert!(run.stderr.contains("--force"), "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "the user's own edit\n");
    let run = ws.undo(&["--force"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "line v0\n");
}

#[test]
fn undo_refuses_after_the_user_deleted_the_file() {
    let ws = Ws::new();
    ws.write("a.txt", "line v0\n");
    assert_eq!(ws.apply(&call("a.txt", "v0", "v1"), &[]).code, 0);
    fs::remove_file(ws.path("a.txt")).unwrap();
    let run = ws.undo(&[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("deleted"), "{run:?}");
    assert!(!ws.path("a.txt").exists());
    assert_eq!(ws.undo(&["--force"]).code, 0);
    assert_eq!(ws.read_str("a.txt"), "line v0\n");
}

#[test]
fn undo_with_nothing_to_undo() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let run = ws.undo(&[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("nothing to undo"), "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(ws.read_str("a.txt"), "a\n");
    // A dry run records nothing to undo either.
    assert_eq!(ws.apply(&call("a.txt", "a", "b"), &["--dry-run"]).code, 0);
    let run = ws.undo(&[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("nothing to undo"), "{run:?}");
}

#[test]
fn undo_of_a_path_leaves_other_files() {
    let ws = Ws::new();
    ws.write("a.txt", "a0\n");
    ws.write("b.txt", "b0\n");
    assert_eq!(ws.apply(&call("a.txt", "a0", "a1"), &[]).code, 0);
    assert_eq!(ws.apply(&call("b.txt", "b0", "b1"), &[]).code, 0);
    let run = ws.undo(&["a.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "a0\n");
    assert_eq!(ws.read_str("b.txt"), "b1\n");
    let run = ws.undo(&["a.txt"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("nothing to undo for a.txt"), "{run:?}");
    // Without a path: the newest write left, b.txt's.
    assert_eq!(ws.undo(&[]).code, 0);
    assert_eq!(ws.read_str("b.txt"), "b0\n");
}

#[test]
fn undo_of_a_path_outside_is_refused() {
    let ws = Ws::new();
    let run = ws.undo(&["../x"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("outside the workspace"), "{run:?}");
}

#[test]
fn undo_restores_exact_bytes_and_keeps_the_mode() {
    let ws = Ws::new();
    let original: &[u8] = b"\xef\xbb\xbf#!/bin/sh\r\necho old\r\nexit 0";
    ws.write("run.sh", original);
    ws.chmod("run.sh", 0o755);
    assert_eq!(
        ws.apply(&call("run.sh", "echo old", "echo new"), &[]).code,
        0
    );
    assert_eq!(
        ws.read("run.sh"),
        b"\xef\xbb\xbf#!/bin/sh\r\necho new\r\nexit 0"
    );
    assert_eq!(ws.undo(&[]).code, 0);
    assert_eq!(ws.read("run.sh"), original);
    assert_eq!(ws.mode("run.sh"), 0o755);
}

#[test]
fn undo_through_a_symlink_keeps_the_link() {
    let ws = Ws::new();
    ws.write("real/t.txt", "old\n");
    symlink("real/t.txt", ws.path("link.txt")).unwrap();
    assert_eq!(ws.apply(&call("link.txt", "old", "new"), &[]).code, 0);
    assert_eq!(ws.read_str("real/t.txt"), "new\n");
    let run = ws.undo(&["link.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("real/t.txt"), "old\n");
    assert!(
        fs::symlink_metadata(ws.path("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn undo_on_a_nonexistent_root_is_a_usage_error() {
    let ws = Ws::new();
    let missing = ws.outside().join("nope");
    let run = crate::support::nib(
        &[
            std::ffi::OsStr::new("undo"),
            std::ffi::OsStr::new("--root"),
            missing.as_os_str(),
        ],
        ws.root(),
        None,
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("does not exist"), "{run:?}");
}

#[test]
fn undo_removes_the_temp_files_of_killed_writes() {
    let ws = Ws::new();
    ws.write("src/deep/a.rs", "x\n");
    // Left by writes killed before their rename (no process has this pid),
    // in directories no later apply writes to.
    ws.write("src/deep/.a.rs.nib-tmp-99999999-0", "half");
    ws.write(".top.txt.nib-tmp-99999999-7", "half");
    let run = ws.undo(&[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(!ws.path("src/deep/.a.rs.nib-tmp-99999999-0").exists());
    assert!(!ws.path(".top.txt.nib-tmp-99999999-7").exists());
    assert_eq!(ws.read_str("src/deep/a.rs"), "x\n");
}
