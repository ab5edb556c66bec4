//! Path rules: which resolved workspace paths are never written (the
//! denylist) and which need a person's yes (protected paths), and whether a
//! new `.gitignore` stops ignoring protected files.
//!
//! Matching is case-insensitive everywhere: on a case-insensitive file
//! system `.ENV` is `.env`, and on a case-sensitive one treating `.ENV` as
//! protected costs one confirm, while the other mistake leaks.

use std::sync::OnceLock;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Paths no primitive may write: nib's own state and what git runs.
const DENIED: &[&str] = &[".nib", ".git/hooks", ".git/config"];

/// Protected paths, in gitignore syntax: the rest of `.git/`, the secret
/// stores ([`SECRET_STORES`]) and the files that run on their own
/// ([`RUNS_ON_ITS_OWN`]). Users add to these in their config (`[guard]
/// protected = [...]`); nothing removes from them.
pub const PROTECTED: &[&[&str]] = &[&[".git/"], SECRET_STORES, RUNS_ON_ITS_OWN, RUN_LATER_NAMED];

/// Protected paths that hold secrets (environment files, keys,
/// credentials): besides needing a person's yes to write, they are what
/// the file sandbox keeps shell commands from reading.
pub const SECRET_STORES: &[&str] = &[
    ".env*",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh/",
    ".aws/",
    ".gnupg/",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".docker/config.json",
    "credentials.json",
    "*.tfvars",
    ".git-credentials",
    ".pgpass",
    ".my.cnf",
    ".htpasswd",
    ".vault-token",
    ".kube/",
    "kubeconfig",
    "*.tfstate",
    "*.tfstate.backup",
    "*.ppk",
    "*.ovpn",
    "*.env",
    "secrets.yml",
    "secrets.yaml",
    "config/master.key",
    "config/credentials/*.key",
    // Found by a red team: stores by other names.
    "deploy_key*",
    "*.secret",
    ".secrets",
    ".dev.vars",
    "local.settings.json",
    "wp-config.php",
    "credentials.csv",
    "*_credentials.csv",
    "service-account*.json",
    "docker/config.json",
    "vault-token",
    ".flaskenv",
    "dotenv",
    "env.bak",
    "\\#.env#",
    // Found by a second red team: tools' own credential files.
    ".s3cfg",
    ".boto",
    "rclone.conf",
    ".sentryclirc",
    ".gem/credentials",
    "_netrc",
    "git-credentials",
    ".msmtprc",
    "npmrc",
    ".bash_history",
    ".zsh_history",
    "*_history",
    ".history",
    ".terraformrc",
    "terraform.rc",
    // Found by a third red team: stores named by the tools that read
    // them (Ansible's vault password, Dynaconf's secrets, Android's
    // signing keystore, Rails' database config, Composer's auth, Google
    // client tokens, Docker secrets).
    ".vault_pass",
    ".vault_pass.txt",
    "vault_pass.txt",
    ".vault-password",
    "vault-password.txt",
    "vault_password.txt",
    ".secrets.toml",
    "keystore.properties",
    "config/database.yml",
    // At the root only, where the tools write them: a test's fixture of
    // that name is no store.
    "/auth.json",
    "/token.json",
    "/token.pickle",
    "docker/secrets/",
    // A public key is no secret (`id_ed25519.pub`, a test's fixture).
    "!*.pub",
];

/// Whether `text` is PEM holding no private key (a certificate, a public
/// key): a `*.pem` store by name that is public by content.
pub fn public_pem(text: &str) -> bool {
    text.contains("-----BEGIN") && !text.contains("PRIVATE KEY") && !text.contains("ENCRYPTED")
}

/// Protected paths that run code or configure what does, later and
/// outside nib's sandboxes: CI configs, hooks, editor tasks. Reading them
/// is harmless; writing them needs a person.
pub const RUNS_ON_ITS_OWN: &[&str] = &[
    ".github/workflows/",
    ".github/actions/",
    ".gitlab-ci.yml",
    ".gitlab/ci/",
    ".gitlab-ci/",
    ".vscode/",
    "*.code-workspace",
    ".devcontainer*",
    ".cargo/config.toml",
    ".cargo/config",
    ".yarnrc.yml",
    ".yarnrc",
    ".pnpmfile.cjs",
    ".husky/",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    ".githooks/",
    "lefthook*",
    ".lefthook*",
    ".circleci/",
    ".buildkite/",
    ".travis.yml",
    "azure-pipelines.yml",
    "Jenkinsfile",
    "bitbucket-pipelines.yml",
    ".mise.toml",
    "mise.toml",
    ".mise/",
    "bunfig.toml",
    "rust-toolchain.toml",
    "rust-toolchain",
];

