//! Tool calls a model wrote as text, for servers that pass the model's
//! words through without a tool-call parser (llama.cpp without `--jinja`,
//! vLLM without `--tool-call-parser`, Ollama with a template that has no
//! tools). Read only when the reply has no native tool calls, the request
//! offered tools, and [`ModelConfig::text_tool_calls`](super::ModelConfig)
//! is on.
//!
//! The forms, in the order they are tried:
//!
//! 1. `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, as Hermes
//!    and Qwen models write them (any number; the last one may lack its
//!    closing tag, as when the server stops at it). Inside the tag also
//!    Qwen3-Coder's `<function=NAME><parameter=KEY>value</parameter>…`.
//!    A tag is taken as a call whatever the name, and even when its JSON is
//!    broken (the arguments then stay the raw text, so the model is told
//!    they do not parse, rather than its call passing for prose).
//! 2. A fenced block (```` ```json ````, ```` ``` ````, ```` ```tool_call ````)
//!    holding one such object, or a list of them.
//! 3. The whole reply being one such object or list.
//!
//! Forms 2 and 3 count only when the JSON parses and every name is one of
//! the offered tools: a model showing a JSON example is not calling.
//! `arguments` (or `parameters`, as Llama models write) is kept as the
//! exact text the model wrote; a string holding JSON is unwrapped.

use serde::Deserialize;
use serde_json::value::RawValue;

/// A call read from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextCall {
    pub name: String,
    /// The arguments as the model wrote them (raw, maybe not JSON).
    pub arguments: String,
}

/// What [`parse`] found: the calls, and the text without them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub calls: Vec<TextCall>,
    pub text: String,
}

#[derive(Deserialize)]
struct WireCall<'a> {
    name: String,
    #[serde(borrow, alias = "parameters", alias = "input")]
    arguments: Option<&'a RawValue>,
}

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// The tool calls written in `text`, if any; `tools` are the names the
/// request offered.
pub fn parse(text: &str, tools: &[&str]) -> Option<Parsed> {
    tagged(text)
        .or_else(|| fenced(text, tools))
        .or_else(|| whole(text, tools))
}

fn tagged(text: &str) -> Option<Parsed> {
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut pos = 0;
    while let Some(start) = text[pos..].find(OPEN).map(|i| pos + i) {
        rest.push_str(&text[pos..start]);
        let inner_start = start + OPEN.len();
        let (inner, end) = match text[inner_start..].find(CLOSE) {
            Some(i) => (
                &text[inner_start..inner_start + i],
                inner_start + i + CLOSE.len(),
            ),
            None => (&text[inner_start..], text.len()),
        };
        if let Some(call) = tag_call(inner) {
            calls.push(call);
        } else {
            // Not a call after all: keep it as text.
            rest.push_str(&text[start..end]);
        }
        pos = end;
    }
    rest.push_str(&text[pos..]);
    (!calls.is_empty()).then(|| Parsed {
        calls,
        text: tidy(&rest),
    })
}

/// One tag's content: JSON (perhaps in a fence), Qwen3-Coder's XML-ish
/// form, or broken JSON with a recognisable name.
fn tag_call(inner: &str) -> Option<TextCall> {
    let inner = unfence(inner.trim());
    if let Some(calls) = json_calls(inner)
        && let [call] = &calls[..]
    {
        return Some(call.clone());
    }
    if let Some(call) = function_form(inner) {
        return Some(call);
    }
    broken_json(inner)
}

/// `{"name": "x", "arguments": …` that does not parse: the name, and the
/// arguments' raw text.
fn broken_json(inner: &str) -> Option<TextCall> {
    if !inner.starts_with('{') {
        return None;
    }
    let after = &inner[inner.find("\"name\"")? + 6..];
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let after = after.strip_prefix('"')?;
    let name = &after[..after.find('"')?];
    if name.is_empty() {
        return None;
    }
    let arguments = ["\"arguments\"", "\"parameters\""]
        .iter()
        .find_map(|k| inner.find(k).map(|i| &inner[i + k.len()..]))
        .and_then(|a| a.trim_start().strip_prefix(':'))
        .map(|a| {
            let a = a.trim();
            // Drop the call object's own closing brace.
            a.strip_suffix('}').unwrap_or(a).trim_end().to_string()
        })
        .unwrap_or_default();
    Some(TextCall {
        name: name.to_string(),
        arguments,
    })
}

