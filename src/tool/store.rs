//! The document store of the pipeline: where `CheckCache` reads and `WriteCache`
//! writes (Appendix B), as one value whatever keeps the documents.
//!
//! - [`DocumentStore::Disk`]: the disk cache of SRD 3.6, its blocking file I/O
//!   on tokio's blocking pool so that it never stalls a server's workers.
//! - [`DocumentStore::Shared`]: a store shared by a fleet (extension;
//!   the fleet's Redis): same keys and entries, and single flight: a miss
//!   either takes the page's fleet-wide turn (this call fetches, then
//!   [`Flight::land`]s after its write) or waits for the instance that holds it
//!   and reads its entry. The store unavailable: a miss with no turn, a write
//!   that does nothing, as with no shared cache.
//!
//! Both answer a hit with the same [`CachedDocument`], so the response (notes
//! and bytes) does not depend on the store.

use std::sync::Arc;

use time::OffsetDateTime;
use tokio::time::Instant;

use crate::cache::shared::{Found, SharedDocuments, Turn, WriteFailure};
use crate::cache::{CacheKey, CachedDocument, DiskCache, Entry, Fresh, Variant};
use crate::canonical_url::CanonicalUrl;
use crate::config::Settings;
use crate::render;
use crate::vocabulary::ExtractionMode;
use crate::vocabulary::{ExtractedDocument, RenderingMethod};

/// Where the documents of this tool are kept.
#[derive(Debug, Clone)]
pub(crate) enum DocumentStore {
    /// The disk cache (SRD 3.6).
    Disk(Arc<DiskCache>),
    /// A store shared by a fleet.
    Shared(Arc<dyn SharedDocuments>),
}

/// One look-up: the requested URL under the plan's methods, in order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lookup<'a> {
    pub(crate) url: &'a CanonicalUrl,
    /// The plan's first method, then its other one if any.
    pub(crate) methods: &'a [RenderingMethod],
    pub(crate) mode: ExtractionMode,
    /// The settings, to tell whether a browser is available now: an HTTP
    /// result that stood in for an unavailable browser is then passed over.
    pub(crate) settings: &'a Settings,
    /// How long to wait for another instance fetching the same page.
    pub(crate) wait_until: Instant,
}

/// What a look-up gave.
#[derive(Debug)]
pub(crate) enum Looked {
    /// A usable entry, and the method it was found under.
    Hit(CachedDocument, RenderingMethod),
    /// Nothing usable: fetch, write, then land the flight.
    Miss(Flight),
}

/// This call's turn to fetch a page, when the store has single flight (a
/// fleet-wide lock); empty otherwise. Dropping it unlanded gives the turn back
/// in the background.
#[derive(Debug, Default)]
pub(crate) struct Flight {
    turn: Option<Box<dyn Turn>>,
}

impl Flight {
    /// Ends the turn after the write: waiters then find the entry.
    pub(crate) async fn land(self) {
        if let Some(turn) = self.turn {
            turn.land().await;
        }
    }
}

/// One write: the document a fetch produced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Put<'a> {
    /// The final URL (CCH-KEY-01).
    pub(crate) url: &'a CanonicalUrl,
    pub(crate) method: RenderingMethod,
    /// An HTTP result standing in for an unavailable browser (FR-WF-12d).
    pub(crate) stand_in: bool,
    /// Its key's variant ([`variant`]).
    pub(crate) variant: Variant,
    pub(crate) document: &'a Arc<ExtractedDocument>,
    pub(crate) fetched_at: OffsetDateTime,
}

/// The cache variant of a document rendered with `method` in extraction `mode`:
/// its own key for article mode, and for a browser document rendered with
/// `robots_for_frames`, so a call never gets frames back that its own
/// settings would have refused, nor misses frames they would have kept. HTTP
/// documents have no frames: the switch leaves their key alone.
///
/// With extension formats enabled every document is keyed with the
/// enabled set, on disk and in the fleet's Redis alike, so a call never gets a
/// representation its own settings would not have fetched (publisher Markdown
/// for HTML, a PDF's text where the SRD refuses).
pub(crate) fn variant(
    settings: &Settings,
    method: RenderingMethod,
    mode: ExtractionMode,
) -> Variant {
    Variant {
        extraction: mode,
        robots_for_frames: method == RenderingMethod::Browser && settings.browser.robots_for_frames,
        formats: settings.content.formats,
    }
}

