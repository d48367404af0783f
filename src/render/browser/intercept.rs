//! The `Fetch.requestPaused` handler of Appendix G (FR-WF-11b, BSSR-01 Option A).
//!
//! Every request Chromium makes is paused here and either fulfilled with bytes our
//! pinned client fetched or failed. The checks run in Appendix G's order: scheme
//! (BSSR-SCHEME-01, BSSR-WS-01 Option A), method (BROWSER-METHOD-01, before SSRF
//! as SRD-READINGS 23 says), `block_resources` (11g, BLOCKRES-01), the subresource
//! budget (BROWSER-BUDGET-01..03, SRD-READINGS 25); port, SSRF and DNS pinning are
//! the client's (the same [`HttpClient::get`](crate::http::HttpClient::get) every other fetch uses).
//!
//! The top frame's documents form the main chain (FR-WF-11c, BREDIR-01,
//! SRD-READINGS 22): each one after the first is a redirect hop, counted toward
//! `max_redirects`, validated like a URL, checked by SSRF then robots.txt
//! (ROBOTS-SCOPE-01), and any failure ends the fetch with that hop's error.
//!
//! robots.txt applies to that chain only (ROBOTS-SCOPE-01), unless
//! `robots_for_frames` (issue 28) extends it to the documents of iframes and frames
//! ([`robots_scope`]): the client then runs the same robots hook on each URL of the
//! frame's fetch, the first and every redirect hop, after its port and SSRF checks,
//! and a refusal fails that request only. Scripts, XHR, fetch, images and the rest
//! are never robots-checked.
//!
//! A response our client reached through redirects is answered with a `302` to its
//! final URL and replayed when Chromium follows it, so the page sees the real URL
//! (relative links, `document.URL`, CORS) and nothing is fetched twice. A replay
//! answers only the follow-up of the request it was fetched for ([`Replays`]): a
//! redirect the page never follows (`fetch(url, {redirect: "manual"})`) can never
//! answer a later navigation, which stays a checked hop of the main chain.
//!
//! Each subrequest's outcome is logged at DEBUG (an SSRF block at WARN, with its
//! address) and counted; the render ends with one `browser_subrequests` line
//! ([`SubrequestStats::log`]), so a page full of failing ad scripts stays
//! readable on the default stderr.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry, RequestId,
};
use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
use futures_util::future::BoxFuture;
use http::Method;
use http::header::{CONTENT_LENGTH, HeaderMap, HeaderName, HeaderValue};
use tokio::sync::Semaphore;

use super::RenderContext;
use crate::budget::Budget;
use crate::config::BrowserSettings;
use crate::content::charset;
use crate::content::formats::Format;
use crate::content::media_type::{self, MediaKind};
use crate::render::FetchedDocument;
use crate::error::{ErrorCode, ErrorDetails, FetchError, TimeoutPhase};
use crate::http::{GetOptions, HopHook, HttpResponse, check_status};
use crate::url::CanonicalUrl;

/// Added to every fulfilled response. `*` matches network schemes only, so
/// `data:`, `blob:` and `filesystem:` loads of any kind (fetch, images, frames,
/// workers, scripts) are refused by Chromium itself (BSSR-SCHEME-01 by outcome,
/// SRD-READINGS 24); `connect-src` also leaves out `ws:`/`wss:` (BSSR-WS-01). The
/// page's own policy, if any, still applies on top.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src * 'unsafe-inline' 'unsafe-eval'; connect-src http: https:";

/// Response headers never passed to Chromium: framing we recompute, state that
/// could outlive or reach beyond the request (cookies, HSTS, Alt-Svc, reporting
/// endpoints Chromium would post to on its own).
const DROPPED_RESPONSE_HEADERS: [&str; 16] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
    "set-cookie",
    "set-cookie2",
    "strict-transport-security",
    "alt-svc",
    "report-to",
    "nel",
    "reporting-endpoints",
    "public-key-pins",
];

/// Concurrent subresource fetches, as a browser limits connections: bounds the
/// memory held by bodies in flight to this many `max_download_bytes`.
const FETCH_SLOTS: usize = 8;

/// Subrequest responses waiting for Chromium to follow our `302` at most; the
/// oldest is dropped first (its follow-up, if it ever comes, is fetched again).
/// Their bodies are also bounded, to `FETCH_SLOTS` times `max_download_bytes`.
const REPLAY_ENTRIES: usize = 2 * FETCH_SLOTS;

