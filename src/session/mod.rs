//! The session record: the event log every part of nib appends to while a
//! session runs (`EventLog`, in `log.rs`) and the statistics `nib stats`
//! computes from such logs afterwards (`stats`, in `stats.rs`); `resume.rs`
//! reads sessions back (the list, an id prefix, a resumed task's context). The error
//! type for both is `SessionError`; `time.rs` formats the timestamps.
//!
//! # The event log (schema version 1)
//!
//! One JSON object per line (JSONL), appended and flushed as things happen,
//! one file per session, by default `<root>/.nib/sessions/<id>/events.jsonl`
//! where `<id>` is `<yyyymmdd-hhmmss>-<4 hex>` (UTC). Every line starts with
//! the same three keys, in this order, followed by the event's own fields in
//! the order the emitter gave them:
//!
//! - `v`: the schema version, the number `1`;
//! - `t`: when the event was emitted, RFC 3339 in UTC with milliseconds,
//!   e.g. `"2026-11-30T12:34:56.789Z"`;
//! - `ev`: the event's kind, one of those below.
//!
//! `step` counts the model replies of a session (the request that produced
//! the reply, and everything done with its tool calls, share it); `call` is
//! the 0-based index of a tool call within its reply. `N` is a count.
//!
//! | `ev` | fields |
//! |------|--------|
//! | `session.start` | `id`, `root`, `model`, `provider`, `strategy`, `nib_version`, `task` |
//! | `llm.req` | `step`, `model`, `messages`: N, `tools`: N |
//! | `llm.resp` | `step`, `model`, `duration_ms`, `usage`: {`prompt`, `cached`, `completion`, `reported`, `estimated`}, `tool_calls`: N, `finish`, `streamed`, `stream_fallback` (the call that found the server cannot stream tool calls), `raw_text` (when calls were read from the text), `text` (the reply's text when it made tool calls too), `prompt_ms` (the server's prompt-evaluation time, when it says) |
//! | `tool.call` | `step`, `call`, `id`, `name`, `positional`: "(fs-edit ...)", `args`: {the JSON arguments}, `quirks`: [strings, e.g. "list-as-string"], `by` (when not the model: "strategy", "text"), `raw_arguments` (arguments that did not parse, exactly as received) |
//! | `guard` | `step`, `call`, `decision`: "allow" / "write" / "security" / "deny", `reasons`: [{`rule`, `param`, `message`, `line`}] |
//! | `confirm` | `step`, `call`, `kind`: "write" / "security", `answer`: "yes" / "no", `by`: "user" / "policy" |
//! | `confirm.answer` | (the terminal client) `tool`, `path`, `kind`, `answer`: "yes" / "no" / "edited", `by`: "user" / "standing-approval", `reason`, `saved_approval`, `scope` |
//! | `tool.result` | `step`, `call`, `name`, `ok`: bool, `refused`: bool, `kind`, `summary`, `hint` (a failure's lines after the first, else empty), `diff_size`, `path`, and for fs-edit `edits`, `edits_form` |
//! | `write` | `path`, `version` |
//! | `ask` | `question`, `answer`, `by`: "user" / "policy" |
//! | `warning` | `message` (a setting that was ignored, and why) |
//! | `strategy` | `action`: "say" / "refuse" / "continue" / "compact" / a strategy's own, `text` |
//! | `turn.end` | `step`, `reason`: "done" / "step_limit" / "token_limit" / "error" / "refused", `text` |
//! | `error` | `step` (when a model call failed), `message` |
//! | `notice` | `kind`: "stream_fallback" / "retry" / "waiting" / "estimated" / a client's own, `message` |
//! | `interrupted` | `by`: "SIGINT" / "SIGTERM" / "SIGHUP" / "user", `message`, `exit_code` (when the client ends) |
//! | `result` | (`nib exec`, last) `status`, `exit_code`, `steps`, `usage`: {`prompt`, `cached`, `completion`, `reported`, `estimated`}, `cost_usd` (when the price is known), `duration_ms`, `text`, `session` |
//!
//! The types are in `event.rs` ([`Event`]); a test checks this table
//! against them, so the two cannot drift. A strategy's own kinds
//! (`(emit "my.kind" fields)`) are [`event::Custom`].
//!
//! `tool.result` in detail: `kind` is `null` on success, otherwise the
//! failure kind (`"not_found"`, `"ambiguous"`, `"invalid"`,
//! `"new_already_present"`, `"empty_old"`, `"no_change"`, `"read"`,
//! `"path"`, ...); `refused` is true when the guard or a confirm stopped
//! the call; `summary` is the first line of the text the model got;
//! `diff_size` the number of lines of the diff written (0 when nothing was);
//! `edits` how many edits the fs-edit call carried; `edits_form` how it
//! carried them: `"single"` (old/new), `"list"` (`edits`) or
//! `"list-as-string"` (`edits` sent as a JSON string holding the list);
//! `path` the file fs-edit or fs-write worked on.
//!
//! The schema is stable: fields may be added to an event in a later
//! version, but none is renamed, retyped or removed without raising `v`.
//! Readers skip what they do not know. A reader must also expect a last
//! line cut short (the process died mid-write); `stats` tolerates one.

