//! What goes wrong in the engine, said so a strategy author can act on it:
//! the kind of failure and a message that starts with `file:line:col` when
//! the failure has a place in Scheme source, followed by steel's source
//! excerpt (the offending line, underlined) and the call sites above it.

use std::collections::HashMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

use steel::SteelErr;
use steel::parser::span::Span;
use steel::rerrs::{ErrorKind as SteelKind, back_trace_to_string};
use steel::steel_vm::engine::Engine as SteelEngine;

/// The message every capability refusal carries, so a refusal raised deep
/// inside Scheme is still reported as one.
pub(crate) const REFUSED_MARK: &str = "is not available to strategies";

/// What kind of failure an [`EngineError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The Scheme code failed: a parse or compile error (an unbound name,
    /// bad syntax) or a runtime error it did not catch, including an error
    /// a primitive raised.
    Scheme,
    /// The run took longer than the deadline and was stopped.
    Runaway,
    /// The strategy asked for something strategies may not have: a file,
    /// process, network or environment capability, or a module outside the
    /// strategy directories.
    Refused,
    /// A file could not be read, or the engine could not be set up.
    Load,
    /// A value could not cross between JSON and Scheme (a procedure, NaN, …).
    Conversion,
    /// steel or a host callback panicked; the message says where.
    Internal,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Scheme => "scheme error",
            ErrorKind::Runaway => "runaway strategy",
            ErrorKind::Refused => "refused",
            ErrorKind::Load => "load error",
            ErrorKind::Conversion => "conversion error",
            ErrorKind::Internal => "internal error",
        }
    }
}

/// A place in Scheme source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// An engine failure. `Display` gives the whole report: the summary line
/// (`file:line:col: message` when there is a place), then the source excerpt.
#[derive(Debug, Clone)]
pub struct EngineError {
    kind: ErrorKind,
    summary: String,
    location: Option<Location>,
    report: Option<String>,
}

impl EngineError {
    pub(crate) fn new(kind: ErrorKind, summary: impl Into<String>) -> EngineError {
        EngineError {
            kind,
            summary: summary.into(),
            location: None,
            report: None,
        }
    }

    /// This error with the place (location and source excerpt) of `other`.
    pub(crate) fn with_place(mut self, other: EngineError) -> EngineError {
        self.location = other.location;
        self.report = other.report;
        self
    }

    /// This error placed at `place` (keeping its excerpt).
    pub(crate) fn at(mut self, place: Location) -> EngineError {
        self.location = Some(place);
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The one-line message, without the location or source excerpt.
    pub fn message(&self) -> &str {
        &self.summary
    }

    /// Where in Scheme source the failure happened, when known.
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// The source excerpt steel renders (the line, underlined, and the call
    /// sites above it), when known.
    pub fn report(&self) -> Option<&str> {
        self.report.as_deref()
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{loc}: {}", self.summary)?,
            None => write!(f, "{}", self.summary)?,
        }
        if let Some(report) = &self.report {
            write!(f, "\n{}", report.trim_end())?;
        }
        Ok(())
    }
}

impl std::error::Error for EngineError {}

/// A steel error with a message, for raising from host procedures.
pub(crate) fn steel_error(kind: SteelKind, message: impl Into<String>) -> SteelErr {
    SteelErr::new(kind, message.into())
}

/// Names for sources steel holds without a path (`run_source` text), found
/// again by their content so errors can name them.
#[derive(Default)]
pub(crate) struct SourceNames {
    by_hash: HashMap<u64, String>,
}

impl SourceNames {
    pub fn remember(&mut self, name: &str, text: &str) {
        self.by_hash.insert(hash(text), name.to_string());
    }

    fn find(&self, text: &str) -> Option<&str> {
        self.by_hash.get(&hash(text)).map(String::as_str)
    }
}

