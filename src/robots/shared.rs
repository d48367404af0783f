//! robots.txt outcomes shared beyond this process (extension, `share_robots`;
//! FR-WF-ROBOTS-CACHE-01 keeps them process-local unless it is set), so that a
//! fleet retrieves each origin's robots.txt once per TTL. `fleet` implements
//! [`SharedRobots`] on Redis; the checker asks it only on a miss of its own
//! cache.
//!
//! What is shared is a retrieval outcome, never rules: each instance decides
//! what it means with its own policy ([`super::policy::resolve`]).

use std::fmt;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::policy::FetchOutcome;
use crate::canonical_url::Origin;

/// A store of robots.txt outcomes shared by several processes.
pub(crate) trait SharedRobots: fmt::Debug + Send + Sync {
    /// The shared outcome of `origin`, or this caller's turn to retrieve it,
    /// waiting for another process's retrieval until `deadline`.
    fn lookup<'a>(&'a self, origin: &'a Origin, deadline: Instant) -> BoxFuture<'a, SharedLookup>;
}

/// What a shared look-up found.
#[derive(Debug)]
#[cfg_attr(
    not(feature = "fleet"),
    expect(dead_code, reason = "only the fleet's store answers")
)]
pub(crate) enum SharedLookup {
    /// An outcome some process retrieved, and how long it stays fresh.
    Found(FetchOutcome, Duration),
    /// Nobody has it: this caller retrieves it, then shares it through the claim.
    Claimed(Box<dyn RobotsClaim>),
    /// The deadline came while another process was retrieving it.
    GaveUp,
    /// The store is unavailable: retrieve as if nothing were shared.
    Unavailable,
}

/// A caller's turn to retrieve an origin's robots.txt for everyone sharing the
/// store. Dropped unshared (the call was cancelled), it gives the turn back.
pub(crate) trait RobotsClaim: fmt::Debug + Send {
    /// Shares `outcome`, if the policy caches it (best effort), and ends the turn.
    fn share<'a>(self: Box<Self>, outcome: &'a FetchOutcome) -> BoxFuture<'a, ()>;
}
