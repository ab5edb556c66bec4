//! Edit fidelity: does the engine write exactly what the model meant, and
//! refuse what it cannot be sure of?
//!
//! Run with `cargo bench --bench fidelity` (set `FIDELITY_VERBOSE=1` to see
//! every FAIL as well as every WRONG, `FIDELITY_SEED=N` for another corpus,
//! `FIDELITY_CORPUS=dir` for another tree's sources than this one's `src/`).
//!
//! The corpus is this repository's own `src/**/*.rs`, read at run time, in
//! three dialects: the Rust as it is, a Python-like variant (braces dropped,
//! `{` → `:`, `//` → `#`) and a tab-indented Go-like variant (each four
//! leading spaces → one tab). Edit sites are picked with a seeded PRNG: a
//! window of 1-6 whole lines whose text is unique in the file (exactly, and
//! also under a loose key that ignores all whitespace and quote styles, so
//! a tolerant level cannot find a second place either). The intended change
//! touches one line of the window: append a comment, insert a line after
//! it, or rename an identifier in it.
//!
//! Each kind turns the intended edit into the `old`/`new` a model would
//! send when it gets something wrong, and the file it would be sent
//! against. A case scores:
//!
//! - ok: exactly the intended file (for kinds that must be refused: refused;
//!   for "already applied": skipped with no change);
//! - FAIL: refused, nothing written (or, for a must-refuse kind, accepted
//!   without changing anything);
//! - WRONG: anything else written. A WRONG is an engine bug.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use nib::edit::{Edit, Outcome, apply};
use nib::files::Encoding;

const PER_KIND: usize = 40;

// ---------------------------------------------------------------- PRNG

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

// ---------------------------------------------------------------- corpus

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lang {
    Rust,
    Python,
    Go,
}

impl Lang {
    fn comment(self) -> &'static str {
        match self {
            Lang::Python => "#",
            _ => "//",
        }
    }
    fn stmt(self) -> &'static str {
        match self {
            Lang::Rust => "fidelity_probe(1);",
            Lang::Python => "fidelity_probe(1)",
            Lang::Go => "fidelityProbe(1)",
        }
    }
    fn invented(self) -> &'static str {
        match self {
            Lang::Rust => "let invented_value = compute_invented(42);",
            Lang::Python => "invented_value = compute_invented(42)",
            Lang::Go => "inventedValue := computeInvented(42)",
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Lang::Go => "\t",
            _ => "    ",
        }
    }
}

struct File {
    name: String,
    lang: Lang,
    lines: Vec<String>,
    /// Loose key of each line (see `loose`).
    keys: Vec<String>,
}

impl File {
    fn new(name: String, lang: Lang, lines: Vec<String>) -> File {
        let keys = lines.iter().map(|l| loose(l)).collect();
        File {
            name,
            lang,
            lines,
            keys,
        }
    }
    fn text(&self) -> String {
        join(&self.lines)
    }
}

fn join<S: AsRef<str>>(lines: &[S]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(l.as_ref());
        s.push('\n');
    }
    s
}

fn split(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text.split('\n').map(str::to_string).collect();
    if v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// Looser than any tolerant level: no whitespace at all, one quote style.
fn loose(line: &str) -> String {
    line.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            '\u{2013}' | '\u{2014}' => '-',
            c => c,
        })
        .collect()
}

fn count(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..=h.len().saturating_sub(n.len()))
        .filter(|&i| h.len() >= n.len() && &h[i..i + n.len()] == n)
        .count()
}

/// Line-aligned places whose loose keys equal those of `lines`; one-line
/// texts also count inside a line.
fn loose_count(file: &File, lines: &[String]) -> usize {
    let keys: Vec<String> = lines.iter().map(|l| loose(l)).collect();
    if keys.len() == 1 {
        if keys[0].is_empty() {
            return usize::MAX;
        }
        return file.keys.iter().filter(|k| k.contains(&keys[0])).count();
    }
    if keys.len() > file.keys.len() {
        return 0;
    }
    (0..=file.keys.len() - keys.len())
        .filter(|&i| file.keys[i..i + keys.len()] == keys[..])
        .count()
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn to_python(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| {
            let t = l.trim();
            if matches!(t, "}" | "};" | "})" | "});" | "}," | "]" | "];") {
                return None;
            }
            let mut s = l.replace("//", "#");
            if let Some(p) = s.strip_suffix(" {") {
                s = format!("{p}:");
            } else if let Some(p) = s.strip_suffix(';') {
                s = p.to_string();
            }
            Some(s)
        })
        .collect()
}

fn to_go(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let ind = l.len() - l.trim_start_matches(' ').len();
            format!(
                "{}{}{}",
                "\t".repeat(ind / 4),
                " ".repeat(ind % 4),
                &l[ind..]
            )
        })
        .collect()
}

fn corpus() -> Vec<File> {
    // FIDELITY_CORPUS names another tree's sources (say, an older commit's
    // `src/` from `git archive`) to redraw a case that tree drew.
    let root = std::env::var_os("FIDELITY_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        Into::into,
    );
    let mut paths = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read src").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    let mut files = Vec::new();
    for p in paths {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        if text.contains('\t') || text.contains('\r') {
            continue;
        }
        let lines: Vec<String> = split(&text)
            .into_iter()
            .map(|l| l.trim_end().to_string())
            .collect();
        if lines.len() < 40 {
            continue;
        }
        let name = p.strip_prefix(&root).unwrap().display().to_string();
        files.push(File::new(name.to_string(), Lang::Rust, lines.clone()));
        files.push(File::new(
            format!("{name}.py"),
            Lang::Python,
            to_python(&lines),
        ));
        files.push(File::new(format!("{name}.go"), Lang::Go, to_go(&lines)));
    }
    files
}

// ---------------------------------------------------------------- sites

#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    Append,
    Insert,
    Rename,
}

/// An intended edit: the window `start..start+len` of `file` becomes `new`.
#[derive(Clone)]
struct Site {
    start: usize,
    len: usize,
    /// Index of the changed line inside the window.
    at: usize,
    change: Change,
    old: Vec<String>,
    new: Vec<String>,
}

impl Site {
    fn expected(&self, file: &[String]) -> Vec<String> {
        let mut v = file[..self.start].to_vec();
        v.extend(self.new.iter().cloned());
        v.extend(file[self.start + self.len..].iter().cloned());
        v
    }
}

fn ident_in(line: &str, rng: &mut Rng) -> Option<(usize, usize)> {
    let b = line.as_bytes();
    let mut ids = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i - s >= 3 && (s == 0 || !b[s - 1].is_ascii_digit()) {
                ids.push((s, i));
            }
        } else {
            i += 1;
        }
    }
    (!ids.is_empty()).then(|| ids[rng.below(ids.len())])
}

