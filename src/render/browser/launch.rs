//! Launching Chromium (FR-WF-11, 11a, BROWSER-ISO-01, BROWSER-UA-01) and making
//! sure it is gone afterwards.
//!
//! One Chromium per call, in a fresh temporary profile, in its own process group.
//! [`Chromium::shutdown`] (or, on panic and cancellation, `Drop`) kills the whole
//! group, reaps the browser process, kills any straggler that still names the
//! profile on its command line (crashpad runs in its own session) and deletes the
//! profile. A small watchdog (`sh` + `cat`) kills the group if this process dies
//! without running `Drop`, since Chromium does not exit when its debugger leaves.
//!
//! Chromium's sandbox stays on. Run as root, Chromium refuses to
//! sandbox itself, so it is started as the unprivileged user `nobody` (uid and gid
//! 65534, no supplementary groups) owning its private profile; the renderers then
//! get Chromium's namespace sandbox (own user, PID and network namespaces) and its
//! seccomp-BPF filter. `--no-sandbox` is passed only when the configuration says
//! `allow_no_sandbox = true`, with a warning at each launch. When the sandbox cannot
//! start (no unprivileged user namespaces and no SUID helper), the launch is
//! `browser_unavailable` with a message saying so and naming that switch.
//!
//! Chromium older than [`MIN_CHROMIUM_MAJOR`] (FR-WF-11 step 3) is refused after
//! connecting, by `Browser.getVersion`, with the version in `details.version`.
//!
//! DevTools is a WebSocket on 127.0.0.1 at a port the kernel picks, for the one
//! call's lifetime. `--remote-debugging-pipe` would keep it off the network, but
//! chromiumoxide 0.9 only speaks WebSocket over TCP (its `Connection` is fixed to
//! a TCP stream; pipe support is an open pull request upstream), so see the module
//! documentation of `browser` for what protects the port.
//!
//! The flags make Chromium's own networking fail closed: every request the page
//! makes is paused by the Fetch domain and answered by us; anything that escapes
//! interception (service-worker scripts, popups, prerenders, preconnects, DNS
//! prefetch, WebSocket handshakes, WebRTC) meets a proxy that refuses everything
//! and a resolver that resolves nothing.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use chromiumoxide::Browser;
use chromiumoxide::handler::HandlerConfig;
use futures_util::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::Instrument;

use super::profile::{Profile, kill_processes_naming_until_gone};
use crate::error::FetchError;

/// The oldest Chromium accepted: FR-WF-11 step 3, "Minimum Chromium version: 100
/// (for stable CDP API)".
pub(super) const MIN_CHROMIUM_MAJOR: u32 = 100;

/// The user and group Chromium runs as when this process is root: `nobody` and
/// `nogroup` on Debian (65534). Chromium refuses to sandbox itself as root, and an
/// unprivileged browser is what a renderer escape would land in.
pub(super) const UNPRIVILEGED_ID: u32 = 65534;

/// What Chromium prints when its sandbox cannot start; any of these in the
/// start-up output makes the launch failure a sandbox failure.
const SANDBOX_FAILURES: [&str; 4] = [
    "No usable sandbox",
    "Failed to move to new namespace",
    "SUID sandbox helper binary",
    "without --no-sandbox is not supported",
];

/// Names searched on `PATH` when `chromium_path` is empty (FR-WF-11 step 1).
const PATH_CANDIDATES: [&str; 6] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "chrome-headless-shell",
];

/// Debian's `/usr/bin/chromium` is a shell wrapper that sources `/etc/chromium.d`
/// (API keys, extra flags); we run the binary it wraps.
const DEBIAN_CHROMIUM: &str = "/usr/lib/chromium/chromium";

/// Environment variables passed through to Chromium; everything else (API keys,
/// proxies, tokens of the host process) is withheld.
const ENV_PASSTHROUGH: [&str; 6] = [
    "PATH",
    "LANG",
    "LC_ALL",
    "LD_LIBRARY_PATH",
    "FONTCONFIG_PATH",
    "FONTCONFIG_FILE",
];

