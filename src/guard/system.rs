//! Secrets outside the workspace and home that a command could read, as
//! the system directories are shown whole: other deployments on the
//! machine (`/var/www/site/.env`, `/opt/app/config/master.key`), a key
//! file a variable names (`GOOGLE_APPLICATION_CREDENTIALS=/key.json`),
//! files at the top of `/`, and the exports of `/etc/profile.d`. Found at
//! a session's start, within a bound; the caller masks each in commands'
//! mount namespace and learns its values.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::paths::PathRules;

/// Where other deployments keep their files.
const APP_DIRS: &[&str] = &["/var/www", "/opt", "/usr/local/app"];

/// Directories never looked into: dependencies, toolchains' own trees.
const SKIPPED: &[&str] = &[
    "node_modules",
    ".git",
    "vendor",
    "site-packages",
    "dist-packages",
    "__pycache__",
    "include",
    "man",
    "locale",
];

/// Entries read at most across the app directories, in any one
/// directory (a dataset or a toolchain's thousands of files cannot use up
/// the rest's share), and how deep.
const MAX_ENTRIES: usize = 50_000;
const MAX_DIR_ENTRIES: usize = 2_000;
const MAX_DEPTH: usize = 8;

/// Variables that name a credential file by a name of no credential word.
const CREDENTIAL_FILE_VARS: &[&str] = &[
    "KUBECONFIG",
    "AWS_CONFIG_FILE",
    "NETRC",
    "PGSERVICEFILE",
    "BOTO_CONFIG",
    "RCLONE_CONFIG",
    "S3CFG",
];

/// What the look found.
#[derive(Debug, Default)]
pub(super) struct SystemFiles {
    /// Stores by name and files a credential variable names: masked
    /// whatever they hold, their values learned.
    pub stores: Vec<PathBuf>,
    /// Files masked when they hold a secret of a known shape or a
    /// credential-named assignment.
    pub candidates: Vec<PathBuf>,
}

/// Looks for the system's secret files: stores by name in the app
/// directories (breadth first, bounded), files the environment's
/// credential variables name, regular files at `/`, `/etc/profile.d`.
pub(super) fn look(rules: &PathRules, vars: &[(String, String)]) -> SystemFiles {
    let apps: Vec<&Path> = APP_DIRS.iter().map(Path::new).collect();
    look_in(rules, vars, &apps)
}

/// `look`, with the app directories given.
fn look_in(rules: &PathRules, vars: &[(String, String)], apps: &[&Path]) -> SystemFiles {
    let mut out = SystemFiles::default();
    let mut queue: VecDeque<(PathBuf, String, usize)> = apps
        .iter()
        .filter(|d| d.is_dir())
        .map(|d| (d.to_path_buf(), String::new(), 0))
        .collect();
    let mut read = 0usize;
    while let Some((dir, rel, depth)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten().take(MAX_DIR_ENTRIES) {
            read += 1;
            if read > MAX_ENTRIES {
                break;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if rules.is_builtin_secret_store(&rel) {
                // A link is masked where it leads (a deployment's shared
                // `.env` kept in `/etc`).
                if let Ok(real) = entry.path().canonicalize()
                    && real.is_file()
                {
                    out.stores.push(real);
                }
            } else if kind.is_dir() && depth < MAX_DEPTH && !SKIPPED.contains(&name.as_str()) {
                queue.push_back((entry.path(), rel, depth + 1));
            }
        }
    }
    for (name, value) in vars {
        if !names_credential_file(name) {
            continue;
        }
        // `KUBECONFIG=a:b` names several.
        for path in value.split(':').filter(|p| p.starts_with('/')) {
            if let Ok(real) = Path::new(path).canonicalize()
                && real.is_file()
            {
                out.stores.push(real);
            }
        }
    }
    let top_files = std::fs::read_dir("/").into_iter().flatten().flatten();
    out.candidates.extend(
        top_files
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path()),
    );
    if let Ok(entries) = std::fs::read_dir("/etc/profile.d") {
        out.candidates
            .extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
    }
    out.stores.sort();
    out.stores.dedup();
    out
}

