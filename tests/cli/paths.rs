//! Paths are pinned to the workspace: symlinks inside are written through,
//! anything that lands outside is refused.

use std::fs;
use std::os::unix::fs::symlink;

use crate::support::{Ws, call, ndjson};

#[test]
fn symlink_inside_writes_the_target_and_keeps_the_link() {
    let ws = Ws::new();
    ws.write("real/target.txt", "old line\n");
    symlink("real/target.txt", ws.path("link.txt")).unwrap();
    let run = ws.apply_json(&call("link.txt", "old line", "new line"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.statuses(), ["applied"]);
    assert_eq!(ws.read_str("real/target.txt"), "new line\n");
    let meta = fs::symlink_metadata(ws.path("link.txt")).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    assert_eq!(
        fs::read_link(ws.path("link.txt")).unwrap(),
        std::path::Path::new("real/target.txt")
    );
    assert_eq!(ws.read_str("link.txt"), "new line\n");
}

#[test]
fn symlinked_directory_inside_is_followed() {
    let ws = Ws::new();
    ws.write("src/a.rs", "fn a() {}\n");
    symlink(ws.path("src"), ws.path("srclink")).unwrap();
    let run = ws.apply(&call("srclink/a.rs", "fn a()", "fn b()"), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("src/a.rs"), "fn b() {}\n");
    assert!(
        fs::symlink_metadata(ws.path("srclink"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn symlink_pointing_outside_is_refused() {
    let ws = Ws::new();
    let victim = ws.outside().join("victim.txt");
    fs::write(&victim, "keep me\n").unwrap();
    symlink(&victim, ws.path("notes.md")).unwrap();
    // A relative link that climbs out through a directory, too.
    fs::create_dir(ws.path("sub")).unwrap();
    symlink("../..", ws.path("sub/up")).unwrap();
    let input = ndjson(&[
        call("notes.md", "keep me", "pwned"),
        call("sub/up/victim.txt", "keep me", "pwned"),
    ]);
    let run = ws.apply_json(&input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.statuses(), ["failed", "failed"]);
    for r in run.reports() {
        let msg = r["message"].as_str().unwrap();
        assert!(msg.contains("outside the workspace"), "{msg}");
    }
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(
        fs::symlink_metadata(ws.path("notes.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // Human output too.
    let run = ws.apply(&call("notes.md", "keep me", "pwned"), &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("outside the workspace"), "{run:?}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me\n");
}

#[test]
fn dotdot_and_absolute_paths_outside_are_refused() {
    let ws = Ws::new();
    let victim = ws.outside().join("x");
    fs::write(&victim, "outside\n").unwrap();
    let abs = victim.to_str().unwrap().to_string();
    let sneaky = format!("{}/../x", ws.root().display());
    let input = ndjson(&[
        call("../x", "outside", "changed"),
        call(&abs, "outside", "changed"),
        call(&sneaky, "outside", "changed"),
    ]);
    let run = ws.apply_json(&input, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.statuses(), ["failed", "failed", "failed"]);
    for r in run.reports() {
        let msg = r["message"].as_str().unwrap();
        assert!(msg.contains("outside the workspace"), "{msg}");
    }
    assert_eq!(fs::read_to_string(&victim).unwrap(), "outside\n");
    assert!(!ws.has_nib_dir());
}

#[test]
fn out_and_back_in_and_absolute_inside_are_fine() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let abs = ws.path("a.txt").to_str().unwrap().to_string();
    let input = ndjson(&[
        call("../ws/a.txt", "a", "b"),
        call(&abs, "b", "c"),
        call("./sub/../a.txt", "c", "d"),
    ]);
    let run = ws.apply_json(&input, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read_str("a.txt"), "d\n");
    for r in run.reports() {
        assert_eq!(r["path"], "a.txt");
    }
}
