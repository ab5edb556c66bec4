//! What an fs-edit call is to the edit engine: its edits, the shape it
//! arrived in, and the checks every edit passes before any text is looked
//! at (`check_edit`: empty old, old equal to new), plus the "did you mean"
//! that names the field a misspelt one meant.
//!
//! Parsing a call's JSON is not here: every caller (a model, a strategy,
//! `nib apply`) goes through the one parser derived from the primitive's
//! declaration (`prim::parse`, `prim::fs_edit_call`), which calls
//! `check_edit` for each edit.

use serde_json::Value;

use super::error::{EditError, ErrorKind};

/// One old/new replacement, as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old: String,
    pub new: String,
    pub replace_all: bool,
}

impl Edit {
    pub fn new(old: impl Into<String>, new: impl Into<String>) -> Edit {
        Edit {
            old: old.into(),
            new: new.into(),
            replace_all: false,
        }
    }
}

/// Which of the accepted shapes a call arrived in (kept for the event log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallForm {
    /// `{"path", "old", "new", "replace_all"}`
    Single,
    /// `{"path", "edits": [...]}`
    List,
    /// `{"path", "edits": "[...]"}`: the list sent as a JSON string.
    ListAsString,
}

/// A validated fs-edit call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditCall {
    pub path: String,
    pub edits: Vec<Edit>,
    pub form: CallForm,
}

/// Names other edit tools use, mapped to ours: models trained on those tools
/// send them, and a plain "unknown field" would leave them guessing.
const ALIASES: &[(&str, &str)] = &[
    ("old_string", "old"),
    ("new_string", "new"),
    ("oldText", "old"),
    ("newText", "new"),
    ("old_text", "old"),
    ("new_text", "new"),
    ("search", "old"),
    ("replace", "new"),
    ("file_path", "path"),
    ("filePath", "path"),
    ("file", "path"),
    ("replaceAll", "replace_all"),
];

/// The checks every edit passes before any text is looked at.
pub fn check_edit(edit: &Edit, n: usize, total: usize) -> Result<(), EditError> {
    let err = |kind: ErrorKind, msg: String| {
        let mut e = EditError::new(kind, msg).at(n, total);
        e.validation = true;
        e
    };
    if edit.old.is_empty() {
        return Err(err(
            ErrorKind::EmptyOld,
            format!(
                "edit {n}: old is empty; fs-edit replaces existing text — \
                 to create a file or replace all of it, use fs-write"
            ),
        ));
    }
    if normalize_eol(&edit.old) == normalize_eol(&edit.new) {
        return Err(err(
            ErrorKind::NoChange,
            format!("edit {n} changes nothing: old and new are the same text"),
        ));
    }
    Ok(())
}

/// The known name a misspelt or foreign field most likely meant.
pub fn did_you_mean<'a>(field: &str, known: &[&'a str]) -> Option<&'a str> {
    if let Some((_, ours)) = ALIASES.iter().find(|(alias, _)| *alias == field) {
        return known.iter().find(|k| *k == ours).copied();
    }
    let lower = field.to_lowercase();
    known
        .iter()
        .map(|k| (levenshtein(&lower, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// A JSON value described for an error message: "the number 3".
pub fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() > 40 => "a string".into(),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn normalize_eol(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\r') {
        s.replace("\r\n", "\n").into()
    } else {
        s.into()
    }
}
