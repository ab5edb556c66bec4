//! `apply` against a model of what a call must do, line by line.
//!
//! Files are random: mixed LF, CRLF and lone-CR endings, a BOM or not, a
//! final newline or not, tabs, spaces and invisible characters inside
//! lines. Edit lists are random too: whole-line edits taken from the file
//! as read, that replace, insert or delete lines, some overlapping earlier
//! edits and some repeating them. The model says, for each call, either the
//! exact bytes of the result or that the call must be refused; a refusal
//! writes nothing, and every line an edit did not change keeps its bytes,
//! its ending included.

use nib::edit::{Edit, Outcome, apply};
use proptest::prelude::*;

const BOM: &str = "\u{feff}";
/// What may follow a line's id: whitespace, letters, invisible characters.
const ATOMS: &[&str] = &[" ", "\t", "a", "b", "\u{200b}", "é", "\u{fe0f}", "  "];

#[derive(Debug, Clone, PartialEq)]
struct Line {
    text: String,
    /// None for a last line without a final newline.
    eol: Option<&'static str>,
}

/// The ending lines an edit brings in get: the most common, the first seen
/// of those tied.
fn usual(lines: &[Line]) -> &'static str {
    let mut best: Option<(&'static str, usize, usize)> = None;
    for eol in ["\n", "\r\n", "\r"] {
        let count = lines.iter().filter(|l| l.eol == Some(eol)).count();
        let first = lines
            .iter()
            .position(|l| l.eol == Some(eol))
            .unwrap_or(usize::MAX);
        if count > 0 && best.is_none_or(|(_, c, f)| count > c || (count == c && first < f)) {
            best = Some((eol, count, first));
        }
    }
    best.map_or("\n", |(e, _, _)| e)
}

fn render(bom: bool, lines: &[Line]) -> String {
    let mut out = if bom { BOM.to_string() } else { String::new() };
    for l in lines {
        out.push_str(&l.text);
        out.push_str(l.eol.unwrap_or(""));
    }
    out
}

/// One generated edit: the first line and line count of old in the file
/// as read, what to do (0 replace a line, 1 insert after a line, 2 delete
/// a line), at which line of old, whether to repeat an earlier edit
/// instead, and whether old and new are sent with CRLF.
type RawEdit = (usize, usize, u8, usize, Option<usize>, bool);

fn file() -> impl Strategy<Value = (bool, Vec<(Vec<usize>, usize)>, bool)> {
    (
        any::<bool>(),
        prop::collection::vec(
            (prop::collection::vec(0..ATOMS.len(), 0..4), 0usize..3),
            1..10,
        ),
        any::<bool>(),
    )
}

fn raw_edits() -> impl Strategy<Value = Vec<RawEdit>> {
    prop::collection::vec(
        (
            0usize..10,
            1usize..4,
            0u8..3,
            0usize..3,
            prop::option::weighted(0.25, 0usize..4),
            any::<bool>(),
        ),
        1..5,
    )
}

/// The edits as sent, and each one's old and new as lists of line texts.
fn build(read: &[Line], raw: &[RawEdit]) -> Vec<(Edit, Vec<String>, Vec<String>)> {
    let mut out: Vec<(Edit, Vec<String>, Vec<String>)> = Vec::new();
    for (k, &(start, count, op, at, repeat, crlf)) in raw.iter().enumerate() {
        if let Some(j) = repeat.filter(|&j| j < out.len()) {
            let again = out[j].clone();
            out.push(again);
            continue;
        }
        let start = start % read.len();
        let count = count.min(read.len() - start);
        let old: Vec<String> = read[start..start + count]
            .iter()
            .map(|l| l.text.clone())
            .collect();
        let mut new = old.clone();
        let at = at % count;
        let fresh = format!("N{k} x");
        match op {
            0 => new[at] = fresh,
            1 => new.insert(at + 1, fresh),
            _ => {
                new.remove(at);
            }
        }
        let sep = if crlf { "\r\n" } else { "\n" };
        let join = |lines: &[String]| {
            lines
                .iter()
                .map(|l| format!("{l}{sep}"))
                .collect::<String>()
        };
        out.push((Edit::new(join(&old), join(&new)), old, new));
    }
    out
}

/// What the call must give: the file's bytes, or None for a refusal.
fn expected(
    bom: bool,
    read: &[Line],
    edits: &[(Edit, Vec<String>, Vec<String>)],
) -> Option<String> {
    let usual = usual(read);
    let mut cur: Vec<Line> = read.to_vec();
    for (i, (_, old, new)) in edits.iter().enumerate() {
        // The same edit as an earlier one of the call: applied once.
        if edits[..i].iter().any(|(_, o, n)| o == old && n == new) {
            continue;
        }
        let at = (0..=cur.len().saturating_sub(old.len())).find(|&p| {
            cur.len() >= p + old.len()
                && cur[p..p + old.len()].iter().map(|l| &l.text).eq(old.iter())
        })?;
        let at_eof = at + old.len() == cur.len() && cur.last().is_some_and(|l| l.eol.is_none());
        let block: Vec<Line> = cur[at..at + old.len()].to_vec();
        let mut repl: Vec<Line> = new
            .iter()
            .map(|t| match block.iter().find(|l| &l.text == t) {
                // A line the edit keeps keeps its bytes.
                Some(kept) => Line {
                    text: t.clone(),
                    eol: kept.eol.or(Some(usual)),
                },
                None => Line {
                    text: t.clone(),
                    eol: Some(usual),
                },
            })
            .collect();
        if at_eof && let Some(last) = repl.last_mut() {
            last.eol = None;
        }
        cur.splice(at..at + old.len(), repl);
    }
    Some(render(bom, &cur))
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_call_gives_the_models_bytes_or_refuses(
        (bom, spec, final_nl) in file(),
        style in 0u8..4,
        raw in raw_edits(),
    ) {
        let n = spec.len();
        let read: Vec<Line> = spec
            .iter()
            .enumerate()
            .map(|(i, (atoms, e))| {
                let eol = match style {
                    0 => "\n",
                    1 => "\r\n",
                    2 => "\r",
                    _ => ["\n", "\r\n", "\r"][*e],
                };
                Line {
                    text: format!("L{i}{}", atoms.iter().map(|&a| ATOMS[a]).collect::<String>()),
                    eol: (i + 1 < n || final_nl).then_some(eol),
                }
            })
            .collect();
        let text = render(bom, &read);
        let edits = build(&read, &raw);
        let sent: Vec<Edit> = edits.iter().map(|(e, _, _)| e.clone()).collect();
        let want = expected(bom, &read, &edits);
        match (apply(&text, &sent, &[]), want) {
            (Ok(got), Some(want)) => {
                prop_assert_eq!(&got.text, &want, "file {:?}, edits {:?}", text, sent);
                for (i, o) in got.outcomes.iter().enumerate() {
                    let dup = edits[..i].iter().any(|(_, o2, n2)| *o2 == edits[i].1 && *n2 == edits[i].2);
                    prop_assert_eq!(dup, matches!(o, Outcome::Duplicate { .. }), "{:?}", got.outcomes);
                }
            }
            (Err(_), None) => {}
            (Ok(got), None) => prop_assert!(false, "applied what must be refused: {:?} -> {:?}, edits {:?}", text, got.text, sent),
            (Err(e), Some(want)) => prop_assert!(false, "refused {:?} (want {:?}), edits {:?}: {}", text, want, sent, e),
        }
    }
}
