//! What a session learns at its start, before any command: the values of
//! the workspace's secret stores (and of those inside dependency and build
//! directories), config files of any name that hold a secret of a known
//! shape (secret stores from then on), tokens of a known shape anywhere in
//! the workspace's text (learned, not masked: masking code would break the
//! project), credentials left out of the environment, and credentials in
//! the parts of home and the system that commands see (a token in
//! `~/.gitconfig`'s `insteadOf`, a registry token in cargo's config):
//! learned and masked. Any tool output carrying one is redacted from then
//! on, and a command's copy of one is quarantined.

use std::path::{Path, PathBuf};

use super::{Guard, secrets, storewalk};
use crate::files::Workspace;

/// Secret files read at session start, at most, and their size.
const MAX_STARTUP_FILES: usize = 64;
const MAX_STARTUP_BYTES: u64 = 256 * 1024;

/// Config files read at session start for secrets, at most.
const MAX_CONFIG_FILES: usize = 400;

/// Other text files scanned for tokens of a known shape, at most, and
/// their bytes together.
const MAX_TEXT_FILES: usize = 2_000;
const MAX_TEXT_BYTES: u64 = 16 * 1024 * 1024;

impl Guard {
    /// Remember the values of a protected file the session read: every
    /// assignment's value in an env-style file, or the whole content of a
    /// key file.
    pub fn observe_protected(&self, rel: &str, content: &str) {
        if !self.policy.paths.is_protected(rel) && !self.is_found_store(rel) {
            return;
        }
        self.learn_store_values(rel, content);
    }
    /// Learn the values of a secret store's `content`, shown as `shown`.
    fn learn_store_values(&self, shown: &str, content: &str) {
        if super::paths::public_pem(content) {
            return;
        }
        let mut known = self.known();
        let source = format!("the protected file {shown}");
        // Secrets of a known shape anywhere in it, whatever the file's
        // syntax (a JSON value on an env line, a key inside a long line
        // that a reader cuts).
        for hit in secrets::scan(content) {
            known.ledger.add(&hit.secret, &source);
        }
        let mut any = false;
        for value in super::values::protected_values(content) {
            if known.ledger.add(&value, &source) || known.ledger.secrets().any(|s| s == value) {
                any = true;
            }
        }
        if !any && content.contains("-----BEGIN") {
            known.ledger.add(content.trim(), &source);
        }
    }
    /// Learns the secrets the session starts with: the values in the
    /// workspace's secret files (what a command could print, masked or
    /// not) and the credentials left out of commands' environment. Any
    /// tool output that carries one is redacted from then on.
    pub fn learn_startup_secrets(&self, ws: &Workspace, env_secrets: &[(String, String)]) {
        {
            let mut known = self.known();
            for (name, value) in env_secrets {
                // A path names where a credential is (masked when it is
                // a file: `system.rs`), not the credential.
                if value.starts_with('/') && Path::new(value).exists() {
                    continue;
                }
                known
                    .ledger
                    .add(value, &format!("the environment variable {name}"));
            }
        }
        let found = storewalk::walk(ws.root(), &self.policy.paths, &mut Default::default());
        let skipped = storewalk::skipped_stores(ws.root(), &self.policy.paths, &found.skipped);
        self.known().skipped_stores = skipped.clone();
        let files = found.stores.into_iter().chain(skipped);
        for path in files.take(MAX_STARTUP_FILES) {
            let Ok(rel) = path.strip_prefix(ws.root()) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() || meta.len() > MAX_STARTUP_BYTES {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&path) {
                self.observe_protected(&rel, &text);
            }
        }
        // Stores only history holds (a `.env` committed once, removed):
        // commands may read git's objects.
        for (rel, commit, text) in super::history::stores_in_history(ws.root(), &self.policy.paths)
        {
            let short = commit.get(..12).unwrap_or(&commit);
            self.learn_store_values(&format!("{rel} (in commit {short})"), &text);
        }
        self.learn_config_secrets(ws);
        let home = std::env::var_os("HOME").and_then(|h| PathBuf::from(h).canonicalize().ok());
        self.learn_home_secrets(home.as_deref());
        self.learn_git_credentials(ws, &found.run_later, home.as_deref());
    }

