//! `require` is confined to the strategy directories.

use serde_json::json;

use super::support::{canonical, engine_with, path_str, run, scratch};
use crate::engine::ErrorKind;

fn strategies() -> tempfile::TempDir {
    scratch(&[
        (
            "main.scm",
            "(require \"lib/util.scm\")\n(define (turn n) (util-double n))\n(turn 21)\n",
        ),
        (
            "lib/util.scm",
            // A module sees the primitives and the prelude.
            "(provide util-double util-read)\n\
             (define (util-double x) (* 2 x))\n\
             (define (util-read p) (tool-text (fs-read p)))\n",
        ),
        (
            "lib/sibling.scm",
            "(require \"util.scm\")\n(provide twice)\n(define (twice x) (util-double (util-double x)))\n",
        ),
    ])
}

#[test]
fn a_strategy_requires_a_sibling_module() {
    let dir = strategies();
    let (mut e, calls) = engine_with(&[dir.path()], None);
    assert_eq!(e.run_file(&dir.path().join("main.scm")).unwrap(), json!(42));
    // What the file defined and what its module provides are callable.
    assert_eq!(e.call("turn", vec![json!(5)]).unwrap(), json!(10));
    assert_eq!(
        e.call("util-read", vec![json!("a.rs")]).unwrap(),
        json!("fs-read done")
    );
    assert_eq!(calls.take().len(), 1);
    // A module requiring its sibling, from source text, through the search path.
    assert_eq!(
        run(&mut e, "(require \"lib/sibling.scm\") (twice 3)"),
        json!(12)
    );
}

#[test]
fn requires_outside_the_strategy_dirs_are_refused_before_loading() {
    let outside = scratch(&[(
        "evil.scm",
        "(provide x)\n(define x 1)\n(displayln \"evil loaded\")\n",
    )]);
    let evil = path_str(&outside.path().join("evil.scm"));
    let dir = scratch(&[
        ("main.scm", "(define y 2)\n"),
        ("inner/ok.scm", "(provide ok)\n(define ok 1)\n"),
    ]);
    // A module inside that requires one outside, and a symlink out.
    std::fs::write(
        dir.path().join("inner/launder.scm"),
        format!("(require \"{evil}\")\n(provide z)\n(define z 1)\n"),
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path().join("evil.scm"), dir.path().join("link.scm"))
        .unwrap();
    // `../` from the strategy dir to the outside file.
    let rel = pathdiff(
        &canonical(outside.path()).join("evil.scm"),
        &canonical(dir.path()),
    );

    let (mut e, _) = engine_with(&[dir.path()], None);
    let mut cases = vec![
        format!("(require \"{evil}\")"),
        format!("(require \"{rel}\")"),
        format!("(require (only-in \"{evil}\" x))"),
        format!("(require (prefix-in e. \"{evil}\"))"),
        format!("(require (for-syntax \"{evil}\"))"),
        format!("(begin (require \"{evil}\"))"),
        "(require \"/etc/hostname\")".to_string(),
        "(require \"inner/launder.scm\")".to_string(),
    ];
    if cfg!(unix) {
        cases.push("(require \"link.scm\")".to_string());
    }
    for src in &cases {
        // From a file inside the strategy dir, and from source text.
        let file = dir.path().join("probe.scm");
        std::fs::write(&file, src).unwrap();
        for result in [e.run_file(&file), e.run_source("probe.scm", src)] {
            let err = result.expect_err(src);
            assert_eq!(err.kind(), ErrorKind::Refused, "{src}: {err}");
            let text = err.to_string();
            assert!(
                text.contains("refused") && text.contains("outside the strategy directories"),
                "{src}: {text}"
            );
        }
    }
    assert!(!e.take_output().contains("evil loaded"));
    // Nothing leaked, and allowed requires still work on the same engine.
    assert_eq!(run(&mut e, "(require \"inner/ok.scm\") ok"), json!(1));
    // A relative require from a file resolves from the file's directory.
    assert_eq!(
        e.run_file(&dir.path().join("main.scm")).unwrap(),
        serde_json::Value::Null
    );
}

#[test]
fn a_missing_module_is_a_clear_load_error() {
    let dir = scratch(&[]);
    let (mut e, _) = engine_with(&[dir.path()], None);
    let err = e
        .run_source("m.scm", "\n(require \"nope.scm\")")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Load, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("m.scm:2:10: module \"nope.scm\" not found"),
        "{text}"
    );
}

#[test]
fn strategy_dirs_must_exist() {
    let (host, _) = super::support::recording_host();
    let opts = crate::engine::EngineOptions {
        strategy_dirs: vec!["/nonexistent/strategies".into()],
        deadline: None,
    };
    let err = crate::engine::Engine::new(&[], host, opts)
        .err()
        .expect("must fail");
    assert_eq!(err.kind(), ErrorKind::Load);
    assert!(err.to_string().contains("/nonexistent/strategies"), "{err}");
}

/// `to` relative to `from` (both canonical), with `..` segments.
fn pathdiff(to: &std::path::Path, from: &std::path::Path) -> String {
    let to: Vec<_> = to.components().collect();
    let from: Vec<_> = from.components().collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}
