//! Decoding a sink value the way someone hiding a secret would have
//! encoded it, so the ledger can look for the secret in what comes out:
//! the common codecs (base64, base64url, hex in any case with or without
//! `\x`, `0x`, `%` or `:` between bytes, base32 at any offset, the three
//! base85 alphabets, reversal, rot13, and zlib or gzip streams inside
//! decoded bytes) composed up to three deep (`rev∘base64`,
//! `base64∘base64∘hex`, `base64∘gzip`…). The ledger matches the decoded
//! text against fragments of every secret it knows, so half a secret, or
//! an 8-character piece of one, is found whatever the codecs were.
//!
//! Every reading goes into one buffer, so a value's thousands of runs (a
//! lockfile's hashes) cost no allocation each. Bounded: the first codec's
//! readings are linear in the value (a few per run), and what is read
//! deeper (only text that decoded to something printable, or a stream
//! that inflated) is capped at a multiple of the value's size.

mod base85;
mod codecs;
mod escapes;

use std::sync::OnceLock;

use regex::bytes::Regex;

use base85::{base85_parts, base85_runs};
use escapes::codes_in_a_row;
pub(crate) use escapes::{Unescaped, char_codes, code_runs, unescaped};

/// Every decoded reading of a value, one after another in `text`, each
/// followed by a 0 byte.
#[derive(Debug, Default)]
pub(crate) struct Readings {
    pub text: Vec<u8>,
    parts: Vec<Part>,
    /// The deeper readings stopped at the budget: what was left unread
    /// holds more nested encodings than any real file does.
    pub cut_short: bool,
    /// The value itself with its escapes decoded, if it has any.
    pub unescaped: Option<Unescaped>,
    /// Each run's first decoding (hex, else base64, from its first
    /// character), kept whatever it decoded to, each followed by a 0
    /// byte: bytes under a key (XOR) are not text, and `text` keeps only
    /// text.
    pub bytes: Vec<u8>,
    /// Where each decoding starts in `bytes`, and the value's bytes it
    /// came from.
    byte_spans: Vec<(usize, (usize, usize))>,
}

/// One reading: where it starts in `Readings::text`, the bytes of the
/// original value it came from, and how many codecs it took.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Part {
    pub at: usize,
    pub span: (usize, usize),
    pub label: &'static str,
}

impl Readings {
    pub(crate) fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The value's bytes that byte `pos` of `bytes` was decoded from.
    pub(crate) fn bytes_span_at(&self, pos: usize) -> Option<(usize, usize)> {
        let index = self.byte_spans.partition_point(|(at, _)| *at <= pos);
        index
            .checked_sub(1)
            .and_then(|i| self.byte_spans.get(i))
            .map(|(_, span)| *span)
    }

    /// The reading that holds byte `pos` of `text`.
    pub(crate) fn part_at(&self, pos: usize) -> Option<&Part> {
        let index = self.parts.partition_point(|p| p.at <= pos);
        index.checked_sub(1).and_then(|i| self.parts.get(i))
    }

    /// Each reading with its bytes.
    pub(crate) fn each(&self) -> impl Iterator<Item = (&Part, &[u8])> {
        self.parts.iter().enumerate().map(|(i, part)| {
            let end = self
                .parts
                .get(i + 1)
                .map_or(self.text.len(), |next| next.at)
                .saturating_sub(1);
            (part, &self.text[part.at..end.max(part.at)])
        })
    }
}

/// Runs shorter than this cannot carry an 8-byte fragment in any codec
/// (base64 of 8 bytes is 11 characters, hex 16, base32 13, base85 10).
const MIN_RUN: usize = 11;
/// Readings shorter than a fragment cannot hold one.
const MIN_READING: usize = 8;
/// Codecs composed at most.
const DEPTH: usize = 3;

/// The bytes of `text` from `at` on, when they are UTF-16 of ASCII text
/// (every other byte zero, either order), narrowed to that text in place.
fn utf16_narrowed(text: &mut Vec<u8>, at: usize) {
    let len = text.len() - at;
    if len < 2 * MIN_READING || !len.is_multiple_of(2) {
        return;
    }
    let zero_at = |first: usize| text[at + first..].iter().step_by(2).all(|&b| b == 0);
    let keep = if zero_at(0) {
        1
    } else if zero_at(1) {
        0
    } else {
        return;
    };
    let narrowed: Vec<u8> = text[at + keep..].iter().step_by(2).copied().collect();
    text.truncate(at);
    text.extend_from_slice(&narrowed);
}

