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
        // The task's end, then the run's result with its totals.
        assert_eq!(k[k.len() - 2..], ["turn.end", "result"]);
        let result = &evs[evs.len() - 1];
        assert_eq!(
            (&result["status"], &result["exit_code"], &result["steps"]),
            (&json!("done"), &json!(0), &json!(4)),
            "{protocol}"
        );
        assert!(
            result["usage"]["prompt"].as_u64().unwrap_or(0) > 0,
            "{result}"
        );
        // A scripted model has no price: no cost rather than a made-up one.
        assert!(result.get("cost_usd").is_none(), "{result}");
        assert_eq!(
            k.iter().filter(|e| *e == "llm.resp").count(),
            4,
            "{protocol}: {k:?}"
        );
        // The server's own prompt-evaluation time, where the protocol
        // carries it (Ollama's prompt_eval_duration: the scripted server
        // says 400 ms), for `nib compare`.
        let prompt_ms: Vec<&Value> = evs
            .iter()
            .filter(|e| e["ev"] == "llm.resp")
            .map(|e| &e["prompt_ms"])
            .collect();
        if protocol == "ollama" {
            assert!(
                prompt_ms.iter().all(|v| v.as_f64() == Some(400.0)),
                "{prompt_ms:?}"
            );
        }
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
    let evs = events(&ws);
    let end = evs
        .iter()
        .rfind(|e| e["ev"] == "turn.end")
        .expect("turn.end");
    assert_eq!(end["reason"], "step_limit");
    let result = evs.last().expect("events");
    assert_eq!(
        (&result["status"], &result["exit_code"]),
        (&json!("step_limit"), &json!(4))
    );
    // Said in words, with the flag that raises it.
    assert!(
        run.stderr.contains("step limit (2; --max-steps"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("step_limit"), "{}", run.stderr);
}

/// The user config's [prices] prices the run: the cost is in the
/// `result` event and on the last line; a run's time limit exits 4.
#[test]
fn the_result_carries_the_cost_and_the_time_limit_exits_4() {
    let (_d, ws, script) = setup(&json!(["nothing to do"]));
    let home = ws.parent().expect("parent").join("home");
    fs::create_dir_all(home.join("nib")).expect("config dir");
    // The scripted server names the model after the script's file stem.
    fs::write(
        home.join("nib/config.toml"),
        "[prices]\n\"*\" = [1000000, 2000000]\n",
    )
    .expect("config");
    let out = Command::new(NIB)
        .args(["exec", "hi", "--json", "--root"])
        .arg(&ws)
        .args(["--provider", "scripted", "--model", &script])
        .env("XDG_CONFIG_HOME", &home)
        .current_dir(&ws)
        .stdin(Stdio::null())
        .output()
        .expect("run nib");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines = support::jsonl(&String::from_utf8_lossy(&out.stdout), "stdout");
    let result = lines.last().expect("a result");
    assert_eq!(result["ev"], "result");
    let u = &result["usage"];
    let want = u["prompt"].as_f64().unwrap_or(0.0) + 2.0 * u["completion"].as_f64().unwrap_or(0.0);
    let cost = result["cost_usd"].as_f64().expect("a cost");
    assert!((cost - want).abs() < 1e-6, "{cost} vs {want}");
    assert!(stderr.contains(", $"), "{stderr}");
    // `nib sessions` lists it with its status, task and cost.
    let listed = Command::new(NIB)
        .args(["sessions", "--json", "--root"])
        .arg(&ws)
        .env("XDG_CONFIG_HOME", &home)
        .output()
        .expect("nib sessions");
    let rows = support::jsonl(&String::from_utf8_lossy(&listed.stdout), "sessions");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (&rows[0]["status"], &rows[0]["task"]),
        (&json!("done"), &json!("hi"))
    );
    assert!((rows[0]["cost_usd"].as_f64().unwrap_or(0.0) - cost).abs() < 1e-6);
    assert_eq!(rows[0]["id"], result["session"]);
    let table = Command::new(NIB)
        .args(["sessions", "--root"])
        .arg(&ws)
        .env("XDG_CONFIG_HOME", &home)
        .output()
        .expect("nib sessions");
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("done") && table.contains("  hi"), "{table}");

    let script = json!([
        {"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 60", "timeout": 600}}]},
        "done"
    ]);
    let (_d, ws, script) = setup(&script);
    let run = exec_scripted(
        &ws,
        &script,
        "wait",
        &["--approve", "writes", "--timeout", "2"],
    );
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("time limit (2 s; --timeout"),
        "{}",
        run.stderr
    );
    assert_eq!(events(&ws).last().expect("events")["status"], "time_limit");
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