/// Run-later files that tools obey in any directory they run in, not
/// only at the workspace's root (a crate's `.cargo/config.toml`, direnv's
/// `.envrc` on `cd`), with `package.json` and `composer.json`, whose
/// lifecycle scripts npm and Composer run for every workspace package:
/// looked for at any depth.
pub const RUN_LATER_NESTED: &[&str] = &[
    ".cargo/config.toml",
    ".cargo/config",
    "rust-toolchain.toml",
    "rust-toolchain",
    ".envrc",
    ".mise.toml",
    "mise.toml",
    "bunfig.toml",
    ".vscode/tasks.json",
    ".npmrc",
    "package.json",
    "composer.json",
];

/// More files that run code later, found by a second red team: other
/// agents' hooks and MCP servers, build tools' startup options, more CI
/// systems. One list for both the write rule and the mount plan (which
/// makes them read-only and removes one a command creates: a name here
/// matches a file or a directory).
pub const RUN_LATER_NAMED: &[&str] = &[
    // Found by a third red team: more agents' MCP servers and commands
    // they run on their own, and cloud IDEs' start-up tasks.
    ".aider.conf.yml",
    ".continue",
    "opencode.json",
    ".roo/mcp.json",
    ".kiro/settings",
    ".amazonq/mcp.json",
    ".replit",
    ".idx/dev.nix",
    ".codesandbox/tasks.json",
    "devfile.yaml",
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".cursor/mcp.json",
    ".gemini/settings.json",
    ".mvn/extensions.xml",
    ".mvn/jvm.config",
    ".mvn/maven.config",
    "gradle/wrapper/gradle-wrapper.properties",
    ".bazelrc",
    ".gitpod.yml",
    "devbox.json",
    ".irbrc",
    ".pdbrc",
    ".gitea/workflows",
    ".forgejo/workflows",
    ".drone.yml",
    ".woodpecker.yml",
    ".woodpecker",
    ".cirrus.yml",
    "appveyor.yml",
    ".appveyor.yml",
    ".semaphore",
    "cloudbuild.yaml",
    "buildspec.yml",
    "codemagic.yaml",
    ".tekton",
    ".teamcity",
];

/// A template of a secret file: `.env.example`, `.env.sample`,
/// `.env.template`, `.env.dist`, `example.env`, `config.env.tmpl`.
pub fn is_template(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_lowercase();
    const MARKS: &[&str] = &["example", "sample", "template", "tmpl", "dist", "defaults"];
    name.split('.')
        .filter(|part| !part.is_empty())
        .skip(usize::from(!name.starts_with('.')))
        .any(|part| MARKS.contains(&part))
        || MARKS.iter().any(|m| name.starts_with(&format!("{m}.env")))
}

/// What the path rules say about writing a workspace path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathVerdict {
    /// No path rule objects (a write still needs a Write confirm).
    Open,
    /// Needs a Security confirm: only a person may say yes.
    Protected(String),
    /// Never written.
    Denied(String),
}

/// The protected-path matchers, one per source, so that no source's
/// negation (`!.env*`) can take away what another protects: a path is
/// protected when any of them protects it.
///
/// - `builtin`: [`PROTECTED`], which nothing removes from;
/// - `user`: the user's `[guard] protected`; a `!pattern` there only
///   exempts paths from the user's own patterns;
/// - `project`: the workspace's `.nib/config.toml`, which comes from
///   whoever wrote the repository: it may only add, so its negations are
///   dropped (and reported in `warnings`).
#[derive(Debug, Clone)]
pub struct PathRules {
    builtin: Gitignore,
    /// The built-in [`SECRET_STORES`] alone: what the file sandbox hides.
    secret_stores: Gitignore,
    user: Gitignore,
    project: Gitignore,
    /// What was dropped from the project's patterns, for the user to see.
    warnings: Vec<String>,
}

