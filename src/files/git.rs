//! The one way nib runs git: hardened against what a cloned repository can
//! set up to run or to mislead. Every git command nib runs itself (the git
//! primitives, the guard's look at history and at what a commit will hold,
//! swebench's worktrees and patches, the scenario runner's fixtures) goes
//! through [`run`]:
//!
//! - no program of the repository's runs: `core.fsmonitor` and
//!   `core.hooksPath` are switched off, signing and signature checks too
//!   (`gpg.program` is a program the config names), every filter driver
//!   the config defines becomes `cat` (a `.gitattributes` anywhere, even a
//!   nested repository's or `info/attributes`, could send a file through
//!   one on `diff` or `status`), and commands that print diffs get
//!   `--no-textconv --no-ext-diff` (a textconv or external-diff driver is a
//!   program the repository names);
//! - the caller's environment cannot redirect git elsewhere: `GIT_DIR`,
//!   `GIT_WORK_TREE`, `GIT_INDEX_FILE`, the object directories, the
//!   namespace and `GIT_EXTERNAL_DIFF` are removed (a caller that needs an
//!   index of its own passes it in `env`);
//! - no pager, no colour, paths unquoted, no prompt, no optional locks
//!   (a read never blocks a user's own git), stdin closed unless given.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// What a git command printed, and whether it succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitOutput {
    pub ok: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl GitOutput {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Why git could not be run at all.
#[derive(Debug)]
pub enum GitError {
    /// No `git` on PATH.
    NotInstalled,
    Io(io::Error),
    /// A file git reads on its own in the repository is a link: git would
    /// read (and print in its errors) whatever it points at, on the host.
    Linked(String),
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::NotInstalled => {
                f.write_str("git is not installed (or not on PATH); install git and retry")
            }
            GitError::Io(e) => write!(f, "could not run git: {e}; check that git is runnable"),
            GitError::Linked(what) => write!(
                f,
                "{what} is a link, which git would follow to read a file outside the repository; nib runs no git here until the user removes it"
            ),
        }
    }
}

impl std::error::Error for GitError {}

/// Subcommands that print diffs, which get `--no-textconv --no-ext-diff`.
const DIFF_PRINTING: &[&str] = &["diff", "log", "show", "format-patch", "whatchanged"];

/// Environment variables that would point git somewhere else.
const SCRUBBED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_EXTERNAL_DIFF",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// Files git reads on its own in a repository's `.git`: one a command
/// replaced with a link would make nib's git (on the host, outside the
/// sandbox) read the host file it points at, and print its lines in an
/// error the model sees.
const GIT_INTERNALS: &[&str] = &[
    "HEAD",
    "packed-refs",
    "index",
    "config",
    "commondir",
    "objects",
    "objects/info",
    "objects/info/alternates",
    "objects/info/http-alternates",
    "refs",
    "refs/heads",
    "info",
    "info/exclude",
    "info/attributes",
    "info/grafts",
    "shallow",
];

/// Refuses a repository whose git internals are links ([`GIT_INTERNALS`]).
fn linked_internals(dir: &Path) -> Result<(), GitError> {
    let git_dir = dir.join(".git");
    if !git_dir
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_dir())
    {
        return Ok(()); // a worktree's `.git` file, or no repository here
    }
    for name in GIT_INTERNALS {
        if git_dir
            .join(name)
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(GitError::Linked(format!(".git/{name}")));
        }
    }
    Ok(())
}

/// Where a repository keeps its state: its git directory (`.git`, or
/// where a `.git` file points: a linked worktree's or a submodule's, with
/// its index and `HEAD`) and the common one (`commondir`: config, hooks,
/// refs, objects; the same directory for a plain repository).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDirs {
    pub git_dir: std::path::PathBuf,
    pub common: std::path::PathBuf,
}

