//! The `Fetch.requestPaused` handler of Appendix G (FR-WF-11b, BSSR-01 Option A):
//! the CDP side.
//!
//! Every request Chromium makes is paused here and either fulfilled with bytes our
//! pinned client fetched or failed. The checks run in Appendix G's order: scheme
//! (BSSR-SCHEME-01, BSSR-WS-01 Option A), method (BROWSER-METHOD-01, before SSRF
//! as SRD-READINGS 23 says), `block_resources` (11g, BLOCKRES-01), the subresource
//! budget (BROWSER-BUDGET-01..03, SRD-READINGS 25); port, SSRF and DNS pinning are
//! the client's (the same [`HttpClient::get`](crate::transport::HttpClient::get) every other fetch uses).
//!
//! The top frame's documents form the main chain (FR-WF-11c, BREDIR-01,
//! SRD-READINGS 22): each one after the first is a redirect hop, counted toward
//! `max_redirects`, validated like a URL, checked by SSRF then robots.txt
//! (ROBOTS-SCOPE-01), and any failure ends the fetch with that hop's error.
//!
//! robots.txt applies to that chain only (ROBOTS-SCOPE-01), unless
//! `robots_for_frames` extends it to the documents of iframes and frames
//! ([`robots_scope`]): the client then runs the same robots hook on each URL of the
//! frame's fetch, the first and every redirect hop, after its port and SSRF checks,
//! and a refusal fails that request only. Scripts, XHR, fetch, images and the rest
//! are never robots-checked.
//!
//! The rules themselves are pure and live in [`policy`](super::policy) (what is
//! refused, in which order, what the main chain is, which documents robots.txt
//! applies to) and [`replay`](super::replay) (responses held for Chromium's
//! follow-up of our `302`); this module applies them to CDP events.
//!
//! Each subrequest's outcome is logged at DEBUG (an SSRF block at WARN, with its
//! address) and counted; the render ends with one `browser_subrequests` line
//! ([`SubrequestStats::log`]), so a page full of failing ad scripts stays
//! readable on the default stderr.

use std::sync::{Mutex, MutexGuard};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{FailRequestParams, RequestId};
use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
use futures_util::future::BoxFuture;
use http::Method;
use tokio::sync::Semaphore;

use super::RenderContext;
use super::policy::{
    FETCH_SLOTS, MainChain, NavStep, Paused, Refusal, RobotsScope, SubresourceBytes,
    check_subresource, is_document, robots_scope,
};
use super::replay::{Fulfilment, Replay, Replays};
use crate::budget::Budget;
use crate::canonical_url::CanonicalUrl;
use crate::content::media_type::{self, MediaKind};
use crate::error::{ErrorCode, ErrorDetails, FetchError, TimeoutPhase};
use crate::render::{FetchedDocument, wall};
use crate::transport::{GetOptions, HopHook, HttpResponse, check_status};
use crate::vocabulary::Format;

/// The phase a paused request belongs to: when a main-chain fetch must be done
/// and which phase its timeout reports. Subresources get `timeout_seconds` each
/// (BSSR-TIMEOUT-01) whatever the phase.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PhaseBudget {
    /// Until the phase's end (navigation deadline before DOMContentLoaded, the
    /// idle cap after it), with the `details.timeout_ms` its timeout reports.
    pub(crate) budget: Budget,
    /// The phase a timeout of the main chain reports.
    pub(crate) phase: TimeoutPhase,
}

