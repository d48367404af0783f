//! The limit rule of eviction, pure: whether one more entry fits both budgets
//! (FR-WF-16e, FR-WF-16f, FR-WF-CCH-EVICT-01, FR-WF-CCH-SIZE-02).

use super::ledger::Counts;

/// The two budgets of FR-WF-16e and FR-WF-16f.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// `max_cache_entries`, at least 1 when caching is enabled.
    pub(crate) max_entries: u64,
    /// `max_cache_bytes`.
    pub(crate) max_bytes: u64,
}

/// Whether writing an entry of `incoming` bytes, replacing one of `old` bytes if
/// there is one, keeps both limits with the directory at `counts`
/// (FR-WF-CCH-EVICT-01's loop condition, evaluated for the state after the write,
/// so eviction happens before writing as FR-WF-16e asks). The entry being replaced
/// does not count against the room needed.
pub(crate) fn fits(counts: Counts, old: Option<u64>, incoming: u64, limits: Limits) -> bool {
    let entries = counts
        .entries
        .saturating_sub(u64::from(old.is_some()))
        .saturating_add(1);
    let bytes = counts
        .bytes
        .saturating_sub(old.unwrap_or(0))
        .saturating_add(incoming);
    entries <= limits.max_entries && bytes <= limits.max_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_entries: 2,
        max_bytes: 100,
    };

    fn counts(entries: u64, bytes: u64) -> Counts {
        Counts { entries, bytes }
    }

    #[test]
    fn fits_checks_both_limits_after_the_write() {
        assert!(fits(counts(0, 0), None, 100, LIMITS));
        assert!(!fits(counts(0, 0), None, 101, LIMITS));
        assert!(fits(counts(1, 60), None, 40, LIMITS));
        assert!(!fits(counts(1, 60), None, 41, LIMITS), "byte limit");
        assert!(!fits(counts(2, 61), None, 0, LIMITS), "entry limit");
    }

    #[test]
    fn the_replaced_entry_makes_room() {
        assert!(fits(counts(2, 100), Some(50), 50, LIMITS));
        assert!(!fits(counts(2, 100), Some(50), 51, LIMITS));
        // Counts that ran low by hand never underflow.
        assert!(fits(counts(0, 0), Some(50), 10, LIMITS));
    }
}
