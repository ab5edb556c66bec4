//! What the pages are sent, made from the session's values: credential
//! masking (every string of every message goes through [`mask_json`]),
//! a unified diff as structured hunks (numbered rows the page lays out
//! unified or side by side), and a confirm as the page shows it, with the
//! guard's findings pinned to the rows they are about.

use serde_json::{Value, json};

use crate::guard::approvals::Approval;
use crate::guard::secrets::scan;
use crate::guard::{ConfirmKind, Reason};
use crate::prim::ConfirmRequest;
use crate::prim::schema::positional;

/// `text` with every credential-shaped value the guard's scan finds
/// masked: its first four characters stay (so the user can tell which key
/// it is), the rest become `•`.
pub fn mask(text: &str) -> String {
    let hits = scan(text);
    if hits.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for hit in hits {
        if hit.start < at || hit.end > text.len() {
            continue;
        }
        out.push_str(&text[at..hit.start]);
        let secret = &text[hit.start..hit.end];
        let kept: String = secret.chars().take(4).collect();
        out.push_str(&kept);
        out.push_str(&"•".repeat(secret.chars().count().saturating_sub(4)));
        at = hit.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Whether `text` holds a credential-shaped value.
pub fn has_secret(text: &str) -> bool {
    !scan(text).is_empty()
}

/// `value` with every string masked.
pub fn mask_json(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(mask(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(mask_json).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, mask_json(v))).collect())
        }
        other => other,
    }
}

/// One row of a diff: `' '`, `'-'` or `'+'`, the old and new line numbers
/// it has, its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub sign: char,
    pub old: Option<usize>,
    pub new: Option<usize>,
    pub text: String,
}

/// A hunk: its `@@` header and rows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    pub header: String,
    pub rows: Vec<Row>,
}

/// A unified diff as its file header lines (`---`, `+++`) and hunks.
pub fn hunks(diff: &str) -> (Vec<String>, Vec<Hunk>) {
    let mut files = Vec::new();
    let mut out: Vec<Hunk> = Vec::new();
    let (mut old, mut new) = (0usize, 0usize);
    for line in diff.lines() {
        if line.starts_with("@@") {
            let num = |sign: char| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(sign))
                    .and_then(|w| w.split(',').next())
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(1)
            };
            old = num('-');
            new = num('+');
            out.push(Hunk {
                header: line.to_string(),
                rows: Vec::new(),
            });
            continue;
        }
        if out.is_empty() {
            if line.starts_with("---") || line.starts_with("+++") {
                files.push(line.to_string());
            }
            continue;
        }
        let Some(hunk) = out.last_mut() else {
            continue;
        };
        let row = if let Some(t) = line.strip_prefix('+') {
            new += 1;
            Row {
                sign: '+',
                old: None,
                new: Some(new - 1),
                text: t.to_string(),
            }
        } else if let Some(t) = line.strip_prefix('-') {
            old += 1;
            Row {
                sign: '-',
                old: Some(old - 1),
                new: None,
                text: t.to_string(),
            }
        } else if line.starts_with('\\') {
            // "\ No newline at end of file"
            Row {
                sign: '\\',
                old: None,
                new: None,
                text: line.to_string(),
            }
        } else {
            let t = line.strip_prefix(' ').unwrap_or(line);
            old += 1;
            new += 1;
            Row {
                sign: ' ',
                old: Some(old - 1),
                new: Some(new - 1),
                text: t.to_string(),
            }
        };
        hunk.rows.push(row);
    }
    (files, out)
}

/// Each Security reason pinned to the row it is about, as `(hunk, row,
/// note)`, and the reasons no row holds: a line the reason names (fs-write's
/// `content` line, or "line N" in its message) is the new file's line;
/// otherwise a reason about a value goes to the first added row holding a
/// credential-shaped value. A protected path is about the whole file.
pub fn pin(
    kind: ConfirmKind,
    reasons: &[Reason],
    hunks: &[Hunk],
) -> (Vec<(usize, usize, String)>, Vec<String>) {
    let mut pinned = Vec::new();
    let mut loose = Vec::new();
    for r in reasons {
        let text = format!("{}: {}", r.rule, r.message);
        if kind != ConfirmKind::Security {
            loose.push(text);
            continue;
        }
        let named = r.line.filter(|_| r.param == "content").or_else(|| {
            r.message
                .split("line ")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse::<usize>().ok())
        });
        let found = hunks.iter().enumerate().find_map(|(h, hunk)| {
            hunk.rows
                .iter()
                .position(|row| {
                    row.sign == '+'
                        && match named {
                            Some(n) => row.new == Some(n),
                            None => has_secret(&row.text),
                        }
                })
                .map(|i| (h, i))
        });
        match found {
            Some((h, i)) if r.rule != "protected-path" || named.is_some() => {
                pinned.push((h, i, text))
            }
            _ => loose.push(text),
        }
    }
    (pinned, loose)
}

