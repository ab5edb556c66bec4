//! Git for SWE-bench runs: finding an instance's clone under `--repos`, a
//! fresh detached worktree of it at `base_commit`, taking the patch out of
//! a worktree, and applying patches (for `grade`).
//!
//! The patch is taken without touching the worktree's own index: its index
//! is copied to a temporary file, `git add -A` runs against the copy (new
//! files included, and what the model staged or committed kept), and `git
//! diff --cached --binary <base>` against it is the patch. nib's session
//! directory `.nib/` and Python's caches are left out.

use std::path::{Path, PathBuf};

use std::sync::{Mutex, PoisonError};

/// Paths never part of a patch (pathspecs for `git diff`): nib's own
/// directory, and byte-code caches a test run leaves in repositories that
/// do not ignore them.
const EXCLUDED: [&str; 4] = [
    ":(exclude).nib",
    ":(exclude,glob)**/__pycache__/**",
    ":(exclude,glob)**/*.pyc",
    ":(exclude,glob)**/.pytest_cache/**",
];

/// `git worktree add/remove` of one clone must not race (they write
/// the clone's worktree list); they are quick, so one lock serves all.
static WORKTREE_OPS: Mutex<()> = Mutex::new(());

/// The same rule across processes: the shards of a Slurm run on one
/// machine share a clone, and two `git worktree add` at once fail on git's
/// own lock files (an instance then ends as an env_error, without a
/// prediction). An exclusive `flock` on a file in the clone's git
/// directory, released when dropped; where it cannot be taken (a
/// read-only clone), the retry in `add` is what is left.
struct CloneLock {
    /// Held open for the lock; closing it releases the lock.
    _file: Option<std::fs::File>,
}

fn lock_clone(clone: &Path) -> CloneLock {
    use std::os::fd::AsRawFd;
    let git_dir = clone.join(".git");
    let dir = if git_dir.is_dir() {
        git_dir
    } else {
        clone.to_path_buf()
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("nib-worktrees.lock"))
        .ok();
    if let Some(f) = &file {
        // SAFETY: flock on a descriptor this function owns; it only
        // blocks until the lock is free, and an error leaves it unlocked.
        unsafe {
            libc::flock(f.as_raw_fd(), libc::LOCK_EX);
        }
    }
    CloneLock { _file: file }
}

/// The clone of `repo` (`owner/name`) under `repos`: `owner__name` or
/// `owner/name`, with a working tree or bare.
pub fn find_clone(repos: &Path, repo: &str) -> Result<PathBuf, String> {
    let flat = repos.join(repo.replace('/', "__"));
    let nested = repos.join(repo);
    for dir in [&flat, &nested] {
        let bare = dir.join("HEAD").is_file() && dir.join("objects").is_dir();
        if dir.join(".git").exists() || bare {
            return Ok(dir.clone());
        }
    }
    Err(format!(
        "no clone of {repo} under {}: looked for {} and {}; clone it there (git clone https://github.com/{repo} {})",
        repos.display(),
        flat.display(),
        nested.display(),
        flat.display()
    ))
}

/// A detached worktree at the base commit, removed by [`Worktree::remove`].
#[derive(Debug)]
pub struct Worktree {
    /// The clone it is registered in; `None` for a repository of its own
    /// (taken from the image).
    clone: Option<PathBuf>,
    path: PathBuf,
    base: String,
}

