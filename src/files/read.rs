//! Reading workspace files: `read_text` (text in any encoding
//! `encoding.rs` reads without loss, with a clear refusal for binary
//! content), `read_bytes` (any regular file, for the versions store), and
//! `content_hash`, the stable hash used to notice files that changed since
//! nib read or wrote them.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, Read, Seek};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};

use super::encoding::Encoding;
use super::{FileError, Resolved};

/// How far into a file a NUL byte marks it as binary (the same window git
/// uses).
const BINARY_WINDOW: usize = 8000;

/// A text file as read from the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// The content as text: exactly the bytes on disk (BOM and line
    /// endings included) for UTF-8, else decoded without loss (`encoding`
    /// gives the bytes back).
    pub text: String,
    /// How the bytes were read; new text is written back in it.
    pub encoding: Encoding,
    /// Unix permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// Length in bytes.
    pub len: u64,
    /// Which file the read saw, and its change time then.
    pub stamp: Stamp,
}

/// What a read saw of its file besides the bytes: the inode, the size and
/// the change time, taken from the descriptor the bytes were read through.
/// A checked write (`Expect::Read`) that finds the same stamp at the path
/// right before its rename skips comparing the bytes there: any write
/// since the read moved the change time. The look after the rename still
/// compares every byte, so a write that landed within the same clock tick
/// as the read is caught there and put back: nothing is lost either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    ctime: i64,
    ctime_nsec: i64,
}

impl Stamp {
    pub fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        }
    }
}

impl TextFile {
    /// `content_hash` of the bytes on disk (computed on each call: most
    /// reads, `nib apply`'s among them, never need it).
    pub fn hash(&self) -> u64 {
        content_hash(&self.bytes())
    }

    /// The bytes on disk (borrowed for UTF-8, encoded back otherwise).
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        // Decoded text always encodes back; the fallback cannot happen.
        self.encoding
            .encode(&self.text)
            .unwrap_or(Cow::Borrowed(self.text.as_bytes()))
    }

    /// `text` in the file's encoding, or the refusal that names the first
    /// character it cannot hold and what to do.
    pub fn encode<'t>(&self, rel: &str, text: &'t str) -> Result<Cow<'t, [u8]>, FileError> {
        encode_for(rel, self.encoding, text)
    }

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

/// A fast 64-bit hash of `bytes`: four independent multiply-rotate lanes
/// over 32-byte blocks (so the CPU runs them side by side: about 0.5 ms
/// for 10 MB, where one serial lane took 2.5), then the tail and a final
/// mix. Every step is a bijection of its lane for a fixed input word, so
/// two inputs that differ in one word never collide. Stable across builds
/// and platforms, so a hash stored in the versions index stays comparable
/// (index lines name it `"hashing": 2`; `content_hash_v1` reads older
/// lines). Not a cryptographic hash: it detects accidental change, not
/// tampering.
pub fn content_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut lanes: [u64; 4] = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
            *lane = (lane.rotate_left(23) ^ w).wrapping_mul(K);
        }
    }
    let mut hash = (bytes.len() as u64).wrapping_mul(K);
    for lane in lanes {
        hash = (hash.rotate_left(23) ^ lane).wrapping_mul(K);
    }
    finish(serial(hash, blocks.remainder()))
}

/// `content_hash` of the bytes of `parts` one after another, without
/// joining them (a file written as parts, see `write::Parts`).
pub fn content_hash_parts(parts: &[&[u8]]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut lanes: [u64; 4] = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    let mut fold = |block: &[u8]| {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
            *lane = (lane.rotate_left(23) ^ w).wrapping_mul(K);
        }
    };
    // A block that straddles two parts is put together here.
    let mut carry = [0u8; 32];
    let mut held = 0;
    let mut total = 0u64;
    for part in parts {
        total += part.len() as u64;
        let mut rest = *part;
        if held > 0 {
            let take = rest.len().min(32 - held);
            carry[held..held + take].copy_from_slice(&rest[..take]);
            held += take;
            rest = &rest[take..];
            if held < 32 {
                continue;
            }
            fold(&carry);
        }
        let mut blocks = rest.chunks_exact(32);
        for block in &mut blocks {
            fold(block);
        }
        let tail = blocks.remainder();
        carry[..tail.len()].copy_from_slice(tail);
        held = tail.len();
    }
    let mut hash = total.wrapping_mul(K);
    for lane in lanes {
        hash = (hash.rotate_left(23) ^ lane).wrapping_mul(K);
    }
    finish(serial(hash, &carry[..held]))
}

