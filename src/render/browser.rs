//! Browser mode (SRD 3.4.3 .. 3.4.5, Appendix G): headless Chromium over CDP where
//! every request the page makes passes the same SSRF gate as HTTP mode.
//!
//! [`render`] launches a fresh Chromium for the call, navigates one page while
//! answering every paused request through the pinned [`HttpClient`], waits for
//! DOMContentLoaded and network idle, reads the DOM under its size cap, and tears
//! everything down.
//!
//! # Security model
//!
//! Nothing leaves the browser by its own networking. Two layers:
//!
//! 1. **Interception (BSSR-01 Option A).** The page target's CDP Fetch domain
//!    pauses every request; each is checked in Appendix G's order (scheme, method,
//!    `block_resources`, subresource budget) and then fetched by the same pinned
//!    client as HTTP mode (port, SSRF ranges, one resolution, pinned connect,
//!    TLS verified against the host), or failed with `BlockedByClient`. Only
//!    `Accept` and `Referer` are forwarded; cookies and credentials never are.
//!    Site isolation is off, so cross-site iframes run in the page's renderer and
//!    are intercepted with it; dedicated workers' requests are intercepted too.
//! 2. **Fail-closed backstop.** Chromium's own network stack can reach nothing:
//!    every connection goes to a local proxy that closes it at once
//!    (`--proxy-server`, with `--proxy-bypass-list=<-loopback>` so loopback is not
//!    exempt), and every host name resolves to nothing
//!    (`--host-resolver-rules=MAP * ~NOTFOUND`). So whatever escapes interception
//!    fails instead of leaking.
//!
//! The known gaps of Fetch interception, and what closes each (tested by outcome in
//! `tests/browser.rs`):
//!
//! | gap | closed by |
//! | --- | --- |
//! | WebSocket handshakes (never paused) | CSP `connect-src http: https:` refuses `ws:`/`wss:`; the backstop refuses the connection (BSSR-WS-01 Option A, no note) |
//! | `data:`, `blob:`, `filesystem:` loads (never paused) | a CSP added to every fulfilled response: `*` matches network schemes only |
//! | `file:` | Chromium refuses it from web pages; the CSP; the scheme check |
//! | WebRTC / STUN over UDP | `--force-webrtc-ip-handling-policy=disable_non_proxied_udp` |
//! | DNS prefetch, preconnect | host resolver maps everything to NOTFOUND; connections meet the backstop |
//! | service workers (script fetched outside the page target) | backstop: registration fails |
//! | popups, prerenders, other targets | not intercepted, so backstop; popups blocked; Prerender2 off |
//! | background services (updates, sync, safe browsing, metrics) | `--disable-background-networking` and friends; backstop |
//! | downloads | `Browser.setDownloadBehavior(deny)`; non-HTML main documents are refused, or with `[tools.webfetch.content] formats` handed back unrendered |
//! | HSTS, Alt-Svc, reporting endpoints, cookies | those response headers are dropped before fulfilling |
//! | http to https upgrades | `HttpsUpgrades` off, so the URL checked is the URL loaded |
//!
//! Top-frame navigations of any kind (redirects, `location = ...`, meta refresh)
//! form the main chain: counted toward `max_redirects`, SSRF-checked, robots.txt
//! checked, and any refusal fails the fetch (SRD-READINGS 22). A non-GET top-frame
//! navigation is cancelled and noted (SRD-READINGS 23).
//!
//! robots.txt applies to that chain only (ROBOTS-SCOPE-01): iframe and frame
//! documents pass every other check but are not robots-checked, so a page robots.txt
//! allows can show a disallowed path in a frame. With `[tools.webfetch.browser]
//! robots_for_frames = true` (the default of `webfetch mcp` and `serve`)
//! every frame document and each of its redirect hops is checked through the same
//! robots hook as the main chain, and a refused one is failed without failing the
//! call. Scripts, XHR, fetch, images and other subresources are never
//! robots-checked.
//!
//! **Chromium's sandbox stays on.** A renderer exploit in a hostile page must not
//! become native code with this process's network reach. Chromium will not
//! sandbox itself as root, so when this process is root Chromium is started as
//! `nobody` (uid and gid 65534, supplementary groups cleared), owning its private
//! profile; the profile root must let `nobody` pass through (`/dev/shm` and the
//! system temp dir do). Its renderers then run in Chromium's namespace sandbox (a
//! user, PID and network namespace of their own, so not even 127.0.0.1 is
//! reachable from them) under its seccomp-BPF filter, which
//! `tests/it/browser_launch.rs` checks in `/proc` during a render. `--no-sandbox`
//! is passed only with `[tools.webfetch.browser] allow_no_sandbox = true`, and
//! each such launch logs a warning. Where the kernel cannot give Chromium a
//! sandbox (no unprivileged user namespaces, e.g. `user.max_user_namespaces = 0`
//! or a container seccomp profile that forbids them, and no SUID helper), Chromium
//! exits at start-up saying so, and the render is `browser_unavailable` with a
//! message naming the kernel settings and that switch (and an error log).
//! Chromium older than 100 (FR-WF-11 step 3) is refused after connecting, by
//! `Browser.getVersion`, with the version in `details.version`.
//!
//! **DevTools on a loopback port.** chromiumoxide 0.9 speaks CDP only over a
//! WebSocket on TCP, so `--remote-debugging-pipe` is not used: Chromium listens on
//! 127.0.0.1 at a port the kernel picks, for one call's lifetime (seconds). It has
//! no authentication: any local process that connects can drive the browser (read
//! or alter the page being rendered, and so the result). What limits it: the
//! listener is loopback only and Chromium checks `Host` (no DNS rebinding) and
//! refuses WebSocket upgrades that carry an `Origin` (no web page can connect);
//! the `DevToolsActivePort` file is inside the 0700 profile; the port is random and
//! lives for one call, but is visible to local users in `/proc/net/tcp`, so that is
//! no secret; a driven browser still has no network of its own (the fail-closed
//! proxy and resolver) and runs unprivileged; a sandboxed renderer cannot reach
//! the port at all (its network namespace is empty). Putting the browser process
//! itself in a private network namespace would need the pipe (or a Unix socket)
//! for CDP: pipe support is an open pull request upstream
//! (mattsse/chromiumoxide#325). Hosts with untrusted local users should run the
//! agent in its own network namespace or container.
//!
//! Isolation (BROWSER-ISO-01): a new profile per call (RAM-backed when `/dev/shm`
//! is writable) holding Chromium's user-data-dir, HOME and TMPDIR, deleted after
//! the call; Chromium runs in its own process group with a scrubbed environment
//! and is killed as a group on success, error, timeout, cancellation and panic; a
//! watchdog kills the group if this process dies without unwinding.
//!
//! [`HttpClient`]: crate::transport::HttpClient

