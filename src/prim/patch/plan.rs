//! Planning a text's edits in memory, and writing them: shared by `nib
//! apply --format` and `Host::apply_text`.
//!
//! Every file is resolved, read and given its new content and diff before
//! anything is written; if any file fails, every file is reported (the
//! failing ones with the reason, the others as not written because of
//! them). Writing is `commit.rs`'s.

use std::borrow::Cow;
use std::collections::HashMap;

use super::TextFormat;
use crate::edit::formats::apply::{ChangeKind, FileChange, from_blocks, from_udiff, from_v4a};
use crate::edit::formats::search_replace::{self, Item, ParseOptions};
use crate::edit::formats::{FormatError, udiff, v4a, whole};
use crate::edit::{self, Diff, Hinted};
use crate::files::{Encoding, FileError, Resolved, Workspace, encode_for, read_text};

/// Why one file (or, with an empty path, the whole text) was not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFailure {
    /// Workspace-relative, or as the text wrote it when it does not
    /// resolve; empty when the whole text failed to parse.
    pub path: String,
    /// A stable name for logs and stats: `parse`, `path`, `read`, `write`,
    /// `exists`, `elided`, `invalid`, `not_written`, `refused`, or the edit
    /// engine's kind (`not_found`, `ambiguous`, ...).
    pub kind: &'static str,
    /// What happened and what to do, for a person or a model.
    pub message: String,
}

impl FileFailure {
    pub(crate) fn new(path: String, kind: &'static str, message: String) -> FileFailure {
        FileFailure {
            path,
            kind,
            message,
        }
    }
}

/// One file's change, computed and not yet written.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The file the change reads (the source of a move).
    pub file: Resolved,
    /// Its content now; None when it does not exist yet.
    pub before: Option<String>,
    /// What it holds afterwards (for a move: what the destination holds);
    /// None: deleted.
    pub after: Option<String>,
    /// A move's destination, with what it holds now (None: nothing).
    pub to: Option<(Resolved, Option<String>)>,
    /// The encoding `before` was read in and `after` is written in (the
    /// file's; UTF-8 for a new file; a move takes its bytes along).
    pub encoding: Encoding,
    /// The encoding a move's destination was read in.
    pub dest_encoding: Encoding,
    pub diff: Diff,
    /// What the engine noticed (a tolerant match, a dropped blank line).
    pub notes: Vec<String>,
    /// How many edits the text gave for the file.
    pub edits: usize,
}

/// Whether a summary says what was done or what would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tense {
    Done,
    /// A dry run.
    Would,
}

impl Plan {
    /// Where the result lives: a move's destination, else the file.
    pub fn target(&self) -> &str {
        match &self.to {
            Some((dest, _)) => &dest.rel,
            None => &self.file.rel,
        }
    }

    /// The change as a unified diff, headed by [`Plan::target`].
    pub fn unified_diff(&self) -> String {
        self.diff.unified(self.target())
    }