/// `<function=NAME><parameter=KEY>value</parameter>…</function>`. Values
/// that are JSON numbers, booleans, lists or objects are taken as such;
/// others are strings.
fn function_form(inner: &str) -> Option<TextCall> {
    let body = inner.strip_prefix("<function=")?;
    let name_end = body.find('>')?;
    let name = body[..name_end].trim();
    if name.is_empty() {
        return None;
    }
    let mut args = serde_json::Map::new();
    let mut rest = &body[name_end + 1..];
    while let Some(i) = rest.find("<parameter=") {
        let p = &rest[i + "<parameter=".len()..];
        let key_end = p.find('>')?;
        let key = p[..key_end].trim().to_string();
        let value_and_more = &p[key_end + 1..];
        let value_end = value_and_more
            .find("</parameter>")
            .or_else(|| value_and_more.find("<parameter="))
            .or_else(|| value_and_more.find("</function>"))
            .unwrap_or(value_and_more.len());
        let raw = &value_and_more[..value_end];
        let raw = raw.strip_prefix('\n').unwrap_or(raw);
        let raw = raw.strip_suffix('\n').unwrap_or(raw);
        let value = match serde_json::from_str::<serde_json::Value>(raw) {
            Ok(v) if !v.is_string() => v,
            _ => serde_json::Value::String(raw.to_string()),
        };
        args.insert(key, value);
        rest = &value_and_more[value_end..];
    }
    Some(TextCall {
        name: name.to_string(),
        arguments: serde_json::Value::Object(args).to_string(),
    })
}

fn fenced(text: &str, tools: &[&str]) -> Option<Parsed> {
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut pos = 0;
    while let Some(open) = text[pos..].find("```").map(|i| pos + i) {
        let info_end = text[open + 3..].find('\n').map(|i| open + 3 + i)?;
        let info = text[open + 3..info_end].trim();
        let (close, end) = match text[info_end..].find("```") {
            Some(i) => (info_end + i, info_end + i + 3),
            // A fence never closed (small models often stop there): the
            // block runs to the end, and counts only as whole JSON.
            None => (text.len(), text.len()),
        };
        let block = &text[info_end + 1..close];
        let wanted = matches!(info, "" | "json" | "tool_call" | "tool_code" | "jsonc");
        match json_calls(block.trim()) {
            Some(found) if wanted && known(&found, tools) => {
                rest.push_str(&text[pos..open]);
                calls.extend(found);
            }
            _ => rest.push_str(&text[pos..end]),
        }
        pos = end;
    }
    rest.push_str(&text[pos..]);
    (!calls.is_empty()).then(|| Parsed {
        calls,
        text: tidy(&rest),
    })
}

fn whole(text: &str, tools: &[&str]) -> Option<Parsed> {
    let calls = json_calls(text.trim())?;
    known(&calls, tools).then(|| Parsed {
        calls,
        text: String::new(),
    })
}

fn known(calls: &[TextCall], tools: &[&str]) -> bool {
    !calls.is_empty() && calls.iter().all(|c| tools.contains(&c.name.as_str()))
}

/// One call object or a list of them, when `s` is exactly that JSON.
fn json_calls(s: &str) -> Option<Vec<TextCall>> {
    if s.starts_with('[') {
        let list: Vec<WireCall> = serde_json::from_str(s).ok()?;
        return Some(list.into_iter().map(text_call).collect());
    }
    if !s.starts_with('{') {
        return None;
    }
    let call: WireCall = serde_json::from_str(s).ok()?;
    Some(vec![text_call(call)])
}

fn text_call(c: WireCall) -> TextCall {
    let arguments = match c.arguments {
        None => "{}".to_string(),
        Some(raw) => match serde_json::from_str::<String>(raw.get()) {
            // Arguments given as a string of JSON: the string's content.
            Ok(inner) => inner,
            Err(_) => raw.get().to_string(),
        },
    };
    TextCall {
        name: c.name,
        arguments,
    }
}

