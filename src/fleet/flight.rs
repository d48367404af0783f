//! Single flight across the fleet: for one key, one caller
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
//!
//! Values are read by a script that looks at each one's type and length
//! (`STRLEN`, constant time) before it reads it: a value larger than the
//! largest one a call could write, or not a string, is never sent; the caller
//! gets a miss and the value is deleted. So a value planted in Redis costs a
//! call no more memory or time than a real one.
//!
//! A lock's token is sealed for the lock key ([`super::tag`]), and a waiter
//! that finds the lock taken reads its value in the same round trip: a lock
//! without a valid tag was not taken by an instance, so it is deleted
//! (compare-and-delete) and the next poll takes it, instead of waiting a
//! whole budget for a fetch nobody makes.

use std::future::Future;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::{Script, Value};
use tokio::time::Instant;

use super::conn::{Redis, Unavailable};
use super::tag::Sealer;

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

/// The Lua function of [`READ`] and [`CLAIM`]: a value of at most `limit`
/// bytes, `false` for a missing key, its length when longer, -1 when it is
/// not a string.
const GUARDED_GET: &str = "local function guarded(k, limit) \
       local t = redis.call('TYPE', k).ok \
       if t == 'none' then return false end \
       if t ~= 'string' then return -1 end \
       local n = redis.call('STRLEN', k) \
       if n > limit then return n end \
       return redis.call('GET', k) end ";

/// KEYS: values. ARGV: the largest value to send. Returns each value as
/// [`GUARDED_GET`] does.
static READ: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{GUARDED_GET} local limit = tonumber(ARGV[1]) local out = {{}} \
         for i, k in ipairs(KEYS) do out[i] = guarded(k, limit) end return out"
    ))
});

/// KEYS: the lock, then the values. ARGV: token, lease (ms), the largest value
/// to send. `SET lock token NX PX lease`, then each value as [`GUARDED_GET`]
/// does; returns `{1, false, values…}` when the lock was taken, else `{0,
/// the lock's value (as [`GUARDED_GET`] reads it, at most 256 bytes), values…}`.
static CLAIM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{GUARDED_GET} local limit = tonumber(ARGV[3]) \
         local taken = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) \
         local out = {{taken and 1 or 0, false}} \
         if not taken then out[2] = guarded(KEYS[1], 256) end \
         for i = 2, #KEYS do out[i + 1] = guarded(KEYS[i], limit) end return out"
    ))
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
    /// The sealed token: the lock's value while it is ours.
    token: Vec<u8>,
    renewal: Option<tokio::task::JoinHandle<()>>,
}

