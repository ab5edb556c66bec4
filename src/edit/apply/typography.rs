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

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::edit::hints::invisible_name;
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

/// A line cut into clusters: a character with the combining marks and
/// invisible characters that follow it. Folding is not one character to one
/// (an NFD accent composes with its letter, an invisible one folds to
/// nothing), but a cluster folds to the same key as the model's copy of it,
/// so clusters align where characters cannot.
fn clusters(line: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut start = 0;
    for (at, c) in line.char_indices() {
        let joins = is_combining_mark(c) || invisible_name(c).is_some();
        if at > start && !joins {
            out.push(&line[start..at]);
            start = at;
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

/// A cluster's folded form: compatibility forms and composed accents
/// (NFKC), invisible characters dropped, typography made plain.
fn cluster_key(cluster: &str) -> String {
    let visible: String = cluster
        .chars()
        .filter(|&c| invisible_name(c).is_none())
        .collect();
    visible.nfkc().map(fold_char).collect()
}

/// The character of a cluster that is one character.
fn single(cluster: &str) -> Option<char> {
    let mut chars = cluster.chars();
    let c = chars.next()?;
    chars.next().is_none().then_some(c)
}

/// What the file had where old had each cluster, from old's lines aligned
/// with the lines (or part of a line) they matched.
struct Alignment<'o, 'f> {
    old_lines: Vec<&'o str>,
    /// old's lines, cut into clusters.
    old_clusters: Vec<Vec<&'o str>>,
    /// Per old line, per cluster: the file's cluster aligned with it.
    file_cluster: Vec<Vec<Option<&'f str>>>,
    /// Every file character seen aligned with each typographic character
    /// of old (or each character aligned with a typographic one).
    seen: HashMap<char, Vec<char>>,
}

impl<'o, 'f> Alignment<'o, 'f> {
    /// None when old's clusters are the file's everywhere they align.
    fn of(matched: &'f str, old: &'o str) -> Option<Alignment<'o, 'f>> {
        let (old_lines, _) = split_lines(old);
        let (file_lines, _) = split_lines(matched);
        if old_lines.len() != file_lines.len() {
            return None;
        }
        let mut file_cluster = Vec::with_capacity(old_lines.len());
        let mut old_clusters = Vec::with_capacity(old_lines.len());
        let mut seen: HashMap<char, Vec<char>> = HashMap::new();
        let mut differs = false;
        for (o, f) in old_lines.iter().zip(&file_lines) {
            let oc = clusters(o);
            let mut row = vec![None; oc.len()];
            // Folding leaves ASCII as it is: two ASCII lines align where
            // they are equal, and there the file's bytes are old's.
            if !(o.is_ascii() && f.is_ascii()) {
                let fc = clusters(f);
                let keys = |v: &[&str]| v.iter().map(|c| cluster_key(c)).collect::<Vec<_>>();
                for op in capture_diff_slices(Algorithm::Myers, &keys(&oc), &keys(&fc)) {
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
                differs |= c != d;
                if let (Some(c), Some(d)) = (single(c), single(d))
                    && (typographic(c) || typographic(d))
                {
                    let files = seen.entry(c).or_default();
                    if !files.contains(&d) {
                        files.push(d);
                    }
                }
            }
            old_clusters.push(oc);
            file_cluster.push(row);
        }
        differs.then_some(Alignment {
            old_lines,
            old_clusters,
            file_cluster,
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

    /// A line of new in the file's characters; `paired`: the line of old it
    /// stands in place of, whose clusters it shares take the file's bytes
    /// (a folded accent, an invisible character, a typographic mark).
    fn line(&self, line: &str, paired: Option<usize>) -> Result<String, Undecided> {
        let nc = clusters(line);
        let mut from_old: Vec<Option<&str>> = vec![None; nc.len()];
        if let Some(p) = paired {
            let oc = &self.old_clusters[p];
            for op in capture_diff_slices(Algorithm::Myers, oc, &nc) {
                if let DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } = op
                {
                    from_old[new_index..new_index + len]
                        .copy_from_slice(&self.file_cluster[p][old_index..old_index + len]);
                }
            }
        }
        let mut out = String::with_capacity(line.len());
        for (cluster, file) in nc.iter().zip(from_old) {
            match file {
                Some(file) => out.push_str(file),
                None => {
                    for c in cluster.chars() {
                        out.push(self.resolve(c)?);
                    }
                }
            }
        }
        Ok(out)
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
