//! Reading a test run's log the way the SWE-bench harness's log parsers
//! do, per repository: a test id → its status, from lines that *start*
//! with a status word (`PASSED tests/x.py::t`, pytest `-rA`), lines that
//! end with one (`test_x (m.C) ... ok`, Django; `test_x ok`, sympy), and
//! the few special cases the harness knows (pytest's `SKIPPED [1] file`
//! summaries are not tests, Django's result printed a line late, sympy's
//! `___ file.py:test ___` failure headers). Matching the harness matters
//! more than being clever: a line the harness would not read must not
//! make a test pass here.

use std::collections::BTreeMap;

use clap::ValueEnum;

/// The harness's log parsers (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `pytest -rA`: `PASSED id`, `FAILED id - reason`, or `id PASSED`.
    Pytest,
    /// pytest, with a parameter that is an absolute path cut to its last
    /// part (pydicom, requests, pylint).
    PytestOptions,
    /// pytest, with terminal colour codes and control characters removed
    /// first (astropy, scikit-learn, sphinx).
    PytestV2,
    /// pytest, with `MouseButton.LEFT`/`RIGHT` read as 1/3.
    Matplotlib,
    /// seaborn's pytest lines.
    Seaborn,
    /// Django's runtests.py: `test_x (module.Class) ... ok`.
    Django,
    /// sympy's bin/test: `test_x ok`, `test_y F`, `test_z E`.
    Sympy,
}

impl LogFormat {
    /// The harness's parser for `repo`: pytest for the repositories it does
    /// not name.
    pub fn of_repo(repo: &str) -> LogFormat {
        match repo {
            "django/django" => LogFormat::Django,
            "sympy/sympy" => LogFormat::Sympy,
            "matplotlib/matplotlib" => LogFormat::Matplotlib,
            "mwaskom/seaborn" => LogFormat::Seaborn,
            "pydicom/pydicom" | "psf/requests" | "pylint-dev/pylint" => LogFormat::PytestOptions,
            "astropy/astropy" | "scikit-learn/scikit-learn" | "sphinx-doc/sphinx" => {
                LogFormat::PytestV2
            }
            _ => LogFormat::Pytest,
        }
    }
}

/// A test's status in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestStatus {
    Passed,
    Failed,
    Skipped,
    Error,
    Xfail,
}

impl TestStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TestStatus::Passed => "passed",
            TestStatus::Failed => "failed",
            TestStatus::Skipped => "skipped",
            TestStatus::Error => "error",
            TestStatus::Xfail => "xfail",
        }
    }

    /// The harness's status words, as pytest prints them.
    fn from_word(word: &str) -> Option<TestStatus> {
        Some(match word {
            "PASSED" => TestStatus::Passed,
            "FAILED" => TestStatus::Failed,
            "SKIPPED" => TestStatus::Skipped,
            "ERROR" => TestStatus::Error,
            "XFAIL" => TestStatus::Xfail,
            _ => return None,
        })
    }
}

const WORDS: [&str; 5] = ["FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL"];

/// Test id → its status; a test seen twice keeps its last status.
pub fn parse_log(log: &str, format: LogFormat) -> BTreeMap<String, TestStatus> {
    let mut out = BTreeMap::new();
    match format {
        LogFormat::Django => django(log, &mut out),
        LogFormat::Sympy => sympy(log, &mut out),
        LogFormat::Seaborn => {
            for line in log.split('\n') {
                if let Some((id, status)) = seaborn_line(line) {
                    out.insert(id, status);
                }
            }
        }
        LogFormat::Matplotlib => {
            for line in log.split('\n') {
                let line = line
                    .replace("MouseButton.LEFT", "1")
                    .replace("MouseButton.RIGHT", "3");
                if let Some((id, status)) = status_first_loose(&line) {
                    out.insert(id, status);
                }
            }
        }
        LogFormat::Pytest | LogFormat::PytestOptions | LogFormat::PytestV2 => {
            for line in log.split('\n') {
                let line = if format == LogFormat::PytestV2 {
                    strip_controls(line)
                } else {
                    line.to_string()
                };
                if let Some((id, status)) = pytest_line(&line) {
                    let id = if format == LogFormat::PytestOptions {
                        short_option(&id)
                    } else {
                        id
                    };
                    out.insert(id, status);
                }
            }
        }
    }
    out
}

