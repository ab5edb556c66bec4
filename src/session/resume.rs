//! Reading sessions back: the list `nib sessions` prints, finding one by
//! its id or a prefix of it (`--resume 2026`), and what a resumed session
//! carries into its next task (each earlier task and how it ended,
//! interrupted ones included).
//!
//! Only reading: appending to a log is `log.rs`'s. A line that does not
//! read (a last line a kill cut short) is skipped, never fatal.

use std::fs;
use std::path::{Path, PathBuf};

use super::event::{Event, Usage};

/// One session of a workspace, as `nib sessions` lists it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionSummary {
    pub id: String,
    pub path: PathBuf,
    /// The first line's `t` (RFC 3339 UTC).
    pub started: String,
    /// The first task, without the context nib put in front of it.
    pub task: String,
    /// How many tasks were run in it.
    pub tasks: usize,
    /// How the last task ended: a `turn.end` reason, `interrupted`, or
    /// `unfinished` (the process died with no word).
    pub status: String,
    pub steps: u64,
    /// Token counts per model, in the order the models first replied.
    pub usage: Vec<(String, Usage)>,
}

impl SessionSummary {
    /// All models' tokens together.
    pub fn total(&self) -> Usage {
        let mut total = Usage::default();
        for (_, u) in &self.usage {
            add_usage(&mut total, u);
        }
        total
    }
}

/// Adds `u` into `total` (an estimate anywhere makes the total one).
pub fn add_usage(total: &mut Usage, u: &Usage) {
    total.prompt += u.prompt;
    total.cached += u.cached;
    total.completion += u.completion;
    total.reported |= u.reported;
    total.estimated |= u.estimated;
}

/// The events of a log that read, in order (torn or foreign lines skipped).
pub fn read_events(path: &Path) -> Vec<Event> {
    let Ok(text) = fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| Event::parse_line(l).ok())
        .collect()
}

/// What the session logged at `path` amounts to.
pub fn summarize(path: &Path) -> SessionSummary {
    let id = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let started = fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines()
                .next()
                .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        })
        .and_then(|v| v.get("t").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_default();
    let mut s = SessionSummary {
        id,
        path: path.to_path_buf(),
        started,
        ..SessionSummary::default()
    };
    for ev in read_events(path) {
        match ev {
            Event::SessionStart(e) => {
                if s.tasks == 0 {
                    s.task = own_task(&e.task).to_string();
                }
                s.tasks += 1;
                s.status = "unfinished".into();
            }
            Event::LlmResp(e) => {
                s.steps += 1;
                match s.usage.iter_mut().find(|(m, _)| *m == e.model) {
                    Some((_, u)) => add_usage(u, &e.usage),
                    None => s.usage.push((e.model.clone(), e.usage)),
                }
            }
            Event::TurnEnd(e) if s.status != "interrupted" => s.status = e.reason,
            Event::Interrupted(_) => s.status = "interrupted".into(),
            _ => {}
        }
    }
    s
}

/// The sessions under `dir` (`.nib/sessions`), oldest first.
pub fn list(dir: &Path) -> Vec<SessionSummary> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<SessionSummary> = entries
        .flatten()
        .map(|e| e.path().join("events.jsonl"))
        .filter(|p| p.is_file())
        .map(|p| summarize(&p))
        .collect();
    out.sort_by(|a, b| (&a.started, &a.id).cmp(&(&b.started, &b.id)));
    out
}

