//! Whether a file on disk holds exactly the bytes nib expects: the look
//! a checked write takes at the file it replaces, before and after the
//! rename (`write.rs`), read a block at a time.

use std::fs::File;
use std::io;

/// Whether the open file holds exactly `want`, its parts one after
/// another (its size first: a change of size needs no read). Compared a
/// block at a time, so a 10 MB file costs no 10 MB buffer per look; a
/// large file in two halves at once, one on a second thread (the look
/// runs while nib waits, and copying the file out of the kernel is most
/// of its time).
pub(super) fn holds(file: &mut File, want: &[&[u8]]) -> io::Result<bool> {
    let len: usize = want.iter().map(|p| p.len()).sum();
    if file.metadata()?.len() != len as u64 {
        return Ok(false);
    }
    let file: &File = file;
    let same = if len >= PARALLEL_LOOK {
        let half = len / 2;
        std::thread::scope(|scope| {
            let second = scope.spawn(|| holds_range(file, want, half..len));
            let first = holds_range(file, want, 0..half);
            match second.join() {
                Ok(second) => Ok(first? && second?),
                Err(_) => Err(io::Error::other(
                    "the look at the file's second half failed",
                )),
            }
        })?
    } else {
        holds_range(file, want, 0..len)?
    };
    // Nothing past the end: a file that grew since the size was read.
    Ok(same && read_at_full(file, &mut [0u8; 1], len as u64)? == 0)
}

/// Files at least this large are looked at in two halves at once.
const PARALLEL_LOOK: usize = 4 << 20;

/// Whether bytes `range` of the file are bytes `range` of `want` joined.
fn holds_range(file: &File, want: &[&[u8]], range: std::ops::Range<usize>) -> io::Result<bool> {
    let mut block = vec![0u8; range.len().clamp(1, 256 * 1024)];
    let mut parts = parts_from(want, range.start);
    let mut part: &[u8] = parts.next().unwrap_or_default();
    let mut at = range.start;
    while at < range.end {
        let want_n = block.len().min(range.end - at);
        let n = read_at_full(file, &mut block[..want_n], at as u64)?;
        if n < want_n {
            return Ok(false); // the file shrank
        }
        let mut read = &block[..n];
        while !read.is_empty() {
            let k = read.len().min(part.len());
            if k == 0 || read[..k] != part[..k] {
                return Ok(false);
            }
            read = &read[k..];
            part = &part[k..];
            if part.is_empty() {
                part = parts.next().unwrap_or_default();
            }
        }
        at += n;
    }
    Ok(true)
}

/// The parts' bytes from offset `from` on, as slices.
fn parts_from<'a>(parts: &'a [&'a [u8]], from: usize) -> impl Iterator<Item = &'a [u8]> {
    let mut skip = from;
    parts.iter().filter_map(move |&p| {
        if skip >= p.len() {
            skip -= p.len();
            return None;
        }
        let rest = &p[skip..];
        skip = 0;
        (!rest.is_empty()).then_some(rest)
    })
}

/// Reads into all of `buf` from `offset` unless the file ends first;
/// returns how many bytes were read.
fn read_at_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
