//! Shared helpers: a temp workspace, running the binary, parsing reports.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use serde_json::{Value, json};
use tempfile::TempDir;

/// The built binary.
pub const NIB: &str = env!("CARGO_BIN_EXE_nib");

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

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

/// Runs the binary with `args` in `cwd`, feeding `stdin` when given (the
/// child's stdin is empty otherwise).
pub fn nib<S: AsRef<OsStr>>(args: &[S], cwd: &Path, stdin: Option<&str>) -> Run {
    let mut cmd = Command::new(NIB);
    cmd.args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("spawn nib");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        // A usage error may end nib before it reads its input.
        match pipe.write_all(input.as_bytes()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
            _ => {}
        }
    }
    let out = child.wait_with_output().expect("wait for nib");
    Run {
        code: out.status.code().expect("nib was killed by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
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

/// A workspace at `<tmp>/ws`, with `<tmp>` itself as "outside".
pub struct Ws {
    tmp: TempDir,
    root: PathBuf,
}

impl Ws {
    pub fn new() -> Ws {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("ws");
        fs::create_dir(&root).unwrap();
        Ws { tmp, root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory holding the workspace: outside it.
    pub fn outside(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Writes a file in the workspace, creating its directories.
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.path(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    pub fn read_str(&self, rel: &str) -> String {
        String::from_utf8(self.read(rel)).unwrap()
    }

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
        let mut args: Vec<&OsStr> = vec!["apply".as_ref(), "--root".as_ref(), self.root.as_ref()];
        args.extend(extra.iter().map(|a| OsStr::new(*a)));
        nib(&args, &self.root, Some(input))
    }

    /// `nib apply --root <ws> --json [extra...]` with `input` on stdin.
    pub fn apply_json(&self, input: &str, extra: &[&str]) -> Run {
        let mut all = vec!["--json"];
        all.extend_from_slice(extra);
        self.apply(input, &all)
    }

    /// `nib undo --root <ws> [extra...]`.
    pub fn undo(&self, extra: &[&str]) -> Run {
        let mut args: Vec<&OsStr> = vec!["undo".as_ref(), "--root".as_ref(), self.root.as_ref()];
        args.extend(extra.iter().map(|a| OsStr::new(*a)));
        nib(&args, &self.root, None)
    }
}
