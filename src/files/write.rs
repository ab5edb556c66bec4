//! Atomic writes: the new content goes to a temp file in the same directory,
//! is synced, takes the original's permissions (and owner, where allowed),
//! and is renamed over the target, so a reader sees the old file or the new
//! one and never half of either. On any failure the target is unchanged.

use std::ffi::OsString;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{FileError, Resolved};

/// Distinguishes temp files of one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Longest slice of the target's file name kept in the temp name, so the
/// temp name stays under NAME_MAX (255) for long file names.
const TEMP_NAME_KEEP: usize = 200;

/// Writes `bytes` to the resolved file, atomically. Errors name the file by
/// its workspace-relative path.
pub fn write_resolved(file: &Resolved, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic_shown(&file.real, &file.rel, bytes)
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
    write_atomic_shown(real, &real.display().to_string(), bytes)
}

fn write_atomic_shown(real: &Path, shown: &str, bytes: &[u8]) -> Result<(), FileError> {
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
    match replace_via_temp(real, parent, name.as_bytes(), bytes, existing.as_ref()) {
        Ok(()) => {
            // The rename is done; syncing the directory makes it durable.
            // Some file systems refuse fsync on a directory; the write has
            // still happened, so that is not reported as a failure.
            if let Ok(dir) = File::open(parent) {
                let _ = dir.sync_all();
            }
            Ok(())
        }
        Err(source) => {
            // Leave no trace: directories made for this file go too (only
            // while empty, so nothing else is lost).
            for dir in &created {
                let _ = fs::remove_dir(dir);
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
/// removed on any failure.
fn replace_via_temp(
    real: &Path,
    parent: &Path,
    name: &[u8],
    bytes: &[u8],
    existing: Option<&Metadata>,
) -> io::Result<()> {
    let (temp, file) = create_temp(parent, name)?;
    let result = fill_temp(file, bytes, existing).and_then(|()| fs::rename(&temp, real));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
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

fn fill_temp(mut file: File, bytes: &[u8], existing: Option<&Metadata>) -> io::Result<()> {
    file.write_all(bytes)?;
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
        assert!(replace_via_temp(&blocker, dir.path(), b"blocker", b"new", None).is_err());
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
}
