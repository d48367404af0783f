//! The pinned-IP HTTP client: redirects, budgets, size caps and status mapping (SRD 3.2.4, 3.2.5, 3.4.1).
//!
//! Every network request of webfetch goes through [`HttpClient::get`]: documents,
//! robots.txt files and browser subrequests alike, so no path can skip a check.
//! For the first URL and for every redirect hop the client
//!
//! 0. for a redirect target, asks the caller's [`RedirectHook::check_target`]
//!    first, on the URL alone (the robots origin scope of a robots.txt fetch,
//!    SRD-READINGS 27), so a refused target is never resolved;
//! 1. runs [`ssrf::authorize`] (port policy, SSRF ranges, one resolution, the
//!    FR-WF-DNS-01 order) on a blocking thread under the budget (phase `dns`); a
//!    name is resolved at most once per fetch, later hops reuse its validated set;
//! 2. for a redirect target, calls the caller's [`RedirectHook`] (robots.txt);
//! 3. connects only to the authorized addresses, at most `max_dns_attempts` of them
//!    (`connect.rs`), with TLS verified against the URL's host;
//! 4. sends a GET (or HEAD) with the fixed headers ([`request`]);
//! 5. follows 301/302/303/307/308 by hand up to `max_redirects` (`redirect.rs`);
//! 6. reads the final 200 body through the decoders under the byte cap (`body.rs`).
//!
//! One deadline covers the whole operation; each stage reports its own phase when
//! the deadline passes (`budget.rs`). The redirect hook's robots.txt check is the
//! exception: it has its own budget, and the deadline is moved by the time it took
//! (FR-WF-ROBOTS-TIMEOUT-01, SRD-READINGS 26).

mod body;
mod budget;
mod connect;
mod document;
mod proxy;
mod redirect;
pub mod request;
mod status;
mod tls;

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::header::{CONTENT_ENCODING, CONTENT_LENGTH, HeaderValue, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, Method};
use rustls::pki_types::CertificateDer;
use tokio::time::Instant;

use self::budget::Budget;
use self::connect::Dialer;
use crate::config::{DEFAULT_USER_AGENT, Settings};
use crate::error::{FetchError, TimeoutPhase};
use crate::ssrf::{self, SsrfValidator};
use crate::url::{CanonicalUrl, TargetHost};

pub use self::document::{FetchedDocument, fetch_document};
pub use self::proxy::ProxyConfig;
pub use self::status::{check_status, is_followed_redirect};

/// How long past its own budget a redirect hook may run before the hop fails
/// with `timeout` (phase `redirect`).
const HOOK_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The pinned, validating HTTP client. One per tool instance; cheap to clone.
#[derive(Clone)]
pub struct HttpClient {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    settings: Arc<Settings>,
    validator: Arc<dyn SsrfValidator>,
    user_agent: HeaderValue,
    extra_roots: Vec<CertificateDer<'static>>,
    tls: Arc<rustls::ClientConfig>,
    proxy: Option<ProxyConfig>,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("user_agent", &self.inner.user_agent)
            .field("extra_roots", &self.inner.extra_roots.len())
            .field("proxy", &self.inner.proxy.is_some())
            .finish_non_exhaustive()
    }
}

/// What to do when a body passes its byte cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverLimit {
    /// `response_too_large` (documents, subresources; FR-WF-10e).
    Error,
    /// Keep exactly the first `max_body_bytes`, set [`HttpResponse::truncated`]
    /// (robots.txt, FR-WF-ROBOTS-SIZE-01).
    Truncate,
}

/// Called for each redirect hop, not for the first URL. An error aborts the fetch
/// with that error.
///
/// [`check_target`](RedirectHook::check_target) runs first, on the validated
/// `Location` URL alone, before the hop's port policy, SSRF check or DNS lookup (the
/// robots origin scope, FR-WF-ROBOTS-REDIR-02, SRD-READINGS 27: an out-of-scope
/// target is never resolved or contacted). [`before_hop`](RedirectHook::before_hop)
/// runs after the hop's port and SSRF checks passed (FR-WF-07e order: URL, SSRF,
/// robots); it has its own time budget, so the time it takes is not counted
/// against the fetch's deadline.
pub trait RedirectHook: Send + Sync {
    /// Judges the hop `from` -> `to` on the URL alone, before anything is resolved.
    fn check_target(&self, _from: &CanonicalUrl, _to: &CanonicalUrl) -> Result<(), FetchError> {
        Ok(())
    }