    /// What the file holds now, as bytes (None: no file).
    pub fn before_bytes(&self) -> Result<Option<Cow<'_, [u8]>>, FileError> {
        let rel = &self.file.rel;
        (self.before.as_deref())
            .map(|t| encode_for(rel, self.encoding, t))
            .transpose()
    }

    /// What the target holds afterwards, as bytes (None: deleted). A
    /// character the encoding cannot hold was refused when planning.
    pub fn after_bytes(&self) -> Result<Option<Cow<'_, [u8]>>, FileError> {
        (self.after.as_deref())
            .map(|t| encode_for(self.target(), self.encoding, t))
            .transpose()
    }

    /// What a move's destination holds now, as bytes (None: nothing).
    pub fn dest_before_bytes(&self) -> Result<Option<Cow<'_, [u8]>>, FileError> {
        match &self.to {
            Some((dest, Some(text))) => encode_for(&dest.rel, self.dest_encoding, text).map(Some),
            _ => Ok(None),
        }
    }

    /// An existing file the change leaves as it is.
    pub fn changes_nothing(&self) -> bool {
        self.to.is_none() && self.before.is_some() && self.before == self.after
    }

    /// One line: "applied 2 edits to a.rs (+3 -1)", "created b.rs (+4)", ...
    pub fn summary(&self, tense: Tense) -> String {
        let (added, removed) = self.diff.stats();
        let verb = |did: &str, would: &str| match tense {
            Tense::Done => did.to_string(),
            Tense::Would => would.to_string(),
        };
        let rel = &self.file.rel;
        match (&self.to, &self.before, &self.after) {
            (Some((dest, _)), _, _) => format!(
                "{} {rel} to {} with {} (+{added} -{removed})",
                verb("moved", "would move"),
                dest.rel,
                count(self.edits, "edit")
            ),
            (None, None, _) => format!("{} {rel} (+{added})", verb("created", "would create")),
            (None, Some(_), None) => {
                format!("{} {rel} (-{removed})", verb("deleted", "would delete"))
            }
            (None, Some(_), Some(_)) => format!(
                "{} {} to {rel} (+{added} -{removed})",
                verb("applied", "would apply"),
                count(self.edits, "edit")
            ),
        }
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// A text's per-file changes. `known_files` are the names a SEARCH/REPLACE
/// block's file name may resolve to (the files "in the chat"). A text that
/// does not parse, or holds no edits, is one failure with an empty path.
pub fn parse_changes(
    ws: &Workspace,
    format: TextFormat,
    text: &str,
    known_files: &[String],
) -> Result<Vec<FileChange>, FileFailure> {
    match parse_format(ws, format, text, known_files) {
        Ok(c) if c.is_empty() => Err(FileFailure::new(
            String::new(),
            "parse",
            format!(
                "the input holds no {} edits; nothing was written",
                format.noun()
            ),
        )),
        Ok(c) => Ok(c),
        Err(e) => Err(FileFailure::new(
            String::new(),
            "parse",
            format!(
                "the input is not a valid {}, so nothing was written: {e}",
                format.noun()
            ),
        )),
    }
}

fn parse_format(
    ws: &Workspace,
    format: TextFormat,
    text: &str,
    known_files: &[String],
) -> Result<Vec<FileChange>, FormatError> {
    match format {
        TextFormat::SearchReplace => {
            let opts = ParseOptions {
                valid_fnames: known_files.to_vec(),
                ..ParseOptions::default()
            };
            let blocks: Vec<_> = search_replace::parse(text, &opts)?
                .into_iter()
                .filter_map(|item| match item {
                    Item::Block(b) => Some(b),
                    Item::Shell(_) => None,
                })
                .collect();
            let exists = |p: &str| ws.resolve(p).is_ok_and(|r| r.exists);
            from_blocks(&blocks, &exists)
        }
        TextFormat::Udiff => from_udiff(&udiff::parse(text)?),
        TextFormat::V4a => Ok(from_v4a(&v4a::parse(text, v4a::Mode::Lenient)?)),
        TextFormat::WholeFile => Ok(whole::parse(text)?
            .into_iter()
            .map(|f| FileChange {
                path: f.path,
                kind: ChangeKind::Replace(f.content),
            })
            .collect()),
    }
}

/// A rule every resolved path must pass before it is read (`nib apply`'s
/// path rules; the Host leaves paths to the guard, after planning).
pub type PathCheck<'a> = &'a dyn Fn(&str) -> Result<(), FileFailure>;

/// Plan every change in memory. If any fails, the error holds one failure
/// per change, in order: the failing ones with their reason, the others
/// "not written, because another file of the same input failed".
pub fn plan_all(
    ws: &Workspace,
    changes: &[FileChange],
    check: PathCheck,
) -> Result<Vec<Plan>, Vec<FileFailure>> {
    let mut seen: HashMap<String, String> = HashMap::new();
    let planned: Vec<Result<Plan, FileFailure>> = changes
        .iter()
        .map(|c| plan(ws, c, &mut seen, check))
        .collect();
    if !planned.iter().any(Result::is_err) {
        return Ok(planned.into_iter().flatten().collect());
    }
    let bad: Vec<&str> = planned
        .iter()
        .filter_map(|p| p.as_ref().err().map(|f| f.path.as_str()))
        .collect();
    let bad = bad.join(", ");
    let failures = planned
        .iter()
        .zip(changes)
        .map(|(p, c)| {
            let mut failure = match p {
                Err(f) => f.clone(),
                Ok(plan) => FileFailure::new(
                    plan.file.rel.clone(),
                    "not_written",
                    format!(
                        "{}: not written, because another file of the same input failed ({bad}); \
                         nothing was written",
                        plan.file.rel
                    ),
                ),
            };
            if failure.path.is_empty() {
                failure.path = c.path.clone();
            }
            failure
        })
        .collect();
    Err(failures)
}

/// Resolve a path the input names: inside the workspace, passing `check`,
/// and not named twice.
fn resolve(
    ws: &Workspace,
    path: &str,
    seen: &mut HashMap<String, String>,
    check: PathCheck,
) -> Result<Resolved, FileFailure> {
    let file = ws
        .resolve(path)
        .map_err(|e| FileFailure::new(path.to_string(), "path", e.to_string()))?;
    check(&file.rel)?;
    if let Some(first) = seen.insert(file.rel.clone(), path.to_string()) {
        let message = format!(
            "{} is named twice in the input (as `{first}` and `{path}`); put all of a file's \
             changes in one place",
            file.rel
        );
        return Err(FileFailure::new(file.rel.clone(), "invalid", message));
    }
    Ok(file)
}

/// Read an existing, writable text file: its text and encoding.
fn read_existing(file: &Resolved) -> Result<(String, Encoding), FileFailure> {
    let fail = |e: FileError, kind| FileFailure::new(file.rel.clone(), kind, e.to_string());
    let on_disk = read_text(file).map_err(|e| fail(e, "read"))?;
    on_disk
        .ensure_writable(&file.rel)
        .map_err(|e| fail(e, "write"))?;
    Ok((on_disk.text, on_disk.encoding))
}

/// Refuses a plan whose new text its encoding cannot hold (before any
/// file is written or anyone asked), and notes the encoding of a file
/// that is not UTF-8.
fn checked(mut plan: Plan) -> Result<Plan, FileFailure> {
    if let Err(e) = plan.after_bytes() {
        let rel = plan.target().to_string();
        return Err(FileFailure::new(rel, "unrepresentable", e.to_string()));
    }
    if plan.after.is_some()
        && let Some(said) = plan.encoding.describe(plan.before.as_deref().unwrap_or(""))
    {
        plan.notes.push(format!("{}: {said}", plan.file.rel));
    }
    Ok(plan)
}

fn edit_text(
    file: &Resolved,
    text: &str,
    edits: &[Hinted],
) -> Result<(String, Diff, Vec<String>), FileFailure> {
    if edits.is_empty() {
        return Ok((text.to_string(), Diff::between(text, text), Vec::new()));
    }
    let result = edit::apply_hinted(text, edits, &[]).or_else(|e| {
        // A blank first line of old that the file lacks there is a slip
        // models make; without it old may match.
        let trimmed: Vec<Hinted> = edits
            .iter()
            .map(|h| {
                let mut h = h.clone();
                let rest = h.edit.old.trim_start_matches(['\n', '\r']);
                if rest.len() < h.edit.old.len() && !rest.trim().is_empty() {
                    h.edit.old = rest.to_string();
                }
                h
            })
            .collect();
        if trimmed == edits {
            return Err(e);
        }
        let mut a = edit::apply_hinted(text, &trimmed, &[]).map_err(|_| e)?;
        a.notes
            .push("dropped the blank line(s) old started with, which the file lacks there".into());
        Ok(a)
    });
    match result {
        Ok(a) => Ok((a.text, a.diff, a.notes)),
        Err(e) => Err(FileFailure::new(
            file.rel.clone(),
            e.kind.as_str(),
            format!("{}: {e}", file.rel),
        )),
    }
}

fn plan(
    ws: &Workspace,
    change: &FileChange,
    seen: &mut HashMap<String, String>,
    check: PathCheck,
) -> Result<Plan, FileFailure> {
    let file = resolve(ws, &change.path, seen, check)?;
    let plan = |before: Option<(String, Encoding)>, after: Option<String>, diff, notes, edits| {
        let (before, encoding) = match before {
            Some((text, encoding)) => (Some(text), encoding),
            None => (None, Encoding::Utf8),
        };
        Plan {
            file: file.clone(),
            before,
            after,
            to: None,
            encoding,
            dest_encoding: Encoding::Utf8,
            diff,
            notes,
            edits,
        }
    };
    let planned = match &change.kind {
        ChangeKind::Create(content) => {
            if file.exists {
                let message = format!(
                    "{} already exists; nothing was written. Change an existing file with \
                     edits (V4A: *** Update File; a SEARCH/REPLACE block with the lines to \
                     replace), not by creating it",
                    file.rel
                );
                return Err(FileFailure::new(file.rel.clone(), "exists", message));
            }
            let diff = Diff::between("", content);
            plan(None, Some(content.clone()), diff, Vec::new(), 0)
        }
        ChangeKind::Replace(content) if !file.exists => {
            let diff = Diff::between("", content);
            plan(None, Some(content.clone()), diff, Vec::new(), 0)
        }
        ChangeKind::Replace(content) => {
            let (text, encoding) = read_existing(&file)?;
            if let Some(why) = whole::elision(&text, content) {
                let message = format!("{}: nothing was written: {why}", file.rel);
                return Err(FileFailure::new(file.rel.clone(), "elided", message));
            }
            let after = whole::keep_conventions(&text, content);
            let diff = Diff::between(&text, &after);
            plan(Some((text, encoding)), Some(after), diff, Vec::new(), 0)
        }
        ChangeKind::Delete => {
            let (text, encoding) = read_existing(&file)?;
            let diff = Diff::between(&text, "");
            plan(Some((text, encoding)), None, diff, Vec::new(), 0)
        }
        ChangeKind::Edit(edits) => {
            let (text, encoding) = read_existing(&file)?;
            let (after, diff, notes) = edit_text(&file, &text, edits)?;
            plan(
                Some((text, encoding)),
                Some(after),
                diff,
                notes,
                edits.len(),
            )
        }
        ChangeKind::Move { to, edits } => {
            let (text, encoding) = read_existing(&file)?;
            let (after, diff, notes) = edit_text(&file, &text, edits)?;
            let dest = resolve(ws, to, seen, check)?;
            let (dest_before, dest_encoding) = if dest.exists {
                let (text, encoding) = read_existing(&dest)?;
                (Some(text), encoding)
            } else {
                (None, Encoding::Utf8)
            };
            let mut p = plan(
                Some((text, encoding)),
                Some(after),
                diff,
                notes,
                edits.len(),
            );
            p.to = Some((dest, dest_before));
            p.dest_encoding = dest_encoding;
            p
        }
    };
    checked(planned)
}
