//! The connection to the fleet's Redis: connect, reconnect,
//! a deadline on every operation, and what the logs may say about it.
//!
//! One multiplexed connection per tool, made on first use by redis-rs's
//! `ConnectionManager`. Every operation runs under [`OP_TIMEOUT`] and never past
//! the caller's deadline. A failure marks Redis down ([`Health`]): from then on
//! operations fail at once, so a dead or stalled server costs a call at most
//! the one operation that found it out, and a background probe alone tries
//! again (a fresh connection and a `PING`, after 0.25 s, doubling to 2 s) until
//! Redis answers; then sharing resumes by itself. Callers treat a failure as
//! "no shared state" and go on as if no Redis were configured.
//!
//! The URL's password never reaches a log line: the URL is shown redacted and
//! error texts are scrubbed of the password before they are logged.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::time::Instant;

use crate::config::{ConfigError, RedisSettings, RedisUrl};

/// The longest any one Redis operation may take.
pub(crate) const OP_TIMEOUT: Duration = Duration::from_secs(1);

/// The probe's first pause after a failure; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// The longest pause between two probes of a Redis that stays down.
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// While Redis stays down, a reminder is logged this often.
const WARN_EVERY: Duration = Duration::from_secs(30);

/// Redis could not serve an operation (down, slow, refused, or a reply that
/// is not what the script returns): the caller goes on without shared state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unavailable;

/// The handle every fleet part shares.
pub(crate) struct Redis {
    client: redis::Client,
    /// Made on first use; dropped after a failure, so the next try connects
    /// afresh whatever state the old connection was left in.
    manager: Mutex<Option<ConnectionManager>>,
    /// The URL as logs show it (userinfo replaced).
    shown: String,
    /// The URL, to scrub its password from error texts.
    url: RedisUrl,
    health: Mutex<Health>,
    /// This handle, for the probe it starts when Redis goes down.
    me: Weak<Redis>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis").field("url", &self.shown).finish()
    }
}

/// Whether Redis is taken to be down, and what was logged about it.
#[derive(Debug, Default)]
struct Health {
    down: bool,
    warned_at: Option<Instant>,
    /// When a refusal by the server was last logged.
    refusal_warned_at: Option<Instant>,
}

/// What a failure calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failed {
    /// Log it (the first one, then one per [`WARN_EVERY`]).
    log: bool,
    /// Redis just went down: start the probe.
    probe: bool,
}

impl Health {
    /// Records a failure.
    fn failed(&mut self, now: Instant) -> Failed {
        let probe = !self.down;
        self.down = true;
        let log = self
            .warned_at
            .is_none_or(|at| now.saturating_duration_since(at) >= WARN_EVERY);
        if log {
            self.warned_at = Some(now);
        }
        Failed { log, probe }
    }

    /// Records a success; `true` when Redis was down until now.
    fn succeeded(&mut self) -> bool {
        let was_down = self.down;
        self.down = false;
        self.warned_at = None;
        was_down
    }

    /// Records an operation the server refused; `true` when it should be
    /// logged (one per [`WARN_EVERY`]).
    fn refused(&mut self, now: Instant) -> bool {
        let log = self
            .refusal_warned_at
            .is_none_or(|at| now.saturating_duration_since(at) >= WARN_EVERY);
        if log {
            self.refusal_warned_at = Some(now);
        }
        log
    }
}

impl Redis {
    /// A handle on the configured server; nothing is connected yet. A URL that
    /// redis-rs refuses, or a CA that does not parse, is a configuration error.
    pub(crate) fn new(settings: &RedisSettings) -> Result<Arc<Redis>, ConfigError> {
        let client = settings.client()?;
        Ok(Arc::new_cyclic(|me| Redis {
            client,
            manager: Mutex::new(None),
            shown: settings.url.to_string(),
            url: settings.url.clone(),
            health: Mutex::new(Health::default()),
            me: me.clone(),
        }))
    }

