//! Appendix G's rules for a paused request, as pure functions and values
//! (FR-WF-11b, 11c, 11g, BSSR-01 Option A): which subrequests are refused before
//! any network and in what order ([`check_subresource`]), which documents
//! robots.txt applies to ([`robots_scope`]), how the top frame's documents form the
//! main chain of redirect hops ([`MainChain`]), the subresource byte budget
//! ([`SubresourceBytes`]), and the headers a fulfilled response carries
//! ([`fulfil_headers`]). The CDP side, which applies them, is
//! [`intercept`](super::intercept); the table tests here need no browser.

use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use http::Method;
use http::header::{CONTENT_LENGTH, HeaderMap, HeaderName, HeaderValue};

use crate::canonical_url::CanonicalUrl;
use crate::config::BrowserSettings;
use crate::error::FetchError;

/// Added to every fulfilled response. `*` matches network schemes only, so
/// `data:`, `blob:` and `filesystem:` loads of any kind (fetch, images, frames,
/// workers, scripts) are refused by Chromium itself (BSSR-SCHEME-01 by outcome,
/// SRD-READINGS 24); `connect-src` also leaves out `ws:`/`wss:` (BSSR-WS-01). The
/// page's own policy, if any, still applies on top.
pub(crate) const CONTENT_SECURITY_POLICY: &str =
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
pub(crate) const FETCH_SLOTS: usize = 8;

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
pub(crate) fn is_document(paused: &Paused) -> bool {
    paused.resource_type == "Document"
}

/// Which robots.txt check a paused request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RobotsScope {
    /// A top-frame document: a hop of the main chain, checked by its hook
    /// (FR-WF-ROBOTS-SCOPE-01, SRD-READINGS 22).
    MainChain,
    /// An iframe's or frame's document with `robots_for_frames` on: its
    /// URL and each redirect hop are checked through the same hook.
    Frame,
    /// Not robots-checked: every other subresource, and frame documents with the
    /// switch off (ROBOTS-SCOPE-01: they MUST NOT be blocked by robots.txt).
    Exempt,
}

/// The robots.txt scope of `paused` (ROBOTS-SCOPE-01, extended to frame documents
/// by `robots_for_frames`). Only the frame and the resource type count:
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LoadOptions, load_str};
    use crate::error::ErrorCode;

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
        load_str(toml, LoadOptions::default())
            .unwrap()
            .settings
            .browser
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

    #[test]
    fn only_frame_documents_are_robots_checked_and_only_with_the_switch() {
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
            Paused {
                network_id: Some("n1".to_owned()),
                redirected_from: Some("job-1.0".to_owned()),
                ..paused("http://a.test/g", "GET", "Document")
            },
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
