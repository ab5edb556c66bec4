//! `fs-list` (a directory as an indented tree) and `fs-find` (files whose
//! path matches a glob): the model's ways to see what is in the workspace
//! without reading files. Both skip what the ignore files exclude and cap
//! their output, saying how much was left out.

use std::fs;

use super::walk::{Glob, rel_to_root, resolve_existing, walker};
use crate::files::Workspace;
use crate::prim::ToolError;

/// How deep `fs-list` goes when the call does not say.
const DEFAULT_DEPTH: usize = 2;
/// The most entries `fs-list` shows.
const LIST_CAP: usize = 500;
/// The most paths `fs-find` shows.
const FIND_CAP: usize = 500;

/// Lists the directory at `path` as a tree, `depth` levels deep (<= 0 means
/// the default, 2). The first line is the directory itself; each entry
/// below is indented two spaces per level, directories end in '/',
/// symbolic links show their target.
pub fn fs_list(ws: &Workspace, path: &str, depth: i64) -> Result<String, ToolError> {
    let target = resolve_existing(ws, path)?;
    if !target.is_dir {
        return Err(ToolError::NotADirectory {
            path: target.resolved.rel,
            next: "use fs-read to read it (or outline for its definitions)",
        });
    }
    let depth = usize::try_from(depth)
        .ok()
        .filter(|d| *d > 0)
        .unwrap_or(DEFAULT_DEPTH);
    let root = &target.resolved.real;
    let mut out = String::new();
    out.push_str(&dir_label(&target.resolved.rel));
    out.push('\n');
    let mut shown = 0usize;
    let mut left_out = 0usize;
    for entry in walker(ws, root).max_depth(Some(depth)).build() {
        // Unreadable entries (permissions, races) are skipped.
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        if shown == LIST_CAP {
            left_out += 1;
            continue;
        }
        shown += 1;
        let name = entry.file_name().to_string_lossy();
        let indent = "  ".repeat(entry.depth());
        let kind = entry.file_type();
        if kind.is_some_and(|t| t.is_dir()) {
            out.push_str(&format!("{indent}{name}/\n"));
        } else if kind.is_some_and(|t| t.is_symlink()) {
            let to = fs::read_link(entry.path())
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "?".to_string());
            out.push_str(&format!("{indent}{name} -> {to}\n"));
        } else {
            out.push_str(&format!("{indent}{name}\n"));
        }
    }
    if shown == 0 {
        out.push_str("  (empty, or everything in it is ignored)\n");
    }
    if left_out > 0 {
        out.push_str(&format!(
            "… {left_out} more entries not shown (the listing stops at {LIST_CAP}); list a subdirectory or use a lower depth\n"
        ));
    }
    Ok(out)
}

