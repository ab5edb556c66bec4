//! Refs a command made or moved other than the branch `HEAD` is on
//! (`gitcheck.rs` looks at that one): a branch made by plumbing, a tag,
//! notes. A push of all branches or tags (`push --all`, `--follow-tags`)
//! sends them later, outside nib, so each is looked at as a commit on
//! `HEAD` is: what is new in it (its commits with their identities and
//! messages, a tag's message, a ref's name) must not hold a secret the
//! session knows, and a file that runs on its own (a CI workflow) must
//! not differ from the work tree's, which a person confirmed. One that
//! does is put back where it was (or removed, if new), with a note.

use std::collections::BTreeMap;
use std::path::Path;

use crate::files::git::run;
use crate::guard::Guard;

/// Where the workspace's repository keeps its state (`files::git`).
pub use crate::files::git::GitDirs as Repo;

/// Refs read at most (loose ones, walking `refs/`).
const MAX_REFS: usize = 5_000;

/// The repository's refs, by name, read from its files (no process).
pub fn refs(repo: &Repo) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(packed) = std::fs::read_to_string(repo.common.join("packed-refs")) {
        for line in packed.lines() {
            if let Some((id, name)) = line.split_once(' ')
                && !line.starts_with('#')
                && !line.starts_with('^')
                && !name.starts_with("refs/remotes/")
            {
                out.insert(name.to_string(), id.to_string());
            }
        }
    }
    let mut stack = vec![repo.common.join("refs")];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_REFS {
                return out;
            }
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                // Remote-tracking refs move only on a fetch (no network
                // here) and are never pushed: not read before every command.
                if path != repo.common.join("refs/remotes") {
                    stack.push(path);
                }
            } else if let (Ok(id), Ok(rel)) = (
                std::fs::read_to_string(&path),
                path.strip_prefix(&repo.common),
            ) {
                out.insert(rel.to_string_lossy().into_owned(), id.trim().to_string());
            }
        }
    }
    out
}

/// After a command: each ref (but `skip`, the branch `HEAD` is on) that
/// is new or moved and carries what must not go out is put back.
pub fn check(
    root: &Path,
    guard: &Guard,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
    skip: Option<&str>,
) -> String {
    let mut old: Vec<&str> = before.values().map(String::as_str).collect();
    old.sort_unstable();
    old.dedup();
    let mut note = String::new();
    for (name, id) in after {
        if before.get(name) == Some(id) || Some(name.as_str()) == skip {
            continue;
        }
        // Remote-tracking refs move on a fetch, which has no network here.
        if name.starts_with("refs/remotes/") || name == "refs/stash" {
            continue;
        }
        let Some(why) = what_it_carries(root, guard, name, id, &old) else {
            continue;
        };
        let (args, done): (Vec<&str>, String) = match before.get(name) {
            Some(was) => (
                vec!["update-ref", name, was],
                format!("nib put {name} back at {was}"),
            ),
            None => (
                vec!["update-ref", "-d", name],
                format!("nib removed {name}"),
            ),
        };
        let undone = run(root, &args, &[], None).is_ok_and(|o| o.ok);
        note.push_str(&if undone {
            format!(
                "note: the command made or moved {name}, which {why}; a push of it would send that out later. {done} (its commits stay in the repository's objects). Make the change in the work tree, where a person confirms it, and commit that.\n"
            )
        } else {
            format!("warning: the command made or moved {name}, which {why}, and nib could not undo it: do not push it (`git update-ref -d {name}` or set it back)\n")
        });
    }
    note
}

/// What ref `name` at `id` carries that must not go out, beyond what the
/// refs at `old` already held; None when nothing.
fn what_it_carries(
    root: &Path,
    guard: &Guard,
    name: &str,
    id: &str,
    old: &[&str],
) -> Option<String> {
    if let Some(what) = guard.known_secret_in(name) {
        return Some(format!("is named with a secret ({what})"));
    }
    // The object itself (a tag's message and tagger, a commit's
    // identities and message), and every new commit's.
    let object = run(root, &["cat-file", "-p", id], &[], None)
        .map(|o| o.stdout_text())
        .unwrap_or_default();
    if let Some(what) = guard.known_secret_in(&object) {
        return Some(format!("holds a secret ({what})"));
    }
    let mut input = format!("{id}\n");
    for o in old {
        input.push_str(&format!("^{o}\n"));
    }
    let log = run(
        root,
        &[
            "log",
            "--stdin",
            "-p",
            "--text",
            "--no-renames",
            "--format=%an%n%ae%n%cn%n%ce%n%B",
        ],
        &[],
        Some(input.as_bytes()),
    )
    .map(|o| o.stdout_text())
    .unwrap_or_default();
    if let Some(what) = guard.known_secret_in(&log) {
        return Some(format!("holds a secret ({what})"));
    }
    let names = run(
        root,
        &["log", "--stdin", "--name-only", "--no-renames", "--format="],
        &[],
        Some(input.as_bytes()),
    )
    .map(|o| o.stdout_text())
    .unwrap_or_default();
    run_later_unlike_work_tree(root, guard, id, names.lines())
        .map(|path| format!("changes {path}, a file that runs on its own, unlike the work tree"))
}

/// The first of `names` that runs code on its own (a CI workflow, a
/// hook's config) whose content at commit `id` differs from the work
/// tree's: a person confirmed the work tree's, not this.
pub fn run_later_unlike_work_tree<'a>(
    root: &Path,
    guard: &Guard,
    id: &str,
    names: impl Iterator<Item = &'a str>,
) -> Option<String> {
    let rules = &guard.policy().paths;
    let mut candidates: Vec<&str> = names
        .filter(|n| !n.is_empty() && rules.is_protected(n) && !rules.is_secret_store(n))
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    for path in candidates {
        let same = run(root, &["diff", "--quiet", id, "--", path], &[], None).is_ok_and(|o| o.ok);
        if !same {
            return Some(path.to_string());
        }
    }
    None
}
