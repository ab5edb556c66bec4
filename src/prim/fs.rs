//! The file primitives: fs-read, fs-write and fs-edit.
//!
//! fs-read records what the session read (and its hash), so fs-write can
//! refuse to replace a file the model has not seen or that changed since.
//! Writes are planned first (read, compute, diff), confirmed with the diff,
//! then committed: one write, atomically, its previous version kept.

use super::args::{FsEdit, FsRead, FsWrite};
use super::error::ToolError;
use super::host::{Host, ToolResult};
use crate::call::Call;
use crate::edit::formats::whole;
use crate::edit::{self, Diff, Edit};
use crate::files::{Encoding, Resolved, content_hash, encode_for, read_text};

/// Lines fs-read returns when no limit is given.
const DEFAULT_LIMIT: usize = 2000;
/// Files larger than this are read only in explicit pages.
const WHOLE_READ_MAX: u64 = 1024 * 1024;
/// Longer lines are cut, with a marker.
const LINE_MAX: usize = 2000;
/// What one fs-read returns at most.
const RESPONSE_MAX: usize = 100 * 1024;
/// Diffs longer than this many lines are summarized in the model's text.
const DIFF_SHOWN_LINES: usize = 80;

/// What a write primitive will do once confirmed.
pub(crate) enum Plan {
    Write(Box<Write>),
    Exec,
    /// Nothing to do (every edit was already applied); the text says so.
    Unchanged(String),
}

pub(crate) struct Write {
    pub(crate) file: Resolved,
    pub(crate) before: Option<String>,
    pub(crate) after: String,
    /// The file's encoding, which `before` was read in and `after` is
    /// written in (UTF-8 for a new file).
    encoding: Encoding,
    pub diff: String,
    summary: String,
    /// For fs-edit: the edits to remember as this file's last.
    edits: Option<Vec<Edit>>,
}

/// Lines of the proposal-to-written diff shown to the model after the user
/// edited a write.
const USER_DIFF_SHOWN_LINES: usize = 40;

impl Write {
    /// The resolved workspace-relative path.
    pub fn rel(&self) -> &str {
        &self.file.rel
    }

    /// The full text the write proposes.
    pub fn after(&self) -> &str {
        &self.after
    }

    /// Write `text` (the user's edit of the proposal) instead. Re-checks the
    /// file still holds what the plan read. Returns the note for the model
    /// (what the user changed, as a short diff), or `None` when the text is
    /// the proposal.
    pub fn use_user_text(&mut self, text: String) -> Result<Option<String>, ToolError> {
        if text == self.after {
            return Ok(None);
        }
        encode_for(&self.file.rel, self.encoding, &text)?;
        let now = if self.file.real.exists() {
            Some(read_text(&self.file)?.text)
        } else {
            None
        };
        if now != self.before {
            return Err(ToolError::ChangedWhileConfirming {
                path: self.file.rel.clone(),
            });
        }
        let change = Diff::between(&self.after, &text).unified(&self.file.rel);
        let shown: Vec<&str> = change.lines().take(USER_DIFF_SHOWN_LINES).collect();
        let more = change.lines().count().saturating_sub(shown.len());
        let mut note = format!(
            "The user changed your proposed text for {} before approving; this was written instead. \
             The change from your proposal to what was written:\n{}",
            self.file.rel,
            shown.join("\n")
        );
        if more > 0 {
            note.push_str(&format!("\n(… {more} more lines; read the file)"));
        }
        let diff = Diff::between(self.before.as_deref().unwrap_or(""), &text);
        let (added, removed) = diff.stats();
        self.summary = format!(
            "wrote {} as the user edited it (+{added} -{removed})",
            self.file.rel
        );
        self.diff = diff.unified(&self.file.rel);
        self.after = text;
        // The model's edits are not what was applied.
        self.edits = None;
        Ok(Some(note))
    }
}

