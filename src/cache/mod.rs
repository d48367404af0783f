//! The on-disk cache of extracted documents (SRD 3.6).
//!
//! One JSON file per entry at `{cache_dir}/{first2}/{keyhex}.json`, keyed by
//! `sha256(final canonical URL + "\n" + method)` ([`CacheKey`], FR-WF-16, 16a). An
//! entry holds the extracted document, never chunks (FR-WF-CCH-CONTENT-01): the
//! caller re-chunks and re-fits every hit with the current request's parameters.
//!
//! Extension: documents extracted in article mode live under their own key
//! ([`CacheKey::with_extraction`], [`DiskCache::get_with`], [`DiskCache::put_with`]),
//! so the two modes never serve each other's documents. [`DiskCache::get`] and
//! [`DiskCache::put`] are the SRD's, unchanged.
//!
//! # Sharing one directory between processes
//!
//! There are no locks. Correctness rests on three rules (see `store`): entry paths
//! change only by `rename` of complete files; a file's mtime is set to its
//! `last_accessed_at` before it is renamed into place; garbage is deleted only if it
//! is the very file that was read. Every file a reader can see is therefore a whole
//! entry (or true garbage), and LRU order can be read from metadata alone.
//!
//! # The index, and why writes stay cheap at 10 000 entries
//!
//! Hits never need the index: they read one file and rewrite it, splicing the new
//! fixed-width `last_accessed_at` into the bytes read rather than re-encoding the
//! document. Writes need entry
//! count, total bytes and the LRU entry. [`DiskCache`] keeps these in an in-memory
//! index built on the first write from one scan of the two-level directory that
//! reads metadata only (mtime = `last_accessed_at`, length = on-disk size), then
//! updated in O(log n) by this handle's own hits, writes and evictions. It stays
//! correct against other processes because:
//!
//! * every eviction victim is `stat`ed before it is deleted: a victim that is gone
//!   is dropped from the index, one another process used since (newer mtime or other
//!   size) is re-filed under its real time and the loop picks again;
//! * entries other processes add are invisible until the next scan, which happens
//!   when the index is older than [`INDEX_MAX_AGE`] (or on [`DiskCache::refresh_index`]).
//!   Between scans the directory can overshoot the limits by at most what other
//!   processes wrote meanwhile; a one-shot CLI process scans on its first write, so
//!   it always starts from the truth. [`DiskCache::warm_index`] lets the tool run
//!   that scan while the network fetch of a miss is still in flight.
//!
//! Entries whose mtime was changed by hand (`touch`, `cp`) are ordered by that mtime
//! until their next hit rewrites them; the SRD's `last_accessed_at` inside the file
//! stays authoritative for everything else.
//!
//! All methods do blocking file I/O; call them from `spawn_blocking` in async code.

mod entry;
mod index;
mod key;
mod store;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use time::OffsetDateTime;

use crate::config::CacheSettings;
use crate::document::{ExtractedDocument, RenderingMethod};
use crate::extract::ExtractionMode;
use crate::output::Timestamp;
use crate::url::CanonicalUrl;

use entry::Entry;
use index::{Index, Limits, Slot};
pub use key::CacheKey;
use store::ReadOutcome;

/// How long an in-memory index is trusted before the next write rescans the
/// directory to learn what other processes added.
pub const INDEX_MAX_AGE: Duration = Duration::from_secs(60);

/// A handle on an enabled cache directory (FR-WF-CCH-ENABLE-01). Cheap to share
/// behind an `Arc`; several handles, in one process or many, may use the same
/// directory at once.
#[derive(Debug)]
pub struct DiskCache {
    dir: PathBuf,
    ttl_days: u32,
    limits: Limits,
    index: Mutex<Option<Snapshot>>,
}

#[derive(Debug)]
struct Snapshot {
    index: Index,
    built: Instant,
}

