//! A secret under a constant key: every character moved by the same
//! number of code points (any number; `folded::cipher_forms` lists six
//! and the letters' Caesar shifts), or every byte XORed with the same
//! byte (`xor 0x2a`, then hex). Neither changes the differences between
//! neighbours, so a random-looking secret's differences are looked for in
//! the value's (between characters, as a code-point shift moves some
//! past ASCII; modulo 94, so a shift that wraps within printable ASCII
//! counts too), between its numbers (character codes with a constant
//! added) and in its decoded readings' (between bytes, by XOR).
//! A few patterns per secret, whatever the key.

use super::folded;

/// Differences are taken modulo the printable ASCII characters' number:
/// a shift that wraps around within them (`chr(33 + (ord(c) - 33 + k) %
/// 94)`, rot47's kin) keeps them too, and a plain shift keeps them
/// whatever the modulus.
const PRINTABLE: i64 = 94;

/// The shortest secret (its own part) looked for by its differences: 16
/// characters give 15 differences, which ordinary text does not repeat
/// by chance.
const MIN_CHARS: usize = 16;

/// The patterns of a secret's own part, none for one too short or not
/// random-looking (a word-like password's differences are those of
/// words): its differences between characters and, by XOR, between
/// bytes; for a secret of twice [`MIN_CHARS`] or more, each half's
/// differences between characters too, as one character the output
/// drops (a shift that made it a control character) then breaks only one
/// half. Each comes with how many of the secret's characters lie before
/// and after the part it covers (none for the whole), so a half found
/// marks the whole secret's place. All are searched in every kind of
/// differences: a pattern of one kind found in another's is chance,
/// which 15 differences make negligible.
pub(super) fn patterns(own: &str) -> Vec<(Vec<u8>, (usize, usize))> {
    let chars: Vec<char> = own.chars().collect();
    if chars.len() < MIN_CHARS || !folded::looks_random(&folded::fold_str(own)) {
        return Vec::new();
    }
    let mut out = vec![
        (char_deltas(own), (0, 0)),
        (xor_deltas(own.as_bytes()), (0, 0)),
    ];
    if chars.len() >= 2 * MIN_CHARS {
        let (first, second) = chars.split_at(chars.len() / 2);
        out.push((
            char_deltas(&first.iter().collect::<String>()),
            (0, second.len()),
        ));
        out.push((
            char_deltas(&second.iter().collect::<String>()),
            (first.len(), 0),
        ));
    }
    out
}

/// The differences between the value's numbers (runs of decimal digits,
/// modulo [`PRINTABLE`]), with each number's byte span: character codes
/// with a constant added (`203 204 212 …`) keep the secret's.
pub(super) fn number_deltas(text: &str) -> (Vec<u8>, Vec<(usize, usize)>) {
    // A code is a few digits; longer runs (ids, hashes) are no code.
    let numbers: Vec<(i64, (usize, usize))> = super::super::decode::digit_spans(text.as_bytes())
        .filter(|(start, end)| end - start <= 7)
        .map(|(start, end)| (text[start..end].parse::<i64>().unwrap_or(0), (start, end)))
        .collect();
    let deltas = numbers
        .windows(2)
        .map(|w| (w[1].0 - w[0].0).rem_euclid(PRINTABLE) as u8)
        .collect();
    (deltas, numbers.into_iter().map(|(_, span)| span).collect())
}

