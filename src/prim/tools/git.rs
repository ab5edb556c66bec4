//! `git-status`, `git-diff` and `git-log`: read-only views of the
//! workspace's repository through the `git` command line.
//!
//! git runs in the workspace root with no pager, no colour, unquoted UTF-8
//! paths, no optional locks (a concurrent git in the same tree is not
//! disturbed) and no external diff or textconv programs (a repository's
//! config must not make a read-only tool run commands). Environment
//! variables that would point git at another repository are removed.
//! Output is capped at 100 KB with a note of how much was cut.

use crate::files::Workspace;
use crate::prim::{GitStep, ToolError};

/// The most output shown, in bytes.
const OUTPUT_CAP: usize = 100 * 1024;
/// How many commits `git-log` shows when the call does not say.
const DEFAULT_LOG: i64 = 20;

/// What git printed.
struct GitOut {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs git in the workspace root with the given arguments.
fn git(ws: &Workspace, args: &[&str]) -> Result<GitOut, ToolError> {
    let out = crate::files::git::run(ws.root(), args, &[], None)?;
    Ok(GitOut {
        ok: out.ok,
        stdout: out.stdout_text(),
        stderr: out.stderr,
    })
}

/// Runs git and returns its output, or an error carrying git's message.
fn git_ok(ws: &Workspace, args: &[&str]) -> Result<String, ToolError> {
    let out = git(ws, args)?;
    if out.ok {
        Ok(out.stdout)
    } else {
        Err(ToolError::Git {
            what: GitStep::Command(args.first().copied().unwrap_or("").to_string()),
            message: one_paragraph(&out.stderr),
        })
    }
}

/// Checks that the workspace is inside a git work tree; returns where in
/// it the workspace is (`""` at its top, `services/api/` in a monorepo).
fn ensure_repo(ws: &Workspace) -> Result<String, ToolError> {
    let out = git(ws, &["rev-parse", "--is-inside-work-tree", "--show-prefix"])?;
    let mut lines = out.stdout.lines();
    if out.ok && lines.next().map(str::trim) == Some("true") {
        return Ok(lines.next().unwrap_or_default().trim().to_string());
    }
    if !out.ok && !out.stderr.contains("not a git repository") && !out.stderr.is_empty() {
        // Something else: unsafe ownership, a broken repository, ...
        return Err(ToolError::Git {
            what: GitStep::Open,
            message: one_paragraph(&out.stderr),
        });
    }
    Err(ToolError::NotARepository)
}

/// Whether the repository has a commit checked out (a new repository does
/// not).
fn has_head(ws: &Workspace) -> Result<bool, ToolError> {
    Ok(git(ws, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])?.ok)
}

/// The working tree's status, `git status --short --branch`.
pub fn git_status(ws: &Workspace) -> Result<String, ToolError> {
    let prefix = ensure_repo(ws)?;
    let mut args = vec!["status", "--short", "--branch"];
    // A workspace inside a larger repository sees its own files only:
    // the rest of the repository is not the session's.
    if !prefix.is_empty() {
        args.extend(["--", "."]);
    }
    let mut out = git_ok(ws, &args)?;
    if out.lines().all(|l| l.starts_with("##")) {
        out.push_str("working tree clean: nothing modified, staged or untracked\n");
    }
    out.insert_str(0, &within(&prefix));
    Ok(cap(
        out,
        "see one directory at a time with git-diff on a path, or shell with git status -- PATH",
    ))
}

/// Uncommitted changes to tracked files (`git diff HEAD`), for the whole
/// workspace or one path ("" = everything). In a repository with no commit
/// yet, the diff is taken against the empty tree.
pub fn git_diff(ws: &Workspace, path: &str) -> Result<String, ToolError> {
    let rel = if path.trim().is_empty() {
        None
    } else {
        let r = ws.resolve(path)?;
        Some(r.rel)
    };
    let prefix = ensure_repo(ws)?;
    let head = has_head(ws)?;
    let base = if head {
        "HEAD".to_string()
    } else {
        git_ok(ws, &["hash-object", "-t", "tree", "/dev/null"])?
            .trim()
            .to_string()
    };
    let mut args = vec![
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        base.as_str(),
        "--",
    ];
    match &rel {
        Some(rel) => args.push(rel.as_str()),
        None if !prefix.is_empty() => args.push("."),
        None => {}
    }
    let diff = git_ok(ws, &args)?;
    let scope = match &rel {
        Some(rel) if rel != "." => format!(" in {rel}"),
        _ => String::new(),
    };
    if diff.is_empty() {
        let since = if head {
            "since the last commit"
        } else {
            "(no commits yet, nothing added)"
        };
        return Ok(format!(
            "no changes to tracked files{scope} {since}; untracked files are listed by git-status\n"
        ));
    }
    let out = if head {
        format!("{}{diff}", within(&prefix))
    } else {
        format!(
            "{}no commits yet: the diff shows every tracked (added) file as new\n{diff}",
            within(&prefix)
        )
    };
    Ok(cap(
        out,
        "give a path to see one file or directory at a time",
    ))
}

