//! Properties of `apply` over generated texts and edits.

use nib::edit::{
    Applied, Diff, Edit, Level, LineKind, Outcome, apply, apply_without_windows, plan,
};
use proptest::prelude::*;
use proptest::sample::Index;

const BOM: char = '\u{feff}';

/// Pieces of text the generators join: a small alphabet, so that
/// substrings repeat and matches are often ambiguous.
const ATOMS: &[&str] = &["a", "b", "c", "x", " ", "\t", "é", "─", "ab", "  "];

/// More awkward pieces for the no-panic property: bare CR, a BOM in the
/// middle, typographic and fullwidth characters, a decomposed accent.
const WILD: &[&str] = &[
    "a", "b", " ", "\t", "\n", "\r\n", "\r", "\u{feff}", "é", "e\u{301}", "─", "\u{a0}",
    "\u{201c}", "\u{201d}", "\u{2014}", "-", "\"", "ｘ", "x", "    ",
];

/// `WILD` for LF-only text: no CR, no BOM (one in the middle is plain text
/// to the engine, but one could come first).
const LF_WILD: &[&str] = &[
    "a", "b", " ", "\t", "\n", "é", "e\u{301}", "─", "\u{a0}", "\u{201c}", "\u{201d}", "\u{2014}",
    "-", "\"", "ｘ", "x", "    ",
];

/// How lines end in a generated text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eol {
    Lf,
    Crlf,
    /// Each line picks LF or CRLF.
    Mixed,
}

fn eol() -> impl Strategy<Value = Eol> {
    prop_oneof![Just(Eol::Lf), Just(Eol::Crlf), Just(Eol::Mixed)]
}

/// Tokens: an atom, or (for `ATOMS.len()` and above) a line ending; the
/// bool picks CRLF in a mixed text.
fn tokens(max: usize) -> impl Strategy<Value = Vec<(usize, bool)>> {
    prop::collection::vec((0..ATOMS.len() + 4, any::<bool>()), 0..max)
}

fn render(toks: &[(usize, bool)], eol: Eol) -> String {
    let mut out = String::new();
    for &(t, crlf) in toks {
        match ATOMS.get(t) {
            Some(atom) => out.push_str(atom),
            None if eol == Eol::Crlf || (eol == Eol::Mixed && crlf) => out.push_str("\r\n"),
            None => out.push('\n'),
        }
    }
    out
}

/// A text from `ATOMS` and line endings, with or without a leading BOM.
fn text() -> impl Strategy<Value = String> {
    (any::<bool>(), eol(), tokens(60)).prop_map(|(bom, eol, toks)| {
        let body = render(&toks, eol);
        if bom { format!("{BOM}{body}") } else { body }
    })
}

/// A replacement text: atoms, LF and CRLF; at least `min` tokens.
fn new_text(min: usize) -> impl Strategy<Value = String> {
    prop::collection::vec((0..ATOMS.len() + 3, any::<bool>()), min..7)
        .prop_map(|toks| render(&toks, Eol::Mixed))
}

fn wild(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WILD), 0..max).prop_map(|v| v.concat())
}

fn lf_wild(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(LF_WILD), 0..max).prop_map(|v| v.concat())
}

/// One edit for the no-panic property: (old taken from the text?, where,
/// how many chars, old otherwise, new, replace_all, recorded as made by
/// the previous call?).
type WildEdit = (bool, Index, usize, String, String, bool, bool);

fn wild_edit() -> impl Strategy<Value = WildEdit> {
    (
        any::<bool>(),
        any::<Index>(),
        0usize..12,
        wild(6),
        wild(6),
        any::<bool>(),
        any::<bool>(),
    )
}

/// The text as the engine compares it: no leading BOM, CRLF as LF.
fn norm(text: &str) -> String {
    lf(text.strip_prefix(BOM).unwrap_or(text))
}

/// Text as the engine reads it: CRLF and a lone CR end lines as LF does.
fn lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Starts of `needle` in `hay`, overlapping ones included.
fn count(hay: &str, needle: &str) -> usize {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..h.len()).filter(|&i| h[i..].starts_with(n)).count()
}

