//! What real local servers do, emulated by the scripted server: streaming
//! with tools that drops after HTTP 200 (llama-cpp-python), streams
//! without usage, tool calls written as text; unstreamed replies; and the
//! waits a run must not outlast (Retry-After, the deadline, the cancel flag).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nib::model::estimate;
use nib::model::scripted::{Fault, Quirks, ScriptedCall, ScriptedReply};
use nib::model::{
    Client, FinishReason, ModelConfig, ModelError, Provider, Reply, Request, StreamEvent,
    StreamMode, ToolCall,
};
use nib::prim::schema::tool_schema;
use nib::prim::table::{FS_EDIT, FS_READ};
use serde_json::json;

use crate::support::{call, config, essence, request, rich_expected, rich_reply, server};

/// A request that offers fs-read and fs-edit.
fn with_tools() -> Request {
    Request {
        max_tokens: None,
        tools: vec![tool_schema(&FS_READ), tool_schema(&FS_EDIT)],
        ..request()
    }
}

fn client_with(cfg: ModelConfig) -> Client {
    Client::new(cfg).expect("client")
}

#[test]
fn a_server_that_drops_streams_with_tools_is_asked_again_unstreamed() {
    let no_stream_tools = Quirks {
        stream_tools: false,
        ..Quirks::default()
    };
    for provider in Provider::ALL {
        let srv = server(vec![
            rich_reply(),
            rich_reply(),
            ScriptedReply::text("plain"),
        ]);
        srv.set_quirks(no_stream_tools);
        let client = client_with(config(&srv, provider));
        assert!(client.streams_tool_calls());

        let (result, events) = call(&client, &with_tools());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert!(!reply.streamed, "{provider}");
        let reason = reply
            .stream_fallback
            .clone()
            .expect("the fallback is reported");
        assert!(reason.contains("HTTP 200"), "{provider}: {reason}");
        assert!(
            matches!(&events[0], StreamEvent::StreamFallback { reason: r } if *r == reason),
            "{provider}: the notice comes first: {events:?}"
        );
        assert_eq!(
            essence(&reply),
            Reply {
                attempts: 2,
                streamed: false,
                stream_fallback: Some(reason),
                ..rich_expected(provider)
            },
            "{provider}"
        );
        assert!(!client.streams_tool_calls(), "{provider}: remembered");

        // The next request with tools goes unstreamed at once; one without
        // tools still streams.
        let (again, events) = call(&client, &with_tools());
        let again = again.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!((again.attempts, again.streamed), (1, false), "{provider}");
        assert_eq!(again.stream_fallback, None, "{provider}: said once");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, StreamEvent::StreamFallback { .. }))
        );
        let (plain, _) = call(&client, &request());
        let plain = plain.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert!(plain.streamed && plain.text == "plain", "{provider}");

        let streamed: Vec<bool> = srv
            .requests()
            .iter()
            .map(|b| b["stream"].as_bool().expect("stream is always said"))
            .collect();
        assert_eq!(streamed, [true, false, false, true], "{provider}");
    }
}

#[test]
fn stream_off_gets_the_same_reply_as_one_body() {
    for provider in Provider::ALL {
        let srv = server(vec![rich_reply()]);
        let client = client_with(ModelConfig {
            stream: StreamMode::Off,
            ..config(&srv, provider)
        });
        assert_eq!(client.request_body(&with_tools())["stream"], json!(false));
        let (result, events) = call(&client, &with_tools());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(
            essence(&reply),
            Reply {
                streamed: false,
                ..rich_expected(provider)
            },
            "{provider}"
        );
        // The events still tell the whole reply, and the body is logged raw.
        let (text, reasoning, calls) = crate::support::replay(&events);
        assert_eq!(
            (text, reasoning),
            (reply.text.clone(), reply.reasoning.clone())
        );
        assert_eq!(calls, reply.tool_calls, "{provider}");
        let raws = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Raw(_)))
            .count();
        assert_eq!(raws, 1, "{provider}: the one body");
        let body = &srv.requests()[0];
        assert!(body.get("stream_options").is_none(), "{provider}");
    }
}

