//! Per-origin politeness (extension): at most
//! `per_origin_in_flight` document requests in flight per origin, and after a
//! 429, or a 503 with `Retry-After`, the origin held for the stated time (at
//! most [`rules::MAX_HOLD`]) for every caller. Process-wide by default;
//! fleet-wide when the fleet has a Redis.
//!
//! Policy decides, the client enforces: [`rules`] decides from what a limiter
//! saw ([`Seen`]) and the time left; [`Politeness::admit`] carries that out for
//! the HTTP client, waiting within the request's budget, and refusing with
//! `http_4xx` 429 (retryable, `details.retry_after_seconds`) when the wait would
//! outlast it: the origin is then not contacted. [`Politeness::observe`] turns
//! a response into a hold.
//!
//! The client applies it to the requests of a document chain (HTTP mode, and
//! the browser's top document): robots.txt retrievals are one per origin per
//! TTL already, and browser subresources are bounded per page. A hold is set
//! only by the response that ends a document fetch, so no call ever waits for
//! or is refused by its own requests: with the default limit (more than a
//! browser opens to one host) no single call's answer changes.
//!
//! A shared store ([`SharedLimiter`]; the fleet's Redis) is used while it
//! answers; while it does not, the process-wide state is (holds are recorded in
//! both).

mod local;
pub(crate) mod rules;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use http::HeaderMap;
use tokio::time::Instant;

use self::local::Local;
pub(crate) use self::rules::Seen;
use self::rules::{Admit, decide};
use crate::canonical_url::Origin;
use crate::error::FetchError;

/// Politeness state shared beyond this process, so that every instance of a
/// fleet keeps one limit and one hold per origin (`fleet` implements it on
/// Redis). It keeps what [`rules`] decide from; the decisions stay here. A
/// store that can not answer within the request's deadline says so, and the
/// process-wide state is used instead.
pub(crate) trait SharedLimiter: fmt::Debug + Send + Sync {
    /// Tries to take a slot of `origin` for a request whose budget ends at
    /// `deadline`: what the store saw, and the slot when it admitted the
    /// request. `None` when the store is unavailable.
    fn try_admit<'a>(
        &'a self,
        origin: &'a Origin,
        deadline: Instant,
    ) -> BoxFuture<'a, Option<(Seen, Option<SharedSlot>)>>;

    /// Gives `slot` back, in the background.
    fn release(&self, origin: &Origin, slot: SharedSlot);

    /// Holds `origin` for `hold` for everyone sharing the store, unless a
    /// longer hold runs; best effort.
    fn hold<'a>(&'a self, origin: &'a Origin, hold: Duration) -> BoxFuture<'a, ()>;
}

/// A slot taken in a [`SharedLimiter`]: what the store gives it back by.
#[derive(Debug)]
#[cfg_attr(
    not(feature = "fleet"),
    expect(dead_code, reason = "only the fleet's store hands out slots")
)]
pub(crate) struct SharedSlot {
    /// The store's token for the slot.
    pub(crate) token: Vec<u8>,
}

/// The politeness state of one tool (all its clones, so all of `serve`).
#[derive(Debug)]
pub(crate) struct Politeness {
    local: Local,
    shared: Option<Arc<dyn SharedLimiter>>,
}

/// A request's place among the requests in flight to its origin; given back
/// when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    politeness: Arc<Politeness>,
    origin: Origin,
    held: Held,
}

#[derive(Debug)]
enum Held {
    Local,
    Shared(Option<SharedSlot>),
}

impl Drop for Slot {
    fn drop(&mut self) {
        match &mut self.held {
            Held::Local => self.politeness.local.release(&self.origin),
            Held::Shared(slot) => {
                if let (Some(slot), Some(shared)) = (slot.take(), &self.politeness.shared) {
                    shared.release(&self.origin, slot);
                }
            }
        }
    }
}

impl Politeness {
    /// Politeness with `limit` requests in flight per origin: process-wide, or
    /// through `shared` (fleet-wide) while it answers.
    pub(crate) fn new(limit: u32, shared: Option<Arc<dyn SharedLimiter>>) -> Politeness {
        Politeness {
            local: Local::new(limit),
            shared,
        }
    }

