//! Secret stores git tracks, shown to commands as git's index holds them.
//!
//! A mask reads empty. For a file git tracks, git in the command takes
//! that for an edit: `git stash` records every line deleted (and the
//! user's later `git stash pop` empties the real file), `git commit -a`
//! commits it emptied. Any command can already read the tracked content
//! through git's objects (`git show HEAD:.env`), so showing it hides
//! nothing more: the mask holds the index's copy, read-only, from a
//! directory of the session's that no command sees, and its values join
//! the ledger (output carrying them is redacted). A file git does not
//! track, or tracks with local changes the index does not hold, shows
//! only what the index holds.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Guard;
use super::mounts::{MountPlan, MountStep};

/// What the last look at the index found, for as long as the index and
/// the masked files stay the same.
#[derive(Debug, Default)]
pub(super) struct TrackedCopies {
    /// `.git/index` as it was looked at: modified time, size, inode.
    stamp: Option<(i64, i64, u64, u64)>,
    /// The masked files asked about (absolute), in order.
    asked: Vec<PathBuf>,
    /// Each tracked one, with the file holding its index copy.
    copies: HashMap<PathBuf, PathBuf>,
}

impl Guard {
    /// In `plan`, the masks of files git tracks in the repository at
    /// `root` hold the index's copy (from `session_dir/indexed/`).
    pub(super) fn show_tracked_as_indexed(
        &self,
        root: &Path,
        session_dir: &Path,
        plan: &mut MountPlan,
    ) {
        let index = root.join(".git/index");
        let Ok(meta) = index.metadata() else {
            return;
        };
        let masked: Vec<PathBuf> = plan
            .steps
            .iter()
            .filter_map(|s| match s {
                MountStep::Mask { path, dir: false } if path.starts_with(root) => {
                    Some(path.clone())
                }
                _ => None,
            })
            .collect();
        if masked.is_empty() {
            return;
        }
        let stamp = Some((meta.mtime(), meta.mtime_nsec(), meta.len(), meta.ino()));
        let copies = {
            let known = self.known();
            let last = &known.tracked_copies;
            (last.stamp == stamp && last.asked == masked).then(|| last.copies.clone())
        };
        let copies = match copies {
            Some(copies) => copies,
            None => {
                let copies = self.index_copies(root, &session_dir.join("indexed"), &masked);
                self.known().tracked_copies = TrackedCopies {
                    stamp,
                    asked: masked,
                    copies: copies.clone(),
                };
                copies
            }
        };
        for step in &mut plan.steps {
            if let MountStep::Mask { path, dir: false } = step
                && let Some(source) = copies.get(path)
            {
                *step = MountStep::MaskWith {
                    path: path.clone(),
                    source: source.clone(),
                };
            }
        }
    }

    /// The index's copy of each of `masked` git tracks, written into
    /// `dir` once per content.
    fn index_copies(
        &self,
        root: &Path,
        dir: &Path,
        masked: &[PathBuf],
    ) -> HashMap<PathBuf, PathBuf> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let mut out = HashMap::new();
        let rels: Vec<String> = masked
            .iter()
            .filter_map(|p| p.strip_prefix(root).ok())
            .map(|r| r.to_string_lossy().into_owned())
            .collect();
        let mut args: Vec<&str> = vec!["ls-files", "-s", "-z", "--"];
        args.extend(rels.iter().map(String::as_str));
        let Ok(listed) = crate::files::git::run(root, &args, &[], None) else {
            return out;
        };
        if !listed.ok || listed.stdout.is_empty() {
            return out;
        }
        let _ = std::fs::DirBuilder::new().mode(0o700).create(dir);
        for entry in String::from_utf8_lossy(&listed.stdout).split('\0') {
            let Some((head, rel)) = entry.split_once('\t') else {
                continue;
            };
            let mut fields = head.split(' ');
            let (Some(mode), Some(id), Some("0")) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            if !matches!(mode, "100644" | "100755") || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            let copy = dir.join(id);
            if !copy.exists() {
                let Ok(blob) = crate::files::git::run(root, &["cat-file", "blob", id], &[], None)
                else {
                    continue;
                };
                if !blob.ok {
                    continue;
                }
                if let Ok(text) = std::str::from_utf8(&blob.stdout) {
                    self.observe_protected(rel, text);
                }
                let fresh = dir.join(format!("{id}.new"));
                let written = std::fs::write(&fresh, &blob.stdout)
                    .and_then(|()| {
                        std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o444))
                    })
                    .and_then(|()| std::fs::rename(&fresh, &copy));
                if written.is_err() {
                    continue;
                }
            }
            out.insert(root.join(rel), copy);
        }
        out
    }
}
