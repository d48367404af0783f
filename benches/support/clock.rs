//! The calling thread's CPU clock, for the extraction, quality and WCXB
//! benches.

use std::time::{Duration, Instant};

/// `f`'s result and the time it took: this thread's CPU time where the clock
/// is there ([`thread_cpu_ns`]), else the wall clock's.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let started_cpu = thread_cpu_ns();
    let out = f();
    let time = match (started_cpu, thread_cpu_ns()) {
        (Some(from), Some(to)) => Duration::from_nanos(to.saturating_sub(from) as u64),
        _ => started.elapsed(),
    };
    (out, time)
}

/// Nanoseconds of CPU this thread has run (`CLOCK_THREAD_CPUTIME_ID`): time spent
/// waiting for a core on a shared machine is not counted, so the figures vary far
/// less with other processes' load than wall time does. (Not
/// `/proc/thread-self/schedstat`: the kernel updates that only at scheduler ticks,
/// up to 4 ms stale, which made the 1 MiB figures up to a third too low.)
#[cfg(unix)]
pub(crate) fn thread_cpu_ns() -> Option<u128> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the call's duration.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (status == 0).then(|| now.tv_sec as u128 * 1_000_000_000 + now.tv_nsec as u128)
}

#[cfg(not(unix))]
pub fn thread_cpu_ns() -> Option<u128> {
    None
}
