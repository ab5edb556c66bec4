//! A value folded to its bare letters and digits, and the forms of a
//! secret looked for in that fold: what no list of encodings can keep up
//! with. Separators between characters (`g.h.p`, one per line, a tab or a
//! no-break space between), case changed (`swapcase`, upper), lookalike
//! letters (Cyrillic `а`, Greek `Ο`, full-width, mathematical bold,
//! circled), marks and selectors put after each character (U+0301,
//! U+FE0F): each folds to the same lower-case ASCII run as the secret,
//! so one search of the fold finds them all. Keyless letter ciphers
//! (Caesar shifts, Atbash) and the even/odd split are forms of the fold,
//! made once per secret; a noise character put between the secret's
//! own is taken out by reading the text every second character; rot47, which turns letters into punctuation, is
//! one of the ledger's listed encodings, whose folds are looked for too.
//!
//! Only whole secrets count here, and only folds that look random: 16
//! characters or more, letters and digits both (a token, a key, an
//! encoding of one). A word-like secret folds to words: `postgrespassword`
//! is what `POSTGRES_PASSWORD` folds to, and `Summer2024!` what the prose
//! "Summer 2024" does. Those stay the plain search's and the spaced and
//! joined readings' to find, as before.

/// Whether a fold (of a secret, an encoding of one, a cipher of one) is
/// looked for: long, and mixed as random text is.
pub(super) fn looks_random(fold: &[u8]) -> bool {
    let digits = fold.iter().filter(|b| b.is_ascii_digit()).count();
    fold.len() >= FOLDED_MIN && digits >= 2 && fold.len() - digits >= 2
}

/// The shortest fold looked for.
pub(super) const FOLDED_MIN: usize = 16;

/// `text` folded: its letters and digits, lower-cased ASCII, with the byte
/// offset in `text` each came from.
pub(super) fn fold(text: &str) -> (Vec<u8>, Vec<u32>) {
    let mut out = Vec::with_capacity(text.len());
    let mut at = Vec::with_capacity(text.len());
    fold_with(text, |b, i| {
        out.push(b);
        at.push(i as u32);
    });
    (out, at)
}

/// The fold of `value` alone.
pub(super) fn fold_str(value: &str) -> Vec<u8> {
    if value.is_ascii() {
        // Each byte written, and kept by moving on only if it folded to
        // something: no branch a mix of letters and punctuation (code)
        // mispredicts.
        let mut out = vec![0u8; value.len()];
        let mut kept = 0;
        for &b in value.as_bytes() {
            let folded = ASCII[usize::from(b)];
            out[kept] = folded;
            kept += usize::from(folded != 0);
        }
        out.truncate(kept);
        return out;
    }
    let mut out = Vec::with_capacity(value.len());
    fold_with(value, |b, _| out.push(b));
    out
}

/// Each ASCII byte folded: its lower case when a letter or digit, else 0.
const ASCII: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            table[b] = c.to_ascii_lowercase();
        }
        b += 1;
    }
    table
};

/// Each folded character of `text` with its byte offset.
fn fold_with(text: &str, mut keep: impl FnMut(u8, usize)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            let folded = ASCII[usize::from(b)];
            if folded != 0 {
                keep(folded, i);
            }
            i += 1;
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        if let Some(folded) = fold_char(c) {
            keep(folded, i);
        }
        i += c.len_utf8();
    }
}

/// The ASCII letter or digit a non-ASCII character reads as, if any.
/// Marks, selectors and other symbols read as nothing.
fn fold_char(c: char) -> Option<u8> {
    let cp = c as u32;
    let letter = |i: u32| Some(b'a' + (i % 26) as u8);
    let digit = |i: u32| Some(b'0' + (i % 10) as u8);
    match cp {
        // Full-width digits and letters.
        0xFF10..=0xFF19 => digit(cp - 0xFF10),
        0xFF21..=0xFF3A => letter(cp - 0xFF21),
        0xFF41..=0xFF5A => letter(cp - 0xFF41),
        // Mathematical alphanumerics: 13 styles of A-Z a-z, 5 of 0-9.
        0x1D400..=0x1D6A3 => letter((cp - 0x1D400) % 52),
        0x1D7CE..=0x1D7FF => digit(cp - 0x1D7CE),
        // Circled, parenthesised, squared letters and digits.
        0x24B6..=0x24CF => letter(cp - 0x24B6),
        0x24D0..=0x24E9 => letter(cp - 0x24D0),
        0x249C..=0x24B5 => letter(cp - 0x249C),
        0x2460..=0x2468 => digit(cp - 0x2460 + 1),
        0x24EA => Some(b'0'),
        0x1F130..=0x1F149 => letter(cp - 0x1F130),
        0x1F150..=0x1F169 => letter(cp - 0x1F150),
        0x1F170..=0x1F189 => letter(cp - 0x1F170),
        // Regional indicators (flag letters).
        0x1F1E6..=0x1F1FF => letter(cp - 0x1F1E6),
        // Superscript and subscript digits.
        0x2070 => Some(b'0'),
        0x00B9 => Some(b'1'),
        0x00B2 => Some(b'2'),
        0x00B3 => Some(b'3'),
        0x2074..=0x2079 => digit(cp - 0x2070),
        0x2080..=0x2089 => digit(cp - 0x2080),
        _ => lookalike(c),
    }
}

