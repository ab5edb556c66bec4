//! The Scheme engine: primitives from Scheme, value conversion, the
//! sandbox, require confinement, runaway strategies, error reports.
//!
//! - `prims`: every primitive called positionally, optional arguments left
//!   out, the exact `Call` the host gets; wrong types and symbol keys.
//! - `convert`: JSON round trips through Scheme; values JSON cannot hold.
//! - `sandbox`: escapes (files, processes, environment, nested engines,
//!   eval/load, builtin modules, macros) all refused; output captured.
//! - `require`: sibling modules load; anything outside the strategy
//!   directories is refused before it is read.
//! - `runaway`: the deadline stops a loop and the engine carries on.
//! - `errors`: file, line and column in reports.
//! - `language`: the prelude; macros that work and the ones refused.
//! - `text_edits`: the text-edits strategy in a real session: the scripted
//!   model answers with SEARCH/REPLACE text, `apply-text` applies it.
//!
//! Run with `cargo test --test engine`.

use nib::engine;

#[path = "engine/convert.rs"]
mod convert;
#[path = "engine/errors.rs"]
mod errors;
#[path = "engine/language.rs"]
mod language;
#[path = "engine/prims.rs"]
mod prims;
#[path = "engine/require.rs"]
mod require;
#[path = "engine/runaway.rs"]
mod runaway;
#[path = "engine/sandbox.rs"]
mod sandbox;
#[path = "engine/support.rs"]
mod support;
#[path = "engine/system_prompt.rs"]
mod system_prompt;
#[path = "engine/text_edits.rs"]
mod text_edits;
