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

/// A source file's module path from `src/` (`prim/tools/shell.rs` is
/// `prim::tools::shell`; `mod.rs` names its directory).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_string();
    }
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// The sibling files (children of the same parent module) a file's
/// production code names, through `super::x` or `crate::...::x`.
fn siblings_used(me: &[String], text: &str, modules: &BTreeSet<Vec<String>>) -> BTreeSet<String> {
    let parent = &me[..me.len().saturating_sub(1)];
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in text.match_indices("super::") {
        let name = ident(&text[i + "super::".len()..]);
        let mut path = parent.to_vec();
        path.push(name.clone());
        if modules.contains(&path) {
            out.insert(name);
        }
    }
    for (i, _) in text.match_indices("crate::") {
        let mut path = Vec::new();
        let mut rest = &text[i + "crate::".len()..];
        loop {
            let name = ident(rest);
            if name.is_empty() {
                break;
            }
            path.push(name.clone());
            rest = &rest[name.len()..];
            match rest.strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        // The deepest module the path names, when it is a sibling.
        while !path.is_empty() && !modules.contains(&path) {
            path.pop();
        }
        if path.len() == me.len() && path[..path.len() - 1] == *parent {
            out.extend(path.last().cloned());
        }
    }
    out.remove(me.last().map(String::as_str).unwrap_or_default());
    out
}

#[test]
fn no_two_files_of_one_module_use_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    let files: Vec<(Vec<String>, String)> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap_or(f);
            let text = fs::read_to_string(f).unwrap_or_default();
            (module_path(rel), production(&text).to_string())
        })
        .collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut edges = BTreeSet::new();
    for (me, text) in &files {
        if me.is_empty() {
            continue;
        }
        for sibling in siblings_used(me, text, &modules) {
            edges.insert((me.join("::"), {
                let mut p = me[..me.len() - 1].to_vec();
                p.push(sibling);
                p.join("::")
            }));
        }
    }
    let cycles: Vec<String> = edges
        .iter()
        .filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone())))
        .map(|(a, b)| format!("`{a}` and `{b}` use each other (move what both need into one of them, or a third file)"))
        .collect();
    assert!(cycles.is_empty(), "{}", cycles.join("\n"));
}
