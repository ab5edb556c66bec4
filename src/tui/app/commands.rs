//! The slash commands, each declared once as data in [`COMMANDS`]: its
//! name, aliases, a one-line doc, the argument it takes and its handler.
//! `/help` is printed from the table and the dispatch looks names up in
//! it, so help cannot list a command that does not exist or miss one that
//! does (docs/tui.md's table is tested against it too).
//!
//! [`parse`] is pure: the text typed after `/` becomes a command and its
//! argument, or a [`CommandError`] that says what was wrong and what to
//! type instead (an unknown name gets the nearest real one). Handlers
//! change the [`App`] and write their answer into the transcript.

use std::fmt;
use std::path::PathBuf;
use std::sync::PoisonError;

use super::{Action, App};
use crate::edit::did_you_mean;
use crate::files::Versions;
use crate::settings::prices::{BUILT_IN_DATE, PriceSource, price_of, show_cost};

/// What a command takes after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// Nothing: `/undo`.
    None,
    /// One optional value, shown as `[NAME]`: `/model [NAME]`.
    Optional(&'static str),
}

/// A command's handler: the argument, if one was given, is trimmed and
/// never empty.
pub type Handler = fn(&mut App, Option<&str>) -> Result<Action, CommandError>;

/// One slash command.
pub struct SlashCommand {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// What it does, in a lower-case phrase (no final period).
    pub doc: &'static str,
    pub arg: Arg,
    pub run: Handler,
}

impl SlashCommand {
    /// How it is typed: `/model [NAME]`.
    pub fn usage(&self) -> String {
        match self.arg {
            Arg::None => format!("/{}", self.name),
            Arg::Optional(what) => format!("/{} [{what}]", self.name),
        }
    }

    /// Whether `name` (without the `/`) is this command's name or an alias.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

impl fmt::Debug for SlashCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlashCommand")
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .field("arg", &self.arg)
            .finish_non_exhaustive()
    }
}

/// Every slash command, in the order `/help` lists them.
pub static COMMANDS: &[SlashCommand] = &[
    SlashCommand {
        name: "undo",
        aliases: &[],
        doc: "restore the file nib wrote last, from .nib/versions/",
        arg: Arg::None,
        run: undo,
    },
    SlashCommand {
        name: "model",
        aliases: &[],
        doc: "show the model, or use NAME from the next task",
        arg: Arg::Optional("NAME"),
        run: model,
    },
    SlashCommand {
        name: "strategy",
        aliases: &[],
        doc: "show the strategy, or use FILE from the next task",
        arg: Arg::Optional("FILE"),
        run: strategy,
    },
    SlashCommand {
        name: "cost",
        aliases: &[],
        doc: "what this session's model calls cost, and the price used",
        arg: Arg::None,
        run: cost,
    },
    SlashCommand {
        name: "status",
        aliases: &[],
        doc: "the model, server, strategy, session log, tokens and cost",
        arg: Arg::None,
        run: status,
    },
    SlashCommand {
        name: "approvals",
        aliases: &[],
        doc: "list the standing approvals and where they are saved",
        arg: Arg::None,
        run: approvals,
    },
    SlashCommand {
        name: "clear",
        aliases: &[],
        doc: "start the transcript afresh (the scrollback stays the terminal's)",
        arg: Arg::None,
        run: clear,
    },
    SlashCommand {
        name: "help",
        aliases: &[],
        doc: "keys and commands",
        arg: Arg::None,
        run: help,
    },
    SlashCommand {
        name: "quit",
        aliases: &["exit"],
        doc: "quit",
        arg: Arg::None,
        run: quit,
    },
];

/// The keys, for `/help` (they are not commands, so not in the table).
const KEYS_HELP: &str = "keys: Enter send · Ctrl-J newline · Esc interrupt · Ctrl-C twice quit";
const CONFIRM_HELP: &str = "confirm: y approve · n reject (with a reason) · a approve and always allow (scope shown first) · e edit in $EDITOR · f full screen · t split/unified · j/k scroll · Esc reject and stop";

/// Why a slash command did not run, or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// No command has this name or alias.
    Unknown {
        name: String,
        /// The closest real command, if one is close.
        nearest: Option<&'static str>,
    },
    /// A command that takes nothing was given something.
    UnexpectedArgument { command: &'static str },
    /// The command ran and could not do its job.
    Failed {
        command: &'static str,
        message: String,
    },
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Unknown {
                name,
                nearest: Some(near),
            } => write!(
                f,
                "unknown command /{name}; did you mean /{near}? /help lists them"
            ),
            CommandError::Unknown {
                name,
                nearest: None,
            } => write!(f, "unknown command /{name}; /help lists them"),
            CommandError::UnexpectedArgument { command } => {
                write!(f, "/{command} takes no argument; type /{command} alone")
            }
            CommandError::Failed { command, message } => write!(f, "{command}: {message}"),
        }
    }
}

impl std::error::Error for CommandError {}

/// The command called `name` (its name or an alias).
pub fn find(name: &str) -> Option<&'static SlashCommand> {
    COMMANDS.iter().find(|c| c.answers_to(name))
}