/// The differences between `text`'s neighbouring characters, modulo
/// [`PRINTABLE`] (the k-th is between characters k and k + 1).
pub(super) fn char_deltas(text: &str) -> Vec<u8> {
    // Between two ASCII characters the difference is within ±127: a
    // table, not a division per character (output is mostly ASCII).
    const ASCII: [u8; 255] = {
        let mut table = [0u8; 255];
        let mut i = 0;
        while i < 255 {
            table[i] = (i as i64 - 127).rem_euclid(PRINTABLE) as u8;
            i += 1;
        }
        table
    };
    let mut out = Vec::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut last: Option<u32> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let c = if b < 0x80 {
            i += 1;
            u32::from(b)
        } else {
            let Some(c) = text[i..].chars().next() else {
                break;
            };
            i += c.len_utf8();
            u32::from(c)
        };
        if let Some(last) = last {
            out.push(if c < 0x80 && last < 0x80 {
                ASCII[(c + 127 - last) as usize]
            } else {
                (i64::from(c) - i64::from(last)).rem_euclid(PRINTABLE) as u8
            });
        }
        last = Some(c);
    }
    out
}

/// The byte span in `text` of its characters `first..end` (by index),
/// found by walking it: only for a match, which is rare, so the search
/// itself keeps no offsets.
pub(super) fn char_span(text: &str, first: usize, end: usize) -> (usize, usize) {
    let mut offsets = text.char_indices().map(|(i, _)| i).chain([text.len()]);
    let start = offsets.nth(first).unwrap_or(text.len());
    let stop = if end > first {
        offsets.nth(end - first - 1).unwrap_or(text.len())
    } else {
        start
    };
    (start, stop)
}

/// The XOR of `bytes`' neighbours.
pub(super) fn xor_deltas(bytes: &[u8]) -> Vec<u8> {
    bytes.windows(2).map(|w| w[0] ^ w[1]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "Zq8RkLm2Vx7Tn4Pw9Hs1Jd6F";

    #[test]
    fn a_shift_or_a_one_byte_xor_keeps_the_differences() {
        let [(chars, _), (xor, _), ..] = &patterns(OWN)[..] else {
            panic!("no pattern");
        };
        let (chars, xor) = (chars.clone(), xor.clone());
        for shift in [1u32, 7, 13, 100, 1000] {
            let moved: String = OWN
                .chars()
                .map(|c| char::from_u32(c as u32 + shift).unwrap())
                .collect();
            let got = char_deltas(&format!("x = '{moved}'"));
            assert!(got.windows(chars.len()).any(|w| w == chars), "{shift}");
        }
        for shift in [7u8, 50, 93] {
            let wrapped: String = OWN
                .bytes()
                .map(|b| char::from(b'!' + (b - b'!' + shift) % 94))
                .collect();
            let got = char_deltas(&wrapped);
            assert_eq!(got, chars, "{shift}");
        }
        for key in [1u8, 0x2a, 0xff] {
            let xored: Vec<u8> = OWN.bytes().map(|b| b ^ key).collect();
            let got = xor_deltas(&[b"\x00\x01".as_slice(), &xored].concat());
            assert!(got.windows(xor.len()).any(|w| w == xor), "{key}");
        }
    }

    #[test]
    fn short_or_word_like_secrets_have_no_pattern() {
        assert!(patterns("Zq8RkLm2Vx7").is_empty());
        assert!(patterns("correcthorsebatterystaple").is_empty());
    }

    #[test]
    fn codes_with_a_constant_added_keep_the_differences() {
        let chars = &patterns(OWN)[0].0;
        let codes: Vec<String> = OWN
            .bytes()
            .map(|b| (u32::from(b) + 100).to_string())
            .collect();
        let text = format!("x = [{}]", codes.join(", "));
        let (got, spans) = number_deltas(&text);
        let at = got.windows(chars.len()).position(|w| w == chars.as_slice());
        assert_eq!(at, Some(0));
        assert_eq!(&text[spans[0].0..spans[0].1], codes[0]);
    }

    #[test]
    fn spans_are_found_by_character_index() {
        assert_eq!(char_deltas("aé b").len(), 3);
        assert_eq!(char_span("aé b", 0, 2), (0, 3));
        assert_eq!(char_span("aé b", 1, 4), (1, 5));
        assert_eq!(char_span("aé b", 2, 9), (3, 5));
    }
}
