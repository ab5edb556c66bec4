//! A scenario's ground: the temp root (`ws/`, the workspace, beside
//! `outside/`), the files and links the scenario creates with their
//! placeholders expanded, and its git repository when it asks for one.
//! The fixture's git runs plainly (not `files::git`): it builds the
//! scenario's own repository, which nothing untrusted has configured.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Scenario;
use super::placeholders::{Canaries, tags_in};

pub(super) fn mkdir(p: &Path) -> Result<(), String> {
    fs::create_dir_all(p).map_err(|e| format!("could not create {}: {e}", p.display()))
}

/// Where a scenario path is: `@outside/X` beside the workspace, anything
/// else in it.
pub(super) fn locate(root: &Path, path: &str) -> PathBuf {
    match path.strip_prefix("@outside/") {
        Some(rest) => root.join("outside").join(rest),
        None => root.join("ws").join(path),
    }
}

/// Files created by the scenario: their scenario path and the canary tags
/// their text holds (those files are where the canaries belong).
pub(super) type Created = Vec<(String, Vec<String>)>;

pub(super) fn setup(
    scenario: &Scenario,
    root: &Path,
    canaries: &mut Canaries,
) -> Result<Created, String> {
    let mut created = Vec::new();
    let files = scenario.files.iter().map(|(p, t)| (p.clone(), t)).chain(
        scenario
            .outside
            .iter()
            .map(|(p, t)| (format!("@outside/{p}"), t)),
    );
    for (path, text) in files {
        let real = locate(root, &path);
        if let Some(parent) = real.parent() {
            mkdir(parent)?;
        }
        let body = canaries.expand(text).map_err(|e| format!("{path}: {e}"))?;
        fs::write(&real, body).map_err(|e| format!("could not write {path}: {e}"))?;
        created.push((path, tags_in(text)));
    }
    for (link, target) in &scenario.links {
        let at = root.join("ws").join(link);
        let to = match target.strip_prefix("@outside/") {
            Some(rest) => format!("outside/{rest}"),
            None => format!("ws/{target}"),
        };
        let from = format!("ws/{link}");
        if let Some(parent) = at.parent() {
            mkdir(parent)?;
        }
        std::os::unix::fs::symlink(relative(&from, &to), &at)
            .map_err(|e| format!("could not link {link} to {target}: {e}"))?;
    }
    Ok(created)
}

/// The link text that leads from the link at `from` to `to` (both relative
/// to the temp root, `/`-separated).
fn relative(from: &str, to: &str) -> String {
    let from: Vec<&str> = from.split('/').collect();
    let dir = &from[..from.len() - 1];
    let to: Vec<&str> = to.split('/').collect();
    let common = dir.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; dir.len() - common];
    parts.extend(&to[common..]);
    parts.join("/")
}

pub(super) fn git(ws: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|e| format!("could not run git: {e}; (git) scenarios need git on PATH"))?;
    if !out.status.success() {
        return Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A repository with the named paths (or everything) committed, and an
/// identity so the model's own `git commit` works.
pub(super) fn git_setup(ws: &Path, paths: &[String]) -> Result<(), String> {
    git(ws, &["init", "-q", "-b", "main"])?;
    git(ws, &["config", "user.name", "nib scenario"])?;
    git(ws, &["config", "user.email", "scenario@nib.invalid"])?;
    git(ws, &["config", "commit.gpgsign", "false"])?;
    if paths.is_empty() {
        git(ws, &["add", "-A"])?;
    } else {
        let mut args = vec!["add", "--"];
        args.extend(paths.iter().map(String::as_str));
        git(ws, &args)?;
    }
    git(
        ws,
        &["commit", "-q", "--allow-empty", "-m", "scenario setup"],
    )?;
    Ok(())
}

pub(super) fn commits(ws: &Path) -> BTreeSet<String> {
    git(ws, &["rev-list", "--all"])
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// A temp directory removed on drop (the crate has no tempfile dependency
/// outside tests).
pub(super) struct TempDir(pub(super) PathBuf);

static TEMP_SERIAL: AtomicU64 = AtomicU64::new(0);

impl TempDir {
    pub(super) fn new() -> std::io::Result<TempDir> {
        let base = std::env::temp_dir();
        loop {
            let name = format!(
                "nib-scenario-{}-{}-{}",
                std::process::id(),
                TEMP_SERIAL.fetch_add(1, Ordering::Relaxed),
                super::placeholders::fresh_seed() % 1_000_000
            );
            let path = base.join(name);
            match fs::create_dir(&path) {
                Ok(()) => {
                    // Canonical, so the workspace root and the links agree.
                    let path = fs::canonicalize(&path).unwrap_or(path);
                    return Ok(TempDir(path));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Keeps the directory: it is not removed on drop.
    pub(super) fn keep(self) -> PathBuf {
        let path = self.0.clone();
        std::mem::forget(self);
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_text_is_relative() {
        assert_eq!(relative("ws/notes.md", "ws/config/.env"), "config/.env");
        assert_eq!(
            relative("ws/a/b.md", "outside/v.txt"),
            "../../outside/v.txt"
        );
        assert_eq!(relative("ws/a/b.md", "ws/a/c"), "c");
    }
}
