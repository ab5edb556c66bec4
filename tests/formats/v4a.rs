//! The V4A patch parser (`nib::edit::formats::v4a`): Codex's parser cases
//! (`tests/data/conformance/codex-parse.jsonl`) run as data, then each rule
//! on a small input.

use nib::edit::formats::v4a::{Mode, parse};
use nib::edit::formats::{Chunk, FormatError, PatchOp};
use serde_json::{Value, json};

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/conformance/codex-parse.jsonl"
);

/// Cases where nib deliberately differs from Codex: (case id, reason).
/// A listed case that starts passing fails the test, so the list stays true.
const DIFFERENCES: &[(&str, &str)] = &[];

/// The operations in the conformance data's form.
fn to_json(ops: &[PatchOp]) -> Value {
    ops.iter()
        .map(|op| match op {
            PatchOp::Add { path, contents } => {
                json!({"op": "add", "path": path, "contents": contents})
            }
            PatchOp::Delete { path } => json!({"op": "delete", "path": path}),
            PatchOp::Update {
                path,
                move_to,
                chunks,
            } => json!({
                "op": "update",
                "path": path,
                "move_to": move_to,
                "chunks": chunks.iter().map(|c| json!({
                    "context": c.context,
                    "old_lines": c.old_lines,
                    "new_lines": c.new_lines,
                    "eof": c.eof,
                })).collect::<Vec<_>>(),
            }),
        })
        .collect()
}

/// Why a case fails, or `None` when nib gives the expected result.
fn check(case: &Value) -> Option<String> {
    let input = case["input"].as_str()?;
    let mode = match case["options"]["mode"].as_str() {
        Some("lenient") => Mode::Lenient,
        _ => Mode::Strict,
    };
    let result = parse(input, mode);
    let expect = &case["expect"];
    if expect["error"] == json!(true) {
        return match result {
            Err(_) => None,
            Ok(ops) => Some(format!("parsed, expected an error: {}", to_json(&ops))),
        };
    }
    match result {
        Err(e) => Some(format!("error: {e}")),
        Ok(ops) if to_json(&ops) == expect["parsed"] => None,
        Ok(ops) => Some(format!(
            "parsed {}\nexpected {}",
            to_json(&ops),
            expect["parsed"]
        )),
    }
}

#[test]
fn codex_parse_cases() {
    let text = std::fs::read_to_string(DATA).unwrap_or_else(|e| panic!("reading {DATA}: {e}"));
    let mut problems = Vec::new();
    let mut passed = 0;
    let mut ids = Vec::new();
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let case: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{DATA}:{}: {e}", i + 1));
        let id = case["id"]
            .as_str()
            .expect("every case has an id")
            .to_string();
        assert_eq!(case["format"], "v4a-patch", "{id}");
        let failure = check(&case);
        let listed = DIFFERENCES.iter().any(|(d, _)| *d == id);
        match (failure, listed) {
            (None, false) => passed += 1,
            (None, true) => problems.push(format!("{id}: listed as a difference but passes")),
            (Some(_), true) => {}
            (Some(why), false) => problems.push(format!("{id}: {why}")),
        }
        ids.push(id);
    }
    for (id, _) in DIFFERENCES {
        assert!(ids.iter().any(|i| i == id), "{id} is not a case");
    }
    assert_eq!(ids.len(), 31, "codex-parse.jsonl has 31 cases");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert_eq!(passed + DIFFERENCES.len(), ids.len());
}

// ---- the rules, one by one ----

fn ok(text: &str) -> Vec<PatchOp> {
    parse(text, Mode::Strict).unwrap_or_else(|e| panic!("{e}\n---\n{text}"))
}

fn err(text: &str, mode: Mode) -> FormatError {
    match parse(text, mode) {
        Ok(ops) => panic!("parsed {ops:?}\n---\n{text}"),
        Err(e) => e,
    }
}