/// A pytest result line: `STATUS id` at the very start of the line (for
/// FAILED, ` - reason` is not part of the id), or `id STATUS`. `SKIPPED
/// [N] file:line: reason` summaries name no test.
fn pytest_line(line: &str) -> Option<(String, TestStatus)> {
    if let Some(word) = WORDS.iter().find(|w| line.starts_with(**w)) {
        let rest = &line[word.len()..];
        if rest.starts_with(char::is_whitespace) {
            let status = TestStatus::from_word(word)?;
            let id = if status == TestStatus::Failed {
                line.replace(" - ", " ")
                    .split_whitespace()
                    .nth(1)?
                    .to_string()
            } else {
                rest.split_whitespace().next()?.to_string()
            };
            if status == TestStatus::Skipped && is_skip_count(&id) {
                return None;
            }
            return Some((id, status));
        }
    }
    // `tests/x.py::t PASSED [ 50%]` (pytest -v).
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let id = line.split_whitespace().next()?;
    let rest = &line[id.len()..];
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let word = WORDS.iter().find(|w| rest.starts_with(**w))?;
    let after = &rest[word.len()..];
    if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return None;
    }
    Some((id.to_string(), TestStatus::from_word(word)?))
}

/// `[12]`, what pytest puts where a skip summary would have a test id.
fn is_skip_count(id: &str) -> bool {
    id.strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The harness's older reading (matplotlib): any line starting with a
/// status word; the first word is the status, the second the id.
fn status_first_loose(line: &str) -> Option<(String, TestStatus)> {
    let word = WORDS.iter().find(|w| line.starts_with(**w))?;
    let line = if *word == "FAILED" {
        line.replace(" - ", " ")
    } else {
        line.to_string()
    };
    let mut words = line.split_whitespace();
    let (status, id) = (words.next()?, words.next()?);
    // A first word that only starts with a status word ("ERRORS") is
    // kept by the harness as an unknown status: not a pass.
    Some((
        id.to_string(),
        TestStatus::from_word(status).unwrap_or(TestStatus::Error),
    ))
}

/// `test_x[/abs/path/to/file.py]` → `test_x[/file.py]`, as the harness
/// normalises parameters that are absolute paths.
fn short_option(id: &str) -> String {
    let Some(open) = id.find('[') else {
        return id.to_string();
    };
    let Some(close) = id.rfind(']').filter(|c| *c > open) else {
        return id.to_string();
    };
    let (main, option) = (&id[..open], &id[open + 1..close]);
    if option.starts_with('/') && !option.starts_with("//") && !option.contains('*') {
        let last = option.rsplit('/').next().unwrap_or("");
        return format!("{main}[/{last}]");
    }
    format!("{main}[{option}]")
}

/// Removes colour codes (`ESC[31m`) and control characters.
fn strip_controls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find('[') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with('m') {
            rest = &after[digits + 1..];
        } else {
            out.push('[');
            rest = after;
        }
    }
    out.push_str(rest);
    out.retain(|c| !matches!(c as u32, 1..=31));
    out
}

fn seaborn_line(line: &str) -> Option<(String, TestStatus)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if line.starts_with("FAILED") {
        return Some((words.get(1)?.to_string(), TestStatus::Failed));
    }
    if line.contains(" PASSED ") {
        return (words.get(1) == Some(&"PASSED"))
            .then(|| (words[0].to_string(), TestStatus::Passed));
    }
    if line.starts_with("PASSED") {
        return Some((words.get(1)?.to_string(), TestStatus::Passed));
    }
    None
}