/// Finds the Chromium binary (FR-WF-11 step 1): `chromium_path` when configured,
/// else the first candidate on `path_var`. Errors are `browser_unavailable`
/// (FR-WF-11a).
pub(crate) fn resolve_executable(
    configured: Option<&Path>,
    path_var: Option<OsString>,
) -> Result<PathBuf, FetchError> {
    if let Some(path) = configured {
        return if is_executable_file(path) {
            Ok(path.to_path_buf())
        } else {
            Err(FetchError::browser_unavailable(
                &path.display().to_string(),
                "chromium_path is not an executable file",
            ))
        };
    }
    let dirs: Vec<PathBuf> = path_var
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for name in PATH_CANDIDATES {
        for dir in &dirs {
            let candidate = dir.join(name);
            if is_executable_file(&candidate) {
                if is_script(&candidate) && is_executable_file(Path::new(DEBIAN_CHROMIUM)) {
                    return Ok(PathBuf::from(DEBIAN_CHROMIUM));
                }
                return Ok(candidate);
            }
        }
    }
    Err(FetchError::browser_unavailable(
        "",
        format!(
            "no Chromium found on PATH (looked for {}); set browser.chromium_path",
            PATH_CANDIDATES.join(", ")
        ),
    ))
}

fn is_executable_file(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                meta.permissions().mode() & 0o111 != 0
            }
            #[cfg(not(unix))]
            {
                true
            }
        }
        _ => false,
    }
}

fn is_script(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"#!"
}

/// The command line (without the program). `proxy_port` is the refusing backstop
/// proxy; `user_agent` is the configured one (FR-WF-BROWSER-UA-01).
pub(crate) fn chromium_args(
    user_data_dir: &Path,
    user_agent: &str,
    proxy_port: u16,
    no_sandbox: bool,
) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless",
        "--disable-gpu",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-client-side-phishing-detection",
        "--disable-domain-reliability",
        "--disable-breakpad",
        "--no-pings",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        "--disable-dev-shm-usage",
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-renderer-backgrounding",
        "--disable-hang-monitor",
        "--disable-prompt-on-repost",
        "--deny-permission-prompts",
        "--mute-audio",
        "--hide-scrollbars",
        "--window-size=1280,1024",
        // One renderer for all frames: cross-site iframes stay in the page's
        // target, whose Fetch interception then sees their requests.
        "--disable-site-isolation-trials",
        // No silent http -> https upgrade: the URL we validate is the URL loaded.
        "--disable-features=IsolateOrigins,site-per-process,HttpsUpgrades,\
         HttpsFirstBalancedModeAutoEnable,Translate,OptimizationHints,MediaRouter,\
         DialMediaRouteProvider,AutofillServerCommunication,InterestFeedContentSuggestions,\
         NetworkTimeServiceQuerying,Prerender2,SpeculationRulesPrefetchFuture",
        // Fail closed: Chromium's own networking reaches nothing.
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--disable-quic",
        "--dns-prefetch-disable",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    args.push(format!("--proxy-server=http://127.0.0.1:{proxy_port}"));
    args.push(format!("--user-data-dir={}", user_data_dir.display()));
    args.push(format!("--user-agent={user_agent}"));
    if no_sandbox {
        // Only by `allow_no_sandbox = true` (warned at each launch).
        args.push("--no-sandbox".to_owned());
    }
    args.push("about:blank".to_owned());
    args
}

/// Whether this process runs as root, where Chromium is started as
/// [`UNPRIVILEGED_ID`].
fn running_as_root() -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The major version in `Browser.getVersion`'s `product`, e.g. 131 in
/// `HeadlessChrome/131.0.6778.85` or `Chrome/99.0.4844.51`.
pub(crate) fn chromium_major(product: &str) -> Option<u32> {
    let (_, version) = product.trim().rsplit_once('/')?;
    let major = version.split('.').next()?;
    if major.is_empty() || !major.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    major.parse().ok()
}

/// Whether a line of Chromium's start-up output says its sandbox failed.
fn sandbox_failed(line: &str) -> bool {
    SANDBOX_FAILURES.iter().any(|marker| line.contains(marker))
}

/// Why the sandbox may be missing, from the kernel's user-namespace switches, for
/// the error message: `user.max_user_namespaces` and (Debian, older kernels)
/// `kernel.unprivileged_userns_clone`.
fn userns_state() -> String {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|_| "absent".to_owned())
    };
    format!(
        "user.max_user_namespaces = {}, kernel.unprivileged_userns_clone = {}",
        read("/proc/sys/user/max_user_namespaces"),
        read("/proc/sys/kernel/unprivileged_userns_clone")
    )
}

