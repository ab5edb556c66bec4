//! git's index after a command changed it: what the user's next git
//! command would act on, outside nib.
//!
//! Commands may write `.git/index` (`git add` and `git commit` need it),
//! so a script can write one by hand. Two things in it act later:
//!
//! - an entry whose path leaves the repository (`../../home/u/.bashrc`,
//!   an absolute path, a `.git` component): git does not check the paths
//!   of an index it reads, so nib's own host-side `git diff` would print
//!   that host file, and the user's `git restore .` would overwrite it.
//!   Such entries are taken out (the index is rebuilt from the others);
//! - staged content holding a secret the session knows that the work
//!   tree no longer shows (a copy whose file was quarantined, a commit
//!   nib undid, a file name, a link's target): git commits the index,
//!   not the work tree, so the user's next plain `git commit` would send
//!   it unseen. It is unstaged. (Staged as the work tree has it, the
//!   commit check asks a person when it is committed.)

use std::path::Path;

use crate::files::git::run;
use crate::guard::Guard;

/// One index entry as `git ls-files -s -z` prints it.
struct Entry<'a> {
    /// `mode sha stage`.
    head: &'a str,
    path: &'a str,
}

/// Whether git itself would refuse `path` in a tree or at checkout
/// (`verify_path`'s core): empty, absolute, or with an empty, `.`, `..`
/// or `.git` component.
fn leaves_the_repository(path: &str) -> bool {
    path.is_empty()
        || path.starts_with('/')
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == ".." || c.eq_ignore_ascii_case(".git"))
}

/// After a command that changed the index of the repository at `root`
/// (its git directory `git_dir`): what nib did, as notes for the
/// command's output (empty when nothing was wrong).
pub fn check(root: &Path, git_dir: &Path, guard: &Guard) -> String {
    let mut note = drop_outside_entries(root, git_dir);
    note.push_str(&unstage_secrets(root, guard));
    note.push_str(&unstage_run_later(root, guard));
    note
}

/// Staged files that run code on its own (a CI workflow, a hook's config)
/// whose staged content is not the work tree's: a person confirmed the
/// work tree's (or nib put it back), so the index must not carry another
/// into the user's next commit.
fn unstage_run_later(root: &Path, guard: &Guard) -> String {
    let rules = &guard.policy().paths;
    let Ok(staged) = run(
        root,
        &["diff", "--cached", "--name-only", "--no-renames", "-z"],
        &[],
        None,
    ) else {
        return String::new();
    };
    let names: Vec<String> = String::from_utf8_lossy(&staged.stdout)
        .split('\0')
        .filter(|n| !n.is_empty() && rules.is_protected(n) && !rules.is_secret_store(n))
        .map(str::to_string)
        .collect();
    let unlike: Vec<(String, String)> = names
        .into_iter()
        .filter(|n| !run(root, &["diff", "--quiet", "--", n], &[], None).is_ok_and(|o| o.ok))
        .map(|n| {
            (
                n,
                "runs code on its own and differs from the work tree's copy, which a person confirms".to_string(),
            )
        })
        .collect();
    unstage(root, &unlike)
}

fn drop_outside_entries(root: &Path, git_dir: &Path) -> String {
    let Ok(listed) = run(root, &["ls-files", "-s", "-z"], &[], None) else {
        return String::new();
    };
    if !listed.ok {
        return String::new();
    }
    let text = String::from_utf8_lossy(&listed.stdout);
    let entries: Vec<Entry> = text
        .split('\0')
        .filter(|e| !e.is_empty())
        .filter_map(|e| {
            let (head, path) = e.split_once('\t')?;
            Some(Entry { head, path })
        })
        .collect();
    let bad: Vec<&str> = entries
        .iter()
        .filter(|e| leaves_the_repository(e.path))
        .map(|e| e.path)
        .collect();
    if bad.is_empty() {
        return String::new();
    }
    let mut input = Vec::new();
    for e in entries.iter().filter(|e| !leaves_the_repository(e.path)) {
        input.extend_from_slice(e.head.as_bytes());
        input.push(b'\t');
        input.extend_from_slice(e.path.as_bytes());
        input.push(0);
    }
    let fresh = git_dir.join("index.nib-new");
    let _ = std::fs::remove_file(&fresh);
    let built = run(
        root,
        &["update-index", "-z", "--index-info"],
        &[("GIT_INDEX_FILE", fresh.as_os_str())],
        Some(&input),
    )
    .is_ok_and(|o| o.ok)
        && (fresh.exists() || input.is_empty())
        && if input.is_empty() {
            std::fs::remove_file(git_dir.join("index")).is_ok()
        } else {
            std::fs::rename(&fresh, git_dir.join("index")).is_ok()
        };
    let shown: Vec<&str> = bad.iter().take(3).copied().collect();
    let names = format!(
        "{}{}",
        shown.join(", "),
        if bad.len() > shown.len() {
            format!(" and {} more", bad.len() - shown.len())
        } else {
            String::new()
        }
    );
    if built {
        format!(
            "note: the command wrote entries into git's index (.git/index) that name paths outside the repository ({names}): git would read those host files for nib's git tools and overwrite them at the user's next `git restore .`. nib rebuilt the index without them; every other staged change is kept.\n"
        )
    } else {
        let _ = std::fs::remove_file(&fresh);
        format!(
            "warning: the command wrote entries into git's index (.git/index) that name paths outside the repository ({names}), and nib could not take them out: do not run git in this repository before you remove .git/index and run `git reset`\n"
        )
    }
}

