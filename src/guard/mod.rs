//! The guard: judges a parsed call before it runs and returns a decision
//! with its reasons, and watches what tools return so it knows the
//! session's secrets. It reads only what it must inspect (where a path
//! really goes, the file a secret may already be in, the diff a commit
//! would carry) and changes nothing.
//!
//! Decisions: `Allow < Confirm(Write) < Confirm(Security) < Deny`; the most
//! severe finding wins and every reason is kept. What it checks, per call:
//! paths (`paths`), the secret scan of every `payload`, `command` and `url`
//! value (`secrets`), the session's known secrets raw and encoded
//! (`ledger`), redaction handles (`redact`), untrusted destinations
//! (`taint`) and shell command lines (`shell`). A guard that fails judges
//! nothing: its error is a refusal.
//!
//! This file holds the decision types and `Guard`'s public face; how a
//! sink value is scanned is in `sinks`, a shell call's judging in
//! `command`, the questions it asks of the workspace in `disk` and of the
//! repository in `git`.

pub mod environment;
pub mod ledger;
pub use kernel::WrittenSecrets;
pub use lifecycle::{MANIFESTS, lifecycle_scripts_changed, manifest_tool};
pub mod mounts;
pub mod outside;
pub mod paths;
pub mod redact;
pub mod sandbox;
pub mod secrets;
pub mod shell;
pub mod storewalk;
pub mod taint;
pub mod testkit;

pub mod approvals;

mod command;
mod decode;
mod disk;
mod git;
mod history;
pub mod hooked;
mod kernel;
mod learn;
mod lifecycle;
mod sinks;
mod system;
mod tracked;
mod values;
pub mod visible;

#[cfg(test)]
use values::protected_values;
use values::without_line_numbers;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::call::guard_view;
use crate::call::{Arg, Call, Effect, Role};
use crate::files::Workspace;

pub use paths::{PathRules, PathVerdict};

/// What kind of yes a confirm asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConfirmKind {
    /// An ordinary write or command; a standing approval or an unattended
    /// policy may answer it.
    Write,
    /// Something that could leak or damage; only a person may answer it.
    Security,
}

/// Why the guard decided what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub rule: &'static str,
    /// The parameter (and list element, 1-based) the finding is about.
    pub param: String,
    /// What was found. Secret values appear masked, never whole.
    pub message: String,
    /// The 1-based line of the parameter's value the finding is on.
    pub line: Option<usize>,
}

impl Reason {
    fn new(rule: &'static str, param: impl Into<String>, message: impl Into<String>) -> Reason {
        Reason {
            rule,
            param: param.into(),
            message: message.into(),
            line: None,
        }
    }

    fn at(mut self, line: usize) -> Reason {
        self.line = Some(line);
        self
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(
                f,
                "{} ({}: {} line {line})",
                self.message, self.rule, self.param
            ),
            None => write!(f, "{} ({}: {})", self.message, self.rule, self.param),
        }
    }
}

/// The guard's verdict on one call. Severity increases down the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Confirm {
        kind: ConfirmKind,
        reasons: Vec<Reason>,
    },
    Deny {
        reasons: Vec<Reason>,
    },
}

impl Decision {
    /// A stable name: allow, write, security, deny.
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Confirm {
                kind: ConfirmKind::Write,
                ..
            } => "write",
            Decision::Confirm {
                kind: ConfirmKind::Security,
                ..
            } => "security",
            Decision::Deny { .. } => "deny",
        }
    }

    pub fn reasons(&self) -> &[Reason] {
        match self {
            Decision::Allow => &[],
            Decision::Confirm { reasons, .. } | Decision::Deny { reasons } => reasons,
        }
    }

    /// This decision made at least as severe as a Security confirm for
    /// `reasons` (kept with the earlier ones). Used for findings that only
    /// show once a write is planned.
    pub fn with_security(self, mut more: Vec<Reason>) -> Decision {
        if more.is_empty() {
            return self;
        }
        match self {
            Decision::Deny { mut reasons } => {
                reasons.append(&mut more);
                Decision::Deny { reasons }
            }
            Decision::Confirm {
                kind: ConfirmKind::Security,
                mut reasons,
            } => {
                reasons.append(&mut more);
                Decision::Confirm {
                    kind: ConfirmKind::Security,
                    reasons,
                }
            }
            _ => Decision::Confirm {
                kind: ConfirmKind::Security,
                reasons: more,
            },
        }
    }
}

