//! One time budget per fetch, shared by every hop (FR-WF-10a, FR-WF-TIMEOUT-02).
//!
//! Each stage runs under the same absolute deadline and names its phase, so a
//! timeout reports where the budget ran out (FR-WF-ERR-TIMEOUT-PHASE). There is no
//! per-hop or per-phase reset: a slow first hop leaves less time for the next one.
//! The one pause is a redirect hook's robots.txt check, which has its own budget
//! (SRD-READINGS 26): [`Budget::paused_for`] moves the deadline by its duration.

use std::future::Future;

use tokio::time::Instant;

use crate::error::{FetchError, TimeoutPhase};

/// The absolute deadline of one operation and the budget to report when it passes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    deadline: Instant,
    timeout_ms: u64,
}

impl Budget {
    /// A budget ending at `deadline`; `timeout_ms` is what `timeout` errors report
    /// (SRD-READINGS 10).
    pub(crate) fn new(deadline: Instant, timeout_ms: u64) -> Budget {
        Budget {
            deadline,
            timeout_ms,
        }
    }

    /// The `timeout` error for `phase`.
    pub(crate) fn expired(&self, phase: TimeoutPhase) -> FetchError {
        FetchError::timeout(self.timeout_ms, phase)
    }

    /// The same budget with `paused` added to its deadline: time spent on work that
    /// has a budget of its own (a redirect hop's robots.txt check,
    /// FR-WF-ROBOTS-TIMEOUT-01) is not counted against this one.
    pub(crate) fn paused_for(self, paused: std::time::Duration) -> Budget {
        Budget {
            deadline: self.deadline + paused,
            ..self
        }
    }

    /// The budget `timeout` errors report, in milliseconds.
    pub(crate) fn timeout_ms(&self) -> u64 {
        self.timeout_ms
    }

    /// The time left before the deadline; zero once it has passed.
    pub(crate) fn remaining(&self) -> std::time::Duration {
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
