//! Which ending each line of a file had, kept small enough for a large
//! file, and the turn of a text to LF-only and back, in its own buffer.
//!
//! A file's line breaks are nearly all of one kind, so the table holds
//! that kind (the file's usual ending) and only the breaks that differ,
//! four bytes each: a pure CRLF or lone-CR file has no entry at all
//! (a list of every CRLF was 16 bytes a line, 0.3× a file of short lines).
//! The turn to LF moves the text within its own buffer, and the turn back
//! moves it back, so a caller that owns the text holds it once: matching a
//! 200 MB CRLF file then costs no second, LF-only copy of it.
//!
//! A CR is a line ending wherever it stands (text.rs's rule): "\r\n" is
//! one CRLF, a CR not followed by LF is a lone CR. Only those bytes change;
//! everything else is moved unchanged, so UTF-8 stays valid.

use std::ops::Range;

/// How a line ended in the file (or in an old text as sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    Lf,
    Crlf,
    Cr,
}

impl Eol {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::Crlf => "\r\n",
            Eol::Cr => "\r",
        }
    }

    fn code(self) -> u32 {
        match self {
            Eol::Lf => 0,
            Eol::Crlf => 1,
            Eol::Cr => 2,
        }
    }

    fn of_code(code: u32) -> Eol {
        match code {
            1 => Eol::Crlf,
            2 => Eol::Cr,
            _ => Eol::Lf,
        }
    }
}

/// The line endings of a text that was turned LF-only: every '\n' of the
/// LF text was `usual` in the file unless `others` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endings {
    /// The file's most common ending (the first seen of those tied): what
    /// new lines get.
    usual: Eol,
    /// The '\n's (offsets in the LF text) that were not `usual`, with
    /// what they were; ascending.
    others: Listed,
    /// How many breaks were CRLF: the bytes the file has beyond its LF
    /// text.
    crlf: usize,
}

impl Default for Endings {
    fn default() -> Endings {
        Endings::plain()
    }
}

/// Offsets of a list of breaks, with their endings, in four bytes each:
/// the offset within its GiB of the text and the ending's code, and where
/// each GiB's entries start (one start for a file under 1 GiB).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    /// `(offset % GIB) << 2 | code`, ascending by offset.
    entries: Vec<u32>,
    /// `blocks[k]`: the first entry at an offset of `k * GIB` or more.
    blocks: Vec<usize>,
}

const GIB_BITS: u32 = 30;

impl Listed {
    fn with_capacity(n: usize) -> Listed {
        Listed {
            entries: Vec::with_capacity(n),
            blocks: vec![0],
        }
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Appends a break after every one listed so far.
    fn push(&mut self, at: usize, eol: Eol) {
        let block = at >> GIB_BITS;
        while self.blocks.len() <= block {
            self.blocks.push(self.entries.len());
        }
        let low = (at & ((1 << GIB_BITS) - 1)) as u32;
        self.entries.push((low << 2) | eol.code());
    }

    /// The `i`th break listed.
    fn get(&self, i: usize) -> Option<(usize, Eol)> {
        let entry = *self.entries.get(i)?;
        // A text under 1 GiB (nearly every one) has one block: no search.
        let block = match self.blocks.len() {
            0 | 1 => 0,
            _ => self.blocks.partition_point(|&b| b <= i).saturating_sub(1),
        };
        let at = (block << GIB_BITS) | (entry >> 2) as usize;
        Some((at, Eol::of_code(entry & 3)))
    }

    /// The index of the first break listed at `at` or after.
    fn first_from(&self, at: usize) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid) {
                Some((p, _)) if p < at => lo = mid + 1,
                _ => hi = mid,
            }
        }
        lo
    }
}

impl Endings {
    /// The endings of a text with no CR: every break a LF.
    pub fn plain() -> Endings {
        Endings {
            usual: Eol::Lf,
            others: Listed::with_capacity(0),
            crlf: 0,
        }
    }

    /// The ending new lines get.
    pub fn usual(&self) -> Eol {
        self.usual
    }

    /// True when every break was a LF: the LF text is the file's.
    pub fn is_plain(&self) -> bool {
        self.usual == Eol::Lf && self.others.is_empty()
    }

    /// How many breaks the table lists one by one (those not `usual`).
    #[cfg(test)]
    pub fn listed(&self) -> usize {
        self.others.len()
    }

    /// What the '\n' at `at` of the LF text was in the file.
    pub fn eol_at(&self, at: usize) -> Eol {
        match self.others.get(self.others.first_from(at)) {
            Some((p, eol)) if p == at => eol,
            _ => self.usual,
        }
    }