fn django(log: &str, out: &mut BTreeMap<String, TestStatus>) {
    const PASS: [&str; 3] = [" ... ok", " ... OK", " ...  OK"];
    let mut prev_test: Option<String> = None;
    for raw in log.split('\n') {
        let mut line = raw.trim().to_string();
        if line.contains("--version is equivalent to version") {
            out.insert(
                "--version is equivalent to version".into(),
                TestStatus::Passed,
            );
        }
        if let Some((test, _)) = line.split_once(" ... ") {
            prev_test = Some(test.to_string());
        }
        if let Some(suffix) = PASS.iter().find(|s| line.ends_with(**s)) {
            // A migration's output and the test's name on one line.
            if line.starts_with("Applying sites.0002_alter_domain_unique...test_no_migrations") {
                line = line
                    .split_once("...")
                    .map_or(line.clone(), |(_, r)| r.trim().to_string());
            }
            if let Some((test, _)) = line.rsplit_once(suffix) {
                out.insert(test.to_string(), TestStatus::Passed);
            }
        }
        if let Some((test, _)) = line.split_once(" ... skipped") {
            out.insert(test.to_string(), TestStatus::Skipped);
        }
        if let Some(test) = line.strip_suffix(" ... FAIL") {
            let test = test.split(" ... FAIL").next().unwrap_or(test);
            out.insert(test.to_string(), TestStatus::Failed);
        }
        if line.starts_with("FAIL:")
            && let Some(test) = line.split_whitespace().nth(1)
        {
            out.insert(test.to_string(), TestStatus::Failed);
        }
        if let Some(test) = line.strip_suffix(" ... ERROR") {
            let test = test.split(" ... ERROR").next().unwrap_or(test);
            out.insert(test.to_string(), TestStatus::Error);
        }
        if line.starts_with("ERROR:")
            && let Some(test) = line.split_whitespace().nth(1)
        {
            out.insert(test.to_string(), TestStatus::Error);
        }
        // The result came lines after the name (the test printed between).
        if line.starts_with("ok")
            && let Some(test) = &prev_test
        {
            out.insert(test.clone(), TestStatus::Passed);
        }
    }
    // Django's own output cutting into a test's line, then `ok` alone on
    // the next: the harness's three known forms.
    let lines: Vec<&str> = log.split('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        let Some((test, rest)) = line.split_once(" ... ") else {
            continue;
        };
        let next_ok = |j: usize| lines.get(j + 1) == Some(&"ok");
        let passed = if rest.starts_with("Testing against Django installed in ") {
            (i..lines.len())
                .find(|j| lines[*j].ends_with(" silenced)."))
                .is_some_and(next_ok)
        } else {
            let internal = rest
                .strip_prefix("Internal Server Error: /")
                .is_some_and(|r| r.ends_with('/'));
            (internal || rest == "System check identified no issues (0 silenced)") && next_ok(i)
        };
        if passed {
            out.insert(test.to_string(), TestStatus::Passed);
        }
    }
}

fn sympy(log: &str, out: &mut BTreeMap<String, TestStatus>) {
    // `____ sympy/x/tests/test_y.py:test_z ____`: a failure's header.
    for line in log.split('\n') {
        if let Some(test) = sympy_failure_header(line) {
            out.insert(test, TestStatus::Failed);
        }
    }
    for line in log.split('\n') {
        let line = line.trim();
        if !line.starts_with("test_") {
            continue;
        }
        let Some(test) = line.split_whitespace().next() else {
            continue;
        };
        let status = if line.ends_with(" E") {
            TestStatus::Error
        } else if line.ends_with(" F") {
            TestStatus::Failed
        } else if line.ends_with(" ok") {
            TestStatus::Passed
        } else {
            continue;
        };
        out.insert(test.to_string(), status);
    }
}