/// Letters that look like an ASCII letter: Cyrillic and Greek homoglyphs
/// (Unicode's confusables, the common ones), Latin letters with marks.
fn lookalike(c: char) -> Option<u8> {
    let ascii = match c {
        'а' | 'А' | 'Α' | 'α' | 'à'..='å' | 'À'..='Å' | 'ā' | 'Ā' => 'a',
        'в' | 'В' | 'Β' | 'ь' | 'Ь' => 'b',
        'с' | 'С' | 'ϲ' | 'ç' | 'Ç' => 'c',
        'ԁ' => 'd',
        'е' | 'Е' | 'Ε' | 'ё' | 'Ё' | 'è'..='ë' | 'È'..='Ë' | 'ē' | 'Ē' => 'e',
        'ɡ' => 'g',
        'н' | 'Н' | 'Η' | 'һ' => 'h',
        'і' | 'І' | 'Ι' | 'ι' | 'ì'..='ï' | 'Ì'..='Ï' | 'ı' => 'i',
        'ј' | 'Ј' => 'j',
        'к' | 'К' | 'Κ' | 'κ' => 'k',
        'ӏ' | 'Ӏ' => 'l',
        'м' | 'М' | 'Μ' => 'm',
        'Ν' | 'ñ' | 'Ñ' => 'n',
        'о' | 'О' | 'Ο' | 'ο' | 'ò'..='ö' | 'Ò'..='Ö' | 'ø' | 'Ø' => 'o',
        'р' | 'Р' | 'Ρ' | 'ρ' => 'p',
        'ԛ' => 'q',
        'ѕ' | 'Ѕ' => 's',
        'т' | 'Т' | 'Τ' => 't',
        'υ' | 'ù'..='ü' | 'Ù'..='Ü' => 'u',
        'ν' | 'ѵ' => 'v',
        'ԝ' | 'ᴡ' => 'w',
        'х' | 'Х' | 'Χ' | 'χ' => 'x',
        'у' | 'У' | 'Υ' | 'ý' | 'ÿ' | 'Ý' => 'y',
        'Ζ' => 'z',
        // Small capitals.
        'ᴀ' => 'a',
        'ʙ' => 'b',
        'ᴄ' => 'c',
        'ᴅ' => 'd',
        'ᴇ' => 'e',
        'ꜰ' => 'f',
        'ɢ' => 'g',
        'ʜ' => 'h',
        'ɪ' => 'i',
        'ᴊ' => 'j',
        'ᴋ' => 'k',
        'ʟ' => 'l',
        'ᴍ' => 'm',
        'ɴ' => 'n',
        'ᴏ' => 'o',
        'ᴘ' => 'p',
        'ǫ' => 'q',
        'ʀ' => 'r',
        'ꜱ' => 's',
        'ᴛ' => 't',
        'ᴜ' => 'u',
        'ᴠ' => 'v',
        'ʏ' => 'y',
        'ᴢ' => 'z',
        _ => return None,
    };
    Some(ascii as u8)
}

