//! Running one call on the host: parse → guard → confirm → handler, the
//! same path for a model's JSON call and a Scheme strategy's positional
//! call. `host.rs` holds what a host is; the handlers (`fs.rs`,
//! `handlers.rs`, `tools/`) take a host and are dispatched from here.

use super::args::Shell;
use super::error::ToolError;
use super::fs::{self, Plan};
use super::handlers::{Handler, Output, primitive};
use super::host::{ConfirmOut, ConfirmRequest, Host, ReasonOut, ToolResult};
use super::table::lookup;
use super::{parse, tools};
use crate::call::{Call, Effect};
use crate::guard::{ConfirmKind, Decision, Reason};

impl Host {
    /// Parse a model's call (name and JSON argument text) and run it.
    pub fn run_json(&self, name: &str, arguments: &str) -> (Option<Call>, ToolResult) {
        let Some(decl) = lookup(name) else {
            let unknown = ToolError::UnknownTool {
                name: name.to_string(),
                known: super::table::ALL.iter().map(|d| d.name).collect(),
            };
            return (None, unknown.into());
        };
        match parse::parse_text(decl, arguments) {
            Ok(call) => {
                let result = self.run(&call);
                (Some(call), result)
            }
            Err(e) => (None, ToolError::from(e).into()),
        }
    }

