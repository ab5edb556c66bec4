//! `nib swebench show ID [--out DIR]`: an instance's trajectory, readably:
//! the task, each step numbered with the model's text, its tool calls and
//! their results (the first lines of each output, each line trimmed), then
//! the exit status and the model stats.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::trajectory::{FORMAT, trim};
use crate::settings::UsageError;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The instance id.
    pub id: String,
    /// The run's output directory (default: the current directory).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Characters of each text and result shown (0: all).
    #[arg(long, default_value_t = 400)]
    pub width: usize,
}

pub fn run(args: ShowArgs) -> Result<ExitCode, UsageError> {
    let path = args.out.join(&args.id).join("trajectory.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(UsageError(missing(&args)));
        }
        Err(e) => return Err(UsageError(format!("cannot read {}: {e}", path.display()))),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "{}: not JSON ({e}); the file is cut or was edited by hand",
            path.display()
        ))
    })?;
    if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(UsageError(format!(
            "{}: not a trajectory of this nib (its format is {}, nib reads {FORMAT})",
            path.display(),
            value
                .get("format")
                .map_or("missing".into(), Value::to_string)
        )));
    }
    print!("{}", render(&value, args.width));
    Ok(ExitCode::SUCCESS)
}

/// What to say when there is no trajectory: which ids there are.
fn missing(args: &ShowArgs) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(&args.out)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| e.path().join("trajectory.json").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    let place = args.out.join(&args.id).join("trajectory.json");
    if ids.is_empty() {
        format!(
            "no trajectory {}: {} holds no instance trajectories; give the run's directory with --out",
            place.display(),
            args.out.display()
        )
    } else {
        let shown: Vec<&str> = ids.iter().take(20).map(String::as_str).collect();
        let more = if ids.len() > 20 { ", …" } else { "" };
        format!(
            "no trajectory {}: no instance {} in this run; its instances are {}{more}",
            place.display(),
            args.id,
            shown.join(", ")
        )
    }
}

fn cut(s: &str, width: usize) -> String {
    if width == 0 {
        s.to_string()
    } else {
        trim(s, width)
    }
}

/// Lines of a tool's output shown under its call: the first few, each
/// cut to `width`, and how many more there are.
fn output_lines(output: &str, width: usize) -> String {
    const SHOWN: usize = 8;
    let lines: Vec<&str> = output.lines().collect();
    let shown = if width == 0 { lines.len() } else { SHOWN };
    let mut out = String::new();
    for line in lines.iter().take(shown) {
        let _ = writeln!(out, "     │ {}", cut(line, width));
    }
    if lines.len() > shown {
        let _ = writeln!(out, "     │ … ({} more lines)", lines.len() - shown);
    }
    out
}

