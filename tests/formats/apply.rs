//! Applying the text formats: Codex's V4A apply cases and Aider's
//! SEARCH/REPLACE apply cases (`tests/data/conformance/codex.jsonl`,
//! `aider.jsonl`) run through the real binary, `nib apply --format ...`, on
//! temp workspaces, comparing every file's bytes afterwards.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

const NIB: &str = env!("CARGO_BIN_EXE_nib");
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/conformance/");

const FIRST_OF_SEVERAL: &str = "old matches several places: nib refuses (add surrounding \
                                lines) rather than take the first";
const FINAL_NEWLINE: &str =
    "nib keeps a missing final newline missing; the peer adds one to every file it updates";
const LINE_ENDINGS: &str = "nib never rewrites line endings: a CRLF file stays CRLF, where the \
                            peer's default mode writes the patched lines with LF";
const CREATE_EXISTING: &str = "Add File on an existing file is refused (\"use Update\"), so a \
                               file is never replaced unseen; the peer overwrites it";
const OVERLAP: &str = "a second chunk that re-matches text the first already changed fails; \
                       the peer silently drops the overlapping replacement";

/// Cases where nib deliberately differs from the peer: (case id, reason).
/// A listed case that starts passing fails the test, so the list stays true.
pub const DIFFERENCES: &[(&str, &str)] = &[
    (
        "codex-scenario-011_add_overwrites_existing_file",
        CREATE_EXISTING,
    ),
    ("codex-cli-add-overwrites-existing-file", CREATE_EXISTING),
    (
        "codex-cli-allows-overlapping-eof-chunks-in-legacy-mode",
        OVERLAP,
    ),
    (
        "codex-cli-uses-legacy-line-handling-without-rollout-env",
        LINE_ENDINGS,
    ),
    (
        "codex-cli-uses-crlf-for-new-trailing-newline",
        FINAL_NEWLINE,
    ),
    (
        "codex-cli-updates-file-appends-trailing-newline",
        FINAL_NEWLINE,
    ),
    (
        "codex-core-normalizes-crlf-without-preserve-feature",
        LINE_ENDINGS,
    ),
    (
        "aider-replace-multiple-matches-first-only",
        FIRST_OF_SEVERAL,
    ),
    (
        "aider-replace-multiple-matches-missing-whitespace-first-only",
        FIRST_OF_SEVERAL,
    ),
];

fn write_tree(root: &Path, case: &Value) {
    for (path, content) in case["files"].as_object().unwrap() {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, content.as_str().unwrap()).unwrap();
    }
    for dir in case["dirs"].as_array().into_iter().flatten() {
        fs::create_dir_all(root.join(dir.as_str().unwrap())).unwrap();
    }
}

/// Every file under `root` (outside `.nib/`), by relative path.
fn read_tree(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            if rel == ".nib" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = fs::read(&path).unwrap();
                out.insert(rel, String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Runs one case; Ok when nib's result is the expected one, else what
/// differed.
fn run_case(case: &Value) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_tree(root, case);
    let before = read_tree(root);
    let format = match case["format"].as_str().unwrap() {
        "v4a-patch" => "v4a",
        other => other,
    };
    let mut cmd = Command::new(NIB);
    cmd.args(["apply", "--json", "--format", format, "--root"])
        .arg(root)
        .current_dir(root);
    let opts = &case["options"];
    for f in opts["chat_files"]
        .as_array()
        .into_iter()
        .chain(opts["valid_fnames"].as_array())
        .flatten()
    {
        cmd.args(["--known-file", f.as_str().unwrap()]);
    }
    if opts["dry_run"] == true {
        cmd.arg("--dry-run");
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = case["input"].as_str().unwrap().to_string();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    let code = out.status.code().unwrap_or(-1);
    let said = format!(
        "exit {code}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let after = read_tree(root);
    let expect = &case["expect"];
    if expect["error"] == true {
        if code != 1 {
            return Err(format!("expected a failure (exit 1); {said}"));
        }
        if after != before {
            return Err(format!("a failure changed files: {after:?}\n{said}"));
        }
        return Ok(());
    }
    if code != 0 {
        return Err(format!("expected success; {said}"));
    }
    let mut want = before.clone();
    for (path, content) in expect["files"].as_object().unwrap() {
        match content.as_str() {
            Some(text) => want.insert(path.clone(), text.to_string()),
            None => want.remove(path),
        };
    }
    if after != want {
        return Err(format!(
            "files differ:\n  want {want:?}\n  got  {after:?}\n{said}"
        ));
    }
    Ok(())
}

fn run_file(name: &str) -> (usize, usize) {
    let text = fs::read_to_string(format!("{DIR}{name}")).unwrap();
    let (mut passed, mut differ) = (0, 0);
    let mut problems = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap();
        let listed = DIFFERENCES.iter().any(|(d, _)| *d == id);
        match (run_case(&case), listed) {
            (Ok(()), false) => passed += 1,
            (Err(_), true) => differ += 1,
            (Ok(()), true) => problems.push(format!(
                "{id}: listed in DIFFERENCES but passes; remove it from the list"
            )),
            (Err(e), false) => problems.push(format!("{id}: {e}")),
        }
    }
    eprintln!("{name}: {passed} passed, {differ} differ on purpose");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    (passed, differ)
}

#[test]
fn codex_apply_cases() {
    let (passed, differ) = run_file("codex.jsonl");
    assert_eq!(passed + differ, 81);
}

#[test]
fn aider_apply_cases() {
    let (passed, differ) = run_file("aider.jsonl");
    assert_eq!(passed + differ, 9);
}
