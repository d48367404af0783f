//! The on-disk cache of extracted documents (SRD 3.6).
//!
//! One JSON file per entry at `{cache_dir}/{first2}/{keyhex}.json`, keyed by
//! `sha256(final canonical URL + "\n" + method)` ([`CacheKey`], FR-WF-16, 16a). An
//! entry holds the extracted document, never chunks (FR-WF-CCH-CONTENT-01): the
//! caller re-chunks and re-fits every hit with the current request's parameters.
//!
//! Extension: documents extracted in article mode, browser documents rendered
//! with `robots_for_frames` and documents read by extension formats
//! live under keys of their own ([`Variant`], [`CacheKey::new`]):
//! [`DiskCache::get`] and [`DiskCache::put`] take the variant, and no variant serves
//! another's documents; [`Variant::default`] is the SRD's key, unchanged.
//!
//! # Whose directory
//!
//! A hit is served before SSRF and robots.txt run (Appendix B), so the directory's
//! integrity is the only guard on what a hit returns. The cache directory and its
//! shards are used only if they are real directories owned by the effective user
//! that group and others cannot write, and every file is reached through their
//! checked handles with `O_NOFOLLOW` (see `dir`). A directory that fails
//! the check disables caching with a warning naming the reason
//! (FR-WF-CCH-ENABLE-02); a shard that fails it is neither read nor written.
//!
//! # Sharing one directory between processes
//!
//! Reads take no lock. Entry files obey three rules (see `store`): entry paths
//! change only by `rename` of complete files; a file's mtime is set to its
//! `last_accessed_at` before it is renamed into place; garbage is deleted only if it
//! is the very file that was read. Every file a reader can see is therefore a whole
//! entry (or true garbage), and LRU order can be read from metadata alone.
//!
//! # The ledger, and why a write costs the same at 10 entries or 10 000
//!
//! Hits read one file without any lock, then rewrite it under the ledger lock,
//! splicing the new fixed-width `last_accessed_at` into the bytes read, so its size
//! and the counts do not change.
//! Writes need the entry count, the byte total and the LRU entry. These live in the
//! directory, shared by every process ([`ledger`]): a 152-byte ledger updated under
//! an exclusive `flock` (counts that may run high but never low, so a writer killed
//! anywhere leaves the limits holding) and an LRU snapshot that eviction walks with
//! a cursor ([`snapshot`]). A write locks the ledger, reads it, stats and deletes
//! its victims one snapshot record each, writes its entry and the ledger: O(1).
//! Only when the snapshot runs out, after as many evictions as it had entries, does
//! a write rescan the directory's metadata (O(n) once per n evictions) and write a
//! new snapshot. A missing or torn ledger is rebuilt the same way.
//!
//! The ledger also names the temp file of the write in progress: the next writer
//! deletes it if its writer was killed, so no stray temp file
//! outlives the next write. Temp files of hits killed mid-rewrite are swept by the
//! next rescan once an hour old.
//!
//! Entries whose mtime was changed by hand (`touch`, `cp`) are ordered by that mtime
//! until their next hit rewrites them; the SRD's `last_accessed_at` inside the file
//! stays authoritative for everything else.
//!
//! All methods do blocking file I/O; call them from `spawn_blocking` in async code.

mod dir;
mod entry;
mod key;
mod ledger;
mod limits;
pub(crate) mod shared;
mod snapshot;
mod store;

use std::io;
#[cfg(any(test, feature = "internals"))]
use std::path::{Path, PathBuf};
use std::sync::Arc;

use time::OffsetDateTime;

use crate::canonical_url::CanonicalUrl;
use crate::config::CacheSettings;
use crate::vocabulary::Timestamp;
use crate::vocabulary::{ExtractedDocument, RenderingMethod};

use dir::{Dir, Root};
pub(crate) use entry::Entry;
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) use entry::Fresh;
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) use key::{CacheKey, Variant};
use ledger::Ledger;
use limits::Limits;
use snapshot::Snapshot;
use store::ReadOutcome;

