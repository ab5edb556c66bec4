//! Parsed format items as per-file operations for the engine.
//!
//! Pure: whether a file exists is asked of the caller (SEARCH/REPLACE's
//! empty SEARCH creates a missing file and appends to an existing one);
//! nothing is read or written here. Every file gets one [`FileChange`], in
//! the order the input first names it; the caller validates every change in
//! memory before writing any.

use super::{Block, Chunk, DiffFile, FormatError, PatchOp};
use crate::edit::{Edit, Hinted, Near, apply_hinted};

/// What to do to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path as the input wrote it (relative to the workspace).
    pub path: String,
    pub kind: ChangeKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// Create a file that must not exist yet, with this content.
    Create(String),
    /// Delete an existing file.
    Delete,
    /// Apply these edits, in order, to the existing file.
    Edit(Vec<Hinted>),
    /// Apply these edits (perhaps none) and move the result to `to`.
    Move { to: String, edits: Vec<Hinted> },
    /// Replace the whole file with this content (create it if missing),
    /// unless the content leaves part of the file out.
    Replace(String),
}

/// The path as a key: `./` prefixes dropped, so `a.txt` and `./a.txt` are
/// one file.
fn key(path: &str) -> &str {
    let mut p = path.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// SEARCH/REPLACE blocks, grouped by file in the order files first appear.
/// An empty SEARCH creates the file when `exists` says it is missing (a
/// second empty SEARCH for it appends to what the first created), and
/// appends to it otherwise. A block with a SEARCH for a file an earlier
/// block creates edits the created content.
pub fn from_blocks(
    blocks: &[Block],
    exists: &dyn Fn(&str) -> bool,
) -> Result<Vec<FileChange>, FormatError> {
    let mut changes: Vec<FileChange> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let path = key(&b.path).to_string();
        let at = match changes.iter().position(|c| c.path == path) {
            Some(at) => at,
            None => {
                let kind = if b.search.is_empty() && !exists(&path) {
                    ChangeKind::Create(String::new())
                } else {
                    ChangeKind::Edit(Vec::new())
                };
                changes.push(FileChange { path, kind });
                changes.len() - 1
            }
        };
        let near = if b.search.is_empty() {
            Near::Eof
        } else {
            Near::None
        };
        let hinted = Hinted::new(Edit::new(b.search.clone(), b.replace.clone()), near);
        match &mut changes[at].kind {
            ChangeKind::Create(content) if b.search.is_empty() => content.push_str(&b.replace),
            ChangeKind::Create(content) => {
                let applied = apply_hinted(content, &[hinted], &[]).map_err(|e| FormatError {
                    line: None,
                    message: format!(
                        "block {} edits {}, which an earlier block creates: {e}",
                        i + 1,
                        b.path
                    ),
                })?;
                *content = applied.text;
            }
            ChangeKind::Edit(edits) => edits.push(hinted),
            ChangeKind::Delete | ChangeKind::Move { .. } | ChangeKind::Replace(_) => {
                unreachable!("not made from blocks")
            }
        }
    }
    Ok(changes)
}

