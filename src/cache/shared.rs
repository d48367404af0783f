//! A document store shared by several processes (extension: a fleet's cache,
//! which replaces the disk cache when `[tools.webfetch.fleet] redis_url` is
//! set). `fleet` implements [`SharedDocuments`] on Redis; the pipeline's document
//! store calls it.
//!
//! It keeps the disk cache's keys ([`CacheKey`]) and entries ([`Entry`], the v2
//! entry JSON of FR-WF-16c), so a hit answers as a disk hit does, and adds
//! single flight: a miss either takes the page's [`Turn`] (this caller fetches,
//! writes, then lands the turn) or waits for the process fetching it.

use std::fmt;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::{CacheKey, Entry, Fresh};

/// Whether an entry may be served to this caller (a stand-in for an
/// unavailable browser is passed over once a browser is available).
pub(crate) type Usable<'a> = dyn Fn(&Entry) -> bool + Send + Sync + 'a;

/// A document store shared by several processes.
pub(crate) trait SharedDocuments: fmt::Debug + Send + Sync {
    /// Reads `keys` at once, by `deadline`; the first entry `usable` accepts
    /// wins, with its index. `None` when none does, or the store is
    /// unavailable.
    fn read<'a>(
        &'a self,
        keys: &'a [CacheKey],
        deadline: Instant,
        usable: &'a Usable<'a>,
    ) -> BoxFuture<'a, Option<(usize, Entry)>>;

    /// Waits for an entry of `keys` that `usable` accepts, or takes the turn to
    /// fetch `keys[0]` (the key the caller will fetch), until `until`.
    fn wait_or_claim<'a>(
        &'a self,
        keys: &'a [CacheKey],
        until: Instant,
        usable: &'a Usable<'a>,
    ) -> BoxFuture<'a, Found>;

    /// Writes the entry of `fresh` under its key until its `expires_at`.
    fn write<'a>(&'a self, fresh: Fresh<'a>) -> BoxFuture<'a, Result<(), WriteFailure>>;
}

/// What a shared look-up found.
#[derive(Debug)]
#[cfg_attr(
    not(feature = "fleet"),
    expect(dead_code, reason = "only the fleet's store answers")
)]
pub(crate) enum Found {
    /// The first usable entry among the keys asked, and its index.
    Entry(usize, Entry),
    /// None usable; this caller holds the page's turn and fetches.
    Claimed(Box<dyn Turn>),
    /// None usable, and the wait ended (deadline, or the store gone): fetch
    /// alone.
    Nothing,
}

/// Why a shared write did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    not(feature = "fleet"),
    expect(dead_code, reason = "only the fleet's store answers")
)]
pub(crate) enum WriteFailure {
    /// FR-WF-CCH-SIZE-01: the entry alone is larger than `max_cache_bytes`; the
    /// caller adds `cache_write_failed`.
    TooLarge,
    /// The store did not take it: as with no shared cache, no note.
    Unavailable,
}

/// A caller's turn to fetch a page for everyone sharing the store (a
/// single-flight lock). Landed after the write, waiters then find the entry;
/// dropped unlanded (the call was cancelled), it is given back in the
/// background.
pub(crate) trait Turn: fmt::Debug + Send + Sync {
    /// Ends the turn.
    fn land(self: Box<Self>) -> BoxFuture<'static, ()>;
}
