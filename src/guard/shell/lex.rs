//! Lexing for the shell analysis: command text → words (quotes removed,
//! substitutions recorded), separators, redirections with their targets and
//! here-document bodies, grouped into simple commands.

#[derive(Debug, Clone, Default)]
pub(super) struct Word {
    /// The word with quotes removed; substitutions kept as written.
    pub(super) text: String,
    pub(super) quoted: bool,
    pub(super) ansi_c: bool,
    pub(super) substitutions: Vec<Substitution>,
    /// Byte offsets in `text` of the `$` signs the shell takes literally
    /// (single-quoted, `$'…'`, escaped `\$`): `sed -n '$p'` and `perl -e
    /// 'print $_'` name no variable.
    pub(super) literal_dollars: Vec<usize>,
}

impl Word {
    /// Variables that only ever appear taken literally in this word
    /// (every `$NAME` of theirs quoted or escaped): not the shell's to
    /// expand.
    pub(super) fn literal_variables(&self) -> Vec<&str> {
        let refs = variable_refs(&self.text);
        let live = variable_refs_except(&self.text, &self.literal_dollars);
        let mut out: Vec<&str> = refs
            .into_iter()
            .map(|(name, _)| name)
            .filter(|name| !live.iter().any(|(n, _)| n == name))
            .collect();
        out.dedup();
        out
    }

    /// Appends text whose every `$` is literal.
    fn push_literal(&mut self, text: &str) {
        let base = self.text.len();
        self.literal_dollars
            .extend(text.match_indices('$').map(|(i, _)| base + i));
        self.text.push_str(text);
    }
}

/// `$NAME` and `${NAME…}` references in a word: (name, byte offset of
/// `$`). `${!NAME}` (indirection) counts as a reference to NAME. See
/// `expand::modified_at` for `${NAME:-text}` and the like.
pub(super) fn variable_refs(word: &str) -> Vec<(&str, usize)> {
    variable_refs_except(word, &[])
}

/// [`variable_refs`] leaving out the `$` signs at the byte offsets in
/// `literal` (quoted or escaped ones, which expand nothing).
pub(super) fn variable_refs_except<'w>(word: &'w str, literal: &[usize]) -> Vec<(&'w str, usize)> {
    let bytes = word.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' || literal.contains(&i) {
            i += 1;
            continue;
        }
        let start = match (bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(b'{'), Some(b'!')) => i + 3,
            (Some(b'{'), _) => i + 2,
            _ => i + 1,
        };
        let len = word[start..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if len > 0 && !bytes[start].is_ascii_digit() {
            out.push((&word[start..start + len], i));
        }
        // A `$` naming nothing (`$$`, the pid, or a quoted `'$'` before
        // `$F`) does not hide the one after it: `$$F` counts as `$F`,
        // which errs on the side of a finding.
        i = if len > 0 { start + len } else { i + 1 };
    }
    out
}

/// `NAME=value`: an assignment word (shared by the program lookup, which
/// skips assignments before the program, and the variable tracking).
pub(super) fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

