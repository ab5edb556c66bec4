//! `shell`: runs a command line with `sh -c` in the workspace root (or,
//! given a [`ShellPlace`], in a container the workspace is mounted in) and
//! returns what it printed (stdout and stderr interleaved, as a terminal
//! shows them), capped, followed by its exit code.
//!
//! The command runs in its own process group with stdin closed. On timeout
//! the whole group is killed, so what the command started (a `sleep`, a
//! test runner's workers) dies with it. Output is read by a thread while
//! the command runs, so a chatty command never blocks on a full pipe, and
//! only a bounded head and tail of it are kept in memory.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::place::ShellPlace;
use super::spawn::Process;
use crate::files::Workspace;
use crate::prim::ToolError;

/// Seconds before the command is stopped when the call does not say.
const DEFAULT_TIMEOUT_SECS: i64 = 120;
/// The longest timeout honoured (a day); longer ones are cut to it.
const MAX_TIMEOUT_SECS: i64 = 24 * 60 * 60;
/// The most characters of output shown: half from the head, half from the
/// tail.
const OUTPUT_CAP: usize = 30_000;
/// Bytes kept of the head and of the tail while reading: enough for
/// `OUTPUT_CAP / 2` characters of up to four bytes each.
const KEEP_BYTES: usize = OUTPUT_CAP / 2 * 4;
/// How long to wait for the output to end once the command has exited
/// (a background process it started may still hold the pipe).
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// Set once the "network is on" note has been given in this process.
static NETWORK_NOTED: AtomicBool = AtomicBool::new(false);
/// Set once the "no file sandbox here" note has been given.
static FILES_NOTED: AtomicBool = AtomicBool::new(false);

/// What a command runs without: the network (unless `network`), with
/// `files`, every file outside that plan's grants (`landlock.rs`), with
/// `mounts`, what that plan covers (`mountns.rs`), and with `env`, every
/// variable but those (`guard::environment`).
#[derive(Default)]
pub struct Confinement<'a> {
    pub network: bool,
    pub files: Option<&'a crate::guard::sandbox::FilePlan>,
    pub mounts: Option<super::mountns::Prepared>,
    pub env: Option<&'a crate::guard::environment::ChildEnv>,
}

/// Runs `command` with `sh -c` in the workspace root, stopping it after
/// `timeout_secs` seconds (<= 0 means 120; at most a day). A non-zero exit is not an
/// error: the text ends with `exit code: N` (or `killed by signal N`).
/// Without `network`, the command runs in a private network namespace
/// with loopback only, where the system allows one.
pub fn shell(
    ws: &Workspace,
    command: &str,
    timeout_secs: i64,
    network: bool,
) -> Result<String, ToolError> {
    let confinement = Confinement {
        network,
        ..Confinement::default()
    };
    shell_cancellable(ws, command, timeout_secs, confinement, None)
}

/// [`shell`], stopped early (with everything it started) when `cancel` is
/// set: the user pressed Esc.
/// What stops a running command early: the cancel flag, and the flag a
/// run sets with it when its own deadline passed (so the command says
/// which of the two stopped it).
#[derive(Clone, Copy)]
pub struct Stop<'a> {
    pub cancel: &'a AtomicBool,
    pub deadline: Option<&'a AtomicBool>,
}

pub fn shell_cancellable(
    ws: &Workspace,
    command: &str,
    timeout_secs: i64,
    confinement: Confinement<'_>,
    cancel: Option<Stop<'_>>,
) -> Result<String, ToolError> {
    shell_in(
        &ShellPlace::Local,
        ws,
        command,
        timeout_secs,
        confinement,
        cancel,
    )
}