/// The `browser_unavailable` message when Chromium's sandbox did not start;
/// `said` is what Chromium printed about it.
fn sandbox_message(said: &str) -> String {
    format!(
        "Chromium's sandbox could not start on this system ({}); it needs unprivileged \
         user namespaces (and, in a container, a seccomp profile that permits them) or \
         Chromium's SUID sandbox helper. To render without the sandbox anyway, set \
         [tools.webfetch.browser] allow_no_sandbox = true (not recommended: a renderer \
         exploit would then run unconfined). Chromium said: {}",
        userns_state(),
        said.chars()
            .take(StderrTail::LINE_CHARS)
            .collect::<String>()
    )
}

/// Whether every directory above `path` lets `id` (as user and group, with no
/// supplementary groups) pass through it.
#[cfg(unix)]
fn reachable_by(path: &Path, id: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    path.ancestors().skip(1).all(|dir| {
        std::fs::metadata(dir).is_ok_and(|meta| {
            let mode = meta.mode();
            if meta.uid() == id {
                mode & 0o100 != 0
            } else if meta.gid() == id {
                mode & 0o010 != 0
            } else {
                mode & 0o001 != 0
            }
        })
    })
}

/// Gives the profile (and HOME, TMPDIR, user-data-dir inside it) to `id`, after
/// checking that `id` can reach it.
#[cfg(unix)]
fn hand_over(profile: &Path, dirs: &ProfileDirs, id: u32) -> Result<(), String> {
    if !reachable_by(profile, id) {
        return Err(format!(
            "the profile directory {} is not reachable by uid {id}, the unprivileged user \
             Chromium runs as (a directory above it lacks the search permission)",
            profile.display()
        ));
    }
    for dir in [profile, &dirs.user_data, &dirs.home, &dirs.tmp] {
        std::os::unix::fs::chown(dir, Some(id), Some(id))
            .map_err(|e| format!("cannot give the profile to uid {id}: {e}"))?;
    }
    Ok(())
}

/// Extracts the DevTools endpoint from a stderr line of Chromium.
pub(crate) fn devtools_url(line: &str) -> Option<&str> {
    let (_, url) = line.rsplit_once("DevTools listening on ")?;
    let url = url.trim();
    (url.starts_with("ws://127.0.0.1:") && url.contains("/devtools/browser/")).then_some(url)
}

/// A running Chromium with its CDP client. Dropping it kills everything and
/// removes the profile; [`Chromium::shutdown`] does the same and waits.
pub(crate) struct Chromium {
    /// The CDP client.
    pub(crate) browser: Browser,
    /// Becomes `true` when the CDP event loop has ended: the browser went away.
    pub(crate) connection_closed: watch::Receiver<bool>,
    // Dropped in this order: the tasks stop before the process guard kills
    // Chromium and deletes its profile.
    handler: Task,
    backstop: Task,
    stderr: Task,
    process: ProcessGuard,
}

/// A background task of one Chromium (CDP event loop, backstop proxy, stderr
/// drain), aborted when dropped: an early return anywhere in [`Chromium::launch`]
/// and the end of a [`Chromium`] stop it without a cleanup call of their own.
struct Task(JoinHandle<()>);

