//! The mount sandbox's plan: how a shell command's private mount namespace
//! differs from the host's, for the kernel to carry out
//! (`prim/tools/mountns.rs`). The file sandbox (`sandbox.rs`, Landlock)
//! bounds where a command may write; this plan decides what it sees:
//!
//! - every secret store the guard knows in the workspace (`.env*` but
//!   templates, keys, what the user or the project protects as secret,
//!   hard links to them, files a command wrote with a known secret) is
//!   covered by an empty read-only file or directory, so it reads as
//!   empty while everything beside it, what the command creates included,
//!   stays readable;
//! - the home directory is an empty directory with only an allowlist of
//!   what builds need shown through (toolchains, package caches,
//!   `~/.gitconfig` read-only), and the credential files inside those
//!   covered again;
//! - `/tmp`, `/var/tmp`, `/dev/shm` and `/run` are the session's own
//!   directories, so host sockets (an agent's, a listener a script
//!   started, the container engine's) cannot be reached by path and
//!   nothing is left outside the workspace for later;
//! - `.git/config`, `.git/hooks`, `.git/info` and the files that run code
//!   later (CI workflows, editor tasks, hook managers) are read-only: a
//!   command cannot leave a hook that runs at the user's next commit.
//!
//! The plan is data: which paths, in which order. Where the kernel has no
//! mount namespaces the shell tool says so and the Landlock plan alone
//! applies.

use std::path::{Path, PathBuf};

use super::paths::PathRules;
use super::storewalk::Found;

/// What the home directory shows through read-only by default: toolchains,
/// the version managers, git's own settings (relative to `$HOME`). The
/// build caches are shown writable (`files::home::WRITABLE_CACHES`).
pub const HOME_SHOWN: &[&str] = &[
    ".rustup",
    ".local",
    ".pyenv",
    ".nvm",
    ".rbenv",
    ".rvm",
    ".sdkman",
    ".asdf",
    ".volta",
    ".bun",
    ".deno",
    ".nix-profile",
    ".conda",
    "miniconda3",
    "anaconda3",
    ".gitconfig",
    ".gitignore_global",
    ".config/git/config",
    ".config/git/ignore",
    ".config/git/attributes",
];

/// Credential files inside the allowed places, covered again.
pub const HOME_CREDENTIALS: &[&str] = &[
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".gem/credentials",
    ".local/share/keyrings",
    ".local/share/gh",
    ".local/share/containers/auth.json",
    ".config/git/credentials",
    ".yarn/berry/.yarnrc.yml",
    ".sbt/credentials",
    ".sbt/.credentials",
    ".ivy2/.credentials",
    ".conda/.condarc",
    ".npm/.npmrc",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".local/share/fish/fish_history",
    ".local/share/python_keyring",
    ".local/share/keyring",
    ".local/share/atuin",
    ".local/share/zsh",
    ".local/state/zsh",
    ".cache/pip/credentials",
    // Found by a second red team: what sits in allowed places.
    ".local/share/Trash",
    ".npm/_logs",
    ".cache/zsh",
    ".local/state/bash",
    ".local/share/jupyter/runtime",
    ".local/share/code-server",
    ".cache/git/credential",
    // Found by a third red team: editors' and tools' state in allowed
    // places (uv's index credentials, Neovim's shada history of yanks
    // and commands).
    ".local/share/uv/credentials",
    ".local/state/nvim/shada",
    ".local/share/nvim/shada",
    ".local/state/vim",
    ".viminfo",
    ".local/share/recently-used.xbel",
];

/// Places inside the allowed parts of home that run code later, outside
/// nib (a program on PATH, cargo's wrappers, gradle's init scripts): shown
/// read-only even where their directory is writable.
pub const HOME_READ_ONLY: &[&str] = &[
    ".cargo/bin",
    ".cargo/config.toml",
    ".cargo/config",
    ".cargo/env",
    ".gradle/init.d",
    ".gradle/init.gradle",
    ".gradle/init.gradle.kts",
    ".m2/extensions.xml",
    ".npm/_npx",
    ".yarn/bin",
    ".cache/pre-commit",
    "go/bin",
];

/// Paths under `.git/` a command may read but not change: what git runs
/// or obeys on its own at the user's next command.
pub const GIT_READ_ONLY: &[&str] = &[
    ".git/config",
    ".git/config.worktree",
    ".git/hooks",
    ".git/info",
];