/// [`shell_cancellable`] at `place`: on this machine, or inside a container
/// (where the container's own settings decide the network, and a command
/// that is stopped is killed inside it too).
pub fn shell_in(
    place: &ShellPlace,
    ws: &Workspace,
    command: &str,
    timeout_secs: i64,
    confinement: Confinement<'_>,
    cancel: Option<Stop<'_>>,
) -> Result<String, ToolError> {
    let network = confinement.network;
    let files = confinement.files;
    let mounted = confinement.mounts.is_some() && matches!(place, ShellPlace::Local);
    let (cancel, deadline) = match cancel {
        Some(s) => (Some(s.cancel), s.deadline),
        None => (None, None),
    };
    if command.trim().is_empty() {
        return Err(ToolError::BadArgument(
            "empty command; give a shell command line to run".to_string(),
        ));
    }
    let secs = if timeout_secs <= 0 {
        DEFAULT_TIMEOUT_SECS
    } else {
        timeout_secs.min(MAX_TIMEOUT_SECS)
    };
    let timeout = Duration::from_secs(secs.unsigned_abs());

    let no_pipe = |source| ToolError::CannotStart {
        what: "create a pipe for the output",
        source,
        next: "retry",
    };
    let (mut reader, writer) = io::pipe().map_err(no_pipe)?;
    let writer2 = writer.try_clone().map_err(no_pipe)?;
    let local = matches!(place, ShellPlace::Local);
    // The model's own credentials are nib's, not the command's: a command
    // has no business printing the key the session talks to its model with.
    // With an allowlist, a command gets only what it names.
    let env = command_env(
        confinement.env.filter(|_| local),
        confinement.mounts.is_some() && local,
    );
    // Without network where the system allows it; otherwise say so once.
    let mut note = String::new();
    let isolate_network = !network && local && super::netns::available();
    if !network && local && !isolate_network && !NETWORK_NOTED.swap(true, Ordering::Relaxed) {
        note.push_str("note: this command had network access: the system does not allow running it without (nib asks for a private network namespace)\n");
    }
    // In a container the container is the sandbox: the engine's client on
    // this machine needs its own config (`~/.docker`), which the plan hides.
    let ruleset = confinement
        .files
        .filter(|_| local)
        .and_then(|plan| file_sandbox(plan, &mut note));
    let ruleset_active = ruleset.is_some();
    let mounts = confinement.mounts.filter(|_| local);
    let sandboxed = mounts.is_some();
    let mut container = None;
    let spawned: io::Result<Box<dyn Process>> = match mounts {
        // The session's sandbox: the namespaces, the mounts and Landlock
        // made by the command's own process, without a copy of nib.
        Some(mounts) => std::fs::File::open("/dev/null").and_then(|null| {
            use std::os::fd::AsFd;
            let sandbox = super::spawn::Sandboxed {
                network: !isolate_network,
                mounts,
                landlock: ruleset.as_ref().map(|r| r.fd()),
            };
            let args = [std::ffi::OsStr::new("-c"), std::ffi::OsStr::new(command)];
            let stdio = [null.as_fd(), writer.as_fd(), writer2.as_fd()];
            super::spawn::spawn("sh", &args, &env, stdio, sandbox)
                .map(|c| Box::new(c) as Box<dyn Process>)
        }),
        None => {
            let mut cmd = match place {
                ShellPlace::Local => {
                    let sh = super::spawn::find_in_path("sh", &env);
                    let mut cmd = Command::new(sh.as_deref().unwrap_or(Path::new("/bin/sh")));
                    cmd.arg0("sh")
                        .arg("-c")
                        .arg(command)
                        .current_dir(ws.root())
                        .env_clear()
                        .envs(env.iter().map(|(n, v)| (n, v)));
                    cmd
                }
                // The engine's client keeps nib's environment (its own
                // settings), less the model's credentials.
                ShellPlace::Container(c) => {
                    let (mut cmd, mark) = c.exec(command);
                    container = Some((c, mark));
                    for (name, _) in std::env::vars_os() {
                        if name.to_str().is_some_and(is_model_credential) {
                            cmd.env_remove(&name);
                        }
                    }
                    cmd
                }
            };
            cmd.stdin(Stdio::null())
                .stdout(writer.try_clone().map_err(no_pipe)?)
                .stderr(writer2.try_clone().map_err(no_pipe)?)
                .process_group(0);
            if isolate_network {
                super::netns::isolate(&mut cmd);
            }
            if let Some(ruleset) = &ruleset {
                super::landlock::confine(&mut cmd, ruleset);
            }
            cmd.spawn().map(|c| Box::new(c) as Box<dyn Process>)
        }
    };
    // The command holds our copies of the pipe's write end: drop them, or
    // the reader would never see the end of the output.
    drop((writer, writer2, ruleset));
    let mut child = spawned.map_err(|source| match &container {
        // The error names the set-up step that failed (`spawn.rs`).
        None if sandboxed => ToolError::CannotStart {
            what: "start sh in the session's sandbox",
            source,
            next: "check that sh is on PATH; if the system refuses the sandbox's namespaces or mounts, turn it off in your user config ([guard] file_sandbox = false) or with --no-file-sandbox",
        },
        None => ToolError::CannotStart {
            what: "start sh",
            source,
            next: "check that /bin/sh exists",
        },
        Some(_) => ToolError::CannotStart {
            what: "start the container engine's exec",
            source,
            next: "check that the container engine's command (docker or podman) is installed",
        },
    })?;

    let _running = Running::track(child.id());
    let capture = Arc::new(Mutex::new(Capture::default()));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    {
        let capture = Arc::clone(&capture);
        thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if let Ok(mut c) = capture.lock() {
                            c.push(&buf[..n]);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _gone = done_tx.send(());
        });
    }

    let started = Instant::now();
    let status = wait_until(child.as_mut(), started + timeout, cancel);
    let (status, timed_out) = match status {
        Some(status) => (Some(status), false),
        None => {
            kill_group(child.as_mut());
            // The exec client is gone; what it started in the container
            // is not, until it is killed there.
            if let Some((c, mark)) = &container {
                c.kill_marked(mark);
            }
            (
                wait_until(
                    child.as_mut(),
                    Instant::now() + Duration::from_secs(2),
                    None,
                ),
                true,
            )
        }
    };
    let interrupted = timed_out && cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let drained = done_rx.recv_timeout(DRAIN_GRACE).is_ok();

    let mut text = match capture.lock() {
        Ok(c) => c.render(),
        Err(_) => String::new(),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !drained {
        text.push_str(
            "note: a background process the command started still holds its output; what it prints from now on is not shown (redirect its output to a file)\n",
        );
    }
    if interrupted {
        let by_deadline = deadline.is_some_and(|d| d.load(Ordering::Relaxed));
        let who = if by_deadline {
            "the run's time limit (--timeout) ran out while the command ran"
        } else {
            "the user interrupted the command (Esc)"
        };
        let mut msg = format!("{who}; it was stopped with everything it started");
        if !text.is_empty() {
            msg.push_str("\noutput before it was stopped:\n");
            msg.push_str(&text);
        }
        let msg = msg.trim_end().to_string();
        return Err(match by_deadline {
            true => ToolError::TimedOut(msg),
            false => ToolError::Interrupted(msg),
        });
    }
    if timed_out {
        let mut msg = format!(
            "the command timed out after {secs} s and was stopped (with everything it started); give a larger timeout, or run long jobs in the background with their output in a file and check on them later"
        );
        if !text.is_empty() {
            msg.push_str("\noutput before it was stopped:\n");
            msg.push_str(&text);
        }
        return Err(ToolError::TimedOut(msg.trim_end().to_string()));
    }
    text.push_str(&describe(status));
    text.push('\n');
    if ruleset_active
        && let Some(plan) = files
        && text.contains("ermission denied")
    {
        text.push_str(&denied_note(plan, ws));
    }
    if mounted
        && (text.contains("Read-only file system") || text.contains("Device or resource busy"))
    {
        text.push_str("note: commands see git's settings and hooks (.git/config, .git/hooks, .git/info), the files that run code later (CI workflows, editor tasks, hook managers) and the masked secret files read-only, and most of the home directory not at all; change such a file with fs-edit or fs-write, which the user confirms\n");
    }
    text.push_str(&note);
    Ok(text)
}

