//! What a command did to the repository that would send a secret out
//! later, outside nib: a secret store staged (`git add -f -N .env`, which
//! reads as empty inside the sandbox but commits the real file at the
//! user's next `git commit -a`), a commit that holds one, or a
//! `.gitignore` that stops ignoring one; and the index itself
//! (`gitindex.rs`). Looked at after each command,
//! only when git's index, `HEAD` or a `.gitignore` changed, and undone:
//! the store unstaged, the commits undone with `git reset --soft` (their
//! changes stay staged, the store unstaged), the store added to
//! `.git/info/exclude`. Each with a note saying what nib did and how to
//! take it back.

use std::collections::BTreeSet;
use std::path::Path;

use super::gitrefs::Repo;
use std::time::SystemTime;

use crate::files::Workspace;
use crate::files::git::run;
use crate::guard::Guard;

/// The repository as it was before a command.
#[derive(Debug, Default)]
pub struct Before {
    stamps: Vec<Option<SystemTime>>,
    head: Option<String>,
    replaced: Vec<String>,
    refs: std::collections::BTreeMap<String, String>,
    todo_execs: Vec<String>,
    since: super::gitstate::Since,
}

/// The files a rebase, cherry-pick or revert in progress reads its next
/// steps from: an `exec` line in one runs at the user's `--continue`.
const TODOS: &[&str] = &["rebase-merge/git-rebase-todo", "sequencer/todo"];

