//! Running a command in a private mount namespace that carries out the
//! guard's mount plan (`guard::mounts`): secrets covered by empty
//! read-only files, the home directory reduced to an allowlist, private
//! temp directories, git's settings and hooks read-only.
//!
//! Carried out by the command's own process before it execs (`spawn.rs`
//! makes it in new user, mount and process-id namespaces). Everything it
//! needs is prepared here first: it shares nib's memory until it execs,
//! so it only calls `open`, `mkdir`, `mount` and `statfs` on C strings
//! made in advance, and formats `/proc/self/fd/N` into a buffer on its
//! stack.
//!
//! Raw syscalls through `libc`, as `netns.rs` does: the namespace is a
//! handful of calls; a crate (or bubblewrap, a second process and a setuid
//! or user-namespace binary to install) would add more than it saves.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::guard::mounts::{MountPlan, MountStep, PRIVATE_DIRS};

/// The session's own directories that stand in for `/tmp` and the rest,
/// and the empty file and directory that cover secrets. Removed when the
/// session ends.
#[derive(Debug)]
pub struct SessionDirs {
    dir: PathBuf,
}

impl SessionDirs {
    /// Makes the directories (mode 0700, in the system's temp directory),
    /// after removing those of nib processes that are gone (killed before
    /// they could), once per process.
    pub fn create() -> std::io::Result<SessionDirs> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        static SWEPT: std::sync::Once = std::sync::Once::new();
        let temp = std::env::temp_dir().canonicalize()?;
        SWEPT.call_once(|| remove_stale(&temp));
        let mut builder = std::fs::DirBuilder::new();
        builder.mode(0o700);
        // A name another process holds (a pid reused while an old
        // directory of it was left behind) is passed over, not an error.
        let dir = loop {
            let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = temp.join(format!("{STALE_PREFIX}{}-{n}", std::process::id()));
            match builder.create(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {}
                Err(e) => return Err(e),
            }
        };
        let dirs = SessionDirs { dir };
        for (_, name) in PRIVATE_DIRS {
            builder.create(dirs.dir.join(name))?;
        }
        std::fs::write(dirs.empty_file(), b"")?;
        std::fs::set_permissions(dirs.empty_file(), std::fs::Permissions::from_mode(0o444))?;
        builder.mode(0o555).create(dirs.empty_dir())?;
        builder.mode(0o700).create(dirs.own_dir())?;
        std::fs::write(dirs.own_dir().join(".gitignore"), b"*\n")?;
        std::fs::set_permissions(dirs.own_dir(), std::fs::Permissions::from_mode(0o555))?;
        Ok(dirs)
    }
    pub fn path(&self) -> &Path {
        &self.dir
    }
    fn empty_file(&self) -> PathBuf {
        self.dir.join("empty")
    }
    fn empty_dir(&self) -> PathBuf {
        self.dir.join("empty.d")
    }
    /// What commands see for `.nib/`: only a `.gitignore` of `*`.
    fn own_dir(&self) -> PathBuf {
        self.dir.join("nib.d")
    }
    /// The directories commands may write (for the Landlock plan).
    pub fn writable(&self) -> Vec<PathBuf> {
        PRIVATE_DIRS
            .iter()
            .map(|(_, name)| self.dir.join(name))
            .collect()
    }
}

/// What a session's directories are named: this, the pid, a count.
const STALE_PREFIX: &str = "nib-sandbox-";

/// Removes the session directories in `temp` whose process is gone.
fn remove_stale(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(STALE_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            drop(SessionDirs { dir: entry.path() });
        }
    }
}

