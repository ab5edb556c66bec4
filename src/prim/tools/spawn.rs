//! Starting a sandboxed command without copying nib: one `clone` with
//! `CLONE_VM | CLONE_VFORK`, as `posix_spawn` does, that also makes the
//! command's user, network, mount and process-id namespaces. The command
//! is process 1 of its own process-id namespace, and nib's child, so it is
//! waited for and killed like any other.
//!
//! Why not `fork` and `unshare`, as std's `pre_exec` does: a fork copies
//! the page tables of nib's whole memory (the Steel engine, transcripts,
//! caches), which cost more than the namespaces themselves: 5 of a
//! sandboxed command's 6 ms of start-up (docs/benchmarks.md), and growing
//! with the session. A child that shares nib's memory until it execs copies
//! nothing.
//!
//! The child runs on a stack of its own while the spawning thread waits;
//! it only makes system calls on data prepared here (no allocation, no
//! locks), with every signal blocked until the handlers nib set are reset.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ExitStatus};
use std::sync::OnceLock;

use super::mountns::Prepared;

/// What the command runs in.
pub struct Sandboxed<'a> {
    /// The host's network (no network namespace).
    pub network: bool,
    pub mounts: Prepared,
    /// The Landlock ruleset to enter last, when there is one.
    pub landlock: Option<BorrowedFd<'a>>,
}

/// A process that can be waited for and killed: a std `Child`, or one
/// started here.
pub trait Process {
    fn id(&self) -> u32;
    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>>;
    fn kill(&mut self) -> std::io::Result<()>;
}

impl Process for Child {
    fn id(&self) -> u32 {
        Child::id(self)
    }
    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        Child::try_wait(self)
    }
    fn kill(&mut self) -> std::io::Result<()> {
        Child::kill(self)
    }
}

/// A command started by [`spawn`]: nib's child until it is reaped.
#[derive(Debug)]
pub struct Spawned {
    pid: libc::pid_t,
    status: Option<ExitStatus>,
}

impl Process for Spawned {
    fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }
    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        let mut raw: libc::c_int = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(self.pid, &mut raw, libc::WNOHANG) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if r == 0 {
            return Ok(None);
        }
        let status = ExitStatus::from_raw(raw);
        self.status = Some(status);
        Ok(Some(status))
    }
    fn kill(&mut self) -> std::io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: a signal to our own child, not yet reaped (its pid
        // cannot have been reused).
        if unsafe { libc::kill(self.pid, libc::SIGKILL) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Whether this system lets a command run in a private mount namespace
/// (probed once: an unprivileged user namespace, a tmpfs, a bind).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let Ok(dirs) = super::mountns::SessionDirs::create() else {
            return false;
        };
        let plan = crate::guard::mounts::MountPlan {
            steps: vec![crate::guard::mounts::MountStep::Private {
                target: PathBuf::from("/tmp"),
                source: dirs.path().join("tmp"),
            }],
            ..Default::default()
        };
        let Ok(prepared) = super::mountns::prepare(&plan, &dirs, None) else {
            return false;
        };
        let Ok(null) = std::fs::File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
        else {
            return false;
        };
        let null = std::os::fd::AsFd::as_fd(&null);
        let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::var_os("PATH")
            .map(|p| ("PATH".into(), p))
            .into_iter()
            .collect();
        let sandbox = Sandboxed {
            network: !super::netns::available(),
            mounts: prepared,
            landlock: None,
        };
        let args = [std::ffi::OsStr::new("-c"), std::ffi::OsStr::new("exit 0")];
        let Ok(mut child) = spawn("sh", &args, &env, [null, null, null], sandbox) else {
            return false;
        };
        wait(&mut child).is_ok_and(|s| s.success())
    })
}

/// The step of the child's set-up that failed, for the error.
const STEPS: &[&str] = &[
    "write the user namespace's id maps",
    "make the mounts of the sandbox",
    "enter the file sandbox (Landlock)",
    "run the command",
    "set up the command's output",
];

