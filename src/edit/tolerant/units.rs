//! Indent units: what one level of indentation is in a text (a tab, or n
//! spaces), learnt from the steps between lines that start statements.
//!
//! Continuation lines do not count: a line inside an open `(` or `[`, after
//! a line that ends in an operator or a backslash, inside a block comment
//! or a string across lines aligns with something (or is text) rather than
//! indenting a block (a 4-space file's hanging argument 8 deeper is not an
//! 8-space unit). A step is measured from the statement before, not from a
//! list item between them (a line ending in a comma), and a unit seen only
//! in steps to items is a guess (`Indentation::sure`). Of the lines left,
//! the largest unit that divides nearly every line's width and nearly every
//! step wins (a 2-space file whose few 4-space steps are all multiples of 2
//! stays 2-space).

use super::keys::{trim_start_ws, trim_ws};

/// One indent level of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Tab,
    Spaces(usize),
}

impl Unit {
    /// An indentation as (levels, spaces left over) in this unit; None when
    /// it cannot be written in this unit at all (a tab in a spaces unit, a
    /// tab after a space, other whitespace).
    pub fn measure(self, indent: &str) -> Option<(usize, usize)> {
        match self {
            Unit::Tab => {
                let rest = indent.trim_start_matches('\t');
                let tabs = indent.len() - rest.len();
                rest.bytes()
                    .all(|b| b == b' ')
                    .then_some((tabs, rest.len()))
            }
            Unit::Spaces(n) => indent
                .bytes()
                .all(|b| b == b' ')
                .then_some((indent.len() / n, indent.len() % n)),
        }
    }

    /// Whether an indentation is whole units of this one, in its character.
    pub fn whole(self, indent: &str) -> bool {
        self.measure(indent).is_some_and(|(_, left)| left == 0)
    }

    pub fn render(self, levels: usize) -> String {
        match self {
            Unit::Tab => "\t".repeat(levels),
            Unit::Spaces(n) => " ".repeat(levels * n),
        }
    }

    /// How the unit reads in a message: "a tab", "4 spaces".
    pub fn describe(self) -> String {
        match self {
            Unit::Tab => "a tab".to_string(),
            Unit::Spaces(1) => "1 space".to_string(),
            Unit::Spaces(n) => format!("{n} spaces"),
        }
    }
}

/// What a text's indentation says about its unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Indentation {
    pub unit: Option<Unit>,
    /// Every line that starts a statement is indented in `unit`'s
    /// character (tabs, or spaces) alone: a line in the other is foreign.
    pub keeps_character: bool,
    /// And in whole units of `unit`: a line that is not is foreign.
    pub keeps_unit: bool,
    /// `unit` was seen in a step to a line that is not an item of a list
    /// (ending in a comma): a file indented only by items says little
    /// about the depth of a block.
    pub sure: bool,
}

/// Step sizes a unit may have, largest first.
pub(super) const UNIT_SIZES: [usize; 4] = [8, 4, 3, 2];
/// Steps longer than this are not counted at all.
const LONGEST_STEP: usize = 16;

impl Indentation {
    /// A whole file's indentation: its first line stands at depth 0.
    pub fn of_file<'a>(lines: impl Iterator<Item = &'a str>) -> Indentation {
        detect(lines, Some(0))
    }

    /// A snippet's (old or new as a model sent it): its first line's depth
    /// is not a step, since a snippet may start anywhere.
    pub fn of_snippet<'a>(lines: impl Iterator<Item = &'a str>) -> Indentation {
        detect(lines, None)
    }
}

