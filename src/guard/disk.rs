//! The on-disk questions the shell analysis asks, answered from the
//! workspace: which protected files a glob expands to or a directory read
//! recursively holds, whether a word names a protected path (a directory
//! that is one, a hard link to one), and the text of a script this session
//! wrote. Read-only; kept apart so the shell analysis stays pure over
//! strings and every walk of the tree is bounded in one place.

use std::collections::HashSet;

use super::paths::PathRules;
use super::shell;
use crate::files::Workspace;

/// The shell analysis's questions, answered from the workspace.
pub(super) struct WorkspaceDisk<'a> {
    pub(super) ws: &'a Workspace,
    pub(super) rules: &'a PathRules,
    /// Files this session wrote (or a command of it wrote or renamed).
    pub(super) written: &'a HashSet<String>,
    /// Files a command wrote that hold a known secret.
    pub(super) tainted: &'a HashSet<String>,
    /// Words resolved during this analysis: a command asks about the same
    /// word several times (read, write, outside), and each resolution
    /// walks the path on disk.
    pub(super) resolved: std::cell::RefCell<std::collections::HashMap<String, Resolution>>,
    /// Commands run in the mount sandbox: the secret stores (and what a
    /// command wrote with a secret in it) read as empty there, and the
    /// home directory shows only toolchains, so reading them is no
    /// finding. Writing them still is where writing needs a person.
    pub(super) masked: bool,
    /// Secret stores the plan covers that the walk does not reach by name
    /// (inside dependency and build directories), relative.
    pub(super) known_stores: &'a [String],
    /// The stores earlier plans masked, by inode: found again wherever a
    /// command moved one (`kernel.rs`, `follow_moved_stores`).
    pub(super) store_inodes: &'a HashSet<(u64, u64)>,
    /// Home and the toolchains shown outside it, looked up once per
    /// command line ([`WorkspaceDisk::hidden_from_commands`]).
    pub(super) shown: std::cell::OnceCell<(Option<std::path::PathBuf>, Vec<std::path::PathBuf>)>,
}

/// A word resolved in the workspace, or where it lands outside it.
#[derive(Clone)]
pub(super) enum Resolution {
    Inside(crate::files::Resolved),
    Outside(std::path::PathBuf),
    Invalid,
}

impl WorkspaceDisk<'_> {
    pub(super) fn resolve(&self, word: &str) -> Resolution {
        if let Some(r) = self.resolved.borrow().get(word) {
            return r.clone();
        }
        let r = match self.ws.resolve(word) {
            Ok(r) => Resolution::Inside(r),
            Err(crate::files::FileError::OutsideWorkspace { real, .. }) => {
                Resolution::Outside(real)
            }
            Err(_) => Resolution::Invalid,
        };
        self.resolved
            .borrow_mut()
            .insert(word.to_string(), r.clone());
        r
    }
}