/// The hash the versions index used before `"hashing": 2`: one serial
/// lane. Kept to check older index lines, and for the lock file names,
/// which two nib versions on one file must agree on.
pub fn content_hash_v1(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    finish(serial((bytes.len() as u64).wrapping_mul(K), bytes))
}

/// Folds `bytes` into `hash` eight at a time, the last word zero-padded.
fn serial(mut hash: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let word = u64::from_le_bytes(w.try_into().unwrap_or_default());
        hash = (hash.rotate_left(23) ^ word).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    (hash.rotate_left(23) ^ u64::from_le_bytes(tail)).wrapping_mul(K)
}

/// splitmix64's finalizer: every input bit reaches every output bit.
fn finish(mut hash: u64) -> u64 {
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
        Ok((bytes, _, _)) => Ok(Some(bytes)),
        Err(FileError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `text` in `encoding`, or `FileError::Unrepresentable` for `rel`.
pub fn encode_for<'t>(
    rel: &str,
    encoding: Encoding,
    text: &'t str,
) -> Result<Cow<'t, [u8]>, FileError> {
    encoding
        .encode(text)
        .map_err(|detail| FileError::Unrepresentable {
            path: rel.to_string(),
            detail,
        })
}

/// Reads a text file: UTF-8, or any other bytes decoded without loss
/// (`Encoding::decode`). Missing files, directories, non-regular files and
/// binary content (a NUL byte in the first 8000 bytes) are each refused
/// with their own error.
pub fn read_text(file: &Resolved) -> Result<TextFile, FileError> {
    let (bytes, mode, stamp) = read_regular(file)?;
    let window = &bytes[..bytes.len().min(BINARY_WINDOW)];
    if let Some(offset) = memchr::memchr(0, window) {
        let utf16 = bytes.starts_with(b"\xff\xfe") || bytes.starts_with(b"\xfe\xff");
        return Err(FileError::Binary {
            path: file.rel.clone(),
            offset,
            utf16,
        });
    }
    let len = bytes.len() as u64;
    let (text, encoding) = Encoding::decode(bytes);
    Ok(TextFile {
        text,
        encoding,
        mode,
        len,
        stamp,
    })
}

/// Reads a regular file's bytes, its permission bits and its stamp, all
/// through one descriptor (so the stamp is of the file that was read).
fn read_regular(file: &Resolved) -> Result<(Vec<u8>, u32, Stamp), FileError> {
    let path = || file.rel.clone();
    let io_error = |e: io::Error| match e.kind() {
        io::ErrorKind::NotFound => FileError::NotFound { path: path() },
        _ => FileError::Io {
            action: "read",
            path: path(),
            source: e,
        },
    };
    // metadata() follows symlinks: `real` should have none left, but if one
    // appeared since resolving, judge what it points at. Looked at before
    // opening: opening a fifo would block until a writer came, and opening
    // a device can do things.
    let meta = fs::metadata(&file.real).map_err(io_error)?;
    if meta.is_dir() {
        return Err(FileError::IsDirectory { path: path() });
    }
    if !meta.is_file() {
        // Reading a fifo would block forever; a device could be endless.
        return Err(FileError::NotRegular { path: path() });
    }
    // O_NONBLOCK: should the path have turned into a fifo since the look
    // above, the open returns instead of waiting; the check below refuses.
    let mut opened = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&file.real)
        .map_err(io_error)?;
    let meta = opened.metadata().map_err(io_error)?;
    if !meta.is_file() {
        return Err(FileError::NotRegular { path: path() });
    }
    let mut bytes = Vec::new();
    // One more byte than the size, so a file that grows meanwhile is read
    // to its end without the buffer doubling for the last bytes.
    bytes
        .try_reserve_exact(
            usize::try_from(meta.len())
                .unwrap_or(usize::MAX)
                .saturating_add(1),
        )
        .map_err(|e| io_error(io::Error::new(io::ErrorKind::OutOfMemory, e.to_string())))?;
    ask_for_huge_pages(&mut bytes);
    let size = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    if size >= PARALLEL_READ && read_halves(&opened, &mut bytes, size) {
        // Bytes past the size read above (a file growing meanwhile).
        opened
            .seek(io::SeekFrom::Start(size as u64))
            .map_err(io_error)?;
    } else {
        bytes.clear();
        opened.rewind().map_err(io_error)?;
    }
    opened.read_to_end(&mut bytes).map_err(io_error)?;
    Ok((bytes, meta.permissions().mode() & 0o7777, Stamp::of(&meta)))
}

