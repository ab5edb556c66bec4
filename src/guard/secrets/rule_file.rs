//! The rule file: the TOML format of `secret_rules.toml` (and of a
//! caller's own rules) and its compilation into [`SecretRules`], each
//! error naming the rule and what is wrong with it.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use aho_corasick::{AhoCorasickBuilder, MatchKind};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::Deserialize;

use super::{CharClass, Rule, SecretRules};

/// The rules nib ships.
const BUILTIN: &str = include_str!("../secret_rules.toml");

/// Room for the larger rules; compile fails loudly rather than silently.
const REGEX_SIZE_LIMIT: usize = 32 << 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    allow: AllowSpec,
    inert: InertSpec,
    rule: Vec<RuleSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowSpec {
    secrets: Vec<String>,
    max_run: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InertSpec {
    spans: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    kind: String,
    #[allow(dead_code)] // documentation for people reading the rules
    description: String,
    #[serde(default)]
    keywords: Vec<String>,
    regex: String,
    #[serde(default)]
    entropy: f64,
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    allow_name: Vec<String>,
    #[serde(default)]
    generic: bool,
    #[serde(default = "yes")]
    global_allow: bool,
}

fn yes() -> bool {
    true
}

impl CharClass {
    fn parse(name: &str) -> Result<Self, String> {
        match name {
            "digit" => Ok(Self::Digit),
            "letter" => Ok(Self::Letter),
            "upper" => Ok(Self::Upper),
            "lower" => Ok(Self::Lower),
            other => Err(format!(
                "unknown character class {other:?}: use digit, letter, upper or lower"
            )),
        }
    }
}

impl SecretRules {
    /// Compile the built-in rules afresh (the benchmark times this; callers
    /// use [`rules`](super::rules)).
    pub fn compile() -> Result<SecretRules, String> {
        Self::from_toml(BUILTIN)
    }

    /// Compile a rule file in the format of `secret_rules.toml`.
    pub fn from_toml(text: &str) -> Result<SecretRules, String> {
        let file: RuleFile =
            toml::from_str(text).map_err(|e| format!("secret rules: invalid TOML: {e}"))?;
        let mut rules = Vec::with_capacity(file.rule.len());
        let mut keywords: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        let mut unfiltered = Vec::new();
        for (index, spec) in file.rule.into_iter().enumerate() {
            let rule = compile_rule(&spec)?;
            if spec.keywords.is_empty() {
                unfiltered.push(index);
            }
            for keyword in spec.keywords {
                let keyword = keyword.to_ascii_lowercase();
                match keywords.iter().position(|k| *k == keyword) {
                    Some(at) => keyword_rules[at].push(index),
                    None => {
                        keywords.push(keyword);
                        keyword_rules.push(vec![index]);
                    }
                }
            }
            rules.push(rule);
        }
        let prefilter = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&keywords)
            .map_err(|e| format!("secret rules: keywords: {e}"))?;
        let placeholders = regex_set(&file.allow.secrets)
            .map_err(|e| format!("secret rules: [allow] secrets: {e}"))?;
        let inert = file
            .inert
            .spans
            .iter()
            .map(|p| byte_regex(p).map_err(|e| format!("secret rules: [inert] spans: {e}")))
            .collect::<Result<_, _>>()?;
        Ok(SecretRules {
            rules,
            prefilter,
            keyword_rules,
            unfiltered,
            placeholders,
            max_run: file.allow.max_run,
            inert,
        })
    }
}

fn compile_rule(spec: &RuleSpec) -> Result<Rule, String> {
    let context = |e: String| format!("secret rule {}: {e}", spec.id);
    let regex = byte_regex(&spec.regex).map_err(context)?;
    let group = regex
        .capture_names()
        .position(|name| name == Some("secret"));
    let name_group = regex.capture_names().position(|name| name == Some("name"));
    let requires = spec
        .requires
        .iter()
        .map(|c| CharClass::parse(c))
        .collect::<Result<_, _>>()
        .map_err(context)?;
    let optional_set = |patterns: &[String]| -> Result<Option<RegexSet>, String> {
        if patterns.is_empty() {
            Ok(None)
        } else {
            regex_set(patterns).map(Some).map_err(context)
        }
    };
    let allow = optional_set(&spec.allow)?;
    let allow_name = optional_set(&spec.allow_name)?;
    Ok(Rule {
        id: intern(&spec.id),
        kind: intern(&spec.kind),
        regex,
        group,
        name_group,
        allow_name,
        entropy: spec.entropy,
        requires,
        allow,
        generic: spec.generic,
        global_allow: spec.global_allow,
    })
}

/// An ASCII byte regex: Unicode off compiles ~60x faster and matches how
/// credential formats are defined.
fn byte_regex(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| format!("regex {pattern:?}: {e}"))
}

fn regex_set(patterns: &[String]) -> Result<RegexSet, String> {
    RegexSetBuilder::new(patterns)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| e.to_string())
}

/// Rule ids and kinds live as long as the process; interning keeps a fresh
/// compile (the benchmark's) from leaking a copy each time.
fn intern(s: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let names = NAMES.get_or_init(|| Mutex::new(HashSet::new()));
    let mut names = names
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&known) = names.get(s) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}
