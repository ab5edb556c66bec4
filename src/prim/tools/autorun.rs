//! Files that run code later, outside nib, checked around each command.
//!
//! The mount sandbox makes the existing ones read-only
//! (`guard::mounts::AUTO_RUN`); a path that does not exist yet cannot be
//! mounted over, and `package.json` must stay writable (`npm install`
//! writes it, as `composer require` writes `composer.json`). So the host
//! looks before and after a command: an auto-run file the command created
//! is removed, and a change to a manifest's lifecycle scripts
//! (`postinstall`, `prepare`, `post-install-cmd`, ...) is put back (a new
//! manifest with one is removed), each with a note that says to make
//! the change with fs-write or fs-edit, which a person confirms. The
//! workspace root is looked at for every auto-run name; the directories
//! three levels below it for the ones tools obey there too (a crate's
//! `.cargo/config.toml`, a workspace package's `package.json`), and, where
//! the session watches the workspace, any depth: the plan's walk tells
//! what was there before, the kernel which files the command wrote.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::guard::mounts::{AUTO_RUN, HOME_READ_ONLY};
use crate::guard::paths::RUN_LATER_NESTED;
use crate::guard::{MANIFESTS, lifecycle_scripts_changed, manifest_tool};

/// Auto-run names obeyed in any directory a tool runs in, not only at
/// the root; a package manifest is judged by its scripts, not by being
/// there.
fn nested_names() -> impl Iterator<Item = &'static str> {
    RUN_LATER_NESTED
        .iter()
        .copied()
        .filter(|n| manifest_tool(n).is_none())
}

/// The nested auto-run name `rel` (below the root, not at it) ends with.
fn nested_name(rel: &str) -> Option<&'static str> {
    nested_names().find(|n| {
        rel.len() > n.len() && rel.ends_with(n) && rel[..rel.len() - n.len()].ends_with('/')
    })
}

/// Package manifests below the places' depth read before a command, at
/// most (a monorepo's deep workspace packages).
const MAX_DEEP_PACKAGES: usize = 256;

/// How many directory levels below the root are looked at: a monorepo's
/// `services/api/web/.envrc` is three down, and direnv obeys it on `cd`.
const PLACE_DEPTH: usize = 3;

/// Directories never looked into: dependencies and build output.
const SKIPPED: &[&str] = &["node_modules", "target", "dist", "build", "venv"];

/// Directories looked at below the root, at most.
const MAX_DIRS: usize = 512;

/// What the auto-run places held before a command.
pub struct Snapshot {
    missing: Vec<&'static str>,
    /// Root-level `*.code-workspace` files (VS Code runs their tasks).
    workspaces: Vec<PathBuf>,
    /// Nested auto-run files that existed.
    nested: Vec<PathBuf>,
    /// Each package manifest (root and nested): its bytes when small enough
    /// to compare, None when too large.
    packages: HashMap<PathBuf, Option<Vec<u8>>>,
    /// Nested repositories' and submodules' git directories: what runs
    /// programs in them.
    git_dirs: super::nestedgit::NestedGit,
    /// Home's run-later places that did not exist (`~/.cargo/config.toml`,
    /// `~/.gradle/init.d`): the plan can make read-only only what exists,
    /// so one a command creates inside a writable cache is removed.
    home_missing: Vec<PathBuf>,
    /// Nested repositories (their directories) at any depth.
    repos: Vec<PathBuf>,
    /// The plan's walk saw every depth: a run-later file the command
    /// wrote that it did not see is new.
    every_depth: bool,
    /// Hooks directories git's settings name (`guard::hooked`) that did
    /// not exist: one a command creates is removed.
    hooks_missing: Vec<PathBuf>,
    /// The files the project's commit hooks run (`guard::hooked`), with
    /// the config that runs each and its bytes.
    hooked: Vec<(PathBuf, String, Vec<u8>)>,
}

