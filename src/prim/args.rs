//! Typed arguments, one struct per primitive, read from a parsed [`Call`]
//! by parameter positions computed at compile time from the declaration
//! (`param_index`): a misspelt parameter name does not compile, and a
//! left-out argument comes back as its parameter's declared default.

use super::table::{
    FS_EDIT, FS_FIND, FS_LIST, FS_READ, FS_WRITE, GIT_DIFF, GIT_LOG, INDEX_GREP, OUTLINE, SHELL,
};
use crate::call::{Arg, Call, param_index};
use crate::edit::{CallForm, Edit, EditCall, EditError, check_edit};

/// The position of `name` among the parameters of `decl` (a static).
macro_rules! at {
    ($decl:ident, $name:literal) => {{
        const I: usize = param_index($decl.params, $name);
        I
    }};
}

pub(crate) struct FsRead<'a> {
    pub path: &'a str,
    /// 1-based first line; 0 or less when the call left it out.
    pub offset: i64,
    pub limit: i64,
    /// Whether the call gave a page (offset or limit) itself.
    pub paged: bool,
}

impl<'a> FsRead<'a> {
    pub fn of(call: &'a Call) -> FsRead<'a> {
        let (offset, limit) = (at!(FS_READ, "offset"), at!(FS_READ, "limit"));
        FsRead {
            path: call.str_at(at!(FS_READ, "path")),
            offset: call.int_at(offset),
            limit: call.int_at(limit),
            paged: call.at(offset).as_int() > 0 || call.at(limit).as_int() > 0,
        }
    }
}

pub(crate) struct FsList<'a> {
    pub path: &'a str,
    pub depth: i64,
}

impl<'a> FsList<'a> {
    pub fn of(call: &'a Call) -> FsList<'a> {
        FsList {
            path: call.str_at(at!(FS_LIST, "path")),
            depth: call.int_at(at!(FS_LIST, "depth")),
        }
    }
}

pub(crate) struct FsFind<'a> {
    pub pattern: &'a str,
    pub path: &'a str,
}

impl<'a> FsFind<'a> {
    pub fn of(call: &'a Call) -> FsFind<'a> {
        FsFind {
            pattern: call.str_at(at!(FS_FIND, "pattern")),
            path: call.str_at(at!(FS_FIND, "path")),
        }
    }
}

pub(crate) struct IndexGrep<'a> {
    pub pattern: &'a str,
    pub path: &'a str,
    pub glob: &'a str,
}

impl<'a> IndexGrep<'a> {
    pub fn of(call: &'a Call) -> IndexGrep<'a> {
        IndexGrep {
            pattern: call.str_at(at!(INDEX_GREP, "pattern")),
            path: call.str_at(at!(INDEX_GREP, "path")),
            glob: call.str_at(at!(INDEX_GREP, "glob")),
        }
    }
}

pub(crate) struct Outline<'a> {
    pub path: &'a str,
}

impl<'a> Outline<'a> {
    pub fn of(call: &'a Call) -> Outline<'a> {
        Outline {
            path: call.str_at(at!(OUTLINE, "path")),
        }
    }
}

pub(crate) struct FsWrite<'a> {
    pub path: &'a str,
    pub content: &'a str,
}

impl<'a> FsWrite<'a> {
    pub fn of(call: &'a Call) -> FsWrite<'a> {
        FsWrite {
            path: call.str_at(at!(FS_WRITE, "path")),
            content: call.str_at(at!(FS_WRITE, "content")),
        }
    }
}

pub(crate) struct GitDiff<'a> {
    pub path: &'a str,
}

impl<'a> GitDiff<'a> {
    pub fn of(call: &'a Call) -> GitDiff<'a> {
        GitDiff {
            path: call.str_at(at!(GIT_DIFF, "path")),
        }
    }
}

pub(crate) struct GitLog {
    pub n: i64,
}

impl GitLog {
    pub fn of(call: &Call) -> GitLog {
        GitLog {
            n: call.int_at(at!(GIT_LOG, "n")),
        }
    }
}

pub(crate) struct Shell<'a> {
    pub command: &'a str,
    pub timeout: i64,
}

impl<'a> Shell<'a> {
    pub fn of(call: &'a Call) -> Shell<'a> {
        Shell {
            command: call.str_at(at!(SHELL, "command")),
            timeout: call.int_at(at!(SHELL, "timeout")),
        }
    }
}

/// fs-edit's arguments: the file and its edits, in either form. The
/// either/or rule of the two forms was checked when the call was parsed
/// (`OneOf` in the declaration); each edit is checked here, once, for
/// every caller (a model's JSON, a strategy's Scheme, `nib apply`).
pub(crate) struct FsEdit<'a> {
    pub path: &'a str,
    pub edits: Vec<Edit>,
}

