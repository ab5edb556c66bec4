//! `outline`: the top-level definitions of a source file with their line
//! numbers, a cheap map of a file before reading it.
//!
//! The approach is deliberately light: a line-based scan with a few
//! regular expressions per language (Rust, Python, Go, JavaScript and
//! TypeScript, Java, C and C++), relying on how code is conventionally
//! indented. Top-level definitions sit at column 0; members (methods of a
//! Rust `impl`/`trait`, a Python or JS/TS class, a Java type) one
//! indentation level in. Block comments and Python triple-quoted strings
//! are stepped over so that prose in them is not taken for code. It is a
//! map, not a parser: an unusual layout can hide a definition or show a
//! false one.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::files::{Workspace, read_text};
use crate::prim::ToolError;

/// Signatures longer than this many characters are cut.
const SIG_CAP: usize = 160;

/// One definition found: its 1-based line, whether it is a member (one
/// level in), and the signature line as shown.
#[derive(Debug, PartialEq, Eq)]
struct Def {
    line: usize,
    member: bool,
    sig: String,
}

#[derive(Clone, Copy)]
enum Lang {
    Rust,
    Python,
    Go,
    Js,
    Java,
    C { header: bool },
}

const SUPPORTED: &str = "Rust (.rs), Python (.py .pyi), Go (.go), JavaScript/TypeScript (.js .jsx .ts .tsx .mjs .cjs .mts .cts), Java (.java) and C/C++ (.c .h .cc .cpp .cxx .hpp .hh .hxx)";

fn lang_of(path: &Path) -> Option<Lang> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => Lang::Rust,
        "py" | "pyi" => Lang::Python,
        "go" => Lang::Go,
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Lang::Js,
        "java" => Lang::Java,
        "c" | "cc" | "cpp" | "cxx" => Lang::C { header: false },
        "h" | "hpp" | "hh" | "hxx" => Lang::C { header: true },
        _ => return None,
    })
}

/// Lists the definitions of the source file at `path`.
pub fn outline(ws: &Workspace, path: &str) -> Result<String, ToolError> {
    let resolved = ws.resolve(path)?;
    let Some(lang) = lang_of(&resolved.real) else {
        return Err(ToolError::UnknownLanguage {
            path: resolved.rel,
            supported: SUPPORTED,
        });
    };
    let file = read_text(&resolved)?;
    let defs = scan(lang, &file.text);
    if defs.is_empty() {
        return Ok(format!(
            "no top-level definitions found in {}\n",
            resolved.rel
        ));
    }
    Ok(render(&defs))
}

fn scan(lang: Lang, text: &str) -> Vec<Def> {
    let lines: Vec<&str> = text.lines().collect();
    match lang {
        Lang::Rust => scan_rust(&lines),
        Lang::Python => scan_python(&lines),
        Lang::Go => scan_go(&lines),
        Lang::Js => scan_js(&lines),
        Lang::Java => scan_java(&lines),
        Lang::C { header } => scan_c(&lines, header),
    }
}

/// The line number right-aligned (at least four columns), two spaces, the
/// signature; members two spaces further in.
fn render(defs: &[Def]) -> String {
    let last = defs.iter().map(|d| d.line).max().unwrap_or(0);
    let width = last.to_string().len().max(4);
    let mut out = String::new();
    for d in defs {
        let pad = if d.member { "    " } else { "  " };
        out.push_str(&format!("{:>width$}{pad}{}\n", d.line, d.sig));
    }
    out
}

/// The signature as shown: trimmed, an opening brace at the end dropped
/// (for brace languages), cut at `SIG_CAP` characters.
fn sig(line: &str, drop_brace: bool) -> String {
    let mut s = line.trim();
    if drop_brace {
        s = s.strip_suffix('{').unwrap_or(s).trim_end();
    }
    if s.chars().count() > SIG_CAP {
        let cut: String = s.chars().take(SIG_CAP).collect();
        format!("{cut}…")
    } else {
        s.to_string()
    }
}

