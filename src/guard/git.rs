//! The repository questions a shell command raises, answered by running
//! git read-only in the workspace: what a commit or push would send out
//! (the outgoing diff and the files it adds), and whether the repository
//! holds or ever held a protected file (for commands that print history).
//! Separate because it is the only part of the guard that runs a program.

use super::disk::current_text;
use super::paths::PathRules;
use super::shell;
use crate::files::Workspace;

/// The output of a read-only git command in the workspace, with the
/// repository's fsmonitor hook off (a cloned repository's config must not
/// run a program) and no pager; a failure says which command and why.
fn git(ws: &Workspace, args: &[&str]) -> Result<String, String> {
    let out = crate::files::git::run(ws.root(), args, &[], None).map_err(|e| e.to_string())?;
    if !out.ok {
        return Err(format!("git {}: {}", args.join(" "), out.stderr));
    }
    Ok(out.stdout_text())
}

/// The secret stores' names a repository's history and index hold,
/// remembered with the state of its refs and index they were read at.
#[derive(Debug, Default)]
pub(super) struct HistoryNames {
    stamp: Vec<(std::path::PathBuf, Option<std::time::SystemTime>, u64)>,
    names: Vec<String>,
}

/// What a ref or index change touches: every loose ref, `packed-refs`,
/// `HEAD` and the index, with their times and sizes.
fn history_stamp(ws: &Workspace) -> Vec<(std::path::PathBuf, Option<std::time::SystemTime>, u64)> {
    let Some(dirs) = crate::files::git::locate(ws.root()) else {
        return Vec::new();
    };
    let mut paths = vec![
        dirs.common.join("packed-refs"),
        dirs.git_dir.join("HEAD"),
        dirs.git_dir.join("index"),
    ];
    let mut dirs_left = vec![dirs.common.join("refs")];
    while let Some(dir) = dirs_left.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs_left.push(entry.path());
            } else {
                paths.push(entry.path());
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let meta = p.metadata().ok();
            let modified = meta.as_ref().and_then(|m| m.modified().ok());
            (p, modified, meta.map_or(0, |m| m.len()))
        })
        .collect()
}

/// A protected file the repository holds or ever held (outside `.git/`),
/// within `pathspecs` when there are any. The names are read again only
/// when a ref or the index changed since `cache` was filled: a whole
/// history's log is seconds in a large repository.
pub(super) fn history_protected(
    ws: &Workspace,
    rules: &PathRules,
    pathspecs: &[String],
    cache: &mut HistoryNames,
) -> Option<String> {
    let stamp = history_stamp(ws);
    if stamp.is_empty() || stamp != cache.stamp {
        let names = git(
            ws,
            &[
                "log",
                "--all",
                "--format=",
                "--name-only",
                "--diff-filter=ACR",
                "--no-renames",
            ],
        )
        // not a repository, or no commits: nothing in history
        .ok()?;
        // Through the same read-only runner: a repository's configured
        // fsmonitor must not run for the guard's own questions.
        let index = git(ws, &["ls-files", "--cached"]).unwrap_or_default();
        let mut stores: Vec<String> = names
            .lines()
            .chain(index.lines())
            .filter(|n| !n.is_empty() && !n.to_lowercase().starts_with(".git/"))
            // What reading history exposes: secrets, not files that only
            // run code later (a tracked CI workflow).
            .filter(|n| rules.is_secret_store(n))
            .map(str::to_string)
            .collect();
        stores.sort();
        stores.dedup();
        *cache = HistoryNames {
            stamp,
            names: stores,
        };
    }
    cache
        .names
        .iter()
        .find(|n| {
            pathspecs.is_empty()
                || pathspecs.iter().any(|p| {
                    let p = p.trim_start_matches("./").trim_end_matches('/');
                    p.is_empty()
                        || p == "."
                        || *n == p
                        || n.starts_with(&format!("{p}/"))
                        || shell::glob_matches(p, n)
                })
        })
        .cloned()
}

