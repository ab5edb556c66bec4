//! The V4A patch format, as OpenAI's models write it for Codex's
//! `apply_patch` tool:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path/new.txt
//! +every line starts with '+'
//! *** Delete File: path/old.txt
//! *** Update File: path/file.py
//! *** Move to: path/renamed.py
//! @@ def f():
//! -    pass
//! +    return 1
//! *** End Patch
//! ```
//!
//! `parse` turns the text into [`PatchOp`]s, or refuses it with the line at
//! fault and what to send instead. The whole patch must be there: a text
//! that does not end with `*** End Patch` (a reply cut off mid-way) is
//! refused, so nothing of a half patch is ever applied.
//!
//! The rules, in brief:
//!
//! - The first non-blank line is `*** Begin Patch`, the last `*** End Patch`
//!   (both matched after trimming). Blank lines around them are ignored;
//!   any other text before or after is an error. An optional
//!   `*** Environment ID: <id>` line may follow Begin Patch.
//! - In [`Mode::Lenient`] a shell heredoc around the patch (`<<EOF`,
//!   `<<'EOF'` or `<<"EOF"` on the first line, `EOF` on the last) is
//!   unwrapped first.
//! - Hunk headers (`*** Add File: p`, `*** Delete File: p`,
//!   `*** Update File: p`, `*** Move to: q`) are matched after trimming.
//!   Blank lines between hunks are ignored.
//! - An added file's lines start with `+`; an empty line between two of
//!   them is an empty line of the file.
//! - An update holds chunks. A chunk starts with `@@` or `@@ <anchor line>`
//!   (the first chunk may leave it out), then lines starting with ` `
//!   (context), `-` (removed) or `+` (added). A completely empty line is an
//!   empty context line. A line starting with a space is context even when
//!   it looks like a header. `*** End of File` ends a chunk that sits at the
//!   end of the file. A unified-diff header written as an anchor
//!   (`@@ -12,3 +12,4 @@ fn f()`) keeps only its trailing text as anchor.
//! - A CR before an LF is ignored.

use super::{Chunk, FormatError, PatchOp, error, snippet};

/// How much wrapping around the patch is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The text is the patch, nothing else (blank lines aside).
    Strict,
    /// As `Strict`, but a `<<EOF` / `<<'EOF'` / `<<"EOF"` heredoc around
    /// the patch is unwrapped first.
    Lenient,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";
const ENVIRONMENT: &str = "*** Environment ID:";

const HUNK_HEADERS: &str =
    "'*** Add File: <path>', '*** Delete File: <path>' or '*** Update File: <path>'";
const CHUNK_LINES: &str =
    "every line of a chunk starts with ' ' (context), '-' (removed) or '+' (added)";

/// One line of the input with its 1-based number.
#[derive(Clone, Copy)]
struct Line<'a> {
    no: usize,
    text: &'a str,
}

/// Parse a V4A patch into its operations, in the order the patch gives
/// them. An empty patch (Begin and End only) parses to no operations.
pub fn parse(text: &str, mode: Mode) -> Result<Vec<PatchOp>, FormatError> {
    let lines: Vec<Line<'_>> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| Line {
            no: i + 1,
            text: l.strip_suffix('\r').unwrap_or(l),
        })
        .collect();
    let (mut first, mut last) = match non_blank_range(&lines, 0, lines.len()) {
        Some(range) => range,
        None => {
            return Err(FormatError {
                line: None,
                message: format!(
                    "the text is empty: send a patch that starts with '{BEGIN}' and ends with '{END}'"
                ),
            });
        }
    };

    let opener = lines[first].text.trim();
    if mode == Mode::Lenient && is_heredoc_opener(opener) && last > first {
        if lines[last].text.trim() == "EOF" {
            match non_blank_range(&lines, first + 1, last) {
                Some(range) => (first, last) = range,
                None => {
                    return Err(error(
                        lines[first].no,
                        format!(
                            "the heredoc holds no patch: between '{opener}' and 'EOF' send a patch that starts with '{BEGIN}' and ends with '{END}'"
                        ),
                    ));
                }
            }
        } else {
            return Err(error(
                lines[last].no,
                format!(
                    "the heredoc opened with '{opener}' on line {} does not end with a line 'EOF': the text may have been cut off; send the whole patch again",
                    lines[first].no
                ),
            ));
        }
    }

    check_begin(&lines, first, last)?;
    check_end(&lines, first, last)?;

    let mut body = &lines[first + 1..last];
    if let Some(line) = body.first()
        && let Some(id) = line.text.trim().strip_prefix(ENVIRONMENT)
    {
        if id.trim().is_empty() {
            return Err(error(
                line.no,
                format!("'{ENVIRONMENT}' needs an id after it; or leave the line out"),
            ));
        }
        body = &body[1..];
    }
    Parser { lines: body, at: 0 }.hunks()
}

