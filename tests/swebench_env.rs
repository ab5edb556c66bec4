//! `nib swebench --env`: where an instance's commands run, end to end
//! through the real binary and the scripted model over HTTP.
//!
//! - A **stand-in engine** for the container protocol: no container engine
//!   runs on the machines this is built on, so a small shell script put
//!   first on PATH as `docker` implements the part of the CLI nib uses
//!   (`info`, `run -d` with `-v`/`-w`, `run --rm`, `exec` with `-w`/`-e`,
//!   `rm -f`) by running the commands on this machine in the mounted
//!   directory, and records every call. It checks what nib asks of an
//!   engine (network none, the mount, the workdir, the image name) and
//!   that output and exit codes come back through it; it is not a
//!   container.
//! - `--install-cmd` on local, and its failure as `env_error`.
//! - preds.jsonl cut mid-line by a crash, then a resumed run.
//! - A real engine (ignored unless one runs): a tiny image built here.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod support;
use support::{Run, git, read_json};

const NIB: &str = env!("CARGO_BIN_EXE_nib");

const BUGGY: &str = "def add(a, b):\n    return a - b\n";

/// The stand-in `docker`. Calls are recorded NUL-separated, one file each,
/// in $STANDIN_DIR/calls; a "container" is a file naming its mounted
/// directory. `exec` runs the command in a session of its own (`setsid
/// -w`), so, as in a container, killing the client does not stop it.
const STANDIN: &str = r#"#!/bin/sh
# Stand-in for the container engine CLI (test only): runs on the host.
calls="$STANDIN_DIR/calls"
boxes="$STANDIN_DIR/containers"
mkdir -p "$calls" "$boxes"
n=$(ls "$calls" | wc -l)
printf '%s\0' "$@" > "$calls/$(printf %04d "$n")-$$"
cmd=$1
shift
case "$cmd" in
info)
    exit 0
    ;;
rm)
    [ "$1" = "-f" ] && shift
    rm -f "$boxes/${1#standin-}"
    exit 0
    ;;
run)
    detach= mount= name=
    while [ $# -gt 0 ]; do
        case "$1" in
        -d) detach=1; shift ;;
        --rm) shift ;;
        --name) name=$2; shift 2 ;;
        -v) case "$2" in *:/testbed) mount=$2 ;; esac; shift 2 ;;
        --label|--network|-w|--entrypoint) shift 2 ;;
        *) break ;;
        esac
    done
    shift # the image
    if [ -z "$detach" ]; then
        # `sh -c SCRIPT` against the image's /testbed: a directory the test made.
        script=$(printf '%s' "$2" | sed "s#/testbed#$STANDIN_IMAGE_TESTBED#g")
        exec sh -c "$script"
    fi
    printf '%s' "${mount%:/testbed}" > "$boxes/$name"
    echo "standin-$name"
    exit 0
    ;;
exec)
    while [ $# -gt 0 ]; do
        case "$1" in
        -w) shift 2 ;;
        -e) export "$2"; shift 2 ;;
        *) break ;;
        esac
    done
    box=${1#standin-}
    shift
    host=$(cat "$boxes/$box" 2>/dev/null) || { echo "stand-in: no container $box" >&2; exit 125; }
    cd "$host" || exit 125
    # The mount: /testbed in the command is the mounted directory.
    n=$#
    while [ "$n" -gt 0 ]; do
        set -- "$@" "$(printf '%s' "$1" | sed "s#/testbed#$host#g")"
        shift
        n=$((n - 1))
    done
    exec setsid -w "$@"
    ;;
esac
echo "stand-in: unsupported command: $cmd" >&2
exit 125
"#;

struct Fixture {
    dir: tempfile::TempDir,
    repos: PathBuf,
    base: String,
}

/// A repository `acme/calc` (calc.py with a bug, a .gitignore that
/// ignores build output) cloned under repos/.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let upstream = dir.path().join("upstream");
    fs::create_dir_all(&upstream).expect("upstream");
    git(&upstream, &["init", "-q", "-b", "main"]);
    fs::write(upstream.join("calc.py"), BUGGY).expect("calc.py");
    fs::write(upstream.join(".gitignore"), "*.so\nbuild/\n.nib/\n").expect("gitignore");
    git(&upstream, &["add", "-A"]);
    git(&upstream, &["commit", "-qm", "calc"]);
    let base = git(&upstream, &["rev-parse", "HEAD"]);
    let repos = dir.path().join("repos");
    fs::create_dir(&repos).expect("repos");
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            &upstream.display().to_string(),
            &repos.join("acme__calc").display().to_string(),
        ],
    );
    fs::create_dir(dir.path().join("config")).expect("config");
    Fixture { dir, repos, base }
}

