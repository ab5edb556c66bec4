//! Characters written as codes: runs of decimal, hex, octal or binary
//! character codes (`chr(113)+chr(56)`, `od -b`'s `161 070`, `01110001`),
//! and escapes decoded where they stand in text (`\\161`, `\\x71`,
//! `&#113;`, `%71`, quoted-printable's soft line breaks).

/// Runs of at least `min` printable character codes, decoded, read three
/// ways in one pass: [decimal or hex-prefixed (`113`, `0x71`, `\x71`,
/// `\u0071`, `&#113;`), octal (`\161`, `0o161`, `161` as `od -b` prints
/// it), binary (`01110001`, eight digits a byte, spaced or run
/// together)], each None where there are none.
pub(crate) fn char_codes(value: &str, min: usize) -> [Option<String>; 3] {
    code_runs(value, min).map(|(text, _)| (!text.is_empty()).then_some(text))
}

/// Where a run of codes stands: its first byte in the decoded text, and
/// the bytes of the value it was read from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CodeRun {
    pub at: usize,
    pub span: (usize, usize),
}

/// `char_codes`' three readings, each with where its runs came from.
pub(crate) fn code_runs(value: &str, min: usize) -> [(String, Vec<CodeRun>); 3] {
    let mut out: [(String, Vec<CodeRun>); 3] = Default::default();
    if !codes_in_a_row(value.as_bytes(), min) {
        return out;
    }
    let mut runs: [String; 3] = Default::default();
    // The value's bytes each open run spans.
    let mut spans: [(usize, usize); 3] = [(0, 0); 3];
    let flush = |run: &mut String, span: (usize, usize), out: &mut (String, Vec<CodeRun>)| {
        if run.len() >= min {
            out.1.push(CodeRun {
                at: out.0.len(),
                span,
            });
            out.0.push_str(run);
            out.0.push('\n');
        }
        run.clear();
    };
    let printable = |code: Option<u32>| {
        code.and_then(char::from_u32)
            .filter(|c| (' '..='~').contains(c))
    };
    let base = value.as_ptr() as usize;
    // Split on bytes: a token is ASCII letters and digits, and every byte
    // of a wider character separates, as the character would.
    // The token after `U+` is a code point in hex.
    let mut code_point = false;
    for token in value.as_bytes().split(|b| !b.is_ascii_alphanumeric()) {
        if token.is_empty() {
            continue;
        }
        let start = token.as_ptr() as usize - base;
        let end = start + token.len();
        let after_plus = std::mem::take(&mut code_point);
        if token.eq_ignore_ascii_case(b"u") && value.as_bytes().get(end) == Some(&b'+') {
            code_point = true;
            continue;
        }
        // Words are no code (but `x71` and `u0071` are): the common case.
        if token[0].is_ascii_alphabetic() && !matches!(token[0], b'x' | b'u') {
            if !is_code_word(token) {
                for ((run, span), out) in runs.iter_mut().zip(spans).zip(out.iter_mut()) {
                    flush(run, span, out);
                }
            }
            continue;
        }
        let decimal = match token
            .strip_prefix(b"0x")
            .or_else(|| after_plus.then_some(token))
            .or_else(|| token.strip_prefix(b"0X"))
            .or_else(|| token.strip_prefix(b"x").filter(|h| h.len() == 2))
            .or_else(|| token.strip_prefix(b"u").filter(|h| h.len() == 4))
        {
            Some(hex) => number(hex, 16),
            None => number(token, 10),
        };
        let fresh = [runs[0].is_empty(), runs[1].is_empty(), runs[2].is_empty()];
        let read = [
            printable(decimal).map(|c| runs[0].push(c)),
            octal(token).map(|c| runs[1].push(c)),
            binary(token).map(|chars| runs[2].push_str(&chars)),
        ];
        for ((((read, run), span), out), fresh) in read
            .iter()
            .zip(runs.iter_mut())
            .zip(spans.iter_mut())
            .zip(out.iter_mut())
            .zip(fresh)
        {
            if read.is_none() {
                flush(run, *span, out);
            } else if fresh {
                *span = (start, end);
            } else {
                span.1 = end;
            }
        }
    }
    for ((run, span), out) in runs.iter_mut().zip(spans).zip(out.iter_mut()) {
        flush(run, span, out);
    }
    out
}

