//! A `$` the shell takes literally (single quotes, `$'…'`, `\$`) names no
//! variable: program text such as `sed -n '$p'` or `perl -e 'print $_'`
//! must not read as "a file known only at run time" beside a `.env`,
//! while every `$` the shell does expand still counts.

use super::super::lex::{lex, segments, variable_refs, variable_refs_except};
use super::disk_rules;

/// The words of a one-command line.
fn words(command: &str) -> Vec<super::super::lex::Word> {
    segments(lex(command).tokens)
        .into_iter()
        .flat_map(|s| s.words)
        .collect()
}

#[test]
fn single_quoted_dollars_are_literal() {
    let w = words("sed -n '$p' app.py");
    assert_eq!(w[2].text, "$p");
    assert_eq!(w[2].literal_dollars, vec![0]);
    assert_eq!(w[2].literal_variables(), vec!["p"]);
    // Escaped, in or out of double quotes.
    assert_eq!(words(r"echo \$HOME")[1].literal_variables(), vec!["HOME"]);
    assert_eq!(words(r#"echo "\$X""#)[1].literal_variables(), vec!["X"]);
    // Expanded: bare, double-quoted, braced.
    for command in ["cat $F", "cat \"$F\"", "cat \"${F}\"", "cat ${F}x"] {
        let w = words(command);
        assert!(w[1].literal_dollars.is_empty(), "{command}");
        assert!(w[1].literal_variables().is_empty(), "{command}");
    }
}

#[test]
fn a_word_mixing_quoted_and_expanded_dollars() {
    // `'$'$F`: a literal `$` then `$F`, which the shell expands.
    let w = words("cat '$'$F");
    assert_eq!(w[1].text, "$$F");
    assert_eq!(
        variable_refs_except(&w[1].text, &w[1].literal_dollars),
        vec![("F", 1)]
    );
    assert!(w[1].literal_variables().is_empty());
    // The same name quoted and not: the expanded one wins.
    assert!(words("cat '$F'$F")[1].literal_variables().is_empty());
    // `$$F` unquoted is the pid followed by `F`; counted as `$F`, which
    // errs on the side of a finding.
    assert_eq!(variable_refs("$$F"), vec![("F", 1)]);
    // `${!F}` is the variable F names: a reference to F.
    assert_eq!(variable_refs("${!F}"), vec![("F", 0)]);
}

#[test]
fn program_text_in_single_quotes_beside_a_protected_file() {
    for command in [
        "sed -n '$p' src/main.py",
        "sed -n '1p;$p' src/main.py",
        "perl -lne 'print $_' src/main.py",
        "perl -ne 'print if $. > 2' src/main.py",
        "awk '{print $1}' src/main.py",
        "awk '{print $NF}' src/main.py",
        "awk -F: '{s += $2} END {print s}' src/main.py",
        "echo '$HOME is $USER'",
        r"echo \$p",
        r#"echo "cost: \$price""#,
        "grep -n 'foo$' src/main.py",
        "find . -name '*.py' -exec sed -n '$p' {} +",
    ] {
        assert!(
            disk_rules(command).is_empty(),
            "{command}: {:?}",
            disk_rules(command)
        );
    }
}

#[test]
fn expanded_variables_still_reach_protected_files() {
    for command in [
        // Set when the command runs.
        "read F; cat \"$F\"",
        "cat \"$F\"",
        "cat $F",
        "cat \"${F}\"",
        "cat \"$X\"",
        // A literal `$` beside an expanded one.
        "cat '$'$F",
        "cat '$F'\"$F\"",
        // The same text quoted in one word and bare in another.
        "echo '$F'; cat $F",
        // Indirection.
        "cat ${!F}",
        // Run again by `sh -c`, where the quotes are gone.
        "sh -c 'cat $F'",
    ] {
        assert!(
            disk_rules(command).contains(&"protected-path"),
            "{command}: {:?}",
            disk_rules(command)
        );
    }
    // A substitution is its own finding, whatever it prints.
    let r = disk_rules("cat $(ls -A | head -1)");
    assert!(r.contains(&"command-substitution"), "{r:?}");
    let r = disk_rules("cat \"$(ls -A config | head -1)\"");
    assert!(r.contains(&"command-substitution"), "{r:?}");
}
