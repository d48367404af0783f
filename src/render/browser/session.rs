//! One page's life in the browser: navigate, answer every paused request, wait for
//! DOMContentLoaded then network idle, read the DOM (SRD 3.4.3, 3.4.4).
//!
//! A single loop owns the timing: paused requests become handler futures in a
//! `FuturesUnordered` (they borrow the context, nothing is spawned), and the loop
//! watches DOMContentLoaded, the navigation result, crashes and its own timers.
//!
//! Extension (`detect_walls`, FR-WF-11): a page that settles on a bot challenge
//! is not the answer while the call's navigation deadline is ahead. A browser
//! left on a challenge that completes by itself lands on the page, by the
//! challenge's own navigation of the top frame; so the loop keeps the page
//! alive and waits for that navigation, then settles again. The navigation is a
//! main-chain document like any other (redirect count, SSRF, robots.txt,
//! status), and nothing is disguised or solved: the User-Agent is the
//! configured one and no CAPTCHA is answered. A challenge still standing at the
//! deadline is the answer, which the tool refuses as a wall.

use std::time::Duration;

use std::pin::Pin;

use chromiumoxide::cdp::browser_protocol::browser::{
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::fetch::{
    EnableParams as FetchEnableParams, EventRequestPaused, RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{EventLoadingFailed, EventLoadingFinished};
use chromiumoxide::cdp::browser_protocol::page::{
    CreateIsolatedWorldParams, EventDomContentEventFired, FrameId, NavigateParams,
};
use chromiumoxide::cdp::browser_protocol::target::{CreateTargetParams, EventTargetCrashed};
use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, ExecutionContextId};
use chromiumoxide::error::CdpError;
use chromiumoxide::listeners::EventStream;
use chromiumoxide::{Browser, Page};
use futures_util::stream::FuturesUnordered;
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;

use super::idle::{self, IdleState, NetworkIdle, truncate_utf8};
use super::intercept::{Interceptor, Outcome, PhaseBudget};
use super::launch::Chromium;
use super::policy::Paused;
use super::{BrowserPage, RenderContext};
use crate::budget::{Budget, millis};
use crate::config::Settings;
use crate::error::{ErrorCode, FetchError, TimeoutPhase};
use crate::render::wall;

/// How often the DOM size is measured while waiting for idle (DOMSIZE-01).
const DOM_CHECK_EVERY: Duration = Duration::from_millis(500);

/// UTF-16 code units fetched per DOM read call: a chunk is at most a few MB of
/// JSON whatever the content.
const DOM_CHUNK_UNITS: usize = 1 << 20;

/// Bound on reading the DOM once the wait is over.
const DOM_READ_BUDGET: Duration = Duration::from_secs(10);

/// Where the wait stands.
enum Phase {
    /// Until DOMContentLoaded (`timeout_seconds`, phase `browser_navigation`).
    Navigating,
    /// After DOMContentLoaded (`network_idle_ms`, phase `browser_network_idle`).
    Settling {
        dom_content_loaded: Instant,
        idle_end: Instant,
        next_dom_check: Instant,
    },
    /// Extension (`detect_walls`): the page settled on a bot challenge, read as
    /// `challenge`. Until `until`, the call's navigation deadline, the page is
    /// left to complete it by itself: its own navigation of the top frame
    /// brings a DOMContentLoaded, and the wait settles again. At `until` the
    /// challenge is the answer (a wall, not a timeout).
    AwaitingNavigation { until: Instant, challenge: Dom },
}

impl Phase {
    /// Settling from `now`: the document is loaded (DOMContentLoaded, or a
    /// cancelled navigation left it as it is); the network-idle wait begins.
    fn settling(now: Instant, network_idle_ms: u32) -> Phase {
        Phase::Settling {
            dom_content_loaded: now,
            idle_end: idle::idle_end(now, network_idle_ms),
            next_dom_check: now + DOM_CHECK_EVERY,
        }
    }
}

/// Why the page counts as settled.
enum Settled {
    /// Network idle (FR-WF-11e).
    Idle,
    /// The DOM passed `max_rendered_dom_bytes` (DOMSIZE-01: stop waiting).
    DomFull,
}

/// How the wait ended well.
enum Ending {
    /// The page settled: its DOM is read next.
    Settled,
    /// The DOM, read already: with `detect_walls`, the settled page was no bot
    /// challenge, or its challenge still stood at the navigation deadline.
    Read(Dom),
    /// The top document is of a format browser mode never renders.
    NotRendered(BrowserPage),
}

/// A blank page of a fresh Chromium, ready to navigate: downloads denied, every
/// request paused for us (`Fetch.enable` on `*`), the listeners a render needs
/// subscribed. Nothing in it depends on the call, so a standby prepares it while
/// the host is idle; it has loaded nothing but `about:blank`.
pub(crate) struct PreparedPage {
    page: Page,
    events: Events,
    main_frame: FrameId,
}

/// The page's events the loop of [`drive`] watches.
struct Events {
    crashes: EventStream<EventTargetCrashed>,
    paused: EventStream<EventRequestPaused>,
    loaded: EventStream<EventDomContentEventFired>,
    /// Network ids of the requests that finished or failed.
    ended: Pin<Box<dyn Stream<Item = String> + Send>>,
}

/// Prepares the page a render navigates (see [`PreparedPage`]).
pub(crate) async fn prepare(browser: &Browser) -> Result<PreparedPage, CdpError> {
    browser
        .execute(SetDownloadBehaviorParams::new(
            SetDownloadBehaviorBehavior::Deny,
        ))
        .await?;
    let crashes = browser.event_listener::<EventTargetCrashed>().await?;
    let page = browser
        .new_page(CreateTargetParams::new("about:blank"))
        .await?;
    let paused = page.event_listener::<EventRequestPaused>().await?;
    let loaded = page.event_listener::<EventDomContentEventFired>().await?;
    let finished = page.event_listener::<EventLoadingFinished>().await?;
    let failed = page.event_listener::<EventLoadingFailed>().await?;
    let pattern = RequestPattern {
        url_pattern: Some("*".to_owned()),
        resource_type: None,
        request_stage: Some(RequestStage::Request),
    };
    page.execute(FetchEnableParams {
        patterns: Some(vec![pattern]),
        handle_auth_requests: Some(false),
    })
    .await?;
    let main_frame = page
        .mainframe()
        .await?
        .unwrap_or_else(|| FrameId::new(page.target_id().as_ref()));
    let ended = futures_util::stream::select(
        finished.map(|event| event.request_id.inner().clone()),
        failed.map(|event| event.request_id.inner().clone()),
    );
    Ok(PreparedPage {
        page,
        events: Events {
            crashes,
            paused,
            loaded,
            ended: Box::pin(ended),
        },
        main_frame,
    })
}

/// Runs the page, on `prepared` when a standby made it ahead: returns the
/// rendered document or the fetch's error.
pub(crate) async fn run(
    chromium: &Chromium,
    prepared: Option<PreparedPage>,
    ctx: &RenderContext<'_>,
    nav_deadline: Instant,
) -> Result<BrowserPage, FetchError> {
    let settings = &ctx.settings;
    let timeout_ms = settings.timeout_ms();
    // Subscribed before anything can close it.
    let closed = chromium.connection_closed.clone();
    let page_started = Instant::now();
    let prepared = match prepared {
        Some(prepared) => prepared,
        None => match tokio::time::timeout_at(nav_deadline, prepare(&chromium.browser)).await {
            Ok(Ok(prepared)) => prepared,
            Ok(Err(error)) => {
                return Err(cdp_failure(error, &closed_now(&chromium.connection_closed)));
            }
            Err(_) => {
                return Err(FetchError::timeout(
                    timeout_ms,
                    TimeoutPhase::BrowserNavigation,
                ));
            }
        },
    };
    let PreparedPage {
        page,
        mut events,
        main_frame,
    } = prepared;

    let navigation_started = Instant::now();
    let interceptor = Interceptor::new(ctx, page.clone());
    // Dropped after the handlers, on every way out (errors, cancellation too).
    let _summary = SummaryOnDrop(&interceptor);
    let mut wait = Wait::new(nav_deadline, settings);
    let reader = DomReader {
        page: &page,
        frame: &main_frame,
        max_bytes: settings.browser.max_rendered_dom_bytes,
        timeout_ms,
        closed: &chromium.connection_closed,
    };
    // The handlers end with `drive`: nothing may still be fetching for a page
    // we are done with.
    let ending = drive(&mut events, &interceptor, &mut wait, &reader, closed, ctx).await?;
    let settled_at = Instant::now();
    let dom = match ending {
        Ending::NotRendered(page) => return Ok(page),
        Ending::Read(dom) => dom,
        Ending::Settled => reader.read().await?,
    };
    if let Phase::Settling {
        dom_content_loaded, ..
    } = wait.phase
    {
        tracing::debug!(
            target: "webfetch::browser",
            event = "browser_page",
            setup_ms = millis(navigation_started - page_started),
            navigation_ms = millis(dom_content_loaded - navigation_started),
            settle_ms = millis(settled_at - dom_content_loaded),
            dom_read_ms = millis(settled_at.elapsed()),
            dom_bytes = dom.html.len(),
            "browser page timings"
        );
    }
    check_document_url(&dom.href, &interceptor)?;
    let final_url = interceptor
        .final_url()
        .ok_or_else(|| FetchError::internal("the browser rendered no document"))?;
    Ok(BrowserPage {
        final_url,
        html: dom.html,
        dom_truncated: dom.truncated,
        blocked_non_get: interceptor.blocked_non_get() > 0,
        charset_fallback: interceptor.charset_fallback(),
        not_rendered: None,
    })
}

/// The loop: navigates to the page, answers its paused requests and follows
/// its events until the wait ends (see [`Wait`]) or the render fails.
async fn drive(
    events: &mut Events,
    interceptor: &Interceptor<'_>,
    wait: &mut Wait,
    dom: &DomReader<'_>,
    mut closed: watch::Receiver<bool>,
    ctx: &RenderContext<'_>,
) -> Result<Ending, FetchError> {
    let page = dom.page;
    let mut handlers = FuturesUnordered::new();
    let mut navigate = Box::pin(page.execute(NavigateParams::new(ctx.url.as_str())));
    let mut navigated = false;
    loop {
        let wake = wait.wake_at(Instant::now());
        tokio::select! {
            biased;
            _ = closed.changed() => {
                return Err(FetchError::browser_crashed("the browser process went away"));
            }
            Some(crash) = events.crashes.next() => check_crash(&crash, page)?,
            Some(outcome) = handlers.next(), if !handlers.is_empty() => {
                if let Some(ending) = wait.on_handled(outcome)? {
                    return Ok(ending);
                }
            }
            Some(event) = events.paused.next() => {
                wait.network.started();
                let request = Paused::from_event(&event, dom.frame.as_ref());
                handlers.push(interceptor.handle(request, event.request_id.clone(), wait.budget()));
            }
            Some(network_id) = events.ended.next() => {
                // A request that ended follows no `302` of ours any more.
                interceptor.request_ended(&network_id);
            }
            Some(_) = events.loaded.next(), if wait.expects_document() => wait.settle(Instant::now()),
            result = &mut navigate, if !navigated => {
                navigated = true;
                let error_text = result.ok().and_then(|response| response.result.error_text.clone());
                check_navigation(error_text, interceptor)?;
            }
            _ = tokio::time::sleep_until(wake) => {
                if let Some(ending) = wait.on_timer(dom).await? {
                    return Ok(ending);
                }
            }
        }
    }
}

/// Logs the render's one `browser_subrequests` line when the page's life ends,
/// however it ends.
struct SummaryOnDrop<'i, 'a>(&'i Interceptor<'a>);

impl Drop for SummaryOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.log_summary();
    }
}

