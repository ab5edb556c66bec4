//! `apply`: one call's edits on one file's text, all or nothing.
//!
//! Edits run in order, each on the text the previous one left. Every edit's
//! exact matches in the original text are found in one pass before the first
//! edit runs (one Aho-Corasick automaton over all old texts, built in time
//! linear in their size). After each edit the same automaton reads only the
//! text around what that edit changed, so the matches later edits gain
//! there are known too; matches in the original are checked against the
//! piece table with a binary search. Only an edit that fails to match
//! exactly pays for a full look at the text (tolerant levels, then hints).
//!
//! An edit identical to an earlier one of the same call is applied once;
//! the copy is reported as a duplicate, and so is one that makes the same
//! change sent a little differently, where the first one wrote (one alike
//! but not certainly the same change refuses there). An edit whose old text
//! an earlier edit of the call changed is refused naming that edit, before
//! any tolerant level could find a loose twin of it elsewhere. A byte
//! order mark at the start of old or new stands for the file's own, which
//! stays as it is.

use std::borrow::Cow;
use std::collections::HashMap;

use super::content::Content;
use super::diff::Diff;
use super::error::{EditError, ErrorKind};
use super::pieces::Pieces;
use super::request::{Edit, check_edit};
use super::search::locate;
use super::text::{Source, eol_of, lf, to_file_in_place, to_lf_in_place};
use super::tolerant::{LazyUnit, Level};
use call::{Call, LONG};
use repeat::twin_groups;
use step::Step;

mod call;
mod failure;
mod loose;
mod repeat;
mod step;
mod typography;
mod window;

/// An earlier edit of the call alike to this one under the loosest key
/// (`repeat.rs` decides what a twin is; `step.rs` carries them).
pub(super) struct Twin<'a> {
    /// 1-based place in the call.
    pub n: usize,
    pub old: &'a str,
    pub new: &'a str,
    pub replace_all: bool,
}

/// What happened to one edit of a call that succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Replaced `count` places (more than one only with replace_all).
    Applied { level: Level, count: usize },
    /// The previous call made exactly this edit; skipped.
    AlreadyApplied,
    /// The same edit as edit `of` (1-based) of this call; it was applied
    /// once, and this copy skipped.
    Duplicate { of: usize },
}

/// A call that succeeded: the new file content and what each edit did.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The whole new file, with the original's BOM and line endings.
    pub text: String,
    pub outcomes: Vec<Outcome>,
    /// Things the model should check, such as an edit applied at a
    /// tolerant level.
    pub notes: Vec<String>,
    /// From the old text to the new, LF-normalized.
    pub diff: Diff,
    /// False when every edit was already applied: nothing to write.
    pub changed: bool,
}

impl Applied {
    /// The edits of `edits` (the call's, in order) that this call applied:
    /// the record a later call's "already applied" check is made against.
    pub fn made(&self, edits: &[Edit]) -> Vec<Edit> {
        made(edits, &self.outcomes)
    }
}

fn made(edits: &[Edit], outcomes: &[Outcome]) -> Vec<Edit> {
    edits
        .iter()
        .zip(outcomes)
        .filter(|(_, o)| matches!(o, Outcome::Applied { .. }))
        .map(|(e, _)| e.clone())
        .collect()
}

impl From<Done<String>> for Applied {
    fn from(done: Done<String>) -> Applied {
        Applied {
            text: done.body,
            outcomes: done.outcomes,
            notes: done.notes,
            diff: done.diff,
            changed: done.changed,
        }
    }
}

/// `Applied` with the new content as [`Content`] (see [`plan`]).
#[derive(Debug, Clone)]
pub struct Planned {
    /// The new file content, in parts of the text as read and new text.
    pub content: Content,
    pub outcomes: Vec<Outcome>,
    pub notes: Vec<String>,
    pub diff: Diff,
    pub changed: bool,
}

impl Planned {
    /// The edits of `edits` this call applied (see [`Applied::made`]).
    pub fn made(&self, edits: &[Edit]) -> Vec<Edit> {
        made(edits, &self.outcomes)
    }
}

/// Where an edit of a text format should match when its old text matches
/// several places. A hint only chooses among the matches a level found: it
/// never makes a non-match match, and several equally good matches still
/// refuse.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Near {
    /// No hint: old must match one place (as `apply`).
    #[default]
    None,
    /// A 1-based line of the text as it is when this edit runs: among
    /// several matches the one starting nearest this line wins; a tie is
    /// ambiguous. With an empty old, insert at the start of this line (past
    /// the last line: append).
    Line(usize),
    /// An anchor line: only matches after the first line equal to it
    /// (ignoring surrounding whitespace) that lies after the previous hinted
    /// edit's position (the cursor) count. An empty anchor: only matches
    /// after the cursor. With an empty old (and a non-empty anchor), insert
    /// right after the anchor line.
    After(String),
    /// The match must end at the end of the text. With an empty old, append.
    Eof,
}

