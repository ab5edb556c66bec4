//! The nesting limit on Scheme source: steel's reader and compiler recurse
//! once per open bracket and once per quote prefix (`'`, `` ` ``, `,`,
//! `,@`, `#'`), so 10,000 nested lists or as many quote prefixes in a row
//! overflow the stack and abort the process. Source is scanned here before
//! steel sees it, and nesting beyond `MAX_NESTING` is a clear error instead.

use super::error::{EngineError, ErrorKind};

/// How deeply brackets may nest in Scheme source: far beyond any real
/// strategy, far below what overflows steel's stack.
pub(crate) const MAX_NESTING: usize = 512;

/// Refuses source whose brackets (`(`, `[`, `{`) and quote prefixes nest
/// deeper than `MAX_NESTING`, skipping strings, `;` comments, `#| |#`
/// block comments and character literals such as `#\(`.
pub(crate) fn check(source: &str, name: &str) -> Result<(), EngineError> {
    let bytes = source.as_bytes();
    // What each open bracket added to the depth: itself and the quote
    // prefixes before it.
    let mut open: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut prefixes = 0usize;
    let mut line = 1usize;
    let mut i = 0;
    let too_deep = |line: usize| {
        EngineError::new(
            ErrorKind::Scheme,
            format!(
                "{name}:{line}: brackets and quotes nest more than {MAX_NESTING} deep; nib refuses such source before reading it (it would overflow the reader's stack) — flatten the data or build it with a loop"
            ),
        )
    };
    while i < bytes.len() {
        let c = bytes[i];
        let is_prefix = matches!(c, b'\'' | b'`' | b',')
            || (c == b'#' && matches!(bytes.get(i + 1), Some(b'\'' | b'`' | b',')));
        if is_prefix {
            prefixes += 1;
            if depth + prefixes > MAX_NESTING {
                return Err(too_deep(line));
            }
            let two = c == b'#' || (c == b',' && bytes.get(i + 1) == Some(&b'@'));
            i += if two { 2 } else { 1 };
            continue;
        }
        if !c.is_ascii_whitespace() && !matches!(c, b'(' | b'[' | b'{' | b';') {
            prefixes = 0;
        }
        match c {
            b'\n' => line += 1,
            b'(' | b'[' | b'{' => {
                let weight = 1 + std::mem::take(&mut prefixes);
                open.push(weight);
                depth += weight;
                if depth > MAX_NESTING {
                    return Err(too_deep(line));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(open.pop().unwrap_or(1)),
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    if bytes.get(i) == Some(&b'\n') {
                        line += 1;
                    }
                    i += 1;
                }
            }
            b'#' if bytes[i..].starts_with(b"#%prim.") => {
                return Err(EngineError::new(
                    ErrorKind::Refused,
                    format!(
                        "{name}:{line}: `#%prim.` names are steel's internals, which skip nib's limits; call the procedure by its own name"
                    ),
                ));
            }
            b'#' if bytes.get(i + 1) == Some(&b'\\') => i += 2,
            b'#' if bytes.get(i + 1) == Some(&b'|') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'|' && bytes[i + 1] == b'#') {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_source_is_refused_and_ordinary_source_passes() {
        let deep = format!("'{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        let err = check(&deep, "x.scm").unwrap_err();
        assert!(err.to_string().contains("nest more than 512"), "{err}");
        let vectors = format!("{}{}", "[".repeat(600), "]".repeat(600));
        assert!(check(&vectors, "x.scm").is_err());
        // Brackets in strings, comments and characters do not count.
        let quiet = format!(
            "(define s \"{}\") ; {}\n#| {} |# (list #\\( #\\()",
            "(".repeat(2000),
            "(".repeat(2000),
            "(".repeat(2000)
        );
        assert!(check(&quiet, "x.scm").is_ok());
        let ok = format!("{}1{}", "(".repeat(400), ")".repeat(400));
        assert!(check(&ok, "x.scm").is_ok());
        // Quote prefixes nest too: 10,000 in a row, or mixed with lists.
        let quotes = format!("{}x", "'".repeat(10_000));
        assert!(check(&quotes, "x.scm").is_err());
        let mixed = "'(".repeat(300) + &")".repeat(300);
        assert!(check(&mixed, "x.scm").is_err());
        // steel's internal names are refused; in a string they are text.
        assert!(check("(#%prim.expt 7 100000000)", "x.scm").is_err());
        assert!(check("(display \"#%prim.expt\")", "x.scm").is_ok());
        // Many quoted forms side by side are not nesting.
        let flat = "'a ".repeat(10_000) + &"`(b ,c ,@d) ".repeat(1000);
        assert!(check(&flat, "x.scm").is_ok());
    }
}
