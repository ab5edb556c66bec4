//! The program tables and lookups over a simple command's words: which
//! programs are interpreters, shells, network clients, archivers or
//! wrappers that run another command (`sudo`, `env`, `xargs`), which of
//! their options take a value, and which word is the program at all.
//! Data and pure predicates, so teaching the guard a new program is an
//! edit here; the findings they lead to are made in `rules.rs`.

use super::Context;
use super::lex::is_assignment;

#[rustfmt::skip]
pub(super) const INTERPRETERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox",
    "python", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua",
    "luajit", "tclsh", "osascript", "pwsh", "powershell", "Rscript", "irb",
];

#[rustfmt::skip]
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox",
];

#[rustfmt::skip]
pub(super) const NETWORK: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "ftp", "lftp",
    "tftp", "telnet", "dig", "nslookup", "host", "ping", "ping6", "traceroute", "tracepath",
    "whois", "http", "https", "xh", "aws", "gsutil", "gcloud", "az", "s3cmd", "rclone", "gh",
    "aria2c", "axel", "lynx", "links", "w3m", "mail", "mailx", "sendmail", "ssh-keyscan",
    "drill", "kdig", "delv", "resolvectl", "nmap", "mosh", "rsh", "rlogin", "smbclient",
    "tcpdump", "ncftp", "httpie", "grpcurl", "websocat", "mutt", "msmtp", "swaks", "arping",
];

/// `tool subcommand` pairs that upload.
pub(super) const PUBLISH: &[(&str, &str)] = &[
    ("cargo", "publish"),
    ("npm", "publish"),
    ("yarn", "publish"),
    ("pnpm", "publish"),
    ("twine", "upload"),
    ("docker", "push"),
    ("docker", "login"),
    ("gem", "push"),
    ("poetry", "publish"),
];

#[rustfmt::skip]
pub(super) const ARCHIVERS: &[&str] = &[
    "tar", "gtar", "bsdtar", "zip", "7z", "7za", "rar", "jar", "cpio",
];

/// Operands that mean "the whole workspace".
#[rustfmt::skip]
pub(super) const WHOLE_TREE: &[&str] = &[
    ".", "./", "*", "./*", ".*", "$PWD", "${PWD}", "/", "~", "~/", "$HOME", "..", "../",
];

/// Programs that run the rest of their words as a command.
#[rustfmt::skip]
pub(super) const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "nohup", "time", "nice", "ionice", "timeout", "stdbuf", "command",
    "builtin", "exec", "xargs", "watch", "setsid", "unbuffer", "chrt", "taskset", "strace",
];

/// Inline code that talks to the network.
#[rustfmt::skip]
pub(super) const NETWORK_CODE: &[&str] = &[
    "socket", "http", "urllib", "requests", "fetch(", "XMLHttpRequest", "net.", "Net::", "LWP",
    "IO::Socket", "dgram", "smtplib", "ftplib", "telnetlib", "paramiko", "websocket",
];

/// Git config keys whose values run programs or redirect traffic.
#[rustfmt::skip]
pub(super) const GIT_CONFIG_RISKY: &[&str] = &[
    "url", "insteadof", "hookspath", "sshcommand", "fsmonitor", "credential", "askpass",
    "alias.", "filter.", "textconv", "gpg.program", "gitproxy", "core.pager", "core.editor",
];

/// Options of grep that take the next word as their value.
pub(super) const GREP_VALUED: &[&str] = &[
    "-e",
    "-f",
    "-m",
    "-A",
    "-B",
    "-C",
    "-d",
    "-D",
    "--regexp",
    "--file",
    "--max-count",
];

/// Options of rg, ag and ack that take the next word as their value.
pub(super) const RG_VALUED: &[&str] = &[
    "-e",
    "-f",
    "-m",
    "-A",
    "-B",
    "-C",
    "-g",
    "-t",
    "-T",
    "-j",
    "-M",
    "-E",
    "--glob",
    "--type",
    "--type-not",
    "--regexp",
    "--file",
    "--max-count",
    "--iglob",
    "--ignore-file",
];