/// `text` folded (as `fold`), then its characters taken every second
/// one, at each offset, and folded: a secret with a noise character put
/// after each of its own (`gxhxpx_xRx…`, `g1h2p3…`) is whole in one of
/// them. (Every third one too would cost a third more of the whole
/// fold's search, for two noise characters.) `each` gets each fold with the byte offset
/// in `text` each of its characters came from.
pub(super) fn each_stride(text: &str, positions: bool, mut each: impl FnMut(&[u8], &[u32])) {
    // One pass: the fold and the two halves (even and odd characters,
    // each folded) together. Without positions (a check that only asks
    // which secret) the offsets are not kept: `each` gets them empty.
    let mut fold = Vec::with_capacity(text.len());
    let mut at = Vec::new();
    let mut halves: [Vec<u8>; 2] = Default::default();
    let mut from: [Vec<u32>; 2] = Default::default();
    if positions {
        at.reserve(text.len());
    }
    let mut keep = |folded: u8, i: usize, n: usize| {
        if folded == 0 {
            return;
        }
        fold.push(folded);
        halves[n & 1].push(folded);
        if positions {
            at.push(i as u32);
            from[n & 1].push(i as u32);
        }
    };
    if text.is_ascii() && !positions {
        // As `fold_str`: written always, kept by the count (the halves
        // split by the character's own index, kept or not).
        fold.resize(text.len(), 0);
        for half in &mut halves {
            half.resize(text.len() / 2 + 1, 0);
        }
        let mut kept = [0usize; 3];
        for (i, &b) in text.as_bytes().iter().enumerate() {
            let folded = ASCII[usize::from(b)];
            let keep = usize::from(folded != 0);
            fold[kept[2]] = folded;
            kept[2] += keep;
            halves[i & 1][kept[i & 1]] = folded;
            kept[i & 1] += keep;
        }
        fold.truncate(kept[2]);
        halves[0].truncate(kept[0]);
        halves[1].truncate(kept[1]);
    } else if text.is_ascii() {
        for (i, &b) in text.as_bytes().iter().enumerate() {
            keep(ASCII[usize::from(b)], i, i);
        }
    } else {
        for (n, (i, c)) in text.char_indices().enumerate() {
            let folded = if c.is_ascii() {
                ASCII[c as usize]
            } else {
                fold_char(c).unwrap_or(0)
            };
            keep(folded, i, n);
        }
    }
    each(&fold, &at);
    if fold.len() >= 2 * FOLDED_MIN {
        each(&halves[0], &from[0]);
        each(&halves[1], &from[1]);
    }
}

/// The text columns of a dump (`xxd`, `hexdump -C`, `od -c`): each line
/// that starts with an offset, its text part (between `|`s, after the hex
/// groups' last double space, or all of it after the offset), run
/// together, with the byte offset in `text` of each character. None when
/// fewer than two lines look like a dump's.
pub(super) fn dump_view(text: &str) -> Option<(String, Vec<u32>)> {
    let mut view = String::new();
    let mut at = Vec::new();
    let mut lines = 0usize;
    let mut start = 0usize;
    for line in text.split_inclusive('\n') {
        let line_start = start;
        start += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let offset_len = body.bytes().take_while(u8::is_ascii_hexdigit).count();
        let after = &body[offset_len..];
        if offset_len < 4 || !(after.starts_with(':') || after.starts_with(' ')) {
            continue;
        }
        let rest_at = offset_len + 1;
        let rest = &body[rest_at..];
        let (part, part_at) = if let (Some(open), Some(close)) = (rest.find('|'), rest.rfind('|'))
            && close > open
        {
            (&rest[open + 1..close], rest_at + open + 1)
        } else if let Some(gap) = rest.trim_end().rfind("  ")
            && rest[..gap].split_whitespace().all(|g| {
                g.bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b'0' || b == b'1')
            })
            && rest[..gap].split_whitespace().count() > 1
        {
            (&rest[gap + 2..], rest_at + gap + 2)
        } else {
            (rest, rest_at)
        };
        lines += 1;
        for (i, c) in part.char_indices() {
            view.push(c);
            at.push((line_start + part_at + i) as u32);
        }
    }
    (lines >= 2).then_some((view, at))
}

