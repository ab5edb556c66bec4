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
fn two_apply_processes_on_one_latin1_file_lose_no_byte() {
    // The same race on a file that is not UTF-8: the check before the
    // rename compares the file's bytes with the Latin-1 bytes the plan
    // was read from.
    let ws = Ws::new();
    ws.write("l.txt", b"\xe9 a 0\n\xe8 b 0\n");
    let rounds = 20;
    let input = |name: &str| {
        let lines: Vec<String> = (0..rounds)
            .map(|i| {
                call(
                    "l.txt",
                    &format!(" {name} {i}\n"),
                    &format!(" {name} {}\n", i + 1),
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
    }
    assert_eq!(
        ws.read("l.txt"),
        format!("\u{e9} a {rounds}\n\u{e8} b {rounds}\n")
            .chars()
            .map(|c| c as u8)
            .collect::<Vec<u8>>()
    );
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

/// The tree a multi-file V4A patch starts from, and the patch: an add, a
/// delete, an update and a move with an update. The files are large
/// enough (1 MiB each) that a kill lands in the middle of the patch.
fn patch_case(ws: &Ws) -> (Vec<(&'static str, Option<String>)>, String) {
    let body = |tag: &str| -> String {
        (0..20_000)
            .map(|i| format!("{tag} line {i:05} of filler text\n"))
            .collect()
    };
    let a = format!("head of a\n{}", body("a"));
    let b = body("b");
    let c = format!("head of c\n{}", body("c"));
    ws.write("a.txt", &a);
    ws.write("b.txt", &b);
    ws.write("c.txt", &c);
    let patch = "*** Begin Patch\n\
                 *** Add File: n/new.txt\n\
                 +a new file\n\
                 *** Delete File: b.txt\n\
                 *** Update File: a.txt\n\
                 @@\n\
                 -head of a\n\
                 +HEAD OF A\n\
                 *** Update File: c.txt\n\
                 *** Move to: d/c2.txt\n\
                 @@\n\
                 -head of c\n\
                 +HEAD OF C\n\
                 *** End Patch\n"
        .to_string();
    let old = vec![
        ("a.txt", Some(a.clone())),
        ("b.txt", Some(b)),
        ("c.txt", Some(c.clone())),
        ("d/c2.txt", None),
        ("n/new.txt", None),
    ];
    (old, patch)
}

/// Which of the two states the tree is in: "old", "new", or a description
/// of the mix.
fn tree_state(ws: &Ws, old: &[(&str, Option<String>)]) -> String {
    let now = |rel: &str| std::fs::read_to_string(ws.path(rel)).ok();
    let a = old[0].1.clone().unwrap();
    let c = old[2].1.clone().unwrap();
    let new: Vec<(&str, Option<String>)> = vec![
        ("a.txt", Some(a.replacen("head of a", "HEAD OF A", 1))),
        ("b.txt", None),
        ("c.txt", None),
        ("d/c2.txt", Some(c.replacen("head of c", "HEAD OF C", 1))),
        ("n/new.txt", Some("a new file\n".to_string())),
    ];
    let matches = |want: &[(&str, Option<String>)]| want.iter().all(|(rel, v)| now(rel) == *v);
    if matches(old) {
        return "old".into();
    }
    if matches(&new) {
        return "new".into();
    }
    let mixed: Vec<String> = old
        .iter()
        .zip(&new)
        .map(|((rel, o), (_, n))| {
            let v = now(rel);
            let which = if v == *o {
                "old"
            } else if v == *n {
                "new"
            } else {
                "other"
            };
            format!("{rel}={which}")
        })
        .collect();
    format!("mixed: {}", mixed.join(" "))
}

/// Temp files (`.<name>.nib-tmp-…`) left anywhere in the tree.
fn temps(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".nib" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            out.extend(temps(&entry.path()));
        } else if name.contains(".nib-tmp-") {
            out.push(name);
        }
    }
    out
}

#[test]
fn a_patch_killed_anywhere_leaves_every_file_all_old_or_all_new() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    // How long a whole patch takes here, to spread the kills over it.
    let ws = Ws::new();
    let (_, patch) = patch_case(&ws);
    ws.write("patch.v4a", &patch);
    let t0 = Instant::now();
    let run = nib(&["apply", "--format", "v4a", "patch.v4a"], ws.root(), None);
    assert_eq!(run.code, 0, "{run:?}");
    let span = t0.elapsed().as_micros().max(1000) as u64;

    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(std::process::id());
    let mut counts = std::collections::BTreeMap::new();
    for round in 0..60 {
        let ws = Ws::new();
        let (old, patch) = patch_case(&ws);
        ws.write("patch.v4a", &patch);
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let delay = Duration::from_micros((seed >> 33) % (span + span / 4));
        let mut child = Command::new(crate::support::NIB)
            .args(["apply", "--format", "v4a", "patch.v4a"])
            .current_dir(ws.root())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        // Any command that opens the workspace finishes the patch first;
        // an empty patch writes nothing else.
        let next = nib(
            &["apply", "--format", "v4a", "-"],
            ws.root(),
            Some("*** Begin Patch\n*** End Patch\n"),
        );
        let state = tree_state(&ws, &old);
        assert!(
            state == "old" || state == "new",
            "round {round}, killed after {delay:?}: {state}\n{next:?}"
        );
        if next.stderr.contains("rolled back") {
            assert_eq!(state, "old", "{next:?}");
        }
        if next.stderr.contains("completed") {
            assert_eq!(state, "new", "{next:?}");
        }
        // One undo takes a whole patch back; temp files go with it.
        let undo = nib(&["undo"], ws.root(), None);
        assert_eq!(tree_state(&ws, &old), "old", "round {round}: {undo:?}");
        assert_eq!(temps(ws.root()), Vec::<String>::new(), "round {round}");
        *counts.entry(state).or_insert(0) += 1;
    }
    // Both ends were seen (a kill before the first write, and after the
    // last), so the kills did spread over the patch.
    assert!(
        counts.len() == 2 || counts.values().sum::<i32>() == 60,
        "{counts:?}"
    );
}

#[test]
fn a_patch_is_undone_in_one_step_or_refused_whole() {
    let ws = Ws::new();
    let (old, patch) = patch_case(&ws);
    ws.write("patch.v4a", &patch);
    let run = nib(&["apply", "--format", "v4a", "patch.v4a"], ws.root(), None);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(tree_state(&ws, &old), "new");
    let undo = nib(&["undo"], ws.root(), None);
    assert_eq!(undo.code, 0, "{undo:?}");
    assert!(
        undo.stdout.contains("undid the whole patch: 5 files"),
        "{undo:?}"
    );
    assert_eq!(tree_state(&ws, &old), "old");
    let again = nib(&["undo"], ws.root(), None);
    assert_ne!(again.code, 0, "{again:?}");
    assert!(again.stderr.contains("nothing to undo"), "{again:?}");

    // A patch whose file is changed by someone else after nib wrote it:
    // undo refuses the whole patch and touches nothing.
    let run = nib(&["apply", "--format", "v4a", "patch.v4a"], ws.root(), None);
    assert_eq!(run.code, 0, "{run:?}");
    ws.write("n/new.txt", "theirs\n");
    let undo = nib(&["undo"], ws.root(), None);
    assert_ne!(undo.code, 0, "{undo:?}");
    assert!(undo.stderr.contains("n/new.txt changed since"), "{undo:?}");
    assert!(ws.path("d/c2.txt").exists());
    assert!(!ws.path("b.txt").exists());
}