/// `text` decoded as base64 of either alphabet (padding ends it).
pub(crate) fn base64(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    codecs::base64(text, &mut out);
    out
}

/// All the readings of `value`, up to three codecs deep.
pub(crate) fn readings(value: &str) -> Readings {
    let bytes = value.as_bytes();
    let mut reader = Reader {
        out: Readings::default(),
        budget: bytes.len() * 16 + 64 * 1024,
        spent: 0,
    };
    for (start, end, run) in candidate_runs(bytes) {
        let out = &mut reader.out;
        let at = out.bytes.len();
        if run.iter().all(u8::is_ascii_hexdigit) {
            codecs::hex(&run, &mut out.bytes);
        } else {
            codecs::base64(&run, &mut out.bytes);
        }
        if out.bytes.len() - at >= MIN_READING {
            out.bytes.push(0);
            out.byte_spans.push((at, (start, end)));
        } else {
            out.bytes.truncate(at);
        }
        reader.run(&run, (start, end), 0);
    }
    for (start, end) in base85_runs(bytes) {
        reader.base85(&bytes[start..end], (start, end), 0);
    }
    // A secret as one big integer, decimal or octal (`int.from_bytes`).
    for (start, end) in digit_runs(bytes) {
        let run = &bytes[start..end];
        reader.read((start, end), 1, true, &|out| {
            codecs::big_number(run, 10, out)
        });
        if run.iter().all(|b| (b'0'..=b'7').contains(b)) {
            reader.read((start, end), 1, true, &|out| {
                codecs::big_number(run, 8, out)
            });
        }
    }
    // uuencoded lines (`M` and 60 characters a line).
    for (start, end) in uu_lines(bytes) {
        reader.read((start, end), 1, true, &|out| {
            codecs::uudecode(&bytes[start..end], out)
        });
    }
    // Character codes written backwards (`301,66,…`, `)301(rhc+…`): the
    // value reversed, read for codes, when it has enough in a row.
    if codes_in_a_row(bytes, MIN_READING) {
        let reversed: String = value.chars().rev().collect();
        if let [Some(decimal), ..] = char_codes(&reversed, MIN_READING) {
            reader.read((0, bytes.len()), 2, false, &|out| {
                out.extend_from_slice(decimal.as_bytes())
            });
        }
    }
    // The value's escapes decoded: read on when they are enough to spell
    // a fragment; the ledger matches the text itself whatever their number.
    let top = unescaped(value);
    if let Some(u) = top.as_ref().filter(|u| u.escapes >= MIN_READING) {
        reader.read(u.span, 1, true, &|out| out.extend_from_slice(&u.text));
    }
    reader.out.unescaped = top;
    reader.out
}

struct Reader {
    out: Readings,
    /// Bytes the readings past the first codec may take.
    budget: usize,
    spent: usize,
}

impl Reader {
    /// `run` (found after `depth` codecs) read by every codec its alphabet
    /// fits, as is, reversed and rot13'd (each of those a codec too).
    fn run(&mut self, run: &[u8], span: (usize, usize), depth: usize) {
        self.codecs(run, span, depth + 1);
        if depth + 2 <= DEPTH {
            let reversed: Vec<u8> = run.iter().rev().copied().collect();
            self.codecs(&reversed, span, depth + 2);
            self.codecs(&rot13(run), span, depth + 2);
        }
    }