fn changed(file: &File, line: &str, change: Change, rng: &mut Rng) -> Option<Vec<String>> {
    match change {
        Change::Append => Some(vec![format!("{line} {} changed", file.lang.comment())]),
        Change::Insert => Some(vec![
            line.to_string(),
            format!("{}{}", indent(line), file.lang.stmt()),
        ]),
        Change::Rename => {
            let (s, e) = ident_in(line, rng)?;
            Some(vec![format!(
                "{}{}_v2{}",
                &line[..s],
                &line[s..e],
                &line[e..]
            )])
        }
    }
}

/// A unique window and an intended change. `pick` chooses the changed line
/// (index in the window) or rejects the window.
fn site(
    file: &File,
    rng: &mut Rng,
    min: usize,
    max: usize,
    pick: &dyn Fn(&[String], &mut Rng) -> Option<usize>,
) -> Option<Site> {
    let text = file.text();
    for _ in 0..300 {
        let len = rng.range(min, max);
        if file.lines.len() < len + 2 {
            return None;
        }
        let start = rng.below(file.lines.len() - len);
        let old = file.lines[start..start + len].to_vec();
        if old[0].trim().is_empty() || old[len - 1].trim().is_empty() {
            continue;
        }
        if old.iter().all(|l| l.trim().len() < 3) {
            continue;
        }
        if count(&text, &join(&old)) != 1 || loose_count(file, &old) != 1 {
            continue;
        }
        let Some(at) = pick(&old, rng) else { continue };
        if old[at].trim().is_empty() {
            continue;
        }
        let change = [Change::Append, Change::Insert, Change::Rename][rng.below(3)];
        let Some(repl) = changed(file, &old[at], change, rng) else {
            continue;
        };
        let mut new = old[..at].to_vec();
        new.extend(repl);
        new.extend(old[at + 1..].iter().cloned());
        return Some(Site {
            start,
            len,
            at,
            change,
            old,
            new,
        });
    }
    None
}

fn any_line(w: &[String], rng: &mut Rng) -> Option<usize> {
    Some(rng.below(w.len()))
}

// ---------------------------------------------------------------- cases

enum Expect {
    Text(String),
    Refuse,
    Skip,
}

struct Case {
    file: String,
    text: String,
    edits: Vec<Edit>,
    previous: Vec<Edit>,
    expect: Expect,
    /// For the encoding kinds: the file's bytes, which `text` is read
    /// from, and what it must hold afterwards.
    raw: Option<Raw>,
}

/// A file not in UTF-8: read through `Encoding::decode` (which must
/// assume `encoding`), edited, written back with `Encoding::encode`.
struct Raw {
    encoding: Encoding,
    bytes: Vec<u8>,
    /// The bytes the file must hold; None: the edit must be refused (by
    /// the engine, or because the encoding cannot hold new).
    want: Option<Vec<u8>>,
}

/// `lines` with every character `encoding` cannot hold made `?`, and a
/// comment of `extra` on every fifth line: a file in that encoding.
fn in_encoding(file: &File, encoding: Encoding, extra: &str) -> File {
    let holds = |c: char| encoding.encode(c.encode_utf8(&mut [0; 4])).is_ok();
    let lines = (file.lines.iter().enumerate())
        .map(|(i, l)| {
            let mut l: String = l.chars().map(|c| if holds(c) { c } else { '?' }).collect();
            if i % 5 == 2 {
                l = format!("{l} {} {extra}", file.lang.comment());
            }
            l
        })
        .collect();
    File::new(file.name.clone(), file.lang, lines)
}

/// Lines as `encoding`'s bytes, each ended by LF; `stray` puts a byte
/// UTF-8 cannot read at the end of that line.
fn line_bytes(lines: &[String], encoding: Encoding, stray: Option<usize>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        out.extend_from_slice(&encoding.encode(l).ok()?);
        if stray == Some(i) {
            out.push(0xff);
        }
        out.push(b'\n');
    }
    Some(out)
}

/// A case on a file in `encoding` (with a stray byte on a line outside
/// the window for `stray`); `refuse`: new gets a character no single-byte
/// encoding holds.
fn encoded_case(
    file: &File,
    rng: &mut Rng,
    encoding: Encoding,
    extra: &str,
    stray: bool,
    refuse: bool,
) -> Option<Case> {
    let plain = if stray { Encoding::Utf8 } else { encoding };
    let f = in_encoding(file, plain, extra);
    let mut s = site(&f, rng, 1, 6, &any_line)?;
    if refuse {
        s.new[s.at].push_str(" \u{2192} moved");
    }
    let outside = |rng: &mut Rng| {
        let j = rng.below(f.lines.len() - s.len);
        if j < s.start { j } else { j + s.len }
    };
    let (before_at, after_at) = match stray {
        true => {
            let j = outside(rng);
            let shifted = if j < s.start {
                j
            } else {
                j + s.new.len() - s.len
            };
            (Some(j), Some(shifted))
        }
        false => (None, None),
    };
    let bytes = line_bytes(&f.lines, plain, before_at)?;
    let want = match refuse {
        true => None,
        false => Some(line_bytes(&s.expected(&f.lines), plain, after_at)?),
    };
    let (text, _) = Encoding::decode(bytes.clone());
    Some(Case {
        file: f.name.clone(),
        text,
        edits: vec![edit(&s.old, &s.new)],
        previous: vec![],
        expect: Expect::Refuse,
        raw: Some(Raw {
            encoding,
            bytes,
            want,
        }),
    })
}

fn edit(old: &[String], new: &[String]) -> Edit {
    Edit::new(join(old), join(new))
}

fn map(lines: &[String], f: impl Fn(&str) -> String) -> Vec<String> {
    lines.iter().map(|l| f(l)).collect()
}

fn common_indent(lines: &[String]) -> String {
    let mut it = lines.iter().filter(|l| !l.trim().is_empty());
    let Some(first) = it.next() else {
        return String::new();
    };
    let mut c = indent(first).to_string();
    for l in it {
        let i = indent(l);
        let n = c.bytes().zip(i.bytes()).take_while(|(a, b)| a == b).count();
        c.truncate(n);
    }
    c
}

fn curly(line: &str) -> String {
    let mut open = true;
    line.chars()
        .map(|c| match c {
            '"' => {
                open = !open;
                if !open { '\u{201C}' } else { '\u{201D}' }
            }
            '\'' => '\u{2019}',
            c => c,
        })
        .collect()
}

fn has_quote(l: &str) -> bool {
    l.contains('"') || l.contains('\'')
}

fn respace(line: &str) -> String {
    let ind = indent(line);
    let body = &line[ind.len()..];
    match body.find(' ') {
        Some(p) => format!("{ind}{} {}", &body[..p], &body[p..]),
        None => line.to_string(),
    }
}