/// The last `n` commits (<= 0 means 20), one line each.
pub fn git_log(ws: &Workspace, n: i64) -> Result<String, ToolError> {
    let prefix = ensure_repo(ws)?;
    if !has_head(ws)? {
        return Ok("no commits yet\n".to_string());
    }
    let n = if n <= 0 { DEFAULT_LOG } else { n };
    let count = n.to_string();
    let mut args = vec![
        "log",
        "--oneline",
        "--decorate=short",
        "--no-color",
        "-n",
        count.as_str(),
    ];
    if !prefix.is_empty() {
        args.extend(["--", "."]);
    }
    let out = format!("{}{}", within(&prefix), git_ok(ws, &args)?);
    Ok(cap(out, "ask for fewer commits"))
}

/// The first line of a git tool's answer in a workspace that is a
/// directory of a larger repository; nothing at its top.
fn within(prefix: &str) -> String {
    if prefix.is_empty() {
        return String::new();
    }
    format!(
        "(the workspace is {} in a larger repository: only what is under it is shown)\n",
        prefix.trim_end_matches('/')
    )
}

/// git's message on one line.
fn one_paragraph(stderr: &str) -> String {
    let joined: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if joined.is_empty() {
        "git gave no message".to_string()
    } else {
        joined.join(" ")
    }
}