fn re(pattern: &str) -> Regex {
    // The patterns are constants checked by the tests; an invalid one is a
    // bug in this file, not something a model or user can cause.
    Regex::new(pattern).unwrap_or_else(|e| panic!("outline pattern {pattern:?}: {e}"))
}

/// The leading whitespace of a line.
fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Which lines of a C-like file start inside a `/* ... */` comment.
/// String literals in double quotes are stepped over so that "src/*.rs" is
/// not a comment; `single_quotes` also steps over '...' (not for Rust,
/// where a quote starts a lifetime).
fn in_block_comment(lines: &[&str], single_quotes: bool) -> Vec<bool> {
    let mut inside = false;
    let mut starts = Vec::with_capacity(lines.len());
    for line in lines {
        starts.push(inside);
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if inside {
                if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    inside = false;
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => break,
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    inside = true;
                    i += 2;
                }
                q @ (b'"' | b'\'') if q == b'"' || single_quotes => {
                    i = skip_quoted(b, i);
                }
                _ => i += 1,
            }
        }
    }
    starts
}

/// The index just past the quoted literal that starts at `b[start]`
/// (backslash escapes honoured; an unclosed literal runs to the line end).
fn skip_quoted(b: &[u8], start: usize) -> usize {
    let quote = b[start];
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
        } else if b[i] == quote {
            return i + 1;
        } else {
            i += 1;
        }
    }
    b.len()
}

/// A line that opens a comment or is part of one, by its first characters.
fn is_comment_line(trimmed: &str) -> bool {
    trimmed.starts_with("//") || trimmed.starts_with("/*") || trimmed.starts_with('*')
}

// ---------------------------------------------------------------- Rust

static RUST_ITEM: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:default|const|async|unsafe|safe|extern(?:\s+"[^"]*")?)\s+)*(fn|struct|enum|union|trait|impl|mod|type|const|static)\b"#,
    )
});
static RUST_MACRO: LazyLock<Regex> = LazyLock::new(|| re(r"^macro_rules!\s*\w+"));
static RUST_FN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:default|const|async|unsafe|safe|extern(?:\s+"[^"]*")?)\s+)*fn\s+\w+"#,
    )
});

fn scan_rust(lines: &[&str]) -> Vec<Def> {
    let comment = in_block_comment(lines, false);
    let mut defs = Vec::new();
    // Inside the body of a top-level `impl` or `trait`.
    let mut container = false;
    for (i, line) in lines.iter().enumerate() {
        if comment[i] || is_blank(line) {
            continue;
        }
        let indent = indent_of(line);
        let trimmed = line.trim_start();
        if indent.is_empty() {
            if let Some(c) = RUST_ITEM.captures(line) {
                let kind = c.get(1).map_or("", |m| m.as_str());
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, true),
                });
                let one_line = line.trim_end().ends_with('}') || line.trim_end().ends_with(';');
                container = matches!(kind, "impl" | "trait") && !one_line;
            } else if RUST_MACRO.is_match(line) {
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, true),
                });
                container = false;
            } else if trimmed.starts_with('}') {
                container = false;
            }
            continue;
        }
        if container && (indent == "    " || indent == "\t") && RUST_FN.is_match(trimmed) {
            defs.push(Def {
                line: i + 1,
                member: true,
                sig: sig(line, true),
            });
        }
    }
    defs
}

// ---------------------------------------------------------------- Python

static PY_DEF: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:async\s+)?def\s+\w+|^class\s+\w+"));

/// Which lines of a Python file start inside a triple-quoted string.
fn in_py_string(lines: &[&str]) -> Vec<bool> {
    let mut open: Option<&[u8]> = None;
    let mut starts = Vec::with_capacity(lines.len());
    for line in lines {
        starts.push(open.is_some());
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if let Some(delim) = open {
                if b[i] == b'\\' {
                    i += 2;
                } else if b[i..].starts_with(delim) {
                    open = None;
                    i += 3;
                } else {
                    i += 1;
                }
                continue;
            }
            if b[i..].starts_with(b"\"\"\"") {
                open = Some(b"\"\"\"");
                i += 3;
            } else if b[i..].starts_with(b"'''") {
                open = Some(b"'''");
                i += 3;
            } else if b[i] == b'#' {
                break;
            } else if b[i] == b'"' || b[i] == b'\'' {
                i = skip_quoted(b, i);
            } else {
                i += 1;
            }
        }
    }
    starts
}

