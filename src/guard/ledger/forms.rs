//! The forms of a value the ledger reads: base64, hex, percent-encoding,
//! rot13 and base32 of a secret (what an encoded copy must contain), and
//! a value spelled out (characters spaced, string literals joined,
//! character codes, zero-width characters stripped).

/// The part of base64(`offset` unknown bytes + `secret` + unknown bytes)
/// that depends only on the secret: what any encoding of data containing
/// the secret at that alignment must contain.
pub(super) fn base64_inner(secret: &[u8], offset: usize, url: bool) -> String {
    let mut data = vec![0u8; offset];
    data.extend_from_slice(secret);
    let encoded = base64_encode(&data, url);
    // Leading characters that mix in the unknown prefix bytes.
    let skip = [0, 2, 3][offset];
    // The last character of a partial group mixes in the following bytes.
    let trim = usize::from(!data.len().is_multiple_of(3));
    let end = encoded.len().saturating_sub(trim);
    encoded.get(skip..end).unwrap_or_default().to_string()
}

/// Base64 without padding, standard or URL-safe alphabet.
pub(crate) fn base64_encode(bytes: &[u8], url: bool) -> String {
    let alphabet: &[u8; 64] = if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=group.len() {
            out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

pub(super) fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Percent-encoding of everything but RFC 3986 unreserved characters.
pub(super) fn percent_reserved(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Characters that render as nothing and can hide a secret from a plain
/// substring match.
fn is_zero_width(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}' | '\u{180E}'
    ) || ('\u{E0000}'..='\u{E007F}').contains(&c)
}

pub(super) fn has_zero_width(value: &str) -> bool {
    value.chars().any(is_zero_width)
}

/// ROT13 of the ASCII letters.
pub(super) fn rot13(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
            'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
            _ => c,
        })
        .collect()
}

/// The three base85 alphabets in use: RFC 1924's (Python's `b85encode`),
/// Ascii85's (`a85encode`) and ZeroMQ's Z85.
pub(super) const BASE85: [&[u8; 85]; 3] = [
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~",
    &{
        let mut alphabet = [0u8; 85];
        let mut i = 0;
        while i < 85 {
            alphabet[i] = b'!' + i as u8;
            i += 1;
        }
        alphabet
    },
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#",
];

/// The part of base85(`offset` unknown bytes + `secret` + unknown bytes)
/// that depends only on the secret: its whole 4-byte groups.
pub(super) fn base85_inner(secret: &[u8], offset: usize, alphabet: &[u8; 85]) -> String {
    let first = (4 - offset % 4) % 4;
    let mut out = String::new();
    for group in secret.get(first..).unwrap_or_default().chunks_exact(4) {
        let mut n = u32::from_be_bytes([group[0], group[1], group[2], group[3]]);
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = alphabet[(n % 85) as usize];
            n /= 85;
        }
        out.extend(digits.iter().map(|&d| char::from(d)));
    }
    out
}

/// RFC 4648 base32 of the whole 5-byte groups of `bytes` (the part that
/// does not depend on what follows).
pub(super) fn base32_stable(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::new();
    for group in bytes.chunks_exact(5) {
        let n = group.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b));
        for i in (0..8).rev() {
            out.push(ALPHABET[((n >> (i * 5)) & 31) as usize] as char);
        }
    }
    out
}

/// `value` spelled out two ways: with the whitespace between characters
/// spaced out taken away (what `q 8 Z t` spells) and without the joiners
/// between string literals (what `"q8Zt" + "2Lw"` spells); each None
/// when nothing was removed.
pub(super) fn spelled_out(value: &str) -> (Option<String>, Option<String>) {
    let spaced = spaced_out(value);
    let joined = joined_out(value);
    (
        (spaced.len() < value.len()).then_some(spaced),
        (joined.len() < value.len()).then_some(joined),
    )
}

/// `value` without each run of joiners that holds a quote, a `+` or a
/// comma (`" + "`, `', '`): whitespace alone is prose's, and stays.
fn joined_out(value: &str) -> String {
    // Byte by byte: every joiner is ASCII, so a run of them never splits
    // a wider character.
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if !is_joiner_byte(bytes[i]) {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let start = i;
        let mut punctuated = false;
        while i < bytes.len() && is_joiner_byte(bytes[i]) {
            punctuated |= !bytes[i].is_ascii_whitespace() && bytes[i] != 0x0B;
            i += 1;
        }
        if !punctuated {
            out.extend_from_slice(&bytes[start..i]);
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| value.to_string())
}

/// What joins string literals in code (`"q8Zt" + "2Lw"`, `'a' 'b'`):
/// whitespace, quotes, `+`, `,`.
fn is_joiner_byte(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, 0x0B | b'"' | b'\'' | b'`' | b'+' | b',')
}

/// `value` with the whitespace between characters spaced out taken away
/// (`q 8 Z t`, `q8 Zt 2L`): only between pieces of up to three
/// characters, so prose ("Welcome 2024") keeps its spaces.
fn spaced_out(value: &str) -> String {
    const SHORT: usize = 3;
    let bytes = value.as_bytes();
    let space = |b: u8| b.is_ascii_whitespace() || b == 0x0B;
    let mut out = Vec::with_capacity(bytes.len());
    // The last piece's length in characters: the gap after it is
    // dropped when it and the next piece are both short.
    let mut previous: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        let gap_start = i;
        while i < bytes.len() && space(bytes[i]) {
            i += 1;
        }
        let gap = &bytes[gap_start..i];
        let start = i;
        while i < bytes.len() && !space(bytes[i]) {
            i += 1;
        }
        let piece = &bytes[start..i];
        // Characters, not bytes: continuation bytes do not count.
        let len = piece.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        let joined = !piece.is_empty() && previous.is_some_and(|p| p <= SHORT && len <= SHORT);
        if !joined {
            out.extend_from_slice(gap);
        }
        out.extend_from_slice(piece);
        if !piece.is_empty() {
            previous = Some(len);
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| value.to_string())
}

/// The contents of `value`'s string literals, run together in order:
/// what pieces assigned one to a line (`p0 = "ghp"` … `key = p0 + p1`)
/// spell. None when it has fewer than two.
pub(super) fn literals_joined(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut count = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let quote = bytes[i];
        if !matches!(quote, b'"' | b'\'' | b'`') {
            i += 1;
            continue;
        }
        let body = &bytes[i + 1..];
        let Some(len) = body.iter().position(|&b| b == quote || b == b'\n') else {
            break;
        };
        if body[len] == quote {
            out.extend_from_slice(&body[..len]);
            count += 1;
            i += len + 2;
        } else {
            i += len + 1;
        }
    }
    (count >= 2).then(|| String::from_utf8(out).ok()).flatten()
}

/// `value` without zero-width characters.
pub fn strip_zero_width(value: &str) -> String {
    value.chars().filter(|&c| !is_zero_width(c)).collect()
}
