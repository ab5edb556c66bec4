//! `nib apply`: fs-edit calls from a file or stdin, applied in order.
//!
//! Each call is resolved in the workspace, read, handed to the edit engine
//! and, when it succeeds, written once (atomically, its previous version
//! kept for `nib undo`). A call that fails writes nothing and the next call
//! still runs. The exit code is 0 when every call applied, 1 when any
//! failed.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::value::RawValue;

use super::Format;
use super::apply_report::{CallReport, Status, check_path, failed, print_reports};
use crate::edit::{self, Edit, EditCall};
use crate::files::{
    Encoding, Expect, FileError, Versions, Workspace, clean_stale_temps_in, read_text,
};
use crate::settings::{UsageError, workspace};

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The input format.
    #[arg(long, value_enum, default_value = "edit-json")]
    pub format: Format,
    /// The workspace root; paths in the calls are relative to it (default:
    /// the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Show what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON object per call instead of a readable summary.
    #[arg(long)]
    pub json: bool,
    /// The file holding the calls; `-` or nothing reads stdin.
    pub input: Option<PathBuf>,
    /// search-replace: a file name the blocks may resolve to (the files
    /// "in the chat"); repeatable.
    #[arg(long = "known-file", hide = true)]
    pub known_files: Vec<String>,
    /// Also write protected paths (`.env*`, keys, `.git/`, CI configs),
    /// which the guard otherwise leaves to a person's explicit yes.
    #[arg(long)]
    pub allow_protected: bool,
}

pub fn run(args: ApplyArgs) -> Result<ExitCode, UsageError> {
    let input = read_input(args.input.as_ref())?;
    if args.format != Format::EditJson {
        let ws = workspace(args.root.clone())?;
        let text = super::apply_formats::TextArgs {
            format: args.format,
            known_files: &args.known_files,
            allow_protected: args.allow_protected,
            dry_run: args.dry_run,
        };
        let reports = super::apply_formats::run(&ws, &text, &input);
        print_reports(&reports, args.json, args.dry_run);
        return Ok(exit_code(&reports));
    }
    let ws = workspace(args.root)?;
    let mut session = ApplySession::new(&ws, args.dry_run, args.allow_protected);
    let calls = split_calls(&input);
    if calls.is_empty() {
        let from = args
            .input
            .as_ref()
            .map_or("standard input".into(), |p| p.display().to_string());
        return Err(UsageError(format!(
            "no calls in {from}: give fs-edit calls as JSON, one per line"
        )));
    }
    let reports: Vec<CallReport> = calls.into_iter().map(|raw| session.call(raw)).collect();
    print_reports(&reports, args.json, args.dry_run);
    Ok(exit_code(&reports))
}

fn exit_code(reports: &[CallReport]) -> ExitCode {
    if reports.iter().any(|r| r.status == Status::Failed) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn read_input(path: Option<&PathBuf>) -> Result<String, UsageError> {
    let mut bytes = Vec::new();
    let (name, read) = match path.filter(|p| p.as_os_str() != "-") {
        Some(p) => (
            p.display().to_string(),
            std::fs::File::open(p).and_then(|mut f| f.read_to_end(&mut bytes)),
        ),
        None => (
            "standard input".to_string(),
            std::io::stdin().read_to_end(&mut bytes),
        ),
    };
    read.map_err(|e| UsageError(format!("cannot read {name}: {e}")))?;
    String::from_utf8(bytes).map_err(|e| UsageError(format!("{name} is not UTF-8 text: {e}")))
}

/// The calls in the input: a JSON array of calls, or JSON values one after
/// another (usually one per line). A line that is not JSON fails alone.
fn split_calls(text: &str) -> Vec<Result<String, String>> {
    if text.trim_start().starts_with('[') {
        return match serde_json::from_str::<Vec<Box<RawValue>>>(text) {
            Ok(items) => items.into_iter().map(|r| Ok(r.get().to_string())).collect(),
            Err(e) => vec![Err(format!(
                "the input starts like a JSON list of calls but is not valid JSON ({e})"
            ))],
        };
    }
    let stream = serde_json::Deserializer::from_str(text).into_iter::<Box<RawValue>>();
    if let Ok(values) = stream.collect::<Result<Vec<_>, _>>() {
        return values
            .into_iter()
            .map(|r| Ok(r.get().to_string()))
            .collect();
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str::<Box<RawValue>>(line)
                .map(|r| r.get().to_string())
                .map_err(|e| {
                    format!(
                        "input line {} is not valid JSON ({e}); send one JSON call per line",
                        i + 1
                    )
                })
        })
        .collect()
}