impl Fixture {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) -> String {
        let path = self.path(rel);
        fs::write(&path, text).expect("write");
        path.display().to_string()
    }

    fn instances(&self, ids: &[&str]) -> String {
        let text: String = ids
            .iter()
            .map(|id| {
                format!(
                    "{}\n",
                    json!({
                        "repo": "acme/calc",
                        "instance_id": id,
                        "base_commit": self.base,
                        "problem_statement": "add(2, 3) returns -1.",
                        "FAIL_TO_PASS": "[]",
                        "PASS_TO_PASS": "[]",
                    })
                )
            })
            .collect();
        self.write("instances.jsonl", &text)
    }

    /// `nib swebench` with the scripted model, and `path_first` (the
    /// stand-in's directory) first on PATH when given.
    fn run(&self, instances: &str, script: &str, extra: &[&str], path_first: Option<&Path>) -> Run {
        let repos = self.repos.display().to_string();
        let out = self.path("out").display().to_string();
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
            "--strategy",
            "default",
        ];
        args.extend_from_slice(extra);
        self.nib(&args, path_first, |_| {})
    }

    /// `nib swebench grade --gold` of `instances` into OUT, PYTHONPATH
    /// unset, the stand-in first on PATH when given.
    fn grade(&self, instances: &str, extra: &[&str], path_first: Option<&Path>) -> Run {
        let repos = self.repos.display().to_string();
        let out = self.path("out").display().to_string();
        let mut args = vec![
            "swebench",
            "grade",
            "--instances",
            instances,
            "--repos",
            &repos,
            "--out",
            &out,
            "--gold",
        ];
        args.extend_from_slice(extra);
        self.nib(&args, path_first, |cmd| {
            cmd.env_remove("PYTHONPATH");
        })
    }

    /// The binary with `args` in the fixture's directory and its own user
    /// config, `path_first` (the stand-in's directory) first on PATH when
    /// given; `adjust` changes the command further.
    fn nib(
        &self,
        args: &[&str],
        path_first: Option<&Path>,
        adjust: impl FnOnce(&mut Command),
    ) -> Run {
        let mut cmd = Command::new(NIB);
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("XDG_CONFIG_HOME", self.path("config"))
            .stdin(Stdio::null());
        if let Some(dir) = path_first {
            let path = std::env::var("PATH").unwrap_or_default();
            cmd.env("PATH", format!("{}:{path}", dir.display()))
                .env("STANDIN_DIR", self.path("standin"))
                .env("STANDIN_IMAGE_TESTBED", self.path("image-testbed"));
        }
        adjust(&mut cmd);
        let out = cmd.output().expect("run nib");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// An instance whose gold patch fixes add, graded by a test command
    /// that prints a pytest-style line.
    fn gradable(&self, id: &str, test_cmd: &str) -> String {
        let record = json!({
            "repo": "acme/calc",
            "instance_id": id,
            "base_commit": self.base,
            "problem_statement": "add(2, 3) returns -1.",
            "patch": "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n",
            "test_patch": "",
            "FAIL_TO_PASS": "[\"t.py::test_add\"]",
            "PASS_TO_PASS": "[]",
            "test_cmd": test_cmd,
        });
        self.write("grade-instances.jsonl", &format!("{record}\n"))
    }

    /// The stand-in engine as `docker` in a directory of its own, and the
    /// "image's" /testbed: the repository at the base with what a build
    /// left there (ignored files) and a stray untracked file.
    fn standin(&self) -> PathBuf {
        let bin = self.path("standin-bin");
        fs::create_dir_all(&bin).expect("bin");
        let docker = bin.join("docker");
        fs::write(&docker, STANDIN).expect("stand-in");
        let mut perms = fs::metadata(&docker).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        fs::set_permissions(&docker, perms).expect("chmod");
        let testbed = self.path("image-testbed");
        git(
            self.dir.path(),
            &[
                "clone",
                "-q",
                &self.repos.join("acme__calc").display().to_string(),
                &testbed.display().to_string(),
            ],
        );
        fs::write(testbed.join("_speedups.so"), "built\n").expect("so");
        fs::create_dir_all(testbed.join("build/lib")).expect("build");
        fs::write(testbed.join("build/lib/calc.py"), "copy\n").expect("build file");
        fs::write(testbed.join("stray.txt"), "not ignored\n").expect("stray");
        bin
    }

    /// The stand-in's recorded calls, in order, each as its arguments.
    fn calls(&self) -> Vec<Vec<String>> {
        let dir = self.path("standin/calls");
        let mut names: Vec<PathBuf> = fs::read_dir(&dir)
            .expect("calls")
            .map(|e| e.expect("entry").path())
            .collect();
        names.sort();
        names
            .iter()
            .map(|p| {
                let bytes = fs::read(p).expect("call");
                bytes
                    .split(|b| *b == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .collect()
    }
}

fn events(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .expect("events")
        .lines()
        .map(|l| serde_json::from_str(l).expect("event"))
        .collect()
}

fn shell_summaries(path: &Path) -> Vec<String> {
    events(path)
        .iter()
        .filter(|e| e["ev"] == "tool.result" && e["name"] == "shell")
        .map(|e| {
            format!(
                "{} | {}",
                e["summary"].as_str().unwrap_or(""),
                e["hint"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn dead(pid: &str) -> bool {
    let stat = format!("/proc/{}/stat", pid.trim());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let state = fs::read_to_string(&stat)
            .ok()
            .and_then(|s| s.rsplit_once(") ").and_then(|(_, r)| r.chars().next()));
        if matches!(state, None | Some('Z') | Some('X')) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_stand_in_engine_gets_the_container_protocol_and_the_shell_comes_back_through_it() {
    let fx = fixture();
    let bin = fx.standin();
    let instances = fx.instances(&["acme__calc-1"]);
    let script = fx.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "shell", "arguments": {"command": "pwd > where.txt; ls _speedups.so build/lib; echo through the engine; exit 3"}}]},
            {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "/testbed/calc.py", "old": "a - b", "new": "a + b"}}]},
            {"tool_calls": [{"name": "shell", "arguments": {"command": "grep -c 'a + b' calc.py"}}]},
            {"tool_calls": [{"name": "shell", "arguments": {"command": "echo $$ > sleeper.pid; exec sleep 60", "timeout": 1}}]},
            {"tool_calls": [{"name": "shell", "arguments": {"command": "cd /testbed && echo 'x = 1' > /testbed/new_module.py"}}]},
            "Fixed."
        ])
        .to_string(),
    );
    let started = Instant::now();
    let run = fx.run(&instances, &script, &["--keep-worktrees"], Some(&bin));
    assert_eq!(
        run.code,
        0,
        "{}\n{}\n{}",
        run.stdout,
        run.stderr,
        fs::read_to_string(fx.path("out/acme__calc-1/env.log")).unwrap_or_default()
    );
    // The sleeper was stopped at its 1 s timeout, not waited for.
    assert!(started.elapsed() < Duration::from_secs(50));
    assert!(
        run.stderr
            .contains("environment: docker (auto: `docker info` answered)"),
        "{}",
        run.stderr
    );
    let report = read_json(&fx.path("out/run.json"));
    assert_eq!(report["environment"]["kind"], "docker", "{report}");
    let image = "docker.io/swebench/sweb.eval.x86_64.acme_1776_calc-1:latest";
    assert_eq!(
        report["environment"]["image"],
        image.replace("acme_1776_calc-1", "{id}")
    );
    let summary = read_json(&fx.path("out/acme__calc-1/summary.json"));
    assert_eq!(summary["status"], "submitted", "{summary}");
    let worktree = PathBuf::from(summary["worktree"].as_str().expect("kept worktree"));

    // Output and exit codes came back through `exec`.
    let shells = shell_summaries(&fx.path("out/acme__calc-1/events.jsonl"));
    assert_eq!(shells.len(), 4, "{shells:?}");
    assert_eq!(
        shells[0], "through the engine (exit code: 3) | ",
        "{shells:?}"
    );
    assert_eq!(shells[1], "1 (exit code: 0) | ", "{shells:?}");
    assert!(shells[2].contains("timed out after 1 s"), "{shells:?}");
    // The container's /testbed is the workspace to the guard and the file
    // primitives: the edit above and this write were not refused.
    assert_eq!(shells[3], "exit code: 0 | ", "{shells:?}");
    // It ran in the mounted directory; the file primitives edited the same tree.
    let canonical = fs::canonicalize(&worktree).expect("worktree");
    assert_eq!(
        fs::read_to_string(worktree.join("where.txt"))
            .expect("where.txt")
            .trim(),
        canonical.display().to_string()
    );
    // The timed-out command was killed inside the "container" too (the
    // stand-in ran it in its own session, out of reach of the client's kill).
    let pid = fs::read_to_string(worktree.join("sleeper.pid")).expect("pid");
    assert!(dead(&pid), "the command that timed out still runs: {pid}");

    // The image's ignored files were copied in, its stray file was not, and
    // neither is in the patch.
    assert_eq!(
        fs::read_to_string(worktree.join("_speedups.so")).expect("so"),
        "built\n"
    );
    assert!(worktree.join("build/lib/calc.py").is_file());
    assert!(!worktree.join("stray.txt").exists());
    let patch = fs::read_to_string(fx.path("out/acme__calc-1/patch.diff")).expect("patch");
    assert!(patch.contains("+    return a + b"), "{patch}");
    assert!(
        !patch.contains("_speedups") && !patch.contains("build/"),
        "{patch}"
    );

    // What nib asked of the engine, call by call.
    let calls = fx.calls();
    let names: Vec<&str> = calls.iter().map(|c| c[0].as_str()).collect();
    assert_eq!(names[0], "info", "{calls:?}");
    let seed = calls
        .iter()
        .find(|c| c[0] == "run" && c[1] == "--rm")
        .expect("the seeding run");
    assert_eq!(
        seed[..7],
        [
            "run",
            "--rm",
            "--network",
            "none",
            "--entrypoint",
            "sh",
            image
        ],
        "{seed:?}"
    );
    let start = calls
        .iter()
        .find(|c| c[0] == "run" && c[1] == "-d")
        .expect("the container's start");
    let name = start[3].clone();
    assert!(name.starts_with("nib-acme__calc-1-"), "{start:?}");
    let mount = format!("{}:/testbed", worktree.display());
    let git_dir = fs::canonicalize(fx.repos.join("acme__calc/.git")).expect("git dir");
    let git_mount = format!("{}:{}", git_dir.display(), git_dir.display());
    let expected: Vec<&str> = vec![
        "run",
        "-d",
        "--name",
        &name,
        "--label",
        "nib.swebench=1",
        "--network",
        "none",
        "-v",
        &mount,
        "-v",
        &git_mount,
        "-w",
        "/testbed",
        "--entrypoint",
        "sh",
        image,
        "-c",
        "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done",
    ];
    assert_eq!(start, &expected, "{start:?}");
    let container = format!("standin-{name}");
    let execs: Vec<&Vec<String>> = calls
        .iter()
        .filter(|c| c[0] == "exec" && c[1] == "-w")
        .collect();
    assert_eq!(execs.len(), 4, "{calls:?}");
    let first = execs[0];
    assert_eq!(first[..3], ["exec", "-w", "/testbed"], "{first:?}");
    assert_eq!(first[3], "-e");
    assert!(first[4].starts_with("NIB_SHELL_CALL="), "{first:?}");
    assert_eq!(
        first[5..10],
        ["-e", "PAGER=cat", "-e", "GIT_PAGER=cat", container.as_str()]
    );
    assert_eq!(first[10..12], ["sh", "-c"]);
    assert!(
        first[12].contains("/opt/miniconda3/envs/testbed/bin"),
        "{first:?}"
    );
    assert_eq!(
        first[13..],
        [
            "sh",
            "pwd > where.txt; ls _speedups.so build/lib; echo through the engine; exit 3"
        ]
    );
    // The timed-out command's processes were looked for by its mark.
    let mark = &execs[2][4];
    let kill = calls
        .iter()
        .find(|c| {
            c[0] == "exec" && c[1] == container && c.iter().any(|a| a.contains(mark.as_str()))
        })
        .expect("the kill inside the container");
    assert!(
        kill.last().is_some_and(|s| s.contains("kill -KILL")),
        "{kill:?}"
    );
    // Removed at the end.
    assert_eq!(
        calls.last().map(|c| c.as_slice()),
        Some(
            ["rm", "-f", container.as_str()]
                .map(String::from)
                .as_slice()
        ),
        "{calls:?}"
    );
    assert!(!fx.path(&format!("standin/containers/{name}")).exists());
}