fn has_inner_space(l: &str) -> bool {
    l.trim().contains(' ')
}

const KINDS: &[&str] = &[
    "correct",
    "trailing whitespace dropped",
    "dedented",
    "one line, indent omitted",
    "over-indented",
    "tabs written as spaces",
    "CRLF file",
    "typographic punctuation",
    "re-spaced inner whitespace",
    "sequential multi-edit",
    "replace_all",
    "mixed line endings",
    "old Mac (CR) file",
    "mixed endings, lone CR",
    "edit sent twice",
    "2 spaces per tab",
    "line numbers copied",
    "invisible characters",
    "typography on changed line",
    "edit re-sent differently",
    "line numbers, other forms",
    "another unit, nested line",
    "aligned continuation, exact",
    "aligned continuation, dedented",
    "folded on changed line",
    "CRLF copy of old",
    "tab+space Python, as spaces",
    "line numbers, two-space gutter",
    "Latin-1 file",
    "Windows-1252 file",
    "stray byte outside the edit",
    "typo",
    "invented line",
    "stale old text",
    "ambiguous",
    "swapped old/new",
    "resent, no record",
    "elided old",
    "already applied",
    "noop",
    "stale by an earlier edit",
    "stale, loose twin elsewhere",
    "new not in Latin-1",
];

const FIRST_REFUSE: usize = 31;

/// Lines joined, each with its own ending.
fn with_endings(lines: &[String], eols: &[&str]) -> String {
    lines
        .iter()
        .zip(eols)
        .map(|(l, e)| format!("{l}{e}"))
        .collect()
}

/// The ending lines an edit adds get: the most common; the first seen
/// of those tied.
fn usual(eols: &[&'static str]) -> &'static str {
    ["\n", "\r\n", "\r"]
        .into_iter()
        .map(|e| {
            let count = eols.iter().filter(|x| **x == e).count();
            let first = eols.iter().position(|x| *x == e).unwrap_or(usize::MAX);
            (e, count, first)
        })
        .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)))
        .map_or("\n", |(e, _, _)| e)
}

/// The endings of `s.expected(lines)`: a line the change keeps keeps its
/// own; a changed or added line takes the usual one.
fn expected_endings<'a>(s: &Site, eols: &[&'a str], usual: &'a str) -> Vec<&'a str> {
    let mut out = eols[..s.start].to_vec();
    for (i, e) in eols[s.start..s.start + s.len].iter().enumerate() {
        if i != s.at {
            out.push(e);
        } else if s.change == Change::Insert {
            out.push(e);
            out.push(usual);
        } else {
            out.push(usual);
        }
    }
    out.extend(&eols[s.start + s.len..]);
    out
}

/// An empty line that would end in LF right after one ending in a lone CR
/// ends in CR: the two would read as one CRLF line.
fn no_cr_lf(lines: &[String], eols: &mut [&str]) {
    for i in 1..eols.len().min(lines.len()) {
        if eols[i - 1] == "\r" && lines[i].is_empty() && eols[i] == "\n" {
            eols[i] = "\r";
        }
    }
}

/// A line with an invisible character put after its first visible one.
fn with_invisible(line: &str, c: char) -> Option<String> {
    let ind = indent(line).len();
    let first = line[ind..].chars().next()?;
    let at = ind + first.len_utf8();
    Some(format!("{}{c}{}", &line[..at], &line[at..]))
}

/// A site whose changed line is made a call over two lines, its second
/// argument aligned under the open parenthesis: (file, old, new, expected).
/// `dedented`: old and new lose the window's common indentation.
fn aligned_site(
    file: &File,
    rng: &mut Rng,
    dedented: bool,
) -> Option<(String, Vec<String>, Vec<String>, String)> {
    let s = site(file, rng, 1, 5, &any_line)?;
    let ind = indent(&s.old[s.at]).to_string();
    let call = format!("{ind}aligned_call(first_arg,");
    // The file's indentation, then spaces to the open parenthesis (a tab
    // line plus aligning spaces in the Go-like dialect).
    let pad = format!("{ind}{}", " ".repeat("aligned_call(".len()));
    let mut f = file.lines.clone();
    f.splice(
        s.start + s.at..s.start + s.at + 1,
        [call.clone(), format!("{pad}second_arg);")],
    );
    let mut old = s.old.clone();
    old.splice(s.at..s.at + 1, [call.clone(), format!("{pad}second_arg);")]);
    let mut new = old.clone();
    new.splice(
        s.at + 1..s.at + 2,
        [format!("{pad}second_arg,"), format!("{pad}third_arg);")],
    );
    let text = join(&f);
    if count(&text, &join(&old)) != 1 {
        return None;
    }
    let want = text.replacen(&join(&old), &join(&new), 1);
    if !dedented {
        return Some((text, old, new, want));
    }
    let ci = common_indent(&old);
    if ci.is_empty() {
        return None;
    }
    let strip = |l: &str| {
        l.strip_prefix(ci.as_str())
            .unwrap_or(l.trim_start())
            .to_string()
    };
    let (o, n) = (map(&old, strip), map(&new, strip));
    if count(&text, &join(&o)) != 0 {
        return None;
    }
    Some((text, o, n, want))
}

