//! `nib apply --format search-replace|udiff|v4a`: a text format's edits,
//! every file validated in memory before any is written.
//!
//! The input is parsed into per-file changes (`edit::formats::apply`); each
//! file is read and its new content computed with the engine. If any file
//! fails, nothing is written and every file is reported: the failing ones
//! with the reason, the others as not written. Otherwise each file is
//! written once, atomically, its previous version kept for `nib undo`.

// A file's failure is its report, made once per file and never on a hot
// path: boxing it would buy nothing.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;

use super::Format;
use super::apply::{ApplyArgs, CallReport, Status, failed};
use crate::edit::formats::apply::{ChangeKind, FileChange, from_blocks, from_udiff, from_v4a};
use crate::edit::formats::search_replace::{self, Item, ParseOptions};
use crate::edit::formats::{FormatError, udiff, v4a, whole};
use crate::edit::{self, Diff, Hinted};
use crate::files::{FileError, Resolved, Versions, Workspace, read_text};

/// One file's change, computed and not yet written.
struct Plan {
    /// The file the change reads (the source of a move).
    file: Resolved,
    /// Its content now; None when it does not exist yet.
    before: Option<String>,
    /// What it holds afterwards; None: deleted (or moved away).
    after: Option<String>,
    /// A move's destination, with what it holds now (None: nothing).
    to: Option<(Resolved, Option<String>)>,
    diff: Diff,
    notes: Vec<String>,
    edits: usize,
}

pub(super) fn run(ws: &Workspace, args: &ApplyArgs, input: &str) -> Vec<CallReport> {
    let changes = match parse(ws, args, input) {
        Ok(c) if c.is_empty() => {
            return vec![failed(
                String::new(),
                format!(
                    "the input holds no {} edits; nothing was written",
                    name(args.format)
                ),
                Some("parse"),
            )];
        }
        Ok(c) => c,
        Err(e) => {
            return vec![failed(
                String::new(),
                format!(
                    "the input is not a valid {}, so nothing was written: {e}",
                    name(args.format)
                ),
                Some("parse"),
            )];
        }
    };
    let mut seen: HashMap<String, String> = HashMap::new();
    let planned: Vec<Result<Plan, CallReport>> = changes
        .iter()
        .map(|c| plan(ws, c, &mut seen, args.allow_protected))
        .collect();
    if planned.iter().any(Result::is_err) {
        let bad: Vec<&str> = planned
            .iter()
            .filter_map(|p| p.as_ref().err().map(|r| r.path.as_str()))
            .collect();
        let bad = bad.join(", ");
        return planned
            .into_iter()
            .zip(&changes)
            .map(|(p, c)| {
                match p {
                Err(report) => report,
                Ok(plan) => failed(
                    plan.file.rel.clone(),
                    format!(
                        "{}: not written, because another file of the same input failed ({bad}); \
                         nothing was written",
                        plan.file.rel
                    ),
                    Some("not_written"),
                ),
            }
            .with_path_fallback(&c.path)
            })
            .collect();
    }
    let versions = Versions::new(ws);
    let mut reports = Vec::new();
    let mut write_failed = false;
    for plan in planned.into_iter().flatten() {
        if write_failed {
            reports.push(failed(
                plan.file.rel.clone(),
                format!(
                    "{}: not written, because writing an earlier file failed",
                    plan.file.rel
                ),
                Some("not_written"),
            ));
            continue;
        }
        let report = if args.dry_run {
            Ok(None)
        } else {
            write(&versions, &plan)
        };
        match report {
            Ok(version) => reports.push(applied(&plan, args.dry_run, version)),
            Err(e) => {
                write_failed = true;
                reports.push(failed(plan.file.rel.clone(), e.to_string(), Some("write")));
            }
        }
    }
    reports
}

trait PathFallback {
    fn with_path_fallback(self, path: &str) -> Self;
}

impl PathFallback for CallReport {
    fn with_path_fallback(mut self, path: &str) -> CallReport {
        if self.path.is_empty() {
            self.path = path.to_string();
        }
        self
    }
}

