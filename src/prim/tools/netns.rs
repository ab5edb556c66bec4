//! Running a command without network: a private user and network
//! namespace (Linux), entered between fork and exec, with only a loopback
//! interface, brought up so a test suite can still talk to itself.
//!
//! Command parsing cannot stop every way out (research/security.md,
//! finding 6); taking the network away can. Where the system does not
//! allow unprivileged namespaces (another OS, a container that forbids
//! them), commands run as before and the shell tool says so.

use std::process::Command;
use std::sync::OnceLock;

/// Whether commands can be run without network here (probed once).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let mut probe = Command::new("sh");
        probe
            .args(["-c", "exit 0"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        isolate(&mut probe);
        probe.status().is_ok_and(|s| s.success())
    })
}

/// Makes `cmd` start in a private network namespace (loopback only). The
/// spawn fails if the namespace cannot be made: callers check
/// [`available`] first.
#[cfg(target_os = "linux")]
pub fn isolate(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // Everything the child needs is prepared here: between fork and exec
    // only async-signal-safe calls are allowed (no allocation).
    // SAFETY: getuid/getgid cannot fail and touch no memory of ours.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let uid_map = format!("{uid} {uid} 1\n");
    let gid_map = format!("{gid} {gid} 1\n");
    // SAFETY: the closure only calls async-signal-safe functions (unshare,
    // open, write, close, socket, ioctl) on data prepared above.
    unsafe {
        cmd.pre_exec(move || {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Map our own ids to themselves: the command runs as the same
            // user, files it makes are ours.
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", uid_map.as_bytes())?;
            write_file(c"/proc/self/gid_map", gid_map.as_bytes())?;
            loopback_up();
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn isolate(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure makes no calls at all.
    unsafe {
        cmd.pre_exec(|| Err(std::io::Error::from(std::io::ErrorKind::Unsupported)));
    }
}

#[cfg(target_os = "linux")]
pub(super) fn write_file(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: path is NUL-terminated; data is a valid buffer of its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Brings up `lo` in the new namespace. A failure leaves loopback down,
/// which only breaks commands that talk to themselves over the network.
#[cfg(target_os = "linux")]
pub(super) fn loopback_up() {
    // SAFETY: a zeroed ifreq is valid; the name fits with its NUL; the
    // socket is closed on every path.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return;
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        if libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req) == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(sock, libc::SIOCSIFFLAGS, &mut req);
        }
        libc::close(sock);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolated_commands_have_loopback_and_nothing_else() {
        if !available() {
            eprintln!("skipped: this system does not allow a private network namespace");
            return;
        }
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "cat /proc/net/dev; id -u"]);
        isolate(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let interfaces: Vec<&str> = text
            .lines()
            .skip(2)
            .filter_map(|l| l.split(':').next())
            .map(str::trim)
            .filter(|l| !l.chars().all(|c| c.is_ascii_digit()))
            .collect();
        assert_eq!(interfaces, ["lo"], "{text}");
        // The same user as outside.
        let uid = unsafe { libc::getuid() };
        assert!(text.trim_end().ends_with(&uid.to_string()), "{text}");
    }
}
