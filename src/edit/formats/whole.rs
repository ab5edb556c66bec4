//! Whole-file replies: a file's path on a line, then the whole new content
//! in a fenced block. The risk of this format is a reply that leaves part of
//! the file out ("// ... rest unchanged"): written as it is, it deletes that
//! part. So a whole-file reply is refused when it elides content, or when it
//! is much shorter than the file it replaces.

use super::FormatError;

/// One file of a whole-file reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WholeFile {
    pub path: String,
    pub content: String,
}

/// Files shorter than this are not judged by length.
const SHORT_FILE_LINES: usize = 20;

/// The files of a reply: each fenced block whose previous non-blank line
/// names a path (marks like `#`, `*`, backticks and a trailing `:` are
/// stripped). Blocks without a path are prose and are skipped.
pub fn parse(text: &str) -> Result<Vec<WholeFile>, FormatError> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(fence) = fence_of(lines[i]) else {
            i += 1;
            continue;
        };
        let opened_at = i;
        let path = (0..i)
            .rev()
            .map(|j| lines[j].trim())
            .find(|l| !l.is_empty())
            .and_then(path_of);
        let close = (i + 1..lines.len()).find(|&j| lines[j].trim_end() == fence);
        let Some(close) = close else {
            return Err(FormatError {
                line: Some(opened_at + 1),
                message: format!(
                    "the block opened here is not closed with {fence}; if the reply was cut \
                     off, send the whole file again"
                ),
            });
        };
        if let Some(path) = path {
            files.push(WholeFile {
                path,
                content: lines[i + 1..close].concat(),
            });
        }
        i = close + 1;
    }
    if files.is_empty() {
        return Err(FormatError {
            line: None,
            message: "no file found: put the file's path alone on a line, then its whole \
                      content in a ``` block"
                .into(),
        });
    }
    Ok(files)
}

/// The fence a line opens (its backticks or tildes), if it opens one.
fn fence_of(line: &str) -> Option<&str> {
    let t = line.trim();
    let marks = t.len() - t.trim_start_matches(['`', '~']).len();
    (marks >= 3).then(|| &t[..marks])
}

fn path_of(line: &str) -> Option<String> {
    let marks = |c: char| c == '#' || c == '*' || c == '`' || c.is_whitespace();
    let p = line
        .trim_matches(marks)
        .trim_end_matches(':')
        .trim_matches(marks);
    let plausible =
        !p.is_empty() && !p.contains(char::is_whitespace) && (p.contains('.') || p.contains('/'));
    plausible.then(|| p.to_string())
}

/// Why `new` should not replace `old` whole, if it should not: a line that
/// stands for left-out content, or far fewer lines than the file has.
pub fn elision(old: &str, new: &str) -> Option<String> {
    // A bare "..." is also code (Python's Ellipsis): only suspect it in a
    // file that did not use it before.
    let used_dots = old.lines().any(|l| matches!(l.trim(), "..." | "…"));
    for (i, line) in new.lines().enumerate() {
        let bare = matches!(line.trim(), "..." | "…");
        if is_elision(line) && !(bare && used_dots) {
            return Some(format!(
                "line {} of the new content, {:?}, stands for content left out; writing it \
                 would delete that content. Send the whole file, or change part of it with \
                 an edit",
                i + 1,
                line.trim()
            ));
        }
    }
    let (before, after) = (old.lines().count(), new.lines().count());
    if before >= SHORT_FILE_LINES && after * 2 < before {
        return Some(format!(
            "the new content has {after} lines where the file has {before}; a reply that short \
             has probably left content out. Send the whole file, or change part of it with an \
             edit"
        ));
    }
    None
}

/// New content for an existing file, keeping its BOM, and when the reply
/// came as plain LF text its line endings as an edit keeps them: a line
/// the reply keeps keeps its own, a changed or added one takes the file's
/// usual ending (a CRLF file stays CRLF, an old Mac file CR, a mixed file
/// mixed). A reply with CRs in it is written as sent.
pub fn keep_conventions(old: &str, new: &str) -> String {
    if new.contains('\r') {
        let bom = old.starts_with('\u{feff}') && !new.starts_with('\u{feff}');
        return if bom {
            format!("\u{feff}{new}")
        } else {
            new.to_string()
        };
    }
    crate::edit::apply::replace_whole(old, new)
}