fn make(kind: &str, file: &File, rng: &mut Rng) -> Option<Case> {
    let text = file.text();
    let lines = &file.lines;
    let ok = |t: String, edits: Vec<Edit>, expected: String| Case {
        file: file.name.clone(),
        text: t,
        edits,
        previous: vec![],
        expect: Expect::Text(expected),
        raw: None,
    };
    // The typography kinds: straight quotes in the file and curly ones from
    // the model, or curly in the file (prose, docs) and straight from the
    // model; expected, the file's own.
    let quotes_either_way = |s: &Site, straight_file: bool| {
        if straight_file {
            let (o, n) = (map(&s.old, curly), map(&s.new, curly));
            return ok(text.clone(), vec![edit(&o, &n)], join(&s.expected(lines)));
        }
        let mut f = lines.clone();
        for l in &mut f[s.start..s.start + s.len] {
            *l = curly(l);
        }
        let mut exp = s.clone();
        exp.new = map(&s.new, curly);
        ok(
            join(&f),
            vec![edit(&s.old, &s.new)],
            join(&exp.expected(&f)),
        )
    };
    let refuse = |t: String, edits: Vec<Edit>| Case {
        file: file.name.clone(),
        text: t,
        edits,
        previous: vec![],
        expect: Expect::Refuse,
        raw: None,
    };
    match kind {
        "correct" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            Some(ok(
                text,
                vec![edit(&s.old, &s.new)],
                join(&s.expected(lines)),
            ))
        }
        "trailing whitespace dropped" => {
            let s = site(file, rng, 2, 6, &any_line)?;
            // The file has trailing whitespace on the window's unchanged
            // lines; the model's old and new have none.
            let mut f = lines.clone();
            for (i, l) in f[s.start..s.start + s.len].iter_mut().enumerate() {
                if i != s.at && !l.trim().is_empty() {
                    l.push_str(if i % 2 == 0 { "  " } else { "\t" });
                }
            }
            let mut exp = s.clone();
            exp.old = f[s.start..s.start + s.len].to_vec();
            let mut new = exp.old[..s.at].to_vec();
            let tail = s.new.len() - (s.len - s.at - 1);
            new.extend(s.new[s.at..tail].iter().cloned());
            new.extend(exp.old[s.at + 1..].iter().cloned());
            exp.new = new;
            if exp.old.iter().all(|l| l == l.trim_end()) {
                return None;
            }
            Some(ok(
                join(&f),
                vec![edit(&s.old, &s.new)],
                join(&exp.expected(&f)),
            ))
        }
        "dedented" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let ci = common_indent(&s.old);
            if ci.is_empty() {
                return None;
            }
            let strip = |l: &str| {
                l.strip_prefix(ci.as_str())
                    .unwrap_or(l.trim_start())
                    .to_string()
            };
            let (o, n) = (map(&s.old, strip), map(&s.new, strip));
            if count(&text, &join(&o)) != 0 {
                return None;
            }
            Some(ok(text, vec![edit(&o, &n)], join(&s.expected(lines))))
        }
        "one line, indent omitted" => {
            // old is one indented line sent without its indentation, so it
            // matches exactly, inside the line: the literal contract
            // writes new as sent after the indentation old left out (the
            // added line at the column the model wrote it).
            let pick = |w: &[String], _: &mut Rng| Some(w.len() - 1);
            let s = site(file, rng, 1, 1, &pick)?;
            let ind = indent(&s.old[0]).to_string();
            if ind.is_empty() || s.change != Change::Insert {
                return None;
            }
            let strip = |l: &str| l.strip_prefix(ind.as_str()).unwrap_or(l).to_string();
            let (o, n) = (map(&s.old, strip), map(&s.new, strip));
            let (o_text, n_text) = (join(&o), join(&n));
            if count(&text, &o_text) != 1 {
                return None;
            }
            let want = text.replacen(&o_text, &n_text, 1);
            Some(ok(text, vec![edit(&o, &n)], want))
        }
        "over-indented" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let add = |l: &str| {
                if l.trim().is_empty() {
                    l.to_string()
                } else {
                    format!("{}{l}", file.lang.unit())
                }
            };
            let (o, n) = (map(&s.old, add), map(&s.new, add));
            if count(&text, &join(&o)) != 0 {
                return None;
            }
            Some(ok(text, vec![edit(&o, &n)], join(&s.expected(lines))))
        }
        "tabs written as spaces" => {
            if file.lang != Lang::Go {
                return None;
            }
            let s = site(file, rng, 1, 6, &any_line)?;
            if !s.old.iter().any(|l| l.starts_with('\t')) {
                return None;
            }
            let sp = |l: &str| {
                let i = indent(l);
                format!("{}{}", i.replace('\t', "    "), &l[i.len()..])
            };
            let (o, n) = (map(&s.old, sp), map(&s.new, sp));
            Some(ok(text, vec![edit(&o, &n)], join(&s.expected(lines))))
        }
        "CRLF file" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let crlf = |v: &[String]| join(v).replace('\n', "\r\n");
            Some(ok(
                crlf(lines),
                vec![edit(&s.old, &s.new)],
                crlf(&s.expected(lines)),
            ))
        }
        "typographic punctuation" => {
            // The changed line has no quotes; another line of the window does.
            let pick = |w: &[String], rng: &mut Rng| {
                if !w.iter().any(|l| has_quote(l)) {
                    return None;
                }
                let free: Vec<usize> = (0..w.len())
                    .filter(|&i| !has_quote(&w[i]) && !w[i].trim().is_empty())
                    .collect();
                (!free.is_empty()).then(|| free[rng.below(free.len())])
            };
            let s = site(file, rng, 2, 6, &pick)?;
            Some(quotes_either_way(&s, rng.chance()))
        }
        "re-spaced inner whitespace" => {
            let pick = |w: &[String], rng: &mut Rng| {
                w.iter()
                    .any(|l| has_inner_space(l))
                    .then(|| rng.below(w.len()))
            };
            let s = site(file, rng, 1, 6, &pick)?;
            let o = map(&s.old, respace);
            let n = if rng.chance() {
                s.new.clone()
            } else {
                // The model re-spaced new's unchanged lines the same way.
                let mut n = s.new.clone();
                for (i, l) in n.iter_mut().enumerate() {
                    if i < s.at || i >= s.at + (s.new.len() - s.len + 1) {
                        *l = respace(l);
                    }
                }
                n
            };
            if count(&text, &join(&o)) != 0 {
                return None;
            }
            Some(ok(text, vec![edit(&o, &n)], join(&s.expected(lines))))
        }
        "sequential multi-edit" => {
            // Edit 1 appends a comment to a line; edit 2's old is that new
            // line plus the next line of the file (it spans the seam).
            let mut s = site(file, rng, 1, 6, &any_line)?;
            if s.start + s.at + 1 >= lines.len() {
                return None;
            }
            let line = s.old[s.at].clone();
            let once = format!("{line} {} changed", file.lang.comment());
            s.new = s.old.clone();
            s.new[s.at] = once.clone();
            let next = lines[s.start + s.at + 1].clone();
            let e2 = Edit::new(
                format!("{once}\n{next}\n"),
                format!("{once} twice\n{next}\n"),
            );
            let mut exp = s.clone();
            exp.new[s.at] = format!("{once} twice");
            Some(ok(
                text,
                vec![edit(&s.old, &s.new), e2],
                join(&exp.expected(lines)),
            ))
        }
        "replace_all" => {
            for _ in 0..50 {
                let l = &lines[rng.below(lines.len())];
                let Some((a, b)) = ident_in(l, rng) else {
                    continue;
                };
                let id = &l[a..b];
                let c = count(&text, id);
                if id.len() < 4 || !(2..=30).contains(&c) {
                    continue;
                }
                let new = format!("{id}_v2");
                let e = Edit {
                    old: id.to_string(),
                    new: new.clone(),
                    replace_all: true,
                };
                return Some(ok(text.clone(), vec![e], text.replace(id, &new)));
            }
            None
        }
        "mixed line endings" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let eols: Vec<&str> = (0..lines.len())
                .map(|_| if rng.chance() { "\r\n" } else { "\n" })
                .collect();
            let u = usual(&eols);
            let want = with_endings(&s.expected(lines), &expected_endings(&s, &eols, u));
            Some(ok(
                with_endings(lines, &eols),
                vec![edit(&s.old, &s.new)],
                want,
            ))
        }
        "old Mac (CR) file" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let cr = |v: &[String]| join(v).replace('\n', "\r");
            Some(ok(
                cr(lines),
                vec![edit(&s.old, &s.new)],
                cr(&s.expected(lines)),
            ))
        }
        "mixed endings, lone CR" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let mut eols: Vec<&str> = (0..lines.len())
                .map(|_| ["\n", "\n", "\r\n", "\r"][rng.below(4)])
                .collect();
            no_cr_lf(lines, &mut eols);
            let u = usual(&eols);
            // Half the time old and new are sent without their final
            // newline, as models often do: that line break is not taken
            // out, and still ends new's last line.
            let cut = rng.chance();
            // Half the time the change is an empty line added after the
            // changed line (after a lone CR it must not end in LF).
            let (new, window_eols) = if rng.chance() {
                let mut new = s.old.clone();
                new.insert(s.at + 1, String::new());
                let mut e = eols[s.start..s.start + s.len].to_vec();
                e.insert(s.at + 1, u);
                (new, e)
            } else {
                let e = expected_endings(&s, &eols, u);
                let mut window = e[s.start..e.len() - (lines.len() - s.start - s.len)].to_vec();
                if cut && s.at + 1 == s.len && s.change != Change::Insert {
                    window[s.at] = eols[s.start + s.at];
                }
                (s.new.clone(), window)
            };
            let mut want: Vec<String> = lines[..s.start].to_vec();
            want.extend(new.iter().cloned());
            want.extend(lines[s.start + s.len..].iter().cloned());
            let mut want_eols = eols[..s.start].to_vec();
            want_eols.extend(window_eols);
            want_eols.extend(&eols[s.start + s.len..]);
            no_cr_lf(&want, &mut want_eols);
            let (mut old, mut new) = (join(&s.old), join(&new));
            if cut {
                old.pop();
                new.pop();
                if count(&text, &old) != 1 {
                    return None;
                }
            }
            Some(ok(
                with_endings(lines, &eols),
                vec![Edit::new(old, new)],
                with_endings(&want, &want_eols),
            ))
        }
        "edit sent twice" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let e = edit(&s.old, &s.new);
            Some(ok(text, vec![e.clone(), e], join(&s.expected(lines))))
        }
        "2 spaces per tab" => {
            if file.lang != Lang::Go {
                return None;
            }
            let s = site(file, rng, 1, 6, &any_line)?;
            if !s.old.iter().any(|l| l.starts_with('\t')) {
                return None;
            }
            let sp = |l: &str| {
                let i = indent(l);
                format!("{}{}", i.replace('\t', "  "), &l[i.len()..])
            };
            let (o, n) = (map(&s.old, sp), map(&s.new, sp));
            if count(&text, &join(&o)) != 0 {
                return None;
            }
            Some(ok(text, vec![edit(&o, &n)], join(&s.expected(lines))))
        }
        "another unit, nested line" => {
            // The model writes the window in its own unit (2 spaces a level
            // for a 4-space file, 4 for a tab), sometimes dedented too, and
            // inserts a line one level deeper than the line before it.
            let s = site(file, rng, 1, 6, &any_line)?;
            if s.change != Change::Insert {
                return None;
            }
            let (per, model) = match file.lang {
                Lang::Go => ("\t", "    "),
                _ => ("    ", "  "),
            };
            let mut want = s.clone();
            want.new[s.at + 1] = format!("{}{per}{}", indent(&s.old[s.at]), file.lang.stmt());
            let convert = |l: &str| {
                let i = indent(l);
                let rest = i.trim_start_matches(per);
                let levels = (i.len() - rest.len()) / per.len();
                format!("{}{rest}{}", model.repeat(levels), &l[i.len()..])
            };
            let (mut o, mut n) = (map(&s.old, convert), map(&want.new, convert));
            if rng.chance() {
                let ci = common_indent(&o);
                let strip = |l: &str| l.strip_prefix(ci.as_str()).unwrap_or(l).to_string();
                (o, n) = (map(&o, strip), map(&n, strip));
            }
            // An old that matches as it is belongs to the exact rules.
            if count(&text, &join(&o)) != 0 {
                return None;
            }
            Some(ok(text, vec![edit(&o, &n)], join(&want.expected(lines))))
        }
        "aligned continuation, exact" => {
            // The changed line becomes a call whose second argument is
            // aligned under its open parenthesis (no whole number of the
            // file's unit); old and new are byte-exact: written as sent.
            let (f, o, n, want) = aligned_site(file, rng, false)?;
            Some(ok(f, vec![edit(&o, &n)], want))
        }
        "aligned continuation, dedented" => {
            // The same, old and new sent dedented: the continuation keeps
            // its alignment spaces as it moves with its line.
            let (f, o, n, want) = aligned_site(file, rng, true)?;
            Some(ok(f, vec![edit(&o, &n)], want))
        }
        "folded on changed line" => {
            // The file has an invisible character or a decomposed accent
            // on the changed line; the model's old and new do not. The
            // changed line keeps the file's characters.
            let s = site(file, rng, 1, 6, &any_line)?;
            if s.change == Change::Insert {
                return None;
            }
            let fold: fn(&str) -> Option<String> = match rng.below(8) {
                0 => |l| with_invisible(l, '\u{200c}'),
                1 => |l| with_invisible(l, '\u{2060}'),
                2 => |l| with_invisible(l, '\u{00ad}'),
                3 => |l| with_invisible(l, '\u{034f}'),
                4 => |l| with_invisible(l, '\u{061c}'),
                5 => |l| with_invisible(l, '\u{fe0f}'),
                6 => |l| with_invisible(l, '\u{3164}'),
                _ => |l| {
                    let at = l.find('e')?;
                    Some(format!("{}e\u{301}{}", &l[..at], &l[at + 1..]))
                },
            };
            let composed = |l: &str| match l.find('e') {
                Some(at) => format!("{}\u{e9}{}", &l[..at], &l[at + 1..]),
                None => l.to_string(),
            };
            let accent = fold("e").is_some_and(|x| x.contains('\u{301}'));
            let mut f = lines.clone();
            f[s.start + s.at] = fold(&f[s.start + s.at])?;
            let mut exp = s.clone();
            exp.new[s.at] = fold(&s.new[s.at])?;
            let (mut o, mut n) = (s.old.clone(), s.new.clone());
            if accent {
                // The model writes the accent composed.
                o[s.at] = composed(&o[s.at]);
                n[s.at] = composed(&n[s.at]);
                if o[s.at].find('\u{e9}') != n[s.at].find('\u{e9}') {
                    return None;
                }
            }
            Some(ok(join(&f), vec![edit(&o, &n)], join(&exp.expected(&f))))
        }
        "CRLF copy of old" => {
            // The window also stands at the end of the file with CRLF
            // endings; old and new are sent with LF.
            let s = site(file, rng, 2, 6, &any_line)?;
            let copy = join(&s.old).replace('\n', "\r\n");
            Some(ok(
                format!("{text}{copy}"),
                vec![edit(&s.old, &s.new)],
                format!("{}{copy}", join(&s.expected(lines))),
            ))
        }
        "tab+space Python, as spaces" => {
            // Old-style Python: a tab for each 8 columns, then spaces. The
            // model sends spaces.
            if file.lang != Lang::Python {
                return None;
            }
            let old_style = |l: &str| {
                let i = indent(l);
                let tabs = i.len() / 8;
                format!("{}{}{}", "\t".repeat(tabs), &i[tabs * 8..], &l[i.len()..])
            };
            let s = site(file, rng, 2, 6, &any_line)?;
            if !s.old.iter().any(|l| indent(l).len() >= 8) {
                return None;
            }
            let f = map(lines, old_style);
            let want = map(&s.expected(lines), old_style);
            Some(ok(join(&f), vec![edit(&s.old, &s.new)], join(&want)))
        }
        "line numbers, two-space gutter" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let number = |v: &[String]| -> Vec<String> {
                v.iter()
                    .enumerate()
                    .map(|(i, l)| format!("{:>5}  {l}", s.start + i + 1))
                    .collect()
            };
            let o = number(&s.old);
            let n = if rng.chance() {
                number(&s.new)
            } else {
                s.new.clone()
            };
            Some(ok(text, vec![edit(&o, &n)], join(&s.expected(lines))))
        }
        "line numbers copied" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let number = |v: &[String]| -> Vec<String> {
                v.iter()
                    .enumerate()
                    .map(|(i, l)| format!("{:>6}\t{l}", s.start + i + 1))
                    .collect()
            };
            let o = number(&s.old);
            // The model numbers new too, or writes it plainly.
            let n = if rng.chance() {
                number(&s.new)
            } else {
                s.new.clone()
            };
            Some(ok(text, vec![edit(&o, &n)], join(&s.expected(lines))))
        }
        "invisible characters" => {
            let s = site(file, rng, 2, 6, &any_line)?;
            // The file has an invisible character on an unchanged line of
            // the window; the model's old and new do not.
            let c = ['\u{200b}', '\u{200d}', '\u{feff}', '\u{00ad}', '\u{200e}'][rng.below(5)];
            let m = (0..s.len).find(|&i| i != s.at && !s.old[i].trim().is_empty())?;
            let mut f = lines.clone();
            f[s.start + m] = with_invisible(&f[s.start + m], c)?;
            let mut exp = s.clone();
            let nm = if m > s.at { m + s.new.len() - s.len } else { m };
            exp.new[nm] = f[s.start + m].clone();
            Some(ok(
                join(&f),
                vec![edit(&s.old, &s.new)],
                join(&exp.expected(&f)),
            ))
        }
        "typography on changed line" => {
            // The changed line itself has quotes: new carries the model's
            // quote style where old's was read as the file's.
            let pick = |w: &[String], rng: &mut Rng| {
                let quoted: Vec<usize> = (0..w.len()).filter(|&i| has_quote(&w[i])).collect();
                (!quoted.is_empty()).then(|| quoted[rng.below(quoted.len())])
            };
            let s = site(file, rng, 1, 6, &pick)?;
            Some(quotes_either_way(&s, rng.chance()))
        }
        "edit re-sent differently" => {
            // The same edit twice in one call, the copy sent another way:
            // without the final newline, with trailing spaces, dedented,
            // or with replace_all. Applied once.
            let s = site(file, rng, 1, 6, &any_line)?;
            let first = edit(&s.old, &s.new);
            let copy = match rng.below(4) {
                0 => Edit::new(first.old.strip_suffix('\n')?, first.new.strip_suffix('\n')?),
                1 => {
                    let spaced = |l: &str| format!("{l}  ");
                    edit(&map(&s.old, spaced), &map(&s.new, spaced))
                }
                2 => {
                    let ci = common_indent(&s.old);
                    let strip = |l: &str| l.strip_prefix(ci.as_str()).unwrap_or(l).to_string();
                    if ci.is_empty() {
                        return None;
                    }
                    edit(&map(&s.old, strip), &map(&s.new, strip))
                }
                _ => Edit {
                    replace_all: true,
                    ..first.clone()
                },
            };
            Some(ok(text, vec![first, copy], join(&s.expected(lines))))
        }
        "line numbers, other forms" => {
            // Numbers as other tools print them: grep's `N:`, `N→`, `N|`.
            let s = site(file, rng, 1, 6, &any_line)?;
            let form = rng.below(3);
            let number = |v: &[String]| -> Vec<String> {
                v.iter()
                    .enumerate()
                    .map(|(i, l)| {
                        let n = s.start + i + 1;
                        match form {
                            0 => format!("{n}:{l}"),
                            1 => format!("{n:>6}→{l}"),
                            _ => format!("{n:>4} | {l}"),
                        }
                    })
                    .collect()
            };
            let o = number(&s.old);
            let n = if rng.chance() {
                number(&s.new)
            } else {
                s.new.clone()
            };
            Some(ok(text, vec![edit(&o, &n)], join(&s.expected(lines))))
        }
        "stale by an earlier edit" => {
            // Edit 1 changes a line of edit 2's window; edit 2's old is the
            // window as read.
            let s = site(file, rng, 2, 6, &any_line)?;
            let m = (0..s.len).find(|&i| i != s.at && s.old[i].trim().len() >= 3)?;
            let line = &s.old[m];
            if count(&text, &format!("{line}\n")) != 1 {
                return None;
            }
            let e1 = Edit::new(
                format!("{line}\n"),
                format!("{line} {} first\n", file.lang.comment()),
            );
            Some(refuse(text, vec![e1, edit(&s.old, &s.new)]))
        }
        "stale, loose twin elsewhere" => {
            // As "stale by an earlier edit", and the window's lines also
            // stand, dedented, at the end of the file: a tolerant level
            // would find them there.
            let s = site(file, rng, 2, 6, &any_line)?;
            let ci = common_indent(&s.old);
            let m = (0..s.len).find(|&i| i != s.at && s.old[i].trim().len() >= 3)?;
            let line = &s.old[m];
            if ci.is_empty() || count(&text, &format!("{line}\n")) != 1 {
                return None;
            }
            let mut f = lines.clone();
            f.push(String::new());
            f.extend(map(&s.old, |l| {
                l.strip_prefix(ci.as_str()).unwrap_or(l).to_string()
            }));
            let e1 = Edit::new(
                format!("{line}\n"),
                format!("{line} {} first\n", file.lang.comment()),
            );
            Some(refuse(join(&f), vec![e1, edit(&s.old, &s.new)]))
        }
        "typo" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let mut o = s.old.clone();
            let li = rng.below(o.len());
            let pos: Vec<usize> = o[li]
                .char_indices()
                .filter(|(_, c)| c.is_ascii_alphabetic())
                .map(|(i, _)| i)
                .collect();
            if pos.is_empty() {
                return None;
            }
            let p = pos[rng.below(pos.len())];
            let c = o[li].as_bytes()[p];
            let r = if c == b'z' || c == b'Z' { c - 1 } else { c + 1 };
            o[li].replace_range(p..p + 1, &(r as char).to_string());
            if loose_count(file, &o) != 0 || count(&text, &join(&o)) != 0 {
                return None;
            }
            Some(refuse(text, vec![edit(&o, &s.new)]))
        }
        "invented line" => {
            let s = site(file, rng, 1, 5, &any_line)?;
            let j = rng.below(s.len + 1);
            let ind = indent(&s.old[j.min(s.len - 1)]).to_string();
            let inv = format!("{ind}{}", file.lang.invented());
            let mut o = s.old.clone();
            o.insert(j, inv.clone());
            // new keeps the invented line where old had it.
            let mut n = s.new.clone();
            let nj = if j <= s.at {
                j
            } else {
                j + s.new.len() - s.len
            };
            n.insert(nj, inv);
            Some(refuse(text, vec![edit(&o, &n)]))
        }
        "stale old text" => {
            // Another change touched a line of the window since the model read it.
            let s = site(file, rng, 2, 6, &any_line)?;
            let m = (0..s.len).find(|&i| i != s.at && !s.old[i].trim().is_empty())?;
            let mut f = lines.clone();
            f[s.start + m] = format!("{} {} edited since", f[s.start + m], file.lang.comment());
            let ff = File::new(String::new(), file.lang, f.clone());
            if loose_count(&ff, &s.old) != 0 {
                return None;
            }
            Some(refuse(join(&f), vec![edit(&s.old, &s.new)]))
        }
        "ambiguous" => {
            for _ in 0..300 {
                let len = rng.range(1, 3);
                let st = rng.below(lines.len() - len);
                let w = lines[st..st + len].to_vec();
                if w.iter().any(|l| l.trim().len() < 4) {
                    continue;
                }
                if count(&text, &join(&w)) < 2 {
                    continue;
                }
                let Some(repl) = changed(file, &w[0], Change::Append, rng) else {
                    continue;
                };
                let mut n = repl;
                n.extend(w[1..].iter().cloned());
                // Half the time dedented, so the places are found at a
                // tolerant level.
                let ci = common_indent(&w);
                if len > 1 && !ci.is_empty() && rng.chance() {
                    let strip = |l: &str| l.strip_prefix(ci.as_str()).unwrap_or(l).to_string();
                    let (o, n) = (map(&w, strip), map(&n, strip));
                    if count(&text, &join(&o)) == 0 {
                        return Some(refuse(text.clone(), vec![edit(&o, &n)]));
                    }
                }
                return Some(refuse(text.clone(), vec![edit(&w, &n)]));
            }
            None
        }
        "swapped old/new" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            if loose_count(file, &s.new) != 0 {
                return None;
            }
            Some(refuse(text, vec![edit(&s.new, &s.old)]))
        }
        "resent, no record" => {
            // The edit was made by a call the engine has no record of; the
            // model sends it again.
            let s = site(file, rng, 1, 6, &any_line)?;
            let f = s.expected(lines);
            let ff = File::new(String::new(), file.lang, f.clone());
            if loose_count(&ff, &s.old) != 0 {
                return None;
            }
            Some(refuse(join(&f), vec![edit(&s.old, &s.new)]))
        }
        "elided old" => {
            let pick =
                |w: &[String], rng: &mut Rng| Some(if rng.chance() { 0 } else { w.len() - 1 });
            let s = site(file, rng, 3, 6, &pick)?;
            let m = rng.range(1, s.len - 2);
            let ind = indent(&s.old[m]).to_string();
            let el = if rng.chance() {
                format!("{ind}...")
            } else {
                format!("{ind}{} ... existing code ...", file.lang.comment())
            };
            let mut o = s.old.clone();
            o[m] = el.clone();
            let mut n = s.new.clone();
            let nm = if m > s.at { m + s.new.len() - s.len } else { m };
            n[nm] = el;
            if s.old[m].trim() == "..." {
                return None;
            }
            Some(refuse(text, vec![edit(&o, &n)]))
        }
        "already applied" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            let f = join(&s.expected(lines));
            let e = if rng.chance() {
                edit(&s.old, &s.new)
            } else {
                // The previous call was dedented and applied at a tolerant
                // level; the model resends it as it sent it.
                let ci = common_indent(&s.old);
                let strip = |l: &str| {
                    l.strip_prefix(ci.as_str())
                        .unwrap_or(l.trim_start())
                        .to_string()
                };
                // (Only where that call would have gone through the
                // tolerant level: a dedented old that matches exactly
                // inside a line would have been applied there instead.)
                let o = map(&s.old, strip);
                if ci.is_empty() || count(&text, &join(&o)) != 0 {
                    return None;
                }
                edit(&o, &map(&s.new, strip))
            };
            Some(Case {
                file: file.name.clone(),
                text: f,
                edits: vec![e.clone()],
                previous: vec![e],
                expect: Expect::Skip,
                raw: None,
            })
        }
        "Latin-1 file" => encoded_case(file, rng, Encoding::Latin1, "café naïve © ½", false, false),
        "Windows-1252 file" => encoded_case(
            file,
            rng,
            Encoding::Windows1252,
            "\u{201c}quoted\u{201d} \u{2014} 5 \u{20ac}",
            false,
            false,
        ),
        "stray byte outside the edit" => encoded_case(
            file,
            rng,
            Encoding::Utf8WithStrayBytes,
            "ünïcödé",
            true,
            false,
        ),
        "new not in Latin-1" => encoded_case(file, rng, Encoding::Latin1, "café", false, true),
        "noop" => {
            let s = site(file, rng, 1, 6, &any_line)?;
            Some(refuse(text, vec![edit(&s.old, &s.old)]))
        }
        _ => unreachable!(),
    }
}

