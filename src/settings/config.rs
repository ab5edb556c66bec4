//! The user's configuration: `$XDG_CONFIG_HOME/nib/config.toml` (or
//! `~/.config/nib/config.toml`). Flags override it. Every key, its
//! default and where it may be set: docs/config.md (a test below keeps
//! its sample and table in step with this struct).
//!
//! Which model nib talks to, and where, comes only from here and from
//! flags, never from the workspace: a cloned repository could otherwise send
//! its code (and the session's keys) to a server of its choosing. A
//! workspace's `.nib/config.toml` may only tighten the guard: add protected
//! paths, turn redaction on, take the shell's network away.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::UsageError;
use crate::guard::{GuardPolicy, PathRules};

/// What the user's config file may say. Every key is optional.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    /// ollama, openai or anthropic.
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Ollama's context size (`options.num_ctx`).
    pub num_ctx: Option<u32>,
    /// The most tokens one reply may have.
    pub max_reply_tokens: Option<u32>,
    /// `false`: never stream replies (for servers that cannot stream tool
    /// calls; nib also finds that out by itself and falls back).
    pub stream: Option<bool>,
    /// Read tool calls a model writes as text (`<tool_call>{…}</tool_call>`,
    /// a fenced JSON object); default on for ollama and openai.
    pub text_tool_calls: Option<bool>,
    /// Seconds to wait for a reply's first byte (default 180).
    pub first_byte_timeout: Option<u64>,
    /// Seconds one model call may take in all (default 1800).
    pub total_timeout: Option<u64>,
    /// The most bytes one reply may have, in MiB (default 32): a server
    /// that streams without end is stopped there.
    pub max_reply_mib: Option<u64>,
    /// Seconds a reply may go on arriving without progress (only
    /// keep-alives or empty chunks) before it is stopped (default 300).
    pub stall_timeout: Option<u64>,
    /// The strategy: a shipped name (`check`) or a `.scm` file.
    pub strategy: Option<PathBuf>,
    /// Hook files (or shipped names) loaded into every session, first.
    #[serde(default)]
    pub hooks: Vec<PathBuf>,
    /// Strategy settings (`[set]`), like `--set key=value`.
    #[serde(default)]
    pub set: std::collections::BTreeMap<String, String>,
    pub max_steps: Option<u64>,
    /// Model prices, USD per million tokens (`[prices]`, `"gpt-4o" =
    /// [2.5, 10]` or `[in, out, cached]`; `"*"` for any other model), over
    /// the built-in table (`prices.rs`): what every client counts cost by.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, Vec<f64>>,
    /// How the guard judges calls.
    pub guard: Option<GuardConfig>,
    /// Standing approvals (`[[approvals]]` tables): they answer Write
    /// confirms they cover, never Security confirms.
    #[serde(default)]
    pub approvals: Vec<crate::guard::approvals::Approval>,
}

/// `[guard]`: in the user's config any of it; in a workspace's
/// `.nib/config.toml` only what tightens.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardConfig {
    /// More protected paths, in gitignore syntax (`"deploy/*.yaml"`).
    #[serde(default)]
    pub protected: Vec<String>,
    /// Secret-shaped strings in tool output reach the model as handles
    /// (default true).
    pub redact: Option<bool>,
    /// `shell` commands may use the network (default false).
    pub shell_network: Option<bool>,
    /// `shell` commands run under the file sandbox where the kernel has
    /// one (default true): protected files unreadable, only the
    /// workspace and temp directories writable.
    pub file_sandbox: Option<bool>,
    /// The file sandbox also hides the workspace's own secret files
    /// (`.env`, keys; default false). Off by default because Landlock can
    /// only grant: a command cannot then read what it creates directly in
    /// a directory holding one (a first `cargo build` making `target/` in
    /// a root with `.env`) until the next command.
    pub file_sandbox_workspace: Option<bool>,
    /// More of the home directory commands see (the user's config only):
    /// paths relative to home, such as `".config/mytool"`. The rest of
    /// home is masked.
    #[serde(default)]
    pub home: Vec<String>,
    /// Places outside the workspace and home commands may read (the
    /// user's config only): absolute paths, such as `"/srv/shared-venv"`.
    /// The rest of `/` but the system's directories is covered.
    #[serde(default)]
    pub show: Vec<String>,
    /// More environment variables commands get (the user's config only):
    /// `NAME` or `PREFIX*`, credentials included when named here.
    #[serde(default)]
    pub env: Vec<String>,
}