/// The git directories of the repository whose work tree is `dir`, read
/// from its `.git` (a directory, or a `gitdir:` file) and `commondir`;
/// None when `dir` has no `.git` of either kind.
pub fn locate(dir: &Path) -> Option<GitDirs> {
    let dot_git = dir.join(".git");
    let meta = dot_git.symlink_metadata().ok()?;
    let git_dir = if meta.is_dir() {
        dot_git
    } else {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        dir.join(text.strip_prefix("gitdir:")?.trim())
    };
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => git_dir.join(c.trim()),
        Err(_) => git_dir.clone(),
    };
    Some(GitDirs { git_dir, common })
}

/// The git nib runs on the host for the repository at `dir`: the first on
/// `PATH` that no command could have put there. A `PATH` that starts with
/// the project's virtualenv (`.venv/bin`) or a writable cache (`~/go/bin`)
/// would otherwise run a `git` a command planted, outside the sandbox, at
/// the next git tool call or commit check.
pub fn program(dir: &Path) -> std::path::PathBuf {
    let home = std::env::var_os("HOME").and_then(|h| Path::new(&h).canonicalize().ok());
    program_on(
        dir,
        &std::env::var_os("PATH").unwrap_or_default(),
        home.as_deref(),
    )
}

/// [`program`] for a given `PATH` and home.
fn program_on(dir: &Path, path: &OsStr, home: Option<&Path>) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let workspace = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let caches = home.map(super::home::writable).unwrap_or_default();
    let writable =
        |entry: &Path| entry.starts_with(&workspace) || caches.iter().any(|c| entry.starts_with(c));
    for entry in std::env::split_paths(path) {
        let Ok(entry) = entry.canonicalize() else {
            continue; // relative, or missing
        };
        if writable(&entry) {
            continue;
        }
        let git = entry.join("git");
        if git
            .metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        {
            return git;
        }
    }
    "git".into()
}

/// Runs `git -C dir <args>`, hardened as the module says; `env` is set
/// after the scrubbing, `input` goes to stdin.
pub fn run(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &OsStr)],
    input: Option<&[u8]>,
) -> Result<GitOutput, GitError> {
    linked_internals(dir)?;
    let mut cmd = Command::new(program(dir));
    cmd.arg("-C").arg(dir).args([
        "--no-pager",
        "-c",
        "core.quotepath=false",
        "-c",
        "color.ui=false",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.attributesFile=/dev/null",
        "-c",
        "commit.gpgSign=false",
        "-c",
        "tag.gpgSign=false",
        "-c",
        "log.showSignature=false",
        "-c",
        "gpg.program=false",
        "-c",
        "gpg.ssh.program=false",
        "-c",
        "gpg.x509.program=false",
    ]);
    // `-C sub` among the arguments: the repository git works in there.
    let mut repo = dir.to_path_buf();
    let mut rest = args;
    while let ["-C", path, tail @ ..] = rest {
        repo = repo.join(path);
        rest = tail;
    }
    for name in filter_drivers(&repo) {
        for (var, value) in [("clean", "cat"), ("smudge", "cat"), ("process", "")] {
            cmd.arg("-c").arg(format!("filter.{name}.{var}={value}"));
        }
    }
    cmd.args(&args[..args.len() - rest.len()]);
    match rest.split_first() {
        Some((sub, tail)) if DIFF_PRINTING.contains(sub) => {
            cmd.arg(sub)
                .args(["--no-textconv", "--no-ext-diff"])
                .args(tail);
        }
        _ => {
            cmd.args(rest);
        }
    }
    cmd.env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        // What git shows is the objects as they are: a replace ref
        // (`git replace BAD GOOD`) would show nib's checks and tools GOOD
        // while a push sends BAD.
        .env("GIT_NO_REPLACE_OBJECTS", "1");
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    // Its own process group: a Ctrl-C at the terminal is nib's to handle
    // (swebench drains on the first), not a kill of the git command that
    // happens to be running (a half-made worktree).
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => GitError::NotInstalled,
        _ => GitError::Io(e),
    })?;
    if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
        // Written from a thread: a large input must not block on a full
        // pipe while git's output fills the other one. A git that exits
        // early closes its stdin; what it said matters more.
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
        });
    }
    let out = child.wait_with_output().map_err(GitError::Io)?;
    Ok(GitOutput {
        ok: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// The filter drivers the repository's config (with its includes)
/// defines: `filter.<name>.clean`, `.smudge` or `.process`, remembered
/// while no config file git reads for `dir` changes (asking is a git
/// process, most of a quick git call's cost).
fn filter_drivers(dir: &Path) -> Vec<String> {
    use std::sync::Mutex;
    type Stamps = Vec<Option<ConfigStamp>>;
    /// By repository directory: the stamps its answer was asked under.
    static REMEMBERED: Mutex<Vec<(std::path::PathBuf, Stamps, Vec<String>)>> =
        Mutex::new(Vec::new());
    /// Repositories remembered at most (a session works in a few).
    const MAX_REMEMBERED: usize = 64;
    let files = config_files(dir);
    let stamps: Option<Stamps> = files
        .as_ref()
        .map(|f| f.iter().map(|p| ConfigStamp::of(p)).collect());
    if let Some(stamps) = &stamps
        && let Some((_, _, names)) = REMEMBERED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(d, was, _)| d == dir && was == stamps)
    {
        return names.clone();
    }
    let names = ask_filter_drivers(dir);
    if let (Some(files), Some(stamps)) = (files, stamps)
        && rememberable(&files, &stamps)
    {
        let mut remembered = REMEMBERED.lock().unwrap_or_else(|p| p.into_inner());
        remembered.retain(|(d, _, _)| d != dir);
        if remembered.len() >= MAX_REMEMBERED {
            remembered.remove(0);
        }
        remembered.push((dir.to_path_buf(), stamps, names.clone()));
    }
    names
}

/// When a config file last changed, as far as a `stat` tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ConfigStamp {
    modified: (i64, i64),
    len: u64,
    inode: u64,
}