impl shell::Disk for WorkspaceDisk<'_> {
    /// A shell word names a protected path: the file itself, a protected
    /// directory as a whole (`.git`, `.ssh`), a denied path, a hard link to
    /// a protected file, a file a command wrote with a secret in it; outside
    /// the workspace, a path whose last parts are a protected name
    /// (`~/.aws/credentials`) or a home credential store.
    ///
    /// What a read exposes: a secret store, git's own config (a remote's
    /// URL may carry a token), a denied path. Files that only run code
    /// later (CI workflows, editor tasks, hooks) hold nothing secret:
    /// reading them is ordinary work (`grep 'run:' .github/workflows/*`),
    /// writing them is judged as a write.
    fn is_protected(&self, word: &str) -> bool {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        if word.starts_with('~') || word.starts_with("$HOME") {
            return !self.masked && outside_protected(self.rules, word);
        }
        let secret = |rel: &str| {
            self.rules.is_secret_store(rel)
                || rel.eq_ignore_ascii_case(".git/config")
                || rel.eq_ignore_ascii_case(".git")
        };
        match self.resolve(word) {
            Resolution::Inside(r) if self.masked && self.masks(&r.rel) => false,
            Resolution::Inside(r) => {
                secret(&r.rel)
                    // a protected directory (`.ssh`) as a whole
                    || (r.real.is_dir() && self.rules.is_secret_store(&format!("{}/x", r.rel)))
                    || hard_link_alias(self.ws, self.rules, &r.rel).is_some()
                    || self.tainted.contains(&r.rel)
            }
            Resolution::Outside(real) => {
                !(self.masked && self.hidden_from_commands(&real))
                    && (outside_protected(self.rules, word)
                        || outside_protected(self.rules, &real.to_string_lossy()))
            }
            Resolution::Invalid => secret(word),
        }
    }
    fn reaches(&self, word: &str, reach: shell::Reach) -> Vec<String> {
        let mut hits = protected_reached(self.ws, self.rules, word, reach);
        if self.masked {
            hits.retain(|rel| !self.masks(rel));
        }
        hits
    }
    fn script(&self, word: &str) -> Option<String> {
        session_script(self.ws, self.written, word)
    }
    fn text(&self, word: &str) -> Option<String> {
        let rel = self.ws.resolve(word).ok()?.rel;
        if self.rules.is_protected(&rel) {
            return None; // judged as a protected operand, never read here
        }
        current_text(self.ws, &rel).filter(|t| t.len() <= MAX_SCRIPT)
    }
    fn outside(&self, word: &str) -> bool {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        if word.is_empty() || word.contains('$') && !word.starts_with("$HOME") {
            return false; // run-time names are judged by the operand rules
        }
        // The system's scratch space (`/tmp/…`, `/var/tmp/…` spelled out)
        // and the `/dev` streams are not the user's files.
        if matches!(
            word,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) || word.starts_with("/dev/fd/")
            || ((word.starts_with("/tmp/") || word.starts_with("/var/tmp/"))
                && !word.contains(".."))
        {
            return false;
        }
        if word.starts_with('~') || word.starts_with("$HOME") {
            return true;
        }
        !matches!(self.resolve(word), Resolution::Inside(_))
    }
    fn write_needs_person(&self, word: &str) -> bool {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        match self.resolve(word) {
            Resolution::Inside(r) => {
                self.rules.write_needs_person(&r.rel)
                    || (r.real.is_dir() && self.rules.write_needs_person(&format!("{}/x", r.rel)))
            }
            // outside: judged by `outside`
            _ => false,
        }
    }
    fn session_code(&self) -> Vec<(String, String)> {
        let mut names: Vec<&String> = self.written.iter().filter(|r| is_code(r)).collect();
        names.sort();
        names
            .into_iter()
            .take(MAX_SESSION_CODE)
            .filter_map(|rel| Some((rel.clone(), session_script(self.ws, self.written, rel)?)))
            .collect()
    }
}

