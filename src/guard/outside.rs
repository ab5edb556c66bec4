//! What a command sees outside the workspace and home: the system's own
//! directories, and nothing of other people's or other projects' data.
//!
//! Deny by default, as home is: every top-level directory that is not
//! the system's (`/usr`, `/etc`, `/opt`, `/var`, ...) is covered by an
//! empty one, so a sibling project's `.env` under `/work`, `/srv` or
//! `/workspaces` reads as missing; the workspace, home's allowlist and
//! what the user names (`[guard] show`) are shown again on top. And every
//! unix socket a host process listens on by path is covered by an empty
//! file, wherever it is, so a command cannot hand data to a daemon (an
//! agent under `~/.cache`, a database under `/var/lib`) whose socket the
//! private `/tmp` and `/run` did not already hide.

use std::path::{Path, PathBuf};

/// Top-level directories that hold the system and its toolchains, not
/// anyone's data: left as they are. Anything else at `/` is covered.
pub const SYSTEM_TOP: &[&str] = &[
    "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "nix", "gnu", "opt", "proc",
    "run", "sbin", "snap", "sys", "tmp", "usr", "var",
];

/// Sockets of well-known daemons, looked for besides those the network
/// namespace lists: a daemon in another network namespace (the host's,
/// seen from a container) does not appear in `/proc/net/unix`.
const KNOWN_SOCKETS: &[&str] = &[
    "/var/run/docker.sock",
    "/var/lib/mysql/mysql.sock",
    "/var/lib/libvirt/libvirt-sock",
    "/var/snap/lxd/common/lxd/unix.socket",
    "/nix/var/nix/daemon-socket/socket",
];

/// The top-level directories of `/` to cover (canonical): real
/// directories not in [`SYSTEM_TOP`]. Links at `/` (`/lib -> usr/lib`)
/// lead to a directory judged by its own name.
pub fn covered_top_dirs() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let name = e.file_name();
            !SYSTEM_TOP
                .iter()
                .any(|s| name.as_encoded_bytes() == s.as_bytes())
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The paths of the unix sockets host processes listen on, from
/// `/proc/net/unix` (abstract ones are per network namespace already),
/// and the [`KNOWN_SOCKETS`] that exist, less those under `private`
/// (directories the command gets its own of).
pub fn host_sockets(private: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let mut out: Vec<PathBuf> = std::fs::read_to_string("/proc/net/unix")
        .map(|t| listed_sockets(&t))
        .unwrap_or_default();
    out.extend(KNOWN_SOCKETS.iter().map(PathBuf::from).filter(|p| {
        p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_socket())
    }));
    // The name a socket was bound by may run through a link
    // (`/var/run` is `/run`): covered where it is.
    let mut out: Vec<PathBuf> = out
        .into_iter()
        .filter_map(|p| {
            let parent = p.parent()?.canonicalize().ok()?;
            Some(parent.join(p.file_name()?))
        })
        .filter(|p| !private.iter().any(|d| p.starts_with(d)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The socket paths in the text of `/proc/net/unix`: the eighth field on,
/// when it is a path (an abstract socket's starts with `@`).
fn listed_sockets(text: &str) -> Vec<PathBuf> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut rest = line.trim_start();
            for _ in 0..7 {
                let end = rest.find(char::is_whitespace)?;
                rest = rest[end..].trim_start();
            }
            rest.starts_with('/').then(|| PathBuf::from(rest))
        })
        .collect()
}

/// The toolchains the user's environment points at (canonical): each
/// `PATH` entry (its parent when it is a `bin`, the prefix a toolchain
/// keeps its libraries under) and the places the toolchain variables
/// commands get name (`environment::TOOLCHAIN`; a value that is no
/// absolute path, such as `CC=gcc`, names none). Never `/`, a
/// top-level directory or `home` itself: a `PATH` holding `~` would show
/// all of it.
pub fn toolchains(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut add = |p: PathBuf| {
        if !p.is_absolute() {
            return;
        }
        let Ok(p) = p.canonicalize() else {
            return;
        };
        let deep = |p: &Path| p.components().count() > 2 && Some(p) != home;
        let p = match p.parent() {
            Some(prefix) if p.file_name().is_some_and(|n| n == "bin") && deep(prefix) => {
                prefix.to_path_buf()
            }
            _ => p,
        };
        if deep(&p) && !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(path) = std::env::var_os("PATH") {
        std::env::split_paths(&path).for_each(&mut add);
    }
    for var in super::environment::TOOLCHAIN {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            std::env::split_paths(&v).for_each(&mut add);
        }
    }
    out
}

/// Whether `path` (absolute, canonical) is hidden from commands by
/// [`covered_top_dirs`]: under a covered top-level directory and not
/// under one of `shown` (the workspace, home, what the user names).
pub fn outside_hidden(path: &Path, shown: &[&Path]) -> bool {
    let Some(top) = path.components().nth(1) else {
        return false;
    };
    let top = top.as_os_str();
    if SYSTEM_TOP
        .iter()
        .any(|s| top.as_encoded_bytes() == s.as_bytes())
    {
        return false;
    }
    !shown.iter().any(|s| path.starts_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_socket_paths_are_read_and_abstract_ones_left() {
        let text = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20811 /run/systemd/notify\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20812 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 30955\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20813 /home/a b/.cache/agent.sock\n";
        assert_eq!(
            listed_sockets(text),
            vec![
                PathBuf::from("/run/systemd/notify"),
                PathBuf::from("/home/a b/.cache/agent.sock")
            ]
        );
    }

    #[test]
    fn only_data_outside_what_is_shown_is_hidden() {
        let ws = Path::new("/work/proj");
        let home = Path::new("/home/me");
        let shown = [ws, home];
        assert!(outside_hidden(Path::new("/work/other/.env"), &shown));
        assert!(outside_hidden(Path::new("/srv/app/.env"), &shown));
        assert!(outside_hidden(Path::new("/home/you/.ssh/id_rsa"), &shown));
        assert!(!outside_hidden(Path::new("/work/proj/src/main.rs"), &shown));
        assert!(!outside_hidden(Path::new("/usr/bin/python3"), &shown));
        assert!(!outside_hidden(Path::new("/opt/conda/bin/python"), &shown));
        assert!(!outside_hidden(Path::new("/"), &shown));
    }
}