fn name(format: Format) -> &'static str {
    match format {
        Format::EditJson => "edit-json input",
        Format::SearchReplace => "SEARCH/REPLACE reply",
        Format::Udiff => "unified diff",
        Format::V4a => "V4A patch",
        Format::WholeFile => "whole-file reply",
    }
}

fn parse(ws: &Workspace, args: &ApplyArgs, input: &str) -> Result<Vec<FileChange>, FormatError> {
    match args.format {
        Format::SearchReplace => {
            let opts = ParseOptions {
                valid_fnames: args.known_files.clone(),
                ..ParseOptions::default()
            };
            let blocks: Vec<_> = search_replace::parse(input, &opts)?
                .into_iter()
                .filter_map(|item| match item {
                    Item::Block(b) => Some(b),
                    Item::Shell(_) => None,
                })
                .collect();
            let exists = |p: &str| ws.resolve(p).is_ok_and(|r| r.exists);
            from_blocks(&blocks, &exists)
        }
        Format::Udiff => from_udiff(&udiff::parse(input)?),
        Format::V4a => Ok(from_v4a(&v4a::parse(input, v4a::Mode::Lenient)?)),
        Format::WholeFile => Ok(whole::parse(input)?
            .into_iter()
            .map(|f| FileChange {
                path: f.path,
                kind: ChangeKind::Replace(f.content),
            })
            .collect()),
        Format::EditJson => unreachable!("edit-json is handled by apply::run"),
    }
}

/// Resolve a path the input names: inside the workspace, not nib's own
/// state, and not named twice.
fn resolve(
    ws: &Workspace,
    path: &str,
    seen: &mut HashMap<String, String>,
    allow_protected: bool,
) -> Result<Resolved, CallReport> {
    let file = ws
        .resolve(path)
        .map_err(|e| failed(path.to_string(), e.to_string(), Some("path")))?;
    super::apply::check_path(&file.rel, allow_protected).map_err(|r| *r)?;
    if let Some(first) = seen.insert(file.rel.clone(), path.to_string()) {
        let message = format!(
            "{} is named twice in the input (as `{first}` and `{path}`); put all of a file's \
             changes in one place",
            file.rel
        );
        return Err(failed(file.rel.clone(), message, Some("invalid")));
    }
    Ok(file)
}

/// Read an existing, writable text file.
fn read_existing(file: &Resolved) -> Result<String, CallReport> {
    let fail = |e: FileError, kind| failed(file.rel.clone(), e.to_string(), Some(kind));
    let on_disk = read_text(file).map_err(|e| fail(e, "read"))?;
    on_disk
        .ensure_writable(&file.rel)
        .map_err(|e| fail(e, "write"))?;
    Ok(on_disk.text)
}

fn edit_text(
    file: &Resolved,
    text: &str,
    edits: &[Hinted],
) -> Result<(String, Diff, Vec<String>), CallReport> {
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
        Err(e) => Err(failed(
            file.rel.clone(),
            format!("{}: {e}", file.rel),
            Some(e.kind.as_str()),
        )),
    }
}