/// A cache hit: the stored document and the time it was originally fetched, which
/// the response reports as its `fetched_at` (FR-WF-17a).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedDocument {
    /// The extracted document to re-chunk (FR-WF-CCH-CONTENT-01).
    pub document: ExtractedDocument,
    /// The original `fetched_at`, second precision, UTC.
    pub fetched_at: OffsetDateTime,
    /// An HTTP result that stood in for a browser render because the browser was
    /// unavailable ([`DiskCache::put_stand_in`]); a caller that has a browser now
    /// should render instead of serving it.
    pub browser_unavailable: bool,
}

/// Why a write did not happen. The fetch still succeeds (FR-WF-16h, FR-WF-19a): the
/// caller appends `cache_write_failed` to the notes and logs
/// `cache_write_failed: {error}`; `Display` is exactly that `{reason}`.
#[derive(Debug, thiserror::Error)]
pub enum CacheWriteError {
    /// The serialized entry alone is larger than `max_cache_bytes`
    /// (FR-WF-CCH-SIZE-01); nothing was written.
    #[error("entry exceeds max_cache_bytes")]
    EntryTooLarge {
        /// Serialized size in bytes.
        size: u64,
        /// The configured limit.
        max_bytes: u64,
    },
    /// The entry could not be serialized (serde_json refused; not expected for
    /// these types).
    #[error("cannot encode entry: {0}")]
    Encode(String),
    /// Listing the cache directory to build the index failed.
    #[error("cannot scan cache directory: {0}")]
    Scan(io::Error),
    /// An eviction victim could not be deleted, so writing would break a limit.
    #[error("cannot evict entry: {0}")]
    Evict(io::Error),
    /// Creating, writing or renaming the entry file failed.
    #[error("cannot write entry: {0}")]
    Write(io::Error),
}