    /// Runs `op` on the shared connection within [`OP_TIMEOUT`] and `deadline`.
    /// `what` names the operation in the log line of a failure. Fails at once
    /// while Redis is down (until the probe finds it back) or when the
    /// deadline has passed.
    pub(crate) async fn run<T, F, Fut>(
        &self,
        what: &'static str,
        deadline: Instant,
        op: F,
    ) -> Result<T, Unavailable>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        if self.health().down {
            return Err(Unavailable);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Unavailable);
        }
        let limit = left.min(OP_TIMEOUT);
        let manager = match self.manager() {
            Ok(manager) => manager,
            Err(error) => {
                self.failed(what, &error.to_string());
                return Err(Unavailable);
            }
        };
        match tokio::time::timeout(limit, op(manager)).await {
            Ok(Ok(value)) => Ok(value),
            // The server answered, refusing this one operation (e.g. `OOM` under
            // `maxmemory-policy noeviction`): Redis is up, the connection fine.
            Ok(Err(error)) if is_refusal(&error) => {
                if self.health().refused(Instant::now()) {
                    let error = self.url.scrub(&error.to_string());
                    tracing::warn!(
                        event = "fleet_redis_refused",
                        redis = %self.shown,
                        operation = what,
                        error = %error,
                        "fleet: Redis {} refused {what} ({error}); that call goes on without it",
                        self.shown
                    );
                }
                Err(Unavailable)
            }
            Ok(Err(error)) => {
                self.failed(what, &error.to_string());
                Err(Unavailable)
            }
            // A deadline shorter than OP_TIMEOUT says nothing about Redis.
            Err(_) if limit < OP_TIMEOUT => Err(Unavailable),
            Err(_) => {
                self.failed(
                    what,
                    &format!("no answer within {} ms", OP_TIMEOUT.as_millis()),
                );
                Err(Unavailable)
            }
        }
    }

    /// Logs that a reply did not have the expected shape; counts as a failure.
    pub(crate) fn bad_reply(&self, what: &'static str) -> Unavailable {
        self.failed(what, "unexpected reply");
        Unavailable
    }

    fn manager(&self) -> redis::RedisResult<ConnectionManager> {
        let mut slot = self.manager.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(manager) = &*slot {
            return Ok(manager.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(OP_TIMEOUT))
            .set_response_timeout(Some(OP_TIMEOUT))
            .set_number_of_retries(0);
        let manager = self.client.get_connection_manager_lazy(config)?;
        *slot = Some(manager.clone());
        Ok(manager)
    }

    fn failed(&self, what: &'static str, error: &str) {
        *self.manager.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let failed = self.health().failed(Instant::now());
        if failed.probe {
            self.start_probe();
        }
        if failed.log {
            let error = self.url.scrub(error);
            tracing::warn!(
                event = "fleet_redis_unavailable",
                redis = %self.shown,
                operation = what,
                error = %error,
                "fleet: Redis {} unavailable ({what}: {error}); calls go on without the \
                 shared cache, robots.txt and politeness state until it answers again",
                self.shown
            );
        }
    }

    /// Tries Redis again in the background, with a fresh connection and a
    /// `PING` after each pause, until it answers; then marks it up. Ends early
    /// when the tool is gone.
    fn start_probe(&self) {
        let me = self.me.clone();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to probe from: the next operation tries instead.
            self.health().down = false;
            return;
        };
        runtime.spawn(async move {
            let mut pause = FIRST_PAUSE;
            loop {
                tokio::time::sleep(pause).await;
                let Some(redis) = me.upgrade() else { return };
                if redis.ping().await {
                    if redis.health().succeeded() {
                        tracing::info!(
                            event = "fleet_redis_back",
                            redis = %redis.shown,
                            "fleet: Redis {} answers again; sharing resumes",
                            redis.shown
                        );
                    }
                    return;
                }
                pause = (pause * 2).min(MAX_PAUSE);
            }
        });
    }

    /// One `PING` on a fresh connection, within [`OP_TIMEOUT`].
    async fn ping(&self) -> bool {
        *self.manager.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let Ok(mut manager) = self.manager() else {
            return false;
        };
        let ping = redis::cmd("PING");
        let reply = tokio::time::timeout(OP_TIMEOUT, ping.query_async::<String>(&mut manager));
        matches!(reply.await, Ok(Ok(_)))
    }

    fn health(&self) -> MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether `error` is the server's answer refusing one operation, rather than a
/// connection that failed.
fn is_refusal(error: &redis::RedisError) -> bool {
    matches!(
        error.kind(),
        redis::ErrorKind::Server(_) | redis::ErrorKind::Extension
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_starts_one_probe_and_warnings_are_sparse() {
        let mut health = Health::default();
        let t0 = Instant::now();
        assert_eq!(
            health.failed(t0),
            Failed {
                log: true,
                probe: true
            }
        );
        assert!(health.down);
        assert_eq!(
            health.failed(t0 + FIRST_PAUSE),
            Failed {
                log: false,
                probe: false
            }
        );
        assert!(health.failed(t0 + WARN_EVERY).log);
        assert!(health.succeeded());
        assert!(!health.succeeded());
        assert!(
            health.failed(t0 + WARN_EVERY).probe,
            "down again: a new probe"
        );
        assert!(health.refused(t0));
        assert!(!health.refused(t0 + FIRST_PAUSE));
    }
}