/// What to tell the model when a sandboxed command met a refusal: what
/// the sandbox hides, and that what the command itself created beside a
/// hidden file can be read by the next command.
fn denied_note(plan: &crate::guard::sandbox::FilePlan, ws: &Workspace) -> String {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let name = |p: &std::path::Path| match (p.strip_prefix(ws.root()), &home) {
        (Ok(rel), _) => rel.display().to_string(),
        (Err(_), Some(h)) if p.starts_with(h) => {
            format!("~/{}", p.strip_prefix(h).unwrap_or(p).display())
        }
        _ => p.display().to_string(),
    };
    let mut hidden: Vec<String> = plan.hidden.iter().take(4).map(|p| name(p)).collect();
    if plan.hidden.len() > 4 {
        hidden.push(format!("{} more", plan.hidden.len() - 4));
    }
    let hidden = if hidden.is_empty() {
        String::new()
    } else {
        format!(" ({})", hidden.join(", "))
    };
    format!(
        "note: commands run in a file sandbox: only the workspace and temp directories are writable, and protected files{hidden} are unreadable; a file this command created directly in a directory holding one (such as the workspace root) becomes readable from the next command on\n"
    )
}

/// The Landlock ruleset of `plan` for the command, or why it runs
/// without, said in `note` (once per process when the kernel has none).
/// The ruleset must live until the command has been spawned.
fn file_sandbox(
    plan: &crate::guard::sandbox::FilePlan,
    note: &mut String,
) -> Option<super::landlock::Ruleset> {
    if !super::landlock::available() {
        if !FILES_NOTED.swap(true, Ordering::Relaxed) {
            note.push_str("note: this command could read every file you can: the kernel has no Landlock file sandbox (ABI 2, Linux 5.19, or later), so only the guard's rules keep protected files from commands\n");
        }
        return None;
    }
    match super::landlock::build(plan) {
        Ok(ruleset) => {
            if plan.truncated {
                note.push_str("note: the workspace is too big to search whole for protected files: some deep in it may have been readable to this command\n");
            }
            Some(ruleset)
        }
        Err(e) => {
            note.push_str(&format!("note: this command could read every file you can: the file sandbox could not be set up ({e})\n"));
            None
        }
    }
}