#[test]
fn an_engine_that_does_not_answer_is_a_usage_error_and_auto_falls_back_to_local() {
    let fx = fixture();
    let bin = fx.path("broken-bin");
    fs::create_dir_all(&bin).expect("bin");
    for name in ["docker", "podman"] {
        let path = bin.join(name);
        fs::write(
            &path,
            "#!/bin/sh\necho 'Cannot connect to the daemon' >&2\nexit 1\n",
        )
        .expect("engine");
        let mut perms = fs::metadata(&path).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        fs::set_permissions(&path, perms).expect("chmod");
    }
    let instances = fx.instances(&["acme__calc-1"]);
    let script = fx.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "shell", "arguments": {"command": "echo here > local.txt"}}]},
            "Done."
        ])
        .to_string(),
    );
    let asked = fx.run(&instances, &script, &["--env", "docker"], Some(&bin));
    assert_eq!(asked.code, 2, "{}", asked.stderr);
    assert!(
        asked.stderr.contains("--env docker: `docker info` failed")
            && asked.stderr.contains("use --env local"),
        "{}",
        asked.stderr
    );
    let auto = fx.run(&instances, &script, &[], Some(&bin));
    assert_eq!(auto.code, 0, "{}", auto.stderr);
    assert!(
        auto.stderr
            .contains("environment: local (auto: no container engine answered"),
        "{}",
        auto.stderr
    );
    let report = read_json(&fx.path("out/run.json"));
    assert_eq!(report["environment"]["kind"], "local");
    let patch = fs::read_to_string(fx.path("out/acme__calc-1/patch.diff")).expect("patch");
    assert!(patch.contains("+here"), "{patch}");
}

