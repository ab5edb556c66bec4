//! Explaining a failed edit so the model's next try succeeds.
//!
//! Most specific first: a repeated character miscounted, lines that differ
//! from old only in whitespace (shown visibly), invisible characters named,
//! then the nearest real lines of the file, numbered like fs-read (and said
//! to be numbered, so the numbers are not copied into old). When old
//! carries numbers copied from a tool's output, in any form `numbers`
//! knows, it is compared without them and the lines are shown without any.
//! Similarity is used here only to explain, never to apply.
//!
//! Everything stays linear in the file: candidate windows come from lines
//! old shares with the file (or, failing that, from a cheap bigram filter
//! over one line), and only a handful of windows get the costly comparison.

use std::collections::HashMap;
use std::fmt::Write as _;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::text::{LineIndex, split_lines};
pub(crate) use numbers::NewReading;

mod numbers;

/// A window must be at least this similar to old to be shown.
const MIN_SIMILARITY: f32 = 0.6;
/// Windows given the full comparison.
const CANDIDATES: usize = 6;
/// Lines of a window shown at most.
const SHOW_LINES: usize = 40;

/// The hint for an old text found nowhere at any level.
pub(crate) fn not_found(text: &str, lines: &LineIndex, old: &str) -> String {
    let (sent_lines, _) = split_lines(old);
    // Numbered lines are compared without their numbers, and the file's
    // lines shown without any: numbered lines would invite the same
    // mistake again.
    let copied = numbers::numbered(&sent_lines);
    let show_plain = copied.is_some() || numbers::looks_numbered(&sent_lines);
    let old_lines = copied.as_ref().map_or(sent_lines, |c| c.lines.clone());
    let mut parts = Vec::new();
    if let Some(miscount) = miscounted_run(text, lines, &old_lines) {
        parts.push(miscount);
    }
    if let Some((before, after)) = copied.as_ref().and_then(|c| c.gap()) {
        parts.push(format!(
            "old's line numbers skip from {before} to {after}: old must be whole consecutive \
             lines of the file, none left out"
        ));
    }
    match nearest(text, lines, &old_lines) {
        Some(first) => {
            let count = old_lines.len().min(lines.count() - first);
            if let Some(ws) = whitespace_only(text, lines, &old_lines, first) {
                parts.push(ws);
            }
            if let Some(inv) = invisible_difference(text, lines, &old_lines, first) {
                parts.push(inv);
            }
            if show_plain {
                parts.push(format!(
                    "the lines of old start with line numbers copied from a tool's output; the \
                     numbers are not part of the file. The nearest lines in the file are {}; \
                     old must be exactly these lines, without numbers:\n{}",
                    span(first, count),
                    plain(text, lines, first, count)
                ));
            } else {
                parts.push(format!(
                    "the nearest lines in the file are {} (shown as fs-read shows them: \
                     number, tab, line; copy only what follows the tab):\n{}",
                    span(first, count),
                    numbered(text, lines, first, count)
                ));
            }
        }
        None => parts.push(
            "no lines in the file are close to old; read the file again (fs-read) \
             and copy the lines you want to change exactly"
                .into(),
        ),
    }
    parts.join("\n")
}

/// old without the line numbers copied with it (each line numbered alike,
/// consecutively), and how new reads beside it; None when old is not so
/// numbered or is nothing without its numbers.
pub(crate) fn strip_numbers(old: &str, new: &str) -> Option<(String, NewReading)> {
    let (old_lines, old_nl) = split_lines(old);
    let copied = numbers::numbered(&old_lines).filter(|c| c.consecutive())?;
    let mut stripped = copied.lines.join("\n");
    if old_nl {
        stripped.push('\n');
    }
    if stripped.trim().is_empty() {
        return None;
    }
    let reading = numbers::read_new(&copied, new);
    Some((stripped, reading))
}

/// Whether old's lines carry numbers copied from a tool's output (then
/// lines shown to the model go without numbers).
pub(crate) fn carries_numbers(old: &str) -> bool {
    let (lines, _) = split_lines(old);
    numbers::numbered(&lines).is_some() || numbers::looks_numbered(&lines)
}

