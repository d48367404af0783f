//! The fleet's document cache on Redis.
//!
//! Same keys and same bytes as the disk cache: the entry of [`CacheKey`] `k`
//! (FR-WF-16, CCH-KEY-01, article-mode keys included) is the exact v2 entry JSON
//! (FR-WF-16c) at `{prefix}doc:{k}`, sealed with the fleet's tag
//! ([`super::tag`]), written by one `SET … EXAT` at its `expires_at` (plus one
//! second: an entry is still fresh at `expires_at`, FR-WF-16d). Redis's expiry
//! is the TTL; a hit does not rewrite the entry, so nothing slides
//! (FR-WF-CCH-TTL-02).
//!
//! A value is read only if it is no longer than the largest entry a call
//! writes ([`MAX_ENTRY_BYTES`], or `max_cache_bytes` if smaller): its length is
//! checked in Redis first (`STRLEN`, [`super::flight`]), within the call's
//! deadline. What is read must carry a valid tag for its key, then is decoded
//! and checked like a disk entry (version, stamps, key, expiry, a `fetched_at`
//! not in the future): anything else is a miss, logged `cache_read_failed` and
//! deleted (FR-WF-CCH-READ-01/02), never served torn or forged. The tag is
//! checked and the JSON decoded on a blocking thread, off the async workers.
//!
//! The SRD's LRU rules (FR-WF-16e, CCH-LRU-01, EVICT-01: `last_accessed_at`,
//! `max_cache_entries`) belong to the disk backend: here the total size is
//! bounded by Redis's `maxmemory` and its eviction policy, and an entry keeps
//! the `last_accessed_at` it was written with. `max_cache_bytes` still caps one
//! entry (FR-WF-CCH-SIZE-01, with its note).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::conn::{Redis, Unavailable};
use super::flight::{self, Claim, Lease, Wait};
use super::tag::Sealer;
use crate::cache::shared::{Found, SharedDocuments, Turn, Usable, WriteFailure};
use crate::cache::{CacheKey, Entry, Fresh};
use crate::config::CacheSettings;
use crate::vocabulary::Timestamp;

/// The largest entry a call writes: a document's Markdown is capped at
/// [`crate::content::MAX_RENDERED_BYTES`], and its JSON string at most doubles it
/// (Markdown's own escapes, `\\` and `\"`, are two bytes each); a megabyte
/// covers the title, the stamps and the page starts. A larger entry is not
/// written (`cache_write_failed`, as for `max_cache_bytes`), so nothing larger
/// is ever read.
pub(crate) const MAX_ENTRY_BYTES: u64 = 2 * crate::content::MAX_RENDERED_BYTES as u64 + (1 << 20);

/// The document cache of the fleet: its [`SharedDocuments`]. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct RedisDocuments {
    redis: Arc<Redis>,
    prefix: String,
    /// Tags every value with the fleet's key.
    sealer: Sealer,
    /// The largest entry written or read: `max_cache_bytes` or
    /// [`MAX_ENTRY_BYTES`], the smaller.
    max_bytes: u64,
    /// `cache_ttl_days` (FR-WF-16d).
    ttl_days: u32,
    /// The lease of a single-flight lock ([`flight::lease_for`] the budget).
    lease: Duration,
}

impl SharedDocuments for RedisDocuments {
    fn read<'a>(
        &'a self,
        keys: &'a [CacheKey],
        deadline: Instant,
        usable: &'a Usable<'a>,
    ) -> BoxFuture<'a, Option<(usize, Entry)>> {
        Box::pin(self.read_first(keys, deadline, usable))
    }

    fn wait_or_claim<'a>(
        &'a self,
        keys: &'a [CacheKey],
        until: Instant,
        usable: &'a Usable<'a>,
    ) -> BoxFuture<'a, Found> {
        Box::pin(self.wait_or_lock(keys, until, usable))
    }

    fn write<'a>(&'a self, fresh: Fresh<'a>) -> BoxFuture<'a, Result<(), WriteFailure>> {
        Box::pin(self.set(fresh))
    }
}

/// A page's single-flight lock is the fleet's turn to fetch it.
impl Turn for Lease {
    fn land(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(self.release())
    }
}

impl RedisDocuments {
    /// The store under `prefix` with the disk cache's entry settings (TTL, the
    /// largest entry), locks leased for work of `budget`.
    pub(crate) fn new(
        redis: Arc<Redis>,
        prefix: &str,
        sealer: Sealer,
        cache: &CacheSettings,
        budget: Duration,
    ) -> RedisDocuments {
        RedisDocuments {
            redis,
            prefix: prefix.to_owned(),
            sealer,
            max_bytes: cache.max_bytes.min(MAX_ENTRY_BYTES),
            ttl_days: cache.ttl_days,
            lease: flight::lease_for(budget),
        }
    }

    fn doc_key(&self, key: &CacheKey) -> String {
        format!("{}doc:{key}", self.prefix)
    }

    /// The longest value stored for an entry of [`Self::max_bytes`].
    fn max_stored(&self) -> u64 {
        self.max_bytes
            .saturating_add(u64::try_from(self.sealer.overhead()).unwrap_or(u64::MAX))
    }

    /// Reads `keys` in one round trip, by `deadline` (at most one Redis
    /// operation's time); the first whose entry `usable` accepts wins. `None`
    /// when none does, or Redis is unavailable.
    async fn read_first(
        &self,
        keys: &[CacheKey],
        deadline: Instant,
        usable: &Usable<'_>,
    ) -> Option<(usize, Entry)> {
        let names: Vec<String> = keys.iter().map(|k| self.doc_key(k)).collect();
        let values = flight::read_guarded(&self.redis, &names, self.max_stored(), deadline)
            .await
            .ok()?;
        self.first_usable(keys, values, usable).await
    }