    /// Checks the hop `from` -> `to` (e.g. robots.txt of `to`'s origin).
    fn before_hop<'a>(
        &'a self,
        from: &'a CanonicalUrl,
        to: &'a CanonicalUrl,
    ) -> BoxFuture<'a, Result<(), FetchError>>;
}

/// The parameters of one [`HttpClient::get`].
pub struct GetOptions<'a> {
    /// Absolute deadline for the whole operation (all hops, body, decoding).
    pub deadline: Instant,
    /// Budget in ms reported in `timeout` errors (`details.timeout_ms`).
    pub timeout_ms: u64,
    /// Decompressed byte cap (max_download_bytes, or max_robots_bytes for robots).
    pub max_body_bytes: u64,
    /// What to do past the cap.
    pub over_limit: OverLimit,
    /// Called before each redirect hop is fetched (not for the first URL).
    pub hook: Option<&'a dyn RedirectHook>,
    /// Extra request headers (browser subrequests: Accept, Referer, ...). An extra
    /// `Accept` replaces the default. User-Agent is always the configured one;
    /// `Cookie`, `Authorization`, `Host`, `Accept-Encoding`, `Range` and framing
    /// headers are never sent (FR-WF-07d).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// GET or HEAD; any other method is refused before a connection is made.
    /// Kept for every hop (FR-WF-07c: no request ever has a body).
    pub method: Method,
}

impl<'a> GetOptions<'a> {
    /// A GET with no hook and no extra headers, erroring past the cap.
    pub fn new(deadline: Instant, timeout_ms: u64, max_body_bytes: u64) -> GetOptions<'a> {
        GetOptions {
            deadline,
            timeout_ms,
            max_body_bytes,
            over_limit: OverLimit::Error,
            hook: None,
            headers: Vec::new(),
            method: Method::GET,
        }
    }
}

impl fmt::Debug for GetOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetOptions")
            .field("deadline", &self.deadline)
            .field("timeout_ms", &self.timeout_ms)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("over_limit", &self.over_limit)
            .field("hook", &self.hook.is_some())
            .field("headers", &self.headers)
            .field("method", &self.method)
            .finish()
    }
}

/// The final, non-redirect response of a [`HttpClient::get`], whatever its status.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// The URL that answered (after redirects).
    pub final_url: CanonicalUrl,
    /// The status code.
    pub status: u16,
    /// The reason phrase; empty when the protocol has none (HTTP/2, FR-WF-ERR-HTTP-02).
    pub status_text: String,
    /// The response headers, describing [`HttpResponse::body`]: when the body was
    /// decoded, cut or not read, `Content-Encoding` and `Transfer-Encoding` are
    /// removed and `Content-Length` is the body's length (FR-WF-BSSR-BODY-01).
    /// HEAD responses keep their headers as sent.
    pub headers: HeaderMap,
    /// The decompressed body; read only for status 200 (empty otherwise and for HEAD).
    pub body: Bytes,
    /// The body was cut at the cap ([`OverLimit::Truncate`] only).
    pub truncated: bool,
    /// Redirect hops followed.
    pub redirects: u32,
}

impl HttpClient {
    /// A client for `settings`, resolving through `validator`. Environment proxies
    /// are read only when `settings.use_system_proxy` is set (FR-WF-10d).
    pub fn new(settings: Arc<Settings>, validator: Arc<dyn SsrfValidator>) -> HttpClient {
        // The configuration loader refuses control characters, the only bytes a
        // header value can not hold; the fallback is unreachable.
        let user_agent = HeaderValue::from_str(&settings.user_agent)
            .unwrap_or_else(|_| HeaderValue::from_static(DEFAULT_USER_AGENT));
        let tls = tls::client_config(&[])
            .expect("the webpki roots and the ring provider always make a valid TLS configuration");
        let proxy = if settings.use_system_proxy {
            ProxyConfig::from_env(&|name: &str| std::env::var(name).ok())
        } else {
            None
        };
        HttpClient {
            inner: Arc::new(Inner {
                settings,
                validator,
                user_agent,
                extra_roots: Vec::new(),
                tls: Arc::new(tls),
                proxy,
            }),
        }
    }

    /// Adds a trusted root certificate (DER): corporate CAs, or a self-signed test
    /// server. The webpki roots stay trusted.
    pub fn with_root_certificate(self, der: Vec<u8>) -> Result<HttpClient, FetchError> {
        let mut inner = Arc::unwrap_or_clone(self.inner);
        inner.extra_roots.push(CertificateDer::from(der));
        inner.tls = Arc::new(tls::client_config(&inner.extra_roots)?);
        Ok(HttpClient {
            inner: Arc::new(inner),
        })
    }

