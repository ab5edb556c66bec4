//! The user's configuration: `$XDG_CONFIG_HOME/nib/config.toml` (or
//! `~/.config/nib/config.toml`). Flags override it.
//!
//! Which model nib talks to, and where, comes only from here and from
//! flags, never from the workspace: a cloned repository could otherwise send
//! its code (and the session's keys) to a server of its choosing. A
//! workspace's `.nib/config.toml` may only tighten the guard; that arrives
//! with the guard's configuration.

use std::path::PathBuf;

use serde::Deserialize;

use super::UsageError;

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
    /// A strategy file to use instead of the shipped one.
    pub strategy: Option<PathBuf>,
    pub max_steps: Option<u64>,
    /// Standing approvals (`[[approvals]]` tables): they answer Write
    /// confirms they cover, never Security confirms.
    #[serde(default)]
    pub approvals: Vec<crate::guard::approvals::Approval>,
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
}
