//! Primitives called from Scheme: positional arguments, optional ones left
//! out, the Call the host gets, and the errors for wrong arguments.

use std::sync::Arc;

use serde_json::json;

use super::support::{engine, fail, run};
use crate::engine::{Engine, EngineOptions, ErrorKind, HostFn};
use nib::call::Arg::{self, Bool, Int, List, Str};
use nib::prim::table::ALL;

fn s(x: &str) -> Arg {
    Str(x.to_string())
}

fn fields(pairs: &[(&str, Arg)]) -> Vec<(String, Arg)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn every_primitive_is_callable_positionally() {
    let (mut e, calls) = engine();
    let cases: Vec<(&str, &str, Vec<Arg>)> = vec![
        (
            "(fs-read \"a.rs\")",
            "fs-read",
            vec![s("a.rs"), Int(0), Int(0)],
        ),
        (
            "(fs-read \"a.rs\" 10 20)",
            "fs-read",
            vec![s("a.rs"), Int(10), Int(20)],
        ),
        ("(fs-list \".\")", "fs-list", vec![s("."), Int(0)]),
        ("(fs-list \"src\" 3)", "fs-list", vec![s("src"), Int(3)]),
        (
            "(fs-find \"**/*.rs\")",
            "fs-find",
            vec![s("**/*.rs"), s("")],
        ),
        (
            "(index-grep \"fn main\")",
            "index-grep",
            vec![s("fn main"), s(""), s("")],
        ),
        (
            "(index-grep \"x\" \"src\" \"*.rs\")",
            "index-grep",
            vec![s("x"), s("src"), s("*.rs")],
        ),
        ("(outline \"src/lib.rs\")", "outline", vec![s("src/lib.rs")]),
        (
            "(fs-write \"a.txt\" \"hello\\n\")",
            "fs-write",
            vec![s("a.txt"), s("hello\n")],
        ),
        (
            "(fs-edit \"a.rs\" \"old\" \"new\")",
            "fs-edit",
            vec![s("a.rs"), s("old"), s("new"), Bool(false), List(vec![])],
        ),
        (
            "(fs-edit \"a.rs\" \"x\" \"y\" #t)",
            "fs-edit",
            vec![s("a.rs"), s("x"), s("y"), Bool(true), List(vec![])],
        ),
        ("(git-status)", "git-status", vec![]),
        ("(git-diff)", "git-diff", vec![s("")]),
        ("(git-diff \"src\")", "git-diff", vec![s("src")]),
        ("(git-log)", "git-log", vec![Int(0)]),
        ("(git-log 5)", "git-log", vec![Int(5)]),
        (
            "(shell \"cargo test\")",
            "shell",
            vec![s("cargo test"), Int(0)],
        ),
        (
            "(shell \"cargo test\" 60)",
            "shell",
            vec![s("cargo test"), Int(60)],
        ),
    ];
    for (src, name, args) in &cases {
        let out = run(&mut e, &format!("(tool-text {src})"));
        assert_eq!(out, json!(format!("{name} done")), "{src}");
        let got = calls.take();
        assert_eq!(got.len(), 1, "{src}");
        assert_eq!(got[0].decl.name, *name, "{src}");
        assert_eq!(&got[0].args, args, "{src}");
        assert!(got[0].quirks.is_empty());
    }
    // Every declared primitive was exercised.
    for d in ALL.iter() {
        assert!(
            cases.iter().any(|(_, n, _)| n == &d.name),
            "{} not covered",
            d.name
        );
    }
}

