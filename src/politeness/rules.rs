//! The politeness rules as pure decisions (extension): how long a
//! response holds its origin, and whether a request may go now, must wait, or is
//! refused. No clock is read here: callers pass "now" and what they saw.

use std::time::{Duration, SystemTime};

use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::macros::format_description;

use crate::error::PoliteRefusal;

/// The longest hold a `Retry-After` can impose: a hostile or confused origin
/// must not stop every caller for a day.
pub(crate) const MAX_HOLD: Duration = Duration::from_secs(60);

/// The hold after a 429 that names no time: a short pause, so that callers
/// retrying at once do not hammer the origin.
pub(crate) const HOLD_WITHOUT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// How often a request waiting for a free slot looks again, at most.
pub(crate) const SLOT_POLL: Duration = Duration::from_millis(50);

/// `details.reason` when a hold outlasts the budget.
pub(crate) const ORIGIN_HELD: &str = "origin_held";

/// `details.reason` when no slot freed up within the budget.
pub(crate) const ORIGIN_BUSY: &str = "origin_busy";

/// What a limiter saw when it tried to admit a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// A slot was free and is now taken by this request.
    Admitted,
    /// The origin is held for this much longer.
    Held(Duration),
    /// `per_origin_in_flight` requests are in flight.
    Full,
}

/// `seen` with a hold cut to [`MAX_HOLD`]: what a shared store reports is
/// capped as a hold this process sets is.
pub(crate) fn clamped(seen: Seen) -> Seen {
    match seen {
        Seen::Held(hold) => Seen::Held(hold.min(MAX_HOLD)),
        other => other,
    }
}

/// What to do with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Send it: it holds a slot.
    Go,
    /// Look again after this long (never past the budget).
    Wait(Duration),
    /// Do not send it: answer `http_4xx` 429 with these details.
    Refuse(PoliteRefusal),
}

/// Decides from what the limiter saw and the time `left` in the request's
/// budget. A hold longer than the budget is refused at once, without waiting for
/// nothing; a shorter one is waited out. A full origin is waited for until the
/// budget runs out.
pub(crate) fn decide(seen: Seen, left: Duration) -> Admit {
    match seen {
        Seen::Admitted => Admit::Go,
        Seen::Held(hold) if hold > left || left.is_zero() => Admit::Refuse(PoliteRefusal {
            reason: ORIGIN_HELD,
            retry_after_seconds: whole_seconds(hold),
        }),
        Seen::Held(hold) => Admit::Wait(hold),
        Seen::Full if left.is_zero() => Admit::Refuse(PoliteRefusal {
            reason: ORIGIN_BUSY,
            retry_after_seconds: 1,
        }),
        Seen::Full => Admit::Wait(SLOT_POLL.min(left)),
    }
}

/// How long a response holds its origin for every caller: a 429 for its
/// `Retry-After` (or [`HOLD_WITHOUT_RETRY_AFTER`] when it has none that
/// parses), a 503 only when it says `Retry-After`; capped at [`MAX_HOLD`].
/// `None` for anything else, and for a `Retry-After` of zero or in the past.
pub(crate) fn hold_after(
    status: u16,
    retry_after: Option<&[u8]>,
    now: SystemTime,
) -> Option<Duration> {
    let stated = retry_after.and_then(|value| parse_retry_after(value, now));
    let hold = match (status, stated) {
        (429, Some(stated)) | (503, Some(stated)) => stated,
        (429, None) => HOLD_WITHOUT_RETRY_AFTER,
        _ => return None,
    };
    (!hold.is_zero()).then(|| hold.min(MAX_HOLD))
}

/// `Retry-After` (RFC 9110 10.2.3): delay-seconds, or an HTTP-date (IMF-fixdate)
/// whose distance from `now` is the delay. `None` when it is neither.
pub(crate) fn parse_retry_after(value: &[u8], now: SystemTime) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than a u64 holds is "very long": the cap applies.
        return Some(Duration::from_secs(text.parse().unwrap_or(u64::MAX)));
    }
    const IMF_FIXDATE: &[FormatItem<'_>] = format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let when = time::PrimitiveDateTime::parse(text, IMF_FIXDATE)
        .ok()?
        .assume_utc();
    let now = OffsetDateTime::from(now);
    Some(Duration::try_from(when - now).unwrap_or(Duration::ZERO))
}

