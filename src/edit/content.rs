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

#[cfg(test)]
mod tests {
    //! The content as the engine wrote it before the endings table was made
    //! small and the file turned LF-only in place, kept here as the model
    //! the new path must match byte for byte.

    use super::*;
    use crate::edit::text::{to_file_in_place, to_lf_in_place};
    use proptest::prelude::*;

    /// `Source` as it was: every break that was not a plain LF listed.
    struct Before {
        bom: bool,
        norm: String,
        endings: Vec<(usize, Eol)>,
        usual: Eol,
    }

    fn before(text: &str) -> Before {
        let (bom, body) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let bytes = body.as_bytes();
        let mut norm = String::new();
        let mut endings = Vec::new();
        let mut last = 0;
        for at in memchr::memchr_iter(b'\r', bytes) {
            norm.push_str(&body[last..at]);
            let eol = if bytes.get(at + 1) == Some(&b'\n') {
                last = at + 2;
                Eol::Crlf
            } else {
                last = at + 1;
                Eol::Cr
            };
            endings.push((norm.len(), eol));
            norm.push('\n');
        }
        norm.push_str(&body[last..]);
        // The most common ending; among those tied, the one seen first.
        let breaks: Vec<usize> = memchr::memchr_iter(b'\n', norm.as_bytes()).collect();
        let eol_of = |at: usize| {
            endings
                .iter()
                .find(|&&(p, _)| p == at)
                .map_or(Eol::Lf, |&(_, e)| e)
        };
        let kinds: Vec<Eol> = breaks.iter().map(|&at| eol_of(at)).collect();
        let count = |e: Eol| kinds.iter().filter(|&&k| k == e).count();
        let first = |e: Eol| kinds.iter().position(|&k| k == e).unwrap_or(usize::MAX);
        let usual = [Eol::Lf, Eol::Crlf, Eol::Cr]
            .into_iter()
            .max_by(|&a, &b| count(a).cmp(&count(b)).then(first(b).cmp(&first(a))))
            .filter(|_| !endings.is_empty())
            .unwrap_or(Eol::Lf);
        Before {
            bom,
            norm,
            endings,
            usual,
        }
    }

    fn push_lf_text(text: &str, out: &mut Vec<u8>) {
        let mut rest = text;
        while out.ends_with(b"\r")
            && let Some(after) = rest.strip_prefix('\n')
        {
            out.push(b'\r');
            rest = after;
        }
        out.extend_from_slice(rest.as_bytes());
    }

    /// `Pieces::render` as it was: the file's own bytes for kept text, the
    /// usual ending for new text.
    fn rendered_before(pieces: &Pieces, b: &Before) -> Vec<u8> {
        let mut out = Vec::new();
        if b.bom {
            out.extend_from_slice("\u{feff}".as_bytes());
        }
        for span in pieces.spans() {
            match span {
                Span::Orig(r) => {
                    let mut last = r.start;
                    for &(at, eol) in b.endings.iter().filter(|&&(p, _)| r.contains(&p)) {
                        push_lf_text(&b.norm[last..at], &mut out);
                        out.extend_from_slice(eol.as_str().as_bytes());
                        last = at + 1;
                    }
                    push_lf_text(&b.norm[last..r.end], &mut out);
                }
                Span::New(text) if b.usual == Eol::Lf => push_lf_text(text, &mut out),
                Span::New(text) => {
                    let ending = b.usual.as_str();
                    out.extend_from_slice(text.replace('\n', ending).as_bytes());
                }
            }
        }
        out
    }

    /// The old `eol_in`.
    fn eol_in_before(b: &Before, range: Range<usize>) -> Option<Eol> {
        let breaks = b.norm[range.clone()].matches('\n').count();
        if breaks == 0 {
            return None;
        }
        let inside: Vec<Eol> = b
            .endings
            .iter()
            .filter(|&&(p, _)| range.contains(&p))
            .map(|&(_, e)| e)
            .collect();
        match inside.first() {
            None => Some(Eol::Lf),
            Some(&e) if inside.len() == breaks && inside.iter().all(|&x| x == e) => Some(e),
            Some(_) => None,
        }
    }

