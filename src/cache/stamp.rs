//! Cache timestamps: RFC 3339, UTC, second precision, `Z` suffix only
//! (FR-WF-CCH-TS-01).
//!
//! The text form is [`Timestamp`]'s, the one codec of the crate, so the response
//! and the cache agree byte for byte; this wrapper adds the arithmetic the cache
//! needs. The form is fixed width, so entries keep their size when
//! `last_accessed_at` is rewritten in place.

use time::OffsetDateTime;

use crate::output::Timestamp;

/// A second-precision UTC instant, kept as Unix seconds so comparisons are exact
/// and sub-second noise in `now` cannot reorder entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Stamp(i64);

impl Stamp {
    /// Truncates to whole seconds (never rounds up, so a stamp is never in the
    /// future of the instant it came from).
    pub(crate) fn from_datetime(at: OffsetDateTime) -> Stamp {
        Stamp(at.unix_timestamp())
    }

    pub(crate) fn from_unix(seconds: i64) -> Stamp {
        Stamp(seconds)
    }

    pub(crate) fn unix(self) -> i64 {
        self.0
    }

    /// The instant, in UTC; `None` only for values outside the `time` crate's range.
    pub(crate) fn to_datetime(self) -> Option<OffsetDateTime> {
        OffsetDateTime::from_unix_timestamp(self.0).ok()
    }

    /// `self + days` (FR-WF-16d: `expires_at = fetched_at + cache_ttl_days`).
    pub(crate) fn plus_days(self, days: u32) -> Stamp {
        Stamp(self.0.saturating_add(i64::from(days) * 86_400))
    }

    /// The RFC 3339 text; `None` when the year has no four-digit form.
    pub(crate) fn format(self) -> Option<String> {
        Timestamp::from_unix_seconds(self.0).map(|t| t.to_string())
    }

    /// Parses exactly the form [`Stamp::format`] writes: no offset other than `Z`, no
    /// fractional seconds, no lowercase `t`/`z`.
    pub(crate) fn parse(text: &str) -> Option<Stamp> {
        Timestamp::parse(text).ok().map(|t| Stamp(t.unix_seconds()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn formats_second_precision_with_z() {
        let at = datetime!(2026-01-10 12:00:00.987 UTC);
        assert_eq!(
            Stamp::from_datetime(at).format().as_deref(),
            Some("2026-01-10T12:00:00Z")
        );
        let offset = datetime!(2026-01-10 14:00:00 +02:00);
        assert_eq!(
            Stamp::from_datetime(offset).format().as_deref(),
            Some("2026-01-10T12:00:00Z")
        );
    }

    #[test]
    fn parse_accepts_only_the_strict_form() {
        let good = Stamp::parse("2026-01-10T12:00:00Z").unwrap();
        assert_eq!(good.to_datetime(), Some(datetime!(2026-01-10 12:00:00 UTC)));
        for bad in [
            "",
            "2026-01-10T12:00:00",
            "2026-01-10T12:00:00.5Z",
            "2026-01-10T12:00:00+00:00",
            "2026-01-10t12:00:00z",
            "2026-01-10 12:00:00Z",
            "2026-13-10T12:00:00Z",
            "2026-02-30T12:00:00Z",
            "2026-01-10T25:00:00Z",
            "+2026-01-10T12:00:0Z",
            "２０２６-01-10T12:00:00Z",
        ] {
            assert_eq!(Stamp::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn round_trips_and_adds_days() {
        let at = Stamp::parse("2026-12-31T23:59:59Z").unwrap();
        assert_eq!(at.format().as_deref(), Some("2026-12-31T23:59:59Z"));
        assert_eq!(
            at.plus_days(7).format().as_deref(),
            Some("2027-01-07T23:59:59Z")
        );
        assert!(at < at.plus_days(1));
    }
}
