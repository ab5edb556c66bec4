//! What the console reads from disk, read-only: the workspace's past
//! sessions (`.nib/sessions/<id>/events.jsonl`) as a list and as their
//! events, and a `nib swebench` output directory as a table of instances
//! (from each `<id>/summary.json`, or its `trajectory.json` while the
//! instance runs) with each trajectory. Everything is masked before a page
//! gets it (the server sends through `view::mask_json`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A name that is one plain path component (a session or instance id from
/// a URL), so a request cannot reach outside the directory it lists.
pub fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn sessions_dir(root: &Path) -> PathBuf {
    root.join(".nib").join("sessions")
}

/// The workspace's sessions, newest first: id, when it started, its first
/// task, how many events, how its last task ended.
pub fn sessions(root: &Path) -> Value {
    let mut rows = Vec::new();
    let Ok(entries) = std::fs::read_dir(sessions_dir(root)) else {
        return json!([]);
    };
    for entry in entries.flatten() {
        let id = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path().join("events.jsonl");
        if !plain_name(&id) || !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let (mut started, mut task, mut end, mut count) =
            (String::new(), String::new(), String::new(), 0);
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            count += 1;
            if started.is_empty() {
                started = v["t"].as_str().unwrap_or("").to_string();
            }
            match v["ev"].as_str() {
                Some("session.start") if task.is_empty() => {
                    task = v["task"].as_str().unwrap_or("").chars().take(200).collect();
                }
                Some("turn.end") => end = v["reason"].as_str().unwrap_or("").to_string(),
                _ => {}
            }
        }
        rows.push(json!({"id": id, "started": started, "task": task, "events": count, "end": end}));
    }
    rows.sort_by(|a, b| b["started"].as_str().cmp(&a["started"].as_str()));
    Value::Array(rows)
}

/// A past session's events (each line parsed; lines that do not parse are
/// given as `{"ev": "unreadable", "line": ...}`), or `None` when there is
/// no such session.
pub fn session_events(root: &Path, id: &str) -> Option<Value> {
    if !plain_name(id) {
        return None;
    }
    let text = std::fs::read_to_string(sessions_dir(root).join(id).join("events.jsonl")).ok()?;
    Some(events_of(&text))
}

fn events_of(text: &str) -> Value {
    Value::Array(
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|_| json!({"ev": "unreadable", "line": l}))
            })
            .collect(),
    )
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// A swebench output directory as a table: one row per instance
/// directory (instance, status, steps, tokens, cost, seconds), and whether
/// the run has ended (`run.json` written).
pub fn swebench(out: &Path) -> Value {
    let mut rows = Vec::new();
    if let Ok(entries) = std::fs::read_dir(out) {
        for entry in entries.flatten() {
            let id = entry.file_name().to_string_lossy().into_owned();
            if !plain_name(&id) || !entry.path().is_dir() {
                continue;
            }
            let dir = entry.path();
            let row = if let Some(s) = read_json(&dir.join("summary.json")) {
                json!({
                    "id": id,
                    "status": s["status"],
                    "steps": s["steps"],
                    "tokens": s["tokens"],
                    "cost": s["cost"],
                    "seconds": s["seconds"],
                    "trajectory": dir.join("trajectory.json").is_file(),
                })
            } else if let Some(t) = read_json(&dir.join("trajectory.json")) {
                let stats = &t["model_stats"];
                let tokens = stats["prompt_tokens"].as_u64().unwrap_or(0)
                    + stats["completion_tokens"].as_u64().unwrap_or(0);
                json!({
                    "id": id,
                    "status": t["status"].as_str().unwrap_or("running"),
                    "steps": t["steps"].as_array().map_or(0, Vec::len),
                    "tokens": tokens,
                    "cost": stats["cost"],
                    "seconds": t["seconds"],
                    "trajectory": true,
                })
            } else if dir.join("events.jsonl").is_file() {
                json!({"id": id, "status": "starting", "steps": 0, "tokens": 0, "cost": null, "seconds": null, "trajectory": false})
            } else {
                continue;
            };
            rows.push(row);
        }
    }
    rows.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    json!({
        "out": out.display().to_string(),
        "finished": out.join("run.json").is_file(),
        "rows": rows,
    })
}

/// An instance's trajectory, or `None` when it has none.
pub fn trajectory(out: &Path, id: &str) -> Option<Value> {
    if !plain_name(id) {
        return None;
    }
    read_json(&out.join(id).join("trajectory.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_urls_stay_inside() {
        assert!(plain_name("20261204-1903-ab12"));
        assert!(plain_name("django__django-11099"));
        for bad in ["", ".", "..", "../x", "a/b", ".nib", "a\\b", "a b"] {
            assert!(!plain_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_swebench_directory_reads_as_a_table() {
        let dir = tempfile::tempdir().unwrap();
        let done = dir.path().join("a__a-1");
        std::fs::create_dir_all(&done).unwrap();
        std::fs::write(
            done.join("summary.json"),
            r#"{"status": "submitted", "steps": 3, "tokens": 900, "cost": 0.01, "seconds": 2.5}"#,
        )
        .unwrap();
        let running = dir.path().join("b__b-2");
        std::fs::create_dir_all(&running).unwrap();
        std::fs::write(
            running.join("trajectory.json"),
            r#"{"status": "running", "steps": [{}, {}], "model_stats": {"prompt_tokens": 10, "completion_tokens": 5, "cost": null}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join(".work")).unwrap();
        let table = swebench(dir.path());
        let rows = table["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 2, "{table}");
        assert_eq!(rows[0]["status"], "submitted");
        assert_eq!(rows[0]["tokens"], 900);
        assert_eq!(rows[1]["status"], "running");
        assert_eq!(rows[1]["steps"], 2);
        assert_eq!(rows[1]["tokens"], 15);
        assert_eq!(table["finished"], false);
        assert!(trajectory(dir.path(), "b__b-2").is_some());
        assert!(trajectory(dir.path(), "../b__b-2").is_none());
    }
}
