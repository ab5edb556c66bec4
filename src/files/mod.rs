//! Workspace IO: everything nib does to the files it works on goes through
//! here. This module owns pinning and resolving paths (`Workspace`,
//! `Resolved`), reading text files (`read_text`, `content_hash`) in the
//! encoding their bytes are in (`Encoding`: decoded without loss, new
//! text encoded back or refused), atomic
//! writes that keep permissions (`write_atomic`), and the versions store
//! under `.nib/versions/` that lets `nib undo` restore the last write
//! (`Versions`; several files written as one patch, `Patch`, with
//! recovery of a patch a kill cut off), and running git hardened against
//! the repository it runs in (`git`). The error type for all of it but git is `FileError`.
//!
//! The pure edit logic (matching, splicing, text formats) lives in `edit/`
//! and never touches the file system; this module never interprets text.

mod compare;
mod encoding;
pub mod git;
pub mod home;
mod quarantine;
mod read;
mod resolve;
mod versions;
mod write;

use std::fmt;
use std::io;
use std::path::PathBuf;

pub use encoding::{Encoding, Unrepresentable};
pub use quarantine::{QUARANTINE, quarantine};
pub use read::{Stamp, TextFile, content_hash, content_hash_v1, encode_for, read_bytes, read_text};
pub use resolve::{Resolved, Workspace};
pub use versions::{FileLock, Patch, RolledBack, Undone, VersionId, Versions};
pub use write::{
    Expect, Parts, clean_stale_temps, clean_stale_temps_in, is_temp_name, write_atomic,
    write_checked, write_resolved,
};

