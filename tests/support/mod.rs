//! Helpers the test binaries share: a temp workspace (`Ws`, at `<tmp>/ws`
//! with `<tmp>` outside it), running the built `nib` binary (`nib`,
//! `Run`), and reading JSONL (a session's events). An area adds its own
//! beside it (`tests/cli/support.rs` extends `Ws` and `Run` with `nib
//! apply`'s reports).

// Each binary uses part of this module.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
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

    /// The events of the workspace's one session (`.nib/sessions/*/events.jsonl`).
    pub fn session_events(&self) -> Vec<Value> {
        session_events(&self.root)
    }
}

/// Every line of a JSONL text as JSON; panics naming the line that is not.
pub fn jsonl(text: &str, what: &str) -> Vec<Value> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{what} line {}: not JSON ({e}): {l}", i + 1))
        })
        .collect()
}

/// A JSONL file's lines as JSON.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    jsonl(&text, &path.display().to_string())
}

/// The events file of the one session under `ws/.nib/sessions`.
pub fn session_log(ws: &Path) -> PathBuf {
    let sessions = ws.join(".nib/sessions");
    let mut dirs: Vec<_> = fs::read_dir(&sessions)
        .unwrap_or_else(|e| panic!("no {}: {e}", sessions.display()))
        .filter_map(Result::ok)
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "one session expected in {}",
        sessions.display()
    );
    dirs.pop().expect("a session").path().join("events.jsonl")
}

/// The events of the one session under `ws/.nib/sessions`.
pub fn session_events(ws: &Path) -> Vec<Value> {
    read_jsonl(&session_log(ws))
}

/// Each event's kind (`ev`), in order.
pub fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["ev"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Runs `git -C dir args` as a test identity, outside any repository the
/// test runner itself may be in (`GIT_DIR`, `GIT_INDEX_FILE` removed);
/// panics with git's stderr on failure; returns stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=nib test",
            "-c",
            "user.email=test@example.com",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A JSON file, parsed (panics naming the file).
pub fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