    /// Waits for an entry of `keys` that `usable` accepts, or takes the
    /// single-flight lock of `keys[0]` (the key the caller will fetch), until
    /// `until`.
    async fn wait_or_lock(&self, keys: &[CacheKey], until: Instant, usable: &Usable<'_>) -> Found {
        let Some(first) = keys.first() else {
            return Found::Nothing;
        };
        let lock = format!("{}lock:{first}", self.prefix);
        let names: Vec<String> = keys.iter().map(|k| self.doc_key(k)).collect();
        let wait = Wait {
            lock: &lock,
            values: &names,
            max_len: self.max_stored(),
            sealer: &self.sealer,
            lease: self.lease,
            until,
        };
        let accept = move |values| self.first_usable(keys, values, usable);
        match flight::wait_or_claim(&self.redis, wait, accept).await {
            Ok(Claim::Found((index, entry))) => Found::Entry(index, entry),
            Ok(Claim::Claimed(lease)) => Found::Claimed(Box::new(lease)),
            Ok(Claim::GaveUp) => {
                tracing::info!(
                    event = "fleet_flight_wait_ended",
                    key = %first,
                    "another instance is still fetching this page; fetching it here too"
                );
                Found::Nothing
            }
            Err(Unavailable) => Found::Nothing,
        }
    }

    /// Writes the entry of `fresh` under its key until its `expires_at`.
    async fn set(&self, fresh: Fresh<'_>) -> Result<(), WriteFailure> {
        let entry = Entry::fresh(fresh, self.ttl_days);
        let key = entry.key();
        let bytes = entry.encode().map_err(|error| {
            tracing::warn!(event = "cache_write_failed", key = %key, %error);
            WriteFailure::Unavailable
        })?;
        if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > self.max_bytes {
            // The older entry is known to be stale, as on disk.
            self.delete(&key).await;
            return Err(WriteFailure::TooLarge);
        }
        let expires_at = entry.expires_at.unix_seconds().saturating_add(1);
        let name = self.doc_key(&key);
        let bytes = self.sealer.seal(&name, &bytes);
        let deadline = Instant::now() + super::conn::OP_TIMEOUT;
        self.redis
            .run("write entry", deadline, |mut conn| async move {
                redis::cmd("SET")
                    .arg(&name)
                    .arg(bytes)
                    .arg("EXAT")
                    .arg(expires_at)
                    .query_async::<()>(&mut conn)
                    .await
            })
            .await
            .map_err(|Unavailable| WriteFailure::Unavailable)
    }

    /// The first entry among `values` (read for `keys`) whose tag is valid,
    /// that decodes, is neither expired nor fetched in the future, and that
    /// `usable` accepts; the ones that fail the tag or do not decode are
    /// logged and deleted. Checked on a blocking thread: a tag over megabytes
    /// and their JSON are not work for the async workers.
    async fn first_usable(
        &self,
        keys: &[CacheKey],
        values: Vec<Option<Vec<u8>>>,
        usable: &Usable<'_>,
    ) -> Option<(usize, Entry)> {
        if values.iter().all(Option::is_none) {
            return None;
        }
        let this = self.clone();
        let keys = keys.to_vec();
        let span = tracing::Span::current();
        let current = tokio::task::spawn_blocking(move || {
            let _in_call = span.enter();
            let now = Timestamp::from_datetime(time::OffsetDateTime::now_utc());
            this.current_entries(&keys, values, now)
        })
        .await
        .ok()?;
        current.into_iter().find(|(_, entry)| usable(entry))
    }

    /// The entries among `values` (read for `keys`), with their index, whose
    /// tag is valid, that decode and are current at `now`.
    fn current_entries(
        &self,
        keys: &[CacheKey],
        values: Vec<Option<Vec<u8>>>,
        now: Timestamp,
    ) -> Vec<(usize, Entry)> {
        let mut current = Vec::new();
        for (index, (key, value)) in keys.iter().zip(values).enumerate() {
            let Some(bytes) = value else { continue };
            match self.decode(key, &bytes) {
                Ok(entry) if entry.is_expired(now) => {}
                Ok(entry) if entry.is_from_the_future(now) => {
                    tracing::warn!(
                        event = "cache_future_entry",
                        key = %key,
                        fetched_at = %entry.fetched_at,
                        "cache entry fetched_at is in the future; fetching again"
                    );
                }
                Ok(entry) => current.push((index, entry)),
                Err(reason) => {
                    tracing::warn!(event = "cache_read_failed", key = %key, reason, "cache_read_failed");
                    flight::delete_later(&self.redis, &self.doc_key(key));
                }
            }
        }
        current
    }

    fn decode(&self, key: &CacheKey, stored: &[u8]) -> Result<Entry, String> {
        let name = self.doc_key(key);
        let bytes = self
            .sealer
            .open(&name, stored)
            .ok_or_else(|| "no valid fleet tag for its key".to_owned())?;
        if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > self.max_bytes {
            return Err("entry exceeds max_cache_bytes".to_owned());
        }
        Entry::decode(bytes, key).map_err(|e| e.to_string())
    }

    async fn delete(&self, key: &CacheKey) {
        let name = self.doc_key(key);
        let deadline = Instant::now() + super::conn::OP_TIMEOUT;
        let _ = self
            .redis
            .run("delete entry", deadline, |mut conn| async move {
                redis::cmd("DEL")
                    .arg(&name)
                    .query_async::<i64>(&mut conn)
                    .await
            })
            .await;
    }
}
