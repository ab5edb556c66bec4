//! The example in the repository, run as the README says.

use std::fs;
use std::path::Path;

use crate::support::nib;

#[test]
fn hello_example_dry_run() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = crate_dir.join("examples/hello");
    let snapshot = || {
        let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let bytes = fs::read(e.path()).unwrap_or_default();
                (e.file_name().into_string().unwrap(), bytes)
            })
            .collect();
        files.sort();
        files
    };
    let before = snapshot();
    assert!(before.iter().any(|(n, _)| n == "greet.py"), "{before:?}");
    let run = nib(
        &[
            "apply",
            "--root",
            "examples/hello",
            "--dry-run",
            "examples/hello/edits.jsonl",
        ],
        crate_dir,
        None,
    );
    // The third call fails on purpose, to show a hint.
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("the nearest lines in the file"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("3 calls: 2 applied, 0 already applied, 1 failed (dry run: nothing written)"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("would apply 2 of 2 edits to greet.py"),
        "{run:?}"
    );
    // Nothing written: same files, same bytes, no .nib/.
    assert_eq!(snapshot(), before);
}
