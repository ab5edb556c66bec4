//! Which Scheme a session runs, and in what order: the shipped strategies
//! (by name), strategy and hook files, and a workspace's own hooks.
//!
//! Load order (later files see, and may build on, what earlier ones
//! defined; hooks run in the order they were registered):
//!
//! 1. the default loop (`default.scm`), which defines `run`;
//! 2. the hooks of the user's config (`hooks = [...]`);
//! 3. the workspace's `.nib/hooks/*.scm`, by name: they may only tighten
//!    (refuse a call, keep a task going), may not rebind a name that is
//!    already defined, and may not mutate state or require modules —
//!    checked on their source before they load;
//! 4. the strategy (`--strategy`, or the config's `strategy`): a hook file,
//!    or a whole loop that defines `run` again;
//! 5. the `--hook` files, in the order given.
//!
//! A name is a shipped strategy (`check`, `compact`, `plan`, `policy`,
//! `text-edits`, `default`); anything else is a file, relative to the
//! current directory.

use std::path::{Path, PathBuf};

use crate::engine::{Engine, EngineError, ErrorKind};

/// The strategies nib ships, compiled into the binary.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "default",
        include_str!("../../scheme/strategies/default.scm"),
    ),
    (
        "text-edits",
        include_str!("../../scheme/strategies/text-edits.scm"),
    ),
    ("check", include_str!("../../scheme/strategies/check.scm")),
    (
        "compact",
        include_str!("../../scheme/strategies/compact.scm"),
    ),
    ("plan", include_str!("../../scheme/strategies/plan.scm")),
    ("policy", include_str!("../../scheme/strategies/policy.scm")),
];

/// A strategy or hook file: one nib ships, or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Shipped(&'static str),
    File(PathBuf),
}

impl Source {
    /// `spec` as a shipped name (`check`, `check.scm`) or a file path
    /// (relative paths from the current directory).
    pub fn resolve(spec: &Path) -> Result<Source, String> {
        let text = spec.to_string_lossy();
        let bare = text.strip_suffix(".scm").unwrap_or(&text);
        let is_plain_name = spec.components().count() == 1;
        if let Some((name, _)) = SHIPPED.iter().find(|(n, _)| *n == bare)
            && (is_plain_name && !spec.exists())
        {
            return Ok(Source::Shipped(name));
        }
        let path = if spec.is_absolute() {
            spec.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| format!("cannot read the current directory: {e}"))?
                .join(spec)
        };
        match std::fs::canonicalize(&path) {
            Ok(p) if p.is_file() => Ok(Source::File(p)),
            Ok(p) => Err(format!("{} is not a file", p.display())),
            Err(_) => {
                let near = path
                    .parent()
                    .and_then(|dir| did_you_mean(&text, dir))
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                Err(format!(
                    "no strategy {}: not a file, and not one nib ships ({}){near} (`nib strategy list` lists them)",
                    spec.display(),
                    shipped_names()
                ))
            }
        }
    }

    pub fn name(&self) -> String {
        match self {
            Source::Shipped(n) => (*n).to_string(),
            Source::File(p) => p.display().to_string(),
        }
    }

    /// The directory its `require`s may load from.
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            Source::File(p) => p.parent().map(Path::to_path_buf),
            Source::Shipped(_) => None,
        }
    }

    fn source(&self) -> Result<String, EngineError> {
        match self {
            Source::Shipped(name) => Ok(SHIPPED
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, s)| s.to_string())
                .unwrap_or_default()),
            Source::File(p) => std::fs::read_to_string(p).map_err(|e| {
                EngineError::new(ErrorKind::Load, format!("cannot read {}: {e}", p.display()))
            }),
        }
    }

    /// Runs it in `engine`.
    pub(super) fn load(&self, engine: &mut Engine) -> Result<(), EngineError> {
        match self {
            Source::Shipped(name) => {
                let text = self.source()?;
                engine.run_source(&format!("{name}.scm"), &text).map(drop)
            }
            Source::File(p) => engine.run_file(p).map(drop),
        }
    }
}

fn shipped_names() -> String {
    SHIPPED
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The workspace's hook files, `.nib/hooks/*.scm` sorted by name.
pub(super) fn workspace_hooks(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root.join(".nib").join("hooks")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "scm") && p.is_file())
        .collect();
    files.sort();
    files
}

