//! The text as edits leave it, kept as pieces of the original and new text.
//!
//! Edits apply in order, each to the text the previous one left. Copying a
//! 10 MB file once per edit would make 100 edits cost 100 copies, so the
//! current text is a list of pieces instead: ranges of the original (whose
//! matches were all found in one pass before the first edit) and strings the
//! edits brought in. A match inside an original piece comes from that one
//! pass; a match touching new text or crossing a seam between pieces is
//! found by searching just around the seams. Every step is linear in the
//! number of pieces, never in the size of the file.

use std::ops::Range;

use memchr::memmem;

use super::text::Source;

#[derive(Debug, Clone)]
enum Piece {
    /// A range of the original (normalized) text.
    Orig(Range<usize>),
    /// Text an edit brought in.
    New(String),
}

impl Piece {
    fn len(&self) -> usize {
        match self {
            Piece::Orig(r) => r.len(),
            Piece::New(s) => s.len(),
        }
    }
}

/// One change between the original and the current text, in byte offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

#[derive(Debug)]
pub(crate) struct Pieces<'s> {
    orig: &'s str,
    list: Vec<Piece>,
}

impl<'s> Pieces<'s> {
    pub fn new(orig: &'s str) -> Pieces<'s> {
        let list = if orig.is_empty() {
            Vec::new()
        } else {
            vec![Piece::Orig(0..orig.len())]
        };
        Pieces { orig, list }
    }

    pub fn len(&self) -> usize {
        self.list.iter().map(Piece::len).sum()
    }

    fn bytes<'p>(&'p self, piece: &'p Piece) -> &'p [u8] {
        match piece {
            Piece::Orig(r) => &self.orig.as_bytes()[r.clone()],
            Piece::New(s) => s.as_bytes(),
        }
    }

    /// Every start of `pat` in the current text, overlapping ones included,
    /// ascending. `orig_hits` are the starts of `pat` in the original text.
    pub fn find_all(&self, pat: &str, orig_hits: &[usize]) -> Vec<usize> {
        let len = pat.len();
        let mut found = Vec::new();
        let mut seams = Vec::new();
        let mut at = 0;
        for piece in &self.list {
            match piece {
                Piece::Orig(r) if r.len() >= len => {
                    let first = orig_hits.partition_point(|&h| h < r.start);
                    let hits = orig_hits[first..].iter().take_while(|&&h| h + len <= r.end);
                    found.extend(hits.map(|&h| at + h - r.start));
                }
                Piece::Orig(_) => {}
                Piece::New(s) => {
                    found.extend(find_overlapping(s.as_bytes(), pat.as_bytes()).map(|h| at + h))
                }
            }
            at += piece.len();
            seams.push(at);
        }
        seams.pop();
        // A match that crosses a seam lies within len-1 bytes on each side.
        for seam in seams {
            let window = seam.saturating_sub(len - 1)..(seam + len - 1).min(at);
            let bytes = self.slice_bytes(window.clone());
            for h in find_overlapping(&bytes, pat.as_bytes()) {
                let start = window.start + h;
                if start < seam && seam < start + len {
                    found.push(start);
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The current text's bytes in `range`.
    pub fn slice_bytes(&self, range: Range<usize>) -> Vec<u8> {
        let mut out = Vec::with_capacity(range.len());
        let mut at = 0;
        for piece in &self.list {
            let len = piece.len();
            let (lo, hi) = (range.start.max(at), range.end.min(at + len));
            if lo < hi {
                out.extend_from_slice(&self.bytes(piece)[lo - at..hi - at]);
            }
            at += len;
            if at >= range.end {
                break;
            }
        }
        out
    }

    /// The current text, LF-normalized, as one string.
    pub fn materialize(&self) -> String {
        let mut out = String::with_capacity(self.len());
        for piece in &self.list {
            match piece {
                Piece::Orig(r) => out.push_str(&self.orig[r.clone()]),
                Piece::New(s) => out.push_str(s),
            }
        }
        out
    }

    /// The current text as the file should hold it: BOM and line endings
    /// restored.
    pub fn render(&self, src: &Source) -> String {
        let mut out = String::with_capacity(self.len() + self.len() / 16 + 3);
        out.push_str(src.prefix());
        for piece in &self.list {
            match piece {
                Piece::Orig(r) => src.write_orig(r.clone(), &mut out),
                Piece::New(s) => src.write_new(s, &mut out),
            }
        }
        out
    }

    /// Replace each range of the current text with its string. Ranges must
    /// be ascending and must not overlap.
    pub fn splice(&mut self, replacements: Vec<(Range<usize>, String)>) {
        let mut out = Vec::with_capacity(self.list.len() + 2 * replacements.len());
        let mut reps = replacements.into_iter().peekable();
        // Everything before `skip_to` is being replaced and is dropped.
        let mut skip_to = 0;
        let mut at = 0;
        for piece in std::mem::take(&mut self.list) {
            let end = at + piece.len();
            let mut pos = skip_to.clamp(at, end);
            while let Some((range, _)) = reps.peek() {
                if range.start > end || (range.start == end && !range.is_empty()) {
                    break;
                }
                let Some((range, text)) = reps.next() else {
                    break;
                };
                push_part(&mut out, &piece, pos - at..range.start - at);
                if !text.is_empty() {
                    out.push(Piece::New(text));
                }
                skip_to = range.end;
                pos = range.end.min(end);
            }
            push_part(&mut out, &piece, pos - at..end - at);
            at = end;
        }
        for (_, text) in reps {
            if !text.is_empty() {
                out.push(Piece::New(text));
            }
        }
        self.list = merge_new(out);
    }

    /// What changed between the original and the current text, ascending.
    pub fn changes(&self) -> Vec<Change> {
        let mut changes = Vec::new();
        let (mut old_at, mut new_at) = (0, 0);
        let mut new_pos = 0;
        for piece in &self.list {
            if let Piece::Orig(r) = piece {
                if r.start > old_at || new_pos > new_at {
                    changes.push(Change {
                        old: old_at..r.start,
                        new: new_at..new_pos,
                    });
                }
                old_at = r.end;
                new_at = new_pos + r.len();
            }
            new_pos += piece.len();
        }
        if old_at < self.orig.len() || new_pos > new_at {
            changes.push(Change {
                old: old_at..self.orig.len(),
                new: new_at..new_pos,
            });
        }
        changes
    }
}

fn push_part(out: &mut Vec<Piece>, piece: &Piece, part: Range<usize>) {
    if part.is_empty() {
        return;
    }
    out.push(match piece {
        Piece::Orig(r) => Piece::Orig(r.start + part.start..r.start + part.end),
        Piece::New(s) => Piece::New(s[part].to_string()),
    });
}

/// Join neighbouring new pieces, so seams stay few.
fn merge_new(list: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(list.len());
    for piece in list {
        match (out.last_mut(), piece) {
            (Some(Piece::New(prev)), Piece::New(s)) => prev.push_str(&s),
            (Some(Piece::Orig(prev)), Piece::Orig(r)) if prev.end == r.start => prev.end = r.end,
            (_, piece) => out.push(piece),
        }
    }
    out
}

/// Starts of `needle` in `hay`, overlapping ones included.
pub(crate) fn find_overlapping<'a>(
    hay: &'a [u8],
    needle: &'a [u8],
) -> impl Iterator<Item = usize> + 'a {
    let finder = memmem::Finder::new(needle);
    let mut from = 0;
    std::iter::from_fn(move || {
        let hit = from + finder.find(hay.get(from..)?)?;
        from = hit + 1;
        Some(hit)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(text: &str, pat: &str) -> Vec<usize> {
        find_overlapping(text.as_bytes(), pat.as_bytes()).collect()
    }

    #[test]
    fn overlapping_hits() {
        assert_eq!(hits("aaaa", "aa"), [0, 1, 2]);
        assert_eq!(hits("foo\nfoo\nfoo\n", "foo\nfoo\n"), [0, 4]);
    }

    #[test]
    fn splice_and_find_across_seams() {
        let orig = "hello world, hello moon";
        let mut p = Pieces::new(orig);
        p.splice(vec![(6..11, "there".into())]);
        assert_eq!(p.materialize(), "hello there, hello moon");
        // "o there" crosses the seam between an original piece and a new one.
        assert_eq!(p.find_all("o there", &[]), [4]);
        assert_eq!(p.find_all("hello", &hits(orig, "hello")), [0, 13]);
        p.splice(vec![(0..5, "".into()), (13..18, "bye".into())]);
        assert_eq!(p.materialize(), " there, bye moon");
        assert_eq!(p.len(), 16);
    }

    #[test]
    fn splice_at_edges() {
        let mut p = Pieces::new("abc");
        p.splice(vec![(0..0, "<".into()), (3..3, ">".into())]);
        assert_eq!(p.materialize(), "<abc>");
        p.splice(vec![(0..5, "x".into())]);
        assert_eq!(p.materialize(), "x");
        let mut p = Pieces::new("");
        p.splice(vec![(0..0, "new".into())]);
        assert_eq!(p.materialize(), "new");
    }

    #[test]
    fn changes_map_old_to_new() {
        let mut p = Pieces::new("one two three");
        p.splice(vec![(4..7, "2".into())]);
        assert_eq!(
            p.changes(),
            [Change {
                old: 4..7,
                new: 4..5
            }]
        );
        p.splice(vec![(0..3, "1".into())]);
        assert_eq!(
            p.changes(),
            [
                Change {
                    old: 0..3,
                    new: 0..1
                },
                Change {
                    old: 4..7,
                    new: 2..3
                }
            ]
        );
    }
}
