//! What a sink value (a `payload`, `command` or `url` argument) carries:
//! the per-value scan (secret rules, the session's ledger raw and
//! encoded, redaction handles, untrusted destinations), and the kept-in-place
//! rule: the secrets an edit leaves where they were are not leaks, but a
//! planned write that copies one, or puts one in a new URL, is. Separate
//! from `mod.rs`, which decides what to scan; this owns how.

use super::ledger::{LedgerHit, SecretLedger};
use super::{Guard, Knowledge, Reason, mask, secrets};
use crate::call::{Call, Role};

/// What a sink value holds by the secret rules and the ledger's check:
/// the part of `scan_value` that only reads, so a call's values can be
/// looked at on two threads.
pub(super) struct Looked {
    scan: Vec<secrets::SecretHit>,
    ledger: Vec<LedgerHit>,
    /// The value is written into a test, an example or the docs: a token
    /// counts only when the session knows it as a secret, not one learned
    /// for its shape alone (a dummy a test's output showed).
    pub(super) dummies: bool,
}

pub(super) fn look(ledger: &SecretLedger, value: &str) -> Looked {
    Looked {
        dummies: false,
        scan: secrets::scan(value),
        ledger: ledger.check(value),
    }
}

/// `look` at each value, on two threads when there is enough to share
/// (each thread takes about half the bytes); in the values' order.
pub(super) fn look_all(ledger: &SecretLedger, values: &[&str]) -> Vec<Looked> {
    const SHARED: usize = 16 * 1024;
    let total: usize = values.iter().map(|v| v.len()).sum();
    if values.len() < 2 || total < SHARED {
        return values.iter().map(|v| look(ledger, v)).collect();
    }
    let mut half = 0;
    let mut bytes = 0;
    while half < values.len() && bytes * 2 < total {
        bytes += values[half].len();
        half += 1;
    }
    let (first, second) = values.split_at(half.min(values.len() - 1).max(1));
    std::thread::scope(|scope| {
        let later = scope.spawn(|| second.iter().map(|v| look(ledger, v)).collect::<Vec<_>>());
        let mut looked: Vec<Looked> = first.iter().map(|v| look(ledger, v)).collect();
        match later.join() {
            Ok(rest) => looked.extend(rest),
            // A thread that could not finish: its values looked at here.
            Err(_) => looked.extend(second.iter().map(|v| look(ledger, v))),
        }
        looked
    })
}

/// The secret scan, the ledger (raw, encoded, pieces, split across calls),
/// handles and untrusted destinations, on one sink value; `looked` is
/// `look(value)`.
pub(super) fn scan_value(
    known: &mut Knowledge,
    param: String,
    role: Role,
    value: &str,
    looked: Looked,
    kept: &dyn Fn(&str) -> bool,
    out: &mut Vec<Reason>,
) {
    let dummies = looked.dummies;
    for hit in looked.scan {
        if dummies && !known_as_secret(&known.ledger, &hit.secret) {
            continue;
        }
        // A handle of ours looks like an assigned secret; the handle check
        // below judges it.
        let is_handle = known
            .redactor
            .handles_in(&hit.secret)
            .first()
            .is_some_and(|(h, _)| *h == hit.secret);
        if kept(&hit.secret) || is_handle {
            continue;
        }
        out.push(
            Reason::new(
                "secret-scan",
                param.clone(),
                format!(
                    "{} matches the secret rule {} ({})",
                    mask(&hit.secret),
                    hit.rule,
                    hit.kind
                ),
            )
            .at(hit.line),
        );
    }
    for (handle, secret) in known.redactor.handles_in(value) {
        if kept(&secret) || kept(&handle) {
            continue;
        }
        out.push(
            Reason::new(
                "secret-handle",
                param.clone(),
                format!("{handle} stands for a secret the session saw; writing it out needs a person's yes"),
            )
            .at(line_of(value, &handle)),
        );
    }
    // check's hits, and the pieces recorded.
    let hits = known.ledger.observe_checked(value, looked.ledger);
    let mut seen = Vec::new();
    for hit in hits {
        if dummies && shape_only(&hit.source) {
            continue;
        }
        let secret = known
            .ledger
            .secrets()
            .nth(hit.secret_index)
            .unwrap_or_default()
            .to_string();
        // Only the secret as it is stays in place: an encoded copy is new.
        let in_place = matches!(hit.encoding, "raw" | "piece" | "split") && kept(&secret);
        if in_place || seen.contains(&(hit.secret_index, hit.encoding)) {
            continue;
        }
        // A scan hit on the same raw value already says it.
        if hit.encoding == "raw"
            && out
                .iter()
                .any(|r| r.rule == "secret-scan" && r.param == param)
        {
            continue;
        }
        seen.push((hit.secret_index, hit.encoding));
        out.push(Reason::new(
            "secret-ledger",
            param.clone(),
            format!(
                "holds a secret from {} ({}), {}",
                hit.source,
                mask(&secret),
                match hit.encoding {
                    "raw" => "as it is".to_string(),
                    "piece" => "a piece of it".to_string(),
                    "split" => "in pieces across calls".to_string(),
                    "spaced" => "with spaces between its characters".to_string(),
                    "joined" => "split into pieces joined in code".to_string(),
                    "char-codes" => "as character codes".to_string(),
                    "folded" => "spread out, recased or in lookalike letters".to_string(),
                    "dump" => "in a dump's text column".to_string(),
                    "caesar" | "atbash" | "rot47" | "shifted" | "shuffled" =>
                        format!("under a letter cipher ({})", hit.encoding),
                    "interleaved" => "as its even and odd characters apart".to_string(),
                    enc => format!("encoded as {enc}"),
                }
            ),
        ));
    }
    // A destination named in untrusted text matters where the value can
    // reach it: a command in a network namespace of its own cannot.
    let reachable = match role {
        Role::Command => !known.contained.network,
        Role::Url => true,
        _ => false,
    };
    if reachable {
        for hit in known.destinations.check(value) {
            out.push(
                Reason::new(
                    "taint",
                    param.clone(),
                    format!(
                        "{} first appeared in content nib did not write (a file or command output), not in your request",
                        hit.host
                    ),
                )
                .at(hit.line),
            );
        }
    }
}

