//! Authenticating what the fleet keeps in Redis: "the fleet trusts only what the
//! fleet wrote".
//!
//! Whoever can write to Redis would otherwise choose what every agent reads: an
//! entry served from Redis skips the fetch, so robots.txt (and for a name, DNS
//! and its address check) never runs for it. So every value the fleet writes and
//! later trusts (document entries, robots.txt outcomes, politeness holds and
//! in-flight slots, single-flight locks) is stored sealed:
//!
//! ```text
//! "WFT1" | HMAC-SHA256(key, "webfetch fleet v1\0" | len(redis key) as u64 BE | redis key | payload) | payload
//! ```
//!
//! under the key of `[tools.webfetch.fleet] key_file`. The tag binds the payload
//! to the Redis key it is stored at (prefix included), so a value copied to
//! another key, or to another kind of key, fails. It is checked in constant time
//! (`hmac`'s `verify_slice`). A value without a valid tag is a miss, and the
//! caller deletes it.
//!
//! With `allow_unauthenticated = true` (no key) values are stored and read as
//! their bare payload, as before keys existed; every other check (sizes, stamps,
//! clamps) still applies. An instance with a key finds such values untagged and
//! deletes them, so a fleet must share one key (or none) on every instance.

use std::fmt;
use std::sync::Arc;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::config::FleetKey;

/// The first bytes of a sealed value, format version 1.
const MAGIC: &[u8; 4] = b"WFT1";

/// HMAC-SHA256's tag length.
const TAG_LEN: usize = 32;

/// What domain-separates these tags from any other use of the key.
const CONTEXT: &[u8] = b"webfetch fleet v1\0";

/// Seals and opens the fleet's values under its key (or, without one, passes
/// them through). Cheap to clone.
#[derive(Clone)]
pub(crate) struct Sealer {
    key: Option<Arc<FleetKey>>,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("authenticated", &self.key.is_some())
            .finish()
    }
}

impl Sealer {
    /// A sealer under `key`; `None` (the visible opt-out) passes values through.
    pub(crate) fn new(key: Option<&FleetKey>) -> Sealer {
        Sealer {
            key: key.map(|key| Arc::new(key.clone())),
        }
    }

    /// How many bytes sealing adds to a payload.
    pub(crate) fn overhead(&self) -> usize {
        if self.key.is_some() {
            MAGIC.len() + TAG_LEN
        } else {
            0
        }
    }

    /// The stored form of `payload` at `redis_key`.
    pub(crate) fn seal(&self, redis_key: &str, payload: &[u8]) -> Vec<u8> {
        let Some(key) = &self.key else {
            return payload.to_vec();
        };
        let tag = mac(key, redis_key, payload).finalize().into_bytes();
        let mut stored = Vec::with_capacity(self.overhead() + payload.len());
        stored.extend_from_slice(MAGIC);
        stored.extend_from_slice(&tag);
        stored.extend_from_slice(payload);
        stored
    }

    /// The payload of `stored`, read at `redis_key`, if its tag is valid for
    /// that key; `None` for anything else (no tag, a wrong one, another key's).
    pub(crate) fn open<'a>(&self, redis_key: &str, stored: &'a [u8]) -> Option<&'a [u8]> {
        let Some(key) = &self.key else {
            return Some(stored);
        };
        let rest = stored.strip_prefix(MAGIC)?;
        let (tag, payload) = rest.split_at_checked(TAG_LEN)?;
        mac(key, redis_key, payload)
            .verify_slice(tag)
            .ok()
            .map(|()| payload)
    }
}

/// The MAC state over one value's context, key and payload.
fn mac(key: &FleetKey, redis_key: &str, payload: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length (a long one is hashed first), so this
    // never fails; `new_from_slice` is `KeyInit`'s general signature.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key.expose())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
    mac.update(CONTEXT);
    mac.update(
        &u64::try_from(redis_key.len())
            .unwrap_or(u64::MAX)
            .to_be_bytes(),
    );
    mac.update(redis_key.as_bytes());
    mac.update(payload);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer(secret: &str) -> Sealer {
        Sealer::new(Some(&FleetKey::from_file_bytes(secret.as_bytes()).unwrap()))
    }

    #[test]
    fn a_sealed_value_opens_only_at_its_own_key_under_its_own_key() {
        let a = sealer("0123456789abcdef0123456789abcdef");
        let stored = a.seal("webfetch:doc:k1", b"{\"v\":2}");
        assert_eq!(stored.len(), a.overhead() + 7);
        assert_eq!(a.open("webfetch:doc:k1", &stored), Some(&b"{\"v\":2}"[..]));
        assert_eq!(a.open("webfetch:doc:k2", &stored), None, "copied elsewhere");
        assert_eq!(a.open("other:doc:k1", &stored), None, "another prefix");
        let b = sealer("fedcba9876543210fedcba9876543210");
        assert_eq!(b.open("webfetch:doc:k1", &stored), None, "another key");
        let mut flipped = stored.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(a.open("webfetch:doc:k1", &flipped), None, "payload changed");
        for bad in [&b""[..], b"WFT1", b"{\"v\":2}", &stored[..stored.len() - 8]] {
            assert_eq!(a.open("webfetch:doc:k1", bad), None, "{bad:?}");
        }
    }

    #[test]
    fn without_a_key_values_pass_through() {
        let open = Sealer::new(None);
        assert_eq!(open.overhead(), 0);
        assert_eq!(open.seal("k", b"x"), b"x");
        assert_eq!(open.open("k", b"x"), Some(&b"x"[..]));
        assert!(!format!("{open:?}").contains("true"));
    }
}
