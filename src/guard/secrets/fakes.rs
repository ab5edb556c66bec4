//! Fake credentials of real shape for scenarios, tests and benchmarks:
//! deterministic for a seed, and each one found by the scan.

use crate::guard::ledger::base64_encode;

/// The kinds `fake` can generate.
pub const FAKE_KINDS: &[&str] = &[
    "AK", "AS", "GH", "GL", "SL", "SK", "OA", "ANT", "NPM", "JWT", "PK", "GOOG", "PYPI",
];

/// A random, real-shaped fake credential of `kind` (a tag of [`FAKE_KINDS`]),
/// the same for the same seed. The scan finds each one, except "AS": an AWS
/// secret key is 40 plain base64 characters and is only recognisable where
/// it is assigned, as in `AWS_SECRET_ACCESS_KEY=<fake>`.
pub fn fake(kind: &str, rng_seed: u64) -> Option<String> {
    const UPPER32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const DIGITS: &[u8] = b"0123456789";
    let mut rng = XorShift::new(rng_seed);
    let r = &mut rng;
    let s = match kind {
        "AK" => format!("{}{}", ["AKIA", "ASIA"][r.below(2)], r.pick(UPPER32, 16)),
        "AS" => r.pick(B64, 40),
        "GH" => {
            if r.below(4) == 0 {
                format!("github_pat_{}_{}", r.pick(ALNUM, 22), r.pick(ALNUM, 59))
            } else {
                let prefix = ["ghp", "gho", "ghu", "ghs", "ghr"][r.below(5)];
                format!("{prefix}_{}", r.pick(ALNUM, 36))
            }
        }
        "GL" => format!("glpat-{}", r.pick(B64URL, 20)),
        "SL" => format!(
            "{}-{}-{}-{}",
            ["xoxb", "xoxp"][r.below(2)],
            r.pick(DIGITS, 11),
            r.pick(DIGITS, 12),
            r.pick(ALNUM, 24)
        ),
        "SK" => format!("{}_live_{}", ["sk", "rk"][r.below(2)], r.pick(ALNUM, 24)),
        "OA" => format!(
            "sk-proj-{}T3BlbkFJ{}",
            r.pick(B64URL, 74),
            r.pick(B64URL, 74)
        ),
        "ANT" => format!("sk-ant-api03-{}AA", r.pick(B64URL, 93)),
        "NPM" => format!("npm_{}", r.pick(ALNUM, 36)),
        "GOOG" => format!("AIza{}", r.pick(B64URL, 35)),
        "PYPI" => format!("pypi-AgEIcHlwaS5vcmc{}", r.pick(B64URL, 70)),
        "JWT" => {
            let header = base64_encode(br#"{"alg":"HS256","typ":"JWT"}"#, true);
            let claims = format!(
                r#"{{"sub":"{}","name":"user{}","iat":{}}}"#,
                r.pick(DIGITS, 10),
                r.below(10_000),
                1_600_000_000 + r.below(200_000_000)
            );
            let claims = base64_encode(claims.as_bytes(), true);
            format!("{header}.{claims}.{}", r.pick(B64URL, 43))
        }
        "PK" => {
            let label = [
                "RSA PRIVATE KEY",
                "EC PRIVATE KEY",
                "PRIVATE KEY",
                "OPENSSH PRIVATE KEY",
            ][r.below(4)];
            let mut body = String::from("MII");
            body.push_str(&r.pick(B64, 61));
            for _ in 0..11 {
                body.push('\n');
                body.push_str(&r.pick(B64, 64));
            }
            body.push('\n');
            body.push_str(&r.pick(B64, 20));
            body.push_str("==");
            format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----")
        }
        _ => return None,
    };
    Some(s)
}

/// xorshift64*: enough randomness for fake credentials, no dependency.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // splitmix the seed so nearby seeds give unrelated streams, and
        // keep the state non-zero.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Self((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| alphabet[self.below(alphabet.len())] as char)
            .collect()
    }
}