    /// `run` decoded by every codec whose alphabet it fits: hex (two
    /// alignments), base64 of either alphabet (four), base32 (eight; one
    /// case only, as base32 is written). Each reading counts `depth` codecs.
    fn codecs(&mut self, run: &[u8], span: (usize, usize), depth: usize) {
        // An alignment whose reading is shorter than a fragment (and so
        // dropped by `read`) is not decoded: most runs are identifiers
        // just past the shortest run read.
        let fits =
            |skip: usize, bits: usize| run.len().saturating_sub(skip) * bits / 8 >= MIN_READING;
        if run.iter().all(u8::is_ascii_hexdigit) {
            for skip in (0..2).filter(|&s| fits(s, 4)) {
                self.read(span, depth, true, &|out| {
                    codecs::hex(&run[skip.min(run.len())..], out)
                });
            }
        }
        if run
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'='))
        {
            for skip in (0..4).filter(|&s| fits(s, 6)) {
                self.read(span, depth, true, &|out| {
                    codecs::base64(&run[skip.min(run.len())..], out)
                });
            }
        }
        let base32 = |upper: bool| {
            run.iter().all(|&b| {
                (b'2'..=b'7').contains(&b)
                    || b == b'='
                    || if upper {
                        b.is_ascii_uppercase()
                    } else {
                        b.is_ascii_lowercase()
                    }
            })
        };
        if base32(true) || base32(false) {
            for skip in (0..8).filter(|&s| fits(s, 5)) {
                self.read(span, depth, true, &|out| {
                    codecs::base32(&run[skip.min(run.len())..], out)
                });
            }
        }
    }

    /// A base85-looking run read in each alphabet, where it fits (quotes
    /// and brackets around it are in some alphabets and not others), at
    /// each of the five alignments.
    fn base85(&mut self, run: &[u8], span: (usize, usize), depth: usize) {
        for (alphabet, part) in base85_parts(run) {
            // Five digits make four bytes.
            for skip in (0..5).filter(|&s| part.len().saturating_sub(s) * 4 / 5 >= MIN_READING) {
                self.read(span, depth + 1, true, &|out| {
                    alphabet.decode(&part[skip.min(part.len())..], out)
                });
            }
        }
    }

    /// Decoded `text` with its escapes decoded (when it holds enough of
    /// them to spell a fragment) and its runs of character codes read,
    /// each as one more codec.
    fn escapes(&mut self, text: &str, span: (usize, usize), depth: usize) {
        if let Some(unescaped) = unescaped(text).filter(|u| u.escapes >= MIN_READING) {
            self.read(span, depth + 1, true, &|out| {
                out.extend_from_slice(&unescaped.text)
            });
        }
        for spelled in char_codes(text, MIN_READING).into_iter().flatten() {
            self.read(span, depth + 1, true, &|out| {
                out.extend_from_slice(spelled.as_bytes())
            });
        }
    }

    /// One reading, made by `decode` into the buffer: kept when it is long
    /// enough to hold a fragment, inflated when it carries a compressed
    /// stream, and read deeper (when `further`) if it is printable text.
    fn read(
        &mut self,
        span: (usize, usize),
        depth: usize,
        further: bool,
        decode: &dyn Fn(&mut Vec<u8>),
    ) {
        if depth > 1 && self.spent > self.budget {
            self.out.cut_short = true;
            return;
        }
        let at = self.out.text.len();
        decode(&mut self.out.text);
        utf16_narrowed(&mut self.out.text, at);
        let len = self.out.text.len() - at;
        let reading = &self.out.text[at..];
        // A reading with no eight printable bytes in a row holds no
        // fragment: most readings of a run are noise (the wrong alignment,
        // a hash's random bytes), and dropping them here spares the
        // ledger's pass over them. A compressed stream is noise that is
        // read on.
        let compressed = codecs::compressed_at(reading);
        let text = len >= MIN_READING && has_text(reading);
        if !text && compressed.is_none() {
            self.out.text.truncate(at);
            return;
        }
        if depth > 1 {
            self.spent += len;
        }
        let deeper = further && depth < DEPTH && printable(reading);
        let stream = compressed.map(|(start, gzip)| (reading[start..].to_vec(), gzip));
        if text {
            self.out.text.push(0);
            self.out.parts.push(Part {
                at,
                span,
                label: label(depth),
            });
        } else {
            self.out.text.truncate(at);
        }
        if let Some((stream, gzip)) = stream {
            let limit = self.budget.saturating_sub(self.spent).min(1 << 20);
            self.read(span, depth + 1, true, &|out| {
                codecs::inflate(&stream, gzip, limit, out)
            });
        }
        if deeper {
            let text = self.out.text[at..at + len].to_vec();
            self.deeper(&text, span, depth);
        }
    }

    /// Printable `text` that took `depth` codecs, read once more:
    /// reversed, rot13'd (each read no further: `run` reads a run's
    /// reversal and rot13 itself), and its runs decoded.
    fn deeper(&mut self, text: &[u8], span: (usize, usize), depth: usize) {
        self.read(span, depth + 1, false, &|out| out.extend(text.iter().rev()));
        self.read(span, depth + 1, false, &|out| {
            out.extend(text.iter().map(|&b| rot13_byte(b)))
        });
        self.read(span, depth + 2, false, &|out| {
            out.extend(text.iter().rev().map(|&b| rot13_byte(b)))
        });
        // Spelled out with spaces (`g h p _ …`) before it was encoded.
        let spaces = text.iter().filter(|b| b.is_ascii_whitespace()).count();
        if spaces * 3 >= text.len() {
            self.read(span, depth + 1, true, &|out| {
                out.extend(text.iter().filter(|b| !b.is_ascii_whitespace()))
            });
        }
        for (_, _, run) in candidate_runs(text) {
            self.run(&run, span, depth);
        }
        if let Ok(text) = std::str::from_utf8(text) {
            self.escapes(text, span, depth);
        }
        for (start, end) in base85_runs(text) {
            self.base85(&text[start..end], span, depth);
        }
    }
}

