//! The pin: `Workspace` holds the canonical workspace root and turns every
//! path a user or model gives into a `Resolved` real location, following
//! every symlink and folding `..`, and refusing anything that lands outside
//! the root.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::FileError;

/// How many symlinks one resolution may follow before it is called a loop
/// (the same limit Linux uses).
const MAX_SYMLINK_HOPS: usize = 40;

/// The workspace root every path is pinned to. The root is canonical: it
/// has no symlinks, no `.` and no `..` in it.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    /// Where a container the workspace is mounted in sees the root
    /// (`/testbed`): an absolute path under it names the same file.
    mount: Option<PathBuf>,
}

/// A path resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The path exactly as given.
    pub given: String,
    /// The real location: absolute, every symlink followed, `..` folded.
    /// Read and write this, never `given`.
    pub real: PathBuf,
    /// `real` relative to the root, with `/` separators; `.` for the root.
    pub rel: String,
    /// A symlink (the path itself or one of its ancestors) was followed.
    pub via_symlink: bool,
    /// Something exists at `real`.
    pub exists: bool,
}

/// One step still to walk while resolving.
enum Step {
    Parent,
    Name(OsString),
}

impl Workspace {
    /// Pins the workspace at `root`, which must be an existing directory.
    pub fn open(root: &Path) -> Result<Workspace, FileError> {
        let canonical = fs::canonicalize(root).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => FileError::RootNotFound {
                root: root.to_path_buf(),
            },
            _ => FileError::Io {
                action: "open the workspace root",
                path: root.display().to_string(),
                source: e,
            },
        })?;
        if !canonical.is_dir() {
            return Err(FileError::RootNotDirectory {
                root: root.to_path_buf(),
            });
        }
        Ok(Workspace {
            root: canonical,
            mount: None,
        })
    }

    /// This workspace, with absolute paths under `at` (where a container
    /// it is bind-mounted in sees it) taken as paths under the root: what
    /// a command in that container names `/testbed/x` is `x` here.
    pub fn with_mount(mut self, at: impl Into<PathBuf>) -> Workspace {
        self.mount = Some(at.into()).filter(|m: &PathBuf| m.is_absolute() && m != Path::new("/"));
        self
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (relative to the root, or absolute) to where it
    /// really is. Every symlink is followed, including dangling ones (their
    /// target is where a write would land), `..` is folded after the
    /// symlinks before it are followed, and the parts that do not exist yet
    /// are folded lexically. The result must lie under the root.
    pub fn resolve(&self, path: &str) -> Result<Resolved, FileError> {
        if path.trim().is_empty() {
            return Err(FileError::EmptyPath);
        }
        if path.contains('\0') {
            return Err(bad(
                path,
                "contains a NUL byte; give a plain path relative to the workspace root",
            ));
        }
        let (real, via_symlink) = self.walk(path)?;
        if !real.starts_with(&self.root) {
            return Err(FileError::OutsideWorkspace {
                given: path.to_string(),
                real,
                root: self.root.clone(),
            });
        }
        let rel = self.rel_of(&real).ok_or_else(|| {
            bad(
                path,
                "resolves to a name that is not valid UTF-8; nib works with UTF-8 file names only — rename it first",
            )
        })?;
        let exists = fs::symlink_metadata(&real).is_ok();
        Ok(Resolved {
            given: path.to_string(),
            real,
            rel,
            via_symlink,
            exists,
        })
    }

    /// `real` relative to the root with `/` separators (`.` for the root
    /// itself), or None when it is not under the root or not UTF-8.
    fn rel_of(&self, real: &Path) -> Option<String> {
        let rest = real.strip_prefix(&self.root).ok()?;
        let rel = rest.to_str()?;
        Some(if rel.is_empty() {
            ".".to_string()
        } else {
            rel.to_string()
        })
    }

    /// How to show `p` in a message: relative to the root when under it.
    fn shown(&self, p: &Path) -> String {
        self.rel_of(p).unwrap_or_else(|| p.display().to_string())
    }

    /// Walks the path one component at a time, like realpath(3), but
    /// without requiring the tail to exist. Returns the real path and
    /// whether a symlink was followed.
    fn walk(&self, given: &str) -> Result<(PathBuf, bool), FileError> {
        let given_path = Path::new(given);
        // An absolute path that names the root lexically starts there, so
        // the root's own spelling is not counted as following a symlink.
        let (mut cur, start): (PathBuf, &Path) = if given_path.is_absolute() {
            let mounted = self
                .mount
                .as_ref()
                .and_then(|m| given_path.strip_prefix(m).ok());
            match (given_path.strip_prefix(&self.root), mounted) {
                (Ok(rest), _) | (Err(_), Some(rest)) => (self.root.clone(), rest),
                (Err(_), None) => (PathBuf::from("/"), given_path),
            }
        } else {
            (self.root.clone(), given_path)
        };
        let mut pending: Vec<Step> = Vec::new();
        push_steps(&mut pending, start);
        let mut hops = 0;
        let mut via_symlink = false;
        while let Some(step) = pending.pop() {
            let name = match step {
                Step::Parent => {
                    cur.pop();
                    continue;
                }
                Step::Name(name) => name,
            };
            let next = cur.join(&name);
            match fs::symlink_metadata(&next) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Err(bad(
                            given,
                            "too many levels of symbolic links (a symlink loop?); give the real path of the file",
                        ));
                    }
                    let target = fs::read_link(&next).map_err(|e| FileError::Io {
                        action: "read the symlink",
                        path: self.shown(&next),
                        source: e,
                    })?;
                    via_symlink = true;
                    if target.is_absolute() {
                        cur = PathBuf::from("/");
                    }
                    push_steps(&mut pending, &target);
                }
                Ok(_) => cur = next,
                Err(e) if e.kind() == io::ErrorKind::NotFound => cur = next,
                Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                    return Err(bad(
                        given,
                        &format!(
                            "{} is a file, not a directory; give a path whose directories are directories",
                            self.shown(&cur)
                        ),
                    ));
                }
                Err(e) => {
                    return Err(FileError::Io {
                        action: "resolve",
                        path: given.to_string(),
                        source: e,
                    });
                }
            }
        }
        Ok((cur, via_symlink))
    }
}