impl ConfigStamp {
    fn of(path: &Path) -> Option<ConfigStamp> {
        use std::os::unix::fs::MetadataExt;
        let m = path.metadata().ok()?;
        Some(ConfigStamp {
            modified: (m.mtime(), m.mtime_nsec()),
            len: m.len(),
            inode: m.ino(),
        })
    }
}

/// The config files git reads for the repository at `dir` (system,
/// global, local, worktree); None where this cannot tell (no `.git`
/// directory found, a `.git` file), so nothing is remembered.
fn config_files(dir: &Path) -> Option<Vec<std::path::PathBuf>> {
    let mut files = user_config_files();
    let mut at = dir.canonicalize().ok()?;
    loop {
        let git = at.join(".git");
        match git.symlink_metadata() {
            Ok(m) if m.is_dir() => {
                files.push(git.join("config"));
                files.push(git.join("config.worktree"));
                return Some(files);
            }
            Ok(_) => return None,
            Err(_) => at = at.parent()?.to_path_buf(),
        }
    }
}

/// The config files git reads for every repository: the system's and the
/// user's (`GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL`
/// obeyed), whether or not they exist.
pub fn user_config_files() -> Vec<std::path::PathBuf> {
    let env_path = |k: &str| std::env::var_os(k).map(std::path::PathBuf::from);
    let mut files = Vec::new();
    if std::env::var_os("GIT_CONFIG_NOSYSTEM").is_none() {
        files.push(env_path("GIT_CONFIG_SYSTEM").unwrap_or_else(|| "/etc/gitconfig".into()));
    }
    match env_path("GIT_CONFIG_GLOBAL") {
        Some(global) => files.push(global),
        None => {
            let home = env_path("HOME");
            files.extend(home.as_ref().map(|h| h.join(".gitconfig")));
            files.extend(
                env_path("XDG_CONFIG_HOME")
                    .or_else(|| home.map(|h| h.join(".config")))
                    .map(|c| c.join("git/config")),
            );
        }
    }
    files
}