/// Unified diff files: `/dev/null` as the old side creates, as the new side
/// deletes; differing paths move. Each hunk is one edit: old is its context
/// and removed lines, new its context and added lines, hinted by its stated
/// line (moved by what earlier hunks of the file added or removed). A hunk
/// with no old lines inserts at the line after its stated one.
pub fn from_udiff(files: &[DiffFile]) -> Result<Vec<FileChange>, FormatError> {
    let mut changes: Vec<FileChange> = Vec::new();
    for f in files {
        let change = match (&f.old_path, &f.new_path) {
            (None, Some(new)) => {
                let mut content = String::new();
                for h in &f.hunks {
                    for line in &h.lines {
                        match line.strip_prefix('+') {
                            Some(rest) => content.push_str(rest),
                            None => {
                                return Err(FormatError {
                                    line: None,
                                    message: format!(
                                        "the diff creates {new} (old side /dev/null) but has \
                                         lines other than '+' lines"
                                    ),
                                });
                            }
                        }
                    }
                }
                FileChange {
                    path: key(new).to_string(),
                    kind: ChangeKind::Create(content),
                }
            }
            (Some(old), None) => FileChange {
                path: key(old).to_string(),
                kind: ChangeKind::Delete,
            },
            (Some(old), Some(new)) => {
                let edits = hunk_edits(f);
                if key(old) == key(new) {
                    FileChange {
                        path: key(old).to_string(),
                        kind: ChangeKind::Edit(edits),
                    }
                } else {
                    FileChange {
                        path: key(old).to_string(),
                        kind: ChangeKind::Move {
                            to: key(new).to_string(),
                            edits,
                        },
                    }
                }
            }
            (None, None) => {
                return Err(FormatError {
                    line: None,
                    message: "a file diff has /dev/null on both sides".into(),
                });
            }
        };
        // A model may split one file's hunks over several file headers.
        match changes.iter_mut().find(|c| c.path == change.path) {
            Some(FileChange {
                kind: ChangeKind::Edit(edits),
                ..
            }) if matches!(change.kind, ChangeKind::Edit(_)) => {
                if let ChangeKind::Edit(more) = change.kind {
                    edits.extend(more);
                }
            }
            _ => changes.push(change),
        }
    }
    Ok(changes)
}

fn hunk_edits(f: &DiffFile) -> Vec<Hinted> {
    let mut shift: isize = 0;
    let mut edits = Vec::new();
    for h in &f.hunks {
        let (mut old, mut new) = (String::new(), String::new());
        let (mut olds, mut news) = (0isize, 0isize);
        for line in &h.lines {
            let (prefix, rest) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
            match prefix {
                "-" => {
                    old.push_str(rest);
                    olds += 1;
                }
                "+" => {
                    new.push_str(rest);
                    news += 1;
                }
                _ => {
                    old.push_str(rest);
                    new.push_str(rest);
                    olds += 1;
                    news += 1;
                }
            }
        }
        let line = |n: usize| (n as isize + shift).max(1) as usize;
        let near = match h.old_start {
            // `@@ -5,0 +6,2 @@`: the added lines go after line 5.
            Some(start) if old.is_empty() => Near::Line(line(start + 1)),
            Some(start) => Near::Line(line(start.max(1))),
            None if old.is_empty() => Near::Eof,
            None => Near::None,
        };
        shift += news - olds;
        edits.push(Hinted::new(Edit::new(old, new), near));
    }
    edits
}

/// V4A operations. An Update chunk's old is its context and removed lines,
/// its new the context and added lines; it is searched after its `@@`
/// anchor line, after the previous chunk (chunks are in file order), or at
/// the end of the file for `*** End of File`. A chunk with only added
/// lines goes after its anchor line, or without one at the end of the file
/// (after the other chunks).
pub fn from_v4a(ops: &[PatchOp]) -> Vec<FileChange> {
    ops.iter()
        .map(|op| match op {
            PatchOp::Add { path, contents } => FileChange {
                path: key(path).to_string(),
                kind: ChangeKind::Create(contents.clone()),
            },
            PatchOp::Delete { path } => FileChange {
                path: key(path).to_string(),
                kind: ChangeKind::Delete,
            },
            PatchOp::Update {
                path,
                move_to,
                chunks,
            } => {
                let (mut edits, mut appends) = (Vec::new(), Vec::new());
                for c in chunks {
                    let h = chunk_edit(c);
                    // A chunk of context lines alone changes nothing.
                    if h.edit.old == h.edit.new {
                        continue;
                    }
                    if h.edit.old.is_empty() && h.near == Near::Eof && !c.eof {
                        appends.push(h);
                    } else {
                        edits.push(h);
                    }
                }
                edits.extend(appends);
                let path = key(path).to_string();
                let kind = match move_to {
                    Some(to) => ChangeKind::Move {
                        to: key(to).to_string(),
                        edits,
                    },
                    None => ChangeKind::Edit(edits),
                };
                FileChange { path, kind }
            }
        })
        .collect()
}

