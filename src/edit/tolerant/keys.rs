//! The comparable form of a line at each tolerant level (trimmed, typography
//! folded, invisible characters dropped, whitespace runs squeezed), and the
//! fast forms of the loosest one that run on every line of a file: a
//! comparison that stops at the first differing byte and a hash, neither
//! decoding ASCII lines.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

use super::Level;
use crate::edit::hints::invisible_name;

/// `key(InnerWhitespace, line) == key`, without allocating or decoding
/// for ASCII lines (this runs on every line of the file). `ascii`: the
/// whole text is ASCII.
pub(crate) fn loosely_equal(line: &str, key: &str, ascii: bool) -> bool {
    let bytes = line.as_bytes();
    let mut want = key.bytes();
    let mut i = 0;
    while i < bytes.len() && ascii_space(bytes[i]) {
        i += 1;
    }
    let mut in_space = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b >= 0x80 {
            return self::key(Level::InnerWhitespace, line) == key;
        }
        if ascii_space(b) {
            in_space = true;
            i += 1;
            continue;
        }
        let same = (!in_space || want.next() == Some(b' ')) && want.next() == Some(b);
        if !same {
            // Folding a character further on (a combining accent after a
            // letter) can change what comes before it.
            return !ascii
                && !bytes[i..].is_ascii()
                && self::key(Level::InnerWhitespace, line) == key;
        }
        in_space = false;
        i += 1;
    }
    want.next().is_none()
}

/// The ASCII characters `char::is_whitespace` accepts.
pub(super) fn ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// A hash of a line's loosest key, without allocating for ASCII lines.
pub(crate) fn loose_hash(line: &str) -> u64 {
    if !line.is_ascii() {
        return hash_bytes(key(Level::InnerWhitespace, line).as_bytes());
    }
    let mut h = Hasher::new();
    let mut in_space = false;
    for b in trim_ws(line).bytes() {
        if (b as char).is_whitespace() {
            in_space = true;
            continue;
        }
        if in_space {
            h.push(b' ');
        }
        in_space = false;
        h.push(b);
    }
    h.finish()
}

/// `line` without leading whitespace, as `str::trim_start` gives it: a
/// byte at a time over ASCII (a line indented 40 columns is 40 chars to
/// decode otherwise, on every line of a file), chars from the first
/// non-ASCII byte on.
pub(crate) fn trim_start_ws(line: &str) -> &str {
    // Eight spaces at a time first: deep indentation is runs of spaces.
    let bytes = line.as_bytes();
    let mut spaces = 0;
    while bytes.get(spaces..spaces + 8) == Some(b"        ") {
        spaces += 8;
    }
    let skipped = spaces
        + bytes[spaces..]
            .iter()
            .take_while(|&&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C))
            .count();
    let rest = &line[skipped..];
    match rest.as_bytes().first() {
        Some(b) if !b.is_ascii() => rest.trim_start(),
        _ => rest,
    }
}

/// `line` without leading and trailing whitespace, as `str::trim`.
pub(crate) fn trim_ws(line: &str) -> &str {
    let rest = trim_start_ws(line);
    let kept = rest.len()
        - rest
            .bytes()
            .rev()
            .take_while(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C))
            .count();
    let rest = &rest[..kept];
    match rest.as_bytes().last() {
        Some(b) if !b.is_ascii() => rest.trim_end(),
        _ => rest,
    }
}

/// FNV-1a, 64 bits: equal keys hash equal; a match is checked key by key
/// before it is applied, so a collision can only cost a refusal.
pub(super) struct Hasher(u64);

impl Hasher {
    fn new() -> Hasher {
        Hasher(0xcbf2_9ce4_8422_2325)
    }

    fn push(&mut self, b: u8) {
        self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = Hasher::new();
    for &b in bytes {
        h.push(b);
    }
    h.finish()
}

/// The comparable form of a line at a level.
pub(super) fn key(level: Level, line: &str) -> Cow<'_, str> {
    match level {
        Level::Exact => Cow::Borrowed(line),
        Level::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
        Level::Indentation | Level::IndentUnit => Cow::Borrowed(line.trim()),
        Level::Typography => fold(line.trim()),
        Level::Invisible => visible_only(line),
        Level::InnerWhitespace => {
            let folded = visible_only(line);
            let mut out = String::with_capacity(folded.len());
            let mut in_space = false;
            for c in folded.chars() {
                if c.is_whitespace() {
                    if !in_space {
                        out.push(' ');
                    }
                    in_space = true;
                } else {
                    out.push(c);
                    in_space = false;
                }
            }
            Cow::Owned(out)
        }
    }
}

/// The typography key with invisible characters taken out.
pub(super) fn visible_only(line: &str) -> Cow<'_, str> {
    let folded = fold(line.trim());
    if !folded.chars().any(|c| invisible_name(c).is_some()) {
        return folded;
    }
    let kept: String = folded
        .chars()
        .filter(|&c| invisible_name(c).is_none())
        .collect();
    Cow::Owned(kept.trim().to_string())
}

/// Compatibility forms folded (NFKC: fullwidth letters, composed accents),
/// then typographic quotes, dashes and spaces made plain.
pub(super) fn fold(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.nfkc().map(fold_char).collect())
}

/// One character's plain form. Maps one char to one char, so offsets in a
/// folded line are offsets in the line.
pub(crate) fn fold_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => '\'',
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00a0}' | '\u{2002}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => ' ',
        // Fullwidth ASCII, as NFKC folds it.
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xff01 + 0x21).unwrap_or(c),
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_as_str_does() {
        for line in [
            "",
            "   ",
            "\t\x0b\x0c x \r\n",
            "        a = b;   ",
            "\u{3000} wide space\u{3000}",
            " \u{85}next line\u{a0} ",
            "é  ",
            "  ü",
            "\u{2028}",
        ] {
            assert_eq!(trim_ws(line), line.trim(), "{line:?}");
            assert_eq!(trim_start_ws(line), line.trim_start(), "{line:?}");
        }
    }
}
