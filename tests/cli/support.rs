//! The cli binary's helpers: the shared ones (`tests/support/mod.rs`),
//! and `nib apply`'s reports, call builders and `Ws`'s apply and undo.

#[path = "../support/mod.rs"]
mod shared;
pub use shared::*;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::{Value, json};

impl Run {
    /// The `--json` reports on stdout, one per line, each checked to have
    /// the documented keys with the documented types.
    pub fn reports(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}\n{self:?}"));
                check_report(&v);
                v
            })
            .collect()
    }

    /// The reports' statuses, in order.
    pub fn statuses(&self) -> Vec<String> {
        self.reports()
            .iter()
            .map(|r| r["status"].as_str().unwrap().to_string())
            .collect()
    }
}

/// A report has path, status, message, diff and notes, with those types.
fn check_report(r: &Value) {
    let obj = r
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {r}"));
    for key in ["path", "status", "message", "diff", "notes"] {
        assert!(obj.contains_key(key), "report lacks `{key}`: {r}");
    }
    assert!(r["path"].is_string(), "{r}");
    assert!(r["message"].is_string(), "{r}");
    assert!(r["diff"].is_string(), "{r}");
    let notes = r["notes"].as_array().unwrap_or_else(|| panic!("{r}"));
    assert!(notes.iter().all(Value::is_string), "{r}");
    let status = r["status"].as_str().unwrap();
    assert!(
        ["applied", "already_applied", "failed"].contains(&status),
        "unknown status: {r}"
    );
    if status == "failed" {
        assert_eq!(r["diff"], "", "a failed call has no diff: {r}");
    }
}

/// A single-edit call as one JSON line.
pub fn call(path: &str, old: &str, new: &str) -> String {
    json!({"path": path, "old": old, "new": new}).to_string()
}

/// A list-form call as one JSON line; each edit is (old, new, replace_all).
pub fn call_edits(path: &str, edits: &[(&str, &str, bool)]) -> String {
    let edits: Vec<Value> = edits
        .iter()
        .map(|(old, new, all)| json!({"old": old, "new": new, "replace_all": all}))
        .collect();
    json!({"path": path, "edits": edits}).to_string()
}

/// Lines joined as NDJSON (each ending in a newline).
pub fn ndjson(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

impl Ws {
    pub fn chmod(&self, rel: &str, mode: u32) {
        fs::set_permissions(self.path(rel), fs::Permissions::from_mode(mode)).unwrap();
    }

    pub fn mode(&self, rel: &str) -> u32 {
        fs::metadata(self.path(rel)).unwrap().permissions().mode() & 0o7777
    }

    /// What identifies the file on disk: bytes, mtime, inode. An atomic
    /// write changes the inode, any write the bytes or the mtime.
    pub fn snapshot(&self, rel: &str) -> (Vec<u8>, SystemTime, u64) {
        let meta = fs::metadata(self.path(rel)).unwrap();
        (self.read(rel), meta.modified().unwrap(), meta.ino())
    }

    /// Whether nib created its state directory.
    pub fn has_nib_dir(&self) -> bool {
        fs::symlink_metadata(self.path(".nib")).is_ok()
    }

    /// The saved versions (`.nib/versions/*.prev`), as bytes.
    pub fn saved_versions(&self) -> Vec<Vec<u8>> {
        let dir = self.path(".nib/versions");
        let Ok(entries) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut names: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "prev"))
            .collect();
        names.sort();
        names.iter().map(|p| fs::read(p).unwrap()).collect()
    }

    /// `nib apply --root <ws> [extra...]` with `input` on stdin.
    pub fn apply(&self, input: &str, extra: &[&str]) -> Run {
        let mut args: Vec<&OsStr> = vec!["apply".as_ref(), "--root".as_ref(), self.root().as_ref()];
        args.extend(extra.iter().map(|a| OsStr::new(*a)));
        nib(&args, self.root(), Some(input))
    }

    /// `nib apply --root <ws> --json [extra...]` with `input` on stdin.
    pub fn apply_json(&self, input: &str, extra: &[&str]) -> Run {
        let mut all = vec!["--json"];
        all.extend_from_slice(extra);
        self.apply(input, &all)
    }

    /// `nib undo --root <ws> [extra...]`.
    pub fn undo(&self, extra: &[&str]) -> Run {
        let mut args: Vec<&OsStr> = vec!["undo".as_ref(), "--root".as_ref(), self.root().as_ref()];
        args.extend(extra.iter().map(|a| OsStr::new(*a)));
        nib(&args, self.root(), None)
    }
}