/// Lines as they are, without numbers.
pub(crate) fn plain(text: &str, lines: &LineIndex, first: usize, count: usize) -> String {
    let end = (first + count).min(lines.count());
    let mut out = String::new();
    for i in first..end.min(first + SHOW_LINES) {
        let _ = writeln!(out, "{}", lines.line(text, i));
    }
    if end > first + SHOW_LINES {
        let _ = writeln!(out, "({} more lines)", end - first - SHOW_LINES);
    }
    out.pop();
    out
}

/// Characters that show as nothing.
pub(crate) fn invisible_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{200b}' => "zero-width space",
        '\u{200c}' => "zero-width non-joiner",
        '\u{200d}' => "zero-width joiner",
        '\u{2060}' => "word joiner",
        '\u{feff}' => "byte order mark",
        '\u{fe0f}' => "variation selector 16",
        '\u{fe0e}' => "variation selector 15",
        '\u{200e}' => "left-to-right mark",
        '\u{200f}' => "right-to-left mark",
        '\u{202a}'..='\u{202e}' => "bidirectional control",
        '\u{2066}'..='\u{2069}' => "bidirectional isolate",
        '\u{00ad}' => "soft hyphen",
        '\u{180e}' => "Mongolian vowel separator",
        '\u{034f}' => "combining grapheme joiner",
        '\u{061c}' => "Arabic letter mark",
        '\u{180b}'..='\u{180d}' | '\u{180f}' => "Mongolian variation selector",
        '\u{fe00}'..='\u{fe0d}' => "variation selector",
        '\u{e0100}'..='\u{e01ef}' => "ideographic variation selector",
        '\u{e0000}'..='\u{e007f}' => "tag character",
        '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' => "Hangul filler",
        '\u{2061}'..='\u{2064}' => "invisible operator",
        _ => return None,
    })
}

/// Invisible characters on the window's lines that old lacks (or that old
/// has and the file lacks), named with where they are.
fn invisible_difference(
    text: &str,
    lines: &LineIndex,
    old_lines: &[&str],
    first: usize,
) -> Option<String> {
    let mut out = Vec::new();
    for (i, o) in old_lines.iter().enumerate().take(SHOW_LINES) {
        if first + i >= lines.count() {
            break;
        }
        let f = lines.line(text, first + i);
        let found = |line: &str| -> Vec<(char, usize)> {
            line.char_indices()
                .filter(|&(_, c)| invisible_name(c).is_some())
                .map(|(at, c)| (c, line[..at].chars().count() + 1))
                .collect()
        };
        let (in_file, in_old) = (found(f), found(o));
        if in_file.len() == in_old.len() && in_file.iter().zip(&in_old).all(|(a, b)| a.0 == b.0) {
            continue;
        }
        for (whose, list) in [("the file", in_file), ("old", in_old)] {
            for (c, col) in list {
                out.push(format!(
                    "  line {}: {whose} has a {} (U+{:04X}) at column {col}",
                    first + i + 1,
                    invisible_name(c).unwrap_or("invisible character"),
                    c as u32
                ));
            }
        }
    }
    if out.is_empty() {
        return None;
    }
    out.truncate(6);
    Some(format!(
        "invisible characters differ between old and the file:\n{}",
        out.join("\n")
    ))
}

/// "line 12" or "lines 12-14", 1-based.
pub(crate) fn span(first: usize, count: usize) -> String {
    if count <= 1 {
        format!("line {}", first + 1)
    } else {
        format!("lines {}-{}", first + 1, first + count)
    }
}

/// 1-based line numbers, at most ten of them.
pub(crate) fn line_list(lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().take(10).map(|l| (l + 1).to_string()).collect();
    let mut out = shown.join(", ");
    if lines.len() > 10 {
        let _ = write!(out, " and {} more", lines.len() - 10);
    }
    out
}

/// Lines as fs-read shows them: the number, a tab, the line.
pub(crate) fn numbered(text: &str, lines: &LineIndex, first: usize, count: usize) -> String {
    let mut out = String::new();
    let end = (first + count).min(lines.count());
    for i in first..end.min(first + SHOW_LINES) {
        let _ = writeln!(out, "{:>6}\t{}", i + 1, lines.line(text, i));
    }
    if end > first + SHOW_LINES {
        let _ = writeln!(out, "   ...\t({} more lines)", end - first - SHOW_LINES);
    }
    out.pop();
    out
}

