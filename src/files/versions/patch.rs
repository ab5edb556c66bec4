//! Patches: the writes of one text-format patch (several files) as one
//! change. Before the first file changes, a journal
//! (`.nib/versions/patches/<group>.json`: the group, what it does, and
//! what each file holds once it is done) is written and synced, and kept
//! locked (flock) by the writing process; every write of the patch carries
//! the group in its index line. At the end the journal is removed.
//!
//! A journal nobody holds is a patch a kill cut off. `Versions::recover`
//! (run at the start of every nib command that opens a workspace) finds
//! it: when every file already holds its new content, the patch was done
//! and is kept ("completed"); otherwise the writes that landed are put
//! back from their saved versions ("rolled back"). A patch's undo has a
//! journal too, and is finished the same way. Either way every file is
//! all old or all new afterwards, and the message says which.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::undo::Changed;
pub use super::undo::RolledBack;
use super::{Line, Versions, now};
use crate::files::{FileError, Workspace, content_hash, read_bytes};

const JOURNALS: &str = "patches";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    /// Writing the patch.
    Apply,
    /// Undoing it.
    Undo,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    group: String,
    op: Op,
    /// Each file's state once the patch is whole.
    #[serde(default)]
    files: Vec<Final>,
    t: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Final {
    path: String,
    /// `content_hash` of what the file holds; None: no file.
    after: Option<u64>,
}

/// A patch being written (or undone): its journal, held locked until
/// `commit` or `roll_back`. Dropped without either (a panic), the journal
/// stays and the next start rolls the patch back.
#[derive(Debug)]
pub struct Patch {
    store: Versions,
    group: String,
    journal: PathBuf,
    _held: File,
}