    /// The listed breaks in `range` of the LF text, ascending.
    pub fn others_in(&self, range: Range<usize>) -> impl Iterator<Item = (usize, Eol)> + '_ {
        (self.others.first_from(range.start)..self.others.len())
            .filter_map(move |i| self.others.get(i))
            .take_while(move |&(p, _)| p < range.end)
    }

    /// Each break in `lf[range]` that is not a plain LF in the file, with
    /// what it was, ascending (`lf` is the LF text). With LF usual only the
    /// listed breaks are looked at; otherwise every '\n' of the range, and
    /// those that were LF are yielded too.
    pub fn breaks<'t>(&'t self, lf: &'t str, range: Range<usize>) -> Breaks<'t> {
        let first = self.others.first_from(range.start);
        Breaks {
            endings: self,
            lf: lf.as_bytes(),
            next_other: first,
            at: range.start,
            end: range.end,
        }
    }

    /// A cursor from offsets in the LF text to offsets in the file's body.
    pub fn raw_offsets<'t>(&'t self, lf: &'t str) -> RawOffsets<'t> {
        RawOffsets {
            endings: self,
            lf: lf.as_bytes(),
            next_other: 0,
            counted_to: 0,
            breaks: 0,
            crlf: 0,
        }
    }

    /// The endings of `body` (no BOM), counted: the usual one and the
    /// table's size, before anything is moved.
    fn tally(body: &[u8]) -> (Eol, usize, usize) {
        // Counted by the searches themselves, not a step per line.
        let breaks = memchr::memchr_iter(b'\n', body).count();
        let crlf = memchr::memmem::find_iter(body, b"\r\n").count();
        let cr = memchr::memchr_iter(b'\r', body).count() - crlf;
        let lf = breaks - crlf;
        let counts = [(Eol::Lf, lf), (Eol::Crlf, crlf), (Eol::Cr, cr)];
        let most = lf.max(crlf).max(cr);
        let tied: Vec<Eol> = counts
            .iter()
            .filter(|&&(_, n)| n == most)
            .map(|&(e, _)| e)
            .collect();
        let usual = match tied.as_slice() {
            [one] => *one,
            _ => first_seen(body, &tied),
        };
        let listed = breaks + cr - counts.iter().find(|c| c.0 == usual).map_or(0, |c| c.1);
        (usual, listed, crlf)
    }
}

/// Of the endings `among`, the one whose first break comes first in
/// `body`.
fn first_seen(body: &[u8], among: &[Eol]) -> Eol {
    let mut from = 0;
    while let Some(k) = memchr::memchr2(b'\r', b'\n', &body[from..]) {
        let at = from + k;
        let (eol, next) = break_at(body, at);
        if among.contains(&eol) {
            return eol;
        }
        from = next;
    }
    Eol::Lf
}

/// The break starting at `at` (a '\r' or '\n' of `body`) and where the
/// text after it starts.
fn break_at(body: &[u8], at: usize) -> (Eol, usize) {
    match body[at] {
        b'\n' => (Eol::Lf, at + 1),
        _ if body.get(at + 1) == Some(&b'\n') => (Eol::Crlf, at + 2),
        _ => (Eol::Cr, at + 1),
    }
}

/// Turns `buf[start..]` LF-only where it stands (every CRLF and lone CR
/// becomes one '\n'; `buf[..start]`, a BOM, is left alone) and returns
/// what it takes to turn it back (`to_file`).
pub(crate) fn to_lf(buf: &mut Vec<u8>, start: usize) -> Endings {
    let body = &buf[start..];
    if memchr::memchr(b'\r', body).is_none() {
        return Endings::plain();
    }
    let (usual, listed, crlf) = Endings::tally(body);
    let mut others = Listed::with_capacity(listed);
    let (mut read, mut write) = (start, start);
    let len = buf.len();
    loop {
        let rest = &buf[read..];
        // With LF usual only the CRs need a look; otherwise every break.
        let found = match usual {
            Eol::Lf => memchr::memchr(b'\r', rest),
            _ => memchr::memchr2(b'\r', b'\n', rest),
        };
        let Some(k) = found else { break };
        let at = read + k;
        let (eol, next) = break_at(buf, at);
        buf.copy_within(read..at, write);
        write += at - read;
        buf[write] = b'\n';
        if eol != usual {
            others.push(write - start, eol);
        }
        write += 1;
        read = next;
    }
    buf.copy_within(read..len, write);
    buf.truncate(write + (len - read));
    Endings {
        usual,
        others,
        crlf,
    }
}

