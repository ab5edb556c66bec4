//! The project's files its commit hooks run: a pre-commit `repo: local`
//! hook's `entry` (`python3 tools/lint.py`), the files husky's and
//! lefthook's hooks name, and the package.json scripts they call
//! (`npm run lint` → `node scripts/lint.js`).
//!
//! The hook configs themselves are read-only to commands and need a
//! Security confirm to write (`mounts::AUTO_RUN`), but what they run is an
//! ordinary file: a line added to it runs at the user's next `git commit`,
//! on the host, with no further choice. So each such file is judged as a
//! run-later file: a write by fs-write or fs-edit asks a person, and a
//! command's change to it is put back (`prim::tools::autorun`).

use std::path::Path;

/// Hook configs read, and the directory of husky's hook files.
const CONFIGS: &[&str] = &[
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
];
const HOOK_DIRS: &[&str] = &[".husky", ".githooks"];

/// Config and hook files larger than this are not read.
const MAX_CONFIG_BYTES: u64 = 256 * 1024;

/// Files a hook names, at most.
const MAX_SCRIPTS: usize = 64;

/// The files under `root` the project's commit hooks run, relative to
/// it, each with the config that runs it.
pub fn hook_scripts(root: &Path) -> Vec<(String, String)> {
    let read = |rel: &str| -> Option<String> {
        let path = root.join(rel);
        let meta = path.metadata().ok()?;
        (meta.is_file() && meta.len() <= MAX_CONFIG_BYTES)
            .then(|| std::fs::read_to_string(path).ok())
            .flatten()
    };
    let scripts = read("package.json")
        .map(|text| super::shell::named_package_scripts(&text))
        .unwrap_or_default();
    let mut out: Vec<(String, String)> = Vec::new();
    let add = |command: &str, by: &str, out: &mut Vec<(String, String)>| {
        for rel in named_files(root, command, &scripts) {
            if out.len() < MAX_SCRIPTS && !out.iter().any(|(r, _)| *r == rel) {
                out.push((rel, by.to_string()));
            }
        }
    };
    for config in CONFIGS {
        let Some(text) = read(config) else { continue };
        for line in text.lines() {
            let line = line.trim_start().trim_start_matches("- ");
            // pre-commit's `entry:`, lefthook's `run:` (and `script:`).
            if let Some(command) = ["entry:", "run:", "script:"]
                .iter()
                .find_map(|k| line.strip_prefix(k))
            {
                add(command, config, &mut out);
            }
        }
    }
    for dir in HOOK_DIRS {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries.flatten().take(64) {
            let rel = format!("{dir}/{}", entry.file_name().to_string_lossy());
            let Some(text) = read(&rel) else { continue };
            for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
                add(line, &rel, &mut out);
            }
        }
    }
    out
}

/// The workspace files a command line names (`tools/lint.py`,
/// `./scripts/check.sh`), and those of the package.json scripts it runs
/// (`npm run lint`, `yarn lint`, `pnpm run lint`).
fn named_files(root: &Path, command: &str, scripts: &[(String, String)]) -> Vec<String> {
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || "'\";&|()`=".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let rel = word.trim_start_matches("./");
        let plain = !rel.is_empty()
            && !rel.starts_with('/')
            && !rel.starts_with('-')
            && !rel.split('/').any(|c| c == "..");
        if plain && root.join(rel).is_file() && !out.iter().any(|o| o == rel) {
            out.push(rel.to_string());
        }
        // A package manager running one of the project's scripts.
        if matches!(*word, "npm" | "yarn" | "pnpm" | "bun") {
            let rest = &words[i + 1..];
            let name = match rest {
                ["run" | "run-script", name, ..] => Some(*name),
                [name, ..] if *word != "npm" || *name == "test" => Some(*name),
                _ => None,
            };
            if let Some((_, body)) = name.and_then(|n| scripts.iter().find(|(s, _)| s == n)) {
                // One level: a script's own `npm run` is not followed.
                out.extend(
                    named_files(root, body, &[])
                        .into_iter()
                        .filter(|r| !out.contains(r))
                        .collect::<Vec<_>>(),
                );
            }
        }
    }
    out
}