impl WorkspaceDisk<'_> {
    /// Whether the mount sandbox covers the workspace file `rel`: a
    /// secret store, its hard-link twin, or a file a command wrote with a
    /// secret (the same list `mounts::plan` masks). The rest of `.git/`
    /// and the files that run code stay what the word rules judge.
    /// Whether the mount plan covers `rel`: a secret store where the walk
    /// looks (not under a dependency or build directory it skips), a file
    /// a command wrote with a secret, another name of a store, nib's own
    /// stores.
    fn masks(&self, rel: &str) -> bool {
        let rel = rel.trim_start_matches("./");
        let walked = rel.rsplit_once('/').is_none_or(|(dirs, _)| {
            !dirs.split('/').any(|d| {
                super::storewalk::NOT_WALKED
                    .iter()
                    .any(|n| d.eq_ignore_ascii_case(n))
            })
        });
        !rel.is_empty()
            && ((walked && self.rules.is_secret_store(rel))
                || self.known_stores.iter().any(|s| s == rel)
                || self.tainted.contains(rel)
                || rel == super::mounts::NIB_OWN
                || rel.starts_with(".nib/")
                || self.moved_store(rel)
                || hard_link_alias(self.ws, self.rules, rel).is_some())
    }

    /// Whether `real` (outside the workspace) is covered by the mount
    /// sandbox: in home outside what it shows through, or under a
    /// top-level directory that is not the system's (`outside`) and no
    /// toolchain.
    fn hidden_from_commands(&self, real: &std::path::Path) -> bool {
        let (home, toolchains) = self.shown.get_or_init(|| {
            let home = std::env::var_os("HOME")
                .and_then(|h| std::path::PathBuf::from(h).canonicalize().ok());
            let toolchains = super::outside::toolchains(home.as_deref());
            (home, toolchains)
        });
        if let Some(rel) = home.as_deref().and_then(|h| real.strip_prefix(h).ok()) {
            return super::mounts::home_entry_masked(&rel.to_string_lossy());
        }
        let shown: Vec<&std::path::Path> = toolchains.iter().map(|p| p.as_path()).collect();
        super::outside::outside_hidden(real, &shown)
    }

    /// Whether `rel` is a secret store an earlier plan masked, under a
    /// new name.
    fn moved_store(&self, rel: &str) -> bool {
        use std::os::unix::fs::MetadataExt;
        !self.store_inodes.is_empty()
            && std::fs::metadata(self.ws.root().join(rel))
                .is_ok_and(|m| self.store_inodes.contains(&(m.dev(), m.ino())))
    }
}

/// Session files read back when a command runs code at most.
const MAX_SESSION_CODE: usize = 64;

/// Files whose text a command may run: scripts and modules by extension,
/// and the build and task files runners read (`Makefile`, `package.json`,
/// `conftest.py`, `setup.py`, `build.rs`…).
fn is_code(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "py" | "sh"
            | "bash"
            | "zsh"
            | "js"
            | "mjs"
            | "cjs"
            | "ts"
            | "rb"
            | "pl"
            | "pm"
            | "php"
            | "lua"
            | "mk"
            | "rs"
            | "go"
            | "java"
            | "kts"
            | "gradle"
            | "r"
            | "jl"
            | "tcl"
            | "ps1"
    ) || matches!(
        name.as_str(),
        "makefile"
            | "gnumakefile"
            | "package.json"
            | "composer.json"
            | "justfile"
            | "rakefile"
            | "dockerfile"
            | "tox.ini"
            | "noxfile.py"
            | "setup.cfg"
            | "pyproject.toml"
    )
}

/// Credential stores in a home directory that the workspace patterns do
/// not name (they are not files a project holds), besides those inside
/// the parts of home commands see (`mounts::HOME_CREDENTIALS`).
const HOME_CREDENTIALS: &[&str] = &[
    ".config/gh/",
    ".config/gcloud/",
    ".config/nib/",
    ".config/hub",
    ".azure/",
    ".docker/",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".terraform.d/credentials.tfrc.json",
];

/// A path outside the workspace is a credential file when one of its
/// trailing parts is protected by the rules (`.aws/credentials`,
/// `.ssh/id_rsa`, `.env`) or names a home credential store; and
/// `/etc/shadow`-like system secrets.
fn outside_protected(rules: &PathRules, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    if path.starts_with("/etc/shadow")
        || path.starts_with("/etc/gshadow")
        || path.starts_with("/etc/sudoers")
    {
        return true;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != "~" && *p != "$HOME")
        .collect();
    (0..parts.len()).rev().take(5).any(|i| {
        let tail = parts[i..].join("/");
        rules.is_protected(&tail)
            || HOME_CREDENTIALS
                .iter()
                .chain(super::mounts::HOME_CREDENTIALS)
                .any(|c| {
                    let c = c.trim_end_matches('/');
                    tail.eq_ignore_ascii_case(c)
                        || tail
                            .to_ascii_lowercase()
                            .starts_with(&format!("{}/", c.to_ascii_lowercase()))
                })
    })
}