/// Turns `buf[start..]`, made LF-only by `to_lf`, back into the file's
/// bytes where it stands: the text moves toward the end, from the last
/// line back, to make room for each CRLF's CR.
pub(crate) fn to_file(buf: &mut Vec<u8>, start: usize, endings: &Endings) {
    if endings.is_plain() {
        return;
    }
    let lf_len = buf.len();
    buf.resize(lf_len + endings.crlf, 0);
    let mut read = lf_len;
    let mut write = buf.len();
    let mut next_other = endings.others.len();
    // The '\n' before `read` that needs writing: with LF usual only the
    // listed ones (the others stay LF where they are); otherwise each.
    while read > start {
        let at = match endings.usual {
            Eol::Lf => match next_other
                .checked_sub(1)
                .and_then(|i| endings.others.get(i))
            {
                Some((p, _)) => start + p,
                None => break,
            },
            _ => match memchr::memrchr(b'\n', &buf[start..read]) {
                Some(k) => start + k,
                None => break,
            },
        };
        let eol = match next_other
            .checked_sub(1)
            .and_then(|i| endings.others.get(i))
        {
            Some((p, eol)) if start + p == at => {
                next_other -= 1;
                eol
            }
            _ => endings.usual,
        };
        let tail = read - (at + 1);
        buf.copy_within(at + 1..read, write - tail);
        write -= tail;
        let bytes = eol.as_str().as_bytes();
        write -= bytes.len();
        buf[write..write + bytes.len()].copy_from_slice(bytes);
        read = at;
    }
    // What is left before the first rewritten break moves no more.
    debug_assert_eq!(read, write);
}

/// The breaks of a range that are not plain LFs, or every break (see
/// `Endings::breaks`).
pub(crate) struct Breaks<'t> {
    endings: &'t Endings,
    lf: &'t [u8],
    next_other: usize,
    at: usize,
    end: usize,
}

impl Iterator for Breaks<'_> {
    type Item = (usize, Eol);

    fn next(&mut self) -> Option<(usize, Eol)> {
        let other = self.endings.others.get(self.next_other);
        let at = match self.endings.usual {
            Eol::Lf => other?.0,
            _ => self.at + memchr::memchr(b'\n', &self.lf[self.at..self.end])?,
        };
        if at >= self.end {
            return None;
        }
        let eol = match other {
            Some((p, eol)) if p == at => {
                self.next_other += 1;
                eol
            }
            _ => self.endings.usual,
        };
        self.at = at + 1;
        Some((at, eol))
    }
}

/// Offsets in the LF text turned into offsets in the file's body (after
/// any BOM): one more for each CRLF before. Asked in ascending order, the
/// whole walk costs one pass over the text.
pub(crate) struct RawOffsets<'t> {
    endings: &'t Endings,
    lf: &'t [u8],
    next_other: usize,
    /// The text before this offset is counted in `breaks` and `crlf`.
    counted_to: usize,
    /// '\n's before `counted_to`.
    breaks: usize,
    /// Listed CRLFs before `counted_to` (LF text offsets of listed breaks
    /// below it are passed in `next_other`).
    crlf: usize,
}

