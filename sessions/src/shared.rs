//! [`SharedStr`]: the record's immutable strings (ids, identities, names), shared between its
//! copies.
//!
//! Every write copies the record (`Session::apply_to` applies to a copy, so the cached one
//! stays as it was until the write is stored). With `String`s the copy allocated and copied
//! each id, identity and queued action again: about 30 allocations a copy of a two-player
//! table in play, and as many frees when a copy was dropped. These strings never change once
//! set (a field is replaced whole), so a copy only counts a reference now.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable string whose clones share one allocation. It reads, compares, orders,
/// hashes, prints and (de)serializes exactly as the `str` it holds, so the stored record and
/// every answer are the same bytes as with a `String`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for SharedStr {
    fn default() -> Self {
        SharedStr(Arc::from(""))
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Maps keyed by it are looked up by `&str` (its order and hash are the `str`'s).
impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        SharedStr(Arc::from(s))
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        SharedStr(Arc::from(s))
    }
}

impl From<&String> for SharedStr {
    fn from(s: &String) -> Self {
        SharedStr(Arc::from(s.as_str()))
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> Self {
        s.0.to_string()
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        self == &*other.0
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = SharedStr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SharedStr, E> {
                Ok(SharedStr::from(v))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<SharedStr, E> {
                Ok(SharedStr::from(v))
            }
        }
        d.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::SharedStr;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// A clone shares the bytes; compares, orders and looks up as the `str`.
    #[test]
    fn a_clone_shares_the_bytes_and_compares_as_the_str() {
        let a = SharedStr::from("unconfirmed:p_0123abcd");
        let b = a.clone();
        assert!(std::ptr::eq(a.as_ptr(), b.as_ptr()));
        assert_eq!(a, "unconfirmed:p_0123abcd");
        assert_eq!("unconfirmed:p_0123abcd", a);
        assert_eq!(a, String::from("unconfirmed:p_0123abcd"));
        let (clock, alive) = (SharedStr::from("clock"), SharedStr::from("host_alive"));
        assert!(clock < alive);
        let mut m = BTreeMap::new();
        m.insert(a, 1);
        assert_eq!(m.get("unconfirmed:p_0123abcd"), Some(&1));
        assert_eq!(
            format!("{b} {b:?}"),
            "unconfirmed:p_0123abcd \"unconfirmed:p_0123abcd\""
        );
    }

    /// The same bytes as a `String` in JSON and MessagePack, both ways.
    #[test]
    fn it_is_encoded_as_a_string_is() {
        for s in [
            "",
            "p_0123abcd",
            "\u{e9}t\u{e9} \"quoted\"",
            &"x".repeat(300),
        ] {
            let shared = SharedStr::from(s);
            assert_eq!(
                serde_json::to_string(&shared).unwrap(),
                serde_json::to_string(s).unwrap()
            );
            let packed = rmp_serde::to_vec(&shared).unwrap();
            assert_eq!(packed, rmp_serde::to_vec(s).unwrap());
            let back: SharedStr = rmp_serde::from_slice(&packed).unwrap();
            assert_eq!(back, s);
            let back: SharedStr = serde_json::from_value(json!(s)).unwrap();
            assert_eq!(back, s);
        }
        assert!(serde_json::from_value::<SharedStr>(json!(1)).is_err());
    }
}