fn scan_python(lines: &[&str]) -> Vec<Def> {
    let in_string = in_py_string(lines);
    let mut defs = Vec::new();
    // Inside a top-level class: the indentation of its body, once seen.
    let mut class: Option<Option<&str>> = None;
    for (i, line) in lines.iter().enumerate() {
        if in_string[i] || is_blank(line) {
            continue;
        }
        let indent = indent_of(line);
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            continue;
        }
        if indent.is_empty() {
            class = None;
            if PY_DEF.is_match(line) {
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, false),
                });
                if line.starts_with("class") {
                    class = Some(None);
                }
            }
            continue;
        }
        if let Some(body) = class {
            let body = match body {
                Some(body) => body,
                None => {
                    class = Some(Some(indent));
                    indent
                }
            };
            if indent == body && PY_DEF.is_match(trimmed) {
                defs.push(Def {
                    line: i + 1,
                    member: true,
                    sig: sig(line, false),
                });
            }
        }
    }
    defs
}

// ---------------------------------------------------------------- Go

static GO_TOP: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:func\b|type\s+\w+)"));
static GO_TYPE_GROUP: LazyLock<Regex> = LazyLock::new(|| re(r"^type\s*\(\s*$"));
static GO_GROUP_MEMBER: LazyLock<Regex> = LazyLock::new(|| re(r"^\w+\s"));

fn scan_go(lines: &[&str]) -> Vec<Def> {
    let comment = in_block_comment(lines, false);
    let mut defs = Vec::new();
    let mut group = false;
    for (i, line) in lines.iter().enumerate() {
        if comment[i] || is_blank(line) {
            continue;
        }
        let indent = indent_of(line);
        if indent.is_empty() {
            group = false;
            if GO_TYPE_GROUP.is_match(line) {
                group = true;
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, false),
                });
            } else if GO_TOP.is_match(line) {
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, true),
                });
            }
            continue;
        }
        if group && (indent == "\t" || indent == "    ") && GO_GROUP_MEMBER.is_match(line.trim()) {
            defs.push(Def {
                line: i + 1,
                member: true,
                sig: sig(line, true),
            });
        }
    }
    defs
}

// ---------------------------------------------------------------- JS / TS

static JS_TOP: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"^(?:export\b|module\.exports\b|exports\.[\w$]+\s*=",
        r"|(?:async\s+)?function\b",
        r"|(?:abstract\s+)?class\b",
        r"|(?:declare\s+)?(?:interface\s+[\w$]+|type\s+[\w$]+|(?:const\s+)?enum\s+[\w$]+|namespace\s+[\w$.]+|module\s+\S+)",
        r"|(?:const|let|var)\s+[\w$]+\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>))",
    ))
});
static JS_CLASS: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:abstract\s+)?class\b"));
static JS_METHOD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"^(?:(?:public|private|protected|static|async|readonly|abstract|override|declare|get|set|accessor)\s+)*",
        r"(?:\*\s*)?(#?[\w$]+|\[[^\]]+\])\s*\??\s*",
        r"(?:<[^>]*>\s*)?(?:\(|(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|[\w$]+)\s*(?::[^=]+)?=>)",
    ))
});
const JS_NOT_METHODS: [&str; 12] = [
    "if", "for", "while", "switch", "catch", "return", "function", "new", "await", "typeof",
    "super", "this",
];

