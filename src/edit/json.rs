//! A check serde_json does not make: a key given twice in one object.
//!
//! serde_json keeps the last of two equal keys without a word, so a call
//! `{"old": "a", "old": "b"}` would quietly lose text. This walks the raw
//! JSON once and reports the first repeated key with where it sits.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A key that appears twice in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    pub key: String,
    /// The 0-based index in a top-level `edits` list, when it sits there.
    pub edit: Option<usize>,
}

/// The first repeated key in `text`, if the text is JSON and has one.
/// Text that is not JSON gives `None`: the real parser reports that.
pub fn first_duplicate_key(text: &str) -> Option<DuplicateKey> {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut found = None;
    let _ = Walk {
        depth: 0,
        in_edits: false,
        index: None,
        found: &mut found,
    }
    .deserialize(&mut de);
    found
}

struct Walk<'a> {
    depth: usize,
    /// True for the value of a top-level `edits` field.
    in_edits: bool,
    /// The index of the element being walked inside `edits`.
    index: Option<usize>,
    found: &'a mut Option<DuplicateKey>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            let child = Walk {
                depth: self.depth + 1,
                in_edits: false,
                index: if self.in_edits { Some(i) } else { self.index },
                found: &mut *self.found,
            };
            if seq.next_element_seed(child)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) && self.found.is_none() {
                *self.found = Some(DuplicateKey {
                    key,
                    edit: self.index,
                });
                return Err(de::Error::custom("duplicate key"));
            }
            let child = Walk {
                depth: self.depth + 1,
                in_edits: self.depth == 0 && key == "edits",
                index: self.index,
                found: &mut *self.found,
            };
            map.next_value_seed(child)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_and_nested_duplicates() {
        let d = first_duplicate_key(r#"{"a": 1, "a": 2}"#).unwrap();
        assert_eq!((d.key.as_str(), d.edit), ("a", None));
        let d = first_duplicate_key(r#"{"edits": [{"old": "x"}, {"new": 1, "new": 2}]}"#).unwrap();
        assert_eq!((d.key.as_str(), d.edit), ("new", Some(1)));
        assert_eq!(
            first_duplicate_key(r#"{"a": {"b": 1}, "c": [{"b": 2}]}"#),
            None
        );
        assert_eq!(first_duplicate_key("not json"), None);
    }
}
