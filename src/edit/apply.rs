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
//! the copy is reported as a duplicate. An edit whose old text an earlier
//! edit of the call changed is refused naming that edit.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use super::diff::Diff;
use super::error::{EditError, ErrorKind};
use super::hints;
use super::pieces::{
    Automaton, Pieces, Replacement, find_overlapping, locate, overlaps, overlaps_any, windows,
};
use super::request::{Edit, check_edit};
use super::text::{LineIndex, Source, lf};
use super::tolerant::{self, Level, Probe};

/// Old texts longer than this are not looked for by the automaton around
/// each edit's changes (its window would grow with them); they are looked
/// for around every change when their own edit runs.
const LONG: usize = 4096;

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
        edits
            .iter()
            .zip(&self.outcomes)
            .filter(|(_, o)| matches!(o, Outcome::Applied { .. }))
            .map(|(e, _)| e.clone())
            .collect()
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
    run(text, edits, &[], previous)
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
    run(text, &plain, &nears, previous)
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

/// The call after validation. `nears` is empty (no hints) or one per edit.
fn run(
    text: &str,
    edits: &[Edit],
    nears: &[Near],
    previous: &[Edit],
) -> Result<Applied, EditError> {
    let total = edits.len();
    let src = Source::parse(text);
    let cr = src.has_cr();
    let wanted: Vec<(Cow<str>, Cow<str>)> = edits
        .iter()
        .map(|e| (lf(&e.old, cr), lf(&e.new, cr)))
        .collect();
    let previous: Vec<(Cow<str>, Cow<str>)> = previous
        .iter()
        .map(|e| (lf(&e.old, cr), lf(&e.new, cr)))
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
        orig_hits,
        automaton,
        pat_len: patterns.iter().map(|p| p.len()).collect(),
        last_use,
        reach,
        pending: Vec::new(),
        cuts: Vec::new(),
        notes: Vec::new(),
        cursor: 0,
    };
    let mut outcomes = Vec::with_capacity(total);
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
            was_applied: previous.iter().any(|(po, pn)| po == old && pn == new),
            near: nears.get(i).unwrap_or(&Near::None),
        };
        let outcome = step.run(&mut call)?;
        if outcome == Outcome::AlreadyApplied {
            call.notes.push(format!(
                "edit {} was already applied by the previous call; skipped it",
                i + 1
            ));
        }
        outcomes.push(outcome);
    }
    let pieces = call.pieces;
    let changes = pieces.changes();
    let text = pieces.render(&src);
    // Without other endings the written text is the compared text plus the
    // BOM: no need for a second copy of a large file.
    let compared = if src.lf_only() {
        Cow::Borrowed(&text[src.prefix().len()..])
    } else {
        pieces.materialize()
    };
    let diff = Diff::from_changes(&src.norm, &compared, &changes);
    Ok(Applied {
        text,
        outcomes,
        notes: call.notes,
        diff,
        changed: !changes.is_empty(),
    })
}

/// The state of a call between its edits.
struct Call<'s> {
    pieces: Pieces<'s>,
    orig: &'s str,
    /// Starts of each pattern in the original text.
    orig_hits: Vec<Vec<usize>>,
    /// All patterns, when there are several; reads the text around each
    /// edit's changes.
    automaton: Option<Automaton>,
    pat_len: Vec<usize>,
    /// The last edit (0-based) that looks for each pattern.
    last_use: Vec<usize>,
    /// The longest pattern the automaton looks for around changes.
    reach: usize,
    /// Matches (pattern, current start) that touch text an edit changed.
    pending: Vec<(usize, usize)>,
    /// Original ranges each edit (1-based) took out or cut into.
    cuts: Vec<(usize, Range<usize>)>,
    notes: Vec<String>,
    /// Where the previous hinted edit ended.
    cursor: usize,
}

