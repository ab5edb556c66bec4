//! Line numbers a model copied into old from a tool's output: fs-read's
//! `{:>6}\t` (what `prim::fs` prints), grep's `N:` (index-grep's
//! `path:N:`), the `N→` and `N|` / `N | ` of other tools' reads, padded
//! to a width or not, and a padded number with a two-space gutter
//! (`{:>5}  `).
//!
//! old is read as numbered when each of its lines carries the same form of
//! number (a blank line may have lost its number, and the first line may
//! be cut after the number, as when a selection starts there) and the
//! numbers count up by one. new is stripped only when it is numbered the
//! same way; when some of its lines merely look numbered (a dict's `1:`, a
//! TSV row, a time like `12:00`) they are its text. Where the two readings
//! of new cannot be told apart the edit is refused, never guessed.

/// What separates a copied number from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Separator {
    /// `     12\tline` (fs-read, cat -n).
    Tab,
    /// `12:line` or `src/a.rs:12:line` (grep -n, index-grep; a space
    /// after the colon is the line's own).
    Colon,
    /// `    12→line`.
    Arrow,
    /// `12|line` or `  12 | line`.
    Bar,
    /// `   12  line`: a gutter of two spaces after a padded number
    /// (`{:>5}  `, as some tools' reads and `nl`-style listings print).
    /// Read only padded: an unpadded `12  x` is too likely text.
    Spaces,
}

const SEPARATORS: [Separator; 5] = [
    Separator::Tab,
    Separator::Colon,
    Separator::Arrow,
    Separator::Bar,
    Separator::Spaces,
];

/// One form of copied number: its separator, and the width numbers were
/// right-aligned in (None: written without padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Form {
    sep: Separator,
    width: Option<usize>,
    /// `N | line`: the space after the bar belongs to the number.
    bar_space: bool,
    /// `path:N:line`: the path before the number, the same on every line.
    path: Option<String>,
}

/// A line's number and what follows it, under a separator; also the
/// padding before the number and whether a bar had a space after it.
struct Parsed<'a> {
    number: usize,
    pad: usize,
    digits: usize,
    rest: &'a str,
    space_after_bar: bool,
}

fn parse<'a>(line: &'a str, sep: Separator, path: Option<&str>) -> Option<Parsed<'a>> {
    let line = match path {
        Some(path) => line.strip_prefix(path)?.strip_prefix(':')?,
        None => line,
    };
    let body = line.trim_start_matches(' ');
    let pad = line.len() - body.len();
    let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 9 {
        return None;
    }
    let number = body[..digits].parse().ok()?;
    let after = &body[digits..];
    let parsed = |rest, space_after_bar| {
        Some(Parsed {
            number,
            pad,
            digits,
            rest,
            space_after_bar,
        })
    };
    match sep {
        Separator::Tab | Separator::Arrow => {
            let mark = if sep == Separator::Tab { "\t" } else { "→" };
            match after.strip_prefix(mark) {
                Some(rest) => parsed(rest, false),
                // A blank line's number, with what followed it trimmed.
                None if after.is_empty() => parsed("", false),
                None => None,
            }
        }
        Separator::Colon => parsed(after.strip_prefix(':')?, false),
        Separator::Spaces if pad == 0 && digits < 5 => None,
        Separator::Spaces => match after.strip_prefix("  ") {
            Some(rest) => parsed(rest, false),
            None if after.trim().is_empty() => parsed("", false),
            None => None,
        },
        Separator::Bar => {
            let rest = after
                .strip_prefix(" |")
                .or_else(|| after.strip_prefix('|'))?;
            parsed(rest, rest.starts_with(' '))
        }
    }
}

impl Form {
    /// The number and the line without it, when `line` carries this form.
    fn split<'a>(&self, line: &'a str) -> Option<(usize, &'a str)> {
        let p = parse(line, self.sep, self.path.as_deref())?;
        let width_ok = match self.width {
            None => p.pad == 0,
            Some(w) => p.pad + p.digits == w || (p.pad == 0 && p.digits >= w),
        };
        if !width_ok {
            return None;
        }
        let rest = match (self.bar_space, p.rest.strip_prefix(' ')) {
            (true, Some(rest)) => rest,
            _ => p.rest,
        };
        Some((p.number, rest))
    }
}