/// The processes whose command line contains `needle` (from /proc).
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if line.contains(needle) {
            found.push(format!("{}: {line}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// SIGINT, SIGTERM and SIGHUP to `nib exec` while the model's command
/// sleeps: the command is stopped with its process group (nothing is left
/// running), the log ends with `interrupted` and `result`, nib exits 128 +
/// the signal, and `--resume` carries the interrupted task on.
#[test]
fn a_signal_stops_every_command_and_the_log_resumes() {
    for (n, sig) in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
        .into_iter()
        .enumerate()
    {
        // A sleep no other test runs, so the search finds only ours.
        let secs = format!(
            "{}",
            30_071 + n * 7 + std::process::id() as usize % 1000 * 100
        );
        let (_dir, ws, child) = exec_with_a_sleep(&secs);
        let needle = format!("sleep {secs}");
        // SAFETY: a plain kill(2) of the child we spawned.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let out = child.wait_with_output().expect("wait for nib");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128 + sig), "{stderr}");
        // The group is killed before nib exits; give the kernel a moment
        // to reap what it killed, without assuming how long.
        let reaped = std::time::Instant::now();
        while !processes_with(&needle).is_empty()
            && reaped.elapsed() < std::time::Duration::from_secs(10)
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(processes_with(&needle), Vec::<String>::new(), "{stderr}");
        let evs = events(&ws);
        let last: Vec<String> = kinds(&evs).into_iter().rev().take(2).collect();
        assert_eq!(last, ["result", "interrupted"], "{stderr}");
        let result = &evs[evs.len() - 1];
        assert_eq!(result["status"], "interrupted");
        assert_eq!(result["exit_code"], 128 + sig);
        assert!(
            !stderr.contains("error: interrupted by the user"),
            "one stop, said once: {stderr}"
        );
        // The stop is named as the signal, never as the person's Esc.
        assert!(!stderr.contains("(Esc)"), "{stderr}");

        // --resume continues that log, with the interrupted task as context.
        let root = ws.display().to_string();
        let again = dir_script(&ws, json!(["carried on"]));
        let run = nib(
            &[
                "exec",
                "--resume",
                "go on",
                "--root",
                &root,
                "--provider",
                "scripted",
                "--model",
                &again,
            ],
            &ws,
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let evs = events(&ws);
        let starts: Vec<&Value> = evs.iter().filter(|e| e["ev"] == "session.start").collect();
        assert_eq!(starts.len(), 2, "one log, two tasks");
        let task = starts[1]["task"].as_str().unwrap_or_default();
        assert!(
            task.contains("wait for it") && task.contains("interrupted") && task.ends_with("go on"),
            "{task}"
        );
    }
}

/// Two SIGINTs to `nib exec` while the model's command sleeps, the second
/// 0, 5 and 15 ms after the first (within the run's wind-down, or after
/// it): nib ends with 130 either way, nothing it started is left running
/// (before the fix, a second signal inside the shell's 25 ms poll left the
/// `sleep` behind), the log ends with `interrupted`, and `--resume`
/// continues it.
#[test]
fn a_second_sigint_ends_at_once_and_leaves_nothing_running() {
    for (n, gap_ms) in [0u64, 5, 15].into_iter().enumerate() {
        let secs = format!(
            "{}",
            40_013 + n * 7 + std::process::id() as usize % 1000 * 100
        );
        let (_dir, ws, child) = exec_with_a_sleep(&secs);
        let needle = format!("sleep {secs}");
        // SAFETY: plain kill(2)s of the child we spawned.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        std::thread::sleep(std::time::Duration::from_millis(gap_ms));
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let out = child.wait_with_output().expect("wait for nib");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "gap {gap_ms} ms: {stderr}");
        let reaped = std::time::Instant::now();
        while !processes_with(&needle).is_empty()
            && reaped.elapsed() < std::time::Duration::from_secs(10)
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let left = processes_with(&needle);
        for p in &left {
            // Leave nothing behind even when the test fails.
            if let Some(pid) = p.split(':').next().and_then(|p| p.parse::<i32>().ok()) {
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
        assert_eq!(left, Vec::<String>::new(), "gap {gap_ms} ms: {stderr}");
        let evs = events(&ws);
        let ks = kinds(&evs);
        let at = ks
            .iter()
            .rposition(|k| k == "interrupted")
            .unwrap_or_else(|| panic!("no interrupted event: {ks:?}"));
        assert!(
            ks[at + 1..].iter().all(|k| k == "result"),
            "gap {gap_ms} ms: the log ends with the stop: {ks:?}"
        );
        assert_eq!(evs[at]["by"], "SIGINT");
        let root = ws.display().to_string();
        let again = dir_script(&ws, json!(["carried on"]));
        let run = nib(
            &[
                "exec",
                "--resume",
                "go on",
                "--root",
                &root,
                "--provider",
                "scripted",
                "--model",
                &again,
            ],
            &ws,
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.stdout, "carried on\n");
    }
}

/// A script file next to the workspace.
fn dir_script(ws: &Path, script: Value) -> String {
    let path = ws.parent().expect("parent").join("again.json");
    fs::write(&path, script.to_string()).expect("script");
    path.display().to_string()
}

/// A server that cannot stream tool calls and then thinks for 6 s: the
/// person is told of the fallback once, and hears a heartbeat instead of
/// silence; estimated counts carry `~`.
#[test]
fn a_fallback_is_noted_once_and_a_slow_server_gets_a_heartbeat() {
    let script = json!([
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}],
         "server": {"stream_tools": false, "stream_usage": false},
         "faults": [{"delay_first_byte_ms": 6500}]},
        {"text": "read it", "server": {"stream_tools": false}}
    ]);
    let (_d, ws, script) = setup(&script);
    let run = exec_scripted(&ws, &script, "read calc", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr
            .matches("note: the server cannot stream replies")
            .count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("… still waiting for the model (step 1): 5 s, nothing received yet"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("call(s)"), "{}", run.stderr);
    let notices: Vec<Value> = events(&ws)
        .into_iter()
        .filter(|e| e["ev"] == "notice")
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0]["kind"], "stream_fallback");
}

/// With no model anywhere, nib says where the config goes, the key
/// variables and the demo; a hosted service without its key is refused
/// before any request, naming the variable.
#[test]
fn first_contact_messages_name_the_config_the_keys_and_the_demo() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |args: &[&str]| {
        Command::new(NIB)
            .args(args)
            .current_dir(dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("HOME", dir.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("NIB_API_KEY")
            .stdin(Stdio::null())
            .output()
            .expect("run nib")
    };
    let out = run(&["exec", "hi"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for want in [
        "config.toml",
        "docs/config.md",
        "nib demo",
        "OPENAI_API_KEY",
        "--base-url",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert!(!err.contains("for --provider ollama"), "{err}");
    let started = std::time::Instant::now();
    let out = run(&["exec", "hi", "--provider", "openai", "--model", "gpt-4o"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("set OPENAI_API_KEY"), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "no retries first"
    );
    let help = run(&["--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("docs/config.md"));
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
    assert!(run.stderr.contains("time limit"), "{}", run.stderr);
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

/// `nib exec` whose model runs `sleep SECS` (a number no other test uses),
/// returned once that sleep is running: the workspace's directory, its
/// path, and the nib process.
fn exec_with_a_sleep(secs: &str) -> (tempfile::TempDir, std::path::PathBuf, std::process::Child) {
    let script = json!([
        {"tool_calls": [{"name": "shell", "arguments": {"command": format!("sleep {secs}"), "timeout": 600}}]},
        "never reached"
    ]);
    let (_dir, ws, script) = setup(&script);
    let child = Command::new(NIB)
        .args(["exec", "wait for it", "--root"])
        .arg(&ws)
        .args(["--provider", "scripted", "--model", &script])
        .args(["--approve", "writes"])
        .current_dir(&ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nib");
    let needle = format!("sleep {secs}");
    let waited = std::time::Instant::now();
    while processes_with(&needle).is_empty() {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(120),
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (_dir, ws, child)
}
