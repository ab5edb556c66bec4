//! What a session's commands run in, decided once per session: the
//! environment they get (`guard::environment`), the directories that
//! stand in for `/tmp` and the rest (`tools::mountns`), what the kernel
//! takes away told to the guard, and per command the plans the kernel
//! carries out (the mount namespace, Landlock).

use super::error::ToolError;
use super::tools;
use crate::files::Workspace;
use crate::guard::Guard;

/// The sandbox of one session: none of the directories where the system
/// has no mount namespaces or the user turned the sandbox off.
pub(crate) struct Sandbox {
    pub(crate) env: crate::guard::environment::ChildEnv,
    dirs: Option<tools::mountns::SessionDirs>,
    /// What commands write, told by the kernel (local commands only).
    written: Option<std::sync::Mutex<tools::written::Written>>,
    /// What commands did to the repository (local commands only).
    git: Option<std::sync::Mutex<tools::gitcheck::GitCheck>>,
}

/// A command's plans: Landlock's, the mount namespace's made ready for
/// the child, and what the command's output should say of them.
type Plans = (
    Option<crate::guard::sandbox::FilePlan>,
    Option<tools::mountns::Prepared>,
    String,
);

impl Sandbox {
    /// Made at the session's first call: what the kernel takes from
    /// commands is told to the guard (so its word rules do not ask about
    /// it), and the secrets the session starts with (the workspace's
    /// secret files, credentials left out of the environment) join its
    /// ledger, so any output carrying one is redacted.
    pub(crate) fn new(guard: &Guard, ws: &Workspace, place: &tools::ShellPlace) -> Sandbox {
        let policy = guard.policy();
        let env = crate::guard::environment::child_env(std::env::vars_os(), &policy.env_allow);
        // nib's own git is never one found where these commands may write.
        crate::files::home::add_writable(&policy.home_allow);
        let local = matches!(place, tools::ShellPlace::Local);
        let dirs = (local && policy.file_sandbox && tools::spawn::available())
            .then(tools::mountns::SessionDirs::create)
            .and_then(Result::ok);
        // A container (nib swebench) is started with `--network none`
        // and the image's own environment: the network and the host's
        // credentials are out of its reach too.
        guard.set_containment(crate::guard::Containment {
            network: !local || (!policy.shell_network && tools::netns::available()),
            mounts: dirs.is_some(),
            env: !local || dirs.is_some(),
            writes: local && policy.file_sandbox && tools::landlock::available(),
        });
        guard.learn_startup_secrets(ws, &env.secrets);
        let written = local
            .then(|| tools::written::Written::new(ws.root()))
            .flatten()
            .map(std::sync::Mutex::new);
        let git = local.then(|| std::sync::Mutex::new(tools::gitcheck::GitCheck::default()));
        Sandbox {
            env,
            dirs,
            written,
            git,
        }
    }

    /// The workspace's directories the watch saw change since the last
    /// command's plan (None without a watch, or when it lost track).
    fn changes(&self) -> Option<crate::guard::storewalk::Changes> {
        self.written
            .as_ref()
            .and_then(|w| w.lock().unwrap_or_else(|p| p.into_inner()).changes())
    }

    /// Before a command: what was written since the last one is set
    /// aside (the model's own writes were judged as they were made).
    pub(crate) fn before_command(&self, guard: &Guard, ws: &Workspace) -> tools::gitcheck::Before {
        if let Some(w) = &self.written {
            w.lock().unwrap_or_else(|p| p.into_inner()).start();
        }
        match &self.git {
            Some(g) => g
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .before(ws, guard),
            None => tools::gitcheck::Before::default(),
        }
    }

    /// Whether the kernel tells which files commands write.
    pub(crate) fn watching(&self) -> bool {
        self.written.is_some()
    }

    /// After a command: the files the kernel saw it write, relative to the
    /// workspace (None without a watch).
    pub(crate) fn written_files(&self) -> Option<Vec<String>> {
        self.written
            .as_ref()
            .map(|w| w.lock().unwrap_or_else(|p| p.into_inner()).finish())
    }

