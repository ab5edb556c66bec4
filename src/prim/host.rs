//! Running calls: parse → guard → confirm → handler, for every caller alike
//! (a model's JSON call and a Scheme strategy's positional call go through
//! the same path).
//!
//! The host owns the session's file state (what was read and its hash, what
//! the last edit of each file applied) behind a mutex, so read-only calls of
//! one reply can run on several threads at once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use serde_json::Value;

use super::confine::Sandbox;
use super::error::ToolError;
use super::tools;
use crate::call::Call;
use crate::edit::Edit;
use crate::files::{Versions, Workspace};
use crate::guard::{ConfirmKind, Guard, GuardPolicy, Reason};

/// What a confirm shows a person (or a policy): the call, why it needs a
/// yes, and for writes the diff.
#[derive(Debug)]
pub struct ConfirmRequest<'a> {
    pub call: &'a Call,
    pub kind: ConfirmKind,
    pub reasons: &'a [Reason],
    pub diff: Option<&'a str>,
    /// For file writes: the resolved workspace-relative path and the full
    /// text the write proposes (what `$EDITOR` opens for edit-before-approve).
    pub path: Option<&'a str>,
    pub proposed: Option<&'a str>,
    /// Why this call is confirmed again, when it is: its file changed on
    /// disk after the previous diff was made, and this diff is against
    /// the text there now.
    pub again: Option<&'a str>,
}

/// How a confirm was answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfirmAnswer {
    pub approved: bool,
    /// Told to the model when the answer is no ("use a fixture instead").
    pub reason: Option<String>,
    /// For a file write: the user's edited full new text, written instead
    /// of the proposal (the model is told what changed).
    pub edited: Option<String>,
}

impl From<bool> for ConfirmAnswer {
    fn from(approved: bool) -> ConfirmAnswer {
        ConfirmAnswer {
            approved,
            ..ConfirmAnswer::default()
        }
    }
}

type Confirmer = Box<dyn Fn(&ConfirmRequest) -> ConfirmAnswer + Send + Sync>;

/// A strategy's question for the person watching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    YesNo(String),
    /// One of the choices.
    Choice(String, Vec<String>),
    /// A line of free text.
    Text(String),
}

impl Question {
    pub fn text(&self) -> &str {
        match self {
            Question::YesNo(q) | Question::Choice(q, _) | Question::Text(q) => q,
        }
    }
}

/// The person's answer: `Yes(false)` is a no; `Skipped` when they
/// dismissed a choice or a text question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Yes(bool),
    Choice(String),
    Text(String),
    Skipped,
}

/// Puts a strategy's question to the person watching; `None` when nobody
/// can answer (the question is then answered by policy).
pub type Asker = Box<dyn Fn(&Question) -> Option<Answer> + Send + Sync>;

/// The result of one call, as the model and the clients get it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ToolResult {
    pub ok: bool,
    /// What the model reads.
    pub text: String,
    /// The guard's decision: allow, write, security, deny.
    pub decision: &'static str,
    /// The call was not carried out (denied, or a confirm said no).
    pub refused: bool,
    /// For writes: the unified diff of what was written.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub diff: String,
    /// Why it failed, as a stable name (`not_found`, `ambiguous`,
    /// `invalid`, `refused`, `missing`, ...), for the event log and stats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// The guard's reasons for its decision.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<ReasonOut>,
    /// The confirm asked, and its answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm: Option<ConfirmOut>,
    /// For writes: the versions-store id of the previous content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A guard reason as results and the event log carry it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReasonOut {
    pub rule: &'static str,
    pub param: String,
    pub message: String,
    /// The 1-based line of the parameter's value the finding is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl From<&Reason> for ReasonOut {
    fn from(r: &Reason) -> ReasonOut {
        ReasonOut {
            rule: r.rule,
            param: r.param.clone(),
            message: r.message.clone(),
            line: r.line,
        }
    }
}

/// A confirm that was asked: its kind (write, security) and the answer.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ConfirmOut {
    pub kind: &'static str,
    pub approved: bool,
}

impl From<ToolError> for ToolResult {
    fn from(e: ToolError) -> ToolResult {
        ToolResult::failed(e.kind(), e.to_string())
    }
}

impl ToolResult {
    pub(crate) fn ok(text: String) -> ToolResult {
        ToolResult {
            ok: true,
            text,
            decision: "allow",
            refused: false,
            diff: String::new(),
            kind: None,
            reasons: Vec::new(),
            confirm: None,
            version: None,
        }
    }

    pub(crate) fn failed(kind: &'static str, text: String) -> ToolResult {
        ToolResult {
            ok: false,
            kind: Some(kind),
            ..ToolResult::ok(text)
        }
    }