impl<'a> FsEdit<'a> {
    pub fn of(call: &'a Call) -> Result<FsEdit<'a>, EditError> {
        let path = call.str_at(at!(FS_EDIT, "path"));
        let list = call.list_at(at!(FS_EDIT, "edits"));
        let edits: Vec<Edit> = if list.is_empty() {
            vec![Edit {
                old: call.str_at(at!(FS_EDIT, "old")).to_string(),
                new: call.str_at(at!(FS_EDIT, "new")).to_string(),
                replace_all: call.bool_at(at!(FS_EDIT, "replace_all")),
            }]
        } else {
            list.iter().map(|item| item_edit(item)).collect()
        };
        let total = edits.len();
        for (i, edit) in edits.iter().enumerate() {
            check_edit(edit, i + 1, total)?;
        }
        Ok(FsEdit { path, edits })
    }
}

/// One element of `edits` (its fields were checked against the
/// declaration's items when the call was parsed).
fn item_edit(item: &[(String, Arg)]) -> Edit {
    let field = |name: &str| item.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    Edit {
        old: field("old").map_or("", Arg::as_str).to_string(),
        new: field("new").map_or("", Arg::as_str).to_string(),
        replace_all: field("replace_all").is_some_and(Arg::as_bool),
    }
}

/// An fs-edit call from its JSON text, validated exactly as a model's call
/// is (the declaration's parser, then each edit): `nib apply`'s input.
pub fn fs_edit_call(text: &str) -> Result<EditCall, EditError> {
    let call =
        super::parse::parse_text(&FS_EDIT, text).map_err(|e| EditError::invalid(e.message))?;
    let form = if call.quirks.contains(&"list-as-string") {
        CallForm::ListAsString
    } else if call.list_at(at!(FS_EDIT, "edits")).is_empty() {
        CallForm::Single
    } else {
        CallForm::List
    };
    let edit = FsEdit::of(&call)?;
    Ok(EditCall {
        path: edit.path.to_string(),
        edits: edit.edits,
        form,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn call(v: Value) -> Result<EditCall, EditError> {
        fs_edit_call(&v.to_string())
    }

    fn err(v: Value) -> String {
        call(v).unwrap_err().to_string()
    }

    #[test]
    fn both_forms_and_their_shapes() {
        let c = call(json!({"path": "a.rs", "old": "x", "new": "y"})).unwrap();
        assert_eq!(
            (c.form, c.edits),
            (CallForm::Single, vec![Edit::new("x", "y")])
        );
        let c = call(json!({"path": "a.rs", "edits": [
            {"old": "x", "new": "y"}, {"old": "a", "new": "b", "replace_all": true}]}))
        .unwrap();
        assert_eq!(c.form, CallForm::List);
        assert!(c.edits[1].replace_all);
        let c = call(json!({"path": "a", "edits": "[{\"old\":\"x\",\"new\":\"y\"}]"})).unwrap();
        assert_eq!((c.form, c.edits.len()), (CallForm::ListAsString, 1));
    }

    #[test]
    fn the_either_or_rule_comes_from_the_declaration() {
        let msg =
            err(json!({"path": "a", "old": "x", "new": "y", "edits": [{"old": "p", "new": "q"}]}));
        assert!(
            msg.contains("not both; replace_all goes inside each edit"),
            "{msg}"
        );
        let msg =
            err(json!({"path": "a", "replace_all": true, "edits": [{"old": "x", "new": "y"}]}));
        assert!(msg.contains("not both"), "{msg}");
        assert!(err(json!({"path": "a"})).contains("neither was sent"));
        let msg = err(json!({"path": "a", "old": "x"}));
        assert!(msg.contains("`new` is missing"), "{msg}");
    }

    #[test]
    fn list_errors_name_the_element_and_field() {
        assert!(err(json!({"path": "a", "edits": []})).contains("`edits` is empty"));
        let msg = err(json!({"path": "a", "edits": "old: x"}));
        assert!(msg.contains("string that is not such a list"), "{msg}");
        let msg = err(json!({"path": "a", "edits": [{"old": "x", "new": "y"}, "z"]}));
        assert!(msg.starts_with("edits[2]: expected an object"), "{msg}");
        let msg = err(json!({"path": "a", "edits": [{"old": "x", "new": "y"}, {"old": "z"}]}));
        assert!(msg.starts_with("edits[2]: `new` is missing"), "{msg}");
        let msg = err(json!({"path": "a", "edits": [{"old": "x", "nwe": "y"}]}));
        assert_eq!(msg, "edits[1]: unknown field `nwe`; did you mean `new`?");
        let msg = err(json!({"path": "a", "old_string": "x", "new": "y"}));
        assert!(msg.contains("did you mean `old`?"), "{msg}");
        let msg = fs_edit_call(r#"{"path": "a", "edits": [{"old": "x", "new": "y", "new": "q"}]}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(msg, "edits[1]: `new` is given twice; send each field once");
    }

    #[test]
    fn each_edit_is_checked_by_the_edit_engine() {
        let msg = err(json!({"path": "a", "old": "", "new": "y"}));
        assert!(msg.contains("use fs-write"), "{msg}");
        let msg = err(
            json!({"path": "a", "edits": [{"old": "a", "new": "b"}, {"old": "x", "new": "x"}]}),
        );
        assert!(msg.contains("edit 2 changes nothing"), "{msg}");
        let msg = err(json!({"path": "a", "old": "x", "new": "y", "replace_all": "yes"}));
        assert!(msg.contains("`replace_all` must be true or false"), "{msg}");
        assert!(err(json!({"old": "x", "new": "y"})).contains("`path` is missing"));
    }
}
