//! The request on the wire (FR-WF-10, 10b, 10b1, 07c, 07d) and the HTTP exchange.
//!
//! Every request carries the configured User-Agent, the fixed Accept and
//! Accept-Encoding, and the `Host` of the URL (HTTP/2: `:authority`), never the
//! pinned address. There is no cookie jar and no credential header: the headers a
//! caller may add are filtered here, so no path can send them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, Uri};
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::task::JoinHandle;

use super::connect::Connected;
use crate::bot_auth::BotAuth;
use crate::canonical_url::CanonicalUrl;
use crate::error::FetchError;

/// FR-WF-10b's `Accept`, exactly.
pub(crate) const ACCEPT: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1";

/// Extension: the `Accept` of a document request with publisher
/// Markdown enabled: `text/markdown` first, then FR-WF-10b's types at lower
/// q-values, in their order.
pub(crate) const ACCEPT_MARKDOWN: &str =
    "text/markdown,text/html;q=0.9,application/xhtml+xml;q=0.9,text/plain;q=0.8,*/*;q=0.1";

/// FR-WF-10b's `Accept-Encoding`: the three codings the body decoder supports.
pub(crate) const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// Headers a caller can never set: identity and credentials (FR-WF-07d: no
/// cookies), the codings we decode, message framing owned by hyper, and `Range`
/// (a partial body is never a result, FR-WF-19).
const RESERVED: [&str; 20] = [
    "host",
    "user-agent",
    "cookie",
    "cookie2",
    "authorization",
    "proxy-authorization",
    "accept-encoding",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
    "range",
    "if-range",
    // Web Bot Auth's headers are webfetch's own signature, never a page's.
    "signature",
    "signature-input",
    "signature-agent",
];

/// Whether a caller-supplied header may be sent.
pub(crate) fn is_allowed_extra(name: &HeaderName) -> bool {
    !RESERVED.contains(&name.as_str())
}

/// The headers of every hop: fixed ones first, then the caller's allowed extras
/// (an extra `Accept` replaces the default; browser subrequests send their own).
pub(crate) fn hop_headers(
    user_agent: &HeaderValue,
    extras: &[(HeaderName, HeaderValue)],
) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::USER_AGENT, user_agent.clone());
    headers.insert(header::ACCEPT, HeaderValue::from_static(ACCEPT));
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static(ACCEPT_ENCODING),
    );
    let mut replaced = Vec::new();
    for (name, value) in extras.iter().filter(|(name, _)| is_allowed_extra(name)) {
        if !replaced.contains(name) {
            headers.remove(name);
            replaced.push(name.clone());
        }
        headers.append(name.clone(), value.clone());
    }
    headers
}

/// Builds the request for one hop. HTTP/1.1 gets the origin-form target and a
/// `Host` header; HTTP/2 gets the absolute URI, from which hyper derives
/// `:scheme` and `:authority`.
pub(crate) fn build(
    url: &CanonicalUrl,
    method: &Method,
    h2: bool,
    headers: &HeaderMap,
    signer: Option<&BotAuth>,
) -> Result<Request<Empty<Bytes>>, FetchError> {
    let target = if h2 {
        escape_for_uri(url.as_str())
    } else {
        escape_for_uri(&url.path_and_query())
    };
    let uri: Uri = target.parse().map_err(|e| {
        FetchError::invalid_url(&url.redacted(), format!("not a valid request target: {e}"))
    })?;
    let mut request = Request::new(Empty::new());
    *request.method_mut() = method.clone();
    *request.uri_mut() = uri;
    *request.headers_mut() = headers.clone();
    if !h2 {
        let host = HeaderValue::from_str(&authority(url))
            .map_err(|e| FetchError::invalid_url(&url.redacted(), e))?;
        request.headers_mut().insert(header::HOST, host);
    }
    if let Some(signer) = signer {
        sign(&mut request, &authority(url), signer);
    }
    Ok(request)
}

/// Web Bot Auth: the request signed for its own authority, now.
fn sign(request: &mut Request<Empty<Bytes>>, authority: &str, signer: &BotAuth) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let signed = signer.sign(authority, now);
    let headers = request.headers_mut();
    for (name, value) in [
        ("signature-agent", signed.signature_agent),
        ("signature-input", signed.signature_input),
        ("signature", signed.signature),
    ] {
        // Printable ASCII by construction (a checked https URL, base64, digits).
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
}

/// `host[:port]` for the `Host` header, the port only when not the default.
fn authority(url: &CanonicalUrl) -> String {
    match url.as_url().port() {
        Some(port) => format!("{}:{port}", url.host_str()),
        None => url.host_str().to_owned(),
    }
}