/// The environment a command gets: with an allowlist (`allowed`), only
/// what it names; without, nib's own but the model's credentials. With a
/// private `/tmp`, TMPDIR points there. Pagers never wait for a key.
fn command_env(
    allowed: Option<&crate::guard::environment::ChildEnv>,
    private_tmp: bool,
) -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = match allowed {
        Some(env) => env.vars.clone(),
        None => std::env::vars_os()
            .filter(|(name, _)| !name.to_str().is_some_and(is_model_credential))
            .collect(),
    };
    let mut set = |name: &str, value: &str| {
        vars.retain(|(n, _)| n != name);
        vars.push((name.into(), value.into()));
    };
    if private_tmp {
        set("TMPDIR", "/tmp");
    }
    set("GIT_PAGER", "cat");
    set("PAGER", "cat");
    vars
}

/// How often a wait looks at the cancel flag.
const CANCEL_CHECK: Duration = Duration::from_millis(25);

/// Waits for the child to exit until `deadline` or until `cancel` is
/// set. None when it is still running then (or cannot be waited for).
/// A pidfd wakes the wait the moment the child ends (Linux 5.3 and
/// later); without one, it polls with a growing pause.
fn wait_until(
    child: &mut dyn Process,
    deadline: Instant,
    cancel: Option<&AtomicBool>,
) -> Option<ExitStatus> {
    let pidfd = pidfd_open(child.id());
    let mut pause = Duration::from_millis(1);
    loop {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return None;
        }
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            Err(_) => return None,
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        match &pidfd {
            Some(fd) => poll_readable(fd, CANCEL_CHECK.min(deadline - now)),
            None => {
                thread::sleep(pause.min(deadline - now));
                pause = (pause * 2).min(CANCEL_CHECK);
            }
        }
    }
}

/// A descriptor that becomes readable when process `pid` (our child,
/// not yet reaped) ends; None where the kernel has no pidfds.
fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new
    // descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
    let fd = libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Waits until `fd` is readable or `wait` has passed.
fn poll_readable(fd: &OwnedFd, wait: Duration) {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(wait.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd; an error or EINTR just ends this wait early.
    unsafe {
        libc::poll(&mut pfd, 1, ms);
    }
}

/// The process groups of the commands running now (each command's pid is
/// its group's id), so a process that must exit at once (a second Ctrl-C)
/// can stop them first: [`stop_running_commands`].
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// A command's place in [`RUNNING`], for as long as it runs.
struct Running(u32);

impl Running {
    fn track(group: u32) -> Running {
        RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(group);
        Running(group)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|g| *g != self.0);
    }
}