impl Task {
    fn spawn(future: impl Future<Output = ()> + Send + 'static) -> Task {
        Task(tokio::spawn(future.in_current_span()))
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What the launch needs besides the settings.
pub(crate) struct LaunchSpec<'a> {
    pub(crate) executable: &'a Path,
    pub(crate) user_agent: &'a str,
    /// Where the temporary profile is created; `None` for [`default_profile_roots`](super::profile::default_profile_roots).
    pub(crate) profile_root: Option<&'a Path>,
    /// When the launch must have finished.
    pub(crate) deadline: Instant,
    /// CDP command timeout.
    pub(crate) command_timeout: Duration,
    /// `allow_no_sandbox`: pass `--no-sandbox` (warned at each launch).
    pub(crate) allow_no_sandbox: bool,
}

/// Chromium's stderr, read line by line.
type StderrLines = tokio::io::Lines<BufReader<tokio::process::ChildStderr>>;

impl Chromium {
    /// Starts Chromium and connects to it. Every failure is `browser_unavailable`
    /// (FR-WF-11a: not found, or failing to launch) with whatever Chromium said.
    /// Whatever a failed step leaves (tasks, process, profile) is dropped with it.
    pub(crate) async fn launch(spec: &LaunchSpec<'_>) -> Result<Chromium, FetchError> {
        let exe = spec.executable.display().to_string();
        let unavailable = |error: String| FetchError::browser_unavailable(&exe, error);
        // As root, Chromium runs as `nobody`, owning its profile.
        let run_as = running_as_root().then_some(UNPRIVILEGED_ID);
        let (profile, dirs) = prepare_profile(spec, run_as).map_err(unavailable)?;
        if spec.allow_no_sandbox {
            tracing::warn!(
                target: "webfetch::browser",
                event = "browser_no_sandbox",
                "Chromium runs WITHOUT its sandbox (browser.allow_no_sandbox = true): \
                 a renderer exploit in a hostile page would run unconfined"
            );
        }
        let (backstop, proxy_port) = start_backstop().await.map_err(unavailable)?;
        let mut process =
            spawn_chromium(spec, &dirs, proxy_port, run_as, profile).map_err(unavailable)?;
        let (ws_url, lines) = await_devtools_url(&mut process, spec, &exe).await?;
        // Keep draining stderr so Chromium never blocks on a full pipe.
        let stderr = Task::spawn(drain_stderr(lines));
        let (browser, handler, connection_closed) =
            connect(ws_url, spec).await.map_err(unavailable)?;
        let chromium = Chromium {
            browser,
            connection_closed,
            handler,
            backstop,
            stderr,
            process,
        };
        match chromium.check_version(spec, &exe).await {
            Ok(product) => {
                tracing::debug!(
                    target: "webfetch::browser",
                    event = "browser_launched",
                    version = %product,
                    uid = run_as,
                    sandbox = !spec.allow_no_sandbox,
                    "Chromium started"
                );
                Ok(chromium)
            }
            Err(error) => {
                chromium.shutdown().await;
                Err(error)
            }
        }
    }

    /// FR-WF-11 step 3: the product string, or the refusal of a Chromium older than
    /// the minimum (or one that does not say).
    async fn check_version(&self, spec: &LaunchSpec<'_>, exe: &str) -> Result<String, FetchError> {
        let product = match tokio::time::timeout_at(spec.deadline, self.browser.version()).await {
            Ok(Ok(version)) => version.product,
            Ok(Err(e)) => {
                return Err(FetchError::browser_unavailable(
                    exe,
                    format!("cannot read Chromium's version: {e}"),
                ));
            }
            Err(_) => {
                return Err(FetchError::browser_unavailable(
                    exe,
                    "Chromium did not report its version in time".to_owned(),
                ));
            }
        };
        let why = match chromium_major(&product) {
            Some(major) if major >= MIN_CHROMIUM_MAJOR => return Ok(product),
            Some(_) => format!(
                "Chromium {product} is too old: version {MIN_CHROMIUM_MAJOR} or newer is required"
            ),
            None => format!(
                "cannot tell Chromium's version from \"{product}\"; version \
                 {MIN_CHROMIUM_MAJOR} or newer is required"
            ),
        };
        Err(FetchError::browser_too_old(exe, why, &product))
    }

    /// Kills Chromium and its helpers, reaps the browser process and deletes the
    /// profile (BROWSER-ISO-01 step 2). Errors are logged: the fetch's outcome does
    /// not depend on them, and `Drop` retries nothing it could not do here.
    pub(crate) async fn shutdown(self) {
        let Chromium {
            handler,
            backstop,
            stderr,
            mut process,
            ..
        } = self;
        drop((handler, backstop, stderr));
        process.shutdown().await;
    }
}

/// Creates the temporary profile and its directories, given to `run_as` when set.
fn prepare_profile(
    spec: &LaunchSpec<'_>,
    run_as: Option<u32>,
) -> Result<(Profile, ProfileDirs), String> {
    let profile = Profile::create(spec.profile_root)
        .map_err(|e| format!("cannot create a temporary profile: {e}"))?;
    let dirs = ProfileDirs::create(profile.path())
        .map_err(|e| format!("cannot prepare the temporary profile: {e}"))?;
    #[cfg(unix)]
    if let Some(id) = run_as {
        hand_over(profile.path(), &dirs, id)?;
    }
    #[cfg(not(unix))]
    let _ = run_as;
    Ok((profile, dirs))
}

/// The proxy Chromium is pointed at, which refuses everything: whatever escapes
/// interception goes nowhere. Its task and port.
async fn start_backstop() -> Result<(Task, u16), String> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot bind the backstop proxy: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("backstop proxy address: {e}"))?
        .port();
    Ok((Task::spawn(refuse_all(listener)), port))
}

