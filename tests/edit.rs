//! The edit engine (`nib::edit`) through its public API only.
//!
//! - `endings`: line endings an edit writes: kept lines keep theirs, added
//!   and changed lines take the usual one (the break old stopped short of
//!   stays), a lone CR is a line ending in the file and in old and new, the
//!   written text reads back as the lines the diff shows; the text formats
//!   likewise.
//! - `conformance`: other agents' edit-tool test cases, run as data
//!   (`tests/data/conformance/`), with nib's deliberate differences listed
//!   and kept in step with `docs/conformance.md`.
//! - `multi`: the fs-edit rules of DESIGN.md for calls with several edits:
//!   order, all or nothing, replace_all, ambiguity, "already applied", line
//!   endings, BOM, and a large call against one-edit-at-a-time.
//! - `model`: random files (mixed LF/CRLF/CR endings, BOM, invisible
//!   characters) and random edit lists (overlapping, repeated) against a
//!   line-by-line model of the result: exact bytes or a refusal.
//! - `round_two`: duplicate edits, stale edits, kept lines' endings, lone-CR
//!   files, fs-read line numbers, invisible characters, indent units.
//! - `round_three`: the literal contract (an exact old writes new as
//!   sent: aligned continuations, comment stars, a line sent without its
//!   indentation), tolerant re-indentation by difference keeping alignment,
//!   folded characters kept on changed lines, rarer invisibles, CRLF copies,
//!   old-style tab+space Python, `{:>5}  ` line-number gutters.
//! - `steps`: stepping through a call's edits: stale edits refused before
//!   any tolerant level, repeats sent differently applied once, the file's
//!   byte order mark, new in the file's typography, copied line numbers.
//! - `indentation`: where new's lines go when old's indentation is not the
//!   file's (a tolerant match), and the property that a re-indented edit is
//!   written exactly or refused.
//! - `props`: properties over generated texts and edits: an edit and its
//!   inverse restore the text, `apply` never panics and agrees with
//!   `replacen` where it should, CRLF files get no bare LF, the final
//!   newline is kept as it was.
//!
//! Run with `cargo test --test edit`.

use nib::edit::{Applied, Edit, EditError, apply};
use proptest::test_runner::Config as ProptestConfig;

/// The call applied; panics with the engine's message when it is refused.
fn ok(text: &str, edits: &[Edit]) -> Applied {
    apply(text, edits, &[]).unwrap_or_else(|e| panic!("apply failed: {e}"))
}

/// The call's refusal; panics when it is applied.
fn err(text: &str, edits: &[Edit]) -> EditError {
    match apply(text, edits, &[]) {
        Ok(a) => panic!("apply succeeded but should fail: {:?}", a.text),
        Err(e) => e,
    }
}

/// The property tests' settings: 256 cases unless PROPTEST_CASES says
/// otherwise, generous room for rejected inputs, and no regression files
/// (a failure prints its minimal input).
fn proptest_config() -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        max_global_rejects: default.cases.saturating_mul(64).max(1 << 14),
        failure_persistence: None,
        ..default
    }
}

#[path = "edit/conformance.rs"]
mod conformance;
#[path = "edit/encodings.rs"]
mod encodings;
#[path = "edit/endings.rs"]
mod endings;
#[path = "edit/indentation.rs"]
mod indentation;
#[path = "edit/model.rs"]
mod model;
#[path = "edit/multi.rs"]
mod multi;
#[path = "edit/props.rs"]
mod props;
#[path = "edit/round_three.rs"]
mod round_three;
#[path = "edit/round_two.rs"]
mod round_two;
#[path = "edit/steps.rs"]
mod steps;
