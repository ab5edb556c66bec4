//! Where `shell` runs a command: on this machine in the workspace root
//! (the default, and what every client but `nib swebench --env docker|podman`
//! uses), or inside a running container through its engine's command line
//! (`docker exec` / `podman exec`), in a directory the workspace is
//! bind-mounted at.
//!
//! The guard judges every command on the host before it runs, whatever
//! the place; only the process that carries it out differs. Starting and
//! removing the container is the caller's (it knows the image and the
//! mount); this type only says how to reach it.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where a session's `shell` commands run.
#[derive(Debug, Clone, Default)]
pub enum ShellPlace {
    /// `sh -c` on this machine, in the workspace root.
    #[default]
    Local,
    /// `ENGINE exec` into a running container.
    Container(ContainerShell),
}

/// A running container a command is carried out in.
#[derive(Debug, Clone)]
pub struct ContainerShell {
    /// The engine's command line program (`docker`, `podman`, or a path).
    pub engine: PathBuf,
    /// The container's name or id.
    pub container: String,
    /// The directory inside the container the workspace is mounted at.
    pub workdir: String,
    /// Shell text run before each command in the same shell (e.g. putting
    /// an environment's `bin` first on PATH); empty for none.
    pub prelude: String,
}

/// Names each command, so the processes of one that must be stopped can be
/// found inside the container (killing the `exec` client does not stop
/// what it started there).
static CALLS: AtomicU64 = AtomicU64::new(0);

/// The variable each command's processes carry inside the container.
const MARK: &str = "NIB_SHELL_CALL";

impl ContainerShell {
    /// The `exec` command that runs `command` (with `sh -c`) in the
    /// container, and the mark its processes carry.
    pub fn exec(&self, command: &str) -> (Command, String) {
        let mark = format!(
            "{}-{}",
            std::process::id(),
            CALLS.fetch_add(1, Ordering::Relaxed)
        );
        let mut cmd = Command::new(&self.engine);
        cmd.arg("exec")
            .arg("-w")
            .arg(&self.workdir)
            .arg("-e")
            .arg(format!("{MARK}={mark}"))
            .args(["-e", "PAGER=cat", "-e", "GIT_PAGER=cat"])
            .arg(&self.container)
            .arg("sh")
            .arg("-c");
        if self.prelude.trim().is_empty() {
            cmd.arg(command);
        } else {
            // The command is sh's $1, not pasted into the text: it is run
            // as given, after the prelude.
            cmd.arg(format!("{}\neval \"$1\"", self.prelude.trim_end()))
                .arg("sh")
                .arg(command);
        }
        (cmd, mark)
    }

    /// Kills, inside the container, every process that carries `mark`:
    /// the command and what it started (they inherit the variable). Waits
    /// a few seconds at most; a container that is gone has nothing left.
    pub fn kill_marked(&self, mark: &str) {
        let script = format!(
            "for d in /proc/[0-9]*; do \
             if tr '\\000' '\\n' < \"$d/environ\" 2>/dev/null | grep -qx '{MARK}={mark}'; then \
             kill -KILL \"${{d#/proc/}}\" 2>/dev/null; fi; done; exit 0"
        );
        let spawned = Command::new(&self.engine)
            .arg("exec")
            .arg(&self.container)
            .args(["sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else { return };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