impl Drop for SessionDirs {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        // The empty directory is read-only: give it back its write bit
        // so it can be removed.
        let _ = std::fs::set_permissions(self.empty_dir(), std::fs::Permissions::from_mode(0o700));
        let _ = std::fs::set_permissions(self.own_dir(), std::fs::Permissions::from_mode(0o700));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One step, with every path made a C string in advance.
enum Op {
    /// Bind the source opened in `slot` onto `target`.
    Bind {
        slot: usize,
        target: CString,
        ensure: Ensure,
        read_only: bool,
        recursive: bool,
        optional: bool,
    },
    Tmpfs {
        target: CString,
        ensure: Ensure,
    },
    SelfReadOnly {
        path: CString,
    },
}

/// The mount point to make first when it is missing (under a directory
/// already covered): its parents, then itself as a directory or a file.
struct Ensure {
    parents: Vec<CString>,
    file: bool,
}

/// A plan made ready for the child.
pub struct Prepared {
    /// Sources to open before anything is covered.
    sources: Vec<CString>,
    fds: Vec<libc::c_int>,
    ops: Vec<Op>,
    /// Where the command runs: entered again once the mounts are made,
    /// since the directory entered before them is the one under the
    /// mounts (relative paths would go around every mask).
    cwd: Option<CString>,
}

fn cstr(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a path with a NUL"))
}

fn ensure(path: &Path, file: bool) -> std::io::Result<Ensure> {
    let mut parents: Vec<CString> = path
        .ancestors()
        .skip(1)
        .filter(|p| p.parent().is_some())
        .map(cstr)
        .collect::<Result<_, _>>()?;
    parents.reverse();
    Ok(Ensure { parents, file })
}

/// Prepares `plan` for a command started by `spawn.rs`, to run in `cwd`.
pub fn prepare(
    plan: &MountPlan,
    dirs: &SessionDirs,
    cwd: Option<&Path>,
) -> std::io::Result<Prepared> {
    let mut sources: Vec<CString> = Vec::new();
    let slot = |p: &Path, sources: &mut Vec<CString>| -> std::io::Result<usize> {
        let c = cstr(p)?;
        if let Some(i) = sources.iter().position(|s| *s == c) {
            return Ok(i);
        }
        sources.push(c);
        Ok(sources.len() - 1)
    };
    let empty_file = slot(&dirs.empty_file(), &mut sources)?;
    let empty_dir = slot(&dirs.empty_dir(), &mut sources)?;
    let own_dir = slot(&dirs.own_dir(), &mut sources)?;
    let mut ops = Vec::new();
    for step in &plan.steps {
        match step {
            MountStep::Private { target, source } => ops.push(Op::Bind {
                slot: slot(source, &mut sources)?,
                target: cstr(target)?,
                ensure: ensure(target, false)?,
                read_only: false,
                recursive: false,
                optional: false,
            }),
            MountStep::Empty { target } => ops.push(Op::Tmpfs {
                target: cstr(target)?,
                ensure: ensure(target, false)?,
            }),
            MountStep::Keep { path, writable } => ops.push(Op::Bind {
                slot: slot(path, &mut sources)?,
                target: cstr(path)?,
                ensure: ensure(path, !path.is_dir())?,
                read_only: !writable,
                recursive: true,
                optional: true,
            }),
            MountStep::Mask { path, dir } => ops.push(Op::Bind {
                slot: if *dir { empty_dir } else { empty_file },
                target: cstr(path)?,
                ensure: Ensure {
                    parents: Vec::new(),
                    file: !dir,
                },
                read_only: true,
                recursive: false,
                optional: true,
            }),
            MountStep::MaskWith { path, source } => ops.push(Op::Bind {
                slot: slot(source, &mut sources)?,
                target: cstr(path)?,
                ensure: Ensure {
                    parents: Vec::new(),
                    file: true,
                },
                read_only: true,
                recursive: false,
                optional: true,
            }),
            MountStep::MaskOwn { path } => ops.push(Op::Bind {
                slot: own_dir,
                target: cstr(path)?,
                ensure: Ensure {
                    parents: Vec::new(),
                    file: false,
                },
                read_only: true,
                recursive: false,
                optional: true,
            }),
            MountStep::ReadOnly { path } => ops.push(Op::SelfReadOnly { path: cstr(path)? }),
        }
    }
    Ok(Prepared {
        fds: vec![-1; sources.len()],
        sources,
        ops,
        cwd: cwd.map(cstr).transpose()?,
    })
}

#[cfg(target_os = "linux")]
impl Prepared {
    /// In the command's process (`spawn.rs`), process 1 of its new user,
    /// mount and process-id namespaces, before it execs.
    pub(super) fn run(&mut self) -> std::io::Result<()> {
        let err = std::io::Error::last_os_error;
        // SAFETY (the whole function): every pointer passed is a
        // NUL-terminated string made before the clone, a buffer on this
        // stack, or null where the call allows it.
        unsafe {
            // Nothing done here may reach the host's mounts.
            if libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(err());
            }
            // Open every source before anything above it is covered.
            for (i, path) in self.sources.iter().enumerate() {
                self.fds[i] = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            }
            for op in &self.ops {
                match op {
                    Op::Bind {
                        slot,
                        target,
                        ensure,
                        read_only,
                        recursive,
                        optional,
                    } => {
                        let fd = self.fds[*slot];
                        if fd < 0 {
                            if *optional {
                                continue;
                            }
                            return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
                        }
                        make_mount_point(target, ensure);
                        let mut buf = [0u8; 32];
                        let source = fd_path(fd, &mut buf);
                        let mut flags = libc::MS_BIND;
                        if *recursive {
                            flags |= libc::MS_REC;
                        }
                        if libc::mount(
                            source,
                            target.as_ptr(),
                            std::ptr::null(),
                            flags,
                            std::ptr::null(),
                        ) != 0
                        {
                            let e = err();
                            if *optional && e.raw_os_error() == Some(libc::ENOENT) {
                                continue;
                            }
                            return Err(e);
                        }
                        if *read_only {
                            remount_read_only(target)?;
                        }
                    }
                    Op::Tmpfs { target, ensure } => {
                        make_mount_point(target, ensure);
                        if libc::mount(
                            c"tmpfs".as_ptr(),
                            target.as_ptr(),
                            c"tmpfs".as_ptr(),
                            libc::MS_NOSUID | libc::MS_NODEV,
                            c"mode=0755".as_ptr().cast(),
                        ) != 0
                        {
                            return Err(err());
                        }
                    }
                    Op::SelfReadOnly { path } => {
                        if libc::mount(
                            path.as_ptr(),
                            path.as_ptr(),
                            std::ptr::null(),
                            libc::MS_BIND | libc::MS_REC,
                            std::ptr::null(),
                        ) != 0
                        {
                            let e = err();
                            if e.raw_os_error() == Some(libc::ENOENT) {
                                continue;
                            }
                            return Err(e);
                        }
                        remount_read_only(path)?;
                    }
                }
            }
            for fd in &self.fds {
                if *fd >= 0 {
                    libc::close(*fd);
                }
            }
            if let Some(cwd) = &self.cwd
                && libc::chdir(cwd.as_ptr()) != 0
            {
                return Err(err());
            }
            // A /proc of the command's own process-id namespace: it sees
            // only its own processes, so no other process's environment
            // (nib's, the user's shell's) can be read there or by `ps e`.
            if libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) != 0
            {
                return Err(err());
            }
            // Terminals of its own: the host's (the user's shell's among
            // them) are not there to write to. Where the kernel refuses a
            // new instance, the host's stay, still not its controlling
            // terminal (`spawn.rs` makes a new session).
            if libc::mount(
                c"devpts".as_ptr(),
                c"/dev/pts".as_ptr(),
                c"devpts".as_ptr(),
                libc::MS_NOSUID | libc::MS_NOEXEC,
                c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
            ) == 0
            {
                libc::mount(
                    c"/dev/pts/ptmx".as_ptr(),
                    c"/dev/ptmx".as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                );
            }
        }
        Ok(())
    }
}