/// Staged changes (against `HEAD`, or everything in a repository with no
/// commit yet) whose patch text (names, content, link targets) holds a
/// secret the session knows: unstaged, each path said.
fn unstage_secrets(root: &Path, guard: &Guard) -> String {
    let Ok(diff) = run(
        root,
        &[
            "diff",
            "--cached",
            "-p",
            "--text",
            "--no-renames",
            "--no-color",
        ],
        &[],
        None,
    ) else {
        return String::new();
    };
    if !diff.ok || diff.stdout.is_empty() {
        return String::new();
    }
    let text = diff.stdout_text();
    guard.known_secret_in(&text).map_or_else(String::new, |_| {
        let mut paths: Vec<(String, String)> = Vec::new();
        for section in sections(&text) {
            // Staged as the work tree has it, the commit check asks a
            // person when it is committed; staged unlike it (the file
            // quarantined, rewritten), nobody would see it go.
            if let Some(what) = guard.known_secret_in(section.1)
                && !run(root, &["diff", "--quiet", "--", section.0], &[], None).is_ok_and(|o| o.ok)
            {
                paths.push((
                    section.0.to_string(),
                    format!("holds a secret ({what}) the work tree no longer shows"),
                ));
            }
        }
        unstage(root, &paths)
    })
}

/// After nib moved `rels` away (files holding a secret, quarantined):
/// those git had staged are unstaged, so the index does not keep what
/// the work tree no longer shows.
pub fn unstage_moved(root: &Path, rels: &[String]) -> String {
    if rels.is_empty() || !root.join(".git").exists() {
        return String::new();
    }
    let mut args = vec![
        "diff",
        "--cached",
        "--name-only",
        "--no-renames",
        "-z",
        "--",
    ];
    args.extend(rels.iter().map(String::as_str));
    let Ok(staged) = run(root, &args, &[], None) else {
        return String::new();
    };
    let paths: Vec<(String, String)> = String::from_utf8_lossy(&staged.stdout)
        .split('\0')
        .filter(|n| !n.is_empty())
        .map(|n| {
            (
                n.to_string(),
                "holds a secret; nib moved the file into the quarantine".to_string(),
            )
        })
        .collect();
    unstage(root, &paths)
}

/// The patch's per-file sections, with the path each changes.
fn sections(patch: &str) -> Vec<(&str, &str)> {
    let mut starts: Vec<usize> = patch.match_indices("diff --git ").map(|(i, _)| i).collect();
    starts.retain(|&i| i == 0 || patch.as_bytes()[i - 1] == b'\n');
    let mut out = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(patch.len());
        let section = &patch[start..end];
        let path = section
            .lines()
            .find_map(|l| l.strip_prefix("+++ b/"))
            .or_else(|| section.lines().find_map(|l| l.strip_prefix("--- a/")))
            .or_else(|| {
                section
                    .lines()
                    .next()
                    .and_then(|l| l.rsplit_once(" b/"))
                    .map(|(_, b)| b)
            });
        if let Some(path) = path {
            out.push((path.trim_end(), section));
        }
    }
    out
}

fn unstage(root: &Path, paths: &[(String, String)]) -> String {
    if paths.is_empty() {
        return String::new();
    }
    let has_head =
        run(root, &["rev-parse", "-q", "--verify", "HEAD"], &[], None).is_ok_and(|o| o.ok);
    let mut args: Vec<&str> = if has_head {
        vec!["reset", "-q", "--"]
    } else {
        vec!["rm", "--cached", "-q", "-f", "--"]
    };
    args.extend(paths.iter().map(|(p, _)| p.as_str()));
    let done = run(root, &args, &[], None).is_ok_and(|o| o.ok);
    let names: Vec<&str> = paths.iter().map(|(p, _)| p.as_str()).collect();
    let why = &paths[0].1;
    if done {
        format!(
            "note: git's index held a staged change to {} that {why}; nib unstaged it (`git {}`), so the user's next commit does not take it. The work tree is as it was.\n",
            names.join(", "),
            if has_head {
                "reset -- PATH"
            } else {
                "rm --cached PATH"
            }
        )
    } else {
        format!(
            "warning: git's index holds a staged change to {} that {why}, and nib could not unstage it: run `git reset -- {}` before you commit\n",
            names.join(", "),
            names.join(" ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_git_would_refuse_are_told_apart() {
        for bad in [
            "../x",
            "a/../../etc/passwd",
            "/etc/passwd",
            ".git/hooks/pre-commit",
            "sub/.GIT/config",
            "a//b",
            "./a",
            "",
        ] {
            assert!(leaves_the_repository(bad), "{bad}");
        }
        for good in [
            "a",
            "src/main.rs",
            ".github/x.yml",
            "a..b/c",
            ".gitignore",
            "x.git",
        ] {
            assert!(!leaves_the_repository(good), "{good}");
        }
    }

    #[test]
    fn a_patch_splits_into_its_files() {
        let patch = "diff --git a/x.txt b/x.txt\nnew file mode 100644\n--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+one\ndiff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-two\n";
        let got: Vec<&str> = sections(patch).into_iter().map(|(p, _)| p).collect();
        assert_eq!(got, vec!["x.txt", "gone"]);
    }
}
