//! The secret scan: finds credential-shaped strings in a text. The formats
//! are data (`secret_rules.toml`, written for nib), compiled once into ASCII
//! byte regexes behind a keyword prefilter, so a large payload costs one
//! Aho-Corasick pass plus the few regexes whose keywords occur.
//!
//! This file holds the compiled rule set and the scan; `rule_file` reads
//! and compiles the rule file, `fakes` generates fake credentials of real
//! shape (`fake`) for scenarios and tests: the scan must find every one of
//! them.

mod fakes;
mod rule_file;

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::bytes::{Regex, RegexSet};

pub use fakes::{FAKE_KINDS, fake};

/// One credential found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHit {
    /// The rule's stable id, such as "github-token".
    pub rule: &'static str,
    /// The short tag used in redaction handles, such as "GH".
    pub kind: &'static str,
    /// 1-based line of the secret's first byte.
    pub line: usize,
    /// Byte offsets of the secret itself (not its surrounding context).
    pub start: usize,
    pub end: usize,
    pub secret: String,
}

/// The compiled rule set.
pub struct SecretRules {
    rules: Vec<Rule>,
    /// Keyword literals of all rules, ASCII case-insensitive.
    prefilter: AhoCorasick,
    /// For each prefilter pattern, the rules it switches on.
    keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords: always run.
    unfiltered: Vec<usize>,
    placeholders: RegexSet,
    max_run: usize,
    inert: Vec<Regex>,
}

struct Rule {
    id: &'static str,
    kind: &'static str,
    regex: Regex,
    /// Index of the `secret` capture group, if the regex has one.
    group: Option<usize>,
    /// Index of the `name` capture group (the assigned name), if any.
    name_group: Option<usize>,
    allow_name: Option<RegexSet>,
    entropy: f64,
    requires: Vec<CharClass>,
    allow: Option<RegexSet>,
    generic: bool,
    global_allow: bool,
}

#[derive(Debug, Clone, Copy)]
enum CharClass {
    Digit,
    Letter,
    Upper,
    Lower,
}

impl CharClass {
    fn found_in(self, s: &[u8]) -> bool {
        s.iter().any(|b| match self {
            Self::Digit => b.is_ascii_digit(),
            Self::Letter => b.is_ascii_alphabetic(),
            Self::Upper => b.is_ascii_uppercase(),
            Self::Lower => b.is_ascii_lowercase(),
        })
    }
}

/// The built-in rules, compiled on first use.
// The built-in rules are part of the binary and covered by tests.
#[allow(clippy::expect_used)]
pub fn rules() -> &'static SecretRules {
    static RULES: OnceLock<SecretRules> = OnceLock::new();
    RULES.get_or_init(|| {
        // The built-in file is part of the binary and covered by tests, so a
        // failure here is a build defect, not a user error.
        SecretRules::compile().expect("the built-in secret rules compile")
    })
}

/// Scan `text` with the built-in rules. Hits are in text order and never
/// overlap.
pub fn scan(text: &str) -> Vec<SecretHit> {
    rules().scan(text)
}

impl SecretHit {
    /// Whether this is a live credential whatever file holds it: a
    /// provider's key of a kind with no test mode (a GitHub, GitLab or
    /// Slack token, an OpenAI or Anthropic key) or in live mode
    /// (`sk_live_`). A test's or a document's generic assignments, JWTs,
    /// private keys and test-mode keys are its own dummies; these shapes
    /// never are (a red team's `sk_live_` under `docs/` was read to the
    /// model reversed).
    pub fn live_anywhere(&self) -> bool {
        const PROVIDERS: &[&str] = &[
            "aws-access-key-id",
            "github-token",
            "github-fine-grained-pat",
            "gitlab-token",
            "slack-token",
            "slack-app-token",
            "slack-webhook",
            "anthropic-key",
            "openai-project-key",
            "openai-legacy-key",
            "openai-key",
            "google-api-key",
            "npm-token",
            "pypi-token",
        ];
        match self.rule {
            "stripe-key" => !self.secret.contains("_test_"),
            rule => PROVIDERS.contains(&rule),
        }
    }
}

