//! The in-memory LRU index: which entries exist, when each was last used and how
//! big its file is (FR-WF-CCH-LRU-01, FR-WF-CCH-SIZE-02, FR-WF-CCH-EVICT-01).
//!
//! Pure bookkeeping; [`super::DiskCache`] fills it from a directory scan and keeps
//! it in step with its own writes, and re-checks every eviction victim on disk
//! before deleting it, so a stale slot costs a `stat`, never a wrong deletion of a
//! fresher entry it knows about.

use std::collections::{BTreeSet, HashMap};

use super::key::CacheKey;
use crate::output::Timestamp;

/// What the index knows about one entry file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// `last_accessed_at`, mirrored in the file's mtime.
    pub(crate) last_accessed: Timestamp,
    /// On-disk size in bytes (FR-WF-CCH-SIZE-02).
    pub(crate) size: u64,
}

/// The two budgets of FR-WF-16e and FR-WF-16f.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// `max_cache_entries`, at least 1 when caching is enabled.
    pub(crate) max_entries: u64,
    /// `max_cache_bytes`.
    pub(crate) max_bytes: u64,
}

/// Entries by key, plus the same entries ordered oldest first with ties broken
/// by key (FR-WF-CCH-LRU-01 items 3 and 4). Every operation is O(log n).
#[derive(Debug, Default)]
pub(crate) struct Index {
    slots: HashMap<CacheKey, Slot>,
    order: BTreeSet<(Timestamp, CacheKey)>,
    total_bytes: u64,
}

impl Index {
    pub(crate) fn new() -> Index {
        Index::default()
    }

    /// Inserts or replaces the slot of `key`.
    pub(crate) fn upsert(&mut self, key: CacheKey, slot: Slot) {
        self.remove(&key);
        self.order.insert((slot.last_accessed, key));
        self.total_bytes = self.total_bytes.saturating_add(slot.size);
        self.slots.insert(key, slot);
    }

    /// Forgets `key`, returning what was known about it.
    pub(crate) fn remove(&mut self, key: &CacheKey) -> Option<Slot> {
        let slot = self.slots.remove(key)?;
        self.order.remove(&(slot.last_accessed, *key));
        self.total_bytes = self.total_bytes.saturating_sub(slot.size);
        Some(slot)
    }

    /// The slot of `key`, if indexed.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &CacheKey) -> Option<Slot> {
        self.slots.get(key).copied()
    }

    /// The least recently used entry: oldest `last_accessed_at`, then smallest key.
    pub(crate) fn oldest(&self) -> Option<(CacheKey, Slot)> {
        let (_, key) = self.order.first()?;
        Some((*key, self.slots.get(key).copied()?))
    }

    /// Number of indexed entries.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Sum of indexed on-disk sizes.
    #[cfg(test)]
    pub(crate) fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Whether one more entry of `incoming` bytes keeps both limits
    /// (FR-WF-CCH-EVICT-01's loop condition, evaluated for the state after the write,
    /// so eviction happens before writing as FR-WF-16e asks).
    pub(crate) fn fits(&self, incoming: u64, limits: Limits) -> bool {
        let entries = u64::try_from(self.len()).unwrap_or(u64::MAX);
        entries.saturating_add(1) <= limits.max_entries
            && self.total_bytes.saturating_add(incoming) <= limits.max_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::RenderingMethod;

    fn key(n: u8) -> CacheKey {
        CacheKey::from_parts(&format!("https://example.com/{n}"), RenderingMethod::Http)
    }

    fn slot(at: i64, size: u64) -> Slot {
        Slot {
            last_accessed: Timestamp::from_unix_seconds(at).unwrap(),
            size,
        }
    }

    #[test]
    fn oldest_is_lru_with_ties_broken_by_key() {
        let mut index = Index::new();
        let (a, b, c) = (key(1), key(2), key(3));
        index.upsert(a, slot(20, 1));
        index.upsert(b, slot(10, 1));
        index.upsert(c, slot(10, 1));
        let first = b.min(c);
        assert_eq!(index.oldest().map(|(k, _)| k), Some(first));
        index.remove(&first);
        assert_eq!(index.oldest().map(|(k, _)| k), Some(b.max(c)));
        // A touch moves an entry to the back.
        index.upsert(b.max(c), slot(30, 1));
        assert_eq!(index.oldest().map(|(k, _)| k), Some(a));
    }

    #[test]
    fn totals_follow_upserts_and_removals() {
        let mut index = Index::new();
        index.upsert(key(1), slot(1, 100));
        index.upsert(key(2), slot(2, 50));
        index.upsert(key(1), slot(3, 70));
        assert_eq!((index.len(), index.total_bytes()), (2, 120));
        assert_eq!(index.remove(&key(2)), Some(slot(2, 50)));
        assert_eq!(index.remove(&key(2)), None);
        assert_eq!((index.len(), index.total_bytes()), (1, 70));
        assert_eq!(index.get(&key(1)), Some(slot(3, 70)));
    }

    #[test]
    fn fits_checks_both_limits_after_the_write() {
        let limits = Limits {
            max_entries: 2,
            max_bytes: 100,
        };
        let mut index = Index::new();
        assert!(index.fits(100, limits));
        assert!(!index.fits(101, limits));
        index.upsert(key(1), slot(1, 60));
        assert!(index.fits(40, limits));
        assert!(!index.fits(41, limits), "byte limit");
        index.upsert(key(2), slot(2, 1));
        assert!(!index.fits(0, limits), "entry limit");
    }
}