/// The `exec` lines (`exec cmd`, `x cmd`) of the todos in progress.
fn todo_execs(repo: &Repo) -> Vec<String> {
    TODOS
        .iter()
        .filter_map(|t| std::fs::read_to_string(repo.git_dir.join(t)).ok())
        .flat_map(|text| {
            text.lines()
                .map(str::trim)
                .filter(|l| l.starts_with("exec ") || l.starts_with("x "))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Takes out of the todos the `exec` lines not in `kept`, saying so.
fn drop_new_execs(repo: &Repo, kept: &[String]) -> String {
    let mut note = String::new();
    for todo in TODOS {
        let path = repo.git_dir.join(todo);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut dropped = Vec::new();
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let t = line.trim();
            if (t.starts_with("exec ") || t.starts_with("x ")) && !kept.iter().any(|k| k == t) {
                dropped.push(t.to_string());
            } else {
                out.push_str(line);
            }
        }
        if dropped.is_empty() {
            continue;
        }
        note.push_str(&match std::fs::write(&path, out) {
            Ok(()) => format!(
                "note: the command put `exec` steps into the {todo} git runs at the user's next `--continue` ({}); nib took them out. Run such steps yourself, in a command.\n",
                dropped.join("; ")
            ),
            Err(e) => format!(
                "warning: the command put `exec` steps into git's {todo}, and nib could not take them out ({e}): do not `--continue` before you check it\n"
            ),
        });
    }
    note
}

/// The replace refs (`refs/replace/<id>`) the repository has: each makes
/// the user's git show another object in place of one, which a push
/// still sends as it is.
fn replace_refs(repo: &Repo) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo.common.join("refs/replace"))
        .map(|e| {
            e.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if let Ok(packed) = std::fs::read_to_string(repo.common.join("packed-refs")) {
        names.extend(
            packed
                .lines()
                .filter_map(|l| l.split_once(" refs/replace/").map(|(_, n)| n.to_string())),
        );
    }
    names.sort();
    names
}

/// What is remembered between commands: the secret stores tracked and
/// ignored after the last look, or None before the first.
#[derive(Debug, Default)]
pub struct GitCheck {
    tracked: Option<BTreeSet<String>>,
    ignored: Option<BTreeSet<String>>,
}

fn stamps(repo: &Repo, head_ref: Option<&str>) -> Vec<Option<SystemTime>> {
    [
        repo.git_dir.join("index"),
        repo.git_dir.join("HEAD"),
        repo.common.join("packed-refs"),
    ]
    .into_iter()
    .chain(head_ref.map(|r| repo.common.join(r)))
    .map(|p| p.metadata().and_then(|m| m.modified()).ok())
    .collect()
}

/// The ref `HEAD` points at (`refs/heads/main`), read from the file.
fn head_ref(repo: &Repo) -> Option<String> {
    std::fs::read_to_string(repo.git_dir.join("HEAD"))
        .ok()?
        .strip_prefix("ref: ")
        .map(|r| r.trim().to_string())
}

/// The commit `HEAD` names, read from git's files (no process before
/// every command): a detached id, the ref's file, or its line in
/// `packed-refs`.
fn head(repo: &Repo) -> Option<String> {
    let text = std::fs::read_to_string(repo.git_dir.join("HEAD")).ok()?;
    let Some(reference) = text.strip_prefix("ref: ").map(str::trim) else {
        return Some(text.trim().to_string());
    };
    if let Ok(id) = std::fs::read_to_string(repo.common.join(reference)) {
        return Some(id.trim().to_string());
    }
    let packed = std::fs::read_to_string(repo.common.join("packed-refs")).ok()?;
    packed.lines().find_map(|l| {
        l.strip_suffix(reference)?
            .strip_suffix(' ')
            .map(str::to_string)
    })
}

impl GitCheck {
    /// Before a command: a few `stat`s (and, the first time, what is
    /// tracked and ignored now).
    pub fn before(&mut self, ws: &Workspace, guard: &Guard) -> Before {
        let root = ws.root();
        let Some(repo) = crate::files::git::locate(root) else {
            return Before::default();
        };
        if self.tracked.is_none() {
            self.tracked = Some(tracked_stores(root, guard));
            self.ignored = Some(ignored_stores(root, guard));
        }
        let reference = head_ref(&repo);
        Before {
            stamps: stamps(&repo, reference.as_deref()),
            head: head(&repo),
            replaced: replace_refs(&repo),
            refs: super::gitrefs::refs(&repo),
            todo_execs: todo_execs(&repo),
            since: super::gitstate::now(),
        }
    }

    /// After a command: what it did that would send a secret out later,
    /// undone, and said. `written` is what the kernel saw it write.
    pub fn after(
        &mut self,
        ws: &Workspace,
        guard: &Guard,
        before: Before,
        written: &[String],
    ) -> String {
        let root = ws.root();
        let Some(repo) = crate::files::git::locate(root).filter(|_| !before.stamps.is_empty())
        else {
            return String::new();
        };
        let mut note = String::new();
        for name in replace_refs(&repo) {
            if before.replaced.contains(&name) {
                continue;
            }
            let reference = format!("refs/replace/{name}");
            let removed =
                run(root, &["update-ref", "-d", &reference], &[], None).is_ok_and(|o| o.ok);
            note.push_str(&if removed {
                format!("note: the command made the replace ref {reference}, which would show the user's git another object in place of {name} while a push sends the real one; nib removed it.\n")
            } else {
                format!("warning: the command made the replace ref {reference}, and nib could not remove it: run `git replace -d {name}` before you review or push\n")
            });
        }
        if todo_execs(&repo)
            .iter()
            .any(|e| !before.todo_execs.contains(e))
        {
            note.push_str(&drop_new_execs(&repo, &before.todo_execs));
        }
        let reference = head_ref(&repo);
        let refs = super::gitrefs::refs(&repo);
        if refs != before.refs {
            // The branch HEAD is on is left to `new_commits` below when it
            // moved forward; made anew or rewritten, it is judged here.
            let forward = reference.as_deref().filter(|name| {
                match (before.refs.get(*name), refs.get(*name)) {
                    (Some(old), Some(new)) => {
                        old == new
                            || run(root, &["merge-base", "--is-ancestor", old, new], &[], None)
                                .is_ok_and(|o| o.ok)
                    }
                    _ => false,
                }
            });
            note.push_str(&super::gitrefs::check(
                root,
                guard,
                &before.refs,
                &refs,
                forward,
            ));
        }
        let repo_changed = stamps(&repo, reference.as_deref()) != before.stamps;
        if repo_changed {
            let now = head(&repo);
            if let (Some(old), Some(new)) = (&before.head, &now)
                && old != new
            {
                note.push_str(&self.new_commits(root, guard, old, new));
            }
            let tracked = tracked_stores(root, guard);
            let known = self.tracked.clone().unwrap_or_default();
            for rel in tracked.difference(&known) {
                let undone = run(root, &["rm", "--cached", "-f", "-q", "--", rel], &[], None)
                    .is_ok_and(|o| o.ok);
                note.push_str(&if undone {
                    format!("note: the command staged the secret file {rel}; nib unstaged it (`git rm --cached`), so no commit takes it. Its content stays as it was.\n")
                } else {
                    format!("warning: the command staged the secret file {rel} and nib could not unstage it: run `git rm --cached {rel}` before you commit\n")
                });
            }
            note.push_str(&super::gitindex::check(root, &repo.git_dir, guard));
            self.tracked = Some(tracked_stores(root, guard));
        }
        if written
            .iter()
            .any(|w| w == ".gitignore" || w.ends_with("/.gitignore"))
        {
            let ignored = ignored_stores(root, guard);
            let before = self.ignored.clone().unwrap_or_default();
            let tracked = self.tracked.clone().unwrap_or_default();
            let lost: Vec<&String> = before
                .difference(&ignored)
                .filter(|r| !tracked.contains(*r) && root.join(r).exists())
                .collect();
            if !lost.is_empty() {
                let exclude = repo.common.join("info/exclude");
                let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str("# kept ignored by nib: a command's .gitignore change no longer ignored these\n");
                for rel in &lost {
                    text.push_str(&format!("/{rel}\n"));
                }
                let saved = std::fs::create_dir_all(repo.common.join("info"))
                    .and_then(|()| std::fs::write(&exclude, text));
                let names: Vec<&str> = lost.iter().map(|s| s.as_str()).collect();
                note.push_str(&match saved {
                    Ok(()) => format!(
                        "note: the command's .gitignore change stopped ignoring the secret file(s) {}; nib added them to .git/info/exclude, so git still ignores them\n",
                        names.join(", ")
                    ),
                    Err(e) => format!(
                        "warning: the command's .gitignore change stopped ignoring the secret file(s) {} and nib could not keep them ignored ({e}): do not `git add -A` before you fix .gitignore\n",
                        names.join(", ")
                    ),
                });
            }
            self.ignored = Some(ignored_stores(root, guard));
        }
        // Last: the reflog lines of a commit undone above are among what
        // is read back.
        note.push_str(&super::gitstate::check(root, &repo, guard, before.since));
        note
    }

    /// Commits a command made (`old..new`) that add a secret store or
    /// hold a secret the session knows are undone with `git reset
    /// --soft old`: nothing of the work is lost (it is staged again), and
    /// the commit stays in the reflog.
    fn new_commits(&mut self, root: &Path, guard: &Guard, old: &str, new: &str) -> String {
        let range = format!("{old}..{new}");
        let Ok(ancestry) = run(root, &["merge-base", "--is-ancestor", old, new], &[], None) else {
            return String::new();
        };
        if !ancestry.ok {
            return String::new(); // a checkout elsewhere, not commits on top
        }
        let added = run(
            root,
            &[
                "diff",
                "--name-only",
                "--no-renames",
                "--diff-filter=A",
                old,
                new,
            ],
            &[],
            None,
        )
        .map(|o| o.stdout_text())
        .unwrap_or_default();
        let stores: Vec<&str> = added
            .lines()
            .filter(|n| guard.policy().paths.is_secret_store(n))
            .collect();
        let text = run(
            root,
            &[
                "log",
                "-p",
                "--text",
                "--format=%an%n%ae%n%cn%n%ce%n%B",
                &range,
            ],
            &[],
            None,
        )
        .map(|o| o.stdout_text())
        .unwrap_or_default();
        let secret = guard.known_secret_in(&text);
        let changed = run(
            root,
            &["diff", "--name-only", "--no-renames", old, new],
            &[],
            None,
        )
        .map(|o| o.stdout_text())
        .unwrap_or_default();
        let run_later =
            super::gitrefs::run_later_unlike_work_tree(root, guard, new, changed.lines());
        if stores.is_empty() && secret.is_none() && run_later.is_none() {
            return String::new();
        }
        let why = match (stores.first(), &secret, &run_later) {
            (Some(store), _, _) => format!("adds the secret file {store}"),
            (None, Some(what), _) => format!("holds a secret: {what}"),
            (None, None, Some(path)) => format!(
                "changes {path}, a file that runs on its own, unlike the work tree (which a person confirms)"
            ),
            (None, None, None) => String::new(),
        };
        let reset = run(root, &["reset", "--soft", "-q", old], &[], None).is_ok_and(|o| o.ok);
        if !reset {
            return format!(
                "warning: a commit the command made {why}, and nib could not undo it: do not push before you remove it (`git reset --soft {old}`)\n"
            );
        }
        for store in &stores {
            let _ = run(
                root,
                &["rm", "--cached", "-f", "-q", "--", store],
                &[],
                None,
            );
        }
        format!(
            "note: a commit the command made {why}; nib undid it (`git reset --soft {old}`: the changes are staged again, what holds the secret unstaged, and the commit {new} is in the reflog). Commit without the secret.\n"
        )
    }
}

/// The secret stores git tracks (`ls-files`), by the guard's rules.
fn tracked_stores(root: &Path, guard: &Guard) -> BTreeSet<String> {
    run(root, &["ls-files", "-z", "--cached"], &[], None)
        .map(|o| {
            o.stdout
                .split(|b| *b == 0)
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .filter(|n| {
                    !n.is_empty()
                        && (guard.policy().paths.is_secret_store(n) || guard.is_found_store(n))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The untracked secret stores (and files the session learned a secret
/// from, a module holding a token) git ignores, of those on disk at the
/// workspace's root and one level down (where `.gitignore` lines for
/// them live).
fn ignored_stores(root: &Path, guard: &Guard) -> BTreeSet<String> {
    let mut candidates = Vec::new();
    let learned = guard.learned_files();
    let mut look = |dir: &Path, prefix: &str| {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten().take(2048) {
                let rel = format!("{prefix}{}", entry.file_name().to_string_lossy());
                if guard.policy().paths.is_secret_store(&rel)
                    || guard.is_found_store(&rel)
                    || learned.contains(&rel)
                {
                    candidates.push(rel);
                }
            }
        }
    };
    look(root, "");
    if let Ok(entries) = std::fs::read_dir(root) {
        for entry in entries.flatten().take(256) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) && name != ".git" && name != ".nib" {
                look(&entry.path(), &format!("{name}/"));
            }
        }
    }
    if candidates.is_empty() {
        return BTreeSet::new();
    }
    let input = candidates.join("\0");
    run(
        root,
        &["check-ignore", "-z", "--stdin", "--no-index"],
        &[],
        Some(input.as_bytes()),
    )
    .map(|o| {
        o.stdout
            .split(|b| *b == 0)
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .filter(|n| !n.is_empty())
            .collect()
    })
    .unwrap_or_default()
}