/// A paused request, as far as the checks need it.
#[derive(Debug, Clone)]
pub(crate) struct Paused {
    pub(crate) url: String,
    pub(crate) method: String,
    /// The CDP `ResourceType` name (`Document`, `Image`, ...).
    pub(crate) resource_type: String,
    /// A `Document` load of the top frame: part of the main chain.
    pub(crate) top_frame_document: bool,
    /// The request's `Accept` and `Referer`, the only headers forwarded
    /// (BSSR-HEADERS-01; the client adds our User-Agent and Accept-Encoding).
    pub(crate) forwarded: Vec<(HeaderName, HeaderValue)>,
    /// Chromium's network request id: the same for every request of one redirect
    /// chain, so a follow-up of our `302` shares it with the request we answered.
    pub(crate) network_id: Option<String>,
    /// The Fetch request whose redirect this request follows, if any.
    pub(crate) redirected_from: Option<String>,
}

impl Paused {
    pub(crate) fn from_event(event: &EventRequestPaused, main_frame: &str) -> Paused {
        let resource_type = event.resource_type.as_ref().to_owned();
        Paused {
            url: event.request.url.clone(),
            method: event.request.method.clone(),
            top_frame_document: resource_type == "Document"
                && event.frame_id.as_ref() == main_frame,
            resource_type,
            forwarded: forwarded_headers(event.request.headers.inner()),
            network_id: event.network_id.as_ref().map(|id| id.inner().clone()),
            redirected_from: event
                .redirected_request_id
                .as_ref()
                .map(|id| id.inner().clone()),
        }
    }
}

/// BSSR-HEADERS-01: `Accept` and `Referer` from Chromium's request headers
/// (case-insensitive names); values that are not valid header values are dropped.
pub(crate) fn forwarded_headers(headers: &serde_json::Value) -> Vec<(HeaderName, HeaderValue)> {
    let Some(map) = headers.as_object() else {
        return Vec::new();
    };
    map.iter()
        .filter_map(|(name, value)| {
            let name = match name.to_ascii_lowercase().as_str() {
                "accept" => http::header::ACCEPT,
                "referer" => http::header::REFERER,
                _ => return None,
            };
            let value = HeaderValue::from_str(value.as_str()?).ok()?;
            Some((name, value))
        })
        .collect()
}

/// Why a subrequest is failed before any network (Appendix G steps 1-4).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// Not http(s): `file:`, `ws:`, `wss:`, ... (BSSR-SCHEME-01, BSSR-WS-01 A).
    Scheme(String),
    /// Not GET or HEAD (BROWSER-METHOD-01); counted for the note.
    Method(String),
    /// In `block_resources` (FR-WF-11g).
    Resource(String),
    /// The subresource budget is spent (BROWSER-BUDGET-01).
    Budget,
    /// The URL fails validation (e.g. a non-canonical numeric host).
    Url(FetchError),
}

/// The scheme of a request URL, lowercase; `None` when it does not parse.
fn scheme_of(url: &str) -> Option<String> {
    url::Url::parse(url).ok().map(|u| u.scheme().to_owned())
}

/// Only GET and HEAD leave the browser (BROWSER-METHOD-01).
fn allowed_method(method: &str) -> Option<Method> {
    match method {
        "GET" => Some(Method::GET),
        "HEAD" => Some(Method::HEAD),
        _ => None,
    }
}

/// Appendix G steps 1-4 for a subresource (anything but a top-frame document).
pub(crate) fn check_subresource(
    paused: &Paused,
    settings: &BrowserSettings,
    budget_open: bool,
) -> Result<(CanonicalUrl, Method), Refusal> {
    match scheme_of(&paused.url) {
        Some(scheme) if scheme == "http" || scheme == "https" => {}
        Some(scheme) => return Err(Refusal::Scheme(scheme)),
        None => {
            return Err(Refusal::Url(FetchError::invalid_url(
                &paused.url,
                "unparsable subrequest URL",
            )));
        }
    }
    let method =
        allowed_method(&paused.method).ok_or_else(|| Refusal::Method(paused.method.clone()))?;
    if settings
        .block_resources
        .iter()
        .any(|blocked| blocked.eq_ignore_ascii_case(&paused.resource_type))
    {
        return Err(Refusal::Resource(paused.resource_type.clone()));
    }
    // Appendix G step 4, BROWSER-BUDGET-02: documents (iframes) are outside the
    // budget; they are still fetched by the client, SSRF-checked like the rest.
    if !budget_open && !is_document(paused) {
        return Err(Refusal::Budget);
    }
    let url = CanonicalUrl::parse(&paused.url).map_err(Refusal::Url)?;
    Ok((url, method))
}

/// A document request (an iframe's; the top frame's are the main chain): outside
/// the subresource budget (BROWSER-BUDGET-02).
fn is_document(paused: &Paused) -> bool {
    paused.resource_type == "Document"
}

