//! How a file's bytes become the text the engine edits, and back: every
//! file reads as text without loss, so an edit keeps every byte outside
//! what it changes. UTF-8 is taken as it is (no copy); a file that is not
//! UTF-8 is read either as a single-byte encoding (Latin-1, or
//! Windows-1252 when it holds bytes only that one gives meaning to), or,
//! when it is UTF-8 but for a few bytes, as UTF-8 with each stray byte
//! standing for itself as a private-use character (`U+10FF80` +
//! byte − 0x80), which encoding turns back into that byte. Writing new
//! text in the file's encoding refuses a character it cannot hold.
//!
//! Pure: no IO. `read.rs` decodes what it reads; the writers encode.

use std::borrow::Cow;
use std::fmt;

/// How a file's bytes were read as text (and how text is written back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Valid UTF-8: the text is the bytes.
    Utf8,
    /// UTF-8 but for some bytes, each read as one character of
    /// `U+10FF80..=U+10FFFF` (the byte's value above 0x80) and written
    /// back as that byte.
    Utf8WithStrayBytes,
    /// ISO-8859-1: byte n is U+00n.
    Latin1,
    /// Windows-1252 (as the WHATWG encoding standard reads it: the five
    /// bytes it leaves undefined stand for the C1 controls, so every byte
    /// reads back as itself).
    Windows1252,
}

/// The first stray-byte character: byte 0x80 reads as this, 0xFF as
/// U+10FFFF.
const STRAY_BASE: u32 = 0x10_FF80;

/// Windows-1252's characters for bytes 0x80..=0x9F; the undefined five
/// keep their C1 control, as in Latin-1.
const CP1252_HIGH: [char; 32] = [
    '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}',
    '\u{0090}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
];

/// A character the file's encoding cannot hold, found in text to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrepresentable {
    pub encoding: Encoding,
    pub ch: char,
    /// 1-based line of the text where it is.
    pub line: usize,
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} of the new text has `{}` (U+{:04X}), which {} cannot hold",
            self.line,
            self.ch,
            u32::from(self.ch),
            self.encoding.name()
        )
    }
}

