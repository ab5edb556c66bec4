//! The file's text as the engine compares it, and how to put it back.
//!
//! Matching happens on LF-only text without a BOM. What was taken out to get
//! there is remembered so that writing restores it: the BOM, and which line
//! ended in CRLF or in a lone CR (old Mac files; a CR not followed by LF is a
//! line ending wherever it appears, as in universal-newline reading; the
//! table is `endings.rs`'). The model's old and new are read the same
//! way, so neither the file nor an edit's text has a CR left that is not a
//! line ending. The LF text is a copy (`Source::parse`), or the caller's
//! own buffer turned LF where it stands and back after (`to_lf_in_place`,
//! `to_file_in_place`), so a large file is not held twice.
//!
//! Untouched lines keep their own ending (a mixed file stays mixed); lines
//! the edits bring in take the file's usual ending. What is written must
//! read back as the lines the diff shows: a lone CR followed by a LF reads
//! as one CRLF, so an empty line that would end in LF right after a line
//! ending in a lone CR ends in a CR instead.

use std::borrow::Cow;
use std::ops::Range;

pub(crate) use super::endings::Eol;
use super::endings::{Endings, RawOffsets, to_file, to_lf};

const BOM: char = '\u{feff}';

/// A file's text, normalized for matching.
#[derive(Debug)]
pub(crate) struct Source<'a> {
    pub bom: bool,
    /// LF-only text without the BOM.
    pub norm: Cow<'a, str>,
    /// What each '\n' of `norm` was in the file, and the ending new lines
    /// get.
    endings: Endings,
}

impl<'a> Source<'a> {
    /// `text` normalized: borrowed when it has no CR, else a LF copy.
    pub fn parse(text: &'a str) -> Source<'a> {
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if memchr::memchr(b'\r', body.as_bytes()).is_none() {
            return Source::lf(text, Endings::plain());
        }
        let mut buf = body.as_bytes().to_vec();
        let endings = to_lf(&mut buf, 0);
        Source {
            bom,
            norm: Cow::Owned(utf8(buf)),
            endings,
        }
    }

    /// A text `to_lf_in_place` turned LF-only (BOM included, if any), with
    /// the endings it returned: the text is borrowed, not copied.
    pub fn lf(text: &'a str, endings: Endings) -> Source<'a> {
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        Source {
            bom,
            norm: Cow::Borrowed(body),
            endings,
        }
    }

    /// The endings, for turning the text back (`to_file_in_place`).
    pub fn into_endings(self) -> Endings {
        self.endings
    }

    /// The ending new lines get: the file's most common one (the first
    /// seen of those tied).
    pub fn usual(&self) -> Eol {
        self.endings.usual()
    }

    /// Append `norm[range]` to `out` with the file's own line endings.
    pub fn write_orig(&self, range: Range<usize>, out: &mut String) {
        let mut last = range.start;
        for (at, eol) in self.endings.breaks(&self.norm, range.clone()) {
            push_lf_text(&self.norm[last..at], out);
            match eol {
                Eol::Lf => push_lf_text("\n", out),
                eol => out.push_str(eol.as_str()),
            }
            last = at + 1;
        }
        push_lf_text(&self.norm[last..range.end], out);
    }

    /// Append text the edits brought in, with the file's usual ending.
    pub fn write_new(&self, text: &str, out: &mut String) {
        match self.usual() {
            Eol::Lf => push_lf_text(text, out),
            eol => {
                let mut last = 0;
                for at in memchr::memchr_iter(b'\n', text.as_bytes()) {
                    out.push_str(&text[last..at]);
                    out.push_str(eol.as_str());
                    last = at + 1;
                }
                out.push_str(&text[last..]);
            }
        }
    }

    /// The file's own endings of the line breaks in `norm[range]`, when
    /// they are all one kind; None for a range without a break or with
    /// mixed ones.
    pub fn eol_in(&self, range: Range<usize>) -> Option<Eol> {
        let breaks = memchr::memchr_iter(b'\n', &self.norm.as_bytes()[range.clone()]).count();
        if breaks == 0 {
            return None;
        }
        let mut listed = 0;
        let mut kind: Option<Eol> = None;
        for (_, eol) in self.endings.others_in(range) {
            listed += 1;
            match kind {
                Some(k) if k != eol => return None,
                _ => kind = Some(eol),
            }
        }
        match kind {
            None => Some(self.usual()),
            Some(k) if listed == breaks => Some(k),
            Some(_) => None,
        }
    }

    /// What the '\n' at `at` of `norm` was in the file.
    pub fn eol_at(&self, at: usize) -> Eol {
        self.endings.eol_at(at)
    }

    /// Offsets in `norm` turned into offsets in the file as read (its BOM
    /// included), asked in ascending order.
    pub fn raw_offsets(&self) -> RawOffsets<'_> {
        self.endings.raw_offsets(&self.norm)
    }

    /// True when every line ends in LF: the written text is then the
    /// normalized text with the prefix.
    pub fn lf_only(&self) -> bool {
        self.endings.is_plain()
    }

    /// The prefix every written file starts with.
    pub fn prefix(&self) -> &'static str {
        if self.bom { "\u{feff}" } else { "" }
    }
}

