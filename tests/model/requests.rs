//! What the client sends: the body and headers of a request with tools and
//! a tool round trip, in each protocol's shape; endpoints; provider names.

use nib::model::scripted::ScriptedReply;
use nib::model::{Client, Message, ModelConfig, Provider, Request, ToolCall};
use nib::prim::schema::tool_schema;
use nib::prim::table::{FS_EDIT, FS_READ};
use serde_json::{Value, json};

use crate::support::{MODEL, call, config, server};

fn conversation() -> Request {
    Request {
        max_tokens: None,
        system: "You are nib.".into(),
        messages: vec![
            Message::User("Fix the bug.".into()),
            Message::Assistant {
                text: "Reading.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "fs-read".into(),
                        arguments: r#"{"path":"a.rs"}"#.into(),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "fs-read".into(),
                        arguments: r#"{"path": "b.rs""#.into(), // broken JSON
                    },
                ],
            },
            Message::ToolResult {
                call_id: "call_1".into(),
                name: "fs-read".into(),
                content: "fn a() {}".into(),
                is_error: false,
            },
            Message::ToolResult {
                call_id: "call_2".into(),
                name: "fs-read".into(),
                content: "arguments are not valid JSON".into(),
                is_error: true,
            },
            Message::User("Go on.".into()),
        ],
        tools: vec![tool_schema(&FS_READ), tool_schema(&FS_EDIT)],
    }
}

/// Sends `conversation()` and returns the body and headers the server got.
fn sent(provider: Provider, key: Option<&str>) -> (Value, nib::model::scripted::RecordedRequest) {
    let srv = server(vec![ScriptedReply::text("ok")]);
    let client = Client::new(ModelConfig {
        api_key: key.map(String::from),
        ..config(&srv, provider)
    })
    .expect("client");
    let req = conversation();
    call(&client, &req).0.expect("reply");
    let recorded = srv.recorded();
    assert_eq!(recorded.len(), 1);
    let rec = recorded[0].clone();
    assert_eq!(
        rec.body,
        client.request_body(&req),
        "request_body is what is sent"
    );
    assert_eq!(rec.method, "POST");
    assert_eq!(rec.header("content-type"), Some("application/json"));
    (rec.body.clone(), rec)
}

fn function_tools() -> Value {
    json!([
        {"type": "function", "function": tool_schema(&FS_READ)},
        {"type": "function", "function": tool_schema(&FS_EDIT)},
    ])
}

#[test]
fn ollama_request() {
    let (body, rec) = sent(Provider::Ollama, None);
    assert_eq!(rec.path, "/api/chat");
    assert_eq!(rec.header("authorization"), None);
    let expected = json!({
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are nib."},
            {"role": "user", "content": "Fix the bug."},
            {"role": "assistant", "content": "Reading.", "tool_calls": [
                {"id": "call_1", "function": {"name": "fs-read", "arguments": {"path": "a.rs"}}},
                {"id": "call_2", "function": {"name": "fs-read", "arguments": {}}},
            ]},
            {"role": "tool", "tool_name": "fs-read", "tool_call_id": "call_1", "content": "fn a() {}"},
            {"role": "tool", "tool_name": "fs-read", "tool_call_id": "call_2",
             "content": "arguments are not valid JSON"},
            {"role": "user", "content": "Go on."},
        ],
        "stream": true,
        "options": {"num_ctx": 8192, "num_predict": 1000},
        "tools": function_tools(),
    });
    assert_eq!(body, expected);
}

#[test]
fn openai_request() {
    let (body, rec) = sent(Provider::OpenAi, Some("sk-test"));
    assert_eq!(rec.path, "/v1/chat/completions");
    assert_eq!(rec.header("authorization"), Some("Bearer sk-test"));
    let expected = json!({
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are nib."},
            {"role": "user", "content": "Fix the bug."},
            {"role": "assistant", "content": "Reading.", "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "fs-read", "arguments": "{\"path\":\"a.rs\"}"}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "fs-read", "arguments": "{\"path\": \"b.rs\""}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "fn a() {}"},
            {"role": "tool", "tool_call_id": "call_2", "content": "arguments are not valid JSON"},
            {"role": "user", "content": "Go on."},
        ],
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": 1000,
        "tools": function_tools(),
        "tool_choice": "auto",
    });
    assert_eq!(body, expected);
}