fn plan(
    ws: &Workspace,
    change: &FileChange,
    seen: &mut HashMap<String, String>,
    allow_protected: bool,
) -> Result<Plan, CallReport> {
    let file = resolve(ws, &change.path, seen, allow_protected)?;
    let plan = |before: Option<String>, after: Option<String>, diff, notes, edits| Plan {
        file: file.clone(),
        before,
        after,
        to: None,
        diff,
        notes,
        edits,
    };
    match &change.kind {
        ChangeKind::Create(content) => {
            if file.exists {
                let message = format!(
                    "{} already exists; nothing was written. Change an existing file with \
                     edits (V4A: *** Update File; a SEARCH/REPLACE block with the lines to \
                     replace), not by creating it",
                    file.rel
                );
                return Err(failed(file.rel.clone(), message, Some("exists")));
            }
            let diff = Diff::between("", content);
            Ok(plan(None, Some(content.clone()), diff, Vec::new(), 0))
        }
        ChangeKind::Replace(content) if !file.exists => {
            let diff = Diff::between("", content);
            Ok(plan(None, Some(content.clone()), diff, Vec::new(), 0))
        }
        ChangeKind::Replace(content) => {
            let text = read_existing(&file)?;
            if let Some(why) = whole::elision(&text, content) {
                let message = format!("{}: nothing was written: {why}", file.rel);
                return Err(failed(file.rel.clone(), message, Some("elided")));
            }
            let after = whole::keep_conventions(&text, content);
            let diff = Diff::between(&text, &after);
            Ok(plan(Some(text), Some(after), diff, Vec::new(), 0))
        }
        ChangeKind::Delete => {
            let text = read_existing(&file)?;
            let diff = Diff::between(&text, "");
            Ok(plan(Some(text), None, diff, Vec::new(), 0))
        }
        ChangeKind::Edit(edits) => {
            let text = read_existing(&file)?;
            let (after, diff, notes) = edit_text(&file, &text, edits)?;
            Ok(plan(Some(text), Some(after), diff, notes, edits.len()))
        }
        ChangeKind::Move { to, edits } => {
            let text = read_existing(&file)?;
            let (after, diff, notes) = edit_text(&file, &text, edits)?;
            let dest = resolve(ws, to, seen, allow_protected)?;
            let dest_before = if dest.exists {
                Some(read_existing(&dest)?)
            } else {
                None
            };
            let mut p = plan(Some(text), None, diff, notes, edits.len());
            p.to = Some((dest, dest_before));
            p.after = Some(after);
            Ok(p)
        }
    }
}

fn write(versions: &Versions, plan: &Plan) -> Result<Option<String>, FileError> {
    let before = plan.before.as_deref().map(str::as_bytes);
    match (&plan.to, &plan.after) {
        (Some((dest, dest_before)), Some(after)) => {
            let dest_before = dest_before.as_deref().map(str::as_bytes);
            let id = versions.write(dest, dest_before, after.as_bytes())?;
            remove(versions, &plan.file, before)?;
            Ok(Some(id.to_string()))
        }
        (None, Some(after)) => {
            if plan.before.as_deref() == Some(after.as_str()) {
                return Ok(None);
            }
            Ok(Some(
                versions
                    .write(&plan.file, before, after.as_bytes())?
                    .to_string(),
            ))
        }
        (_, None) => remove(versions, &plan.file, before).map(Some),
    }
}

/// Delete a file, its content kept in the versions store first.
fn remove(
    versions: &Versions,
    file: &Resolved,
    before: Option<&[u8]>,
) -> Result<String, FileError> {
    let id = versions.record(&file.rel, before, b"")?;
    std::fs::remove_file(&file.real).map_err(|e| FileError::Io {
        action: "delete",
        path: file.rel.clone(),
        source: e,
    })?;
    Ok(id.to_string())
}

fn applied(plan: &Plan, dry_run: bool, version: Option<String>) -> CallReport {
    let (added, removed) = plan.diff.stats();
    let would = |did: &str, would: &str| if dry_run { would } else { did }.to_string();
    let rel = &plan.file.rel;
    let (message, shown) = match (&plan.to, &plan.before, &plan.after) {
        (Some((dest, _)), _, _) => (
            format!(
                "{} {rel} to {} with {} (+{added} -{removed})",
                would("moved", "would move"),
                dest.rel,
                count(plan.edits, "edit")
            ),
            dest.rel.clone(),
        ),
        (None, None, _) => (
            format!("{} {rel} (+{added})", would("created", "would create")),
            rel.clone(),
        ),
        (None, Some(_), None) => (
            format!("{} {rel} (-{removed})", would("deleted", "would delete")),
            rel.clone(),
        ),
        (None, Some(_), Some(_)) => (
            format!(
                "{} {} to {rel} (+{added} -{removed})",
                would("applied", "would apply"),
                count(plan.edits, "edit")
            ),
            rel.clone(),
        ),
    };
    CallReport {
        path: rel.clone(),
        status: Status::Applied,
        message,
        diff: plan.diff.unified(&shown),
        notes: plan.notes.clone(),
        error: None,
        version,
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