fn detect<'a>(lines: impl Iterator<Item = &'a str>, start: Option<usize>) -> Indentation {
    let mut continuation = Continuation::default();
    let (mut tab_lines, mut space_lines, mut odd_lines) = (0usize, 0usize, 0usize);
    // steps[k]: how many times a statement starts k spaces deeper than the
    // one before it; item_steps[k] the same for lines that end in a comma
    // (items of a list, arguments), counted only where nothing else is.
    let mut steps = [0usize; LONGEST_STEP + 1];
    let mut item_steps = [0usize; LONGEST_STEP + 1];
    // off_grid[s]: space-indented statements whose width is not a multiple
    // of s.
    let mut off_grid = [0usize; 9];
    let mut previous = start;
    // The narrowest space indentation of a statement (in a whole file,
    // where it is a step from column 0).
    let mut narrowest: Option<usize> = None;
    for line in lines {
        let indent = indent_of(line);
        if indent.len() == line.len() {
            continue;
        }
        if continuation.continues(line, indent.len()) != LineKind::Statement {
            continue;
        }
        let width = indent.len();
        match indent.as_bytes().first() {
            None => {}
            Some(b'\t') if Unit::Tab.whole(indent) => tab_lines += 1,
            Some(b' ') if !indent.contains(|c| c != ' ') => {
                space_lines += 1;
                if start.is_some() {
                    narrowest = Some(narrowest.map_or(width, |n: usize| n.min(width)));
                }
                for (size, count) in off_grid.iter_mut().enumerate().skip(1) {
                    *count += usize::from(!width.is_multiple_of(size));
                }
            }
            // A tab then alignment spaces, or other whitespace.
            Some(b'\t') => {
                tab_lines += 1;
                odd_lines += 1;
            }
            Some(_) => {
                space_lines += 1;
                odd_lines += 1;
            }
        }
        let spaces_only = !indent.contains('\t');
        let item = line.trim_end().ends_with(',');
        if spaces_only
            && let Some(p) = previous
            && width > p
            && width - p <= LONGEST_STEP
        {
            match item {
                true => item_steps[width - p] += 1,
                false => steps[width - p] += 1,
            }
        }
        // A statement's step is from the statement before it, not from an
        // item between them.
        if !item || previous.is_none() {
            previous = spaces_only.then_some(width);
        }
    }
    if tab_lines > space_lines {
        return Indentation {
            unit: Some(Unit::Tab),
            keeps_character: space_lines == 0,
            keeps_unit: space_lines == 0 && odd_lines == 0,
            sure: true,
        };
    }
    let sure = steps[2..].iter().any(|&c| c > 0);
    if !sure {
        // A snippet says nothing by its items alone; a file, a little.
        if start.is_none() {
            return Indentation::default();
        }
        steps = item_steps;
    }
    let total: usize = steps[2..].iter().sum();
    let covered = |size: usize| -> usize { steps.iter().step_by(size).skip(1).sum() };
    // A snippet may start at any depth: its widths say nothing, its steps
    // do.
    let widths_agree =
        |s: usize| start.is_none() || (space_lines - off_grid[s]) * 20 >= space_lines * 19;
    let size = UNIT_SIZES
        .iter()
        .copied()
        .filter(|&s| steps[s] > 0 || narrowest == Some(s))
        .find(|&s| {
            // Nearly every width, and nearly every step: a line or two of
            // odd alignment the continuation rules missed may stand.
            widths_agree(s) && covered(s) * 5 >= total * 4
        })
        .or_else(|| {
            // No unit covers nearly every step: the most common, the
            // smaller on a tie.
            UNIT_SIZES
                .iter()
                .copied()
                .filter(|&s| steps[s] > 0)
                .max_by_key(|&s| (steps[s], std::cmp::Reverse(s)))
        });
    match size {
        Some(n) => Indentation {
            unit: Some(Unit::Spaces(n)),
            keeps_character: tab_lines == 0,
            keeps_unit: tab_lines == 0 && odd_lines == 0 && off_grid[n] == 0,
            sure,
        },
        None => Indentation::default(),
    }
}

/// What a line is to the indentation around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// It starts a statement: its depth is structure.
    Statement,
    /// It continues the line before it (an open bracket, a trailing
    /// operator): its depth aligns with that line.
    Continuation,
    /// It is inside a string or a block comment: its indentation is text.
    Text,
}

