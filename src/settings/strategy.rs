//! The strategy flags `nib`, `nib exec` and `nib swebench` share:
//! `--strategy`, `--hook`, `--set key=value`, and how they combine with
//! the user's config (docs/strategies.md has the load order).

use std::path::PathBuf;

use clap::Args;

use super::UsageError;
use super::config::UserConfig;

#[derive(Debug, Clone, Default, Args)]
pub struct StrategyArgs {
    /// The strategy: a shipped one by name (check, compact, plan, policy,
    /// text-edits) or a .scm file (hooks, or a loop defining `run`).
    #[arg(long)]
    pub strategy: Option<PathBuf>,
    /// A hook file (or shipped name) loaded after the strategy; repeat for
    /// more, in order.
    #[arg(long = "hook", value_name = "FILE|NAME")]
    pub hooks: Vec<PathBuf>,
    /// A setting the strategy reads with (setting "key" default); repeat
    /// for more (e.g. --set check="pytest -x").
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// What a session loads and reads, from the flags and the user's config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrategyChoice {
    pub strategy: Option<PathBuf>,
    /// The config's hooks, then the flags'.
    pub hooks: Vec<PathBuf>,
    /// How many of `hooks` are the config's.
    pub config_hooks: usize,
    /// The config's `[set]`, then the flags' (a later one wins).
    pub settings: Vec<(String, String)>,
}

impl StrategyArgs {
    /// Combines the flags with the config: the flag's strategy wins; hooks
    /// and settings add up, the config's first.
    pub fn choose(
        &self,
        config: &UserConfig,
        default_strategy: Option<PathBuf>,
    ) -> Result<StrategyChoice, UsageError> {
        let mut settings: Vec<(String, String)> = config
            .set
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for pair in &self.set {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                UsageError(format!(
                    "--set {pair:?}: give KEY=VALUE, e.g. --set check_rounds=5"
                ))
            })?;
            if k.trim().is_empty() {
                return Err(UsageError(format!("--set {pair:?}: the key is empty")));
            }
            settings.push((k.trim().to_string(), v.to_string()));
        }
        let mut hooks = config.hooks.clone();
        let config_hooks = hooks.len();
        hooks.extend(self.hooks.iter().cloned());
        Ok(StrategyChoice {
            strategy: self
                .strategy
                .clone()
                .or(config.strategy.clone())
                .or(default_strategy),
            hooks,
            config_hooks,
            settings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_config_combine_in_order() {
        let config = UserConfig::parse(
            "strategy = \"plan\"\nhooks = [\"policy\"]\n[set]\ncheck = \"make\"\n",
        )
        .unwrap();
        let args = StrategyArgs {
            strategy: Some("check".into()),
            hooks: vec!["compact".into()],
            set: vec!["check=pytest -x".into()],
        };
        let c = args.choose(&config, None).unwrap();
        assert_eq!(c.strategy, Some("check".into()));
        assert_eq!(c.hooks, vec![PathBuf::from("policy"), "compact".into()]);
        assert_eq!(c.config_hooks, 1);
        assert_eq!(
            c.settings.last(),
            Some(&("check".into(), "pytest -x".into()))
        );
        let e = StrategyArgs {
            set: vec!["nope".into()],
            ..StrategyArgs::default()
        }
        .choose(&config, None)
        .unwrap_err();
        assert!(e.0.contains("KEY=VALUE"), "{e}");
    }
}