/// The first and last lines (indices) in `from..to` that are not blank.
fn non_blank_range(lines: &[Line<'_>], from: usize, to: usize) -> Option<(usize, usize)> {
    let window = lines.get(from..to)?;
    let first = window.iter().position(|l| !l.text.trim().is_empty())?;
    let last = window.iter().rposition(|l| !l.text.trim().is_empty())?;
    Some((from + first, from + last))
}

fn is_heredoc_opener(line: &str) -> bool {
    matches!(line, "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
}

fn check_begin(lines: &[Line<'_>], first: usize, last: usize) -> Result<(), FormatError> {
    let line = lines[first];
    let found = line.text.trim();
    if found == BEGIN {
        return Ok(());
    }
    let message = if found.starts_with("<<") {
        format!(
            "a patch starts with '{BEGIN}', not a heredoc line '{}': send the patch without the shell wrapper",
            snippet(found)
        )
    } else if let Some(later) = lines[first..=last].iter().find(|l| l.text.trim() == BEGIN) {
        format!(
            "a patch starts with '{BEGIN}', which is on line {} here: send the patch alone, with no text before it",
            later.no
        )
    } else {
        format!(
            "a patch starts with '{BEGIN}', not '{}': send '{BEGIN}', the hunks, then '{END}'",
            snippet(found)
        )
    };
    Err(error(line.no, message))
}

fn check_end(lines: &[Line<'_>], first: usize, last: usize) -> Result<(), FormatError> {
    if last > first && lines[last].text.trim() == END {
        return Ok(());
    }
    // An End marker before the last line means text follows the patch.
    if let Some(end) = (first + 1..last).find(|&i| lines[i].text.trim() == END) {
        let after = (end + 1..=last)
            .find(|&i| !lines[i].text.trim().is_empty())
            .unwrap_or(last);
        return Err(error(
            lines[after].no,
            format!(
                "text after '{END}' (line {}): a patch ends with '{END}'; send nothing after it",
                lines[end].no
            ),
        ));
    }
    Err(error(
        lines[last].no,
        format!(
            "the patch does not end with '{END}', so it may have been cut off and none of it is applied: send the whole patch again, ending with '{END}'"
        ),
    ))
}

/// What the last hunk was, for the message about a line that follows it.
#[derive(Clone, Copy)]
enum Previous {
    None,
    Add,
    Delete,
    Update,
}

struct Parser<'a, 'b> {
    lines: &'b [Line<'a>],
    at: usize,
}

impl<'a> Parser<'a, '_> {
    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.at).copied()
    }

    fn skip_blank(&mut self) {
        while self.peek().is_some_and(|l| l.text.trim().is_empty()) {
            self.at += 1;
        }
    }

    fn hunks(mut self) -> Result<Vec<PatchOp>, FormatError> {
        let mut ops = Vec::new();
        let mut previous = Previous::None;
        loop {
            self.skip_blank();
            let Some(line) = self.peek() else {
                return Ok(ops);
            };
            let header = line.text.trim();
            if let Some(path) = header.strip_prefix(ADD) {
                let path = header_path(line, ADD, path)?;
                self.at += 1;
                ops.push(PatchOp::Add {
                    path,
                    contents: self.add_lines(),
                });
                previous = Previous::Add;
            } else if let Some(path) = header.strip_prefix(DELETE) {
                let path = header_path(line, DELETE, path)?;
                self.at += 1;
                ops.push(PatchOp::Delete { path });
                previous = Previous::Delete;
            } else if let Some(path) = header.strip_prefix(UPDATE) {
                let path = header_path(line, UPDATE, path)?;
                self.at += 1;
                ops.push(self.update(line, path)?);
                previous = Previous::Update;
            } else {
                return Err(not_a_header(line, previous));
            }
        }
    }

    /// The `+` lines of an added file, as its contents. Empty lines between
    /// two `+` lines are empty lines of the file; blank lines after the last
    /// `+` line separate hunks.
    fn add_lines(&mut self) -> String {
        let mut contents = String::new();
        loop {
            let mut next = self.at;
            while self
                .lines
                .get(next)
                .is_some_and(|l| l.text.trim().is_empty())
            {
                next += 1;
            }
            let Some(added) = self.lines.get(next).and_then(|l| l.text.strip_prefix('+')) else {
                return contents;
            };
            for _ in self.at..next {
                contents.push('\n');
            }
            contents.push_str(added);
            contents.push('\n');
            self.at = next + 1;
        }
    }

    fn update(&mut self, header: Line<'_>, path: String) -> Result<PatchOp, FormatError> {
        let mut move_to = None;
        if let Some(line) = self.peek()
            && let Some(to) = line.text.trim().strip_prefix(MOVE)
        {
            move_to = Some(header_path(line, MOVE, to)?);
            self.at += 1;
        }
        let mut chunks = Vec::new();
        loop {
            self.skip_blank();
            match self.peek() {
                Some(line) if !line.text.starts_with("***") => {
                    chunks.push(self.chunk(chunks.is_empty())?);
                }
                _ => break,
            }
        }
        if chunks.is_empty() {
            return Err(error(
                header.no,
                format!(
                    "'{UPDATE} {path}' has no changes: after it send chunks that start with '@@' (or '@@ <a line of the file near the change>'); {CHUNK_LINES}"
                ),
            ));
        }
        Ok(PatchOp::Update {
            path,
            move_to,
            chunks,
        })
    }

    /// One chunk, from its `@@` line (optional for the first chunk) to the
    /// first line that is not part of it.
    fn chunk(&mut self, first: bool) -> Result<Chunk, FormatError> {
        let Some(start) = self.peek() else {
            // `update` only calls this with a line to read.
            return Err(FormatError {
                line: None,
                message: "a chunk was expected".to_string(),
            });
        };
        let context = if start.text.trim_end() == "@@" {
            self.at += 1;
            None
        } else if let Some(anchor) = start.text.strip_prefix("@@ ") {
            self.at += 1;
            anchor_of(anchor)
        } else if first {
            None
        } else {
            return Err(error(
                start.no,
                format!(
                    "expected a new chunk: '@@' or '@@ <a line of the file near the change>', not '{}'; {CHUNK_LINES}",
                    snippet(start.text)
                ),
            ));
        };

        let mut chunk = Chunk {
            context,
            old_lines: Vec::new(),
            new_lines: Vec::new(),
            eof: false,
        };
        let mut count = 0;
        while let Some(line) = self.peek() {
            let text = line.text;
            if text.is_empty() {
                chunk.old_lines.push(String::new());
                chunk.new_lines.push(String::new());
            } else if let Some(rest) = text.strip_prefix(' ') {
                chunk.old_lines.push(rest.to_string());
                chunk.new_lines.push(rest.to_string());
            } else if let Some(rest) = text.strip_prefix('-') {
                chunk.old_lines.push(rest.to_string());
            } else if let Some(rest) = text.strip_prefix('+') {
                chunk.new_lines.push(rest.to_string());
            } else if text.trim() == END_OF_FILE && count > 0 {
                chunk.eof = true;
                self.at += 1;
                break;
            } else if count > 0 {
                // The next chunk or hunk starts here.
                break;
            } else if text.trim() == END_OF_FILE {
                return Err(error(
                    line.no,
                    format!(
                        "'{END_OF_FILE}' ends a chunk, but this chunk has no lines yet: {CHUNK_LINES}"
                    ),
                ));
            } else {
                return Err(error(
                    line.no,
                    format!(
                        "'{}' cannot start the lines of a chunk: {CHUNK_LINES}",
                        snippet(text)
                    ),
                ));
            }
            count += 1;
            self.at += 1;
        }
        if count == 0 {
            return Err(error(
                start.no,
                format!("this chunk has no lines: after '@@' send its lines; {CHUNK_LINES}"),
            ));
        }
        Ok(chunk)
    }
}