/// One edit with its position hint: what the text formats produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hinted {
    pub edit: Edit,
    pub near: Near,
}

impl Hinted {
    pub fn new(edit: Edit, near: Near) -> Hinted {
        Hinted { edit, near }
    }

    /// Whether an empty old is allowed: an insertion at a stated place.
    fn inserts(&self) -> bool {
        self.edit.old.is_empty()
            && match &self.near {
                Near::Line(_) | Near::Eof => true,
                Near::After(anchor) => !anchor.trim().is_empty(),
                Near::None => false,
            }
    }
}

/// Apply `edits` in order to `text`. `previous` is what the previous call on
/// this file applied (for the "already applied" rule); pass `&[]` when there
/// is no such call.
pub fn apply(text: &str, edits: &[Edit], previous: &[Edit]) -> Result<Applied, EditError> {
    let total = edits.len();
    for (i, e) in edits.iter().enumerate() {
        check_edit(e, i + 1, total)?;
    }
    run(&Source::parse(text), edits, &[], previous, |p, src| {
        p.render(src)
    })
    .map(Applied::from)
}

/// `apply` with every tolerant edit looked for in the whole current text,
/// as before windows: for tests that check the windows change nothing.
#[doc(hidden)]
pub fn apply_without_windows(
    text: &str,
    edits: &[Edit],
    previous: &[Edit],
) -> Result<Applied, EditError> {
    let total = edits.len();
    for (i, e) in edits.iter().enumerate() {
        check_edit(e, i + 1, total)?;
    }
    WINDOWS.with(|w| w.set(false));
    let done = run(&Source::parse(text), edits, &[], previous, |p, src| {
        p.render(src)
    })
    .map(Applied::from);
    WINDOWS.with(|w| w.set(true));
    done
}

thread_local! {
    /// Whether tolerant edits may be looked for in a window of the text
    /// (off only in `apply_without_windows`).
    static WINDOWS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// `apply`, with the new content as parts of `text` and the new text
/// instead of one string (see [`Content`]): what a caller that streams a
/// large file to disk uses, so the file is not held twice. A text with CRs
/// is turned LF-only where it stands while the edits are matched, and
/// back before this returns, so it is not held twice either: `text` holds
/// what it held, byte for byte, whatever the result.
pub fn plan(text: &mut String, edits: &[Edit], previous: &[Edit]) -> Result<Planned, EditError> {
    let total = edits.len();
    for (i, e) in edits.iter().enumerate() {
        check_edit(e, i + 1, total)?;
    }
    let endings = to_lf_in_place(text);
    let src = Source::lf(text, endings);
    let done = run(&src, edits, &[], previous, Content::of);
    let endings = src.into_endings();
    to_file_in_place(text, &endings);
    let done = done?;
    Ok(Planned {
        content: done.body,
        outcomes: done.outcomes,
        notes: done.notes,
        diff: done.diff,
        changed: done.changed,
    })
}

/// `apply` with a position hint per edit (see [`Near`]). With every hint
/// `Near::None` it is `apply`. An edit with an empty old is an insertion,
/// allowed only with `Near::Line`, `Near::Eof` or an anchor.
pub fn apply_hinted(text: &str, edits: &[Hinted], previous: &[Edit]) -> Result<Applied, EditError> {
    let total = edits.len();
    for (i, h) in edits.iter().enumerate() {
        if h.inserts() {
            if h.edit.new.is_empty() {
                let mut e = EditError::new(
                    ErrorKind::NoChange,
                    format!("edit {} changes nothing: it inserts no text", i + 1),
                )
                .at(i + 1, total);
                e.validation = true;
                return Err(e);
            }
        } else {
            check_edit(&h.edit, i + 1, total)?;
        }
    }
    let plain: Vec<Edit> = edits.iter().map(|h| h.edit.clone()).collect();
    let nears: Vec<Near> = edits.iter().map(|h| h.near.clone()).collect();
    run(&Source::parse(text), &plain, &nears, previous, |p, src| {
        p.render(src)
    })
    .map(Applied::from)
}

/// For each edit, the earlier edit of the call it repeats, if any: same old,
/// new, replace_all and hint. An anchor hint counts from the cursor, so two
/// anchored edits alike are two places, not a repeat.
fn duplicates(
    wanted: &[(Cow<str>, Cow<str>)],
    edits: &[Edit],
    nears: &[Near],
) -> Vec<Option<usize>> {
    let none = Near::None;
    let mut first: HashMap<(&str, &str, bool, &Near), usize> = HashMap::new();
    wanted
        .iter()
        .enumerate()
        .map(|(i, (old, new))| {
            let near = nears.get(i).unwrap_or(&none);
            if matches!(near, Near::After(_)) {
                return None;
            }
            let key = (old.as_ref(), new.as_ref(), edits[i].replace_all, near);
            match first.get(&key) {
                Some(&j) => Some(j),
                None => {
                    first.insert(key, i);
                    None
                }
            }
        })
        .collect()
}

/// old and new without a byte order mark at their start where it stands for
/// the file's: the file has one (it stays, so new's would be a second), or
/// old has one the file lacks (old matches without it, and new's mirrors
/// old's). A BOM that new alone brings to a file without one is as sent.
/// The flag: whether a mark was taken off.
fn without_bom<'a>(
    old: Cow<'a, str>,
    new: Cow<'a, str>,
    file_bom: bool,
) -> (Cow<'a, str>, Cow<'a, str>, bool) {
    const BOM: char = '\u{feff}';
    if !(old.starts_with(BOM) || (file_bom && new.starts_with(BOM))) {
        return (old, new, false);
    }
    let strip = |text: Cow<'a, str>| match text {
        Cow::Borrowed(t) => Cow::Borrowed(t.strip_prefix(BOM).unwrap_or(t)),
        Cow::Owned(t) => match t.strip_prefix(BOM) {
            Some(rest) => Cow::Owned(rest.to_string()),
            None => Cow::Owned(t),
        },
    };
    (strip(old), strip(new), true)
}