/// The `key = value` lines of git config text, each with its section's
/// name lower-cased (`core`, `include`, `includeif` for
/// `[includeIf "gitdir:…"]`) and the value unquoted. Enough for the
/// settings nib looks at; git's own parser is a process away.
pub fn config_entries(text: &str) -> Vec<(String, &str, &str)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            section = header
                .split([']', ' ', '\t', '"', '.'])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            out.push((section.clone(), key.trim(), value.trim().trim_matches('"')));
        }
    }
    out
}

/// Whether what was asked may be remembered: no config file includes
/// another (which could change unseen), none changed in the last two
/// seconds (a change within the clock's tick would leave its stamp).
fn rememberable(files: &[std::path::PathBuf], stamps: &[Option<ConfigStamp>]) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(i64::MAX);
    files.iter().zip(stamps).all(|(file, stamp)| match stamp {
        None => true,
        Some(stamp) => {
            now - stamp.modified.0 > 2
                && std::fs::read(file).is_ok_and(|text| {
                    !String::from_utf8_lossy(&text)
                        .to_ascii_lowercase()
                        .contains("include")
                })
        }
    })
}

/// Asks git for the filter drivers. Reading config runs nothing.
fn ask_filter_drivers(dir: &Path) -> Vec<String> {
    let out = Command::new(program(dir))
        .arg("-C")
        .arg(dir)
        .args([
            "config",
            "--null",
            "--get-regexp",
            r"^filter\..*\.(clean|smudge|process)$",
        ])
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .env_remove("GIT_DIR")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let Ok(out) = out else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for entry in out.stdout.split(|&b| b == 0) {
        // `filter.<name>.<var>\n<value>`; a name may hold dots.
        let key = entry.split(|&b| b == b'\n').next().unwrap_or_default();
        let key = String::from_utf8_lossy(key);
        if let Some(rest) = key.strip_prefix("filter.")
            && let Some((name, _)) = rest.rsplit_once('.')
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_string());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_entries_carry_their_section() {
        let text = "[core]\n\tbare = false\n\thooksPath = \"tools/hooks\"\n[includeIf \"gitdir:~/w/\"]\n\tpath = ../shared.gitconfig\n[alias]\n\thookspath = x\n# a comment\n";
        assert_eq!(
            config_entries(text),
            [
                ("core".to_string(), "bare", "false"),
                ("core".to_string(), "hooksPath", "tools/hooks"),
                ("includeif".to_string(), "path", "../shared.gitconfig"),
                ("alias".to_string(), "hookspath", "x"),
            ]
        );
    }

    #[test]
    fn a_filter_added_after_the_answer_was_remembered_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let git = |args: &[&str]| {
            assert!(
                Command::new("git")
                    .arg("-C")
                    .arg(&root)
                    .args(args)
                    .status()
                    .unwrap()
                    .success()
            )
        };
        git(&["init", "-q"]);
        // Older than the two seconds a change may hide in: remembered.
        let age = |path: &Path| {
            assert!(
                Command::new("touch")
                    .args(["-d", "1 hour ago"])
                    .arg(path)
                    .status()
                    .unwrap()
                    .success()
            )
        };
        age(&root.join(".git/config"));
        assert!(filter_drivers(&root).is_empty());
        assert!(filter_drivers(&root).is_empty());
        // A driver defined since: its stamp moved, so git is asked again.
        git(&["config", "filter.evil.clean", "touch RAN"]);
        assert_eq!(filter_drivers(&root), vec!["evil".to_string()]);
        // One in a file the config includes is never taken from memory.
        std::fs::write(root.join("extra.cfg"), "").unwrap();
        git(&["config", "--unset", "filter.evil.clean"]);
        git(&["config", "include.path", "../extra.cfg"]);
        age(&root.join(".git/config"));
        assert!(filter_drivers(&root).is_empty());
        std::fs::write(
            root.join("extra.cfg"),
            "[filter \"other\"]\n\tsmudge = touch RAN\n",
        )
        .unwrap();
        age(&root.join("extra.cfg"));
        assert_eq!(filter_drivers(&root), vec!["other".to_string()]);
    }

    #[test]
    fn a_link_planted_in_git_internals_stops_nibs_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/objects/info")).unwrap();
        assert!(linked_internals(root).is_ok());
        std::os::unix::fs::symlink("/etc/hostname", root.join(".git/packed-refs")).unwrap();
        let e = linked_internals(root).unwrap_err();
        assert!(e.to_string().contains(".git/packed-refs is a link"), "{e}");
    }

    #[test]
    fn a_git_a_command_could_plant_is_never_the_one_nib_runs() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let fake = |d: &Path| {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("git"), "#!/bin/sh\necho planted\n").unwrap();
            std::fs::set_permissions(d.join("git"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        };
        let ws = base.join("ws");
        let home = base.join("home");
        let system = base.join("usr/bin");
        fake(&ws.join(".venv/bin"));
        fake(&home.join("go/bin"));
        fake(&home.join(".mytool-cache/bin"));
        fake(&system);
        // A place the user's config makes writable to commands counts too.
        super::super::home::add_writable(&["~/.mytool-cache".to_string()]);
        let path = std::env::join_paths([
            ws.join(".venv/bin"),
            home.join("go/bin"),
            home.join(".mytool-cache/bin"),
            "relative/bin".into(),
            system.clone(),
        ])
        .unwrap();
        assert_eq!(program_on(&ws, &path, Some(&home)), system.join("git"));
    }

    #[test]
    fn a_repository_filter_driver_never_runs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let sh = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(args)
                .status()
                .unwrap()
                .success();
            assert!(ok, "{args:?}");
        };
        sh(&["init", "-q"]);
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        sh(&["add", "."]);
        sh(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "one",
        ]);
        let marker = root.join("ran");
        let evil = format!("touch {}; cat", marker.display());
        sh(&["config", "filter.evil.clean", &evil]);
        sh(&["config", "filter.evil.smudge", &evil]);
        // Both places attributes come from: the tree and info/attributes.
        std::fs::write(root.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".git/info/attributes"), "*.txt filter=evil\n").unwrap();
        std::fs::write(root.join("a.txt"), "two\n").unwrap();
        for args in [
            &["diff", "HEAD"][..],
            &["status", "--porcelain"],
            &["add", "a.txt"],
        ] {
            let out = run(root, args, &[], None).unwrap();
            assert!(out.ok, "{args:?}: {}", out.stderr);
            assert!(!marker.exists(), "the filter ran for {args:?}");
        }
    }

    #[test]
    fn a_repository_textconv_driver_never_runs() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let git = |args: &[&str]| run(d, args, &[], None).unwrap();
        assert!(git(&["init", "-q"]).ok);
        git(&["config", "user.email", "t@t"]);
        git(&["config", "user.name", "t"]);
        let marker = d.join("ran");
        std::fs::write(d.join(".gitattributes"), "*.txt diff=evil\n").unwrap();
        git(&[
            "config",
            "diff.evil.textconv",
            &format!("touch {}; cat", marker.display()),
        ]);
        std::fs::write(d.join("a.txt"), "one\n").unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "one"]);
        std::fs::write(d.join("a.txt"), "two\n").unwrap();
        let diff = git(&["diff"]);
        assert!(diff.ok, "{}", diff.stderr);
        assert!(diff.stdout_text().contains("+two"));
        let log = git(&["log", "-p"]);
        assert!(log.ok, "{}", log.stderr);
        assert!(!marker.exists(), "the repository's textconv program ran");
    }
}
