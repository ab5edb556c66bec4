//! What a strategy may load: Scheme modules only from the strategy
//! directories (and nib's shipped `scheme/` directory), and no procedural
//! macros.
//!
//! steel 0.8.3 has no hook that sees a `(require "path")` before it opens
//! the file: a `SourceModuleResolver` is asked only by name, without the
//! requiring file, and steel falls back to the file system when no resolver
//! claims the name. So the engine checks source *before* handing it to
//! steel:
//!
//! 1. The text is parsed with steel's own parser (same tokenizer, comments,
//!    string escapes), so the scan sees exactly the forms steel will see.
//! 2. Every `(require …)` form anywhere in it (not only at top level, and
//!    inside `only-in`, `prefix-in`, `for-syntax`; quoted data excepted) is
//!    taken apart, and each module named by a string is resolved the way
//!    steel resolves it: steel's built-in modules and the modules nib
//!    registers by name first; then the path relative to the requiring file
//!    (or, for source text without a file, the working directory); then
//!    `$STEEL_HOME/cogs`; then steel's search directories in order.
//! 3. The resolved path is canonicalised (`..` folded, symlinks followed)
//!    and must lie inside an allowed directory; otherwise the whole run is
//!    refused before steel reads anything. Allowed files are scanned the
//!    same way, recursively.
//!
//! steel collects a module's requires before it expands macros, so a macro
//! cannot produce a `require` steel would follow; `eval`, `load` and the
//! nested-engine escapes that could compile new source at run time are
//! poisoned (see `sandbox`).
//!
//! Procedural macros (`define-syntax` with a procedure instead of
//! `syntax-rules`) are refused by the same scan: steel runs them in its
//! private macro kernel at load time, where the deadline cannot interrupt
//! them, and defining one needs `eval` in that kernel, which the sandbox
//! poisons. `syntax-rules` macros and steel's own (`struct`, `match`, …)
//! work.
//!
//! As a second line, the engine compares steel's table of compiled modules
//! before and after compiling a program and refuses to run it if a module
//! from outside the allowed directories appeared (a file swapped between
//! the scan and steel's read); that engine then refuses all further runs.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use steel::parser::ast::{ExprKind, List};
use steel::parser::parser::Parser;
use steel::parser::tokens::TokenType;

use super::error::{EngineError, ErrorKind, display_path, line_col};

