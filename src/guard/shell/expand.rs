//! How a word reads once the shell has expanded it: variables the line
//! sets (`F=.env`, `for f in …`, `read f`), braces, `cd` moving where
//! relative operands point, and glob matching. Kept apart from the rules
//! because every rule that judges an operand asks it the same way.

use super::Context;
use super::lex::{Segment, is_assignment};
// Re-exported where the rules have always found it.
pub(super) use super::lex::variable_refs;
use super::programs::basename;

/// Expansions of one word analyzed at most (braces times variable values).
pub(super) const MAX_EXPANSIONS: usize = 32;

/// Whether the reference at `at` is `${NAME<operator>…}` (`:-`, `:+`,
/// `%`, `/`…): its value is text the word itself spells, whatever NAME
/// holds, so no variable is safe there.
pub(super) fn modified_at(word: &str, at: usize) -> bool {
    let rest = &word[at..];
    let Some(inner) = rest.strip_prefix("${") else {
        return false;
    };
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    !inner[name_len..].starts_with('}')
}

/// `word` with `$name` / `${name}` replaced by `value`.
pub(super) fn replace_variable(word: &str, name: &str, value: &str) -> String {
    word.replace(&format!("${{{name}}}"), value)
        .replace(&format!("${name}"), value)
}

/// Variables that name places outside the workspace or hold no path: a
/// word using them is judged as written.
pub(super) fn is_outside_variable(name: &str) -> bool {
    matches!(
        name,
        "HOME"
            | "PWD"
            | "OLDPWD"
            | "USER"
            | "LOGNAME"
            | "PATH"
            | "TMPDIR"
            | "TMP"
            | "TEMP"
            | "SHELL"
            | "LANG"
            | "TERM"
            | "HOSTNAME"
            | "IFS"
            | "RANDOM"
            | "CARGO_HOME"
            | "RUSTUP_HOME"
            | "GOPATH"
            | "VIRTUAL_ENV"
            | "CONDA_PREFIX"
            | "PYTHONPATH"
    ) || name.starts_with("XDG_")
}

/// Bash brace expansion, `a{b,c}d` → `abd`, `acd` (nested braces are
/// expanded one level at a time); a word without it is returned as is.
pub(super) fn expand_braces(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![word.to_string()];
    while let Some(w) = todo.pop() {
        if out.len() + todo.len() >= MAX_EXPANSIONS {
            out.push(w);
            continue;
        }
        match brace_group(&w) {
            Some((open, close)) => {
                let inner = &w[open + 1..close];
                for alt in split_top_commas(inner) {
                    todo.push(format!("{}{alt}{}", &w[..open], &w[close + 1..]));
                }
            }
            None => out.push(w),
        }
    }
    out.reverse();
    out
}

/// The first `{…}` holding a top-level comma (not `${…}`).
pub(super) fn brace_group(w: &str) -> Option<(usize, usize)> {
    let bytes = w.as_bytes();
    for open in 0..bytes.len() {
        if bytes[open] != b'{' || (open > 0 && bytes[open - 1] == b'$') {
            continue;
        }
        let mut depth = 0;
        let mut comma = false;
        for (k, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if comma {
                            return Some((open, k));
                        }
                        break;
                    }
                }
                b',' if depth == 1 => comma = true,
                _ => {}
            }
        }
    }
    None
}

pub(super) fn split_top_commas(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
}

/// Whether a name matches one glob component as the shell matches it.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    glob_match(pattern.as_bytes(), name.as_bytes(), true)
}

/// Shell glob matching: `*`, `?`, `[set]` (`[!set]`, ranges); wildcards do
/// not match `/`, nor a leading `.` of a name.
pub(super) fn glob_match(pattern: &[u8], name: &[u8], at_start: bool) -> bool {
    let hidden = at_start && name.first() == Some(&b'.');
    match pattern.first() {
        None => name.is_empty(),
        Some(b'*') => {
            if hidden {
                return false;
            }
            (0..=name.len())
                .take_while(|&i| i == 0 || name[i - 1] != b'/')
                .any(|i| glob_match(&pattern[1..], &name[i..], false))
        }
        Some(b'?') => {
            !hidden
                && name.first().is_some_and(|&c| c != b'/')
                && glob_match(&pattern[1..], &name[1..], false)
        }
        Some(b'[') => {
            let Some(close) = pattern[1..].iter().position(|&c| c == b']').map(|i| i + 1) else {
                return name.first() == Some(&b'[') && glob_match(&pattern[1..], &name[1..], false);
            };
            let Some(&c) = name.first() else {
                return false;
            };
            if hidden || c == b'/' {
                return false;
            }
            let mut set = &pattern[1..close];
            let negate = matches!(set.first(), Some(b'!' | b'^'));
            if negate {
                set = &set[1..];
            }
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= (set[i]..=set[i + 2]).contains(&c);
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != negate && glob_match(&pattern[close + 1..], &name[1..], false)
        }
        Some(&p) => name.first() == Some(&p) && glob_match(&pattern[1..], &name[1..], p == b'/'),
    }
}

