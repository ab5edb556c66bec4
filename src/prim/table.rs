//! The v1 primitives, declared once each, in the order the model sees them.
//!
//! The order is part of the contract: the tool list is identical in every
//! request of a session (prompt caches depend on it), and a snapshot test
//! pins the schema derived from this table.

use crate::call::{Decl, DefaultValue, Effect, Kind, OneOf, Param, Role};

const fn param(
    name: &'static str,
    kind: Kind,
    required: bool,
    role: Role,
    doc: &'static str,
) -> Param {
    Param {
        name,
        kind,
        required,
        role,
        doc,
        items: &[],
        default: DefaultValue::Empty,
    }
}

/// An optional integer parameter whose default is `default`.
const fn int_param(name: &'static str, default: i64, doc: &'static str) -> Param {
    Param {
        default: DefaultValue::Int(default),
        ..param(name, Kind::Integer, false, Role::None, doc)
    }
}

/// An optional path parameter whose default is `default`.
const fn path_param(name: &'static str, default: &'static str, doc: &'static str) -> Param {
    Param {
        default: DefaultValue::Str(default),
        ..param(name, Kind::String, false, Role::Path, doc)
    }
}

pub static FS_READ: Decl = Decl {
    name: "fs-read",
    doc: "Read a text file. Lines come back numbered (the number, a tab, the line), \
          so you can cite and copy them; the numbers are not part of the file. Reads \
          up to 2000 lines from `offset`; page through longer files with offset and limit.",
    params: &[
        param(
            "path",
            Kind::String,
            true,
            Role::Path,
            "The file, relative to the workspace root.",
        ),
        int_param(
            "offset",
            1,
            "The first line to read, counting from 1 (default 1).",
        ),
        int_param("limit", 2000, "How many lines to read (default 2000)."),
    ],
    effect: Effect::ReadOnly,
    one_of: &[],
};

pub static FS_LIST: Decl = Decl {
    name: "fs-list",
    doc: "List a directory as a tree, skipping what .gitignore ignores. Directories end in '/'.",
    params: &[
        param(
            "path",
            Kind::String,
            true,
            Role::Path,
            "The directory, relative to the workspace root; \".\" is the root.",
        ),
        int_param("depth", 2, "How many levels to descend (default 2)."),
    ],
    effect: Effect::ReadOnly,
    one_of: &[],
};

pub static FS_FIND: Decl = Decl {
    name: "fs-find",
    doc: "Find files whose path matches a glob (for example \"**/*.rs\" or \"src/**/test_*.py\"), \
          skipping what .gitignore ignores.",
    params: &[
        param(
            "pattern",
            Kind::String,
            true,
            Role::None,
            "The glob, matched against paths relative to `path`.",
        ),
        path_param(
            "path",
            ".",
            "The directory to search (default the workspace root).",
        ),
    ],
    effect: Effect::ReadOnly,
    one_of: &[],
};

pub static INDEX_GREP: Decl = Decl {
    name: "index-grep",
    doc: "Search file contents with a regular expression (Rust regex syntax). Prints \
          path:line:text for each matching line, skipping ignored and binary files.",
    params: &[
        param(
            "pattern",
            Kind::String,
            true,
            Role::None,
            "The regular expression.",
        ),
        path_param(
            "path",
            ".",
            "A directory or file to search (default the workspace root).",
        ),
        param(
            "glob",
            Kind::String,
            false,
            Role::None,
            "Only search files whose path matches this glob, e.g. \"*.py\".",
        ),
    ],
    effect: Effect::ReadOnly,
    one_of: &[],
};

pub static OUTLINE: Decl = Decl {
    name: "outline",
    doc: "List the top-level definitions of a source file (functions, types, classes) \
          with their line numbers: a cheap map before reading a large file.",
    params: &[param(
        "path",
        Kind::String,
        true,
        Role::Path,
        "The source file.",
    )],
    effect: Effect::ReadOnly,
    one_of: &[],
};

