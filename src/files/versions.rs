//! The versions store under `<root>/.nib/versions/`: before each write nib
//! keeps the file's previous content, so `nib undo` can put back the last
//! write (and, run again, the one before). It owns the on-disk layout:
//!
//! - `<id>.prev`: the bytes before write `<id>` (empty when the file did not
//!   exist; the index says which);
//! - `index.jsonl`: one JSON object per line, appended in order:
//!   `{"id","path","existed","t","written_hash"}` for a write,
//!   `{"undone": id, "t"}` for an undo, `{"dropped": id, "t"}` for a
//!   recorded write that then failed (so it is never undone).
//!
//! A write line also carries `prev_hash`, the hash of the bytes it
//! replaced, and `hashing`, which hash both are (2: `content_hash`; lines
//! without it are from before and use `content_hash_v1`), so the entry
//! validates itself: a write killed between its
//! index line and its rename left the file as it was, and undo sees that
//! and skips the entry instead of calling the file changed.
//! `locks/<hash>.lock` are the per-file advisory locks (flock) held across
//! check-and-rename, so two nib processes writing one file take turns.
//! A write that is one file of a patch carries `group`; `patches/` holds
//! the journals of patches being written or undone (`versions/patch.rs`),
//! and `versions/undo.rs` undoes writes, a patch's all at once.
//!
//! The index is read tolerantly: a line that does not parse (a crash in the
//! middle of an append) is skipped. `.nib/` is created with a `.gitignore`
//! of `*`, and `versions/` always gets one, so the store is never committed.

mod patch;
mod undo;

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::write::{BeforeRename, Parts, is_disk_full, remove_checked_then, write_checked_then};
pub use patch::{Patch, RolledBack};

use super::read::content_hash_parts;
use super::{Expect, FileError, Resolved, Workspace, content_hash, content_hash_v1};

/// The id of one recorded write: a zero-padded increasing number ("000001").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VersionId(String);

impl VersionId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for VersionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What `undo` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The write that was undone.
    pub id: VersionId,
    /// Its workspace-relative path.
    pub path: String,
    /// true: the previous content was put back; false: the file did not
    /// exist before that write, so it was deleted.
    pub restored: bool,
    /// The other files of the same patch, undone with it (newest first).
    pub also: Vec<Undone>,
}