/// The index of the word that is the program, after assignments, shell
/// keywords and wrappers (`sudo`, `env`, `timeout 10`, `xargs -n1`). Also
/// reports `env` alone (an environment dump) and privilege escalation.
pub(super) fn program_index(words: &[&str], cx: &mut Context<'_>) -> Option<usize> {
    let mut i = 0;
    let mut wrapper: Option<&str> = None;
    while i < words.len() {
        let w = words[i];
        if is_assignment(w)
            || matches!(
                w,
                "!" | "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "{" | "}"
            )
        {
            i += 1;
            continue;
        }
        if let Some(wrapper) = wrapper
            && w.starts_with('-')
        {
            if wrapper == "command" && matches!(w, "-v" | "-V") {
                return None; // looks a program up, runs nothing
            }
            // An option's value is a word like any other: `xargs -a
            // FILE` reads FILE, `env -C DIR` runs the command in DIR.
            let (option, value) = match w.split_once('=') {
                Some((o, v)) if o.starts_with("--") => (o, Some(v)),
                _ if option_takes_value(wrapper, w) => (w, words.get(i + 1).copied()),
                _ => (w, None),
            };
            let attached = attached_value(wrapper, w);
            if let Some(value) = value.or(attached) {
                match (wrapper, option) {
                    ("env", "-S" | "--split-string") => {
                        cx.analyze(value, 1, false);
                        return None;
                    }
                    ("env", "-C" | "--chdir") | ("sudo" | "doas", "-D" | "--chdir") => {
                        cx.protected(value, "directory the command runs in");
                        cx.change_directory(&[value]);
                    }
                    _ => cx.protected(value, "wrapper option"),
                }
                if attached.is_some() && value.len() < w.len() && !w.contains('=') {
                    i += 1;
                    continue;
                }
            }
            i += if option_takes_value(wrapper, w) { 2 } else { 1 };
            continue;
        }
        if matches!(wrapper, Some("timeout" | "nice" | "watch")) && looks_like_duration(w) {
            i += 1;
            continue;
        }
        let name = basename(w);
        if WRAPPERS.contains(&name) {
            if matches!(name, "sudo" | "doas") {
                cx.find(
                    "privilege",
                    format!("`{name}` runs a command as another user"),
                );
            }
            wrapper = Some(name);
            i += 1;
            continue;
        }
        return Some(i);
    }
    if wrapper == Some("env") {
        cx.env_dump("env");
    }
    None
}

/// Whether a wrapper's option takes the next word as its value.
pub(super) fn option_takes_value(wrapper: &str, option: &str) -> bool {
    let with_value: &[&str] = match wrapper {
        "sudo" | "doas" => &[
            "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--chdir",
        ],
        "env" => &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "-p"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e"],
        "xargs" => &["-I", "-P", "-L", "-d", "-n", "-s", "-E", "-a", "--arg-file"],
        "watch" => &["-n", "--interval"],
        "strace" => &["-o", "-e", "-p", "-s"],
        _ => &[],
    };
    with_value.contains(&option)
}

/// `-aFILE`, `-CDIR`: a short option of a wrapper with its value
/// attached.
fn attached_value<'w>(wrapper: &str, word: &'w str) -> Option<&'w str> {
    if word.starts_with("--") || word.len() <= 2 {
        return None;
    }
    let option = &word[..2];
    (option_takes_value(wrapper, option) && !option_takes_value(wrapper, word)).then(|| &word[2..])
}

pub(super) fn looks_like_duration(w: &str) -> bool {
    let digits = w.trim_end_matches(['s', 'm', 'h', 'd']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
}

pub(super) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

pub(super) fn is_interpreter(program: &str) -> bool {
    INTERPRETERS.contains(&program)
        || ["python", "pypy", "perl", "ruby", "php", "node", "lua"]
            .iter()
            .any(|p| {
                program.strip_prefix(p).is_some_and(|v| {
                    !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')
                })
            })
}

pub(super) fn is_shell(program: &str) -> bool {
    SHELLS.contains(&program)
}

/// An interpreter in a pipe runs its input as code unless it was given a
/// script, a module or inline code.
pub(super) fn reads_stdin_as_code(program: &str, args: &[&str]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-" || (is_shell(program) && a == "-s") {
            return true;
        }
        if matches!(
            a,
            "-c" | "-e" | "-E" | "-r" | "-m" | "--eval" | "-p" | "--print"
        ) {
            return false;
        }
        if !a.starts_with('-') {
            return false; // a script file
        }
        i += 1;
    }
    true
}