impl Call<'_> {
    /// Every start of old (pattern `pid`) in the current text, ascending.
    fn exact_hits(&self, pid: Option<usize>, old: &str) -> Vec<usize> {
        let Some(pid) = pid else {
            return self.anywhere(old);
        };
        let len = old.len();
        let mut hits: Vec<usize> = self.orig_hits[pid]
            .iter()
            .filter_map(|&h| self.pieces.orig_now(h, len))
            .collect();
        if !self.pieces.untouched() {
            if self.automaton.is_some() && len <= LONG {
                hits.extend(
                    self.pending
                        .iter()
                        .filter(|&&(p, _)| p == pid)
                        .map(|&(_, s)| s),
                );
            } else {
                hits.extend(self.pieces.find_near(old, &self.pieces.changed_regions()));
            }
            hits.sort_unstable();
            hits.dedup();
        }
        hits
    }

    /// Every start of a text that is not one of the call's patterns.
    fn anywhere(&self, text: &str) -> Vec<usize> {
        let cur = self.pieces.materialize();
        find_overlapping(cur.as_bytes(), text.as_bytes())
    }

    /// Splice edit `n`'s replacements (ascending, current offsets) in, and
    /// move the cursor past them.
    fn splice(&mut self, n: usize, reps: Vec<Replacement>) {
        self.cursor = end_after(&reps);
        let reps = self.pieces.refine(reps);
        if reps.is_empty() {
            return;
        }
        let replaced: Vec<(Range<usize>, isize)> = reps
            .iter()
            .map(|(r, t)| (r.clone(), t.len() as isize - r.len() as isize))
            .collect();
        let done = self.pieces.splice(reps);
        self.cuts.extend(done.cut.into_iter().map(|r| (n, r)));
        let pat_len = &self.pat_len;
        self.pending.retain_mut(|(pid, start)| {
            let end = *start + pat_len[*pid];
            if replaced.iter().any(|(r, _)| overlaps(*start, end, r)) {
                return false;
            }
            let before = replaced.partition_point(|(r, _)| r.end <= *start);
            let delta: isize = replaced[..before].iter().map(|(_, d)| d).sum();
            *start = (*start as isize + delta) as usize;
            true
        });
        let Some(Automaton { ac, ids }) = &self.automaton else {
            return;
        };
        let edit = n - 1;
        for w in windows(&done.regions, self.reach, self.pieces.len()) {
            let text = self.pieces.bytes(w.clone());
            for m in ac.find_overlapping_iter(text.as_ref()) {
                let pid = ids[m.pattern().as_usize()];
                if self.last_use[pid] <= edit {
                    continue;
                }
                let start = w.start + m.start();
                if overlaps_any(start, start + m.len(), &done.regions) {
                    self.pending.push((pid, start));
                }
            }
        }
    }

    /// Line numbers (0-based) of current offsets.
    fn lines_of(&self, at: &[usize]) -> Vec<usize> {
        let cur = self.pieces.materialize();
        let lines = LineIndex::new(&cur);
        at.iter().map(|&h| lines.line_of(h)).collect()
    }
}

/// The current text with its lines, made when an edit first needs them.
struct View<'s> {
    cur: Cow<'s, str>,
    lines: LineIndex,
    /// Where new's first line stands loosely, found in the same pass over
    /// the lines as old's (the failure path asks whether new is there).
    new_first: Option<Vec<usize>>,
}

fn see<'s>(pieces: &Pieces<'s>) -> View<'s> {
    let cur = pieces.materialize();
    let lines = LineIndex::new(&cur);
    View {
        cur,
        lines,
        new_first: None,
    }
}

/// One edit of the call, in its place in the order.
struct Step<'a> {
    /// 1-based place in the call.
    n: usize,
    total: usize,
    old: &'a str,
    new: &'a str,
    pid: Option<usize>,
    replace_all: bool,
    /// The previous call applied exactly this edit.
    was_applied: bool,
    near: &'a Near,
}

