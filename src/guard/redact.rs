//! Redaction of tool output: secret-shaped strings (scan hits) and known
//! secrets (the ledger's) are replaced by handles like `«secret:GH#1»`
//! before the model sees them. The redactor remembers each handle's value,
//! so a handle the model writes into a sink value can be resolved, and only
//! after a person confirmed it (the caller's job).
//!
//! The same secret always gets the same handle; handles are numbered per
//! tag. Text that looks like a handle but is not one of ours stays as is.

use std::collections::HashMap;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::ledger::{MIN_SECRET_LEN, SecretLedger};
use super::secrets;

/// The tag of a secret known only from the ledger (no format matched).
pub const LEDGER_TAG: &str = "SECRET";

const OPEN: &str = "«secret:";
const CLOSE: char = '»';

/// Handles and their values for one session.
#[derive(Debug, Default, Clone)]
pub struct Redactor {
    by_value: HashMap<String, String>,
    by_handle: HashMap<String, String>,
    counters: HashMap<String, usize>,
    /// Secrets to replace even when no rule matches them.
    known: Vec<String>,
    /// Built on first use after `known` changes.
    known_matcher: OnceLock<Option<AhoCorasick>>,
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace this secret wherever it appears from now on, even if no
    /// rule matches it (a value read from a protected file, nib's own API
    /// key). Values shorter than the ledger's minimum are ignored.
    pub fn know(&mut self, secret: &str) {
        let secret = secret.trim();
        if secret.chars().count() < MIN_SECRET_LEN || self.known.iter().any(|k| k == secret) {
            return;
        }
        self.known.push(secret.to_string());
        self.known_matcher = OnceLock::new();
    }

    /// Redact `text`: returns the text with handles in place of secrets,
    /// and the secrets seen for the first time (to add to the ledger).
    pub fn redact(&mut self, text: &str) -> (String, Vec<String>) {
        let mut spans: Vec<(usize, usize, String)> = secrets::scan(text)
            .into_iter()
            .map(|h| (h.start, h.end, h.kind.to_string()))
            .collect();
        let scanned = spans.len();
        if let Some(matcher) = self.known_matcher() {
            for m in matcher.find_iter(text) {
                let (start, end) = (m.start(), m.end());
                let overlaps = spans[..scanned]
                    .iter()
                    .any(|&(s, e, _)| start < e && s < end);
                if !overlaps {
                    spans.push((start, end, LEDGER_TAG.to_string()));
                }
            }
        }
        if spans.is_empty() {
            return (text.to_string(), Vec::new());
        }
        spans.sort_by_key(|&(start, _, _)| start);
        let mut out = String::with_capacity(text.len());
        let mut new = Vec::new();
        let mut at = 0;
        for (start, end, tag) in spans {
            let value = &text[start..end];
            let fresh =
                !self.by_value.contains_key(value) && !self.known.iter().any(|k| k == value);
            let handle = self.handle_for(value, &tag);
            if fresh && !new.iter().any(|n| n == value) {
                new.push(value.to_string());
            }
            out.push_str(&text[at..start]);
            out.push_str(&handle);
            at = end;
        }
        out.push_str(&text[at..]);
        (out, new)
    }

    /// Like `redact`, knowing every secret of `ledger` first.
    pub fn redact_with(&mut self, text: &str, ledger: &SecretLedger) -> (String, Vec<String>) {
        for secret in ledger.secrets() {
            self.know(secret);
        }
        self.redact(text)
    }

    /// The handles of ours in `value`, each once, with their values, in
    /// order of first appearance.
    pub fn handles_in(&self, value: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (_, _, handle) in handle_spans(value) {
            if let Some(secret) = self.by_handle.get(handle)
                && !out.iter().any(|(h, _)| h == handle)
            {
                out.push((handle.to_string(), secret.clone()));
            }
        }
        out
    }

    /// `value` with our handles replaced by the real secrets. Only for a
    /// sink value a person has confirmed.
    pub fn resolve(&self, value: &str) -> String {
        let mut out = String::with_capacity(value.len());
        let mut at = 0;
        for (start, end, handle) in handle_spans(value) {
            if let Some(secret) = self.by_handle.get(handle) {
                out.push_str(&value[at..start]);
                out.push_str(secret);
                at = end;
            }
        }
        out.push_str(&value[at..]);
        out
    }

    /// The handle already given to `secret`, if any.
    pub fn handle_of(&self, secret: &str) -> Option<&str> {
        self.by_value.get(secret).map(String::as_str)
    }

    /// How many handles were given out.
    pub fn len(&self) -> usize {
        self.by_handle.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_handle.is_empty()
    }