/// Which robots.txt check a paused request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RobotsScope {
    /// A top-frame document: a hop of the main chain, checked by its hook
    /// (FR-WF-ROBOTS-SCOPE-01, SRD-READINGS 22).
    MainChain,
    /// An iframe's or frame's document with `robots_for_frames` on (issue 28): its
    /// URL and each redirect hop are checked through the same hook.
    Frame,
    /// Not robots-checked: every other subresource, and frame documents with the
    /// switch off (ROBOTS-SCOPE-01: they MUST NOT be blocked by robots.txt).
    Exempt,
}

/// The robots.txt scope of `paused` (ROBOTS-SCOPE-01, extended to frame documents
/// by `robots_for_frames`, issue 28). Only the frame and the resource type count:
/// a frame navigation started by a script is a `Document` request like one
/// started by markup.
pub(crate) fn robots_scope(paused: &Paused, robots_for_frames: bool) -> RobotsScope {
    if paused.top_frame_document {
        RobotsScope::MainChain
    } else if robots_for_frames && is_document(paused) {
        RobotsScope::Frame
    } else {
        RobotsScope::Exempt
    }
}

/// The subresource byte budget (BROWSER-BUDGET-01..03), in decompressed bytes.
#[derive(Debug, Clone)]
pub(crate) struct SubresourceBytes {
    used: u64,
    max: u64,
}

impl SubresourceBytes {
    pub(crate) fn new(max: u64) -> SubresourceBytes {
        SubresourceBytes { used: 0, max }
    }

    /// Appendix G step 4: new subresource fetches start only below the budget.
    pub(crate) fn is_open(&self) -> bool {
        self.used < self.max
    }

    /// Step 9 and SRD-READINGS 25: counts a fetched body. The response that
    /// reaches or crosses the budget is still fulfilled (`true`); every response
    /// that arrives after that is failed (`false`) and not counted.
    pub(crate) fn account(&mut self, bytes: u64) -> bool {
        if !self.is_open() {
            return false;
        }
        self.used = self.used.saturating_add(bytes);
        true
    }
}

/// The top frame's navigation chain (FR-WF-11c, BREDIR-01, SRD-READINGS 22).
#[derive(Debug, Clone)]
pub(crate) struct MainChain {
    max_redirects: u32,
    hops: u32,
    /// The last main document loaded (its final URL).
    current: Option<CanonicalUrl>,
}

/// What to do with a top-frame document request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NavStep {
    /// The navigation to the requested URL.
    First(CanonicalUrl),
    /// A later navigation: a counted hop from the current document.
    Hop {
        from: CanonicalUrl,
        to: CanonicalUrl,
    },
    /// A non-GET navigation (a form POST): cancelled, counted for the note, and the
    /// current document stays (SRD-READINGS 23).
    NonGet(String),
    /// The hop fails the fetch with this error (SRD-READINGS 22).
    Fatal(FetchError),
}

impl MainChain {
    pub(crate) fn new(max_redirects: u32) -> MainChain {
        MainChain {
            max_redirects,
            hops: 0,
            current: None,
        }
    }

    /// Classifies a top-frame document request: scheme, then method, then URL
    /// validation, then the hop count.
    pub(crate) fn navigation(&mut self, url: &str, method: &str) -> NavStep {
        match scheme_of(url) {
            Some(scheme) if scheme == "http" || scheme == "https" => {}
            Some(scheme) => return NavStep::Fatal(FetchError::invalid_scheme(&scheme)),
            None => {
                return NavStep::Fatal(FetchError::invalid_url(url, "unparsable navigation URL"));
            }
        }
        if allowed_method(method).is_none() {
            return NavStep::NonGet(method.to_owned());
        }
        let to = match CanonicalUrl::parse(url) {
            Ok(to) => to,
            Err(error) => return NavStep::Fatal(error),
        };
        match self.current.clone() {
            None => NavStep::First(to),
            Some(from) => match self.count_hop() {
                Ok(()) => NavStep::Hop { from, to },
                Err(error) => NavStep::Fatal(error),
            },
        }
    }

    /// One more hop of the chain (a redirect our client follows, or a new
    /// top-frame navigation); `redirect_limit` past `max_redirects` (FR-WF-07f1).
    pub(crate) fn count_hop(&mut self) -> Result<(), FetchError> {
        self.hops = self.hops.saturating_add(1);
        if self.hops > self.max_redirects {
            Err(FetchError::redirect_limit(self.hops, self.max_redirects))
        } else {
            Ok(())
        }
    }

    /// A main document was loaded from `url`.
    pub(crate) fn committed(&mut self, url: CanonicalUrl) {
        self.current = Some(url);
    }

    /// The last main document's URL (`final_url`, FR-WF-RESP-METHOD-01).
    pub(crate) fn current(&self) -> Option<&CanonicalUrl> {
        self.current.as_ref()
    }
}

