//! Where an instance's commands run (`--env`): the agent's `shell`, an
//! `--install-cmd`, and `grade`'s tests.
//!
//! - `local`: on this machine, in the worktree (nib's default shell);
//!   `--install-cmd` runs there once, before the session or the tests.
//! - `docker` / `podman`: in the instance's image (the harness's
//!   `swebench/sweb.eval.x86_64.<id>`, or `--image`), through the engine's
//!   command line. One container per instance, started with the host
//!   worktree bind-mounted at `/testbed`, network off (`--network none`),
//!   each command an `exec` in it; removed when the instance is done (a
//!   command stopped by a timeout or the deadline is killed inside it).
//!   The image's own `/testbed` is hidden by the mount, so before the
//!   container starts, the files its git ignores there (built C
//!   extensions, generated version files, egg-info) are copied into the
//!   worktree: they stay out of the patch (ignored there too), and the
//!   environment's editable install finds what it built. Tracked files the
//!   image changed are not copied (the patch is against `base_commit`).
//! - `auto` (the default): a container engine when `docker info` (else
//!   `podman info`) answers, else `local`.
//!
//! The file primitives work on the host side of the same tree, through the
//! guard; the guard also judges every command here before it runs.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::prim::tools::{ContainerShell, ShellPlace};
use crate::settings::UsageError;

use super::image;

/// The harness's instance images, on Docker Hub; `{id}` is the instance id
/// as the harness names images (`__` → `_1776_`, lower-cased),
/// `{instance_id}` the id as it is.
pub const DEFAULT_IMAGE: &str = "docker.io/swebench/sweb.eval.x86_64.{id}:latest";

/// Where the repository sits in the harness's images.
const TESTBED: &str = "/testbed";

/// Before each command in a container: the images' conda environment
/// (`testbed`) first on PATH, as the harness's `conda activate testbed`
/// does (nothing in other images); and git told to trust the mounted
/// repository, which the container's root does not own.
const PRELUDE: &str = "if [ -d /opt/miniconda3/envs/testbed/bin ]; then \
PATH=/opt/miniconda3/envs/testbed/bin:$PATH; CONDA_PREFIX=/opt/miniconda3/envs/testbed; \
CONDA_DEFAULT_ENV=testbed; export PATH CONDA_PREFIX CONDA_DEFAULT_ENV; fi; \
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'";

/// `--env`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EnvKind {
    /// A container engine when one answers `info`, else local.
    Auto,
    Docker,
    Podman,
    Local,
}

/// The environment flags `nib swebench` and `grade` share.
#[derive(Debug, Clone, Args)]
pub struct EnvArgs {
    /// Where shell commands and tests run: in the instance's image through
    /// docker or podman, on this machine (local), or auto (a container
    /// engine when one answers, else local).
    #[arg(long = "env", value_enum, default_value_t = EnvKind::Auto)]
    pub kind: EnvKind,
    /// The image of an instance, with {id} (the harness's image name for
    /// it) or {instance_id} (default: the harness's instance images).
    #[arg(long, value_name = "TEMPLATE")]
    pub image: Option<String>,
    /// A command run once in each fresh worktree before the session or the
    /// tests (e.g. `pip install -e .`); its output goes to <id>/env.log.
    #[arg(long, value_name = "CMD")]
    pub install_cmd: Option<String>,
}

/// A container engine's command line.
#[derive(Debug, Clone)]
pub struct Engine {
    /// `docker` or `podman`.
    pub name: &'static str,
    pub program: PathBuf,
}

/// The environment a run uses, resolved once from the flags.
#[derive(Debug, Clone)]
pub struct Env {
    pub engine: Option<Engine>,
    pub image: String,
    pub install_cmd: Option<String>,
    /// Why `auto` chose what it chose (for the run's output).
    pub why: String,
}