impl Default for PathRules {
    fn default() -> PathRules {
        let builtin = matcher(PROTECTED.iter().flat_map(|l| l.iter().copied()))
            .unwrap_or_else(|_| Gitignore::empty());
        let secret_stores =
            matcher(SECRET_STORES.iter().copied()).unwrap_or_else(|_| Gitignore::empty());
        PathRules {
            builtin,
            secret_stores,
            user: Gitignore::empty(),
            project: Gitignore::empty(),
            warnings: Vec::new(),
        }
    }
}

impl PathRules {
    /// The built-in protected list plus the user's own `extra` patterns
    /// (gitignore syntax).
    pub fn new(extra: &[String]) -> Result<PathRules, String> {
        PathRules::layered(extra, &[])
    }

    /// The built-in list, the user's patterns and a workspace's patterns,
    /// each in its own matcher. A workspace pattern starting with `!` would
    /// un-protect a path: it is dropped, with a warning.
    pub fn layered(user: &[String], project: &[String]) -> Result<PathRules, String> {
        let mut warnings = Vec::new();
        let project: Vec<&str> = project
            .iter()
            .map(|p| p.trim())
            .filter(|p| {
                let negated = p.starts_with('!');
                if negated {
                    warnings.push(format!(
                        "ignored the workspace's protected pattern `{p}`: a workspace's \
                         .nib/config.toml may only add protected paths, never exempt one"
                    ));
                }
                !negated
            })
            .collect();
        Ok(PathRules {
            builtin: matcher(PROTECTED.iter().flat_map(|l| l.iter().copied()))?,
            secret_stores: matcher(SECRET_STORES.iter().copied())?,
            user: matcher(user.iter().map(String::as_str))?,
            project: matcher(project.into_iter())?,
            warnings,
        })
    }

    /// What was dropped from the workspace's patterns, and why.
    /// Adds a warning about a setting the workspace may not make.
    pub fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The path rules for writing `rel`, a resolved workspace-relative
    /// path: the denylist first, then the protected paths.
    pub fn verdict(&self, rel: &str) -> PathVerdict {
        let folded = rel.to_lowercase();
        if DENIED.iter().any(|d| under(&folded, d)) {
            return PathVerdict::Denied(format!("{rel} is on the denylist: nib never writes it"));
        }
        if self.is_protected(rel) {
            return PathVerdict::Protected(format!("{rel} is a protected path"));
        }
        PathVerdict::Open
    }

    /// Whether `rel` (workspace-relative, `/`-separated) is protected.
    /// Templates of secret files (`.env.example`, `prod.env.sample`) hold
    /// examples, not secrets: they are ordinary files.
    pub fn is_protected(&self, rel: &str) -> bool {
        let rel = rel.trim_start_matches("./");
        if rel.is_empty() || is_template(rel) {
            return false;
        }
        [&self.builtin, &self.user, &self.project]
            .iter()
            .any(|m| m.matched_path_or_any_parents(rel, false).is_ignore())
    }

    /// Whether `rel` is a protected path that holds secrets, not code: a
    /// built-in secret store, or any path the user or the workspace
    /// protects (they said it matters; nib cannot tell which kind it is).
    /// The file sandbox keeps commands from reading these.
    pub fn is_secret_store(&self, rel: &str) -> bool {
        let rel = rel.trim_start_matches("./");
        if rel.is_empty() || is_template(rel) {
            return false;
        }
        [&self.secret_stores, &self.user, &self.project]
            .iter()
            .any(|m| m.matched_path_or_any_parents(rel, false).is_ignore())
    }

    /// Whether `name`, a path relative to the home directory, is a
    /// built-in secret store (`.npmrc`, `.ssh`): the home directory is
    /// not a workspace, so the user's and the workspace's patterns do not
    /// apply there.
    pub fn is_builtin_secret_store(&self, name: &str) -> bool {
        !is_template(name)
            && self
                .secret_stores
                .matched_path_or_any_parents(name, false)
                .is_ignore()
    }

