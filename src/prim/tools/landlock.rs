//! Running a command under a file sandbox: Landlock (Linux 5.19+, ABI 2
//! or later), applied between fork and exec, enforcing the guard's plan
//! (`guard::sandbox`): what the command may read and write.
//!
//! The ruleset is built in nib's process (opening every granted path),
//! so the child only calls `prctl(PR_SET_NO_NEW_PRIVS)` and
//! `landlock_restrict_self`. Raw syscalls through `libc`: three calls and
//! two structs do not need a crate. Where the kernel lacks Landlock (or
//! only has ABI 1, where moving a file between directories is always
//! refused) commands run as before and the shell tool says so.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::OnceLock;

use crate::guard::sandbox::{FilePlan, access};

/// The Landlock ABI version of this kernel (0: none).
pub fn abi() -> i64 {
    static ABI: OnceLock<i64> = OnceLock::new();
    *ABI.get_or_init(probe_abi)
}

/// Whether commands can run under the file sandbox here.
pub fn available() -> bool {
    abi() >= 2
}

/// One line on the file sandbox for a session whose policy has it
/// `enabled`: said by `nib exec` before it starts, and logged as a
/// warning (the second value) when commands run without it.
pub fn status(enabled: bool) -> (String, Option<String>) {
    if !enabled {
        let line = "commands can read and write every file you can: the file sandbox is off \
                    ([guard] file_sandbox = false in your config, or --no-file-sandbox)";
        return (line.to_string(), Some(line.to_string()));
    }
    if available() {
        let line = format!(
            "commands run in a file sandbox (Landlock ABI {}): only the workspace and temp \
             directories writable, protected files unreadable",
            abi()
        );
        return (line, None);
    }
    let line = "commands can read and write every file you can: this kernel has no Landlock \
                file sandbox (ABI 2, Linux 5.19, or later), so only the guard's rules keep \
                protected files from commands";
    (line.to_string(), Some(line.to_string()))
}

/// A ruleset made from a plan, ready to be entered by a child.
pub struct Ruleset {
    fd: OwnedFd,
    /// Grants the kernel took (a path gone since the plan is skipped).
    pub rules: usize,
}

#[cfg(target_os = "linux")]
fn probe_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query takes no attribute pointer.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    v.max(0)
}

#[cfg(not(target_os = "linux"))]
fn probe_abi() -> i64 {
    0
}

/// The rights this kernel knows: ABI 2 adds REFER, 3 TRUNCATE, 5
/// IOCTL_DEV. Rights it does not know cannot be handled (and are then
/// allowed, as without a sandbox).
fn handled() -> u64 {
    let mut bits = (1 << 13) - 1;
    let abi = abi();
    if abi >= 2 {
        bits |= access::REFER;
    }
    if abi >= 3 {
        bits |= access::TRUNCATE;
    }
    if abi >= 5 {
        bits |= access::IOCTL_DEV;
    }
    bits
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Builds the kernel's ruleset for `plan`. Fails when the kernel refuses
/// to make one; a grant whose path cannot be opened any more (removed
/// since the plan) is skipped.
#[cfg(target_os = "linux")]
pub fn build(plan: &FilePlan) -> std::io::Result<Ruleset> {
    use std::os::unix::ffi::OsStrExt;
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    let handled = handled();
    let attr = RulesetAttr {
        handled_access_fs: handled,
    };
    // SAFETY: attr is a valid struct of the size given; the kernel returns
    // a new O_CLOEXEC descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned to us and is owned by nothing else.
    let ruleset = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let mut rules = 0;
    for g in &plan.grants {
        let mask = if g.dir { access::ALL } else { access::FILE };
        let allowed = g.access & mask & handled;
        if allowed == 0 {
            continue;
        }
        let Ok(path) = std::ffi::CString::new(g.path.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: path is NUL-terminated; the descriptor is closed below.
        let target = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if target < 0 {
            continue;
        }
        let rule = PathBeneathAttr {
            allowed_access: allowed,
            parent_fd: target,
        };
        // SAFETY: both descriptors are open; rule is the packed struct the
        // kernel expects.
        let added = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                LANDLOCK_RULE_PATH_BENEATH,
                &rule as *const PathBeneathAttr,
                0u32,
            )
        };
        // SAFETY: target is ours and not used again.
        unsafe { libc::close(target) };
        if added == 0 {
            rules += 1;
        }
    }
    Ok(Ruleset { fd: ruleset, rules })
}

#[cfg(not(target_os = "linux"))]
pub fn build(_: &FilePlan) -> std::io::Result<Ruleset> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

impl Ruleset {
    /// The ruleset's descriptor, for a command that enters it itself.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.fd)
    }
}