/// Files at least this large are read in two halves at once.
const PARALLEL_READ: usize = 4 << 20;

/// Reads the first `size` bytes of `file` into `bytes` (empty, with room
/// for them) in two halves, the second on another thread: copying a large
/// file out of the kernel, and the page faults of the fresh buffer, are
/// most of a read's time, and two cores do them in half. Returns false,
/// `bytes` empty, when the file turned out shorter (it shrank meanwhile):
/// the caller then reads it whole from the start.
fn read_halves(file: &File, bytes: &mut Vec<u8>, size: usize) -> bool {
    let spare = bytes.spare_capacity_mut();
    if spare.len() < size {
        return false;
    }
    let (first, second) = spare[..size].split_at_mut(size / 2);
    let fd = file.as_raw_fd();
    let full = std::thread::scope(|scope| {
        let later = scope.spawn(|| pread_full(fd, second, (size / 2) as u64));
        let done = pread_full(fd, first, 0);
        done && later.join().unwrap_or(false)
    });
    if full {
        // SAFETY: pread_full returned true for both halves: each wrote
        // every byte of its half, so the first `size` bytes are set.
        unsafe { bytes.set_len(size) };
    }
    full
}

/// Fills `buf` from `offset` on; false on an error or an early end.
fn pread_full(fd: std::os::fd::RawFd, buf: &mut [std::mem::MaybeUninit<u8>], offset: u64) -> bool {
    let mut done = 0usize;
    while done < buf.len() {
        let Ok(at) = libc::off_t::try_from(offset + done as u64) else {
            return false;
        };
        // SAFETY: the pointer and length name the unfilled rest of `buf`,
        // memory this function may write; pread writes at most that many
        // bytes there, and a byte it wrote is initialised.
        let n = unsafe {
            libc::pread(
                fd,
                buf[done..].as_mut_ptr().cast::<libc::c_void>(),
                buf.len() - done,
                at,
            )
        };
        match n {
            0 => return false,
            n if n > 0 => done += n as usize,
            _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            _ => return false,
        }
    }
    true
}

/// Buffers at least this large are backed by huge pages where the kernel
/// offers them.
const HUGE_PAGE_BUFFER: usize = 4 << 20;

