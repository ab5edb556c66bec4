//! Finding old texts: every pattern's starts in one pass (an Aho-Corasick
//! automaton for the short ones, built once per call), overlapping matches
//! included, a substring search that stays linear for a needle of equal
//! lines, and the windows around changed regions where later matches can
//! appear.

use std::ops::Range;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use memchr::memmem;

/// Windows of `len - 1` bytes around each region, merged, within the text.
pub(crate) fn windows(near: &[Range<usize>], len: usize, total: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let reach = len.saturating_sub(1);
    for r in near {
        let w = r.start.saturating_sub(reach)..(r.end + reach).min(total);
        match out.last_mut() {
            Some(last) if last.end >= w.start => last.end = last.end.max(w.end),
            _ => out.push(w),
        }
    }
    out
}

/// Whether `start..end` holds a byte of a region, or crosses an empty one.
pub(crate) fn overlaps_any(start: usize, end: usize, regions: &[Range<usize>]) -> bool {
    // Regions are ascending; the first that ends at or after `start` is the
    // only one that can start before `end`... or the next few empty ones.
    let i = regions.partition_point(|r| r.end < start);
    regions[i..]
        .iter()
        .take_while(|r| r.start <= end)
        .any(|r| overlaps(start, end, r))
}

pub(crate) fn overlaps(start: usize, end: usize, r: &Range<usize>) -> bool {
    if r.is_empty() {
        start < r.start && r.start < end
    } else {
        start < r.end && r.start < end
    }
}

/// Starts of `needle` in `hay`, overlapping ones included, in time linear
/// in both (restarting a substring search one byte after each hit is
/// quadratic for a needle like a thousand equal lines).
pub(crate) fn find_overlapping(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let m = needle.len();
    if m == 0 || m > hay.len() {
        return Vec::new();
    }
    let finder = memmem::Finder::new(needle);
    let fail = failure(needle);
    let mut found = Vec::new();
    if fail[m - 1] == 0 {
        // No border: two matches can never overlap.
        let mut from = 0;
        while let Some(h) = hay.get(from..).and_then(|h| finder.find(h)) {
            found.push(from + h);
            from += h + m;
        }
        return found;
    }
    // Knuth-Morris-Pratt while a match may be in progress; the fast
    // substring search whenever none is.
    let (mut i, mut q) = (0usize, 0usize);
    while i < hay.len() {
        if q == 0 {
            let Some(h) = finder.find(&hay[i..]) else {
                break;
            };
            found.push(i + h);
            i += h + m;
            q = fail[m - 1];
            continue;
        }
        let b = hay[i];
        while q > 0 && needle[q] != b {
            q = fail[q - 1];
        }
        if needle[q] == b {
            q += 1;
        }
        i += 1;
        if q == m {
            found.push(i - m);
            q = fail[m - 1];
        }
    }
    found
}

/// The Knuth-Morris-Pratt failure function: for each prefix, the length of
/// its longest proper border.
fn failure(needle: &[u8]) -> Vec<usize> {
    let mut fail = vec![0; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && needle[i] != needle[k] {
            k = fail[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        fail[i] = k;
    }
    fail
}

/// Patterns up to this many bytes in all are searched with a DFA.
const DFA_PATTERN_BYTES: usize = 4 * 1024;

/// Every start of each pattern in `text`, overlapping ones included: one
/// pass for all patterns up to `long` bytes together, and one linear search
/// for each longer one (an automaton's build grows with its patterns, and
/// long olds are few). The automaton, over the short patterns only (the
/// others match nothing in it), is returned for the seam searches after
/// each edit.
pub(crate) fn locate(
    text: &str,
    patterns: &[&str],
    long: usize,
) -> (Vec<Vec<usize>>, Option<Automaton>) {
    let mut hits: Vec<Vec<usize>> = vec![Vec::new(); patterns.len()];
    let ids: Vec<usize> = (0..patterns.len())
        .filter(|&i| patterns[i].len() <= long)
        .collect();
    let mut automaton = None;
    if ids.len() > 1 {
        // A DFA reads a text several times faster than an NFA (patterns that
        // share a prefix leave the prefilter nothing to skip with), but its
        // build grows with states times byte classes: minutes for an old
        // text of 10,000 equal lines. Past a few KiB of patterns, a
        // contiguous NFA, whose build is linear in the patterns' size.
        let size: usize = ids.iter().map(|&i| patterns[i].len()).sum();
        let kind = if size <= DFA_PATTERN_BYTES {
            AhoCorasickKind::DFA
        } else {
            AhoCorasickKind::ContiguousNFA
        };
        let built = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(kind))
            .build(ids.iter().map(|&i| patterns[i]));
        if let Ok(ac) = built {
            for m in ac.find_overlapping_iter(text) {
                hits[ids[m.pattern().as_usize()]].push(m.start());
            }
            for h in &mut hits {
                h.sort_unstable();
            }
            automaton = Some(Automaton { ac, ids });
        }
    }
    for (i, p) in patterns.iter().enumerate() {
        let in_automaton = automaton.is_some() && p.len() <= long;
        if !in_automaton {
            hits[i] = find_overlapping(text.as_bytes(), p.as_bytes());
        }
    }
    (hits, automaton)
}

/// The automaton over the short patterns, and each of its patterns' index
/// among all of them.
#[derive(Debug)]
pub(crate) struct Automaton {
    pub ac: AhoCorasick,
    pub ids: Vec<usize>,
}
