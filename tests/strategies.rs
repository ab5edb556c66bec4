//! The shipped strategies and the hook surface, end to end: the real
//! binary (`nib exec`), the real Steel engine, the scripted model over
//! HTTP on 127.0.0.1, real files; assertions on files, events and what the
//! model was sent (the scripted server's prompt counts).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const NIB: &str = env!("CARGO_BIN_EXE_nib");

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    events: Vec<Value>,
}

/// A workspace `ws/` with `files`, and `script` beside it.
fn workspace(files: &[(&str, &str)], script: &Value) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let ws = dir.path().join("ws");
    fs::create_dir(&ws).expect("ws");
    for (path, text) in files {
        let p = ws.join(path);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).expect("dirs");
        }
        fs::write(p, text).expect("file");
    }
    let script_path = dir.path().join("script.json");
    fs::write(&script_path, script.to_string()).expect("script");
    (dir, ws, script_path.display().to_string())
}

fn exec(ws: &Path, script: &str, extra: &[&str]) -> Run {
    let root = ws.display().to_string();
    let mut args = vec![
        "exec",
        "do the task",
        "--root",
        &root,
        "--provider",
        "scripted",
        "--model",
        script,
    ];
    args.extend_from_slice(extra);
    let out = Command::new(NIB)
        .args(&args)
        .current_dir(ws)
        .stdin(Stdio::null())
        .output()
        .expect("run nib");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        events: events(ws),
    }
}

fn events(ws: &Path) -> Vec<Value> {
    // Two runs in one second would sort by their ids' random suffix; the
    // host's own "newest session" rule breaks the tie.
    let Some(last) = nib::session::newest_session(&ws.join(".nib/sessions")) else {
        return Vec::new();
    };
    fs::read_to_string(last)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn of_kind<'a>(events: &'a [Value], ev: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["ev"] == ev).collect()
}

fn strategy_texts(events: &[Value], action: &str) -> Vec<String> {
    of_kind(events, "strategy")
        .into_iter()
        .filter(|e| e["action"] == action)
        .map(|e| e["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn check_feeds_a_failing_check_back_until_it_passes() {
    let script = json!([
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "b.py", "content": "y = 2\n"}}]},
        "Done.",
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "ok", "content": "1\n"}}]},
        "Fixed."
    ]);
    let (_d, ws, script) = workspace(&[("a.py", "x = 1\n")], &script);
    let run = exec(
        &ws,
        &script,
        &[
            "--strategy",
            "check",
            "--approve",
            "writes",
            "--set",
            "check=test -f ok",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "Fixed.");
    assert!(ws.join("ok").exists() && ws.join("b.py").exists());
    // The failure reached the model as the next user message.
    let vetoes = strategy_texts(&run.events, "continue");
    assert_eq!(vetoes.len(), 1, "{:?}", run.events);
    assert!(vetoes[0].contains("`test -f ok` failed"), "{}", vetoes[0]);
    // The check runs are the strategy's calls, not the model's.
    let checks: Vec<&Value> = of_kind(&run.events, "tool.call")
        .into_iter()
        .filter(|e| e["name"] == "shell")
        .collect();
    assert_eq!(checks.len(), 2);
    assert!(checks.iter().all(|c| c["by"] == "strategy"));
    assert!(
        strategy_texts(&run.events, "say")
            .iter()
            .any(|t| t.contains("passed"))
    );
    assert!(
        run.stderr.contains("strategy: check: `test -f ok` passed"),
        "{}",
        run.stderr
    );
}