impl DiskCache {
    /// Opens the cache, creating its directory with parents (FR-WF-CCH-ENABLE-02).
    /// `None` when caching is disabled by configuration, or when the directory
    /// cannot be created, which also logs a warning: the cache is then off for this
    /// invocation, and the caller must neither read nor write nor emit cache notes
    /// (FR-WF-CCH-ENABLE-01).
    pub fn open(settings: &CacheSettings) -> Option<DiskCache> {
        let dir = settings.dir.as_ref()?;
        if settings.max_entries == 0 {
            return None;
        }
        if let Err(error) = std::fs::create_dir_all(dir) {
            tracing::warn!(
                event = "cache_disabled",
                cache_dir = %dir.display(),
                %error,
                "cache_dir cannot be created; caching is disabled for this invocation"
            );
            return None;
        }
        Some(DiskCache {
            dir: dir.clone(),
            ttl_days: settings.ttl_days,
            limits: Limits {
                max_entries: u64::from(settings.max_entries),
                max_bytes: settings.max_bytes,
            },
            index: Mutex::new(None),
        })
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry of `url` fetched with `method` lives (FR-WF-16a).
    pub fn entry_path(&self, url: &CanonicalUrl, method: RenderingMethod) -> PathBuf {
        CacheKey::new(url, method).entry_path(&self.dir)
    }

    /// Looks up `url` as fetched with `method`.
    ///
    /// A miss when there is no entry, when it expired (`expires_at < now`,
    /// FR-WF-16d), or when it is unreadable, malformed, of another version or filed
    /// under the wrong key; those last are logged as `cache_read_failed` and deleted
    /// (FR-WF-CCH-READ-01, READ-02, FR-WF-CCH-VER-01). A hit rewrites the entry
    /// atomically with `last_accessed_at = now` and nothing else changed, so
    /// `expires_at` never slides (FR-WF-CCH-LRU-01, FR-WF-CCH-TTL-02).
    pub fn get(
        &self,
        url: &CanonicalUrl,
        method: RenderingMethod,
        now: OffsetDateTime,
    ) -> Option<CachedDocument> {
        self.get_with(url, method, ExtractionMode::Srd, now)
    }

    /// Extension: [`get`](Self::get) for a document extracted in `extraction`
    /// mode; [`ExtractionMode::Srd`] is exactly `get`.
    pub fn get_with(
        &self,
        url: &CanonicalUrl,
        method: RenderingMethod,
        extraction: ExtractionMode,
        now: OffsetDateTime,
    ) -> Option<CachedDocument> {
        let key = CacheKey::with_extraction(url, method, extraction);
        let path = key.entry_path(&self.dir);
        let now = Timestamp::from_datetime(now);
        let (bytes, read_id) = match store::read_capped(&path, self.limits.max_bytes) {
            ReadOutcome::Missing => return None,
            ReadOutcome::Bytes(bytes, id) => (bytes, id),
            ReadOutcome::Unusable(reason, id) => {
                self.discard(&key, &path, id, reason);
                return None;
            }
            ReadOutcome::Failed(error) => {
                self.discard(&key, &path, None, &error.to_string());
                return None;
            }
        };
        let mut entry = match Entry::decode(&bytes, &key) {
            Ok(entry) => entry,
            Err(error) => {
                self.discard(&key, &path, Some(read_id), &error.to_string());
                return None;
            }
        };
        if entry.is_expired(now) {
            // Left in place: the write that follows the re-fetch replaces it, and
            // deleting by path here could race with that very write.
            tracing::debug!(event = "cache_expired", key = %key);
            return None;
        }
        let fetched_at = entry.fetched_at.to_datetime();
        let mut bytes = bytes;
        let restamped = entry::restamp(&mut bytes, entry.last_accessed_at, now);
        entry.last_accessed_at = now;
        self.touch(&key, &entry, restamped.then_some(bytes), &path, read_id);
        Some(CachedDocument {
            document: entry.extracted,
            fetched_at,
            browser_unavailable: entry.browser_unavailable,
        })
    }

    /// Stores `document` as the entry of `url` fetched with `method`, replacing any
    /// entry under the same key (FR-WF-17, FR-WF-CCH-NOCACHE-01). `url` is the final
    /// URL after redirects and `method` the method that produced the document
    /// (FR-WF-CCH-KEY-01, KEY-03). `expires_at = fetched_at + cache_ttl_days`,
    /// `last_accessed_at = now`.
    ///
    /// Least recently used entries are evicted first, until one more entry of this
    /// size keeps both `max_cache_entries` and `max_cache_bytes`
    /// (FR-WF-16e, 16f, FR-WF-CCH-EVICT-01). The write is atomic (FR-WF-16g).
    /// An entry larger than `max_cache_bytes` on its own is not written, and an
    /// older entry under its key is removed, since it is known to be stale
    /// (FR-WF-CCH-SIZE-01).
    pub fn put(
        &self,
        url: &CanonicalUrl,
        method: RenderingMethod,
        document: &ExtractedDocument,
        fetched_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), CacheWriteError> {
        self.put_with(url, method, ExtractionMode::Srd, document, fetched_at, now)
    }

    /// Extension: [`put`](Self::put) for a document extracted in `extraction`
    /// mode, filed under its own key; [`ExtractionMode::Srd`] is exactly `put`.
    pub fn put_with(
        &self,
        url: &CanonicalUrl,
        method: RenderingMethod,
        extraction: ExtractionMode,
        document: &ExtractedDocument,
        fetched_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), CacheWriteError> {
        let entry = self.new_entry(url, method, extraction, document, fetched_at, now);
        self.store(entry)
    }

    /// [`put_with`](Self::put_with) for an HTTP result that stood in for a browser
    /// render because the browser was unavailable (FR-WF-12d, SRD-READINGS 19).
    /// Filed under the HTTP key like any HTTP result, and marked, so that a reader
    /// with a browser available can pass it over ([`CachedDocument::browser_unavailable`]).
    pub fn put_stand_in(
        &self,
        url: &CanonicalUrl,
        extraction: ExtractionMode,
        document: &ExtractedDocument,
        fetched_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<(), CacheWriteError> {
        let mut entry = self.new_entry(
            url,
            RenderingMethod::Http,
            extraction,
            document,
            fetched_at,
            now,
        );
        entry.browser_unavailable = true;
        self.store(entry)
    }

    fn new_entry(
        &self,
        url: &CanonicalUrl,
        method: RenderingMethod,
        extraction: ExtractionMode,
        document: &ExtractedDocument,
        fetched_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Entry {
        let fetched_at = Timestamp::from_datetime(fetched_at);
        Entry {
            canonical_url: url.as_str().to_owned(),
            method,
            extraction,
            browser_unavailable: false,
            fetched_at,
            expires_at: fetched_at.plus_days(self.ttl_days),
            last_accessed_at: Timestamp::from_datetime(now),
            extracted: document.clone(),
        }
    }

    /// Writes `entry` under its key, evicting what it needs (see [`put`](Self::put)).
    fn store(&self, entry: Entry) -> Result<(), CacheWriteError> {
        let key = CacheKey::from_parts_with(&entry.canonical_url, entry.method, entry.extraction);
        let now = entry.last_accessed_at;
        let bytes = entry
            .encode()
            .map_err(|e| CacheWriteError::Encode(e.to_string()))?;
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);

        if size > self.limits.max_bytes {
            let _ = std::fs::remove_file(key.entry_path(&self.dir));
            self.with_index(|index| {
                index.remove(&key);
            });
            return Err(CacheWriteError::EntryTooLarge {
                size,
                max_bytes: self.limits.max_bytes,
            });
        }

        let mut guard = self.lock_index();
        let index = self.fresh_index(&mut guard)?;
        // The entry being replaced does not count against the room we need.
        let replaced = index.remove(&key);
        if let Err(error) = self.evict_for(index, size) {
            if let Some(slot) = replaced {
                index.upsert(key, slot);
            }
            return Err(CacheWriteError::Evict(error));
        }
        match store::write_atomic(&self.dir, &key, &bytes, now) {
            Ok(size) => {
                index.upsert(
                    key,
                    Slot {
                        last_accessed: now,
                        size,
                    },
                );
                Ok(())
            }
            Err(error) => {
                // The old entry, if any, is superseded by the fetch that just
                // happened; better a miss than serving it again.
                self.remove_entry(index, &key);
                Err(CacheWriteError::Write(error))
            }
        }
    }

    /// Builds the in-memory index now if it is missing or stale, so the next
    /// [`put`](Self::put) does not pay for the directory scan (tens of ms at 10 000
    /// entries). Meant to run on a blocking thread while the network fetch of a miss
    /// is in flight; a failure is left for `put` to report.
    pub fn warm_index(&self) {
        let mut guard = self.lock_index();
        let _ = self.fresh_index(&mut guard);
    }

    /// Forgets the in-memory index; the next write rebuilds it from the directory.
    /// Useful after another process is known to have changed the cache.
    pub fn refresh_index(&self) {
        *self.lock_index() = None;
    }

    /// FR-WF-CCH-EVICT-01: evicts LRU entries until one more entry of `incoming`
    /// bytes fits both limits. Each victim is checked on disk first (see the module
    /// doc); the loop is bounded so that other processes touching files forever
    /// cannot keep it spinning.
    fn evict_for(&self, index: &mut Index, incoming: u64) -> io::Result<()> {
        let mut rechecks_left = index.len().saturating_add(16);
        while !index.fits(incoming, self.limits) {
            let Some((victim, slot)) = index.oldest() else {
                return Ok(());
            };
            match store::stat_entry(&self.dir, &victim)? {
                None => {
                    index.remove(&victim);
                }
                Some(seen)
                    if (seen.last_accessed != slot.last_accessed || seen.size != slot.size)
                        && rechecks_left > 0 =>
                {
                    rechecks_left -= 1;
                    index.upsert(
                        victim,
                        Slot {
                            last_accessed: seen.last_accessed,
                            size: seen.size,
                        },
                    );
                }
                Some(_) => {
                    match std::fs::remove_file(victim.entry_path(&self.dir)) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e),
                    }
                    tracing::debug!(event = "cache_evicted", key = %victim);
                    index.remove(&victim);
                }
            }
        }
        Ok(())
    }