/// For each line with text, what it is (`LineKind`).
pub(crate) fn continuations<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<LineKind> {
    let mut continuation = Continuation::default();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| continuation.continues(l, indent_of(l).len()))
        .collect()
}

/// Whether one of the `checked` lines starts a statement more than one
/// level of `unit` deeper than the line before it: blocks open one level
/// at a time, only a continuation goes deeper.
pub(crate) fn jumps(lines: &[&str], checked: &[bool], unit: Unit) -> bool {
    let mut continuation = Continuation::default();
    let mut previous: Option<usize> = None;
    for (line, &check) in lines.iter().zip(checked) {
        if line.trim().is_empty() {
            continue;
        }
        let indent = indent_of(line);
        let continues = continuation.continues(line, indent.len()) != LineKind::Statement;
        let depth = unit.measure(indent).map(|(levels, _)| levels);
        if check
            && !continues
            && let (Some(p), Some(d)) = (previous, depth)
            && d > p + 1
        {
            return true;
        }
        previous = depth;
    }
    false
}

pub(crate) fn indent_of(line: &str) -> &str {
    &line[..line.len() - trim_start_ws(line).len()]
}

/// What one line leaves open for the next: brackets, a trailing operator,
/// a block comment. Strings and line comments are skipped roughly (a
/// bracket the scan misreads is forgotten when a line comes back to the
/// depth of the line that opened it).
#[derive(Debug, Default)]
struct Continuation {
    open: usize,
    opener_width: usize,
    trailing_operator: bool,
    in_comment: bool,
    /// The quote of a string left open at the end of a line (a string
    /// across lines, a docstring): the lines inside it are its text.
    in_string: Option<u8>,
}

impl Continuation {
    /// What this line is (whether it continues an earlier one); then takes
    /// in what it leaves open for the next.
    fn continues(&mut self, line: &str, width: usize) -> LineKind {
        let body = trim_ws(line);
        let text = self.in_comment || self.in_string.is_some();
        let mut continues = self.trailing_operator
            || self.open > 0
            || body.starts_with('.') && !body.starts_with("..")
            || body.starts_with("&&")
            || body.starts_with("||");
        if self.open > 0
            && !self.in_comment
            && self.in_string.is_none()
            && !self.trailing_operator
            && width <= self.opener_width
            && !body.starts_with([')', ']'])
        {
            self.open = 0;
            continues = false;
        }
        let was_open = self.open > 0;
        self.scan(body);
        if !was_open && self.open > 0 {
            self.opener_width = width;
        }
        self.trailing_operator =
            !self.in_comment && self.in_string.is_none() && ends_in_operator(body);
        match (text, continues) {
            (true, _) => LineKind::Text,
            (false, true) => LineKind::Continuation,
            (false, false) => LineKind::Statement,
        }
    }

    fn scan(&mut self, body: &str) {
        let b = body.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if let Some(q) = self.in_string {
                match closing_quote(&b[i..], q) {
                    Some(len) => {
                        self.in_string = None;
                        i += len + 1;
                        continue;
                    }
                    None => return,
                }
            }
            if self.in_comment {
                if b[i..].starts_with(b"*/") {
                    self.in_comment = false;
                    i += 1;
                }
                i += 1;
                continue;
            }
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => return,
                b'#' if i == 0 || b[i - 1] == b' ' => return,
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    self.in_comment = true;
                    i += 1;
                }
                q @ (b'"' | b'`') => match closing_quote(&b[i + 1..], q) {
                    Some(len) => i += len + 1,
                    None => {
                        self.in_string = Some(q);
                        return;
                    }
                },
                // A character literal ('x', '\n'); otherwise an apostrophe
                // or a lifetime, read past.
                b'\'' => {
                    if let Some(len) = closing_quote(&b[i + 1..], b'\'').filter(|&l| l <= 3) {
                        i += len + 1;
                    }
                }
                b'(' | b'[' => self.open += 1,
                b')' | b']' => self.open = self.open.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
    }
}

