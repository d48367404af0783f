//! The process-local robots.txt origin cache (SRD 3.3.4: FR-WF-08f, 08g,
//! ROBOTS-CACHE-01..04).
//!
//! One entry per [`Origin`], holding the rules selected for this tool's token. Entries
//! expire after the TTL and the least recently used one is evicted at capacity; a
//! capacity of 0 disables every read and write. Only outcomes that may be cached
//! reach [`RobotsCache::insert`]: the fetch policy never hands over a fail-open
//! allow-all (ROBOTS-CACHE-04). The cache is shared between concurrent fetches
//! behind one short-held mutex; no lock is held across I/O.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::matcher::Rules;
use crate::canonical_url::Origin;
use crate::config::RobotsSettings;

/// A source of "now", so TTL behaviour can be tested without sleeping.
pub(crate) trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The real monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The origin cache: TTL plus LRU, thread-safe (FR-WF-08f, 08g).
#[derive(Debug)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct RobotsCache {
    capacity: usize,
    ttl: Duration,
    clock: Arc<dyn Clock>,
    inner: Mutex<Lru>,
}

#[derive(Debug, Default)]
struct Lru {
    entries: HashMap<Origin, Entry>,
    /// Last-use stamp to origin; the first key is the least recently used.
    order: BTreeMap<u64, Origin>,
    next_stamp: u64,
}

#[derive(Debug)]
struct Entry {
    rules: Arc<Rules>,
    expires: Instant,
    stamp: u64,
}

impl RobotsCache {
    /// A cache with the configured capacity and TTL and the real clock.
    pub(crate) fn from_settings(robots: &RobotsSettings) -> RobotsCache {
        RobotsCache::new(
            robots.cache_entries as usize,
            robots.cache_ttl,
            Arc::new(SystemClock),
        )
    }

    /// A cache of `capacity` origins (0 disables it, ROBOTS-CACHE-03) whose entries
    /// live for `ttl` on `clock`.
    pub(crate) fn new(capacity: usize, ttl: Duration, clock: Arc<dyn Clock>) -> RobotsCache {
        RobotsCache {
            capacity,
            ttl,
            clock,
            inner: Mutex::new(Lru::default()),
        }
    }

    /// Whether the cache is disabled (`robots_cache_entries = 0`).
    pub(crate) fn is_disabled(&self) -> bool {
        self.capacity == 0
    }

    /// The fresh rules of `origin`, marking them recently used. An expired entry is
    /// dropped and reported as a miss, so the caller refetches (FR-WF-08f).
    pub(crate) fn get(&self, origin: &Origin) -> Option<Arc<Rules>> {
        if self.is_disabled() {
            return None;
        }
        let now = self.clock.now();
        let mut lru = self.lock();
        let stamp = lru.stamp();
        let Lru { entries, order, .. } = &mut *lru;
        let entry = entries.get_mut(origin)?;
        if now >= entry.expires {
            order.remove(&entry.stamp);
            entries.remove(origin);
            return None;
        }
        order.remove(&entry.stamp);
        entry.stamp = stamp;
        order.insert(stamp, origin.clone());
        Some(Arc::clone(&entry.rules))
    }

    /// Stores the rules of `origin` for one TTL, or for `max_age` when that is
    /// shorter (rules another instance of a fleet fetched, kept only for what is
    /// left of their TTL), evicting the least recently used entry when
    /// full (FR-WF-08g). A no-op when disabled.
    pub(crate) fn insert(&self, origin: Origin, rules: Arc<Rules>, max_age: Option<Duration>) {
        if self.is_disabled() {
            return;
        }
        let now = self.clock.now();
        let ttl = max_age.map_or(self.ttl, |age| age.min(self.ttl));
        // A TTL beyond the clock's range (impossible with the clamped config) expires
        // at once: refetching is the safe side.
        let expires = now.checked_add(ttl).unwrap_or(now);
        let mut lru = self.lock();
        let stamp = lru.stamp();
        let Lru { entries, order, .. } = &mut *lru;
        if let Some(old) = entries.remove(&origin) {
            order.remove(&old.stamp);
        }
        while entries.len() >= self.capacity {
            let Some((_, oldest)) = order.pop_first() else {
                break;
            };
            entries.remove(&oldest);
        }
        order.insert(stamp, origin.clone());
        entries.insert(
            origin,
            Entry {
                rules,
                expires,
                stamp,
            },
        );
    }