fn closed_now(closed: &tokio::sync::watch::Receiver<bool>) -> bool {
    *closed.borrow()
}

/// A failed CDP command: the browser is gone (`browser_crashed`), or it refused
/// something we asked (`internal`).
fn cdp_failure(error: CdpError, connection_closed: &bool) -> FetchError {
    if *connection_closed || matches!(error, CdpError::Ws(_) | CdpError::ChannelSendError(_)) {
        FetchError::browser_crashed(error)
    } else {
        FetchError::internal(format!("DevTools: {error}"))
    }
}

/// The loop's clock: where the wait stands (FR-WF-11e, 11f) and what the network
/// is doing. Each method is one arm of the loop in [`drive`].
struct Wait {
    phase: Phase,
    network: NetworkIdle,
    nav_deadline: Instant,
    timeout_ms: u64,
    network_idle_ms: u32,
    /// Extension: a settled page that is a bot challenge waits for its own
    /// navigation ([`Phase::AwaitingNavigation`]).
    detect_walls: bool,
}

impl Wait {
    fn new(nav_deadline: Instant, settings: &Settings) -> Wait {
        Wait {
            phase: Phase::Navigating,
            network: NetworkIdle::new(Instant::now()),
            nav_deadline,
            timeout_ms: settings.timeout_ms(),
            network_idle_ms: settings.browser.network_idle_ms,
            detect_walls: settings.detect_walls,
        }
    }