/// Whether `bytes` hold `min` tokens in a row that may be character codes
/// (`103`, `x71`, `0o161`, `u0071`, written backwards too: `301`,
/// `17x0`), a run of binary digits counting a code for each eight: what
/// a run of `min` codes needs in any of `code_runs`' readings. The words
/// between codes (`chr`, `rhc`, the `U` of `U+0071`) do not end a row.
/// A cheap pass first: most values with numbers have them one here and
/// one there.
pub(crate) fn codes_in_a_row(bytes: &[u8], min: usize) -> bool {
    // A byte loop over a table, not a split into tokens: this runs over
    // every value, and most of a value is words.
    const ALNUM: u8 = 1;
    const DIGIT: u8 = 2;
    const CODE: u8 = 4;
    const CLASS: [u8; 256] = {
        let mut table = [0u8; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            if c.is_ascii_alphanumeric() {
                table[b] |= ALNUM;
            }
            if c.is_ascii_digit() {
                table[b] |= DIGIT;
            }
            if c.is_ascii_hexdigit() || matches!(c, b'x' | b'X' | b'o' | b'O' | b'u' | b'U') {
                table[b] |= CODE;
            }
            b += 1;
        }
        table
    };
    let mut row = 0;
    let mut i = 0;
    while i < bytes.len() {
        if CLASS[usize::from(bytes[i])] & ALNUM == 0 {
            i += 1;
            continue;
        }
        let start = i;
        let (mut any, mut all) = (0u8, CODE);
        while i < bytes.len() && CLASS[usize::from(bytes[i])] & ALNUM != 0 {
            let class = CLASS[usize::from(bytes[i])];
            any |= class;
            all &= class;
            i += 1;
        }
        let token = &bytes[start..i];
        if any & DIGIT != 0 && all & CODE != 0 {
            row += (token.len() / 8).max(1);
            if row >= min {
                return true;
            }
        } else if row > 0 && !(is_code_word(token) || token.eq_ignore_ascii_case(b"u")) {
            row = 0;
        }
    }
    false
}

/// Whether `token` is a word that stands between character codes without
/// ending their run: `chr(113)+chr(56)`, `String.fromCharCode(…)`, and
/// the same written backwards.
pub(crate) fn is_code_word(token: &[u8]) -> bool {
    const WORDS: [&[u8]; 11] = [
        b"rhc",
        b"rahc",
        b"chr",
        b"char",
        b"string",
        b"fromcharcode",
        b"bytes",
        b"bytearray",
        b"ord",
        b"pack",
        b"c",
    ];
    // Most words are none of these: told by length and first letter
    // before comparing.
    token.len() <= 12
        && matches!(
            token.first().map(|b| b | 0x20),
            Some(b'r' | b'c' | b's' | b'f' | b'b' | b'o' | b'p')
        )
        && WORDS.iter().any(|w| token.eq_ignore_ascii_case(w))
}

/// An octal code (`161`, `0o161`, echo -e's `0161`) as a printable char.
fn octal(token: &[u8]) -> Option<char> {
    let digits = token
        .strip_prefix(b"0o")
        .or_else(|| token.strip_prefix(b"0O"))
        .or_else(|| token.strip_prefix(b"0").filter(|d| d.len() == 3))
        .unwrap_or(token);
    let code = (digits.len() <= 3).then(|| number(digits, 8)).flatten()?;
    char::from_u32(code).filter(|c| (' '..='~').contains(c))
}

/// Binary codes, eight digits a byte (seven allowed alone), as printable
/// text; None unless every byte is printable.
fn binary(token: &[u8]) -> Option<String> {
    let digits = token.strip_prefix(b"0b").unwrap_or(token);
    let groups: Vec<&[u8]> = match digits.len() {
        7 | 8 => vec![digits],
        n if n >= 16 && n % 8 == 0 => digits.chunks_exact(8).collect(),
        _ => return None,
    };
    groups
        .into_iter()
        .map(|group| {
            number(group, 2)
                .and_then(char::from_u32)
                .filter(|c| (' '..='~').contains(c))
        })
        .collect()
}

/// A value with its escapes decoded.
#[derive(Debug)]
pub(crate) struct Unescaped {
    pub text: Vec<u8>,
    /// How many escapes were decoded.
    pub escapes: usize,
    /// From the first escape to the end of the last, in the value.
    pub span: (usize, usize),
}

