//! The unified diff parser (`nib::edit::formats::udiff`): Aider's udiff
//! parser cases (`tests/data/conformance/aider-parse.jsonl`, those with
//! `format == "udiff"`) run as data, then each rule on a small input.

use nib::edit::formats::udiff::parse;
use nib::edit::formats::{DiffFile, DiffHunk, FormatError};
use serde_json::{Value, json};

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/conformance/aider-parse.jsonl"
);

/// Cases where nib deliberately differs from Aider: (case id, reason).
/// A listed case that starts passing fails the test, so the list stays true.
const DIFFERENCES: &[(&str, &str)] = &[];

/// Aider's form: one `{"path", "hunk"}` per hunk, the path from `+++`
/// (from `---` when `+++` is /dev/null).
fn to_json(files: &[DiffFile]) -> Vec<Value> {
    files
        .iter()
        .flat_map(|f| {
            let path = f.new_path.as_ref().or(f.old_path.as_ref());
            f.hunks
                .iter()
                .map(move |h| json!({"path": path, "hunk": h.lines}))
        })
        .collect()
}

/// Why a case fails, or `None` when nib gives the expected result.
fn check(case: &Value) -> Option<String> {
    let input = case["input"].as_str()?;
    let expect = &case["expect"];
    let result = parse(input);
    if expect["error"] == json!(true) {
        return result
            .ok()
            .map(|files| format!("parsed, expected an error: {files:?}"));
    }
    let hunks = match result {
        Ok(files) => to_json(&files),
        Err(e) => return Some(format!("error: {e}")),
    };
    if let Some(parsed) = expect.get("parsed") {
        let got = Value::Array(hunks);
        return (&got != parsed).then(|| format!("parsed {got}\nexpected {parsed}"));
    }
    let mut why = Vec::new();
    if let Some(count) = expect.get("count")
        && json!(hunks.len()) != *count
    {
        why.push(format!("{} hunks, expected {count}", hunks.len()));
    }
    if let Some(paths) = expect.get("paths") {
        let got: Vec<&Value> = hunks.iter().map(|h| &h["path"]).collect();
        if json!(got) != *paths {
            why.push(format!("paths {got:?}, expected {paths}"));
        }
    }
    if let Some(count) = expect.get("first_hunk_line_count") {
        let got = hunks
            .first()
            .map(|h| h["hunk"].as_array().map_or(0, Vec::len));
        if got.map(|n| json!(n)).as_ref() != Some(count) {
            why.push(format!("first hunk has {got:?} lines, expected {count}"));
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

#[test]
fn aider_udiff_parse_cases() {
    let text = std::fs::read_to_string(DATA).unwrap_or_else(|e| panic!("reading {DATA}: {e}"));
    let mut problems = Vec::new();
    let mut ids = Vec::new();
    let mut passed = 0;
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let case: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{DATA}:{}: {e}", i + 1));
        if case["format"] != "udiff" {
            continue;
        }
        let id = case["id"]
            .as_str()
            .expect("every case has an id")
            .to_string();
        let listed = DIFFERENCES.iter().any(|(d, _)| *d == id);
        match (check(&case), listed) {
            (None, false) => passed += 1,
            (None, true) => problems.push(format!("{id}: listed as a difference but passes")),
            (Some(_), true) => {}
            (Some(why), false) => problems.push(format!("{id}: {why}")),
        }
        ids.push(id);
    }
    for (id, _) in DIFFERENCES {
        assert!(ids.iter().any(|i| i == id), "{id} is not a udiff case");
    }
    assert_eq!(ids.len(), 4, "aider-parse.jsonl has 4 udiff cases");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert_eq!(passed + DIFFERENCES.len(), ids.len());
}

// ---- the rules, one by one ----

fn ok(text: &str) -> Vec<DiffFile> {
    parse(text).unwrap_or_else(|e| panic!("{e}\n---\n{text}"))
}

fn err(text: &str) -> FormatError {
    match parse(text) {
        Ok(files) => panic!("parsed {files:?}\n---\n{text}"),
        Err(e) => e,
    }
}

fn only_hunk(files: &[DiffFile]) -> &DiffHunk {
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].hunks.len(), 1, "{files:?}");
    &files[0].hunks[0]
}

