//! Whole replies: exact results per protocol, the same results whatever the
//! byte boundaries, finish by length, unknown fields and server quirks.

use nib::model::scripted::{Chunking, ScriptedCall, ScriptedReply, render};
use nib::model::{FinishReason, Provider, StreamEvent, ToolCall, Usage};
use serde_json::json;

use crate::support::{call, client, essence, replay, request, rich_expected, rich_reply, server};

#[test]
fn rich_reply_is_exact_in_every_protocol() {
    for provider in Provider::ALL {
        let srv = server(vec![rich_reply()]);
        let (result, events) = call(&client(&srv, provider), &request());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(essence(&reply), rich_expected(provider), "{provider}");
        assert_eq!(reply.attempts, 1);

        // The events say the same as the reply, with arguments in fragments
        // (Ollama sends each call whole).
        let (text, reasoning, calls) = replay(&events);
        assert_eq!(text, reply.text, "{provider}");
        assert_eq!(reasoning, reply.reasoning, "{provider}");
        assert_eq!(calls, reply.tool_calls, "{provider}");
        let arg_events = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCallArgs { .. }))
            .count();
        if provider == Provider::Ollama {
            assert_eq!(arg_events, 2);
            assert_eq!(
                reply.timings.total,
                Some(std::time::Duration::from_millis(1500))
            );
        } else {
            assert!(arg_events > 10, "{provider}: {arg_events} fragments");
        }
        assert_eq!(
            events.iter().rev().find_map(|e| match e {
                StreamEvent::Usage(u) => Some(*u),
                _ => None,
            }),
            Some(reply.usage),
            "{provider}: the last Usage event is the total"
        );
        // Every line came as Raw, before what it meant.
        let first_raw = events.iter().position(|e| matches!(e, StreamEvent::Raw(_)));
        assert_eq!(first_raw, Some(0), "{provider}");
        let body = String::from_utf8(render(provider, &rich_reply(), 0)).expect("utf-8");
        let raw: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Raw(l) => Some(l.as_str()),
                _ => None,
            })
            .collect();
        let sent: Vec<&str> = body.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(raw, sent, "{provider}");
        // Fields nib does not read are kept.
        let kept = match provider {
            Provider::Ollama => "created_at",
            Provider::OpenAi => "system_fingerprint",
            Provider::Anthropic => "id",
        };
        assert!(
            reply.extra.contains_key(kept),
            "{provider}: {:?}",
            reply.extra
        );
    }
}

#[test]
fn one_byte_chunks_give_the_same_reply() {
    for provider in Provider::ALL {
        let srv = server(vec![rich_reply()]);
        srv.set_chunk_size(Some(1));
        let (result, _) = call(&client(&srv, provider), &request());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(essence(&reply), rich_expected(provider), "{provider}");
    }
}

#[test]
fn every_byte_offset_as_a_boundary_between_large_writes() {
    // Request j writes the body in pieces cut at offsets j, j + S, j + 2S, …
    // so over S requests every offset is a boundary once, between pieces
    // big enough to hold whole lines and a partial one. S is prime, so the
    // cuts fall at every position within lines. Protocols run in parallel.
    const S: usize = 331;
    std::thread::scope(|s| {
        for provider in Provider::ALL {
            s.spawn(move || {
                let len = render(provider, &rich_reply(), 0).len();
                assert!(len > 2 * S, "{provider}: {len} bytes");
                let replies: Vec<ScriptedReply> = (0..S)
                    .map(|j| ScriptedReply {
                        chunking: Some(Chunking::SplitAt((j..len).step_by(S).collect())),
                        ..rich_reply()
                    })
                    .collect();
                let srv = server(replies);
                let client = client(&srv, provider);
                let expected = rich_expected(provider);
                for j in 0..S {
                    let (result, _) = call(&client, &request());
                    let reply = result.unwrap_or_else(|e| panic!("{provider}, phase {j}: {e}"));
                    assert_eq!(essence(&reply), expected, "{provider}, phase {j}");
                }
                assert_eq!(srv.remaining(), 0);
            });
        }
    });
}