/// A handle on an enabled cache directory (FR-WF-CCH-ENABLE-01). Cheap to share
/// behind an `Arc`; several handles, in one process or many, may use the same
/// directory at once.
#[derive(Debug)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct DiskCache {
    root: Root,
    ttl_days: u32,
    limits: Limits,
}

/// A cache hit: the stored document and the time it was originally fetched, which
/// the response reports as its `fetched_at` (FR-WF-17a).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct CachedDocument {
    /// The extracted document to re-chunk (FR-WF-CCH-CONTENT-01).
    pub document: ExtractedDocument,
    /// The original `fetched_at`, second precision, UTC.
    pub fetched_at: OffsetDateTime,
    /// An HTTP result that stood in for a browser render because the browser was
    /// unavailable ([`Fresh::stand_in`]); a caller that has a browser now
    /// should render instead of serving it.
    pub browser_unavailable: bool,
}

/// Why a write did not happen. The fetch still succeeds (FR-WF-16h, FR-WF-19a): the
/// caller appends `cache_write_failed` to the notes and logs
/// `cache_write_failed: {error}`; `Display` is exactly that `{reason}`.
#[derive(Debug, thiserror::Error)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum CacheWriteError {
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
    /// Listing the cache directory to rebuild the ledger failed.
    #[error("cannot scan cache directory: {0}")]
    Scan(io::Error),
    /// The ledger (`.webfetch-ledger`) could not be opened, locked, read or
    /// written: a read-only or full cache directory.
    #[error("cannot update cache ledger: {0}")]
    Ledger(io::Error),
    /// An eviction victim could not be deleted, so writing would break a limit.
    #[error("cannot evict entry: {0}")]
    Evict(io::Error),
    /// Creating, writing or renaming the entry file failed.
    #[error("cannot write entry: {0}")]
    Write(io::Error),
}