/// old's lines read as numbered: the form, each line's number (None for a
/// line without one) and each line without its number.
pub(crate) struct Numbered<'a> {
    pub form: Form,
    pub numbers: Vec<Option<usize>>,
    pub lines: Vec<&'a str>,
}

impl Numbered<'_> {
    /// The number old's first line stands for.
    pub fn start(&self) -> usize {
        self.numbers
            .iter()
            .enumerate()
            .find_map(|(i, n)| n.map(|n| n.saturating_sub(i)))
            .unwrap_or(1)
    }

    /// Whether the numbers count up by one from the first line.
    pub fn consecutive(&self) -> bool {
        let start = self.start();
        start >= 1
            && self
                .numbers
                .iter()
                .enumerate()
                .all(|(i, n)| n.is_none_or(|n| n == start + i))
    }

    /// The first place the numbers skip, as (before, after).
    pub fn gap(&self) -> Option<(usize, usize)> {
        let known: Vec<usize> = self.numbers.iter().flatten().copied().collect();
        known
            .windows(2)
            .find(|w| w[1] != w[0] + 1)
            .map(|w| (w[0], w[1]))
    }
}

/// old's lines as copied numbered lines: each line carries the same form
/// of number, numbers ascending, except blank lines (whose number may have
/// been trimmed away) and the first line (a copy that starts after a
/// number), with at least two numbered lines when the first has none.
/// Gaps are allowed here; matching needs [`Numbered::consecutive`].
pub(crate) fn numbered<'a>(old_lines: &[&'a str]) -> Option<Numbered<'a>> {
    SEPARATORS
        .into_iter()
        .find_map(|sep| numbered_as(old_lines, sep))
}

fn numbered_as<'a>(old_lines: &[&'a str], sep: Separator) -> Option<Numbered<'a>> {
    numbered_with(old_lines, sep, None).or_else(|| {
        // grep's `path:N:`: the path is what comes before the first colon
        // of a line whose number follows it.
        if sep != Separator::Colon {
            return None;
        }
        let path = old_lines.iter().find_map(|l| {
            let (path, rest) = l.split_once(':')?;
            let plain = !path.is_empty() && !path.contains(char::is_whitespace);
            (plain && rest.starts_with(|c: char| c.is_ascii_digit())).then_some(path)
        })?;
        numbered_with(old_lines, sep, Some(path))
    })
}

fn numbered_with<'a>(
    old_lines: &[&'a str],
    sep: Separator,
    path: Option<&str>,
) -> Option<Numbered<'a>> {
    let parsed: Vec<Option<Parsed>> = old_lines.iter().map(|l| parse(l, sep, path)).collect();
    let carried: Vec<&Parsed> = parsed.iter().flatten().collect();
    let first_bare = parsed.first().is_some_and(|p| p.is_none())
        && old_lines.first().is_some_and(|l| !l.trim().is_empty());
    if carried.is_empty() || (first_bare && carried.len() < 2) {
        return None;
    }
    // Every line but a blank one (and the first) carries a number.
    let all_carry = parsed
        .iter()
        .zip(old_lines)
        .enumerate()
        .all(|(i, (p, l))| p.is_some() || l.trim().is_empty() || i == 0);
    if !all_carry {
        return None;
    }
    let padded = carried.iter().any(|p| p.pad > 0);
    let width = if padded {
        let w = carried
            .iter()
            .find(|p| p.pad > 0)
            .map(|p| p.pad + p.digits)?;
        Some(w)
    } else {
        None
    };
    let bar_space = sep == Separator::Bar
        && carried
            .iter()
            .filter(|p| !p.rest.is_empty())
            .all(|p| p.space_after_bar);
    let form = Form {
        sep,
        width,
        bar_space,
        path: path.map(str::to_string),
    };
    let mut numbers = Vec::with_capacity(old_lines.len());
    let mut lines = Vec::with_capacity(old_lines.len());
    let mut last = 0;
    for (i, l) in old_lines.iter().enumerate() {
        match form.split(l) {
            Some((n, rest)) => {
                if n <= last {
                    return None;
                }
                last = n;
                numbers.push(Some(n));
                lines.push(rest);
            }
            None if l.trim().is_empty() || i == 0 => {
                numbers.push(None);
                lines.push(*l);
            }
            None => return None,
        }
    }
    Some(Numbered {
        form,
        numbers,
        lines,
    })
}

