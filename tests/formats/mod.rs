//! The text edit formats (`nib::edit::formats`) through their public API,
//! and applied through the guard by `Host::apply_text` (`host`).
//!
//! Part of the prim test binary (`tests/prim.rs`): run with
//! `cargo test --test prim formats::`.

#[path = "apply.rs"]
mod apply_cases;
mod host;
mod search_replace;
mod udiff;
mod v4a;