    /// Whether writing `rel` (not reading it) needs a person: denied paths
    /// and the protected files that run code or configure what does (CI,
    /// auto-run and hook locations, `.git/`, keys). Writing a secret store
    /// such as `.env` from a shell (`cp .env.example .env`) loses nothing
    /// to anyone; what is written into it is judged on its own.
    pub fn write_needs_person(&self, rel: &str) -> bool {
        if !matches!(self.verdict(rel), PathVerdict::Open) {
            let name = rel.rsplit('/').next().unwrap_or(rel).to_lowercase();
            let secret_store = (name.starts_with(".env") || name.ends_with(".env"))
                && !rel.to_lowercase().starts_with(".git/");
            return !secret_store || matches!(self.verdict(rel), PathVerdict::Denied(_));
        }
        false
    }

    /// What a change to a `.gitignore` does to protected files: a new
    /// `!pattern` line that un-ignores one, or a removed line that ignored
    /// one. Either makes a secret easy to commit.
    pub fn gitignore_weakening(&self, old: &str, new: &str) -> Option<String> {
        let old_lines: Vec<&str> = old.lines().map(str::trim).collect();
        let new_lines: Vec<&str> = new.lines().map(str::trim).collect();
        for line in &new_lines {
            if let Some(pattern) = line.strip_prefix('!')
                && !old_lines.contains(line)
                && covers_protected(self, pattern)
            {
                return Some(format!(
                    "the new .gitignore line `{line}` stops ignoring protected files"
                ));
            }
        }
        for line in &old_lines {
            if !line.is_empty()
                && !line.starts_with('#')
                && !line.starts_with('!')
                && !new_lines.contains(line)
                && covers_protected(self, line)
            {
                return Some(format!(
                    "removing the .gitignore line `{line}` stops ignoring protected files"
                ));
            }
        }
        None
    }
}

/// Whether a gitignore pattern matches a protected file: the pattern named
/// as a path, or any of a sample of typical protected names.
fn covers_protected(rules: &PathRules, pattern: &str) -> bool {
    let plain = pattern.trim_start_matches('/').trim_end_matches('/');
    if !plain.contains('*') && rules.is_protected(plain) {
        return true;
    }
    let mut b = GitignoreBuilder::new("");
    if b.case_insensitive(true).is_err() || b.add_line(None, pattern).is_err() {
        // An unreadable pattern is treated as weakening: judge, don't guess.
        return true;
    }
    let Ok(one) = b.build() else {
        return true;
    };
    samples()
        .iter()
        .any(|s| one.matched_path_or_any_parents(s, false).is_ignore())
}

/// Names that stand for protected files when testing a pattern.
fn samples() -> &'static [&'static str] {
    static SAMPLES: OnceLock<Vec<&'static str>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        vec![
            ".env",
            ".env.local",
            ".env.production",
            "config/.env",
            "server.key",
            "cert.pem",
            "id_rsa",
            "id_ed25519",
            ".npmrc",
            ".pypirc",
            ".netrc",
            "credentials.json",
            "prod.tfvars",
        ]
    })
}

/// One case-insensitive gitignore matcher over `patterns`.
fn matcher<'a>(patterns: impl Iterator<Item = &'a str>) -> Result<Gitignore, String> {
    let mut b = GitignoreBuilder::new("");
    b.case_insensitive(true)
        .map_err(|e| format!("protected paths: {e}"))?;
    for pat in patterns {
        b.add_line(None, pat)
            .map_err(|e| format!("protected path pattern {pat:?}: {e}"))?;
    }
    b.build().map_err(|e| format!("protected paths: {e}"))
}

