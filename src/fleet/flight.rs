//! Single flight across the fleet (issue 32, item 2): for one key, one caller
//! anywhere fetches; the others wait for its result and read it.
//!
//! The lock is `SET lock token NX PX lease`, released by compare-and-delete, so a
//! holder never deletes a lock that expired and was taken by another. The lease
//! is shorter than a call's budget ([`lease_for`]) and renewed while the holder
//! works, so a slow fetch keeps it, and a holder that dies loses it within one
//! lease: then one waiter takes it over. A waiter polls with a growing pause
//! (one round trip each: take the lock if free, else read the values) and stops
//! at its own deadline. The holder writes its value before it releases the
//! lock, and each poll tries the lock before it reads, so a waiter that finds
//! the lock free also finds the value the holder wrote.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::{Script, Value};
use tokio::time::Instant;

use super::conn::{Redis, Unavailable};

/// Compare-and-delete: releases the lock only if it still holds our token.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end \
         return 0",
    )
});

/// Compare-and-extend: renews the lease only while the lock is ours.
static RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then \
           return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0",
    )
});

/// The shortest and longest lease.
const MIN_LEASE: Duration = Duration::from_millis(500);
const MAX_LEASE: Duration = Duration::from_secs(10);

/// The first and the longest pause between two polls of a waiter.
const FIRST_POLL: Duration = Duration::from_millis(5);
const MAX_POLL: Duration = Duration::from_millis(100);

/// The lease of a lock taken for work whose budget is `budget`: a quarter of
/// it, between 0.5 s and 10 s, so that it is always shorter than the budget of
/// the calls waiting for it (budgets are whole seconds, at least 1).
pub(crate) fn lease_for(budget: Duration) -> Duration {
    (budget / 4).clamp(MIN_LEASE, MAX_LEASE)
}

/// The pauses of a waiter: 5 ms, doubling, at most 100 ms.
#[derive(Debug, Clone)]
pub(crate) struct Backoff(Duration);

impl Backoff {
    pub(crate) fn new() -> Backoff {
        Backoff(FIRST_POLL)
    }

    /// The next pause.
    pub(crate) fn next_pause(&mut self) -> Duration {
        let pause = self.0;
        self.0 = (self.0 * 2).min(MAX_POLL);
        pause
    }
}

/// A random token naming one holder.
pub(crate) fn new_token() -> String {
    format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

/// A lock this caller holds. Renewed in the background until released; if it
/// is dropped unreleased (the call was cancelled), it is released by a task.
#[derive(Debug)]
pub(crate) struct Lease {
    redis: Arc<Redis>,
    key: String,
    token: String,
    renewal: Option<tokio::task::JoinHandle<()>>,
}

impl Lease {
    /// The lock `key` just taken with `token` for `lease`; starts renewing it.
    fn start(redis: Arc<Redis>, key: String, token: String, lease: Duration) -> Lease {
        let renewal = {
            let (redis, key, token) = (Arc::clone(&redis), key.clone(), token.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(lease / 3).await;
                    let deadline = Instant::now() + lease / 3;
                    let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
                    let (key, token) = (&key, &token);
                    let renewed = redis
                        .run("renew lease", deadline, |mut conn| async move {
                            RENEW
                                .key(key)
                                .arg(token)
                                .arg(lease_ms)
                                .invoke_async::<i64>(&mut conn)
                                .await
                        })
                        .await;
                    // Lost (expired and taken) or Redis gone: nothing to keep.
                    if renewed != Ok(1) {
                        break;
                    }
                }
            })
        };
        Lease {
            redis,
            key,
            token,
            renewal: Some(renewal),
        }
    }

    /// Stops renewing and deletes the lock if it is still ours.
    pub(crate) async fn release(mut self) {
        if let Some(renewal) = self.renewal.take() {
            renewal.abort();
        }
        release(&self.redis, &self.key, &self.token).await;
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(renewal) = self.renewal.take() else {
            return;
        };
        renewal.abort();
        let (redis, key, token) = (
            Arc::clone(&self.redis),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.token),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { release(&redis, &key, &token).await });
        }
    }
}

async fn release(redis: &Redis, key: &str, token: &str) {
    let deadline = Instant::now() + super::conn::OP_TIMEOUT;
    let _ = redis
        .run("release lock", deadline, |mut conn| async move {
            RELEASE
                .key(key)
                .arg(token)
                .invoke_async::<i64>(&mut conn)
                .await
        })
        .await;
}

/// How waiting for a key ended.
#[derive(Debug)]
pub(crate) enum Claim<V> {
    /// Someone's value, as `accept` read it.
    Found(V),
    /// The lock is ours: do the work, write the value, then release.
    Claimed(Lease),
    /// The deadline came first; the lock is someone else's.
    GaveUp,
}

