//! Unified diffs, as models write them: usually in a ```` ```diff ```` fence
//! with prose around it, often with `@@ ... @@` in place of line numbers.
//!
//! `parse` finds every file diff in the text and returns its hunks, or
//! refuses the text with the line at fault and what to send instead.
//!
//! The rules, in brief:
//!
//! - A file starts with a `--- path` line directly followed by a
//!   `+++ path` line. `a/` and `b/` prefixes are dropped when the pair uses
//!   them (old `a/`, new `b/`, or `/dev/null` on one side); `/dev/null` is
//!   no file (`None`: a created or deleted file); a tab and what follows it
//!   (a timestamp) is ignored; a quoted path is unquoted. `diff --git`,
//!   `index` and git's other extended header lines are skipped.
//! - A hunk starts with `@@ -a,b +c,d @@`, `@@ ... @@` or a bare `@@`. The
//!   numbers are hints: they become `old_start` / `new_start`. Counts that
//!   disagree with the body are tolerated and noted. Lines right after a
//!   file header with no `@@` line form a hunk too (noted).
//! - Body lines start with ` `, `-` or `+`. A completely empty line inside a
//!   hunk is a blank context line (`" \n"`); empty lines at the end of a
//!   hunk separate it from what follows and are dropped, unless the
//!   header's counts say they belong to it. `\ No newline at end of file`
//!   takes the newline off the line before it (noted).
//! - A hunk ends at the next `@@`, file header, `diff --git` line, fence
//!   line or the end of the text. Outside a fence it also ends at a line of
//!   prose after an empty line, and at an empty line once the header's
//!   counts are met (so a `- ` list after the diff is not read as removed
//!   lines). Any other line inside a hunk is an error.
//! - A hunk with no file header before it belongs to the file named last
//!   (noted); before any file header it is an error.
//! - CR before LF is ignored: body lines end in `\n`.

use super::{DiffFile, DiffHunk, FormatError, error, snippet};

const PREFIXES: &str = "' ' (context), '-' (removed) or '+' (added)";

/// Parse every file diff in `text`, in order.
pub fn parse(text: &str) -> Result<Vec<DiffFile>, FormatError> {
    let mut lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if text.ends_with('\n') {
        lines.pop();
    }
    Parser {
        lines: &lines,
        files: Vec::new(),
        hunk: None,
        header_without_hunk: None,
        in_file: false,
        in_fence: false,
    }
    .run()
}

/// A hunk being read.
struct Open {
    /// 1-based line of its `@@` line, or of its first body line.
    line: usize,
    old_start: Option<usize>,
    new_start: Option<usize>,
    /// The old and new line counts the header states.
    counts: Option<(usize, usize)>,
    lines: Vec<String>,
    notes: Vec<String>,
    old_count: usize,
    new_count: usize,
    /// Empty lines read and not yet known to be part of the hunk.
    pending_blank: usize,
}

impl Open {
    fn new(line: usize) -> Open {
        Open {
            line,
            old_start: None,
            new_start: None,
            counts: None,
            lines: Vec::new(),
            notes: Vec::new(),
            old_count: 0,
            new_count: 0,
            pending_blank: 0,
        }
    }

    fn push(&mut self, prefix: char, content: &str) {
        if prefix != '+' {
            self.old_count += 1;
        }
        if prefix != '-' {
            self.new_count += 1;
        }
        let mut line = String::with_capacity(content.len() + 2);
        line.push(prefix);
        line.push_str(content);
        line.push('\n');
        self.lines.push(line);
    }

    /// The header states counts and the body has reached both.
    fn counts_met(&self) -> bool {
        self.counts
            .is_some_and(|(old, new)| self.old_count >= old && self.new_count >= new)
    }

    fn flush_blank(&mut self) {
        for _ in 0..std::mem::take(&mut self.pending_blank) {
            self.push(' ', "");
        }
    }

    /// The finished hunk. Pending empty lines are kept only as far as the
    /// header's counts ask for them.
    fn finish(mut self) -> Result<DiffHunk, FormatError> {
        if let Some((old, new)) = self.counts {
            let keep = (0..=self.pending_blank)
                .rev()
                .find(|k| self.old_count + k == old && self.new_count + k == new)
                .unwrap_or(0);
            self.pending_blank = keep;
            self.flush_blank();
            if self.old_count != old || self.new_count != new {
                self.notes.push(format!(
                    "line {}: the header counts {old} old and {new} new lines, the hunk has {} and {}; the hunk's lines are used",
                    self.line, self.old_count, self.new_count
                ));
            }
        }
        if self.lines.is_empty() {
            return Err(error(
                self.line,
                format!(
                    "this hunk has no lines: after '@@' send its lines, each starting with {PREFIXES}"
                ),
            ));
        }
        Ok(DiffHunk {
            old_start: self.old_start,
            new_start: self.new_start,
            lines: self.lines,
            notes: self.notes,
        })
    }
}