/// Runs of 20 to 200 decimal digits, the first 64: a secret of 8 to 80
/// bytes as one integer (shorter is no fragment; longer is data, not a
/// token, and reading it is quadratic).
fn digit_runs(bytes: &[u8]) -> Vec<(usize, usize)> {
    digit_spans(bytes)
        .filter(|(start, end)| (20..=200).contains(&(end - start)))
        .take(64)
        .collect()
}

/// The byte spans of `bytes`' runs of decimal digits.
pub(crate) fn digit_spans(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !bytes[i].is_ascii_digit() {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        (i > start).then_some((start, i))
    })
}

/// The lines (or their tails) that look uuencoded: a length character,
/// then exactly the four characters for every three bytes it says (one
/// more allowed), all in uuencode's alphabet (spaces to backquote: no
/// lower case).
fn uu_lines(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in bytes.split(|&b| b == b'\n') {
        let end = at + line.len();
        // The line's tail in the alphabet, from where its length character
        // says the rest is exactly one line's worth (after a label, say).
        let tail = line
            .iter()
            .rposition(|b| !(b' '..=b'`').contains(b))
            .map_or(0, |p| p + 1);
        for p in tail..line.len() {
            let n = usize::from(line[p].wrapping_sub(b' ') & 63);
            let want = n.div_ceil(3) * 4;
            if n >= MIN_READING && (want..=want + 1).contains(&(line.len() - p - 1)) {
                out.push((at + p, end));
                break;
            }
        }
        at = end + 1;
    }
    out
}

fn label(depth: usize) -> &'static str {
    match depth {
        0 | 1 => "decoded",
        2 => "decoded-twice",
        _ => "decoded-thrice",
    }
}

/// Runs of the value that can be an encoding: base64/base32/hex alphabet
/// runs, and hex bytes written with separators (`\x71\x38`, `0x71, 0x38`,
/// `71:38:5a`, `%71%38`), the latter given as their bare hex digits.
fn candidate_runs(bytes: &[u8]) -> Vec<(usize, usize, Vec<u8>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let in_alphabet =
            |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=');
        if !in_alphabet(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && in_alphabet(bytes[i]) {
            i += 1;
        }
        let run = &bytes[start..i];
        // A shorter run, and every piece of it, is too short to decode:
        // most runs are words and identifiers.
        if run.len() < MIN_RUN {
            continue;
        }
        // Plain identifiers and words are not worth decoding: an encoding
        // mixes classes (base64: cases and digits; hex: digits).
        let mut seen = [false; 3];
        for &b in run {
            seen[0] |= b.is_ascii_uppercase();
            seen[1] |= b.is_ascii_lowercase();
            seen[2] |= b.is_ascii_digit();
        }
        let classes = seen.iter().filter(|&&c| c).count();
        // Hex of hex is digits only, so a long run of digits is read too.
        let digits = run.len() >= 32 && run.iter().all(u8::is_ascii_digit);
        if run.len() >= MIN_RUN && (classes >= 2 || digits) && worth_decoding(run) {
            out.push((start, i, run.to_vec()));
        }
        // `d=<hex>` in a query: `=` inside a run (not padding) separates.
        let inner = run.iter().rposition(|&b| b != b'=').unwrap_or(0);
        if run[..inner].contains(&b'=') {
            let mut at = start;
            for piece in run.split(|&b| b == b'=') {
                if piece.len() >= MIN_RUN && worth_decoding(piece) {
                    out.push((at, at + piece.len(), piece.to_vec()));
                }
                at += piece.len() + 1;
            }
        }
    }
    static SEPARATED: OnceLock<Option<Regex>> = OnceLock::new();
    let separated = SEPARATED.get_or_init(|| {
        Regex::new(r"(?:(?:\\x|\\X|0x|0X|%|=)?[0-9A-Fa-f]{2}[ :,.\-]{0,2}){8,}").ok()
    });
    if let Some(re) = separated {
        for m in re.find_iter(bytes) {
            let text = m.as_bytes();
            let digits: Vec<u8> = strip_hex_markers(text);
            if digits.len() >= 16 && digits.len() != text.len() {
                out.push((m.start(), m.end(), digits));
            }
        }
    }
    out
}

