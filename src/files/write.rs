//! Atomic writes: the new content goes to a temp file in the same directory,
//! is synced, takes the original's permissions (and owner, where allowed),
//! and is renamed over the target, so a reader sees the old file or the new
//! one and never half of either. On any failure the target is unchanged.
//!
//! `write_checked` also refuses to rename over content the caller has not
//! seen: right before the rename it compares the file with what the caller
//! planned from, and right after it looks at the replaced inode again, so a
//! change that landed in between is put back instead of lost.
//! Temp files a killed write left behind (`.<name>.nib-tmp-<pid>-<n>`) are
//! found by `is_temp_name` and removed by `clean_stale_temps`.

use std::ffi::OsString;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::compare::holds;
use super::{FileError, Resolved, Stamp};

/// Distinguishes temp files of one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Longest slice of the target's file name kept in the temp name, so the
/// temp name stays under NAME_MAX (255) for long file names.
const TEMP_NAME_KEEP: usize = 200;

/// Writes `bytes` to the resolved file, atomically. Errors name the file by
/// its workspace-relative path.
pub fn write_resolved(file: &Resolved, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic_shown(&file.real, &file.rel, &[bytes], None, &mut |_| Ok(()))
}

/// What the file must hold for `write_checked` to replace it.
#[derive(Debug, Clone, Copy)]
pub enum Expect<'a> {
    /// Nothing is there (a new file).
    Absent,
    /// Exactly these bytes.
    Bytes(&'a [u8]),
    /// Exactly these bytes, read from the file with this stamp: found with
    /// the same stamp right before the rename, the file is taken to hold
    /// them without reading it (see `Stamp`).
    Read(&'a [u8], Stamp),
}

impl<'a> Expect<'a> {
    /// The bytes expected (None: no file).
    pub fn bytes(self) -> Option<&'a [u8]> {
        match self {
            Expect::Absent => None,
            Expect::Bytes(b) | Expect::Read(b, _) => Some(b),
        }
    }
}

/// `write_resolved`, but only over `expected`: if the file holds anything
/// else right before the rename, nothing is written and the error is
/// `ChangedOnDisk`. A change that reaches the replaced file between that
/// check and the rename (an open writer) is noticed afterwards: the file
/// is put back to what it then held and the error is `ChangedOnDisk` too.
/// Callers re-plan on the current text.
pub fn write_checked(file: &Resolved, expected: Expect<'_>, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic_shown(&file.real, &file.rel, &[bytes], Some(expected), &mut |_| {
        Ok(())
    })
}

/// Runs right after the check, right before the rename, with the file
/// about to be replaced (None for a new file): the versions store records
/// the write there, so the slow steps (writing and syncing the temp file)
/// stay out of the time between check and rename.
pub(crate) type BeforeRename<'h> = dyn FnMut(Option<&File>) -> io::Result<()> + 'h;

