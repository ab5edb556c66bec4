//! Which protected files a command's words reach: operands and
//! redirection targets as written, expanded, or as globs; directories
//! read whole by recursive programs (`grep -r`, `cp -r`, archivers,
//! `find -exec`, `ls | xargs`). Separate from `rules.rs` because it is
//! the part that asks the caller about the disk.

use super::expand::{glob_match, is_outside_variable, modified_at};
use super::lex::Segment;
use super::programs::{
    GREP_VALUED, RG_VALUED, basename, find_names, grep_recursive, packs_files, program_index,
    search_operands,
};
use super::{Context, Reach};

/// The files a word could name: itself, and the file part of `@file`,
/// `--opt=file`, `key=file`, `REV:file`, `file://path`.
pub(super) fn path_candidates(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if word.is_empty() {
        return out;
    }
    if let Some(path) = word.strip_prefix("file://") {
        out.push(path);
        return out;
    }
    if word.contains("://") {
        return out;
    }
    if !word.starts_with('-') {
        out.push(word);
    }
    if let Some((_, value)) = word.split_once('=') {
        out.push(value);
    }
    if let Some(at) = word.rfind('@') {
        out.push(&word[at + 1..]);
    }
    if let Some((_, path)) = word.split_once(':') {
        out.push(path);
    }
    out.retain(|c| !c.is_empty());
    out
}

/// Names of protected files a glob is tested against (the guard cannot
/// list the directory): `cat .e*` reaches `.env` as surely as `cat .env`.
pub(super) const PROTECTED_SAMPLES: &[&str] = &[
    ".env",
    ".env.local",
    ".env.production",
    "id_rsa",
    "id_ed25519",
    "server.pem",
    "server.key",
    ".git/config",
    ".npmrc",
    ".netrc",
    ".pypirc",
];

/// A protected sample name the glob `word` matches, if it is a glob with
/// at least two literal characters (`*` alone is everything, and names no
/// file in particular).
pub(super) fn glob_reaches_protected(
    word: &str,
    is_protected: &dyn Fn(&str) -> bool,
) -> Option<&'static str> {
    if !word.contains(['*', '?', '[']) {
        return None;
    }
    let literal = word
        .chars()
        .filter(|c| !matches!(c, '*' | '?' | '[' | ']' | '/'))
        .count();
    if literal < 2 {
        return None;
    }
    let pattern = word.trim_start_matches("./");
    // `config/.e?v` reaches `config/.env`: its last part is tested against
    // the names too, when it says enough on its own.
    let last = pattern.rsplit_once('/').map(|(_, l)| l).filter(|l| {
        l.chars()
            .filter(|c| !matches!(c, '*' | '?' | '[' | ']'))
            .count()
            >= 2
    });
    PROTECTED_SAMPLES.iter().copied().find(|sample| {
        let name = sample.rsplit('/').next().unwrap_or(sample);
        let target = if pattern.contains('/') { *sample } else { name };
        (glob_match(pattern.as_bytes(), target.as_bytes(), true)
            || last.is_some_and(|l| glob_match(l.as_bytes(), name.as_bytes(), true)))
            && is_protected(sample)
    })
}