/// Asks the kernel to back `buffer`'s spare capacity with huge pages: a
/// 10 MB file is otherwise read into 2,500 fresh pages, each a fault,
/// which cost more than the read itself. Advice only: the kernel may
/// decline (transparent huge pages off), and nothing changes but speed.
#[cfg(target_os = "linux")]
fn ask_for_huge_pages(buffer: &mut Vec<u8>) {
    let spare = buffer.spare_capacity_mut();
    if spare.len() < HUGE_PAGE_BUFFER {
        return;
    }
    // madvise wants a page-aligned start: the first page boundary inside.
    let page = 4096;
    let start = spare.as_mut_ptr() as usize;
    let aligned = start.next_multiple_of(page);
    let len = (spare.len() - (aligned - start)) / page * page;
    // SAFETY: the range lies inside memory this Vec owns and does not
    // free meanwhile; MADV_HUGEPAGE changes how its pages are backed, not
    // their contents, and an error is ignored.
    unsafe {
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn ask_for_huge_pages(_buffer: &mut Vec<u8>) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::Workspace;

    #[test]
    fn content_hash_of_parts_is_the_hash_of_the_joined_bytes() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for cuts in [
            vec![],
            vec![0],
            vec![1],
            vec![31, 32, 33],
            vec![5, 5, 40, 71, 72, 500, 999],
            vec![64, 96, 128],
            vec![1000],
        ] {
            let mut parts: Vec<&[u8]> = Vec::new();
            let mut from = 0;
            for &c in &cuts {
                parts.push(&bytes[from..c]);
                from = c;
            }
            parts.push(&bytes[from..]);
            assert_eq!(content_hash_parts(&parts), content_hash(&bytes), "{cuts:?}");
            assert_eq!(content_hash_parts(&parts[..1]), content_hash(parts[0]));
        }
        assert_eq!(content_hash_parts(&[]), content_hash(b""));
    }

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
    fn content_hashes_are_pinned() {
        // Stored in the versions index: a change here makes every stored
        // write look changed to undo. v1 is what stores before
        // `"hashing": 2` hold.
        let text = b"fn main() {\n    println!(\"hello\");\n}\n";
        assert_eq!(content_hash_v1(b""), 0);
        assert_eq!(content_hash_v1(text), 0xec85_213c_ba95_8ee1);
        assert_eq!(content_hash(b""), 0x946d_db92_1d90_0d34);
        assert_eq!(content_hash(text), 0x7b3c_c02a_9527_8afc);
    }

    #[test]
    fn one_changed_word_anywhere_changes_the_hash() {
        // Lanes, tail and length each take part: a flip in any byte of a
        // file with a tail, and a longer file of zeros, all differ.
        let base: Vec<u8> = (0..203u32).map(|i| (i * 7) as u8).collect();
        let h = content_hash(&base);
        for i in 0..base.len() {
            let mut flipped = base.clone();
            flipped[i] ^= 0x40;
            assert_ne!(content_hash(&flipped), h, "byte {i}");
        }
        assert_ne!(content_hash(&[0u8; 64]), content_hash(&[0u8; 65]));
        assert_ne!(content_hash(&[0u8; 32]), content_hash(&[0u8; 40]));
    }

    #[test]
    fn reads_text_with_metadata() {
        let (_dir, ws) = setup();
        fs::write(ws.root().join("a.txt"), "héllo\r\nworld").unwrap();
        fs::set_permissions(ws.root().join("a.txt"), fs::Permissions::from_mode(0o640)).unwrap();
        let f = read_text(&ws.resolve("a.txt").unwrap()).unwrap();
        assert_eq!(f.text, "héllo\r\nworld");
        assert_eq!(f.len, "héllo\r\nworld".len() as u64);
        assert_eq!(f.hash(), content_hash("héllo\r\nworld".as_bytes()));
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
        assert!(
            err.to_string().starts_with(
                "a.png looks binary (NUL byte at offset 8); nib edits text files only"
            ),
            "{err}"
        );
        // A NUL past the window is not a binary marker (but still text).
        let mut late = vec![b'a'; BINARY_WINDOW];
        late.push(0);
        fs::write(ws.root().join("late.txt"), &late).unwrap();
        let f = read_text(&ws.resolve("late.txt").unwrap()).unwrap();
        assert_eq!(f.len, BINARY_WINDOW as u64 + 1);
    }

    #[test]
    fn non_utf8_reads_without_loss() {
        let (_dir, ws) = setup();
        fs::write(ws.root().join("a.txt"), b"one\ntwo\nthr\xe9e\n").unwrap();
        let f = read_text(&ws.resolve("a.txt").unwrap()).unwrap();
        assert_eq!(f.encoding, Encoding::Latin1);
        assert_eq!(f.text, "one\ntwo\nthr\u{e9}e\n");
        assert_eq!(f.bytes().as_ref(), b"one\ntwo\nthr\xe9e\n");
        assert_eq!(f.hash(), content_hash(b"one\ntwo\nthr\xe9e\n"));
        let err = f.encode("a.txt", "\u{2192}").unwrap_err();
        assert!(matches!(err, FileError::Unrepresentable { .. }), "{err:?}");
        assert!(
            err.to_string().starts_with(
                "a.txt is read as Latin-1 (ISO-8859-1), not UTF-8, and line 1 of the new text has `\u{2192}` (U+2192)"
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("iconv -f ISO-8859-1 -t UTF-8"),
            "{err}"
        );
    }

    #[test]
    fn utf16_is_named() {
        let (_dir, ws) = setup();
        fs::write(ws.root().join("w.txt"), b"\xff\xfeh\0i\0").unwrap();
        let err = read_text(&ws.resolve("w.txt").unwrap()).unwrap_err();
        assert!(err.to_string().starts_with("w.txt is UTF-16"), "{err}");
        assert!(
            err.to_string().contains("iconv -f UTF-16 -t UTF-8"),
            "{err}"
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