/// A workspace's `.nib/config.toml`: only its `[guard]` table counts.
#[derive(Debug, Default, Deserialize)]
struct WorkspaceConfig {
    guard: Option<GuardConfig>,
}

/// The guard's policy for a workspace: the user's settings, tightened by
/// the workspace's own `.nib/config.toml` (which can never loosen them).
pub fn guard_policy(user: &UserConfig, root: &Path) -> Result<GuardPolicy, UsageError> {
    let mine = user.guard.clone().unwrap_or_default();
    let path = root.join(".nib").join("config.toml");
    let theirs = match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str::<WorkspaceConfig>(&text)
            .map_err(|e| UsageError(format!("{}: {}", path.display(), e.to_string().trim_end())))?
            .guard
            .unwrap_or_default(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => GuardConfig::default(),
        Err(e) => return Err(UsageError(format!("cannot read {}: {e}", path.display()))),
    };
    // Separate matchers: the workspace's patterns can add protection,
    // never exempt a path the built-in list or the user protects.
    let mut paths = PathRules::layered(&mine.protected, &theirs.protected).map_err(UsageError)?;
    for (key, list) in [
        ("home", &theirs.home),
        ("show", &theirs.show),
        ("env", &theirs.env),
    ] {
        if !list.is_empty() {
            paths.warn(format!(
                "{}: [guard] {key} is ignored: only your own config (~/.config/nib/config.toml) may show commands more of your disk, home directory or environment",
                path.display()
            ));
        }
    }
    Ok(GuardPolicy {
        paths,
        // Each side can only turn redaction on and the network off.
        redact: mine.redact.unwrap_or(true) || theirs.redact == Some(true),
        shell_network: mine.shell_network.unwrap_or(false) && theirs.shell_network != Some(false),
        file_sandbox: mine.file_sandbox.unwrap_or(true) || theirs.file_sandbox == Some(true),
        file_sandbox_workspace: mine.file_sandbox_workspace.unwrap_or(false)
            || theirs.file_sandbox_workspace == Some(true),
        // Showing more of home or more of the environment loosens: the
        // user's alone (a workspace's lists are ignored, with a warning
        // above).
        home_allow: mine.home,
        show: mine.show,
        env_allow: mine.env,
    })
}

