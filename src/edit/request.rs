//! Turning an fs-edit call (JSON) into a validated list of edits.
//!
//! Owns the two JSON forms, the exactly-one rule, per-edit validation with
//! errors that name the edit (1-based) and the field, "did you mean" for
//! misspelt fields, and the accepted quirk of `edits` sent as a JSON string.
//! Nothing here looks at a file: every check runs before anything is read.

use serde_json::{Map, Value};

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

const TOP_FIELDS: &[&str] = &["path", "old", "new", "replace_all", "edits"];
const EDIT_FIELDS: &[&str] = &["old", "new", "replace_all"];

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

/// Parse a call from its JSON text, refusing keys given twice (serde_json
/// would silently keep the last one).
pub fn parse_call_text(text: &str) -> Result<EditCall, EditError> {
    if let Some(dup) = super::json::first_duplicate_key(text) {
        let prefix = match dup.edit {
            Some(i) => format!("edit {}: ", i + 1),
            None => String::new(),
        };
        return Err(EditError::invalid(format!(
            "{prefix}`{}` is given twice; send each field once",
            dup.key
        )));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        EditError::invalid(format!(
            "the call is not valid JSON ({e}); send one JSON object"
        ))
    })?;
    parse_call(&value)
}

/// Parse and validate a call already decoded to JSON.
pub fn parse_call(value: &Value) -> Result<EditCall, EditError> {
    let Value::Object(obj) = value else {
        return Err(EditError::invalid(format!(
            "expected a JSON object {{\"path\": ..., \"old\": ..., \"new\": ...}}, got {}",
            kind_of(value)
        )));
    };
    check_fields(obj, TOP_FIELDS, None)?;
    let path = match obj.get("path") {
        Some(Value::String(p)) if !p.trim().is_empty() => p.clone(),
        Some(Value::String(_)) | None => {
            return Err(EditError::invalid(
                "`path` is missing: give the file to edit, relative to the workspace root".into(),
            ));
        }
        Some(other) => {
            return Err(EditError::invalid(format!(
                "`path` must be a string, got {}",
                kind_of(other)
            )));
        }
    };
    let single = obj.contains_key("old") || obj.contains_key("new");
    let has_list = obj.contains_key("edits");
    if has_list && (single || obj.contains_key("replace_all")) {
        return Err(EditError::invalid(
            "give either old and new (with replace_all) or edits, not both; \
             replace_all goes inside each edit"
                .into(),
        ));
    }
    let (edits, form) = if has_list {
        parse_list(&obj["edits"])?
    } else if single {
        (vec![parse_edit(obj, 1, 1, None)?], CallForm::Single)
    } else {
        return Err(EditError::invalid(
            "give either old and new (with replace_all) or edits; neither was sent".into(),
        ));
    };
    Ok(EditCall { path, edits, form })
}

fn parse_list(value: &Value) -> Result<(Vec<Edit>, CallForm), EditError> {
    let (items, form) = match value {
        Value::Array(items) => (items.clone(), CallForm::List),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(items)) if items.iter().all(Value::is_object) => {
                (items, CallForm::ListAsString)
            }
            _ => {
                return Err(EditError::invalid(
                    "`edits` must be a list of {\"old\", \"new\"} objects; \
                     it was a string that is not such a list in JSON"
                        .into(),
                ));
            }
        },
        other => {
            return Err(EditError::invalid(format!(
                "`edits` must be a list of {{\"old\", \"new\"}} objects, got {}",
                kind_of(other)
            )));
        }
    };
    if items.is_empty() {
        return Err(EditError::invalid(
            "`edits` is empty: give at least one {\"old\", \"new\"} object".into(),
        ));
    }
    let total = items.len();
    let mut edits = Vec::with_capacity(total);
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let Value::Object(obj) = item else {
            return Err(EditError::invalid(format!(
                "edit {n}: expected an object {{\"old\": ..., \"new\": ...}}, got {}",
                kind_of(item)
            )));
        };
        check_fields(obj, EDIT_FIELDS, Some(n))?;
        edits.push(parse_edit(obj, n, total, Some(n))?);
    }
    Ok((edits, form))
}

fn parse_edit(
    obj: &Map<String, Value>,
    n: usize,
    total: usize,
    label: Option<usize>,
) -> Result<Edit, EditError> {
    let at = |msg: String| match label {
        Some(n) => EditError::invalid(format!("edit {n}: {msg}")),
        None => EditError::invalid(msg),
    };
    let text_field = |name: &str| -> Result<String, EditError> {
        match obj.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            None => Err(at(format!(
                "`{name}` is missing; every edit needs both old and new"
            ))),
            Some(other) => Err(at(format!(
                "`{name}` must be a string, got {}",
                kind_of(other)
            ))),
        }
    };
    let old = text_field("old")?;
    let new = text_field("new")?;
    let replace_all = match obj.get("replace_all") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(at(format!(
                "`replace_all` must be true or false, got {}",
                kind_of(other)
            )));
        }
    };
    let edit = Edit {
        old,
        new,
        replace_all,
    };
    check_edit(&edit, n, total)?;
    Ok(edit)
}

