//! The pinned-IP HTTP client: redirects, budgets, size caps and status mapping (SRD 3.2.4, 3.2.5, 3.4.1).
//!
//! Every network request of webfetch goes through [`HttpClient::get`]: documents,
//! robots.txt files and browser subrequests alike, so no path can skip a check.
//! This module is transport only; what a document or a robots.txt file means is
//! decided by its callers (`render`, `robots`). For the first URL and for every
//! redirect hop the client
//!
//! 0. for a redirect target, asks the caller's [`HopHook::check_target`] first, on
//!    the URL alone (the robots origin scope of a robots.txt fetch, SRD-READINGS
//!    27), so a refused target is never resolved;
//! 1. checks the port and the SSRF ranges ([`ssrf::authorize`]: inline for an IP
//!    literal, the validator's one resolution for a name, on a blocking thread
//!    under the budget, phase `dns`); a name is resolved at most once per [`Pass`]
//!    (FR-WF-DNS-01 step 3), later requests of the same tool call reuse its set;
//! 2. for a document request ([`GetOptions::polite`]), takes a place among the
//!    requests in flight to the URL's origin, waiting within the budget, or
//!    refuses with `http_4xx` 429 while the origin is held ([`crate::politeness`]),
//!    before anything is sent to it;
//! 3. calls the caller's [`HopHook::before_hop`] (robots.txt of that URL), the
//!    first URL included, so the FR-WF-07e order (URL, SSRF, robots) holds for
//!    every URL with no second copy of it in the pipeline;
//! 4. connects only to the authorized addresses, at most `max_dns_attempts` of them
//!    (`connect.rs`), with TLS verified against the URL's host;
//! 5. sends a GET (or HEAD) with the fixed headers ([`request`]);
//! 6. follows 301/302/303/307/308 by hand up to `max_redirects` (`redirect.rs`);
//! 7. reads the final 200 body through the decoders under the byte cap
//!    (`body.rs`); a final 429, or 503 with `Retry-After`, of a document request
//!    holds its origin for later requests.
//!
//! One [`Budget`] covers the whole operation; each stage reports its own phase when
//! it passes. The hook's robots.txt check is the exception: it has its own budget,
//! and the deadline is moved by the time it took (FR-WF-ROBOTS-TIMEOUT-01,
//! SRD-READINGS 26).

mod body;
mod connect;
mod io_error;
mod proxy;
mod redirect;
pub(crate) mod request;
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

use self::connect::Dialer;
use crate::budget::Budget;
use crate::canonical_url::{CanonicalUrl, TargetHost};
use crate::config::{DEFAULT_USER_AGENT, Settings};
use crate::error::{FetchError, TimeoutPhase};
use crate::pass::Pass;
use crate::politeness::{Politeness, Slot};
use crate::progress::{self, Stage};
use crate::ssrf::{self, SsrfValidator};

pub(crate) use self::proxy::ProxyConfig;
pub(crate) use self::status::{check_status, is_followed_redirect};

/// How long past its own budget a redirect hook may run before the hop fails
/// with `timeout` (phase `redirect`).
const HOOK_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The pinned, validating HTTP client. One per tool instance; cheap to clone.
#[derive(Clone)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct HttpClient {
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
    /// Per-origin politeness of document requests, shared by clones.
    politeness: Arc<Politeness>,
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
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum OverLimit {
    /// `response_too_large` (documents, subresources; FR-WF-10e).
    Error,
    /// Keep exactly the first `max_body_bytes`, set [`HttpResponse::truncated`]
    /// (robots.txt, FR-WF-ROBOTS-SIZE-01).
    Truncate,
}

/// The caller's check of each URL a [`HttpClient::get`] requests: the first one
/// and every redirect target. An error aborts the fetch with that error.
///
/// [`check_target`](HopHook::check_target) runs first for a redirect target, on the
/// validated `Location` URL alone, before the hop's port policy, SSRF check or DNS
/// lookup (the robots origin scope, FR-WF-ROBOTS-REDIR-02, SRD-READINGS 27: an
/// out-of-scope target is never resolved or contacted).
/// [`before_hop`](HopHook::before_hop) runs for every URL after its port and SSRF
/// checks passed (FR-WF-07e order: URL, SSRF, robots); it has its own time budget,
/// so the time it takes is not counted against the fetch's.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) trait HopHook: Send + Sync {
    /// Judges the hop `from` -> `to` on the URL alone, before anything is resolved.
    fn check_target(&self, _from: &CanonicalUrl, _to: &CanonicalUrl) -> Result<(), FetchError> {
        Ok(())
    }

    /// Checks the request of `to` (e.g. robots.txt of `to`'s origin); `from` is the
    /// URL that redirected to it, `None` for the first URL.
    fn before_hop<'a>(
        &'a self,
        from: Option<&'a CanonicalUrl>,
        to: &'a CanonicalUrl,
    ) -> BoxFuture<'a, Result<(), FetchError>>;
}