#[test]
fn anthropic_request() {
    let (body, rec) = sent(Provider::Anthropic, Some("sk-ant-test"));
    assert_eq!(rec.path, "/v1/messages");
    assert_eq!(rec.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(rec.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(rec.header("authorization"), None);
    let read = tool_schema(&FS_READ);
    let edit = tool_schema(&FS_EDIT);
    let expected = json!({
        "model": MODEL,
        "max_tokens": 1000,
        "stream": true,
        "system": [{"type": "text", "text": "You are nib.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Fix the bug."}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "call_1", "name": "fs-read", "input": {"path": "a.rs"}},
                {"type": "tool_use", "id": "call_2", "name": "fs-read", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "fn a() {}"},
                {"type": "tool_result", "tool_use_id": "call_2",
                 "content": "arguments are not valid JSON", "is_error": true},
                {"type": "text", "text": "Go on.", "cache_control": {"type": "ephemeral"}},
            ]},
        ],
        "tools": [
            {"name": read["name"], "description": read["description"],
             "input_schema": read["parameters"]},
            {"name": edit["name"], "description": edit["description"],
             "input_schema": edit["parameters"], "cache_control": {"type": "ephemeral"}},
        ],
    });
    assert_eq!(body, expected);
}

#[test]
fn temperature_and_no_tools() {
    let srv = server(vec![ScriptedReply::text("ok"); 3]);
    for provider in Provider::ALL {
        let client = Client::new(ModelConfig {
            temperature: Some(0.5),
            ..config(&srv, provider)
        })
        .expect("client");
        let body = client.request_body(&crate::support::request());
        assert!(
            body.get("tools").is_none(),
            "{provider}: no empty tool list"
        );
        let t = match provider {
            Provider::Ollama => &body["options"]["temperature"],
            _ => &body["temperature"],
        };
        assert_eq!(t, &json!(0.5), "{provider}");
        call(&client, &crate::support::request()).0.expect("reply");
    }
}

#[test]
fn endpoints_from_base_urls() {
    let cases = [
        (
            Provider::Ollama,
            "http://localhost:11434",
            "http://localhost:11434/api/chat",
        ),
        (Provider::Ollama, "http://h:1/api/", "http://h:1/api/chat"),
        (
            Provider::OpenAi,
            "http://localhost:8080",
            "http://localhost:8080/v1/chat/completions",
        ),
        (
            Provider::OpenAi,
            "https://openrouter.ai/api/v1",
            "https://openrouter.ai/api/v1/chat/completions",
        ),
        (
            Provider::OpenAi,
            "https://api.openai.com/v1/",
            "https://api.openai.com/v1/chat/completions",
        ),
        (
            Provider::OpenAi,
            "http://h/v1/chat/completions",
            "http://h/v1/chat/completions",
        ),
        (
            Provider::Anthropic,
            "https://api.anthropic.com",
            "https://api.anthropic.com/v1/messages",
        ),
        (Provider::Anthropic, "http://h/v1", "http://h/v1/messages"),
    ];
    for (provider, base, url) in cases {
        assert_eq!(provider.endpoint(base), url, "{provider} {base}");
    }
}

#[test]
fn openai_itself_gets_max_completion_tokens() {
    let client = Client::new(ModelConfig::new(Provider::OpenAi, "gpt-x")).expect("client");
    let body = client.request_body(&crate::support::request());
    assert_eq!(body["max_completion_tokens"], json!(8192));
    assert!(body.get("max_tokens").is_none());
}

#[test]
fn providers_parse_and_bad_configs_are_refused() {
    assert_eq!("Ollama".parse::<Provider>().ok(), Some(Provider::Ollama));
    assert_eq!("openai".parse::<Provider>().ok(), Some(Provider::OpenAi));
    assert_eq!(
        "anthropic".parse::<Provider>().ok(),
        Some(Provider::Anthropic)
    );
    let err = "gemini".parse::<Provider>().expect_err("unknown");
    assert!(err.to_string().contains("use ollama, openai"), "{err}");

    let bad_url = Client::new(ModelConfig {
        base_url: "localhost:11434".into(),
        ..ModelConfig::new(Provider::Ollama, "m")
    });
    let err = bad_url.err().expect("no scheme");
    assert!(err.to_string().contains("http://"), "{err}");

    let bad_key = Client::new(ModelConfig {
        api_key: Some("sk-abc\n".into()),
        ..ModelConfig::new(Provider::OpenAi, "m")
    });
    assert!(bad_key.is_err());
}

#[test]
fn scripts_load_from_files_and_built_ins() {
    use nib::model::scripted::{Fault, Script};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.json");
    std::fs::write(
        &path,
        r#"{"replies": ["hi", {"tool_calls": [{"name": "fs-list", "arguments": {"path": "."}}],
            "faults": [{"status": 429, "times": 2}, {"stall_after": 10, "ms": 5}]}]}"#,
    )
    .expect("write");
    let script = Script::load(&format!("scripted:{}", path.display())).expect("load");
    assert_eq!(script.replies.len(), 2);
    assert_eq!(script.replies[0].text, "hi");
    assert_eq!(
        script.replies[1].faults,
        vec![
            Fault::Status {
                code: 429,
                times: 2,
                retry_after: None,
            },
            Fault::StallAfter {
                bytes: 10,
                duration: std::time::Duration::from_millis(5)
            },
        ]
    );
    assert!(Script::load("hello").is_ok());
    let err = Script::load("no-such-script").expect_err("missing");
    assert!(err.to_string().contains("built-ins: hello"), "{err}");
}
