//! SEARCH/REPLACE blocks (`nib::edit::formats::search_replace`).
//!
//! - Conformance: every `search-replace` case of Aider's parse data
//!   (`tests/data/conformance/aider-parse.jsonl` and
//!   `aider-parse-chat-history.jsonl`, 401 real model replies) run through
//!   `parse`. Every case must pass except those in `DIFFERENCES`, where nib
//!   deliberately does something else; a listed case that starts passing
//!   fails the test, so the list never goes stale.
//! - The parser's rules one by one, on small inputs.

use std::fmt::Write as _;

use nib::edit::formats::Block;
use nib::edit::formats::search_replace::{Item, ParseOptions, parse};
use serde_json::Value;

const PARSE_DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/conformance/aider-parse.jsonl"
);
const HISTORY_DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/conformance/aider-parse-chat-history.jsonl"
);

/// Cases where nib deliberately differs from the peer: (case id, reason).
/// Keep in step with docs/conformance.md.
const DIFFERENCES: &[(&str, &str)] = &[];

// ---------------------------------------------------------------------------
// Conformance

struct Case {
    id: String,
    value: Value,
}

fn cases(path: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{path}:{}: not JSON: {e}", n + 1));
            let id = value["id"]
                .as_str()
                .unwrap_or_else(|| panic!("{path}:{}: no id", n + 1))
                .to_string();
            Case { id, value }
        })
        .filter(|c| c.value["format"] == "search-replace")
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn options(case: &Value) -> ParseOptions {
    let o = &case["options"];
    let mut opts = ParseOptions::default();
    if o["valid_fnames"].is_array() {
        opts.valid_fnames = strings(&o["valid_fnames"]);
    } else if o["chat_files"].is_array() {
        opts.valid_fnames = strings(&o["chat_files"]);
    }
    if let [open, close] = strings(&o["fence"]).as_slice() {
        opts.fence = (open.clone(), close.clone());
    }
    opts.shell_blocks = o["shell_blocks"].as_bool().unwrap_or(false);
    opts
}

fn expected_item(v: &Value) -> Result<Item, String> {
    if let Some(shell) = v.get("shell") {
        let shell = shell.as_str().ok_or("`shell` is not a string")?;
        return Ok(Item::Shell(shell.to_string()));
    }
    let field = |k: &str| {
        v[k].as_str()
            .map(String::from)
            .ok_or_else(|| format!("expected block has no string `{k}`: {v}"))
    };
    Ok(Item::Block(Block {
        path: field("path")?,
        search: field("search")?,
        replace: field("replace")?,
    }))
}

fn paths(items: &[Item]) -> Vec<&str> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Block(b) => Some(b.path.as_str()),
            Item::Shell(_) => None,
        })
        .collect()
}

/// Run one case; `Err` says how nib's result differs from the expectation.
fn run(case: &Case) -> Result<(), String> {
    let v = &case.value;
    let input = v["input"].as_str().ok_or("`input` is not a string")?;
    let result = parse(input, &options(v));
    let expect = &v["expect"];
    if expect["error"].as_bool() == Some(true) {
        return match result {
            Err(_) => Ok(()),
            Ok(items) => Err(format!("parsed, but the peer rejects it: {items:?}")),
        };
    }
    let items = result.map_err(|e| format!("rejected: {e}"))?;
    if let Some(want) = expect["parsed"].as_array() {
        let want = want
            .iter()
            .map(expected_item)
            .collect::<Result<Vec<_>, _>>()?;
        if items != want {
            let first = items
                .iter()
                .zip(&want)
                .position(|(g, w)| g != w)
                .unwrap_or(items.len().min(want.len()));
            return Err(format!(
                "got {} items, want {}; first difference at item {first}: got {:?}, want {:?}",
                items.len(),
                want.len(),
                items.get(first),
                want.get(first)
            ));
        }
        return Ok(());
    }
    // Partial expectations: the peer asserted only the count and/or paths.
    let got = paths(&items);
    if let Some(n) = expect["count"].as_u64()
        && got.len() as u64 != n
    {
        return Err(format!("got {} blocks, want {n}: {items:?}", got.len()));
    }
    if expect["paths"].is_array() {
        let want = strings(&expect["paths"]);
        if got != want {
            return Err(format!("got paths {got:?}, want {want:?}"));
        }
    } else if expect["count"].is_null() {
        return Err("`expect` has no parsed, count, paths or error".into());
    }
    Ok(())
}