fn chunk_edit(c: &Chunk) -> Hinted {
    let join = |lines: &[String]| {
        let mut s = String::new();
        for l in lines {
            s.push_str(l);
            s.push('\n');
        }
        s
    };
    // Blank lines that end a chunk on both sides are the blank line before
    // the next header, as often as a blank context line: leave them out (a
    // shorter old still has to match one place).
    let (mut olds, mut news) = (&c.old_lines[..], &c.new_lines[..]);
    while olds.len() > 1
        && news.len() > 1
        && olds.last().is_some_and(|l| l.trim().is_empty())
        && news.last().is_some_and(|l| l.trim().is_empty())
    {
        olds = &olds[..olds.len() - 1];
        news = &news[..news.len() - 1];
    }
    let (old, new) = (join(olds), join(news));
    let anchor = c.context.clone().unwrap_or_default();
    let near = if c.eof || (old.is_empty() && anchor.trim().is_empty()) {
        Near::Eof
    } else {
        Near::After(anchor)
    };
    Hinted::new(Edit::new(old, new), near)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::formats::{DiffHunk, v4a};

    #[test]
    fn blocks_group_by_file_and_create_or_append() {
        let block = |p: &str, s: &str, r: &str| Block {
            path: p.into(),
            search: s.into(),
            replace: r.into(),
        };
        let blocks = [
            block("a.txt", "x\n", "y\n"),
            block("new.txt", "", "one\n"),
            block("./a.txt", "", "tail\n"),
            block("new.txt", "one\n", "uno\n"),
        ];
        let changes = from_blocks(&blocks, &|p| p == "a.txt").unwrap();
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[1].kind, ChangeKind::Create("uno\n".into()));
        let ChangeKind::Edit(edits) = &changes[0].kind else {
            panic!("{changes:?}")
        };
        assert_eq!(edits[1].near, Near::Eof);
        assert_eq!(edits[1].edit.old, "");
    }

    #[test]
    fn udiff_hunks_hint_their_lines_shifted_by_earlier_hunks() {
        let hunk = |start, lines: &[&str]| DiffHunk {
            old_start: Some(start),
            new_start: None,
            lines: lines.iter().map(|l| l.to_string()).collect(),
            notes: Vec::new(),
        };
        let file = DiffFile {
            old_path: Some("a".into()),
            new_path: Some("a".into()),
            hunks: vec![
                hunk(2, &["+x\n", "+y\n", " b\n"]),
                hunk(10, &[" c\n", "-d\n"]),
                hunk(20, &["+z\n"]),
            ],
        };
        let ChangeKind::Edit(edits) = &from_udiff(&[file]).unwrap()[0].kind else {
            panic!()
        };
        assert_eq!(edits[0].near, Near::Line(2));
        assert_eq!(edits[0].edit, Edit::new("b\n", "x\ny\nb\n"));
        assert_eq!(edits[1].near, Near::Line(12));
        assert_eq!(edits[2].near, Near::Line(22));
    }

    #[test]
    fn v4a_chunks_and_appends_last() {
        let ops = v4a::parse(
            "*** Begin Patch\n*** Update File: f\n@@\n+end\n@@ fn b\n-x\n+y\n*** End Patch\n",
            v4a::Mode::Strict,
        )
        .unwrap();
        let ChangeKind::Edit(edits) = &from_v4a(&ops)[0].kind else {
            panic!()
        };
        assert_eq!(edits[0].near, Near::After("fn b".into()));
        assert_eq!(edits[1].near, Near::Eof);
        assert_eq!(edits[1].edit.new, "end\n");
    }
}