/// Makes `cmd` enter `ruleset` before it execs. Keep the ruleset alive
/// until the command has been spawned.
#[cfg(target_os = "linux")]
pub fn confine(cmd: &mut Command, ruleset: &Ruleset) {
    use std::os::unix::process::CommandExt;
    let fd = ruleset.fd.as_raw_fd();
    // SAFETY: the closure only makes two syscalls on an open descriptor:
    // async-signal-safe, no allocation.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn confine(cmd: &mut Command, _: &Ruleset) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure makes no calls at all.
    unsafe {
        cmd.pre_exec(|| Err(std::io::Error::from(std::io::ErrorKind::Unsupported)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::PathRules;
    use crate::guard::sandbox;
    use std::fs;

    fn run(plan: &FilePlan, script: &str, dir: &std::path::Path) -> (bool, String) {
        let ruleset = build(plan).unwrap();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]).current_dir(dir);
        confine(&mut cmd, &ruleset);
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    #[test]
    fn the_kernel_keeps_secrets_unreadable_and_the_rest_read_only() {
        if !available() {
            eprintln!("skipped: this kernel has no Landlock ABI 2");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let home = dir.path().join("home");
        fs::create_dir_all(ws.join("src")).unwrap();
        fs::create_dir_all(home.join(".aws")).unwrap();
        fs::write(ws.join(".env"), "TOKEN=s3cr3t-value\n").unwrap();
        fs::write(ws.join("src/a.txt"), "hello\n").unwrap();
        fs::write(home.join(".aws/credentials"), "aws-secret\n").unwrap();
        fs::write(home.join("notes"), "mine\n").unwrap();
        let ws = ws.canonicalize().unwrap();
        let home = home.canonicalize().unwrap();
        let plan = sandbox::plan(&ws, &PathRules::default(), Some(&[]), Some(&home), &[]);
        // Ordinary work: read and write in the workspace, run programs.
        let (ok, out) = run(
            &plan,
            "cat src/a.txt && echo new > src/b.txt && cat src/b.txt && ls -a . >/dev/null && git --version >/dev/null && echo out > /dev/stdout && echo err | tee /dev/stderr >/dev/null",
            &ws,
        );
        assert!(ok, "{out}");
        assert_eq!(out, "hello\nnew\nout\nerr\n");
        // The secret: not by name, not through a link or a hard link made
        // now, not moved elsewhere and read there.
        for attack in [
            "cat .env",
            "ln -s .env src/x && cat src/x",
            "ln .env hard && cat hard",
            "mv .env src/moved && cat src/moved",
            "cp .env src/copy",
            "cat ../home/.aws/credentials",
        ] {
            let (ok, out) = run(&plan, attack, &ws);
            assert!(!ok, "{attack}: {out}");
            assert!(
                !out.contains("s3cr3t") && !out.contains("aws-secret"),
                "{attack}: {out}"
            );
        }
        // Writable only where the plan says: not the home directory.
        let (ok, _) = run(&plan, "echo x >> ../home/notes", &ws);
        assert!(!ok);
        assert_eq!(fs::read_to_string(home.join("notes")).unwrap(), "mine\n");
        // The file itself may be replaced (cp .env.example .env).
        let (ok, out) = run(&plan, "echo K= > .env", &ws);
        assert!(ok, "{out}");
    }

    /// Commands the word rules let through (a Write confirm, no Security
    /// finding) because the file they read is named only at run time:
    /// without the sandbox each prints the secret, under it the kernel
    /// refuses the read.
    #[test]
    fn the_kernel_refuses_what_the_word_rules_let_through() {
        use crate::files::Workspace;
        use crate::guard::Guard;
        use crate::prim::parse::parse;
        use crate::prim::table::SHELL;
        use crate::prim::tools::{Confinement, shell_cancellable};
        if !available() {
            eprintln!("skipped: this kernel has no Landlock ABI 2");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let secret = "Zq8vL2mWx9RtK4pN7cYb";
        fs::create_dir_all(dir.path().join("config")).unwrap();
        fs::write(dir.path().join(".env"), format!("TOKEN={secret}\n")).unwrap();
        fs::write(dir.path().join("config/deploy.pem"), format!("{secret}\n")).unwrap();
        fs::write(dir.path().join("notes.txt"), "ordinary\n").unwrap();
        let guard = Guard::new(crate::guard::GuardPolicy {
            file_sandbox_workspace: true,
            ..Default::default()
        });
        for command in [
            // A name computed in Python: reversed, from character codes.
            "python3 -c \"print(open('vne.'[::-1]).read())\"",
            "python3 -c \"print(open(''.join(map(chr,[99,111,110,102,105,103,47,100,101,112,108,111,121,46,112,101,109]))).read())\"",
            // Every file of the tree, in a language the rules do not parse.
            "python3 -c \"import os\nfor r,_,fs in os.walk('.'):\n  for f in fs: print(open(os.path.join(r,f)).read())\"",
        ] {
            let call = parse(&SHELL, &serde_json::json!({ "command": command })).unwrap();
            assert_eq!(guard.judge(&call, &ws).as_str(), "write", "{command}");
            let open = Confinement::default();
            let leaked = shell_cancellable(&ws, command, 20, open, None).unwrap();
            assert!(leaked.contains(secret), "{command}: {leaked}");
            let plan = guard.file_plan(&ws, None, &[]);
            let confined = Confinement {
                files: Some(&plan),
                ..Confinement::default()
            };
            let out = shell_cancellable(&ws, command, 20, confined, None).unwrap();
            assert!(!out.contains(secret), "{command}: {out}");
            assert!(out.contains("Permission denied"), "{command}: {out}");
            assert!(
                out.contains("note: commands run in a file sandbox"),
                "{out}"
            );
        }
        // An ordinary read in the same tree still works.
        let plan = guard.file_plan(&ws, None, &[]);
        let confined = Confinement {
            files: Some(&plan),
            ..Confinement::default()
        };
        let out = shell_cancellable(&ws, "cat notes.txt", 20, confined, None).unwrap();
        assert_eq!(out, "ordinary\nexit code: 0\n");
    }
}