impl Context<'_> {
    /// Follow `cd DIR`: later relative operands are judged from there.
    pub(super) fn change_directory(&mut self, args: &[&str]) {
        let Some(dir) = args.iter().find(|a| !a.starts_with('-') || **a == "-") else {
            self.cwd = "~".to_string();
            return;
        };
        let forms = self.expansions(dir);
        let dir = match forms.as_slice() {
            [one] => one.clone(),
            _ => dir.to_string(),
        };
        self.cwd = if dir == "-" {
            "$OLDPWD".to_string()
        } else {
            self.at_cwd(&dir)
        };
    }

    /// A relative path as the shell sees it after the line's `cd`s.
    pub(super) fn at_cwd(&self, path: &str) -> String {
        if self.cwd.is_empty() || path.starts_with(['/', '~', '$']) {
            return path.to_string();
        }
        format!("{}/{path}", self.cwd.trim_end_matches('/'))
    }

    /// Remember what the variables this simple command sets may hold.
    pub(super) fn assignments(&mut self, words: &[&str], program: Option<usize>) {
        let end = program.unwrap_or(words.len());
        for w in &words[..end] {
            self.assign(w);
        }
        let Some(at) = program else {
            return;
        };
        let args = &words[at + 1..];
        match basename(words[at]) {
            "export" | "declare" | "local" | "readonly" | "typeset" => {
                for w in args {
                    self.assign(w);
                }
            }
            "for" if args.get(1) == Some(&"in") => {
                let values = args[2..].iter().map(|v| v.to_string()).collect();
                self.vars.insert(args[0].to_string(), values);
            }
            "read" | "mapfile" | "readarray" | "getopts" => {
                for w in args.iter().filter(|w| !w.starts_with('-')) {
                    self.vars.insert(w.to_string(), Vec::new());
                }
            }
            _ => {}
        }
    }

    /// `NAME=value`: NAME holds that one value from here on.
    fn assign(&mut self, word: &str) {
        if let Some((name, value)) = word.split_once('=')
            && is_assignment(word)
        {
            self.vars.insert(name.to_string(), vec![value.to_string()]);
        }
    }

    /// Remember which variables each word of these simple commands names
    /// only inside single quotes or escaped (`sed -n '$p'`): the shell
    /// expands none of them. Keyed by the word's text, so two words that
    /// read the same keep only what both take literally.
    pub(super) fn note_literal_variables(&mut self, segments: &[Segment]) {
        let words = segments.iter().flat_map(|s| {
            s.words
                .iter()
                .chain(s.redirects.iter().filter_map(|r| r.target.as_ref()))
        });
        for w in words {
            let literal: Vec<String> = w
                .literal_variables()
                .into_iter()
                .map(str::to_string)
                .collect();
            match self.literal_vars.get_mut(&w.text) {
                Some(known) => known.retain(|n| literal.contains(n)),
                None => {
                    self.literal_vars.insert(w.text.clone(), literal);
                }
            }
        }
    }

    /// `$NAME` references in `form` (a form of `word`) that the shell
    /// expands: those of variables the word takes only literally are left
    /// out. A word the line never spelled (one a rule made up) keeps all.
    pub(super) fn live_refs<'f>(&self, word: &str, form: &'f str) -> Vec<(&'f str, usize)> {
        let literal = self.literal_vars.get(word);
        variable_refs(form)
            .into_iter()
            .filter(|(name, _)| literal.is_none_or(|l| !l.iter().any(|n| n == name)))
            .collect()
    }

    /// The words `word` can become: braces expanded, variables the line
    /// set replaced by their values, `$PWD` by `.`.
    pub(super) fn expansions(&self, word: &str) -> Vec<String> {
        let mut out = Vec::new();
        for w in expand_braces(word) {
            let mut forms = vec![w];
            for (name, _) in self.live_refs(word, &forms[0].clone()) {
                let values: Vec<String> = match (name, self.vars.get(name)) {
                    (_, Some(values)) if !values.is_empty() => values.clone(),
                    ("PWD", None) => vec![".".to_string()],
                    _ => continue,
                };
                let mut next = Vec::new();
                for f in &forms {
                    for v in &values {
                        next.push(replace_variable(f, name, v));
                    }
                }
                next.truncate(MAX_EXPANSIONS);
                forms = next;
            }
            out.extend(forms);
            if out.len() >= MAX_EXPANSIONS {
                break;
            }
        }
        out.truncate(MAX_EXPANSIONS);
        out
    }
}