impl EnvArgs {
    /// The environment these flags ask for; an engine asked for by name
    /// must answer `info`.
    pub fn resolve(&self) -> Result<Env, UsageError> {
        let image = self.image.clone().unwrap_or_else(|| DEFAULT_IMAGE.into());
        let templated = image.contains("{id}") || image.contains("{instance_id}");
        if !templated && self.kind != EnvKind::Local {
            eprintln!(
                "nib swebench: --image {image} has neither {{id}} nor {{instance_id}}: every instance uses that one image"
            );
        }
        let install_cmd = self.install_cmd.clone().filter(|c| !c.trim().is_empty());
        let (engine, why) = match self.kind {
            EnvKind::Local => (None, "--env local".to_string()),
            EnvKind::Docker | EnvKind::Podman => {
                let name = if self.kind == EnvKind::Docker {
                    "docker"
                } else {
                    "podman"
                };
                let engine = Engine {
                    name,
                    program: PathBuf::from(name),
                };
                if let Err(e) = engine.answers() {
                    return Err(UsageError(format!(
                        "--env {name}: `{name} info` failed ({e}); start the engine, or use --env local"
                    )));
                }
                (Some(engine), format!("--env {name}"))
            }
            EnvKind::Auto => {
                let mut tried = Vec::new();
                let mut found = None;
                for name in ["docker", "podman"] {
                    let engine = Engine {
                        name,
                        program: PathBuf::from(name),
                    };
                    match engine.answers() {
                        Ok(()) => {
                            found = Some(engine);
                            break;
                        }
                        Err(e) => tried.push(format!("{name}: {e}")),
                    }
                }
                let why = match &found {
                    Some(e) => format!("auto: `{} info` answered", e.name),
                    None => format!("auto: no container engine answered ({})", tried.join("; ")),
                };
                (found, why)
            }
        };
        Ok(Env {
            engine,
            image,
            install_cmd,
            why,
        })
    }
}

impl Engine {
    /// Whether `ENGINE info` succeeds (within 30 s).
    fn answers(&self) -> Result<(), String> {
        let child = Command::new(&self.program)
            .arg("info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
        match wait(child, Duration::from_secs(30))? {
            (Some(0), _) => Ok(()),
            (_, true) => Err("`info` did not answer in 30 s".into()),
            (code, _) => Err(format!(
                "`info` exited with {}",
                code.map_or("a signal".into(), |c| c.to_string())
            )),
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.stdin(Stdio::null());
        cmd
    }
}

impl Env {
    /// `docker`, `podman` or `local`.
    pub fn label(&self) -> &'static str {
        self.engine.as_ref().map_or("local", |e| e.name)
    }

    /// One line for the run's output.
    pub fn describe(&self) -> String {
        let mut line = match &self.engine {
            Some(e) => format!(
                "environment: {} ({}): commands run in {} with the worktree at {TESTBED}, network none",
                e.name, self.why, self.image
            ),
            None => format!(
                "environment: local ({}): commands run on this machine in the worktree",
                self.why
            ),
        };
        if let Some(cmd) = &self.install_cmd {
            line.push_str(&format!("; install: {cmd}"));
        }
        line
    }

    /// What run.json and grade.json record.
    pub fn to_json(&self) -> Value {
        json!({
            "kind": self.label(),
            "why": self.why,
            "image": self.engine.as_ref().map(|_| self.image.clone()),
            "install_cmd": self.install_cmd,
        })
    }

    /// The image of instance `id`.
    pub fn image_of(&self, id: &str) -> String {
        self.image
            .replace("{id}", &harness_image_id(id))
            .replace("{instance_id}", id)
    }

    /// Sets up instance `id`'s environment for the worktree at `tree`: the
    /// container started (after the image's ignored files are copied in),
    /// then `--install-cmd`. Everything is logged to `log`. An error is an
    /// environment failure of this instance.
    ///
    /// `seed`: copy the image's ignored files in (not for a tree exported
    /// whole from the image, which has them). The log is appended to.
    pub fn prepare(
        &self,
        id: &str,
        tree: &Path,
        log: &Path,
        timeout: Duration,
        seed: bool,
    ) -> Result<Prepared, String> {
        let mut log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let _ = writeln!(log_file, "# {}", self.describe());
        let container = match &self.engine {
            None => None,
            Some(engine) => {
                let image = self.image_of(id);
                if seed {
                    image::seed_ignored(&engine.program, engine.name, &image, tree, &mut log_file)?;
                }
                Some(Container::start(engine, &image, id, tree, &mut log_file)?)
            }
        };
        let prepared = Prepared { container };
        if let Some(cmd) = &self.install_cmd {
            let _ = writeln!(log_file, "# install: {cmd}");
            let (code, timed_out) =
                run_logged(&prepared.place(), tree, cmd, &log_file, timeout, &[])?;
            if timed_out || code != Some(0) {
                let how = if timed_out {
                    format!("did not finish in {} s", timeout.as_secs())
                } else {
                    format!(
                        "exited with {}",
                        code.map_or("a signal".into(), |c| c.to_string())
                    )
                };
                return Err(format!(
                    "--install-cmd `{cmd}` {how}; its output is in {}",
                    log.display()
                ));
            }
        }
        Ok(prepared)
    }
}

/// The harness's name for an instance in image names: `__` becomes
/// `_1776_`, and all of it lower case.
pub fn harness_image_id(id: &str) -> String {
    id.replace("__", "_1776_").to_lowercase()
}

/// An instance's environment while it is in use; dropping it removes the
/// container.
pub struct Prepared {
    container: Option<Container>,
}

impl Prepared {
    /// Where the instance's commands run.
    pub fn place(&self) -> ShellPlace {
        match &self.container {
            None => ShellPlace::Local,
            Some(c) => ShellPlace::Container(c.shell.clone()),
        }
    }
}

/// The containers this process has running: engine and id.
static LIVE: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());

