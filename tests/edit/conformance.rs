//! pi-mono's edit-tool cases (`tests/data/conformance/pi-mono.jsonl`) run
//! through `apply`.
//!
//! Every `edit-tool` case must pass, except those in `DIFFERENCES`: the
//! cases where nib deliberately does something else. That list and the table
//! in `docs/conformance.md` name the same cases; a test checks it. A listed
//! case that starts passing fails the test too, so the list never goes stale.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use nib::edit::{Edit, ErrorKind, Outcome, apply};
use serde_json::Value;

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/conformance/pi-mono.jsonl"
);
const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/conformance.md");

/// Cases where nib deliberately differs from the peer: (case id, reason).
/// Keep in step with the table in docs/conformance.md.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "pi-duplicates-across-crlf-lf",
        "old sent with LF matches the LF block byte for byte; the CRLF copy matches only with \
         other line endings, so it is not a second exact match",
    ),
    (
        "pi-fuzzy-fullwidth-punctuation-chinese",
        "new's parentheses stand where old's matched the file's fullwidth ones: nib writes \
         the file's （）",
    ),
    (
        "pi-fuzzy-smart-single-quotes",
        "new's quotes stand where old's matched the file's curly ones: nib writes the file's \
         ‘’",
    ),
    (
        "pi-fuzzy-smart-double-quotes",
        "new's quotes stand where old's matched the file's curly ones: nib writes the file's \
         “”",
    ),
    (
        "pi-fuzzy-nbsp",
        "new keeps old's space, which matched the file's no-break space: nib keeps the file's \
         no-break space there",
    ),
    (
        "pi-fuzzy-unicode-dashes",
        "new's `--` brings in a hyphen where old's hyphen stood for the file's em dash: nib \
         cannot tell which new means and refuses",
    ),
];

/// The error each error case must fail with, in nib's own terms. The peer's
/// wording (`error_contains`) is advisory and not checked.
const ERROR_KINDS: &[(&str, ErrorKind)] = &[
    ("pi-fail-if-text-not-found", ErrorKind::NotFound),
    (
        "pi-fail-if-text-appears-multiple-times",
        ErrorKind::Ambiguous,
    ),
    ("pi-fail-when-not-found-even-fuzzy", ErrorKind::NotFound),
    (
        "pi-duplicates-after-fuzzy-normalization",
        ErrorKind::Ambiguous,
    ),
    ("pi-duplicates-across-crlf-lf", ErrorKind::Ambiguous),
];

struct Case {
    id: String,
    value: Value,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(DATA).unwrap_or_else(|e| panic!("reading {DATA}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{DATA}:{}: not JSON: {e}", i + 1));
            let id = value["id"]
                .as_str()
                .expect("every case has an id")
                .to_string();
            Case { id, value }
        })
        .collect()
}

fn str_field<'a>(v: &'a Value, key: &str, id: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{id}: `{key}` is not a string"))
}

/// Run one case; `Err` says how nib's result differs from the expectation.
fn run(case: &Case) -> Result<(), String> {
    let (v, id) = (&case.value, case.id.as_str());
    let input = &v["input"];
    let path = str_field(input, "path", id);
    let before = v["files"][path]
        .as_str()
        .ok_or_else(|| format!("no file {path:?} in `files`"))?;
    let edit = Edit {
        old: str_field(input, "old", id).to_string(),
        new: str_field(input, "new", id).to_string(),
        replace_all: input["replace_all"].as_bool().unwrap_or(false),
    };
    let result = apply(before, &[edit], &[]);
    let expect = &v["expect"];
    if expect["error"].as_bool() == Some(true) {
        let want = ERROR_KINDS
            .iter()
            .find(|(c, _)| *c == id)
            .map(|(_, k)| *k)
            .ok_or("error case missing from ERROR_KINDS")?;
        return match result {
            Err(e) if e.kind == want => Ok(()),
            Err(e) => Err(format!("failed as {:?}, want {want:?}: {e}", e.kind)),
            Ok(a) => Err(format!(
                "applied ({:?}) but the peer refuses; nib wrote {:?}",
                a.outcomes, a.text
            )),
        };
    }
    let files = expect["files"]
        .as_object()
        .ok_or("`expect` has neither `files` nor `error`")?;
    let applied = result.map_err(|e| format!("refused: {e}"))?;
    for (p, want) in files {
        let got = if p == path {
            applied.text.as_str()
        } else {
            before
        };
        match want.as_str() {
            Some(want) if want == got => {}
            Some(want) => {
                return Err(format!(
                    "{p}: got {got:?}, want {want:?} (outcomes {:?})",
                    applied.outcomes
                ));
            }
            None => return Err(format!("{p}: the case expects it deleted")),
        }
    }
    if !matches!(applied.outcomes[..], [Outcome::Applied { count: 1, .. }]) {
        return Err(format!("outcomes {:?}", applied.outcomes));
    }
    Ok(())
}

