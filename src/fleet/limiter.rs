//! Fleet-wide politeness on Redis: the requests in flight per
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
//!
//! A hold is authenticated although Redis's Lua has no HMAC-SHA256: the client
//! computes and checks the tag, the script only moves bytes. The hold's value
//! is the time it ends (unix ms, 8 bytes big-endian) sealed with the fleet's
//! tag for the hold key ([`super::tag`]), computed by the instance that sets
//! it; the script stores it as given. The admit script returns a live hold's
//! value with its `PTTL` instead of judging it, and the client opens it: a
//! valid hold lasts until the smaller of its own end, its `PTTL` and
//! [`MAX_HOLD`] (the local cap), so a hold read from Redis is clamped as a
//! local one is, and a `PEXPIRE` on a real hold buys nothing. A value without
//! a valid tag (or already ended) is passed back to the script as the one to
//! disregard: a second run deletes it, if it is still exactly that value, and
//! admits as if no hold ran; a second forged value in a row makes the call use
//! this process's state. The hold script overwrites any hold that runs past
//! [`MAX_HOLD`], since no instance writes one.
//!
//! Slots are authenticated the same way: a slot's member is its token and the
//! end of its lease (unix ms), sealed for the in-flight key. When the origin
//! is full, the admit script returns the members it counted (at most the
//! limit, soonest-ending first) with their scores; a member without a valid
//! tag, or scored past its own lease's end, is passed back to a second run,
//! which removes it before counting. So members planted by hand can not keep
//! an origin full.

use std::sync::{Arc, LazyLock};
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use redis::{Script, Value};
use tokio::time::Instant;

use super::conn::{Redis, Unavailable};
use super::flight::new_token;
use super::tag::Sealer;
use crate::canonical_url::Origin;
use crate::politeness::rules::MAX_HOLD;
use crate::politeness::{Seen, SharedLimiter, SharedSlot};

/// KEYS: inflight set, hold key. ARGV: now (unix ms), lease end (unix ms),
/// limit, the slot's member, the hold value to disregard (empty for none),
/// then slot members to remove. Returns `{1, 0}` admitted, `{2, ms, value}`
/// held for ms (-1: no expiry) by the hold `value`, for the client to check,
/// `{0, 0, member, score, …}` full, with the members counted. A hold that is
/// not a short string, or is the value to disregard, is deleted and admission
/// goes on.
static ADMIT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local t = redis.call('TYPE', KEYS[2]).ok \
         if t ~= 'none' then \
           local v = false \
           if t == 'string' and redis.call('STRLEN', KEYS[2]) <= 256 then \
             v = redis.call('GET', KEYS[2]) end \
           if v and v ~= ARGV[5] then return {2, redis.call('PTTL', KEYS[2]), v} end \
           redis.call('DEL', KEYS[2]) \
         end \
         if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then redis.call('DEL', KEYS[1]) end \
         redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1]) \
         for i = 6, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end \
         local limit = tonumber(ARGV[3]) \
         if redis.call('ZCARD', KEYS[1]) < limit then \
           redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4]) \
           local ttl = tonumber(ARGV[2]) - tonumber(ARGV[1]) \
           if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end \
           return {1, 0} end \
         local out = {0, 0} \
         for i, x in ipairs(redis.call('ZRANGE', KEYS[1], 0, limit - 1, 'WITHSCORES')) do \
           out[i + 2] = x end \
         return out",
    )
});

/// KEYS: hold key. ARGV: ms, the sealed value, the longest hold (ms). Sets the
/// hold unless a longer one is running, or that one runs past the longest
/// hold (no instance wrote it).
static HOLD: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local left = redis.call('PTTL', KEYS[1]) \
         if left < tonumber(ARGV[1]) or left > tonumber(ARGV[3]) or left == -1 then \
           redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1]) end return 1",
    )
});

/// How long a slot outlives the request's budget before it is taken back
/// from an instance that died holding it.
const LEASE_MARGIN: Duration = Duration::from_secs(2);

/// The Redis side of the politeness limit: the fleet's [`SharedLimiter`].
#[derive(Debug, Clone)]
pub(crate) struct RedisLimiter {
    redis: Arc<Redis>,
    prefix: String,
    sealer: Sealer,
    limit: u32,
}

