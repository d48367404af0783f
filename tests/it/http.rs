//! HTTP mode against real servers on loopback (SRD 3.2.4, 3.2.5, 3.4.1, 3.4.2, 3.7.3).
//!
//! wiremock serves the ordinary cases; a few raw `TcpListener` servers produce what
//! wiremock can not (stalls, dropped bodies, custom reason phrases, bombs). DNS is
//! always the stub validator (T-WF-INFRA-01); loopback is unblocked through the
//! visible gate while 10/8, 169.254/16 and mapped IPv6 stay blocked.

use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use webfetch::CanonicalUrl;
use webfetch::Settings;
use webfetch::internals::budget::Budget;
use webfetch::internals::content::media_type::MediaKind;
use webfetch::internals::render::{FetchedDocument, fetch_document};
use webfetch::internals::transport::{GetOptions, HopHook, HttpClient, OverLimit};
use webfetch::testing::StubValidator;
use webfetch::{ErrorCode, ErrorDetails, FetchError, TimeoutPhase};
use webfetch::{SsrfError, SsrfValidator};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{Config, LOCALHOST, load, read_head, stub};

mod bodies;
mod hops;

/// The HTTP tests' configuration: loopback open on `ports`, `timeout_seconds = 5`.
fn config(ports: &[u16]) -> Config {
    Config::new(ports).timeout(5)
}

/// `config` through the real loader, shareable with a client.
fn settings(config: Config) -> Arc<Settings> {
    Arc::new(config.settings())
}

fn client(settings: &Arc<Settings>) -> HttpClient {
    HttpClient::new(Arc::clone(settings), Arc::new(stub(settings)))
}

fn url(text: &str) -> CanonicalUrl {
    CanonicalUrl::parse(text).expect("test URL is valid")
}

fn deadline(settings: &Settings) -> Instant {
    Instant::now() + settings.timeout()
}

/// `http://site.test:<port><path>`: the loopback site of the stub resolver.
fn site(port: u16, path: &str) -> String {
    format!("http://site.test:{port}{path}")
}

/// Fetches `target` as a document through `client`, within its settings' budget.
async fn fetch_via(
    client: &HttpClient,
    target: &str,
    hook: Option<&dyn HopHook>,
) -> Result<FetchedDocument, FetchError> {
    fetch_document(
        client,
        &url(target),
        deadline(client.settings()),
        hook,
        None,
    )
    .await
}

/// Fetches `target` as a document with the stub resolver and no redirect hook.
async fn document(settings: &Arc<Settings>, target: &str) -> Result<FetchedDocument, FetchError> {
    fetch_via(&client(settings), target, None).await
}

/// A client whose resolver knows only `host`, answering `ips`.
fn resolving(settings: &Arc<Settings>, host: &str, ips: &[IpAddr]) -> HttpClient {
    let validator = StubValidator::new(&settings.security).with_host(host, ips);
    HttpClient::new(Arc::clone(settings), Arc::new(validator))
}

fn options(settings: &Settings) -> GetOptions<'static> {
    GetOptions::new(
        Budget::new(deadline(settings), settings.timeout_ms()),
        settings.max_download_bytes,
    )
}

/// A 200 response carrying `body` as `content_type`.
fn ok(body: &[u8], content_type: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.to_vec(), content_type)
}

/// Mounts `response` at `at`, whatever the request method.
async fn mount(server: &MockServer, at: impl Into<String>, response: ResponseTemplate) {
    Mock::given(path(at))
        .respond_with(response)
        .mount(server)
        .await;
}

async fn html_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/page"))
        .respond_with(ok(
            b"<html><body><p>final</p></body></html>",
            "text/html; charset=utf-8",
        ))
        .mount(&server)
        .await;
    server
}

async fn redirect(server: &MockServer, from: &str, status: u16, location: &str) {
    Mock::given(method("GET"))
        .and(path(from))
        .respond_with(ResponseTemplate::new(status).insert_header("location", location))
        .mount(server)
        .await;
}