fn scan_js(lines: &[&str]) -> Vec<Def> {
    let comment = in_block_comment(lines, true);
    let mut defs = Vec::new();
    let mut class: Option<Option<&str>> = None;
    for (i, line) in lines.iter().enumerate() {
        if comment[i] || is_blank(line) {
            continue;
        }
        let indent = indent_of(line);
        let trimmed = line.trim_start();
        if is_comment_line(trimmed) {
            continue;
        }
        if indent.is_empty() {
            class = None;
            if JS_TOP.is_match(line) {
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, true),
                });
                if JS_CLASS.is_match(line) && !line.trim_end().ends_with('}') {
                    class = Some(None);
                }
            }
            continue;
        }
        if let Some(body) = class {
            let body = match body {
                Some(body) => body,
                None => {
                    class = Some(Some(indent));
                    indent
                }
            };
            if indent != body {
                continue;
            }
            if let Some(c) = JS_METHOD.captures(trimmed) {
                let name = c.get(1).map_or("", |m| m.as_str());
                if !JS_NOT_METHODS.contains(&name) {
                    defs.push(Def {
                        line: i + 1,
                        member: true,
                        sig: sig(line, true),
                    });
                }
            }
        }
    }
    defs
}

// ---------------------------------------------------------------- Java

static JAVA_TYPE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:(?:public|protected|private|abstract|final|static|sealed|non-sealed|strictfp)\s+)*(?:class|interface|enum|record|@interface)\s+(\w+)",
    )
});
static JAVA_METHOD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"^(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp)\s+)*",
        r"(?:<[^>]+>\s+)?",
        r"([\w.$]+(?:\s*<[^()]*>)?(?:\s*\[\])*\s+)?",
        r"([\w$]+)\s*\(",
    ))
});
const JAVA_NOT_METHODS: [&str; 12] = [
    "return", "new", "throw", "if", "else", "for", "while", "switch", "catch", "try", "case",
    "yield",
];

fn scan_java(lines: &[&str]) -> Vec<Def> {
    let comment = in_block_comment(lines, true);
    let mut defs = Vec::new();
    // Inside a top-level type: its name and the indentation of its body.
    let mut container: Option<(String, Option<&str>)> = None;
    for (i, line) in lines.iter().enumerate() {
        if comment[i] || is_blank(line) {
            continue;
        }
        let indent = indent_of(line);
        let trimmed = line.trim_start();
        let annotation = trimmed.starts_with('@') && !trimmed.starts_with("@interface");
        if is_comment_line(trimmed) || annotation {
            continue;
        }
        if indent.is_empty() {
            container = None;
            if let Some(c) = JAVA_TYPE.captures(line) {
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, true),
                });
                let name = c.get(1).map_or("", |m| m.as_str()).to_string();
                if !line.trim_end().ends_with('}') {
                    container = Some((name, None));
                }
            }
            continue;
        }
        let Some((name, body)) = &mut container else {
            continue;
        };
        let body = *body.get_or_insert(indent);
        if indent != body {
            continue;
        }
        if JAVA_TYPE.is_match(trimmed) {
            defs.push(Def {
                line: i + 1,
                member: true,
                sig: sig(line, true),
            });
        } else if let Some(c) = JAVA_METHOD.captures(trimmed) {
            let has_type = c.get(1).is_some_and(|t| {
                let t = t.as_str().trim();
                !JAVA_NOT_METHODS.contains(&t)
            });
            let method = c.get(2).map_or("", |m| m.as_str());
            // Without a return type it is a constructor only if it bears the
            // type's name (otherwise: an enum constant, a call, ...).
            let is_decl = if c.get(1).is_some() {
                has_type
            } else {
                method == name.as_str()
            };
            if is_decl && !JAVA_NOT_METHODS.contains(&method) && !trimmed.contains(" = ") {
                defs.push(Def {
                    line: i + 1,
                    member: true,
                    sig: sig(line, true),
                });
            }
        }
    }
    defs
}

// ---------------------------------------------------------------- C / C++

