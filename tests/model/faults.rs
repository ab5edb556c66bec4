//! Things going wrong: cut streams, retries, timeouts, server errors.

use std::time::{Duration, Instant};

use nib::model::scripted::{Fault, Framing, ScriptedReply, render};
use nib::model::{Client, FinishReason, ModelConfig, ModelError, Provider, StreamEvent};

use crate::support::{call, client, config, essence, request, rich_expected, rich_reply, server};

fn with_faults(faults: Vec<Fault>) -> ScriptedReply {
    ScriptedReply {
        faults,
        ..rich_reply()
    }
}

#[test]
fn a_cut_stream_is_stream_cut_with_the_partial() {
    for framing in [Framing::Chunked, Framing::Close] {
        for provider in Provider::ALL {
            let len = render(provider, &rich_reply(), 0).len();
            let srv = server(vec![with_faults(vec![Fault::CutAfter(len / 2)])]);
            srv.set_framing(framing);
            let start = Instant::now();
            let (result, events) = call(&client(&srv, provider), &request());
            let what = format!("{provider}, {framing:?}");
            match result {
                Err(ModelError::StreamCut { partial, detail }) => {
                    assert!(!detail.is_empty());
                    let full = rich_expected(provider);
                    assert!(full.reasoning.starts_with(&partial.reasoning), "{what}");
                    assert!(full.text.starts_with(&partial.text), "{what}");
                    assert!(
                        !partial.reasoning.is_empty() || !partial.text.is_empty(),
                        "{what}: the partial has what arrived"
                    );
                    assert_eq!(partial.finish, FinishReason::Other("incomplete".into()));
                }
                other => panic!("{what}: {other:?}"),
            }
            assert!(
                !events
                    .iter()
                    .any(|e| matches!(e, nib::model::StreamEvent::Finish(_))),
                "{what}"
            );
            assert!(start.elapsed() < Duration::from_secs(6), "{what}: no hang");
            assert_eq!(srv.requests().len(), 1, "{what}: a cut is not retried");
        }
    }
}

#[test]
fn a_cut_anywhere_is_a_cut_or_a_whole_reply() {
    // Cut at every byte of a small reply (each protocol in parallel): the
    // client either reports the cut or, when the cut falls after the
    // finish, returns the whole reply.
    std::thread::scope(|s| {
        for provider in Provider::ALL {
            s.spawn(move || cut_everywhere(provider));
        }
    });
}

