//! Primitives: the tools the model (and Scheme) can call.
//!
//! Each primitive is declared once (`decl`, `table`); from that declaration
//! come the JSON schema and positional form (`schema`), the parser of a JSON
//! call (`parse`) and the guard's view of a call (`guard_view`). `Host` runs
//! calls: guard, confirm, then the handler (`fs` for the file primitives,
//! `tools` for search, git and shell). `patch` applies the text edit
//! formats (a reply's SEARCH/REPLACE blocks, diffs, V4A patches) through
//! the same guard, every file planned before any is written.

mod args;
mod confine;
mod dispatch;
mod error;
mod fs;
mod handlers;
mod host;
pub mod parse;
pub mod patch;
pub mod schema;
pub mod table;
pub mod tools;

pub use crate::call::{Arg, Call, Decl, Effect, Field, Kind, Param, Role, guard_view};
pub use args::fs_edit_call;
pub use error::{GitStep, ToolError};
pub use host::{
    Answer, Asker, ConfirmAnswer, ConfirmOut, ConfirmRequest, Host, Question, ReasonOut, ToolResult,
};
pub use patch::{FileResult, TextFormat};

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