#[test]
fn fs_edit_with_a_list_of_alists() {
    let (mut e, calls) = engine();
    run(
        &mut e,
        r#"(fs-edit "src/a.rs" "" "" #f
             (list (list (cons "old" "x = 1") (cons "new" "x = 10"))
                   '(("new" . "y = 20") ("old" . "y = 2") ("replace_all" . #t))
                   '(("old" "z") ("new" "zz"))
                   (hash "old" "h" "new" "hh")))"#,
    );
    let got = calls.take();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].args,
        vec![
            s("src/a.rs"),
            s(""),
            s(""),
            Bool(false),
            List(vec![
                fields(&[("old", s("x = 1")), ("new", s("x = 10"))]),
                // Fields come in declaration order, as from a JSON call.
                fields(&[
                    ("old", s("y = 2")),
                    ("new", s("y = 20")),
                    ("replace_all", Bool(true))
                ]),
                fields(&[("old", s("z")), ("new", s("zz"))]),
                fields(&[("old", s("h")), ("new", s("hh"))]),
            ]),
        ]
    );
    // An explicitly empty list is an empty list: the call then gives
    // neither form, which the declaration's either/or rule refuses before
    // the host sees it, with the message a JSON call gets.
    let e2 = fail(&mut e, r#"(fs-edit "a" "" "" #f '())"#);
    assert!(
        e2.to_string()
            .contains("give either old and new (with replace_all) or edits; neither was sent"),
        "{e2}"
    );
    assert!(calls.take().is_empty());
    run(&mut e, r#"(fs-edit "a" "x" "y" #f '())"#);
    assert_eq!(calls.take()[0].args[4], List(vec![]));
}

#[test]
fn wrong_arguments_are_scheme_errors_that_say_what_to_send() {
    let (mut e, calls) = engine();
    let cases: &[(&str, &[&str])] = &[
        (
            "(fs-read 42)",
            &["fs-read", "`path` must be a string, got the integer 42"],
        ),
        (
            "(fs-read \"a\" \"10\")",
            &[
                "fs-read",
                "`offset` must be an integer",
                "got the string \"10\"",
            ],
        ),
        (
            "(fs-read \"a\" 1.5)",
            &["`offset` must be an integer", "1.5"],
        ),
        (
            "(fs-edit \"a\" \"x\" \"y\" \"yes\")",
            &["fs-edit", "`replace_all` must be #t or #f"],
        ),
        (
            "(fs-edit \"a\" \"\" \"\" #f \"x -> y\")",
            &["`edits` must be a list of association lists with string keys"],
        ),
        (
            "(fs-edit \"a\" \"\" \"\" #f '(((old . \"x\") (new . \"y\"))))",
            &[
                "fs-edit",
                "edits[1]",
                "the key 'old is a symbol; keys must be strings",
                "(\"old\" . …)",
            ],
        ),
        (
            "(fs-edit \"a\" \"\" \"\" #f (list (list (cons \"old\" \"x\") (cons \"new\" \"y\")) (list (cons \"old\" \"p\") (cons \"nwe\" \"q\"))))",
            &["edits[2]: unknown field `nwe`; did you mean `new`?"],
        ),
        (
            "(fs-edit \"a\" \"\" \"\" #f (list (list (cons \"old\" \"x\"))))",
            &["edits[1]: `new` is missing"],
        ),
        (
            "(fs-edit \"a\" \"\" \"\" #f (list (list (cons \"old\" \"x\") (cons \"old\" \"y\") (cons \"new\" \"z\"))))",
            &["edits[1]: `old` is given twice"],
        ),
        (
            "(fs-edit \"a\" \"\" \"\" #f (list (list (cons \"old\" 5) (cons \"new\" \"z\"))))",
            &["edits[1]: `old` must be a string, got the integer 5"],
        ),
        (
            "(fs-edit \"a\" \"\" \"\" #f (list \"old\"))",
            &["edits[1]: expected an association list with string keys"],
        ),
        (
            "(fs-read)",
            &["fs-read: takes 1 to 3 arguments, (fs-read path [offset] [limit]), got 0"],
        ),
        ("(fs-read \"a\" 1 2 3)", &["got 4"]),
        ("(git-status 1)", &["git-status: takes no arguments"]),
        ("(fs-write \"a\")", &["fs-write: takes 2 arguments"]),
    ];
    for (src, wants) in cases {
        let err = fail(&mut e, src);
        assert_eq!(err.kind(), ErrorKind::Scheme, "{src}: {err}");
        let text = err.to_string();
        for want in *wants {
            assert!(text.contains(want), "{src}\nwant {want:?} in:\n{text}");
        }
        // The error points at the call.
        assert_eq!(
            err.location().map(|l| l.file.as_str()),
            Some("test.scm"),
            "{src}: {err}"
        );
    }
    assert!(calls.take().is_empty(), "no bad call may reach the host");

    // Scheme can catch them.
    let msg = run(
        &mut e,
        "(with-handler (lambda (err) (error-object-message err)) (fs-read 42))",
    );
    assert!(
        msg.as_str().unwrap().contains("`path` must be a string"),
        "{msg}"
    );
}

#[test]
fn host_failures_and_panics_become_scheme_errors() {
    let host: HostFn = Arc::new(|call| match call.arg("path").as_str() {
        "panic" => panic!("host bug"),
        "err" => Err("disk on fire".to_string()),
        _ => Ok(json!({"ok": false, "text": "no such file"})),
    });
    let mut e = Engine::new(&ALL, host, EngineOptions::default()).unwrap();
    let err = fail(&mut e, "(fs-read \"err\")");
    assert_eq!(err.kind(), ErrorKind::Scheme);
    assert!(err.to_string().contains("fs-read: disk on fire"), "{err}");
    let err = fail(&mut e, "(fs-read \"panic\")");
    assert!(
        err.to_string()
            .contains("fs-read: the host failed: host bug"),
        "{err}"
    );
    // The engine carries on, and tool errors are data.
    let out = run(
        &mut e,
        "(let ([r (fs-read \"x\")]) (list (tool-ok? r) (tool-text r)))",
    );
    assert_eq!(out, json!([false, "no such file"]));
    let caught = run(
        &mut e,
        "(with-handler (lambda (err) (string-append \"caught: \" (error-object-message err))) (fs-read \"err\"))",
    );
    assert_eq!(caught, json!("caught: fs-read: disk on fire"));
}

#[test]
fn registered_host_procedures_take_and_return_json() {
    let (mut e, _) = engine();
    e.register("model-reply", |args| {
        let role = args[0][0]["role"].clone();
        Ok(json!({"content": format!("saw {role}"), "tool_calls": [], "n": args.len()}))
    });
    e.register("fail-always", |_| Err("model is down".to_string()));
    let out = run(
        &mut e,
        r#"(define r (model-reply (list (json-object "role" "user" "content" "hi")) 7))
           (list (assoc-ref r "content") (assoc-ref r "tool_calls") (assoc-ref r "n"))"#,
    );
    assert_eq!(out, json!([r#"saw "user""#, [], 2]));
    let err = fail(&mut e, "(fail-always)");
    assert!(
        err.to_string().contains("fail-always: model is down"),
        "{err}"
    );
    let err = fail(&mut e, "(model-reply (lambda (x) x))");
    assert!(
        err.to_string()
            .contains("model-reply: argument 1 cannot be sent to the host"),
        "{err}"
    );
}
