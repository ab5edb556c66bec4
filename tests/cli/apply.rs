//! One call: the file's new bytes, the exit code, the human and JSON output.

use crate::support::{Ws, call, call_edits};

const MAIN_RS: &str = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
const MAIN_RS_AFTER: &str = "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n";
const MAIN_RS_DIFF: &str = "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,4 +1,4 @@\n fn main() {\n-    let x = 1;\n+    let x = 2;\n     println!(\"{x}\");\n }\n";

#[test]
fn single_call_applies_and_prints_the_diff() {
    let ws = Ws::new();
    ws.write("src/main.rs", MAIN_RS);
    let run = ws.apply(&call("src/main.rs", "let x = 1;", "let x = 2;"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("src/main.rs"), MAIN_RS_AFTER);
    assert!(
        run.stdout.contains("applied 1 of 1 edits to src/main.rs"),
        "{run:?}"
    );
    assert!(run.stdout.contains(MAIN_RS_DIFF), "{run:?}");
    // One call: no summary line.
    assert!(!run.stdout.contains("calls:"), "{run:?}");
}

#[test]
fn json_output_is_one_object_with_the_documented_fields() {
    let ws = Ws::new();
    ws.write("src/main.rs", MAIN_RS);
    let run = ws.apply_json(&call("src/main.rs", "let x = 1;", "let x = 2;"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("src/main.rs"), MAIN_RS_AFTER);
    let reports = run.reports();
    assert_eq!(reports.len(), 1, "{run:?}");
    let r = &reports[0];
    assert_eq!(r["path"], "src/main.rs");
    assert_eq!(r["status"], "applied");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .starts_with("applied 1 of 1 edits to src/main.rs"),
        "{r}"
    );
    assert_eq!(r["diff"], MAIN_RS_DIFF);
    assert_eq!(r["notes"], serde_json::json!([]));
    // Nothing but the JSON lines on stdout.
    assert_eq!(run.stdout.lines().count(), 1);
}

#[test]
fn list_form_applies_in_order_with_replace_all() {
    let ws = Ws::new();
    ws.write("a.py", "foo = 1\nprint(foo)\nfoo += foo\nbar = 2\n");
    let input = call_edits(
        "a.py",
        &[
            ("foo", "count", true),
            ("bar = 2", "bar = count * 2", false),
        ],
    );
    let run = ws.apply_json(&input, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        ws.read_str("a.py"),
        "count = 1\nprint(count)\ncount += count\nbar = count * 2\n"
    );
    let r = &run.reports()[0];
    assert_eq!(r["status"], "applied");
    assert!(
        r["message"].as_str().unwrap().contains("2 of 2 edits"),
        "{r}"
    );
}

#[test]
fn second_edit_sees_what_the_first_left() {
    let ws = Ws::new();
    ws.write("a.txt", "alpha\n");
    let input = call_edits(
        "a.txt",
        &[("alpha", "beta", false), ("beta", "gamma", false)],
    );
    let run = ws.apply(&input, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "gamma\n");
}

#[test]
fn tolerant_match_applies_and_says_so_in_notes() {
    let ws = Ws::new();
    ws.write("t.py", "def f():\n    if x:\n        y()\n    return 1\n");
    // Sent without the file's indentation.
    let run = ws.apply_json(&call("t.py", "if x:\n    y()", "if x:\n    z()"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        ws.read_str("t.py"),
        "def f():\n    if x:\n        z()\n    return 1\n"
    );
    let r = &run.reports()[0];
    assert_eq!(r["status"], "applied");
    let notes = r["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{r}");
    let note = notes[0].as_str().unwrap();
    assert!(note.contains("lines 2-3"), "{note}");
    assert!(note.contains("indentation"), "{note}");
    assert!(note.contains("check the diff"), "{note}");
    // Human output shows the note too.
    let ws2 = Ws::new();
    ws2.write("t.py", "def f():\n    if x:\n        y()\n    return 1\n");
    let run = ws2.apply(&call("t.py", "if x:\n    y()", "if x:\n    z()"), &[]);
    assert!(run.stdout.contains("note: edit 1: old matched"), "{run:?}");
}

#[test]
fn failed_call_human_output_names_the_file() {
    let ws = Ws::new();
    ws.write("a.txt", "one\ntwo\n");
    let run = ws.apply(&call("a.txt", "three", "3"), &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.starts_with("failed a.txt:\n"), "{run:?}");
    assert!(
        run.stdout
            .contains("  edit 1 of 1 failed, so nothing was written"),
        "{run:?}"
    );
    assert_eq!(ws.read_str("a.txt"), "one\ntwo\n");
}

#[test]
fn ambiguous_old_is_refused_with_line_numbers() {
    let ws = Ws::new();
    ws.write("a.txt", "x = 1\ny = 0\nx = 1\n");
    let run = ws.apply_json(&call("a.txt", "x = 1", "x = 2"), &[]);
    assert_eq!(run.code, 1, "{run:?}");
    let msg = run.reports()[0]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("lines 1, 3"), "{msg}");
    assert!(msg.contains("replace_all"), "{msg}");
    assert_eq!(ws.read_str("a.txt"), "x = 1\ny = 0\nx = 1\n");
}

/// `nib apply`'s refusals speak to a person at the command line: no advice
/// to call fs-write or fs-read (the engine's text for the model keeps it).
#[test]
fn refusals_say_what_to_do_at_the_command_line() {
    let ws = Ws::new();
    ws.write("calc.py", "def add(a, b):\n    return a - b\n");
    let cases = [
        (call("new.py", "a", "b"), "--format whole-file"),
        (call("calc.py", "", "x"), "--format whole-file"),
        (
            call("calc.py", "a", "b"),
            "true to the call to change every one",
        ),
        (
            call("calc.py", "return a * b", "return a + b"),
            "old must be the text after the tab",
        ),
    ];
    for (input, advice) in cases {
        for json in [false, true] {
            let run = if json {
                ws.apply_json(&input, &[])
            } else {
                ws.apply(&input, &[])
            };
            assert_eq!(run.code, 1, "{run:?}");
            assert!(run.stdout.contains(advice), "{input}: {}", run.stdout);
            for model_talk in ["fs-write", "fs-read", "set replace_all"] {
                assert!(
                    !run.stdout.contains(model_talk),
                    "{input}: {model_talk} said to a person: {}",
                    run.stdout
                );
            }
        }
    }
    assert_eq!(ws.read_str("calc.py"), "def add(a, b):\n    return a - b\n");
    // The tool's own result, which the model reads, still names its tools.
    let empty_old = nib::edit::check_edit(&nib::edit::Edit::new("", "x"), 1, 1)
        .unwrap_err()
        .to_string();
    assert!(empty_old.contains("use fs-write"), "{empty_old}");
}
