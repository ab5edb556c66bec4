//! Splices that change as little as they can: a replacement compared with
//! the text it replaces line by line (common lines at the end first, then
//! at the start, Myers in between), so the lines it keeps stay pieces of the
//! text they came from and keep their own line ending.

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::Replacement;

/// Above this many line pairs a replacement's changed middle is not diffed
/// line by line; it is replaced whole.
const REFINE_LIMIT: usize = 1 << 22;

pub(super) fn refine_one(cur: &str, base: usize, text: &str, out: &mut Vec<Replacement>) {
    let a: Vec<&str> = cur.split_inclusive('\n').collect();
    let b: Vec<&str> = text.split_inclusive('\n').collect();
    // Common lines at the end first: a line removed from a run of equal
    // lines is then the first of them, as a patch that removes it says.
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let prefix = a[..a.len() - suffix]
        .iter()
        .zip(&b[..b.len() - suffix])
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let offset_of =
        |lines: &[&str], upto: usize| -> usize { lines[..upto].iter().map(|l| l.len()).sum() };
    let a_start = base + offset_of(&a, prefix);
    let b_start = offset_of(&b, prefix);
    if am.is_empty() && bm.is_empty() {
        return;
    }
    let whole = |out: &mut Vec<Replacement>| {
        let a_len: usize = am.iter().map(|l| l.len()).sum();
        let b_len: usize = bm.iter().map(|l| l.len()).sum();
        out.push((
            a_start..a_start + a_len,
            text[b_start..b_start + b_len].to_string(),
        ));
    };
    if am.is_empty() || bm.is_empty() || am.len().saturating_mul(bm.len()) > REFINE_LIMIT {
        whole(out);
        return;
    }
    let a_offsets: Vec<usize> = std::iter::once(0)
        .chain(am.iter().scan(0, |s, l| {
            *s += l.len();
            Some(*s)
        }))
        .collect();
    let b_offsets: Vec<usize> = std::iter::once(0)
        .chain(bm.iter().scan(0, |s, l| {
            *s += l.len();
            Some(*s)
        }))
        .collect();
    for op in capture_diff_slices(Algorithm::Myers, am, bm) {
        if let DiffOp::Equal { .. } = op {
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        let range = a_start + a_offsets[o.start]..a_start + a_offsets[o.end];
        let new = &text[b_start + b_offsets[n.start]..b_start + b_offsets[n.end]];
        match out.last_mut() {
            Some((r, t)) if r.end == range.start => {
                r.end = range.end;
                t.push_str(new);
            }
            _ => out.push((range, new.to_string())),
        }
    }
}
