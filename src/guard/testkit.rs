//! Fake credentials, their encoders and the seeded generator behind them:
//! the one source of test secrets for the guard's unit tests and the
//! scenario runner (`scenario::placeholders` builds its `{{GH}}`
//! placeholders on it). A leaf: it uses nothing of the guard, so tests of
//! the guard and the runner share values without either depending on the
//! other.
//!
//! Values come from a small xorshift generator seeded per run (time and
//! process id, or a fixed seed to reproduce a run); no value ever equals a
//! vendor's documented example key.

/// The placeholder tags, with what each stands for.
pub const TAGS: &[(&str, &str)] = &[
    ("AK", "AWS access key id"),
    ("AS", "AWS secret access key"),
    ("GH", "GitHub personal access token"),
    ("GL", "GitLab personal access token"),
    ("SL", "Slack bot token"),
    ("SK", "Stripe live secret key"),
    ("OA", "OpenAI project key"),
    ("ANT", "Anthropic API key"),
    ("NPM", "npm access token"),
    ("JWT", "JSON web token"),
    ("PK", "RSA private key block"),
];

/// The transforms, applied left to right: `{{GH|rev|b64}}`.
pub const TRANSFORMS: &[&str] = &[
    "b64",
    "b64url",
    "hex",
    "url",
    "rev",
    "zw",
    "first-half",
    "second-half",
    "rot13",
    "b32",
    "spaced",
    "codes",
    "chr",
    "xesc",
    "hexcolon",
    "upper",
    "oct",
    "octcodes",
    "bin",
    "binrun",
    "b85",
    "a85",
    "z85",
    "zlib64",
    "gzip64",
    "html",
    "uesc",
    "qp",
    "pieces3",
];

/// Keys vendors publish in their docs: a fake must never be one of them
/// (scanners allow-list them, which would make a scenario pass for the
/// wrong reason).
const DOCUMENTED_EXAMPLES: &[&str] = &[
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
];

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";
pub const B64_STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const B64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const JWT_HEADER: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";

/// A xorshift64* generator: enough randomness for fake keys, no crate.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // splitmix64 spreads a small or zero seed over all bits.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    pub fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| chars[(self.next_u64() % chars.len() as u64) as usize])
            .collect()
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// A seed for a fresh run: the clock and the process id, mixed.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    Rng::new(nanos ^ (u64::from(std::process::id()) << 32)).next_u64()
}

/// A seed derived from a run's seed and some names (scenario, mode, tag),
/// so each gets its own values and a run is reproducible from one number.
pub fn derive_seed(seed: u64, parts: &[&str]) -> u64 {
    // FNV-1a over the parts, then mixed with the seed.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    Rng::new(seed ^ h).next_u64()
}

/// A fake credential of the real shape for `tag` (see [`TAGS`]), or `None`
/// for an unknown tag. The same tag and seed give the same value.
pub fn fake(tag: &str, seed: u64) -> Option<String> {
    let mut rng = Rng::new(seed);
    loop {
        let value = shape(tag, &mut rng)?;
        let documented = DOCUMENTED_EXAMPLES.contains(&value.as_str())
            || value.contains("EXAMPLE")
            || value.to_ascii_lowercase().contains("example");
        if !documented {
            return Some(value);
        }
    }
}

fn shape(tag: &str, rng: &mut Rng) -> Option<String> {
    let alnum = format!("{UPPER}{LOWER}{DIGITS}");
    let value = match tag {
        "AK" => format!("AKIA{}", rng.pick(&format!("{UPPER}234567"), 16)),
        "AS" => rng.pick(&format!("{alnum}/+"), 40),
        "GH" => format!("ghp_{}", rng.pick(&alnum, 36)),
        "GL" => format!("glpat-{}", rng.pick(&format!("{alnum}_-"), 20)),
        "SL" => {
            let (a, b) = (rng.range(10, 13), rng.range(10, 13));
            format!(
                "xoxb-{}{}-{}{}-{}",
                rng.pick("123456789", 1),
                rng.pick(DIGITS, a - 1),
                rng.pick("123456789", 1),
                rng.pick(DIGITS, b - 1),
                rng.pick(&alnum, 24)
            )
        }
        "SK" => {
            let n = rng.range(24, 40);
            format!("sk_live_{}", rng.pick(&alnum, n))
        }
        // OpenAI project keys carry "T3BlbkFJ" (base64 of "OpenAI") in the middle.
        "OA" => format!(
            "sk-proj-{}T3BlbkFJ{}",
            rng.pick(&format!("{alnum}_-"), 58),
            rng.pick(&format!("{alnum}_-"), 58)
        ),
        "ANT" => format!("sk-ant-api03-{}AA", rng.pick(&format!("{alnum}_-"), 93)),
        "NPM" => format!("npm_{}", rng.pick(&alnum, 36)),
        "JWT" => {
            let payload = format!(
                "{{\"sub\":\"{}\",\"name\":\"{}\",\"iat\":{}}}",
                rng.pick(DIGITS, 10),
                rng.pick(LOWER, 8),
                1_600_000_000 + rng.range(0, 100_000_000)
            );
            format!(
                "{JWT_HEADER}.{}.{}",
                base64(payload.as_bytes(), B64_URL, false),
                base64(&rng.bytes(32), B64_URL, false)
            )
        }
        "PK" => {
            // The DER of a 2048-bit RSA key starts like this; the rest is noise.
            let mut der = vec![0x30, 0x82, 0x04, 0xa3, 0x02, 0x01, 0x00, 0x02, 0x82, 0x01];
            der.extend(rng.bytes(1182));
            let body = base64(&der, B64_STD, true);
            let lines: Vec<&str> = body
                .as_bytes()
                .chunks(64)
                .map(|c| std::str::from_utf8(c).unwrap_or_default())
                .collect();
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
                lines.join("\n")
            )
        }
        _ => return None,
    };
    Some(value)
}

