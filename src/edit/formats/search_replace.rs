//! Aider-style SEARCH/REPLACE blocks inside a model's prose reply.
//!
//! ````text
//! src/app.py
//! ```python
//! <<<<<<< SEARCH
//! old lines
//! =======
//! new lines
//! >>>>>>> REPLACE
//! ```
//! ````
//!
//! The rules follow the behaviour of Aider's parser (see
//! `tests/data/conformance/`), written anew:
//!
//! - Markers are whole lines (surrounding whitespace ignored): 5 to 9 `<`
//!   then ` SEARCH` (an extra `>` after it is accepted), 5 to 9 `=`, and 5 to
//!   9 `>` then ` REPLACE`. A second divider line may end a block in place
//!   of the REPLACE marker.
//! - The file name is looked for on the up to 3 lines before the SEARCH
//!   marker, nearest first, going further back only across fence lines. A
//!   name is the line stripped of `#`, backticks, `*` and a trailing `:`; on
//!   a fence line, only the text after the fence, and only if it contains a
//!   `.` or a `/`. Among the names found, the first known file wins
//!   (`valid_fnames`), then a known file with that basename, then a close
//!   match (similarity at least 0.8), then the first name with a `.`, then
//!   the nearest name. A block whose SEARCH part is empty (create or append)
//!   skips the known-file steps: its name is taken as written.
//! - A block without a name of its own takes the previous block's.
//! - Fenced shell blocks (```` ```bash ````, ```` ```sh ```` …) that do not
//!   hold an edit are skipped, and reported when `shell_blocks` is set.
//! - Fences around blocks are optional and never part of the result.
//!
//! Lines end at `\n` only; each line keeps its ending (`\r\n` included) in
//! the SEARCH and REPLACE texts.

use super::{Block, FormatError};

/// One thing found in a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A SEARCH/REPLACE edit.
    Block(Block),
    /// The body of a fenced shell block that is not an edit (only reported
    /// when [`ParseOptions::shell_blocks`] is set).
    Shell(String),
}

/// What the parser needs to know beyond the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOptions {
    /// Known files a written name may resolve to (exact, by basename, or by
    /// a close match).
    pub valid_fnames: Vec<String>,
    /// The fence pair the model was told to use. Triple backticks are
    /// recognised around file names whatever this is.
    pub fence: (String, String),
    /// Report fenced shell blocks as [`Item::Shell`].
    pub shell_blocks: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            valid_fnames: Vec::new(),
            fence: ("```".to_string(), "```".to_string()),
            shell_blocks: false,
        }
    }
}

const BACKTICKS: &str = "```";

/// Fence openers whose block is a shell command rather than an edit.
/// Matched as prefixes of the trimmed line, so ```` ```shell ```` and
/// ```` ```sh ```` both count.
const SHELL_FENCES: &[&str] = &[
    "```bash",
    "```sh",
    "```shell",
    "```cmd",
    "```batch",
    "```powershell",
    "```ps1",
    "```zsh",
    "```fish",
    "```ksh",
    "```csh",
    "```tcsh",
];

const SHAPE: &str = "each block is <<<<<<< SEARCH, the exact lines to find, =======, \
                     the new lines, >>>>>>> REPLACE, each marker on a line of its own";