    /// Run the calls of one reply: concurrently when all are read-only,
    /// otherwise in order.
    pub fn run_calls(&self, calls: &[Call]) -> Vec<ToolResult> {
        if calls.len() > 1 && calls.iter().all(|c| c.decl.effect == Effect::ReadOnly) {
            return std::thread::scope(|s| {
                let handles: Vec<_> = calls.iter().map(|c| s.spawn(|| self.run(c))).collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            ToolError::Bug("the tool failed unexpectedly (a bug in nib)".into())
                                .into()
                        })
                    })
                    .collect()
            });
        }
        calls.iter().map(|c| self.run(c)).collect()
    }

    /// Run one call through the guard.
    pub fn run(&self, call: &Call) -> ToolResult {
        self.sandbox();
        let decision = self.guard.judge(call, &self.ws);
        // Handles stand for secrets: the call runs with the real values,
        // which for a sink the guard has already flagged for a person's yes.
        let resolved = self.guard.resolve(call);
        let call = &resolved;
        let (mut result, decision) = match &decision {
            Decision::Deny { reasons } => (refused(call, "denied", reasons), decision),
            _ if call.decl.effect == Effect::ReadOnly => (self.read(call), decision),
            _ => self.change(call, decision),
        };
        let output = primitive(call.decl).map_or(Output::Untrusted, |p| p.output);
        match output {
            Output::GrepLines => self.observe_grep(&result.text),
            Output::FileRead => {
                if let Ok(file) = self.ws.resolve(call.arg("path").as_str()) {
                    self.guard.observe_read(&self.ws, &file.rel);
                }
            }
            Output::OwnWrite if result.ok && !result.refused => {
                if let Ok(file) = self.ws.resolve(call.arg("path").as_str()) {
                    self.guard.note_written(&file.rel);
                }
            }
            Output::OwnWrite | Output::Untrusted => {}
        }
        let untrusted = self.untrusted_output(call, output);
        // What a command or a listing printed, as a reader sees it: a
        // secret spelled with invisible characters between its letters is
        // the secret (`guard::visible`). A file's text stays exact, as
        // edits quote it.
        if !matches!(output, Output::FileRead)
            && let std::borrow::Cow::Owned(seen) = crate::guard::visible::visible(&result.text)
        {
            result.text = seen;
        }
        result.text = self.guard.observe_output(&result.text, untrusted);
        result.decision = decision.as_str();
        result.reasons = decision.reasons().iter().map(ReasonOut::from).collect();
        result
    }

    /// Lines index-grep found in protected files (`path:line:text`) are
    /// values of those files: the ledger learns them as fs-read's would.
    fn observe_grep(&self, text: &str) {
        for line in text.lines() {
            let Some((path, rest)) = line.split_once(':') else {
                continue;
            };
            let Some((number, content)) = rest.split_once(':') else {
                continue;
            };
            if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
                self.guard.observe_protected(path, content);
            }
        }
    }

    /// Whether a call's output is content nib did not write: files the
    /// session did not write, command output, history.
    fn untrusted_output(&self, call: &Call, output: Output) -> bool {
        match output {
            Output::OwnWrite => false,
            Output::FileRead => match self.ws.resolve(call.arg("path").as_str()) {
                Ok(r) => !self.state().written.contains(&r.rel),
                Err(_) => true,
            },
            Output::GrepLines | Output::Untrusted => true,
        }
    }

    fn read(&self, call: &Call) -> ToolResult {
        match primitive(call.decl).map(|p| p.handler) {
            Some(Handler::Read(run)) => run(self, call),
            _ => ToolError::Bug(format!(
                "{} is not a read-only primitive (a bug in nib)",
                call.decl.name
            ))
            .into(),
        }
    }

    /// Writes and commands: plan, judge the plan, confirm with the diff,
    /// then carry out. Returns the result and the final decision. A write
    /// whose file changed on disk while the confirm was open (or between
    /// plan and rename) is never renamed over that change: it is planned
    /// again on the current text and confirmed again with the new diff
    /// (fs-write then refuses: the model must read the file again).
    ///
    /// A call the guard asks a Security confirm for before anything is
    /// planned (a protected file's edit) tells the model nothing of the
    /// file until a person says yes: an edit that cannot be applied ("old
    /// not found", "appears 3 times", "unchanged") asks the same confirm,
    /// without a diff, and a no reads the same whatever the file holds
    /// (else each refused guess would be a yes/no question on the
    /// secret's next character).
    fn change(&self, call: &Call, decision: Decision) -> (ToolResult, Decision) {
        let consent_first = matches!(
            decision,
            Decision::Confirm {
                kind: ConfirmKind::Security,
                ..
            }
        );
        let mut replans = 0;
        loop {
            let plan = match primitive(call.decl).map(|p| p.handler) {
                Some(Handler::Change(plan)) => plan(self, call),
                _ => Err(ToolError::Bug(format!(
                    "{} has no write handler (a bug in nib)",
                    call.decl.name
                ))),
            };
            let plan = match plan {
                Ok(p) => p,
                Err(e) if consent_first => return self.consent_then(call, decision, e.into()),
                Err(e) => return (e.into(), decision),
            };
            if let Plan::Unchanged(text) = plan {
                if consent_first {
                    return self.consent_then(call, decision, ToolResult::ok(text));
                }
                return (ToolResult::ok(text), decision);
            }
            let judged = match &plan {
                Plan::Write(w) => decision.clone().with_security(self.guard.judge_write(
                    &w.file.rel,
                    w.before.as_deref().unwrap_or(""),
                    &w.after,
                )),
                _ => decision.clone(),
            };
            let again = (replans > 0).then(|| {
                format!(
                    "asked again: {} changed on disk after the last diff (another program wrote it); this diff is against what is there now",
                    match &plan {
                        Plan::Write(w) => w.rel(),
                        _ => call.decl.name,
                    }
                )
            });
            // A no repeats only what was known before the plan.
            let refusal_reasons = if consent_first {
                decision.reasons()
            } else {
                judged.reasons()
            };
            let (result, asked) =
                self.confirm_and_carry_out(call, plan, &judged, refusal_reasons, again.as_deref());
            if consent_first && asked.as_ref().is_some_and(|a| !a.approved) {
                let mut result = result.unwrap_or_else(ToolResult::from);
                result.confirm = asked;
                return (result, decision);
            }
            let mut result = match result {
                Err(e) if e.changed_on_disk() && replans < MAX_REPLANS => {
                    replans += 1;
                    continue;
                }
                Err(e) => ToolResult::from(e),
                Ok(r) => r,
            };
            if asked.is_some() {
                result.confirm = asked;
            }
            return (result, judged);
        }
    }

    /// Asks a Security confirm for a call whose plan failed (or changed
    /// nothing), without a diff: `outcome` is told only after a yes; a no
    /// reads as a no to a diff would.
    fn consent_then(
        &self,
        call: &Call,
        decision: Decision,
        outcome: ToolResult,
    ) -> (ToolResult, Decision) {
        let Decision::Confirm { kind, reasons } = &decision else {
            return (outcome, decision);
        };
        let request = ConfirmRequest {
            call,
            kind: *kind,
            reasons,
            diff: None,
            path: None,
            proposed: None,
            again: None,
        };
        let answer = (self.confirm)(&request);
        let asked = Some(ConfirmOut {
            kind: "security",
            approved: answer.approved,
        });
        let mut result = if answer.approved {
            outcome
        } else {
            refusal(call, *kind, reasons, answer.reason)
        };
        result.confirm = asked;
        (result, decision)
    }

    /// Asks the confirm the decision needs (returning what was asked, and
    /// its answer), then carries the plan out if it was approved; a no is
    /// told with `refusal_reasons`.
    fn confirm_and_carry_out(
        &self,
        call: &Call,
        plan: Plan,
        decision: &Decision,
        refusal_reasons: &[Reason],
        again: Option<&str>,
    ) -> (Result<ToolResult, ToolError>, Option<ConfirmOut>) {
        let Decision::Confirm { kind, reasons } = decision else {
            return (self.carry_out(call, plan), None);
        };
        let (diff, path, proposed) = match &plan {
            Plan::Write(w) => (Some(w.diff.as_str()), Some(w.rel()), Some(w.after())),
            _ => (None, None, None),
        };
        let request = ConfirmRequest {
            call,
            kind: *kind,
            reasons,
            diff,
            path,
            proposed,
            again,
        };
        let answer = (self.confirm)(&request);
        let asked = Some(ConfirmOut {
            kind: match kind {
                ConfirmKind::Write => "write",
                ConfirmKind::Security => "security",
            },
            approved: answer.approved,
        });
        if !answer.approved {
            return (
                Ok(refusal(call, *kind, refusal_reasons, answer.reason)),
                asked,
            );
        }
        let mut plan = plan;
        let mut changed_note = None;
        if let (Some(text), Plan::Write(w)) = (answer.edited, &mut plan) {
            match w.use_user_text(text) {
                Ok(note) => changed_note = note,
                Err(e) => return (Err(e), asked),
            }
        }
        let result = self.carry_out(call, plan).map(|mut result| {
            if let Some(note) = changed_note.filter(|_| result.ok) {
                result.text = format!("{note}\n{}", result.text);
            }
            result
        });
        (result, asked)
    }

    fn carry_out(&self, call: &Call, plan: Plan) -> Result<ToolResult, ToolError> {
        match plan {
            Plan::Write(w) => fs::commit(self, *w),
            Plan::Exec => {
                let sandbox = self.sandbox();
                let (files, mounts, plan_note) = sandbox.command_plans(&self.guard, &self.ws)?;
                let auto_run = matches!(self.shell_place, tools::ShellPlace::Local).then(|| {
                    let seen = sandbox
                        .watching()
                        .then(|| self.guard.run_later_seen(&self.ws))
                        .flatten();
                    tools::autorun::snapshot(self.ws.root(), seen.as_deref())
                });
                let contained = mounts.is_some();
                let repo_before = sandbox.before_command(&self.guard, &self.ws);
                let result = tools::shell_in(
                    &self.shell_place,
                    &self.ws,
                    Shell::of(call).command,
                    Shell::of(call).timeout,
                    tools::Confinement {
                        network: self.guard.policy().shell_network,
                        files: files.as_ref(),
                        mounts,
                        env: Some(&sandbox.env),
                    },
                    Some(tools::Stop {
                        cancel: &self.cancel,
                        deadline: Some(&self.deadline_passed),
                    }),
                );
                let written = sandbox.written_files();
                let undone = auto_run
                    .map(|s| s.undo(self.ws.root(), written.as_deref()))
                    .unwrap_or_default();
                let copies = sandbox.after_command(
                    &self.guard,
                    &self.ws,
                    repo_before,
                    written.as_deref().unwrap_or_default(),
                );
                result.map(|mut text| {
                    text.push_str(&plan_note);
                    text.push_str(&undone);
                    text.push_str(&copies);
                    let config_refused = ["could not write config file", "could not lock config file", "could not set '"]
                        .iter()
                        .any(|m| text.contains(m));
                    if contained && config_refused {
                        // What to do instead, rather than a retry that
                        // fails the same way.
                        text.push_str(
                            "note: git's settings (.git/config) are read-only to commands, as a setting can run a program later outside nib's sandbox. For one command, give the setting to git: `git -c user.name='…' -c user.email='…' commit …`; a remote (`git remote add`) or a lasting setting is the user's to make.\n",
                        );
                    }
                    ToolResult::ok(text)
                })
            }
            Plan::Unchanged(text) => Ok(ToolResult::ok(text)),
        }
    }
}

