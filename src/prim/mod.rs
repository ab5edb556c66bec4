//! Primitives: the tools the model (and Scheme) can call.
//!
//! Each primitive is declared once (`decl`, `table`); from that declaration
//! come the JSON schema and positional form (`schema`), the parser of a JSON
//! call (`parse`) and the guard's view of a call (`guard_view`). `Host` runs
//! calls: guard, confirm, then the handler (`fs` for the file primitives,
//! `tools` for search, git and shell). `patch` applies the text edit
//! formats (a reply's SEARCH/REPLACE blocks, diffs, V4A patches) through
//! the same guard, every file planned before any is written.

pub mod decl;
mod fs;
mod host;
pub mod parse;
pub mod patch;
pub mod schema;
pub mod table;
pub mod tools;

pub use decl::{Arg, Call, Decl, Effect, Kind, Param, Role};
pub use host::{ConfirmAnswer, ConfirmOut, ConfirmRequest, Host, ReasonOut, ToolResult};
pub use patch::{FileResult, TextFormat};

/// One string value of a call as the guard sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    pub param: &'static str,
    /// For a list element's field: its 1-based index and field name.
    pub item: Option<(usize, String)>,
    pub role: Role,
    pub value: &'a str,
}

impl Field<'_> {
    /// "path", or "edits[2].new" for a list element's field.
    pub fn label(&self) -> String {
        match &self.item {
            Some((i, name)) => format!("{}[{i}].{name}", self.param),
            None => self.param.to_string(),
        }
    }
}

/// Every string value of a call with its role, list elements included, so
/// the guard reads a secret in the third edit's `new` like any other.
pub fn guard_view(call: &Call) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    for (p, arg) in call.decl.params.iter().zip(&call.args) {
        match arg {
            Arg::Str(s) => out.push(Field {
                param: p.name,
                item: None,
                role: p.role,
                value: s,
            }),
            Arg::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    for (key, value) in item {
                        let role = p
                            .items
                            .iter()
                            .find(|f| f.name == key)
                            .map_or(Role::None, |f| f.role);
                        if let Arg::Str(s) = value {
                            out.push(Field {
                                param: p.name,
                                item: Some((i + 1, key.clone())),
                                role,
                                value: s,
                            });
                        }
                    }
                }
            }
            Arg::Int(_) | Arg::Bool(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn guard_view_reads_inside_lists() {
        let call = parse::parse(
            &table::FS_EDIT,
            &json!({"path": "a", "edits": [{"old": "x", "new": "y"}, {"old": "p", "new": "SECRET"}]}),
        )
        .unwrap();
        let view = guard_view(&call);
        let secret = view.iter().find(|f| f.value == "SECRET").unwrap();
        assert_eq!(secret.label(), "edits[2].new");
        assert_eq!(secret.role, Role::Payload);
        let old = view.iter().find(|f| f.value == "p").unwrap();
        assert_eq!(old.role, Role::None);
    }

    #[test]
    fn tool_list_snapshot() {
        let list = schema::tool_list(&table::ALL);
        let names: Vec<&str> = table::ALL.iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "fs-read",
                "fs-list",
                "fs-find",
                "index-grep",
                "outline",
                "fs-write",
                "fs-edit",
                "git-status",
                "git-diff",
                "git-log",
                "shell"
            ]
        );
        // A change to what the model sees must show up in review.
        insta::assert_snapshot!(serde_json::to_string_pretty(&list).unwrap());
    }
}
