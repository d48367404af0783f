//! Waiting for an event while the code under test runs: every
//! wait in these tests also ends when a call under test returns, and then fails
//! with what that call returned, instead of waiting for an event that can no
//! longer come.

use std::fmt::Debug;
use std::future::Future;

use tokio::task::JoinHandle;

/// Waits for `event` while `calls` run: `[&mut call]` or `calls.iter_mut()`.
/// Returns what `event` gave once it happened; if a call ends first, fails the
/// test with what that call returned. The calls are left running, to be awaited
/// afterwards.
///
/// # Panics
///
/// When a call ends (or panics) before `event`, or there is no call.
pub(crate) async fn until<'a, E, T: Debug + 'a>(
    event: impl Future<Output = E>,
    calls: impl IntoIterator<Item = &'a mut JoinHandle<T>>,
) -> E {
    let ended = futures_util::future::select_all(calls);
    tokio::select! {
        happened = event => happened,
        (result, index, _) = ended => {
            panic!("call {index} under test ended before the event waited for: {result:?}")
        }
    }
}
