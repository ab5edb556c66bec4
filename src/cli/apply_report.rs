//! What `nib apply` says about each call or file: the report types, the
//! guard's path rule for its writes, and printing (readable or `--json`),
//! with the engine's advice to a model said as advice to a person.
//! Shared by the fs-edit calls (`apply.rs`) and the text formats
//! (`apply_formats.rs`).

use serde::Serialize;

use crate::guard::PathVerdict;

/// What happened to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Applied,
    AlreadyApplied,
    Failed,
}

/// One call's result, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct CallReport {
    pub path: String,
    pub status: Status,
    pub message: String,
    pub diff: String,
    pub notes: Vec<String>,
    /// Why the call failed, for counting: see `edit::ErrorKind`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    /// The versions-store id of the write, for `nib undo`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The guard's path rules for a write by `nib apply`: denied paths never,
/// protected ones only with `--allow-protected` (running `nib apply` is
/// the user's yes to ordinary writes, not to those).
pub(super) fn check_path(rel: &str, allow_protected: bool) -> Result<(), Box<CallReport>> {
    match crate::guard::path_verdict(rel) {
        PathVerdict::Open => Ok(()),
        PathVerdict::Protected(_) if allow_protected => Ok(()),
        PathVerdict::Protected(why) => Err(Box::new(failed(
            rel.to_string(),
            format!("{why}: nib apply writes it only with --allow-protected; nothing was written"),
            Some("refused"),
        ))),
        PathVerdict::Denied(why) => Err(Box::new(failed(
            rel.to_string(),
            format!("{why}; nothing was written"),
            Some("refused"),
        ))),
    }
}

pub(super) fn failed(path: String, message: String, error: Option<&'static str>) -> CallReport {
    CallReport {
        path,
        status: Status::Failed,
        message,
        diff: String::new(),
        notes: Vec::new(),
        error,
        version: None,
    }
}

/// Model-facing advice in the edit engine's messages (the tool's result
/// names the tools a model calls) and what a person at the command line
/// does instead. The engine's text stays as it is for the model.
const FOR_A_PERSON: &[(&str, &str)] = &[
    (
        "; to create it use fs-write",
        "; nib apply changes existing files: create it first, or give its whole text with \
         --format whole-file",
    ),
    (
        "fs-edit replaces existing text — to create a file or replace all of it, use fs-write",
        "an edit replaces existing text: to create a file or replace all of it, give its whole \
         text with --format whole-file",
    ),
    (
        " (shown as fs-read shows them: number, tab, line; copy only what follows the tab)",
        " (number, tab, line: old must be the text after the tab, without the number)",
    ),
    (
        "read the file again (fs-read) and copy the lines you want to change exactly",
        "open the file and copy the lines you want to change exactly into old",
    ),
    (
        "or set replace_all to change every one",
        "or add \"replace_all\": true to the call to change every one",
    ),
    (
        "send old and new with the file's own characters, as fs-read shows them",
        "write old and new with the file's own characters (as `cat -A` shows them)",
    ),
];

/// `message` as a person running `nib apply` reads it: the engine's advice
/// to a model (call fs-write, fs-read) turned into what to do at the
/// command line.
pub(super) fn for_a_person(message: &str) -> String {
    FOR_A_PERSON
        .iter()
        .fold(message.to_string(), |m, (model, person)| {
            m.replace(model, person)
        })
}

pub(super) fn print_reports(reports: &[CallReport], json: bool, dry_run: bool) {
    let reports: Vec<CallReport> = reports
        .iter()
        .map(|r| CallReport {
            message: for_a_person(&r.message),
            notes: r.notes.iter().map(|n| for_a_person(n)).collect(),
            path: r.path.clone(),
            status: r.status,
            diff: r.diff.clone(),
            error: r.error,
            version: r.version.clone(),
        })
        .collect();
    let reports = reports.as_slice();
    let mut out = std::io::stdout().lock();
    // A closed pipe (`nib apply | head`) is not an error worth reporting.
    let _ = if json {
        write_json(&mut out, reports)
    } else {
        write_human(&mut out, reports, dry_run)
    };
}

fn write_json(out: &mut impl std::io::Write, reports: &[CallReport]) -> std::io::Result<()> {
    for r in reports {
        serde_json::to_writer(&mut *out, r)?;
        writeln!(out)?;
    }
    Ok(())
}

fn write_human(
    out: &mut impl std::io::Write,
    reports: &[CallReport],
    dry_run: bool,
) -> std::io::Result<()> {
    for r in reports {
        match r.status {
            Status::Failed => {
                let path = if r.path.is_empty() { "call" } else { &r.path };
                writeln!(out, "failed {path}:")?;
                for line in r.message.lines() {
                    writeln!(out, "  {line}")?;
                }
            }
            _ => {
                writeln!(out, "{}", r.message)?;
                write!(out, "{}", r.diff)?;
            }
        }
        for note in &r.notes {
            writeln!(out, "note: {note}")?;
        }
    }
    if reports.len() > 1 {
        let count = |s| reports.iter().filter(|r| r.status == s).count();
        writeln!(
            out,
            "{} calls: {} applied, {} already applied, {} failed{}",
            reports.len(),
            count(Status::Applied),
            count(Status::AlreadyApplied),
            count(Status::Failed),
            if dry_run {
                " (dry run: nothing written)"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}
