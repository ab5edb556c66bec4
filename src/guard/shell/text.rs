//! Program text that is not a shell command line but names files or runs
//! commands: awk programs (`getline < FILE`, `print > FILE`, `system()`),
//! sed scripts (`r`, `w`, `e`, `s///w`), sqlite3 SQL and dot-commands
//! (`.read`, `.output`, `.shell`, `readfile()`, `ATTACH`), `script -c`,
//! `env -S`, and text a program reads on its standard input (here-strings,
//! here-documents, `< FILE`). Literal names are judged as operands; a name
//! or command computed at run time, or text that cannot be parsed, is a
//! finding of its own: the guard cannot see what it touches.

use super::Context;
use super::code::string_literals;
use super::programs::{is_interpreter, is_shell};

/// Programs that run a script of commands we do not parse, which can
/// read and write any file: only a person can say what it does.
const OPAQUE_SCRIPTING: &[&str] = &[
    "ed", "ex", "vim", "vi", "nvim", "emacs", "gdb", "expect", "m4", "lldb", "jshell", "bc",
];

impl Context<'_> {
    /// The per-program text rules, called for each simple command.
    pub(super) fn program_text(&mut self, program: &str, args: &[&str], depth: usize) {
        match program {
            "awk" | "gawk" | "mawk" | "nawk" => self.awk_args(program, args),
            "sed" | "gsed" => self.sed_args(args, depth),
            "sqlite3" => self.sqlite_args(args, depth),
            "script" => {
                // util-linux `script -c CMD [FILE]`
                let mut i = 0;
                while i < args.len() {
                    if matches!(args[i], "-c" | "--command")
                        && let Some(cmd) = args.get(i + 1)
                    {
                        self.analyze(cmd, depth + 1, false);
                        i += 1;
                    } else if let Some(cmd) = args[i].strip_prefix("--command=") {
                        self.analyze(cmd, depth + 1, false);
                    }
                    i += 1;
                }
            }
            "parallel" => {
                // `parallel CMD ::: args`: the command runs per input.
                let cmd: Vec<String> = args
                    .iter()
                    .take_while(|a| !a.starts_with(":::"))
                    .filter(|a| !a.starts_with('-'))
                    .map(|a| super::quote(a))
                    .collect();
                if !cmd.is_empty() {
                    self.analyze(&cmd.join(" "), depth + 1, false);
                }
            }
            p if OPAQUE_SCRIPTING.contains(&p)
                && args.iter().any(|a| {
                    matches!(
                        *a,
                        "-c" | "-s" | "-S" | "-x" | "-ex" | "-batch" | "--batch" | "-e"
                    ) || a.starts_with('+')
                }) =>
            {
                self.find(
                    "program-text",
                    format!("`{program}` runs a script of its own commands, which can read or write any file"),
                );
            }
            _ => {}
        }
    }

    /// Text a program reads on standard input (a here-string, a
    /// here-document, a file given with `<`): code for a shell or an
    /// interpreter, SQL for sqlite3.
    pub(super) fn stdin_text(&mut self, program: &str, args: &[&str], text: &str, depth: usize) {
        if is_shell(program) {
            self.analyze(text, depth + 1, false);
        } else if is_interpreter(program) {
            self.inline_code(program, text);
        } else if program == "sqlite3" {
            self.sql(text, depth);
        } else if matches!(program, "ed" | "ex") {
            self.find(
                "program-text",
                format!("`{program}` reads editor commands from its input, which can read or write any file"),
            );
        }
        let _ = args;
    }

    /// `prog < FILE`: a script fed on standard input is run like a named
    /// one; a session script through `<` is judged like one on the command
    /// line, any readable file through `<` into sqlite3 is read as SQL.
    pub(super) fn stdin_file(&mut self, program: &str, args: &[&str], file: &str, depth: usize) {
        let runs_input = (is_shell(program) || is_interpreter(program))
            && super::programs::reads_stdin_as_code(program, args);
        if runs_input {
            self.script(program, file, depth);
        } else if program == "sqlite3"
            && let Some(text) = self.disk.text(&self.at_cwd(file))
        {
            self.sql(&text, depth);
        }
    }

    fn awk_args(&mut self, program: &str, args: &[&str]) {
        let mut i = 0;
        let mut text: Option<String> = None;
        while i < args.len() {
            let a = args[i];
            match a {
                "-f" | "--file" => {
                    if let Some(file) = args.get(i + 1) {
                        self.protected(file, "awk program file");
                        if let Some(t) = self.disk.text(&self.at_cwd(file)) {
                            self.awk_program(program, &t);
                        }
                    }
                    text = Some(String::new());
                    i += 2;
                    continue;
                }
                "-v" | "-F" => {
                    i += 2;
                    continue;
                }
                "-e" | "--source" => {
                    if let Some(t) = args.get(i + 1) {
                        self.awk_program(program, t);
                    }
                    text = Some(String::new());
                    i += 2;
                    continue;
                }
                _ if a.starts_with('-') => {}
                _ if text.is_none() => {
                    text = Some(a.to_string());
                    self.awk_program(program, a);
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// An awk program: the files it redirects from or to, and the commands
    /// it pipes to or runs.
    pub(super) fn awk_program(&mut self, program: &str, code: &str) {
        if code.contains("ENVIRON") {
            self.find(
                "env-dump",
                format!("`{program}` reads the environment (`ENVIRON`), API keys included"),
            );
        }
        let io = [
            "getline", "system", "print >", "printf >", "print>", "printf>", "| ", "|&",
        ];
        let computed = awk_computed_target(code);
        let has_io = computed || io.iter().any(|m| code.contains(m)) || awk_redirects(code);
        if !has_io {
            return;
        }
        let literals = string_literals(code);
        for literal in &literals {
            self.protected(literal, "file named in the awk program");
            if literal.starts_with("/dev/tcp/")
                || literal.starts_with("/dev/udp/")
                || literal.starts_with("/inet/")
            {
                self.find(
                    "network-redirect",
                    format!("`{program}` opens the network connection `{literal}`"),
                );
            }
        }
        // `system("…")`, `"cmd" | getline`, `print | "cmd"`: commands.
        for literal in &literals {
            let looks_like_command = code.contains(&format!("system(\"{literal}\""))
                || code.contains(&format!("\"{literal}\" |"))
                || code.contains(&format!("| \"{literal}\""))
                || code.contains(&format!("|\"{literal}\""));
            if looks_like_command {
                self.analyze(literal, 1, false);
            }
        }
        // A target that is not a literal is computed when it runs.
        if computed {
            self.find(
                "program-text",
                format!("`{program}` reads, writes or runs a name it computes when it runs"),
            );
        }
    }

    fn sed_args(&mut self, args: &[&str], depth: usize) {
        let mut scripts: Vec<String> = Vec::new();
        let mut given = false;
        let mut i = 0;
        while i < args.len() {
            let a = args[i];
            match a {
                "-e" | "--expression" => {
                    if let Some(s) = args.get(i + 1) {
                        scripts.push(s.to_string());
                    }
                    given = true;
                    i += 2;
                    continue;
                }
                "-f" | "--file" => {
                    if let Some(file) = args.get(i + 1) {
                        self.protected(file, "sed script file");
                        if let Some(t) = self.disk.text(&self.at_cwd(file)) {
                            scripts.push(t);
                        }
                    }
                    given = true;
                    i += 2;
                    continue;
                }
                _ if a.starts_with("--expression=") => {
                    scripts.push(a["--expression=".len()..].to_string());
                    given = true;
                }
                _ if a.starts_with('-') => {}
                _ if !given => {
                    scripts.push(a.to_string());
                    given = true;
                }
                _ => {}
            }
            i += 1;
        }
        for script in scripts {
            match sed_io(&script) {
                Ok(io) => {
                    for file in io.files {
                        self.protected(&file, "file named in the sed script");
                        if io.writes {
                            self.write_target(&file, "file the sed script writes");
                        }
                    }
                    for cmd in io.commands {
                        self.find(
                            "program-text",
                            "a sed `e` command runs a shell command".into(),
                        );
                        if !cmd.is_empty() {
                            self.analyze(&cmd, depth + 1, false);
                        }
                    }
                }
                Err(why) => self.find(
                    "program-text",
                    format!("the sed script could not be read ({why}), and sed scripts can read and write files"),
                ),
            }
        }
    }

    fn sqlite_args(&mut self, args: &[&str], depth: usize) {
        let mut i = 0;
        let mut positional = 0;
        while i < args.len() {
            let a = args[i];
            if matches!(a, "-cmd" | "--cmd") {
                if let Some(sql) = args.get(i + 1) {
                    self.sql(sql, depth);
                }
                i += 2;
                continue;
            }
            if matches!(a, "-init" | "--init") {
                if let Some(file) = args.get(i + 1) {
                    self.protected(file, "sqlite3 init file");
                    if let Some(t) = self.disk.text(&self.at_cwd(file)) {
                        self.sql(&t, depth);
                    }
                }
                i += 2;
                continue;
            }
            if !a.starts_with('-') {
                positional += 1;
                if positional >= 2 {
                    self.sql(a, depth);
                }
            }
            i += 1;
        }
    }

    /// SQL and sqlite3 dot-commands: files they read or write, commands
    /// they run.
    pub(super) fn sql(&mut self, text: &str, depth: usize) {
        for line in text.lines() {
            let line = line.trim();
            let Some(dot) = line.strip_prefix('.') else {
                continue;
            };
            let mut words = dot.split_whitespace();
            let command = words.next().unwrap_or("");
            let rest: Vec<&str> = words.collect();
            match command {
                "shell" | "system" => {
                    self.find(
                        "program-text",
                        format!("the sqlite3 `.{command}` command runs a shell command"),
                    );
                    self.analyze(&rest.join(" "), depth + 1, false);
                }
                "read" | "open" | "import" | "restore" | "load" | "cd" => {
                    if let Some(f) = rest.iter().find(|w| !w.starts_with('-')) {
                        let f = f.trim_matches(|c| c == '"' || c == '\'');
                        self.protected(f, "file the SQL reads");
                        if let Some(cmd) = f.strip_prefix('|') {
                            self.analyze(cmd, depth + 1, false);
                        }
                    }
                }
                "output" | "once" | "backup" | "save" | "log" | "excel" => {
                    if let Some(f) = rest.iter().find(|w| !w.starts_with('-')) {
                        let f = f.trim_matches(|c| c == '"' || c == '\'');
                        if let Some(cmd) = f.strip_prefix('|') {
                            self.find(
                                "program-text",
                                format!(
                                    "the sqlite3 `.{command} |` pipes its output into a command"
                                ),
                            );
                            self.analyze(cmd, depth + 1, false);
                        } else {
                            self.protected(f, "file the SQL writes");
                            self.write_target(f, "file the SQL writes");
                        }
                    }
                }
                _ => {}
            }
        }
        let lower = text.to_ascii_lowercase();
        let file_functions = [
            "readfile(",
            "writefile(",
            "edit(",
            "load_extension(",
            "fsdir(",
        ];
        if file_functions.iter().any(|f| lower.contains(f)) || lower.contains("attach") {
            for literal in string_literals(text) {
                self.protected(&literal, "file named in the SQL");
            }
            let computed = file_functions
                .iter()
                .any(|f| lower.contains(f) && !lower.contains(&format!("{f}'")));
            if computed {
                self.find(
                    "program-text",
                    "the SQL reads or writes a file whose name it computes".into(),
                );
            }
        }
    }
}

/// `print > file`, `printf >> "x"`, `getline < f`, `cmd | getline`.
fn awk_redirects(code: &str) -> bool {
    code.contains("> \"") || code.contains(">\"") || code.contains(">>") || code.contains("< \"")
}

/// Whether an awk program's redirection or command is not a string
/// literal: `getline < f`, `print > name`, `system(cmd)`.
fn awk_computed_target(code: &str) -> bool {
    let bytes = code.as_bytes();
    let after = |at: usize| code[at..].trim_start();
    for (at, _) in code.match_indices("getline") {
        let rest = after(at + "getline".len());
        // `getline [var] < FILE`
        let rest = rest
            .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
            .trim_start();
        if let Some(target) = rest.strip_prefix('<')
            && !target.trim_start().starts_with('"')
        {
            return true;
        }
        // `EXPR | getline`: what precedes must be a literal
        let before = code[..at].trim_end();
        if before.ends_with('|') && !before[..before.len() - 1].trim_end().ends_with('"') {
            return true;
        }
    }
    for (at, _) in code.match_indices("system(") {
        if !after(at + "system(".len()).starts_with('"') {
            return true;
        }
    }
    // `print … > target` outside string literals: a target not quoted.
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'|' if !in_string && bytes.get(i + 1) == Some(&b'|') => {
                i += 2;
                continue;
            }
            b'>' | b'|' if !in_string => {
                let mut j = i + 1;
                if bytes.get(j) == Some(&b'>') || bytes.get(j) == Some(&b'&') {
                    j += 1;
                }
                let target = code[j..].trim_start();
                let is_print = code[..i].rfind("print").is_some_and(|p| {
                    !code[p..i].contains(';')
                        && !code[p..i].contains('{')
                        && !code[p..i].contains('}')
                });
                if is_print && !target.starts_with('"') && !target.starts_with("getline") {
                    return true;
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// What a sed script reads, writes and runs.
#[derive(Debug, Default)]
struct SedIo {
    files: Vec<String>,
    writes: bool,
    commands: Vec<String>,
}

/// Walk a sed script's commands: `r`/`R`/`w`/`W FILE`, `s///w FILE`,
/// `e [CMD]` and the `s///e` flag. Fails on text it cannot follow.
fn sed_io(script: &str) -> Result<SedIo, &'static str> {
    let chars: Vec<char> = script.chars().collect();
    let mut io = SedIo::default();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        let start = *i;
        while *i < chars.len() && chars[*i] != '\n' {
            *i += 1;
        }
        chars[start..*i]
            .iter()
            .collect::<String>()
            .trim()
            .to_string()
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ';' || c == '}' || c == '{' || c == '!' {
            i += 1;
            continue;
        }
        // An address: numbers, `$`, `/re/`, `\cREc`, ranges, steps.
        if c.is_ascii_digit() || c == '$' || c == ',' || c == '~' || c == '+' {
            i += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let delim = if c == '\\' {
                i += 1;
                *chars.get(i).ok_or("an address is cut off")?
            } else {
                '/'
            };
            i += 1;
            while i < chars.len() && chars[i] != delim {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            if i >= chars.len() {
                return Err("an address is never closed");
            }
            i += 1;
            // `I` and `M` flags of an address
            while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                i += 1;
            }
            continue;
        }
        if c == '#' {
            rest_of_line(&mut i);
            continue;
        }
        i += 1;
        match c {
            'r' | 'R' | 'w' | 'W' => {
                let file = rest_of_line(&mut i);
                if matches!(c, 'w' | 'W') {
                    io.writes = true;
                }
                if !file.is_empty() {
                    io.files.push(file);
                }
            }
            'e' => io.commands.push(rest_of_line(&mut i)),
            'a' | 'i' | 'c' => {
                // text to the end of the line (GNU one-liner form too)
                while i < chars.len() && chars[i] != '\n' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' => {
                while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                    i += 1;
                }
            }
            's' | 'y' => {
                let delim = *chars.get(i).ok_or("an `s` command is cut off")?;
                if delim == '\n' || delim == '\\' {
                    return Err("an `s` command has no delimiter");
                }
                i += 1;
                for _ in 0..2 {
                    while i < chars.len() && chars[i] != delim {
                        if chars[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    if i >= chars.len() {
                        return Err("an `s` command is never closed");
                    }
                    i += 1;
                }
                if c == 's' {
                    while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                        match chars[i] {
                            'w' => {
                                i += 1;
                                io.writes = true;
                                let file = rest_of_line(&mut i);
                                if !file.is_empty() {
                                    io.files.push(file);
                                }
                                break;
                            }
                            'e' => io.commands.push(String::new()),
                            _ => {}
                        }
                        i += 1;
                    }
                }
            }
            'l' | 'L' | 'q' | 'Q' => {
                // an optional number
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == ' ') {
                    i += 1;
                }
            }
            'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | '=' | 'F' => {}
            'v' => {
                rest_of_line(&mut i);
            }
            _ => return Err("an unknown sed command"),
        }
    }
    Ok(io)
}

#[cfg(test)]
mod tests {
    use super::sed_io;

    #[test]
    fn sed_scripts_name_their_files_and_commands() {
        let io = sed_io("1r .env").unwrap();
        assert_eq!(io.files, vec![".env"]);
        let io = sed_io("s/a/b/w out.txt").unwrap();
        assert_eq!(io.files, vec!["out.txt"]);
        assert!(io.writes);
        let io = sed_io("/x/e cat .env").unwrap();
        assert_eq!(io.commands, vec!["cat .env"]);
        let io = sed_io("s/foo/bar/g;s|a|b|").unwrap();
        assert!(io.files.is_empty() && io.commands.is_empty());
        let io = sed_io("/^#/d; 3,5p; $a\\\nend").unwrap();
        assert!(io.files.is_empty());
        assert!(sed_io("s/a/b").is_err());
    }
}
