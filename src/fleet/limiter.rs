//! Fleet-wide politeness on Redis (issue 32, item 4): the requests in flight per
//! origin and the holds after a 429 or a 503 with `Retry-After`, for every
//! instance. The rules are `politeness::rules`; this is their Redis state.
//!
//! Per origin, `{prefix}inflight:{origin}` is a sorted set of slot tokens scored
//! by the time (unix ms) their lease ends, and `{prefix}hold:{origin}` a key
//! that lives as long as the hold. One script admits a request atomically:
//! refuse while the hold key lives, drop expired slots, take a slot if fewer
//! than the limit remain. A slot is given back by `ZREM`; a slot whose instance
//! died leaves at its lease's end. Instances' clocks need only agree to within
//! a fraction of a lease.

use std::sync::{Arc, LazyLock};
use std::time::{Duration, SystemTime};

use redis::{Script, Value};
use tokio::time::Instant;

use super::conn::{Redis, Unavailable};
use super::flight::new_token;
use crate::canonical_url::Origin;
use crate::politeness::Seen;

/// KEYS: inflight set, hold key. ARGV: now (unix ms), lease end (unix ms),
/// limit, token. Returns `{1, 0}` admitted, `{2, ms}` held for ms, `{0, 0}`
/// full.
static ADMIT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local held = redis.call('PTTL', KEYS[2]) \
         if held > 0 then return {2, held} end \
         redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1]) \
         if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then \
           redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4]) \
           local ttl = tonumber(ARGV[2]) - tonumber(ARGV[1]) \
           if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end \
           return {1, 0} end \
         return {0, 0}",
    )
});

/// KEYS: hold key. ARGV: ms. Sets the hold unless a longer one is running.
static HOLD: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then \
           redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end return 1",
    )
});

/// How long a slot outlives the request's budget before it is taken back
/// from an instance that died holding it.
const LEASE_MARGIN: Duration = Duration::from_secs(2);

/// The Redis side of the politeness limit.
#[derive(Debug, Clone)]
pub(crate) struct Limiter {
    redis: Arc<Redis>,
    prefix: String,
    limit: u32,
}

/// A slot taken in Redis: its token.
#[derive(Debug)]
pub(crate) struct SharedSlot {
    token: String,
}

impl Limiter {
    /// At most `limit` requests in flight per origin across the fleet.
    pub(crate) fn new(redis: Arc<Redis>, prefix: &str, limit: u32) -> Limiter {
        Limiter {
            redis,
            prefix: prefix.to_owned(),
            limit: limit.max(1),
        }
    }

    fn keys(&self, origin: &Origin) -> (String, String) {
        (
            format!("{}inflight:{origin}", self.prefix),
            format!("{}hold:{origin}", self.prefix),
        )
    }

    /// Tries to take a slot of `origin` for a request whose budget ends at
    /// `deadline`.
    pub(crate) async fn try_admit(
        &self,
        origin: &Origin,
        deadline: Instant,
    ) -> Result<(Seen, Option<SharedSlot>), Unavailable> {
        let (inflight, hold) = self.keys(origin);
        let now_ms = unix_ms(SystemTime::now());
        let lease = deadline.saturating_duration_since(Instant::now()) + LEASE_MARGIN;
        let until_ms = now_ms.saturating_add(u64::try_from(lease.as_millis()).unwrap_or(0));
        let token = new_token();
        let (limit, token_ref) = (self.limit, &token);
        // Even a request at its deadline asks once (it is then refused).
        let op_deadline = deadline.max(Instant::now() + Duration::from_millis(200));
        let reply: Value = self
            .redis
            .run("admit request", op_deadline, |mut conn| async move {
                ADMIT
                    .key(&inflight)
                    .key(&hold)
                    .arg(now_ms)
                    .arg(until_ms)
                    .arg(limit)
                    .arg(token_ref)
                    .invoke_async(&mut conn)
                    .await
            })
            .await?;
        match parse_admit(&reply) {
            Some(Seen::Admitted) => Ok((Seen::Admitted, Some(SharedSlot { token }))),
            Some(seen) => Ok((seen, None)),
            None => Err(self.redis.bad_reply("admit request")),
        }
    }

    /// Gives a slot back, in the background.
    pub(crate) fn release(&self, origin: &Origin, slot: SharedSlot) {
        let (inflight, _) = self.keys(origin);
        let redis = Arc::clone(&self.redis);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let deadline = Instant::now() + super::conn::OP_TIMEOUT;
            let _ = redis
                .run("release slot", deadline, |mut conn| async move {
                    redis::cmd("ZREM")
                        .arg(&inflight)
                        .arg(&slot.token)
                        .query_async::<i64>(&mut conn)
                        .await
                })
                .await;
        });
    }

    /// Holds `origin` for `hold` across the fleet, unless a longer hold runs.
    pub(crate) async fn hold(&self, origin: &Origin, hold: Duration) -> Result<(), Unavailable> {
        let (_, key) = self.keys(origin);
        let ms = u64::try_from(hold.as_millis()).unwrap_or(u64::MAX).max(1);
        let deadline = Instant::now() + super::conn::OP_TIMEOUT;
        self.redis
            .run("hold origin", deadline, |mut conn| async move {
                HOLD.key(&key).arg(ms).invoke_async::<i64>(&mut conn).await
            })
            .await
            .map(|_| ())
    }
}

/// The admit script's reply; `None` when it is not one of its three shapes.
fn parse_admit(reply: &Value) -> Option<Seen> {
    let Value::Array(items) = reply else {
        return None;
    };
    let (code, ms) = match items.as_slice() {
        [Value::Int(code), Value::Int(ms)] => (*code, *ms),
        _ => return None,
    };
    match code {
        1 => Some(Seen::Admitted),
        0 => Some(Seen::Full),
        2 => Some(Seen::Held(Duration::from_millis(u64::try_from(ms).ok()?))),
        _ => None,
    }
}

fn unix_ms(now: SystemTime) -> u64 {
    now.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admit_replies_are_read_strictly() {
        let reply = |code, ms| Value::Array(vec![Value::Int(code), Value::Int(ms)]);
        assert_eq!(parse_admit(&reply(1, 0)), Some(Seen::Admitted));
        assert_eq!(parse_admit(&reply(0, 0)), Some(Seen::Full));
        assert_eq!(
            parse_admit(&reply(2, 1500)),
            Some(Seen::Held(Duration::from_millis(1500)))
        );
        assert_eq!(parse_admit(&reply(2, -1)), None);
        assert_eq!(parse_admit(&reply(7, 0)), None);
        assert_eq!(parse_admit(&Value::Int(1)), None);
        assert_eq!(parse_admit(&Value::Array(vec![Value::Int(1)])), None);
    }
}
