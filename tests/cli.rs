//! End-to-end tests of the `nib` binary, one test binary for them all (each
//! test binary links nib again): `nib apply` and `nib undo` run as real
//! processes on real temp workspaces, checking file bytes, exit codes and
//! the parsed `--json` reports; `nib exec` end to end against the scripted
//! model (`exec`); and against a real model server (`real_model`, gated).
//!
//! The submodules live in `tests/cli/` (a test crate's root looks for its
//! modules beside it, hence the `path` attributes).

#[path = "cli/support.rs"]
mod support;

#[path = "cli/apply.rs"]
mod apply;
#[path = "cli/concurrent.rs"]
mod concurrent;
#[path = "cli/encodings.rs"]
mod encodings;
#[path = "cli/example.rs"]
mod example;
#[path = "cli/exec.rs"]
mod exec;
#[path = "cli/guarded.rs"]
mod guarded;
#[path = "cli/input.rs"]
mod input;
#[path = "cli/many.rs"]
mod many;
#[path = "cli/paths.rs"]
mod paths;
#[path = "cli/real_model.rs"]
mod real_model;
#[path = "cli/refusals.rs"]
mod refusals;
#[path = "cli/script.rs"]
mod script;
#[path = "cli/text.rs"]
mod text;
#[path = "cli/tools.rs"]
mod tools;
#[path = "cli/undo.rs"]
mod undo;
#[path = "cli/whole.rs"]
mod whole;
