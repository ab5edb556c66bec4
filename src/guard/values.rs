//! What a protected file or a tool's output teaches the ledger: the
//! values of env, YAML, TOML, INI and JSON files worth remembering as
//! secrets (quoted values, values before a `# comment`, docker `auth`
//! entries), and fs-read's output seen the way `cat` shows it. Kept apart
//! from `mod.rs`, which decides when to learn; this owns what a value is.

/// `text` without fs-read's line-number prefixes (`   12\t`), when most of
/// its lines have one.
pub(super) fn without_line_numbers(text: &str) -> Option<String> {
    let numbered = |l: &str| {
        l.trim_start()
            .split_once('\t')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let lines = text.lines().count();
    if lines == 0 || text.lines().filter(|l| numbered(l)).count() * 2 < lines {
        return None;
    }
    Some(
        text.lines()
            .map(|l| match l.trim_start().split_once('\t') {
                Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() => rest,
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The values of a protected file worth remembering: each assignment's
/// value in env, YAML, TOML or INI lines (quoted values with spaces kept
/// whole, a trailing `# comment` dropped), every string of a JSON
/// document, and what a docker-style `auth` (base64 of `user:password`)
/// decodes to.
pub(crate) fn protected_values(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |v: &str, quoted: bool| {
        if secret_like(v, quoted) && !out.iter().any(|o| o == v) {
            out.push(v.to_string());
        }
        // docker `auth`, basic-auth headers: base64 of `user:secret`
        if let Some(decoded) = base64_text(v)
            && let Some((_, password)) = decoded.split_once(':')
            && secret_like(password, true)
            && !out.iter().any(|o| o == password)
        {
            out.push(password.to_string());
        }
    };
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(content) {
        let mut stack = vec![&json];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::String(s) => push(s, true),
                serde_json::Value::Array(items) => stack.extend(items),
                serde_json::Value::Object(map) => stack.extend(map.values()),
                _ => {}
            }
        }
    }
    for line in content.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((_, value)) = line.split_once('=').or_else(|| line.split_once(": ")) else {
            continue;
        };
        let value = value.trim().trim_end_matches([',', ';']).trim();
        let quote = value.chars().next().filter(|c| matches!(c, '"' | '\''));
        match quote {
            Some(q) => {
                // `"a value with spaces"  # comment`
                if let Some(end) = value[1..].find(q) {
                    push(&value[1..1 + end], true);
                }
            }
            None => {
                let value = match value.find(" #") {
                    Some(at) => value[..at].trim_end(),
                    None => value,
                };
                push(value, false);
            }
        }
    }
    out
}

/// `value` base64-decoded, when it is base64 of printable text.
fn base64_text(value: &str) -> Option<String> {
    if value.len() < 12
        || !value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
    {
        return None;
    }
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for b in value.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    let text = String::from_utf8(out).ok()?;
    text.chars()
        .all(|c| c.is_ascii_graphic() || c == ' ')
        .then_some(text)
}

/// Whether a value from a protected file is worth remembering as a
/// secret: long enough, one token unless it was quoted, and not a
/// placeholder.
fn secret_like(value: &str, quoted: bool) -> bool {
    let n = value.chars().count();
    if n < 8 || (!quoted && value.contains(char::is_whitespace)) || value.contains('\n') {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if [
        "changeme",
        "change_me",
        "example",
        "placeholder",
        "your_",
        "your-",
        "xxxx",
        "<",
        "${",
        "todo",
    ]
    .iter()
    .any(|p| lower.contains(p))
    {
        return false;
    }
    entropy(value) >= 3.0
}

/// Shannon entropy in bits per character.
fn entropy(value: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in value.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}