    /// Rewrites a hit with its new `last_accessed_at`, unless the file changed since
    /// it was read (then the newer file wins). `restamped` is the file's own bytes
    /// with the new stamp spliced in, when that was possible; otherwise the entry is
    /// encoded again. A failure costs LRU precision only, never the hit.
    fn touch(
        &self,
        key: &CacheKey,
        entry: &Entry,
        restamped: Option<Vec<u8>>,
        path: &Path,
        read_id: store::FileId,
    ) {
        if store::file_id(path) != Some(read_id) {
            return;
        }
        let bytes = match restamped {
            Some(bytes) => Ok(bytes),
            None => entry.encode().map_err(|e| e.to_string()),
        };
        let written = bytes.and_then(|bytes| {
            store::write_atomic(&self.dir, key, &bytes, entry.last_accessed_at)
                .map_err(|e| e.to_string())
        });
        match written {
            Ok(size) => self.with_index(|index| {
                index.upsert(
                    *key,
                    Slot {
                        last_accessed: entry.last_accessed_at,
                        size,
                    },
                );
            }),
            Err(error) => tracing::warn!(event = "cache_touch_failed", key = %key, %error),
        }
    }

    /// FR-WF-CCH-READ-01/02: logs `cache_read_failed`, deletes the file (only if it
    /// is the one read) and drops it from LRU and size accounting.
    fn discard(&self, key: &CacheKey, path: &Path, read_id: Option<store::FileId>, reason: &str) {
        tracing::warn!(event = "cache_read_failed", key = %key, reason, "cache_read_failed");
        store::remove_if_same(path, key, read_id);
        self.with_index(|index| {
            index.remove(key);
        });
    }

