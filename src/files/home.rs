//! Where under the user's home directory commands may write: the caches
//! build tools fill (`~/.cargo`, `~/.npm`, …) and what the user adds in
//! their config (`[guard] home = [...]`). One list for both of its uses:
//! the guard's mount plan shows these writable, and nib never runs a
//! program of its own (git) found there, since a command could have put
//! it there.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The build caches under home that commands write.
pub const WRITABLE_CACHES: &[&str] = &[
    ".cargo",
    ".npm",
    ".cache",
    ".yarn",
    ".pnpm-store",
    ".m2",
    ".gradle",
    ".ivy2",
    ".sbt",
    "go",
];

/// Places the user's config made writable too, for every session of this
/// process (relative to home, as the config names them).
static ADDED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Notes the places a session's config makes writable to its commands.
pub fn add_writable(names: &[String]) {
    let mut added = ADDED.lock().unwrap_or_else(|p| p.into_inner());
    for name in names {
        let name = name.trim_start_matches("~/").trim_start_matches('/');
        if !added.iter().any(|a| a == name) {
            added.push(name.to_string());
        }
    }
}

/// Every place under `home` commands may write.
pub fn writable(home: &Path) -> Vec<PathBuf> {
    let added = ADDED.lock().unwrap_or_else(|p| p.into_inner());
    WRITABLE_CACHES
        .iter()
        .map(|n| home.join(n))
        .chain(added.iter().map(|n| home.join(n)))
        .collect()
}