/// New content as parts written one after another (an edit's kept spans
/// of the file as read and its new text), never joined into one buffer: a
/// large file is then not held twice. One part is plain bytes.
pub type Parts<'a> = &'a [&'a [u8]];

/// `write_checked` with a step between the check and the rename; an error
/// from that step is a failed write (nothing renamed). The new content is
/// `parts`, one after another.
pub(crate) fn write_checked_then(
    file: &Resolved,
    expected: Expect<'_>,
    parts: Parts<'_>,
    before_rename: &mut BeforeRename<'_>,
) -> Result<(), FileError> {
    write_atomic_shown(&file.real, &file.rel, parts, Some(expected), before_rename)
}

/// Writes `bytes` to `real` atomically: a temp file
/// `.<name>.nib-tmp-<pid>-<n>` in the same directory is written, synced,
/// given the original's permissions, and renamed over `real`; then the
/// directory is synced. A new file gets mode 0o666 minus the umask, and its
/// missing parent directories are created.
///
/// `real` must be the resolved target (`Resolved::real`): writing "through a
/// symlink" means passing the link's target here; a symlink at `real` is
/// refused rather than replaced by a regular file.
///
/// The rename gives the file a new inode. A file with other hard links is
/// therefore split from them: the other names keep the old content. This is
/// deliberate: nib never writes through a hard link, since the other name
/// may be outside the workspace and the guard judged only this one.
///
/// An existing file without the owner write bit is refused (`ReadOnly`).
pub fn write_atomic(real: &Path, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic_shown(
        real,
        &real.display().to_string(),
        &[bytes],
        None,
        &mut |_| Ok(()),
    )
}

fn write_atomic_shown(
    real: &Path,
    shown: &str,
    bytes: Parts<'_>,
    expected: Option<Expect<'_>>,
    before_rename: &mut BeforeRename<'_>,
) -> Result<(), FileError> {
    let (Some(name), Some(parent)) = (real.file_name(), real.parent()) else {
        return Err(FileError::BadPath {
            given: shown.to_string(),
            detail: "names no file; give the path of a file to write".to_string(),
        });
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let existing = match fs::symlink_metadata(real) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            return Err(FileError::BadPath {
                given: shown.to_string(),
                detail: "a part of it is a file, not a directory; give a path whose directories are directories".to_string(),
            });
        }
        Err(e) => {
            return Err(FileError::WriteFailed {
                path: shown.to_string(),
                source: e,
            });
        }
    };
    if let Some(meta) = &existing {
        let path = || shown.to_string();
        if meta.file_type().is_symlink() {
            return Err(FileError::Symlink { path: path() });
        }
        if meta.is_dir() {
            return Err(FileError::IsDirectory { path: path() });
        }
        if !meta.is_file() {
            return Err(FileError::NotRegular { path: path() });
        }
        if meta.permissions().mode() & 0o200 == 0 {
            return Err(FileError::ReadOnly { path: path() });
        }
    }
    let created = if existing.is_none() {
        create_parents(parent).map_err(|source| FileError::WriteFailed {
            path: shown.to_string(),
            source,
        })?
    } else {
        Vec::new()
    };
    if let (Some(Expect::Absent), Some(_)) = (expected, &existing) {
        return Err(FileError::ChangedOnDisk {
            path: shown.to_string(),
        });
    }
    match replace_via_temp(
        real,
        parent,
        name.as_bytes(),
        bytes,
        existing.as_ref(),
        expected,
        before_rename,
    ) {
        Ok(()) => {
            // The rename is done; syncing the directory makes it durable
            // (a checked replace did so already, before its second look).
            // Some file systems refuse fsync on a directory; the write has
            // still happened, so that is not reported as a failure.
            let synced = matches!(expected, Some(Expect::Bytes(_) | Expect::Read(..)));
            if !synced && let Ok(dir) = File::open(parent) {
                let _ = dir.sync_all();
            }
            Ok(())
        }
        Err(source) if source.kind() == io::ErrorKind::WouldBlock => {
            for dir in &created {
                let _ = fs::remove_dir(dir);
            }
            Err(FileError::ChangedOnDisk {
                path: shown.to_string(),
            })
        }
        Err(source) => {
            // Leave no trace: directories made for this file go too (only
            // while empty, so nothing else is lost).
            for dir in &created {
                let _ = fs::remove_dir(dir);
            }
            if is_disk_full(&source) {
                return Err(FileError::DiskFull {
                    path: shown.to_string(),
                });
            }
            Err(FileError::WriteFailed {
                path: shown.to_string(),
                source,
            })
        }
    }
}

/// Creates the missing ancestors of a new file. Returns the directories it
/// created, deepest first, so a failed write can remove them again.
fn create_parents(parent: &Path) -> io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut cur = Some(parent);
    while let Some(dir) = cur {
        if dir.as_os_str().is_empty() {
            break;
        }
        match fs::symlink_metadata(dir) {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(dir.to_path_buf()),
            Err(e) => return Err(e),
        }
        cur = dir.parent();
    }
    if !missing.is_empty() {
        fs::create_dir_all(parent)?;
    }
    Ok(missing)
}

/// Writes the temp file and renames it over `real`. The temp file is
/// removed on any failure. With `expected`, the rename happens only over
/// that content; otherwise the error is `WouldBlock` (a signal to the
/// caller, never shown).
fn replace_via_temp(
    real: &Path,
    parent: &Path,
    name: &[u8],
    bytes: Parts<'_>,
    existing: Option<&Metadata>,
    expected: Option<Expect<'_>>,
    before_rename: &mut BeforeRename<'_>,
) -> io::Result<()> {
    let (temp, file) = create_temp(parent, name)?;
    let result = fill_temp(file, bytes, existing).and_then(|()| match expected {
        None => before_rename(None).and_then(|()| fs::rename(&temp, real)),
        Some(Expect::Absent) => create_no_replace(&temp, real, before_rename),
        Some(Expect::Bytes(want)) => {
            rename_over_expected(&temp, real, &[want], None, bytes, before_rename, true)
        }
        Some(Expect::Read(want, stamp)) => rename_over_expected(
            &temp,
            real,
            &[want],
            Some(stamp),
            bytes,
            before_rename,
            true,
        ),
    });
    // After a hard-link create, the temp name is still there.
    let _ = fs::remove_file(&temp);
    result
}