/// How the guard is set up: from the user's config, tightened by the
/// workspace's.
#[derive(Debug, Clone)]
pub struct GuardPolicy {
    pub paths: PathRules,
    /// Secret-shaped strings in tool output reach the model as handles.
    pub redact: bool,
    /// `shell` commands may use the network.
    pub shell_network: bool,
    /// `shell` commands run under the file sandbox (`sandbox`), where the
    /// kernel has one.
    pub file_sandbox: bool,
    /// The file sandbox hides the workspace's secret files too, not only
    /// the home directory's credential stores (Landlock only: the mount
    /// sandbox always masks them).
    pub file_sandbox_workspace: bool,
    /// More of the home directory shown to commands (`[guard] home`,
    /// the user's config only), relative to home.
    pub home_allow: Vec<String>,
    /// Places outside the workspace and home commands may read
    /// (`[guard] show`, the user's config only), absolute.
    pub show: Vec<String>,
    /// More environment variables commands get (`[guard] env`, the
    /// user's config only; `NAME` or `PREFIX*`).
    pub env_allow: Vec<String>,
}

impl Default for GuardPolicy {
    fn default() -> GuardPolicy {
        GuardPolicy {
            paths: PathRules::default(),
            redact: true,
            shell_network: false,
            file_sandbox: true,
            file_sandbox_workspace: false,
            home_allow: Vec::new(),
            show: Vec::new(),
            env_allow: Vec::new(),
        }
    }
}

/// What the guard knows about the session's secrets and where content
/// came from.
#[derive(Debug, Default)]
struct Knowledge {
    ledger: ledger::SecretLedger,
    /// Secret stores' names in the repository's history (`git.rs`).
    history: git::HistoryNames,
    redactor: redact::Redactor,
    destinations: taint::Destinations,
    /// Workspace files this session wrote (scripts it may run next),
    /// with the fs tools or through a command, under their current names.
    written: std::collections::HashSet<String>,
    /// Files the last commands wrote, to read once they have run.
    pending: Vec<String>,
    /// Files a command wrote that hold a known secret: protected from
    /// then on.
    tainted: std::collections::HashSet<String>,
    /// The secret stores earlier plans masked, by inode: one that moved
    /// (into `node_modules/`, which the plan's walk skips) is looked for
    /// by its inode and masked where it went.
    stores: std::collections::HashMap<(u64, u64), std::path::PathBuf>,
    /// The workspace's directories as the last plan's walk read them.
    walk: storewalk::WalkCache,
    /// Secret stores inside dependency and build directories, found at the
    /// session's start (`storewalk::skipped_stores`), absolute.
    skipped_stores: Vec<std::path::PathBuf>,
    /// Credential files outside the workspace that commands would see
    /// (in home's allowed parts, the system's configs), found at start.
    home_stores: Vec<std::path::PathBuf>,
    /// What the kernel takes away from commands in this session.
    contained: Containment,
    /// The index's copies of the secret stores git tracks (`tracked.rs`).
    tracked_copies: tracked::TrackedCopies,
    /// A secret reached the model in clear (a read a person approved, or
    /// output with redaction off): from then on every call that could
    /// carry data out needs a person (`sinks::session_taint`).
    seen_clear: bool,
}

/// What the kernel already prevents for this session's commands, so the
/// word rules do not ask a person about it (they only explain).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Containment {
    /// Commands run without network (a private network namespace).
    pub network: bool,
    /// The workspace's secrets and the home directory are masked (a
    /// private mount namespace).
    pub mounts: bool,
    /// Commands get an environment without credentials (an allowlist),
    /// and no other process's (a private process namespace, or a
    /// container).
    pub env: bool,
    /// Writes outside the workspace and the session's temp directories
    /// are refused (Landlock).
    pub writes: bool,
}

/// The guard of one session: its policy and what it has seen.
#[derive(Debug)]
pub struct Guard {
    policy: GuardPolicy,
    known: Mutex<Knowledge>,
}

impl Default for Guard {
    fn default() -> Guard {
        Guard::new(GuardPolicy::default())
    }
}