/// Files in the workspace that run code later, outside nib, when a person
/// opens, builds or commits: read-only to commands when they exist.
pub const AUTO_RUN: &[&str] = &[
    ".github/workflows",
    ".github/actions",
    ".gitlab-ci.yml",
    ".gitlab",
    ".vscode",
    ".devcontainer",
    ".devcontainer.json",
    ".cargo/config.toml",
    ".cargo/config",
    ".yarnrc.yml",
    ".yarnrc",
    ".pnpmfile.cjs",
    ".husky",
    ".githooks",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    ".circleci",
    ".buildkite",
    ".travis.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    "Jenkinsfile",
    // direnv runs it on `cd`; cargo and rustup run a toolchain it names;
    // mise and bun run hooks and preloads they name.
    ".envrc",
    "rust-toolchain.toml",
    "rust-toolchain",
    ".mise.toml",
    "mise.toml",
    ".mise",
    "bunfig.toml",
    // git reads config and hooks from the directory it names.
    ".git/commondir",
    // npm obeys `node-options` and `script-shell` in it.
    ".npmrc",
];

/// nib's own stores in the workspace (versions, patch journals, session
/// logs, the quarantine): covered for commands, which could read a secret
/// file's earlier version there, or forge what nib restores at its next
/// start.
pub const NIB_OWN: &str = ".nib";

/// Directories replaced by the session's own (`(target, name of the
/// session's directory)`).
pub const PRIVATE_DIRS: &[(&str, &str)] = &[
    ("/tmp", "tmp"),
    ("/var/tmp", "var-tmp"),
    ("/dev/shm", "shm"),
    ("/run", "run"),
];

/// One step of the plan, in the order the kernel carries them out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountStep {
    /// `target` becomes the session's directory `source` (a bind).
    Private { target: PathBuf, source: PathBuf },
    /// `target` becomes an empty directory (a fresh tmpfs).
    Empty { target: PathBuf },
    /// `path` as it is on the host is shown at the same place again,
    /// after something above it was covered.
    Keep { path: PathBuf, writable: bool },
    /// `path` is covered by an empty read-only file or directory.
    Mask { path: PathBuf, dir: bool },
    /// `path` is covered read-only by `source` (git's index copy of a
    /// secret store it tracks: `tracked.rs`).
    MaskWith { path: PathBuf, source: PathBuf },
    /// nib's own `.nib/` is covered by a read-only directory holding only
    /// a `.gitignore` of `*`: git in the command then leaves it alone, as
    /// it would the real one (`git stash -u` would try to remove an empty
    /// untracked directory, and fail on the mount).
    MaskOwn { path: PathBuf },
    /// `path` stays as it is, read-only.
    ReadOnly { path: PathBuf },
}

/// The plan for one command.
#[derive(Debug, Clone, Default)]
pub struct MountPlan {
    pub steps: Vec<MountStep>,
    /// The workspace's secret stores masked (absolute): what the guard's
    /// word rules may take as unreadable to commands.
    pub masked: Vec<PathBuf>,
    /// The home directory was replaced.
    pub home_masked: bool,
    /// The walk of the workspace stopped at its bound.
    pub truncated: bool,
    /// Directories covered whole because the walk could not look inside
    /// (unreadable, too deep, past its bound), relative to the root.
    pub blind: Vec<String>,
    /// The workspace's own directory could not be read: no command may
    /// run, since nothing in it can be checked.
    pub root_unreadable: Option<String>,
}

/// What the plan is made from.
pub struct MountInputs<'a> {
    /// The workspace root (canonical).
    pub root: &'a Path,
    pub rules: &'a PathRules,
    /// Workspace files commands wrote with a known secret in them.
    pub tainted: &'a [String],
    /// What the walk for secret stores found (`storewalk`).
    pub found: &'a Found,
    /// The home directory (canonical), when there is one.
    pub home: Option<&'a Path>,
    /// More home entries to show through (the user's config), relative to
    /// home, each writable.
    pub home_extra: &'a [String],
    /// The session's directories (`PRIVATE_DIRS`' names inside it).
    pub session_dir: &'a Path,
    /// Top-level directories to cover (`outside::covered_top_dirs`).
    pub covered_top: &'a [PathBuf],
    /// Places outside the workspace shown read-only where they would be
    /// covered (toolchains on `PATH`, `[guard] show`), canonical.
    pub shown: &'a [PathBuf],
    /// Unix sockets host processes listen on (`outside::host_sockets`).
    pub sockets: &'a [PathBuf],
}

