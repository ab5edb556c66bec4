//! Git's own files a command wrote that hold a secret the session knows.
//!
//! `.git/` stays writable to commands (a commit writes objects, refs, the
//! index and the reflogs), and the workspace's watch leaves it out, so a
//! copy put there (`.git/description`, a file under `.git/lfs/`) or an
//! identity git wrote into a reflog (`user.name` set to a token for one
//! commit, which `gitcheck.rs` then undoes) would stay for every later
//! command, session and tool that reads `.git`. After each command the
//! files of the git directories changed since it started are read back:
//! a reflog keeps its lines but those holding a secret, any other file
//! holding one is moved into the quarantine. Git's binary formats (loose
//! objects, packs, the index) are not text a secret is read from: they
//! are told apart by their first bytes, so a raw file given an object's
//! name is still read.

use std::borrow::Cow;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::gitrefs::Repo;
use crate::guard::Guard;

/// Entries of the git directories looked at, at most, per command.
const MAX_ENTRIES: usize = 20_000;

/// Bytes read back at most, per command.
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// When a command started, as the kernel's change time counts (which a
/// command cannot set back, as it can a file's modification time).
pub type Since = (i64, i64);

/// Now, in change-time terms, less a second: the kernel stamps files by a
/// coarser clock that can lag the one read here, and a file read twice
/// costs only the read.
pub fn now() -> Since {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64 - 1, i64::from(d.subsec_nanos())),
        Err(_) => (0, 0),
    }
}

/// What of a file of git's is read for a secret: None for the index
/// (`gitindex.rs` reads that one) and a loose object (a zlib stream that
/// inflates to an object's header); a stream that inflates to anything
/// else is read inflated, and a raw file given an object's name (or
/// zlib's first two bytes) is read as it is.
fn readable<'a>(name: &std::ffi::OsStr, bytes: &'a [u8]) -> Option<Cow<'a, [u8]>> {
    if name == "index" && bytes.starts_with(b"DIRC") {
        return None;
    }
    // (The inflater refuses a stream without zlib's header at once.)
    if let Ok(inflated) =
        miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(bytes, MAX_BYTES as usize)
    {
        let object = [&b"blob "[..], b"tree ", b"commit ", b"tag "]
            .iter()
            .any(|h| inflated.starts_with(h));
        return (!object).then_some(Cow::Owned(inflated));
    }
    Some(Cow::Borrowed(bytes))
}

/// The files under the git directories whose change time is at or after
/// `since`, and whether the walk stopped at its budget. Only a directory
/// whose own entries changed is walked under an `objects/` (git makes an
/// object by a new name, never in place): its thousands of files are not
/// looked at after every command.
fn changed_since(repo: &Repo, since: Since) -> (Vec<PathBuf>, bool) {
    let after = |m: &std::fs::Metadata| (m.ctime(), m.ctime_nsec()) >= since;
    let mut roots = vec![repo.common.clone()];
    if !repo.git_dir.starts_with(&repo.common) {
        roots.push(repo.git_dir.clone());
    }
    // Object stores (git's, a submodule's under `modules/`, LFS's under
    // `lfs/`): thousands of files, never changed in place.
    let in_objects = |path: &Path| {
        roots
            .iter()
            .find_map(|r| path.strip_prefix(r).ok())
            .is_some_and(|rel| rel.components().any(|c| c.as_os_str() == "objects"))
    };
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut stack = roots.clone();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return (out, true);
            }
            let path = entry.path();
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                if !in_objects(&path) || after(&meta) {
                    stack.push(path);
                }
            } else if after(&meta) {
                out.push(path);
            }
        }
    }
    (out, false)
}

