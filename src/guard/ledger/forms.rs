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

/// What joins string literals in code: `"q8Zt" + "2Lw"`, `'a' 'b'`.
pub(super) fn is_joiner(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '+' | ',')
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
    let mut out = String::with_capacity(value.len());
    let mut run_start: Option<usize> = None;
    let mut punctuated = false;
    let flush = |out: &mut String, run: &str, punctuated: bool| {
        if !punctuated {
            out.push_str(run);
        }
    };
    for (i, c) in value.char_indices() {
        if is_joiner(c) {
            run_start.get_or_insert(i);
            punctuated |= !c.is_whitespace();
            continue;
        }
        if let Some(start) = run_start.take() {
            flush(&mut out, &value[start..i], punctuated);
            punctuated = false;
        }
        out.push(c);
    }
    if let Some(start) = run_start {
        flush(&mut out, &value[start..], punctuated);
    }
    out
}

/// `value` with the whitespace between characters spaced out taken away
/// (`q 8 Z t`, `q8 Zt 2L`): only between pieces of up to three
/// characters, so prose ("Welcome 2024") keeps its spaces.
fn spaced_out(value: &str) -> String {
    const SHORT: usize = 3;
    let mut out = String::with_capacity(value.len());
    let mut previous: Option<usize> = None;
    let mut gap = "";
    let mut rest = value;
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        if start > 0 {
            gap = &rest[..start];
            rest = &rest[start..];
            if rest.is_empty() {
                out.push_str(gap);
                break;
            }
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let token = &rest[..end];
        let len = token.chars().count();
        if let Some(before) = previous
            && !(before <= SHORT && len <= SHORT)
        {
            out.push_str(gap);
        } else if previous.is_none() {
            out.push_str(gap);
        }
        out.push_str(token);
        previous = Some(len);
        gap = "";
        rest = &rest[end..];
    }
    out
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