/// Where a hinted edit may match: starting at or after `from`, and ending
/// at the end of the text when `eof`.
struct Region {
    from: usize,
    eof: bool,
}

impl Region {
    fn allows(&self, start: usize, end: usize, len: usize) -> bool {
        start >= self.from && (!self.eof || end == len)
    }
}

/// Where the cursor goes after `replacements` (ascending) are spliced in:
/// the end of the last one's new text.
fn end_after(replacements: &[Replacement]) -> usize {
    let mut delta: isize = 0;
    let mut end = 0;
    for (range, text) in replacements {
        end = (range.start as isize + delta) as usize + text.len();
        delta += text.len() as isize - range.len() as isize;
    }
    end
}

impl Step<'_> {
    fn run<'s>(&self, call: &mut Call<'s>) -> Result<Outcome, EditError> {
        let region = self.region(call)?;
        if self.old.is_empty() {
            return Ok(self.insert(call, &region));
        }
        let mut view = None;
        if let Some(outcome) =
            self.try_match(call, &region, self.old, self.new, self.pid, &mut view)?
        {
            return Ok(outcome);
        }
        // old copied from fs-read output with its line numbers.
        if let Some((old, new)) = hints::strip_read_prefixes(self.old, self.new)
            && let Some(outcome) = self.try_match(call, &region, &old, &new, None, &mut view)?
        {
            call.notes.push(format!(
                "edit {}: every line of old started with a line number as fs-read shows it; \
                 matched without the numbers (they are not part of the file); check the diff",
                self.n
            ));
            return Ok(outcome);
        }
        if let Some(stale) = self.stale(call) {
            return Err(stale);
        }
        let view = view.get_or_insert_with(|| see(&call.pieces));
        Err(self.not_found(view))
    }

    /// Exact, then the tolerant levels. None when old matches nowhere in
    /// the region.
    fn try_match<'s>(
        &self,
        call: &mut Call<'s>,
        region: &Region,
        old: &str,
        new: &str,
        pid: Option<usize>,
        view: &mut Option<View<'s>>,
    ) -> Result<Option<Outcome>, EditError> {
        let (mut old, mut new) = (old, new);
        let len = call.pieces.len();
        let mut hits = if pid.is_some() && old == self.old {
            call.exact_hits(pid, old)
        } else {
            call.anywhere(old)
        };
        hits.retain(|&h| region.allows(h, h + old.len(), len));
        if hits.is_empty()
            && let Some(at) = at_eof_without_newline(&call.pieces, old)
            && at >= region.from
        {
            // old ends in a newline the file's last line lacks: match the
            // line, and keep the final newline missing.
            hits.push(at);
            old = &old[..old.len() - 1];
            new = new.strip_suffix('\n').unwrap_or(new);
        }
        if hits.len() > 1 && !self.replace_all {
            let at = call.lines_of(&hits);
            hits = self
                .nearest(hits.into_iter().zip(at).collect(), |&(_, l)| l)
                .into_iter()
                .map(|(h, _)| h)
                .collect();
        }
        if !hits.is_empty() {
            return self.replace_exact(call, &hits, old, new).map(Some);
        }
        let view = view.get_or_insert_with(|| see(&call.pieces));
        let primary = old == self.old;
        let new_probe = Probe::new(self.new, self.new);
        // Before any tolerant level: a resent edit whose old still matches
        // loosely (an insertion leaves old's lines in place) is done.
        if primary
            && self.was_applied
            && (self.new.trim().is_empty() || self.new_at(view, &new_probe).is_some())
        {
            return Ok(Some(Outcome::AlreadyApplied));
        }
        let (cur, lines): (&str, &LineIndex) = (&view.cur, &view.lines);
        let near_line = match self.near {
            Near::Line(n) => Some(n.saturating_sub(1)),
            _ => None,
        };
        let probe = Probe::new(old, new)
            .within(region.from, region.eof)
            .near(near_line)
            .all(self.replace_all);
        // One pass over the lines finds where old and (for the failure
        // path's "new is already there") new could stand.
        let found = if primary && view.new_first.is_none() {
            let mut firsts = tolerant::first_lines(cur, lines, &[&probe, &new_probe]);
            view.new_first = firsts.pop();
            tolerant::find_from(cur, lines, &probe, &firsts.pop().unwrap_or_default())
        } else {
            tolerant::find(cur, lines, &probe)
        };
        let Some(tolerant::Found {
            level,
            matches: mut found,
            unsure,
        }) = found
        else {
            return Ok(None);
        };
        if found.len() > 1 && !self.replace_all {
            found = self.nearest(found, |m| m.first_line);
        }
        if unsure && (found.len() <= 1 || self.replace_all) {
            return Err(self.ambiguous(format!(
                "old is not in the file as sent; {} it may match more places than can be \
                 checked (thousands of candidate places); send old exactly as the file has it",
                level.ignoring()
            )));
        }
        if found.len() > 1 && !self.replace_all {
            let mut at: Vec<usize> = found.iter().map(|m| m.first_line).collect();
            at.dedup();
            let more = if unsure { "at least " } else { "" };
            return Err(self.ambiguous(format!(
                "old is not in the file as sent; {} it matches {more}{} places (lines {})",
                level.ignoring(),
                found.len(),
                hints::line_list(&at)
            )));
        }
        found.retain(|m| tolerant::verified(cur, lines, &probe, level, m));
        if found.is_empty() {
            return Ok(None);
        }
        let mut end = 0;
        let mut replacements = Vec::new();
        let mut spans = Vec::new();
        for m in found.iter().filter(|m| {
            let keep = m.range.start >= end;
            end = end.max(m.range.end);
            keep
        }) {
            let span = hints::span(m.first_line, m.line_count);
            if !spans.contains(&span) {
                spans.push(span);
            }
            replacements.push((
                m.range.clone(),
                tolerant::replacement(cur, lines, m, old, new),
            ));
        }
        call.notes.push(format!(
            "edit {}: old matched {} {}; check the diff",
            self.n,
            spans.join(", "),
            level.ignoring()
        ));
        let count = replacements.len();
        call.splice(self.n, replacements);
        Ok(Some(Outcome::Applied { level, count }))
    }

    /// Among several matches, the one nearest the hinted line; all the
    /// nearest when they tie (still ambiguous), and all of them without a
    /// line hint.
    fn nearest<T>(&self, matches: Vec<T>, line_of: impl Fn(&T) -> usize) -> Vec<T> {
        let Near::Line(n) = self.near else {
            return matches;
        };
        let target = n.saturating_sub(1);
        let best = matches
            .iter()
            .map(|m| line_of(m).abs_diff(target))
            .min()
            .unwrap_or(0);
        matches
            .into_iter()
            .filter(|m| line_of(m).abs_diff(target) == best)
            .collect()
    }

    /// Where this edit may match, from its hint and the cursor.
    fn region(&self, call: &Call) -> Result<Region, EditError> {
        let anchor = match self.near {
            Near::None | Near::Line(_) => {
                return Ok(Region {
                    from: 0,
                    eof: false,
                });
            }
            Near::Eof => return Ok(Region { from: 0, eof: true }),
            Near::After(anchor) => anchor.trim(),
        };
        let cursor = call.cursor;
        if anchor.is_empty() {
            return Ok(Region {
                from: cursor,
                eof: false,
            });
        }
        if let Some(next) = call.pieces.line_after(cursor, |l| l.trim() == anchor) {
            return Ok(Region {
                from: next,
                eof: false,
            });
        }
        let cur = call.pieces.materialize();
        let lines = LineIndex::new(&cur);
        let after = if cursor > 0 {
            format!(
                " after line {}",
                lines.line_of(cursor.min(cur.len().saturating_sub(1))) + 1
            )
        } else {
            String::new()
        };
        Err(EditError::new(
            ErrorKind::NotFound,
            format!("could not find the anchor line `{anchor}`{after}"),
        )
        .at(self.n, self.total)
        .with_hint(Some(hints::not_found(&cur, &lines, anchor))))
    }

    /// An insertion (empty old) at the place the hint names. A missing final
    /// newline stays missing when the text is appended to.
    fn insert(&self, call: &mut Call, region: &Region) -> Outcome {
        let len = call.pieces.len();
        let at = match self.near {
            Near::Line(n) => call.pieces.line_start(n.saturating_sub(1)).unwrap_or(len),
            Near::After(_) => region.from,
            Near::Eof | Near::None => len,
        };
        let ends_nl = len == 0 || *call.pieces.bytes(len - 1..len) == *b"\n";
        let text = if at == len && !ends_nl {
            format!("\n{}", self.new.strip_suffix('\n').unwrap_or(self.new))
        } else {
            self.new.to_string()
        };
        call.splice(self.n, vec![(at..at, text)]);
        Outcome::Applied {
            level: Level::Exact,
            count: 1,
        }
    }

    fn replace_exact(
        &self,
        call: &mut Call,
        hits: &[usize],
        old: &str,
        new: &str,
    ) -> Result<Outcome, EditError> {
        if self.was_applied && self.new.contains(self.old) && self.all_inside_new(call, hits) {
            return Ok(Outcome::AlreadyApplied);
        }
        if hits.len() > 1 && !self.replace_all {
            let at = call.lines_of(hits);
            return Err(self.ambiguous(format!(
                "old matches {} places (lines {})",
                hits.len(),
                hints::line_list(&at)
            )));
        }
        let mut end = 0;
        let mut reindented = false;
        let ranges: Vec<_> = hits
            .iter()
            .filter(|&&h| {
                let keep = h >= end;
                if keep {
                    end = h + old.len();
                }
                keep
            })
            .map(|&h| {
                let text = match line_indent_left_out(&call.pieces, h, old, new) {
                    Some(indented) => {
                        reindented = true;
                        indented
                    }
                    None => new.to_string(),
                };
                (h..h + old.len(), text)
            })
            .collect();
        if reindented {
            call.notes.push(format!(
                "edit {}: old is a whole line sent without its indentation; new's added lines \
                 were given that indentation; check the diff",
                self.n
            ));
        }
        let count = ranges.len();
        call.splice(self.n, ranges);
        Ok(Outcome::Applied {
            level: Level::Exact,
            count,
        })
    }

    /// Whether every match of old sits inside a copy of new: the edit was
    /// made and its new text contains its old.
    fn all_inside_new(&self, call: &Call, hits: &[usize]) -> bool {
        let news = call.anywhere(self.new);
        hits.iter().all(|&h| {
            news.iter()
                .any(|&n| n <= h && h + self.old.len() <= n + self.new.len())
        })
    }

    /// The line where new already stands, exactly or at a tolerant level (a
    /// tolerant edit writes new re-indented, so a resend finds it so).
    fn new_at(&self, view: &View, probe: &Probe) -> Option<usize> {
        if self.new.trim().is_empty() {
            return None;
        }
        let (cur, lines) = (&view.cur, &view.lines);
        if let Some(at) = memchr::memmem::find(cur.as_bytes(), self.new.as_bytes()) {
            return Some(lines.line_of(at));
        }
        let found = match &view.new_first {
            Some(first) => tolerant::find_from(cur, lines, probe, first),
            None => tolerant::find(cur, lines, probe),
        }?;
        found.matches.first().map(|m| m.first_line)
    }

    /// old was in the file as read, but an earlier edit of this call changed
    /// it: say which, and show the text as that edit left it.
    fn stale(&self, call: &Call) -> Option<EditError> {
        if call.cuts.is_empty() {
            return None;
        }
        let len = self.old.len();
        let mut places: Vec<Range<usize>> = match self.pid {
            Some(pid) => call.orig_hits[pid].iter().map(|&h| h..h + len).collect(),
            None => find_overlapping(call.orig.as_bytes(), self.old.as_bytes())
                .into_iter()
                .map(|h| h..h + len)
                .collect(),
        };
        if places.is_empty() {
            let lines = LineIndex::new(call.orig);
            if let Some(found) = tolerant::find(call.orig, &lines, &Probe::new(self.old, self.new))
            {
                places = found.matches.into_iter().map(|m| m.range).collect();
            }
        }
        let (place, by) = places.iter().find_map(|p| {
            call.cuts
                .iter()
                .find(|(_, cut)| overlaps(p.start, p.end, cut))
                .map(|(m, _)| (p.clone(), *m))
        })?;
        let orig_lines = LineIndex::new(call.orig);
        let first = orig_lines.line_of(place.start);
        let last = orig_lines.line_of(place.end.saturating_sub(1).max(place.start));
        let cur = call.pieces.materialize();
        let lines = LineIndex::new(&cur);
        let (from, to) = (
            call.pieces.orig_to_current(place.start),
            call.pieces.orig_to_current(place.end),
        );
        let now_first = lines.line_of(from.min(cur.len().saturating_sub(1)));
        let now_last = lines.line_of(
            to.saturating_sub(1)
                .max(from)
                .min(cur.len().saturating_sub(1)),
        );
        let now = if lines.count() == 0 {
            "(the file is now empty)".to_string()
        } else {
            hints::numbered(&cur, &lines, now_first, now_last - now_first + 1)
        };
        Some(
            EditError::new(
                ErrorKind::NotFound,
                format!(
                    "edit {}'s old text was changed by edit {by}: it was at {} of the file as \
                     read, and edit {by} changed it before edit {} ran",
                    self.n,
                    hints::span(first, last - first + 1),
                    self.n
                ),
            )
            .at(self.n, self.total)
            .with_hint(Some(format!(
                "edits apply in order, each to the text the one before left; merge edits {by} \
                 and {} into one edit, or give edit {}'s old as the text is after edit {by}. \
                 That text is now at {} (number, tab, line; the numbers are not part of the \
                 file):\n{now}",
                self.n,
                self.n,
                hints::span(now_first, now_last - now_first + 1),
            ))),
        )
    }

    fn ambiguous(&self, reason: String) -> EditError {
        EditError::new(ErrorKind::Ambiguous, reason)
            .at(self.n, self.total)
            .with_hint(Some(
                "add surrounding lines to old so it matches one place, or set replace_all \
                 to change every one"
                    .into(),
            ))
    }

    fn not_found(&self, view: &View) -> EditError {
        let hint = Some(hints::not_found(&view.cur, &view.lines, self.old));
        if let Some(line) = self.new_at(view, &Probe::new(self.new, self.new)) {
            // Both readings, and still the nearest lines: new may be a line
            // as common as "}", so "done" is only one possibility.
            return EditError::new(
                ErrorKind::NewAlreadyPresent,
                format!(
                    "could not find old in the file, but new already appears at line {}: if an \
                     earlier call made this change it is done; if old and new are swapped, \
                     send them the other way round",
                    line + 1
                ),
            )
            .at(self.n, self.total)
            .with_hint(hint);
        }
        EditError::new(ErrorKind::NotFound, "could not find old in the file".into())
            .at(self.n, self.total)
            .with_hint(hint)
    }
}

