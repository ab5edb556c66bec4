//! Undo: putting back what recorded writes replaced. One write at a time,
//! except the writes of one patch (a text format's several files), which
//! are undone together: every file of it checked first, then all restored.
//! The same rollback finishes a patch (or a patch's undo) a kill cut off,
//! at the next start (`patch.rs`).

use std::collections::HashSet;
use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;

use super::{
    DroppedLine, Line, Undone, UndoneLine, VersionId, Versions, WriteLine, id_number, now,
};
use crate::files::{Expect, FileError, Resolved, Workspace, read_bytes, write_checked};

/// How a group's rollback treats a file changed since nib wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Changed {
    /// Refuse the whole rollback before touching any file (`nib undo`).
    Refuse,
    /// Restore anyway (`nib undo --force`).
    Overwrite,
    /// Leave that file as it is and roll back the others (recovery after a
    /// kill: the change is someone's work).
    Keep,
}

/// What a group's rollback did.
#[derive(Debug, Default)]
pub struct RolledBack {
    /// The files put back, newest write first.
    pub undone: Vec<Undone>,
    /// Files left as they were because they changed since nib wrote them.
    pub kept: Vec<String>,
}

impl Versions {
    /// Undoes the newest write not yet undone (of `path`, when given):
    /// puts the previous content back, or deletes the file if the write
    /// created it. Refuses when the file changed since nib wrote it, unless
    /// `force`. A write that was one file of a patch undoes the whole
    /// patch, in one step (`Undone::also` names the other files).
    pub fn undo(
        &self,
        ws: &Workspace,
        path: Option<&str>,
        force: bool,
    ) -> Result<Undone, FileError> {
        let only = path.map(|p| ws.resolve(p)).transpose()?;
        let lines = self.load()?;
        let mut done = done_ids(&lines);
        let (entry, target, current, lock) = loop {
            let entry = lines
                .iter()
                .rev()
                .filter_map(|l| match l {
                    Line::Write(w) => Some(w),
                    Line::Undone(_) | Line::Dropped(_) => None,
                })
                .find(|w| {
                    id_number(&w.id).is_some()
                        && !done.contains(w.id.as_str())
                        && only.as_ref().is_none_or(|o| o.rel == w.path)
                })
                .ok_or_else(|| FileError::NothingToUndo {
                    path: only.as_ref().map(|o| o.rel.clone()),
                })?;
            // Resolve again: the path is pinned to the workspace like any other.
            let target = ws.resolve(&entry.path)?;
            let lock = self.lock(&target.rel)?;
            let current = read_bytes(&target)?;
            if never_landed(entry, current.as_deref()) {
                // Killed between its index line and its rename: the file
                // is as it was, so there is nothing of this write to undo.
                self.drop_entry(entry);
                done.insert(entry.id.clone());
                continue;
            }
            break (entry, target, current, lock);
        };
        if let Some(group) = &entry.group {
            drop(lock);
            return self.undo_group(ws, group, force);
        }
        if !force {
            check_unchanged(entry, &target, current.as_deref())?;
        }
        self.restore(entry, &target, current.as_deref())
    }

    /// Undoes every write of patch `group` as one: under a journal, so a
    /// kill half way is finished at the next start.
    fn undo_group(&self, ws: &Workspace, group: &str, force: bool) -> Result<Undone, FileError> {
        let journal = self.begin_undo(group)?;
        let changed = if force {
            Changed::Overwrite
        } else {
            Changed::Refuse
        };
        let result = self.roll_back_group(ws, group, changed);
        journal.commit();
        let mut undone = result?.undone.into_iter();
        let Some(mut first) = undone.next() else {
            return Err(FileError::NothingToUndo { path: None });
        };
        first.also = undone.collect();
        Ok(first)
    }

