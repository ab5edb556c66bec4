//! Calls and their results as events: `tool.call`, `guard`, `confirm`,
//! `tool.result` and `write`, in that order for each call.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::shared::Shared;
use crate::prim::schema::positional;
use crate::prim::{Arg, Call, ToolResult};
use crate::session::event::{self, Event};

/// A call as `tool.call` records it.
pub(super) struct Made<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// `None` when its arguments did not parse; the name is then all
    /// there is, with the arguments as received.
    pub call: Option<&'a Call>,
    pub raw_arguments: Option<String>,
    /// Who made it when not the model (`strategy`).
    pub by: Option<&'a str>,
}

impl Shared {
    /// `tool.call`: the call as made.
    pub(super) fn log_call(&self, step: u64, index: usize, made: Made<'_>) {
        let Made {
            id,
            name,
            call,
            raw_arguments,
            by,
        } = made;
        let _ = self.log.emit(&Event::ToolCall(event::ToolCall {
            step,
            call: index as u64,
            id: id.to_string(),
            name: name.to_string(),
            positional: call.map(positional).unwrap_or_default(),
            args: call.map_or(Value::Null, call_args),
            quirks: call.map_or(Vec::new(), |c| {
                c.quirks.iter().map(|q| q.to_string()).collect()
            }),
            by: by.map(str::to_string),
            raw_arguments,
        }));
    }

    pub(super) fn log_result(
        &self,
        step: u64,
        index: usize,
        name: &str,
        call: Option<&Call>,
        r: &ToolResult,
    ) {
        let path = call
            .map(|c| c.arg("path").as_str().to_string())
            .filter(|p| !p.is_empty());
        self.log_outcome(step, index, name, path, call, r);
    }

    pub(super) fn log_outcome(
        &self,
        step: u64,
        index: usize,
        name: &str,
        path: Option<String>,
        call: Option<&Call>,
        r: &ToolResult,
    ) {
        let (step, call_no) = (step, index as u64);
        let _ = self.log.emit(&Event::Guard(event::GuardDecision {
            step,
            call: call_no,
            decision: r.decision.to_string(),
            reasons: r
                .reasons
                .iter()
                .map(|x| event::Reason {
                    rule: x.rule.to_string(),
                    param: x.param.clone(),
                    message: x.message.clone(),
                    line: x.line.map(|l| l as u64),
                })
                .collect(),
        }));
        if let Some(c) = &r.confirm {
            if !c.approved {
                self.refused_confirms.fetch_add(1, Ordering::Relaxed);
            }
            let _ = self.log.emit(&Event::Confirm(event::Confirm {
                step,
                call: call_no,
                kind: c.kind.to_string(),
                answer: if c.approved { "yes" } else { "no" }.to_string(),
                by: if self.host.is_unattended() {
                    "policy"
                } else {
                    "user"
                }
                .to_string(),
            }));
        }
        let (edits, edits_form) = match call.filter(|c| c.decl.name == "fs-edit") {
            Some(c) => {
                let list = c.arg("edits").as_list().len();
                let form = if c.quirks.contains(&"list-as-string") {
                    "list-as-string"
                } else if list > 0 {
                    "list"
                } else {
                    "single"
                };
                (Some(list.max(1) as u64), Some(form.to_string()))
            }
            None => (None, None),
        };
        let _ = self.log.emit(&Event::ToolResult(event::ToolResult {
            step,
            call: call_no,
            name: name.to_string(),
            ok: r.ok,
            refused: r.refused,
            kind: r.kind.map(str::to_string),
            summary: summary(name, &r.text),
            // A failure's hint (the lines after the first), for clients.
            hint: if r.ok {
                String::new()
            } else {
                r.text
                    .lines()
                    .skip(1)
                    .take(6)
                    .collect::<Vec<_>>()
                    .join("\n")
            },
            diff_size: r.diff.lines().count() as u64,
            path: path.clone(),
            edits,
            edits_form,
        }));
        if r.ok && !r.diff.is_empty() {
            let _ = self.log.emit(&Event::Write(event::Write {
                path,
                version: r.version.clone(),
            }));
        }
    }
}

/// A result in one line, for the log and the clients' cards: the first
/// line, except for a command, whose last lines say how it ended (its exit
/// code, and the last thing it printed, such as a test runner's verdict).
pub(super) fn summary(name: &str, text: &str) -> String {
    let lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("note:"));
    if name == "shell" {
        let mut rev = lines.rev();
        if let Some(last) = rev
            .next()
            .filter(|l| l.starts_with("exit code") || l.starts_with("killed by"))
        {
            return match rev.next() {
                Some(before) => format!("{before} ({last})"),
                None => last.to_string(),
            };
        }
        return text.lines().next().unwrap_or_default().to_string();
    }
    text.lines().next().unwrap_or_default().to_string()
}

/// A call's arguments by name, as JSON, for the event log.
fn call_args(call: &Call) -> Value {
    let mut map = serde_json::Map::new();
    for (p, a) in call.decl.params.iter().zip(&call.args) {
        map.insert(p.name.into(), arg_json(a));
    }
    Value::Object(map)
}

fn arg_json(arg: &Arg) -> Value {
    match arg {
        Arg::Str(s) => Value::String(s.clone()),
        Arg::Int(n) => json!(n),
        Arg::Bool(b) => Value::Bool(*b),
        Arg::List(items) => Value::Array(
            items
                .iter()
                .map(|item| {
                    Value::Object(item.iter().map(|(k, v)| (k.clone(), arg_json(v))).collect())
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn a_command_is_summed_up_by_how_it_ended() {
        let unittest = "....\n----------------------------------------------------------------------\nRan 4 tests in 0.001s\n\nOK\nexit code: 0\n";
        assert_eq!(summary("shell", unittest), "OK (exit code: 0)");
        let noted = "hi\nexit code: 0\nnote: this command had network access\n";
        assert_eq!(summary("shell", noted), "hi (exit code: 0)");
        assert_eq!(summary("shell", "exit code: 3\n"), "exit code: 3");
        assert_eq!(
            summary("shell", "the command timed out after 1 s"),
            "the command timed out after 1 s"
        );
        assert_eq!(summary("fs-read", "1\tfirst\n2\tsecond\n"), "1\tfirst");
    }
}