/// Records every URL the client announces: `("", url)` for the first one, `(from,
/// to)` for a redirect hop.
#[derive(Default)]
struct HopLog(Mutex<Vec<(String, String)>>);

impl HopHook for HopLog {
    fn before_hop<'a>(
        &'a self,
        from: Option<&'a CanonicalUrl>,
        to: &'a CanonicalUrl,
    ) -> BoxFuture<'a, Result<(), FetchError>> {
        let from = from
            .map(|from| from.as_str().to_owned())
            .unwrap_or_default();
        self.0.lock().unwrap().push((from, to.as_str().to_owned()));
        Box::pin(async { Ok(()) })
    }
}

/// Listens on loopback and spawns `answer` on every accepted connection.
async fn raw_listener<F, Fut>(answer: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(answer(socket));
        }
    });
    address
}

/// A server that reads one request head per connection, writes `reply`, then
/// closes (`hold = false`) or keeps the socket open forever (`hold = true`).
async fn raw_server(reply: &'static [u8], hold: bool) -> SocketAddr {
    raw_listener(move |mut socket| async move {
        read_head(&mut socket).await;
        let _ = socket.write_all(reply).await;
        if hold {
            std::future::pending::<()>().await;
        }
        let _ = socket.shutdown().await;
    })
    .await
}

/// Fetches `/` from a fresh [`raw_server`] sending `reply` (held open when `hold`).
async fn fetch_raw(reply: &'static [u8], hold: bool) -> Result<FetchedDocument, FetchError> {
    let server = raw_server(reply, hold).await;
    let settings = settings(config(&[server.port()]));
    document(&settings, &site(server.port(), "/")).await
}

/// True when nobody connected to `listener` (a pending connection would be in the
/// accept queue: the client's connect returns only after the handshake).
fn never_contacted(listener: &std::net::TcpListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    matches!(listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock)
}

fn assert_code(error: &FetchError, code: ErrorCode) {
    assert_eq!(error.code(), code, "unexpected error: {}", error.to_json());
}

/// Asserts that `error` carries exactly the `details` object.
fn assert_details(error: &FetchError, details: serde_json::Value) {
    assert_eq!(error.details_json(), *details.as_object().unwrap());
}

/// Asserts that `error` is the network error of a final `status` the client refuses.
fn assert_unexpected_status(error: &FetchError, status: u16) {
    assert_code(error, ErrorCode::Network);
    assert_eq!(error.details_json()["error"], "unexpected_status");
    assert_eq!(error.details_json()["status"], status);
}

/// Asserts that `error` is a network error whose `error` detail starts with `prefix`.
fn assert_network_failure(error: &FetchError, prefix: &str) {
    assert_code(error, ErrorCode::Network);
    assert!(
        error.details_json()["error"]
            .as_str()
            .unwrap()
            .starts_with(prefix),
        "{}",
        error.to_json()
    );
}

// ---------------------------------------------------------------- requests

#[tokio::test]
async fn fr_wf_10b_fixed_headers_and_no_cookies() {
    let server = MockServer::start().await;
    let with_cookie = ResponseTemplate::new(302)
        .insert_header("location", "/page")
        .insert_header("set-cookie", "session=secret; Path=/");
    mount(&server, "/a", with_cookie).await;
    let page = ResponseTemplate::new(200)
        .insert_header("content-type", "text/plain")
        .set_body_string("ok");
    mount(&server, "/page", page).await;
    let port = server.address().port();
    let settings = settings(config(&[port]).top("user_agent = \"test-agent/2.0\""));
    let fetched = document(&settings, &site(port, "/a")).await.unwrap();
    assert_eq!(&fetched.body[..], b"ok");
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.method.as_str(), "GET");
        assert_eq!(request.headers["user-agent"], "test-agent/2.0");
        assert_eq!(
            request.headers["accept"],
            "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1"
        );
        assert_eq!(request.headers["accept-encoding"], "gzip, deflate, br");
        assert_eq!(
            request.headers["host"],
            format!("site.test:{port}").as_str()
        );
        assert!(request.headers.get("cookie").is_none());
        assert!(request.body.is_empty());
    }
}