    /// Rolls back every write of `group` not yet undone, newest first.
    /// With `Changed::Refuse`, every file is checked before any is touched.
    pub(super) fn roll_back_group(
        &self,
        ws: &Workspace,
        group: &str,
        changed: Changed,
    ) -> Result<RolledBack, FileError> {
        let lines = self.load()?;
        let done = done_ids(&lines);
        let entries: Vec<&WriteLine> = lines
            .iter()
            .rev()
            .filter_map(|l| match l {
                Line::Write(w) => Some(w),
                Line::Undone(_) | Line::Dropped(_) => None,
            })
            .filter(|w| {
                w.group.as_deref() == Some(group)
                    && id_number(&w.id).is_some()
                    && !done.contains(w.id.as_str())
            })
            .collect();
        if changed == Changed::Refuse {
            for entry in &entries {
                let target = ws.resolve(&entry.path)?;
                let current = read_bytes(&target)?;
                if !never_landed(entry, current.as_deref()) {
                    check_unchanged(entry, &target, current.as_deref())?;
                }
            }
        }
        let mut out = RolledBack::default();
        for entry in entries {
            let target = ws.resolve(&entry.path)?;
            let _lock = self.lock(&target.rel)?;
            let current = read_bytes(&target)?;
            if never_landed(entry, current.as_deref()) {
                self.drop_entry(entry);
                continue;
            }
            if changed != Changed::Overwrite
                && check_unchanged(entry, &target, current.as_deref()).is_err()
            {
                out.kept.push(target.rel.clone());
                continue;
            }
            out.undone
                .push(self.restore(entry, &target, current.as_deref())?);
        }
        Ok(out)
    }

    /// Marks a write that never reached its file as dropped (undo skips it).
    fn drop_entry(&self, entry: &WriteLine) {
        let _ = self.append(&DroppedLine {
            dropped: entry.id.clone(),
            t: now(),
        });
    }

    /// Puts back what `entry` replaced (or deletes the file it created)
    /// over `current`, and records the undo.
    fn restore(
        &self,
        entry: &WriteLine,
        target: &Resolved,
        current: Option<&[u8]>,
    ) -> Result<Undone, FileError> {
        if entry.existed {
            let previous = self.read_prev(&entry.id, &target.rel)?;
            let expected = current.map_or(Expect::Absent, Expect::Bytes);
            write_checked(target, expected, &previous)?;
        } else if current.is_some() {
            delete(target)?;
        }
        self.append(&UndoneLine {
            undone: entry.id.clone(),
            t: now(),
        })
        .map_err(|e| FileError::VersionStore {
            detail: format!(
                "{} was restored, but recording that in {} failed: {e}; do not undo again until that is fixed, or the next undo would check the wrong write",
                target.rel,
                self.shown(&self.dir.join(super::INDEX))
            ),
        })?;
        Ok(Undone {
            id: VersionId(entry.id.clone()),
            path: target.rel.clone(),
            restored: entry.existed,
            also: Vec::new(),
        })
    }
}

/// The ids of writes already undone or dropped.
fn done_ids(lines: &[Line]) -> HashSet<String> {
    lines
        .iter()
        .filter_map(|l| match l {
            Line::Undone(u) => Some(u.undone.clone()),
            Line::Dropped(d) => Some(d.dropped.clone()),
            Line::Write(_) => None,
        })
        .collect()
}

/// Ok when the file still holds what `entry` wrote (no file, for a delete).
fn check_unchanged(
    entry: &WriteLine,
    target: &Resolved,
    current: Option<&[u8]>,
) -> Result<(), FileError> {
    match current {
        None if entry.removed => Ok(()),
        Some(bytes) if !entry.removed && entry.hash_of(bytes) == Some(entry.written_hash) => Ok(()),
        Some(_) => Err(FileError::ChangedSinceWrite {
            path: target.rel.clone(),
            deleted: false,
        }),
        None => Err(FileError::ChangedSinceWrite {
            path: target.rel.clone(),
            deleted: true,
        }),
    }
}

/// Whether a recorded write never reached the file: it does not hold what
/// was written but still holds what the write would have replaced.
fn never_landed(entry: &WriteLine, current: Option<&[u8]>) -> bool {
    let Some(prev_hash) = entry.prev_hash else {
        return false;
    };
    match current {
        Some(bytes) if entry.removed => entry.hash_of(bytes) == Some(prev_hash),
        None if entry.removed => false,
        Some(bytes) => {
            let Some(now) = entry.hash_of(bytes) else {
                return false;
            };
            now != entry.written_hash && entry.existed && now == prev_hash
        }
        None => !entry.existed,
    }
}

/// Deletes a file undo found was created by nib's write.
fn delete(target: &Resolved) -> Result<(), FileError> {
    let meta = fs::symlink_metadata(&target.real).map_err(|e| FileError::Io {
        action: "delete",
        path: target.rel.clone(),
        source: e,
    })?;
    if meta.permissions().mode() & 0o200 == 0 {
        return Err(FileError::ReadOnly {
            path: target.rel.clone(),
        });
    }
    fs::remove_file(&target.real).map_err(|e| FileError::Io {
        action: "delete",
        path: target.rel.clone(),
        source: e,
    })?;
    if let Some(parent) = target.real.parent()
        && let Ok(dir) = File::open(parent)
    {
        let _ = dir.sync_all();
    }
    Ok(())
}