/// The first line of the most similar window, if one is similar enough.
fn nearest(text: &str, lines: &LineIndex, old_lines: &[&str]) -> Option<usize> {
    let (n, m) = (lines.count(), old_lines.len());
    if n == 0 || m == 0 {
        return None;
    }
    let mut starts = shared_line_windows(text, lines, old_lines);
    if starts.is_empty() {
        starts = bigram_windows(text, lines, old_lines);
    }
    let last_start = n.saturating_sub(m);
    starts
        .into_iter()
        .map(|s| s.clamp(0, last_start as isize) as usize)
        .map(|s| (s, window_similarity(text, lines, old_lines, s)))
        .filter(|&(_, score)| score >= MIN_SIMILARITY)
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(s, _)| s)
}

/// Window starts voted for by lines old shares with the file.
fn shared_line_windows(text: &str, lines: &LineIndex, old_lines: &[&str]) -> Vec<isize> {
    let mut wanted: HashMap<&str, Vec<usize>, LineHash> = HashMap::default();
    for (i, l) in old_lines.iter().enumerate() {
        let t = l.trim();
        // Short lines ("}", "") are everywhere and vote for nothing useful.
        if t.len() >= 3 {
            let at = wanted.entry(t).or_default();
            // A line old repeats many times would cast a vote per copy for
            // every equal file line: quadratic on runs of equal lines.
            if at.len() < 4 {
                at.push(i);
            }
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    // Most lines cannot match by length alone; that check is far cheaper
    // than hashing them.
    let mut lengths = [false; 256];
    for t in wanted.keys() {
        lengths[t.len().min(255)] = true;
    }
    let mut votes: HashMap<isize, usize, LineHash> = HashMap::default();
    let mut vote = |j: usize, at: &[usize]| {
        for &i in at {
            *votes.entry(j as isize - i as isize).or_default() += 1;
        }
    };
    if wanted.len() <= 16 && text.is_ascii() {
        // Few lines to look for: a substring search for each finds the
        // lines to compare without visiting the others.
        for (t, at) in &wanted {
            let mut last = None;
            for hit in memchr::memmem::find_iter(text.as_bytes(), t.as_bytes()) {
                let j = lines.line_of(hit);
                if last != Some(j) && trim(lines.line(text, j)) == *t {
                    vote(j, at);
                }
                last = Some(j);
            }
        }
    } else {
        for j in 0..lines.count() {
            let t = trim(lines.line(text, j));
            if !lengths[t.len().min(255)] {
                continue;
            }
            if let Some(at) = wanted.get(t) {
                vote(j, at);
            }
        }
    }
    top(votes.into_iter().map(|(s, v)| (s, v as f32)))
}

/// `str::trim`, without decoding characters when a line's edges are ASCII
/// (it runs on every line of the file).
fn trim(line: &str) -> &str {
    let b = line.as_bytes();
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    let (mut start, mut end) = (0, b.len());
    while start < end && space(b[start]) {
        start += 1;
    }
    while end > start && space(b[end - 1]) {
        end -= 1;
    }
    let rest = &line[start..end];
    if start < end && (b[start] >= 0x80 || b[end - 1] >= 0x80) {
        return rest.trim();
    }
    rest
}

/// A hasher for short lines, eight bytes at a time: the lines are the
/// file's own, and SipHash's resistance to chosen keys buys nothing here.
#[derive(Default, Clone, Copy)]
struct LineHash;

impl std::hash::BuildHasher for LineHash {
    type Hasher = WordHasher;
    fn build_hasher(&self) -> WordHasher {
        WordHasher(0)
    }
}

struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            self.0 = (self.0.rotate_left(23) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
        let mut tail = [0u8; 8];
        tail[..words.remainder().len()].copy_from_slice(words.remainder());
        self.0 = (self.0.rotate_left(23) ^ u64::from_le_bytes(tail) ^ bytes.len() as u64)
            .wrapping_mul(K);
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// Window starts from the lines most like old's longest line, by shared
/// character pairs (a 4096-bit filter, so one pass and no allocation).
fn bigram_windows(text: &str, lines: &LineIndex, old_lines: &[&str]) -> Vec<isize> {
    let Some((at, target)) = old_lines
        .iter()
        .map(|l| l.trim())
        .enumerate()
        .max_by_key(|(_, l)| l.len())
    else {
        return Vec::new();
    };
    let mut filter = [0u64; 64];
    let mut wanted = 0usize;
    for pair in bigrams(target) {
        let bit = pair % 4096;
        if filter[bit / 64] & (1 << (bit % 64)) == 0 {
            wanted += 1;
        }
        filter[bit / 64] |= 1 << (bit % 64);
    }
    if wanted == 0 {
        return Vec::new();
    }
    let scores = (0..lines.count()).filter_map(|j| {
        let line = trim(lines.line(text, j));
        let (mut hits, mut total) = (0usize, 0usize);
        for pair in bigrams(line) {
            total += 1;
            let bit = pair % 4096;
            hits += (filter[bit / 64] >> (bit % 64) & 1) as usize;
        }
        let score = 2.0 * hits as f32 / (total + wanted) as f32;
        (score > 0.3).then_some((j as isize - at as isize, score))
    });
    top(scores)
}

fn bigrams(s: &str) -> impl Iterator<Item = usize> + '_ {
    s.chars()
        .zip(s.chars().skip(1))
        .map(|(a, b)| {
            (a as usize)
                .wrapping_mul(31)
                .wrapping_add(b as usize)
                .wrapping_mul(2654435761)
        })
        .map(|h| h >> 7)
}

/// The best few keys by score, ties to the earliest.
fn top(scored: impl Iterator<Item = (isize, f32)>) -> Vec<isize> {
    let mut all: Vec<(isize, f32)> = scored.collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.into_iter().take(CANDIDATES).map(|(s, _)| s).collect()
}

/// How alike old is to the file's lines from `first` on, 0 to 1, comparing
/// characters of trimmed lines.
fn window_similarity(text: &str, lines: &LineIndex, old_lines: &[&str], first: usize) -> f32 {
    let (mut same, mut total) = (0usize, 0usize);
    for (i, o) in old_lines.iter().enumerate() {
        let f = if first + i < lines.count() {
            lines.line(text, first + i)
        } else {
            ""
        };
        let (a, b): (Vec<char>, Vec<char>) =
            (o.trim().chars().collect(), f.trim().chars().collect());
        total += a.len() + b.len();
        if a == b {
            same += 2 * a.len();
            continue;
        }
        same += 2 * capture_diff_slices(Algorithm::Myers, &a, &b)
            .iter()
            .map(|op| {
                if let DiffOp::Equal { len, .. } = op {
                    *len
                } else {
                    0
                }
            })
            .sum::<usize>();
    }
    if total == 0 {
        1.0
    } else {
        same as f32 / total as f32
    }
}

/// Lines of the window that differ from old only in whitespace, shown so
/// the difference can be seen: tabs as →, edge spaces as ·.
fn whitespace_only(
    text: &str,
    lines: &LineIndex,
    old_lines: &[&str],
    first: usize,
) -> Option<String> {
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let mut out = Vec::new();
    for (i, o) in old_lines.iter().enumerate() {
        if first + i >= lines.count() {
            break;
        }
        let f = lines.line(text, first + i);
        if f != *o && squeeze(f) == squeeze(o) {
            out.push(format!(
                "  line {}: the file has \"{}\", old has \"{}\"",
                first + i + 1,
                visible(f),
                visible(o)
            ));
        }
    }
    if out.is_empty() {
        return None;
    }
    let more = out.len().saturating_sub(5);
    out.truncate(5);
    if more > 0 {
        out.push(format!("  and {more} more lines"));
    }
    Some(format!(
        "only whitespace differs on these lines (→ is a tab, · a space at the edge of a line):\n{}",
        out.join("\n")
    ))
}

fn visible(line: &str) -> String {
    let lead = line.len() - line.trim_start().len();
    let tail = line.trim_end().len().max(lead);
    line.char_indices()
        .map(|(at, c)| match c {
            '\t' => '→',
            ' ' if at < lead || at >= tail => '·',
            c => c,
        })
        .collect()
}

/// A run of one repeated character (a box-drawing rule, a row of '=')
/// whose length in old differs from the file's.
fn miscounted_run(text: &str, lines: &LineIndex, old_lines: &[&str]) -> Option<String> {
    // Distinct shapes only: old may repeat one rule line thousands of times.
    let mut shapes: Vec<(char, usize, String)> = Vec::new();
    for o in old_lines {
        let Some((c, count)) = longest_run(o) else {
            continue;
        };
        let shape = collapse_runs(o.trim(), c);
        if !shapes
            .iter()
            .any(|(sc, n, s)| *sc == c && *n == count && *s == shape)
        {
            shapes.push((c, count, shape));
        }
        if shapes.len() >= 8 {
            break;
        }
    }
    for (c, count, shape) in &shapes {
        for j in 0..lines.count() {
            let f = lines.line(text, j);
            if !f.contains(*c) {
                continue;
            }
            if collapse_runs(f.trim(), *c) == *shape {
                let found = longest_run(f).map_or(0, |(_, n)| n);
                if found != *count {
                    return Some(format!(
                        "old has {count} '{c}' (U+{:04X}) in a row; the file has {found} at line {}",
                        *c as u32,
                        j + 1
                    ));
                }
            }
        }
    }
    None
}

/// The longest run (4 or more) of one punctuation or symbol character.
fn longest_run(line: &str) -> Option<(char, usize)> {
    let mut best: Option<(char, usize)> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let mut n = 1;
        while chars.peek() == Some(&c) {
            chars.next();
            n += 1;
        }
        if n >= 4 && !c.is_alphanumeric() && !c.is_whitespace() && best.is_none_or(|(_, b)| n > b) {
            best = Some((c, n));
        }
    }
    best
}

fn collapse_runs(s: &str, c: char) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if ch != c || !out.ends_with(c) {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(text: &str, old: &str) -> String {
        not_found(text, &LineIndex::new(text), old)
    }

    #[test]
    fn nearest_lines_are_numbered_for_copying() {
        let text = "fn a() {}\nfn compute(x: i32) -> i32 {\n    x * 2\n}\nfn b() {}\n";
        let h = hint(text, "fn compute(x: u32) -> u32 {\n    x * 2\n}\n");
        assert!(
            h.contains("the nearest lines in the file are lines 2-4"),
            "{h}"
        );
        assert!(h.contains("     2\tfn compute(x: i32) -> i32 {"), "{h}");
    }

    #[test]
    fn nearest_without_shared_lines_uses_bigrams() {
        let text = "alpha\nlet total = price * quantity;\nomega\n";
        let h = hint(text, "let total = prices * quantity;");
        assert!(h.contains("line 2 ("), "{h}");
    }

    #[test]
    fn nothing_close() {
        let h = hint("completely different content\n", "this does not exist");
        assert!(h.contains("no lines in the file are close to old"), "{h}");
    }

    #[test]
    fn whitespace_difference_is_shown() {
        let text = "if x:\n\treturn  1\n";
        let h = hint(text, "if x:\n    return 1\n");
        assert!(
            h.contains("line 2: the file has \"→return  1\", old has \"····return 1\""),
            "{h}"
        );
    }

    #[test]
    fn miscounted_repeated_character() {
        let rule = "─".repeat(37);
        let text = format!("a\n// {rule}\nb\n");
        let h = hint(&text, &format!("// {}\nb\n", "─".repeat(32)));
        assert!(
            h.contains("old has 32 '─' (U+2500) in a row; the file has 37 at line 2"),
            "{h}"
        );
    }

    #[test]
    fn long_windows_are_cut() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let old: String = (0..60).map(|i| format!("line {i}\n")).collect::<String>() + "extra\n";
        let h = hint(&text, &old);
        assert!(h.contains("(21 more lines)"), "{h}");
    }
}
