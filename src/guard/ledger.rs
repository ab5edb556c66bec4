//! The secret ledger: every secret a session has seen (scan hits in tool
//! output, values read from protected files, nib's own keys), and the check
//! of sink values against it, raw and encoded (base64 at all three byte
//! offsets, base64url, hex, percent-encoding, reversed, zero-width
//! characters stripped), and in pieces: a 12-character window in one value,
//! or shorter chunks across a session's calls that together cover half a
//! secret.
//!
//! All variants go into one set of literals (`literals`), so a check is a
//! single linear pass over the value.
//!
//! This file holds the ledger and its checks, and which part of a secret
//! is its own; `matcher` builds the automata (which forms of a secret are
//! looked for), `forms` the encoders and the spelled-out readings of a
//! value (spaces, joined literals, character codes, zero-width stripped).

mod deltas;
mod folded;
mod forms;
mod literals;
mod matcher;

use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

use literals::Literals;

use super::decode::char_codes;
pub(crate) use forms::base64_encode;
pub use forms::strip_zero_width;
use forms::{has_zero_width, literals_joined, spelled_out};

/// Values shorter than this are too weak to match without false alarms.
pub const MIN_SECRET_LEN: usize = 8;
/// Values longer than this (in bytes) are whole documents, not secrets:
/// their variants would make every check slow. Add the secrets in them.
pub const MAX_SECRET_LEN: usize = 16 * 1024;
/// A window of this many characters of a secret found in a value is a hit.
pub const PIECE_LEN: usize = 12;
/// A fragment this long of a secret, in a decoded reading of a value, is a
/// hit: shorter than [`PIECE_LEN`] because decoding noise does not spell
/// eight characters of a random secret by chance.
pub const FRAGMENT_LEN: usize = 8;
/// Chunks at least this long count toward a secret's session coverage.
pub const CHUNK_LEN: usize = 4;
/// A piece must hold this many characters of the secret's private part, so
/// the public prefix every token of a kind shares (`sk-ant-api03-`, a PEM
/// header, a JWT header) is not mistaken for this secret.
const PIECE_PRIVATE: usize = 8;

/// One secret found in a sink value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerHit {
    /// Which secret, in the order they were added.
    pub secret_index: usize,
    /// How it was found: raw, base64, base64url, hex, percent, reversed,
    /// zero-width (after stripping zero-width characters), piece (a
    /// 12-character window), split (chunks across calls covering half).
    pub encoding: &'static str,
    /// Where the secret came from, as given to `add`.
    pub source: String,
}

/// The secrets of one session.
#[derive(Debug, Default, Clone)]
pub struct SecretLedger {
    entries: Vec<Entry>,
    known: HashMap<String, usize>,
    /// Built on first check after a change.
    matcher: OnceLock<Matcher>,
    /// Per secret, per byte of its private part: seen in some sink value
    /// of this session.
    coverage: Vec<Vec<bool>>,
}

#[derive(Debug, Clone)]
struct Entry {
    value: String,
    source: String,
    /// The bytes that are not shared with other secrets of the same kind.
    private: Range<usize>,
}