/// `text` cut to `OUTPUT_CAP` bytes at a line end, with a note of what was
/// cut and how to see less.
fn cap(text: String, hint: &str) -> String {
    if text.len() <= OUTPUT_CAP {
        return text;
    }
    let mut end = OUTPUT_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(nl) = text[..end].rfind('\n') {
        end = nl + 1;
    }
    let mut out = text[..end].to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "… output cut: {} more bytes not shown (of {}); {hint}\n",
        text.len() - end,
        text.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn run(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn repo() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), &["init", "-q"]);
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    fn commit(dir: &Path, msg: &str) {
        run(dir, &["add", "-A"]);
        run(dir, &["commit", "-q", "-m", msg]);
    }

    #[test]
    fn status_diff_log_on_a_repo() {
        let (dir, ws) = repo();
        let d = dir.path();
        fs::write(d.join("a.txt"), "one\n").unwrap();
        fs::create_dir(d.join("sub")).unwrap();
        fs::write(d.join("sub/b.txt"), "bee\n").unwrap();
        fs::write(d.join("é.txt"), "x\n").unwrap();
        commit(d, "first");
        fs::write(d.join("a.txt"), "two\n").unwrap();
        commit(d, "second");
        assert_eq!(
            git_status(&ws).unwrap(),
            "## main\nworking tree clean: nothing modified, staged or untracked\n"
        );
        assert_eq!(
            git_diff(&ws, "").unwrap(),
            "no changes to tracked files since the last commit; untracked files are listed by git-status\n"
        );

        fs::write(d.join("a.txt"), "three\n").unwrap();
        fs::write(d.join("sub/b.txt"), "bee2\n").unwrap();
        fs::write(d.join("é.txt"), "y\n").unwrap();
        fs::write(d.join("new.txt"), "n\n").unwrap();
        assert_eq!(
            git_status(&ws).unwrap(),
            "## main\n M a.txt\n M sub/b.txt\n M é.txt\n?? new.txt\n"
        );
        let all = git_diff(&ws, "").unwrap();
        assert!(all.contains("-two\n+three\n"), "{all}");
        assert!(all.contains("+bee2\n"), "{all}");
        assert!(all.contains("diff --git a/é.txt b/é.txt"), "{all}");
        assert!(!all.contains("\x1b["), "{all}");
        let one = git_diff(&ws, "sub").unwrap();
        assert!(one.contains("+bee2\n") && !one.contains("three"), "{one}");
        let one = git_diff(&ws, "./sub/../a.txt").unwrap();
        assert!(one.starts_with("diff --git a/a.txt b/a.txt\n"), "{one}");
        assert_eq!(
            git_diff(&ws, "new.txt").unwrap(),
            "no changes to tracked files in new.txt since the last commit; untracked files are listed by git-status\n"
        );
        let err = git_diff(&ws, "../elsewhere").unwrap_err().to_string();
        assert!(err.contains("outside the workspace"), "{err}");

        let log = git_log(&ws, 0).unwrap();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 2, "{log}");
        assert!(lines[0].ends_with("(HEAD -> main) second"), "{log}");
        assert!(lines[1].ends_with(" first"), "{log}");
        assert_eq!(git_log(&ws, 1).unwrap().lines().count(), 1);
    }

    #[test]
    fn repo_without_commits() {
        let (dir, ws) = repo();
        let d = dir.path();
        assert_eq!(
            git_status(&ws).unwrap(),
            "## No commits yet on main\nworking tree clean: nothing modified, staged or untracked\n"
        );
        assert_eq!(git_log(&ws, 5).unwrap(), "no commits yet\n");
        assert_eq!(
            git_diff(&ws, "").unwrap(),
            "no changes to tracked files (no commits yet, nothing added); untracked files are listed by git-status\n"
        );
        fs::write(d.join("a.txt"), "hello\n").unwrap();
        fs::write(d.join("u.txt"), "untracked\n").unwrap();
        run(d, &["add", "a.txt"]);
        fs::write(d.join("a.txt"), "hello\nworld\n").unwrap();
        assert_eq!(
            git_status(&ws).unwrap(),
            "## No commits yet on main\nAM a.txt\n?? u.txt\n"
        );
        let diff = git_diff(&ws, "").unwrap();
        assert!(
            diff.starts_with("no commits yet: the diff shows every tracked (added) file as new\n"),
            "{diff}"
        );
        assert!(diff.contains("new file mode"), "{diff}");
        assert!(diff.contains("+hello\n+world\n"), "{diff}");
        assert!(!diff.contains("untracked"), "{diff}");
    }

    #[test]
    fn a_workspace_inside_a_larger_repository_sees_its_own_files() {
        let (dir, _) = repo();
        std::fs::create_dir_all(dir.path().join("services/api")).unwrap();
        std::fs::create_dir_all(dir.path().join("services/billing")).unwrap();
        std::fs::write(dir.path().join("services/api/app.py"), "a = 1\n").unwrap();
        std::fs::write(dir.path().join("services/billing/keys.py"), "K = 'x'\n").unwrap();
        run(dir.path(), &["add", "-A"]);
        commit(dir.path(), "two services");
        std::fs::write(dir.path().join("services/api/app.py"), "a = 2\n").unwrap();
        std::fs::write(
            dir.path().join("services/billing/keys.py"),
            "K = 'sibling'\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("services/billing/new.txt"), "n\n").unwrap();
        let ws = Workspace::open(&dir.path().join("services/api")).unwrap();
        let status = git_status(&ws).unwrap();
        let diff = git_diff(&ws, "").unwrap();
        let log = git_log(&ws, 5).unwrap();
        for out in [&status, &diff, &log] {
            assert!(
                out.starts_with("(the workspace is services/api in a larger repository"),
                "{out}"
            );
            assert!(!out.contains("billing"), "{out}");
        }
        assert!(status.contains("app.py"), "{status}");
        assert!(diff.contains("+a = 2"), "{diff}");
        assert!(log.contains("two services"), "{log}");
    }

    #[test]
    fn not_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        for result in [git_status(&ws), git_diff(&ws, ""), git_log(&ws, 3)] {
            let err = result.unwrap_err();
            assert_eq!(err.kind(), "not_a_repo");
            assert!(
                err.to_string()
                    .starts_with("the workspace is not a git repository; git-status, git-diff and git-log need one"),
                "{err}"
            );
        }
    }

    #[test]
    fn big_diff_is_capped() {
        let (dir, ws) = repo();
        let d = dir.path();
        let line = "x".repeat(99);
        let text: String = (0..1500).map(|i| format!("{i} {line}\n")).collect();
        fs::write(d.join("big.txt"), &text).unwrap();
        commit(d, "big");
        fs::write(d.join("big.txt"), text.replace('x', "y")).unwrap();
        let out = git_diff(&ws, "big.txt").unwrap();
        assert!(out.len() < OUTPUT_CAP + 200, "{}", out.len());
        let last = out.lines().last().unwrap();
        assert!(last.starts_with("… output cut: "), "{last}");
        assert!(
            last.ends_with("give a path to see one file or directory at a time"),
            "{last}"
        );
    }

    #[test]
    fn cap_keeps_short_text_and_cuts_at_a_line_end() {
        assert_eq!(cap("abc\n".to_string(), "h"), "abc\n");
        let text = "é\n".repeat(OUTPUT_CAP);
        let out = cap(text.clone(), "h");
        let (kept, note) = out.rsplit_once("… output cut: ").unwrap();
        assert!(kept.ends_with("é\n"));
        assert_eq!(
            note,
            format!(
                "{} more bytes not shown (of {}); h\n",
                text.len() - kept.len(),
                text.len()
            )
        );
    }
}