/// The command whose name or alias is closest to `name`: a near spelling
/// (the rule fs-edit's field names use, `edit::did_you_mean`), else the
/// first that starts with it. `None` when nothing is that close, so a typo
/// gets a suggestion and a wild guess no misleading one.
pub fn nearest(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return None;
    }
    let names: Vec<&'static str> = COMMANDS
        .iter()
        .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
        .collect();
    let near = did_you_mean(name, &names)
        .or_else(|| names.iter().copied().find(|n| n.starts_with(name)))?;
    find(near).map(|c| c.name)
}

/// The text typed after `/` as a command and its argument (trimmed; `None`
/// when empty), checked against the command's signature.
pub fn parse(line: &str) -> Result<(&'static SlashCommand, Option<&str>), CommandError> {
    let line = line.trim();
    let (name, arg) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let arg = Some(arg.trim()).filter(|a| !a.is_empty());
    let Some(command) = find(name) else {
        return Err(CommandError::Unknown {
            name: name.to_string(),
            nearest: nearest(name),
        });
    };
    if command.arg == Arg::None && arg.is_some() {
        return Err(CommandError::UnexpectedArgument {
            command: command.name,
        });
    }
    Ok((command, arg))
}

/// What `/help` prints: the keys, then every command in the table with
/// its usage, doc and aliases.
pub fn help_lines() -> Vec<String> {
    let width = COMMANDS.iter().map(|c| c.usage().len()).max().unwrap_or(0);
    let mut lines = vec![KEYS_HELP.to_string(), CONFIRM_HELP.to_string()];
    lines.push("commands:".to_string());
    for c in COMMANDS {
        let mut line = format!("  {:width$}  {}", c.usage(), c.doc);
        if !c.aliases.is_empty() {
            let aliases: Vec<String> = c.aliases.iter().map(|a| format!("/{a}")).collect();
            line.push_str(&format!(" (also {})", aliases.join(", ")));
        }
        lines.push(line);
    }
    lines
}

impl App {
    /// Run the slash command typed as `/line`; a bad line or a failed
    /// command is said in the transcript.
    pub(super) fn slash(&mut self, line: &str) -> Action {
        let ran = parse(line).and_then(|(command, arg)| (command.run)(self, arg));
        ran.unwrap_or_else(|e| {
            self.note_error(&e.to_string());
            Action::None
        })
    }
}

fn undo(app: &mut App, _: Option<&str>) -> Result<Action, CommandError> {
    let ws = app.session.host.workspace();
    let u = Versions::new(ws)
        .undo(ws, None, false)
        .map_err(|e| CommandError::Failed {
            command: "undo",
            message: e.to_string(),
        })?;
    if u.restored {
        app.note(format!(
            "undo: restored {} as it was before write {}",
            u.path, u.id
        ));
    } else {
        app.note(format!(
            "undo: deleted {} (write {} created it)",
            u.path, u.id
        ));
    }
    Ok(Action::None)
}

fn model(app: &mut App, name: Option<&str>) -> Result<Action, CommandError> {
    let mut cfg = app
        .session
        .cfg
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    match name {
        None => {
            let m = cfg.model.model.clone();
            drop(cfg);
            app.note(format!(
                "model: {m} (/model NAME switches from the next task)"
            ));
        }
        Some(name) => {
            cfg.model.model = name.to_string();
            drop(cfg);
            app.status.model = name.to_string();
            app.note(format!("model: {name} from the next task"));
        }
    }
    Ok(Action::None)
}

fn strategy(app: &mut App, file: Option<&str>) -> Result<Action, CommandError> {
    let mut cfg = app
        .session
        .cfg
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    match file {
        None => {
            let s = cfg
                .strategy
                .as_ref()
                .map_or("default (shipped)".into(), |p| p.display().to_string());
            drop(cfg);
            app.note(format!("strategy: {s}"));
        }
        Some(file) => {
            cfg.strategy = Some(PathBuf::from(file));
            drop(cfg);
            app.note(format!("strategy: {file} from the next task"));
        }
    }
    Ok(Action::None)
}

/// Tokens as the status line shows them (`~` when estimated).
fn tokens(app: &App) -> String {
    let s = &app.status;
    let k = |n: u64| crate::model::show_tokens(n, s.estimated);
    format!(
        "in {} · out {} · cached {}",
        k(s.tokens_in),
        k(s.tokens_out),
        k(s.tokens_cached)
    )
}

fn cost(app: &mut App, _: Option<&str>) -> Result<Action, CommandError> {
    let model = app.status.model.clone();
    let config = crate::settings::model::config_file_shown();
    let line = match (
        app.status.cost,
        price_of(&app.session.prices, &model).ok().flatten(),
    ) {
        (Some(usd), Some((p, source))) => {
            let from = match source {
                PriceSource::Config => format!("your [prices] entry in {config}"),
                PriceSource::Default => format!("your [prices] \"*\" entry in {config}"),
                PriceSource::BuiltIn => format!(
                    "nib's built-in table of {BUILT_IN_DATE}; a [prices] entry in {config} overrides it"
                ),
            };
            format!(
                "cost: {} this session ({}), at ${}/${} per million tokens in/out for {model}, from {from}",
                show_cost(usd),
                tokens(app),
                p.input,
                p.output
            )
        }
        _ => format!(
            "cost: unknown, no price for {model} ({}); add \"{model}\" = [IN, OUT] (USD per million tokens) under [prices] in {config}, or \"*\" = [0, 0] for a local server",
            tokens(app)
        ),
    };
    app.note(line);
    Ok(Action::None)
}