    /// After a command: the files it wrote (`rels`) that hold a secret the
    /// session knows (a copy made by a path no mask covered) are moved
    /// into the quarantine, out of every later command's and tool's
    /// reach; what the command's output should say of it.
    pub(crate) fn after_command(
        &self,
        guard: &Guard,
        ws: &Workspace,
        before: tools::gitcheck::Before,
        rels: &[String],
    ) -> String {
        // The repository first: a secret a command committed is taken out
        // of the commit before its copy is looked at.
        let mut note = match &self.git {
            Some(g) => g
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .after(ws, guard, before, rels),
            None => String::new(),
        };
        if rels.is_empty() {
            return note;
        }
        let found = guard.secrets_written(ws, rels);
        let mut moved = Vec::new();
        for (rel, what) in &found.found {
            note.push_str(&match crate::files::quarantine(ws.root(), rel) {
                Ok(to) => {
                    moved.push(rel.clone());
                    format!(
                    "note: the command wrote {rel} holding a secret: {what}. nib moved it to {to}, where only the user can read it; secrets stay in the files they came from.\n"
                )
                }
                Err(e) => format!(
                    "warning: the command wrote {rel} holding a secret: {what}, and nib could not move it away ({e}): commands no longer see it; the user should delete it\n"
                ),
            });
        }
        if self.git.is_some() {
            note.push_str(&tools::gitindex::unstage_moved(ws.root(), &moved));
        }
        if !found.unchecked.is_empty() {
            note.push_str(&format!(
                "note: nib did not read back {} of the files this command wrote (past its budget per command), so a secret copied into {} would not be caught: {}\n",
                found.unchecked.len(),
                if found.unchecked.len() == 1 { "it" } else { "them" },
                found.unchecked.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        note
    }

    /// One line on what commands run in, and a warning when the mount
    /// sandbox is missing.
    pub(crate) fn status(&self, enabled: bool) -> (String, Option<String>) {
        if !enabled {
            return tools::landlock::status(false);
        }
        if self.dirs.is_some() {
            return (
                "commands run in a sandbox: secret files read as empty, home shows only toolchains and caches, private /tmp, git hooks and config read-only, no credentials in the environment".to_string(),
                None,
            );
        }
        let (line, _) = tools::landlock::status(true);
        let warning = format!(
            "this system does not allow a private mount namespace, so secret files are not masked from commands: {line}"
        );
        (warning.clone(), Some(warning))
    }

    /// The plans for the next command: the mount plan where the system
    /// has mount namespaces, and the Landlock plan; none when the user
    /// turned the sandbox off, and an empty Landlock plan where the
    /// kernel has none (the shell tool says so), without searching the
    /// workspace.
    pub(crate) fn command_plans(&self, guard: &Guard, ws: &Workspace) -> Result<Plans, ToolError> {
        if !guard.policy().file_sandbox {
            return Ok((None, None, String::new()));
        }
        let mounts = self.dirs.as_ref().map(|dirs| {
            (
                guard.mount_plan(ws, dirs.path(), self.changes().as_ref()),
                dirs,
            )
        });
        let private = self.dirs.as_ref().map(|d| d.writable()).unwrap_or_default();
        let files = if tools::landlock::available() {
            guard.file_plan(ws, mounts.as_ref().map(|(p, _)| p), &private)
        } else {
            crate::guard::sandbox::FilePlan::default()
        };
        let mut note = String::new();
        if let Some((plan, _)) = &mounts {
            if let Some(why) = &plan.root_unreadable {
                return Err(ToolError::CannotStart {
                    what: "look for the workspace's secret files before the command",
                    source: std::io::Error::other(format!(
                        "the workspace directory cannot be read ({why})"
                    )),
                    next: "nib runs no command in a workspace it cannot check; give the workspace directory its read permission back in your own shell (chmod u+rwx on it)",
                });
            }
            if !plan.blind.is_empty() {
                let shown: Vec<&str> = plan.blind.iter().take(5).map(String::as_str).collect();
                let more = plan.blind.len().saturating_sub(shown.len());
                note.push_str(&format!(
                    "note: nib could not look inside {}{} (unreadable, nested too deep, or past the {} entries a command's check reads), so {} hidden from this command whole\n",
                    shown.join(", "),
                    if more > 0 { format!(" and {more} more") } else { String::new() },
                    crate::guard::storewalk::MAX_FRESH,
                    if plan.blind.len() == 1 { "it is" } else { "they are" },
                ));
            }
        }
        let prepared = match mounts {
            Some((plan, dirs)) => Some(
                tools::mountns::prepare(&plan, dirs, Some(ws.root())).map_err(
                    |source| ToolError::CannotStart {
                        what: "prepare the command's sandbox",
                        source,
                        next: "rename the file whose path holds a NUL byte, or turn the sandbox off in your config ([guard] file_sandbox = false)",
                    },
                )?,
            ),
            None => None,
        };
        Ok((Some(files), prepared, note))
    }
}
