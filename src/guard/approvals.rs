//! Standing approvals: rules the user saved ("don't ask again for fs-edit
//! under src/**", "shell: cargo test") that answer Write confirms they
//! cover. They live only in the user's config, never in a workspace (a
//! cloned repository must not be able to approve its own writes), and they
//! never answer a Security confirm: the client checks the confirm's kind
//! before it asks [`Approval::covers`].

use serde::Deserialize;

use crate::call::Call;

/// One standing approval, as `[[approvals]]` in the user's config:
///
/// ```toml
/// [[approvals]]
/// tools = ["fs-edit", "fs-write"]
/// paths = "src/**"
///
/// [[approvals]]
/// tools = ["shell"]
/// command = "cargo test"
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// The primitives it covers.
    pub tools: Vec<String>,
    /// For file tools: a glob over workspace-relative paths (`*` within a
    /// path segment, `**` across segments).
    #[serde(default)]
    pub paths: Option<String>,
    /// For `shell`: the leading words a command must start with. A command
    /// with shell operators (`;`, `|`, `&`, `` ` ``, `$(`, `>`, `<`) is
    /// never covered, so `cargo test; curl …` is asked about.
    #[serde(default)]
    pub command: Option<String>,
}

/// Characters that chain, substitute or redirect in a shell command.
const SHELL_OPERATORS: &[char] = &[';', '|', '&', '`', '$', '>', '<', '\n'];

impl Approval {
    /// Whether this approval answers a Write confirm for `call` (whose
    /// resolved path, for file tools, is `rel_path`).
    pub fn covers(&self, call: &Call, rel_path: &str) -> bool {
        let name = call.decl.name;
        if !self.tools.iter().any(|t| t == name) {
            return false;
        }
        if name == "shell" {
            let Some(prefix) = &self.command else {
                return false;
            };
            let command = call.arg("command").as_str();
            if command.contains(SHELL_OPERATORS) {
                return false;
            }
            let want: Vec<&str> = prefix.split_whitespace().collect();
            let got: Vec<&str> = command.split_whitespace().collect();
            return !want.is_empty() && got.starts_with(&want);
        }
        match &self.paths {
            Some(glob) => !rel_path.is_empty() && glob_match(glob, rel_path),
            None => false,
        }
    }

