//! The time budget of a fetch stage (FR-WF-10a, FR-WF-TIMEOUT-02): the one budget
//! type of the pipeline.
//!
//! Each stage runs under an absolute deadline and names its phase, so a timeout
//! reports where the budget ran out (FR-WF-ERR-TIMEOUT-PHASE). Within a stage there
//! is no per-hop or per-phase reset: a slow first hop leaves less time for the next
//! one. Stages with a budget of their own start a new one: robots.txt, then the
//! document (FR-WF-ROBOTS-TIMEOUT-01, SRD-READINGS 26); a redirect hop's robots.txt
//! check pauses the document's budget ([`Budget::paused_for`]).

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{FetchError, TimeoutPhase};

/// The absolute deadline of one stage and the budget to report when it passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Budget {
    deadline: Instant,
    timeout_ms: u64,
}

impl Budget {
    /// A budget ending at `deadline`; `timeout_ms` is what `timeout` errors report
    /// (SRD-READINGS 10).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(deadline: Instant, timeout_ms: u64) -> Budget {
        Budget {
            deadline,
            timeout_ms,
        }
    }

    /// A budget of `length` starting now, reporting `length` in `timeout` errors.
    pub(crate) fn starting_now(length: Duration) -> Budget {
        Budget::new(Instant::now() + length, millis(length))
    }

    /// When the budget runs out.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The budget `timeout` errors report, in milliseconds.
    pub(crate) fn timeout_ms(&self) -> u64 {
        self.timeout_ms
    }

    /// The `timeout` error for `phase`.
    pub(crate) fn expired(&self, phase: TimeoutPhase) -> FetchError {
        FetchError::timeout(self.timeout_ms, phase)
    }

    /// The same budget with `paused` added to its deadline: time spent on work that
    /// has a budget of its own (a redirect hop's robots.txt check,
    /// FR-WF-ROBOTS-TIMEOUT-01) is not counted against this one.
    pub(crate) fn paused_for(self, paused: Duration) -> Budget {
        Budget {
            deadline: self.deadline + paused,
            ..self
        }
    }

    /// The time left before the deadline; zero once it has passed.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Whether the deadline has passed.
    pub(crate) fn is_spent(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Runs `work` until the deadline; past it, `timeout` with `phase`.
    pub(crate) async fn run<T>(
        &self,
        phase: TimeoutPhase,
        work: impl Future<Output = T>,
    ) -> Result<T, FetchError> {
        tokio::time::timeout_at(self.deadline, work)
            .await
            .map_err(|_| self.expired(phase))
    }

    /// Like [`Budget::run`] for work that itself returns a `FetchError`.
    pub(crate) async fn try_run<T>(
        &self,
        phase: TimeoutPhase,
        work: impl Future<Output = Result<T, FetchError>>,
    ) -> Result<T, FetchError> {
        self.run(phase, work).await?
    }
}

/// A duration in whole milliseconds, saturating: the unit of `timeout_ms` in
/// errors and of durations in log events.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