mod idle;
mod intercept;
mod launch;
mod policy;
mod profile;
mod replay;
mod session;
pub(crate) mod standby;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::budget::{Budget, millis};
use crate::canonical_url::CanonicalUrl;
use crate::config::Settings;
use crate::error::{FetchError, TimeoutPhase};
use crate::pass::Pass;
use crate::transport::{GetOptions, HopHook, HttpClient};
use tokio::sync::Semaphore;
use tracing::Instrument;

pub(crate) use self::standby::Standby;

/// Time allowed for Chromium to start and answer DevTools. It comes out of
/// FR-WF-TIMEOUT-01's `page_load_buffer_s` (5 s), not out of `timeout_seconds`.
pub(crate) const LAUNCH_BUDGET: Duration = Duration::from_secs(5);

/// What one browser render needs.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct RenderContext<'a> {
    /// The configuration; the same the client runs with.
    pub settings: Arc<Settings>,
    /// The pinned client every request of the page goes through (BSSR-01 A).
    pub client: &'a HttpClient,
    /// The tool call this render belongs to: every request of the page connects to
    /// the addresses its hosts were validated with once (FR-WF-DNS-01 step 3).
    pub pass: Pass,
    /// The page to render.
    pub url: &'a CanonicalUrl,
    /// robots.txt for every document of the top frame's chain: the page itself
    /// (checked before Chromium starts), redirects and script or markup
    /// navigations (ROBOTS-SCOPE-01, SRD-READINGS 22). With `robots_for_frames`
    /// also for every document of an iframe or frame and each of its
    /// redirect hops. Never called for other subresources.
    pub robots_hook: Option<&'a dyn HopHook>,
    /// Deadline for the navigation (DOMContentLoaded), normally `timeout_seconds`
    /// from the start of this render, not counting the robots.txt check of the
    /// page; the idle wait after it has its own budget, `network_idle_ms`
    /// (FR-WF-11e, FR-WF-TIMEOUT-01).
    pub deadline: Instant,
    /// Where temporary profiles are created; when `None`, `/dev/shm` on Linux if
    /// writable, else the system temp dir. Run as root, `nobody` must be able to
    /// pass through it (e.g. mode 0711), since Chromium runs as `nobody`.
    pub profile_root: Option<PathBuf>,
    /// A long-lived host's warm standby: take its parked Chromium, park the next.
    pub standby: Option<&'a Standby>,
    /// Extension: the host's cap on concurrent renders (`max_concurrent_renders`).
    /// A slot is taken after the page passed its checks and the browser was
    /// found, and waited for within the navigation deadline; past it, `timeout`.
    pub render_slots: Option<&'a Semaphore>,
}

