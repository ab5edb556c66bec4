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
    let mut push = |key: &str, v: &str, quoted: bool| {
        // `scheme://user:password@host`: the password is the secret, and
        // a local default (`postgres:postgres`) is none.
        if let Some(password) = url_password(v) {
            if secret_like(key, password, true) && !out.iter().any(|o| o == password) {
                out.push(password.to_string());
            }
            return;
        }
        // Any other URL is an address (`http://localhost:3000`) unless a
        // part of it is a token (a webhook's path, a key in its query).
        if v.contains("://") {
            let token = v
                .split(['/', '?', '&', '=', '#'])
                .any(|part| secret_like("url", part, false));
            if token && !out.iter().any(|o| o == v) {
                out.push(v.to_string());
            }
            return;
        }
        if secret_like(key, v, quoted) && !out.iter().any(|o| o == v) {
            out.push(v.to_string());
        }
        // docker `auth`, basic-auth headers: base64 of `user:secret`
        if let Some(decoded) = base64_text(v)
            && let Some((_, password)) = decoded.split_once(':')
            && secret_like("password", password, true)
            && !out.iter().any(|o| o == password)
        {
            out.push(password.to_string());
        }
    };
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(content) {
        let mut stack = vec![("", &json)];
        while let Some((key, v)) = stack.pop() {
            match v {
                serde_json::Value::String(s) => push(key, s, true),
                serde_json::Value::Array(items) => stack.extend(items.iter().map(|i| (key, i))),
                serde_json::Value::Object(map) => {
                    stack.extend(map.iter().map(|(k, v)| (k.as_str(), v)));
                }
                _ => {}
            }
        }
    }
    for line in content.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        // .netrc: `machine h login u password p`, on one line or several.
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            if matches!(pair[0], "password" | "passwd" | "account") {
                push("password", pair[1], false);
            }
        }
        // .pgpass: `host:port:database:user:password`.
        if !line.contains('=') && !line.contains(' ') && line.matches(':').count() == 4 {
            let password = line.rsplit(':').next().unwrap_or_default();
            push("password", password, false);
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=').or_else(|| line.split_once(": ")) else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']);
        let value = value.trim().trim_end_matches([',', ';']).trim();
        let quote = value.chars().next().filter(|c| matches!(c, '"' | '\''));
        match quote {
            Some(q) => {
                // `"a value with spaces"  # comment`
                if let Some(end) = value[1..].find(q) {
                    push(key, &value[1..1 + end], true);
                }
            }
            None => {
                let value = match value.find(" #") {
                    Some(at) => value[..at].trim_end(),
                    None => value,
                };
                push(key, value, false);
            }
        }
    }
    out
}

/// The password of a `scheme://user:password@host` value, unless it is a
/// local default: the user's own name, or a word every tutorial uses.
/// Whether a line of a secret file names a key: `KEY=value`, `export
/// KEY=value`, `key: value`, `"key": value`, `[section]`.
pub(super) fn names_a_key(line: &str) -> bool {
    let line = line.trim_start();
    let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
    if line.starts_with('[') && line.trim_end().ends_with(']') {
        return true;
    }
    let line = line.strip_prefix("- ").unwrap_or(line);
    let quote = line.chars().next().filter(|c| *c == '"' || *c == '\'');
    let rest = match quote {
        Some(q) => line[1..].split_once(q),
        None => line.find(['=', ':']).map(|at| (&line[..at], &line[at..])),
    };
    let Some((key, rest)) = rest else {
        return false;
    };
    let key = key.trim_end();
    // A long run of letters and digits with no separator is a value (a
    // PEM body's line ends in `=` padding), not a key.
    let worded = key.len() <= 16 || key.contains(['_', '-', '.']);
    !key.is_empty()
        && key.len() <= 64
        && worded
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && rest.trim_start().starts_with(['=', ':'])
}

pub(super) fn url_password(value: &str) -> Option<&str> {
    let (_, rest) = value.split_once("://")?;
    let userinfo = rest.split(['/', '?', '#']).next()?.rsplit_once('@')?.0;
    let (user, password) = userinfo.split_once(':')?;
    const DEFAULTS: [&str; 14] = [
        "postgres", "password", "secret", "root", "admin", "mysql", "guest", "test", "dev", "pass",
        "user", "redis", "mongo", "docker",
    ];
    let local = password == user || DEFAULTS.iter().any(|d| password.eq_ignore_ascii_case(d));
    Some(if local { "" } else { password })
}