/// Reads back what the command changed in the repository's own files
/// since `since`; what nib did about a secret found, for the command's
/// output.
pub fn check(root: &Path, repo: &Repo, guard: &Guard, since: Since) -> String {
    let (changed, partial) = changed_since(repo, since);
    let mut note = String::new();
    let mut budget = MAX_BYTES;
    for path in changed {
        let Ok(meta) = path.symlink_metadata() else {
            continue;
        };
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).unwrap_or_default();
            if let Some(what) = guard.known_secret_in(&target.to_string_lossy()) {
                note.push_str(&remove(root, &path, &shown, &what));
            }
            continue;
        }
        if !meta.is_file() {
            continue;
        }
        if meta.len() > budget {
            // A pack after `git gc` is large and git's own; anything else
            // left unread is said.
            if !in_pack(&path) {
                note.push_str(&format!(
                    "note: nib did not read back {shown} ({} bytes, past its budget per command), one of git's own files the command changed: a secret copied into it would not be caught, so check it before you share the repository\n",
                    meta.len()
                ));
            }
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        budget -= meta.len();
        let Some(content) = readable(path.file_name().unwrap_or_default(), &bytes) else {
            continue;
        };
        let text = String::from_utf8_lossy(&content);
        let Some(what) = guard.known_secret_in(&text) else {
            continue;
        };
        let reflog = path
            .strip_prefix(&repo.common)
            .or_else(|_| path.strip_prefix(&repo.git_dir))
            .is_ok_and(|rel| rel.starts_with("logs") || rel.to_string_lossy().contains("/logs/"));
        note.push_str(&if reflog {
            drop_lines(&path, &text, &shown, &what, guard)
        } else {
            remove(root, &path, &shown, &what)
        });
    }
    if partial {
        note.push_str(&format!(
            "note: the repository's own files are more than {MAX_ENTRIES}; nib read back only the first it found for a secret this command may have put there\n"
        ));
    }
    note
}

/// Whether `path` is a pack or its index (`objects/pack/pack-….pack`).
fn in_pack(path: &Path) -> bool {
    path.parent().is_some_and(|p| p.ends_with("objects/pack"))
}

/// A reflog without its lines that hold a secret (an identity or a
/// message git copied from a commit that was undone).
fn drop_lines(path: &Path, text: &str, shown: &str, what: &str, guard: &Guard) -> String {
    let kept: String = text
        .split_inclusive('\n')
        .filter(|line| guard.known_secret_in(line).is_none())
        .collect();
    match std::fs::write(path, kept) {
        Ok(()) => format!(
            "note: git's log of where a ref was ({shown}) took a secret from the command's commit: {what}; nib took those lines out of it\n"
        ),
        Err(e) => format!(
            "warning: git's log {shown} holds a secret from the command's commit: {what}, and nib could not take it out ({e}): run `git reflog expire --expire=now --all` before you share the repository\n"
        ),
    }
}

/// A file of git's holding a secret, moved into the quarantine (or
/// removed, when the git directory is outside the workspace).
fn remove(root: &Path, path: &Path, shown: &str, what: &str) -> String {
    let moved = match path.strip_prefix(root) {
        Ok(rel) => crate::files::quarantine(root, &rel.to_string_lossy()),
        Err(_) => std::fs::remove_file(path).map(|()| "nowhere (removed)".to_string()),
    };
    match moved {
        Ok(to) => format!(
            "note: the command wrote {shown}, one of git's own files, holding a secret: {what}. nib moved it to {to}, where only the user can read it; secrets stay in the files they came from.\n"
        ),
        Err(e) => format!(
            "warning: the command wrote {shown}, one of git's own files, holding a secret: {what}, and nib could not move it away ({e}): the user should delete it\n"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_and_the_index_are_told_from_text_dressed_as_them() {
        let zlib = |b: &[u8]| miniz_oxide::deflate::compress_to_vec_zlib(b, 6);
        let name = std::ffi::OsStr::new;
        let object = zlib(b"blob 3\0abc");
        assert!(readable(name("3f2a"), &object).is_none());
        assert!(readable(name("index"), b"DIRC\0\0\0\x02").is_none());
        // A stream that is not an object is read inflated; text with
        // zlib's first two bytes, or the index's magic under another
        // name, is read as it is.
        let stream = zlib(b"ghp_token");
        assert_eq!(
            readable(name("3f2a"), &stream).as_deref(),
            Some(&b"ghp_token"[..])
        );
        for (n, raw) in [
            ("3f2a", &b"x^ghp_token"[..]),
            ("description", b"DIRC ghp_token"),
            ("x", b"x"),
        ] {
            assert_eq!(readable(name(n), raw).as_deref(), Some(raw));
        }
    }
}