#[test]
fn check_gives_up_after_its_rounds_and_skips_when_nothing_changed() {
    let script = json!([
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "b.py", "content": "y = 2\n"}}]},
        "Done.",
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "b.py", "content": "y = 3\n"}}]},
        "Done again."
    ]);
    let (_d, ws, script) = workspace(&[], &script);
    let run = exec(
        &ws,
        &script,
        &[
            "--strategy",
            "check",
            "--approve",
            "writes",
            "--set",
            "check=false",
            "--set",
            "check_rounds=1",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "Done again.");
    assert!(
        strategy_texts(&run.events, "say")
            .iter()
            .any(|t| t.contains("giving up after 1"))
    );
    // A reply that changed nothing is not checked.
    let (_d, ws, script) = workspace(&[], &json!(["Nothing to do."]));
    let run = exec(
        &ws,
        &script,
        &["--strategy", "check", "--set", "check=false"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(of_kind(&run.events, "tool.call").is_empty());
}

#[test]
fn check_detects_the_projects_command() {
    let script = json!([
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "notes.txt", "content": "x\n"}}]},
        "Done."
    ]);
    let (_d, ws, script) = workspace(&[("Makefile", "test:\n\t@echo made-test\n")], &script);
    let run = exec(
        &ws,
        &script,
        &["--strategy", "check", "--approve", "writes"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let shell = of_kind(&run.events, "tool.call")
        .into_iter()
        .find(|e| e["name"] == "shell")
        .cloned()
        .expect("the check ran");
    assert_eq!(shell["args"]["command"], "make test");
}

/// A 40-step session whose every step reads a large file.
fn long_session() -> Value {
    let mut replies: Vec<Value> = (0..40)
        .map(|i| json!({"tool_calls": [{"name": "fs-read", "arguments": {"path": format!("big{}.txt", i % 4)}}]}))
        .collect();
    replies.push(json!("Read them all."));
    Value::Array(replies)
}

fn largest_prompt(events: &[Value]) -> u64 {
    of_kind(events, "llm.resp")
        .iter()
        .map(|e| e["usage"]["prompt"].as_u64().unwrap_or(0))
        .max()
        .unwrap_or(0)
}

#[test]
fn compact_keeps_a_long_session_under_its_budget() {
    let line = "some long line of a large file that the model reads again and again\n";
    let big = line.repeat(120);
    let files: Vec<(String, String)> = (0..4)
        .map(|i| (format!("big{i}.txt"), big.clone()))
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (_d, ws, script) = workspace(&files, &long_session());
    let plain = exec(&ws, &script, &["--max-steps", "50"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let (_d2, ws2, script2) = workspace(&files, &long_session());
    let budget = 8000u64;
    let compacted = exec(
        &ws2,
        &script2,
        &[
            "--max-steps",
            "50",
            "--strategy",
            "compact",
            "--set",
            &format!("compact_budget={budget}"),
        ],
    );
    assert_eq!(compacted.code, 0, "{}", compacted.stderr);
    let (plain_max, compact_max) = (
        largest_prompt(&plain.events),
        largest_prompt(&compacted.events),
    );
    eprintln!(
        "largest prompt: default loop {plain_max} tokens, compact {compact_max} tokens (budget {budget} for the messages)"
    );
    assert!(
        plain_max > 3 * budget,
        "the session should outgrow the budget: {plain_max}"
    );
    // The prompt counts the system prompt and tool list as well (~1.9k).
    assert!(
        compact_max < budget + 2500,
        "compact's largest prompt {compact_max}"
    );
    assert!(!strategy_texts(&compacted.events, "compact").is_empty());
}

#[test]
fn policy_refuses_rm_rf_and_rewrites_dot_slash_paths() {
    let script = json!([
        {"tool_calls": [
            {"name": "shell", "arguments": {"command": "rm -rf src"}},
            {"name": "fs-read", "arguments": {"path": "./src/a.py"}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf /tmp/nib-scratch-x"}}]},
        "Done."
    ]);
    let (_d, ws, script) = workspace(&[("src/a.py", "x = 1\n")], &script);
    let run = exec(&ws, &script, &["--hook", "policy", "--approve", "writes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(ws.join("src/a.py").exists(), "rm -rf src must not have run");
    let refused = strategy_texts(&run.events, "refuse");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("recursive rm of src"), "{}", refused[0]);
    // The rewritten read ran on the clean path; the temp-dir rm ran.
    let calls = of_kind(&run.events, "tool.call");
    assert!(
        calls
            .iter()
            .any(|c| c["name"] == "fs-read" && c["args"]["path"] == "src/a.py")
    );
    assert!(
        calls
            .iter()
            .any(|c| c["name"] == "shell" && c["args"]["command"] == "rm -rf /tmp/nib-scratch-x")
    );
    assert!(!calls.iter().any(|c| c["args"]["command"] == "rm -rf src"));
}

#[test]
fn plan_stays_read_only_until_the_plan_is_approved() {
    let script = json!([
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "a.py", "content": "x = 2\n"}}]},
        "1. change x to 2",
        {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "a.py", "old": "x = 1", "new": "x = 2"}}]},
        "Changed x."
    ]);
    // Unattended, `ask` answers by policy: no, so the plan is the answer.
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
    let run = exec(&ws, &s, &["--strategy", "plan", "--approve", "writes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "1. change x to 2");
    assert_eq!(fs::read_to_string(ws.join("a.py")).unwrap(), "x = 1\n");
    assert!(strategy_texts(&run.events, "refuse")[0].contains("not approved yet"));
    let asked = of_kind(&run.events, "ask");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["answer"], false);
    // With the policy saying yes, the plan is carried out.
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
    let run = exec(
        &ws,
        &s,
        &[
            "--strategy",
            "plan",
            "--approve",
            "writes",
            "--set",
            "ask=yes",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "Changed x.");
    assert_eq!(fs::read_to_string(ws.join("a.py")).unwrap(), "x = 2\n");
}

#[test]
fn three_hook_files_compose_in_one_run() {
    let script = json!([
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf ."}}]},
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "./ok", "content": "1\n"}}]},
        "Done."
    ]);
    let (_d, ws, s) = workspace(&[("keep.txt", "k\n")], &script);
    let run = exec(
        &ws,
        &s,
        &[
            "--strategy",
            "check",
            "--hook",
            "policy",
            "--hook",
            "compact",
            "--approve",
            "writes",
            "--set",
            "check=test -f ok",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(ws.join("keep.txt").exists());
    assert!(ws.join("ok").exists());
    assert_eq!(strategy_texts(&run.events, "refuse").len(), 1);
    assert!(
        strategy_texts(&run.events, "say")
            .iter()
            .any(|t| t.contains("passed"))
    );
    let start = of_kind(&run.events, "session.start");
    assert_eq!(start[0]["strategy"], "check + policy + compact");
}

#[test]
fn a_strategy_file_is_found_from_the_current_directory_and_its_output_is_shown() {
    let (_d, ws, s) = workspace(&[], &json!(["Hello."]));
    fs::write(
        ws.join("my.scm"),
        "(displayln \"loading my strategy\")\n(on \"before-finish\" (lambda (text) (say (string-append \"finishing: \" text)) #f))\n",
    )
    .unwrap();
    let run = exec(&ws, &s, &["--strategy", "my.scm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("strategy: loading my strategy"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("strategy: finishing: Hello."),
        "{}",
        run.stderr
    );
    let missing = exec(&ws, &s, &["--strategy", "nope.scm"]);
    assert_ne!(missing.code, 0);
    assert!(
        missing.stderr.contains("not one nib ships"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_workspace_hook_may_only_tighten() {
    let script = json!([
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "a.txt", "content": "a\n"}}]},
        "Done."
    ]);
    // Its refusal counts; its attempt to rewrite the call does not.
    let hook = "(define (no-writes call) (if (equal? (assoc-ref call \"kind\" \"\") \"write\") (refuse \"the project forbids writes\") call))\n\
                (define (rewrite call) (assoc-set call \"name\" \"fs-list\"))\n\
                (on \"before-tool\" rewrite)\n(on \"before-tool\" no-writes)\n";
    let (_d, ws, s) = workspace(&[(".nib/hooks/10-project.scm", hook)], &script);
    let run = exec(&ws, &s, &["--approve", "writes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!ws.join("a.txt").exists());
    assert_eq!(
        strategy_texts(&run.events, "refuse"),
        ["fs-write: the project forbids writes"]
    );
    // A workspace hook that rebinds a name, or mutates, does not load.
    for bad in [
        "(define (run task options) (json-object \"status\" \"done\" \"text\" \"owned\" \"steps\" 0))\n",
        "(define x 1)\n(set! x 2)\n",
    ] {
        let (_d, ws, s) = workspace(&[(".nib/hooks/evil.scm", bad)], &json!(["Hello."]));
        let run = exec(&ws, &s, &[]);
        assert_ne!(run.code, 0, "{bad}");
        assert!(
            run.stderr
                .contains("a workspace hook may only add tightening hooks"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn hooks_see_typed_calls_and_can_ask_the_guard() {
    let script = json!([
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "a.py", "offset": 1, "limit": 5}}]},
        "Done."
    ]);
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n"), (".env", "TOKEN=abc\n")], &script);
    fs::write(
        ws.join("probe.scm"),
        "(on \"before-tool\" (lambda (call)\n\
           (let ([args (assoc-ref call \"args\" '())])\n\
             (say (string-append \"kind=\" (assoc-ref call \"kind\" \"\") \" limit+1=\" (number->string (+ 1 (assoc-ref args \"limit\" 0)))))\n\
             (say (string-append \"guard on .env write: \" (assoc-ref (guard-check (json-object \"name\" \"fs-write\" \"args\" (json-object \"path\" \".env\" \"content\" \"x\"))) \"decision\" \"\")))\n\
             call)))\n\
         (on \"after-tool\" (lambda (call result) (say (string-append \"after \" (assoc-ref call \"name\" \"\"))) result))\n",
    )
    .unwrap();
    let run = exec(&ws, &s, &["--hook", "probe.scm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let said = strategy_texts(&run.events, "say");
    assert!(
        said.contains(&"kind=read-only limit+1=6".to_string()),
        "{said:?}"
    );
    assert!(
        said.contains(&"guard on .env write: security".to_string()),
        "{said:?}"
    );
    assert!(said.contains(&"after fs-read".to_string()), "{said:?}");
}

#[test]
fn model_call_options_are_checked() {
    let (_d, ws, s) = workspace(&[], &json!(["quiet summary", "Hello."]));
    fs::write(
        ws.join("opts.scm"),
        "(on \"before-model\" (lambda (messages tools)\n\
           (let ([r (model-reply (list (json-object \"role\" \"user\" \"content\" \"sum up\")) 0 (json-object \"quiet\" #t \"tools\" '()))])\n\
             (say (string-append \"quiet reply: \" (assoc-ref r \"text\" \"\")))\n\
             (say (with-handler (lambda (e) \"refused\") (model-reply messages 0 (json-object \"temprature\" 1)) \"accepted\")))\n\
           messages))\n",
    )
    .unwrap();
    let run = exec(&ws, &s, &["--hook", "opts.scm"]);
    let said = strategy_texts(&run.events, "say");
    assert!(
        said.contains(&"quiet reply: quiet summary".to_string()),
        "{said:?} {}",
        run.stderr
    );
    assert!(said.contains(&"refused".to_string()), "{said:?}");
}

/// The hook examples of docs/strategies.md, exactly as the page prints
/// them (each after its `<!-- example: NAME -->` marker).
fn guide_example(name: &str) -> String {
    let guide =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/strategies.md"))
            .expect("docs/strategies.md");
    let marker = format!("<!-- example: {name} -->\n```scheme\n");
    let start = guide
        .find(&marker)
        .unwrap_or_else(|| panic!("the guide shows {name}"));
    let code = &guide[start + marker.len()..];
    code[..code.find("```").expect("the block ends")].to_string()
}

#[test]
fn the_guides_hook_examples_run_as_printed() {
    // refuse-rm: the model's rm -rf is refused, the model reads why.
    let script = json!([
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf build"}}]},
        "Done."
    ]);
    let (_d, ws, s) = workspace(&[("build/x", "x\n")], &script);
    fs::write(ws.join("hook.scm"), guide_example("refuse-rm")).unwrap();
    let run = exec(&ws, &s, &["--hook", "hook.scm", "--approve", "writes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(ws.join("build/x").exists());
    assert_eq!(strategy_texts(&run.events, "refuse").len(), 1);

    // test-before-finish: a failing test keeps the task going.
    let script = json!([
        "Done.",
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "test_ok.py", "content": "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n"}}]},
        "Done now."
    ]);
    let failing = "import unittest\n\nclass T(unittest.TestCase):\n    def test_fails(self):\n        self.fail('no')\n";
    let (_d, ws, s) = workspace(&[("test_bad.py", failing)], &script);
    fs::write(ws.join("hook.scm"), guide_example("test-before-finish")).unwrap();
    // The model's second try leaves the failing test in place: the hook
    // keeps the task going again, with the failures.
    let run = exec(&ws, &s, &["--hook", "hook.scm", "--approve", "writes"]);
    assert_eq!(
        strategy_texts(&run.events, "continue").len(),
        2,
        "{}",
        run.stderr
    );
    assert!(strategy_texts(&run.events, "continue")[0].contains("The tests fail"));

    // trim-results: with twelve results, the two oldest are elided.
    // (Two files in turn: the default loop stops a model that repeats one
    // call.)
    let mut replies: Vec<Value> = (0..12)
        .map(|i| json!({"tool_calls": [{"name": "fs-read", "arguments": {"path": (["a.py", "b.py"][i % 2])}}]}))
        .collect();
    replies.push(json!("Read."));
    let big = "value = 'a line the model reads'\n".repeat(200);
    let files = [("a.py", big.as_str()), ("b.py", big.as_str())];
    let (_d, ws, s) = workspace(&files, &Value::Array(replies.clone()));
    let plain = exec(&ws, &s, &[]);
    let (_d, ws, s) = workspace(&files, &Value::Array(replies));
    fs::write(ws.join("hook.scm"), guide_example("trim-results")).unwrap();
    let run = exec(&ws, &s, &["--hook", "hook.scm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (with_hook, without) = (largest_prompt(&run.events), largest_prompt(&plain.events));
    // Two results of ~1,900 tokens each were elided from the last request.
    assert!(with_hook + 3000 < without, "{with_hook} vs {without}");
}

#[test]
fn a_strategy_error_is_shown_once_with_its_place() {
    let (_d, ws, s) = workspace(&[], &json!(["Hello."]));
    fs::write(
        ws.join("bad.scm"),
        "(on \"before-finish\" (lambda (text)\n  (car 5)))\n",
    )
    .unwrap();
    let run = exec(&ws, &s, &["--hook", "bad.scm"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(all.matches("error[E03]: TypeMismatch").count(), 1, "{all}");
    assert!(all.contains("bad.scm:2:4"), "{all}");
    assert!(all.contains("car expected a list or pair"), "{all}");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

/// A llama-cpp-python-like server through `nib exec`: it drops streaming
/// requests that carry tools, reports no usage, and the model writes its
/// call as text; the log says what happened, honestly.
#[test]
fn a_local_server_is_handled_and_logged_honestly() {
    let quirks = json!({"stream_tools": false, "stream_usage": false});
    let script = json!([
        {"server": quirks, "text": "<tool_call>{\"name\": \"fs-read\", \"arguments\": {\"path\": \"a.py\"}}</tool_call>"},
        {"server": quirks, "tool_calls": [{"name": "fs-read", "arguments": "{\"path\": \"a.py\""}]},
        {"server": quirks, "text": "Read it."}
    ]);
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
    let run = exec(&ws, &s, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "Read it.");
    let resps = of_kind(&run.events, "llm.resp");
    // The first call found the server cannot stream tool calls.
    assert!(resps[0]["stream_fallback"].is_string(), "{:?}", resps[0]);
    assert_eq!(resps[0]["streamed"], false);
    // The call written as text was read, and the text kept.
    assert!(
        resps[0]["raw_text"]
            .as_str()
            .unwrap_or("")
            .contains("<tool_call>")
    );
    assert_eq!(resps[0]["tool_calls"], 1);
    // The arguments that are not JSON are kept exactly as received.
    let calls = of_kind(&run.events, "tool.call");
    let broken = calls
        .iter()
        .find(|c| c["raw_arguments"].is_string())
        .expect("the broken call is logged with its raw arguments");
    assert_eq!(broken["raw_arguments"], "{\"path\": \"a.py\"");

    // A server that streams but reports no usage: the counts are
    // estimates, and said to be.
    let quiet = json!({"stream_usage": false});
    let script = json!([
        {"server": quiet, "tool_calls": [{"name": "fs-read", "arguments": {"path": "a.py"}}]},
        {"server": quiet, "text": "Read it."}
    ]);
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
    let run = exec(&ws, &s, &["--max-tokens", "100000"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for r in of_kind(&run.events, "llm.resp") {
        assert_eq!(r["usage"]["reported"], false, "{r}");
        assert_eq!(r["usage"]["estimated"], true, "{r}");
        assert!(r["usage"]["prompt"].as_u64().unwrap_or(0) > 1000, "{r}");
        assert_eq!(r["streamed"], true, "{r}");
    }
    // The token budget counts the estimates.
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
    let run = exec(&ws, &s, &["--max-tokens", "500"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
}

/// `nib script` loads a strategy and drives the loop's own procedures
/// against the scripted model, hooks included.
#[test]
fn nib_script_drives_a_strategys_procedures() {
    let script = json!([
        {"tool_calls": [
            {"name": "fs-read", "arguments": {"path": "a.py"}},
            {"name": "shell", "arguments": {"command": "rm -rf ."}}]}
    ]);
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
    fs::write(
        ws.join("drive.scm"),
        "(define reply (model-reply (list (user-message \"read a.py\")) 1))\n\
         (define results (run-reply-calls (assoc-ref reply \"tool_calls\" '()) 1))\n\
         (displayln (string-append \"calls: \" (number->string (length results))))\n\
         (string-append (tool-text (car results)) \"|\" (tool-text (cadr results)))\n",
    )
    .unwrap();
    let root = ws.display().to_string();
    let out = Command::new(NIB)
        .args([
            "script",
            "drive.scm",
            "--root",
            &root,
            "--provider",
            "scripted",
            "--model",
            &s,
            "--hook",
            "policy",
            "--approve",
            "writes",
        ])
        .current_dir(&ws)
        .stdin(Stdio::null())
        .output()
        .expect("run nib script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("calls: 2"), "{stdout}");
    assert!(stdout.contains("x = 1"), "{stdout}");
    assert!(
        stdout.contains("refused by the session's strategy: policy: recursive rm"),
        "{stdout}"
    );
    assert!(ws.join("a.py").exists());
}

/// The guide's first example, `fix.scm`, as printed, through `nib script`.
#[test]
fn the_guides_script_example_runs_as_printed() {
    let guide =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/strategies.md"))
            .expect("docs/strategies.md");
    let start = guide
        .find("```scheme\n;; fix.scm\n")
        .expect("the guide shows fix.scm")
        + "```scheme\n".len();
    let code = &guide[start..];
    let code = &code[..code.find("```").expect("the block ends")];
    let (_d, ws, _s) = workspace(&[("src/app.py", "x = 1\ny = 2\n")], &json!([]));
    fs::write(ws.join("fix.scm"), code).unwrap();
    let root = ws.display().to_string();
    let out = Command::new(NIB)
        .args(["script", "fix.scm", "--root", &root, "--approve", "writes"])
        .current_dir(&ws)
        .stdin(Stdio::null())
        .output()
        .expect("run nib script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("x = 1"), "{stdout}");
    assert!(
        stdout.contains("applied 2 of 2 edits to src/app.py"),
        "{stdout}"
    );
    assert_eq!(
        fs::read_to_string(ws.join("src/app.py")).unwrap(),
        "x = 10\ny = 20\n"
    );
}

#[test]
fn unattended_questions_are_answered_by_policy_and_logged() {
    let (_d, ws, s) = workspace(&[], &json!(["Done."]));
    fs::write(
        ws.join("ask.scm"),
        "(on \"before-finish\" (lambda (text)\n\
           (say (string-append \"picked \" (let ([c (ask-choice \"Which one?\" (list \"alpha\" \"beta\"))]) (if c c \"nothing\"))\n\
                               \", text \" (let ([t (ask-text \"Why?\")]) (if t t \"none\"))))\n\
           #f))\n",
    )
    .unwrap();
    let run = exec(&ws, &s, &["--hook", "ask.scm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(strategy_texts(&run.events, "say").contains(&"picked nothing, text none".to_string()));
    let run = exec(
        &ws,
        &s,
        &[
            "--hook",
            "ask.scm",
            "--set",
            "ask=yes",
            "--set",
            "ask_text=short",
        ],
    );
    assert!(strategy_texts(&run.events, "say").contains(&"picked alpha, text short".to_string()));
    let asks = of_kind(&run.events, "ask");
    assert_eq!(asks.len(), 2);
    assert!(asks.iter().all(|a| a["by"] == "policy"));
}

/// A hook file `name` in the workspace.
fn hook_file(ws: &Path, name: &str, text: &str) {
    fs::write(ws.join(name), text).expect("hook file");
}

#[test]
fn a_hook_with_a_wrong_result_or_arity_fails_closed_and_names_its_line() {
    let write = json!([
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "out.txt", "content": "x\n"}}]},
        "Done."
    ]);
    // (point, the hook's lambda, what the error says)
    let cases = [
        ("before-tool", "(lambda (call) #f)", "returned #f"),
        (
            "before-tool",
            "(lambda (call) \"fine\")",
            "returned a string",
        ),
        (
            "before-model",
            "(lambda (messages tools) 5)",
            "returned a number",
        ),
        (
            "after-reply",
            "(lambda (reply) \"ok\")",
            "returned a string",
        ),
        (
            "after-tool",
            "(lambda (call result) 'done)",
            "returned a symbol",
        ),
        ("task-start", "(lambda (task) 3)", "returned a number"),
        (
            "before-tool",
            "(lambda (call extra) call)",
            "takes 1 argument",
        ),
        (
            "after-tool",
            "(lambda (result) result)",
            "takes 2 arguments",
        ),
    ];
    for (point, hook, says) in cases {
        let (_d, ws, s) = workspace(&[], &write);
        hook_file(
            &ws,
            "mine.scm",
            &format!(";; a hook with a mistake\n\n(on \"{point}\"\n    {hook})\n"),
        );
        let run = exec(&ws, &s, &["--hook", "mine.scm", "--approve", "writes"]);
        assert_ne!(run.code, 0, "{point} {hook}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{point} {hook}: {}", run.stderr);
        // The place is the user's file and the hook's line.
        assert!(run.stderr.contains("mine.scm:4"), "{point}: {}", run.stderr);
        assert!(!run.stderr.contains("default.scm"), "{}", run.stderr);
        if point != "after-tool" && point != "after-reply" {
            assert!(
                !ws.join("out.txt").exists(),
                "{point} {hook}: the write ran"
            );
        }
        assert_eq!(run.stderr.matches(says).count(), 1, "{}", run.stderr);
    }
    // before-finish: a value that is neither #f nor a string.
    let (_d, ws, s) = workspace(&[], &json!(["Done."]));
    hook_file(
        &ws,
        "fin.scm",
        "(on \"before-finish\" (lambda (text) #t))\n",
    );
    let run = exec(&ws, &s, &["--hook", "fin.scm"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("fin.scm:1"), "{}", run.stderr);
}

#[test]
fn offered_tools_are_enforced_and_hooks_run_under_a_custom_run() {
    let script = json!([
        {"tool_calls": [
            {"name": "fs-write", "arguments": {"path": "out.txt", "content": "x\n"}},
            {"name": "invented-tool", "arguments": {}},
            {"name": "fs-read", "arguments": {"path": "a.py"}}
        ]},
        "Done."
    ]);
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
    // A read-only mode as one hook: only fs-read is offered.
    hook_file(
        &ws,
        "readonly.scm",
        "(on \"before-model\" (lambda (messages tools) (offer messages (list \"fs-read\"))))\n",
    );
    // A custom loop in another file: the hooks of every file still run.
    hook_file(
        &ws,
        "loop.scm",
        "(define (run task options)\n\
           (let* ([reply (model-reply (list (json-object \"role\" \"user\" \"content\" task)) 1)]\n\
                  [results (run-calls (assoc-ref reply \"tool_calls\" '()) 1)])\n\
             (json-object \"status\" \"done\" \"steps\" 1\n\
               \"text\" (string-join (map (lambda (r) (string-append (assoc-ref r \"name\" \"\") \": \" (if (tool-ok? r) \"ok\" (tool-text r)))) results) \"\\n\"))))\n",
    );
    hook_file(
        &ws,
        "count.scm",
        "(on \"before-tool\" (lambda (call) (say (string-append \"saw \" (assoc-ref call \"name\" \"\"))) call))\n",
    );
    let run = exec(
        &ws,
        &s,
        &[
            "--strategy",
            "loop.scm",
            "--hook",
            "readonly.scm",
            "--hook",
            "count.scm",
            "--approve",
            "writes",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!ws.join("out.txt").exists(), "a tool not offered ran");
    assert!(
        run.stdout
            .contains("fs-write: refused: `fs-write` was not offered"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("invented-tool: refused"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("fs-read: ok"), "{}", run.stdout);
    // The request offered one tool.
    let req = of_kind(&run.events, "llm.req");
    assert_eq!(req[0]["tools"], 1, "{req:?}");
    assert_eq!(strategy_texts(&run.events, "say").len(), 3);
}

#[test]
fn hooks_stop_the_run_see_the_task_and_keep_session_state() {
    let script = json!([
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "a.py"}}]},
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "a.py", "offset": 1}}]},
        "Done."
    ]);
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
    hook_file(
        &ws,
        "budget.scm",
        ";; a budget over the whole session, with its own model calls counted\n\
         (on \"task-start\" (lambda (task) (string-append task \" (be brief)\")))\n\
         (on \"before-model\" (lambda (messages tools)\n\
           (say (string-append \"task: \" (task-text)))\n\
           (session-set! \"calls\" (+ 1 (session-get \"calls\" 0)))\n\
           (if (> (assoc-ref (session-usage) \"calls\" 0) 0)\n\
               (stop \"token_limit\" (string-append \"budget spent after \" (number->string (session-get \"calls\" 0)) \" calls\"))\n\
               #f)))\n\
         (on \"session-end\" (lambda (summary)\n\
           (say (string-append \"session used \" (number->string (assoc-ref (assoc-ref summary \"usage\" '()) \"calls\" 0)) \" model calls\"))\n\
           #f))\n",
    );
    let run = exec(&ws, &s, &["--hook", "budget.scm"]);
    assert_eq!(run.code, 4, "{} {}", run.stdout, run.stderr);
    let said = strategy_texts(&run.events, "say");
    assert!(said.contains(&"task: do the task".to_string()), "{said:?}");
    assert!(
        said.contains(&"session used 1 model calls".to_string()),
        "{said:?}"
    );
    assert!(
        run.stderr.contains("budget spent after 2 calls"),
        "{}",
        run.stderr
    );
    // The task the model got carries the task-start hook's words.
    let ended = of_kind(&run.events, "turn.end");
    assert_eq!(ended[0]["reason"], "token_limit", "{ended:?}");
    // The steps the run made are reported, not 0.
    assert_eq!(ended[0]["step"], 1, "{ended:?}");
}

#[test]
fn a_strategy_can_ask_another_model_and_its_usage_counts() {
    // The scripted server answers whatever model is named; the log says
    // which one was asked.
    let (_d, ws, s) = workspace(&[], &json!(["Main answer.", "a cheap summary"]));
    hook_file(
        &ws,
        "review.scm",
        "(on \"before-finish\" (lambda (text)\n\
               (let ([r (model-reply (list (json-object \"role\" \"user\" \"content\" text)) 0\n\
                          (json-object \"model\" \"cheap-model\" \"quiet\" #t \"tools\" '()))])\n\
                 (say (string-append \"review: \" (assoc-ref r \"text\" \"\")))\n\
                 (say (string-append \"calls: \" (number->string (assoc-ref (task-usage) \"calls\" 0))))\n\
                 #f)))\n",
    );
    let run = exec(&ws, &s, &["--hook", "review.scm"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let said = strategy_texts(&run.events, "say");
    assert!(
        said.contains(&"review: a cheap summary".to_string()),
        "{said:?}"
    );
    assert!(said.contains(&"calls: 2".to_string()), "{said:?}");
    let asked: Vec<&Value> = of_kind(&run.events, "llm.req")
        .into_iter()
        .map(|e| &e["model"])
        .collect();
    assert_eq!(asked[1], "cheap-model", "{asked:?}");
}

#[test]
fn a_model_repeating_one_call_is_told_once_then_stopped() {
    let replies: Vec<Value> = (0..8)
        .map(|_| json!({"tool_calls": [{"name": "git-status", "arguments": {}}]}))
        .collect();
    let (_d, ws, s) = workspace(&[], &Value::Array(replies));
    let run = exec(&ws, &s, &[]);
    assert_ne!(run.code, 0);
    assert_eq!(strategy_texts(&run.events, "repeat").len(), 1);
    assert!(
        run.stderr
            .contains("same call (git-status) 5 times in a row"),
        "{}",
        run.stderr
    );
}

#[test]
fn nib_strategy_lists_checks_and_starts_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nib = |args: &[&str]| {
        let out = Command::new(NIB)
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run nib");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // new: a starting file that checks clean, and is never overwritten.
    let (code, out, _) = nib(&["strategy", "new", "guard-push"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, err) = nib(&["strategy", "check", "guard-push.scm"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("before-tool    hook at guard-push.scm:13"),
        "{out}"
    );
    let (code, _, err) = nib(&["strategy", "new", "guard-push"]);
    assert_eq!(code, 1);
    assert!(err.contains("exists"), "{err}");
    // list: shipped and found.
    let (code, out, _) = nib(&["strategy", "list"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("compact") && out.contains("guard-push.scm"),
        "{out}"
    );
    // check: a shipped one, a broken one (its file and line), a typo.
    let (_, out, _) = nib(&["strategy", "check", "policy"]);
    assert_eq!(out.matches("before-tool").count(), 2, "{out}");
    fs::write(
        dir.path().join("broken.scm"),
        "\n(on \"after-tool\" (lambda (result) result))\n",
    )
    .unwrap();
    let (code, _, err) = nib(&["strategy", "check", "broken.scm"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("broken.scm:2") && err.contains("takes 2 arguments"),
        "{err}"
    );
    let (code, _, err) = nib(&["strategy", "check", "polcy"]);
    assert_eq!(code, 1);
    assert!(err.contains("did you mean `policy`?"), "{err}");
}

#[test]
fn a_hook_past_its_time_limit_is_stopped_and_named() {
    let script = json!([
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "out.txt", "content": "x\n"}}]},
        "Done."
    ]);
    let (_d, ws, s) = workspace(&[], &script);
    hook_file(
        &ws,
        "spin.scm",
        ";; a hook that never returns\n(on \"before-tool\"\n    (lambda (call) (let loop ([i 0]) (loop (+ i 1)))))\n",
    );
    let run = exec(
        &ws,
        &s,
        &[
            "--hook",
            "spin.scm",
            "--set",
            "hook_timeout=0.5",
            "--approve",
            "writes",
        ],
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr
            .contains("the hook registered at spin.scm:3 ran longer than 0.5 s"),
        "{}",
        run.stderr
    );
    assert!(!ws.join("out.txt").exists());
    let (_d, ws, s) = workspace(&[], &script);
    let run = exec(&ws, &s, &["--set", "hook_timeout=soon"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("hook_timeout takes a number"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_guides_toolbox_examples_run_as_printed() {
    // ask-commands: unattended, ask says no: the command is refused; with
    // --set ask=yes it runs.
    let script = json!([
        {"tool_calls": [{"name": "shell", "arguments": {"command": "touch ran"}}]},
        "Done."
    ]);
    for (extra, runs) in [(None, false), (Some("ask=yes"), true)] {
        let (_d, ws, s) = workspace(&[], &script);
        hook_file(&ws, "hook.scm", &guide_example("ask-commands"));
        let mut args = vec!["--hook", "hook.scm", "--approve", "writes"];
        if let Some(set) = extra {
            args.extend(["--set", set]);
        }
        let run = exec(&ws, &s, &args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(ws.join("ran").exists(), runs, "{}", run.stderr);
    }

    // plan-mode: the write before approval was not offered; after, it runs.
    let script = json!([
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "early.txt", "content": "x\n"}}]},
        "Plan: write out.txt.",
        {"tool_calls": [{"name": "fs-write", "arguments": {"path": "out.txt", "content": "x\n"}}]},
        "Done."
    ]);
    let (_d, ws, s) = workspace(&[], &script);
    hook_file(&ws, "hook.scm", &guide_example("plan-mode"));
    let run = exec(
        &ws,
        &s,
        &[
            "--hook",
            "hook.scm",
            "--approve",
            "writes",
            "--set",
            "ask=yes",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!ws.join("early.txt").exists() && ws.join("out.txt").exists());
    let tools: Vec<u64> = of_kind(&run.events, "llm.req")
        .iter()
        .map(|e| e["tools"].as_u64().unwrap_or(0))
        .collect();
    assert!(tools[0] < tools[3], "{tools:?}");

    // reviewer: one objection keeps the task going; LGTM ends it.
    let script = json!([
        "Answer one.",
        "It misses the edge case.",
        "Answer two.",
        "LGTM"
    ]);
    let (_d, ws, s) = workspace(&[], &script);
    hook_file(&ws, "hook.scm", &guide_example("reviewer"));
    let run = exec(
        &ws,
        &s,
        &["--hook", "hook.scm", "--set", "review_model=small-model"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "Answer two.");
    assert_eq!(strategy_texts(&run.events, "continue").len(), 1);

    // budget: stopped once the session's usage passes the limit.
    let replies: Vec<Value> = (0..4)
        .map(|i| json!({"tool_calls": [{"name": "fs-read", "arguments": {"path": "a.py", "offset": i + 1}}]}))
        .collect();
    let (_d, ws, s) = workspace(&[("a.py", "x = 1\ny = 2\n")], &Value::Array(replies));
    hook_file(&ws, "hook.scm", &guide_example("budget"));
    let run = exec(&ws, &s, &["--hook", "hook.scm", "--set", "budget=3000"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("the session's budget is spent"),
        "{}",
        run.stderr
    );
    assert_eq!(of_kind(&run.events, "llm.req").len(), 2);
}

#[test]
fn usage_from_scheme_carries_the_cost_when_prices_are_known() {
    let hook = "(on \"before-finish\" (lambda (text)\n\
                  (let ([c (assoc-ref (session-usage) \"cost_usd\" #f)])\n\
                    (say (if c (string-append \"cost: \" (number->string c)) \"cost: unknown\")))\n\
                  #f))\n";
    for (prices, priced) in [("[prices]\n\"*\" = [1.0, 2.0]\n", true), ("", false)] {
        let (_d, ws, s) = workspace(&[], &json!(["Main answer."]));
        hook_file(&ws, "cost.scm", hook);
        let config = tempfile::tempdir().expect("config dir");
        fs::create_dir_all(config.path().join("nib")).expect("nib dir");
        fs::write(config.path().join("nib/config.toml"), prices).expect("config");
        let root = ws.display().to_string();
        let out = Command::new(NIB)
            .args([
                "exec",
                "do the task",
                "--root",
                &root,
                "--provider",
                "scripted",
            ])
            .args(["--model", &s, "--hook", "cost.scm"])
            .env("XDG_CONFIG_HOME", config.path())
            .current_dir(&ws)
            .stdin(Stdio::null())
            .output()
            .expect("run nib");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = strategy_texts(&events(&ws), "say");
        let cost = said
            .iter()
            .find_map(|t| t.strip_prefix("cost: "))
            .expect("the hook said");
        if priced {
            let usd: f64 = cost.parse().expect("a number");
            assert!(usd > 0.0, "{said:?}");
        } else {
            assert_eq!(cost, "unknown", "{said:?}");
        }
    }
}

/// A stop mid-step (from before-tool, after the step's reply) and an error
/// mid-step report the steps that ran, the same in the log's turn end, the
/// run's result and the line `nib exec` prints.
#[test]
fn a_stop_or_an_error_mid_step_counts_the_steps_that_ran() {
    let script = json!([
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "a.py"}}]},
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "a.py", "offset": 1}}]},
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "a.py", "offset": 2}}]},
        "Done."
    ]);
    for (hook, code) in [
        (
            "(define calls (box 0))\n\
             (on \"before-tool\" (lambda (call)\n\
               (set-box! calls (+ 1 (unbox calls)))\n\
               (if (= (unbox calls) 2) (stop \"error\" \"enough after two reads\") call)))\n",
            1,
        ),
        (
            "(define calls (box 0))\n\
             (on \"after-tool\" (lambda (call result)\n\
               (set-box! calls (+ 1 (unbox calls)))\n\
               (if (= (unbox calls) 2) (car '()) #f)))\n",
            1,
        ),
        // At the third step's before-model, a summary of the hook's own
        // (numbered like the step it is in), then a stop: two steps ran.
        (
            "(define asked (box 0))\n\
             (on \"before-model\" (lambda (messages tools)\n\
               (set-box! asked (+ 1 (unbox asked)))\n\
               (if (= (unbox asked) 3)\n\
                   (let ([r (model-reply (list (json-object \"role\" \"user\" \"content\" \"sum up\")) 3\n\
                                         (json-object \"quiet\" #t \"tools\" '()))])\n\
                     (stop \"token_limit\" (string-append \"stopped after a summary: \" (assoc-ref r \"text\" \"\"))))\n\
                   #f)))\n",
            4,
        ),
    ] {
        let (_d, ws, s) = workspace(&[("a.py", "x = 1\n")], &script);
        hook_file(&ws, "mid.scm", hook);
        let run = exec(&ws, &s, &["--hook", "mid.scm"]);
        assert_eq!(run.code, code, "{} {}", run.stdout, run.stderr);
        let ended = of_kind(&run.events, "turn.end");
        assert_eq!(ended[0]["step"], 2, "{hook}: {ended:?}");
        let result = of_kind(&run.events, "result");
        assert_eq!(result[0]["steps"], 2, "{hook}: {result:?}");
        assert!(run.stderr.contains("; 2 steps,"), "{hook}: {}", run.stderr);
        assert!(!run.stderr.contains("after 0 steps"), "{}", run.stderr);
    }
}