/// The hunks as the page reads them: `[{"h": header, "r": [[sign, old,
/// new, text, notes?], ...]}]`.
pub fn hunks_json(hunks: &[Hunk], pinned: &[(usize, usize, String)]) -> Value {
    Value::Array(
        hunks
            .iter()
            .enumerate()
            .map(|(h, hunk)| {
                let rows: Vec<Value> = hunk
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(i, row)| {
                        let notes: Vec<&str> = pinned
                            .iter()
                            .filter(|(ph, pi, _)| *ph == h && *pi == i)
                            .map(|(_, _, n)| n.as_str())
                            .collect();
                        let mut r = json!([row.sign.to_string(), row.old, row.new, row.text]);
                        if !notes.is_empty()
                            && let Some(a) = r.as_array_mut()
                        {
                            a.push(json!(notes));
                        }
                        r
                    })
                    .collect();
                json!({"h": hunk.header, "r": rows})
            })
            .collect(),
    )
}

pub fn kind_name(kind: ConfirmKind) -> &'static str {
    match kind {
        ConfirmKind::Write => "write",
        ConfirmKind::Security => "security",
    }
}

/// A confirm as the pages show it (masked when pushed), with the standing
/// approval "always" would save (none for a Security confirm: only a
/// person answers those) and whether its text may be edited (not when
/// showing it would show a credential).
pub fn confirm_view(req: &ConfirmRequest) -> (Value, Option<Approval>, bool) {
    let (files, hunks) = req.diff.map(hunks).unwrap_or_default();
    let (pinned, loose) = pin(req.kind, req.reasons, &hunks);
    let suggestion = match req.kind {
        ConfirmKind::Security => None,
        ConfirmKind::Write => Approval::suggest(req.call, req.path.unwrap_or("")),
    };
    let editable = req.proposed.is_some_and(|p| !has_secret(p));
    let reasons: Vec<Value> = req
        .reasons
        .iter()
        .map(|r| json!({"rule": r.rule, "param": r.param, "message": r.message, "line": r.line}))
        .collect();
    let view = json!({
        "kind": kind_name(req.kind),
        "tool": req.call.decl.name,
        "form": positional(req.call),
        "path": req.path,
        "reasons": reasons,
        "loose": loose,
        "files": files,
        "hunks": hunks_json(&hunks, &pinned),
        "rows": hunks.iter().map(|h| h.rows.len()).sum::<usize>(),
        "suggestion": suggestion.as_ref().map(Approval::scope),
        "editable": editable,
        "proposed": if editable { req.proposed } else { None },
        "again": req.again,
    });
    (view, suggestion, editable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_becomes_numbered_hunks() {
        let diff = "--- a/calc.py\n+++ b/calc.py\n@@ -2,3 +2,3 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n \n";
        let (files, hunks) = hunks(diff);
        assert_eq!(files, ["--- a/calc.py", "+++ b/calc.py"]);
        assert_eq!(hunks.len(), 1);
        let rows = &hunks[0].rows;
        assert_eq!(
            rows[0],
            Row {
                sign: ' ',
                old: Some(2),
                new: Some(2),
                text: "def add(a, b):".into()
            }
        );
        assert_eq!(
            rows[1],
            Row {
                sign: '-',
                old: Some(3),
                new: None,
                text: "    return a - b".into()
            }
        );
        assert_eq!(
            rows[2],
            Row {
                sign: '+',
                old: None,
                new: Some(3),
                text: "    return a + b".into()
            }
        );
        assert_eq!(rows[3].old, Some(4));
    }

    #[test]
    fn credentials_are_masked_in_every_string() {
        let key = crate::guard::testkit::fake("AK", 7).unwrap();
        let masked = mask_json(json!({"a": [format!("id={key}")], "b": 1}));
        let text = masked.to_string();
        assert!(!text.contains(&key), "{text}");
        assert!(text.contains(&key[..4]), "{text}");
        assert!(text.contains('•'));
        assert_eq!(mask("nothing here"), "nothing here");
    }
}
