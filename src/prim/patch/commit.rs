//! Writing a planned text: every file once, atomically, its previous
//! version kept for undo. A text that changes two files or more (a move
//! counts twice) is one patch of the versions store (`files::Patch`): a
//! journal before the first write, so a kill half way is rolled back at
//! the next start, and `nib undo` undoes every file of it at once. A write
//! that fails half way puts back the files written before it, so the text
//! is written all or none at the disk too.

use std::borrow::Cow;

use super::plan::{FileFailure, Plan};
use crate::files::{FileError, Resolved, Versions, Workspace};

/// Write every plan, in order, each keeping its previous version; the
/// versions-store id of each write (None: nothing to write). When a write
/// fails, the files written before it are put back and the rest are not
/// written.
pub fn write_all(
    ws: &Workspace,
    versions: &Versions,
    plans: &[Plan],
) -> Vec<Result<Option<String>, FileFailure>> {
    let finals = match finals(plans) {
        Ok(f) => f,
        Err(e) => return plans.iter().map(|p| Err(not_written(p, &e))).collect(),
    };
    if finals.len() < 2 {
        return write_each(versions, plans);
    }
    let finals: Vec<(&str, Option<&[u8]>)> =
        finals.iter().map(|(p, b)| (*p, b.as_deref())).collect();
    let patch = match versions.begin_patch(&finals) {
        Ok(p) => p,
        Err(e) => return plans.iter().map(|p| Err(not_written(p, &e))).collect(),
    };
    let mut out = write_each(patch.store(), plans);
    let Some(bad) = out
        .iter()
        .find_map(|r| r.as_ref().err())
        .map(|f| f.path.clone())
    else {
        patch.commit();
        return out;
    };
    let rolled = patch.roll_back(ws);
    for (plan, result) in plans.iter().zip(&mut out) {
        if result.is_err() {
            continue;
        }
        let rel = plan.target();
        let message = match &rolled {
            Ok(done) if done.kept.iter().any(|k| k == rel) => format!(
                "{rel}: written, and changed by someone else since, so it was kept when the \
                 other files of this input were put back because writing {bad} failed"
            ),
            Ok(_) => format!(
                "{rel}: written, then put back, because writing {bad} failed; nothing from this \
                 input was written"
            ),
            Err(e) => format!(
                "{rel}: written, but putting it back after writing {bad} failed did not work \
                 ({e}); run `nib undo` to undo this input's files"
            ),
        };
        *result = Err(FileFailure::new(rel.to_string(), "not_written", message));
    }
    out
}

fn not_written(plan: &Plan, e: &FileError) -> FileFailure {
    let rel = &plan.file.rel;
    FileFailure::new(rel.clone(), "write", format!("{rel}: not written: {e}"))
}

/// A file's path and the bytes it holds once the patch is whole (None:
/// no file).
type Final<'p> = (&'p str, Option<Cow<'p, [u8]>>);

/// What each changed file holds once every plan is written, in its
/// encoding; a move is two files.
fn finals(plans: &[Plan]) -> Result<Vec<Final<'_>>, FileError> {
    let mut out = Vec::new();
    for plan in plans.iter().filter(|p| !p.changes_nothing()) {
        let after = plan.after_bytes()?;
        match &plan.to {
            Some((dest, _)) => {
                out.push((dest.rel.as_str(), after));
                out.push((plan.file.rel.as_str(), None));
            }
            None => out.push((plan.file.rel.as_str(), after)),
        }
    }
    Ok(out)
}

/// Each plan written in order; after a failure the rest are not written.
fn write_each(versions: &Versions, plans: &[Plan]) -> Vec<Result<Option<String>, FileFailure>> {
    let mut out = Vec::with_capacity(plans.len());
    let mut write_failed = false;
    for plan in plans {
        let rel = &plan.file.rel;
        if write_failed {
            out.push(Err(FileFailure::new(
                rel.clone(),
                "not_written",
                format!("{rel}: not written, because writing an earlier file failed"),
            )));
            continue;
        }
        match write(versions, plan) {
            Ok(version) => out.push(Ok(version)),
            Err(e) => {
                write_failed = true;
                out.push(Err(FileFailure::new(rel.clone(), "write", e.to_string())));
            }
        }
    }
    out
}

fn write(versions: &Versions, plan: &Plan) -> Result<Option<String>, FileError> {
    // Bytes in the files' encodings (borrowed for UTF-8).
    let before = plan.before_bytes()?;
    let before = before.as_deref();
    match (&plan.to, plan.after_bytes()?) {
        (Some((dest, _)), Some(after)) => {
            let dest_before = plan.dest_before_bytes()?;
            let id = versions.write(dest, dest_before.as_deref(), &after)?;
            remove(versions, &plan.file, before)?;
            Ok(Some(id.to_string()))
        }
        (None, Some(after)) => {
            if plan.changes_nothing() {
                return Ok(None);
            }
            Ok(Some(
                versions.write(&plan.file, before, &after)?.to_string(),
            ))
        }
        (_, None) => remove(versions, &plan.file, before).map(Some),
    }
}

/// Delete a file, its content kept in the versions store first, only if
/// it still holds what the plan was made from (a change made meanwhile is
/// kept, and the delete fails with "changed on disk").
fn remove(
    versions: &Versions,
    file: &Resolved,
    before: Option<&[u8]>,
) -> Result<String, FileError> {
    let Some(before) = before else {
        return Err(FileError::ChangedOnDisk {
            path: file.rel.clone(),
        });
    };
    Ok(versions.remove(file, before)?.to_string())
}
