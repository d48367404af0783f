//! A deadline on every wait of the tests: a test that waits for something that
//! never comes (a child's exit, a line, a message, a log line, a request) fails
//! within a bounded time, saying what it waited for, instead of hanging CI.
//!
//! The limits are generous ways out, never timing assertions: no test passes or
//! fails by how fast the code under test is, only by whether what it waits for
//! comes at all. Polling sleeps a moment between looks inside a deadline; no
//! sleep stands in for a synchronisation.

use std::fmt::{Debug, Display};
use std::future::Future;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

/// How long a test waits for anything before it calls it lost: minutes for
/// what takes seconds on a loaded two-core CI machine.
pub(crate) const WAIT: Duration = Duration::from_secs(120);

/// The pause between two looks of a polling wait.
const POLL_EVERY: Duration = Duration::from_millis(50);

/// A thread that runs `on_expiry` if it is not stopped within its limit: the
/// one mechanism behind the child deadlines here, the cost runs of
/// [`super::child_cost`] and the browser tests' hang watchdog
/// ([`super::browser_turn`]). Dropping it stops it without acting.
pub(crate) struct Watchdog {
    stop: mpsc::Sender<()>,
    fired: thread::JoinHandle<bool>,
}

impl Watchdog {
    /// Starts the watchdog: `on_expiry` runs on its thread once `limit` has
    /// passed without a stop.
    pub(crate) fn start(limit: Duration, on_expiry: impl FnOnce() + Send + 'static) -> Watchdog {
        let (stop, stopped) = mpsc::channel::<()>();
        let fired = thread::spawn(move || {
            let expired = stopped.recv_timeout(limit) == Err(RecvTimeoutError::Timeout);
            if expired {
                on_expiry();
            }
            expired
        });
        Watchdog { stop, fired }
    }

    /// Stops the watchdog; whether it had already expired (and acted).
    pub(crate) fn stop(self) -> bool {
        let Watchdog { stop, fired } = self;
        drop(stop);
        fired.join().unwrap_or(true)
    }
}

/// Waits for `child` to exit, at most `limit`: past it the child is killed and
/// the test fails, naming `what` it waited for.
pub(crate) fn wait_child(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let pid = i32::try_from(child.id()).expect("a pid fits i32");
    let watchdog = Watchdog::start(limit, move || {
        // SAFETY: a plain kill(2) of a child not yet reaped: the wait below
        // reaps it only once it exits, which this kill or its own end makes
        // happen, and the watchdog is stopped right after.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let status = child.wait().expect("wait for the child");
    assert!(
        !watchdog.stop(),
        "gave up after {limit:?} waiting for {what}: the child was killed"
    );
    status
}

/// `child.wait_with_output()` within `limit`: its stdin closed, its stdout and
/// stderr read to their ends, its exit waited for. Past the limit the child is
/// killed and the test fails, naming `what`; so does a pipe a descendant keeps
/// open after the child's exit.
pub(crate) fn output_of(mut child: Child, limit: Duration, what: &str) -> Output {
    drop(child.stdin.take());
    let stdout = child.stdout.take().map(read_to_end);
    let stderr = child.stderr.take().map(read_to_end);
    let status = wait_child(&mut child, limit, what);
    let drained = |pipe: Option<mpsc::Receiver<Vec<u8>>>, name: &str| {
        pipe.map(|rx| recv_within(&rx, limit, &format!("the end of the {name} of {what}")))
            .unwrap_or_default()
    };
    Output {
        status,
        stdout: drained(stdout, "stdout"),
        stderr: drained(stderr, "stderr"),
    }
}

/// [`Command::output`] with a deadline.
pub(crate) trait OutputWithin {
    /// `output()` within `limit`: stdin empty, stdout and stderr captured; past
    /// the limit the child is killed and the test fails, naming `what`.
    fn output_within(&mut self, limit: Duration, what: &str) -> Output;
}

impl OutputWithin for Command {
    fn output_within(&mut self, limit: Duration, what: &str) -> Output {
        let child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn for {what}: {e}"));
        output_of(child, limit, what)
    }
}

/// Reads `pipe` to its end on a thread of its own; the bytes come on the
/// channel returned.
fn read_to_end(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    rx
}

/// The next message on `rx`, waiting at most `limit`; the test fails naming
/// `what` if none comes or every sender is gone.
pub(crate) fn recv_within<T>(rx: &mpsc::Receiver<T>, limit: Duration, what: &str) -> T {
    match rx.recv_timeout(limit) {
        Ok(message) => message,
        Err(RecvTimeoutError::Timeout) => {
            panic!("gave up after {limit:?} waiting for {what}")
        }
        Err(RecvTimeoutError::Disconnected) => {
            panic!("waiting for {what}: its sender is gone, so it can not come")
        }
    }
}

/// What the thread `handle` returned, waiting at most `limit` for its end; the
/// test fails naming `what` if it runs on. A panic of the thread is the test's.
pub(crate) fn join_within<T>(handle: thread::JoinHandle<T>, limit: Duration, what: &str) -> T {
    poll_until(limit, what, || {
        handle.is_finished().then_some(()).ok_or("still running")
    });
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Looks with `look` until it finds something (`Ok`), and returns it; the test
/// fails naming `what` and what the last look saw (its `Err`) if nothing is
/// found within `limit`.
pub(crate) fn poll_until<T, E: Display>(
    limit: Duration,
    what: &str,
    mut look: impl FnMut() -> Result<T, E>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match look() {
            Ok(found) => return found,
            Err(seen) if Instant::now() >= deadline => gave_up(limit, what, &seen),
            Err(_) => thread::sleep(POLL_EVERY),
        }
    }
}

/// [`poll_until`] for a look that awaits.
pub(crate) async fn poll_until_async<T, E: Display>(
    limit: Duration,
    what: &str,
    mut look: impl AsyncFnMut() -> Result<T, E>,
) -> T {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match look().await {
            Ok(found) => return found,
            Err(seen) if tokio::time::Instant::now() >= deadline => gave_up(limit, what, &seen),
            Err(_) => tokio::time::sleep(POLL_EVERY).await,
        }
    }
}

fn gave_up(limit: Duration, what: &str, seen: &dyn Display) -> ! {
    panic!("gave up after {limit:?} waiting for {what}; last seen: {seen}")
}

/// What `future` gives, waiting at most `limit`; the test fails naming `what`
/// if it does not end in time.
pub(crate) async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, future).await {
        Ok(value) => value,
        Err(_) => panic!("gave up after {limit:?} waiting for {what}"),
    }
}