// ---------------------------------------------------------------- scoring

#[derive(Clone, Copy, PartialEq, Eq)]
enum Score {
    Ok,
    Fail,
    Wrong,
}

fn score(c: &Case) -> (Score, String) {
    if let Some(raw) = &c.raw {
        return score_raw(c, raw);
    }
    let r = apply(&c.text, &c.edits, &c.previous);
    match (&c.expect, r) {
        (Expect::Text(want), Ok(a)) if &a.text == want => (Score::Ok, String::new()),
        (Expect::Text(want), Ok(a)) => (Score::Wrong, diff(want, &a.text)),
        (Expect::Text(_), Err(e)) => (Score::Fail, e.to_string()),
        (Expect::Refuse, Err(_)) => (Score::Ok, String::new()),
        (Expect::Refuse, Ok(a)) if a.text == c.text => (
            Score::Fail,
            format!("accepted without a change: {:?}", a.outcomes),
        ),
        (Expect::Refuse, Ok(a)) => (Score::Wrong, diff(&c.text, &a.text)),
        (Expect::Skip, Ok(a))
            if a.text == c.text && a.outcomes.iter().all(|o| *o == Outcome::AlreadyApplied) =>
        {
            (Score::Ok, String::new())
        }
        (Expect::Skip, Ok(a)) if a.text == c.text => (
            Score::Fail,
            format!("unchanged but outcomes {:?}", a.outcomes),
        ),
        (Expect::Skip, Ok(a)) => (Score::Wrong, diff(&c.text, &a.text)),
        (Expect::Skip, Err(e)) => (Score::Fail, e.to_string()),
    }
}