    /// Credentials git configs hold that no shape names: a CI checkout's
    /// `http.<url>.extraheader` (`AUTHORIZATION: basic <base64 of
    /// user:token>`), `smtpPass`, a password in a remote's URL. Read from
    /// the workspace's repository, nested ones and submodules, and the
    /// user's and the system's configs. Commands may read these files
    /// (git needs them), so what they hold is redacted wherever it shows.
    fn learn_git_credentials(&self, ws: &Workspace, run_later: &[PathBuf], home: Option<&Path>) {
        let mut files: Vec<PathBuf> = Vec::new();
        let mut repos: Vec<PathBuf> = vec![ws.root().to_path_buf()];
        repos.extend(
            run_later
                .iter()
                .filter(|p| p.ends_with(".git"))
                .filter_map(|p| p.parent().map(Path::to_path_buf)),
        );
        for repo in repos.iter().take(64) {
            if let Some(dirs) = crate::files::git::locate(repo) {
                files.push(dirs.git_dir.join("config"));
                files.push(dirs.common.join("config"));
            }
        }
        if let Ok(modules) = std::fs::read_dir(ws.root().join(".git/modules")) {
            files.extend(modules.flatten().take(64).map(|e| e.path().join("config")));
        }
        if let Some(home) = home {
            files.push(home.join(".gitconfig"));
            files.push(home.join(".config/git/config"));
        }
        files.push(PathBuf::from("/etc/gitconfig"));
        files.extend(std::env::var_os("GIT_CONFIG_GLOBAL").map(PathBuf::from));
        files.sort();
        files.dedup();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let source = format!("the git config {}", file.display());
            let mut known = self.known();
            for value in git_config_credentials(&text) {
                known.ledger.add(&value, &source);
            }
            for hit in secrets::scan(&text) {
                known
                    .ledger
                    .add(&hit.secret, &format!("{source} ({})", hit.rule));
            }
        }
    }

    /// Config files by any name (`appsettings.json`, a compose override,
    /// a service's `config.yml`) that hold a secret of a known shape, or a value the
    /// session already knows, are secret stores from the start: masked
    /// for commands like `.env`, their secrets learned.
    fn learn_config_secrets(&self, ws: &Workspace) {
        // Data, not code: masking a module (Django's settings.py) would
        // break the project's own tests.
        const CONFIG: &[&str] = &[
            "json",
            "yml",
            "yaml",
            "toml",
            "ini",
            "cfg",
            "conf",
            "properties",
            "xml",
            "config",
        ];
        const SKIPPED: &[&str] = &[
            "node_modules",
            "target",
            "vendor",
            "dist",
            "build",
            ".git",
            ".nib",
            ".venv",
            "venv",
            "__pycache__",
        ];
        let (mut configs, mut texts, mut text_bytes) = (0usize, 0usize, 0u64);
        let (mut fixture_texts, mut fixture_bytes) = (0usize, 0u64);
        let walk = ignore::WalkBuilder::new(ws.root())
            .standard_filters(false)
            .max_depth(Some(8))
            .filter_entry(|e| !SKIPPED.contains(&e.file_name().to_string_lossy().as_ref()))
            .build();
        for entry in walk.flatten() {
            if configs >= MAX_CONFIG_FILES
                && texts >= MAX_TEXT_FILES
                && fixture_texts >= MAX_TEXT_FILES
            {
                break;
            }
            let path = entry.path();
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let config = path
                .extension()
                .is_some_and(|x| CONFIG.contains(&x.to_string_lossy().as_ref()));
            let Ok(rel) = path.strip_prefix(ws.root()) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if self.policy.paths.is_protected(&rel) {
                continue; // learnt above
            }
            let fixture = looks_like_fixture(&rel) && !super::paths::is_template(&rel);
            let Some(len) = entry
                .metadata()
                .ok()
                .map(|m| m.len())
                .filter(|l| *l <= MAX_STARTUP_BYTES)
            else {
                continue;
            };
            if config {
                if configs >= MAX_CONFIG_FILES {
                    continue;
                }
                configs += 1;
            } else {
                // Tests and docs have a budget of their own: a large
                // suite does not crowd out the project's other files.
                let (files, bytes) = if fixture {
                    (&mut fixture_texts, &mut fixture_bytes)
                } else {
                    (&mut texts, &mut text_bytes)
                };
                if *files >= MAX_TEXT_FILES || *bytes + len > MAX_TEXT_BYTES {
                    continue;
                }
                *files += 1;
                *bytes += len;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue; // not text
            };
            let hits = secrets::scan(&text);
            let mut known = self.known();
            // A test's, an example's or a document's tokens are its own
            // dummies, neither learned nor masked, but for shapes that
            // are never dummies (`sk_live_`, a GitHub token). A template
            // (`.env.example`) is where a real token is pasted by
            // mistake: read whole, though its name says example.
            if fixture && (!config || known.ledger.check(&text).is_empty()) {
                for hit in hits.iter().filter(|h| h.live_anywhere()) {
                    known
                        .ledger
                        .add(&hit.secret, &format!("{rel} ({})", hit.rule));
                }
                continue;
            }
            // A config file holding a secret is a store: masked too. Code
            // and other text only teach the ledger.
            let holds_known = config && (!hits.is_empty() || !known.ledger.check(&text).is_empty());
            for hit in hits {
                known
                    .ledger
                    .add(&hit.secret, &format!("{rel} ({})", hit.rule));
            }
            if holds_known {
                known.tainted.insert(rel.clone());
                drop(known);
                // Its other values too (a password beside the key): an
                // edit of their lines asks a person, as for `.env`.
                self.observe_protected(&rel, &text);
            }
        }
    }

    /// Credentials in the parts of home and of the system commands see:
    /// config files that may hold one (`~/.gitconfig`'s `insteadOf` with a
    /// token, a cargo registry token, npm's global config, gradle's init
    /// scripts), read at start; one that holds a secret of a known shape
    /// is learned and masked. Credential files of toolchains kept outside
    /// home (`CARGO_HOME=/usr/local/cargo`) are masked whatever they hold.
    fn learn_home_secrets(&self, home: Option<&Path>) {
        let mut candidates: Vec<PathBuf> = Vec::new();
        let mut always: Vec<PathBuf> = Vec::new();
        if let Some(home) = home {
            for rel in HOME_CONFIGS {
                candidates.push(home.join(rel));
            }
            for (dir, leaf) in HOME_CONFIG_DIRS {
                if let Ok(entries) = std::fs::read_dir(home.join(dir)) {
                    for entry in entries.flatten().take(64) {
                        candidates.push(join_leaf(&entry.path(), leaf));
                    }
                }
            }
        }
        candidates.extend(SYSTEM_CONFIGS.iter().map(PathBuf::from));
        // The system's own secrets, readable to a command run as root:
        // password hashes and the host's private ssh keys.
        always.extend(SYSTEM_SECRETS.iter().map(PathBuf::from));
        if let Ok(entries) = std::fs::read_dir("/etc/ssh") {
            always.extend(entries.flatten().map(|e| e.path()).filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                name.is_some_and(|n| n.starts_with("ssh_host_") && n.ends_with("_key"))
            }));
        }
        // Other deployments' stores, key files variables name, files at
        // `/` and `/etc/profile.d`: the system directories are shown whole.
        let vars: Vec<(String, String)> = std::env::vars().collect();
        let system = super::system::look(&self.policy.paths, &vars);
        let by_name = system.stores.clone();
        always.extend(system.stores);
        candidates.extend(system.candidates);
        for (var, files, credentials) in TOOLCHAIN_CONFIGS {
            let Some(dir) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
                continue;
            };
            for file in *files {
                let path = join_leaf(Path::new(&dir), file);
                if *credentials {
                    always.push(path);
                } else {
                    candidates.push(path);
                }
            }
        }
        let mut stores = Vec::new();
        for path in candidates.into_iter().chain(always.iter().cloned()) {
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            if !real
                .metadata()
                .is_ok_and(|m| m.is_file() && m.len() <= MAX_STARTUP_BYTES)
            {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&real) else {
                continue;
            };
            let hits = secrets::scan(&text);
            let mut known = self.known();
            let shown = real.display().to_string();
            let mut holds = !hits.is_empty();
            for hit in hits {
                known
                    .ledger
                    .add(&hit.secret, &format!("{shown} ({})", hit.rule));
            }
            // Shapeless values: a credential's export, a store's every
            // assignment.
            let mut values = super::system::credential_assignments(&text);
            if by_name.contains(&path) {
                values.extend(super::values::protected_values(&text));
            }
            for value in values {
                known.ledger.add(&value, &shown);
                holds |= value.trim().chars().count() >= super::ledger::MIN_SECRET_LEN;
            }
            if holds || always.contains(&path) {
                stores.push(real);
            }
        }
        stores.sort();
        stores.dedup();
        self.known().home_stores = stores;
    }
}

