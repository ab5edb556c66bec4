//! `nib swebench` as a benchmark run goes: the real binary on a fixture
//! repository the test makes, the scripted model over HTTP on 127.0.0.1
//! (and, for a context overflow, a small HTTP server here answering as
//! OpenAI does), checking what a run leaves behind: trajectories and
//! `nib swebench show`, prices, cost limits and the finer exit statuses,
//! the dataset flags and `--config`, the plain progress lines, and Ctrl-C
//! (SIGINT sent to the running process).

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod support;
use support::{Run, git, read_json};

const NIB: &str = env!("CARGO_BIN_EXE_nib");

const BUGGY: &str = "def add(a, b):\n    return a - b\n";

struct Fixture {
    dir: tempfile::TempDir,
    repos: PathBuf,
    base: String,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let upstream = dir.path().join("upstream");
    fs::create_dir_all(&upstream).expect("upstream");
    git(&upstream, &["init", "-q", "-b", "main"]);
    fs::write(upstream.join("calc.py"), BUGGY).expect("calc.py");
    fs::write(upstream.join(".gitignore"), ".nib/\n").expect("gitignore");
    git(&upstream, &["add", "-A"]);
    git(&upstream, &["commit", "-qm", "calc with a bug"]);
    let base = git(&upstream, &["rev-parse", "HEAD"]);
    let repos = dir.path().join("repos");
    fs::create_dir(&repos).expect("repos");
    let ok = Command::new("git")
        .args(["clone", "-q"])
        .arg(&upstream)
        .arg(repos.join("acme__calc"))
        .status()
        .expect("clone");
    assert!(ok.success());
    fs::create_dir(dir.path().join("config")).expect("config dir");
    Fixture { dir, repos, base }
}

impl Fixture {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        fs::write(&path, text).expect("write fixture file");
        path.display().to_string()
    }

    /// An instances file with `acme__calc-N` for each N.
    fn instances(&self, ns: &[u32]) -> String {
        let text: String = ns
            .iter()
            .map(|n| {
                format!(
                    "{}\n",
                    json!({"repo": "acme/calc", "instance_id": format!("acme__calc-{n}"),
                        "base_commit": self.base, "problem_statement": "add(2, 3) returns -1."})
                )
            })
            .collect();
        self.write("instances.jsonl", &text)
    }

    fn script(&self, name: &str, script: &Value) -> String {
        self.write(name, &script.to_string())
    }

    fn args(&self, instances: &str, out: &str, script: &str, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = [
            "swebench",
            "--instances",
            instances,
            "--repos",
            &self.repos.display().to_string(),
            "--out",
            &self.path(out).display().to_string(),
            "--provider",
            "scripted",
            "--model",
            script,
            "--strategy",
            "default",
            // Not the engine `auto` may find on the machine: these runs
            // are about the runner, on the host.
            "--env",
            "local",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    fn run(&self, instances: &str, out: &str, script: &str, extra: &[&str]) -> Run {
        let args = self.args(instances, out, script, extra);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.nib(&refs)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(NIB);
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("XDG_CONFIG_HOME", self.path("config"))
            .stdin(Stdio::null());
        cmd
    }

    fn nib(&self, args: &[&str]) -> Run {
        let out = self.command(args).output().expect("run nib");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Read, fix with one fs-edit, finish; each reply's usage as given.
fn fix_script(usage: Option<Value>) -> Value {
    let mut replies = vec![
        json!({"text": "Let me look.", "tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}]}),
        json!({"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": "return a - b", "new": "return a + b"}}]}),
        json!({"text": "add now adds."}),
    ];
    if let Some(u) = usage {
        for r in &mut replies {
            r["usage"] = u.clone();
        }
    }
    Value::Array(replies)
}

fn pred_ids(out: &Path) -> Vec<String> {
    fs::read_to_string(out.join("preds.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a prediction");
            v["instance_id"].as_str().unwrap_or("").to_string()
        })
        .collect()
}

fn wait_for(path: &Path, within: Duration) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < within,
            "{} did not appear within {within:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sigint(child: &Child) {
    let pid = i32::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) with a pid this test spawned.
    let r = unsafe { libc::kill(pid, libc::SIGINT) };
    assert_eq!(r, 0, "kill");
}