/// Whether an IO error means the disk (or the quota) is full.
pub(crate) fn is_disk_full(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
        || e.kind() == io::ErrorKind::StorageFull
        || e.kind() == io::ErrorKind::QuotaExceeded
}

fn changed() -> io::Error {
    io::Error::new(io::ErrorKind::WouldBlock, "changed on disk")
}

/// A new file: a hard link never replaces an existing name, so a file
/// someone else created meanwhile is kept. File systems without hard links
/// get a check and a rename.
fn create_no_replace(
    temp: &Path,
    real: &Path,
    before_rename: &mut BeforeRename<'_>,
) -> io::Result<()> {
    if fs::symlink_metadata(real).is_ok() {
        return Err(changed());
    }
    before_rename(None)?;
    match fs::hard_link(temp, real) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(changed()),
        Err(_) => match fs::symlink_metadata(real) {
            Ok(_) => Err(changed()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => fs::rename(temp, real),
            Err(e) => Err(e),
        },
    }
}

/// Renames `temp` over `real` only if `real` holds `want` right before
/// (taken as held without reading when `real` still has the read's
/// `stamp`). The replaced inode stays open: if it does not hold `want`
/// after the rename (a writer that had it open, or one that wrote within
/// the read's clock tick), its content is put back over the new file and
/// the write counts as not done.
fn rename_over_expected(
    temp: &Path,
    real: &Path,
    want: Parts<'_>,
    stamp: Option<Stamp>,
    written: Parts<'_>,
    before_rename: &mut BeforeRename<'_>,
    restore: bool,
) -> io::Result<()> {
    let mut old = match File::open(real) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(changed()),
        Err(e) => return Err(e),
    };
    let unchanged = stamp.is_some_and(|s| old.metadata().is_ok_and(|m| Stamp::of(&m) == s));
    if !unchanged && !holds(&mut old, want)? {
        return Err(changed());
    }
    let checked = written_stamp(&old.metadata()?);
    before_rename(Some(&old))?;
    // A last look, right before the rename: recording the version took a
    // while, and an appender that wrote meanwhile moved the file's size and
    // modification time (or another file took the path). Then the caller
    // plans again rather than relying on the look after the rename. (Not
    // the change time: the version's hard link moves that.)
    if written_stamp(&old.metadata()?) != checked
        || written_stamp(&fs::symlink_metadata(real)?) != checked
    {
        return Err(changed());
    }
    fs::rename(temp, real)?;
    // A writer that opened the file just before the rename may write to
    // the replaced inode just after it: syncing the directory first (done
    // anyway) gives such a write time to land where the look below sees it.
    if let Ok(dir) = File::open(real.parent().unwrap_or(Path::new("."))) {
        let _ = dir.sync_all();
    }
    if holds(&mut old, want)? {
        return Ok(());
    }

    if !restore {
        return Err(changed());
    }
    // Too late for the check: the change went into the replaced file. Put
    // that content back, under the same rule (only over what was just
    // written), so nothing the other writer wrote is lost; the write
    // counts as not done.
    let mut late = Vec::new();
    {
        use std::io::{Read, Seek};
        old.rewind()?;
        old.read_to_end(&mut late)?;
    }
    let meta = old.metadata()?;
    let parent = real.parent().unwrap_or(Path::new("."));
    let name = real.file_name().map(OsStrExt::as_bytes).unwrap_or(b"file");
    let (back, file) = create_temp(parent, name)?;
    let late: &[u8] = &late;
    let restored = fill_temp(file, &[late], Some(&meta)).and_then(|()| {
        rename_over_expected(&back, real, written, None, &[late], &mut |_| Ok(()), false)
    });
    let _ = fs::remove_file(&back);
    match restored {
        // Put back: as if this write had not happened.
        Ok(()) => Err(changed()),
        // What was written changed too before it could be put back: the
        // write stays done (it is what the file is built on now).
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
        Err(e) => Err(e),
    }
}