/// The inside of a fence, if `s` is one fenced block.
fn unfence(s: &str) -> &str {
    let Some(body) = s.strip_prefix("```") else {
        return s;
    };
    let Some(nl) = body.find('\n') else {
        return s;
    };
    body[nl + 1..]
        .trim_end()
        .strip_suffix("```")
        .map_or(s, str::trim)
}

/// Text left once the calls are taken out: blank runs collapsed, trimmed.
fn tidy(s: &str) -> String {
    let mut out = String::new();
    let mut blank = 0;
    for line in s.trim().lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["fs-read", "fs-edit"];

    fn call(name: &str, arguments: &str) -> TextCall {
        TextCall {
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn tags_hermes_style_with_text_around() {
        let text = "Let me look.\n<tool_call>\n{\"name\": \"fs-read\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>\n<tool_call>{\"name\":\"zz\",\"arguments\":{}}</tool_call>";
        let p = parse(text, TOOLS).unwrap();
        assert_eq!(
            p.calls,
            vec![call("fs-read", r#"{"path": "a.py"}"#), call("zz", "{}")]
        );
        assert_eq!(p.text, "Let me look.");
    }

    #[test]
    fn an_unclosed_last_tag_and_broken_json_still_are_calls() {
        let p = parse(
            r#"<tool_call>{"name": "fs-read", "arguments": {"path": "a}"#,
            TOOLS,
        )
        .unwrap();
        assert_eq!(p.calls, vec![call("fs-read", r#"{"path": "a"#)]);
        let p = parse(
            "<tool_call>{\"name\": \"fs-read\", \"arguments\": {\"path\": \"a\"}}",
            TOOLS,
        )
        .unwrap();
        assert_eq!(p.calls, vec![call("fs-read", r#"{"path": "a"}"#)]);
    }

    #[test]
    fn qwen3_coder_function_form() {
        let text = "<tool_call>\n<function=fs-read>\n<parameter=path>\nsrc/a.rs\n</parameter>\n<parameter=start>\n10\n</parameter>\n</function>\n</tool_call>";
        let p = parse(text, TOOLS).unwrap();
        assert_eq!(
            p.calls,
            vec![call("fs-read", r#"{"path":"src/a.rs","start":10}"#)]
        );
    }

    #[test]
    fn a_fence_left_open_still_holds_a_call() {
        let text =
            "Reading it.\n```json\n{\"name\": \"fs-read\", \"arguments\": {\"path\": \"x\"}}\n";
        let got = parse(text, TOOLS).expect("a call");
        assert_eq!(got.calls[0].name, "fs-read");
        assert_eq!(got.text, "Reading it.");
        // Half a JSON object is no call.
        assert_eq!(
            parse("```json\n{\"name\": \"fs-read\", \"argu", TOOLS),
            None
        );
    }

    #[test]
    fn fences_need_a_known_name() {
        let text = "I will edit it:\n```json\n{\"name\": \"fs-edit\", \"parameters\": {\"path\": \"x\"}}\n```\nDone.";
        let p = parse(text, TOOLS).unwrap();
        assert_eq!(p.calls, vec![call("fs-edit", r#"{"path": "x"}"#)]);
        assert_eq!(p.text, "I will edit it:\n\nDone.");
        let example = "A config looks like:\n```json\n{\"name\": \"demo\", \"arguments\": {}}\n```";
        assert_eq!(parse(example, TOOLS), None);
        assert_eq!(parse("```rust\nfn main() {}\n```", TOOLS), None);
    }

    #[test]
    fn the_whole_reply_as_json_and_string_arguments() {
        let p = parse(
            r#" {"name": "fs-read", "arguments": "{\"path\": \"b\"}"} "#,
            TOOLS,
        )
        .unwrap();
        assert_eq!(p.calls, vec![call("fs-read", r#"{"path": "b"}"#)]);
        assert_eq!(p.text, "");
        assert_eq!(parse("just words", TOOLS), None);
        assert_eq!(parse(r#"{"name": "other"}"#, TOOLS), None);
    }
}