/// Whether most of old's lines (two or more) start with a number in one
/// form: too few to strip with confidence, enough that lines shown to the
/// model had better go without numbers.
pub(crate) fn looks_numbered(old_lines: &[&str]) -> bool {
    let filled = old_lines.iter().filter(|l| !l.trim().is_empty()).count();
    SEPARATORS.into_iter().any(|sep| {
        let carry = old_lines
            .iter()
            .filter(|l| parse(l, sep, None).is_some())
            .count();
        carry >= 2 && carry * 2 > filled
    })
}

/// How to read new beside an old that was numbered.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NewReading {
    /// new has no copied numbers: as sent.
    AsSent,
    /// new without its copied numbers.
    Stripped(String),
    /// A line of new starts with what may be a copied number or may be its
    /// text, and the two readings write different files: that line.
    Unclear(String),
}

/// new read beside `old` (numbered as `copied`, with consecutive numbers):
/// stripped when it is numbered the same way (the same form, each line
/// numbered from old's first number on) or when its numbered lines are
/// old's lines with numbers; as sent when its lines that look numbered are
/// old's own text or carry numbers no copy could have; otherwise unclear.
pub(crate) fn read_new(copied: &Numbered, new: &str) -> NewReading {
    let (new_lines, new_nl) = crate::edit::text::split_lines(new);
    let form = &copied.form;
    let start = copied.start();
    let split: Vec<Option<(usize, &str)>> = new_lines.iter().map(|l| form.split(l)).collect();
    if split.iter().all(Option::is_none) {
        return NewReading::AsSent;
    }
    let stripped = || {
        let mut out: Vec<&str> = new_lines
            .iter()
            .zip(&split)
            .map(|(l, s)| s.map_or(*l, |(_, rest)| rest))
            .collect();
        if new_nl {
            out.push("");
        }
        NewReading::Stripped(out.join("\n"))
    };
    // Votes from old's own lines: a numbered-looking line of new that is
    // one of old's lines as it is is text; one that is old's line once
    // its number is off was numbered.
    let (mut as_text, mut as_number) = (0, 0);
    for (l, s) in new_lines.iter().zip(&split) {
        if let Some((_, rest)) = s {
            as_text += usize::from(copied.lines.contains(l));
            as_number += usize::from(copied.lines.contains(rest));
        }
    }
    let numbered_alike = new_lines
        .iter()
        .zip(&split)
        .enumerate()
        .all(|(i, (l, s))| match s {
            Some((n, _)) => *n == start + i,
            None => l.trim().is_empty(),
        });
    if as_text > 0 && as_number == 0 {
        return NewReading::AsSent;
    }
    if numbered_alike || (as_number > 0 && as_text == 0) {
        return stripped();
    }
    // A number no copy of these lines could carry is text (`12:00`).
    let reach = start + copied.lines.len() + new_lines.len();
    let unclear = new_lines
        .iter()
        .zip(&split)
        .find(|(_, s)| s.is_some_and(|(n, _)| (start..=reach).contains(&n)));
    match unclear {
        Some((l, _)) => NewReading::Unclear(l.to_string()),
        None => NewReading::AsSent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<&str> {
        crate::edit::text::split_lines(s).0
    }

    #[test]
    fn every_form_with_or_without_padding() {
        for old in [
            "     5\tline 5\n     6\tline 6\n",
            "5\tline 5\n6\tline 6\n",
            "5:line 5\n6:line 6\n",
            "     5→line 5\n     6→line 6\n",
            "5→line 5\n6→line 6\n",
            "5|line 5\n6|line 6\n",
            "  5 | line 5\n  6 | line 6\n",
            "src/a.rs:5:line 5\nsrc/a.rs:6:line 6\n",
        ] {
            let n = numbered(&lines(old)).unwrap_or_else(|| panic!("{old:?}"));
            assert_eq!(n.lines, ["line 5", "line 6"], "{old:?}");
            assert_eq!(n.start(), 5);
            assert!(n.consecutive());
        }
    }

    #[test]
    fn widths_change_at_a_power_of_ten() {
        let n = numbered(&lines("    99\ta\n   100\tb\n")).unwrap();
        assert_eq!(n.lines, ["a", "b"]);
        assert!(n.consecutive());
    }

    #[test]
    fn a_gap_and_a_first_line_without_its_number() {
        let n = numbered(&lines("     5\tline 5\n     7\tline 7\n")).unwrap();
        assert!(!n.consecutive());
        assert_eq!(n.gap(), Some((5, 7)));
        let n = numbered(&lines("line 5\n     6\tline 6\n     7\tline 7\n")).unwrap();
        assert_eq!(n.lines, ["line 5", "line 6", "line 7"]);
        assert_eq!(n.start(), 5);
        assert!(n.consecutive());
        // One numbered line after an unnumbered first is too little.
        assert!(numbered(&lines("foo\n5:bar\n")).is_none());
        // Numbers going down are not a copy.
        assert!(numbered(&lines("7:a\n5:b\n")).is_none());
        // A line in the middle without its number: not to strip, but
        // numbered enough that lines are shown without numbers.
        let partly = lines("5\tline 5\nline 6\n7\tline 7\n");
        assert!(numbered(&partly).is_none());
        assert!(looks_numbered(&partly));
        assert!(!looks_numbered(&lines("a\n5:b\nc\n")));
    }

    #[test]
    fn new_is_stripped_only_when_numbered_the_same_way() {
        let old = lines("1:d = {\n2:    1: 'one',\n3:}\n");
        let copied = numbered(&old).unwrap();
        // A dict's keys, padded where old's numbers are not: text.
        assert_eq!(
            read_new(&copied, "d = {\n    1: 'one',\n    2: 'two',\n}\n"),
            NewReading::AsSent
        );
        assert_eq!(
            read_new(&copied, "1:d = {\n2:    1: 'one',\n3:    2: 'two',\n4:}\n"),
            NewReading::Stripped("d = {\n    1: 'one',\n    2: 'two',\n}\n".into())
        );
        // A TSV's first column, unpadded where old's numbers are padded.
        let old = lines("     2\t1\tx\n     3\t2\ty\n");
        let copied = numbered(&old).unwrap();
        assert_eq!(read_new(&copied, "1\tx\n2\ty\n3\tz\n"), NewReading::AsSent);
        // A time is no line number of this copy.
        let old = lines("1:times:\n2:  - 10:30\n");
        let copied = numbered(&old).unwrap();
        assert_eq!(
            read_new(&copied, "times:\n12:00\n  - 10:30\n"),
            NewReading::AsSent
        );
        // Kept lines numbered, an inserted line not.
        let old = lines("5:a\n6:b\n");
        let copied = numbered(&old).unwrap();
        assert_eq!(
            read_new(&copied, "5:a\nX\n6:b\n"),
            NewReading::Stripped("a\nX\nb\n".into())
        );
        // Old's lines with their own `N:` text, new the same lines as text.
        let old = lines("2:2:b\n3:3:c\n");
        let copied = numbered(&old).unwrap();
        assert_eq!(read_new(&copied, "2:b\n3:c\n4:d\n"), NewReading::AsSent);
        // Nothing tells the readings apart.
        let old = lines("5:a\n6:b\n");
        let copied = numbered(&old).unwrap();
        assert_eq!(
            read_new(&copied, "a\n6:x\n"),
            NewReading::Unclear("6:x".into())
        );
    }
}
