//! `apply`: one call's edits on one file's text, all or nothing.
//!
//! Edits run in order, each on the text the previous one left. Every edit's
//! exact matches in the original text are found in one pass before the first
//! edit runs (Aho-Corasick over all old texts); the piece table finds the
//! rest near the seams edits leave. Only an edit that fails to match exactly
//! pays for a full look at the text (tolerant levels, then hints).

use std::borrow::Cow;
use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};

use super::diff::Diff;
use super::error::{EditError, ErrorKind};
use super::hints;
use super::pieces::{Pieces, find_overlapping};
use super::request::{Edit, check_edit};
use super::text::{LineIndex, Source, lf};
use super::tolerant::{self, Level, Probe};

/// What happened to one edit of a call that succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Replaced `count` places (more than one only with replace_all).
    Applied { level: Level, count: usize },
    /// The previous call made exactly this edit; skipped.
    AlreadyApplied,
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

/// Apply `edits` in order to `text`. `previous` is what the previous call on
/// this file applied (for the "already applied" rule); pass `&[]` when there
/// is no such call.
pub fn apply(text: &str, edits: &[Edit], previous: &[Edit]) -> Result<Applied, EditError> {
    let total = edits.len();
    for (i, e) in edits.iter().enumerate() {
        check_edit(e, i + 1, total)?;
    }
    let src = Source::parse(text);
    let wanted: Vec<(Cow<str>, Cow<str>)> =
        edits.iter().map(|e| (lf(&e.old), lf(&e.new))).collect();
    let previous: Vec<(Cow<str>, Cow<str>)> =
        previous.iter().map(|e| (lf(&e.old), lf(&e.new))).collect();
    let olds: Vec<&str> = wanted.iter().map(|(o, _)| o.as_ref()).collect();
    let orig_hits = locate(&src.norm, &olds);
    let mut pieces = Pieces::new(&src.norm);
    let mut outcomes = Vec::with_capacity(total);
    let mut notes = Vec::new();
    for (i, (old, new)) in wanted.iter().enumerate() {
        let step = Step {
            n: i + 1,
            total,
            old,
            new,
            replace_all: edits[i].replace_all,
            was_applied: previous.iter().any(|(po, pn)| po == old && pn == new),
        };
        let outcome = step.run(&mut pieces, &orig_hits[i], &mut notes)?;
        if outcome == Outcome::AlreadyApplied {
            notes.push(format!(
                "edit {} was already applied by the previous call; skipped it",
                i + 1
            ));
        }
        outcomes.push(outcome);
    }
    let changes = pieces.changes();
    let text = pieces.render(&src);
    // Without CRLF the written text is the compared text plus the BOM: no
    // need for a second copy of a large file.
    let compared = if src.lf_only() {
        Cow::Borrowed(&text[src.prefix().len()..])
    } else {
        Cow::Owned(pieces.materialize())
    };
    let diff = Diff::from_changes(&src.norm, &compared, &changes);
    Ok(Applied {
        text,
        outcomes,
        notes,
        diff,
        changed: !changes.is_empty(),
    })
}

/// One edit of the call, in its place in the order.
struct Step<'a> {
    n: usize,
    total: usize,
    old: &'a str,
    new: &'a str,
    replace_all: bool,
    /// The previous call applied exactly this edit.
    was_applied: bool,
}

