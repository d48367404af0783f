//! What a child process cost: its answer, peak resident memory and CPU time, for
//! the tests that feed a reader a hostile input and check that it costs one call,
//! bounded, never the process.
//!
//! The peak comes from the kernel's own accounting of the reaped child
//! (`wait4`'s `ru_maxrss`, the `VmHWM` its `/proc/PID/status` showed while it
//! ran), which covers every descendant it reaped too: a worker process it spawned
//! for a reader counts. A child still running at the deadline is killed, so a
//! test never hangs on it.

use std::io::{Read as _, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a child ended and what it cost.
#[derive(Debug)]
pub(crate) struct ChildCost {
    /// Its exit code; `None` if a signal ended it (the deadline's kill included).
    pub code: Option<i32>,
    /// Whether the deadline passed and the child was killed.
    pub killed: bool,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// Wall time from spawn to exit.
    pub wall: Duration,
    /// Peak resident set, in MiB: the largest of the child's and of every
    /// descendant it waited for.
    pub peak_mib: f64,
    /// User plus system CPU time of the child and the descendants it waited for.
    pub cpu: Duration,
}

/// Runs `command` with `stdin` as its input to its end, or kills it at
/// `deadline` after its start.
pub(crate) fn run(mut command: Command, stdin: &[u8], deadline: Duration) -> ChildCost {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    // Reaped by `wait4` below, which clippy does not see.
    #[allow(clippy::zombie_processes)]
    let mut child = command.spawn().expect("spawn the child");
    let pid = i32::try_from(child.id()).expect("a pid fits i32");
    let mut input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // A child that stops reading early (an error at the first bytes) closes
        // the pipe: not a failure of the test.
        let _ = input.write_all(&stdin);
    });
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    // The deadline's watchdog: kills the child if it is still there. The pid is
    // not reused before the child is reaped below, which happens after this
    // thread is told to stop.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let timed_out = done_rx.recv_timeout(deadline).is_err();
        if timed_out {
            // SAFETY: a plain kill(2) of our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        timed_out
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be written over.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into locals that outlive the call.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(waited, pid, "wait4 failed");
    let _ = done_tx.send(());
    let killed = watchdog.join().expect("watchdog");
    let _ = writer.join();
    let cpu = timeval(usage.ru_utime) + timeval(usage.ru_stime);
    ChildCost {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        killed,
        stdout: reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        wall,
        peak_mib: usage.ru_maxrss as f64 / 1024.0,
        cpu,
    }
}

fn timeval(value: libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(value.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(value.tv_usec).unwrap_or(0))
}

#[test]
fn a_child_past_its_deadline_is_killed_and_its_peak_memory_is_counted() {
    let mut sleeper = Command::new("sleep");
    sleeper.arg("600");
    let cost = run(sleeper, b"", Duration::from_millis(200));
    assert!(cost.killed && cost.code.is_none(), "{cost:?}");

    // 200 MiB touched by a grandchild the child waits for.
    let mut hog = Command::new("sh");
    hog.args([
        "-c",
        "head -c 209715200 /dev/zero | python3 -c 'import sys; b = sys.stdin.buffer.read(); print(len(b))'",
    ]);
    let cost = run(hog, b"", Duration::from_secs(120));
    assert_eq!(cost.code, Some(0), "{cost:?}");
    assert_eq!(cost.stdout.trim(), "209715200");
    assert!(cost.peak_mib >= 200.0, "{cost:?}");
}
