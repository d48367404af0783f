//! robots.txt shared by the fleet (opt-in `share_robots`,
//! since FR-WF-ROBOTS-CACHE-01 keeps robots.txt process-local by default).
//!
//! What is shared is the retrieval outcome the policy may cache
//! (ROBOTS-CACHE-02): a 200 body (cut at `max_robots_bytes`, with its
//! truncation flag) or a 4xx status. Each instance parses it and selects its
//! group itself (`robots::policy::resolve`), so the rules are the ones a local
//! fetch would give. Fail-open and unavailable outcomes are never stored
//! (ROBOTS-CACHE-04). The entry lives at `{prefix}robots:{origin}` for the
//! robots TTL (FR-WF-08f) and carries its expiry, so an instance keeps it in its
//! own cache only for what is left of it. One retrieval per origin per TTL for
//! the whole fleet: a single-flight lock per origin, as for documents.
//!
//! The value is sealed with the fleet's tag ([`super::tag`]) and read only if
//! it is no longer than the largest outcome a retrieval keeps: a body cut at
//! `max_robots_bytes` (FR-WF-ROBOTS-SIZE-01, the cap of every robots.txt
//! fetch), its header and the tag; its length is checked in Redis before it is
//! sent (`STRLEN`). A value without a valid tag, with a longer body, or
//! claiming more time than the robots TTL is a miss, and is deleted.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::conn::{Redis, Unavailable};
use super::flight::{self, Claim, Lease, Wait};
use super::tag::Sealer;
use crate::canonical_url::Origin;
use crate::robots::policy::FetchOutcome;
use crate::robots::shared::{RobotsClaim, SharedLookup, SharedRobots};

/// The first bytes of a shared robots.txt outcome, format version 1.
const MAGIC: &[u8; 4] = b"WFR1";

/// Magic, expiry (unix ms), status, truncation flag.
const HEADER: usize = 4 + 8 + 2 + 1;

/// robots.txt outcomes shared through Redis: the fleet's [`SharedRobots`].
#[derive(Debug, Clone)]
pub(crate) struct RedisRobots {
    redis: Arc<Redis>,
    prefix: String,
    sealer: Sealer,
    ttl: Duration,
    /// `max_robots_bytes`: the longest body a retrieval keeps.
    max_body: u64,
    lease: Duration,
}

/// This instance's turn to retrieve an origin's robots.txt for the fleet: the
/// origin's lock, released (also when dropped) after the outcome is shared.
#[derive(Debug)]
struct Turn {
    robots: RedisRobots,
    origin: Origin,
    lease: Lease,
}

impl RobotsClaim for Turn {
    fn share<'a>(self: Box<Self>, outcome: &'a FetchOutcome) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Turn {
                robots,
                origin,
                lease,
            } = *self;
            robots.store(&origin, outcome).await;
            lease.release().await;
        })
    }
}

impl SharedRobots for RedisRobots {
    fn lookup<'a>(&'a self, origin: &'a Origin, deadline: Instant) -> BoxFuture<'a, SharedLookup> {
        Box::pin(self.find(origin, deadline))
    }
}

impl RedisRobots {
    /// Outcomes under `prefix`, sealed by `sealer`, kept for `ttl`, bodies of
    /// at most `max_body` bytes (`max_robots_bytes`), locks leased for work of
    /// `budget` (the robots.txt budget, `timeout_seconds`).
    pub(crate) fn new(
        redis: Arc<Redis>,
        prefix: &str,
        sealer: Sealer,
        ttl: Duration,
        max_body: u64,
        budget: Duration,
    ) -> Self {
        RedisRobots {
            redis,
            prefix: prefix.to_owned(),
            sealer,
            ttl,
            max_body,
            lease: flight::lease_for(budget),
        }
    }

    /// The longest value stored for an outcome.
    fn max_stored(&self) -> u64 {
        let extra = HEADER + self.sealer.overhead();
        self.max_body
            .saturating_add(u64::try_from(extra).unwrap_or(u64::MAX))
    }

    fn entry_key(&self, origin: &Origin) -> String {
        format!("{}robots:{origin}", self.prefix)
    }

    /// The shared outcome of `origin`, or the lock to fetch it, waiting for
    /// another instance's retrieval until `deadline`.
    async fn find(&self, origin: &Origin, deadline: Instant) -> SharedLookup {
        let lock = format!("{}robots-lock:{origin}", self.prefix);
        let name = self.entry_key(origin);
        let values = [name.clone()];
        let wait = Wait {
            lock: &lock,
            values: &values,
            max_len: self.max_stored(),
            sealer: &self.sealer,
            lease: self.lease,
            until: deadline,
        };
        let accept = |values: Vec<Option<Vec<u8>>>| {
            let decoded = values.into_iter().next().flatten().and_then(|stored| {
                let decoded = self
                    .sealer
                    .open(&name, &stored)
                    .and_then(|bytes| decode(bytes, SystemTime::now(), self.max_body))
                    .map(|(outcome, left)| (outcome, left.min(self.ttl)));
                if decoded.is_none() {
                    tracing::warn!(
                        event = "robots_shared_unreadable",
                        origin = %origin,
                        "fleet: a shared robots.txt outcome without a valid tag, too large, \
                         or torn; it is deleted"
                    );
                    flight::delete_later(&self.redis, &name);
                }
                decoded
            });
            std::future::ready(decoded)
        };
        match flight::wait_or_claim(&self.redis, wait, accept).await {
            Ok(Claim::Found((outcome, left))) => SharedLookup::Found(outcome, left),
            Ok(Claim::Claimed(lease)) => SharedLookup::Claimed(Box::new(Turn {
                robots: self.clone(),
                origin: origin.clone(),
                lease,
            })),
            Ok(Claim::GaveUp) => SharedLookup::GaveUp,
            Err(Unavailable) => SharedLookup::Unavailable,
        }
    }

