//! Output as a reader sees it: what a command prints is normalized before
//! the redactor looks, so a secret spelled with invisible or look-alike
//! characters between its letters (a zero-width space, a soft hyphen, a
//! terminal escape, Unicode tag characters, full-width letters) is the
//! secret again and gets redacted. Nothing a model needs is lost: these
//! characters carry no text of their own.

use std::borrow::Cow;

/// `text` with terminal escapes, control characters (but tab and line
/// ends) and invisible format characters removed, and tag and full-width
/// forms of ASCII folded to ASCII. Borrowed when there is nothing to do.
pub fn visible(text: &str) -> Cow<'_, str> {
    let plain = text
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) || matches!(b, b'\n' | b'\t' | b'\r'));
    if plain {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\n' | '\t' | '\r' => out.push(c),
            c if c.is_control() => {}
            '\u{ad}'
            | '\u{34f}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}' => {}
            '\u{e0020}'..='\u{e007e}' => out.push(char::from(((c as u32) - 0xe0000) as u8)),
            '\u{e0000}'..='\u{e007f}' => {}
            '\u{ff01}'..='\u{ff5e}' => out.push(char::from(((c as u32) - 0xff01 + 0x21) as u8)),
            '\u{3000}' => out.push(' '),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Skips one terminal escape after its ESC: a CSI (`ESC [ … final`), an
/// OSC or string (`ESC ] … BEL` or `ESC \`), or a two-character one.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_spellings_of_a_token_read_as_the_token() {
        let token = "ghp_Zq8vL2mWx9";
        let spaced: String = token.chars().flat_map(|c| [c, '\u{200b}']).collect();
        let tagged: String = token
            .chars()
            .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
            .collect();
        let wide: String = token
            .chars()
            .map(|c| char::from_u32(c as u32 - 0x21 + 0xff01).unwrap())
            .collect();
        let escaped = "ghp_\u{1b}[0mZq8v\u{1b}]0;title\u{7}L2mW\u{8}\u{7f}x9";
        for hidden in [spaced, tagged, wide, escaped.to_string()] {
            assert_eq!(visible(&hidden), token, "{hidden:?}");
        }
        let ordinary = "naïve café — 日本語\tok\n";
        assert_eq!(visible(ordinary), ordinary);
        assert!(matches!(visible("plain ascii\n"), Cow::Borrowed(_)));
    }
}
