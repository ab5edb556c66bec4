//! A run's options from a file, the options saved beside the run, and the
//! price table.
//!
//! `--config FILE` holds `key=value` lines (blank lines and `#` comments
//! skipped): each key is a long flag of `nib swebench` (`max-steps=50`,
//! `max_steps` too; `keep-worktrees=true`), a repeatable flag may take
//! several lines (`instance=a`, `instance=b`, `set=check=pytest -x`), and
//! `price.MODEL=IN,OUT` is `--price MODEL=IN,OUT`. The file's options
//! come first and the command line's after them, so a flag given on the
//! command line wins over the file's (a repeatable flag adds up).
//!
//! Every run writes `OUT/run.config` in the same form, with every option
//! the run used (defaults included; the run's own files by absolute path):
//! `nib swebench --config OUT/run.config` repeats it.
//!
//! Prices are USD per million tokens, per model: `--price MODEL=IN,OUT`
//! or `MODEL=IN,OUT,CACHED` (cached prompt tokens; default the input
//! price). `*` as the model prices any model without its own line.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, CommandFactory, FromArgMatches, Parser};

use super::RunArgs;
use crate::settings::UsageError;

/// The run's flags alone, parsed again with a config file's in front.
#[derive(Debug, Parser)]
#[command(name = "nib swebench", args_override_self = true)]
struct Reparsed {
    #[command(flatten)]
    run: RunArgs,
}

/// One model's price: the one the whole program counts cost by.
pub use crate::settings::prices::Price;

/// `--price MODEL=IN,OUT[,CACHED]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceArg {
    pub model: String,
    pub price: Price,
}

impl FromStr for PriceArg {
    type Err = String;

    fn from_str(s: &str) -> Result<PriceArg, String> {
        let usage = || {
            format!(
                "--price {s:?}: give MODEL=IN,OUT or MODEL=IN,OUT,CACHED, in USD per million tokens (e.g. gpt-4o=2.5,10)"
            )
        };
        let (model, prices) = s.rsplit_once('=').ok_or_else(usage)?;
        let numbers: Vec<f64> = prices
            .split(',')
            .map(|p| p.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| usage())?;
        if model.trim().is_empty() {
            return Err(usage());
        }
        let price = Price::of(&numbers).ok_or_else(usage)?;
        Ok(PriceArg {
            model: model.trim().to_string(),
            price,
        })
    }
}

/// The price of `model` in the user config's `[prices]` (its own entry,
/// else `"*"`), when the flags and the run's file gave none.
pub fn config_price_of(
    prices: &std::collections::BTreeMap<String, Vec<f64>>,
    model: &str,
) -> Result<Option<Price>, String> {
    let Some((name, numbers)) = prices
        .get_key_value(model)
        .or_else(|| prices.get_key_value("*"))
    else {
        return Ok(None);
    };
    Price::of(numbers).map(Some).ok_or_else(|| {
        format!(
            "the config's [prices] entry {name:?} = {numbers:?}: give [IN, OUT] or [IN, OUT, CACHED], in USD per million tokens (e.g. \"gpt-4o\" = [2.5, 10])"
        )
    })
}

/// The price of `model`: its own line (the last one given), else `*`'s.
pub fn price_of(prices: &[PriceArg], model: &str) -> Option<Price> {
    let find = |name: &str| prices.iter().rev().find(|p| p.model == name);
    find(model).or_else(|| find("*")).map(|p| p.price)
}

/// The flags of a config file, in order, as command-line tokens.
pub fn file_tokens(path: &Path) -> Result<Vec<OsString>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read --config {}: {e}", path.display()))?;
    tokens(&text).map_err(|e| format!("--config {}: {e}", path.display()))
}

