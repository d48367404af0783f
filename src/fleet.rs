//! A fleet of webfetch instances sharing state on Redis (extension):
//! one document cache, one robots.txt view and one politeness budget for every
//! `webfetch serve` behind a load balancer. Redis is the protocol, so Valkey,
//! KeyDB, Dragonfly and managed Redis services serve too.
//!
//! An adapter: each part implements a trait the stage it serves owns
//! ([`cache::shared::SharedDocuments`](crate::cache::shared::SharedDocuments),
//! [`robots::shared::SharedRobots`](crate::robots::shared::SharedRobots),
//! [`politeness::SharedLimiter`](crate::politeness::SharedLimiter)), and the
//! tool's builder wires them in. Nothing below the tool imports this module.
//!
//! - [`conn`]: the connection: reconnects, a deadline on every operation, a
//!   short pause after a failure, redacted logs.
//! - [`flight`]: single flight: a leased lock per key, renewed while its holder
//!   works, waited for by everyone else within their own deadline.
//! - [`documents`]: the document cache (same keys and entry JSON as the disk
//!   cache, FR-WF-16c; Redis's expiry is the TTL).
//! - [`robots`]: robots.txt outcomes, when `share_robots` is set.
//! - [`limiter`]: the per-origin in-flight slots and holds of `politeness`.
//!
//! - [`tag`]: every value the fleet writes and later trusts carries an
//!   HMAC-SHA256 tag bound to its Redis key; anything else is a miss.
//!
//! Every failure of Redis is "no shared state": calls go on as they would
//! without a `[tools.webfetch.fleet]` table, a warning says so, and nothing
//! waits past its own budget. With no table none of this exists and every SRD
//! answer is unchanged.

mod conn;
mod documents;
mod flight;
mod limiter;
mod robots;
mod tag;

use std::sync::Arc;

use self::documents::RedisDocuments;
use self::limiter::RedisLimiter;
use self::robots::RedisRobots;
use crate::cache::shared::SharedDocuments;
use crate::config::{ConfigError, Settings};
use crate::politeness::SharedLimiter;
use crate::robots::shared::SharedRobots;

/// The fleet's parts for one tool, all on one connection, as the stages they
/// serve see them.
#[derive(Debug, Clone)]
pub(crate) struct Fleet {
    /// The document cache; `None` when `max_cache_entries = 0` turns caching off.
    pub(crate) documents: Option<Arc<dyn SharedDocuments>>,
    /// robots.txt outcomes; `None` unless `share_robots`.
    pub(crate) robots: Option<Arc<dyn SharedRobots>>,
    /// Fleet-wide politeness.
    pub(crate) limiter: Arc<dyn SharedLimiter>,
}

impl Fleet {
    /// The fleet configured in `settings`, or `None` without `redis_url`.
    /// Nothing is connected yet: the first call connects.
    pub(crate) fn from_settings(settings: &Settings) -> Result<Option<Fleet>, ConfigError> {
        let Some(redis_settings) = &settings.fleet.redis else {
            return Ok(None);
        };
        let redis = conn::Redis::new(redis_settings)?;
        let prefix = &redis_settings.key_prefix;
        let sealer = tag::Sealer::new(redis_settings.key.as_ref());
        let budget = settings.timeout();
        let documents = (settings.cache.max_entries > 0).then(|| {
            Arc::new(RedisDocuments::new(
                Arc::clone(&redis),
                prefix,
                sealer.clone(),
                &settings.cache,
                budget,
            )) as Arc<dyn SharedDocuments>
        });
        let robots =
            (redis_settings.share_robots && settings.robots.cache_entries > 0).then(|| {
                Arc::new(RedisRobots::new(
                    Arc::clone(&redis),
                    prefix,
                    sealer.clone(),
                    settings.robots.cache_ttl,
                    settings.robots.max_robots_bytes,
                    budget,
                )) as Arc<dyn SharedRobots>
            });
        let limiter = RedisLimiter::new(redis, prefix, sealer, settings.fleet.per_origin_in_flight);
        tracing::info!(
            event = "fleet_configured",
            redis = %redis_settings.url,
            documents = documents.is_some(),
            share_robots = robots.is_some(),
            authenticated = redis_settings.key.is_some(),
            per_origin_in_flight = settings.fleet.per_origin_in_flight,
            "fleet: shared state on Redis {}",
            redis_settings.url
        );
        Ok(Some(Fleet {
            documents,
            robots,
            limiter: Arc::new(limiter),
        }))
    }
}