fn lines(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| s.to_string()).collect()
}

fn path(p: &str) -> Option<String> {
    Some(p.to_string())
}

#[test]
fn plain_diff_with_numbers() {
    let files = ok("--- a.txt\n+++ a.txt\n@@ -3,2 +3,3 @@\n one\n-two\n+2\n+two\n");
    assert_eq!(
        files,
        vec![DiffFile {
            old_path: path("a.txt"),
            new_path: path("a.txt"),
            hunks: vec![DiffHunk {
                old_start: Some(3),
                new_start: Some(3),
                lines: lines(&[" one\n", "-two\n", "+2\n", "+two\n"]),
                notes: vec![],
            }]
        }]
    );
}

#[test]
fn counts_default_to_one_and_section_text_is_ignored() {
    let files = ok("--- a\n+++ a\n@@ -7 +7 @@ fn main() {\n-x\n+y\n");
    let hunk = only_hunk(&files);
    assert_eq!((hunk.old_start, hunk.new_start), (Some(7), Some(7)));
    assert!(hunk.notes.is_empty(), "{:?}", hunk.notes);
}

#[test]
fn bare_hunk_headers_have_no_numbers() {
    for header in ["@@ ... @@", "@@", "@@ @@", "@@ -x +y @@"] {
        let files = ok(&format!("--- a\n+++ a\n{header}\n-x\n+y\n"));
        let hunk = only_hunk(&files);
        assert_eq!((hunk.old_start, hunk.new_start), (None, None), "{header}");
        assert_eq!(hunk.lines, lines(&["-x\n", "+y\n"]));
    }
}

#[test]
fn git_prefixes_are_dropped_only_when_the_pair_uses_them() {
    let files = ok("--- a/src/x.rs\n+++ b/src/x.rs\n@@\n-x\n");
    assert_eq!(files[0].old_path, path("src/x.rs"));
    assert_eq!(files[0].new_path, path("src/x.rs"));

    // Both sides "a/": a real directory named a.
    let files = ok("--- a/x.rs\n+++ a/x.rs\n@@\n-x\n");
    assert_eq!(files[0].new_path, path("a/x.rs"));

    let files = ok("--- /dev/null\n+++ b/new.rs\n@@ -0,0 +1 @@\n+x\n");
    assert_eq!(files[0].old_path, None);
    assert_eq!(files[0].new_path, path("new.rs"));
    assert_eq!(files[0].hunks[0].old_start, Some(0));
}

#[test]
fn dev_null_means_created_or_deleted() {
    let files = ok("--- old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n");
    assert_eq!(files[0].old_path, path("old.txt"));
    assert_eq!(files[0].new_path, None);
    let e = err("--- /dev/null\n+++ /dev/null\n@@\n+x\n");
    assert_eq!(e.line, Some(1));
}

#[test]
fn timestamps_after_a_tab_are_ignored_and_quoted_paths_unquoted() {
    let files = ok(
        "--- dir name/f.txt\t2024-01-01 10:00:00.000 +0000\n+++ \"b/dir name/\\\"q\\\".txt\"\t2024-01-02\n@@\n-x\n",
    );
    assert_eq!(files[0].old_path, path("dir name/f.txt"));
    assert_eq!(files[0].new_path, path("b/dir name/\"q\".txt"));
}

#[test]
fn fenced_diff_inside_prose() {
    let text = "I'll fix it.\n\n```diff\n--- a.py\n+++ a.py\n@@ ... @@\n def f():\n-    pass\n+    return 1\n```\n\nThat's all: the --- and @@ here are prose.\n";
    let files = ok(text);
    assert_eq!(
        only_hunk(&files).lines,
        lines(&[" def f():\n", "-    pass\n", "+    return 1\n"])
    );
}

#[test]
fn unfenced_diff_ends_at_prose_after_an_empty_line() {
    let files = ok("Change:\n--- a\n+++ a\n@@\n-x\n+y\n\nThis replaces x.\n");
    assert_eq!(only_hunk(&files).lines, lines(&["-x\n", "+y\n"]));
}