    fn is_navigating(&self) -> bool {
        matches!(self.phase, Phase::Navigating)
    }

    /// Whether a DOMContentLoaded is what the wait is for: the first document's,
    /// or that of the navigation a challenge makes by itself.
    fn expects_document(&self) -> bool {
        matches!(
            self.phase,
            Phase::Navigating | Phase::AwaitingNavigation { .. }
        )
    }

    /// DOMContentLoaded (or what stands for it): the network-idle wait begins.
    fn settle(&mut self, now: Instant) {
        if let Phase::AwaitingNavigation { .. } = self.phase {
            tracing::debug!(
                target: "webfetch::browser",
                event = "challenge_navigated",
                "the bot challenge navigated the page by itself: settling again"
            );
        }
        self.phase = Phase::settling(now, self.network_idle_ms);
    }

    /// When the loop must next look at its timers.
    fn wake_at(&self, now: Instant) -> Instant {
        match &self.phase {
            Phase::Navigating => self.nav_deadline,
            Phase::Settling {
                dom_content_loaded,
                idle_end,
                next_dom_check,
            } => {
                let idle_at = match self.network.state(now, *dom_content_loaded) {
                    IdleState::WaitUntil(at) => at,
                    IdleState::Idle => now,
                    IdleState::Busy => *idle_end,
                };
                idle_at.min(*idle_end).min(*next_dom_check)
            }
            Phase::AwaitingNavigation { until, .. } => *until,
        }
    }

