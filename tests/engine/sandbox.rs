//! Escapes from the sandbox: every one must fail, and none may have an
//! effect (files, processes, environment).

use serde_json::json;

use super::support::{engine, engine_with, path_str, run, scratch};
use crate::engine::ErrorKind;

/// Run each probe on one engine; return the ones that did not fail as
/// `want` says, with what happened.
fn probe(e: &mut crate::engine::Engine, probes: &[(&str, String)], want: ErrorKind) -> Vec<String> {
    let mut leaks = Vec::new();
    for (label, src) in probes {
        match e.run_source(label, src) {
            Ok(v) => leaks.push(format!("{label}: ran and gave {v}")),
            Err(err) if err.kind() != want => leaks.push(format!(
                "{label}: failed as {:?}, not {want:?}: {err}",
                err.kind()
            )),
            Err(_) => {}
        }
    }
    leaks
}

#[test]
fn host_capabilities_are_refused() {
    let out = scratch(&[(
        "evil.scm",
        "(define evil-loaded 1)\n(displayln \"evil loaded\")\n",
    )]);
    let marker = out.path().join("marker");
    let m = path_str(&marker);
    let evil = path_str(&out.path().join("evil.scm"));
    let touch = format!("(command \"touch\" (list \"{m}\"))");
    let probes: Vec<(&str, String)> = vec![
        ("open-input-file", "(read-port-to-string (open-input-file \"/etc/hostname\"))".into()),
        ("open-output-file", format!("(open-output-file \"{m}\")")),
        ("spawn-process", format!("(spawn-process {touch})")),
        ("wait->stdout", format!("(wait->stdout (spawn-process {touch}))")),
        (
            "require-builtin steel/process",
            format!("(require-builtin steel/process as p.) (p.spawn-process (p.command \"touch\" (list \"{m}\")))"),
        ),
        ("#%prim.spawn-process", format!("(#%prim.spawn-process (#%prim.command \"touch\" (list \"{m}\")))")),
        ("env-var", "(env-var \"HOME\")".into()),
        ("#%prim.env-var", "(#%prim.env-var \"HOME\")".into()),
        ("maybe-get-env-var", "(maybe-get-env-var \"HOME\")".into()),
        ("set-env-var!", "(set-env-var! \"NIB_ENGINE_ESCAPE\" \"1\")".into()),
        ("nested engine", "(run! (Engine::new) \"(+ 1 2)\")".into()),
        (
            "nested engine spawn",
            format!("(run! (Engine::new) \"(require-builtin steel/process) (spawn-process (command \\\"touch\\\" (list \\\"{m}\\\")))\")"),
        ),
        ("load", format!("(load \"{evil}\")")),
        ("load-expanded", "(load-expanded \"/nonexistent\")".into()),
        ("eval", "(eval '(env-var \"HOME\"))".into()),
        ("eval of require", format!("(eval '(require \"{evil}\"))")),
        ("eval-string", "(eval-string \"(+ 40 2)\")".into()),
        ("require-builtin steel/filesystem", "(require-builtin steel/filesystem) (read-dir \"/\")".into()),
        ("read-dir global", "(read-dir \"/\")".into()),
        ("current-directory", "(current-directory)".into()),
        ("tcp", "(tcp-connect \"127.0.0.1:9\")".into()),
        ("git-clone", format!("(git-clone \"https://example.invalid/x\" \"{m}\")")),
        ("spawn-native-thread", "(spawn-native-thread (lambda () 1))".into()),
        ("stdin", "(stdin)".into()),
        ("deserialize-value", "(deserialize-value (bytes))".into()),
        ("command-line", "(command-line)".into()),
        (
            "macro env-var",
            "(define-syntax (home stx) (syntax-case stx () [(_) (with-syntax ([h (env-var \"HOME\")]) #'h)])) (home)".into(),
        ),
        (
            "macro spawn",
            format!(
                "(define-syntax (spawn-now stx) (syntax-case stx () [(_) (begin (spawn-process {touch}) #'(quote done))])) (spawn-now)"
            ),
        ),
        (
            "macro eval",
            "(define-syntax (ev stx) (syntax-case stx () [(_) (with-syntax ([h (eval '(+ 1 2))]) #'h)])) (ev)".into(),
        ),
    ];
    let (mut e, calls) = engine();
    let leaks = probe(&mut e, &probes, ErrorKind::Refused);
    assert!(leaks.is_empty(), "not refused:\n{}", leaks.join("\n"));
    assert!(!marker.exists(), "a process ran");
    assert!(
        std::env::var("NIB_ENGINE_ESCAPE").is_err(),
        "the environment changed"
    );
    assert!(calls.take().is_empty());
    // Nothing evil got defined, and the engine still works.
    assert_eq!(run(&mut e, "(+ 1 2)"), json!(3));
    let out = e.take_output();
    assert!(!out.contains("evil loaded"), "{out}");
}

#[test]
fn refusals_say_why() {
    let (mut e, _) = engine();
    let err = e
        .run_source(
            "t.scm",
            "(define x 1)\n(spawn-process (command \"ls\" '()))",
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    let text = err.to_string();
    assert!(text.contains("is not available to strategies"), "{text}");
    assert!(text.contains("only through nib's primitives"), "{text}");
    assert!(text.starts_with("t.scm:2:"), "{text}");
    // A strategy can catch a refusal like any error.
    let caught = run(
        &mut e,
        "(with-handler (lambda (err) 'caught) (env-var \"HOME\"))",
    );
    assert_eq!(caught, json!("caught"));
}

#[test]
fn output_goes_to_the_engine_not_the_host() {
    let (mut e, _) = engine();
    run(
        &mut e,
        r#"(display "a") (displayln "b") (newline) (write "q") (display "to stderr" (current-error-port))
           (display 42 (stdout)) (write-string "é✓")"#,
    );
    assert_eq!(e.take_output(), "ab\n\n\"q\"to stderr42é✓");
    assert_eq!(e.take_output(), "");
    // Reading host stdin gets end of file at once, not a hang.
    assert_eq!(run(&mut e, "(eof-object? (read-line))"), json!(true));
    // A callback gets output as it is written, by stream.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    e.set_output(move |stream, text| s.lock().unwrap().push((stream, text.to_string())));
    run(
        &mut e,
        r#"(display "x") (display "y" (current-error-port))"#,
    );
    let seen = seen.lock().unwrap().clone();
    use crate::engine::Stream::{Stderr, Stdout};
    let joined: Vec<(crate::engine::Stream, String)> = seen;
    assert!(joined.contains(&(Stdout, "x".to_string())), "{joined:?}");
    assert!(
        joined.iter().any(|(s, t)| *s == Stderr && t.contains('y')),
        "{joined:?}"
    );
    // Capturing in Scheme still works.
    let captured = run(
        &mut e,
        r#"(let ([port (open-output-string)]) (parameterize ([current-output-port port]) (display "inside")) (get-output-string port))"#,
    );
    assert_eq!(captured, json!("inside"));
}

#[test]
fn engines_do_not_share_host_procedures() {
    let dir = scratch(&[]);
    let (mut a, _) = engine_with(&[dir.path()], None);
    a.register("only-in-a", |_| Ok(json!(1)));
    let (mut b, _) = engine_with(&[dir.path()], None);
    assert_eq!(run(&mut a, "(only-in-a)"), json!(1));
    let err = b.run_source("b.scm", "(only-in-a)").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Scheme, "{err}");
}