/// Percent-encodes the few characters the WHATWG parser leaves raw but RFC 3986
/// (and the `http` crate) reject in a request target. Servers decode them alike.
fn escape_for_uri(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_graphic() && !b"\"<>\\^`{|}".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Aborts the spawned connection driver when the exchange is over, so no socket
/// outlives its fetch.
pub(crate) struct ConnectionGuard(JoinHandle<()>);

impl ConnectionGuard {
    /// Runs hyper's connection driver on its own task until the guard drops.
    fn drive<C>(connection: C) -> ConnectionGuard
    where
        C: std::future::Future + Send + 'static,
    {
        ConnectionGuard(tokio::spawn(async move {
            let _ = connection.await;
        }))
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Speaks HTTP over `connected` and sends `request`; resolves when the response
/// head arrives (phase `request` for the caller's budget).
///
/// Interim 1xx responses are skipped by hyper as HTTP requires; when one arrived
/// and the exchange then ends with no final response (the server closed or reset
/// the connection), the 1xx ended the exchange: `network` / `unexpected_status`
/// with its status (FR-WF-07a1, SRD-READINGS 8), not `request_failed`.
pub(crate) async fn exchange(
    connected: Connected,
    mut request: Request<Empty<Bytes>>,
) -> Result<(Response<Incoming>, ConnectionGuard), FetchError> {
    let informational = Arc::new(AtomicU16::new(0));
    let seen = Arc::clone(&informational);
    hyper::ext::on_informational(&mut request, move |response| {
        seen.store(response.status().as_u16(), Ordering::Relaxed);
    });
    let io = TokioIo::new(connected.io);
    let (response, guard) = if connected.h2 {
        let (mut sender, connection) =
            hyper::client::conn::http2::Builder::new(TokioExecutor::new())
                .handshake(io)
                .await
                .map_err(|e| network("http2_handshake_failed", &e))?;
        let guard = ConnectionGuard::drive(connection);
        (sender.send_request(request).await, guard)
    } else {
        let (mut sender, connection) = hyper::client::conn::http1::Builder::new()
            .handshake(io)
            .await
            .map_err(|e| network("http1_handshake_failed", &e))?;
        let guard = ConnectionGuard::drive(connection);
        (sender.send_request(request).await, guard)
    };
    let response = response.map_err(|e| {
        match informational.load(Ordering::Relaxed) {
            // A malformed final response is the server's framing fault, not a 1xx.
            status @ 100..=199 if !e.is_parse() => FetchError::unexpected_status(status),
            _ => network("request_failed", &e),
        }
    })?;
    Ok((response, guard))
}

/// `network` with `context: cause: cause of cause ...`.
pub(crate) fn network(context: &str, error: &(dyn std::error::Error + 'static)) -> FetchError {
    FetchError::network(format!("{context}: {}", error_chain(error)))
}

/// An error and its sources, joined with `: ` (hyper's top-level message alone
/// often says only "connection error").
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_headers_and_filtered_extras() {
        let ua = HeaderValue::from_static("forge-webfetch/1.0");
        let extras = vec![
            (header::COOKIE, HeaderValue::from_static("a=b")),
            (header::AUTHORIZATION, HeaderValue::from_static("Bearer x")),
            (header::USER_AGENT, HeaderValue::from_static("evil")),
            (header::ACCEPT, HeaderValue::from_static("image/*")),
            (
                header::REFERER,
                HeaderValue::from_static("https://a.example/"),
            ),
            (header::RANGE, HeaderValue::from_static("bytes=0-1")),
        ];
        let headers = hop_headers(&ua, &extras);
        assert_eq!(headers[header::USER_AGENT], "forge-webfetch/1.0");
        assert_eq!(headers[header::ACCEPT], "image/*");
        assert_eq!(headers[header::ACCEPT_ENCODING], "gzip, deflate, br");
        assert_eq!(headers[header::REFERER], "https://a.example/");
        assert!(headers.get(header::COOKIE).is_none());
        assert!(headers.get(header::AUTHORIZATION).is_none());
        assert!(headers.get(header::RANGE).is_none());
        let defaults = hop_headers(&ua, &[]);
        assert_eq!(defaults[header::ACCEPT], ACCEPT);
    }

    #[test]
    fn request_targets_by_protocol() {
        let url = CanonicalUrl::parse("http://a.example:8080/p|x?q={1}").unwrap();
        let headers = HeaderMap::new();
        let h1 = build(&url, &Method::GET, false, &headers, None).unwrap();
        assert_eq!(h1.uri(), "/p%7Cx?q=%7B1%7D");
        assert_eq!(h1.headers()[header::HOST], "a.example:8080");
        let h2 = build(&url, &Method::GET, true, &headers, None).unwrap();
        assert_eq!(h2.uri(), "http://a.example:8080/p%7Cx?q=%7B1%7D");
        assert!(h2.headers().get(header::HOST).is_none());
        let default_port = CanonicalUrl::parse("https://[::1]/").unwrap();
        let h1 = build(&default_port, &Method::HEAD, false, &headers, None).unwrap();
        assert_eq!(h1.headers()[header::HOST], "[::1]");
        assert_eq!(h1.method(), Method::HEAD);
    }
}