/// Kill the process group of every command running now, with everything
/// it started: for a process about to exit without waiting for its
/// commands to be stopped the usual way (the cancel flag, polled).
pub fn stop_running_commands() {
    let groups = std::mem::take(
        &mut *RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for group in groups {
        if let Ok(pid) = i32::try_from(group) {
            // SAFETY: kill(2) on a process group this process started and
            // has not reaped (its entry leaves RUNNING when it is).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

/// Kills the child's whole process group (its pid is the group id: it was
/// started in a group of its own and has not been reaped yet), and the
/// child itself should that fail.
pub(crate) fn kill_group(child: &mut dyn Process) {
    let Ok(group) = libc::pid_t::try_from(child.id()) else {
        let _already_gone = child.kill();
        return;
    };
    // SAFETY: a signal to our own child's group; the child is not reaped,
    // so its pid (the group's id) cannot have been reused.
    if unsafe { libc::kill(-group, libc::SIGKILL) } != 0 {
        let _already_gone = child.kill();
    }
}

fn describe(status: Option<ExitStatus>) -> String {
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code: {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => "exit code: unknown".to_string(),
        },
        None => "exit code: unknown (the command could not be waited for)".to_string(),
    }
}

/// The output read so far: the first `KEEP_BYTES` bytes, the last
/// `KEEP_BYTES` bytes, and how many characters fell in between.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    /// Characters dropped between head and tail (UTF-8 lead bytes counted).
    dropped_chars: usize,
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < KEEP_BYTES {
            let n = bytes.len().min(KEEP_BYTES - self.head.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(KEEP_BYTES);
        if excess > 0 {
            self.dropped_chars += self
                .tail
                .drain(..excess)
                .filter(|b| !is_continuation(*b))
                .count();
        }
    }

    fn render(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let (front, back) = self.tail.as_slices();
        let mut tail_bytes = Vec::with_capacity(self.tail.len());
        tail_bytes.extend_from_slice(front);
        tail_bytes.extend_from_slice(back);
        if self.dropped_chars > 0 {
            // The tail may start inside a character whose lead byte was
            // dropped (and counted).
            let skip = tail_bytes
                .iter()
                .take_while(|b| is_continuation(**b))
                .count();
            tail_bytes.drain(..skip);
        }
        let tail = String::from_utf8_lossy(&tail_bytes);
        cap_middle(&head, self.dropped_chars, &tail, OUTPUT_CAP)
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// `head` + `tail` (with `dropped` characters already missing between
/// them), cut to at most `max` characters: the first and last `max / 2`,
/// and a marker saying how many characters were cut.
fn cap_middle(head: &str, dropped: usize, tail: &str, max: usize) -> String {
    let half = max / 2;
    if dropped == 0 {
        let whole = format!("{head}{tail}");
        let n = whole.chars().count();
        if n <= max {
            return whole;
        }
        let first: String = whole.chars().take(half).collect();
        let last: String = whole.chars().skip(n - half).collect();
        return format!("{first}\n… {} characters cut …\n{last}", n - 2 * half);
    }
    let head_n = head.chars().count();
    let tail_n = tail.chars().count();
    let first: String = head.chars().take(half).collect();
    let last: String = tail.chars().skip(tail_n.saturating_sub(half)).collect();
    let cut = head_n.saturating_sub(half) + dropped + tail_n.saturating_sub(half);
    format!("{first}\n… {cut} characters cut …\n{last}")
}

/// Environment variables that hold a model provider's key.
fn is_model_credential(name: &str) -> bool {
    const PROVIDERS: &[&str] = &["OPENAI_", "ANTHROPIC_", "OPENROUTER_", "NIB_", "OLLAMA_"];
    PROVIDERS.iter().any(|p| name.starts_with(p))
        && (name.ends_with("_KEY") || name.ends_with("_TOKEN"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn output_and_exit_codes() {
        let (dir, ws) = ws();
        fs::write(dir.path().join("f.txt"), "hi\n").unwrap();
        assert_eq!(
            shell(&ws, "cat f.txt", 0, true).unwrap(),
            "hi\nexit code: 0\n"
        );
        assert_eq!(shell(&ws, "exit 3", 0, true).unwrap(), "exit code: 3\n");
        assert_eq!(
            shell(&ws, "printf abc; false", 0, true).unwrap(),
            "abc\nexit code: 1\n"
        );
        assert_eq!(
            shell(&ws, "echo out; echo err >&2; echo out2; exit 2", 5, true).unwrap(),
            "out\nerr\nout2\nexit code: 2\n"
        );
        assert_eq!(
            shell(&ws, "kill -9 $$", 5, true).unwrap(),
            "killed by signal 9\n"
        );
        // stdin is closed, not inherited.
        assert_eq!(shell(&ws, "cat", 5, true).unwrap(), "exit code: 0\n");
        // The working directory is the workspace root.
        let pwd = shell(&ws, "pwd -P", 5, true).unwrap();
        assert_eq!(pwd, format!("{}\nexit code: 0\n", ws.root().display()));
        assert!(
            shell(&ws, "  ", 0, true)
                .unwrap_err()
                .to_string()
                .starts_with("empty command")
        );
    }

    #[test]
    fn esc_stops_the_command_and_what_it_started() {
        let (_dir, ws) = ws();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancel);
        let pressed = thread::spawn(move || {
            thread::sleep(Duration::from_millis(300));
            flag.store(true, Ordering::Relaxed);
        });
        let started = Instant::now();
        let err = shell_cancellable(
            &ws,
            "echo started; sleep 30",
            60,
            Confinement {
                network: true,
                ..Confinement::default()
            },
            Some(Stop {
                cancel: &cancel,
                deadline: None,
            }),
        )
        .unwrap_err();
        let _ = pressed.join();
        assert_eq!(err.kind(), "interrupted");
        let err = err.to_string();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(err.starts_with("the user interrupted the command"), "{err}");
        assert!(err.contains("started"), "{err}");
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let (dir, ws) = ws();
        let started = Instant::now();
        let err = shell(
            &ws,
            "echo started; sleep 30 & echo $! > pid; sh -c 'sleep 30'",
            1,
            true,
        )
        .unwrap_err();
        assert_eq!(err.kind(), "timed_out");
        let err = err.to_string();
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "took {took:?}");
        assert!(
            err.starts_with("the command timed out after 1 s and was stopped"),
            "{err}"
        );
        assert!(
            err.ends_with("output before it was stopped:\nstarted"),
            "{err}"
        );
        let pid = fs::read_to_string(dir.path().join("pid")).unwrap();
        let stat = format!("/proc/{}/stat", pid.trim());
        // Dead means gone or a zombie waiting to be reaped by init.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let state = fs::read_to_string(&stat)
                .ok()
                .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.chars().next()))
                .flatten();
            if matches!(state, None | Some('Z') | Some('X')) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the background sleep survived: {state:?}"
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn background_holder_does_not_block() {
        let (_dir, ws) = ws();
        let started = Instant::now();
        let out = shell(&ws, "echo hi; (sleep 30; echo late) &", 60, true).unwrap();
        // Well under the background sleep: the call did not wait for it.
        assert!(started.elapsed() < Duration::from_secs(15));
        assert!(out.starts_with("hi\nnote: a background process"), "{out}");
        assert!(out.ends_with("exit code: 0\n"), "{out}");
        // Redirected background output does not hold the pipe.
        let out = shell(&ws, "echo hi; sleep 3 > /dev/null 2>&1 &", 10, true).unwrap();
        assert_eq!(out, "hi\nexit code: 0\n");
    }

    #[test]
    fn big_output_keeps_head_and_tail() {
        let (_dir, ws) = ws();
        // 200,000 lines: far more than is kept in memory.
        let out = shell(&ws, "seq 1 200000", 20, true).unwrap();
        assert!(out.starts_with("1\n2\n3\n"), "{}", &out[..20]);
        assert!(out.ends_with("199999\n200000\nexit code: 0\n"));
        let total: usize = (1..=200_000).map(|i: usize| i.to_string().len() + 1).sum();
        let marker = format!("\n… {} characters cut …\n", total - OUTPUT_CAP);
        assert!(out.contains(&marker), "no {marker:?}");
        let body = out.strip_suffix("exit code: 0\n").unwrap();
        assert_eq!(body.chars().count(), OUTPUT_CAP + marker.chars().count());
    }

    #[test]
    fn cap_middle_counts_characters() {
        assert_eq!(cap_middle("ab", 0, "cd", 10), "abcd");
        assert_eq!(
            cap_middle("abcdef", 0, "ghij", 4),
            "ab\n… 6 characters cut …\nij"
        );
        assert_eq!(
            cap_middle("ééé", 5, "üüü", 4),
            "éé\n… 7 characters cut …\nüü"
        );
        let mut c = Capture::default();
        let big = "é".repeat(KEEP_BYTES); // twice KEEP_BYTES bytes
        c.push(big.as_bytes());
        c.push(b"x");
        let s = c.render();
        assert!(s.starts_with(&"é".repeat(OUTPUT_CAP / 2)));
        assert!(s.ends_with("éx"));
        let cut = KEEP_BYTES + 1 - OUTPUT_CAP;
        assert!(
            s.contains(&format!("\n… {cut} characters cut …\n")),
            "{cut}"
        );
    }
}