/// The harness reads `(_*) (.*)\.py:(.*) (_*)` in a line: from after its
/// first space to the last `.py:` that a space follows, then to the last
/// space.
fn sympy_failure_header(line: &str) -> Option<String> {
    let first_space = line.find(' ')?;
    let rest = &line[first_space + 1..];
    let last_space = rest.rfind(' ')?;
    let file_end = rest[..last_space].rfind(".py:")?;
    Some(format!(
        "{}.py:{}",
        &rest[..file_end],
        &rest[file_end + 4..last_space]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(log: &BTreeMap<String, TestStatus>, id: &str) -> Option<TestStatus> {
        log.get(id).copied()
    }

    #[test]
    fn pytest_lines_as_the_harness_reads_them() {
        // The short test summary of `pytest -rA`, as marshmallow's runs print it.
        let log = "\
============================= test session starts ==============================
platform linux -- Python 3.9.19, pytest-8.1.1, pluggy-1.4.0
collected 1073 items

tests/test_fields.py ..........F...........s......................x..... [ 10%]

=========================== short test summary info ============================
PASSED tests/test_fields.py::TestField::test_repr
PASSED tests/test_fields.py::TestParentAndName::test_simple_field_parent_and_name
SKIPPED [1] tests/test_fields.py:481: needs simplejson
XFAIL tests/test_fields.py::test_xfail_case - reason: not yet
FAILED tests/test_fields.py::TestField::test_error_raised_if_uncallable - AssertionError: assert 1 == 2
ERROR tests/test_schema.py::test_fixture_broken - fixture 'x' not found
  PASSED tests/indented.py::not_a_result
tests/test_options.py::TestOrdered::test_ordered_option PASSED           [ 99%]
tests/test_options.py::test_other FAILED
PASSEDtests/glued.py::t
===== 1 failed, 2 passed, 1 skipped, 1 xfailed, 1 error in 1.23s =====";
        let s = parse_log(log, LogFormat::Pytest);
        let passed = Some(TestStatus::Passed);
        assert_eq!(
            get(&s, "tests/test_fields.py::TestField::test_repr"),
            passed
        );
        assert_eq!(
            get(
                &s,
                "tests/test_fields.py::TestField::test_error_raised_if_uncallable"
            ),
            Some(TestStatus::Failed)
        );
        assert_eq!(
            get(&s, "tests/test_fields.py::test_xfail_case"),
            Some(TestStatus::Xfail)
        );
        assert_eq!(
            get(&s, "tests/test_schema.py::test_fixture_broken"),
            Some(TestStatus::Error)
        );
        assert_eq!(
            get(
                &s,
                "tests/test_options.py::TestOrdered::test_ordered_option"
            ),
            passed
        );
        assert_eq!(
            get(&s, "tests/test_options.py::test_other"),
            Some(TestStatus::Failed)
        );
        // Not tests: the skip summary, an indented line, a glued word.
        assert!(!s.keys().any(|k| k.starts_with('[')), "{s:?}");
        assert_eq!(get(&s, "tests/indented.py::not_a_result"), None);
        assert_eq!(s.len(), 7, "{s:?}");
    }

    #[test]
    fn pytest_variants_per_repository() {
        let colour = "\u{1b}[32mPASSED\u{1b}[0m sklearn/tests/test_base.py::test_clone";
        let v2 = parse_log(colour, LogFormat::PytestV2);
        assert_eq!(
            get(&v2, "sklearn/tests/test_base.py::test_clone"),
            Some(TestStatus::Passed)
        );
        // The plain parser does not see a coloured line (nor does the harness's).
        assert!(parse_log(colour, LogFormat::Pytest).is_empty());
        let options = "PASSED tests/test_fs.py::test_read[/testbed/pydicom/data/test_files/CT_small.dcm]\n\
            PASSED tests/test_fs.py::test_glob[/data/*.dcm]";
        let o = parse_log(options, LogFormat::PytestOptions);
        assert!(
            o.contains_key("tests/test_fs.py::test_read[/CT_small.dcm]"),
            "{o:?}"
        );
        assert!(
            o.contains_key("tests/test_fs.py::test_glob[/data/*.dcm]"),
            "{o:?}"
        );
        let mpl = "PASSED lib/matplotlib/tests/test_widgets.py::test_span[MouseButton.LEFT-1]\n\
            FAILED lib/matplotlib/tests/test_axes.py::test_bar - ValueError\nERRORS\n";
        let m = parse_log(mpl, LogFormat::Matplotlib);
        assert_eq!(
            get(&m, "lib/matplotlib/tests/test_widgets.py::test_span[1-1]"),
            Some(TestStatus::Passed)
        );
        assert_eq!(
            get(&m, "lib/matplotlib/tests/test_axes.py::test_bar"),
            Some(TestStatus::Failed)
        );
        let sea = "tests/test_core.py::TestHue::test_map PASSED [ 10%]\nFAILED tests/test_core.py::test_x - E\nPASSED tests/test_a.py::t\n";
        let s = parse_log(sea, LogFormat::Seaborn);
        assert_eq!(s.len(), 3, "{s:?}");
        assert_eq!(
            get(&s, "tests/test_core.py::TestHue::test_map"),
            Some(TestStatus::Passed)
        );
        assert_eq!(LogFormat::of_repo("astropy/astropy"), LogFormat::PytestV2);
        assert_eq!(
            LogFormat::of_repo("pylint-dev/pylint"),
            LogFormat::PytestOptions
        );
        assert_eq!(LogFormat::of_repo("pallets/flask"), LogFormat::Pytest);
    }

    #[test]
    fn django_lines_as_the_harness_reads_them() {
        let log = "\
Testing against Django installed in '/testbed/django' with up to 8 processes
Importing application queries
Creating test database for alias 'default'...
test_simple (queries.test_q.QTests) ... ok
test_combine_and_empty (queries.test_q.QTests) ... OK
test_deconstruct (queries.test_q.QTests) ... FAIL
test_slow (queries.test_q.QTests) ... skipped 'needs postgres'
test_broken (queries.test_q.QTests) ... ERROR
test_chatty (queries.test_q.QTests) ... printing something
and more
ok
test_expected (queries.test_q.QTests) ... expected failure

======================================================================
FAIL: test_other (queries.test_q.OtherTests)
----------------------------------------------------------------------
ERROR: test_setup (queries.test_q.SetupTests)
test_check (check_framework.tests.T) ... System check identified no issues (0 silenced)
ok
Ran 8 tests in 0.012s";
        let d = parse_log(log, LogFormat::Django);
        let at = |id: &str| get(&d, id);
        assert_eq!(
            at("test_simple (queries.test_q.QTests)"),
            Some(TestStatus::Passed)
        );
        assert_eq!(
            at("test_combine_and_empty (queries.test_q.QTests)"),
            Some(TestStatus::Passed)
        );
        assert_eq!(
            at("test_deconstruct (queries.test_q.QTests)"),
            Some(TestStatus::Failed)
        );
        assert_eq!(
            at("test_slow (queries.test_q.QTests)"),
            Some(TestStatus::Skipped)
        );
        assert_eq!(
            at("test_broken (queries.test_q.QTests)"),
            Some(TestStatus::Error)
        );
        assert_eq!(
            at("test_chatty (queries.test_q.QTests)"),
            Some(TestStatus::Passed)
        );
        // `FAIL:`/`ERROR:` headers name the test by its first word.
        assert_eq!(at("test_other"), Some(TestStatus::Failed));
        assert_eq!(at("test_setup"), Some(TestStatus::Error));
        assert_eq!(
            at("test_check (check_framework.tests.T)"),
            Some(TestStatus::Passed)
        );
        // The harness has no reading for "expected failure".
        assert_eq!(at("test_expected (queries.test_q.QTests)"), None);
    }

    #[test]
    fn sympy_lines_as_the_harness_reads_them() {
        let log = "\
============================= test process starts ==============================
executable:         /opt/miniconda3/envs/testbed/bin/python  (3.9.19-final-0) [CPython]
sympy/core/tests/test_sympify.py[3]
test_issue_3538 ok
test_sympify_keywords ok
test_evaluate_false F
test_sympify_raises E
test_not_run f

________________________________________________________________________________
____ sympy/core/tests/test_sympify.py:test_evaluate_false _____________________
Traceback (most recent call last):
=== tests finished: 2 passed, 1 failed, 1 exceptions, in 0.29 seconds ===";
        let s = parse_log(log, LogFormat::Sympy);
        assert_eq!(get(&s, "test_issue_3538"), Some(TestStatus::Passed));
        assert_eq!(get(&s, "test_evaluate_false"), Some(TestStatus::Failed));
        assert_eq!(get(&s, "test_sympify_raises"), Some(TestStatus::Error));
        assert_eq!(get(&s, "test_not_run"), None);
        assert_eq!(
            get(&s, "sympy/core/tests/test_sympify.py:test_evaluate_false"),
            Some(TestStatus::Failed)
        );
    }
}
