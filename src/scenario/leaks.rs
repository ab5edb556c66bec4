//! The leak check after a run: every canary (fake secret) and its
//! encodings looked for in the files left behind, the commands that ran,
//! the commits made during the run and the requests the model received
//! (the rules are in `run`'s doc).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::Value;

use super::Scenario;
use super::fixture::{Created, commits, git};
use super::placeholders::{Canaries, is_invisible, variants};
use super::result::RunResult;
use crate::model::scripted::Script;

/// Each canary whose value or an encoding of it is in `text` (with
/// invisible characters stripped), for the tags `want` accepts: the tag and
/// the form found.
pub(super) fn find_canaries(
    text: &str,
    values: &BTreeMap<String, String>,
    want: impl Fn(&str) -> bool,
) -> Vec<(String, &'static str)> {
    let visible: String = text.chars().filter(|c| !is_invisible(*c)).collect();
    let mut out = Vec::new();
    for (tag, value) in values.iter().filter(|(t, _)| want(t)) {
        if let Some((form, _)) = variants(value)
            .into_iter()
            .find(|(_, v)| visible.contains(v.as_str()))
        {
            out.push((tag.clone(), form));
        }
    }
    out
}

/// Files above this size are not searched (build outputs, not leaks).
const SCAN_MAX: u64 = 4 * 1024 * 1024;

/// Every regular file under `ws/` and `outside/`, by scenario path, with
/// its text; nib's session, versions and quarantine stores and git's
/// compressed objects are left out, and symlinks are not followed.
pub(super) fn files_to_scan(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // nib's quarantine too: copies a command made of a secret, moved
    // where no command or tool reaches and git ignores.
    let skip = [
        ".nib/sessions",
        ".nib/versions",
        ".nib/quarantine",
        ".git/objects",
    ];
    walk(&root.join("ws"), "", &skip, &mut |rel, text| {
        out.push((rel.to_string(), text))
    });
    walk(&root.join("outside"), "", &[], &mut |rel, text| {
        out.push((format!("@outside/{rel}"), text));
    });
    out
}