/// Loads a workspace's hook file so that it can only tighten: its source
/// may hold only `(define ...)` of new names and `(on ...)` at top level,
/// and no mutation or `require`; the hooks it registers are marked
/// tightening-only.
pub(super) fn load_workspace_hook(engine: &mut Engine, path: &Path) -> Result<(), EngineError> {
    let refuse = |why: String| {
        EngineError::new(
            ErrorKind::Refused,
            format!(
                "{}: a workspace hook may only add tightening hooks: {why}",
                path.display()
            ),
        )
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        EngineError::new(
            ErrorKind::Load,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    for word in symbols(&text) {
        if matches!(
            word.as_str(),
            "set!"
                | "set-box!"
                | "require"
                | "define-syntax"
                | "syntax-rules"
                | "restrict-hooks-from!"
        ) || word.starts_with("vector-set")
            || word.starts_with("hash-insert")
        {
            return Err(refuse(format!("`{word}` is not allowed in one")));
        }
    }
    for form in top_level_heads(&text) {
        match form.as_slice() {
            [head, ..] if head == "on" => {}
            [head, name, ..] if head == "define" => {
                if engine.defines(name) {
                    return Err(refuse(format!(
                        "it defines `{name}` again, which is already defined"
                    )));
                }
            }
            other => {
                return Err(refuse(format!(
                    "a top-level `({} ...)`: only (define ...) and (on ...) are allowed",
                    other.first().map_or("", String::as_str)
                )));
            }
        }
    }
    let before = engine.hook_count()?;
    engine.run_file(path)?;
    engine.restrict_hooks_from(before)
}

/// Every symbol-like word of Scheme source, outside strings and comments.
fn symbols(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    let flush = |w: &mut String, out: &mut Vec<String>| {
        if !w.is_empty() {
            out.push(std::mem::take(w));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                flush(&mut word, &mut out);
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            ';' => {
                flush(&mut word, &mut out);
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            c if c.is_whitespace() || "()[]'`,".contains(c) => flush(&mut word, &mut out),
            c => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The first two words of each top-level form (`define`, the name).
fn top_level_heads(text: &str) -> Vec<Vec<String>> {
    let mut forms = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                while let Some((_, c)) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            ';' => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '(' | '[' => {
                if depth == 0 {
                    start = i + 1;
                }
                depth += 1;
            }
            ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    forms.push(symbols(&text[start..i]).into_iter().take(2).collect());
                }
            }
            _ => {}
        }
    }
    forms
}

/// The strategy files found from `dir`: its `*.scm` and its workspace's
/// `.nib/hooks/*.scm`.
pub fn found(dir: &Path) -> Vec<PathBuf> {
    let scm = |d: &Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "scm") && p.is_file())
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    };
    let mut out = scm(dir);
    out.extend(scm(&dir.join(".nib").join("hooks")));
    out
}

/// The shipped name or nearby file `wrong` probably meant.
pub fn did_you_mean(wrong: &str, dir: &Path) -> Option<String> {
    let bare = wrong.strip_suffix(".scm").unwrap_or(wrong);
    let mut candidates: Vec<String> = SHIPPED.iter().map(|(n, _)| n.to_string()).collect();
    candidates.extend(
        found(dir)
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())),
    );
    candidates
        .into_iter()
        .map(|c| {
            let d = distance(bare, c.strip_suffix(".scm").unwrap_or(&c));
            (d, c)
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance (insertions, deletions, substitutions) between two names.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested() {
        let here = Path::new("/nonexistent");
        assert_eq!(did_you_mean("chek", here).as_deref(), Some("check"));
        assert_eq!(
            did_you_mean("compakt.scm", here).as_deref(),
            Some("compact")
        );
        assert_eq!(did_you_mean("zzzzzzzz", here), None);
        assert_eq!(distance("plan", "plans"), 1);
        let e = Source::resolve(Path::new("polcy")).unwrap_err();
        assert!(e.contains("did you mean `policy`?"), "{e}");
    }

    #[test]
    fn shipped_names_and_files_resolve() {
        assert_eq!(
            Source::resolve(Path::new("check")).unwrap(),
            Source::Shipped("check")
        );
        assert_eq!(
            Source::resolve(Path::new("compact.scm")).unwrap(),
            Source::Shipped("compact")
        );
        let e = Source::resolve(Path::new("no-such-strategy")).unwrap_err();
        assert!(e.contains("check, compact"), "{e}");
    }

    #[test]
    fn top_level_forms_are_read_with_strings_and_comments_skipped() {
        let text = "; (set! x 1)\n(define (guard-rm call) \"(set! y)\" call)\n(on \"before-tool\" guard-rm)\n(define limit 3)\n";
        let heads = top_level_heads(text);
        assert_eq!(heads.len(), 3, "{heads:?}");
        assert_eq!(heads[0], ["define", "guard-rm"]);
        assert_eq!(heads[1][0], "on");
        assert_eq!(heads[2], ["define", "limit"]);
        assert!(!symbols(text).iter().any(|w| w == "set!"));
        assert!(symbols("(set! x 2)").iter().any(|w| w == "set!"));
    }
}
