//! Text edit formats applied to the workspace: the in-memory planning that
//! `nib apply --format` and the agent's `apply-text` share (`plan`), and
//! [`Host::apply_text`], which puts the guard between planning and writing.
//!
//! A text (a model's reply, or `nib apply`'s input) is parsed into per-file
//! changes (`edit::formats`); every file is then planned in memory:
//! resolved, read, its new content computed with the engine, its diff made.
//! If any file fails, nothing is written and every file is reported: the
//! failing ones with the reason, the others as not written because of them.
//! Writing is one atomic write per file, its previous version kept for undo.
//!
//! `Host::apply_text` is all or nothing, guard included:
//!
//! 1. Every changed file is judged as an `fs-write` of its new content (a
//!    deleted file, and a move's source, as a write of nothing, so the same
//!    path rules apply). A denial of any file refuses the whole text before
//!    anyone is asked anything.
//! 2. Then the files are confirmed one by one, in input order, one confirm
//!    per file with that file's unified diff. The first "no" stops the
//!    asking; nothing is written.
//! 3. Only when every file is approved are they written, in input order. If
//!    a write fails (a full disk), the files before it stay written and the
//!    rest are not; each result says which.
//!
//! As with fs-write, a whole file (`whole-file`) replaces only a file this
//! session has read, unchanged since. A written file counts as read by the
//! session (fs-write may replace it next) and forgets its last fs-edit,
//! like an fs-write.

mod commit;
mod plan;

use serde_json::json;

pub use commit::write_all;
pub use plan::{FileFailure, PathCheck, Plan, Tense, parse_changes, plan_all};

use super::host::{ConfirmOut, ConfirmRequest, Host, ReasonOut, ToolResult};
use super::{parse, table};
use crate::call::Call;
use crate::files::{content_hash, read_text};
use crate::guard::{Decision, Reason};

/// Diffs longer than this many lines are summarized in the model's text.
const DIFF_SHOWN_LINES: usize = 80;

/// The text edit formats a reply can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// Aider-style SEARCH/REPLACE blocks (prose around them is ignored).
    SearchReplace,
    /// A unified diff (line numbers are hints; hunks are found by content).
    Udiff,
    /// A V4A patch (`*** Begin Patch` ... `*** End Patch`).
    V4a,
    /// Whole files: a path on a line, then the content in a fenced block.
    WholeFile,
}

impl TextFormat {
    pub const ALL: [TextFormat; 4] = [
        TextFormat::SearchReplace,
        TextFormat::Udiff,
        TextFormat::V4a,
        TextFormat::WholeFile,
    ];

    /// The format named `search-replace`, `udiff`, `v4a` or `whole-file`
    /// (the names `nib apply --format` takes).
    pub fn from_name(name: &str) -> Option<TextFormat> {
        TextFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            TextFormat::SearchReplace => "search-replace",
            TextFormat::Udiff => "udiff",
            TextFormat::V4a => "v4a",
            TextFormat::WholeFile => "whole-file",
        }
    }

    /// What a text in this format is called in messages.
    pub fn noun(self) -> &'static str {
        match self {
            TextFormat::SearchReplace => "SEARCH/REPLACE reply",
            TextFormat::Udiff => "unified diff",
            TextFormat::V4a => "V4A patch",
            TextFormat::WholeFile => "whole-file reply",
        }
    }
}

/// One file's result of [`Host::apply_text_files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileResult {
    /// Workspace-relative (as the text wrote it when it does not resolve);
    /// empty when the whole text failed to parse.
    pub path: String,
    pub result: ToolResult,
}

impl From<FileFailure> for FileResult {
    fn from(f: FileFailure) -> FileResult {
        FileResult {
            result: ToolResult::failed(f.kind, f.message),
            path: f.path,
        }
    }
}

/// What the guard and the confirm said about one file.
struct Verdict {
    /// None: the file is left as it is, so nothing was judged.
    decision: Option<Decision>,
    confirm: Option<ConfirmOut>,
}

impl Host {
    /// Apply the edits a model wrote in its reply text: one result per file,
    /// in the order the text names them. All or nothing: see the module
    /// docs.
    pub fn apply_text(&self, format: TextFormat, text: &str) -> Vec<ToolResult> {
        self.apply_text_files(format, text)
            .into_iter()
            .map(|f| f.result)
            .collect()
    }