/// How a paused request ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Answered (fulfilled or failed); the page goes on.
    Answered,
    /// A non-GET top-frame navigation was cancelled: the current document is the
    /// answer (SRD-READINGS 23). Starting that navigation may have stopped the
    /// document's loading, so its DOMContentLoaded may never come.
    NavigationCancelled,
    /// The main chain failed: the fetch ends with this error.
    Fatal(FetchError),
    /// Extension: the top document is of a format browser mode
    /// never renders; it was failed in Chromium and is the answer as fetched.
    NotRendered(Box<FetchedDocument>),
}
/// Counts of one render's subrequests (everything but the main chain), for the
/// one `browser_subrequests` line logged when the render ends.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct SubrequestStats {
    /// Fulfilled with a response our client fetched (replays not counted again).
    pub(crate) fetched: u32,
    /// Body bytes of those responses, decompressed.
    pub(crate) bytes: u64,
    /// Failed: the address is in a blocked range.
    pub(crate) ssrf_blocked: u32,
    /// Failed: the port is not allowed.
    pub(crate) port_blocked: u32,
    /// Failed: no answer within `timeout_seconds`.
    pub(crate) timeouts: u32,
    /// Failed: larger than `max_download_bytes`.
    pub(crate) too_large: u32,
    /// Failed: a frame document robots.txt disallows (`robots_for_frames`).
    pub(crate) robots_disallowed: u32,
    /// Failed: the subresource budget was spent.
    pub(crate) over_budget: u32,
    /// Failed before any network: scheme, method, `block_resources`, invalid URL.
    pub(crate) refused: u32,
    /// Failed for another reason (DNS, connection, TLS, ...).
    pub(crate) failed: u32,
}

impl SubrequestStats {
    /// Counts a subrequest our client failed to fetch.
    fn count_failure(&mut self, code: ErrorCode) {
        match code {
            ErrorCode::SsrfBlocked => self.ssrf_blocked += 1,
            ErrorCode::PortBlocked => self.port_blocked += 1,
            ErrorCode::Timeout => self.timeouts += 1,
            ErrorCode::ResponseTooLarge => self.too_large += 1,
            ErrorCode::RobotsDisallowed => self.robots_disallowed += 1,
            _ => self.failed += 1,
        }
    }

    /// Failures the SRD asks to be logged as warnings (BSSR-TIMEOUT-01,
    /// BROWSER-BUDGET "log a warning", SSRF and port blocks).
    fn warnings(&self) -> u32 {
        self.ssrf_blocked + self.port_blocked + self.timeouts + self.too_large + self.over_budget
    }

    /// Logs the render's one summary line: at WARN when a subrequest hit a limit
    /// or a block, else at INFO. Each subrequest's own events are at DEBUG (but
    /// `ssrf_blocked`, a WARN of its own).
    pub(crate) fn log(&self) {
        macro_rules! summary {
            ($level:ident) => {
                tracing::$level!(
                    target: "webfetch::browser",
                    event = "browser_subrequests",
                    fetched = self.fetched,
                    bytes = self.bytes,
                    ssrf_blocked = self.ssrf_blocked,
                    port_blocked = self.port_blocked,
                    timeouts = self.timeouts,
                    too_large = self.too_large,
                    robots_disallowed = self.robots_disallowed,
                    over_budget = self.over_budget,
                    refused = self.refused,
                    failed = self.failed,
                    "browser subrequests"
                )
            };
        }
        if self.warnings() > 0 {
            summary!(warn);
        } else {
            summary!(info);
        }
    }
}

/// Mutable interception state shared by the request handlers.
struct State {
    chain: MainChain,
    bytes: SubresourceBytes,
    blocked_non_get: u32,
    /// The main chain's error, once one ended the fetch.
    fatal: Option<FetchError>,
    /// The committed main document had no supported charset declared
    /// (`charset_fallback`, SRD-READINGS 31).
    charset_fallback: bool,
    /// Responses waiting for Chromium to follow our `302`s.
    replays: Replays,
    /// What happened to the subrequests, for the summary line.
    stats: SubrequestStats,
}

/// Handles paused requests for one page.
pub(crate) struct Interceptor<'a> {
    ctx: &'a RenderContext<'a>,
    page: Page,
    state: Mutex<State>,
    slots: Semaphore,
}

