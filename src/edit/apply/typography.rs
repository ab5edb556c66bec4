//! new in the file's typography. When old matched only because the model's
//! typographic characters (curly quotes, dashes, special spaces, fullwidth
//! forms) were read as the file's plain ones, or the reverse, new carries
//! the same mistake: `say(“bye”)` written into code that says `say("hi")`.
//!
//! Each line of old is aligned with the file's line it matched, character
//! by character as the levels fold them. A character of new that is one of
//! old's (the same place in a line new keeps from old) takes the file's
//! character there; a typographic character new brings in takes what the
//! file had wherever old used it (or, for one old did not use, what the
//! file had for old's characters of the same plain form). Nothing is
//! guessed: the edit is refused when the file had different characters
//! where old had one new brings in, or when new brings in an ASCII mark
//! (a quote, a hyphen) that old used for one of the file's typographic
//! ones, since new's may mean either.

use std::borrow::Cow;
use std::collections::HashMap;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::edit::text::split_lines;
use crate::edit::tolerant::fold_char;

/// A character new brings in whose form in the file cannot be decided: the
/// file had each of `file` where old had `model` (or one of its plain
/// form).
#[derive(Debug)]
pub(super) struct Undecided {
    pub model: char,
    pub file: Vec<char>,
}

fn typographic(c: char) -> bool {
    fold_char(c) != c
}

/// What the file had where old had each character, from old's lines
/// aligned with the lines (or part of a line) they matched.
struct Alignment<'o> {
    old_lines: Vec<&'o str>,
    /// Per old line, per character: the file's character aligned with it.
    file_char: Vec<Vec<Option<char>>>,
    /// Every file character seen aligned with each typographic character
    /// of old (or each character aligned with a typographic one).
    seen: HashMap<char, Vec<char>>,
}

impl<'o> Alignment<'o> {
    /// None when old's characters are the file's everywhere they align.
    fn of(matched: &str, old: &'o str) -> Option<Alignment<'o>> {
        let (old_lines, _) = split_lines(old);
        let (file_lines, _) = split_lines(matched);
        if old_lines.len() != file_lines.len() {
            return None;
        }
        let mut file_char = Vec::with_capacity(old_lines.len());
        let mut seen: HashMap<char, Vec<char>> = HashMap::new();
        let mut differs = false;
        for (o, f) in old_lines.iter().zip(&file_lines) {
            let oc: Vec<char> = o.chars().collect();
            let mut row = vec![None; oc.len()];
            // Folding leaves ASCII as it is: two ASCII lines align where
            // they are equal, and there the file's character is old's.
            if !(o.is_ascii() && f.is_ascii()) {
                let fc: Vec<char> = f.chars().collect();
                let folded = |v: &[char]| v.iter().map(|&c| fold_char(c)).collect::<Vec<_>>();
                for op in capture_diff_slices(Algorithm::Myers, &folded(&oc), &folded(&fc)) {
                    if let DiffOp::Equal {
                        old_index,
                        new_index,
                        len,
                    } = op
                    {
                        for k in 0..len {
                            row[old_index + k] = Some(fc[new_index + k]);
                        }
                    }
                }
            }
            for (&c, d) in oc.iter().zip(&row) {
                let Some(d) = *d else { continue };
                if typographic(c) || typographic(d) {
                    differs |= c != d;
                    let files = seen.entry(c).or_default();
                    if !files.contains(&d) {
                        files.push(d);
                    }
                }
            }
            file_char.push(row);
        }
        differs.then_some(Alignment {
            old_lines,
            file_char,
            seen,
        })
    }

    /// The file's form of a character new brings in.
    fn resolve(&self, c: char) -> Result<char, Undecided> {
        if !typographic(c) {
            // An ASCII mark that old used for a typographic one of the
            // file's: new's may mean either (`break--here` for the file's
            // `break—here`). Spaces are spaces.
            if let Some(files) = self.seen.get(&c).filter(|_| c.is_ascii_punctuation()) {
                return Err(Undecided {
                    model: c,
                    file: files.clone(),
                });
            }
            return Ok(c);
        }
        if let Some(files) = self.seen.get(&c) {
            return match files[..] {
                [d] => Ok(d),
                _ => Err(Undecided {
                    model: c,
                    file: files.clone(),
                }),
            };
        }
        // One old did not use: what the file had where old used others of
        // its plain form.
        let plain = fold_char(c);
        let mut files: Vec<char> = Vec::new();
        for (&x, ds) in &self.seen {
            if typographic(x) && fold_char(x) == plain {
                for &d in ds {
                    if !files.contains(&d) {
                        files.push(d);
                    }
                }
            }
        }
        if files.iter().all(|&d| d == plain) && !files.is_empty() {
            Ok(plain)
        } else if files.iter().all(|&d| typographic(d)) {
            Ok(c)
        } else {
            Err(Undecided {
                model: c,
                file: files,
            })
        }
    }

    /// A line of new in the file's typography; `paired`: the line of old it
    /// stands in place of, whose characters it shares take the file's.
    fn line(&self, line: &str, paired: Option<usize>) -> Result<String, Undecided> {
        let nc: Vec<char> = line.chars().collect();
        let mut from_old: Vec<Option<char>> = vec![None; nc.len()];
        if let Some(p) = paired {
            let oc: Vec<char> = self.old_lines[p].chars().collect();
            for op in capture_diff_slices(Algorithm::Myers, &oc, &nc) {
                if let DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } = op
                {
                    from_old[new_index..new_index + len]
                        .copy_from_slice(&self.file_char[p][old_index..old_index + len]);
                }
            }
        }
        nc.iter()
            .zip(from_old)
            .map(|(&c, d)| d.map_or_else(|| self.resolve(c), Ok))
            .collect()
    }
}