/// `d` in whole seconds, rounded up, at least 1: a retry sooner is refused.
pub(crate) fn whole_seconds(d: Duration) -> u64 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seen_hold_is_capped_like_a_local_one() {
        let ten_years = Duration::from_secs(315_360_000);
        assert_eq!(clamped(Seen::Held(ten_years)), Seen::Held(MAX_HOLD));
        assert_eq!(
            clamped(Seen::Held(Duration::from_secs(3))),
            Seen::Held(Duration::from_secs(3))
        );
        assert_eq!(clamped(Seen::Full), Seen::Full);
        assert_eq!(clamped(Seen::Admitted), Seen::Admitted);
    }

    fn at(unix: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(unix)
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        // 1994-11-06T08:49:37Z
        let now = at(784_111_777);
        let cases: [(&[u8], Option<u64>); 8] = [
            (b"120", Some(120)),
            (b" 7 ", Some(7)),
            (b"0", Some(0)),
            (b"Sun, 06 Nov 1994 08:49:47 GMT", Some(10)),
            (b"Sun, 06 Nov 1994 08:49:27 GMT", Some(0)),
            (b"-5", None),
            (b"soon", None),
            (b"\xff", None),
        ];
        for (value, want) in cases {
            assert_eq!(
                parse_retry_after(value, now).map(|d| d.as_secs()),
                want,
                "{}",
                String::from_utf8_lossy(value)
            );
        }
        assert_eq!(
            parse_retry_after(b"99999999999999999999999", now),
            Some(Duration::from_secs(u64::MAX))
        );
    }

    #[test]
    fn holds_come_from_429_and_from_503_with_retry_after_capped() {
        let now = at(1_000_000);
        let secs =
            |status, value: Option<&[u8]>| hold_after(status, value, now).map(|d| d.as_secs());
        assert_eq!(secs(429, Some(b"5")), Some(5));
        assert_eq!(secs(429, None), Some(1));
        assert_eq!(secs(429, Some(b"3600")), Some(60));
        assert_eq!(secs(429, Some(b"0")), None);
        assert_eq!(secs(429, Some(b"garbage")), Some(1));
        assert_eq!(secs(503, Some(b"5")), Some(5));
        assert_eq!(secs(503, None), None);
        assert_eq!(secs(500, Some(b"5")), None);
        assert_eq!(secs(200, Some(b"5")), None);
    }

    #[test]
    fn decisions_never_wait_past_the_budget() {
        let s = Duration::from_secs;
        assert_eq!(decide(Seen::Admitted, s(0)), Admit::Go);
        assert_eq!(decide(Seen::Held(s(2)), s(10)), Admit::Wait(s(2)));
        assert_eq!(
            decide(Seen::Held(s(30)), s(10)),
            Admit::Refuse(PoliteRefusal {
                reason: ORIGIN_HELD,
                retry_after_seconds: 30
            })
        );
        assert_eq!(
            decide(Seen::Held(Duration::from_millis(1500)), Duration::ZERO),
            Admit::Refuse(PoliteRefusal {
                reason: ORIGIN_HELD,
                retry_after_seconds: 2
            })
        );
        assert_eq!(decide(Seen::Full, s(10)), Admit::Wait(SLOT_POLL));
        assert_eq!(
            decide(Seen::Full, Duration::from_millis(10)),
            Admit::Wait(Duration::from_millis(10))
        );
        assert_eq!(
            decide(Seen::Full, Duration::ZERO),
            Admit::Refuse(PoliteRefusal {
                reason: ORIGIN_BUSY,
                retry_after_seconds: 1
            })
        );
    }

    #[test]
    fn whole_seconds_round_up_to_at_least_one() {
        assert_eq!(whole_seconds(Duration::ZERO), 1);
        assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
        assert_eq!(whole_seconds(Duration::from_millis(2001)), 3);
        assert_eq!(whole_seconds(Duration::from_secs(4)), 4);
    }
}