    /// Lines of a few atoms, each ending in the file's main ending or, now
    /// and then, another; a BOM or not; perhaps no final ending.
    fn text() -> impl Strategy<Value = String> {
        let atoms = ["a", "b", "é", " ", "", "", "x─"];
        let endings = ["\n", "\r\n", "\r"];
        (
            any::<bool>(),
            0usize..3,
            prop::collection::vec((0usize..7, 0usize..7, 0u8..10, 0usize..3), 0..24),
            any::<bool>(),
        )
            .prop_map(move |(bom, main, lines, cut)| {
                let mut out = String::new();
                if bom {
                    out.push('\u{feff}');
                }
                for (a, b, odd, other) in lines {
                    out.push_str(atoms[a]);
                    out.push_str(atoms[b]);
                    out.push_str(endings[if odd < 3 { other } else { main }]);
                }
                if cut {
                    out.truncate(out.trim_end_matches(['\r', '\n']).len());
                }
                out
            })
    }

    /// Replacements on the LF text: (start, length) in chars, new text.
    fn edits() -> impl Strategy<Value = Vec<(usize, usize, String)>> {
        let news = ["", "n", "\n", "y\n", "\n\n", "z\nw"];
        prop::collection::vec(
            (0usize..80, 0usize..6, 0usize..6).prop_map(move |(s, l, n)| (s, l, news[n].into())),
            0..4,
        )
    }

    /// Char offsets to byte offsets, the ranges sorted, cut to the text
    /// and apart.
    fn replacements(norm: &str, picks: &[(usize, usize, String)]) -> Vec<(Range<usize>, String)> {
        let bounds: Vec<usize> = norm
            .char_indices()
            .map(|(i, _)| i)
            .chain([norm.len()])
            .collect();
        let mut reps: Vec<(Range<usize>, String)> = picks
            .iter()
            .map(|(s, l, new)| {
                let a = (*s).min(bounds.len() - 1);
                let b = (a + l).min(bounds.len() - 1);
                (bounds[a]..bounds[b], new.clone())
            })
            .collect();
        reps.sort_by_key(|(r, _)| (r.start, r.end));
        let mut apart: Vec<(Range<usize>, String)> = Vec::new();
        for (r, new) in reps {
            if apart.last().is_none_or(|(last, _)| last.end < r.start) {
                apart.push((r, new));
            }
        }
        apart
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The small table and the text turned LF in place write what the
        /// full list and the copy wrote: through `Content` (what `nib
        /// apply` streams) and through `Pieces::render` (the one string),
        /// and `eol_in` answers as before. The text is given back as read.
        #[test]
        fn the_new_endings_write_what_the_old_wrote(text in text(), picks in edits()) {
            let old = before(&text);
            let mut pieces = Pieces::new(&old.norm);
            let reps = pieces.refine(replacements(&old.norm, &picks));
            pieces.splice(reps);
            let want = rendered_before(&pieces, &old);

            let parsed = Source::parse(&text);
            prop_assert_eq!(&parsed.norm, &old.norm);
            prop_assert_eq!(parsed.usual(), old.usual);
            prop_assert_eq!(pieces.render(&parsed).into_bytes(), want.clone());
            prop_assert_eq!(Content::of(&pieces, &parsed).render(&text).into_bytes(), want.clone());

            let mut buf = text.clone();
            let endings = to_lf_in_place(&mut buf);
            let src = Source::lf(&buf, endings);
            prop_assert_eq!(&src.norm, &old.norm);
            let content = Content::of(&pieces, &src);
            for a in 0..=old.norm.len() {
                for b in a..=old.norm.len() {
                    if old.norm.is_char_boundary(a) && old.norm.is_char_boundary(b) {
                        prop_assert_eq!(src.eol_in(a..b), eol_in_before(&old, a..b));
                    }
                }
            }
            let endings = src.into_endings();
            to_file_in_place(&mut buf, &endings);
            prop_assert_eq!(&buf, &text);
            prop_assert_eq!(content.render(&buf).into_bytes(), want.clone());
            prop_assert_eq!(content.slices(&buf).concat(), want);
        }
    }

    #[test]
    fn a_crlf_file_has_no_line_in_its_endings_table() {
        let line = "    let x = compute(1, 2);\r\n";
        let mut text = format!("\u{feff}{}", line.repeat(10_000));
        let endings = to_lf_in_place(&mut text);
        assert_eq!(endings.usual(), Eol::Crlf);
        assert_eq!(endings.listed(), 0);
        // One LF line among them is the one entry.
        let mut text = format!("{}x\n{}", line.repeat(5_000), line.repeat(5_000));
        let endings = to_lf_in_place(&mut text);
        assert_eq!((endings.usual(), endings.listed()), (Eol::Crlf, 1));
        to_file_in_place(&mut text, &endings);
        assert_eq!(
            text,
            format!("{}x\n{}", line.repeat(5_000), line.repeat(5_000))
        );
    }
}
