//! Waiting rules of browser mode (SRD 3.4.4) and the DOM size cap (FR-WF-11d,
//! DOMSIZE-01/02), as pure state over instants and strings.

use std::time::Duration;

use tokio::time::Instant;

/// FR-WF-11e step 1: how long the network must stay quiet.
pub(crate) const QUIET_WINDOW: Duration = Duration::from_millis(500);

/// In-flight accounting for network idle (FR-WF-11e).
///
/// Every request Chromium issues is paused by the Fetch domain and answered by us,
/// so "in flight" is exactly "paused and not yet answered": the count covers every
/// frame and worker we intercept. WebSocket handshakes are never paused (and are
/// refused), so they never count (FR-WF-11e step 3).
#[derive(Debug, Clone)]
pub(crate) struct NetworkIdle {
    in_flight: usize,
    /// When the count last became zero (or the tracker started at zero).
    quiet_since: Option<Instant>,
}

/// What the wait should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdleState {
    /// Zero requests in flight for the whole quiet window.
    Idle,
    /// Not idle yet; look again at this instant at the latest (the quiet window
    /// would end then), or when a request starts or ends.
    WaitUntil(Instant),
    /// Requests in flight; look again when one ends.
    Busy,
}

impl NetworkIdle {
    /// A tracker with nothing in flight since `now`.
    pub(crate) fn new(now: Instant) -> NetworkIdle {
        NetworkIdle {
            in_flight: 0,
            quiet_since: Some(now),
        }
    }

    /// A request was paused.
    pub(crate) fn started(&mut self) {
        self.in_flight += 1;
        self.quiet_since = None;
    }

    /// A paused request was answered (fulfilled or failed).
    pub(crate) fn finished(&mut self, now: Instant) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.in_flight == 0 {
            self.quiet_since = Some(now);
        }
    }

    /// Requests paused and not yet answered.
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The idle state at `now`. The quiet window counts from the later of the last
    /// quiet moment and `not_before` (DOMContentLoaded: FR-WF-11e waits only after
    /// navigation completes).
    pub(crate) fn state(&self, now: Instant, not_before: Instant) -> IdleState {
        match self.quiet_since {
            None => IdleState::Busy,
            Some(since) => {
                let end = since.max(not_before) + QUIET_WINDOW;
                if now >= end {
                    IdleState::Idle
                } else {
                    IdleState::WaitUntil(end)
                }
            }
        }
    }
}

/// FR-WF-11e step 2: when the idle wait gives up, `network_idle_ms` after
/// DOMContentLoaded. It is its own budget, apart from `timeout_seconds` (which
/// bounds the navigation): FR-WF-TIMEOUT-01 sizes the executor timeout as their
/// sum plus a buffer.
pub(crate) fn idle_end(dom_content_loaded: Instant, network_idle_ms: u32) -> Instant {
    dom_content_loaded + Duration::from_millis(u64::from(network_idle_ms))
}

/// FR-WF-DOMSIZE-02 step 1: cuts `html` to at most `max_bytes` UTF-8 bytes at a
/// char boundary. Returns whether anything was cut.
pub(crate) fn truncate_utf8(html: &mut String, max_bytes: usize) -> bool {
    if html.len() <= max_bytes {
        return false;
    }
    let mut cut = max_bytes;
    while !html.is_char_boundary(cut) {
        cut -= 1;
    }
    html.truncate(cut);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fr_wf_11e_idle_needs_a_full_quiet_window_after_dcl() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut idle = NetworkIdle::new(t0);
        // Quiet since t0, but the window counts from DOMContentLoaded at 100 ms.
        assert_eq!(idle.state(ms(400), ms(100)), IdleState::WaitUntil(ms(600)));
        assert_eq!(idle.state(ms(600), ms(100)), IdleState::Idle);
        idle.started();
        idle.started();
        assert_eq!(idle.state(ms(700), ms(100)), IdleState::Busy);
        idle.finished(ms(800));
        assert_eq!(idle.in_flight(), 1);
        assert_eq!(idle.state(ms(2000), ms(100)), IdleState::Busy);
        idle.finished(ms(900));
        assert_eq!(
            idle.state(ms(1399), ms(100)),
            IdleState::WaitUntil(ms(1400))
        );
        assert_eq!(idle.state(ms(1400), ms(100)), IdleState::Idle);
        // An extra answer never underflows.
        idle.finished(ms(1500));
        assert_eq!(idle.in_flight(), 0);
    }

    #[test]
    fn fr_wf_11e_idle_cap_counts_from_dcl() {
        let t0 = Instant::now();
        assert_eq!(idle_end(t0, 1000), t0 + Duration::from_millis(1000));
    }

    #[test]
    fn fr_wf_domsize_02_truncates_at_a_char_boundary() {
        let mut s = "aé日🎉".to_owned(); // 1 + 2 + 3 + 4 bytes
        assert!(!truncate_utf8(&mut s, 10));
        for (max, expected) in [
            (9, "aé日"),
            (6, "aé日"),
            (5, "aé"),
            (2, "a"),
            (1, "a"),
            (0, ""),
        ] {
            let mut s = "aé日🎉".to_owned();
            assert!(truncate_utf8(&mut s, max));
            assert_eq!(s, expected, "max {max}");
        }
    }
}