/// The shortest substring of `text` that starts at char `start`, has at
/// least `min_len` chars, ends at or before byte `end`, and occurs exactly
/// once in `text`.
fn unique_at(text: &str, start: Index, min_len: usize, end: usize) -> Option<String> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    if bounds.is_empty() {
        return None;
    }
    let from = bounds[start.index(bounds.len())];
    text[from..end.max(from)]
        .char_indices()
        .map(|(i, c)| from + i + c.len_utf8())
        .skip(min_len.saturating_sub(1))
        .map(|to| &text[from..to])
        .find(|cand| count(text, cand) == 1)
        .map(str::to_string)
}

/// Every '\n' comes after a '\r' and every '\r' comes before a '\n'.
fn crlf_only(text: &str) -> bool {
    let b = text.as_bytes();
    (0..b.len()).all(|i| match b[i] {
        b'\n' => i > 0 && b[i - 1] == b'\r',
        b'\r' => b.get(i + 1) == Some(&b'\n'),
        _ => true,
    })
}

/// Whether some '\n' is CRLF and some is LF alone.
fn mixed_endings(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf < text.matches('\n').count()
}

fn exact_once(a: &Applied) -> bool {
    a.outcomes
        == [Outcome::Applied {
            level: Level::Exact,
            count: 1,
        }]
}

/// A text's lines without their '\n', each with whether a '\n' ends it.
fn lines_of(text: &str) -> Vec<(&str, bool)> {
    let mut out: Vec<(&str, bool)> = text
        .split_inclusive('\n')
        .map(|l| match l.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (l, false),
        })
        .collect();
    if text.is_empty() {
        out.clear();
    }
    out
}

