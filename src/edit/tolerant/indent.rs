//! Indentation where old matched: every reading of the model's indentation
//! that maps old's lines onto the file's lines there.
//!
//! A reading is a prefix the file adds to (or takes from) old's
//! indentation on every line, or a model unit and a level difference (two
//! of the model's levels become two of the file's). Old's lines decide
//! which readings fit, not the file alone: a model that sent 16 spaces for
//! a line the file indents with one tab wrote 4 spaces a level, or 8, or 2,
//! and over-indented by 3, 1 or 7 levels. When the model's own text shows
//! its unit (a step between two of its statements) and that unit fits,
//! only it is read. Each reading writes a line in whole
//! units of the file's unit, in its character, or not at all (half a unit,
//! a depth left of column 0: not the model's reading). Where the file shows
//! its unit only in items of lists, every unit that divides it is a
//! reading too. `rewrite.rs` writes new through them.

use std::borrow::Cow;

use super::doubt::Doubt;
use super::units::{Indentation, LineKind, UNIT_SIZES, Unit, continuations, indent_of, jumps};

/// Units a model writes in. Odd ones (1, 3, 5-7 spaces) are not among
/// them: read so, alignment spaces become levels (9 spaces, 2 a level and
/// one of alignment, would be 3 levels of 3), and a model uses them only
/// where the file does, which `model_units` adds.
const MODEL_UNITS: [Unit; 4] = [Unit::Tab, Unit::Spaces(4), Unit::Spaces(2), Unit::Spaces(8)];

/// The units a model may have written in at a place: the usual ones, and
/// the file's own.
fn model_units(place: &Place) -> Vec<Unit> {
    let mut units = MODEL_UNITS.to_vec();
    for &unit in &place.candidates {
        if !units.contains(&unit) {
            units.push(unit);
        }
    }
    units
}

/// One way the model's indentation maps to the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reading {
    /// The file's lines carry this prefix before old's indentation (empty:
    /// old's indentation is the file's).
    Add(String),
    /// The file's lines lack this prefix that old's lines carry.
    Remove(String),
    /// Levels in the model's unit become levels in the file's, `delta`
    /// deeper.
    Levels {
        model: Unit,
        file: Unit,
        delta: isize,
    },
}

/// The file's unit where old matched, and how far it can be trusted.
#[derive(Debug, Clone, Default)]
struct Place {
    /// The unit the file shows there, when it shows one.
    unit: Option<Unit>,
    /// The units the file may have: `unit` alone, or, when the file shows
    /// it only in items of lists (which may stand two levels deep), every
    /// unit that divides it.
    candidates: Vec<Unit>,
    /// The file indents every statement in `unit`'s character alone.
    keeps_character: bool,
    /// And in whole units of it.
    keeps_unit: bool,
}

impl Place {
    /// Tabs where the file's lines here indent with them; else the file's
    /// unit, unless the lines here step by a size it does not divide (a
    /// 2-space region of a file read as 4-space).
    fn new(file_lines: &[&str], file: Indentation) -> Place {
        let indents = file_lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| indent_of(l));
        let of_file = || {
            let candidates = match file.unit {
                Some(Unit::Spaces(n)) if !file.sure => UNIT_SIZES
                    .into_iter()
                    .filter(|s| n % s == 0)
                    .map(Unit::Spaces)
                    .collect(),
                unit => unit.into_iter().collect(),
            };
            Place {
                unit: file.unit,
                candidates,
                keeps_character: file.keeps_character,
                keeps_unit: file.keeps_unit,
            }
        };
        if indents.clone().any(|i| i.starts_with('\t')) {
            return match file.unit {
                Some(Unit::Tab) => of_file(),
                _ => Place::known(Unit::Tab),
            };
        }
        if !indents.clone().any(|i| i.starts_with(' ')) {
            return of_file();
        }
        let here = Indentation::of_snippet(file_lines.iter().copied()).unit;
        match (file.unit, here) {
            (Some(Unit::Spaces(n)), Some(Unit::Spaces(s))) if s % n != 0 => match gcd(n, s) {
                g if g >= 2 => Place {
                    keeps_character: file.keeps_character,
                    ..Place::known(Unit::Spaces(g))
                },
                _ => Place::default(),
            },
            (Some(Unit::Spaces(_)), _) => of_file(),
            (_, Some(here)) => Place::known(here),
            (_, None) => Place::default(),
        }
    }

    /// A unit seen here, with nothing known of the rest of the file.
    fn known(unit: Unit) -> Place {
        Place {
            unit: Some(unit),
            candidates: vec![unit],
            keeps_character: false,
            keeps_unit: false,
        }
    }

    fn sure(&self) -> bool {
        self.candidates.len() <= 1
    }

    /// The file units a reading may map to (the model's own where the file
    /// shows none).
    fn units(&self) -> Vec<Option<Unit>> {
        match self.candidates.is_empty() {
            true => vec![None],
            false => self.candidates.iter().copied().map(Some).collect(),
        }
    }

    /// Whether an indentation is whole units of the file's unit (of one it
    /// may have); where it shows none, at least not tabs and spaces mixed.
    fn whole(&self, indent: &str) -> bool {
        match self.unit {
            None => !(indent.contains(' ') && indent.contains('\t')),
            Some(_) => self.candidates.iter().any(|u| u.whole(indent)),
        }
    }
}

