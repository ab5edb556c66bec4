//! `nib exec` end to end: the real binary, the default Scheme strategy, the
//! real model client against the scripted model over HTTP on 127.0.0.1 (in
//! each wire protocol), the guard, real files, the event log, `nib stats`.

use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};

use std::process::{Command, Stdio};

use crate::support::{self, NIB, Run, kinds};

fn nib(args: &[&str], cwd: &Path) -> Run {
    support::nib(args, cwd, None)
}

/// `nib exec TASK --root WS --provider scripted --model SCRIPT [extra...]`.
fn exec_scripted(ws: &Path, script: &str, task: &str, extra: &[&str]) -> Run {
    let root = ws.display().to_string();
    let mut args = vec![
        "exec",
        task,
        "--root",
        &root,
        "--provider",
        "scripted",
        "--model",
        script,
    ];
    args.extend_from_slice(extra);
    nib(&args, ws)
}

/// A workspace with a buggy module, and a script file beside it.
fn setup(script: &Value) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let ws = dir.path().join("ws");
    fs::create_dir(&ws).expect("ws");
    fs::write(
        ws.join("calc.py"),
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
    )
    .expect("calc.py");
    let script_path = dir.path().join("script.json");
    fs::write(&script_path, script.to_string()).expect("script");
    (dir, ws, script_path.display().to_string())
}

const FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";

/// Read, fix with one fs-edit carrying two edits, check with shell, finish.
fn fix_script() -> Value {
    json!([
        {"text": "Let me look.", "tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}]},
        {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "edits": [
            {"old": "def add(a, b):\n    return a - b", "new": "def add(a, b):\n    return a + b"},
            {"old": "def mul(a, b):\n    return a + b", "new": "def mul(a, b):\n    return a * b"}]}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "python3 -c 'import calc; assert calc.add(2, 3) == 5 and calc.mul(2, 3) == 6; print(\"checks pass\")'"}}]},
        "Fixed add and mul; the check passes."
    ])
}

/// The events of the first session in the workspace.
fn events(ws: &Path) -> Vec<Value> {
    support::read_jsonl(Path::new(&events_path(ws)))
}

fn events_path(ws: &Path) -> String {
    let dir = fs::read_dir(ws.join(".nib/sessions"))
        .expect("sessions")
        .filter_map(Result::ok)
        .next()
        .expect("a session");
    dir.path().join("events.jsonl").display().to_string()
}

#[test]
fn a_task_end_to_end_in_each_protocol() {
    for protocol in ["openai", "ollama", "anthropic"] {
        let (_d, ws, script) = setup(&fix_script());
        let root = ws.display().to_string();
        let run = nib(
            &[
                "exec",
                "fix calc.py",
                "--root",
                &root,
                "--provider",
                "scripted",
                "--model",
                &script,
                "--scripted-protocol",
                protocol,
                "--approve",
                "writes",
            ],
            &ws,
        );
        assert_eq!(run.code, 0, "{protocol}: {}", run.stderr);
        assert_eq!(run.stdout, "Fixed add and mul; the check passes.\n");
        assert_eq!(
            fs::read_to_string(ws.join("calc.py")).expect("read"),
            FIXED,
            "{protocol}"
        );
        let evs = events(&ws);
        let k = kinds(&evs);
        assert_eq!(k.first().map(String::as_str), Some("session.start"));
        assert_eq!(k.last().map(String::as_str), Some("turn.end"));
        assert_eq!(
            k.iter().filter(|e| *e == "llm.resp").count(),
            4,
            "{protocol}: {k:?}"
        );
        let shell = evs
            .iter()
            .find(|e| e["ev"] == "tool.result" && e["name"] == "shell")
            .expect("shell result");
        assert_eq!(shell["ok"], true);
        let edit = evs
            .iter()
            .find(|e| e["ev"] == "tool.result" && e["name"] == "fs-edit")
            .expect("edit result");
        assert_eq!(
            (edit["ok"].clone(), edit["edits"].clone()),
            (json!(true), json!(2))
        );
        assert!(k.contains(&"write".to_string()));
        let stats = nib(&["stats", "--json", &events_path(&ws)], &ws);
        assert_eq!(stats.code, 0, "{}", stats.stderr);
        let s: Value = serde_json::from_str(&stats.stdout).expect("stats JSON");
        let text = stats.stdout.clone();
        assert!(text.contains("\"requests\": 4"), "{protocol}: {text}");
        assert_eq!(s["total"]["fs_edit"]["calls"], 1, "{text}");
    }
}

