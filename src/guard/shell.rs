//! Shell command analysis for the guard: splits a command line into simple
//! commands and words (quotes, escapes, substitutions, redirections and
//! here-documents understood), then reports what a person should confirm:
//! anything that is not plain words (substitutions, eval, sourcing, pipes
//! into an interpreter, decoding into a pipe), network programs, git push
//! and remote or config changes, operands naming protected paths, archives
//! of the workspace, and dumps of the environment.
//!
//! It never runs anything. Parsing is best effort and fails closed: text it
//! cannot split (an unterminated quote) is itself a finding. It does not
//! stop egress on its own; an OS sandbox does that.
//!
//! This file holds the public face and the walk over a command line
//! (simple commands, substitutions, redirections, here-documents); the
//! rest is split by what it knows: `lex` (words and segments),
//! `programs` (the program tables), `expand` (variables, braces, `cd`,
//! globs), `operands` (the protected files a word reaches), `rules` (the
//! per-program findings) and `code` (inline code and scripts the session
//! wrote).

use std::fmt;

mod code;
mod expand;
mod lex;
mod operands;
mod programs;
mod rules;
mod targets;
mod text;

use lex::{Redirect, Segment, SubstKind, Word, lex, segments};
use programs::{basename, program_index};

pub use code::{named_package_scripts, package_scripts};
pub use expand::glob_matches;

/// One concern about a command; each needs a Security confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellFinding {
    /// Stable id, such as "pipe-to-interpreter" or "network".
    pub rule: &'static str,
    pub message: String,
}

impl fmt::Display for ShellFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.rule)
    }
}

/// What a git command will send on, so the caller can scan it first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitOutgoing {
    /// `git commit`: scan what it records (`git diff --cached`, and with
    /// `-a` the tracked changes too: `git diff HEAD`).
    Commit,
    /// `git push` (possibly after a commit in the same command): scan the
    /// commits not yet on the remote (`@{u}..HEAD`) and the staged diff.
    Push,
}

/// The result of [`analyze`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellAnalysis {
    pub findings: Vec<ShellFinding>,
    /// The words of each top-level simple command, quotes removed, without
    /// redirections.
    pub segments: Vec<Vec<String>>,
    pub outgoing: Option<GitOutgoing>,
    /// A git command that prints file contents out of the repository's
    /// history (`log -p`, `show`, `format-patch`, `bundle`…), and the
    /// pathspecs it was limited to (empty: every file). The caller checks
    /// whether the repository holds protected files.
    pub git_history: Option<Vec<String>>,
    /// What the line's git commands stage before a commit, whatever their
    /// form (`add`, `stage`, `-C DIR`, `-c k=v`, `commit -a`, paths given
    /// to `commit`), for the caller to compute what the commit records.
    pub staging: Staging,
    /// Files the command writes (redirections, `tee`, `cp`/`mv`
    /// destinations, `dd of=`…), as written, relative to the workspace
    /// root after the line's `cd`s.
    pub writes: Vec<String>,
    /// `mv`/`cp`/`ln`/`install` sources and destinations: a script the
    /// session wrote keeps being one under its new name.
    pub moves: Vec<(String, String)>,
}

/// What the git commands of one line stage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Staging {
    /// Tracked changes are staged (`add -u`, `commit -a`, any `add`).
    pub tracked: bool,
    /// Untracked files are staged: every one (`add -A`, `add .`) ...
    pub all_untracked: bool,
    /// ... or those under these pathspecs.
    pub paths: Vec<String>,
    /// `-f`: ignored files too.
    pub force: bool,
    /// Files whose content goes into the commit besides the tree (`commit
    /// -F msg`, `apply --cached patch`, `hash-object -w file`).
    pub files: Vec<String>,
    /// The directory git runs in (`git -C sub commit`), relative to the
    /// workspace root; empty for the root.
    pub dir: String,
}