    /// As JSON, for Scheme and the event log.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// What the session remembers about files between calls.
#[derive(Debug, Default)]
pub(crate) struct FileState {
    /// Workspace-relative path → content hash when this session last read
    /// (or wrote) it.
    pub reads: HashMap<String, u64>,
    /// Workspace-relative path → the edits the last fs-edit that wrote it
    /// applied: the record behind "already applied".
    pub last_edits: HashMap<String, Vec<Edit>>,
    /// Workspace-relative paths this session wrote: their content is the
    /// agent's own, not untrusted input.
    pub written: HashSet<String>,
}

/// Runs primitive calls against one workspace.
pub struct Host {
    pub(crate) ws: Workspace,
    pub(crate) versions: Versions,
    pub(super) state: Mutex<FileState>,
    pub(crate) confirm: Confirmer,
    pub(super) guard: Guard,
    /// Once set, a running command stops (a client's Esc, a run's
    /// deadline); the session's runs share it (`run_task`).
    pub(super) cancel: Arc<AtomicBool>,
    /// Confirms are answered by a policy (`Host::unattended`).
    pub(super) unattended: bool,
    /// The policy's answer to Write confirms (`--approve writes`).
    pub(super) approve_writes: bool,
    /// Where a strategy's questions go (`ask`).
    pub(super) asker: Option<Asker>,
    /// Set (with `cancel`) when a run's own deadline stopped it, so a
    /// stopped command says so instead of blaming the user.
    pub(super) deadline_passed: Arc<AtomicBool>,
    /// Where `shell` commands run (this machine unless told otherwise).
    pub(super) shell_place: tools::ShellPlace,
    /// The session's sandbox, set up before the first call (`confine`).
    pub(super) sandbox: std::sync::OnceLock<Sandbox>,
}

impl Host {
    /// A host whose confirms are answered by `confirm` (a person, through a
    /// client): a `bool`, or a [`ConfirmAnswer`] with a reason or edited text.
    pub fn new<A: Into<ConfirmAnswer>>(
        ws: Workspace,
        confirm: impl Fn(&ConfirmRequest) -> A + Send + Sync + 'static,
    ) -> Host {
        // Temp files of writes a kill interrupted: gone on the next start,
        // in the background (a large tree takes a while to walk).
        let root = ws.root().to_path_buf();
        let _ = std::thread::Builder::new()
            .name("nib-clean-temps".into())
            .spawn(move || crate::files::clean_stale_temps(&root));
        Host {
            versions: Versions::new(&ws),
            ws,
            state: Mutex::new(FileState::default()),
            confirm: Box::new(move |req| confirm(req).into()),
            guard: Guard::default(),
            cancel: Arc::default(),
            unattended: false,
            approve_writes: false,
            asker: None,
            deadline_passed: Arc::default(),
            shell_place: tools::ShellPlace::Local,
            sandbox: std::sync::OnceLock::new(),
        }
    }

    /// The session's sandbox, made at the first call (`confine`).
    pub(super) fn sandbox(&self) -> &Sandbox {
        self.sandbox
            .get_or_init(|| Sandbox::new(&self.guard, &self.ws, &self.shell_place))
    }

    /// One line on what commands run in, for a client to show before the
    /// session starts, and a warning when the mount sandbox is missing.
    pub fn sandbox_status(&self) -> (String, Option<String>) {
        self.sandbox().status(self.guard.policy().file_sandbox)
    }

    /// This host with its `shell` commands run at `place` (a container the
    /// workspace is mounted in); the guard still judges them here first.
    pub fn with_shell_place(mut self, place: tools::ShellPlace) -> Host {
        // The container's view of the tree names the same files: the
        // guard and the file primitives take `/testbed/x` as `x`.
        if let tools::ShellPlace::Container(c) = &place {
            self.ws = self.ws.clone().with_mount(&c.workdir);
        }
        self.shell_place = place;
        self
    }

    /// This host with a guard set up by `policy` (the user's and the
    /// workspace's configuration) instead of the defaults.
    pub fn with_policy(mut self, policy: GuardPolicy) -> Host {
        self.guard = Guard::new(policy);
        self
    }

    /// This host with a flag that, once set, stops a running `shell`
    /// command (the client's Esc; the client clears it for the next task).
    pub fn with_cancel(mut self, cancel: Arc<AtomicBool>) -> Host {
        self.cancel = cancel;
        self
    }

    /// The flag a run sets with the cancel flag when its own deadline
    /// passed.
    pub fn deadline_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.deadline_passed)
    }

    /// The flag that stops this host's running command.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancel)
    }

    /// The session's guard: what it has seen, and its log scrubber.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// A host for runs nobody watches: Write confirms are answered by
    /// `approve_writes`, and every Security confirm is refused.
    pub fn unattended(ws: Workspace, approve_writes: bool) -> Host {
        let mut host = Host::new(ws, move |req| {
            req.kind == ConfirmKind::Write && approve_writes
        });
        host.unattended = true;
        host.approve_writes = approve_writes;
        host
    }

    /// This host with a person to put a strategy's questions to.
    pub fn with_asker(mut self, asker: Asker) -> Host {
        self.asker = Some(asker);
        self
    }

    /// A strategy's yes/no question, put to the person watching; `None`
    /// when nobody is.
    pub fn ask_user(&self, question: &Question) -> Option<Answer> {
        self.asker.as_ref().and_then(|a| a(question))
    }

    /// Whether an unattended run's policy approves Write confirms.
    pub fn approves_writes(&self) -> bool {
        self.approve_writes
    }

    /// Whether a policy, not a person, answers this host's confirms.
    pub fn is_unattended(&self) -> bool {
        self.unattended
    }

    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, FileState> {
        // The state stays consistent even if a thread panicked holding it:
        // every update is a single insert.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
