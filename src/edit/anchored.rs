//! Finding old texts that hold a whole line, by that line: an occurrence
//! of such an old has the line as a whole line of the text, so one look at
//! each line of the text (its length first, then a hash) finds every
//! occurrence of all of them, overlapping ones included. An automaton over
//! olds that share their first bytes with most lines (indentation, a
//! common prefix) reads a large file at a few hundred MB/s; this reads it
//! at the speed of finding its line ends.

use std::collections::HashMap;
use std::ops::Range;

/// An old text and the range of its anchor line in it.
pub(crate) type Anchored<'a> = (&'a [u8], Range<usize>);

/// The line an old is found by: its longest whole line (one with a line
/// end before and after it inside old), not empty; None when it has none.
pub(crate) fn anchor(old: &str) -> Option<Range<usize>> {
    let bytes = old.as_bytes();
    let ends: Vec<usize> = memchr::memchr_iter(b'\n', bytes).collect();
    ends.windows(2)
        .map(|w| w[0] + 1..w[1])
        .filter(|r| !r.is_empty())
        .max_by_key(|r| (r.len(), std::cmp::Reverse(r.start)))
}

/// Every (index into `olds`, start) of each old in `text`; each old comes
/// with its anchor (`anchor(old)`).
pub(crate) fn find_anchored(text: &[u8], olds: &[Anchored<'_>]) -> Vec<(usize, usize)> {
    let mut by_line: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut longest = 0;
    for (i, (old, line)) in olds.iter().enumerate() {
        let Some(bytes) = old.get(line.clone()) else {
            continue;
        };
        longest = longest.max(bytes.len());
        by_line.entry(line_hash(bytes)).or_default().push(i);
    }
    // One bit per anchor length, and one per anchor's hash (of 4,096):
    // most lines of a text are passed over on their length, most of the
    // rest on their hash, before the map is asked.
    let mut lengths = vec![0u64; longest / 64 + 1];
    let mut hashes = [0u64; 64];
    for (_, line) in olds {
        lengths[line.len() / 64] |= 1 << (line.len() % 64);
    }
    for &h in by_line.keys() {
        let bit = (h >> 52) as usize;
        hashes[bit / 64] |= 1 << (bit % 64);
    }
    let mut found = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text) {
        let len = end - start;
        if len <= longest && lengths[len / 64] & (1 << (len % 64)) != 0 {
            let line = &text[start..end];
            let h = line_hash(line);
            let bit = (h >> 52) as usize;
            if hashes[bit / 64] & (1 << (bit % 64)) != 0
                && let Some(candidates) = by_line.get(&h)
            {
                for &i in candidates {
                    let (old, anchor) = &olds[i];
                    let Some(at) = start.checked_sub(anchor.start) else {
                        continue;
                    };
                    if text[at..].starts_with(old) {
                        found.push((i, at));
                    }
                }
            }
        }
        start = end + 1;
    }
    found
}

/// A fast hash of a line's bytes (FxHash's step, eight bytes at a time,
/// then MurmurHash3's finalizer so its top bits mix every byte): equal
/// lines hash equal; a collision only costs a comparison.
fn line_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut hash = bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    for &b in words.remainder() {
        hash = (hash.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    hash ^ (hash >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(text: &str, old: &str) -> Vec<usize> {
        (0..text.len())
            .filter(|&i| text[i..].starts_with(old))
            .collect()
    }

    #[test]
    fn the_longest_whole_line_anchors() {
        assert_eq!(anchor("a\nbcd\nef\ng"), Some(2..5));
        assert_eq!(anchor("x = 1;\n    y\n"), Some(7..12));
        assert_eq!(anchor("no line end"), None);
        assert_eq!(anchor("one\n"), None);
        assert_eq!(anchor("a\n\nb"), None); // only an empty line inside
        assert_eq!(anchor("\nab\ncd\n"), Some(1..3)); // ties: the first
    }

    #[test]
    fn finds_every_occurrence_as_a_search_would() {
        let text = "x\n  a\n  b\n  a\n  b\n  a\nend\n  a\n  b";
        let olds = [
            "  a\n  b\n  a\n",
            "a\n  b\n  a\nend\n",
            "\n  b\n",
            "  b\n  a\n  b",
        ];
        let prepared: Vec<(&[u8], Range<usize>)> = olds
            .iter()
            .map(|o| (o.as_bytes(), anchor(o).unwrap()))
            .collect();
        let mut found = find_anchored(text.as_bytes(), &prepared);
        found.sort_unstable();
        let mut want: Vec<(usize, usize)> = olds
            .iter()
            .enumerate()
            .flat_map(|(i, o)| naive(text, o).into_iter().map(move |at| (i, at)))
            .collect();
        want.sort_unstable();
        assert_eq!(found, want);
        assert_eq!(found.iter().filter(|&&(i, _)| i == 3).count(), 1);
    }
}
