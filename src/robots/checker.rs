//! The robots.txt check of a fetch and of each redirect hop (FR-WF-08, 08h, 07e):
//! origin cache first, else one retrieval through a [`RobotsSource`], the policy's
//! decision, then the path match.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::cache::RobotsCache;
use super::matcher::Rules;
use super::policy::{FetchOutcome, PolicyParams, Resolution, resolve};
use super::shared::{SharedLookup, SharedRobots};
use crate::canonical_url::{CanonicalUrl, Origin};
use crate::config::Settings;
use crate::error::FetchError;
use crate::notes::{Note, Notes};

/// One robots.txt retrieval to perform.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct RobotsRequest<'a> {
    /// The origin whose `/robots.txt` to fetch (FR-WF-08).
    pub origin: &'a Origin,
    /// Absolute deadline of the retrieval (ROBOTS-TIMEOUT-01).
    pub deadline: Instant,
    /// The budget to report in `timeout` errors.
    pub timeout_ms: u64,
    /// Decompressed byte cap; past it the body is cut, not refused
    /// (FR-WF-ROBOTS-SIZE-01, 01a).
    pub max_bytes: u64,
}

/// Something that retrieves robots.txt: the shared HTTP client in production (with
/// its SSRF and port checks on every hop and the robots origin scope,
/// ROBOTS-FETCH-01, REDIR-02), a fake in unit tests. It reports what happened;
/// the policy decides what it means.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) trait RobotsSource: Send + Sync {
    /// Fetches `{origin}/robots.txt`.
    fn fetch_robots<'a>(&'a self, request: RobotsRequest<'a>) -> BoxFuture<'a, FetchOutcome>;
}

/// The robots.txt gate of the pipeline: one per tool instance, shared by all
/// concurrent fetches (the cache inside is process-local, ROBOTS-CACHE-01).
#[derive(Debug)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct RobotsChecker {
    cache: RobotsCache,
    settings: Arc<Settings>,
    /// One in-flight retrieval per origin, so concurrent fetches of one site wait
    /// for a single robots.txt request instead of each sending one (NFR-WF-PERF-04).
    inflight: Mutex<HashMap<Origin, Arc<tokio::sync::Mutex<()>>>>,
    /// Extension (`share_robots`): outcomes shared by a fleet, one
    /// retrieval per origin per TTL for all its instances.
    shared: Option<Arc<dyn SharedRobots>>,
}