impl<'a> RenderContext<'a> {
    /// A context with the client's settings, a pass of its own, no robots hook,
    /// and the default profile location.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(
        client: &'a HttpClient,
        url: &'a CanonicalUrl,
        deadline: Instant,
    ) -> RenderContext<'a> {
        let settings = Arc::clone(client.settings());
        RenderContext {
            pass: Pass::new(),
            settings,
            client,
            url,
            robots_hook: None,
            deadline,
            profile_root: None,
            standby: None,
            render_slots: None,
        }
    }

    /// Renders only with a slot of `slots` (see [`RenderContext::render_slots`]).
    pub(crate) fn with_render_slots(mut self, slots: &'a Semaphore) -> RenderContext<'a> {
        self.render_slots = Some(slots);
        self
    }

    /// Renders with `standby`'s parked Chromium when it has one, and parks the
    /// next after the render (a long-lived host; see [`Standby`]).
    pub(crate) fn with_standby(mut self, standby: &'a Standby) -> RenderContext<'a> {
        self.standby = Some(standby);
        self
    }

    /// Renders within the tool call's `pass`.
    pub(crate) fn with_pass(mut self, pass: &Pass) -> RenderContext<'a> {
        self.pass = pass.clone();
        self
    }

    /// Sets the robots.txt hook (see [`RenderContext::robots_hook`]).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn with_robots_hook(mut self, hook: &'a dyn HopHook) -> RenderContext<'a> {
        self.robots_hook = Some(hook);
        self
    }

    /// Creates temporary profiles under `root` instead of the default location.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn with_profile_root(mut self, root: PathBuf) -> RenderContext<'a> {
        self.profile_root = Some(root);
        self
    }
}

/// A rendered page, ready for the same extraction as an HTTP document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct BrowserPage {
    /// The last document of the top frame's chain (FR-WF-RESP-METHOD-01).
    pub final_url: CanonicalUrl,
    /// `document.documentElement.outerHTML`, at most `max_rendered_dom_bytes`
    /// (FR-WF-11d, DOMSIZE-02).
    pub html: String,
    /// The DOM was cut: add the `browser_dom_truncated` note.
    pub dom_truncated: bool,
    /// A non-GET/HEAD request was failed: add the `browser_blocked_non_get` note
    /// (BROWSER-METHOD-01 step 3).
    pub blocked_non_get: bool,
    /// The top document declared no supported charset and was handed to Chromium
    /// as UTF-8: add the `charset_fallback` note, as HTTP mode does
    /// (SRD-READINGS 31).
    pub charset_fallback: bool,
    /// Extension: the top document is of a format Chromium never
    /// renders (a PDF, JSON, a feed, publisher Markdown), as the pinned client
    /// fetched it; `html` is empty. The caller reads it as HTTP mode does.
    pub not_rendered: Option<Box<crate::render::FetchedDocument>>,
}