/// The headers handed to `Fetch.fulfillRequest`: the response's own minus
/// [`DROPPED_RESPONSE_HEADERS`], `Content-Length` equal to the body passed
/// (BSSR-BODY-01; the client already removed a decoded `Content-Encoding`), and
/// [`CONTENT_SECURITY_POLICY`].
pub(crate) fn fulfil_headers(
    headers: &HeaderMap,
    body_len: usize,
    head: bool,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = headers
        .iter()
        .filter(|(name, _)| !DROPPED_RESPONSE_HEADERS.contains(&name.as_str()))
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    if head {
        // A HEAD answer describes the body it did not send.
        if let Some(length) = headers.get(CONTENT_LENGTH) {
            out.push((
                "content-length".to_owned(),
                String::from_utf8_lossy(length.as_bytes()).into_owned(),
            ));
        }
    } else {
        out.push(("content-length".to_owned(), body_len.to_string()));
    }
    out.push((
        "content-security-policy".to_owned(),
        CONTENT_SECURITY_POLICY.to_owned(),
    ));
    out
}

/// A prepared `Fetch.fulfillRequest`.
#[derive(Debug, Clone)]
pub(crate) struct Fulfilment {
    status: u16,
    phrase: String,
    headers: Vec<(String, String)>,
    body: bytes::Bytes,
}

impl Fulfilment {
    fn from_response(response: &HttpResponse, head: bool) -> Fulfilment {
        Fulfilment {
            status: response.status,
            phrase: response.status_text.clone(),
            headers: fulfil_headers(&response.headers, response.body.len(), head),
            body: response.body.clone(),
        }
    }

    /// A main-chain document, handed to Chromium with the charset HTTP mode's rules
    /// choose for it (FR-WF-10i, SRD-READINGS 31): one `Content-Type` naming the
    /// media type selected and that charset, so both modes read the same text.
    /// Also returns the choice, for the `charset_fallback` note.
    fn main_document(response: &HttpResponse, kind: MediaKind) -> (Fulfilment, charset::Choice) {
        let content_type = media_type::last_content_type(&response.headers);
        let header_charset = content_type.as_deref().and_then(media_type::charset_param);
        let choice = charset::choose(
            &response.body,
            header_charset.as_deref(),
            kind == MediaKind::Html,
        );
        let mut fulfilment = Fulfilment::from_response(response, false);
        fulfilment
            .headers
            .retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
        let essence = match kind {
            MediaKind::Html => "text/html",
            // Only the SRD's kinds are rendered: the others never get here
            // (issue 31), and would be shown as text if they did.
            _ => "text/plain",
        };
        fulfilment.headers.push((
            "content-type".to_owned(),
            format!("{essence}; charset={}", choice.charset.label()),
        ));
        (fulfilment, choice)
    }

    fn redirect_to(location: &CanonicalUrl) -> Fulfilment {
        Fulfilment {
            status: 302,
            phrase: "Found".to_owned(),
            headers: vec![
                ("location".to_owned(), location.as_str().to_owned()),
                ("content-length".to_owned(), "0".to_owned()),
                (
                    "content-security-policy".to_owned(),
                    CONTENT_SECURITY_POLICY.to_owned(),
                ),
            ],
            body: bytes::Bytes::new(),
        }
    }

    fn params(&self, id: RequestId) -> FulfillRequestParams {
        let mut params = FulfillRequestParams::new(id, i64::from(self.status));
        params.response_headers = Some(
            self.headers
                .iter()
                .map(|(name, value)| HeaderEntry::new(name.clone(), value.clone()))
                .collect(),
        );
        if !self.phrase.is_empty() {
            params.response_phrase = Some(self.phrase.clone());
        }
        params.body = Some(
            base64::engine::general_purpose::STANDARD
                .encode(&self.body)
                .into(),
        );
        params
    }
}

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
    /// Extension (issue 31): the top document is of a format browser mode
    /// never renders; it was failed in Chromium and is the answer as fetched.
    NotRendered(Box<FetchedDocument>),
}

/// A response our client reached through redirects, held for the follow-up of the
/// one request it was fetched for.
#[derive(Debug)]
struct Replay {
    /// The Fetch request we answered with a `302`: its follow-up names it in
    /// `redirectedRequestId`.
    answered: String,
    /// The network request (redirect chain) it belongs to.
    network_id: Option<String>,
    /// The canonical URL the `302` points to.
    url: String,
    /// Whether it is a main-chain document.
    top_frame_document: bool,
    /// The CDP resource type it was fetched as.
    resource_type: String,
    fulfilment: Fulfilment,
}

impl Replay {
    fn new(
        answered: &RequestId,
        paused: &Paused,
        url: &CanonicalUrl,
        fulfilment: Fulfilment,
    ) -> Replay {
        Replay {
            answered: answered.inner().clone(),
            network_id: paused.network_id.clone(),
            url: url.as_str().to_owned(),
            top_frame_document: paused.top_frame_document,
            resource_type: paused.resource_type.clone(),
            fulfilment,
        }
    }

