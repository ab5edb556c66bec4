//! The handlers of the read-only and exec primitives: what `fs-list`,
//! `fs-find`, `index-grep`, `outline`, `git-status`, `git-diff`, `git-log`
//! and `shell` do once the guard has let a call through.
//!
//! Each handler takes the workspace and the call's positional arguments and
//! returns `Ok(text the model sees)` or a `ToolError`, whose message is a
//! plain lower-case sentence that says what to do next. Every path argument
//! goes through `Workspace::resolve`, so nothing outside the workspace is
//! listed, searched or diffed. Output is capped everywhere, with a note of
//! what was left out and how to narrow the call.
//!
//! `fs-read`, `fs-write` and `fs-edit` are not here: they are built on
//! `files/` and `edit/` directly.

pub mod autorun;
mod fs;
mod git;
pub mod gitcheck;
pub(crate) mod gitindex;
mod gitrefs;
mod gitstate;
mod grep;
pub mod landlock;
pub mod mountns;
mod nestedgit;
pub mod netns;
mod outline;
mod place;
mod shell;
pub mod spawn;
mod walk;
pub mod written;

pub use fs::{fs_find, fs_list};
pub use git::{git_diff, git_log, git_status};
pub use grep::{index_grep, index_grep_except};
pub use outline::outline;
pub use place::{ContainerShell, ShellPlace};
pub(crate) use shell::kill_group;
pub use shell::{Confinement, Stop, shell, shell_cancellable, shell_in, stop_running_commands};