impl SecretRules {
    /// How many rules there are.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rule ids, in file order.
    pub fn ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.rules.iter().map(|r| r.id)
    }

    /// Every credential in `text`, in text order, never overlapping.
    pub fn scan(&self, text: &str) -> Vec<SecretHit> {
        let bytes = text.as_bytes();
        let mut active = vec![false; self.rules.len()];
        for &r in &self.unfiltered {
            active[r] = true;
        }
        for m in self.prefilter.find_overlapping_iter(bytes) {
            for &r in &self.keyword_rules[m.pattern().as_usize()] {
                active[r] = true;
            }
        }
        let mut found: Vec<Candidate> = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            if !active[index] {
                continue;
            }
            self.run_rule(index, rule, bytes, &mut found);
        }
        if found.iter().all(|c| c.vetoed) {
            return Vec::new();
        }
        let kept = self.resolve(found, bytes);
        let mut lines = LineIndex::new(bytes);
        kept.into_iter()
            .map(|c| {
                let rule = &self.rules[c.rule];
                SecretHit {
                    rule: rule.id,
                    kind: rule.kind,
                    line: lines.line_of(c.start),
                    start: c.start,
                    end: c.end,
                    secret: text[c.start..c.end].to_string(),
                }
            })
            .collect()
    }

    fn run_rule(&self, index: usize, rule: &Rule, bytes: &[u8], found: &mut Vec<Candidate>) {
        let mut push = |start: usize, end: usize, name: Option<&[u8]>| {
            let secret = &bytes[start..end];
            let named_otherwise = match (name, &rule.allow_name) {
                (Some(name), Some(allow)) => allow.is_match(name),
                _ => false,
            };
            found.push(Candidate {
                rule: index,
                start,
                end,
                vetoed: named_otherwise || !self.is_secret(rule, secret),
            });
        };
        match rule.group {
            None => {
                for m in rule.regex.find_iter(bytes) {
                    push(m.start(), m.end(), None);
                }
            }
            Some(group) => {
                for caps in rule.regex.captures_iter(bytes) {
                    let name = rule
                        .name_group
                        .and_then(|g| caps.get(g))
                        .map(|m| m.as_bytes());
                    if let Some(m) = caps.get(group) {
                        push(m.start(), m.end(), name);
                    }
                }
            }
        }
    }

    /// The filters after a regex match: entropy, character classes, the
    /// rule's own allowlist, then the placeholders.
    fn is_secret(&self, rule: &Rule, secret: &[u8]) -> bool {
        // Byte offsets must fall on char boundaries to slice the text; the
        // ASCII regexes can only end mid-char on non-ASCII input, which no
        // credential format contains.
        if std::str::from_utf8(secret).is_err() {
            return false;
        }
        if rule.entropy > 0.0 && shannon_entropy(secret) < rule.entropy {
            return false;
        }
        if !rule.requires.iter().all(|c| c.found_in(secret)) {
            return false;
        }
        if rule.allow.as_ref().is_some_and(|a| a.is_match(secret)) {
            return false;
        }
        if rule.global_allow
            && (self.placeholders.is_match(secret) || longest_run(secret) >= self.max_run)
        {
            return false;
        }
        true
    }

    /// Drop hits inside inert spans, then keep non-overlapping hits:
    /// specific rules before generic ones, longer before shorter, then
    /// file order.
    fn resolve(&self, mut found: Vec<Candidate>, bytes: &[u8]) -> Vec<Candidate> {
        let inert: Vec<(usize, usize)> = self
            .inert
            .iter()
            .flat_map(|r| r.find_iter(bytes).map(|m| (m.start(), m.end())))
            .collect();
        found.retain(|c| !inert.iter().any(|&(s, e)| c.start >= s && c.end <= e));
        // A specific rule that matched a span and rejected it (a documented
        // example, a placeholder) knows that format better than a generic
        // rule does: the span stays quiet.
        let vetoed: Vec<(usize, usize)> = found
            .iter()
            .filter(|c| c.vetoed && !self.rules[c.rule].generic)
            .map(|c| (c.start, c.end))
            .collect();
        found.retain(|c| {
            let overruled =
                self.rules[c.rule].generic && vetoed.iter().any(|&(s, e)| c.start < e && s < c.end);
            !c.vetoed && !overruled
        });
        found.sort_by_key(|c| {
            (
                self.rules[c.rule].generic,
                std::cmp::Reverse(c.end - c.start),
                c.rule,
                c.start,
            )
        });
        // `kept` stays sorted by start and free of overlaps, so the only
        // kept hit that can overlap a candidate is the first one ending
        // after the candidate starts.
        let mut kept: Vec<Candidate> = Vec::with_capacity(found.len());
        for c in found {
            let at = kept.partition_point(|k| k.end <= c.start);
            if kept.get(at).is_none_or(|k| k.start >= c.end) {
                kept.insert(at, c);
            }
        }
        kept
    }
}