/// The mount plan for a command in `inputs.root`.
pub fn plan(inputs: &MountInputs<'_>) -> MountPlan {
    let root = inputs.root;
    let mut steps = Vec::new();
    for (target, name) in PRIVATE_DIRS {
        let target = Path::new(target);
        if let Ok(real) = target.canonicalize()
            && real.is_dir()
        {
            steps.push(MountStep::Private {
                target: real,
                source: inputs.session_dir.join(name),
            });
        }
    }
    // Other people's and other projects' data: every top-level
    // directory that is not the system's (`outside`), the workspace and
    // home shown again below.
    for top in inputs.covered_top {
        if top != root && !top.starts_with(root) {
            steps.push(MountStep::Empty {
                target: top.clone(),
            });
        }
    }
    // What the home directory shows through.
    let mut home_masked = false;
    if let Some(home) = inputs.home.filter(|h| h.is_dir()) {
        // A workspace inside home is shown through whole (below), so the
        // home directory can still be masked around it; a home inside the
        // workspace (or the workspace itself) is the workspace's.
        if !home.starts_with(root) && home != Path::new("/") {
            home_masked = true;
            steps.push(MountStep::Empty {
                target: home.to_path_buf(),
            });
            let allowed = home_allowed()
                .map(|(n, w)| (n.to_string(), w))
                .chain(inputs.home_extra.iter().map(|n| (n.clone(), true)));
            for (name, writable) in allowed {
                let name = name.trim_start_matches("~/").trim_start_matches('/');
                let path = home.join(name);
                // A link out of home shows where it leads (a toolchain
                // kept elsewhere); its target is judged as any path.
                if path.symlink_metadata().is_ok() {
                    steps.push(MountStep::Keep { path, writable });
                }
            }
        }
    }
    // The workspace comes back wherever it lives (under /tmp, in home).
    steps.push(MountStep::Keep {
        path: root.to_path_buf(),
        writable: true,
    });
    // Toolchains the environment points at, where they were covered.
    let home_shown = |p: &Path| {
        inputs.home.is_some_and(|h| {
            p.strip_prefix(h).is_ok_and(|rel| {
                let rel = rel.to_string_lossy();
                !home_entry_masked(&rel)
                    || inputs.home_extra.iter().any(|n| {
                        let n = n.trim_start_matches("~/").trim_start_matches('/');
                        rel == n || rel.starts_with(&format!("{n}/"))
                    })
            })
        })
    };
    for path in inputs.shown {
        let covered = inputs.covered_top.iter().any(|t| path.starts_with(t))
            || (home_masked && inputs.home.is_some_and(|h| path.starts_with(h)));
        if covered && !path.starts_with(root) && !home_shown(path) {
            steps.push(MountStep::Keep {
                path: path.clone(),
                writable: false,
            });
        }
    }
    // A linked worktree (`git worktree`, nib swebench's local runs) keeps
    // its repository elsewhere: shown writable (commits, the index), its
    // settings and hooks read-only below.
    let git_dirs = linked_git_dirs(root);
    for dir in &git_dirs {
        steps.push(MountStep::Keep {
            path: dir.clone(),
            writable: true,
        });
    }
    // Session temp dirs hold nothing of the host: a workspace under one
    // of them was kept above.
    let mut masked = Vec::new();
    let mut secrets = Vec::new();
    secrets.extend(inputs.found.stores.iter().cloned());
    // What the walk could not look into is covered whole: fail closed.
    secrets.extend(inputs.found.blind.iter().cloned());
    for rel in inputs.tainted {
        secrets.push(root.join(rel));
    }
    secrets.sort();
    secrets.dedup();
    for path in secrets {
        // A link's target was canonicalized by the walk: it is covered
        // wherever it lives, so the link reads empty too.
        if path == root || root.starts_with(&path) {
            continue;
        }
        let dir = path.is_dir();
        masked.push(path.clone());
        steps.push(MountStep::Mask { path, dir });
    }
    if let Some(home) = inputs.home.filter(|_| home_masked) {
        for name in HOME_CREDENTIALS {
            // A credential file that is a link (a dotfile manager's) is
            // covered where it leads.
            let Ok(path) = home.join(name).canonicalize() else {
                continue;
            };
            if let Ok(meta) = path.metadata() {
                steps.push(MountStep::Mask {
                    dir: meta.is_dir(),
                    path,
                });
            }
        }
        for name in HOME_READ_ONLY {
            let path = home.join(name);
            if path
                .symlink_metadata()
                .is_ok_and(|m| !m.file_type().is_symlink())
            {
                steps.push(MountStep::ReadOnly { path });
            }
        }
    }
    // The directories that hold read-only places are mount points too, so
    // no command can rename one away and put a new one in its place (a
    // `.git` of its own with hooks, a `.github` with a workflow).
    let mut parents: Vec<&str> = GIT_READ_ONLY
        .iter()
        .chain(AUTO_RUN)
        .chain(super::paths::RUN_LATER_NAMED)
        .filter_map(|rel| rel.split_once('/').map(|(dir, _)| dir))
        .collect();
    parents.dedup();
    for dir in parents {
        let path = root.join(dir);
        if path
            .symlink_metadata()
            .is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink())
        {
            steps.push(MountStep::Keep {
                path,
                writable: true,
            });
        }
    }
    // (A hooks directory a relative `core.hooksPath` names too.)
    let hooks = super::hooked::hooks_dirs(root);
    for rel in GIT_READ_ONLY
        .iter()
        .chain(AUTO_RUN)
        .chain(super::paths::RUN_LATER_NAMED)
        .copied()
        .chain(hooks.iter().map(String::as_str))
    {
        let path = root.join(rel);
        if let Ok(meta) = path.symlink_metadata()
            && !meta.file_type().is_symlink()
        {
            steps.push(MountStep::ReadOnly { path });
        }
    }
    // nib's own stores hold what commands must not see (versions of
    // secret files kept for undo, copies of secrets in the quarantine)
    // nor forge (a journal nib replays at its next start): covered.
    let own = root.join(NIB_OWN);
    if own
        .symlink_metadata()
        .is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink())
    {
        masked.push(own.clone());
        steps.push(MountStep::MaskOwn { path: own });
    }
    for dir in &git_dirs {
        for part in ["config", "config.worktree", "hooks", "info"] {
            let path = dir.join(part);
            if path
                .symlink_metadata()
                .is_ok_and(|m| !m.file_type().is_symlink())
            {
                steps.push(MountStep::ReadOnly { path });
            }
        }
    }
    steps.extend(
        other_checkouts(root)
            .into_iter()
            .chain(included_configs(root))
            .map(|path| MountStep::ReadOnly { path }),
    );
    // Submodules' own configs and hooks.
    if let Ok(entries) = std::fs::read_dir(root.join(".git/modules")) {
        for entry in entries.flatten().take(64) {
            for part in ["config", "hooks"] {
                let path = entry.path().join(part);
                if path.exists() {
                    steps.push(MountStep::ReadOnly { path });
                }
            }
        }
    }
    // Last, on top of everything shown: no host daemon's socket answers.
    for path in inputs.sockets {
        steps.push(MountStep::Mask {
            path: path.clone(),
            dir: false,
        });
    }
    MountPlan {
        steps,
        masked,
        home_masked,
        truncated: inputs.found.truncated,
        blind: inputs
            .found
            .blind
            .iter()
            .filter_map(|p| p.strip_prefix(root).ok())
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        root_unreadable: inputs.found.root_unreadable.clone(),
    }
}

