//! Code a command runs that is not a command line: inline code
//! (`python -c`, `node -e`, a here-document fed to an interpreter) and
//! scripts this session wrote. Judged for the files its string literals
//! name, network use and environment reads; shell code goes back through
//! the command analysis.

use super::Context;
use super::programs::{NETWORK_CODE, SHELLS, is_interpreter, is_shell};

/// Quoted string literals in a piece of code ('…' and "…"), and the
/// concatenation of literals joined by `+`, `.` or nothing but spaces
/// (`'.e' + 'nv'` is `.env`).
pub(super) fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut joined = String::new();
    let mut parts = 0;
    let mut i = 0;
    while i < bytes.len() {
        let q = bytes[i];
        if (q == b'\'' || q == b'"')
            && let Some(len) = code[i + 1..].find(q as char)
        {
            let literal = &code[i + 1..i + 1 + len];
            out.push(literal.to_string());
            joined.push_str(literal);
            parts += 1;
            i += len + 2;
            let gap = code[i..]
                .bytes()
                .take_while(|b| matches!(b, b' ' | b'+' | b'.' | b'\t'))
                .count();
            let continues = matches!(bytes.get(i + gap), Some(b'\'' | b'"'));
            if !continues {
                if parts > 1 {
                    out.push(std::mem::take(&mut joined));
                }
                joined.clear();
                parts = 0;
            }
            i += gap;
            continue;
        }
        joined.clear();
        parts = 0;
        i += 1;
    }
    out
}

