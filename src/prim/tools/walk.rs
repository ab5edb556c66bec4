//! What the tree-walking tools share: resolving their path argument to an
//! existing directory or file, a gitignore-aware walker pinned to the
//! workspace, and the glob matcher `fs-find` and `index-grep` filter with.
//!
//! The walker honours `.gitignore`, `.ignore` and `.git/info/exclude` (and
//! the user's global git excludes), shows hidden files, and never enters
//! `.git/` or `.nib/`. Ignore files are read from the workspace root down to
//! the listed directory and no further up: what lies above the workspace is
//! not the workspace's business. A directory named explicitly is walked even
//! when an ignore rule covers it, as `ls` would.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::WalkBuilder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::files::{Resolved, Workspace, is_temp_name};
use crate::prim::ToolError;

/// Directories the walker never enters (unless asked to list one itself).
const SKIPPED_DIRS: [&str; 2] = [".git", ".nib"];

/// A path argument resolved to something that exists.
pub(super) struct Target {
    pub resolved: Resolved,
    pub is_dir: bool,
}

/// Resolves a path argument ("" means the workspace root) and checks that
/// something is there.
pub(super) fn resolve_existing(ws: &Workspace, path: &str) -> Result<Target, ToolError> {
    let path = if path.trim().is_empty() { "." } else { path };
    let resolved = ws.resolve(path)?;
    let meta = match fs::metadata(&resolved.real) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::NotFound { path: resolved.rel });
        }
        Err(source) => {
            return Err(ToolError::Io {
                path: resolved.rel,
                source,
            });
        }
    };
    Ok(Target {
        is_dir: meta.is_dir(),
        resolved,
    })
}

/// `path` relative to the workspace root with `/` separators, `.` for the
/// root itself. Paths the walker yields are always under the root; anything
/// else is shown as it is.
pub(super) fn rel_to_root(ws: &Workspace, path: &Path) -> String {
    match path.strip_prefix(ws.root()) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_string(),
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// A walker over `dir` (a real directory under the workspace root), sorted
/// by file name, gitignore-aware, hidden files shown, `.git/` and `.nib/`
/// skipped, and nib's own temp files (`*.nib-tmp-*`) hidden.
pub(super) fn walker(ws: &Workspace, dir: &Path) -> WalkBuilder {
    let above = Arc::new(ancestor_ignores(ws.root(), dir));
    let mut builder = WalkBuilder::new(dir);
    builder
        .hidden(false)
        .parents(false)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let name = entry.file_name().to_string_lossy();
            if SKIPPED_DIRS.contains(&name.as_ref()) {
                return false;
            }
            // A killed write's temp file is not part of the workspace.
            if !is_dir && is_temp_name(entry.file_name().as_encoded_bytes()) {
                return false;
            }
            !ignored_above(&above, entry.path(), is_dir)
        });
    builder
}

/// The ignore files between the workspace root and `dir` (the root
/// included, `dir` itself excluded: the walker reads those), deepest first,
/// each matching relative to its own directory.
fn ancestor_ignores(root: &Path, dir: &Path) -> Vec<Gitignore> {
    let Ok(rest) = dir.strip_prefix(root) else {
        return Vec::new();
    };
    if rest.as_os_str().is_empty() {
        return Vec::new();
    }
    let mut dirs: Vec<PathBuf> = vec![root.to_path_buf()];
    let mut cur = root.to_path_buf();
    let components: Vec<_> = rest.components().collect();
    for c in &components[..components.len().saturating_sub(1)] {
        cur.push(c);
        dirs.push(cur.clone());
    }
    let mut found = Vec::new();
    // Lowest precedence first; reversed below so the deepest wins.
    let exclude = root.join(".git/info/exclude");
    if exclude.is_file() {
        found.push(one_ignore_file(root, &exclude));
    }
    for d in &dirs {
        for name in [".gitignore", ".ignore"] {
            let file = d.join(name);
            if file.is_file() {
                found.push(one_ignore_file(d, &file));
            }
        }
    }
    found.reverse();
    found
}

