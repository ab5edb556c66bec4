//! Finding the workspace's secret stores on disk before each command:
//! a walk by name (`PathRules::is_secret_store`), every other name of one
//! (hard links), and what the walk could not look into.
//!
//! It fails closed: a directory it cannot read (made unreadable, or too
//! deep for a mount to name) or does not reach within its bound is
//! reported `blind`, and the plan covers it whole, so what hides in it
//! hides from the command too. And it is remembered between commands:
//! a directory whose change time is where it was is not read again, so a
//! huge tree costs one `stat` per directory after the first walk and the
//! bound applies only to what changed.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::paths::{PathRules, RUN_LATER_NESTED};

/// Entries read fresh in one walk at most; directories past it are
/// covered whole until a later walk reads them.
pub const MAX_FRESH: usize = 200_000;

/// Longest directory path the walk enters (bytes): a mount must be able to
/// name what it covers, and the system's limit is 4096.
const MAX_PATH_BYTES: usize = 3072;

/// A directory changed this recently may change again within its clock's
/// tick without a new change time: read again next time (git's "racily
/// clean" rule).
const RACY_NANOS: i128 = 2_000_000_000;

/// Directories of generated or downloaded files that the walk does not
/// enter: they are rebuilt from the project, and walking them would cost
/// more than the command.
pub const NOT_WALKED: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
];

/// What one walk found.
#[derive(Debug, Default, Clone)]
pub struct Found {
    /// Secret stores, and other names of one, canonical.
    pub stores: Vec<PathBuf>,
    /// Directories the walk could not look into: unreadable, too deep,
    /// or past its bound.
    pub blind: Vec<PathBuf>,
    /// The bound was reached.
    pub truncated: bool,
    /// The workspace's own directory could not be read: nothing in it
    /// can be checked.
    pub root_unreadable: Option<String>,
    /// Dependency and build directories the walk did not enter.
    pub skipped: Vec<PathBuf>,
    /// Files by a name of [`RUN_LATER_NESTED`] and nested repositories'
    /// `.git` entries, below the root: what a command's run-later files
    /// are told apart from.
    pub run_later: Vec<PathBuf>,
}

impl Found {
    /// What one directory's listing holds, added (its hard-linked files
    /// into `linked`, matched against the stores at the end).
    fn add(&mut self, listing: &Listing, linked: &mut Vec<((u64, u64), PathBuf)>) {
        self.stores.extend(listing.stores.iter().cloned());
        self.blind.extend(listing.blind.iter().cloned());
        self.skipped.extend(listing.skipped.iter().cloned());
        self.run_later.extend(listing.run_later.iter().cloned());
        linked.extend(listing.linked.iter().cloned());
    }
}

/// One directory as last read.
#[derive(Debug, Clone)]
struct Listing {
    stamp: (i64, i64, u64),
    stores: Vec<PathBuf>,
    subdirs: Vec<PathBuf>,
    blind: Vec<PathBuf>,
    skipped: Vec<PathBuf>,
    linked: Vec<((u64, u64), PathBuf)>,
    run_later: Vec<PathBuf>,
}

/// The directories of the last walk, by path, and what it found.
#[derive(Debug, Default)]
pub struct WalkCache {
    dirs: HashMap<PathBuf, Listing>,
    last: Option<(PathBuf, Found)>,
    /// Every directory the last walk reached is remembered (it was made
    /// with a watch, so recent ones too, and read whole).
    whole: bool,
}

/// What the session's watch on the workspace (inotify) saw since the
/// last walk: the directories whose entries changed, and those it could
/// not watch (they, and all under them, are looked at every time).
#[derive(Debug, Default, Clone)]
pub struct Changes {
    pub dirs: HashSet<PathBuf>,
    pub unwatched: Vec<PathBuf>,
}

impl Changes {
    /// Whether `dir`'s remembered listing may be used without a `stat`.
    fn trusts(&self, dir: &Path) -> bool {
        !self.dirs.contains(dir) && !self.unwatched.iter().any(|u| dir.starts_with(u))
    }
}