    /// [`Host::apply_text`], each result with its file's path.
    pub fn apply_text_files(&self, format: TextFormat, text: &str) -> Vec<FileResult> {
        let mut results = self.apply_text_unredacted(format, text);
        // Diffs and hints quote files: the model sees secrets as handles.
        for f in &mut results {
            f.result.text = self.guard().observe_output(&f.result.text, false);
        }
        results
    }

    fn apply_text_unredacted(&self, format: TextFormat, text: &str) -> Vec<FileResult> {
        // A SEARCH/REPLACE block's file name may resolve to a file the
        // session has read: those are the files "in the chat".
        let mut known: Vec<String> = self.state().reads.keys().cloned().collect();
        known.sort();
        // Handles in the text stand for secrets: the guard judges the real
        // values (a secret kept in its own file is not flagged).
        let resolved = self.guard().resolve_text(text);
        let text = match format {
            TextFormat::V4a => v4a_span(&resolved),
            _ => &resolved,
        };
        let changes = match parse_changes(&self.ws, format, text, &known) {
            Ok(c) => c,
            Err(f) => return vec![f.into()],
        };
        // Paths are the guard's to judge, once every file is planned. A
        // whole file replaces what is there, so, as with fs-write, only
        // what this session has read, unchanged since.
        let check = |rel: &str| match format {
            TextFormat::WholeFile => self.ensure_read(rel),
            _ => Ok(()),
        };
        let plans = match plan_all(&self.ws, &changes, &check) {
            Ok(p) => p,
            Err(failures) => return failures.into_iter().map(with_resend_hint).collect(),
        };
        match self.approve_all(&plans) {
            Ok(verdicts) => self.write_approved(&plans, verdicts),
            Err(refusal) => refusal,
        }
    }

    /// Judge every file, then confirm them one by one; Err: the results of
    /// a refused text, nothing written.
    fn approve_all(&self, plans: &[Plan]) -> Result<Vec<Verdict>, Vec<FileResult>> {
        let mut judged = Vec::with_capacity(plans.len());
        for plan in plans {
            if plan.changes_nothing() {
                judged.push(None);
                continue;
            }
            let calls = guard_calls(plan).map_err(|f| vec![FileResult::from(f)])?;
            let decision = calls
                .iter()
                .map(|c| self.decide(c))
                .reduce(most_severe)
                .unwrap_or(Decision::Allow)
                .with_security(self.guard().judge_write(
                    &plan.file.rel,
                    plan.before.as_deref().unwrap_or(""),
                    plan.after.as_deref().unwrap_or(""),
                ));
            judged.push(Some((calls, decision)));
        }
        let denied = judged
            .iter()
            .position(|j| matches!(j, Some((_, Decision::Deny { .. }))));
        if let Some(at) = denied {
            let verdicts = judged
                .into_iter()
                .map(|j| Verdict {
                    decision: j.map(|(_, d)| d),
                    confirm: None,
                })
                .collect();
            return Err(refused_text(plans, verdicts, at));
        }
        let mut verdicts: Vec<Verdict> = Vec::with_capacity(plans.len());
        let mut refused_at = None;
        for (i, (plan, j)) in plans.iter().zip(judged).enumerate() {
            let Some((calls, decision)) = j else {
                verdicts.push(Verdict {
                    decision: None,
                    confirm: None,
                });
                continue;
            };
            // Once a file is refused nothing is written, so nobody is asked
            // about the files after it.
            let confirm = match refused_at {
                None => self.ask(&calls[0], &decision, &plan.unified_diff()),
                Some(_) => None,
            };
            if confirm.as_ref().is_some_and(|c| !c.approved) {
                refused_at = Some(i);
            }
            verdicts.push(Verdict {
                decision: Some(decision),
                confirm,
            });
        }
        match refused_at {
            Some(at) => Err(refused_text(plans, verdicts, at)),
            None => Ok(verdicts),
        }
    }