/// A held per-file lock (`Versions::lock`); dropping it releases it.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// The versions store of one workspace. Directories are created on first
/// `record`, not on construction.
#[derive(Debug, Clone)]
pub struct Versions {
    root: PathBuf,
    dir: PathBuf,
    /// The patch (`versions/patch.rs`) whose writes this store records:
    /// each index line then names it, so undo and recovery find them all.
    group: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct WriteLine {
    id: String,
    path: String,
    existed: bool,
    t: u64,
    written_hash: u64,
    /// The hash of the bytes replaced (absent in stores from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prev_hash: Option<u64>,
    /// Which content hash `written_hash` and `prev_hash` are: 2 for
    /// `content_hash`, 1 (lines written before the field) for
    /// `content_hash_v1`.
    #[serde(default = "hashing_v1")]
    hashing: u8,
    /// The write deleted the file (`written_hash` is then of nothing):
    /// undo expects no file there and puts the previous content back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    removed: bool,
    /// The patch this write belongs to: undone together with the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    group: Option<String>,
}

/// What an index line says of the two versions: their hashes, and
/// whether the write deleted the file.
#[derive(Debug, Clone, Copy)]
struct Hashes {
    written: u64,
    prev: u64,
    removed: bool,
}

impl Hashes {
    /// `written` None: a delete (its hash is that of nothing).
    fn of(previous: Option<&[u8]>, written: Option<Parts<'_>>) -> Hashes {
        Hashes {
            written: content_hash_parts(written.unwrap_or_default()),
            prev: content_hash(previous.unwrap_or_default()),
            removed: written.is_none(),
        }
    }
}

/// From this many bytes (both versions together) on, a write runs its
/// hashing and its index sync on second threads: below it, starting a
/// thread costs more than it saves.
const PARALLEL_STEPS: usize = 1 << 20;

fn hashing_v1() -> u8 {
    1
}

/// The `hashing` of the lines this build writes.
const HASHING: u8 = 2;

impl WriteLine {
    /// `bytes` hashed the way this line's hashes were (None: a hashing
    /// this build does not know, from a newer nib).
    fn hash_of(&self, bytes: &[u8]) -> Option<u64> {
        match self.hashing {
            1 => Some(content_hash_v1(bytes)),
            HASHING => Some(content_hash(bytes)),
            _ => None,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct UndoneLine {
    undone: String,
    t: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct DroppedLine {
    dropped: String,
    t: u64,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Line {
    Write(WriteLine),
    Undone(UndoneLine),
    Dropped(DroppedLine),
}

const INDEX: &str = "index.jsonl";

impl Versions {
    /// The store of `ws`, at `<root>/.nib/versions/`.
    pub fn new(ws: &Workspace) -> Versions {
        let root = ws.root().to_path_buf();
        let dir = root.join(".nib").join("versions");
        Versions {
            root,
            dir,
            group: None,
        }
    }

    /// Where the store lives.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Records a write of `rel` (workspace-relative, as in `Resolved::rel`)
    /// that replaces `previous` (None: the file does not exist yet) with
    /// `written`. Call it before writing: if it fails, do not write.
    pub fn record(
        &self,
        rel: &str,
        previous: Option<&[u8]>,
        written: &[u8],
    ) -> Result<VersionId, FileError> {
        self.record_from(rel, previous, None, written)
    }

    /// The number the next write would get (the highest in the index + 1).
    fn next_number(&self) -> Result<u64, FileError> {
        self.ensure_dirs()?;
        let lines = self.load()?;
        Ok(lines
            .iter()
            .filter_map(|l| match l {
                Line::Write(w) => id_number(&w.id),
                Line::Undone(_) | Line::Dropped(_) => None,
            })
            .max()
            .unwrap_or(0)
            + 1)
    }

    fn record_from(
        &self,
        rel: &str,
        previous: Option<&[u8]>,
        source: Option<(&Path, &File)>,
        written: &[u8],
    ) -> Result<VersionId, FileError> {
        let start = self.next_number()?;
        let hashes = Hashes::of(previous, Some(&[written]));
        self.record_at(start, rel, previous, source, hashes, true)
    }

    /// Saves the previous version as `<id>.prev` (the first free id from
    /// `start`) and appends the index line. With `source` (the path about
    /// to be replaced and that file, open), the `.prev` is a hard link to
    /// it when possible, so a 10 MB file is not copied to keep it. The
    /// link is safe because nib never writes a file in place: the write
    /// renames a new file over the path, and the old inode lives on only
    /// as the `.prev`. A file with other hard links is copied instead,
    /// since those names could change it. Without `sync`, the caller syncs
    /// the index afterwards (`sync_index`).
    fn record_at(
        &self,
        start: u64,
        rel: &str,
        previous: Option<&[u8]>,
        source: Option<(&Path, &File)>,
        hashes: Hashes,
        sync: bool,
    ) -> Result<VersionId, FileError> {
        let fail = |e: io::Error| {
            if is_disk_full(&e) {
                return FileError::DiskFull {
                    path: self.shown(&self.dir),
                };
            }
            FileError::VersionStore {
                detail: format!(
                    "could not save the previous version of {rel} in {}: {e}; the file was not written — fix the cause and retry",
                    self.shown(&self.dir)
                ),
            }
        };
        let mut n = start;
        // create_new reserves the id: a second nib recording at the same
        // time, or a `.prev` left by a crash before its index line, moves
        // this one on to the next number.
        let mut source = source.filter(|(_, f)| f.metadata().is_ok_and(|m| m.nlink() == 1));
        let (id, mut prev_file) = loop {
            let id = format!("{n:06}");
            let prev = self.dir.join(format!("{id}.prev"));
            if let Some((path, open)) = source {
                match fs::hard_link(path, &prev) {
                    // The path may name another file by now; keep the link
                    // only if it is the file that was checked.
                    Ok(()) if same_file(&prev, open) => break (id, None),
                    Ok(()) => {
                        let _ = fs::remove_file(&prev);
                        source = None;
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        n += 1;
                        continue;
                    }
                    // Another file system, or links not allowed: copy.
                    Err(_) => source = None,
                }
            }
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&prev)
            {
                Ok(f) => break (id, Some(f)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(fail(e)),
            }
        };
        let prev_path = self.dir.join(format!("{id}.prev"));
        let saved = match &mut prev_file {
            Some(f) => f
                .write_all(previous.unwrap_or_default())
                .and_then(|()| if sync { f.sync_all() } else { Ok(()) }),
            None => Ok(()),
        };
        if let Err(e) = saved {
            let _ = fs::remove_file(&prev_path);
            return Err(fail(e));
        }
        let line = WriteLine {
            id: id.clone(),
            path: rel.to_string(),
            existed: previous.is_some(),
            t: now(),
            written_hash: hashes.written,
            prev_hash: Some(hashes.prev),
            hashing: HASHING,
            removed: hashes.removed,
            group: self.group.clone(),
        };
        if let Err(e) = self.append_synced(&line, sync) {
            let _ = fs::remove_file(&prev_path);
            return Err(fail(e));
        }
        Ok(VersionId(id))
    }

    /// Records the write, then writes `bytes` to `file` atomically, but
    /// only over `previous` (None: only if no file is there): another
    /// program or nib process that changed the file since the caller read
    /// it makes this `ChangedOnDisk`, with nothing written. The file's
    /// lock is held from the check to the rename, so two nib processes
    /// never both write over the same content. The temp file is written
    /// and synced before the check, and the record (a hard link and one
    /// appended line, synced after the rename) made between the check and
    /// the rename, so that window stays short. If the write fails, the
    /// record is marked dropped (undo skips it) and the error is returned.
    pub fn write(
        &self,
        file: &Resolved,
        previous: Option<&[u8]>,
        bytes: &[u8],
    ) -> Result<VersionId, FileError> {
        let lock = self.lock(&file.rel)?;
        let expected = previous.map_or(Expect::Absent, Expect::Bytes);
        self.write_locked(&lock, file, expected, bytes)
    }

    /// `write`, with the file's lock already held (taken with `lock`
    /// before reading the file, so the read, the plan and the rename are
    /// one turn: another nib process waits instead of racing).
    pub fn write_locked(
        &self,
        lock: &FileLock,
        file: &Resolved,
        expected: Expect<'_>,
        bytes: &[u8],
    ) -> Result<VersionId, FileError> {
        self.write_locked_parts(lock, file, expected, &[bytes])
    }

    /// `write_locked` with the new content as parts written one after
    /// another (see `write::Parts`): a large file edited in a few places
    /// is streamed from the text as read and the new text, never held
    /// twice.
    pub fn write_locked_parts(
        &self,
        _lock: &FileLock,
        file: &Resolved,
        expected: Expect<'_>,
        parts: Parts<'_>,
    ) -> Result<VersionId, FileError> {
        self.recorded_change(file, expected.bytes(), Some(parts), |step| {
            write_checked_then(file, expected, parts, step)
        })
    }

    /// Deletes `file` only if it still holds `previous` (what the delete
    /// was planned from), its content kept in the store first, under the
    /// file's lock: the delete's version of `write`.
    pub fn remove(&self, file: &Resolved, previous: &[u8]) -> Result<VersionId, FileError> {
        let _lock = self.lock(&file.rel)?;
        self.recorded_change(file, Some(previous), None, |step| {
            remove_checked_then(file, previous, step)
        })
    }

    /// Runs `change` (a checked write or delete) with the recording of the
    /// previous version as its step between check and rename; a change
    /// that fails after the recording drops that version again.
    fn recorded_change(
        &self,
        file: &Resolved,
        previous: Option<&[u8]>,
        bytes: Option<Parts<'_>>,
        change: impl FnOnce(&mut BeforeRename<'_>) -> Result<(), FileError>,
    ) -> Result<VersionId, FileError> {
        let start = self.next_number()?;
        let mut recorded: Option<VersionId> = None;
        let mut record_failed: Option<FileError> = None;
        let size = previous.map_or(0, <[u8]>::len)
            + bytes.map_or(0, |parts| parts.iter().map(|p| p.len()).sum());
        let large = size >= PARALLEL_STEPS;
        let mut index_synced = false;
        let written = std::thread::scope(|scope| {
            // A large file's slow steps that the rename need not wait for
            // run on a second thread: hashing both versions while `change`
            // writes and syncs the temp file, and syncing the index while
            // it renames and looks at the replaced file again. The scope
            // joins them before this returns.
            let mut hashing = large
                .then(|| {
                    std::thread::Builder::new()
                        .spawn_scoped(scope, || Hashes::of(previous, bytes))
                        .ok()
                })
                .flatten();
            change(&mut |old| {
                let hashes = hashing
                    .take()
                    .and_then(|h| h.join().ok())
                    .unwrap_or_else(|| Hashes::of(previous, bytes));
                let source = old.map(|f| (file.real.as_path(), f));
                match self.record_at(start, &file.rel, previous, source, hashes, false) {
                    Ok(id) => {
                        recorded = Some(id);
                        index_synced = large
                            && std::thread::Builder::new()
                                .spawn_scoped(scope, || self.sync_index())
                                .is_ok();
                        Ok(())
                    }
                    Err(e) => {
                        record_failed = Some(e);
                        Err(io::Error::other("recording the previous version failed"))
                    }
                }
            })
        });
        match (written, recorded) {
            (Ok(()), Some(id)) => {
                if !index_synced {
                    self.sync_index();
                }
                Ok(id)
            }
            (Ok(()), None) => Err(FileError::VersionStore {
                detail: format!(
                    "{} was changed but its previous version was not recorded (a bug in nib); undo cannot restore it",
                    file.rel
                ),
            }),
            (Err(e), recorded) => {
                if let Some(id) = recorded {
                    let _ = self.append(&DroppedLine {
                        dropped: id.0.clone(),
                        t: now(),
                    });
                    let _ = fs::remove_file(self.dir.join(format!("{id}.prev")));
                }
                Err(record_failed.unwrap_or(e))
            }
        }
    }

    /// Makes the index (and the store's directory entries) durable.
    fn sync_index(&self) {
        if let Ok(f) = File::open(self.dir.join(INDEX)) {
            let _ = f.sync_all();
        }
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
    }

    /// Takes the advisory lock of `rel` (workspace-relative), blocking
    /// until another nib process releases it; released when dropped. Do
    /// not take it twice in one process (the second waits forever).
    pub fn lock(&self, rel: &str) -> Result<FileLock, FileError> {
        self.ensure_dirs()?;
        let locks = self.dir.join("locks");
        self.ensure_dir(&locks)?;
        // v1, as in every nib so far: two versions on one file must agree.
        let path = locks.join(format!("{:016x}.lock", content_hash_v1(rel.as_bytes())));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| self.io_error(&path, e))?;
        file.lock().map_err(|e| self.io_error(&path, e))?;
        Ok(FileLock { _file: file })
    }

    /// Reads the index, skipping lines that do not parse.
    fn load(&self) -> Result<Vec<Line>, FileError> {
        let index = self.dir.join(INDEX);
        match fs::symlink_metadata(&index) {
            Ok(meta) if !meta.is_file() => {
                return Err(FileError::VersionStore {
                    detail: format!(
                        "{} is not a regular file; nib keeps its index only in a plain file — remove it and retry",
                        self.shown(&index)
                    ),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io_error(&index, e)),
        }
        let bytes = fs::read(&index).map_err(|e| self.io_error(&index, e))?;
        Ok(bytes
            .split(|&b| b == b'\n')
            .filter_map(|line| serde_json::from_slice::<Line>(line).ok())
            .collect())
    }

    /// Appends one JSON line to the index. If the index ends in a partial
    /// line (a crash mid-append), a newline is written first so the new
    /// line does not merge with it.
    fn append<T: Serialize>(&self, entry: &T) -> io::Result<()> {
        self.append_synced(entry, true)
    }

    fn append_synced<T: Serialize>(&self, entry: &T, sync: bool) -> io::Result<()> {
        let mut text = serde_json::to_string(entry).map_err(io::Error::other)?;
        text.push('\n');
        let index = self.dir.join(INDEX);
        if let Ok(meta) = fs::symlink_metadata(&index)
            && !meta.is_file()
        {
            return Err(io::Error::other("the index is not a regular file"));
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&index)?;
        let len = file.metadata()?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            file.read_exact_at(&mut last, len - 1)?;
            if last[0] != b'\n' {
                text.insert(0, '\n');
            }
        }
        // One write call: appends of a line this short are not interleaved.
        file.write_all(text.as_bytes())?;
        if sync { file.sync_all() } else { Ok(()) }
    }

    /// The saved bytes before write `id`.
    fn read_prev(&self, id: &str, rel: &str) -> Result<Vec<u8>, FileError> {
        let prev = self.dir.join(format!("{id}.prev"));
        let missing = || FileError::VersionStore {
            detail: format!(
                "the saved version {id} of {rel} is missing from {}; it cannot be restored — recover the file from git or a backup",
                self.shown(&self.dir)
            ),
        };
        match fs::symlink_metadata(&prev) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(missing()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing()),
            Err(e) => return Err(self.io_error(&prev, e)),
        }
        fs::read(&prev).map_err(|e| self.io_error(&prev, e))
    }

    /// Creates `.nib/` (with a `.gitignore` of `*`) and `.nib/versions/`
    /// (with its own), refusing symlinks: a workspace comes from anyone,
    /// and a planted `.nib` link must not send nib's writes elsewhere.
    fn ensure_dirs(&self) -> Result<(), FileError> {
        let nib = self.root.join(".nib");
        if self.ensure_dir(&nib)? {
            self.ensure_gitignore(&nib)?;
        }
        self.ensure_dir(&self.dir)?;
        self.ensure_gitignore(&self.dir)
    }

    /// Makes sure `dir` is a real directory; true when it was just created.
    fn ensure_dir(&self, dir: &Path) -> Result<bool, FileError> {
        match fs::symlink_metadata(dir) {
            Ok(meta) if meta.is_dir() => Ok(false),
            Ok(_) => Err(FileError::VersionStore {
                detail: format!(
                    "{} is not a directory (or is a symlink); nib keeps versions only in a real directory — move it aside and retry",
                    self.shown(dir)
                ),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(dir) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.ensure_dir(dir),
                Err(e) => Err(self.io_error(dir, e)),
            },
            Err(e) => Err(self.io_error(dir, e)),
        }
    }

    fn ensure_gitignore(&self, dir: &Path) -> Result<(), FileError> {
        let path = dir.join(".gitignore");
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&path)
        {
            Ok(mut f) => f.write_all(b"*\n").map_err(|e| self.io_error(&path, e)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(self.io_error(&path, e)),
        }
    }

    fn io_error(&self, path: &Path, e: io::Error) -> FileError {
        if is_disk_full(&e) {
            return FileError::DiskFull {
                path: self.shown(path),
            };
        }
        FileError::VersionStore {
            detail: format!(
                "could not use {}: {e}; fix its permissions (or move .nib/versions aside) and retry",
                self.shown(path)
            ),
        }
    }

    fn shown(&self, p: &Path) -> String {
        p.strip_prefix(&self.root)
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| p.display().to_string())
    }
}

/// Whether `path` is the same inode as the open `file`.
fn same_file(path: &Path, file: &File) -> bool {
    match (fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The number of a well-formed id (ASCII digits only; anything else in the
/// index is ignored, so it can never name a file outside the store).
fn id_number(id: &str) -> Option<u64> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{read_bytes, read_text};
    use std::os::unix::fs::PermissionsExt;

    fn setup() -> (tempfile::TempDir, Workspace, Versions) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let versions = Versions::new(&ws);
        (dir, ws, versions)
    }

    /// Writes `text` to `path` the way the prims will: read, record, write.
    fn nib_write(ws: &Workspace, versions: &Versions, path: &str, text: &str) -> VersionId {
        let r = ws.resolve(path).unwrap();
        let previous = read_bytes(&r).unwrap();
        versions
            .write(&r, previous.as_deref(), text.as_bytes())
            .unwrap()
    }

    fn content(ws: &Workspace, path: &str) -> String {
        read_text(&ws.resolve(path).unwrap()).unwrap().text
    }

    #[test]
    fn record_creates_store_and_index() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        let id = versions.record("a.txt", Some(b"v0"), b"v1").unwrap();
        assert_eq!(id.as_str(), "000001");
        let id2 = versions.record("b.txt", None, b"new").unwrap();
        assert_eq!(id2.to_string(), "000002");
        let nib = ws.root().join(".nib");
        assert_eq!(fs::read_to_string(nib.join(".gitignore")).unwrap(), "*\n");
        assert_eq!(fs::read(nib.join("versions/000001.prev")).unwrap(), b"v0");
        let index = fs::read_to_string(nib.join("versions/index.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = index
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["id"], "000001");
        assert_eq!(lines[0]["path"], "a.txt");
        assert_eq!(lines[0]["existed"], true);
        assert_eq!(lines[0]["written_hash"], content_hash(b"v1"));
        assert!(lines[0]["t"].as_u64().unwrap() > 1_600_000_000);
        assert_eq!(lines[1]["existed"], false);
    }

    #[test]
    fn existing_nib_dir_gets_no_top_gitignore_but_store_is_ignored() {
        let (_dir, ws, versions) = setup();
        fs::create_dir(ws.root().join(".nib")).unwrap();
        fs::write(ws.root().join(".nib/config.toml"), "").unwrap();
        versions.record("a.txt", None, b"x").unwrap();
        assert!(!ws.root().join(".nib/.gitignore").exists());
        assert_eq!(
            fs::read_to_string(ws.root().join(".nib/versions/.gitignore")).unwrap(),
            "*\n"
        );
    }

    #[test]
    fn symlinked_store_is_refused() {
        let (dir, ws, versions) = setup();
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, ws.root().join(".nib")).unwrap();
        let err = versions.record("a.txt", None, b"x").unwrap_err();
        assert!(matches!(err, FileError::VersionStore { .. }), "{err:?}");
        assert!(fs::read_dir(&elsewhere).unwrap().next().is_none());
    }

    #[test]
    fn undo_round_trip_restores_previous() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "before\n").unwrap();
        let id = nib_write(&ws, &versions, "a.txt", "after\n");
        assert_eq!(content(&ws, "a.txt"), "after\n");
        let undone = versions.undo(&ws, None, false).unwrap();
        assert_eq!(
            undone,
            Undone {
                id,
                path: "a.txt".into(),
                restored: true,
                also: Vec::new(),
            }
        );
        assert_eq!(content(&ws, "a.txt"), "before\n");
        let err = versions.undo(&ws, None, false).unwrap_err();
        assert!(matches!(err, FileError::NothingToUndo { path: None }));
        assert!(err.to_string().starts_with("nothing to undo"));
    }

    #[test]
    fn undo_of_created_file_deletes_it() {
        let (_dir, ws, versions) = setup();
        nib_write(&ws, &versions, "new/file.txt", "hello\n");
        assert!(ws.root().join("new/file.txt").exists());
        let undone = versions.undo(&ws, Some("new/file.txt"), false).unwrap();
        assert!(!undone.restored);
        assert_eq!(undone.path, "new/file.txt");
        assert!(!ws.root().join("new/file.txt").exists());
    }

    #[test]
    fn undo_refuses_when_changed_and_force_restores() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        nib_write(&ws, &versions, "a.txt", "v1");
        fs::write(ws.root().join("a.txt"), "user edit").unwrap();
        let err = versions.undo(&ws, None, false).unwrap_err();
        assert!(matches!(
            err,
            FileError::ChangedSinceWrite { deleted: false, .. }
        ));
        assert_eq!(
            err.to_string(),
            "a.txt changed since nib wrote it; undo would lose those changes — pass --force to restore anyway"
        );
        assert_eq!(content(&ws, "a.txt"), "user edit");
        let undone = versions.undo(&ws, None, true).unwrap();
        assert!(undone.restored);
        assert_eq!(content(&ws, "a.txt"), "v0");
    }

    #[test]
    fn undo_refuses_when_deleted_since() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        nib_write(&ws, &versions, "a.txt", "v1");
        fs::remove_file(ws.root().join("a.txt")).unwrap();
        let err = versions.undo(&ws, None, false).unwrap_err();
        assert!(matches!(
            err,
            FileError::ChangedSinceWrite { deleted: true, .. }
        ));
        versions.undo(&ws, None, true).unwrap();
        assert_eq!(content(&ws, "a.txt"), "v0");
    }

    #[test]
    fn undo_twice_walks_back_two_writes() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        nib_write(&ws, &versions, "a.txt", "v1");
        nib_write(&ws, &versions, "a.txt", "v2");
        assert_eq!(
            versions.undo(&ws, None, false).unwrap().id.as_str(),
            "000002"
        );
        assert_eq!(content(&ws, "a.txt"), "v1");
        assert_eq!(
            versions.undo(&ws, None, false).unwrap().id.as_str(),
            "000001"
        );
        assert_eq!(content(&ws, "a.txt"), "v0");
        assert!(matches!(
            versions.undo(&ws, None, false),
            Err(FileError::NothingToUndo { .. })
        ));
    }

