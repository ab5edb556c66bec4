//! `nib stats`: what one or more event logs say about how the model used
//! its tools, per model and in total — requests and tokens, fs-edit calls
//! and why they failed, edits per call, how often the list form was used,
//! and lone re-edit replies. This file owns reading logs leniently (a line
//! that does not parse is skipped and counted; a cut-off last line is
//! expected), the definitions of those numbers, and the table `Display`
//! prints; `Stats` serializes to JSON for `nib stats --json`.
//!
//! Definitions:
//!
//! - Tool events count for the model of the most recent `llm.resp` before
//!   them in the same file (before any, the `session.start` model).
//! - A reply is the tool calls the model made in one response: the
//!   `tool.call` events after an `llm.resp` (a change of `step` also starts
//!   a new reply, for logs without `llm.resp`). `replies` counts the
//!   replies with at least one tool call.
//! - A lone re-edit is a reply whose only tool call is an fs-edit of the
//!   file that the previous reply with tool calls edited with fs-edit (in
//!   any of its calls, successful or not). A `turn.end` or `session.start`
//!   ends the chain: the first reply of a new turn is never a re-edit. Its
//!   share is of `replies`.
//! - fs-edit counts come from `tool.result` events named `fs-edit`. Failure
//!   kinds: not found (`not_found`, `new_already_present`), not unique
//!   (`ambiguous`), validation (`invalid`, `empty_old`, `no_change`),
//!   refused (`refused: true`, whatever the kind), other (the rest). Each
//!   rate is a share of all fs-edit calls.
//! - Edits per call is the mean of `edits` over the calls that report it;
//!   the list share is the share of calls reporting `edits_form` whose form
//!   was `list` or `list-as-string`.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::SessionError;
use super::event::{self, Event};

/// What `nib stats` reports over a set of event logs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// How many files were read.
    pub files: usize,
    /// Events read (lines that parsed as an event).
    pub events: u64,
    /// Lines skipped because they were not a JSON object with an `ev`
    /// string (a cut-off last line is not counted here).
    pub bad_lines: u64,
    /// Files whose last line was cut off (no newline, and did not parse).
    pub truncated_files: u64,
    /// One entry per model, sorted by name.
    pub models: Vec<ModelStats>,
    /// All models together (`model` is "total").
    pub total: ModelStats,
}

/// The numbers for one model (or, in `Stats::total`, for all of them).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelStats {
    pub model: String,
    /// `llm.resp` events.
    pub requests: u64,
    /// Token sums over those responses.
    pub tokens: Tokens,
    /// Mean prompt tokens per request; null without requests.
    pub prompt_per_request: Option<f64>,
    pub fs_edit: FsEditStats,
    /// Replies with at least one tool call.
    pub replies: u64,
    /// Replies whose only call re-edits the file the previous reply edited.
    pub lone_re_edits: u64,
    /// `lone_re_edits / replies`; null without replies.
    pub lone_re_edit_share: Option<f64>,
}

/// Token sums.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    pub prompt: u64,
    pub cached: u64,
    pub completion: u64,
}

/// fs-edit calls: outcomes, failure kinds, edits per call, forms.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FsEditStats {
    /// `tool.result` events for fs-edit.
    pub calls: u64,
    pub ok: u64,
    pub failed: u64,
    /// `failed / calls`; null without calls.
    pub failure_rate: Option<f64>,
    pub by_kind: FailureKinds,
    /// Sum of `edits` over the calls that report it.
    pub edits: u64,
    pub calls_reporting_edits: u64,
    /// `edits / calls_reporting_edits`.
    pub edits_per_call: Option<f64>,
    /// Calls whose `edits_form` is `list` or `list-as-string`.
    pub list_calls: u64,
    /// Of those, `list-as-string`.
    pub list_as_string_calls: u64,
    pub calls_reporting_form: u64,
    /// `list_calls / calls_reporting_form`.
    pub list_share: Option<f64>,
}

/// Failed fs-edit calls by kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FailureKinds {
    /// `not_found`, `new_already_present`.
    pub not_found: KindCount,
    /// `ambiguous`.
    pub not_unique: KindCount,
    /// `invalid`, `empty_old`, `no_change`.
    pub validation: KindCount,
    /// `refused: true`.
    pub refused: KindCount,
    /// Any other failure.
    pub other: KindCount,
}

/// A count and its share of all fs-edit calls (null without calls).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KindCount {
    pub count: u64,
    pub rate: Option<f64>,
}

