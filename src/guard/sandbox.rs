//! The file sandbox's plan: what a shell command may read and write,
//! computed from the workspace and the path rules just before it runs, for
//! the kernel to enforce (`prim/tools/landlock.rs`). The word rules judge
//! what a command says; this bounds what it can do whatever it says.
//!
//! - the whole file system readable and executable, nothing writable;
//! - the workspace and the temp directories writable (and `/dev`'s
//!   devices, for `> /dev/null`);
//! - the secret stores unreadable: the workspace's (`.env`, keys, what the
//!   user or the project protects, files a command wrote with a known
//!   secret) and the home directory's credential stores (`~/.ssh`,
//!   `~/.aws`, `~/.config/gh`, ...).
//!
//! Landlock only grants, by hierarchy: a right given to a directory holds
//! for everything beneath it. To keep `ws/.env` unreadable no directory
//! above it may carry the read right; each of them keeps its other rights,
//! and the read right goes to each of its entries instead, except the one
//! on the way to the hidden file, where the same split repeats. So the
//! hidden file and what a command creates directly in a directory above a
//! hidden one (the workspace root when `.env` is there, `/tmp` when the
//! workspace is in it) is unreadable during that command; the next command
//! is planned afresh and reads it.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::paths::PathRules;

/// Access rights, numbered as Landlock numbers them
/// (`LANDLOCK_ACCESS_FS_*`); the kernel layer drops what it does not know.
pub mod access {
    pub const EXECUTE: u64 = 1 << 0;
    pub const WRITE_FILE: u64 = 1 << 1;
    pub const READ_FILE: u64 = 1 << 2;
    pub const READ_DIR: u64 = 1 << 3;
    pub const REMOVE_DIR: u64 = 1 << 4;
    pub const REMOVE_FILE: u64 = 1 << 5;
    pub const MAKE_CHAR: u64 = 1 << 6;
    pub const MAKE_DIR: u64 = 1 << 7;
    pub const MAKE_REG: u64 = 1 << 8;
    pub const MAKE_SOCK: u64 = 1 << 9;
    pub const MAKE_FIFO: u64 = 1 << 10;
    pub const MAKE_BLOCK: u64 = 1 << 11;
    pub const MAKE_SYM: u64 = 1 << 12;
    pub const REFER: u64 = 1 << 13;
    pub const TRUNCATE: u64 = 1 << 14;
    pub const IOCTL_DEV: u64 = 1 << 15;

    /// Reading and running.
    pub const READ: u64 = EXECUTE | READ_FILE | READ_DIR;
    /// Everything: reading, writing, making and removing entries.
    pub const ALL: u64 = (1 << 16) - 1;
    /// Writing to existing device files (`/dev/null`, a terminal).
    pub const DEVICES: u64 = READ | WRITE_FILE | TRUNCATE | IOCTL_DEV;
    /// The rights that mean something on a file (not a directory).
    pub const FILE: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    /// What a hidden entry does not get: its content. Listing a directory
    /// that holds it stays allowed (names are not secrets, and `ls` of the
    /// workspace root must work).
    pub const HIDE: u64 = READ_FILE | EXECUTE;
}

/// One grant: `access` on `path` and everything beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub path: PathBuf,
    pub access: u64,
    /// `path` is a directory (a file takes only [`access::FILE`] rights).
    pub dir: bool,
}

/// The plan for one command.
#[derive(Debug, Clone, Default)]
pub struct FilePlan {
    pub grants: Vec<Grant>,
    /// What the command cannot read (absolute, canonical).
    pub hidden: Vec<PathBuf>,
    /// Where it may write.
    pub writable: Vec<PathBuf>,
    /// The workspace walk stopped at its bound: secret stores deeper in
    /// a huge tree may be readable.
    pub truncated: bool,
}

/// Credential stores in a home directory beyond the built-in secret
/// patterns: tools' own token files and shell histories.
const HOME_STORES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".password-store",
    ".config/gh",
    ".config/gcloud",
    ".config/hub",
    ".config/nib",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".terraform.d/credentials.tfrc.json",
    ".local/share/keyrings",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
];