struct Parser<'a, 'b> {
    lines: &'b [&'a str],
    files: Vec<DiffFile>,
    hunk: Option<Open>,
    /// The `---` line of the last file header while that file has no hunk.
    header_without_hunk: Option<usize>,
    /// Hunks read now belong to the last file header: no fence line, prose
    /// or `diff --git` line came since.
    in_file: bool,
    in_fence: bool,
}

impl Parser<'_, '_> {
    fn run(mut self) -> Result<Vec<DiffFile>, FormatError> {
        let mut i = 0;
        while i < self.lines.len() {
            let line = self.lines[i];
            let no = i + 1;
            let next = self.lines.get(i + 1).copied();

            if is_fence(line, self.hunk.is_some()) {
                self.end_hunk()?;
                self.end_file()?;
                self.in_fence = !self.in_fence;
            } else if line.starts_with("--- ") && next.is_some_and(|n| n.starts_with("+++ ")) {
                self.end_hunk()?;
                self.end_file()?;
                self.file_header(no, line, next.unwrap_or_default())?;
                i += 1;
            } else if line.starts_with("diff --git ") {
                self.end_hunk()?;
                self.end_file()?;
            } else if is_hunk_header(line) {
                self.end_hunk()?;
                self.start_hunk(no, line)?;
            } else if let Some(hunk) = self.hunk.as_mut() {
                if !self.in_fence && line.trim().is_empty() && hunk.counts_met() {
                    // Outside a fence, a hunk whose header counts are met
                    // ends at an empty line: what follows may be prose
                    // (a "- " list, say).
                    self.end_hunk()?;
                } else if !body_line(hunk, no, line)? {
                    // Prose after an empty line, outside a fence: the diff
                    // ended at the empty line.
                    if self.in_fence || hunk.pending_blank == 0 {
                        return Err(unknown_prefix(no, line));
                    }
                    self.end_hunk()?;
                    self.in_file = false;
                }
            } else if let Some(header) = self.header_without_hunk {
                if line.starts_with([' ', '-', '+']) {
                    let mut hunk = Open::new(no);
                    hunk.notes.push(format!(
                        "line {no}: no '@@' line between the file header and this hunk"
                    ));
                    body_line(&mut hunk, no, line)?;
                    self.hunk = Some(hunk);
                    self.header_without_hunk = None;
                } else if !line.trim().is_empty() && !is_git_extended_header(line) {
                    return Err(error(
                        no,
                        format!(
                            "expected a hunk ('@@ -a,b +c,d @@' or '@@ ... @@') for the file header on line {header}, not '{}'",
                            snippet(line)
                        ),
                    ));
                }
            }
            // Anything else outside a hunk is prose, a fence's other
            // content or a git header line: skipped.
            i += 1;
        }
        self.end_hunk()?;
        self.end_file()?;
        if self.files.is_empty() {
            return Err(FormatError {
                line: None,
                message: "no unified diff found: a diff starts with a '--- path' line and a '+++ path' line, followed by hunks that start with '@@'".to_string(),
            });
        }
        Ok(self.files)
    }

    fn file_header(&mut self, no: usize, old: &str, new: &str) -> Result<(), FormatError> {
        let mut old_path = header_path(&old[4..]);
        let mut new_path = header_path(&new[4..]);
        let (old_path, new_path) = match (old_path.as_deref(), new_path.as_deref()) {
            (None, None) => {
                return Err(error(
                    no,
                    "both '---' and '+++' name /dev/null: name the file on one of them".to_string(),
                ));
            }
            (Some(""), _) | (_, Some("")) => {
                return Err(error(
                    no,
                    "a file header needs a path on both lines: '--- path' and '+++ path' ('/dev/null' for a created or deleted file)".to_string(),
                ));
            }
            (old, new) => {
                let git_style = old.is_none_or(|p| p.starts_with("a/") && p.len() > 2)
                    && new.is_none_or(|p| p.starts_with("b/") && p.len() > 2);
                if git_style {
                    old_path = old_path.map(|p| p[2..].to_string());
                    new_path = new_path.map(|p| p[2..].to_string());
                }
                (old_path, new_path)
            }
        };
        self.files.push(DiffFile {
            old_path,
            new_path,
            hunks: Vec::new(),
        });
        self.header_without_hunk = Some(no);
        self.in_file = true;
        Ok(())
    }

