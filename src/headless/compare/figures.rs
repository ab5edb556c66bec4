//! The figures `nib compare` reads from one session's event log (one
//! SWE-bench instance), and the runs a side is made of.
//!
//! Definitions (per session):
//!
//! - `requests`: `llm.resp` events; `main_requests`: those whose request
//!   offered tools (`llm.req` with `tools > 0`): a strategy's own quiet
//!   calls (compact's summary) offer none.
//! - `prompt_tokens`: the sum of `usage.prompt`; `prompt_seconds`: the
//!   server's prompt-evaluation time when the log carries it
//!   (`prompt_ms` on `llm.resp`), else absent.
//! - fs-edit failures by kind, from `tool.result` events named `fs-edit`
//!   that failed: `not_found` (also `new_already_present`), `not_unique`
//!   (`ambiguous`), `contract` (`invalid`, `unknown_tool`: the call broke
//!   the tool's argument contract), `validation` (`empty_old`,
//!   `no_change`), `stale` (`stale`, `unread`), `refused` (the guard or a
//!   confirm), `other`; and across kinds, `edit_n_of_m`: failures that
//!   name one edit of a list ("edit N of M failed").
//! - `failed_lists`: failed fs-edit calls carrying two or more edits;
//!   `failed_lists_resent`: those after which a later fs-edit call to the
//!   same file sent one of the other edits again (the same `old` text).
//! - `list_calls`: fs-edit calls in list form (`list`, `list-as-string`);
//!   `edits`: the edits they all carried.
//! - `replies`: model replies with a tool call; `replies_two_edits_one_file`:
//!   replies with two or more fs-edit calls to one file (a list would do);
//!   `lone_re_edits`: replies whose only call is an fs-edit of a file the
//!   previous reply with calls edited (a turn's end breaks the chain).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// Every figure, in the order reports show them: (key, what it is).
pub const FIGURES: [(&str, &str); 23] = [
    ("resolved", "resolved (evaluation)"),
    ("requests", "model requests"),
    ("main_requests", "main-context requests"),
    ("prompt_tokens", "prompt tokens"),
    ("prompt_seconds", "prompt evaluation s"),
    ("fs_edit_calls", "fs-edit calls"),
    ("fs_edit_failures", "fs-edit failures"),
    ("fail_not_found", "  not found"),
    ("fail_not_unique", "  not unique"),
    ("fail_contract", "  contract"),
    ("fail_validation", "  validation"),
    ("fail_stale", "  stale/unread"),
    ("fail_refused", "  refused"),
    ("fail_other", "  other"),
    ("fail_edit_n_of_m", "  \"edit N of M\""),
    ("failed_lists", "failed list calls"),
    ("failed_lists_resent", "  other edits sent again"),
    ("list_calls", "fs-edit calls as lists"),
    ("edits", "edits sent"),
    ("replies", "replies with calls"),
    (
        "replies_two_edits_one_file",
        "replies, 2+ fs-edits to one file",
    ),
    ("lone_re_edits", "lone re-edit replies"),
    ("instances", "instances"),
];

/// One session's figures by key (absent: the log does not say).
pub type Figures = BTreeMap<&'static str, f64>;

/// One run: its sessions' figures by instance id.
pub struct RunFigures {
    pub instances: BTreeMap<String, Figures>,
}

/// A run directory (`nib swebench --out`, with `<id>/events.jsonl`, also
/// under `shards/I/`), a directory of session logs, or one log file.
pub fn read_run(path: &Path, resolved: Option<&HashSet<String>>) -> Result<RunFigures, String> {
    let mut logs: Vec<(String, PathBuf)> = Vec::new();
    if path.is_file() {
        logs.push((session_id(path), path.to_path_buf()));
    } else if path.is_dir() {
        find_logs(path, 0, &mut logs);
    } else {
        return Err(format!(
            "{}: no such run directory or event log",
            path.display()
        ));
    }
    if logs.is_empty() {
        return Err(format!(
            "{}: no event log in it (a `nib swebench` OUT holds <id>/events.jsonl)",
            path.display()
        ));
    }
    let found;
    let resolved = match resolved {
        Some(r) => Some(r),
        None => {
            found = find_resolved(path);
            found.as_ref()
        }
    };
    let mut instances = BTreeMap::new();
    for (id, log) in logs {
        let mut f = read_log(&log)?;
        if let Some(set) = resolved {
            f.insert("resolved", if set.contains(&id) { 1.0 } else { 0.0 });
        } else if let Some(r) = grade_resolved(&log) {
            f.insert("resolved", r);
        }
        instances.insert(id, f);
    }
    Ok(RunFigures { instances })
}

