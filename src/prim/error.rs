//! `ToolError`: why a primitive failed, as a case the host acts on (a
//! write whose file changed on disk is planned again; a stopped command is
//! told apart from one that failed) and a message the model reads.
//!
//! The messages are a contract with the model: lower-case, naming the path
//! or argument, saying what to do next. The file and edit layers keep
//! their own errors (`FileError`, `EditError`); a tool failure wraps them
//! and renders them unchanged. `kind()` is the stable name the event log
//! and `nib stats` count (`ToolResult::kind`).

use std::fmt;
use std::io;

use super::parse::ArgError;
use crate::edit::EditError;
use crate::files::FileError;
use crate::files::git::GitError;

/// Why a primitive failed.
#[derive(Debug)]
pub enum ToolError {
    /// The call does not fit its declaration (from the model's JSON).
    Args(ArgError),
    /// The model asked for a tool that does not exist.
    UnknownTool {
        name: String,
        known: Vec<&'static str>,
    },
    /// An argument the primitive cannot use: an empty or invalid pattern,
    /// glob or command. The message names the argument and the fix.
    BadArgument(String),
    /// A workspace file could not be resolved, read or written.
    File(FileError),
    /// fs-edit's edits did not apply to the file.
    Edit(EditError),
    /// Nothing is at the path a listing or search was given.
    NotFound { path: String },
    /// A directory was needed and the path names a file; `next` says
    /// which tool reads it instead.
    NotADirectory { path: String, next: &'static str },
    /// An IO error on a path other than the cases above.
    Io { path: String, source: io::Error },
    /// A file named alone cannot be searched (binary, too large, not
    /// UTF-8, not a regular file); `why` finishes the sentence.
    NotSearchable { path: String, why: &'static str },
    /// outline does not know the file's language.
    UnknownLanguage {
        path: String,
        supported: &'static str,
    },
    /// A whole read of a file too large for one.
    TooBig { path: String, bytes: u64 },
    /// fs-write would replace a file this session has not read.
    Unread { path: String },
    /// The file changed since this session read it.
    Stale { path: String },
    /// The file changed on disk while the write's confirm was open.
    ChangedWhileConfirming { path: String },
    /// The workspace is not inside a git work tree.
    NotARepository,
    /// git could not be run at all.
    GitUnavailable(GitError),
    /// git ran and refused: `what` is the subcommand (or "could not open
    /// the repository"), `message` git's stderr on one line.
    Git { what: GitStep, message: String },
    /// The command ran past its time limit, or the run's, and was stopped;
    /// the message says which, with the output so far.
    TimedOut(String),
    /// The user stopped the command (Esc); the message has the output so
    /// far.
    Interrupted(String),
    /// The system would not start the command (no pipe, no `sh`): "could
    /// not {what}: {source}; {next}".
    CannotStart {
        what: &'static str,
        source: io::Error,
        next: &'static str,
    },
    /// Not the model's doing: a defect in nib.
    Bug(String),
}

/// Which git step failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitStep {
    /// Opening the repository (unsafe ownership, a broken repository).
    Open,
    /// A subcommand (`status`, `diff`, `log`, ...).
    Command(String),
}

impl ToolError {
    /// The stable name of the cause, for the event log and stats. File and
    /// edit errors keep the names they had before there was this type.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::Args(_) | ToolError::BadArgument(_) => "invalid",
            ToolError::UnknownTool { .. } => "unknown_tool",
            ToolError::File(e) => file_kind(e),
            ToolError::Edit(e) => e.kind.as_str(),
            ToolError::NotFound { .. } => "missing",
            ToolError::NotADirectory { .. } => "not_a_directory",
            ToolError::Io { .. } | ToolError::CannotStart { .. } => "io",
            ToolError::NotSearchable { .. } => "not_text",
            ToolError::UnknownLanguage { .. } => "unsupported",
            ToolError::TooBig { .. } => "too_big",
            ToolError::Unread { .. } => "unread",
            ToolError::Stale { .. } | ToolError::ChangedWhileConfirming { .. } => "stale",
            ToolError::NotARepository => "not_a_repo",
            ToolError::GitUnavailable(_) | ToolError::Git { .. } => "git",
            ToolError::TimedOut(_) => "timed_out",
            ToolError::Interrupted(_) => "interrupted",
            ToolError::Bug(_) => "bug",
        }
    }

    /// A write whose file changed on disk between plan and rename: the
    /// host plans it again on the current text.
    pub fn changed_on_disk(&self) -> bool {
        matches!(self, ToolError::File(FileError::ChangedOnDisk { .. }))
    }
}

