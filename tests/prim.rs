//! The primitives through `Host`, as a model's calls run: JSON in, guard,
//! confirm, handler, on real temp workspaces; and the text edit formats
//! (`formats`, in `tests/formats/`), parsed and applied through the same
//! host. One test binary for both: each test binary links nib again.

mod encodings;
mod formats;
mod sandbox;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};

use nib::files::Workspace;
use nib::prim::Host;

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("ws")).expect("ws");
    let ws = Workspace::open(&dir.path().join("ws")).expect("workspace");
    (dir, ws)
}

fn write(ws: &Workspace, rel: &str, text: &str) {
    let path = ws.root().join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("parent");
    }
    fs::write(path, text).expect("write");
}

fn read(ws: &Workspace, rel: &str) -> String {
    fs::read_to_string(ws.root().join(rel)).expect("read")
}

#[test]
fn fs_read_numbers_lines_and_pages() {
    let (_d, ws) = workspace();
    write(&ws, "a.txt", "one\ntwo\nthree\n");
    let host = Host::unattended(ws, true);
    let (_, r) = host.run_json("fs-read", r#"{"path": "a.txt"}"#);
    assert!(r.ok, "{r:?}");
    assert_eq!(r.text, "     1\tone\n     2\ttwo\n     3\tthree\n");
    assert_eq!(r.decision, "allow");
    let (_, r) = host.run_json("fs-read", r#"{"path": "a.txt", "offset": 2, "limit": 1}"#);
    assert_eq!(
        r.text,
        "     2\ttwo\n(lines 2-2 of 3; continue with (fs-read \"a.txt\" 3))\n"
    );
}

#[test]
fn fs_read_refuses_big_binary_and_missing_with_what_to_do() {
    let (_d, ws) = workspace();
    write(&ws, "big.log", &"x\n".repeat(600_000));
    fs::write(ws.root().join("img.png"), b"\x89PNG\0\0\0").expect("png");
    let host = Host::unattended(ws, true);
    let (_, r) = host.run_json("fs-read", r#"{"path": "big.log"}"#);
    assert!(!r.ok && r.text.contains("read it in pages"), "{}", r.text);
    let (_, r) = host.run_json(
        "fs-read",
        r#"{"path": "big.log", "offset": 10, "limit": 2}"#,
    );
    assert!(
        r.ok && r.text.starts_with("    10\tx\n    11\tx\n"),
        "{}",
        r.text
    );
    let (_, r) = host.run_json("fs-read", r#"{"path": "img.png"}"#);
    assert!(!r.ok && r.text.contains("binary"), "{}", r.text);
    let (_, r) = host.run_json("fs-read", r#"{"path": "nope.rs"}"#);
    assert!(!r.ok && r.text.contains("fs-write"), "{}", r.text);
}

#[test]
fn fs_write_needs_a_fresh_read_to_replace() {
    let (_d, ws) = workspace();
    write(&ws, "a.txt", "old\n");
    let root = ws.root().to_path_buf();
    let host = Host::unattended(ws, true);
    let (_, r) = host.run_json("fs-write", r#"{"path": "a.txt", "content": "new\n"}"#);
    assert!(!r.ok && r.text.contains("has not read it"), "{}", r.text);
    assert_eq!(
        fs::read_to_string(root.join("a.txt")).expect("read"),
        "old\n"
    );
    host.run_json("fs-read", r#"{"path": "a.txt"}"#);
    fs::write(root.join("a.txt"), "changed by someone\n").expect("change");
    let (_, r) = host.run_json("fs-write", r#"{"path": "a.txt", "content": "new\n"}"#);
    assert!(
        !r.ok && r.text.contains("changed since you read it"),
        "{}",
        r.text
    );
    host.run_json("fs-read", r#"{"path": "a.txt"}"#);
    let (_, r) = host.run_json("fs-write", r#"{"path": "a.txt", "content": "new\n"}"#);
    assert!(r.ok, "{}", r.text);
    assert_eq!(r.decision, "write");
    assert!(r.diff.contains("-changed by someone\n+new\n"), "{}", r.diff);
    assert_eq!(
        fs::read_to_string(root.join("a.txt")).expect("read"),
        "new\n"
    );
    // New files need no read, and their directories are made.
    let (_, r) = host.run_json(
        "fs-write",
        r#"{"path": "src/new/b.rs", "content": "fn b() {}\n"}"#,
    );
    assert!(
        r.ok && r.text.starts_with("created src/new/b.rs"),
        "{}",
        r.text
    );
}

#[test]
fn fs_edit_through_the_guard_and_confirm() {
    let (_d, ws) = workspace();
    write(&ws, "a.py", "def f():\n    return 1\n");
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let root = ws.root().to_path_buf();
    let host = Host::new(ws, move |req| {
        seen.lock()
            .expect("lock")
            .push((req.kind, req.diff.map(str::to_string)));
        true
    });
    let (call, r) = host.run_json(
        "fs-edit",
        r#"{"path": "a.py", "old": "return 1", "new": "return 2"}"#,
    );
    assert!(r.ok, "{}", r.text);
    assert_eq!(
        nib::prim::schema::positional(&call.expect("parsed")),
        "(fs-edit \"a.py\" \"return 1\" \"return 2\")"
    );
    assert_eq!(
        fs::read_to_string(root.join("a.py")).expect("read"),
        "def f():\n    return 2\n"
    );
    let asked = asked.lock().expect("lock");
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0]
            .1
            .as_deref()
            .is_some_and(|d| d.contains("+    return 2"))
    );
}

#[test]
fn fs_edit_resent_is_already_applied() {
    let (_d, ws) = workspace();
    write(&ws, "a.py", "x = 1\ny = 2\n");
    let host = Host::unattended(ws, true);
    let call = r#"{"path": "a.py", "edits": [{"old": "x = 1", "new": "x = 10"}]}"#;
    assert!(host.run_json("fs-edit", call).1.ok);
    let (_, r) = host.run_json("fs-edit", call);
    assert!(r.ok && r.text.contains("already applied"), "{}", r.text);
}

#[test]
fn a_refused_edit_of_a_protected_file_says_nothing_of_what_it_holds() {
    // Each refused guess must read the same, or the answers spell the
    // secret out a character at a time.
    let (_d, ws) = workspace();
    write(
        &ws,
        ".env",
        "GITHUB_TOKEN=ghp_Zq8vL2mWx9RtK4pN7cYbQ2sD\nOTHER=1\n",
    );
    let host = Host::unattended(ws, true);
    let answer = |old: &str, new: &str| {
        let args = serde_json::json!({ "path": ".env", "old": old, "new": new }).to_string();
        let (_, r) = host.run_json("fs-edit", &args);
        (r.ok, r.refused, r.text, r.decision)
    };
    let right = answer("GITHUB_TOKEN=ghp_Z", "GITHUB_TOKEN=ghp_Z");
    let wrong = answer("GITHUB_TOKEN=ghp_Y", "GITHUB_TOKEN=ghp_Y");
    let many = answer("=", "=");
    let same = answer("OTHER=1", "OTHER=1");
    let applies = answer("OTHER=1", "OTHER=2");
    assert!(right.1 && right.2.contains("security confirm"), "{right:?}");
    for other in [&wrong, &many, &same, &applies] {
        assert_eq!(other, &right);
    }
}

#[test]
fn refused_writes_leave_files_alone() {
    let (_d, ws) = workspace();
    write(&ws, "a.txt", "keep\n");
    write(&ws, ".env", "KEY=1\n");
    let root = ws.root().to_path_buf();
    let host = Host::unattended(ws, false);
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": "a.txt", "old": "keep", "new": "lose"}"#,
    );
    assert!(
        !r.ok && r.refused && r.text.contains("not approved"),
        "{r:?}"
    );
    assert_eq!(
        fs::read_to_string(root.join("a.txt")).expect("read"),
        "keep\n"
    );
    let (_, r) = host.run_json("shell", r#"{"command": "touch made-it"}"#);
    assert!(r.refused, "{r:?}");
    assert!(!root.join("made-it").exists());

    // Approving writes does not approve a security confirm.
    let host = Host::unattended(Workspace::open(&root).expect("ws"), true);
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": ".env", "old": "KEY=1", "new": "KEY=2"}"#,
    );
    assert!(r.refused && r.decision == "security", "{r:?}");
    assert_eq!(
        fs::read_to_string(root.join(".env")).expect("read"),
        "KEY=1\n"
    );
    let (_, r) = host.run_json("fs-write", r#"{"path": "../outside.txt", "content": "x"}"#);
    assert!(r.refused && r.decision == "deny", "{r:?}");
    assert!(!root.join("../outside.txt").exists());
    let (_, r) = host.run_json(
        "fs-write",
        r#"{"path": ".nib/config.toml", "content": "x"}"#,
    );
    assert!(r.refused && r.decision == "deny", "{r:?}");
}

#[test]
fn read_only_files_are_refused() {
    let (_d, ws) = workspace();
    write(&ws, "ro.txt", "frozen\n");
    fs::set_permissions(ws.root().join("ro.txt"), fs::Permissions::from_mode(0o444))
        .expect("chmod");
    let root = ws.root().to_path_buf();
    let host = Host::unattended(ws, true);
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": "ro.txt", "old": "frozen", "new": "thawed"}"#,
    );
    assert!(!r.ok && r.text.contains("read-only"), "{}", r.text);
    assert_eq!(
        read(&Workspace::open(&root).expect("ws"), "ro.txt"),
        "frozen\n"
    );
}

#[test]
fn bad_calls_say_what_to_send() {
    let (_d, ws) = workspace();
    let host = Host::unattended(ws, true);
    let (call, r) = host.run_json("fs-raed", r#"{"path": "a"}"#);
    assert!(
        call.is_none() && r.text.contains("there is no tool `fs-raed`"),
        "{}",
        r.text
    );
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": "a", "edits": [{"old": "x", "nwe": "y"}]}"#,
    );
    assert_eq!(
        r.text,
        "fs-edit: edits[1]: unknown field `nwe`; did you mean `new`?"
    );
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": "a", "old": "x", "new": "y", "edits": [{"old": "x", "new": "y"}]}"#,
    );
    assert!(r.text.contains("not both"), "{}", r.text);
    let (_, r) = host.run_json("fs-read", "{not json");
    assert!(r.text.contains("not valid JSON"), "{}", r.text);
}

#[test]
fn read_only_calls_of_one_reply_run_together_in_order() {
    let (_d, ws) = workspace();
    for i in 0..8 {
        write(&ws, &format!("f{i}.txt"), &format!("file {i}\n"));
    }
    let host = Host::unattended(ws, true);
    let calls: Vec<_> = (0..8)
        .map(|i| {
            let args = serde_json::json!({"path": format!("f{i}.txt")});
            nib::prim::parse::parse(&nib::prim::table::FS_READ, &args).expect("parse")
        })
        .collect();
    let results = host.run_calls(&calls);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.text, format!("     1\tfile {i}\n"));
    }
}

#[test]
fn shell_and_search_run_through_the_host() {
    let (_d, ws) = workspace();
    write(&ws, "src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    write(&ws, ".gitignore", "target/\n");
    write(&ws, "target/junk.rs", "pub fn answer() {}\n");
    let host = Host::unattended(ws, true);
    let (_, r) = host.run_json("shell", r#"{"command": "echo hi; exit 3"}"#);
    assert!(r.ok && r.decision == "write", "{r:?}");
    assert!(
        r.text.contains("hi") && r.text.contains("exit code: 3"),
        "{}",
        r.text
    );
    let (_, r) = host.run_json("index-grep", r#"{"pattern": "fn answer"}"#);
    assert_eq!(r.text.trim_end(), "src/lib.rs:1:pub fn answer() -> u32 {");
    let (_, r) = host.run_json("fs-find", r#"{"pattern": "*.rs"}"#);
    assert_eq!(r.text.trim_end(), "src/lib.rs");
    let (_, r) = host.run_json("outline", r#"{"path": "src/lib.rs"}"#);
    assert!(r.text.contains("fn answer() -> u32"), "{}", r.text);
}

#[test]
fn a_hard_link_to_a_file_outside_is_replaced_not_written_through() {
    let (dir, ws) = workspace();
    let outside = dir.path().join("victim.txt");
    fs::write(&outside, "keep me\n").expect("outside file");
    fs::hard_link(&outside, ws.root().join("linked.txt")).expect("hard link");
    let root = ws.root().to_path_buf();
    let host = Host::unattended(ws, true);
    assert!(host.run_json("fs-read", r#"{"path": "linked.txt"}"#).1.ok);
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": "linked.txt", "old": "keep me", "new": "changed"}"#,
    );
    assert!(r.ok, "{}", r.text);
    // The write went to a new file in the workspace (temp + rename); the
    // file outside, which shared the old inode, is untouched.
    assert_eq!(read_path(&root.join("linked.txt")), "changed\n");
    assert_eq!(read_path(&outside), "keep me\n");
    let (_, r) = host.run_json(
        "fs-write",
        r#"{"path": "linked.txt", "content": "again\n"}"#,
    );
    assert!(r.ok, "{}", r.text);
    assert_eq!(read_path(&outside), "keep me\n");
}

#[test]
fn secrets_read_reach_the_model_as_handles_and_never_the_log() {
    let (_d, ws) = workspace();
    let token = nib::guard::secrets::fake("GH", 11).expect("fake");
    write(&ws, ".env", &format!("GITHUB_TOKEN={token}\n"));
    let host = Host::unattended(ws, true);
    let (_, r) = host.run_json("fs-read", r#"{"path": ".env"}"#);
    assert!(r.ok && !r.text.contains(&token), "{}", r.text);
    assert!(r.text.contains("«secret:GH#1»"), "{}", r.text);
    // The model sends the handle on: a Security confirm, refused unattended.
    let (_, r) = host.run_json(
        "fs-write",
        r#"{"path": "notes.txt", "content": "token: «secret:GH#1»\n"}"#,
    );
    assert!(r.refused && r.decision == "security", "{r:?}");
    assert!(
        r.reasons.iter().any(|x| x.rule == "secret-handle"),
        "{:?}",
        r.reasons
    );
    assert!(!host.guard().scrub(&format!("x {token} y")).contains(&token));
}

fn read_path(p: &std::path::Path) -> String {
    fs::read_to_string(p).expect("read")
}

#[test]
fn values_grep_finds_in_protected_files_are_known_secrets() {
    let (_d, ws) = workspace();
    write(&ws, ".env", "DB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n");
    write(&ws, "app.py", "password = os.environ['DB_PASSWORD']\n");
    let host = Host::unattended(ws, true);
    let (_, r) = host.run_json("index-grep", r#"{"pattern": "PASSWORD"}"#);
    assert!(r.ok, "{}", r.text);
    assert!(!r.text.contains("q8Zt2LwP0vXn5RkY7mJd"), "{}", r.text);
    assert!(
        r.text.contains("app.py:1:password = os.environ"),
        "{}",
        r.text
    );
    // Written out reversed, it is still the same secret.
    let (_, r) = host.run_json(
        "fs-write",
        r#"{"path": "out.txt", "content": "dJm7YkR5nXv0PwL2tZ8q\n"}"#,
    );
    assert!(r.refused && r.decision == "security", "{r:?}");
}

#[test]
fn a_host_cancel_flag_stops_a_running_command() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    let (_d, ws) = workspace();
    let cancel = Arc::new(AtomicBool::new(false));
    let host = Host::unattended(ws, true).with_cancel(Arc::clone(&cancel));
    let flag = Arc::clone(&cancel);
    let esc = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Relaxed);
    });
    let started = Instant::now();
    let (_, r) = host.run_json("shell", r#"{"command": "sleep 30"}"#);
    let _ = esc.join();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!r.ok && r.text.contains("interrupted"), "{}", r.text);
}

#[test]
fn a_hard_link_to_a_protected_file_is_that_file() {
    let (_d, ws) = workspace();
    let password = "q8Zt2LwP0vXn5RkY7mJd";
    write(&ws, "config/.env", &format!("DB_PASSWORD={password}\n"));
    fs::hard_link(ws.root().join("config/.env"), ws.root().join("notes.txt")).expect("link");
    write(&ws, "plain.txt", "nothing here\n");
    fs::hard_link(ws.root().join("plain.txt"), ws.root().join("plain2.txt")).expect("link");
    let host = Host::unattended(ws, true);
    // Read under another name, its values still reach the model as handles
    // and are known secrets afterwards.
    let (_, r) = host.run_json("fs-read", r#"{"path": "notes.txt"}"#);
    assert!(r.ok && !r.text.contains(password), "{}", r.text);
    let (_, r) = host.run_json(
        "fs-write",
        &format!(r#"{{"path": "out.txt", "content": "{password}\n"}}"#),
    );
    assert!(r.refused && r.decision == "security", "{r:?}");
    // Writing it would leave an unprotected copy behind (the link is
    // replaced): a protected path.
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": "notes.txt", "old": "DB_PASSWORD", "new": "DB_PASS"}"#,
    );
    assert!(r.refused && r.decision == "security", "{r:?}");
    assert!(
        r.text
            .contains("hard link to the protected file config/.env"),
        "{}",
        r.text
    );
    // A command reads it as the sandbox shows it: empty where the
    // system has mount namespaces, a Security question where it has not.
    let (_, r) = host.run_json("shell", r#"{"command": "cat notes.txt > copy.txt"}"#);
    if nib::prim::tools::spawn::available() {
        assert!(r.ok && r.decision == "write", "{r:?}");
        assert_eq!(read(host.workspace(), "copy.txt"), "");
    } else {
        assert!(r.refused && r.decision == "security", "{r:?}");
    }
    // A hard link between ordinary files is ordinary.
    let (_, r) = host.run_json("fs-read", r#"{"path": "plain2.txt"}"#);
    assert!(r.ok, "{}", r.text);
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": "plain2.txt", "old": "nothing", "new": "something"}"#,
    );
    assert!(r.ok && r.decision == "write", "{r:?}");
}

/// Appends `line` to `path` the way an outside program does (open with
/// O_APPEND, one write, close).
fn append_outside(path: &std::path::Path, line: &str) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open to append");
    f.write_all(line.as_bytes()).expect("append");
}

#[test]
fn a_change_made_while_the_confirm_is_open_is_kept_and_confirmed_again() {
    let (_d, ws) = workspace();
    write(&ws, "a.txt", "value 1\n");
    let path = ws.root().join("a.txt");
    let outside = path.clone();
    let diffs = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&diffs);
    let host = Host::new(ws, move |req| {
        let mut seen = seen.lock().expect("lock");
        if seen.is_empty() {
            // The user edits the file in another terminal, then says yes.
            append_outside(&outside, "theirs\n");
        }
        seen.push(req.diff.unwrap_or_default().to_string());
        true
    });
    let (_, r) = host.run_json(
        "fs-edit",
        r#"{"path": "a.txt", "old": "value 1", "new": "value 2"}"#,
    );
    assert!(r.ok, "{}", r.text);
    assert_eq!(
        fs::read_to_string(&path).expect("read"),
        "value 2\ntheirs\n"
    );
    let diffs = diffs.lock().expect("lock");
    assert_eq!(diffs.len(), 2, "the new diff is confirmed again: {diffs:?}");
    assert!(!diffs[0].contains("theirs"), "{}", diffs[0]);
    assert!(diffs[1].contains(" theirs"), "{}", diffs[1]);
    assert!(r.diff.contains(" theirs"), "{}", r.diff);
}

#[test]
fn fs_write_over_a_change_made_during_the_confirm_is_refused() {
    let (_d, ws) = workspace();
    write(&ws, "a.txt", "old\n");
    let path = ws.root().join("a.txt");
    let outside = path.clone();
    let host = Host::new(ws, move |_req| {
        append_outside(&outside, "theirs\n");
        true
    });
    assert!(host.run_json("fs-read", r#"{"path": "a.txt"}"#).1.ok);
    let (_, r) = host.run_json("fs-write", r#"{"path": "a.txt", "content": "new\n"}"#);
    assert!(!r.ok && r.text.contains("read it again"), "{}", r.text);
    assert_eq!(fs::read_to_string(&path).expect("read"), "old\ntheirs\n");
}

/// An outside writer appending every 2 ms while nib edits the same file
/// unattended: every append and every edit survive. Ignored by default:
/// an append whose open() came before nib's rename and whose write()
/// comes after nib's last look at the replaced file can still be lost (a
/// window of microseconds that only the writer's cooperation could close;
/// measured about 1 run in 8 loses one append of ~350). Run with
/// `cargo test --test prim -- --ignored`.
#[test]
#[ignore = "residual race with an uncooperative appender; see the doc comment"]
fn an_appender_running_under_many_edits_loses_nothing() {
    let (_d, ws) = workspace();
    write(&ws, "log.txt", "value 0\n");
    let path = ws.root().join("log.txt");
    let host = Host::unattended(ws, true);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let appender = {
        let stop = Arc::clone(&stop);
        let path = path.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                append_outside(&path, &format!("append {n}\n"));
                n += 1;
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            n
        })
    };
    let edits = 150;
    for i in 0..edits {
        let call = format!(
            r#"{{"path": "log.txt", "old": "value {i}\n", "new": "value {}\n"}}"#,
            i + 1
        );
        // A file rewritten faster than nib can plan may still be refused
        // ("changed on disk"); the model then sends the edit again.
        let mut tries = 0;
        loop {
            let (_, r) = host.run_json("fs-edit", &call);
            if r.ok {
                break;
            }
            assert!(
                r.text.contains("changed on disk") && tries < 20,
                "edit {i}: {}",
                r.text
            );
            tries += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let appended = appender.join().expect("appender");
    let text = fs::read_to_string(&path).expect("read");
    assert!(text.starts_with(&format!("value {edits}\n")), "{text}");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    let expected: Vec<String> = (0..appended).map(|n| format!("append {n}")).collect();
    assert_eq!(lines, expected, "every append is kept, in order");
    assert!(appended > 10, "the appender ran ({appended} appends)");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// plan → confirm → write with an outside writer changing the file at
    /// any step (before the plan, while the confirm is open, several
    /// times): no byte the outside writer wrote is lost, and each edit is
    /// applied exactly once.
    #[test]
    fn an_outside_writer_never_loses_a_byte(
        steps in proptest::collection::vec((0usize..3, 0usize..4, proptest::bool::ANY), 1..8)
    ) {
        let (_d, ws) = workspace();
        write(&ws, "f.txt", "head 0\nmid\n");
        let path = ws.root().join("f.txt");
        let during = Arc::new(Mutex::new((0usize, 0usize)));
        let outside = path.clone();
        let plan = Arc::clone(&during);
        let host = Host::new(ws, move |_req| {
            // (appends still to make in this confirm, appends so far)
            let mut p = plan.lock().expect("lock");
            while p.0 > 0 {
                append_outside(&outside, &format!("confirm {}\n", p.1));
                p.1 += 1;
                p.0 -= 1;
            }
            true
        });
        let mut expected_tail = String::new();
        for (i, &(before, in_confirm, prepend)) in steps.iter().enumerate() {
            for k in 0..before {
                let line = format!("before {i} {k}\n");
                append_outside(&path, &line);
                expected_tail.push_str(&line);
            }
            if prepend {
                // A rewrite that is not an append: a line inserted after the head.
                let text = fs::read_to_string(&path).expect("read");
                let text = text.replacen("mid\n", &format!("mid\nins {i}\n"), 1);
                fs::write(&path, text).expect("rewrite");
            }
            let start = {
                let mut p = during.lock().expect("lock");
                p.0 = in_confirm;
                p.1
            };
            let call = format!(
                r#"{{"path": "f.txt", "old": "head {i}\n", "new": "head {}\n"}}"#,
                i + 1
            );
            let (_, r) = host.run_json("fs-edit", &call);
            proptest::prop_assert!(r.ok, "step {}: {}", i, r.text);
            let end = during.lock().expect("lock").1;
            for n in start..end {
                expected_tail.push_str(&format!("confirm {n}\n"));
            }
        }
        let text = fs::read_to_string(&path).expect("read");
        let mut head = format!("head {}\nmid\n", steps.len());
        for (i, &(_, _, prepend)) in steps.iter().enumerate().rev() {
            if prepend {
                head.push_str(&format!("ins {i}\n"));
            }
        }
        proptest::prop_assert_eq!(text, format!("{head}{expected_tail}"));
    }
}

#[test]
fn temp_files_of_killed_writes_are_hidden_from_listings() {
    let (_d, ws) = workspace();
    write(&ws, "src/a.rs", "fn a() {}\n");
    write(&ws, "src/.a.rs.nib-tmp-99999999-0", "fn a() {");
    let host = Host::unattended(ws, true);
    let (_, r) = host.run_json("fs-list", r#"{"path": "src"}"#);
    assert!(r.ok && r.text.contains("a.rs"), "{}", r.text);
    assert!(!r.text.contains("nib-tmp"), "{}", r.text);
    let (_, r) = host.run_json("fs-find", r#"{"pattern": "**/*"}"#);
    assert!(!r.text.contains("nib-tmp"), "{}", r.text);
    let (_, r) = host.run_json("index-grep", r#"{"pattern": "fn a"}"#);
    assert!(r.ok && r.text.contains("src/a.rs"), "{}", r.text);
    assert!(!r.text.contains("nib-tmp"), "{}", r.text);
}
