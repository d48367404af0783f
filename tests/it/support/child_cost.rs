//! What a child process cost: its answer, peak resident memory and CPU time, for
//! the tests that feed a reader a hostile input and check that it costs one call,
//! bounded, never the process.
//!
//! The child is started by a small Python parent that forks it and reports its
//! `wait4` rusage: the kernel's own accounting of the reaped child, which covers
//! every descendant it reaped too (a worker process it spawned for a reader
//! counts). The test process does not spawn the child itself because Linux
//! charges a child's `ru_maxrss` with the resident size of the process it was
//! spawned from (the address space it shared until `exec`): a test binary that
//! had grown to 600 MiB would make every child look that large. A child still
//! running at the deadline is killed with its process group, so a test never
//! hangs on it.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
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

/// Forks `argv[2:]` with this process's stdio, waits for it and writes
/// "maxrss_kib user_s system_s exit_code_or_-signal" to `argv[1]`.
const FORK_AND_REPORT: &str = r#"
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
with open(sys.argv[1], "w") as report:
    report.write(f"{usage.ru_maxrss} {usage.ru_utime} {usage.ru_stime} {code}")
"#;

/// Runs `command` with `stdin` as its input to its end, or kills it at
/// `deadline` after its start.
pub(crate) fn run(command: Command, stdin: &[u8], deadline: Duration) -> ChildCost {
    let report = tempfile::NamedTempFile::new().expect("a report file");
    let mut parent = Command::new("python3");
    parent
        .args(["-c", FORK_AND_REPORT])
        .arg(report.path())
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => parent.env(key, value),
            None => parent.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        parent.current_dir(dir);
    }
    parent
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = parent.spawn().expect("spawn python3 and the child");
    let group = i32::try_from(child.id()).expect("a pid fits i32");
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
    // The deadline's watchdog kills the whole group (the Python parent and the
    // child). The group's leader is not reaped before this thread is told to
    // stop, so its id is not reused.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let timed_out = done_rx.recv_timeout(deadline).is_err();
        if timed_out {
            // SAFETY: a plain kill(2) of our own child's process group.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        timed_out
    });
    let status = child.wait().expect("wait for python3");
    let wall = started.elapsed();
    let _ = done_tx.send(());
    let killed = watchdog.join().expect("watchdog");
    let _ = writer.join();
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let report = std::fs::read_to_string(report.path()).unwrap_or_default();
    let fields: Vec<f64> = report
        .split_whitespace()
        .filter_map(|field| field.parse().ok())
        .collect();
    let [maxrss_kib, user, system, code] = fields[..] else {
        assert!(
            killed,
            "no report from the child's parent ({status}): {stderr}"
        );
        return ChildCost {
            code: None,
            killed,
            stdout,
            stderr,
            wall,
            peak_mib: 0.0,
            cpu: Duration::ZERO,
        };
    };
    ChildCost {
        code: (code >= 0.0).then_some(code as i32),
        killed,
        stdout,
        stderr,
        wall,
        peak_mib: maxrss_kib / 1024.0,
        cpu: Duration::from_secs_f64(user + system),
    }
}

/// Waits for `child` to exit, at most `deadline`: past it the child is killed
/// and the test fails, so no test waits on a child forever.
pub(crate) fn wait_within(
    child: &mut std::process::Child,
    deadline: Duration,
) -> std::process::ExitStatus {
    let pid = i32::try_from(child.id()).expect("a pid fits i32");
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let timed_out = done_rx.recv_timeout(deadline).is_err();
        if timed_out {
            // SAFETY: a plain kill(2) of a child not yet reaped (the wait below
            // reaps it only after this thread is told to stop or has killed it).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        timed_out
    });
    let status = child.wait().expect("wait for the child");
    let _ = done_tx.send(());
    assert!(
        !watchdog.join().expect("watchdog"),
        "the child outlived {deadline:?} and was killed"
    );
    status
}

#[test]
fn a_child_past_its_deadline_is_killed_and_its_peak_memory_is_counted() {
    let mut sleeper = Command::new("sleep");
    sleeper.arg("600");
    let cost = run(sleeper, b"", Duration::from_millis(200));
    assert!(cost.killed && cost.code.is_none(), "{cost:?}");
    assert!(cost.wall >= Duration::from_millis(200), "{cost:?}");

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
    assert!(
        cost.cpu > Duration::ZERO && cost.stderr.is_empty(),
        "{cost:?}"
    );
}

#[test]
fn a_small_child_of_a_large_test_process_is_measured_small() {
    // 300 MiB resident in this process while the child runs.
    let ballast = vec![1u8; 300 << 20];
    let cost = run(Command::new("true"), b"", Duration::from_secs(60));
    assert_eq!(cost.code, Some(0), "{cost:?}");
    assert!(cost.peak_mib < 100.0, "{cost:?}");
    assert_eq!(
        ballast.iter().map(|&b| usize::from(b)).sum::<usize>(),
        300 << 20
    );
}
