//! Which workspace files a command wrote, told by the kernel: an inotify
//! watch on every directory of the workspace, kept for the session.
//!
//! The guard reads what a command's words say it writes; a script writes
//! where its words do not say (a copy of a secret it found by a path no
//! mask covered, reversed into `notes.txt`). The kernel sees every write
//! whoever makes it, so after each command the files it closed after
//! writing, moved in or linked are read back and checked against the
//! session's secrets (`dispatch.rs` moves a copy away).
//!
//! Raw syscalls through `libc`, as `netns.rs` does: four calls and one
//! record layout.

use std::collections::{HashMap, HashSet};

use crate::guard::storewalk::Changes;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Directories watched at most; past it (or past the kernel's own limit)
/// the files written are found by their change time instead.
const MAX_WATCHES: usize = 100_000;

/// Files reported for one command at most.
const MAX_FILES: usize = 50_000;

/// Directories never watched: git's own store (written on every commit,
/// judged when it leaves) and nib's.
const NOT_WATCHED: &[&str] = &[".git", ".nib"];

/// The session's watch on the workspace.
#[derive(Debug)]
pub struct Written {
    fd: libc::c_int,
    root: PathBuf,
    dirs: HashMap<libc::c_int, PathBuf>,
    /// A directory could not be watched (the kernel's limit or ours):
    /// every report falls back to change times.
    incomplete: bool,
    /// Events were lost during the current command: this report falls
    /// back to change times.
    lost: bool,
    /// When the current command started (seconds since the epoch).
    since: i64,
    /// Directories an entry was made, moved, removed or changed (mode,
    /// links) in since the last [`Written::changes`].
    changed: HashSet<PathBuf>,
    /// Directories that could not be watched (unreadable when looked at):
    /// they and all under them count as changed every time.
    unwatched: Vec<PathBuf>,
    /// Events were lost since the last [`Written::changes`], or none was
    /// asked yet: the next walk cannot trust what it remembers.
    untold: bool,
}

const EVENTS: u32 = libc::IN_CLOSE_WRITE
    | libc::IN_MOVED_TO
    | libc::IN_CREATE
    | libc::IN_MOVED_FROM
    | libc::IN_DELETE
    | libc::IN_ATTRIB;

/// The events that change what a walk of the directories finds.
const MOVES: u32 = libc::IN_MOVED_TO
    | libc::IN_CREATE
    | libc::IN_MOVED_FROM
    | libc::IN_DELETE
    | libc::IN_ATTRIB
    | libc::IN_Q_OVERFLOW
    | libc::IN_IGNORED;

impl Written {
    /// Watches every directory under `root`; None where the system has no
    /// inotify.
    pub fn new(root: &Path) -> Option<Written> {
        // SAFETY: no pointers; the flags are valid.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        let mut w = Written {
            fd,
            root: root.to_path_buf(),
            dirs: HashMap::new(),
            incomplete: false,
            lost: false,
            since: 0,
            changed: HashSet::new(),
            unwatched: Vec::new(),
            untold: true,
        };
        let mut ignored = Vec::new();
        w.watch_tree(root, &mut ignored, false);
        Some(w)
    }

    /// The directories of the workspace whose entries changed since the
    /// last time this was asked (reading what the kernel queued): the
    /// plan's walk for secret stores reads only them again. None when it
    /// cannot be told: the first time, past the watch limit, or after
    /// events were lost.
    pub fn changes(&mut self) -> Option<Changes> {
        let mut files = Vec::new();
        self.read_events(&mut files);
        let dirs = std::mem::take(&mut self.changed);
        if std::mem::take(&mut self.untold) || self.incomplete {
            return None;
        }
        Some(Changes {
            dirs,
            unwatched: self.unwatched.clone(),
        })
    }

    /// Before a command: what happened since the last one (the model's
    /// own writes, judged when they were made) is set aside.
    pub fn start(&mut self) {
        let mut ignored = Vec::new();
        self.read_events(&mut ignored);
        self.lost = false;
        self.since = now_secs();
    }

    /// After a command: the files it wrote, moved in or linked, relative
    /// to the root.
    pub fn finish(&mut self) -> Vec<String> {
        let mut files = Vec::new();
        self.read_events(&mut files);
        if self.incomplete || self.lost {
            changed_since(&self.root, self.since, &mut files);
        }
        let mut rels: Vec<String> = files
            .iter()
            .filter_map(|p| p.strip_prefix(&self.root).ok())
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|r| !r.is_empty())
            .collect();
        rels.sort();
        rels.dedup();
        rels.truncate(MAX_FILES);
        rels
    }

    /// Watches `dir` and everything under it; with `report`, every file
    /// found is one the command made (a directory it created or moved in).
    fn watch_tree(&mut self, dir: &Path, files: &mut Vec<PathBuf>, report: bool) {
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            if self.dirs.len() >= MAX_WATCHES {
                self.incomplete = true;
                return;
            }
            let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
                continue;
            };
            // SAFETY: a NUL-terminated path; fd is our inotify instance.
            let wd =
                unsafe { libc::inotify_add_watch(self.fd, c.as_ptr(), EVENTS | libc::IN_ONLYDIR) };
            if wd < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSPC) {
                    self.incomplete = true;
                } else {
                    self.unwatched.push(dir);
                }
                continue;
            }
            self.dirs.insert(wd, dir.clone());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    if !NOT_WATCHED.iter().any(|n| entry.file_name() == *n) {
                        stack.push(entry.path());
                    } else if report && entry.file_name() == ".git" {
                        files.push(entry.path().join("config"));
                    }
                } else if report {
                    files.push(entry.path());
                }
            }
        }
    }

    /// Reads what the kernel queued: files into `files`, new directories
    /// watched (and their files reported).
    fn read_events(&mut self, files: &mut Vec<PathBuf>) {
        // inotify records are aligned for their 32-bit fields.
        let mut buf = vec![0u32; 16 * 1024];
        let header = std::mem::size_of::<libc::inotify_event>();
        loop {
            // SAFETY: buf is valid for its length in bytes.
            let n = unsafe {
                libc::read(
                    self.fd,
                    buf.as_mut_ptr().cast(),
                    buf.len() * std::mem::size_of::<u32>(),
                )
            };
            if n <= 0 {
                return;
            }
            let n = n as usize;
            let bytes: &[u8] =
                // SAFETY: the first n bytes of buf were written by read.
                unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), n) };
            let mut at = 0;
            let mut new_dirs = Vec::new();
            while at + header <= n {
                let field = |o: usize| {
                    u32::from_ne_bytes([
                        bytes[at + o],
                        bytes[at + o + 1],
                        bytes[at + o + 2],
                        bytes[at + o + 3],
                    ])
                };
                let wd = field(0) as libc::c_int;
                let mask = field(4);
                let len = field(12) as usize;
                let name_bytes = &bytes[(at + header).min(n)..(at + header + len).min(n)];
                at += header + len;
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    self.lost = true;
                    self.untold = true;
                    continue;
                }
                let name = name_bytes.split(|b| *b == 0).next().unwrap_or_default();
                let Some(dir) = self.dirs.get(&wd) else {
                    continue;
                };
                if mask & MOVES != 0 {
                    self.changed.insert(dir.clone());
                    if mask & libc::IN_ISDIR != 0 && !name.is_empty() {
                        // A directory made, moved in or out, or its mode
                        // changed (made readable again: watched anew).
                        let sub = dir.join(std::ffi::OsStr::from_bytes(name));
                        if mask & libc::IN_ATTRIB != 0
                            && let Some(at) = self.unwatched.iter().position(|u| *u == sub)
                        {
                            self.unwatched.swap_remove(at);
                            new_dirs.push(sub.clone());
                        }
                        self.changed.insert(sub);
                    }
                }
                if mask & libc::IN_IGNORED != 0 {
                    self.dirs.remove(&wd);
                    continue;
                }
                if name.is_empty() {
                    continue;
                }
                let Some(dir) = self.dirs.get(&wd) else {
                    continue;
                };
                let path = dir.join(std::ffi::OsStr::from_bytes(name));
                if mask & (libc::IN_MOVED_FROM | libc::IN_DELETE | libc::IN_ATTRIB) != 0 {
                    continue; // nothing new to read back
                }
                if mask & libc::IN_ISDIR != 0 {
                    let made = mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0;
                    if made && name == b".git" {
                        // A new repository, unwatched inside: its config
                        // is what runs programs (`autorun.rs` looks).
                        files.push(path.join("config"));
                    } else if made && !NOT_WATCHED.iter().any(|n| n.as_bytes() == name) {
                        new_dirs.push(path);
                    }
                } else {
                    files.push(path);
                }
            }
            for dir in new_dirs {
                self.watch_tree(&dir, files, true);
            }
        }
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        // SAFETY: our own descriptor, closed once.
        unsafe {
            libc::close(self.fd);
        }
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Files under `root` changed at or after `since` (a second early, for
/// clocks that round), for when events were lost.
fn changed_since(root: &Path, since: i64, files: &mut Vec<PathBuf>) {
    use std::os::unix::fs::MetadataExt;
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > 1_000_000 || files.len() >= MAX_FILES {
                return;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !NOT_WATCHED.iter().any(|n| entry.file_name() == *n) {
                    stack.push(entry.path());
                }
            } else if kind.is_file() && entry.metadata().is_ok_and(|m| m.ctime() >= since - 1) {
                files.push(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn files_a_command_writes_anywhere_are_reported_and_earlier_ones_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::create_dir_all(root.join(".git/objects")).unwrap();
        fs::write(root.join("README"), "r\n").unwrap();
        let Some(mut w) = Written::new(&root) else {
            eprintln!("skipped: no inotify here");
            return;
        };
        // Before the command: the model's own write, set aside.
        fs::write(root.join("src/by-the-model.txt"), "m\n").unwrap();
        w.start();
        fs::write(root.join("src/deep/notes.txt"), "n\n").unwrap();
        fs::create_dir_all(root.join("new/inner")).unwrap();
        fs::write(root.join("new/inner/copy.txt"), "c\n").unwrap();
        fs::write(root.join("moved.tmp"), "x\n").unwrap();
        fs::rename(root.join("moved.tmp"), root.join("moved.txt")).unwrap();
        fs::hard_link(root.join("README"), root.join("linked")).unwrap();
        fs::write(root.join(".git/objects/ab"), "o\n").unwrap();
        let got = w.finish();
        for want in [
            "src/deep/notes.txt",
            "new/inner/copy.txt",
            "moved.txt",
            "linked",
        ] {
            assert!(got.iter().any(|g| g == want), "{want} missing from {got:?}");
        }
        assert!(
            !got.iter()
                .any(|g| g.contains("by-the-model") || g.starts_with(".git")),
            "{got:?}"
        );
        // Nothing more was written: the next command reports nothing.
        w.start();
        assert!(w.finish().is_empty());
    }

    #[test]
    fn only_a_change_to_what_directories_hold_counts_and_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/f.txt"), "1\n").unwrap();
        let Some(mut w) = Written::new(&root) else {
            return;
        };
        let dirs = |w: &mut Written| {
            let mut d: Vec<PathBuf> = w.changes().unwrap().dirs.into_iter().collect();
            d.sort();
            d
        };
        // The first plan cannot be told: it walks.
        assert!(w.changes().is_none());
        assert!(dirs(&mut w).is_empty());
        // Writing a file's content changes no directory.
        fs::write(root.join("a/b/f.txt"), "2\n").unwrap();
        assert!(dirs(&mut w).is_empty());
        let (a, b) = (root.join("a"), root.join("a/b"));
        type Change<'a> = (&'a dyn Fn(&Path), Vec<PathBuf>);
        let changes: [Change; 5] = [
            (
                &|r| fs::write(r.join("a/b/.env"), "K=v\n").unwrap(),
                vec![b.clone()],
            ),
            (
                &|r| fs::rename(r.join("a/b/.env"), r.join("a/.env")).unwrap(),
                vec![a.clone(), b.clone()],
            ),
            (
                &|r| fs::hard_link(r.join("a/b/f.txt"), r.join("a/copy")).unwrap(),
                vec![a.clone()],
            ),
            // (A link count changes with no event to the directory.)
            (
                &|r| fs::remove_file(r.join("a/copy")).unwrap(),
                vec![a.clone()],
            ),
            (
                &|r| fs::create_dir(r.join("a/b/c")).unwrap(),
                vec![b.clone(), root.join("a/b/c")],
            ),
        ];
        for (change, want) in changes {
            change(&root);
            assert_eq!(dirs(&mut w), want);
            assert!(dirs(&mut w).is_empty());
        }
        // Whatever happens during a command counts for the next plan.
        w.start();
        fs::write(root.join("a/b/c/.env"), "K=v\n").unwrap();
        w.finish();
        assert_eq!(dirs(&mut w), vec![root.join("a/b/c")]);
        // Lost events: the next plan cannot be told.
        w.untold = true;
        assert!(w.changes().is_none());
    }

    #[test]
    fn lost_events_fall_back_to_change_times() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("a")).unwrap();
        let Some(mut w) = Written::new(&root) else {
            return;
        };
        w.start();
        w.lost = true;
        fs::write(root.join("a/late.txt"), "l\n").unwrap();
        assert!(w.finish().contains(&"a/late.txt".to_string()));
    }
}
