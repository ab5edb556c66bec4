//! Two `nib apply` processes on one file at once: the per-file lock and
//! the check before the rename make the second re-apply its edit to what
//! the first wrote, so no update is lost whatever the interleaving.

use crate::support::{Ws, call, ndjson, nib};

#[test]
fn two_apply_processes_on_one_file_lose_no_update() {
    let ws = Ws::new();
    ws.write("counts.txt", "a 0\nb 0\n");
    let rounds = 60;
    let input = |name: &str| {
        let lines: Vec<String> = (0..rounds)
            .map(|i| {
                call(
                    "counts.txt",
                    &format!("{name} {i}\n"),
                    &format!("{name} {}\n", i + 1),
                )
            })
            .collect();
        ndjson(&lines)
    };
    let (a, b) = (input("a"), input("b"));
    let root = ws.root().to_path_buf();
    let other = root.clone();
    let first = std::thread::spawn(move || nib(&["apply", "--json"], &root, Some(&a)));
    let second = nib(&["apply", "--json"], &other, Some(&b));
    let first = first.join().expect("first nib");
    for run in [&first, &second] {
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.statuses().iter().all(|s| s == "applied"), "{run:?}");
    }
    assert_eq!(
        ws.read_str("counts.txt"),
        format!("a {rounds}\nb {rounds}\n")
    );
    // Every write is undoable in turn, back to the start.
    for _ in 0..2 * rounds {
        let run = nib(&["undo"], ws.root(), None);
        assert_eq!(run.code, 0, "{run:?}");
    }
    assert_eq!(ws.read_str("counts.txt"), "a 0\nb 0\n");
}

#[test]
fn stale_temp_files_are_cleaned_by_apply() {
    let ws = Ws::new();
    ws.write("src/a.rs", "let x = 1;\n");
    // Left by a write killed before its rename (no process has this pid).
    ws.write("src/.a.rs.nib-tmp-99999999-0", "half");
    let run = ws.apply(&call("src/a.rs", "x = 1", "x = 2"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!ws.path("src/.a.rs.nib-tmp-99999999-0").exists());
    assert_eq!(ws.read_str("src/a.rs"), "let x = 2;\n");
}

#[test]
fn a_closed_pipe_ends_nib_quietly() {
    use std::process::{Command, Stdio};
    let ws = Ws::new();
    ws.write("events.jsonl", "");
    // The reader is gone before nib prints (as with `nib ... | head`).
    let mut child = Command::new(crate::support::NIB)
        .args(["stats", "--json"])
        .arg(ws.path("events.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nib");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