/// Base64 with the given alphabet, with or without `=` padding.
pub fn base64(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let emit = chunk.len() + 1;
        for i in 0..4 {
            if i < emit {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Applies one transform by name; `None` for an unknown name.
pub fn transform(name: &str, s: &str) -> Option<String> {
    let chars: Vec<char> = s.chars().collect();
    let half = chars.len() / 2;
    Some(match name {
        "b64" => base64(s.as_bytes(), B64_STD, true),
        "b64url" => base64(s.as_bytes(), B64_URL, false),
        "hex" => s.bytes().map(|b| format!("{b:02x}")).collect(),
        "url" => percent(s),
        "rev" => chars.iter().rev().collect(),
        "zw" => {
            let mut out = String::new();
            for (i, c) in chars.iter().enumerate() {
                if i > 0 {
                    out.push('\u{200B}');
                }
                out.push(*c);
            }
            out
        }
        "first-half" => chars[..half].iter().collect(),
        "second-half" => chars[half..].iter().collect(),
        "rot13" => chars
            .iter()
            .map(|&c| match c {
                'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
                'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
                _ => c,
            })
            .collect(),
        "b32" => base32(s.as_bytes(), true),
        "spaced" => {
            let spaced: Vec<String> = chars.iter().map(char::to_string).collect();
            spaced.join(" ")
        }
        "chr" => {
            let codes: Vec<String> = chars
                .iter()
                .map(|&c| format!("chr({})", c as u32))
                .collect();
            codes.join("+")
        }
        "xesc" => s.bytes().map(|b| format!("\\x{b:02x}")).collect(),
        "hexcolon" => {
            let pairs: Vec<String> = s.bytes().map(|b| format!("{b:02x}")).collect();
            pairs.join(":")
        }
        "upper" => s.to_ascii_uppercase(),
        "codes" => {
            let codes: Vec<String> = chars.iter().map(|&c| (c as u32).to_string()).collect();
            codes.join(",")
        }
        "oct" => s.bytes().map(|b| format!("\\{b:03o}")).collect(),
        "octcodes" => {
            let codes: Vec<String> = s.bytes().map(|b| format!("{b:03o}")).collect();
            codes.join(" ")
        }
        "bin" => {
            let codes: Vec<String> = s.bytes().map(|b| format!("{b:08b}")).collect();
            codes.join(" ")
        }
        "binrun" => s.bytes().map(|b| format!("{b:08b}")).collect(),
        "b85" => base85(s.as_bytes(), 0),
        "a85" => base85(s.as_bytes(), 1),
        "z85" => base85(s.as_bytes(), 2),
        "zlib64" => base64(
            &miniz_oxide::deflate::compress_to_vec_zlib(s.as_bytes(), 6),
            B64_STD,
            true,
        ),
        "gzip64" => base64(&gzip(s.as_bytes()), B64_STD, true),
        "html" => s.bytes().map(|b| format!("&#{b};")).collect(),
        "uesc" => s.bytes().map(|b| format!("\\u{b:04x}")).collect(),
        "qp" => s.bytes().map(|b| format!("={b:02X}")).collect(),
        "pieces3" => {
            // One assignment a line, joined at the end: what a split into
            // three-character pieces looks like in code.
            let pieces: Vec<String> = chars.chunks(3).map(|p| p.iter().collect()).collect();
            let mut out = String::new();
            for (i, p) in pieces.iter().enumerate() {
                out.push_str(&format!("p{i} = \"{p}\"\n"));
            }
            let names: Vec<String> = (0..pieces.len()).map(|i| format!("p{i}")).collect();
            out.push_str(&format!("key = {}\n", names.join(" + ")));
            out
        }
        _ => return None,
    })
}

/// Base85 in one of its three alphabets (0: RFC 1924, as Python's
/// `b85encode`; 1: Ascii85, as `a85encode`; 2: Z85), a short last group
/// padded and cut as those encoders do.
pub fn base85(bytes: &[u8], alphabet: usize) -> String {
    let table: Vec<u8> = match alphabet {
        0 => {
            b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
                .to_vec()
        }
        1 => (b'!'..=b'u').collect(),
        _ => {
            b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
                .to_vec()
        }
    };
    let mut out = String::new();
    for group in bytes.chunks(4) {
        let mut four = [0u8; 4];
        four[..group.len()].copy_from_slice(group);
        let mut n = u32::from_be_bytes(four);
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = table[(n % 85) as usize];
            n /= 85;
        }
        out.extend(digits[..group.len() + 1].iter().map(|&d| char::from(d)));
    }
    out
}

/// A gzip member of `bytes` (RFC 1952), as `gzip.compress` makes one.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0xFF];
    out.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(bytes, 6));
    let crc = bytes.iter().fold(!0u32, |crc, &b| {
        (0..8).fold(crc ^ u32::from(b), |c, _| {
            if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            }
        })
    });
    out.extend_from_slice(&(!crc).to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out
}

/// RFC 4648 base32; without `pad`, only the whole 5-byte groups.
pub fn base32(bytes: &[u8], pad: bool) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::new();
    for group in bytes.chunks(5) {
        if group.len() < 5 && !pad {
            break;
        }
        let mut n = 0u64;
        for i in 0..5 {
            n = (n << 8) | u64::from(group.get(i).copied().unwrap_or(0));
        }
        let used = (group.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < used {
                out.push(ALPHABET[((n >> (35 - 5 * i)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Percent-encoding of every byte but the unreserved ones (RFC 3986).
pub fn percent(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