#[test]
fn a_trajectory_is_written_per_instance_and_show_prints_it() {
    let fx = fixture();
    let instances = fx.instances(&[1]);
    let script = fx.script("fix.json", &fix_script(None));
    let run = fx.run(&instances, "out", &script, &["--price", "*=1,2"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let dir = fx.path("out/acme__calc-1");
    let t = read_json(&dir.join("trajectory.json"));
    assert_eq!(t["format"], "nib-swebench-trajectory-1");
    assert_eq!(t["instance_id"], "acme__calc-1");
    assert_eq!(t["status"], "submitted");
    assert_eq!(t["config"]["max_steps"], 100);
    assert_eq!(t["config"]["price_per_million_tokens"]["input"], 1.0);
    let steps = t["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 3, "{t:#}");
    assert_eq!(steps[0]["text"], "Let me look.");
    assert_eq!(steps[0]["calls"][0]["name"], "fs-read");
    assert_eq!(steps[0]["calls"][0]["result"]["ok"], true);
    // The whole output the model read, not only its first line.
    let output = steps[0]["calls"][0]["output"].as_str().unwrap_or("");
    assert!(
        output.contains("def add(a, b):") && output.contains("return a - b"),
        "{t:#}"
    );
    assert_eq!(steps[1]["calls"][0]["args"]["new"], "return a + b");
    assert_eq!(steps[2]["text"], "add now adds.");
    // The whole conversation at the end, with the full tool output.
    let messages = t["messages"].as_array().expect("messages");
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool"
                && m["content"].as_str().unwrap_or("").contains("return a - b")),
        "{messages:#?}"
    );
    let stats = &t["model_stats"];
    assert_eq!(stats["api_calls"], 3);
    let cost = stats["cost"].as_f64().expect("cost");
    let tokens = (stats["prompt_tokens"].as_u64().unwrap_or(0) as f64)
        + 2.0 * stats["completion_tokens"].as_u64().unwrap_or(0) as f64;
    assert!((cost - tokens / 1e6).abs() < 1e-6, "{cost} vs {tokens}");
    let summary = read_json(&dir.join("summary.json"));
    assert_eq!(summary["cost"], stats["cost"]);
    assert!(run.stdout.contains("$0.0"), "{}", run.stdout);
    assert!(!dir.join("trajectory.json.tmp").exists());

    let log = fs::read_to_string(dir.join("log.txt")).expect("log.txt");
    assert!(log.contains("step 1: 1 tool call(s)"), "{log}");
    assert!(log.contains("call 0: (fs-edit"), "{log}");
    assert!(log.contains("submitted: add now adds."), "{log}");

    // Plain progress lines: stderr is a pipe here.
    assert!(
        run.stderr.contains("nib swebench: acme__calc-1 started"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("[1/1] acme__calc-1: submitted"),
        "{}",
        run.stderr
    );

    let out = fx.path("out").display().to_string();
    let show = fx.nib(&["swebench", "show", "acme__calc-1", "--out", &out]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    for want in [
        "acme__calc-1 · nib-fix · submitted",
        "[step 1]",
        "  model: Let me look.",
        "  1. (fs-read",
        "     ok:\n     │      1\tdef add(a, b):\n",
        "[step 3]",
        "status: submitted",
        "model: 3 calls",
        "cost $",
    ] {
        assert!(show.stdout.contains(want), "{want:?} in\n{}", show.stdout);
    }
    let missing = fx.nib(&["swebench", "show", "acme__calc-9", "--out", &out]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("no instance acme__calc-9")
            && missing.stderr.contains("its instances are acme__calc-1"),
        "{}",
        missing.stderr
    );
    fs::write(dir.join("trajectory.json"), "{\"format\": ").expect("cut");
    let cut = fx.nib(&["swebench", "show", "acme__calc-1", "--out", &out]);
    assert_eq!(cut.code, 2);
    assert!(cut.stderr.contains("not JSON"), "{}", cut.stderr);
    fs::write(dir.join("trajectory.json"), "{\"format\": \"other\"}").expect("other");
    let other = fx.nib(&["swebench", "show", "acme__calc-1", "--out", &out]);
    assert!(
        other.stderr.contains("not a trajectory"),
        "{}",
        other.stderr
    );
    let nowhere = fx.nib(&[
        "swebench",
        "show",
        "x",
        "--out",
        &fx.path("repos").display().to_string(),
    ]);
    assert!(
        nowhere.stderr.contains("holds no instance trajectories"),
        "{}",
        nowhere.stderr
    );
}

#[test]
fn the_cost_limit_stops_an_instance_and_the_total_cost_limit_stops_the_run() {
    let fx = fixture();
    let million = json!({"prompt_tokens": 1_000_000, "completion_tokens": 0});
    // $1 a reply: the second reply reaches $2, past --cost-limit 1.5; its
    // edit still runs, the third reply is never asked for.
    let instances = fx.instances(&[1]);
    let script = fx.script("fix.json", &fix_script(Some(million.clone())));
    let run = fx.run(
        &instances,
        "out",
        &script,
        &["--price", "fix=1,3", "--cost-limit", "1.5"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let summary = read_json(&fx.path("out/acme__calc-1/summary.json"));
    assert_eq!(summary["status"], "cost_limit", "{summary}");
    assert_eq!(summary["cost"], 2.0);
    assert_eq!(summary["model_stats"]["api_calls"], 2);
    assert_eq!(summary["steps"], 2, "{summary}");
    assert_eq!(summary["model_stats"]["cost_estimated"], false);
    assert!(
        summary["message"]
            .as_str()
            .unwrap_or("")
            .contains("--cost-limit"),
        "{summary}"
    );
    let preds = read_json(&fx.path("out/preds.json"));
    let patch = preds["acme__calc-1"]["model_patch"].as_str().unwrap_or("");
    assert!(patch.contains("+    return a + b"), "{patch}");
    assert!(run.stdout.contains("cost_limit"), "{}", run.stdout);
    assert!(run.stdout.contains("$2.00"), "{}", run.stdout);

    // Three instances of $1 each, one at a time: after the second the run
    // is at $2, past --total-cost-limit 1.5, so the third never starts.
    let instances = fx.instances(&[1, 2, 3]);
    let one = fx.script("one.json", &json!([{"text": "done", "usage": million}]));
    let run = fx.run(
        &instances,
        "total",
        &one,
        &["--price", "*=1,1", "--total-cost-limit", "1.5"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("--total-cost-limit"), "{}", run.stderr);
    assert!(
        run.stderr.contains("1 instance(s) not started"),
        "{}",
        run.stderr
    );
    let report = read_json(&fx.path("total/run.json"));
    assert_eq!(report["not_started"], json!(["acme__calc-3"]));
    assert_eq!(report["cost"], 2.0);
    assert!(
        report["drained"]
            .as_str()
            .unwrap_or("")
            .contains("total-cost-limit")
    );
    // Running it again (a higher limit) finishes the run.
    let again = fx.run(
        &instances,
        "total",
        &one,
        &["--price", "*=1,1", "--total-cost-limit", "5"],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(pred_ids(&fx.path("total")).len(), 3);

    let no_price = fx.run(&instances, "np", &one, &["--cost-limit", "1"]);
    assert_eq!(no_price.code, 2);
    assert!(
        no_price.stderr.contains("--price one=IN,OUT"),
        "{}",
        no_price.stderr
    );
    let bad = fx.run(&instances, "np", &one, &["--price", "one=cheap"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("USD per million tokens"),
        "{}",
        bad.stderr
    );
}

/// Answers every request with HTTP 400 and OpenAI's context error.
fn context_overflow_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let answer = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    format!("http://{addr}/v1")
}

#[test]
fn malformed_calls_timeouts_and_context_overflows_get_their_statuses() {
    let fx = fixture();
    let instances = fx.instances(&[1, 2]);
    let broken = json!({"tool_calls": [{"name": "fs-read", "arguments": "{\"path\": "}]});
    fx.script(
        "acme__calc-1.json",
        &json!([broken, broken, broken, "never asked"]),
    );
    // A command that outlasts --timeout.
    fx.script(
        "acme__calc-2.json",
        &json!([{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 20"}}]}, "never asked"]),
    );
    let spec = fx.path("{instance_id}.json").display().to_string();
    // Two invocations into one OUT (a loaded machine can take 2 s to
    // start a session): run.json then holds both.
    let run = fx.run(
        &instances,
        "out",
        &spec,
        &["--max-format-errors", "2", "--instance", "acme__calc-1"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = fx.run(
        &instances,
        "out",
        &spec,
        &["--timeout", "2", "--instance", "acme__calc-2"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let format = read_json(&fx.path("out/acme__calc-1/summary.json"));
    assert_eq!(format["status"], "format_error", "{format}");
    assert_eq!(format["model_stats"]["api_calls"], 2);
    // Steps are the model's replies: the one nib cancelled is not one.
    assert_eq!(format["steps"], 2, "{format}");
    let log = fs::read_to_string(fx.path("out/acme__calc-1/log.txt")).expect("log.txt");
    assert!(!log.contains("interrupted by the user"), "{log}");
    assert!(
        log.contains("stopped: stopped after 2 steps in a row"),
        "{log}"
    );
    let timeout = read_json(&fx.path("out/acme__calc-2/summary.json"));
    assert_eq!(timeout["status"], "timeout", "{timeout}");
    assert!(
        timeout["seconds"].as_f64().unwrap_or(99.0) < 15.0,
        "{timeout}"
    );
    let report = read_json(&fx.path("out/run.json"));
    assert_eq!(report["by_status"]["format_error"], json!(["acme__calc-1"]));
    assert_eq!(report["by_status"]["timeout"], json!(["acme__calc-2"]));
    // The trajectory keeps what did not parse.
    let t = read_json(&fx.path("out/acme__calc-1/trajectory.json"));
    assert_eq!(t["steps"][0]["calls"][0]["raw_arguments"], "{\"path\": ");

    let url = context_overflow_server();
    let instances = fx.instances(&[1]);
    let args = [
        "swebench",
        "--env",
        "local",
        "--instances",
        &instances,
        "--repos",
        &fx.repos.display().to_string(),
        "--out",
        &fx.path("ctx").display().to_string(),
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--model",
        "small",
        "--strategy",
        "default",
    ];
    let run = fx.nib(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ctx = read_json(&fx.path("ctx/acme__calc-1/summary.json"));
    assert_eq!(ctx["status"], "context_overflow", "{ctx}");
    assert!(
        ctx["message"]
            .as_str()
            .unwrap_or("")
            .contains("maximum context length")
    );
}

#[test]
fn filter_shuffle_slice_redo_existing_and_the_config_file_choose_what_runs() {
    let fx = fixture();
    let instances = fx.instances(&[1, 2, 3, 4, 5, 6]);
    let script = fx.script("fix.json", &fix_script(None));
    let ran_ids = |out: &str| -> BTreeSet<String> {
        read_json(&fx.path(&format!("{out}/run.json")))["instances"]
            .as_array()
            .expect("instances")
            .iter()
            .map(|i| i["instance_id"].as_str().unwrap_or("").to_string())
            .collect()
    };
    // The file says max-steps=1 (which would stop the fix before its
    // edit); the command line's --max-steps 5 wins.
    let config = fx.write(
        "run.conf",
        "# a small run\nfilter = calc-[1-4]$\nshuffle=true\nseed=11\nslice=0:2\nmax_steps=1\nprice.fix=1,2\n",
    );
    let run = fx.run(
        &instances,
        "a",
        &script,
        &["--config", &config, "--max-steps", "5"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let first = ran_ids("a");
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(
        first
            .iter()
            .all(|id| ["1", "2", "3", "4"].iter().any(|n| id.ends_with(n))),
        "{first:?}"
    );
    let report = read_json(&fx.path("a/run.json"));
    assert_eq!(
        report["by_status"]["submitted"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(report["max_steps"], 5);
    assert_eq!(report["shuffle_seed"], 11);
    assert_eq!(report["slice"], "0:2");

    // run.config holds every option: alone it repeats the run (same
    // shuffle, so the same two); all are done, so both are skipped.
    let saved = fx.path("a/run.config");
    let text = fs::read_to_string(&saved).expect("run.config");
    for want in [
        "max-steps=5\n",
        "seed=11\n",
        "slice=0:2\n",
        "shuffle=true\n",
        "price=fix=1,2\n",
        "# the defaults of nib",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    let out_line = format!(
        "out={}\n",
        fs::canonicalize(fx.path("a")).expect("out").display()
    );
    assert!(text.contains(&out_line), "{out_line:?} in\n{text}");
    let saved = saved.display().to_string();
    // From another directory: the run's files are named absolutely.
    let elsewhere = fx.path("elsewhere");
    fs::create_dir(&elsewhere).expect("dir");
    let again = fx
        .command(&["swebench", "--config", &saved])
        .current_dir(&elsewhere)
        .output()
        .expect("run nib");
    let again = Run {
        code: again.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&again.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&again.stderr).into_owned(),
    };
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("2 skipped"), "{}", again.stdout);
    let redo = fx.nib(&["swebench", "--config", &saved, "--redo-existing"]);
    assert_eq!(redo.code, 0, "{}", redo.stderr);
    assert_eq!(ran_ids("a"), first);
    assert!(
        redo.stderr.contains("run again (--redo-existing)"),
        "{}",
        redo.stderr
    );
    assert_eq!(pred_ids(&fx.path("a")).len(), 4);
    assert_eq!(
        read_json(&fx.path("a/preds.json"))
            .as_object()
            .map(|m| m.len()),
        Some(2)
    );
    // Instances, not lines: a redone one counts once.
    assert!(
        redo.stdout.contains("(2 instance(s) in all)"),
        "{}",
        redo.stdout
    );
    // A fix-up of one instance keeps the run's own run.config, and
    // run.json still describes both instances.
    let one = first.iter().next().expect("an id").clone();
    let text = fs::read_to_string(&saved).expect("run.config");
    let fix = fx.nib(&[
        "swebench",
        "--config",
        &saved,
        "--redo-existing",
        "--instance",
        &one,
    ]);
    assert_eq!(fix.code, 0, "{}", fix.stderr);
    assert_eq!(fs::read_to_string(&saved).expect("run.config"), text);
    assert!(!text.contains("redo-existing"), "{text}");
    assert_eq!(ran_ids("a"), first);
    let report = read_json(&fx.path("a/run.json"));
    assert_eq!(report["ran"], 1);
    let replay = fx.nib(&["swebench", "--config", &saved]);
    assert!(replay.stdout.contains("2 skipped"), "{}", replay.stdout);

    // Without the shuffle, the slice counts in the file's order (here
    // also the ids' order).
    let plain = fx.run(
        &instances,
        "b",
        &script,
        &["--filter", "calc-[2-6]", "--slice", "1:3"],
    );
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert_eq!(
        ran_ids("b"),
        BTreeSet::from(["acme__calc-3".to_string(), "acme__calc-4".to_string()])
    );

    let bad = fx.write("bad.conf", "max-stepz=3\n");
    let run = fx.run(&instances, "c", &script, &["--config", &bad]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("line 1") && run.stderr.contains("max-stepz"),
        "{}",
        run.stderr
    );
    let run = fx.run(&instances, "c", &script, &["--filter", "calc-("]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("not a regular expression"),
        "{}",
        run.stderr
    );
    let run = fx.run(&instances, "c", &script, &["--slice", "5:2"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("A:B"), "{}", run.stderr);
}

/// One instance per worker at a time, each running `sleep` for a while.
fn slow_run(fx: &Fixture, out: &str) -> Child {
    let instances = fx.instances(&[1, 2, 3]);
    let script = fx.script(
        "slow.json",
        &json!([{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 2"}}]}, "done"]),
    );
    let args = fx.args(&instances, out, &script, &["--progress-every", "1"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    fx.command(&refs)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn nib")
}

#[test]
fn the_first_ctrl_c_drains_and_the_second_stops_at_once() {
    let fx = fixture();
    let child = slow_run(&fx, "drain");
    wait_for(
        &fx.path("drain/acme__calc-1/trajectory.json"),
        Duration::from_secs(30),
    );
    sigint(&child);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Ctrl-C: no new instances start"),
        "{stderr}"
    );
    assert!(stderr.contains("2 instance(s) not started"), "{stderr}");
    // The running instance finished and is a prediction; the others wait
    // for the next run.
    assert_eq!(pred_ids(&fx.path("drain")), ["acme__calc-1"]);
    let report = read_json(&fx.path("drain/run.json"));
    assert_eq!(report["by_status"]["submitted"], json!(["acme__calc-1"]));
    assert_eq!(
        report["not_started"],
        json!(["acme__calc-2", "acme__calc-3"])
    );
    // The plain progress: a start line, and summary lines every second.
    assert!(
        stderr.contains("nib swebench: acme__calc-1 started"),
        "{stderr}"
    );
    assert!(stderr.contains("nib swebench: 0/3 done"), "{stderr}");

    let child = slow_run(&fx, "stop");
    wait_for(
        &fx.path("stop/acme__calc-1/trajectory.json"),
        Duration::from_secs(30),
    );
    let sent = Instant::now();
    sigint(&child);
    std::thread::sleep(Duration::from_millis(200));
    sigint(&child);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?} {stderr}", out.status);
    assert!(
        sent.elapsed() < Duration::from_millis(1800),
        "{:?}",
        sent.elapsed()
    );
    assert!(pred_ids(&fx.path("stop")).is_empty());
    // Stopped at once, it still leaves run.json and preds.json, saying
    // what did not run.
    let report = read_json(&fx.path("stop/run.json"));
    assert_eq!(report["ran"], 0, "{report:#}");
    assert_eq!(
        report["not_started"],
        json!(["acme__calc-1", "acme__calc-2", "acme__calc-3"])
    );
    assert!(
        report["drained"]
            .as_str()
            .is_some_and(|d| d.contains("second Ctrl-C")),
        "{report:#}"
    );
    assert_eq!(read_json(&fx.path("stop/preds.json")), json!({}));
    // Resumed, the killed run ends with the predictions of an unkilled one.
    let instances = fx.instances(&[1, 2, 3]);
    let script = fx.path("slow.json").display().to_string();
    let resumed = fx.run(&instances, "stop", &script, &[]);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let whole = fx.run(&instances, "whole", &script, &[]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    assert_eq!(
        fs::read(fx.path("stop/preds.json")).expect("preds"),
        fs::read(fx.path("whole/preds.json")).expect("preds")
    );
    let report = read_json(&fx.path("stop/run.json"));
    assert_eq!(report["instances"].as_array().map(Vec::len), Some(3));
}