pub(crate) fn read(host: &Host, call: &Call) -> ToolResult {
    let FsRead {
        path,
        offset,
        limit,
        paged,
    } = FsRead::of(call);
    let file = match host.ws.resolve(path) {
        Ok(f) => f,
        Err(e) => return ToolError::from(e).into(),
    };
    if let Ok(meta) = std::fs::metadata(&file.real)
        && meta.is_file()
        && meta.len() > WHOLE_READ_MAX
        && !paged
    {
        return ToolError::TooBig {
            path: file.rel,
            bytes: meta.len(),
        }
        .into();
    }
    let text = match read_text(&file) {
        Ok(t) => t,
        Err(e) => return ToolError::from(e).into(),
    };
    host.state().reads.insert(file.rel.clone(), text.hash());
    host.guard().observe_protected(&file.rel, &text.text);
    let shown = host.guard().shown_store_text(&file.rel, &text.text);
    let lines = numbered(
        &file.rel,
        shown.as_deref().unwrap_or(&text.text),
        offset,
        limit,
    );
    match text.encoding.describe(&text.text) {
        // Said first, so the model sends old in the characters shown.
        Some(said) => ToolResult::ok(format!("({}: {said})\n{lines}", file.rel)),
        None => ToolResult::ok(lines),
    }
}

/// A failed edit of a file with stray bytes whose old holds U+FFFD (the
/// usual stand-in for a byte that is not UTF-8, which such a file never
/// holds): says how fs-read shows those bytes.
fn stray_byte_hint(mut e: edit::EditError, encoding: Encoding, edits: &[Edit]) -> edit::EditError {
    if encoding == Encoding::Utf8WithStrayBytes && edits.iter().any(|x| x.old.contains('\u{fffd}'))
    {
        let said = "the file has bytes that are not UTF-8; fs-read shows each as a private-use \
                    character (U+10FF80-U+10FFFF), never as U+FFFD: copy those lines from \
                    fs-read's output, or leave them out of old";
        e.hint = Some(match e.hint.take() {
            Some(h) => format!("{h}\n{said}"),
            None => said.to_string(),
        });
    }
    e
}

/// What a write's summary says of a file not in UTF-8: the encoding it
/// was read and written in.
fn written_in(encoding: Encoding) -> String {
    match encoding {
        Encoding::Utf8 => String::new(),
        Encoding::Utf8WithStrayBytes => {
            " (the file is UTF-8 with stray non-UTF-8 bytes: those kept as they were)".into()
        }
        other => format!(
            " (the file is not UTF-8: read and written as {}, every other byte kept)",
            other.name()
        ),
    }
}

