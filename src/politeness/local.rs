//! The process-wide politeness state (extension): per origin, the
//! requests in flight and the time a hold ends. Used alone without Redis, and
//! as the fallback while Redis is unreachable.
//!
//! The map keeps only origins with a request in flight or a hold still running;
//! an origin leaves it when its last request ends and its hold has passed, and a
//! sweep drops stale holds once the map grows past [`SWEEP_AT`] origins, so
//! origins that answered 429 once do not pile up.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use tokio::sync::Notify;
use tokio::time::Instant;

use super::rules::Seen;
use crate::canonical_url::Origin;

/// Origins held before stale holds are swept.
const SWEEP_AT: usize = 1024;

/// Per-origin counts and holds of this process.
#[derive(Debug)]
pub(crate) struct Local {
    limit: u32,
    origins: Mutex<HashMap<Origin, State>>,
    /// Woken when a slot frees up or a hold is set, so waiters look again.
    changed: Notify,
}

#[derive(Debug, Default)]
struct State {
    in_flight: u32,
    held_until: Option<Instant>,
}

impl State {
    fn is_idle(&self, now: Instant) -> bool {
        self.in_flight == 0 && self.held_until.is_none_or(|until| until <= now)
    }
}

impl Local {
    /// At most `limit` (at least 1) requests in flight per origin.
    pub(crate) fn new(limit: u32) -> Local {
        Local {
            limit: limit.max(1),
            origins: Mutex::new(HashMap::new()),
            changed: Notify::new(),
        }
    }

    /// Takes a slot of `origin` unless it is held or full.
    pub(crate) fn try_admit(&self, origin: &Origin, now: Instant) -> Seen {
        let mut origins = self.lock();
        let state = origins.entry(origin.clone()).or_default();
        if let Some(until) = state.held_until {
            if until > now {
                return Seen::Held(until - now);
            }
            state.held_until = None;
        }
        if state.in_flight >= self.limit {
            return Seen::Full;
        }
        state.in_flight += 1;
        Seen::Admitted
    }

    /// Gives back a slot taken by [`try_admit`](Self::try_admit).
    pub(crate) fn release(&self, origin: &Origin) {
        let mut origins = self.lock();
        if let Some(state) = origins.get_mut(origin) {
            state.in_flight = state.in_flight.saturating_sub(1);
            if state.is_idle(Instant::now()) {
                origins.remove(origin);
            }
        }
        drop(origins);
        self.changed.notify_waiters();
    }

    /// Holds `origin` until `until`, unless it is already held longer.
    pub(crate) fn hold(&self, origin: &Origin, until: Instant) {
        let mut origins = self.lock();
        if origins.len() >= SWEEP_AT {
            let now = Instant::now();
            origins.retain(|_, state| !state.is_idle(now));
        }
        let state = origins.entry(origin.clone()).or_default();
        state.held_until = Some(state.held_until.map_or(until, |held| held.max(until)));
        drop(origins);
        self.changed.notify_waiters();
    }

    /// Resolves at the next release or hold; a waiter creates it before it
    /// looks, so a change between the look and the wait is not missed.
    pub(crate) fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }

    /// The origins tracked (tests: the map does not grow).
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Origin, State>> {
        // Counts are updated in one step each; a poisoned lock is still usable.
        self.origins.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::canonical_url::CanonicalUrl;

    fn origin(text: &str) -> Origin {
        CanonicalUrl::parse(text).unwrap().origin()
    }

    #[test]
    fn at_most_limit_in_flight_per_origin() {
        let local = Local::new(2);
        let (a, b) = (origin("https://a.example/"), origin("https://b.example/"));
        let now = Instant::now();
        assert_eq!(local.try_admit(&a, now), Seen::Admitted);
        assert_eq!(local.try_admit(&a, now), Seen::Admitted);
        assert_eq!(local.try_admit(&a, now), Seen::Full);
        assert_eq!(local.try_admit(&b, now), Seen::Admitted);
        local.release(&a);
        assert_eq!(local.try_admit(&a, now), Seen::Admitted);
        for o in [&a, &a, &b] {
            local.release(o);
        }
        assert_eq!(local.tracked(), 0);
    }

    #[test]
    fn a_hold_refuses_until_it_ends_and_only_grows() {
        let local = Local::new(8);
        let a = origin("https://a.example/");
        let now = Instant::now();
        local.hold(&a, now + Duration::from_secs(5));
        local.hold(&a, now + Duration::from_secs(2));
        assert_eq!(
            local.try_admit(&a, now + Duration::from_secs(1)),
            Seen::Held(Duration::from_secs(4))
        );
        assert_eq!(
            local.try_admit(&a, now + Duration::from_secs(5)),
            Seen::Admitted
        );
        local.release(&a);
        assert_eq!(local.tracked(), 0);
    }

    #[test]
    fn stale_holds_are_swept() {
        let local = Local::new(1);
        let past = Instant::now();
        for i in 0..SWEEP_AT + 10 {
            local.hold(&origin(&format!("https://h{i}.example/")), past);
        }
        assert!(local.tracked() <= SWEEP_AT, "{}", local.tracked());
    }
}
