//! The edit engine: pure text logic, no IO, no clock.
//!
//! `apply(text, edits, previous)` carries out one fs-edit call on one file's
//! text: edits in order, each on what the previous left, all or nothing,
//! exact matching first and then tolerant levels from strict to loose, with
//! errors that tell the model exactly what to resend. `parse_call` turns the
//! JSON the model sent into validated edits. Everything about matching,
//! splicing, hints and diffs lives here; reading and writing files is
//! `files`' job.

mod anchored;
mod apply;
mod content;
mod diff;
mod endings;
mod error;
pub mod formats;
mod hints;
mod json;
mod pieces;
mod request;
mod search;
mod text;
mod tolerant;

pub use apply::{
    Applied, Hinted, Near, Outcome, Planned, apply, apply_hinted, apply_without_windows, plan,
};
pub use content::Content;
pub use diff::{Diff, DiffLine, Hunk, LineKind};
pub use error::{EditError, ErrorKind};
pub use json::{DuplicateKey, first_duplicate_key};
pub use request::{CallForm, Edit, EditCall, check_edit, did_you_mean, kind_of};
pub use tolerant::Level;