impl Context<'_> {
    /// `sh -c`, `python -c`, `node -e`: the code is in an argument.
    pub(super) fn interpreter_args(&mut self, program: &str, args: &[&str], depth: usize) {
        // `sh -n script`: a syntax check, which runs nothing.
        if is_shell(program) && noexec(args) {
            return;
        }
        let flags: &[&str] = if is_shell(program) {
            &["-c"]
        } else {
            &["-c", "-e", "-E", "-r", "--eval", "-p", "--print"]
        };
        let inline = args.iter().any(|a| {
            flags.contains(a)
                || *a == "-m"
                || (is_shell(program)
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a.contains('c'))
        });
        if !inline && let Some(path) = args.iter().find(|a| !a.starts_with('-')) {
            self.script(program, path, depth);
        }
        let mut i = 0;
        while i < args.len() {
            let arg = args[i];
            let bundled_c = is_shell(program)
                && arg.starts_with('-')
                && !arg.starts_with("--")
                && arg.contains('c');
            if (flags.contains(&arg) || bundled_c)
                && let Some(code) = args.get(i + 1)
            {
                if is_shell(program) {
                    self.analyze(code, depth + 1, false);
                } else {
                    self.inline_code(program, code);
                }
                i += 1;
            }
            i += 1;
        }
    }

    /// A script the session wrote, run now: judged like inline code (its
    /// file names and network use), a shell script like a command line.
    pub(super) fn script(&mut self, program: &str, path: &str, depth: usize) {
        let Some(text) = self.disk.script(&self.at_cwd(path)) else {
            return;
        };
        self.script_text(program, path, &text, depth);
    }

    fn script_text(&mut self, program: &str, path: &str, text: &str, depth: usize) {
        let first = text.lines().next().unwrap_or("");
        let shell = is_shell(program)
            || (first.starts_with("#!")
                && SHELLS.iter().any(|s| {
                    first.ends_with(&format!("/{s}")) || first.ends_with(&format!(" {s}"))
                }))
            || (!first.starts_with("#!") && !is_interpreter(program));
        let before = self.out.findings.len();
        if shell {
            self.analyze(text, depth + 1, false);
        }
        if !shell || !first.starts_with("#!") {
            // Code in any language names files in string literals.
            self.inline_code(program, text);
        }
        if self.out.findings.len() > before {
            self.find(
                "script",
                format!(
                    "`{path}` was written in this session; what it does is judged as if typed here"
                ),
            );
        }
    }

    /// A command that runs code (an interpreter, a build or test runner, a
    /// program given by path) may import or run any file the session
    /// wrote without naming it: `python3 -m pytest` runs `conftest.py`,
    /// `make` a recipe, `npm test` a `package.json` script, `python3
    /// main.py` a module it imports. Each code file the session wrote is
    /// judged as if it ran, once per command line.
    pub(super) fn runs_session_code(&mut self, program: &str, args: &[&str], depth: usize) {
        if self.session_code_judged || !runs_code(program, args) {
            return;
        }
        self.session_code_judged = true;
        for (rel, text) in self.disk.session_code() {
            let name = rel.rsplit('/').next().unwrap_or(&rel).to_ascii_lowercase();
            let before = self.out.findings.len();
            match name.as_str() {
                "makefile" | "gnumakefile" | "justfile" => {
                    for line in text.lines() {
                        if let Some(recipe) = line.strip_prefix('\t') {
                            let recipe = make_expanded(recipe.trim_start_matches(['@', '-', '+']));
                            self.analyze(&recipe, depth + 1, false);
                        }
                    }
                    if name == "justfile" {
                        for line in text.lines().filter(|l| l.starts_with("    ")) {
                            self.analyze(line.trim(), depth + 1, false);
                        }
                    }
                }
                "package.json" => {
                    for command in package_scripts(&text) {
                        self.analyze(&command, depth + 1, false);
                    }
                }
                _ if name.ends_with(".mk") => {
                    for line in text.lines() {
                        if let Some(recipe) = line.strip_prefix('\t') {
                            let recipe = make_expanded(recipe.trim_start_matches(['@', '-', '+']));
                            self.analyze(&recipe, depth + 1, false);
                        }
                    }
                }
                _ if name.ends_with(".toml")
                    || name.ends_with(".ini")
                    || name.ends_with(".cfg") =>
                {
                    self.inline_code(program, &text);
                }
                _ => match language_of(&name) {
                    Some(lang) => self.script_text(lang, &rel, &text, depth),
                    // Rust, Go, Java, C…: compiled, never read by a shell;
                    // only the files their strings name are judged.
                    None if compiled(&name) => self.inline_code(program, &text),
                    None => self.script_text(program, &rel, &text, depth),
                },
            }
            if self.out.findings.len() > before {
                self.find(
                    "script",
                    format!("`{program}` can run `{rel}`, written in this session; what it does is judged as if typed here"),
                );
            }
        }
    }
    pub(super) fn inline_code(&mut self, program: &str, code: &str) {
        if let Some(marker) = NETWORK_CODE.iter().find(|m| code.contains(*m)) {
            self.find(
                "network",
                format!("`{program}` code that uses `{marker}` can talk to the network"),
            );
        }
        for literal in string_literals(code) {
            self.protected(&literal, "string in the code");
            if crate::guard::looks_like_credential_name(&literal)
                && literal
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                self.find(
                    "env-secret",
                    format!(
                        "`{program}` code reads the credential `{literal}` from the environment"
                    ),
                );
            }
        }
        // The whole environment, not one named variable of it.
        let apis: &[(&str, &[&str])] = match program {
            p if p.starts_with("python") || p.starts_with("pypy") => {
                // `os.environ.copy()` hands a child process its environment
                &[("os.environ", &["[", ".get", ".setdefault", ".copy", ".pop"])]
            }
            "node" | "nodejs" | "deno" | "bun" => &[("process.env", &[".", "["])],
            p if p.starts_with("ruby") || p == "irb" => &[("ENV", &["[", ".fetch", ".key?"])],
            _ => &[],
        };
        for &(api, indexed) in apis {
            let dumps = code.match_indices(api).any(|(at, _)| {
                let rest = &code[at + api.len()..];
                let word_end = !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                let before_ok = at == 0
                    || !code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                word_end && before_ok && !indexed.iter().any(|i| rest.trim_start().starts_with(i))
            });
            if dumps {
                self.find(
                    "env-dump",
                    format!(
                        "`{program}` code reads the whole environment (`{api}`), API keys included"
                    ),
                );
            }
        }
    }
}

/// Programs that run code the command line does not show: interpreters,
/// build and test runners, package scripts, and programs run by path.
/// A shell's options before its script say only to check its syntax
/// (`-n`, `-o noexec`).
fn noexec(args: &[&str]) -> bool {
    args.iter()
        .take_while(|a| a.starts_with('-') || **a == "noexec")
        .any(|a| *a == "noexec" || (a.starts_with('-') && !a.starts_with("--") && a.contains('n')))
}