/// Where a linked worktree's repository lives, when `root/.git` is a
/// file (`gitdir: …`): its own git directory and the common one
/// (`commondir`), those outside the workspace, canonical.
fn linked_git_dirs(root: &Path) -> Vec<PathBuf> {
    let Some((gitdir, common)) = linked(root) else {
        return Vec::new();
    };
    // The worktree's own directory lies inside the common one.
    let mut dirs = if gitdir.starts_with(&common) {
        vec![common]
    } else {
        vec![gitdir, common]
    };
    dirs.retain(|d| !d.starts_with(root));
    dirs
}

/// A linked worktree's git directory and the common one, canonical;
/// None for a plain repository (its `.git` a directory) or none.
fn linked(root: &Path) -> Option<(PathBuf, PathBuf)> {
    if !root.join(".git").is_file() {
        return None;
    }
    let dirs = crate::files::git::locate(root)?;
    Some((
        dirs.git_dir.canonicalize().ok()?,
        dirs.common.canonicalize().ok()?,
    ))
}

/// For a linked worktree: what of the repository belongs to the other
/// checkouts (the main one's index, the other worktrees' directories)
/// and what says where this one's repository is (`commondir`, `gitdir`).
/// A command writing them would act at the user's next git command in
/// another checkout (an index entry naming `../.bashrc` is written out by
/// `git restore .`) or point this one's git at a planted directory.
fn other_checkouts(root: &Path) -> Vec<PathBuf> {
    let Some((gitdir, common)) = linked(root).filter(|(g, c)| g != c) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = ["commondir", "gitdir"]
        .iter()
        .map(|f| gitdir.join(f))
        .chain(std::iter::once(common.join("index")))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        out.extend(
            entries
                .flatten()
                .take(64)
                .map(|e| e.path())
                .filter(|p| *p != gitdir && p.is_dir()),
        );
    }
    out
}