    /// Write the approved files and record them in the session's state.
    fn write_approved(&self, plans: &[Plan], verdicts: Vec<Verdict>) -> Vec<FileResult> {
        let written = write_all(&self.ws, &self.versions, plans);
        plans
            .iter()
            .zip(written)
            .zip(verdicts)
            .map(|((plan, written), verdict)| {
                let mut result = match written {
                    Ok(version) => {
                        self.remember(plan);
                        written_result(plan, version)
                    }
                    Err(f) => ToolResult::failed(f.kind, f.message),
                };
                verdict.apply_to(&mut result);
                FileResult {
                    path: plan.target().to_string(),
                    result,
                }
            })
            .collect()
    }

    /// An existing file must have been read by this session, and not
    /// changed since, before a whole file replaces it.
    fn ensure_read(&self, rel: &str) -> Result<(), FileFailure> {
        let Ok(file) = self.ws.resolve(rel) else {
            return Ok(());
        };
        if !file.exists {
            return Ok(());
        }
        let hash = read_text(&file)
            .map_err(|e| FileFailure::new(rel.to_string(), "read", e.to_string()))?
            .hash();
        match self.state().reads.get(rel) {
            Some(&read) if read == hash => Ok(()),
            Some(_) => Err(FileFailure::new(
                rel.to_string(),
                "stale",
                format!(
                    "{rel} changed since you read it; read it again (fs-read) before replacing it"
                ),
            )),
            None => Err(FileFailure::new(
                rel.to_string(),
                "unread",
                format!(
                    "{rel} exists and this session has not read it; read it first (fs-read) so \
                     you replace what is there knowingly, or change part of it with \
                     SEARCH/REPLACE blocks"
                ),
            )),
        }
    }

    /// A written file counts as read (its new content is what the model
    /// made); its last fs-edit no longer describes it.
    fn remember(&self, plan: &Plan) {
        if let Some((dest, _)) = &plan.to {
            self.guard().note_written(&dest.rel);
        }
        self.guard().note_written(&plan.file.rel);
        let mut state = self.state();
        match (&plan.to, &plan.after) {
            (Some((dest, _)), Some(after)) => {
                state.reads.remove(&plan.file.rel);
                state.last_edits.remove(&plan.file.rel);
                state.written.insert(plan.file.rel.clone());
                state
                    .reads
                    .insert(dest.rel.clone(), written_hash(plan, after));
                state.last_edits.remove(&dest.rel);
                state.written.insert(dest.rel.clone());
            }
            (None, Some(after)) => {
                state
                    .reads
                    .insert(plan.file.rel.clone(), written_hash(plan, after));
                state.last_edits.remove(&plan.file.rel);
                state.written.insert(plan.file.rel.clone());
            }
            (_, None) => {
                state.reads.remove(&plan.file.rel);
                state.last_edits.remove(&plan.file.rel);
                state.written.insert(plan.file.rel.clone());
            }
        }
    }

    /// The guard's decision on one call. The guard's API is being
    /// reworked: this is the one place this module calls it.
    fn decide(&self, call: &Call) -> Decision {
        self.guard().judge(call, &self.ws)
    }

    /// Ask the session's confirm about one file's write, showing its diff;
    /// None when the decision needs no confirm. The one place this module
    /// calls the confirm callback.
    fn ask(&self, call: &Call, decision: &Decision, diff: &str) -> Option<ConfirmOut> {
        let Decision::Confirm { kind, reasons } = decision else {
            return None;
        };
        // No proposed text: a text-format change is approved or not as the
        // model wrote it (edit-before-approve is for single-file writes).
        let request = ConfirmRequest {
            call,
            kind: *kind,
            reasons,
            diff: Some(diff),
            path: Some(call.arg("path").as_str()),
            proposed: None,
            again: None,
        };
        Some(ConfirmOut {
            kind: decision.as_str(),
            approved: (self.confirm)(&request).approved,
        })
    }
}

/// The hash of the bytes a plan wrote (in its encoding), as fs-read
/// records it.
fn written_hash(plan: &Plan, after: &str) -> u64 {
    match plan.after_bytes() {
        Ok(Some(bytes)) => content_hash(&bytes),
        // Written, so encodable; a hash of the text only makes the file
        // count as changed since read.
        _ => content_hash(after.as_bytes()),
    }
}