/// The parameters of one [`HttpClient::get`].
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct GetOptions<'a> {
    /// The whole operation's budget (all hops, body, decoding); its `timeout_ms`
    /// is what `timeout` errors report (`details.timeout_ms`).
    pub budget: Budget,
    /// Decompressed byte cap (max_download_bytes, or max_robots_bytes for robots).
    pub max_body_bytes: u64,
    /// What to do past the cap.
    pub over_limit: OverLimit,
    /// Called for every URL requested, the first one included.
    pub hook: Option<&'a dyn HopHook>,
    /// The tool call this request belongs to: its hosts are resolved once for the
    /// whole call. `None` makes a pass for this request alone.
    pub pass: Option<&'a Pass>,
    /// Extra request headers (browser subrequests: Accept, Referer, ...). An extra
    /// `Accept` replaces the default. User-Agent is always the configured one;
    /// `Cookie`, `Authorization`, `Host`, `Accept-Encoding`, `Range` and framing
    /// headers are never sent (FR-WF-07d).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// GET or HEAD; any other method is refused before a connection is made.
    /// Kept for every hop (FR-WF-07c: no request ever has a body).
    pub method: Method,
    /// Extension: a cap of its own for a response whose
    /// `Content-Type` names a PDF (`max_pdf_bytes`), in place of
    /// `max_body_bytes`. `None`: every response has `max_body_bytes`.
    pub pdf_max_body_bytes: Option<u64>,
    /// A document request (HTTP mode, the browser's top document): each hop
    /// takes a place among the requests in flight to its origin and respects
    /// its holds. `false` for robots.txt and browser subresources.
    pub polite: bool,
    /// Extension (walls): bytes of a refusal's body (any status but 200) read,
    /// cut there, so that a bot wall can be told by its page. 0 reads none, as
    /// the SRD's pipeline has no use for them.
    pub refusal_head_bytes: u64,
}

impl<'a> GetOptions<'a> {
    /// A GET under `budget` with no hook, no pass and no extra headers, erroring
    /// past the cap.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(budget: Budget, max_body_bytes: u64) -> GetOptions<'a> {
        GetOptions {
            budget,
            max_body_bytes,
            over_limit: OverLimit::Error,
            hook: None,
            pass: None,
            headers: Vec::new(),
            method: Method::GET,
            pdf_max_body_bytes: None,
            polite: false,
            refusal_head_bytes: 0,
        }
    }
}

impl fmt::Debug for GetOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetOptions")
            .field("budget", &self.budget)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("over_limit", &self.over_limit)
            .field("hook", &self.hook.is_some())
            .field("pass", &self.pass)
            .field("headers", &self.headers)
            .field("method", &self.method)
            .field("pdf_max_body_bytes", &self.pdf_max_body_bytes)
            .field("polite", &self.polite)
            .finish()
    }
}

/// The final, non-redirect response of a [`HttpClient::get`], whatever its status.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct HttpResponse {
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
    /// When the request's budget ends, moved by the time its robots.txt checks
    /// took (SRD-READINGS 26): what is left of it is the reader's.
    pub deadline: Instant,
}

