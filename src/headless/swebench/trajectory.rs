//! An instance's trajectory: `<id>/trajectory.json`, rewritten (to a
//! temporary file, then renamed) when a model reply comes, when a step is
//! over (its calls' outputs in) and when the instance ends, and `<id>/log.txt`, a line per thing that happened, for
//! a person to read; `nib swebench show ID` prints a trajectory.
//!
//! The trajectory is built from the session's events and the model's
//! stream: per step the reply's text and reasoning, its usage and cost,
//! each tool call (name, arguments, or the raw arguments when they did
//! not parse) with its result as the event log has it (ok, kind, the
//! first line, a failure's hint, the diff size) and its full output, and
//! what the strategy said. The full output comes from [`OUTPUT_HOOK`], an
//! after-tool hook every instance loads last, which emits each result's
//! text as a `swebench.output` event (the event log's own `tool.result`
//! carries only the first line). When the session ends, the conversation
//! the strategy hands back is added as `messages`, with the exit status
//! and the model stats.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::model::StreamEvent;
use crate::session::event::{ToolCall, ToolResult, Usage};
use crate::session::{Entry, Event};

/// The `format` of the files this version writes.
pub const FORMAT: &str = "nib-swebench-trajectory-1";

/// The hook that logs every tool result's text, as the model gets it.
pub const OUTPUT_HOOK: &str = r#";; nib swebench: each tool result's text, whole, for the instance's
;; trajectory (an event of its own kind); the result itself is unchanged.
(on "after-tool"
    (lambda (call result)
      (emit "swebench.output"
            (json-object "step" (unbox loop-step)
                         "id" (assoc-ref result "id" "")
                         "name" (assoc-ref result "name" "")
                         "text" (tool-text result)))
      #f))
"#;

/// The kind [`OUTPUT_HOOK`] emits.
const OUTPUT_EVENT: &str = "swebench.output";

#[derive(Default)]
struct Step {
    step: u64,
    text: String,
    reasoning: String,
    usage: Option<Usage>,
    finish: String,
    duration_ms: u64,
    cost: Option<f64>,
    calls: Vec<Call>,
    notes: Vec<String>,
    error: Option<String>,
}

struct Call {
    call: ToolCall,
    result: Option<ToolResult>,
    /// The result's whole text (from [`OUTPUT_HOOK`]).
    output: Option<String>,
}

/// Model stats of an instance so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModelStats {
    pub api_calls: u64,
    pub prompt: u64,
    pub cached: u64,
    pub completion: u64,
    /// Some count was nib's estimate, not the server's.
    pub estimated: bool,
    /// `None` when no price is known for the model.
    pub cost: Option<f64>,
}

impl ModelStats {
    pub fn tokens(&self) -> u64 {
        self.prompt + self.completion
    }

    pub fn to_json(self) -> Value {
        json!({
            "api_calls": self.api_calls,
            "prompt_tokens": self.prompt,
            "cached_tokens": self.cached,
            "completion_tokens": self.completion,
            "tokens_estimated": self.estimated,
            "cost": self.cost.map(|c| (c * 1e6).round() / 1e6),
            "cost_estimated": self.cost.is_some() && self.estimated,
        })
    }
}

/// How the instance ended, for the trajectory's last write.
pub struct Ending {
    pub status: &'static str,
    pub message: String,
    pub seconds: f64,
    pub patch_lines: usize,
    pub messages: Value,
}

/// One instance's trajectory, as it is built.
pub struct Trajectory {
    path: PathBuf,
    head: Value,
    task: String,
    steps: Vec<Step>,
    /// What the strategy said outside any step.
    notes: Vec<String>,
    pending_text: String,
    pending_reasoning: String,
    pub stats: ModelStats,
    log: Option<File>,
    /// Why the runner stopped the session (a limit it enforces): the
    /// session's "interrupted" error is logged as this instead.
    pub stop_reason: Option<String>,
}

impl Trajectory {
    /// A trajectory at `dir/trajectory.json`, its log at `dir/log.txt`;
    /// `head` is written as it is (instance id, model name, run config).
    pub fn new(dir: &Path, head: Value, priced: bool) -> Trajectory {
        let log = File::create(dir.join("log.txt")).ok();
        Trajectory {
            path: dir.join("trajectory.json"),
            head,
            task: String::new(),
            steps: Vec::new(),
            notes: Vec::new(),
            pending_text: String::new(),
            pending_reasoning: String::new(),
            stats: ModelStats {
                cost: priced.then_some(0.0),
                ..ModelStats::default()
            },
            log,
            stop_reason: None,
        }
    }

    fn step(&mut self, n: u64) -> &mut Step {
        let at = match self.steps.iter().position(|s| s.step == n) {
            Some(i) => i,
            None => {
                self.steps.push(Step {
                    step: n,
                    ..Step::default()
                });
                self.steps.len() - 1
            }
        };
        &mut self.steps[at]
    }

    fn current(&self) -> Option<u64> {
        self.steps.last().map(|s| s.step)
    }

    /// A piece of the model's stream: the text and reasoning of the reply
    /// under way.
    pub fn stream(&mut self, ev: &StreamEvent) {
        match ev {
            StreamEvent::TextDelta(t) => self.pending_text.push_str(t),
            StreamEvent::ReasoningDelta(t) => self.pending_reasoning.push_str(t),
            _ => {}
        }
    }

    /// An event of the session; `cost` is what this reply cost, for an
    /// `llm.resp`. Returns whether this is a moment to write the file: a
    /// reply came, or the next request starts (the step before is whole).
    pub fn see(&mut self, entry: &Entry, cost: Option<f64>) -> bool {
        let line = match (&entry.event, &self.stop_reason) {
            (Event::Error(e), Some(why)) if e.message.starts_with("interrupted") => {
                Some(format!("stopped: {why}"))
            }
            // The engine counts the step nib cancelled before its request.
            (Event::TurnEnd(_), Some(_)) => Some("end: stopped by nib swebench".to_string()),
            _ => log_line(&entry.event),
        };
        if let (Some(line), Some(f)) = (line, &mut self.log) {
            let _ = writeln!(f, "{} {line}", entry.t);
        }
        match &entry.event {
            Event::SessionStart(e) => self.task = e.task.clone(),
            Event::LlmReq(e) => {
                self.pending_text.clear();
                self.pending_reasoning.clear();
                // The step before is over, its outputs in: worth a write.
                let after_a_step = !self.steps.is_empty();
                self.step(e.step);
                return after_a_step;
            }
            Event::LlmResp(e) => {
                self.stats.api_calls += 1;
                self.stats.prompt += e.usage.prompt;
                self.stats.cached += e.usage.cached;
                self.stats.completion += e.usage.completion;
                self.stats.estimated |= e.usage.estimated;
                if let (Some(total), Some(c)) = (&mut self.stats.cost, cost) {
                    *total += c;
                }
                let text = std::mem::take(&mut self.pending_text);
                let reasoning = std::mem::take(&mut self.pending_reasoning);
                let step = self.step(e.step);
                step.text = e.raw_text.clone().unwrap_or(text);
                step.reasoning = reasoning;
                step.usage = Some(e.usage);
                step.finish = e.finish.clone();
                step.duration_ms = e.duration_ms;
                step.cost = cost;
                return true;
            }
            Event::ToolCall(e) => self.step(e.step).calls.push(Call {
                call: e.clone(),
                result: None,
                output: None,
            }),
            Event::ToolResult(e) => {
                let step = self.step(e.step);
                if let Some(slot) = step
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.call.call == e.call && c.result.is_none())
                {
                    slot.result = Some(e.clone());
                }
            }
            Event::Custom(c) if c.ev == OUTPUT_EVENT => {
                let field = |k: &str| c.fields.get(k).and_then(Value::as_str).unwrap_or("");
                let n = c.fields.get("step").and_then(Value::as_u64).unwrap_or(0);
                let (id, text) = (field("id"), field("text"));
                let step = self.step(n);
                if let Some(slot) = step
                    .calls
                    .iter_mut()
                    .find(|c| c.call.id == id && c.output.is_none())
                {
                    slot.output = Some(text.to_string());
                }
            }
            Event::Strategy(e) => {
                let note = format!("{}: {}", e.action, e.text);
                match self.current() {
                    Some(n) => self.step(n).notes.push(note),
                    None => self.notes.push(note),
                }
            }
            Event::Warning(e) => self.notes.push(format!("warning: {}", e.message)),
            Event::Error(e) => match e.step {
                Some(n) => self.step(n).error = Some(e.message.clone()),
                None => self.notes.push(format!("error: {}", e.message)),
            },
            _ => {}
        }
        false
    }

    pub fn to_json(&self, ending: Option<&Ending>) -> Value {
        let steps: Vec<Value> = self.steps.iter().map(step_json).collect();
        let mut out = json!({"format": FORMAT});
        if let (Value::Object(out), Value::Object(head)) = (&mut out, &self.head) {
            out.extend(head.clone());
        }
        out["status"] = json!(ending.map_or("running", |e| e.status));
        out["message"] = json!(ending.map(|e| e.message.as_str()));
        out["seconds"] = json!(ending.map(|e| (e.seconds * 10.0).round() / 10.0));
        out["patch_lines"] = json!(ending.map(|e| e.patch_lines));
        out["model_stats"] = self.stats.to_json();
        out["task"] = json!(self.task);
        out["notes"] = json!(self.notes);
        out["steps"] = json!(steps);
        out["messages"] = ending.map_or(Value::Null, |e| e.messages.clone());
        out
    }

    /// Writes the file whole: a temporary file, then a rename, so a reader
    /// never sees half of it.
    pub fn write(&self, ending: Option<&Ending>) -> Result<(), String> {
        let text = serde_json::to_string_pretty(&self.to_json(ending))
            .map_err(|e| format!("cannot encode the trajectory: {e}"))?;
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, text + "\n")
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// The last line of the log: how the instance ended.
    pub fn log_end(&mut self, line: &str) {
        if let Some(f) = &mut self.log {
            let _ = writeln!(
                f,
                "{} {line}",
                crate::session::rfc3339_millis(std::time::SystemTime::now())
            );
        }
    }
}