/// How often a write is planned again because its file changed on disk
/// before nib gives up (a file rewritten faster than nib can confirm).
const MAX_REPLANS: usize = 50;

/// A confirm answered no, with the person's reason when they gave one.
fn refusal(call: &Call, kind: ConfirmKind, reasons: &[Reason], said: Option<String>) -> ToolResult {
    let why = match kind {
        ConfirmKind::Write => "the write was not approved",
        ConfirmKind::Security => "it needs a security confirm that was not given",
    };
    let mut result = refused(call, why, reasons);
    if let Some(reason) = said.filter(|r| !r.trim().is_empty()) {
        result
            .text
            .push_str(&format!("\nThe user said why: {}", reason.trim()));
    }
    result
}

fn refused(call: &Call, why: &str, reasons: &[Reason]) -> ToolResult {
    let reasons: Vec<String> = reasons.iter().map(|r| r.message.clone()).collect();
    // The call is named by tool and path only: its payload may be what the
    // guard objected to.
    let path = call.arg("path").as_str();
    let what = if path.is_empty() {
        call.decl.name.to_string()
    } else {
        format!("{} {path}", call.decl.name)
    };
    let mut result = ToolResult::failed(
        "refused",
        format!(
            "{what} was refused: {why}: {}. Do not retry the same call; change what it does \
             or ask the user.",
            reasons.join("; ")
        ),
    );
    result.refused = true;
    result
}