    /// `paused` continues the request this was fetched for (Chromium followed our
    /// `302`, or the same network request moved on).
    fn continued_by(&self, paused: &Paused) -> bool {
        paused.redirected_from.as_deref() == Some(self.answered.as_str())
            || (self.network_id.is_some() && paused.network_id == self.network_id)
    }

    /// `paused` is the follow-up this answers: the same request's next hop, to the
    /// URL of our `302`, of the same chain and kind.
    fn answers(&self, paused: &Paused, url: Option<&str>) -> bool {
        self.continued_by(paused)
            && paused.method == "GET"
            && url == Some(self.url.as_str())
            && paused.top_frame_document == self.top_frame_document
            && paused.resource_type == self.resource_type
    }

    fn bytes(&self) -> usize {
        self.fulfilment.body.len()
    }
}

/// Responses waiting for Chromium to follow our `302`s. A replay is served only to
/// the follow-up of its own request ([`Replay::answers`]), never to another
/// request for the same URL; it is dropped when served, when its request moves on
/// without it or ends ([`Replays::ended`]), when a newer top-frame navigation
/// supersedes it, or with the render. At most one main-chain document (one
/// navigation at a time) and [`REPLAY_ENTRIES`] subrequest responses of at most
/// `max_bytes` together are held.
#[derive(Debug)]
pub(crate) struct Replays {
    main: Option<Replay>,
    subrequests: VecDeque<Replay>,
    bytes: usize,
    max_bytes: usize,
}

impl Replays {
    pub(crate) fn new(max_bytes: usize) -> Replays {
        Replays {
            main: None,
            subrequests: VecDeque::new(),
            bytes: 0,
            max_bytes,
        }
    }

    fn push(&mut self, replay: Replay) {
        if replay.top_frame_document {
            self.main = Some(replay);
            return;
        }
        self.bytes += replay.bytes();
        self.subrequests.push_back(replay);
        while self.subrequests.len() > REPLAY_ENTRIES || self.bytes > self.max_bytes {
            let Some(oldest) = self.subrequests.pop_front() else {
                break;
            };
            self.bytes -= oldest.bytes();
            tracing::debug!(target: "webfetch::browser", event = "replay_dropped", "replay bound reached: oldest held response dropped");
        }
    }

    /// The replay answering `paused`, if any; replays of its request that do not
    /// answer it are dropped (the request went elsewhere), and so is a main-chain
    /// replay when another top-frame navigation starts.
    fn take(&mut self, paused: &Paused) -> Option<Fulfilment> {
        let url = CanonicalUrl::parse(&paused.url).ok();
        let url = url.as_ref().map(CanonicalUrl::as_str);
        if let Some(main) = self
            .main
            .take_if(|main| paused.top_frame_document || main.continued_by(paused))
        {
            return main.answers(paused, url).then_some(main.fulfilment);
        }
        let mut found = None;
        let mut kept = VecDeque::with_capacity(self.subrequests.len());
        for replay in self.subrequests.drain(..) {
            if !replay.continued_by(paused) {
                kept.push_back(replay);
                continue;
            }
            self.bytes -= replay.bytes();
            if found.is_none() && replay.answers(paused, url) {
                found = Some(replay.fulfilment);
            }
        }
        self.subrequests = kept;
        found
    }

    /// The network request `network_id` ended (loaded or failed): nothing of it
    /// will follow a `302` any more.
    pub(crate) fn ended(&mut self, network_id: &str) {
        if self
            .main
            .as_ref()
            .is_some_and(|main| main.network_id.as_deref() == Some(network_id))
        {
            self.main = None;
        }
        let bytes = &mut self.bytes;
        self.subrequests.retain(|replay| {
            let keep = replay.network_id.as_deref() != Some(network_id);
            if !keep {
                *bytes -= replay.bytes();
            }
            keep
        });
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        usize::from(self.main.is_some()) + self.subrequests.len()
    }
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
    /// Failed: a frame document robots.txt disallows (`robots_for_frames`,
    /// issue 28).
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
                // Issue 31: Chromium never renders a PDF, JSON, a feed or
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
        let response = self
            .ctx
            .client
            .get(to, &opts)
            .await
            .map_err(|error| in_phase(error, budget))?;
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
            // Issue 28: a frame document's URL and redirect hops pass the call's
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
        let url = crate::url::redact_raw(&paused.url);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;

    fn paused(url: &str, method: &str, kind: &str) -> Paused {
        Paused {
            url: url.to_owned(),
            method: method.to_owned(),
            resource_type: kind.to_owned(),
            top_frame_document: false,
            forwarded: Vec::new(),
            network_id: None,
            redirected_from: None,
        }
    }