/// What one wait is about.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wait<'a> {
    /// The lock key.
    pub(crate) lock: &'a str,
    /// The keys whose values end the wait, read in one round trip with the try.
    pub(crate) values: &'a [String],
    /// The lease to take.
    pub(crate) lease: Duration,
    /// When to stop waiting.
    pub(crate) until: Instant,
}

/// Polls until `accept` takes the values read, or the lock is free and taken,
/// or `wait.until`. `accept` gets the values of `wait.values` in order (`None`
/// for a missing key) and returns what ends the wait, if anything. Fails when
/// Redis does: the caller then goes on alone.
pub(crate) async fn wait_or_claim<V>(
    redis: &Arc<Redis>,
    wait: Wait<'_>,
    accept: impl Fn(Vec<Option<Vec<u8>>>) -> Option<V>,
) -> Result<Claim<V>, Unavailable> {
    let token = new_token();
    let mut backoff = Backoff::new();
    loop {
        let (claimed, values) = try_claim(redis, &wait, &token).await?;
        let found = accept(values);
        if claimed {
            let lease = Lease::start(Arc::clone(redis), wait.lock.to_owned(), token, wait.lease);
            return Ok(match found {
                Some(value) => {
                    lease.release().await;
                    Claim::Found(value)
                }
                None => Claim::Claimed(lease),
            });
        }
        if let Some(value) = found {
            return Ok(Claim::Found(value));
        }
        let now = Instant::now();
        if now >= wait.until {
            return Ok(Claim::GaveUp);
        }
        let pause = backoff.next_pause().min(wait.until - now);
        tokio::time::sleep(pause).await;
    }
}

/// One round trip: `SET lock token NX PX lease`, then `GET` each value key.
async fn try_claim(
    redis: &Redis,
    wait: &Wait<'_>,
    token: &str,
) -> Result<(bool, Vec<Option<Vec<u8>>>), Unavailable> {
    let lease_ms = u64::try_from(wait.lease.as_millis()).unwrap_or(u64::MAX);
    let mut pipe = redis::pipe();
    pipe.cmd("SET")
        .arg(wait.lock)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(lease_ms);
    for key in wait.values {
        pipe.cmd("GET").arg(key);
    }
    // The wait may end before Redis answers; give the round trip at least a
    // moment so that a waiter at its deadline still reads once.
    let deadline = wait.until.max(Instant::now() + Duration::from_millis(200));
    let replies: Vec<Value> = redis
        .run("single flight", deadline, |mut conn| async move {
            pipe.query_async(&mut conn).await
        })
        .await?;
    let mut replies = replies.into_iter();
    let claimed = match replies.next() {
        Some(Value::Okay) => true,
        Some(Value::SimpleString(s)) if s == "OK" => true,
        Some(Value::Nil) => false,
        _ => return Err(redis.bad_reply("single flight")),
    };
    let values = replies.map(bytes_of).collect::<Result<Vec<_>, ()>>();
    match values {
        Ok(values) if values.len() == wait.values.len() => Ok((claimed, values)),
        _ => Err(redis.bad_reply("single flight")),
    }
}

/// A `GET` reply: bytes, or `None` for a missing key.
pub(crate) fn bytes_of(value: Value) -> Result<Option<Vec<u8>>, ()> {
    match value {
        Value::Nil => Ok(None),
        Value::BulkString(bytes) => Ok(Some(bytes)),
        Value::SimpleString(text) => Ok(Some(text.into_bytes())),
        _ => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_is_shorter_than_any_budget() {
        assert_eq!(lease_for(Duration::from_secs(1)), MIN_LEASE);
        assert_eq!(lease_for(Duration::from_secs(8)), Duration::from_secs(2));
        assert_eq!(lease_for(Duration::from_secs(20)), Duration::from_secs(5));
        assert_eq!(lease_for(Duration::from_secs(300)), MAX_LEASE);
        for secs in 1..=300 {
            let budget = Duration::from_secs(secs);
            assert!(lease_for(budget) < budget, "{secs}");
        }
    }

    #[test]
    fn polls_back_off_to_a_ceiling() {
        let mut backoff = Backoff::new();
        let pauses: Vec<u64> = (0..7)
            .map(|_| u64::try_from(backoff.next_pause().as_millis()).unwrap())
            .collect();
        assert_eq!(pauses, [5, 10, 20, 40, 80, 100, 100]);
    }

    #[test]
    fn get_replies_are_bytes_nil_or_refused() {
        assert_eq!(bytes_of(Value::Nil), Ok(None));
        assert_eq!(
            bytes_of(Value::BulkString(b"x".to_vec())),
            Ok(Some(b"x".to_vec()))
        );
        assert_eq!(bytes_of(Value::Int(3)), Err(()));
        assert_eq!(bytes_of(Value::Array(vec![])), Err(()));
    }

    #[test]
    fn tokens_differ() {
        assert_ne!(new_token(), new_token());
        assert_eq!(new_token().len(), 32);
    }
}