impl Encoding {
    /// The encoding's name as messages give it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Utf8WithStrayBytes => "UTF-8 with stray non-UTF-8 bytes",
            Encoding::Latin1 => "Latin-1 (ISO-8859-1)",
            Encoding::Windows1252 => "Windows-1252",
        }
    }

    /// iconv's name for it, for "convert the file first" advice.
    pub fn iconv_name(self) -> &'static str {
        match self {
            Encoding::Utf8 | Encoding::Utf8WithStrayBytes => "UTF-8",
            Encoding::Latin1 => "ISO-8859-1",
            Encoding::Windows1252 => "WINDOWS-1252",
        }
    }

    /// Reads `bytes` as text, choosing the encoding: UTF-8 when they are;
    /// otherwise UTF-8 with stray bytes when valid multi-byte characters
    /// are at least as many as the stray bytes (and none already is a
    /// stray-byte character, which would read back ambiguously); otherwise
    /// a single-byte encoding. Never loses a byte: `encode` of the text
    /// gives `bytes` back.
    pub fn decode(bytes: Vec<u8>) -> (String, Encoding) {
        let bytes = match String::from_utf8(bytes) {
            Ok(text) => return (text, Encoding::Utf8),
            Err(e) => e.into_bytes(),
        };
        let mut stray = 0usize;
        let mut multi = 0usize;
        for chunk in bytes.utf8_chunks() {
            stray += chunk.invalid().len();
            multi += lead_bytes(chunk.valid().as_bytes());
        }
        // A stray-byte character already in the file would read back as
        // a byte: such a file is read a byte at a time instead.
        let clash = memchr::memmem::find(&bytes, b"\xf4\x8f\xbe").is_some()
            || memchr::memmem::find(&bytes, b"\xf4\x8f\xbf").is_some();
        if multi >= stray && !clash {
            let mut text = String::with_capacity(bytes.len() + 3 * stray);
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
                text.extend(chunk.invalid().iter().map(|&b| stray_char(b)));
            }
            return (text, Encoding::Utf8WithStrayBytes);
        }
        // Read with 1252's table, which gives the five bytes it leaves
        // undefined their C1 controls, as Latin-1 does: the file is 1252
        // when a byte of 0x80..=0x9F means something there (curly
        // quotes, dashes, the euro), else Latin-1, the same characters.
        let mut cp1252 = false;
        let mut text = String::with_capacity(bytes.len() + bytes.len() / 8);
        let mut at = 0;
        while at < bytes.len() {
            let run = ascii_run(&bytes[at..]);
            text.push_str(std::str::from_utf8(&bytes[at..at + run]).unwrap_or_default());
            at += run;
            if let Some(&b) = bytes.get(at) {
                cp1252 |=
                    (0x80..=0x9F).contains(&b) && !matches!(b, 0x81 | 0x8D | 0x8F | 0x90 | 0x9D);
                text.push(Encoding::Windows1252.single_byte_char(b));
                at += 1;
            }
        }
        let encoding = if cp1252 {
            Encoding::Windows1252
        } else {
            Encoding::Latin1
        };
        (text, encoding)
    }

    /// `text` as this encoding's bytes (borrowed for UTF-8, and for UTF-8
    /// with stray bytes that holds none); the first character it cannot
    /// hold is an error.
    pub fn encode(self, text: &str) -> Result<Cow<'_, [u8]>, Unrepresentable> {
        let bytes = text.as_bytes();
        match self {
            Encoding::Utf8 => Ok(Cow::Borrowed(bytes)),
            Encoding::Utf8WithStrayBytes => {
                let mut out: Option<Vec<u8>> = None;
                let mut copied = 0;
                for (at, b) in strays(bytes) {
                    let out = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
                    out.extend_from_slice(&bytes[copied..at]);
                    out.push(b);
                    copied = at + 4;
                }
                Ok(match out {
                    Some(mut out) => {
                        out.extend_from_slice(&bytes[copied..]);
                        Cow::Owned(out)
                    }
                    None => Cow::Borrowed(bytes),
                })
            }
            Encoding::Latin1 | Encoding::Windows1252 => {
                let mut out = Vec::with_capacity(bytes.len());
                let mut at = 0;
                while at < bytes.len() {
                    let run = ascii_run(&bytes[at..]);
                    out.extend_from_slice(&bytes[at..at + run]);
                    at += run;
                    let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
                        break;
                    };
                    match self.single_byte(c) {
                        Some(b) => out.push(b),
                        None => {
                            return Err(Unrepresentable {
                                encoding: self,
                                ch: c,
                                line: line_at(bytes, at),
                            });
                        }
                    }
                    at += c.len_utf8();
                }
                Ok(Cow::Owned(out))
            }
        }
    }

    /// What a reader of the text should know, or None for UTF-8: the
    /// encoding assumed and, for stray bytes, how many and where the
    /// first is.
    pub fn describe(self, text: &str) -> Option<String> {
        match self {
            Encoding::Utf8 => None,
            Encoding::Utf8WithStrayBytes => {
                let count = strays(text.as_bytes()).count();
                let first = (strays(text.as_bytes()).next())
                    .map_or(1, |(at, _)| line_at(text.as_bytes(), at));
                let bytes = if count == 1 { "byte" } else { "bytes" };
                Some(format!(
                    "read as UTF-8, with {count} stray {bytes} that UTF-8 cannot read (the \
                     first on line {first}), each shown as a private-use character U+10FF80-U+10FFFF \
                     and written back as the byte it stands for; every other byte is kept"
                ))
            }
            Encoding::Latin1 | Encoding::Windows1252 => Some(format!(
                "not UTF-8: read as {}, and written back in it, every other byte kept",
                self.name()
            )),
        }
    }

    fn single_byte_char(self, b: u8) -> char {
        match (self, b) {
            (Encoding::Windows1252, 0x80..=0x9F) => CP1252_HIGH[usize::from(b - 0x80)],
            _ => char::from(b),
        }
    }

    fn single_byte(self, c: char) -> Option<u8> {
        let code = u32::from(c);
        if self == Encoding::Windows1252 {
            if let Some(i) = CP1252_HIGH.iter().position(|&h| h == c) {
                return u8::try_from(0x80 + i).ok();
            }
            if (0x80..=0x9F).contains(&code) {
                // A C1 control 1252 gives another meaning to.
                return None;
            }
        }
        u8::try_from(code).ok()
    }
}

fn stray_char(b: u8) -> char {
    // b >= 0x80 always (ASCII is valid UTF-8); STRAY_BASE + 0x7F is
    // U+10FFFF, the last char.
    char::from_u32(STRAY_BASE + u32::from(b.saturating_sub(0x80))).unwrap_or(char::MAX)
}

