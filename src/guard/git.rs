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

/// A protected file the repository holds or ever held (outside `.git/`),
/// within `pathspecs` when there are any.
pub(super) fn history_protected(
    ws: &Workspace,
    rules: &PathRules,
    pathspecs: &[String],
) -> Option<String> {
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
    names
        .lines()
        .chain(index.lines())
        .filter(|n| !n.is_empty() && !n.to_lowercase().starts_with(".git/"))
        .filter(|n| rules.is_protected(n))
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
        .map(str::to_string)
}

/// What a commit or push would carry. For a commit: what is staged, what
/// a `git add` earlier in the same command line would stage, and with
/// `commit -a` the tracked changes. For a push: the commits on no remote.
/// With it, the files the commit would add to the repository.
pub(super) fn outgoing_text(
    ws: &Workspace,
    outgoing: &shell::GitOutgoing,
    segments: &[Vec<String>],
) -> Result<(String, Vec<String>), String> {
    let git = |args: &[&str]| git(ws, args);
    if *outgoing == shell::GitOutgoing::Push {
        let text = git(&["log", "-p", "--no-ext-diff", "HEAD", "--not", "--remotes"])?;
        let added = git(&[
            "log",
            "--diff-filter=A",
            "--name-only",
            "--format=",
            "HEAD",
            "--not",
            "--remotes",
        ])?;
        return Ok((text, added.lines().map(str::to_string).collect()));
    }
    let mut text = git(&["diff", "--cached", "--no-ext-diff"])?;
    let mut added: Vec<String> = git(&["diff", "--cached", "--name-only", "--diff-filter=A"])?
        .lines()
        .map(str::to_string)
        .collect();
    let git_sub = |seg: &Vec<String>, sub: &str| {
        seg.first().is_some_and(|w| w == "git")
            && seg
                .iter()
                .skip(1)
                .find(|w| !w.starts_with('-'))
                .is_some_and(|w| w == sub)
    };
    let mut tracked = false;
    let mut untracked: Vec<String> = Vec::new();
    for seg in segments {
        if git_sub(seg, "commit")
            && seg.iter().any(|w| {
                w == "--all" || (w.starts_with('-') && !w.starts_with("--") && w.contains('a'))
            })
        {
            tracked = true;
        }
        if git_sub(seg, "add") {
            let operands: Vec<&String> =
                seg.iter().skip(2).filter(|w| !w.starts_with('-')).collect();
            let all = operands.is_empty()
                && seg.iter().any(|w| w == "-A" || w == "--all" || w == "-u")
                || operands
                    .iter()
                    .any(|w| *w == "." || *w == "*" || *w == ":/");
            tracked = true;
            if all {
                untracked.push(String::new());
            } else {
                untracked.extend(operands.into_iter().cloned());
            }
        }
    }
    if tracked {
        // A repository without commits has no HEAD to diff against.
        if let Ok(diff) = git(&["diff", "HEAD", "--no-ext-diff"]) {
            text.push_str(&diff);
        }
    }
    if !untracked.is_empty() {
        let mut args = vec!["ls-files", "--others", "--exclude-standard", "-z", "--"];
        args.extend(
            untracked
                .iter()
                .map(String::as_str)
                .filter(|p| !p.is_empty()),
        );
        let names = git(&args)?;
        for name in names.split('\0').filter(|n| !n.is_empty()) {
            if let Some(content) = current_text(ws, name) {
                text.push_str(&content);
                text.push('\n');
            }
            added.push(name.to_string());
        }
    }
    Ok((text, added))
}