#[test]
fn install_cmd_runs_once_before_the_session_and_its_failure_is_an_environment_error() {
    let fx = fixture();
    let instances = fx.instances(&["acme__calc-1"]);
    let script = fx.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "shell", "arguments": {"command": "cat build/installed"}}]},
            "Done."
        ])
        .to_string(),
    );
    let ok = fx.run(
        &instances,
        &script,
        &[
            "--env",
            "local",
            "--install-cmd",
            "echo installing; mkdir -p build && echo yes > build/installed",
        ],
        None,
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(
        ok.stderr.contains("install: echo installing"),
        "{}",
        ok.stderr
    );
    let shells = shell_summaries(&fx.path("out/acme__calc-1/events.jsonl"));
    assert_eq!(shells, ["yes (exit code: 0) | "]);
    let log = fs::read_to_string(fx.path("out/acme__calc-1/env.log")).expect("env.log");
    assert!(log.contains("installing\n"), "{log}");
    // What the install made is ignored, so not in the patch.
    let patch = fs::read_to_string(fx.path("out/acme__calc-1/patch.diff")).expect("patch");
    assert!(patch.is_empty(), "{patch}");

    let failing = fx.instances(&["acme__calc-2"]);
    let bad = fx.run(
        &failing,
        &script,
        &[
            "--env",
            "local",
            "--install-cmd",
            "echo no compiler >&2; exit 7",
        ],
        None,
    );
    assert_eq!(bad.code, 1, "not in preds, to be retried: {}", bad.stderr);
    let summary = read_json(&fx.path("out/acme__calc-2/summary.json"));
    assert_eq!(summary["status"], "env_error", "{summary}");
    let message = summary["message"].as_str().unwrap_or("");
    assert!(
        message.contains("--install-cmd `echo no compiler >&2; exit 7` exited with 7")
            && message.contains("env.log"),
        "{message}"
    );
    assert!(!fx.path("out/acme__calc-2/events.jsonl").exists());
    let report = read_json(&fx.path("out/run.json"));
    assert_eq!(report["by_status"]["env_error"], json!(["acme__calc-2"]));
    let log = fs::read_to_string(fx.path("out/acme__calc-2/env.log")).expect("env.log");
    assert!(log.contains("no compiler"), "{log}");
}