impl<'a> Interceptor<'a> {
    pub(crate) fn new(ctx: &'a RenderContext<'a>, page: Page) -> Interceptor<'a> {
        let settings = &ctx.settings;
        Interceptor {
            ctx,
            page,
            state: Mutex::new(State {
                chain: MainChain::new(settings.max_redirects),
                bytes: SubresourceBytes::new(settings.browser.max_total_subresource_bytes),
                blocked_non_get: 0,
                charset_fallback: false,
                fatal: None,
                replays: Replays::new(
                    usize::try_from(settings.max_download_bytes)
                        .unwrap_or(usize::MAX)
                        .saturating_mul(FETCH_SLOTS),
                ),
                stats: SubrequestStats::default(),
            }),
            slots: Semaphore::new(FETCH_SLOTS),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A handler that panicked has already failed the whole render; the state
        // itself is never left half-updated, so a poisoned lock is still usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Non-GET/HEAD requests failed so far (BROWSER-METHOD-01 step 2).
    pub(crate) fn blocked_non_get(&self) -> u32 {
        self.state().blocked_non_get
    }

    /// The error that ended the main chain, if any: the navigation's own failure
    /// report is less precise than the hop's error (SRD-READINGS 22).
    pub(crate) fn take_fatal(&self) -> Option<FetchError> {
        self.state().fatal.take()
    }

    /// Whether the committed main document fell back to UTF-8 for want of a
    /// supported declared charset.
    pub(crate) fn charset_fallback(&self) -> bool {
        self.state().charset_fallback
    }

    /// The final URL of the main chain, once a document was loaded.
    pub(crate) fn final_url(&self) -> Option<CanonicalUrl> {
        self.state().chain.current().cloned()
    }

    /// Answers one paused request.
    pub(crate) async fn handle(
        &self,
        paused: Paused,
        id: RequestId,
        budget: PhaseBudget,
    ) -> Outcome {
        if let Some(fulfilment) = self.take_replay(&paused) {
            self.fulfil(id, &fulfilment).await;
            return Outcome::Answered;
        }
        if paused.top_frame_document {
            self.main_document(paused, id, budget).await
        } else {
            self.subresource(paused, id).await;
            Outcome::Answered
        }
    }

    fn take_replay(&self, paused: &Paused) -> Option<Fulfilment> {
        self.state().replays.take(paused)
    }

    /// Chromium's network request `network_id` finished or failed: responses held
    /// for it are dropped.
    pub(crate) fn request_ended(&self, network_id: &str) {
        self.state().replays.ended(network_id);
    }

    /// Logs the render's `browser_subrequests` summary line.
    pub(crate) fn log_summary(&self) {
        let stats = self.state().stats.clone();
        stats.log();
    }

    async fn main_document(&self, paused: Paused, id: RequestId, budget: PhaseBudget) -> Outcome {
        let step = self.state().chain.navigation(&paused.url, &paused.method);
        let to = match step {
            NavStep::NonGet(method) => {
                self.state().blocked_non_get += 1;
                tracing::debug!(target: "webfetch::browser", event = "non_get_blocked", %method, "top-frame navigation cancelled");
                // Aborted cancels the navigation without an error page: the current
                // document stays what the fetch returns.
                self.fail(id, ErrorReason::Aborted).await;
                return Outcome::NavigationCancelled;
            }
            NavStep::Fatal(error) => {
                self.state().fatal = Some(error.clone());
                self.fail(id, ErrorReason::BlockedByClient).await;
                return Outcome::Fatal(error);
            }
            NavStep::First(to) | NavStep::Hop { to, .. } => to,
        };
        match self.fetch_main(&to, &paused, budget).await {
            Ok((response, kind)) if !kind.is_srd() => {
                // Chromium never renders a PDF, JSON, a feed or
                // Markdown; the pinned client's response is read as HTTP mode
                // reads it.
                self.fail(id, ErrorReason::Aborted).await;
                let content_type = media_type::last_content_type(&response.headers);
                Outcome::NotRendered(Box::new(FetchedDocument {
                    final_url: response.final_url,
                    kind,
                    header_charset: content_type.as_deref().and_then(media_type::charset_param),
                    content_type,
                    body: response.body,
                    redirects: response.redirects,
                    deadline: response.deadline,
                }))
            }
            Ok((response, kind)) => {
                let final_url = response.final_url.clone();
                let (fulfilment, choice) = Fulfilment::main_document(&response, kind);
                {
                    let mut state = self.state();
                    state.chain.committed(final_url.clone());
                    state.charset_fallback = choice.charset_fallback;
                }
                if final_url == to {
                    self.fulfil(id, &fulfilment).await;
                } else {
                    self.push_replay(Replay::new(&id, &paused, &final_url, fulfilment));
                    self.fulfil(id, &Fulfilment::redirect_to(&final_url)).await;
                }
                Outcome::Answered
            }
            Err(error) => {
                tracing::warn!(
                    target: "webfetch::browser",
                    event = "main_document_failed",
                    url = %to.redacted(),
                    code = %error.code,
                    "top-frame document refused"
                );
                self.state().fatal = Some(error.clone());
                self.fail(id, ErrorReason::BlockedByClient).await;
                Outcome::Fatal(error)
            }
        }
    }

    /// A main-chain document: the client's checks of the target (port, SSRF in
    /// the pass, then robots.txt through the chain hook, FR-WF-07e order), the
    /// pinned GET under `max_download_bytes`, whose redirects count toward the
    /// same chain; then the status and media type rules of HTTP mode.
    ///
    /// Extension (`detect_walls`, FR-WF-11): a wall served with a refusal
    /// status (a vendor's challenge or block page as 403, 429 or 503; a 402) is
    /// refused here and never rendered, whichever document of the chain it is.
    /// A vendor's challenge completes by giving the browser a clearance cookie
    /// that the next request must carry, and webfetch keeps no cookies and
    /// forwards none (`Set-Cookie` is dropped before Chromium sees a response,
    /// [`policy::fulfil_headers`](super::policy::fulfil_headers), and the
    /// client sends no `Cookie`, `transport/request.rs`), so such a challenge
    /// can not complete, and rendering it would only spend the call's budget.
    /// A 200 interstitial is rendered: one that completes by itself, by its own
    /// navigation, lands on the page, which the render loop waits for
    /// (`session.rs`).
    async fn fetch_main(
        &self,
        to: &CanonicalUrl,
        paused: &Paused,
        budget: PhaseBudget,
    ) -> Result<(HttpResponse, MediaKind), FetchError> {
        let settings = &self.ctx.settings;
        let hook = ChainHook {
            interceptor: self,
            robots: self.ctx.robots_hook,
        };
        let mut opts = GetOptions::new(budget.budget, settings.max_download_bytes);
        opts.hook = Some(&hook);
        opts.pass = Some(&self.ctx.pass);
        opts.headers = paused.forwarded.clone();
        if settings.content.formats.contains(Format::Pdf) {
            opts.pdf_max_body_bytes = Some(settings.content.max_pdf_bytes);
        }
        opts.polite = true;
        if settings.detect_walls {
            opts.refusal_head_bytes = wall::HEAD_BYTES as u64;
        }
        let response = self
            .ctx
            .client
            .get(to, &opts)
            .await
            .map_err(|error| in_phase(error, budget))?;
        // A refusal is not rendered (see above).
        if settings.detect_walls && response.status != 200 {
            wall::refuse(&response)?;
        }
        check_status(response.status, &response.status_text)?;
        let content_type = media_type::last_content_type(&response.headers);
        let kind = media_type::select(
            content_type.as_deref(),
            &response.body,
            settings.content.formats,
        )?;
        Ok((response, kind))
    }

    async fn subresource(&self, paused: Paused, id: RequestId) {
        let settings = &self.ctx.settings;
        let open = self.state().bytes.is_open();
        let (url, method) = match check_subresource(&paused, &settings.browser, open) {
            Ok(checked) => checked,
            Err(refusal) => {
                self.log_refusal(&paused, &refusal);
                {
                    let mut state = self.state();
                    match refusal {
                        Refusal::Method(_) => {
                            state.blocked_non_get += 1;
                            state.stats.refused += 1;
                        }
                        Refusal::Budget => state.stats.over_budget += 1,
                        _ => state.stats.refused += 1,
                    }
                }
                self.fail(id, ErrorReason::BlockedByClient).await;
                return;
            }
        };
        let head = method == Method::HEAD;
        let response = {
            let Ok(_slot) = self.slots.acquire().await else {
                self.fail(id, ErrorReason::BlockedByClient).await;
                return;
            };
            // BSSR-TIMEOUT-01: timeout_seconds per subrequest, whatever the phase;
            // a render that ends first drops the fetch with it.
            let mut opts = GetOptions::new(
                Budget::starting_now(settings.timeout()),
                settings.max_download_bytes,
            );
            opts.pass = Some(&self.ctx.pass);
            opts.headers = paused.forwarded.clone();
            opts.method = method;
            // A frame document's URL and redirect hops pass the call's
            // robots check, as the main chain's do.
            if robots_scope(&paused, settings.browser.robots_for_frames) == RobotsScope::Frame {
                opts.hook = self.ctx.robots_hook;
            }
            self.ctx.client.get(&url, &opts).await
        };
        let response = match response {
            Ok(response) => response,
            Err(error) => {
                log_fetch_error(&url, &paused.resource_type, &error);
                self.state().stats.count_failure(error.code);
                self.fail(id, ErrorReason::BlockedByClient).await;
                return;
            }
        };
        let bytes = u64::try_from(response.body.len()).unwrap_or(u64::MAX);
        // Appendix G step 9, BROWSER-BUDGET-02: documents (iframes) are outside
        // the subresource budget.
        let within_budget = is_document(&paused) || self.state().bytes.account(bytes);
        if !within_budget {
            self.state().stats.over_budget += 1;
            tracing::debug!(
                target: "webfetch::browser",
                event = "subresource_budget_exceeded",
                url = %url.redacted(),
                max_total_subresource_bytes = settings.browser.max_total_subresource_bytes,
                "subresource failed: the total budget is spent"
            );
            self.fail(id, ErrorReason::BlockedByClient).await;
            return;
        }
        {
            let mut state = self.state();
            state.stats.fetched += 1;
            state.stats.bytes = state.stats.bytes.saturating_add(bytes);
        }
        let fulfilment = Fulfilment::from_response(&response, head);
        if response.final_url == url || head {
            self.fulfil(id, &fulfilment).await;
        } else {
            let replay = Replay::new(&id, &paused, &response.final_url, fulfilment);
            self.push_replay(replay);
            self.fulfil(id, &Fulfilment::redirect_to(&response.final_url))
                .await;
        }
    }

    fn push_replay(&self, replay: Replay) {
        self.state().replays.push(replay);
    }

    fn log_refusal(&self, paused: &Paused, refusal: &Refusal) {
        let url = crate::canonical_url::redact_raw(&paused.url);
        match refusal {
            Refusal::Budget => tracing::debug!(
                target: "webfetch::browser",
                event = "subresource_budget_exceeded",
                %url,
                "subresource failed: the total budget is spent"
            ),
            Refusal::Scheme(scheme) => tracing::debug!(
                target: "webfetch::browser",
                event = "scheme_blocked",
                %scheme,
                "subrequest failed: only http and https leave the browser"
            ),
            Refusal::Method(method) => tracing::debug!(
                target: "webfetch::browser",
                event = "non_get_blocked",
                %method,
                %url,
                "subrequest failed: only GET and HEAD leave the browser"
            ),
            Refusal::Resource(kind) => tracing::debug!(
                target: "webfetch::browser",
                event = "resource_blocked",
                resource_type = %kind,
                %url,
                "subrequest failed: resource type in block_resources"
            ),
            Refusal::Url(error) => tracing::debug!(
                target: "webfetch::browser",
                event = "subrequest_invalid_url",
                code = %error.code,
                "subrequest failed: invalid URL"
            ),
        }
    }

    async fn fulfil(&self, id: RequestId, fulfilment: &Fulfilment) {
        if let Err(error) = self.page.execute(fulfilment.params(id)).await {
            tracing::debug!(target: "webfetch::browser", %error, "Fetch.fulfillRequest failed");
        }
    }

    async fn fail(&self, id: RequestId, reason: ErrorReason) {
        if let Err(error) = self.page.execute(FailRequestParams::new(id, reason)).await {
            tracing::debug!(target: "webfetch::browser", %error, "Fetch.failRequest failed");
        }
    }
}

/// The client's hook for main-chain fetches: each redirect hop counts toward the
/// chain's `max_redirects` (the navigation that started the fetch was counted by
/// [`MainChain::navigation`]), then robots.txt of the URL is checked.
struct ChainHook<'i, 'a> {
    interceptor: &'i Interceptor<'a>,
    robots: Option<&'a dyn HopHook>,
}

impl HopHook for ChainHook<'_, '_> {
    fn before_hop<'h>(
        &'h self,
        from: Option<&'h CanonicalUrl>,
        to: &'h CanonicalUrl,
    ) -> BoxFuture<'h, Result<(), FetchError>> {
        Box::pin(async move {
            if from.is_some() {
                self.interceptor.state().chain.count_hop()?;
            }
            // A script or markup navigation starts a new request, but it is a hop
            // of the same chain: robots.txt hears where it came from.
            let from = from.cloned().or_else(|| self.interceptor.final_url());
            match self.robots {
                Some(robots) => robots.before_hop(from.as_ref(), to).await,
                None => Ok(()),
            }
        })
    }
}

