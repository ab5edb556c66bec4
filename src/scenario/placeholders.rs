//! Fake credentials for scenarios: `{{GH}}`-style placeholders become fresh
//! credential-shaped values each run (so no secret is ever stored in the
//! repository), `{{GH|b64}}`-style transforms give encoded copies, and
//! [`variants`] lists the encodings the leak check looks for.
//!
//! The fakes, encoders and generator live in `guard::testkit`, shared with
//! the guard's tests. [`variants`] is the runner's leak oracle: its list of
//! forms is written here on purpose, apart from the guard's ledger, so a
//! form the ledger forgets is still found (the encoders are shared, the
//! choice of what to look for is not).

use std::collections::BTreeMap;
use std::fmt;

use crate::guard::testkit::{B64_STD, B64_URL, base32, percent};
pub use crate::guard::testkit::{
    Rng, TAGS, TRANSFORMS, base64, derive_seed, fake, fresh_seed, transform,
};

/// Zero-width and invisible format characters, stripped before matching.
pub fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}')
}

/// The forms of a secret the leak check looks for, each with its name:
/// raw, base64 and base64url at the three byte alignments (so the secret
/// is found inside a longer encoded text), hex both cases,
/// percent-encoding, reversed, each half, rot13, base32, spaced and as
/// character codes. Zero-width characters are
/// stripped from what is searched, which covers `zw`. Forms shorter than 8
/// characters are left out.
pub fn variants(secret: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = vec![("raw", secret.to_string())];
    let bytes = secret.as_bytes();
    for skip in 0..3.min(bytes.len()) {
        let rest = &bytes[skip..];
        let aligned = &rest[..rest.len() - rest.len() % 3];
        out.push(("b64", base64(aligned, B64_STD, false)));
        out.push(("b64url", base64(aligned, B64_URL, false)));
    }
    let hex = transform("hex", secret).unwrap_or_default();
    out.push(("hex-upper", hex.to_ascii_uppercase()));
    out.push(("hex", hex));
    out.push(("url", percent(secret)));
    out.push(("b32", base32(bytes, false)));
    let codes = transform("codes", secret).unwrap_or_default();
    out.push(("codes", codes.replace(',', ", ")));
    out.push(("codes", codes));
    for name in ["rev", "first-half", "second-half", "rot13", "spaced"] {
        out.push((name, transform(name, secret).unwrap_or_default()));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|(_, v)| v.chars().count() >= 8 && seen.insert(v.clone()));
    out
}

/// A placeholder that cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceholderError(pub String);

impl fmt::Display for PlaceholderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlaceholderError {}

/// The fake values of one run, made on first use.
#[derive(Debug, Clone)]
pub struct Canaries {
    seed: u64,
    values: BTreeMap<String, String>,
}

impl Canaries {
    pub fn new(seed: u64) -> Canaries {
        Canaries {
            seed,
            values: BTreeMap::new(),
        }
    }

    /// The value for `tag`, made on first use.
    pub fn value(&mut self, tag: &str) -> Option<String> {
        if let Some(v) = self.values.get(tag) {
            return Some(v.clone());
        }
        let v = fake(tag, derive_seed(self.seed, &[tag]))?;
        self.values.insert(tag.to_string(), v.clone());
        Some(v)
    }

    /// Every value made so far, by tag.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    /// `text` with every placeholder replaced. `{{` not followed by an
    /// upper-case tag is left alone (so `${{ secrets.X }}` stays as is).
    pub fn expand(&mut self, text: &str) -> Result<String, PlaceholderError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("{{") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let is_tag = after.chars().next().is_some_and(|c| c.is_ascii_uppercase());
            let Some(end) = after.find("}}").filter(|_| is_tag) else {
                out.push_str("{{");
                rest = after;
                continue;
            };
            out.push_str(&self.one(&after[..end])?);
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn one(&mut self, inner: &str) -> Result<String, PlaceholderError> {
        let mut parts = inner.split('|');
        let tag = parts.next().unwrap_or_default().trim();
        let mut value = self.value(tag).ok_or_else(|| {
            let tags: Vec<&str> = TAGS.iter().map(|(t, _)| *t).collect();
            PlaceholderError(format!(
                "{{{{{inner}}}}}: unknown tag {tag:?}; the tags are {}",
                tags.join(", ")
            ))
        })?;
        for name in parts {
            let name = name.trim();
            value = transform(name, &value).ok_or_else(|| {
                PlaceholderError(format!(
                    "{{{{{inner}}}}}: unknown transform {name:?}; the transforms are {}",
                    TRANSFORMS.join(", ")
                ))
            })?;
        }
        Ok(value)
    }
}

/// The tags a text's placeholders name (without expanding anything).
pub fn tags_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("{{") {
        let after = &rest[at + 2..];
        if let Some(end) = after.find("}}") {
            let tag = after[..end].split('|').next().unwrap_or_default().trim();
            if tag.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && !out.iter().any(|t| t == tag)
            {
                out.push(tag.to_string());
            }
        }
        rest = after;
    }
    out
}