static C_DEFINE: LazyLock<Regex> = LazyLock::new(|| re(r"^#\s*define\s+(\w+)(.*)$"));
static C_IFNDEF: LazyLock<Regex> = LazyLock::new(|| re(r"^#\s*ifndef\s+(\w+)"));
static C_TYPE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:typedef\b|namespace\b|(?:(?:struct|enum|union|class)\b))"));
static C_FORWARD: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:struct|enum|union|class)\s+[\w:]+\s*;\s*$"));
/// What comes before the '(' of a function: optional words and pointer
/// marks, then the name (possibly qualified, a destructor, an operator).
static C_FN_HEAD: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[A-Za-z_~][\w\s\*&:<>,~\[\]]*?(?:[\w~]+|operator\s*\S+)\s*$"));
/// A declaration has at least a type before the name.
static C_HAS_TYPE: LazyLock<Regex> = LazyLock::new(|| re(r"[\w>\*&]\s*[\s\*&]\s*[\w~:]+\s*$"));
const C_NOT_FUNCTIONS: [&str; 14] = [
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "return",
    "case",
    "default",
    "goto",
    "sizeof",
    "template",
    "using",
    "static_assert",
];

fn scan_c(lines: &[&str], header: bool) -> Vec<Def> {
    let comment = in_block_comment(lines, true);
    let mut defs = Vec::new();
    let mut guard: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        if comment[i] || is_blank(line) || !indent_of(line).is_empty() {
            continue;
        }
        if is_comment_line(line) {
            continue;
        }
        if let Some(c) = C_IFNDEF.captures(line) {
            guard = c.get(1).map(|m| m.as_str());
            continue;
        }
        if let Some(c) = C_DEFINE.captures(line) {
            let name = c.get(1).map(|m| m.as_str());
            let value = c.get(2).map_or("", |m| m.as_str().trim());
            let bare = value.is_empty() || value == "1";
            // `#ifndef X_H` / `#define X_H`: an include guard, not a macro.
            if !(bare && name == guard) {
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, false),
                });
            }
            guard = None;
            continue;
        }
        guard = None;
        if line.starts_with('#') {
            continue;
        }
        match c_function(lines, i, header) {
            Some(true) => {
                defs.push(Def {
                    line: i + 1,
                    member: false,
                    sig: sig(line, true),
                });
                continue;
            }
            Some(false) => continue,
            None => {}
        }
        if C_TYPE.is_match(line) && !C_FORWARD.is_match(line) {
            defs.push(Def {
                line: i + 1,
                member: false,
                sig: sig(line, true),
            });
        }
    }
    defs
}

/// Whether line `i` starts a function: Some(true) to show it (a definition,
/// or in a header a declaration with a return type), Some(false) for a
/// function-shaped line not to show, None when it is not function-shaped.
fn c_function(lines: &[&str], i: usize, header: bool) -> Option<bool> {
    let line = lines[i];
    let open = line.find('(')?;
    let head = &line[..open];
    if head.contains('=') || !C_FN_HEAD.is_match(head) {
        return None;
    }
    let first_word = head
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    if C_NOT_FUNCTIONS.contains(&first_word) {
        return Some(false);
    }
    // From the '(' on, across lines: balance the parentheses, then the
    // first '{' makes a definition, the first ';' a declaration.
    let mut depth = 0i32;
    let mut closed = false;
    for (n, l) in lines.iter().enumerate().skip(i).take(25) {
        let from = if n == i { open } else { 0 };
        for ch in l[from..].chars() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        closed = true;
                    }
                }
                '{' if closed || depth == 0 => return Some(true),
                ';' if depth == 0 => {
                    return Some(header && closed && C_HAS_TYPE.is_match(head));
                }
                _ => {}
            }
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn run(name: &str, text: &str) -> Result<String, ToolError> {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(name), text).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        outline(&ws, name)
    }

    #[test]
    fn all_patterns_compile() {
        for r in [
            &RUST_ITEM,
            &RUST_MACRO,
            &RUST_FN,
            &PY_DEF,
            &GO_TOP,
            &GO_TYPE_GROUP,
            &GO_GROUP_MEMBER,
            &JS_TOP,
            &JS_CLASS,
            &JS_METHOD,
            &JAVA_TYPE,
            &JAVA_METHOD,
            &C_DEFINE,
            &C_IFNDEF,
            &C_TYPE,
            &C_FORWARD,
            &C_FN_HEAD,
            &C_HAS_TYPE,
        ] {
            LazyLock::force(r);
        }
    }

    const RUST: &str = r#"//! A module.