/// Everything the child reads, made before the clone.
struct ChildPlan {
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    programs: Vec<CString>,
    stdio: [libc::c_int; 3],
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    new_net: bool,
    mounts: Prepared,
    landlock: libc::c_int,
    /// Written by the child when a step fails: (step + 1, errno).
    failed: (usize, libc::c_int),
}

/// The child's stack: its set-up calls are shallow.
const STACK_BYTES: usize = 256 * 1024;

/// Starts `program` (looked up in `env`'s `PATH`, as `execvp` does) with
/// `args`, exactly the environment `env`, `stdio` as its standard
/// input, output and error, in a new process group, in `sandbox`.
#[cfg(target_os = "linux")]
pub fn spawn(
    program: &str,
    args: &[&OsStr],
    env: &[(OsString, OsString)],
    stdio: [BorrowedFd<'_>; 3],
    sandbox: Sandboxed<'_>,
) -> std::io::Result<Spawned> {
    // The child moves these to 0, 1 and 2 in order: none may already be
    // one of those, or an earlier move would overwrite it.
    let moved: Vec<std::os::fd::OwnedFd> = stdio
        .iter()
        .filter(|fd| fd.as_raw_fd() < 3)
        .map(|fd| fd.try_clone_to_owned())
        .collect::<Result<_, _>>()?;
    let mut moved = moved.iter();
    let stdio_fds = stdio.map(|fd| match fd.as_raw_fd() {
        n if n < 3 => moved.next().map_or(n, |m| m.as_raw_fd()),
        n => n,
    });
    let cstring = |b: &[u8]| {
        CString::new(b).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "an argument with a NUL byte",
            )
        })
    };
    let mut argv_owned = vec![cstring(program.as_bytes())?];
    for a in args {
        argv_owned.push(cstring(a.as_bytes())?);
    }
    let mut env_owned = Vec::with_capacity(env.len());
    for (name, value) in env {
        let mut entry = name.as_bytes().to_vec();
        entry.push(b'=');
        entry.extend_from_slice(value.as_bytes());
        env_owned.push(cstring(&entry)?);
    }
    let programs = candidates(program, env)
        .iter()
        .map(|p| cstring(p.as_os_str().as_bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    let pointers = |v: &[CString]| {
        let mut p: Vec<*const libc::c_char> = v.iter().map(|s| s.as_ptr()).collect();
        p.push(std::ptr::null());
        p
    };
    // SAFETY: getuid/getgid cannot fail and touch no memory of ours.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut child = ChildPlan {
        argv: pointers(&argv_owned),
        envp: pointers(&env_owned),
        programs,
        stdio: stdio_fds,
        uid_map: format!("{uid} {uid} 1\n").into_bytes(),
        gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        new_net: !sandbox.network,
        mounts: sandbox.mounts,
        landlock: sandbox.landlock.map_or(-1, |fd| fd.as_raw_fd()),
        failed: (0, 0),
    };
    let mut stack = vec![0u8; STACK_BYTES];
    // The stack grows down: the child starts at its (16-aligned) top.
    let top = {
        let end = stack.as_mut_ptr().wrapping_add(STACK_BYTES) as usize;
        (end & !15) as *mut libc::c_void
    };
    // Its own IPC namespace too: SysV shared memory, semaphores and
    // message queues are otherwise the host's, a channel to any host
    // process that reads them.
    let mut flags = libc::CLONE_VM
        | libc::CLONE_VFORK
        | libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWIPC
        | libc::SIGCHLD;
    if child.new_net {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: every signal is blocked around the clone so that none runs
    // one of nib's handlers in the child (which shares nib's memory); the
    // child resets them before it unblocks. The child only reads `child`
    // and writes `child.failed`, and this thread waits (CLONE_VFORK) until
    // it has exec'd or exited, so `child` and `stack` outlive its use.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(run_child, top, flags, (&mut child as *mut ChildPlan).cast());
        let clone_error = std::io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return Err(clone_error);
        }
        pid
    };
    drop(stack);
    // SAFETY: the child has exec'd or exited: nothing writes it now.
    let (step, errno) = unsafe { std::ptr::read_volatile(&child.failed) };
    if step > 0 {
        let mut spawned = Spawned { pid, status: None };
        let _reaped = wait(&mut spawned);
        let what = STEPS.get(step - 1).copied().unwrap_or("start the command");
        let cause = std::io::Error::from_raw_os_error(errno);
        return Err(std::io::Error::new(
            cause.kind(),
            format!("could not {what}: {cause}"),
        ));
    }
    Ok(Spawned { pid, status: None })
}

