//! `index-grep`: a regular-expression search over file contents, printed as
//! `path:line:text`. It walks like `fs-find` (ignore files honoured, an
//! optional glob filter), skips what cannot be text (binary, over 5 MB)
//! and caps what it prints. A file that is not UTF-8 is searched as
//! `fs-read` shows it (`files::encoding`), and the output names the
//! encoding assumed, so a line copied from it is what `fs-edit` matches.

use std::fs;
use std::path::Path;

use regex::Regex;

use super::walk::{Glob, rel_to_root, resolve_existing, walker};
use crate::files::{Encoding, Workspace};
use crate::prim::ToolError;

/// The most matching lines shown.
const MATCH_CAP: usize = 200;
/// Longer lines are cut to about this many characters.
const LINE_CAP: usize = 300;
/// Files larger than this are not searched.
const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;
/// A NUL byte this far into a file marks it binary (as git decides).
const BINARY_WINDOW: usize = 8000;

/// Searches the files under `path` ("" = the workspace root; a file is
/// searched alone) for lines matching `pattern`, keeping only files whose
/// path relative to `path` matches `glob` when one is given.
pub fn index_grep(
    ws: &Workspace,
    pattern: &str,
    path: &str,
    glob: &str,
) -> Result<String, ToolError> {
    index_grep_except(ws, pattern, path, glob, &|_| false)
}

/// `index_grep` leaving out the files `protected` names (workspace paths):
/// a search's match or no match is an answer about a secret store's
/// content, so many searches would spell it out; fs-read shows such a
/// file with its values as handles.
pub fn index_grep_except(
    ws: &Workspace,
    pattern: &str,
    path: &str,
    glob: &str,
    protected: &dyn Fn(&str) -> bool,
) -> Result<String, ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::BadArgument(
            "empty pattern; give a regular expression to search for".to_string(),
        ));
    }
    let re = Regex::new(pattern).map_err(|e| {
        ToolError::BadArgument(format!(
            "invalid regular expression `{pattern}`: {e}\nfix the pattern (Rust regex syntax; escape ( ) [ ] {{ }} . * + ? | ^ $ \\ with a backslash to match them literally)"
        ))
    })?;
    let glob = if glob.trim().is_empty() {
        None
    } else {
        Some(Glob::new(glob)?)
    };
    let target = resolve_existing(ws, path)?;
    let mut found = Found::default();
    if target.is_dir {
        let base = &target.resolved.real;
        for entry in walker(ws, base).build() {
            let Ok(entry) = entry else { continue };
            // Symbolic links are not followed: their target may lie outside
            // the workspace, or be searched twice.
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if let Some(glob) = &glob {
                match entry.path().strip_prefix(base) {
                    Ok(rel) if glob.matches_file(rel) => {}
                    _ => continue,
                }
            }
            let rel = rel_to_root(ws, entry.path());
            if protected(&rel) {
                found.protected += 1;
                continue;
            }
            let (text, encoding) = match load(entry.path()) {
                Ok(loaded) => loaded,
                Err(_) => continue,
            };
            found.search(&re, &rel, &text, encoding);
        }
    } else {
        // A file named explicitly is searched even if ignored, and says why
        // when it cannot be.
        let rel = &target.resolved.rel;
        if protected(rel) {
            return Err(ToolError::NotSearchable {
                path: rel.clone(),
                why: "is a secret store, which index-grep does not search (each match would tell its content); read it with fs-read, which shows its values as handles",
            });
        }
        let (text, encoding) =
            load(&target.resolved.real).map_err(|why| ToolError::NotSearchable {
                path: rel.clone(),
                why,
            })?;
        found.search(&re, rel, &text, encoding);
    }
    let skipped = match found.protected {
        0 => String::new(),
        n => format!("note: {n} secret store(s) (.env and the like) were not searched\n"),
    };
    if found.total == 0 {
        return Ok(format!("no matches for {pattern}\n{skipped}"));
    }
    let mut out = found.shown;
    out.push_str(&skipped);
    for (rel, encoding) in &found.encodings {
        out.push_str(&format!(
            "note: {rel} is not UTF-8: read as {}; its lines are shown as fs-read shows them and fs-edit matches them\n",
            encoding.name()
        ));
    }
    if found.total > MATCH_CAP {
        out.push_str(&format!(
            "… {} more matches not shown; narrow the pattern or the path\n",
            found.total - MATCH_CAP
        ));
    }
    Ok(out)
}