/// The names `FileError`s were counted under.
fn file_kind(e: &FileError) -> &'static str {
    match e {
        FileError::EmptyPath | FileError::BadPath { .. } | FileError::OutsideWorkspace { .. } => {
            "path"
        }
        FileError::NotFound { .. } => "missing",
        FileError::IsDirectory { .. } | FileError::NotRegular { .. } => "not_a_file",
        FileError::Binary { .. } => "not_text",
        FileError::Unrepresentable { .. } => "unrepresentable",
        FileError::ReadOnly { .. } => "read_only",
        FileError::ChangedOnDisk { .. } => "changed",
        FileError::DiskFull { .. } => "disk_full",
        _ => "io",
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Args(e) => e.fmt(f),
            ToolError::UnknownTool { name, known } => write!(
                f,
                "there is no tool `{name}`; the tools are {}",
                known.join(", ")
            ),
            ToolError::BadArgument(message) | ToolError::Bug(message) => f.write_str(message),
            ToolError::TimedOut(message) | ToolError::Interrupted(message) => f.write_str(message),
            ToolError::File(e) => e.fmt(f),
            ToolError::Edit(e) => e.fmt(f),
            ToolError::NotFound { path } => write!(
                f,
                "no such file or directory: {path}; use fs-list on its parent directory (or fs-find) to see what is there"
            ),
            ToolError::NotADirectory { path, next } => {
                write!(f, "{path} is a file, not a directory; {next}")
            }
            ToolError::Io { path, source } => write!(
                f,
                "could not read {path}: {source}; check that it exists and is accessible, then retry"
            ),
            ToolError::NotSearchable { path, why } => write!(f, "{path} {why}"),
            ToolError::UnknownLanguage { path, supported } => write!(
                f,
                "outline does not know the language of {path}; it supports {supported}. Use fs-read or index-grep for this file"
            ),
            ToolError::TooBig { path, bytes } => write!(
                f,
                "{path} is {:.1} MB, more than a whole read allows (1 MB); read it in pages, \
                 e.g. (fs-read \"{path}\" 1 2000), or find what you need with index-grep",
                *bytes as f64 / 1e6
            ),
            ToolError::Unread { path } => write!(
                f,
                "{path} exists and this session has not read it; read it first (fs-read) \
                 so you replace what is there knowingly, or change part of it with fs-edit"
            ),
            ToolError::Stale { path } => write!(
                f,
                "{path} changed since you read it; read it again (fs-read) before replacing it"
            ),
            ToolError::ChangedWhileConfirming { path } => write!(
                f,
                "{path} changed on disk while the confirm was open; nothing was written; read it again"
            ),
            ToolError::NotARepository => f.write_str(
                "the workspace is not a git repository; git-status, git-diff and git-log need one (use fs-list and index-grep to look around instead)",
            ),
            ToolError::GitUnavailable(e) => e.fmt(f),
            ToolError::Git {
                what: GitStep::Open,
                message,
            } => write!(f, "git could not open the repository: {message}"),
            ToolError::Git {
                what: GitStep::Command(sub),
                message,
            } => write!(f, "git {sub} failed: {message}"),
            ToolError::CannotStart { what, source, next } => {
                write!(f, "could not {what}: {source}; {next}")
            }
        }
    }
}

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ToolError::File(e) => Some(e),
            ToolError::Edit(e) => Some(e),
            ToolError::Args(e) => Some(e),
            ToolError::GitUnavailable(e) => Some(e),
            ToolError::Io { source, .. } | ToolError::CannotStart { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<FileError> for ToolError {
    fn from(e: FileError) -> ToolError {
        ToolError::File(e)
    }
}

impl From<EditError> for ToolError {
    fn from(e: EditError) -> ToolError {
        ToolError::Edit(e)
    }
}

impl From<ArgError> for ToolError {
    fn from(e: ArgError) -> ToolError {
        ToolError::Args(e)
    }
}

impl From<GitError> for ToolError {
    fn from(e: GitError) -> ToolError {
        ToolError::GitUnavailable(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_errors_keep_their_message_and_kind() {
        let e = ToolError::from(FileError::NotFound {
            path: "a.rs".into(),
        });
        assert_eq!(e.kind(), "missing");
        assert_eq!(
            e.to_string(),
            "no such file: a.rs; to create it use fs-write"
        );
        let e = ToolError::from(FileError::ChangedOnDisk {
            path: "a.rs".into(),
        });
        assert!(e.changed_on_disk());
        assert_eq!(e.kind(), "changed");
    }

    #[test]
    fn messages_name_the_path_and_the_next_step() {
        let e = ToolError::NotADirectory {
            path: "src/main.rs".into(),
            next: "use fs-read to read it",
        };
        assert_eq!(
            e.to_string(),
            "src/main.rs is a file, not a directory; use fs-read to read it"
        );
        let e = ToolError::Git {
            what: GitStep::Command("log".into()),
            message: "bad revision".into(),
        };
        assert_eq!(e.to_string(), "git log failed: bad revision");
        assert_eq!(e.kind(), "git");
        let e = ToolError::TooBig {
            path: "big.log".into(),
            bytes: 2_500_000,
        };
        assert!(e.to_string().starts_with("big.log is 2.5 MB, more than"));
    }
}