impl Lease {
    /// The lock `key` just taken with `token` for `lease`; starts renewing it.
    fn start(redis: Arc<Redis>, key: String, token: Vec<u8>, lease: Duration) -> Lease {
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

async fn release(redis: &Redis, key: &str, token: &[u8]) {
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
    /// The largest value read; a longer one is a miss, and is deleted.
    pub(crate) max_len: u64,
    /// Seals this waiter's token and checks the lock's.
    pub(crate) sealer: &'a Sealer,
    /// The lease to take.
    pub(crate) lease: Duration,
    /// When to stop waiting.
    pub(crate) until: Instant,
}

/// Polls until `accept` takes the values read, or the lock is free and taken,
/// or `wait.until`. `accept` gets the values of `wait.values` in order (`None`
/// for a missing key, or one refused for its size or type) and returns what
/// ends the wait, if anything. Fails when Redis does: the caller then goes on
/// alone.
pub(crate) async fn wait_or_claim<V, F, Fut>(
    redis: &Arc<Redis>,
    wait: Wait<'_>,
    accept: F,
) -> Result<Claim<V>, Unavailable>
where
    F: Fn(Vec<Option<Vec<u8>>>) -> Fut,
    Fut: Future<Output = Option<V>>,
{
    let token = wait.sealer.seal(wait.lock, new_token().as_bytes());
    let mut backoff = Backoff::new();
    loop {
        let (lock, values) = try_claim(redis, &wait, &token).await?;
        let claimed = matches!(lock, Lock::Ours);
        if let Lock::Theirs(Some(value)) = &lock
            && wait.sealer.open(wait.lock, value).is_none()
        {
            tracing::warn!(
                event = "fleet_lock_refused",
                lock = %wait.lock,
                "fleet: a single-flight lock in Redis without a valid tag; it is deleted"
            );
            release(redis, wait.lock, value).await;
        } else if let Lock::Theirs(None) = &lock {
            delete_later(redis, wait.lock);
        }
        let found = accept(values).await;
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

/// Who holds the lock after a try.
#[derive(Debug, PartialEq, Eq)]
enum Lock {
    /// This waiter: it was free.
    Ours,
    /// Someone else: its value, or `None` when it is no short string (so no
    /// instance's).
    Theirs(Option<Vec<u8>>),
}

/// One round trip: `SET lock token NX PX lease`, then each value key read
/// within `wait.max_len` ([`CLAIM`]).
async fn try_claim(
    redis: &Arc<Redis>,
    wait: &Wait<'_>,
    token: &[u8],
) -> Result<(Lock, Vec<Option<Vec<u8>>>), Unavailable> {
    let lease_ms = u64::try_from(wait.lease.as_millis()).unwrap_or(u64::MAX);
    // The wait may end before Redis answers; give the round trip at least a
    // moment so that a waiter at its deadline still reads once.
    let deadline = wait.until.max(Instant::now() + Duration::from_millis(200));
    let replies: Vec<Value> = redis
        .run("single flight", deadline, |mut conn| async move {
            let mut invocation = CLAIM.key(wait.lock);
            for key in wait.values {
                invocation.key(key);
            }
            invocation
                .arg(token)
                .arg(lease_ms)
                .arg(wait.max_len)
                .invoke_async(&mut conn)
                .await
        })
        .await?;
    let mut replies = replies.into_iter();
    let lock = match (replies.next(), replies.next().map(guarded_of)) {
        (Some(Value::Int(1)), Some(Some(Guarded::Missing))) => Lock::Ours,
        (Some(Value::Int(0)), Some(Some(Guarded::Value(value)))) => Lock::Theirs(Some(value)),
        (Some(Value::Int(0)), Some(Some(Guarded::Refused(_)))) => Lock::Theirs(None),
        _ => return Err(redis.bad_reply("single flight")),
    };
    let replies: Vec<Value> = replies.collect();
    let values = guarded_values(redis, wait.values, replies, wait.max_len)
        .ok_or_else(|| redis.bad_reply("single flight"))?;
    Ok((lock, values))
}

/// Reads `names` in one round trip, each within `max_len` bytes; `None` for
/// a missing or refused value.
pub(crate) async fn read_guarded(
    redis: &Arc<Redis>,
    names: &[String],
    max_len: u64,
    deadline: Instant,
) -> Result<Vec<Option<Vec<u8>>>, Unavailable> {
    let replies: Vec<Value> = redis
        .run("read entry", deadline, |mut conn| async move {
            let mut invocation = READ.arg(max_len);
            for name in names {
                invocation.key(name);
            }
            invocation.invoke_async(&mut conn).await
        })
        .await?;
    guarded_values(redis, names, replies, max_len).ok_or_else(|| redis.bad_reply("read entry"))
}

/// The values of a guarded read of `names`; one refused for its length or
/// type is logged, deleted in the background, and read as missing. `None`
/// when the reply does not have the script's shape.
fn guarded_values(
    redis: &Arc<Redis>,
    names: &[String],
    replies: Vec<Value>,
    max_len: u64,
) -> Option<Vec<Option<Vec<u8>>>> {
    if replies.len() != names.len() {
        return None;
    }
    let mut values = Vec::with_capacity(names.len());
    for (name, reply) in names.iter().zip(replies) {
        match guarded_of(reply)? {
            Guarded::Missing => values.push(None),
            Guarded::Value(bytes) => values.push(Some(bytes)),
            Guarded::Refused(length) => {
                let why = if length < 0 {
                    "not a string".to_owned()
                } else {
                    format!("{length} bytes, more than the {max_len} a call writes")
                };
                tracing::warn!(
                    event = "fleet_value_refused",
                    key = %name,
                    reason = %why,
                    "fleet: a value in Redis was refused unread ({why}); it is deleted"
                );
                delete_later(redis, name);
                values.push(None);
            }
        }
    }
    Some(values)
}

/// What a guarded read gave for one key.
#[derive(Debug, PartialEq, Eq)]
enum Guarded {
    Missing,
    Value(Vec<u8>),
    /// Its length (more than the limit), or -1: not a string.
    Refused(i64),
}

/// One value of a guarded read; `None` when the reply is none of its shapes.
fn guarded_of(value: Value) -> Option<Guarded> {
    match value {
        Value::Nil => Some(Guarded::Missing),
        Value::BulkString(bytes) => Some(Guarded::Value(bytes)),
        Value::Int(length) => Some(Guarded::Refused(length)),
        _ => None,
    }
}

/// Deletes `name` in the background, best effort: a value the fleet did not
/// write, or can not read (a writer racing this delete only costs a refetch).
pub(crate) fn delete_later(redis: &Arc<Redis>, name: &str) {
    let (redis, name) = (Arc::clone(redis), name.to_owned());
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        let deadline = Instant::now() + super::conn::OP_TIMEOUT;
        let _ = redis
            .run("delete value", deadline, |mut conn| async move {
                redis::cmd("DEL")
                    .arg(&name)
                    .query_async::<i64>(&mut conn)
                    .await
            })
            .await;
    });
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
    fn guarded_replies_are_values_missing_or_refused() {
        assert_eq!(guarded_of(Value::Nil), Some(Guarded::Missing));
        assert_eq!(
            guarded_of(Value::BulkString(b"x".to_vec())),
            Some(Guarded::Value(b"x".to_vec()))
        );
        assert_eq!(guarded_of(Value::Int(3)), Some(Guarded::Refused(3)));
        assert_eq!(guarded_of(Value::Int(-1)), Some(Guarded::Refused(-1)));
        assert_eq!(guarded_of(Value::Array(vec![])), None);
        assert_eq!(guarded_of(Value::Okay), None);
    }

    #[test]
    fn tokens_differ() {
        assert_ne!(new_token(), new_token());
        assert_eq!(new_token().len(), 32);
    }
}