#[test]
fn a_stream_without_usage_is_estimated_and_says_so() {
    let no_usage = Quirks {
        stream_usage: false,
        ..Quirks::default()
    };
    for provider in Provider::ALL {
        let srv = server(vec![rich_reply()]);
        srv.set_quirks(no_usage);
        let req = with_tools();
        let (result, events) = call(&client_with(config(&srv, provider)), &req);
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        let u = reply.usage;
        assert!(!u.reported && u.estimated, "{provider}: {u:?}");
        assert_eq!(
            u.prompt_tokens,
            estimate::request_tokens(&req),
            "{provider}"
        );
        let expected_completion = estimate::tokens(&reply.text)
            + estimate::tokens(&reply.reasoning)
            + reply
                .tool_calls
                .iter()
                .map(|c| estimate::tokens(&c.name) + estimate::tokens(&c.arguments) + 4)
                .sum::<u64>();
        assert_eq!(u.completion_tokens, expected_completion, "{provider}");
        assert!(u.prompt_tokens > 100, "{provider}: the tool schemas count");
        // The last usage event is the estimate, after the finish.
        let last_usage = events.iter().rev().find_map(|e| match e {
            StreamEvent::Usage(u) => Some(*u),
            _ => None,
        });
        assert_eq!(last_usage, Some(u), "{provider}");
        assert_eq!(nib::model::show_tokens(1234, u.estimated), "~1.2k");
    }
}

/// An estimated prompt counts the tool schemas only when the request sent
/// carried them (issue 25: an estimate must not charge for what was never
/// sent), measured on what the scripted server received.
#[test]
fn an_estimate_counts_only_the_tools_the_request_carried() {
    let no_usage = Quirks {
        stream_usage: false,
        ..Quirks::default()
    };
    for provider in Provider::ALL {
        let srv = server(vec![ScriptedReply::text("one"), ScriptedReply::text("two")]);
        srv.set_quirks(no_usage);
        let client = client_with(config(&srv, provider));
        let (bare, _) = call(&client, &request());
        let (tooled, _) = call(&client, &with_tools());
        let (bare, tooled) = (
            bare.unwrap_or_else(|e| panic!("{provider}: {e}")).usage,
            tooled.unwrap_or_else(|e| panic!("{provider}: {e}")).usage,
        );
        let bodies = srv.requests();
        assert!(
            bodies[0].get("tools").is_none(),
            "{provider}: {:?}",
            bodies[0]
        );
        assert!(bodies[1].get("tools").is_some(), "{provider}");
        assert!(bare.estimated && tooled.estimated, "{provider}");
        // Without tools: the system prompt and the one message, nothing more.
        assert_eq!(
            bare.prompt_tokens,
            estimate::tokens("You are a test.") + 4 + estimate::tokens("Go.") + 4,
            "{provider}"
        );
        // With them: exactly the schemas more.
        let schemas: u64 = with_tools()
            .tools
            .iter()
            .map(|t| estimate::tokens(&t.to_string()))
            .sum();
        assert_eq!(
            tooled.prompt_tokens,
            bare.prompt_tokens + schemas,
            "{provider}"
        );
        // The body decides, whatever the request held.
        let mut sent = client.request_body(&with_tools());
        assert_eq!(
            estimate::carried_tokens(&with_tools(), &sent),
            tooled.prompt_tokens
        );
        sent.as_object_mut().map(|b| b.remove("tools"));
        assert_eq!(
            estimate::carried_tokens(&with_tools(), &sent),
            bare.prompt_tokens
        );
    }
}

/// A reply whose text holds its tool calls.
fn texted(text: &str) -> ScriptedReply {
    ScriptedReply {
        text: text.into(),
        fragment: Some(7),
        ..ScriptedReply::default()
    }
}

const HERMES: &str = "I will read it first.\n<tool_call>\n{\"name\": \"fs-read\", \"arguments\": {\"path\": \"src/a.py\"}}\n</tool_call>";