/// Everything that can go wrong doing IO on the workspace. Each message is
/// lower-case, names the path, and says what to do next.
#[derive(Debug)]
pub enum FileError {
    /// `Workspace::open` was given a root that does not exist.
    RootNotFound { root: PathBuf },
    /// `Workspace::open` was given a root that is not a directory.
    RootNotDirectory { root: PathBuf },
    /// An empty (or all-blank) path was given.
    EmptyPath,
    /// The path cannot be resolved as given (NUL byte, a file used as a
    /// directory, a symlink loop, a name that is not UTF-8, ...).
    BadPath { given: String, detail: String },
    /// The path resolves (after following symlinks and folding `..`) to a
    /// place outside the workspace root.
    OutsideWorkspace {
        given: String,
        real: PathBuf,
        root: PathBuf,
    },
    /// The file does not exist.
    NotFound { path: String },
    /// The path names a directory where a file was expected.
    IsDirectory { path: String },
    /// The path names a fifo, socket or device.
    NotRegular { path: String },
    /// A NUL byte in the first 8000 bytes (`utf16`: the file starts with
    /// a UTF-16 byte order mark).
    Binary {
        path: String,
        offset: usize,
        utf16: bool,
    },
    /// Text to write holds a character the file's encoding cannot hold.
    Unrepresentable {
        path: String,
        detail: Unrepresentable,
    },
    /// The existing file has no owner write bit; nib leaves it alone.
    ReadOnly { path: String },
    /// `write_atomic` was handed a symlink instead of its resolved target.
    Symlink { path: String },
    /// An IO error other than the ones above, while reading or resolving.
    Io {
        action: &'static str,
        path: String,
        source: io::Error,
    },
    /// Writing failed; the target is unchanged.
    WriteFailed { path: String, source: io::Error },
    /// The file no longer holds what the write was planned from (someone
    /// changed it meanwhile); nothing was written. Re-plan on the current
    /// text.
    ChangedOnDisk { path: String },
    /// The disk (or the user's quota) is full.
    DiskFull { path: String },
    /// `undo` found no write left to undo (for that path, when given).
    NothingToUndo { path: Option<String> },
    /// `undo` found the file changed (or deleted) since nib wrote it.
    ChangedSinceWrite { path: String, deleted: bool },
    /// The versions store under `.nib/versions/` is unusable.
    VersionStore { detail: String },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::RootNotFound { root } => write!(
                f,
                "workspace root {} does not exist; pass an existing directory as the workspace root",
                root.display()
            ),
            FileError::RootNotDirectory { root } => write!(
                f,
                "workspace root {} is not a directory; pass the project directory as the workspace root",
                root.display()
            ),
            FileError::EmptyPath => write!(
                f,
                "empty path; give a path relative to the workspace root, e.g. src/main.rs"
            ),
            FileError::BadPath { given, detail } => write!(f, "path `{given}`: {detail}"),
            FileError::OutsideWorkspace { given, real, root } => write!(
                f,
                "path `{given}` resolves to {}, outside the workspace {}; only files under the workspace can be read or changed",
                real.display(),
                root.display()
            ),
            FileError::NotFound { path } => {
                write!(f, "no such file: {path}; to create it use fs-write")
            }
            FileError::IsDirectory { path } => write!(
                f,
                "{path} is a directory, not a file; use fs-list to see what it contains"
            ),
            FileError::NotRegular { path } => write!(
                f,
                "{path} is not a regular file (a fifo, socket or device); nib reads and edits regular files only"
            ),
            FileError::Binary {
                path,
                offset,
                utf16: false,
            } => write!(
                f,
                "{path} looks binary (NUL byte at offset {offset}); nib edits text files only (UTF-8, Latin-1, Windows-1252), not files with NUL bytes — change it with a tool made for its format"
            ),
            FileError::Binary {
                path,
                offset,
                utf16: true,
            } => write!(
                f,
                "{path} is UTF-16 (it starts with a UTF-16 byte order mark; NUL byte at offset {offset}); nib edits text without NUL bytes only — convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)"
            ),
            FileError::Unrepresentable { path, detail } => write!(
                f,
                "{path} is read as {}, not UTF-8, and {detail}; nothing was written — write that character another way (in ASCII, or as an escape the file's language reads, like \\u{{{:04x}}}), or convert the file to UTF-8 first (iconv -f {} -t UTF-8)",
                detail.encoding.name(),
                u32::from(detail.ch),
                detail.encoding.iconv_name()
            ),
            FileError::ReadOnly { path } => write!(
                f,
                "{path} is read-only; nib leaves files you made read-only alone — make it writable (chmod u+w) and retry"
            ),
            FileError::Symlink { path } => write!(
                f,
                "{path} is a symbolic link; resolve the path through the workspace and write to its target"
            ),
            FileError::Io {
                action,
                path,
                source,
            } => write!(
                f,
                "could not {action} {path}: {source}; check that it exists and is accessible, then retry"
            ),
            FileError::WriteFailed { path, source } => write!(
                f,
                "could not write {path}: {source}; the file is unchanged — fix the cause and retry"
            ),
            FileError::ChangedOnDisk { path } => write!(
                f,
                "{path} changed on disk after nib read it (another program or nib process wrote it); nothing was written — read it again and redo the change on the current text"
            ),
            FileError::DiskFull { path } => write!(
                f,
                "could not write {path}: the disk is full (or the quota is used up); the file is unchanged — free some space and retry"
            ),
            FileError::NothingToUndo { path: Some(path) } => write!(
                f,
                "nothing to undo for {path}: nib has no write of it left to undo; check the path, or run undo without one"
            ),
            FileError::NothingToUndo { path: None } => write!(
                f,
                "nothing to undo: every write nib recorded in this workspace is already undone (or none was made)"
            ),
            FileError::ChangedSinceWrite {
                path,
                deleted: false,
            } => write!(
                f,
                "{path} changed since nib wrote it; undo would lose those changes — pass --force to restore anyway"
            ),
            FileError::ChangedSinceWrite {
                path,
                deleted: true,
            } => write!(
                f,
                "{path} was deleted since nib wrote it; pass --force to restore the version before nib's write anyway"
            ),
            FileError::VersionStore { detail } => write!(f, "versions store: {detail}"),
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { source, .. } | FileError::WriteFailed { source, .. } => Some(source),
            _ => None,
        }
    }
}
