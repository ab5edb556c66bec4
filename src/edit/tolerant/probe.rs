//! One edit as the tolerant levels look for it (`Probe`): old's lines and
//! the loosest key of its first, the region and line hint, and the file's
//! indent unit, learnt once per call (`LazyUnit`); and where a level
//! matched (`Match`).

use std::cell::OnceCell;
use std::ops::Range;
use std::rc::Rc;

use super::Level;
use super::indent::shown_unit;
use super::keys::key;
use super::units::{Indentation, Unit};
use crate::edit::text::{LineIndex, split_lines};

/// Where old matched, at a tolerant level.
#[derive(Debug, Clone)]
pub(crate) struct Match {
    /// Bytes of the current text that the replacement takes the place of.
    pub range: Range<usize>,
    pub first_line: usize,
    pub line_count: usize,
    /// A match inside one line; the replacement is new as sent.
    pub(super) partial: bool,
}

impl Match {
    /// Whether old matched inside one line rather than whole lines.
    pub fn partial(&self) -> bool {
        self.partial
    }
}

/// The indent unit a file uses, learnt once and given to every probe of a
/// call (learning it reads every line).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileUnit(pub Indentation);

impl FileUnit {
    pub fn of(text: &str) -> FileUnit {
        FileUnit(Indentation::of_file(text.lines()))
    }
}

/// A file's unit, learnt the first time a level needs it (learning it
/// follows every line's brackets and strings: 7 ms on 100,000 lines), then
/// shared by every probe of the call. Most probes never need it: a refused
/// edit, or a probe whose old stands nowhere.
#[derive(Debug, Clone)]
pub(crate) struct LazyUnit<'a> {
    pub(super) text: &'a str,
    pub(super) learnt: Rc<OnceCell<FileUnit>>,
}

impl<'a> LazyUnit<'a> {
    pub fn new(text: &'a str) -> LazyUnit<'a> {
        LazyUnit {
            text,
            learnt: Rc::default(),
        }
    }

    pub fn get(&self) -> FileUnit {
        *self.learnt.get_or_init(|| FileUnit::of(self.text))
    }
}

/// Everything the levels need to know about one edit.
pub(crate) struct Probe<'a> {
    pub(super) old_lines: Vec<&'a str>,
    /// The loosest key of old's first line: where a match can start.
    pub(super) first_key: String,
    pub(super) old_nl: bool,
    /// The model's indent unit as its own text shows it.
    pub(super) shown: Option<Unit>,
    /// Only matches starting at or after this offset count.
    pub(super) from: usize,
    /// Only matches that end the text count.
    pub(super) eof: bool,
    /// A 0-based line: among several matches the nearest wins.
    pub(super) near_line: Option<usize>,
    /// Every match is wanted (replace_all).
    pub(super) all: bool,
    /// The file's indent unit, when known (else learnt from the text).
    pub(super) file_unit: Option<LazyUnit<'a>>,
}

impl<'a> Probe<'a> {
    pub fn new(old: &'a str, new: &'a str) -> Probe<'a> {
        let (old_lines, old_nl) = split_lines(old);
        // Each text on its own: old's last line and new's first are not a
        // step.
        let shown = shown_unit(old, new);
        let first_key = old_lines
            .first()
            .map_or_else(String::new, |l| key(Level::InnerWhitespace, l).into_owned());
        Probe {
            old_lines,
            first_key,
            old_nl,
            shown,
            from: 0,
            eof: false,
            near_line: None,
            all: false,
            file_unit: None,
        }
    }

    /// Only matches starting at or after `from` (and ending the text, with
    /// `eof`) count.
    pub fn within(mut self, from: usize, eof: bool) -> Probe<'a> {
        self.from = from;
        self.eof = eof;
        self
    }

    /// Among several matches the one nearest this 0-based line wins.
    pub fn near(mut self, line: Option<usize>) -> Probe<'a> {
        self.near_line = line;
        self
    }

    /// Every match is wanted, not one.
    pub fn all(mut self, all: bool) -> Probe<'a> {
        self.all = all;
        self
    }

    /// The file's indent unit, learnt once for the call when needed.
    pub fn file_unit(mut self, unit: LazyUnit<'a>) -> Probe<'a> {
        self.file_unit = Some(unit);
        self
    }

    /// Whether old has lines to look for, and the file as many.
    pub(super) fn searchable(&self, lines: &LineIndex) -> bool {
        let m = self.old_lines.len();
        m > 0 && !self.old_lines.iter().all(|l| l.trim().is_empty()) && lines.count() >= m
    }

    pub(super) fn allows(&self, lines: &LineIndex, first: usize, m: usize, len: usize) -> bool {
        let last = first + m - 1;
        let mut end = lines.end(last);
        if self.old_nl && lines.has_newline(last) {
            end += 1;
        }
        self.allows_range(lines, &(lines.start(first)..end), len)
    }

    pub(super) fn allows_range(
        &self,
        _lines: &LineIndex,
        range: &Range<usize>,
        len: usize,
    ) -> bool {
        range.start >= self.from && (!self.eof || range.end == len)
    }
}