impl DocumentStore {
    /// The first usable entry of `lookup.url` under its methods, in order; on a
    /// miss, the call's [`Flight`].
    pub(crate) async fn lookup(&self, lookup: Lookup<'_>) -> Looked {
        match self {
            DocumentStore::Disk(cache) => {
                for &method in lookup.methods {
                    let variant = variant(lookup.settings, method, lookup.mode);
                    let Some(hit) = disk_get(cache, lookup.url, method, variant).await else {
                        continue;
                    };
                    if usable(hit.browser_unavailable, lookup.settings) {
                        return Looked::Hit(hit, method);
                    }
                }
                Looked::Miss(Flight::default())
            }
            DocumentStore::Shared(shared) => shared_lookup(&**shared, lookup).await,
        }
    }

    /// Writes the fetched document, best effort. `Err` is the `{reason}` of the
    /// `cache_write_failed: {reason}` warning, with the note (FR-WF-16h); an
    /// unavailable Redis is not one (as with no shared cache).
    pub(crate) async fn put(&self, put: Put<'_>) -> Result<(), String> {
        match self {
            DocumentStore::Disk(cache) => disk_put(cache, put).await,
            DocumentStore::Shared(shared) => {
                let now = OffsetDateTime::now_utc();
                let fresh = Fresh {
                    url: put.url,
                    method: put.method,
                    variant: put.variant,
                    stand_in: put.stand_in,
                    document: put.document,
                    fetched_at: put.fetched_at,
                    now,
                };
                match shared.write(fresh).await {
                    Err(WriteFailure::TooLarge) => Err("entry exceeds max_cache_bytes".to_owned()),
                    Ok(()) | Err(WriteFailure::Unavailable) => Ok(()),
                }
            }
        }
    }
}

/// Whether an entry may be served: a stand-in for an unavailable browser is
/// passed over once a browser is available (the call renders as planned, and
/// its result replaces the entry).
fn usable(stand_in: bool, settings: &Settings) -> bool {
    if stand_in && render::browser::is_available(settings) {
        tracing::debug!(
            event = "cache_stand_in_skipped",
            "cached HTTP result stood in for an unavailable browser; rendering now"
        );
        return false;
    }
    true
}

/// The first usable entry of `lookup` in a shared store, waiting for
/// another instance's fetch of the page; on a miss, the call's [`Flight`] with
/// the page's turn when it got it.
async fn shared_lookup(shared: &dyn SharedDocuments, lookup: Lookup<'_>) -> Looked {
    let keys: Vec<CacheKey> = lookup
        .methods
        .iter()
        .map(|&method| {
            let variant = variant(lookup.settings, method, lookup.mode);
            CacheKey::new(lookup.url, method, variant)
        })
        .collect();
    let accept = |entry: &Entry| usable(entry.browser_unavailable, lookup.settings);
    let hit = |index: usize, entry: Entry| {
        let method = lookup.methods.get(index).copied().unwrap_or(entry.method);
        let document = CachedDocument {
            fetched_at: entry.fetched_at.to_datetime(),
            browser_unavailable: entry.browser_unavailable,
            document: entry.extracted,
        };
        Looked::Hit(document, method)
    };
    if let Some((index, entry)) = shared.read(&keys, lookup.wait_until, &accept).await {
        return hit(index, entry);
    }
    match shared
        .wait_or_claim(&keys, lookup.wait_until, &accept)
        .await
    {
        Found::Entry(index, entry) => hit(index, entry),
        Found::Claimed(turn) => Looked::Miss(Flight { turn: Some(turn) }),
        Found::Nothing => Looked::Miss(Flight::default()),
    }
}

/// `DiskCache::get` on a blocking thread.
async fn disk_get(
    cache: &Arc<DiskCache>,
    url: &CanonicalUrl,
    method: RenderingMethod,
    variant: Variant,
) -> Option<CachedDocument> {
    let (cache, url) = (Arc::clone(cache), url.clone());
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || {
        span.in_scope(|| cache.get(&url, method, variant, OffsetDateTime::now_utc()))
    })
    .await
    .ok()
    .flatten()
}

/// `DiskCache::put` on a blocking thread.
async fn disk_put(cache: &Arc<DiskCache>, put: Put<'_>) -> Result<(), String> {
    let (cache, url, document) = (Arc::clone(cache), put.url.clone(), Arc::clone(put.document));
    let (method, variant, stand_in, fetched_at) =
        (put.method, put.variant, put.stand_in, put.fetched_at);
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || {
        let _in_call = span.enter();
        cache
            .put(Fresh {
                url: &url,
                method,
                variant,
                stand_in,
                document: &document,
                fetched_at,
                now: fetched_at,
            })
            .map_err(|error| error.to_string())
    })
    .await
    .unwrap_or_else(|join| Err(format!("cache task failed: {join}")))
}
