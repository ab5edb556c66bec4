//! The dependency direction of docs/architecture.md, checked on the source:
//! every `crate::<module>` path in a module's production code must name a
//! module that module may depend on, so no cycle can come back. Test code
//! (from a file's first `#[cfg(test)]` on, and `tests.rs` files) may reach
//! further, to build fixtures.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Each top-level module and the modules it may use, lowest layer first.
const ALLOWED: &[(&str, &[&str])] = &[
    // Leaves: pure text logic, IO, what a call is, wire protocols, the log.
    ("edit", &[]),
    ("files", &[]),
    ("call", &[]),
    ("model", &[]),
    ("session", &[]),
    // Judging and running calls.
    ("guard", &["call", "files"]),
    ("prim", &["call", "guard", "files", "edit"]),
    ("engine", &["call", "prim", "edit"]),
    // What every client shares.
    ("settings", &["model", "guard", "files", "session"]),
    (
        "agent",
        &[
            "call", "engine", "prim", "guard", "files", "model", "session", "settings",
        ],
    ),
    // Clients: each uses the layers below, never another client.
    (
        "scenario",
        &[
            "agent", "call", "engine", "prim", "guard", "files", "model", "session", "edit",
        ],
    ),
    (
        "headless",
        &[
            "agent", "call", "engine", "prim", "guard", "files", "model", "session", "settings",
        ],
    ),
    (
        "tui",
        &[
            "agent", "call", "engine", "prim", "guard", "files", "model", "session", "settings",
            "edit",
        ],
    ),
    (
        "console",
        &[
            "agent", "call", "engine", "prim", "guard", "files", "model", "session", "settings",
            "edit",
        ],
    ),
    // The command line dispatches to every client.
    (
        "cli",
        &[
            "agent", "call", "engine", "prim", "guard", "files", "model", "session", "settings",
            "edit", "headless", "tui", "scenario", "console",
        ],
    ),
];

/// The production part of a source file: up to its first `#[cfg(test)]`.
fn production(text: &str) -> &str {
    match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The `crate::<module>` names a text uses.
fn uses(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // `crate::{a, b}` groups are not used in this tree; a name is the
        // first path segment.
        if !name.is_empty() && !rest[..i].ends_with('$') {
            out.insert(name);
        }
        rest = after;
    }
    out
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    let mut seen_modules = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap_or(file);
        let first = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        if rel.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        seen_modules.insert(module.clone());
        let Some(may) = allowed.get(module.as_str()) else {
            violations.push(format!(
                "{}: module `{module}` is not in the layering table of tests/layering.rs (add it, with what it may use)",
                rel.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).unwrap_or_default();
        for used in uses(production(&text)) {
            if used != module && !may.contains(&used.as_str()) {
                violations.push(format!(
                    "{}: `{module}` uses `crate::{used}`, which is not below it",
                    rel.display()
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    // The table names every module, and nothing that does not exist.
    let listed: BTreeSet<String> = allowed.keys().map(|k| k.to_string()).collect();
    assert_eq!(listed, seen_modules, "the layering table's modules");
}

#[test]
fn the_table_has_no_cycle() {
    // Each module may only use modules listed before it.
    let mut before = BTreeSet::new();
    for (module, may) in ALLOWED {
        for used in *may {
            assert!(
                before.contains(used),
                "`{module}` may use `{used}`, which is not below it in the table"
            );
        }
        before.insert(*module);
    }
}