/// Checks that `diff` is a well-formed diff that takes `old` to `new`
/// (both as the engine compares them: CRLF as LF, and without the BOM when
/// old starts with one; an edit can put one at the start of a file that
/// had none, and that one is text): hunks in order,
/// headers that count their lines, line numbers that follow the text, at
/// most three lines of context at either end of a hunk and six inside, and
/// applying the hunks to old's lines gives new's.
pub(crate) fn check_diff(old: &str, new: &str, diff: &Diff) -> Result<(), String> {
    const CONTEXT: usize = 3;
    let new = match old.starts_with(BOM) {
        true => norm(new),
        false => lf(new),
    };
    let old = norm(old);
    let (old_lines, new_lines) = (lines_of(&old), lines_of(&new));
    let mut out: Vec<(&str, bool)> = Vec::new();
    let mut at = 0; // next old line, 0-based
    for (h, hunk) in diff.hunks.iter().enumerate() {
        let start = hunk
            .old_start
            .checked_sub(1)
            .ok_or(format!("hunk {h}: old_start 0"))?;
        if start < at || (h > 0 && start == at) {
            return Err(format!(
                "hunk {h} starts at old line {} but line {} was reached",
                hunk.old_start,
                at + 1
            ));
        }
        if start > old_lines.len() {
            return Err(format!("hunk {h} starts past the end of old"));
        }
        out.extend_from_slice(&old_lines[at..start]);
        at = start;
        if hunk.new_start != out.len() + 1 {
            return Err(format!(
                "hunk {h}: new_start {} but the new text is at line {}",
                hunk.new_start,
                out.len() + 1
            ));
        }
        let count = |k: LineKind| {
            hunk.lines
                .iter()
                .filter(|l| l.kind == k || l.kind == LineKind::Context)
                .count()
        };
        if (hunk.old_len, hunk.new_len) != (count(LineKind::Removed), count(LineKind::Added)) {
            return Err(format!(
                "hunk {h}: header counts {}/{} do not match its lines",
                hunk.old_len, hunk.new_len
            ));
        }
        let mut run = 0; // context lines in a row
        for (i, l) in hunk.lines.iter().enumerate() {
            let line = (l.text.as_str(), !l.no_newline);
            match l.kind {
                LineKind::Context | LineKind::Removed => {
                    if old_lines.get(at) != Some(&line) {
                        return Err(format!(
                            "hunk {h} line {i}: {:?} is not old line {} ({:?})",
                            l.text,
                            at + 1,
                            old_lines.get(at)
                        ));
                    }
                    if l.old_line != Some(at + 1) {
                        return Err(format!(
                            "hunk {h} line {i}: old_line {:?}, want {}",
                            l.old_line,
                            at + 1
                        ));
                    }
                    at += 1;
                }
                LineKind::Added => {
                    if l.old_line.is_some() {
                        return Err(format!("hunk {h} line {i}: added line has an old_line"));
                    }
                }
            }
            match l.kind {
                LineKind::Context | LineKind::Added => {
                    if l.new_line != Some(out.len() + 1) {
                        return Err(format!(
                            "hunk {h} line {i}: new_line {:?}, want {}",
                            l.new_line,
                            out.len() + 1
                        ));
                    }
                    out.push(line);
                }
                LineKind::Removed => {
                    if l.new_line.is_some() {
                        return Err(format!("hunk {h} line {i}: removed line has a new_line"));
                    }
                }
            }
            if l.kind == LineKind::Context {
                run += 1;
                let limit = if run == i + 1 { CONTEXT } else { 2 * CONTEXT };
                if run > limit {
                    return Err(format!(
                        "hunk {h}: {run} context lines in a row at line {i}"
                    ));
                }
            } else {
                run = 0;
            }
        }
        if run > CONTEXT {
            return Err(format!("hunk {h}: {run} context lines at its end"));
        }
        if run == hunk.lines.len() {
            return Err(format!("hunk {h} changes nothing"));
        }
    }
    out.extend_from_slice(&old_lines[at.min(old_lines.len())..]);
    if out != new_lines {
        return Err(format!(
            "the diff applied to old gives {out:?}, not {new_lines:?}"
        ));
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::proptest_config())]

    /// (a) An exact unique edit followed by its inverse gives back the
    /// original bytes: BOM, every line ending, the final newline.
    #[test]
    fn edit_then_inverse_restores_the_text(
        text in text(),
        start in any::<Index>(),
        min_len in 1usize..6,
        new in new_text(1),
    ) {
        let n = norm(&text);
        let old = unique_at(&n, start, min_len, n.len());
        prop_assume!(old.is_some());
        let old = old.unwrap_or_default();
        prop_assume!(lf(&new) != old);

        let there = apply(&text, &[Edit::new(old.clone(), new.clone())], &[]);
        prop_assert!(there.is_ok(), "unique exact old refused: {:?}", there.err());
        let there = there.unwrap_or_else(|_| unreachable!());
        prop_assert!(exact_once(&there), "{:?}", there.outcomes);
        prop_assert!(there.changed);

        // The inverse is an exact unique edit only if new occurs once.
        prop_assume!(count(&norm(&there.text), &lf(&new)) == 1);
        // old's line endings come back as the file's usual ending: that is
        // the original's only when the file had one kind of ending and the
        // edited file still shows it.
        if old.contains('\n') {
            prop_assume!(!mixed_endings(&text));
            prop_assume!(!text.contains("\r\n") || there.text.contains("\r\n"));
        }

        let back = apply(&there.text, &[Edit::new(new, old)], &[]);
        prop_assert!(back.is_ok(), "inverse refused: {:?}", back.err());
        let back = back.unwrap_or_else(|_| unreachable!());
        prop_assert!(exact_once(&back), "{:?}", back.outcomes);
        prop_assert_eq!(back.text, text);
    }

    /// (b) apply never panics, whatever it is given, and what it reports
    /// hangs together.
    #[test]
    fn apply_never_panics(
        text in wild(40),
        picks in prop::collection::vec(wild_edit(), 1..4),
    ) {
        let chars: Vec<char> = text.chars().collect();
        let edits: Vec<Edit> = picks
            .iter()
            .map(|(from_text, at, len, old, new, replace_all, _)| {
                let old = if *from_text && !chars.is_empty() {
                    // A piece of the text, possibly cutting a CRLF in two.
                    let s = at.index(chars.len());
                    chars[s..(s + len).min(chars.len())].iter().collect()
                } else {
                    old.clone()
                };
                Edit { old, new: new.clone(), replace_all: *replace_all }
            })
            .collect();
        // Some edits recorded as made by the previous call.
        let previous: Vec<Edit> = edits
            .iter()
            .zip(&picks)
            .filter(|(_, p)| p.6)
            .map(|(e, _)| e.clone())
            .collect();

        match apply(&text, &edits, &previous) {
            Ok(a) => {
                prop_assert_eq!(a.outcomes.len(), edits.len());
                if text.starts_with(BOM) {
                    prop_assert!(a.text.starts_with(BOM));
                }
                if a.outcomes.iter().all(|o| *o == Outcome::AlreadyApplied) {
                    prop_assert!(!a.changed);
                }
                if !a.changed {
                    prop_assert_eq!(&a.text, &text);
                }
                let _ = a.diff.unified("f.txt");
                // The written text, read again (a lone CR ends a line, a CR
                // before a LF is one CRLF), has the lines the diff shows.
                if let Err(why) = check_diff(&text, &a.text, &a.diff) {
                    prop_assert!(false, "{}\n{}", why, a.diff.unified("f.txt"));
                }
            }
            Err(e) => {
                let shown = e.to_string();
                if let Some((n, total)) = e.edit {
                    prop_assert_eq!(total, edits.len());
                    prop_assert!((1..=total).contains(&n));
                    if !e.validation {
                        let head = format!("edit {n} of {total} failed, so nothing was written: ");
                        prop_assert!(shown.starts_with(&head), "{}", shown);
                    }
                }
            }
        }
    }

    /// The streamed form of a call's result (`plan`: kept spans of the
    /// file as read and the new text, never joined) writes the same bytes
    /// as `apply`'s one string, byte for byte, on any text: BOM, CRLF,
    /// lone CR (whose LF neighbours are rewritten at the seams), mixed.
    #[test]
    fn plan_writes_what_apply_writes(
        text in wild(40),
        picks in prop::collection::vec(wild_edit(), 1..5),
    ) {
        let chars: Vec<char> = text.chars().collect();
        let edits: Vec<Edit> = picks
            .iter()
            .map(|(from_text, at, len, old, new, replace_all, _)| {
                let old = if *from_text && !chars.is_empty() {
                    let s = at.index(chars.len());
                    chars[s..(s + len).min(chars.len())].iter().collect()
                } else {
                    old.clone()
                };
                Edit { old, new: new.clone(), replace_all: *replace_all }
            })
            .collect();
        // `plan` turns a text with CRs LF-only in its own buffer while it
        // matches: it must give the text back as it was, whatever happens.
        let mut planned_on = text.clone();
        let planned = plan(&mut planned_on, &edits, &[]);
        prop_assert_eq!(&planned_on, &text);
        match (apply(&text, &edits, &[]), planned) {
            (Ok(a), Ok(p)) => {
                prop_assert_eq!(&p.content.render(&text), &a.text);
                prop_assert_eq!(p.content.len(), a.text.len());
                prop_assert_eq!(p.content.slices(&text).concat(), a.text.as_bytes().to_vec());
                prop_assert_eq!(&p.outcomes, &a.outcomes);
                prop_assert_eq!(&p.notes, &a.notes);
                prop_assert_eq!(p.diff.unified("f"), a.diff.unified("f"));
                prop_assert_eq!(p.changed, a.changed);
            }
            (Err(a), Err(p)) => prop_assert_eq!(a.to_string(), p.to_string()),
            (a, p) => prop_assert!(false, "apply {:?} but plan {:?}", a.is_ok(), p.is_ok()),
        }
    }

    /// (b, continued) On LF text without a BOM, a single edit whose old
    /// occurs exactly once applies exactly, and gives what `replacen` gives
    /// (new's CRLFs written as the file's LF).
    #[test]
    fn a_unique_exact_edit_is_replacen(
        text in lf_wild(40),
        start in any::<Index>(),
        min_len in 1usize..6,
        new in wild(6),
    ) {
        let old = unique_at(&text, start, min_len, text.len());
        prop_assume!(old.is_some());
        let old = old.unwrap_or_default();
        prop_assume!(lf(&new) != old);
        let a = apply(&text, &[Edit::new(old.clone(), new.clone())], &[]);
        prop_assert!(a.is_ok(), "unique exact old refused: {:?}", a.err());
        let a = a.unwrap_or_else(|_| unreachable!());
        prop_assert!(exact_once(&a), "{:?}", a.outcomes);
        prop_assert_eq!(a.text, text.replacen(&old, &lf(&new), 1));
    }

    /// (c) In a file whose every line ends in CRLF, whatever edits apply
    /// (exact or tolerant, new with LF or CRLF), no bare LF appears.
    #[test]
    fn crlf_files_get_no_bare_lf(
        lines in prop::collection::vec(
            prop::collection::vec(prop::sample::select(ATOMS), 0..8).prop_map(|v| v.concat()),
            1..12,
        ),
        picks in prop::collection::vec(
            (any::<Index>(), 1usize..4, 0u8..3, new_text(0), any::<bool>()),
            1..4,
        ),
        bom in any::<bool>(),
    ) {
        let body: String = lines.iter().map(|l| format!("{l}\r\n")).collect();
        let text = if bom { format!("{BOM}{body}") } else { body };
        let edits: Vec<Edit> = picks
            .iter()
            .map(|(at, span, how, new, replace_all)| {
                let first = at.index(lines.len());
                let chosen = &lines[first..(first + span).min(lines.len())];
                let old: String = match how {
                    // Whole lines, as in the file.
                    0 => chosen.iter().map(|l| format!("{l}\n")).collect(),
                    // Whole lines without trailing whitespace.
                    1 => chosen.iter().map(|l| format!("{}\n", l.trim_end())).collect(),
                    // Whole lines, indented by two more spaces.
                    _ => chosen.iter().map(|l| format!("  {l}\n")).collect(),
                };
                Edit { old, new: format!("{new}\n{new}"), replace_all: *replace_all }
            })
            .collect();
        if let Ok(a) = apply(&text, &edits, &[]) {
            prop_assert!(crlf_only(&a.text), "bare LF or CR in {:?}", a.text);
            if let Err(why) = check_diff(&text, &a.text, &a.diff) {
                prop_assert!(false, "{}\n{}", why, a.diff.unified("f.txt"));
            }
            prop_assert_eq!(a.text.starts_with(BOM), bom);
        }
    }

    /// (d) The final newline stays as it was (present or missing) when the
    /// edit does not touch the last line ending, and also when old ends in a
    /// newline the file's last line lacks.
    #[test]
    fn final_newline_kept(
        lines in prop::collection::vec(
            prop::collection::vec(prop::sample::select(ATOMS), 1..6).prop_map(|v| v.concat()),
            1..8,
        ),
        crlf in any::<bool>(),
        final_nl in any::<bool>(),
        start in any::<Index>(),
        min_len in 1usize..5,
        new in new_text(0),
        last_line in any::<bool>(),
    ) {
        let ending = if crlf { "\r\n" } else { "\n" };
        let mut text = lines.join(ending);
        if final_nl {
            text.push_str(ending);
        }
        let n = norm(&text);
        let (old, new) = if last_line && !final_nl {
            // The model's old ends in a newline the file's last line lacks.
            let last = lines.last().map(|l| l.trim_end()).unwrap_or_default();
            prop_assume!(!last.is_empty());
            // A new that ends in an empty line ("\n", "c\n\n") leaves the
            // file ending in '\n' even with the missing newline kept: the
            // edit itself empties the last line.
            let body = lf(&new).trim_end_matches('\n').to_string();
            prop_assume!(!body.is_empty());
            (format!("{last}\n"), format!("{body}\n"))
        } else {
            // Anything before the final newline.
            let end = if final_nl { n.len() - 1 } else { n.len() };
            let old = unique_at(&n, start, min_len, end);
            prop_assume!(old.is_some());
            let old = old.unwrap_or_default();
            // Replacing the end of a file without a final newline so that
            // the text then ends in '\n' (new ends in one, or new is empty
            // and old was the whole last line) is the edit's own doing.
            if !final_nl && let Some(prefix) = n.strip_suffix(old.as_str()) {
                prop_assume!(!format!("{prefix}{}", lf(&new)).ends_with('\n'));
            }
            (old, new)
        };
        prop_assume!(lf(&new) != old);
        if let Ok(a) = apply(&text, &[Edit::new(old, new)], &[]) {
            prop_assert_eq!(a.text.ends_with('\n'), final_nl, "{:?} -> {:?}", text, a.text);
            prop_assert_eq!(a.text.ends_with(ending), final_nl, "{:?} -> {:?}", text, a.text);
        }
    }

    /// (e) The call's one diff takes the file's text to the text all edits
    /// leave, for calls of several edits (exact and tolerant, replace_all),
    /// in files with any line endings and a BOM.
    #[test]
    fn the_call_diff_takes_old_to_new(
        text in text(),
        picks in prop::collection::vec(
            (any::<Index>(), 1usize..8, 0u8..4, new_text(0), any::<bool>()),
            1..6,
        ),
    ) {
        let n = norm(&text);
        let edits: Vec<Edit> = picks
            .iter()
            .filter_map(|(at, min_len, how, new, replace_all)| {
                let old = unique_at(&n, *at, *min_len, n.len())?;
                let old = match how {
                    // Tolerant: trailing whitespace left out, or indented.
                    0 => old.split('\n').map(str::trim_end).collect::<Vec<_>>().join("\n"),
                    1 => old.split('\n').map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n"),
                    _ => old,
                };
                Some(Edit { old, new: new.clone(), replace_all: *replace_all })
            })
            .collect();
        prop_assume!(!edits.is_empty());
        if let Ok(a) = apply(&text, &edits, &[]) {
            if let Err(why) = check_diff(&text, &a.text, &a.diff) {
                prop_assert!(false, "{}\n{}", why, a.diff.unified("f.txt"));
            }
            prop_assert_eq!(a.diff.hunks.is_empty(), norm(&text) == norm(&a.text));
        }
    }
}