impl HttpClient {
    /// A client for `settings`, resolving through `validator`. Environment proxies
    /// are read only when `settings.use_system_proxy` is set (FR-WF-10d).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(settings: Arc<Settings>, validator: Arc<dyn SsrfValidator>) -> HttpClient {
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
        let settings_limit = settings.fleet.per_origin_in_flight;
        HttpClient {
            inner: Arc::new(Inner {
                settings,
                validator,
                user_agent,
                extra_roots: Vec::new(),
                tls: Arc::new(tls),
                proxy,
                politeness: Arc::new(Politeness::new(settings_limit, None)),
            }),
        }
    }

    /// The same client with `politeness` (fleet-wide on Redis) instead of the
    /// process-wide state it was made with.
    #[cfg(feature = "fleet")]
    pub(crate) fn with_politeness(self, politeness: Politeness) -> HttpClient {
        let mut inner = Arc::unwrap_or_clone(self.inner);
        inner.politeness = Arc::new(politeness);
        HttpClient {
            inner: Arc::new(inner),
        }
    }

    /// Adds a trusted root certificate (DER): corporate CAs, or a self-signed test
    /// server. The webpki roots stay trusted.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn with_root_certificate(self, der: Vec<u8>) -> Result<HttpClient, FetchError> {
        let mut inner = Arc::unwrap_or_clone(self.inner);
        inner.extra_roots.push(CertificateDer::from(der));
        inner.tls = Arc::new(tls::client_config(&inner.extra_roots)?);
        Ok(HttpClient {
            inner: Arc::new(inner),
        })
    }

    /// Re-reads the proxy variables through `env` instead of the process
    /// environment; still ignored unless `use_system_proxy` is set (FR-WF-10d).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn with_proxy_env(self, env: &dyn Fn(&str) -> Option<String>) -> HttpClient {
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
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn settings(&self) -> &Arc<Settings> {
        &self.inner.settings
    }

    /// GET (or HEAD) `url`, following redirects by hand and checking every hop; see
    /// the module documentation for the steps. Returns the final non-redirect
    /// response whatever its status: map it with [`check_status`].
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) async fn get(
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
        let own_pass;
        let pass = match opts.pass {
            Some(pass) => pass,
            None => {
                own_pass = Pass::new();
                &own_pass
            }
        };
        let headers = request::hop_headers(&self.inner.user_agent, &opts.headers);
        let max_redirects = self.inner.settings.max_redirects;
        let mut current = url.clone();
        let (mut addresses, mut budget, mut slot) = self
            .admit_in(None, &current, opts, pass, opts.budget)
            .await?;
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
                drop(slot.take());
                let next =
                    redirect::next_hop(&current, location.as_ref(), redirects, max_redirects)?;
                redirects += 1;
                if budget.is_spent() {
                    return Err(budget.expired(TimeoutPhase::Redirect));
                }
                if let Some(hook) = opts.hook {
                    hook.check_target(&current, &next)?;
                }
                (addresses, budget, slot) = self
                    .admit_in(Some(&current), &next, opts, pass, budget)
                    .await?;
                current = next;
                continue;
            }
            let status_text = status::status_text(&response);
            let (parts, incoming) = response.into_parts();
            let mut headers = parts.headers;
            if slot.is_some() {
                self.inner
                    .politeness
                    .observe(&current.origin(), status, &headers)
                    .await;
            }
            if opts.method == Method::HEAD {
                return Ok(HttpResponse {
                    final_url: current,
                    status,
                    status_text,
                    headers,
                    body: Bytes::new(),
                    truncated: false,
                    redirects,
                    deadline: budget.deadline(),
                });
            }
            let (body, truncated) = if status == 200 {
                let read = self.read_body(incoming, &headers, opts, &budget).await?;
                (read.bytes, read.truncated)
            } else if opts.refusal_head_bytes > 0 {
                // What a refusal says of itself is a hint, never the answer: a
                // body that can not be read is none.
                let cap = body::Cap {
                    max: opts.refusal_head_bytes,
                    over_limit: OverLimit::Truncate,
                };
                let read = self
                    .read_body_within(incoming, &headers, cap, &budget)
                    .await;
                (read.map(|read| read.bytes).unwrap_or_default(), false)
            } else {
                (Bytes::new(), false)
            };
            drop(guard);
            drop(slot);
            describe_body(&mut headers, body.len());
            return Ok(HttpResponse {
                final_url: current,
                status,
                status_text,
                headers,
                body,
                truncated,
                redirects,
                deadline: budget.deadline(),
            });
        }
    }

    /// Steps 1 to 3 for `url` alone, as the first URL of a request of `opts`:
    /// port, SSRF and the pass's one resolution, politeness (the place is given
    /// back at once), then the hook. Returns the
    /// budget, moved by the time the hook took. The browser renderer calls this
    /// before it launches Chromium (Appendix B: SSRF and robots before rendering);
    /// its own request of the same URL in the same pass then finds the host
    /// resolved and the hook's verdict known.
    pub(crate) async fn admit(
        &self,
        url: &CanonicalUrl,
        opts: &GetOptions<'_>,
    ) -> Result<Budget, FetchError> {
        let own_pass = Pass::new();
        let pass = opts.pass.unwrap_or(&own_pass);
        let (_, budget, _) = self.admit_in(None, url, opts, pass, opts.budget).await?;
        Ok(budget)
    }

    /// Steps 1 to 3 for one URL (`from` is the URL that redirected to it): its
    /// validated addresses, the budget moved by the hook's time, and the
    /// request's politeness slot when it is a document request.
    async fn admit_in(
        &self,
        from: Option<&CanonicalUrl>,
        url: &CanonicalUrl,
        opts: &GetOptions<'_>,
        pass: &Pass,
        budget: Budget,
    ) -> Result<(Vec<IpAddr>, Budget, Option<Slot>), FetchError> {
        let addresses = self.authorize(url, &budget, pass).await?;
        progress::report(Stage::Resolved {
            host: url.host_str().to_owned(),
        });
        let slot = if opts.polite {
            Some(
                self.inner
                    .politeness
                    .admit(&url.origin(), budget.deadline())
                    .await?,
            )
        } else {
            None
        };
        let Some(hook) = opts.hook else {
            return Ok((addresses, budget, slot));
        };
        // The hook (a robots.txt check) keeps to its own budget; the fetch's
        // budget is paused meanwhile (SRD-READINGS 26). Nothing may hang the
        // fetch, so the hook is bounded too: by one budget of its own plus a
        // second, so that a robots.txt check ending at its own deadline reports
        // its own outcome.
        let started = Instant::now();
        let hook_budget = Budget::new(
            started + self.inner.settings.timeout() + HOOK_GRACE,
            budget.timeout_ms(),
        );
        hook_budget
            .try_run(TimeoutPhase::Redirect, hook.before_hop(from, url))
            .await?;
        Ok((addresses, budget.paused_for(started.elapsed()), slot))
    }

    /// The checks of one URL that need no network ([`ssrf::check_offline`]):
    /// an IP literal's address and the port, with this client's validator and
    /// settings, so the error is the one its fetch would give.
    pub(crate) fn check_offline(&self, url: &CanonicalUrl) -> Result<(), FetchError> {
        let security = &self.inner.settings.security;
        ssrf::check_offline(url, security, self.inner.validator.as_ref())
    }

    /// Port, SSRF and the single resolution of one URL (Appendix F.2 steps 1-4).
    /// An IP literal is checked inline; a name is resolved on a blocking thread
    /// (the system resolver blocks) under the budget, once per pass
    /// (FR-WF-DNS-01 step 3: no re-resolution during a fetch); the port is
    /// checked for every URL, before the name is looked up.
    async fn authorize(
        &self,
        url: &CanonicalUrl,
        budget: &Budget,
        pass: &Pass,
    ) -> Result<Vec<IpAddr>, FetchError> {
        let security = &self.inner.settings.security;
        let name = match url.host() {
            TargetHost::Ip(_) => {
                return ssrf::authorize(url, security, self.inner.validator.as_ref());
            }
            TargetHost::Domain(name) => name,
        };
        ssrf::check_port(url.port(), &security.allowed_ports)?;
        let validator = Arc::clone(&self.inner.validator);
        let task_name = name.clone();
        let lookup = async move {
            tokio::task::spawn_blocking(move || {
                validator
                    .resolve_and_validate(&task_name)
                    .map_err(FetchError::from)
            })
            .await
            .map_err(|e| FetchError::internal(format!("resolver task failed: {e}")))?
        };
        budget
            .try_run(TimeoutPhase::Dns, pass.addresses(&name, lookup))
            .await
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
        progress::report(Stage::Connected {
            host: url.host_str().to_owned(),
        });
        let signer = self.inner.settings.bot_auth.as_ref();
        let request = request::build(url, method, connected.h2, headers, signer)?;
        let exchanged = budget
            .try_run(TimeoutPhase::Request, request::exchange(connected, request))
            .await?;
        progress::report(Stage::Headers {
            status: exchanged.0.status().as_u16(),
        });
        Ok(exchanged)
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
        let is_pdf = || {
            crate::content::media_type::last_content_type(headers)
                .is_some_and(|value| crate::content::media_type::names_pdf(&value))
        };
        let max = match opts.pdf_max_body_bytes {
            Some(pdf) if is_pdf() => pdf,
            _ => opts.max_body_bytes,
        };
        let cap = body::Cap {
            max,
            over_limit: opts.over_limit,
        };
        self.read_body_within(incoming, headers, cap, budget).await
    }

    /// Reads a body within `cap`: declared-length check, then decode and cap
    /// while streaming (phase `response`).
    async fn read_body_within(
        &self,
        incoming: hyper::body::Incoming,
        headers: &HeaderMap,
        cap: body::Cap,
        budget: &Budget,
    ) -> Result<body::Body, FetchError> {
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
        let validator = Arc::new(crate::testing::StubValidator::new(&settings.security));
        let client = HttpClient::new(settings, validator);
        let url = CanonicalUrl::parse("http://a.example/").unwrap();
        let opts = GetOptions::new(Budget::new(Instant::now(), 1000), 10);
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
        let validator = Arc::new(crate::testing::StubValidator::new(&settings.security));
        let client = HttpClient::new(settings, validator);
        let url = CanonicalUrl::parse("http://10.0.0.1/").unwrap();
        let mut opts = GetOptions::new(Budget::new(Instant::now(), 1000), 10);
        opts.method = Method::POST;
        let error = client.get(&url, &opts).await.unwrap_err();
        assert_eq!(error.code, crate::error::ErrorCode::Internal);
    }
}