/// Whether a key names a credential: what its value is then kept as
/// whatever it looks like.
fn credential_key(key: &str) -> bool {
    let k = key.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASS",
        "PWD",
        "CREDENTIAL",
        "AUTH",
        "PRIVATE",
        "DSN",
        "SALT",
        "SIGNATURE",
        "COOKIE",
        "SESSION",
        "BEARER",
        "CERT",
    ]
    .iter()
    .any(|w| k.contains(w))
        && !k.contains("KEYBOARD")
        && !k.ends_with("_PATH")
        && !k.ends_with("_FILE")
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
    let text = String::from_utf8(super::decode::base64(value.as_bytes())).ok()?;
    text.chars()
        .all(|c| c.is_ascii_graphic() || c == ' ')
        .then_some(text)
}

/// Whether a value from a protected file is worth remembering as a
/// secret: long enough, one token unless it was quoted, and not a
/// placeholder; then, under a key that names a credential (`API_KEY`,
/// `DB_PASSWORD`), anything not repetitive, and under any other key
/// (`NODE_ENV`, `AWS_REGION`, `REDIS_URL`) only what looks like a token:
/// three kinds of characters, or a long random-looking run of two.
/// Ordinary settings stay out of the ledger, or every later mention of
/// "production" or "eu-central-1" would be a leak.
pub(super) fn secret_like(key: &str, value: &str, quoted: bool) -> bool {
    let n = value.chars().count();
    if n < 8 || (!quoted && value.contains(char::is_whitespace)) || value.contains('\n') {
        return false;
    }
    let classes = [
        value.bytes().any(|b| b.is_ascii_uppercase()),
        value.bytes().any(|b| b.is_ascii_lowercase()),
        value.bytes().any(|b| b.is_ascii_digit()),
        value
            .bytes()
            .any(|b| b.is_ascii_punctuation() && !b"-_./:@".contains(&b)),
    ]
    .iter()
    .filter(|&&c| c)
    .count();
    let lower = value.to_ascii_lowercase();
    // A placeholder (`your_api_key_here`, `<token>`, `changeme`), unless
    // the rest of it is a token all the same (`examplecorp-Prod-8f3k2LqZ`).
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
        && (n < 16 || classes < 3 || value.contains("${") || value.contains('<'))
    {
        return false;
    }
    // A default spelled by its own key (`POSTGRES_PASSWORD=postgres`,
    // `REDIS_PASSWORD=redispassword`): every mention of the variable
    // would read as the secret.
    let spelled = |text: &str| -> String {
        text.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let own = spelled(value);
    if !own.is_empty() && spelled(key).contains(&own) {
        return false;
    }
    if credential_key(key) || key.is_empty() && quoted {
        return entropy(value) >= 2.5;
    }
    if value.contains(char::is_whitespace) || value.contains("://") {
        return false;
    }
    let e = entropy(value);
    (n >= 10 && classes >= 3 && e >= 3.0) || (n >= 20 && classes >= 2 && e >= 3.5)
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

/// What stands for a line of a secret store a reader does not see.
const HIDDEN_LINE: &str = "«hidden: not a KEY=value line of a secret file»";

/// Whether a line of a secret store is shown: blank, punctuation only, or
/// naming a key (its value is redacted as learned).
fn shown_store_line(body: &str) -> bool {
    body.trim().is_empty() || !body.chars().any(char::is_alphanumeric) || names_a_key(body)
}

impl super::Guard {
    /// Whether the session found `rel` holding a secret though its name
    /// does not say so (a config file by its content at the start, a copy
    /// a command made): protected like a store by name, for writes
    /// (a Security confirm), searches and reads.
    pub fn is_found_store(&self, rel: &str) -> bool {
        self.known().tainted.contains(rel.trim_start_matches("./"))
    }

    /// The workspace files the session learned a secret from (a module
    /// holding a token: not a store, so not masked, but a commit of it
    /// publishes the token). Sources name a file, or a file and the rule
    /// that found the secret in it (`src/settings.py (github-token)`).
    pub fn learned_files(&self) -> std::collections::BTreeSet<String> {
        let known = self.known();
        (0..known.ledger.len())
            .filter_map(|i| known.ledger.source(i))
            .map(|s| s.split_once(" (").map_or(s, |(file, _)| file).to_string())
            .collect()
    }

    /// Whether an fs-edit `call` of `rel`, a store found by content, only
    /// changes lines that hold no secret the session knows: each edit's
    /// old text found in the file, on lines without one. Then it is a
    /// plain Write (the port beside a key in `config/app.yml`). Anything
    /// else, an old text not found included, asks a person first, so
    /// "not found" and "touches the secret" read the same and the edit
    /// tells nothing of what the file holds.
    pub(super) fn plain_edit_of_found_store(
        &self,
        ws: &crate::files::Workspace,
        call: &crate::call::Call,
        rel: &str,
    ) -> bool {
        if call.decl.name != "fs-edit" {
            return false;
        }
        let Some(text) = super::disk::current_text(ws, rel) else {
            return false;
        };
        let mut olds: Vec<String> = Vec::new();
        let old = call.arg("old").as_str();
        if !old.is_empty() {
            olds.push(old.to_string());
        }
        for edit in call.arg("edits").as_list() {
            olds.extend(
                edit.iter()
                    .filter(|(k, _)| k == "old")
                    .map(|(_, v)| v.as_str().to_string()),
            );
        }
        if olds.is_empty() {
            return false;
        }
        let known = self.known();
        olds.iter().all(|old| {
            let Some(at) = text.find(old.as_str()) else {
                return false;
            };
            // The whole lines the old text lies on.
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[at + old.len()..]
                .find('\n')
                .map_or(text.len(), |i| at + old.len() + i);
            known.ledger.check(&text[start..end]).is_empty()
        })
    }

    /// Whether an fs-write of `rel`, a `.pem` by name, writes only public
    /// material (a test's certificate) over none or over public material:
    /// no secret is written or replaced, so it is a plain Write.
    pub(super) fn public_pem_write(
        &self,
        ws: &crate::files::Workspace,
        call: &crate::call::Call,
        rel: &str,
    ) -> bool {
        if call.decl.name != "fs-write" || !rel.to_ascii_lowercase().ends_with(".pem") {
            return false;
        }
        let content = call.arg("content").as_str();
        let existing = ws.root().join(rel).symlink_metadata().is_ok();
        super::paths::public_pem(content)
            && (!existing
                || super::disk::current_text(ws, rel).is_some_and(|t| super::paths::public_pem(&t)))
    }

    /// What fs-read shows of a secret store's text, with redaction on:
    /// default-deny, as the values it learns cannot be complete. Lines
    /// that name a key (`KEY=value`, `key: value`, `"key": value`) stay,
    /// their values redacted as learned; blank and punctuation-only lines
    /// stay; every other line (a multi-line value's continuation, a PEM
    /// body, a comment holding a rotated key, a bare value) is hidden,
    /// line numbers kept.
    pub fn shown_store_text(&self, rel: &str, text: &str) -> Option<String> {
        if !self.policy.redact
            || !(self.policy.paths.is_secret_store(rel) || self.is_found_store(rel))
            || super::paths::public_pem(text)
        {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let body = line.trim_end_matches(['\n', '\r']);
            let ending = &line[body.len()..];
            if shown_store_line(body) {
                out.push_str(line);
            } else {
                out.push_str(HIDDEN_LINE);
                out.push_str(ending);
            }
        }
        Some(out)
    }

    /// A unified diff (the git-diff tool's) as a reader may see it: the
    /// lines of a secret store's hunks under the same default-deny view
    /// as `shown_store_text`, with their `+`, `-` or ` ` kept, so a
    /// tracked `.env` edited locally shows which keys changed, not a
    /// commented key or a PEM body. Borrowed when no store is in it.
    pub fn shown_store_diff<'a>(&self, diff: &'a str) -> std::borrow::Cow<'a, str> {
        if !self.policy.redact {
            return std::borrow::Cow::Borrowed(diff);
        }
        let mut out = String::new();
        let mut store = false;
        let mut changed = false;
        for line in diff.split_inclusive('\n') {
            if let Some(header) = line.strip_prefix("diff --git ") {
                // `a/PATH b/PATH`: the new side's path.
                let path = header
                    .trim_end()
                    .rsplit_once(" b/")
                    .map_or("", |(_, b)| b.trim_matches('"'));
                store = (self.policy.paths.is_secret_store(path) || self.is_found_store(path))
                    && !path.to_ascii_lowercase().ends_with(".pub");
                out.push_str(line);
                continue;
            }
            let body = line.trim_end_matches(['\n', '\r']);
            let hunk_line = matches!(body.as_bytes().first(), Some(b'+' | b'-' | b' '))
                && !body.starts_with("+++ ")
                && !body.starts_with("--- ");
            if store && hunk_line && !shown_store_line(&body[1..]) {
                out.push_str(&body[..1]);
                out.push_str(HIDDEN_LINE);
                out.push_str(&line[body.len()..]);
                changed = true;
            } else {
                out.push_str(line);
            }
        }
        if changed {
            std::borrow::Cow::Owned(out)
        } else {
            std::borrow::Cow::Borrowed(diff)
        }
    }
}