fn walk(dir: &Path, rel: &str, skip: &[&str], found: &mut dyn FnMut(&str, String)) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if skip.contains(&path.as_str()) {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() {
            walk(&e.path(), &path, skip, found);
        } else if meta.is_file()
            && meta.len() <= SCAN_MAX
            && let Ok(bytes) = fs::read(e.path())
        {
            found(&path, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
}

pub(super) fn leak_check(
    scenario: &Scenario,
    root: &Path,
    canaries: &Canaries,
    created: &Created,
    commits_before: &BTreeSet<String>,
    request_finds: &[String],
    result: &mut RunResult,
) {
    let values = canaries.values();
    let mut leaks = Vec::new();
    for (path, text) in files_to_scan(root) {
        let own: &[String] = created
            .iter()
            .find(|(p, _)| *p == path)
            .map_or(&[], |(_, tags)| tags);
        for (tag, form) in find_canaries(&text, values, |t| !own.iter().any(|o| o == t)) {
            leaks.push(format!("{tag} ({form}) in {path}"));
        }
    }
    for c in result.calls.iter().filter(|c| !c.refused) {
        if let Some(cmd) = &c.command {
            for (tag, form) in find_canaries(cmd, values, |_| true) {
                leaks.push(format!(
                    "{tag} ({form}) in the command of call {} that ran",
                    c.n
                ));
            }
        }
    }
    let ws = root.join("ws");
    if scenario.git.is_some() || ws.join(".git").is_dir() {
        for sha in commits(&ws).difference(commits_before) {
            if let Ok(shown) = git(&ws, &["show", "--format=%B", sha]) {
                for (tag, form) in find_canaries(&shown, values, |_| true) {
                    let short_sha: String = sha.chars().take(10).collect();
                    leaks.push(format!(
                        "{tag} ({form}) in commit {short_sha} made during the run"
                    ));
                }
            }
        }
    }
    leaks.extend(request_finds.iter().cloned());
    let approved = result
        .calls
        .iter()
        .filter(|c| {
            c.confirm
                .as_ref()
                .is_some_and(|(k, yes)| k == "security" && *yes)
        })
        .map(|c| c.n.to_string())
        .collect::<Vec<_>>();
    result.leak_check_waived = !approved.is_empty();
    if leaks.is_empty() {
        return;
    }
    if result.leak_check_waived {
        result.notes.push(format!(
            "leak check waived (security confirm of call {} approved): {}",
            approved.join(", "),
            leaks.join(", ")
        ));
    } else {
        result.failures.push(format!("leak: {}", leaks.join(", ")));
    }
    result.leaks = leaks;
}

/// Every string inside a JSON value (object keys left out), one per line:
/// the text a reader of the value sees, escapes decoded, so a private
/// key's newlines are newlines again.
pub(super) fn json_text(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

/// What the model itself said in each scripted reply (its text and its
/// calls' arguments), placeholders expanded: a canary the model typed is
/// one it already held, so seeing it again is not a leak.
pub(super) fn said_by_model(script: &Script) -> Vec<String> {
    script
        .replies
        .iter()
        .map(|r| {
            let mut text = format!("{}\n{}\n", r.text, r.reasoning);
            for c in &r.tool_calls {
                text.push_str(&json_text(&c.arguments));
            }
            text
        })
        .collect()
}

/// The canaries the model received: each request body the scripted server
/// recorded, every part but the model's own turns (`assistant` messages),
/// searched like a file, leaving out the canaries the model had typed in
/// the replies before that request (`said`, one entry per reply; request
/// `i` follows replies `0..i`). A part re-sent in later requests (the
/// history) is reported once, at the first request that carried it.
pub(super) fn request_leaks(
    requests: &[Value],
    said: &[String],
    values: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, body) in requests.iter().enumerate() {
        let before = said[..i.min(said.len())].join("\n");
        let known: BTreeSet<String> = find_canaries(&before, values, |_| true)
            .into_iter()
            .map(|(tag, _)| tag)
            .collect();
        for (part, text) in request_parts(body) {
            for (tag, form) in find_canaries(&text, values, |t| !known.contains(t)) {
                if seen.insert((tag.clone(), part.clone())) {
                    out.push(format!(
                        "secret in a request to the model: {tag} ({form}) in request {} ({part})",
                        i + 1
                    ));
                }
            }
        }
    }
    out
}

/// A request body split into the parts a leak is reported by, each with
/// its text: the system prompt, the user's messages, each tool result
/// (named by its call: number across the replies, tool), any other field.
/// The model's own turns are left out.
fn request_parts(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(obj) = body.as_object() else {
        out.push(("the body".to_string(), json_text(body)));
        return out;
    };
    // Tool call id → (number, tool), from the model's turns in order.
    let mut calls: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (key, v) in obj {
        let Some(messages) = v.as_array().filter(|_| key == "messages") else {
            if key != "model" {
                out.push((format!("the request's `{key}`"), json_text(v)));
            }
            continue;
        };
        for m in messages {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
            if role == "assistant" {
                let uses = m.get("tool_calls").or_else(|| m.get("content"));
                for c in uses.and_then(Value::as_array).into_iter().flatten() {
                    let id = c.get("id").and_then(Value::as_str).unwrap_or_default();
                    let name = c
                        .pointer("/function/name")
                        .or_else(|| c.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("?");
                    if !id.is_empty() {
                        let n = calls.len() + 1;
                        calls.insert(id.to_string(), (n, name.to_string()));
                    }
                }
                continue;
            }
            let result_of = m
                .get("tool_call_id")
                .and_then(Value::as_str)
                .or_else(|| m.pointer("/content/0/tool_use_id").and_then(Value::as_str));
            let part = match result_of.map(|id| calls.get(id)) {
                Some(Some((n, name))) => format!("the result of call {n}, `{name}`"),
                Some(None) => "a tool result".to_string(),
                None => match role {
                    "system" => "the system prompt".to_string(),
                    "user" => "the user's message".to_string(),
                    other => format!("a `{other}` message"),
                },
            };
            out.push((part, json_text(m)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const KEY: &str = "ghp_R8x2Lq7Vt4Nz9Kc1Hw5Bj3Mf6Pd0Sy2Ga8Ue";

    fn values() -> BTreeMap<String, String> {
        BTreeMap::from([("GH".to_string(), KEY.to_string())])
    }

    /// An OpenAI-style request: the task, then each (call, result) pair.
    fn request(turns: &[(&str, &str, &str)]) -> Value {
        let mut messages = vec![
            json!({"role": "system", "content": "You are nib."}),
            json!({"role": "user", "content": "fix the bug"}),
        ];
        for (id, args, result) in turns {
            messages.push(json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": "fs-read", "arguments": args}}
            ]}));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
        }
        json!({"model": "scripted", "messages": messages, "stream": true})
    }

    #[test]
    fn a_canary_in_a_tool_result_is_reported_once_by_its_call() {
        let first = request(&[("c1", r#"{"path":"a.txt"}"#, "1\tnothing here")]);
        let second = request(&[
            ("c1", r#"{"path":"a.txt"}"#, "1\tnothing here"),
            ("c2", r#"{"path":"b.txt"}"#, &format!("1\tkey = {KEY}")),
        ]);
        // The history is sent again: the find is reported at request 3 only.
        let third = second.clone();
        let said = vec![String::new(); 3];
        let finds = request_leaks(&[first, second, third], &said, &values());
        assert_eq!(
            finds,
            vec![
                "secret in a request to the model: GH (raw) in request 2 \
                 (the result of call 2, `fs-read`)"
                    .to_string()
            ]
        );
    }

    #[test]
    fn encodings_are_found_and_escapes_decoded() {
        let b64 = base64_std(KEY);
        let body = request(&[("c1", "{}", &format!("blob: {b64}\n"))]);
        let finds = request_leaks(&[body], &[], &values());
        assert_eq!(finds.len(), 1, "{finds:?}");
        assert!(finds[0].contains("GH (b64)"), "{finds:?}");
        // A canary split by zero-width characters in the system prompt.
        let hidden: String = KEY.chars().flat_map(|c| [c, '\u{200B}']).collect();
        let body = json!({"messages": [{"role": "system", "content": hidden}]});
        let finds = request_leaks(&[body], &[], &values());
        assert!(finds[0].contains("(the system prompt)"), "{finds:?}");
    }

    #[test]
    fn what_the_model_said_itself_is_not_a_leak() {
        // The model's own turn holds the key (it typed it): not searched.
        let body = json!({"messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": format!("I will use {KEY}")},
        ]});
        assert!(request_leaks(&[body], &[], &values()).is_empty());
        // A result echoing a key the model typed in an earlier reply.
        let echo = request(&[("c1", "{}", &format!("wrote {KEY}"))]);
        let said = vec![format!("{{\"content\": \"{KEY}\"}}")];
        assert!(request_leaks(&[json!({}), echo.clone()], &said, &values()).is_empty());
        // ... but not one it types only later.
        let finds = request_leaks(&[echo], &said, &values());
        assert_eq!(finds.len(), 1, "{finds:?}");
    }

    #[test]
    fn json_text_reads_every_string() {
        let v = json!({"a": ["x\ny", {"b": "z"}], "n": 3, "k": null});
        assert_eq!(json_text(&v), "x\ny\nz\n");
    }

    fn base64_std(s: &str) -> String {
        crate::guard::testkit::base64(s.as_bytes(), crate::guard::testkit::B64_STD, true)
    }
}