/// The checks every edit passes before any text is looked at.
pub(crate) fn check_edit(edit: &Edit, n: usize, total: usize) -> Result<(), EditError> {
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

fn check_fields(
    obj: &Map<String, Value>,
    known: &[&str],
    edit: Option<usize>,
) -> Result<(), EditError> {
    for key in obj.keys() {
        if known.contains(&key.as_str()) {
            continue;
        }
        let prefix = edit.map(|n| format!("edit {n}: ")).unwrap_or_default();
        let hint = did_you_mean(key, known)
            .map(|k| format!("; did you mean `{k}`?"))
            .unwrap_or_else(|| {
                let names: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                format!("; the fields are {}", names.join(", "))
            });
        return Err(EditError::invalid(format!(
            "{prefix}unknown field `{key}`{hint}"
        )));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        parse_call(&v).unwrap_err().to_string()
    }

    #[test]
    fn single_form() {
        let call = parse_call(&json!({"path": "a.rs", "old": "x", "new": "y"})).unwrap();
        assert_eq!(call.form, CallForm::Single);
        assert_eq!(call.edits, vec![Edit::new("x", "y")]);
    }

    #[test]
    fn list_form_and_replace_all_inside() {
        let call = parse_call(&json!({"path": "a.rs", "edits": [
            {"old": "x", "new": "y"}, {"old": "a", "new": "b", "replace_all": true}]}))
        .unwrap();
        assert_eq!(call.form, CallForm::List);
        assert!(call.edits[1].replace_all);
    }

    #[test]
    fn both_forms_refused() {
        let msg = err(json!({"path": "a", "old": "x", "new": "y", "edits": []}));
        assert!(
            msg.contains("not both; replace_all goes inside each edit"),
            "{msg}"
        );
        let msg =
            err(json!({"path": "a", "replace_all": true, "edits": [{"old": "x", "new": "y"}]}));
        assert!(msg.contains("not both"), "{msg}");
    }

    #[test]
    fn neither_form_refused() {
        assert!(err(json!({"path": "a"})).contains("neither was sent"));
    }

    #[test]
    fn edits_as_json_string_accepted() {
        let call =
            parse_call(&json!({"path": "a", "edits": "[{\"old\":\"x\",\"new\":\"y\"}]"})).unwrap();
        assert_eq!(call.form, CallForm::ListAsString);
        assert_eq!(call.edits.len(), 1);
    }

    #[test]
    fn edits_as_other_string_refused() {
        let msg = err(json!({"path": "a", "edits": "old: x"}));
        assert!(msg.contains("string that is not such a list"), "{msg}");
        let msg = err(json!({"path": "a", "edits": "[1, 2]"}));
        assert!(msg.contains("string that is not such a list"), "{msg}");
    }

    #[test]
    fn empty_list_refused() {
        assert!(err(json!({"path": "a", "edits": []})).contains("`edits` is empty"));
    }

    #[test]
    fn element_not_object_names_edit() {
        let msg = err(json!({"path": "a", "edits": [{"old": "x", "new": "y"}, "z"]}));
        assert!(msg.starts_with("edit 2: expected an object"), "{msg}");
    }

    #[test]
    fn missing_field_names_edit_and_field() {
        let msg = err(json!({"path": "a", "edits": [{"old": "x", "new": "y"}, {"old": "z"}]}));
        assert_eq!(
            msg,
            "edit 2: `new` is missing; every edit needs both old and new"
        );
    }

    #[test]
    fn unknown_field_did_you_mean() {
        let msg = err(json!({"path": "a", "edits": [{"old": "x", "nwe": "y"}]}));
        assert_eq!(msg, "edit 1: unknown field `nwe`; did you mean `new`?");
        let msg = err(json!({"path": "a", "old_string": "x", "new": "y"}));
        assert!(msg.contains("did you mean `old`?"), "{msg}");
        let msg = err(json!({"path": "a", "old": "x", "new": "y", "replaceall": true}));
        assert!(msg.contains("did you mean `replace_all`?"), "{msg}");
        let msg = err(json!({"path": "a", "old": "x", "new": "y", "zzzzzzzz": 1}));
        assert!(msg.contains("the fields are `path`"), "{msg}");
    }

    #[test]
    fn duplicate_field_refused() {
        let msg = parse_call_text(r#"{"path": "a", "old": "x", "old": "z", "new": "y"}"#)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("`old` is given twice"), "{msg}");
        let msg =
            parse_call_text(r#"{"path": "a", "edits": [{"old": "x", "new": "y", "new": "q"}]}"#)
                .unwrap_err()
                .to_string();
        assert_eq!(msg, "edit 1: `new` is given twice; send each field once");
    }

    #[test]
    fn empty_old_points_to_fs_write() {
        let msg = err(json!({"path": "a", "old": "", "new": "y"}));
        assert!(msg.contains("use fs-write"), "{msg}");
    }

    #[test]
    fn old_equal_new_changes_nothing() {
        let msg = err(
            json!({"path": "a", "edits": [{"old": "a", "new": "b"}, {"old": "x", "new": "x"}]}),
        );
        assert!(msg.contains("edit 2 changes nothing"), "{msg}");
    }

    #[test]
    fn wrong_types_say_what_to_send() {
        let msg = err(json!({"path": "a", "old": "x", "new": "y", "replace_all": "yes"}));
        assert!(msg.contains("`replace_all` must be true or false"), "{msg}");
        let msg = err(json!({"path": "a", "old": 3, "new": "y"}));
        assert!(
            msg.contains("`old` must be a string, got the number 3"),
            "{msg}"
        );
        assert!(err(json!({"old": "x", "new": "y"})).contains("`path` is missing"));
        assert!(err(json!(["x"])).contains("expected a JSON object"));
    }
}