/// Analyze `command`. `is_protected` is called with every operand that
/// could name a file (arguments, redirection targets, the file part of
/// `@file`, `key=file` and `REV:file`), as written.
pub fn analyze(command: &str, is_protected: &dyn Fn(&str) -> bool) -> ShellAnalysis {
    analyze_on_disk(command, is_protected, &|_, _| Vec::new(), &|_| None)
}

/// How far a word reaches on disk, asked of the caller's `reaches`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The files a glob pattern (`config/.e?v`) expands to.
    Glob,
    /// Every file under the directory the word names (`grep -r`, `cp -r`,
    /// `tar`, `find -exec`).
    Tree,
    /// Files under it that are neither hidden nor ignored (`rg`'s default).
    VisibleTree,
    /// Every file under it, following symbolic links the way `grep -R`,
    /// `cp -L`, `tar -h`, `zip` or `diff -r` do: a link inside the tree to
    /// `.env`, or to anything outside the workspace, counts.
    FollowTree,
}

/// The questions the analysis asks about the disk. Every answer has a
/// default that knows nothing, so the analysis stays usable on strings
/// alone ([`analyze`]).
pub trait Disk {
    /// Whether a word names a protected path.
    fn is_protected(&self, word: &str) -> bool;
    /// Which protected files a word reaches on disk (see [`Reach`]).
    fn reaches(&self, _word: &str, _reach: Reach) -> Vec<String> {
        Vec::new()
    }
    /// The text of a script this session wrote (or renamed), when the word
    /// names one.
    fn script(&self, _word: &str) -> Option<String> {
        None
    }
    /// The text of any readable workspace file the word names (bounded):
    /// SQL fed to `sqlite3`, an `awk -f` program, a `package.json`.
    fn text(&self, _word: &str) -> Option<String> {
        None
    }
    /// Whether writing (not reading) the word's path needs a person: CI,
    /// hooks, auto-run files, `.git/`; not a secret store like `.env`.
    fn write_needs_person(&self, word: &str) -> bool {
        self.is_protected(word)
    }
    /// Whether writing the word's path lands outside the workspace.
    fn outside(&self, _word: &str) -> bool {
        false
    }
    /// The code files this session wrote, with their text: what a command
    /// that runs code (an interpreter, `make`, `npm test`, `pytest`) may
    /// import or run without naming it.
    fn session_code(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

struct Closures<'a> {
    is_protected: &'a dyn Fn(&str) -> bool,
    reaches: &'a dyn Fn(&str, Reach) -> Vec<String>,
    script: &'a dyn Fn(&str) -> Option<String>,
}

impl Disk for Closures<'_> {
    fn is_protected(&self, word: &str) -> bool {
        (self.is_protected)(word)
    }
    fn reaches(&self, word: &str, reach: Reach) -> Vec<String> {
        (self.reaches)(word, reach)
    }
    fn script(&self, word: &str) -> Option<String> {
        (self.script)(word)
    }
}

/// [`analyze`], also asking `reaches` which protected files a word
/// reaches on disk: what a glob expands to, what a directory read
/// recursively holds. `cp -r config backup` copies `config/.env` although
/// no word names it. `script` gives the text of a script the command runs
/// when it is one the session wrote, to be judged like inline code.
pub fn analyze_on_disk(
    command: &str,
    is_protected: &dyn Fn(&str) -> bool,
    reaches: &dyn Fn(&str, Reach) -> Vec<String>,
    script: &dyn Fn(&str) -> Option<String>,
) -> ShellAnalysis {
    let disk = Closures {
        is_protected,
        reaches,
        script,
    };
    analyze_with(command, &disk)
}

/// [`analyze`] with every question about the disk answered by `disk`.
pub fn analyze_with(command: &str, disk: &dyn Disk) -> ShellAnalysis {
    let mut out = ShellAnalysis::default();
    let mut cx = Context {
        disk,
        vars: std::collections::HashMap::new(),
        previous: Vec::new(),
        cwd: String::new(),
        literal_vars: std::collections::HashMap::new(),
        session_code_judged: false,
        out: &mut out,
    };
    cx.analyze(command, 0, true);
    out
}