#[test]
fn tool_calls_written_as_text_become_calls() {
    let fenced = "Editing now.\n```json\n{\"name\": \"fs-edit\", \"arguments\": {\"path\": \"a.py\", \"edits\": []}}\n```";
    let broken = "<tool_call>{\"name\": \"fs-edit\", \"arguments\": {\"path\": \"a.py\", \"edits\": [}</tool_call>";
    for provider in [Provider::OpenAi, Provider::Ollama] {
        let srv = server(vec![texted(HERMES), texted(fenced), texted(broken)]);
        let client = client_with(config(&srv, provider));

        let (result, events) = call(&client, &with_tools());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(
            reply.raw_text.as_deref(),
            Some(HERMES),
            "{provider}: raw kept"
        );
        assert_eq!(reply.text, "I will read it first.");
        assert_eq!(reply.finish, FinishReason::ToolCalls);
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].name, "fs-read");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"path": "src/a.py"}"#);
        assert!(reply.tool_calls[0].id.starts_with("call_"));
        let at = events
            .iter()
            .position(|e| matches!(e, StreamEvent::TextToolCalls { count: 1 }))
            .expect("the text calls are announced");
        assert!(
            matches!(events[at + 1], StreamEvent::ToolCallStart { index: 0, .. }),
            "{provider}: {events:?}"
        );

        let (result, _) = call(&client, &with_tools());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(reply.text, "Editing now.");
        assert_eq!(
            reply.tool_calls.iter().map(|c| &c.name).collect::<Vec<_>>(),
            ["fs-edit"]
        );

        // Broken JSON in a tag is still a call; its arguments stay raw for
        // the tool layer to refuse (and the log to keep).
        let (result, _) = call(&client, &with_tools());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(reply.tool_calls.len(), 1, "{provider}");
        let args = &reply.tool_calls[0].arguments;
        assert!(serde_json::from_str::<serde_json::Value>(args).is_err());
        assert!(args.contains("\"edits\": ["), "{provider}: {args}");
        assert_eq!(reply.raw_text.as_deref(), Some(broken));
    }
}

#[test]
fn text_calls_are_read_only_when_asked_and_tools_are_offered() {
    // Off by config, no tools in the request, Anthropic by default, and a
    // reply with native calls: the text stays text.
    let srv = server(vec![texted(HERMES), texted(HERMES), texted(HERMES)]);
    let off = client_with(ModelConfig {
        text_tool_calls: false,
        ..config(&srv, Provider::OpenAi)
    });
    let on = client_with(config(&srv, Provider::OpenAi));
    let anthropic = client_with(config(&srv, Provider::Anthropic));
    assert!(!anthropic.config().text_tool_calls);
    for (client, req) in [
        (&off, with_tools()),
        (&on, request()),
        (&anthropic, with_tools()),
    ] {
        let (result, _) = call(client, &req);
        let reply = result.expect("reply");
        assert!(reply.tool_calls.is_empty());
        assert_eq!((reply.text.as_str(), reply.raw_text), (HERMES, None));
    }
    let native = ScriptedReply {
        text: HERMES.into(),
        tool_calls: vec![ScriptedCall::new("fs-list", json!({"path": "."}))],
        ..ScriptedReply::default()
    };
    let srv = server(vec![native]);
    let (result, _) = call(&client_with(config(&srv, Provider::OpenAi)), &with_tools());
    let reply = result.expect("reply");
    assert_eq!(
        reply
            .tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["fs-list"]
    );
    assert_eq!(reply.text, HERMES);
}

