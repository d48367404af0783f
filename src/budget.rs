//! The time budget of a fetch stage (FR-WF-10a, FR-WF-TIMEOUT-02): the one budget
//! type of the pipeline.
//!
//! Each stage runs under an absolute deadline and names its phase, so a timeout
//! reports where the budget ran out (FR-WF-ERR-TIMEOUT-PHASE). Within a stage there
//! is no per-hop or per-phase reset: a slow first hop leaves less time for the next
//! one. Stages with a budget of their own start a new one: robots.txt, then the
//! document (FR-WF-ROBOTS-TIMEOUT-01, SRD-READINGS 26); a redirect hop's robots.txt
//! check pauses the document's budget ([`Budget::paused_for`]).
//!
//! The readers that turn a body into Markdown run on a blocking thread under the
//! call's [`ReadBudget`], which they check inside their loops.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// What one call lets its readers spend: the call's deadline, and the call's end.
///
/// A reader (HTML, PDF, JSON, a feed, publisher Markdown) is CPU work on a
/// blocking thread that no `tokio` timeout can stop, so the readers check their
/// budget inside their own loops ([`interrupted`], [`checkpoint`]) and stop when
/// the deadline passes or the call ends: answered, timed out by its front door,
/// or abandoned by its client (the [`CallEnd`] guard dropped with the call's
/// future). The work a hostile body asks for then costs at most the call's own
/// time, never a thread that burns on after the answer.
#[derive(Debug, Clone)]
pub(crate) struct ReadBudget {
    deadline: Option<std::time::Instant>,
    timeout_ms: u64,
    ended: Arc<AtomicBool>,
}

/// Held by the call for as long as it waits on its reader; dropped (the answer
/// given, or the call's future dropped), it tells the reader to stop.
#[derive(Debug)]
#[must_use = "the reader stops as soon as this guard is dropped"]
pub(crate) struct CallEnd {
    ended: Arc<AtomicBool>,
}

impl Drop for CallEnd {
    fn drop(&mut self) {
        self.ended.store(true, Ordering::Relaxed);
    }
}

impl ReadBudget {
    /// The budget of a call ending at `deadline` (`None`: no deadline), which
    /// reports `timeout_ms` when it passes, and the guard that ends it.
    pub(crate) fn new(
        deadline: Option<std::time::Instant>,
        timeout_ms: u64,
    ) -> (ReadBudget, CallEnd) {
        let ended = Arc::new(AtomicBool::new(false));
        let budget = ReadBudget {
            deadline,
            timeout_ms,
            ended: Arc::clone(&ended),
        };
        (budget, CallEnd { ended })
    }

    /// `Ok` while the reader may go on; the error to answer with once the call
    /// ended or its deadline passed.
    pub(crate) fn check(&self) -> Result<(), FetchError> {
        if self.ended.load(Ordering::Relaxed) {
            return Err(FetchError::internal(
                "the call ended before its response was read",
            ));
        }
        match self.deadline {
            Some(deadline) if std::time::Instant::now() >= deadline => Err(self.spent()),
            _ => Ok(()),
        }
    }

    /// The `timeout` of a reader that ran out of time (phase `response`: the
    /// response is what was being read).
    fn spent(&self) -> FetchError {
        let mut error = FetchError::timeout(self.timeout_ms, TimeoutPhase::Response);
        error.message = format!(
            "reading the response took longer than the time budget ({} ms); a shorter \
             document, or a larger timeout_seconds, would help",
            self.timeout_ms
        );
        error
    }

    /// Runs `read` on this thread with this budget as the one [`interrupted`] and
    /// [`checkpoint`] check, then checks it once more: a reader that stopped
    /// because the budget ran out answers with the budget's error, whatever it
    /// returned, so a partial result is never taken for a whole one.
    pub(crate) fn run<T>(
        &self,
        read: impl FnOnce() -> Result<T, FetchError>,
    ) -> Result<T, FetchError> {
        let _entered = Entered::new(self);
        let result = read();
        self.check()?;
        result
    }

    /// [`ReadBudget::run`] on a blocking thread, off the async runtime's
    /// workers: seconds of parsing must not stall a server's other calls. The
    /// call's guard is held while this future waits, so dropping the future
    /// (the call's front door gave up on it) stops the reader at its next check.
    pub(crate) async fn run_blocking<T: Send + 'static>(
        deadline: Option<std::time::Instant>,
        timeout_ms: u64,
        read: impl FnOnce() -> Result<T, FetchError> + Send + 'static,
    ) -> Result<T, FetchError> {
        let (budget, end) = ReadBudget::new(deadline, timeout_ms);
        let span = tracing::Span::current();
        let joined = tokio::task::spawn_blocking(move || {
            let _in_call = span.enter();
            budget.run(read)
        })
        .await;
        drop(end);
        joined
            .unwrap_or_else(|join| Err(FetchError::internal(format!("the reader failed: {join}"))))
    }
}

/// How many [`interrupted`] calls pass between two readings of the clock: the
/// flag is an atomic load, the clock a system call's worth on some machines.
const CLOCK_EVERY: u32 = 256;