/// The anchor of a `@@ <anchor>` line. A unified-diff hunk header written
/// in its place (`-12,3 +12,4 @@ fn f()`) keeps only the text after it.
fn anchor_of(anchor: &str) -> Option<String> {
    match unified_numbers(anchor) {
        Some(rest) => {
            let rest = rest.trim();
            (!rest.is_empty()).then(|| rest.to_string())
        }
        None => Some(anchor.to_string()),
    }
}

/// If `text` starts with `-a[,b] +c[,d] @@`, what follows it.
fn unified_numbers(text: &str) -> Option<&str> {
    fn range(text: &str, sign: char) -> Option<&str> {
        let text = text.strip_prefix(sign)?;
        let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let text = &text[digits..];
        match text.strip_prefix(',') {
            Some(count) => {
                let rest = count.trim_start_matches(|c: char| c.is_ascii_digit());
                (rest.len() < count.len()).then_some(rest)
            }
            None => Some(text),
        }
    }
    let rest = range(text.trim_start(), '-')?;
    let rest = range(rest.trim_start(), '+')?;
    rest.trim_start().strip_prefix("@@")
}

fn header_path(line: Line<'_>, marker: &str, path: &str) -> Result<String, FormatError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(error(
            line.no,
            format!("'{marker}' needs a path after it: '{marker} path/to/file'"),
        ));
    }
    Ok(path.to_string())
}

fn not_a_header(line: Line<'_>, previous: Previous) -> FormatError {
    let found = line.text.trim();
    let message = if found == END {
        format!("'{END}' before the end of the patch: it must be the last line, after every hunk")
    } else if found == BEGIN {
        format!(
            "a second '{BEGIN}': send one patch, with every hunk between one '{BEGIN}' and one '{END}'"
        )
    } else if found == END_OF_FILE {
        format!("'{END_OF_FILE}' must directly follow the lines of an update chunk")
    } else if found.starts_with(MOVE) {
        format!("'{MOVE}' must directly follow an '{UPDATE} <path>' line")
    } else {
        let why = match previous {
            Previous::None => String::new(),
            Previous::Add => "every line of an added file starts with '+'; ".to_string(),
            Previous::Delete => format!("'{DELETE}' takes no lines under it; "),
            Previous::Update => format!("{CHUNK_LINES}; "),
        };
        format!(
            "'{}' is not a hunk header: {why}a hunk starts with {HUNK_HEADERS}",
            snippet(found)
        )
    };
    error(line.no, message)
}