impl DiskCache {
    /// Opens the cache, creating its directory with parents, mode 0700
    /// (FR-WF-CCH-ENABLE-02). `None` when caching is disabled by configuration, or
    /// when the directory cannot be created or is not one the cache trusts (a
    /// symbolic link, owned by another user, or writable by group or others: issue
    /// 28), which also logs a warning naming the reason: the cache is then off for
    /// this invocation, and the caller must neither read nor write nor emit cache
    /// notes (FR-WF-CCH-ENABLE-01).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn open(settings: &CacheSettings) -> Option<DiskCache> {
        let dir = settings.dir.as_ref()?;
        if settings.max_entries == 0 {
            return None;
        }
        let root = match Root::open(dir) {
            Ok(root) => root,
            Err(dir::Refused::Io(error)) => {
                tracing::warn!(
                    event = "cache_disabled",
                    cache_dir = %dir.display(),
                    %error,
                    "cache_dir cannot be created; caching is disabled for this invocation"
                );
                return None;
            }
            Err(refused) => {
                tracing::warn!(
                    event = "cache_disabled",
                    cache_dir = %dir.display(),
                    reason = %refused,
                    "cache_dir is not safe to use ({refused}); caching is disabled for this \
                     invocation. Use a directory only this user can write to, e.g. \
                     `mkdir -m 700` a new one and set cache_dir to it"
                );
                return None;
            }
        };
        Some(DiskCache {
            root,
            ttl_days: settings.ttl_days,
            limits: Limits {
                max_entries: u64::from(settings.max_entries),
                max_bytes: settings.max_bytes,
            },
        })
    }

    /// The cache directory.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn dir(&self) -> &Path {
        self.root.path()
    }

    /// Where the entry of `url` fetched with `method` lives (FR-WF-16a).
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn entry_path(&self, url: &CanonicalUrl, method: RenderingMethod) -> PathBuf {
        CacheKey::new(url, method, Variant::default()).entry_path(self.root.path())
    }

    /// Looks up `url` as fetched with `method`.
    ///
    /// A miss when there is no entry, when it expired (`expires_at < now`,
    /// FR-WF-16d), or when it is unreadable, malformed, of another version or filed
    /// under the wrong key; those last are logged as `cache_read_failed` and deleted
    /// (FR-WF-CCH-READ-01, READ-02, FR-WF-CCH-VER-01). A hit rewrites the entry
    /// atomically with `last_accessed_at = now` and nothing else changed, so
    /// `expires_at` never slides (FR-WF-CCH-LRU-01, FR-WF-CCH-TTL-02). `variant`
    /// (an extension: extraction mode, `robots_for_frames`, formats) is part of the
    /// key; [`Variant::default`] is the SRD's key.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn get(
        &self,
        url: &CanonicalUrl,
        method: RenderingMethod,
        variant: Variant,
        now: OffsetDateTime,
    ) -> Option<CachedDocument> {
        let key = CacheKey::new(url, method, variant);
        let now = Timestamp::from_datetime(now);
        let dir = self.root.dir();
        let (bytes, read_id) = match store::read_capped(&dir, &key, self.limits.max_bytes) {
            ReadOutcome::Missing => return None,
            ReadOutcome::Bytes(bytes, id) => (bytes, id),
            ReadOutcome::Unusable(reason, id) => {
                self.discard(&key, id, reason);
                return None;
            }
            ReadOutcome::Untrusted(refused) => {
                tracing::warn!(
                    event = "cache_read_failed",
                    key = %key,
                    reason = %format!("shard not trusted: {refused}"),
                    "cache_read_failed"
                );
                return None;
            }
            ReadOutcome::Failed(error) => {
                self.discard(&key, None, &error.to_string());
                return None;
            }
        };
        let mut entry = match Entry::decode(&bytes, &key) {
            Ok(entry) => entry,
            Err(error) => {
                self.discard(&key, Some(read_id), &error.to_string());
                return None;
            }
        };
        if entry.is_expired(now) {
            // Left in place: the write that follows the re-fetch replaces it, and
            // deleting by path here could race with that very write.
            tracing::debug!(event = "cache_expired", key = %key);
            return None;
        }
        if entry.is_from_the_future(now) {
            // A miss, left in place like an expired entry: the re-fetch's write
            // replaces it.
            tracing::warn!(
                event = "cache_future_entry",
                key = %key,
                fetched_at = %entry.fetched_at,
                "cache entry fetched_at is in the future; fetching again"
            );
            return None;
        }
        let fetched_at = entry.fetched_at.to_datetime();
        let mut bytes = bytes;
        let read_size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let restamped = entry::restamp(&mut bytes, entry.last_accessed_at, now);
        entry.last_accessed_at = now;
        self.touch(
            &key,
            &entry,
            restamped.then_some(bytes),
            (read_id, read_size),
        );
        Some(CachedDocument {
            document: entry.extracted,
            fetched_at,
            browser_unavailable: entry.browser_unavailable,
        })
    }

    /// Stores `fresh.document` as the entry of its URL, method and variant, replacing any
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
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn put(&self, fresh: Fresh<'_>) -> Result<(), CacheWriteError> {
        self.store(Entry::fresh(fresh, self.ttl_days))
    }

    /// Writes `entry` under its key, evicting what it needs (see [`put`](Self::put)).
    ///
    /// Holds the ledger lock throughout, so writers of all processes take turns and
    /// the counts stay at or above the truth (see [`ledger`]): the limits hold even
    /// across concurrent writers and writers killed mid-way.
    fn store(&self, entry: Entry) -> Result<(), CacheWriteError> {
        let key = entry.key();
        let now = entry.last_accessed_at;
        let bytes = entry
            .encode()
            .map_err(|e| CacheWriteError::Encode(e.to_string()))?;
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);

        if size > self.limits.max_bytes {
            // The older entry is known to be stale: remove it, accounted if we can.
            match self.open_ledger() {
                Ok((mut ledger, mut state, dir)) => {
                    remove_accounted(&dir, &key, &mut state);
                    let _ = ledger.write(&state);
                }
                Err(_) => {
                    let _ = store::remove_entry(&self.root.dir(), &key);
                }
            }
            return Err(CacheWriteError::EntryTooLarge {
                size,
                max_bytes: self.limits.max_bytes,
            });
        }

        let (mut ledger, mut state, dir) = self.open_ledger()?;
        let old = store::stat_entry(&dir, &key)
            .map_err(CacheWriteError::Write)?
            .map(|seen| seen.size);
        let evicted = self.evict_for(&dir, &mut ledger, &mut state, &key, old, size);
        if let Err(error) = evicted {
            // What was evicted before the failure is accounted in `state`.
            let _ = ledger.write(&state);
            return Err(error);
        }

        // Reserve before the rename (counts may run high, never low), naming the
        // temp file so that the next writer deletes it if this process dies.
        let temp = match store::TempEntry::begin(&dir, &key) {
            Ok(temp) => temp,
            Err(error) => {
                remove_accounted(&dir, &key, &mut state);
                let _ = ledger.write(&state);
                return Err(CacheWriteError::Write(error));
            }
        };
        let before = state.counts;
        state.counts.entries = state
            .counts
            .entries
            .saturating_add(u64::from(old.is_none()));
        state.counts.bytes = state.counts.bytes.saturating_add(size);
        state.pending = Some(temp.name());
        ledger.write(&state).map_err(CacheWriteError::Ledger)?;

        let written = temp.finish(&bytes, now);
        state.pending = None;
        match written {
            Ok(written) => {
                // The replaced entry leaves the counts only now that it is gone;
                // the reservation becomes the real on-disk size.
                state.counts.bytes = state
                    .counts
                    .bytes
                    .saturating_sub(size)
                    .saturating_add(written)
                    .saturating_sub(old.unwrap_or(0));
                let _ = ledger.write(&state);
                Ok(())
            }
            Err(error) => {
                state.counts = before;
                // The old entry, if any, is superseded by the fetch that just
                // happened; better a miss than serving it again.
                remove_accounted(&dir, &key, &mut state);
                let _ = ledger.write(&state);
                Err(CacheWriteError::Write(error))
            }
        }
    }

    /// Prepares the ledger now if it is missing or unreadable (a directory scan,
    /// tens of ms at 10 000 entries), so that the next [`put`](Self::put) does not
    /// pay for it. Meant to run on a blocking thread while the network fetch of a
    /// miss is in flight; a failure is left for `put` to report. With a ledger in
    /// place, it costs a lock and a 152-byte read.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn warm_index(&self) {
        let _ = self.open_ledger();
    }

    /// A no-op: the counts live in the directory's ledger, shared by every
    /// handle, so there is nothing to forget.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn refresh_index(&self) {}

    /// Locks the ledger and returns it with its state and the directory it is in:
    /// a dead writer's temp file (the ledger's `pending`) is deleted first, and a
    /// missing or torn ledger is rebuilt from a directory scan. A cache directory
    /// removed by hand while running is created and checked again (FR-WF-17b).
    fn open_ledger(&self) -> Result<(Ledger, ledger::State, Arc<Dir>), CacheWriteError> {
        let dir = self.root.dir();
        let (mut ledger, dir) = match Ledger::lock(&dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let dir = self.root.reopen().map_err(|refused| {
                    CacheWriteError::Ledger(io::Error::other(format!(
                        "cache_dir is not safe to use: {refused}"
                    )))
                })?;
                (Ledger::lock(&dir).map_err(CacheWriteError::Ledger)?, dir)
            }
            locked => (locked.map_err(CacheWriteError::Ledger)?, dir),
        };
        let state = match ledger.read().map_err(CacheWriteError::Ledger)? {
            Some(mut state) => {
                if let Some(name) = state.pending.take() {
                    tracing::debug!(event = "cache_temp_removed", temp = %name);
                    store::remove_pending(&dir, &name);
                    ledger.write(&state).map_err(CacheWriteError::Ledger)?;
                }
                state
            }
            None => rescan(&dir, &mut ledger, 0)?,
        };
        Ok((ledger, state, dir))
    }

    /// FR-WF-CCH-EVICT-01: evicts LRU entries until an entry of `incoming` bytes,
    /// replacing one of `old` bytes if any, fits both limits. Victims come from the
    /// LRU snapshot in order; each is checked on disk first (see [`snapshot`]).
    /// When the snapshot runs out, the directory is rescanned, at most twice per
    /// write, so that other processes touching files cannot keep it spinning.
    fn evict_for(
        &self,
        dir: &Dir,
        ledger: &mut Ledger,
        state: &mut ledger::State,
        key: &CacheKey,
        old: Option<u64>,
        incoming: u64,
    ) -> Result<(), CacheWriteError> {
        let mut rescans_left = 2;
        let mut opened: Option<Snapshot> = None;
        while !limits::fits(state.counts, old, incoming, self.limits) {
            if state.snapshot_exhausted() {
                if rescans_left == 0 {
                    return Err(CacheWriteError::Evict(io::Error::other(
                        "no entry left to evict",
                    )));
                }
                rescans_left -= 1;
                *state = rescan(dir, ledger, state.snapshot)?;
                opened = None;
                continue;
            }
            if opened.is_none() {
                opened = Snapshot::open(dir, state.snapshot).map_err(CacheWriteError::Evict)?;
                if opened.is_none() {
                    // A writer died between writing a snapshot and the ledger.
                    state.cursor = state.snapshot_len;
                    continue;
                }
            }
            let Some(snapshot) = opened.as_mut() else {
                continue;
            };
            let Some(record) = snapshot
                .record(state.cursor)
                .map_err(CacheWriteError::Evict)?
            else {
                state.cursor = state.snapshot_len;
                continue;
            };
            state.cursor += 1;
            if record.key == *key {
                // Being replaced: already left out of the room needed.
                continue;
            }
            match store::stat_entry(dir, &record.key).map_err(CacheWriteError::Evict)? {
                // Deleted by an accounted path, or by hand (a rescan corrects that).
                None => {}
                // Used since the snapshot: newer than every unchanged record.
                Some(seen) if seen.last_accessed > record.last_accessed => {}
                Some(seen)
                    if store::remove_entry(dir, &record.key)
                        .map_err(CacheWriteError::Evict)?
                        .is_some() =>
                {
                    state.counts.entries = state.counts.entries.saturating_sub(1);
                    state.counts.bytes = state.counts.bytes.saturating_sub(seen.size);
                    tracing::debug!(event = "cache_evicted", key = %record.key);
                }
                // Gone between the check and the delete.
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Rewrites a hit with its new `last_accessed_at`, unless the file changed or
    /// went since it was read (then the newer state wins). `restamped` is the
    /// file's own bytes with the new stamp spliced in, when that was possible (same
    /// size); otherwise the entry is encoded again, possibly to another size. A
    /// failure costs LRU precision only, never the hit.
    ///
    /// Under the ledger lock: an evictor deletes between its check and its delete
    /// only while holding it, so a hit can not bring back an entry just evicted
    /// (which would then be missing from the counts).
    fn touch(
        &self,
        key: &CacheKey,
        entry: &Entry,
        restamped: Option<Vec<u8>>,
        read: (dir::FileId, u64),
    ) {
        if let Err(error) = self.touch_locked(key, entry, restamped, read) {
            tracing::warn!(event = "cache_touch_failed", key = %key, %error);
        }
    }

    fn touch_locked(
        &self,
        key: &CacheKey,
        entry: &Entry,
        restamped: Option<Vec<u8>>,
        (read_id, read_size): (dir::FileId, u64),
    ) -> Result<(), String> {
        let bytes = match restamped {
            Some(bytes) => bytes,
            None => entry.encode().map_err(|e| e.to_string())?,
        };
        let (mut ledger, mut state, dir) = self.open_ledger().map_err(|e| e.to_string())?;
        if store::file_id(&dir, key) != Some(read_id) {
            return Ok(());
        }
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if size == read_size {
            return store::write_atomic(&dir, key, &bytes, entry.last_accessed_at)
                .map(|_| ())
                .map_err(|e| e.to_string());
        }
        // Another size: reserve the new size until the rewrite is done.
        state.counts.bytes = state.counts.bytes.saturating_add(size);
        ledger.write(&state).map_err(|e| e.to_string())?;
        let written = store::write_atomic(&dir, key, &bytes, entry.last_accessed_at);
        state.counts.bytes = state.counts.bytes.saturating_sub(size);
        if let Ok(written) = written {
            state.counts.bytes = state
                .counts
                .bytes
                .saturating_add(written)
                .saturating_sub(read_size);
        }
        ledger.write(&state).map_err(|e| e.to_string())?;
        written.map(|_| ()).map_err(|e| e.to_string())
    }

    /// FR-WF-CCH-READ-01/02: logs `cache_read_failed`, deletes the entry file (only
    /// if it is the one read) and takes it out of the size accounting.
    fn discard(&self, key: &CacheKey, read_id: Option<dir::FileId>, reason: &str) {
        tracing::warn!(event = "cache_read_failed", key = %key, reason, "cache_read_failed");
        match self.open_ledger() {
            Ok((mut ledger, mut state, dir)) => {
                if let Some(size) = store::remove_if_same(&dir, key, read_id) {
                    state.counts.entries = state.counts.entries.saturating_sub(1);
                    state.counts.bytes = state.counts.bytes.saturating_sub(size);
                    let _ = ledger.write(&state);
                }
            }
            // Unaccounted, the counts run high until the next rescan: safe.
            Err(_) => {
                store::remove_if_same(&self.root.dir(), key, read_id);
            }
        }
    }
}

/// Counts the directory from scratch and writes a new LRU snapshot (the only
/// O(entries) step; see [`snapshot`]). `previous` is the snapshot generation
/// being replaced. The caller holds the ledger lock.
fn rescan(dir: &Dir, ledger: &mut Ledger, previous: u64) -> Result<ledger::State, CacheWriteError> {
    let mut seen = store::scan(dir).map_err(CacheWriteError::Scan)?;
    snapshot::remove_stray_temps(dir);
    snapshot::lru_order(&mut seen);
    // A new number, unlike any snapshot file a dead writer may have left.
    let generation = previous
        .wrapping_add(1)
        .wrapping_add(u64::from(std::process::id()) << 32);
    snapshot::write(dir, generation, &seen).map_err(CacheWriteError::Scan)?;
    let state = ledger::State {
        counts: ledger::Counts {
            entries: u64::try_from(seen.len()).unwrap_or(u64::MAX),
            bytes: seen.iter().fold(0u64, |sum, s| sum.saturating_add(s.size)),
        },
        snapshot: generation,
        snapshot_len: u64::try_from(seen.len()).unwrap_or(u64::MAX),
        cursor: 0,
        pending: None,
    };
    ledger.write(&state).map_err(CacheWriteError::Ledger)?;
    tracing::debug!(event = "cache_rescanned", entries = state.counts.entries);
    Ok(state)
}

/// Removes the entry file of `key`, if any, and takes it out of `state`'s
/// counts. The caller holds the ledger lock.
fn remove_accounted(dir: &Dir, key: &CacheKey, state: &mut ledger::State) {
    if let Ok(Some(size)) = store::remove_entry(dir, key) {
        state.counts.entries = state.counts.entries.saturating_sub(1);
        state.counts.bytes = state.counts.bytes.saturating_sub(size);
    }
}