    /// Waits, within `deadline`, until a request to `origin` may be sent, and
    /// returns its slot; or refuses it (`http_4xx` 429) when the origin is held
    /// past the deadline or stays full until it.
    pub(crate) async fn admit(
        self: &Arc<Self>,
        origin: &Origin,
        deadline: Instant,
    ) -> Result<Slot, FetchError> {
        loop {
            let changed = self.local.changed();
            let now = Instant::now();
            let (seen, held) = self.try_admit(origin, now, deadline).await;
            match decide(seen, deadline.saturating_duration_since(now)) {
                Admit::Go => {
                    return Ok(Slot {
                        politeness: Arc::clone(self),
                        origin: origin.clone(),
                        held,
                    });
                }
                Admit::Refuse(refusal) => {
                    tracing::info!(
                        event = "politeness_refused",
                        origin = %origin,
                        reason = refusal.reason,
                        retry_after_seconds = refusal.retry_after_seconds,
                        "request not sent: the origin is held or busy past this call's budget"
                    );
                    return Err(FetchError::polite_refusal(&origin.to_string(), refusal));
                }
                Admit::Wait(pause) => {
                    tracing::debug!(event = "politeness_wait", origin = %origin, wait_ms = pause.as_millis() as u64);
                    let until = (Instant::now() + pause).min(deadline);
                    tokio::select! {
                        _ = changed => {}
                        _ = tokio::time::sleep_until(until) => {}
                    }
                }
            }
        }
    }

    /// Turns a response of `origin` into a hold for every caller (a 429, or a
    /// 503 with `Retry-After`; see [`rules::hold_after`]). Recorded here and,
    /// with Redis, for the fleet before this returns.
    pub(crate) async fn observe(&self, origin: &Origin, status: u16, headers: &HeaderMap) {
        let retry_after = headers
            .get(http::header::RETRY_AFTER)
            .map(|value| value.as_bytes());
        let Some(hold) = rules::hold_after(status, retry_after, SystemTime::now()) else {
            return;
        };
        tracing::info!(
            event = "politeness_hold",
            origin = %origin,
            status,
            hold_ms = hold.as_millis() as u64,
            "origin answered {status}: holding its requests for {} ms",
            hold.as_millis()
        );
        self.local.hold(origin, Instant::now() + hold);
        if let Some(shared) = &self.shared {
            shared.hold(origin, hold).await;
        }
    }

    /// One look at the state: the shared store's while it answers, else this
    /// process's.
    async fn try_admit(&self, origin: &Origin, now: Instant, deadline: Instant) -> (Seen, Held) {
        if let Some(shared) = &self.shared
            && let Some((seen, slot)) = shared.try_admit(origin, deadline).await
        {
            // A hold read from a shared store is capped as a local one is.
            return (rules::clamped(seen), Held::Shared(slot));
        }
        (self.local.try_admit(origin, now), Held::Local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical_url::CanonicalUrl;
    use crate::error::ErrorCode;

    fn origin() -> Origin {
        CanonicalUrl::parse("https://e.example/").unwrap().origin()
    }

    fn headers(retry_after: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::RETRY_AFTER, retry_after.parse().unwrap());
        headers
    }

    #[tokio::test]
    async fn a_held_origin_refuses_at_once_with_retry_after() {
        let politeness = Arc::new(Politeness::new(8, None));
        politeness.observe(&origin(), 429, &headers("30")).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        let error = politeness.admit(&origin(), deadline).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::Http4xx);
        assert!(error.retryable);
        let details = error.details_json();
        assert_eq!(details["status"], 429);
        assert_eq!(details["reason"], "origin_held");
        assert_eq!(details["retry_after_seconds"], 30);
        // Other responses hold nothing.
        let other = CanonicalUrl::parse("https://o.example/").unwrap().origin();
        politeness.observe(&other, 503, &HeaderMap::new()).await;
        politeness.observe(&other, 500, &headers("30")).await;
        drop(politeness.admit(&other, deadline).await.unwrap());
    }

    #[tokio::test]
    async fn a_full_origin_admits_when_a_slot_is_given_back() {
        let politeness = Arc::new(Politeness::new(1, None));
        let first = politeness
            .admit(&origin(), Instant::now() + Duration::from_secs(30))
            .await
            .unwrap();
        let waiting = {
            let politeness = Arc::clone(&politeness);
            tokio::spawn(async move {
                politeness
                    .admit(&origin(), Instant::now() + Duration::from_secs(30))
                    .await
                    .map(drop)
            })
        };
        // The waiter is parked until the slot comes back.
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(first);
        waiting.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_full_origin_refuses_at_the_deadline() {
        let politeness = Arc::new(Politeness::new(1, None));
        let _first = politeness
            .admit(&origin(), Instant::now() + Duration::from_secs(30))
            .await
            .unwrap();
        let error = politeness
            .admit(&origin(), Instant::now())
            .await
            .unwrap_err();
        assert_eq!(error.details_json()["reason"], "origin_busy");
        assert_eq!(error.details_json()["retry_after_seconds"], 1);
    }
}
