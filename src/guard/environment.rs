//! What a shell command's environment holds: an allowlist, not a
//! denylist. A child gets the names builds need (`PATH`, `HOME`, the
//! locale, the terminal, where toolchains live) and what the user's
//! config names; any other variable, and any whose name or value looks
//! like a credential, is left out unless the user named it. What is left
//! out for looking like a credential is a secret the session knows from
//! the start: its value is redacted wherever a tool's output carries it.

use std::ffi::OsString;

use super::looks_like_credential_name;

/// Names every command gets when they are set.
const ALLOWED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "PWD",
];

/// Where toolchains live: settings, not secrets, and builds break without
/// them where they are not the defaults. The mount plan shows the places
/// they name where they would be hidden (`outside::toolchains`).
pub(super) const TOOLCHAIN: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "NVM_DIR",
    "NVM_BIN",
    "VOLTA_HOME",
    "SDKMAN_DIR",
    "BUN_INSTALL",
    "PNPM_HOME",
    "NODE_PATH",
    "GOPATH",
    "GOROOT",
    "GOFLAGS",
    "JAVA_HOME",
    "MAVEN_HOME",
    "GRADLE_HOME",
    "RBENV_ROOT",
    "GEM_HOME",
    "GEM_PATH",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "MAKEFLAGS",
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// A command's environment, made once per session.
#[derive(Debug, Clone, Default)]
pub struct ChildEnv {
    /// What commands get.
    pub vars: Vec<(OsString, OsString)>,
    /// Left out because the name or the value looks like a credential:
    /// `(name, value)`, for the ledger.
    pub secrets: Vec<(String, String)>,
    /// The names of everything else left out (for the docs' "why is my
    /// variable gone" and the session's warning).
    pub dropped: Vec<String>,
}

/// The environment for commands, from `vars` (this process's) and the
/// names the user's config allows (`[guard] env`; a name ending in `*` is
/// a prefix).
pub fn child_env(vars: impl Iterator<Item = (OsString, OsString)>, named: &[String]) -> ChildEnv {
    let mut out = ChildEnv::default();
    for (name, value) in vars {
        let (Some(n), Some(v)) = (name.to_str(), value.to_str()) else {
            out.dropped.push(name.to_string_lossy().into_owned());
            continue;
        };
        let user_named = named.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => n.starts_with(prefix),
            None => n == p,
        });
        let credential = looks_like_credential_name(n) || looks_like_credential_value(v);
        let allowed = ALLOWED.contains(&n) || n.starts_with("LC_") || TOOLCHAIN.contains(&n);
        if user_named || (allowed && !credential) {
            out.vars.push((name, value));
        } else if credential {
            out.secrets.push((n.to_string(), v.to_string()));
        } else {
            out.dropped.push(n.to_string());
        }
    }
    // Python writes no bytecode beside the sources: a `.pyc` a command
    // leaves runs in place of the source the user reviews (stamped with
    // its time and size), so `autorun.rs` removes those it finds.
    if !out.vars.iter().any(|(n, _)| n == "PYTHONDONTWRITEBYTECODE") {
        out.vars
            .push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
    }
    out.vars.sort();
    out.dropped.sort();
    out
}

/// A value the secret rules recognise (a token's shape), or a URL with a
/// password in it.
fn looks_like_credential_value(value: &str) -> bool {
    if value.len() < 8 {
        return false;
    }
    if !super::secrets::scan(value).is_empty() {
        return true;
    }
    // scheme://user:password@host
    value.split_once("://").is_some_and(|(_, rest)| {
        rest.split(['/', '?', '#'])
            .next()
            .and_then(|auth| auth.rsplit_once('@'))
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)], named: &[&str]) -> ChildEnv {
        let named: Vec<String> = named.iter().map(|s| s.to_string()).collect();
        child_env(
            pairs
                .iter()
                .map(|(n, v)| (OsString::from(n), OsString::from(v))),
            &named,
        )
    }

    #[test]
    fn allowlist_keeps_build_settings_and_drops_credentials() {
        let e = env(
            &[
                ("PATH", "/usr/bin"),
                ("HOME", "/home/u"),
                ("LC_ALL", "C.UTF-8"),
                ("CARGO_HOME", "/home/u/.cargo"),
                ("GITHUB_TOKEN", "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
                (
                    "AWS_SECRET_ACCESS_KEY",
                    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                ),
                ("DATABASE_URL", "postgres://app:hunter22@db/app"),
                ("DISPLAY", ":0"),
                ("MY_SETTING", "1"),
            ],
            &["MY_SETTING"],
        );
        let names: Vec<&str> = e.vars.iter().filter_map(|(n, _)| n.to_str()).collect();
        // (And Python's bytecode switched off: `autorun.rs` removes any.)
        assert_eq!(
            names,
            [
                "CARGO_HOME",
                "HOME",
                "LC_ALL",
                "MY_SETTING",
                "PATH",
                "PYTHONDONTWRITEBYTECODE"
            ]
        );
        let secrets: Vec<&str> = e.secrets.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            secrets,
            ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DATABASE_URL"]
        );
        assert_eq!(e.dropped, ["DISPLAY"]);
    }

    #[test]
    fn a_named_credential_is_the_users_choice() {
        let e = env(
            &[("NPM_TOKEN", "npm_abcdefabcdefabcdefabcdefabcdefabcdef")],
            &["NPM_*"],
        );
        assert!(e.vars.iter().any(|(n, _)| n == "NPM_TOKEN"));
        assert!(e.secrets.is_empty());
    }
}
