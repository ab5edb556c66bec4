//! `nib swebench` end to end: the real binary on a fixture repository the
//! test makes (a small Python project with a bug, committed with git and
//! cloned under a repos directory as `owner__repo`), instance records built
//! from it, and the scripted model over HTTP on 127.0.0.1 replaying fixes
//! as fs-read and fs-edit calls. Also: the instance reader on eight real
//! SWE-bench Lite records (tests/data/swebench/instances.jsonl).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

mod support;
use support::{Run, git, read_json};

const NIB: &str = env!("CARGO_BIN_EXE_nib");

const BUGGY: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
const FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";

/// The fixture project's own test runner: prints pytest -rA style lines,
/// so grading works where pytest is not installed.
const RUNNER: &str = r#"import importlib.util, sys
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in sorted(n for n in dir(mod) if n.startswith("test_")):
        try:
            getattr(mod, name)()
            print(f"PASSED {path}::{name}")
        except Exception as e:
            print(f"FAILED {path}::{name} - {e!r}")
"#;

const TEST_PATCH: &str = "diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -3,3 +3,7 @@ from calc import add, mul
 
 def test_mul():
     assert mul(2, 3) == 6
+
+
+def test_add():
+    assert add(2, 3) == 5
";

struct Fixture {
    dir: tempfile::TempDir,
    repos: PathBuf,
    base: String,
}

impl Fixture {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// An instance record of the fixture repository.
    fn instance(&self, id: &str, lists_as_strings: bool) -> Value {
        let f2p = json!(["tests/test_calc.py::test_add"]);
        let p2p = json!(["tests/test_calc.py::test_mul"]);
        let (f2p, p2p) = if lists_as_strings {
            (json!(f2p.to_string()), json!(p2p.to_string()))
        } else {
            (f2p, p2p)
        };
        json!({
            "repo": "acme/calc",
            "instance_id": id,
            "base_commit": self.base,
            "patch": "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,5 +1,5 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n \n \n def mul(a, b):\n",
            "test_patch": TEST_PATCH,
            "problem_statement": "add(2, 3) returns -1 instead of 5.",
            "hints_text": "",
            "created_at": "2026-01-01T00:00:00Z",
            "version": "1.0",
            "FAIL_TO_PASS": f2p,
            "PASS_TO_PASS": p2p,
            "environment_setup_commit": self.base,
        })
    }

    /// Writes records as JSONL and returns the file's path.
    fn jsonl(&self, name: &str, records: &[Value]) -> String {
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        self.write(name, &text)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        fs::write(&path, text).expect("write fixture file");
        path.display().to_string()
    }

    fn script(&self, name: &str, script: &Value) -> String {
        self.write(name, &script.to_string())
    }

    /// `nib swebench --instances I --repos R --out OUT --provider scripted
    /// --model SCRIPT [extra...]`.
    fn run(&self, instances: &str, out: &str, script: &str, extra: &[&str]) -> Run {
        let repos = self.repos.display().to_string();
        let out = self.path(out).display().to_string();
        let mut args = vec![
            "swebench",
            "--instances",
            instances,
            "--repos",
            &repos,
            "--out",
            &out,
            "--provider",
            "scripted",
            "--model",
            script,
        ];
        // The scripts here answer a fixed number of replies: the plain loop
        // unless a test chooses (swebench's default, the plain loop with
        // compact, has its own test).
        if !extra.contains(&"--strategy") {
            args.extend_from_slice(&["--strategy", "default"]);
        }
        // On this machine, even where a container engine answers.
        if !extra.contains(&"--env") {
            args.extend_from_slice(&["--env", "local"]);
        }
        args.extend_from_slice(extra);
        self.nib(&args)
    }

