//! The files a simple command writes: redirection targets and the
//! destinations of the programs that write (`tee`, `cp`, `mv`, `dd of=`,
//! `sed -i`, `-o FILE`…). A target outside the workspace is judged as the
//! file tools judge it: it needs a person's yes, whatever the shell's
//! write confirm says. The targets and renames also go to the caller, who
//! tracks scripts through them and checks written files afterwards.

use super::Context;

/// The indexes of `args` that are not files the program reads: those it
/// only writes (a copy's destination, `tee`'s files), judged as write
/// targets, and find's name patterns.
pub(super) fn write_only_operands(program: &str, args: &[&str]) -> Vec<usize> {
    let operands: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.starts_with('-'))
        .map(|(i, _)| i)
        .collect();
    match program {
        // find's tests take patterns, not files
        "find" => args
            .windows(2)
            .enumerate()
            .filter(|(_, w)| {
                matches!(
                    w[0],
                    "-path"
                        | "-ipath"
                        | "-name"
                        | "-iname"
                        | "-wholename"
                        | "-iwholename"
                        | "-regex"
                        | "-iregex"
                        | "-lname"
                        | "-ilname"
                )
            })
            .map(|(i, _)| i + 1)
            .collect(),
        "tee" | "touch" | "mkdir" => operands,
        "cp" | "install"
            if operands.len() >= 2
                && !args
                    .iter()
                    .any(|a| a.starts_with("-t") || a.starts_with("--target")) =>
        {
            operands.last().copied().into_iter().collect()
        }
        _ => Vec::new(),
    }
}

impl Context<'_> {
    /// One file the command writes, as written in the command.
    pub(super) fn write_target(&mut self, word: &str, what: &str) {
        if word.is_empty() {
            return;
        }
        for form in self.expansions(word) {
            let placed = self.at_cwd(&form);
            if self.disk.write_needs_person(&placed) {
                self.find(
                    "protected-path",
                    format!("the {what} `{word}` writes the protected path `{placed}`"),
                );
            }
            if self.disk.outside(&placed) {
                self.find(
                    "outside-workspace",
                    format!("the {what} `{word}` writes outside the workspace"),
                );
            }
            if !self.out.writes.contains(&placed) {
                self.out.writes.push(placed);
            }
        }
    }

    /// The destinations of programs that write files, and the renames
    /// among them.
    pub(super) fn program_writes(&mut self, program: &str, args: &[&str]) {
        let operands: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !a.starts_with('-') || *a == "-")
            .collect();
        match program {
            "tee" | "touch" | "truncate" | "rm" | "rmdir" | "mkdir" | "shred" | "unlink" => {
                for op in operands.iter().filter(|o| **o != "-") {
                    self.write_target(op, "file");
                }
            }
            "chmod" | "chown" | "chgrp" => {
                for op in operands.iter().skip(1) {
                    self.write_target(op, "file");
                }
            }
            "cp" | "mv" | "install" | "ln" | "rsync" => {
                let into = args
                    .windows(2)
                    .find(|w| matches!(w[0], "-t" | "--target-directory"))
                    .map(|w| w[1])
                    .or_else(|| {
                        args.iter()
                            .find_map(|a| a.strip_prefix("--target-directory="))
                    });
                let (sources, dest) = match into {
                    Some(dir) => (
                        operands.iter().filter(|o| **o != dir).copied().collect(),
                        Some(dir),
                    ),
                    None => match operands.split_last() {
                        Some((dest, sources)) if !sources.is_empty() => {
                            (sources.to_vec(), Some(*dest))
                        }
                        _ => (Vec::new(), None),
                    },
                };
                let Some(dest) = dest else {
                    return;
                };
                self.write_target(dest, "destination");
                let dest = self.at_cwd(dest);
                for source in sources {
                    let source = self.at_cwd(source);
                    self.out.moves.push((source, dest.clone()));
                }
            }
            "dd" => {
                for a in args {
                    if let Some(f) = a.strip_prefix("of=") {
                        self.write_target(f, "output file");
                    }
                }
            }
            "sed" | "perl" | "ruby" if args.iter().any(|a| a.starts_with("-i")) => {
                for op in operands.iter().skip(1) {
                    self.write_target(op, "file edited in place");
                }
            }
            _ => {}
        }
        // `-o FILE`, `--output FILE`, `--output=FILE` (sort, curl, cc…).
        if !matches!(program, "git" | "ls" | "grep" | "rg" | "ps" | "find") {
            for (i, a) in args.iter().enumerate() {
                let value = match *a {
                    "-o" | "--output" | "--output-file" | "--out-file" => args.get(i + 1).copied(),
                    _ => a
                        .strip_prefix("--output=")
                        .or_else(|| a.strip_prefix("--output-file=")),
                };
                if let Some(v) = value.filter(|v| !v.is_empty() && *v != "-") {
                    self.write_target(v, "output file");
                }
            }
        }
    }
}