/// The text of the script a word names, when this session wrote it (and
/// it is not too long to read back): a command that runs it is judged as
/// if its code were typed there.
pub(super) fn session_script(
    ws: &Workspace,
    written: &HashSet<String>,
    word: &str,
) -> Option<String> {
    let rel = ws.resolve(word).ok()?.rel;
    if !written.contains(&rel) {
        return None;
    }
    current_text(ws, &rel).filter(|t| t.len() <= MAX_SCRIPT)
}

/// The current text of a workspace file, if it is a readable text file.
pub(super) fn current_text(ws: &Workspace, rel: &str) -> Option<String> {
    let resolved = ws.resolve(rel).ok()?;
    let bytes = std::fs::read(&resolved.real).ok()?;
    String::from_utf8(bytes).ok()
}

/// The protected file (outside `.git/`) that `rel` shares its inode with,
/// when `rel` is a hard link: reading it reads that file, and writing it
/// (a new file replaces the link) leaves an unprotected copy behind.
#[cfg(unix)]
pub(super) fn hard_link_alias(ws: &Workspace, rules: &PathRules, rel: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let resolved = ws.resolve(rel).ok()?;
    let meta = std::fs::metadata(&resolved.real).ok()?;
    if !meta.is_file() || meta.nlink() < 2 {
        return None;
    }
    let walk = ignore::WalkBuilder::new(ws.root())
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walk.take(MAX_WALKED).flatten() {
        let Ok(other) = entry.path().strip_prefix(ws.root()) else {
            continue;
        };
        let other = other.to_string_lossy().replace('\\', "/");
        if other == resolved.rel || !rules.is_protected(&other) {
            continue;
        }
        if let Ok(m) = entry.metadata()
            && m.is_file()
            && m.ino() == meta.ino()
            && m.dev() == meta.dev()
        {
            return Some(other);
        }
    }
    None
}

#[cfg(not(unix))]
pub(super) fn hard_link_alias(_: &Workspace, _: &PathRules, _: &str) -> Option<String> {
    None
}

/// Scripts longer than this are not read back when they run.
const MAX_SCRIPT: usize = 256 * 1024;

/// Files at most walked to answer one `reaches` question: a huge tree
/// counts as holding a protected file (fail closed).
const MAX_WALKED: usize = 20_000;