/// [`walk`], or, when the session's watch tells what changed
/// (`changes`), a walk that reads again only the directories it names
/// and takes every other one as remembered, without a `stat`: a huge tree
/// costs nothing per command when nothing changed, and one directory's
/// reading when a command wrote into one. Without `changes` (no watch,
/// or events lost) every directory's change time is looked at.
pub fn walk_since(
    root: &Path,
    rules: &PathRules,
    cache: &mut WalkCache,
    changes: Option<&Changes>,
) -> Found {
    if let Some(changes) = changes
        && changes.dirs.is_empty()
        && changes.unwatched.is_empty()
        && let Some((last_root, found)) = &cache.last
        && last_root == root
        && !found.truncated
    {
        return found.clone();
    }
    let found = changes
        .and_then(|c| update_in_place(root, rules, cache, c))
        .unwrap_or_else(|| walk_at(root, rules, cache, now_nanos(), MAX_FRESH, changes));
    cache.last = Some((root.to_path_buf(), found.clone()));
    found
}

/// The last whole walk brought up to date by reading again only the
/// directories `changes` names (and what is new under them), without
/// visiting the others; None where it cannot be (no whole walk before,
/// something it could not read, a directory it could not watch), and
/// [`walk_at`] is done instead.
fn update_in_place(
    root: &Path,
    rules: &PathRules,
    cache: &mut WalkCache,
    changes: &Changes,
) -> Option<Found> {
    let (last_root, last) = cache.last.as_ref()?;
    if !cache.whole
        || last_root != root
        || last.truncated
        || !last.blind.is_empty()
        || !changes.unwatched.is_empty()
    {
        return None;
    }
    // Parents first: a directory removed with its parent's reading is not
    // read on its own. One not remembered lies where the walk does not go
    // (dependencies) or is new, and its parent's reading finds it.
    let mut changed: Vec<&PathBuf> = changes
        .dirs
        .iter()
        .filter(|d| cache.dirs.contains_key(*d))
        .collect();
    changed.sort_by_key(|d| d.components().count());
    let mut fresh = 0usize;
    let mut new_dirs: Vec<PathBuf> = Vec::new();
    for dir in changed {
        let Some(old) = cache.dirs.get(dir) else {
            continue;
        };
        let old_subdirs = old.subdirs.clone();
        match read_stamped(dir, root, rules, &mut fresh) {
            Ok(Some(listing)) => {
                for sub in old_subdirs.iter().filter(|s| !listing.subdirs.contains(s)) {
                    forget_subtree(cache, sub);
                }
                new_dirs.extend(
                    listing
                        .subdirs
                        .iter()
                        .filter(|s| !old_subdirs.contains(s))
                        .cloned(),
                );
                cache.dirs.insert(dir.clone(), listing);
            }
            Ok(None) => forget_subtree(cache, dir),
            Err(_) => return None,
        }
    }
    while let Some(dir) = new_dirs.pop() {
        if fresh > MAX_FRESH {
            return None;
        }
        match read_stamped(&dir, root, rules, &mut fresh) {
            Ok(Some(listing)) => {
                new_dirs.extend(listing.subdirs.iter().cloned());
                cache.dirs.insert(dir, listing);
            }
            Ok(None) => {}
            Err(_) => return None,
        }
    }
    let mut found = Found::default();
    let mut linked = Vec::new();
    for listing in cache.dirs.values() {
        found.add(listing, &mut linked);
    }
    match_links(&mut found, linked);
    for list in [
        &mut found.stores,
        &mut found.blind,
        &mut found.skipped,
        &mut found.run_later,
    ] {
        list.sort();
    }
    Some(found)
}