#[derive(Debug, Clone)]
struct Matcher {
    /// Whole secrets' forms in a value folded to its letters and digits.
    folded: Option<Literals<8>>,
    folded_owner: Vec<(usize, &'static str)>,
    /// The whole forms that fold too short or too word-like for `folded`
    /// (a word-like password's): the value's spaced and joined readings
    /// are searched for these. Any other whole form the fold finds there,
    /// as folding drops what spacing and joining drop. Few literals, so
    /// an automaton with a vectorised prefilter; when it cannot be built
    /// (past its size limits), the whole forms are searched instead.
    spelled: Option<Result<aho_corasick::AhoCorasick, aho_corasick::BuildError>>,
    spelled_owner: Vec<(usize, &'static str)>,
    /// The folds of `spelled`'s forms: a value whose fold holds none of
    /// them has no spaced or joined reading worth making.
    spelled_folds: Option<Result<aho_corasick::AhoCorasick, aho_corasick::BuildError>>,
    /// Variants and 12-character pieces.
    variants: Option<Literals<8>>,
    variant_owner: Vec<(usize, &'static str)>,
    /// The variants of whole secrets only (no pieces), for the spelled-out
    /// forms of a value, where only a whole secret counts.
    whole: Option<Literals<8>>,
    whole_owner: Vec<(usize, &'static str)>,
    /// Whole secrets and 8-character fragments of their private parts,
    /// looked for in decoded readings of a value (`decode::readings`).
    fragments: Option<Literals<8>>,
    fragment_owner: Vec<usize>,
    /// Random-looking secrets' differences between neighbours (`deltas`):
    /// under any constant shift or one-byte XOR.
    deltas: Option<Literals<8>>,
    /// (secret, its characters before and after the part a pattern covers)
    delta_owner: Vec<(usize, (usize, usize))>,
    /// 4-character chunks for session coverage.
    chunks: Option<Literals<4>>,
    /// (secret, byte offset in the secret) of each chunk pattern.
    chunk_owner: Vec<(usize, usize)>,
}

impl SecretLedger {
    pub fn new() -> Self {
        Self::default()
    }

    /// Remember a secret. Values shorter than [`MIN_SECRET_LEN`] (after
    /// trimming) or longer than [`MAX_SECRET_LEN`], and values already
    /// known, are ignored; returns whether the secret is new.
    pub fn add(&mut self, secret: &str, source: &str) -> bool {
        let secret = secret.trim();
        if secret.chars().count() < MIN_SECRET_LEN
            || secret.len() > MAX_SECRET_LEN
            || self.known.contains_key(secret)
        {
            return false;
        }
        self.known.insert(secret.to_string(), self.entries.len());
        let private = private_range(secret);
        self.coverage.push(vec![false; private.len()]);
        self.entries.push(Entry {
            value: secret.to_string(),
            source: source.to_string(),
            private,
        });
        self.matcher = OnceLock::new();
        true
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The secrets, in the order they were added (index = `secret_index`).
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.value.as_str())
    }

    /// Where secret `index` came from.
    pub fn source(&self, index: usize) -> Option<&str> {
        self.entries.get(index).map(|e| e.source.as_str())
    }

    /// The secrets `value` contains, raw, encoded or as a 12-character
    /// piece; at most one hit per secret and encoding.
    pub fn check(&self, value: &str) -> Vec<LedgerHit> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        let matcher = self.matcher();
        let mut found: Vec<(usize, &'static str)> = Vec::new();
        matcher.variants_in(value.as_bytes(), &mut found);
        // Spelled out in pieces: characters spaced or split into joined
        // string literals (the fold finds these, unless some form of a
        // secret folds too short), or written as character codes.
        let (spaced, joined) = if matcher.may_be_spelled(value) {
            spelled_out(value)
        } else {
            (None, None)
        };
        let [decimal, octal, binary] = char_codes(value, MIN_SECRET_LEN);
        for (form, label, spelled) in [
            (spaced, "spaced", true),
            (joined, "joined", true),
            (literals_joined(value), "joined", false),
            (decimal, "char-codes", false),
            (octal, "octal", false),
            (binary, "binary", false),
        ] {
            let Some(form) = form else { continue };
            let mut hidden = Vec::new();
            // Only whole secrets count in these forms: a smaller automaton.
            if spelled {
                matcher.spelled_in(form.as_bytes(), &mut hidden);
            } else {
                matcher.whole_in(form.as_bytes(), &mut hidden);
            }
            for (secret, encoding) in hidden {
                let whole_seen = found.iter().any(|&(s, e)| s == secret && e != "piece");
                if encoding != "piece" && !whole_seen {
                    found.push((secret, if encoding == "raw" { label } else { encoding }));
                }
            }
        }
        // Decoded readings: up to three codecs deep, fragments count; a
        // secret found in a plainer form is reported as that. All readings
        // go through the automaton in one pass.
        let readings = super::decode::readings(value);
        // Escapes decoded where they stand (`gh\160_…`, `&#103;h…`): every
        // form, pieces too, as the literal text between them is the value's.
        if let Some(unescaped) = &readings.unescaped {
            let mut hidden = Vec::new();
            matcher.variants_in(&unescaped.text, &mut hidden);
            for (secret, encoding) in hidden {
                if !found.iter().any(|&(s, _)| s == secret) {
                    found.push((
                        secret,
                        if encoding == "raw" {
                            "escaped"
                        } else {
                            encoding
                        },
                    ));
                }
            }
        }
        let mut decoded = Vec::new();
        if let Some(fragments) = &matcher.fragments
            && !readings.is_empty()
        {
            fragments.each_match_in_runs(&readings.text, |index, start| {
                let label = readings.part_at(start).map_or("decoded", |p| p.label);
                let secret = matcher.fragment_owner[index];
                if !found.iter().any(|&(s, _)| s == secret)
                    && !decoded.iter().any(|&(s, _)| s == secret)
                {
                    decoded.push((secret, label));
                }
            });
        }
        if has_zero_width(value) {
            let stripped = strip_zero_width(value);
            let mut hidden = Vec::new();
            matcher.variants_in(stripped.as_bytes(), &mut hidden);
            for (secret, encoding) in hidden {
                let seen = |whole: bool| {
                    found
                        .iter()
                        .any(|&(s, e)| s == secret && (!whole || e != "piece"))
                };
                if encoding == "piece" {
                    if !seen(false) {
                        found.push((secret, "piece"));
                    }
                } else if !seen(true) {
                    // Zero-width characters hid the whole secret; pieces
                    // between them may have shown through.
                    found.push((secret, "zero-width"));
                }
            }
        }
        for (secret, label) in decoded {
            if !found.iter().any(|&(s, _)| s == secret) {
                found.push((secret, label));
            }
        }
        // Whole secrets found below count once, under the first form
        // that found them.
        fn whole(found: &mut Vec<(usize, &'static str)>, secret: usize, label: &'static str) {
            if !found.iter().any(|&(s, e)| s == secret && e != "piece") {
                found.push((secret, label));
            }
        }
        // A decoded copy spread out or recased (base64 of `g.h.p…`).
        matcher.folded_bytes_in(&readings.text, |secret, at| {
            let label = readings.part_at(at).map_or("decoded", |p| p.label);
            whole(&mut found, secret, label);
        });
        // Separators, case, lookalike letters and keyless letter ciphers:
        // the value folded to its letters and digits.
        matcher.folded_in(value, false, |secret, label, _, _| {
            whole(&mut found, secret, label)
        });
        // Under a constant key: every character shifted, every decoded
        // byte XORed.
        matcher.shifted_in(value, false, |secret, _| {
            whole(&mut found, secret, "shifted")
        });
        matcher.numbers_in(value, |secret, _| {
            whole(&mut found, secret, "shifted codes")
        });
        matcher.xored_in(&readings.bytes, |secret, _| {
            whole(&mut found, secret, "xor")
        });
        self.hits(found)
    }

    /// The secrets `bytes` holds as the automaton finds them (raw, the
    /// encodings the ledger lists, 12-character pieces), without the
    /// decoded readings `check` adds: fast enough for a build's binary
    /// output.
    pub fn check_bytes(&self, bytes: &[u8]) -> Vec<LedgerHit> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        let mut found = Vec::new();
        self.matcher().variants_in(bytes, &mut found);
        self.hits(found)
    }

    /// Check a sink value and remember which parts of each secret it held
    /// (chunks of at least [`CHUNK_LEN`] characters). Besides `check`'s
    /// hits, reports "split" for a secret when this value added to its
    /// coverage and the chunks seen this session cover at least half of it.
    pub fn observe_sink(&mut self, value: &str) -> Vec<LedgerHit> {
        let hits = self.check(value);
        self.observe_checked(value, hits)
    }

    /// `observe_sink` given `check(value)`'s hits, made beforehand (on
    /// another thread: a check reads the ledger only, and recording a
    /// value's pieces does not change what a check finds).
    pub fn observe_checked(&mut self, value: &str, mut hits: Vec<LedgerHit>) -> Vec<LedgerHit> {
        if self.entries.is_empty() {
            return hits;
        }
        let grew = if has_zero_width(value) {
            self.record_chunks(strip_zero_width(value).as_bytes())
        } else {
            self.record_chunks(value.as_bytes())
        };
        for secret in grew {
            let covered = self.coverage[secret].iter().filter(|&&c| c).count();
            let len = self.coverage[secret].len();
            let reported = hits.iter().any(|h| h.secret_index == secret);
            if !reported && covered * 2 >= len {
                hits.push(LedgerHit {
                    secret_index: secret,
                    encoding: "split",
                    source: self.entries[secret].source.clone(),
                });
            }
        }
        hits
    }

    /// Mark the chunks of each secret found in `value`; returns the secrets
    /// whose coverage grew.
    fn record_chunks(&mut self, value: &[u8]) -> Vec<usize> {
        let matcher = self.matcher.get_or_init(|| Matcher::build(&self.entries));
        let Some(chunks) = &matcher.chunks else {
            return Vec::new();
        };
        let mut grew = Vec::new();
        let (owners, entries, coverage) = (&matcher.chunk_owner, &self.entries, &mut self.coverage);
        chunks.each_match(value, |index, _| {
            let (secret, at) = owners[index];
            let at = at - entries[secret].private.start;
            let cover = &mut coverage[secret][at..at + CHUNK_LEN];
            if cover.iter().any(|&c| !c) {
                cover.fill(true);
                if !grew.contains(&secret) {
                    grew.push(secret);
                }
            }
        });
        grew
    }

    /// Byte ranges of `text` holding a known secret encoded (base64, hex,
    /// reversed, decoded through two codecs…), or a 12-character piece of
    /// one; not raw (the redactor's handles cover those). Merged where they
    /// overlap.
    pub fn encoded_spans(&self, text: &str) -> Vec<(usize, usize)> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        let matcher = self.matcher();
        let Some(set) = &matcher.variants else {
            return Vec::new();
        };
        let mut spans: Vec<(usize, usize)> = Vec::new();
        set.each_match(text.as_bytes(), |index, start| {
            let (_, encoding) = matcher.variant_owner[index];
            if encoding != "raw" {
                spans.push((start, start + set.len_of(index)));
            }
        });
        // Character codes (`103 104 112 …`, bits), where their run stands.
        if let Some(whole) = &matcher.whole {
            for (form, runs) in super::decode::code_runs(text, MIN_SECRET_LEN) {
                whole.each_match(form.as_bytes(), |_, at| {
                    let index = runs.partition_point(|r| r.at <= at);
                    if let Some(run) = index.checked_sub(1).and_then(|i| runs.get(i)) {
                        spans.push(run.span);
                    }
                });
            }
        }
        matcher.folded_in(text, true, |_, _, first, last| {
            let end = text[last..]
                .chars()
                .next()
                .map_or(last, |c| last + c.len_utf8());
            spans.push((first, end));
        });
        let readings = super::decode::readings(text);
        if let Some(fragments) = &matcher.fragments {
            for (part, reading) in readings.each() {
                if fragments.is_match(reading) {
                    spans.push(part.span);
                }
            }
        }
        matcher.folded_bytes_in(&readings.text, |_, at| {
            if let Some(part) = readings.part_at(at) {
                spans.push(part.span);
            }
        });
        matcher.shifted_in(text, true, |_, span| spans.push(span));
        matcher.numbers_in(text, |_, span| spans.push(span));
        matcher.xored_in(&readings.bytes, |_, at| {
            if let Some(span) = readings.bytes_span_at(at) {
                spans.push(span);
            }
        });
        spans.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (start, end) in spans {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        merged
    }

    fn matcher(&self) -> &Matcher {
        self.matcher.get_or_init(|| Matcher::build(&self.entries))
    }

    /// One hit per (secret, encoding); a piece is dropped when the same
    /// secret was found whole.
    fn hits(&self, mut found: Vec<(usize, &'static str)>) -> Vec<LedgerHit> {
        found.sort_unstable();
        found.dedup();
        let whole: Vec<usize> = found
            .iter()
            .filter(|(_, e)| *e != "piece")
            .map(|&(s, _)| s)
            .collect();
        found
            .into_iter()
            .filter(|&(s, e)| e != "piece" || !whole.contains(&s))
            .map(|(secret, encoding)| LedgerHit {
                secret_index: secret,
                encoding,
                source: self.entries[secret].source.clone(),
            })
            .collect()
    }
}

/// The bytes of `secret` that are its own: without the public prefix its
/// kind shares (`ghp_`, `sk-ant-api03-`, a PEM header and footer, a JWT
/// header). The whole secret when no such prefix is recognised.
fn private_range(secret: &str) -> Range<usize> {
    let len = secret.len();
    let mut range = 0..len;
    if let Some(own) = url_private_range(secret).or_else(|| keyed_private_range(secret)) {
        range = own;
    } else if let Some(rest) = secret.strip_prefix("-----BEGIN") {
        let start = rest.find("-----").map_or(0, |i| "-----BEGIN".len() + i + 5);
        let end = secret.rfind("-----END").unwrap_or(len);
        range = start..end;
    } else if secret.starts_with("eyJ") && secret.contains('.') {
        // Header and claims are readable JSON that tokens of one issuer
        // share field by field; the signature is what is secret.
        let dot = secret.rfind('.').unwrap_or(0);
        range = (dot + 1).min(len)..len;
    } else if secret.starts_with("pypi-") {
        range = 30.min(len)..len;
    } else {
        // Groups of up to 12 letters and digits, each followed by _ or -.
        let bytes = secret.as_bytes();
        let mut start = 0;
        loop {
            let group = bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
            let next = start + group + 1;
            if group == 0 || group > 12 || next > 24 {
                break;
            }
            match bytes.get(start + group) {
                Some(b'_' | b'-') => start = next,
                _ => break,
            }
        }
        range = start..len;
    }
    if range.len() < MIN_SECRET_LEN {
        0..len
    } else {
        range
    }
}

/// A URL's own part: the password (or the whole user part, a DSN's key)
/// when it has one, else its longest path segment that looks random (two
/// digits or more, or long: a webhook's token). The scheme, host and the
/// path's words (`/services/`, `/api/webhooks/`, `/IncomingWebhook/`) are
/// what every URL of that service shares. None when it is not a URL or
/// has no such part.
fn url_private_range(secret: &str) -> Option<Range<usize>> {
    let scheme_end = secret.find("://")? + 3;
    if secret[..scheme_end - 3]
        .chars()
        .any(|c| !c.is_ascii_alphanumeric() && c != '+')
    {
        return None;
    }
    let rest = &secret[scheme_end..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    if let Some(at) = authority.rfind('@') {
        let userinfo = &authority[..at];
        let start = userinfo.find(':').map_or(0, |c| c + 1);
        return Some(scheme_end + start..scheme_end + at);
    }
    let mut at = scheme_end + authority_len;
    let mut best: Option<Range<usize>> = None;
    for segment in secret[at..].split_inclusive(['/', '?', '&', '=', '#']) {
        let body = segment.trim_end_matches(['/', '?', '&', '=', '#']);
        let digits = body.bytes().filter(u8::is_ascii_digit).count();
        if (digits >= 2 || body.len() >= 24) && best.as_ref().is_none_or(|b| body.len() > b.len()) {
            best = Some(at..at + body.len());
        }
        at += segment.len();
    }
    best
}

/// A connection string's own part (`…;AccountKey=<key>;…`,
/// `Password=<p>`): the value of the key that holds it.
fn keyed_private_range(secret: &str) -> Option<Range<usize>> {
    const KEYS: &[&str] = &["accountkey=", "sharedaccesskey=", "password=", "pwd="];
    let lower = secret.to_ascii_lowercase();
    if !lower.contains(';') {
        return None;
    }
    KEYS.iter().find_map(|k| {
        let start = lower.find(k)? + k.len();
        let end = secret[start..]
            .find(';')
            .map_or(secret.len(), |e| start + e);
        Some(start..end)
    })
}

#[cfg(test)]
mod tests {
    use super::forms::{base32_stable, hex_lower, percent_reserved, rot13};
    use super::*;

    const GH: &str = "ghp_R8x2Lq7Vt4Nz9Kc1Hw5Bj3Mf6Pd0Sy2Ga8Ue";
    const PW: &str = "Tr0ub4dor&3-horse?";

    fn ledger() -> SecretLedger {
        let mut l = SecretLedger::new();
        assert!(l.add(GH, "tool output: shell"));
        assert!(l.add(PW, ".env"));
        l
    }

    fn encodings(hits: &[LedgerHit]) -> Vec<(usize, &'static str)> {
        hits.iter().map(|h| (h.secret_index, h.encoding)).collect()
    }

    #[test]
    fn add_ignores_short_and_duplicate_values() {
        let mut l = ledger();
        assert!(!l.add("short", "x"));
        assert!(!l.add(&"k".repeat(MAX_SECRET_LEN + 1), "a whole file"));
        assert!(!l.add(GH, "again"));
        assert!(!l.add(&format!("  {GH}\n"), "again"));
        assert_eq!(l.len(), 2);
        assert_eq!(l.secrets().collect::<Vec<_>>(), vec![GH, PW]);
        assert_eq!(l.source(1), Some(".env"));
        assert!(!l.is_empty());
        assert!(SecretLedger::new().check(GH).is_empty());
    }

    #[test]
    fn raw_and_source() {
        let l = ledger();
        let hits = l.check(&format!("curl -H 'Authorization: token {GH}' x"));
        assert_eq!(
            hits,
            vec![LedgerHit {
                secret_index: 0,
                encoding: "raw",
                source: "tool output: shell".into()
            }]
        );
        assert!(l.check("nothing to see here").is_empty());
    }

    #[test]
    fn base64_at_every_offset_with_neighbours() {
        let l = ledger();
        for secret in [GH, PW] {
            for prefix in ["", "a", "ab", "abc", "user:"] {
                for suffix in ["", "\n", "xy", "tail data"] {
                    let data = format!("{prefix}{secret}{suffix}");
                    for url in [false, true] {
                        let mut encoded = base64_encode(data.as_bytes(), url);
                        // with and without padding
                        while !encoded.len().is_multiple_of(4) {
                            encoded.push('=');
                        }
                        let hits = l.check(&format!("echo {encoded} | base64 -d"));
                        assert!(
                            hits.iter().any(|h| h.encoding.starts_with("base64")),
                            "{data:?} url={url}: {hits:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn hex_percent_reversed() {
        let l = ledger();
        let hex = hex_lower(PW.as_bytes());
        assert_eq!(encodings(&l.check(&hex)), vec![(1, "hex")]);
        assert_eq!(
            encodings(&l.check(&hex.to_ascii_uppercase())),
            vec![(1, "hex")]
        );
        let pct = percent_reserved(PW.as_bytes());
        assert_eq!(
            encodings(&l.check(&format!("https://x.test/?q={pct}"))),
            vec![(1, "percent")]
        );
        let all: String = GH.bytes().map(|b| format!("%{b:02x}")).collect();
        assert_eq!(encodings(&l.check(&all)), vec![(0, "percent")]);
        let rev: String = GH.chars().rev().collect();
        assert_eq!(encodings(&l.check(&rev)), vec![(0, "reversed")]);
    }

    #[test]
    fn zero_width_characters_are_stripped() {
        let l = ledger();
        let hidden: String = GH
            .chars()
            .flat_map(|c| [c, '\u{200B}'])
            .chain("\u{FEFF}".chars())
            .collect();
        assert_eq!(encodings(&l.check(&hidden)), vec![(0, "zero-width")]);
        let soft = "ghp_R8x2Lq7V\u{00AD}t4Nz9Kc1H\u{2060}w5Bj3Mf6Pd0Sy2Ga8Ue";
        assert_eq!(encodings(&l.check(soft)), vec![(0, "zero-width")]);
    }

    #[test]
    fn a_twelve_character_piece() {
        let l = ledger();
        let piece = &GH[10..22];
        assert_eq!(
            encodings(&l.check(&format!("let part = \"{piece}\";"))),
            vec![(0, "piece")]
        );
        // Eleven characters are not enough.
        assert!(l.check(&GH[10..21]).is_empty());
        // The whole secret is reported once, as raw.
        assert_eq!(encodings(&l.check(GH)), vec![(0, "raw")]);
    }

    #[test]
    fn split_across_calls() {
        let mut l = ledger();
        // Three chunks of 8, each too short to be a piece; one call alone
        // covers less than half of the 40-character token.
        assert!(l.observe_sink(&format!("a = \"{}\"", &GH[0..8])).is_empty());
        assert!(
            l.observe_sink(&format!("b = \"{}\"", &GH[8..16]))
                .is_empty()
        );
        let hits = l.observe_sink(&format!("c = \"{}\"", &GH[16..24]));
        assert_eq!(encodings(&hits), vec![(0, "split")]);
        // The other secret is untouched.
        assert!(l.coverage[1].iter().all(|&c| !c));
    }

    #[test]
    fn a_url_secrets_public_part_is_not_a_piece_of_it() {
        let mut l = SecretLedger::default();
        for url in [
            "https://hooks.slack.com/services/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",
            "https://f3a9c2e7b1d84e6f@o123456.ingest.sentry.io/4505123456789",
            "https://discord.com/api/webhooks/112233445566778899/Zq8vL2mWx9RtK4pN7cYbQ2sDf3Gh5Jk7Lm9N",
            "DefaultEndpointsProtocol=https;AccountName=prodstore;AccountKey=Zq8vL2mWx9RtK4pN7cYbQ2sD==;EndpointSuffix=core.windows.net",
        ] {
            l.add(url, ".env");
        }
        for public in [
            "PREFIX = 'https://hooks.slack.com/services/'",
            "https://hooks.slack.com/services/T0TEST000/B0TEST000/testtoken",
            "startswith('https://discord.com/api/webhooks/')",
            "connect-src 'self' https://*.ingest.sentry.io/",
            "DefaultEndpointsProtocol=https;AccountName=devstore;AccountKey=ZHVtbXk=;EndpointSuffix=core.windows.net",
        ] {
            assert!(
                l.check(public).is_empty(),
                "{public}: {:?}",
                l.check(public)
            );
        }
        // The secret part, whole or in a piece, still is.
        for secret in [
            "T04ABCD12/B05EFGH34/aZ9xK2mQ7pL4",
            "f3a9c2e7b1d84e6f",
            "x9RtK4pN7cYbQ2sDf3Gh",
            "Zq8vL2mWx9RtK4pN7cYbQ2sD",
        ] {
            assert!(!l.check(&format!("v = '{secret}'")).is_empty(), "{secret}");
        }
    }

    #[test]
    fn shared_prefixes_are_not_pieces() {
        use crate::guard::secrets::fake;
        for kind in ["ANT", "PK", "JWT", "OA", "PYPI", "GH", "SL"] {
            let mut l = SecretLedger::new();
            assert!(l.add(&fake(kind, 1).unwrap(), "x"));
            for seed in 2..40 {
                let other = fake(kind, seed).unwrap();
                let hits = l.observe_sink(&other);
                assert!(hits.is_empty(), "{kind} seed {seed}: {other} {hits:?}");
            }
        }
        let l = ledger();
        assert!(l.check("-----BEGIN RSA PRIVATE KEY-----").is_empty());
        assert_eq!(private_range("ghp_abcdefghijkl"), 4..16);
        assert_eq!(private_range("sk-ant-api03-abcdefghijkl"), 13..25);
        assert_eq!(private_range(PW), 0..PW.len());
    }

    #[test]
    fn unrelated_text_does_not_accumulate() {
        let mut l = ledger();
        let source = include_str!("mod.rs");
        for chunk in source.as_bytes().chunks(2000) {
            let text = String::from_utf8_lossy(chunk);
            let hits = l.observe_sink(&text);
            assert!(hits.is_empty(), "{hits:?}");
        }
    }

    #[test]
    fn base64_encoder_matches_known_values() {
        assert_eq!(base64_encode(b"", false), "");
        assert_eq!(base64_encode(b"f", false), "Zg");
        assert_eq!(base64_encode(b"fo", false), "Zm8");
        assert_eq!(base64_encode(b"foo", false), "Zm9v");
        assert_eq!(base64_encode(b"foobar", false), "Zm9vYmFy");
        assert_eq!(base64_encode(&[0xfb, 0xff], false), "+/8");
        assert_eq!(base64_encode(&[0xfb, 0xff], true), "-_8");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// A secret inside any data, base64-encoded as a whole, is found.
        #[test]
        fn base64_of_any_surrounding_data(
            secret in "[!-~]{8,40}",
            before in proptest::collection::vec(proptest::num::u8::ANY, 0..10),
            after in proptest::collection::vec(proptest::num::u8::ANY, 0..10),
            url in proptest::bool::ANY,
        ) {
            let mut l = SecretLedger::new();
            l.add(&secret, "p");
            let mut data = before.clone();
            data.extend_from_slice(secret.as_bytes());
            data.extend_from_slice(&after);
            let encoded = base64_encode(&data, url);
            let hits = l.check(&encoded);
            proptest::prop_assert!(!hits.is_empty(), "{} in {}", secret, encoded);
        }
    }

    #[test]
    fn secrets_spelled_out_or_encoded_otherwise_are_found() {
        let mut ledger = SecretLedger::new();
        ledger.add(PW, "test");
        let spaced: Vec<String> = PW.chars().map(String::from).collect();
        let codes: Vec<String> = PW.chars().map(|c| (c as u32).to_string()).collect();
        let hex_codes: Vec<String> = PW.bytes().map(|b| format!("0x{b:02x}")).collect();
        let (a, b) = PW.split_at(7);
        let (b, c) = b.split_at(6);
        for (value, want) in [
            (spaced.join(" "), "spaced"),
            (format!("bytes([{}])", codes.join(", ")), "char-codes"),
            (format!("{{{}}}", hex_codes.join(",")), "char-codes"),
            (format!("k = \"{a}\" + \"{b}\" + '{c}'"), "joined"),
            (rot13(PW), "rot13"),
            (base32_stable(PW.as_bytes()), "base32"),
        ] {
            let hits = ledger.check(&value);
            assert!(hits.iter().any(|h| h.encoding == want), "{value}: {hits:?}");
        }
        // Ordinary text, numbers and joined words hold none of it.
        for value in [
            "let v = [1, 2, 3, 250, 1024, 65536];\nassert sum(v) == 66816\n",
            "name = \"Tr0ub\" + \"4dor\"  # a different string\n",
            "a b c d e f g h i j k l m n o p\n",
        ] {
            assert!(ledger.check(value).is_empty(), "{value}");
        }
    }

    /// The readings made only when a cheap pass says they may hold
    /// something (spaced and joined readings, character codes either way)
    /// still find a secret in the middle of ordinary code, numbers and
    /// all.
    #[test]
    fn forms_behind_a_cheap_first_pass_are_found_inside_code() {
        let mut ledger = SecretLedger::new();
        ledger.add(PW, "test");
        ledger.add(GH, "test");
        let filler: String = (0..40)
            .map(|n| {
                format!(
                    "    let key_{n} = cache.get(&ids[{n}]).cloned(); // see RFC {}\n",
                    n * 7
                )
            })
            .collect();
        let within = |form: String| format!("{filler}{form}\n{filler}");
        let codes = |text: &str, each: &dyn Fn(u32) -> String| {
            text.chars().map(|c| each(c as u32)).collect::<Vec<_>>()
        };
        let (a, rest) = PW.split_at(7);
        let (b, c) = rest.split_at(6);
        let spaced = PW.chars().map(String::from).collect::<Vec<_>>().join(" ");
        for (form, want) in [
            (spaced, "spaced"),
            (format!("k = \"{a}\" + \"{b}\" + '{c}'"), "joined"),
            (codes(PW, &|c| format!("chr({c})")).join("+"), "char-codes"),
        ] {
            let hits = ledger.check(&within(form.clone()));
            assert!(hits.iter().any(|h| h.encoding == want), "{form}: {hits:?}");
        }
        for form in [
            // Backwards, as `rev` leaves `chr(103)+chr(104)+…`.
            codes(GH, &|c| format!("chr({c})"))
                .join("+")
                .chars()
                .rev()
                .collect(),
            codes(GH, &|c| format!("U+{c:04X}")).join(" "),
            GH.bytes().map(|b| format!("{b:08b}")).collect(),
            codes(GH, &|c| format!("\\x{c:02x}")).concat(),
        ] {
            let hits = ledger.check(&within(form.clone()));
            assert!(hits.iter().any(|h| h.secret_index == 1), "{form}: {hits:?}");
        }
        assert!(ledger.check(&filler).is_empty());
    }

    /// `xxd`'s, `hexdump -C`'s and `od -c`'s layouts of `text`.
    fn xxd(text: &str) -> String {
        let mut out = String::new();
        for (n, chunk) in text.as_bytes().chunks(16).enumerate() {
            let hex: Vec<String> = chunk
                .chunks(2)
                .map(|p| p.iter().map(|b| format!("{b:02x}")).collect())
                .collect();
            out.push_str(&format!(
                "{:08x}: {:<40}  {}\n",
                n * 16,
                hex.join(" "),
                String::from_utf8_lossy(chunk)
            ));
        }
        out
    }
    fn hexdump(text: &str) -> String {
        let mut out = String::new();
        for (n, chunk) in text.as_bytes().chunks(16).enumerate() {
            let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
            out.push_str(&format!(
                "{:08x}  {:<48} |{}|\n",
                n * 16,
                hex.join(" "),
                String::from_utf8_lossy(chunk)
            ));
        }
        out
    }
    fn od_c(text: &str) -> String {
        let mut out = String::new();
        for (n, chunk) in text.as_bytes().chunks(16).enumerate() {
            let cells: String = chunk.iter().map(|&b| format!("{:>4}", b as char)).collect();
            out.push_str(&format!("{:07o}{cells}\n", n * 16));
        }
        out
    }

    /// `bytes` as one big-endian number written in `radix`.
    fn radix(bytes: &[u8], radix: u32) -> String {
        let mut number = bytes.to_vec();
        let mut digits = Vec::new();
        while number.iter().any(|&b| b != 0) {
            let mut rest = 0u32;
            for b in number.iter_mut() {
                let v = rest * 256 + u32::from(*b);
                *b = (v / radix) as u8;
                rest = v % radix;
            }
            digits.push(char::from(b'0' + rest as u8));
        }
        digits.iter().rev().collect()
    }

    /// `bytes` (at most 45) as one uuencoded line.
    fn uuencode(bytes: &[u8]) -> String {
        let char_of = |v: u8| char::from(if v == 0 { b'`' } else { v + b' ' });
        let mut line = String::from(char_of(bytes.len() as u8));
        for group in bytes.chunks(3) {
            let g = [
                group[0],
                *group.get(1).unwrap_or(&0),
                *group.get(2).unwrap_or(&0),
            ];
            for v in [
                g[0] >> 2,
                (g[0] & 3) << 4 | g[1] >> 4,
                (g[1] & 15) << 2 | g[2] >> 6,
                g[2] & 63,
            ] {
                line.push(char_of(v));
            }
        }
        line
    }

    #[test]
    fn keyless_forms_are_found_and_their_spans_marked() {
        let l = ledger();
        let chars: Vec<char> = GH.chars().collect();
        let join = |sep: &str| {
            chars
                .iter()
                .map(char::to_string)
                .collect::<Vec<_>>()
                .join(sep)
        };
        let each = |f: &dyn Fn(char) -> String| chars.iter().map(|&c| f(c)).collect::<String>();
        let homoglyphs: String = GH
            .chars()
            .map(|c| match c {
                'a' => 'а',
                'e' => 'е',
                'x' => 'х',
                'B' => 'В',
                'H' => 'Н',
                'K' => 'К',
                'M' => 'М',
                c => c,
            })
            .collect();
        let caesar = |shift: u8| {
            each(&|c| match c {
                'a'..='z' => char::from(b'a' + (c as u8 - b'a' + shift) % 26).to_string(),
                'A'..='Z' => char::from(b'A' + (c as u8 - b'A' + shift) % 26).to_string(),
                c => c.to_string(),
            })
        };
        let even: String = chars.iter().step_by(2).collect();
        let odd: String = chars.iter().skip(1).step_by(2).collect();
        let chunks: Vec<String> = chars.chunks(6).map(|c| c.iter().collect()).collect();
        for value in [
            join("."),
            join("\t"),
            join("\u{a0}"),
            chunks.join("\n"),
            GH.chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect(),
            homoglyphs,
            each(&|c| format!("{c}\u{301}")),
            each(&|c| format!("{c}\u{fe0f}")),
            each(&|c| match c {
                'A'..='Z' => char::from_u32(0x1D5D4 + (c as u32 - 'A' as u32))
                    .unwrap()
                    .to_string(),
                'a'..='z' => char::from_u32(0x24D0 + (c as u32 - 'a' as u32))
                    .unwrap()
                    .to_string(),
                c => c.to_string(),
            }),
            caesar(1),
            caesar(7),
            each(&|c| match c {
                'a'..='z' => char::from(b'z' - (c as u8 - b'a')).to_string(),
                'A'..='Z' => char::from(b'Z' - (c as u8 - b'A')).to_string(),
                c => c.to_string(),
            }),
            each(&|c| char::from(b'!' + ((c as u8 - b'!') + 47) % 94).to_string()),
            format!("{even}\n{odd}"),
            each(&|c| char::from_u32(c as u32 + 1).unwrap().to_string()),
            each(&|c| format!("{c}x")),
            base64_encode(join(".").as_bytes(), false),
            hex_lower(
                GH.chars()
                    .map(|c| {
                        if c.is_ascii_uppercase() {
                            c.to_ascii_lowercase()
                        } else {
                            c.to_ascii_uppercase()
                        }
                    })
                    .collect::<String>()
                    .as_bytes(),
            ),
            each(&|c| char::from_u32(c as u32 + 4).unwrap().to_string()),
            chars.chunks(2).flat_map(|p| p.iter().rev()).collect(),
            chars.chunks(4).flat_map(|p| p.iter().rev()).collect(),
            xxd(GH),
            hexdump(GH),
            od_c(GH),
            chars
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c}{}", i % 10))
                .collect(),
            GH.bytes()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            GH.bytes()
                .map(|b| format!("{b:08b}"))
                .collect::<Vec<_>>()
                .join(" "),
            GH.bytes().map(|b| format!("00{b:02x}")).collect(),
            base64_encode(&GH.bytes().flat_map(|b| [b, 0]).collect::<Vec<_>>(), false),
            GH.chars()
                .map(|c| format!("U+{:04X}", c as u32))
                .collect::<Vec<_>>()
                .join(" "),
            // One big integer (decimal, octal); uuencoded.
            radix(GH.as_bytes(), 10),
            radix(GH.as_bytes(), 8),
            format!("uu: {}", uuencode(GH.as_bytes())),
            // Under a constant key: any shift, a one-byte XOR.
            each(&|c| char::from_u32(c as u32 + 9).unwrap().to_string()),
            each(&|c| char::from_u32(c as u32 + 300).unwrap().to_string()),
            hex_lower(&GH.bytes().map(|b| b ^ 0x2a).collect::<Vec<_>>()),
            GH.bytes()
                .map(|b| (u32::from(b) + 100).to_string())
                .collect::<Vec<_>>()
                .join(" "),
            // Shifted by 7, the output's DEL dropped: one half still holds.
            each(&|c| char::from_u32(c as u32 + 7).unwrap().to_string()).replace('\u{7f}', ""),
            base64_encode(&GH.bytes().map(|b| b ^ 0x91).collect::<Vec<_>>(), false),
        ] {
            let text = format!("before\n{value}\nafter\n");
            assert!(!l.check(&text).is_empty(), "{value:?}");
            // Marked where it stands: the lines around it are kept.
            let spans = l.encoded_spans(&text);
            let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
                panic!("{value:?}: no span");
            };
            assert!(first.0 >= "before\n".len(), "{value:?}: {spans:?}");
            assert!(
                last.1 <= text.len() - "\nafter\n".len(),
                "{value:?}: {spans:?}"
            );
        }
        // Another token of the same shape, words, and the secret's
        // public prefix spread out hold none of it.
        let other = "ghp_Q8zt2Lw9Rk4mV7nX1cB5Yd0Ef3Gh6Ij9Kl2";
        for value in [
            other.to_string(),
            other.chars().map(|c| format!("{c}.")).collect(),
            "The quick brown fox jumps over the lazy dog, again and again.".to_string(),
            "g h p _ R 8 x 2".to_string(),
        ] {
            assert!(l.check(&value).is_empty(), "{value}");
            assert!(l.encoded_spans(&value).is_empty(), "{value}");
        }
        // Word-like secrets are not folded: their variable's name, or
        // prose with the same words, is not them.
        let mut words = SecretLedger::new();
        words.add("postgrespassword", ".env");
        words.add("Summer2024!", ".env");
        words.add("Welcome2024", ".env");
        for value in [
            "environment:\n  POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}\n",
            "## Summer 2024 release notes\n",
            "Welcome 2024 to the new release",
        ] {
            assert!(words.check(value).is_empty(), "{value}");
            assert!(words.encoded_spans(value).is_empty(), "{value}");
        }
        // Spaced out character by character, it still is.
        assert!(!words.check("pw: W e l c o m e 2 0 2 4\n").is_empty());
    }

    #[test]
    fn secrets_in_other_codecs_and_three_deep_are_found() {
        use crate::guard::testkit::transform;
        let mut ledger = SecretLedger::new();
        ledger.add(PW, "test");
        ledger.add(GH, "test");
        let chains: &[&[&str]] = &[
            &["oct"],
            &["octcodes"],
            &["bin"],
            &["binrun"],
            &["b85"],
            &["a85"],
            &["z85"],
            &["zlib64"],
            &["gzip64"],
            &["html"],
            &["uesc"],
            &["qp"],
            &["pieces3"],
            &["b64", "b64", "b64"],
            &["rot13", "hex", "b64"],
            &["rev", "b64", "hex"],
            &["b64", "rev", "b64"],
            &["hex", "hex", "hex"],
            &["hex", "b85"],
            &["b85", "b64"],
            &["zlib64", "hex"],
            &["gzip64", "rev"],
            &["b64", "zlib64"],
            &["b32", "b64", "rot13"],
            &["oct", "b64"],
            &["rot13", "rev", "hex"],
            &["spaced", "b64"],
            &["upper", "rev"],
            &["rev", "rot13"],
            &["codes", "rev"],
            &["chr", "rev"],
        ];
        for secret in [PW, GH] {
            for chain in chains {
                let encoded = chain
                    .iter()
                    .fold(secret.to_string(), |v, c| transform(c, &v).unwrap());
                let values = if chain[0] == "pieces3" {
                    vec![encoded.clone()]
                } else {
                    vec![
                        format!("data = \"{encoded}\"\n"),
                        format!("printf '{encoded}' > notes.txt"),
                    ]
                };
                for value in values {
                    let hits = ledger.check(&value);
                    assert!(
                        hits.iter()
                            .any(|h| h.secret_index == usize::from(secret == GH)),
                        "{chain:?}: {value}: {hits:?}"
                    );
                }
            }
        }
        // Escapes for some characters only, literal text between them.
        let (a, b) = GH.split_at(9);
        let octal_tail: String = b.bytes().map(|c| format!("\\{c:o}")).collect();
        let html_tail: String = b.bytes().map(|c| format!("&#x{c:x};")).collect();
        for value in [
            format!("printf '{a}{octal_tail}'"),
            format!("<p>{a}{html_tail}</p>"),
        ] {
            assert!(!ledger.check(&value).is_empty(), "{value}");
        }
        // Ordinary text in those shapes holds none of it.
        for value in [
            "printf '%s\\n' \"$name\" > out.txt; echo -e 'a\\tb\\101'\n",
            "mode = 0o755; flags = 0b1010_0101; perms = [644, 600, 755, 700, 640, 750, 711, 444]\n",
            "<p>Caf&eacute; &amp; &#169; 2024 &mdash; &#x2014;</p>\n",
            "url = 'https://example.com/search?q=caf%C3%A9&page=2'\n",
            "x = \"a\"\ny = \"b\"\nz = x + y\n",
            "Subject: =?UTF-8?Q?Caf=C3=A9?=\nbody=3D1\n",
            "10110011 01010101 11110000 00001111 10101010 01010101 11001100 00110011\n",
            "sha512-v8Zt2LwP0vXn5RkY7mJd+q8Zt2LwP0vXn5RkY7mJdq8Zt2L/wP0vXn5RkY7mJd==\n",
            "assert!(matches!(x, Some(Foo::Bar{a:1,b:2})));let y=z.map(|q|q*2).sum::<u64>();\n",
        ] {
            assert!(
                ledger.check(value).is_empty(),
                "{value}: {:?}",
                ledger.check(value)
            );
        }
    }
}