/// The events.jsonl of the session whose id is `id` or starts with it;
/// "" is the newest. The error says what there is to choose from.
pub fn find(dir: &Path, id: &str) -> Result<PathBuf, String> {
    if id.is_empty() {
        return super::newest_session(dir).ok_or_else(|| {
            format!(
                "no sessions to resume in {} (a session starts with the first task)",
                dir.display()
            )
        });
    }
    let exact = dir.join(id).join("events.jsonl");
    if !id.contains('/') && exact.is_file() {
        return Ok(exact);
    }
    let matching: Vec<SessionSummary> = list(dir)
        .into_iter()
        .filter(|s| s.id.starts_with(id))
        .collect();
    match matching.as_slice() {
        [one] => Ok(one.path.clone()),
        [] => Err(format!(
            "no session {id} in {}; `nib sessions` lists them",
            dir.display()
        )),
        many => Err(format!(
            "{} sessions start with {id}: {}; give more of the id",
            many.len(),
            many.iter()
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// What separates the context from the new request in a task.
pub const NEW_REQUEST: &str = "\nThe user's new request:\n";

/// How many earlier tasks (and answers) the next task is given.
pub const EARLIER_KEPT: usize = 5;
/// The most characters of one earlier answer given.
const EARLIER_ANSWER_CHARS: usize = 2000;

/// A task as the person typed it: without the earlier tasks nib put in
/// front of it.
pub fn own_task(task: &str) -> &str {
    task.split_once(NEW_REQUEST).map_or(task, |(_, t)| t)
}

/// The tasks of a logged session and how each ended: its `session.start`
/// task and the text of the `turn.end` that closed it; a task the process
/// died in (no `turn.end` before the next task or the end of the log) is
/// kept too, said to be interrupted, with the last thing it did. The last
/// [`EARLIER_KEPT`], as a live session keeps them.
pub fn earlier_from_log(path: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut open: Option<String> = None;
    let mut last_done = String::new();
    let close = |open: &mut Option<String>, last: &str, out: &mut Vec<(String, String)>| {
        if let Some(task) = open.take() {
            let what = if last.is_empty() {
                "(interrupted before it finished)".to_string()
            } else {
                format!("(interrupted before it finished; the last thing done: {last})")
            };
            out.push((task, what));
        }
    };
    for ev in read_events(path) {
        match ev {
            Event::SessionStart(e) => {
                close(&mut open, &last_done, &mut out);
                last_done.clear();
                let task = own_task(&e.task).to_string();
                open = (!task.is_empty()).then_some(task);
            }
            Event::ToolResult(e) => {
                let mark = if e.ok { "ok" } else { "failed" };
                last_done = format!("{} {mark}: {}", e.name, e.summary);
            }
            Event::TurnEnd(e) => {
                if let Some(task) = open.take() {
                    out.push((task, e.text));
                }
            }
            _ => {}
        }
    }
    close(&mut open, &last_done, &mut out);
    let skip = out.len().saturating_sub(EARLIER_KEPT);
    out.split_off(skip)
}

/// `task` with the session's earlier tasks and answers in front of it.
pub fn with_earlier(earlier: &[(String, String)], task: &str) -> String {
    if earlier.is_empty() {
        return task.to_string();
    }
    let mut out = String::from("Earlier in this session (for context):\n");
    for (t, answer) in earlier {
        let answer: String = answer.chars().take(EARLIER_ANSWER_CHARS).collect();
        out.push_str(&format!(
            "\n- The user asked: {t}\n  You answered: {answer}\n"
        ));
    }
    out.push_str(NEW_REQUEST);
    out.push_str(task);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write_log(dir: &Path, id: &str, lines: &[serde_json::Value]) -> PathBuf {
        let d = dir.join(id);
        fs::create_dir_all(&d).unwrap();
        let p = d.join("events.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_resumed_log_gives_back_its_tasks_and_answers_interrupted_ones_too() {
        let dir = tempfile::tempdir().unwrap();
        let first = "fix add in calc.py";
        let second = with_earlier(&[(first.to_string(), "fixed".to_string())], "now mean");
        let path = write_log(
            dir.path(),
            "s1",
            &[
                json!({"ev": "session.start", "task": first}),
                json!({"ev": "tool.call", "name": "fs-read"}),
                json!({"ev": "turn.end", "text": "fixed"}),
                json!({"ev": "session.start", "task": second}),
                json!({"ev": "turn.end", "text": "mean fixed too"}),
                json!({"ev": "session.start", "task": "and the docs"}),
                json!({"ev": "tool.result", "name": "shell", "ok": true, "summary": "tests pass"}),
            ],
        );
        let got = earlier_from_log(&path);
        assert_eq!(got[0], (first.to_string(), "fixed".to_string()));
        assert_eq!(
            got[1],
            ("now mean".to_string(), "mean fixed too".to_string())
        );
        assert_eq!(got[2].0, "and the docs");
        assert!(
            got[2].1.contains("interrupted") && got[2].1.contains("tests pass"),
            "{got:?}"
        );
        assert!(earlier_from_log(&dir.path().join("missing.jsonl")).is_empty());
    }

    #[test]
    fn sessions_are_found_by_a_prefix_and_summed_up() {
        let dir = tempfile::tempdir().unwrap();
        write_log(
            dir.path(),
            "20261201-100000-aaaa",
            &[
                json!({"v": 1, "t": "2026-12-01T10:00:00.000Z", "ev": "session.start", "task": "one"}),
                json!({"ev": "llm.resp", "model": "m", "usage": {"prompt": 10, "completion": 2}}),
                json!({"ev": "turn.end", "reason": "done", "text": "ok"}),
            ],
        );
        let torn = write_log(
            dir.path(),
            "20261202-100000-bbbb",
            &[
                json!({"v": 1, "t": "2026-12-02T10:00:00.000Z", "ev": "session.start", "task": "two"}),
                json!({"ev": "llm.resp", "model": "m", "usage": {"prompt": 5, "completion": 1}}),
            ],
        );
        // A last line a kill cut short.
        let mut text = fs::read_to_string(&torn).unwrap();
        text.push_str("{\"v\":1,\"ev\":\"llm.re");
        fs::write(&torn, text).unwrap();
        let all = list(dir.path());
        assert_eq!(all.len(), 2);
        assert_eq!(
            (all[0].task.as_str(), all[0].status.as_str()),
            ("one", "done")
        );
        assert_eq!(all[1].status, "unfinished");
        assert_eq!(all[1].total().prompt, 5);
        assert_eq!(find(dir.path(), "20261202").unwrap(), torn);
        let e = find(dir.path(), "2026120").unwrap_err();
        assert!(e.contains("2 sessions start with"), "{e}");
        let e = find(dir.path(), "zzz").unwrap_err();
        assert!(e.contains("nib sessions"), "{e}");
        assert!(
            find(dir.path(), "")
                .unwrap()
                .ends_with("20261202-100000-bbbb/events.jsonl")
        );
    }
}
