//! Second-precision UTC timestamps in the one format the SRD allows
//! (FR-WF-RESP-TIME-01, FR-WF-CCH-TS-01): `YYYY-MM-DDTHH:MM:SSZ`.
//!
//! The response's `fetched_at` and the cache's `fetched_at`, `expires_at` and
//! `last_accessed_at` all use [`Timestamp`], so writing and reading agree byte for
//! byte and ordering is plain integer ordering (deterministic LRU order). The
//! form is fixed width (20 bytes), so the cache rewrites `last_accessed_at` in
//! place.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::BorrowedFormatItem;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime};

/// A UTC instant with whole-second precision, between years 0000 and 9999 (the
/// years RFC 3339's four-digit field can write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// A string that is not a canonical timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an RFC 3339 UTC timestamp with second precision (YYYY-MM-DDTHH:MM:SSZ)")]
pub struct TimestampError;

/// 0000-01-01T00:00:00Z.
const MIN_SECONDS: i64 = -62_167_219_200;
/// 9999-12-31T23:59:59Z.
const MAX_SECONDS: i64 = 253_402_300_799;

impl Timestamp {
    /// The current time, fraction of a second dropped (FR-WF-CCH-TS-02: callers take
    /// it when the fetch and extraction complete).
    pub fn now() -> Timestamp {
        Timestamp(OffsetDateTime::now_utc().unix_timestamp())
    }

    /// The instant `seconds` after the Unix epoch, if within years 0000..=9999.
    pub fn from_unix_seconds(seconds: i64) -> Option<Timestamp> {
        (MIN_SECONDS..=MAX_SECONDS)
            .contains(&seconds)
            .then_some(Timestamp(seconds))
    }

    /// Seconds since the Unix epoch.
    pub fn unix_seconds(self) -> i64 {
        self.0
    }

    /// `self + seconds`, if still representable (e.g. a cache entry's `expires_at`).
    pub fn checked_add_seconds(self, seconds: u64) -> Option<Timestamp> {
        i64::try_from(seconds)
            .ok()
            .and_then(|s| self.0.checked_add(s))
            .and_then(Timestamp::from_unix_seconds)
    }

    /// `at` truncated to whole seconds, for the cache's `fetched_at` and
    /// `last_accessed_at` (FR-WF-CCH-TS-01): the fraction is dropped, never rounded
    /// up, so a timestamp is never later than the instant it came from. An instant
    /// before year 0000 (the `time` crate reaches year -9999) clamps to
    /// 0000-01-01T00:00:00Z, so every instant has a writable form.
    pub(crate) fn from_datetime(at: OffsetDateTime) -> Timestamp {
        Timestamp::saturating_from_unix_seconds(at.unix_timestamp())
    }

    /// The instant `seconds` after the Unix epoch, clamped to years 0000..=9999.
    /// For file mtimes, which the cache reads back as `last_accessed_at` and which
    /// can be anything, before 1970 or far in the future: an out-of-range mtime
    /// still orders as oldest or newest for LRU (FR-WF-CCH-LRU-01).
    pub(crate) fn saturating_from_unix_seconds(seconds: i64) -> Timestamp {
        Timestamp(seconds.clamp(MIN_SECONDS, MAX_SECONDS))
    }

    /// `self + days`, saturating at 9999-12-31T23:59:59Z: a cache entry's
    /// `expires_at = fetched_at + cache_ttl_days` (FR-WF-16d) always has a writable
    /// form, and a saturated one simply never expires.
    pub(crate) fn plus_days(self, days: u32) -> Timestamp {
        Timestamp::saturating_from_unix_seconds(self.0.saturating_add(i64::from(days) * 86_400))
    }

    /// The instant as a UTC date-time, e.g. a cache hit's original `fetched_at`
    /// (FR-WF-17a, FR-WF-CCH-TS-01).
    pub(crate) fn to_datetime(self) -> OffsetDateTime {
        // Years 0000..=9999 are within the `time` crate's range by construction, so
        // the fallback is never taken.
        OffsetDateTime::from_unix_timestamp(self.0).unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }

    /// Parses exactly `YYYY-MM-DDTHH:MM:SSZ`: no fraction, no offset other than `Z`,
    /// no lowercase, no leap second.
    pub fn parse(text: &str) -> Result<Timestamp, TimestampError> {
        // `time`'s parser accepts more than the one form the SRD allows (a sign
        // before the year, for one), so the shape is checked first.
        let shape_ok = text.len() == 20
            && text.bytes().enumerate().all(|(i, c)| match i {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'Z',
                _ => c.is_ascii_digit(),
            });
        if !shape_ok {
            return Err(TimestampError);
        }
        PrimitiveDateTime::parse(text, FORMAT)
            .map(|at| Timestamp(at.assume_utc().unix_timestamp()))
            .map_err(|_| TimestampError)
    }
}

