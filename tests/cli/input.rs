//! Malformed input fails call by call; usage errors exit 2.

use std::ffi::OsStr;

use crate::support::{Ws, call, nib};

#[test]
fn a_line_that_is_not_json_fails_alone() {
    let ws = Ws::new();
    ws.write("a.txt", "a1\n");
    ws.write("c.txt", "c1\n");
    let input = format!(
        "{}\n{{\"path\": \"a.txt\", oops\n{}\n",
        call("a.txt", "a1", "a2"),
        call("c.txt", "c1", "c2")
    );
    let run = ws.apply_json(&input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.statuses(), ["applied", "failed", "applied"]);
    let msg = run.reports()[1]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("input line 2 is not valid JSON"), "{msg}");
    assert_eq!(ws.read_str("a.txt"), "a2\n");
    assert_eq!(ws.read_str("c.txt"), "c2\n");
}

#[test]
fn a_broken_json_array_is_one_failure() {
    let ws = Ws::new();
    ws.write("a.txt", "a1\n");
    let input = format!("[{}, {{oops]", call("a.txt", "a1", "a2"));
    let run = ws.apply_json(&input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.statuses(), ["failed"]);
    let msg = run.reports()[0]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("not valid JSON"), "{msg}");
    assert_eq!(ws.read_str("a.txt"), "a1\n");
}

#[test]
fn a_non_object_element_fails_alone() {
    let ws = Ws::new();
    ws.write("a.txt", "a1\n");
    let input = format!("[42, {}]", call("a.txt", "a1", "a2"));
    let run = ws.apply_json(&input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.statuses(), ["failed", "applied"]);
    assert_eq!(ws.read_str("a.txt"), "a2\n");
}

#[test]
fn unknown_fields_get_did_you_mean() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let input = [
        r#"{"path": "a.txt", "olf": "a", "new": "b"}"#,
        r#"{"path": "a.txt", "old": "a", "new": "b", "replcae_all": true}"#,
        r#"{"path": "a.txt", "edits": [{"old": "a", "nwe": "b"}]}"#,
    ]
    .join("\n");
    let run = ws.apply_json(&input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.statuses(), ["failed", "failed", "failed"]);
    let reports = run.reports();
    let msgs: Vec<&str> = reports
        .iter()
        .map(|r| r["message"].as_str().unwrap())
        .collect();
    assert!(msgs[0].contains("unknown field `olf`"), "{}", msgs[0]);
    assert!(msgs[0].contains("did you mean `old`?"), "{}", msgs[0]);
    assert!(
        msgs[1].contains("did you mean `replace_all`?"),
        "{}",
        msgs[1]
    );
    assert_eq!(
        msgs[2],
        "edits[1]: unknown field `nwe`; did you mean `new`?"
    );
    assert_eq!(ws.read_str("a.txt"), "a\n");
}

#[test]
fn both_forms_in_one_call_is_refused() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let input = r#"{"path": "a.txt", "old": "a", "new": "b", "edits": [{"old": "a", "new": "c"}]}"#;
    let run = ws.apply_json(input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    let msg = run.reports()[0]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("not both"), "{msg}");
    assert_eq!(ws.read_str("a.txt"), "a\n");
}

#[test]
fn old_equal_to_new_is_refused() {
    let ws = Ws::new();
    ws.write("a.txt", "a\nb\n");
    let input =
        r#"{"path": "a.txt", "edits": [{"old": "a", "new": "A"}, {"old": "b", "new": "b"}]}"#;
    let run = ws.apply_json(input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    let msg = run.reports()[0]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("edit 2 changes nothing"), "{msg}");
    assert_eq!(ws.read_str("a.txt"), "a\nb\n");
}

#[test]
fn nonexistent_root_is_a_usage_error() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let missing = ws.outside().join("no-such-dir");
    let run = nib(
        &[
            OsStr::new("apply"),
            OsStr::new("--root"),
            missing.as_os_str(),
        ],
        ws.root(),
        Some(&call("a.txt", "a", "b")),
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("does not exist"), "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(ws.read_str("a.txt"), "a\n");
}

#[test]
fn root_that_is_a_file_is_a_usage_error() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let run = nib(
        &[
            OsStr::new("apply"),
            OsStr::new("--root"),
            ws.path("a.txt").as_os_str(),
        ],
        ws.root(),
        Some(&call("a.txt", "a", "b")),
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("not a directory"), "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "a\n");
}

#[test]
fn nonexistent_input_file_is_a_usage_error() {
    let ws = Ws::new();
    let run = nib(&["apply", "no-such-calls.jsonl"], ws.root(), None);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no-such-calls.jsonl"), "{run:?}");
    assert_eq!(run.stdout, "");
}

#[test]
fn non_utf8_input_is_a_usage_error() {
    let ws = Ws::new();
    let input = ws.outside().join("calls.jsonl");
    std::fs::write(&input, b"{\"path\": \"a\xff\"}\n").unwrap();
    let run = nib(&[OsStr::new("apply"), input.as_os_str()], ws.root(), None);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("not UTF-8"), "{run:?}");
}

#[test]
fn unknown_format_is_a_usage_error() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let run = ws.apply(&call("a.txt", "a", "b"), &["--format", "git-patch"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("git-patch"), "{run:?}");
    assert!(run.stderr.contains("udiff"), "{run:?}");
    assert!(run.stderr.contains("edit-json"), "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "a\n");
}

#[test]
fn explicit_edit_json_format_works() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let run = ws.apply(&call("a.txt", "a", "b"), &["--format", "edit-json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "b\n");
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let ws = Ws::new();
    let run = nib(&["apply", "--frobnicate"], ws.root(), Some(""));
    assert_eq!(run.code, 2, "{run:?}");
    let run = nib(&["undo", "--frobnicate"], ws.root(), None);
    assert_eq!(run.code, 2, "{run:?}");
}