/// Turns `text` LF-only where it stands (BOM kept), for `Source::lf`; the
/// endings returned turn it back (`to_file_in_place`). A text without CR
/// is left as it is.
pub(crate) fn to_lf_in_place(text: &mut String) -> Endings {
    let start = if text.starts_with(BOM) {
        BOM.len_utf8()
    } else {
        0
    };
    if memchr::memchr(b'\r', &text.as_bytes()[start..]).is_none() {
        return Endings::plain();
    }
    let mut buf = std::mem::take(text).into_bytes();
    let endings = to_lf(&mut buf, start);
    *text = utf8(buf);
    endings
}

/// Turns a text `to_lf_in_place` made LF-only back into the bytes it was.
pub(crate) fn to_file_in_place(text: &mut String, endings: &Endings) {
    if endings.is_plain() {
        return;
    }
    let start = if text.starts_with(BOM) {
        BOM.len_utf8()
    } else {
        0
    };
    let mut buf = std::mem::take(text).into_bytes();
    to_file(&mut buf, start, endings);
    *text = utf8(buf);
}

/// Bytes that were UTF-8 before only CRs and LFs were moved or changed:
/// still UTF-8 (the check is std's, a fast pass over ASCII).
fn utf8(buf: Vec<u8>) -> String {
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Append text whose '\n's are written as LF. A LF right after a lone CR
/// would join it into one CRLF, and the line between them, empty, would be
/// gone from the file: such a line ends in CR instead, like the one before
/// it. Only an empty line can meet a CR this way: neither the file's text
/// nor an edit's has a CR that is not a line ending, and the file as read
/// never has a CR ending before a LF one.
fn push_lf_text(text: &str, out: &mut String) {
    let mut rest = text;
    while out.ends_with('\r')
        && let Some(after) = rest.strip_prefix('\n')
    {
        out.push('\r');
        rest = after;
    }
    out.push_str(rest);
}

/// An edit's text as it is compared: "\r\n" and a lone "\r" turned into
/// "\n", as the file is read. A lone CR is a line ending in old and new as
/// in the file, even in a file that has none: written as sent, it would be
/// one when the file is next read, and the file would not have the lines
/// the diff showed.
/// The one kind of line break `text` uses, as sent; None without a break
/// or with mixed ones.
pub(crate) fn eol_of(text: &str) -> Option<Eol> {
    let bytes = text.as_bytes();
    let mut seen: Option<Eol> = None;
    for (i, &b) in bytes.iter().enumerate() {
        let e = match b {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => Eol::Crlf,
            b'\r' => Eol::Cr,
            b'\n' if i > 0 && bytes[i - 1] == b'\r' => continue,
            b'\n' => Eol::Lf,
            _ => continue,
        };
        match seen {
            Some(s) if s != e => return None,
            _ => seen = Some(e),
        }
    }
    seen
}

pub(crate) fn lf(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// Start offsets of the lines of a text. A final '\n' ends the last line; it
/// does not start an empty one.
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    starts: Vec<usize>,
    len: usize,
    ends_nl: bool,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        push_line_starts(text.as_bytes(), &mut starts);
        if starts.last() == Some(&text.len()) {
            starts.pop();
        }
        LineIndex {
            starts,
            len: text.len(),
            ends_nl: text.ends_with('\n'),
        }
    }

    /// The index of a text `len` bytes long from its line starts (0 first,
    /// ascending, each after a '\n'; with or without a start at `len`).
    pub fn from_starts(mut starts: Vec<usize>, len: usize, ends_nl: bool) -> LineIndex {
        if starts.last() == Some(&len) {
            starts.pop();
        }
        LineIndex {
            starts,
            len,
            ends_nl,
        }
    }

    /// Where each line starts.
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }

    /// Whether the text ends in '\n'.
    pub fn ends_nl(&self) -> bool {
        self.ends_nl
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

/// The offset after each '\n' of `bytes`, appended to `starts`. Eight
/// bytes at a time: lines are short, and a search restarted after every
/// '\n' pays its setup once per line.
fn push_line_starts(bytes: &[u8], starts: &mut Vec<usize>) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const NL: u64 = ONES * b'\n' as u64;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        let x = u64::from_le_bytes(word) ^ NL;
        // Nonzero exactly when some byte of x is zero (some byte is '\n').
        if x.wrapping_sub(ONES) & !x & (ONES << 7) != 0 {
            for (k, &b) in w.iter().enumerate() {
                if b == b'\n' {
                    starts.push(at + k + 1);
                }
            }
        }
        at += 8;
    }
    for (k, &b) in words.remainder().iter().enumerate() {
        if b == b'\n' {
            starts.push(at + k + 1);
        }
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

    #[test]
    fn line_starts_word_at_a_time_match_a_byte_search() {
        for text in [
            "",
            "\n",
            "a\nb",
            "1234567\n",
            "12345678\n\n\n123456789\nx",
            "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
            "é\nüñ\n\u{feff}x\n\u{0a0a}\n",
        ] {
            let mut starts = vec![0];
            push_line_starts(text.as_bytes(), &mut starts);
            let mut want = vec![0];
            want.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
            assert_eq!(starts, want, "{text:?}");
        }
    }

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
            "one\rtwo\r\rthree\r",
            "\r\r\n\n\r",
        ] {
            assert_eq!(roundtrip(text), text);
        }
    }

    #[test]
    fn usual_ending() {
        let usual = |t: &str| Source::parse(t).usual();
        assert_eq!(usual("a\r\nb\r\nc\n"), Eol::Crlf);
        assert_eq!(usual("a\nb\nc\r\n"), Eol::Lf);
        assert_eq!(usual("a\r\nb\n"), Eol::Crlf);
        assert_eq!(usual("a\nb\r\n"), Eol::Lf);
        assert_eq!(usual("a\rb\rc"), Eol::Cr);
        assert_eq!(usual("one\r\ntwo\rthree\nfour\r\n"), Eol::Crlf);
        assert_eq!(usual("x"), Eol::Lf);
        assert_eq!(usual("a\r\nb\nc\nd\re\r"), Eol::Lf);
    }

    #[test]
    fn lone_cr_is_a_line_ending() {
        let src = Source::parse("a\rb\r\nc\rd");
        assert_eq!(src.norm, "a\nb\nc\nd");
        let mut out = String::new();
        src.write_new("x\ny\n", &mut out);
        assert_eq!(out, "x\ry\r");
        assert_eq!(lf("a\rb\r\nc"), "a\nb\nc");
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