/// new with its added lines indented, when old is one whole line's text sent
/// without the line's indentation and new adds lines with none at all: the
/// model dropped the indentation from everything it wrote, and the added
/// lines belong at the same depth. Any other exact match writes new as
/// sent.
pub(crate) fn line_indent_left_out(
    pieces: &Pieces,
    at: usize,
    old: &str,
    new: &str,
) -> Option<String> {
    let body = old.strip_suffix('\n').unwrap_or(old);
    if body.contains('\n') || body.starts_with(char::is_whitespace) || body.is_empty() {
        return None;
    }
    let (first, rest) = new.split_once('\n')?;
    let added: Vec<&str> = rest
        .strip_suffix('\n')
        .unwrap_or(rest)
        .split('\n')
        .collect();
    let unindented = |l: &&str| l.trim().is_empty() || !l.starts_with(char::is_whitespace);
    if !added.iter().all(unindented) || added.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    // old must run to the end of its line.
    if !old.ends_with('\n') {
        let after = pieces.slice_bytes(at + old.len()..at + old.len() + 1);
        if !(after.is_empty() || after == b"\n") {
            return None;
        }
    }
    let from = at.saturating_sub(256);
    let before = pieces.slice_bytes(from..at);
    let line_start = match before.iter().rposition(|&b| b == b'\n') {
        Some(i) => i + 1,
        None if from == 0 => 0,
        None => return None,
    };
    let indent = std::str::from_utf8(&before[line_start..]).ok()?;
    if indent.is_empty() || !indent.chars().all(|c| c == ' ' || c == '\t') {
        return None;
    }
    let mut out = first.to_string();
    for line in rest.split('\n') {
        out.push('\n');
        if !line.trim().is_empty() {
            out.push_str(indent);
        }
        out.push_str(line);
    }
    Some(out)
}