pub mod event;
mod log;
pub mod resume;
mod stats;
mod time;

use std::fmt;
use std::io;
use std::path::PathBuf;

pub use event::Event;
pub use log::{Entry, EventLog, newest_session};
pub use stats::{FailureKinds, FsEditStats, KindCount, ModelStats, Stats, Tokens, stats};
pub use time::rfc3339_millis;

/// The value of `v` in every line this version writes.
pub const SCHEMA_VERSION: u64 = 1;

/// Everything that can go wrong writing or reading event logs. Each message
/// is lower-case, names the path when there is one, and says what to do.
#[derive(Debug)]
pub enum SessionError {
    /// An IO error on a log file or its directories.
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// Something that should be a real directory is a file or a symlink.
    NotADirectory { path: PathBuf },
    /// `emit` was given an empty kind, fields that are not a JSON object or
    /// not of their kind, or a field named `v`, `t` or `ev` (those are the
    /// log's own).
    BadEvent { ev: String, detail: String },
    /// A subscriber called `emit` on the log that is notifying it.
    Reentrant { ev: String },
    /// `stats` was given no files.
    NoFiles,
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Io {
                action,
                path,
                source,
            } => write!(f, "could not {action} {}: {source}", path.display()),
            SessionError::NotADirectory { path } => write!(
                f,
                "{} is not a directory (or is a symlink); nib keeps session logs only in a real directory — move it aside and retry",
                path.display()
            ),
            SessionError::BadEvent { ev, detail } => {
                write!(f, "cannot log event {ev:?}: {detail}")
            }
            SessionError::Reentrant { ev } => write!(
                f,
                "cannot log event {ev:?} from inside an event subscriber; record it after the subscriber returns"
            ),
            SessionError::NoFiles => {
                write!(
                    f,
                    "no event logs given; name one or more events.jsonl files"
                )
            }
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod schema_tests {
    use super::Event;
    use std::collections::BTreeSet;

    /// The field names each row of the table above documents: the
    /// backticked names outside `{...}` and `[...]`.
    fn documented() -> Vec<(String, BTreeSet<String>)> {
        let doc = include_str!("mod.rs");
        let mut rows = Vec::new();
        for line in doc.lines() {
            let Some(row) = line.strip_prefix("//! | `") else {
                continue;
            };
            let Some((kind, fields)) = row.split_once("` | ") else {
                continue;
            };
            if kind == "ev" {
                continue;
            }
            let mut depth = 0i32;
            let mut flat = String::new();
            for c in fields.chars() {
                match c {
                    '{' | '[' => depth += 1,
                    '}' | ']' => depth -= 1,
                    _ if depth == 0 => flat.push(c),
                    _ => {}
                }
            }
            let names = flat
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
                .map(String::from)
                .collect();
            rows.push((kind.to_string(), names));
        }
        rows
    }

    #[test]
    fn the_documented_schema_is_the_types() {
        let documented = documented();
        let examples = Event::examples();
        assert_eq!(
            documented
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>(),
            examples.iter().map(Event::kind).collect::<Vec<_>>(),
            "the table's rows are the event kinds, in order"
        );
        for ((kind, names), ev) in documented.iter().zip(&examples) {
            let fields: BTreeSet<String> =
                ev.to_map().keys().filter(|k| *k != "ev").cloned().collect();
            assert_eq!(names, &fields, "the documented fields of `{kind}`");
        }
    }
}