/// Reads a file as text (in the encoding `fs-read` would assume), or says
/// why it is not searched.
fn load(path: &Path) -> Result<(String, Encoding), &'static str> {
    let meta = fs::metadata(path).map_err(|_| "could not be read; check that it is accessible")?;
    if !meta.is_file() {
        return Err("is not a regular file; give a directory or a text file");
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err("is larger than 5 MB and is not searched; use fs-read with offset and limit");
    }
    let bytes = fs::read(path).map_err(|_| "could not be read; check that it is accessible")?;
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_WINDOW)]).is_some() {
        return Err("looks binary (it has a NUL byte) and is not searched");
    }
    Ok(Encoding::decode(bytes))
}

/// The matches so far: the first `MATCH_CAP` printed, the rest counted.
#[derive(Default)]
struct Found {
    shown: String,
    total: usize,
    /// Files with a shown match that are not UTF-8, and how they were read.
    encodings: Vec<(String, Encoding)>,
    /// Secret stores left out.
    protected: usize,
}

impl Found {
    fn search(&mut self, re: &Regex, rel: &str, text: &str, encoding: Encoding) {
        for (i, line) in text.lines().enumerate() {
            let Some(m) = re.find(line) else { continue };
            self.total += 1;
            if self.total <= MATCH_CAP
                && encoding != Encoding::Utf8
                && self.encodings.last().is_none_or(|(r, _)| r != rel)
            {
                self.encodings.push((rel.to_string(), encoding));
            }
            if self.total <= MATCH_CAP {
                let shown = clip_line(line, m.start(), m.end());
                self.shown.push_str(&format!("{rel}:{}:{shown}\n", i + 1));
            }
        }
    }
}

