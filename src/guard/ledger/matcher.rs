//! The automata of a ledger: every form of each secret looked for (raw,
//! encoded, 12-character pieces), whole secrets only, 8-character
//! fragments for decoded readings, 4-character chunks for coverage across
//! calls.

use std::collections::HashMap;
use std::ops::Range;

use super::forms::{
    BASE85, base32_stable, base64_inner, base85_inner, hex_lower, percent_reserved, rot13,
};
use super::literals::Literals;
use super::{CHUNK_LEN, Entry, FRAGMENT_LEN, MIN_SECRET_LEN, Matcher, PIECE_LEN, PIECE_PRIVATE};
use super::{deltas, folded};

impl Matcher {
    pub(super) fn build(entries: &[Entry]) -> Matcher {
        let mut patterns: Vec<String> = Vec::new();
        let mut owner: Vec<(usize, &'static str)> = Vec::new();
        let mut seen: HashMap<String, ()> = HashMap::new();
        for (index, entry) in entries.iter().enumerate() {
            for (variant, encoding) in variants(&entry.value, &entry.private) {
                if variant.len() >= MIN_SECRET_LEN && seen.insert(variant.clone(), ()).is_none() {
                    patterns.push(variant);
                    owner.push((index, encoding));
                }
            }
        }
        let mut fragment_patterns: Vec<&[u8]> = Vec::new();
        let mut fragment_owner = Vec::new();
        let mut fragment_seen = std::collections::HashSet::new();
        for (index, entry) in entries.iter().enumerate() {
            let bytes = entry.value.as_bytes();
            let private = entry.private.clone();
            let windows = (private.start..=private.end.saturating_sub(FRAGMENT_LEN))
                .map(|at| &bytes[at..at + FRAGMENT_LEN]);
            for fragment in std::iter::once(bytes).chain(windows) {
                // Every OpenAI project key carries base64 of "OpenAI" in
                // its middle: not this key's own.
                let shared = fragment.windows(4).any(|w| w == b"blbk");
                if !shared && fragment_seen.insert(fragment) {
                    fragment_patterns.push(fragment);
                    fragment_owner.push(index);
                }
            }
        }
        let mut chunk_patterns: Vec<&[u8]> = Vec::new();
        let mut chunk_owner = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            // A word-like password's 4-character chunks are words prose
            // holds ("Welc", "2024"): only secrets that look random are
            // followed across calls.
            if !folded::looks_random(&folded::fold_str(&entry.value)) {
                continue;
            }
            let bytes = entry.value.as_bytes();
            let private = entry.private.clone();
            for at in private.start..=private.end.saturating_sub(CHUNK_LEN) {
                chunk_patterns.push(&bytes[at..at + CHUNK_LEN]);
                chunk_owner.push((index, at));
            }
        }
        let (whole, whole_owner): (Vec<&[u8]>, Vec<(usize, &'static str)>) = patterns
            .iter()
            .zip(&owner)
            .filter(|(_, (_, e))| *e != "piece")
            .map(|(p, o)| (p.as_bytes(), *o))
            .unzip();
        // The fold of each whole form (what spaced out, joined or recased
        // copies of it fold to), then the ciphers of the secret's fold.
        // Where a form's fold does not look random (a word-like password),
        // the value's spaced and joined readings are searched for it.
        let mut folded_patterns: Vec<Vec<u8>> = Vec::new();
        let mut folded_owner = Vec::new();
        let mut folded_seen = std::collections::HashSet::new();
        let mut spelled: Vec<&[u8]> = Vec::new();
        let mut spelled_owner = Vec::new();
        let mut add = |form: Vec<u8>, owner: (usize, &'static str)| {
            if folded_seen.insert(form.clone()) {
                folded_patterns.push(form);
                folded_owner.push(owner);
            }
        };
        for (pattern, &(index, encoding)) in whole.iter().zip(&whole_owner) {
            let form = std::str::from_utf8(pattern)
                .map(folded::fold_str)
                .unwrap_or_default();
            if !folded::looks_random(&form) {
                spelled.push(pattern);
                spelled_owner.push((index, encoding));
                continue;
            }
            add(
                form,
                (
                    index,
                    if encoding == "raw" {
                        "folded"
                    } else {
                        encoding
                    },
                ),
            );
        }
        for (index, entry) in entries.iter().enumerate() {
            for (form, label) in folded::cipher_forms(&entry.value) {
                add(form, (index, label));
            }
        }
        let mut delta_patterns: Vec<Vec<u8>> = Vec::new();
        let mut delta_owner = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let own = entry
                .value
                .get(entry.private.clone())
                .unwrap_or(&entry.value);
            for (pattern, around) in deltas::patterns(own) {
                delta_patterns.push(pattern);
                delta_owner.push((index, around));
            }
        }
        // Every literal is at least as long as its set's head (variants
        // and fragments at least MIN_SECRET_LEN = FRAGMENT_LEN = 8 bytes,
        // chunks CHUNK_LEN = 4), so each set is built; an empty one is
        // None and matches nothing.
        Matcher {
            folded: Literals::new(folded_patterns.iter().map(Vec::as_slice)),
            folded_owner,
            // Standard matching: the overlapping search reports every
            // pattern that occurs.
            spelled_folds: (!spelled.is_empty()).then(|| {
                let folds: Vec<Vec<u8>> = spelled
                    .iter()
                    .map(|p| folded::fold_str(&String::from_utf8_lossy(p)))
                    .collect();
                aho_corasick::AhoCorasick::new(&folds)
            }),
            spelled: (!spelled.is_empty()).then(|| aho_corasick::AhoCorasick::new(&spelled)),
            spelled_owner,
            whole: Literals::new(whole),
            whole_owner,
            variants: Literals::new(patterns.iter().map(String::as_bytes)),
            variant_owner: owner,
            fragments: Literals::new(fragment_patterns),
            fragment_owner,
            chunks: Literals::new(chunk_patterns),
            chunk_owner,
            deltas: Literals::new(delta_patterns.iter().map(Vec::as_slice)),
            delta_owner,
        }
    }

    pub(super) fn whole_in(&self, value: &[u8], found: &mut Vec<(usize, &'static str)>) {
        let Some(set) = &self.whole else {
            return;
        };
        set.each_match(value, |index, _| {
            let hit = self.whole_owner[index];
            if !found.contains(&hit) {
                found.push(hit);
            }
        });
    }

    /// Whether `value`'s spaced and joined readings may hold a form
    /// `spelled_in` looks for: such a form's fold is then in the value's
    /// fold, as spacing and joining take away only what folding drops.
    /// Most values hold none, and their readings are not made.
    pub(super) fn may_be_spelled(&self, value: &str) -> bool {
        match &self.spelled_folds {
            None => false,
            Some(Ok(folds)) => folds.is_match(&folded::fold_str(value)),
            Some(Err(_)) => true,
        }
    }

    /// The whole forms `folded` leaves out (see `Matcher::spelled`) in
    /// `value`.
    pub(super) fn spelled_in(&self, value: &[u8], found: &mut Vec<(usize, &'static str)>) {
        let set = match &self.spelled {
            None => return,
            Some(Ok(set)) => set,
            Some(Err(_)) => return self.whole_in(value, found),
        };
        // The overlapping search steps the automaton at every byte; the
        // first match's search skips ahead with the prefilter, and most
        // values hold none.
        if !set.is_match(value) {
            return;
        }
        for m in set.find_overlapping_iter(value) {
            let hit = self.spelled_owner[m.pattern().as_usize()];
            if !found.contains(&hit) {
                found.push(hit);
            }
        }
    }

    /// Whole secrets in `value` folded to its letters and digits (see
    /// `folded`), each with where its first and last characters start.
    pub(super) fn folded_in(
        &self,
        value: &str,
        positions: bool,
        mut found: impl FnMut(usize, &'static str, usize, usize),
    ) {
        let Some(set) = &self.folded else {
            return;
        };
        folded::each_stride(value, positions, |fold, at| {
            set.each_match(fold, |index, start| {
                let (secret, label) = self.folded_owner[index];
                let last = start + set.len_of(index) - 1;
                let place = |i: usize| at.get(i).map_or(0, |&a| a as usize);
                found(secret, label, place(start), place(last));
            });
        });
        // A dump's text column (`xxd`, `hexdump -C`, `od -c`): the
        // offsets and hex groups between its lines are not the text's.
        if let Some((view, from)) = folded::dump_view(value) {
            let (fold, at) = folded::fold(&view);
            set.each_match(&fold, |index, start| {
                let (secret, _) = self.folded_owner[index];
                let last = start + set.len_of(index) - 1;
                let first = from[at[start] as usize] as usize;
                found(secret, "dump", first, from[at[last] as usize] as usize);
            });
        }
    }

    /// Whole secrets in decoded bytes folded (their ASCII letters and
    /// digits), each with where its first character is in `bytes`.
    pub(super) fn folded_bytes_in(&self, bytes: &[u8], mut found: impl FnMut(usize, usize)) {
        let Some(set) = &self.folded else {
            return;
        };
        if bytes.is_empty() {
            return;
        }
        let mut fold = Vec::with_capacity(bytes.len());
        let mut at = Vec::with_capacity(bytes.len());
        for (i, &b) in bytes.iter().enumerate() {
            if b.is_ascii_alphanumeric() {
                fold.push(b.to_ascii_lowercase());
                at.push(i);
            }
        }
        set.each_match(&fold, |index, start| {
            found(self.folded_owner[index].0, at[start]);
        });
    }

    /// Secrets every character of `value` shifted by one constant, with
    /// the byte span of each (when `positions`; else (0, 0)).
    pub(super) fn shifted_in(
        &self,
        value: &str,
        positions: bool,
        mut found: impl FnMut(usize, (usize, usize)),
    ) {
        let Some(set) = &self.deltas else {
            return;
        };
        set.each_match(&deltas::char_deltas(value), |index, start| {
            let (secret, (before, after)) = self.delta_owner[index];
            // The whole secret's characters, where a half was found.
            let span = if positions {
                let first = start.saturating_sub(before);
                deltas::char_span(value, first, start + set.len_of(index) + 1 + after)
            } else {
                (0, 0)
            };
            found(secret, span);
        });
    }

    /// Secrets written as numbers with one constant added (character
    /// codes shifted), with the byte span of each.
    pub(super) fn numbers_in(&self, value: &str, mut found: impl FnMut(usize, (usize, usize))) {
        let Some(set) = &self.deltas else {
            return;
        };
        if !value.bytes().any(|b| b.is_ascii_digit()) {
            return;
        }
        let (differences, spans) = deltas::number_deltas(value);
        set.each_match(&differences, |index, start| {
            let last = start + set.len_of(index);
            if let (Some(first), Some(last)) = (spans.get(start), spans.get(last)) {
                found(self.delta_owner[index].0, (first.0, last.1));
            }
        });
    }

    /// Secrets every byte of decoded `bytes` XORed with one constant,
    /// with where each starts in `bytes`.
    pub(super) fn xored_in(&self, bytes: &[u8], mut found: impl FnMut(usize, usize)) {
        let Some(set) = &self.deltas else {
            return;
        };
        set.each_match(&deltas::xor_deltas(bytes), |index, start| {
            found(self.delta_owner[index].0, start);
        });
    }

    pub(super) fn variants_in(&self, value: &[u8], found: &mut Vec<(usize, &'static str)>) {
        let Some(set) = &self.variants else {
            return;
        };
        set.each_match(value, |index, _| {
            let hit = self.variant_owner[index];
            if !found.contains(&hit) {
                found.push(hit);
            }
        });
    }
}

/// Every form of `secret` to look for, with its encoding label. Encoded
/// forms that depend on neighbouring bytes are cut to their stable part.
fn variants(secret: &str, private: &Range<usize>) -> Vec<(String, &'static str)> {
    let bytes = secret.as_bytes();
    let mut out = vec![(secret.to_string(), "raw")];
    for offset in 0..3 {
        out.push((base64_inner(bytes, offset, false), "base64"));
        out.push((base64_inner(bytes, offset, true), "base64url"));
    }
    let hex = hex_lower(bytes);
    out.push((hex.to_ascii_uppercase(), "hex"));
    out.push((hex, "hex"));
    out.push((percent_reserved(bytes), "percent"));
    let all: String = bytes.iter().map(|b| format!("%{b:02X}")).collect();
    out.push((all.to_ascii_lowercase(), "percent"));
    out.push((all, "percent"));
    let reversed: String = secret.chars().rev().collect();
    let rot13 = rot13(secret);
    if rot13 != secret {
        out.push((self::rot13(&reversed), "reversed"));
        out.push((rot13, "rot13"));
    }
    // Upper-cased (a lossy codec: only the whole upper-cased secret tells).
    let upper = secret.to_ascii_uppercase();
    if upper != secret {
        out.push((upper.chars().rev().collect(), "reversed"));
        out.push((upper, "upper"));
    }
    out.push((reversed, "reversed"));
    let rot47: String = secret
        .chars()
        .map(|c| match c {
            '!'..='~' => char::from(b'!' + ((c as u8 - b'!') + 47) % 94),
            _ => c,
        })
        .collect();
    out.push((rot47, "rot47"));
    let base32 = base32_stable(bytes);
    out.push((base32.to_ascii_lowercase(), "base32"));
    out.push((base32, "base32"));
    for alphabet in BASE85 {
        for offset in 0..4 {
            out.push((base85_inner(bytes, offset, alphabet), "base85"));
        }
    }
    // Fragments reversed or rot13'd, as written in the value itself.
    if private.len() >= FRAGMENT_LEN {
        for at in private.start..=private.end - FRAGMENT_LEN {
            let Some(fragment) = secret.get(at..at + FRAGMENT_LEN) else {
                continue;
            };
            if fragment.contains("blbk") {
                continue; // the marker every OpenAI project key shares
            }
            out.push((fragment.chars().rev().collect(), "piece"));
            let rotated = self::rot13(fragment);
            if rotated != fragment {
                out.push((rotated, "piece"));
            }
        }
    }
    let chars: Vec<(usize, char)> = secret.char_indices().collect();
    if chars.len() > PIECE_LEN {
        for w in 0..=chars.len() - PIECE_LEN {
            let start = chars[w].0;
            let end = chars.get(w + PIECE_LEN).map_or(secret.len(), |&(at, _)| at);
            let own = end
                .min(private.end)
                .saturating_sub(start.max(private.start));
            if own >= PIECE_PRIVATE {
                out.push((secret[start..end].to_string(), "piece"));
            }
        }
    }
    out
}
