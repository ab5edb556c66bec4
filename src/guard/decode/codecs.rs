//! The decoders the guard reads values with, each appending what it
//! decodes to a caller's buffer (one buffer serves every reading of a
//! value, so a value's thousands of runs cost no allocation each): hex,
//! base64 of either alphabet, base32, the three base85 alphabets, and
//! zlib or gzip streams found inside decoded bytes.

/// A run of digits in `radix` (10 or 8) read as one big number, its
/// bytes big-endian: a secret printed as an integer
/// (`int.from_bytes(token, 'big')`). Quadratic in the run, which callers
/// keep to a few hundred digits.
pub(super) fn big_number(digits: &[u8], radix: u8, out: &mut Vec<u8>) {
    // Little-endian bytes while reading, most significant digit first.
    let mut value: Vec<u8> = Vec::with_capacity(digits.len() / 2 + 1);
    for &d in digits {
        let mut carry = u32::from(d.wrapping_sub(b'0'));
        for byte in value.iter_mut() {
            let v = u32::from(*byte) * u32::from(radix) + carry;
            *byte = v as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            value.push(carry as u8);
            carry >>= 8;
        }
    }
    out.extend(value.iter().rev());
}

/// uuencoded lines (a length character, then four characters for every
/// three bytes), decoded one after another; the lines that do not fit
/// the form are left out.
pub(super) fn uudecode(text: &[u8], out: &mut Vec<u8>) {
    let value = |c: u8| (c.wrapping_sub(b' ')) & 63;
    for line in text.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some((&first, body)) = line.split_first() else {
            continue;
        };
        let n = usize::from(value(first));
        let want = n.div_ceil(3) * 4;
        if n == 0
            || !(want..=want + 1).contains(&body.len())
            || !body.iter().all(|b| (b' '..=b'`').contains(b))
        {
            continue;
        }
        let mut made = 0;
        for group in body.chunks(4).filter(|g| g.len() == 4) {
            let [a, b, c, d] = [group[0], group[1], group[2], group[3]].map(value);
            for byte in [a << 2 | b >> 4, b << 4 | c >> 2, c << 6 | d] {
                if made < n {
                    out.push(byte);
                    made += 1;
                }
            }
        }
    }
}

/// Hex digits as bytes, two per byte; a stray digit at the end is left.
pub(super) fn hex(digits: &[u8], out: &mut Vec<u8>) {
    let value = |b: u8| match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    };
    out.extend(
        digits
            .chunks_exact(2)
            .map(|p| (value(p[0]) << 4) | value(p[1])),
    );
}

/// Base64 of either alphabet; padding and stray characters end a group.
pub(super) fn base64(text: &[u8], out: &mut Vec<u8>) {
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
    let value = |b: u8| VALUE[usize::from(b)];
    out.reserve(text.len() * 3 / 4 + 3);
    let mut i = 0;
    while i < text.len() {
        // Four digits at a time: three bytes out (a digit's value is under
        // 64; NONE has the high bit).
        if let Some(&[a, b, c, d]) = text.get(i..i + 4) {
            let (a, b, c, d) = (value(a), value(b), value(c), value(d));
            if (a | b | c | d) & 0x80 == 0 {
                let n = u32::from(a) << 18 | u32::from(b) << 12 | u32::from(c) << 6 | u32::from(d);
                out.extend_from_slice(&n.to_be_bytes()[1..]);
                i += 4;
                continue;
            }
        }
        // Fewer than four digits before a stray byte or the end: the
        // whole bytes they hold (two digits make one, three make two),
        // and the group starts again after the stray byte.
        let digits = text[i..]
            .iter()
            .take(3)
            .take_while(|&&b| value(b) != NONE)
            .count();
        let n = text[i..i + digits]
            .iter()
            .fold(0u32, |n, &b| n << 6 | u32::from(value(b)));
        match digits {
            2 => out.push((n >> 4) as u8),
            3 => out.extend_from_slice(&[(n >> 10) as u8, (n >> 2) as u8]),
            _ => {}
        }
        i += digits + 1;
    }
}