/// Waits for `event` (named by `what`) while `calls` run: `[&mut call]` or
/// `calls.iter_mut()`. Returns what `event` gave once it happened. If a call
/// ends first, fails the test with what that call returned, instead of waiting
/// for an event that can no longer come; if neither happens within [`WAIT`],
/// fails naming `what`. The calls are left running, to be awaited afterwards.
///
/// # Panics
///
/// When a call ends (or panics) before `event`, there is no call, or nothing
/// happens in time.
pub(crate) async fn until<'a, E, T: Debug + 'a>(
    what: &str,
    event: impl Future<Output = E>,
    calls: impl IntoIterator<Item = &'a mut JoinHandle<T>>,
) -> E {
    let ended = futures_util::future::select_all(calls);
    let raced = async {
        tokio::select! {
            happened = event => happened,
            (result, index, _) = ended => {
                panic!("call {index} under test ended before {what}: {result:?}")
            }
        }
    };
    within(WAIT, what, raced).await
}

#[test]
#[should_panic(expected = "gave up after 200ms waiting for a sleeper: the child was killed")]
fn a_child_past_its_deadline_is_killed_and_the_wait_names_it() {
    let mut sleeper = Command::new("sleep").arg("600").spawn().unwrap();
    wait_child(&mut sleeper, Duration::from_millis(200), "a sleeper");
}

#[test]
fn a_childs_output_is_read_to_its_end() {
    let output = Command::new("sh")
        .args(["-c", "echo out; echo err >&2; exit 3"])
        .output_within(WAIT, "a short shell");
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        (&output.stdout[..], &output.stderr[..]),
        (&b"out\n"[..], &b"err\n"[..])
    );
}

#[test]
#[should_panic(expected = "waiting for a message: its sender is gone")]
fn a_wait_on_a_channel_without_senders_fails_at_once() {
    let (_, rx) = mpsc::channel::<()>();
    recv_within(&rx, WAIT, "a message");
}

#[test]
#[should_panic(expected = "waiting for a count of 3; last seen: 1")]
fn a_poll_that_finds_nothing_says_what_it_last_saw() {
    poll_until(Duration::from_millis(100), "a count of 3", || {
        Err::<(), _>(1)
    });
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "gave up after 120s waiting for what never comes")]
async fn a_future_that_never_ends_fails_the_wait() {
    within(WAIT, "what never comes", std::future::pending::<()>()).await;
}
