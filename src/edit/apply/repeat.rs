//! Edits that repeat an earlier edit of the same call sent a little
//! differently: without old's final newline, with other trailing
//! whitespace or indentation, with replace_all set. Applying such a copy
//! where the first one wrote makes the change twice (an insertion whose new
//! keeps its old inserts its line again).
//!
//! Twins are found up front by the loosest key the tolerant levels use (old
//! and new line by line, the final newline dropped). A twin is the same
//! change only when that is certain: each, applied to the other's old
//! alone, writes the other's new (but for trailing whitespace). A twin
//! that would apply where the first of its group wrote is then skipped as
//! a duplicate; one that is alike but not certainly the same change
//! refuses there, since applying it could make the change twice.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use super::call::Call;
use super::step::Step;
use super::{Edit, Near, Outcome, Twin, apply};
use crate::edit::error::{EditError, ErrorKind};
use crate::edit::text::split_lines;
use crate::edit::tolerant::loosest_key;

/// An edit's old and new, keyed line by line as the loosest tolerant level
/// compares lines, without the final newline.
fn loose(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let key = |text: &str| -> Vec<String> {
        split_lines(text)
            .0
            .iter()
            .map(|l| loosest_key(l).into_owned())
            .collect()
    };
    (key(old), key(new))
}

/// Each edit's group of twins (edits alike under the loosest key), when it
/// has any, and the groups' members in call order. Exact copies are
/// duplicates already and anchored edits count from the cursor: `skip[i]`
/// or an anchor leaves edit i out.
pub(super) fn twin_groups(
    wanted: &[(Cow<str>, Cow<str>)],
    nears: &[Near],
    skip: &[bool],
) -> (Vec<Option<usize>>, Vec<Vec<usize>>) {
    if skip.iter().filter(|&&s| !s).count() < 2 {
        // One edit left to look at: it has no twin.
        return (vec![None; wanted.len()], Vec::new());
    }
    let mut ids: HashMap<(Vec<String>, Vec<String>), usize> = HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut group: Vec<Option<usize>> = wanted
        .iter()
        .enumerate()
        .map(|(i, (old, new))| {
            if skip[i] || matches!(nears.get(i), Some(Near::After(_))) {
                return None;
            }
            let id = *ids.entry(loose(old, new)).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            members[id].push(i);
            Some(id)
        })
        .collect();
    // A group of one has no twins.
    for g in &mut group {
        if g.is_some_and(|id| members[id].len() < 2) {
            *g = None;
        }
    }
    (group, members)
}

/// Whether two edits are certainly one change: each, applied to the
/// other's old text alone, writes the other's new text, but for trailing
/// whitespace (a copy with trailing spaces keeps them on the lines it
/// changes; that is no second change).
fn same_change(a: &Twin, b: (&str, &str, bool)) -> bool {
    let as_edit = |old: &str, new: &str, replace_all| Edit {
        old: old.to_string(),
        new: new.to_string(),
        replace_all,
    };
    let alike = |x: &str, y: &str| {
        let ((xs, x_nl), (ys, y_nl)) = (split_lines(x), split_lines(y));
        x_nl == y_nl
            && xs.len() == ys.len()
            && xs
                .iter()
                .zip(&ys)
                .all(|(p, q)| p.trim_end() == q.trim_end())
    };
    let writes = |text: &str, edit: Edit, want: &str| {
        apply(text, &[edit], &[]).is_ok_and(|done| alike(&done.text, want))
    };
    writes(a.old, as_edit(b.0, b.1, b.2), a.new)
        && writes(b.0, as_edit(a.old, a.new, a.replace_all), b.1)
}

impl Step<'_> {
    /// When this edit would replace `places` (current offsets) where a
    /// twin wrote: a duplicate of it if certainly the same change, else a
    /// refusal. None when no place is where a twin wrote.
    pub(super) fn repeats(
        &self,
        call: &Call,
        old: &str,
        new: &str,
        places: &[Range<usize>],
    ) -> Option<Result<Outcome, EditError>> {
        if self.twins.is_empty() {
            return None;
        }
        // Where each twin wrote, from one pass over what was kept.
        let mut wrote: HashMap<usize, Vec<&Range<usize>>> = HashMap::new();
        for (n, range) in &call.written {
            if self.twins.iter().any(|t| t.n == *n) {
                wrote.entry(*n).or_default().push(range);
            }
        }
        self.twins.iter().rev().find_map(|twin| {
            let ranges = wrote.get(&twin.n)?;
            let inside =
                |p: &&Range<usize>| ranges.iter().any(|w| p.start < w.end && w.start < p.end);
            let count = places.iter().filter(inside).count();
            if count == 0 {
                return None;
            }
            Some(self.repeat_of(twin, old, new, count == places.len()))
        })
    }

    /// This edit's old stood in the file as read where `twin` changed it:
    /// a duplicate of it if certainly the same change.
    pub(super) fn repeat_of_twin(
        &self,
        by: usize,
        old: &str,
        new: &str,
    ) -> Option<Result<Outcome, EditError>> {
        let twin = self.twins.iter().find(|t| t.n == by)?;
        Some(self.repeat_of(twin, old, new, true))
    }

    fn repeat_of(
        &self,
        twin: &Twin,
        old: &str,
        new: &str,
        only_there: bool,
    ) -> Result<Outcome, EditError> {
        if only_there && same_change(twin, (old, new, self.replace_all)) {
            return Ok(Outcome::Duplicate { of: twin.n });
        }
        Err(EditError::new(
            ErrorKind::Ambiguous,
            format!(
                "edit {n} is alike to edit {t} (the same lines but for whitespace, line ends \
                 or replace_all), and its old matches where edit {t} wrote, but it is not \
                 certainly the same change: applying it could make the change twice",
                n = self.n,
                t = twin.n
            ),
        )
        .at(self.n, self.total)
        .with_hint(Some(format!(
            "if edit {n} repeats edit {t}, leave it out; if it is a further change, give its \
             old as the text is after edit {t}, or merge the two into one edit",
            n = self.n,
            t = twin.n
        ))))
    }
}
