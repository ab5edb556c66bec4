//! Hostile servers over raw TCP on loopback: one that streams text and
//! never ends, one that sends only keep-alives. Each call must end with a
//! clear error inside its bounds (size, progress, the run's deadline),
//! and a call after the deadline sends nothing. Memory is measured in
//! `scripts/hostile-rss.sh`, not here.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nib::model::{Client, ModelConfig, ModelError, Provider};

use crate::support::{call, request};

/// What the server sends after its headers, forever.
#[derive(Clone, Copy)]
enum Flood {
    /// OpenAI deltas of text, as fast as the socket takes them.
    Text,
    /// SSE comments only, every 10 ms.
    KeepAlive,
}

/// A server on 127.0.0.1 answering every request with an endless SSE
/// stream; counts the requests it got.
fn hostile(flood: Flood) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || serve(conn, flood));
        }
    });
    (url, hits)
}

fn serve(mut conn: TcpStream, flood: Flood) {
    // Read the request head and body (small); the answer does not depend
    // on them.
    let mut buf = [0u8; 65536];
    let _ = conn.set_read_timeout(Some(Duration::from_millis(200)));
    let _ = conn.read(&mut buf);
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                transfer-encoding: chunked\r\n\r\n";
    if conn.write_all(head.as_bytes()).is_err() {
        return;
    }
    let event = match flood {
        Flood::Text => {
            let one = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"spam spam spam spam \"}}]}\n\n";
            one.repeat(200)
        }
        Flood::KeepAlive => ": keep-alive\n\n".to_string(),
    };
    let chunk = format!("{:x}\r\n{event}\r\n", event.len());
    loop {
        if conn.write_all(chunk.as_bytes()).is_err() {
            return;
        }
        if let Flood::KeepAlive = flood {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn client_for(url: &str, tune: impl FnOnce(&mut ModelConfig)) -> Client {
    let mut cfg = ModelConfig {
        base_url: url.to_string(),
        retries: 2,
        backoff: Duration::from_millis(5),
        ..ModelConfig::new(Provider::OpenAi, "m")
    };
    tune(&mut cfg);
    Client::new(cfg).unwrap()
}

/// No test waits on a hung client forever.
const HARD_LIMIT: Duration = Duration::from_secs(30);

#[test]
fn an_endless_reply_ends_at_its_size_bound_and_is_not_retried() {
    let (url, hits) = hostile(Flood::Text);
    let client = client_for(&url, |c| c.max_reply_bytes = 2 << 20);
    let start = Instant::now();
    let err = call(&client, &request()).0.expect_err("endless");
    assert!(start.elapsed() < HARD_LIMIT, "{:?}", start.elapsed());
    assert!(matches!(err, ModelError::Runaway { .. }), "{err:?}");
    let shown = err.to_string();
    assert!(
        shown.contains("would not end") && shown.contains("max_reply_mib"),
        "{shown}"
    );
    assert!(!err.is_transient());
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[test]
fn keep_alives_without_progress_end_at_the_stall_bound() {
    let (url, hits) = hostile(Flood::KeepAlive);
    let client = client_for(&url, |c| c.stall_timeout = Duration::from_millis(600));
    let start = Instant::now();
    let err = call(&client, &request()).0.expect_err("stalled");
    assert!(start.elapsed() < HARD_LIMIT, "{:?}", start.elapsed());
    assert!(matches!(err, ModelError::Runaway { .. }), "{err:?}");
    assert!(err.to_string().contains("stall_timeout"), "{err}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[test]
fn an_endless_reply_ends_at_the_runs_deadline_with_the_deadline_as_cause() {
    let (url, hits) = hostile(Flood::Text);
    // Bounds far away: only the deadline can end it.
    let mut client = client_for(&url, |c| c.max_reply_bytes = u64::MAX);
    client.set_deadline(Some(Instant::now() + Duration::from_millis(800)));
    let start = Instant::now();
    let err = call(&client, &request()).0.expect_err("endless");
    assert!(start.elapsed() < HARD_LIMIT, "{:?}", start.elapsed());
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
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    // Past the deadline, nothing is sent: the deadline is the error.
    let err = call(&client, &request()).0.expect_err("past the deadline");
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
    assert!(err.to_string().contains("no request was sent"), "{err}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}