impl Worktree {
    /// Adds a worktree of `clone` at `base` in `path` (which must not be a
    /// directory in use: a stale one from an earlier run is removed first).
    pub fn add(clone: &Path, path: &Path, base: &str) -> Result<Worktree, String> {
        let _ops = WORKTREE_OPS.lock().unwrap_or_else(PoisonError::into_inner);
        let _clone_lock = lock_clone(clone);
        let commit = format!("{base}^{{commit}}");
        if git(clone, &["rev-parse", "--verify", "--quiet", &commit], &[]).is_err() {
            return Err(format!(
                "the clone {} does not have commit {base}; fetch it (git -C {} fetch origin {base}) or clone with full history",
                clone.display(),
                clone.display()
            ));
        }
        if path.exists() {
            let _ = git(
                clone,
                &["worktree", "remove", "--force", &path_arg(path)],
                &[],
            );
            if path.exists() {
                std::fs::remove_dir_all(path).map_err(|e| {
                    format!("cannot remove the stale worktree {}: {e}", path.display())
                })?;
            }
        }
        // No `git worktree prune`: a clone shared by several machines lists
        // worktrees that exist only on the others. `add --force` reuses a
        // path whose worktree is registered but gone.
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        // Another machine sharing the clone may hold git's lock a moment:
        // a failed add is tried again twice (`--force` makes it repeatable).
        let add = || {
            git(
                clone,
                &[
                    "worktree",
                    "add",
                    "--detach",
                    "--force",
                    &path_arg(path),
                    base,
                ],
                &[],
            )
        };
        let mut added = add();
        for pause in [200, 800] {
            if added.is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(pause));
            added = add();
        }
        added.map_err(|e| format!("git worktree add for {base} failed: {e}"))?;
        Ok(Worktree {
            clone: Some(clone.to_path_buf()),
            path: path.to_path_buf(),
            base: base.to_string(),
        })
    }

    /// A repository of its own at `path`, its files put there by `fill`
    /// (the image's `/testbed`), then set to `base`: tracked files as the
    /// commit has them, untracked files the repository does not ignore
    /// removed, ignored ones (what building the environment made) kept.
    pub fn from_files(
        path: &Path,
        base: &str,
        fill: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<Worktree, String> {
        if path.exists() {
            std::fs::remove_dir_all(path)
                .map_err(|e| format!("cannot remove the stale worktree {}: {e}", path.display()))?;
        }
        std::fs::create_dir_all(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        fill(path)?;
        let commit = format!("{base}^{{commit}}");
        if git(path, &["rev-parse", "--verify", "--quiet", &commit], &[]).is_err() {
            return Err(format!(
                "the image's /testbed repository does not have commit {base}; give a clone holding it under --repos"
            ));
        }
        git(path, &["reset", "-q", "--hard", base], &[])
            .and_then(|_| git(path, &["clean", "-q", "-d", "-f"], &[]))
            .map_err(|e| format!("could not set the image's repository to {base}: {e}"))?;
        Ok(Worktree {
            clone: None,
            path: path.to_path_buf(),
            base: base.to_string(),
        })
    }

    /// Whether it is a repository of its own (taken from the image), not
    /// a worktree of a clone.
    pub fn own_repository(&self) -> bool {
        self.clone.is_none()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The worktree's changes against the base commit as a binary-safe
    /// unified diff (empty when nothing changed).
    pub fn patch(&self) -> Result<Vec<u8>, String> {
        let real = git(&self.path, &["rev-parse", "--git-path", "index"], &[])?;
        let real = self.path.join(String::from_utf8_lossy(&real).trim());
        let mut scratch = self.path.clone().into_os_string();
        scratch.push(".patch-index");
        let scratch = PathBuf::from(scratch);
        if real.is_file() {
            std::fs::copy(&real, &scratch)
                .map_err(|e| format!("cannot copy the index to {}: {e}", scratch.display()))?;
        }
        let env = [("GIT_INDEX_FILE", scratch.as_os_str())];
        // The exclusions go on the diff only: `git add` given an exclude
        // pathspec the repository ignores fails ("paths are ignored").
        let added = git(&self.path, &["add", "-A", "--", "."], &env);
        let mut diff = vec![
            "diff",
            "--cached",
            "--binary",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            &self.base,
            "--",
            ".",
        ];
        diff.extend(EXCLUDED);
        let patch = added.and_then(|_| git(&self.path, &diff, &env));
        let _ = std::fs::remove_file(&scratch);
        patch.map_err(|e| format!("could not take the patch: {e}"))
    }

    /// Removes the worktree (and its entry in the clone).
    pub fn remove(self) -> Result<(), String> {
        let _ops = WORKTREE_OPS.lock().unwrap_or_else(PoisonError::into_inner);
        let _clone_lock = self.clone.as_deref().map(lock_clone);
        let removed = match &self.clone {
            Some(clone) => git(
                clone,
                &["worktree", "remove", "--force", &path_arg(&self.path)],
                &[],
            ),
            None => Err(String::new()),
        };
        if removed.is_err() && self.path.exists() {
            std::fs::remove_dir_all(&self.path)
                .map_err(|e| format!("cannot remove {}: {e}", self.path.display()))?;
        }
        Ok(())
    }
}

/// Applies `patch` in the worktree at `dir` (`git apply`, binary-safe).
pub fn apply(dir: &Path, patch: &[u8]) -> Result<(), String> {
    if patch.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    git_input(
        dir,
        &["apply", "--binary", "--whitespace=nowarn", "-"],
        patch,
    )
    .map(|_| ())
}

/// Restores `paths` (those that exist at `base`) to their content there.
pub fn checkout(dir: &Path, base: &str, paths: &[String]) -> Result<(), String> {
    for path in paths {
        let spec = format!("{base}:{path}");
        if git(dir, &["cat-file", "-e", &spec], &[]).is_ok() {
            git(dir, &["checkout", base, "--", path], &[])?;
        }
    }
    Ok(())
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

/// Runs git in `dir`; stdout on success, else its message.
pub(crate) fn git(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> Result<Vec<u8>, String> {
    run(dir, args, env, None)
}

fn git_input(dir: &Path, args: &[&str], input: &[u8]) -> Result<Vec<u8>, String> {
    run(dir, args, &[], Some(input))
}

fn run(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
    input: Option<&[u8]>,
) -> Result<Vec<u8>, String> {
    let out = crate::files::git::run(dir, args, env, input).map_err(|e| match e {
        crate::files::git::GitError::NotInstalled => {
            "cannot run git (it is not on PATH); SWE-bench runs need the git command line"
                .to_string()
        }
        other => other.to_string(),
    })?;
    if out.ok {
        Ok(out.stdout)
    } else {
        Err(format!(
            "git {}: {}",
            args.first().copied().unwrap_or(""),
            out.stderr
        ))
    }
}
