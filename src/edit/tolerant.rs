//! Tolerant matching: what to do when old is not in the file byte for byte.
//!
//! Levels run strict to loose and each includes the ones before it; the
//! first level that finds anything decides. One match applies, several are
//! ambiguous and refuse (never falling through to a looser level).
//! Similarity is never used here: every level is an exact comparison of a
//! normalized form of whole lines.
//!
//! Applying at a tolerant level changes as little as possible: lines that
//! old and new agree on keep the file's bytes, and lines new brings in take
//! the file's indentation through every reading of the model's indentation
//! that fits the place (`indent`); readings that write different bytes
//! refuse.

use super::search::find_overlapping;
use super::text::LineIndex;
pub(crate) use doubt::Doubt;
pub(crate) use keys::{fold_char, loose_hash, loosely_equal};
use keys::{hash_bytes, key};
pub(crate) use probe::{LazyUnit, Match, Probe};
pub(crate) use rewrite::replacement;
pub(crate) use units::Indentation;

mod doubt;
mod indent;
mod keys;
mod probe;
mod rewrite;
mod units;

/// How strictly old matched the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Exact,
    TrailingWhitespace,
    Indentation,
    IndentUnit,
    Typography,
    Invisible,
    InnerWhitespace,
}

impl Level {
    pub(crate) const TOLERANT: [Level; 6] = [
        Level::TrailingWhitespace,
        Level::Indentation,
        Level::IndentUnit,
        Level::Typography,
        Level::Invisible,
        Level::InnerWhitespace,
    ];

    /// A stable name for logs and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::TrailingWhitespace => "trailing_whitespace",
            Level::Indentation => "indentation",
            Level::IndentUnit => "indent_unit",
            Level::Typography => "typography",
            Level::Invisible => "invisible",
            Level::InnerWhitespace => "inner_whitespace",
        }
    }

    /// What this level ignored, for notes the model reads.
    pub fn ignoring(self) -> &'static str {
        match self {
            Level::Exact => "exactly",
            Level::TrailingWhitespace => "ignoring trailing whitespace",
            Level::Indentation => "ignoring indentation",
            Level::IndentUnit => "ignoring tabs vs spaces and indentation",
            Level::Typography => "ignoring typographic quotes, dashes and spaces",
            Level::Invisible => {
                "ignoring invisible characters (zero-width, direction marks, soft hyphens)"
            }
            Level::InnerWhitespace => "ignoring runs of whitespace",
        }
    }
}

/// A line as the loosest level compares it: two lines equal under this
/// key may match at some tolerant level, and lines that differ never do.
pub(crate) fn loosest_key(line: &str) -> std::borrow::Cow<'_, str> {
    key(Level::InnerWhitespace, line)
}

/// At most this many line comparisons checking indentation at candidate
/// places; past it, a level that has not decided refuses (it never guesses).
const WORK: usize = 1 << 22;

/// What a level found.
#[derive(Debug)]
pub(crate) struct Found {
    pub level: Level,
    pub matches: Vec<Match>,
    /// Candidate places were left unchecked (too many to check): the
    /// matches are not all of them, so one match must not be applied.
    pub unsure: bool,
}

/// The first level at which old matches, with every match at that level.
pub(crate) fn find(text: &str, lines: &LineIndex, probe: &Probe) -> Option<Found> {
    let first = first_lines(text, lines, &[probe]).pop().unwrap_or_default();
    find_from(text, lines, probe, &first)
}

