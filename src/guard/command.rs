//! Judging a `shell` call's command line: the shell analysis (`shell`),
//! with the questions it asks about the disk answered from the workspace
//! (`disk`), then the repository checks (`git`): history that would be
//! printed, and the diff a commit or push would send out, scanned like a
//! payload. Separate from `mod.rs` because it is the one place those three
//! meet.

use super::{Guard, Reason, disk, git, shell, sinks};
use crate::call::Role;
use crate::files::Workspace;

impl Guard {
    /// Findings about a shell command line: its shape, and for a commit or
    /// push the secrets in what would leave.
    pub(super) fn judge_command(&self, command: &str, ws: &Workspace) -> Vec<Reason> {
        let rules = &self.policy.paths;
        let is_protected = |word: &str| disk::names_protected(ws, rules, word);
        let reaches =
            |word: &str, reach: shell::Reach| disk::protected_reached(ws, rules, word, reach);
        let written = self.known().written.clone();
        let script = |word: &str| disk::session_script(ws, &written, word);
        let analysis = shell::analyze_on_disk(command, &is_protected, &reaches, &script);
        let mut out: Vec<Reason> = analysis
            .findings
            .iter()
            .map(|f| Reason::new(f.rule, "command", f.message.clone()))
            .collect();
        if let Some(pathspecs) = &analysis.git_history
            && let Some(name) = git::history_protected(ws, rules, pathspecs)
        {
            out.push(Reason::new(
                "git-history",
                "command",
                format!("the command prints file contents from the repository, which holds the protected file {name}"),
            ));
        }
        if let Some(outgoing) = &analysis.outgoing {
            match git::outgoing_text(ws, outgoing, &analysis.segments) {
                Ok((text, added)) => {
                    // A protected file new to the repository is a leak in
                    // itself, whatever its content looks like.
                    for name in added.iter().filter(|n| {
                        !n.to_lowercase().starts_with(".git/") && rules.is_protected(n)
                    }) {
                        out.push(Reason::new(
                            "outgoing-diff",
                            "command",
                            format!("the commit would add the protected file {name} to the repository"),
                        ));
                    }
                    let mut found = Vec::new();
                    let mut known = self.known();
                    sinks::scan_value(&mut known, "the outgoing diff".into(), Role::Payload, &text, &|_| false, &mut found);
                    for mut r in found {
                        r.rule = "outgoing-diff";
                        out.push(r);
                    }
                }
                Err(e) => out.push(Reason::new(
                    "outgoing-diff",
                    "command",
                    format!("could not read what the command would send out ({e}), so it needs a person's yes"),
                )),
            }
        }
        out
    }
}