#[tokio::test]
async fn head_requests_return_headers_only() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .and(path("/h"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/plain")
                .set_body_string("body"),
        )
        .mount(&server)
        .await;
    let port = server.address().port();
    let settings = settings(config(&[port]));
    let mut opts = options(&settings);
    opts.method = http::Method::HEAD;
    let response = client(&settings)
        .get(&url(&site(port, "/h")), &opts)
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert!(response.body.is_empty());
}

// ---------------------------------------------------------------- redirects

#[tokio::test]
async fn it_wf_http_02_redirects_followed_and_each_hop_announced() {
    let server = html_server().await;
    let port = server.address().port();
    redirect(&server, "/r1", 301, "/r2").await;
    redirect(&server, "/r2", 302, &format!("http://other.test:{port}/r3")).await;
    redirect(&server, "/r3", 303, "r4?x=1").await;
    redirect(&server, "/r4", 307, &format!("//site.test:{port}/r5")).await;
    redirect(&server, "/r5", 308, "/page#frag").await;
    let settings = settings(config(&[port]));
    let hops = HopLog::default();
    let fetched = fetch_via(&client(&settings), &site(port, "/r1"), Some(&hops))
        .await
        .unwrap();
    assert_eq!(fetched.final_url.as_str(), site(port, "/page"));
    assert_eq!(fetched.redirects, 5);
    assert_eq!(fetched.kind, MediaKind::Html);
    let base = format!("http://site.test:{port}");
    let other = format!("http://other.test:{port}");
    assert_eq!(
        *hops.0.lock().unwrap(),
        vec![
            (String::new(), format!("{base}/r1")),
            (format!("{base}/r1"), format!("{base}/r2")),
            (format!("{base}/r2"), format!("{other}/r3")),
            (format!("{other}/r3"), format!("{other}/r4?x=1")),
            (format!("{other}/r4?x=1"), format!("{base}/r5")),
            (format!("{base}/r5"), format!("{base}/page")),
        ]
    );
    let requests = server.received_requests().await.unwrap();
    assert!(requests.iter().all(|r| r.method.as_str() == "GET"));
    assert_eq!(
        requests[2].headers["host"],
        format!("other.test:{port}").as_str()
    );
}

#[tokio::test]
async fn fr_wf_07a_other_3xx_are_not_followed() {
    let server = MockServer::start().await;
    for status in [300u16, 304, 305] {
        let response = ResponseTemplate::new(status).insert_header("location", "/page");
        mount(&server, format!("/s{status}"), response).await;
    }
    let port = server.address().port();
    let settings = settings(config(&[port]));
    for status in [300u16, 304, 305] {
        let error = document(&settings, &site(port, &format!("/s{status}")))
            .await
            .unwrap_err();
        assert_unexpected_status(&error, status);
    }
}