#[test]
fn a_cut_stream_is_retried_and_a_429_waited_out() {
    let script = json!([
        {"text": "Reading.", "tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}], "faults": [{"status": 429}]},
        {"text": "This reply is cut short by the network and never finishes", "faults": [{"cut_after": 40}]},
        "All read."
    ]);
    let (_d, ws, script) = setup(&script);
    let run = exec_scripted(&ws, &script, "look", &[]);
    // The cut reply is used up; the retry gets the next one.
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "All read.\n");
    let k = kinds(&events(&ws));
    assert!(k.contains(&"error".to_string()), "{k:?}");
}

#[test]
fn malformed_arguments_reach_the_model_as_a_tool_error() {
    let script = json!([
        {"tool_calls": [{"name": "fs-edit", "arguments": "{\"path\": \"calc.py\", \"old\": \"a - b\""}]},
        {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
        "Done."
    ]);
    let (_d, ws, script) = setup(&script);
    let run = exec_scripted(&ws, &script, "fix", &["--approve", "writes", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSONL"))
        .collect();
    let results: Vec<&Value> = evs.iter().filter(|e| e["ev"] == "tool.result").collect();
    assert_eq!(results[0]["ok"], false);
    assert_eq!(results[0]["kind"], "invalid");
    assert!(
        results[0]["summary"]
            .as_str()
            .unwrap_or("")
            .contains("not valid JSON"),
        "{}",
        results[0]
    );
    assert_eq!(results[1]["ok"], true);
    assert!(
        fs::read_to_string(ws.join("calc.py"))
            .expect("read")
            .contains("return a + b")
    );
}

#[test]
fn a_refused_confirm_exits_3_and_changes_nothing() {
    let script = json!([
        {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
        "I could not edit the file."
    ]);
    let (_d, ws, script) = setup(&script);
    let before = fs::read_to_string(ws.join("calc.py")).expect("read");
    let run = exec_scripted(&ws, &script, "fix", &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(
        fs::read_to_string(ws.join("calc.py")).expect("read"),
        before
    );
    let evs = events(&ws);
    let confirm = evs
        .iter()
        .find(|e| e["ev"] == "confirm")
        .expect("confirm event");
    assert_eq!(
        (confirm["kind"].clone(), confirm["answer"].clone()),
        (json!("write"), json!("no"))
    );
}

#[test]
fn the_step_limit_exits_4() {
    let script = json!([
        {"tool_calls": [{"name": "git-status", "arguments": {}}]},
        {"tool_calls": [{"name": "git-status", "arguments": {}}]},
        {"tool_calls": [{"name": "git-status", "arguments": {}}]}
    ]);
    let (_d, ws, script) = setup(&script);
    let run = exec_scripted(&ws, &script, "loop", &["--max-steps", "2"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    let last = events(&ws).pop().expect("events");
    assert_eq!(last["reason"], "step_limit");
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().expect("temp");
    let run = nib(&["exec", "x", "--provider", "openai"], dir.path());
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--model"), "{}", run.stderr);
    let run = nib(
        &["exec", "", "--provider", "scripted", "--model", "hello"],
        dir.path(),
    );
    assert_eq!(run.code, 2);
}

#[test]
fn the_user_config_supplies_the_model_and_flags_override_it() {
    let (dir, ws, script) = setup(&json!(["From the config's script."]));
    let config = dir.path().join("config");
    fs::create_dir_all(config.join("nib")).expect("config dir");
    fs::write(
        config.join("nib/config.toml"),
        format!("provider = \"scripted\"\nmodel = {script:?}\n"),
    )
    .expect("config");
    let out = Command::new(NIB)
        .args(["exec", "hi", "--root"])
        .arg(&ws)
        .env("XDG_CONFIG_HOME", &config)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "From the config's script.\n"
    );
    fs::write(config.join("nib/config.toml"), "modle = \"typo\"\n").expect("config");
    let out = Command::new(NIB)
        .args(["exec", "hi", "--root"])
        .arg(&ws)
        .env("XDG_CONFIG_HOME", &config)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("modle"));
}

/// README's commands, as written: the first is `nib demo` (run end to end
/// by tests/tui.rs), and the headless example further down runs.
#[test]
fn the_readme_session_runs() {
    let readme = include_str!("../../README.md");
    let first = readme
        .lines()
        .skip_while(|l| *l != "```sh")
        .nth(1)
        .expect("README has a sh block");
    assert_eq!(first, "cargo run --release -- demo");
    let help = nib(&["demo", "--help"], Path::new("."));
    assert_eq!(help.code, 0, "{}", help.stderr);
    let exec = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -- exec "))
        .expect("README shows a headless exec example");
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().display().to_string();
    let words = shell_words(&exec["cargo run --release -- ".len()..]);
    let args: Vec<&str> = words
        .iter()
        .map(|w| {
            if w == "$(mktemp -d)" {
                root.as_str()
            } else {
                w.as_str()
            }
        })
        .collect();
    assert!(args.contains(&"--root"), "{args:?}");
    // From the repository root, as README says (the script path is relative).
    let run = nib(&args, Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("Hello, nib!"), "{}", run.stdout);
    assert!(run.stderr.contains("ok: Hello, nib!"), "{}", run.stderr);
    let greet = fs::read_to_string(dir.path().join("greet.py")).expect("greet.py");
    assert!(
        greet.contains("def greet(name, punctuation=\"!\"):"),
        "{greet}"
    );
    assert!(greet.contains("greet(\"nib\")"), "{greet}");
}

/// Words of a one-line shell command: spaces split, double quotes group.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// docs/strategies.md's smallest loop, as the page prints it, runs a whole
/// session.
#[test]
fn the_strategies_guide_loop_runs() {
    let guide =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/strategies.md"))
            .expect("docs/strategies.md");
    let start = guide
        .find("The smallest useful loop, in full:\n\n```scheme\n")
        .expect("the guide shows the smallest loop");
    let code = &guide[start..];
    let code = &code[code.find("(define").expect("its code")..];
    let code = &code[..code.find("```").expect("the block ends")];
    let (dir, ws, script) = setup(&fix_script());
    let strategy = dir.path().join("small.scm");
    fs::write(&strategy, code).expect("write the strategy");
    let strategy = strategy.display().to_string();
    let run = exec_scripted(
        &ws,
        &script,
        "fix calc.py",
        &["--approve", "writes", "--strategy", &strategy],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        fs::read_to_string(ws.join("calc.py")).expect("calc.py"),
        FIXED
    );
}

/// The run's --timeout stops a command that would outlast it.
#[test]
fn the_run_timeout_stops_a_running_command() {
    let script = json!([
        {"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 60", "timeout": 600}}]},
        "done"
    ]);
    let (_dir, ws, script) = setup(&script);
    let started = std::time::Instant::now();
    let run = exec_scripted(
        &ws,
        &script,
        "wait",
        &["--approve", "writes", "--timeout", "2"],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // The run's own limit is named as such, never as the user's doing.
    assert!(run.stderr.contains("time limit"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("the user interrupted"),
        "{}",
        run.stderr
    );
}

/// A model call the run's --timeout ends: the deadline is the cause
/// printed, well inside the hard bound.
#[test]
fn the_run_timeout_in_a_model_call_is_the_error_and_not_retried() {
    let script = json!([
        {"text": "late", "faults": [{"delay_first_byte_ms": 20000}]},
        "a retry's answer"
    ]);
    let (_dir, ws, script) = setup(&script);
    let started = std::time::Instant::now();
    let run = exec_scripted(&ws, &script, "wait", &["--timeout", "2"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("the run's time limit"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("a retry's answer"), "{}", run.stdout);
    // One error, the deadline's (the client sends no request after it:
    // tests/model/hostile.rs).
    let all = kinds(&events(&ws));
    assert_eq!(
        all.iter().filter(|k| *k == "error").count(),
        1,
        "{all:?}\n{}",
        run.stderr
    );
}
