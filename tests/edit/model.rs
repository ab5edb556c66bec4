//! `apply` against a model of what a call must do, line by line.
//!
//! Files are random: mixed LF, CRLF and lone-CR endings, a BOM or not, a
//! final newline or not, empty lines, indentation, tabs, spaces and
//! invisible characters inside lines. Edit lists are random too: edits of
//! whole lines taken from the file as read, that replace, insert or delete
//! lines (an empty one among them), some overlapping earlier edits and some
//! repeating them; old and new sent with LF, CRLF or lone CR, sometimes
//! without their final line break, a one-line old sometimes without its
//! indentation. The model says, for each call, either the exact bytes of
//! the result or that the call must be refused: a refusal writes nothing;
//! every line an edit keeps keeps its bytes, its ending included; a changed
//! or added line takes the file's usual ending, except that the line break
//! old stopped short of still ends new's last line; an empty line after one
//! ending in a lone CR ends in CR (a LF there would read back as one CRLF).
//! What is written reads back as exactly the lines the diff shows.

use nib::edit::{Edit, Outcome, apply};
use proptest::prelude::*;

const BOM: &str = "\u{feff}";
/// What may follow a line's id: whitespace, letters, invisible characters.
const ATOMS: &[&str] = &[" ", "\t", "a", "b", "\u{200b}", "é", "\u{fe0f}", "  "];
/// What a line may start with.
const INDENTS: &[&str] = &["", "", "    ", "\t"];
const ENDINGS: [&str; 3] = ["\n", "\r\n", "\r"];

#[derive(Debug, Clone, PartialEq)]
struct Line {
    text: String,
    /// None for a last line without a final newline.
    eol: Option<&'static str>,
}

impl Line {
    fn indent(&self) -> &str {
        let body = self.text.trim_start_matches([' ', '\t']);
        &self.text[..self.text.len() - body.len()]
    }
}