fn step_json(s: &Step) -> Value {
    let calls: Vec<Value> = s
        .calls
        .iter()
        .map(
            |Call {
                 call: c,
                 result,
                 output,
             }| {
                json!({
                    "id": c.id,
                    "name": c.name,
                    "positional": c.positional,
                    "args": c.args,
                    "raw_arguments": c.raw_arguments,
                    "by": c.by,
                    "output": output,
                    "result": result.as_ref().map(|r| json!({
                        "ok": r.ok,
                        "refused": r.refused,
                        "kind": r.kind,
                        "summary": r.summary,
                        "hint": r.hint,
                        "diff_size": r.diff_size,
                        "path": r.path,
                    })),
                })
            },
        )
        .collect();
    json!({
        "step": s.step,
        "text": s.text,
        "reasoning": s.reasoning,
        "finish": s.finish,
        "usage": s.usage,
        "duration_ms": s.duration_ms,
        "cost": s.cost,
        "calls": calls,
        "notes": s.notes,
        "error": s.error,
    })
}

/// A line of `log.txt` for the events a person follows.
pub fn log_line(event: &Event) -> Option<String> {
    Some(match event {
        Event::SessionStart(e) => format!(
            "start: {} ({}), strategy {}",
            e.model, e.provider, e.strategy
        ),
        Event::LlmResp(e) => format!(
            "step {}: {} tool call(s), {} prompt + {} completion tokens{}, {} ms",
            e.step,
            e.tool_calls,
            e.usage.prompt,
            e.usage.completion,
            if e.usage.estimated {
                " (estimated)"
            } else {
                ""
            },
            e.duration_ms
        ),
        Event::ToolCall(e) => {
            let shown = if e.positional.is_empty() {
                format!("{} (arguments did not parse)", e.name)
            } else {
                trim(&e.positional, 200)
            };
            format!("  call {}: {shown}", e.call)
        }
        Event::ToolResult(e) => {
            let mark = match (e.ok, e.refused) {
                (_, true) => "refused",
                (true, _) => "ok",
                (false, _) => "failed",
            };
            format!("    {mark}: {}", trim(&e.summary, 200))
        }
        Event::Strategy(e) => format!("strategy {}: {}", e.action, trim(&e.text, 300)),
        Event::Warning(e) => format!("warning: {}", e.message),
        Event::Error(e) => format!("error: {}", e.message),
        Event::TurnEnd(e) => format!("end: {} after {} steps", e.reason, e.step),
        _ => return None,
    })
}