/// A matcher for one ignore file whose patterns are relative to `base`. A
/// bad line in it is skipped, as git does.
fn one_ignore_file(base: &Path, file: &Path) -> Gitignore {
    let mut builder = GitignoreBuilder::new(base);
    let _partial = builder.add(file);
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// Whether the ignore files above the walked directory exclude `path`:
/// the deepest file with an opinion decides.
fn ignored_above(above: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    for ig in above {
        let m = ig.matched(path, is_dir);
        if m.is_ignore() {
            return true;
        }
        if m.is_whitelist() {
            return false;
        }
    }
    false
}

/// A compiled glob for `fs-find` and `index-grep`, with gitignore
/// semantics: a pattern without '/' matches the file name at any depth,
/// one with '/' matches the path relative to the searched directory, `**`
/// spans directories.
#[derive(Debug)]
pub(super) struct Glob {
    matcher: Gitignore,
}

impl Glob {
    pub fn new(pattern: &str) -> Result<Glob, ToolError> {
        let trimmed = pattern.trim();
        if trimmed.is_empty() {
            return Err(ToolError::BadArgument(
                "empty glob; give a pattern such as \"*.rs\" or \"src/**/test_*.py\"".to_string(),
            ));
        }
        if trimmed.starts_with('!') {
            return Err(ToolError::BadArgument(format!(
                "glob `{trimmed}` starts with '!', but negated globs are not supported; give the pattern the files should match"
            )));
        }
        let mut line = trimmed.strip_prefix("./").unwrap_or(trimmed).to_string();
        if line.starts_with('#') {
            // A leading '#' would make the line a gitignore comment.
            line.insert(0, '\\');
        }
        if line.ends_with('/') {
            // A directory: match every file under it.
            line.push_str("**");
        }
        let mut builder = GitignoreBuilder::new("");
        builder
            .add_line(None, &line)
            .map_err(|e| bad_glob(trimmed, &e))?;
        let matcher = builder.build().map_err(|e| bad_glob(trimmed, &e))?;
        Ok(Glob { matcher })
    }

    /// Whether the file at `rel` (relative to the searched directory)
    /// matches.
    pub fn matches_file(&self, rel: &Path) -> bool {
        self.matcher.matched(rel, false).is_ignore()
    }
}

fn bad_glob(pattern: &str, err: &ignore::Error) -> ToolError {
    let msg = err.to_string();
    // "error parsing glob '<glob>': <problem>": the glob is named already.
    let problem = msg.split_once("': ").map_or(msg.as_str(), |(_, p)| p);
    ToolError::BadArgument(format!(
        "invalid glob `{pattern}`: {problem}; fix the pattern (for example \"*.rs\", \"src/**/*.py\", \"*.{{js,ts}}\")"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_semantics() {
        let g = Glob::new("*.rs").unwrap();
        assert!(g.matches_file(Path::new("a.rs")));
        assert!(g.matches_file(Path::new("src/deep/a.rs")));
        assert!(!g.matches_file(Path::new("a.rs.txt")));
        let g = Glob::new("src/*.rs").unwrap();
        assert!(g.matches_file(Path::new("src/a.rs")));
        assert!(!g.matches_file(Path::new("src/x/a.rs")));
        assert!(!g.matches_file(Path::new("other/src/a.rs")));
        let g = Glob::new("src/**/test_*.py").unwrap();
        assert!(g.matches_file(Path::new("src/test_a.py")));
        assert!(g.matches_file(Path::new("src/x/y/test_a.py")));
        let g = Glob::new("./*.{js,ts}").unwrap();
        assert!(g.matches_file(Path::new("a.ts")));
        assert!(g.matches_file(Path::new("a.js")));
        let g = Glob::new("src/").unwrap();
        assert!(g.matches_file(Path::new("src/x/a.c")));
        assert!(!g.matches_file(Path::new("a.c")));
    }

    #[test]
    fn glob_errors() {
        let err = Glob::new("*.{rs").unwrap_err().to_string();
        assert!(
            err.starts_with("invalid glob `*.{rs`: unclosed alternate group; missing '}'"),
            "{err}"
        );
        let err = Glob::new("a[z-a]").unwrap_err();
        assert_eq!(err.kind(), "invalid");
        let err = err.to_string();
        assert!(
            err.starts_with("invalid glob `a[z-a]`: invalid range"),
            "{err}"
        );
        assert!(
            Glob::new("")
                .unwrap_err()
                .to_string()
                .starts_with("empty glob")
        );
        assert!(
            Glob::new("!*.rs")
                .unwrap_err()
                .to_string()
                .contains("negated")
        );
    }
}