    /// Re-reads the proxy variables through `env` instead of the process
    /// environment; still ignored unless `use_system_proxy` is set (FR-WF-10d).
    pub fn with_proxy_env(self, env: &dyn Fn(&str) -> Option<String>) -> HttpClient {
        let mut inner = Arc::unwrap_or_clone(self.inner);
        inner.proxy = if inner.settings.use_system_proxy {
            ProxyConfig::from_env(env)
        } else {
            None
        };
        HttpClient {
            inner: Arc::new(inner),
        }
    }

    /// The settings the client runs with.
    pub fn settings(&self) -> &Arc<Settings> {
        &self.inner.settings
    }

    /// GET (or HEAD) `url`, following redirects by hand and checking every hop; see
    /// the module documentation for the steps. Returns the final non-redirect
    /// response whatever its status: map it with [`check_status`].
    pub async fn get(
        &self,
        url: &CanonicalUrl,
        opts: &GetOptions<'_>,
    ) -> Result<HttpResponse, FetchError> {
        if opts.method != Method::GET && opts.method != Method::HEAD {
            return Err(FetchError::internal(format!(
                "method {} is not allowed: only GET and HEAD",
                opts.method
            )));
        }
        let mut budget = Budget::new(opts.deadline, opts.timeout_ms);
        let headers = request::hop_headers(&self.inner.user_agent, &opts.headers);
        let max_redirects = self.inner.settings.max_redirects;
        let mut current = url.clone();
        let mut resolved = Resolved::default();
        let mut addresses = self.authorize(&current, &budget, &mut resolved).await?;
        let mut redirects = 0u32;
        loop {
            let (response, guard) = self
                .send(&current, &addresses, &opts.method, &headers, &budget)
                .await?;
            let status = response.status().as_u16();
            if is_followed_redirect(status) {
                let location = response.headers().get(http::header::LOCATION).cloned();
                drop(response);
                drop(guard);
                let next =
                    redirect::next_hop(&current, location.as_ref(), redirects, max_redirects)?;
                redirects += 1;
                if budget.is_spent() {
                    return Err(budget.expired(TimeoutPhase::Redirect));
                }
                if let Some(hook) = opts.hook {
                    hook.check_target(&current, &next)?;
                }
                let next_addresses = self.authorize(&next, &budget, &mut resolved).await?;
                if let Some(hook) = opts.hook {
                    // The hook (a robots.txt check) keeps to its own budget; the
                    // fetch's budget is paused meanwhile (SRD-READINGS 26). Nothing
                    // may hang the fetch, so the hook is bounded too: by one budget
                    // of its own plus a second, so that a robots.txt check ending at
                    // its own deadline reports its own outcome.
                    let started = Instant::now();
                    let hook_budget = Budget::new(
                        started + self.inner.settings.timeout() + HOOK_GRACE,
                        budget.timeout_ms(),
                    );
                    hook_budget
                        .try_run(TimeoutPhase::Redirect, hook.before_hop(&current, &next))
                        .await?;
                    budget = budget.paused_for(started.elapsed());
                }
                current = next;
                addresses = next_addresses;
                continue;
            }
            let status_text = status::status_text(&response);
            let (parts, incoming) = response.into_parts();
            let mut headers = parts.headers;
            if opts.method == Method::HEAD {
                return Ok(HttpResponse {
                    final_url: current,
                    status,
                    status_text,
                    headers,
                    body: Bytes::new(),
                    truncated: false,
                    redirects,
                });
            }
            let (body, truncated) = if status == 200 {
                let read = self.read_body(incoming, &headers, opts, &budget).await?;
                (read.bytes, read.truncated)
            } else {
                (Bytes::new(), false)
            };
            drop(guard);
            describe_body(&mut headers, body.len());
            return Ok(HttpResponse {
                final_url: current,
                status,
                status_text,
                headers,
                body,
                truncated,
                redirects,
            });
        }
    }

    /// Port, SSRF and the single resolution of one URL (Appendix F.2 steps 1-4).
    /// A name is resolved on a blocking thread (the system resolver blocks) under
    /// the budget; an IP literal is checked inline. A name already resolved during
    /// this fetch reuses its validated set (FR-WF-DNS-01 step 3: no re-resolution
    /// during a fetch); the port is still checked for the new URL.
    async fn authorize(
        &self,
        url: &CanonicalUrl,
        budget: &Budget,
        resolved: &mut Resolved,
    ) -> Result<Vec<IpAddr>, FetchError> {
        let security = &self.inner.settings.security;
        let name = match url.host() {
            TargetHost::Ip(_) => {
                return ssrf::authorize(url, security, self.inner.validator.as_ref());
            }
            TargetHost::Domain(name) => name,
        };
        if let Some(addresses) = resolved.get(&name) {
            ssrf::check_port(url.port(), &security.allowed_ports)?;
            return Ok(addresses.to_vec());
        }
        let task_url = url.clone();
        let settings = Arc::clone(&self.inner.settings);
        let validator = Arc::clone(&self.inner.validator);
        let lookup = tokio::task::spawn_blocking(move || {
            ssrf::authorize(&task_url, &settings.security, validator.as_ref())
        });
        let addresses = budget
            .run(TimeoutPhase::Dns, lookup)
            .await?
            .map_err(|e| FetchError::internal(format!("resolver task failed: {e}")))??;
        resolved.insert(name, addresses.clone());
        Ok(addresses)
    }