/// A line cut to about `LINE_CAP` characters with "…" where it was cut,
/// keeping the match in view: the head of the line when the match lies in
/// it, otherwise a window around the match.
fn clip_line(line: &str, start: usize, end: usize) -> String {
    let chars = line.chars().count();
    if chars <= LINE_CAP {
        return line.to_string();
    }
    let match_end_chars = line[..end].chars().count();
    if match_end_chars <= LINE_CAP {
        let head: String = line.chars().take(LINE_CAP).collect();
        return format!("{head}…");
    }
    let match_start_chars = line[..start].chars().count();
    let from = match_start_chars.saturating_sub(LINE_CAP / 3);
    let window: String = line.chars().skip(from).take(LINE_CAP).collect();
    let tail = if from + LINE_CAP < chars { "…" } else { "" };
    format!("…{window}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, bytes: &[u8]) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        write(r, ".gitignore", b"*.log\nvendor/\n");
        write(
            r,
            "src/a.rs",
            b"fn alpha() {}\nfn beta() {}\n// alpha again\n",
        );
        write(r, "src/b.py", b"def alpha():\n    pass\n");
        write(r, "app.log", b"alpha in a log\n");
        write(r, "vendor/v.rs", b"fn alpha() {}\n");
        write(r, "bin.dat", b"alpha\0binary\n");
        write(r, "latin1.txt", b"alpha caf\xe9\n");
        write(r, ".git/config", b"alpha\n");
        let ws = Workspace::open(r).unwrap();
        (dir, ws)
    }

    #[test]
    fn finds_lines_and_skips_ignored_and_binary() {
        let (_dir, ws) = setup();
        let all = index_grep(&ws, "alpha", "", "").unwrap();
        let mut lines: Vec<&str> = all.lines().collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            [
                "latin1.txt:1:alpha café",
                "note: latin1.txt is not UTF-8: read as Latin-1 (ISO-8859-1); its lines are shown as fs-read shows them and fs-edit matches them",
                "src/a.rs:1:fn alpha() {}",
                "src/a.rs:3:// alpha again",
                "src/b.py:1:def alpha():",
            ]
        );
        assert_eq!(
            index_grep(&ws, r"^fn \w+", "src", "").unwrap(),
            "src/a.rs:1:fn alpha() {}\nsrc/a.rs:2:fn beta() {}\n"
        );
        assert_eq!(
            index_grep(&ws, "alpha", "", "*.py").unwrap(),
            "src/b.py:1:def alpha():\n"
        );
        assert_eq!(
            index_grep(&ws, "alpha", "src/a.rs", "").unwrap(),
            "src/a.rs:1:fn alpha() {}\nsrc/a.rs:3:// alpha again\n"
        );
        // An ignored file named explicitly is searched.
        assert_eq!(
            index_grep(&ws, "alpha", "app.log", "").unwrap(),
            "app.log:1:alpha in a log\n"
        );
        assert_eq!(
            index_grep(&ws, "gamma", "", "").unwrap(),
            "no matches for gamma\n"
        );
    }

    #[test]
    fn explicit_unsearchable_files_say_why() {
        let (_dir, ws) = setup();
        let err = index_grep(&ws, "alpha", "bin.dat", "").unwrap_err();
        assert_eq!(err.kind(), "not_text");
        let err = err.to_string();
        assert_eq!(
            err,
            "bin.dat looks binary (it has a NUL byte) and is not searched"
        );
        // Not UTF-8 is searched as fs-read reads it, and says how.
        assert_eq!(
            index_grep(&ws, "café", "latin1.txt", "").unwrap(),
            "latin1.txt:1:alpha café\nnote: latin1.txt is not UTF-8: read as Latin-1 (ISO-8859-1); its lines are shown as fs-read shows them and fs-edit matches them\n"
        );
        assert_eq!(
            index_grep(&ws, "beta", "latin1.txt", "").unwrap(),
            "no matches for beta\n"
        );
        let err = index_grep(&ws, "alpha", "missing", "")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("no such file or directory"), "{err}");
        let err = index_grep(&ws, "alpha", "../x", "")
            .unwrap_err()
            .to_string();
        assert!(err.contains("outside the workspace"), "{err}");
    }

    #[test]
    fn bad_patterns() {
        let (_dir, ws) = setup();
        let err = index_grep(&ws, "fn (", "", "").unwrap_err().to_string();
        assert!(
            err.starts_with("invalid regular expression `fn (`: "),
            "{err}"
        );
        assert!(err.contains("unclosed group"), "{err}");
        let err = index_grep(&ws, "a", "", "*.{x").unwrap_err().to_string();
        assert!(err.starts_with("invalid glob"), "{err}");
        assert!(
            index_grep(&ws, "", "", "")
                .unwrap_err()
                .to_string()
                .starts_with("empty pattern")
        );
    }

    #[test]
    fn caps_matches_and_long_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for i in 0..250 {
            text.push_str(&format!("hit {i}\n"));
        }
        write(dir.path(), "a.txt", text.as_bytes());
        let long = format!("{}needle{}\n", "x".repeat(1000), "y".repeat(1000));
        let short_head = format!("needle{}\n", "é".repeat(400));
        write(
            dir.path(),
            "b.txt",
            format!("{long}{short_head}").as_bytes(),
        );
        let ws = Workspace::open(dir.path()).unwrap();
        let out = index_grep(&ws, "hit", "", "").unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 201);
        assert_eq!(lines[199], "a.txt:200:hit 199");
        assert_eq!(
            lines[200],
            "… 50 more matches not shown; narrow the pattern or the path"
        );
        let out = index_grep(&ws, "needle", "b.txt", "").unwrap();
        let lines: Vec<&str> = out.lines().collect();
        let expect = format!("b.txt:1:…{}needle{}…", "x".repeat(100), "y".repeat(194));
        assert_eq!(lines[0], expect);
        let expect = format!("b.txt:2:needle{}…", "é".repeat(294));
        assert_eq!(lines[1], expect);
    }
}
