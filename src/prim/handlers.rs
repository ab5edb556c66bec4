//! Each primitive's handler, beside its declaration: the table `Host`
//! dispatches through (by the declaration a call carries, never by its
//! name), and what the host does with the call's output afterwards.

use super::args::{FsFind, FsList, GitDiff, GitLog, IndexGrep, Outline};
use super::error::ToolError;
use super::fs::{self, Plan};
use super::host::{Host, ToolResult};
use super::table::{
    FS_EDIT, FS_FIND, FS_LIST, FS_READ, FS_WRITE, GIT_DIFF, GIT_LOG, GIT_STATUS, INDEX_GREP,
    OUTLINE, SHELL,
};
use super::tools;
use crate::call::{Call, Decl};

/// How a primitive runs once the guard has judged it.
#[derive(Clone, Copy)]
pub(crate) enum Handler {
    /// Read-only: runs at once.
    Read(fn(&Host, &Call) -> ToolResult),
    /// A write or a command: planned (for a write, with its diff), then
    /// confirmed, then carried out.
    Change(fn(&Host, &Call) -> Result<Plan, ToolError>),
}

/// What the session learns from a call's output, and how far it trusts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// A file's content (fs-read): the guard learns the values of a
    /// protected file; untrusted unless this session wrote the file.
    FileRead,
    /// `path:line:text` lines (index-grep): lines from protected files are
    /// learned like fs-read's.
    GrepLines,
    /// The session's own write (fs-write, fs-edit): trusted; the written
    /// file is the session's from now on.
    OwnWrite,
    /// Anything else (listings, git, command output): untrusted.
    Untrusted,
}

/// A primitive: its declaration and how it runs.
pub(crate) struct Primitive {
    pub decl: &'static Decl,
    pub handler: Handler,
    pub output: Output,
}

/// Every primitive, in the order the model sees them (`table::ALL`).
pub(crate) static PRIMITIVES: [Primitive; 11] = [
    Primitive {
        decl: &FS_READ,
        handler: Handler::Read(fs::read),
        output: Output::FileRead,
    },
    Primitive {
        decl: &FS_LIST,
        handler: Handler::Read(fs_list),
        output: Output::Untrusted,
    },
    Primitive {
        decl: &FS_FIND,
        handler: Handler::Read(fs_find),
        output: Output::Untrusted,
    },
    Primitive {
        decl: &INDEX_GREP,
        handler: Handler::Read(index_grep),
        output: Output::GrepLines,
    },
    Primitive {
        decl: &OUTLINE,
        handler: Handler::Read(outline),
        output: Output::Untrusted,
    },
    Primitive {
        decl: &FS_WRITE,
        handler: Handler::Change(fs::plan_write),
        output: Output::OwnWrite,
    },
    Primitive {
        decl: &FS_EDIT,
        handler: Handler::Change(fs::plan_edit),
        output: Output::OwnWrite,
    },
    Primitive {
        decl: &GIT_STATUS,
        handler: Handler::Read(git_status),
        output: Output::Untrusted,
    },
    Primitive {
        decl: &GIT_DIFF,
        handler: Handler::Read(git_diff),
        output: Output::Untrusted,
    },
    Primitive {
        decl: &GIT_LOG,
        handler: Handler::Read(git_log),
        output: Output::Untrusted,
    },
    Primitive {
        decl: &SHELL,
        handler: Handler::Change(|_, _| Ok(Plan::Exec)),
        output: Output::Untrusted,
    },
];

/// The primitive a call's declaration belongs to (by identity: a `Call`
/// only ever carries a declaration from the table).
pub(crate) fn primitive(decl: &Decl) -> Option<&'static Primitive> {
    PRIMITIVES.iter().find(|p| std::ptr::eq(p.decl, decl))
}

fn text(result: Result<String, ToolError>) -> ToolResult {
    match result {
        Ok(t) => ToolResult::ok(t),
        Err(e) => e.into(),
    }
}

fn fs_list(host: &Host, call: &Call) -> ToolResult {
    let a = FsList::of(call);
    text(tools::fs_list(&host.ws, a.path, a.depth))
}

fn fs_find(host: &Host, call: &Call) -> ToolResult {
    let a = FsFind::of(call);
    text(tools::fs_find(&host.ws, a.pattern, a.path))
}

fn index_grep(host: &Host, call: &Call) -> ToolResult {
    let a = IndexGrep::of(call);
    let rules = &host.guard.policy().paths;
    text(tools::index_grep_except(
        &host.ws,
        a.pattern,
        a.path,
        a.glob,
        &|rel| rules.is_protected(rel) || host.guard.is_found_store(rel),
    ))
}

fn outline(host: &Host, call: &Call) -> ToolResult {
    text(tools::outline(&host.ws, Outline::of(call).path))
}

fn git_status(host: &Host, _: &Call) -> ToolResult {
    text(tools::git_status(&host.ws))
}

fn git_diff(host: &Host, call: &Call) -> ToolResult {
    // A tracked secret file edited locally: its hunks as fs-read shows
    // the file (default-deny), not every line it holds.
    let diff = tools::git_diff(&host.ws, GitDiff::of(call).path)
        .map(|d| host.guard().shown_store_diff(&d).into_owned());
    text(diff)
}

fn git_log(host: &Host, call: &Call) -> ToolResult {
    text(tools::git_log(&host.ws, GitLog::of(call).n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::table::ALL;

    #[test]
    fn every_declared_primitive_has_its_handler_in_order() {
        assert_eq!(PRIMITIVES.len(), ALL.len());
        for (p, decl) in PRIMITIVES.iter().zip(ALL) {
            assert!(std::ptr::eq(p.decl, decl), "{}", decl.name);
            assert!(primitive(decl).is_some());
            let reads = matches!(p.handler, Handler::Read(_));
            assert_eq!(
                reads,
                decl.effect == crate::call::Effect::ReadOnly,
                "{}: a read-only primitive runs at once, others are planned",
                decl.name
            );
        }
    }
}
