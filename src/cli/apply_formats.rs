//! `nib apply --format search-replace|udiff|v4a|whole-file`: a text
//! format's edits, every file validated in memory before any is written.
//!
//! The planning and writing are `prim::patch`'s, shared with the agent's
//! `apply-text`: if any file fails, nothing is written and every file is
//! reported (the failing ones with the reason, the others as not written);
//! otherwise each file is written once, atomically, its previous version
//! kept for `nib undo`. There is no confirm: running `nib apply` is the
//! user's yes to ordinary writes; protected paths need `--allow-protected`.

use super::Format;
use super::apply_report::{CallReport, Status, check_path, failed};
use crate::files::{Versions, Workspace};
use crate::prim::patch::{self, FileFailure, Plan, Tense, TextFormat};

/// What `nib apply`'s flags say to a text format's run.
pub(super) struct TextArgs<'a> {
    pub format: Format,
    pub known_files: &'a [String],
    pub allow_protected: bool,
    pub dry_run: bool,
}

pub(super) fn run(ws: &Workspace, args: &TextArgs<'_>, input: &str) -> Vec<CallReport> {
    let Some(format) = text_format(args.format) else {
        return vec![failed(
            String::new(),
            "edit-json input is not a text format (a bug in nib)".into(),
            Some("parse"),
        )];
    };
    let changes = match patch::parse_changes(ws, format, input, args.known_files) {
        Ok(c) => c,
        Err(f) => return vec![report(f)],
    };
    let check = |rel: &str| {
        check_path(rel, args.allow_protected).map_err(|r| FileFailure {
            kind: r.error.unwrap_or("refused"),
            path: r.path,
            message: r.message,
        })
    };
    let plans = match patch::plan_all(ws, &changes, &check) {
        Ok(p) => p,
        Err(failures) => return failures.into_iter().map(report).collect(),
    };
    let written = if args.dry_run {
        vec![Ok(None); plans.len()]
    } else {
        patch::write_all(ws, &Versions::new(ws), &plans)
    };
    plans
        .iter()
        .zip(written)
        .map(|(plan, w)| match w {
            Ok(version) => applied(plan, args.dry_run, version),
            Err(f) => report(f),
        })
        .collect()
}

fn text_format(format: Format) -> Option<TextFormat> {
    match format {
        Format::EditJson => None,
        Format::SearchReplace => Some(TextFormat::SearchReplace),
        Format::Udiff => Some(TextFormat::Udiff),
        Format::V4a => Some(TextFormat::V4a),
        Format::WholeFile => Some(TextFormat::WholeFile),
    }
}

fn report(f: FileFailure) -> CallReport {
    failed(f.path, f.message, Some(f.kind))
}

fn applied(plan: &Plan, dry_run: bool, version: Option<String>) -> CallReport {
    let tense = if dry_run { Tense::Would } else { Tense::Done };
    CallReport {
        path: plan.file.rel.clone(),
        status: Status::Applied,
        message: plan.summary(tense),
        diff: plan.unified_diff(),
        notes: plan.notes.clone(),
        error: None,
        version,
    }
}