#[test]
fn finish_by_length_is_its_own_condition() {
    for provider in Provider::ALL {
        let cut_args = r#"{"path": "src/a.rs", "content": "fn ma"#;
        let srv = server(vec![ScriptedReply {
            text: "Writing the file".into(),
            tool_calls: vec![ScriptedCall::new("fs-write", json!(cut_args))],
            finish: Some(FinishReason::Length),
            ..ScriptedReply::default()
        }]);
        let (result, events) = call(&client(&srv, provider), &request());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(reply.finish, FinishReason::Length, "{provider}");
        assert!(events.contains(&StreamEvent::Finish(FinishReason::Length)));
        // The cut arguments are handed over as sent, for the caller to judge.
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].arguments, cut_args, "{provider}");
    }
}

#[test]
fn plain_text_reply_stops() {
    for provider in Provider::ALL {
        let srv = server(vec![ScriptedReply::text("Done.")]);
        let (result, _) = call(&client(&srv, provider), &request());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(reply.text, "Done.");
        assert_eq!(reply.finish, FinishReason::Stop);
        assert!(reply.tool_calls.is_empty());
        // Usage estimated by the server from the sizes.
        assert!(
            reply.usage.prompt_tokens > 10,
            "{provider}: {:?}",
            reply.usage
        );
        assert_eq!(reply.model, crate::support::MODEL);
    }
}

#[test]
fn reasoning_under_either_openai_field_name() {
    for field in ["reasoning_content", "reasoning"] {
        let srv = server(vec![ScriptedReply {
            reasoning: "think think".into(),
            text: "answer".into(),
            reasoning_field: Some(field.into()),
            ..ScriptedReply::default()
        }]);
        let (result, _) = call(&client(&srv, Provider::OpenAi), &request());
        let reply = result.unwrap_or_else(|e| panic!("{field}: {e}"));
        assert_eq!(reply.reasoning, "think think", "{field}");
        assert_eq!(reply.text, "answer");
    }
}

fn raw(body: &str) -> ScriptedReply {
    ScriptedReply {
        raw: Some(body.to_string()),
        ..ScriptedReply::default()
    }
}

#[test]
fn ollama_unknown_fields_are_ignored() {
    let body = concat!(
        r#"{"model":"m1","created_at":"x","message":{"role":"assistant","content":"Hi","images":null,"future":{"a":1}},"done":false,"novel":[1,2]}"#,
        "\n",
        r#"{"model":"m1","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"fs-list","arguments":{"path":"."},"index":0,"extra":true}}]},"done":false}"#,
        "\n\n",
        r#"{"model":"m1","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":3,"logprobs":[],"total_duration":5}"#,
    );
    let srv = server(vec![raw(body)]);
    let (result, _) = call(&client(&srv, Provider::Ollama), &request());
    let reply = result.expect("reply");
    assert_eq!(reply.text, "Hi");
    assert_eq!(reply.model, "m1");
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].name, "fs-list");
    assert_eq!(reply.tool_calls[0].arguments, r#"{"path":"."}"#);
    assert!(
        reply.tool_calls[0].id.starts_with("call_"),
        "an id is made up"
    );
    assert_eq!(reply.finish, FinishReason::ToolCalls);
    assert_eq!(reply.usage.completion_tokens, 3);
    // A cached prompt may omit the count: the prompt is then estimated
    // from the request, the completion stays the server's.
    assert!(reply.usage.reported && reply.usage.estimated);
    assert_eq!(
        reply.usage.prompt_tokens,
        nib::model::estimate::request_tokens(&request())
    );
    assert!(reply.extra.contains_key("novel"));
}