/// The keyless letter ciphers of a secret's fold to look for, with their
/// labels: every Caesar shift of its letters, Atbash, rot18, every
/// character moved by up to six code points, neighbours swapped, chunks
/// of three to six reversed, and its even and odd characters one after
/// the other. Forms
/// that do not look random are left out. (The fold of each of the
/// secret's encodings the ledger lists is the matcher's to add.)
pub(super) fn cipher_forms(secret: &str) -> Vec<(Vec<u8>, &'static str)> {
    let folded = fold_str(secret);
    if !looks_random(&folded) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for shift in 1..26u8 {
        out.push((
            folded
                .iter()
                .map(|&b| {
                    if b.is_ascii_lowercase() {
                        b'a' + (b - b'a' + shift) % 26
                    } else {
                        b
                    }
                })
                .collect(),
            "caesar",
        ));
    }
    out.push((
        folded
            .iter()
            .map(|&b| {
                if b.is_ascii_lowercase() {
                    b'z' - (b - b'a')
                } else {
                    b
                }
            })
            .collect(),
        "atbash",
    ));
    // Every character moved a few code points (`chr(ord(c) + 1)`): the
    // letters and digits that stay letters and digits, folded.
    for shift in [-6i32, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6] {
        let moved: String = secret
            .chars()
            .filter_map(|c| char::from_u32((c as u32).checked_add_signed(shift)?))
            .collect();
        out.push((fold_str(&moved), "shifted"));
    }
    // rot18: rot13 of the letters and rot5 of the digits.
    out.push((
        folded
            .iter()
            .map(|&b| match b {
                b'a'..=b'z' => b'a' + (b - b'a' + 13) % 26,
                b'0'..=b'9' => b'0' + (b - b'0' + 5) % 10,
                _ => b,
            })
            .collect(),
        "caesar",
    ));
    // Neighbours swapped, and chunks of 3 to 6 each reversed, in the
    // secret as written (its `_` and `-` count), then folded.
    let chars: Vec<char> = secret.chars().collect();
    for size in 2..=6 {
        let mut shuffled = chars.clone();
        for chunk in shuffled.chunks_mut(size) {
            chunk.reverse();
        }
        out.push((fold_str(&shuffled.iter().collect::<String>()), "shuffled"));
    }
    let even: String = chars.iter().step_by(2).collect();
    let odd: String = chars.iter().skip(1).step_by(2).collect();
    for (first, second) in [(&even, &odd), (&odd, &even)] {
        let mut split = fold_str(first);
        split.extend(fold_str(second));
        out.push((split, "interleaved"));
    }
    out.retain(|(form, _)| looks_random(form));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folds each stride gives, with positions kept or not (the two
    /// are made by different loops).
    fn strides(text: &str, positions: bool) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        each_stride(text, positions, |fold, _| out.push(fold.to_vec()));
        out
    }

    #[test]
    fn strides_are_the_same_with_or_without_positions() {
        for text in [
            "",
            "g h p _ 1 2 3",
            "let key_1 = cache.get(&token_ids[1]).cloned(); // ghp_q8Zt2LwP0vXn5RkY7mJd",
            "gxhxpx_xqx8xZxtx2xLxwxPx0xvxXxnx5xRxkxYx7xmxJxdx and some words after it",
        ] {
            assert_eq!(strides(text, false), strides(text, true), "{text}");
            assert_eq!(strides(text, false)[0], fold_str(text), "{text}");
        }
    }

    #[test]
    fn separators_case_and_lookalikes_fold_away() {
        let (folded, at) = fold("G.h\tP_\u{a0}аВ\u{301}ｃ𝐝ⓔ①\u{fe0f}");
        assert_eq!(folded, b"ghpabcde1");
        // Offsets point at each character's first byte.
        assert_eq!(at[0], 0);
        assert_eq!(at[3], 8, "the Cyrillic а after P, _ and a no-break space");
    }

    #[test]
    fn ciphers_are_of_long_folds_only() {
        assert!(
            cipher_forms("Tr0ub4dor&3-horse?").is_empty(),
            "a fold of 15"
        );
        let forms = cipher_forms("ghp_Q8zt2Lw9Rk4mV7nX1cB5");
        let labels: Vec<&str> = forms.iter().map(|f| f.1).collect();
        for label in ["caesar", "atbash", "interleaved"] {
            assert!(labels.contains(&label), "{label} in {labels:?}");
        }
        assert!(forms.iter().all(|(f, _)| looks_random(f)));
        for word_like in [
            "postgrespassword",
            "Summer2024!",
            "correct horse battery staple",
        ] {
            assert!(cipher_forms(word_like).is_empty(), "{word_like}");
            assert!(!looks_random(&fold_str(word_like)), "{word_like}");
        }
        // Caesar by 13 is rot13 of the fold; by 1, each letter the next.
        assert!(forms.iter().any(|(f, _)| f == b"hiqr8au2mx9sl4nw7oy1dc5"));
    }
}
