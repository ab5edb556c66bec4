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
        let (written, tainted, contained, known_stores, store_inodes) = {
            let known = self.known();
            let stores: Vec<String> = known
                .skipped_stores
                .iter()
                .filter_map(|p| p.strip_prefix(ws.root()).ok())
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            (
                known.written.clone(),
                known.tainted.clone(),
                known.contained,
                stores,
                known.stores.keys().copied().collect(),
            )
        };
        let disk = disk::WorkspaceDisk {
            ws,
            rules,
            written: &written,
            tainted: &tainted,
            resolved: Default::default(),
            masked: contained.mounts,
            known_stores: &known_stores,
            store_inodes: &store_inodes,
            shown: Default::default(),
        };
        let analysis = shell::analyze_with(command, &disk);
        self.track_writes(&disk, &analysis, &written);
        let mut out: Vec<Reason> = analysis
            .findings
            .iter()
            .filter(|f| !kernel_contains(f.rule, contained))
            .map(|f| Reason::new(f.rule, "command", f.message.clone()))
            .collect();
        // "a script this session wrote is judged as if typed here" only
        // introduces the findings inside it: alone, it has nothing left
        // to explain.
        if out.iter().all(|r| r.rule == "script") {
            out.clear();
        }
        // Once a secret reached the model in clear, anything that can carry
        // data out needs a person, whatever encoding the data is in.
        if self.known().seen_clear {
            if !contained.network {
                out.push(Reason::new(
                    "session-taint",
                    "command",
                    "this session showed the model a secret in clear, and commands have network: this one could send it anywhere",
                ));
            }
            if analysis.outgoing.is_some() {
                out.push(Reason::new(
                    "session-taint",
                    "command",
                    "this session showed the model a secret in clear: a commit or push could carry it out of the workspace",
                ));
            }
        }
        // The names are remembered between commands; git runs without the
        // session's lock held.
        let history = analysis.git_history.as_ref().and_then(|pathspecs| {
            let mut names = std::mem::take(&mut self.known().history);
            let found = git::history_protected(ws, rules, pathspecs, &mut names);
            self.known().history = names;
            found
        });
        if let Some(name) = history {
            out.push(Reason::new(
                "git-history",
                "command",
                format!("the command prints file contents from the repository, which holds the protected file {name}"),
            ));
        }
        if let Some(outgoing) = &analysis.outgoing {
            match git::outgoing_text(ws, outgoing, &analysis.staging) {
                Ok((text, added)) => {
                    // A protected file new to the repository is a leak in
                    // itself, whatever its content looks like.
                    for name in added.iter().filter(|n| {
                        !n.to_lowercase().starts_with(".git/")
                            && (rules.is_protected(n) || tainted.contains(n.as_str()))
                    }) {
                        out.push(Reason::new(
                            "outgoing-diff",
                            "command",
                            format!("the commit would add the protected file {name} to the repository"),
                        ));
                    }
                    let mut found = Vec::new();
                    let mut known = self.known();
                    let looked = sinks::look(&known.ledger, &text);
                    sinks::scan_value(&mut known, "the outgoing diff".into(), Role::Payload, &text, looked, &|_| false, &mut found);
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

impl Guard {
    /// After judging a command: a script the session wrote stays one under
    /// the name `mv`/`cp` give it, and a file the command writes may be a
    /// script too (`cat > run.sh <<EOF`). The files the command writes are
    /// read back once it has run (at the next call), for secrets that
    /// reached them in a form the command line did not show.
    fn track_writes(
        &self,
        disk: &disk::WorkspaceDisk<'_>,
        analysis: &shell::ShellAnalysis,
        written: &std::collections::HashSet<String>,
    ) {
        let ws = disk.ws;
        let rel = |w: &str| match disk.resolve(w) {
            disk::Resolution::Inside(r) => Some(r.rel),
            _ => None,
        };
        let mut known = self.known();
        for (from, to) in &analysis.moves {
            let (Some(from), Some(to)) = (rel(from), rel(to)) else {
                continue;
            };
            if written.contains(&from) {
                let name = from.rsplit('/').next().unwrap_or(&from);
                let into = ws.resolve(&to).is_ok_and(|r| r.real.is_dir());
                let dest = if into { format!("{to}/{name}") } else { to };
                known.written.insert(dest);
            }
        }
        for target in &analysis.writes {
            if let Some(r) = rel(target) {
                known.written.insert(r.clone());
                if known.pending.len() < MAX_PENDING && !known.pending.contains(&r) {
                    known.pending.push(r);
                }
            }
        }
    }

    /// The files the last commands wrote, read now that they have run: one
    /// holding a known secret (raw or in a form the ledger knows) is
    /// treated as protected from here on, whatever its name.
    pub(super) fn check_pending(&self, ws: &Workspace) {
        let mut known = self.known();
        if known.pending.is_empty() {
            return;
        }
        for rel in std::mem::take(&mut known.pending) {
            let Some(text) = disk::current_text(ws, &rel).filter(|t| t.len() <= MAX_PENDING_BYTES)
            else {
                continue;
            };
            if !known.ledger.check(&text).is_empty() {
                known.tainted.insert(rel);
            }
        }
    }
}

/// Whether the kernel already takes away what a word rule is about, so
/// asking a person would only cost a yes: network use in a private
/// network namespace; credentials read from an environment that no longer
/// holds them (another process's environment is out of reach too: commands
/// see only their own processes); writes outside the workspace where
/// Landlock and the private temp directories refuse them; an archive of a
/// workspace whose secrets read as empty; and what only hides which
/// command runs (a substitution, `eval`, a decoded pipe into a shell, a
/// sourced file): whatever it turns out to run has no network, reads the
/// secret stores as empty and cannot leave a hook behind.
fn kernel_contains(rule: &str, contained: super::Containment) -> bool {
    match rule {
        "command-substitution"
        | "process-substitution"
        | "ansi-c-quoting"
        | "eval"
        | "decode-pipe"
        | "pipe-to-interpreter"
        | "source"
        | "nesting" => contained.network && contained.mounts && contained.env,
        "network" | "network-redirect" => contained.network,
        "env-secret" | "env-dump" => contained.env,
        "outside-workspace" => contained.writes && contained.mounts,
        "archive-workspace" => contained.mounts,
        // git's settings are read-only to commands: a setting given for
        // one command (`git -c`) runs what it names inside the sandbox.
        "git-config" => contained.mounts,
        // What plumbing writes is looked at when the command ends, at the
        // boundary: the index, every ref it made or moved, replace refs
        // (`prim/tools/gitcheck.rs`).
        "git-plumbing" => contained.mounts,
        // `.git/config` is read-only to commands: a remote cannot be
        // added. A push reaches no host without the network, and no
        // repository outside the workspace without writes there; what
        // it would send is still checked for secrets (`outgoing`).
        "git-remote" => contained.mounts,
        "git-push" => contained.network && contained.writes && contained.mounts,
        _ => false,
    }
}

/// Files written by one command read back afterwards, at most.
const MAX_PENDING: usize = 32;
const MAX_PENDING_BYTES: usize = 256 * 1024;