/// Looks at the auto-run places under `root`: a few `stat`s, and the
/// run-later files below the root the plan's walk saw (`seen`: at any
/// depth, when the walk was whole and the kernel will tell what the
/// command writes); without them, the directories three levels down.
pub fn snapshot(root: &Path, seen: Option<&[PathBuf]>) -> Snapshot {
    let missing = AUTO_RUN
        .iter()
        .chain(crate::guard::paths::RUN_LATER_NAMED)
        .copied()
        .filter(|rel| root.join(rel).symlink_metadata().is_err())
        .collect();
    let mut nested = Vec::new();
    let mut packages = HashMap::new();
    let mut repos = Vec::new();
    let note_repo = |dir: &Path, repos: &mut Vec<PathBuf>| {
        if super::nestedgit::git_dir_of(dir).is_some() {
            repos.push(dir.to_path_buf());
        }
    };
    // With the walk's list, the root alone is looked at here.
    let looked_at = match seen {
        Some(_) => vec![root.to_path_buf()],
        None => places(root),
    };
    for dir in looked_at {
        if dir != root {
            note_repo(&dir, &mut repos);
        }
        for name in nested_names() {
            let path = dir.join(name);
            if dir != root && path.symlink_metadata().is_ok() {
                nested.push(path);
            }
        }
        for (manifest, _) in MANIFESTS {
            let package = dir.join(manifest);
            if let Ok(meta) = package.symlink_metadata() {
                let bytes = (meta.is_file() && meta.len() <= 1 << 20)
                    .then(|| std::fs::read(&package).ok())
                    .flatten();
                packages.insert(package, bytes);
            }
        }
    }
    let home_missing = std::env::var_os("HOME")
        .map(PathBuf::from)
        .map(|home| {
            HOME_READ_ONLY
                .iter()
                .map(|rel| home.join(rel))
                .filter(|p| p.symlink_metadata().is_err())
                .collect()
        })
        .unwrap_or_default();
    let mut deep_packages = 0usize;
    for path in seen.unwrap_or_default() {
        let name = path.file_name().unwrap_or_default();
        if name == ".git" {
            if let Some(dir) = path.parent()
                && !repos.iter().any(|r| r == dir)
            {
                note_repo(dir, &mut repos);
            }
        } else if name.to_str().and_then(manifest_tool).is_some() {
            if !packages.contains_key(path) {
                deep_packages += 1;
                let bytes = (deep_packages <= MAX_DEEP_PACKAGES)
                    .then(|| std::fs::read(path).ok())
                    .flatten()
                    .filter(|b| b.len() <= 1 << 20);
                packages.insert(path.clone(), bytes);
            }
        } else if !nested.contains(path) {
            nested.push(path.clone());
        }
    }
    let hooked = crate::guard::hooked::hook_scripts(root)
        .into_iter()
        .filter_map(|(rel, by)| {
            let path = root.join(rel);
            let bytes = std::fs::read(&path).ok().filter(|b| b.len() <= 1 << 20)?;
            Some((path, by, bytes))
        })
        .collect();
    let hooks_missing = crate::guard::hooked::hooks_dirs(root)
        .into_iter()
        .map(|d| root.join(d))
        .filter(|p| p.symlink_metadata().is_err())
        .collect();
    Snapshot {
        hooks_missing,
        hooked,
        every_depth: seen.is_some(),
        git_dirs: super::nestedgit::NestedGit::look(root, &repos),
        repos,
        home_missing,
        missing,
        workspaces: code_workspaces(root),
        nested,
        packages,
    }
}

/// The root and the directories up to three levels below it (not
/// hidden, not dependencies or build output), at most `MAX_DIRS`.
fn places(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut level = vec![root.to_path_buf()];
    for _ in 0..PLACE_DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.') || SKIPPED.contains(&name.as_ref()) {
                    continue;
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) && out.len() < MAX_DIRS {
                    out.push(entry.path());
                    next.push(entry.path());
                }
            }
        }
        level = next;
    }
    out
}

fn code_workspaces(root: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "code-workspace"))
                .collect()
        })
        .unwrap_or_default()
}

/// Removes what a command left, even where it took away its own write
/// permission (a read-only directory inside, or around it): the
/// directories are the user's, so their owner's bits are given back first
/// and the parent's put back after.
fn remove_forcibly(path: &Path, dir: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let remove = || {
        if dir {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        }
    };
    match remove() {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
        done => return done,
    }
    fn open_up(dir: &Path, depth: usize) {
        let Ok(meta) = dir.symlink_metadata() else {
            return;
        };
        if !meta.is_dir() || depth > 64 {
            return;
        }
        let mode = meta.permissions().mode();
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o700));
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                open_up(&entry.path(), depth + 1);
            }
        }
    }
    if dir {
        open_up(path, 0);
    }
    let parent = path.parent().and_then(|p| Some((p, p.metadata().ok()?)));
    if let Some((p, meta)) = &parent {
        let mode = meta.permissions().mode();
        let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode | 0o700));
    }
    let removed = remove();
    if let Some((p, meta)) = parent {
        let _ = std::fs::set_permissions(p, meta.permissions());
    }
    removed
}