/// Every reading that fits one place.
#[derive(Debug, Clone)]
pub(crate) struct Readings {
    readings: Vec<Reading>,
    place: Place,
    /// old's indentation is the file's on every line.
    literal: bool,
    /// The model's unit as its own text shows it.
    shown: Option<Unit>,
    /// Old's lines stand at one indentation: they show no step of the
    /// model's unit against the file's.
    one_depth: bool,
}

/// Old's indentation and the file's, for each line of old with text, and
/// what old's line is (a statement, a continuation, text in a string).
struct Pairs<'a> {
    indents: Vec<(&'a str, &'a str)>,
    kinds: Vec<LineKind>,
}

fn pairs<'a>(old_lines: &[&'a str], file_lines: &[&'a str]) -> Pairs<'a> {
    let indents = old_lines
        .iter()
        .zip(file_lines)
        .filter(|(o, _)| !o.trim().is_empty())
        .map(|(o, f)| (indent_of(o), indent_of(f)))
        .collect();
    Pairs {
        indents,
        kinds: continuations(old_lines.iter().copied()),
    }
}

/// The same prefix added to, or taken from, every line's indentation.
fn prefix_reading(pairs: &[(&str, &str)]) -> Option<Reading> {
    let &(o, f) = pairs.first()?;
    if let Some(extra) = f.strip_suffix(o)
        && pairs.iter().all(|(o, f)| f.strip_suffix(o) == Some(extra))
    {
        return Some(Reading::Add(extra.to_string()));
    }
    let missing = o.strip_suffix(f)?;
    pairs
        .iter()
        .all(|(o, f)| o.strip_suffix(f) == Some(missing))
        .then(|| Reading::Remove(missing.to_string()))
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A continuation line that steps from the line before it as the file's
/// does: the same levels (in the model's unit and in the file's) and then
/// the same spaces of alignment. No unit measures alignment from the
/// margin (`\t\t  ` under a tab is a level and 2 spaces; 6 spaces under
/// 2, in a 2-space model, the same).
fn aligned(pairs: &Pairs, i: usize, model: Unit, file: Unit) -> bool {
    if pairs.kinds.get(i) != Some(&LineKind::Continuation) {
        return false;
    }
    let Some(&(po, pf)) = i.checked_sub(1).and_then(|p| pairs.indents.get(p)) else {
        return false;
    };
    let (o, f) = pairs.indents[i];
    let (Some(step_o), Some(step_f)) = (o.strip_prefix(po), f.strip_prefix(pf)) else {
        return false;
    };
    let Some((levels, spaces)) = file.measure(step_f) else {
        return false;
    };
    !step_o.is_empty() && step_o == format!("{}{}", model.render(levels), " ".repeat(spaces))
}

/// The one level difference that maps old's indentation in `model` units
/// to the file's in `file` units on every line, if there is one.
fn levels_delta(pairs: &Pairs, model: Unit, file: Unit) -> Option<isize> {
    let mut delta = None;
    for (i, (o, f)) in pairs.indents.iter().enumerate() {
        // Inside a string or a comment, indentation is text, not depth.
        if pairs.kinds.get(i) == Some(&LineKind::Text) || aligned(pairs, i, model, file) {
            continue;
        }
        let (ol, orem) = model.measure(o)?;
        let (fl, frem) = file.measure(f)?;
        let d = fl as isize - ol as isize;
        if orem != frem || delta.is_some_and(|x| x != d) {
            return None;
        }
        delta = Some(d);
    }
    Some(delta.unwrap_or(0))
}

/// Every level reading that fits the pairs at a place.
fn level_readings(pairs: &Pairs, place: &Place) -> Vec<Reading> {
    let units = place.units();
    model_units(place)
        .into_iter()
        .flat_map(|model| {
            units
                .iter()
                .map(move |&file| (model, file.unwrap_or(model)))
        })
        .filter_map(|(model, file)| {
            levels_delta(pairs, model, file).map(|delta| Reading::Levels { model, file, delta })
        })
        .collect()
}

/// Whether old's lines can stand on these file lines: whatever the level,
/// their indentation must map by one reading (a level that ignores only
/// indentation needs a prefix).
pub(super) fn fits(
    prefix_only: bool,
    old_lines: &[&str],
    file_lines: &[&str],
    file: Indentation,
) -> bool {
    let pairs = pairs(old_lines, file_lines);
    if prefix_reading(&pairs.indents).is_some() {
        return true;
    }
    if prefix_only {
        return false;
    }
    let place = Place::new(file_lines, file);
    let models = model_units(&place);
    place.units().into_iter().any(|file| {
        models
            .iter()
            .any(|&m| levels_delta(&pairs, m, file.unwrap_or(m)).is_some())
    })
}

/// The model's unit as its own text shows it: old's steps (old is what
/// was matched against the file), else new's.
pub(crate) fn shown_unit(old: &str, new: &str) -> Option<Unit> {
    Indentation::of_snippet(old.lines())
        .unit
        .or_else(|| Indentation::of_snippet(new.lines()).unit)
}

impl Readings {
    /// Every reading that maps old's lines onto these file lines.
    pub fn at(
        old_lines: &[&str],
        file_lines: &[&str],
        file: Indentation,
        shown: Option<Unit>,
    ) -> Readings {
        let pairs = pairs(old_lines, file_lines);
        let place = Place::new(file_lines, file);
        let prefix = prefix_reading(&pairs.indents);
        let literal = prefix == Some(Reading::Add(String::new()));
        let mut levels = level_readings(&pairs, &place);
        let shows =
            |r: &Reading| matches!(r, Reading::Levels { model, .. } if Some(*model) == shown);
        let shown_here = levels.iter().any(shows);
        if shown_here {
            levels.retain(shows);
        }
        // Where old's indentation is the file's, new's lines stand as sent
        // when they can (`as_sent`), unless the file's unit is uncertain:
        // then as sent is one reading among the others.
        let readings = match prefix {
            Some(prefix) if literal && !place.sure() => {
                levels.into_iter().chain([prefix]).collect()
            }
            Some(prefix) if !literal && !shown_here => {
                std::iter::once(prefix).chain(levels).collect()
            }
            _ => levels,
        };
        let mut indents = pairs.indents.iter().map(|(o, _)| *o);
        let first = indents.next();
        let one_depth = indents.all(|o| Some(o) == first);
        Readings {
            readings,
            place,
            literal,
            shown,
            one_depth,
        }
    }

    /// old's indentation is the file's on every line.
    pub(super) fn literal(&self) -> bool {
        self.literal
    }

    /// One line's indentation under one reading, in whole units of the
    /// file's unit; None when the reading cannot write it so.
    pub(super) fn render(&self, reading: &Reading, indent: &str) -> Option<String> {
        let out = match reading {
            Reading::Add(prefix) => format!("{prefix}{indent}"),
            Reading::Remove(prefix) => indent.strip_prefix(prefix.as_str())?.to_string(),
            Reading::Levels { model, file, delta } => {
                let (levels, left) = model.measure(indent)?;
                let depth = usize::try_from(levels as isize + delta).ok()?;
                return (left == 0).then(|| file.render(depth));
            }
        };
        self.place.whole(&out).then_some(out)
    }

    /// How the readings that write the line before an aligned line as it
    /// was written (`sent_before` became `file_before`) write the aligned
    /// line, its spaces past whole levels of the model's unit kept as
    /// alignment. Where a reading maps units (2 spaces a level to 4), a
    /// step of whole model units from the line before is a depth to it,
    /// not alignment: moved by the difference, the line would land
    /// elsewhere, and `rewrite.rs` refuses rather than pick one.
    pub(super) fn aligned_options(
        &self,
        indent: &str,
        sent_before: &str,
        file_before: &str,
    ) -> Vec<String> {
        let keeping_alignment = |reading: &Reading, indent: &str| match reading {
            Reading::Add(prefix) => Some(format!("{prefix}{indent}")),
            Reading::Remove(prefix) => indent.strip_prefix(prefix.as_str()).map(str::to_string),
            Reading::Levels { model, file, delta } => {
                let (levels, left) = model.measure(indent)?;
                let depth = usize::try_from(levels as isize + delta).ok()?;
                Some(format!("{}{}", file.render(depth), " ".repeat(left)))
            }
        };
        self.readings
            .iter()
            .filter(|r| keeping_alignment(r, sent_before).as_deref() == Some(file_before))
            .filter_map(|r| keeping_alignment(r, indent))
            .collect()
    }

    /// A line's indentation as the levels it steps past the line before
    /// (`sent_before`, written `file_before`), in each reading's units.
    pub(super) fn levels_past(
        &self,
        indent: &str,
        sent_before: &str,
        file_before: &str,
    ) -> Vec<String> {
        let Some(step) = indent.strip_prefix(sent_before) else {
            return Vec::new();
        };
        self.readings
            .iter()
            .filter_map(|r| match r {
                Reading::Levels { model, file, .. } => {
                    let (levels, left) = model.measure(step)?;
                    Some(format!(
                        "{file_before}{}{}",
                        file.render(levels),
                        " ".repeat(left)
                    ))
                }
                _ => None,
            })
            .collect()
    }

    /// Where no reading relates the model's unit to the file's and old,
    /// at one depth, shows no step: a line's indentation as the levels it
    /// steps past the line before, in each unit the model may have written
    /// (its own text's, where that shows one). A model that wrote 9 spaces
    /// (2 levels and one) in 2 a level, then dropped the common
    /// indentation, sent them as 0, and no level reading fits.
    pub(super) fn steps_in_unknown_unit(
        &self,
        indent: &str,
        sent_before: &str,
        file_before: &str,
    ) -> Vec<String> {
        let known = self
            .readings
            .iter()
            .any(|r| matches!(r, Reading::Levels { .. }));
        let (Some(file), Some(step)) = (self.place.unit, indent.strip_prefix(sent_before)) else {
            return Vec::new();
        };
        if known || !self.one_depth || step.is_empty() {
            return Vec::new();
        }
        let models = self.shown.map_or(MODEL_UNITS.to_vec(), |u| vec![u]);
        models
            .into_iter()
            .filter_map(|model| {
                let (levels, left) = model.measure(step)?;
                Some(format!(
                    "{file_before}{}{}",
                    file.render(levels),
                    " ".repeat(left)
                ))
            })
            .collect()
    }

    /// Whether, written under `reading` (`indents` for the open lines),
    /// an open line would start a statement two levels below the line
    /// before it.
    fn jumps(
        &self,
        reading: &Reading,
        out: &[Option<Cow<str>>],
        indents: &[String],
        open: &[usize],
        new_lines: &[&str],
    ) -> bool {
        let unit = match reading {
            Reading::Levels { file, .. } => Some(*file),
            _ => self.place.unit,
        };
        let Some(unit) = unit else {
            return false;
        };
        let lines: Vec<Cow<str>> = out
            .iter()
            .enumerate()
            .map(|(i, slot)| match slot {
                Some(line) => Cow::Borrowed(line.as_ref()),
                // Open lines as this reading writes them; a line still to
                // be aligned is left out.
                None => match open.binary_search(&i) {
                    Ok(j) => {
                        let line = new_lines[i];
                        Cow::Owned(format!("{}{}", indents[j], &line[indent_of(line).len()..]))
                    }
                    Err(_) => Cow::Borrowed(""),
                },
            })
            .collect();
        let lines: Vec<&str> = lines.iter().map(|l| l.as_ref()).collect();
        // An open line, and the line after one: the reading placed the
        // step between them.
        let mut after_open = false;
        let checked: Vec<bool> = out
            .iter()
            .zip(&lines)
            .map(|(slot, line)| {
                let check = slot.is_none() || after_open;
                if !line.trim().is_empty() {
                    after_open = slot.is_none();
                }
                check
            })
            .collect();
        jumps(&lines, &checked, unit)
    }

    /// The model's unit as its own text shows it, if it does.
    pub(super) fn shown(&self) -> Option<Unit> {
        self.shown
    }

    /// Whether some reading writes a line so indented in whole units (or,
    /// where old's indentation is the file's, as sent).
    pub(super) fn writes_whole(&self, indent: &str) -> bool {
        (self.literal && self.as_sent(indent))
            || self
                .readings
                .iter()
                .any(|r| self.render(r, indent).is_some())
    }

    /// Whether a line may stand as sent where old's indentation is the
    /// file's: always, unless the file keeps strictly to its unit and the
    /// line does not, or the model's text shows another unit (its 4-space
    /// step in a 2-space file is one level, not two), or the file's unit is
    /// uncertain.
    fn as_sent(&self, indent: &str) -> bool {
        let shown = self.shown;
        let place = &self.place;
        if !place.sure() {
            return false;
        }
        let Some(unit) = place.unit else {
            return true;
        };
        let other_character = match unit {
            Unit::Tab => indent.contains(' '),
            Unit::Spaces(_) => indent.contains('\t'),
        };
        if other_character {
            return !place.keeps_character;
        }
        let other_unit =
            matches!(shown, Some(Unit::Spaces(s)) if !place.candidates.contains(&Unit::Spaces(s)));
        !place.keeps_unit || (place.whole(indent) && !other_unit)
    }
}

/// The indentation of each open line (new's index, indentation), the same
/// under every reading that can write them all. Readings that would open a
/// block two levels deep at once give way to those that do not, where
/// there are any. `out`: new's lines as written, None where open.
pub(super) fn settle(
    out: &[Option<Cow<str>>],
    open: &[usize],
    new_lines: &[&str],
    readings: &Readings,
) -> Result<Vec<(usize, String)>, Doubt> {
    if open.is_empty() {
        return Ok(Vec::new());
    }
    let indents: Vec<&str> = open.iter().map(|&k| indent_of(new_lines[k])).collect();
    if readings.literal && indents.iter().all(|i| readings.as_sent(i)) {
        return Ok(open
            .iter()
            .zip(&indents)
            .map(|(&k, i)| (k, i.to_string()))
            .collect());
    }
    // Each different writing, and whether a reading writes it without a
    // jump.
    let mut written: Vec<(Vec<String>, bool)> = Vec::new();
    for reading in &readings.readings {
        let lines: Option<Vec<String>> = open
            .iter()
            .zip(&indents)
            .map(|(_, i)| readings.render(reading, i))
            .collect();
        let Some(lines) = lines else {
            continue;
        };
        let steady = !readings.jumps(reading, out, &lines, open, new_lines);
        match written.iter_mut().find(|(w, _)| *w == lines) {
            Some((_, s)) => *s |= steady,
            None => written.push((lines, steady)),
        }
    }
    if written.iter().any(|(_, steady)| *steady) {
        written.retain(|(_, steady)| *steady);
    }
    let mut written: Vec<Vec<String>> = written.into_iter().map(|(w, _)| w).collect();
    let doubt_line = |j: usize| (open[j] + 1, new_lines[open[j]].trim().to_string());
    match written.len() {
        1 => Ok(open.iter().copied().zip(written.remove(0)).collect()),
        0 => {
            // The first line no reading writes whole.
            let j = (0..open.len())
                .find(|&j| {
                    readings
                        .readings
                        .iter()
                        .all(|r| readings.render(r, indents[j]).is_none())
                })
                .unwrap_or(0);
            let (line, text) = doubt_line(j);
            Err(Doubt::NoWholeUnits {
                line,
                text,
                indent: indents[j].to_string(),
                file: readings.place.unit,
            })
        }
        _ => {
            let j = (0..open.len())
                .find(|&j| written.iter().any(|w| w[j] != written[0][j]))
                .unwrap_or(0);
            let mut options: Vec<String> = written.iter().map(|w| w[j].clone()).collect();
            options.sort_by_key(|o| (o.len(), o.clone()));
            options.dedup();
            let (line, text) = doubt_line(j);
            Err(Doubt::Depths {
                line,
                text,
                indent: indents[j].to_string(),
                options,
            })
        }
    }
}