/// Parse every SEARCH/REPLACE block (and, if asked, every shell block) in
/// `text`, in order.
///
/// Fails on the first block that is not closed, or that has no file name
/// when no earlier block gave one; the error names the line and says what
/// to send instead.
pub fn parse(text: &str, opts: &ParseOptions) -> Result<Vec<Item>, FormatError> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let fence = opts.fence.0.as_str();
    let mut items = Vec::new();
    let mut current_path: Option<String> = None;
    let mut i = 0;

    while i < lines.len() {
        let line = lines[i];

        if is_shell_fence(line) && !search_marker_within(&lines, i, 2) {
            // Body up to the next line that starts a fence; the closing
            // fence itself is consumed.
            let mut body = String::new();
            i += 1;
            while let Some(l) = lines.get(i) {
                if py_strip(l).starts_with(BACKTICKS) {
                    i += 1;
                    break;
                }
                body.push_str(l);
                i += 1;
            }
            if opts.shell_blocks {
                items.push(Item::Shell(body));
            }
            continue;
        }

        if !is_search_marker(line) {
            i += 1;
            continue;
        }

        let start = i;
        let before = &lines[start.saturating_sub(3)..start];
        // An empty SEARCH part creates (or appends to) a file: its name is
        // taken as written, not matched to a known file.
        let creates = lines.get(start + 1).is_some_and(|l| is_divider(l));
        let known = if creates {
            None
        } else {
            Some(opts.valid_fnames.as_slice())
        };
        let path = match find_path(before, fence, known).or_else(|| current_path.clone()) {
            Some(p) => p,
            None => {
                return Err(error(
                    start,
                    format!(
                        "this SEARCH block has no file name; put the file's path alone on the \
                         line before the block (or before its opening {fence}), and start every \
                         later block for another file the same way"
                    ),
                ));
            }
        };
        current_path = Some(path.clone());

        let mut search = String::new();
        i += 1;
        while i < lines.len() && !is_divider(lines[i]) {
            search.push_str(lines[i]);
            i += 1;
        }
        if i >= lines.len() {
            let next_block = (start + 1..lines.len()).find(|&k| is_search_marker(lines[k]));
            let message = match next_block {
                Some(k) => format!(
                    "this SEARCH block has no ======= divider before the next <<<<<<< SEARCH \
                     (line {}); {SHAPE}",
                    k + 1
                ),
                None => format!("this SEARCH block has no ======= divider; {SHAPE}"),
            };
            return Err(error(start, message));
        }
        let divider = i;

        let mut replace = String::new();
        i += 1;
        while i < lines.len() && !is_replace_marker(lines[i]) && !is_divider(lines[i]) {
            replace.push_str(lines[i]);
            i += 1;
        }
        if i >= lines.len() {
            return Err(error(
                start,
                format!(
                    "this SEARCH block is not closed: no >>>>>>> REPLACE after its ======= \
                     (line {}) before the reply ends; end every block with >>>>>>> REPLACE on a \
                     line of its own, and if the reply was cut off, resend the whole block",
                    divider + 1
                ),
            ));
        }

        items.push(Item::Block(Block {
            path,
            search,
            replace,
        }));
        i += 1;
    }
    Ok(items)
}

fn error(index: usize, message: String) -> FormatError {
    FormatError {
        line: Some(index + 1),
        message,
    }
}

/// Python's `str.isspace`, which the peer's trimming uses: Unicode
/// whitespace plus the information separators U+001C..U+001F.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// `s` is `count` copies of `c` with 5 <= count <= 9, followed by `rest`.
fn marker(s: &str, c: char) -> Option<&str> {
    let rest = s.trim_start_matches(c);
    let count = s.len() - rest.len();
    (5..=9).contains(&count).then_some(rest)
}

fn is_search_marker(line: &str) -> bool {
    marker(py_strip(line), '<').is_some_and(|rest| rest == " SEARCH" || rest == " SEARCH>")
}

fn is_divider(line: &str) -> bool {
    marker(py_strip(line), '=').is_some_and(str::is_empty)
}

fn is_replace_marker(line: &str) -> bool {
    marker(py_strip(line), '>').is_some_and(|rest| rest == " REPLACE")
}

fn is_shell_fence(line: &str) -> bool {
    let s = py_strip(line);
    SHELL_FENCES.iter().any(|f| s.starts_with(f))
}

/// One of the `ahead` lines after `i` is a SEARCH marker: the fence holds
/// an edit (the file name may sit between the fence and the marker).
fn search_marker_within(lines: &[&str], i: usize, ahead: usize) -> bool {
    lines
        .iter()
        .skip(i + 1)
        .take(ahead)
        .any(|l| is_search_marker(l))
}

/// The line (untrimmed, as the peer checks it) opens or closes a fence.
fn is_fence_line(line: &str, fence: &str) -> bool {
    (!fence.is_empty() && line.starts_with(fence)) || line.starts_with(BACKTICKS)
}

/// The file name a line before a block gives, if any.
fn name_on_line(line: &str, fence: &str) -> Option<String> {
    let s = py_strip(line);
    if s == "..." {
        return None;
    }
    let after_fence = if !fence.is_empty() && s.starts_with(fence) {
        Some(&s[fence.len()..])
    } else {
        s.strip_prefix(BACKTICKS)
    };
    if let Some(rest) = after_fence {
        // ```python is a language tag; ```src/app.py is a name.
        let rest = py_strip(rest);
        let is_name = !rest.is_empty() && (rest.contains('.') || rest.contains('/'));
        return is_name.then(|| rest.to_string());
    }
    let s = s.trim_end_matches(':');
    let s = s.trim_start_matches('#');
    let s = py_strip(s);
    let s = s.trim_matches('`');
    let s = s.trim_matches('*');
    (!s.is_empty()).then(|| s.to_string())
}