    fn browser_settings(toml: &str) -> BrowserSettings {
        load_str(toml).unwrap().settings.browser
    }

    #[test]
    fn appendix_g_order_scheme_then_method_then_resource_then_budget() {
        let s = browser_settings("[tools.webfetch.browser]\nblock_resources = [\"iMaGe\"]");
        let check = |p: &Paused, open| check_subresource(p, &s, open);
        // Scheme first, even for a POST of a blocked type with no budget left.
        for (url, scheme) in [
            ("data:text/plain,x", "data"),
            ("blob:http://a.test/1", "blob"),
            ("file:///etc/passwd", "file"),
            ("ws://127.0.0.1:1/", "ws"),
            ("wss://a.test/", "wss"),
            ("javascript:alert(1)", "javascript"),
            ("chrome://version", "chrome"),
        ] {
            assert_eq!(
                check(&paused(url, "POST", "Image"), false),
                Err(Refusal::Scheme(scheme.to_owned())),
                "{url}"
            );
        }
        // Method before resource type and budget (SRD-READINGS 23).
        assert_eq!(
            check(&paused("http://a.test/", "POST", "Image"), false),
            Err(Refusal::Method("POST".to_owned()))
        );
        assert_eq!(
            check(&paused("http://a.test/", "OPTIONS", "Preflight"), true),
            Err(Refusal::Method("OPTIONS".to_owned()))
        );
        // BLOCKRES-01: case-insensitive on the CDP name.
        assert_eq!(
            check(&paused("http://a.test/i.png", "GET", "Image"), false),
            Err(Refusal::Resource("Image".to_owned()))
        );
        assert_eq!(
            check(&paused("http://a.test/a.js", "GET", "Script"), false),
            Err(Refusal::Budget)
        );
        let (url, method) = check(&paused("http://A.test/a.js#x", "HEAD", "Script"), true).unwrap();
        assert_eq!(url.as_str(), "http://a.test/a.js");
        assert_eq!(method, Method::HEAD);
        assert!(matches!(
            check(&paused("http://0x7f000001/", "GET", "Fetch"), true),
            Err(Refusal::Url(e)) if e.code == ErrorCode::InvalidHost
        ));
    }

    #[test]
    fn fr_wf_11g_default_blocks_images_media_fonts_not_scripts_or_styles() {
        let s = BrowserSettings::default();
        for kind in ["Image", "Media", "Font"] {
            assert!(check_subresource(&paused("http://a.test/", "GET", kind), &s, true).is_err());
        }
        for kind in ["Script", "Stylesheet", "XHR", "Fetch", "Document", "Other"] {
            assert!(check_subresource(&paused("http://a.test/", "GET", kind), &s, true).is_ok());
        }
    }

    #[test]
    fn srd_readings_25_the_crossing_response_is_fulfilled_later_ones_fail() {
        let mut budget = SubresourceBytes::new(100);
        assert!(budget.is_open());
        assert!(budget.account(60));
        assert!(budget.is_open());
        // Crosses the budget: still fulfilled.
        assert!(budget.account(60));
        assert!(!budget.is_open());
        // Everything after it fails, even an empty body.
        assert!(!budget.account(0));
        let mut exact = SubresourceBytes::new(10);
        assert!(exact.account(10));
        assert!(!exact.is_open());
    }