#[test]
fn pi_mono_edit_tool_cases() {
    let cases = cases();
    let edit_tool: Vec<&Case> = cases
        .iter()
        .filter(|c| c.value["format"] == "edit-tool")
        .collect();
    assert_eq!(
        edit_tool.len(),
        18,
        "pi-mono.jsonl should hold 18 edit-tool cases"
    );
    let mut report = String::new();
    for case in &edit_tool {
        let differs = DIFFERENCES.iter().any(|(id, _)| *id == case.id);
        match (run(case), differs) {
            (Ok(()), false) | (Err(_), true) => {}
            (Err(why), false) => {
                let _ = writeln!(report, "{}: {why}", case.id);
            }
            (Ok(()), true) => {
                let _ = writeln!(
                    report,
                    "{}: listed as a deliberate difference but passes; remove it from \
                     DIFFERENCES and docs/conformance.md",
                    case.id
                );
            }
        }
    }
    assert!(report.is_empty(), "conformance failures:\n{report}");
}

#[test]
fn every_listed_case_exists() {
    let ids: BTreeSet<String> = cases().into_iter().map(|c| c.id).collect();
    for (id, _) in DIFFERENCES {
        assert!(ids.contains(*id), "DIFFERENCES names unknown case {id}");
    }
    for (id, _) in ERROR_KINDS {
        assert!(ids.contains(*id), "ERROR_KINDS names unknown case {id}");
    }
}

/// Case ids in the first column of the deliberate-differences table of
/// docs/conformance.md: rows of the section "## Deliberate differences".
fn documented_differences(doc: &str) -> BTreeSet<String> {
    let mut in_section = false;
    let mut ids = BTreeSet::new();
    for line in doc.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            in_section = title.trim().eq_ignore_ascii_case("deliberate differences");
            continue;
        }
        if !in_section || !line.trim_start().starts_with('|') {
            continue;
        }
        let first = line.trim().trim_start_matches('|').split('|').next();
        if let Some(id) = first
            .map(str::trim)
            .and_then(|c| c.strip_prefix('`'))
            .and_then(|c| c.strip_suffix('`'))
        {
            ids.insert(id.to_string());
        }
    }
    ids
}

#[test]
fn differences_match_the_doc() {
    let doc = std::fs::read_to_string(DOC).unwrap_or_else(|e| panic!("reading {DOC}: {e}"));
    assert!(
        doc.to_ascii_lowercase()
            .contains("## deliberate differences"),
        "docs/conformance.md has no \"## Deliberate differences\" section"
    );
    let documented: BTreeSet<String> = documented_differences(&doc)
        .into_iter()
        .filter(|id| id.starts_with("pi-"))
        .collect();
    let listed: BTreeSet<String> = DIFFERENCES.iter().map(|(id, _)| id.to_string()).collect();
    assert_eq!(
        documented, listed,
        "the pi-mono rows of docs/conformance.md's table and DIFFERENCES in \
         tests/edit/conformance.rs must name the same cases"
    );
    for (id, reason) in DIFFERENCES {
        assert!(!reason.trim().is_empty(), "{id}: give the reason");
    }
}