/// Python bytecode a command wrote into the project's `__pycache__`
/// (commands run with `PYTHONDONTWRITEBYTECODE`, so Python itself wrote
/// none): a `.pyc` stamped with a source's time and size runs in its
/// place, unseen by review or `git status`. Removed; Python compiles
/// the sources again. Virtualenvs and dependencies are left alone.
fn remove_bytecode(root: &Path, written: &[String]) -> String {
    let mut removed = Vec::new();
    for rel in written {
        // (`in_skipped` counts `__pycache__` itself as skipped.)
        let dir = rel.rsplit_once("__pycache__/").map_or("", |(d, _)| d);
        if !rel.ends_with(".pyc") || !rel.contains("__pycache__/") || in_skipped(dir) {
            continue;
        }
        let path = root.join(rel);
        if std::fs::remove_file(&path).is_ok() {
            removed.push(rel.as_str());
            // Left empty, it goes too (only an empty one can be removed).
            if let Some(cache) = path.parent() {
                let _ = std::fs::remove_dir(cache);
            }
        }
    }
    match removed.as_slice() {
        [] => String::new(),
        some => format!(
            "note: the command wrote Python bytecode ({}{}), which would run in place of its source later outside nib's sandbox; nib removed it (Python compiles the sources again).\n",
            some.iter().take(3).copied().collect::<Vec<_>>().join(", "),
            if some.len() > 3 {
                format!(" and {} more", some.len() - 3)
            } else {
                String::new()
            }
        ),
    }
}

/// Whether `rel` lies in a dependency or build directory (npm writes
/// packages' own package.json files there), or one the plan's walk does
/// not enter (what was there before is not known: nothing is removed).
fn in_skipped(rel: &str) -> bool {
    // (A nested repository's `.git` is looked at on its own.)
    rel.split('/').any(|c| {
        SKIPPED.contains(&c) || (c != ".git" && crate::guard::storewalk::NOT_WALKED.contains(&c))
    })
}