/// For each probe, the lines loosely equal to its old's first line (the
/// loosest comparison, which stops at the first differing byte): the only
/// places any level can match. One pass over the file serves every probe.
pub(crate) fn first_lines(text: &str, lines: &LineIndex, probes: &[&Probe]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); probes.len()];
    let wanted: Vec<(usize, &str)> = probes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.searchable(lines))
        .map(|(i, p)| (i, p.first_key.as_str()))
        .collect();
    if wanted.is_empty() {
        return out;
    }
    let ascii = text.is_ascii();
    let mut scan: Vec<(usize, &str)> = Vec::new();
    for (i, key) in wanted {
        // In ASCII text a line loosely equal to the key holds the key's
        // first word as it is: a substring search finds the few lines to
        // compare.
        match key.split(' ').next().filter(|w| ascii && !w.is_empty()) {
            Some(word) => {
                let mut last = None;
                for at in memchr::memmem::find_iter(text.as_bytes(), word.as_bytes()) {
                    let j = lines.line_of(at);
                    if last != Some(j) && loosely_equal(lines.line(text, j), key, ascii) {
                        out[i].push(j);
                    }
                    last = Some(j);
                }
            }
            None => scan.push((i, key)),
        }
    }
    if scan.is_empty() {
        return out;
    }
    for j in 0..lines.count() {
        let line = lines.line(text, j);
        for &(i, key) in &scan {
            if loosely_equal(line, key, ascii) {
                out[i].push(j);
            }
        }
    }
    out
}

/// [`find`] given the lines [`first_lines`] found for this probe.
pub(crate) fn find_from(
    text: &str,
    lines: &LineIndex,
    probe: &Probe,
    first: &[usize],
) -> Option<Found> {
    if !probe.searchable(lines) {
        return None;
    }
    // Each level is looser than the one before, so lines that fail the
    // loosest comparison fail them all: the levels look only at places
    // whose lines match old's loosely (hashed keys, matched as a sequence
    // in linear time even when old is thousands of equal lines).
    let m = probe.old_lines.len();
    let n = lines.count();
    let first = &first[..first.partition_point(|&j| j + m <= n)];
    // Only the lines the candidate places cover are hashed.
    let old_loose: Vec<u64> = probe.old_lines.iter().map(|l| loose_hash(l) | 1).collect();
    let starts: Vec<usize> = matched_in(first, m, &old_loose, |j| {
        loose_hash(lines.line(text, j)) | 1
    })
    .into_iter()
    .filter(|&j| probe.allows(lines, j, m, text.len()))
    .collect();
    let file_unit = match &probe.file_unit {
        _ if starts.is_empty() => Indentation::default(),
        Some(unit) => unit.get().0,
        None => Indentation::of_file((0..n).map(|i| lines.line(text, i))),
    };
    for level in Level::TOLERANT {
        let mut found = if starts.is_empty() {
            Found {
                level,
                matches: Vec::new(),
                unsure: false,
            }
        } else {
            find_at(text, lines, probe, level, file_unit, &starts)
        };
        if found.matches.is_empty() && level == Level::Typography && m == 1 && !probe.old_nl {
            found.matches = find_in_lines(text, lines, probe.old_lines[0]);
            found
                .matches
                .retain(|x| probe.allows_range(lines, &x.range, text.len()));
        }
        if !found.matches.is_empty() || found.unsure {
            return Some(found);
        }
    }
    None
}

/// Where `needle` (m line keys) matches among the lines that the places
/// `starts` (ascending) cover, each place covering its m lines: the covered
/// lines are keyed once, in runs, and each run is searched by
/// Knuth-Morris-Pratt, so the cost follows the lines covered, not the
/// file's length, and stays linear on runs of equal lines.
fn matched_in(
    starts: &[usize],
    m: usize,
    needle: &[u64],
    key_of: impl Fn(usize) -> u64,
) -> Vec<usize> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < starts.len() {
        let from = starts[i];
        let mut to = from + m;
        i += 1;
        while i < starts.len() && starts[i] <= to {
            to = to.max(starts[i] + m);
            i += 1;
        }
        let keys: Vec<u64> = (from..to).map(&key_of).collect();
        found.extend(kmp_all(&keys, needle).into_iter().map(|j| j + from));
    }
    found
}

