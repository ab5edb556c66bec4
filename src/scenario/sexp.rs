//! A small S-expression reader for scenario files: strings with escapes,
//! symbols, integers, `#t`/`#f`, lists, dotted pairs and `;` comments. It
//! reads data only (nothing is evaluated), and every error names the line
//! and column where reading stopped.

use std::fmt;

/// Where a datum starts, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// One datum and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Sexp {
    pub pos: Pos,
    pub value: Datum,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    Str(String),
    Sym(String),
    Int(i64),
    Bool(bool),
    /// `(a b c)`, or with a tail `(a b . c)`.
    List(Vec<Sexp>, Option<Box<Sexp>>),
}

impl Sexp {
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Datum::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_sym(&self) -> Option<&str> {
        match &self.value {
            Datum::Sym(s) => Some(s),
            _ => None,
        }
    }

    /// The items of a proper list (no dotted tail).
    pub fn as_list(&self) -> Option<&[Sexp]> {
        match &self.value {
            Datum::List(items, None) => Some(items),
            _ => None,
        }
    }

    /// `(key . value)`: a pair with one item before the dot.
    pub fn as_pair(&self) -> Option<(&Sexp, &Sexp)> {
        match &self.value {
            Datum::List(items, Some(tail)) if items.len() == 1 => Some((&items[0], tail)),
            _ => None,
        }
    }

    /// What the datum is, for error messages.
    pub fn describe(&self) -> &'static str {
        match &self.value {
            Datum::Str(_) => "a string",
            Datum::Sym(_) => "a symbol",
            Datum::Int(_) => "an integer",
            Datum::Bool(_) => "a boolean",
            Datum::List(_, None) => "a list",
            Datum::List(_, Some(_)) => "a dotted pair",
        }
    }
}

/// Why the text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SexpError {
    pub pos: Pos,
    pub message: String,
}

impl fmt::Display for SexpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pos, self.message)
    }
}

impl std::error::Error for SexpError {}

/// Reads every datum in `text`.
pub fn read_all(text: &str) -> Result<Vec<Sexp>, SexpError> {
    let mut r = Reader {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
        col: 1,
        depth: 0,
    };
    let mut out = Vec::new();
    loop {
        r.skip_blank();
        if r.peek().is_none() {
            return Ok(out);
        }
        if r.peek() == Some(')') {
            return Err(r.error_here("a `)` closes nothing; remove it"));
        }
        out.push(r.datum()?);
    }
}

struct Reader {
    chars: Vec<char>,
    at: usize,
    line: usize,
    col: usize,
    /// Lists open around the reading position.
    depth: usize,
}

/// How deeply lists may nest in a scenario file. Far beyond any real
/// scenario, far below what would overflow the stack reading (or
/// dropping) the data.
const MAX_NESTING: usize = 256;

fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, '(' | ')' | '"' | ';')
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn error_here(&self, message: impl Into<String>) -> SexpError {
        SexpError {
            pos: self.pos(),
            message: message.into(),
        }
    }

    /// Whitespace and `;` comments.
    fn skip_blank(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.bump();
            } else if c == ';' {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    fn datum(&mut self) -> Result<Sexp, SexpError> {
        let pos = self.pos();
        let value = match self.peek() {
            None => return Err(self.error_here("the text ends where a value was expected")),
            Some('(') => {
                if self.depth >= MAX_NESTING {
                    return Err(self.error_here(format!(
                        "lists nest more than {MAX_NESTING} deep here; a scenario never needs that — flatten the data"
                    )));
                }
                self.depth += 1;
                let list = self.list(pos);
                self.depth -= 1;
                list?
            }
            Some('"') => Datum::Str(self.string(pos)?),
            Some('\'' | '`' | ',') => {
                return Err(self.error_here(
                    "quote marks are not used in scenario data: everything is already data; remove it",
                ));
            }
            Some(_) => self.atom(pos)?,
        };
        Ok(Sexp { pos, value })
    }

    fn list(&mut self, open: Pos) -> Result<Datum, SexpError> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            match self.peek() {
                None => {
                    return Err(SexpError {
                        pos: open,
                        message: "this `(` is never closed; add a `)`".into(),
                    });
                }
                Some(')') => {
                    self.bump();
                    return Ok(Datum::List(items, None));
                }
                Some('.') if self.dot_alone() => {
                    let dot = self.pos();
                    self.bump();
                    if items.is_empty() {
                        return Err(SexpError {
                            pos: dot,
                            message: "a `.` needs a value before it, as in (\"key\" . \"value\")"
                                .into(),
                        });
                    }
                    self.skip_blank();
                    let tail = self.datum()?;
                    self.skip_blank();
                    if self.peek() != Some(')') {
                        return Err(self
                            .error_here("a dotted pair takes one value after the `.`, then `)`"));
                    }
                    self.bump();
                    return Ok(Datum::List(items, Some(Box::new(tail))));
                }
                Some(_) => items.push(self.datum()?),
            }
        }
    }

    /// A `.` standing alone (followed by a delimiter), not the start of a symbol.
    fn dot_alone(&self) -> bool {
        self.chars.get(self.at + 1).is_none_or(|&c| is_delimiter(c))
    }

    fn string(&mut self, open: Pos) -> Result<String, SexpError> {
        self.bump();
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(SexpError {
                    pos: open,
                    message: "this string is never closed; add a `\"`".into(),
                });
            };
            match c {
                '"' => return Ok(out),
                '\\' => self.escape(&mut out)?,
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), SexpError> {
        let at = Pos {
            line: self.line,
            col: self.col - 1,
        };
        let bad = |message: String| SexpError { pos: at, message };
        match self.bump() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('a') => out.push('\u{7}'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('x') => {
                // R7RS: \x<hex>; names a code point.
                let mut hex = String::new();
                loop {
                    match self.bump() {
                        Some(';') => break,
                        Some(c) if c.is_ascii_hexdigit() && hex.len() < 6 => hex.push(c),
                        _ => {
                            return Err(bad(
                                "a \\x escape is hex digits ended by `;`, as in \\x200B;".into(),
                            ));
                        }
                    }
                }
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| bad(format!("\\x{hex}; is not a Unicode scalar value")))?;
                out.push(code);
            }
            Some(c) if c == '\n' || (c.is_whitespace() && self.rest_of_line_blank()) => {
                // A backslash ending the line continues the string on the
                // next one, without the line break and the indentation.
                if c != '\n' {
                    while self.bump().is_some_and(|c| c != '\n') {}
                }
                while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
                    self.bump();
                }
            }
            Some(c) => {
                return Err(bad(format!(
                    "unknown escape \\{c}; use \\n \\t \\r \\\\ \\\" or \\x<hex>;"
                )));
            }
            None => return Err(bad("the text ends inside an escape".into())),
        }
        Ok(())
    }

    fn rest_of_line_blank(&self) -> bool {
        self.chars[self.at..]
            .iter()
            .take_while(|&&c| c != '\n')
            .all(|c| c.is_whitespace())
    }

    fn atom(&mut self, pos: Pos) -> Result<Datum, SexpError> {
        let mut word = String::new();
        while let Some(c) = self.peek() {
            if is_delimiter(c) {
                break;
            }
            word.push(c);
            self.bump();
        }
        if let Some(rest) = word.strip_prefix('#') {
            return match rest {
                "t" | "true" => Ok(Datum::Bool(true)),
                "f" | "false" => Ok(Datum::Bool(false)),
                _ => Err(SexpError {
                    pos,
                    message: format!("`{word}` is not #t or #f"),
                }),
            };
        }
        let digits = word.strip_prefix(['-', '+']).unwrap_or(&word);
        if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
            return word.parse::<i64>().map(Datum::Int).map_err(|_| SexpError {
                pos,
                message: format!("{word} does not fit in a 64-bit integer"),
            });
        }
        Ok(Datum::Sym(word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_basics() {
        let v = read_all("(a \"s\\n\" 12 -3 #t #f (\"k\" . \"v\")) ; note\n").unwrap();
        assert_eq!(v.len(), 1);
        let items = v[0].as_list().unwrap();
        assert_eq!(items[0].as_sym(), Some("a"));
        assert_eq!(items[1].as_str(), Some("s\n"));
        assert_eq!(items[2].value, Datum::Int(12));
        assert_eq!(items[3].value, Datum::Int(-3));
        assert_eq!(items[4].value, Datum::Bool(true));
        assert_eq!(items[5].value, Datum::Bool(false));
        let (k, val) = items[6].as_pair().unwrap();
        assert_eq!((k.as_str(), val.as_str()), (Some("k"), Some("v")));
        assert_eq!(items[6].pos, Pos { line: 1, col: 22 });
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        for depth in [10_000, 50_000] {
            let text = format!("{}x{}", "(".repeat(depth), ")".repeat(depth));
            let err = read_all(&text).unwrap_err();
            assert!(err.to_string().contains("nest more than 256"), "{err}");
        }
        let ok = format!("{}x{}", "(".repeat(200), ")".repeat(200));
        assert!(read_all(&ok).is_ok());
    }
}