/// Where the quote closing a string stands in `rest` (after its opening
/// quote), honouring backslash escapes.
fn closing_quote(rest: &[u8], quote: u8) -> Option<usize> {
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'\\' => i += 1,
            c if c == quote => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A line that cannot end a statement: the next line continues it.
fn ends_in_operator(body: &str) -> bool {
    let Some(last) = body.bytes().last() else {
        return false;
    };
    matches!(
        last,
        b'\\' | b'+' | b'-' | b'*' | b'/' | b'%' | b'=' | b'&' | b'|' | b'^' | b'?'
    ) && !body.ends_with("*/")
        && !body.ends_with("-->")
        && body.bytes().any(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_unit(text: &str) -> Option<Unit> {
        Indentation::of_file(text.lines()).unit
    }

    #[test]
    fn tabs_and_steps() {
        assert_eq!(file_unit("a\n\tb\n\t\tc"), Some(Unit::Tab));
        assert_eq!(file_unit("a\n  b\n    c\n  d"), Some(Unit::Spaces(2)));
        assert_eq!(file_unit("a\nb"), None);
        // A snippet's first depth is not a step.
        assert_eq!(
            Indentation::of_snippet("        a()\n    }".lines()).unit,
            None
        );
    }

    #[test]
    fn hanging_continuations_are_not_the_unit() {
        let text = "def f():\n    call(a,\n            b)\n    other(c,\n            d)\n    \
                    if x:\n        y = 1\n";
        assert_eq!(file_unit(text), Some(Unit::Spaces(4)));
        let text = "def f():\n  x = 1\n  call(a,\n      b)\n  return x\n";
        assert_eq!(file_unit(text), Some(Unit::Spaces(2)));
        // Steps of 4 that are all two 2-space levels leave the unit at 2.
        let text = "a:\n  b\n      c,\nd:\n  e\n      f,\ng:\n  h\n  i:\n    j\n";
        assert_eq!(file_unit(text), Some(Unit::Spaces(2)));
        // A 2-space line reached only after a continuation 4 deeper.
        let text = "op_a\n    cont_b,\nop_c\nop_d\n      cont_e,\n  op_f\nop_g\n    cont_h,\n";
        assert_eq!(file_unit(text), Some(Unit::Spaces(2)));
        // Indented only by list items: the unit is a guess.
        let file = Indentation::of_file("a = [\n    1,\n]\nb\n    c,\n".lines());
        assert_eq!((file.unit, file.sure), (Some(Unit::Spaces(4)), false));
        // Inside a string across lines, a docstring.
        let text = "a = \"x\n      y\n  z\"\nif b:\n    c\n    \"\"\"doc\n  more\n    \"\"\"\n";
        assert_eq!(file_unit(text), Some(Unit::Spaces(4)));
        // After a trailing operator, and inside a block comment.
        let text = "x = a +\n        b\nif y:\n    z\n/*\n  * note\n */\n";
        assert_eq!(file_unit(text), Some(Unit::Spaces(4)));
    }

    #[test]
    fn strict_means_every_statement_is_whole_units() {
        let strict = |text: &str| Indentation::of_file(text.lines()).keeps_unit;
        assert!(strict("a:\n    b\n        c\n"));
        assert!(!strict("a:\n    b\n        c\n    d\n     e\n"));
        assert!(strict("f(a,\n   b)\nif x:\n    y\n"));
        assert!(strict("a {\n\tb\n}\n"));
        assert!(!strict("a {\n\tb\n    c\n}\n"));
        let file = Indentation::of_file("a:\n    b\n        c\n    d\n     e\n".lines());
        assert!(file.keeps_character && !file.keeps_unit);
    }

    #[test]
    fn measure_refuses_what_the_unit_cannot_write() {
        assert_eq!(Unit::Tab.measure("\t\t  "), Some((2, 2)));
        assert_eq!(Unit::Tab.measure("  \t"), None);
        assert_eq!(Unit::Spaces(4).measure("\t"), None);
        assert_eq!(Unit::Spaces(4).measure("      "), Some((1, 2)));
        assert!(Unit::Spaces(2).whole("    "));
    }
}