#[test]
fn unfenced_diff_with_met_counts_ends_at_an_empty_line() {
    let files =
        ok("--- a\n+++ a\n@@ -1 +1 @@\n-x\n+y\n\n- this swaps x for y\n+ and nothing else\n");
    assert_eq!(only_hunk(&files).lines, lines(&["-x\n", "+y\n"]));
    // In a fence the empty line is blank context, counts or not (noted).
    let files = ok("```diff\n--- a\n+++ a\n@@ -1 +1 @@\n-x\n+y\n\n-z\n```\n");
    assert_eq!(
        only_hunk(&files).lines,
        lines(&["-x\n", "+y\n", " \n", "-z\n"])
    );
    assert_eq!(only_hunk(&files).notes.len(), 1);
}

#[test]
fn empty_line_inside_a_hunk_is_blank_context() {
    let files = ok("--- a\n+++ a\n@@\n one\n\n-two\n");
    assert_eq!(only_hunk(&files).lines, lines(&[" one\n", " \n", "-two\n"]));
}

#[test]
fn trailing_empty_lines_separate_unless_the_counts_claim_them() {
    let files = ok("```diff\n--- a\n+++ a\n@@\n-x\n+y\n\n\n```\n");
    assert_eq!(only_hunk(&files).lines, lines(&["-x\n", "+y\n"]));

    let files = ok("--- a\n+++ a\n@@ -1,2 +1,2 @@\n-x\n+y\n\n\n--- b\n+++ b\n@@\n-z\n");
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].hunks[0].lines, lines(&["-x\n", "+y\n", " \n"]));
    assert!(
        files[0].hunks[0].notes.is_empty(),
        "{:?}",
        files[0].hunks[0].notes
    );
}

#[test]
fn counts_that_disagree_are_noted_not_refused() {
    let files = ok("--- a\n+++ a\n@@ -1,5 +1,5 @@\n-x\n+y\n");
    let hunk = only_hunk(&files);
    assert_eq!(hunk.lines, lines(&["-x\n", "+y\n"]));
    assert_eq!(hunk.notes.len(), 1);
    assert!(hunk.notes[0].starts_with("line 3: "), "{:?}", hunk.notes);
    assert!(
        hunk.notes[0].contains("5 old and 5 new"),
        "{:?}",
        hunk.notes
    );
}

#[test]
fn no_newline_at_end_of_file() {
    let files = ok(
        "--- a\n+++ a\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n",
    );
    let hunk = only_hunk(&files);
    assert_eq!(hunk.lines, lines(&["-old", "+new"]));
    assert_eq!(hunk.notes.len(), 2, "{:?}", hunk.notes);
    assert!(hunk.notes[0].contains("no newline"), "{:?}", hunk.notes);

    let e = err("--- a\n+++ a\n@@\n\\ No newline at end of file\n");
    assert_eq!(e.line, Some(4));
}

#[test]
fn several_files_and_hunks() {
    let files =
        ok("--- a\n+++ a\n@@ -1 +1 @@\n-1\n+2\n@@ -9 +9 @@\n-3\n+4\n--- b\n+++ b\n@@\n-5\n");
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].hunks.len(), 2);
    assert_eq!(files[0].hunks[1].old_start, Some(9));
    assert!(files[0].hunks[1].notes.is_empty());
    assert_eq!(files[1].new_path, path("b"));
}

#[test]
fn git_header_lines_are_skipped() {
    let text = "diff --git a/x.rs b/x.rs\nindex 83db48f..bf269f4 100644\n--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/n.rs b/n.rs\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/n.rs\n@@ -0,0 +1 @@\n+n\n";
    let files = ok(text);
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].new_path, path("x.rs"));
    assert_eq!(files[0].hunks[0].lines, lines(&["-a\n", "+b\n"]));
    assert_eq!(files[1].old_path, None);
    assert_eq!(files[1].new_path, path("n.rs"));
}

#[test]
fn a_removed_line_starting_with_dashes_is_not_a_header() {
    let files = ok("--- q.sql\n+++ q.sql\n@@\n--- a comment\n+-- new comment\n");
    assert_eq!(
        only_hunk(&files).lines,
        lines(&["--- a comment\n", "+-- new comment\n"])
    );
}