    /// What it covers, said the way the confirm shows it before saving:
    /// "fs-edit and fs-write under src/**", "shell: cargo test".
    pub fn scope(&self) -> String {
        let tools = match self.tools.as_slice() {
            [] => "nothing".to_string(),
            [one] => one.clone(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
        };
        match (&self.command, &self.paths) {
            (Some(c), _) if self.tools.iter().any(|t| t == "shell") => {
                format!("{tools}: commands starting with `{c}`")
            }
            (_, Some(p)) if p == "**" => format!("{tools} anywhere in the workspace"),
            (_, Some(p)) if p.contains('*') => format!("{tools} under {p}"),
            (_, Some(p)) => format!("{tools} of {p}"),
            _ => format!("{tools} (no scope: covers nothing)"),
        }
    }

    /// The approval the `a` key offers for a confirm: for file writes,
    /// fs-edit and fs-write under the file's directory (the file itself at
    /// the workspace root); for shell, the command's leading words (up to
    /// three, stopping at an option, a path or an assignment).
    pub fn suggest(call: &Call, rel_path: &str) -> Option<Approval> {
        match call.decl.name {
            "shell" => {
                let command = call.arg("command").as_str();
                if command.contains(SHELL_OPERATORS) {
                    return None;
                }
                let words: Vec<&str> = command
                    .split_whitespace()
                    .enumerate()
                    .take_while(|(i, w)| {
                        *i == 0
                            || !(w.starts_with("--")
                                || w.contains(['/', '=', '.'])
                                || w.starts_with('"')
                                || w.starts_with('\''))
                    })
                    .map(|(_, w)| w)
                    .take(3)
                    .collect();
                (!words.is_empty()).then(|| Approval {
                    tools: vec!["shell".into()],
                    paths: None,
                    command: Some(words.join(" ")),
                })
            }
            "fs-edit" | "fs-write" if !rel_path.is_empty() => {
                let paths = match rel_path.rsplit_once('/') {
                    Some((dir, _)) => format!("{dir}/**"),
                    None => rel_path.to_string(),
                };
                Some(Approval {
                    tools: vec!["fs-edit".into(), "fs-write".into()],
                    paths: Some(paths),
                    command: None,
                })
            }
            _ => None,
        }
    }

    /// The approval as a `[[approvals]]` TOML table.
    pub fn to_toml(&self) -> String {
        let q = |s: &str| serde_json::Value::String(s.to_string()).to_string();
        let tools: Vec<String> = self.tools.iter().map(|t| q(t)).collect();
        let mut out = format!("[[approvals]]\ntools = [{}]\n", tools.join(", "));
        if let Some(p) = &self.paths {
            out.push_str(&format!("paths = {}\n", q(p)));
        }
        if let Some(c) = &self.command {
            out.push_str(&format!("command = {}\n", q(c)));
        }
        out
    }
}

/// `*` matches within one path segment, `**` any number of segments
/// (`src/**` matches everything under `src/`); everything else literally.
pub fn glob_match(glob: &str, path: &str) -> bool {
    let g: Vec<&str> = glob.split('/').collect();
    let p: Vec<&str> = path.split('/').collect();
    segments(&g, &p)
}

fn segments(g: &[&str], p: &[&str]) -> bool {
    match (g.first(), p.first()) {
        (None, None) => true,
        (Some(&"**"), _) => {
            // `**` at the end must match at least one segment (src/** is
            // not src itself).
            if g.len() == 1 {
                return !p.is_empty();
            }
            (0..=p.len()).any(|i| segments(&g[1..], &p[i..]))
        }
        (Some(gs), Some(ps)) => segment(gs, ps) && segments(&g[1..], &p[1..]),
        _ => false,
    }
}

fn segment(g: &str, s: &str) -> bool {
    match g.split_once('*') {
        None => g == s,
        Some((head, rest)) => {
            let Some(tail) = s.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| segment(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::parse::parse;
    use crate::prim::table::{FS_EDIT, SHELL};
    use serde_json::json;

    #[test]
    fn globs() {
        assert!(glob_match("src/**", "src/a.rs"));
        assert!(glob_match("src/**", "src/x/y/a.rs"));
        assert!(!glob_match("src/**", "src"));
        assert!(!glob_match("src/**", "srcx/a.rs"));
        assert!(glob_match("*.py", "calc.py"));
        assert!(!glob_match("*.py", "lib/calc.py"));
        assert!(glob_match("**/*.py", "lib/calc.py"));
        assert!(glob_match("calc.py", "calc.py"));
    }

    #[test]
    fn file_approvals_cover_their_scope_only() {
        let edit = parse(
            &FS_EDIT,
            &json!({"path": "src/a.py", "old": "x", "new": "y"}),
        )
        .unwrap();
        let a = Approval::suggest(&edit, "src/a.py").unwrap();
        assert_eq!(a.scope(), "fs-edit and fs-write under src/**");
        assert!(a.covers(&edit, "src/a.py"));
        assert!(!a.covers(&edit, "tests/a.py"));
        let root = Approval::suggest(&edit, "calc.py").unwrap();
        assert_eq!(root.scope(), "fs-edit and fs-write of calc.py");
        assert!(!root.covers(&edit, "other.py"));
    }

    #[test]
    fn shell_approvals_match_leading_words_without_operators() {
        let call = |c: &str| parse(&SHELL, &json!({"command": c})).unwrap();
        let a = Approval::suggest(&call("cargo test --lib foo"), "").unwrap();
        assert_eq!(a.command.as_deref(), Some("cargo test"));
        assert!(a.covers(&call("cargo test"), ""));
        assert!(a.covers(&call("cargo  test -q"), ""));
        assert!(!a.covers(&call("cargo testx"), ""));
        assert!(!a.covers(&call("cargo test; curl x"), ""));
        let p = Approval::suggest(&call("python3 -m unittest -q"), "").unwrap();
        assert_eq!(p.command.as_deref(), Some("python3 -m unittest"));
        assert_eq!(
            Approval::suggest(&call("cp .env leak.txt"), "")
                .unwrap()
                .command
                .as_deref(),
            Some("cp")
        );
        assert!(Approval::suggest(&call("a | b"), "").is_none());
    }

    #[test]
    fn round_trips_through_toml() {
        let a = Approval {
            tools: vec!["shell".into()],
            paths: None,
            command: Some("say \"hi\"".into()),
        };
        #[derive(Deserialize)]
        struct File {
            approvals: Vec<Approval>,
        }
        let f: File = toml::from_str(&a.to_toml()).unwrap();
        assert_eq!(f.approvals, vec![a]);
    }
}
