//! What model calls cost: USD per million tokens, per model, from the
//! user config's `[prices]` (`"gpt-4o" = [2.5, 10]` or `[in, out,
//! cached]`; `"*"` for any other model) over a small built-in table of
//! well-known hosted models ([`BUILT_IN`], dated [`BUILT_IN_DATE`]: prices
//! change, so the config's entry always wins). A model found in neither
//! has no price: its cost is `None`, never a guessed 0 (local servers
//! cost nothing per token; say so with `"*" = [0, 0]`).

use std::collections::BTreeMap;

use crate::session::event::Usage;

/// One model's price, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Cached prompt tokens; the input price when absent.
    pub cached: Option<f64>,
}

impl Price {
    /// What `usage` cost, in USD.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached.min(usage.prompt);
        let fresh = usage.prompt - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached.unwrap_or(self.input)
            + usage.completion as f64 * self.output)
            / 1e6
    }

    /// `[in, out]` or `[in, out, cached]`, each finite and not negative.
    pub fn of(numbers: &[f64]) -> Option<Price> {
        if numbers.iter().any(|n| !n.is_finite() || *n < 0.0) {
            return None;
        }
        match *numbers {
            [input, output] => Some(Price {
                input,
                output,
                cached: None,
            }),
            [input, output, cached] => Some(Price {
                input,
                output,
                cached: Some(cached),
            }),
            _ => None,
        }
    }
}

/// When [`BUILT_IN`] was last checked against the providers' price pages.
pub const BUILT_IN_DATE: &str = "2025-08";

/// Well-known hosted models: (name, input, output, cached input), USD per
/// million tokens. A model name matches its entry exactly or followed by
/// `-` and a version (`claude-sonnet-4-20250514`); the longest entry that
/// matches wins, so `gpt-4o-mini` is not priced as `gpt-4o`. A provider
/// prefix (`openai/gpt-4o`, OpenRouter's) is ignored.
pub const BUILT_IN: &[(&str, f64, f64, f64)] = &[
    ("gpt-4o", 2.5, 10.0, 1.25),
    ("gpt-4o-mini", 0.15, 0.6, 0.075),
    ("gpt-4.1", 2.0, 8.0, 0.5),
    ("gpt-4.1-mini", 0.4, 1.6, 0.1),
    ("gpt-4.1-nano", 0.1, 0.4, 0.025),
    ("gpt-5", 1.25, 10.0, 0.125),
    ("gpt-5-mini", 0.25, 2.0, 0.025),
    ("gpt-5-nano", 0.05, 0.4, 0.005),
    ("o3", 2.0, 8.0, 0.5),
    ("o3-mini", 1.1, 4.4, 0.55),
    ("o4-mini", 1.1, 4.4, 0.275),
    ("claude-opus-4", 15.0, 75.0, 1.5),
    ("claude-opus-4-1", 15.0, 75.0, 1.5),
    ("claude-sonnet-4", 3.0, 15.0, 0.3),
    ("claude-3-7-sonnet", 3.0, 15.0, 0.3),
    ("claude-3-5-sonnet", 3.0, 15.0, 0.3),
    ("claude-3-5-haiku", 0.8, 4.0, 0.08),
    ("claude-haiku-4-5", 1.0, 5.0, 0.1),
    ("claude-sonnet-4-5", 3.0, 15.0, 0.3),
];

/// Where a price came from, for `/cost` and the docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceSource {
    /// The config's entry for the model.
    Config,
    /// The built-in table.
    BuiltIn,
    /// The config's `"*"`.
    Default,
}

/// The price of `model`: the config's own entry, else the built-in
/// table's, else the config's `"*"`; `Ok(None)` when none has it. A
/// malformed config entry is an error that says how to write it.
pub fn price_of(
    config: &BTreeMap<String, Vec<f64>>,
    model: &str,
) -> Result<Option<(Price, PriceSource)>, String> {
    let parse = |name: &str, numbers: &[f64]| {
        Price::of(numbers).ok_or_else(|| {
            format!(
                "the config's [prices] entry {name:?} = {numbers:?}: give [IN, OUT] or [IN, OUT, CACHED], in USD per million tokens (e.g. \"gpt-4o\" = [2.5, 10])"
            )
        })
    };
    if let Some(numbers) = config.get(model) {
        return Ok(Some((parse(model, numbers)?, PriceSource::Config)));
    }
    if let Some(p) = built_in(model) {
        return Ok(Some((p, PriceSource::BuiltIn)));
    }
    match config.get("*") {
        Some(numbers) => Ok(Some((parse("*", numbers)?, PriceSource::Default))),
        None => Ok(None),
    }
}