use std::fmt;

/* A block comment:
fn not_this() {}
*/
#[derive(Debug)]
pub struct Point {
    x: i32,
}

pub(crate) enum Shape { Dot, Line }

impl Point {
    pub fn new(x: i32) -> Point {
        let s = "/* not a comment";
        Point { x }
    }

    fn helper(&self) {
        fn inner() {}
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.x)
    }
}

pub trait Area {
    fn area(&self) -> f64;
}

pub const MAX: usize = 10;
static mut COUNT: u32 = 0;
type Res<T> = Result<T, String>;

macro_rules! square {
    ($x:expr) => { $x * $x };
}

pub async fn run(input: &str) -> Res<()> {
    Ok(())
}

const fn k() -> u8 { 1 }
unsafe impl Send for Point {}

#[cfg(test)]
mod tests {
    fn not_shown() {}
}
"#;

    #[test]
    fn rust_exact() {
        let out = run("a.rs", RUST).unwrap();
        assert_eq!(
            out,
            "   8  pub struct Point
  12  pub(crate) enum Shape { Dot, Line }
  14  impl Point
  15    pub fn new(x: i32) -> Point
  20    fn helper(&self)
  25  impl fmt::Display for Point
  26    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result
  31  pub trait Area
  32    fn area(&self) -> f64;
  35  pub const MAX: usize = 10;
  36  static mut COUNT: u32 = 0;
  37  type Res<T> = Result<T, String>;
  39  macro_rules! square
  43  pub async fn run(input: &str) -> Res<()>
  47  const fn k() -> u8 { 1 }
  48  unsafe impl Send for Point {}
  51  mod tests
"
        );
    }

    const PYTHON: &str = r#""""Module docstring.

def not_a_function():
"""
import os

X = 1


@decorator
def top(a, b=2):
    def inner():
        pass
    return a


class Base(object):
    """A class.