/// A file not in UTF-8, as the file store reads and writes it.
fn score_raw(c: &Case, raw: &Raw) -> (Score, String) {
    let (text, encoding) = Encoding::decode(raw.bytes.clone());
    if encoding != raw.encoding {
        return (
            Score::Fail,
            format!("read as {encoding:?}, not {:?}", raw.encoding),
        );
    }
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match (apply(&text, &c.edits, &c.previous), &raw.want) {
        (Ok(a), Some(want)) => match encoding.encode(&a.text) {
            Ok(got) if got.as_ref() == want.as_slice() => (Score::Ok, String::new()),
            Ok(got) => (Score::Wrong, diff(&lossy(want), &lossy(&got))),
            Err(e) => (Score::Fail, e.to_string()),
        },
        (Err(e), Some(_)) => (Score::Fail, e.to_string()),
        (Ok(a), None) => match encoding.encode(&a.text) {
            Err(_) => (Score::Ok, String::new()),
            Ok(got) if got.as_ref() == raw.bytes.as_slice() => {
                (Score::Fail, "accepted without a change".into())
            }
            Ok(got) => (Score::Wrong, diff(&lossy(&raw.bytes), &lossy(&got))),
        },
        (Err(_), None) => (Score::Ok, String::new()),
    }
}

/// Expected vs got, as a unified diff ("-" expected, "+" written).
fn diff(want: &str, got: &str) -> String {
    similar::TextDiff::from_lines(want, got)
        .unified_diff()
        .context_radius(2)
        .header("expected", "written")
        .to_string()
}