/// RFC 4648 base32, either case; `=` or any other byte ends the data.
pub(super) fn base32(text: &[u8], out: &mut Vec<u8>) {
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
}

/// The three base85 alphabets in use: RFC 1924's (Python's `b85encode`,
/// git's binary patches), Ascii85's (`a85encode`, PostScript, PDF) and
/// ZeroMQ's Z85.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Base85 {
    Rfc1924,
    Ascii85,
    Z85,
}

impl Base85 {
    pub(super) const ALL: [Base85; 3] = [Base85::Rfc1924, Base85::Ascii85, Base85::Z85];

    /// Each byte's digit value in this alphabet, or 0xFF.
    fn table(self) -> &'static [u8; 256] {
        const fn build(alphabet: &[u8]) -> [u8; 256] {
            let mut table = [0xFF; 256];
            let mut i = 0;
            while i < alphabet.len() {
                table[alphabet[i] as usize] = i as u8;
                i += 1;
            }
            table
        }
        const RFC1924: [u8; 256] = build(
            b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~",
        );
        const ASCII85: [u8; 256] = {
            let mut table = [0xFF; 256];
            let mut b = b'!';
            while b <= b'u' {
                table[b as usize] = b - b'!';
                b += 1;
            }
            table
        };
        const Z85: [u8; 256] = build(
            b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#",
        );
        match self {
            Base85::Rfc1924 => &RFC1924,
            Base85::Ascii85 => &ASCII85,
            Base85::Z85 => &Z85,
        }
    }

    /// Whether `b` is a digit of this alphabet.
    pub(super) fn holds(self, b: u8) -> bool {
        self.table()[usize::from(b)] != 0xFF
    }

    /// `text` decoded from its first character, five digits to four
    /// bytes; a group that is not in the alphabet or overflows is skipped,
    /// so what follows it still decodes in step. Ascii85's `z` (four zero
    /// bytes) is read too.
    pub(super) fn decode(self, text: &[u8], out: &mut Vec<u8>) {
        let table = self.table();
        out.reserve(text.len() * 4 / 5);
        let mut i = 0;
        while i < text.len() {
            if self == Base85::Ascii85 && text[i] == b'z' {
                out.extend_from_slice(&[0; 4]);
                i += 1;
                continue;
            }
            let group = &text[i..(i + 5).min(text.len())];
            i += group.len();
            let mut n = 0u64;
            let mut whole = true;
            for &b in group {
                let v = table[usize::from(b)];
                whole &= v != 0xFF;
                n = n * 85 + u64::from(v & 0x7F);
            }
            // A short last group stands for its bytes padded with the
            // highest digit, as every encoder pads it.
            for _ in group.len()..5 {
                n = n * 85 + 84;
            }
            if whole && n <= u64::from(u32::MAX) {
                let bytes = (n as u32).to_be_bytes();
                out.extend_from_slice(&bytes[..group.len().saturating_sub(1).min(4)]);
            }
        }
    }
}

/// Where a compressed stream starts in `bytes`: the gzip magic anywhere,
/// a zlib header only at the start (two bytes is too weak a sign
/// elsewhere); None when neither.
pub(super) fn compressed_at(bytes: &[u8]) -> Option<(usize, bool)> {
    // The magic's first byte, then the rest: a one-shot substring search
    // builds a searcher each call, and this runs on every reading.
    if let Some(at) =
        memchr::memchr_iter(0x1F, bytes).find(|&at| bytes[at..].starts_with(&[0x1F, 0x8B, 0x08]))
    {
        return Some((at, true));
    }
    let zlib = bytes.len() >= 2
        && bytes[0] & 0x0F == 8
        && bytes[0] >> 4 <= 7
        && (u16::from(bytes[0]) << 8 | u16::from(bytes[1])).is_multiple_of(31);
    zlib.then_some((0, false))
}

