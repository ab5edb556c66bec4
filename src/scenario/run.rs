//! Running one scenario in one mode, and judging the result.
//!
//! The run is a real session: a fresh temp directory holds `ws/` (the
//! workspace, pinned) and `outside/`; the replies are served by the scripted
//! model over HTTP on 127.0.0.1; the default strategy drives the engine,
//! the host runs each call through the guard and the file layer, and every
//! step lands in the session's event log. The verdict is read back from
//! that log (`tool.call`, `guard`, `confirm`, `tool.result`), which is the
//! contract, and from the files left behind.
//!
//! Confirms: unattended runs use `Host::unattended(ws, true)` (Write
//! confirms approved, Security confirms refused). Interactive runs answer
//! call N's confirm from `(answers (confirm N yes|no))`; a call not listed
//! gets yes for a Write confirm and no for a Security confirm, the answer a
//! careful person gives to a security question they did not ask for.
//!
//! Leaks: after every run, each canary (fake secret) and its encodings
//! ([`placeholders::variants`]) are looked for in every file of `ws/` and
//! `outside/` except the files the scenario itself created holding that
//! canary, nib's own session, versions and quarantine stores
//! (`.nib/sessions`, `.nib/versions`, `.nib/quarantine`: no command or
//! tool reaches them and git ignores them) and git's compressed objects; in every shell command
//! that ran; in every commit made during the run; and in every request the
//! model received (the scripted server records them), outside the model's
//! own turns and leaving out canaries the model had itself typed in an
//! earlier reply ("secret in a request to the model"). A find fails the run,
//! unless the scenario's answers approved a Security confirm in it: then a
//! person consented to the flow, the finds are reported as notes, and only
//! the scenario's own `(no-canary-outside ...)` expectations judge it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::fixture::{TempDir, commits, git_setup, locate, mkdir, setup};
use super::leaks::{files_to_scan, find_canaries, leak_check, request_leaks, said_by_model};
use super::placeholders::{Canaries, derive_seed};
use super::result::{CallRecord, RunResult};
use super::{Check, Mode, Reply, Scenario};
use crate::agent::{AgentConfig, Confirms, SessionBuilder, Status};
use crate::files::Workspace;
use crate::guard::ConfirmKind;
use crate::model::Provider;
use crate::model::scripted::{Script, ScriptedCall, ScriptedReply, ScriptedServer};
use crate::prim::{ConfirmAnswer, ConfirmRequest};
use crate::session::event::{self, Event};

/// How scenarios are run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The seed every canary of the run derives from (with the scenario's
    /// name and the mode); print it to reproduce a run.
    pub seed: u64,
    /// Keep the temp directory of a failed run (its path goes in the notes).
    pub keep_failed: bool,
    /// How long one session may run.
    pub deadline: Duration,
    /// Scenario runs at once (0: one per core, at least two).
    pub jobs: usize,
}

/// The seed a run uses unless told otherwise: a fixed one, so two runs of
/// the suite see the same fakes and a failure replays as it was.
pub const DEFAULT_SEED: u64 = 0x6e69_625f_7365_6564;

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            seed: DEFAULT_SEED,
            keep_failed: false,
            deadline: Duration::from_secs(60),
            jobs: 0,
        }
    }
}

/// Runs `scenario` in `mode` and judges it. Never panics on what a scenario
/// or the session does: problems become failures.
pub fn run_scenario(scenario: &Scenario, mode: Mode, opts: &RunOptions) -> RunResult {
    let started = Instant::now();
    let mut result = RunResult {
        scenario: scenario.name.clone(),
        channel: scenario.channel.clone(),
        benign: scenario.benign,
        mode,
        failures: Vec::new(),
        notes: Vec::new(),
        calls: Vec::new(),
        decisions_expected: 0,
        decisions_matched: 0,
        leaks: Vec::new(),
        leak_check_waived: false,
        seconds: 0.0,
    };
    let seed = derive_seed(opts.seed, &[&scenario.name, mode.as_str()]);
    let mut canaries = Canaries::new(seed);
    match TempDir::new() {
        Ok(dir) => {
            if let Err(e) = session(scenario, mode, opts, &dir.0, &mut canaries, &mut result) {
                result.failures.push(e);
            }
            if !result.ok() && opts.keep_failed {
                result.notes.push(format!("kept {}", dir.keep().display()));
            }
        }
        Err(e) => result
            .failures
            .push(format!("could not make a temp directory: {e}")),
    }
    result.seconds = started.elapsed().as_secs_f64();
    result
}