/// The ending lines an edit brings in get: the most common, the first seen
/// of those tied.
fn usual(lines: &[Line]) -> &'static str {
    let mut best: Option<(&'static str, usize, usize)> = None;
    for eol in ENDINGS {
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

/// An empty line ending in LF right after a line ending in a lone CR would
/// read as part of one CRLF: it ends in CR.
fn no_cr_lf(lines: &mut [Line]) {
    for i in 1..lines.len() {
        if lines[i - 1].eol == Some("\r") && lines[i].text.is_empty() && lines[i].eol == Some("\n")
        {
            lines[i].eol = Some("\r");
        }
    }
}

fn render(bom: bool, lines: &[Line]) -> String {
    let mut out = if bom { BOM.to_string() } else { String::new() };
    for l in lines {
        out.push_str(&l.text);
        out.push_str(l.eol.unwrap_or(""));
    }
    out
}

/// What an edit does to the lines of its old.
#[derive(Debug, Clone, Copy)]
enum Op {
    Replace,
    InsertAfter,
    Delete,
    InsertEmptyAfter,
    Empty,
}

const OPS: [Op; 5] = [
    Op::Replace,
    Op::InsertAfter,
    Op::Delete,
    Op::InsertEmptyAfter,
    Op::Empty,
];

/// One generated edit: the first line and line count of old in the file
/// as read, what to do at which line of old, whether to repeat an earlier
/// edit instead, the line break old and new are sent with, whether they
/// end with one, and whether a one-line old leaves out its indentation.
#[derive(Debug, Clone)]
struct RawEdit {
    start: usize,
    count: usize,
    op: usize,
    at: usize,
    repeat: Option<usize>,
    sep: usize,
    final_break: bool,
    dedent: bool,
}

/// One generated line: its indentation, the atoms after its id, its
/// ending, and whether it is empty instead.
type LineSpec = (usize, Vec<usize>, usize, bool);

/// A BOM or not, the lines, and whether the last ends in a newline.
fn file() -> impl Strategy<Value = (bool, Vec<LineSpec>, bool)> {
    (
        any::<bool>(),
        prop::collection::vec(
            (
                0..INDENTS.len(),
                prop::collection::vec(0..ATOMS.len(), 0..4),
                0usize..3,
                prop::bool::weighted(0.2),
            ),
            1..10,
        ),
        any::<bool>(),
    )
}

fn raw_edits() -> impl Strategy<Value = Vec<RawEdit>> {
    prop::collection::vec(
        (
            (0usize..10, 1usize..4, 0..OPS.len(), 0usize..3),
            prop::option::weighted(0.25, 0usize..4),
            (
                0usize..3,
                prop::bool::weighted(0.7),
                prop::bool::weighted(0.3),
            ),
        ),
        1..5,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(
                |((start, count, op, at), repeat, (sep, final_break, dedent))| RawEdit {
                    start,
                    count,
                    op,
                    at,
                    repeat,
                    sep,
                    final_break,
                    dedent,
                },
            )
            .collect()
    })
}

/// One edit as the model sees it: where its old is in the file as read
/// (first line, count), what it does, and how it was sent.
#[derive(Debug, Clone)]
struct Planned {
    edit: Edit,
    /// old and new as compared: LF line breaks.
    old: String,
    new: String,
    old_lines: Vec<String>,
    op: Op,
    at: usize,
    fresh: String,
    /// old and new end with a line break.
    final_break: bool,
    /// The indentation old's one line was sent without.
    dedent: String,
}

/// The edits as sent, or None where the generated edit is not one a model
/// would send as meant (old that could match away from line starts).
fn build(read: &[Line], raw: &[RawEdit]) -> Vec<Planned> {
    let mut out: Vec<Planned> = Vec::new();
    for (k, r) in raw.iter().enumerate() {
        if let Some(j) = r.repeat.filter(|&j| j < out.len()) {
            let again = out[j].clone();
            out.push(again);
            continue;
        }
        let start = r.start % read.len();
        let count = r.count.min(read.len() - start);
        let block = &read[start..start + count];
        // Deleting old's one line without its break leaves the break: the
        // line is emptied.
        let op = match OPS[r.op] {
            Op::Delete if count == 1 && !r.final_break => Op::Empty,
            op => op,
        };
        let at = r.at % count;
        // old starts on a line with text (an old starting with a line break
        // could match at the end of any line), and sent without its final
        // break it ends on one (else it reads as the line before with its
        // break).
        if block[0].text.is_empty() || (!r.final_break && block[count - 1].text.is_empty()) {
            continue;
        }
        // Without indentation only a one-line old, and not to delete it
        // (that joins what is left of the line to the next).
        let dedent = if r.dedent && count == 1 && !matches!(op, Op::Delete) {
            block[0].indent().to_string()
        } else {
            String::new()
        };
        let mut old: Vec<String> = block.iter().map(|l| l.text.clone()).collect();
        old[0] = old[0][dedent.len()..].to_string();
        let mut new = old.clone();
        let fresh = format!("N{k} x");
        match op {
            Op::Replace => new[at] = fresh.clone(),
            Op::InsertAfter => new.insert(at + 1, fresh.clone()),
            Op::Delete => {
                new.remove(at);
            }
            Op::InsertEmptyAfter => new.insert(at + 1, String::new()),
            Op::Empty => new[at] = String::new(),
        }
        let sep = ENDINGS[r.sep % 3];
        let join = |lines: &[String]| {
            let mut s = lines.join(sep);
            if r.final_break && !lines.is_empty() {
                s.push_str(sep);
            }
            s
        };
        let (old_sent, new_sent) = (join(&old), join(&new));
        let lf = |s: &str| s.replace("\r\n", "\n").replace('\r', "\n");
        out.push(Planned {
            old: lf(&old_sent),
            new: lf(&new_sent),
            edit: Edit::new(old_sent, new_sent),
            old_lines: block.iter().map(|l| l.text.clone()).collect(),
            op,
            at,
            fresh,
            final_break: r.final_break,
            dedent,
        });
    }
    out
}

/// What the call must give: the file's bytes, or None for a refusal.
fn expected(bom: bool, read: &[Line], edits: &[Planned]) -> Option<String> {
    if edits.iter().any(|e| e.old == e.new) {
        return None;
    }
    let usual = usual(read);
    let mut cur: Vec<Line> = read.to_vec();
    for (i, e) in edits.iter().enumerate() {
        // The same edit as an earlier one of the call: applied once.
        if edits[..i].iter().any(|d| d.old == e.old && d.new == e.new) {
            continue;
        }
        let n = e.old_lines.len();
        let at = (0..=cur.len().saturating_sub(n)).find(|&p| {
            cur.len() >= p + n && cur[p..p + n].iter().map(|l| &l.text).eq(e.old_lines.iter())
        })?;
        let mut block: Vec<Line> = cur[at..at + n].to_vec();
        let at_eof = at + n == cur.len() && cur.last().is_some_and(|l| l.eol.is_none());
        if at_eof && let Some(last) = block.last_mut() {
            last.eol = Some(usual);
        }
        let added = |text: String| Line {
            text,
            eol: Some(usual),
        };
        // A changed line takes the usual ending, but for the line break old
        // stopped short of: it still ends new's last line.
        let changed = |line: &mut Line, text: String| {
            line.text = text;
            if e.final_break || e.at + 1 < n {
                line.eol = Some(usual);
            }
        };
        match e.op {
            Op::Replace => changed(&mut block[e.at], format!("{}{}", e.dedent, e.fresh)),
            // A line emptied keeps the indentation old left out: old
            // occurs exactly, so new is written as sent after it.
            Op::Empty => changed(&mut block[e.at], e.dedent.clone()),
            Op::InsertAfter => {
                // A whole line sent without its indentation is exact inside
                // the line: the added line is as sent, at column 0.
                block.insert(e.at + 1, added(e.fresh.clone()));
            }
            Op::InsertEmptyAfter => {
                // Of equal lines in a row, an added one is the first.
                let mut p = e.at + 1;
                while p > 0 && block[p - 1].text.is_empty() {
                    p -= 1;
                }
                block.insert(p, added(String::new()));
            }
            Op::Delete => {
                // Of equal lines in a row, the one removed is the first.
                let mut p = e.at;
                while p > 0 && block[p - 1].text == block[e.at].text {
                    p -= 1;
                }
                block.remove(p);
            }
        }
        if at_eof && let Some(last) = block.last_mut() {
            last.eol = None;
        }
        cur.splice(at..at + n, block);
        // An empty last line without a newline is no line at all.
        if cur
            .last()
            .is_some_and(|l| l.text.is_empty() && l.eol.is_none())
        {
            cur.pop();
        }
    }
    no_cr_lf(&mut cur);
    Some(render(bom, &cur))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2048,
        max_global_rejects: 1 << 20,
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
        let mut read: Vec<Line> = spec
            .iter()
            .enumerate()
            .map(|(i, (indent, atoms, e, empty))| {
                let eol = match style {
                    0 => "\n",
                    1 => "\r\n",
                    2 => "\r",
                    _ => ENDINGS[*e],
                };
                let text = if *empty {
                    String::new()
                } else {
                    let rest: String = atoms.iter().map(|&a| ATOMS[a]).collect();
                    format!("{}L{i}{rest}", INDENTS[*indent])
                };
                Line {
                    text,
                    eol: (i + 1 < n || final_nl).then_some(eol),
                }
            })
            .collect();
        // An empty last line without a newline is no line at all.
        if read.last().is_some_and(|l| l.text.is_empty() && l.eol.is_none()) {
            read.pop();
        }
        prop_assume!(!read.is_empty());
        // The file as it reads: a CR then an empty LF line is one CRLF.
        no_cr_lf(&mut read);
        let text = render(bom, &read);
        let edits = build(&read, &raw);
        prop_assume!(!edits.is_empty());
        let sent: Vec<Edit> = edits.iter().map(|e| e.edit.clone()).collect();
        let want = expected(bom, &read, &edits);
        // An edit alike an earlier one but for indentation or its final
        // break is the same change sent again: the engine applies it once
        // (or refuses when it cannot be sure), so its result may also be
        // the call without it.
        let twin = |i: usize| {
            let key = |t: &str| -> Vec<String> {
                t.lines().map(|l| l.trim().to_string()).collect()
            };
            let (old, new) = (key(&edits[i].old), key(&edits[i].new));
            edits[..i].iter().any(|d| key(&d.old) == old && key(&d.new) == new)
        };
        let twins: Vec<bool> = (0..sent.len()).map(twin).collect();
        let without_twins: Vec<_> = edits
            .iter()
            .zip(&twins)
            .filter(|(_, t)| !**t)
            .map(|(e, _)| e.clone())
            .collect();
        let once = expected(bom, &read, &without_twins);
        let any_twin = twins.iter().any(|&t| t);
        match (apply(&text, &sent, &[]), want) {
            (Err(_), _) if any_twin => {}
            (Ok(got), _) if any_twin && once.as_deref() == Some(got.text.as_str()) => {}
            (Ok(got), Some(want)) => {
                prop_assert_eq!(&got.text, &want, "file {:?}, edits {:?}", text, sent);
                for (i, o) in got.outcomes.iter().enumerate() {
                    let dup = edits[..i].iter().any(|d| d.old == edits[i].old && d.new == edits[i].new);
                    if twins[i] && !dup {
                        continue;
                    }
                    prop_assert_eq!(dup, matches!(o, Outcome::Duplicate { .. }), "{:?}", got.outcomes);
                }
                if let Err(why) = crate::props::check_diff(&text, &got.text, &got.diff) {
                    prop_assert!(false, "{}\n{}", why, got.diff.unified("f.txt"));
                }
            }
            (Err(_), None) => {}
            (Ok(got), None) => prop_assert!(false, "applied what must be refused: {:?} -> {:?}, edits {:?}", text, got.text, sent),
            (Err(e), Some(want)) => prop_assert!(false, "refused {:?} (want {:?}), edits {:?}: {}", text, want, sent, e),
        }
    }
}