/// The file name for a block, from the (up to 3) lines before it.
/// `known` is `None` for a block that creates a file.
fn find_path(before: &[&str], fence: &str, known: Option<&[String]>) -> Option<String> {
    let mut names = Vec::new();
    for line in before.iter().rev().take(3) {
        if let Some(name) = name_on_line(line, fence) {
            names.push(name);
        }
        if !is_fence_line(line, fence) {
            break;
        }
    }
    resolve(&names, known.unwrap_or(&[]))
}

/// Pick the best of the names found, nearest first.
fn resolve(names: &[String], known: &[String]) -> Option<String> {
    if let Some(exact) = names.iter().find(|n| known.contains(n)) {
        return Some(exact.clone());
    }
    for name in names {
        if let Some(k) = known.iter().find(|k| basename(k) == name) {
            return Some(k.clone());
        }
    }
    for name in names {
        if let Some(k) = closest(name, known, 0.8) {
            return Some(k.to_string());
        }
    }
    names
        .iter()
        .find(|n| n.contains('.'))
        .or_else(|| names.first())
        .cloned()
}

/// The last component of a `/`-separated path (trailing slashes ignored).
fn basename(path: &str) -> &str {
    let path = path.trim_end_matches('/');
    path.rsplit('/').next().unwrap_or(path)
}

/// The known name most similar to `word`, if its similarity reaches
/// `cutoff`; ties go to the greater name.
fn closest<'a>(word: &str, known: &'a [String], cutoff: f64) -> Option<&'a str> {
    let word: Vec<char> = word.chars().collect();
    let index = CharIndex::new(&word);
    let mut best: Option<(f64, &str)> = None;
    for k in known {
        let a: Vec<char> = k.chars().collect();
        let total = a.len() + word.len();
        let score = if total == 0 {
            1.0
        } else {
            2.0 * matching_chars(&a, &word, &index) as f64 / total as f64
        };
        if score < cutoff {
            continue;
        }
        let better = match best {
            None => true,
            Some((s, name)) => score > s || (score == s && k.as_str() > name),
        };
        if better {
            best = Some((score, k.as_str()));
        }
    }
    best.map(|(_, name)| name)
}

/// Positions of each character in the second sequence. In sequences of 200
/// or more, characters making up more than 1% (plus one) of it are left out
/// as too common to anchor a match, as in difflib's `SequenceMatcher`.
struct CharIndex {
    positions: std::collections::HashMap<char, Vec<usize>>,
}

impl CharIndex {
    fn new(b: &[char]) -> CharIndex {
        let mut positions: std::collections::HashMap<char, Vec<usize>> =
            std::collections::HashMap::new();
        for (j, &c) in b.iter().enumerate() {
            positions.entry(c).or_default().push(j);
        }
        if b.len() >= 200 {
            let limit = b.len() / 100 + 1;
            positions.retain(|_, js| js.len() <= limit);
        }
        CharIndex { positions }
    }
}

/// Characters in common by difflib's measure: the longest common run,
/// then the same on each side of it, recursively.
fn matching_chars(a: &[char], b: &[char], index: &CharIndex) -> usize {
    let mut total = 0;
    let mut pending = vec![(0, a.len(), 0, b.len())];
    while let Some((alo, ahi, blo, bhi)) = pending.pop() {
        let (i, j, k) = longest_run(a, b, index, (alo, ahi), (blo, bhi));
        if k == 0 {
            continue;
        }
        total += k;
        if alo < i && blo < j {
            pending.push((alo, i, blo, j));
        }
        if i + k < ahi && j + k < bhi {
            pending.push((i + k, ahi, j + k, bhi));
        }
    }
    total
}

