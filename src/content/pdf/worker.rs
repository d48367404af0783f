//! PDF reading in a worker process (extension): lopdf is a large
//! parser of a binary format, and its next bug on a hostile file must cost one
//! call, never the process every agent shares. The front doors (`webfetch
//! fetch`/`extract`, `mcp`, `serve`) read each PDF in a child of the same
//! binary ([`PdfWorker`]); the library reads in-process unless its host opts in
//! through the builder.
//!
//! The child (`webfetch pdf-worker`, hidden) reads one request on stdin (a JSON
//! line with its limits, then the PDF), answers one JSON line on stdout, and
//! exits. Before it reads the PDF it caps itself: its address space
//! (`RLIMIT_AS`: what it had at start plus the memory limit), its CPU time
//! (`RLIMIT_CPU`, a backstop: the parent kills it at the call's deadline), no
//! file it may open beyond stdin, stdout and stderr (`RLIMIT_NOFILE`: so no
//! socket either, hence no network), no file written (`RLIMIT_FSIZE`), no core
//! dump, and death with its parent (`PR_SET_PDEATHSIG`). A network namespace
//! would say "no network" once more, but costs a user namespace per call and is
//! not available everywhere; without a descriptor there is no socket to use.
//!
//! The parent runs it on the reader's thread, under the call's read budget:
//! killed at the deadline or when the call ends (checked every
//! [`POLL`]), and killed once it has answered, so no worker outlives its call;
//! the thread that keeps the next worker ready reaps it, which keeps the
//! kernel's teardown of the process off the reader's path. Its stdio are Unix socket pairs, whose
//! timeouts let that one thread write the PDF and read the answer while it
//! watches the budget. A child that dies, is killed by a limit or
//! answers garbage fails that one call with `extraction_failed`:
//! `pdf_resource_limit` (its memory or CPU limit) or `pdf_reader_crashed`
//! (anything else).

use std::io::{BufWriter, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Limits, PdfRead};
use crate::budget;
use crate::error::{FetchError, UnreadableReason};
use crate::vocabulary::ExtractedDocument;

/// How often the parent looks at the call's budget while the child works.
const POLL: Duration = Duration::from_millis(10);
/// The most a worker may answer: the Markdown of the largest document the
/// memory limit allows, as JSON.
const MAX_ANSWER_BYTES: usize = 256 << 20;
/// The largest PDF a worker reads (the largest `max_pdf_bytes`).
const MAX_BODY_BYTES: usize = 256 << 20;
/// The most of a worker's stderr kept (to tell an allocation failure apart).
const MAX_STDERR_BYTES: usize = 4096;
/// The most a request line may take.
const MAX_HEADER_BYTES: usize = 4096;

/// Reads PDFs in a worker process of the `webfetch` binary (extension): see [`WebFetchToolBuilder::pdf_worker`](crate::WebFetchToolBuilder::pdf_worker).
///
/// ```no_run
/// # use webfetch::{PdfWorker, Settings, WebFetchTool};
/// let worker = PdfWorker::new("/usr/local/bin/webfetch").memory_limit(512 << 20);
/// let tool = WebFetchTool::builder(Settings::default()).pdf_worker(worker).build();
/// ```
///
/// One worker is kept started ahead of its request (idle on its stdin, a few
/// MiB), so a PDF does not wait for a process to start: each read takes it and
/// asks for the next. Clones share it.
#[derive(Debug, Clone)]
pub struct PdfWorker {
    program: PathBuf,
    memory_bytes: Option<u64>,
    cpu_seconds: Option<u64>,
    standby: Arc<Standby>,
}

impl PartialEq for PdfWorker {
    /// The same program with the same limits (whatever worker each has ready).
    fn eq(&self, other: &PdfWorker) -> bool {
        (&self.program, self.memory_bytes, self.cpu_seconds)
            == (&other.program, other.memory_bytes, other.cpu_seconds)
    }
}

impl Eq for PdfWorker {}

/// The child's first stdin line.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    max_pages: u32,
    /// The PDF's size: it follows the line.
    body_bytes: usize,
    memory_bytes: u64,
    cpu_seconds: u64,
}

/// The child's stdout line.
#[derive(Debug, Serialize, Deserialize)]
enum Answer {
    #[serde(rename = "read")]
    Read {
        markdown: String,
        title: Option<String>,
        page_starts: Vec<usize>,
        pages_left_out: bool,
        page_count: usize,
    },
    #[serde(rename = "unreadable")]
    Unreadable { reason: String, message: String },
}

