//! The one error type of the edit engine, shaped for a model to act on.
//!
//! A message reads "edit 2 of 3 failed, so nothing was written: <reason>",
//! then the most specific hint on its own lines. `kind` lets callers count
//! failures by cause (the event log and `nib stats` do) without parsing text.

use std::fmt;

/// Why an edit call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The call's shape is wrong: fields, types, forms.
    Invalid,
    /// An edit's old text is empty.
    EmptyOld,
    /// An edit's old and new are the same.
    NoChange,
    /// old matched nowhere, at any level.
    NotFound,
    /// old matched several places and replace_all was not set, or new's
    /// indentation can be read as more than one depth where old matched.
    Ambiguous,
    /// old is absent, new is present, and no record says this call made it.
    NewAlreadyPresent,
}

impl ErrorKind {
    /// A stable name for logs and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Invalid => "invalid",
            ErrorKind::EmptyOld => "empty_old",
            ErrorKind::NoChange => "no_change",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Ambiguous => "ambiguous",
            ErrorKind::NewAlreadyPresent => "new_already_present",
        }
    }
}

/// A failed edit call. Nothing was written when this is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    pub kind: ErrorKind,
    /// The failing edit, 1-based, and how many the call had.
    pub edit: Option<(usize, usize)>,
    /// True when the call was refused before any text was looked at.
    pub validation: bool,
    pub reason: String,
    pub hint: Option<String>,
}

impl EditError {
    pub fn new(kind: ErrorKind, reason: String) -> EditError {
        EditError {
            kind,
            edit: None,
            validation: false,
            reason,
            hint: None,
        }
    }

    /// A malformed call.
    pub fn invalid(reason: String) -> EditError {
        EditError {
            validation: true,
            ..EditError::new(ErrorKind::Invalid, reason)
        }
    }

    pub(crate) fn at(mut self, n: usize, total: usize) -> EditError {
        self.edit = Some((n, total));
        self
    }

    pub(crate) fn with_hint(mut self, hint: Option<String>) -> EditError {
        self.hint = hint;
        self
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.edit {
            Some((n, total)) if !self.validation => write!(
                f,
                "edit {n} of {total} failed, so nothing was written: {}",
                self.reason
            )?,
            _ => f.write_str(&self.reason)?,
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n{hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for EditError {}