    fn handle_for(&mut self, value: &str, tag: &str) -> String {
        if let Some(handle) = self.by_value.get(value) {
            return handle.clone();
        }
        let n = self.counters.entry(tag.to_string()).or_insert(0);
        *n += 1;
        let handle = format!("{OPEN}{tag}#{n}{CLOSE}");
        self.by_value.insert(value.to_string(), handle.clone());
        self.by_handle.insert(handle.clone(), value.to_string());
        handle
    }

    fn known_matcher(&self) -> Option<&AhoCorasick> {
        self.known_matcher
            .get_or_init(|| {
                if self.known.is_empty() {
                    return None;
                }
                // Leftmost-longest: a secret that contains another known
                // secret is replaced whole.
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&self.known)
                    .ok()
            })
            .as_ref()
    }
}

/// Handle-shaped text: `«secret:TAG#N»` with TAG in A-Z0-9 and N digits.
fn handle_spans(value: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = value[from..].find(OPEN) {
        let start = from + found;
        let rest = &value[start + OPEN.len()..];
        let shaped = rest.find(CLOSE).and_then(|close| {
            let (tag, n) = rest[..close].split_once('#')?;
            let ok = !tag.is_empty()
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit());
            ok.then_some(start + OPEN.len() + close + CLOSE.len_utf8())
        });
        match shaped {
            Some(end) => {
                out.push((start, end, &value[start..end]));
                from = end;
            }
            None => from = start + OPEN.len(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::secrets::fake;

    #[test]
    fn scan_hits_become_numbered_handles() {
        let gh1 = fake("GH", 1).unwrap();
        let gh2 = fake("GH", 2).unwrap();
        let ak = fake("AK", 3).unwrap();
        let text = format!("a={gh1}\nb={ak}\nc={gh2}\nd={gh1}\n");
        let mut r = Redactor::new();
        let (out, new) = r.redact(&text);
        assert_eq!(
            out,
            "a=«secret:GH#1»\nb=«secret:AK#1»\nc=«secret:GH#2»\nd=«secret:GH#1»\n"
        );
        assert_eq!(new, vec![gh1.clone(), ak.clone(), gh2.clone()]);
        assert_eq!(r.len(), 3);
        // Seen again later: the same handles, nothing new.
        let (again, new) = r.redact(&format!("token {gh2} and {gh1}"));
        assert_eq!(again, "token «secret:GH#2» and «secret:GH#1»");
        assert!(new.is_empty());
        assert_eq!(r.handle_of(&ak), Some("«secret:AK#1»"));
    }

    #[test]
    fn ledger_secrets_without_a_format() {
        let mut ledger = SecretLedger::new();
        ledger.add("correct horse battery staple", ".env");
        let mut r = Redactor::new();
        let (out, new) = r.redact_with("pw is correct horse battery staple!", &ledger);
        assert_eq!(out, "pw is «secret:SECRET#1»!");
        assert!(new.is_empty(), "known already: {new:?}");
        // Short values are never redacted.
        r.know("abc");
        assert_eq!(r.redact("abc abc").0, "abc abc");
    }

    #[test]
    fn handles_resolve_back() {
        let npm = fake("NPM", 5).unwrap();
        let mut r = Redactor::new();
        let (out, _) = r.redact(&format!("//registry.npmjs.org/:_authToken={npm}"));
        let handle = "«secret:NPM#1»";
        assert!(out.ends_with(handle), "{out}");
        let sink = format!("echo {handle} > ~/.npmrc; echo «secret:GH#9» «secret:bad»");
        assert_eq!(r.handles_in(&sink), vec![(handle.to_string(), npm.clone())]);
        assert_eq!(
            r.resolve(&sink),
            format!("echo {npm} > ~/.npmrc; echo «secret:GH#9» «secret:bad»")
        );
        assert_eq!(r.resolve("no handles"), "no handles");
        assert!(r.handles_in("«secret:NPM#1").is_empty());
    }

    #[test]
    fn clean_text_is_unchanged() {
        let mut r = Redactor::new();
        let text = "fn main() { println!(\"hello\"); } // sha512-abc «secret:";
        assert_eq!(r.redact(text), (text.to_string(), Vec::new()));
        assert!(r.is_empty());
    }

    #[test]
    fn handle_spans_parse_only_our_shape() {
        let spans = handle_spans("«secret:GH#1»«secret:x#1» «secret:PK#22»");
        let handles: Vec<&str> = spans.iter().map(|s| s.2).collect();
        assert_eq!(handles, vec!["«secret:GH#1»", "«secret:PK#22»"]);
    }
}