    /// Shares `outcome` of `origin` for the robots TTL, if it is one the policy
    /// caches; best effort.
    async fn store(&self, origin: &Origin, outcome: &FetchOutcome) {
        let Some(bytes) = encode(outcome, SystemTime::now() + self.ttl) else {
            return;
        };
        let key = self.entry_key(origin);
        let bytes = self.sealer.seal(&key, &bytes);
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let deadline = Instant::now() + super::conn::OP_TIMEOUT;
        let _ = self
            .redis
            .run("share robots.txt", deadline, |mut conn| async move {
                redis::cmd("SET")
                    .arg(&key)
                    .arg(bytes)
                    .arg("PX")
                    .arg(ttl_ms)
                    .query_async::<()>(&mut conn)
                    .await
            })
            .await;
    }
}

/// The stored form of a cacheable outcome expiring at `expires`; `None` for an
/// outcome that must not be cached (ROBOTS-CACHE-04: 5xx, timeouts, failures).
pub(crate) fn encode(outcome: &FetchOutcome, expires: SystemTime) -> Option<Vec<u8>> {
    let (status, truncated, body): (u16, bool, &[u8]) = match outcome {
        FetchOutcome::Body { body, truncated } => (200, *truncated, body),
        FetchOutcome::Status(status) if (400..500).contains(status) => (*status, false, &[]),
        _ => return None,
    };
    let expires_ms = expires
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_millis()).ok())?;
    let mut bytes = Vec::with_capacity(HEADER + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&expires_ms.to_be_bytes());
    bytes.extend_from_slice(&status.to_be_bytes());
    bytes.push(u8::from(truncated));
    bytes.extend_from_slice(body);
    Some(bytes)
}

/// The outcome stored in `bytes` and how long it stays fresh after `now`;
/// `None` for anything else, an expired entry, or a body longer than
/// `max_body` (no retrieval keeps more).
pub(crate) fn decode(
    bytes: &[u8],
    now: SystemTime,
    max_body: u64,
) -> Option<(FetchOutcome, Duration)> {
    let (header, body) = bytes.split_at_checked(HEADER)?;
    if u64::try_from(body.len()).ok()? > max_body {
        return None;
    }
    let (magic, rest) = header.split_at(4);
    if magic != MAGIC {
        return None;
    }
    let expires_ms = u64::from_be_bytes(rest.get(..8)?.try_into().ok()?);
    let status = u16::from_be_bytes(rest.get(8..10)?.try_into().ok()?);
    let truncated = match rest.get(10)? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let expires = SystemTime::UNIX_EPOCH.checked_add(Duration::from_millis(expires_ms))?;
    let left = expires.duration_since(now).ok().filter(|d| !d.is_zero())?;
    let outcome = match status {
        200 => FetchOutcome::Body {
            body: Bytes::copy_from_slice(body),
            truncated,
        },
        400..=499 if body.is_empty() && !truncated => FetchOutcome::Status(status),
        _ => return None,
    };
    Some((outcome, left))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FetchError;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn cacheable_outcomes_round_trip_with_what_is_left_of_their_ttl() {
        let outcomes = [
            FetchOutcome::Body {
                body: Bytes::from_static(b"User-agent: *\nDisallow: /private\n"),
                truncated: false,
            },
            FetchOutcome::Body {
                body: Bytes::from_static(b"User-agent: *\nDisal"),
                truncated: true,
            },
            FetchOutcome::Body {
                body: Bytes::new(),
                truncated: false,
            },
            FetchOutcome::Status(404),
            FetchOutcome::Status(429),
        ];
        for outcome in outcomes {
            let bytes = encode(&outcome, at(1000)).unwrap();
            assert_eq!(
                decode(&bytes, at(400), 1024),
                Some((outcome, Duration::from_secs(600)))
            );
            assert_eq!(decode(&bytes, at(1000), 1024), None, "expired");
        }
    }

    #[test]
    fn what_must_not_be_cached_is_never_encoded() {
        for outcome in [
            FetchOutcome::Status(503),
            FetchOutcome::Status(302),
            FetchOutcome::TimedOut,
            FetchOutcome::Failed(FetchError::network("reset")),
        ] {
            assert_eq!(encode(&outcome, at(1000)), None, "{outcome:?}");
        }
    }

    #[test]
    fn foreign_or_torn_bytes_are_refused() {
        let good = encode(&FetchOutcome::Status(404), at(1000)).unwrap();
        let mut bad_flag = encode(
            &FetchOutcome::Body {
                body: Bytes::from_static(b"x"),
                truncated: false,
            },
            at(1000),
        )
        .unwrap();
        bad_flag[14] = 7;
        let mut status_with_body = good.clone();
        status_with_body.push(b'x');
        let mut wrong_status = good.clone();
        wrong_status[12..14].copy_from_slice(&503u16.to_be_bytes());
        for bytes in [
            &b""[..],
            &b"WFR1"[..],
            &good[..HEADER - 1],
            &b"WFR2\0\0\0\0\0\0\0\0\x01\x94\0"[..],
            &bad_flag,
            &status_with_body,
            &wrong_status,
        ] {
            assert_eq!(decode(bytes, at(0), 1024), None, "{bytes:?}");
        }
    }

    #[test]
    fn a_body_longer_than_max_robots_bytes_is_refused() {
        let outcome = FetchOutcome::Body {
            body: Bytes::from(vec![b'#'; 100]),
            truncated: false,
        };
        let bytes = encode(&outcome, at(1000)).unwrap();
        assert!(decode(&bytes, at(0), 100).is_some());
        assert_eq!(decode(&bytes, at(0), 99), None);
    }
}