/// The V4A patch inside a reply: from its `*** Begin Patch` line through
/// its last `*** End Patch` line (to the end when there is none, which the
/// parser refuses as cut off). Models put prose and fences around a patch;
/// the parser, like `nib apply`'s input, wants the patch alone.
fn v4a_span(text: &str) -> &str {
    let mut start = None;
    let mut end = text.len();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        match line.trim() {
            "*** Begin Patch" if start.is_none() => start = Some(at),
            "*** End Patch" if start.is_some() => end = at + line.len(),
            _ => {}
        }
        at += line.len();
    }
    match start {
        Some(start) => &text[start..end],
        None => text,
    }
}

impl Verdict {
    fn apply_to(&self, result: &mut ToolResult) {
        if let Some(decision) = &self.decision {
            result.decision = decision.as_str();
            result.reasons = reasons_out(decision.reasons());
        }
        result.confirm = self.confirm.clone();
    }
}

/// The calls the guard judges for one file: an `fs-write` of what the file
/// will hold; a deleted file, and a move's source, as a write of nothing.
/// The first is the one a confirm shows.
fn guard_calls(plan: &Plan) -> Result<Vec<Call>, FileFailure> {
    let write = |rel: &str, content: &str| {
        parse::parse(&table::FS_WRITE, &json!({"path": rel, "content": content})).map_err(|e| {
            FileFailure::new(
                rel.to_string(),
                "bug",
                format!("{rel}: cannot build the guard's call (a bug in nib): {e}"),
            )
        })
    };
    let rel = &plan.file.rel;
    match (&plan.to, &plan.after) {
        (Some((dest, _)), Some(after)) => Ok(vec![write(&dest.rel, after)?, write(rel, "")?]),
        (None, Some(after)) => Ok(vec![write(rel, after)?]),
        (_, None) => Ok(vec![write(rel, "")?]),
    }
}

/// The more severe of two decisions (deny, then security, then write,
/// then allow), with the reasons of both when they are alike.
fn most_severe(a: Decision, b: Decision) -> Decision {
    let merge = |mut reasons: Vec<Reason>, more: Vec<Reason>| {
        for r in more {
            if !reasons.contains(&r) {
                reasons.push(r);
            }
        }
        reasons
    };
    match (a, b) {
        (Decision::Deny { reasons }, Decision::Deny { reasons: more }) => Decision::Deny {
            reasons: merge(reasons, more),
        },
        (deny @ Decision::Deny { .. }, _) | (_, deny @ Decision::Deny { .. }) => deny,
        (
            Decision::Confirm { kind, reasons },
            Decision::Confirm {
                kind: other,
                reasons: more,
            },
        ) => {
            if kind == other {
                Decision::Confirm {
                    kind,
                    reasons: merge(reasons, more),
                }
            } else if kind > other {
                Decision::Confirm { kind, reasons }
            } else {
                Decision::Confirm {
                    kind: other,
                    reasons: more,
                }
            }
        }
        (Decision::Allow, d) | (d, Decision::Allow) => d,
    }
}

fn reasons_out(reasons: &[Reason]) -> Vec<ReasonOut> {
    reasons.iter().map(ReasonOut::from).collect()
}

/// A planning failure as the model gets it: the files of one reply are
/// written together or not at all, so it must send them all again.
fn with_resend_hint(f: FileFailure) -> FileResult {
    let mut out = FileResult::from(f);
    if out.result.kind != Some("not_written") {
        out.result.text.push_str(
            "\n(The files of one reply are written all or none: nothing was written. Send the \
             edits of every file again, with this one corrected.)",
        );
    }
    out
}