/// Each stray-byte character in UTF-8 `bytes` (`F4 8F BE|BF xx`: F4 only
/// ever leads a character), with the byte it stands for.
fn strays(bytes: &[u8]) -> impl Iterator<Item = (usize, u8)> + '_ {
    memchr::memmem::find_iter(bytes, b"\xf4\x8f").filter_map(|at| {
        let (&b2, &b3) = (bytes.get(at + 2)?, bytes.get(at + 3)?);
        matches!(b2, 0xBE | 0xBF).then_some((at, 0x80 | ((b2 & 1) << 6) | (b3 & 0x3F)))
    })
}

/// How many bytes at the start of `bytes` are ASCII, a block at a time
/// (`is_ascii` reads words; files are mostly ASCII).
fn ascii_run(bytes: &[u8]) -> usize {
    let mut n = 0;
    for block in bytes.chunks(64) {
        if !block.is_ascii() {
            return n + block
                .iter()
                .position(|b| !b.is_ascii())
                .unwrap_or(block.len());
        }
        n += block.len();
    }
    n
}

/// The characters of valid UTF-8 `bytes` that are not ASCII (their lead
/// bytes).
fn lead_bytes(bytes: &[u8]) -> usize {
    let mut n = 0;
    let mut at = 0;
    while at < bytes.len() {
        at += ascii_run(&bytes[at..]);
        if let Some(&b) = bytes.get(at) {
            n += usize::from(b >= 0xC0);
            at += 1;
        }
    }
    n
}

/// The 1-based line of byte `at` of `bytes`.
fn line_at(bytes: &[u8], at: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &bytes[..at.min(bytes.len())]).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bytes: &[u8]) -> Encoding {
        let (text, enc) = Encoding::decode(bytes.to_vec());
        assert_eq!(enc.encode(&text).unwrap().as_ref(), bytes, "{enc:?}");
        enc
    }

    #[test]
    fn every_byte_reads_back_as_itself() {
        let all: Vec<u8> = (1..=255u8).collect();
        assert_eq!(round_trip(&all), Encoding::Windows1252);
        let latin: Vec<u8> = (1..=0x7Fu8).chain(0xA0..=0xFF).collect();
        assert_eq!(round_trip(&latin), Encoding::Latin1);
        assert_eq!(round_trip(b"caf\xe9\n"), Encoding::Latin1);
        assert_eq!(round_trip(b"\x93quoted\x94\n"), Encoding::Windows1252);
        assert_eq!(round_trip("héllo\n".as_bytes()), Encoding::Utf8);
        let mut mixed = "é ü ö\n".as_bytes().to_vec();
        mixed.extend_from_slice(b"x\xff\n");
        assert_eq!(round_trip(&mixed), Encoding::Utf8WithStrayBytes);
    }

    #[test]
    fn latin1_decodes_to_the_characters() {
        let (text, enc) = Encoding::decode(b"caf\xe9 \x80\n".to_vec());
        assert_eq!(enc, Encoding::Windows1252);
        assert_eq!(text, "café €\n");
        let (text, _) = Encoding::decode(b"na\xefve\n".to_vec());
        assert_eq!(text, "naïve\n");
    }

    #[test]
    fn a_stray_byte_character_already_there_means_single_byte() {
        let mut bytes = "\u{10FF90}\n".as_bytes().to_vec();
        bytes.extend_from_slice(b"\xe9\n");
        // F4 8F BE 90: 0x8F and 0x90 are two of the bytes 1252 leaves
        // undefined, so Latin-1.
        assert_eq!(round_trip(&bytes), Encoding::Latin1);
    }

    #[test]
    fn unrepresentable_names_the_char_and_line() {
        let err = Encoding::Latin1.encode("a\nb → c\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.ch, '→');
        assert_eq!(
            err.to_string(),
            "line 2 of the new text has `→` (U+2192), which Latin-1 (ISO-8859-1) cannot hold"
        );
        assert!(Encoding::Latin1.encode("€").is_err());
        assert_eq!(Encoding::Windows1252.encode("€").unwrap().as_ref(), b"\x80");
        // A C1 control that 1252 gives a meaning is not written as that.
        assert!(Encoding::Windows1252.encode("\u{0080}").is_err());
        assert_eq!(
            Encoding::Utf8WithStrayBytes.encode("→").unwrap().as_ref(),
            "→".as_bytes()
        );
    }

    #[test]
    fn describe_counts_stray_bytes() {
        let mut bytes = "é\nok\n".as_bytes().to_vec();
        bytes.extend_from_slice(b"x\xff\n");
        let (text, enc) = Encoding::decode(bytes);
        let said = enc.describe(&text).unwrap();
        assert!(said.contains("1 stray byte"), "{said}");
        assert!(said.contains("line 3"), "{said}");
        assert_eq!(Encoding::Utf8.describe("x"), None);
    }
}