/// The call after validation. `nears` is empty (no hints) or one per edit.
fn run<T>(
    src: &Source,
    edits: &[Edit],
    nears: &[Near],
    previous: &[Edit],
    finish: impl FnOnce(&Pieces, &Source) -> T,
) -> Result<Done<T>, EditError> {
    let total = edits.len();
    fn as_compared(e: &Edit, bom: bool) -> (Cow<'_, str>, Cow<'_, str>, bool) {
        without_bom(lf(&e.old), lf(&e.new), bom)
    }
    let mut wanted: Vec<(Cow<str>, Cow<str>)> = Vec::with_capacity(total);
    for (i, e) in edits.iter().enumerate() {
        let (old, new, stripped) = as_compared(e, src.bom);
        // Validation saw old and new with the mark: without it, an edit
        // may be left with nothing to find or nothing to change.
        if stripped && (old == new || (old.is_empty() && !e.old.is_empty())) {
            return Err(EditError::new(
                ErrorKind::NoChange,
                format!(
                    "edit {} changes nothing but a byte order mark; a file's byte order mark \
                     is kept as it is (fs-edit and fs-write keep it), so leave it out of old \
                     and new",
                    i + 1
                ),
            )
            .at(i + 1, total));
        }
        wanted.push((old, new));
    }
    let previous: Vec<(Cow<str>, Cow<str>)> = previous
        .iter()
        .map(|e| {
            let (old, new, _) = as_compared(e, src.bom);
            (old, new)
        })
        .collect();
    let dup_of = duplicates(&wanted, edits, nears);
    // One pattern per distinct old text (an empty one, an insertion, has
    // none); `pid[i]` is edit i's.
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut patterns: Vec<&str> = Vec::new();
    let mut last_use: Vec<usize> = Vec::new();
    let pid: Vec<Option<usize>> = wanted
        .iter()
        .enumerate()
        .map(|(i, (old, _))| {
            if old.is_empty() || dup_of[i].is_some() {
                return None;
            }
            let id = *ids.entry(old.as_ref()).or_insert_with(|| {
                patterns.push(old.as_ref());
                last_use.push(i);
                patterns.len() - 1
            });
            last_use[id] = i;
            Some(id)
        })
        .collect();
    let (orig_hits, automaton) = locate(&src.norm, &patterns, LONG);
    let reach = patterns
        .iter()
        .map(|p| p.len())
        .filter(|&l| l <= LONG)
        .max()
        .unwrap_or(0);
    let mut call = Call {
        pieces: Pieces::new(&src.norm),
        orig: &src.norm,
        source: src,
        orig_hits,
        automaton,
        pat_len: patterns.iter().map(|p| p.len()).collect(),
        last_use,
        reach,
        pending: Vec::new(),
        cuts: Vec::new(),
        cuts_sorted: Vec::new(),
        notes: Vec::new(),
        cursor: 0,
        orig_lines: Default::default(),
        file_unit: LazyUnit::new(&src.norm),
        tracked: vec![false; total],
        written: Vec::new(),
        lost: Vec::new(),
        loose_index: Default::default(),
        seams: None,
        windows: WINDOWS.with(|w| w.get()),
        loose_lookups: 0,
    };
    // Edits a later one may repeat sent differently: where they write is
    // kept, to tell a repeat from a further change.
    let skip: Vec<bool> = (0..total)
        .map(|i| dup_of[i].is_some() || wanted[i].0.is_empty())
        .collect();
    let (twin_group, twin_members) = twin_groups(&wanted, nears, &skip);
    for (i, g) in twin_group.iter().enumerate() {
        call.tracked[i] = g.is_some();
    }
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(total);
    for (i, (old, new)) in wanted.iter().enumerate() {
        if let Some(j) = dup_of[i] {
            call.notes.push(format!(
                "edit {} is the same as edit {}; applied it once and skipped the copy",
                i + 1,
                j + 1
            ));
            outcomes.push(Outcome::Duplicate { of: j + 1 });
            continue;
        }
        let step = Step {
            n: i + 1,
            total,
            old,
            new,
            pid: pid[i],
            replace_all: edits[i].replace_all,
            sent_eol: eol_of(&edits[i].old),
            was_applied: previous.iter().any(|(po, pn)| po == old && pn == new),
            near: nears.get(i).unwrap_or(&Near::None),
            twins: twin_group[i]
                .map_or(&[][..], |g| &twin_members[g])
                .iter()
                .take_while(|&&j| j < i)
                .filter(|&&j| matches!(outcomes[j], Outcome::Applied { .. }))
                .map(|&j| Twin {
                    n: j + 1,
                    old: &wanted[j].0,
                    new: &wanted[j].1,
                    replace_all: edits[j].replace_all,
                })
                .collect(),
        };
        let outcome = step.run(&mut call)?;
        match outcome {
            Outcome::AlreadyApplied => call.notes.push(format!(
                "edit {} was already applied by the previous call; skipped it",
                i + 1
            )),
            Outcome::Duplicate { of } => call.notes.push(format!(
                "edit {} makes the same change as edit {of}, sent differently; applied it once \
                 and skipped the copy",
                i + 1
            )),
            Outcome::Applied { .. } => {}
        }
        outcomes.push(outcome);
    }
    let pieces = call.pieces;
    let changes = pieces.changes();
    // The diff reads the new text around the changes only: the whole of
    // it is never put together here.
    let diff = Diff::from_changes(&src.norm, |r| pieces.text(r), &changes);
    Ok(Done {
        body: finish(&pieces, src),
        outcomes,
        notes: call.notes,
        diff,
        changed: !changes.is_empty(),
    })
}