/// Reads the event logs at `paths` and computes their statistics. Fails
/// only when a file cannot be opened or read (the error names it) or no
/// file is given; lines that do not parse are skipped and counted.
pub fn stats(paths: &[PathBuf]) -> Result<Stats, SessionError> {
    if paths.is_empty() {
        return Err(SessionError::NoFiles);
    }
    let mut out = Stats {
        files: paths.len(),
        ..Stats::default()
    };
    let mut models: BTreeMap<String, ModelStats> = BTreeMap::new();
    for path in paths {
        scan_file(path, &mut out, &mut models)?;
    }
    let mut total = ModelStats {
        model: "total".to_string(),
        ..ModelStats::default()
    };
    for (name, mut m) in models {
        m.model = name;
        total.add(&m);
        m.finish();
        out.models.push(m);
    }
    total.finish();
    out.total = total;
    Ok(out)
}

fn scan_file(
    path: &Path,
    out: &mut Stats,
    models: &mut BTreeMap<String, ModelStats>,
) -> Result<(), SessionError> {
    let io_err = |action, source| SessionError::Io {
        action,
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(|e| io_err("open", e))?;
    let mut reader = BufReader::new(file);
    let mut scan = Scan::default();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_err("read", e))?;
        if n == 0 {
            break;
        }
        let complete = buf.last() == Some(&b'\n');
        let event = std::str::from_utf8(&buf)
            .ok()
            .filter(|line| !line.trim().is_empty())
            .map(|line| Event::parse_line(line).or_else(|e| glued(line).ok_or(e)));
        match event {
            None if std::str::from_utf8(&buf).is_ok() => {} // a blank line
            Some(Ok(ev)) => {
                out.events += 1;
                scan.event(&ev, models);
            }
            _ if !complete => out.truncated_files += 1,
            _ => out.bad_lines += 1,
        }
    }
    scan.finish(models);
    Ok(())
}

/// The whole line after a torn one it was glued to (a log written by a
/// nib that crashed mid-append, before logs repaired that): the torn start
/// is skipped, counted as an unreadable line by the caller's note.
fn glued(line: &str) -> Option<Event> {
    let at = line.get(1..)?.find("{\"v\":")? + 1;
    Event::parse_line(&line[at..]).ok()
}

/// One reply's tool calls.
#[derive(Debug, Default)]
struct Reply {
    model: String,
    step: Option<i64>,
    /// A turn ended (or a session started) just before this reply.
    after_break: bool,
    calls: Vec<Call>,
}

#[derive(Debug)]
struct Call {
    index: Option<i64>,
    name: String,
    path: Option<String>,
}

/// The state of reading one file.
#[derive(Debug, Default)]
struct Scan {
    session_model: Option<String>,
    /// The model of the most recent `llm.resp`.
    model: Option<String>,
    replies: Vec<Reply>,
    current: Option<Reply>,
    pending_break: bool,
}

impl Scan {
    fn model(&self) -> String {
        self.model
            .clone()
            .or_else(|| self.session_model.clone())
            .unwrap_or_else(|| "(unknown)".to_string())
    }

    fn event(&mut self, ev: &Event, models: &mut BTreeMap<String, ModelStats>) {
        match ev {
            Event::SessionStart(e) => {
                self.session_model = Some(e.model.clone()).filter(|m| !m.is_empty());
                self.end_chain();
            }
            Event::TurnEnd(_) => self.end_chain(),
            Event::LlmResp(e) => {
                if !e.model.is_empty() {
                    self.model = Some(e.model.clone());
                }
                let model = self.model();
                let m = entry(models, &model);
                m.requests += 1;
                m.tokens.prompt += e.usage.prompt;
                m.tokens.cached += e.usage.cached;
                m.tokens.completion += e.usage.completion;
                self.close_reply();
                self.current = Some(Reply {
                    model,
                    step: Some(e.step as i64),
                    after_break: std::mem::take(&mut self.pending_break),
                    calls: Vec::new(),
                });
            }
            Event::ToolCall(e) => {
                let path = e.args.get("path").and_then(Value::as_str).map(normalize);
                let index = Some(e.call as i64);
                self.reply_for(Some(e.step as i64)).calls.push(Call {
                    index,
                    name: e.name.clone(),
                    path,
                });
            }
            Event::ToolResult(e) => {
                let path = e.path.as_deref().map(normalize);
                let index = Some(e.call as i64);
                let reply = self.reply_for(Some(e.step as i64));
                let known = reply.calls.iter_mut().find(|c| c.index == index);
                match known {
                    Some(call) => {
                        if path.is_some() {
                            call.path = path;
                        }
                    }
                    None => reply.calls.push(Call {
                        index,
                        name: e.name.clone(),
                        path,
                    }),
                }
                if e.name == "fs-edit" {
                    let model = self.model();
                    entry(models, &model).fs_edit.count(e);
                }
            }
            _ => {}
        }
    }

