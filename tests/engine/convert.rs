//! JSON ⇄ Scheme through the engine: what goes in comes back.

use serde_json::{Value, json};

use super::support::{engine, fail, run};
use crate::engine::ErrorKind;

#[test]
fn json_round_trips_through_scheme() {
    let (mut e, _) = engine();
    run(&mut e, "(define (id x) x)");
    let values = [
        json!(42),
        json!(-7),
        json!(0),
        json!(9_007_199_254_740_993_i64), // not representable as f64
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1.5),
        json!(-0.25),
        json!(1e300),
        json!("héllo ✓ 日本語 🎉 \"quoted\" \\ \n\t"),
        json!(""),
        json!(true),
        json!(false),
        Value::Null,
        json!([]),
        json!([1, "two", null, 3.25, [4, [5]], {"six": 6}]),
        json!({"ok": true, "text": "…", "n": 3, "nothing": null, "list": [], "items": [1, 2]}),
        json!({"a": {"b": {"c": [{"d": "deep"}, {"e": null}]}}}),
        json!({"unicode key ✓": "v", "empty": ""}),
    ];
    for v in values {
        let back = e
            .call("id", vec![v.clone()])
            .unwrap_or_else(|err| panic!("{v}: {err}"));
        assert_eq!(back, v);
    }
}

#[test]
fn scheme_sees_json_as_alists_lists_and_exact_integers() {
    let (mut e, _) = engine();
    run(
        &mut e,
        r#"(define (inspect x)
             (list (assoc-ref x "n")
                   (exact-integer? (assoc-ref x "n"))
                   (float? (assoc-ref x "f"))
                   (json-null? (assoc-ref x "nothing"))
                   (null? (assoc-ref x "nothing"))
                   (assoc-ref (assoc-ref x "obj") "k")
                   (length (assoc-ref x "xs"))
                   (cdr (assoc "s" x))
                   (assoc-ref x "missing" 'none)))"#,
    );
    let out = e
        .call(
            "inspect",
            vec![json!({"n": 3, "f": 2.0, "nothing": null, "obj": {"k": "v"}, "xs": [1, 2, 3], "s": "str"})],
        )
        .unwrap();
    assert_eq!(
        out,
        json!([3, true, true, true, false, "v", 3, "str", "none"])
    );
}

#[test]
fn scheme_values_to_json() {
    let (mut e, _) = engine();
    let cases: &[(&str, Value)] = &[
        (
            "(list 1 2.5 \"x\" #t #f)",
            json!([1, 2.5, "x", true, false]),
        ),
        ("(vector 1 (vector 2))", json!([1, [2]])),
        ("(hash \"b\" 1 \"a\" (list 2))", json!({"a": [2], "b": 1})),
        (
            "(json-object \"role\" \"user\" \"content\" \"hi\")",
            json!({"role": "user", "content": "hi"}),
        ),
        (
            "(list (cons \"a\" 1) (list \"b\" 2 3))",
            json!({"a": 1, "b": [2, 3]}),
        ),
        ("'done", json!("done")),
        ("#\\x", json!("x")),
        ("void", Value::Null),
        ("(define x 1)", Value::Null),
        ("'()", json!([])),
        (
            "(* 4294967296 4294967295)",
            json!(18_446_744_069_414_584_320_u64),
        ),
    ];
    for (src, want) in cases {
        assert_eq!(&run(&mut e, src), want, "{src}");
    }
    // A bignum beyond u64 cannot be JSON: refused, not mangled.
    let err = fail(&mut e, "(* 99999999999 99999999999)");
    assert_eq!(err.kind(), ErrorKind::Conversion, "{err}");
}

#[test]
fn values_json_cannot_hold_are_refused_without_panicking() {
    let (mut e, _) = engine();
    for src in [
        "(/ 0.0 0.0)",
        "(/ 1.0 0.0)",
        "(list 1 (lambda (x) x))",
        "(cons 1 2)",
        "(hash 'sym 1)",
        "(open-output-string)",
    ] {
        let err = fail(&mut e, src);
        assert_eq!(err.kind(), ErrorKind::Conversion, "{src}: {err}");
        assert!(
            err.to_string().contains("cannot be returned as JSON"),
            "{src}: {err}"
        );
    }
    // NaN inside a call's result, and as an argument to the host.
    run(&mut e, "(define (nan) (list (/ 0.0 0.0)))");
    let err = e.call("nan", vec![]).unwrap_err();
    assert!(
        err.to_string()
            .contains("$[0]: the number NaN is not finite"),
        "{err}"
    );
    e.register("echo", |args| Ok(Value::Array(args)));
    let err = fail(&mut e, "(echo (/ 0.0 0.0))");
    assert!(
        err.to_string()
            .contains("echo: argument 1 cannot be sent to the host"),
        "{err}"
    );
    // Still usable.
    assert_eq!(run(&mut e, "(+ 1 2)"), json!(3));
}