fn chunk(context: Option<&str>, old: &[&str], new: &[&str], eof: bool) -> Chunk {
    Chunk {
        context: context.map(str::to_string),
        old_lines: old.iter().map(|s| s.to_string()).collect(),
        new_lines: new.iter().map(|s| s.to_string()).collect(),
        eof,
    }
}

fn update(path: &str, move_to: Option<&str>, chunks: Vec<Chunk>) -> PatchOp {
    PatchOp::Update {
        path: path.to_string(),
        move_to: move_to.map(str::to_string),
        chunks,
    }
}

#[test]
fn begin_must_come_first() {
    let e = err("bad\n*** End Patch", Mode::Strict);
    assert_eq!(e.line, Some(1));
    assert!(
        e.to_string()
            .starts_with("line 1: a patch starts with '*** Begin Patch'"),
        "{e}"
    );

    let e = err(
        "Here is the patch:\n*** Begin Patch\n*** Delete File: a\n*** End Patch",
        Mode::Lenient,
    );
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("line 2"), "{e}");
}

#[test]
fn empty_text_is_refused() {
    let e = err(" \n\n", Mode::Lenient);
    assert_eq!(e.line, None);
    assert!(e.message.contains("*** Begin Patch"), "{e}");
}

#[test]
fn a_cut_off_patch_is_refused_whole() {
    let text =
        "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Update File: b.txt\n@@\n-x\n+y";
    let e = err(text, Mode::Lenient);
    assert_eq!(e.line, Some(8));
    assert!(e.message.contains("cut off"), "{e}");
    assert!(e.message.contains("*** End Patch"), "{e}");

    let e = err("*** Begin Patch\n", Mode::Strict);
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("cut off"), "{e}");
}

#[test]
fn markers_match_after_trimming_and_blank_lines_around_are_ignored() {
    let ops = ok("\n\n  *** Begin Patch  \n\t*** Delete File:   a.txt  \n  *** End Patch \n \t\n");
    assert_eq!(
        ops,
        vec![PatchOp::Delete {
            path: "a.txt".into()
        }]
    );
}

#[test]
fn text_after_end_patch_is_an_error() {
    let e = err(
        "*** Begin Patch\n*** Delete File: a\n*** End Patch\n\nThat's all.\n",
        Mode::Lenient,
    );
    assert_eq!(e.line, Some(5));
    assert!(e.message.contains("after '*** End Patch' (line 3)"), "{e}");
}

#[test]
fn end_patch_in_the_middle_is_an_error() {
    let text =
        "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Delete File: b\n*** End Patch";
    let e = err(text, Mode::Strict);
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("last line"), "{e}");
}

#[test]
fn heredoc_is_unwrapped_only_in_lenient_mode() {
    for opener in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
        let text = format!("{opener}\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n");
        assert_eq!(
            parse(&text, Mode::Lenient),
            Ok(vec![PatchOp::Delete { path: "a".into() }])
        );
        let e = err(&text, Mode::Strict);
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("heredoc"), "{e}");
    }
    let e = err(
        "<<EOF\n*** Begin Patch\n*** Delete File: a\n*** End Patch",
        Mode::Lenient,
    );
    assert_eq!(e.line, Some(4));
    assert!(e.message.contains("EOF"), "{e}");
    let e = err("<<EOF\nEOF", Mode::Lenient);
    assert_eq!(e.line, Some(1));
}