/// What a commit or push would carry. For a commit: the index after the
/// line's own staging (`add`/`stage` in any form, `commit -a`, paths given
/// to `commit`, `update-index`), so the staged diff, the tracked changes
/// when anything stages them, the untracked files it adds (ignored ones
/// too when forced), and the message or patch files it records. For a
/// push: the commits on no remote, on any branch. With it, the files the
/// commit would add to the repository.
pub(super) fn outgoing_text(
    ws: &Workspace,
    outgoing: &shell::GitOutgoing,
    staging: &shell::Staging,
) -> Result<(String, Vec<String>), String> {
    // `git -C sub commit`, `cd sub && git commit`: that repository.
    let dir = staging.dir.as_str();
    let in_dir = |args: &[&str]| {
        let mut all: Vec<&str> = Vec::with_capacity(args.len() + 2);
        if !dir.is_empty() {
            all.extend(["-C", dir]);
        }
        all.extend(args);
        git(ws, &all)
    };
    if *outgoing == shell::GitOutgoing::Push {
        let text = in_dir(&["log", "-p", "--no-ext-diff", "--all", "--not", "--remotes"])?;
        let added = added_in_patch(&text);
        return Ok((text, added));
    }
    let stages = staging.tracked || staging.all_untracked || !staging.paths.is_empty();
    let diff = || {
        if stages && has_head(ws, dir) {
            in_dir(&["diff", "HEAD", "--no-ext-diff"])
                .or_else(|_| in_dir(&["diff", "--cached", "--no-ext-diff"]))
        } else {
            in_dir(&["diff", "--cached", "--no-ext-diff"])
        }
    };
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    // The files `git add` would stage that git does not track yet.
    let untracked: Option<Vec<String>> =
        (staging.all_untracked || !staging.paths.is_empty()).then(|| {
            let mut args: Vec<String> = ["ls-files", "--others", "-z"].map(String::from).into();
            if !staging.force {
                args.push("--exclude-standard".into());
            }
            args.push("--".into());
            if !staging.all_untracked {
                args.extend(
                    staging
                        .paths
                        .iter()
                        .map(|p| p.strip_prefix(&prefix).unwrap_or(p).to_string()),
                );
            }
            args
        });
    // The two git processes are independent: run them side by side (a
    // git process costs milliseconds to start, most of a commit's check).
    let (text, names) = std::thread::scope(|scope| {
        let names = untracked.as_ref().map(|args| {
            scope.spawn(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                in_dir(&args)
            })
        });
        let text = diff();
        let names = names.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("git ls-files failed".to_string()))
        });
        (text, names)
    });
    let mut text = text?;
    let mut added = added_in_patch(&text);
    if let Some(names) = names {
        for name in names?.split('\0').filter(|n| !n.is_empty()) {
            let rel = format!("{prefix}{name}");
            if let Some(content) = current_text(ws, &rel) {
                text.push_str(&content);
                text.push('\n');
            }
            added.push(rel);
        }
    }
    for file in &staging.files {
        if let Some(content) = current_text(ws, file) {
            text.push_str(&content);
            text.push('\n');
        }
    }
    Ok((text, added))
}

/// Whether the repository in `dir` has a commit to diff against (a new
/// repository has none), read from `.git` without starting git; true when
/// it cannot tell, so git is asked.
fn has_head(ws: &Workspace, dir: &str) -> bool {
    let git_dir = ws.root().join(dir).join(".git");
    let Ok(head) = std::fs::read_to_string(git_dir.join("HEAD")) else {
        return true;
    };
    let Some(reference) = head.trim().strip_prefix("ref: ") else {
        return true; // detached: a commit
    };
    if git_dir.join(reference).exists() || git_dir.join("reftable").exists() {
        return true; // a loose ref, or refs in a table this cannot read
    }
    // No packed refs in a new repository: no commit yet, so `diff HEAD`
    // would only fail (a whole git process spent) before `--cached`.
    match std::fs::read_to_string(git_dir.join("packed-refs")) {
        Ok(packed) => packed.lines().any(|l| l.ends_with(reference)),
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// The files a patch adds (`new file mode` after its `diff --git` line).
fn added_in_patch(patch: &str) -> Vec<String> {
    let mut added = Vec::new();
    let mut current: Option<&str> = None;
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            current = rest.rsplit_once(" b/").map(|(_, b)| b);
        } else if line.starts_with("new file mode") {
            if let Some(name) = current.take() {
                added.push(name.to_string());
            }
        } else if line.starts_with("@@") {
            current = None;
        }
    }
    added
}
