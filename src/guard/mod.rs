//! The guard: judges a parsed call before it runs and returns a decision
//! with its reasons. It reads only what it must inspect (where a path
//! really goes) and changes nothing.
//!
//! This is the simple policy of DESIGN.md, without its scans (the secret
//! scan, taint and the secret ledger come with the guard issue): reads are
//! allowed; writes and commands need a Write confirm; a path outside the
//! workspace, or on the denylist, is denied; a write to a protected path
//! needs a Security confirm. The most severe finding wins.

pub mod approvals;

use std::fmt;

use crate::files::Workspace;
use crate::prim::decl::{Call, Effect, Role};
use crate::prim::guard_view;

/// What kind of yes a confirm asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConfirmKind {
    /// An ordinary write or command; a standing approval or an unattended
    /// policy may answer it.
    Write,
    /// Something that could leak or damage; only a person may answer it.
    Security,
}

/// Why the guard decided what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub rule: &'static str,
    /// The parameter (and list element, 1-based) the finding is about.
    pub param: String,
    pub message: String,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}: {})", self.message, self.rule, self.param)
    }
}

/// The guard's verdict on one call. Severity increases down the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Confirm {
        kind: ConfirmKind,
        reasons: Vec<Reason>,
    },
    Deny {
        reasons: Vec<Reason>,
    },
}

impl Decision {
    /// A stable name: allow, write, security, deny.
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Confirm {
                kind: ConfirmKind::Write,
                ..
            } => "write",
            Decision::Confirm {
                kind: ConfirmKind::Security,
                ..
            } => "security",
            Decision::Deny { .. } => "deny",
        }
    }

    pub fn reasons(&self) -> &[Reason] {
        match self {
            Decision::Allow => &[],
            Decision::Confirm { reasons, .. } | Decision::Deny { reasons } => reasons,
        }
    }
}

/// Paths no primitive may write: nib's own state and what git runs.
const DENIED: &[&str] = &[".nib", ".git/hooks", ".git/config"];

/// Judge a call against the workspace.
pub fn judge(call: &Call, ws: &Workspace) -> Decision {
    let writes = call.decl.effect != Effect::ReadOnly;
    let mut deny = Vec::new();
    let mut security = Vec::new();
    for field in guard_view(call) {
        if field.role != Role::Path || field.value.is_empty() {
            continue;
        }
        let param = field.label();
        let rel = match ws.resolve(field.value) {
            Ok(r) => r.rel,
            Err(e) => {
                deny.push(Reason {
                    rule: "path",
                    param,
                    message: e.to_string(),
                });
                continue;
            }
        };
        if !writes {
            continue;
        }
        match path_verdict(&rel) {
            PathVerdict::Denied(message) => deny.push(Reason {
                rule: "denylist",
                message,
                param,
            }),
            PathVerdict::Protected(message) => security.push(Reason {
                rule: "protected-path",
                message,
                param,
            }),
            PathVerdict::Open => {}
        }
    }
    if !deny.is_empty() {
        return Decision::Deny { reasons: deny };
    }
    if !security.is_empty() {
        return Decision::Confirm {
            kind: ConfirmKind::Security,
            reasons: security,
        };
    }
    match call.decl.effect {
        Effect::ReadOnly => Decision::Allow,
        effect => Decision::Confirm {
            kind: ConfirmKind::Write,
            reasons: vec![Reason {
                rule: "effect",
                param: call.decl.name.to_string(),
                message: format!("{} has effect {}", call.decl.name, effect.as_str()),
            }],
        },
    }
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

/// The path rules for writing `rel`, a resolved workspace-relative path:
/// the denylist first, then the protected paths.
pub fn path_verdict(rel: &str) -> PathVerdict {
    if DENIED.iter().any(|d| under(rel, d)) {
        return PathVerdict::Denied(format!("{rel} is on the denylist: nib never writes it"));
    }
    if protected(rel) {
        return PathVerdict::Protected(format!("{rel} is a protected path"));
    }
    PathVerdict::Open
}

fn under(rel: &str, dir: &str) -> bool {
    rel == dir
        || rel
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Protected paths: the rest of `.git/`, environment files, keys, CI configs.
fn protected(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    under(rel, ".git")
        || under(rel, ".github/workflows")
        || name.starts_with(".env")
        || name.ends_with(".pem")
        || name.ends_with(".key")
        || name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || rel == ".gitlab-ci.yml"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::parse::parse;
    use crate::prim::table::{FS_READ, FS_WRITE, SHELL};
    use serde_json::json;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn simple_policy() {
        let (_d, ws) = ws();
        let read = parse(&FS_READ, &json!({"path": "a.txt"})).unwrap();
        assert_eq!(judge(&read, &ws), Decision::Allow);
        let write = parse(&FS_WRITE, &json!({"path": "a.txt", "content": "x"})).unwrap();
        assert_eq!(judge(&write, &ws).as_str(), "write");
        let shell = parse(&SHELL, &json!({"command": "ls"})).unwrap();
        assert_eq!(judge(&shell, &ws).as_str(), "write");
    }

    #[test]
    fn outside_denylist_and_protected() {
        let (_d, ws) = ws();
        let outside = parse(&FS_READ, &json!({"path": "../x"})).unwrap();
        let d = judge(&outside, &ws);
        assert_eq!(d.as_str(), "deny");
        assert!(
            d.reasons()[0].message.contains("outside the workspace"),
            "{d:?}"
        );
        for (path, want) in [
            (".nib/config.toml", "deny"),
            (".git/hooks/pre-commit", "deny"),
            (".git/HEAD", "security"),
            (".env.local", "security"),
            ("src/.envrc", "security"),
            ("environment.txt", "write"),
        ] {
            let call = parse(&FS_WRITE, &json!({"path": path, "content": "x"})).unwrap();
            assert_eq!(judge(&call, &ws).as_str(), want, "{path}");
        }
    }
}