def fake():
    """

    attr = 1

    def method(self, x):
        s = '#'
        return x

    @property
    async def prop(self):
        pass

    class Nested:
        def deep(self):
            pass
# a comment at column 0 inside the class

    def after_comment(self):
        pass


async def main():
    pass

class Empty: pass
"#;

    #[test]
    fn python_exact() {
        let out = run("m.py", PYTHON).unwrap();
        assert_eq!(
            out,
            "  11  def top(a, b=2):
  17  class Base(object):
  24    def method(self, x):
  29    async def prop(self):
  32    class Nested:
  37    def after_comment(self):
  41  async def main():
  44  class Empty: pass
"
        );
    }

    #[test]
    fn go_sample() {
        let text = "package main\n\nimport \"fmt\"\n\ntype Point struct {\n\tX int\n}\n\ntype (\n\tA int\n\tB string\n)\n\nfunc (p *Point) Move(dx int) {\n\tp.X += dx\n}\n\nfunc main() {\n\tfmt.Println(1)\n}\n";
        assert_eq!(
            run("main.go", text).unwrap(),
            "   5  type Point struct\n   9  type (\n  10    A int\n  11    B string\n  14  func (p *Point) Move(dx int)\n  18  func main()\n"
        );
    }

    #[test]
    fn js_ts_sample() {
        let text = r#"import x from "y";

export function a(b) {
  return b;
}

const add = (x, y) => x + y;
const notFn = 3;
async function load() {}

export default class Widget extends Base {
  #count = 0;
  constructor(props) {
    super(props);
    if (x) {
    }
  }

  static create() {}
  async render() {
    return this.count;
  }
  handle = (e) => {
  };
}

interface Props {
  name: string;
}
type Id = string | number;
export const API = "/*";
module.exports = { a };
"#;
        assert_eq!(
            run("w.tsx", text).unwrap(),
            "   3  export function a(b)
   7  const add = (x, y) => x + y;
   9  async function load() {}
  11  export default class Widget extends Base
  13    constructor(props)
  19    static create() {}
  20    async render()
  23    handle = (e) =>
  27  interface Props
  30  type Id = string | number;
  31  export const API = \"/*\";
  32  module.exports = { a };
"
        );
    }

    #[test]
    fn java_sample() {
        let text = r#"package a.b;

import java.util.List;

/**
 * class NotThis {
 */
public class Shop<T> {
    private final List<T> items = new ArrayList<>();
    private int count;

    public Shop(int count) {
        this.count = count;
    }

    @Override
    public String toString() {
        return helper(count);
    }

    static <U> List<U> wrap(U u) {
        return List.of(u);
    }

    public enum Kind {
        SMALL("s"),
        BIG("b");
    }

    abstract void run();
}

interface Runner {
    void go();
}

enum Color { RED, GREEN }

record Pair(int a, int b) {}
"#;
        assert_eq!(
            run("Shop.java", text).unwrap(),
            "   8  public class Shop<T>
  12    public Shop(int count)
  17    public String toString()
  21    static <U> List<U> wrap(U u)
  25    public enum Kind
  30    abstract void run();
  33  interface Runner
  34    void go();
  37  enum Color { RED, GREEN }
  39  record Pair(int a, int b) {}
"
        );
    }

    #[test]
    fn c_sample() {
        let text = r#"#ifndef SHAPES_H
#define SHAPES_H
#include <stdio.h>

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* int commented_out(void) {
} */
struct point {
    int x;
};
struct later;

typedef struct point point_t;

enum color { RED, GREEN };

static int add(int a,
               int b)
{
    return a + b;
}

int
gnu_style(void)
{
    if (x) {
        foo(1);
    }
    return 0;
}

void declared(int x);

int main(int argc, char **argv) {
    return add(1, 2);
}
#endif
"#;
        assert_eq!(
            run("shapes.c", text).unwrap(),
            "   5  #define MAX(a, b) ((a) > (b) ? (a) : (b))
   9  struct point
  14  typedef struct point point_t;
  16  enum color { RED, GREEN };
  18  static int add(int a,
  25  gnu_style(void)
  35  int main(int argc, char **argv)
"
        );
        // In a header, declarations with a return type count.
        let header = "#ifndef A_H\n#define A_H 1\nvoid declared(int x);\nFOO(bar);\nclass Widget {\n public:\n  void m();\n};\nextern int f (int *__p) __THROW __nonnull ((1));\n#endif\n";
        assert_eq!(
            run("a.hpp", header).unwrap(),
            "   3  void declared(int x);\n   5  class Widget\n   9  extern int f (int *__p) __THROW __nonnull ((1));\n"
        );
    }

    #[test]
    fn errors_and_empty() {
        let err = run("notes.txt", "hello\n").unwrap_err().to_string();
        assert!(
            err.starts_with("outline does not know the language of notes.txt"),
            "{err}"
        );
        assert!(
            err.contains("Rust (.rs)") && err.contains("fs-read or index-grep"),
            "{err}"
        );
        assert_eq!(
            run("empty.py", "import os\n\nx = 1\n").unwrap(),
            "no top-level definitions found in empty.py\n"
        );
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let err = outline(&ws, "missing.rs").unwrap_err().to_string();
        assert!(err.starts_with("no such file: missing.rs"), "{err}");
        let err = outline(&ws, "../x.rs").unwrap_err().to_string();
        assert!(err.contains("outside the workspace"), "{err}");
        fs::write(dir.path().join("bin.rs"), b"fn a\0").unwrap();
        let err = outline(&ws, "bin.rs").unwrap_err();
        assert_eq!(err.kind(), "not_text");
        assert!(err.to_string().contains("binary"));
    }

    #[test]
    fn long_signature_is_cut_and_width_grows() {
        let mut text = "\n".repeat(12345);
        text.push_str(&format!("fn f({}) {{}}\n", "a: u8, ".repeat(40)));
        let out = run("long.rs", &text).unwrap();
        assert!(out.starts_with("12346  fn f(a: u8, "), "{out}");
        assert!(out.ends_with("…\n"), "{out}");
        assert_eq!(out.trim_end().chars().count(), 5 + 2 + 160 + 1);
    }
}