#[test]
fn a_preds_line_cut_by_a_crash_is_dropped_and_its_instance_runs_again() {
    let fx = fixture();
    let instances = fx.instances(&["acme__calc-1", "acme__calc-2"]);
    let script = fx.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
            "Fixed."
        ])
        .to_string(),
    );
    let first = fx.run(&instances, &script, &["--env", "local"], None);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let preds = fx.path("out/preds.jsonl");
    let text = fs::read_to_string(&preds).expect("preds");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    // A crash in the middle of writing the second line.
    let keep = lines[0].len() + 1 + lines[1].len() / 2;
    fs::write(&preds, &text.as_bytes()[..keep]).expect("cut");
    let cut_bytes = keep - lines[0].len() - 1;

    let second = fx.run(&instances, &script, &["--env", "local"], None);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second.stderr.contains(&format!(
            "the last line was cut (a crash mid-write): dropped its {cut_bytes} bytes, every whole line kept; acme__calc-2 is not in the predictions and runs again"
        )),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains("1 instance(s) already in"),
        "{}",
        second.stderr
    );
    let text = fs::read_to_string(&preds).expect("preds");
    assert!(text.ends_with('\n'));
    let ids: Vec<String> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("every line whole");
            v["instance_id"].as_str().unwrap_or("").to_string()
        })
        .collect();
    assert_eq!(ids, ["acme__calc-1", "acme__calc-2"]);
    // run.json: this invocation ran one; the run directory holds both.
    let report = read_json(&fx.path("out/run.json"));
    assert_eq!(report["ran"], 1);
    assert_eq!(
        report["by_status"]["submitted"],
        json!(["acme__calc-1", "acme__calc-2"])
    );
}