/// The results of a text refused at file `at`: that file (and any other
/// the guard denied) refused, every other one not written because of it.
fn refused_text(plans: &[Plan], verdicts: Vec<Verdict>, at: usize) -> Vec<FileResult> {
    let refused: Vec<bool> = verdicts
        .iter()
        .enumerate()
        .map(|(i, v)| i == at || matches!(v.decision, Some(Decision::Deny { .. })))
        .collect();
    let bad: Vec<&str> = plans
        .iter()
        .zip(&refused)
        .filter(|(_, r)| **r)
        .map(|(p, _)| p.target())
        .collect();
    let bad = bad.join(", ");
    plans
        .iter()
        .zip(verdicts)
        .zip(refused)
        .map(|((plan, verdict), refused)| {
            let rel = plan.target();
            let mut result = if refused {
                refusal(rel, &verdict)
            } else {
                ToolResult::failed(
                    "not_written",
                    format!(
                        "{rel}: not written, because the edit of {bad} was refused; nothing \
                         from this text was written"
                    ),
                )
            };
            verdict.apply_to(&mut result);
            FileResult {
                path: rel.to_string(),
                result,
            }
        })
        .collect()
}

fn refusal(rel: &str, verdict: &Verdict) -> ToolResult {
    let why = match (&verdict.decision, &verdict.confirm) {
        (Some(Decision::Deny { .. }), _) => "it is denied",
        (_, Some(c)) if c.kind == "security" => "it needs a security confirm that was not given",
        _ => "the write was not approved",
    };
    let reasons: Vec<&str> = verdict
        .decision
        .as_ref()
        .map(|d| d.reasons().iter().map(|r| r.message.as_str()).collect())
        .unwrap_or_default();
    let mut result = ToolResult::failed(
        "refused",
        format!(
            "the edit of {rel} was refused: {why}: {}. Nothing from this text was written (its \
             files are written all or none). Do not send the same edit again; change what it \
             does or ask the user.",
            reasons.join("; ")
        ),
    );
    result.refused = true;
    result
}

/// A written file's result: the summary and the diff (or its size, when
/// long), then the engine's notes.
fn written_result(plan: &Plan, version: Option<String>) -> ToolResult {
    if plan.changes_nothing() {
        return ToolResult::ok(format!(
            "{} already has this content; nothing written",
            plan.file.rel
        ));
    }
    let diff = plan.unified_diff();
    let summary = plan.summary(Tense::Done);
    let shown = diff.lines().count();
    let mut text = if shown <= DIFF_SHOWN_LINES {
        format!("{summary}\n{diff}")
    } else {
        format!("{summary}\n(the diff has {shown} lines; read the file to see the result)")
    };
    for note in &plan.notes {
        text.push_str(&format!("\nnote: {note}"));
    }
    let mut result = ToolResult::ok(text);
    result.diff = diff;
    result.version = version;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::ConfirmKind;

    fn reason(message: &str) -> Reason {
        Reason {
            rule: "r",
            param: "path".into(),
            message: message.into(),
            line: None,
        }
    }

    #[test]
    fn format_names_round_trip() {
        for f in TextFormat::ALL {
            assert_eq!(TextFormat::from_name(f.name()), Some(f));
        }
        assert_eq!(TextFormat::from_name("diff"), None);
    }

    #[test]
    fn the_v4a_patch_is_cut_out_of_its_prose() {
        let patch = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
        let reply = format!("Here:\n```\n{patch}```\nDone.\n");
        assert_eq!(v4a_span(&reply), patch);
        assert_eq!(v4a_span(patch), patch);
        let cut = "So:\n*** Begin Patch\n*** Delete File: a\n";
        assert_eq!(v4a_span(cut), "*** Begin Patch\n*** Delete File: a\n");
        assert_eq!(v4a_span("no patch"), "no patch");
    }

    #[test]
    fn the_most_severe_decision_wins() {
        let write = |m| Decision::Confirm {
            kind: ConfirmKind::Write,
            reasons: vec![reason(m)],
        };
        let security = Decision::Confirm {
            kind: ConfirmKind::Security,
            reasons: vec![reason("s")],
        };
        let deny = Decision::Deny {
            reasons: vec![reason("d")],
        };
        assert_eq!(most_severe(write("w"), security.clone()), security);
        assert_eq!(most_severe(security.clone(), write("w")), security);
        assert_eq!(most_severe(write("w"), deny.clone()), deny);
        assert_eq!(most_severe(Decision::Allow, write("w")), write("w"));
        let both = most_severe(write("a"), write("b"));
        assert_eq!(both.reasons().len(), 2);
        assert_eq!(most_severe(write("a"), write("a")).reasons().len(), 1);
    }
}
