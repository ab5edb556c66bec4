//! Git directories inside the workspace whose config and hooks the mount
//! plan could not make read-only: a nested repository's (`lib/.git`, or
//! where a `.git` file points, through its `commondir`), a submodule's
//! (`.git/modules/...`), and the workspace's own when a command made it
//! (`git init`). A command may
//! write them, and the user's own git runs what they name at the next
//! `git status` there (a prompt, an editor's git view): a config that
//! runs a program is moved aside, a new or changed hook is disabled by
//! name. Each with a note; nothing is deleted.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Submodule git directories looked at, at most, and how deep.
const MAX_MODULES: usize = 64;
const MODULE_DEPTH: usize = 3;

/// What a git directory held that runs programs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GitDirState {
    config: Option<Vec<u8>>,
    /// Hooks (not git's `.sample` files), with their size and change time.
    hooks: Vec<(String, u64, i64, i64)>,
}

/// The git directories of nested repositories and submodules, with what
/// each held.
#[derive(Debug, Default)]
pub struct NestedGit {
    dirs: HashMap<PathBuf, GitDirState>,
}

/// The git directory whose config and hooks serve the repository at
/// `dir`: the common one (`files::git::locate`).
pub fn git_dir_of(dir: &Path) -> Option<PathBuf> {
    crate::files::git::locate(dir).map(|d| d.common)
}

/// The submodules' git directories under the workspace's own
/// `.git/modules`, nested ones too.
pub fn module_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(root.join(".git/modules"), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if out.len() >= MAX_MODULES {
                return out;
            }
            let path = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if path.join("HEAD").exists() {
                if depth < MODULE_DEPTH {
                    stack.push((path.join("modules"), depth + 1));
                }
                out.push(path);
            } else if depth < MODULE_DEPTH {
                // A submodule named with a slash (`libs/a`).
                stack.push((path, depth + 1));
            }
        }
    }
    out
}

fn state(git_dir: &Path) -> GitDirState {
    let config = std::fs::read(git_dir.join("config")).ok();
    let mut hooks: Vec<(String, u64, i64, i64)> = std::fs::read_dir(git_dir.join("hooks"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.ends_with(".sample") || name.ends_with(DISABLED) {
                        return None;
                    }
                    let m = e.path().symlink_metadata().ok()?;
                    Some((name, m.len(), m.mtime(), m.ctime()))
                })
                .collect()
        })
        .unwrap_or_default();
    hooks.sort();
    GitDirState { config, hooks }
}

/// What a disabled hook's or config's name ends with.
const DISABLED: &str = ".nib-disabled";

impl NestedGit {
    /// Before a command: the git directories of the repositories at
    /// `repos` and of the workspace's submodules.
    pub fn look(root: &Path, repos: &[PathBuf]) -> NestedGit {
        // The workspace's own: its config and hooks are read-only to
        // commands when it exists, but a command may make it (`git init`).
        let dirs = repos
            .iter()
            .chain(std::iter::once(&root.to_path_buf()))
            .filter_map(|r| git_dir_of(r))
            .chain(module_dirs(root))
            .map(|d| {
                let s = state(&d);
                (d, s)
            })
            .collect();
        NestedGit { dirs }
    }