/// A statically linked busybox on this machine (it runs in an empty image).
fn static_busybox() -> Option<PathBuf> {
    let path = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())?;
    let out = Command::new("ldd").arg(&path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    text.contains("not a dynamic executable").then_some(path)
}

const GRADE_CMD: &str = "if grep -q 'a + b' calc.py; then echo 'PASSED t.py::test_add'; else echo 'FAILED t.py::test_add'; fi; echo \"pwd=$(pwd) path=[$PYTHONPATH]\"; ls build/marker _speedups.so 2>&1";

#[test]
fn grade_runs_the_tests_through_the_engine_and_installs_before_them_locally() {
    let fx = fixture();
    let bin = fx.standin();
    let instances = fx.gradable("acme__calc-1", GRADE_CMD);
    let run = fx.grade(&instances, &[], Some(&bin));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("acme__calc-1: resolved"),
        "{}",
        run.stdout
    );
    let report = read_json(&fx.path("out/acme__calc-1/grade.json"));
    assert_eq!(report["environment"]["kind"], "docker", "{report}");
    let log = fs::read_to_string(fx.path("out/acme__calc-1/test_output.txt")).expect("log");
    // In the "container": at the mount, with the image's built files, and
    // nothing put on PYTHONPATH.
    assert!(log.contains("path=[]"), "{log}");
    assert!(log.contains("_speedups.so"), "{log}");
    let calls = fx.calls();
    let test_exec = calls
        .iter()
        .find(|c| {
            c[0] == "exec"
                && c.last()
                    .is_some_and(|a| a.contains("PASSED t.py::test_add"))
        })
        .expect("the tests ran through exec");
    assert_eq!(test_exec[..3], ["exec", "-w", "/testbed"], "{test_exec:?}");
    assert_eq!(calls.last().map(|c| c[0].as_str()), Some("rm"));

    // Locally: without an install step the worktree is first on
    // PYTHONPATH; with one it is not, and what it built is there.
    let plain = fx.grade(&instances, &["--env", "local"], None);
    assert_eq!(plain.code, 0, "{}\n{}", plain.stdout, plain.stderr);
    let log = fs::read_to_string(fx.path("out/acme__calc-1/test_output.txt")).expect("log");
    let worktree = fx.path("out/.grade/acme__calc-1");
    assert!(
        log.contains(&format!("path=[{}]", worktree.display())),
        "{log}"
    );
    let installed = fx.grade(
        &instances,
        &[
            "--env",
            "local",
            "--install-cmd",
            "mkdir -p build && echo built > build/marker",
        ],
        None,
    );
    assert_eq!(
        installed.code, 0,
        "{}\n{}",
        installed.stdout, installed.stderr
    );
    let log = fs::read_to_string(fx.path("out/acme__calc-1/test_output.txt")).expect("log");
    assert!(log.contains("path=[]"), "{log}");
    assert!(log.contains("build/marker\n"), "{log}");
    let report = read_json(&fx.path("out/acme__calc-1/grade.json"));
    assert_eq!(
        report["environment"]["install_cmd"],
        "mkdir -p build && echo built > build/marker"
    );
    // An install that fails is the instance's error, and its tests do not run.
    let broken = fx.grade(
        &instances,
        &["--env", "local", "--install-cmd", "exit 9"],
        None,
    );
    assert_eq!(broken.code, 1);
    assert!(
        broken.stdout.contains(
            "error: the environment could not be set up: --install-cmd `exit 9` exited with 9"
        ),
        "{}",
        broken.stdout
    );
}

