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
            // The pass reads the whole text for the patterns that can be
            // in it; the automaton keeps all of them, for the text around
            // each edit's changes, where any may appear.
            let absent = absent_by_line_starts(text.as_bytes(), &ids, patterns);
            let present: Vec<usize> = (0..ids.len()).filter(|&k| !absent[k]).collect();
            if present.len() == ids.len() {
                let longest = ids.iter().map(|&i| patterns[i].len()).max().unwrap_or(0);
                for (pattern, start) in starts(&ac, text.as_bytes(), longest) {
                    hits[ids[pattern]].push(start);
                }
            } else if !present.is_empty() {
                let sub = AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(present.iter().map(|&k| patterns[ids[k]]));
                match sub {
                    Ok(sub) => {
                        let longest = present.iter().map(|&k| patterns[ids[k]].len()).max();
                        for (pattern, start) in starts(&sub, text.as_bytes(), longest.unwrap_or(0))
                        {
                            hits[ids[present[pattern]]].push(start);
                        }
                    }
                    Err(_) => {
                        for &k in &present {
                            let p = patterns[ids[k]];
                            hits[ids[k]] = find_overlapping(text.as_bytes(), p.as_bytes());
                        }
                    }
                }
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

/// With at least this many patterns that hold a line start, the text's
/// line starts are collected to rule patterns out before the pass.
const LINE_START_PATTERNS: usize = 8;

/// Per automaton pattern (`ids[k]` among `patterns`): true when it cannot
/// be in `text`, because a line of it starts with two bytes no line of the
/// text starts with. What an old sent without its indentation looks like
/// (`\ntotal` where every line of the file starts with spaces): such olds
/// are found at a tolerant level, and the pass need not look for them.
/// One look at each line start of the text, made only when enough
/// patterns hold a line start for it to pay.
fn absent_by_line_starts(text: &[u8], ids: &[usize], patterns: &[&str]) -> Vec<bool> {
    let starts_of = |p: &str| -> Vec<u16> {
        let b = p.as_bytes();
        memchr::memchr_iter(b'\n', b)
            .filter(|&i| i + 2 < b.len())
            .map(|i| u16::from_le_bytes([b[i + 1], b[i + 2]]))
            .collect()
    };
    let keys: Vec<Vec<u16>> = ids.iter().map(|&i| starts_of(patterns[i])).collect();
    if keys.iter().filter(|k| !k.is_empty()).count() < LINE_START_PATTERNS {
        return vec![false; ids.len()];
    }
    // One bit per two-byte line start the text has.
    let mut seen = vec![0u64; 1 << 10];
    for i in memchr::memchr_iter(b'\n', text) {
        if let (Some(&a), Some(&b)) = (text.get(i + 1), text.get(i + 2)) {
            let key = usize::from(u16::from_le_bytes([a, b]));
            seen[key >> 6] |= 1 << (key & 63);
        }
    }
    keys.iter()
        .map(|k| {
            k.iter()
                .any(|&key| seen[usize::from(key) >> 6] & (1 << (key & 63)) == 0)
        })
        .collect()
}

/// Texts at least this long are read by the automaton in two halves at
/// once.
const PARALLEL_TEXT: usize = 1 << 20;

/// Every (pattern, start) of the automaton's patterns in `text`,
/// overlapping ones included, in no particular order. A long text is read
/// in two halves on two threads (the pass is most of a large call's
/// time): the first half's slice runs `longest - 1` bytes past the middle
/// and keeps the matches that start before it, the second keeps the rest,
/// so each match is found exactly once.
fn starts(ac: &AhoCorasick, text: &[u8], longest: usize) -> Vec<(usize, usize)> {
    let scan = |slice: &[u8], offset: usize, before: usize| -> Vec<(usize, usize)> {
        ac.find_overlapping_iter(slice)
            .map(|m| (m.pattern().as_usize(), offset + m.start()))
            .filter(|&(_, start)| start < before)
            .collect()
    };
    if text.len() < PARALLEL_TEXT {
        return scan(text, 0, usize::MAX);
    }
    let mid = text.len() / 2;
    let first_end = (mid + longest.saturating_sub(1)).min(text.len());
    std::thread::scope(|scope| {
        let later = scope.spawn(|| scan(&text[mid..], mid, usize::MAX));
        let mut found = scan(&text[..first_end], 0, mid);
        match later.join() {
            Ok(rest) => found.extend(rest),
            // A thread that cannot finish: read the second half here.
            Err(_) => found.extend(scan(&text[mid..], mid, usize::MAX)),
        }
        found
    })
}

/// The automaton over the short patterns, and each of its patterns' index
/// among all of them.
#[derive(Debug)]
pub(crate) struct Automaton {
    pub ac: AhoCorasick,
    pub ids: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text past the size read in two halves, with matches that straddle
    /// the middle, overlap each other, and sit at both ends.
    #[test]
    fn a_long_text_read_in_halves_gives_each_match_once() {
        let unit = "ab value_17 = f(17, x);\n";
        let mut text = unit.repeat(PARALLEL_TEXT / unit.len() + 3);
        text.insert_str(0, "aaaa");
        text.push_str("aaaa");
        let patterns = [
            "aaa",
            "value_17 = f(",
            "17, x);\nab",
            "ab",
            "b v",
            "x);\nab value_17",
        ];
        for mid_shift in 0..24 {
            // Move the middle across a unit, so some match straddles it.
            let text = format!("{}{text}", "#".repeat(mid_shift * 2));
            let (hits, automaton) = locate(&text, &patterns, 4096);
            assert!(automaton.is_some());
            for (p, found) in patterns.iter().zip(&hits) {
                let want = find_overlapping(text.as_bytes(), p.as_bytes());
                assert_eq!(found, &want, "{p:?} with the middle moved by {mid_shift}");
            }
        }
    }

    /// Patterns ruled out by their line starts are exactly those not in
    /// the text; the others are found as before, and the automaton keeps
    /// all of them.
    #[test]
    fn line_starts_rule_out_only_patterns_the_text_cannot_hold() {
        let text: String = (0..200)
            .map(|i| format!("    v{i} = f({i});\n    t += v{i};\n"))
            .collect();
        let mut owned: Vec<String> = (0..10)
            .map(|i| format!("v{i} = f({i});\nt += v{i};\n")) // sent dedented
            .collect();
        owned.push("f(3);\n    t += v3;\n    v4".to_string());
        owned.push("v7 = f(7);\n    t".to_string());
        owned.push("v1".to_string());
        owned.push("\n    v19".to_string());
        let patterns: Vec<&str> = owned.iter().map(String::as_str).collect();
        let ids: Vec<usize> = (0..patterns.len()).collect();
        let absent = absent_by_line_starts(text.as_bytes(), &ids, &patterns);
        assert_eq!(absent[..10], [true; 10]);
        assert_eq!(absent[10..], [false; 4]);
        let (hits, automaton) = locate(&text, &patterns, 4096);
        assert_eq!(automaton.map(|a| a.ids.len()), Some(patterns.len()));
        for (p, found) in patterns.iter().zip(&hits) {
            assert_eq!(
                found,
                &find_overlapping(text.as_bytes(), p.as_bytes()),
                "{p:?}"
            );
        }
        assert!(hits[..10].iter().all(Vec::is_empty));
        assert_eq!(hits[10].len(), 1);
    }
}
