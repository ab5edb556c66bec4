//! Why new cannot be written where old matched, as a refusal says it:
//! the readings disagree on a depth, a line inside a string has no depth
//! to read, or no reading writes a line in whole units.

use std::fmt;

use super::units::Unit;

/// Why new cannot be written at the place old matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Doubt {
    /// The readings that fit write a line of new at different depths.
    Depths {
        line: usize,
        text: String,
        indent: String,
        options: Vec<String>,
    },
    /// A line of new that no old line pins is inside a string or block
    /// comment over several lines: its indentation is text, which no
    /// reading of the code's depth can map.
    InText { line: usize, text: String },
    /// No reading writes a line of new in whole units of the file's.
    NoWholeUnits {
        line: usize,
        text: String,
        indent: String,
        file: Option<Unit>,
    },
}

/// An indentation as a message says it: "4 spaces", "2 tabs", "no
/// indentation".
pub(crate) fn describe(indent: &str) -> String {
    let tabs = indent.matches('\t').count();
    let spaces = indent.len() - tabs;
    let plural = |n: usize, one: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {one}s"),
    };
    match (tabs, spaces) {
        (0, 0) => "no indentation".to_string(),
        (0, s) => plural(s, "space"),
        (t, 0) => plural(t, "tab"),
        (t, s) => format!("{} and {}", plural(t, "tab"), plural(s, "space")),
    }
}

/// "is indented 4 spaces", "is not indented".
fn indented(indent: &str) -> String {
    match indent {
        "" => "is not indented".to_string(),
        _ => format!("is indented {}", describe(indent)),
    }
}

impl fmt::Display for Doubt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Doubt::Depths {
                line,
                text,
                indent,
                options,
            } => {
                let options: Vec<String> = options.iter().map(|o| describe(o)).collect();
                write!(
                    f,
                    "new's line {line} (`{text}`) {}, and old's lines do not show which depth \
                     of the file that is: it could be {}; resend new with each line indented \
                     exactly as the file indents it (or old with more lines around it at \
                     different depths)",
                    indented(indent),
                    options.join(" or ")
                )
            }
            Doubt::InText { line, text } => write!(
                f,
                "new's line {line} (`{text}`) is inside a string or comment that runs over \
                 several lines, where indentation is text, not depth, and old's indentation \
                 is not the file's: where it goes cannot be read from old; resend old and new \
                 with each line indented exactly as the file has it"
            ),
            Doubt::NoWholeUnits {
                line,
                text,
                indent,
                file,
            } => {
                let unit = file.map_or_else(
                    || "indentation".to_string(),
                    |u| format!("indent unit ({})", u.describe()),
                );
                write!(
                    f,
                    "new's line {line} (`{text}`) {}; mapped the way old's lines map onto the \
                     file where old matched, that is no whole number of the file's {unit} at \
                     or right of column 0; resend new with each line indented exactly as the \
                     file indents it",
                    indented(indent)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_says_what_the_indentation_is() {
        assert_eq!(describe(""), "no indentation");
        assert_eq!(describe("\t\t"), "2 tabs");
        assert_eq!(describe("\t  "), "1 tab and 2 spaces");
        assert_eq!(describe(" "), "1 space");
    }
}