#[derive(Debug, Clone)]
pub(super) struct Substitution {
    pub(super) kind: SubstKind,
    pub(super) inner: String,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum SubstKind {
    Command,
    Process,
    /// A `${…}` default holding a substitution: analyzed, not reported.
    Expansion,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sep {
    And,
    Or,
    Semi,
    Pipe,
    Newline,
    Background,
    Group,
}

#[derive(Debug, Clone)]
pub(super) struct Redirect {
    pub(super) op: &'static str,
    pub(super) target: Option<Word>,
    /// A here-document's text.
    pub(super) body: Option<String>,
    /// The here-document's delimiter was unquoted: `$(…)` in it runs.
    pub(super) body_expands: bool,
}

#[derive(Debug, Clone)]
pub(super) enum Token {
    Word(Word),
    Sep(Sep),
    Redirect(Redirect),
}

pub(super) struct Lexed {
    pub(super) tokens: Vec<Token>,
    pub(super) error: Option<String>,
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    tokens: Vec<Token>,
    word: Option<Word>,
    /// Here-documents whose bodies start after the current line:
    /// (token index of the redirection, strip leading tabs).
    pending: Vec<(usize, bool)>,
    error: Option<String>,
}

pub(super) fn lex(command: &str) -> Lexed {
    let mut lx = Lexer {
        chars: command.chars().collect(),
        pos: 0,
        tokens: Vec::new(),
        word: None,
        pending: Vec::new(),
        error: None,
    };
    lx.run();
    Lexed {
        tokens: lx.tokens,
        error: lx.error,
    }
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    fn finish_word(&mut self) {
        if let Some(w) = self.word.take() {
            self.tokens.push(Token::Word(w));
        }
    }

    fn sep(&mut self, sep: Sep, len: usize) {
        self.finish_word();
        self.tokens.push(Token::Sep(sep));
        self.pos += len;
    }

    fn fail(&mut self, message: &str) {
        if self.error.is_none() {
            self.error = Some(message.to_string());
        }
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => {
                    self.finish_word();
                    self.pos += 1;
                }
                '\n' => {
                    self.sep(Sep::Newline, 1);
                    self.heredoc_bodies();
                }
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\\' => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(next) => self.word().push_literal(next.encode_utf8(&mut [0; 4])),
                        None => self.word().text.push('\\'),
                    }
                    self.pos += 2;
                }
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '$' => self.dollar(),
                '`' => self.backtick(),
                '|' => match self.peek(1) {
                    Some('|') => self.sep(Sep::Or, 2),
                    Some('&') => self.sep(Sep::Pipe, 2),
                    _ => self.sep(Sep::Pipe, 1),
                },
                '&' => match self.peek(1) {
                    Some('&') => self.sep(Sep::And, 2),
                    Some('>') => {
                        self.finish_word();
                        self.pos += 1;
                        self.redirection();
                    }
                    _ => self.sep(Sep::Background, 1),
                },
                ';' => self.sep(Sep::Semi, if self.peek(1) == Some(';') { 2 } else { 1 }),
                '(' if self.word.is_none() => self.sep(Sep::Group, 1),
                ')' => self.sep(Sep::Group, 1),
                '<' | '>' => {
                    if self.peek(1) == Some('(') {
                        self.process_substitution();
                    } else {
                        // `2>file`: the digits are a file descriptor
                        if self.word.as_ref().is_some_and(|w| {
                            !w.quoted
                                && !w.text.is_empty()
                                && w.text.chars().all(|c| c.is_ascii_digit())
                        }) {
                            self.word = None;
                        }
                        self.finish_word();
                        self.redirection();
                    }
                }
                _ => {
                    self.word().text.push(c);
                    self.pos += 1;
                }
            }
        }
        self.finish_word();
        if !self.pending.is_empty() {
            self.fail("a here-document has no body");
        }
    }

    fn single_quoted(&mut self) {
        self.pos += 1;
        let start = self.pos;
        while self.peek(0).is_some_and(|c| c != '\'') {
            self.pos += 1;
        }
        if self.peek(0).is_none() {
            self.fail("unterminated single quote");
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        let w = self.word();
        w.push_literal(&text);
        w.quoted = true;
        self.pos += 1;
    }

    fn double_quoted(&mut self) {
        self.pos += 1;
        self.word().quoted = true;
        loop {
            match self.peek(0) {
                None => {
                    self.fail("unterminated double quote");
                    return;
                }
                Some('"') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some('$') => self.word().push_literal("$"),
                        Some(c @ ('`' | '"' | '\\')) => self.word().text.push(c),
                        Some(c) => {
                            let w = self.word();
                            w.text.push('\\');
                            w.text.push(c);
                        }
                        None => {}
                    }
                    self.pos += 2;
                }
                Some('$') => self.dollar(),
                Some('`') => self.backtick(),
                Some(c) => {
                    self.word().text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `$(…)`, `$((…))`, `${…}`, `$'…'`, or a plain `$NAME`.
    fn dollar(&mut self) {
        match (self.peek(1), self.peek(2)) {
            (Some('('), Some('(')) => {
                self.pos += 3;
                let inner = self.until_close(2);
                // Arithmetic is plain unless it hides a substitution.
                if inner.contains("$(") || inner.contains('`') {
                    self.push_substitution(SubstKind::Command, inner.clone());
                }
                self.word().text.push_str(&format!("$(({inner}))"));
            }
            (Some('('), _) => {
                self.pos += 2;
                let inner = self.until_close(1);
                self.word().text.push_str(&format!("$({inner})"));
                self.push_substitution(SubstKind::Command, inner);
            }
            (Some('{'), _) => {
                self.pos += 2;
                let start = self.pos;
                let mut depth = 1;
                while let Some(c) = self.peek(0) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
                if self.peek(0).is_none() {
                    self.fail("unterminated ${");
                }
                let inner: String = self.chars[start..self.pos].iter().collect();
                self.pos += 1;
                if inner.contains("$(") || inner.contains('`') {
                    // `${x:-$(cmd)}`: analyze the default as a command line
                    let default = inner
                        .split_once(['-', '=', '+', '?'])
                        .map_or("", |(_, d)| d);
                    let default = default.trim_start_matches(['-', '=', '+', '?']).to_string();
                    self.push_substitution(SubstKind::Expansion, default);
                }
                self.word().text.push_str(&format!("${{{inner}}}"));
            }
            (Some('\''), _) => {
                self.pos += 2;
                let start = self.pos;
                while let Some(c) = self.peek(0) {
                    if c == '\\' {
                        self.pos += 2;
                        continue;
                    }
                    if c == '\'' {
                        break;
                    }
                    self.pos += 1;
                }
                if self.peek(0).is_none() {
                    self.fail("unterminated $' quote");
                }
                let end = self.pos.min(self.chars.len());
                let text: String = self.chars[start..end].iter().collect();
                self.pos += 1;
                let w = self.word();
                w.push_literal(&text);
                w.quoted = true;
                w.ansi_c = true;
            }
            _ => {
                self.word().text.push('$');
                self.pos += 1;
            }
        }
    }

    fn backtick(&mut self) {
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek(0) {
                None => {
                    self.fail("unterminated backtick");
                    break;
                }
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    if let Some(c) = self.peek(1) {
                        if !matches!(c, '`' | '\\' | '$') {
                            inner.push('\\');
                        }
                        inner.push(c);
                    }
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        self.word().text.push_str(&format!("`{inner}`"));
        self.push_substitution(SubstKind::Command, inner);
    }

    fn process_substitution(&mut self) {
        let open = self.peek(0).unwrap_or('<');
        self.pos += 2;
        let inner = self.until_close(1);
        let w = self.word();
        w.text.push_str(&format!("{open}({inner})"));
        self.push_substitution(SubstKind::Process, inner);
    }

    fn push_substitution(&mut self, kind: SubstKind, inner: String) {
        self.word().substitutions.push(Substitution { kind, inner });
    }

    /// The text up to `closers` unbalanced `)`, quotes respected; the
    /// position ends after them.
    fn until_close(&mut self, closers: usize) -> String {
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => {
                    self.pos += 2;
                    continue;
                }
                '\'' => {
                    self.pos += 1;
                    while self.peek(0).is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        if c == '\\' {
                            self.pos += 1;
                        } else if c == '"' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                '(' => depth += 1,
                ')' => {
                    if depth == 0 {
                        let end = self.pos;
                        let mut closed = 0;
                        while closed < closers && self.peek(0) == Some(')') {
                            self.pos += 1;
                            closed += 1;
                        }
                        if closed < closers {
                            // `$((a) )`-like oddities: keep going
                            depth = 0;
                            continue;
                        }
                        return self.chars[start..end].iter().collect();
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.pos += 1;
        }
        self.fail("unterminated substitution");
        let end = self.pos.min(self.chars.len());
        self.chars[start..end].iter().collect()
    }

    /// At `<` or `>`: read the operator, then the target word follows.
    fn redirection(&mut self) {
        let rest: String = self.chars[self.pos..self.chars.len().min(self.pos + 3)]
            .iter()
            .collect();
        let ops = ["<<<", "<<-", ">>", "<<", ">&", "<&", ">|", "<>", ">", "<"];
        let op = ops
            .iter()
            .find(|op| rest.starts_with(**op))
            .copied()
            .unwrap_or(">");
        self.pos += op.len();
        self.tokens.push(Token::Redirect(Redirect {
            op,
            target: None,
            body: None,
            body_expands: false,
        }));
        if op == "<<" || op == "<<-" {
            self.pending.push((self.tokens.len() - 1, op == "<<-"));
        }
    }

    /// After a newline: read the bodies of the line's here-documents.
    fn heredoc_bodies(&mut self) {
        for (index, strip_tabs) in std::mem::take(&mut self.pending) {
            let delimiter = match self.tokens.get(index + 1) {
                Some(Token::Word(w)) => (w.text.clone(), w.quoted),
                _ => {
                    self.fail("a here-document has no delimiter");
                    continue;
                }
            };
            let mut body = String::new();
            let mut closed = false;
            while self.pos < self.chars.len() {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |n| self.pos + n);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len().max(end));
                let candidate = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if candidate == delimiter.0 {
                    closed = true;
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if !closed {
                self.fail("a here-document is not closed by its delimiter");
            }
            if let Some(Token::Redirect(r)) = self.tokens.get_mut(index) {
                r.body = Some(body);
                r.body_expands = !delimiter.1;
            }
        }
    }
}

/// One simple command.
#[derive(Debug, Default)]
pub(super) struct Segment {
    pub(super) words: Vec<Word>,
    pub(super) redirects: Vec<Redirect>,
    pub(super) piped_in: bool,
    pub(super) piped_out: bool,
}

pub(super) fn segments(tokens: Vec<Token>) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut cur = Segment::default();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            Token::Word(w) if matches!(w.text.as_str(), "{" | "}") && !w.quoted => {
                close(&mut out, &mut cur, None);
            }
            Token::Word(w) => cur.words.push(w),
            Token::Redirect(mut r) => {
                if let Some(Token::Word(_)) = tokens.peek()
                    && let Some(Token::Word(w)) = tokens.next()
                {
                    r.target = Some(w);
                }
                cur.redirects.push(r);
            }
            Token::Sep(sep) => close(&mut out, &mut cur, Some(sep)),
        }
    }
    close(&mut out, &mut cur, None);
    out
}

fn close(out: &mut Vec<Segment>, cur: &mut Segment, sep: Option<Sep>) {
    let piped = sep == Some(Sep::Pipe);
    if cur.words.is_empty() && cur.redirects.is_empty() {
        // `(a; b) | sh`: the group's last command feeds the pipe
        if piped {
            if let Some(last) = out.last_mut() {
                last.piped_out = true;
            }
            cur.piped_in = true;
        }
        return;
    }
    cur.piped_out = piped;
    let next = Segment {
        piped_in: piped,
        ..Segment::default()
    };
    out.push(std::mem::replace(cur, next));
}