    /// The reply a tool event of `step` belongs to: the current one unless
    /// the step says otherwise.
    fn reply_for(&mut self, step: Option<i64>) -> &mut Reply {
        let same = match &self.current {
            Some(r) => r.step.is_none() || step.is_none() || r.step == step,
            None => false,
        };
        if !same {
            self.close_reply();
            self.current = Some(Reply {
                model: self.model(),
                step,
                after_break: std::mem::take(&mut self.pending_break),
                calls: Vec::new(),
            });
        }
        let reply = self.current.get_or_insert_with(Reply::default);
        if reply.step.is_none() {
            reply.step = step;
        }
        reply
    }

    fn close_reply(&mut self) {
        if let Some(r) = self.current.take() {
            self.replies.push(r);
        }
    }

    fn end_chain(&mut self) {
        self.close_reply();
        self.pending_break = true;
    }

    /// Counts replies and lone re-edits, now that every call's path is known.
    fn finish(mut self, models: &mut BTreeMap<String, ModelStats>) {
        self.close_reply();
        let mut previous: Option<&Reply> = None;
        for reply in &self.replies {
            if reply.after_break {
                previous = None;
            }
            if reply.calls.is_empty() {
                continue;
            }
            let m = entry(models, &reply.model);
            m.replies += 1;
            if let ([only], Some(prev)) = (reply.calls.as_slice(), previous)
                && only.name == "fs-edit"
                && only.path.is_some()
                && prev
                    .calls
                    .iter()
                    .any(|c| c.name == "fs-edit" && c.path == only.path)
            {
                m.lone_re_edits += 1;
            }
            previous = Some(reply);
        }
    }
}

fn entry<'a>(models: &'a mut BTreeMap<String, ModelStats>, model: &str) -> &'a mut ModelStats {
    models.entry(model.to_string()).or_default()
}

