//! Text edit formats: what models without reliable tool calls write in
//! their replies, parsed into per-file operations for the same engine.
//!
//! Each parser is pure (text in, operations or a precise error out) and
//! knows nothing of files: `search_replace` (Aider-style SEARCH/REPLACE
//! blocks), `udiff` (unified diffs) and `v4a` (the `*** Begin Patch`
//! format). Applying the operations, with the engine's matching rules, one
//! confirm per file and every file validated before any is written, is the
//! caller's job.

pub mod apply;
pub mod search_replace;
pub mod udiff;
pub mod v4a;
pub mod whole;

use std::fmt;

/// One SEARCH/REPLACE block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub path: String,
    /// Empty: create the file, or append to it.
    pub search: String,
    pub replace: String,
}

/// One hunk of a unified diff: its lines with their prefix (' ', '-', '+')
/// and newline, and the line numbers its header states (hints only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffHunk {
    pub old_start: Option<usize>,
    pub new_start: Option<usize>,
    /// The body lines, each with its one-character prefix and its newline.
    pub lines: Vec<String>,
    /// Where the header's counts disagree with the body, what was noticed.
    pub notes: Vec<String>,
}

/// One file of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffFile {
    /// `None` for `/dev/null` (a created or deleted file).
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    pub hunks: Vec<DiffHunk>,
}

/// One chunk of a V4A update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The `@@ anchor` line, if any.
    pub context: Option<String>,
    pub old_lines: Vec<String>,
    pub new_lines: Vec<String>,
    /// `*** End of File`: the chunk is at the end of the file.
    pub eof: bool,
}

/// One operation of a V4A patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    Add {
        path: String,
        contents: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

/// Text that does not parse in a format: where, and what to send instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// 1-based line of the input where the problem is, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for FormatError {}

/// A line as quoted in a message: at most 60 characters.
pub(crate) fn snippet(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// A parse error at a 1-based line.
pub(crate) fn error(line: usize, message: String) -> FormatError {
    FormatError {
        line: Some(line),
        message,
    }
}
