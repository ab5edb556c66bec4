//! Token counts estimated from text, for servers that report none, and the
//! short form people see (`1.2k`, `~1.2k` when estimated).
//!
//! # The estimator
//!
//! No tokenizer ships with nib (each model has its own), so the count is a
//! rule of thumb shaped like byte-pair encodings of English and code:
//!
//! - a run of ASCII letters is one token per started 6 letters (common
//!   words are one token; `configuration` is three);
//! - a run of digits is one token per started 3 digits (tokenizers cut
//!   numbers into groups of up to three);
//! - each other ASCII symbol is one token, except that two in a row (`->`,
//!   `();`) share one (frequent pairs are single tokens);
//! - a single space is free (it joins the next word); longer runs of
//!   spaces or tabs are one token per started 4; each line break is one;
//! - every other character (accents, CJK, emoji) is one token.
//!
//! A request adds 4 tokens per message and the tools' JSON schemas as text
//! ([`request_tokens`]), those only when the body sent carried them
//! ([`carried_tokens`]). On nib's own files this gives 3.0 characters a
//! token for Rust, 3.2–3.5 for Markdown; byte-pair tokenizers of current
//! models usually take 3–4.5, so the estimate errs high, which is the safe
//! side for a budget. The result is meant for budgets and status lines,
//! where 0 would be a lie; it is not exact, and it is never 0 for text that
//! is not empty. Replies whose counts are estimated say so
//! ([`Usage::estimated`](super::Usage::estimated)).

use super::{Message, Request};

/// Overhead of one message: role markers and separators.
const PER_MESSAGE: u64 = 4;

/// The estimated token count of `text`.
pub fn tokens(text: &str) -> u64 {
    let mut n: u64 = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphabetic() {
            let mut len: u64 = 1;
            while chars.next_if(char::is_ascii_alphabetic).is_some() {
                len += 1;
            }
            n += len.div_ceil(6);
        } else if c.is_ascii_digit() {
            let mut len: u64 = 1;
            while chars.next_if(char::is_ascii_digit).is_some() {
                len += 1;
            }
            n += len.div_ceil(3);
        } else if c == '\n' {
            n += 1;
        } else if c == ' ' || c == '\t' || c == '\r' {
            let mut len: u64 = 1;
            while chars.next_if(|c| matches!(c, ' ' | '\t' | '\r')).is_some() {
                len += 1;
            }
            if len > 1 {
                n += len.div_ceil(4);
            }
        } else if c.is_ascii() {
            // A symbol; the next one, if it is a symbol too, shares the token.
            chars.next_if(|c| c.is_ascii_punctuation());
            n += 1;
        } else {
            n += 1;
        }
    }
    n
}

/// The estimated prompt tokens of the request `body` sent for `req`: the
/// system prompt and messages, and the tool schemas only when the body
/// carried them (a request whose tools were left out is not charged for
/// them).
pub fn carried_tokens(req: &Request, body: &serde_json::Value) -> u64 {
    let tools_sent = body
        .get("tools")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if tools_sent {
        request_tokens(req)
    } else {
        request_tokens(&Request {
            system: req.system.clone(),
            messages: req.messages.clone(),
            tools: Vec::new(),
            max_tokens: req.max_tokens,
        })
    }
}

/// The estimated prompt tokens of `req`: system prompt, messages (with
/// their tool calls and results) and tool schemas.
pub fn request_tokens(req: &Request) -> u64 {
    let mut n = tokens(&req.system) + PER_MESSAGE;
    for m in &req.messages {
        n += PER_MESSAGE
            + match m {
                Message::User(text) => tokens(text),
                Message::Assistant { text, tool_calls } => {
                    tokens(text)
                        + tool_calls
                            .iter()
                            .map(|c| tokens(&c.name) + tokens(&c.arguments) + PER_MESSAGE)
                            .sum::<u64>()
                }
                Message::ToolResult { name, content, .. } => tokens(name) + tokens(content),
            };
    }
    for tool in &req.tools {
        n += tokens(&tool.to_string());
    }
    n
}

/// The estimated completion tokens of a reply's parts.
pub(crate) fn reply_tokens(text: &str, reasoning: &str, calls: &[super::ToolCall]) -> u64 {
    tokens(text)
        + tokens(reasoning)
        + calls
            .iter()
            .map(|c| tokens(&c.name) + tokens(&c.arguments) + PER_MESSAGE)
            .sum::<u64>()
}

/// A token count the way a status line shows it: `950`, `1.2k`, `35k`,
/// `1.5M`; with a leading `~` when it is an estimate.
pub fn show_tokens(n: u64, estimated: bool) -> String {
    let shown = if n < 1000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else if n < 1_000_000 {
        format!("{}k", (n + 500) / 1000)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    };
    if estimated {
        format!("~{shown}")
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_the_rules() {
        assert_eq!(tokens(""), 0);
        assert_eq!(tokens("hello"), 1);
        assert_eq!(tokens("hello world"), 2);
        assert_eq!(tokens("configuration"), 3);
        assert_eq!(tokens("1234567"), 3);
        // `fn`, space free, `main`, `()` shared, space, `{`, newline,
        // 4 spaces, `x`, newline, `}`.
        assert_eq!(tokens("fn main() {\n    x\n}"), 9);
        assert_eq!(tokens("é✓"), 2);
        assert!(tokens(".") > 0);
    }

    #[test]
    fn code_and_prose_land_near_four_characters_a_token() {
        let prose = "The quick brown fox jumps over the lazy dog, and then it \
                     rests in the shade of a tree until the evening comes.";
        let code = "fn parse(input: &str) -> Result<Config, Error> {\n    let v: Value = \
                    serde_json::from_str(input)?;\n    Ok(Config::from(v))\n}\n";
        for text in [prose, code] {
            let per = text.len() as f64 / tokens(text) as f64;
            assert!((2.5..6.0).contains(&per), "{per} chars a token: {text}");
        }
    }

    #[test]
    fn short_forms() {
        assert_eq!(show_tokens(950, false), "950");
        assert_eq!(show_tokens(1234, true), "~1.2k");
        assert_eq!(show_tokens(35_400, false), "35k");
        assert_eq!(show_tokens(1_500_000, true), "~1.5M");
    }
}