/// What a write to a file moves: which file it is, its size and its
/// modification time.
fn written_stamp(meta: &Metadata) -> (u64, u64, u64, i64, i64) {
    (
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
    )
}

/// Deletes `file` only if it holds `want` right before (the delete's
/// version of `write_checked_then`). `before_remove` runs between the check
/// and the unlink with the file open (the versions store keeps its content
/// from there). A writer that had the file open and changed it after the
/// check is noticed afterwards: its content is put back at the path (only
/// if nothing was created there meanwhile) and the delete counts as not
/// done (`ChangedOnDisk`).
pub(crate) fn remove_checked_then(
    file: &Resolved,
    want: &[u8],
    before_remove: &mut BeforeRename<'_>,
) -> Result<(), FileError> {
    let fail = |source: io::Error| {
        if source.kind() == io::ErrorKind::WouldBlock {
            FileError::ChangedOnDisk {
                path: file.rel.clone(),
            }
        } else {
            FileError::Io {
                action: "delete",
                path: file.rel.clone(),
                source,
            }
        }
    };
    let real = &file.real;
    match fs::symlink_metadata(real) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(FileError::Symlink {
                path: file.rel.clone(),
            });
        }
        Ok(meta) if meta.is_dir() => {
            return Err(FileError::IsDirectory {
                path: file.rel.clone(),
            });
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(fail(changed())),
        Err(e) => return Err(fail(e)),
    }
    let mut old = File::open(real).map_err(|e| {
        fail(if e.kind() == io::ErrorKind::NotFound {
            changed()
        } else {
            e
        })
    })?;
    if !holds(&mut old, &[want]).map_err(fail)? {
        return Err(fail(changed()));
    }
    before_remove(Some(&old)).map_err(fail)?;
    fs::remove_file(real).map_err(fail)?;
    let parent = real.parent().unwrap_or(Path::new("."));
    if let Ok(dir) = File::open(parent) {
        let _ = dir.sync_all();
    }
    if holds(&mut old, &[want]).map_err(fail)? {
        return Ok(());
    }
    // Changed after the check, through a descriptor opened before it: put
    // that content back so nothing the other writer wrote is lost.
    let mut late = Vec::new();
    {
        use std::io::{Read, Seek};
        old.rewind().map_err(fail)?;
        old.read_to_end(&mut late).map_err(fail)?;
    }
    let meta = old.metadata().map_err(fail)?;
    let name = real.file_name().map(OsStrExt::as_bytes).unwrap_or(b"file");
    let (back, temp) = create_temp(parent, name).map_err(fail)?;
    let restored = fill_temp(temp, &[&late], Some(&meta))
        .and_then(|()| create_no_replace(&back, real, &mut |_| Ok(())));
    let _ = fs::remove_file(&back);
    match restored {
        // Put back, or someone made a new file there meanwhile (theirs is
        // kept): either way the delete did not happen as planned.
        Ok(()) => Err(fail(changed())),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(fail(changed())),
        Err(e) => Err(fail(e)),
    }
}

/// Whether `name` is one of nib's temp file names
/// (`.<name>.nib-tmp-<pid>-<n>`): listings hide them.
pub fn is_temp_name(name: &[u8]) -> bool {
    temp_pid(name).is_some()
}