/// The state `nib apply` keeps across calls.
struct ApplySession<'w> {
    ws: &'w Workspace,
    versions: Versions,
    dry_run: bool,
    allow_protected: bool,
    /// Per file, the edits the last successful call applied: the record
    /// behind "already applied".
    last_applied: HashMap<String, Vec<Edit>>,
    /// In a dry run, what each file would hold by now, so later calls see
    /// the effect of earlier ones as they would for real.
    dry_files: HashMap<String, String>,
    /// Directories whose stale temp files (from killed writes) were
    /// already removed in this run.
    cleaned: HashSet<PathBuf>,
}

impl<'w> ApplySession<'w> {
    fn new(ws: &'w Workspace, dry_run: bool, allow_protected: bool) -> ApplySession<'w> {
        ApplySession {
            allow_protected,
            ws,
            versions: Versions::new(ws),
            dry_run,
            last_applied: HashMap::new(),
            dry_files: HashMap::new(),
            cleaned: HashSet::new(),
        }
    }

    fn call(&mut self, raw: Result<String, String>) -> CallReport {
        let text = match raw {
            Ok(text) => text,
            Err(message) => return failed(String::new(), message, Some("invalid")),
        };
        match crate::prim::fs_edit_call(&text) {
            Ok(call) => self.apply(&call, 0),
            Err(e) => failed(path_of(&text), e.to_string(), Some(e.kind.as_str())),
        }
    }

    /// Applies one call. If the file changes on disk between the read and
    /// the rename (another program, or another `nib apply` on the same
    /// file), nothing is written and the edits are applied again to the
    /// current text: no update is lost.
    fn apply(&mut self, call: &EditCall, replans: usize) -> CallReport {
        let file = match self.ws.resolve(&call.path) {
            Ok(f) => f,
            Err(e) => return failed(call.path.clone(), e.to_string(), Some("path")),
        };
        if let Err(report) = check_path(&file.rel, self.allow_protected) {
            return *report;
        }
        if let Some(dir) = file.real.parent()
            && !self.dry_run
            && self.cleaned.insert(dir.to_path_buf())
        {
            clean_stale_temps_in(dir);
        }
        // Held from the read to the rename: a second nib process on this
        // file waits for its turn and then edits what this one wrote.
        let lock = if self.dry_run {
            None
        } else {
            match self.versions.lock(&file.rel) {
                Ok(l) => Some(l),
                Err(e) => return failed(file.rel.clone(), e.to_string(), Some("write")),
            }
        };
        let mut on_disk = match read_text(&file) {
            Ok(t) => t,
            Err(e) => return failed(file.rel.clone(), e.to_string(), Some("read")),
        };
        if let Err(e) = on_disk.ensure_writable(&file.rel) {
            return failed(file.rel.clone(), e.to_string(), Some("write"));
        }
        let stamp = on_disk.stamp;
        let mut current = match self.dry_files.get(&file.rel) {
            Some(text) => text.clone(),
            None => std::mem::take(&mut on_disk.text),
        };
        let previous = self
            .last_applied
            .get(&file.rel)
            .map_or(&[][..], Vec::as_slice);
        // The new content as parts of the text as read and the edits' new
        // text, streamed to the temp file: a large file is never held twice
        // (a CRLF one is matched LF-only in its own buffer, given back as
        // read).
        let applied = match edit::plan(&mut current, &call.edits, previous) {
            Ok(a) => a,
            Err(e) => return failed(file.rel.clone(), e.to_string(), Some(e.kind.as_str())),
        };
        let made = applied.made(&call.edits);
        // Written back in the file's encoding. A UTF-8 file goes to disk
        // straight from the parts; another is rendered and encoded (a
        // character it cannot hold refuses the call, dry run included).
        let encoded = match on_disk.encoding {
            Encoding::Utf8 => None,
            _ => {
                let text = applied.content.render(&current);
                let after = match on_disk.encode(&file.rel, &text) {
                    Ok(bytes) => bytes.into_owned(),
                    Err(e) => {
                        return failed(file.rel.clone(), e.to_string(), Some("unrepresentable"));
                    }
                };
                let before = match on_disk.encode(&file.rel, &current) {
                    Ok(bytes) => bytes.into_owned(),
                    Err(e) => return failed(file.rel.clone(), e.to_string(), Some("read")),
                };
                Some((before, after))
            }
        };
        let mut version = None;
        if applied.changed && self.dry_run {
            self.dry_files
                .insert(file.rel.clone(), applied.content.render(&current));
        } else if applied.changed
            && let Some(lock) = lock
        {
            let written = match &encoded {
                None => self.versions.write_locked_parts(
                    &lock,
                    &file,
                    Expect::Read(current.as_bytes(), stamp),
                    &applied.content.slices(&current),
                ),
                Some((before, after)) => {
                    self.versions
                        .write_locked(&lock, &file, Expect::Read(before, stamp), after)
                }
            };
            drop(lock);
            match written {
                Ok(id) => version = Some(id.to_string()),
                Err(FileError::ChangedOnDisk { .. }) if replans < MAX_REPLANS => {
                    return self.apply(call, replans + 1);
                }
                Err(e) => return failed(file.rel.clone(), e.to_string(), Some("write")),
            }
        }
        if !made.is_empty() {
            self.last_applied.insert(file.rel.clone(), made.clone());
        }
        let total = call.edits.len();
        let mut notes = applied.notes;
        if applied.changed
            && let Some(said) = on_disk.encoding.describe(&current)
        {
            notes.push(format!("{}: {said}", file.rel));
        }
        let (status, message) = if made.is_empty() {
            (
                Status::AlreadyApplied,
                format!(
                    "{}: every edit was already applied; nothing written",
                    file.rel
                ),
            )
        } else {
            let verb = if self.dry_run {
                "would apply"
            } else {
                "applied"
            };
            let (added, removed) = applied.diff.stats();
            let skipped = total - made.len();
            let skipped = if skipped > 0 {
                format!(", {skipped} already applied")
            } else {
                String::new()
            };
            (
                Status::Applied,
                format!(
                    "{verb} {} of {total} edits to {} (+{added} -{removed}){skipped}",
                    made.len(),
                    file.rel
                ),
            )
        };
        CallReport {
            diff: applied.diff.unified(&file.rel),
            path: file.rel,
            status,
            message,
            notes,
            error: None,
            version,
        }
    }
}

/// How often one call is applied again because its file changed on disk
/// meanwhile, before `nib apply` gives up on it.
const MAX_REPLANS: usize = 20;

/// The path a call names, even when the call is otherwise malformed, so
/// its failure can be reported against its file.
fn path_of(call: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(call).unwrap_or_default();
    value
        .get("path")
        .and_then(|p| p.as_str())
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_arrays_and_pretty_objects() {
        let calls = split_calls("{\"a\": 1}\n{\"b\": 2}\n");
        assert_eq!(calls.len(), 2);
        let calls = split_calls("[{\"a\": 1}, {\"b\": 2}]");
        assert_eq!(
            calls,
            [Ok("{\"a\": 1}".to_string()), Ok("{\"b\": 2}".to_string())]
        );
        let calls = split_calls("{\n  \"a\": 1\n}\n");
        assert_eq!(calls.len(), 1);
    }

    #[test]
    fn a_bad_line_fails_alone() {
        let calls = split_calls("{\"a\": 1}\n{oops\n{\"b\": 2}\n");
        assert_eq!(calls.len(), 3);
        assert!(
            calls[1]
                .as_ref()
                .is_err_and(|e| e.contains("input line 2 is not valid JSON"))
        );
        assert!(calls[2].is_ok());
    }
}