#[derive(Debug, Clone, Copy)]
struct Candidate {
    rule: usize,
    start: usize,
    end: usize,
    /// The regex matched but a filter said "not a secret".
    vetoed: bool,
}

/// Shannon entropy in bits per byte.
pub fn shannon_entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

fn longest_run(s: &[u8]) -> usize {
    let mut best = 0;
    let mut run = 0;
    let mut prev = None;
    for &b in s {
        run = if Some(b) == prev { run + 1 } else { 1 };
        prev = Some(b);
        best = best.max(run);
    }
    best
}

/// Line numbers for byte offsets, computed forward as hits come in order.
struct LineIndex<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> LineIndex<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            line: 1,
        }
    }

    fn line_of(&mut self, offset: usize) -> usize {
        if offset < self.pos {
            self.pos = 0;
            self.line = 1;
        }
        self.line += memchr::memchr_iter(b'\n', &self.bytes[self.pos..offset]).count();
        self.pos = offset;
        self.line
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// A fake placed where it usually appears.
    fn in_context(kind: &str, secret: &str) -> String {
        match kind {
            "AS" => format!("AWS_SECRET_ACCESS_KEY={secret}\n"),
            _ => format!("let config = load();\nclient.auth(\"{secret}\");\n"),
        }
    }

    #[test]
    fn builtin_rules_compile() {
        let rules = SecretRules::compile().unwrap();
        assert!(rules.len() >= 20, "{} rules", rules.len());
        let ids: HashSet<_> = rules.ids().collect();
        assert_eq!(ids.len(), rules.len(), "rule ids are unique");
    }

    #[test]
    fn finds_every_fake_of_every_kind() {
        for &kind in FAKE_KINDS {
            for seed in 0..300 {
                let secret = fake(kind, seed).unwrap();
                let text = in_context(kind, &secret);
                let hits = scan(&text);
                assert_eq!(hits.len(), 1, "{kind} seed {seed}: {secret}\n{hits:?}");
                let hit = &hits[0];
                assert_eq!(hit.kind, kind, "{kind} seed {seed}: {hit:?}");
                assert_eq!(hit.secret, secret, "{kind} seed {seed}");
                assert_eq!(&text[hit.start..hit.end], secret);
            }
        }
    }

    #[test]
    fn fakes_are_deterministic_and_varied() {
        for &kind in FAKE_KINDS {
            assert_eq!(fake(kind, 7), fake(kind, 7));
            assert_ne!(fake(kind, 7), fake(kind, 8), "{kind}");
        }
        assert_eq!(fake("NOPE", 1), None);
        let pk = fake("PK", 3).unwrap();
        assert!(pk.starts_with("-----BEGIN ") && pk.ends_with("PRIVATE KEY-----"));
        let as_key = fake("AS", 3).unwrap();
        assert_eq!(as_key.len(), 40);
        // A bare AWS secret key has no shape of its own.
        assert!(scan(&as_key).is_empty());
    }

    #[test]
    fn positives_from_each_rule() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "aws_secret_access_key = \"Zq9tP4vR7wXy2Kb8Nc3Lm6Hj1Gf5Ds0Ae+Bu/Wx4\"",
                "aws-secret-access-key",
                "Zq9tP4vR7wXy2Kb8Nc3Lm6Hj1Gf5Ds0Ae+Bu/Wx4",
            ),
            (
                "SLACK=https://hooks.slack.com/services/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",
                "slack-webhook",
                "https://hooks.slack.com/services/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",
            ),
            (
                "key: sk_test_51Hx9QfJ2kLmN8pR4sT6vW0yZ",
                "stripe-key",
                "sk_test_51Hx9QfJ2kLmN8pR4sT6vW0yZ",
            ),
            (
                "openai.api_key = sk-Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lN5pR7tV9x",
                "openai-key",
                "sk-Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lN5pR7tV9x",
            ),
            (
                "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",
                "openai-legacy-key",
                "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",
            ),
            (
                "DATABASE_URL=postgres://app:hunter2x@db.internal:5432/prod",
                "url-password",
                "hunter2x",
            ),
            (
                "git clone https://deploy:Tk9x2Lp4Qz@git.example.org/repo.git",
                "url-password",
                "Tk9x2Lp4Qz",
            ),
            (
                "export DB_PASSWORD=Sup3rS3cret!2024\n",
                "env-assignment",
                "Sup3rS3cret!2024",
            ),
            (
                "SECRET_KEY_BASE=9f8e7d6c5b4a39281706f5e4d3c2b1a0\n",
                "env-assignment",
                "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            ),
            (
                "const config = { apiKey: \"Hq7Lm2Xp9Rt4Vw8Zb3Nc6Kd1Fg5Js0\" };",
                "assigned-secret",
                "Hq7Lm2Xp9Rt4Vw8Zb3Nc6Kd1Fg5Js0",
            ),
        ];
        for &(text, rule, secret) in cases {
            let hits = scan(text);
            assert_eq!(hits.len(), 1, "{text}: {hits:?}");
            assert_eq!(hits[0].rule, rule, "{text}");
            assert_eq!(hits[0].secret, secret, "{text}");
        }
    }

    #[test]
    fn specific_rule_wins_over_assignment() {
        let gh = fake("GH", 11).unwrap();
        let hits = scan(&format!("GITHUB_TOKEN={gh}\n"));
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].kind, "GH");
        let ant = fake("ANT", 4).unwrap();
        let hits = scan(&format!("ANTHROPIC_API_KEY={ant}\n"));
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].rule, "anthropic-key");
    }

    #[test]
    fn many_hits_in_one_text() {
        let mut text = String::new();
        let mut want = Vec::new();
        for seed in 0..200u64 {
            let kind = FAKE_KINDS[seed as usize % FAKE_KINDS.len()];
            let secret = fake(kind, seed).unwrap();
            text.push_str(&in_context(kind, &secret));
            want.push(secret);
        }
        let got: Vec<String> = scan(&text).into_iter().map(|h| h.secret).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn lines_and_offsets() {
        let gl = fake("GL", 1).unwrap();
        let npm = fake("NPM", 2).unwrap();
        let text = format!("a\nb\ntoken {gl}\n\n\n//registry.npmjs.org/:_authToken={npm}\n");
        let hits = scan(&text);
        assert_eq!(hits.len(), 2, "{hits:?}");
        assert_eq!((hits[0].kind, hits[0].line), ("GL", 3));
        assert_eq!((hits[1].kind, hits[1].line), ("NPM", 6));
        for h in &hits {
            assert_eq!(&text[h.start..h.end], h.secret);
        }
    }

    #[test]
    fn private_key_in_json_string() {
        let pk = fake("PK", 9).unwrap().replace('\n', "\\n");
        let json = format!(r#"{{"type": "service_account", "private_key": "{pk}\n"}}"#);
        let hits = scan(&json);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].kind, "PK");
    }

    /// Text that looks like credentials to a naive scanner but is not.
    const FALSE_POSITIVES: &[&str] = &[
        // documented example keys
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key: \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
        "stripe.api_key = \"sk_test_4eC39HqLyjWDarjtT1zdp7dc\"",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "SLACK_WEBHOOK=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "OPENAI_API_KEY=sk-...",
        "api_key = \"sk-your-api-key-here\"",
        // .env.example placeholders
        "API_KEY=changeme\nSECRET_KEY=your-secret-key-here\nTOKEN=xxxxxxxxxxxxxxxx\n",
        "GITHUB_TOKEN=<token>\nSTRIPE_KEY=${STRIPE_KEY}\nDB_PASSWORD={{ secrets.DB_PASSWORD }}\n",
        "AUTH_TOKEN=$AUTH_TOKEN\nPRIVATE_KEY_PATH=./keys/dev.pem\nAPI_KEY=your_api_key\n",
        "SENTRY_DSN=\nJWT_SECRET=replace-me-with-32-random-chars\n",
        "export API_TOKEN=\"${API_TOKEN:-}\"\n",
        "DATABASE_URL=postgres://user:password@localhost:5432/app\n",
        "redis://:${REDIS_PASSWORD}@cache:6379\n",
        // lockfiles and digests
        r#""integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==","#,
        "checksum = \"3d1ab3a4c5f0e5d9b7a20e8f3c6d5e4f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d\"",
        "golang.org/x/text v0.3.7 h1:olpwvP2KacW1ZWvsR7uQhoyTYvKAupfQrRGBFM352Gk=",
        r#"resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#679591c564c3bffaae8454cf0b3df370c3d6911c""#,
        "<script src=\"x.js\" integrity=\"sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC\"></script>",
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "TOKEN_HASH=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
        "  \"token_sha256\": \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\",",
        "API_KEY_ID=AB12CD34EF56GH78\nSSH_PUBLIC_KEY_FINGERPRINT=SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8\n",
        // git hashes and UUIDs
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nMerge: 1a2b3c4 5d6e7f8",
        "session_key = \"123e4567-e89b-12d3-a456-426614174000\"",
        "request id 550e8400-e29b-41d4-a716-446655440000 token_id=6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        // data URIs
        "background: url(data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==);",
        "src=\"data:font/woff2;base64,d09GMgABAAAAAAYcAA0AAAAADFQAAAXGAAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAP0ZGVE0cGh4GYACCehEICotoiXILEgABNgIkAxQEIAWDNAcgG1kJ\"",
        // public key material
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        // ordinary code that mentions keys and tokens
        "let key = self.compute_key(input2);\nlet token = lexer.next_token()?;\n",
        "password = hash_password(user_input, salt)\n",
        "fn tokenize(source: &str) -> Vec<Token> { todo!() }\n",
        "    authToken: process.env.AUTH_TOKEN_V2,\n",
        "map.insert(key, value); cache_key = format!(\"{}-{}\", a, b);",
        "PRIMARY_KEY_COLUMN=id\nTOKEN_TTL_SECONDS=3600\nPASSWORD_MIN_LENGTH=12\n",
        "TOKEN_URL=https://oauth2.googleapis.com/token\n",
        "the task-runner-for-continuous-integration-pipelines-and-stuff",
        "from sklearn import svm  # sk-learn-compatible-estimator-implementation",
        "https://docs.rs/regex/1.10.2/regex/bytes/struct.Regex.html",
        "user@example.com:8080 and https://user@host.com/path",
    ];

    #[test]
    fn false_positive_corpus_stays_quiet() {
        for text in FALSE_POSITIVES {
            let hits = scan(text);
            assert!(hits.is_empty(), "false positive in {text:?}: {hits:?}");
        }
        let all = FALSE_POSITIVES.join("\n");
        assert!(scan(&all).is_empty());
    }

    #[test]
    fn bad_rule_files_are_explained() {
        let missing = SecretRules::from_toml("[allow]\nsecrets=[]\nmax_run=8\n").err();
        assert!(missing.is_some_and(|e| e.contains("invalid TOML")));
        let bad = r#"
            [allow]
            secrets = []
            max_run = 8
            [inert]
            spans = []
            [[rule]]
            id = "broken"
            kind = "X"
            description = "x"
            regex = "(unclosed"
        "#;
        let err = SecretRules::from_toml(bad).err().unwrap_or_default();
        assert!(err.contains("secret rule broken"), "{err}");
    }

    #[test]
    fn entropy_and_runs() {
        assert_eq!(shannon_entropy(b""), 0.0);
        assert_eq!(shannon_entropy(b"aaaa"), 0.0);
        assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-9);
        assert_eq!(longest_run(b"abbbbc"), 4);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Hits are in order, never overlap, and slice the text to the
        /// secret, whatever surrounds a fake.
        #[test]
        fn hits_are_consistent(
            before in "[ -~\n\u{e9}\u{2603}]{0,60}",
            after in "[ -~\n\u{e9}\u{2603}]{0,60}",
            kind in proptest::sample::select(FAKE_KINDS.to_vec()),
            seed in 0u64..1_000,
        ) {
            let secret = fake(kind, seed).unwrap();
            let text = format!("{before}{}{after}", in_context(kind, &secret));
            let hits = scan(&text);
            let mut end = 0;
            for h in &hits {
                proptest::prop_assert!(h.start >= end && h.start < h.end);
                proptest::prop_assert_eq!(&text[h.start..h.end], h.secret.as_str());
                end = h.end;
            }
        }
    }
}