/// Run every case of a file; panic with a report on any unexpected result.
fn check_file(path: &str, want_cases: usize) {
    let cases = cases(path);
    assert_eq!(
        cases.len(),
        want_cases,
        "{path}: number of search-replace cases"
    );
    let mut passed = 0;
    let mut report = String::new();
    for case in &cases {
        let listed = DIFFERENCES.iter().any(|(id, _)| *id == case.id);
        match (run(case), listed) {
            (Ok(()), false) => passed += 1,
            (Err(_), true) => {}
            (Ok(()), true) => {
                let _ = writeln!(
                    report,
                    "{}: passes but is listed in DIFFERENCES; remove it there and from \
                     docs/conformance.md",
                    case.id
                );
            }
            (Err(why), false) => {
                let _ = writeln!(report, "{}: {why}", case.id);
            }
        }
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    println!(
        "{name}: {passed} of {} search-replace cases pass",
        cases.len()
    );
    assert!(report.is_empty(), "{name} conformance failures:\n{report}");
}

#[test]
fn aider_parse_cases() {
    check_file(PARSE_DATA, 19);
}

#[test]
fn aider_chat_history_cases() {
    check_file(HISTORY_DATA, 401);
}

#[test]
fn differences_name_real_cases() {
    let all: Vec<String> = cases(PARSE_DATA)
        .into_iter()
        .chain(cases(HISTORY_DATA))
        .map(|c| c.id)
        .collect();
    for (id, reason) in DIFFERENCES {
        assert!(
            all.iter().any(|c| c == id),
            "DIFFERENCES names no case {id}"
        );
        assert!(!reason.is_empty(), "DIFFERENCES gives no reason for {id}");
    }
}

// ---------------------------------------------------------------------------
// The rules on small inputs

fn opts() -> ParseOptions {
    ParseOptions::default()
}

fn known(names: &[&str]) -> ParseOptions {
    ParseOptions {
        valid_fnames: names.iter().map(|s| s.to_string()).collect(),
        ..ParseOptions::default()
    }
}

fn block(path: &str, search: &str, replace: &str) -> Item {
    Item::Block(Block {
        path: path.into(),
        search: search.into(),
        replace: replace.into(),
    })
}

fn parsed(text: &str, opts: &ParseOptions) -> Vec<Item> {
    parse(text, opts).unwrap_or_else(|e| panic!("{text:?} did not parse: {e}"))
}

/// The path of the one block `text` holds.
fn path_of(text: &str, opts: &ParseOptions) -> String {
    match parsed(text, opts).as_slice() {
        [Item::Block(b)] => b.path.clone(),
        other => panic!("want one block, got {other:?}"),
    }
}

const BODY: &str = "<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n";

#[test]
fn a_block_with_its_name_before_it() {
    let text = format!("Change this:\n\nsrc/a.py\n{BODY}Done.\n");
    assert_eq!(
        parsed(&text, &opts()),
        [block("src/a.py", "old\n", "new\n")]
    );
}

#[test]
fn fences_are_optional_and_not_part_of_the_block() {
    let fenced = format!("src/a.py\n```python\n{BODY}```\n");
    let bare = format!("src/a.py\n{BODY}");
    assert_eq!(parsed(&fenced, &opts()), parsed(&bare, &opts()));
    assert_eq!(
        parsed(&bare, &opts()),
        [block("src/a.py", "old\n", "new\n")]
    );
}

#[test]
fn markers_take_five_to_nine_characters() {
    let five = "a.py\n<<<<< SEARCH\nold\n=====\nnew\n>>>>> REPLACE\n";
    let nine = "a.py\n<<<<<<<<< SEARCH\nold\n=========\nnew\n>>>>>>>>> REPLACE\n";
    for text in [five, nine] {
        assert_eq!(parsed(text, &opts()), [block("a.py", "old\n", "new\n")]);
    }
    // Four or ten are not markers: no block at all.
    let four = "a.py\n<<<< SEARCH\nold\n====\nnew\n>>>> REPLACE\n";
    let ten = "a.py\n<<<<<<<<<< SEARCH\nold\n==========\nnew\n>>>>>>>>>> REPLACE\n";
    assert_eq!(parsed(four, &opts()), []);
    assert_eq!(parsed(ten, &opts()), []);
}

#[test]
fn markers_may_be_indented_and_search_may_end_in_angle() {
    let text = "a.py\n  <<<<<<< SEARCH>  \nold\n  =======\nnew\n\t>>>>>>> REPLACE \n";
    assert_eq!(parsed(text, &opts()), [block("a.py", "old\n", "new\n")]);
}

#[test]
fn a_second_divider_may_close_a_block() {
    let text = "a.py\n<<<<<<< SEARCH\nold\n=======\nnew\n=======\n";
    assert_eq!(parsed(text, &opts()), [block("a.py", "old\n", "new\n")]);
}

#[test]
fn the_last_marker_needs_no_newline() {
    let text = "a.py\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE";
    assert_eq!(parsed(text, &opts()), [block("a.py", "old\n", "new\n")]);
}

#[test]
fn crlf_lines_keep_their_endings() {
    let text = "a.py\r\n<<<<<<< SEARCH\r\nold\r\n=======\r\nnew\r\n>>>>>>> REPLACE\r\n";
    assert_eq!(parsed(text, &opts()), [block("a.py", "old\r\n", "new\r\n")]);
}

#[test]
fn an_empty_search_is_a_block_with_empty_search() {
    let text = "new.txt\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n";
    assert_eq!(parsed(text, &opts()), [block("new.txt", "", "hello\n")]);
}

#[test]
fn the_name_is_stripped_of_markdown() {
    for line in [
        "# a.py",
        "### a.py",
        "`a.py`",
        "**a.py**",
        "a.py:",
        "## `a.py`:",
        "  a.py  ",
    ] {
        assert_eq!(
            path_of(&format!("{line}\n{BODY}"), &opts()),
            "a.py",
            "{line:?}"
        );
    }
}

#[test]
fn a_name_on_a_fence_line_needs_a_dot_or_slash() {
    assert_eq!(path_of(&format!("```a.py\n{BODY}"), &opts()), "a.py");
    assert_eq!(path_of(&format!("```src/a\n{BODY}"), &opts()), "src/a");
    // ```python is a language tag: the name comes from the line above.
    assert_eq!(
        path_of(&format!("a.py\n```python\n{BODY}"), &opts()),
        "a.py"
    );
}

#[test]
fn the_search_back_crosses_only_fence_lines() {
    // Name inside its own fence just above (three lines back, all fences).
    let deepseek = format!("```python\na.py\n```\n```python\n{BODY}");
    assert_eq!(path_of(&deepseek, &opts()), "a.py");
    // A blank line stops the search: no name, and no earlier block.
    let gap = format!("a.py\n\n{BODY}");
    assert!(parse(&gap, &opts()).is_err());
    // Only three lines back.
    let far = format!("a.py\n```\n```\n```\n{BODY}");
    assert!(parse(&far, &opts()).is_err());
}

#[test]
fn the_nearest_of_several_names_wins_when_none_is_known() {
    let text = format!("```\na.py\n```\n```\nb.py\n```\n{BODY}");
    assert_eq!(path_of(&text, &opts()), "b.py");
}

#[test]
fn a_known_name_beats_a_nearer_unknown_one() {
    let text = format!("a.py\n```b.py\n{BODY}");
    assert_eq!(path_of(&text, &known(&["a.py"])), "a.py");
    assert_eq!(path_of(&text, &opts()), "b.py");
}

#[test]
fn a_name_resolves_by_basename() {
    let text = format!("c.py\n{BODY}");
    assert_eq!(path_of(&text, &known(&["a.py", "src/c.py"])), "src/c.py");
}

#[test]
fn a_name_resolves_by_close_match() {
    let text = format!("src/mian.py\n{BODY}");
    assert_eq!(
        path_of(&text, &known(&["src/main.py", "README.md"])),
        "src/main.py"
    );
    // Not close enough: the name stays as written.
    let text = format!("lib/other.py\n{BODY}");
    assert_eq!(path_of(&text, &known(&["src/main.py"])), "lib/other.py");
}

#[test]
fn a_name_with_a_dot_beats_a_nearer_name_without() {
    let text = format!("a.py\n```Makefile/\n{BODY}");
    // "Makefile/" has a slash, so it is a name, but "a.py" has a dot.
    assert_eq!(path_of(&text, &opts()), "a.py");
    // With no dotted name, the nearest is taken.
    let text = format!("Makefile\n{BODY}");
    assert_eq!(path_of(&text, &opts()), "Makefile");
}

#[test]
fn a_block_that_creates_a_file_keeps_its_name() {
    let text = "src/c.py\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n";
    let opts = known(&["lib/c.py", "src/b.py"]);
    assert_eq!(parsed(text, &opts), [block("src/c.py", "", "x\n")]);
}

#[test]
fn a_block_without_a_name_takes_the_previous_one() {
    let text = format!("a.py\n{BODY}\nand then\n\n{BODY}b.py\n{BODY}\n{BODY}");
    assert_eq!(paths_of(&text), ["a.py", "a.py", "b.py", "b.py"]);
}

fn paths_of(text: &str) -> Vec<String> {
    parsed(text, &opts())
        .into_iter()
        .map(|i| match i {
            Item::Block(b) => b.path,
            Item::Shell(s) => panic!("unexpected shell item {s:?}"),
        })
        .collect()
}

#[test]
fn a_custom_fence_is_recognised_and_backticks_still_are() {
    let source = ParseOptions {
        fence: ("<source>".into(), "</source>".into()),
        ..ParseOptions::default()
    };
    let text = format!("a.py\n<source>python\n{BODY}</source>\n");
    assert_eq!(path_of(&text, &source), "a.py");
    let text = format!("<source>a.py\n{BODY}</source>\n");
    assert_eq!(path_of(&text, &source), "a.py");
    let text = format!("a.py\n```python\n{BODY}```\n");
    assert_eq!(path_of(&text, &source), "a.py");
}

#[test]
fn shell_blocks_are_reported_only_when_asked() {
    let text = format!("a.py\n{BODY}\nThen run:\n```bash\nmake test\nmake lint\n```\n");
    let with = ParseOptions {
        shell_blocks: true,
        ..ParseOptions::default()
    };
    assert_eq!(
        parsed(&text, &with),
        [
            block("a.py", "old\n", "new\n"),
            Item::Shell("make test\nmake lint\n".into())
        ]
    );
    assert_eq!(parsed(&text, &opts()), [block("a.py", "old\n", "new\n")]);
}

#[test]
fn a_shell_fence_holding_an_edit_is_an_edit() {
    let with = ParseOptions {
        shell_blocks: true,
        ..ParseOptions::default()
    };
    let text = "```sh\nrun.sh\n<<<<<<< SEARCH\n=======\necho hi\n>>>>>>> REPLACE\n```\n";
    assert_eq!(parsed(text, &with), [block("run.sh", "", "echo hi\n")]);
}

#[test]
fn no_blocks_is_an_empty_list() {
    assert_eq!(parsed("Nothing to change here.\n", &opts()), []);
    assert_eq!(parsed("", &opts()), []);
}

#[test]
fn a_missing_name_says_where_to_put_it() {
    let text = format!("Here you go:\n\n{BODY}");
    let err = parse(&text, &opts()).expect_err("no file name");
    assert_eq!(err.line, Some(3));
    let msg = err.to_string();
    assert!(msg.starts_with("line 3: "), "{msg}");
    assert!(msg.contains("no file name"), "{msg}");
    assert!(
        msg.contains("path alone on the line before the block"),
        "{msg}"
    );
}

#[test]
fn a_missing_divider_is_reported_at_its_block() {
    let text = "intro\na.py\n<<<<<<< SEARCH\nold\n>>>>>>> REPLACE\n";
    let err = parse(text, &opts()).expect_err("no divider");
    assert_eq!(err.line, Some(3));
    let msg = err.to_string();
    assert!(msg.contains("no ======= divider"), "{msg}");
    assert!(
        msg.contains(
            "<<<<<<< SEARCH, the exact lines to find, =======, the new lines, >>>>>>> REPLACE"
        ),
        "{msg}"
    );
}

#[test]
fn a_missing_divider_names_the_next_block() {
    let text = format!("a.py\n<<<<<<< SEARCH\nold\n>>>>>>> REPLACE\n\n{BODY}\n");
    // The second block's divider closes the first one's SEARCH part, and
    // its REPLACE closes the block: that parses (as the peer does).
    assert_eq!(parsed(&text, &opts()).len(), 1);
    let text = "a.py\n<<<<<<< SEARCH\nold\n<<<<<<< SEARCH\nold\n";
    let err = parse(text, &opts()).expect_err("no divider");
    assert_eq!(err.line, Some(2));
    assert!(
        err.message
            .contains("before the next <<<<<<< SEARCH (line 4)"),
        "{err}"
    );
}

#[test]
fn a_cut_off_block_is_reported_at_its_start() {
    let text = "a.py\n<<<<<<< SEARCH\nold\n=======\nnew\nmore new\n";
    let err = parse(text, &opts()).expect_err("not closed");
    assert_eq!(err.line, Some(2));
    let msg = err.to_string();
    assert!(
        msg.contains("no >>>>>>> REPLACE after its ======= (line 4)"),
        "{msg}"
    );
    assert!(msg.contains("resend the whole block"), "{msg}");
}

#[test]
fn an_error_in_a_later_block_fails_the_whole_parse() {
    let text = format!("a.py\n{BODY}\na.py\n<<<<<<< SEARCH\nold\n");
    let err = parse(&text, &opts()).expect_err("second block open");
    assert_eq!(err.line, Some(9));
}