    /// After a command: for the repositories at `repos` (those looked at
    /// before, and any the command made) and the workspace's submodules,
    /// a config changed to run a program is moved aside, and a hook made
    /// or changed is renamed so git does not run it. The notes say what.
    pub fn disarm(&self, root: &Path, repos: &[PathBuf]) -> String {
        let mut dirs: Vec<PathBuf> = repos
            .iter()
            .chain(std::iter::once(&root.to_path_buf()))
            .filter_map(|r| git_dir_of(r))
            .collect();
        dirs.extend(module_dirs(root));
        dirs.extend(self.dirs.keys().cloned());
        dirs.sort();
        dirs.dedup();
        let rel = |p: &Path| {
            p.strip_prefix(root)
                .unwrap_or(p)
                .to_string_lossy()
                .into_owned()
        };
        let mut notes = String::new();
        for dir in dirs {
            let before = self.dirs.get(&dir);
            let now = state(&dir);
            if before == Some(&now) {
                continue;
            }
            let before = before.cloned().unwrap_or_default();
            if let Some(config) = &now.config
                && before.config.as_ref() != Some(config)
                && runs_programs(config)
            {
                let from = dir.join("config");
                let aside = dir.join(format!("config{DISABLED}"));
                notes.push_str(&match std::fs::rename(&from, &aside) {
                    Ok(()) => format!(
                        "note: the command set {} to run a program (a fsmonitor, hook path, pager, filter…), which the user's own git would run there outside nib's sandbox; nib moved it to {}. Ask the user to set it themselves.\n",
                        rel(&from),
                        rel(&aside)
                    ),
                    Err(e) => format!(
                        "warning: the command set {} to run a program outside nib's sandbox, and nib could not move it away ({e}): check it before you run git there\n",
                        rel(&from)
                    ),
                });
            }
            for hook in now.hooks.iter().filter(|h| !before.hooks.contains(h)) {
                let from = dir.join("hooks").join(&hook.0);
                let aside = dir.join("hooks").join(format!("{}{DISABLED}", hook.0));
                notes.push_str(&match std::fs::rename(&from, &aside) {
                    Ok(()) => format!(
                        "note: the command made or changed the git hook {}, which the user's own git would run outside nib's sandbox; nib renamed it to {} so git does not run it. Ask the user to install hooks themselves.\n",
                        rel(&from),
                        rel(&aside)
                    ),
                    Err(e) => format!(
                        "warning: the command made the git hook {}, which runs outside nib's sandbox, and nib could not disable it ({e}): remove it before you run git there\n",
                        rel(&from)
                    ),
                });
            }
        }
        notes
    }
}

/// Whether git config text sets something git runs or obeys as a
/// program.
pub fn runs_programs(config: &[u8]) -> bool {
    const KEYS: &[&str] = &[
        "fsmonitor",
        "hookspath",
        "sshcommand",
        "pager",
        "editor",
        "askpass",
        "[filter",
        "textconv",
        "external",
        "[alias",
        "[include",
        "program",
        "[credential",
        "gitproxy",
    ];
    let text = String::from_utf8_lossy(config).to_ascii_lowercase();
    KEYS.iter().any(|k| text.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_hook_or_a_config_that_runs_a_program_is_disarmed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let lib = root.join("lib");
        std::fs::create_dir_all(lib.join(".git/hooks")).unwrap();
        std::fs::write(lib.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(lib.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(lib.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        // A submodule's git directory, and a worktree-like `.git` file
        // whose commondir leads to a planted directory.
        let module = root.join(".git/modules/vendor/x");
        std::fs::create_dir_all(module.join("hooks")).unwrap();
        std::fs::write(module.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let planted = root.join("planted");
        std::fs::create_dir_all(root.join("wt-git")).unwrap();
        std::fs::create_dir_all(planted.join("hooks")).unwrap();
        std::fs::write(root.join("wt-git/commondir"), "../planted\n").unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: ../wt-git\n").unwrap();
        let repos = vec![lib.clone(), root.join("wt")];
        let looked = NestedGit::look(&root, &repos);
        assert_eq!(looked.disarm(&root, &repos), "");
        std::fs::write(lib.join(".git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
        std::fs::write(lib.join(".git/hooks/post-checkout"), "#!/bin/sh\nx\n").unwrap();
        std::fs::write(module.join("hooks/pre-commit"), "#!/bin/sh\nx\n").unwrap();
        std::fs::write(planted.join("hooks/post-merge"), "#!/bin/sh\nx\n").unwrap();
        let notes = looked.disarm(&root, &repos);
        assert!(lib.join(".git/config.nib-disabled").exists(), "{notes}");
        for hook in [
            lib.join(".git/hooks/post-checkout"),
            module.join("hooks/pre-commit"),
            planted.join("hooks/post-merge"),
        ] {
            assert!(!hook.exists(), "{} {notes}", hook.display());
            let mut kept = hook.into_os_string();
            kept.push(".nib-disabled");
            assert!(Path::new(&kept).exists(), "{notes}");
        }
        assert!(lib.join(".git/hooks/pre-commit.sample").exists());
    }
}
