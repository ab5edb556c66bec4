//! Where a file a command wrote with a secret in it goes: out of the
//! workspace's tree into `.nib/quarantine/`, which commands cannot read
//! (the mount plan covers it) and the model's tools refuse (`.nib` is
//! denied), so the copy stops where it was made and nothing is lost: the
//! user can look and move it back. It is never committed: it holds a
//! `.gitignore` of `*`.

use std::path::{Path, PathBuf};

/// The quarantine directory, relative to the workspace root.
pub const QUARANTINE: &str = ".nib/quarantine";

/// Moves `rel` (relative to `root`) into the quarantine under a name
/// that keeps its path readable and never overwrites an earlier one;
/// returns the new path relative to `root`.
pub fn quarantine(root: &Path, rel: &str) -> std::io::Result<String> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = root.join(QUARANTINE);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    // Never committed, whether or not `.nib/` has its own `.gitignore`.
    let ignore = dir.join(".gitignore");
    if ignore.symlink_metadata().is_err() {
        std::fs::write(&ignore, "*\n")?;
    }
    let flat: String = rel
        .chars()
        .map(|c| if c == '/' { '%' } else { c })
        .collect();
    let mut n = 1usize;
    let target: PathBuf = loop {
        let candidate = dir.join(format!("{n}-{flat}"));
        if candidate.symlink_metadata().is_err() {
            break candidate;
        }
        n += 1;
        if n > 100_000 {
            return Err(std::io::Error::other("the quarantine is full"));
        }
    };
    std::fs::rename(root.join(rel), &target)?;
    Ok(format!(
        "{QUARANTINE}/{}",
        target.file_name().unwrap_or_default().to_string_lossy()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_moved_under_a_name_that_keeps_its_path_and_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/notes.txt"), "one").unwrap();
        let first = quarantine(root, "a/b/notes.txt").unwrap();
        assert_eq!(first, ".nib/quarantine/1-a%b%notes.txt");
        std::fs::write(root.join("a/b/notes.txt"), "two").unwrap();
        let second = quarantine(root, "a/b/notes.txt").unwrap();
        assert_eq!(second, ".nib/quarantine/2-a%b%notes.txt");
        assert_eq!(std::fs::read_to_string(root.join(first)).unwrap(), "one");
        assert!(!root.join("a/b/notes.txt").exists());
    }
}