fn status(app: &mut App, _: Option<&str>) -> Result<Action, CommandError> {
    let cfg = app
        .session
        .cfg
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let strategy = cfg
        .strategy
        .as_ref()
        .map_or("default (shipped)".into(), |p| p.display().to_string());
    let money = app
        .status
        .cost
        .map_or("unknown (/cost says why)".into(), show_cost);
    let lines = [
        format!(
            "model: {} ({}, {})",
            app.status.model,
            cfg.model.provider.as_str(),
            cfg.model.base_url
        ),
        format!("strategy: {strategy}"),
        format!(
            "workspace: {}",
            app.session.host.workspace().root().display()
        ),
        format!(
            "session: {} (log {}; `nib --resume {}` continues it)",
            app.session.log.id(),
            app.session.log.path().display(),
            app.session.log.id()
        ),
        format!(
            "tokens: {} · context {} · step {}",
            tokens(app),
            crate::model::show_tokens(app.status.context, app.status.estimated),
            app.status.step
        ),
        format!("cost: {money}"),
    ];
    for line in lines {
        app.note(line);
    }
    Ok(Action::None)
}

fn approvals(app: &mut App, _: Option<&str>) -> Result<Action, CommandError> {
    let list: Vec<String> = app
        .session
        .approvals
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|a| a.scope())
        .collect();
    let place = app
        .config_path()
        .map_or("(no user config path)".into(), |p| p.display().to_string());
    if list.is_empty() {
        app.note(format!("no standing approvals (they are saved in {place})"));
    } else {
        app.note(format!("standing approvals, in {place}:"));
        for a in list {
            app.note(format!("  • {a}"));
        }
    }
    Ok(Action::None)
}

fn clear(app: &mut App, _: Option<&str>) -> Result<Action, CommandError> {
    // The scrollback belongs to the terminal; this clears the live area's
    // leftovers and starts the transcript afresh.
    app.committed = app.history.len();
    app.notice = Some("cleared".into());
    Ok(Action::None)
}

fn help(app: &mut App, _: Option<&str>) -> Result<Action, CommandError> {
    for line in help_lines() {
        app.note(line);
    }
    Ok(Action::None)
}

fn quit(app: &mut App, _: Option<&str>) -> Result<Action, CommandError> {
    app.quit = true;
    Ok(Action::Quit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique_single_words() {
        let mut seen = std::collections::HashSet::new();
        for c in COMMANDS {
            for n in std::iter::once(c.name).chain(c.aliases.iter().copied()) {
                assert!(
                    !n.is_empty() && n.chars().all(|ch| ch.is_ascii_lowercase()),
                    "{n:?}"
                );
                assert!(seen.insert(n), "/{n} is declared twice");
            }
        }
    }

    #[test]
    fn docs_are_lower_case_phrases() {
        for c in COMMANDS {
            assert!(c.doc.starts_with(|ch: char| ch.is_lowercase()), "{c:?}");
            assert!(!c.doc.ends_with('.'), "{c:?}");
        }
    }

    #[test]
    fn parse_splits_the_name_from_a_trimmed_argument() {
        let (c, arg) = parse("model   qwen3:8b ").unwrap();
        assert_eq!((c.name, arg), ("model", Some("qwen3:8b")));
        let (c, arg) = parse("model").unwrap();
        assert_eq!((c.name, arg), ("model", None));
        let (c, arg) = parse("exit").unwrap();
        assert_eq!((c.name, arg), ("quit", None));
    }

    #[test]
    fn parse_refuses_an_argument_the_signature_has_no_room_for() {
        let e = parse("clear everything").unwrap_err();
        assert_eq!(e, CommandError::UnexpectedArgument { command: "clear" });
        assert_eq!(e.to_string(), "/clear takes no argument; type /clear alone");
    }

    #[test]
    fn an_unknown_name_gets_the_nearest_real_one() {
        for (typed, near) in [
            ("undp", Some("undo")),
            ("modle", Some("model")),
            ("strat", Some("strategy")),
            ("approval", Some("approvals")),
            ("exti", Some("quit")),
            ("q", Some("quit")),
            ("UNDO", Some("undo")),
            ("frobnicate", None),
            ("", None),
        ] {
            assert_eq!(nearest(typed), near, "{typed:?}");
        }
        let e = parse("undp").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown command /undp; did you mean /undo? /help lists them"
        );
        assert_eq!(
            parse("frobnicate").unwrap_err().to_string(),
            "unknown command /frobnicate; /help lists them"
        );
    }
}