    /// The budget a paused request is answered within: the phase's deadline.
    fn budget(&self) -> PhaseBudget {
        match &self.phase {
            Phase::Navigating => PhaseBudget {
                budget: Budget::new(self.nav_deadline, self.timeout_ms),
                phase: TimeoutPhase::BrowserNavigation,
            },
            Phase::Settling { idle_end, .. } => PhaseBudget {
                budget: Budget::new(*idle_end, u64::from(self.network_idle_ms)),
                phase: TimeoutPhase::BrowserNetworkIdle,
            },
            Phase::AwaitingNavigation { until, .. } => PhaseBudget {
                budget: Budget::new(*until, self.timeout_ms),
                phase: TimeoutPhase::BrowserNavigation,
            },
        }
    }

    /// A paused request was answered: the render's answer when the request ended
    /// it (a document not to render, or a challenge's navigation out of time),
    /// its error when it failed it.
    fn on_handled(&mut self, outcome: Outcome) -> Result<Option<Ending>, FetchError> {
        let now = Instant::now();
        self.network.finished(now);
        match outcome {
            Outcome::Fatal(error) if self.challenge_out_of_budget(&error) => {
                Ok(self.challenge_stands())
            }
            Outcome::Fatal(error) => Err(error),
            // A PDF (or JSON, a feed, publisher Markdown) is never
            // rendered; the document the client fetched is the answer.
            Outcome::NotRendered(document) => Ok(Some(Ending::NotRendered(BrowserPage {
                final_url: document.final_url.clone(),
                html: String::new(),
                dom_truncated: false,
                blocked_non_get: false,
                charset_fallback: false,
                not_rendered: Some(document),
            }))),
            // A form POST while the page was loading: the page as it is now is the
            // answer, settled like after DOMContentLoaded (SRD-READINGS 23), not a
            // wait for an event the cancelled navigation took away.
            Outcome::NavigationCancelled if self.is_navigating() => {
                self.settle(now);
                Ok(None)
            }
            Outcome::NavigationCancelled | Outcome::Answered => Ok(None),
        }
    }