fn cut_everywhere(provider: Provider) {
    let small = ScriptedReply {
        text: "ok ✓".into(),
        tool_calls: vec![nib::model::scripted::ScriptedCall::new(
            "fs-list",
            serde_json::json!({"path": "."}),
        )],
        fragment: Some(20),
        model: Some(crate::support::MODEL.into()),
        usage: Some(Default::default()),
        ..ScriptedReply::default()
    };
    let len = render(provider, &small, 0).len();
    let replies: Vec<ScriptedReply> = (0..len)
        .map(|n| ScriptedReply {
            faults: vec![Fault::CutAfter(n)],
            ..small.clone()
        })
        .collect();
    let srv = server(replies);
    // No retries, so that call n gets reply n.
    let client = Client::new(ModelConfig {
        retries: 0,
        ..config(&srv, provider)
    })
    .expect("client");
    let mut cuts = 0;
    for n in 0..len {
        let (result, _) = call(&client, &request());
        match result {
            Err(ModelError::StreamCut { .. }) => cuts += 1,
            // Nothing arrived at all: a connection failure (retried when
            // retries allow).
            Err(ModelError::Connect { .. }) if n == 0 => {}
            Ok(reply) => {
                assert_eq!(reply.text, "ok ✓", "{provider}, cut after {n}");
                assert_eq!(reply.tool_calls.len(), 1, "{provider}, cut after {n}");
                assert_eq!(reply.tool_calls[0].arguments, r#"{"path":"."}"#);
            }
            Err(e) => panic!("{provider}, cut after {n}: {e:?}"),
        }
    }
    assert!(cuts > len / 2, "{provider}: {cuts} cuts of {len}");
}

#[test]
fn too_many_requests_then_success_after_a_retry() {
    for provider in Provider::ALL {
        let srv = server(vec![with_faults(vec![Fault::Status {
            code: 429,
            times: 1,
            retry_after: None,
        }])]);
        let (result, _) = call(&client(&srv, provider), &request());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(reply.attempts, 2);
        assert_eq!(
            essence(&reply),
            nib::model::Reply {
                attempts: 2,
                ..rich_expected(provider)
            }
        );
        assert_eq!(srv.requests().len(), 2, "{provider}");
    }
}

#[test]
fn service_unavailable_beyond_the_retries_is_an_http_error() {
    for provider in Provider::ALL {
        let srv = server(vec![with_faults(vec![Fault::Status {
            code: 503,
            times: 3,
            retry_after: None,
        }])]);
        let client = Client::new(ModelConfig {
            retries: 1,
            ..config(&srv, provider)
        })
        .expect("client");
        let (result, events) = call(&client, &request());
        match &result {
            Err(ModelError::Http {
                status: 503,
                body,
                attempts,
                ..
            }) => {
                assert!(body.contains("as the script says"), "{provider}: {body}");
                assert_eq!(*attempts, 2, "{provider}");
            }
            other => panic!("{provider}: {other:?}"),
        }
        // The one retry is announced with its wait (clients show it as a
        // notice); nothing of a reply arrived.
        assert!(
            matches!(
                events.as_slice(),
                [StreamEvent::Retry {
                    retry: 1,
                    retries: 1,
                    ..
                }]
            ),
            "{provider}: {events:?}"
        );
        assert_eq!(srv.requests().len(), 2, "{provider}: one try and one retry");
    }
}

#[test]
fn client_errors_are_not_retried() {
    let srv = server(vec![with_faults(vec![Fault::Status {
        code: 400,
        times: 1,
        retry_after: None,
    }])]);
    let (result, _) = call(&client(&srv, Provider::OpenAi), &request());
    let err = result.expect_err("400");
    assert!(
        matches!(err, ModelError::Http { status: 400, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("context"), "{err}");
    assert_eq!(srv.requests().len(), 1);
}

#[test]
fn a_hang_up_before_the_reply_is_retried() {
    for provider in Provider::ALL {
        let srv = server(vec![with_faults(vec![
            Fault::Hangup { times: 1 },
            Fault::Status {
                code: 529,
                times: 1,
                retry_after: None,
            },
        ])]);
        let (result, _) = call(&client(&srv, provider), &request());
        let reply = result.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(reply.attempts, 3, "{provider}");
        assert_eq!(srv.requests().len(), 3);
    }
}

#[test]
fn no_server_is_a_connect_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let client = Client::new(ModelConfig {
        base_url: format!("http://127.0.0.1:{port}"),
        retries: 1,
        backoff: Duration::from_millis(1),
        ..ModelConfig::new(Provider::Ollama, "m")
    })
    .expect("client");
    let (result, _) = call(&client, &request());
    let err = result.expect_err("nothing listens");
    assert!(matches!(err, ModelError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("--base-url"), "{err}");
}

#[test]
fn a_stall_longer_than_the_idle_timeout_is_a_timeout() {
    for provider in Provider::ALL {
        let srv = server(vec![with_faults(vec![Fault::StallAfter {
            bytes: 300,
            duration: Duration::from_secs(10),
        }])]);
        let client = Client::new(ModelConfig {
            idle_timeout: Duration::from_millis(200),
            ..config(&srv, provider)
        })
        .expect("client");
        let start = Instant::now();
        let (result, _) = call(&client, &request());
        let err = result.expect_err("stalled");
        assert!(
            matches!(
                err,
                ModelError::Timeout {
                    phase: "between chunks",
                    ..
                }
            ),
            "{provider}: {err:?}"
        );
        assert!(err.to_string().contains("idle timeout"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(6), "{provider}");
        assert_eq!(srv.requests().len(), 1, "a stall mid-reply is not retried");
    }
}

#[test]
fn a_slow_but_steady_stream_is_fine() {
    let srv = server(vec![ScriptedReply {
        text: "slow and steady".into(),
        fragment: Some(5),
        faults: vec![Fault::DelayBetweenChunks(Duration::from_millis(30))],
        ..ScriptedReply::default()
    }]);
    let client = Client::new(ModelConfig {
        idle_timeout: Duration::from_millis(1000),
        ..config(&srv, Provider::Anthropic)
    })
    .expect("client");
    let (result, _) = call(&client, &request());
    assert_eq!(result.expect("reply").text, "slow and steady");
}

#[test]
fn nothing_before_the_first_byte_timeout_is_a_timeout() {
    let srv = server(vec![with_faults(vec![Fault::DelayFirstByte(
        Duration::from_secs(10),
    )])]);
    let client = Client::new(ModelConfig {
        first_byte_timeout: Duration::from_millis(200),
        ..config(&srv, Provider::Ollama)
    })
    .expect("client");
    let start = Instant::now();
    let (result, _) = call(&client, &request());
    let err = result.expect_err("slow");
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
    assert!(start.elapsed() < Duration::from_secs(6));
}

#[test]
fn an_error_in_the_stream_is_a_remote_error() {
    for provider in Provider::ALL {
        let srv = server(vec![with_faults(vec![Fault::StreamError(
            "Overloaded".into(),
        )])]);
        let (result, _) = call(&client(&srv, provider), &request());
        match result {
            Err(ModelError::Remote { message, partial }) => {
                assert!(message.contains("Overloaded"), "{provider}: {message}");
                assert_eq!(partial.text, rich_reply().text, "{provider}");
            }
            other => panic!("{provider}: {other:?}"),
        }
        assert_eq!(srv.requests().len(), 1);
    }
}

#[test]
fn an_exhausted_script_says_so() {
    let srv = server(vec![ScriptedReply::text("only one")]);
    let client = client(&srv, Provider::OpenAi);
    assert_eq!(call(&client, &request()).0.expect("first").text, "only one");
    let err = call(&client, &request()).0.expect_err("no second reply");
    assert!(
        matches!(err, ModelError::Http { status: 410, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("no reply left"), "{err}");
}

#[test]
fn a_wrong_path_is_a_404_that_says_what_to_check() {
    let srv = server(vec![ScriptedReply::text("x")]);
    let client = Client::new(ModelConfig {
        base_url: format!("{}/nope", srv.base_url()),
        ..config(&srv, Provider::OpenAi)
    })
    .expect("client");
    let err = call(&client, &request()).0.expect_err("404");
    assert!(
        matches!(err, ModelError::Http { status: 404, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("/nope/v1/chat/completions") && msg.contains("--model"),
        "{msg}"
    );
}

#[test]
fn reply_works_inside_a_tokio_runtime() {
    let srv = server(vec![rich_reply()]);
    let client = client(&srv, Provider::OpenAi);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (result, events) = rt.block_on(async { call(&client, &request()) });
    let reply = result.expect("reply");
    assert_eq!(essence(&reply), rich_expected(Provider::OpenAi));
    assert!(events.len() > 20);
}

#[test]
fn calls_from_several_threads_at_once() {
    let replies = (0..8)
        .map(|i| ScriptedReply::text(format!("reply {i}")))
        .collect();
    let srv = server(replies);
    let client = client(&srv, Provider::Anthropic);
    let mut texts: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| call(&client, &request()).0.expect("reply").text))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    texts.sort();
    let expected: Vec<String> = (0..8).map(|i| format!("reply {i}")).collect();
    assert_eq!(texts, expected);
}
