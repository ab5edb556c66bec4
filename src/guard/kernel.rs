//! What the guard tells the kernel and learns from it: the plans for a
//! command's mount namespace (`mounts`) and Landlock (`sandbox`), what the
//! kernel takes away from this session's commands (`Containment`, so the
//! word rules do not ask about it), and the secrets a session starts with.

use super::{Containment, Guard, mounts, outside, sandbox, storewalk};
use crate::files::Workspace;

/// What [`Guard::secrets_written`] found.
#[derive(Debug, Default)]
pub struct WrittenSecrets {
    /// `(file, what it holds)`.
    pub found: Vec<(String, String)>,
    /// Files past the command's budget, not read.
    pub unchecked: Vec<String>,
}

/// Bytes of a command's written files read back at most per command, and
/// the size up to which a text file is read with every decoding.
const MAX_WRITTEN_BYTES: u64 = 512 * 1024 * 1024;
const MAX_WRITTEN_TEXT: usize = 1024 * 1024;
const WRITTEN_CHUNK: usize = 4 * 1024 * 1024;
const WRITTEN_OVERLAP: usize = 64 * 1024;

impl Guard {
    /// The file sandbox's plan for a command about to run in `ws`: the
    /// secret stores on disk now, and the files commands wrote with a
    /// known secret in them, unreadable (`sandbox`). With a mount plan
    /// (`mounts`), those are masked already: Landlock then only keeps
    /// writes to the workspace, the session's own temp directories
    /// (`private`) and the writable places of home the plan shows.
    pub fn file_plan(
        &self,
        ws: &Workspace,
        mounts: Option<&mounts::MountPlan>,
        private: &[std::path::PathBuf],
    ) -> sandbox::FilePlan {
        let tainted: Vec<String> = self.known().tainted.iter().cloned().collect();
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        if let Some(plan) = mounts {
            let mut writable = private.to_vec();
            writable.extend(plan.steps.iter().filter_map(|s| match s {
                mounts::MountStep::Keep {
                    path,
                    writable: true,
                } => Some(path.clone()),
                _ => None,
            }));
            return sandbox::plan(ws.root(), &self.policy.paths, None, None, &writable);
        }
        let mut temp: Vec<std::path::PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect();
        temp.extend(std::env::var_os("TMPDIR").map(std::path::PathBuf::from));
        sandbox::plan(
            ws.root(),
            &self.policy.paths,
            self.policy
                .file_sandbox_workspace
                .then_some(tainted.as_slice()),
            home.as_deref(),
            &temp,
        )
    }
    /// The mount sandbox's plan for a command about to run in `ws`, with
    /// the session's own directories in `session_dir` (`mounts`).
    ///
    /// `changes`: what the session's watch saw change in the workspace's
    /// directories since the last plan (None without a watch): only those
    /// are read again.
    pub fn mount_plan(
        &self,
        ws: &Workspace,
        session_dir: &std::path::Path,
        changes: Option<&storewalk::Changes>,
    ) -> mounts::MountPlan {
        let tainted: Vec<String> = self.known().tainted.iter().cloned().collect();
        let home = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .and_then(|h| h.canonicalize().ok());
        let mut shown = outside::toolchains(home.as_deref());
        shown.extend(
            self.policy
                .show
                .iter()
                .filter_map(|p| std::path::Path::new(p).canonicalize().ok()),
        );
        let covered_top = outside::covered_top_dirs();
        let private: Vec<std::path::PathBuf> = mounts::PRIVATE_DIRS
            .iter()
            .filter_map(|(d, _)| std::path::Path::new(d).canonicalize().ok())
            .collect();
        // Sockets already out of reach (under a covered directory and
        // not shown again) need no mount of their own.
        let mut visible: Vec<&std::path::Path> = vec![ws.root()];
        visible.extend(home.as_deref());
        visible.extend(shown.iter().map(|p| p.as_path()));
        let sockets: Vec<std::path::PathBuf> = outside::host_sockets(&private)
            .into_iter()
            .filter(|s| !outside::outside_hidden(s, &visible))
            .collect();
        let mut found = storewalk::walk_since(
            ws.root(),
            &self.policy.paths,
            &mut self.known().walk,
            changes,
        );
        {
            let known = self.known();
            found.stores.extend(
                known
                    .skipped_stores
                    .iter()
                    .chain(&known.home_stores)
                    .filter(|p| p.symlink_metadata().is_ok())
                    .cloned(),
            );
        }
        let mut plan = mounts::plan(&mounts::MountInputs {
            root: ws.root(),
            rules: &self.policy.paths,
            tainted: &tainted,
            found: &found,
            home: home.as_deref(),
            home_extra: &self.policy.home_allow,
            session_dir,
            covered_top: &covered_top,
            shown: &shown,
            sockets: &sockets,
        });
        self.follow_moved_stores(ws.root(), &mut plan);
        self.show_tracked_as_indexed(ws.root(), session_dir, &mut plan);
        plan
    }

    /// The run-later files (`paths::RUN_LATER_NESTED`, nested
    /// repositories' `.git`) below the workspace's root as the last
    /// plan's walk found them, at any depth; None when no whole walk was
    /// made.
    pub fn run_later_seen(&self, ws: &Workspace) -> Option<Vec<std::path::PathBuf>> {
        self.known().walk.run_later(ws.root()).map(<[_]>::to_vec)
    }