/// Whether a variable named `name` points at a credential file
/// (`GOOGLE_APPLICATION_CREDENTIALS`, `AWS_SHARED_CREDENTIALS_FILE`,
/// `KUBECONFIG`, `PGPASSFILE`, `SSL_KEY_FILE`), not at a certificate
/// authority's bundle (`SSL_CERT_FILE`, `CURL_CA_BUNDLE`), which is public.
pub(super) fn names_credential_file(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    let credential = [
        "CREDENTIAL",
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSFILE",
    ]
    .iter()
    .any(|w| n.contains(w))
        || CREDENTIAL_FILE_VARS.contains(&n.as_str());
    let public = [
        "CA_BUNDLE",
        "CA_CERT",
        "CACERT",
        "CAINFO",
        "CERT_FILE",
        "CERT_DIR",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n.starts_with("SSL_CERT")
        || n.contains("PUBLIC");
    credential && !public && !n.contains("KEYBOARD")
}

/// The values of credential-named assignments in a shell script or an
/// environment file (`export DEPLOY_TOKEN=…`, `DB_PASSWORD="…"`).
pub(super) fn credential_assignments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        if name.is_empty()
            || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            || !super::looks_like_credential_name(name)
        {
            continue;
        }
        let quoted = value.trim().starts_with(['"', '\'']);
        let value = value.trim().trim_matches(['"', '\'']);
        // A path names where a credential is (masked when a variable of
        // the environment names it), not the credential.
        if !value.starts_with(['$', '/', '~']) && super::values::secret_like(name, value, quoted) {
            out.push(value.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_variables_name_files_and_ca_bundles_do_not() {
        for name in [
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AWS_SHARED_CREDENTIALS_FILE",
            "KUBECONFIG",
            "PGPASSFILE",
            "SSL_KEY_FILE",
            "VAULT_TOKEN_FILE",
            "AWS_CONFIG_FILE",
            "NETRC",
        ] {
            assert!(names_credential_file(name), "{name}");
        }
        for name in [
            "SSL_CERT_FILE",
            "CURL_CA_BUNDLE",
            "REQUESTS_CA_BUNDLE",
            "GIT_SSL_CAINFO",
            "NODE_EXTRA_CA_CERTS",
            "PATH",
            "TF_CLI_CONFIG_FILE",
        ] {
            assert!(!names_credential_file(name), "{name}");
        }
    }

    #[test]
    fn other_deployments_stores_and_named_key_files_are_found() {
        let apps = tempfile::tempdir().unwrap();
        let site = apps.path().join("www/site");
        std::fs::create_dir_all(site.join("config")).unwrap();
        std::fs::create_dir_all(site.join("node_modules/pkg")).unwrap();
        std::fs::write(site.join(".env"), "DB_PASSWORD=s1te-passw0rd-value\n").unwrap();
        std::fs::write(site.join("config/master.key"), "0123456789abcdef\n").unwrap();
        std::fs::write(site.join("node_modules/pkg/.env"), "X=1\n").unwrap();
        std::fs::write(site.join("index.php"), "<?php\n").unwrap();
        let key = apps.path().join("key.json");
        std::fs::write(&key, "{}").unwrap();
        let kube = apps.path().join("kube.yaml");
        std::fs::write(&kube, "users: []\n").unwrap();
        // A deployment's `.env` that is a link to where it is kept.
        let kept = apps.path().join("kept.env");
        std::fs::write(&kept, "TOKEN=x\n").unwrap();
        std::fs::create_dir_all(apps.path().join("www/other")).unwrap();
        std::os::unix::fs::symlink(&kept, apps.path().join("www/other/.env")).unwrap();
        // A big directory beside them does not use up the look.
        let big = apps.path().join("www/big");
        std::fs::create_dir_all(&big).unwrap();
        for i in 0..MAX_DIR_ENTRIES + 10 {
            std::fs::write(big.join(format!("f{i}")), "").unwrap();
        }
        let vars = vec![
            (
                "KUBECONFIG".to_string(),
                format!("/nonexistent:{}", kube.display()),
            ),
            (
                "GOOGLE_APPLICATION_CREDENTIALS".to_string(),
                key.display().to_string(),
            ),
            (
                "SSL_CERT_FILE".to_string(),
                site.join("index.php").display().to_string(),
            ),
        ];
        let found = look_in(&PathRules::default(), &vars, &[apps.path()]);
        let apps_real = apps.path().canonicalize().unwrap();
        let site = apps_real.join("www/site");
        let mut want = vec![
            site.join(".env"),
            apps_real.join("key.json"),
            apps_real.join("kube.yaml"),
            apps_real.join("kept.env"),
            site.join("config/master.key"),
        ];
        want.sort();
        // A dependency's own file is not looked into; a CA bundle's
        // variable names no credential.
        assert_eq!(found.stores, want);
        assert!(!found.candidates.contains(&site.join("index.php")));
    }

    #[test]
    fn exports_of_credentials_are_read() {
        let text = "# deploy\nexport DEPLOY_TOKEN=\"d3pl0y-s3cr3t-v4lue\"\nexport PATH=$PATH:/opt/bin\nDB_PASSWORD='hunter2hunter2'\nAPI_KEY=$FROM_ELSEWHERE\nexport XAUTHORITY=/home/dev/.Xauthority\n";
        assert_eq!(
            credential_assignments(text),
            vec!["d3pl0y-s3cr3t-v4lue", "hunter2hunter2"]
        );
    }
}