impl Snapshot {
    /// After the command: undoes what it did to auto-run places, and says
    /// what (empty when it did nothing there). `written`: the files the
    /// kernel saw the command write, relative to the root (None without
    /// a watch), where run-later files at any depth are looked for.
    pub fn undo(&self, root: &Path, written: Option<&[String]>) -> String {
        let mut notes = String::new();
        let rel = |path: &Path| {
            path.strip_prefix(root)
                .unwrap_or(path)
                .to_string_lossy()
                .into_owned()
        };
        let mut created: Vec<PathBuf> = self.missing.iter().map(|r| root.join(r)).collect();
        created.extend(self.home_missing.iter().cloned());
        created.extend(self.hooks_missing.iter().cloned());
        created.extend(
            code_workspaces(root)
                .into_iter()
                .filter(|p| !self.workspaces.contains(p)),
        );
        // With the walk's list and the kernel's, the root alone is looked
        // at here; without, three levels down.
        let dirs = match written {
            Some(_) if self.every_depth => vec![root.to_path_buf()],
            _ => places(root),
        };
        for dir in dirs.iter().filter(|d| d.as_path() != root) {
            for name in nested_names() {
                let path = dir.join(name);
                if path.symlink_metadata().is_ok() && !self.nested.contains(&path) {
                    created.push(path);
                }
            }
        }
        // Deeper, where the walk saw every depth: what the command wrote.
        let deep: &[String] = match written {
            Some(w) if self.every_depth => w,
            _ => &[],
        };
        let deep: Vec<&String> = deep.iter().filter(|r| !in_skipped(r)).collect();
        for rel in &deep {
            let path = root.join(rel);
            if nested_name(rel).is_some()
                && !self.nested.contains(&path)
                && !created.contains(&path)
            {
                created.push(path);
            }
        }
        for path in created {
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            let removed = remove_forcibly(&path, meta.is_dir());
            let rel = rel(&path);
            notes.push_str(&match removed {
                Ok(()) => format!(
                    "note: the command created {rel}, which runs code later outside nib's sandbox; nib removed it. Write it with fs-write so the user can confirm it.\n"
                ),
                Err(e) => format!(
                    "warning: the command created {rel}, which runs code later outside nib's sandbox, and nib could not remove it ({e}): check it before you open, build or commit this project\n"
                ),
            });
        }
        let mut repos: Vec<PathBuf> = dirs
            .iter()
            .filter(|d| d.as_path() != root)
            .cloned()
            .collect();
        for dir in self
            .repos
            .iter()
            .cloned()
            .chain(deep.iter().filter_map(|rel| {
                let dir = rel
                    .strip_suffix("/.git/config")
                    .or_else(|| rel.strip_suffix("/.git"))?;
                Some(root.join(dir))
            }))
        {
            if !repos.contains(&dir) {
                repos.push(dir);
            }
        }
        notes.push_str(&self.git_dirs.disarm(root, &repos));
        for (path, by, before) in &self.hooked {
            // Removed, the hook fails at the commit: nothing runs.
            let Ok(after) = std::fs::read(path) else {
                continue;
            };
            if after == *before {
                continue;
            }
            let rel = rel(path);
            // Made read-only by the command, it is put back all the same.
            if let Ok(meta) = path.symlink_metadata()
                && meta.is_file()
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = meta.permissions().mode();
                let _ =
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o200));
            }
            notes.push_str(&match crate::files::write_atomic(path, before) {
                Ok(()) => format!(
                    "note: the command changed {rel}, which runs at the user's next git commit ({by} names it) outside nib's sandbox; nib put it back as it was. Change it with fs-edit so the user can confirm it.\n"
                ),
                Err(e) => format!(
                    "warning: the command changed {rel}, which runs at the user's next git commit ({by} names it), and nib could not put it back ({e}): check it before you commit\n"
                ),
            });
        }
        notes.push_str(&remove_bytecode(root, written.unwrap_or_default()));
        let mut packages: Vec<PathBuf> = dirs
            .iter()
            .flat_map(|d| MANIFESTS.iter().map(|(m, _)| d.join(m)))
            .collect();
        for package in self.packages.keys().cloned().chain(
            deep.iter()
                .filter(|r| {
                    MANIFESTS
                        .iter()
                        .any(|(m, _)| r.strip_suffix(m).is_some_and(|d| d.ends_with('/')))
                })
                .map(|r| root.join(r)),
        ) {
            if !packages.contains(&package) {
                packages.push(package);
            }
        }
        for package in packages {
            let before = self.packages.get(&package);
            if matches!(before, Some(None)) {
                continue; // too large to compare
            }
            let Ok(after) = std::fs::read(&package) else {
                continue;
            };
            let before = before.and_then(Option::as_deref);
            if before == Some(after.as_slice()) {
                continue;
            }
            let old = String::from_utf8_lossy(before.unwrap_or_default());
            let name = package
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let Some(tool) = manifest_tool(name) else {
                continue;
            };
            let hooks = lifecycle_scripts_changed(name, &old, &String::from_utf8_lossy(&after));
            if hooks.is_empty() {
                continue;
            }
            let names = hooks.join(", ");
            let rel = rel(&package);
            notes.push_str(&match before {
                None => match std::fs::remove_file(&package) {
                    Ok(()) => format!(
                        "note: the command created {rel} with a {names} script, which {tool} runs on its own at the next install outside nib's sandbox; nib removed it. Write it with fs-write so the user can confirm it.\n"
                    ),
                    Err(e) => format!(
                        "warning: the command created {rel} with a {names} script, which {tool} runs on its own, and nib could not remove it ({e}): check it before the next install\n"
                    ),
                },
                Some(before) => match crate::files::write_atomic(&package, before) {
                    Ok(()) => format!(
                        "note: the command changed {rel}'s {names} script, which {tool} runs on its own at the next install outside nib's sandbox; nib put {rel} back as it was. Change that script with fs-edit so the user can confirm it.\n"
                    ),
                    Err(e) => format!(
                        "warning: the command changed {rel}'s {names} script, which {tool} runs on its own, and nib could not put it back ({e}): check it before the next install\n"
                    ),
                },
            });
        }
        notes
    }
}