/// The plan for a command in the workspace at `root` (canonical).
/// `workspace` is `Some` when the workspace's own secrets are hidden too,
/// with more files to hide (written by a command with a secret in them);
/// `home` is the user's home directory, `temp` the temp directories
/// (those that exist are writable).
pub fn plan(
    root: &Path,
    rules: &PathRules,
    workspace: Option<&[String]>,
    home: Option<&Path>,
    temp: &[PathBuf],
) -> FilePlan {
    let mut hidden: Vec<PathBuf> = Vec::new();
    let mut truncated = false;
    if let Some(extra) = workspace {
        truncated = workspace_secrets(root, rules, &mut hidden);
        for rel in extra {
            hidden.push(root.join(rel));
        }
    }
    if let Some(home) = home.and_then(|h| h.canonicalize().ok()) {
        home_secrets(&home, rules, &mut hidden);
    }
    // The workspace itself is the user's choice of place: never hidden,
    // even inside a credential directory.
    hidden.retain(|h| !root.starts_with(h));
    hidden.sort();
    hidden.dedup();

    let mut writable = vec![root.to_path_buf()];
    for t in temp {
        if let Ok(real) = t.canonicalize()
            && real.is_dir()
            && !writable.contains(&real)
        {
            writable.push(real);
        }
    }
    let mut roots: Vec<(PathBuf, u64)> = vec![(PathBuf::from("/"), access::READ)];
    roots.extend(writable.iter().map(|w| (w.clone(), access::ALL)));
    roots.push((PathBuf::from("/dev"), access::DEVICES));

    let on_path: HashSet<PathBuf> = hidden
        .iter()
        .flat_map(|h| h.ancestors().skip(1).map(Path::to_path_buf))
        .collect();
    let hidden_set: HashSet<&Path> = hidden.iter().map(PathBuf::as_path).collect();
    let mut rights: BTreeMap<PathBuf, (u64, bool)> = BTreeMap::new();
    for (path, bits) in roots {
        if path.exists() {
            grant(&path, true, bits, &hidden_set, &on_path, &mut rights);
        }
    }
    let grants = rights
        .into_iter()
        .filter(|(_, (bits, _))| *bits != 0)
        .map(|(path, (access, dir))| Grant { path, access, dir })
        .collect();
    FilePlan {
        grants,
        hidden,
        writable,
        truncated,
    }
}

/// Gives `bits` on `path`, keeping [`access::HIDE`] off every hidden
/// entry: a directory above one gets the other bits, and its entries get
/// the hidden bits one by one (recursively along the way down).
fn grant(
    path: &Path,
    dir: bool,
    bits: u64,
    hidden: &HashSet<&Path>,
    on_path: &HashSet<PathBuf>,
    out: &mut BTreeMap<PathBuf, (u64, bool)>,
) {
    let mut add = |p: &Path, b: u64| {
        let b = if dir { b } else { b & access::FILE };
        let slot = out.entry(p.to_path_buf()).or_insert((0, dir));
        slot.0 |= b;
    };
    if hidden.contains(path) {
        add(path, bits & !access::HIDE);
        return;
    }
    if !dir || !on_path.contains(path) {
        add(path, bits);
        return;
    }
    add(path, bits & !access::HIDE);
    let pushed = bits & access::HIDE;
    if pushed == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        // A link's target is granted on its own path; a grant on the link
        // itself would mean nothing.
        if kind.is_symlink() {
            continue;
        }
        grant(&entry.path(), kind.is_dir(), pushed, hidden, on_path, out);
    }
}

/// The workspace's secret stores on disk, and every other name of one
/// (a hard link: Landlock grants by inode, so a readable second name
/// would make the secret readable). True when the walk stopped at its
/// bound.
pub(super) fn workspace_secrets(root: &Path, rules: &PathRules, out: &mut Vec<PathBuf>) -> bool {
    let found = super::storewalk::walk(root, rules, &mut Default::default());
    out.extend(found.stores);
    // What the walk could not look into is hidden whole: fail closed.
    out.extend(found.blind);
    found.truncated
}