impl Versions {
    /// Starts a patch whose files end up as `finals` (workspace-relative
    /// path, content; None: deleted). Write its files through
    /// `Patch::store`, then `commit` (or `roll_back` when one fails).
    pub fn begin_patch(&self, finals: &[(&str, Option<&[u8]>)]) -> Result<Patch, FileError> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let group = format!("{nanos:x}-{}", std::process::id());
        let files = finals
            .iter()
            .map(|(path, after)| Final {
                path: (*path).to_string(),
                after: after.map(content_hash),
            })
            .collect();
        self.begin(group, Op::Apply, files)
    }

    /// The journal of an undo of patch `group`.
    pub(super) fn begin_undo(&self, group: &str) -> Result<Patch, FileError> {
        self.begin(group.to_string(), Op::Undo, Vec::new())
    }

    fn begin(&self, group: String, op: Op, files: Vec<Final>) -> Result<Patch, FileError> {
        self.ensure_dirs()?;
        let dir = self.dir.join(JOURNALS);
        self.ensure_dir(&dir)?;
        let journal = Journal {
            group: group.clone(),
            op,
            files,
            t: now(),
        };
        let text = serde_json::to_vec(&journal).map_err(io::Error::other);
        // Written under a temp name, synced and locked, then renamed: a
        // journal is never seen half written or unlocked while its patch
        // runs.
        let temp = dir.join(format!("{group}.{}.tmp", std::process::id()));
        let path = dir.join(format!("{group}-{}.json", op_name(op)));
        let made = text.and_then(|text| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)?;
            file.write_all(&text)?;
            file.sync_all()?;
            file.lock()?;
            fs::rename(&temp, &path)?;
            sync_dir(&dir);
            Ok(file)
        });
        match made {
            Ok(held) => Ok(Patch {
                store: Versions {
                    group: Some(group.clone()),
                    ..self.clone()
                },
                group,
                journal: path,
                _held: held,
            }),
            Err(e) => {
                let _ = fs::remove_file(&temp);
                Err(self.io_error(&path, e))
            }
        }
    }

    /// Finishes the patches (and patch undos) that kills cut off: each is
    /// completed or rolled back, and one line per patch says which. A
    /// journal still held by a running nib is left alone. Errors are in
    /// the lines: recovery never stops a command.
    pub fn recover(&self, ws: &Workspace) -> Vec<String> {
        let dir = self.dir.join(JOURNALS);
        let Ok(entries) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut notes = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".tmp") {
                // A journal killed before it was complete: no file changed.
                if tmp_pid(&name).is_some_and(|pid| !crate::files::write::alive(pid)) {
                    let _ = fs::remove_file(&path);
                }
                continue;
            }
            if !name.ends_with(".json") {
                continue;
            }
            if let Some(note) = self.recover_one(ws, &path) {
                notes.push(note);
            }
        }
        if !notes.is_empty() {
            sync_dir(&dir);
        }
        notes
    }

    fn recover_one(&self, ws: &Workspace, path: &Path) -> Option<String> {
        let file = File::open(path).ok()?;
        // Held: its patch is running in a live nib.
        file.try_lock().ok()?;
        let journal: Journal = match fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(j) => j,
            None => {
                let _ = fs::remove_file(path);
                return None;
            }
        };
        let names = || {
            journal
                .files
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let note = match journal.op {
            Op::Apply if self.is_whole(ws, &journal) => Some(format!(
                "nib: a patch a kill cut off at its very end was already whole: completed ({})",
                names()
            )),
            Op::Apply => Some(
                match self.roll_back_group(ws, &journal.group, Changed::Keep) {
                    Ok(done) => format!(
                        "nib: a patch a kill cut off half way was rolled back: {}",
                        rolled_back_note(&done, &names())
                    ),
                    Err(e) => format!(
                        "nib: a patch a kill cut off half way could not be rolled back ({}): {e}; \
                     run `nib undo` to try again",
                        names()
                    ),
                },
            ),
            Op::Undo => Some(
                match self.roll_back_group(ws, &journal.group, Changed::Keep) {
                    Ok(done) if done.undone.is_empty() && done.kept.is_empty() => {
                        "nib: an undo of a patch a kill cut off was already whole: completed".into()
                    }
                    Ok(done) => format!(
                        "nib: an undo of a patch a kill cut off half way was completed: {}",
                        rolled_back_note(&done, "")
                    ),
                    Err(e) => format!(
                        "nib: an undo of a patch a kill cut off could not be completed: {e}; run \
                     `nib undo` again"
                    ),
                },
            ),
        };
        let _ = fs::remove_file(path);
        note
    }

    /// Whether every file of an applied patch holds its new content.
    fn is_whole(&self, ws: &Workspace, journal: &Journal) -> bool {
        let recorded = self.load().is_ok_and(|lines| {
            lines.iter().any(|l| match l {
                Line::Write(w) => w.group.as_deref() == Some(journal.group.as_str()),
                Line::Undone(_) | Line::Dropped(_) => false,
            })
        });
        recorded
            && !journal.files.is_empty()
            && journal.files.iter().all(|f| {
                let Ok(file) = ws.resolve(&f.path) else {
                    return false;
                };
                match (read_bytes(&file), f.after) {
                    (Ok(Some(bytes)), Some(hash)) => content_hash(&bytes) == hash,
                    (Ok(None), None) => true,
                    _ => false,
                }
            })
    }
}

impl Patch {
    /// The store to write the patch's files through: each write is
    /// recorded as part of the patch.
    pub fn store(&self) -> &Versions {
        &self.store
    }

    /// The patch is whole: its journal goes.
    pub fn commit(self) {
        let _ = fs::remove_file(&self.journal);
        if let Some(dir) = self.journal.parent() {
            sync_dir(dir);
        }
    }

    /// A file of the patch failed: put back the ones already written, so
    /// the patch leaves no file changed. Files someone else changed
    /// meanwhile are kept as they are (`RolledBack::kept`).
    pub fn roll_back(self, ws: &Workspace) -> Result<RolledBack, FileError> {
        let done = self.store.roll_back_group(ws, &self.group, Changed::Keep);
        self.commit();
        done
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Apply => "apply",
        Op::Undo => "undo",
    }
}

/// "restored a.rs; deleted b.rs; kept c.rs (changed since)".
fn rolled_back_note(done: &RolledBack, files: &str) -> String {
    let mut parts = Vec::new();
    for u in &done.undone {
        let verb = if u.restored { "restored" } else { "deleted" };
        parts.push(format!("{verb} {}", u.path));
    }
    if !done.kept.is_empty() {
        parts.push(format!(
            "kept {} as it is (changed since nib wrote it)",
            done.kept.join(", ")
        ));
    }
    if parts.is_empty() {
        return format!("no file of it had changed yet ({files})");
    }
    parts.join("; ")
}

/// The pid in a journal temp name (`<group>.<pid>.tmp`).
fn tmp_pid(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(".tmp")?;
    stem.rsplit('.').next()?.parse().ok()
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