/// The trajectory as text.
pub fn render(v: &Value, width: usize) -> String {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} · {} · {}",
        s(v, "instance_id"),
        s(v, "model_name_or_path"),
        s(v, "status")
    );
    let task = s(v, "task");
    if !task.is_empty() {
        let _ = writeln!(out, "task: {}", cut(&task, width));
    }
    for note in v["notes"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "  {}", cut(note.as_str().unwrap_or(""), width));
    }
    for step in v["steps"].as_array().into_iter().flatten() {
        let usage = &step["usage"];
        // Calls the strategy made itself (a check's test run) with no
        // model reply: not a model step.
        let by_strategy = usage["prompt"].as_u64().unwrap_or(0) == 0
            && usage["completion"].as_u64().unwrap_or(0) == 0
            && s(step, "text").is_empty()
            && step["calls"]
                .as_array()
                .is_some_and(|c| !c.is_empty() && c.iter().all(|c| c["by"] == "strategy"));
        if by_strategy {
            out.push_str("\n[strategy] calls the strategy made itself\n");
        } else {
            let _ = write!(
                out,
                "\n[step {}] {} prompt + {} completion tokens",
                step["step"],
                usage["prompt"].as_u64().unwrap_or(0),
                usage["completion"].as_u64().unwrap_or(0)
            );
            if usage["estimated"].as_bool() == Some(true) {
                out.push_str(" (estimated)");
            }
            if let Some(c) = step["cost"].as_f64() {
                let _ = write!(out, ", ${c:.4}");
            }
            out.push('\n');
        }
        let reasoning = s(step, "reasoning");
        if !reasoning.is_empty() {
            let _ = writeln!(out, "  thinking: {}", cut(&reasoning, width));
        }
        let text = s(step, "text");
        if !text.is_empty() {
            let _ = writeln!(out, "  model: {}", cut(&text, width));
        }
        for (i, call) in step["calls"].as_array().into_iter().flatten().enumerate() {
            let shown = match call["positional"].as_str() {
                Some(p) if !p.is_empty() => p.to_string(),
                _ => format!(
                    "{} {} (did not parse)",
                    s(call, "name"),
                    call["raw_arguments"].as_str().unwrap_or("")
                ),
            };
            let _ = writeln!(out, "  {}. {}", i + 1, cut(&shown, width));
            let r = &call["result"];
            if r.is_null() {
                let _ = writeln!(out, "     (no result: the session stopped first)");
                continue;
            }
            let mark = if r["refused"].as_bool() == Some(true) {
                "refused"
            } else if r["ok"].as_bool() == Some(true) {
                "ok"
            } else {
                "failed"
            };
            match call["output"].as_str() {
                // An empty output (a call no after-tool hook saw): the
                // result's summary says more than nothing.
                Some(output) if !output.is_empty() => {
                    let _ = writeln!(out, "     {mark}:");
                    out.push_str(&output_lines(output, width));
                }
                _ => {
                    let _ = writeln!(out, "     {mark}: {}", cut(&s(r, "summary"), width));
                    let hint = s(r, "hint");
                    if !hint.is_empty() {
                        let _ = writeln!(out, "     {}", cut(&hint, width));
                    }
                }
            }
        }
        for note in step["notes"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "  strategy {}",
                cut(note.as_str().unwrap_or(""), width)
            );
        }
        if let Some(e) = step["error"].as_str() {
            let _ = writeln!(out, "  error: {}", cut(e, width));
        }
    }
    let stats = &v["model_stats"];
    let _ = writeln!(out, "\nstatus: {}", s(v, "status"));
    let message = s(v, "message");
    if !message.is_empty() {
        let _ = writeln!(out, "message: {}", cut(&message, width));
    }
    let _ = write!(
        out,
        "model: {} calls, {} prompt tokens ({} cached), {} completion tokens",
        stats["api_calls"].as_u64().unwrap_or(0),
        stats["prompt_tokens"].as_u64().unwrap_or(0),
        stats["cached_tokens"].as_u64().unwrap_or(0),
        stats["completion_tokens"].as_u64().unwrap_or(0)
    );
    if stats["tokens_estimated"].as_bool() == Some(true) {
        out.push_str(" (some estimated)");
    }
    match stats["cost"].as_f64() {
        Some(c) => {
            let _ = write!(out, ", cost ${c:.4}");
        }
        None => out.push_str(", no price for the model"),
    }
    out.push('\n');
    if let (Some(sec), Some(lines)) = (v["seconds"].as_f64(), v["patch_lines"].as_u64()) {
        let _ = writeln!(out, "took {sec:.1} s; patch: {lines} lines");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_strategys_own_call_is_not_shown_as_a_model_step() {
        let t = json!({"instance_id": "x", "status": "submitted", "steps": [
            {"step": 1, "text": "done", "usage": {"prompt": 10, "completion": 2}, "calls": []},
            {"step": 0, "text": "", "usage": {"prompt": 0, "completion": 0}, "calls": [
                {"name": "shell", "positional": "(shell \"pytest -q\")", "by": "strategy", "output": "",
                 "result": {"ok": false, "refused": false, "summary": "exit code: 1", "hint": ""}}
            ]}
        ]});
        let text = render(&t, 0);
        assert!(
            text.contains("[step 1] 10 prompt + 2 completion tokens"),
            "{text}"
        );
        assert!(
            text.contains("[strategy] calls the strategy made itself"),
            "{text}"
        );
        assert!(!text.contains("[step 0]"), "{text}");
        assert!(text.contains("failed: exit code: 1"), "{text}");
    }
}