/// Files in the workspace that the repository's config includes
/// (`[include] path = ../.gitconfig`, a project's shared settings): git
/// obeys them as its own config, which is read-only to commands.
fn included_configs(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(root.join(".git/config")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (section, key, value) in crate::files::git::config_entries(&text) {
        // `[includeIf "…"]` too: its condition may hold.
        if !section.starts_with("include") || !key.eq_ignore_ascii_case("path") {
            continue;
        }
        // Relative to the config's own directory, as git reads it.
        if let Ok(path) = root.join(".git").join(value).canonicalize()
            && path.starts_with(root)
            && path.is_file()
        {
            out.push(path);
        }
    }
    out
}

/// Whether `rel` (relative to home) is masked from commands: not under
/// an allowed entry, or a credential file inside one.
pub fn home_entry_masked(rel: &str) -> bool {
    let under = |name: &str| rel == name || rel.starts_with(&format!("{name}/"));
    !home_allowed().any(|(name, _)| under(name)) || HOME_CREDENTIALS.iter().any(|n| under(n))
}

/// What of home commands see by default, `(name, writable)`.
fn home_allowed() -> impl Iterator<Item = (&'static str, bool)> {
    crate::files::home::WRITABLE_CACHES
        .iter()
        .map(|n| (*n, true))
        .chain(HOME_SHOWN.iter().map(|n| (*n, false)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Whether `path` (absolute) is covered by the plan: a masked secret, or
    /// under the masked home directory and not shown through.
    fn hides(plan: &MountPlan, path: &Path) -> bool {
        if plan.masked.iter().any(|m| path.starts_with(m)) {
            return true;
        }
        let mut shown_home = false;
        let mut home = None;
        for step in &plan.steps {
            match step {
                MountStep::Empty { target } => home = Some(target),
                MountStep::Keep { path: kept, .. } if path.starts_with(kept) => shown_home = true,
                MountStep::Mask { path: masked, .. } if path.starts_with(masked) => return true,
                _ => {}
            }
        }
        home.is_some_and(|h| path.starts_with(h)) && !shown_home
    }

    #[test]
    fn secrets_masked_home_allowlisted_git_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        fs::create_dir_all(base.join("ws/.git/hooks")).unwrap();
        fs::write(base.join("ws/.git/config"), "[core]\n").unwrap();
        fs::write(base.join("ws/.env"), "K=v\n").unwrap();
        fs::write(base.join("ws/.env.example"), "K=\n").unwrap();
        fs::create_dir_all(base.join("home/.cargo")).unwrap();
        fs::create_dir_all(base.join("home/.ssh")).unwrap();
        fs::write(base.join("home/.cargo/credentials.toml"), "token\n").unwrap();
        fs::write(base.join("home/.s3cfg"), "secret\n").unwrap();
        let root = base.join("ws");
        let home = base.join("home");
        let plan = plan(&MountInputs {
            root: &root,
            rules: &PathRules::default(),
            tainted: &[],
            found: &crate::guard::storewalk::walk(
                &root,
                &PathRules::default(),
                &mut Default::default(),
            ),
            home: Some(&home),
            home_extra: &[],
            session_dir: &base.join("session"),
            covered_top: &[],
            shown: &[],
            sockets: &[],
        });
        assert!(plan.home_masked);
        assert_eq!(plan.masked, vec![root.join(".env")]);
        for hidden in [
            root.join(".env"),
            home.join(".s3cfg"),
            home.join(".ssh/id_rsa"),
            home.join(".cargo/credentials.toml"),
        ] {
            assert!(hides(&plan, &hidden), "{} shown", hidden.display());
        }
        for shown in [root.join(".env.example"), home.join(".cargo/bin/cargo")] {
            assert!(!hides(&plan, &shown), "{} hidden", shown.display());
        }
        for ro in [root.join(".git/config"), root.join(".git/hooks")] {
            assert!(
                plan.steps
                    .contains(&MountStep::ReadOnly { path: ro.clone() }),
                "{} not read-only",
                ro.display()
            );
        }
        // The workspace is shown after home was covered, and before the
        // masks inside it.
        let keep_ws = plan
            .steps
            .iter()
            .position(|s| matches!(s, MountStep::Keep { path, .. } if *path == root));
        let mask_env = plan
            .steps
            .iter()
            .position(|s| matches!(s, MountStep::Mask { path, .. } if *path == root.join(".env")));
        assert!(keep_ws.is_some() && keep_ws < mask_env, "{:?}", plan.steps);
    }
}