/// Finds the files under `path` ("" = the workspace root) whose path
/// relative to `path` matches the glob `pattern`. Prints one path per line,
/// relative to the workspace root, sorted.
pub fn fs_find(ws: &Workspace, pattern: &str, path: &str) -> Result<String, ToolError> {
    let glob = Glob::new(pattern)?;
    let target = resolve_existing(ws, path)?;
    if !target.is_dir {
        return Err(ToolError::NotADirectory {
            path: target.resolved.rel,
            next: "fs-find searches a directory — give its parent, or fs-read the file",
        });
    }
    let base = &target.resolved.real;
    let mut found = Vec::new();
    for entry in walker(ws, base).build() {
        let Ok(entry) = entry else { continue };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let is_file = kind.is_file()
            || (kind.is_symlink() && fs::metadata(entry.path()).is_ok_and(|m| m.is_file()));
        if !is_file {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(base) else {
            continue;
        };
        if glob.matches_file(rel) {
            found.push(rel_to_root(ws, entry.path()));
        }
    }
    if found.is_empty() {
        return Ok(format!("no files match {}\n", pattern.trim()));
    }
    found.sort();
    let total = found.len();
    let mut out = String::new();
    for p in found.iter().take(FIND_CAP) {
        out.push_str(p);
        out.push('\n');
    }
    if total > FIND_CAP {
        out.push_str(&format!(
            "… {} more files not shown ({total} match); narrow the pattern or the path\n",
            total - FIND_CAP
        ));
    }
    Ok(out)
}

/// How the listed directory is named on the first line.
fn dir_label(rel: &str) -> String {
    if rel == "." {
        "./".to_string()
    } else {
        format!("{rel}/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        write(r, ".gitignore", "target/\n*.log\n/build\n");
        write(r, "Cargo.toml", "");
        write(r, "src/main.rs", "");
        write(r, "src/lib.rs", "");
        write(r, "src/sub/deep/x.rs", "");
        write(r, "src/debug.log", "");
        write(r, "target/out.rs", "");
        write(r, "build/gen.rs", "");
        write(r, "docs/build/keep.rs", "");
        write(r, ".hidden/h.rs", "");
        write(r, ".git/HEAD", "ref: refs/heads/main\n");
        write(r, ".nib/config.toml", "");
        let ws = Workspace::open(r).unwrap();
        (dir, ws)
    }

    #[test]
    fn list_tree_respects_ignores() {
        let (_dir, ws) = setup();
        let out = fs_list(&ws, ".", 0).unwrap();
        assert_eq!(
            out,
            "./\n  .gitignore\n  .hidden/\n    h.rs\n  Cargo.toml\n  docs/\n    build/\n  src/\n    lib.rs\n    main.rs\n    sub/\n"
        );
        let out = fs_list(&ws, "src", 5).unwrap();
        assert_eq!(
            out,
            "src/\n  lib.rs\n  main.rs\n  sub/\n    deep/\n      x.rs\n"
        );
        // The root's rules apply below it; an anchored rule stays anchored.
        let out = fs_list(&ws, "docs", 3).unwrap();
        assert_eq!(out, "docs/\n  build/\n    keep.rs\n");
        // Naming an ignored directory lists it anyway.
        let out = fs_list(&ws, "target", 0).unwrap();
        assert_eq!(out, "target/\n  out.rs\n");
        // "" is the root.
        assert_eq!(fs_list(&ws, "", 1).unwrap().lines().next(), Some("./"));
    }

    #[test]
    fn list_nested_gitignore_and_symlink() {
        let (dir, ws) = setup();
        write(dir.path(), "src/.gitignore", "lib.rs\n");
        std::os::unix::fs::symlink("main.rs", dir.path().join("src/link.rs")).unwrap();
        let out = fs_list(&ws, "src", 1).unwrap();
        assert_eq!(
            out,
            "src/\n  .gitignore\n  link.rs -> main.rs\n  main.rs\n  sub/\n"
        );
        let out = fs_list(&ws, "src/sub", 1).unwrap();
        assert_eq!(out, "src/sub/\n  deep/\n");
    }

    #[test]
    fn list_errors() {
        let (_dir, ws) = setup();
        let err = fs_list(&ws, "src/main.rs", 0).unwrap_err();
        assert_eq!(err.kind(), "not_a_directory");
        let err = err.to_string();
        assert!(
            err.contains("is a file") && err.contains("fs-read"),
            "{err}"
        );
        let err = fs_list(&ws, "nope", 0).unwrap_err();
        assert_eq!(err.kind(), "missing");
        let err = err.to_string();
        assert!(err.starts_with("no such file or directory: nope"), "{err}");
        let err = fs_list(&ws, "..", 0).unwrap_err();
        assert_eq!(err.kind(), "path");
        let err = err.to_string();
        assert!(err.contains("outside the workspace"), "{err}");
        fs::create_dir(ws.root().join("empty")).unwrap();
        let out = fs_list(&ws, "empty", 0).unwrap();
        assert!(out.starts_with("empty/\n  (empty"), "{out}");
    }

    #[test]
    fn list_and_find_cap() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("many")).unwrap();
        for i in 0..600 {
            fs::write(dir.path().join(format!("many/f{i:03}.txt")), "").unwrap();
        }
        let ws = Workspace::open(dir.path()).unwrap();
        let out = fs_list(&ws, ".", 2).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1 + 500 + 1);
        assert_eq!(lines[1], "  many/");
        assert_eq!(lines[500], "    f498.txt");
        assert_eq!(
            lines[501],
            "… 101 more entries not shown (the listing stops at 500); list a subdirectory or use a lower depth"
        );
        let out = fs_find(&ws, "*.txt", "").unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 501);
        assert_eq!(lines[0], "many/f000.txt");
        assert_eq!(lines[499], "many/f499.txt");
        assert_eq!(
            lines[500],
            "… 100 more files not shown (600 match); narrow the pattern or the path"
        );
    }

    #[test]
    fn find_globs() {
        let (_dir, ws) = setup();
        assert_eq!(
            fs_find(&ws, "*.rs", "").unwrap(),
            ".hidden/h.rs\ndocs/build/keep.rs\nsrc/lib.rs\nsrc/main.rs\nsrc/sub/deep/x.rs\n"
        );
        assert_eq!(
            fs_find(&ws, "**/*.rs", "src").unwrap(),
            "src/lib.rs\nsrc/main.rs\nsrc/sub/deep/x.rs\n"
        );
        // Anchored to the searched directory.
        assert_eq!(
            fs_find(&ws, "*/x.rs", "src/sub").unwrap(),
            "src/sub/deep/x.rs\n"
        );
        assert_eq!(
            fs_find(&ws, "sub/*.rs", "src").unwrap(),
            "no files match sub/*.rs\n"
        );
        // Ignored files are not found; directories are not files.
        assert_eq!(fs_find(&ws, "*.log", "").unwrap(), "no files match *.log\n");
        assert_eq!(fs_find(&ws, "sub", "src").unwrap(), "no files match sub\n");
        assert_eq!(fs_find(&ws, "HEAD", "").unwrap(), "no files match HEAD\n");
    }

    #[test]
    fn find_errors() {
        let (_dir, ws) = setup();
        let err = fs_find(&ws, "src/*.{rs", "").unwrap_err().to_string();
        assert!(
            err.starts_with("invalid glob `src/*.{rs`: unclosed"),
            "{err}"
        );
        let err = fs_find(&ws, "*.rs", "src/main.rs").unwrap_err().to_string();
        assert!(err.contains("is a file"), "{err}");
        let err = fs_find(&ws, "*.rs", "../").unwrap_err().to_string();
        assert!(err.contains("outside the workspace"), "{err}");
    }
}
