//! The Scheme strategies get: the prelude, steel's own macros, and the one
//! thing they do not get (procedural macros).

use serde_json::json;

use super::support::{engine, fail, run};
use crate::engine::ErrorKind;

#[test]
fn prelude_helpers() {
    let (mut e, _) = engine();
    let cases: &[(&str, serde_json::Value)] = &[
        (r#"(assoc-ref (json-object "a" 1 "b" 2) "b")"#, json!(2)),
        (r#"(assoc-ref (json-object "a" 1) "z")"#, json!(false)),
        (
            r#"(assoc-ref (json-object "a" 1) "z" 'none)"#,
            json!("none"),
        ),
        (r#"(assoc-ref '(("k" 1 2)) "k")"#, json!([1, 2])),
        (
            r#"(assoc-set (json-object "a" 1 "b" 2) "a" 10)"#,
            json!({"a": 10, "b": 2}),
        ),
        (
            r#"(assoc-set (json-object "a" 1) "c" 3)"#,
            json!({"a": 1, "c": 3}),
        ),
        (
            r#"(assoc-remove (json-object "a" 1 "b" 2) "a")"#,
            json!({"b": 2}),
        ),
        (r#"(json-null? json-null)"#, json!(true)),
        (r#"(json-null? '())"#, json!(false)),
        (
            r#"(tool-ok? (json-object "ok" #t "text" "x"))"#,
            json!(true),
        ),
        (r#"(tool-ok? (json-object "ok" #f))"#, json!(false)),
        (
            r#"(tool-text (json-object "ok" #t "text" "x"))"#,
            json!("x"),
        ),
        (r#"(tool-text '())"#, json!("")),
        (r#"(tool-refused? (json-object "refused" #t))"#, json!(true)),
        (
            r#"(filter-map (lambda (x) (and (odd? x) (* x 10))) (list 1 2 3))"#,
            json!([10, 30]),
        ),
        (
            r#"(list (any? odd? (list 2 3)) (any? odd? '()) (every? odd? (list 1 3)) (every? odd? (list 1 2)))"#,
            json!([true, false, true, false]),
        ),
        (r#"(count-if odd? (list 1 2 3))"#, json!(2)),
        (
            r#"(list (take-at-most (list 1 2 3) 2) (take-at-most (list 1) 5))"#,
            json!([[1, 2], [1]]),
        ),
        (
            r#"(list (index-of even? (list 1 3 4)) (index-of even? (list 1)))"#,
            json!([2, false]),
        ),
        (
            r#"(list (string-truncate "abcdef" 3) (string-truncate "ab" 3))"#,
            json!(["abc...", "ab"]),
        ),
    ];
    for (src, want) in cases {
        assert_eq!(&run(&mut e, src), want, "{src}");
    }
    let err = fail(&mut e, r#"(json-object "a")"#);
    assert!(
        err.to_string()
            .contains("json-object: expects key value pairs"),
        "{err}"
    );
}

#[test]
fn steel_macros_work_and_procedural_macros_are_refused() {
    let (mut e, _) = engine();
    let out = run(
        &mut e,
        r#"(define-syntax swap! (syntax-rules () [(_ a b) (let ([t a]) (set! a b) (set! b t))]))
           (struct Point (x y))
           (define x 1) (define y 2) (swap! x y)
           (list x y (Point-x (Point 5 6)) (match (list 1 2) [(list a b) (+ a b)]))"#,
    );
    assert_eq!(out, json!([2, 1, 5, 3]));
    for src in [
        "(define-syntax (m stx) (let loop () (loop)))\n(m)",
        "(define-syntax m (lambda (stx) #'1)) (m)",
    ] {
        let err = fail(&mut e, src);
        assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
        let text = err.to_string();
        assert!(
            text.contains("the procedural macro `m` is refused"),
            "{text}"
        );
        assert!(text.contains("define macros with syntax-rules"), "{text}");
        assert!(text.starts_with("test.scm:1:2:"), "{text}");
    }
}