/// [`file_tokens`] on text already read.
pub fn tokens(text: &str) -> Result<Vec<OsString>, String> {
    let cmd = Reparsed::command();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |e: String| format!("line {}: {e}", n + 1);
        let Some((key, value)) = line.split_once('=') else {
            return Err(at(format!("{line:?} is not key=value (e.g. max-steps=50)")));
        };
        let key = key.trim().replace('_', "-");
        let value = unquote(value.trim());
        if let Some(model) = key.strip_prefix("price.") {
            out.push(OsString::from(format!("--price={model}={value}")));
            continue;
        }
        if key == "config" {
            return Err(at("a config file cannot name another (config=...)".into()));
        }
        let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(&key)) else {
            return Err(at(format!(
                "no option {key:?}; the keys are nib swebench's long flags (`nib swebench --help`), e.g. max-steps, workers, model"
            )));
        };
        match arg.get_action() {
            ArgAction::SetTrue => match value {
                "true" | "yes" | "1" => out.push(OsString::from(format!("--{key}"))),
                "false" | "no" | "0" => {}
                _ => return Err(at(format!("{key} takes true or false, not {value:?}"))),
            },
            _ => out.push(OsString::from(format!("--{key}={value}"))),
        }
    }
    Ok(out)
}

fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

/// The run's options with `--config`'s file in front of the command
/// line's flags (`argv`: the tokens after `swebench`), and the matches
/// `run.config` is written from.
pub fn with_file(args: RunArgs, argv: Option<Vec<OsString>>) -> Result<Effective, UsageError> {
    let Some(argv) = argv else {
        return Ok(Effective {
            args,
            matches: None,
        });
    };
    let mut tokens = vec![OsString::from("nib swebench")];
    if let Some(file) = &args.config {
        tokens.extend(file_tokens(file).map_err(UsageError)?);
    }
    tokens.extend(argv);
    let cmd = Reparsed::command();
    let matches = cmd
        .try_get_matches_from(tokens)
        .map_err(|e| UsageError(format!("with --config's options: {e}")))?;
    let args = Reparsed::from_arg_matches(&matches)
        .map_err(|e| UsageError(e.to_string()))?
        .run;
    Ok(Effective {
        args,
        matches: Some(matches),
    })
}

/// A run's options given as words (`nib swebench slurm -- ...`): parsed
/// as the command line would be, `--config`'s file in front.
pub fn parse_run(argv: Vec<OsString>) -> Result<Effective, UsageError> {
    let mut tokens = vec![OsString::from("nib swebench")];
    tokens.extend(argv.iter().cloned());
    let matches = Reparsed::command()
        .try_get_matches_from(tokens)
        .map_err(|e| UsageError(format!("the run's options (after --): {e}")))?;
    let args = Reparsed::from_arg_matches(&matches)
        .map_err(|e| UsageError(e.to_string()))?
        .run;
    with_file(args, Some(argv))
}

/// The options a run goes with.
pub struct Effective {
    pub args: RunArgs,
    matches: Option<ArgMatches>,
}

impl Effective {
    /// `run.config`: every option, one `key=value` line each (a repeated
    /// one once per value): those the run was given, then the defaults.
    pub fn run_config(&self) -> Option<String> {
        let matches = self.matches.as_ref()?;
        let cmd = Reparsed::command();
        let (mut given, mut defaults) = (String::new(), String::new());
        for arg in cmd.get_arguments() {
            let (Some(long), id) = (arg.get_long(), arg.get_id().as_str()) else {
                continue;
            };
            // --redo-existing acts on one invocation: replaying the file
            // resumes the run instead of redoing it.
            if matches!(long, "config" | "help" | "redo-existing") {
                continue;
            }
            let out = match matches.value_source(id) {
                Some(ValueSource::DefaultValue) | None => &mut defaults,
                Some(_) => &mut given,
            };
            if matches!(arg.get_action(), ArgAction::SetTrue) {
                let _ = writeln!(out, "{long}={}", matches.get_flag(id));
                continue;
            }
            for v in matches.get_raw(id).into_iter().flatten() {
                // The run's own files by absolute path, so the file works
                // from any directory.
                let v = match long {
                    "instances" | "repos" | "out" | "work" | "prompt" => std::fs::canonicalize(v)
                        .map_or_else(|_| v.to_os_string(), |p| p.into_os_string()),
                    _ => v.to_os_string(),
                };
                let _ = writeln!(out, "{long}={}", v.to_string_lossy());
            }
        }
        Some(format!(
            "# nib swebench: the options of this run; `nib swebench --config run.config` repeats it\n\
             # (--instances, --repos, --out, --work, --prompt made absolute; other\n\
             # relative paths are from the directory the run started in)\n\
             {given}# the defaults of nib {}:\n{defaults}",
            env!("CARGO_PKG_VERSION")
        ))
    }
}