/// `x/events.jsonl` is instance `x`; another log is its file stem.
fn session_id(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    match stem.as_deref() {
        Some("events") | None => path
            .parent()
            .and_then(Path::file_name)
            .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned()),
        Some(s) => s.to_string(),
    }
}

fn find_logs(dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() && depth < 3 && !name.starts_with('.') {
            find_logs(&p, depth + 1, out);
        } else if name == "events.jsonl"
            || (depth == 0 && name.ends_with(".jsonl") && name != "preds.jsonl")
        {
            out.push((session_id(&p), p));
        }
    }
}

/// The resolved ids an evaluation report in the run directory gives: a
/// `.json` file at its top (or under `eval/`) with `resolved_ids` (the
/// harness's `<model>.<run_id>.json`, sb-cli's report).
fn find_resolved(dir: &Path) -> Option<HashSet<String>> {
    let mut places = vec![dir.to_path_buf(), dir.join("eval")];
    places.retain(|p| p.is_dir());
    for place in places {
        let Ok(entries) = std::fs::read_dir(&place) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            if let Ok(set) = resolved_ids(&f)
                && f.file_name()
                    .is_some_and(|n| n != "preds.json" && n != "run.json")
            {
                return Some(set);
            }
        }
    }
    None
}

/// The resolved ids in an evaluation file: an object with `resolved_ids`,
/// a JSON list of ids, or one id a line.
pub fn resolved_ids(path: &Path) -> Result<HashSet<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let strings = |v: &Value| -> Option<HashSet<String>> {
        v.as_array().map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(v) if v.get("resolved_ids").is_some() => strings(&v["resolved_ids"])
            .ok_or_else(|| format!("{}: resolved_ids is not a list of ids", path.display())),
        Ok(v) if v.is_array() => {
            strings(&v).ok_or_else(|| format!("{}: not a list of ids", path.display()))
        }
        Ok(_) => Err(format!(
            "{}: no resolved_ids (give the harness's <model>.<run_id>.json, a JSON list of ids, or one id a line)",
            path.display()
        )),
        Err(_) => Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect()),
    }
}

/// `nib swebench grade`'s verdict beside an instance's log, if graded.
fn grade_resolved(log: &Path) -> Option<f64> {
    let grade = log.parent()?.join("grade.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(grade).ok()?).ok()?;
    v["resolved"].as_bool().map(|r| if r { 1.0 } else { 0.0 })
}

#[derive(Default)]
struct Reply {
    calls: Vec<(String, Option<String>)>,
    after_break: bool,
}

/// The figures of one event log (lines that do not parse are skipped: a
/// log cut by a kill still counts up to its cut).
pub fn read_log(path: &Path) -> Result<Figures, String> {
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut f = Figures::new();
    for key in FIGURES.iter().map(|(k, _)| *k) {
        if !matches!(key, "resolved" | "prompt_seconds") {
            f.insert(key, 0.0);
        }
    }
    f.insert("instances", 1.0);
    let add = |f: &mut Figures, k: &'static str, n: f64| *f.entry(k).or_insert(0.0) += n;
    let mut last_req_tools = true;
    let mut replies: Vec<Reply> = Vec::new();
    let mut pending_break = false;
    // Per call of the current step: its args (for resend checks).
    let mut call_args: HashMap<(u64, u64), Value> = HashMap::new();
    // Failed list calls waiting for a later call to their file: the
    // `old` texts of their other edits.
    let mut waiting: Vec<(String, Vec<String>)> = Vec::new();
    for line in BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let Ok(ev) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match ev["ev"].as_str().unwrap_or_default() {
            "session.start" | "turn.end" => pending_break = true,
            "llm.req" => last_req_tools = ev["tools"].as_u64().unwrap_or(1) > 0,
            "llm.resp" => {
                add(&mut f, "requests", 1.0);
                if last_req_tools {
                    add(&mut f, "main_requests", 1.0);
                }
                add(
                    &mut f,
                    "prompt_tokens",
                    ev["usage"]["prompt"].as_f64().unwrap_or(0.0),
                );
                if let Some(ms) = ev["prompt_ms"].as_f64() {
                    add(&mut f, "prompt_seconds", ms / 1000.0);
                }
                replies.push(Reply {
                    calls: Vec::new(),
                    after_break: std::mem::take(&mut pending_break),
                });
            }
            "tool.call" => {
                let key = (
                    ev["step"].as_u64().unwrap_or(0),
                    ev["call"].as_u64().unwrap_or(0),
                );
                call_args.insert(key, ev["args"].clone());
                if ev.get("by").is_some_and(|b| !b.is_null()) {
                    continue;
                }
                let name = ev["name"].as_str().unwrap_or_default().to_string();
                let path = ev["args"]["path"].as_str().map(normalize);
                if let Some(r) = replies.last_mut() {
                    r.calls.push((name, path));
                }
            }
            "tool.result" if ev["name"] == "fs-edit" => {
                fs_edit_result(&mut f, &ev, &call_args, &mut waiting);
            }
            _ => {}
        }
    }
    reply_figures(&mut f, &replies);
    Ok(f)
}