/// [`line_indent_left_out`] on plain LF text, for tests that must tell
/// this rule's cases from plain exact ones.
pub fn indent_left_out(text: &str, at: usize, old: &str, new: &str) -> Option<String> {
    line_indent_left_out(&Pieces::new(text), at, old, new)
}

/// Where old minus its final '\n' ends a text that has no final newline.
fn at_eof_without_newline(pieces: &Pieces, old: &str) -> Option<usize> {
    let body = old
        .strip_suffix('\n')
        .filter(|b| !b.is_empty() && !b.ends_with('\n'))?;
    let len = pieces.len();
    let start = len.checked_sub(body.len())?;
    (pieces.slice_bytes(start..len) == body.as_bytes()).then_some(start)
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
    fn a_whole_line_sent_without_its_indentation() {
        let file = "    if x {\n        let a = 1;\n    }\n";
        let out = apply(
            file,
            &[Edit::new("let a = 1;\n", "let a = 1;\nlet b = 2;\n")],
            &[],
        )
        .unwrap();
        assert_eq!(
            out.text,
            "    if x {\n        let a = 1;\n        let b = 2;\n    }\n"
        );
        assert!(
            out.notes[0].contains("without its indentation"),
            "{:?}",
            out.notes
        );
        // Without the final newline, the same.
        let out = apply(
            file,
            &[Edit::new("let a = 1;", "let a = 1;\nlet b = 2;")],
            &[],
        )
        .unwrap();
        assert_eq!(
            out.text,
            "    if x {\n        let a = 1;\n        let b = 2;\n    }\n"
        );
        // new written at the file's depth is left as sent.
        let out = apply(
            file,
            &[Edit::new("let a = 1;", "let a = 1;\n        let b = 2;")],
            &[],
        )
        .unwrap();
        assert_eq!(
            out.text,
            "    if x {\n        let a = 1;\n        let b = 2;\n    }\n"
        );
        // Part of a line is not a whole line.
        let out = apply("    x = f(a)\n", &[Edit::new("f(a)", "f(a,\nb)")], &[]).unwrap();
        assert_eq!(out.text, "    x = f(a,\nb)\n");
        // A line at column 0 has no indentation to restore.
        let out = apply("a = 1\n", &[Edit::new("a = 1", "a = 1\nb = 2")], &[]).unwrap();
        assert_eq!(out.text, "a = 1\nb = 2\n");
    }
}
