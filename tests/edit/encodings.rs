//! Round trips through a file's encoding (`nib::files::Encoding`, the
//! boundary the file store puts around the engine): any bytes decode and
//! encode back to themselves, and an exact edit of one line of a file in
//! Latin-1, Windows-1252 or UTF-8 with stray bytes changes that line's
//! bytes and no other.

use nib::edit::{Edit, apply};
use nib::files::Encoding;
use proptest::prelude::*;

/// Pieces of a line: ASCII, Latin-1 and Windows-1252 bytes (0x85 is NEL in
/// Latin-1, an ellipsis in 1252), UTF-8 characters, and byte runs that are
/// not UTF-8 (a lead byte without its continuation, a lone continuation).
const PIECES: &[&[u8]] = &[
    b"a",
    b"x = 1",
    b" ",
    b"\t",
    b"\xe9",
    b"\xa0",
    b"\x85",
    b"\x93q\x94",
    b"\x80",
    b"\xff",
    b"\xc3",
    b"\xbf",
    b"\xe2\x82",
    "é".as_bytes(),
    "—".as_bytes(),
    "€".as_bytes(),
    "\u{feff}".as_bytes(),
    b"\r",
];

const MARKER: &str = "MARKER-LINE";

fn lines() -> impl Strategy<Value = Vec<Vec<usize>>> {
    prop::collection::vec(prop::collection::vec(0..PIECES.len(), 0..8), 0..12)
}

fn join(lines: &[Vec<usize>]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        for &p in line {
            out.extend_from_slice(PIECES[p]);
        }
        out.push(b'\n');
    }
    out
}

proptest! {
    #![proptest_config(crate::proptest_config())]

    /// Decoding never loses a byte.
    #[test]
    fn any_bytes_decode_and_encode_back(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let (text, encoding) = Encoding::decode(bytes.clone());
        let back = encoding.encode(&text).unwrap().into_owned();
        prop_assert_eq!(back, bytes);
    }

    /// An exact edit of one line changes its bytes only: every byte
    /// before and after it is the file's, whatever the encoding.
    #[test]
    fn an_edit_keeps_every_other_byte(
        before in lines(),
        after in lines(),
        new in prop::sample::select(vec!["changed", "caf\u{e9} \u{a9}", "", "two\nlines"]),
    ) {
        let head = join(&before);
        let tail = join(&after);
        let mut bytes = head.clone();
        bytes.extend_from_slice(MARKER.as_bytes());
        bytes.push(b'\n');
        bytes.extend_from_slice(&tail);
        let (text, encoding) = Encoding::decode(bytes);
        let edit = Edit { old: MARKER.into(), new: new.into(), replace_all: false };
        let applied = apply(&text, &[edit], &[]).unwrap();
        let written = encoding.encode(&applied.text).unwrap().into_owned();
        // The new line's bytes, as the engine ends it: a line of old
        // Mac endings (a lone CR before the marker) is left to the
        // engine; the head and tail must be the file's.
        prop_assert!(written.starts_with(&head), "{encoding:?}\n{head:?}\n{written:?}");
        prop_assert!(written.ends_with(&tail), "{encoding:?}\n{tail:?}\n{written:?}");
        // New's line breaks take the file's usual ending (CRLF, or a
        // lone CR where those are the most common).
        let middle = String::from_utf8_lossy(&written[head.len()..written.len() - tail.len()])
            .replace("\r\n", "\n")
            .replace('\r', "\n");
        let new_bytes = encoding.encode(new).unwrap();
        prop_assert!(
            middle.starts_with(&*String::from_utf8_lossy(&new_bytes)),
            "{encoding:?} {middle:?}"
        );
    }
}

#[test]
fn each_encoding_is_met() {
    // Pieces like the generator's give every reading.
    let cases: [(&[u8], Encoding); 4] = [
        ("é\n".as_bytes(), Encoding::Utf8),
        (b"\xe9\n", Encoding::Latin1),
        (b"\x93\n", Encoding::Windows1252),
        (b"\xc3\xa9 \xc3\xa9 \xff\n", Encoding::Utf8WithStrayBytes),
    ];
    for (bytes, expected) in cases {
        assert_eq!(Encoding::decode(bytes.to_vec()).1, expected, "{bytes:?}");
    }
}