/// Where the source being checked came from.
pub(crate) enum Origin<'a> {
    /// A file: relative requires resolve from its directory.
    File(&'a Path),
    /// Source text with a name but no file: relative requires resolve from
    /// the working directory, as steel does.
    Text(&'a str),
}

pub(crate) struct Confinement {
    /// Canonical allowed roots.
    allowed: Vec<PathBuf>,
    /// steel's search directories, in its order.
    search_dirs: Vec<PathBuf>,
    /// `$STEEL_HOME/cogs`, which steel searches before the search dirs.
    cogs: Option<PathBuf>,
    /// Module names steel resolves without the file system.
    named: HashSet<String>,
}

impl Confinement {
    pub fn new(allowed: Vec<PathBuf>, search_dirs: Vec<PathBuf>) -> Confinement {
        let named = steel::compiler::modules::BUILT_INS
            .iter()
            .map(|(name, _)| (*name).to_string())
            .collect();
        let cogs = steel::compiler::modules::steel_home().map(|h| PathBuf::from(h).join("cogs"));
        Confinement {
            allowed,
            search_dirs,
            cogs,
            named,
        }
    }

    /// A module name nib registers in memory (`nib/prelude`).
    pub fn add_named(&mut self, name: &str) {
        self.named.insert(name.to_string());
    }

    pub fn allowed(&self) -> &[PathBuf] {
        &self.allowed
    }

    /// Check `source` and, recursively, every file it requires.
    pub fn check(&self, source: &str, origin: Origin<'_>) -> Result<(), EngineError> {
        let mut seen = HashSet::new();
        let (base, name) = match origin {
            Origin::File(path) => {
                let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
                seen.insert(path.clone());
                let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
                (base, display_path(&path))
            }
            Origin::Text(name) => (
                std::env::current_dir().unwrap_or_default(),
                name.to_string(),
            ),
        };
        self.check_text(source, &base, &name, &mut seen)
    }

    fn check_text(
        &self,
        source: &str,
        base: &Path,
        name: &str,
        seen: &mut HashSet<PathBuf>,
    ) -> Result<(), EngineError> {
        let found = scan(source);
        if let Some((name_of_macro, offset)) = found.macros.first() {
            return Err(EngineError::new(
                ErrorKind::Refused,
                format!(
                    "{}: the procedural macro `{name_of_macro}` is refused: a define-syntax with a procedure \
                     runs at load time, outside the deadline and the sandbox; define macros with syntax-rules",
                    at(name, source, *offset)
                ),
            ));
        }
        for (spec, offset) in found.requires {
            let Some(path) = self.resolve(&spec, base, name, source, offset)? else {
                continue; // a module steel holds in memory
            };
            if !seen.insert(path.clone()) {
                continue;
            }
            let text = std::fs::read_to_string(&path).map_err(|e| {
                EngineError::new(
                    ErrorKind::Load,
                    format!(
                        "{}: cannot read module {spec:?} ({}): {e}",
                        at(name, source, offset),
                        path.display()
                    ),
                )
            })?;
            super::nesting::check(&text, &display_path(&path))?;
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            self.check_text(&text, &dir, &display_path(&path), seen)?;
        }
        Ok(())
    }

    /// Resolve a required module like steel does. `None` for a module held
    /// in memory; the canonical file otherwise, refused when outside.
    fn resolve(
        &self,
        spec: &str,
        base: &Path,
        name: &str,
        source: &str,
        offset: usize,
    ) -> Result<Option<PathBuf>, EngineError> {
        if self.named.contains(spec) {
            return Ok(None);
        }
        let mut candidates = vec![base.join(spec)];
        candidates.extend(self.cogs.iter().map(|c| c.join(spec)));
        candidates.extend(self.search_dirs.iter().map(|d| d.join(spec)));
        let Some(found) = candidates.iter().find(|c| c.exists()) else {
            let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
            return Err(EngineError::new(
                ErrorKind::Load,
                format!(
                    "{}: module {spec:?} not found (looked for {})",
                    at(name, source, offset),
                    looked.join(", ")
                ),
            ));
        };
        let canonical = found.canonicalize().map_err(|e| {
            EngineError::new(
                ErrorKind::Load,
                format!(
                    "{}: cannot resolve module {spec:?}: {e}",
                    at(name, source, offset)
                ),
            )
        })?;
        if self.is_allowed(&canonical) {
            Ok(Some(canonical))
        } else {
            Err(EngineError::new(
                ErrorKind::Refused,
                format!(
                    "{}: (require {spec:?}) refused: it resolves to {}, outside the strategy directories ({}); \
                     strategies may only load modules from there",
                    at(name, source, offset),
                    canonical.display(),
                    self.allowed_list()
                ),
            ))
        }
    }

    pub fn is_allowed(&self, canonical: &Path) -> bool {
        self.allowed.iter().any(|root| canonical.starts_with(root))
    }

    pub fn allowed_list(&self) -> String {
        let dirs: Vec<String> = self
            .allowed
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        if dirs.is_empty() {
            "none configured".to_string()
        } else {
            dirs.join(", ")
        }
    }

    /// Is a key of steel's compiled-module table acceptable? Absolute keys
    /// are files and must be inside; other keys are in-memory module names.
    pub fn module_key_allowed(&self, key: &Path) -> bool {
        if key.is_absolute() {
            self.is_allowed(key)
        } else {
            key.to_str().is_some_and(|k| self.named.contains(k))
        }
    }
}

fn at(name: &str, source: &str, offset: usize) -> String {
    let (line, col) = line_col(source, offset);
    format!("{name}:{line}:{col}")
}

/// What the load-time check looks for in a source.
#[derive(Default)]
pub(crate) struct Scan {
    /// Every module named in a `require` form, with the byte offset of the
    /// name.
    pub requires: Vec<(String, usize)>,
    /// Procedural macro definitions: name and byte offset.
    pub macros: Vec<(String, usize)>,
}

/// Scan a source. Source that does not parse yields what parsed before the
/// error: steel parses all of it before resolving anything, so it will
/// refuse the text itself.
pub(crate) fn scan(source: &str) -> Scan {
    let mut out = Scan::default();
    for expr in Parser::new(source, None).without_lowering() {
        let Ok(expr) = expr else { break };
        walk(&expr, &mut out);
    }
    out
}

fn walk(expr: &ExprKind, out: &mut Scan) {
    match expr {
        ExprKind::Require(r) => {
            for m in &r.modules {
                strings_in(m, &mut out.requires);
            }
        }
        ExprKind::List(l) if l.is_quote() => {}
        ExprKind::List(l) if l.is_require() => {
            for m in l.args.iter().skip(1) {
                strings_in(m, &mut out.requires);
            }
        }
        ExprKind::List(l) => {
            if let Some(m) = procedural_macro(l) {
                out.macros.push(m);
            }
            for a in &l.args {
                walk(a, out);
            }
        }
        ExprKind::Begin(b) => {
            for e in &b.exprs {
                walk(e, out);
            }
        }
        // Quoted data and vector literals are data; the parser (without
        // lowering) produces no other forms.
        _ => {}
    }
}

/// A `define-syntax` whose transformer is a procedure rather than
/// `syntax-rules`: its name and offset. steel runs those in its macro
/// kernel at load time, where the deadline cannot stop them (and they need
/// `eval`, which the sandbox takes away).
fn procedural_macro(l: &List) -> Option<(String, usize)> {
    let Some(ExprKind::Atom(head)) = l.args.first() else {
        return None;
    };
    let is_define_syntax = match &head.syn.ty {
        TokenType::DefineSyntax => true,
        TokenType::Identifier(i) => i.resolve() == "define-syntax",
        _ => false,
    };
    if !is_define_syntax {
        return None;
    }
    let rules = l.args.len() == 3
        && matches!(l.args.get(1), Some(ExprKind::Atom(_)))
        && matches!(l.args.get(2), Some(ExprKind::List(body)) if body.is_syntax_rules());
    if rules {
        return None;
    }
    let name = match l.args.get(1) {
        Some(ExprKind::Atom(a)) => a.syn.ty.to_string(),
        Some(ExprKind::List(sig)) => sig.args.first().map(|f| f.to_string()).unwrap_or_default(),
        _ => String::new(),
    };
    Some((name, head.syn.span.start as usize))
}

fn strings_in(expr: &ExprKind, out: &mut Vec<(String, usize)>) {
    if let Some(s) = expr.string_literal() {
        if let ExprKind::Atom(a) = expr {
            out.push((s.to_string(), a.syn.span.start as usize));
        } else {
            out.push((s.to_string(), 0));
        }
        return;
    }
    if let ExprKind::List(l) = expr {
        for a in &l.args {
            strings_in(a, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<String> {
        scan(src).requires.into_iter().map(|(s, _)| s).collect()
    }

    #[test]
    fn finds_requires_everywhere_but_quotes() {
        let src = r#"
            (require "a.scm")
            ; (require "commented.scm")
            #| (require "block.scm") |#
            (begin (require (only-in "b.scm" x) (prefix-in p. "c.scm")))
            (require (for-syntax "d.scm"))
            (define (f) (require "e.scm"))
            '(require "quoted.scm")
            (display "(require \"in-a-string.scm\")")
        "#;
        assert_eq!(names(src), ["a.scm", "b.scm", "c.scm", "d.scm", "e.scm"]);
    }

    #[test]
    fn finds_procedural_macros_not_syntax_rules() {
        let src = r#"
            (define-syntax swap! (syntax-rules () [(_ a b) (let ([t a]) (set! a b) (set! b t))]))
            (define-syntax (home stx) (syntax-case stx () [(_) #'1]))
            (define-syntax m2 (lambda (stx) #'2))
            '(define-syntax (quoted stx) 1)
        "#;
        let names: Vec<String> = scan(src).macros.into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["home", "m2"]);
    }

    #[test]
    fn offsets_point_at_the_name() {
        let src = "(define x 1)\n(require \"a.scm\")";
        let (_, off) = &scan(src).requires[0];
        assert_eq!(line_col(src, *off), (2, 10));
    }
}