/// Whether `rel` is a test's, an example's or documentation's: tokens
/// there are dummies the project's own edits keep touching (a secret
/// rule's shape in `tests/fixtures/auth.py`), not credentials to learn.
pub(super) fn looks_like_fixture(rel: &str) -> bool {
    const STARTS: &[&str] = &[
        "test", "spec", "fixture", "example", "sample", "mock", "fake", "dummy",
    ];
    const WHOLE: &[&str] = &["doc", "docs", "documentation"];
    rel.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| {
            WHOLE.contains(&w)
                || STARTS.iter().any(|s| w.starts_with(s))
                || w.ends_with("test")
                || w.ends_with("tests")
        })
}

/// Values in git config text that are credentials whatever their shape:
/// an `extraheader`'s (and, for `basic`, the token inside its base64),
/// and `password`, `smtpPass`, `token`-named keys' values; and the
/// password part of any URL.
pub(super) fn git_config_credentials(text: &str) -> Vec<String> {
    const KEYS: &[&str] = &["extraheader", "password", "smtppass", "token", "oauthtoken"];
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim().trim_matches('"').trim();
        if KEYS.contains(&key.as_str()) && !value.is_empty() {
            let lower = value.to_ascii_lowercase();
            let credential = [
                "authorization: basic ",
                "authorization: bearer ",
                "authorization: token ",
                "basic ",
                "bearer ",
            ]
            .iter()
            .find_map(|p| lower.starts_with(p).then(|| value[p.len()..].trim()))
            .unwrap_or(value);
            out.push(credential.to_string());
            // base64 of `user:token`, or of the token alone.
            let decoded = super::decode::base64(credential.as_bytes());
            if let Ok(decoded) = String::from_utf8(decoded)
                && decoded.chars().all(|c| c.is_ascii_graphic())
            {
                let token = decoded.split_once(':').map_or(decoded.as_str(), |(_, t)| t);
                out.push(token.trim().to_string());
            }
        }
        // scheme://user:password@host, a local default left out.
        out.extend(
            line.split(|c: char| c.is_whitespace() || c == '"')
                .filter_map(super::values::url_password)
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
    }
    out.retain(|v| v.len() >= 8);
    out
}