fn show(c: &Case) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  file {} ({} bytes{})",
        c.file,
        c.text.len(),
        if c.text.contains('\r') { ", CRLF" } else { "" }
    );
    for (i, e) in c.edits.iter().enumerate() {
        let _ = writeln!(
            s,
            "  edit {}: replace_all={}\n    old: {:?}\n    new: {:?}",
            i + 1,
            e.replace_all,
            e.old,
            e.new
        );
    }
    if !c.previous.is_empty() {
        let _ = writeln!(s, "  previous: {} edit(s), same as sent", c.previous.len());
    }
    s
}

fn main() {
    let verbose = std::env::var_os("FIDELITY_VERBOSE").is_some();
    let seed: u64 = std::env::var("FIDELITY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let start = Instant::now();
    let files = corpus();
    let mut rng = Rng(seed);
    let mut cases: Vec<(usize, Case)> = Vec::new();
    for (k, kind) in KINDS.iter().enumerate() {
        let mut made = 0;
        let mut tries = 0;
        while made < PER_KIND && tries < PER_KIND * 40 {
            tries += 1;
            let f = &files[rng.below(files.len())];
            if let Some(c) = make(kind, f, &mut rng) {
                cases.push((k, c));
                made += 1;
            }
        }
    }
    let built = start.elapsed();
    let mut table = vec![[0usize; 4]; KINDS.len()];
    let mut shown = vec![0usize; KINDS.len()];
    let t_apply = Instant::now();
    let mut reports = String::new();
    for (k, c) in &cases {
        let (sc, why) = score(c);
        table[*k][0] += 1;
        let col = match sc {
            Score::Ok => 1,
            Score::Fail => 2,
            Score::Wrong => 3,
        };
        table[*k][col] += 1;
        if (sc == Score::Wrong || (verbose && sc == Score::Fail)) && (shown[*k] < 3 || verbose) {
            shown[*k] += 1;
            let tag = if sc == Score::Wrong { "WRONG" } else { "FAIL" };
            let _ = writeln!(reports, "--- {tag}: {}\n{}{}\n", KINDS[*k], show(c), why);
        }
    }
    let applied = t_apply.elapsed();
    print!("{reports}");
    println!(
        "corpus: {} files ({} Rust sources × Rust, Python-like, Go-like with tabs), seed {seed}\n",
        files.len(),
        files.len() / 3
    );
    println!(
        "| {:<28} | {:>5} | {:>4} | {:>4} | {:>5} |",
        "kind", "cases", "ok", "FAIL", "WRONG"
    );
    println!(
        "|{:-<30}|{:->7}|{:->6}|{:->6}|{:->7}|",
        "", ":", ":", ":", ":"
    );
    let mut tot = [0usize; 4];
    for (k, row) in table.iter().enumerate() {
        if k == FIRST_REFUSE {
            println!(
                "| {:<28} | {:>5} | {:>4} | {:>4} | {:>5} |",
                "*must be refused:*", "", "", "", ""
            );
        }
        println!(
            "| {:<28} | {:>5} | {:>4} | {:>4} | {:>5} |",
            KINDS[k], row[0], row[1], row[2], row[3]
        );
        for i in 0..4 {
            tot[i] += row[i];
        }
    }
    println!(
        "| {:<28} | {:>5} | {:>4} | {:>4} | {:>5} |",
        "**total**", tot[0], tot[1], tot[2], tot[3]
    );
    println!(
        "\n{} cases built in {:.2?}, applied and scored in {:.2?} ({:.1} µs a case); total {:.2?}",
        tot[0],
        built,
        applied,
        applied.as_secs_f64() * 1e6 / tot[0].max(1) as f64,
        start.elapsed()
    );
}
