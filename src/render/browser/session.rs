//! One page's life in the browser: navigate, answer every paused request, wait for
//! DOMContentLoaded then network idle, read the DOM (SRD 3.4.3, 3.4.4).
//!
//! A single loop owns the timing: paused requests become handler futures in a
//! `FuturesUnordered` (they borrow the context, nothing is spawned), and the loop
//! watches DOMContentLoaded, the navigation result, crashes and its own timers.

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
use tokio::time::Instant;

use super::idle::{self, IdleState, NetworkIdle, truncate_utf8};
use super::intercept::{Interceptor, Outcome, PhaseBudget};
use super::launch::Chromium;
use super::policy::Paused;
use super::{BrowserPage, RenderContext};
use crate::budget::{Budget, millis};
use crate::error::{FetchError, TimeoutPhase};

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

/// Why the wait ended well.
enum Settled {
    /// Network idle (FR-WF-11e).
    Idle,
    /// The DOM passed `max_rendered_dom_bytes` (DOMSIZE-01: stop waiting).
    DomFull,
}

/// A blank page of a fresh Chromium, ready to navigate: downloads denied, every
/// request paused for us (`Fetch.enable` on `*`), the listeners a render needs
/// subscribed. Nothing in it depends on the call, so a standby prepares it while
/// the host is idle (issue 15); it has loaded nothing but `about:blank`.
pub(crate) struct PreparedPage {
    page: Page,
    crashes: EventStream<EventTargetCrashed>,
    paused: EventStream<EventRequestPaused>,
    loaded: EventStream<EventDomContentEventFired>,
    /// Network ids of the requests that finished or failed.
    ended: Pin<Box<dyn Stream<Item = String> + Send>>,
    main_frame: FrameId,
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
        crashes,
        paused,
        loaded,
        ended: Box::pin(ended),
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
    let nav_timeout = || FetchError::timeout(timeout_ms, TimeoutPhase::BrowserNavigation);
    let browser = &chromium.browser;
    let mut closed = chromium.connection_closed.clone();
    let cdp = |error: CdpError| cdp_failure(error, &closed_now(&chromium.connection_closed));

    let page_started = Instant::now();
    let prepared = match prepared {
        Some(prepared) => prepared,
        None => match tokio::time::timeout_at(nav_deadline, prepare(browser)).await {
            Ok(Ok(prepared)) => prepared,
            Ok(Err(error)) => return Err(cdp(error)),
            Err(_) => return Err(nav_timeout()),
        },
    };
    let PreparedPage {
        page,
        mut crashes,
        mut paused,
        mut loaded,
        mut ended,
        main_frame,
    } = prepared;

    let navigation_started = Instant::now();
    let interceptor = Interceptor::new(ctx, page.clone());
    // Dropped after the handlers, on every way out (errors, cancellation too).
    let _summary = SummaryOnDrop(&interceptor);
    let mut handlers = FuturesUnordered::new();
    let mut wait = Wait::new(nav_deadline, timeout_ms, settings.browser.network_idle_ms);
    let mut navigate = Box::pin(page.execute(NavigateParams::new(ctx.url.as_str())));
    let mut navigated = false;
    let dom_limit = settings.browser.max_rendered_dom_bytes;

    let settled = loop {
        let wake = wait.wake_at(Instant::now());
        tokio::select! {
            biased;
            _ = closed.changed() => {
                return Err(FetchError::browser_crashed("the browser process went away"));
            }
            Some(crash) = crashes.next() => check_crash(&crash, &page)?,
            Some(outcome) = handlers.next(), if !handlers.is_empty() => {
                if let Some(answer) = wait.on_handled(outcome)? {
                    return Ok(answer);
                }
            }
            Some(event) = paused.next() => {
                wait.network.started();
                let request = Paused::from_event(&event, main_frame.as_ref());
                handlers.push(interceptor.handle(request, event.request_id.clone(), wait.budget()));
            }
            Some(network_id) = ended.next() => {
                // A request that ended follows no `302` of ours any more.
                interceptor.request_ended(&network_id);
            }
            Some(_) = loaded.next(), if wait.is_navigating() => wait.settle(Instant::now()),
            result = &mut navigate, if !navigated => {
                navigated = true;
                let error_text = result.ok().and_then(|response| response.result.error_text.clone());
                check_navigation(error_text, &interceptor)?;
            }
            _ = tokio::time::sleep_until(wake) => {
                if let Some(settled) = wait.on_timer(&page, &main_frame, dom_limit).await? {
                    break settled;
                }
            }
        }
    };
    let settled_at = Instant::now();
    if let Settled::DomFull = settled {
        tracing::debug!(target: "webfetch::browser", "DOM over max_rendered_dom_bytes: extracting now");
    }
    // Nothing may still be fetching for a page we are done with.
    drop(handlers);

    let read = read_dom(&page, &main_frame, settings.browser.max_rendered_dom_bytes);
    let dom = match tokio::time::timeout(DOM_READ_BUDGET, read).await {
        Ok(Ok(dom)) => dom,
        Ok(Err(error)) => return Err(cdp(error)),
        Err(_) => return Err(FetchError::timeout(timeout_ms, TimeoutPhase::unknown())),
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
/// is doing. Each method is one arm of the loop in [`run`].
struct Wait {
    phase: Phase,
    network: NetworkIdle,
    nav_deadline: Instant,
    timeout_ms: u64,
    network_idle_ms: u32,
}

impl Wait {
    fn new(nav_deadline: Instant, timeout_ms: u64, network_idle_ms: u32) -> Wait {
        Wait {
            phase: Phase::Navigating,
            network: NetworkIdle::new(Instant::now()),
            nav_deadline,
            timeout_ms,
            network_idle_ms,
        }
    }

    fn is_navigating(&self) -> bool {
        matches!(self.phase, Phase::Navigating)
    }

    /// DOMContentLoaded (or what stands for it): the network-idle wait begins.
    fn settle(&mut self, now: Instant) {
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
        }
    }

    /// A paused request was answered: the render's answer when the request ended
    /// it (a document not to render), its error when it failed it.
    fn on_handled(&mut self, outcome: Outcome) -> Result<Option<BrowserPage>, FetchError> {
        let now = Instant::now();
        self.network.finished(now);
        match outcome {
            Outcome::Fatal(error) => Err(error),
            // Issue 31: a PDF (or JSON, a feed, publisher Markdown) is never
            // rendered; the document the client fetched is the answer.
            Outcome::NotRendered(document) => Ok(Some(BrowserPage {
                final_url: document.final_url.clone(),
                html: String::new(),
                dom_truncated: false,
                blocked_non_get: false,
                charset_fallback: false,
                not_rendered: Some(document),
            })),
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

    /// A timer fired: settled (network idle, or a DOM over `dom_limit`), a timeout
    /// (FR-WF-11f: no partial DOM), or nothing yet.
    async fn on_timer(
        &mut self,
        page: &Page,
        main_frame: &FrameId,
        dom_limit: u64,
    ) -> Result<Option<Settled>, FetchError> {
        let now = Instant::now();
        match &mut self.phase {
            Phase::Navigating if now >= self.nav_deadline => Err(FetchError::timeout(
                self.timeout_ms,
                TimeoutPhase::BrowserNavigation,
            )),
            Phase::Navigating => Ok(None),
            Phase::Settling {
                dom_content_loaded,
                idle_end,
                next_dom_check,
            } => {
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
                    let size = dom_size(page, main_frame, dom_limit).await;
                    if size.is_some_and(|size| size > dom_limit) {
                        return Ok(Some(Settled::DomFull));
                    }
                }
                Ok(None)
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