#[test]
fn openai_unknown_fields_and_quirks() {
    // CRLF lines, a comment, an unknown event name, unknown fields at every
    // level, a whole call in one fragment, index 0 reused for a second call
    // with a new id, llama.cpp timings, and no [DONE] (the connection closes
    // after the finish and usage).
    let body = concat!(
        ": keep-alive\r\n\r\n",
        "data: {\"id\":\"c1\",\"model\":\"m2\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"new_thing\":1},\"finish_reason\":null,\"extra\":{}}],\"usage\":null,\"vendor\":\"x\"}\r\n\r\n",
        "event: message\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\",\"reasoning\":null}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c_1\",\"type\":\"function\",\"function\":{\"name\":\"fs-read\",\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c_2\",\"type\":\"function\",\"function\":{\"name\":\"fs-read\",\"arguments\":\"{\\\"path\\\":\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"b\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"total_tokens\":13,\"prompt_tokens_details\":null,\"weird\":1},\"timings\":{\"prompt_ms\":12.5,\"predicted_ms\":40.0,\"predicted_n\":4}}\n\n",
    );
    let srv = server(vec![raw(body)]);
    let (result, _) = call(&client(&srv, Provider::OpenAi), &request());
    let reply = result.expect("reply");
    assert_eq!(reply.text, "Hello");
    assert_eq!(reply.model, "m2");
    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall {
                id: "c_1".into(),
                name: "fs-read".into(),
                arguments: r#"{"path":"a"}"#.into()
            },
            ToolCall {
                id: "c_2".into(),
                name: "fs-read".into(),
                arguments: r#"{"path":"b"}"#.into()
            },
        ]
    );
    assert_eq!(reply.finish, FinishReason::ToolCalls, "stop with calls");
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 9,
            completion_tokens: 4,
            reported: true,
            ..Usage::default()
        }
    );
    assert_eq!(
        reply.timings.generation,
        Some(std::time::Duration::from_millis(40))
    );
    assert_eq!(reply.extra.get("vendor"), Some(&json!("x")));
}

#[test]
fn anthropic_unknown_fields_and_events() {
    let body = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":90,\"cache_creation_input_tokens\":0,\"output_tokens\":1,\"service_tier\":\"standard\"},\"container\":null}}\n\n",
        "event: ping\ndata: {\"type\": \"ping\"}\n\n",
        "event: brand_new_event\ndata: {\"type\":\"brand_new_event\",\"stuff\":[1]}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\",\"citations\":[]}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi \",\"extra\":1}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{}}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"s1\",\"name\":\"web_search\",\"input\":{}}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"fs-list\",\"input\":{}}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_10\",\"name\":\"fs-read\",\"input\":{\"path\":\"x\"}}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":3}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":20},\"context_management\":{}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\",\"amazon-bedrock-invocationMetrics\":{}}\n\n",
    );
    let srv = server(vec![raw(body)]);
    let (result, _) = call(&client(&srv, Provider::Anthropic), &request());
    let reply = result.expect("reply");
    assert_eq!(reply.text, "Hi ");
    assert_eq!(reply.model, "claude-x");
    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall {
                id: "toolu_9".into(),
                name: "fs-list".into(),
                arguments: "{}".into(),
            },
            ToolCall {
                id: "toolu_10".into(),
                name: "fs-read".into(),
                arguments: r#"{"path":"x"}"#.into(),
            },
        ]
    );
    assert_eq!(reply.finish, FinishReason::ToolCalls);
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 100,
            cached_tokens: 90,
            cache_write_tokens: 0,
            completion_tokens: 20,
            reported: true,
            estimated: false,
        }
    );
    assert_eq!(reply.extra.get("id"), Some(&json!("msg_1")));
}

#[test]
fn a_protocol_mismatch_says_so() {
    // An Ollama client talking to something that sends SSE.
    let srv = server(vec![raw("data: {\"choices\":[]}\n\n")]);
    let (result, _) = call(&client(&srv, Provider::Ollama), &request());
    let err = result.expect_err("not NDJSON");
    assert!(
        matches!(err, nib::model::ModelError::Protocol(_)),
        "{err:?}"
    );
    assert!(err.to_string().contains("--provider"), "{err}");
}