/// The cost of `usage` on `model`, in USD; `None` when its price is
/// unknown (or the config's entry is malformed: the run said so already).
pub fn cost_of(config: &BTreeMap<String, Vec<f64>>, model: &str, usage: &Usage) -> Option<f64> {
    price_of(config, model)
        .ok()
        .flatten()
        .map(|(p, _)| p.cost(usage))
}

/// The built-in table's price for `model`.
pub fn built_in(model: &str) -> Option<Price> {
    let name = model.rsplit('/').next().unwrap_or(model);
    BUILT_IN
        .iter()
        .filter(|(key, ..)| {
            name == *key
                || name
                    .strip_prefix(key)
                    .is_some_and(|rest| rest.starts_with('-'))
        })
        .max_by_key(|(key, ..)| key.len())
        .map(|&(_, input, output, cached)| Price {
            input,
            output,
            cached: Some(cached),
        })
}

/// A cost as a person reads it: `$0.0123`, `$1.45`.
pub fn show_cost(usd: f64) -> String {
    if usd < 1.0 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, cached: u64, completion: u64) -> Usage {
        Usage {
            prompt,
            cached,
            completion,
            ..Usage::default()
        }
    }

    #[test]
    fn the_longest_built_in_name_wins_and_versions_match() {
        assert_eq!(built_in("gpt-4o").map(|p| p.input), Some(2.5));
        assert_eq!(built_in("gpt-4o-mini").map(|p| p.input), Some(0.15));
        assert_eq!(built_in("gpt-4o-2024-08-06").map(|p| p.input), Some(2.5));
        assert_eq!(
            built_in("claude-sonnet-4-20250514").map(|p| p.output),
            Some(15.0)
        );
        assert_eq!(built_in("openai/gpt-5-mini").map(|p| p.input), Some(0.25));
        assert_eq!(built_in("o3-mini").map(|p| p.input), Some(1.1));
        assert!(built_in("gpt-4oops").is_none());
        assert!(built_in("qwen2.5-coder:14b").is_none());
    }

    #[test]
    fn the_config_overrides_the_table_and_star_prices_the_rest() {
        let mut config = BTreeMap::new();
        config.insert("gpt-4o".to_string(), vec![1.0, 2.0]);
        let (p, src) = price_of(&config, "gpt-4o").unwrap().unwrap();
        assert_eq!((p.input, p.output, src), (1.0, 2.0, PriceSource::Config));
        assert_eq!(price_of(&config, "llama3").unwrap(), None);
        config.insert("*".to_string(), vec![0.0, 0.0]);
        let (_, src) = price_of(&config, "llama3").unwrap().unwrap();
        assert_eq!(src, PriceSource::Default);
        let (_, src) = price_of(&config, "gpt-5").unwrap().unwrap();
        assert_eq!(src, PriceSource::BuiltIn);
        config.insert("bad".to_string(), vec![1.0]);
        let e = price_of(&config, "bad").unwrap_err();
        assert!(e.contains("[IN, OUT]"), "{e}");
    }

    #[test]
    fn cost_counts_cached_tokens_at_their_price() {
        let p = Price::of(&[2.0, 10.0, 0.5]).unwrap();
        let c = p.cost(&usage(1_000_000, 500_000, 100_000));
        assert!((c - (1.0 + 0.25 + 1.0)).abs() < 1e-9, "{c}");
        let none = BTreeMap::new();
        assert!(cost_of(&none, "mystery", &usage(1, 0, 1)).is_none());
        assert_eq!(show_cost(0.01234), "$0.0123");
        assert_eq!(show_cost(12.5), "$12.50");
    }
}