    fn start_hunk(&mut self, no: usize, line: &str) -> Result<(), FormatError> {
        let Some(file) = self.files.last() else {
            return Err(error(
                no,
                "a hunk ('@@') before any file header: put a '--- path' line and a '+++ path' line before it".to_string(),
            ));
        };
        let mut hunk = Open::new(no);
        self.header_without_hunk = None;
        if !self.in_file {
            let path = file
                .new_path
                .as_deref()
                .or(file.old_path.as_deref())
                .unwrap_or_default();
            hunk.notes.push(format!(
                "line {no}: no file header before this hunk; it belongs to '{path}', the file named last"
            ));
            self.in_file = true;
        }
        if let Some((old_start, old_count, new_start, new_count)) = hunk_numbers(line) {
            hunk.old_start = Some(old_start);
            hunk.new_start = Some(new_start);
            hunk.counts = Some((old_count, new_count));
        }
        self.hunk = Some(hunk);
        Ok(())
    }

    fn end_hunk(&mut self) -> Result<(), FormatError> {
        if let Some(open) = self.hunk.take() {
            let hunk = open.finish()?;
            if let Some(file) = self.files.last_mut() {
                file.hunks.push(hunk);
            }
        }
        Ok(())
    }

    /// The end of a file's section. Its header must have had a hunk.
    fn end_file(&mut self) -> Result<(), FormatError> {
        self.in_file = false;
        match self.header_without_hunk.take() {
            Some(header) => Err(error(
                header,
                "this file header has no hunks: after the '+++' line send hunks that start with '@@'".to_string(),
            )),
            None => Ok(()),
        }
    }
}

/// Read one line inside a hunk. `Ok(false)`: the line is not part of it.
fn body_line(hunk: &mut Open, no: usize, line: &str) -> Result<bool, FormatError> {
    match line.chars().next() {
        Some(prefix @ (' ' | '-' | '+')) => {
            hunk.flush_blank();
            hunk.push(prefix, &line[1..]);
        }
        Some('\\') => {
            hunk.flush_blank();
            let Some(last) = hunk.lines.last_mut() else {
                return Err(error(
                    no,
                    format!("'{}' must follow a line of the hunk", snippet(line)),
                ));
            };
            if last.ends_with('\n') {
                last.pop();
            }
            hunk.notes.push(format!(
                "line {no}: '\\ No newline at end of file': the line before it has no newline"
            ));
        }
        _ if line.trim().is_empty() => hunk.pending_blank += 1,
        _ => return Ok(false),
    }
    Ok(true)
}

fn unknown_prefix(no: usize, line: &str) -> FormatError {
    error(
        no,
        format!(
            "'{}' is not a diff line: inside a hunk every line starts with {PREFIXES}; a new hunk starts with '@@', a new file with '--- path' and '+++ path'",
            snippet(line)
        ),
    )
}

/// A fence line. Inside a hunk only one at the start of the line counts,
/// so a context line of a Markdown file (" ```") stays a context line.
fn is_fence(line: &str, in_hunk: bool) -> bool {
    if in_hunk {
        line.starts_with("```")
    } else {
        line.trim_start().starts_with("```")
    }
}

fn is_hunk_header(line: &str) -> bool {
    line.strip_prefix("@@")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

fn is_git_extended_header(line: &str) -> bool {
    const HEADERS: &[&str] = &[
        "index ",
        "new file mode ",
        "deleted file mode ",
        "old mode ",
        "new mode ",
        "similarity index ",
        "dissimilarity index ",
        "rename from ",
        "rename to ",
        "copy from ",
        "copy to ",
    ];
    HEADERS.iter().any(|h| line.starts_with(h))
}

/// `(old_start, old_count, new_start, new_count)` of `@@ -a[,b] +c[,d] @@`;
/// a missing count is 1.
fn hunk_numbers(line: &str) -> Option<(usize, usize, usize, usize)> {
    fn range(text: &str, sign: char) -> Option<(usize, usize, &str)> {
        let text = text.trim_start().strip_prefix(sign)?;
        let (start, rest) = number(text)?;
        match rest.strip_prefix(',') {
            Some(rest) => {
                let (count, rest) = number(rest)?;
                Some((start, count, rest))
            }
            None => Some((start, 1, rest)),
        }
    }
    fn number(text: &str) -> Option<(usize, &str)> {
        let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let value = text[..digits].parse().ok()?;
        Some((value, &text[digits..]))
    }
    let rest = line.strip_prefix("@@")?;
    let (old_start, old_count, rest) = range(rest, '-')?;
    let (new_start, new_count, rest) = range(rest, '+')?;
    let rest = rest.trim_start();
    (rest.is_empty() || rest.starts_with("@@"))
        .then_some((old_start, old_count, new_start, new_count))
}

/// The path of a `---` / `+++` line (after the marker): up to a tab,
/// trimmed, unquoted; `None` for `/dev/null`.
fn header_path(text: &str) -> Option<String> {
    let text = text.split('\t').next().unwrap_or_default().trim();
    let path = unquote(text).unwrap_or_else(|| text.to_string());
    (path != "/dev/null").then_some(path)
}

/// A C-style quoted path as git writes it (`"a/with \"quote\""`).
fn unquote(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            other => out.push(other),
        }
    }
    Some(out)
}