/// A call that succeeded, with its new content in the form its caller
/// asked for.
struct Done<T> {
    body: T,
    outcomes: Vec<Outcome>,
    notes: Vec<String>,
    diff: Diff,
    changed: bool,
}

/// `new`, a whole file's content sent with LF endings, as it should replace
/// `text`: lines it keeps keep their own ending, the others take the file's
/// usual ending, as an edit of the whole text would write them. The BOM
/// stays.
pub(crate) fn replace_whole(text: &str, new: &str) -> String {
    let src = Source::parse(text);
    let new = lf(new);
    let new = match src.bom {
        true => new.strip_prefix('\u{feff}').unwrap_or(&new),
        false => &new,
    };
    if src.lf_only() {
        // No line ending to keep: the splice would write new as it is.
        return format!("{}{new}", src.prefix());
    }
    let mut pieces = Pieces::new(&src.norm);
    let reps = pieces.refine(vec![(0..src.norm.len(), new.to_string())]);
    pieces.splice(reps);
    pieces.render(&src)
}

#[cfg(test)]
mod hinted_tests {
    use super::*;
    use crate::edit::ErrorKind;

    fn hinted(old: &str, new: &str, near: Near) -> Hinted {
        Hinted::new(Edit::new(old, new), near)
    }

    #[test]
    fn nearest_line_wins() {
        let text = "x\na\nx\nb\nc\nx\n";
        let out = apply_hinted(text, &[hinted("x\n", "y\n", Near::Line(5))], &[]).unwrap();
        assert_eq!(out.text, "x\na\nx\nb\nc\ny\n");
        let out = apply_hinted(text, &[hinted("x\n", "y\n", Near::Line(1))], &[]).unwrap();
        assert_eq!(out.text, "y\na\nx\nb\nc\nx\n");
        // Without a hint the same edit is ambiguous, as with `apply`.
        let err = apply_hinted(text, &[hinted("x\n", "y\n", Near::None)], &[]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Ambiguous);
    }