#[test]
fn environment_id_line_is_accepted_after_begin() {
    let ops = ok("*** Begin Patch\n*** Environment ID: remote\n*** Delete File: a\n*** End Patch");
    assert_eq!(ops, vec![PatchOp::Delete { path: "a".into() }]);
    let e = err(
        "*** Begin Patch\n*** Environment ID:\n*** Delete File: a\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(2));
    // Anywhere else it is not a hunk header.
    let e = err(
        "*** Begin Patch\n*** Delete File: a\n*** Environment ID: x\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(3));
}

#[test]
fn add_file_lines_start_with_plus() {
    let ops = ok("*** Begin Patch\n*** Add File: n.txt\n+one\n+\n+  three\n*** End Patch");
    assert_eq!(
        ops,
        vec![PatchOp::Add {
            path: "n.txt".into(),
            contents: "one\n\n  three\n".into()
        }]
    );
    let e = err(
        "*** Begin Patch\n*** Add File: n.txt\n+one\ntwo\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(4));
    assert!(e.message.contains("'two' is not a hunk header"), "{e}");
    assert!(e.message.contains("starts with '+'"), "{e}");
}

#[test]
fn add_file_empty_lines_inside_are_kept_and_trailing_ones_separate() {
    let ops = ok(
        "*** Begin Patch\n*** Add File: n.txt\n+one\n\n+three\n\n*** Delete File: d\n*** End Patch",
    );
    assert_eq!(
        ops,
        vec![
            PatchOp::Add {
                path: "n.txt".into(),
                contents: "one\n\nthree\n".into()
            },
            PatchOp::Delete { path: "d".into() }
        ]
    );
}

#[test]
fn add_file_without_lines_is_an_empty_file() {
    let ops = ok("*** Begin Patch\n*** Add File: empty\n*** End Patch");
    assert_eq!(
        ops,
        vec![PatchOp::Add {
            path: "empty".into(),
            contents: String::new()
        }]
    );
}

#[test]
fn delete_file_takes_no_lines() {
    let e = err(
        "*** Begin Patch\n*** Delete File: a\n-x\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("takes no lines"), "{e}");
}

#[test]
fn headers_need_a_path() {
    for header in ["*** Add File:", "*** Delete File:  ", "*** Update File:"] {
        let e = err(
            &format!("*** Begin Patch\n{header}\n*** End Patch"),
            Mode::Strict,
        );
        assert_eq!(e.line, Some(2), "{header}");
        assert!(e.message.contains("needs a path"), "{e}");
    }
}

#[test]
fn unknown_header_names_the_valid_ones() {
    let e = err(
        "*** Begin Patch\n*** Modify File: a\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("*** Update File: <path>"), "{e}");
}

#[test]
fn update_with_move_and_anchored_chunks() {
    let ops = ok(
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@ class A:\n def f():\n-    pass\n+    return 1\n@@ def g():\n-x\n*** End Patch",
    );
    assert_eq!(
        ops,
        vec![update(
            "a.py",
            Some("b.py"),
            vec![
                chunk(
                    Some("class A:"),
                    &["def f():", "    pass"],
                    &["def f():", "    return 1"],
                    false
                ),
                chunk(Some("def g():"), &["x"], &[], false),
            ]
        )]
    );
}

#[test]
fn first_chunk_may_omit_at_at_but_later_ones_may_not() {
    let ops = ok("*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch");
    assert_eq!(
        ops,
        vec![update("a", None, vec![chunk(None, &["x"], &["y"], false)])]
    );
    let e = err(
        "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End of File\nz\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(6));
    assert!(e.message.contains("'@@'"), "{e}");
}

#[test]
fn update_without_chunks_is_an_error() {
    let e = err(
        "*** Begin Patch\n*** Update File: a\n*** Delete File: b\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("has no changes"), "{e}");
}

#[test]
fn empty_line_inside_a_chunk_is_empty_context() {
    let ops = ok("*** Begin Patch\n*** Update File: a\n@@\n a\n\n-b\n+c\n*** End Patch");
    assert_eq!(
        ops,
        vec![update(
            "a",
            None,
            vec![chunk(None, &["a", "", "b"], &["a", "", "c"], false)]
        )]
    );
}

#[test]
fn indented_header_inside_a_chunk_is_context() {
    let ops = ok("*** Begin Patch\n*** Update File: a\n@@\n-x\n *** Add File: b\n*** End Patch");
    assert_eq!(
        ops,
        vec![update(
            "a",
            None,
            vec![chunk(
                None,
                &["x", "*** Add File: b"],
                &["*** Add File: b"],
                false
            )]
        )]
    );
}

#[test]
fn end_of_file_marker_ends_a_chunk() {
    let ops = ok(
        "*** Begin Patch\n*** Update File: a\n@@\n last\n+more\n*** End of File  \n\n@@ x\n-y\n*** End Patch",
    );
    assert_eq!(
        ops,
        vec![update(
            "a",
            None,
            vec![
                chunk(None, &["last"], &["last", "more"], true),
                chunk(Some("x"), &["y"], &[], false)
            ]
        )]
    );
}

#[test]
fn indented_end_of_file_is_context() {
    let ops = ok("*** Begin Patch\n*** Update File: a\n@@\n-x\n *** End of File\n*** End Patch");
    assert_eq!(
        ops,
        vec![update(
            "a",
            None,
            vec![chunk(
                None,
                &["x", "*** End of File"],
                &["*** End of File"],
                false
            )]
        )]
    );
}

#[test]
fn chunk_without_lines_is_an_error() {
    let e = err(
        "*** Begin Patch\n*** Update File: a\n@@ f\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("no lines"), "{e}");
    let e = err(
        "*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(4));
}

#[test]
fn unprefixed_line_in_a_chunk_says_what_the_prefixes_are() {
    let e = err(
        "*** Begin Patch\n*** Update File: a\n@@\n\tfoo\n*** End Patch",
        Mode::Strict,
    );
    assert_eq!(e.line, Some(4));
    assert!(
        e.message
            .contains("' ' (context), '-' (removed) or '+' (added)"),
        "{e}"
    );
}

#[test]
fn unified_diff_header_as_anchor_keeps_only_its_text() {
    let ops = ok(
        "*** Begin Patch\n*** Update File: a\n@@ -12,3 +12,4 @@ fn f() {\n-x\n@@ -1 +1 @@\n-y\n*** End Patch",
    );
    assert_eq!(
        ops,
        vec![update(
            "a",
            None,
            vec![
                chunk(Some("fn f() {"), &["x"], &[], false),
                chunk(None, &["y"], &[], false)
            ]
        )]
    );
}

#[test]
fn crlf_patch_text_reads_as_lf() {
    let ops = ok(
        "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** Update File: b\r\n@@ f\r\n-y\r\n+z\r\n*** End Patch\r\n",
    );
    assert_eq!(
        ops,
        vec![
            PatchOp::Add {
                path: "a".into(),
                contents: "x\n".into()
            },
            update("b", None, vec![chunk(Some("f"), &["y"], &["z"], false)])
        ]
    );
}

#[test]
fn a_lone_cr_is_content() {
    let ops = ok("*** Begin Patch\n*** Add File: a\n+x\ry\n*** End Patch");
    assert_eq!(
        ops,
        vec![PatchOp::Add {
            path: "a".into(),
            contents: "x\ry\n".into()
        }]
    );
}

#[test]
fn several_hunks_keep_their_order() {
    let ops = ok(
        "*** Begin Patch\n*** Delete File: z\n\n*** Add File: y\n+1\n*** Update File: x\n@@\n-2\n+3\n\n*** Delete File: w\n*** End Patch",
    );
    let kinds: Vec<&str> = ops
        .iter()
        .map(|op| match op {
            PatchOp::Add { path, .. } | PatchOp::Delete { path } | PatchOp::Update { path, .. } => {
                path.as_str()
            }
        })
        .collect();
    assert_eq!(kinds, ["z", "y", "x", "w"]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Any text built from the format's pieces parses or fails cleanly.
    #[test]
    fn never_panics(pieces in proptest::collection::vec(proptest::sample::select(vec![
        "*** Begin Patch\n", "*** End Patch\n", "*** Add File: a\n", "*** Delete File: b\n",
        "*** Update File: c\n", "*** Move to: d\n", "*** End of File\n", "@@\n", "@@ f\n",
        "@@ -1,2 +1 @@ g\n", " x\n", "-y\n", "+z\n", "\n", "\r\n", "bad\n", "<<EOF\n", "EOF\n",
        "*** Environment ID: e\n", "é", "\r",
    ]), 0..24)) {
        let text: String = pieces.concat();
        let _ = parse(&text, Mode::Strict);
        let _ = parse(&text, Mode::Lenient);
    }
}