/// Which engine answers here, if any.
fn running_engine() -> Option<&'static str> {
    ["docker", "podman"].into_iter().find(|e| {
        Command::new(e)
            .arg("info")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
#[ignore = "needs a running docker or podman engine"]
fn a_real_engine_runs_the_instance_in_its_image() {
    let engine = running_engine()
        .expect("no container engine answers `docker info` or `podman info`; start one");
    let fx = fixture();
    let context = fx.path("image");
    fs::create_dir_all(&context).expect("context");
    // A base image already on this machine (nothing is pulled), else
    // FROM scratch with this machine's static busybox.
    let base = ["busybox", "alpine", "debian", "ubuntu"]
        .into_iter()
        .find(|b| {
            Command::new(engine)
                .args(["image", "inspect", b])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
    let from = match base {
        Some(base) => format!("FROM {base}\n"),
        None => {
            let Some(busybox) = static_busybox() else {
                eprintln!(
                    "skipped: no busybox, alpine, debian or ubuntu image in the local {engine} store, and no static busybox on this machine to build one FROM scratch (`{engine} pull busybox`, or apt-get install busybox-static)"
                );
                return;
            };
            fs::copy(&busybox, context.join("busybox")).expect("copy busybox");
            "FROM scratch\nCOPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n"
                .to_string()
        }
    };
    fs::write(
        context.join("Dockerfile"),
        format!(
            "{from}RUN mkdir -p /testbed && echo inside > /nib-image-marker\nWORKDIR /testbed\n"
        ),
    )
    .expect("Dockerfile");
    // Fully qualified: podman does not resolve short names without a registry.
    let tag = format!("localhost/nib-swebench-test:{}", std::process::id());
    let built = Command::new(engine)
        .args(["build", "-q", "-t", &tag])
        .arg(&context)
        .output()
        .expect("build");
    assert!(
        built.status.success(),
        "{engine} build: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let instances = fx.instances(&["acme__calc-1"]);
    let script = fx.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "shell", "arguments": {"command": "{ cat /nib-image-marker; pwd; } > seen.txt; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' > interfaces.txt; grep -c 'a - b' calc.py"}}]},
            {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
            {"tool_calls": [{"name": "shell", "arguments": {"command": "grep -c 'a + b' calc.py && echo written inside > inside.txt"}}]},
            "Fixed."
        ])
        .to_string(),
    );
    let run = fx.run(
        &instances,
        &script,
        &["--env", engine, "--image", &tag],
        None,
    );
    // grade's tests in the same image.
    let gradable = fx.gradable("acme__calc-1", GRADE_CMD);
    let grade = fx.grade(&gradable, &["--env", engine, "--image", &tag], None);
    let _ = Command::new(engine)
        .args(["rmi", "-f", &tag])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let shells = shell_summaries(&fx.path("out/acme__calc-1/events.jsonl"));
    assert_eq!(shells.len(), 2, "{shells:?}");
    assert_eq!(shells[0], "1 (exit code: 0) | ", "{shells:?}");
    assert_eq!(shells[1], "1 (exit code: 0) | ", "{shells:?}");
    let patch = fs::read_to_string(fx.path("out/acme__calc-1/patch.diff")).expect("patch");
    assert!(patch.contains("+    return a + b"), "{patch}");
    assert!(patch.contains("+written inside"), "{patch}");
    // In the image, at /testbed.
    assert!(patch.contains("+inside\n+/testbed\n"), "{patch}");
    // Only loopback inside: the network was off.
    assert!(patch.contains("+lo\n"), "{patch}");
    assert!(!patch.contains("+eth0"), "{patch}");
    assert_eq!(grade.code, 0, "{}\n{}", grade.stdout, grade.stderr);
    let log = fs::read_to_string(fx.path("out/acme__calc-1/test_output.txt")).expect("log");
    assert!(
        log.contains("PASSED t.py::test_add\npwd=/testbed path=[]"),
        "{log}"
    );
    // The containers are gone.
    let left = Command::new(engine)
        .args(["ps", "-aq", "--filter", "label=nib.swebench=1"])
        .output()
        .expect("ps");
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "containers left behind"
    );
}