impl PdfWorker {
    /// The hidden subcommand of `program` that serves one request
    /// ([`PdfWorker::serve_stdio`]).
    pub const COMMAND: &'static str = "pdf-worker";

    /// The address space a worker may add to what it had at start, unless the
    /// host sets another (or `max_pdf_bytes` is above 32 MiB): reading a
    /// 32 MiB PDF of 3,000 pages takes some 170 MiB.
    pub const DEFAULT_MEMORY_BYTES: u64 = 224 << 20;

    /// Workers run as `program pdf-worker`: the `webfetch` binary (or any
    /// program whose `pdf-worker` subcommand calls [`PdfWorker::serve_stdio`]).
    pub fn new(program: impl Into<PathBuf>) -> PdfWorker {
        let program = program.into();
        PdfWorker {
            standby: Arc::new(Standby::new(program.clone())),
            program,
            memory_bytes: None,
            cpu_seconds: None,
        }
    }

    /// The address space a worker may add to what it has at start, in bytes;
    /// past it an allocation fails and the call is `pdf_resource_limit`. By
    /// default [`PdfWorker::DEFAULT_MEMORY_BYTES`], or more for a `max_pdf_bytes` above
    /// 32 MiB.
    pub fn memory_limit(mut self, bytes: u64) -> PdfWorker {
        self.memory_bytes = Some(bytes);
        self
    }

    /// The CPU time a worker may use, in seconds; by default the tool's
    /// `timeout_seconds` plus one (the parent kills it at the call's deadline;
    /// this bounds a worker whose parent stopped watching).
    pub fn cpu_limit(mut self, seconds: u64) -> PdfWorker {
        self.cpu_seconds = Some(seconds);
        self
    }

    /// The limits left unset, from the tool's settings.
    pub(crate) fn resolved(mut self, settings: &crate::config::Settings) -> PdfWorker {
        // Four times the largest PDF, plus room: the default at 32 MiB.
        let for_size = settings
            .content
            .max_pdf_bytes
            .saturating_mul(4)
            .saturating_add(96 << 20);
        self.memory_bytes
            .get_or_insert(PdfWorker::DEFAULT_MEMORY_BYTES.max(for_size));
        self.cpu_seconds
            .get_or_insert(settings.timeout().as_secs().saturating_add(1));
        self
    }

    /// The worker's side: reads one request on stdin, caps itself, reads the
    /// PDF and writes the answer on stdout. What the `pdf-worker` subcommand
    /// runs; exit 0 with an answer written, 1 otherwise.
    pub fn serve_stdio() -> ExitCode {
        let mut stdin = std::io::stdin().lock();
        let Some(request) = read_request(&mut stdin) else {
            return ExitCode::from(1);
        };
        if confine(&request).is_err() {
            return ExitCode::from(1);
        }
        // The PDF is as long as the request says, and at most what a PDF may be.
        let size = request.body_bytes.min(MAX_BODY_BYTES);
        let mut body = vec![0; size];
        if stdin.read_exact(&mut body).is_err() {
            return ExitCode::from(1);
        }
        let limits = Limits {
            max_pages: request.max_pages,
        };
        let answer = match super::read(&body, &limits) {
            Ok(read) => Answer::Read {
                markdown: read.document.markdown,
                title: read.document.title,
                page_starts: read.document.page_starts,
                pages_left_out: read.pages_left_out,
                page_count: read.page_count,
            },
            Err(error) => match &error.details {
                // The message without its advice, which the parent adds back.
                crate::error::ErrorDetails::Unreadable { reason } => Answer::Unreadable {
                    reason: reason.as_str().to_owned(),
                    message: error
                        .message
                        .strip_suffix(reason.advice())
                        .and_then(|m| m.strip_suffix(": "))
                        .unwrap_or(&error.message)
                        .to_owned(),
                },
                // Without a read budget the reader has no other error.
                _ => Answer::Unreadable {
                    reason: String::new(),
                    message: error.message,
                },
            },
        };
        drop(body);
        let mut out = BufWriter::new(std::io::stdout().lock());
        let written = serde_json::to_writer(&mut out, &answer)
            .map_err(std::io::Error::other)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if written.is_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }

    /// Reads `body` in a worker, under the calling thread's read budget.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn read(&self, body: &[u8], limits: &Limits) -> Result<PdfRead, FetchError> {
        let request = Request {
            max_pages: limits.max_pages,
            memory_bytes: self.memory_bytes.unwrap_or(PdfWorker::DEFAULT_MEMORY_BYTES),
            body_bytes: body.len(),
            cpu_seconds: self.cpu_seconds.unwrap_or(61),
        };
        let mut worker = match self.standby.take() {
            Some(worker) => worker,
            None => Started::new(&self.program).map_err(|error| {
                FetchError::internal(format!("the PDF reader did not start: {error}"))
            })?,
        };
        let ends = (worker.ends.take())
            .ok_or_else(|| FetchError::internal("a PDF reader was started without its stdio"))?;
        match ends.exchange(&request, body) {
            Exchange::Answered(answer) => {
                self.standby.reap(worker);
                answer
            }
            Exchange::Interrupted => {
                self.standby.reap(worker);
                budget::checkpoint()?;
                Err(FetchError::internal("the PDF reader was stopped"))
            }
            // How it ended is the error: reaped here, for its status.
            Exchange::Ended { stdout, stderr } => match worker.stop() {
                Ok(status) => judge(status, &stdout, &stderr),
                Err(error) => Err(FetchError::internal(format!(
                    "the PDF reader could not be waited for: {error}"
                ))),
            },
        }
    }
}

/// The worker started ahead of its request, and the thread that starts the
/// next one. A thread of its own because a worker dies with the thread that
/// started it (`PR_SET_PDEATHSIG` follows the parent thread, and the readers'
/// threads come and go); it ends, killing the worker it kept, when the last
/// clone of its [`PdfWorker`] is dropped.
/// The same thread reaps the workers that were used, each killed first.
#[derive(Debug)]
struct Standby {
    ready: Arc<Mutex<Option<Started>>>,
    chores: mpsc::Sender<Chore>,
}

/// What the standby thread is asked to do.
enum Chore {
    /// Start a worker unless one is ready.
    Refill,
    /// Reap a worker that was killed.
    Reap(Started),
}

impl Standby {
    fn new(program: PathBuf) -> Standby {
        let ready = Arc::new(Mutex::new(None));
        let (chores, asked) = mpsc::channel::<Chore>();
        let kept = Arc::clone(&ready);
        // Without the thread there is no worker ahead (each read starts its
        // own) and each reader reaps its worker itself.
        let _ = std::thread::Builder::new()
            .name("webfetch-pdf-standby".to_owned())
            .spawn(move || {
                let ready = || kept.lock().unwrap_or_else(PoisonError::into_inner);
                for chore in asked {
                    match chore {
                        Chore::Refill if ready().is_some() => {}
                        Chore::Refill => {
                            let started = Started::new(&program).ok();
                            *ready() = started;
                        }
                        Chore::Reap(started) => drop(started),
                    }
                }
            });
        Standby { ready, chores }
    }

    /// The worker started ahead if it is still alive; the next one is asked for.
    fn take(&self) -> Option<Started> {
        let taken = self
            .ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let _ = self.chores.send(Chore::Refill);
        taken.and_then(Started::alive)
    }

    /// Kills `worker` now and has it reaped off the caller's path (or here,
    /// without the thread).
    fn reap(&self, mut worker: Started) {
        worker.kill();
        // A failed send hands the worker back, dropped here: reaped inline.
        let _ = self.chores.send(Chore::Reap(worker));
    }
}

/// A worker process and our ends of its stdio; killed and reaped when dropped,
/// so none outlives what started it.
struct Started {
    child: Child,
    ends: Option<Ends>,
}

impl Started {
    fn new(program: &std::path::Path) -> std::io::Result<Started> {
        let (stdin, child_stdin) = UnixStream::pair()?;
        let (stdout, child_stdout) = UnixStream::pair()?;
        let (stderr, child_stderr) = UnixStream::pair()?;
        let child = Command::new(program)
            .arg(PdfWorker::COMMAND)
            .env_clear()
            .stdin(Stdio::from(OwnedFd::from(child_stdin)))
            .stdout(Stdio::from(OwnedFd::from(child_stdout)))
            .stderr(Stdio::from(OwnedFd::from(child_stderr)))
            .spawn()?;
        let ends = Ends {
            stdin,
            stdout,
            stderr,
        };
        Ok(Started {
            child,
            ends: Some(ends),
        })
    }

    /// `self` if its process has not ended.
    fn alive(mut self) -> Option<Started> {
        matches!(self.child.try_wait(), Ok(None)).then_some(self)
    }

    /// Kills the process (a no-op for one that exited).
    fn kill(&mut self) {
        let _ = self.child.kill();
    }