/// `/proc/self/fd/N` in `buf`, NUL-terminated, without allocating.
fn fd_path(fd: libc::c_int, buf: &mut [u8; 32]) -> *const libc::c_char {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    buf[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 12];
    let mut n = fd.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[PREFIX.len() + i] = digits[len - 1 - i];
    }
    buf[PREFIX.len() + len] = 0;
    buf.as_ptr().cast()
}

/// Makes a missing mount point (its parents, then itself). Errors are
/// left to the mount that follows: an existing path is the usual case.
#[cfg(target_os = "linux")]
unsafe fn make_mount_point(target: &CString, ensure: &Ensure) {
    // SAFETY: NUL-terminated strings made before the fork.
    unsafe {
        for parent in &ensure.parents {
            libc::mkdir(parent.as_ptr(), 0o755);
        }
        if ensure.file {
            let fd = libc::open(
                target.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
                0o444,
            );
            if fd >= 0 {
                libc::close(fd);
            }
        } else {
            libc::mkdir(target.as_ptr(), 0o755);
        }
    }
}

/// Makes the bind mount at `target` read-only, keeping the flags a user
/// namespace may not drop (nosuid, nodev, noexec and the atime ones).
#[cfg(target_os = "linux")]
unsafe fn remount_read_only(target: &CString) -> std::io::Result<()> {
    // SAFETY: a zeroed statvfs is valid; target is NUL-terminated.
    // (glibc's statvfs is statfs with its flags copied: no allocation.)
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(target.as_ptr(), &mut st) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let f = st.f_flag;
        let mut flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY;
        for (st_flag, ms_flag) in [
            (libc::ST_NOSUID, libc::MS_NOSUID),
            (libc::ST_NODEV, libc::MS_NODEV),
            (libc::ST_NOEXEC, libc::MS_NOEXEC),
            (libc::ST_NOATIME, libc::MS_NOATIME),
            (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
            (libc::ST_RELATIME, libc::MS_RELATIME),
        ] {
            if f & st_flag != 0 {
                flags |= ms_flag;
            }
        }
        if libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_of_gone_processes_are_removed_and_ours_kept() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let gone = temp.path().join(format!("{STALE_PREFIX}4294967294-0"));
        std::fs::create_dir_all(gone.join("empty.d")).unwrap();
        std::fs::set_permissions(gone.join("empty.d"), std::fs::Permissions::from_mode(0o555))
            .unwrap();
        let ours = temp
            .path()
            .join(format!("{STALE_PREFIX}{}-7", std::process::id()));
        std::fs::create_dir(&ours).unwrap();
        let other = temp.path().join("nib-sandbox-notes");
        std::fs::create_dir(&other).unwrap();
        remove_stale(temp.path());
        assert!(!gone.exists());
        assert!(ours.exists() && other.exists());
    }

    #[test]
    fn fd_paths_are_formatted_without_allocating() {
        let mut buf = [0u8; 32];
        for (fd, want) in [
            (0, "/proc/self/fd/0"),
            (7, "/proc/self/fd/7"),
            (1234, "/proc/self/fd/1234"),
        ] {
            let p = fd_path(fd, &mut buf);
            // SAFETY: fd_path wrote a NUL-terminated string into buf.
            let got = unsafe { std::ffi::CStr::from_ptr(p) };
            assert_eq!(got.to_str().unwrap(), want);
        }
    }
}