    fn nib(&self, args: &[&str]) -> Run {
        let out = Command::new(NIB)
            .args(args)
            .current_dir(self.dir.path())
            .env("XDG_CONFIG_HOME", self.path("config"))
            .stdin(Stdio::null())
            .output()
            .expect("run nib");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// The upstream project (two commits; the base is the second), cloned to
/// repos/acme__calc.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let upstream = dir.path().join("upstream");
    fs::create_dir_all(upstream.join("tests")).expect("upstream");
    git(&upstream, &["init", "-q", "-b", "main"]);
    fs::write(upstream.join("README.md"), "calc\n").expect("readme");
    git(&upstream, &["add", "-A"]);
    git(&upstream, &["commit", "-qm", "start"]);
    fs::write(upstream.join("calc.py"), BUGGY).expect("calc.py");
    fs::write(upstream.join("run_tests.py"), RUNNER).expect("runner");
    // Ignores .nib, as a project that uses nib does.
    fs::write(upstream.join(".gitignore"), "*.egg-info/\n.nib/\n").expect("gitignore");
    fs::write(
        upstream.join("tests/test_calc.py"),
        "from calc import add, mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    )
    .expect("test file");
    git(&upstream, &["add", "-A"]);
    git(&upstream, &["commit", "-qm", "calc with a bug in add"]);
    let base = git(&upstream, &["rev-parse", "HEAD"]);
    // A later commit the base must not see.
    fs::write(upstream.join("README.md"), "calc, later\n").expect("readme");
    git(&upstream, &["commit", "-qam", "later"]);
    let repos = dir.path().join("repos");
    fs::create_dir(&repos).expect("repos");
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(&upstream)
        .arg(repos.join("acme__calc"))
        .output()
        .expect("clone");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs::create_dir(dir.path().join("config")).expect("config dir");
    Fixture { dir, repos, base }
}

/// Read, then fix add with one fs-edit, then finish.
fn fix_script() -> Value {
    json!([
        {"text": "Let me look.", "tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}]},
        {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": "    return a - b", "new": "    return a + b"}}]},
        "add now adds."
    ])
}

fn jsonl_lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Applies `patch` with `git apply` to a fresh checkout of the base, and
/// returns the checkout.
fn apply_to_fresh_checkout(fx: &Fixture, patch: &str, name: &str) -> PathBuf {
    let checkout = fx.path(name);
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(fx.repos.join("acme__calc"))
        .arg(&checkout)
        .output()
        .expect("clone");
    assert!(out.status.success());
    git(&checkout, &["checkout", "-q", &fx.base]);
    let patch_file = fx.path(&format!("{name}.diff"));
    fs::write(&patch_file, patch).expect("patch file");
    git(&checkout, &["apply", &patch_file.display().to_string()]);
    checkout
}

fn python3() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_fix_becomes_a_prediction_that_applies_and_fixes_the_bug() {
    let fx = fixture();
    // Both record forms: F2P as a JSON-encoded string (JSONL) and as a list
    // (JSON array).
    let jsonl = fx.jsonl("instances.jsonl", &[fx.instance("acme__calc-1", true)]);
    let array = fx.write(
        "instances.json",
        &json!([fx.instance("acme__calc-1", false)]).to_string(),
    );
    let script = fx.script("fix.json", &fix_script());
    for (instances, name) in [(jsonl, "out-jsonl"), (array, "out-array")] {
        let run = fx.run(&instances, name, &script, &[]);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("acme__calc-1"), "{}", run.stdout);
        assert!(run.stdout.contains("submitted"), "{}", run.stdout);
        let out = fx.path(name);
        let preds = jsonl_lines(&out.join("preds.jsonl"));
        assert_eq!(preds.len(), 1);
        assert_eq!(preds[0]["instance_id"], "acme__calc-1");
        assert_eq!(preds[0]["model_name_or_path"], "nib-fix");
        let patch = preds[0]["model_patch"].as_str().expect("patch").to_string();
        assert!(
            patch.starts_with("diff --git a/calc.py b/calc.py"),
            "{patch}"
        );
        assert!(
            patch.contains("-    return a - b\n+    return a + b"),
            "{patch}"
        );
        assert!(
            !patch.contains(".nib"),
            "the session directory leaked: {patch}"
        );
        let dict = read_json(&out.join("preds.json"));
        assert_eq!(dict["acme__calc-1"], preds[0]);
        assert_eq!(
            fs::read_to_string(out.join("acme__calc-1/patch.diff")).expect("patch.diff"),
            patch
        );
        let summary = read_json(&out.join("acme__calc-1/summary.json"));
        assert_eq!(summary["status"], "submitted");
        assert_eq!(summary["steps"], 3);
        assert_eq!(summary["patch_lines"], patch.lines().count());
        assert!(summary["tokens"].as_u64().unwrap_or(0) > 0, "{summary}");
        let events = jsonl_lines(&out.join("acme__calc-1/events.jsonl"));
        assert_eq!(events[0]["ev"], "session.start");
        assert!(events.iter().any(|e| e["ev"] == "write"));
        let report = read_json(&out.join("run.json"));
        assert_eq!(report["by_status"]["submitted"], json!(["acme__calc-1"]));
        // The worktree is gone, and the clone knows of no worktree.
        assert!(!out.join(".work/acme__calc-1").exists());
        let listed = git(&fx.repos.join("acme__calc"), &["worktree", "list"]);
        assert_eq!(listed.lines().count(), 1, "{listed}");

        let checkout = apply_to_fresh_checkout(&fx, &patch, &format!("check-{name}"));
        assert_eq!(
            fs::read_to_string(checkout.join("calc.py")).expect("calc"),
            FIXED
        );
        if python3() {
            let ok = Command::new("python3")
                .args(["-c", "import calc; assert calc.add(2, 3) == 5"])
                .current_dir(&checkout)
                .status()
                .expect("python3");
            assert!(ok.success());
        }
    }
}

#[test]
fn a_second_run_skips_what_is_done_and_shards_split_the_work() {
    let fx = fixture();
    let ids = ["acme__calc-3", "acme__calc-1", "acme__calc-2"];
    let records: Vec<Value> = ids.iter().map(|id| fx.instance(id, true)).collect();
    let instances = fx.jsonl("instances.jsonl", &records);
    let script = fx.script("fix.json", &fix_script());

    let first = fx.run(&instances, "out", &script, &["--workers", "2"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let preds = jsonl_lines(&fx.path("out/preds.jsonl"));
    let got: BTreeSet<&str> = preds
        .iter()
        .filter_map(|p| p["instance_id"].as_str())
        .collect();
    assert_eq!(got, ids.iter().copied().collect());
    let again = fx.run(&instances, "out", &script, &["--workers", "2"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("3 skipped"), "{}", again.stdout);
    assert_eq!(jsonl_lines(&fx.path("out/preds.jsonl")).len(), 3);
    assert_eq!(read_json(&fx.path("out/run.json"))["ran"], 0);
    let dict = read_json(&fx.path("out/preds.json"));
    assert_eq!(dict.as_object().map(|m| m.len()), Some(3));

    // Two shards: disjoint, and together everything.
    let mut seen: Vec<String> = Vec::new();
    for shard in ["0/2", "1/2"] {
        let out = format!("shard-{}", &shard[..1]);
        let run = fx.run(&instances, &out, &script, &["--shard", shard]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        for p in jsonl_lines(&fx.path(&out).join("preds.jsonl")) {
            seen.push(p["instance_id"].as_str().unwrap_or("").to_string());
        }
    }
    seen.sort();
    assert_eq!(seen, ["acme__calc-1", "acme__calc-2", "acme__calc-3"]);
    // Sorted by id, every second: shard 0 has 1 and 3.
    let shard0 = read_json(&fx.path("shard-0/preds.json"));
    assert!(shard0.get("acme__calc-1").is_some() && shard0.get("acme__calc-3").is_some());

    let merged = fx.path("merged.json").display().to_string();
    let s0 = fx.path("shard-0").display().to_string();
    let s1 = fx.path("shard-1").display().to_string();
    let run = fx.nib(&["swebench", "merge", &s0, &s1, "-o", &merged]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let merged = read_json(Path::new(&merged));
    assert_eq!(merged, dict);

    let bad = fx.run(&instances, "bad", &script, &["--shard", "2/2"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("counted from 0"), "{}", bad.stderr);
    let only = fx.run(&instances, "only", &script, &["--instance", "acme__calc-2"]);
    assert_eq!(only.code, 0, "{}", only.stderr);
    assert_eq!(jsonl_lines(&fx.path("only/preds.jsonl")).len(), 1);
}

#[test]
fn a_step_limit_still_submits_the_diff_and_new_files_are_in_it() {
    let fx = fixture();
    let instances = fx.jsonl("instances.jsonl", &[fx.instance("acme__calc-1", true)]);
    // One reply that reads, edits and adds a file; then it would go on.
    let script = fx.script(
        "busy.json",
        &json!([
            {"tool_calls": [
                {"name": "fs-read", "arguments": {"path": "calc.py"}},
                {"name": "fs-edit", "arguments": {"path": "calc.py", "old": "return a - b", "new": "return a + b"}},
                {"name": "fs-write", "arguments": {"path": "tests/test_add.py", "content": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}},
                {"name": "shell", "arguments": {"command": "mkdir -p tests/__pycache__ && printf 'bytecode' > tests/__pycache__/test_add.cpython-311.pyc"}}
            ]},
            {"tool_calls": [{"name": "git-status", "arguments": {}}]},
            {"tool_calls": [{"name": "git-status", "arguments": {}}]}
        ]),
    );
    let run = fx.run(&instances, "out", &script, &["--max-steps", "1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let summary = read_json(&fx.path("out/acme__calc-1/summary.json"));
    assert_eq!(summary["status"], "step_limit", "{summary}");
    let preds = jsonl_lines(&fx.path("out/preds.jsonl"));
    assert_eq!(preds.len(), 1);
    let patch = preds[0]["model_patch"].as_str().unwrap_or("").to_string();
    assert!(patch.contains("+    return a + b"), "{patch}");
    assert!(
        patch.contains("diff --git a/tests/test_add.py b/tests/test_add.py\nnew file mode 100644"),
        "{patch}"
    );
    assert!(!patch.contains("__pycache__"), "{patch}");
    assert_eq!(patch.matches("diff --git").count(), 2, "{patch}");
    let checkout = apply_to_fresh_checkout(&fx, &patch, "check");
    assert!(checkout.join("tests/test_add.py").is_file());
}

#[test]
fn a_missing_clone_is_an_env_error_and_the_run_goes_on() {
    let fx = fixture();
    let mut ghost = fx.instance("ghost__gone-1", true);
    ghost["repo"] = json!("ghost/gone");
    let instances = fx.jsonl(
        "instances.jsonl",
        &[ghost, fx.instance("acme__calc-1", true)],
    );
    let script = fx.script("fix.json", &fix_script());
    let run = fx.run(&instances, "out", &script, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let summary = read_json(&fx.path("out/ghost__gone-1/summary.json"));
    assert_eq!(summary["status"], "env_error");
    let message = summary["message"].as_str().unwrap_or("");
    assert!(
        message.contains("no clone of ghost/gone") && message.contains("ghost__gone"),
        "{message}"
    );
    assert!(run.stderr.contains("run again to retry"), "{}", run.stderr);
    let trajectory = read_json(&fx.path("out/ghost__gone-1/trajectory.json"));
    assert_eq!(trajectory["status"], "env_error", "{trajectory}");
    // The other instance ran; only it is a prediction (the error is retried
    // by the next run).
    let preds = jsonl_lines(&fx.path("out/preds.jsonl"));
    assert_eq!(preds.len(), 1);
    assert_eq!(preds[0]["instance_id"], "acme__calc-1");
    let report = read_json(&fx.path("out/run.json"));
    assert_eq!(report["by_status"]["env_error"], json!(["ghost__gone-1"]));
    assert_eq!(report["by_status"]["submitted"], json!(["acme__calc-1"]));
}

#[test]
fn refused_writes_model_errors_and_token_limits_get_their_statuses() {
    let fx = fixture();
    let instances = fx.jsonl(
        "instances.jsonl",
        &[
            fx.instance("acme__calc-1", true),
            fx.instance("acme__calc-2", true),
            fx.instance("acme__calc-3", true),
        ],
    );
    // Per-instance scripts: {instance_id} in the script path.
    fx.script(
        "acme__calc-1.json",
        &json!([
            {"tool_calls": [{"name": "fs-write", "arguments": {"path": ".env", "content": "DEBUG=1\n"}}],
             "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
            {"text": "I could not write the file.", "usage": {"prompt_tokens": 150, "completion_tokens": 10}}
        ]),
    );
    fx.script(
        "acme__calc-2.json",
        &json!([{"text": "never sent", "faults": [{"status": 500, "times": 5}]}]),
    );
    // An edit in a reply that uses up the token budget.
    fx.script(
        "acme__calc-3.json",
        &json!([
            {"tool_calls": [
                {"name": "fs-read", "arguments": {"path": "calc.py"}},
                {"name": "fs-edit", "arguments": {"path": "calc.py", "old": "return a - b", "new": "return a + b"}}],
             "usage": {"prompt_tokens": 4000, "completion_tokens": 50}},
            "never reached"
        ]),
    );
    let spec = fx.path("{instance_id}.json").display().to_string();
    let run = fx.run(&instances, "out", &spec, &["--max-tokens", "1000"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let refused = read_json(&fx.path("out/acme__calc-1/summary.json"));
    assert_eq!(refused["status"], "refused", "{refused}");
    assert_eq!(refused["refused_calls"], 1);
    let failed = read_json(&fx.path("out/acme__calc-2/summary.json"));
    assert_eq!(failed["status"], "model_error", "{failed}");
    assert!(
        failed["message"].as_str().unwrap_or("").contains("500"),
        "{failed}"
    );
    let limited = read_json(&fx.path("out/acme__calc-3/summary.json"));
    assert_eq!(limited["status"], "token_limit", "{limited}");
    assert_eq!(limited["tokens"], 4050);
    // The model error is retried by the next run; the others are predictions.
    let preds = read_json(&fx.path("out/preds.json"));
    assert!(preds.get("acme__calc-2").is_none(), "{preds}");
    assert_eq!(preds["acme__calc-1"]["model_patch"], "");
    let patch = preds["acme__calc-3"]["model_patch"].as_str().unwrap_or("");
    assert!(patch.contains("+    return a + b"), "{patch}");
}

#[test]
fn the_default_strategy_runs_no_test_and_check_is_asked_for() {
    let fx = fixture();
    let instances = fx.jsonl("instances.jsonl", &[fx.instance("acme__calc-1", true)]);
    let script = fx.script("fix.json", &fix_script());
    // Asked for: check after done, with compact.
    let run = fx.run(
        &instances,
        "out-check",
        &script,
        &[
            "--strategy",
            "check",
            "--hook",
            "compact",
            "--set",
            "check=true",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // With no --strategy at all: the plain loop and compact, and no test
    // run after done, so a script of exactly its replies ends submitted.
    let run2 = {
        let repos = fx.repos.display().to_string();
        let out = fx.path("out-implicit").display().to_string();
        fx.nib(&[
            "swebench",
            "--instances",
            &instances,
            "--repos",
            &repos,
            "--out",
            &out,
            "--provider",
            "scripted",
            "--model",
            &script,
            "--env",
            "local",
        ])
    };
    assert_eq!(run2.code, 0, "{}\n{}", run2.stdout, run2.stderr);
    let summary = read_json(&fx.path("out-implicit/acme__calc-1/summary.json"));
    assert_eq!(summary["status"], "submitted", "{summary}");
    let first_event = |name: &str| -> (Value, String) {
        let events = std::fs::read_to_string(fx.path(name).join("acme__calc-1/events.jsonl"))
            .expect("events");
        let start: Value = serde_json::from_str(events.lines().next().unwrap_or("{}")).unwrap();
        (start, events)
    };
    let (start, events) = first_event("out-check");
    // Then the hook that logs whole tool outputs for the trajectory.
    let strategy = start["strategy"].as_str().unwrap_or("");
    assert!(
        strategy.starts_with("check + compact + ")
            && strategy.ends_with("/.hooks/trajectory-output.scm"),
        "{strategy}"
    );
    assert!(events.contains("check: `true` passed"), "{events}");
    let (start, events) = first_event("out-implicit");
    let strategy = start["strategy"].as_str().unwrap_or("");
    assert!(
        strategy.contains("compact") && !strategy.contains("check"),
        "{strategy}"
    );
    assert!(!events.contains("check:"), "{events}");
    let report = read_json(&fx.path("out-implicit/run.json"));
    assert_eq!(report["strategy"], "default", "{report}");
}

#[test]
fn grade_passes_the_fixed_instance_and_fails_the_unfixed_one() {
    // python3 is on every machine nib is built on (CI included): a
    // missing one is a failure, not a silent pass.
    assert!(python3(), "grade's test needs python3 on PATH; install it");
    let fx = fixture();
    let mut fixed = fx.instance("acme__calc-1", true);
    fixed["test_cmd"] = json!("python3 run_tests.py {tests}");
    let mut unfixed = fx.instance("acme__calc-2", true);
    unfixed["test_cmd"] = json!("python3 run_tests.py {tests}");
    let mut empty = fx.instance("acme__calc-3", true);
    empty["test_cmd"] = json!("false");
    let instances = fx.jsonl("instances.jsonl", &[fixed, unfixed, empty]);
    fx.script("acme__calc-1.json", &fix_script());
    // A patch that does not fix the bug.
    fx.script(
        "acme__calc-2.json",
        &json!([
            {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "README.md", "old": "calc", "new": "calc!"}}]},
            "Done."
        ]),
    );
    fx.script("acme__calc-3.json", &json!(["Nothing to change."]));
    let spec = fx.path("{instance_id}.json").display().to_string();
    let run = fx.run(&instances, "out", &spec, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let repos = fx.repos.display().to_string();
    let out = fx.path("out").display().to_string();
    let grade = fx.nib(&[
        "swebench",
        "grade",
        "--instances",
        &instances,
        "--repos",
        &repos,
        "--out",
        &out,
        "--env",
        "local",
    ]);
    assert_eq!(
        grade.code, 1,
        "one is not resolved: {}\n{}",
        grade.stdout, grade.stderr
    );
    assert!(
        grade
            .stdout
            .contains("official SWE-bench harness is the reference"),
        "{}",
        grade.stdout
    );
    assert!(
        grade.stdout.contains("acme__calc-1: resolved"),
        "{}",
        grade.stdout
    );
    assert!(
        grade.stdout.contains("acme__calc-2: not resolved"),
        "{}",
        grade.stdout
    );
    // An empty patch is counted as empty and its tests are not run (its
    // command, `false`, would not pass anyway).
    assert!(
        grade
            .stdout
            .contains("acme__calc-3: not resolved (FAIL_TO_PASS 0/1, PASS_TO_PASS 0/1)\n  empty patch: not run"),
        "{}",
        grade.stdout
    );
    let empty = read_json(&fx.path("out/acme__calc-3/grade.json"));
    assert_eq!(empty["empty_patch"], true, "{empty}");
    assert_eq!(empty["resolved"], false);
    assert!(empty.get("command").is_none(), "{empty}");
    assert!(!fx.path("out/acme__calc-3/test_output.txt").exists());
    assert_eq!(empty["environment"]["kind"], "local", "{empty}");
    let good = read_json(&fx.path("out/acme__calc-1/grade.json"));
    assert_eq!(good["resolved"], true, "{good}");
    assert_eq!(
        good["FAIL_TO_PASS"]["tests"]["tests/test_calc.py::test_add"],
        "passed"
    );
    assert_eq!(
        good["PASS_TO_PASS"]["tests"]["tests/test_calc.py::test_mul"],
        "passed"
    );
    let bad = read_json(&fx.path("out/acme__calc-2/grade.json"));
    assert_eq!(bad["resolved"], false);
    assert_eq!(
        bad["FAIL_TO_PASS"]["failure"],
        json!(["tests/test_calc.py::test_add"])
    );
    assert_eq!(
        bad["PASS_TO_PASS"]["tests"]["tests/test_calc.py::test_mul"],
        "passed"
    );

    // The gold patch, with the command given on the command line.
    let gold = fx.nib(&[
        "swebench",
        "grade",
        "--instances",
        &instances,
        "--repos",
        &repos,
        "--out",
        &out,
        "--gold",
        "--instance",
        "acme__calc-2",
        "--test-cmd",
        "python3 run_tests.py {tests}",
        "--env",
        "local",
    ]);
    assert_eq!(gold.code, 0, "{}\n{}", gold.stdout, gold.stderr);
    assert!(
        gold.stdout.contains("acme__calc-2: resolved"),
        "{}",
        gold.stdout
    );
}

/// The reader on eight real SWE-bench Lite records (F2P/P2P stored as
/// JSON-encoded strings), and the same records with real lists.
#[test]
fn real_lite_records_parse_in_both_forms() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/swebench/instances.jsonl");
    let all = nib::headless::swebench::load_instances(&path).expect("the records parse");
    let counts: Vec<(&str, usize, usize)> = all
        .iter()
        .map(|i| {
            (
                i.instance_id.as_str(),
                i.fail_to_pass.len(),
                i.pass_to_pass.len(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            ("marshmallow-code__marshmallow-1359", 1, 76),
            ("sqlfluff__sqlfluff-2419", 1, 0),
            ("sqlfluff__sqlfluff-1763", 3, 63),
            ("pylint-dev__astroid-1196", 2, 24),
            ("pylint-dev__astroid-1978", 1, 12),
            ("pydicom__pydicom-1694", 1, 26),
            ("pydicom__pydicom-1256", 1, 22),
            ("pytest-dev__pytest-11143", 1, 114),
        ]
    );
    let m = &all[0];
    assert_eq!(m.repo, "marshmallow-code/marshmallow");
    assert_eq!(m.base_commit, "b40a0f4e33823e6d0f341f7e8684e359a99060d1");
    assert!(
        m.test_patch
            .starts_with("diff --git a/tests/test_fields.py")
    );
    assert!(!m.problem_statement.is_empty());

    // Re-encoded with real lists, as JSON array: the same instances.
    let text = fs::read_to_string(&path).expect("read");
    let records: Vec<Value> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("json");
            for key in ["FAIL_TO_PASS", "PASS_TO_PASS"] {
                let list: Value =
                    serde_json::from_str(v[key].as_str().expect("string")).expect("list");
                v[key] = list;
            }
            v
        })
        .collect();
    let dir = tempfile::tempdir().expect("temp");
    let array = dir.path().join("lite.json");
    fs::write(&array, Value::Array(records).to_string()).expect("write");
    let again = nib::headless::swebench::load_instances(&array).expect("array form");
    assert_eq!(again, all);
    // Two shards by sorted id; a shard keeps the file's order.
    let shard = "1/2".parse().expect("shard");
    let picked = nib::headless::swebench::select(all.clone(), Some(shard), &[]).expect("select");
    assert_eq!(picked.len(), 4);
    let mut sorted: Vec<&str> = all.iter().map(|i| i.instance_id.as_str()).collect();
    sorted.sort_unstable();
    let want: Vec<&str> = sorted.iter().skip(1).step_by(2).copied().collect();
    let in_file_order: Vec<&str> = all
        .iter()
        .map(|i| i.instance_id.as_str())
        .filter(|id| want.contains(id))
        .collect();
    let got: Vec<&str> = picked.iter().map(|i| i.instance_id.as_str()).collect();
    assert_eq!(got, in_file_order);
}

#[test]
fn what_the_model_staged_or_committed_stays_in_the_patch() {
    let fx = fixture();
    let instances = fx.jsonl("instances.jsonl", &[fx.instance("acme__calc-1", true)]);
    let script = fx.script(
        "git.json",
        &json!([
            {"tool_calls": [
                {"name": "fs-read", "arguments": {"path": "calc.py"}},
                {"name": "fs-edit", "arguments": {"path": "calc.py", "old": "return a - b", "new": "return a + b"}},
                {"name": "shell", "arguments": {"command": "printf 'staged\\n' > staged.txt && git add staged.txt && git -c user.name=m -c user.email=m@example.com commit -qm wip calc.py"}}
            ]},
            "Committed the fix."
        ]),
    );
    let run = fx.run(&instances, "out", &script, &["--keep-worktrees"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let patch = fs::read_to_string(fx.path("out/acme__calc-1/patch.diff")).expect("patch");
    assert!(patch.contains("+    return a + b"), "{patch}");
    assert!(patch.contains("b/staged.txt\nnew file mode"), "{patch}");
    // The worktree was kept, and its own index still holds what the model
    // staged (taking the patch used a copy).
    let tree = fx.path("out/.work/acme__calc-1");
    let staged = git(&tree, &["diff", "--cached", "--name-only"]);
    assert_eq!(staged, "staged.txt");
    let summary = read_json(&fx.path("out/acme__calc-1/summary.json"));
    assert_eq!(
        summary["worktree"],
        tree.canonicalize().expect("tree").display().to_string()
    );

    // Run it again over the kept worktree, then over a worktree that is
    // registered in the clone but deleted: each time a fresh one at base.
    for round in ["kept", "deleted"] {
        fs::remove_file(fx.path("out/preds.jsonl")).expect("forget the prediction");
        if round == "deleted" {
            fs::remove_dir_all(&tree).expect("delete the worktree");
        }
        let again = fx.run(&instances, "out", &script, &["--keep-worktrees"]);
        assert_eq!(again.code, 0, "{round}: {}", again.stderr);
        let repeated = fs::read_to_string(fx.path("out/acme__calc-1/patch.diff")).expect("patch");
        assert_eq!(repeated, patch, "{round}");
    }
}

/// The per-endpoint cap `--model-concurrency` sets, in the model client:
/// with a cap of 1, a second request to the same server goes out only
/// after the first reply is complete, so while the first reply streams the
/// server has seen one request.
#[test]
fn the_endpoint_cap_holds_a_second_request_until_the_first_is_done() {
    use nib::model::scripted::{Script, ScriptedServer};
    use nib::model::{Client, Message, Provider, Request};
    use std::sync::{Arc, Mutex};

    let reply = json!({"text": "a reply streamed slowly, piece by piece, so a second request would arrive meanwhile",
        "fragment": 4, "faults": [{"delay_between_chunks_ms": 15}]});
    let script = Script::from_json(&json!([reply, reply]).to_string()).expect("script");
    let server = Arc::new(ScriptedServer::start(script).expect("server"));
    nib::model::set_endpoint_concurrency(1);
    let req = Request {
        max_tokens: None,
        system: "s".into(),
        messages: vec![Message::User("hi".into())],
        tools: vec![],
    };
    let seen_during_first = Arc::new(Mutex::new(Vec::new()));
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let first = {
        let (server, seen, req) = (
            Arc::clone(&server),
            Arc::clone(&seen_during_first),
            req.clone(),
        );
        std::thread::spawn(move || {
            let client = Client::new(server.config(Provider::OpenAi)).expect("client");
            let mut told = false;
            client
                .reply(&req, &mut |_| {
                    if !told {
                        told = true;
                        let _ = started_tx.send(());
                    }
                    seen.lock().expect("seen").push(server.requests().len());
                })
                .expect("first reply")
        })
    };
    started_rx.recv().expect("the first reply started");
    let client = Client::new(server.config(Provider::OpenAi)).expect("client");
    let second = client.reply(&req, &mut |_| {}).expect("second reply");
    let first = first.join().expect("first thread");
    nib::model::set_endpoint_concurrency(0);
    assert_eq!(first.text, second.text);
    let seen = seen_during_first.lock().expect("seen").clone();
    assert!(seen.len() > 5, "{seen:?}");
    assert!(
        seen.iter().all(|n| *n == 1),
        "the second request went out early: {seen:?}"
    );
    assert_eq!(server.requests().len(), 2);
}