#[tokio::test]
async fn fr_wf_07f1_redirect_limit_counts_the_refused_hop() {
    let server = html_server().await;
    let port = server.address().port();
    redirect(&server, "/loop", 302, "/loop").await;
    let capped = settings(config(&[port]).top("max_redirects = 2"));
    let error = document(&capped, &site(port, "/loop")).await.unwrap_err();
    assert_code(&error, ErrorCode::RedirectLimit);
    assert_details(&error, json!({"count": 3, "max": 2}));
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn fr_wf_07g_zero_redirects() {
    let server = html_server().await;
    let port = server.address().port();
    redirect(&server, "/once", 301, "/page").await;
    let none = settings(config(&[port]).top("max_redirects = 0"));
    let error = document(&none, &site(port, "/once")).await.unwrap_err();
    assert_code(&error, ErrorCode::RedirectLimit);
    assert_details(&error, json!({"count": 1, "max": 0}));
}

#[tokio::test]
async fn fr_wf_07b1_missing_or_unparsable_location() {
    let server = MockServer::start().await;
    mount(&server, "/none", ResponseTemplate::new(302)).await;
    redirect(&server, "/bad", 302, "http://[::1").await;
    let port = server.address().port();
    let settings = settings(config(&[port]));
    let missing = document(&settings, &site(port, "/none")).await.unwrap_err();
    assert_code(&missing, ErrorCode::InvalidUrl);
    assert_eq!(missing.details_json()["url"], "");
    let bad = document(&settings, &site(port, "/bad")).await.unwrap_err();
    assert_code(&bad, ErrorCode::InvalidUrl);
    assert_eq!(bad.details_json()["url"], "http://[::1");
}

#[tokio::test]
async fn redirect_hook_error_aborts_the_fetch() {
    /// Refuses every redirect target (the first URL passes).
    struct Deny;
    impl HopHook for Deny {
        fn before_hop<'a>(
            &'a self,
            from: Option<&'a CanonicalUrl>,
            to: &'a CanonicalUrl,
        ) -> BoxFuture<'a, Result<(), FetchError>> {
            Box::pin(async move {
                match from {
                    None => Ok(()),
                    Some(_) => Err(FetchError::robots_disallowed(
                        &to.path_and_query(),
                        &to.origin().to_string(),
                    )),
                }
            })
        }
    }
    let server = html_server().await;
    let port = server.address().port();
    redirect(&server, "/r", 302, "/page").await;
    let settings = settings(config(&[port]));
    let error = fetch_via(&client(&settings), &site(port, "/r"), Some(&Deny))
        .await
        .unwrap_err();
    assert_code(&error, ErrorCode::RobotsDisallowed);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

// ---------------------------------------------------------------- status

#[tokio::test]
async fn t_wf_err_04_retryable_4xx_and_status_text() {
    let server = MockServer::start().await;
    for status in [404u16, 408, 429, 503] {
        let response = ResponseTemplate::new(status).set_body_string("error page");
        mount(&server, format!("/{status}"), response).await;
    }
    let port = server.address().port();
    let settings = settings(config(&[port]));
    let expected = [
        (404u16, ErrorCode::Http4xx, false, "Not Found"),
        (408, ErrorCode::Http4xx, true, "Request Timeout"),
        (429, ErrorCode::Http4xx, true, "Too Many Requests"),
        (503, ErrorCode::Http5xx, true, "Service Unavailable"),
    ];
    for (status, code, retryable, text) in expected {
        let error = document(&settings, &site(port, &format!("/{status}")))
            .await
            .unwrap_err();
        assert_code(&error, code);
        assert_eq!(error.is_retryable(), retryable, "{status}");
        assert_eq!(error.details_json()["status"], status);
        assert_eq!(error.details_json()["status_text"], text);
    }
}

#[tokio::test]
async fn fr_wf_err_http_02_reason_phrase_as_sent() {
    let custom = b"HTTP/1.1 404 Gone Fishing\r\nContent-Length: 0\r\n\r\n";
    let error = fetch_raw(custom, false).await.unwrap_err();
    assert_eq!(error.details_json()["status_text"], "Gone Fishing");
    let empty = b"HTTP/1.1 500 \r\nContent-Length: 0\r\n\r\n";
    let error = fetch_raw(empty, false).await.unwrap_err();
    assert_code(&error, ErrorCode::Http5xx);
    assert_eq!(error.details_json()["status_text"], "");
}

#[tokio::test]
async fn it_wf_http_08_non_200_2xx_is_unexpected_status() {
    let server = MockServer::start().await;
    for status in [201u16, 202, 203, 204, 206, 226] {
        let response = ResponseTemplate::new(status).insert_header("content-type", "text/html");
        mount(&server, format!("/{status}"), response).await;
    }
    let port = server.address().port();
    let settings = settings(config(&[port]));
    for status in [201u16, 202, 203, 204, 206, 226] {
        let error = document(&settings, &site(port, &format!("/{status}")))
            .await
            .unwrap_err();
        assert_unexpected_status(&error, status);
        assert!(error.is_retryable());
    }
}

#[tokio::test]
async fn srd_readings_8_interim_1xx_ignored_final_1xx_refused() {
    let early_hints = b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok";
    let fetched = fetch_raw(early_hints, false).await.unwrap();
    assert_eq!(&fetched.body[..], b"ok");
    let switching =
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n";
    let error = fetch_raw(switching, true).await.unwrap_err();
    assert_unexpected_status(&error, 101);
}