pub(super) fn decodes(program: &str, args: &[&str]) -> bool {
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(a));
    match program {
        "base64" | "base32" | "basenc" => has(&["-d", "--decode", "-D"]),
        "xxd" => has(&["-r", "-revert", "-r -p", "-rp"]),
        "openssl" => has(&["-d"]) || args.first().is_some_and(|a| *a == "base64"),
        "uudecode" | "gpg" => true,
        _ => false,
    }
}

/// Whether a git subcommand prints file contents (not only names, stats
/// or messages).
pub(super) fn prints_contents(sub: &str, rest: &[&str]) -> bool {
    let has = |flags: &[&str]| rest.iter().any(|a| flags.contains(a));
    match sub {
        "log" | "whatchanged" => {
            has(&["-p", "-u", "--patch", "--full-diff"])
                || rest
                    .iter()
                    .any(|a| a.starts_with("-L") || a.starts_with("--unified"))
        }
        "stash" => rest.first() == Some(&"show") && has(&["-p", "-u", "--patch"]),
        // `--stat -p` prints the patch too.
        "diff" | "show" if has(&["-p", "-u", "--patch", "--patch-with-stat"]) => true,
        "diff" => !has(&[
            "--stat",
            "--name-only",
            "--name-status",
            "--numstat",
            "--shortstat",
            "--quiet",
        ]),
        "show" => {
            !has(&[
                "--stat",
                "--name-only",
                "--name-status",
                "--no-patch",
                "-s",
                "--oneline",
            ]) || rest.iter().any(|a| a.contains(':'))
        }
        "grep" => !has(&[
            "-l",
            "-L",
            "--name-only",
            "--files-with-matches",
            "-c",
            "--count",
            "-q",
        ]),
        _ => true,
    }
}

/// An archiver that packs its operands (`tar` extracting or listing only
/// reads an archive).
pub(super) fn packs_files(program: &str, args: &[&str]) -> bool {
    ARCHIVERS.contains(&program) && !(program.ends_with("tar") && tar_reads_archive(args))
}

/// `tar` extracting or listing reads an archive; it does not pack the tree.
pub(super) fn tar_reads_archive(args: &[&str]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        matches!(*a, "--extract" | "--get" | "--list")
            || (a.starts_with('-') && !a.starts_with("--") && (a.contains('x') || a.contains('t')))
            || (i == 0 && !a.starts_with('-') && (a.contains('x') || a.contains('t')))
    })
}

/// `host:path`, `user@host:path`, `scheme://…`.
pub(super) fn is_remote_spec(arg: &str) -> bool {
    if arg.starts_with('-') {
        return false;
    }
    if arg.contains("://") {
        return !arg.starts_with("file://");
    }
    match arg.split_once(':') {
        Some((host, _)) => {
            !host.is_empty()
                && !host.contains('/')
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@'))
        }
        None => false,
    }
}

/// `grep` reads directories: `-r`, `-R`, `--recursive`, `-d recurse`.
pub(super) fn grep_recursive(args: &[&str]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        matches!(
            *a,
            "--recursive" | "--dereference-recursive" | "--directories=recurse"
        ) || (a.starts_with('-') && !a.starts_with("--") && (a.contains('r') || a.contains('R')))
            || (*a == "-d" && args.get(i + 1) == Some(&"recurse"))
    })
}

/// The files and directories a grep-like command searches: its operands
/// after the pattern (none given: the current directory).
pub(super) fn search_operands<'w>(args: &[&'w str], valued: &[&str]) -> Vec<&'w str> {
    let mut operands = Vec::new();
    let mut pattern_given = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            operands.extend(args[i + 1..].iter().copied());
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            if matches!(a, "-e" | "-f" | "--regexp" | "--file")
                || a.starts_with("--regexp=")
                || a.starts_with("--file=")
            {
                pattern_given = true;
            }
            if valued.contains(&a) {
                i += 1;
            }
        } else {
            operands.push(a);
        }
        i += 1;
    }
    if !pattern_given && !operands.is_empty() {
        operands.remove(0);
    }
    if operands.is_empty() {
        operands.push(".");
    }
    operands
}

/// find's `-name` / `-iname` patterns (pattern, case-folded).
pub(super) fn find_names(program: &str, args: &[&str]) -> Vec<(String, bool)> {
    if program != "find" {
        return Vec::new();
    }
    args.windows(2)
        .filter_map(|w| match w[0] {
            "-name" => Some((w[1].to_string(), false)),
            "-iname" => Some((w[1].to_string(), true)),
            _ => None,
        })
        .collect()
}