/// "...", "// ... existing code ...", "# rest of the file unchanged".
fn is_elision(line: &str) -> bool {
    let t = line.trim();
    let body = t
        .trim_start_matches(['/', '#', '-', '*', '<', '!', ';', '"', '\''])
        .trim_end_matches(['/', '*', '>', '-'])
        .trim();
    if body == "..." || body == "…" {
        return true;
    }
    let lower = body.to_lowercase();
    let dotted = lower.starts_with("...") || lower.starts_with('…') || lower.ends_with("...");
    let says = [
        "rest of",
        "unchanged",
        "existing code",
        "remains the same",
        "same as before",
        "omitted",
        "remaining code",
    ]
    .iter()
    .any(|w| lower.contains(w));
    let comment = t.len() != body.len() || dotted;
    says && comment && lower.len() < 80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_from_fenced_blocks() {
        let reply = "Here it is:\n\nsrc/a.py\n```python\ndef f():\n    return 1\n```\n\n**b.txt**:\n```\nhello\n```\n";
        let files = parse(reply).unwrap();
        assert_eq!(
            files,
            [
                WholeFile {
                    path: "src/a.py".into(),
                    content: "def f():\n    return 1\n".into()
                },
                WholeFile {
                    path: "b.txt".into(),
                    content: "hello\n".into()
                },
            ]
        );
        assert!(parse("no files here").is_err());
        let e = parse("a.txt\n```\nx\n").unwrap_err();
        assert_eq!(e.line, Some(2));
    }

    #[test]
    fn a_replaced_file_keeps_its_line_endings_as_an_edit_does() {
        // Kept lines keep their own ending, changed and added ones take the
        // usual.
        assert_eq!(
            keep_conventions("a\r\nb\rc\nd\ne\n", "A\nb\nX\nc\nd\ne\n"),
            "A\nb\rX\nc\nd\ne\n"
        );
        // An old Mac file stays one.
        assert_eq!(
            keep_conventions("a\rb\rc\r", "a\nB\nc\nd\n"),
            "a\rB\rc\rd\r"
        );
        // An empty line after a lone CR ends in CR: a LF would join them.
        assert_eq!(
            keep_conventions("a\rb\nc\nd\n", "a\n\nb\nc\nd\n"),
            "a\r\rb\nc\nd\n"
        );
        // The BOM stays, and is not doubled when the reply has it too.
        assert_eq!(
            keep_conventions("\u{feff}a\r\nb\r\n", "\u{feff}a\nB\n"),
            "\u{feff}a\r\nB\r\n"
        );
        // A reply with its own CRs is written as sent.
        assert_eq!(keep_conventions("a\nb\n", "x\r\ny\r"), "x\r\ny\r");
        assert_eq!(keep_conventions("", "x\ny\n"), "x\ny\n");
    }

    #[test]
    fn elided_or_short_replies_are_caught() {
        let old: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let elided = "line 0\n// ... rest of the file unchanged ...\n";
        assert!(elision(&old, elided).is_some_and(|m| m.contains("line 2")));
        assert!(elision(&old, "def f():\n    ...\n").is_some());
        let stub = "class A:\n    def f(self) -> int:\n        ...\n";
        assert_eq!(
            elision(stub, "class A:\n    def g(self) -> int:\n        ...\n"),
            None
        );
        assert!(elision(&old, "x\n# ... existing code ...\ny\n").is_some());
        assert!(elision(&old, "line 0\nline 1\n").is_some_and(|m| m.contains("2 lines")));
        let whole: String = (0..41).map(|i| format!("line {i}\n")).collect();
        assert_eq!(elision(&old, &whole), None);
        // Code that merely mentions the words is fine.
        assert_eq!(elision("", "let rest_of = unchanged(x);\n"), None);
    }
}
