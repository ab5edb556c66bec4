//! `nib script`: Scheme programs against a workspace, through the guard.

use std::fs;

use crate::support::{Ws, nib};

fn script(ws: &Ws, name: &str, text: &str) -> String {
    let dir = ws.outside().join("scripts");
    fs::create_dir_all(&dir).expect("scripts dir");
    let path = dir.join(name);
    fs::write(&path, text).expect("script");
    path.display().to_string()
}

#[test]
fn a_script_reads_and_edits_through_the_guard() {
    let ws = Ws::new();
    fs::write(ws.root().join("a.py"), "def f():\n    return 1\n").expect("file");
    let file = script(
        &ws,
        "fix.scm",
        "(displayln (tool-text (fs-read \"a.py\")))\n\
         (tool-ok? (fs-edit \"a.py\" \"return 1\" \"return 2\"))\n",
    );
    let run = nib(&["script", &file, "--approve", "writes"], ws.root(), None);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "     1\tdef f():\n     2\t    return 1\n\ntrue\n"
    );
    let after = fs::read_to_string(ws.root().join("a.py")).expect("read");
    assert_eq!(after, "def f():\n    return 2\n");
}

#[test]
fn without_approval_writes_are_refused() {
    let ws = Ws::new();
    fs::write(ws.root().join("a.py"), "x = 1\n").expect("file");
    let file = script(
        &ws,
        "w.scm",
        "(define r (fs-edit \"a.py\" \"x = 1\" \"x = 2\"))\n(list (tool-refused? r) (tool-text r))\n",
    );
    let run = nib(&["script", &file], ws.root(), None);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("true") && run.stdout.contains("not approved"),
        "{}",
        run.stdout
    );
    assert_eq!(
        fs::read_to_string(ws.root().join("a.py")).expect("read"),
        "x = 1\n"
    );
}

#[test]
fn the_sandbox_holds_and_errors_have_file_and_line() {
    let ws = Ws::new();
    let file = script(
        &ws,
        "escape.scm",
        "(define x 1)\n(open-input-file \"/etc/hostname\")\n",
    );
    let run = nib(&["script", &file], ws.root(), None);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("escape.scm:2:"), "{}", run.stderr);
    let file = script(&ws, "env.scm", "(env-var \"HOME\")\n");
    let run = nib(&["script", &file], ws.root(), None);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("not available to strategies"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_runaway_script_is_stopped() {
    let ws = Ws::new();
    let file = script(&ws, "loop.scm", "(let loop () (loop))\n");
    let run = nib(&["script", &file, "--timeout", "1"], ws.root(), None);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("was stopped"), "{}", run.stderr);
}