#[cfg(not(target_os = "linux"))]
pub fn spawn(
    _: &str,
    _: &[&OsStr],
    _: &[(OsString, OsString)],
    _: [BorrowedFd<'_>; 3],
    _: Sandboxed<'_>,
) -> std::io::Result<Spawned> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Where `program` may be, in the order `env`'s PATH gives (a default
/// PATH when it has none), as `execvp` looks.
fn candidates(program: &str, env: &[(OsString, OsString)]) -> Vec<PathBuf> {
    let path = env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"), |(_, v)| {
            v.as_os_str()
        });
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(program))
        .collect()
}

/// The first executable `program` on `env`'s PATH, for a std `Command`:
/// given a path, std starts it with `posix_spawn` (no copy of nib) even
/// with an environment of its own; given a bare name with a changed
/// PATH, std falls back to a fork to look it up in the child.
pub fn find_in_path(program: &str, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    candidates(program, env).into_iter().find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Waits for `child` to end.
pub fn wait(child: &mut Spawned) -> std::io::Result<ExitStatus> {
    if let Some(s) = child.status {
        return Ok(s);
    }
    loop {
        let mut raw: libc::c_int = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(child.pid, &mut raw, 0) };
        if r == child.pid {
            let status = ExitStatus::from_raw(raw);
            child.status = Some(status);
            return Ok(status);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The child: process 1 of its namespaces, sharing nib's memory until it
/// execs.
#[cfg(target_os = "linux")]
extern "C" fn run_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildPlan` the spawning thread keeps alive and
    // does not touch until this process execs or exits.
    let child = unsafe { &mut *arg.cast::<ChildPlan>() };
    let step = match child_steps(child) {
        Ok(never) => match never {},
        Err((step, e)) => (step, e.raw_os_error().unwrap_or(libc::EIO)),
    };
    // SAFETY: a plain write to memory the parent reads after we exit.
    unsafe {
        std::ptr::write_volatile(&mut child.failed, step);
        libc::_exit(127)
    }
}

/// The child's set-up, in order; returns only on failure, with the step.
#[cfg(target_os = "linux")]
fn child_steps(child: &mut ChildPlan) -> Result<std::convert::Infallible, (usize, std::io::Error)> {
    let err = std::io::Error::last_os_error;
    // SAFETY (the whole function): async-signal-safe system calls on
    // memory made before the clone, and buffers on this stack.
    unsafe {
        // Nib's handlers must not run here: back to the defaults (an
        // ignored signal stays ignored, as exec keeps it; SIGPIPE, which
        // Rust ignores, back to default as std's spawn does).
        for sig in 1..65 {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            if old.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        // A session of its own, which makes its own process group (what
        // nib kills) and leaves it no controlling terminal: it cannot
        // push keystrokes into the user's terminal (TIOCSTI), which would
        // run as the user's next command after nib ends.
        if libc::setsid() < 0 {
            libc::setpgid(0, 0);
        }
        for (target, fd) in child.stdio.iter().enumerate() {
            if libc::dup2(*fd, target as libc::c_int) < 0 {
                return Err((5, err()));
            }
        }
        let maps = || -> std::io::Result<()> {
            super::netns::write_file(c"/proc/self/setgroups", b"deny")?;
            super::netns::write_file(c"/proc/self/uid_map", &child.uid_map)?;
            super::netns::write_file(c"/proc/self/gid_map", &child.gid_map)
        };
        maps().map_err(|e| (1, e))?;
        if child.new_net {
            super::netns::loopback_up();
        }
        child.mounts.run().map_err(|e| (2, e))?;
        if child.landlock >= 0 {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err((3, err()));
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, child.landlock, 0u32) != 0 {
                return Err((3, err()));
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        // As execvp: each place PATH names, the last error kept, but a
        // program found and not allowed reported over one not found.
        let mut last = libc::ENOENT;
        let mut denied = false;
        for program in &child.programs {
            libc::execve(program.as_ptr(), child.argv.as_ptr(), child.envp.as_ptr());
            last = *libc::__errno_location();
            denied |= last == libc::EACCES;
        }
        let errno = if denied { libc::EACCES } else { last };
        Err((4, std::io::Error::from_raw_os_error(errno)))
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::guard::mounts::{MountPlan, MountStep};
    use crate::prim::tools::mountns::{self, SessionDirs};
    use std::io::Read;
    use std::os::fd::AsFd;

    /// Runs `script` with `plan`, returning what it printed or the error.
    fn run(
        plan: MountPlan,
        dirs: &SessionDirs,
        program: &str,
        script: &str,
    ) -> std::io::Result<(String, ExitStatus)> {
        let cwd = std::env::temp_dir().canonicalize()?;
        let prepared = mountns::prepare(&plan, dirs, Some(&cwd))?;
        let (mut reader, writer) = std::io::pipe()?;
        let null = std::fs::File::open("/dev/null")?;
        let env: Vec<(OsString, OsString)> =
            vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())];
        let args = [OsStr::new("-c"), OsStr::new(script)];
        let sandbox = Sandboxed {
            network: false,
            mounts: prepared,
            landlock: None,
        };
        let mut child = spawn(
            program,
            &args,
            &env,
            [null.as_fd(), writer.as_fd(), writer.as_fd()],
            sandbox,
        )?;
        drop(writer);
        let mut out = String::new();
        reader.read_to_string(&mut out)?;
        let status = wait(&mut child)?;
        Ok((out, status))
    }

    #[test]
    fn the_command_is_process_one_as_the_same_user_in_its_directory() {
        if !available() {
            eprintln!("skipped: this system does not allow a private mount namespace");
            return;
        }
        let dirs = SessionDirs::create().unwrap();
        let (out, status) = run(
            MountPlan::default(),
            &dirs,
            "sh",
            "echo $$; id -u; pwd; cat; ls /proc | grep -c '^[0-9]'; exit 3",
        )
        .unwrap();
        let uid = unsafe { libc::getuid() };
        let cwd = std::env::temp_dir().canonicalize().unwrap();
        // Process 1, our uid, in the directory asked for, stdin empty, and
        // the only processes it sees are itself and `ls` and `grep`.
        assert_eq!(out, format!("1\n{uid}\n{}\n3\n", cwd.display()));
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn a_failed_set_up_step_is_named_and_nothing_runs() {
        if !available() {
            return;
        }
        let dirs = SessionDirs::create().unwrap();
        let plan = MountPlan {
            steps: vec![MountStep::Private {
                target: PathBuf::from("/tmp"),
                source: dirs.path().join("no-such-dir"),
            }],
            ..MountPlan::default()
        };
        let e = run(plan, &dirs, "sh", "echo ran").unwrap_err();
        assert!(
            e.to_string()
                .contains("could not make the mounts of the sandbox"),
            "{e}"
        );
        let e = run(MountPlan::default(), &dirs, "no-such-program-of-nib", "").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
        assert!(e.to_string().contains("could not run the command"), "{e}");
    }
}