    /// A timer fired: the wait's end (see [`Wait::on_settled`]), a timeout
    /// (FR-WF-11f: no partial DOM), or nothing yet.
    async fn on_timer(&mut self, dom: &DomReader<'_>) -> Result<Option<Ending>, FetchError> {
        let now = Instant::now();
        match &self.phase {
            Phase::Navigating if now >= self.nav_deadline => Err(FetchError::timeout(
                self.timeout_ms,
                TimeoutPhase::BrowserNavigation,
            )),
            Phase::Navigating => Ok(None),
            Phase::AwaitingNavigation { until, .. } if now >= *until => Ok(self.challenge_stands()),
            Phase::AwaitingNavigation { .. } => Ok(None),
            Phase::Settling { .. } => match self.settling_timer(now, dom).await? {
                Some(settled) => self.on_settled(settled, dom).await,
                None => Ok(None),
            },
        }
    }

    /// While settling: network idle, a DOM over the limit (DOMSIZE-01), the idle
    /// cap's timeout, or nothing yet.
    async fn settling_timer(
        &mut self,
        now: Instant,
        dom: &DomReader<'_>,
    ) -> Result<Option<Settled>, FetchError> {
        let Phase::Settling {
            dom_content_loaded,
            idle_end,
            next_dom_check,
        } = &mut self.phase
        else {
            return Ok(None);
        };
        if self.network.state(now, *dom_content_loaded) == IdleState::Idle {
            return Ok(Some(Settled::Idle));
        }
        if now >= *idle_end {
            return Err(FetchError::timeout(
                u64::from(self.network_idle_ms),
                TimeoutPhase::BrowserNetworkIdle,
            ));
        }
        if now >= *next_dom_check {
            *next_dom_check = now + DOM_CHECK_EVERY;
            if dom.size().await.is_some_and(|size| size > dom.max_bytes) {
                return Ok(Some(Settled::DomFull));
            }
        }
        Ok(None)
    }

    /// The page settled: the wait ends. Extension (`detect_walls`): the DOM is
    /// read now, and a bot challenge is not the answer while the navigation
    /// deadline is ahead; the wait turns to the page's own navigation
    /// ([`Phase::AwaitingNavigation`]), as a browser left on it would.
    async fn on_settled(
        &mut self,
        settled: Settled,
        dom: &DomReader<'_>,
    ) -> Result<Option<Ending>, FetchError> {
        if let Settled::DomFull = settled {
            tracing::debug!(target: "webfetch::browser", "DOM over max_rendered_dom_bytes: extracting now");
        }
        if !self.detect_walls {
            return Ok(Some(Ending::Settled));
        }
        let read = dom.read().await?;
        if Instant::now() >= self.nav_deadline || !wall::is_challenge_dom(&read.html) {
            return Ok(Some(Ending::Read(read)));
        }
        tracing::debug!(
            target: "webfetch::browser",
            event = "challenge_awaiting_navigation",
            "the page settled on a bot challenge: waiting for its own navigation"
        );
        self.phase = Phase::AwaitingNavigation {
            until: self.nav_deadline,
            challenge: read,
        };
        Ok(None)
    }

    /// Whether `error`, which ended a navigation the page made while showing a
    /// bot challenge, means the challenge can not complete within the call's
    /// budget: its document did not come before the deadline (`timeout`), or
    /// the page navigated past `max_redirects` (a challenge that reloads itself,
    /// waiting for a clearance cookie webfetch never sends). Nothing past the
    /// limit was fetched; the challenge stands, and the model learns it met a
    /// wall rather than a timeout or a redirect loop. Any other refusal of the
    /// navigation (robots.txt, SSRF, a status) is the call's error, as for any
    /// main-chain document.
    fn challenge_out_of_budget(&self, error: &FetchError) -> bool {
        matches!(self.phase, Phase::AwaitingNavigation { .. })
            && matches!(error.code, ErrorCode::Timeout | ErrorCode::RedirectLimit)
    }