/// Starts Chromium in its own process group with a scrubbed environment, under a
/// guard that owns the process, its watchdog and the profile.
fn spawn_chromium(
    spec: &LaunchSpec<'_>,
    dirs: &ProfileDirs,
    proxy_port: u16,
    run_as: Option<u32>,
    profile: Profile,
) -> Result<ProcessGuard, String> {
    let mut command = Command::new(spec.executable);
    command
        .args(chromium_args(
            &dirs.user_data,
            spec.user_agent,
            proxy_port,
            spec.allow_no_sandbox,
        ))
        .env_clear()
        .envs(
            ENV_PASSTHROUGH
                .iter()
                .filter_map(|name| std::env::var_os(name).map(|value| (*name, value))),
        )
        .env("HOME", &dirs.home)
        .env("XDG_CONFIG_HOME", dirs.home.join(".config"))
        .env("XDG_CACHE_HOME", dirs.home.join(".cache"))
        .env("XDG_DATA_HOME", dirs.home.join(".local/share"))
        .env("TMPDIR", &dirs.tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    // `uid` also clears the supplementary groups (std calls `setgroups(0)`
    // before `setuid` when no groups are given).
    #[cfg(unix)]
    if let Some(id) = run_as {
        command.uid(id).gid(id);
    }
    let child = command.spawn().map_err(|e| match run_as {
        Some(id) => format!("cannot start Chromium as uid {id}: {e}"),
        None => format!("cannot start Chromium: {e}"),
    })?;
    let mut process = ProcessGuard {
        pgid: child.id(),
        child: Some(child),
        watchdog: None,
        watchdog_stdin: None,
        profile: Some(profile),
    };
    process.start_watchdog();
    Ok(process)
}

/// Reads Chromium's stderr until it names its DevTools endpoint. Chromium exiting
/// first is `browser_unavailable` with the tail of what it said, or the sandbox
/// refusal when that is what it said (and running unsandboxed is not allowed).
async fn await_devtools_url(
    process: &mut ProcessGuard,
    spec: &LaunchSpec<'_>,
    exe: &str,
) -> Result<(String, StderrLines), FetchError> {
    let unavailable = |error: String| FetchError::browser_unavailable(exe, error);
    let stderr = process.child.as_mut().and_then(|c| c.stderr.take());
    let Some(stderr) = stderr else {
        return Err(unavailable("Chromium's stderr is not readable".to_owned()));
    };
    let mut lines = BufReader::new(stderr).lines();
    let mut tail = StderrTail::default();
    let mut sandbox_line: Option<String> = None;
    loop {
        match tokio::time::timeout_at(spec.deadline, lines.next_line()).await {
            Err(_) => {
                return Err(unavailable(format!(
                    "Chromium did not start in time{}",
                    tail.describe()
                )));
            }
            Ok(Ok(Some(line))) => match devtools_url(&line) {
                Some(url) => return Ok((url.to_owned(), lines)),
                None => {
                    if sandbox_line.is_none() && sandbox_failed(&line) {
                        sandbox_line = Some(line.clone());
                    }
                    tail.push(&line);
                }
            },
            Ok(Ok(None)) | Ok(Err(_)) => {
                if let Some(said) = sandbox_line.filter(|_| !spec.allow_no_sandbox) {
                    let message = sandbox_message(&said);
                    tracing::error!(target: "webfetch::browser", event = "browser_no_usable_sandbox", "{message}");
                    return Err(FetchError::browser_sandbox_unavailable(exe, message));
                }
                return Err(unavailable(format!(
                    "Chromium exited during start-up{}",
                    tail.describe()
                )));
            }
        }
    }
}

/// Logs the rest of Chromium's stderr at trace level until it closes.
async fn drain_stderr(mut lines: StderrLines) {
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::trace!(target: "webfetch::browser::chromium", "{line}");
    }
}