/// The config that runs `rel` at a commit, when a hook does: a file a
/// hook names, or one in a hooks directory git's settings name.
pub fn run_by_hook(root: &Path, rel: &str) -> Option<String> {
    if hooks_dirs(root).iter().any(|d| {
        rel.strip_prefix(d.as_str())
            .is_some_and(|r| r.starts_with('/'))
    }) {
        return Some("git's core.hooksPath".to_string());
    }
    hook_scripts(root)
        .into_iter()
        .find_map(|(r, by)| (r == rel).then_some(by))
}

/// The work tree's directories git runs hooks from by its settings: a
/// relative `core.hooksPath` in the repository's, the user's or the
/// system's config (`.hooks`, `tools/hooks`) names one in every
/// repository. (`.githooks` and `.husky` are read-only by name.)
pub fn hooks_dirs(root: &Path) -> Vec<String> {
    let mut configs = crate::files::git::user_config_files();
    if let Some(repo) = crate::files::git::locate(root) {
        configs.push(repo.common.join("config"));
        configs.push(repo.git_dir.join("config.worktree"));
    }
    let mut out = Vec::new();
    for path in configs {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (section, key, value) in crate::files::git::config_entries(&text) {
            if section != "core" || !key.eq_ignore_ascii_case("hookspath") {
                continue;
            }
            let dir = value.trim_start_matches("./").trim_end_matches('/');
            let relative = !dir.is_empty()
                && !dir.starts_with('/')
                && !dir.starts_with('~')
                && !dir.split('/').any(|c| c == ".." || c == ".git");
            if relative && !out.iter().any(|o| o == dir) {
                out.push(dir.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_hooks_run_are_found_through_configs_and_package_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let put = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        put(
            ".pre-commit-config.yaml",
            "repos:\n  - repo: local\n    hooks:\n      - id: lint\n        entry: python3 tools/lint.py --fix\n        language: system\n      - id: types\n        entry: bash -c './scripts/types.sh'\n  - repo: https://github.com/psf/black\n    hooks:\n      - id: black\n",
        );
        put("tools/lint.py", "print('ok')\n");
        put("scripts/types.sh", "mypy .\n");
        put(
            ".husky/pre-commit",
            "#!/bin/sh\n# run.sh is a comment\nnpm run lint && yarn test\n",
        );
        put(
            "package.json",
            r#"{"scripts": {"lint": "node scripts/lint.js", "test": "jest", "build": "node scripts/build.js"}}"#,
        );
        put("scripts/lint.js", "console.log('ok')\n");
        put("scripts/build.js", "\n");
        put("run.sh", "\n");
        put(
            "lefthook.yml",
            "pre-push:\n  commands:\n    check:\n      run: sh ci/check.sh {staged_files}\n",
        );
        put("ci/check.sh", "\n");
        let mut got: Vec<String> = hook_scripts(root).into_iter().map(|(r, _)| r).collect();
        got.sort();
        assert_eq!(
            got,
            [
                "ci/check.sh",
                "scripts/lint.js",
                "scripts/types.sh",
                "tools/lint.py"
            ]
        );
        assert_eq!(
            run_by_hook(root, "scripts/lint.js").as_deref(),
            Some(".husky/pre-commit")
        );
        // A script no hook runs, a file outside, a missing one: none.
        assert!(run_by_hook(root, "scripts/build.js").is_none());
        // A relative core.hooksPath names a hooks directory in the work
        // tree; an absolute one is outside it.
        put(
            ".git/config",
            "[core]\n\tbare = false\n\thooksPath = tools/hooks/\n[alias]\n\thookspath = x\n",
        );
        assert_eq!(hooks_dirs(root), ["tools/hooks"]);
        assert!(run_by_hook(root, "tools/hooks/pre-commit").is_some());
        assert!(run_by_hook(root, "tools/hooksmith.py").is_none());
        put(".git/config", "[core]\n\thooksPath = /usr/share/hooks\n");
        assert!(hooks_dirs(root).iter().all(|d| !d.contains("share")));
        put(
            ".githooks/pre-push",
            "../outside.sh /etc/passwd missing.sh\n",
        );
        assert!(
            hook_scripts(root)
                .iter()
                .all(|(r, _)| !r.contains("outside") && !r.starts_with('/'))
        );
    }
}