/// A server that sends only a 1xx and closes: the 1xx ended the exchange, so
/// `network` / `unexpected_status` with its status, not `request_failed`
/// (FR-WF-07a1, SRD-READINGS 8).
#[tokio::test]
async fn srd_readings_8_lone_1xx_then_close_is_unexpected_status() {
    let early_hints = b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n";
    let error = fetch_raw(early_hints, false).await.unwrap_err();
    assert_unexpected_status(&error, 103);
    let continue_only = b"HTTP/1.1 100 Continue\r\n\r\n";
    let error = fetch_raw(continue_only, false).await.unwrap_err();
    assert_unexpected_status(&error, 100);
    let two_interim = b"HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n";
    let error = fetch_raw(two_interim, false).await.unwrap_err();
    assert_unexpected_status(&error, 103);
    // A malformed final response after a 1xx stays a transport failure.
    let garbage = b"HTTP/1.1 103 Early Hints\r\n\r\nnot http at all\r\n\r\n";
    let error = fetch_raw(garbage, false).await.unwrap_err();
    assert_code(&error, ErrorCode::Network);
    assert_ne!(error.details_json()["error"], "unexpected_status");
}

// ---------------------------------------------------------------- content type

#[tokio::test]
async fn it_wf_http_03_unsupported_content_type() {
    let server = MockServer::start().await;
    mount(&server, "/doc.pdf", ok(b"%PDF-1.7", "application/pdf")).await;
    let json = ok(b"{}", "application/json; charset=utf-8");
    mount(&server, "/api", json).await;
    let png = ResponseTemplate::new(200).set_body_bytes(b"\x89PNG\r\n\x1a\n....".to_vec());
    mount(&server, "/sniffed", png).await;
    let port = server.address().port();
    let settings = settings(config(&[port]));
    for (path, content_type) in [
        ("/doc.pdf", "application/pdf"),
        ("/api", "application/json; charset=utf-8"),
        ("/sniffed", "sniffed:png"),
    ] {
        let error = document(&settings, &site(port, path)).await.unwrap_err();
        assert_code(&error, ErrorCode::UnsupportedContentType);
        assert_eq!(error.details_json()["content_type"], content_type);
    }
}

#[tokio::test]
async fn it_wf_http_07_content_type_parameters_ignored() {
    let server = MockServer::start().await;
    let latin1 = ok(b"<p>x</p>", " TEXT/HTML ; Charset=ISO-8859-1; q=x");
    mount(&server, "/html", latin1).await;
    mount(&server, "/plain", ok(b"x", "text/plain;format=flowed")).await;
    let port = server.address().port();
    let settings = settings(config(&[port]));
    let html = document(&settings, &site(port, "/html")).await.unwrap();
    assert_eq!(html.kind, MediaKind::Html);
    assert_eq!(html.header_charset.as_deref(), Some("ISO-8859-1"));
    let plain = document(&settings, &site(port, "/plain")).await.unwrap();
    assert_eq!(plain.kind, MediaKind::Plain);
    assert_eq!(plain.header_charset, None);
}

#[tokio::test]
async fn t_wf_ext_10_bom_stripped_before_sniffing() {
    let server = MockServer::start().await;
    let bom = ResponseTemplate::new(200)
        .set_body_bytes(b"\xEF\xBB\xBF \r\n<!DOCTYPE html><p>hi</p>".to_vec());
    mount(&server, "/bom", bom).await;
    let nul = ResponseTemplate::new(200).set_body_bytes(b"abc\0def".to_vec());
    mount(&server, "/nul", nul).await;
    let port = server.address().port();
    let settings = settings(config(&[port]));
    let fetched = document(&settings, &site(port, "/bom")).await.unwrap();
    assert_eq!(fetched.content_type, None);
    assert_eq!(fetched.kind, MediaKind::Html);
    let error = document(&settings, &site(port, "/nul")).await.unwrap_err();
    assert_eq!(error.details_json()["content_type"], "missing");
}