/// Invisible characters the tolerant levels fold, the rarer ones included.
const INVISIBLES: &[char] = &[
    '\u{200b}',
    '\u{200c}',
    '\u{200d}',
    '\u{2060}',
    '\u{00ad}',
    '\u{fe0f}',
    '\u{034f}',
    '\u{061c}',
    '\u{180b}',
    '\u{3164}',
    '\u{2066}',
    '\u{e0067}',
];

proptest! {
    #![proptest_config(crate::proptest_config())]

    /// Round three: where old matched only by folding a character away
    /// (an invisible one), a changed line keeps it where new keeps old's
    /// text.
    #[test]
    fn a_folded_character_on_a_changed_line_is_kept(
        n in 2usize..8,
        at in any::<Index>(),
        pos in 0usize..6,
        c in prop::sample::select(INVISIBLES),
        indent in prop::sample::select(vec!["", "    ", "\t", "  "]),
    ) {
        let clean: Vec<String> = (0..n).map(|i| format!("{indent}v{i} = word{i}x")).collect();
        let k = at.index(n);
        let body = format!("word{k}x");
        let cut = pos.min(body.len());
        let mut dirty = clean.clone();
        dirty[k] = format!("{indent}v{k} = {}{c}{}", &body[..cut], &body[cut..]);
        let text: String = dirty.iter().map(|l| format!("{l}\n")).collect();
        let old: String = clean.iter().map(|l| format!("{l}\n")).collect();
        let mut changed = clean.clone();
        changed[k].push_str(" # changed");
        let new: String = changed.iter().map(|l| format!("{l}\n")).collect();
        let a = apply(&text, &[Edit::new(old, new)], &[]);
        prop_assert!(a.is_ok(), "refused: {:?}", a.err());
        let a = a.unwrap_or_else(|_| unreachable!());
        let mut want = dirty.clone();
        want[k].push_str(" # changed");
        let want: String = want.iter().map(|l| format!("{l}\n")).collect();
        prop_assert_eq!(a.text, want);
    }

    /// Round three: a block that stands once with LF and once with CRLF is
    /// one exact match for an old sent with either: the copy with the
    /// other endings is left alone.
    #[test]
    fn a_copy_with_other_line_endings_is_not_a_second_match(
        n in 1usize..5,
        crlf_first in any::<bool>(),
        sent_crlf in any::<bool>(),
        at in any::<Index>(),
    ) {
        let block: Vec<String> = (0..n).map(|i| format!("line {i}")).collect();
        let lf_block: String = block.iter().map(|l| format!("{l}\n")).collect();
        let crlf_block: String = block.iter().map(|l| format!("{l}\r\n")).collect();
        let (first, second) = if crlf_first {
            (&crlf_block, &lf_block)
        } else {
            (&lf_block, &crlf_block)
        };
        let text = format!("{first}--\n{second}end\n");
        let k = at.index(n);
        let mut changed = block.clone();
        changed[k] = format!("LINE {k}");
        let eol = if sent_crlf { "\r\n" } else { "\n" };
        let old: String = block.iter().map(|l| format!("{l}{eol}")).collect();
        let new: String = changed.iter().map(|l| format!("{l}{eol}")).collect();
        let a = apply(&text, &[Edit::new(old, new)], &[]);
        prop_assert!(a.is_ok(), "refused: {:?}", a.err());
        let a = a.unwrap_or_else(|_| unreachable!());
        // The other copy is byte for byte as it was.
        let other = if sent_crlf { &lf_block } else { &crlf_block };
        prop_assert!(a.text.contains(other.as_str()), "{:?}", a.text);
        prop_assert!(a.text.contains(&format!("LINE {k}")), "{:?}", a.text);
        prop_assert_eq!(a.text.matches(&format!("line {k}")).count(), 1, "{:?}", a.text);
    }

    /// Round three: a dedented old (a tolerant match) with a call whose
    /// arguments are aligned under its open parenthesis: new's added
    /// argument keeps its alignment, moved by the block's difference.
    #[test]
    fn a_dedented_edit_keeps_alignment_under_the_parenthesis(
        depth in 1usize..4,
        name in "[a-z]{1,12}",
        tab in any::<bool>(),
    ) {
        let unit = if tab { "\t" } else { "    " };
        let ind = unit.repeat(depth);
        let head = format!("x = {name}(");
        let pad = " ".repeat(head.len());
        let file_lines = [
            format!("{ind}{head}a,"),
            format!("{ind}{pad}b)"),
            format!("{ind}done()"),
        ];
        let text: String = file_lines.iter().map(|l| format!("{l}\n")).collect();
        let old = format!("{head}a,\n{pad}b)\ndone()\n");
        let new = format!("{head}a,\n{pad}c,\n{pad}b)\ndone()\n");
        let a = apply(&text, &[Edit::new(old, new)], &[]);
        prop_assert!(a.is_ok(), "refused: {:?}", a.err());
        let a = a.unwrap_or_else(|_| unreachable!());
        let want = format!(
            "{ind}{head}a,\n{ind}{pad}c,\n{ind}{pad}b)\n{ind}done()\n"
        );
        prop_assert_eq!(a.text, want);
    }
}