/// Renders `ctx.url` in a fresh headless Chromium (FR-WF-11).
///
/// The page's own URL passes the client's checks first (port, SSRF, one
/// resolution, robots.txt), before Chromium starts (Appendix B: SSRFCheck and
/// RobotsCheck precede rendering): a refused page never launches a browser.
///
/// Extension (`detect_walls`): a page that settles on a bot challenge is left,
/// until the navigation deadline, to complete it by its own navigation, as a
/// browser would; the challenge still standing then is the page returned, which
/// the tool refuses as a wall (see `session.rs`).
///
/// Errors: `browser_unavailable` when browser mode is disabled, no Chromium is
/// found, or it fails to start (FR-WF-11a); `browser_crashed` when it dies
/// mid-render; `timeout` with phase `browser_navigation` or `browser_network_idle`
/// (FR-WF-11f); and any error of the top frame's chain (`ssrf_blocked`,
/// `robots_disallowed`, `redirect_limit`, `http_4xx`, ...). The Chromium process
/// group and the temporary profile are gone when this returns, and also when the
/// future is dropped or a panic unwinds through it (BROWSER-ISO-01).
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) async fn render(ctx: &RenderContext<'_>) -> Result<BrowserPage, FetchError> {
    let admitted = admit(ctx).await?;
    let browser = &ctx.settings.browser;
    let configured = browser.chromium_path.as_deref();
    if !browser.enabled {
        return Err(FetchError::browser_unavailable(
            &configured
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            "browser mode is disabled (browser.enabled = false)",
        ));
    }
    let spec = standby::SpareSpec {
        executable: launch::resolve_executable(configured, std::env::var_os("PATH"))?,
        user_agent: ctx.settings.user_agent.clone(),
        profile_root: ctx.profile_root.clone(),
        command_timeout: Duration::from_secs(u64::from(ctx.settings.timeout_seconds))
            + Duration::from_millis(u64::from(browser.network_idle_ms))
            + LAUNCH_BUDGET,
        allow_no_sandbox: browser.allow_no_sandbox,
    };
    let _slot = match ctx.render_slots {
        Some(slots) => Some(
            tokio::time::timeout_at(admitted.deadline(), slots.acquire())
                .await
                .ok()
                .and_then(Result::ok)
                .ok_or_else(|| {
                    FetchError::timeout(ctx.settings.timeout_ms(), TimeoutPhase::BrowserNavigation)
                })?,
        ),
        None => None,
    };
    let started = Instant::now();
    let spare = match ctx.standby {
        Some(standby) => standby.take(&spec).await,
        None => None,
    };
    let from_standby = spare.is_some();
    let (chromium, prepared) = match spare {
        Some(parked) => parked,
        None => (
            launch::Chromium::launch(&spec.launch_spec(started)).await?,
            None,
        ),
    };
    let launched = Instant::now();
    let page_prepared = prepared.is_some();
    let nav_deadline = admitted.deadline() + (launched - started).min(LAUNCH_BUDGET);
    let outcome = session::run(&chromium, prepared, ctx, nav_deadline).await;
    let rendered = Instant::now();
    tracing::debug!(
        target: "webfetch::browser",
        event = "browser_render",
        url = %ctx.url.redacted(),
        ok = outcome.is_ok(),
        from_standby,
        page_prepared,
        launch_ms = millis(launched - started),
        page_ms = millis(rendered - launched),
        "browser render timings"
    );
    match ctx.standby {
        // A long-lived host: the used Chromium is torn down and the next one
        // launched after the answer, off the call's path (the profile is gone a
        // moment after the call returns, and nothing of it serves another call).
        Some(standby) => {
            let reserved = standby.reserve().await;
            let teardown = async move {
                chromium.shutdown().await;
                if let Some(reserved) = reserved {
                    reserved.fill(spec).await;
                }
            };
            tokio::spawn(teardown.in_current_span());
        }
        None => chromium.shutdown().await,
    }
    outcome
}

/// The client's checks of the page's own URL, under the navigation budget; the
/// budget comes back moved by the time robots.txt took (SRD-READINGS 26).
async fn admit(ctx: &RenderContext<'_>) -> Result<Budget, FetchError> {
    let mut opts = GetOptions::new(
        Budget::new(ctx.deadline, ctx.settings.timeout_ms()),
        ctx.settings.max_download_bytes,
    );
    opts.hook = ctx.robots_hook;
    opts.pass = Some(&ctx.pass);
    opts.polite = true;
    ctx.client.admit(ctx.url, &opts).await
}

/// Whether a render could start now: browser mode is enabled and a Chromium
/// executable is found. It does not launch one, so a Chromium that fails to start
/// still ends a render with `browser_unavailable`.
pub(crate) fn is_available(settings: &Settings) -> bool {
    let browser = &settings.browser;
    browser.enabled
        && launch::resolve_executable(browser.chromium_path.as_deref(), std::env::var_os("PATH"))
            .is_ok()
}