    #[test]
    fn fr_wf_11c_main_chain_counts_every_later_navigation() {
        let mut chain = MainChain::new(1);
        let first = match chain.navigation("http://a.test/", "GET") {
            NavStep::First(url) => url,
            other => panic!("{other:?}"),
        };
        chain.committed(first);
        match chain.navigation("http://b.test/x", "GET") {
            NavStep::Hop { from, to } => {
                assert_eq!(from.as_str(), "http://a.test/");
                assert_eq!(to.as_str(), "http://b.test/x");
                chain.committed(to);
            }
            other => panic!("{other:?}"),
        }
        match chain.navigation("http://c.test/", "GET") {
            NavStep::Fatal(e) => {
                assert_eq!(e.code, ErrorCode::RedirectLimit);
                assert_eq!(e.details_json()["count"], 2);
                assert_eq!(e.details_json()["max"], 1);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(chain.current().unwrap().as_str(), "http://b.test/x");
    }

    #[test]
    fn srd_readings_22_23_navigation_scheme_then_method() {
        let mut chain = MainChain::new(5);
        assert!(matches!(
            chain.navigation("file:///etc/passwd", "POST"),
            NavStep::Fatal(e) if e.code == ErrorCode::InvalidScheme
        ));
        assert_eq!(
            chain.navigation("http://a.test/form", "POST"),
            NavStep::NonGet("POST".to_owned())
        );
        assert!(matches!(
            chain.navigation("http://user:pw@a.test/", "GET"),
            NavStep::Fatal(e) if e.code == ErrorCode::InvalidUrl
        ));
        // Nothing was counted for refused navigations.
        assert!(matches!(
            chain.navigation("http://a.test/", "GET"),
            NavStep::First(_)
        ));
    }

    #[test]
    fn chain_hops_include_redirects_followed_by_the_client() {
        let mut chain = MainChain::new(2);
        chain.committed(CanonicalUrl::parse("http://a.test/").unwrap());
        assert!(chain.count_hop().is_ok());
        assert!(chain.count_hop().is_ok());
        assert_eq!(chain.count_hop().unwrap_err().details_json()["count"], 3);
    }

    #[test]
    fn fr_wf_bssr_headers_01_only_accept_and_referer_are_forwarded() {
        let headers = serde_json::json!({
            "accept": "text/css",
            "Referer": "http://a.test/page",
            "Cookie": "sid=1",
            "Authorization": "Bearer x",
            "User-Agent": "Chrome",
            "Accept-Encoding": "zstd",
            "X-Custom": "1",
        });
        let mut forwarded: Vec<(String, String)> = forwarded_headers(&headers)
            .into_iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        forwarded.sort();
        assert_eq!(
            forwarded,
            [
                ("accept".to_owned(), "text/css".to_owned()),
                ("referer".to_owned(), "http://a.test/page".to_owned()),
            ]
        );
        assert!(forwarded_headers(&serde_json::json!("not an object")).is_empty());
    }

    #[test]
    fn fr_wf_bssr_body_01_content_length_matches_the_body_passed() {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("text/javascript"));
        headers.insert("content-length", HeaderValue::from_static("999"));
        headers.insert("set-cookie", HeaderValue::from_static("a=1"));
        headers.insert(
            "strict-transport-security",
            HeaderValue::from_static("max-age=1"),
        );
        headers.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        let out = fulfil_headers(&headers, 42, false);
        let get = |name: &str| -> Vec<&str> {
            out.iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
                .collect()
        };
        assert_eq!(get("content-length"), ["42"]);
        assert_eq!(get("content-type"), ["text/javascript"]);
        assert!(get("set-cookie").is_empty());
        assert!(get("strict-transport-security").is_empty());
        assert!(get("transfer-encoding").is_empty());
        assert_eq!(get("content-security-policy"), [CONTENT_SECURITY_POLICY]);
        // HEAD keeps the length of the body it describes.
        let head = fulfil_headers(&headers, 0, true);
        assert!(
            head.iter()
                .any(|(n, v)| n == "content-length" && v == "999")
        );
    }

    fn follow_up(url: &str, kind: &str, top: bool, network: &str, from: Option<&str>) -> Paused {
        Paused {
            top_frame_document: top,
            network_id: Some(network.to_owned()),
            redirected_from: from.map(str::to_owned),
            ..paused(url, "GET", kind)
        }
    }

    fn held(len: usize) -> Fulfilment {
        Fulfilment {
            status: 200,
            phrase: String::new(),
            headers: Vec::new(),
            body: bytes::Bytes::from(vec![b'x'; len]),
        }
    }

    fn replay_of(answered: &str, original: &Paused, to: &str, len: usize) -> Replay {
        let to = CanonicalUrl::parse(to).unwrap();
        Replay::new(&RequestId::new(answered), original, &to, held(len))
    }

    #[test]
    fn issue_15_a_replay_answers_only_the_follow_up_of_its_own_request() {
        let mut replays = Replays::new(1 << 20);
        // fetch('/r', {redirect: 'manual'}): our 302 to /private is never followed.
        let fetch = follow_up("http://a.test/r", "Fetch", false, "n1", None);
        replays.push(replay_of("job-1.0", &fetch, "http://a.test/private", 10));
        // A top-frame navigation to the same URL is not its follow-up.
        let nav = follow_up("http://a.test/private", "Document", true, "L2", None);
        assert!(replays.take(&nav).is_none());
        // Nor another subrequest of the same kind and URL.
        let other = follow_up("http://a.test/private", "Fetch", false, "n3", None);
        assert!(replays.take(&other).is_none());
        assert_eq!(replays.len(), 1);
        // Its request ended: dropped.
        replays.ended("n1");
        assert_eq!(replays.len(), 0);
        assert_eq!(replays.bytes, 0);

        // A followed redirect is answered once, to the same kind only.
        let script = follow_up("http://a.test/old.js", "Script", false, "n4", None);
        replays.push(replay_of("job-4.0", &script, "http://a.test/new.js", 10));
        let wrong_kind = follow_up(
            "http://a.test/new.js",
            "Fetch",
            false,
            "n4",
            Some("job-4.0"),
        );
        assert!(replays.take(&wrong_kind).is_none());
        assert_eq!(replays.len(), 0, "its request moved on: dropped");
        replays.push(replay_of("job-5.0", &script, "http://a.test/new.js", 10));
        let follow = follow_up(
            "http://a.test/new.js",
            "Script",
            false,
            "n4",
            Some("job-5.0"),
        );
        assert!(replays.take(&follow).is_some());
        assert!(replays.take(&follow).is_none());

        // The main chain's replay answers the top frame's follow-up only, and a
        // new top-frame navigation drops it.
        let main = follow_up("http://a.test/start", "Document", true, "L1", None);
        replays.push(replay_of("job-6.0", &main, "http://a.test/page", 10));
        let iframe = follow_up(
            "http://a.test/page",
            "Document",
            false,
            "L1",
            Some("job-6.0"),
        );
        assert!(replays.take(&iframe).is_none());
        replays.push(replay_of("job-6.0", &main, "http://a.test/page", 10));
        let main_follow = follow_up(
            "http://a.test/page",
            "Document",
            true,
            "L1",
            Some("job-6.0"),
        );
        assert!(replays.take(&main_follow).is_some());
        replays.push(replay_of("job-7.0", &main, "http://a.test/page", 10));
        let elsewhere = follow_up("http://a.test/page", "Document", true, "L9", None);
        assert!(replays.take(&elsewhere).is_none());
        assert_eq!(replays.len(), 0);
    }

    #[test]
    fn issue_15_held_replays_are_bounded_in_count_and_bytes() {
        let mut replays = Replays::new(100);
        for i in 0..REPLAY_ENTRIES + 5 {
            let p = follow_up("http://a.test/r", "Fetch", false, &format!("n{i}"), None);
            replays.push(replay_of(&format!("job-{i}"), &p, "http://a.test/x", 1));
        }
        assert_eq!(replays.len(), REPLAY_ENTRIES);
        let p = follow_up("http://a.test/r", "Fetch", false, "big", None);
        replays.push(replay_of("job-big", &p, "http://a.test/x", 90));
        assert!(replays.bytes <= 100, "{}", replays.bytes);
        assert_eq!(replays.len(), 11);
        // The newest is kept.
        let follow = follow_up("http://a.test/x", "Fetch", false, "big", Some("job-big"));
        assert!(replays.take(&follow).is_some());
        assert_eq!(replays.bytes, 10);
    }

    #[test]
    fn issue_28_only_frame_documents_are_robots_checked_and_only_with_the_switch() {
        let top = Paused {
            top_frame_document: true,
            ..paused("http://a.test/", "GET", "Document")
        };
        for switch in [false, true] {
            assert_eq!(robots_scope(&top, switch), RobotsScope::MainChain);
        }
        // ROBOTS-SCOPE-01: subresources are never robots-checked, whatever the switch.
        for kind in [
            "Script",
            "XHR",
            "Fetch",
            "Image",
            "Stylesheet",
            "Media",
            "Font",
            "EventSource",
            "Prefetch",
            "Other",
        ] {
            for switch in [false, true] {
                assert_eq!(
                    robots_scope(&paused("http://a.test/x", "GET", kind), switch),
                    RobotsScope::Exempt,
                    "{kind} {switch}"
                );
            }
        }
        // A frame's document (markup, script or redirect follow-up alike).
        for frame in [
            paused("http://a.test/f", "GET", "Document"),
            paused("http://b.test/f", "HEAD", "Document"),
            follow_up("http://a.test/g", "Document", false, "n1", Some("job-1.0")),
        ] {
            assert_eq!(robots_scope(&frame, false), RobotsScope::Exempt);
            assert_eq!(robots_scope(&frame, true), RobotsScope::Frame);
        }
    }

    #[test]
    fn browser_budget_02_iframe_documents_pass_a_spent_budget() {
        let s = BrowserSettings::default();
        assert!(
            check_subresource(&paused("http://a.test/f", "GET", "Document"), &s, false).is_ok()
        );
        assert_eq!(
            check_subresource(&paused("http://a.test/f.js", "GET", "Script"), &s, false),
            Err(Refusal::Budget)
        );
    }

    #[test]
    fn csp_leaves_out_non_network_schemes_and_websockets() {
        // `*` never matches data:, blob: or filesystem: (CSP3 "matches a source
        // expression"); connect-src lists http(s) only, so no ws:/wss:.
        for forbidden in ["data:", "blob:", "filesystem:", "ws:", "wss:"] {
            assert!(!CONTENT_SECURITY_POLICY.contains(forbidden), "{forbidden}");
        }
        assert!(CONTENT_SECURITY_POLICY.contains("connect-src http: https:"));
    }
}