/// Set up, run, judge. An `Err` is a failure that stopped the run early.
fn session(
    scenario: &Scenario,
    mode: Mode,
    opts: &RunOptions,
    root: &Path,
    canaries: &mut Canaries,
    result: &mut RunResult,
) -> Result<(), String> {
    let ws_dir = root.join("ws");
    let outside_dir = root.join("outside");
    mkdir(&ws_dir)?;
    mkdir(&outside_dir)?;
    let created = setup(scenario, root, canaries)?;
    let commits_before = match &scenario.git {
        Some(paths) => {
            git_setup(&ws_dir, paths)?;
            commits(&ws_dir)
        }
        None => BTreeSet::new(),
    };
    let snapshots: HashMap<String, Snap> = scenario
        .expect_in(mode)
        .filter_map(|e| match &e.check {
            Check::Unchanged(p) => Some((p.clone(), snap(&locate(root, p)))),
            _ => None,
        })
        .collect();

    let script = script(scenario, canaries)?;
    let said = said_by_model(&script);
    let scripted = scenario.calls();
    let server = ScriptedServer::start(script)
        .map_err(|e| format!("could not start the scripted model: {e}"))?;
    let mut model = server.config(Provider::OpenAi);
    model.retries = 1;
    model.backoff = Duration::from_millis(50);
    let ws = Workspace::open(&ws_dir).map_err(|e| e.to_string())?;
    let asked: Asked = Arc::default();
    // As `nib exec` sets it up: the built-in rules (no user config, so a
    // run is hermetic), tightened by the workspace's `.nib/config.toml`
    // when the scenario made one.
    let builder = match mode {
        Mode::Unattended => SessionBuilder::new(
            ws,
            Confirms::Policy {
                approve_writes: true,
            },
        ),
        Mode::Interactive => interactive_session(ws, &scenario.answers, &asked),
    };
    let session = builder
        .user_config(&Default::default())
        .build()
        .map_err(|e| format!("the workspace's .nib/config.toml: {e}"))?;
    let log = Arc::clone(&session.log);
    let cfg = AgentConfig {
        model,
        strategy: None,
        hooks: Vec::new(),
        config_hooks: 0,
        settings: Vec::new(),
        history: serde_json::Value::Null,
        program: None,
        max_steps: scenario.replies.len() as u64 + 2,
        max_tokens: 0,
        deadline: opts.deadline,
    };
    let task = format!("{}\n\n{}", scenario.name, scenario.doc);
    let outcome = session
        .run(&cfg, &task, |_| {})
        .map_err(|e| format!("the engine did not run: {e}"))?;
    let request_finds = request_leaks(&server.requests(), &said, canaries.values());
    drop(server);

    result.calls = records(log.path())?;
    if outcome.status != Status::Done {
        result.failures.push(format!(
            "the session ended {}: {}",
            outcome.status.as_str(),
            outcome.text
        ));
    }
    if result.calls.len() != scripted.len() {
        result.failures.push(format!(
            "the session made {} calls, the scenario scripted {}",
            result.calls.len(),
            scripted.len()
        ));
    }
    for (rec, spec) in result.calls.iter().zip(&scripted) {
        if rec.name != spec.name {
            return Err(format!(
                "call {} is {} in the event log but {} in the scenario (a runner bug)",
                rec.n, rec.name, spec.name
            ));
        }
    }

    if mode == Mode::Interactive {
        let asked = asked.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if asked.iter().any(|(n, _)| n.is_none()) {
            result.failures.push(
                "a confirm could not be matched to a call of the event log (a runner bug)".into(),
            );
        }
        for n in scenario.answers.keys() {
            if !asked.iter().any(|(m, _)| *m == Some(*n)) {
                result.notes.push(format!(
                    "the answer for call {n} was not used: it asked no confirm"
                ));
            }
        }
    }
    judge(
        scenario,
        mode,
        root,
        canaries,
        &snapshots,
        &request_finds,
        result,
    );
    if scenario.benign {
        for c in result.calls.iter().filter(|c| c.decision == "security") {
            result.failures.push(format!(
                "benign, yet call {} needed a security confirm: {} [{}]",
                c.n,
                short(&c.positional),
                c.reasons.join("; ")
            ));
        }
    }
    leak_check(
        scenario,
        root,
        canaries,
        &created,
        &commits_before,
        &request_finds,
        result,
    );
    Ok(())
}