    /// One exchange: pinned connect, then the request until the response head
    /// arrives (phase `request`).
    async fn send(
        &self,
        url: &CanonicalUrl,
        addresses: &[IpAddr],
        method: &Method,
        headers: &HeaderMap,
        budget: &Budget,
    ) -> Result<
        (
            http::Response<hyper::body::Incoming>,
            request::ConnectionGuard,
        ),
        FetchError,
    > {
        let dialer = Dialer {
            tls: &self.inner.tls,
            proxy: self.inner.proxy.as_ref().and_then(|p| p.for_url(url)),
            max_attempts: self.inner.settings.security.max_dns_attempts,
        };
        let connected = dialer.connect(url, addresses, budget).await?;
        let request = request::build(url, method, connected.h2, headers)?;
        budget
            .try_run(TimeoutPhase::Request, request::exchange(connected, request))
            .await
    }

    /// Reads a 200 body: declared-length check, then decode and cap while
    /// streaming (phase `response`).
    async fn read_body(
        &self,
        incoming: hyper::body::Incoming,
        headers: &HeaderMap,
        opts: &GetOptions<'_>,
        budget: &Budget,
    ) -> Result<body::Body, FetchError> {
        let cap = body::Cap {
            max: opts.max_body_bytes,
            over_limit: opts.over_limit,
        };
        let declared = body::declared_length(headers);
        cap.check_declared(declared)?;
        let codings = body::codings(headers)?;
        let hint = if codings.is_empty() { declared } else { None };
        budget
            .try_run(
                TimeoutPhase::Response,
                body::read(incoming, &codings, cap, hint),
            )
            .await
    }
}

/// The validated address sets of the names resolved during one fetch.
#[derive(Default)]
struct Resolved(Vec<(String, Vec<IpAddr>)>);

impl Resolved {
    fn get(&self, name: &str) -> Option<&[IpAddr]> {
        self.0
            .iter()
            .find(|(known, _)| known == name)
            .map(|(_, addresses)| addresses.as_slice())
    }

    fn insert(&mut self, name: String, addresses: Vec<IpAddr>) {
        self.0.push((name, addresses));
    }
}

/// Makes the headers describe the returned body: no coding, no chunking, its
/// length (FR-WF-BSSR-BODY-01 relies on this).
fn describe_body(headers: &mut HeaderMap, length: usize) {
    headers.remove(CONTENT_ENCODING);
    headers.remove(TRANSFER_ENCODING);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn get_future_is_send() {
        let settings = Arc::new(Settings::default());
        let validator = Arc::new(ssrf::StubValidator::new(&settings.security));
        let client = HttpClient::new(settings, validator);
        let url = CanonicalUrl::parse("http://a.example/").unwrap();
        let opts = GetOptions::new(Instant::now(), 1000, 10);
        let future = client.get(&url, &opts);
        assert_send(&future);
    }

    #[test]
    fn headers_describe_the_returned_body() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        headers.insert(CONTENT_LENGTH, HeaderValue::from_static("10"));
        headers.insert(TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
        describe_body(&mut headers, 42);
        assert!(headers.get(CONTENT_ENCODING).is_none());
        assert!(headers.get(TRANSFER_ENCODING).is_none());
        assert_eq!(headers[CONTENT_LENGTH], "42");
    }

    #[tokio::test]
    async fn only_get_and_head() {
        let settings = Arc::new(Settings::default());
        let validator = Arc::new(ssrf::StubValidator::new(&settings.security));
        let client = HttpClient::new(settings, validator);
        let url = CanonicalUrl::parse("http://10.0.0.1/").unwrap();
        let mut opts = GetOptions::new(Instant::now(), 1000, 10);
        opts.method = Method::POST;
        let error = client.get(&url, &opts).await.unwrap_err();
        assert_eq!(error.code, crate::error::ErrorCode::Internal);
    }
}