/// `value` with its escapes decoded where they stand, literal characters
/// kept between them: `\161` and `\0161` (octal), `\x71`, `\u0071`,
/// `\u{71}`, `\U00000071`, `&#113;`, `&#x71;`, `%71`, and quoted-printable's
/// soft line breaks (`=` at a line's end; `=71` for every byte is hex with
/// separators, read with the other hex). None when it holds no escape.
pub(crate) fn unescaped(value: &str) -> Option<Unescaped> {
    let bytes = value.as_bytes();
    if !bytes
        .iter()
        .any(|b| matches!(b, b'\\' | b'&' | b'%' | b'='))
    {
        return None;
    }
    let hex = |digits: &[u8]| number(digits, 16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut decoded = 0usize;
    let mut span = (usize::MAX, 0);
    let mut i = 0;
    // The longest run of `digit` bytes at `from`, at most `max` long.
    let digits_at = |from: usize, max: usize, digit: fn(&u8) -> bool| {
        bytes.get(from..).map_or(0, |rest| {
            rest.iter().take(max).take_while(|b| digit(b)).count()
        })
    };
    let escape_byte = |b: &u8| matches!(b, b'\\' | b'&' | b'%' | b'=');
    while i < bytes.len() {
        // The text up to the next byte that may start an escape, copied
        // whole: most of a value is no escape.
        let plain = bytes[i..]
            .iter()
            .position(escape_byte)
            .unwrap_or(bytes.len() - i);
        out.extend_from_slice(&bytes[i..i + plain]);
        i += plain;
        if i >= bytes.len() {
            break;
        }
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        // (code, bytes consumed), or None to copy `b` as it is.
        let escape: Option<(u32, usize)> = match (b, next) {
            (b'\\', Some(b'0'..=b'7')) => {
                let n = digits_at(i + 1, 4, |d| (b'0'..=b'7').contains(d));
                // `\0161` (echo -e) takes four digits when the first is 0.
                let n = if n == 4 && next == Some(b'0') {
                    4
                } else {
                    n.min(3)
                };
                number(&bytes[i + 1..i + 1 + n], 8)
                    .filter(|&c| c <= 0xFF)
                    .map(|c| (c, 1 + n))
            }
            (b'\\', Some(b'x')) => {
                let n = digits_at(i + 2, 2, u8::is_ascii_hexdigit);
                (n > 0)
                    .then(|| hex(&bytes[i + 2..i + 2 + n]))
                    .flatten()
                    .map(|c| (c, 2 + n))
            }
            (b'\\', Some(b'u')) if bytes.get(i + 2) == Some(&b'{') => {
                let n = digits_at(i + 3, 6, u8::is_ascii_hexdigit);
                (n > 0 && bytes.get(i + 3 + n) == Some(&b'}'))
                    .then(|| hex(&bytes[i + 3..i + 3 + n]))
                    .flatten()
                    .map(|c| (c, 4 + n))
            }
            (b'\\', Some(b'u' | b'U')) => {
                let want = if next == Some(b'u') { 4 } else { 8 };
                (digits_at(i + 2, want, u8::is_ascii_hexdigit) == want)
                    .then(|| hex(&bytes[i + 2..i + 2 + want]))
                    .flatten()
                    .map(|c| (c, 2 + want))
            }
            (b'&', Some(b'#')) => {
                let x = matches!(bytes.get(i + 2), Some(b'x' | b'X'));
                let from = i + 2 + usize::from(x);
                let n = if x {
                    digits_at(from, 6, u8::is_ascii_hexdigit)
                } else {
                    digits_at(from, 7, u8::is_ascii_digit)
                };
                let code = number(&bytes[from..from + n], if x { 16 } else { 10 });
                let semi = usize::from(bytes.get(from + n) == Some(&b';'));
                code.filter(|_| n > 0).map(|c| (c, from + n + semi - i))
            }
            (b'%', Some(_)) => (digits_at(i + 1, 2, u8::is_ascii_hexdigit) == 2)
                .then(|| hex(&bytes[i + 1..i + 3]))
                .flatten()
                .map(|c| (c, 3)),
            (b'=', Some(b'\n')) => Some((u32::MAX, 2)),
            (b'=', Some(b'\r')) if bytes.get(i + 2) == Some(&b'\n') => Some((u32::MAX, 3)),
            _ => None,
        };
        match escape {
            Some((code, used)) => {
                decoded += 1;
                span = (span.0.min(i), i + used);
                if code <= 0xFF {
                    // A byte, as C, shells and percent-encoding mean it.
                    out.push(code as u8);
                } else if let Some(c) = char::from_u32(code) {
                    let mut utf8 = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                }
                i += used;
            }
            None => {
                out.push(b);
                i += 1;
            }
        }
    }
    (decoded > 0).then_some(Unescaped {
        text: out,
        escapes: decoded,
        span,
    })
}

/// ASCII digits of `radix` as a number; None when empty, not all
/// digits, or too large (as `u32::from_str_radix` on such a token).
fn number(digits: &[u8], radix: u32) -> Option<u32> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &b| {
        let digit = char::from(b).to_digit(radix)?;
        n.checked_mul(radix)?.checked_add(digit)
    })
}
