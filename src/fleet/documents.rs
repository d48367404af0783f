//! The fleet's document cache on Redis (issue 32, item 1).
//!
//! Same keys and same bytes as the disk cache: the entry of [`CacheKey`] `k`
//! (FR-WF-16, CCH-KEY-01, article-mode keys included) is the exact v2 entry JSON
//! (FR-WF-16c) at `{prefix}doc:{k}`, written by one `SET … EXAT` at its
//! `expires_at` (plus one second: an entry is still fresh at `expires_at`,
//! FR-WF-16d). Redis's expiry is the TTL; a hit does not rewrite the entry, so
//! nothing slides (FR-WF-CCH-TTL-02). What is read is decoded and checked like a
//! disk entry (version, stamps, key, expiry): anything else is a miss, logged
//! `cache_read_failed` and deleted (FR-WF-CCH-READ-01/02), never served torn.
//!
//! The SRD's LRU rules (FR-WF-16e, CCH-LRU-01, EVICT-01: `last_accessed_at`,
//! `max_cache_entries`) belong to the disk backend: here the total size is
//! bounded by Redis's `maxmemory` and its eviction policy, and an entry keeps
//! the `last_accessed_at` it was written with. `max_cache_bytes` still caps one
//! entry (FR-WF-CCH-SIZE-01, with its note).

use std::sync::Arc;
use std::time::Duration;

use redis::Value;
use tokio::time::Instant;

use super::conn::{Redis, Unavailable};
use super::flight::{self, Claim, Lease, Wait};
use crate::cache::{CacheKey, Entry, Fresh};
use crate::config::CacheSettings;
use crate::vocabulary::Timestamp;

/// The document cache of the fleet. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct SharedDocuments {
    redis: Arc<Redis>,
    prefix: String,
    /// `max_cache_bytes`: the largest entry written or read.
    max_bytes: u64,
    /// `cache_ttl_days` (FR-WF-16d).
    ttl_days: u32,
    /// The lease of a single-flight lock ([`flight::lease_for`] the budget).
    lease: Duration,
}

/// Why a write did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WriteFailure {
    /// FR-WF-CCH-SIZE-01: the entry alone is larger than `max_cache_bytes`; the
    /// caller adds `cache_write_failed`.
    TooLarge,
    /// Redis did not take it: as with no shared cache, no note.
    Unavailable,
}

/// What a look-up found.
#[derive(Debug)]
pub(crate) enum Found {
    /// The first usable entry among the keys asked, and its index.
    Entry(usize, Entry),
    /// None usable; this caller holds the lock and fetches.
    Claimed(Lease),
    /// None usable, and the wait ended (deadline, or Redis gone): fetch alone.
    Nothing,
}

impl SharedDocuments {
    /// The store under `prefix` with the disk cache's entry settings (TTL, the
    /// largest entry), locks leased for work of `budget`.
    pub(crate) fn new(
        redis: Arc<Redis>,
        prefix: &str,
        cache: &CacheSettings,
        budget: Duration,
    ) -> SharedDocuments {
        SharedDocuments {
            redis,
            prefix: prefix.to_owned(),
            max_bytes: cache.max_bytes,
            ttl_days: cache.ttl_days,
            lease: flight::lease_for(budget),
        }
    }

    fn doc_key(&self, key: &CacheKey) -> String {
        format!("{}doc:{key}", self.prefix)
    }

    /// Reads `keys` in one round trip; the first whose entry `usable` accepts
    /// wins. `None` when none does, or Redis is unavailable.
    pub(crate) async fn read(
        &self,
        keys: &[CacheKey],
        now: Timestamp,
        usable: impl Fn(&Entry) -> bool,
    ) -> Option<(usize, Entry)> {
        let names: Vec<String> = keys.iter().map(|k| self.doc_key(k)).collect();
        let deadline = Instant::now() + super::conn::OP_TIMEOUT;
        let names_ref = &names;
        let replies: Vec<Value> = self
            .redis
            .run("read entry", deadline, |mut conn| async move {
                let mut pipe = redis::pipe();
                for name in names_ref {
                    pipe.cmd("GET").arg(name);
                }
                pipe.query_async(&mut conn).await
            })
            .await
            .ok()?;
        if replies.len() != keys.len() {
            let _ = self.redis.bad_reply("read entry");
            return None;
        }
        let values = replies
            .into_iter()
            .map(|v| flight::bytes_of(v).unwrap_or(None))
            .collect();
        self.first_usable(keys, values, now, &usable)
    }

    /// Waits for an entry of `keys` that `usable` accepts, or takes the
    /// single-flight lock of `keys[0]` (the key the caller will fetch), until
    /// `until`.
    pub(crate) async fn wait_or_claim(
        &self,
        keys: &[CacheKey],
        until: Instant,
        usable: impl Fn(&Entry) -> bool,
    ) -> Found {
        let Some(first) = keys.first() else {
            return Found::Nothing;
        };
        let lock = format!("{}lock:{first}", self.prefix);
        let names: Vec<String> = keys.iter().map(|k| self.doc_key(k)).collect();
        let wait = Wait {
            lock: &lock,
            values: &names,
            lease: self.lease,
            until,
        };
        let accept = |values| {
            let now = Timestamp::from_datetime(time::OffsetDateTime::now_utc());
            self.first_usable(keys, values, now, &usable)
        };
        match flight::wait_or_claim(&self.redis, wait, accept).await {
            Ok(Claim::Found((index, entry))) => Found::Entry(index, entry),
            Ok(Claim::Claimed(lease)) => Found::Claimed(lease),
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
    pub(crate) async fn write(&self, fresh: Fresh<'_>) -> Result<(), WriteFailure> {
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

    /// The first entry among `values` (read for `keys`) that decodes, is not
    /// expired and that `usable` accepts; the ones that do not decode are
    /// logged and deleted.
    fn first_usable(
        &self,
        keys: &[CacheKey],
        values: Vec<Option<Vec<u8>>>,
        now: Timestamp,
        usable: &impl Fn(&Entry) -> bool,
    ) -> Option<(usize, Entry)> {
        for (index, (key, value)) in keys.iter().zip(values).enumerate() {
            let Some(bytes) = value else { continue };
            match self.decode(key, &bytes) {
                Ok(entry) if entry.is_expired(now) => {}
                Ok(entry) if usable(&entry) => return Some((index, entry)),
                Ok(_) => {}
                Err(reason) => {
                    tracing::warn!(event = "cache_read_failed", key = %key, reason, "cache_read_failed");
                    let (this, key) = (self.clone(), *key);
                    tokio::spawn(async move { this.delete(&key).await });
                }
            }
        }
        None
    }

    fn decode(&self, key: &CacheKey, bytes: &[u8]) -> Result<Entry, String> {
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