/// Removes every container this process still has running (`rm -f`), for
/// a stop that will not wait for the instances to end (a second Ctrl-C):
/// their `Drop` would not run.
pub fn remove_live_containers() {
    let live = std::mem::take(&mut *LIVE.lock().unwrap_or_else(PoisonError::into_inner));
    for (engine, id) in live {
        let _ = Command::new(engine)
            .args(["rm", "-f", &id])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A running container, removed (with everything in it) when dropped.
struct Container {
    engine: Engine,
    shell: ContainerShell,
}

impl Container {
    fn start(
        engine: &Engine,
        image: &str,
        id: &str,
        tree: &Path,
        log: &mut File,
    ) -> Result<Container, String> {
        let name: String = format!("nib-{id}-{}", std::process::id())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        // A container of that name left by a crashed run of this process id.
        let _ = engine
            .command()
            .args(["rm", "-f", &name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let mount = format!("{}:{TESTBED}", tree.display());
        let mut args = vec![
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
        ];
        // The worktree's `.git` names the clone's git directory by its host
        // path: mounted at that same path, git works inside too.
        let git_mount = git_common_dir(tree).map(|d| format!("{}:{}", d.display(), d.display()));
        if let Some(m) = &git_mount {
            args.extend(["-v", m.as_str()]);
        }
        args.extend([
            "-w",
            TESTBED,
            "--entrypoint",
            "sh",
            image,
            "-c",
            "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done",
        ]);
        let _ = writeln!(log, "$ {} {}", engine.name, args.join(" "));
        let out = engine
            .command()
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", engine.program.display()))?;
        let _ = log.write_all(&out.stderr);
        if !out.status.success() {
            return Err(format!(
                "{} run {image} failed: {}; pull or build the image (`{} pull {image}`), or give --image",
                engine.name,
                String::from_utf8_lossy(&out.stderr).trim(),
                engine.name
            ));
        }
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let id = if id.is_empty() { name } else { id };
        let _ = writeln!(log, "# container {id}");
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((engine.program.clone(), id.clone()));
        Ok(Container {
            engine: engine.clone(),
            shell: ContainerShell {
                engine: engine.program.clone(),
                container: id,
                workdir: TESTBED.into(),
                prelude: PRELUDE.into(),
            },
        })
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let c = &self.shell.container;
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(_, id)| id != c);
        // Rootful docker leaves what the container wrote owned by root;
        // give it back, so the worktree can be removed. (Rootless podman
        // maps its root to this user already.)
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        if self.engine.name == "docker" && uid != 0 {
            let owner = format!("{uid}:{gid}");
            let _ = self
                .engine
                .command()
                .args(["exec", c, "chown", "-R", &owner, TESTBED])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let removed = self
            .engine
            .command()
            .args(["rm", "-f", c])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !removed.is_ok_and(|s| s.success()) {
            eprintln!(
                "nib swebench: could not remove container {c}; remove it with `{} rm -f {c}`",
                self.engine.name
            );
        }
    }
}

/// The git directory a worktree's `.git` file leads to, shared with its
/// clone (absolute); None when the tree is not a linked worktree.
fn git_common_dir(tree: &Path) -> Option<PathBuf> {
    if !tree.join(".git").is_file() {
        return None;
    }
    let out = super::worktree::git(
        tree,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        &[],
    )
    .ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out).trim());
    (dir.is_absolute() && dir.is_dir()).then_some(dir)
}

/// Runs `command` with `sh -c` at `place` in `dir` (the container's
/// `/testbed` for a container), both streams appended to `log`, stopped
/// with everything it started after `timeout`. `env` is set for a local
/// command. Returns the exit code (None: killed) and whether it timed out.
pub fn run_logged(
    place: &ShellPlace,
    dir: &Path,
    command: &str,
    log: &File,
    timeout: Duration,
    env: &[(&str, OsString)],
) -> Result<(Option<i32>, bool), String> {
    let out = log
        .try_clone()
        .map_err(|e| format!("cannot share the log: {e}"))?;
    let err = log
        .try_clone()
        .map_err(|e| format!("cannot share the log: {e}"))?;
    let (mut cmd, container) = match place {
        ShellPlace::Local => {
            let mut cmd = Command::new("sh");
            cmd.arg("-c").arg(command).current_dir(dir);
            for (k, v) in env {
                cmd.env(k, v);
            }
            (cmd, None)
        }
        ShellPlace::Container(c) => {
            let (cmd, mark) = c.exec(command);
            (cmd, Some((c, mark)))
        }
    };
    let child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run the command: {e}"))?;
    let (code, timed_out) = wait(child, timeout)?;
    if timed_out && let Some((c, mark)) = container {
        c.kill_marked(&mark);
    }
    Ok((code, timed_out))
}

/// Waits for `child` until `timeout`, then kills its process group.
fn wait(mut child: Child, timeout: Duration) -> Result<(Option<i32>, bool), String> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok((status.code(), false)),
            Ok(None) if Instant::now() >= deadline => {
                crate::prim::tools::kill_group(&mut child);
                let _ = child.wait();
                return Ok((None, true));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for the command failed: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_follow_the_harness() {
        assert_eq!(
            harness_image_id("django__django-11099"),
            "django_1776_django-11099"
        );
        assert_eq!(
            harness_image_id("Pylint-Dev__astroid-1196"),
            "pylint-dev_1776_astroid-1196"
        );
        let env = Env {
            engine: None,
            image: DEFAULT_IMAGE.into(),
            install_cmd: None,
            why: String::new(),
        };
        assert_eq!(
            env.image_of("sympy__sympy-20590"),
            "docker.io/swebench/sweb.eval.x86_64.sympy_1776_sympy-20590:latest"
        );
        let mine = Env {
            image: "local/{instance_id}".into(),
            ..env
        };
        assert_eq!(mine.image_of("a__b-1"), "local/a__b-1");
    }

    #[test]
    fn local_commands_are_logged_and_timed_out() {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("log");
        let log = File::create(&log_path).unwrap();
        let env = [("NIB_TEST_VALUE", OsString::from("seen"))];
        let (code, timed_out) = run_logged(
            &ShellPlace::Local,
            dir.path(),
            "echo $NIB_TEST_VALUE; pwd; echo oops >&2; exit 4",
            &log,
            Duration::from_secs(20),
            &env,
        )
        .unwrap();
        assert_eq!((code, timed_out), (Some(4), false));
        let text = std::fs::read_to_string(&log_path).unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(text, format!("seen\n{}\noops\n", root.display()));
        let started = Instant::now();
        let (code, timed_out) = run_logged(
            &ShellPlace::Local,
            dir.path(),
            "sleep 30",
            &log,
            Duration::from_millis(300),
            &[],
        )
        .unwrap();
        assert_eq!((code, timed_out), (None, true));
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