/// `new` with the file's typographic characters, for an edit whose old
/// matched `matched` (whole lines, or with `partial` part of one line) at
/// a level that folds typography. Lines new keeps from old are left alone
/// for a whole-line match: they are written with the file's bytes anyway.
pub(super) fn in_file_typography<'n>(
    matched: &str,
    old: &str,
    new: &'n str,
    partial: bool,
) -> Result<Cow<'n, str>, Undecided> {
    let Some(alignment) = Alignment::of(matched, old) else {
        return Ok(Cow::Borrowed(new));
    };
    let (new_lines, new_nl) = split_lines(new);
    let mut out: Vec<Cow<str>> = Vec::with_capacity(new_lines.len());
    for op in capture_diff_slices(Algorithm::Myers, &alignment.old_lines, &new_lines) {
        let (old_at, old_len, new_at, new_len) = match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => (old_index, len, new_index, len),
            DiffOp::Delete { .. } => continue,
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, 0, new_index, new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (old_index, old_len, new_index, new_len),
        };
        let kept = matches!(op, DiffOp::Equal { .. });
        for k in 0..new_len {
            let line = new_lines[new_at + k];
            if kept && !partial {
                out.push(Cow::Borrowed(line));
                continue;
            }
            let paired = (k < old_len).then_some(old_at + k);
            out.push(Cow::Owned(alignment.line(line, paired)?));
        }
    }
    let mut text = out.join("\n");
    if new_nl {
        text.push('\n');
    }
    Ok(if text == new {
        Cow::Borrowed(new)
    } else {
        Cow::Owned(text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typo(matched: &str, old: &str, new: &str, partial: bool) -> String {
        in_file_typography(matched, old, new, partial)
            .map(Cow::into_owned)
            .unwrap_or_else(|u| format!("undecided {u:?}"))
    }

    #[test]
    fn the_models_quotes_become_the_files() {
        assert_eq!(
            typo(
                "say(\"hi\")\n",
                "say(\u{201c}hi\u{201d})\n",
                "say(\u{201c}bye\u{201d})\n",
                false
            ),
            "say(\"bye\")\n"
        );
        // The reverse: curly in the file, straight from the model.
        assert_eq!(
            typo(
                "msg = \u{201c}hello\u{201d}\n",
                "msg = \"hello\"\n",
                "msg = \"goodbye\"\n",
                false
            ),
            "msg = \u{201c}goodbye\u{201d}\n"
        );
        // An en dash read as a minus, inside a line.
        assert_eq!(typo("a - b", "a \u{2013} b", "a \u{2013} c", true), "a - c");
        // A hyphen read as the file's em dash: the hyphens new keeps from
        // old are the file's dash; one new brings in may be either.
        assert_eq!(
            typo(
                "range: 1\u{2013}5\n",
                "range: 1-5\n",
                "range: 10-50\n",
                false
            ),
            "range: 10\u{2013}50\n"
        );
        let out = typo(
            "break\u{2014}here\n",
            "break-here\n",
            "break--here\n",
            false,
        );
        assert!(out.starts_with("undecided"), "{out}");
    }

    #[test]
    fn brought_in_characters_follow_what_old_showed() {
        // A new line with curly quotes: the file writes them straight.
        assert_eq!(
            typo(
                "x = \"a\"\n",
                "x = \u{201c}a\u{201d}\n",
                "x = \u{201c}a\u{201d}\ny = \u{201c}b\u{201d}\n",
                false
            ),
            "x = \u{201c}a\u{201d}\ny = \"b\"\n"
        );
        // Nothing typographic differed: new as sent.
        assert_eq!(
            typo("x = 1  \n", "x = 1\n", "x = \u{201c}2\u{201d}\n", false),
            "x = \u{201c}2\u{201d}\n"
        );
    }

    #[test]
    fn a_file_that_writes_both_refuses() {
        // old's “ stood for " once and for “ once; new adds a line with “.
        let out = typo(
            "a = \"x\" + \u{201c}y\u{201d}\n",
            "a = \u{201c}x\u{201d} + \u{201c}y\u{201d}\n",
            "a = \u{201c}x\u{201d} + \u{201c}y\u{201d}\nb = \u{201c}z\u{201d}\n",
            false,
        );
        assert!(out.starts_with("undecided"), "{out}");
    }
}