/// The longest run `a[i..i+k] == b[j..j+k]` inside the given ranges,
/// earliest in `a` (then in `b`) among the longest, grown over characters
/// the index left out.
fn longest_run(
    a: &[char],
    b: &[char],
    index: &CharIndex,
    (alo, ahi): (usize, usize),
    (blo, bhi): (usize, usize),
) -> (usize, usize, usize) {
    let (mut bi, mut bj, mut bk) = (alo, blo, 0);
    // run[j + 1]: length of the run ending at a[i - 1], b[j].
    let mut run = vec![0usize; b.len() + 1];
    let mut next = vec![0usize; b.len() + 1];
    let mut touched: Vec<usize> = Vec::new();
    let mut next_touched: Vec<usize> = Vec::new();
    for (i, c) in a.iter().enumerate().take(ahi).skip(alo) {
        for &j in index.positions.get(c).map(Vec::as_slice).unwrap_or(&[]) {
            if j < blo {
                continue;
            }
            if j >= bhi {
                break;
            }
            let k = run[j] + 1;
            next[j + 1] = k;
            next_touched.push(j + 1);
            if k > bk {
                (bi, bj, bk) = (i + 1 - k, j + 1 - k, k);
            }
        }
        for &t in &touched {
            run[t] = 0;
        }
        touched.clear();
        std::mem::swap(&mut run, &mut next);
        std::mem::swap(&mut touched, &mut next_touched);
    }
    while bi > alo && bj > blo && a[bi - 1] == b[bj - 1] {
        (bi, bj, bk) = (bi - 1, bj - 1, bk + 1);
    }
    while bi + bk < ahi && bj + bk < bhi && a[bi + bk] == b[bj + bk] {
        bk += 1;
    }
    (bi, bj, bk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(a: &str, b: &str) -> f64 {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let index = CharIndex::new(&b);
        2.0 * matching_chars(&a, &b, &index) as f64 / (a.len() + b.len()) as f64
    }

    #[test]
    fn similarity_matches_difflib() {
        // Values from difflib.SequenceMatcher(None, a, b).ratio().
        assert_eq!(ratio("file1.py", "file1_py"), 0.875);
        assert_eq!(ratio("abcd", "bcde"), 0.75);
        assert_eq!(
            ratio("\\windows\\__init__.py", "\\windows__init__.py"),
            38.0 / 39.0
        );
        assert_eq!(ratio("abc", "xyz"), 0.0);
    }

    fn matching(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        matching_chars(&a, &b, &CharIndex::new(&b))
    }

    #[test]
    fn matching_counts_match_difflib() {
        // sum(size for get_matching_blocks()) from difflib, including the
        // "popular character" rule for sequences of 200 or more.
        assert_eq!(
            matching("src/edit/formats/mod.rs", "src/edit/format/mods.rs"),
            22
        );
        assert_eq!(matching("tests/test_repomap.py", "test_repomap.py"), 15);
        assert_eq!(matching("aaaaabbbbbab", "abababababab"), 4);
        let a = format!("{}{}", "a".repeat(150), "b".repeat(100));
        assert_eq!(matching(&a, &"ab".repeat(120)), 1);
        let a = format!("x/{}.py", "ab".repeat(110));
        let b = format!("{}c.py", "ab".repeat(105));
        assert_eq!(matching(&a, &b), 3);
    }

    #[test]
    fn markers() {
        assert!(is_search_marker("<<<<<<< SEARCH\n"));
        assert!(is_search_marker("  <<<<< SEARCH>  \r\n"));
        assert!(!is_search_marker("<<<< SEARCH"));
        assert!(!is_search_marker("<<<<<<<<<< SEARCH"));
        assert!(!is_search_marker("<<<<<<< SEARCH here"));
        assert!(is_divider("=========\n"));
        assert!(!is_divider("==========\n"));
        assert!(!is_divider("====\n"));
        assert!(is_replace_marker(">>>>>>> REPLACE"));
        assert!(!is_replace_marker(">>>>>>>REPLACE"));
    }

    #[test]
    fn names_on_lines() {
        assert_eq!(name_on_line("```python\n", "```"), None);
        assert_eq!(
            name_on_line("```src/a.py\n", "```"),
            Some("src/a.py".into())
        );
        assert_eq!(name_on_line("## `a.py`:\n", "```"), Some("a.py".into()));
        assert_eq!(name_on_line("**a.py**\n", "```"), Some("a.py".into()));
        assert_eq!(name_on_line("...\n", "```"), None);
        assert_eq!(name_on_line("\n", "```"), None);
    }
}