/// `dir` read with its stamp; None when it is gone (or no longer a
/// directory).
fn read_stamped(
    dir: &Path,
    root: &Path,
    rules: &PathRules,
    fresh: &mut usize,
) -> std::io::Result<Option<Listing>> {
    let meta = match dir.symlink_metadata() {
        Ok(m) if m.is_dir() => m,
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match read(dir, root, rules, fresh) {
        Ok(mut listing) => {
            listing.stamp = (meta.ctime(), meta.ctime_nsec(), meta.ino());
            Ok(Some(listing))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Forgets `dir` and every directory remembered under it.
fn forget_subtree(cache: &mut WalkCache, dir: &Path) {
    cache.dirs.retain(|d, _| !d.starts_with(dir));
}

/// Every other name of a secret store's inode (a hard link) is one too.
fn match_links(found: &mut Found, linked: Vec<((u64, u64), PathBuf)>) {
    if linked.is_empty() {
        return;
    }
    let secret_inodes: HashSet<(u64, u64)> = found
        .stores
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .filter(|m| m.is_file())
        .map(|m| (m.dev(), m.ino()))
        .collect();
    for (inode, path) in linked {
        if secret_inodes.contains(&inode) {
            found.stores.push(path);
        }
    }
}

impl WalkCache {
    /// The run-later files the last walk found below `root`; None before
    /// any walk of it, or when the walk was cut short.
    pub fn run_later(&self, root: &Path) -> Option<&[PathBuf]> {
        match &self.last {
            Some((last, found)) if last == root && !found.truncated => {
                Some(found.run_later.as_slice())
            }
            _ => None,
        }
    }
}

/// The workspace's secret stores under `root` (canonical), reusing what
/// `cache` holds of directories that did not change.
pub fn walk(root: &Path, rules: &PathRules, cache: &mut WalkCache) -> Found {
    walk_at(root, rules, cache, now_nanos(), MAX_FRESH, None)
}

fn now_nanos() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

/// [`walk`] at time `now` (nanoseconds since the epoch).
/// With `changes`, a remembered directory they do not name is taken as
/// it was, unlooked at.
fn walk_at(
    root: &Path,
    rules: &PathRules,
    cache: &mut WalkCache,
    now: i128,
    max_fresh: usize,
    changes: Option<&Changes>,
) -> Found {
    let mut found = Found::default();
    let mut linked: Vec<((u64, u64), PathBuf)> = Vec::new();
    let mut seen: HashMap<PathBuf, Listing> = HashMap::new();
    let mut fresh = 0usize;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if let Some(changes) = changes
            && changes.trusts(&dir)
            && let Some(listing) = cache.dirs.remove(&dir)
        {
            found.add(&listing, &mut linked);
            stack.extend(listing.subdirs.iter().cloned());
            seen.insert(dir, listing);
            continue;
        }
        let meta = match dir.symlink_metadata() {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                blind(&dir, root, e, &mut found);
                continue;
            }
        };
        let stamp = (meta.ctime(), meta.ctime_nsec(), meta.ino());
        let listing = match cache.dirs.remove(&dir) {
            Some(l) if l.stamp == stamp => l,
            _ if fresh > max_fresh => {
                // Past the bound: covered whole, with what is still
                // waiting, until a later walk reads it.
                found.truncated = true;
                found.blind.push(dir);
                continue;
            }
            _ => match read(&dir, root, rules, &mut fresh) {
                Ok(mut l) => {
                    l.stamp = stamp;
                    l
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    blind(&dir, root, e, &mut found);
                    continue;
                }
            },
        };
        found.add(&listing, &mut linked);
        stack.extend(listing.subdirs.iter().cloned());
        // With a watch, a later change is told however soon it comes.
        let changed = i128::from(stamp.0) * 1_000_000_000 + i128::from(stamp.1);
        if changes.is_some() || now - changed > RACY_NANOS {
            seen.insert(dir, listing);
        }
    }
    cache.dirs = seen;
    cache.whole = changes.is_some()
        && !found.truncated
        && found.blind.is_empty()
        && found.root_unreadable.is_none();
    match_links(&mut found, linked);
    found
}

/// Entries read at most when [`skipped_stores`] looks inside dependency
/// and build directories, and how deep.
const MAX_SKIPPED_ENTRIES: usize = 300_000;
const MAX_SKIPPED_DEPTH: usize = 8;

/// The secret stores inside the directories the walk skips (`dirs`: a
/// package published with its `.env`, a deploy step's copy next to the
/// binary in `target/`), by name alone: looked for once, at the session's
/// start, since walking them before every command would cost more than
/// the command.
pub fn skipped_stores(root: &Path, rules: &PathRules, dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut read = 0usize;
    let mut stack: Vec<(PathBuf, usize)> = dirs.iter().map(|d| (d.clone(), 0)).collect();
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            read += 1;
            if read > MAX_SKIPPED_ENTRIES {
                return out;
            }
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            if rules.is_secret_store(&rel.to_string_lossy()) {
                if let Ok(real) = path.canonicalize() {
                    out.push(real);
                }
                continue;
            }
            if depth < MAX_SKIPPED_DEPTH && entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((path, depth + 1));
            }
        }
    }
    out
}

/// A directory the walk could not read: the root is reported on its own
/// (nothing can cover it), any other is covered whole.
fn blind(dir: &Path, root: &Path, e: std::io::Error, found: &mut Found) {
    if dir == root {
        found.root_unreadable = Some(e.to_string());
    } else {
        found.blind.push(dir.to_path_buf());
    }
}

/// Whether `rel` (below the root) names a file of [`RUN_LATER_NESTED`]
/// or a nested repository's `.git`.
fn is_run_later_nested(rel: &str) -> bool {
    rel.rsplit('/').next() == Some(".git")
        || RUN_LATER_NESTED.iter().any(|n| {
            rel.ends_with(n) && (rel.len() == n.len() || rel[..rel.len() - n.len()].ends_with('/'))
        })
}