impl UserConfig {
    /// Where the file is looked for.
    pub fn path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("nib").join("config.toml"))
    }

    /// The config, or the empty one when there is no file.
    pub fn load() -> Result<UserConfig, UsageError> {
        let Some(path) = UserConfig::path() else {
            return Ok(UserConfig::default());
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(UserConfig::default()),
            Err(e) => return Err(UsageError(format!("cannot read {}: {e}", path.display()))),
        };
        UserConfig::parse(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())))
    }

    /// Append a standing approval to the user's config file (created if
    /// missing); returns the file's path. Only this file holds approvals:
    /// never the workspace's.
    pub fn add_approval(approval: &crate::guard::approvals::Approval) -> Result<PathBuf, String> {
        let path = UserConfig::path().ok_or(
            "neither XDG_CONFIG_HOME nor HOME is set, so there is no user config to save to",
        )?;
        UserConfig::add_approval_at(&path, approval)?;
        Ok(path)
    }

    /// [`UserConfig::add_approval`] to the config file at `path`.
    pub fn add_approval_at(
        path: &std::path::Path,
        approval: &crate::guard::approvals::Approval,
    ) -> Result<(), String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let old = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let mut text = old;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&approval.to_toml());
        // Never save a file this process could not read back.
        UserConfig::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(())
    }

    pub fn parse(text: &str) -> Result<UserConfig, String> {
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_keys_and_refuses_unknown_ones() {
        let c =
            UserConfig::parse("provider = \"openai\"\nmodel = \"gpt\"\nnum_ctx = 8192\n").unwrap();
        assert_eq!(
            (c.provider.as_deref(), c.model.as_deref(), c.num_ctx),
            (Some("openai"), Some("gpt"), Some(8192))
        );
        let e = UserConfig::parse("modle = \"x\"\n").unwrap_err();
        assert!(e.contains("modle"), "{e}");
        assert!(UserConfig::parse("").is_ok());
    }

    /// docs/config.md's sample sets every key the file may hold, and each
    /// key is in its table: the reference cannot miss one or name a wrong one.
    #[test]
    fn the_documented_sample_sets_every_key() {
        let doc = include_str!("../../docs/config.md");
        let sample = doc
            .split("```toml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("a toml sample");
        let c = UserConfig::parse(sample).expect("the sample parses");
        // An approval has either paths or a command: leave them out.
        let mut bare = c.clone();
        bare.approvals.clear();
        let shown = format!("{bare:?}");
        assert!(
            !shown.contains("None"),
            "a key the sample leaves out: {shown}"
        );
        assert!(!c.set.is_empty() && !c.prices.is_empty() && !c.approvals.is_empty());
        let listed = |key: &str| doc.contains(&format!("| `{key}`"));
        for key in [
            "provider",
            "model",
            "base_url",
            "num_ctx",
            "max_reply_tokens",
            "stream",
            "text_tool_calls",
            "first_byte_timeout",
            "total_timeout",
            "max_reply_mib",
            "stall_timeout",
            "max_steps",
            "strategy",
            "hooks",
            "[set]",
            "[prices]",
            "[guard] protected",
            "[guard] redact",
            "[guard] shell_network",
            "[guard] file_sandbox",
            "[guard] file_sandbox_workspace",
            "[guard] home",
            "[guard] env",
            "[[approvals]]",
        ] {
            assert!(listed(key), "docs/config.md's table lacks {key}");
        }
    }

    #[test]
    fn a_workspace_config_only_tightens_the_guard() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".nib")).unwrap();
        std::fs::write(
            dir.path().join(".nib/config.toml"),
            "[guard]\nprotected = [\"deploy/\"]\nredact = false\nshell_network = true\n",
        )
        .unwrap();
        let user = UserConfig::parse(
            "[guard]\nprotected = [\"*.secret\"]\nredact = false\nshell_network = true\n",
        )
        .unwrap();
        let p = guard_policy(&user, dir.path()).unwrap();
        assert!(p.paths.is_protected("deploy/x.yaml") && p.paths.is_protected("a.secret"));
        // The user turned redaction off; the workspace cannot turn it back
        // off (nor the network on) by itself, but the user's choice stands.
        assert!(!p.redact && p.shell_network);
        let p = guard_policy(&UserConfig::default(), dir.path()).unwrap();
        assert!(
            p.redact && !p.shell_network,
            "a workspace cannot loosen the defaults"
        );
        std::fs::write(
            dir.path().join(".nib/config.toml"),
            "[guard]\nshell_network = false\n",
        )
        .unwrap();
        assert!(!guard_policy(&user, dir.path()).unwrap().shell_network);
    }

    #[test]
    fn only_the_user_turns_the_file_sandbox_off() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".nib")).unwrap();
        let workspace = |text: &str| std::fs::write(dir.path().join(".nib/config.toml"), text);
        let off = UserConfig::parse("[guard]\nfile_sandbox = false\n").unwrap();
        workspace("[guard]\nfile_sandbox = false\n").unwrap();
        assert!(
            guard_policy(&UserConfig::default(), dir.path())
                .unwrap()
                .file_sandbox,
            "a workspace cannot turn the sandbox off"
        );
        assert!(!guard_policy(&off, dir.path()).unwrap().file_sandbox);
        workspace("[guard]\nfile_sandbox = true\n").unwrap();
        assert!(guard_policy(&off, dir.path()).unwrap().file_sandbox);
    }
}