/// Connects the CDP client and runs its event loop in a task of its own for the
/// whole session; the watch turns `true` when that loop ends.
async fn connect(
    ws_url: String,
    spec: &LaunchSpec<'_>,
) -> Result<(Browser, Task, watch::Receiver<bool>), String> {
    let config = HandlerConfig {
        ignore_https_errors: false,
        ignore_invalid_messages: true,
        viewport: None,
        context_ids: Vec::new(),
        request_timeout: spec.command_timeout,
        request_intercept: false,
        cache_enabled: false,
    };
    let connect = Browser::connect_with_config(ws_url, config);
    let (browser, mut handler) = match tokio::time::timeout_at(spec.deadline, connect).await {
        Ok(Ok(pair)) => pair,
        Ok(Err(e)) => return Err(format!("cannot connect to DevTools: {e}")),
        Err(_) => return Err("DevTools did not answer in time".to_owned()),
    };
    let (closed_tx, connection_closed) = watch::channel(false);
    let handler = Task::spawn(async move {
        while let Some(event) = handler.next().await {
            if let Err(chromiumoxide::error::CdpError::Ws(error)) = event {
                tracing::debug!(target: "webfetch::browser", %error, "DevTools connection lost");
                break;
            }
        }
        let _ = closed_tx.send(true);
    });
    Ok((browser, handler, connection_closed))
}

/// The profile layout: Chromium's user-data-dir plus a HOME and TMPDIR inside the
/// same temporary directory, so nothing Chromium writes (crash reports, NSS
/// database, font caches, shared-memory files) outlives the call.
struct ProfileDirs {
    user_data: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
}

impl ProfileDirs {
    fn create(root: &Path) -> io::Result<ProfileDirs> {
        let dirs = ProfileDirs {
            user_data: root.join("data"),
            home: root.join("home"),
            tmp: root.join("tmp"),
        };
        for dir in [&dirs.user_data, &dirs.home, &dirs.tmp] {
            std::fs::create_dir(dir)?;
        }
        Ok(dirs)
    }
}

/// The backstop proxy: accepts and closes every connection, so a request that
/// escaped interception fails at once instead of reaching anything.
async fn refuse_all(listener: TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        tracing::debug!(
            target: "webfetch::browser",
            event = "backstop_refused",
            "a Chromium connection escaped interception and was refused"
        );
        drop(stream);
    }
}

/// The last lines Chromium printed before failing, bounded.
#[derive(Default)]
struct StderrTail(Vec<String>);

impl StderrTail {
    const LINES: usize = 8;
    const LINE_CHARS: usize = 300;

    fn push(&mut self, line: &str) {
        if self.0.len() == Self::LINES {
            self.0.remove(0);
        }
        self.0.push(line.chars().take(Self::LINE_CHARS).collect());
    }

    fn describe(&self) -> String {
        if self.0.is_empty() {
            String::new()
        } else {
            format!(": {}", self.0.join(" | "))
        }
    }
}

/// Owns the Chromium process group, the watchdog and the profile directory.
struct ProcessGuard {
    child: Option<Child>,
    pgid: Option<u32>,
    watchdog: Option<Child>,
    watchdog_stdin: Option<ChildStdin>,
    profile: Option<Profile>,
}

/// How long cleanup waits for a killed process before moving on.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// The watchdog (`$1` the Chromium group, `$2` the profile): wait for this
/// process's end, kill the group and whatever still names the profile, delete the
/// profile, retrying while dying processes still write into it. It ignores the
/// signals that end a host (and `cat` inherits that), so a signal sent to the
/// host and the watchdog alike (`pkill -f webfetch`) still leaves it to clean up.
const WATCHDOG_SCRIPT: &str = "trap '' HUP INT QUIT TERM; \
    cat >/dev/null; kill -s KILL -- \"-$1\" 2>/dev/null; \
    [ -n \"$2\" ] || exit 0; \
    for _ in 1 2 3 4 5 6 7 8 9 10; do \
      command -v pkill >/dev/null && pkill -KILL -f -- \"=$2/\"; \
      rm -rf -- \"$2\" 2>/dev/null; [ -e \"$2\" ] || exit 0; sleep 0.2; \
    done";