fn hash(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// How many call sites to show under the error.
const TRACE_FRAMES: usize = 8;

/// Turn a steel error into an [`EngineError`], with the file, line and
/// source excerpt steel knows for its span.
pub(crate) fn render(vm: &SteelEngine, names: &SourceNames, err: &SteelErr) -> EngineError {
    let raw = err.to_string();
    let kind = if raw.contains(REFUSED_MARK) {
        ErrorKind::Refused
    } else {
        ErrorKind::Scheme
    };
    let (summary, hook_place) = hook_places(vm, names, &summary_of(&raw));
    let mut out = EngineError::new(kind, summary);
    // A hook's failure (a bad result, a wrong arity) is placed where the
    // user registered the hook, not inside nib's prelude that checked it.
    if let Some(place) = hook_place {
        out.location = Some(place);
        return out;
    }

    let Some(span) = err.span() else {
        return out;
    };
    let Some(id) = span.source_id() else {
        return out;
    };
    let Some(text) = vm.get_source(&id) else {
        return out;
    };
    let file = source_name(vm, names, &id, &text);
    // The call sites under the failure, innermost first, where steel knows
    // their source.
    let frames: Vec<(String, String, Span)> = err
        .stack_trace()
        .as_ref()
        .map(|trace| {
            trace
                .trace()
                .iter()
                .filter_map(|frame| {
                    let s = (*frame.span())?;
                    if s.start == 0 && s.end == 0 || s == span {
                        return None;
                    }
                    let fid = s.source_id()?;
                    let ftext = vm.get_source(&fid)?;
                    Some((source_name(vm, names, &fid, &ftext), ftext.to_string(), s))
                })
                .take(TRACE_FRAMES)
                .collect()
        })
        .unwrap_or_default();
    // A failure raised inside nib's own helpers (a limit, a prelude
    // check) is the caller's: the place shown is the first call site in
    // the user's source, and nib's internals stay out of the excerpt.
    let internal = is_internal(&file);
    // Steel often keeps no frame above a helper's failure: then the
    // message alone is shown, without a place inside nib.
    let (at_file, at_text, at_span) = if internal {
        match frames.iter().find(|(name, _, _)| !is_internal(name)) {
            Some((name, ftext, s)) => (name.clone(), ftext.clone(), *s),
            None => return out,
        }
    } else {
        (file.clone(), text.to_string(), span)
    };
    let (line, column) = line_col(&at_text, at_span.start as usize);
    out.location = Some(Location {
        file: at_file,
        line,
        column,
    });

    // steel's renderer unwraps internally; never let it take the host down.
    let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut parts = Vec::new();
        if !internal {
            parts.push(err.emit_result_to_string(&file, &text));
        }
        for (fname, ftext, s) in &frames {
            if internal && is_internal(fname) {
                continue;
            }
            parts.push(back_trace_to_string(fname, ftext, *s));
        }
        parts.join("")
    }));
    out.report = report.ok().filter(|r| !r.trim().is_empty());
    out
}

/// The prelude's hook-place markers (`<<hook@START@SOURCE>>`) in a message
/// replaced by `file:line`; the first marker's place is returned.
pub(crate) fn hook_places(
    vm: &SteelEngine,
    names: &SourceNames,
    message: &str,
) -> (String, Option<Location>) {
    const OPEN: &str = "<<hook@";
    let mut out = String::new();
    let mut first = None;
    let mut rest = message;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len()..];
        let Some(end) = after.find(">>") else {
            out.push_str(&rest[at..]);
            rest = "";
            break;
        };
        let place = after[..end]
            .split_once('@')
            .and_then(|(start, id)| place_of(vm, names, start.parse().ok()?, id.parse().ok()?));
        match &place {
            Some(p) => out.push_str(&format!("{}:{}", p.file, p.line)),
            None => out.push_str("an unknown place"),
        }
        if first.is_none() {
            first = place;
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    (out, first)
}

/// The place of byte `start` of steel's source `id`.
pub(crate) fn place_of(
    vm: &SteelEngine,
    names: &SourceNames,
    start: usize,
    id: u32,
) -> Option<Location> {
    let id = steel::parser::parser::SourceId(id);
    let text = vm.get_source(&id)?;
    let file = source_name(vm, names, &id, &text);
    let (line, column) = line_col(&text, start);
    Some(Location { file, line, column })
}

/// Sources of nib's own that a failure's place should look past.
fn is_internal(name: &str) -> bool {
    name == "nib/limits" || name == "nib/prelude"
}

fn source_name(
    vm: &SteelEngine,
    names: &SourceNames,
    id: &steel::parser::parser::SourceId,
    text: &str,
) -> String {
    if let Some(path) = vm.get_path_for_source_id(id) {
        return display_path(&path);
    }
    names.find(text).unwrap_or("<scheme>").to_string()
}

/// A path as errors show it: relative to the working directory when under it.
pub(crate) fn display_path(path: &Path) -> String {
    if let Ok(cwd) = std::env::current_dir()
        && let Ok(rel) = path.strip_prefix(&cwd)
    {
        return rel.display().to_string();
    }
    path.display().to_string()
}

/// steel's `Error: Kind: message` without the prefix noise.
fn summary_of(raw: &str) -> String {
    let s = raw.trim();
    let s = s.strip_prefix("Error: ").unwrap_or(s);
    // Keep the kind for type and arity errors (it says something); drop the
    // generic one.
    let s = s.strip_prefix("Generic: ").unwrap_or(s);
    s.trim_start().to_string()
}

/// 1-based line and character column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[start..].chars().count() + 1;
    (line, column)
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let text = "(a)\n(b é (c))\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 4), (2, 1));
        // "é" is two bytes; the "(" after it is column 6.
        let at = text.find("(c").unwrap();
        assert_eq!(line_col(text, at), (2, 6));
        assert_eq!(line_col(text, 999), (3, 1));
    }

    #[test]
    fn summary_drops_prefix() {
        assert_eq!(summary_of("Error: Generic: boom"), "boom");
        assert_eq!(
            summary_of("Error: TypeMismatch: car expected a list"),
            "TypeMismatch: car expected a list"
        );
    }
}
