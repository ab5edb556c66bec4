//! The file's text as the engine compares it, and how to put it back.
//!
//! Matching happens on LF-only text without a BOM. What was taken out to get
//! there is remembered so that writing restores it: the BOM, and which line
//! ended in CRLF. Untouched lines keep their own ending (a mixed file stays
//! mixed); lines the edits bring in take the file's usual ending.

use std::borrow::Cow;
use std::ops::Range;

const BOM: char = '\u{feff}';

/// A file's text, normalized for matching.
#[derive(Debug)]
pub(crate) struct Source<'a> {
    pub bom: bool,
    /// LF-only text without the BOM.
    pub norm: Cow<'a, str>,
    /// Offsets in `norm` of each '\n' that was "\r\n" in the file, ascending.
    crlf_at: Vec<usize>,
    /// The ending new lines get: CRLF when the file mostly uses it.
    pub crlf_default: bool,
}

impl<'a> Source<'a> {
    pub fn parse(text: &'a str) -> Source<'a> {
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if memchr::memchr(b'\r', body.as_bytes()).is_none() {
            return Source {
                bom,
                norm: Cow::Borrowed(body),
                crlf_at: Vec::new(),
                crlf_default: false,
            };
        }
        let mut norm = String::with_capacity(body.len());
        let mut crlf_at = Vec::new();
        let mut last = 0;
        for at in memchr::memmem::find_iter(body.as_bytes(), b"\r\n") {
            norm.push_str(&body[last..at]);
            crlf_at.push(norm.len());
            norm.push('\n');
            last = at + 2;
        }
        norm.push_str(&body[last..]);
        let lf_total = memchr::memchr_iter(b'\n', norm.as_bytes()).count();
        let lf_only = lf_total - crlf_at.len();
        let first_is_crlf = memchr::memchr(b'\n', norm.as_bytes()) == crlf_at.first().copied();
        let crlf_default =
            crlf_at.len() > lf_only || (crlf_at.len() == lf_only && first_is_crlf && lf_total > 0);
        Source {
            bom,
            norm: Cow::Owned(norm),
            crlf_at,
            crlf_default,
        }
    }

    /// Append `norm[range]` to `out` with the file's own line endings.
    pub fn write_orig(&self, range: Range<usize>, out: &mut String) {
        let first = self.crlf_at.partition_point(|&p| p < range.start);
        let mut last = range.start;
        for &at in self.crlf_at[first..].iter().take_while(|&&p| p < range.end) {
            out.push_str(&self.norm[last..at]);
            out.push_str("\r\n");
            last = at + 1;
        }
        out.push_str(&self.norm[last..range.end]);
    }

    /// Append text the edits brought in, with the file's usual ending.
    pub fn write_new(&self, text: &str, out: &mut String) {
        if self.crlf_default {
            out.push_str(&text.replace('\n', "\r\n"));
        } else {
            out.push_str(text);
        }
    }

    /// True when no line ends in CRLF: the written text is then the
    /// normalized text with the prefix.
    pub fn lf_only(&self) -> bool {
        self.crlf_at.is_empty()
    }

    /// The prefix every written file starts with.
    pub fn prefix(&self) -> &'static str {
        if self.bom { "\u{feff}" } else { "" }
    }
}

/// Text with "\r\n" turned into "\n", as edits are compared.
pub(crate) fn lf(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Start offsets of the lines of a text. A final '\n' ends the last line; it
/// does not start an empty one.
#[derive(Debug)]
pub(crate) struct LineIndex {
    starts: Vec<usize>,
    len: usize,
    ends_nl: bool,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        if starts.last() == Some(&text.len()) {
            starts.pop();
        }
        LineIndex {
            starts,
            len: text.len(),
            ends_nl: text.ends_with('\n'),
        }
    }

    pub fn count(&self) -> usize {
        self.starts.len()
    }

    pub fn start(&self, line: usize) -> usize {
        self.starts[line]
    }

    /// The end of a line's content: its '\n', or the end of the text.
    pub fn end(&self, line: usize) -> usize {
        match self.starts.get(line + 1) {
            Some(&next) => next - 1,
            None if self.ends_nl => self.len - 1,
            None => self.len,
        }
    }

    /// Whether a '\n' follows the line.
    pub fn has_newline(&self, line: usize) -> bool {
        line + 1 < self.starts.len() || self.ends_nl
    }

    pub fn line<'t>(&self, text: &'t str, line: usize) -> &'t str {
        &text[self.starts[line]..self.end(line)]
    }

    /// The 0-based line holding byte offset `pos`.
    pub fn line_of(&self, pos: usize) -> usize {
        self.starts.partition_point(|&s| s <= pos).saturating_sub(1)
    }
}

/// Split text into lines without their '\n', and whether it ended in one.
/// Empty text has no lines.
pub(crate) fn split_lines(text: &str) -> (Vec<&str>, bool) {
    if text.is_empty() {
        return (Vec::new(), false);
    }
    match text.strip_suffix('\n') {
        Some(body) => (body.split('\n').collect(), true),
        None => (text.split('\n').collect(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> String {
        let src = Source::parse(text);
        let mut out = src.prefix().to_string();
        src.write_orig(0..src.norm.len(), &mut out);
        out
    }

    #[test]
    fn restores_bom_and_each_line_ending() {
        for text in [
            "",
            "a",
            "a\n",
            "a\r\nb\r\n",
            "a\r\nb\nc\r\nd",
            "\u{feff}x\r\n",
            "a\rb\r\n",
        ] {
            assert_eq!(roundtrip(text), text);
        }
    }

    #[test]
    fn usual_ending() {
        assert!(Source::parse("a\r\nb\r\nc\n").crlf_default);
        assert!(!Source::parse("a\nb\nc\r\n").crlf_default);
        assert!(Source::parse("a\r\nb\n").crlf_default);
        assert!(!Source::parse("a\nb\r\n").crlf_default);
    }

    #[test]
    fn line_index() {
        let text = "ab\ncd\n\nef";
        let idx = LineIndex::new(text);
        assert_eq!(idx.count(), 4);
        let lines: Vec<&str> = (0..4).map(|i| idx.line(text, i)).collect();
        assert_eq!(lines, ["ab", "cd", "", "ef"]);
        assert_eq!(idx.line_of(4), 1);
        assert_eq!(LineIndex::new("a\n").count(), 1);
        assert_eq!(LineIndex::new("").count(), 0);
        assert_eq!(LineIndex::new("\n").line("\n", 0), "");
    }

    #[test]
    fn split() {
        assert_eq!(split_lines("a\nb\n"), (vec!["a", "b"], true));
        assert_eq!(split_lines("a\nb"), (vec!["a", "b"], false));
        assert_eq!(split_lines("\n"), (vec![""], true));
        assert_eq!(split_lines(""), (vec![], false));
    }
}