fn runs_code(program: &str, args: &[&str]) -> bool {
    if is_shell(program) && noexec(args) {
        return false;
    }
    is_interpreter(program)
        || matches!(
            program,
            "make"
                | "gmake"
                | "just"
                | "npm"
                | "npx"
                | "yarn"
                | "pnpm"
                | "bun"
                | "deno"
                | "pytest"
                | "py.test"
                | "tox"
                | "nox"
                | "cargo"
                | "go"
                | "rake"
                | "bundle"
                | "gradle"
                | "gradlew"
                | "mvn"
                | "ant"
                | "dotnet"
                | "mix"
                | "jest"
                | "vitest"
                | "mocha"
                | "uv"
                | "poetry"
                | "pipenv"
                | "hatch"
                | "pre-commit"
                | "tsx"
                | "ts-node"
                | "java"
                | "php"
                | "swift"
                | "julia"
                | "Rscript"
        )
}

/// A make recipe as the shell gets it, as far as words go: make's own
/// variables (`$(CC)`, `${OUT}`, `$@`) become a plain word, `$$` the
/// shell's `$`; `$(shell …)` keeps its command, which make runs.
fn make_expanded(recipe: &str) -> String {
    let bytes = recipe.as_bytes();
    let mut out = String::with_capacity(recipe.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            let next = recipe[i..].find('$').map_or(recipe.len(), |n| i + n);
            out.push_str(&recipe[i..next]);
            i = next;
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'$') => {
                out.push('$');
                i += 2;
            }
            Some(&open @ (b'(' | b'{')) => {
                let close = if open == b'(' { ')' } else { '}' };
                let body = &recipe[i + 2..];
                match body.find(close) {
                    Some(end)
                        if body[..end]
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)) =>
                    {
                        out.push_str("MAKEVAR");
                        i += 2 + end + 1;
                    }
                    _ => {
                        // `$(shell cmd)` runs cmd: the shell's `$(cmd)`.
                        out.push('$');
                        i += 1;
                        if let Some(rest) = body.strip_prefix("shell ") {
                            out.push('(');
                            i += 1 + (body.len() - rest.len());
                        }
                    }
                }
            }
            Some(b'@' | b'<' | b'^' | b'*' | b'?') => {
                out.push_str("MAKEVAR");
                i += 2;
            }
            _ => {
                out.push('$');
                i += 1;
            }
        }
    }
    out
}

/// Whether a session file's name says it is source for a compiler (what
/// no shell reads).
fn compiled(name: &str) -> bool {
    let Some((_, ext)) = name.rsplit_once('.') else {
        return false;
    };
    matches!(
        ext,
        "rs" | "go"
            | "java"
            | "kt"
            | "kts"
            | "scala"
            | "c"
            | "h"
            | "cc"
            | "cpp"
            | "cxx"
            | "hpp"
            | "cs"
            | "fs"
            | "swift"
            | "m"
            | "mm"
            | "zig"
            | "hs"
            | "ml"
            | "dart"
            | "ex"
            | "exs"
            | "erl"
            | "clj"
            | "groovy"
            | "sql"
            | "proto"
    )
}

/// The interpreter a session file's name says it is for.
fn language_of(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1;
    Some(match ext {
        "py" => "python3",
        "sh" | "bash" | "zsh" => "sh",
        "js" | "mjs" | "cjs" | "ts" => "node",
        "rb" => "ruby",
        "pl" | "pm" => "perl",
        "php" => "php",
        "lua" => "lua",
        _ => return None,
    })
}

/// The commands of a `package.json`'s `scripts` (npm runs `pre…`/`post…`
/// and lifecycle scripts on its own).
pub fn package_scripts(text: &str) -> Vec<String> {
    named_package_scripts(text)
        .into_iter()
        .map(|(_, command)| command)
        .collect()
}

/// A `package.json`'s `scripts`, each with its name.
pub fn named_package_scripts(text: &str) -> Vec<(String, String)> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    value
        .get("scripts")
        .and_then(|s| s.as_object())
        .map(|scripts| {
            scripts
                .iter()
                .filter_map(|(name, v)| Some((name.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}
