//! Reading workspace files: `read_text` (UTF-8 text files only, with a clear
//! refusal for binary and non-UTF-8 content), `read_bytes` (any regular
//! file, for the versions store), and `content_hash`, the stable hash used
//! to notice files that changed since nib read or wrote them.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;

use super::{FileError, Resolved};

/// How far into a file a NUL byte marks it as binary (the same window git
/// uses).
const BINARY_WINDOW: usize = 8000;

/// A text file as read from the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// The content, exactly as on disk (BOM and line endings included).
    pub text: String,
    /// `content_hash` of the bytes on disk.
    pub hash: u64,
    /// Unix permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// Length in bytes.
    pub len: u64,
}

impl TextFile {
    /// Refuses a file without its owner's write bit (checked before any
    /// edit is computed, so a dry run says what the real run would):
    /// nib leaves files the user made read-only alone.
    pub fn ensure_writable(&self, rel: &str) -> Result<(), FileError> {
        if self.mode & 0o200 == 0 {
            return Err(FileError::ReadOnly {
                path: rel.to_string(),
            });
        }
        Ok(())
    }
}

/// A fast 64-bit hash of `bytes`, eight bytes at a time (multiply-rotate,
/// then a final mix). Stable across builds and platforms, so a hash stored
/// in the versions index stays comparable. Not a cryptographic hash: it
/// detects accidental change, not tampering.
pub fn content_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut words = bytes.chunks_exact(8);
    let mut hash = (bytes.len() as u64).wrapping_mul(K);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        hash = (hash.rotate_left(23) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    hash = (hash.rotate_left(23) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    // splitmix64's finalizer: every input bit reaches every output bit.
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

/// Reads the bytes of a regular file, or None when nothing is there.
/// Directories, fifos, sockets and devices are refused.
pub fn read_bytes(file: &Resolved) -> Result<Option<Vec<u8>>, FileError> {
    match read_regular(file) {
        Ok((bytes, _)) => Ok(Some(bytes)),
        Err(FileError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads a UTF-8 text file. Missing files, directories, non-regular files,
/// binary content (a NUL byte in the first 8000 bytes) and invalid UTF-8
/// are each refused with their own error.
pub fn read_text(file: &Resolved) -> Result<TextFile, FileError> {
    let (bytes, mode) = read_regular(file)?;
    let window = &bytes[..bytes.len().min(BINARY_WINDOW)];
    if let Some(offset) = memchr::memchr(0, window) {
        return Err(FileError::Binary {
            path: file.rel.clone(),
            offset,
        });
    }
    let hash = content_hash(&bytes);
    let len = bytes.len() as u64;
    let text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let line = 1 + memchr::memchr_iter(b'\n', &e.as_bytes()[..offset]).count();
        FileError::NotUtf8 {
            path: file.rel.clone(),
            line,
            offset,
        }
    })?;
    Ok(TextFile {
        text,
        hash,
        mode,
        len,
    })
}

/// Reads a regular file's bytes and its permission bits.
fn read_regular(file: &Resolved) -> Result<(Vec<u8>, u32), FileError> {
    let path = || file.rel.clone();
    // metadata() follows symlinks: `real` should have none left, but if one
    // appeared since resolving, judge what it points at.
    let meta = fs::metadata(&file.real).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => FileError::NotFound { path: path() },
        _ => FileError::Io {
            action: "read",
            path: path(),
            source: e,
        },
    })?;
    if meta.is_dir() {
        return Err(FileError::IsDirectory { path: path() });
    }
    if !meta.is_file() {
        // Reading a fifo would block forever; a device could be endless.
        return Err(FileError::NotRegular { path: path() });
    }
    let bytes = fs::read(&file.real).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => FileError::NotFound { path: path() },
        _ => FileError::Io {
            action: "read",
            path: path(),
            source: e,
        },
    })?;
    Ok((bytes, meta.permissions().mode() & 0o7777))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::Workspace;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn content_hash_tells_apart_what_it_should() {
        // Pinned: stored hashes must stay comparable across builds.
        assert_eq!(content_hash(b""), content_hash(b""));
        let samples: [&[u8]; 6] = [b"", b"a", b"b", b"ab", b"ba", b"a\0"];
        for (i, x) in samples.iter().enumerate() {
            for y in &samples[i + 1..] {
                assert_ne!(content_hash(x), content_hash(y), "{x:?} vs {y:?}");
            }
        }
        let long = vec![7u8; 4096];
        let mut flipped = long.clone();
        flipped[2048] ^= 1;
        assert_ne!(content_hash(&long), content_hash(&flipped));
    }

    #[test]
    fn reads_text_with_metadata() {
        let (_dir, ws) = setup();
        fs::write(ws.root().join("a.txt"), "héllo\r\nworld").unwrap();
        fs::set_permissions(ws.root().join("a.txt"), fs::Permissions::from_mode(0o640)).unwrap();
        let f = read_text(&ws.resolve("a.txt").unwrap()).unwrap();
        assert_eq!(f.text, "héllo\r\nworld");
        assert_eq!(f.len, "héllo\r\nworld".len() as u64);
        assert_eq!(f.hash, content_hash("héllo\r\nworld".as_bytes()));
        assert_eq!(f.mode, 0o640);
    }

    #[test]
    fn binary_is_refused() {
        let (_dir, ws) = setup();
        fs::write(ws.root().join("a.png"), b"\x89PNG\r\n\x1a\n\0\0rest").unwrap();
        let err = read_text(&ws.resolve("a.png").unwrap()).unwrap_err();
        assert!(
            matches!(err, FileError::Binary { offset: 8, .. }),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "a.png looks binary (NUL byte at offset 8); nib edits text files only"
        );
        // A NUL past the window is not a binary marker (but still text).
        let mut late = vec![b'a'; BINARY_WINDOW];
        late.push(0);
        fs::write(ws.root().join("late.txt"), &late).unwrap();
        let f = read_text(&ws.resolve("late.txt").unwrap()).unwrap();
        assert_eq!(f.len, BINARY_WINDOW as u64 + 1);
    }

    #[test]
    fn non_utf8_names_line_and_offset() {
        let (_dir, ws) = setup();
        fs::write(ws.root().join("a.txt"), b"one\ntwo\nthr\xe9e\n").unwrap();
        let err = read_text(&ws.resolve("a.txt").unwrap()).unwrap_err();
        match &err {
            FileError::NotUtf8 { path, line, offset } => {
                assert_eq!(path, "a.txt");
                assert_eq!(*line, 3);
                assert_eq!(*offset, 11);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            err.to_string(),
            "a.txt is not valid UTF-8 (first bad byte at line 3, byte offset 11); nib edits UTF-8 text only — convert it first"
        );
    }

    #[test]
    fn missing_file() {
        let (_dir, ws) = setup();
        let r = ws.resolve("src/a.rs").unwrap();
        let err = read_text(&r).unwrap_err();
        assert!(matches!(err, FileError::NotFound { .. }));
        assert_eq!(
            err.to_string(),
            "no such file: src/a.rs; to create it use fs-write"
        );
        assert_eq!(read_bytes(&r).unwrap(), None);
    }

    #[test]
    fn directory_is_refused() {
        let (_dir, ws) = setup();
        fs::create_dir(ws.root().join("src")).unwrap();
        let r = ws.resolve("src").unwrap();
        let err = read_text(&r).unwrap_err();
        assert!(matches!(err, FileError::IsDirectory { .. }));
        assert!(err.to_string().contains("src is a directory"));
        assert!(matches!(read_bytes(&r), Err(FileError::IsDirectory { .. })));
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let (_dir, ws) = setup();
        let fifo = ws.root().join("pipe");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !matches!(status, Ok(s) if s.success()) {
            return; // no mkfifo here; nothing to test
        }
        let err = read_text(&ws.resolve("pipe").unwrap()).unwrap_err();
        assert!(matches!(err, FileError::NotRegular { .. }), "{err:?}");
    }

    #[test]
    fn read_bytes_accepts_binary() {
        let (_dir, ws) = setup();
        fs::write(ws.root().join("b"), b"\0\xff").unwrap();
        let r = ws.resolve("b").unwrap();
        assert_eq!(read_bytes(&r).unwrap(), Some(b"\0\xff".to_vec()));
    }
}