impl RawOffsets<'_> {
    /// Where `at` of the LF text is in the file's body. `at` never goes
    /// back from one call to the next.
    pub fn raw_of(&mut self, at: usize) -> usize {
        let others = &self.endings.others;
        let mut listed_before = self.next_other;
        while let Some((p, eol)) = others.get(listed_before) {
            if p >= at {
                break;
            }
            self.crlf += usize::from(eol == Eol::Crlf);
            listed_before += 1;
        }
        self.next_other = listed_before;
        if self.endings.usual != Eol::Crlf {
            return at + self.crlf;
        }
        // CRLF usual: every break before `at` but the listed ones (none of
        // them a CRLF) was one.
        if at > self.counted_to {
            self.breaks += memchr::memchr_iter(b'\n', &self.lf[self.counted_to..at]).count();
            self.counted_to = at;
        }
        at + self.breaks - listed_before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table as it was before it was made small: every break that was
    /// not a LF, with what it was, and the LF text beside.
    fn every_break(text: &str) -> (String, Vec<(usize, Eol)>) {
        let b = text.as_bytes();
        let mut lf = String::new();
        let mut list = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\r' if b.get(i + 1) == Some(&b'\n') => {
                    list.push((lf.len(), Eol::Crlf));
                    lf.push('\n');
                    i += 2;
                }
                b'\r' => {
                    list.push((lf.len(), Eol::Cr));
                    lf.push('\n');
                    i += 1;
                }
                _ => {
                    let ch = text[i..].chars().next().unwrap();
                    lf.push(ch);
                    i += ch.len_utf8();
                }
            }
        }
        (lf, list)
    }

    const SAMPLES: &[&str] = &[
        "",
        "a",
        "a\n",
        "a\r\nb\r\n",
        "a\r\nb\nc\r\nd",
        "a\rb\r\n",
        "one\rtwo\r\rthree\r",
        "\r\r\n\n\r",
        "\n\n\r\n",
        "é\r\nü\rñ\n\r\n\r\n",
        "x\r\ny\r\nz\n",
        "x\ny\rz\r",
    ];

    #[test]
    fn to_lf_and_back_gives_the_bytes_again() {
        for text in SAMPLES {
            for start in [0, 3] {
                let with_bom = if start == 3 {
                    format!("\u{feff}{text}")
                } else {
                    text.to_string()
                };
                let mut buf = with_bom.clone().into_bytes();
                let endings = to_lf(&mut buf, start);
                let (lf, list) = every_break(text);
                assert_eq!(&buf[start..], lf.as_bytes(), "{text:?}");
                for at in memchr::memchr_iter(b'\n', lf.as_bytes()) {
                    let want = list
                        .iter()
                        .find(|&&(p, _)| p == at)
                        .map_or(Eol::Lf, |&(_, e)| e);
                    assert_eq!(endings.eol_at(at), want, "{text:?} at {at}");
                }
                to_file(&mut buf, start, &endings);
                assert_eq!(buf, with_bom.as_bytes(), "{text:?}");
            }
        }
    }

    #[test]
    fn breaks_past_a_gib_keep_their_offsets_in_four_bytes() {
        let gib = 1usize << 30;
        let breaks = [
            (5, Eol::Crlf),
            (gib - 1, Eol::Cr),
            (gib + 7, Eol::Cr),
            (3 * gib, Eol::Lf),
            (3 * gib + 1, Eol::Crlf),
        ];
        let mut listed = Listed::with_capacity(breaks.len());
        for &(at, eol) in &breaks {
            listed.push(at, eol);
        }
        let got: Vec<(usize, Eol)> = (0..listed.len()).filter_map(|i| listed.get(i)).collect();
        assert_eq!(got, breaks);
        assert_eq!(listed.first_from(0), 0);
        assert_eq!(listed.first_from(6), 1);
        assert_eq!(listed.first_from(gib), 2);
        assert_eq!(listed.first_from(2 * gib), 3);
        assert_eq!(listed.first_from(3 * gib + 1), 4);
        assert_eq!(listed.first_from(4 * gib), 5);
    }

    #[test]
    fn a_file_of_one_ending_lists_no_break() {
        for text in ["a\r\nb\r\n\r\nc", "a\rb\r\rc\r", "a\nb\n"] {
            let mut buf = text.as_bytes().to_vec();
            let endings = to_lf(&mut buf, 0);
            assert_eq!(endings.listed(), 0, "{text:?}");
        }
        let mut buf = b"a\r\nb\r\nc\nd\r\n".to_vec();
        let endings = to_lf(&mut buf, 0);
        assert_eq!((endings.usual(), endings.listed()), (Eol::Crlf, 1));
    }

    #[test]
    fn raw_offsets_count_the_crlfs_before() {
        for text in SAMPLES {
            let mut buf = text.as_bytes().to_vec();
            let endings = to_lf(&mut buf, 0);
            let lf = String::from_utf8(buf).unwrap();
            let mut cursor = endings.raw_offsets(&lf);
            let (_, list) = every_break(text);
            for at in 0..=lf.len() {
                let crlfs = list
                    .iter()
                    .filter(|&&(p, e)| p < at && e == Eol::Crlf)
                    .count();
                assert_eq!(cursor.raw_of(at), at + crlfs, "{text:?} at {at}");
            }
        }
    }

    #[test]
    fn breaks_name_every_ending_that_is_not_lf() {
        for text in SAMPLES {
            let mut buf = text.as_bytes().to_vec();
            let endings = to_lf(&mut buf, 0);
            let lf = String::from_utf8(buf).unwrap();
            let (_, list) = every_break(text);
            for a in 0..=lf.len() {
                for b in a..=lf.len() {
                    let got: Vec<(usize, Eol)> = endings
                        .breaks(&lf, a..b)
                        .filter(|&(_, e)| e != Eol::Lf)
                        .collect();
                    let want: Vec<(usize, Eol)> = list
                        .iter()
                        .copied()
                        .filter(|&(p, _)| a <= p && p < b)
                        .collect();
                    assert_eq!(got, want, "{text:?} {a}..{b}");
                }
            }
        }
    }
}