#[test]
fn without_a_clone_a_container_run_takes_the_repository_from_the_image() {
    let fx = fixture();
    let bin = fx.standin();
    let instances = fx.instances(&["acme__calc-1"]);
    let script = fx.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
            "Fixed."
        ])
        .to_string(),
    );
    // No --repos at all: the image's /testbed is the repository.
    let out = fx.path("out").display().to_string();
    let args = [
        "swebench",
        "--instances",
        &instances,
        "--out",
        &out,
        "--provider",
        "scripted",
        "--model",
        &script,
        "--strategy",
        "default",
        "--keep-worktrees",
    ];
    let run = fx.nib(&args, Some(&bin), |_| {});
    let env_log = fs::read_to_string(fx.path("out/acme__calc-1/env.log")).unwrap_or_default();
    assert_eq!(run.code, 0, "{}\n{}\n{env_log}", run.stdout, run.stderr);
    assert!(env_log.contains("from the image's /testbed"), "{env_log}");
    let summary = read_json(&fx.path("out/acme__calc-1/summary.json"));
    let tree = PathBuf::from(summary["worktree"].as_str().expect("kept tree"));
    // The image's build products are there, its stray untracked file is
    // not, and the patch is against the base commit.
    assert_eq!(
        fs::read_to_string(tree.join("_speedups.so")).expect("so"),
        "built\n"
    );
    assert!(!tree.join("stray.txt").exists());
    let patch = fs::read_to_string(fx.path("out/acme__calc-1/patch.diff")).expect("patch");
    assert!(patch.contains("+    return a + b"), "{patch}");
    assert!(
        !patch.contains("_speedups") && !patch.contains("stray"),
        "{patch}"
    );

    // With --env local and no --repos, a usage error says what to give.
    let local = fx.nib(
        &[
            "swebench",
            "--instances",
            &instances,
            "--out",
            &out,
            "--provider",
            "scripted",
            "--model",
            &script,
            "--env",
            "local",
        ],
        None,
        |_| {},
    );
    assert_eq!(local.code, 2, "{}", local.stderr);
    assert!(local.stderr.contains("--repos"), "{}", local.stderr);

    // A clone missing under --repos with --env local leaves an env.log.
    let empty = fx.path("no-clones");
    fs::create_dir_all(&empty).expect("dir");
    let missing = fx.nib(
        &[
            "swebench",
            "--instances",
            &instances,
            "--repos",
            &empty.display().to_string(),
            "--out",
            &fx.path("out-local").display().to_string(),
            "--provider",
            "scripted",
            "--model",
            &script,
            "--env",
            "local",
        ],
        None,
        |_| {},
    );
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    let log = fs::read_to_string(fx.path("out-local/acme__calc-1/env.log")).expect("env.log");
    assert!(log.contains("env_error"), "{log}");
}