impl Step<'_> {
    fn run(
        &self,
        pieces: &mut Pieces,
        orig_hits: &[usize],
        notes: &mut Vec<String>,
    ) -> Result<Outcome, EditError> {
        let (mut old, mut new) = (self.old, self.new);
        let mut hits = pieces.find_all(old, orig_hits);
        if hits.is_empty()
            && let Some(at) = at_eof_without_newline(pieces, old)
        {
            // old ends in a newline the file's last line lacks: match the
            // line, and keep the final newline missing.
            hits.push(at);
            old = &old[..old.len() - 1];
            new = new.strip_suffix('\n').unwrap_or(new);
        }
        if !hits.is_empty() {
            return self.replace_exact(pieces, &hits, old, new);
        }
        let cur = pieces.materialize();
        let lines = LineIndex::new(&cur);
        if self.was_applied && (self.new.trim().is_empty() || self.new_at(&cur, &lines).is_some()) {
            return Ok(Outcome::AlreadyApplied);
        }
        let Some((level, found)) = tolerant::find(&cur, &lines, &Probe::new(old, new)) else {
            return Err(self.not_found(&cur, &lines));
        };
        if found.len() > 1 && !self.replace_all {
            let mut at: Vec<usize> = found.iter().map(|m| m.first_line).collect();
            at.dedup();
            return Err(self.ambiguous(format!(
                "old is not in the file as sent; {} it matches {} places (lines {})",
                level.ignoring(),
                found.len(),
                hints::line_list(&at)
            )));
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
                tolerant::replacement(&cur, &lines, m, old, new),
            ));
        }
        notes.push(format!(
            "edit {}: old matched {} {}; check the diff",
            self.n,
            spans.join(", "),
            level.ignoring()
        ));
        let count = replacements.len();
        pieces.splice(replacements);
        Ok(Outcome::Applied { level, count })
    }

    fn replace_exact(
        &self,
        pieces: &mut Pieces,
        hits: &[usize],
        old: &str,
        new: &str,
    ) -> Result<Outcome, EditError> {
        if self.was_applied && self.new.contains(self.old) && self.all_inside_new(pieces, hits) {
            return Ok(Outcome::AlreadyApplied);
        }
        if hits.len() > 1 && !self.replace_all {
            let cur = pieces.materialize();
            let lines = LineIndex::new(&cur);
            let at: Vec<usize> = hits.iter().map(|&h| lines.line_of(h)).collect();
            return Err(self.ambiguous(format!(
                "old matches {} places (lines {})",
                hits.len(),
                hints::line_list(&at)
            )));
        }
        let mut end = 0;
        let ranges: Vec<_> = hits
            .iter()
            .filter(|&&h| {
                let keep = h >= end;
                if keep {
                    end = h + old.len();
                }
                keep
            })
            .map(|&h| (h..h + old.len(), new.to_string()))
            .collect();
        let count = ranges.len();
        pieces.splice(ranges);
        Ok(Outcome::Applied {
            level: Level::Exact,
            count,
        })
    }

    /// Whether every match of old sits inside a copy of new: the edit was
    /// made and its new text contains its old.
    fn all_inside_new(&self, pieces: &Pieces, hits: &[usize]) -> bool {
        let cur = pieces.materialize();
        let news: Vec<usize> = find_overlapping(cur.as_bytes(), self.new.as_bytes()).collect();
        hits.iter().all(|&h| {
            news.iter()
                .any(|&n| n <= h && h + self.old.len() <= n + self.new.len())
        })
    }

    /// The line where new already stands, exactly or at a tolerant level (a
    /// tolerant edit writes new re-indented, so a resend finds it so).
    fn new_at(&self, cur: &str, lines: &LineIndex) -> Option<usize> {
        if self.new.trim().is_empty() {
            return None;
        }
        if let Some(at) = memchr::memmem::find(cur.as_bytes(), self.new.as_bytes()) {
            return Some(lines.line_of(at));
        }
        let (_, found) = tolerant::find(cur, lines, &Probe::new(self.new, self.new))?;
        found.first().map(|m| m.first_line)
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

    fn not_found(&self, cur: &str, lines: &LineIndex) -> EditError {
        let hint = Some(hints::not_found(cur, lines, self.old));
        if let Some(line) = self.new_at(cur, lines) {
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

/// Where old minus its final '\n' ends a text that has no final newline.
fn at_eof_without_newline(pieces: &Pieces, old: &str) -> Option<usize> {
    let body = old
        .strip_suffix('\n')
        .filter(|b| !b.is_empty() && !b.ends_with('\n'))?;
    let len = pieces.len();
    let start = len.checked_sub(body.len())?;
    (pieces.slice_bytes(start..len) == body.as_bytes()).then_some(start)
}

/// Every start of each pattern in `text`, overlapping ones included: one
/// pass for all patterns together.
fn locate(text: &str, patterns: &[&str]) -> Vec<Vec<usize>> {
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut distinct = Vec::new();
    let which: Vec<usize> = patterns
        .iter()
        .map(|p| {
            *ids.entry(p).or_insert_with(|| {
                distinct.push(*p);
                distinct.len() - 1
            })
        })
        .collect();
    let mut hits: Vec<Vec<usize>> = vec![Vec::new(); distinct.len()];
    let automaton = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(&distinct);
    match automaton {
        Ok(ac) if distinct.len() > 1 => {
            for m in ac.find_overlapping_iter(text) {
                hits[m.pattern().as_usize()].push(m.start());
            }
            for h in &mut hits {
                h.sort_unstable();
            }
        }
        // One pattern (or an automaton too large to build): memmem is the
        // fastest single-pattern search there is.
        _ => {
            for (h, p) in hits.iter_mut().zip(&distinct) {
                h.extend(find_overlapping(text.as_bytes(), p.as_bytes()));
            }
        }
    }
    which.into_iter().map(|i| hits[i].clone()).collect()
}