    /// The challenge the page still shows when its wait ends (see
    /// [`Phase::AwaitingNavigation`]), as the answer (the tool refuses it as a
    /// wall); `None` in any other phase.
    fn challenge_stands(&mut self) -> Option<Ending> {
        match std::mem::replace(&mut self.phase, Phase::Navigating) {
            Phase::AwaitingNavigation { challenge, .. } => {
                tracing::debug!(
                    target: "webfetch::browser",
                    event = "challenge_stands",
                    "the bot challenge did not navigate by the deadline"
                );
                Some(Ending::Read(challenge))
            }
            other => {
                self.phase = other;
                None
            }
        }
    }
}

/// A renderer crashed: the render's end when it was this page's.
fn check_crash(crash: &EventTargetCrashed, page: &Page) -> Result<(), FetchError> {
    if crash.target_id == *page.target_id() {
        return Err(FetchError::browser_crashed(format!(
            "the page's renderer crashed ({}, code {})",
            crash.status, crash.error_code
        )));
    }
    Ok(())
}

/// `Page.navigate` answered: an error text means the navigation failed, with the
/// interceptor's own error for it when it has one.
fn check_navigation(
    error_text: Option<String>,
    interceptor: &Interceptor<'_>,
) -> Result<(), FetchError> {
    match error_text.filter(|text| !text.is_empty()) {
        Some(text) => Err(interceptor
            .take_fatal()
            .unwrap_or_else(|| FetchError::network(text))),
        None => Ok(()),
    }
}

/// SRD-READINGS 22: the document we return must be a web document the main chain
/// loaded, never Chromium's error page or a `data:`/`blob:`/`about:` document.
fn check_document_url(href: &str, interceptor: &Interceptor<'_>) -> Result<(), FetchError> {
    let scheme = url::Url::parse(href)
        .map(|u| u.scheme().to_owned())
        .unwrap_or_default();
    match scheme.as_str() {
        "http" | "https" => Ok(()),
        "chrome-error" => Err(interceptor
            .take_fatal()
            .unwrap_or_else(|| FetchError::network("the page failed to load"))),
        other => Err(FetchError::invalid_scheme(other)),
    }
}

/// The rendered DOM.
struct Dom {
    html: String,
    truncated: bool,
    /// `location.href` of the top frame.
    href: String,
}

/// The page's top frame, read and measured for the loop and after it.
struct DomReader<'p> {
    page: &'p Page,
    frame: &'p FrameId,
    /// `max_rendered_dom_bytes` (FR-WF-11d).
    max_bytes: u64,
    /// `timeout_seconds` in ms, which a read past [`DOM_READ_BUDGET`] reports.
    timeout_ms: u64,
    closed: &'p watch::Receiver<bool>,
}

impl DomReader<'_> {
    /// The DOM, at most `max_bytes` of it (DOMSIZE-02), within
    /// [`DOM_READ_BUDGET`].
    async fn read(&self) -> Result<Dom, FetchError> {
        let read = read_dom(self.page, self.frame, self.max_bytes);
        match tokio::time::timeout(DOM_READ_BUDGET, read).await {
            Ok(Ok(dom)) => Ok(dom),
            Ok(Err(error)) => Err(cdp_failure(error, &closed_now(self.closed))),
            Err(_) => Err(FetchError::timeout(
                self.timeout_ms,
                TimeoutPhase::unknown(),
            )),
        }
    }

    /// The DOM's size in UTF-8 bytes (DOMSIZE-01), when it can be measured now.
    async fn size(&self) -> Option<u64> {
        dom_size(self.page, self.frame, self.max_bytes).await
    }
}

/// JavaScript that sets `bytes` to the UTF-8 length of the well-formed string
/// `html`, without building the encoding (shared by the two scripts below).
macro_rules! utf8_length_js {
    () => {
        r#"
  let bytes = 0;
  for (let i = 0; i < html.length; i++) {
    const c = html.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xD800 && c <= 0xDBFF) { bytes += 4; i++; }
    else bytes += 3;
  }
"#
    };
}

