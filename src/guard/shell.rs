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

use lex::{Redirect, Segment, SubstKind, Word, lex, segments};
use programs::{basename, is_interpreter, is_shell, program_index};

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
    let mut out = ShellAnalysis::default();
    let mut cx = Context {
        is_protected,
        reaches,
        script,
        vars: std::collections::HashMap::new(),
        previous: Vec::new(),
        cwd: String::new(),
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
    is_protected: &'a dyn Fn(&str) -> bool,
    reaches: &'a dyn Fn(&str, Reach) -> Vec<String>,
    script: &'a dyn Fn(&str) -> Option<String>,
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
        for redirect in &seg.redirects {
            self.redirect(seg, redirect, depth);
        }
        let words: Vec<&str> = seg.words.iter().map(|w| w.text.as_str()).collect();
        let at = program_index(&words, self);
        self.assignments(&words, at);
        let Some(at) = at else {
            return;
        };
        let program = basename(words[at]);
        let args = &words[at + 1..];
        // `test -f .env` asks whether a file exists; it reads nothing.
        if !matches!(program, "test" | "[" | "[[") {
            self.credential_variables(&words);
            self.operands(args);
        }
        if seg.piped_in && words[..at].iter().any(|w| basename(w) == "xargs") {
            self.xargs_input();
        }
        self.program(seg, program, args, depth);
        self.trees(seg, program, args);
        if matches!(program, "cd" | "pushd") {
            self.change_directory(args);
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
            "<<<" => {}
            ">&" | "<&" if is_fd(&target.text) => {}
            _ => {
                let path = target.text.as_str();
                if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") {
                    self.find(
                        "network-redirect",
                        format!("redirection to `{path}` opens a network connection"),
                    );
                }
                self.protected(path, "redirection");
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
        let program = basename(words[at]);
        if is_shell(program) {
            self.analyze(body, depth + 1, false);
        } else if is_interpreter(program) {
            self.inline_code(program, body);
        }
    }
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