    /// The number of entries held, expired ones included until they are looked up.
    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether the cache holds nothing.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Lru> {
        // The critical sections cannot leave the map half-updated in a way that
        // matters (worst case a stale order stamp), so a poisoned lock is usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Lru {
    fn stamp(&mut self) -> u64 {
        self.next_stamp = self.next_stamp.wrapping_add(1);
        self.next_stamp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical_url::CanonicalUrl;
    use crate::testing::ManualClock;

    fn origin(url: &str) -> Origin {
        CanonicalUrl::parse(url).unwrap().origin()
    }

    fn cache(capacity: usize, clock: &Arc<ManualClock>) -> RobotsCache {
        RobotsCache::new(
            capacity,
            Duration::from_secs(3600),
            Arc::clone(clock) as Arc<dyn Clock>,
        )
    }

    #[test]
    fn fr_wf_08f_entries_expire_after_the_ttl() {
        let clock = Arc::new(ManualClock::new());
        let cache = cache(4, &clock);
        let a = origin("https://a.example/");
        cache.insert(a.clone(), Arc::new(Rules::allow_all()), None);
        clock.advance(Duration::from_secs(3599));
        assert!(cache.get(&a).is_some());
        clock.advance(Duration::from_secs(1));
        assert!(cache.get(&a).is_none());
        assert!(cache.is_empty());
    }

    #[test]
    fn fr_wf_08g_least_recently_used_is_evicted() {
        let clock = Arc::new(ManualClock::new());
        let cache = cache(2, &clock);
        let (a, b, c) = (
            origin("https://a.example/"),
            origin("https://b.example/"),
            origin("https://c.example/"),
        );
        cache.insert(a.clone(), Arc::new(Rules::allow_all()), None);
        cache.insert(b.clone(), Arc::new(Rules::allow_all()), None);
        assert!(cache.get(&a).is_some()); // b is now the least recently used
        cache.insert(c.clone(), Arc::new(Rules::allow_all()), None);
        assert!(cache.get(&b).is_none());
        assert!(cache.get(&a).is_some());
        assert!(cache.get(&c).is_some());
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn reinserting_refreshes_without_growing() {
        let clock = Arc::new(ManualClock::new());
        let cache = cache(2, &clock);
        let a = origin("https://a.example/");
        cache.insert(a.clone(), Arc::new(Rules::allow_all()), None);
        clock.advance(Duration::from_secs(3000));
        cache.insert(a.clone(), Arc::new(Rules::allow_all()), None);
        clock.advance(Duration::from_secs(3000));
        assert!(cache.get(&a).is_some());
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_shorter_max_age_wins_over_the_ttl() {
        let clock = Arc::new(ManualClock::new());
        let cache = cache(4, &clock);
        let a = origin("https://a.example/");
        cache.insert(
            a.clone(),
            Arc::new(Rules::allow_all()),
            Some(Duration::from_secs(10)),
        );
        clock.advance(Duration::from_secs(9));
        assert!(cache.get(&a).is_some());
        clock.advance(Duration::from_secs(1));
        assert!(cache.get(&a).is_none());
        // A longer one does not extend the TTL.
        cache.insert(
            a.clone(),
            Arc::new(Rules::allow_all()),
            Some(Duration::from_secs(7200)),
        );
        clock.advance(Duration::from_secs(3600));
        assert!(cache.get(&a).is_none());
    }

    #[test]
    fn robots_cache_03_zero_entries_disables_reads_and_writes() {
        let clock = Arc::new(ManualClock::new());
        let cache = cache(0, &clock);
        let a = origin("https://a.example/");
        cache.insert(a.clone(), Arc::new(Rules::allow_all()), None);
        assert!(cache.get(&a).is_none());
        assert!(cache.is_empty());
    }

    #[test]
    fn fr_wf_08a_origins_are_separate_keys() {
        let clock = Arc::new(ManualClock::new());
        let cache = cache(8, &clock);
        cache.insert(
            origin("https://e.example/"),
            Arc::new(Rules::allow_all()),
            None,
        );
        assert!(cache.get(&origin("http://e.example:8080/")).is_none());
        assert!(cache.get(&origin("http://e.example/")).is_none());
        assert!(cache.get(&origin("https://e.example:443/x")).is_some());
    }
}