/// Pushes the components of `p` onto the stack so the first one is popped
/// first. Root and `.` components are dropped (the caller has already
/// placed `cur` at `/` for absolute paths).
fn push_steps(pending: &mut Vec<Step>, p: &Path) {
    let steps: Vec<Step> = p
        .components()
        .filter_map(|c| match c {
            Component::ParentDir => Some(Step::Parent),
            Component::Normal(n) => Some(Step::Name(n.to_os_string())),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    pending.extend(steps.into_iter().rev());
}

fn bad(given: &str, detail: &str) -> FileError {
    FileError::BadPath {
        given: given.to_string(),
        detail: detail.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws_dir = dir.path().join("ws");
        fs::create_dir_all(ws_dir.join("src/sub")).unwrap();
        fs::write(ws_dir.join("src/a.rs"), "fn a() {}\n").unwrap();
        fs::write(dir.path().join("outside.txt"), "secret\n").unwrap();
        let ws = Workspace::open(&ws_dir).unwrap();
        (dir, ws)
    }

    #[test]
    fn open_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert!(matches!(
            Workspace::open(&missing),
            Err(FileError::RootNotFound { .. })
        ));
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        let err = Workspace::open(&file).unwrap_err();
        assert!(matches!(err, FileError::RootNotDirectory { .. }));
        assert!(err.to_string().contains("not a directory"));
    }

    #[test]
    fn open_canonicalizes_root() {
        let (dir, ws) = setup();
        let link = dir.path().join("wslink");
        symlink(ws.root(), &link).unwrap();
        let via = Workspace::open(&dir.path().join("ws/src/..")).unwrap();
        assert_eq!(via.root(), ws.root());
        let via = Workspace::open(&link).unwrap();
        assert_eq!(via.root(), ws.root());
    }

    #[test]
    fn plain_relative() {
        let (_dir, ws) = setup();
        let r = ws.resolve("src/a.rs").unwrap();
        assert_eq!(r.real, ws.root().join("src/a.rs"));
        assert_eq!(r.rel, "src/a.rs");
        assert_eq!(r.given, "src/a.rs");
        assert!(r.exists);
        assert!(!r.via_symlink);
    }

    #[test]
    fn dot_and_dotdot_fold() {
        let (_dir, ws) = setup();
        let r = ws.resolve("./src/sub/../a.rs").unwrap();
        assert_eq!(r.rel, "src/a.rs");
        assert!(r.exists);
        let r = ws.resolve("src/..").unwrap();
        assert_eq!(r.rel, ".");
        assert_eq!(r.real, ws.root());
        // `..` through a part that does not exist folds lexically.
        let r = ws.resolve("nope/deeper/../../src/a.rs").unwrap();
        assert_eq!(r.rel, "src/a.rs");
        assert!(r.exists);
    }

    #[test]
    fn dotdot_escaping_is_refused() {
        let (dir, ws) = setup();
        let err = ws.resolve("../outside.txt").unwrap_err();
        match &err {
            FileError::OutsideWorkspace { given, real, root } => {
                assert_eq!(given, "../outside.txt");
                assert_eq!(
                    real,
                    &dir.path().canonicalize().unwrap().join("outside.txt")
                );
                assert_eq!(root, ws.root());
            }
            other => panic!("unexpected {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.starts_with("path `../outside.txt` resolves to "),
            "{msg}"
        );
        assert!(msg.contains("outside the workspace"), "{msg}");
        assert!(msg.contains("only files under the workspace"), "{msg}");
        // Out and back in is fine.
        let r = ws.resolve("../ws/src/a.rs").unwrap();
        assert_eq!(r.rel, "src/a.rs");
    }

    #[test]
    fn a_container_mount_names_the_same_files() {
        let (_dir, ws) = setup();
        assert!(ws.resolve("/testbed/src/a.rs").is_err());
        let ws = ws.with_mount("/testbed");
        let r = ws.resolve("/testbed/src/a.rs").unwrap();
        assert_eq!((r.rel.as_str(), r.exists), ("src/a.rs", true));
        assert_eq!(r.real, ws.root().join("src/a.rs"));
        assert_eq!(ws.resolve("/testbed").unwrap().rel, ".");
        // Only under the mount, and never out of the root through it.
        assert!(ws.resolve("/testbedx/src/a.rs").is_err());
        let err = ws.resolve("/testbed/../outside.txt").unwrap_err();
        assert!(matches!(err, FileError::OutsideWorkspace { .. }), "{err:?}");
        assert!(ws.clone().with_mount("/").resolve("/etc/passwd").is_err());
    }

    #[test]
    fn symlink_inside_to_inside() {
        let (_dir, ws) = setup();
        symlink("src/a.rs", ws.root().join("link.rs")).unwrap();
        let r = ws.resolve("link.rs").unwrap();
        assert_eq!(r.real, ws.root().join("src/a.rs"));
        assert_eq!(r.rel, "src/a.rs");
        assert!(r.via_symlink);
        assert!(r.exists);
        // A symlinked directory as an ancestor.
        symlink(ws.root().join("src"), ws.root().join("srclink")).unwrap();
        let r = ws.resolve("srclink/a.rs").unwrap();
        assert_eq!(r.rel, "src/a.rs");
        assert!(r.via_symlink);
        // `..` after a symlinked dir goes to the parent of the target.
        symlink("src/sub", ws.root().join("sublink")).unwrap();
        let r = ws.resolve("sublink/../a.rs").unwrap();
        assert_eq!(r.rel, "src/a.rs");
    }

    #[test]
    fn symlink_pointing_outside_is_refused() {
        let (dir, ws) = setup();
        symlink(dir.path().join("outside.txt"), ws.root().join("notes.md")).unwrap();
        let err = ws.resolve("notes.md").unwrap_err();
        assert!(matches!(err, FileError::OutsideWorkspace { .. }), "{err:?}");
        // Relative link that climbs out, via a directory.
        symlink("../..", ws.root().join("src/up")).unwrap();
        let err = ws.resolve("src/up/outside.txt").unwrap_err();
        assert!(matches!(err, FileError::OutsideWorkspace { .. }), "{err:?}");
        // A dangling link whose target would be created outside.
        symlink(dir.path().join("new.txt"), ws.root().join("dangling")).unwrap();
        let err = ws.resolve("dangling").unwrap_err();
        assert!(matches!(err, FileError::OutsideWorkspace { .. }), "{err:?}");
    }

    #[test]
    fn dangling_symlink_inside_resolves_to_target() {
        let (_dir, ws) = setup();
        symlink("src/new.rs", ws.root().join("d.rs")).unwrap();
        let r = ws.resolve("d.rs").unwrap();
        assert_eq!(r.rel, "src/new.rs");
        assert!(!r.exists);
        assert!(r.via_symlink);
    }

    #[test]
    fn symlink_loop_is_an_error() {
        let (_dir, ws) = setup();
        symlink("b", ws.root().join("a")).unwrap();
        symlink("a", ws.root().join("b")).unwrap();
        let err = ws.resolve("a").unwrap_err();
        assert!(matches!(err, FileError::BadPath { .. }), "{err:?}");
        assert!(err.to_string().contains("symbolic links"));
    }

    #[test]
    fn nonexistent_nested_path() {
        let (_dir, ws) = setup();
        let r = ws.resolve("new/dir/./file.txt").unwrap();
        assert_eq!(r.real, ws.root().join("new/dir/file.txt"));
        assert_eq!(r.rel, "new/dir/file.txt");
        assert!(!r.exists);
        assert!(!r.via_symlink);
    }

    #[test]
    fn absolute_path_inside_and_outside() {
        let (dir, ws) = setup();
        let abs = ws.root().join("src/a.rs");
        let r = ws.resolve(abs.to_str().unwrap()).unwrap();
        assert_eq!(r.rel, "src/a.rs");
        assert!(!r.via_symlink);
        let err = ws.resolve("/etc/passwd").unwrap_err();
        assert!(matches!(err, FileError::OutsideWorkspace { .. }));
        let sneaky = format!("{}/../outside.txt", ws.root().display());
        assert!(matches!(
            ws.resolve(&sneaky),
            Err(FileError::OutsideWorkspace { .. })
        ));
        // An absolute path through a symlink to the root is inside.
        let link = dir.path().join("wslink");
        symlink(ws.root(), &link).unwrap();
        let r = ws.resolve(link.join("src/a.rs").to_str().unwrap()).unwrap();
        assert_eq!(r.rel, "src/a.rs");
        assert!(r.via_symlink);
    }

    #[test]
    fn empty_and_bad_paths() {
        let (_dir, ws) = setup();
        let err = ws.resolve("").unwrap_err();
        assert!(matches!(err, FileError::EmptyPath));
        assert!(err.to_string().contains("relative to the workspace root"));
        assert!(matches!(ws.resolve("  "), Err(FileError::EmptyPath)));
        assert!(matches!(ws.resolve("a\0b"), Err(FileError::BadPath { .. })));
        let err = ws.resolve("src/a.rs/x").unwrap_err();
        assert!(matches!(err, FileError::BadPath { .. }), "{err:?}");
        assert!(err.to_string().contains("src/a.rs is a file"), "{err}");
    }
}
