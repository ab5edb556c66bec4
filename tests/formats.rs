//! The text edit formats (`nib::edit::formats`) through their public API,
//! and applied through the guard by `Host::apply_text` (`host`).
//!
//! Run with `cargo test --test formats`.

#[path = "formats/apply.rs"]
mod apply_cases;
#[path = "formats/host.rs"]
mod host;
#[path = "formats/search_replace.rs"]
mod search_replace;
#[path = "formats/udiff.rs"]
mod udiff;
#[path = "formats/v4a.rs"]
mod v4a;