fn line_of(value: &str, needle: &str) -> usize {
    value
        .find(needle)
        .map_or(1, |at| value[..at].matches('\n').count() + 1)
}

/// For a list element's field, the same element's `old`; for fs-edit's
/// own `new`, its own `old`.
pub(super) fn same_edit_old(call: &Call, item: Option<usize>) -> Option<&str> {
    let Some(item) = item else {
        return (call.decl.name == "fs-edit")
            .then(|| call.arg("old").as_str())
            .filter(|old| !old.is_empty());
    };
    let index = item.checked_sub(1)?;
    let element = call.arg("edits").as_list().get(index)?;
    element
        .iter()
        .find(|(k, _)| k == "old")
        .map(|(_, v)| v.as_str())
}

impl Guard {
    pub(super) fn copies_of_kept_secrets(&self, rel: &str, old: &str, new: &str) -> Vec<Reason> {
        let known = self.known();
        let mut secrets: Vec<String> = Vec::new();
        for secret in known
            .ledger
            .secrets()
            .map(str::to_string)
            .chain(secrets::scan(new).into_iter().map(|h| h.secret))
        {
            if old.contains(secret.as_str()) && !secrets.contains(&secret) {
                secrets.push(secret);
            }
        }
        let mut out = Vec::new();
        for secret in &secrets {
            if new.matches(secret.as_str()).count() > old.matches(secret.as_str()).count() {
                out.push(Reason::new(
                    "secret-copy",
                    "content",
                    format!(
                        "the write adds a copy of a secret already in {rel} ({})",
                        mask(secret)
                    ),
                ));
            }
        }
        // A URL a renderer or a tool may fetch, new in this write, that
        // carries a secret (as it is or encoded). In a test, an example
        // or the docs a password of no known value is a dummy
        // (`http://user:p%40ss@proxy` testing a URL parser), as other
        // tokens of a known shape are there.
        let dummies = super::learn::looks_like_fixture(rel);
        for url in urls_in(new).into_iter().filter(|u| !old.contains(u)) {
            let carries = secrets.iter().any(|s| url.contains(s.as_str()))
                || !known.ledger.check(url).is_empty()
                || secrets::scan(url)
                    .iter()
                    .any(|h| !dummies || h.live_anywhere());
            if carries {
                out.push(Reason::new(
                    "secret-url",
                    "content",
                    format!("the new URL {} carries a secret", url_host(url)),
                ));
            }
        }
        out
    }
}

/// The http(s) URLs in a text, each up to the first space, quote or
/// closing bracket.
fn urls_in(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find("http") {
        let start = at + found;
        let rest = &text[start..];
        if rest.starts_with("https://") || rest.starts_with("http://") {
            let len = rest
                .find(|c: char| {
                    c.is_whitespace() || matches!(c, '"' | '\'' | ')' | '>' | '<' | ']' | '`')
                })
                .unwrap_or(rest.len());
            out.push(&rest[..len]);
            at = start + len.max(1);
        } else {
            at = start + 4;
        }
    }
    out
}

/// The scheme and host of a URL, for a message that must not repeat its
/// query.
fn url_host(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    let end = url[after..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after + i);
    &url[..end]
}

/// Whether the ledger holds `value` as a secret from somewhere that
/// makes it one (a protected file, the environment, a credential file),
/// not only because some output showed a string of its shape (those are
/// learned under the bare rule's name: `jwt`, `github-token`).
fn known_as_secret(ledger: &SecretLedger, value: &str) -> bool {
    ledger
        .secrets()
        .position(|s| s == value)
        .and_then(|i| ledger.source(i))
        .is_some_and(|source| !shape_only(source))
}

/// A ledger source that is a bare rule's name: learned from output only
/// for its shape.
fn shape_only(source: &str) -> bool {
    source
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}
