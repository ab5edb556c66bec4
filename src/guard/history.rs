//! Secret stores a repository's history holds: a `.env` committed once and
//! removed since is still in git's objects, which commands may read
//! (`git show HEAD~3:.env`). Its values are learned at a session's start,
//! so what a command prints of them is redacted however it spells them.
//! Bounded: the newest [`MAX_COMMITS`] commits of every branch, and
//! [`MAX_BLOBS`] files.

use std::path::Path;

use super::paths::PathRules;

/// Commits looked at, newest first, across all refs.
const MAX_COMMITS: usize = 500;
/// Store versions read at most.
const MAX_BLOBS: usize = 32;
/// A version larger than this is no store of values.
const MAX_BLOB_BYTES: usize = 256 * 1024;

/// `(path, commit, text)` of each secret store a recent commit added or
/// changed, by name (`rules`), newest first.
pub(super) fn stores_in_history(root: &Path, rules: &PathRules) -> Vec<(String, String, String)> {
    let count = MAX_COMMITS.to_string();
    let log = crate::files::git::run(
        root,
        &[
            "log",
            "--all",
            "-n",
            &count,
            "--no-renames",
            "--diff-filter=AM",
            "--format=%x01%H",
            "--name-only",
            "-z",
        ],
        &[],
        None,
    );
    let Some(log) = log.ok().map(|o| o.stdout_text()).filter(|t| !t.is_empty()) else {
        return Vec::new();
    };
    let mut wanted: Vec<(String, String)> = Vec::new();
    for entry in log.split('\u{1}').filter(|e| !e.is_empty()) {
        let mut fields = entry.split(['\0', '\n']).filter(|f| !f.is_empty());
        let Some(commit) = fields.next() else {
            continue;
        };
        for path in fields {
            if rules.is_secret_store(path)
                && !path.to_ascii_lowercase().ends_with(".pub")
                && !wanted.iter().any(|(p, _)| p == path)
                && wanted.len() < MAX_BLOBS
            {
                wanted.push((path.to_string(), commit.to_string()));
            }
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    let input: String = wanted
        .iter()
        .map(|(path, commit)| format!("{commit}:{path}\n"))
        .collect();
    let Ok(batch) =
        crate::files::git::run(root, &["cat-file", "--batch"], &[], Some(input.as_bytes()))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut rest: &[u8] = &batch.stdout;
    for (path, commit) in wanted {
        // `<oid> blob <size>\n<bytes>\n`, or `<name> missing\n`.
        let Some(eol) = rest.iter().position(|&b| b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&rest[..eol]).into_owned();
        rest = &rest[eol + 1..];
        let size = match header.split(' ').collect::<Vec<_>>()[..] {
            [_, "blob", size] => size.parse::<usize>().ok(),
            _ => None,
        };
        let Some(size) = size.filter(|&s| s <= rest.len()) else {
            continue;
        };
        let body = &rest[..size];
        rest = rest.get(size + 1..).unwrap_or_default();
        if size <= MAX_BLOB_BYTES
            && let Ok(text) = std::str::from_utf8(body)
        {
            out.push((path, commit, text.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_store_removed_from_the_work_tree_is_read_from_history() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join(".env"), "DB_PASSWORD=0ld-history-passw0rd\n").unwrap();
        std::fs::write(root.join(".env.example"), "DB_PASSWORD=\n").unwrap();
        std::fs::write(root.join("app.py"), "x = 1\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "first"]);
        git(root, &["rm", "-q", "--cached", ".env"]);
        std::fs::remove_file(root.join(".env")).unwrap();
        git(root, &["commit", "-qm", "drop .env"]);
        let found = stores_in_history(root, &PathRules::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, ".env");
        assert_eq!(found[0].2, "DB_PASSWORD=0ld-history-passw0rd\n");
        // Not a repository: nothing, and no error.
        let plain = tempfile::tempdir().unwrap();
        assert!(stores_in_history(plain.path(), &PathRules::default()).is_empty());
    }
}