pub static FS_WRITE: Decl = Decl {
    name: "fs-write",
    doc: "Create a file, or replace all of an existing one. To change part of a file use \
          fs-edit. Replacing a file needs a fresh read of it first (fs-read).",
    params: &[
        param(
            "path",
            Kind::String,
            true,
            Role::Path,
            "The file, relative to the workspace root.",
        ),
        param(
            "content",
            Kind::String,
            true,
            Role::Payload,
            "The whole new content.",
        ),
    ],
    effect: Effect::Write,
    one_of: &[],
};

pub static FS_EDIT: Decl = Decl {
    name: "fs-edit",
    doc: "Change a file by exact replacement. Either give old and new (old must match \
          exactly one place, unless replace_all), or give edits, a list of {old, new, \
          replace_all} applied in order, each to the text the previous one left. All or \
          nothing: if any edit fails, nothing is written and the error says what to resend. \
          Copy old from the file as fs-read shows it, without the line numbers.",
    params: &[
        param(
            "path",
            Kind::String,
            true,
            Role::Path,
            "The file, relative to the workspace root.",
        ),
        param(
            "old",
            Kind::String,
            false,
            Role::None,
            "The exact text to replace (with new).",
        ),
        param(
            "new",
            Kind::String,
            false,
            Role::Payload,
            "The text to put in its place.",
        ),
        param(
            "replace_all",
            Kind::Boolean,
            false,
            Role::None,
            "Replace every occurrence of old, not just one (default false).",
        ),
        Param {
            name: "edits",
            kind: Kind::List,
            required: false,
            role: Role::None,
            doc: "Several replacements in one file, applied in order (instead of old and new).",
            default: DefaultValue::Empty,
            items: &[
                param(
                    "old",
                    Kind::String,
                    true,
                    Role::None,
                    "The exact text to replace.",
                ),
                param(
                    "new",
                    Kind::String,
                    true,
                    Role::Payload,
                    "The text to put in its place.",
                ),
                param(
                    "replace_all",
                    Kind::Boolean,
                    false,
                    Role::None,
                    "Replace every occurrence (default false).",
                ),
            ],
        },
    ],
    effect: Effect::Write,
    one_of: &[OneOf {
        first: &["old", "new", "replace_all"],
        first_required: &["old", "new"],
        second: &["edits"],
        both: "give either old and new (with replace_all) or edits, not both; \
               replace_all goes inside each edit",
        neither: "give either old and new (with replace_all) or edits; neither was sent",
    }],
};

pub static GIT_STATUS: Decl = Decl {
    name: "git-status",
    doc: "Show the working tree's status (git status --short --branch).",
    params: &[],
    effect: Effect::ReadOnly,
    one_of: &[],
};

pub static GIT_DIFF: Decl = Decl {
    name: "git-diff",
    doc: "Show uncommitted changes (git diff HEAD), optionally for one path.",
    params: &[param(
        "path",
        Kind::String,
        false,
        Role::Path,
        "Limit the diff to this file or directory.",
    )],
    effect: Effect::ReadOnly,
    one_of: &[],
};

pub static GIT_LOG: Decl = Decl {
    name: "git-log",
    doc: "Show recent commits, one line each.",
    params: &[int_param("n", 20, "How many commits (default 20).")],
    effect: Effect::ReadOnly,
    one_of: &[],
};

pub static SHELL: Decl = Decl {
    name: "shell",
    doc: "Run a shell command (sh -c) in the workspace root. Output is capped; the exit \
          code is reported. Use it to build and test, not to read or edit files. Commands \
          run without network access unless the user allowed it.",
    params: &[
        param(
            "command",
            Kind::String,
            true,
            Role::Command,
            "The command line.",
        ),
        int_param(
            "timeout",
            120,
            "Seconds before the command is stopped (default 120).",
        ),
    ],
    effect: Effect::Exec,
    one_of: &[],
};

/// Every primitive, in the order the model sees them.
pub static ALL: [&Decl; 11] = [
    &FS_READ,
    &FS_LIST,
    &FS_FIND,
    &INDEX_GREP,
    &OUTLINE,
    &FS_WRITE,
    &FS_EDIT,
    &GIT_STATUS,
    &GIT_DIFF,
    &GIT_LOG,
    &SHELL,
];

/// A primitive by name.
pub fn lookup(name: &str) -> Option<&'static Decl> {
    ALL.iter().copied().find(|d| d.name == name)
}