impl RobotsChecker {
    /// A checker with the configured cache.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(settings: Arc<Settings>) -> RobotsChecker {
        let cache = RobotsCache::from_settings(&settings.robots);
        RobotsChecker::with_cache(settings, cache)
    }

    /// A checker over a given cache (tests inject a manual clock).
    pub(crate) fn with_cache(settings: Arc<Settings>, cache: RobotsCache) -> RobotsChecker {
        RobotsChecker {
            cache,
            settings,
            inflight: Mutex::new(HashMap::new()),
            shared: None,
        }
    }

    /// The same checker sharing outcomes through `shared` (a fleet's store).
    /// Behind this process's own cache: only its misses ask it.
    #[cfg(feature = "fleet")]
    pub(crate) fn with_shared(mut self, shared: Option<Arc<dyn SharedRobots>>) -> Self {
        self.shared = shared;
        self
    }

    /// The origin cache.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn cache(&self) -> &RobotsCache {
        &self.cache
    }

    /// Checks `url` against the robots.txt of its origin. `Ok` means the fetch may
    /// go on (a fail-open allow-all adds `robots_unavailable_fail_open` to `notes`);
    /// otherwise `robots_disallowed`, `robots_unavailable` or `timeout` (phase
    /// `robots`); `ssrf_blocked`/`port_blocked` when the retrieval itself is
    /// refused. Never skipped for `no_cache` requests (FR-WF-08h): the origin cache
    /// is independent of the response cache.
    ///
    /// The pipeline calls this for the document URL after its SSRF check (Appendix
    /// B: SSRFCheck, then RobotsCheck), and passes a
    /// [`RobotsHopCheck`](super::http_source::RobotsHopCheck) to the document
    /// fetch so every redirect target is checked too (FR-WF-07e).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) async fn check(
        &self,
        source: &dyn RobotsSource,
        url: &CanonicalUrl,
        deadline: Instant,
        notes: &mut Notes,
    ) -> Result<(), FetchError> {
        let origin = url.origin();
        let Some(rules) = self.rules(source, &origin, deadline).await? else {
            notes.add(Note::RobotsUnavailableFailOpen);
            return Ok(());
        };
        let path = url.path_and_query();
        let allowed = if self.settings.robots.normalize_paths {
            rules.is_allowed_normalized(&path)
        } else {
            rules.is_allowed(&path)
        };
        if allowed {
            Ok(())
        } else {
            // The query is matched but not echoed: it may carry secrets.
            Err(FetchError::robots_disallowed(
                url.as_url().path(),
                &origin.to_string(),
            ))
        }
    }

    /// The rules of `origin`: cached, or retrieved and decided now. `None` is a
    /// fail-open allow-all.
    async fn rules(
        &self,
        source: &dyn RobotsSource,
        origin: &Origin,
        deadline: Instant,
    ) -> Result<Option<Arc<Rules>>, FetchError> {
        if let Some(rules) = self.cache.get(origin) {
            return Ok(Some(rules));
        }
        if self.cache.is_disabled() {
            let outcome = self.retrieve(source, origin, deadline).await;
            return self.decide(origin, outcome, None);
        }
        let slot = InflightSlot::join(&self.inflight, origin);
        let Ok(_turn) = tokio::time::timeout_at(deadline, slot.lock.lock()).await else {
            // The budget ran out while another fetch was retrieving this origin's
            // robots.txt: a robots timeout like any other (fail-open applies).
            return self.decide(origin, FetchOutcome::TimedOut, None);
        };
        // Whoever held the turn may have filled the cache meanwhile.
        if let Some(rules) = self.cache.get(origin) {
            return Ok(Some(rules));
        }
        if let Some(shared) = &self.shared {
            return self.shared_rules(&**shared, source, origin, deadline).await;
        }
        let outcome = self.retrieve(source, origin, deadline).await;
        self.decide(origin, outcome, None)
    }

    /// The rules of `origin` through the shared store: another instance's
    /// outcome, or this one's retrieval in its turn, shared if the policy
    /// caches it. With the store unavailable, a retrieval as if nothing were
    /// shared.
    async fn shared_rules(
        &self,
        shared: &dyn SharedRobots,
        source: &dyn RobotsSource,
        origin: &Origin,
        deadline: Instant,
    ) -> Result<Option<Arc<Rules>>, FetchError> {
        let wait_until = deadline.min(Instant::now() + self.settings.timeout());
        match shared.lookup(origin, wait_until).await {
            SharedLookup::Found(outcome, left) => self.decide(origin, outcome, Some(left)),
            // Another instance's retrieval outlasted this budget: a robots
            // timeout like the process-local wait's.
            SharedLookup::GaveUp => self.decide(origin, FetchOutcome::TimedOut, None),
            SharedLookup::Unavailable => {
                let outcome = self.retrieve(source, origin, deadline).await;
                self.decide(origin, outcome, None)
            }
            SharedLookup::Claimed(claim) => {
                let outcome = self.retrieve(source, origin, deadline).await;
                claim.share(&outcome).await;
                self.decide(origin, outcome, None)
            }
        }
    }

    /// One retrieval of `origin`'s robots.txt, as the policy needs to know it.
    async fn retrieve(
        &self,
        source: &dyn RobotsSource,
        origin: &Origin,
        deadline: Instant,
    ) -> FetchOutcome {
        let robots = &self.settings.robots;
        let timeout_ms = self.timeout_ms();
        // ROBOTS-TIMEOUT-01: at most `timeout_seconds`, and never past the caller's
        // deadline. Callers give each check a budget of its own, apart from the
        // document's (SRD-READINGS 26).
        let deadline = deadline.min(Instant::now() + self.settings.timeout());
        let request = RobotsRequest {
            origin,
            deadline,
            timeout_ms,
            max_bytes: robots.max_robots_bytes,
        };
        match tokio::time::timeout_at(deadline, source.fetch_robots(request)).await {
            Ok(outcome) => outcome,
            Err(_) => FetchOutcome::TimedOut,
        }
    }

    /// Applies the policy to an outcome and caches what may be cached, for
    /// `max_age` at most when the outcome came from the fleet.
    fn decide(
        &self,
        origin: &Origin,
        outcome: FetchOutcome,
        max_age: Option<std::time::Duration>,
    ) -> Result<Option<Arc<Rules>>, FetchError> {
        let robots = &self.settings.robots;
        let params = PolicyParams {
            fail_open: robots.fail_open,
            user_agent_token: &robots.user_agent_token,
            timeout_ms: self.timeout_ms(),
        };
        match resolve(outcome, origin, &params) {
            Resolution::Rules(rules) => {
                let rules = Arc::new(rules);
                self.cache
                    .insert(origin.clone(), Arc::clone(&rules), max_age);
                Ok(Some(rules))
            }
            Resolution::FailOpen => Ok(None),
            Resolution::Refused(error) => Err(error),
        }
    }

    fn timeout_ms(&self) -> u64 {
        u64::from(self.settings.timeout_seconds).saturating_mul(1000)
    }
}