#[test]
fn a_text_call_round_trips_as_a_native_call() {
    // The call read from text goes back as a tool call, not as the tag.
    let srv = server(vec![texted(HERMES), ScriptedReply::text("done")]);
    let client = client_with(config(&srv, Provider::OpenAi));
    let first = call(&client, &with_tools()).0.expect("reply");
    let mut req = with_tools();
    req.messages.push(nib::model::Message::Assistant {
        text: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
    });
    req.messages.push(nib::model::Message::ToolResult {
        call_id: first.tool_calls[0].id.clone(),
        name: "fs-read".into(),
        content: "print(1)".into(),
        is_error: false,
    });
    call(&client, &req).0.expect("reply");
    let sent = &srv.requests()[1]["messages"][2];
    assert_eq!(sent["content"], json!("I will read it first."));
    assert_eq!(
        sent["tool_calls"][0]["function"]["arguments"],
        json!(r#"{"path": "src/a.py"}"#)
    );
    let _: &ToolCall = &first.tool_calls[0];
}

fn rate_limited(retry_after: u64) -> ScriptedReply {
    ScriptedReply {
        faults: vec![Fault::Status {
            code: 429,
            times: 5,
            retry_after: Some(retry_after),
        }],
        ..ScriptedReply::text("late")
    }
}

#[test]
fn an_hour_of_retry_after_is_not_waited() {
    let srv = server(vec![rate_limited(3600)]);
    let client = client_with(config(&srv, Provider::OpenAi));
    let start = Instant::now();
    let err = call(&client, &request()).0.expect_err("429");
    assert!(start.elapsed() < Duration::from_secs(2), "no wait");
    let msg = err.to_string();
    assert!(
        msg.contains("HTTP 429") && msg.contains("60 min") && msg.contains("Retry-After"),
        "{msg}"
    );
    assert!(!msg.contains("even after"), "one request: {msg}");
    match err {
        ModelError::Http {
            attempts,
            retry_after,
            ..
        } => {
            assert_eq!(attempts, 1);
            assert_eq!(retry_after, Some(Duration::from_secs(3600)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(srv.requests().len(), 1);
}

#[test]
fn a_retry_after_past_the_deadline_is_not_waited() {
    let srv = server(vec![rate_limited(5)]);
    let mut client = client_with(config(&srv, Provider::Anthropic));
    client.set_deadline(Some(Instant::now() + Duration::from_secs(2)));
    let start = Instant::now();
    let err = call(&client, &request()).0.expect_err("429");
    assert!(start.elapsed() < Duration::from_secs(1), "no wait");
    let msg = err.to_string();
    assert!(msg.contains("the run's time limit"), "{msg}");
    assert_eq!(srv.requests().len(), 1);
}

#[test]
fn the_cancel_flag_stops_a_retry_wait() {
    let srv = server(vec![rate_limited(30)]);
    let mut client = client_with(config(&srv, Provider::Ollama));
    let cancel = Arc::new(AtomicBool::new(false));
    client.set_cancel(Arc::clone(&cancel));
    let flag = Arc::clone(&cancel);
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Relaxed);
    });
    let start = Instant::now();
    let err = call(&client, &request()).0.expect_err("cancelled");
    setter.join().expect("setter");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert!(err.to_string().contains("interrupted"), "{err}");
    assert_eq!(srv.requests().len(), 1);
}

#[test]
fn a_server_that_never_answers_meets_the_total_limit_and_the_deadline() {
    let silent = || ScriptedReply {
        faults: vec![Fault::DelayFirstByte(Duration::from_secs(20))],
        ..ScriptedReply::text("late")
    };
    let srv = server(vec![silent(), silent()]);
    let client = client_with(ModelConfig {
        first_byte_timeout: Duration::from_secs(20),
        total_timeout: Duration::from_millis(400),
        ..config(&srv, Provider::OpenAi)
    });
    let start = Instant::now();
    let err = call(&client, &request()).0.expect_err("silent");
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(
        matches!(err, ModelError::Timeout { phase: "total", .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("total_timeout"), "{err}");

    let mut client = client_with(ModelConfig {
        first_byte_timeout: Duration::from_secs(20),
        ..config(&srv, Provider::OpenAi)
    });
    client.set_deadline(Some(Instant::now() + Duration::from_millis(400)));
    let err = call(&client, &request()).0.expect_err("silent");
    assert!(
        matches!(
            err,
            ModelError::Timeout {
                phase: "deadline",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("--timeout"), "{err}");
}

#[test]
fn defaults_bound_a_silent_server() {
    let cfg = ModelConfig::new(Provider::OpenAi, "m");
    assert_eq!(cfg.first_byte_timeout, Duration::from_secs(180));
    assert_eq!(cfg.total_timeout, Duration::from_secs(1800));
    assert_eq!(cfg.stream, StreamMode::Auto);
    let err = ModelError::Timeout {
        phase: "first byte",
        after: cfg.first_byte_timeout,
    };
    let msg = err.to_string();
    assert!(
        msg.contains("3 min") && msg.contains("first_byte_timeout"),
        "{msg}"
    );
    assert_eq!("off".parse::<StreamMode>().expect("off"), StreamMode::Off);
    assert!("sometimes".parse::<StreamMode>().is_err());
}

#[test]
fn each_provider_gets_its_own_connect_advice() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    for provider in Provider::ALL {
        let client = client_with(ModelConfig {
            base_url: format!("http://127.0.0.1:{port}"),
            retries: 0,
            ..ModelConfig::new(provider, "m")
        });
        let err = call(&client, &request()).0.expect_err("nothing listens");
        let msg = err.to_string();
        match provider {
            Provider::Ollama => assert!(msg.contains("ollama serve"), "{msg}"),
            Provider::OpenAi => assert!(
                msg.contains("llama-server") && !msg.contains("ollama serve"),
                "{msg}"
            ),
            Provider::Anthropic => assert!(msg.contains("network"), "{msg}"),
        }
        assert!(!msg.contains("attempts"), "one request: {msg}");
    }
}

#[test]
fn retrying_is_claimed_only_after_retries() {
    let failing = || ScriptedReply {
        faults: vec![Fault::Status {
            code: 503,
            times: 9,
            retry_after: None,
        }],
        ..ScriptedReply::text("x")
    };
    let srv = server(vec![failing()]);
    let once = client_with(ModelConfig {
        retries: 0,
        ..config(&srv, Provider::OpenAi)
    });
    let msg = call(&once, &request()).0.expect_err("503").to_string();
    assert!(!msg.contains("even after"), "{msg}");
    let twice = client_with(ModelConfig {
        retries: 1,
        ..config(&srv, Provider::OpenAi)
    });
    let msg = call(&twice, &request()).0.expect_err("503").to_string();
    assert!(msg.contains("even after 2 requests"), "{msg}");
}

#[test]
fn scripts_can_ask_for_the_quirks() {
    let script = nib::model::scripted::Script::from_json(
        r#"[{"text": "x", "server": {"stream_tools": false, "stream_usage": false, "stream_tools_status": 503},
             "faults": [{"status": 429, "retry_after": 7}]}]"#,
    )
    .expect("script");
    let reply = &script.replies[0];
    assert_eq!(
        reply.quirks,
        Some(Quirks {
            stream_tools: false,
            stream_tools_status: Some(503),
            stream_usage: false
        })
    );
    assert_eq!(
        reply.faults,
        [Fault::Status {
            code: 429,
            times: 1,
            retry_after: Some(7)
        }]
    );
    let err = nib::model::scripted::Script::from_json(r#"[{"server": {"stream": 1}}]"#)
        .expect_err("unknown key");
    assert!(err.message.contains("server: unknown key"), "{err}");
}

#[test]
fn an_error_naming_streaming_falls_back_and_a_cut_does_not() {
    // A server that refuses streaming with tools with an HTTP error.
    let refuse = Quirks {
        stream_tools: false,
        stream_tools_status: Some(400),
        ..Quirks::default()
    };
    let srv = server(vec![rich_reply()]);
    srv.set_quirks(refuse);
    let client = client_with(config(&srv, Provider::OpenAi));
    let reply = call(&client, &with_tools()).0.expect("reply");
    let reason = reply.stream_fallback.expect("fell back");
    assert!(
        reason.contains("HTTP 400") && reason.contains("streaming"),
        "{reason}"
    );
    assert_eq!(reply.tool_calls.len(), 2);

    // A stream with tools that breaks once the reply has begun is a cut,
    // not a reason to stop streaming (the network may be at fault).
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n: ping\n\n";
    let srv = server(vec![ScriptedReply {
        raw: Some(body.into()),
        faults: vec![Fault::CutAfter(body.len())],
        ..ScriptedReply::default()
    }]);
    let client = client_with(ModelConfig {
        retries: 0,
        ..config(&srv, Provider::OpenAi)
    });
    let err = call(&client, &with_tools()).0.expect_err("cut");
    assert!(matches!(err, ModelError::StreamCut { .. }), "{err:?}");
    assert!(client.streams_tool_calls());
}

#[test]
fn usage_as_the_log_and_the_status_line_show_it() {
    let srv = server(vec![rich_reply()]);
    srv.set_quirks(Quirks {
        stream_usage: false,
        ..Quirks::default()
    });
    let reply = call(&client_with(config(&srv, Provider::Ollama)), &with_tools())
        .0
        .expect("reply");
    let logged = reply.usage.log_json();
    assert_eq!(logged["reported"], json!(false));
    assert_eq!(logged["estimated"], json!(true));
    assert_eq!(logged["prompt"], json!(reply.usage.prompt_tokens));
    assert!(reply.usage.show_total().starts_with('~'));
}

#[test]
fn an_unstreamed_reply_may_take_longer_than_the_first_byte_limit() {
    // Whole replies come only when the model is done: the first-byte limit
    // is for streams; the call's total limit bounds the wait instead.
    let slow = ScriptedReply {
        faults: vec![Fault::DelayFirstByte(Duration::from_millis(600))],
        ..ScriptedReply::text("slow but whole")
    };
    let srv = server(vec![slow.clone(), slow]);
    let unstreamed = client_with(ModelConfig {
        stream: StreamMode::Off,
        first_byte_timeout: Duration::from_millis(200),
        total_timeout: Duration::from_secs(5),
        ..config(&srv, Provider::OpenAi)
    });
    let reply = call(&unstreamed, &request()).0.expect("whole reply");
    assert_eq!(reply.text, "slow but whole");
    let streamed = client_with(ModelConfig {
        first_byte_timeout: Duration::from_millis(200),
        ..config(&srv, Provider::OpenAi)
    });
    let err = call(&streamed, &request())
        .0
        .expect_err("too slow to start");
    assert!(
        matches!(
            err,
            ModelError::Timeout {
                phase: "first byte",
                ..
            }
        ),
        "{err:?}"
    );
}