/// Every start of `needle` in `hay` (overlapping), by Knuth-Morris-Pratt.
fn kmp_all<T: Eq>(hay: &[T], needle: &[T]) -> Vec<usize> {
    let m = needle.len();
    let mut found = Vec::new();
    if m == 0 || m > hay.len() {
        return found;
    }
    let mut fail = vec![0usize; m];
    let mut k = 0;
    for i in 1..m {
        while k > 0 && needle[i] != needle[k] {
            k = fail[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut q = 0;
    for (i, x) in hay.iter().enumerate() {
        while q > 0 && needle[q] != *x {
            q = fail[q - 1];
        }
        if needle[q] == *x {
            q += 1;
        }
        if q == m {
            found.push(i + 1 - m);
            q = fail[m - 1];
        }
    }
    found
}

fn find_at(
    text: &str,
    lines: &LineIndex,
    probe: &Probe,
    level: Level,
    file_unit: Indentation,
    starts: &[usize],
) -> Found {
    let m = probe.old_lines.len();
    // This level's keys, hashed, for the lines the candidates cover only.
    let old_keys: Vec<u64> = probe
        .old_lines
        .iter()
        .map(|l| hash_bytes(key(level, l).as_bytes()) | 1)
        .collect();
    let mut candidates = matched_in(starts, m, &old_keys, |j| {
        hash_bytes(key(level, lines.line(text, j)).as_bytes()) | 1
    });
    if let Some(target) = probe.near_line {
        // Nearest first: the hint decides among them.
        candidates.sort_by_key(|&j| (j.abs_diff(target), j));
    }
    let mut found = Found {
        level,
        matches: Vec::new(),
        unsure: false,
    };
    let mut work = 0;
    for &first in &candidates {
        if !probe.all {
            match (probe.near_line, found.matches.first()) {
                // Nearest first: a farther one cannot change the choice,
                // and a second at the same distance is a tie.
                (Some(target), Some(m0))
                    if first.abs_diff(target) > m0.first_line.abs_diff(target)
                        || found.matches.len() >= 2 =>
                {
                    break;
                }
                // Two places: ambiguous; the rest need no checking.
                (None, _) if found.matches.len() >= 2 => {
                    found.unsure = true;
                    break;
                }
                _ => {}
            }
        }
        work += m;
        if work > WORK {
            found.unsure = true;
            break;
        }
        let file_lines: Vec<&str> = (first..first + m).map(|i| lines.line(text, i)).collect();
        // Trailing whitespace leaves indentation as it is; the indentation
        // level needs one prefix; looser levels any reading.
        if level != Level::TrailingWhitespace
            && !indent::fits(
                level == Level::Indentation,
                &probe.old_lines,
                &file_lines,
                file_unit,
            )
        {
            continue;
        }
        let last = first + m - 1;
        let mut end = lines.end(last);
        if probe.old_nl && lines.has_newline(last) {
            end += 1;
        }
        found.matches.push(Match {
            range: lines.start(first)..end,
            first_line: first,
            line_count: m,
            partial: false,
        });
    }
    found.matches.sort_by_key(|x| x.first_line);
    found
}

/// Whether a match's lines compare equal to old's at its level, key by
/// key (the search compared hashes).
pub(crate) fn verified(
    text: &str,
    lines: &LineIndex,
    probe: &Probe,
    level: Level,
    m: &Match,
) -> bool {
    if m.partial {
        return true;
    }
    probe
        .old_lines
        .iter()
        .enumerate()
        .all(|(i, o)| key(level, lines.line(text, m.first_line + i)) == key(level, o))
}

/// A one-line old inside a longer line, comparing with typography folded.
fn find_in_lines(text: &str, lines: &LineIndex, old: &str) -> Vec<Match> {
    let needle: String = old.chars().map(fold_char).collect();
    let needle_chars = needle.chars().count();
    let mut found: Vec<Match> = Vec::new();
    let mut push = |line: usize, from: usize, to: usize| {
        found.push(Match {
            range: lines.start(line) + from..lines.start(line) + to,
            first_line: line,
            line_count: 1,
            partial: true,
        })
    };
    // Folding leaves ASCII alone, so in ASCII lines the folded needle is
    // searched as it is (and only if folding changed it: otherwise the
    // exact search already looked).
    if needle != old {
        for at in find_overlapping(text.as_bytes(), needle.as_bytes()) {
            let line = lines.line_of(at);
            if lines.line(text, line).is_ascii() {
                push(
                    line,
                    at - lines.start(line),
                    at - lines.start(line) + needle.len(),
                );
            }
        }
    }
    // Folding changes only non-ASCII lines.
    let lines_to_fold = if text.is_ascii() { 0 } else { lines.count() };
    for i in 0..lines_to_fold {
        let line = lines.line(text, i);
        if line.is_ascii() || line.len() < needle.len() / 4 {
            continue;
        }
        let chars: Vec<(usize, char)> = line
            .char_indices()
            .map(|(at, c)| (at, fold_char(c)))
            .collect();
        for start in 0..(chars.len() + 1).saturating_sub(needle_chars) {
            let window = chars[start..start + needle_chars].iter().map(|&(_, c)| c);
            if window.eq(needle.chars()) {
                let to = chars
                    .get(start + needle_chars)
                    .map_or(line.len(), |&(at, _)| at);
                push(i, chars[start].0, to);
            }
        }
    }
    found.sort_by_key(|m| m.range.start);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_loose_comparison_agrees_with_the_key() {
        let lines = [
            "    value_1 = compute(1);",
            "value_1   =\tcompute(1);  ",
            "value_1 = compute(2);",
            "cafe\u{301} = 1",
            "caf\u{e9} = 1",
            "x\u{200b}y",
            "xy",
            "\u{a0}\u{a0}x = \u{201c}a\u{201d}",
            "x = \"a\"",
            "",
            "   \x0b ",
            "\u{ff41}bc",
            "abc",
        ];
        for line in lines {
            for other in lines {
                let k = key(Level::InnerWhitespace, other);
                let want = key(Level::InnerWhitespace, line) == k;
                let ascii = line.is_ascii();
                assert_eq!(
                    loosely_equal(line, &k, ascii),
                    want,
                    "{line:?} vs {other:?}"
                );
                assert_eq!(
                    loosely_equal(line, &k, false),
                    want,
                    "{line:?} vs {other:?}"
                );
            }
        }
    }

    /// Apply old→new at the first tolerant level, as the engine would.
    fn tolerant(text: &str, old: &str, new: &str) -> Option<(Level, String)> {
        let lines = LineIndex::new(text);
        let Found {
            level,
            matches: found,
            ..
        } = find(text, &lines, &Probe::new(old, new))?;
        assert_eq!(found.len(), 1, "ambiguous at {level:?}");
        let rep = replacement(text, &lines, &found[0], &Probe::new(old, new), new).unwrap();
        let mut out = text.to_string();
        out.replace_range(found[0].range.clone(), &rep);
        Some((level, out))
    }

    #[test]
    fn trailing_whitespace_keeps_untouched_lines() {
        let text = "a = 1   \nb = 2  \nc = 3\n";
        let (level, out) = tolerant(text, "a = 1\nb = 2\n", "a = 1\nb = 20\n").unwrap();
        assert_eq!(level, Level::TrailingWhitespace);
        assert_eq!(out, "a = 1   \nb = 20\nc = 3\n");
    }

    #[test]
    fn uniform_indentation_offset_reindents_new_lines() {
        let text = "fn f() {\n        if x {\n            y();\n        }\n}\n";
        let (level, out) = tolerant(
            text,
            "if x {\n    y();\n}\n",
            "if x {\n    y();\n    z();\n}\n",
        )
        .unwrap();
        assert_eq!(level, Level::Indentation);
        assert_eq!(
            out,
            "fn f() {\n        if x {\n            y();\n            z();\n        }\n}\n"
        );
    }

    #[test]
    fn model_indents_more_than_the_file() {
        let text = "def f():\n    return 1\n";
        let (level, out) = tolerant(
            text,
            "        def f():\n            return 1\n",
            "        def f():\n            return 2\n",
        )
        .unwrap();
        assert_eq!(level, Level::Indentation);
        assert_eq!(out, "def f():\n    return 2\n");
    }

    #[test]
    fn tabs_versus_spaces_by_file_unit() {
        let text = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n";
        let (level, out) = tolerant(
            text,
            "    if x {\n        y()\n    }\n",
            "    if x {\n        y()\n        z()\n    }\n",
        )
        .unwrap();
        assert_eq!(level, Level::IndentUnit);
        assert_eq!(out, "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n");
    }

    #[test]
    fn two_space_model_into_four_space_file() {
        let text = "class A:\n    def f(self):\n        return 1\n";
        let (level, out) = tolerant(
            text,
            "def f(self):\n  return 1\n",
            "def f(self):\n  if self.x:\n    return 2\n  return 1\n",
        )
        .unwrap();
        assert_eq!(level, Level::IndentUnit);
        assert_eq!(
            out,
            "class A:\n    def f(self):\n        if self.x:\n            return 2\n        return 1\n"
        );
    }

    #[test]
    fn typography_folds_quotes_dashes_spaces() {
        let (level, out) = tolerant(
            "say(\u{201c}hi\u{201d}) \u{2014} ok\n",
            "say(\"hi\") - ok",
            "say(\"bye\")",
        )
        .unwrap();
        assert_eq!(level, Level::Typography);
        assert_eq!(out, "say(\"bye\")\n");
        // Inside a longer line.
        let (_, out) = tolerant("x = f(\u{2018}a\u{2019}) + 1\n", "f('a')", "g('a')").unwrap();
        assert_eq!(out, "x = g('a') + 1\n");
    }

    #[test]
    fn inner_whitespace_runs() {
        let (level, out) = tolerant(
            "let  x   =  1;\nlet y = 2;\n",
            "let x = 1;\n",
            "let x = 10;\n",
        )
        .unwrap();
        assert_eq!(level, Level::InnerWhitespace);
        assert_eq!(out, "let x = 10;\nlet y = 2;\n");
    }

    #[test]
    fn ambiguity_stops_at_the_level_that_found_it() {
        let text = "x = 1  \nx = 1 \n";
        let lines = LineIndex::new(text);
        let found = find(text, &lines, &Probe::new("x = 1\n", "x = 2\n")).unwrap();
        assert_eq!(
            (found.level, found.matches.len()),
            (Level::TrailingWhitespace, 2)
        );
    }

    #[test]
    fn two_spaces_per_tab_at_one_depth() {
        // No step in old to learn the unit from: the place decides it.
        let text = "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n";
        let (level, out) = tolerant(
            text,
            "    y()\n    z()\n",
            "    y()\n    if w {\n      v()\n    }\n    z()\n",
        )
        .unwrap();
        assert_eq!(level, Level::IndentUnit);
        assert_eq!(
            out,
            "func f() {\n\tif x {\n\t\ty()\n\t\tif w {\n\t\t\tv()\n\t\t}\n\t\tz()\n\t}\n}\n"
        );
    }

    #[test]
    fn a_continuation_line_two_levels_deeper_is_not_the_unit() {
        let text = "func f() {\n\tcall(a,\n\t\t\tb)\n\tdone()\n}\n";
        let (level, out) = tolerant(
            text,
            "    call(a,\n            b)\n    done()\n",
            "    call(a,\n            b)\n    if ok {\n        done()\n    }\n",
        )
        .unwrap();
        assert_eq!(level, Level::IndentUnit);
        assert_eq!(
            out,
            "func f() {\n\tcall(a,\n\t\t\tb)\n\tif ok {\n\t\tdone()\n\t}\n}\n"
        );
    }

    #[test]
    fn invisible_characters_are_ignored_and_kept() {
        let text = "let a\u{200b} = 1;\nlet b = 2;\n";
        let (level, out) =
            tolerant(text, "let a = 1;\nlet b = 2;\n", "let a = 1;\nlet b = 3;\n").unwrap();
        assert_eq!(level, Level::Invisible);
        assert_eq!(out, "let a\u{200b} = 1;\nlet b = 3;\n");
    }

    #[test]
    fn thousands_of_equal_lines_are_linear() {
        let text = "  x = 1;\n".repeat(50_000);
        let old = "x = 1;\n".repeat(10_000);
        let lines = LineIndex::new(&text);
        let found = find(&text, &lines, &Probe::new(&old, "y\n")).unwrap();
        assert!(found.matches.len() >= 2 && found.unsure);
    }

    #[test]
    fn missing_final_newline_stays_missing() {
        let (_, out) = tolerant("a\n  b  ", "  b\n", "  c\n").unwrap();
        assert_eq!(out, "a\n  c");
    }
}