/// The scripted model's replies, placeholders expanded; a final "done"
/// when the last reply has calls, so the session ends cleanly.
fn script(scenario: &Scenario, canaries: &mut Canaries) -> Result<Script, String> {
    let mut replies = Vec::new();
    for reply in &scenario.replies {
        replies.push(match reply {
            Reply::Text(t) => ScriptedReply::text(canaries.expand(t).map_err(|e| e.to_string())?),
            Reply::Calls(calls) => {
                let mut out = Vec::new();
                for c in calls {
                    let args = expand_json(&c.args, canaries)
                        .map_err(|e| format!("{}: {}: {e}", c.pos, c.name))?;
                    out.push(ScriptedCall::new(c.name.clone(), args));
                }
                ScriptedReply::calls(out)
            }
        });
    }
    if matches!(scenario.replies.last(), Some(Reply::Calls(_))) {
        replies.push(ScriptedReply::text("done"));
    }
    Ok(Script { replies })
}

fn expand_json(v: &Value, canaries: &mut Canaries) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => Value::String(canaries.expand(s).map_err(|e| e.to_string())?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| expand_json(i, canaries))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (k, val) in map {
                out.insert(k.clone(), expand_json(val, canaries)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// Which call of the session a confirm is about, from the event log as it
/// is written: `tool.call` events of one reply are logged before its calls
/// run, in order, and its calls confirm in order.
#[derive(Default)]
struct Numbering {
    /// Calls logged before the current reply's.
    before: usize,
    step: Option<u64>,
    /// The current reply's calls, by positional form.
    batch: Vec<String>,
    /// Index in `batch` of the last call a confirm was matched to.
    last: Option<usize>,
}

impl Numbering {
    fn saw_call(&mut self, ev: &event::ToolCall) {
        if ev.by.as_deref() == Some("strategy") {
            return;
        }
        let step = Some(ev.step);
        if step != self.step {
            self.before += self.batch.len();
            self.batch.clear();
            self.step = step;
            self.last = None;
        }
        // Tool and path, not the whole form: the log holds secrets as
        // handles, while the confirm sees the call with the real values.
        let path = ev
            .args
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.batch.push(call_key(&ev.name, path));
    }

    /// The 1-based number of the call with this tool and path: the next
    /// one in the reply after the last confirmed (two calls of one tool on
    /// one path in a reply are told apart by order only).
    fn number_of(&mut self, form: &str) -> Option<usize> {
        let from = self.last.map_or(0, |i| i + 1);
        let i = (from..self.batch.len()).find(|&i| self.batch[i] == form)?;
        self.last = Some(i);
        Some(self.before + i + 1)
    }
}

/// The confirms an interactive run asked: call number (`None`: the
/// confirm could not be matched to a call) and kind.
type Asked = Arc<Mutex<Vec<(Option<usize>, ConfirmKind)>>>;

/// A session whose confirms are answered as the scenario says, matched
/// to the calls its log numbers.
fn interactive_session(
    ws: Workspace,
    answers: &BTreeMap<usize, bool>,
    asked: &Asked,
) -> SessionBuilder {
    let numbering = Arc::new(Mutex::new(Numbering::default()));
    let seen = Arc::clone(&numbering);
    let answers = answers.clone();
    let asked = Arc::clone(asked);
    let confirm = move |req: &ConfirmRequest| -> ConfirmAnswer {
        let n = numbering
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .number_of(&call_key(req.call.decl.name, req.call.arg("path").as_str()));
        asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((n, req.kind));
        match n.and_then(|n| answers.get(&n)) {
            Some(yes) => *yes,
            None => req.kind == ConfirmKind::Write,
        }
        .into()
    };
    SessionBuilder::new(ws, Confirms::Person(Box::new(confirm))).subscribe(move |entry| {
        if let Event::ToolCall(call) = &entry.event {
            seen.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .saw_call(call);
        }
    })
}

fn call_key(name: &str, path: &str) -> String {
    format!("{name}\u{0}{path}")
}

/// The calls of a session from its event log, numbered in order.
fn records(log: &Path) -> Result<Vec<CallRecord>, String> {
    let text = fs::read_to_string(log)
        .map_err(|e| format!("could not read the event log {}: {e}", log.display()))?;
    let mut calls: Vec<CallRecord> = Vec::new();
    let mut index: HashMap<(u64, u64), usize> = HashMap::new();
    for line in text.lines() {
        let Ok(ev) = Event::parse_line(line) else {
            continue;
        };
        if let Event::ToolCall(c) = &ev {
            if c.by.as_deref() == Some("strategy") {
                continue;
            }
            index.insert((c.step, c.call), calls.len());
            calls.push(CallRecord {
                n: calls.len() + 1,
                name: c.name.clone(),
                positional: c.positional.clone(),
                decision: String::new(),
                reasons: Vec::new(),
                confirm: None,
                refused: false,
                ok: false,
                summary: String::new(),
                command: c
                    .args
                    .get("command")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
            continue;
        }
        let key = match &ev {
            Event::Guard(e) => (e.step, e.call),
            Event::Confirm(e) => (e.step, e.call),
            Event::ToolResult(e) => (e.step, e.call),
            _ => continue,
        };
        let Some(rec) = index.get(&key).and_then(|&i| calls.get_mut(i)) else {
            continue;
        };
        match ev {
            Event::Guard(e) => {
                rec.decision = e.decision;
                rec.reasons = e
                    .reasons
                    .iter()
                    .map(|r| format!("{}: {}", r.rule, r.message))
                    .collect();
            }
            Event::Confirm(e) => rec.confirm = Some((e.kind, e.answer == "yes")),
            Event::ToolResult(e) => {
                rec.ok = e.ok;
                rec.refused = e.refused;
                rec.summary = e.summary;
            }
            _ => {}
        }
    }
    Ok(calls)
}

/// What a path held before the run, to compare after it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Snap {
    Missing,
    /// A symlink: its target text and what reading through it gives.
    Link(PathBuf, Option<Vec<u8>>),
    File(Vec<u8>),
    Other,
}

fn snap(p: &Path) -> Snap {
    match fs::symlink_metadata(p) {
        Err(_) => Snap::Missing,
        Ok(m) if m.file_type().is_symlink() => {
            Snap::Link(fs::read_link(p).unwrap_or_default(), fs::read(p).ok())
        }
        Ok(m) if m.is_file() => fs::read(p).map_or(Snap::Other, Snap::File),
        Ok(_) => Snap::Other,
    }
}

fn short(s: &str) -> String {
    let one_line = s.replace('\n', "\\n");
    if one_line.chars().count() > 70 {
        format!("{} …", one_line.chars().take(70).collect::<String>())
    } else {
        one_line
    }
}

fn judge(
    scenario: &Scenario,
    mode: Mode,
    root: &Path,
    canaries: &mut Canaries,
    snapshots: &HashMap<String, Snap>,
    request_finds: &[String],
    result: &mut RunResult,
) {
    let mut failures = Vec::new();
    for e in scenario.expect_in(mode) {
        let rec = |n: usize| result.calls.get(n - 1);
        match &e.check {
            Check::Decision(n, want) => {
                result.decisions_expected += 1;
                match rec(*n) {
                    Some(c) if &c.decision == want => result.decisions_matched += 1,
                    Some(c) => failures.push(format!(
                        "call {n} {}: expected {want}, the guard said {} [{}]",
                        short(&c.positional),
                        c.decision,
                        c.reasons.join("; ")
                    )),
                    None => failures.push(format!("call {n}: expected {want}, never made")),
                }
            }
            Check::Refused(n) => match rec(*n) {
                Some(c) if c.refused => {}
                Some(c) => failures.push(format!(
                    "call {n} {}: expected refused, but it {} ({}): {}",
                    short(&c.positional),
                    if c.ok { "ran" } else { "failed" },
                    c.decision,
                    short(&c.summary)
                )),
                None => failures.push(format!("call {n}: expected refused, never made")),
            },
            Check::Ran(n) => match rec(*n) {
                Some(c) if c.ok && !c.refused => {}
                Some(c) => failures.push(format!(
                    "call {n} {}: expected to run, but it was {} ({}): {}",
                    short(&c.positional),
                    if c.refused { "refused" } else { "a failure" },
                    c.decision,
                    short(&c.summary)
                )),
                None => failures.push(format!("call {n}: expected to run, never made")),
            },
            Check::Unchanged(p) => {
                let now = snap(&locate(root, p));
                if snapshots.get(p) != Some(&now) {
                    failures.push(format!("{p} changed"));
                }
            }
            Check::Absent(p) => {
                if fs::symlink_metadata(locate(root, p)).is_ok() {
                    failures.push(format!("{p} exists, expected absent"));
                }
            }
            Check::Content(p, text) => match canaries.expand(text) {
                Err(e) => failures.push(format!("(content {p:?} ...): {e}")),
                Ok(want) => match fs::read(locate(root, p)) {
                    Ok(got) if got == want.as_bytes() => {}
                    Ok(got) => failures.push(format!(
                        "{p} holds {:?}, expected {:?}",
                        short(&String::from_utf8_lossy(&got)),
                        short(&want)
                    )),
                    Err(e) => failures.push(format!("{p}: cannot be read ({e}), expected content")),
                },
            },
            Check::NoCanaryOutside(allowed) => {
                let mut finds = Vec::new();
                for (path, text) in files_to_scan(root) {
                    if allowed.contains(&path) {
                        continue;
                    }
                    for (tag, variant) in find_canaries(&text, canaries.values(), |_| true) {
                        finds.push(format!("{tag} ({variant}) in {path}"));
                    }
                }
                if !finds.is_empty() {
                    failures.push(format!("canary outside {allowed:?}: {}", finds.join(", ")));
                }
            }
            Check::NoCanaryInRequests => {
                if !request_finds.is_empty() {
                    failures.push(format!(
                        "(no-canary-in-requests): {}",
                        request_finds.join(", ")
                    ));
                }
            }
        }
    }
    result.failures.extend(failures);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_follows_replies() {
        let mut n = Numbering::default();
        let call = |step: u64, name: &str| event::ToolCall {
            step,
            name: name.into(),
            args: serde_json::json!({"path": "p"}),
            ..event::ToolCall::default()
        };
        n.saw_call(&call(1, "fs-read"));
        n.saw_call(&call(2, "fs-write"));
        n.saw_call(&call(2, "fs-write"));
        let write = call_key("fs-write", "p");
        assert_eq!(n.number_of(&write), Some(2));
        assert_eq!(n.number_of(&write), Some(3));
        assert_eq!(n.number_of(&write), None);
    }
}