fn normalize(p: &str) -> String {
    let mut p = p;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.to_string()
}

/// The `old` texts of an fs-edit call's edits (one, or a list).
fn olds(args: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(o) = args["old"].as_str() {
        out.push(o.to_string());
    }
    let list = match &args["edits"] {
        Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
        v => v.clone(),
    };
    for e in list.as_array().into_iter().flatten() {
        if let Some(o) = e["old"].as_str() {
            out.push(o.to_string());
        }
    }
    out
}

fn fs_edit_result(
    f: &mut Figures,
    ev: &Value,
    call_args: &HashMap<(u64, u64), Value>,
    waiting: &mut Vec<(String, Vec<String>)>,
) {
    let edits = ev["edits"].as_u64().unwrap_or(1);
    *f.entry("edits").or_insert(0.0) += edits as f64;
    let mut add = |k: &'static str| *f.entry(k).or_insert(0.0) += 1.0;
    add("fs_edit_calls");
    if matches!(ev["edits_form"].as_str(), Some("list" | "list-as-string")) {
        add("list_calls");
    }
    let key = (
        ev["step"].as_u64().unwrap_or(0),
        ev["call"].as_u64().unwrap_or(0),
    );
    let args = call_args.get(&key).cloned().unwrap_or(Value::Null);
    let path = ev["path"].as_str().or(args["path"].as_str()).map(normalize);
    let sent = olds(&args);
    // A later call to a file a failed list was waiting on: did it carry
    // one of that list's other edits again?
    if let Some(p) = &path
        && let Some(at) = waiting.iter().position(|(wp, _)| wp == p)
    {
        let (_, others) = waiting.remove(at);
        if sent.iter().any(|o| others.contains(o)) {
            add("failed_lists_resent");
        }
    }
    let ok = ev["ok"].as_bool().unwrap_or(false) && !ev["refused"].as_bool().unwrap_or(false);
    if ok {
        return;
    }
    add("fs_edit_failures");
    let summary = ev["summary"].as_str().unwrap_or_default();
    let bucket = if ev["refused"].as_bool().unwrap_or(false) {
        "fail_refused"
    } else {
        match ev["kind"].as_str() {
            Some("not_found" | "new_already_present") => "fail_not_found",
            Some("ambiguous") => "fail_not_unique",
            Some("invalid" | "unknown_tool") => "fail_contract",
            Some("empty_old" | "no_change") => "fail_validation",
            Some("stale" | "unread") => "fail_stale",
            _ => "fail_other",
        }
    };
    add(bucket);
    // "edit 2 of 3 failed, so nothing was written: ..."
    static EDIT_N_OF_M: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\bedit (\d+) of \d+ failed").ok());
    let failed_one: Option<usize> = EDIT_N_OF_M
        .as_ref()
        .and_then(|re| re.captures(summary))
        .and_then(|c| c.get(1)?.as_str().parse().ok());
    if failed_one.is_some() {
        add("fail_edit_n_of_m");
    }
    if edits >= 2 {
        add("failed_lists");
        if let Some(p) = path {
            let others: Vec<String> = sent
                .iter()
                .enumerate()
                .filter(|(i, _)| failed_one != Some(i + 1))
                .map(|(_, o)| o.clone())
                .collect();
            waiting.push((p, others));
        }
    }
}

fn reply_figures(f: &mut Figures, replies: &[Reply]) {
    let mut previous: Option<&Reply> = None;
    for reply in replies {
        if reply.after_break {
            previous = None;
        }
        if reply.calls.is_empty() {
            continue;
        }
        *f.entry("replies").or_insert(0.0) += 1.0;
        let mut per_file: HashMap<&str, usize> = HashMap::new();
        for (name, path) in &reply.calls {
            if name == "fs-edit"
                && let Some(p) = path
            {
                *per_file.entry(p.as_str()).or_default() += 1;
            }
        }
        if per_file.values().any(|n| *n >= 2) {
            *f.entry("replies_two_edits_one_file").or_insert(0.0) += 1.0;
        }
        if let ([(name, Some(p))], Some(prev)) = (reply.calls.as_slice(), previous)
            && name == "fs-edit"
            && prev
                .calls
                .iter()
                .any(|(n, q)| n == "fs-edit" && q.as_deref() == Some(p.as_str()))
        {
            *f.entry("lone_re_edits").or_insert(0.0) += 1.0;
        }
        previous = Some(reply);
    }
}