impl ProcessGuard {
    /// Starts [`WATCHDOG_SCRIPT`] over a pipe: when this process exits for any
    /// reason its end of the pipe closes, `cat` returns, the Chromium group is
    /// killed, then the processes outside it that still name the profile
    /// (crashpad handlers), and the profile is deleted (a process that dies
    /// without unwinding, e.g. with a Chromium parked by the warm standby, leaves
    /// nothing). The watchdog has a process group of its own: a signal to the
    /// host's group (Ctrl-C in a terminal, `timeout`, an agent stopping its tool)
    /// ends the host, not the watchdog. Best effort: without `/bin/sh` there is no
    /// watchdog.
    fn start_watchdog(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            let profile = self
                .profile
                .as_ref()
                .map(|dir| dir.path().display().to_string())
                .unwrap_or_default();
            let spawned = Command::new("/bin/sh")
                .args([
                    "-c",
                    WATCHDOG_SCRIPT,
                    "webfetch-chromium-watchdog",
                    &pgid.to_string(),
                    &profile,
                ])
                .env_clear()
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .process_group(0)
                .spawn();
            match spawned {
                Ok(mut watchdog) => {
                    self.watchdog_stdin = watchdog.stdin.take();
                    self.watchdog = Some(watchdog);
                }
                Err(error) => {
                    tracing::debug!(target: "webfetch::browser", %error, "no Chromium watchdog");
                }
            }
        }
    }

    /// Stops the watchdog without letting it fire (the group is killed here).
    async fn stop_watchdog(&mut self) {
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.start_kill();
            let _ = tokio::time::timeout(REAP_WAIT, watchdog.wait()).await;
        }
        if let Some(mut stdin) = self.watchdog_stdin.take() {
            let _ = stdin.shutdown().await;
        }
    }

    /// Kills the group, reaps Chromium and deletes the profile. The watchdog is
    /// stopped last: until the group is dead and the profile
    /// gone, this process may itself be killed (a host shut down mid-teardown),
    /// and then the watchdog must still do the rest.
    async fn shutdown(&mut self) {
        self.kill_group();
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            if tokio::time::timeout(REAP_WAIT, child.wait()).await.is_err() {
                tracing::warn!(target: "webfetch::browser", "Chromium did not exit after SIGKILL");
            }
        }
        self.finish();
        self.stop_watchdog().await;
    }

    /// SIGKILLs the whole group, once: after this the group id may be reused.
    fn kill_group(&mut self) {
        let pgid = self.pgid.take();
        #[cfg(unix)]
        if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) {
            use nix::sys::signal::{Signal, killpg};
            use nix::unistd::Pid;
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        #[cfg(not(unix))]
        let _ = pgid;
    }

    /// Kills stragglers outside the group, waits until no process that could
    /// still write into the profile is alive, and deletes it.
    fn finish(&mut self) {
        if let Some(profile) = self.profile.take() {
            kill_processes_naming_until_gone(profile.path());
            profile.remove();
        }
    }
}

impl Drop for ProcessGuard {
    /// The panic and cancellation path: no `await` here, so kill, reap what exits
    /// promptly, and delete the profile.
    fn drop(&mut self) {
        self.kill_group();
        if let Some(mut child) = self.child.take() {
            kill_and_reap_briefly(&mut child);
        }
        self.finish();
        // Last, as in `shutdown`; reaped too, so that nothing naming the profile
        // outlives the guard (a busy machine may take a moment to end it).
        if let Some(mut watchdog) = self.watchdog.take() {
            kill_and_reap_briefly(&mut watchdog);
        }
    }
}

/// SIGKILLs `child` and waits up to two seconds for it to exit, without `await`
/// (for [`ProcessGuard`]'s `Drop`).
fn kill_and_reap_briefly(child: &mut Child) {
    let _ = child.start_kill();
    let until = std::time::Instant::now() + Duration::from_secs(2);
    while matches!(child.try_wait(), Ok(None)) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests;