/// The pid in a temp file name.
fn temp_pid(name: &[u8]) -> Option<u32> {
    let marker = b".nib-tmp-";
    if name.first() != Some(&b'.') {
        return None;
    }
    let at = memchr::memmem::rfind(name, marker)?;
    let rest = std::str::from_utf8(&name[at + marker.len()..]).ok()?;
    let (pid, n) = rest.split_once('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` is alive (a temp file of a live nib may be in use).
pub(crate) fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes temp files left by killed nib writes directly in `dir` (not
/// below it); those of live processes are kept. Returns how many went.
pub fn clean_stale_temps_in(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if entry.file_type().is_ok_and(|t| t.is_file())
            && temp_pid(name.as_bytes()).is_some_and(|pid| !alive(pid))
            && fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Removes temp files left by killed nib writes under `root` (honouring
/// ignore files, never entering `.git/` or `.nib/`); those of live
/// processes are kept. Returns how many were removed.
pub fn clean_stale_temps(root: &Path) -> usize {
    let mut removed = 0;
    let walk = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.depth() == 0 || (e.file_name() != ".git" && e.file_name() != ".nib"))
        .build();
    for entry in walk.flatten() {
        let name = entry.file_name().as_bytes();
        if entry.file_type().is_some_and(|t| t.is_file())
            && temp_pid(name).is_some_and(|pid| !alive(pid))
            && fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Creates a fresh temp file beside the target. Mode 0o666 so a new file
/// ends up with exactly what the umask allows, as if created directly.
fn create_temp(parent: &Path, name: &[u8]) -> io::Result<(PathBuf, File)> {
    let keep = &name[..name.len().min(TEMP_NAME_KEEP)];
    let pid = std::process::id();
    let mut attempts = 0;
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = Vec::with_capacity(keep.len() + 40);
        temp_name.push(b'.');
        temp_name.extend_from_slice(keep);
        temp_name.extend_from_slice(format!(".nib-tmp-{pid}-{n}").as_bytes());
        let temp = parent.join(OsString::from_vec(temp_name));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&temp)
        {
            Ok(file) => return Ok((temp, file)),
            // A leftover from an earlier process with the same pid.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => attempts += 1,
            Err(e) => return Err(e),
        }
    }
}

fn fill_temp(mut file: File, bytes: Parts<'_>, existing: Option<&Metadata>) -> io::Result<()> {
    write_streaming(&mut file, bytes)?;
    if let Some(meta) = existing {
        // Keep the owner when allowed (root editing someone's file); an
        // ordinary user cannot give files away, and that is fine. Done
        // before chmod, since chown may clear set-id bits.
        let mine = file.metadata()?;
        if mine.uid() != meta.uid() || mine.gid() != meta.gid() {
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
        }
        file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
    }
    file.sync_all()
}

/// Writes `parts` to the new file, one after another, in blocks of about
/// 256 KiB each one vectored write (a call of 100 edits is 200 parts: a
/// write each cost more than the bytes); a large file's blocks are each
/// handed to the disk as soon as written (`sync_file_range`, not waiting),
/// so the fsync after has little left to wait for (10 MB written and
/// synced: 3 ms instead of 5.5). Durability is the fsync's.
fn write_streaming(file: &mut File, parts: Parts<'_>) -> io::Result<()> {
    const BLOCK: usize = 256 * 1024;
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let stream = len > 4 * BLOCK;
    let (mut written, mut synced) = (0, 0);
    // The parts cut into pieces of at most a block, gathered a block at a
    // time.
    let mut pieces = parts
        .iter()
        .flat_map(|p| p.chunks(BLOCK))
        .filter(|c| !c.is_empty())
        .peekable();
    let mut block: Vec<io::IoSlice<'_>> = Vec::new();
    while pieces.peek().is_some() {
        block.clear();
        let mut size = 0;
        while let Some(piece) = pieces.next_if(|p| size == 0 || size + p.len() <= BLOCK) {
            size += piece.len();
            block.push(io::IoSlice::new(piece));
        }
        write_all_vectored(file, &mut block)?;
        written += size;
        if stream && written - synced >= BLOCK {
            start_writeback(file, synced, written - synced);
            synced = written;
        }
    }
    if stream && written > synced {
        start_writeback(file, synced, written - synced);
    }
    Ok(())
}

/// Writes every byte of `slices`, resuming after a short write.
fn write_all_vectored(file: &mut File, mut slices: &mut [io::IoSlice<'_>]) -> io::Result<()> {
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => io::IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: usize, len: usize) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: a plain system call on a descriptor this function borrows;
    // no memory is passed. Its result is advice only: an error (a file
    // system without it) leaves the fsync to do all the work.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::Workspace;
    use std::os::unix::fs::symlink;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    /// The mode a file created with 0o666 gets under the current umask.
    fn umask_mode(dir: &Path) -> u32 {
        let probe = dir.join("umask-probe");
        drop(
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o666)
                .open(&probe)
                .unwrap(),
        );
        let m = mode(&probe);
        fs::remove_file(&probe).unwrap();
        m
    }

    #[test]
    fn replaces_content_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("run.sh");
        fs::write(&script, "#!/bin/sh\necho old\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&script, b"#!/bin/sh\necho new\n").unwrap();
        assert_eq!(fs::read(&script).unwrap(), b"#!/bin/sh\necho new\n");
        assert_eq!(mode(&script), 0o755);
        assert_eq!(entries(dir.path()), vec!["run.sh"]);

        let private = dir.path().join("p.txt");
        fs::write(&private, "x").unwrap();
        fs::set_permissions(&private, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&private, b"y").unwrap();
        assert_eq!(mode(&private), 0o600);
    }

    #[test]
    fn new_file_honours_umask_and_creates_parents() {
        let dir = tempfile::tempdir().unwrap();
        let expected = umask_mode(dir.path());
        let target = dir.path().join("a/b/new.txt");
        write_atomic(&target, b"hello\n").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"hello\n");
        assert_eq!(mode(&target), expected);
        assert_eq!(expected, 0o666 & expected); // sanity: no bits beyond 0o666
        assert_eq!(entries(&dir.path().join("a/b")), vec!["new.txt"]);
    }

    #[test]
    fn writes_through_symlink_target_leaving_link() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        fs::create_dir(ws.root().join("real")).unwrap();
        fs::write(ws.root().join("real/t.txt"), "old").unwrap();
        symlink("real/t.txt", ws.root().join("link.txt")).unwrap();
        let r = ws.resolve("link.txt").unwrap();
        write_resolved(&r, b"new").unwrap();
        let link_meta = fs::symlink_metadata(ws.root().join("link.txt")).unwrap();
        assert!(link_meta.file_type().is_symlink());
        assert_eq!(fs::read(ws.root().join("real/t.txt")).unwrap(), b"new");
        assert_eq!(fs::read(ws.root().join("link.txt")).unwrap(), b"new");
        // Handing the link itself is refused instead of replacing the link.
        let err = write_atomic(&ws.root().join("link.txt"), b"x").unwrap_err();
        assert!(matches!(err, FileError::Symlink { .. }), "{err:?}");
        assert!(link_meta.file_type().is_symlink());
    }

    #[test]
    fn read_only_is_refused_and_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let path = ws.root().join("ro.txt");
        fs::write(&path, "keep").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
        let err = write_resolved(&ws.resolve("ro.txt").unwrap(), b"changed").unwrap_err();
        assert!(matches!(err, FileError::ReadOnly { .. }));
        assert_eq!(
            err.to_string(),
            "ro.txt is read-only; nib leaves files you made read-only alone — make it writable (chmod u+w) and retry"
        );
        assert_eq!(fs::read(&path).unwrap(), b"keep");
        assert_eq!(mode(&path), 0o444);
        assert_eq!(entries(dir.path()), vec!["ro.txt"]);
    }

    #[test]
    fn hard_link_is_split_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        fs::write(&a, "shared").unwrap();
        fs::hard_link(&a, &b).unwrap();
        write_atomic(&a, b"mine").unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"mine");
        assert_eq!(fs::read(&b).unwrap(), b"shared");
        assert_eq!(fs::metadata(&b).unwrap().nlink(), 1);
    }

    #[test]
    fn directory_target_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(matches!(err, FileError::IsDirectory { .. }), "{err:?}");
    }

    #[test]
    fn file_as_parent_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), "x").unwrap();
        let err = write_atomic(&dir.path().join("f/g/new.txt"), b"x").unwrap_err();
        assert!(matches!(err, FileError::BadPath { .. }), "{err:?}");
        assert_eq!(entries(dir.path()), vec!["f"]);
    }

    #[test]
    fn failed_rename_removes_temp() {
        let dir = tempfile::tempdir().unwrap();
        // Renaming a file over a non-empty directory fails after the temp
        // file was written and synced.
        let blocker = dir.path().join("blocker");
        fs::create_dir(&blocker).unwrap();
        fs::write(blocker.join("inside"), "x").unwrap();
        assert!(
            replace_via_temp(
                &blocker,
                dir.path(),
                b"blocker",
                &[b"new"],
                None,
                None,
                &mut |_| Ok(())
            )
            .is_err()
        );
        assert_eq!(entries(dir.path()), vec!["blocker"]);
        assert_eq!(entries(&blocker), vec!["inside"]);
    }

    #[test]
    fn failed_new_file_removes_created_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base");
        fs::create_dir(&base).unwrap();
        // The target name is too long for the file system, so creating the
        // temp file fails after the parents were made.
        let long = "x".repeat(300);
        let target = base.join("new/dir").join(&long);
        let err = write_atomic(&target, b"x").unwrap_err();
        assert!(matches!(err, FileError::WriteFailed { .. }), "{err:?}");
        assert!(err.to_string().contains("the file is unchanged"));
        assert!(entries(&base).is_empty(), "{:?}", entries(&base));
    }

    #[test]
    fn long_names_get_a_short_enough_temp() {
        let dir = tempfile::tempdir().unwrap();
        let name = "n".repeat(250);
        let target = dir.path().join(&name);
        write_atomic(&target, b"ok").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"ok");
        assert_eq!(entries(dir.path()), vec![name]);
    }

    #[test]
    fn checked_write_refuses_content_it_did_not_plan_from() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        fs::write(ws.root().join("a.txt"), "planned\n").unwrap();
        let r = ws.resolve("a.txt").unwrap();
        // Someone appends after the plan read "planned\n".
        fs::write(ws.root().join("a.txt"), "planned\nappended\n").unwrap();
        let err = write_checked(&r, Expect::Bytes(b"planned\n"), b"mine\n").unwrap_err();
        assert!(matches!(err, FileError::ChangedOnDisk { .. }), "{err:?}");
        assert!(err.to_string().contains("read it again"), "{err}");
        assert_eq!(fs::read(&r.real).unwrap(), b"planned\nappended\n");
        assert_eq!(entries(dir.path()), vec!["a.txt"]);
        // Same size, other bytes: still refused.
        let err = write_checked(&r, Expect::Bytes(b"planned\nAPPENDED\n"), b"x").unwrap_err();
        assert!(matches!(err, FileError::ChangedOnDisk { .. }), "{err:?}");
        write_checked(&r, Expect::Bytes(b"planned\nappended\n"), b"mine\n").unwrap();
        assert_eq!(fs::read(&r.real).unwrap(), b"mine\n");
    }

    #[test]
    fn a_large_file_written_in_blocks_is_byte_exact() {
        // Over the block size and not a multiple of it, so the last block
        // is short; with permissions kept, as for any replaced file.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.bin");
        fs::write(&path, b"old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let bytes: Vec<u8> = (0..(5 * 256 * 1024 + 777) as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        write_atomic(&path, &bytes).unwrap();
        assert_eq!(fs::read(&path).unwrap(), bytes);
        assert_eq!(mode(&path), 0o640);
        assert_eq!(entries(dir.path()), vec!["big.bin"]);
    }

    #[test]
    fn parts_are_written_and_compared_as_one_content() {
        // Parts of every size around the block size, empty ones included:
        // what a large file's edit streams (kept spans and new text).
        let bytes: Vec<u8> = (0..(6 * 256 * 1024 + 333) as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        let cuts = [
            0,
            1,
            5,
            5,
            256 * 1024 - 1,
            256 * 1024 + 7,
            900_000,
            1_500_000,
        ];
        let mut parts: Vec<&[u8]> = Vec::new();
        let mut from = 0;
        for c in cuts {
            parts.push(&bytes[from..c]);
            from = c;
        }
        // 3,000 parts of a few bytes: more than one vectored write takes.
        for _ in 0..3_000 {
            parts.push(&bytes[from..from + 3]);
            from += 3;
        }
        parts.push(&bytes[from..]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("parts.bin");
        let mut file = File::create(&path).unwrap();
        write_streaming(&mut file, &parts).unwrap();
        drop(file);
        assert_eq!(fs::read(&path).unwrap(), bytes);
        let mut file = File::open(&path).unwrap();
        assert!(holds(&mut file, &parts).unwrap());
        assert!(holds(&mut file, &[&bytes]).unwrap());
        // One byte other, or one byte short: not what was planned.
        let mut other = bytes.clone();
        other[1_000_000] ^= 1;
        assert!(!holds(&mut file, &[&other[..700_000], &other[700_000..]]).unwrap());
        assert!(!holds(&mut file, &[&bytes[..bytes.len() - 1]]).unwrap());
    }

    #[test]
    fn a_read_stamp_skips_the_first_look_but_never_the_second() {
        use crate::files::read_text;
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let r = ws.resolve("a.txt").unwrap();
        fs::write(&r.real, "planned\n").unwrap();
        // nib's write over what a read saw.
        let mine = |read: &crate::files::TextFile| {
            write_checked(
                &r,
                Expect::Read(read.text.as_bytes(), read.stamp),
                b"mine\n",
            )
        };
        let read = read_text(&r).unwrap();
        // The stamp still holds: written without reading the file first.
        mine(&read).unwrap();
        assert_eq!(fs::read(&r.real).unwrap(), b"mine\n");

        // A writer changed the file in place within the read's clock tick:
        // the stamp cannot tell (here: taken after that change), so the
        // look after the rename finds it and puts the writer's bytes back.
        fs::write(&r.real, "planned\n").unwrap();
        let planned = read_text(&r).unwrap().text;
        fs::OpenOptions::new()
            .write(true)
            .open(&r.real)
            .unwrap()
            .write_all(b"PLANNED\n")
            .unwrap();
        let same_tick = Stamp::of(&fs::metadata(&r.real).unwrap());
        let err =
            write_checked(&r, Expect::Read(planned.as_bytes(), same_tick), b"mine\n").unwrap_err();
        assert!(matches!(err, FileError::ChangedOnDisk { .. }), "{err:?}");
        assert_eq!(fs::read(&r.real).unwrap(), b"PLANNED\n");
        assert_eq!(entries(dir.path()), vec!["a.txt"]);

        // Another file renamed over the path: a new stamp, so the bytes
        // decide, before anything is renamed.
        let read = read_text(&r).unwrap();
        let other = dir.path().join("other");
        fs::write(&other, "theirs\n").unwrap();
        fs::rename(&other, &r.real).unwrap();
        let err = mine(&read).unwrap_err();
        assert!(matches!(err, FileError::ChangedOnDisk { .. }), "{err:?}");
        assert_eq!(fs::read(&r.real).unwrap(), b"theirs\n");
        // The same bytes under a new inode are what was planned from.
        let read = read_text(&r).unwrap();
        fs::write(&other, "theirs\n").unwrap();
        fs::rename(&other, &r.real).unwrap();
        mine(&read).unwrap();
        assert_eq!(fs::read(&r.real).unwrap(), b"mine\n");
    }

    #[test]
    fn checked_create_keeps_a_file_made_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let r = ws.resolve("new.txt").unwrap();
        fs::write(&r.real, "theirs").unwrap();
        let err = write_checked(&r, Expect::Absent, b"mine").unwrap_err();
        assert!(matches!(err, FileError::ChangedOnDisk { .. }), "{err:?}");
        assert_eq!(fs::read(&r.real).unwrap(), b"theirs");
        let r = ws.resolve("other.txt").unwrap();
        write_checked(&r, Expect::Absent, b"mine").unwrap();
        assert_eq!(fs::read(&r.real).unwrap(), b"mine");
        assert_eq!(entries(dir.path()), vec!["new.txt", "other.txt"]);
    }

    #[test]
    fn temp_names_are_recognised_and_stale_ones_cleaned() {
        assert!(is_temp_name(b".a.txt.nib-tmp-123-0"));
        assert!(is_temp_name(b".x.nib-tmp-1.nib-tmp-77-12"));
        assert!(!is_temp_name(b"a.txt.nib-tmp-123-0"));
        assert!(!is_temp_name(b".a.txt.nib-tmp-123-"));
        assert!(!is_temp_name(b".a.txt"));
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        // A pid above any real one (pid_max is at most 2^22) is dead.
        let dead = dir.path().join("sub/.a.rs.nib-tmp-99999999-3");
        let live = dir
            .path()
            .join(format!(".b.rs.nib-tmp-{}-0", std::process::id()));
        fs::write(&dead, "half").unwrap();
        fs::write(&live, "in use").unwrap();
        fs::write(dir.path().join("keep.rs"), "x").unwrap();
        assert_eq!(clean_stale_temps_in(dir.path()), 0);
        assert_eq!(clean_stale_temps(dir.path()), 1);
        assert!(!dead.exists());
        assert!(live.exists());
        assert!(dir.path().join("keep.rs").exists());
    }

    #[test]
    fn full_disk_says_so() {
        let e = io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(is_disk_full(&e));
        let shown = FileError::DiskFull {
            path: "a.txt".into(),
        }
        .to_string();
        assert!(
            shown.contains("disk is full") && !shown.contains("permissions"),
            "{shown}"
        );
    }
}