/// The home directory's credential stores that exist: its top-level
/// entries the built-in secret patterns name (`.npmrc`, `.netrc`,
/// `.pgpass`, `.env`), and [`HOME_STORES`].
fn home_secrets(home: &Path, rules: &PathRules, out: &mut Vec<PathBuf>) {
    if let Ok(entries) = std::fs::read_dir(home) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if rules.is_builtin_secret_store(&name)
                && let Ok(real) = entry.path().canonicalize()
            {
                out.push(real);
            }
        }
    }
    for store in HOME_STORES {
        if let Ok(real) = home.join(store).canonicalize() {
            out.push(real);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// The rights a path ends up with: the union of the grants on it and
    /// on every directory above it, as the kernel computes them.
    fn effective(plan: &FilePlan, path: &Path) -> u64 {
        plan.grants
            .iter()
            .filter(|g| path.starts_with(&g.path))
            .fold(0, |acc, g| acc | g.access)
    }

    #[test]
    fn secrets_are_unreadable_and_their_neighbours_are_not() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("ws/src")).unwrap();
        fs::create_dir_all(dir.path().join("home/.ssh")).unwrap();
        fs::write(dir.path().join("ws/.env"), "K=v\n").unwrap();
        fs::write(dir.path().join("ws/.env.example"), "K=\n").unwrap();
        fs::write(dir.path().join("ws/src/app.py"), "x = 1\n").unwrap();
        fs::write(
            dir.path().join("ws/src/server.pem"),
            "-----BEGIN PRIVATE KEY-----\n",
        )
        .unwrap();
        fs::write(dir.path().join("home/.ssh/id_ed25519"), "key\n").unwrap();
        fs::write(dir.path().join("home/.npmrc"), "//r/:_authToken=x\n").unwrap();
        fs::write(dir.path().join("home/.bashrc"), "alias\n").unwrap();
        let root = dir.path().join("ws").canonicalize().unwrap();
        let home = dir.path().join("home").canonicalize().unwrap();
        let plan = plan(
            &root,
            &PathRules::default(),
            Some(&[]),
            Some(&home),
            &[PathBuf::from("/nonexistent-temp")],
        );
        let reads = |p: &Path| effective(&plan, p) & access::READ_FILE != 0;
        let writes = |p: &Path| effective(&plan, p) & access::WRITE_FILE != 0;
        for secret in [
            root.join(".env"),
            root.join("src/server.pem"),
            home.join(".ssh/id_ed25519"),
            home.join(".npmrc"),
        ] {
            assert!(!reads(&secret), "{} readable", secret.display());
        }
        for open in [
            root.join(".env.example"),
            root.join("src/app.py"),
            home.join(".bashrc"),
            PathBuf::from("/usr/bin/env"),
        ] {
            assert!(reads(&open), "{} unreadable", open.display());
        }
        // Writable: the workspace, its `.env` too (cp .env.example .env);
        // not the home directory.
        assert!(writes(&root.join("src/app.py")) && writes(&root.join(".env")));
        assert!(!writes(&home.join(".bashrc")));
        // Listing the workspace root still works.
        assert!(effective(&plan, &root) & access::READ_DIR != 0);
        assert!(!plan.truncated);
        assert_eq!(plan.hidden.len(), 4, "{:?}", plan.hidden);
    }

    #[test]
    fn a_hard_link_to_a_secret_is_hidden_too() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("ws/src")).unwrap();
        fs::write(dir.path().join("ws/.env"), "K=v\n").unwrap();
        fs::hard_link(
            dir.path().join("ws/.env"),
            dir.path().join("ws/src/notes.txt"),
        )
        .unwrap();
        let root = dir.path().join("ws").canonicalize().unwrap();
        let plan = plan(&root, &PathRules::default(), Some(&[]), None, &[]);
        assert!(
            plan.hidden.contains(&root.join("src/notes.txt")),
            "{:?}",
            plan.hidden
        );
        assert_eq!(
            effective(&plan, &root.join("src/notes.txt")) & access::READ_FILE,
            0
        );
    }

    #[test]
    fn a_link_to_a_secret_hides_its_target() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("ws")).unwrap();
        fs::create_dir_all(dir.path().join("outside")).unwrap();
        fs::write(dir.path().join("outside/prod.env"), "K=v\n").unwrap();
        std::os::unix::fs::symlink("../outside/prod.env", dir.path().join("ws/.env")).unwrap();
        let root = dir.path().join("ws").canonicalize().unwrap();
        let plan = plan(&root, &PathRules::default(), Some(&[]), None, &[]);
        let target = dir.path().join("outside/prod.env").canonicalize().unwrap();
        assert_eq!(plan.hidden, std::slice::from_ref(&target));
        assert_eq!(effective(&plan, &target) & access::READ_FILE, 0);
    }
}