/// JavaScript run in our isolated world (pristine built-ins, the page's DOM):
/// serialises the DOM once, makes it well-formed UTF-16 (a lone surrogate would
/// break the JSON transport) and measures its UTF-8 length (DOMSIZE-01).
const PREPARE_DOM: &str = concat!(
    r#"(() => {
  const root = document.documentElement;
  let html = root ? root.outerHTML : '';
  html = typeof html.toWellFormed === 'function'
    ? html.toWellFormed()
    : html.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  globalThis.__webfetchDom = html;
"#,
    utf8_length_js!(),
    r#"  return [html.length, bytes, String(location.href)];
})()"#
);

/// The UTF-8 size of the DOM; when three bytes per UTF-16 unit stay under the
/// limit (`LIMIT`, substituted) the unit count is answer enough.
const DOM_SIZE: &str = concat!(
    r#"(() => {
  const root = document.documentElement;
  const html = root ? root.outerHTML : '';
  if (html.length * 3 <= LIMIT) return html.length;
"#,
    utf8_length_js!(),
    r#"  return bytes;
})()"#
);

async fn isolated_world(page: &Page, frame: &FrameId) -> Result<ExecutionContextId, CdpError> {
    let mut params = CreateIsolatedWorldParams::new(frame.clone());
    params.world_name = Some("webfetch".to_owned());
    Ok(page.execute(params).await?.result.execution_context_id)
}

async fn evaluate(
    page: &Page,
    context: ExecutionContextId,
    expression: String,
) -> Result<Value, CdpError> {
    let mut params = EvaluateParams::new(expression);
    params.context_id = Some(context);
    params.return_by_value = Some(true);
    let returns = page.execute(params).await?.result;
    if let Some(exception) = returns.exception_details {
        return Err(CdpError::msg(format!(
            "DOM script failed: {}",
            exception.text
        )));
    }
    Ok(returns.result.value.unwrap_or(Value::Null))
}

/// The current DOM size in UTF-8 bytes, or `None` when it cannot be measured now
/// (e.g. mid-navigation); the next check tries again.
async fn dom_size(page: &Page, frame: &FrameId, limit: u64) -> Option<u64> {
    let context = isolated_world(page, frame).await.ok()?;
    let script = DOM_SIZE.replace("LIMIT", &limit.to_string());
    evaluate(page, context, script).await.ok()?.as_u64()
}

/// Reads `outerHTML` in chunks, keeping at most `max_bytes` (DOMSIZE-02): the
/// truncated prefix ends at a UTF-8 boundary; the cut is reported, never hidden.
async fn read_dom(page: &Page, frame: &FrameId, max_bytes: u64) -> Result<Dom, CdpError> {
    let context = isolated_world(page, frame).await?;
    let prepared = evaluate(page, context, PREPARE_DOM.to_owned()).await?;
    let shape = || CdpError::msg("unexpected DOM script result");
    let units = prepared.get(0).and_then(Value::as_u64).ok_or_else(shape)?;
    let bytes = prepared.get(1).and_then(Value::as_u64).ok_or_else(shape)?;
    let href = prepared
        .get(2)
        .and_then(Value::as_str)
        .ok_or_else(shape)?
        .to_owned();
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let mut html = String::with_capacity(usize::try_from(bytes.min(max_bytes)).unwrap_or(0));
    let mut start = 0u64;
    while start < units && html.len() < max {
        let script = format!(
            "(() => {{ const s = globalThis.__webfetchDom; let e = Math.min(s.length, {start} + {DOM_CHUNK_UNITS}); \
             if (e < s.length) {{ const c = s.charCodeAt(e - 1); if (c >= 0xD800 && c <= 0xDBFF) e -= 1; }} \
             return [e, s.substring({start}, e)]; }})()"
        );
        let chunk = evaluate(page, context, script).await?;
        let end = chunk.get(0).and_then(Value::as_u64).ok_or_else(shape)?;
        let text = chunk.get(1).and_then(Value::as_str).ok_or_else(shape)?;
        if end <= start {
            return Err(shape());
        }
        html.push_str(text);
        start = end;
    }
    let _ = evaluate(page, context, "delete globalThis.__webfetchDom".to_owned()).await;
    let truncated = truncate_utf8(&mut html, max) || bytes > max_bytes;
    Ok(Dom {
        html,
        truncated,
        href,
    })
}