impl SharedLimiter for RedisLimiter {
    fn try_admit<'a>(
        &'a self,
        origin: &'a Origin,
        deadline: Instant,
    ) -> BoxFuture<'a, Option<(Seen, Option<SharedSlot>)>> {
        Box::pin(async move { self.admit(origin, deadline).await.ok() })
    }

    fn release(&self, origin: &Origin, slot: SharedSlot) {
        self.give_back(origin, slot);
    }

    fn hold<'a>(&'a self, origin: &'a Origin, hold: Duration) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let _ = self.hold_origin(origin, hold).await;
        })
    }
}

impl RedisLimiter {
    /// At most `limit` requests in flight per origin across the fleet.
    pub(crate) fn new(redis: Arc<Redis>, prefix: &str, sealer: Sealer, limit: u32) -> RedisLimiter {
        RedisLimiter {
            redis,
            prefix: prefix.to_owned(),
            sealer,
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
    /// `deadline`; the slot's token is its sealed member.
    async fn admit(
        &self,
        origin: &Origin,
        deadline: Instant,
    ) -> Result<(Seen, Option<SharedSlot>), Unavailable> {
        let (inflight, hold) = self.keys(origin);
        let now_ms = unix_ms(SystemTime::now());
        let lease = deadline.saturating_duration_since(Instant::now()) + LEASE_MARGIN;
        let until_ms = now_ms.saturating_add(u64::try_from(lease.as_millis()).unwrap_or(0));
        let member = self
            .sealer
            .seal(&inflight, &slot_payload(&new_token(), until_ms));
        let mut disregard = Disregard::default();
        // At most two runs: a forged hold or forged slots are disregarded (and
        // deleted) by the second; more of them in their place make this call
        // use local state.
        for _ in 0..2 {
            let slot = Slot {
                now_ms,
                until_ms,
                member: &member,
            };
            let reply = self
                .admit_once(&inflight, &hold, slot, &disregard, deadline)
                .await?;
            let seen = match parse_admit(reply) {
                Some(Reply::Seen(seen)) => seen,
                Some(Reply::Full(members)) => {
                    let forged: Vec<Vec<u8>> = members
                        .into_iter()
                        .filter(|(member, score)| {
                            !slot_is_valid(&self.sealer, &inflight, member, *score)
                        })
                        .map(|(member, _)| member)
                        .collect();
                    if forged.is_empty() {
                        Seen::Full
                    } else {
                        tracing::warn!(
                            event = "fleet_slots_refused",
                            origin = %origin,
                            count = forged.len(),
                            "fleet: in-flight slots in Redis without a valid tag; they are removed"
                        );
                        disregard.slots = forged;
                        continue;
                    }
                }
                Some(Reply::Held { pttl_ms, value }) => {
                    let now_ms = unix_ms(SystemTime::now());
                    match open_hold(&self.sealer, &hold, &value, now_ms) {
                        Some(end_ms) => Seen::Held(hold_left(end_ms, pttl_ms, now_ms)),
                        None => {
                            tracing::warn!(
                                event = "fleet_hold_refused",
                                origin = %origin,
                                "fleet: a hold in Redis without a valid tag, or already \
                                 ended; it is deleted"
                            );
                            disregard.hold = value;
                            continue;
                        }
                    }
                }
                None => return Err(self.redis.bad_reply("admit request")),
            };
            let slot = (seen == Seen::Admitted).then_some(SharedSlot { token: member });
            return Ok((seen, slot));
        }
        Err(Unavailable)
    }

    /// One run of [`ADMIT`] for `slot`, disregarding what `disregard` names.
    async fn admit_once(
        &self,
        inflight: &str,
        hold: &str,
        slot: Slot<'_>,
        disregard: &Disregard,
        deadline: Instant,
    ) -> Result<Value, Unavailable> {
        let limit = self.limit;
        // Even a request at its deadline asks once (it is then refused).
        let op_deadline = deadline.max(Instant::now() + Duration::from_millis(200));
        self.redis
            .run("admit request", op_deadline, |mut conn| async move {
                let mut invocation = ADMIT.key(inflight);
                invocation
                    .key(hold)
                    .arg(slot.now_ms)
                    .arg(slot.until_ms)
                    .arg(limit)
                    .arg(slot.member)
                    .arg(&disregard.hold);
                for member in &disregard.slots {
                    invocation.arg(member);
                }
                invocation.invoke_async(&mut conn).await
            })
            .await
    }

    /// Gives a slot back, in the background.
    fn give_back(&self, origin: &Origin, slot: SharedSlot) {
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
    async fn hold_origin(&self, origin: &Origin, hold: Duration) -> Result<(), Unavailable> {
        let (_, key) = self.keys(origin);
        let hold = hold.min(MAX_HOLD);
        let ms = u64::try_from(hold.as_millis()).unwrap_or(u64::MAX).max(1);
        let end_ms = unix_ms(SystemTime::now()).saturating_add(ms);
        let value = self.sealer.seal(&key, &end_ms.to_be_bytes());
        let max_ms = u64::try_from(MAX_HOLD.as_millis()).unwrap_or(u64::MAX);
        let deadline = Instant::now() + super::conn::OP_TIMEOUT;
        self.redis
            .run("hold origin", deadline, |mut conn| async move {
                HOLD.key(&key)
                    .arg(ms)
                    .arg(value)
                    .arg(max_ms)
                    .invoke_async::<i64>(&mut conn)
                    .await
            })
            .await
            .map(|_| ())
    }
}

/// The slot one admission asks for.
#[derive(Debug, Clone, Copy)]
struct Slot<'a> {
    now_ms: u64,
    /// When its lease ends (unix ms): its score.
    until_ms: u64,
    /// Its sealed member.
    member: &'a [u8],
}

/// What a second run of the admit script disregards and deletes.
#[derive(Debug, Default)]
struct Disregard {
    /// A hold value that failed its check (empty: none).
    hold: Vec<u8>,
    /// Slot members that failed theirs.
    slots: Vec<Vec<u8>>,
}

/// A slot member's payload: its token, then its lease's end (unix ms, 8
/// bytes big-endian).
fn slot_payload(token: &str, until_ms: u64) -> Vec<u8> {
    let mut payload = token.as_bytes().to_vec();
    payload.extend_from_slice(&until_ms.to_be_bytes());
    payload
}

/// Whether `member` (scored `score`) of the in-flight set `inflight` is a
/// slot an instance took: a valid tag, and a score no later than its own
/// lease's end.
fn slot_is_valid(sealer: &Sealer, inflight: &str, member: &[u8], score: f64) -> bool {
    let Some(payload) = sealer.open(inflight, member) else {
        return false;
    };
    let Some(end) = payload
        .len()
        .checked_sub(8)
        .and_then(|at| payload.get(at..))
    else {
        return false;
    };
    let Ok(end) = <[u8; 8]>::try_from(end) else {
        return false;
    };
    // Scores are doubles: whole milliseconds up to 2^53 are exact.
    score <= u64::from_be_bytes(end) as f64
}

/// The admit script's reply, as read.
#[derive(Debug, PartialEq)]
enum Reply {
    /// Admitted.
    Seen(Seen),
    /// Full: the members counted, with their scores.
    Full(Vec<(Vec<u8>, f64)>),
    /// A hold runs: its `PTTL` (ms, -1 without expiry) and its value, to be
    /// checked.
    Held { pttl_ms: i64, value: Vec<u8> },
}

/// The admit script's reply; `None` when it is not one of its three shapes.
fn parse_admit(reply: Value) -> Option<Reply> {
    let Value::Array(items) = reply else {
        return None;
    };
    match items.as_slice() {
        [Value::Int(1), Value::Int(0)] => Some(Reply::Seen(Seen::Admitted)),
        [Value::Int(0), Value::Int(0), members @ ..] => {
            let mut counted = Vec::with_capacity(members.len() / 2);
            for pair in members.chunks(2) {
                let [Value::BulkString(member), score] = pair else {
                    return None;
                };
                let score = match score {
                    Value::BulkString(text) => std::str::from_utf8(text).ok()?.parse().ok()?,
                    Value::Double(score) => *score,
                    Value::Int(score) => *score as f64,
                    _ => return None,
                };
                counted.push((member.clone(), score));
            }
            Some(Reply::Full(counted))
        }
        [Value::Int(2), Value::Int(pttl_ms), Value::BulkString(value)] => Some(Reply::Held {
            pttl_ms: *pttl_ms,
            value: value.clone(),
        }),
        _ => None,
    }
}

/// The end (unix ms) of the hold `value` read at `hold`, if its tag is valid
/// for that key and it has not ended by `now_ms`.
fn open_hold(sealer: &Sealer, hold: &str, value: &[u8], now_ms: u64) -> Option<u64> {
    let payload = sealer.open(hold, value)?;
    let end_ms = u64::from_be_bytes(payload.try_into().ok()?);
    (end_ms > now_ms).then_some(end_ms)
}

/// How long a valid hold ending at `end_ms` still holds at `now_ms`: until its
/// own end or its `PTTL` (`-1`: none), whichever is sooner, and never more than
/// [`MAX_HOLD`], as a local hold.
fn hold_left(end_ms: u64, pttl_ms: i64, now_ms: u64) -> Duration {
    let by_end = Duration::from_millis(end_ms.saturating_sub(now_ms));
    let by_ttl = u64::try_from(pttl_ms).map_or(by_end, Duration::from_millis);
    by_end.min(by_ttl).min(MAX_HOLD)
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
        assert_eq!(parse_admit(reply(1, 0)), Some(Reply::Seen(Seen::Admitted)));
        assert_eq!(parse_admit(reply(0, 0)), Some(Reply::Full(Vec::new())));
        let full = Value::Array(vec![
            Value::Int(0),
            Value::Int(0),
            Value::BulkString(b"m".to_vec()),
            Value::BulkString(b"1700000000000".to_vec()),
        ]);
        assert_eq!(
            parse_admit(full),
            Some(Reply::Full(vec![(b"m".to_vec(), 1_700_000_000_000.0)]))
        );
        let torn = Value::Array(vec![
            Value::Int(0),
            Value::Int(0),
            Value::BulkString(b"m".to_vec()),
        ]);
        assert_eq!(parse_admit(torn), None);
        let held = Value::Array(vec![
            Value::Int(2),
            Value::Int(1500),
            Value::BulkString(b"v".to_vec()),
        ]);
        assert_eq!(
            parse_admit(held),
            Some(Reply::Held {
                pttl_ms: 1500,
                value: b"v".to_vec()
            })
        );
        assert_eq!(
            parse_admit(reply(2, 1500)),
            None,
            "a hold without its value"
        );
        assert_eq!(parse_admit(reply(7, 0)), None);
        assert_eq!(parse_admit(Value::Int(1)), None);
        assert_eq!(parse_admit(Value::Array(vec![Value::Int(1)])), None);
    }

    #[test]
    fn a_slot_counts_only_with_its_tag_and_its_own_lease_end() {
        use crate::config::FleetKey;
        let key = FleetKey::from_file_bytes(b"0123456789abcdef0123456789abcdef").unwrap();
        let sealer = Sealer::new(Some(&key));
        let inflight = "w:inflight:https://e.example";
        let until = 1_700_000_000_000u64;
        let member = sealer.seal(inflight, &slot_payload(&new_token(), until));
        assert!(slot_is_valid(&sealer, inflight, &member, until as f64));
        assert!(slot_is_valid(
            &sealer,
            inflight,
            &member,
            (until - 5) as f64
        ));
        assert!(
            !slot_is_valid(&sealer, inflight, &member, (until + 1) as f64),
            "rescored"
        );
        assert!(!slot_is_valid(
            &sealer,
            "w:inflight:other",
            &member,
            until as f64
        ));
        assert!(!slot_is_valid(&sealer, inflight, b"planted", 0.0));
    }

    #[test]
    fn a_hold_read_from_redis_is_clamped_like_a_local_one() {
        let now = 1_000_000;
        let ten_years_ms = 315_360_000_000;
        assert_eq!(hold_left(now + ten_years_ms, -1, now), MAX_HOLD);
        assert_eq!(
            hold_left(now + ten_years_ms, 2_000, now),
            Duration::from_secs(2)
        );
        assert_eq!(
            hold_left(now + 1_500, 60_000, now),
            Duration::from_millis(1500)
        );
        assert_eq!(
            hold_left(now + 1_500, ten_years_ms as i64, now),
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn a_hold_opens_only_with_its_tag_for_its_key_and_before_its_end() {
        use crate::config::FleetKey;
        let key = FleetKey::from_file_bytes(b"0123456789abcdef0123456789abcdef").unwrap();
        let sealer = Sealer::new(Some(&key));
        let hold = "w:hold:https://e.example";
        let now = 1_000_000u64;
        let sealed = sealer.seal(hold, &(now + 5_000).to_be_bytes());
        assert_eq!(open_hold(&sealer, hold, &sealed, now), Some(now + 5_000));
        assert_eq!(
            open_hold(&sealer, hold, &sealed, now + 5_000),
            None,
            "ended"
        );
        assert_eq!(open_hold(&sealer, "w:hold:other", &sealed, now), None);
        assert_eq!(open_hold(&sealer, hold, b"1", now), None, "planted by hand");
        let forged = Sealer::new(None).seal(hold, &(now + 5_000).to_be_bytes());
        assert_eq!(open_hold(&sealer, hold, &forged, now), None);
    }
}