/// `dir/leaf`, or `dir` itself for an empty leaf (a variable naming the
/// file).
fn join_leaf(dir: &Path, leaf: &str) -> PathBuf {
    if leaf.is_empty() {
        dir.to_path_buf()
    } else {
        dir.join(leaf)
    }
}

/// Files under home that commands see and that may hold a credential.
const HOME_CONFIGS: &[&str] = &[
    ".gitconfig",
    ".config/git/config",
    ".cargo/config.toml",
    ".cargo/config",
    ".gradle/init.gradle",
    ".gradle/init.gradle.kts",
    ".yarnrc.yml",
    ".yarnrc",
    ".condarc",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".config/uv/uv.toml",
    ".bundle/config",
];

/// Files one directory down under home: `(directory, file in each entry)`.
const HOME_CONFIG_DIRS: &[(&str, &str)] =
    &[(".gradle/init.d", ""), (".nvm/versions/node", "etc/npmrc")];

/// System-wide configs commands see.
const SYSTEM_CONFIGS: &[&str] = &[
    "/etc/npmrc",
    "/usr/local/etc/npmrc",
    "/etc/pip.conf",
    "/etc/gitconfig",
    "/etc/environment",
];

/// The system's secrets, masked whatever they hold.
const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
];

/// Toolchain homes named by a variable: `(variable, files, credentials
/// whatever they hold)`.
const TOOLCHAIN_CONFIGS: &[(&str, &[&str], bool)] = &[
    ("CARGO_HOME", &["credentials", "credentials.toml"], true),
    ("CARGO_HOME", &["config.toml", "config"], false),
    ("GRADLE_USER_HOME", &["gradle.properties"], true),
    ("M2_HOME", &["conf/settings.xml"], false),
    ("MAVEN_HOME", &["conf/settings.xml"], false),
    ("PIP_CONFIG_FILE", &[""], false),
    ("NPM_CONFIG_USERCONFIG", &[""], true),
    ("NPM_CONFIG_GLOBALCONFIG", &[""], false),
    ("CONDARC", &[""], false),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_everyday_git_config_holds_no_secret_and_a_token_url_does() {
        let everyday = "[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n\tsigningkey = 3AA5C34371567BD2\n[core]\n\teditor = vim\n[init]\n\tdefaultBranch = main\n[credential]\n\thelper = cache --timeout=3600\n";
        assert!(
            secrets::scan(everyday).is_empty(),
            "{:?}",
            secrets::scan(everyday)
        );
        let token = "[url \"https://x-access-token:ghp_Zq8vL2mWx9RtK4pN7cYbQ2sDf3Gh5Jk7Lm9N@github.com/\"]\n\tinsteadOf = https://github.com/\n";
        assert!(!secrets::scan(token).is_empty());
    }

    #[test]
    fn git_configs_give_up_credentials_of_no_known_shape() {
        // base64 of `x-access-token:Qw3rTy9uIoP1aS2dF4gH`.
        let basic = "eC1hY2Nlc3MtdG9rZW46UXczclR5OXVJb1AxYVMyZEY0Z0g=".to_string();
        let text = format!(
            "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {basic}\n[sendemail]\n\tsmtpPass = Hunter2Hunter2\n[remote \"v\"]\n\turl = https://bot:Zx9Yw8Vu7Ts6@git.example.org/app.git\n[core]\n\teditor = vim\n"
        );
        let got = git_config_credentials(&text);
        for want in [
            basic.as_str(),
            "Qw3rTy9uIoP1aS2dF4gH",
            "Hunter2Hunter2",
            "Zx9Yw8Vu7Ts6",
        ] {
            assert!(got.iter().any(|g| g == want), "{want} not in {got:?}");
        }
        assert!(!got.iter().any(|g| g == "vim"));
    }

    #[test]
    fn tests_examples_and_docs_are_fixtures() {
        for rel in [
            "tests/test_auth.py",
            "docs/setup.md",
            "src/examples/key.rs",
            "spec/x.rb",
        ] {
            assert!(looks_like_fixture(rel), "{rel}");
        }
        for rel in [
            "infra/main.tf",
            "Dockerfile",
            "scripts/deploy.sh",
            "src/config.php",
        ] {
            assert!(!looks_like_fixture(rel), "{rel}");
        }
    }
}
