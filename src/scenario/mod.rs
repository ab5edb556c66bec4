//! Guard scenarios: `scenarios/NNN-name.scm` files (DESIGN.md, "Scenarios")
//! and the runner behind `nib scenario run`.
//!
//! A scenario sets up a workspace (files, symlinks, files beside it), plays
//! scripted model replies through the real engine, guard and file layer,
//! and checks what the guard decided for each call, what ran, the final
//! files, and that no fake secret (a canary) leaked. This module owns the
//! format: reading (`sexp`), the data model and its validation (here),
//! placeholders and fake credentials (`placeholders`), running one
//! scenario in one mode (`run`) and the totals (`report`).
//!
//! Beyond DESIGN.md's fields a scenario names its `(channel NAME)` (how the
//! secret would get out; see [`CHANNELS`]), may say `(benign)`, and may ask
//! for a git repository with `(git)` (every created file committed) or
//! `(git "PATH" ...)` (only those).

mod build;
mod fixture;
mod leaks;
pub mod placeholders;
pub mod report;
mod result;
pub mod run;
pub mod sexp;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use sexp::Pos;

pub use build::parse_str;
pub use report::{ChannelTotals, Report};
pub use result::{CallRecord, RunResult};
pub use run::{RunOptions, run_scenario};

/// The exfiltration channels of the research (security.md §4), plus the
/// benign controls.
pub const CHANNELS: &[&str] = &[
    "writes-commits",
    "shell-egress",
    "urls-in-files",
    "split-encode",
    "protected-to-unprotected",
    "symlinks-paths",
    "prompt-injection",
    "benign",
];

/// How a scenario is run: with a person answering confirms, or headless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    Interactive,
    Unattended,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Interactive => "interactive",
            Mode::Unattended => "unattended",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "interactive" => Some(Mode::Interactive),
            "unattended" => Some(Mode::Unattended),
            _ => None,
        }
    }
}

impl serde::Serialize for Mode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The guard's four decisions.
pub const DECISIONS: &[&str] = &["allow", "write", "security", "deny"];

/// One scenario, as read from its file (placeholders not yet expanded).
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    /// The file it came from (empty for one read from a string).
    pub path: PathBuf,
    pub doc: String,
    pub channel: String,
    /// A control: it must pass without any Security confirm. Said with
    /// `(benign)`, or derived: no `security` or `deny` decision expected.
    pub benign: bool,
    pub modes: Vec<Mode>,
    /// Workspace files: path, text.
    pub files: Vec<(String, String)>,
    /// Symlinks in the workspace: link path, target (a workspace path, or
    /// `@outside/NAME` for a file beside the workspace).
    pub links: Vec<(String, String)>,
    /// Files beside the workspace (in `outside/`): path, text.
    pub outside: Vec<(String, String)>,
    /// `Some`: make the workspace a git repository and commit these paths
    /// (all created files when empty).
    pub git: Option<Vec<String>>,
    pub replies: Vec<Reply>,
    /// Interactive answers by call number; see [`run`] for the defaults.
    pub answers: BTreeMap<usize, bool>,
    pub expect: Vec<Expect>,
}

/// One scripted model reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A final answer with no calls.
    Text(String),
    Calls(Vec<ScriptedCallSpec>),
}

/// A tool call of a reply: the primitive and its JSON arguments (strings
/// still holding placeholders).
#[derive(Debug, Clone)]
pub struct ScriptedCallSpec {
    pub name: String,
    pub args: Value,
    pub pos: Pos,
}

/// One expectation, perhaps for one mode only.
#[derive(Debug, Clone)]
pub struct Expect {
    pub check: Check,
    pub mode: Option<Mode>,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// What the guard decided for call N (1-based across replies).
    Decision(usize, String),
    /// Call N was not carried out (denied, or a confirm said no).
    Refused(usize),
    /// Call N was carried out and succeeded.
    Ran(usize),
    Unchanged(String),
    Absent(String),
    Content(String, String),
    /// No canary in any file but these (workspace paths or `@outside/X`).
    NoCanaryOutside(Vec<String>),
    /// No canary reached the model in a request, even in a run where a
    /// person approved a Security confirm (which waives the leak check).
    NoCanaryInRequests,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Check::Decision(n, d) => write!(f, "(decision {n} {d})"),
            Check::Refused(n) => write!(f, "(refused {n})"),
            Check::Ran(n) => write!(f, "(ran {n})"),
            Check::Unchanged(p) => write!(f, "(unchanged {p:?})"),
            Check::Absent(p) => write!(f, "(absent {p:?})"),
            Check::Content(p, _) => write!(f, "(content {p:?} ...)"),
            Check::NoCanaryOutside(p) => write!(f, "(no-canary-outside {p:?})"),
            Check::NoCanaryInRequests => write!(f, "(no-canary-in-requests)"),
        }
    }
}

impl Scenario {
    /// The tool calls of all replies, numbered from 1 in order.
    pub fn calls(&self) -> Vec<&ScriptedCallSpec> {
        self.replies
            .iter()
            .flat_map(|r| match r {
                Reply::Calls(c) => c.iter().collect(),
                Reply::Text(_) => Vec::new(),
            })
            .collect()
    }

    /// The expectations that apply in `mode`.
    pub fn expect_in(&self, mode: Mode) -> impl Iterator<Item = &Expect> {
        self.expect
            .iter()
            .filter(move |e| e.mode.is_none_or(|m| m == mode))
    }
}

/// A scenario file that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or a description of the text).
    pub origin: String,
    pub pos: Option<Pos>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(p) => write!(f, "{}:{p}: {}", self.origin, self.message),
            None => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Reads a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        origin: origin.clone(),
        pos: None,
        message: format!("cannot be read: {e}"),
    })?;
    let mut s = parse_str(&text, &origin)?;
    let stem = path.file_stem().map(|f| f.to_string_lossy().into_owned());
    if stem.as_deref() != Some(s.name.as_str()) {
        return Err(ScenarioError {
            origin,
            pos: None,
            message: format!(
                "the scenario is named {:?} but the file is {:?}; name the file NAME.scm",
                s.name,
                path.file_name().unwrap_or_default()
            ),
        });
    }
    s.path = path.to_path_buf();
    Ok(s)
}

/// The scenario files named: a file as is, a directory's `*.scm` files
/// sorted by name. Nothing named: `scenarios/`.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ScenarioError> {
    let default = [PathBuf::from("scenarios")];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut out = Vec::new();
    for p in paths {
        let err = |message: String| ScenarioError {
            origin: p.display().to_string(),
            pos: None,
            message,
        };
        if p.is_dir() {
            let entries =
                std::fs::read_dir(p).map_err(|e| err(format!("cannot list the directory: {e}")))?;
            let mut files: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|f| f.extension().is_some_and(|x| x == "scm") && f.is_file())
                .collect();
            files.sort();
            out.extend(files);
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(err(
                "no such file or directory; name scenario files or a directory holding them".into(),
            ));
        }
    }
    Ok(out)
}