impl Guard {
    /// A guard for a new session. nib's own credentials (model API keys,
    /// tokens in its environment) are secrets from the start.
    pub fn new(policy: GuardPolicy) -> Guard {
        let mut known = Knowledge::default();
        for (name, value) in std::env::vars() {
            if looks_like_credential_name(&name) {
                known
                    .ledger
                    .add(&value, &format!("the environment variable {name}"));
            }
        }
        Guard {
            policy,
            known: Mutex::new(known),
        }
    }
    pub fn policy(&self) -> &GuardPolicy {
        &self.policy
    }
    fn known(&self) -> MutexGuard<'_, Knowledge> {
        // Every update is a single insert, so the state stays usable even
        // if a thread panicked while holding it.
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
    /// The path rules' verdict on writing `rel`.
    pub fn path_verdict(&self, rel: &str) -> PathVerdict {
        self.policy.paths.verdict(rel)
    }
    /// Destinations in text the user gave (the task) are theirs to use.
    pub fn trust(&self, text: &str) {
        self.known().destinations.trust(text);
    }
    /// Judge a call against the workspace. A guard that fails (a bug)
    /// refuses the call with its error: never a silent allow.
    pub fn judge(&self, call: &Call, ws: &Workspace) -> Decision {
        match catch_unwind(AssertUnwindSafe(|| self.judge_inner(call, ws))) {
            Ok(d) => d,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("unknown error");
                Decision::Deny {
                    reasons: vec![Reason::new(
                        "guard-error",
                        call.decl.name,
                        format!("the guard failed ({what}), so the call was refused"),
                    )],
                }
            }
        }
    }
    fn judge_inner(&self, call: &Call, ws: &Workspace) -> Decision {
        // What the previous commands wrote is on disk now.
        self.check_pending(ws);
        let writes = call.decl.effect != Effect::ReadOnly;
        let mut deny = Vec::new();
        let mut security = Vec::new();
        let view = guard_view(call);
        let mut target: Option<String> = None;
        for field in &view {
            if field.role != Role::Path || field.value.is_empty() {
                continue;
            }
            let param = field.label();
            let rel = match ws.resolve(field.value) {
                Ok(r) => r.rel,
                Err(e) => {
                    deny.push(Reason::new("path", param, e.to_string()));
                    continue;
                }
            };
            if !writes {
                continue;
            }
            let verdict = match self.policy.paths.verdict(&rel) {
                PathVerdict::Open
                    if self.is_found_store(&rel)
                        && !self.plain_edit_of_found_store(ws, call, &rel) =>
                {
                    PathVerdict::Protected(format!("{rel} holds a secret the session found in it"))
                }
                PathVerdict::Open => match disk::hard_link_alias(ws, &self.policy.paths, &rel) {
                    Some(alias) => PathVerdict::Protected(format!(
                        "{rel} is a hard link to the protected file {alias}"
                    )),
                    None => match hooked::run_by_hook(ws.root(), &rel) {
                        Some(by) => PathVerdict::Protected(format!(
                            "{rel} runs at the user's next git commit ({by} names it), outside nib's sandbox"
                        )),
                        None => PathVerdict::Open,
                    },
                },
                verdict => verdict,
            };
            match verdict {
                PathVerdict::Denied(message) => deny.push(Reason::new("denylist", param, message)),
                PathVerdict::Protected(_) if self.public_pem_write(ws, call, &rel) => {}
                PathVerdict::Protected(message) => {
                    security.push(Reason::new("protected-path", param, message))
                }
                PathVerdict::Open => {}
            }
            target = Some(rel);
        }
        if !deny.is_empty() {
            return Decision::Deny { reasons: deny };
        }
        if writes {
            // The file is read only if a finding asks whether its secret is
            // already there: most writes hold no secret at all.
            let existing: std::cell::OnceCell<Option<String>> = std::cell::OnceCell::new();
            let existing_holds = |secret: &str| {
                existing
                    .get_or_init(|| {
                        target
                            .as_deref()
                            .and_then(|rel| disk::current_text(ws, rel))
                    })
                    .as_deref()
                    .is_some_and(|t| t.contains(secret))
            };
            let mut known = self.known();
            let sinks: Vec<_> = view
                .iter()
                .filter(|f| {
                    matches!(f.role, Role::Payload | Role::Command | Role::Url)
                        && !f.value.is_empty()
                })
                .collect();
            let values: Vec<&str> = sinks.iter().map(|f| f.value).collect();
            let looked = sinks::look_all(&known.ledger, &values);
            // A token of a known shape typed into a test, an example or the
            // docs is a dummy (a fixture's JWT, the AES test vector): only
            // a secret the session knows counts there.
            let dummies = call.decl.name != "shell"
                && target.as_deref().is_some_and(learn::looks_like_fixture);
            for (field, mut looked) in sinks.into_iter().zip(looked) {
                looked.dummies = dummies;
                // A secret an edit keeps in place (in its own old text, or
                // already in the file it writes) is not going anywhere.
                let own_old = sinks::same_edit_old(call, field.item.as_ref().map(|(i, _)| *i));
                let kept = |secret: &str| {
                    own_old.is_some_and(|t| t.contains(secret)) || existing_holds(secret)
                };
                sinks::scan_value(
                    &mut known,
                    field.label(),
                    field.role,
                    field.value,
                    looked,
                    &kept,
                    &mut security,
                );
            }
            if call.decl.name == "shell" {
                let command = call.arg("command").as_str();
                drop(known);
                security.extend(self.judge_command(command, ws));
            }
        }
        if !security.is_empty() {
            return Decision::Confirm {
                kind: ConfirmKind::Security,
                reasons: security,
            };
        }
        match call.decl.effect {
            Effect::ReadOnly => Decision::Allow,
            effect => Decision::Confirm {
                kind: ConfirmKind::Write,
                reasons: vec![Reason::new(
                    "effect",
                    call.decl.name,
                    format!("{} has effect {}", call.decl.name, effect.as_str()),
                )],
            },
        }
    }
    /// Findings that show only once a write is planned: a `.gitignore`
    /// change that stops ignoring protected files, and a secret already in
    /// the file (so "kept in place" by the call's check) that the write
    /// copies: once more, or into a URL.
    pub fn judge_write(&self, rel: &str, old: &str, new: &str) -> Vec<Reason> {
        let mut out = self.copies_of_kept_secrets(rel, old, new);
        let name = rel.rsplit('/').next().unwrap_or(rel);
        if name == ".gitignore"
            && let Some(m) = self.policy.paths.gitignore_weakening(old, new)
        {
            out.push(Reason::new("gitignore", "path", m));
        }
        // npm and Composer run a package's scripts on their own
        // (`postinstall`, `post-install-cmd`; `test` from a runner): a new
        // script is judged as the command line it is.
        if let Some(tool) = manifest_tool(name) {
            for hook in lifecycle_scripts_changed(name, old, new) {
                out.push(Reason::new(
                    "auto-run",
                    "payload",
                    format!("the write sets {name}'s `{hook}` script, which {tool} runs on its own at the next install, outside nib's sandbox"),
                ));
            }
        }
        if name == "package.json" {
            let before = shell::package_scripts(old);
            for script in shell::package_scripts(new) {
                if before.contains(&script) {
                    continue;
                }
                let rules = &self.policy.paths;
                let analysis =
                    shell::analyze(&script, &|w| rules.is_protected(w.trim_start_matches("./")));
                for f in analysis.findings {
                    out.push(Reason::new(
                        "auto-run",
                        "payload",
                        format!("a package.json script npm runs: {}", f.message),
                    ));
                }
            }
        }
        out
    }
    /// Learn from a tool's output before the model sees it: remember the
    /// secrets in it, note destinations from untrusted content, and return
    /// the text the model gets (secrets as handles when redaction is on).
    pub fn observe_output(&self, text: &str, untrusted: bool) -> String {
        let mut known = self.known();
        for hit in secrets::scan(text) {
            known.ledger.add(&hit.secret, hit.rule);
        }
        // fs-read numbers its lines (`12\tKEY=value`): the rules that
        // match at a line's start see the line as `cat` shows it.
        if let Some(plain) = without_line_numbers(text) {
            for hit in secrets::scan(&plain) {
                known.ledger.add(&hit.secret, hit.rule);
            }
        }
        if untrusted {
            known.destinations.observe_untrusted(text);
        }
        if !self.policy.redact {
            if !known.ledger.check(text).is_empty() {
                known.seen_clear = true;
            }
            return text.to_string();
        }
        let Knowledge {
            ledger, redactor, ..
        } = &mut *known;
        let redacted = redactor.redact_with(text, ledger).0;
        // A known secret encoded (base64, reversed, rot13…) or a
        // 12-character piece of one (a line cut in two) is no more the
        // model's to see than the secret itself.
        mark_encoded(redacted, ledger)
    }
    /// Note a workspace file this session wrote: a script it runs later is
    /// judged like a command typed in the call.
    pub fn note_written(&self, rel: &str) {
        self.known().written.insert(rel.to_string());
    }
    /// Learn from a read of `rel` when it is a hard link to a protected
    /// file: its values are that file's secrets, whatever its name.
    pub fn observe_read(&self, ws: &Workspace, rel: &str) {
        if self.policy.paths.is_protected(rel) {
            return; // the file layer reports it under its own name
        }
        if let Some(alias) = disk::hard_link_alias(ws, &self.policy.paths, rel)
            && let Some(text) = disk::current_text(ws, rel)
        {
            self.observe_protected(&alias, &text);
        }
    }
    /// The call with every redaction handle replaced by the value it
    /// stands for, and the handles that were in sink values. Handles in
    /// locating text (fs-edit's old) are resolved silently: they only find
    /// text already in the file.
    pub fn resolve(&self, call: &Call) -> Call {
        let known = self.known();
        let mut out = call.clone();
        for arg in &mut out.args {
            resolve_arg(arg, &known.redactor);
        }
        out
    }
    /// Text with every redaction handle replaced by its value (a text
    /// edit format's reply, judged afterwards as the writes it makes).
    pub fn resolve_text(&self, text: &str) -> String {
        if !text.contains("«secret:") {
            return text.to_string();
        }
        self.known().redactor.resolve(text)
    }
    /// Text for the event log: known secrets and secret-shaped strings as
    /// handles, whatever the redaction setting, so logs can be shared.
    pub fn scrub(&self, text: &str) -> String {
        let mut known = self.known();
        let Knowledge {
            ledger, redactor, ..
        } = &mut *known;
        let redacted = redactor.redact_with(text, ledger).0;
        // A refused call's arguments may hold a secret encoded (that is
        // why it was refused): the log gets a marker, not the encoding.
        mark_encoded(redacted, ledger)
    }
}