/// The protected files (outside `.git/`, whose contents are git's) a
/// shell word reaches on disk: what a glob expands to, or what lies under
/// a directory read recursively. Words outside the workspace reach
/// nothing here: the path rules judge them.
pub(super) fn protected_reached(
    ws: &Workspace,
    rules: &PathRules,
    word: &str,
    reach: shell::Reach,
) -> Vec<String> {
    let secret_bearing = |rel: &str| {
        let folded = rel.to_lowercase();
        folded != ".git" && !folded.starts_with(".git/") && rules.is_secret_store(rel)
    };
    match reach {
        shell::Reach::Glob => {
            let mut found = Vec::new();
            glob_on_disk(ws, word, &mut found);
            found.retain(|rel| secret_bearing(rel));
            found
        }
        shell::Reach::Tree | shell::Reach::VisibleTree if word.contains(['*', '?', '[']) => {
            // `cp -r conf* backup`: every directory the glob names.
            let mut roots = Vec::new();
            glob_on_disk(ws, word, &mut roots);
            let mut found = Vec::new();
            for root in roots.iter().take(64) {
                found.extend(protected_reached(ws, rules, root, reach));
                if !found.is_empty() {
                    break;
                }
            }
            found
        }
        shell::Reach::Tree | shell::Reach::VisibleTree | shell::Reach::FollowTree => {
            let follow = reach == shell::Reach::FollowTree;
            let dir = match ws.resolve(word) {
                Ok(dir) => dir,
                // A directory outside the workspace (named, or through a
                // link the program follows): everything there is the
                // user's, credentials included. System trees are not.
                Err(crate::files::FileError::OutsideWorkspace { real, .. }) => {
                    let system = ["/usr/", "/opt/", "/lib", "/nix/store/", "/proc/self/fd"]
                        .iter()
                        .any(|p| real.to_string_lossy().starts_with(p));
                    if system || !real.is_dir() {
                        return Vec::new();
                    }
                    return vec![format!("{word} (outside the workspace)")];
                }
                Err(_) => return Vec::new(),
            };
            if !dir.real.is_dir() {
                return Vec::new();
            }
            let visible = reach == shell::Reach::VisibleTree;
            let walk = ignore::WalkBuilder::new(&dir.real)
                .standard_filters(visible)
                .require_git(false)
                .follow_links(follow)
                .build();
            let mut found = Vec::new();
            for (n, entry) in walk.enumerate() {
                if n > MAX_WALKED {
                    found.push(format!("{} (more than {MAX_WALKED} files)", dir.rel));
                    break;
                }
                let Ok(entry) = entry else { continue };
                if follow && entry.path_is_symlink() {
                    // Where the program will read: the link's target.
                    match std::fs::canonicalize(entry.path()) {
                        Ok(target) => match target.strip_prefix(ws.root()) {
                            Ok(inside) => {
                                let inside = inside.to_string_lossy().replace('\\', "/");
                                if secret_bearing(&inside) {
                                    found.push(inside);
                                }
                            }
                            Err(_) => found.push(format!(
                                "{} (a link to {}, outside the workspace)",
                                entry
                                    .path()
                                    .strip_prefix(ws.root())
                                    .unwrap_or(entry.path())
                                    .display(),
                                target.display()
                            )),
                        },
                        Err(_) => continue, // dangling: nothing to read
                    }
                    if found.len() >= 8 {
                        break;
                    }
                }
                let Ok(rel) = entry.path().strip_prefix(ws.root()) else {
                    continue;
                };
                let rel = rel.to_string_lossy().replace('\\', "/");
                if rel.to_lowercase().starts_with(".git/") || rel.eq_ignore_ascii_case(".git") {
                    continue;
                }
                if secret_bearing(&rel) {
                    found.push(rel);
                    if found.len() >= 8 {
                        break;
                    }
                }
            }
            found
        }
    }
}

/// Expand a relative glob against the workspace, as the shell would from
/// its root: `*` and `?` skip a leading dot unless the pattern has one.
fn glob_on_disk(ws: &Workspace, pattern: &str, out: &mut Vec<String>) {
    let pattern = pattern.trim_start_matches("./");
    if pattern.starts_with('/') || pattern.starts_with('~') || pattern.contains('$') {
        return;
    }
    let mut prefixes = vec![String::new()];
    for part in pattern.split('/').filter(|p| !p.is_empty() && *p != ".") {
        let mut next = Vec::new();
        for prefix in &prefixes {
            if !part.contains(['*', '?', '[']) {
                next.push(format!("{prefix}{part}/"));
                continue;
            }
            let dir = if prefix.is_empty() {
                "."
            } else {
                prefix.trim_end_matches('/')
            };
            let Ok(resolved) = ws.resolve(dir) else {
                continue;
            };
            let Ok(entries) = std::fs::read_dir(&resolved.real) else {
                continue;
            };
            for entry in entries.flatten().take(MAX_WALKED) {
                let name = entry.file_name().to_string_lossy().into_owned();
                if shell::glob_matches(part, &name) {
                    next.push(format!("{prefix}{name}/"));
                }
            }
        }
        next.truncate(MAX_WALKED);
        prefixes = next;
    }
    for p in prefixes {
        let rel = p.trim_end_matches('/');
        if let Ok(r) = ws.resolve(rel)
            && r.exists
        {
            out.push(r.rel);
        }
    }
}