/// A timeout of the main chain is the browser phase's timeout: the page did not
/// get its document within the phase's budget.
fn in_phase(error: FetchError, budget: PhaseBudget) -> FetchError {
    if error.code == ErrorCode::Timeout {
        budget.budget.expired(budget.phase)
    } else {
        error
    }
}

/// FR-WF-19c event names for failed subrequests, at DEBUG; SSRF blocks stay
/// warnings with the address (T-WF-INFRA-05 step 6). Timeouts, size and budget
/// failures are warnings through the render's summary line (BSSR-TIMEOUT-01,
/// BROWSER-BUDGET), not one line each.
fn log_fetch_error(url: &CanonicalUrl, resource_type: &str, error: &FetchError) {
    let url = url.redacted();
    match &error.details {
        ErrorDetails::SsrfBlocked {
            blocked_ip,
            cidr,
            toggle,
        } => tracing::warn!(
            target: "webfetch::browser",
            event = "ssrf_blocked",
            %url,
            resource_type,
            %blocked_ip,
            %cidr,
            %toggle,
            "browser subrequest blocked by SSRF policy"
        ),
        ErrorDetails::PortBlocked { port, .. } => tracing::debug!(
            target: "webfetch::browser",
            event = "port_blocked",
            %url,
            resource_type,
            port,
            "browser subrequest blocked: port not allowed"
        ),
        ErrorDetails::Timeout { .. } => tracing::debug!(
            target: "webfetch::browser",
            event = "subrequest_timeout",
            %url,
            resource_type,
            "browser subrequest timed out"
        ),
        ErrorDetails::ResponseTooLarge { .. } => tracing::debug!(
            target: "webfetch::browser",
            event = "subresource_too_large",
            %url,
            resource_type,
            "browser subrequest failed: larger than max_download_bytes"
        ),
        ErrorDetails::RobotsDisallowed { .. } => tracing::debug!(
            target: "webfetch::browser",
            event = "frame_robots_disallowed",
            %url,
            resource_type,
            "frame document failed: robots.txt disallows it (robots_for_frames)"
        ),
        _ => tracing::debug!(
            target: "webfetch::browser",
            event = "subrequest_failed",
            %url,
            resource_type,
            code = %error.code,
            message = %error.message,
            "browser subrequest failed"
        ),
    }
}
