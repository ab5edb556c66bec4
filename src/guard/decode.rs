//! Decoding a sink value the way someone hiding a secret would have
//! encoded it, so the ledger can look for the secret in what comes out:
//! the common codecs (base64, base64url, hex in any case with or without
//! `\x`, `0x`, `%` or `:` between bytes, base32 at any offset, percent,
//! reversal, rot13; the ledger matches reversed and rot13 fragments of
//! the raw value itself) composed up to depth two (`rev∘base64`,
//! `base64∘base64`, `rot13∘hex`…). The ledger matches the decoded text
//! against fragments of every secret it knows, so half a secret, or an
//! 8-character piece of one, is found whatever the two codecs were.
//!
//! Bounded: candidate runs must be long enough to carry a fragment, and the
//! decoded bytes of one value are capped at a few times its size, so the
//! cost stays linear in the value.

use std::sync::OnceLock;

use regex::bytes::Regex;

/// One decoded reading of part of a value.
#[derive(Debug, Clone)]
pub(crate) struct Form {
    /// The bytes of the original value it was decoded from.
    pub span: (usize, usize),
    pub text: Vec<u8>,
    /// What it took: "decoded" (one codec) or "decoded-twice" (two).
    pub label: &'static str,
}

/// Runs shorter than this cannot carry an 8-byte fragment in any codec
/// (base64 of 8 bytes is 11 characters, hex 16, base32 13).
const MIN_RUN: usize = 11;

/// All the readings of `value`, up to two codecs deep.
pub(crate) fn forms(value: &str) -> Vec<Form> {
    let bytes = value.as_bytes();
    let budget = bytes.len() * 6 + 4096;
    let mut out = Vec::new();
    let mut spent = 0usize;
    let mut first = Vec::new();
    for (start, end, run) in candidate_runs(bytes) {
        first.clear();
        // One codec: the run decoded. Two: the run reversed or rot13'd,
        // then decoded (`base64∘rev`).
        decoders(&run, &mut first);
        let direct = first.len();
        let reversed: Vec<u8> = run.iter().rev().copied().collect();
        decoders(&reversed, &mut first);
        decoders(&rot13(&run), &mut first);
        for (n, text) in first.drain(..).enumerate() {
            spent += text.len();
            // Two codecs the other way round: decoded, then reversed,
            // rot13'd or decoded again (`rev∘base64`, `base64∘base64`).
            if n < direct && printable(&text) {
                let mut second = vec![text.iter().rev().copied().collect(), rot13(&text)];
                for (_, _, inner) in candidate_runs(&text) {
                    decoders(&inner, &mut second);
                }
                for t in second {
                    spent += t.len();
                    out.push(Form {
                        span: (start, end),
                        text: t,
                        label: "decoded-twice",
                    });
                }
            }
            out.push(Form {
                span: (start, end),
                text,
                label: if n < direct {
                    "decoded"
                } else {
                    "decoded-twice"
                },
            });
        }
        if spent > budget {
            break;
        }
    }
    out.retain(|f| f.text.len() >= 8);
    out
}

/// The run decoded by every codec whose alphabet it fits: hex (two
/// alignments), base64 of either alphabet (four), base32 (eight; one
/// case only, as base32 is written).
fn decoders(run: &[u8], out: &mut Vec<Vec<u8>>) {
    if run.iter().all(u8::is_ascii_hexdigit) {
        for skip in 0..2 {
            out.push(hex_decode(&run[skip.min(run.len())..]));
        }
    }
    if run
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'='))
    {
        for skip in 0..4 {
            out.push(base64_decode(&run[skip.min(run.len())..]));
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
        for skip in 0..8 {
            out.push(base32_decode(&run[skip.min(run.len())..]));
        }
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
        // Plain identifiers and words are not worth decoding: an encoding
        // mixes classes (base64: cases and digits; hex: digits).
        let classes = [
            run.iter().any(u8::is_ascii_uppercase),
            run.iter().any(u8::is_ascii_lowercase),
            run.iter().any(u8::is_ascii_digit),
        ]
        .iter()
        .filter(|&&c| c)
        .count();
        if run.len() >= MIN_RUN && classes >= 2 && worth_decoding(run) {
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
        Regex::new(r"(?:(?:\\x|\\X|0x|0X|%)?[0-9A-Fa-f]{2}[ :,.\-]{0,2}){8,}").ok()
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

pub(crate) fn rot13(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|&c| match c {
            b'a'..=b'z' => (c - b'a' + 13) % 26 + b'a',
            b'A'..=b'Z' => (c - b'A' + 13) % 26 + b'A',
            _ => c,
        })
        .collect()
}

fn hex_decode(digits: &[u8]) -> Vec<u8> {
    let value = |b: u8| match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    };
    digits
        .chunks_exact(2)
        .map(|p| (value(p[0]) << 4) | value(p[1]))
        .collect()
}

/// Base64 of either alphabet; padding and stray characters end a group.
fn base64_decode(text: &[u8]) -> Vec<u8> {
    // Each byte's value in either alphabet, or NONE: a table, as every
    // base64-looking run of a value is decoded at four offsets, three
    // ways (a lockfile's hashes are thousands of them).
    const NONE: u8 = 0xFF;
    const VALUE: [u8; 256] = {
        let mut table = [NONE; 256];
        let mut i = 0;
        while i < 26 {
            table[b'A' as usize + i] = i as u8;
            table[b'a' as usize + i] = 26 + i as u8;
            i += 1;
        }
        let mut d = 0;
        while d < 10 {
            table[b'0' as usize + d] = 52 + d as u8;
            d += 1;
        }
        table[b'+' as usize] = 62;
        table[b'-' as usize] = 62;
        table[b'/' as usize] = 63;
        table[b'_' as usize] = 63;
        table
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &b in text {
        let v = VALUE[usize::from(b)];
        if v == NONE {
            acc = 0;
            bits = 0;
            continue;
        }
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// RFC 4648 base32, either case; `=` ends the data.
fn base32_decode(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 5 / 8);
    let mut acc = 0u64;
    let mut bits = 0;
    for &b in text {
        let v = match b.to_ascii_uppercase() {
            c @ b'A'..=b'Z' => c - b'A',
            c @ b'2'..=b'7' => c - b'2' + 26,
            _ => break,
        };
        acc = (acc << 5) | u64::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::testkit::transform;

    const S: &str = "q8Zt2LwP0vXn5RkY7mJd";

    fn found(value: &str, want: &str) -> bool {
        forms(value)
            .iter()
            .any(|f| f.text.windows(want.len()).any(|w| w == want.as_bytes()))
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