/// A place in the per-origin queue; leaving it (also by cancellation) removes the
/// origin's entry once nobody else holds it, so the map does not grow.
struct InflightSlot<'a> {
    map: &'a Mutex<HashMap<Origin, Arc<tokio::sync::Mutex<()>>>>,
    origin: &'a Origin,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl<'a> InflightSlot<'a> {
    fn join(
        map: &'a Mutex<HashMap<Origin, Arc<tokio::sync::Mutex<()>>>>,
        origin: &'a Origin,
    ) -> InflightSlot<'a> {
        let mut guard = map.lock().unwrap_or_else(|e| e.into_inner());
        let lock = Arc::clone(guard.entry(origin.clone()).or_default());
        InflightSlot { map, origin, lock }
    }
}

impl Drop for InflightSlot<'_> {
    fn drop(&mut self) {
        let mut guard = self.map.lock().unwrap_or_else(|e| e.into_inner());
        // Two holders: the map and this slot. Nobody can join while we hold the map.
        if Arc::strong_count(&self.lock) == 2 {
            guard.remove(self.origin);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use bytes::Bytes;

    use super::*;
    use crate::error::ErrorCode;
    use crate::testing::ManualClock;

    /// Answers every request with a fixed outcome and counts requests.
    struct Fake {
        outcome: FetchOutcome,
        calls: AtomicUsize,
    }

    impl Fake {
        fn new(outcome: FetchOutcome) -> Fake {
            Fake {
                outcome,
                calls: AtomicUsize::new(0),
            }
        }

        fn body(text: &'static str) -> Fake {
            Fake::new(FetchOutcome::Body {
                body: Bytes::from_static(text.as_bytes()),
                truncated: false,
            })
        }

        fn calls(&self) -> usize {
            self.calls.load(Ordering::SeqCst)
        }
    }

    impl RobotsSource for Fake {
        fn fetch_robots<'a>(&'a self, _: RobotsRequest<'a>) -> BoxFuture<'a, FetchOutcome> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let outcome = self.outcome.clone();
            Box::pin(async move {
                tokio::task::yield_now().await;
                outcome
            })
        }
    }

    fn settings(extra: &str) -> Arc<Settings> {
        let text = format!("[tools.webfetch]\n{extra}");
        Arc::new(
            crate::config::load_str(&text, crate::config::LoadOptions::default())
                .unwrap()
                .settings,
        )
    }

    fn url(text: &str) -> CanonicalUrl {
        CanonicalUrl::parse(text).unwrap()
    }

    fn deadline() -> Instant {
        Instant::now() + Duration::from_secs(30)
    }

    /// Checks `https://e.example/x` `times` times, each allowed.
    async fn check_allowed_times(checker: &RobotsChecker, fake: &Fake, times: usize) {
        for _ in 0..times {
            checker
                .check(
                    fake,
                    &url("https://e.example/x"),
                    deadline(),
                    &mut Notes::new(),
                )
                .await
                .unwrap();
        }
    }

    #[tokio::test]
    async fn disallowed_path_is_refused_and_rules_are_cached() {
        let checker = RobotsChecker::new(settings(""));
        let fake = Fake::body("User-agent: *\nDisallow: /private\n");
        let mut notes = Notes::new();
        let error = checker
            .check(
                &fake,
                &url("https://e.example/private?token=secret"),
                deadline(),
                &mut notes,
            )
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::RobotsDisallowed);
        assert_eq!(error.details_json()["path"], "/private");
        assert_eq!(error.details_json()["origin"], "https://e.example");
        assert!(!error.to_json().contains("secret"));
        checker
            .check(
                &fake,
                &url("https://e.example/public"),
                deadline(),
                &mut notes,
            )
            .await
            .unwrap();
        assert_eq!(fake.calls(), 1);
        assert!(notes.is_empty());
    }

    #[tokio::test]
    async fn robots_cache_04_fail_open_is_noted_and_never_cached() {
        let checker = RobotsChecker::new(settings("[tools.webfetch.robots]\nfail_open = true\n"));
        let fake = Fake::new(FetchOutcome::Status(503));
        for _ in 0..2 {
            let mut notes = Notes::new();
            checker
                .check(&fake, &url("https://e.example/x"), deadline(), &mut notes)
                .await
                .unwrap();
            assert!(notes.contains(Note::RobotsUnavailableFailOpen));
        }
        assert_eq!(fake.calls(), 2);
        assert!(checker.cache().is_empty());
    }

    #[tokio::test]
    async fn robots_cache_02_allow_all_is_cached() {
        let checker = RobotsChecker::new(settings(""));
        let fake = Fake::new(FetchOutcome::Status(404));
        check_allowed_times(&checker, &fake, 3).await;
        assert_eq!(fake.calls(), 1);
    }

    #[tokio::test]
    async fn robots_cache_03_disabled_cache_fetches_every_time() {
        let checker = RobotsChecker::new(settings("robots_cache_entries = 0\n"));
        let fake = Fake::new(FetchOutcome::Status(404));
        check_allowed_times(&checker, &fake, 3).await;
        assert_eq!(fake.calls(), 3);
    }

    #[tokio::test]
    async fn fr_wf_08f_expired_entries_are_refetched() {
        let settings = settings("");
        let clock = Arc::new(ManualClock::new());
        let cache = RobotsCache::new(8, Duration::from_secs(24 * 3600), clock.clone());
        let checker = RobotsChecker::with_cache(settings, cache);
        let fake = Fake::new(FetchOutcome::Status(404));
        let target = url("https://e.example/x");
        checker
            .check(&fake, &target, deadline(), &mut Notes::new())
            .await
            .unwrap();
        clock.advance(Duration::from_secs(24 * 3600 - 1));
        checker
            .check(&fake, &target, deadline(), &mut Notes::new())
            .await
            .unwrap();
        assert_eq!(fake.calls(), 1);
        clock.advance(Duration::from_secs(1));
        checker
            .check(&fake, &target, deadline(), &mut Notes::new())
            .await
            .unwrap();
        assert_eq!(fake.calls(), 2);
    }

    #[tokio::test]
    async fn concurrent_checks_of_one_origin_share_one_retrieval() {
        let checker = RobotsChecker::new(settings(""));
        let fake = Fake::new(FetchOutcome::Status(404));
        let target = url("https://e.example/x");
        let checks = (0..8).map(|_| async {
            checker
                .check(&fake, &target, deadline(), &mut Notes::new())
                .await
        });
        for result in futures_util::future::join_all(checks).await {
            result.unwrap();
        }
        assert_eq!(fake.calls(), 1);
        assert!(checker.inflight.lock().unwrap().is_empty());
    }

    struct Never;

    impl RobotsSource for Never {
        fn fetch_robots<'a>(&'a self, _: RobotsRequest<'a>) -> BoxFuture<'a, FetchOutcome> {
            Box::pin(std::future::pending())
        }
    }

    #[tokio::test]
    async fn a_fetch_waiting_for_another_ones_retrieval_still_fails_open() {
        let checker = RobotsChecker::new(settings(
            "timeout_seconds = 1\n[tools.webfetch.robots]\nfail_open = true\n",
        ));
        let target = url("https://e.example/x");
        let check = |ms| {
            let (checker, target) = (&checker, &target);
            async move {
                let mut notes = Notes::new();
                let deadline = Instant::now() + Duration::from_millis(ms);
                let result = checker.check(&Never, target, deadline, &mut notes).await;
                (result, notes)
            }
        };
        // The first holds the origin's turn until its own budget runs out; the
        // second times out while waiting for it.
        let (leader, follower) = tokio::join!(check(60), check(20));
        for (result, notes) in [leader, follower] {
            assert!(result.is_ok(), "{result:?}");
            assert!(notes.contains(Note::RobotsUnavailableFailOpen));
        }
    }

    #[tokio::test]
    async fn a_source_that_never_answers_times_out_in_phase_robots() {
        let checker = RobotsChecker::new(settings("timeout_seconds = 1\n"));
        let error = checker
            .check(
                &Never,
                &url("https://e.example/x"),
                Instant::now() + Duration::from_millis(20),
                &mut Notes::new(),
            )
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::Timeout);
        assert_eq!(error.details_json()["phase"], "robots");
        assert_eq!(error.details_json()["timeout_ms"], 1000);
    }
}