    /// Kills the process and reaps it.
    fn stop(&mut self) -> std::io::Result<ExitStatus> {
        self.kill();
        self.child.wait()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

/// Our ends of a worker's stdin, stdout and stderr: Unix socket pairs rather
/// than pipes, for their timeouts. One thread writes the request, then reads
/// the answer, waking every [`POLL`] to look at the call's budget: no thread to
/// start, no wake-up between threads. The worker reads all its input before it
/// writes anything but a few lines of stderr, so the order can not deadlock.
struct Ends {
    stdin: UnixStream,
    stdout: UnixStream,
    stderr: UnixStream,
}

impl Ends {
    /// Sends the request and the PDF, then reads the answer line, or until the
    /// worker closes its stdout, or until the call's budget runs out.
    fn exchange(self, request: &Request, body: &[u8]) -> Exchange {
        let Ends {
            mut stdin,
            mut stdout,
            mut stderr,
        } = self;
        let mut header = serde_json::to_vec(request).unwrap_or_default();
        header.push(b'\n');
        for part in [header.as_slice(), body] {
            match send(&mut stdin, part) {
                Ok(()) => {}
                Err(Stopped::Interrupted) => return Exchange::Interrupted,
                // The worker stopped reading (it failed, or died): how it
                // ended tells the rest.
                Err(Stopped::Closed) => break,
            }
        }
        drop(stdin);
        // The answer is one line: its newline ends it, without waiting for
        // the worker to exit.
        let answer = match receive(&mut stdout, MAX_ANSWER_BYTES + 1, Some(b'\n')) {
            Ok(answer) => answer,
            Err(()) => return Exchange::Interrupted,
        };
        if answer.len() <= MAX_ANSWER_BYTES
            && let Some(parsed) = parse_answer(&answer)
        {
            return Exchange::Answered(parsed);
        }
        // What the worker said before it ended: a line or two, if anything.
        let said = receive(&mut stderr, MAX_STDERR_BYTES, None).unwrap_or_default();
        Exchange::Ended {
            stdout: answer,
            stderr: said,
        }
    }
}

/// Why sending stopped.
enum Stopped {
    Interrupted,
    Closed,
}

/// Writes all of `data`, looking at the call's budget whenever the worker has
/// not taken more for [`POLL`].
fn send(stream: &mut UnixStream, mut data: &[u8]) -> Result<(), Stopped> {
    let _ = stream.set_write_timeout(Some(POLL));
    while !data.is_empty() {
        match stream.write(data) {
            Ok(0) => return Err(Stopped::Closed),
            Ok(n) => data = &data[n..],
            Err(error) if waiting(&error) => {
                if budget::interrupted_now() {
                    return Err(Stopped::Interrupted);
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(Stopped::Closed),
        }
    }
    Ok(())
}

/// Reads until the worker closes `stream`, or sends `end` (kept), or `cap`
/// bytes, looking at the call's budget whenever nothing came for [`POLL`];
/// `Err` once it ran out.
fn receive(stream: &mut UnixStream, cap: usize, end: Option<u8>) -> Result<Vec<u8>, ()> {
    let _ = stream.set_read_timeout(Some(POLL));
    let mut out = Vec::new();
    let mut buffer = vec![0u8; 64 << 10];
    while out.len() < cap {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                let got = &buffer[..n.min(cap - out.len())];
                out.extend_from_slice(got);
                if end.is_some_and(|end| got.contains(&end)) {
                    break;
                }
            }
            Err(error) if waiting(&error) => {
                if budget::interrupted_now() {
                    return Err(());
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    Ok(out)
}

/// Whether an I/O error is a timeout (the other side is still working).
fn waiting(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// How an exchange with a worker ended.
enum Exchange {
    /// It answered.
    Answered(Result<PdfRead, FetchError>),
    /// The call's budget ran out; the worker was killed.
    Interrupted,
    /// Its stdout closed without an answer.
    Ended { stdout: Vec<u8>, stderr: Vec<u8> },
}

/// The answer line, read back into what `pdf::read` returned.
fn parse_answer(stdout: &[u8]) -> Option<Result<PdfRead, FetchError>> {
    let line = stdout.strip_suffix(b"\n")?;
    match serde_json::from_slice::<Answer>(line).ok()? {
        Answer::Read {
            markdown,
            title,
            page_starts,
            pages_left_out,
            page_count,
        } => {
            // What the in-process reader guarantees, checked again: the hints
            // are increasing character boundaries inside the Markdown.
            let sound = page_starts.windows(2).all(|w| w[0] < w[1])
                && page_starts
                    .iter()
                    .all(|&at| at < markdown.len() && markdown.is_char_boundary(at));
            sound.then_some(Ok(PdfRead {
                document: ExtractedDocument {
                    markdown,
                    title,
                    language: None,
                    page_type: None,
                    page_starts,
                },
                pages_left_out,
                page_count,
            }))
        }
        Answer::Unreadable { reason, message } => {
            let reason = UnreadableReason::ALL
                .into_iter()
                .find(|r| r.as_str() == reason && r.error() == "unreadable_pdf")?;
            Some(Err(FetchError::unreadable(reason, &message)))
        }
    }
}

/// The error of a worker that ended without an answer: killed by its CPU limit,
/// or out of memory (Rust says so on stderr before it aborts), is
/// `pdf_resource_limit`; any other end is `pdf_reader_crashed`.
fn judge(status: ExitStatus, stdout: &[u8], stderr: &[u8]) -> Result<PdfRead, FetchError> {
    use std::os::unix::process::ExitStatusExt as _;
    let signal = status.signal();
    let out_of_memory = memchr::memmem::find(stderr, b"memory allocation of").is_some()
        || memchr::memmem::find(stderr, b"out of memory").is_some();
    let cpu = signal.is_some_and(|s| s == rustix::process::Signal::XCPU.as_raw())
        || signal.is_some_and(|s| s == rustix::process::Signal::KILL.as_raw());
    let what = match signal {
        Some(signal) => format!("signal {signal}"),
        None => format!("exit status {}", status.code().unwrap_or(-1)),
    };
    tracing::warn!(
        event = "pdf_worker_failed",
        status = %what,
        answer_bytes = stdout.len(),
        "the PDF worker ended without an answer"
    );
    if out_of_memory || cpu || stdout.len() > MAX_ANSWER_BYTES {
        let limit = if cpu { "CPU time" } else { "memory" };
        return Err(FetchError::unreadable(
            UnreadableReason::PdfResourceLimit,
            &format!("the PDF reader went past its {limit} limit ({what})"),
        ));
    }
    Err(FetchError::unreadable(
        UnreadableReason::PdfReaderCrashed,
        &format!("the PDF reader ended without an answer ({what})"),
    ))
}

/// The request line: at most [`MAX_HEADER_BYTES`], up to a newline.
fn read_request(input: &mut impl Read) -> Option<Request> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < MAX_HEADER_BYTES {
        input.read_exact(&mut byte).ok()?;
        if byte[0] == b'\n' {
            return serde_json::from_slice(&line).ok();
        }
        line.push(byte[0]);
    }
    None
}

/// The worker's own limits, set before it reads the PDF (see the module doc).
fn confine(request: &Request) -> std::io::Result<()> {
    use rustix::process::{Resource, Signal, getppid};
    let parent = getppid();
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    // The parent may have died before the signal was set: then nobody waits.
    if getppid() != parent {
        return Err(std::io::Error::other("the parent is gone"));
    }
    limit(Resource::Core, 0, 0)?;
    limit(Resource::Fsize, 0, 0)?;
    let cpu = request.cpu_seconds.max(1);
    limit(Resource::Cpu, cpu, cpu.saturating_add(1))?;
    let now = address_space()?;
    let address_space = now.saturating_add(request.memory_bytes);
    limit(Resource::As, address_space, address_space)?;
    limit(Resource::Nofile, 3, 3)?;
    Ok(())
}

/// Sets `resource`'s soft and hard limits to `soft` and `hard`, or to the hard
/// limit the process already has when that is lower (a limit can only be
/// lowered without privileges).
fn limit(resource: rustix::process::Resource, soft: u64, hard: u64) -> std::io::Result<()> {
    use rustix::process::{Rlimit, getrlimit, setrlimit};
    let ceiling = getrlimit(resource).maximum.unwrap_or(u64::MAX);
    setrlimit(
        resource,
        Rlimit {
            current: Some(soft.min(ceiling)),
            maximum: Some(hard.min(ceiling)),
        },
    )?;
    Ok(())
}

/// This process's address space now, in bytes (`VmSize`).
fn address_space() -> std::io::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map(|kib| kib.saturating_mul(1024))
        .ok_or_else(|| std::io::Error::other("no VmSize"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_back_and_garbage_is_refused() {
        let answer = Answer::Read {
            markdown: "# T\n\nText.\n".to_owned(),
            title: Some("T".to_owned()),
            page_starts: vec![0],
            pages_left_out: false,
            page_count: 1,
        };
        let mut line = serde_json::to_vec(&answer).unwrap();
        line.push(b'\n');
        let read = parse_answer(&line).unwrap().unwrap();
        assert_eq!(read.document.markdown, "# T\n\nText.\n");
        assert_eq!(read.page_count, 1);

        let unreadable = b"{\"unreadable\":{\"reason\":\"pdf_malformed\",\"message\":\"m\"}}\n";
        let error = parse_answer(unreadable).unwrap().unwrap_err();
        assert_eq!(error.details_json()["reason"], "pdf_malformed");

        // Not a PDF reason, a hint outside the text, a cut line: no answer.
        assert!(
            parse_answer(b"{\"unreadable\":{\"reason\":\"json_malformed\",\"message\":\"m\"}}\n")
                .is_none()
        );
        assert!(parse_answer(b"{\"read\":{\"markdown\":\"ab\",\"title\":null,\"page_starts\":[5],\"pages_left_out\":false,\"page_count\":1}}\n").is_none());
        assert!(parse_answer(b"{\"read\":").is_none());
    }

    /// The pid of the worker `standby` keeps ready, once it has one.
    fn ready_pid(standby: &Standby) -> u32 {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(started) = &*standby.ready.lock().unwrap() {
                return started.child.id();
            }
            assert!(std::time::Instant::now() < deadline, "no worker made ready");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn gone(pid: u32) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    #[test]
    fn a_worker_is_kept_ready_for_the_next_read_and_killed_with_the_last_clone() {
        // `yes pdf-worker` stands for a worker idle on its stdin: it lives until
        // killed (blocked once its stdout is full), and needs no file of ours.
        let worker = PdfWorker::new("/usr/bin/yes");
        let clone = worker.clone();
        assert!(worker.standby.take().is_none(), "nothing is ready at first");
        let first = ready_pid(&worker.standby);
        drop(worker);
        let taken = clone.standby.take().expect("the worker made ready");
        assert_eq!(taken.child.id(), first);
        // A taken worker is the reader's: killed and reaped when it is done.
        drop(taken);
        assert!(gone(first));
        // The next one was asked for when the first was taken; the last clone
        // takes it with it.
        let second = ready_pid(&clone.standby);
        assert_ne!(second, first);
        // A worker that answered is killed at once and reaped by the thread.
        let used = clone.standby.take().expect("the second worker");
        clone.standby.reap(used);
        assert!(gone(second), "a used worker was not reaped");
        let third = ready_pid(&clone.standby);
        drop(clone);
        assert!(gone(third), "the worker kept ready outlived its PdfWorker");
    }

    #[test]
    fn a_worker_that_died_while_ready_is_not_used() {
        let worker = PdfWorker::new("/usr/bin/yes");
        assert!(worker.standby.take().is_none());
        let pid = ready_pid(&worker.standby);
        let pid_t = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
        nix::sys::signal::kill(pid_t, nix::sys::signal::Signal::SIGKILL).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while procfs_state(pid) != Some('Z') {
            assert!(
                std::time::Instant::now() < deadline,
                "the worker did not die"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            worker.standby.take().is_none(),
            "a dead worker was handed out"
        );
    }

    /// The state letter of process `pid` (`Z` for one that died unreaped).
    fn procfs_state(pid: u32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(") ")?.1.chars().next()
    }

    #[test]
    fn a_worker_killed_by_a_limit_is_a_resource_limit_and_any_other_end_a_crash() {
        use std::os::unix::process::ExitStatusExt as _;
        let xcpu = ExitStatus::from_raw(rustix::process::Signal::XCPU.as_raw());
        let error = judge(xcpu, b"", b"").unwrap_err();
        assert_eq!(error.details_json()["reason"], "pdf_resource_limit");
        let abort = ExitStatus::from_raw(rustix::process::Signal::ABORT.as_raw());
        let error = judge(abort, b"", b"memory allocation of 8 bytes failed\n").unwrap_err();
        assert_eq!(error.details_json()["reason"], "pdf_resource_limit");
        let error = judge(abort, b"", b"thread 'main' panicked").unwrap_err();
        assert_eq!(error.details_json()["reason"], "pdf_reader_crashed");
        let exit_1 = ExitStatus::from_raw(1 << 8);
        let error = judge(exit_1, b"garbage", b"").unwrap_err();
        assert_eq!(error.details_json()["reason"], "pdf_reader_crashed");
    }
}