/// The budget [`ReadBudget::run`] entered on this thread, as its loops see it.
struct Probe {
    budget: ReadBudget,
    until_clock: Cell<u32>,
    stopped: Cell<bool>,
}

thread_local! {
    static CURRENT: RefCell<Option<Probe>> = const { RefCell::new(None) };
}

/// The thread's budget for as long as it lives; the one before it comes back
/// after, a panic included.
struct Entered {
    previous: Option<Probe>,
}

impl Entered {
    fn new(budget: &ReadBudget) -> Entered {
        let probe = Probe {
            budget: budget.clone(),
            until_clock: Cell::new(0),
            stopped: Cell::new(false),
        };
        Entered {
            previous: CURRENT.with(|slot| slot.replace(Some(probe))),
        }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|slot| *slot.borrow_mut() = previous);
    }
}

/// Whether the reader running on this thread should stop: its call ended or its
/// deadline passed. False outside [`ReadBudget::run`]. Cheap enough for inner
/// loops; once true it stays true. A loop that can not return an error breaks
/// on it: the result is thrown away by [`ReadBudget::run`].
pub(crate) fn interrupted() -> bool {
    CURRENT.with(|slot| {
        let slot = slot.borrow();
        let Some(probe) = slot.as_ref() else {
            return false;
        };
        if probe.stopped.get() {
            return true;
        }
        let stop = if probe.budget.ended.load(Ordering::Relaxed) {
            true
        } else if probe.until_clock.get() == 0 {
            probe.until_clock.set(CLOCK_EVERY);
            probe.budget.check().is_err()
        } else {
            probe.until_clock.set(probe.until_clock.get() - 1);
            false
        };
        probe.stopped.set(stop);
        stop
    })
}

/// [`interrupted`], reading the clock at this call: for a loop that wakes
/// seldom (a wait with a timeout, such as the PDF worker's), where every check
/// must see the deadline.
pub(crate) fn interrupted_now() -> bool {
    CURRENT.with(|slot| {
        if let Some(probe) = slot.borrow().as_ref() {
            probe.until_clock.set(0);
        }
    });
    interrupted()
}

/// [`interrupted`] as an error: the budget's own (`timeout`, or the call's end).
pub(crate) fn checkpoint() -> Result<(), FetchError> {
    if !interrupted() {
        return Ok(());
    }
    CURRENT.with(|slot| match slot.borrow().as_ref() {
        Some(probe) => probe.budget.check(),
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_stops_once_its_call_ends_and_answers_with_the_budgets_error() {
        let (budget, end) = ReadBudget::new(None, 5_000);
        let result = budget.run(|| {
            assert!(!interrupted());
            drop(end);
            // The flag is read at every check, the clock only every so often.
            assert!(interrupted());
            assert!(interrupted(), "once stopped, stopped");
            Ok("a partial result")
        });
        let error = result.unwrap_err();
        assert_eq!(error.code, crate::error::ErrorCode::Internal);
    }

    #[test]
    fn a_passed_deadline_is_a_response_timeout_whatever_the_reader_returned() {
        let past = std::time::Instant::now() - Duration::from_millis(1);
        let (budget, _end) = ReadBudget::new(Some(past), 1_000);
        let error = budget
            .run(|| {
                let mut checks = 0;
                while !interrupted() {
                    checks += 1;
                    // Bounded: a check that never sees the deadline fails here.
                    assert!(checks <= CLOCK_EVERY as usize + 1);
                }
                assert!(checkpoint().is_err());
                Ok(())
            })
            .unwrap_err();
        assert_eq!(error.code, crate::error::ErrorCode::Timeout);
        assert_eq!(error.details_json()["phase"], "response");
        assert_eq!(error.details_json()["timeout_ms"], 1_000);
    }

    #[test]
    fn a_check_that_reads_the_clock_sees_a_passed_deadline_at_once() {
        let soon = std::time::Instant::now() + Duration::from_millis(500);
        let (budget, _end) = ReadBudget::new(Some(soon), 500);
        let error = budget
            .run(|| {
                assert!(!interrupted(), "the clock is read at the first check");
                // Time passing, not a synchronisation: the deadline goes by.
                std::thread::sleep(Duration::from_millis(600));
                assert!(!interrupted(), "and then only every so often");
                assert!(interrupted_now());
                Ok(())
            })
            .unwrap_err();
        assert_eq!(error.code, crate::error::ErrorCode::Timeout);
    }

    #[test]
    fn outside_a_budget_nothing_is_interrupted_and_the_outer_budget_comes_back() {
        assert!(!interrupted());
        let (outer, outer_end) = ReadBudget::new(None, 0);
        let (inner, inner_end) = ReadBudget::new(None, 0);
        drop(inner_end);
        outer
            .run(|| {
                assert!(inner.run(|| Ok(interrupted())).is_err());
                assert!(!interrupted(), "the outer call goes on");
                Ok(())
            })
            .unwrap();
        drop(outer_end);
        assert!(!interrupted());
    }
}
