//! The nesting limit on Scheme source: steel's reader and compiler recurse
//! once per open bracket, so 10,000 nested lists overflow the stack and
//! abort the process. Source is scanned here before steel sees it, and
//! nesting beyond `MAX_NESTING` is a clear error instead.

use super::error::{EngineError, ErrorKind};

/// How deeply brackets may nest in Scheme source: far beyond any real
/// strategy, far below what overflows steel's stack.
pub(crate) const MAX_NESTING: usize = 512;

/// Refuses source whose brackets (`(`, `[`, `{`) nest deeper than
/// `MAX_NESTING`, skipping strings, `;` comments, `#| |#` block comments
/// and character literals such as `#\(`.
pub(crate) fn check(source: &str, name: &str) -> Result<(), EngineError> {
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let mut line = 1usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(EngineError::new(
                        ErrorKind::Scheme,
                        format!(
                            "{name}:{line}: brackets nest more than {MAX_NESTING} deep; nib refuses such source before reading it (it would overflow the reader's stack) — flatten the data or build it with a loop"
                        ),
                    ));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
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
    }
}