/// The tokens after `swebench` in this process's command line, when it
/// has one.
pub fn process_argv() -> Option<Vec<OsString>> {
    let all: Vec<OsString> = std::env::args_os().collect();
    let at = all.iter().position(|a| a == "swebench")?;
    Some(all[at + 1..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::event::Usage;

    #[test]
    fn config_lines_become_flags_and_the_command_line_wins() {
        let toks = tokens(
            "# a run\nmax_steps = 7\nkeep-worktrees=true\nworkers=3\nprice.gpt-x=1,2\nset=check=pytest -x\n",
        )
        .unwrap();
        let shown: Vec<String> = toks.iter().map(|t| t.to_string_lossy().into()).collect();
        assert_eq!(
            shown,
            [
                "--max-steps=7",
                "--keep-worktrees",
                "--workers=3",
                "--price=gpt-x=1,2",
                "--set=check=pytest -x"
            ]
        );
        let mut argv = vec![OsString::from("nib swebench")];
        argv.extend(toks);
        argv.extend(
            [
                "--instances",
                "i",
                "--repos",
                "r",
                "--out",
                "o",
                "--workers",
                "5",
            ]
            .map(OsString::from),
        );
        let m = Reparsed::command().try_get_matches_from(argv).unwrap();
        let run = Reparsed::from_arg_matches(&m).unwrap().run;
        assert_eq!(run.workers, 5);
        assert_eq!(run.max_steps, 7);
        assert!(run.keep_worktrees);
        assert_eq!(run.prices.len(), 1);
        let e = tokens("max-stepz=3").unwrap_err();
        assert!(e.contains("line 1") && e.contains("max-stepz"), "{e}");
        assert!(tokens("keep-worktrees=maybe").is_err());
        assert!(tokens("just words").unwrap_err().contains("key=value"));
    }

    #[test]
    fn the_user_configs_prices_serve_when_no_flag_gives_one() {
        let config = crate::settings::UserConfig::parse(
            "[prices]\n\"gpt-x\" = [1.0, 2.0]\n\"*\" = [3, 4, 0.5]\n",
        )
        .expect("config");
        let own = config_price_of(&config.prices, "gpt-x").expect("ok");
        assert_eq!(own.map(|p| (p.input, p.output)), Some((1.0, 2.0)));
        let any = config_price_of(&config.prices, "other").expect("ok");
        assert_eq!(any.and_then(|p| p.cached), Some(0.5));
        let bad = crate::settings::UserConfig::parse("[prices]\nm = [1]\n").expect("config");
        let err = config_price_of(&bad.prices, "m").unwrap_err();
        assert!(err.contains("[IN, OUT]"), "{err}");
        let none = crate::settings::UserConfig::parse("").expect("config");
        assert_eq!(config_price_of(&none.prices, "m"), Ok(None));
    }

    #[test]
    fn prices_parse_and_cost_counts_cached_tokens_at_their_price() {
        let p: PriceArg = "gpt-x=2,8,0.5".parse().unwrap();
        let usage = Usage {
            prompt: 1_000_000,
            cached: 500_000,
            completion: 100_000,
            ..Usage::default()
        };
        let cost = p.price.cost(&usage);
        assert!((cost - (1.0 + 0.25 + 0.8)).abs() < 1e-9, "{cost}");
        assert!("gpt-x=2".parse::<PriceArg>().is_err());
        assert!("=1,2".parse::<PriceArg>().is_err());
        assert!("m=-1,2".parse::<PriceArg>().is_err());
        let any: PriceArg = "*=1,1".parse().unwrap();
        let table = vec![p.clone(), any];
        assert_eq!(price_of(&table, "gpt-x"), Some(p.price));
        assert_eq!(price_of(&table, "other").map(|p| p.input), Some(1.0));
        assert_eq!(price_of(&table[..1], "other"), None);
    }
}