/// The stream at the start of `bytes` (gzip when `gzip`, else zlib)
/// inflated, at most `limit` bytes of it; what came out before an error
/// (a stream cut short) is kept.
pub(super) fn inflate(bytes: &[u8], gzip: bool, limit: usize, out: &mut Vec<u8>) {
    use miniz_oxide::inflate::{decompress_to_vec_with_limit, decompress_to_vec_zlib_with_limit};
    let result = if gzip {
        let Some(body) = gzip_body(bytes) else {
            return;
        };
        decompress_to_vec_with_limit(body, limit)
    } else {
        decompress_to_vec_zlib_with_limit(bytes, limit)
    };
    match result {
        Ok(text) => out.extend_from_slice(&text),
        Err(e) => out.extend_from_slice(&e.output),
    }
}

/// The deflate data of a gzip member: after its 10-byte header and the
/// optional fields its flags name (RFC 1952).
fn gzip_body(bytes: &[u8]) -> Option<&[u8]> {
    let flags = *bytes.get(3)?;
    let mut at = 10usize;
    if flags & 0x04 != 0 {
        let len = usize::from(*bytes.get(at)?) | usize::from(*bytes.get(at + 1)?) << 8;
        at += 2 + len;
    }
    for flag in [0x08, 0x10] {
        if flags & flag != 0 {
            at += memchr::memchr(0, bytes.get(at..)?)? + 1;
        }
    }
    if flags & 0x02 != 0 {
        at += 2;
    }
    bytes.get(at..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base85_of_each_alphabet_decodes_known_values() {
        // Python: base64.b85encode(b"hello world"), a85encode, and the
        // Z85 specification's own example.
        for (alphabet, text, want) in [
            (Base85::Rfc1924, &b"Xk~0{Zy<MXa%^M"[..], &b"hello world"[..]),
            (Base85::Ascii85, b"BOu!rD]j7BEbo7", b"hello world"),
            (
                Base85::Z85,
                b"HelloWorld",
                &[0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B],
            ),
        ] {
            let mut out = Vec::new();
            alphabet.decode(text, &mut out);
            assert_eq!(out, want, "{alphabet:?}");
        }
    }

    /// Base64 decoded a digit at a time, as the fast decoder must.
    fn base64_by_digits(text: &[u8]) -> Vec<u8> {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut out = Vec::new();
        let (mut acc, mut bits) = (0u32, 0);
        for &b in text {
            let v = match b {
                b'+' | b'-' => 62,
                b'/' | b'_' => 63,
                _ => match alphabet.iter().position(|&a| a == b) {
                    Some(v) => v as u32,
                    None => {
                        (acc, bits) = (0, 0);
                        continue;
                    }
                },
            };
            acc = (acc << 6) | v;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
                acc &= (1 << bits) - 1;
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn base64_four_digits_at_a_time_as_one_at_a_time(
            picks in proptest::collection::vec(0usize..70, 0..120)
        ) {
            let digits = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_= .\n!";
            let text: Vec<u8> = picks.iter().map(|&p| digits[p % digits.len()]).collect();
            let mut out = Vec::new();
            base64(&text, &mut out);
            proptest::prop_assert_eq!(out, base64_by_digits(&text));
        }
    }

    #[test]
    fn zlib_and_gzip_streams_are_found_and_inflated() {
        let text = b"the quick brown fox jumps over the lazy dog, twice over";
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(text, 6);
        assert_eq!(compressed_at(&zlib), Some((0, false)));
        let mut out = Vec::new();
        inflate(&zlib, false, 1 << 20, &mut out);
        assert_eq!(out, text);
        // A gzip member with a file name, behind two bytes of noise.
        let mut gzip = vec![7, 9, 0x1F, 0x8B, 0x08, 0x08, 0, 0, 0, 0, 0, 3];
        gzip.extend_from_slice(b"notes.txt\0");
        gzip.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(text, 6));
        let (at, is_gzip) = compressed_at(&gzip).expect("the magic is found");
        assert!(is_gzip);
        out.clear();
        inflate(&gzip[at..], true, 1 << 20, &mut out);
        assert_eq!(out, text);
        // A bomb stops at the limit.
        let zeros = miniz_oxide::deflate::compress_to_vec_zlib(&vec![0u8; 1 << 20], 9);
        out.clear();
        inflate(&zeros, false, 4096, &mut out);
        assert_eq!(out.len(), 4096);
    }
}
