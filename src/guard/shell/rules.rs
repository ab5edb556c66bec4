//! The per-program rules: network programs and uploads, `eval` and
//! `source`, environment dumps, credentials from the environment, git
//! (push, remotes, risky config, history that prints contents), `find
//! -exec` and archives of the whole workspace. One simple command at a
//! time, after `programs.rs` has found which word is the program.

use super::expand::variable_refs;
use super::lex::Segment;
use super::programs::{
    ARCHIVERS, GIT_CONFIG_RISKY, NETWORK, PUBLISH, WHOLE_TREE, basename, decodes, is_interpreter,
    is_remote_spec, packs_files, prints_contents, reads_stdin_as_code,
};
use super::{Context, GitOutgoing, quote};

impl Context<'_> {
    /// `$GITHUB_TOKEN` on a command line hands the command a credential
    /// from nib's environment.
    pub(super) fn credential_variables(&mut self, words: &[&str]) {
        for w in words {
            for (name, _) in variable_refs(w) {
                if crate::guard::looks_like_credential_name(name) && !self.vars.contains_key(name) {
                    self.find(
                        "env-secret",
                        format!(
                            "`${name}` puts a credential from the environment into the command"
                        ),
                    );
                }
            }
        }
    }

    pub(super) fn program(&mut self, seg: &Segment, program: &str, args: &[&str], depth: usize) {
        if seg.piped_in && is_interpreter(program) && reads_stdin_as_code(program, args) {
            self.find(
                "pipe-to-interpreter",
                format!("a pipe into `{program}` runs whatever the previous command prints"),
            );
        }
        if seg.piped_out && decodes(program, args) {
            self.find(
                "decode-pipe",
                format!(
                    "`{program} {}` decodes hidden text into a pipe",
                    args.join(" ")
                ),
            );
        }
        if is_interpreter(program) {
            self.interpreter_args(program, args, depth);
        }
        // `./dump.sh`: the program is itself a script.
        let word = seg
            .words
            .iter()
            .map(|w| w.text.as_str())
            .find(|w| basename(w) == program);
        if let Some(word) = word.filter(|w| w.contains('/')) {
            self.script(program, word, depth);
        }
        if NETWORK.contains(&program) {
            self.find("network", format!("`{program}` talks to the network"));
        }
        if program == "getent"
            && args.first().is_some_and(|db| {
                matches!(
                    *db,
                    "hosts" | "ahosts" | "ahostsv4" | "ahostsv6" | "services"
                )
            })
        {
            self.find(
                "network",
                "`getent hosts` looks a name up in DNS, which carries data out in the name".into(),
            );
        }
        // `cp /usr/bin/curl ./x`: a network program under another name.
        for a in args {
            let name = basename(a.trim_start_matches("if="));
            if a.contains('/') && NETWORK.contains(&name) {
                self.find(
                    "network",
                    format!("`{a}` is the network program `{name}`, used here by path (copied or run under another name)"),
                );
            }
        }
        if let Some(sub) = args.iter().find(|a| !a.starts_with('-'))
            && PUBLISH.contains(&(program, sub))
        {
            self.find(
                "network",
                format!("`{program} {sub}` uploads to a registry"),
            );
        }
        match program {
            "eval" => self.find(
                "eval",
                "`eval` runs text as a command, hiding what it runs".into(),
            ),
            "source" | "." if !args.is_empty() => self.find(
                "source",
                format!(
                    "`{program} {}` runs a file's commands in this shell",
                    args[0]
                ),
            ),
            p if is_interpreter(p)
                && args.windows(2).any(|w| {
                    w[0] == "-m"
                        && matches!(
                            w[1],
                            "http.server" | "SimpleHTTPServer" | "smtpd" | "pyftpdlib"
                        )
                }) =>
            {
                self.find(
                    "network",
                    format!("`{program} -m` a server module shares files over the network"),
                )
            }
            "pip" | "pip3" | "npm" | "yarn" | "pnpm" | "cargo" | "uv" | "gem" | "go"
                if args
                    .iter()
                    .any(|a| a.contains("://") || a.starts_with("git+")) =>
            {
                self.find(
                    "network",
                    format!("`{program}` fetches code from a URL given on the command line"),
                )
            }
            "openssl" if args.first().is_some_and(|a| *a == "s_client") => self.find(
                "network",
                "`openssl s_client` opens a network connection".into(),
            ),
            "rsync" if args.iter().any(|a| is_remote_spec(a)) => self.find(
                "network",
                "`rsync` to or from another host talks to the network".into(),
            ),
            "git" => self.git(args),
            "printenv" => {
                let names: Vec<&&str> = args.iter().filter(|a| !a.starts_with('-')).collect();
                if names.is_empty() {
                    self.env_dump("printenv");
                }
                for name in names {
                    if crate::guard::looks_like_credential_name(name) {
                        self.find(
                            "env-secret",
                            format!("`printenv {name}` prints a credential from the environment"),
                        );
                    }
                }
            }
            "env" => {} // with no command: handled in program_index
            "set" | "export" | "declare" | "typeset"
                if args
                    .iter()
                    .all(|a| matches!(*a, "-p" | "-x" | "-px" | "-xp")) =>
            {
                self.env_dump(program)
            }
            "find" => self.find_exec(args, depth),
            _ => {}
        }
        self.archive(program, args);
    }

    pub(super) fn env_dump(&mut self, program: &str) {
        self.find(
            "env-dump",
            format!("`{program}` prints the environment, API keys included"),
        );
    }

    pub(super) fn find_exec(&mut self, args: &[&str], depth: usize) {
        let mut i = 0;
        while i < args.len() {
            if matches!(args[i], "-exec" | "-execdir" | "-ok" | "-okdir") {
                let rest: Vec<&str> = args[i + 1..]
                    .iter()
                    .take_while(|a| !matches!(**a, ";" | "+" | "\\;"))
                    .copied()
                    .collect();
                let quoted: Vec<String> = rest.iter().map(|w| quote(w)).collect();
                self.analyze(&quoted.join(" "), depth + 1, false);
                i += rest.len();
            }
            i += 1;
        }
    }

    pub(super) fn git(&mut self, args: &[&str]) {
        let mut i = 0;
        let mut dir = String::new();
        let mut elsewhere: Option<&str> = None;
        while i < args.len() {
            match args[i] {
                "-C" => {
                    if let Some(d) = args.get(i + 1) {
                        dir = if dir.is_empty() {
                            d.to_string()
                        } else {
                            format!("{dir}/{d}")
                        };
                    }
                    i += 2;
                }
                "--git-dir" | "--work-tree" => {
                    elsewhere = Some(args[i]);
                    i += 2;
                }
                a if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => {
                    elsewhere = Some(a);
                    i += 1;
                }
                "--namespace" | "--exec-path" | "--config-env" => i += 2,
                "-c" => {
                    if let Some(setting) = args.get(i + 1) {
                        self.git_config_key(setting);
                    }
                    i += 2;
                }
                a if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        let Some(&sub) = args.get(i) else {
            return;
        };
        let rest = &args[i + 1..];
        if matches!(
            sub,
            "add" | "stage" | "commit" | "push" | "update-index" | "apply" | "rm" | "mv"
        ) {
            let env_elsewhere = [
                "GIT_DIR",
                "GIT_WORK_TREE",
                "GIT_INDEX_FILE",
                "GIT_OBJECT_DIRECTORY",
            ]
            .iter()
            .find(|v| self.vars.contains_key(**v));
            if let Some(what) = elsewhere.or(env_elsewhere.copied()) {
                self.find(
                    "git-elsewhere",
                    format!("`git {sub}` with `{what}` works on a repository or index the guard does not check"),
                );
            }
            let placed = self.at_cwd(if dir.is_empty() { "." } else { &dir });
            let placed = placed.trim_start_matches("./");
            let placed = placed.strip_suffix("/.").unwrap_or(placed);
            self.out.staging.dir = placed.trim_end_matches('/').to_string();
            if self.out.staging.dir == "." {
                self.out.staging.dir.clear();
            }
        }
        match sub {
            "push" => {
                self.find("git-push", "`git push` sends commits to a remote".into());
                self.out.outgoing = Some(GitOutgoing::Push);
            }
            "commit" => {
                if self.out.outgoing.is_none() {
                    self.out.outgoing = Some(GitOutgoing::Commit);
                }
                self.commit_staging(rest);
            }
            "add" | "stage" => self.add_staging(rest),
            "update-index" => {
                if rest
                    .iter()
                    .any(|a| matches!(*a, "--index-info" | "--cacheinfo" | "--stdin"))
                {
                    self.find(
                        "git-plumbing",
                        "`git update-index` from a list stages content the command line does not show".into(),
                    );
                }
                let paths: Vec<String> = rest
                    .iter()
                    .filter(|a| !a.starts_with('-'))
                    .map(|a| a.to_string())
                    .collect();
                self.out.staging.tracked = true;
                self.out.staging.force = true; // update-index ignores .gitignore
                self.out.staging.paths.extend(paths);
            }
            "apply" if rest.iter().any(|a| matches!(*a, "--cached" | "--index")) => {
                self.out.staging.tracked = true;
                let patches = rest
                    .iter()
                    .filter(|a| !a.starts_with('-'))
                    .map(|a| a.to_string());
                self.out.staging.files.extend(patches);
            }
            "hash-object" if !rest.iter().any(|a| *a == "-w" || *a == "--stdin") => {}
            "hash-object" | "mktree" | "commit-tree" | "fast-import" | "replace"
            | "filter-branch" | "filter-repo" | "notes" => self.find(
                "git-plumbing",
                format!("`git {sub}` writes objects or history that the commit check does not see"),
            ),
            "remote" => {
                if let Some(action) = rest.iter().find(|a| !a.starts_with('-'))
                    && matches!(*action, "add" | "set-url")
                {
                    self.find(
                        "git-remote",
                        format!("`git remote {action}` points the repository at another host"),
                    );
                }
            }
            "config" => {
                let reading = rest
                    .iter()
                    .any(|a| a.starts_with("--get") || matches!(*a, "--list" | "-l" | "--unset"));
                let key = rest.iter().find(|a| !a.starts_with('-'));
                let has_value = rest.iter().filter(|a| !a.starts_with('-')).count() >= 2;
                if let Some(key) = key
                    && !reading
                    && has_value
                {
                    self.git_config_key(key);
                }
            }
            "log" | "show" | "diff" | "format-patch" | "grep" | "blame" | "annotate"
            | "cat-file" | "bundle" | "stash" | "whatchanged" | "fast-export"
                if prints_contents(sub, rest) =>
            {
                let pathspecs = match rest.iter().position(|a| *a == "--") {
                    Some(at) => rest[at + 1..].iter().map(|p| p.to_string()).collect(),
                    // `git blame [rev] file`: the file is its last word.
                    None if matches!(sub, "blame" | "annotate") => rest
                        .iter()
                        .rev()
                        .find(|a| !a.starts_with('-'))
                        .map(|p| vec![p.to_string()])
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                self.out
                    .git_history
                    .get_or_insert_with(Vec::new)
                    .extend(pathspecs.clone());
                if pathspecs.is_empty() {
                    // One unlimited command means every file.
                    self.out.git_history = Some(Vec::new());
                }
            }
            "archive" => {
                self.find(
                    "archive-workspace",
                    "`git archive` packs the repository into one file".into(),
                );
                // What it packs comes from git's objects, which the
                // sandbox does not mask: a committed secret file is in it,
                // unless the paths after the tree leave it out.
                let mut skip_value = false;
                let mut positional = Vec::new();
                for a in rest.iter() {
                    if skip_value {
                        skip_value = false;
                    } else if matches!(
                        *a,
                        "-o" | "--output" | "--prefix" | "--format" | "--remote" | "--exec"
                    ) {
                        skip_value = true;
                    } else if !a.starts_with('-') {
                        positional.push(a.to_string());
                    }
                }
                self.out.git_history = Some(positional.into_iter().skip(1).collect());
            }
            "clone" | "fetch" | "pull" | "ls-remote" | "submodule" => {
                if let Some(url) = rest.iter().find(|a| is_remote_spec(a)) {
                    self.find("network", format!("`git {sub}` contacts `{url}`"));
                }
            }
            _ => {}
        }
    }

    /// `git add` / `git stage`: what it puts in the index.
    fn add_staging(&mut self, rest: &[&str]) {
        let staging = &mut self.out.staging;
        staging.tracked = true;
        let mut operands = Vec::new();
        let mut after_dashes = false;
        for a in rest {
            if after_dashes || !a.starts_with('-') {
                operands.push(a.to_string());
                continue;
            }
            match *a {
                "--" => after_dashes = true,
                "-A" | "--all" | "--no-ignore-removal" => staging.all_untracked = true,
                "-f" | "--force" => staging.force = true,
                _ if a.starts_with("--pathspec-from-file") => staging.all_untracked = true,
                _ if !a.starts_with("--") && a.contains('f') => staging.force = true,
                _ if !a.starts_with("--") && a.contains('A') => staging.all_untracked = true,
                _ => {}
            }
        }
        if operands
            .iter()
            .any(|o| matches!(o.as_str(), "." | "*" | ":/" | "./" | ":"))
        {
            staging.all_untracked = true;
        }
        let placed: Vec<String> = operands.iter().map(|o| self.at_cwd(o)).collect();
        self.out.staging.paths.extend(placed);
    }

    /// `git commit`'s own staging: `-a`, paths given to it, and the
    /// message file it records.
    fn commit_staging(&mut self, rest: &[&str]) {
        let mut i = 0;
        while i < rest.len() {
            let a = rest[i];
            match a {
                "-a" | "--all" | "-i" | "--include" | "-o" | "--only" => {
                    self.out.staging.tracked = true
                }
                "-F" | "--file" | "-t" | "--template" => {
                    if let Some(f) = rest.get(i + 1) {
                        let placed = self.at_cwd(f);
                        self.out.staging.files.push(placed);
                    }
                    i += 1;
                }
                "-m" | "--message" | "-C" | "-c" | "--reuse-message" | "--reedit-message"
                | "--author" | "--date" | "--fixup" | "--squash" | "--cleanup" | "-S"
                | "--trailer" => i += 1,
                "--" => {
                    self.out.staging.tracked = true;
                    break;
                }
                _ if a.starts_with("--file=") || a.starts_with("--template=") => {
                    let f = a.split_once('=').map_or("", |(_, f)| f);
                    let placed = self.at_cwd(f);
                    self.out.staging.files.push(placed);
                }
                _ if a.starts_with('-') && !a.starts_with("--") && a.len() > 2 => {
                    // a bundle: `-qF msg`, `-amwip`, `-Fmsg`
                    let flags = &a[1..];
                    if flags.contains('a')
                        && flags.find('a') < flags.find(['m', 'F']).or(Some(usize::MAX))
                    {
                        self.out.staging.tracked = true;
                    }
                    if let Some(at) = flags.find(['F', 'm', 't', 'C', 'c']) {
                        let flag = flags.as_bytes()[at];
                        let attached = &flags[at + 1..];
                        let value = if attached.is_empty() {
                            i += 1;
                            rest.get(i).copied()
                        } else {
                            Some(attached)
                        };
                        if matches!(flag, b'F' | b't')
                            && let Some(f) = value
                        {
                            let placed = self.at_cwd(f);
                            self.out.staging.files.push(placed);
                        }
                    }
                }
                _ if !a.starts_with('-') => self.out.staging.tracked = true, // a pathspec
                _ => {}
            }
            i += 1;
        }
    }

    pub(super) fn git_config_key(&mut self, setting: &str) {
        let key = setting
            .split('=')
            .next()
            .unwrap_or(setting)
            .to_ascii_lowercase();
        if GIT_CONFIG_RISKY.iter().any(|k| key.contains(k)) {
            self.find(
                "git-config",
                format!("git config `{key}` can run programs or send data elsewhere"),
            );
        }
    }

    pub(super) fn archive(&mut self, program: &str, args: &[&str]) {
        let copies_tree = match program {
            p if ARCHIVERS.contains(&p) => packs_files(p, args),
            "cp" | "rsync" => args.iter().any(|a| {
                a.starts_with('-') && !a.starts_with("--") && (a.contains('r') || a.contains('a'))
                    || matches!(*a, "--recursive" | "--archive")
            }),
            _ => false,
        };
        if !copies_tree {
            return;
        }
        let mut prev = "";
        for arg in args {
            if WHOLE_TREE.contains(arg) && prev != "-C" && prev != "--directory" {
                self.find(
                    "archive-workspace",
                    format!("`{program}` of `{arg}` copies the whole workspace, protected files included"),
                );
                return;
            }
            prev = arg;
        }
    }
}