/// The first `max` characters of `s`, on one line.
pub fn trim(s: &str, max: usize) -> String {
    let flat = s.replace('\n', "⏎");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut out: String = flat.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::event;

    fn entry(event: Event) -> Entry {
        Entry {
            t: "2026-12-01T00:00:00.000Z".into(),
            line: String::new(),
            event,
        }
    }

    #[test]
    fn a_step_gathers_its_reply_calls_and_results() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Trajectory::new(dir.path(), json!({"instance_id": "x"}), true);
        t.see(
            &entry(Event::LlmReq(event::LlmReq {
                step: 1,
                ..Default::default()
            })),
            None,
        );
        t.stream(&StreamEvent::TextDelta("Let me ".into()));
        t.stream(&StreamEvent::TextDelta("look.".into()));
        let usage = Usage {
            prompt: 100,
            completion: 10,
            ..Usage::default()
        };
        let resp = Event::LlmResp(event::LlmResp {
            step: 1,
            usage,
            tool_calls: 1,
            ..Default::default()
        });
        assert!(t.see(&entry(resp), Some(0.5)));
        let call = event::ToolCall {
            step: 1,
            call: 0,
            name: "fs-read".into(),
            positional: "(fs-read \"a\")".into(),
            ..Default::default()
        };
        t.see(&entry(Event::ToolCall(call)), None);
        let result = event::ToolResult {
            step: 1,
            call: 0,
            name: "fs-read".into(),
            ok: true,
            summary: "1\tx".into(),
            ..Default::default()
        };
        assert!(!t.see(&entry(Event::ToolResult(result)), None));
        let v = t.to_json(None);
        assert_eq!(v["format"], FORMAT);
        assert_eq!(v["instance_id"], "x");
        assert_eq!(v["status"], "running");
        assert_eq!(v["steps"][0]["text"], "Let me look.");
        assert_eq!(v["steps"][0]["calls"][0]["result"]["summary"], "1\tx");
        assert_eq!(v["model_stats"]["api_calls"], 1);
        assert_eq!(v["model_stats"]["cost"], 0.5);
        t.write(None).unwrap();
        let log = std::fs::read_to_string(dir.path().join("log.txt")).unwrap();
        assert!(
            log.contains("step 1: 1 tool call(s), 100 prompt + 10 completion tokens"),
            "{log}"
        );
        assert!(
            log.contains("call 0: (fs-read \"a\")") && log.contains("ok: 1\tx"),
            "{log}"
        );
        // The next request: step 1 is whole, a moment to write.
        let next = Event::LlmReq(event::LlmReq {
            step: 2,
            ..Default::default()
        });
        assert!(t.see(&entry(next), None));
    }
}
