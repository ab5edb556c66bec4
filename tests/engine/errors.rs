//! Scheme errors reach the user with file and line.

use super::support::{engine_with, scratch};
use crate::engine::ErrorKind;

#[test]
fn errors_name_file_line_and_column() {
    let dir = scratch(&[
        ("bad.scm", "(define (f x)\n  (car x))\n\n(f 5)\n"),
        (
            "unbound.scm",
            "(define y 1)\n(display (no-such-function y))\n",
        ),
        ("parse.scm", "(define (g x)\n  (+ x 1)\n"),
        (
            "lib/broken.scm",
            "(provide h)\n(define (h) (vector-ref (vector) 3))\n",
        ),
        ("uses.scm", "(require \"lib/broken.scm\")\n(h)\n"),
    ]);
    let (mut e, _) = engine_with(&[dir.path()], None);

    let err = e.run_file(&dir.path().join("bad.scm")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Scheme);
    let loc = err.location().expect("a location");
    assert!(loc.file.ends_with("bad.scm"), "{err}");
    assert_eq!(loc.line, 2, "{err}");
    let text = err.to_string();
    assert!(text.contains("bad.scm:2:"), "{text}");
    assert!(
        text.contains("(car x)"),
        "the report shows the line:\n{text}"
    );

    let err = e.run_file(&dir.path().join("unbound.scm")).unwrap_err();
    assert_eq!(err.location().map(|l| l.line), Some(2), "{err}");
    assert!(err.to_string().contains("no-such-function"), "{err}");

    let err = e.run_file(&dir.path().join("parse.scm")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Scheme);
    assert!(
        err.location()
            .is_some_and(|l| l.file.ends_with("parse.scm")),
        "{err}"
    );

    // An error inside a required module names the module's file.
    let err = e.run_file(&dir.path().join("uses.scm")).unwrap_err();
    let loc = err.location().expect("a location");
    assert!(loc.file.ends_with("broken.scm") && loc.line == 2, "{err}");

    // Source text is named by the name it was run under.
    let err = e
        .run_source("inline.scm", "(define z 1)\n\n  (+ z \"one\")")
        .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("inline.scm:3:"), "{text}");
}