/// The one form of FR-WF-RESP-TIME-01: the offset is always `Z`, so it is a
/// literal, and a [`PrimitiveDateTime`] read with it is UTC.
const FORMAT: &[BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // In range by construction (years 0000..=9999), so neither step fails.
        let text = self.to_datetime().format(FORMAT).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Timestamp::parse(s)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    /// The wire form: `YYYY-MM-DDTHH:MM:SSZ` (FR-WF-RESP-TIME-01).
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
            "description": "UTC, to the second (RFC 3339 with Z)"
        })
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn fr_wf_resp_time_01_format_round_trips() {
        let t = Timestamp::parse("2026-01-10T12:00:00Z").unwrap();
        assert_eq!(t.unix_seconds(), 1_768_046_400);
        assert_eq!(t.to_string(), "2026-01-10T12:00:00Z");
        for s in [
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "2024-02-29T23:59:59Z",
        ] {
            assert_eq!(Timestamp::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(
            Timestamp::from_unix_seconds(0).unwrap().to_string(),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            "\"2026-01-10T12:00:00Z\""
        );
        let back: Timestamp = serde_json::from_str("\"2026-01-10T12:00:00Z\"").unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn fr_wf_cch_ts_01_only_the_canonical_form_parses() {
        for bad in [
            "",
            "2026-01-10T12:00:00.5Z",
            "2026-01-10T12:00:00+00:00",
            "2026-01-10t12:00:00z",
            "2026-01-10 12:00:00Z",
            "2026-13-10T12:00:00Z",
            "2026-02-30T12:00:00Z",
            "2026-01-10T24:00:00Z",
            "2026-01-10T12:00:60Z",
            "+026-01-10T12:00:00Z",
            "２026-01-10T12:00:00Z",
            "2026-01-10T12:00:00",
            "2026-01-10T25:00:00Z",
            "+2026-01-10T12:00:0Z",
            "２０２６-01-10T12:00:00Z",
        ] {
            assert_eq!(Timestamp::parse(bad), Err(TimestampError), "{bad:?}");
        }
        assert!(serde_json::from_str::<Timestamp>("\"2026-01-10T12:00:00.000Z\"").is_err());
    }

    #[test]
    fn range_and_arithmetic() {
        assert!(Timestamp::from_unix_seconds(MAX_SECONDS + 1).is_none());
        assert!(Timestamp::from_unix_seconds(MIN_SECONDS - 1).is_none());
        let t = Timestamp::parse("2026-01-10T12:00:00Z").unwrap();
        assert_eq!(
            t.checked_add_seconds(86_400).unwrap().to_string(),
            "2026-01-11T12:00:00Z"
        );
        assert!(t.checked_add_seconds(u64::MAX).is_none());
        assert!(t < t.checked_add_seconds(1).unwrap());
        let now = Timestamp::now();
        assert_eq!(Timestamp::parse(&now.to_string()), Ok(now));
    }

    #[test]
    fn fr_wf_cch_ts_01_from_datetime_truncates_to_utc_seconds() {
        let at = datetime!(2026-01-10 12:00:00.987 UTC);
        assert_eq!(
            Timestamp::from_datetime(at).to_string(),
            "2026-01-10T12:00:00Z"
        );
        let offset = datetime!(2026-01-10 14:00:00 +02:00);
        assert_eq!(
            Timestamp::from_datetime(offset).to_string(),
            "2026-01-10T12:00:00Z"
        );
        // Before 1970 the fraction is dropped towards the past too.
        let before = datetime!(1969-12-31 23:59:59.5 UTC);
        assert_eq!(Timestamp::from_datetime(before).unix_seconds(), -1);
        // Instants before year 0000 clamp to the first writable one.
        let ancient = datetime!(-0001-06-01 00:00:00 UTC);
        assert_eq!(
            Timestamp::from_datetime(ancient).to_string(),
            "0000-01-01T00:00:00Z"
        );
        let t = Timestamp::parse("2026-01-10T12:00:00Z").unwrap();
        assert_eq!(t.to_datetime(), datetime!(2026-01-10 12:00:00 UTC));
        assert_eq!(Timestamp::from_datetime(t.to_datetime()), t);
        for edge in ["0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            let t = Timestamp::parse(edge).unwrap();
            assert_eq!(Timestamp::from_datetime(t.to_datetime()), t);
        }
    }

    #[test]
    fn fr_wf_16d_plus_days_adds_and_saturates() {
        let at = Timestamp::parse("2026-12-31T23:59:59Z").unwrap();
        assert_eq!(at.plus_days(7).to_string(), "2027-01-07T23:59:59Z");
        assert_eq!(at.plus_days(0), at);
        assert!(at < at.plus_days(1));
        let late = Timestamp::parse("9999-12-30T00:00:00Z").unwrap();
        assert_eq!(late.plus_days(7).to_string(), "9999-12-31T23:59:59Z");
        assert_eq!(at.plus_days(u32::MAX).to_string(), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn saturating_from_unix_seconds_clamps_and_keeps_order() {
        for s in [0, 1, -86_400, MIN_SECONDS, MAX_SECONDS] {
            assert_eq!(
                Timestamp::saturating_from_unix_seconds(s),
                Timestamp::from_unix_seconds(s).unwrap()
            );
        }
        let min = Timestamp::from_unix_seconds(MIN_SECONDS).unwrap();
        let max = Timestamp::from_unix_seconds(MAX_SECONDS).unwrap();
        assert_eq!(Timestamp::saturating_from_unix_seconds(i64::MIN), min);
        assert_eq!(
            Timestamp::saturating_from_unix_seconds(MIN_SECONDS - 1),
            min
        );
        assert_eq!(
            Timestamp::saturating_from_unix_seconds(MAX_SECONDS + 1),
            max
        );
        assert_eq!(Timestamp::saturating_from_unix_seconds(i64::MAX), max);
        // Every value has the fixed 20-byte form the cache rewrites in place.
        for t in [min, max, Timestamp::saturating_from_unix_seconds(-1)] {
            assert_eq!(t.to_string().len(), 20, "{t}");
        }
        assert_eq!(
            Timestamp::saturating_from_unix_seconds(-1).to_string(),
            "1969-12-31T23:59:59Z"
        );
    }
}