/// Whether `path` (`rel`) is a `.pem` file holding only public material
/// (a test's certificate): not masked, as the project reads it.
fn public_pem_file(path: &Path, rel: &str) -> bool {
    use std::io::Read;
    if !rel.to_ascii_lowercase().ends_with(".pem") {
        return false;
    }
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(64 * 1024).read_to_end(&mut head));
    read.is_ok() && super::paths::public_pem(&String::from_utf8_lossy(&head))
}

/// Reads one directory.
fn read(dir: &Path, root: &Path, rules: &PathRules, fresh: &mut usize) -> std::io::Result<Listing> {
    let mut listing = Listing {
        stamp: (0, 0, 0),
        stores: Vec::new(),
        subdirs: Vec::new(),
        blind: Vec::new(),
        skipped: Vec::new(),
        linked: Vec::new(),
        run_later: Vec::new(),
    };
    for entry in std::fs::read_dir(dir)?.flatten() {
        *fresh += 1;
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if dir != root && is_run_later_nested(&rel) {
            listing.run_later.push(path.clone());
        }
        if rules.is_secret_store(&rel) && !public_pem_file(&path, &rel) {
            // A link to a secret hides where it leads (inside the
            // workspace or not); the link itself holds nothing.
            if let Ok(real) = path.canonicalize() {
                listing.stores.push(real);
            }
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let name = entry.file_name();
            if NOT_WALKED.iter().any(|n| name.eq_ignore_ascii_case(n)) {
                if name != ".git" {
                    listing.skipped.push(path);
                }
                continue;
            }
            if path.as_os_str().len() > MAX_PATH_BYTES {
                listing.blind.push(path);
            } else {
                listing.subdirs.push(path);
            }
        } else if kind.is_file()
            && let Ok(meta) = entry.metadata()
            && meta.nlink() > 1
        {
            listing.linked.push(((meta.dev(), meta.ino()), path));
        }
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn base() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    #[test]
    fn stores_and_their_links_are_found_and_remembered() {
        let (_d, root) = base();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/.env"), "K=v\n").unwrap();
        fs::hard_link(root.join("a/b/.env"), root.join("notes.txt")).unwrap();
        fs::create_dir_all(root.join("node_modules/x")).unwrap();
        fs::write(root.join("node_modules/x/.env"), "K=v\n").unwrap();
        let mut cache = WalkCache::default();
        let mut found = walk(&root, &PathRules::default(), &mut cache);
        found.stores.sort();
        assert_eq!(
            found.stores,
            vec![root.join("a/b/.env"), root.join("notes.txt")]
        );
        assert!(found.blind.is_empty() && !found.truncated);
        // Again, from what is remembered (or read again while racy): the
        // same answer.
        let mut again = walk(&root, &PathRules::default(), &mut cache);
        again.stores.sort();
        assert_eq!(again.stores, found.stores);
    }

    #[test]
    fn a_remembered_directory_is_not_read_again_until_it_changes() {
        let (_d, root) = base();
        fs::create_dir_all(root.join("deep/er")).unwrap();
        let mut cache = WalkCache::default();
        // Long after the racy window: every listing is remembered.
        let later = i128::MAX / 2;
        assert!(
            walk_at(
                &root,
                &PathRules::default(),
                &mut cache,
                later,
                MAX_FRESH,
                None
            )
            .stores
            .is_empty()
        );
        assert_eq!(cache.dirs.len(), 3);
        // A remembered listing is what the walk answers from...
        cache
            .dirs
            .get_mut(&root.join("deep"))
            .unwrap()
            .stores
            .push(root.join("deep/remembered"));
        let found = walk_at(
            &root,
            &PathRules::default(),
            &mut cache,
            later,
            MAX_FRESH,
            None,
        );
        assert_eq!(found.stores, vec![root.join("deep/remembered")]);
        // ...until the directory changes: a new entry changes its time.
        fs::write(root.join("deep/er/.env"), "K=v\n").unwrap();
        fs::write(root.join("deep/x"), "").unwrap();
        let found = walk_at(
            &root,
            &PathRules::default(),
            &mut cache,
            later,
            MAX_FRESH,
            None,
        );
        assert_eq!(found.stores, vec![root.join("deep/er/.env")]);
    }

    #[test]
    fn with_a_watch_only_the_directories_it_names_are_read_again() {
        let (_d, root) = base();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::create_dir_all(root.join("c")).unwrap();
        let rules = PathRules::default();
        let mut cache = WalkCache::default();
        let nothing = Changes::default();
        assert!(
            walk_since(&root, &rules, &mut cache, Some(&nothing))
                .stores
                .is_empty()
        );
        // Recently made directories are remembered too: the watch tells
        // a later change however soon it comes.
        assert_eq!(cache.dirs.len(), 4);
        fs::write(root.join("a/b/.env"), "K=v\n").unwrap();
        fs::write(root.join("c/.env"), "K=v\n").unwrap();
        // Told of a/b only: c is taken as remembered, unlooked at.
        let told = Changes {
            dirs: [root.join("a/b")].into_iter().collect(),
            unwatched: Vec::new(),
        };
        let found = walk_since(&root, &rules, &mut cache, Some(&told));
        assert_eq!(found.stores, vec![root.join("a/b/.env")]);
        // Nothing told: the last answer stands.
        let again = walk_since(&root, &rules, &mut cache, Some(&nothing));
        assert_eq!(again.stores, found.stores);
        // A directory the watch could not watch is read every time, and
        // all under it.
        fs::create_dir_all(root.join("c/d")).unwrap();
        fs::write(root.join("c/d/.env"), "K=v\n").unwrap();
        let unwatched = Changes {
            dirs: HashSet::new(),
            unwatched: vec![root.join("c")],
        };
        let mut found = walk_since(&root, &rules, &mut cache, Some(&unwatched));
        found.stores.sort();
        assert_eq!(
            found.stores,
            vec![
                root.join("a/b/.env"),
                root.join("c/.env"),
                root.join("c/d/.env")
            ]
        );
        // Without a watch, change times are looked at again.
        fs::write(root.join("a/.env"), "K=v\n").unwrap();
        let found = walk_since(&root, &rules, &mut cache, None);
        assert!(found.stores.contains(&root.join("a/.env")), "{found:?}");
        // Brought up to date in place: a subtree removed, one made.
        let told = |dirs: &[&str]| Changes {
            dirs: dirs.iter().map(|d| root.join(d)).collect(),
            unwatched: Vec::new(),
        };
        // (After a walk without a watch, the next told of any change walks
        // whole once.)
        walk_since(&root, &rules, &mut cache, Some(&told(&["c"])));
        assert!(cache.whole);
        fs::remove_dir_all(root.join("a/b")).unwrap();
        fs::create_dir_all(root.join("a/n/m")).unwrap();
        fs::write(root.join("a/n/m/.env.local"), "K=v\n").unwrap();
        let found = walk_since(&root, &rules, &mut cache, Some(&told(&["a", "a/b"])));
        assert_eq!(
            found.stores,
            vec![
                root.join("a/.env"),
                root.join("a/n/m/.env.local"),
                root.join("c/.env"),
                root.join("c/d/.env")
            ]
        );
        assert!(!cache.dirs.contains_key(&root.join("a/b")));
        assert!(cache.dirs.contains_key(&root.join("a/n/m")));
    }

    #[test]
    fn past_the_bound_what_is_left_is_covered_whole_until_read() {
        let (_d, root) = base();
        for i in 0..4 {
            fs::create_dir_all(root.join(format!("d{i}"))).unwrap();
            for j in 0..10 {
                fs::write(root.join(format!("d{i}/f{j}")), "").unwrap();
            }
        }
        fs::write(root.join("d3/.env"), "K=v\n").unwrap();
        let mut cache = WalkCache::default();
        let later = i128::MAX / 2;
        // Room for the root and one directory a walk.
        let first = walk_at(&root, &PathRules::default(), &mut cache, later, 12, None);
        assert!(first.truncated);
        assert_eq!(first.blind.len(), 3, "{:?}", first.blind);
        // Each later walk reads on from what it remembers, until whole.
        let mut last = first;
        for _ in 0..4 {
            last = walk_at(&root, &PathRules::default(), &mut cache, later, 12, None);
        }
        assert!(!last.truncated && last.blind.is_empty(), "{last:?}");
        assert_eq!(last.stores, vec![root.join("d3/.env")]);
    }

    #[test]
    fn what_is_too_deep_to_name_is_covered_whole() {
        let (_d, root) = base();
        let mut deep = root.clone();
        while deep.as_os_str().len() <= MAX_PATH_BYTES {
            deep.push("d".repeat(200));
        }
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join(".env"), "K=v\n").unwrap();
        let found = walk(&root, &PathRules::default(), &mut WalkCache::default());
        assert!(found.stores.is_empty());
        assert_eq!(found.blind, vec![deep]);
    }
}