/// A file of indented lines from a few words (so lines repeat and places
/// are often ambiguous), with LF or CRLF endings.
fn indented_file() -> impl Strategy<Value = (Vec<String>, bool)> {
    (
        prop::collection::vec((0usize..4, 0usize..6, 0usize..3, 0usize..4), 1..40),
        any::<bool>(),
    )
        .prop_map(|(lines, crlf)| {
            const WORDS: &[&str] = &["x = 1", "y = f(x)", "return y", "}", "if a:", "# c"];
            let lines = lines
                .into_iter()
                .enumerate()
                .map(|(i, (depth, word, unit, plain))| {
                    let unit = ["    ", "\t", "  "][unit];
                    // Most lines are unique, some repeat.
                    let tag = if plain == 0 {
                        String::new()
                    } else {
                        format!(" {i}")
                    };
                    format!("{}{}{tag}", unit.repeat(depth), WORDS[word])
                })
                .collect();
            (lines, crlf)
        })
}

proptest! {
    #![proptest_config(crate::proptest_config())]

    /// Tolerant edits looked for in a window of the text (the places from
    /// the original's line index and the lines edits changed) give what
    /// looking at the whole text gives: the same bytes, outcomes, notes
    /// (line numbers included), diff, or the same refusal.
    #[test]
    fn windows_change_nothing(
        (lines, crlf) in indented_file(),
        picks in prop::collection::vec((any::<Index>(), 1usize..4, 0usize..3, any::<bool>()), 1..8),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let text = format!("{}{eol}", lines.join(eol));
        let edits: Vec<Edit> = picks
            .iter()
            .map(|(at, len, how, nl)| {
                let s = at.index(lines.len());
                let chunk = &lines[s..(s + len).min(lines.len())];
                // Sent dedented (or with other indentation), so that only
                // a tolerant level finds it.
                let old: Vec<String> = chunk
                    .iter()
                    .map(|l| match how {
                        0 => l.trim_start().to_string(),
                        1 => format!("  {}", l.trim_start()),
                        _ => format!("{l} "),
                    })
                    .collect();
                let mut new = old.clone();
                new[0] = format!("{} # changed", new[0]);
                let end = if *nl { "\n" } else { "" };
                Edit::new(format!("{}{end}", old.join("\n")), format!("{}{end}", new.join("\n")))
            })
            .collect();
        match (apply(&text, &edits, &[]), apply_without_windows(&text, &edits, &[])) {
            (Ok(a), Ok(w)) => {
                prop_assert_eq!(&a.text, &w.text);
                prop_assert_eq!(&a.outcomes, &w.outcomes);
                prop_assert_eq!(&a.notes, &w.notes);
                prop_assert_eq!(a.diff.unified("f"), w.diff.unified("f"));
            }
            (Err(a), Err(w)) => prop_assert_eq!(a.to_string(), w.to_string()),
            (a, w) => prop_assert!(
                false,
                "windows {:?}, whole text {:?}",
                a.map(|x| x.text),
                w.map(|x| x.text)
            ),
        }
    }
}