fn under(rel: &str, dir: &str) -> bool {
    rel == dir
        || rel
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn stores_by_other_names_are_protected() {
        let r = PathRules::default();
        for name in [
            "keys/deploy_key",
            "wp-config.php",
            "secrets/service-account.json",
            "docker/config.json",
            ".dev.vars",
            "credentials.csv",
            "local.settings.json",
            ".secrets",
            ".flaskenv",
            "vault-token",
            "#.env#",
            "config/env.bak",
            "dotenv",
        ] {
            assert!(r.is_protected(name), "{name}");
        }
    }

    use super::*;

    #[test]
    fn denylist_protected_and_open() {
        let r = PathRules::default();
        for (path, want) in [
            (".nib/config.toml", "denied"),
            (".NIB/approvals", "denied"),
            (".git/hooks/pre-commit", "denied"),
            (".Git/Hooks/pre-commit", "denied"),
            (".git/config", "denied"),
            (".git/HEAD", "protected"),
            (".env", "protected"),
            (".ENV", "protected"),
            ("config/.env.local", "protected"),
            ("src/.envrc", "protected"),
            ("deploy/server.key", "protected"),
            ("home/.ssh/config", "protected"),
            (".github/workflows/ci.yml", "protected"),
            (".gitlab-ci.yml", "protected"),
            ("environment.txt", "open"),
            ("src/keys.rs", "open"),
            ("README.md", "open"),
            (".github/CODEOWNERS", "open"),
        ] {
            let got = match r.verdict(path) {
                PathVerdict::Open => "open",
                PathVerdict::Protected(_) => "protected",
                PathVerdict::Denied(_) => "denied",
            };
            assert_eq!(got, want, "{path}");
        }
    }

    #[test]
    fn user_patterns_add_protection() {
        let r = PathRules::new(&["deploy/*.yaml".into(), "vault/".into()]).unwrap();
        assert!(r.is_protected("deploy/prod.yaml"));
        assert!(r.is_protected("vault/a/b.txt"));
        assert!(!r.is_protected("src/deploy.yaml"));
    }

    #[test]
    fn no_negation_takes_away_built_in_protection() {
        // A cloned repository's .nib/config.toml: negations are dropped.
        let project: Vec<String> = ["!.env*", "!.github/workflows/", "!*.pem", "secrets/"]
            .map(String::from)
            .to_vec();
        let r = PathRules::layered(&[], &project).unwrap();
        for path in [
            ".env",
            ".env.production",
            ".github/workflows/ci.yml",
            "a.pem",
        ] {
            assert!(r.is_protected(path), "{path}");
        }
        assert!(r.is_protected("secrets/db.txt"), "additions still count");
        assert_eq!(r.warnings().len(), 3);
        assert!(r.warnings()[0].contains("`!.env*`"), "{:?}", r.warnings());
        // The user's own negation exempts only from the user's patterns.
        let user: Vec<String> = ["deploy/", "!deploy/README.md", "!.env"]
            .map(String::from)
            .to_vec();
        let r = PathRules::layered(&user, &[]).unwrap();
        assert!(r.is_protected("deploy/prod.yaml"));
        assert!(!r.is_protected("deploy/README.md"));
        assert!(r.is_protected(".env"), "the built-in list stays whole");
        assert!(r.warnings().is_empty());
    }

    #[test]
    fn gitignore_changes_that_expose_protected_files() {
        let r = PathRules::default();
        let old = "target/\n.env\n*.pem\n";
        assert!(
            r.gitignore_weakening(old, "target/\n.env\n*.pem\n!.env\n")
                .is_some()
        );
        assert!(r.gitignore_weakening(old, "target/\n*.pem\n").is_some());
        assert!(r.gitignore_weakening(old, "target/\n.env\n").is_some());
        assert!(
            r.gitignore_weakening(old, "target/\n.env\n*.pem\nnode_modules/\n")
                .is_none()
        );
        assert!(r.gitignore_weakening(old, ".env\n*.pem\n").is_none());
        assert!(r.gitignore_weakening("", "!src/keep.txt\n").is_none());
    }

    #[test]
    fn credential_stores_of_common_tools_are_protected() {
        let rules = PathRules::default();
        for path in [
            ".git-credentials",
            "home/.pgpass",
            "deploy/.kube/config",
            "infra/terraform.tfstate",
            "vpn/office.ovpn",
            "keys/putty.ppk",
            "deploy/.vault_pass",
            "config/database.yml",
            "app/keystore.properties",
            "docker/secrets/db_password",
            "token.pickle",
            "auth.json",
        ] {
            assert!(rules.is_protected(path), "{path}");
        }
        for path in [
            "src/credentials.rs",
            "docs/kube.md",
            "state.rs",
            "tfstate.md",
            "docs/database.yml.md",
            "src/auth_json.rs",
            "test/fixtures/token.json",
        ] {
            assert!(!rules.is_protected(path), "{path}");
        }
    }
}