/// `./src/a.rs` and `src/a.rs` name the same file.
fn normalize(path: &str) -> String {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.to_string()
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl FsEditStats {
    /// Counts one fs-edit `tool.result`.
    fn count(&mut self, ev: &event::ToolResult) {
        self.calls += 1;
        let kind = ev.kind.as_deref();
        let refused = ev.refused;
        if ev.ok && !refused {
            self.ok += 1;
        } else {
            self.failed += 1;
            let k = &mut self.by_kind;
            let bucket = if refused {
                &mut k.refused
            } else {
                match kind {
                    Some("not_found" | "new_already_present") => &mut k.not_found,
                    Some("ambiguous") => &mut k.not_unique,
                    Some("invalid" | "empty_old" | "no_change") => &mut k.validation,
                    _ => &mut k.other,
                }
            };
            bucket.count += 1;
        }
        if let Some(n) = ev.edits {
            self.edits += n;
            self.calls_reporting_edits += 1;
        }
        if let Some(form) = ev.edits_form.as_deref() {
            self.calls_reporting_form += 1;
            match form {
                "list" => self.list_calls += 1,
                "list-as-string" => {
                    self.list_calls += 1;
                    self.list_as_string_calls += 1;
                }
                _ => {}
            }
        }
    }

    fn add(&mut self, o: &FsEditStats) {
        self.calls += o.calls;
        self.ok += o.ok;
        self.failed += o.failed;
        let (k, ok) = (&mut self.by_kind, &o.by_kind);
        k.not_found.count += ok.not_found.count;
        k.not_unique.count += ok.not_unique.count;
        k.validation.count += ok.validation.count;
        k.refused.count += ok.refused.count;
        k.other.count += ok.other.count;
        self.edits += o.edits;
        self.calls_reporting_edits += o.calls_reporting_edits;
        self.list_calls += o.list_calls;
        self.list_as_string_calls += o.list_as_string_calls;
        self.calls_reporting_form += o.calls_reporting_form;
    }

    fn finish(&mut self) {
        let calls = self.calls;
        self.failure_rate = ratio(self.failed, calls);
        let k = &mut self.by_kind;
        for kc in [
            &mut k.not_found,
            &mut k.not_unique,
            &mut k.validation,
            &mut k.refused,
            &mut k.other,
        ] {
            kc.rate = ratio(kc.count, calls);
        }
        self.edits_per_call = ratio(self.edits, self.calls_reporting_edits);
        self.list_share = ratio(self.list_calls, self.calls_reporting_form);
    }
}

impl ModelStats {
    fn add(&mut self, o: &ModelStats) {
        self.requests += o.requests;
        self.tokens.prompt += o.tokens.prompt;
        self.tokens.cached += o.tokens.cached;
        self.tokens.completion += o.tokens.completion;
        self.fs_edit.add(&o.fs_edit);
        self.replies += o.replies;
        self.lone_re_edits += o.lone_re_edits;
    }

    fn finish(&mut self) {
        self.prompt_per_request = ratio(self.tokens.prompt, self.requests);
        self.fs_edit.finish();
        self.lone_re_edit_share = ratio(self.lone_re_edits, self.replies);
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}, {} {}",
            self.files,
            plural(self.files as u64, "file", "files"),
            self.events,
            plural(self.events, "event", "events")
        )?;
        let mut notes = Vec::new();
        if self.bad_lines > 0 {
            notes.push(format!(
                "{} unreadable {} skipped",
                self.bad_lines,
                plural(self.bad_lines, "line", "lines")
            ));
        }
        if self.truncated_files > 0 {
            notes.push(format!(
                "{} {} with a cut-off last line",
                self.truncated_files,
                plural(self.truncated_files, "file", "files")
            ));
        }
        if !notes.is_empty() {
            write!(f, " ({})", notes.join("; "))?;
        }
        writeln!(f)?;
        if self.models.is_empty() {
            return writeln!(f, "no model requests or tool results found");
        }
        let mut rows: Vec<&ModelStats> = self.models.iter().collect();
        if self.models.len() > 1 {
            rows.push(&self.total);
        }

        writeln!(f, "\nrequests and tokens")?;
        let body: Vec<Vec<String>> = rows
            .iter()
            .map(|m| {
                vec![
                    m.model.clone(),
                    m.requests.to_string(),
                    m.tokens.prompt.to_string(),
                    m.tokens.cached.to_string(),
                    m.tokens.completion.to_string(),
                    num(m.prompt_per_request, 1),
                ]
            })
            .collect();
        table(
            f,
            &[
                "model",
                "requests",
                "prompt",
                "cached",
                "completion",
                "prompt/request",
            ],
            &body,
        )?;

        writeln!(
            f,
            "\nfs-edit calls (failure rates are shares of all fs-edit calls)"
        )?;
        let body: Vec<Vec<String>> = rows
            .iter()
            .map(|m| {
                let e = &m.fs_edit;
                let k = &e.by_kind;
                vec![
                    m.model.clone(),
                    e.calls.to_string(),
                    pct(e.failure_rate),
                    pct(k.not_found.rate),
                    pct(k.not_unique.rate),
                    pct(k.validation.rate),
                    pct(k.refused.rate),
                    pct(k.other.rate),
                    num(e.edits_per_call, 2),
                    pct(e.list_share),
                ]
            })
            .collect();
        table(
            f,
            &[
                "model",
                "calls",
                "failed",
                "not found",
                "not unique",
                "validation",
                "refused",
                "other",
                "edits/call",
                "list form",
            ],
            &body,
        )?;

        writeln!(
            f,
            "\nlone re-edits (replies whose only call re-edits the file the previous reply edited)"
        )?;
        let body: Vec<Vec<String>> = rows
            .iter()
            .map(|m| {
                vec![
                    m.model.clone(),
                    m.replies.to_string(),
                    m.lone_re_edits.to_string(),
                    pct(m.lone_re_edit_share),
                ]
            })
            .collect();
        table(f, &["model", "replies", "lone re-edits", "share"], &body)
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{:.1}%", v * 100.0))
}

fn num(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

/// Columns separated by two spaces; the first left-aligned, the rest
/// right-aligned; each row indented by two.
fn table(f: &mut fmt::Formatter<'_>, header: &[&str], rows: &[Vec<String>]) -> fmt::Result {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            line.push_str("  ");
            if i == 0 {
                line.push_str(&format!("{cell:<w$}"));
            } else {
                line.push_str(&format!("{cell:>w$}"));
            }
        }
        writeln!(f, "{}", line.trim_end())?;
    }
    Ok(())
}