impl Context<'_> {
    pub(super) fn operands(&mut self, args: &[&str]) {
        // What a search leaves out is not read: `--exclude-dir=.git`.
        const EXCLUDING: &[&str] = &["--exclude", "--exclude-dir", "--ignore", "--ignore-dir"];
        let mut skip_next = false;
        for arg in args {
            if std::mem::take(&mut skip_next) {
                continue;
            }
            if let Some((option, _)) = arg.split_once('=')
                && EXCLUDING.contains(&option)
            {
                continue;
            }
            if EXCLUDING.contains(arg) {
                skip_next = true;
                continue;
            }
            self.protected(arg, "operand");
            if arg.starts_with("/dev/tcp/") || arg.starts_with("/dev/udp/") {
                self.find(
                    "network-redirect",
                    format!("`{arg}` is a network connection"),
                );
            }
            let placed = self.at_cwd(arg);
            let last = placed.rsplit('/').next().unwrap_or(&placed);
            if placed.contains("/proc/")
                && (last.starts_with("env")
                    || last.contains(['*', '?', '['])
                    || (last.starts_with('e') && last.contains('$')))
            {
                self.find(
                    "env-dump",
                    format!("`{arg}` holds a process's environment, API keys included"),
                );
            }
        }
    }

    /// Call `is_protected` on each file a word could name; globs are also
    /// expanded on disk, and a variable set only when the command runs
    /// counts as any file of the directory it is in.
    pub(super) fn protected(&mut self, word: &str, what: &str) {
        for form in self.expansions(word) {
            if self.protected_form(word, &form, what) {
                return;
            }
            let runtime = self
                .live_refs(word, &form)
                .into_iter()
                .find(|&(name, at)| !is_outside_variable(name) || modified_at(&form, at));
            if let Some((name, at)) = runtime {
                let dir = form[..at].rsplit_once('/').map_or(".", |(d, _)| d);
                let dir = if dir.is_empty() { "/" } else { dir };
                if let Some(hit) = self.disk.reaches(&self.at_cwd(dir), Reach::Tree).first() {
                    self.find(
                        "protected-path",
                        format!(
                            "the {what} `{word}` depends on `${name}`, known only when the command runs, and `{dir}` holds the protected file `{hit}`"
                        ),
                    );
                    return;
                }
            }
        }
    }

    /// [`Context::protected`] for one expanded form; true when it found.
    pub(super) fn protected_form(&mut self, word: &str, form: &str, what: &str) -> bool {
        for candidate in path_candidates(form) {
            let placed = self.at_cwd(candidate);
            let candidate = placed.as_str();
            if candidate.contains(['*', '?', '['])
                && let Some(hit) = self.disk.reaches(candidate, Reach::Glob).first()
            {
                self.find(
                    "protected-path",
                    format!(
                        "the {what} `{word}` is a pattern that matches the protected file `{hit}`"
                    ),
                );
                return true;
            }
            if self.disk.is_protected(candidate) {
                self.find(
                    "protected-path",
                    format!("the {what} `{word}` names the protected path `{candidate}`"),
                );
                return true;
            }
            if let Some(sample) = glob_reaches_protected(candidate, &|w| self.disk.is_protected(w))
            {
                self.find(
                    "protected-path",
                    format!("the {what} `{word}` is a pattern that can match the protected path `{sample}`"),
                );
                return true;
            }
        }
        false
    }

    /// `… | xargs cat`: the names come from the command before the pipe.
    /// A listing of a directory that holds protected files feeds them in.
    pub(super) fn xargs_input(&mut self) {
        let previous = std::mem::take(&mut self.previous);
        let words: Vec<&str> = previous.iter().map(String::as_str).collect();
        // (`find … | xargs` is judged at find, with its `-name` patterns.)
        let at = program_index(&words, self);
        if let Some(at) = at
            && basename(words[at]) == "git"
            && words[at + 1..]
                .iter()
                .any(|w| matches!(*w, "ls-files" | "ls-tree" | "diff" | "log" | "show"))
        {
            // The names of tracked files: the repository's protected ones
            // among them.
            self.out.git_history = Some(Vec::new());
        }
        if let Some(at) = at
            && basename(words[at]) == "ls"
        {
            let args = &words[at + 1..];
            let hidden = args.iter().any(|a| {
                a.starts_with('-') && !a.starts_with("--") && (a.contains('a') || a.contains('A'))
            }) || args.iter().any(|a| matches!(*a, "--all" | "--almost-all"));
            let reach = if hidden {
                Reach::Tree
            } else {
                Reach::VisibleTree
            };
            let dirs: Vec<&str> = args
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            let dirs = if dirs.is_empty() { vec!["."] } else { dirs };
            for dir in dirs {
                self.tree(dir, reach, "`ls` feeds `xargs` the names in", &[]);
            }
        }
        self.previous = previous;
    }

    /// Programs that read whole directories: each directory operand is
    /// checked for protected files inside it.
    pub(super) fn trees(&mut self, seg: &Segment, program: &str, args: &[&str]) {
        let short = |c: char| {
            args.iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
        };
        let long = |names: &[&str]| args.iter().any(|a| names.contains(a));
        let operands = || -> Vec<&str> {
            args.iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect()
        };
        let (reach, dirs) = match program {
            "grep" | "egrep" | "fgrep" | "zgrep" if grep_recursive(args) => {
                // `-R` follows every link in the tree, `-r` only those named.
                let follow = short('R') || long(&["--dereference-recursive"]);
                let reach = if follow {
                    Reach::FollowTree
                } else {
                    Reach::Tree
                };
                (reach, search_operands(args, GREP_VALUED))
            }
            "rg" | "ag" | "ack" | "ugrep" => {
                let all = args.iter().any(|a| {
                    matches!(*a, "--hidden" | "--no-ignore" | "-." | "--unrestricted")
                        || a.starts_with("-u")
                });
                let follow = short('L') || long(&["--follow"]);
                let reach = match (follow, all) {
                    (true, _) => Reach::FollowTree,
                    (false, true) => Reach::Tree,
                    (false, false) => Reach::VisibleTree,
                };
                (reach, search_operands(args, RG_VALUED))
            }
            "cp" | "rsync" => {
                let recursive = program == "rsync"
                    || short('r')
                    || short('R')
                    || short('a')
                    || long(&["--recursive", "--archive"]);
                let follow = short('L')
                    || long(&[
                        "--dereference",
                        "--copy-links",
                        "--copy-unsafe-links",
                        "--copy-dirlinks",
                    ]);
                let mut ops = operands();
                ops.pop(); // the destination
                let reach = match (recursive, follow) {
                    (_, true) => Reach::FollowTree,
                    (true, false) => Reach::Tree,
                    (false, false) => return,
                };
                (reach, ops)
            }
            "diff" | "colordiff" if short('r') || long(&["--recursive"]) => {
                (Reach::FollowTree, operands())
            }
            "git" if args.contains(&"--no-index") => (
                Reach::FollowTree,
                operands().into_iter().filter(|a| *a != "diff").collect(),
            ),
            "gzip" | "gunzip" | "pigz" | "bzip2" | "xz" | "zstd" | "lz4" | "brotli"
                if short('r') || long(&["--recursive"]) =>
            {
                (Reach::Tree, operands())
            }
            p if p.starts_with("python")
                && args
                    .windows(2)
                    .any(|w| w[0] == "-m" && matches!(w[1], "tarfile" | "zipfile" | "shutil")) =>
            {
                // `python3 -m zipfile -c out.zip src…`: every source, links followed.
                let ops: Vec<&str> = operands()
                    .into_iter()
                    .filter(|a| !matches!(*a, "tarfile" | "zipfile" | "shutil"))
                    .skip(1)
                    .collect();
                (Reach::FollowTree, ops)
            }
            p if packs_files(p, args) => {
                // tar follows links with -h; zip, 7z and jar by default.
                let follow = match p {
                    "zip" => !short('y') && !long(&["--symlinks"]),
                    "7z" | "7za" | "jar" => true,
                    "cpio" => short('L') || long(&["--dereference"]),
                    _ => short('h') || long(&["--dereference"]),
                };
                let reach = if follow {
                    Reach::FollowTree
                } else {
                    Reach::Tree
                };
                (reach, operands())
            }
            "find" => {
                let runs = args
                    .iter()
                    .any(|a| matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir"));
                if !runs && !seg.piped_out {
                    return;
                }
                let follow = args.iter().any(|a| matches!(*a, "-L" | "-follow"));
                let mut ops: Vec<&str> = args
                    .iter()
                    .copied()
                    .skip_while(|a| matches!(*a, "-L" | "-H" | "-P"))
                    .take_while(|a| !a.starts_with('-') && !matches!(*a, "(" | "!"))
                    .collect();
                if ops.is_empty() {
                    ops.push(".");
                }
                (
                    if follow {
                        Reach::FollowTree
                    } else {
                        Reach::Tree
                    },
                    ops,
                )
            }
            _ => return,
        };
        let names = find_names(program, args);
        let what = format!("`{program}` reads everything under");
        for dir in dirs {
            self.tree(dir, reach, &what, &names);
        }
    }

    /// A finding when `dir` (with its variables and braces expanded) holds
    /// a protected file; `names` (find's `-name` patterns) narrow it.
    pub(super) fn tree(&mut self, dir: &str, reach: Reach, what: &str, names: &[(String, bool)]) {
        for candidate in self.expansions(dir) {
            let hits = self.disk.reaches(&self.at_cwd(&candidate), reach);
            let hit = hits.iter().find(|h| {
                let name = h.rsplit('/').next().unwrap_or(h);
                names.is_empty()
                    || names.iter().any(|(pattern, fold)| {
                        if *fold {
                            glob_match(
                                pattern.to_lowercase().as_bytes(),
                                name.to_lowercase().as_bytes(),
                                false,
                            )
                        } else {
                            glob_match(pattern.as_bytes(), name.as_bytes(), false)
                        }
                    })
            });
            if let Some(hit) = hit {
                self.find(
                    "protected-tree",
                    format!("{what} `{dir}`, which holds the protected file `{hit}`"),
                );
                return;
            }
        }
    }
}