/// `redacted` with each stretch that holds a known secret encoded, or a
/// piece of one, replaced by a marker.
fn mark_encoded(redacted: String, ledger: &ledger::SecretLedger) -> String {
    let spans = ledger.encoded_spans(&redacted);
    if spans.is_empty() {
        return redacted;
    }
    let mut out = String::with_capacity(redacted.len());
    let mut at = 0;
    for (start, end) in spans {
        // Spans come from byte offsets of decoded runs: keep to char
        // boundaries.
        let (Some(before), Some(_)) = (redacted.get(at..start), redacted.get(start..end)) else {
            continue;
        };
        out.push_str(before);
        out.push_str("«secret:ENCODED»");
        at = end;
    }
    out.push_str(redacted.get(at..).unwrap_or_default());
    out
}

fn resolve_arg(arg: &mut Arg, redactor: &redact::Redactor) {
    match arg {
        Arg::Str(s) => {
            if s.contains("«secret:") {
                *s = redactor.resolve(s);
            }
        }
        Arg::List(items) => {
            for item in items {
                for (_, v) in item {
                    resolve_arg(v, redactor);
                }
            }
        }
        Arg::Int(_) | Arg::Bool(_) => {}
    }
}

/// A secret shown so a person recognises it without it being written
/// out again: its first four characters and its length.
pub fn mask(secret: &str) -> String {
    let head: String = secret.chars().take(4).collect();
    format!("{head}… ({} chars)", secret.chars().count())
}

/// Environment variable names that hold credentials.
pub(crate) fn looks_like_credential_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|w| n.contains(w))
        && !n.contains("KEYBOARD")
        && !n.ends_with("_PATH")
        && !n.ends_with("_FILE")
}

/// The default path rules' verdict, for commands that run without a
/// session (`nib apply`).
pub fn path_verdict(rel: &str) -> PathVerdict {
    static RULES: std::sync::OnceLock<PathRules> = std::sync::OnceLock::new();
    RULES.get_or_init(PathRules::default).verdict(rel)
}

#[cfg(test)]
mod tests;