/// Lines `offset..offset+limit` (1-based), numbered, with what to read next.
fn numbered(rel: &str, text: &str, offset: i64, limit: i64) -> String {
    let first = offset.max(1) as usize;
    let limit = if limit > 0 {
        limit as usize
    } else {
        DEFAULT_LIMIT
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.is_empty() {
        return format!("({rel} is empty)");
    }
    let total = text.lines().count();
    if first > total {
        return format!("({rel} has {total} lines; offset {first} is past the end)");
    }
    let mut out = String::new();
    let mut last = first - 1;
    for (i, line) in text.lines().enumerate().skip(first - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if out.len() + line.len().min(LINE_MAX) > RESPONSE_MAX {
            break;
        }
        out.push_str(&format!("{:>6}\t", i + 1));
        match line.char_indices().nth(LINE_MAX) {
            Some((cut, _)) => {
                out.push_str(&line[..cut]);
                out.push_str(&format!(" … [line cut: {} chars]", line.chars().count()));
            }
            None => out.push_str(line),
        }
        out.push('\n');
        last = i + 1;
    }
    if last < total {
        out.push_str(&format!(
            "(lines {first}-{last} of {total}; continue with (fs-read \"{rel}\" {}))\n",
            last + 1
        ));
    }
    out
}

pub(crate) fn plan_write(host: &Host, call: &Call) -> Result<Plan, ToolError> {
    let FsWrite { path, content } = FsWrite::of(call);
    let file = host.ws.resolve(path)?;
    let mut encoding = Encoding::Utf8;
    let before = if file.exists {
        let current = read_text(&file)?;
        current.ensure_writable(&file.rel)?;
        encoding = current.encoding;
        match host.state().reads.get(&file.rel) {
            None => return Err(ToolError::Unread { path: file.rel }),
            Some(&hash) if hash != current.hash() => {
                return Err(ToolError::Stale { path: file.rel });
            }
            Some(_) => {}
        }
        Some(current.text)
    } else {
        None
    };
    let after = match &before {
        Some(old) => whole::keep_conventions(old, content),
        None => content.to_string(),
    };
    if before.as_deref() == Some(after.as_str()) {
        return Ok(Plan::Unchanged(format!(
            "{} already has this content; nothing written",
            file.rel
        )));
    }
    encode_for(&file.rel, encoding, &after)?;
    let diff = Diff::between(before.as_deref().unwrap_or(""), &after);
    let (added, removed) = diff.stats();
    let mut summary = match before {
        Some(_) => format!("replaced {} (+{added} -{removed})", file.rel),
        None => format!("created {} ({added} lines)", file.rel),
    };
    summary.push_str(&written_in(encoding));
    Ok(Plan::Write(Box::new(Write {
        diff: diff.unified(&file.rel),
        file,
        before,
        after,
        encoding,
        summary,
        edits: None,
    })))
}

pub(crate) fn plan_edit(host: &Host, call: &Call) -> Result<Plan, ToolError> {
    let edit_call = FsEdit::of(call)?;
    let file = host.ws.resolve(edit_call.path)?;
    let current = read_text(&file)?;
    current.ensure_writable(&file.rel)?;
    let previous = host
        .state()
        .last_edits
        .get(&file.rel)
        .cloned()
        .unwrap_or_default();
    let applied = edit::apply(&current.text, &edit_call.edits, &previous)
        .map_err(|e| stray_byte_hint(e, current.encoding, &edit_call.edits))?;
    let made = applied.made(&edit_call.edits);
    let notes = applied.notes.join("\n");
    if !applied.changed {
        return Ok(Plan::Unchanged(format!(
            "every edit was already applied to {}; nothing written\n{notes}",
            file.rel
        )));
    }
    // Refused before the confirm: nothing is asked that cannot be written.
    current.encode(&file.rel, &applied.text)?;
    let (added, removed) = applied.diff.stats();
    let mut summary = format!(
        "applied {} of {} edits to {} (+{added} -{removed}){}",
        made.len(),
        edit_call.edits.len(),
        file.rel,
        written_in(current.encoding)
    );
    if !notes.is_empty() {
        summary.push('\n');
        summary.push_str(&notes);
    }
    Ok(Plan::Write(Box::new(Write {
        diff: applied.diff.unified(&file.rel),
        file,
        before: Some(current.text),
        after: applied.text,
        encoding: current.encoding,
        summary,
        edits: Some(made),
    })))
}

/// Carries out a confirmed write. A file that changed on disk since the
/// plan is left alone (`ToolError::changed_on_disk`: the host plans again).
pub(crate) fn commit(host: &Host, w: Write) -> Result<ToolResult, ToolError> {
    let before = match &w.before {
        Some(text) => Some(encode_for(&w.file.rel, w.encoding, text)?),
        None => None,
    };
    let after = encode_for(&w.file.rel, w.encoding, &w.after)?;
    let version = host
        .versions
        .write(&w.file, before.as_deref(), &after)?
        .to_string();
    {
        let mut state = host.state();
        state.written.insert(w.file.rel.clone());
        // The model made this content, so it counts as read.
        state.reads.insert(w.file.rel.clone(), content_hash(&after));
        if let Some(edits) = w.edits {
            state.last_edits.insert(w.file.rel.clone(), edits);
        } else {
            state.last_edits.remove(&w.file.rel);
        }
    }
    let shown = w.diff.lines().count();
    let text = if shown <= DIFF_SHOWN_LINES {
        format!("{}\n{}", w.summary, w.diff)
    } else {
        format!(
            "{}\n(the diff has {shown} lines; read the file to see the result)",
            w.summary
        )
    };
    let mut result = ToolResult::ok(text);
    result.diff = w.diff;
    result.version = Some(version);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_pages() {
        let text = "a\nb\r\nc\n";
        assert_eq!(
            numbered("f", text, 0, 0),
            "     1\ta\n     2\tb\n     3\tc\n"
        );
        assert_eq!(
            numbered("f", text, 2, 1),
            "     2\tb\n(lines 2-2 of 3; continue with (fs-read \"f\" 3))\n"
        );
        assert_eq!(numbered("f", "", 0, 0), "(f is empty)");
        assert!(numbered("f", text, 9, 0).contains("past the end"));
        let long = "x".repeat(2500);
        assert!(numbered("f", &long, 0, 0).contains("[line cut: 2500 chars]"));
    }

    #[test]
    fn conventions_kept_on_replace() {
        assert_eq!(
            whole::keep_conventions("\u{feff}a\r\nb\r\n", "x\ny\n"),
            "\u{feff}x\r\ny\r\n"
        );
        assert_eq!(whole::keep_conventions("a\nb\n", "x\r\n"), "x\r\n");
    }
}
