//! Where base85 may stand in a value: runs of printable bytes holding
//! punctuation only base85 uses, and the parts of a run, in each of the
//! three alphabets, that look like random digits. Kept apart from the
//! codec (`codecs::Base85`): this is the search, run over every value's
//! printable text (a minified bundle is one long run).

use super::codecs::Base85;

/// The shortest run read: ten digits make eight bytes, a fragment.
const MIN_BASE85_RUN: usize = 10;

/// Runs of printable bytes that may hold base85: `base85_parts` then
/// finds the digits in them.
pub(super) fn base85_runs(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_graphic() {
            i += 1;
            continue;
        }
        let start = i;
        let mut proof = false;
        while i < bytes.len() && bytes[i].is_ascii_graphic() {
            proof |= BASE85_ONLY[usize::from(bytes[i])];
            i += 1;
        }
        if proof && i - start >= MIN_BASE85_RUN {
            out.push((start, i));
        }
    }
    out
}

/// Punctuation base85 uses and base64, hex, quoting and code's commonest
/// separators do not: a run without one is read by the other codecs.
const BASE85_ONLY: [bool; 256] = {
    let mut table = [false; 256];
    let proof = b"!#$%&()*;<>?@^`{|}~";
    let mut i = 0;
    while i < proof.len() {
        table[proof[i] as usize] = true;
        i += 1;
    }
    table
};

/// A byte's class: lower case, upper case, digit, other (`Part::counts`).
fn class(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => 0,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    }
}

/// What a part (a stretch of one alphabet's digits) holds so far.
#[derive(Clone, Copy)]
struct Part {
    start: usize,
    /// Lower case, upper case, digits, other.
    counts: [usize; 4],
    changes: usize,
    proof: bool,
    last: u8,
}

impl Part {
    fn at(start: usize) -> Part {
        Part {
            start,
            counts: [0; 4],
            changes: 0,
            proof: false,
            last: 0,
        }
    }

    /// Whether the part, ending at `end`, looks like random digits: a byte
    /// base85 alone uses, all three character classes, and the class
    /// changing at least every other step, as random digits do (code's
    /// words and operators do not).
    fn looks_random(&self, end: usize) -> bool {
        let len = end - self.start;
        // Random base85 digits are about a third upper case and a third
        // lower case; code's words and operators (a minified bundle) are
        // mostly lower case.
        let [lower, upper, digits, _] = self.counts;
        let mixed = upper * 100 >= len * 15 && lower * 100 >= len * 15;
        len >= MIN_BASE85_RUN && self.proof && digits > 0 && mixed && self.changes * 2 >= len
    }
}

/// The parts of `run` that look like base85 digits, in each alphabet
/// where they fit (quotes and brackets around them are in some alphabets
/// and not others): the first alphabet's parts in order, then the next's.
/// One pass for the three alphabets, as a bundle's code is all one run.
pub(super) fn base85_parts(run: &[u8]) -> Vec<(Base85, &[u8])> {
    let mut open = [Part::at(0); 3];
    let mut found: [Vec<(usize, usize)>; 3] = Default::default();
    for (i, &b) in run.iter().enumerate() {
        let c = class(b);
        let proof = BASE85_ONLY[usize::from(b)];
        for ((alphabet, part), found) in Base85::ALL.iter().zip(&mut open).zip(&mut found) {
            if !alphabet.holds(b) {
                if part.looks_random(i) {
                    found.push((part.start, i));
                }
                *part = Part::at(i + 1);
                continue;
            }
            if i == part.start {
                part.last = c;
            }
            part.counts[usize::from(c)] += 1;
            part.proof |= proof;
            part.changes += usize::from(c != part.last);
            part.last = c;
        }
    }
    let mut out = Vec::new();
    for ((alphabet, part), found) in Base85::ALL.iter().zip(&open).zip(&mut found) {
        if part.looks_random(run.len()) {
            found.push((part.start, run.len()));
        }
        out.extend(
            found
                .iter()
                .map(|&(start, end)| (*alphabet, &run[start..end])),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts by splitting the run for each alphabet and reading each
    /// piece whole, as the pass must find them.
    fn by_split(run: &[u8]) -> Vec<(Base85, &[u8])> {
        let mut out = Vec::new();
        for alphabet in Base85::ALL {
            let mut start = 0;
            for piece in run.split(|&b| !alphabet.holds(b)) {
                let mut part = Part::at(start);
                part.last = piece.first().map_or(0, |&b| class(b));
                for &b in piece {
                    let c = class(b);
                    part.counts[usize::from(c)] += 1;
                    part.proof |= BASE85_ONLY[usize::from(b)];
                    part.changes += usize::from(c != part.last);
                    part.last = c;
                }
                if part.looks_random(start + piece.len()) {
                    out.push((alphabet, piece));
                }
                start += piece.len() + 1;
            }
        }
        out
    }

    #[test]
    fn random_digits_are_found_and_code_is_not() {
        // Python: base64.b85encode(b"q8Zt2LwP0vXn5RkY7mJd"), in a call.
        let run = b"f(\"E@bRLG&9hHP*O#pXH9rCa(&Ng0NWXJ\");";
        let parts = base85_parts(run);
        assert!(!parts.is_empty());
        assert_eq!(parts, by_split(run));
        let code = b"function(e){return!!e&&e.nodeType===1&&jQuery.contains(e)}";
        assert!(base85_parts(code).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn one_pass_finds_what_splitting_does(
            picks in proptest::collection::vec(0usize..94, 0..200)
        ) {
            let run: Vec<u8> = picks.iter().map(|&p| b'!' + p as u8).collect();
            proptest::prop_assert_eq!(base85_parts(&run), by_split(&run));
        }
    }
}
