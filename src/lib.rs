//! nib: a coding-agent runtime. Pure edit logic (`edit`), workspace IO
//! (`files`), what a tool call is (`call`), the guard that judges each call
//! (`guard`), the primitives the model calls (`prim`), the Scheme engine
//! that runs strategies (`engine`), the model clients (`model`), the event
//! log (`session`), the settings clients share (`settings`), a session's
//! host side (`agent`), and the clients: the command line (`cli`), the
//! terminal client (`tui`), the browser console (`console`), headless runs (`headless`) and the scenario
//! runner (`scenario`).
//!
//! Dependencies point one way (docs/architecture.md; `tests/layering.rs`
//! checks every `crate::` path against it).

#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

pub mod agent;
pub mod call;
pub mod cli;
pub mod console;
pub mod edit;
pub mod engine;
pub mod files;
pub mod guard;
pub mod headless;
pub mod model;
pub mod prim;
pub mod scenario;
pub mod session;
pub mod settings;
pub mod tui;