    fn remove_entry(&self, index: &mut Index, key: &CacheKey) {
        let _ = std::fs::remove_file(key.entry_path(&self.dir));
        index.remove(key);
    }

    /// The index, rebuilt from a scan when missing or older than [`INDEX_MAX_AGE`].
    fn fresh_index<'a>(
        &self,
        guard: &'a mut MutexGuard<'_, Option<Snapshot>>,
    ) -> Result<&'a mut Index, CacheWriteError> {
        let stale = guard
            .as_ref()
            .is_none_or(|snapshot| snapshot.built.elapsed() > INDEX_MAX_AGE);
        if stale {
            let mut index = Index::new();
            for seen in store::scan(&self.dir).map_err(CacheWriteError::Scan)? {
                index.upsert(
                    seen.key,
                    Slot {
                        last_accessed: seen.last_accessed,
                        size: seen.size,
                    },
                );
            }
            **guard = Some(Snapshot {
                index,
                built: Instant::now(),
            });
        }
        match guard.as_mut() {
            Some(snapshot) => Ok(&mut snapshot.index),
            None => Err(CacheWriteError::Scan(io::Error::other("index unavailable"))),
        }
    }

    /// Runs `f` on the index if one is built; hits do not build it.
    fn with_index(&self, f: impl FnOnce(&mut Index)) {
        if let Some(snapshot) = self.lock_index().as_mut() {
            f(&mut snapshot.index);
        }
    }

    /// A panic while the lock was held may have left the index half-updated: drop
    /// it and rescan rather than trust it.
    fn lock_index(&self) -> MutexGuard<'_, Option<Snapshot>> {
        self.index.lock().unwrap_or_else(|poisoned| {
            let mut guard = poisoned.into_inner();
            *guard = None;
            guard
        })
    }
}