#[test]
fn fence_inside_a_markdown_context_line_is_context() {
    let files = ok("```diff\n--- r.md\n+++ r.md\n@@\n ```rust\n-x\n+y\n ```\n```\n");
    assert_eq!(
        only_hunk(&files).lines,
        lines(&[" ```rust\n", "-x\n", "+y\n", " ```\n"])
    );
}

#[test]
fn crlf_reads_as_lf() {
    let files = ok("--- a\r\n+++ a\r\n@@ -1 +1 @@\r\n-x\r\n+y\r\n");
    assert_eq!(files[0].new_path, path("a"));
    assert_eq!(only_hunk(&files).lines, lines(&["-x\n", "+y\n"]));
}

#[test]
fn lines_right_after_the_header_form_a_hunk() {
    let files = ok("--- a\n+++ a\n-x\n+y\n");
    let hunk = only_hunk(&files);
    assert_eq!(hunk.lines, lines(&["-x\n", "+y\n"]));
    assert_eq!(hunk.notes.len(), 1, "{:?}", hunk.notes);
}

#[test]
fn a_hunk_in_a_later_fence_belongs_to_the_last_file() {
    let files = ok("```diff\n--- a\n+++ a\n@@\n-x\n```\nAnd:\n```diff\n@@\n-y\n```\n");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].hunks.len(), 2);
    assert!(files[0].hunks[0].notes.is_empty());
    assert!(
        files[0].hunks[1].notes[0].contains("'a', the file named last"),
        "{:?}",
        files[0].hunks[1].notes
    );
}

#[test]
fn text_without_a_diff_is_an_error() {
    let e = err("Sure, I changed the function as asked.\n\n```python\nx = 1\n```\n");
    assert_eq!(e.line, None);
    assert!(e.message.contains("no unified diff"), "{e}");
    assert!(e.message.contains("--- path"), "{e}");
}

#[test]
fn hunk_before_any_header_is_an_error() {
    let e = err("```diff\n@@ -1 +1 @@\n-x\n+y\n```\n");
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("before any file header"), "{e}");
}

#[test]
fn unknown_prefix_in_a_hunk_names_the_line_and_the_prefixes() {
    let e = err("```diff\n--- a\n+++ a\n@@\n-x\n*y\n```\n");
    assert_eq!(e.line, Some(6));
    assert!(e.message.contains("'*y'"), "{e}");
    assert!(
        e.message
            .contains("' ' (context), '-' (removed) or '+' (added)"),
        "{e}"
    );

    // In a fence, an empty line does not end the diff.
    let e = err("```diff\n--- a\n+++ a\n@@\n-x\n\nnote\n```\n");
    assert_eq!(e.line, Some(7));

    // Outside a fence, prose right after a hunk line is an error too.
    let e = err("--- a\n+++ a\n@@\n-x\nDone.\n");
    assert_eq!(e.line, Some(5));
}

#[test]
fn header_without_hunks_is_an_error() {
    let e = err("```diff\n--- a\n+++ a\n```\n");
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("no hunks"), "{e}");
    let e = err("--- a\n+++ a\nsome text\n");
    assert_eq!(e.line, Some(3));
    let e = err("--- a\n+++ a\n@@\n--- b\n+++ b\n@@\n-x\n");
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("no lines"), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Any text built from the format's pieces parses or fails cleanly.
    #[test]
    fn never_panics(pieces in proptest::collection::vec(proptest::sample::select(vec![
        "--- a/x\n", "+++ b/x\n", "--- /dev/null\n", "+++ /dev/null\n", "@@ -1,2 +1,3 @@\n",
        "@@ ... @@\n", "@@\n", " c\n", "-d\n", "+e\n", "\n", "\\ No newline at end of file\n",
        "```diff\n", "```\n", "diff --git a/x b/x\n", "index 1..2\n", "prose\n", "\"q\\", "\t", "é",
        "\r\n", "@@ -99999999999999999999999 +1 @@\n",
    ]), 0..24)) {
        let text: String = pieces.concat();
        let _ = parse(&text);
    }
}
