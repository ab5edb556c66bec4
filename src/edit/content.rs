//! A call's result as the file will hold it, without joining it into one
//! string: ranges of the file as read (kept bytes, their own line endings
//! and BOM included) and the texts the edits brought in, in order. `nib
//! apply` streams it to the temp file, so a large file is never held twice
//! (a 200 MB file would otherwise peak at twice its size).

use std::ops::Range;

use super::pieces::{Pieces, Span};
use super::text::{Eol, Source};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Bytes of the file as read.
    Kept(Range<usize>),
    /// Text an edit brought in, with the file's line endings.
    New(String),
}

/// The new content of a file as parts of the file as read and new text:
/// `render(text)` joins them, `slices(text)` lends them for writing.
/// `text` must be the text the call was applied to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Content {
    parts: Vec<Part>,
    len: usize,
}

impl Content {
    /// The current text of `pieces` as the file should hold it, the same
    /// bytes `Pieces::render` writes: original pieces are the file's own
    /// bytes (their line endings as read), new text takes the usual ending.
    /// Worked out from the normalized text and its endings alone, so the
    /// file's bytes need not exist meanwhile (`plan` has them turned LF in
    /// place while it matches).
    pub(crate) fn of(pieces: &Pieces, src: &Source) -> Content {
        let bom = src.prefix().len();
        let norm = src.norm.as_bytes();
        // Original pieces come in ascending order: one walk over the text.
        let mut raw = src.raw_offsets();
        let mut out = Content::default();
        if bom > 0 {
            out.push(Part::Kept(0..bom));
        }
        // Whether the bytes so far end in a CR: a LF line ending right after
        // it would read back as one CRLF, so such LFs are written as CR (as
        // `Source::write_orig` and `write_new` do).
        let mut last_cr = false;
        for span in pieces.spans() {
            match span {
                Span::Orig(r) if r.is_empty() => {}
                Span::Orig(r) => {
                    let (mut a, b) = (bom + raw.raw_of(r.start), bom + raw.raw_of(r.end));
                    if last_cr {
                        // The piece's first lines, empty and ending in a
                        // plain LF: each LF a byte of the file.
                        let lfs = norm[r.clone()]
                            .iter()
                            .enumerate()
                            .take_while(|&(i, &c)| c == b'\n' && src.eol_at(r.start + i) == Eol::Lf)
                            .count();
                        if lfs > 0 {
                            out.push(Part::New("\r".repeat(lfs)));
                            a += lfs;
                        }
                    }
                    if a < b {
                        last_cr = norm[r.end - 1] == b'\n' && src.eol_at(r.end - 1) == Eol::Cr;
                        out.push(Part::Kept(a..b));
                    }
                }
                Span::New(text) => {
                    let mut s = String::with_capacity(text.len() + 1);
                    if last_cr {
                        // Stands for the bytes before, so the ending rule
                        // sees them; taken off again below.
                        s.push('\r');
                    }
                    src.write_new(text, &mut s);
                    if last_cr {
                        s.remove(0);
                    }
                    if !s.is_empty() {
                        last_cr = s.ends_with('\r');
                        out.push(Part::New(s));
                    }
                }
            }
        }
        out
    }

    fn push(&mut self, part: Part) {
        self.len += match &part {
            Part::Kept(r) => r.len(),
            Part::New(s) => s.len(),
        };
        match (self.parts.last_mut(), part) {
            (Some(Part::New(last)), Part::New(s)) => last.push_str(&s),
            (Some(Part::Kept(last)), Part::Kept(r)) if last.end == r.start => last.end = r.end,
            (_, part) => self.parts.push(part),
        }
    }

    /// The content's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The parts in order, borrowed from `text` (the text the call was
    /// applied to) and from this content.
    pub fn slices<'a>(&'a self, text: &'a str) -> Vec<&'a [u8]> {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Kept(r) => &text.as_bytes()[r.clone()],
                Part::New(s) => s.as_bytes(),
            })
            .collect()
    }

    /// The whole content as one string.
    pub fn render(&self, text: &str) -> String {
        let mut out = String::with_capacity(self.len);
        for p in &self.parts {
            match p {
                Part::Kept(r) => out.push_str(&text[r.clone()]),
                Part::New(s) => out.push_str(s),
            }
        }
        out
    }
}
