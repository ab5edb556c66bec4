//! `nib exec` against a real model server. The test is `#[ignore]`d, so a
//! plain `cargo test` lists it as ignored instead of passing it without a
//! server; run it with `--ignored` (it fails, saying so, when
//! `NIB_REAL_MODEL_URL` is unset). `.ci/run` runs it when the variable is set.
//!
//! ```sh
//! scripts/real-model.sh    # llama-cpp-python serving SmolLM2-135M on 127.0.0.1:8765 (~10 min the first time)
//! NIB_REAL_MODEL_URL=http://127.0.0.1:8765/v1 NIB_REAL_MODEL_ALLOW_NO_USAGE=1 \
//!     cargo test --test cli real_model -- --ignored --nocapture
//! ```
//!
//! - `NIB_REAL_MODEL_URL`: the server's base URL (`--base-url`); required.
//! - `NIB_REAL_MODEL_NAME`: `--model` (default `smollm2`).
//! - `NIB_REAL_MODEL_PROVIDER`: `openai` (default), `ollama` or `anthropic`.
//! - `NIB_REAL_MODEL_TIMEOUT`: seconds the run may take (default 600).
//! - `NIB_REAL_MODEL_ALLOW_NO_USAGE=1`: accept a server that reports no
//!   token usage in its stream (llama-cpp-python's server never does).
//!
//! Only what must hold for any real model is checked, whatever the model
//! says (good calls, garbage calls, text, nothing): the run ends in time
//! with a defined exit code and no panic, its events parse, a reply was
//! recorded with the prompt's token count, and the turn ended.

use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{NIB, jsonl, session_events};

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

#[test]
#[ignore = "needs a model server: set NIB_REAL_MODEL_URL"]
fn exec_against_a_real_model_server() {
    let Some(url) = var("NIB_REAL_MODEL_URL") else {
        panic!(
            "NIB_REAL_MODEL_URL is not set: start a server with scripts/real-model.sh and set \
             it to the URL that prints, or run without --ignored"
        );
    };
    let model = var("NIB_REAL_MODEL_NAME").unwrap_or_else(|| "smollm2".into());
    let provider = var("NIB_REAL_MODEL_PROVIDER").unwrap_or_else(|| "openai".into());
    let allow_no_usage = var("NIB_REAL_MODEL_ALLOW_NO_USAGE").is_some_and(|v| v != "0");
    let bound = Duration::from_secs(
        var("NIB_REAL_MODEL_TIMEOUT")
            .map(|v| {
                v.parse()
                    .expect("NIB_REAL_MODEL_TIMEOUT: a number of seconds")
            })
            .unwrap_or(600),
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let ws = dir.path().join("ws");
    fs::create_dir(&ws).expect("ws");
    fs::write(
        ws.join("notes.txt"),
        "Meeting notes, 30 November\n- Ship the edit engine by Friday.\n\
         - Alice reviews the guard.\n- Next meeting: Tuesday at 10.\n",
    )
    .expect("notes.txt");
    // The developer's own config must not change the run (reply caps, strategy).
    let config = dir.path().join("config");
    fs::create_dir(&config).expect("config dir");
    let stdout_path = dir.path().join("stdout.jsonl");
    let stderr_path = dir.path().join("stderr.txt");

    let start = Instant::now();
    let mut child = Command::new(NIB)
        .args([
            "exec",
            "read notes.txt and summarize it",
            "--root",
            &ws.display().to_string(),
            "--provider",
            &provider,
            "--base-url",
            &url,
            "--model",
            &model,
            "--max-steps",
            "2",
            "--timeout",
            &bound.as_secs().to_string(),
            "--json",
        ])
        .current_dir(&ws)
        .env("XDG_CONFIG_HOME", &config)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout_path).expect("stdout file"))
        .stderr(fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .expect("start nib");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for nib") {
            break status;
        }
        if start.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "nib exec did not end within {bound:?} (hung?); stderr so far:\n{}",
                fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let took = start.elapsed();
    let stdout = fs::read_to_string(&stdout_path).expect("stdout");
    let stderr = fs::read_to_string(&stderr_path).expect("stderr");
    let code = status.code();

    println!("real_model: {provider} {model} at {url}: exit {code:?} after {took:.1?}");
    println!("real_model: stderr:\n{stderr}");
    assert!(
        !stderr.contains("panicked"),
        "nib panicked (exit {code:?}):\n{stderr}"
    );
    assert!(
        matches!(code, Some(0 | 1 | 3 | 4)),
        "exit {code:?}: expected 0 done, 1 error, 3 refused or 4 limit (2 is a usage error; \
         none is a signal):\n{stderr}"
    );

    let streamed = jsonl(&stdout, "--json stdout");
    let logged = session_events(&ws);
    let kinds = |evs: &[Value]| -> Vec<String> {
        evs.iter()
            .map(|e| e["ev"].as_str().unwrap_or("?").to_string())
            .collect()
    };
    assert_eq!(
        kinds(&streamed),
        kinds(&logged),
        "--json must stream the events the log keeps"
    );
    for ev in &logged {
        match ev["ev"].as_str().unwrap_or("") {
            "llm.resp" => println!(
                "real_model: step {} finish {} tool_calls {} usage {} in {} ms",
                ev["step"], ev["finish"], ev["tool_calls"], ev["usage"], ev["duration_ms"]
            ),
            "tool.call" => println!("real_model:   {}", ev["positional"]),
            "tool.result" => println!("real_model:     ok={} {}", ev["ok"], ev["summary"]),
            "error" => println!("real_model: error: {}", ev["message"]),
            "turn.end" => println!("real_model: turn.end {}", ev["reason"]),
            _ => {}
        }
    }

    let first = logged.first().map(|e| e["ev"].clone());
    assert_eq!(
        first,
        Some(Value::from("session.start")),
        "{:?}",
        kinds(&logged)
    );
    let last = logged.last().expect("events");
    assert_eq!(last["ev"], "turn.end", "the last event: {last}");
    assert!(
        last["step"].as_u64().is_some_and(|s| s <= 2),
        "--max-steps 2 but {last}"
    );

    let replies: Vec<&Value> = logged.iter().filter(|e| e["ev"] == "llm.resp").collect();
    assert!(
        !replies.is_empty(),
        "no llm.resp: no reply came back from {url} (events: {:?}):\n{stderr}",
        kinds(&logged)
    );
    let prompt = |e: &Value| e.pointer("/usage/prompt").and_then(Value::as_u64);
    assert!(
        replies.iter().all(|e| prompt(e).is_some()),
        "llm.resp without usage.prompt: {replies:?}"
    );
    if !replies.iter().any(|e| prompt(e).is_some_and(|p| p > 0)) {
        let note = format!(
            "no llm.resp has a nonzero usage.prompt: the server reported no token usage in its \
             stream (llama-cpp-python's server, for one, ignores stream_options.include_usage), so nib \
             counted 0 tokens and a --max-tokens budget cannot stop this session: {replies:?}"
        );
        assert!(
            allow_no_usage,
            "{note}; set NIB_REAL_MODEL_ALLOW_NO_USAGE=1 to accept such a server"
        );
        println!("real_model: warning: {note}");
    }
}