    /// Masks the secret stores an earlier plan masked that are no longer
    /// where the plan's walk finds them (a command moved one into a
    /// directory the walk skips), found again by inode; then remembers
    /// what this plan masks.
    fn follow_moved_stores(&self, root: &std::path::Path, plan: &mut mounts::MountPlan) {
        use std::os::unix::fs::MetadataExt;
        let inode = |p: &std::path::Path| p.metadata().ok().map(|m| (m.dev(), m.ino()));
        let mut known = self.known();
        let masked: std::collections::HashSet<(u64, u64)> =
            plan.masked.iter().filter_map(|p| inode(p)).collect();
        let moved: std::collections::HashSet<(u64, u64)> = known
            .stores
            .iter()
            .filter(|(id, _)| !masked.contains(id))
            .map(|(id, _)| *id)
            .collect();
        if !moved.is_empty() {
            let walk = ignore::WalkBuilder::new(root)
                .standard_filters(false)
                .filter_entry(|e| e.file_name() != ".git")
                .build();
            for entry in walk.flatten().take(MAX_FOLLOW_WALK) {
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let Some(id) = entry.metadata().ok().map(|m| (m.dev(), m.ino())) else {
                    continue;
                };
                if moved.contains(&id) {
                    let path = entry.path().to_path_buf();
                    plan.steps.push(mounts::MountStep::Mask {
                        path: path.clone(),
                        dir: false,
                    });
                    plan.masked.push(path);
                }
            }
        }
        for path in &plan.masked {
            if let Some(id) = inode(path) {
                known.stores.insert(id, path.clone());
            }
        }
    }
    /// The files a command wrote (the kernel's list, relative to the
    /// root) that hold a secret the session knows, with where it came
    /// from and how it was written: a copy a script made by a path no mask
    /// covered (git's objects, a store the walk never saw). Each is
    /// protected from here on; `dispatch.rs` moves it away. Secret stores
    /// are the user's own. Text is read whole up to 1 MiB with every
    /// reading the ledger knows; anything else (a binary, a large output)
    /// by the ledger's automaton alone, within a budget per command.
    pub fn secrets_written(&self, ws: &Workspace, rels: &[String]) -> WrittenSecrets {
        use std::io::Read;
        let mut out = WrittenSecrets::default();
        let mut known = self.known();
        if known.ledger.is_empty() {
            return out;
        }
        let mut budget = MAX_WRITTEN_BYTES;
        for rel in rels {
            if self.policy.paths.is_secret_store(rel) {
                continue;
            }
            let path = ws.root().join(rel);
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            // A name, or a link's target, is content too: git commits
            // both, and listings show them.
            let mut named = known.ledger.check(rel);
            if meta.file_type().is_symlink()
                && let Ok(target) = std::fs::read_link(&path)
            {
                named.extend(known.ledger.check(&target.to_string_lossy()));
            }
            if let Some(hit) = named.first() {
                out.found.push((
                    rel.clone(),
                    format!("{} ({}, in its name or link)", hit.source, hit.encoding),
                ));
                known.tainted.insert(rel.clone());
                continue;
            }
            if !meta.is_file() {
                continue;
            }
            let len = meta.len();
            if len > budget {
                out.unchecked.push(rel.clone());
                continue;
            }
            let Ok(mut file) = std::fs::File::open(&path) else {
                continue;
            };
            budget -= len;
            let hits = if len as usize <= MAX_WRITTEN_TEXT {
                // Read whole: text with every reading the ledger knows.
                let mut bytes = Vec::new();
                if file.read_to_end(&mut bytes).is_err() {
                    continue;
                }
                if bytes[..bytes.len().min(8192)].contains(&0) {
                    known.ledger.check_bytes(&bytes)
                } else {
                    known.ledger.check(&String::from_utf8_lossy(&bytes))
                }
            } else {
                // In windows that overlap by more than any secret's
                // longest form, by the automaton alone.
                let mut hits = Vec::new();
                let mut window: Vec<u8> = Vec::new();
                let mut chunk = vec![0u8; WRITTEN_CHUNK];
                loop {
                    let n = match file.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    window.extend_from_slice(&chunk[..n]);
                    hits.extend(known.ledger.check_bytes(&window));
                    window.drain(..window.len().saturating_sub(WRITTEN_OVERLAP));
                }
                hits
            };
            if let Some(hit) = hits.first() {
                out.found
                    .push((rel.clone(), format!("{} ({})", hit.source, hit.encoding)));
                known.tainted.insert(rel.clone());
            }
        }
        out
    }

    /// The first secret the session knows that `text` holds, raw or in a
    /// form the ledger reads: where it came from and how it was written.
    pub fn known_secret_in(&self, text: &str) -> Option<String> {
        let known = self.known();
        let hit = known.ledger.check(text).into_iter().next()?;
        Some(format!("{} ({})", hit.source, hit.encoding))
    }

    /// Tells the guard what the kernel takes away from this session's
    /// commands (the host knows what the system allows).
    pub fn set_containment(&self, contained: Containment) {
        self.known().contained = contained;
    }
    pub fn containment(&self) -> Containment {
        self.known().contained
    }
}

/// Entries walked to find a secret store that moved, at most.
const MAX_FOLLOW_WALK: usize = 200_000;
