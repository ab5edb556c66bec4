//! Files that run code later, outside nib, checked around each command.
//!
//! The mount sandbox makes the existing ones read-only
//! (`guard::mounts::AUTO_RUN`); a path that does not exist yet cannot be
//! mounted over, and `package.json` must stay writable (`npm install`
//! writes it). So the host looks before and after a command: an auto-run
//! file the command created is removed, and a change to package.json's
//! lifecycle scripts (`postinstall`, `prepare`, ...) is put back, each
//! with a note that says to make the change with fs-write or fs-edit,
//! which a person confirms.

use std::path::Path;

use crate::guard::mounts::AUTO_RUN;

/// What the auto-run places held before a command.
pub struct Snapshot {
    missing: Vec<&'static str>,
    package_json: Option<Vec<u8>>,
    /// package.json was there before (whether or not it was read).
    package_existed: bool,
}

/// Looks at the auto-run places under `root` (a few `stat`s, and
/// package.json when it is small).
pub fn snapshot(root: &Path) -> Snapshot {
    let missing = AUTO_RUN
        .iter()
        .copied()
        .filter(|rel| root.join(rel).symlink_metadata().is_err())
        .collect();
    let package_json = std::fs::metadata(root.join("package.json"))
        .ok()
        .filter(|m| m.is_file() && m.len() <= 1 << 20)
        .and_then(|_| std::fs::read(root.join("package.json")).ok());
    Snapshot {
        missing,
        package_json,
        package_existed: root.join("package.json").symlink_metadata().is_ok(),
    }
}

impl Snapshot {
    /// After the command: undoes what it did to auto-run places, and says
    /// what (empty when it did nothing there).
    pub fn undo(&self, root: &Path) -> String {
        let mut notes = String::new();
        for rel in &self.missing {
            let path = root.join(rel);
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            let removed = if meta.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            notes.push_str(&match removed {
                Ok(()) => format!(
                    "note: the command created {rel}, which runs code later outside nib's sandbox; nib removed it. Write it with fs-write so the user can confirm it.\n"
                ),
                Err(e) => format!(
                    "warning: the command created {rel}, which runs code later outside nib's sandbox, and nib could not remove it ({e}): check it before you open, build or commit this project\n"
                ),
            });
        }
        let created = !self.package_existed;
        if (created || self.package_json.is_some())
            && let Ok(after) = std::fs::read(root.join("package.json"))
            && self.package_json.as_deref() != Some(after.as_slice())
        {
            let before = self.package_json.as_deref().unwrap_or_default();
            let old = String::from_utf8_lossy(before);
            let new = String::from_utf8_lossy(&after);
            let hooks = crate::guard::lifecycle_scripts_changed(&old, &new);
            if !hooks.is_empty() && created {
                let names = hooks.join(", ");
                notes.push_str(&match std::fs::remove_file(root.join("package.json")) {
                    Ok(()) => format!(
                        "note: the command created package.json with a {names} script, which npm runs on its own at the next install outside nib's sandbox; nib removed it. Write it with fs-write so the user can confirm it.\n"
                    ),
                    Err(e) => format!(
                        "warning: the command created package.json with a {names} script, which npm runs on its own, and nib could not remove it ({e}): check it before the next install\n"
                    ),
                });
            } else if !hooks.is_empty() {
                let names = hooks.join(", ");
                notes.push_str(&match crate::files::write_atomic(&root.join("package.json"), before) {
                    Ok(()) => format!(
                        "note: the command changed package.json's {names} script, which npm runs on its own at the next install outside nib's sandbox; nib put package.json back as it was. Change that script with fs-edit so the user can confirm it.\n"
                    ),
                    Err(e) => format!(
                        "warning: the command changed package.json's {names} script, which npm runs on its own, and nib could not put it back ({e}): check it before the next install\n"
                    ),
                });
            }
        }
        notes
    }
}