    #[test]
    fn equally_near_matches_refuse() {
        let err =
            apply_hinted("x\na\nx\n", &[hinted("x\n", "y\n", Near::Line(2))], &[]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Ambiguous);
    }

    #[test]
    fn a_hint_never_makes_a_non_match_match() {
        let err = apply_hinted("a\nb\n", &[hinted("z\n", "y\n", Near::Line(1))], &[]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound);
    }

    #[test]
    fn anchor_after_the_cursor() {
        let text = "fn a\nx\nfn b\nx\nfn c\nx\n";
        // Two x after fn b: the anchor narrows, it does not pick the first.
        let err = apply_hinted(
            text,
            &[hinted("x\n", "1\n", Near::After("fn b".into()))],
            &[],
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Ambiguous);
        let edits = [
            hinted("x\n", "1\n", Near::After("fn c".into())),
            hinted("fn c\n", "fn d\n", Near::None),
        ];
        let out = apply_hinted(text, &edits, &[]).unwrap();
        assert_eq!(out.text, "fn a\nx\nfn b\nx\nfn d\n1\n");
        // The cursor is past the first edit: only the x after it is left.
        let edits = [
            hinted("y\n", "Y\n", Near::After(String::new())),
            hinted("x\n", "X\n", Near::After(String::new())),
        ];
        let out = apply_hinted("x\ny\nx\n", &edits, &[]).unwrap();
        assert_eq!(out.text, "x\nY\nX\n");
        let err = apply_hinted(
            text,
            &[hinted("x\n", "1\n", Near::After("fn z".into()))],
            &[],
        )
        .unwrap_err();
        assert!(err.reason.contains("anchor line `fn z`"), "{err}");
        // An anchor before the cursor does not count.
        let edits = [
            hinted("x\n", "1\n", Near::After("fn c".into())),
            hinted("x\n", "2\n", Near::After("fn b".into())),
        ];
        assert!(apply_hinted(text, &edits, &[]).is_err());
    }

    #[test]
    fn eof_matches_only_at_the_end() {
        let text = "x\na\nx\n";
        let out = apply_hinted(text, &[hinted("x\n", "y\n", Near::Eof)], &[]).unwrap();
        assert_eq!(out.text, "x\na\ny\n");
        let err = apply_hinted(text, &[hinted("a\n", "b\n", Near::Eof)], &[]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound);
    }

    #[test]
    fn insertions_need_a_place() {
        let out = apply_hinted("a\nb\n", &[hinted("", "n\n", Near::Line(2))], &[]).unwrap();
        assert_eq!(out.text, "a\nn\nb\n");
        let out = apply_hinted("a\r\nb", &[hinted("", "n\n", Near::Eof)], &[]).unwrap();
        assert_eq!(
            out.text, "a\r\nb\r\nn",
            "missing final newline stays missing"
        );
        let out =
            apply_hinted("f\nx\n", &[hinted("", "n\n", Near::After("f".into()))], &[]).unwrap();
        assert_eq!(out.text, "f\nn\nx\n");
        let err = apply_hinted("a\n", &[hinted("", "n\n", Near::None)], &[]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::EmptyOld);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_line_sent_without_its_indentation_is_written_as_sent() {
        // The literal contract: old occurs exactly (inside the line), so
        // new is written as sent, with or without the final newline.
        let file = "    if x {\n        let a = 1;\n    }\n";
        for (old, new) in [
            ("let a = 1;\n", "let a = 1;\nlet b = 2;\n"),
            ("let a = 1;", "let a = 1;\nlet b = 2;"),
            ("let a = 1;", "let a = 1;\n        let b = 2;"),
        ] {
            let out = apply(file, &[Edit::new(old, new)], &[]).unwrap();
            assert_eq!(out.text, file.replacen(old, new, 1));
            assert!(out.notes.is_empty(), "{:?}", out.notes);
        }
        // Part of a line is not a whole line.
        let out = apply("    x = f(a)\n", &[Edit::new("f(a)", "f(a,\nb)")], &[]).unwrap();
        assert_eq!(out.text, "    x = f(a,\nb)\n");
        // A line at column 0 has no indentation to restore.
        let out = apply("a = 1\n", &[Edit::new("a = 1", "a = 1\nb = 2")], &[]).unwrap();
        assert_eq!(out.text, "a = 1\nb = 2\n");
    }
}