    #[test]
    fn undo_by_path_skips_other_files() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "a0").unwrap();
        fs::write(ws.root().join("b.txt"), "b0").unwrap();
        nib_write(&ws, &versions, "a.txt", "a1");
        nib_write(&ws, &versions, "b.txt", "b1");
        let undone = versions.undo(&ws, Some("./a.txt"), false).unwrap();
        assert_eq!(undone.path, "a.txt");
        assert_eq!(content(&ws, "a.txt"), "a0");
        assert_eq!(content(&ws, "b.txt"), "b1");
        let err = versions.undo(&ws, Some("a.txt"), false).unwrap_err();
        assert!(matches!(err, FileError::NothingToUndo { path: Some(ref p) } if p == "a.txt"));
        assert!(err.to_string().contains("a.txt"));
        let undone = versions.undo(&ws, None, false).unwrap();
        assert_eq!(undone.path, "b.txt");
        assert!(matches!(
            versions.undo(&ws, Some("../escape"), false),
            Err(FileError::OutsideWorkspace { .. })
        ));
    }

    #[test]
    fn truncated_last_index_line_is_tolerated() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        nib_write(&ws, &versions, "a.txt", "v1");
        // A crash in the middle of appending the next line.
        let index = versions.dir().join(INDEX);
        let mut f = OpenOptions::new().append(true).open(&index).unwrap();
        f.write_all(br#"{"id":"000002","path":"a.t"#).unwrap();
        drop(f);
        fs::write(versions.dir().join("000002.prev"), "v1").unwrap();
        // Another write after the crash must not merge with the fragment.
        nib_write(&ws, &versions, "a.txt", "v2");
        let text = fs::read_to_string(&index).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert_eq!(
            versions.undo(&ws, None, false).unwrap().id.as_str(),
            "000003"
        );
        assert_eq!(content(&ws, "a.txt"), "v1");
        // Truncated again, now after the undo line.
        let mut f = OpenOptions::new().append(true).open(&index).unwrap();
        f.write_all(br#"{"undone":"0000"#).unwrap();
        drop(f);
        assert_eq!(
            versions.undo(&ws, None, false).unwrap().id.as_str(),
            "000001"
        );
        assert_eq!(content(&ws, "a.txt"), "v0");
    }

    #[test]
    fn failed_write_is_dropped_not_undone() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        nib_write(&ws, &versions, "a.txt", "v1");
        fs::write(ws.root().join("ro.txt"), "keep").unwrap();
        fs::set_permissions(ws.root().join("ro.txt"), fs::Permissions::from_mode(0o444)).unwrap();
        let r = ws.resolve("ro.txt").unwrap();
        let err = versions.write(&r, Some(b"keep"), b"new").unwrap_err();
        assert!(matches!(err, FileError::ReadOnly { .. }));
        // The newest undoable write is still a.txt's.
        let undone = versions.undo(&ws, None, false).unwrap();
        assert_eq!(undone.path, "a.txt");
    }

    #[test]
    fn planted_ids_cannot_escape_the_store() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        nib_write(&ws, &versions, "a.txt", "v1");
        let index = versions.dir().join(INDEX);
        let mut f = OpenOptions::new().append(true).open(&index).unwrap();
        let evil = format!(
            "{{\"id\":\"../../x\",\"path\":\"a.txt\",\"existed\":true,\"t\":0,\"written_hash\":{}}}\n",
            content_hash_v1(b"v1")
        );
        f.write_all(evil.as_bytes()).unwrap();
        drop(f);
        let undone = versions.undo(&ws, None, false).unwrap();
        assert_eq!(undone.id.as_str(), "000001");
        assert_eq!(content(&ws, "a.txt"), "v0");
    }

    #[test]
    fn a_store_from_before_hashing_2_still_undoes() {
        // Lines an older nib wrote: no `hashing`, v1 hashes.
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v1").unwrap();
        versions.ensure_dirs().unwrap();
        fs::write(versions.dir().join("000001.prev"), "v0").unwrap();
        fs::write(versions.dir().join("000002.prev"), "v1").unwrap();
        let line = |id: &str, prev: &[u8], written: &[u8]| {
            format!(
                "{{\"id\":\"{id}\",\"path\":\"a.txt\",\"existed\":true,\"t\":0,\"written_hash\":{},\"prev_hash\":{}}}\n",
                content_hash_v1(written),
                content_hash_v1(prev)
            )
        };
        // 000002 was killed before its rename (the file still holds v1).
        let index = line("000001", b"v0", b"v1") + &line("000002", b"v1", b"v2");
        fs::write(versions.dir().join(INDEX), index).unwrap();
        let undone = versions.undo(&ws, None, false).unwrap();
        assert_eq!(undone.id.as_str(), "000001");
        assert_eq!(content(&ws, "a.txt"), "v0");
        // A line of a hashing this build does not know is never taken for
        // unchanged.
        fs::write(ws.root().join("b.txt"), "w1").unwrap();
        fs::write(versions.dir().join("000003.prev"), "w0").unwrap();
        let future = format!(
            "{{\"id\":\"000003\",\"path\":\"b.txt\",\"existed\":true,\"t\":0,\"written_hash\":{},\"prev_hash\":1,\"hashing\":9}}\n",
            content_hash(b"w1")
        );
        let mut f = OpenOptions::new()
            .append(true)
            .open(versions.dir().join(INDEX))
            .unwrap();
        f.write_all(future.as_bytes()).unwrap();
        drop(f);
        let err = versions.undo(&ws, Some("b.txt"), false).unwrap_err();
        assert!(
            matches!(err, FileError::ChangedSinceWrite { .. }),
            "{err:?}"
        );
        assert_eq!(content(&ws, "b.txt"), "w1");
    }

    #[test]
    fn write_killed_before_its_rename_is_skipped_by_undo() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        nib_write(&ws, &versions, "a.txt", "v1");
        // Killed after the index line, before the rename: the file still
        // holds v1.
        versions.record("a.txt", Some(b"v1"), b"v2").unwrap();
        assert_eq!(content(&ws, "a.txt"), "v1");
        // Not "changed since nib wrote it": the chained undo goes to v0.
        let undone = versions.undo(&ws, None, false).unwrap();
        assert_eq!(undone.id.as_str(), "000001");
        assert_eq!(content(&ws, "a.txt"), "v0");
        // A create killed before its rename leaves no file: skipped too.
        versions.record("new.txt", None, b"n").unwrap();
        assert!(matches!(
            versions.undo(&ws, None, false),
            Err(FileError::NothingToUndo { .. })
        ));
    }

    #[test]
    fn write_over_a_changed_file_writes_nothing_and_is_not_undone() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "v0").unwrap();
        nib_write(&ws, &versions, "a.txt", "v1");
        let r = ws.resolve("a.txt").unwrap();
        fs::write(ws.root().join("a.txt"), "v1+theirs").unwrap();
        let err = versions.write(&r, Some(b"v1"), b"v2").unwrap_err();
        assert!(matches!(err, FileError::ChangedOnDisk { .. }), "{err:?}");
        assert_eq!(content(&ws, "a.txt"), "v1+theirs");
        // The newest undoable write is still the first, and the outside
        // change makes undo ask for --force.
        assert!(matches!(
            versions.undo(&ws, None, false),
            Err(FileError::ChangedSinceWrite { .. })
        ));
    }
    #[test]
    fn a_cut_off_patch_is_rolled_back_or_completed_at_the_next_start() {
        let (_dir, ws, versions) = setup();
        fs::write(ws.root().join("a.txt"), "a0").unwrap();
        fs::write(ws.root().join("b.txt"), "b0").unwrap();
        let write = |store: &Versions, rel: &str, prev: &[u8], new: &[u8]| {
            store
                .write(&ws.resolve(rel).unwrap(), Some(prev), new)
                .unwrap();
        };
        let finals: [(&str, Option<&[u8]>); 2] = [("a.txt", Some(b"a1")), ("b.txt", Some(b"b1"))];
        // Killed after the first file: the journal stays, nobody holds it.
        let patch = versions.begin_patch(&finals).unwrap();
        write(patch.store(), "a.txt", b"a0", b"a1");
        // While the patch runs, recovery leaves it alone.
        assert!(versions.recover(&ws).is_empty());
        drop(patch);
        let notes = versions.recover(&ws);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("rolled back: restored a.txt"),
            "{notes:?}"
        );
        assert_eq!(content(&ws, "a.txt"), "a0");
        assert_eq!(content(&ws, "b.txt"), "b0");
        assert!(versions.recover(&ws).is_empty());
        assert!(matches!(
            versions.undo(&ws, None, false),
            Err(FileError::NothingToUndo { .. })
        ));
        // Killed after the last file, before the journal went: completed,
        // and one undo takes the whole patch back.
        let patch = versions.begin_patch(&finals).unwrap();
        write(patch.store(), "a.txt", b"a0", b"a1");
        write(patch.store(), "b.txt", b"b0", b"b1");
        drop(patch);
        let notes = versions.recover(&ws);
        assert!(notes[0].contains("completed"), "{notes:?}");
        assert_eq!(content(&ws, "a.txt"), "a1");
        let undone = versions.undo(&ws, Some("a.txt"), false).unwrap();
        assert_eq!(undone.also.len(), 1, "{undone:?}");
        assert_eq!(content(&ws, "a.txt"), "a0");
        assert_eq!(content(&ws, "b.txt"), "b0");
        assert!(
            fs::read_dir(versions.dir().join("patches"))
                .unwrap()
                .next()
                .is_none()
        );
    }
}