/// Nested commands (`sh -c`, substitutions) analyzed this deep; deeper is a
/// finding of its own.
const MAX_DEPTH: usize = 4;

/// The state of one analysis. Its methods live with what they judge:
/// the walk here, the rest in the submodules.
struct Context<'a> {
    disk: &'a dyn Disk,
    /// Variables the command line sets before using them (`F=.env`,
    /// `for f in a b`): their possible values. Empty: set only when the
    /// command runs (`read f`).
    vars: std::collections::HashMap<String, Vec<String>>,
    /// The words of the previous simple command (what feeds a pipe).
    previous: Vec<String>,
    /// Where an earlier `cd` in the line went, as written (empty: the
    /// workspace root). `cd .git && echo x > hooks/pre-commit` writes a
    /// hook although no word names one.
    cwd: String,
    /// Word text → variables it names only literally (`'$p'`, `\$x`).
    literal_vars: std::collections::HashMap<String, Vec<String>>,
    /// The session's code files were judged already for this line.
    session_code_judged: bool,
    out: &'a mut ShellAnalysis,
}

impl Context<'_> {
    fn find(&mut self, rule: &'static str, message: String) {
        let f = ShellFinding { rule, message };
        if !self.out.findings.contains(&f) {
            self.out.findings.push(f);
        }
    }

    fn analyze(&mut self, command: &str, depth: usize, top: bool) {
        if depth > MAX_DEPTH {
            self.find(
                "nesting",
                "commands nested this deeply inside one another are not analyzed".into(),
            );
            return;
        }
        let lexed = lex(command);
        if let Some(error) = &lexed.error {
            self.find(
                "unparsed",
                format!("the command could not be split into words: {error}"),
            );
        }
        let segments = segments(lexed.tokens);
        self.note_literal_variables(&segments);
        for seg in &segments {
            self.segment(seg, depth);
            self.previous = seg.words.iter().map(|w| w.text.clone()).collect();
        }
        if top {
            self.out.segments = segments
                .iter()
                .map(|s| s.words.iter().map(|w| w.text.clone()).collect())
                .filter(|w: &Vec<String>| !w.is_empty())
                .collect();
        }
    }

    fn segment(&mut self, seg: &Segment, depth: usize) {
        for word in &seg.words {
            self.word_substitutions(word, depth);
        }
        // A wrapper's `env -C DIR` moves this command only.
        let cwd = self.cwd.clone();
        let words: Vec<&str> = seg.words.iter().map(|w| w.text.as_str()).collect();
        let at = program_index(&words, self);
        for redirect in &seg.redirects {
            self.redirect(seg, redirect, depth);
        }
        self.assignments(&words, at);
        let Some(at) = at else {
            self.cwd = cwd;
            return;
        };
        let (program, args) = program_and_args(&words, at);
        // `test -f .env` asks whether a file exists; it reads nothing.
        if !matches!(program, "test" | "[" | "[[") {
            self.credential_variables(&words);
            // Destinations are judged as writes (`write_target`), not reads.
            let written = targets::write_only_operands(program, args);
            let read: Vec<&str> = args
                .iter()
                .enumerate()
                .filter(|(i, _)| !written.contains(i))
                .map(|(_, a)| *a)
                .collect();
            self.operands(&read);
        }
        if seg.piped_in && words[..at].iter().any(|w| basename(w) == "xargs") {
            self.xargs_input();
        }
        self.program(seg, program, args, depth);
        self.program_text(program, args, depth);
        self.program_writes(program, args);
        self.trees(seg, program, args);
        self.runs_session_code(program, args, depth);
        if matches!(program, "cd" | "pushd") {
            self.change_directory(args);
        } else {
            self.cwd = cwd;
        }
    }

    /// Substitutions inside a word: always a finding, and the commands
    /// inside are analyzed too.
    fn word_substitutions(&mut self, word: &Word, depth: usize) {
        if word.ansi_c {
            self.find(
                "ansi-c-quoting",
                format!(
                    "`{}` uses $'…' quoting, which can spell any text in escapes",
                    word.text
                ),
            );
        }
        for sub in &word.substitutions {
            let (rule, what) = match sub.kind {
                SubstKind::Command => (
                    "command-substitution",
                    "command substitution runs a command and pastes its output into the command line",
                ),
                SubstKind::Process => (
                    "process-substitution",
                    "process substitution runs a command whose output or input is a file",
                ),
                SubstKind::Expansion => {
                    // `${x:-$(cmd)}`: the substitution inside reports itself
                    self.analyze(&sub.inner, depth + 1, false);
                    continue;
                }
            };
            self.find(rule, format!("{what}: `{}`", short(&sub.inner)));
            self.analyze(&sub.inner, depth + 1, false);
        }
    }

    fn redirect(&mut self, seg: &Segment, redirect: &Redirect, depth: usize) {
        let Some(target) = &redirect.target else {
            return;
        };
        self.word_substitutions(target, depth);
        match redirect.op {
            "<<" | "<<-" => {
                if let Some(body) = &redirect.body {
                    self.heredoc(seg, body, redirect.body_expands, depth);
                }
            }
            "<<<" => {
                let words: Vec<&str> = seg.words.iter().map(|w| w.text.as_str()).collect();
                if let Some(at) = program_index(&words, self) {
                    let (program, args) = program_and_args(&words, at);
                    self.stdin_text(program, args, &target.text, depth);
                }
            }
            ">&" | "<&" if is_fd(&target.text) => {}
            _ => {
                let path = target.text.as_str();
                let writes_only = matches!(redirect.op, ">" | ">>" | ">|" | ">&");
                if redirect.op != "<" && redirect.op != "<&" {
                    self.write_target(path, "redirection");
                }
                if !writes_only {
                    let words: Vec<&str> = seg.words.iter().map(|w| w.text.as_str()).collect();
                    if let Some(at) = program_index(&words, self) {
                        let (program, args) = program_and_args(&words, at);
                        self.stdin_file(program, args, path, depth);
                    }
                }
                if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") {
                    self.find(
                        "network-redirect",
                        format!("redirection to `{path}` opens a network connection"),
                    );
                }
                if !writes_only {
                    self.protected(path, "redirection");
                }
            }
        }
    }

    fn heredoc(&mut self, seg: &Segment, body: &str, expands: bool, depth: usize) {
        if expands && (body.contains("$(") || body.contains('`')) {
            self.find(
                "command-substitution",
                "a here-document with `$(…)` or backticks runs commands when the shell expands it"
                    .into(),
            );
            // The body expands like a double-quoted string.
            let lexed = lex(&format!("\"{}\"", body.replace('"', "\\\"")));
            for seg in segments(lexed.tokens) {
                for w in &seg.words {
                    self.word_substitutions(w, depth + 1);
                }
            }
        }
        let words: Vec<&str> = seg.words.iter().map(|w| w.text.as_str()).collect();
        let Some(at) = program_index(&words, self) else {
            return;
        };
        let (program, args) = program_and_args(&words, at);
        self.stdin_text(program, args, body, depth);
    }
}

/// The program's name and its arguments; `busybox wget …` and `toybox nc
/// …` are the applet they name.
fn program_and_args<'a, 'w>(words: &'a [&'w str], at: usize) -> (&'w str, &'a [&'w str]) {
    let program = basename(words[at]);
    if matches!(program, "busybox" | "toybox")
        && let Some(applet) = words.get(at + 1).filter(|w| !w.starts_with('-'))
    {
        return (basename(applet), &words[at + 2..]);
    }
    (program, &words[at + 1..])
}

fn is_fd(target: &str) -> bool {
    target == "-" || (!target.is_empty() && target.chars().all(|c| c.is_ascii_digit()))
}

/// Single-quote a word for re-analysis.
fn quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', r"'\''"))
}

fn short(s: &str) -> String {
    const MAX: usize = 80;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests;