/// Whether some codec could have made the run: base64 of eight or more
/// bytes of text mixes upper and lower case; hex is hex digits only;
/// base32 is one case with the digits 2-7. Identifiers (`api_timeout_35`,
/// `MAX_LEN`) fit none of them.
fn worth_decoding(run: &[u8]) -> bool {
    let upper = run.iter().any(u8::is_ascii_uppercase);
    let lower = run.iter().any(u8::is_ascii_lowercase);
    // hex, or hex rot13'd (its letters become n-s)
    let hex = run.len() >= 16
        && (run.iter().all(u8::is_ascii_hexdigit)
            || run
                .iter()
                .all(|b| b.is_ascii_digit() || (b'n'..=b's').contains(&b.to_ascii_lowercase())));
    let base32 = run.len() >= 13
        && upper != lower
        && run
            .iter()
            .all(|b| b.is_ascii_alphabetic() || (b'2'..=b'7').contains(b) || *b == b'=');
    (upper && lower) || hex || base32
}

fn strip_hex_markers(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if (b == b'\\' || b == b'0') && matches!(text.get(i + 1), Some(b'x' | b'X')) {
            i += 2;
            continue;
        }
        if b.is_ascii_hexdigit() {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// Whether `bytes` hold eight printable ASCII bytes (or spaces) in a row,
/// as every fragment of a secret is.
fn has_text(bytes: &[u8]) -> bool {
    // Without a branch on each byte: most readings are random bytes (a
    // hash's, a wrong alignment's), where a byte is printable about one
    // time in three and a branch on it is mispredicted half the time.
    // Spaces count: text spelled out with spaces is read on.
    let mut run = 0u32;
    for chunk in bytes.chunks(64) {
        let mut longest = 0u32;
        for &b in chunk {
            let printable = u32::from(b.wrapping_sub(b' ') < 0x5F);
            run = (run + 1) * printable;
            longest = longest.max(run);
        }
        if longest >= MIN_READING as u32 {
            return true;
        }
    }
    false
}

/// Whether decoded bytes read as text (worth a second codec).
fn printable(text: &[u8]) -> bool {
    text.len() >= MIN_RUN
        && text
            .iter()
            .filter(|b| b.is_ascii_graphic() || **b == b' ')
            .count()
            * 10
            >= text.len() * 9
}

fn rot13(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().map(|&c| rot13_byte(c)).collect()
}

fn rot13_byte(c: u8) -> u8 {
    match c {
        b'a'..=b'z' => (c - b'a' + 13) % 26 + b'a',
        b'A'..=b'Z' => (c - b'A' + 13) % 26 + b'A',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::testkit::transform;

    const S: &str = "q8Zt2LwP0vXn5RkY7mJd";

    fn found(value: &str, want: &str) -> bool {
        readings(value)
            .each()
            .any(|(_, text)| text.windows(want.len()).any(|w| w == want.as_bytes()))
    }

    #[test]
    fn compositions_of_two_codecs_decode_back() {
        let t = |chain: &[&str]| {
            chain
                .iter()
                .fold(S.to_string(), |v, c| transform(c, &v).unwrap())
        };
        for chain in [
            &["b64"][..],
            &["hex"],
            &["b32"],
            &["b64url"],
            &["b64", "rev"],
            &["rev", "b64"],
            &["b64", "b64"],
            &["hex", "rot13"],
            &["rot13", "hex"],
            &["b32", "rev"],
            &["first-half", "b64"],
            &["second-half", "hex"],
            &["hex", "b64"],
        ] {
            let encoded = t(chain);
            let value = format!("data = \"{encoded}\"\n");
            let want = if chain[0] == "second-half" {
                &S[10..18]
            } else {
                &S[..8]
            };
            assert!(found(&value, want), "{chain:?}: {encoded}");
        }
    }

    #[test]
    fn hex_with_separators_and_escapes() {
        let hex: Vec<String> = S.bytes().map(|b| format!("{b:02x}")).collect();
        for value in [
            hex.join(":"),
            hex.iter().map(|h| format!("\\x{h}")).collect::<String>(),
            hex.iter()
                .map(|h| format!("0x{h}"))
                .collect::<Vec<_>>()
                .join(", "),
            hex.join(" ").to_uppercase(),
        ] {
            assert!(found(&value, &S[..8]), "{value}");
        }
    }

    #[test]
    fn base32_at_any_offset() {
        let b32 = transform("b32", &format!("xyz{S}")).unwrap();
        assert!(found(&b32[3..], &S[4..12]), "{b32}");
    }
}
